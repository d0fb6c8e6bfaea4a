"""``reduce`` and ``scan``: operands, identities, dimension, combining region.

Rules of NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``:
``verifyAggregateOp`` (``ReduceOp::verify``/``ScanOp::verify``),
``verifyAggregateOpRegions`` (``verifyRegions``) and ``inferReturnTypes``,
in the order MLIR runs them:

1. ODS invariants of ``Ops.td``: the ``dim`` attribute constraint
   (``ConfinedAttr<I32Attr, [IntNonNegative]>``) and the region constraint
   (``SizedRegion<1>``), then the ``SingleBlock`` trait;
2. ``verify()``;
3. after the nested ops: ``InferTypeOpInterface`` (declared with
   ``verifyWithRegions = 1`` in MLIR's ``InferTypeOpInterface.td``), the
   ``SingleBlockImplicitTerminator<YieldOp>`` region trait, then
   ``verifyRegions()`` (block arguments, terminator, purity of nested ops).
"""

from __future__ import annotations

from typing import Callable

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.diagnostics import Severity
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.rules.control_flow import (
    check_terminator_kind,
    is_terminator,
    structural_checks,
    type_list,
)
from tile_lsp.analysis.verify.verifier import VerifyContext, region_rule, rule
from tile_lsp.dialect import types as T

REDUCE = "cuda_tile.reduce"
SCAN = "cuda_tile.scan"
AGGREGATE_OPS = (REDUCE, SCAN)

# ODS attribute constraints of these ops (Ops.td): attribute -> (predicate, constraint summary).
# The predicate gets the attribute and whether the op is in generic form (where an
# integer written without a type is an i64, while a custom format builds the attribute
# with its declared type).
ATTRIBUTE_CONSTRAINTS: dict[str, dict[str, tuple[Callable[[A.Attribute, bool], bool], str]]] = {}


def _i32_non_negative(a: A.Attribute, generic: bool) -> bool:
    """``ConfinedAttr<I32Attr, [IntNonNegative]>``: an i32 integer attribute >= 0."""
    if not isinstance(a, A.IntegerAttr):
        return False
    if a.type is None and generic:
        return False
    if a.type is not None and a.type != T.IntegerType(32):
        return False
    return a.value >= 0


_I32_NON_NEGATIVE = (_i32_non_negative, "32-bit signless integer attribute whose value is non-negative")
for _op in AGGREGATE_OPS:
    ATTRIBUTE_CONSTRAINTS[_op] = {"dim": _I32_NON_NEGATIVE}

# Ops whose results ``verify()`` requires equal to their operands (scan keeps the shape).
REQUIRES_MATCHING_RETURN_SHAPE = {REDUCE: False, SCAN: True}


def _infer_reduce(operands: list[T.Type], dim: int) -> list[T.Type]:
    """``ReduceOp::inferReturnTypes``: each operand without dimension ``dim``."""
    out = []
    for t in operands:
        shape = tuple(d for i, d in enumerate(t.shape) if i != dim)
        out.append(T.TileType(shape, t.element))
    return out


def _infer_scan(operands: list[T.Type], dim: int) -> list[T.Type]:
    """``ScanOp::inferReturnTypes``: the operand types."""
    return list(operands)


INFER_RESULT_TYPES: dict[str, Callable[[list[T.Type], int], list[T.Type]]] = {
    REDUCE: _infer_reduce,
    SCAN: _infer_scan,
}


def _known(types) -> bool:
    return all(t != T.UNKNOWN for t in types)


def _dim(op: Operation) -> int | None:
    a = op.attr("dim")
    return a.value if isinstance(a, A.IntegerAttr) else None


@rule(*AGGREGATE_OPS)
def aggregate_ods(op: Operation, ctx: VerifyContext) -> None:
    """ODS invariants of reduce/scan (Ops.td): ``dim`` constraint, region constraint, ``SingleBlock``."""
    for name, (accepts, summary) in ATTRIBUTE_CONSTRAINTS.get(op.name, {}).items():
        a = op.attr(name)
        if a is not None and not accepts(a, op.generic):
            ctx.op_error(op, f"attribute '{name}' failed to satisfy constraint: {summary}")
    structural_checks(op, ctx)


