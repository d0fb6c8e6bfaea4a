"""Verifiers of the token-ordered memory operations through pointers, and of join_tokens.

``load_ptr_tko`` / ``store_ptr_tko``: memory ordering semantics and memory
scope rules (``verifyMemoryModelLoad`` / ``verifyMemoryModelStore``);
``atomic_rmw_tko`` / ``atomic_cas_tko``: pointee and element types, the
optional mask's shape, the RMW mode's element types and the orderings an
atomic accepts; ``join_tokens``: at least two tokens.  The ODS constraints
and traits of these ops (operand types, ``TypesMatchWith`` on source/result,
mask shapes) are checked by the framework before these rules.

The memory-model helpers are shared with the view loads and stores
(:mod:`tile_lsp.analysis.verify.rules.views`).

Rule source: NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``
(``LoadPtrTkoOp::verify``, ``StorePtrTkoOp::verify``, ``AtomicRMWTkoOp::verify``,
``AtomicCASTkoOp::verify``, ``JoinTokensOp::verify``,
``impl::verifyMemoryModelLoad`` / ``verifyMemoryModelStore``) and
``include/cuda_tile/Dialect/CudaTile/IR/SharedVerifiers.h``
(``verifyAtomicRMWMode``, ``verifyAtomicMemoryOrdering``, ``verifyOptHintsCommon``,
whose checks live in :func:`tile_lsp.analysis.verify.rules.core.verify_optimization_hints`).
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.rules.core import verify_optimization_hints
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.dialect import types as T

# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

#: Orderings each kind of access accepts, and the third word of the message
#: ``expect one of: weak, relaxed, or <third>, but got: <x>``.
MEMORY_MODEL = {
    "load": (("weak", "relaxed", "acquire"), "acquire"),
    "store": (("weak", "relaxed", "release"), "release"),
}

#: Orderings of the atomics (``verifyAtomicMemoryOrdering``).
ATOMIC_ORDERINGS = ("relaxed", "acquire", "release", "acq_rel")

#: ``verifyAtomicRMWMode``: mode -> (element kind, message after the quoted mode).
INTEGER_RMW_MODES = ("and", "or", "xor", "add", "max", "min", "umax", "umin")
RMW_MODE_MESSAGES = {
    "integer": "works only with integers i32 and i64",
    "float": "works only with floats f16, bf16, f32, and f64",
    "xchg": "works only with integers or float of 32 or 64 bitwidth",
}
ADDF_ELEMENTS = ("f16", "bf16", "f32", "f64")

#: ``Type::getIntOrFloatBitWidth`` where it differs from the storage width (tf32 is 19 bits).
MLIR_FLOAT_WIDTHS = {**T.FLOAT_WIDTHS, "tf32": 19}


def int_or_float_width(t: T.Type) -> int | None:
    """MLIR's ``getIntOrFloatBitWidth`` of an integer or float type, else ``None``."""
    if isinstance(t, T.IntegerType):
        return t.width
    if isinstance(t, T.FloatType):
        return MLIR_FLOAT_WIDTHS.get(t.name)
    return None


def enum_case(op: Operation, name: str, enum: str) -> str | None:
    """The case of ``enum`` that attribute ``name`` of ``op`` holds, in any of its forms
    (:func:`tile_lsp.analysis.ir.attributes.enum_spelling`)."""
    return A.enum_spelling(op.attr(name), enum)


def memory_model_issue(kind: str, ordering: str | None, scope: str | None) -> str | None:
    """``verifyMemoryModelLoad`` / ``verifyMemoryModelStore`` (``kind``: ``load`` or ``store``).

    The ordering must be one the access accepts; a weak access has no
    scope, any other needs one.  Source: NVIDIA CudaTile.cpp.
    """
    if ordering is None:
        return None
    allowed, third = MEMORY_MODEL[kind]
    if ordering not in allowed:
        return f"expect one of: weak, relaxed, or {third}, but got: {ordering}"
    if ordering == "weak":
        if scope is not None:
            return f"weak {kind} must not have memory scope"
    elif scope is None:
        return f"memory scope is required for {ordering} {kind}"
    return None


#: The access each op with a memory model makes (a :data:`MEMORY_MODEL` key): which of
#: ``verifyMemoryModelLoad`` / ``verifyMemoryModelStore`` its verifier calls (NVIDIA CudaTile.cpp).
ACCESS_KIND: dict[str, str] = {
    "cuda_tile.load_ptr_tko": "load",
    "cuda_tile.load_view_tko": "load",
    "cuda_tile.store_ptr_tko": "store",
    "cuda_tile.store_view_tko": "store",
}


def verify_memory_model(op: Operation, ctx: VerifyContext) -> None:
    """Report :func:`memory_model_issue` for ``op``'s ``memory_ordering_semantics``/``memory_scope``,
    as the access :data:`ACCESS_KIND` gives ``op`` (a load or a store)."""
    kind = ACCESS_KIND[op.name]
    ordering = enum_case(op, "memory_ordering_semantics", "MemoryOrderingSemantics")
    scope = enum_case(op, "memory_scope", "MemoryScope") if op.attr("memory_scope") is not None else None
    message = memory_model_issue(kind, ordering, scope)
    if message is not None:
        ctx.op_error(op, message)


