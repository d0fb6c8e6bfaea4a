"""Verifiers of the view operations: building views, their shapes, loads and stores through them.

``make_tensor_view`` (pointer element, dynamic operand counts, one type for
the dynamic values), ``make_partition_view`` / ``make_strided_view`` /
``make_gather_scatter_view`` (operand type = the view's tensor_view),
``get_tensor_shape`` / ``get_index_space_shape`` (one result per
dimension), ``load_view_tko`` / ``store_view_tko`` (index count, tile type
and index types from the view type, then the memory model) and
``atomic_red_view_tko``.

Rule source: NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``
(``MakeTensorViewOp::verify``, ``MakePartitionViewOp::verify``,
``MakeStridedViewOp::verify``, ``MakeGatherScatterViewOp::verify``,
``GetTensorShapeOp::verify``, ``GetIndexSpaceShapeOp::verify``,
``LoadViewTkoOp::verify``, ``StoreViewTkoOp::verify``,
``AtomicRedViewTkoOp::verify``), ``SharedVerifiers.h``
(``verifyViewLoadStoreCommon``) and ``Types.cpp`` (``getViewTileType``,
``getViewIndexRank`` and ``verifyIndices`` of each view type).
"""

from __future__ import annotations

from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.rules.core import verify_optimization_hints
from tile_lsp.analysis.verify.rules.memory import (
    enum_case,
    rmw_mode_issue,
    verify_memory_model,
)
from tile_lsp.analysis.syntax.type_rules import join, quoted
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.dialect import types as T
from tile_lsp.dialect.type_transforms import tensor_view_of

# ---------------------------------------------------------------------------
# View type queries (the TileView interface of Types.cpp)
# ---------------------------------------------------------------------------


def view_index_rank(view: T.Type) -> int | None:
    """``getViewIndexRank``: the rank of the view's tile shape."""
    if isinstance(view, T.TILE_VIEW_TYPES):
        return len(view.tile_shape)
    return None


def view_tile_type(view: T.Type) -> T.TileType | None:
    """``getViewTileType``: a tile of the view's tile shape and its tensor_view's element type."""
    tv = tensor_view_of(view)
    if not isinstance(tv, T.TensorViewType):
        return None
    return T.TileType(tuple(view.tile_shape), tv.element)


def _scalar_tile_index_issue(index_types: list[T.Type]) -> str | None:
    """``verifyIndices`` of partition and strided views: scalar tiles, all of one type."""
    if not index_types:
        return None
    for t in index_types:
        if not isinstance(t, T.TileType):
            return f"expected index type to be a tile type, got {quoted(t)}"
        if t.rank != 0:
            return f"expected index type to be a scalar tile, got {quoted(t)}"
    base = index_types[0]
    for i, t in enumerate(index_types):
        if t != base:
            return f"expected index type {i} to be the same as other index types ({quoted(base)}), got {quoted(t)}"
    return None


def _gather_scatter_index_issue(view: T.GatherScatterViewType, index_types: list[T.Type]) -> str | None:
    """``GatherScatterViewType::verifyIndices``: a 1-d index at ``sparse_dim``, scalars elsewhere."""
    if not index_types:
        return None
    sd = view.sparse_dim
    if sd >= len(index_types):
        return f"gather/scatter dimension {sd} is out of range for index count {len(index_types)}"
    gather = index_types[sd]
    if not isinstance(gather, T.TileType):
        return f"expected index at sparse_dim position {sd} to be a tile type for GatherScatterView"
    if gather.rank != 1:
        return (f"expected index at sparse_dim position {sd} to be a 1D tensor for GatherScatterView, "
                f"got rank {gather.rank}")
    size = gather.shape[0]
    at_dim = view.tile_shape[sd] if sd < len(view.tile_shape) else None
    if size != at_dim:
        return (f"expected gather/scatter index size ({size}) to match tile shape at gather/scatter "
                f"dimension {sd} ({at_dim})")
    base: T.Type | None = None
    for i, t in enumerate(index_types):
        if i == sd:
            continue
        if not isinstance(t, T.TileType) or t.rank != 0:
            return f"expected index {i} to be a scalar tile for GatherScatterView"
        if base is None:
            base = t
        elif t != base:
            return (f"expected scalar index {i} to have the same type as other scalar indices "
                    f"({quoted(base)}), got {quoted(t)}")
    return None


