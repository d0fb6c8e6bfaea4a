"""Print an :class:`~tile_lsp.analysis.ir.core.Module` as MLIR text, canonical or generic.

Two forms, as NVIDIA's ``cuda-tile-opt`` prints them:

* canonical (:func:`print_module`): every op in its custom assembly form,
  driven by the op table (each op's declarative ``format``, parsed by
  :func:`tile_lsp.dialect.assembly_format.parse_format`); the ops NVIDIA prints with
  C++ code (``CUSTOM_SYNTAX`` of :mod:`tile_lsp.dialect.cuda_tile_ops`) have a
  printer function each (:data:`_CPP_PRINTERS`).  Values are named as MLIR's
  ``SSANameState`` names them (``mlir/lib/IR/AsmPrinter.cpp``), including the
  names cuda_tile ops suggest through ``OpAsmOpInterface::getAsmResultNames``
  (``lib/Dialect/CudaTile/IR/CudaTile.cpp``).
* generic (:func:`print_module` with ``generic=True``): MLIR's generic op form
  (``"cuda_tile.addi"(%0, %1) <{...}> : (...) -> ...``), with default-valued
  inherent attributes filled in and the unique value numbering MLIR uses for
  that form.

Spacing of declarative formats follows MLIR's ``OpFormatGen.cpp``
(``shouldEmitSpaceBefore``, ``genLiteralPrinter``...): the "emit a space"
state is tracked statically over the format, so an absent optional group still
affects the spacing of what follows (``addf %a, %b  : tile<f32>``).

Attributes are written by :mod:`.attr_text`.  Output is a string ending with a
newline; regions are indented by 2 spaces per level.  Locations are not
printed (MLIR's default without ``-mlir-print-debuginfo``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Block, Module, OpResult, Operation, Region, Value
from tile_lsp.dialect import types as T
from tile_lsp.analysis.ir.directives import DIRECTIVES, case_of
from tile_lsp.dialect.assembly_format import Directive, Literal, OIList, OptionalGroup, Var, parse_format, space_before_literal

INDENT = 2
CHUNK_SEPARATOR = "// -----\n"

# ---------------------------------------------------------------------------
# Value naming (mlir/lib/IR/AsmPrinter.cpp SSANameState)
# ---------------------------------------------------------------------------
from tile_lsp.analysis.ir.attr_text import (
    attr_kind,
    attr_text,
    default_attr,
    dense_is_splat,
    dict_text,
    enum_of,
    round_float,
    same_attr,
    signed_value,
    string_literal,
)
from tile_lsp.analysis.ir.numbers import flatten


class _Scope:
    def __init__(self, parent: "_Scope | None"):
        self.parent = parent
        self.names: set[str] = set()

    def used(self, name: str) -> bool:
        s: _Scope | None = self
        while s is not None:
            if name in s.names:
                return True
            s = s.parent
        return False


def _sanitize(name: str) -> str:
    def valid(ch: str) -> bool:
        return ch.isascii() and (ch.isalnum() or ch in "$._-")

    def copy() -> str:
        out = []
        for ch in name:
            if valid(ch):
                out.append(ch)
            elif ch == " ":
                out.append("_")
            else:
                out.extend(format(b, "X") for b in ch.encode())
        return "".join(out)

    if name[:1].isdigit():
        return "_" + copy()
    return name if all(valid(c) for c in name) else copy()


# Ops whose C++ class implements OpAsmOpInterface (Ops.td); only these take
# part in assume's "assume_<producer name>" naming.
_ASM_INTERFACE_OPS = frozenset({
    "assume", "broadcast", "constant", "for", "entry", "if", "loop", "make_tensor_view", "module", "reduce",
    "reshape", "scan", "make_partition_view", "make_strided_view", "make_gather_scatter_view", "testing$func",
})

# getAsmResultNames that name result #0 with a fixed word (CudaTile.cpp).
_FIXED_RESULT_NAMES = {
    "broadcast": "bcast", "reshape": "reshape", "for": "for", "reduce": "reduce",
    "make_tensor_view": "tview", "make_partition_view": "pview", "make_strided_view": "sview",
    "make_gather_scatter_view": "gsview",
}


def _constant_name(op: Operation) -> str | None:
    """ConstantOp::getAsmResultNames: ``true``/``false``/``cst_i1`` for i1, else
    ``cst[_<value>]_<elem>`` with the value when the literal is one number (a float
    only when it converts exactly to an unsigned 64-bit integer)."""
    value = op.attr("value")
    if not isinstance(value, A.DenseElementsAttr):
        return None
    elem = str(value.element_type)
    vals = value.values
    flat = [vals] if not isinstance(vals, list) else list(flatten(vals))
    if elem == "i1":
        bools = [bool(v) for v in flat]
        if bools and all(bools):
            return "true"
        if bools and not any(bools):
            return "false"
        return "cst_i1"
    name = "cst"
    splat = not isinstance(vals, list) or dense_is_splat(vals) or len(flat) == 1
    if splat and flat and not isinstance(flat[0], str):
        v = flat[0]
        if elem.startswith("i"):
            name += f"_{signed_value(int(v), elem)}"
        else:
            f = float(v)
            if math.isnan(f):
                name += "_NaN"
            elif math.isfinite(f):
                f = round_float(f, elem)
                if math.isfinite(f) and f >= 0 and not (f == 0 and math.copysign(1, f) < 0) and f == int(f) and f < 2 ** 64:
                    name += f"_{int(f)}"
    return f"{name}_{elem}"


def _suggested_result_names(op: Operation) -> dict[int, str]:
    """Result index -> name suggested by the op (``getAsmResultNames``)."""
    short = op.short_name if op.dialect == "cuda_tile" else None
    if short is None or not op.results:
        return {}
    if short == "constant":
        n = _constant_name(op)
        return {0: n} if n else {}
    if short in _FIXED_RESULT_NAMES:
        return {0: _FIXED_RESULT_NAMES[short]}
    if short == "assume":
        producer = op.operands[0].defining_op if op.operands else None
        if producer is not None and producer.dialect == "cuda_tile" and producer.short_name in _ASM_INTERFACE_OPS:
            idx = op.operands[0].index if isinstance(op.operands[0], OpResult) else -1
            inner = _suggested_result_names(producer).get(idx, "")
            return {0: "assume_" + inner}
        return {0: "assume"}
    # ODS names every result of an op with several fixed results (load_ptr_tko:
    # %result, %result_token).
    opdef = op.opdef
    if opdef is not None and len(opdef.results) >= 2 and len(op.results) == len(opdef.results) \
            and all(getattr(r, "kind", "single") == "single" for r in opdef.results) \
            and short not in _ASM_INTERFACE_OPS:
        return {i: r.name for i, r in enumerate(opdef.results)}
    return {}


def _block_arg_names(op: Operation, region: Region) -> dict[int, str]:
    """Block argument index -> name from ``getAsmBlockArgumentNames`` (for, reduce)."""
    if op.dialect != "cuda_tile" or not region.blocks:
        return {}
    args = region.blocks[0].arguments
    if op.short_name == "for":
        return {i: ("loopIdx" if i == 0 else f"iterArg{i - 1}") for i in range(len(args))}
    if op.short_name == "reduce":
        suffix = len(args) > 2
        return {i: ("reduce_lhs" if i % 2 == 0 else "reduce_rhs") + (str(i // 2) if suffix else "")
                for i in range(len(args))}
    return {}


class Namer:
    """Names of values and blocks as MLIR's printer assigns them.

    ``generic``: the numbering of the generic form (no suggested names, and
    the counters are not restored between sibling regions: MLIR prints unique
    ids there).  Regions are numbered in MLIR's order: a stack of regions,
    each region's own values first, nested regions afterwards, last pushed
    first.
    """

    def __init__(self, top_regions: list[Region | Block], generic: bool = False):
        self.generic = generic
        self.ids: dict[int, int | str] = {}  # id(value) -> number or name
        self.groups: dict[int, list[int]] = {}  # id(op) -> result group starts
        self.block_names: dict[int, str] = {}
        self.next_value = 0
        self.next_arg = 0
        self.next_conflict = 0
        stack: list[tuple[Any, int, int, int, _Scope | None]] = [(r, 0, 0, 0, None) for r in top_regions]
        while stack:
            region, nv, na, nc, parent = stack.pop()
            if not generic:
                self.next_value, self.next_arg, self.next_conflict = nv, na, nc
            scope = _Scope(parent)
            blocks = [region] if isinstance(region, Block) else region.blocks
            if not generic and isinstance(region, Region) and region.parent is not None:
                for i, name in _block_arg_names(region.parent, region).items():
                    self._set(region.blocks[0].arguments[i], name, scope)
            for bi, block in enumerate(blocks):
                self.block_names[id(block)] = f"^bb{bi}"
                self._number_block(block, bi == 0, scope)
            for block in blocks:
                for op in block.operations:
                    for r in op.regions:
                        stack.append((r, self.next_value, self.next_arg, self.next_conflict, scope))

    def _set(self, value: Value, name: str, scope: _Scope) -> None:
        if not name:
            self.ids[id(value)] = self.next_value
            self.next_value += 1
            return
        name = _sanitize(name)
        if scope.used(name):
            while True:
                probe = f"{name}_{self.next_conflict}"
                self.next_conflict += 1
                if not scope.used(probe):
                    name = probe
                    break
        scope.names.add(name)
        self.ids[id(value)] = name

    def _number_block(self, block: Block, entry: bool, scope: _Scope) -> None:
        for arg in block.arguments:
            if id(arg) in self.ids:
                continue
            if entry:
                self._set(arg, f"arg{self.next_arg}", scope)
                self.next_arg += 1
            else:
                self._set(arg, "", scope)
        for op in block.operations:
            groups = [0]
            if not self.generic:
                for i, name in sorted(_suggested_result_names(op).items()):
                    self._set(op.results[i], name, scope)
                    if i:
                        groups.append(i)
            if op.results and id(op.results[0]) not in self.ids:
                self.ids[id(op.results[0])] = self.next_value
                self.next_value += 1
            if len(groups) > 1:
                self.groups[id(op)] = sorted(groups)

    def _head(self, value: Value) -> tuple[Value, int | None]:
        if not isinstance(value, OpResult) or value.owner is None or len(value.owner.results) == 1:
            return value, None
        owner = value.owner
        n = value.index
        groups = self.groups.get(id(owner))
        if groups is None:
            return owner.results[0], n
        start = max(g for g in groups if g <= n)
        later = [g for g in groups if g > n]
        size = (later[0] if later else len(owner.results)) - start
        return owner.results[start], (n - start if size != 1 else None)

    def ref(self, value: Value, result_no: bool = True) -> str:
        """``%name``, ``%3`` or ``%3#1``: how a use of ``value`` is printed."""
        head, no = self._head(value)
        ident = self.ids.get(id(head))
        if ident is None:
            text = value.name if value.name.startswith("%") else "%" + value.name
            return text
        text = f"%{ident}"
        if no is not None and result_no:
            text += f"#{no}"
        return text

    def results(self, op: Operation) -> str:
        """``%0``, ``%0:2`` or ``%a, %b`` (the result groups of ``op``)."""
        n = len(op.results)
        groups = self.groups.get(id(op), [0])
        parts = []
        for i, start in enumerate(groups):
            end = groups[i + 1] if i + 1 < len(groups) else n
            text = self.ref(op.results[start], result_no=False)
            parts.append(text + (f":{end - start}" if end - start > 1 else ""))
        return ", ".join(parts)


