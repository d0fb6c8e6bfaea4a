"""Parse-time rules of core ops: ``entry``'s ``optimization_hints=<...>``, ``assume``'s predicate.

NVIDIA parses ``entry`` with C++ (``EntryOp::parse`` in CudaTile.cpp), which
reads the hints with ``OptimizationHintsAttr::parse`` (Attributes.cpp)::

    '<' '>'  |  '<' KEY '=' ATTRIBUTE (',' KEY '=' ATTRIBUTE)* '>'

KEY is a keyword or a string (``expected valid keyword or string``); each
ATTRIBUTE must be a dictionary (``expected dictionary attribute for
optimization_hints entry `KEY` got value=<attr>``) and keys are unique
(``duplicate optimization_hints key `KEY```), both reported at the token after
the attribute.  The grammar keeps the hints as a balanced token soup; this
module tokenizes that text as MLIR's lexer does and replays the parser
(:class:`HintsParser`).  :func:`optimization_hint_entries` gives the entries of a
built attribute, read once per distinct text, to the verifier
(:mod:`tile_lsp.analysis.verify.rules.core`) and the lowering
(:mod:`tile_lsp.codegen.layouts`).

``assume`` takes a predicate in full (``#cuda_tile.div_by<16>``) or short
(``div_by<16>``) form (``parseAssumePredicate`` in CudaTile.cpp): another
attribute is ``expected assume predicate attribute``, another keyword
``unknown assume predicate attribute: kw (expected 'div_by', 'same_elements',
or 'bounded')``, both at the predicate.

The symbol name errors of ``entry``/``global`` (``expected valid
'@'-identifier for symbol name``) are syntax errors of the grammar, reported
before the builder runs.

:data:`CUDA_TILE_ATTRIBUTE_DECODERS` lists what the builder decodes once when it
builds a ``#cuda_tile.<mnemonic><...>`` attribute (into ``DialectAttr.value``):
the assume predicates, the optimization hints, and the case of an enum attribute
written in generic form (``#cuda_tile.rounding<zero>``: :func:`decode_enum_attribute`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from tile_lsp.dialect.attr_syntax import ENUM_ATTRS
from tile_lsp.dialect.custom_formats import ASSUME_PREDICATE_WORDS, MSG_UNKNOWN_ASSUME_PREDICATE
from tile_lsp.grammar.lexical import BARE_ID, LINE_COMMENT, STRING
from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.syntax.parse_rules import ParseContext, parse_rule
from tile_lsp.analysis.syntax.parse_rules.dense import emit, end_of, offset_range, source_text, start_of

# ---------------------------------------------------------------------------
# A small MLIR lexer and attribute model for the hints text
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<string>""" + STRING + r""")
  | (?P<float>[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?)
  | (?P<int>0x[0-9a-fA-F]+|[0-9]+)
  | (?P<at>@(?:[A-Za-z_$.\-][A-Za-z0-9_$.\-]*|""" + STRING + r"""))
  | (?P<hash>\#[A-Za-z_$.\-][A-Za-z0-9_$.\-]*)
  | (?P<bang>![A-Za-z_$.\-][A-Za-z0-9_$.\-]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_$.]*)
  | (?P<punct>->|::|[<>{}\[\](),=:\-+*?])
  | (?P<other>.)
""", re.X | re.S)


@dataclass
class Tok:
    kind: str  # string, float, int, at, hash, bang, ident, punct, other, eof
    text: str
    start: int  # chunk offset


def tokenize(text: str, base: int) -> list[Tok]:
    """MLIR-like tokens of ``text`` (offsets shifted by ``base``), ending with an ``eof`` token."""
    out: list[Tok] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        if kind == "ws":
            continue
        out.append(Tok(kind, m.group(), base + m.start()))
    out.append(Tok("eof", "", base + len(text)))
    return out


