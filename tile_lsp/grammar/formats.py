"""MLIR declarative assembly formats: parsing them and deriving Lark rules.

Each :class:`~tile_lsp.dialect.schema.OpDef` carries its assembly format as
MLIR writes it in ODS (``$lhs `,` $rhs attr-dict `:` type($result)``).  This
module parses such a string into a small AST (:func:`parse_format`), and
emits the Lark rules that parse the op's custom form (:class:`GrammarBuilder`).
The IR builder walks the same AST against the parse tree, so the grammar, the
builder and (later) the printer all derive from the single table entry.

Rule source: MLIR "Declarative Assembly Format" (mlir/docs/DefiningDialects/Operations.md):
literals in backticks, ``$var``, directives (``attr-dict``,
``attr-dict-with-keyword``, ``type``, ``functional-type``, ``custom<X>``,
``oilist``, ``operands``, ``results``, ``regions``), and optional groups
``( ... )?`` with an anchor ``^`` and an optional else group ``: ( ... )``.

Every non-literal element produces exactly one child (a Lark ``Tree`` or
``None`` for an absent optional) in the tree of the op's format rule; literal
tokens are dropped.  :func:`element_children` gives the aligned children.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from tile_lsp.dialect.schema import OpDef

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


# ---------------------------------------------------------------------------
# Custom directives: grammar fragment per custom<Name>
# ---------------------------------------------------------------------------

# Each custom directive maps to the grammar expression of its one child.  The
# rules referenced here live in CUSTOM_RULES (appended to the grammar) or in
# mlir.lark.  The IR builder (tile_lsp/analysis/syntax/builder.py) interprets them.
CUSTOM_DIRECTIVES: dict[str, str] = {
    "CudaTileType": "type",
    "IEEERoundingMode": "[rounding_mode]",
    "DivFOpRoundingMode": "[rounding_mode]",
    "ExpOpRoundingMode": "[rounding_mode]",
    "TanHOpRoundingMode": "[rounding_mode]",
    "SqrtOpRoundingMode": "[rounding_mode]",
    "IntegerRoundingMode": "[rounding_mode]",
    "Signedness": "enum_signedness",
    "ComparisonPredicate": "enum_comparison_predicate",
    "ComparisonOrdering": "enum_comparison_ordering",
    "AssumePredicate": "assume_predicate",
    "DenseTypedElementsAttr": "dense_typed",
    "DenseTypedElementsAttrNoResult": "dense_typed",
    "SymbolVisibility": "[symbol_visibility]",
    "IfOpRegion": "region",
    "ArgumentRegion": "argument_region",
    # directives of tile-lsp's own formats for ops with a C++ parser
    "FunctionSignature": "function_signature",
    "ForHeader": "for_header",
    "ForIterValues": "[for_iter_values]",
    "LoopHeader": "loop_header",
    "IndexList": "index_list",
    "IndexType": "type_list",
    "UniformType": "uniform_type",
    "TypeArrowType": "type_arrow_type",
    "OptHints": "[opt_hints]",
    "ShapeList": "shape_list",
    "Region": "region",
}

CUSTOM_RULES = r"""
rounding_mode: "rounding" "<" BARE_ID ">"
enum_keyword: BARE_ID
enum_signedness: BARE_ID
enum_comparison_predicate: BARE_ID
enum_comparison_ordering: BARE_ID
!symbol_visibility: "public" | "private" | "nested"
assume_predicate: assume_div_by | assume_same_elements | assume_bounded | BARE_ID [pretty_body] | attribute_value
assume_div_by: "div_by" "<" INT ["," "every" INT "along" INT] ">"
assume_same_elements: "same_elements" "<" "[" [INT ("," INT)*] "]" ">"
assume_bounded: "bounded" "<" assume_bound "," assume_bound ">"
!assume_bound: INT | "?"
dense_typed: "<" (non_function_type | BARE_ID) ":" [dense_literal] ">" ":" type
argument_region: "(" [block_arg_list] ")" region
function_signature: "(" [block_arg_list] ")" ["->" result_type_list]
result_type_list: paren_type_list | non_function_type
for_header: [unsigned_kw] value_def "in" "(" value_use "to" value_use "," "step" value_use ")" ":" type
!unsigned_kw: "unsigned"
value_def: VALUE_ID
for_iter_values: "iter_values" "(" iter_arg ("," iter_arg)* ")" "->" "(" type_list ")"
loop_header: [loop_iter] [loop_results]
loop_iter: "iter_values" "(" iter_arg ("," iter_arg)* ")" ":" type_list
loop_results: "->" type_list | ":" type_list
iter_arg: VALUE_ID "=" value_use
uniform_type: type
type_arrow_type: type ["->" type]
index_list: "[" [value_use ("," value_use)*] "]"
?index_item: value_use | INT
shape_list: "[" [index_item ("," index_item)*] "]"
opt_hints: "optimization_hints" "=" pretty_body
attr_dict_kw: "attributes" attr_dict
region_list_bare: region ("," region)*
"""


# ---------------------------------------------------------------------------
# Grammar generation
# ---------------------------------------------------------------------------


def rule_suffix(op_name: str) -> str:
    """Lark-safe rule suffix for an op name (``testing$func`` -> ``testing_func``)."""
    return re.sub(r"[^a-z0-9_]", "_", op_name.lower())


class GrammarBuilder:
    """Emits the Lark rules of every op's custom format.

    ``rules()`` returns the text appended to ``mlir.lark``; ``op_rule[name]``
    gives the op rule name of each op.  Format rules with the same grammar are
    shared between ops (``fmt_<hash>``), which keeps the LALR tables small.
    """

    def __init__(self, ops: list[OpDef]):
        self.ops = ops
        self.lines: list[str] = []
        self.shared: dict[str, str] = {}
        self.op_rule: dict[str, str] = {}
        self.errors: list[str] = []

    def _named(self, prefix: str, body: str) -> str:
        """Name of the shared rule with ``body`` (``!`` prefix: keep its tokens)."""
        name = self.shared.get((prefix, body))
        if name is None:
            keep = prefix.startswith("!")
            base = prefix.lstrip("!")
            name = f"{base}_{hashlib.sha1(body.encode()).hexdigest()[:10]}"
            self.shared[(prefix, body)] = name
            self.lines.append(f"{'!' if keep else ''}{name}: {body}")
        return name

    def _var(self, op: OpDef, var: Var, in_anchor_group: bool, guarded: bool = False) -> str:
        name = var.name
        operand = op.operand(name)
        if operand is not None:
            if operand.kind == "single":
                return "value_use"
            if guarded:
                # after the element that decides an optional group, MLIR's
                # generated parser reads an optional operand with
                # ``parseOptionalOperand`` and a variadic one with
                # ``parseOperandList``: both may be absent (OpFormatGen.cpp)
                return "[value_use_list]" if operand.kind == "variadic" else "[value_use]"
            if operand.kind == "optional" or in_anchor_group:
                return "value_use_list" if operand.kind == "variadic" else "value_use"
            return "[value_use_list]"
        attr = op.attribute(name)
        if attr is not None:
            return attr_grammar(attr.kind)
        if any(r.name == name for r in op.regions):
            return "region"
        if op.result(name) is not None:
            raise ValueError(f"{op.name}: result ${name} used as a format variable")
        raise ValueError(f"{op.name}: unknown format variable ${name}")

    def _type_of(self, op: OpDef, arg) -> str:
        if isinstance(arg, Directive) and arg.name == "type":
            inner = arg.args[0]
            if isinstance(inner, Var):
                entity = op.operand(inner.name) or op.result(inner.name)
                if entity is not None and entity.kind == "variadic":
                    return "[type_list]"
                return "type"
            if isinstance(inner, Directive) and inner.name in ("operands", "results"):
                return "[type_list]"
        raise ValueError(f"{op.name}: unsupported type directive argument {arg!r}")

    def element(self, op: OpDef, e, in_anchor_group: bool = False, guarded: bool = False) -> str | None:
        if isinstance(e, Literal):
            text = e.text.strip()
            if not text:
                return None
            return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(e, Var):
            return self._var(op, e, in_anchor_group or e.anchor, guarded)
        if isinstance(e, Directive):
            if e.name == "attr-dict":
                return "[attr_dict]"
            if e.name == "attr-dict-with-keyword":
                return "[attr_dict_kw]"
            if e.name == "type":
                t = self._type_of(op, e)
                return t.strip("[]") if (in_anchor_group or e.anchor) and t.startswith("[") else t
            if e.name == "functional-type":
                return "function_type"
            if e.name == "custom":
                frag = CUSTOM_DIRECTIVES.get(e.custom)
                if frag is None:
                    raise ValueError(f"{op.name}: unknown custom directive {e.custom}")
                if frag == "type" and e.args:
                    t = self._type_of(op, e.args[0])
                    return t.strip("[]") if (in_anchor_group or e.anchor) and t.startswith("[") else t
                return frag
            if e.name == "operands":
                return "[value_use_list]"
            if e.name == "regions":
                return "region_list_bare"
            raise ValueError(f"{op.name}: unsupported directive {e.name}")
        if isinstance(e, OptionalGroup):
            then = " ".join(x for x in self._group(op, e.then) if x)
            name = self._named("og", then)
            if e.else_:
                else_ = " ".join(x for x in (self.element(op, x, True) for x in e.else_) if x)
                else_name = self._named("oe", else_ or '""')
                return self._named("alt", f"{name} | {else_name}")
            return f"[{name}]"
        if isinstance(e, OIList):
            kws = " | ".join(f'"{kw}"' for kw, _ in e.clauses)
            return self._named("!oil", f"({kws})*")
        raise ValueError(f"{op.name}: unsupported element {e!r}")

    def _group(self, op: OpDef, elems) -> list[str | None]:
        """The rules of an optional group's elements; those after the first
        (which decides whether the group is there) are ``guarded``."""
        out: list[str | None] = []
        for x in elems:
            decided = getattr(self, "_declarative", True) and any(r for r in out)
            out.append(self.element(op, x, True, guarded=decided))
        return out

    def build(self) -> str:
        alternatives = []
        for op in self.ops:
            if op.format is None:
                continue
            # ``guarded`` optional operands are a rule of MLIR's generated
            # parsers, not of NVIDIA's C++ ones (``parseViewTkoCommon`` requires
            # the operand after ``token =``)
            from tile_lsp.dialect.custom_formats import CUSTOM_FORMATS
            self._declarative = op.format != CUSTOM_FORMATS.get(op.name)
            try:
                elems = parse_format(op.format)
                body = " ".join(x for x in (self.element(op, e) for e in elems) if x)
            except ValueError as exc:
                self.errors.append(str(exc))
                continue
            # ops of other dialects may share a cuda_tile op's short name (nv_tileas.yield)
            suffix = rule_suffix(op.name if op.dialect == "cuda_tile" else f"{op.dialect}_{op.name}")
            fmt_rule = self._named("fmt", body or '""') if body else None
            # the prefix may be omitted only for cuda_tile ops (its default dialect)
            names = [f'"{op.dialect}.{op.name}"']
            if op.dialect == "cuda_tile":
                names.insert(0, f'"{op.name}"')
            rule = f"op_{suffix}"
            self.op_rule[op.full_name] = rule
            self.lines.append(f"!opname_{suffix}: " + " | ".join(names))
            self.lines.append(f"{rule}: opname_{suffix}" + (f" {fmt_rule}" if fmt_rule else ""))
            alternatives.append(rule)
        head = "custom_op: " + ("\n    | ".join(alternatives) if alternatives else '"<<no custom ops>>"')
        return "\n".join([head, *self.lines, CUSTOM_RULES])


# Attribute kinds -> grammar of the attribute when it appears as `$attr`.
_ATTR_GRAMMAR = {
    "i32": "fmt_int",
    "i64": "fmt_int",
    "bool": "fmt_bool",
    "string": "fmt_string",
    "symbol_name": "fmt_symbol",
    "symbol_ref": "fmt_symbol",
    "dense_i32_array": "fmt_int_array",
    "type": "type",
    "opt_hints": "pretty_body",
}

# Enums whose attribute prints as `<case>` (AttrDefs.td assemblyFormat "`<` $value `>`").
ANGLE_ENUMS = frozenset({"Signedness", "IntegerOverflow", "RoundingMode", "ComparisonOrdering",
                         "ComparisonPredicate", "SymbolVisibility"})

FMT_ATTR_RULES = r"""
fmt_int: INT
fmt_bool: BOOL
fmt_string: STRING
fmt_symbol: AT_ID
fmt_int_array: "[" [int_list] "]"
angle_enum: "<" BARE_ID ">"
unit_present: 
"""


def attr_grammar(kind: str) -> str:
    """Grammar expression of an attribute of ``kind`` written as ``$attr`` in a format."""
    if kind == "unit":
        return ""
    if kind.startswith("enum:"):
        return "angle_enum" if kind[5:] in ANGLE_ENUMS else "enum_keyword"
    return _ATTR_GRAMMAR.get(kind, "attribute_value")


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