# ---------------------------------------------------------------------------
# Printer
# ---------------------------------------------------------------------------


def _is_terminator(op: Operation) -> bool:
    return op.opdef is not None and "Terminator" in op.opdef.traits


def implicit_terminator(op: Operation | None) -> str | None:
    """Full name of the terminator MLIR's parser adds to a block of ``op`` that
    has none (``SingleBlockImplicitTerminator<...>``, first listed), else ``None``."""
    if op is None or op.opdef is None:
        return None
    for t in op.opdef.traits:
        if t.startswith("SingleBlockImplicitTerminator<"):
            return "cuda_tile." + t.split("<", 1)[1].rstrip(">").split("|")[0]
    return None


#: The terminator the C++ parsers of ``if``, ``for`` and ``loop`` insert (``ensureTerminator``) in a
#: custom-form region that lacks one: the first type of ``SingleBlockImplicitTerminator<...>``.
IMPLICIT_TERMINATOR: dict[str, str] = {"cuda_tile.if": "cuda_tile.yield", "cuda_tile.for": "cuda_tile.continue",
                                       "cuda_tile.loop": "cuda_tile.continue"}


def adds_implicit_terminator(op: Operation) -> bool:
    """Whether ``op``'s parser inserts a default terminator (custom form of if/for/loop:
    :data:`IMPLICIT_TERMINATOR`)."""
    return not op.generic and op.name in IMPLICIT_TERMINATOR


