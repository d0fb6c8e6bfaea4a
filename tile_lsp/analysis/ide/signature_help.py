"""Signature help (LSP ``textDocument/signatureHelp``), in analysis terms.

Feature: signature help - ``textDocument/signatureHelp``; VS Code: the parameter pop-up while
writing an op.

For the op being written at the cursor, :func:`signature_help` gives its
signature and the parameter (operand, attribute or type slot) the cursor is
in.  It reads only the current text, so it works while the line does not
parse yet.

**The signature** (:func:`op_signature`) is rendered from the op table: the
op's assembly format (``OpDef.format``, the declarative format of ODS or
tile-lsp's own for ops NVIDIA parses in C++, ``custom_formats.py``), with

* operands as ``%name`` (variadic ``%name...``), attributes as their name
  (``<name>`` for enums printed in angle brackets, ``@name`` for symbols),
  types as ``type(name)``, regions as ``{...}``;
* optional groups in square brackets (``[, %mask]``, ``[flush_to_zero]``);
* the format's literals spaced as MLIR's generated printer spaces them
  (``shouldEmitSpaceBefore`` of mlir-tblgen's ``OpFormatGen.cpp``);
* each ``custom<X>`` directive expanded as its ``signature`` says
  (:data:`tile_lsp.analysis.ir.directives.DIRECTIVES`);
* the results in front (``%result = ``); ``attr-dict`` left out.

Ops without a custom form (most nv_tileas ops) get their generic form,
``"nv_tileas.copy"(%src, %dst) <{attr, ...}> : (...) -> (...)``.  Each
parameter's documentation is the op table's (:func:`tile_lsp.analysis.ide.opdocs.op_doc`):
kind, constraint summary, default, one-line doc.

**The active parameter** comes from walking the format over the tokens
written between the op name and the cursor, as MLIR's generated parser
would: literals must match, an optional group is entered when its first
element matches the next token, operands take ``%`` values, attributes a
term, types a type.  The cursor's slot is the element that consumed the
token the cursor touches (a word being typed), else the first element with
a parameter that would take the next token.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from tile_lsp.analysis.ir.diagnostics import Position
from tile_lsp.analysis.ide.opdocs import ArgDoc, op_doc
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.registry import lookup
from tile_lsp.dialect.schema import OpDef
from tile_lsp.analysis.ir.directives import DIRECTIVES
from tile_lsp.dialect.assembly_format import (
    Directive,
    Literal,
    OIList,
    OptionalGroup,
    Var,
    parse_format,
    space_before_literal,
)
from tile_lsp.grammar.formats import ANGLE_ENUMS
from tile_lsp.grammar.lexical import STRING, comment_start

#: Lines searched upwards from the cursor for the start of the op.
MAX_OP_LINES = 12


@dataclass(frozen=True)
class Parameter:
    """One slot of a signature.

    ``name``: the operand or attribute name, or ``type(x)`` for the type of
    operand/result ``x``.  ``label``: ``(start, end)`` offsets of the slot in
    :attr:`Signature.label` (the label is ASCII, so these are UTF-16 offsets
    too).  ``doc``: Markdown documentation from the op table.
    """

    name: str
    label: tuple[int, int]
    doc: str


@dataclass(frozen=True)
class Signature:
    """The signature of one op: ``label`` (one line), ``doc`` (Markdown), ``parameters`` in label order."""

    op: str
    label: str
    doc: str
    parameters: tuple[Parameter, ...]

    def index(self, name: str | None) -> int | None:
        """Index of the parameter called ``name``; ``None`` when there is none."""
        return next((i for i, p in enumerate(self.parameters) if p.name == name), None)


@dataclass(frozen=True)
class SignatureHelp:
    """The answer at a position: the op's signature and the index of the active parameter (or ``None``)."""

    signature: Signature
    active_parameter: int | None


# ---------------------------------------------------------------------------
# Signature nodes: the format with custom directives expanded
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Lit:
    text: str
    param: str | None = None  # a keyword literal belongs to the slot it introduces


@dataclass(frozen=True)
class _Space:
    text: str  # "" (no space) or " "


@dataclass(frozen=True)
class _Operand:
    name: str
    kind: str


@dataclass(frozen=True)
class _Attr:
    name: str
    kind: str
    angle: bool  # printed as `<case>`