@dataclass
class HAttr:
    """An attribute of the hints text: ``kind`` int, float, bool, string, array, dict, unit,
    symbol, type, opaque; ``value`` the Python value (dict: list of ``(key, HAttr)``)."""

    kind: str
    value: Any
    type: str | None = None
    start: int = 0
    end: int = 0
    entries: list[tuple[str, "HAttr"]] = field(default_factory=list)

    def print(self, elide: bool = False) -> str:
        """MLIR's print of the attribute (``elide``: the type of i64/f64 numbers is left out)."""
        k = self.kind
        if k == "int":
            t = self.type or "i64"
            return str(self.value) if elide and t == "i64" else f"{self.value} : {t}"
        if k == "float":
            t = self.type or "f64"
            body = _float_text(self.value)
            return body if elide and t == "f64" else f"{body} : {t}"
        if k == "bool":
            return "true" if self.value else "false"
        if k == "string":
            s = '"' + self.value + '"'
            return s if self.type is None else f"{s} : {self.type}"
        if k == "array":
            return "[" + ", ".join(e.print(True) for e in self.value) + "]"
        if k == "dict":
            parts = [key if v.kind == "unit" else f"{key} = {v.print(True)}" for key, v in self.entries]
            return "{" + ", ".join(parts) + "}"
        if k == "unit":
            return "unit"
        return str(self.value)


def _float_text(v: float) -> str:
    """MLIR printFloatValue: ``%e`` form when it reads back exactly, else the shortest form."""
    s = f"{v:e}"
    if float(s) == v:
        return s
    return repr(v)


class HintsSyntaxError(Exception):
    """``message`` at chunk offset ``offset``; ``prefix``: reported with ``custom op '<op>'``."""

    def __init__(self, message: str, offset: int, prefix: bool):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.prefix = prefix


_SCALAR_TYPE = re.compile(r"(?:[su]?i[0-9]+|f16|bf16|f32|tf32|f64|f80|f128|index|none|f8E4M3FN|f8E5M2|"
                          r"f8E8M0FNU|f4E2M1FN|f8E4M3|f8E3M4|f6E2M3FN|f6E3M2FN)")