def region_written(region: Region) -> bool:
    """Whether the region was written in the text (an absent optional region has no range)."""
    return region.range is not None or bool(region.blocks)


@lru_cache(maxsize=None)
def _format_ast(fmt: str) -> tuple:
    return tuple(parse_format(fmt))


def _segments(op: Operation, what: str) -> dict[str, tuple[int, int]]:
    """Operand (``what="operands"``) or result segments by ODS name, derived when the builder left none."""
    segs = op.operand_segments if what == "operands" else op.result_segments
    if segs or op.opdef is None:
        return segs
    defs = op.opdef.operands if what == "operands" else op.opdef.results
    values = op.operands if what == "operands" else op.results
    if not defs:
        return {}
    fixed = sum(1 for d in defs if getattr(d, "kind", "single") == "single")
    flexible = [d for d in defs if getattr(d, "kind", "single") != "single"]
    extra = len(values) - fixed
    out: dict[str, tuple[int, int]] = {}
    pos = 0
    for d in defs:
        kind = getattr(d, "kind", "single")
        if kind == "single":
            size = 1
        elif len(flexible) == 1:
            size = max(extra, 0)
        else:
            size = 0
        out[d.name] = (pos, size)
        pos += size
    return out


@dataclass
class _State:
    """Static spacing state of OpFormatGen: ``shouldEmitSpace`` and ``lastWasPunctuation``."""

    space: bool = True
    punct: bool = False
    out: list[str] = field(default_factory=list)