@dataclass(frozen=True)
class _Type:
    of: str
    variadic: bool

    @property
    def param(self) -> str:
        return f"type({self.of})"


@dataclass(frozen=True)
class _Region:
    name: str


@dataclass(frozen=True)
class _AttrDict:
    keyword: bool


@dataclass(frozen=True)
class _Placeholder:
    name: str  # a value written here that is not an operand (`%iv`)


@dataclass(frozen=True)
class _Skip:
    name: str  # anything up to the next literal (`$_types`)


@dataclass(frozen=True)
class _Whole:
    param: str
    display: str
    nodes: tuple  # how to match it


# An optional group is the format's OptionalGroup over signature nodes, and an oilist the format's
# OIList whose clauses are (keyword, attr name, attr kind).


def _node_param(node) -> str | None:
    if isinstance(node, _Lit):
        return node.param
    if isinstance(node, (_Operand, _Attr)):
        return node.name
    if isinstance(node, _Type):
        return node.param
    if isinstance(node, _Whole):
        return node.param
    if isinstance(node, OptionalGroup):
        return _first_param([node.then])
    if isinstance(node, OIList):
        return node.clauses[0][1] if node.clauses else None
    return None


def _first_param(seqs) -> str | None:
    for seq in seqs:
        for node in seq:
            p = _node_param(node)
            if p is not None:
                return p
    return None


def _arg_text(e) -> str:
    if isinstance(e, Var):
        return "$" + e.name
    if isinstance(e, Directive) and e.name == "type" and e.args:
        return f"type({_arg_text(e.args[0])})"
    if isinstance(e, Directive) and e.name in ("operands", "results"):
        return e.name
    raise ValueError(f"unsupported directive argument {e!r}")


class _Converter:
    """Format AST of one op -> signature nodes."""

    def __init__(self, op: OpDef):
        self.op = op

    def seq(self, elems, in_custom: bool = False) -> tuple:
        out = [self.element(e, in_custom) for e in elems]
        flat: list = []
        for x in out:
            if isinstance(x, tuple):
                flat.extend(x)
            elif x is not None:
                flat.append(x)
        return self._keywords(tuple(flat))

    @staticmethod
    def _keywords(nodes: tuple) -> tuple:
        """Give a keyword literal (``num_elem`` of ``num_elem = $n``) the slot of the value after it."""
        out = list(nodes)
        for k, node in enumerate(out):
            if not (isinstance(node, _Lit) and node.param is None and node.text[:1].isalpha()):
                continue
            j = k + 1
            while j < len(out) and (isinstance(out[j], _Space) or (isinstance(out[j], _Lit) and out[j].text in ("=", "<"))):
                j += 1
            if j < len(out):
                p = _node_param(out[j]) if not isinstance(out[j], (_Lit, OptionalGroup, OIList)) else None
                if p is not None:
                    out[k] = _Lit(node.text, p)
                    for m in range(k + 1, j):
                        if isinstance(out[m], _Lit):
                            out[m] = _Lit(out[m].text, p)
                    if "<" in [x.text for x in out[k + 1:j] if isinstance(x, _Lit)] and j + 1 < len(out) \
                            and isinstance(out[j + 1], _Lit) and out[j + 1].text == ">":
                        out[j + 1] = _Lit(">", p)
        return tuple(out)

    def var(self, name: str, in_custom: bool):
        op = self.op
        operand = op.operand(name)
        if operand is not None:
            return _Operand(name, operand.kind)
        attr = op.attribute(name)
        if attr is not None:
            angle = attr.kind.startswith("enum:") and attr.kind[5:] in ANGLE_ENUMS and not in_custom
            return _Attr(name, attr.kind, angle)
        if any(r.name == name for r in op.regions):
            return _Region(name)
        if name.startswith("_"):
            return _Skip(name[1:])
        return _Placeholder(name)

    def type_of(self, arg) -> _Type | None:
        inner = arg.args[0] if isinstance(arg, Directive) and arg.args else None
        if isinstance(inner, Var):
            entity = self.op.operand(inner.name) or self.op.result(inner.name)
            return _Type(inner.name, entity is not None and entity.kind == "variadic")
        if isinstance(inner, Directive) and inner.name in ("operands", "results"):
            return _Type(inner.name, True)
        return None

    def element(self, e, in_custom: bool = False):
        if isinstance(e, Literal):
            return _Space(e.text) if not e.text.strip() else _Lit(e.text.strip())
        if isinstance(e, Var):
            return self.var(e.name, in_custom)
        if isinstance(e, Directive):
            if e.name in ("attr-dict", "attr-dict-with-keyword"):
                return _AttrDict(e.name == "attr-dict-with-keyword")
            if e.name == "type":
                return self.type_of(e)
            if e.name == "functional-type":
                return tuple(t for t in (self.type_of(Directive("type", (a,))) for a in e.args) if t)
            if e.name == "custom":
                return self.custom(e)
            if e.name == "operands":
                nodes: list = []
                for o in self.op.operands:
                    if nodes:
                        nodes.append(_Lit(","))
                    nodes.append(_Operand(o.name, o.kind))
                return tuple(nodes)
            return None
        if isinstance(e, OptionalGroup):
            return OptionalGroup(self.seq(e.then, in_custom), self.seq(e.else_, in_custom))
        if isinstance(e, OIList):
            clauses = []
            for kw, name in e.clauses:
                attr = self.op.attribute(name)
                clauses.append((kw, name, attr.kind if attr else "unit"))
            return OIList(tuple(clauses))
        return None

    def custom(self, e: Directive):
        directive = DIRECTIVES.get(e.custom)
        if directive is None:
            return tuple(x for x in (self.element(a, True) for a in e.args) if x is not None)
        args = [_arg_text(a) for a in e.args]
        nodes = self.seq(parse_format(directive.signature.format(*args)), in_custom=True)
        if directive.whole and e.args and isinstance(e.args[0], Var):
            return _Whole(e.args[0].name, _render(nodes)[0], nodes)
        return nodes


# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------


def _display(node) -> str:
    if isinstance(node, _Operand):
        return f"%{node.name}..." if node.kind == "variadic" else f"%{node.name}"
    if isinstance(node, _Attr):
        if node.kind == "unit":
            return ""
        if node.angle:
            return f"<{node.name}>"
        if node.kind in ("symbol_name", "symbol_ref"):
            return f"@{node.name}"
        if node.kind == "string":
            return f'"{node.name}"'
        return node.name
    if isinstance(node, _Type):
        return node.param
    if isinstance(node, _Region):
        return "{...}"
    if isinstance(node, _Placeholder):
        return f"%{node.name}"
    if isinstance(node, _Skip):
        return f"{node.name}..."
    if isinstance(node, _Whole):
        return node.display
    return ""


class _Renderer:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.spans: dict[str, list[int]] = {}
        self.order: list[str] = []
        self.space = False
        self.force = False  # a ` ` literal: a space whatever follows
        self.last_punct = False

    @property
    def pos(self) -> int:
        return sum(len(s) for s in self.out)

    def emit(self, text: str, param: str | None, space: bool) -> None:
        if not text:
            return
        if space and self.out:
            self.out.append(" ")
        start = self.pos
        self.out.append(text)
        if param is not None:
            if param not in self.spans:
                self.spans[param] = [start, start + len(text)]
                self.order.append(param)
            else:
                span = self.spans[param]
                span[0], span[1] = min(span[0], start), max(span[1], start + len(text))

    def seq(self, nodes) -> None:
        for node in nodes:
            self.node(node)

    def node(self, node) -> None:
        if isinstance(node, _Space):
            self.space = self.force = bool(node.text)
            return
        if isinstance(node, _Lit):
            self.emit(node.text, node.param, self.force or (self.space and space_before_literal(node.text, self.last_punct)))
            self.force = False
            self.space = len(node.text) != 1 or node.text[0] not in "<({["
            self.last_punct = not (node.text[0] == "_" or node.text[0].isalpha())
            return
        if isinstance(node, _AttrDict):
            return
        if isinstance(node, OptionalGroup):
            first = next((n for n in node.then if not isinstance(n, _Space)), None)
            comma = isinstance(first, _Lit) and first.text == ","
            self.emit("[", None, self.space and not comma)
            self.space, self.last_punct = False, True
            self.seq(node.then)
            self.emit("]", None, False)
            self.space, self.last_punct = True, False
            return
        if isinstance(node, OIList):
            for kw, name, kind in node.clauses:
                self.emit("[", None, self.space)
                self.emit(kw, name, False)
                if kind != "unit":
                    self.emit(name, name, True)
                self.emit("]", None, False)
                self.space = True
            self.last_punct = False
            return
        text = _display(node)
        if not text:
            return
        space = self.space and not (isinstance(node, _Whole) and text.startswith("("))
        self.emit(text, _node_param(node) if not isinstance(node, (_Region, _Placeholder, _Skip)) else None, space)
        self.space, self.last_punct = True, False


