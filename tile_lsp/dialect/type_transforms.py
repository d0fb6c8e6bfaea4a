"""The type transforms of the op table as functions (``ptr_like``, ``tensor_view_of``...).

The op table (:mod:`tile_lsp.dialect.cuda_tile_ops`) names them in its
``type_inference`` and ``TypesMatchWith`` entries; the builder infers result
types with them and the ``TypesMatchWith`` trait checks them.
"""

from __future__ import annotations

import re
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




def index_space_rank(t: T.Type) -> int | None:
    """Rank of the index space of a tensor_view or tile view (its tensor_view's rank)."""
    if isinstance(t, T.TensorViewType):
        return t.rank
    inner = tensor_view_of(t)
    return index_space_rank(inner) if inner is not None else None


def apply_transform(expr: str, types: dict[str, list[T.Type]]) -> list[T.Type] | None:
    """The types a ``type_inference`` expression of the op table gives (``ptr_like(source)``, a bare
    operand name, a nullary transform), from ``types`` (the types bound so far, by operand/result
    name); ``None`` when it cannot be computed yet."""
    m = re.fullmatch(r"\s*([A-Za-z_0-9]+)\s*(?:\(\s*([A-Za-z_0-9]*)\s*\))?\s*", expr)
    if not m:
        return None
    fname, arg = m.group(1), m.group(2)
    if arg is None:
        # a bare name: same type as that operand/result, or a nullary transform
        if fname in types:
            return list(types[fname])
        fn = TYPE_TRANSFORM_FUNCTIONS.get(fname)
        if fn is not None:
            return [fn(T.UNKNOWN)] if fn(T.UNKNOWN) is not None else None
        return None
    fn = TYPE_TRANSFORM_FUNCTIONS.get(fname)
    src = types.get(arg)
    if fn is None or not src:
        return None
    out = [fn(t) for t in src]
    return None if any(t is None for t in out) else out