class Printer:
    """Prints operations of one module; ``generic`` selects MLIR's generic op form."""

    def __init__(self, namer: Namer, generic: bool = False,
                 loc_text: Callable[[Operation], str | None] | None = None):
        self.namer = namer
        self.generic = generic
        self.loc_text = loc_text  # op -> its ``loc(...)``, printed after it (--mlir-print-debuginfo)

    # -- blocks and regions -------------------------------------------------

    def op_lines(self, op: Operation, indent: int, default_dialect: str) -> str:
        text = " " * indent + self.op_text(op, indent, default_dialect)
        loc = self.loc_text(op) if self.loc_text is not None else None
        return f"{text} {loc}" if loc else text

    def region(self, region: Region, indent: int, print_args: bool, print_terms: bool,
               print_empty: bool, owner: Operation | None) -> str:
        """MLIR's ``printRegion``: ``{``, the blocks, then ``}`` at ``indent``."""
        dialect = "cuda_tile" if owner is not None and owner.dialect == "cuda_tile" else ""
        out = ["{\n"]
        for bi, block in enumerate(region.blocks):
            header = bi > 0 or (print_empty and not block.operations) or (print_args and bool(block.arguments))
            if header:
                label = self.namer.block_names.get(id(block), f"^bb{bi}")
                text = " " * indent + label
                if block.arguments:
                    text += "(" + ", ".join(f"{self.namer.ref(a)}: {a.type}" for a in block.arguments) + ")"
                out.append(text + ":\n")
            ops = list(block.operations)
            implicit = implicit_terminator(owner)
            if implicit is not None and not (ops and _is_terminator(ops[-1])):
                from tile_lsp.dialect.registry import lookup
                ops.append(Operation(name=implicit, opdef=lookup(implicit), parent=block))
            if not print_terms and ops:
                ops = ops[:-1]
            for op in ops:
                out.append(self.op_lines(op, indent + INDENT, dialect) + "\n")
        out.append(" " * indent + "}")
        return "".join(out)

    # -- one op -------------------------------------------------------------

    def op_text(self, op: Operation, indent: int, default_dialect: str) -> str:
        """The op without its indentation: results, name and body."""
        prefix = self.namer.results(op) + " = " if op.results else ""
        if self.generic or op.opdef is None or (op.opdef.format is None and op.short_name not in _CPP_PRINTERS):
            return prefix + self.generic_op(op, indent)
        name = op.name
        if default_dialect and name.startswith(default_dialect + "."):
            name = name[len(default_dialect) + 1:]
        if op.name == "builtin.module":
            return prefix + "module" + self._module_body(op, indent)
        if op.dialect == "cuda_tile" and op.short_name in _CPP_PRINTERS:
            return prefix + name + _CPP_PRINTERS[op.short_name](self, op, indent)
        return prefix + name + self.declarative(op, indent)

    def _module_body(self, op: Operation, indent: int) -> str:
        text = ""
        if op.attr("sym_name") is not None:
            text += " @" + op.attr("sym_name").value
        text += self.attr_dict(op, {"sym_name"}, keyword=True)
        return text + " " + self.region(op.regions[0], indent, True, True, False, op)

    def generic_op(self, op: Operation, indent: int) -> str:
        """``"dialect.op"(operands) <{properties}> ({regions}) {attrs} : (types) -> types``."""
        out = [string_literal(op.name), "(", ", ".join(self.namer.ref(v) for v in op.operands), ")"]
        if op.successors:
            out.append("[" + ", ".join(self.namer.block_names.get(id(b), "^bb?") for b in op.successors) + "]")
        props = self.generic_properties(op)
        if props:
            out.append(" <" + dict_text(props, {a.name: a.kind for a in op.opdef.attributes} if op.opdef else None) + ">")
        if op.regions:
            out.append(" (" + ", ".join(self.region(r, indent, True, True, True, op) for r in op.regions) + ")")
        if op.attributes:
            out.append(" " + dict_text(op.attributes))
        ins = ", ".join(str(v.type) for v in op.operands)
        res = [str(r.type) for r in op.results]
        outs = res[0] if len(res) == 1 and not res[0].startswith("(") else "(" + ", ".join(res) + ")"
        out.append(f" : ({ins}) -> {outs}")
        return "".join(out)

    def generic_properties(self, op: Operation) -> dict[str, A.Attribute]:
        """Inherent attributes as the generic form shows them: defaults filled in,
        ``operandSegmentSizes`` for ops with several variable operand groups,
        the implicit attributes of function-like ops."""
        if op.opdef is None:
            return dict(op.properties)
        props = {k: v for k, v in op.properties.items() if not k.startswith("__")}
        for a in op.opdef.attributes:
            if a.name not in props:
                d = default_attr(op.opdef, a.name)
                if d is not None:
                    props[a.name] = d
        if "AttrSizedOperandSegments" in op.opdef.traits:
            segs = _segments(op, "operands")
            props["operandSegmentSizes"] = A.DenseArrayAttr(T.IntegerType(32), [segs.get(d.name, (0, 0))[1] for d in op.opdef.operands])
        if op.short_name in ("entry", "testing$func") and "arg_attrs" not in props:
            props["arg_attrs"] = A.ArrayAttr([])
        for k, v in list(props.items()):
            if isinstance(v, A.SymbolNameAttr):
                props[k] = A.StringAttr(v.value)
        return props

    # -- attr-dict ----------------------------------------------------------

    def attr_dict(self, op: Operation, elided: set[str], keyword: bool = False, segments: bool = False) -> str:
        """``printOptionalAttrDict[WithKeyword]``: leading space, sorted, elisions applied.

        ``segments``: keep ``operandSegmentSizes`` (formats whose ``operands``
        directive does not show the operand groups)."""
        entries = {}
        for k, v in {**op.properties, **op.attributes}.items():
            if k in elided or k.startswith("__") or k in ("operandSegmentSizes", "resultSegmentSizes"):
                continue
            d = default_attr(op.opdef, k) if op.opdef else None
            if d is not None and same_attr(d, v, attr_kind(op.opdef, k)):
                continue
            entries[k] = v
        if segments and op.opdef is not None and "AttrSizedOperandSegments" in op.opdef.traits:
            segs = _segments(op, "operands")
            entries["operandSegmentSizes"] = A.DenseArrayAttr(
                T.IntegerType(32), [segs.get(d.name, (0, 0))[1] for d in op.opdef.operands])
        if not entries:
            return ""
        kinds = {a.name: a.kind for a in op.opdef.attributes} if op.opdef else None
        return (" attributes " if keyword else " ") + dict_text(entries, kinds)

    # -- declarative formats ------------------------------------------------

    def _used_names(self, elems, acc: set[str]) -> set[str]:
        for e in elems:
            if isinstance(e, Var):
                acc.add(e.name)
            elif isinstance(e, Directive):
                self._used_names(e.args, acc)
            elif isinstance(e, OptionalGroup):
                self._used_names(e.then, acc)
                self._used_names(e.else_, acc)
            elif isinstance(e, OIList):
                acc.update(v for _, v in e.clauses)
        return acc

    def declarative(self, op: Operation, indent: int) -> str:
        """Print ``op`` by its declarative format (OpFormatGen's printer)."""
        elems = _format_ast(op.opdef.format)
        st = _State()
        self._elements(op, elems, st, indent, self._used_names(elems, set()), first=elems[0] if elems else None)
        return "".join(st.out)

    def _operand_group(self, op: Operation, name: str) -> list[Value] | None:
        segs = _segments(op, "operands")
        if name in segs:
            s, n = segs[name]
            return op.operands[s:s + n]
        if name == "operands" and op.opdef is not None and not op.opdef.operands:
            return list(op.operands)
        return None

    def _result_group(self, op: Operation, name: str) -> list[Value] | None:
        segs = _segments(op, "results")
        if name in segs:
            s, n = segs[name]
            return op.results[s:s + n]
        return None

    def _present(self, op: Operation, e) -> bool:
        if isinstance(e, Var):
            g = self._operand_group(op, e.name)
            if g is not None:
                return bool(g)
            g = self._result_group(op, e.name)
            if g is not None:
                return bool(g)
            rd = next((i for i, r in enumerate(op.opdef.regions) if r.name == e.name), None) if op.opdef else None
            if rd is not None:
                return rd < len(op.regions) and bool(op.regions[rd].blocks)
            a = op.attr(e.name)
            if a is None:
                return False
            d = default_attr(op.opdef, e.name)
            return d is None or not same_attr(a, d, attr_kind(op.opdef, e.name))
        if isinstance(e, Directive):
            if e.name in ("operands", "results"):
                return bool(op.operands if e.name == "operands" else op.results)
            for arg in e.args:
                if self._present(op, arg):
                    return True
            return False
        if isinstance(e, OptionalGroup):
            return self._anchor_present(op, e)
        return True

    def _anchor(self, group: OptionalGroup):
        for e in group.then:
            if getattr(e, "anchor", False):
                return e
            if isinstance(e, OptionalGroup):
                a = self._anchor(e)
                if a is not None:
                    return a
        return next((e for e in group.then if not isinstance(e, Literal)), None)

    def _anchor_present(self, op: Operation, group: OptionalGroup) -> bool:
        anchor = self._anchor(group)
        return anchor is not None and self._present(op, anchor)

    def _is_unit(self, op: Operation, name: str) -> bool:
        return attr_kind(op.opdef, name) == "unit"

    def _elements(self, op, elems, st: _State, indent: int, used: set[str], first) -> None:
        for e in elems:
            self._element(op, e, st, indent, used, first)

    def _element(self, op, e, st: _State, indent: int, used: set[str], first) -> None:
        if isinstance(e, Literal):
            text = e.text
            if text in ("", " "):
                if text == " ":
                    st.out.append(" ")
                    st.punct = False
                else:
                    st.punct = True
                st.space = False
                return
            if text == "\\n":
                st.out.append("\n" + " " * indent)
                return
            if st.space and space_before_literal(text, st.punct):
                st.out.append(" ")
            st.out.append(text)
            st.space = len(text) != 1 or text not in "<({["
            st.punct = text[0] != "_" and not text[0].isalpha()
            return
        if isinstance(e, OptionalGroup):
            anchor = self._anchor(e)
            elided = anchor if (isinstance(anchor, Var) and anchor is not first
                                and self._is_unit(op, anchor.name)) else None
            present = self._anchor_present(op, e)
            for branch, shown in ((e.then, present), (e.else_, not present)):
                saved = st.out
                if not shown:
                    st.out = []
                for child in branch:
                    if child is elided:
                        continue
                    if isinstance(child, OptionalGroup) and not shown:
                        # a group parse_format nested into this one (same leading
                        # literal) is a sibling in the real format: printed on its own
                        hidden, st.out = st.out, saved
                        self._element(op, child, st, indent, used, first)
                        st.out = hidden
                    else:
                        self._element(op, child, st, indent, used, first)
                st.out = saved
            return
        if isinstance(e, OIList):
            for kw, var in e.clauses:
                saved = st.out
                if not self._present(op, Var(var)):
                    st.out = []
                self._element(op, Literal(kw), st, indent, used, first)
                if not self._is_unit(op, var):
                    self._element(op, Var(var), st, indent, used, first)
                st.out = saved
            return
        if isinstance(e, Directive) and e.name in ("attr-dict", "attr-dict-with-keyword"):
            bare_operands = any(isinstance(x, Directive) and x.name == "operands" for x in _format_ast(op.opdef.format))
            st.out.append(self.attr_dict(op, used, keyword=e.name == "attr-dict-with-keyword", segments=bare_operands))
            st.punct = False
            return
        text = self._element_text(op, e, indent)
        if not text and isinstance(e, Directive) and e.name == "operands":
            return  # no operands: nothing printed, no space
        if st.space or not st.punct:
            st.out.append(" ")
        st.punct = False
        st.space = True
        st.out.append(text)

    def types_of(self, op: Operation, e, short: bool) -> list[str]:
        """The printed types of ``e`` (``$x``, ``type($x)``, ``operands``/``results``) of ``op``:
        the short cuda_tile spelling when ``short``, MLIR's otherwise."""
        if isinstance(e, Directive) and e.name == "type":
            e = e.args[0]
        if isinstance(e, Directive) and e.name in ("operands", "results"):
            return [t.type.short() if short else str(t.type) for t in (op.operands if e.name == "operands"
                                                                          else op.results)]
        name = e.name if isinstance(e, Var) else "operands"
        g = self._operand_group(op, name)
        if g is None:
            g = self._result_group(op, name) or []
        return [t.type.short() if short else str(t.type) for t in g]

    def _element_text(self, op: Operation, e, indent: int) -> str:
        if isinstance(e, Var):
            g = self._operand_group(op, e.name)
            if g is not None:
                return ", ".join(self.namer.ref(v) for v in g)
            rd = next((i for i, r in enumerate(op.opdef.regions) if r.name == e.name), None)
            if rd is not None:
                return self.implicit_terminator_region(op, op.regions[rd], indent, True)
            return self._var_attr(op, e.name)
        if isinstance(e, Directive):
            if e.name == "type":
                return ", ".join(self.types_of(op, e.args[0], short=False))
            if e.name == "operands":
                return ", ".join(self.namer.ref(v) for v in op.operands)
            if e.name == "functional-type":
                ins, outs = (self.types_of(op, a, short=False) for a in e.args)
                return f"({', '.join(ins)}) -> " + (outs[0] if len(outs) == 1 and not outs[0].startswith("(")
                                                    else f"({', '.join(outs)})")
            if e.name == "regions":
                return ", ".join(self.region(r, indent, True, True, False, op) for r in op.regions)
            if e.name == "custom":
                return DIRECTIVES[e.custom].print(self, op, e.args, indent)
        raise ValueError(f"{op.name}: cannot print format element {e!r}")

    def _var_attr(self, op: Operation, name: str) -> str:
        a = op.attr(name)
        kind = attr_kind(op.opdef, name)
        if a is None:
            return ""
        if isinstance(a, A.SymbolNameAttr) or kind == "symbol_name":
            return "@" + a.value
        if isinstance(a, A.EnumAttr) or (kind or "").startswith("enum:"):
            enum = enum_of(a, kind)
            case = a.case if isinstance(a, A.EnumAttr) else str(a)
            if isinstance(a, A.DialectAttr):
                case = a.body or ""
            return f"<{case}>" if enum is not None and enum.attr_mnemonic else case
        if isinstance(a, A.DenseArrayAttr):
            return "[" + ", ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in a.values) + "]"
        if isinstance(a, (A.IntegerAttr, A.FloatAttr)):
            return attr_text(a, kind, elide_type=True)
        if isinstance(a, A.DialectAttr) and a.dialect == "cuda_tile" and a.body is not None:
            return f"<{a.body}>"  # printStrippedAttrOrType: no #cuda_tile.<mnemonic>
        text = attr_text(a, kind)
        if kind == "opt_hints" and text.startswith("#cuda_tile.optimization_hints"):
            return text[len("#cuda_tile.optimization_hints"):]
        return text

    def implicit_terminator_region(self, op: Operation, region: Region, indent: int, print_args: bool,
                                   term: tuple[str, ...] | None = None) -> str:
        """A region printed the ODS way for SingleBlockImplicitTerminator ops: the
        terminator is hidden when it has no operands, results or attributes."""
        show = True
        implicit = [t for t in (op.opdef.traits if op.opdef else ()) if t.startswith("SingleBlockImplicitTerminator")]
        if region.blocks and (implicit or term):
            ops = region.blocks[0].operations
            names = term or tuple(implicit[0].split("<", 1)[1].rstrip(">").split("|"))
            if not ops or not _is_terminator(ops[-1]):
                show = False  # the implicit terminator is added without operands
            else:
                t = ops[-1]
                if t.short_name in names and not t.operands and not t.results and not t.attributes:
                    show = False
        return self.region(region, indent, print_args, show, False, op)