def _render(nodes) -> tuple[str, dict[str, list[int]], list[str]]:
    r = _Renderer()
    r.seq(nodes)
    return "".join(r.out), r.spans, r.order


def _md_escape_free(text: str) -> str:
    return text.replace("\n", " ").strip()


def _arg_markdown(arg: ArgDoc, what: str, op_since: str) -> str:
    notes = [what]
    if what != "attribute" and arg.kind != "single":
        notes.append(arg.kind)
    if what == "attribute" and arg.optional:
        notes.append("optional")
    if arg.default is not None:
        notes.append(f"default `{arg.default}`")
    if arg.since != op_since:
        notes.append(f"since {arg.since}")
    text = f"`{arg.name}` ({', '.join(notes)}): {arg.constraint}."
    if arg.doc:
        text += " " + _md_escape_free(arg.doc)
    return text


def _param_docs(op: OpDef) -> dict[str, str]:
    doc = op_doc(op.full_name)
    out: dict[str, str] = {}
    if doc is None:
        return out
    for a in doc.operands:
        out[a.name] = _arg_markdown(a, "operand", doc.since)
        out[f"type({a.name})"] = f"Type of operand `{a.name}`: {a.constraint}."
    for a in doc.results:
        out[f"type({a.name})"] = f"Type of result `{a.name}`: {a.constraint}."
    for a in doc.attributes:
        out[a.name] = _arg_markdown(a, "attribute", doc.since)
    return out


def _results_prefix(op: OpDef) -> str:
    if not op.results:
        return ""
    names = [f"%{r.name}..." if r.kind == "variadic" else f"%{r.name}" for r in op.results]
    return ", ".join(names) + " = "


def _generic_nodes(op: OpDef) -> tuple:
    nodes: list = [_Lit("(")]
    for k, o in enumerate(op.operands):
        if k:
            nodes.append(_Lit(","))
        nodes.append(_Operand(o.name, o.kind))
    nodes.append(_Lit(")"))
    if op.attributes:
        nodes += [_Lit("<"), _Lit("{")]
        for k, a in enumerate(op.attributes):
            if k:
                nodes.append(_Lit(","))
            nodes.append(_Attr(a.name, "attr", False))
        nodes += [_Lit("}"), _Lit(">")]
    return tuple(nodes)


@functools.cache
def _nodes_of(name: str) -> tuple[tuple, bool] | None:
    op = lookup(name)
    if op is None:
        return None
    if op.format:
        try:
            return _Converter(op).seq(parse_format(op.format)), True
        except (ValueError, IndexError, KeyError):
            pass
    return _generic_nodes(op), False


@functools.cache
def op_signature(name: str) -> Signature | None:
    """The signature of op ``name`` (with or without the ``cuda_tile.`` prefix); ``None`` if unknown.

    The custom form when the op has an assembly format (label such as
    ``%result = cuda_tile.addf %lhs, %rhs [rounding<rounding_mode>] [flush_to_zero] : type(result)``),
    else the generic form.  Parameters are in label order.
    """
    op = lookup(name)
    found = _nodes_of(name)
    if op is None or found is None:
        return None
    nodes, custom = found
    body, spans, order = _render(nodes)
    if custom:
        head = _results_prefix(op) + op.full_name + (" " if body else "")
    else:
        head = _results_prefix(op) + f'"{op.full_name}"'
    label = head + body
    docs = _param_docs(op)
    params = tuple(Parameter(p, (spans[p][0] + len(head), spans[p][1] + len(head)), docs.get(p, f"`{p}`"))
                   for p in order)
    summary = f"**{op.full_name}** (since {op.since}): {op.summary}"
    return Signature(op.full_name, label, summary, params)