def index_types_issue(view: T.Type, index_types: list[T.Type]) -> str | None:
    """``verifyIndices`` of the view type ``view`` (Types.cpp)."""
    if isinstance(view, T.GatherScatterViewType):
        return _gather_scatter_index_issue(view, index_types)
    return _scalar_tile_index_issue(index_types)


def _known(*types: T.Type | None) -> bool:
    return all(t is not None and t != T.UNKNOWN for t in types)


# ---------------------------------------------------------------------------
# make_*_view
# ---------------------------------------------------------------------------


@rule("cuda_tile.make_tensor_view")
def make_tensor_view(op: Operation, ctx: VerifyContext) -> None:
    """Pointer element = view element; dynamic operand counts; one type for the dynamic values.

    Source: NVIDIA CudaTile.cpp MakeTensorViewOp::verify.
    """
    bases = op.operand_group("base")
    result = op.results[0].type if op.results else None
    if not bases or not isinstance(result, T.TensorViewType):
        return
    base = bases[0].type
    if not (isinstance(base, T.TileType) and isinstance(base.element, T.PointerType)):
        return
    pointee = base.element.pointee
    if _known(pointee, result.element) and result.element != pointee:
        ctx.op_error(op, f"expected pointer to {quoted(result.element)} to build tensor_view of this type, "
                         f"got {quoted(pointee)}")
    shape_values = op.operand_group("dynamicShape")
    stride_values = op.operand_group("dynamicStrides")
    dyn_shape = sum(1 for d in result.shape if d is None)
    dyn_strides = sum(1 for s in result.strides if s is None)
    if dyn_shape != len(shape_values):
        ctx.op_error(op, f"expected {dyn_shape} dynamic shape operands, got {len(shape_values)}")
    if dyn_strides != len(stride_values):
        ctx.op_error(op, f"expected {dyn_strides} dynamic stride operands, got {len(stride_values)}")
    common: T.Type | None = shape_values[0].type if shape_values else None
    for i, v in enumerate(shape_values):
        if _known(v.type, common) and v.type != common:
            ctx.op_error(op, f"expected dynamic shape index {i} to be of the same type as the other dynamic "
                             f"values ({quoted(common)}), got {quoted(v.type)}")
    if stride_values and common is None:
        common = stride_values[0].type
    for i, v in enumerate(stride_values):
        if _known(v.type, common) and v.type != common:
            ctx.op_error(op, f"expected dynamic stride index {i} to be of the same type as the other dynamic "
                             f"values ({quoted(common)}), got {quoted(v.type)}")


@rule("cuda_tile.make_partition_view", "cuda_tile.make_strided_view", "cuda_tile.make_gather_scatter_view")
def make_view_tensor_view(op: Operation, ctx: VerifyContext) -> None:
    """The operand's type is the view's tensor_view type.

    Source: NVIDIA CudaTile.cpp MakePartitionViewOp / MakeStridedViewOp / MakeGatherScatterViewOp::verify.
    """
    operands = op.operand_group("tensor_view")
    if not operands or not op.results:
        return
    given = operands[0].type
    expected = tensor_view_of(op.results[0].type)
    if _known(given, expected) and given != expected:
        ctx.op_error(op, f"expected the type of the provided tensor_view value ({quoted(given)}) to be the same "
                         f"as the view's tensor_view type ({quoted(expected)})")


# ---------------------------------------------------------------------------
# get_*_shape
# ---------------------------------------------------------------------------


@rule("cuda_tile.get_tensor_shape")
def get_tensor_shape_results(op: Operation, ctx: VerifyContext) -> None:
    """One result per dimension of the tensor_view (NVIDIA CudaTile.cpp GetTensorShapeOp::verify)."""
    src = op.operand_group("src")
    if not src or not isinstance(src[0].type, T.TensorViewType):
        return
    rank = src[0].type.rank
    if len(op.results) != rank:
        ctx.op_error(op, f"expected {rank} results due to tensor rank, but got {len(op.results)}")


@rule("cuda_tile.get_index_space_shape")
def get_index_space_shape_results(op: Operation, ctx: VerifyContext) -> None:
    """One result per index dimension of the view (NVIDIA CudaTile.cpp GetIndexSpaceShapeOp::verify)."""
    src = op.operand_group("src")
    rank = view_index_rank(src[0].type) if src else None
    if rank is not None and len(op.results) != rank:
        ctx.op_error(op, f"expected {rank} results due to view index space rank, but got {len(op.results)}")


