"""MLIR's declarative assembly format language: the AST of a format string.

Each :class:`~tile_lsp.dialect.schema.OpDef` carries its assembly format as
MLIR writes it in ODS (``$lhs `,` $rhs attr-dict `:` type($result)``).
:func:`parse_format` turns such a string into a tuple of AST elements; the
grammar (:mod:`tile_lsp.grammar.formats`), the IR builder, the printer and
signature help all walk the same AST, so every one of them derives from the
op's single table entry.

Rule source: MLIR "Declarative Assembly Format" (mlir/docs/DefiningDialects/Operations.md):
literals in backticks, ``$var``, directives (``attr-dict``,
``attr-dict-with-keyword``, ``type``, ``functional-type``, ``custom<X>``,
``oilist``, ``operands``, ``results``, ``regions``), and optional groups
``( ... )?`` with an anchor ``^`` and an optional else group ``: ( ... )``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# ---------------------------------------------------------------------------
# Format AST
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Literal:
    """A literal keyword or punctuation (``text`` empty or a space: spacing only)."""

    text: str


@dataclass(frozen=True)
class Var:
    """``$name``: an operand, attribute, result or region of the op."""

    name: str
    anchor: bool = False


@dataclass(frozen=True)
class Directive:
    """``attr-dict``, ``type($x)``, ``custom<Name>(args)``, ``functional-type(a, b)`` ..."""

    name: str
    args: tuple = ()
    custom: str = ""  # the name in custom<Name>
    anchor: bool = False


@dataclass(frozen=True)
class OptionalGroup:
    """``( elements )?`` with an optional else group; ``then`` may nest a following group."""

    then: tuple
    else_: tuple = ()


@dataclass(frozen=True)
class OIList:
    """``oilist(`kw` $attr | ...)``: keywords in any order, each at most once."""

    clauses: tuple  # of (keyword, attr name)


_TOKEN_RE = re.compile(
    r"\s*(?:(`[^`]*`)|(\$[A-Za-z_][A-Za-z0-9_]*)|(custom<[A-Za-z0-9_]+>)|"
    r"(attr-dict-with-keyword|attr-dict|functional-type|type|oilist|operands|results|regions|successors|struct|params|ref)|"
    r"(\^)|(\()|(\))|(\?)|(,)|(:)|(\|))"
)


def _tokenize(fmt: str) -> list[str]:
    out: list[str] = []
    pos = 0
    fmt = fmt.strip()
    while pos < len(fmt):
        m = _TOKEN_RE.match(fmt, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot tokenize format at {fmt[pos:pos + 20]!r}")
        out.append(m.group(0).strip())
        pos = m.end()
        while pos < len(fmt) and fmt[pos].isspace():
            pos += 1
    return out


class _FormatParser:
    def __init__(self, fmt: str):
        self.toks = _tokenize(fmt)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise ValueError(f"format: expected {expected!r}, got {tok!r}")
        self.i += 1
        return tok

    def elements(self, stop: tuple[str, ...] = ()) -> list:
        out = []
        while self.peek() is not None and self.peek() not in stop:
            out.append(self.element())
        return out

    def args(self) -> tuple:
        self.take("(")
        args = []
        while self.peek() != ")":
            if self.peek() == ",":
                self.take()
                continue
            args.append(self.element())
        self.take(")")
        return tuple(args)

    def element(self):
        tok = self.take()
        if tok.startswith("`"):
            return Literal(tok[1:-1])
        if tok.startswith("$"):
            anchor = self.peek() == "^"
            if anchor:
                self.take()
            return Var(tok[1:], anchor)
        if tok.startswith("custom<"):
            name = tok[len("custom<"):-1]
            args = self.args()
            anchor = self.peek() == "^"
            if anchor:
                self.take()
            return Directive("custom", args, name, anchor)
        if tok in ("type", "functional-type", "ref", "struct"):
            args = self.args()
            anchor = self.peek() == "^"
            if anchor:
                self.take()
            return Directive(tok, args, anchor=anchor)
        if tok == "oilist":
            self.take("(")
            clauses = []
            while True:
                kw = self.take()
                var = self.take()
                clauses.append((kw[1:-1], var[1:]))
                if self.peek() == "|":
                    self.take()
                    continue
                break
            self.take(")")
            return OIList(tuple(clauses))
        if tok in ("attr-dict", "attr-dict-with-keyword", "operands", "results", "regions", "successors", "params"):
            return Directive(tok)
        if tok == "(":
            then = self.elements(stop=(")",))
            self.take(")")
            else_: list = []
            if self.peek() == ":":
                self.take()
                self.take("(")
                else_ = self.elements(stop=(")",))
                self.take(")")
            self.take("?")
            return OptionalGroup(tuple(then), tuple(else_))
        raise ValueError(f"format: unexpected {tok!r}")


def _first_literal(elems) -> str | None:
    for e in elems:
        if isinstance(e, Literal):
            if e.text.strip():
                return e.text
            continue
        return None
    return None


def _nest_ambiguous_groups(elems: list) -> list:
    """Nest an optional group into the previous one when both start with the same literal.

    MLIR's generated parser tries optional groups in order, so in
    ``(`,` $mask^)? (`,` $pad^)?`` the first comma always belongs to the
    first group: the second group can only follow the first.  An LALR grammar
    needs that made explicit.
    """
    out: list = []
    for e in elems:
        if isinstance(e, OptionalGroup):
            e = OptionalGroup(tuple(_nest_ambiguous_groups(list(e.then))), tuple(_nest_ambiguous_groups(list(e.else_))))
        if (isinstance(e, OptionalGroup) and out and isinstance(out[-1], OptionalGroup)
                and not out[-1].else_ and not e.else_
                and _first_literal(e.then) is not None
                and _first_literal(e.then) == _first_literal(out[-1].then)):
            prev = out.pop()
            out.append(OptionalGroup(prev.then + (e,)))
            continue
        out.append(e)
    return out


_FORMAT_CACHE: dict[str, tuple] = {}


def parse_format(fmt: str) -> tuple:
    """Parse an MLIR declarative assembly format into a tuple of AST elements.

    Raises ``ValueError`` on a malformed format (a bug in the op table).
    """
    cached = _FORMAT_CACHE.get(fmt)
    if cached is None:
        parser = _FormatParser(fmt)
        elems = parser.elements()
        cached = tuple(_nest_ambiguous_groups(elems))
        _FORMAT_CACHE[fmt] = cached
    return cached



def space_before_literal(text: str, last_was_punct: bool) -> bool:
    """Whether a printed format literal ``text`` gets a space before it: mlir-tblgen's
    ``shouldEmitSpaceBefore`` (``mlir/tools/mlir-tblgen/OpFormatGen.cpp``).

    Keywords and ``->`` always do; after punctuation only an opening
    bracket does; otherwise no bracket or comma does.
    """
    if len(text) != 1 and text != "->":
        return True
    if last_was_punct:
        return text[0] not in ">)}],"
    return text[0] not in "<>(){}[],"
