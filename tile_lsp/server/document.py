"""pygls' text document with LSP line breaks and incremental changes applied to the changed lines only.

pygls' ``TextDocument`` splits its text with ``str.splitlines``, which also
breaks lines at form feed, vertical tab, ``\x1c``-``\x1e``, NEL (U+0085),
U+2028 and U+2029; LSP positions count only ``\n``, ``\r\n`` and ``\r``
("the end-of-line sequence", LSP 3.17 *Text Documents*), so after such a
character pygls applied edits at the wrong place (issue 16).
:func:`lsp_lines` splits as LSP does, and :class:`IndexedTextDocument` uses it
for every position it maps.

pygls' ``TextDocument._apply_incremental_change`` also rebuilds the whole text
line by line on every change: 14 ms per keystroke on a 10,000-line file, spent
on the event loop before the analysis can start (measured with
``bench/lsp.py`` under ``cProfile``).  :class:`IndexedTextDocument` keeps the
document's lines, replaces the changed lines and splices the text.  The result is the text pygls' algorithm computes over LSP lines
(``tests/test_server_document.py`` compares them on random changes, UTF-16
positions and the line-break look-alikes included).
"""

from __future__ import annotations

import itertools
import re

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace


#: what ends a line in LSP positions
_BREAKS = ("\n", "\r")

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lsp_lines(text: str) -> tuple[str, ...]:
    """The lines of ``text`` with their breaks, as LSP counts them: only at ``\\n``, ``\\r\\n`` and ``\\r``.

    ``str.splitlines(True)`` with the other separators left inside lines;
    ``()`` for the empty text, as ``splitlines``.
    """
    if not _OTHER_BREAKS.search(text):
        return tuple(text.splitlines(True))  # the fast path: the same result
    return tuple(_LINE.findall(text))


#: characters ``str.splitlines`` breaks at that LSP does not
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class IndexedTextDocument(TextDocument):
    """A :class:`pygls.workspace.TextDocument` whose incremental changes cost the changed lines."""

    _cache: tuple | None = None  # (source, its lines)

    @property
    def lines(self):
        cache = self._cache
        if cache is None or cache[0] is not self._source:
            lines = lsp_lines(self._source)
            cache = self._cache = (self._source, lines)
        return cache[1]

    @staticmethod
    def _offset(lines: tuple[str, ...], line: int) -> int:
        """The offset of the start of ``line`` (``len(lines)``: the end of the text).

        Summed over the lines before it at each change: on a 50,000-line
        document that is under a millisecond, where a table of every line's
        offset, rebuilt after each change, took 3 ms."""
        return sum(map(len, itertools.islice(lines, line)))

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        lines = self.lines
        rng = self._position_codec.range_from_client_units(
            lines, types.Range(start=types.Position(line=change.range.start.line,
                                                    character=change.range.start.character),
                               end=types.Position(line=change.range.end.line, character=change.range.end.character)))
        start_line, start_col = rng.start.line, rng.start.character
        end_line, end_col = rng.end.line, rng.end.character
        if start_line == len(lines) or not lines:
            self._source = self._source + change.text  # an edit at the very end (as pygls)
            return
        end_line = min(end_line, len(lines) - 1)
        start_offset = self._offset(lines, start_line)
        end_offset = start_offset + sum(map(len, lines[start_line:end_line + 1]))
        merged = lines[start_line][:start_col] + change.text + lines[end_line][end_col:]
        if end_line < start_line:
            merged = lines[start_line][:start_col] + change.text
        source = self._source
        new_source = source[:start_offset] + merged + source[end_offset:]
        pieces = lsp_lines(merged)
        after = lines[end_line + 1:]
        first = pieces[0] if pieces else (after[0] if after else "")
        if (after and (not merged.endswith(_BREAKS) or (merged.endswith("\r") and after[0].startswith("\n")))) or (
                start_line > 0 and lines[start_line - 1].endswith("\r") and first.startswith("\n")):
            self._source = new_source  # the changed lines join their neighbours: split the text again
            return
        new_lines = lines[:start_line] + pieces + after
        self._source = new_source
        self._cache = (new_source, new_lines)


class IndexedWorkspace(Workspace):
    """A :class:`pygls.workspace.Workspace` whose documents are :class:`IndexedTextDocument`."""

    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return IndexedTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                                   sync_kind=self._sync_kind, position_codec=self._position_codec)
