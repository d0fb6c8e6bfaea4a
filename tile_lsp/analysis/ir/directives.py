"""The ``custom<X>`` directives of the assembly formats: one object per directive.

MLIR's declarative formats leave part of an op's syntax to pairs of C++ functions,
``parseX``/``printX``, named by a ``custom<X>(...)`` directive.  NVIDIA's live in
``lib/Dialect/CudaTile/IR/CudaTile.cpp`` of the ``cuda-tile`` repository;
tile-lsp adds directives of its own for the ops whose whole syntax NVIDIA parses
in C++ (``tile_lsp/dialect/custom_formats.py``: ``for``, ``loop``, ``entry``,
the view ops...), so that every op has one format entry.

Each :class:`CustomDirective` here holds all tile-lsp knows of its directive:

* ``grammar``: the Lark expression of the directive's one child in an op's
  format rule, and ``rules``, the Lark rules that expression needs (appended to
  the grammar by :class:`tile_lsp.grammar.formats.GrammarBuilder`);
* :meth:`~CustomDirective.build`: the semantic action that turns the child's
  parse tree into the op's operands, types, attributes and regions.  The syntax
  layer's builder calls it and passes itself in: the directive asks the builder
  for types, attributes and ranges, and never runs a parser;
* :meth:`~CustomDirective.print`: the text NVIDIA's ``printX`` writes (only the
  directives of NVIDIA's declarative formats print: an op with a tile-lsp
  format is printed whole, as its C++ printer does, by ``printer.py``);
* ``signature``: how the directive reads in signature help;
* :meth:`~CustomDirective.words`: the keywords completion offers in its place;
* ``doc``: what it accepts and prints, with NVIDIA's error messages.

:data:`DIRECTIVES` maps each name to its object.  A new directive is one class
or one entry here, and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lark import Token, Tree

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.attr_text import attr_text, dense_body
from tile_lsp.dialect import types as T
from tile_lsp.dialect.assembly_format import Directive, Var
from tile_lsp.dialect.custom_formats import ASSUME_PREDICATE_WORDS
from tile_lsp.dialect.enums import ENUMS


def target(arg: Any) -> str | None:
    """The operand/result/attribute name inside a directive argument ``$x`` or ``type($x)``; ``None``
    for any other argument (``type(operands)``)."""
    if isinstance(arg, Var):
        return arg.name
    if isinstance(arg, Directive) and arg.name == "type" and arg.args and isinstance(arg.args[0], Var):
        return arg.args[0].name
    return None


def case_of(a: A.Attribute | None) -> str:
    """The case an enum-like attribute holds (``EnumAttr``, a string, a generic ``#cuda_tile.x<case>``);
    ``""`` for none."""
    if a is None:
        return ""
    if isinstance(a, A.StringAttr):
        return a.value
    case = A.enum_case(a)  # custom form, or the generic form as the builder decoded it
    if case is not None:
        return case
    if isinstance(a, A.DialectAttr):
        return a.body or ""
    return str(a)


@dataclass(frozen=True)
class CustomDirective:
    """One ``custom<name>(args)`` directive.

    ``grammar``: Lark expression of its child (bracketed when it may be absent);
    ``rules``: the Lark rules it needs, one per line (rules that several directives
    share are written alike and appended once); ``signature``: a format string in
    MLIR's declarative syntax showing how the directive reads in signature help,
    ``{0}``, ``{1}``... standing for its arguments (a ``$name`` that is not a member
    of the op is a placeholder, ``$_name`` any text); ``whole``: signature help
    shows the expansion as one parameter, the first argument (``function_type``);
    ``doc``: Markdown; ``enum``: the enum (``tile_lsp.dialect.enums``) whose cases it reads, if any;
    ``keyword``: the word written before them (``rounding`` in ``rounding<zero>``), ``""`` when
    they stand bare (``cmpi equal``).
    """

    name: str
    grammar: str
    rules: str = ""
    signature: str = "{0}"
    doc: str = ""
    whole: bool = False
    enum: str = ""
    keyword: str = ""

    def build(self, b: Any, opdef: Any, d: Directive, child: Any, parts: Any) -> None:
        """Bind the parse tree ``child`` of directive ``d`` (``None``: an absent optional one) into
        ``parts``, the builder's record of the op being built (operands as ``(name, range)`` lists,
        types, inherent attributes ``props``, regions).  ``b`` is the syntax layer's builder, which
        converts types and attributes and reports errors with MLIR's words."""
        raise NotImplementedError(self.name)

    def print(self, p: Any, op: Any, args: tuple, indent: int) -> str:
        """The directive's text for ``op`` (``p``: the printer; ``args``: the directive's arguments).

        Raises ``NotImplementedError`` for a directive of tile-lsp's formats, whose op is printed whole.
        """
        raise NotImplementedError(f"custom<{self.name}> is printed by its op's printer")

    def words(self, opdef: Any) -> tuple[str, ...]:
        """Keywords completion offers where the directive stands (none by default)."""
        return ()


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


