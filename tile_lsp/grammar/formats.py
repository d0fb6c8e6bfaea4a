"""MLIR declarative assembly formats: parsing them and deriving Lark rules.

Each :class:`~tile_lsp.dialect.schema.OpDef` carries its assembly format as
MLIR writes it in ODS (``$lhs `,` $rhs attr-dict `:` type($result)``), parsed
into an AST by :func:`tile_lsp.dialect.assembly_format.parse_format`.  This
module emits the Lark rules that parse each op's custom form
(:class:`GrammarBuilder`); a ``custom<X>`` directive contributes the grammar its
object declares (:data:`tile_lsp.analysis.ir.directives.DIRECTIVES`).  The IR
builder walks the same AST against the parse tree, and the printer walks it
against the IR, so all three derive from the single table entry.

Every non-literal element produces exactly one child (a Lark ``Tree`` or
``None`` for an absent optional) in the tree of the op's format rule; literal
tokens are dropped.
"""

from __future__ import annotations

import hashlib
import re

from tile_lsp.analysis.ir.directives import DIRECTIVES, directive_rules
from tile_lsp.dialect.assembly_format import Directive, Literal, OIList, OptionalGroup, Var, parse_format
from tile_lsp.dialect.custom_formats import CUSTOM_FORMATS
from tile_lsp.dialect.schema import OpDef


# Rules every format may use besides the directives' own
# (:data:`tile_lsp.analysis.ir.directives.DIRECTIVES`, whose ``grammar`` gives the
# expression of a ``custom<X>`` child and ``rules`` the rules it needs).
FORMAT_RULES = r"""
enum_keyword: BARE_ID
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
                directive = DIRECTIVES.get(e.custom)
                if directive is None:
                    raise ValueError(f"{op.name}: unknown custom directive {e.custom}")
                frag = directive.grammar
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
        return "\n".join([head, *self.lines, FORMAT_RULES, directive_rules()])


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


