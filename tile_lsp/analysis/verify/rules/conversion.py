"""Conversions: exti, trunci, ftof, itof, ftoi (int_to_ptr, ptr_to_int, ptr_to_ptr are ODS-only).

Rules of NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``:
``ExtIOp::verify``, ``TruncIOp::verify``, ``FToFOp::verify``,
``IToFOp::verify``, ``FToIOp::verify``.  Operand/result element kinds and
``AllShapesMatch<from, to>`` come from the op table (ODS) and are checked by
the framework before these rules.
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.dialect import types as T

F8E8M0FNU = T.FloatType("f8E8M0FNU")

# Rounding modes each conversion accepts in its verifier: op -> (modes, message).
# ftof to f8E8M0FNU has its own set (FTOF_TO_E8M0_ROUNDING).
ROUNDING_RULES: dict[str, tuple[tuple[str, ...], str]] = {
    "cuda_tile.itof": (("nearest_even",), "invalid rounding mode specified. Only 'nearest_even' is supported"),
    "cuda_tile.ftof": (("nearest_even",), "invalid rounding mode specified. Only 'nearest_even' is supported"),
    "cuda_tile.ftoi": (("nearest_int_to_zero",),
                       "invalid rounding mode specified. Only 'nearest_int_to_zero' is supported"),
}
# Tile IR 13.4+ (INFERRED from ../shared/corpus/kernels: tileirdisasm 13.5 prints
# ``ftof ... rounding<zero> : tile<256xf32> -> tile<256xf16>`` in kernels that tileiras
# 13.5 compiles) accepts the IEEE rounding modes on ftof; the public 13.3 verifier above
# (what cuda-tile-opt and the oracle apply) accepts only nearest_even.
FTOF_ROUNDING_SINCE_13_4 = ("nearest_even", "zero", "negative_inf", "positive_inf")
PUBLIC_VERIFIER_VERSION = (13, 3)
FTOF_TO_E8M0_ROUNDING = (("zero", "positive_inf"),
                         "invalid rounding mode specified for conversion to f8E8M0FNU. "
                         "Only 'zero' and 'positive_inf' are supported")

# Integer width rules: op -> (predicate on (from width, to width) that is an error, message).
WIDTH_RULES = {
    "cuda_tile.exti": (lambda src, dst: dst <= src, "extending to smaller or identical integer"),
    "cuda_tile.trunci": (lambda src, dst: dst >= src, "truncating to larger or identical integer"),
}


def public_verifier_rules(ctx: VerifyContext) -> bool:
    """Whether to apply the public 13.3 verifier where newer tools are known to accept more.

    True when the targeted Tile IR version (``--tile-version``) is 13.3 or
    older, as for NVIDIA's 13.3 dialect tests; the newest version (the
    default) follows what NVIDIA's 13.5 tools accept.
    """
    options = ctx.options
    version = options.tile_version
    if not version:
        return False
    try:
        parts = tuple(int(x) for x in str(version).split(".")[:2])
    except ValueError:
        return False
    return parts <= PUBLIC_VERIFIER_VERSION


def _from_to(op: Operation) -> tuple[T.Type, T.Type]:
    src = op.operand_group("from")
    dst = op.result_group("to")
    return (src[0].type if src else T.UNKNOWN, dst[0].type if dst else T.UNKNOWN)


def _rounding(op: Operation) -> str | None:
    """The rounding mode of ``op``: the case of its ``rounding_mode`` (custom or generic form,
    :func:`tile_lsp.analysis.ir.attributes.enum_case`), the ODS default when absent, else the
    attribute's text (no mode a rule allows)."""
    a = op.attr("rounding_mode")
    if a is None:
        opdef = op.opdef.attribute("rounding_mode") if op.opdef else None
        return opdef.default if opdef is not None else None
    case = A.enum_case(a)
    return case if case is not None else str(a)


@rule("cuda_tile.exti", "cuda_tile.trunci")
def integer_width_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``ExtIOp::verify`` / ``TruncIOp::verify``: the width must grow / shrink."""
    src, dst = _from_to(op)
    if not isinstance(src, T.TileType) or not isinstance(dst, T.TileType):
        return
    if not isinstance(src.element, T.IntegerType) or not isinstance(dst.element, T.IntegerType):
        return
    bad, message = WIDTH_RULES[op.name]
    if bad(src.element.width, dst.element.width):
        ctx.op_error(op, message)


def _check_rounding(op: Operation, ctx: VerifyContext, allowed: tuple[str, ...], message: str) -> None:
    mode = _rounding(op)
    if mode is not None and mode not in allowed:
        ctx.op_error(op, message)


@rule("cuda_tile.ftof")
def ftof_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``FToFOp::verify``: not a no-op; rounding by target type.

    Outside :func:`public_verifier_rules`, rounding modes other than
    ``nearest_even`` are accepted for non-f8E8M0FNU targets (Tile IR 13.4+).
    """
    src, dst = _from_to(op)
    if T.UNKNOWN in (src, dst):
        return
    if src == dst:
        ctx.op_error(op, "converting tiles must not be a no-op")
    if isinstance(dst, T.TileType) and dst.element == F8E8M0FNU:
        _check_rounding(op, ctx, *FTOF_TO_E8M0_ROUNDING)
    elif public_verifier_rules(ctx):
        _check_rounding(op, ctx, *ROUNDING_RULES[op.name])
    else:
        _check_rounding(op, ctx, FTOF_ROUNDING_SINCE_13_4, ROUNDING_RULES[op.name][1])


@rule("cuda_tile.itof")
def itof_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``IToFOp::verify``: no f8E8M0FNU result; nearest_even rounding only."""
    _, dst = _from_to(op)
    if isinstance(dst, T.TileType) and dst.element == F8E8M0FNU:
        ctx.op_error(op, "integer to f8E8M0FNU conversion is not supported, please first convert to another "
                         "float type")
    _check_rounding(op, ctx, *ROUNDING_RULES[op.name])


@rule("cuda_tile.ftoi")
def ftoi_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``FToIOp::verify``: nearest_int_to_zero rounding only."""
    _check_rounding(op, ctx, *ROUNDING_RULES[op.name])