# ---------------------------------------------------------------------------
# Ops printed by C++ code (cuda_tile_ops.CUSTOM_SYNTAX "print:" sections)
# ---------------------------------------------------------------------------


def _opt_hints_text(a: A.Attribute | None) -> str:
    """``<k = {a = v}, ...>`` from the hints attribute (values printed without type)."""
    if a is None:
        return ""
    if isinstance(a, A.DictAttr):
        if not a.entries:
            return ""
        parts = []
        for k, v in a.entries.items():
            if isinstance(v, A.DictAttr):
                inner = ", ".join(kk if isinstance(vv, A.UnitAttr) else f"{kk} = {attr_text(vv, elide_type=True)}"
                                  for kk, vv in sorted(v.entries.items()))
                parts.append(f"{k} = {{{inner}}}")
            else:
                parts.append(f"{k} = {attr_text(v)}")
        return "<" + ", ".join(parts) + ">"
    text = str(a)
    if text.startswith("#cuda_tile.optimization_hints"):
        text = text[len("#cuda_tile.optimization_hints"):]
    return "" if text in ("", "<>") else text


def _func_like(p: Printer, op: Operation, indent: int) -> str:
    region = op.regions[0]
    args = region.blocks[0].arguments if region.blocks else []
    ft = op.attr("function_type")
    results = list(ft.value.results) if isinstance(ft, A.TypeAttr) and isinstance(ft.value, T.FunctionType) else []
    if not args and isinstance(ft, A.TypeAttr) and isinstance(ft.value, T.FunctionType):
        sig = ", ".join(t.short() for t in ft.value.inputs)
    else:
        sig = ", ".join(f"{p.namer.ref(a)}: {a.type.short()}" for a in args)
    text = f" @{op.attr('sym_name').value}({sig})"
    if len(results) == 1 and not isinstance(results[0], T.FunctionType):
        text += " -> " + results[0].short()
    elif results:
        text += " -> (" + ", ".join(t.short() for t in results) + ")"
    hints = _opt_hints_text(op.attr("optimization_hints"))
    if hints:
        text += " optimization_hints=" + hints
    text += " " + p.region(region, indent, False, True, False, op)
    return text + p.attr_dict(op, {"sym_name", "function_type", "arg_attrs", "res_attrs", "optimization_hints"})


