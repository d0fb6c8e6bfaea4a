"""Inlay hints (LSP ``textDocument/inlayHint``), in analysis terms.

Feature: inlay hints - ``textDocument/inlayHint``; VS Code: greyed type and parameter hints in
the text.

Two kinds, each switchable in :class:`InlayHintOptions`:

* result types the custom form does not spell out per result: for an op in
  custom form whose text (after ``=``) writes a result type fewer times than
  the op has results of that type (``%x, %y, %z = get_tile_block_id :
  tile<i32>`` writes ``tile<i32>`` once for three results), each result
  name gets a ``: type`` hint after it; ``%0 = addi ... : tile<i32>`` gets
  none, its type is written;
* tile sizes: after each ``tile<...>`` type written with a static shape, its
  element count and size in bytes (``256 × f32 = 1 KiB``); sub-byte element
  types are counted in bits rounded up to bytes.

Positions are whole-file (0-based line, UTF-16 column).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tile_lsp.analysis.api import DocumentAnalysis
from tile_lsp.analysis.ir.diagnostics import Position, Range, SourceText
from tile_lsp.dialect.types import FLOAT_WIDTHS
from tile_lsp.grammar.lexical import LINE_COMMENT, STRING


@dataclass(frozen=True)
class InlayHintOptions:
    """Which hints to compute: ``result_types`` and ``tile_sizes``."""

    result_types: bool = True
    tile_sizes: bool = True


@dataclass(frozen=True)
class InlayHint:
    """A hint: ``label`` shown at ``position``; ``kind`` is ``type`` or ``size``."""

    position: Position
    label: str
    kind: str


_TILE = re.compile(STRING + '|' + LINE_COMMENT + r'|(?:!cuda_tile\.)?tile<((?:[0-9]+x)*)([A-Za-z][A-Za-z0-9]*)>')


def _element_bits(name: str) -> int | None:
    if name in FLOAT_WIDTHS:
        return FLOAT_WIDTHS[name]
    if re.fullmatch(r"i[0-9]+", name):
        return int(name[1:])
    if name == "ptr":
        return 64
    return None


def size_text(n_bytes: int) -> str:
    """``512 B``, ``1 KiB``, ``1.5 KiB``, ``2 MiB``: a byte count for a hint."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n_bytes >= scale:
            v = n_bytes / scale
            return f"{v:g} {unit}" if v == int(v) or v >= 100 else f"{v:.1f} {unit}".replace(".0 ", " ")
    return f"{n_bytes} B"


def _in_range(pos: Position, rng: Range | None) -> bool:
    return rng is None or rng.start <= pos <= rng.end


def _type_text(t) -> str:
    return t.short() if hasattr(t, "short") else str(t)


def inlay_hints(analysis: DocumentAnalysis, rng: Range | None = None,
                options: InlayHintOptions | None = None) -> list[InlayHint]:
    """The hints inside ``rng`` (the whole document when ``None``), sorted by position."""
    options = options or InlayHintOptions()
    source = SourceText(analysis.text)
    hints: list[InlayHint] = []
    if options.result_types:
        for chunk in analysis.chunks:
            if chunk.module is None:
                continue
            for op in chunk.module.walk():
                if op.generic or not op.results or op.range is None or op.name_range is None:
                    continue
                body = analysis.text[source.offset(op.name_range.end):source.offset(op.range.end)]
                # the op's own regions spell their own types; look at the text before them
                body = body.split("{", 1)[0] if op.regions else body
                counts: dict[str, int] = {}
                for r in op.results:
                    counts[_type_text(r.type)] = counts.get(_type_text(r.type), 0) + 1
                elided = {t for t, n in counts.items()
                          if len(re.findall(r"(?<![\w<])" + re.escape(t) + r"(?![\w>])", body)) < n}
                for r in op.results:
                    if r.range is None or _type_text(r.type) not in elided:
                        continue
                    if _in_range(r.range.end, rng):
                        hints.append(InlayHint(r.range.end, ": " + _type_text(r.type), "type"))
    if options.tile_sizes:
        for m in _TILE.finditer(analysis.text):
            if m.group(2) is None or not m.group(1):
                continue
            dims = [int(d) for d in m.group(1).split("x") if d]
            count = 1
            for d in dims:
                count *= d
            bits = _element_bits(m.group(2))
            pos = source.position(m.end())
            if not _in_range(pos, rng):
                continue
            label = f"{count} × {m.group(2)}"
            if bits is not None:
                label += " = " + size_text((count * bits + 7) // 8)
            hints.append(InlayHint(pos, label, "size"))
    hints.sort(key=lambda h: (h.position.line, h.position.character))
    return hints