class TypeDirective(CustomDirective):
    """``custom<CudaTileType>(type($x))``: the type (or, for a variadic, the type list) of ``$x``."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0]) if d.args else None
        if name is not None and child is not None:
            parts.types[name] = b.type_list(child)
            parts.type_ranges[name] = b.type_ranges(child)

    def print(self, p, op, args, indent):
        return ", ".join(p.types_of(op, args[0], short=True))


class IndexTypeDirective(CustomDirective):
    """``custom<IndexType>(type($index))``: the index type(s) of a view access; one type written for
    several indices stands for them all (NVIDIA's ``parseViewTkoCommon``)."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        ts = b.type_list(child)
        parts.type_ranges[name] = b.type_ranges(child)
        n = len(parts.operands.get(name, []))
        parts.types[name] = ts if len(ts) == n or len(ts) != 1 else ts * max(n, 1)


class UniformTypeDirective(CustomDirective):
    """``custom<UniformType>(type($result))``: one type written for every result (``get_*_shape``);
    the count comes from the op table's ``splat_rank`` inference."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        t = b.type(child.children[0])
        parts.uniform_result_type = t
        result = opdef.result(name)
        if result is not None and result.kind != "variadic":
            parts.types[name] = [t]


class TypeArrowTypeDirective(CustomDirective):
    """``custom<TypeArrowType>(type($result))``: ``T`` or ``INDEX_T -> T`` (``make_tensor_view``): the
    index type, when written, is the type of the op's variadic operands."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        first, second = child.children
        if second is None:
            parts.types[name] = [b.type(first)]
            return
        index = b.type(first)
        parts.types[name] = [b.type(second)]
        for o in opdef.operands:
            if o.kind == "variadic":
                parts.types[o.name] = [index]


# ---------------------------------------------------------------------------
# Keywords: rounding modes, enums, visibility
# ---------------------------------------------------------------------------

_ROUNDING_RULES = 'rounding_mode: "rounding" "<" BARE_ID ">"'
_ROUNDING_SIGNATURE = "(`rounding` `<` {0}^ `>`)?"


@dataclass(frozen=True)
class RoundingDirective(CustomDirective):
    """``custom<XRoundingMode>($rounding_mode)``: optional ``rounding<KEYWORD>`` (NVIDIA's
    ``parseXRoundingMode``).  ``allowed``: the modes it accepts; ``default``: the mode when the text
    omits it, which the printer omits too; ``with_got``: whether its error ends with
    ``, got: '<kw>'``.  A known mode outside ``allowed`` parses when not ``with_got`` and is
    the verifier's to reject."""

    allowed: tuple[str, ...] = ()
    default: str = ""
    with_got: bool = False

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        if child is None:
            parts.props[name] = A.EnumAttr("RoundingMode", self.default, "rounding")
            return
        tok = child.children[0]
        case = str(tok)
        if case not in ENUMS["RoundingMode"].spellings or (self.with_got and case not in self.allowed):
            message = "expected rounding mode to be one of: " + ", ".join(f"'{m}'" for m in self.allowed)
            if self.with_got:
                message += f", got: '{case}'"
            # MLIR reports at the current location: the token after the closing '>'
            b.error(f"custom op '{opdef.full_name}' {message}", b.point_after(child), "parse.rounding")
        parts.props[name] = A.EnumAttr("RoundingMode", case, "rounding", range=b.rng(tok))

    def print(self, p, op, args, indent):
        case = case_of(op.attr(args[0].name))
        return "" if not case or case == self.default else f"rounding<{case}>"

    def words(self, opdef):
        return self.allowed


def _rounding(name: str, allowed: tuple[str, ...], default: str, with_got: bool, doc: str) -> RoundingDirective:
    return RoundingDirective(name, "[rounding_mode]", _ROUNDING_RULES, _ROUNDING_SIGNATURE, doc,
                             enum="RoundingMode", keyword="rounding", allowed=allowed, default=default,
                             with_got=with_got)


_IEEE = ("nearest_even", "zero", "negative_inf", "positive_inf")


@dataclass(frozen=True)
class EnumKeywordDirective(CustomDirective):
    """A required bare keyword naming a case of ``enum`` (NVIDIA's ``parseSignedness``,
    ``parseComparisonPredicate``, ``parseComparisonOrdering``); ``message``: what the parser says of
    another keyword.  When no keyword is there at all, MLIR's ``expected valid keyword`` comes
    first (``tile_lsp/grammar/syntax_errors.py`` reports that one, reading ``rule`` and ``message``)."""

    message: str = ""

    @property
    def rule(self) -> str:
        """The Lark rule of the keyword (``grammar``)."""
        return self.grammar

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        tok = child.children[0]
        cases = ENUMS[self.enum].spellings if self.enum in ENUMS else None
        if cases is not None and str(tok) not in cases:
            b.error(f"custom op '{opdef.full_name}' {self.message}", b.point(tok), "parse.enum")
        parts.props[name] = A.EnumAttr(self.enum, str(tok), range=b.rng(tok))

    def print(self, p, op, args, indent):
        return case_of(op.attr(args[0].name))

    def words(self, opdef):
        return tuple(c[0] for c in ENUMS[self.enum].cases) if self.enum in ENUMS else ()


def _enum_keyword(name: str, rule: str, enum: str, message: str, doc: str) -> EnumKeywordDirective:
    return EnumKeywordDirective(name, rule, f"{rule}: BARE_ID", "{0}", doc, enum=enum, message=message)


class SymbolVisibilityDirective(CustomDirective):
    """``custom<SymbolVisibility>($sym_visibility)``: optional ``public`` | ``private``."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0]) if d.args else None
        if child is not None:
            parts.props[name or "sym_visibility"] = A.StringAttr(str(child.children[0]), range=b.rng(child))

    def print(self, p, op, args, indent):
        return "private " if case_of(op.attr(args[0].name)) == "private" else ""

    def words(self, opdef):
        return ("public", "private")


# ---------------------------------------------------------------------------
# Attributes with syntax of their own
# ---------------------------------------------------------------------------

class AssumePredicateDirective(CustomDirective):
    """``custom<AssumePredicate>($predicate)``: a full ``#cuda_tile.x<...>`` attribute or its short
    form ``div_by<...>`` | ``same_elements<...>`` | ``bounded<...>``, decoded by the builder's
    ``cuda_tile_attribute``."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        inner = child.children
        if isinstance(inner[0], Tree) and inner[0].data.startswith("assume_"):
            # the short forms the grammar spells out: div_by<...>, same_elements<...>, bounded<...>
            mnemonic, body = b.slice(inner[0]).split("<", 1)
            parts.props[name] = b.cuda_tile_attribute(mnemonic.strip(), body[:-1], b.rng(child))
        elif isinstance(inner[0], Token) and inner[0].type == "BARE_ID":
            body = b.slice(inner[1])[1:-1] if len(inner) > 1 and inner[1] is not None else None
            parts.props[name] = b.cuda_tile_attribute(str(inner[0]), body, b.rng(child))
        else:
            parts.props[name] = b.attribute(inner[0])

    def print(self, p, op, args, indent):
        text = attr_text(op.attr(args[0].name))
        return text[len("#cuda_tile."):] if text.startswith("#cuda_tile.") else text

    def words(self, opdef):
        return ASSUME_PREDICATE_WORDS


@dataclass(frozen=True)
class DenseTypedDirective(CustomDirective):
    """``custom<DenseTypedElementsAttr>($value, type($result))`` (``constant``) and the ``NoResult``
    form (``global``): ``<ELEM: LITERAL> : TYPE``.  ``result``: the type after ``:`` is also the
    second argument's (the op's result)."""

    result: bool = False

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        elem_t, lit, ty_t = child.children
        elem = b.type(elem_t)
        # NVIDIA's parser reads the literal before the type after it: the type is verified after
        # the literal's parse rules (the builder's bind_format)
        ty = b.unverified_type(ty_t)
        parts.deferred_types.append(ty_t)
        values, shape = b.dense_literal(lit, elem)
        parts.props[name] = A.DenseElementsAttr(elem, values, ty, shape, range=b.rng(child))
        if self.result and len(d.args) > 1:
            res = target(d.args[1])
            if res is not None:
                parts.types[res] = [ty]

    def print(self, p, op, args, indent):
        a = op.attr(args[0].name)
        if not isinstance(a, A.DenseElementsAttr):
            return attr_text(a) if a is not None else ""
        if len(args) > 1:
            types = p.types_of(op, args[1], short=True)
            ty = types[0] if types else (a.type.short() if a.type else "")
        else:
            ty = a.type.short() if a.type is not None else ""
        return f"<{a.element_type}: {dense_body(a)}> : {ty}"


_DENSE_RULES = 'dense_typed: "<" (non_function_type | BARE_ID) ":" [dense_literal] ">" ":" type'


class OptHintsDirective(CustomDirective):
    """``custom<OptHints>($optimization_hints)`` (tile-lsp's): optional
    ``optimization_hints = <...>``, decoded by the builder's ``cuda_tile_attribute``."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0]) if d.args else None
        if child is not None:
            body = b.slice(child.children[0])[1:-1].strip()
            parts.props[name or "optimization_hints"] = b.cuda_tile_attribute("optimization_hints", body,
                                                                               b.rng(child))


# ---------------------------------------------------------------------------
# Regions and headers
# ---------------------------------------------------------------------------


class RegionDirective(CustomDirective):
    """``custom<IfOpRegion>($region)`` (NVIDIA's: a region without arguments, printed without a
    ``yield`` that has no operands) and tile-lsp's ``custom<Region>``."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0]) if d.args else None
        if name is not None:
            parts.regions[name] = (child, list(parts.region_args))

    def print(self, p, op, args, indent):
        idx = next(i for i, r in enumerate(op.opdef.regions) if r.name == args[0].name)
        return p.implicit_terminator_region(op, op.regions[idx], indent, False, term=("yield",))


class ArgumentRegionDirective(CustomDirective):
    """``custom<ArgumentRegion>($body)``: ``(%a: T, ...)`` then the region those are the block
    arguments of (``reduce``, ``scan``)."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        args_t, region_t = child.children
        parts.regions[name] = (region_t, b.block_args(args_t))

    def print(self, p, op, args, indent):
        idx = next(i for i, r in enumerate(op.opdef.regions) if r.name == args[0].name)
        region = op.regions[idx]
        block_args = region.blocks[0].arguments if region.blocks else []
        head = "(" + ", ".join(f"{p.namer.ref(a)}: {a.type.short()}" for a in block_args) + ") "
        return "\n" + " " * indent + head + p.region(region, indent, False, True, False, op)


class FunctionSignatureDirective(CustomDirective):
    """``custom<FunctionSignature>($function_type)`` (tile-lsp's, for ``entry``): ``(%a: T, ...)
    [-> RESULTS]``; the arguments become the body's block arguments."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0]) if d.args else None
        args_t, res_t = child.children
        args = b.block_args(args_t)
        results = b.type_list(res_t.children[0]) if res_t is not None else []
        parts.region_args = args
        parts.props[name or "function_type"] = A.TypeAttr(
            T.FunctionType(tuple(t for _, t, _ in args), tuple(results)), range=b.rng(child))


def iter_values(b: Any, node: Tree, parts: Any) -> tuple[list[tuple[str, Any]], list[T.Type]]:
    """The ``iter_values(%acc = %init, ...) : types`` of a ``for``/``loop`` header: each ``%acc``
    becomes a region argument (appended to ``parts.region_args``); returns the ``%init`` uses as
    ``(name, range)`` and the types."""
    *iter_args, types_t = node.children
    ts = b.type_list(types_t)
    uses = []
    for k, ia in enumerate(iter_args):
        vname, u = ia.children
        uses.append((str(u.children[0]), b.rng(u)))
        parts.region_args.append((str(vname), ts[k] if k < len(ts) else T.UNKNOWN, b.rng(vname)))
    return uses, ts


class ForHeaderDirective(CustomDirective):
    """``custom<ForHeader>($lowerBound, $upperBound, $step)`` (tile-lsp's): ``[unsigned] %iv in
    (%lb to %ub, step %s) : T``; ``%iv`` is the body's first block argument."""

    def build(self, b, opdef, d, child, parts):
        unsigned_t, iv_t, lb, ub, step, ty_t = child.children
        ty = b.type(ty_t)
        if unsigned_t is not None:
            parts.props["unsignedCmp"] = A.UnitAttr()
        for arg, use in zip(d.args, (lb, ub, step)):
            name = target(arg)
            parts.operands[name] = [(str(use.children[0]), b.rng(use))]
            parts.types[name] = [ty]
        parts.region_args = [(str(iv_t.children[0]), ty, b.rng(iv_t))]


class ForIterValuesDirective(CustomDirective):
    """``custom<ForIterValues>($initValues)`` (tile-lsp's): optional ``iter_values(%a = %x, ...) ->
    (T, ...)``; the types are the results' too."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        if child is None:
            parts.operands[name] = []
            parts.types.setdefault("resultValues", [])
            return
        uses, ts = iter_values(b, child, parts)
        parts.operands[name] = uses
        parts.types[name] = ts
        for r in opdef.results:
            parts.types[r.name] = ts


class LoopHeaderDirective(CustomDirective):
    """``custom<LoopHeader>($initValues)`` (tile-lsp's): ``[iter_values(%a = %x, ...) : T, ...]
    [-> R, ... | : R, ...]``."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        iter_t, res_t = child.children
        uses = []
        if iter_t is not None:
            uses, ts = iter_values(b, iter_t, parts)
            parts.types[name] = ts
        parts.operands[name] = uses
        written = res_t is not None and res_t.children and res_t.children[0] is not None
        results = b.type_list(res_t.children[0]) if written else []
        for r in opdef.results:
            parts.types[r.name] = results


class ValueListDirective(CustomDirective):
    """``custom<IndexList>($index)`` and ``custom<ShapeList>($dynamicShape)`` (tile-lsp's): ``[...]``
    of SSA values (ShapeList: also integers, the static entries, which the result type holds and
    the parse rules read from the node)."""

    def build(self, b, opdef, d, child, parts):
        name = target(d.args[0])
        items = [c for c in child.children if c is not None]
        parts.operands[name] = [(str(c.children[0]), b.rng(c)) for c in items if isinstance(c, Tree)]


_ITER_ARG = 'iter_arg: VALUE_ID "=" value_use'

#: Every custom directive of the op table's formats, by name.
DIRECTIVES: dict[str, CustomDirective] = {d.name: d for d in (
    TypeDirective(
        "CudaTileType", "type",
        doc="A type read by parseCudaTileType: the bare keyword `token` is !cuda_tile.token; otherwise any "
            "MLIR type, where cuda_tile types may omit the `!cuda_tile.` prefix (`tile<4xf32>`, `ptr<f16>`, "
            "`tensor_view<...>`, `partition_view<...>`; inside a cuda_tile type nested cuda_tile types are "
            "always short).  For a type range (variadic or optional operand) it is a comma-separated list "
            "without delimiters.  Printed in the short form for cuda_tile types (`tile<4xf32>`, `token`), "
            "MLIR's form otherwise."),
    _rounding(
        "IEEERoundingMode", _IEEE, "nearest_even", True,
        "Optional `rounding` `<` KEYWORD `>` (the same shape for all *RoundingMode directives; a non-keyword "
        "after `<` fails with 'expected valid keyword'); absent = nearest_even; printed only when the mode "
        "is not nearest_even.  A spelling that is not an IEEE mode (nearest_even, zero, negative_inf, "
        "positive_inf), known or not, fails with \"expected rounding mode to be one of: 'nearest_even', "
        "'zero', 'negative_inf', 'positive_inf', got: '<kw>'\"."),
    _rounding(
        "IntegerRoundingMode", ("nearest_int_to_zero",), "nearest_int_to_zero", True,
        "Optional `rounding` `<` KEYWORD `>`; absent = nearest_int_to_zero; printed only when not "
        "nearest_int_to_zero.  Any other spelling fails with \"expected rounding mode to be one of: "
        "'nearest_int_to_zero', got: '<kw>'\"."),
    _rounding(
        "DivFOpRoundingMode", _IEEE + ("approx", "full"), "nearest_even", False,
        "Optional `rounding` `<` KEYWORD `>`; absent = nearest_even; printed only when not nearest_even.  "
        "An unknown spelling fails with \"expected rounding mode to be one of: 'nearest_even', 'zero', "
        "'negative_inf', 'positive_inf', 'approx', 'full'\" (no \", got\" part); a known but unsupported "
        "mode (nearest_int_to_zero) parses and is rejected by the verifier."),
    _rounding(
        "SqrtOpRoundingMode", _IEEE + ("approx",), "nearest_even", False,
        "As DivFOpRoundingMode with the list 'nearest_even', 'zero', 'negative_inf', 'positive_inf', "
        "'approx' (no 'full'); absent = nearest_even."),
    _rounding(
        "TanHOpRoundingMode", ("approx", "full"), "full", False,
        "Optional `rounding` `<` KEYWORD `>`; absent = full; printed only when not full.  Unknown spelling: "
        "\"expected rounding mode to be one of: 'approx', 'full'\"; known other modes parse and are "
        "rejected by the verifier."),
    _rounding(
        "ExpOpRoundingMode", ("approx", "full"), "full", False,
        "Same as TanHOpRoundingMode (list 'approx', 'full'; absent = full)."),
    _enum_keyword(
        "Signedness", "enum_signedness", "Signedness",
        "expected signedness to be one of: {'signed', 'unsigned'}",
        "Required bare keyword `signed` | `unsigned`; otherwise \"expected signedness to be one of: "
        "{'signed', 'unsigned'}\" (when the token is not a keyword at all, MLIR first reports "
        "'expected valid keyword' at the same location)."),
    _enum_keyword(
        "ComparisonPredicate", "enum_comparison_predicate", "ComparisonPredicate",
        "expected 'comparison_predicate' to be one of: {'equal', 'not_equal', 'less_than', "
        "'less_than_or_equal', 'greater_than', 'greater_than_or_equal'}",
        "Required bare keyword equal | not_equal | less_than | less_than_or_equal | greater_than | "
        "greater_than_or_equal; otherwise \"expected 'comparison_predicate' to be one of: {'equal', "
        "'not_equal', 'less_than', 'less_than_or_equal', 'greater_than', 'greater_than_or_equal'}\" "
        "(preceded by 'expected valid keyword' when the token is not a keyword)."),
    _enum_keyword(
        "ComparisonOrdering", "enum_comparison_ordering", "ComparisonOrdering",
        "expected 'comparison_ordering' to be one of: {'ordered', 'unordered'}",
        "Required bare keyword ordered | unordered; otherwise \"expected 'comparison_ordering' to be one "
        "of: {'ordered', 'unordered'}\" (preceded by 'expected valid keyword' when the token is not a "
        "keyword)."),
    AssumePredicateDirective(
        "AssumePredicate", "assume_predicate",
        "assume_predicate: assume_div_by | assume_same_elements | assume_bounded | BARE_ID [pretty_body]"
        " | attribute_value\n"
        'assume_div_by: "div_by" "<" INT ["," "every" INT "along" INT] ">"\n'
        'assume_same_elements: "same_elements" "<" "[" [INT ("," INT)*] "]" ">"\n'
        'assume_bounded: "bounded" "<" assume_bound "," assume_bound ">"\n'
        '!assume_bound: INT | "?"',
        doc="Either a full attribute (`#cuda_tile.div_by<...>`; one that is not an assume predicate fails "
            "with 'expected assume predicate attribute') or the short form KEYWORD<...>: "
            "`div_by<N>` | `div_by<N, every E along A>` | `same_elements<[a, b, ...]>` | "
            "`bounded<LB|?, UB|?>`.  No keyword: 'expected attribute name'; another keyword: "
            "\"unknown assume predicate attribute: <kw> (expected 'div_by', 'same_elements', or 'bounded')\".  "
            "Printed in the short form."),
    DenseTypedDirective(
        "DenseTypedElementsAttr", "dense_typed", _DENSE_RULES, "{0} `:` {1}", result=True,
        doc="`<` ELEM_TYPE `:` LITERAL `>` `:` TYPE(result).  ELEM_TYPE is read with parseCudaTileType and "
            "must be i1/i8/i16/i32/i64/f16/bf16/f32/f64/tf32/f8E4M3FN/f8E5M2/f8E8M0FNU/f4E2M1FN (else "
            "\"expect element type to be one of i1 or i8 or i16 or i32 or i64 or f16 or bf16 or f32 or f64 or "
            "tf32 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN values, but got <T>\").  LITERAL := number | "
            "`[` LITERAL (`,` LITERAL)* `]`; integers for integer types (true/false only for i1, else "
            "'expected integer value'; range check: 'integer constant out of range for type'), floats "
            "(decimal or hex bit pattern) otherwise; nested lists must agree ('tensor literal is invalid; "
            "ranks are not consistent between elements').  TYPE(result) must be a tile (\"result #0 must be "
            "tile of i1 or i8 or i16 or i32 or i64 or f16 or bf16 or f32 or f64 or tf32 or f8E4M3FN or "
            "f8E5M2 or f8E8M0FNU or f4E2M1FN values, but got <T>\") with element ELEM_TYPE ('mismatch "
            "between the element type: <A> and the tile element type <B>') and the literal's shape or a "
            "scalar literal (splat) ('inferred shape of elements literal ([..]) does not match type "
            "([..])').  Printed as `<E: V> : tile<...>` with V a scalar for a splat, nested `[...]` "
            "otherwise, floats as MLIR prints them (`1.000000e+00`, hex for non-finite values)."),
    DenseTypedDirective(
        "DenseTypedElementsAttrNoResult", "dense_typed", _DENSE_RULES, "{0}",
        doc="Same text as DenseTypedElementsAttr; the type after ':' is the attribute's own type (global)."),
    SymbolVisibilityDirective(
        "SymbolVisibility", "[symbol_visibility]", '!symbol_visibility: "public" | "private" | "nested"',
        "({0}^)?",
        doc="Optional bare keyword `public` | `private` (only these two are consumed); absent = public.  "
            "Printed as `private ` (with a trailing space) when private, nothing when public."),
    RegionDirective(
        "IfOpRegion", "region",
        doc="A region without block arguments.  When its block has no terminator a `yield` is inserted.  "
            "Printed without the terminator when that is a `yield` without operands."),
    ArgumentRegionDirective(
        "ArgumentRegion", "argument_region", 'argument_region: "(" [block_arg_list] ")" region',
        "` ` `(` $_block_arguments `)` {0}",
        doc="A newline, then `(` %a `:` TYPE [ATTR-DICT] (`,` ...)* `)` giving the region's block arguments, "
            "then the region.  Printed as a new line `(%a: T, %b: T) {` ... `}`.  The printer names them "
            "%reduce_lhs/%reduce_rhs (with an index suffix when there are more than two) for reduce."),
    # the directives of tile-lsp's formats for the ops NVIDIA parses in C++ (custom_formats.py)
    FunctionSignatureDirective(
        "FunctionSignature", "function_signature",
        'function_signature: "(" [block_arg_list] ")" ["->" result_type_list]\n'
        "result_type_list: paren_type_list | non_function_type",
        "`(` $_arguments `)` (`->` $_result_types^)?", whole=True,
        doc="`(` %a `:` TYPE [ATTR-DICT] (`,` ...)* `)` [`->` TYPE | `->` `(` TYPES `)`]: the `entry` "
            "signature (SharedFuncParserAndPrinter.h); the arguments are the body's block arguments."),
    ForHeaderDirective(
        "ForHeader", "for_header",
        'for_header: [unsigned_kw] value_def "in" "(" value_use "to" value_use "," "step" value_use ")"'
        ' ":" type\n'
        '!unsigned_kw: "unsigned"\n'
        "value_def: VALUE_ID",
        "(`unsigned` $unsignedCmp^)? $iv `in` ` ` `(` {0} `to` {1} `,` `step` {2} `)` `:` type({0})",
        doc="[`unsigned`] %iv `in` `(` %lb `to` %ub `,` `step` %step `)` `:` TYPE: the bounds of a `for` "
            "(ForOp::parse); %iv is the body's first block argument, of TYPE."),
    ForIterValuesDirective(
        "ForIterValues", "[for_iter_values]",
        'for_iter_values: "iter_values" "(" iter_arg ("," iter_arg)* ")" "->" "(" type_list ")"\n' + _ITER_ARG,
        "(`iter_values` `(` {0}^ `)` `->` `(` $_result_types `)`)?",
        doc="Optional `iter_values` `(` %acc `=` %init (`,` ...)* `)` `->` `(` TYPES `)`: the loop-carried "
            "values of a `for`; each %acc is a block argument, TYPES the results'."),
    LoopHeaderDirective(
        "LoopHeader", "loop_header",
        "loop_header: [loop_iter] [loop_results]\n"
        'loop_iter: "iter_values" "(" iter_arg ("," iter_arg)* ")" ":" type_list\n'
        'loop_results: "->" type_list | ":" type_list\n' + _ITER_ARG,
        "(`iter_values` `(` {0}^ `)` `:` $_types)? (`->` $_result_types^)?",
        doc="[`iter_values` `(` %acc `=` %init, ... `)` `:` TYPES] [`->` RESULTS | `:` RESULTS]: the "
            "header of a `loop` (LoopOp::parse)."),
    ValueListDirective(
        "IndexList", "index_list", 'index_list: "[" [value_use ("," value_use)*] "]"', "`[` {0} `]`",
        doc="`[` %i (`,` %j)* `]`: the indices of a view access."),
    ValueListDirective(
        "ShapeList", "shape_list",
        'shape_list: "[" [index_item ("," index_item)*] "]"\n?index_item: value_use | INT', "`[` {0} `]`",
        doc="`[` (INT | %v) (`,` ...)* `]`: the shape or strides of `make_tensor_view`; the integers are "
            "the static entries of the result type, the values its dynamic ones."),
    IndexTypeDirective(
        "IndexType", "type_list",
        doc="The index type after a view access's types: one type for all indices, or one per index."),
    UniformTypeDirective(
        "UniformType", "uniform_type", "uniform_type: type",
        doc="One type for every result (`get_index_space_shape`, `get_tensor_shape`: one result per "
            "dimension of the view)."),
    TypeArrowTypeDirective(
        "TypeArrowType", "type_arrow_type", 'type_arrow_type: type ["->" type]',
        doc="TYPE or INDEX_TYPE `->` TYPE: the result type of `make_tensor_view`, after the type of its "
            "dynamic shape and stride values when it has some."),
    OptHintsDirective(
        "OptHints", "[opt_hints]", 'opt_hints: "optimization_hints" "=" pretty_body',
        "(`optimization_hints` `=` {0}^)?",
        doc="`<` `>` | `<` KEY `=` DICT (`,` KEY `=` DICT)* `>` where KEY is a bare identifier or a string "
            "(sm_80 ... sm_121, default) and DICT a dictionary attribute.  Errors: duplicate key: "
            "'duplicate optimization_hints key `<k>`'; not a dictionary: 'expected dictionary attribute for "
            "optimization_hints entry `<k>` got value=<v>'.  Printed `<k = {a = v, b = w}, k2 = {...}>` with "
            "values printed without their type."),
    RegionDirective("Region", "region", doc="A region (tile-lsp's formats of `entry`, `for`, `loop`)."),
)}


def directive_rules() -> str:
    """The Lark rules of every directive, each rule once, in table order."""
    lines = dict.fromkeys(line for d in DIRECTIVES.values() for line in d.rules.splitlines() if line.strip())
    return "\n".join(lines) + "\n"
