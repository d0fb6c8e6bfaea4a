"""What a document's text says of how to analyse it, kept from one version to the next.

Two properties of a text choose its analysis options: whether a line is
MLIR's ``// -----`` split marker (:func:`~tile_lsp.analysis.ir.split.has_split_marker`),
and whether it is written for MLIR tools
(:func:`~tile_lsp.analysis.verify.rules.target.is_mlir_tool_input`).  Both
hold of single lines.  Found afresh in a 50,000-line text they cost 1.5 ms
and 2 to 7 ms, and the language server asks them of every version (each
keystroke) and for every code-action request.  :func:`text_marks` answers
from the previous version and the edit between the two: each property keeps
where it was found (a witness); a witness in a line the edit did not touch
still holds (moved by the characters inserted before it), and a property
the previous text lacked is looked for only in the lines the edit touched.
The whole text is searched again only when the edit touched the witness's
line.
"""

from __future__ import annotations

from dataclasses import dataclass

from tile_lsp.analysis.incremental.layout import edit_span
from tile_lsp.analysis.ir.split import split_marker_at
from tile_lsp.analysis.verify.rules.target import mlir_tool_input_at


@dataclass(frozen=True)
class TextMarks:
    """Where a text has a ``// -----`` line (``split_at``) and what makes it written for MLIR tools
    (``tool_at``): offsets in the text, ``None`` when it has none."""

    split_at: int | None
    tool_at: int | None

    @property
    def split_marker(self) -> bool:
        return self.split_at is not None

    @property
    def mlir_tool_input(self) -> bool:
        return self.tool_at is not None


def text_marks(text: str, previous: tuple[str, TextMarks] | None = None) -> TextMarks:
    """The :class:`TextMarks` of ``text``; ``previous`` is ``(an earlier text, its marks)``, any text
    (the further it is from ``text``, the more of ``text`` is searched)."""
    if previous is None:
        return TextMarks(split_marker_at(text), mlir_tool_input_at(text))
    old_text, old = previous
    if old_text is text:
        return old
    p, s = edit_span(old_text, text)
    # the lines holding a character the edit wrote, or the place where it deleted: [lo, hi) in the new
    # text, [lo, old_hi) in the old one
    lo = text.rfind("\n", 0, p) + 1
    hi = text.find("\n", max(len(text) - s, p))
    hi = len(text) if hi < 0 else hi
    old_hi = hi - len(text) + len(old_text)

    def kept(at: int | None, find) -> int | None:
        if at is not None and at < lo:
            return at
        if at is not None and at >= old_hi:
            return at + len(text) - len(old_text)
        found = find(text, lo, hi)
        if found is None and at is not None:  # its line was edited: another one may hold elsewhere
            found = find(text)
        return found

    return TextMarks(kept(old.split_at, split_marker_at), kept(old.tool_at, mlir_tool_input_at))