def _for(p: Printer, op: Operation, indent: int) -> str:
    lb, ub, step = op.operands[:3]
    inits = op.operands[3:]
    region = op.regions[0]
    args = region.blocks[0].arguments if region.blocks else []
    text = " unsigned" if op.attr("unsignedCmp") is not None else ""
    iv = p.namer.ref(args[0]) if args else "%iv"
    text += f" {iv} in ({p.namer.ref(lb)} to {p.namer.ref(ub)}, step {p.namer.ref(step)}) : {lb.type.short()} "
    if inits:
        pairs = ", ".join(f"{p.namer.ref(a)} = {p.namer.ref(v)}" for a, v in zip(args[1:], inits))
        text += f"iter_values({pairs}) -> (" + ", ".join(r.type.short() for r in op.results) + ") "
    text += p.implicit_terminator_region(op, region, indent, False, term=("continue",))
    return text + p.attr_dict(op, {"unsignedCmp"})


def _loop(p: Printer, op: Operation, indent: int) -> str:
    region = op.regions[0]
    args = region.blocks[0].arguments if region.blocks else []
    inits = op.operands
    text = " "
    if inits:
        text += "iter_values(" + ", ".join(f"{p.namer.ref(a)} = {p.namer.ref(v)}" for a, v in zip(args, inits)) + ") "
    if inits or op.results:
        text += ": "
    if inits:
        text += ", ".join(v.type.short() for v in inits) + " "
        if op.results:
            text += "-> "
    if op.results:
        text += ", ".join(r.type.short() for r in op.results) + " "
    text += p.implicit_terminator_region(op, region, indent, False, term=("continue",))
    return text + p.attr_dict(op, set())