class HintsParser:
    """``OptimizationHintsAttr::parse`` over the tokens of ``<...>``.

    :meth:`parse` returns the entries ``[(key, HAttr, key offset)]`` or raises
    :class:`HintsSyntaxError` with MLIR's message for the first error.
    """

    def __init__(self, tokens: list[Tok]):
        self.toks = tokens
        self.i = 0

    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

    def take(self) -> Tok:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def is_punct(self, p: str) -> bool:
        return self.tok.kind == "punct" and self.tok.text == p

    def expect(self, p: str, message: str | None = None) -> Tok:
        if not self.is_punct(p):
            raise HintsSyntaxError(message or f"expected '{p}'", self.tok.start, False)
        return self.take()

    def key(self, message: str, prefix: bool) -> str:
        """The key the current keyword or string token spells (not taken); else ``message`` is raised."""
        t = self.tok
        if t.kind == "ident":
            return t.text
        if t.kind == "string":
            return _unescape(t.text[1:-1])
        raise HintsSyntaxError(message, t.start, prefix)

    def parse(self) -> list[tuple[str, HAttr, int]]:
        self.expect("<")
        entries: list[tuple[str, HAttr, int]] = []
        if self.is_punct(">"):
            self.take()
            return entries
        while True:
            key_tok = self.tok
            key = self.key("expected valid keyword or string", True)
            self.take()
            self.expect("=")
            value = self.attribute()
            here = self.tok.start
            if any(k == key for k, _, _ in entries):
                raise HintsSyntaxError(f"duplicate optimization_hints key `{key}`", here, True)
            if value.kind != "dict":
                raise HintsSyntaxError(
                    f"expected dictionary attribute for optimization_hints entry `{key}` got value="
                    f"{value.print()}", here, True)
            entries.append((key, value, key_tok.start))
            if self.is_punct(","):
                self.take()
                continue
            break
        self.expect(">")
        return entries

    # -- attributes (MLIR Parser::parseAttribute, the forms hints use) ---------------

    def attribute(self) -> HAttr:
        t = self.tok
        start = t.start
        if t.kind == "punct" and t.text == "{":
            return self.dictionary()
        if t.kind == "punct" and t.text == "[":
            self.take()
            elems: list[HAttr] = []
            if not self.is_punct("]"):
                while True:
                    elems.append(self.attribute())
                    if self.is_punct(","):
                        self.take()
                        continue
                    break
            end = self.expect("]").start + 1
            return HAttr("array", elems, start=start, end=end)
        negative = False
        if t.kind == "punct" and t.text == "-":
            self.take()
            negative = True
            t = self.tok
            if t.kind not in ("int", "float"):
                raise HintsSyntaxError("expected constant integer or floating point value", t.start, False)
        if t.kind == "int":
            self.take()
            value = int(t.text, 0) if t.text.startswith("0x") else int(t.text)
            return self.typed(HAttr("int", -value if negative else value, start=start))
        if t.kind == "float":
            self.take()
            value = float(t.text)
            return self.typed(HAttr("float", -value if negative else value, start=start))
        if t.kind == "string":
            self.take()
            return self.typed(HAttr("string", t.text[1:-1], start=start))
        if t.kind == "ident" and t.text in ("true", "false"):
            self.take()
            return HAttr("bool", t.text == "true", start=start, end=t.start + len(t.text))
        if t.kind == "ident" and t.text == "unit":
            self.take()
            return HAttr("unit", None, start=start, end=t.start + len(t.text))
        if t.kind == "ident" and _SCALAR_TYPE.fullmatch(t.text):
            self.take()
            return HAttr("type", t.text, start=start, end=t.start + len(t.text))
        if t.kind == "at":
            self.take()
            return HAttr("symbol", t.text, start=start, end=t.start + len(t.text))
        if t.kind in ("hash", "bang"):
            self.take()
            text = t.text + self.balanced()
            return HAttr("opaque", text, start=start)
        raise HintsSyntaxError("expected attribute value", t.start, False)

    def typed(self, a: HAttr) -> HAttr:
        """An optional ``: type`` after a number or string."""
        if self.is_punct(":"):
            self.take()
            t = self.tok
            if t.kind == "ident" or t.kind == "bang":
                self.take()
                a.type = t.text + (self.balanced() if t.kind == "bang" else "")
            else:
                raise HintsSyntaxError("expected non-function type", t.start, False)
        return a

    def balanced(self) -> str:
        """The text of an optional ``<...>`` body (dialect attributes and types)."""
        if not self.is_punct("<"):
            return ""
        depth = 0
        parts = []
        while self.tok.kind != "eof":
            t = self.take()
            parts.append(t.text)
            if t.kind == "punct" and t.text == "<":
                depth += 1
            elif t.kind == "punct" and t.text == ">":
                depth -= 1
                if depth == 0:
                    break
        return "".join(parts)

    def dictionary(self) -> HAttr:
        start = self.take().start
        entries: list[tuple[str, HAttr]] = []
        if not self.is_punct("}"):
            while True:
                t = self.tok
                name = self.key("expected attribute name", False)
                if any(k == name for k, _ in entries):
                    raise HintsSyntaxError(f"duplicate key '{name}' in dictionary attribute", t.start, False)
                self.take()
                if self.is_punct("="):
                    self.take()
                    entries.append((name, self.attribute()))
                else:
                    entries.append((name, HAttr("unit", None, start=t.start)))
                if self.is_punct(","):
                    self.take()
                    continue
                break
        end = self.expect("}", "expected '}' in attribute dictionary").start + 1
        return HAttr("dict", None, start=start, end=end, entries=entries)


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


def hints_tokens(ctx: ParseContext, node: Any) -> list[Tok] | None:
    """Tokens of the ``<...>`` of an ``opt_hints`` subtree (``None`` when unavailable)."""
    body = node.children[0] if getattr(node, "children", None) else None
    text = source_text(ctx)
    start, end = start_of(body), end_of(body)
    if text is None or start is None or end is None:
        return None
    return tokenize(text[start:end], start)


def check_optimization_hints(ctx: ParseContext, node: Any) -> None:
    """Replay ``OptimizationHintsAttr::parse`` on an ``opt_hints`` subtree; report the first error.

    Source: NVIDIA Attributes.cpp OptimizationHintsAttr::parse (called from
    EntryOp::parse, LoadViewTkoOp/StoreViewTkoOp parsers).
    """
    if node is None:
        return
    decoded = ctx.props.get("optimization_hints")
    if isinstance(decoded, A.DialectAttr) and decoded.value is not None:
        return  # the builder decoded it: the same parser found no error
    tokens = hints_tokens(ctx, node)
    if tokens is None:
        return
    try:
        HintsParser(tokens).parse()
    except HintsSyntaxError as err:
        emit(ctx, err.message, offset_range(ctx, err.offset), prefix=err.prefix)