@rule(*AGGREGATE_OPS)
def aggregate_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``verifyAggregateOp`` (``ReduceOp::verify`` / ``ScanOp::verify``)."""
    operands = list(op.operands)
    results = [r.type for r in op.results]
    if not operands:
        ctx.op_error(op, "expect at least 1 operand")
    if len(operands) != len(results):
        ctx.op_error(op, "expect same number of operands and results")
    identities = op.attr("identities")
    if isinstance(identities, A.ArrayAttr):
        if len(identities.elements) != len(operands):
            ctx.op_error(op, "expect identities to match the number of operands but got: "
                             f"{len(operands)} operands and {len(identities.elements)} identities")
        for idx, (v, ident) in enumerate(zip(operands, identities.elements)):
            if v.type == T.UNKNOWN:
                continue
            if not isinstance(v.type, T.TileType):
                ctx.op_error(op, f"expected TileType for operand at index {idx} but got: '{v.type}'")
            ident_type = _typed_attr_type(ident)
            if ident_type is None:
                continue
            elem = v.type.element
            if {str(elem), str(ident_type)} == {"bf16", "f16"}:
                continue
            if elem != ident_type:
                ctx.op_error(op, f"expect same type for operand at index: {idx} and identity at index: {idx} "
                                 f"but got: '{elem}' and '{ident_type}'")
    first = operands[0].type
    if first == T.UNKNOWN:
        return
    if not isinstance(first, T.TileType):
        ctx.op_error(op, f"expected TileType for first operand but got: '{first}'")
    dim = _dim(op)
    if dim is None:
        return
    if dim < 0 or dim >= first.rank:
        ctx.op_error(op, f"dimension ({dim}) is out of bound [0, {first.rank})")
    if REQUIRES_MATCHING_RETURN_SHAPE.get(op.name):
        for idx, (v, r) in enumerate(zip(operands, results)):
            if not _known([v.type, r]):
                continue
            if not isinstance(v.type, T.TileType) or not isinstance(r, T.TileType):
                ctx.op_error(op, f"expected TileType for operand and result at index {idx} "
                                 f"but got: '{v.type}' and '{r}'")
            if v.type != r:
                ctx.op_error(op, f"expect same type for operand at index: {idx} and result at index: {idx}")


def _typed_attr_type(a: A.Attribute) -> T.Type | None:
    """The type of a ``TypedAttr`` (an untyped integer literal is ``i64``, a float ``f64``)."""
    if isinstance(a, A.IntegerAttr):
        return a.type if a.type is not None else T.IntegerType(64)
    if isinstance(a, A.FloatAttr):
        return a.type if a.type is not None else T.FloatType("f64")
    if isinstance(a, A.BoolAttr):
        return T.IntegerType(1)
    t = getattr(a, "type", None)
    return t if isinstance(t, T.Type) else None


@region_rule(*AGGREGATE_OPS)
def aggregate_infer_types(op: Operation, ctx: VerifyContext) -> None:
    """MLIR ``InferTypeOpInterface`` verifier (``verifyInferredResultTypes``), run with the regions.

    Reports ``'<op>' op inferred type(s) ... are incompatible with return
    type(s) of operation ...`` then ``failed to infer returned types``.
    """
    infer = INFER_RESULT_TYPES.get(op.name)
    operands = [v.type for v in op.operands]
    results = [r.type for r in op.results]
    dim = _dim(op)
    if infer is None or dim is None or not _known(operands) or not _known(results):
        return
    if not operands or not all(isinstance(t, T.TileType) for t in operands):
        ctx.op_error(op, "failed to infer returned types")
    inferred = infer(operands, dim)
    if inferred != results:
        ctx.emit(op, Severity.ERROR,
                 f"'{op.name}' op inferred type(s) {type_list(inferred)} are incompatible with return "
                 f"type(s) of operation {type_list(results)}", None, None)
        ctx.op_error(op, "failed to infer returned types")


@region_rule(*AGGREGATE_OPS)
def aggregate_terminator(op: Operation, ctx: VerifyContext) -> None:
    """MLIR ``SingleBlockImplicitTerminator<YieldOp>`` region trait: the body ends with ``yield``."""
    check_terminator_kind(op, ctx)


def _is_pure(op: Operation) -> bool:
    """MLIR ``isPure``: speculatable and free of memory effects (the ``Pure`` trait of Ops.td)."""
    return op.opdef is not None and op.opdef.has_trait("Pure")


@region_rule(*AGGREGATE_OPS)
def aggregate_verify_regions(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``verifyAggregateOpRegions`` (``ReduceOp/ScanOp::verifyRegions``)."""
    if not op.regions or not op.regions[0].blocks:
        return
    num_operands = len(op.operands)
    expected = num_operands * 2
    block = op.regions[0].blocks[0]
    if not block.operations:
        ctx.op_error(op, "expect non-empty block")
    args = [a.type for a in block.arguments]
    if len(args) != expected:
        ctx.op_error(op, f"expect {expected} block arguments but got: {len(args)}")
    for idx, t in enumerate(args):
        if t == T.UNKNOWN or (isinstance(t, T.TileType) and t.rank == 0):
            continue
        ctx.op_error(op, f"expect 0-rank tile type at index: {idx} but got: '{t}'")
    for idx in range(0, expected - 1, 2):
        a, b = args[idx], args[idx + 1]
        if not _known([a, b]):
            continue
        if a.element != b.element:
            ctx.op_error(op, f"expect same element type for block argument at index: {idx} and {idx + 1} "
                             f"but got: '{a.element}' and '{b.element}'")
    operand_types = [v.type for v in op.operands]
    for idx in range(num_operands):
        o, a = operand_types[idx], args[idx * 2]
        if not _known([o, a]):
            continue
        if not isinstance(o, T.TileType):
            ctx.op_error(op, "expected TileType for operand and block argument but got types: "
                             f"'{o}' and '{a}'")
        if o.element != a.element:
            ctx.op_error(op, f"expect same type for operand at index: {idx} and block argument at index: "
                             f"{idx * 2} but got: '{o.element}' and '{a.element}'")
    term = block.operations[-1]
    if not is_terminator(term):
        return
    term_types = [v.type for v in term.operands]
    if len(term_types) != num_operands:
        ctx.op_error(op, f"expect number of terminators operands ({len(term_types)}) to match number of "
                         f"operands ({num_operands})")
    for idx in range(num_operands):
        o, t = operand_types[idx], term_types[idx]
        if not _known([o, t]):
            continue
        if not isinstance(o, T.TileType) or not isinstance(t, T.TileType):
            ctx.op_error(op, f"expected TileType for operand and terminator types but got: '{o}' and '{t}'")
        if o.element != t.element:
            ctx.op_error(op, f"expect same type for operand at index: {idx} and terminator argument at "
                             f"index: {idx} but got: '{o.element}' and '{t.element}'")
    for inner in block.operations[:-1]:
        if not _is_pure(inner):
            ctx.op_error(inner, f"only pure operations are allowed inside '{op.name}'")