def rmw_mode_issue(mode: str | None, element: T.Type) -> str | None:
    """``verifyAtomicRMWMode``: the element types each RMW mode works with (SharedVerifiers.h)."""
    if mode is None or element == T.UNKNOWN:
        return None
    if mode in INTEGER_RMW_MODES:
        if not (isinstance(element, T.IntegerType) and element.width in (32, 64)):
            return f"'{mode}' {RMW_MODE_MESSAGES['integer']}"
    elif mode == "addf":
        if not (isinstance(element, T.FloatType) and element.name in ADDF_ELEMENTS):
            return f"'{mode}' {RMW_MODE_MESSAGES['float']}"
    elif mode == "xchg":
        if int_or_float_width(element) not in (32, 64):
            return f"'{mode}' {RMW_MODE_MESSAGES['xchg']}"
    return None


def atomic_ordering_issue(ordering: str | None) -> str | None:
    """``verifyAtomicMemoryOrdering`` (SharedVerifiers.h)."""
    if ordering is None or ordering in ATOMIC_ORDERINGS:
        return None
    return "memory ordering semantics must be one of: relaxed, acquire, release, acq_rel"


def _operand_type(op: Operation, name: str) -> T.Type | None:
    vals = op.operand_group(name)
    return vals[0].type if vals else None


def _pointee(t: T.Type | None) -> T.Type | None:
    if isinstance(t, T.TileType) and isinstance(t.element, T.PointerType):
        return t.element.pointee
    return None


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------


@rule("cuda_tile.load_ptr_tko", "cuda_tile.store_ptr_tko")
def memory_model(op: Operation, ctx: VerifyContext) -> None:
    """Hints, then ordering weak/relaxed/acquire (a load) or weak/relaxed/release (a store) and scope
    iff not weak (NVIDIA LoadPtrTkoOp::verify, StorePtrTkoOp::verify)."""
    verify_optimization_hints(op, ctx)
    verify_memory_model(op, ctx)


def _mask_shape_differs(op: Operation, other: T.Type | None) -> bool:
    mask = _operand_type(op, "mask")
    return (isinstance(mask, T.TileType) and isinstance(other, T.TileType)
            and tuple(mask.shape) != tuple(other.shape))


def _check_pointee(op: Operation, ctx: VerifyContext, value_name: str) -> tuple[T.Type, T.TileType] | None:
    """The pointee of ``pointers`` and the tile type of operand ``value_name``, after reporting (and
    stopping at) a known pointee that differs from the tile's known element type; ``None`` when either
    is missing or not a tile of pointers / a tile (nothing to check).

    Source: NVIDIA CudaTile.cpp ``AtomicRMWTkoOp::verify`` / ``AtomicCASTkoOp::verify``.
    """
    pointee = _pointee(_operand_type(op, "pointers"))
    value = _operand_type(op, value_name)
    if pointee is None or not isinstance(value, T.TileType):
        return None
    element = value.element
    if T.UNKNOWN not in (pointee, element) and pointee != element:
        ctx.op_error(op, f"expected pointee type ('{pointee}') to match element type of '{value_name}' "
                         f"('{element}')")
    return pointee, value


@rule("cuda_tile.atomic_rmw_tko")
def atomic_rmw(op: Operation, ctx: VerifyContext) -> None:
    """Pointee = element of ``arg``, mask shape, RMW mode types, ordering (NVIDIA AtomicRMWTkoOp::verify)."""
    types = _check_pointee(op, ctx, "arg")
    if types is None:
        return
    _, arg = types
    element = arg.element
    if _mask_shape_differs(op, arg):
        ctx.op_error(op, "failed to verify that all of {pointers, arg, mask} have same shape")
    message = rmw_mode_issue(enum_case(op, "mode", "AtomicRMWMode"), element)
    if message is None:
        message = atomic_ordering_issue(enum_case(op, "memory_ordering_semantics", "MemoryOrderingSemantics"))
    if message is not None:
        ctx.op_error(op, message)


@rule("cuda_tile.atomic_cas_tko")
def atomic_cas(op: Operation, ctx: VerifyContext) -> None:
    """Pointee = element of ``val``, 32/64-bit int or float, mask shape, ordering (NVIDIA AtomicCASTkoOp::verify)."""
    types = _check_pointee(op, ctx, "val")
    if types is None:
        return
    pointee, val = types
    element = val.element
    if T.UNKNOWN in (pointee, element):
        return
    if int_or_float_width(element) not in (32, 64):
        ctx.op_error(op, "expect only float or integer types with 32 or 64 bit")
    if _mask_shape_differs(op, val):
        ctx.op_error(op, "failed to verify that all of {pointers, val, cmp and mask} have same shape")
    message = atomic_ordering_issue(enum_case(op, "memory_ordering_semantics", "MemoryOrderingSemantics"))
    if message is not None:
        ctx.op_error(op, message)


@rule("cuda_tile.join_tokens")
def join_tokens_count(op: Operation, ctx: VerifyContext) -> None:
    """At least two tokens (NVIDIA CudaTile.cpp JoinTokensOp::verify)."""
    if len(op.operand_group("tokens")) < 2:
        ctx.op_error(op, "expect two or more tokens")
