"""The type transforms of the op table as functions (``ptr_like``, ``tensor_view_of``...).

The op table (:mod:`tile_lsp.dialect.cuda_tile_ops`) names them in its
``type_inference`` and ``TypesMatchWith`` entries; the builder infers result
types with them and the ``TypesMatchWith`` trait checks them.
"""

from __future__ import annotations

from collections.abc import Callable

from tile_lsp.dialect import types as T


def _tile_like(elem: Callable[[T.TileType], T.Type]) -> Callable[[T.Type], T.Type | None]:
    def f(t: T.Type) -> T.Type | None:
        return T.TileType(t.shape, elem(t)) if isinstance(t, T.TileType) else None

    return f


def tensor_view_of(t: T.Type) -> T.Type | None:
    """The tensor_view a partition, strided or gather/scatter view views; ``None`` for another type."""
    if isinstance(t, (T.PartitionViewType, T.StridedViewType)):
        return t.tensor_view
    if isinstance(t, T.GatherScatterViewType):
        return t.view
    return None


def _scalar_ptr_to_elem(t: T.Type) -> T.Type | None:
    if isinstance(t, T.TensorViewType):
        return T.TileType((), T.PointerType(t.element))
    return None


#: The type transforms named in the op table's ``type_inference`` and ``TypesMatchWith`` traits, as
#: functions (:data:`tile_lsp.dialect.cuda_tile_ops.TYPE_TRANSFORMS` documents each; a test keeps the
#: two tables' names equal); a function answers ``None`` for a type it does not apply to.
TYPE_TRANSFORM_FUNCTIONS: dict[str, Callable[[T.Type], T.Type | None]] = {
    "token": lambda t: T.TokenType(),
    "scalar_i1_tile": lambda t: T.TileType((), T.IntegerType(1)),
    "scalar_i32_tile": lambda t: T.TileType((), T.IntegerType(32)),
    "i1_like": _tile_like(lambda t: T.IntegerType(1)),
    "ptr_like": _tile_like(lambda t: T.PointerType(t.element)),
    "scalar_ptr_to_elem": _scalar_ptr_to_elem,
    "tensor_view_of": tensor_view_of,
}
