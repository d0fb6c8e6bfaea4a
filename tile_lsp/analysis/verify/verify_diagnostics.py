"""A re-implementation of ``mlir-opt -verify-diagnostics``.

The rules are those of LLVM's ``mlir/lib/IR/Diagnostics.cpp``
(``SourceMgrDiagnosticVerifierHandler``, its ``Impl`` and ``ExpectedDiag``),
with regular expressions as LLVM's ``llvm/lib/Support/Regex.cpp`` and
``regcomp.c`` (POSIX extended syntax, Henry Spencer's engine) understand them:

* **Directives.**  Every line of the buffer, split at ``\\n`` and stripped on
  the right of ``" \\t\\n\\v\\f\\r"`` (``StringRef::rtrim``), is searched with
  ``expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *{{(.*)}}$``
  (``SourceMgrDiagnosticVerifierHandlerImpl::expected``).  The text between
  the first ``{{`` and the final ``}}`` is the expected message.  There is no
  count form (``expected-error 2 ...`` is not a directive).
* **Lines** (``computeExpectedDiags``): no designator means the directive's own
  line; ``@+N`` / ``@-N`` are relative to the directive's line (``N`` read by
  ``getAsInteger(0, ...)``, so a leading ``0`` means octal); ``@above`` is the
  last preceding line that is not itself a directive line; ``@below`` is the
  next line that is not a directive line (or the buffer's last line when
  there is none); ``@unknown`` matches only diagnostics without a file
  location.
* **Messages** (``ExpectedDiag::match``): plain directives match when the
  expected text is a substring of the diagnostic's message; ``-re`` directives
  are turned into one regex, literal text escaped with ``Regex::escape`` and
  each ``{{...}}`` block inserted as a parenthesised group
  (``ExpectedDiag::computeRegex``), and match when the regex is found anywhere
  in the message.
* **Matching** (``SourceMgrDiagnosticVerifierHandler::process``): every
  diagnostic, then each of its notes, is looked up among the expectations in
  source order; the first one on the same line whose text matches and whose
  severity is the same is marked matched (an expectation may absorb any
  number of diagnostics).  If none matches, a text-only match of another
  severity gives ``'<kind>' diagnostic emitted when expecting a '<kind>'`` at
  the (last such) directive, else ``unexpected <kind>: <message>`` is
  reported at the diagnostic's location.
* **End** (``SourceMgrDiagnosticVerifierHandler::verify``): every unmatched
  expectation gives ``expected <kind> "<text>" was not produced``, in source
  order, those at ``@unknown`` last.

Bad ``-re`` directives are reported when the buffer is scanned, as
``found start of regex with no end '}}'`` or ``invalid regex: <regerror>``,
and are then dropped (the line still counts as a directive line).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tile_lsp.analysis.ir.diagnostics import (
    Diagnostic,
    Note,
    Position,
    Range,
    Severity,
    SourceText,
)
from tile_lsp.analysis.ir.split import Chunk

__all__ = [
    "VERIFY_CODE",
    "Expectation",
    "LlvmRegexError",
    "check_chunks",
    "compile_llvm_regex",
    "llvm_regex_escape",
    "parse_expectations",
    "verify",
]

#: ``Diagnostic.code`` of every failure :func:`verify` reports.
VERIFY_CODE = "verify-diagnostics"

# SourceMgrDiagnosticVerifierHandlerImpl::expected, in Python syntax.  The
# capture groups are numbered as in LLVM (1 kind, 2 -re, 3 @..., 5 message).
_DIRECTIVE = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$",
    re.DOTALL,
)

_KINDS = {
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "remark": Severity.REMARK,
    "note": Severity.NOTE,
}

# StringRef::rtrim's default set.
_RTRIM = " \t\n\v\f\r"


# ---------------------------------------------------------------------------
# LLVM regular expressions
# ---------------------------------------------------------------------------


class LlvmRegexError(ValueError):
    """An LLVM (POSIX extended) regex that ``llvm_regcomp`` rejects.

    ``str(error)`` is the text ``llvm_regerror`` gives for the error code
    (``llvm/lib/Support/regerror.c``), e.g. ``"parentheses not balanced"``.
    """


# regerror.c texts.
_REG_ECOLLATE = "invalid collating element"
_REG_ECTYPE = "invalid character class"
_REG_EESCAPE = "trailing backslash (\\)"
_REG_ESUBREG = "invalid backreference number"
_REG_EBRACK = "brackets ([ ]) not balanced"
_REG_EPAREN = "parentheses not balanced"
_REG_EBRACE = "braces not balanced"
_REG_BADBR = "invalid repetition count(s)"
_REG_ERANGE = "invalid character range"
_REG_BADRPT = "repetition-operator operand invalid"
_REG_EMPTY = "empty (sub)expression"

_DUPMAX = 255  # _POSIX2_RE_DUP_MAX
_NPAREN = 10  # groups 1-9 can be back-referenced

_UPPER = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = b"abcdefghijklmnopqrstuvwxyz"
_DIGIT = b"0123456789"
_PUNCT = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
# regcomp.c's cclasses table (C locale).
_CCLASSES: dict[bytes, bytes] = {
    b"alnum": _UPPER + _LOWER + _DIGIT,
    b"alpha": _UPPER + _LOWER,
    b"blank": b" \t",
    b"cntrl": bytes(list(range(1, 32)) + [127]),
    b"digit": _DIGIT,
    b"graph": _UPPER + _LOWER + _DIGIT + _PUNCT,
    b"lower": _LOWER,
    b"print": _UPPER + _LOWER + _DIGIT + _PUNCT + b" ",
    b"punct": _PUNCT,
    b"space": b"\t\n\v\f\r ",
    b"upper": _UPPER,
    b"xdigit": b"0123456789ABCDEFabcdef",
}
# regcomp.c's cnames table (collating element names).
_CNAMES: dict[bytes, int] = {
    name.encode(): code
    for name, code in [
        ("NUL", 0), ("SOH", 1), ("STX", 2), ("ETX", 3), ("EOT", 4), ("ENQ", 5),
        ("ACK", 6), ("BEL", 7), ("alert", 7), ("BS", 8), ("backspace", 8),
        ("HT", 9), ("tab", 9), ("LF", 10), ("newline", 10), ("VT", 11),
        ("vertical-tab", 11), ("FF", 12), ("form-feed", 12), ("CR", 13),
        ("carriage-return", 13), ("SO", 14), ("SI", 15), ("DLE", 16),
        ("DC1", 17), ("DC2", 18), ("DC3", 19), ("DC4", 20), ("NAK", 21),
        ("SYN", 22), ("ETB", 23), ("CAN", 24), ("EM", 25), ("SUB", 26),
        ("ESC", 27), ("IS4", 28), ("FS", 28), ("IS3", 29), ("GS", 29),
        ("IS2", 30), ("RS", 30), ("IS1", 31), ("US", 31), ("space", 32),
        ("exclamation-mark", 33), ("quotation-mark", 34), ("number-sign", 35),
        ("dollar-sign", 36), ("percent-sign", 37), ("ampersand", 38),
        ("apostrophe", 39), ("left-parenthesis", 40), ("right-parenthesis", 41),
        ("asterisk", 42), ("plus-sign", 43), ("comma", 44), ("hyphen", 45),
        ("hyphen-minus", 45), ("period", 46), ("full-stop", 46), ("slash", 47),
        ("solidus", 47), ("zero", 48), ("one", 49), ("two", 50), ("three", 51),
        ("four", 52), ("five", 53), ("six", 54), ("seven", 55), ("eight", 56),
        ("nine", 57), ("colon", 58), ("semicolon", 59), ("less-than-sign", 60),
        ("equals-sign", 61), ("greater-than-sign", 62), ("question-mark", 63),
        ("commercial-at", 64), ("left-square-bracket", 91), ("backslash", 92),
        ("reverse-solidus", 92), ("right-square-bracket", 93), ("circumflex", 94),
        ("circumflex-accent", 94), ("underscore", 95), ("low-line", 95),
        ("grave-accent", 96), ("left-brace", 123), ("left-curly-bracket", 123),
        ("vertical-line", 124), ("right-brace", 125), ("right-curly-bracket", 125),
        ("tilde", 126), ("DEL", 127),
    ]
}

_WORD = rb"[0-9A-Za-z_]"  # ISWORD: isalnum or '_' in the C locale
_BOW = rb"(?<!" + _WORD + rb")(?=" + _WORD + rb")"
_EOW = rb"(?<=" + _WORD + rb")(?!" + _WORD + rb")"

# Regex::escape's metacharacters.
_METACHARS = "()^$|*+?.[]\\{}"


def llvm_regex_escape(text: str) -> str:
    """``llvm::Regex::escape``: a backslash before each of ``()^$|*+?.[]\\{}``."""
    return "".join("\\" + c if c in _METACHARS else c for c in text)


def _isdigit(c: int) -> bool:
    return 48 <= c <= 57


def _isalpha(c: int) -> bool:
    return 65 <= c <= 90 or 97 <= c <= 122


def _signed(c: int) -> int:
    """Value of byte ``c`` as a (signed, x86-64) ``char``."""
    return c - 256 if c >= 128 else c


def _byte_class(values: set[int]) -> bytes:
    """Python regex (bytes) matching exactly one byte of ``values``."""
    if not values:
        return rb"(?!)"
    ordered = sorted(values)
    if len(ordered) == 1:
        return b"\\x%02x" % ordered[0]
    parts = []
    start = prev = ordered[0]
    for v in ordered[1:] + [-1]:
        if v == prev + 1:
            prev = v
            continue
        parts.append(b"\\x%02x" % start if start == prev else b"\\x%02x-\\x%02x" % (start, prev))
        start = prev = v
    return b"[" + b"".join(parts) + b"]"


def _ordinary(c: int) -> bytes:
    if _isdigit(c) or _isalpha(c):
        return bytes([c])
    return b"\\x%02x" % c


class _EreTranslator:
    """Parser of LLVM's POSIX ERE dialect emitting an equivalent Python regex.

    Mirrors ``p_ere``, ``p_ere_exp``, ``p_count``, ``p_bracket``, ``p_b_term``,
    ``p_b_cclass``, ``p_b_symbol`` and ``p_b_coll_elem`` of LLVM's
    ``regcomp.c`` (``REG_EXTENDED``, no ``REG_NEWLINE``, no ``REG_ICASE``),
    raising :class:`LlvmRegexError` at the first error ``seterr`` would keep.
    Works on bytes, as the C engine does.
    """

    def __init__(self, pattern: bytes):
        self.p = pattern
        self.i = 0
        self.end = len(pattern)
        self.nsub = 0
        self.closed: set[int] = set()

    # -- helpers mirroring the C macros
    def more(self) -> bool:
        return self.i < self.end

    def peek(self) -> int:
        return self.p[self.i]

    def see(self, c: str) -> bool:
        return self.i < self.end and self.p[self.i] == ord(c)

    def seetwo(self, a: str, b: str) -> bool:
        return self.i + 1 < self.end and self.p[self.i] == ord(a) and self.p[self.i + 1] == ord(b)

    def eat(self, c: str) -> bool:
        if self.see(c):
            self.i += 1
            return True
        return False

    @staticmethod
    def error(message: str):
        raise LlvmRegexError(message)

    # -- grammar
    def translate(self) -> bytes:
        out = self.ere(None)
        assert not self.more()
        return out

    def ere(self, stop: int | None) -> bytes:
        alternatives = []
        while True:
            pieces = []
            nonempty = False
            while self.more() and self.peek() != ord("|") and self.peek() != stop:
                piece, emitted = self.ere_exp()
                pieces.append(piece)
                nonempty = nonempty or emitted
            if not nonempty:
                self.error(_REG_EMPTY)
            alternatives.append(b"".join(pieces))
            if not self.eat("|"):
                break
        return b"|".join(alternatives)

    def is_repetition_next(self) -> bool:
        if not self.more():
            return False
        c = self.peek()
        return c in b"*+?" or (c == ord("{") and self.i + 1 < self.end and _isdigit(self.p[self.i + 1]))

    def ere_exp(self) -> tuple[bytes, bool]:
        c = self.p[self.i]
        self.i += 1
        wascaret = False
        if c == ord("("):
            if not self.more():
                self.error(_REG_EPAREN)
            self.nsub += 1
            subno = self.nsub
            inner = b"" if self.see(")") else self.ere(ord(")"))
            if subno < _NPAREN:
                self.closed.add(subno)
            if not self.eat(")"):
                self.error(_REG_EPAREN)
            atom = b"(" + inner + b")"
        elif c == ord(")"):
            self.error(_REG_EPAREN)
        elif c == ord("^"):
            atom = rb"\A"
            wascaret = True
        elif c == ord("$"):
            atom = rb"\Z"
        elif c == ord("|"):
            self.error(_REG_EMPTY)
        elif c in b"*+?":
            self.error(_REG_BADRPT)
        elif c == ord("."):
            atom = b"."
        elif c == ord("["):
            atom = self.bracket()
        elif c == ord("\\"):
            if not self.more():
                self.error(_REG_EESCAPE)
            c = self.p[self.i]
            self.i += 1
            if ord("1") <= c <= ord("9"):
                n = c - ord("0")
                if n not in self.closed:
                    self.error(_REG_ESUBREG)
                atom = b"(?:\\%d)" % n
            else:
                atom = _ordinary(c)
        elif c == ord("{"):
            if self.more() and _isdigit(self.peek()):
                self.error(_REG_BADRPT)
            atom = _ordinary(c)
        else:
            atom = _ordinary(c)

        if not self.is_repetition_next():
            return atom, True
        c = self.p[self.i]
        self.i += 1
        if wascaret:
            self.error(_REG_BADRPT)
        emitted = True
        if c == ord("*"):
            quantifier = b"*"
        elif c == ord("+"):
            quantifier = b"+"
        elif c == ord("?"):
            quantifier = b"?"
        else:
            low = self.count()
            if self.eat(","):
                if self.more() and _isdigit(self.peek()):
                    high: int | None = self.count()
                    if low > high:
                        self.error(_REG_BADBR)
                else:
                    high = None  # INFINITY
            else:
                high = low
            if not self.eat("}"):
                while self.more() and self.peek() != ord("}"):
                    self.i += 1
                if not self.more():
                    self.error(_REG_EBRACE)
                self.error(_REG_BADBR)
            if high is None:
                quantifier = b"{%d,}" % low
            elif high == low:
                quantifier = b"{%d}" % low
            else:
                quantifier = b"{%d,%d}" % (low, high)
            emitted = high != 0  # repeat(): x{0} / x{0,0} drops its operand
        if self.is_repetition_next():
            self.error(_REG_BADRPT)
        return b"(?:" + atom + b")" + quantifier, emitted

    def count(self) -> int:
        value = 0
        digits = 0
        while self.more() and _isdigit(self.peek()) and value <= _DUPMAX:
            value = value * 10 + self.peek() - ord("0")
            self.i += 1
            digits += 1
        if digits == 0 or value > _DUPMAX:
            self.error(_REG_BADBR)
        return value

    def bracket(self) -> bytes:
        if self.end - self.i > 5:
            if self.p[self.i : self.i + 6] == b"[:<:]]":
                self.i += 6
                return _BOW
            if self.p[self.i : self.i + 6] == b"[:>:]]":
                self.i += 6
                return _EOW
        values: set[int] = set()
        invert = self.eat("^")
        if self.eat("]"):
            values.add(ord("]"))
        elif self.eat("-"):
            values.add(ord("-"))
        while self.more() and self.peek() != ord("]") and not self.seetwo("-", "]"):
            self.bracket_term(values)
        if self.eat("-"):
            values.add(ord("-"))
        if not self.eat("]"):
            self.error(_REG_EBRACK)
        if invert:
            values = set(range(256)) - values
        return _byte_class(values)

    def bracket_term(self, values: set[int]) -> None:
        first = self.peek() if self.more() else 0
        if first == ord("["):
            c = self.p[self.i + 1] if self.i + 1 < self.end else 0
        elif first == ord("-"):
            self.error(_REG_ERANGE)
        else:
            c = 0
        if c == ord(":"):
            values.update(self.bracket_class(":", _REG_ECTYPE, self.cclass))
        elif c == ord("="):
            values.update(self.bracket_class("=", _REG_ECOLLATE, self.eclass))
        else:
            start = self.symbol()
            if self.see("-") and self.i + 1 < self.end and self.p[self.i + 1] != ord("]"):
                self.i += 1
                finish = ord("-") if self.eat("-") else self.symbol()
            else:
                finish = start
            low, high = _signed(start), _signed(finish)
            if low > high:
                self.error(_REG_ERANGE)
            values.update(v & 0xFF for v in range(low, high + 1))

    def bracket_class(self, delim: str, err: str, body: Callable[[], Iterable[int]]) -> Iterable[int]:
        """The bytes of a ``[:name:]`` (``delim`` ``:``) or ``[=name=]`` (``=``) term, at its ``[``.

        ``p_b_term``'s two cases: ``body`` reads the name (``p_b_cclass`` /
        ``p_b_eclass``); the pattern ending early is ``REG_EBRACK``, a name
        starting with ``-`` or ``]`` or a missing ``delim]`` is ``err``.
        """
        self.i += 2
        if not self.more():
            self.error(_REG_EBRACK)
        if self.peek() in b"-]":
            self.error(err)
        members = body()
        if not self.more():
            self.error(_REG_EBRACK)
        if not self.seetwo(delim, "]"):
            self.error(err)
        self.i += 2
        return members

    def cclass(self) -> Iterable[int]:
        """``p_b_cclass``: the bytes of the character class named here (``alpha``, ``digit`` ...)."""
        start = self.i
        while self.more() and _isalpha(self.peek()):
            self.i += 1
        members = _CCLASSES.get(self.p[start : self.i])
        if members is None:
            self.error(_REG_ECTYPE)
        return members

    def eclass(self) -> Iterable[int]:
        """``p_b_eclass``: an equivalence class is its one collating element (C locale)."""
        return (self.collating_element("="),)

    def symbol(self) -> int:
        if not self.more():
            self.error(_REG_EBRACK)
        if not self.seetwo("[", "."):
            c = self.peek()
            self.i += 1
            return c
        self.i += 2
        value = self.collating_element(".")
        if not self.seetwo(".", "]"):
            self.error(_REG_ECOLLATE)
        self.i += 2
        return value

    def collating_element(self, endc: str) -> int:
        start = self.i
        while self.more() and not self.seetwo(endc, "]"):
            self.i += 1
        if not self.more():
            self.error(_REG_EBRACK)
        name = self.p[start : self.i]
        if name in _CNAMES:
            return _CNAMES[name]
        if len(name) == 1:
            return name[0]
        self.error(_REG_ECOLLATE)
        raise AssertionError("unreachable")


def compile_llvm_regex(pattern: str | bytes) -> "re.Pattern[bytes]":
    """Compile an LLVM regex (``llvm::Regex`` with default flags) for Python.

    ``pattern`` is POSIX extended syntax as LLVM's ``regcomp.c`` reads it
    (``\\d`` is a literal ``d``, ``{`` not followed by a digit is literal,
    ``[[:alpha:]]`` classes, ``\\1``-``\\9`` back-references, no lazy
    quantifiers); a ``str`` is encoded as UTF-8.  The result is a bytes
    pattern: search it in ``message.encode("utf-8")``, for LLVM matches bytes
    (``.`` is one byte and matches ``\\n``; ``^``/``$`` only at the ends).

    Raises :class:`LlvmRegexError` with ``llvm_regerror``'s text when
    ``llvm_regcomp`` would fail (an empty pattern included: "empty
    (sub)expression").
    """
    if isinstance(pattern, str):
        pattern = pattern.encode("utf-8", "surrogatepass")
    translated = _EreTranslator(pattern).translate()
    return re.compile(translated, re.DOTALL)


# ---------------------------------------------------------------------------
# Expectations
# ---------------------------------------------------------------------------


@dataclass
class Expectation:
    """One ``expected-*`` directive of a buffer (``ExpectedDiag``).

    ``severity``: the expected kind.  ``message``: the text between ``{{`` and
    the final ``}}``, verbatim (for ``-re`` directives it still contains its
    ``{{regex}}`` blocks).  ``is_regex``: the directive had ``-re``.
    ``designator``: ``""`` or the text after ``@`` (``"below"``, ``"+2"`` ...).
    ``line``: 0-based whole-file line a diagnostic must be on, ``None`` for
    ``@unknown`` (or for an ``@+N`` whose ``N`` LLVM cannot read).
    ``range``: the range LLVM underlines when reporting the directive: from the
    ``e`` of ``expected-`` over as many bytes as ``message`` has (clamped to the
    line), in whole-file coordinates.  ``matched``: set by :func:`verify`.
    """

    severity: Severity
    message: str
    is_regex: bool
    designator: str
    line: int | None
    range: Range
    matched: bool = False
    _pattern: "re.Pattern[bytes] | None" = field(default=None, repr=False)
    _unmatchable: bool = field(default=False, repr=False)

    @property
    def is_unknown(self) -> bool:
        """The directive is ``@unknown``: it matches unknown locations only."""
        return self.designator == "unknown"

    def matches(self, message: str) -> bool:
        """``ExpectedDiag::match``: substring test, or regex search for ``-re``.

        A ``-re`` directive whose assembled regex does not compile as a whole
        (e.g. a back-reference renumbered by the added groups) never matches,
        as ``llvm::Regex::match`` returns false for an invalid regex.
        """
        if self._unmatchable:
            return False
        if self.is_regex:
            assert self._pattern is not None
            return self._pattern.search(message.encode("utf-8", "surrogatepass")) is not None
        return self.message in message


def _compute_regex(message: str) -> tuple["re.Pattern[bytes] | None", str | None]:
    """``ExpectedDiag::computeRegex``: ``(pattern, None)`` or ``(None, error text)``.

    The pattern is ``None`` with no error when the assembled regex is invalid
    as a whole although every block is valid alone (it then never matches).
    """
    parts: list[str] = []
    rest = message
    while rest:
        start = rest.find("{{")
        if start == -1:
            parts.append(llvm_regex_escape(rest))
            break
        parts.append(llvm_regex_escape(rest[:start]))
        rest = rest[start + 2 :]
        stop = rest.find("}}")
        if stop == -1:
            return None, "found start of regex with no end '}}'"
        block = rest[:stop]
        try:
            compile_llvm_regex(block)
        except LlvmRegexError as err:
            return None, f"invalid regex: {err}"
        parts.append("(" + block + ")")
        rest = rest[stop + 2 :]
    try:
        return compile_llvm_regex("".join(parts)), None
    except LlvmRegexError:
        return None, None


def _get_as_integer(digits: str) -> int | None:
    """``StringRef::getAsInteger(0, int&)`` on ``[0-9]+``; ``None`` on failure."""
    radix = 10
    if len(digits) > 1 and digits[0] == "0":
        digits, radix = digits[1:], 8
    try:
        value = int(digits, radix)
    except ValueError:
        return None
    return value if value <= 2**31 - 1 else None


def _directive_range(text: SourceText, start: int, nbytes: int, line_offset: int) -> Range:
    line = text.line_of(start)
    line_end = text.line_starts[line] + len(text.line_text(line))
    end = start
    used = 0
    while used < nbytes and end < line_end:
        used += len(text.text[end].encode("utf-8", "surrogatepass"))
        end += 1
    rng = text.range(start, end)
    return Range(
        Position(rng.start.line + line_offset, rng.start.character),
        Position(rng.end.line + line_offset, rng.end.character),
    )


def _failure(message: str, rng: Range | None, notes: list[Note] | None = None) -> Diagnostic:
    return Diagnostic(Severity.ERROR, message, rng, code=VERIFY_CODE, notes=notes or [])


def parse_expectations(chunk_text: str, *, line_offset: int = 0) -> tuple[list[Expectation], list[Diagnostic]]:
    """Scan a buffer for ``expected-*`` directives (``computeExpectedDiags``).

    ``chunk_text`` is one buffer: a whole file, or one chunk of
    ``-split-input-file`` whose first line is line ``line_offset`` (0-based) of
    the file.  Returns ``(expectations, errors)``: the directives in source
    order, and the errors LLVM prints while scanning (bad ``-re``
    directives, which are left out of ``expectations``), both in whole-file
    coordinates.

    MLIR's chunk buffers start with the rest of the ``// -----`` line, so when
    ``line_offset > 0`` an ``@above`` with no non-directive line before it in
    the chunk refers to line ``line_offset - 1`` (the marker line); in a file's
    first chunk it refers to the chunk's first line, as in LLVM.
    """
    text = SourceText(chunk_text)
    lines = chunk_text.split("\n")
    expectations: list[Expectation] = []
    errors: list[Diagnostic] = []
    last_non_directive = line_offset - 1 if line_offset > 0 else 0
    pending_below: list[Expectation] = []
    for index, raw in enumerate(lines):
        match = _DIRECTIVE.search(raw.rstrip(_RTRIM))
        line = line_offset + index
        if match is None:
            for exp in pending_below:
                exp.line = line
            pending_below.clear()
            last_non_directive = line
            continue
        message = match.group(5)
        start = text.line_starts[index] + match.start()
        rng = _directive_range(text, start, len(message.encode("utf-8", "surrogatepass")), line_offset)
        exp = Expectation(
            severity=_KINDS[match.group(1)],
            message=message,
            is_regex=match.group(2) is not None,
            designator=match.group(4) or "",
            line=line,
            range=rng,
        )
        if exp.is_regex:
            pattern, error = _compute_regex(message)
            if error is not None:
                errors.append(_failure(error, rng))
                continue
            exp._pattern = pattern
            exp._unmatchable = pattern is None
        designator = exp.designator
        if designator[:1] in ("+", "-"):
            offset = _get_as_integer(designator[1:])
            if offset is None:
                # LLVM leaves the offset uninitialised: treat as never matching.
                exp.line = None
                exp._unmatchable = True
            else:
                exp.line = line + offset if designator[0] == "+" else line - offset
        elif designator == "unknown":
            exp.line = None
        elif designator == "above":
            exp.line = last_non_directive
        elif designator == "below":
            pending_below.append(exp)
            exp.line = line_offset + len(lines) - 1  # if it ends up dangling
        expectations.append(exp)
    return expectations, errors


# ---------------------------------------------------------------------------
# Verification
# ---------------------------------------------------------------------------


def verify(
    chunk_text: str,
    diagnostics: list[Diagnostic],
    *,
    line_offset: int = 0,
    only_expected: bool = False,
) -> list[Diagnostic]:
    """Check ``diagnostics`` against the ``expected-*`` directives of a buffer.

    ``chunk_text``: the buffer (a file, or one ``-split-input-file`` chunk
    starting at 0-based file line ``line_offset``).  ``diagnostics``: what was
    emitted for it, ranges in whole-file coordinates, ``range=None`` meaning
    MLIR's unknown location; each diagnostic's notes are checked after it as
    separate diagnostics, as MLIR's handler does.  A note with a ``uri`` lies
    in another document, whose directives are not known here: it can match
    nothing.  ``only_expected`` is ``-verify-diagnostics=only-expected``:
    diagnostics that match nothing are ignored.

    Returns the failures (empty when verification passes) as error
    diagnostics with ``code == VERIFY_CODE``, in the order mlir-opt prints
    them: scan errors, then per diagnostic ``unexpected <kind>: <message>``
    (at the diagnostic's range) or ``'<kind>' diagnostic emitted when
    expecting a '<kind>'`` (at the directive), then ``expected <kind>
    "<text>" was not produced`` (at the directive's :attr:`Expectation.range`).

    mlir-opt prints failures about ``@unknown`` directives without a
    location; they are placed at the directive here, to be visible in an
    editor.  Rule source: ``SourceMgrDiagnosticVerifierHandler::process`` and
    ``::verify`` in ``mlir/lib/IR/Diagnostics.cpp``.
    """
    expectations, failures = parse_expectations(chunk_text, line_offset=line_offset)
    located = [e for e in expectations if not e.is_unknown]
    unknown = [e for e in expectations if e.is_unknown]

    def process(message: str, severity: Severity, rng: Range | None, uri: str | None) -> None:
        if uri is not None:
            candidates: list[Expectation] = []
        elif rng is None:
            candidates = unknown
        else:
            candidates = [e for e in located if e.line == rng.start.line]
        near_miss: Expectation | None = None
        for exp in candidates:
            if exp.matches(message):
                if exp.severity == severity:
                    exp.matched = True
                    return
                near_miss = exp
        if only_expected:
            return
        if near_miss is not None:
            failures.append(
                _failure(
                    f"'{severity.value}' diagnostic emitted when expecting a '{near_miss.severity.value}'",
                    Range(near_miss.range.start, near_miss.range.start),
                )
            )
        elif uri is not None:
            failures.append(
                _failure(f"unexpected {severity.value}: {message}", None, [Note(message, rng, uri, severity)])
            )
        else:
            failures.append(_failure(f"unexpected {severity.value}: {message}", rng))

    for diag in diagnostics:
        process(diag.message, diag.severity, diag.range, None)
        for note in diag.notes:
            process(note.message, note.severity, note.range, note.uri)

    for exp in located + unknown:
        if not exp.matched:
            failures.append(
                _failure(f'expected {exp.severity.value} "{exp.message}" was not produced', exp.range)
            )
    return failures


def check_chunks(text: str, chunk_results: list[tuple[Chunk, list[Diagnostic]]]) -> list[Diagnostic]:
    """Run :func:`verify` on each ``(chunk, diagnostics)`` pair of ``text``.

    ``chunk_results`` pairs each chunk of ``text`` (see
    :func:`tile_lsp.analysis.ir.split.split_chunks`) with the diagnostics emitted
    for it, as mlir-opt processes each split buffer with its own verifier.
    ``text`` is accepted for symmetry with the callers and not re-split.
    Returns all failures, chunk by chunk, in whole-file coordinates.
    """
    del text
    failures: list[Diagnostic] = []
    for chunk, diagnostics in chunk_results:
        failures.extend(verify(chunk.text, diagnostics, line_offset=chunk.start_line))
    return failures
