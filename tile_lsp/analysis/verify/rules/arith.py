"""Arithmetic and math op rules: rounding modes, modifiers, overflow, signedness, mma.

Rule source: NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``
(``AddFOp::verify``, ``DivFOp::verify``, ``DivIOp::verify``, ``ExpOp::verify``,
``TanHOp::verify``, ``SqrtOp::verify``, ``NegIOp::verify``,
``verifyMmaShapes``, ``MmaFOp::verify``, ``MmaFScaledOp::verify``,
``MmaIOp::verify``) and ``include/cuda_tile/Dialect/CudaTile/IR/SharedVerifiers.h``
(``verifyFtz``, ``verifyApprox``, ``verifyDivSqrtCommonFPModifiers``).

The checks of each op run in the order of its C++ ``verify()``; the first
failing one is reported (``TanHOp::verify`` reports its rounding-mode error
without returning, so the approx check still runs after it).
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.analysis.ir.diagnostics import Severity
from tile_lsp.dialect import types as T

# ---------------------------------------------------------------------------
# Rule data
# ---------------------------------------------------------------------------

IEEE_MODES = ("nearest_even", "zero", "negative_inf", "positive_inf")

#: op -> (attribute, modes its verifier accepts, default when the attribute is absent).
#: The message lists the modes: "invalid rounding mode specified, expect one of [a, b]".
ROUNDING_MODES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "cuda_tile.addf": ("rounding_mode", IEEE_MODES, "nearest_even"),
    "cuda_tile.subf": ("rounding_mode", IEEE_MODES, "nearest_even"),
    "cuda_tile.mulf": ("rounding_mode", IEEE_MODES, "nearest_even"),
    "cuda_tile.fma": ("rounding_mode", IEEE_MODES, "nearest_even"),
    "cuda_tile.divf": ("rounding_mode", IEEE_MODES + ("approx", "full"), "nearest_even"),
    "cuda_tile.sqrt": ("rounding_mode", IEEE_MODES + ("approx",), "nearest_even"),
    "cuda_tile.divi": ("rounding", ("zero", "negative_inf", "positive_inf"), "zero"),
    "cuda_tile.exp": ("rounding_mode", ("approx", "full"), "full"),
    "cuda_tile.tanh": ("rounding_mode", ("approx", "full"), "full"),
}

MSG_ROUNDING = "invalid rounding mode specified, expect one of [{}]"
MSG_FTZ = "flush_to_zero modifier only supported for f32 data type, but got: '{}'"
MSG_APPROX = "approx modifier only supported for f32 data type, but got: '{}'"
MSG_FULL = "full modifier only supported for f32 data type, but got: '{}'"

#: MmaFOp::verify: lhs element type -> accumulator/result element types allowed.
MMAF_ACCUMULATORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("f4E2M1FN", ("f16", "f32")),
    ("f8E4M3FN", ("f16", "f32")),
    ("f8E5M2", ("f16", "f32")),
    ("f16", ("f16", "f32")),
    ("bf16", ("f32",)),
    ("tf32", ("f32",)),
    ("f32", ("f32",)),
    ("f64", ("f64",)),
)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def enum_case(attr: A.Attribute | None) -> str | None:
    """The case of an enum attribute: custom (``EnumAttr``) or generic (``#cuda_tile.rounding<x>``,
    as the builder decoded it), read by :func:`tile_lsp.analysis.ir.attributes.enum_case`; or the
    value of a string attribute.  ``None`` for another attribute."""
    if isinstance(attr, A.StringAttr):
        return attr.value
    return A.enum_case(attr)


def has_unit(op: Operation, name: str) -> bool:
    """Whether the unit attribute ``name`` is set (``flush_to_zero``)."""
    a = op.attr(name)
    return a is not None and not (isinstance(a, A.BoolAttr) and not a.value)


def result_element(op: Operation) -> T.Type | None:
    """``getElementTypeOrSelf(op.getResult().getType())``; ``None`` when unknown."""
    if not op.results:
        return None
    t = op.results[0].type
    return None if t == T.UNKNOWN else T.element_of(t)


def _is_f32(t: T.Type | None) -> bool:
    return isinstance(t, T.FloatType) and t.name == "f32"


def rounding_mode(op: Operation) -> str | None:
    attr_name, _, default = ROUNDING_MODES[op.name]
    a = op.attr(attr_name)
    return default if a is None else enum_case(a)


def check_rounding(op: Operation, ctx: VerifyContext, stop: bool = True) -> None:
    """The op's accepted rounding modes (``verifyIEEERoundingModes`` and the per-op lists)."""
    _, allowed, _ = ROUNDING_MODES[op.name]
    mode = rounding_mode(op)
    if mode is None or mode in allowed:
        return
    message = MSG_ROUNDING.format(", ".join(allowed))
    if stop:
        ctx.op_error(op, message)
    ctx.emit(op, Severity.ERROR, f"'{op.name}' op {message}", None, None)