# ---------------------------------------------------------------------------
# Loads and stores through views
# ---------------------------------------------------------------------------


def verify_view_load_store(op: Operation, ctx: VerifyContext) -> None:
    """``verifyViewLoadStoreCommon``: index count and tile type from the view type, the index types, hints.

    Source: NVIDIA SharedVerifiers.h verifyViewLoadStoreCommon.
    """
    views = op.operand_group("view")
    if not views:
        return
    view = views[0].type
    rank = view_index_rank(view)
    if rank is None:
        return
    indices = op.operand_group("index")
    if len(indices) != rank:
        ctx.op_error(op, f"expected {rank} index operands (based on view type), got {len(indices)}")
    tiles = op.operand_group("tile") or op.result_group("tile")
    expected = view_tile_type(view)
    if tiles and _known(tiles[0].type, expected) and tiles[0].type != expected:
        ctx.op_error(op, f"expected tile type to be {quoted(expected)} (based on view type), "
                         f"got {quoted(tiles[0].type)}")
    index_types = [v.type for v in indices]
    if all(_known(t) for t in index_types):
        message = index_types_issue(view, index_types)
        if message is not None:
            ctx.op_error(op, message)
    verify_optimization_hints(op, ctx)


@rule("cuda_tile.load_view_tko", "cuda_tile.store_view_tko")
def view_load_store(op: Operation, ctx: VerifyContext) -> None:
    """View load or store: common view checks, then weak/relaxed/acquire (a load) or weak/relaxed/release
    (a store) and scope (NVIDIA LoadViewTkoOp::verify, StoreViewTkoOp::verify)."""
    verify_view_load_store(op, ctx)
    verify_memory_model(op, ctx)


@rule("cuda_tile.atomic_red_view_tko")
def atomic_red_view(op: Operation, ctx: VerifyContext) -> None:
    """View kind and padding, element and shape of the value, mode, relaxed ordering, scope, indices.

    Source: NVIDIA CudaTile.cpp AtomicRedViewTkoOp::verify.
    """
    views = op.operand_group("view")
    values = op.operand_group("value")
    if not views or not values:
        return
    view = views[0].type
    if not isinstance(view, T.TILE_VIEW_TYPES):
        return
    if isinstance(view, T.GatherScatterViewType):
        ctx.op_error(op, "gather_scatter_view is not supported; use partition_view instead")
    if view.padding_value is not None:
        ctx.op_error(op, "views with padding_value are not supported for atomic reductions")
    tile = view_tile_type(view)
    value = values[0].type
    if tile is None or not isinstance(value, T.TileType):
        return
    if _known(tile.element, value.element) and tile.element != value.element:
        ctx.op_error(op, f"view element type ({quoted(tile.element)}) must match value element type "
                         f"({quoted(value.element)})")
    if tuple(tile.shape) != tuple(value.shape):
        ctx.op_error(op, f"view tile shape {join(tile.shape)} must match value shape {join(value.shape)} "
                         f"for element-wise atomic operations")
    mode = enum_case(op, "mode", "AtomicRMWMode")
    if mode == "xchg":
        ctx.op_error(op, "atomic_red_view_tko op cannot use xchg operation")
    message = rmw_mode_issue(mode, value.element)
    if message is not None:
        ctx.op_error(op, message)
    ordering = enum_case(op, "memory_ordering_semantics", "MemoryOrderingSemantics")
    if ordering is not None and ordering != "relaxed":
        ctx.op_error(op, "only 'relaxed' memory ordering is supported for view-based atomic reductions")
    if enum_case(op, "memory_scope", "MemoryScope") == "sys":
        ctx.op_error(op, "memory scope 'sys' is not supported for view-based atomic reductions; use 'tl_blk' "
                         "or 'device' for TMA compatibility")
    indices = op.operand_group("index")
    if len(indices) != tile.rank:
        ctx.op_error(op, f"expected {tile.rank} index operand(s) for view with tile rank {tile.rank}, "
                         f"got {len(indices)}")
    for i, v in enumerate(indices):
        t = v.type
        if not isinstance(t, T.TileType):
            continue
        if t.rank != 0:
            ctx.op_error(op, f"index operand {i} must be a scalar tile (rank 0), got shape {join(t.shape)}")
        if not isinstance(t.element, T.IntegerType) and t.element != T.UNKNOWN:
            ctx.op_error(op, f"index operand {i} must be a scalar integer tile, got element type "
                             f"{quoted(t.element)}")