@parse_rule("entry")
def entry_optimization_hints(ctx: ParseContext) -> None:
    """``entry ... optimization_hints=<...>`` (NVIDIA CudaTile.cpp EntryOp::parse)."""
    check_optimization_hints(ctx, ctx.nodes.get("optimization_hints"))


# ---------------------------------------------------------------------------
# assume
# ---------------------------------------------------------------------------

ASSUME_PREDICATES = ASSUME_PREDICATE_WORDS
#: cuda_tile attributes that parse in attribute position but are not assume predicates
OTHER_CUDA_TILE_ATTRIBUTES = frozenset({"signedness", "overflow", "rounding", "comparison_ordering",
                                        "comparison_predicate", "optimization_hints", "padding_value",
                                        "symbol_visibility", "di_loc", "memory_scope",
                                        "memory_ordering_semantics", "atomic_rmw_mode"})


#: an integer as MLIR's lexer reads it: decimal (leading zeros allowed) or ``0x`` hexadecimal
_INT = r"-?(?:0x[0-9a-fA-F]+|[0-9]+)"
_DIV_BY = re.compile(rf"\s*({_INT})\s*(?:,\s*every\s+(-?[0-9]+)\s+along\s+(-?[0-9]+)\s*)?")
_BOUNDED = re.compile(r"\s*(-?[0-9]+|\?)\s*,\s*(-?[0-9]+|\?)\s*")


def mlir_int(spelling: str) -> int:
    """The value of an integer token: ``0x`` hexadecimal, else decimal (``08`` is 8, as MLIR reads it)."""
    negative = spelling.startswith("-")
    digits = spelling[1:] if negative else spelling
    value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 10)
    return -value if negative else value


def decode_assume_predicate(mnemonic: str, body: str) -> A.DivBy | A.Bounded | A.SameElements | None:
    """The typed value of the assume predicate ``#cuda_tile.<mnemonic><body>`` (``body`` without
    the angle brackets), or ``None`` when it is not one or does not read as one.

    Source: NVIDIA Attributes.cpp ``DivByAttr::parse`` (the divisor read as an unsigned 64-bit
    integer), ``BoundedAttr::parse`` (``?`` for an open bound), ``SameElementsAttr::parse``.
    """
    if mnemonic == "div_by":
        m = _DIV_BY.fullmatch(body)
        if m is None:
            return None
        every = int(m.group(2)) if m.group(2) is not None else None
        along = int(m.group(3)) if m.group(3) is not None else None
        return A.DivBy(mlir_int(m.group(1)) & ((1 << 64) - 1), every, along)
    if mnemonic == "bounded":
        m = _BOUNDED.fullmatch(body)
        if m is None:
            return None
        lb, ub = (None if g == "?" else int(g) for g in m.groups())
        return A.Bounded(lb, ub)
    if mnemonic == "same_elements":
        return A.SameElements(tuple(mlir_int(x) for x in re.findall(_INT, body)))
    return None


def assume_predicate_value(attr: A.DialectAttr) -> A.DivBy | A.Bounded | A.SameElements | None:
    """The typed value of the assume predicate ``attr``: the builder's (``DialectAttr.value``),
    else decoded from its body (an attribute made elsewhere); ``None`` when it does not read as one."""
    if attr.value is not None:
        return attr.value
    return decode_assume_predicate(attr.mnemonic, attr.body or "")


#: The body of an enum attribute: one keyword or string between blanks (MLIR's lexer skips
#: whitespace and ``//`` comments).
_ENUM_BODY = re.compile(rf"(?:\s+|{LINE_COMMENT})*({BARE_ID}|{STRING})(?:\s+|{LINE_COMMENT})*")