# ---------------------------------------------------------------------------
# Tokens of the text being typed
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"""
  (?P<ws>\s+)
| (?P<string>""" + STRING + r"""?)
| (?P<value>%[A-Za-z0-9_$.\-]*(?:[#:][0-9]*)?)
| (?P<symbol>@(?:"[^"\n]*"?|[A-Za-z0-9_$.\-]*))
| (?P<label>\^[A-Za-z0-9_$.\-]*)
| (?P<arrow>->)
| (?P<number>-?(?:0x[0-9A-Fa-f]+|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?))
| (?P<ident>[!#]?[A-Za-z_][A-Za-z0-9_$.]*)
| (?P<open>[<\[({])
| (?P<close>[>\])}])
| (?P<punct>.)
""", re.VERBOSE | re.DOTALL)

_PAIRS = {"<": ">", "[": "]", "(": ")", "{": "}"}


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    start: int
    end: int


def _tokenize(text: str) -> list[_Tok]:
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "punct"
        if kind != "ws":
            out.append(_Tok(kind, m.group(), m.start(), m.end()))
    return out


def _strip_comment(line: str) -> str:
    """``line`` without its ``//`` comment (strings are respected)."""
    start = comment_start(line)
    return line if start is None else line[:start]


# ---------------------------------------------------------------------------
# Walking the format over the tokens
# ---------------------------------------------------------------------------


class _Stop(Exception):
    """The walk ends: ``param`` is the slot the next token would go to; ``partial``: inside a ``$_skip``."""

    def __init__(self, param: str | None, partial: bool = False):
        self.param = param
        self.partial = partial


class _InRegion(Exception):
    pass