def check_ftz(op: Operation, ctx: VerifyContext) -> None:
    """``verifyFtz``: flush_to_zero only on f32 results."""
    ty = result_element(op)
    if ty is not None and has_unit(op, "flush_to_zero") and not _is_f32(ty):
        ctx.op_error(op, MSG_FTZ.format(ty))


def check_approx(op: Operation, ctx: VerifyContext, approx: bool) -> None:
    """``verifyApprox``: the approx rounding mode only on f32 results."""
    ty = result_element(op)
    if ty is not None and approx and not _is_f32(ty):
        ctx.op_error(op, MSG_APPROX.format(ty))


def check_div_sqrt_modifiers(op: Operation, ctx: VerifyContext, approx: bool, full: bool) -> None:
    """``verifyDivSqrtCommonFPModifiers`` (divf, sqrt)."""
    has_rounding = not approx and not full
    if approx and full:
        ctx.op_error(op, "approx modifier and full modifier are mutually exclusive")
    ty = result_element(op)
    if ty is None:
        return
    if has_unit(op, "flush_to_zero") and not _is_f32(ty):
        ctx.op_error(op, MSG_FTZ.format(ty))
    if approx and not _is_f32(ty):
        ctx.op_error(op, MSG_APPROX.format(ty))
    if full and not _is_f32(ty):
        ctx.op_error(op, MSG_FULL.format(ty))
    if has_rounding and approx:
        ctx.op_error(op, "rounding mode does not allow approx modifier")
    if has_rounding and full:
        ctx.op_error(op, "rounding mode does not allow full modifier")


# ---------------------------------------------------------------------------
# Float arithmetic and math
# ---------------------------------------------------------------------------