def _index_types(indices: list[Value]) -> str:
    if not indices:
        return ""
    types = [v.type.short() for v in indices]
    if all(t == types[0] for t in types):
        return ", " + types[0]
    return "".join(", " + t for t in types)


def _memsem(op: Operation) -> str:
    text = " " + case_of(op.attr("memory_ordering_semantics"))
    scope = case_of(op.attr("memory_scope"))
    return text + (" " + scope if scope else "")


_VIEW_ELIDED = {"memory_ordering_semantics", "memory_scope", "optimization_hints", "operandSegmentSizes", "mode"}


def _token_clause(p: Printer, op: Operation) -> str:
    tok = op.operand_group("token")
    return f" token = {p.namer.ref(tok[0])}" if tok else ""


def _inbounds(op: Operation) -> str:
    a = op.attr("inbounds")
    if a is None:
        return ""
    vals = a.values if isinstance(a, A.DenseArrayAttr) else [e for e in getattr(a, "elements", [])]
    if not any(bool(getattr(v, "value", v)) for v in vals):
        return ""
    return " inbounds = [" + ", ".join("true" if getattr(v, "value", v) else "false" for v in vals) + "]"


def _view_access(p: Printer, op: Operation, view: Value, idx: list[Value], lead: str = "") -> str:
    """The body of ``load_view_tko``/``store_view_tko`` up to the ``:``: semantics, ``lead`` (the
    stored tile), ``view[indices]``, token, ``inbounds``, hints and the attribute dictionary."""
    text = _memsem(op) + f" {lead}{p.namer.ref(view)}[" + ", ".join(p.namer.ref(v) for v in idx) + "]"
    text += _token_clause(p, op) + _inbounds(op)
    hints = _opt_hints_text(op.attr("optimization_hints"))
    if hints:
        text += " optimization_hints = " + hints
    return text + p.attr_dict(op, _VIEW_ELIDED | {"inbounds"}, keyword=True)