class _Walker:
    """Matches signature nodes against tokens, as MLIR's generated parser reads them."""

    def __init__(self, toks: list[_Tok], cursor: int):
        self.toks = toks
        self.n = len(toks)
        self.i = 0
        self.cursor = cursor
        self.owner: dict[int, str | None] = {}

    # -- token helpers -------------------------------------------------------

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < self.n else None

    def is_typing(self, k: int) -> bool:
        """Token ``k`` is the last one and touches the cursor: a word being typed."""
        return k == self.n - 1 and self.toks[k].end == self.cursor

    def take(self, param: str | None, count: int = 1) -> None:
        for _ in range(count):
            self.owner[self.i] = param
            self.i += 1

    def group_end(self, k: int) -> int:
        """Index after the group opened at token ``k`` (``n`` when it is not closed)."""
        return self.group(k)[0]

    def group(self, k: int) -> tuple[int, bool]:
        """``(index after the group opened at token k, whether it is closed)``."""
        depth = 0
        for j in range(k, self.n):
            t = self.toks[j]
            if t.kind == "open":
                depth += 1
            elif t.kind == "close":
                depth -= 1
                if depth == 0:
                    return j + 1, True
        return self.n, False

    def take_group(self, param: str | None) -> None:
        end = self.group_end(self.i)
        self.take(param, end - self.i)

    def adjacent_open(self, k: int, text: str = "<") -> bool:
        return k < self.n and self.toks[k].text == text and k > 0 and self.toks[k - 1].end == self.toks[k].start

    def term_end(self, k: int) -> int | None:
        """End of one attribute value or type starting at token ``k``; ``None`` if none starts there."""
        if k >= self.n:
            return None
        t = self.toks[k]
        if t.kind == "open":
            return self.group_end_from(k)
        if t.kind in ("ident", "number", "string", "symbol"):
            j = k + 1
            if self.adjacent_open(j):
                j = self.group_end_from(j)
            return j
        return None

    def group_end_from(self, k: int) -> int:
        save = self.i
        self.i = k
        end = self.group_end(k)
        self.i = save
        return end

    def type_end(self, k: int) -> int | None:
        if k >= self.n:
            return None
        t = self.toks[k]
        if t.text == "(":
            j = self.group_end_from(k)
            if j < self.n and self.toks[j].kind == "arrow":
                return self.type_end(j + 1) or self.n
            return j
        if t.kind == "ident":
            return self.term_end(k)
        return None

    # -- matching ------------------------------------------------------------

    def need(self, rest) -> _Tok:
        t = self.peek()
        if t is None:
            raise _Stop(_first_param(rest))
        return t

    def lit_matches(self, text: str) -> bool | None:
        """True: the next token is the literal; None: it is a prefix being typed; False otherwise."""
        t = self.peek()
        if t is None:
            return False
        if t.text == text:
            return True
        if text[:1].isalpha() and t.kind == "ident" and text.startswith(t.text) and self.is_typing(self.i):
            return None
        return False

    def starts(self, nodes) -> bool | None:
        """Whether the next token starts ``nodes`` (an optional group's body)."""
        first = next((x for x in nodes if not isinstance(x, _Space)), None)
        t = self.peek()
        if first is None or t is None:
            return False
        if isinstance(first, _Lit):
            return self.lit_matches(first.text)
        if isinstance(first, (_Operand, _Placeholder)):
            return t.kind == "value"
        if isinstance(first, _Attr):
            if first.kind.startswith("enum:"):
                if first.angle:
                    return t.text == "<"
                enum = ENUMS.get(first.kind[5:])
                cases = enum.spellings if enum else ()
                if t.kind == "ident" and t.text in cases:
                    return True
                if t.kind == "ident" and self.is_typing(self.i) and any(c.startswith(t.text) for c in cases):
                    return None
                return False
            if first.kind in ("symbol_name", "symbol_ref"):
                return t.kind == "symbol"
            return self.term_end(self.i) is not None and t.kind != "value"
        if isinstance(first, _Type):
            return self.type_end(self.i) is not None
        if isinstance(first, _Region):
            return t.text == "{"
        return False

    def seq(self, nodes, cont: tuple) -> None:
        for k, node in enumerate(nodes):
            self.node(node, (nodes[k:],) + cont, (nodes[k + 1:],) + cont)

    def node(self, node, here: tuple, after: tuple) -> None:
        if isinstance(node, _Space):
            return
        if isinstance(node, _Lit):
            self.need(here)
            ok = self.lit_matches(node.text)
            if ok is None:
                self.take(node.param)
                raise _Stop(node.param or _first_param(after))
            if not ok:
                raise _Stop(node.param or _first_param(after))
            self.take(node.param)
            return
        if isinstance(node, OptionalGroup):
            if self.peek() is None:
                raise _Stop(_first_param(here))
            ok = self.starts(node.then)
            if ok is None:
                self.take(_node_param(node))
                raise _Stop(_node_param(node))
            if ok:
                self.seq(node.then, after)
            elif node.else_:
                self.seq(node.else_, after)
            return
        if isinstance(node, OIList):
            used: set[str] = set()
            while True:
                t = self.peek()
                if t is None:
                    unused = next((c[1] for c in node.clauses if c[1] not in used), None)
                    raise _Stop(unused or _first_param(after))
                clause = next((c for c in node.clauses if c[0] == t.text), None)
                if clause is None and t.kind == "ident" and self.is_typing(self.i):
                    clause = next((c for c in node.clauses if c[0].startswith(t.text)), None)
                    if clause is not None:
                        self.take(clause[1])
                        raise _Stop(clause[1])
                if clause is None:
                    return
                used.add(clause[1])
                self.take(clause[1])
                if clause[2] != "unit":
                    end = self.term_end(self.i)
                    if end is None:
                        raise _Stop(clause[1])
                    self.take(clause[1], end - self.i)
        if isinstance(node, _AttrDict):
            t = self.peek()
            if t is None:
                return
            if node.keyword and t.text == "attributes":
                self.take(None)
                t = self.need(after)
            if t.text == "{":
                self.take_group(None)
            return
        if isinstance(node, _Region):
            t = self.need(here)
            if t.text != "{":
                raise _Stop(_first_param(after))
            end, closed = self.group(self.i)
            if not closed:
                raise _InRegion()
            self.take(None, end - self.i)
            return
        if isinstance(node, _Whole):
            self.need(here)
            start = self.i
            try:
                self.seq(node.nodes, ())
            except _Stop as stop:
                for k in range(start, self.i):
                    self.owner[k] = node.param
                if stop.param is None and not stop.partial:  # it ended at an optional part
                    raise _Stop(_first_param(after)) from None
                raise _Stop(node.param) from None
            for k in range(start, self.i):
                self.owner[k] = node.param
            return
        t = self.need(here)
        param = _node_param(node)
        if isinstance(node, (_Operand, _Placeholder)):
            if t.kind != "value":
                if isinstance(node, _Operand) and node.kind != "single":
                    return  # an empty list
                raise _Stop(param or _first_param(after))
            self.take(param)
            if isinstance(node, _Operand) and node.kind == "variadic" or isinstance(node, _Placeholder):
                self.value_list(param)
            return
        if isinstance(node, _Attr):
            if node.kind == "unit":
                return
            if node.angle:
                if t.text != "<":
                    raise _Stop(param)
                self.take_group(param)
                return
            end = self.term_end(self.i)
            if end is None:
                raise _Stop(param)
            self.take(param, end - self.i)
            return
        if isinstance(node, _Type):
            end = self.type_end(self.i)
            if end is None:
                raise _Stop(param)
            self.take(param, end - self.i)
            while node.variadic and self.peek() is not None and self.peek().text == ",":
                nxt = self.type_end(self.i + 1)
                if nxt is None:
                    if self.i + 1 >= self.n:  # `T1, ` typing the next type
                        self.take(param)
                        raise _Stop(param)
                    return
                self.take(param, nxt - self.i)
            return
        if isinstance(node, _Skip):
            stop = next((x.text for seq in after for x in seq if isinstance(x, _Lit)), None)
            depth = 0
            while True:
                if self.peek() is None:
                    raise _Stop(None, partial=True)
                t = self.peek()
                if depth == 0 and t.text == stop:
                    return
                if t.kind == "open":
                    depth += 1
                elif t.kind == "close":
                    if depth == 0:
                        return
                    depth -= 1
                self.take(None)
            return

    def value_list(self, param: str | None) -> None:
        """The rest of a value list: ``(= %v)? (, %v (= %v)?)*`` (``iter_values`` pairs included)."""
        while self.peek() is not None:
            t = self.peek()
            if t.text == "=" and self.i + 1 < self.n and self.toks[self.i + 1].kind == "value" or t.text == "," and self.i + 1 < self.n and self.toks[self.i + 1].kind == "value":
                self.take(param, 2)
            elif t.text in ("=", ",") and self.i + 1 == self.n:
                self.take(param)
                raise _Stop(param)
            else:
                return


