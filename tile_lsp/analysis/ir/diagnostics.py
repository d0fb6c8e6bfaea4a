"""Diagnostics and source positions shared by every layer of tile-lsp.

Positions follow the Language Server Protocol: a 0-based line and a 0-based
column counted in UTF-16 code units.  The command line prints MLIR style
positions (1-based line, 1-based column counted in bytes of the UTF-8 line, as
LLVM's ``SourceMgr`` does); :class:`SourceText` converts between the two.

The severity names are MLIR's (``error``, ``warning``, ``note``, ``remark``).
"""

from __future__ import annotations

import bisect
import enum
import threading
from dataclasses import dataclass, field


class Severity(enum.Enum):
    """Severity of a diagnostic, named as MLIR names them."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    REMARK = "remark"


@dataclass(order=True, slots=True, unsafe_hash=True)
class Position:
    """A 0-based line and a 0-based UTF-16 column (LSP ``Position``).

    A value: never changed once made, ordered and hashable.  Slotted, and not
    ``frozen``: a frozen dataclass sets each field through
    ``object.__setattr__``, three times as slow to build.  The IR keeps its
    positions inside :class:`Range` s (four integers), not as objects.
    """

    line: int
    character: int


class Range:
    """A half-open range ``[start, end)`` of :class:`Position` (LSP ``Range``); a value (never
    changed once made, hashable, equal to any range of the same four numbers).

    Stored as four integers, not two :class:`Position` s: the IR of a 50,000-line file holds
    about half a million ranges, and one object instead of three is 64 bytes instead of 192
    (56 MB of that file's 290) and quicker to build.  ``start`` and ``end`` make their
    :class:`Position` when read; code reading a range many times reads ``start_line``,
    ``start_character``, ``end_line`` and ``end_character``.
    """

    __slots__ = ("start_line", "start_character", "end_line", "end_character")

    def __init__(self, start: Position, end: Position):
        self.start_line = start.line
        self.start_character = start.character
        self.end_line = end.line
        self.end_character = end.character

    @classmethod
    def of(cls, start_line: int, start_character: int, end_line: int, end_character: int) -> "Range":
        """The range from ``(start_line, start_character)`` to ``(end_line, end_character)``."""
        r = object.__new__(cls)
        r.start_line = start_line
        r.start_character = start_character
        r.end_line = end_line
        r.end_character = end_character
        return r

    @property
    def start(self) -> Position:
        return Position(self.start_line, self.start_character)

    @property
    def end(self) -> Position:
        return Position(self.end_line, self.end_character)

    def at_start(self) -> "Range":
        """The empty range at this range's start."""
        return Range.of(self.start_line, self.start_character, self.start_line, self.start_character)

    def _key(self) -> tuple[int, int, int, int]:
        return (self.start_line, self.start_character, self.end_line, self.end_character)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Range:
            return NotImplemented
        return (self.start_line == other.start_line and self.start_character == other.start_character
                and self.end_line == other.end_line and self.end_character == other.end_character)

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Range(start={self.start!r}, end={self.end!r})"

    def __reduce__(self):
        return (Range.of, self._key())

    @staticmethod
    def point(line: int, character: int) -> "Range":
        """An empty range at ``(line, character)``."""
        return Range.of(line, character, line, character)


@dataclass
class Note:
    """A related location attached to a diagnostic (MLIR ``attachNote``).

    ``range`` is ``None`` for notes MLIR prints at an unknown location.
    ``uri`` is ``None`` when the note is in the same document.
    """

    message: str
    range: Range | None
    uri: str | None = None
    severity: Severity = Severity.NOTE


@dataclass
class Diagnostic:
    """One diagnostic: severity, verbatim message, range, notes and rule code.

    ``message`` is the text NVIDIA's tools print, without location prefix.
    ``code`` names the rule that produced it (for instance ``parse``,
    ``structure.undefined-value`` or ``cuda_tile.addi.operand-type``).
    ``range`` is ``None`` for MLIR's unknown location.
    """

    severity: Severity
    message: str
    range: Range | None
    code: str = ""
    notes: list[Note] = field(default_factory=list)
    source: str = "tile-lsp"
    #: a syntax error's: the text its statement covered, which recovery removed (see :func:`mlir_order`)
    extent: Range | None = None
    #: a syntax error's: where the parser met the token it could not take, which may lie after ``range``
    #: (a missing token is reported at the end of the one before); orders it among the parse phase's errors
    met: Position | None = None
    #: a parse error that the one emitted just before it leads to (one parser failure that MLIR
    #: reports twice, as an enum attribute's "expected ... to be one of" and "failed to parse ...")
    follows: bool = False

    @classmethod
    def from_syntax(cls, issue, source: "SourceText", base: int) -> "Diagnostic":
        """The error of a :class:`~tile_lsp.grammar.parser_state.SyntaxIssue` found in text at code-point
        offset ``base`` of the document ``source``."""
        return cls(Severity.ERROR, issue.message, source.range(base + issue.start, base + issue.end),
                   "parse.syntax",
                   extent=None if issue.blanked is None else
                   source.range(base + issue.blanked[0], base + issue.blanked[1]),
                   met=None if issue.met is None else source.position(base + issue.met))

    def sort_key(self) -> tuple:
        """Key ordering diagnostics by position, unknown locations first."""
        if self.range is None:
            return (-1, -1)
        return (self.range.start.line, self.range.start.character)


#: Codes of parse-phase errors that MLIR reports only at the end of a region (forward references never
#: resolved, ``OperationParser::popSSANameScope``), not where the text names them.
LATE_PARSE_CODES = frozenset({"structure.undefined-value", "parse.location-alias"})


def _met_key(d: Diagnostic) -> tuple:
    """Where the parser met a syntax error, for ordering it among the builder's errors."""
    if d.met is not None and d.range is not None:
        return max(d.sort_key(), (d.met.line, d.met.character))
    return d.sort_key()


def mlir_order(syntax: list[Diagnostic], build: list[Diagnostic], verify: list[Diagnostic],
               failed=None) -> list[Diagnostic]:
    """One chunk's diagnostics in the order NVIDIA's ``cuda-tile-opt`` would meet them.

    MLIR parses a whole chunk before it verifies anything (``parseSourceFile``
    then ``verify``, MLIR ``lib/Tools/mlir-opt``), and its parser reads the
    text once, front to back: a syntax error and an error of a custom op's
    parser (a type whose dimensions are not powers of two, an undeclared or
    mistyped SSA value) are met in text order.  So the parse phase comes
    first: ``build`` (the IR builder's parse-level diagnostics, in the order
    it emitted them, which is the order of MLIR's parser within an op: types
    before operand resolution) with each of ``syntax`` placed before the
    first builder diagnostic that lies after it.  ``syntax`` stays in the
    order the parser met its errors: the first is MLIR's, the later ones
    come from our recovery and may lie before it.  The verifier's
    diagnostics (``verify``) follow, sorted by position.  The first
    diagnostic is therefore the one MLIR prints, and nothing precedes it
    that MLIR would not print (issue 15, "phase order").

    ``failed(position)`` (see :func:`tile_lsp.analysis.incremental.recovery.failure_scope`)
    gives, for the first parse error, the span of the operation MLIR's
    parser was reading when it failed (or the text recovery removed in its
    place; for a syntax error, its ``extent``, the statement recovery
    removed) and the start positions of the ops around it.  MLIR abandons the
    whole text there; we drop only what depends on the failure: the other
    diagnostics inside that span (the rest of the failed op, its regions
    included) and the verifier's findings on the ops that contain it (their
    structure is incomplete).  Errors MLIR prints for the same failure stay
    (two at one position for enum keywords; every undeclared value at a
    region's end), and so do the other ops' errors, verifier's included:
    real, independent errors the editor needs, and the others the parser
    printed for the same failure (they share its ``extent``).
    """
    out: list[Diagnostic] = []
    k = 0
    for d in build:
        # an SSA value never defined is reported when its region ends (MLIR's popSSANameScope): after
        # any syntax error met on the way
        key = (1 << 62, 0) if d.code in LATE_PARSE_CODES else d.sort_key()
        # a builder error at the very token where a syntax error was met came first (the op's own
        # parser reported it before returning to the one that failed)
        while k < len(syntax) and (_met_key(syntax[k]) < key if syntax[k].met is not None
                                   else syntax[k].sort_key() <= key):
            out.append(syntax[k])
            k += 1
        out.append(d)
    out.extend(syntax[k:])
    first = next((d for d in out if d.severity == Severity.ERROR and d.range is not None), None)
    verify = sorted(verify, key=Diagnostic.sort_key)
    if first is None or failed is None:
        return out + verify
    (lo, hi), holders = failed(first.range.start)
    if first.extent is not None:  # a syntax error: the statement recovery removed
        lo, hi = first.extent.start, first.extent.end
    at = first.range.start
    late = first.code if first.code in LATE_PARSE_CODES else None

    # the errors MLIR prints after the first for the same failure
    start = next(i for i, d in enumerate(out) if d is first)
    companions = {id(d) for d in out[start + 1:follow_ups_end(out, start)]}

    def depends(d: Diagnostic, verifier: bool) -> bool:
        if d is first or d.range is None or d.range.start == at or (late and d.code == late) or id(d) in companions:
            return False
        if first.extent is not None and d.extent == first.extent:
            return False  # another error MLIR prints for the same failure (its parser's follow-up)
        return lo <= d.range.start < hi or (verifier and d.range.start in holders)

    return [d for d in out if not depends(d, False)] + [d for d in verify if not depends(d, True)]


def follow_ups_end(diagnostics: list[Diagnostic], index: int) -> int:
    """The index just past the errors that follow ``diagnostics[index]`` for the same failure
    (:attr:`Diagnostic.follows`, consecutive after it)."""
    end = index + 1
    while end < len(diagnostics) and diagnostics[end].follows:
        end += 1
    return end


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` with their breaks, as :class:`SourceText` (and MLIR's ``SourceMgr``) count them.

    Lines end only at ``\\n`` (a ``\\r`` before it belongs to the line):
    unlike ``str.splitlines``, form feed, vertical tab, ``\\x1c``-``\\x1e``,
    NEL, U+2028 and U+2029 do not end a line (issue 16).  ``[]`` for the
    empty text, as ``splitlines``.
    """
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


#: ``_NUMBERS[n] == n``, as many as the longest text indexed has lines (see :func:`numbers`)
_NUMBERS: list[int] = list(range(1024))
_NUMBERS_LOCK = threading.Lock()
#: the most integers :func:`numbers` keeps (the list is never freed: 36 MiB at most)
NUMBERS_MAX = 1 << 20


def numbers(n: int) -> list[int]:
    """The shared list of the integers 0, 1, 2, ...: at least ``n`` of them, or :data:`NUMBERS_MAX` when
    ``n`` is more (it only grows; thread-safe).

    The line numbers of ranges and positions are taken from it: the ranges
    of one line then share one ``int`` object instead of holding one each (a
    50,000-line file has 250,000 ranges; their line numbers took 7 MiB).
    """
    if len(_NUMBERS) < n and len(_NUMBERS) < NUMBERS_MAX:
        with _NUMBERS_LOCK:
            if len(_NUMBERS) < n:
                _NUMBERS.extend(range(len(_NUMBERS), min(max(n, 2 * len(_NUMBERS)), NUMBERS_MAX)))
    return _NUMBERS


class SourceText:
    """Index over a text giving line/column conversions.

    ``offset`` arguments are indices into the Python ``str`` (code points).
    Lines are split on ``\\n``; a ``\\r`` before it belongs to the line.
    """

    def __init__(self, text: str):
        self.text = text
        starts = [0]
        find = text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self.line_starts = starts
        numbers(len(starts))

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    def line_of(self, offset: int) -> int:
        """0-based line containing code-point ``offset``."""
        return bisect.bisect_right(self.line_starts, offset) - 1

    def line_text(self, line: int) -> str:
        """Text of 0-based ``line`` without its newline."""
        start = self.line_starts[line]
        end = self.line_starts[line + 1] - 1 if line + 1 < len(self.line_starts) else len(self.text)
        return self.text[start:end]

    @property
    def ascii(self) -> bool:
        """Whether the whole text is ASCII (then a UTF-16 column is a code-point count); computed once."""
        try:
            return self._ascii
        except AttributeError:
            self._ascii = self.text.isascii()
            return self._ascii

    def position(self, offset: int) -> Position:
        """LSP position (UTF-16 column) of code-point ``offset`` (clamped to the text)."""
        text = self.text
        if offset < 0:
            offset = 0
        elif offset > len(text):
            offset = len(text)
        starts = self.line_starts
        line = bisect.bisect_right(starts, offset) - 1
        start = starts[line]
        try:
            line = _NUMBERS[line]  # one int per line, shared (see numbers)
        except IndexError:
            pass
        if self.ascii:
            return Position(line, offset - start)
        segment = text[start:offset]
        if segment.isascii():
            return Position(line, len(segment))
        return Position(line, len(segment.encode("utf-16-le")) // 2)

    def range(self, start: int, end: int) -> Range:
        """LSP range of the code-point span ``[start, end)`` (each end clamped to the text).

        A span within one line of an ASCII text takes one line look-up (the
        builder asks for half a million ranges on a 50,000-line file)."""
        try:
            ascii_text = self._ascii
        except AttributeError:
            ascii_text = self.ascii
        if ascii_text and 0 <= start <= end <= len(self.text):
            starts = self.line_starts
            line = bisect.bisect_right(starts, start) - 1
            if line + 1 >= len(starts) or end < starts[line + 1]:
                character = start - starts[line]
                try:
                    line = _NUMBERS[line]  # one int per line, shared (see numbers)
                except IndexError:
                    pass
                return Range.of(line, character, line, character + end - start)
        return Range(self.position(start), self.position(end))

    def offset(self, pos: Position) -> int:
        """Code-point offset of an LSP position (clamped to the line)."""
        if pos.line >= len(self.line_starts):
            return len(self.text)
        line_text = self.line_text(pos.line)
        if line_text.isascii():
            col = min(pos.character, len(line_text))
        else:
            units = 0
            col = 0
            for ch in line_text:
                if units >= pos.character:
                    break
                units += 2 if ord(ch) > 0xFFFF else 1
                col += 1
        return self.line_starts[pos.line] + col

    def cli_column(self, pos: Position) -> int:
        """1-based UTF-8 byte column of ``pos`` as MLIR's tools print it."""
        if pos.line >= len(self.line_starts):
            return pos.character + 1
        line_text = self.line_text(pos.line)
        if line_text.isascii():
            return pos.character + 1
        offset = self.offset(pos) - self.line_starts[pos.line]
        return len(line_text[:offset].encode("utf-8")) + 1