def _load_view(p: Printer, op: Operation, indent: int) -> str:
    view = op.operand_group("view")[0]
    idx = op.operand_group("index")
    text = _view_access(p, op, view, idx)
    text += f" : {view.type.short()}{_index_types(idx)} -> " + ", ".join(r.type.short() for r in op.results)
    return text


def _store_view(p: Printer, op: Operation, indent: int) -> str:
    tile = op.operand_group("tile")[0]
    view = op.operand_group("view")[0]
    idx = op.operand_group("index")
    text = _view_access(p, op, view, idx, f"{p.namer.ref(tile)}, ")
    text += f" : {tile.type.short()}, {view.type.short()}{_index_types(idx)} -> " + op.results[0].type.short()
    return text


def _atomic_red_view(p: Printer, op: Operation, indent: int) -> str:
    view = op.operand_group("view")[0]
    idx = op.operand_group("index")
    value = op.operand_group("value")[0]
    text = _memsem(op) + f" {p.namer.ref(view)}[" + ", ".join(p.namer.ref(v) for v in idx) + "]"
    text += f", {case_of(op.attr('mode'))}, {p.namer.ref(value)}" + _token_clause(p, op)
    text += p.attr_dict(op, _VIEW_ELIDED, keyword=True)
    text += f" : {value.type.short()}, {view.type.short()}{_index_types(idx)} -> " + op.results[0].type.short()
    return text


def _make_tensor_view(p: Printer, op: Operation, indent: int) -> str:
    base = op.operands[0]
    ty = op.results[0].type
    dyn_shape = list(op.operand_group("dynamicShape"))
    dyn_strides = list(op.operand_group("dynamicStrides"))

    def entries(static, dynamic):
        out = []
        for d in static:
            out.append(p.namer.ref(dynamic.pop(0)) if d is None and dynamic else ("?" if d is None else str(d)))
        return ", ".join(out)

    shape = getattr(ty, "shape", ())
    strides = getattr(ty, "strides", ())
    first_dyn = (op.operand_group("dynamicShape") + op.operand_group("dynamicStrides"))
    text = f" {p.namer.ref(base)}, shape = [{entries(shape, dyn_shape)}], strides = [{entries(strides, dyn_strides)}]"
    text += p.attr_dict(op, {"operandSegmentSizes"})
    text += " : " + (first_dyn[0].type.short() + " -> " if first_dyn else "") + ty.short()
    return text


def _make_view(p: Printer, op: Operation, indent: int) -> str:
    return f" {p.namer.ref(op.operands[0])}" + p.attr_dict(op, set()) + " : " + op.results[0].type.short()


def _get_shape(p: Printer, op: Operation, indent: int) -> str:
    src = op.operands[0]
    res = op.results[0].type.short() if op.results else ""
    return f" {p.namer.ref(src)} : {src.type.short()} -> {res}"


_CPP_PRINTERS: dict[str, Callable[[Printer, Operation, int], str]] = {
    "entry": _func_like,
    "testing$func": _func_like,
    "for": _for,
    "loop": _loop,
    "load_view_tko": _load_view,
    "store_view_tko": _store_view,
    "atomic_red_view_tko": _atomic_red_view,
    "make_tensor_view": _make_tensor_view,
    "make_partition_view": _make_view,
    "make_strided_view": _make_view,
    "make_gather_scatter_view": _make_view,
    "get_tensor_shape": _get_shape,
    "get_index_space_shape": _get_shape,
}


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def top_level_ops(module: Module) -> list[Operation]:
    """The ops of the implicit ``builtin.module``: an explicit top-level
    ``builtin.module`` (alone in the chunk) stands for it."""
    ops = module.body.operations
    if len(ops) == 1 and ops[0].name == "builtin.module" and not ops[0].attributes and ops[0].attr("sym_name") is None:
        return ops[0].regions[0].blocks[0].operations if ops[0].regions and ops[0].regions[0].blocks else []
    return ops


def print_module(module: Module, generic: bool = False,
                 loc_text: Callable[[Operation], str | None] | None = None) -> str:
    """Print ``module`` inside MLIR's implicit ``module { ... }`` (generic:
    ``"builtin.module"() ({ ... }) : () -> ()``), ending with a newline.

    ``loc_text``: gives an op's location text (``loc(#loc3)``), printed after
    the op as ``--mlir-print-debuginfo`` does; ``None``: no locations.
    """
    block = Block(operations=top_level_ops(module))
    namer = Namer([block], generic)
    printer = Printer(namer, generic, loc_text)
    body = "".join(printer.op_lines(op, INDENT, "") + "\n" for op in block.operations)
    if generic:
        return '"builtin.module"() ({\n' + body + "}) : () -> ()\n"
    return "module {\n" + body + "}\n"


def print_op(op: Operation, generic: bool = False, indent: int = 0) -> str:
    """Print one op (and its regions) on its own, values numbered from the op."""
    namer = Namer([Block(operations=[op])], generic)
    default = "cuda_tile" if op.parent_op is not None and op.parent_op.dialect == "cuda_tile" else ""
    return " " * indent + Printer(namer, generic).op_text(op, indent, default)


def print_chunks(modules: list[Module], generic: bool = False) -> str:
    """The prints of several ``// -----`` chunks as ``cuda-tile-opt -split-input-file`` joins them."""
    return CHUNK_SEPARATOR.join(print_module(m, generic) + "\n" for m in modules)