def _active(nodes: tuple, text: str) -> str | None:
    """Name of the active parameter for the op text ``text`` written after the op name (cursor at its end).

    Raises :class:`_InRegion` when the cursor is inside one of the op's regions.
    """
    toks = _tokenize(text)
    walker = _Walker(toks, len(text))
    stopped: str | None = None
    done = False
    try:
        walker.seq(nodes, ())
        done = True
    except _Stop as stop:
        stopped = stop.param
    if toks and toks[-1].end == len(text):
        owner = walker.owner.get(len(toks) - 1)
        if owner is not None:
            return owner
    return None if done else stopped


def _active_generic(op: OpDef, text: str) -> str | None:
    """The active parameter of a generic op ``"name"(...)`` written as ``text`` (after the quoted name).

    Inside the operand list: the operand at the comma count (a variadic
    operand takes the surplus); inside ``<{...}>`` or ``{...}``: the
    attribute whose name is being written.
    """
    depth = 0
    section: str | None = None
    inner = 0
    commas = 0
    last_sep = 0
    for i, c in enumerate(text):
        if c == ">" and i > 0 and text[i - 1] == "-":
            continue
        if c in "([{<":
            depth += 1
            if section is None and depth == 1 and c == "(":
                section, inner, commas, last_sep = "operands", depth, 0, i + 1
            elif section in (None, "closed") and c == "{" and (depth == 1 or (depth == 2 and text[i - 1] == "<")):
                section, inner, commas, last_sep = "attrs", depth, 0, i + 1
        elif c in ")]}>":
            if depth == inner and section in ("operands", "attrs"):
                section = "closed"
            depth -= 1
        elif c == "," and depth == inner and section in ("operands", "attrs"):
            commas += 1
            last_sep = i + 1
        elif c == ":" and depth == 0:
            section = "types"
    if section == "operands" and op.operands:
        variadic = next((k for k, o in enumerate(op.operands) if o.kind == "variadic"), None)
        k = commas
        if variadic is not None and k >= variadic:
            after = len(op.operands) - variadic - 1  # operands after the variadic one
            k = variadic if after == 0 else k
        return op.operands[min(k, len(op.operands) - 1)].name
    if section == "attrs":
        m = re.match(r"\s*([A-Za-z_][\w.$]*)", text[last_sep:])
        if m and op.attribute(m.group(1)) is not None:
            return m.group(1)
        if m and last_sep + m.end() == len(text):  # a name being typed: the only attribute it begins
            names = [a.name for a in op.attributes if a.name.startswith(m.group(1))]
            return names[0] if len(names) == 1 else None
    return None


