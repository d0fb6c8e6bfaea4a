"""Splitting a text at MLIR's ``// -----`` markers (``-split-input-file``)."""

from __future__ import annotations

from dataclasses import dataclass

from tile_lsp.analysis.ir.diagnostics import split_lines


SPLIT_MARKER = "// -----"


def _is_marker(line: str) -> bool:
    return line.strip() == SPLIT_MARKER


def has_split_marker(text: str) -> bool:
    """True if a line of ``text`` is MLIR's ``// -----`` split marker (alone on its line)."""
    return split_marker_at(text) is not None


def split_marker_at(text: str, lo: int = 0, hi: int | None = None) -> int | None:
    """The offset of a split marker in ``text[lo:hi]`` (whole lines), or ``None``."""
    return word_in_line(text, SPLIT_MARKER, lambda start, end: _is_marker(text[start:end]), lo, hi)


def word_in_line(text: str, word: str, accept, lo: int = 0, hi: int | None = None) -> int | None:
    """The offset of ``word`` in a line of ``text[lo:hi]`` (whole lines; lines end at ``\n``) that
    ``accept(line start, line end)`` accepts, or ``None``.  The word is found by string search and only
    its lines are tested: a search of a 4 MB text for a word it lacks takes a millisecond or two."""
    hi = len(text) if hi is None else hi
    i = text.find(word, lo, hi)
    while i != -1:
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i)
        end = len(text) if end == -1 else end
        if accept(start, end):
            return i
        i = text.find(word, end, hi)
    return None


@dataclass(frozen=True)
class Chunk:
    """One chunk of a split file.

    ``start_line``: 0-based line of the chunk's first line in the whole file.
    ``start_offset``: code-point offset of that line in the whole file.
    ``text``: the chunk's text (the marker line itself is in no chunk).
    """

    start_line: int
    start_offset: int
    text: str


def split_chunks(text: str) -> list[Chunk]:
    """Split ``text`` at lines whose content is ``// -----`` (MLIR's marker).

    The marker must stand alone on its line, surrounding spaces allowed, as
    ``mlir::splitAndProcessBuffer`` requires.  Always returns at least one chunk.
    """
    chunks: list[Chunk] = []
    start_line = 0
    start_offset = 0
    offset = 0
    for line_no, line in enumerate(split_lines(text)):
        if _is_marker(line):
            chunks.append(Chunk(start_line, start_offset, text[start_offset:offset]))
            start_line = line_no + 1
            start_offset = offset + len(line)
        offset += len(line)
    chunks.append(Chunk(start_line, start_offset, text[start_offset:]))
    return chunks