@rule("cuda_tile.addf", "cuda_tile.subf", "cuda_tile.mulf", "cuda_tile.fma")
def ieee_rounding_and_ftz(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp AddFOp/SubFOp/MulFOp/FmaOp::verify: IEEE rounding modes, then verifyFtz."""
    check_rounding(op, ctx)
    check_ftz(op, ctx)


@rule("cuda_tile.exp2", "cuda_tile.maxf", "cuda_tile.minf", "cuda_tile.rsqrt")
def ftz_only(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp Exp2Op/MaxFOp/MinFOp/RsqrtOp::verify: verifyFtz."""
    check_ftz(op, ctx)


@rule("cuda_tile.divf", "cuda_tile.sqrt")
def div_sqrt_modifiers(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp DivFOp::verify / SqrtOp::verify: rounding list, then the modifier rules."""
    check_rounding(op, ctx)
    mode = rounding_mode(op)
    check_div_sqrt_modifiers(op, ctx, mode == "approx", mode == "full")


@rule("cuda_tile.exp")
def exp_rounding(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ExpOp::verify: approx or full, approx only for f32."""
    check_rounding(op, ctx)
    check_approx(op, ctx, rounding_mode(op) == "approx")


@rule("cuda_tile.tanh")
def tanh_rounding(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp TanHOp::verify: the rounding error does not stop the approx check."""
    check_rounding(op, ctx, stop=False)
    check_approx(op, ctx, rounding_mode(op) == "approx")


# ---------------------------------------------------------------------------
# Integer arithmetic
# ---------------------------------------------------------------------------


@rule("cuda_tile.divi")
def divi_rounding(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp DivIOp::verify: zero/negative_inf/positive_inf; no floor for unsigned."""
    check_rounding(op, ctx)
    if rounding_mode(op) == "negative_inf" and enum_case(op.attr("signedness")) == "unsigned":
        ctx.op_error(op, "rounding mode 'negative_inf' is not allowed with 'unsigned' flag")


@rule("cuda_tile.negi")
def negi_overflow(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp NegIOp::verify: negation has signed semantics (no 'no_unsigned_wrap')."""
    if enum_case(op.attr("overflow")) == "no_unsigned_wrap":
        ctx.op_error(op, "'no_unsigned_wrap' overflow flag is not supported")


# ---------------------------------------------------------------------------
# Matrix multiply
# ---------------------------------------------------------------------------


def _dims(shape) -> str:
    """MLIR's print of an ``ArrayRef<int64_t>``: ``4, 16``."""
    return ", ".join(str(d) for d in shape)


def _check_dim_match(op: Operation, ctx: VerifyContext, a: tuple[str, tuple[int, ...], int],
                     b: tuple[str, tuple[int, ...], int], lead: str = "") -> None:
    """Report NVIDIA's "dim I of A (x) and dim J of B (y) must match" when the two dimensions differ.

    ``a`` and ``b`` are ``(operand name, shape, dim index)``; ``lead`` goes
    before "shape error" (``" "`` where NVIDIA's message starts with a space).
    Stops verifying ``op`` (:meth:`VerifyContext.op_error`) on a mismatch.
    Source: NVIDIA CudaTile.cpp ``verifyMmaShapes`` / ``MmaFScaledOp::verify``.
    """
    (a_name, a_shape, i), (b_name, b_shape, j) = a, b
    if a_shape[i] != b_shape[j]:
        ctx.op_error(op, f"{lead}shape error: dim {i} of {a_name} ({a_shape[i]}) and dim {j} of {b_name} "
                         f"({b_shape[j]}) must match, but got {a_name} shape ({_dims(a_shape)}) and {b_name} "
                         f"shape ({_dims(b_shape)})")


def _tile(op: Operation, name: str) -> T.TileType | None:
    vals = op.operand_group(name)
    t = vals[0].type if vals else None
    return t if isinstance(t, T.TileType) and None not in t.shape else None


def check_mma_shapes(op: Operation, ctx: VerifyContext) -> bool:
    """``verifyMmaShapes``: 2-d or 3-d operands, batch, M, N and K dimensions agree.

    Returns ``False`` when a type is not known (nothing to check).
    """
    lhs, rhs, acc = _tile(op, "lhs"), _tile(op, "rhs"), _tile(op, "acc")
    if lhs is None or rhs is None or acc is None:
        return False
    if lhs.rank not in (2, 3):
        ctx.op_error(op, "operands must be 2D or 3D tiles")
    if rhs.rank != lhs.rank or acc.rank != lhs.rank:
        return False  # AllRanksMatch reported it
    ls, rs, as_ = lhs.shape, rhs.shape, acc.shape
    batched = int(lhs.rank == 3)
    if batched:
        _check_dim_match(op, ctx, ("lhs", ls, 0), ("rhs", rs, 0))
        _check_dim_match(op, ctx, ("lhs", ls, 0), ("acc", as_, 0))
    row, col = batched, batched + 1
    # these three messages start with a space in NVIDIA's code: "op  shape error"
    _check_dim_match(op, ctx, ("lhs", ls, col), ("rhs", rs, row), lead=" ")
    _check_dim_match(op, ctx, ("lhs", ls, row), ("acc", as_, row), lead=" ")
    _check_dim_match(op, ctx, ("rhs", rs, col), ("acc", as_, col), lead=" ")
    return True


@rule("cuda_tile.mmai")
def mmai_shapes(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp MmaIOp::verify: verifyMmaShapes (ODS checks the element types)."""
    check_mma_shapes(op, ctx)


@rule("cuda_tile.mmaf")
def mmaf_types(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp MmaFOp::verify: shapes, then the input/accumulator element pairs."""
    if not check_mma_shapes(op, ctx):
        return
    lhs_el = str(_tile(op, "lhs").element)
    acc_el = str(_tile(op, "acc").element)
    for input_type, outputs in MMAF_ACCUMULATORS:
        if input_type == lhs_el:
            if acc_el not in outputs:
                allowed = ", ".join(f"'{o}'" for o in outputs)
                ctx.op_error(op, f"unsupported combination of element types. Input type '{lhs_el}' expects "
                                 f"accumulator/result type to be one of {{{allowed}}}, but got '{acc_el}'")
            return
    ctx.op_error(op, f"unsupported input element type: '{lhs_el}'")


@rule("cuda_tile.mmaf_scaled")
def mmaf_scaled_types(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp MmaFScaledOp::verify: shapes, scale shapes, scale/element types, block size."""
    if not check_mma_shapes(op, ctx):
        return
    lhs, rhs = _tile(op, "lhs"), _tile(op, "rhs")
    ls_t, rs_t = _tile(op, "lhs_scale"), _tile(op, "rhs_scale")
    if ls_t is None or rs_t is None or ls_t.rank != lhs.rank or rs_t.rank != lhs.rank:
        return
    l, r, lsc, rsc = lhs.shape, rhs.shape, ls_t.shape, rs_t.shape
    batched = int(lhs.rank == 3)
    row, col = batched, batched + 1
    if batched:
        _check_dim_match(op, ctx, ("lhs", l, 0), ("lhs_scale", lsc, 0))
        _check_dim_match(op, ctx, ("rhs", r, 0), ("rhs_scale", rsc, 0))
    _check_dim_match(op, ctx, ("lhs", l, row), ("lhs_scale", lsc, row))
    _check_dim_match(op, ctx, ("rhs", r, col), ("rhs_scale", rsc, col))
    _check_dim_match(op, ctx, ("lhs_scale", lsc, col), ("rhs_scale", rsc, row))
    el, scale = str(lhs.element), str(ls_t.element)
    if scale == "f8E4M3FN" and el != "f4E2M1FN":
        ctx.op_error(op, f"unsupported combination of element types. Scale type '{scale}' expects lhs and rhs "
                         f"element types to be 'f4E2M1FN', but got '{el}'")
    if scale == "f8E8M0FNU" and el not in ("f8E4M3FN", "f8E5M2", "f4E2M1FN"):
        ctx.op_error(op, f"unsupported combination of element types. Scale type '{scale}' expects lhs and rhs "
                         f"element types to be one of {{'f8E4M3FN', 'f8E5M2', 'f4E2M1FN'}}, but got '{el}'")
    k, scale_k = l[col], lsc[col]
    if scale_k == 0 or k % scale_k != 0:
        ctx.op_error(op, f"shape error: dim {col} of lhs_scale ({scale_k}) must be a divisor of dim {col} of lhs "
                         f"({k}), but got lhs_scale shape ({_dims(lsc)}) and lhs shape ({_dims(l)})")
    vec = k // scale_k
    if el in ("f8E4M3FN", "f8E5M2") and vec != 32:
        ctx.op_error(op, "shape error: f8 element type requires block scale factor of lhs_scale and rhs_scale "
                         f"to be 32, but got {vec}")
    if el == "f4E2M1FN":
        if scale == "f8E4M3FN" and vec != 16:
            ctx.op_error(op, "shape error: f4E2M1FN element type with f8E4M3FN scales requires block scale "
                             f"factor of lhs_scale and rhs_scale to be 16, but got {vec}")
        if scale == "f8E8M0FNU" and vec not in (16, 32):
            ctx.op_error(op, "shape error: f4E2M1FN element type with f8E8M0FNU scales requires block scale "
                             f"factor of lhs_scale and rhs_scale to be 16 or 32, but got {vec}")