_OP_START = re.compile(r'\s*(?:(?:%[^=]*?)\s*=\s*)?(?P<name>"[^"\n]*"|[A-Za-z_][A-Za-z0-9_$.]*)')
_ASSIGNMENT = re.compile(r"\s*%[^=]*=\s*$")
#: A line ending with one of these continues on the next line.
_CONTINUES = (",", "(", "[", "=", ":", "->", "<")
#: A line starting with one of these continues the line above.
_CONTINUATION_STARTS = (":", "->", ",", ")", "]", ">")


def _op_start(code: str) -> tuple[OpDef, int, bool] | None:
    """``(op, end of its name, generic)`` when ``code`` starts an op of the registry."""
    m = _OP_START.match(code)
    if m is None:
        return None
    name = m.group("name")
    generic = name.startswith('"')
    op = lookup(name.strip('"'))
    if op is None:
        return None
    return op, m.end("name"), generic


def _unbalanced_brace(code: str) -> bool:
    depth = 0
    in_str = False
    for c in code:
        if in_str:
            in_str = c != '"'
        elif c == '"':
            in_str = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return True
    return depth > 0


def _column_index(line: str, character: int) -> int:
    """Index in ``line`` of the UTF-16 column ``character`` (clamped to the line)."""
    if line.isascii():
        return min(character, len(line))
    units = 0
    for i, ch in enumerate(line):
        if units >= character:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def _find_op(text_lines: list[str], pos: Position, current: str) -> tuple[OpDef, bool, str] | None:
    """The op whose text the cursor ends: ``(op, generic, text after its name up to the cursor)``."""
    found = _op_start(current)
    if found is not None:
        op, name_end, generic = found
        return op, generic, current[name_end:]
    stripped = current.strip()
    if _ASSIGNMENT.match(current) or (stripped and not stripped.startswith(_CONTINUATION_STARTS)
                                      and not stripped.startswith("%")):
        joined_prev = None
    else:
        joined_prev = True
    lines = [current]
    row = pos.line
    while True:
        row -= 1
        if row < 0 or pos.line - row > MAX_OP_LINES:
            return None
        code = _strip_comment(text_lines[row])
        if not code.strip():
            continue
        if len(lines) == 1 and joined_prev is None and not code.rstrip().endswith(_CONTINUES):
            return None
        if len(lines) == 1 and not stripped and not code.rstrip().endswith(_CONTINUES):
            return None
        found = _op_start(code)
        if found is not None:
            op, name_end, generic = found
            return op, generic, "\n".join([code[name_end:]] + lines)
        if _unbalanced_brace(code):
            return None
        lines.insert(0, code)


def signature_help(text: str, pos: Position) -> SignatureHelp | None:
    """The signature of the op written at ``pos`` (whole-file position) of ``text``, or ``None``.

    ``None`` when the cursor is not after the name of a known op: in its
    results, in a comment, on a line starting a new statement, inside one of
    the op's regions.  The op may span several lines: up to
    :data:`MAX_OP_LINES` lines above the cursor are searched for its start
    (a line continues the one above when it starts with ``:``, ``->``,
    ``,``... or the one above ends with ``,``, ``(``, ``=``, ``:``...).
    The active parameter is ``None`` while the cursor is at the end of the
    op name, or past the last slot.
    """
    lines = text.split("\n", pos.line + 1)[: pos.line + 1]  # the lines up to the cursor's, no further
    if pos.line >= len(lines):
        return None
    current = lines[pos.line][:_column_index(lines[pos.line], pos.character)]
    code = _strip_comment(current)
    if len(code) < len(current):
        return None  # in a comment
    found = _find_op(lines, pos, code)
    if found is None:
        return None
    op, generic, body = found
    signature = op_signature(op.full_name)
    if signature is None:
        return None
    if not body:
        return SignatureHelp(signature, None)
    if generic:
        return SignatureHelp(signature, signature.index(_active_generic(op, body)))
    if not body[0].isspace() and body[0] not in "<([{":
        return None  # still typing a longer name
    nodes_found = _nodes_of(op.full_name)
    if nodes_found is None:
        return None
    try:
        active = _active(nodes_found[0], body)
    except _InRegion:
        return None
    return SignatureHelp(signature, signature.index(active))