def decode_enum_attribute(mnemonic: str, body: str) -> A.EnumAttr | None:
    """The case of the enum attribute ``#cuda_tile.<mnemonic><body>`` (``body`` without the angle
    brackets), e.g. ``rounding`` and ``" zero "`` -> ``EnumAttr("RoundingMode", "zero", "rounding")``;
    ``None`` when ``mnemonic`` names no enum attribute or the body names none of its cases (the
    parser reports that: :func:`tile_lsp.dialect.attr_syntax.attribute_issues`).

    Source: NVIDIA AttrDefs.td ``CudaTileEnumAttr`` (format ``<$value>``), whose generated
    ``FieldParser`` reads the case as a keyword or a string.
    """
    enum = ENUM_ATTRS.get(mnemonic)
    m = _ENUM_BODY.fullmatch(body) if enum is not None else None
    if m is None:
        return None
    word = m.group(1)
    case = word[1:-1] if word.startswith('"') else word
    return A.EnumAttr(enum.name, case, mnemonic) if enum.case(case) is not None else None


#: The decoders of the cuda_tile attributes the builder decodes when it builds them
#: (``DialectAttr.value``): mnemonic -> ``decode(body)``.
CUDA_TILE_ATTRIBUTE_DECODERS = {
    **{word: functools.partial(decode_assume_predicate, word) for word in ASSUME_PREDICATE_WORDS},
    **{mnemonic: functools.partial(decode_enum_attribute, mnemonic) for mnemonic in ENUM_ATTRS},
    "optimization_hints": lambda body: decode_optimization_hints(body),
}


@parse_rule("assume")
def assume_predicate_syntax(ctx: ParseContext) -> None:
    """``assume PRED, %v : T`` (NVIDIA CudaTile.cpp parseAssumePredicate)."""
    node = ctx.nodes.get("predicate")
    children = getattr(node, "children", None)
    if not children:
        return
    first = children[0]
    loc = offset_range(ctx, start_of(node)) if start_of(node) is not None else None
    if getattr(first, "type", None) == "BARE_ID":
        if str(first) not in ASSUME_PREDICATES:
            emit(ctx, MSG_UNKNOWN_ASSUME_PREDICATE.format(word=first), loc)
        return
    attr = ctx.props.get("predicate")
    if isinstance(attr, A.AliasAttr):
        if attr.target is None:
            return  # an undefined alias: reported elsewhere
        attr = attr.target
    if attr is None:
        return
    if not isinstance(attr, A.DialectAttr) or attr.dialect != "cuda_tile" \
            or attr.mnemonic in OTHER_CUDA_TILE_ATTRIBUTES:
        emit(ctx, "expected assume predicate attribute", loc)


def optimization_hint_entries(attr: A.Attribute | None) -> list[tuple[str, HAttr]] | None:
    """The entries ``[(key, value)]`` of an ``optimization_hints`` attribute (``sm_90 = {...}``), or
    ``None`` when there is none or it does not parse (the parse rule reported that).

    The builder decodes the attributes it builds once (:func:`decode_optimization_hints`, kept in
    ``DialectAttr.value``), and the bytecode reader gives its own the entries it read; others
    (made elsewhere) are decoded here.  The result is shared between the attributes of the same
    text: treat it as read-only."""
    if attr is None:
        return None
    if isinstance(attr, A.DialectAttr) and attr.mnemonic == "optimization_hints" and attr.value is not None:
        return attr.value  # (another attribute's value is no hints: an assume predicate, an enum case)
    if isinstance(attr, A.DialectAttr):
        text = "<" + (attr.body or "") + ">"
    else:
        text = str(attr)
        if text.startswith("#cuda_tile.optimization_hints"):
            text = text[len("#cuda_tile.optimization_hints"):]
    return _hint_entries(text)


def decode_optimization_hints(body: str) -> list[tuple[str, HAttr]] | None:
    """The entries of the ``optimization_hints`` attribute whose text between ``<`` and ``>`` is
    ``body``; ``None`` when it does not parse (NVIDIA Attributes.cpp
    ``OptimizationHintsAttr::parse``, replayed by :class:`HintsParser`)."""
    return _hint_entries("<" + body + ">")


@functools.lru_cache(maxsize=256)
def _hint_entries(text: str) -> list[tuple[str, HAttr]] | None:
    try:
        return [(k, v) for k, v, _ in HintsParser(tokenize(text, 0)).parse()]
    except HintsSyntaxError:
        return None
