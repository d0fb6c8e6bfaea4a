"""Rules of ``cuda_tile.alloca``: its ODS attribute constraints and its verifier.

Sources: NVIDIA Ops.td ``AllocaOp`` (``ConfinedAttr<I64Attr, [IntMinValue<0>]>``
on ``num_elem`` and ``alignment``) and SharedVerifiers.h ``verifyAlloca``.
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.dialect import types as T

# ODS ConfinedAttr summaries: attribute -> (minimum, summary)
I64_MIN_0 = (0, "64-bit signless integer attribute whose minimum value is 0")
ATTRIBUTE_MINIMUMS = {"num_elem": I64_MIN_0, "alignment": I64_MIN_0}


def natural_size_bytes(t: T.Type) -> int:
    """Size in bytes MLIR's verifier uses for a pointee: i1 counts 1, else width / 8; 0 otherwise."""
    if isinstance(t, T.IntegerType):
        return 1 if t.width == 1 else t.width // 8
    if isinstance(t, T.FloatType):
        return t.width // 8
    return 0


@rule("cuda_tile.alloca")
def alloca_attributes(op: Operation, ctx: VerifyContext) -> None:
    """ODS attribute constraints, in argument order (ConfinedAttr IntMinValue<0>)."""
    for name, (minimum, summary) in ATTRIBUTE_MINIMUMS.items():
        a = op.attr(name)
        if isinstance(a, A.IntegerAttr) and a.value < minimum:
            ctx.op_error(op, f"attribute '{name}' failed to satisfy constraint: {summary}")


@rule("cuda_tile.alloca")
def alloca_alignment(op: Operation, ctx: VerifyContext) -> None:
    """SharedVerifiers.h verifyAlloca: power-of-two alignment, at least the pointee's natural size."""
    a = op.attr("alignment")
    if not isinstance(a, A.IntegerAttr):
        return
    alignment = a.value
    if not (alignment > 0 and alignment & (alignment - 1) == 0):
        ctx.op_error(op, "'alignment' must be power of two")
    result = op.results[0].type if op.results else T.UNKNOWN
    ptr = T.element_of(result)
    if not isinstance(ptr, T.PointerType):
        return
    size = natural_size_bytes(ptr.pointee)
    if alignment < size:
        ctx.op_error(op, f"'alignment' ({alignment}) must be at least the natural size ({size} bytes) "
                         f"for element type '{ptr.pointee}'")
