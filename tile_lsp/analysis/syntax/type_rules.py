"""Type verifiers: the rules MLIR checks when a cuda_tile type is built (``XType::verify``).

:func:`verify_type` returns the verbatim message of the first rule a type
breaks, or ``None``.  The builder reports it at the type's range while
parsing, as MLIR does (a type that fails its verifier is a parse error).
:func:`type_issue` gives the same message with the place MLIR reports it
(an :class:`Anchor`), and :func:`locate_type_error` maps that place to an
offset in the source text, adding the checks that need the written text
(the ``strides`` clause of a ``tensor_view``).

Rule source: NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/Types.cpp`` (the
type parsers ``XType::parse`` and verifiers ``XType::verify``),
``include/cuda_tile/Dialect/CudaTile/IR/SharedVerifiers.h``
(``verifyTileSize``) and ``Types.td`` (the constrained type parameters,
checked by the ODS-generated ``verifyInvariants`` before ``verify``).

Only the type itself is checked, not the types nested in it: the builder
verifies each nested type when it builds it, and a type whose nested type
is invalid is never built by MLIR, so :func:`type_issue` returns ``None``
for it (no second diagnostic).
"""

from __future__ import annotations

import functools

from dataclasses import dataclass
from typing import Any, Callable

from tile_lsp.dialect import types as T
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.schema import NUMBER_SCALAR

# ---------------------------------------------------------------------------
# Data of the rules
# ---------------------------------------------------------------------------

#: ``maxTileNumElements`` of NVIDIA ``Types.h``.
MAX_TILE_ELEMENTS = 16777216
#: ``std::numeric_limits<int32_t>::max()``: the limit of view tile dimensions.
INT32_MAX = 2147483647

#: Summaries of the constrained type parameters (``Types.td``), as printed in
#: ``failed to verify '<param>': <summary>``.
NUMBER_SUMMARY = NUMBER_SCALAR.summary  # CudaTile_NumberType
TILE_ELEMENT_SUMMARY = NUMBER_SUMMARY + " or Pointer type or i4"  # CudaTile_TileElementType

#: Padding values that need a floating-point element type (``verifyPartitionViewLike``).
FLOAT_ONLY_PADDING = ("neg_zero", "nan", "pos_inf", "neg_inf")

MESSAGES = {
    "param": "failed to verify '{param}': {summary}",
    # TileType::parse (parseDimensionList with allowDynamic=false)
    "static_shape": "expected static shape",
    # TileType::verify / verifyTileSize
    "f4_even": "F4E2M1FN tiles must have an even number of elements",
    "dim_positive": "all dimensions must be positive constants, got {shape}",
    "dim_pow2": "all dimensions must be powers of two, got {shape}",
    "too_many": "tile would exceed the maximum of {max} elements",
    # TensorViewType::parse
    "stride_positive": "expected strictly positive integer, got {value}",
    "strides_0d": "strides must not be provided for 0-d tiles",
    "strides_missing": "expected 'strides'",
    # TensorViewType::verify
    "tv_rank": "expected shape and stride to be of same rank but got shape of rank {shape} and stride of rank {stride}",
    "tv_sizes": "dimensions must have strictly positive constant sizes but got {dims}",
    "tv_strides": "dimensions must have strictly positive constant strides but got {dims}",
    # view parsers
    "tile_dim_i32": "tile dimension {index} exceeds i32 limitations (got {value}, expected strictly positive "
                    "and less than or equal to 2147483647)",
    "padding_keyword": 'invalid padding_value attribute specification. Got "{value}" but expect one of: '
                       "zero, neg_zero, nan, pos_inf, neg_inf",
    "not_tensor_view": "expected 'tensor_view' type, but got {type}",
    # verifyPartitionViewLike / GatherScatterViewType::verify / StridedViewType::verify
    "view_0d": "0-dimension tile shape is not supported",
    "view_rank": "expected tensor_view rank and tile rank to match, got tensor_view of rank {tv} and tiles of rank {tile}",
    "dim_map_size": "expected dim_map to map exactly all {rank} dimensions of the tile, got {size} mappings",
    "view_dim_positive": "tile shape dimensions must have positive length but got [{dims}]",
    "view_dim_pow2": "tile shape dimensions must have power of two length but got [{dims}]",
    "dim_map_negative": "target dimension must not be negative, got {dim}",
    "dim_map_range": "target dimension is outside of tensor view dimensions, expected strictly less than {rank}, got {dim}",
    "dim_map_twice": "target dimension {dim} mapped at least twice (for tile dimensions {first} and {second})",
    "padding_float": "padding_value {value} can only be used with floating point element types, got {type}",
    "traversal_count": "expected {rank} traversal strides, got {count}",
    "traversal_positive": "traversal strides must be strictly positive but got [{strides}]",
    "sparse_dim": "gather dimension is outside of tensor view dimensions, expected strictly less than {rank}, got {dim}",
}


def quoted(t: T.Type) -> str:
    """A type as MLIR streams it into a diagnostic: in single quotes."""
    return f"'{t}'"


def join(values) -> str:
    """An ``ArrayRef`` streamed into a diagnostic: the values joined by ``, ``."""
    return ", ".join(str(v) for v in values)


def _print_dynamic(values) -> str:
    """``PrintDynamic`` of Types.cpp: ``[a, ?, b]``."""
    return "[" + ", ".join("?" if v is None else str(v) for v in values) + "]"


def is_number(t: T.Type) -> bool:
    """``CudaTile_NumberType``: a float or integer element type Tile IR supports."""
    return NUMBER_SCALAR.accepts(t)


def is_tile_element(t: T.Type) -> bool:
    """``CudaTile_TileElementType``: a number, a pointer or ``i4``."""
    return is_number(t) or isinstance(t, T.PointerType) or t == T.IntegerType(4)


def _unknown(t: T.Type) -> bool:
    return t == T.UNKNOWN


# ---------------------------------------------------------------------------
# Issues and where MLIR reports them
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Anchor:
    """Where MLIR reports a type diagnostic, relative to the written type.

    ``kind``: ``open``, the ``<`` after the mnemonic (the location of
    ``getChecked``: every verifier error); ``dim``, the ``index``-th
    dimension of the shape; ``stride``, the ``index``-th element of the
    ``strides``/``traversal_strides`` list; ``tile_shape``, the ``(`` after
    ``tile=``; ``padding``, the ``=`` after ``padding_value``;
    ``after_view``, the token after the nested view type.
    """

    kind: str = "open"
    index: int = 0


@dataclass(frozen=True)
class TypeIssue:
    """The first rule a type breaks: its verbatim message and where it is reported.

    ``prefixed``: whether the message goes through the ``AsmParser``'s
    ``emitError`` (the verifiers through ``getChecked``, the errors of the
    type parsers of Types.cpp), which inside a custom-form op adds
    ``custom op '<op>' ``; errors of MLIR's own lexer-level helpers (the
    dimension list) are reported without it.
    """

    message: str
    anchor: Anchor = Anchor()
    prefixed: bool = True


@dataclass(frozen=True)
class LocatedTypeError:
    """A type error placed in the text: ``offset`` is a code-point offset in the text of the tree.

    ``prefixed``: see :class:`TypeIssue`; the caller adds ``custom op '<op>' ``
    when it is set, the op is in custom form and the outermost written type
    is in the short form (``tile<...>``, parsed with the op's parser).
    """

    message: str
    offset: int
    prefixed: bool = True


def _issue(key: str, anchor: Anchor = Anchor(), prefixed: bool = True, **kw: Any) -> TypeIssue:
    return TypeIssue(MESSAGES[key].format(**kw), anchor, prefixed)


def verify_type(t: T.Type) -> str | None:
    """The message of the first rule ``t`` breaks, else ``None`` (see :func:`type_issue`)."""
    issue = type_issue(t)
    return issue.message if issue is not None else None


def type_issue(t: T.Type) -> TypeIssue | None:
    """The first rule the cuda_tile type ``t`` breaks, in the order NVIDIA's parser and verifier check.

    Types whose nested cuda_tile type is itself invalid give ``None`` (that
    nested type carries the diagnostic).  Source: NVIDIA Types.cpp.

    A function of the type's value alone (types are frozen), so the answers
    for the last 4,096 distinct types are kept: a file writes the same few
    types on most of its lines.
    """
    try:
        return _kept_type_issue(t)
    except TypeError:  # a type with an unhashable part (an opaque attribute): not kept
        return _type_issue(t)


@functools.lru_cache(maxsize=4096)
def _kept_type_issue(t: T.Type) -> TypeIssue | None:
    return _type_issue(t)


def _type_issue(t: T.Type) -> TypeIssue | None:
    for inner in _nested(t):
        if isinstance(inner, T.CudaTileType) and type_issue(inner) is not None:
            return None
    for cls, rule in _TYPE_RULES:
        if isinstance(t, cls):
            return rule(t)
    return None


def _nested(t: T.Type) -> tuple[T.Type, ...]:
    if isinstance(t, T.TileType):
        return (t.element,)
    if isinstance(t, T.PointerType):
        return (t.pointee,)
    if isinstance(t, T.TensorViewType):
        return (t.element,)
    if isinstance(t, (T.PartitionViewType, T.StridedViewType)):
        return (t.tensor_view,)
    if isinstance(t, T.GatherScatterViewType):
        return (t.view,)
    return ()


def tile_size_issue(shape: tuple[int, ...], element: T.Type) -> TypeIssue | None:
    """``TileType::verify``: even element count for ``f4E2M1FN``, then ``verifyTileSize``.

    Shared by the tile type and the tile shapes of the view types.
    Source: NVIDIA Types.cpp TileType::verify, SharedVerifiers.h verifyTileSize.
    """
    if element == T.FloatType("f4E2M1FN"):
        if not shape or all(d % 2 != 0 for d in shape):
            return _issue("f4_even")
    count = 1
    for d in shape:
        if d <= 0:
            return _issue("dim_positive", shape=join(shape))
        if d & (d - 1):
            return _issue("dim_pow2", shape=join(shape))
        if count > MAX_TILE_ELEMENTS // d:
            return _issue("too_many", max=MAX_TILE_ELEMENTS)
        count *= d
    return None


def tile_issue(t: T.TileType) -> TypeIssue | None:
    """``!cuda_tile.tile``: static dimensions (parser), element constraint, then ``verify``.

    Source: NVIDIA Types.cpp TileType::parse / TileType::verify, Types.td CudaTile_TileType.
    """
    for i, d in enumerate(t.shape):
        if d is None:
            return _issue("static_shape", Anchor("dim", i), prefixed=False)
    if _unknown(t.element):
        return None
    if not is_tile_element(t.element):
        return _issue("param", param="elementType", summary=TILE_ELEMENT_SUMMARY)
    return tile_size_issue(tuple(t.shape), t.element)


def pointer_issue(t: T.PointerType) -> TypeIssue | None:
    """``!cuda_tile.ptr``: the pointee must be a number type (Types.td CudaTile_PointerType)."""
    if _unknown(t.pointee) or is_number(t.pointee):
        return None
    return _issue("param", param="pointeeType", summary=NUMBER_SUMMARY)


def tensor_view_issue(t: T.TensorViewType) -> TypeIssue | None:
    """``!cuda_tile.tensor_view``: positive written strides (parser), element constraint, ``verify``.

    Source: NVIDIA Types.cpp parseStrideArray / TensorViewType::verify.
    """
    for i, s in enumerate(t.strides):
        if s is not None and s <= 0:
            return _issue("stride_positive", Anchor("stride", i), value=s)
    if not _unknown(t.element) and not is_number(t.element):
        return _issue("param", param="elementType", summary=NUMBER_SUMMARY)
    if len(t.shape) != len(t.strides):
        return _issue("tv_rank", shape=len(t.shape), stride=len(t.strides))
    if any(d is not None and d <= 0 for d in t.shape):
        return _issue("tv_sizes", dims=_print_dynamic(t.shape))
    if any(s is not None and s <= 0 for s in t.strides):
        return _issue("tv_strides", dims=_print_dynamic(t.strides))
    return None


def _tile_dims_i32(shape: tuple[int, ...]) -> TypeIssue | None:
    """``parseViewTileShape``: each tile dimension must fit a positive i32 (reported at ``(``)."""
    for i, v in enumerate(shape):
        if v <= 0 or v > INT32_MAX:
            return _issue("tile_dim_i32", Anchor("tile_shape"), index=i, value=v)
    return None


def _padding_keyword(value: str | None) -> TypeIssue | None:
    """``parseOptionalPaddingValue``: the keyword must be a ``PaddingValue`` case."""
    if value is None or value in ENUMS["PaddingValue"].spellings:
        return None
    return _issue("padding_keyword", Anchor("padding"), value=value)


def _padding_float(value: str | None, element: T.Type) -> TypeIssue | None:
    """Special padding values need a floating-point element type."""
    if value in FLOAT_ONLY_PADDING and not _unknown(element) and not isinstance(element, T.FloatType):
        return _issue("padding_float", value=value, type=quoted(element))
    return None


def _tensor_view_param(view: T.Type) -> TypeIssue | None:
    if isinstance(view, T.TensorViewType) or _unknown(view):
        return None
    return _issue("not_tensor_view", Anchor("after_view"), type=quoted(view))


def _dim_map(t: T.PartitionViewType | T.StridedViewType) -> tuple[int, ...]:
    return tuple(t.dim_map) if t.dim_map is not None else tuple(range(len(t.tile_shape)))


def partition_view_like_issue(tile_shape: tuple[int, ...], tv: T.TensorViewType, dim_map: tuple[int, ...],
                              padding: str | None) -> TypeIssue | None:
    """``verifyPartitionViewLike`` of Types.cpp (partition and strided views)."""
    rank = len(tv.shape)
    issue = _view_shape_issue(tile_shape, rank, dim_map)
    if issue is not None:
        return issue
    used: dict[int, int] = {}
    for tile_dim, target in enumerate(dim_map):
        if target < 0:
            return _issue("dim_map_negative", dim=target)
        if target >= rank:
            return _issue("dim_map_range", rank=rank, dim=target)
        if target in used:
            return _issue("dim_map_twice", dim=target, first=used[target], second=tile_dim)
        used[target] = tile_dim
    return _view_element_issue(tile_shape, tv, padding)


def _view_shape_issue(tile_shape: tuple[int, ...], rank: int,
                      dim_map: tuple[int, ...] | None = None) -> TypeIssue | None:
    """The tile shape checks shared by the view verifiers (``dim_map``: its size is checked too)."""
    if not tile_shape:
        return _issue("view_0d")
    if len(tile_shape) != rank:
        return _issue("view_rank", tv=rank, tile=len(tile_shape))
    if dim_map is not None and len(dim_map) != len(tile_shape):
        return _issue("dim_map_size", rank=len(tile_shape), size=len(dim_map))
    if any(d <= 0 for d in tile_shape):
        return _issue("view_dim_positive", dims=join(tile_shape))
    if any(d & (d - 1) for d in tile_shape):
        return _issue("view_dim_pow2", dims=join(tile_shape))
    return None


def _view_element_issue(tile_shape: tuple[int, ...], tv: T.TensorViewType, padding: str | None) -> TypeIssue | None:
    """The last checks of the view verifiers: the tile size, then the padding against the element type."""
    if not _unknown(tv.element):
        issue = tile_size_issue(tile_shape, tv.element)
        if issue is not None:
            return issue
    return _padding_float(padding, tv.element)


def _partition_like_view_issue(t: T.PartitionViewType | T.StridedViewType) -> TypeIssue | None:
    """The parser checks of a partition or strided view, then ``verifyPartitionViewLike``."""
    for issue in (_tile_dims_i32(t.tile_shape), _padding_keyword(t.padding_value),
                  _tensor_view_param(t.tensor_view)):
        if issue is not None:
            return issue
    if not isinstance(t.tensor_view, T.TensorViewType):
        return None
    return partition_view_like_issue(tuple(t.tile_shape), t.tensor_view, _dim_map(t), t.padding_value)


def partition_view_issue(t: T.PartitionViewType) -> TypeIssue | None:
    """``!cuda_tile.partition_view``: parser checks, then ``verifyPartitionViewLike``.

    Source: NVIDIA Types.cpp PartitionViewType::parse / PartitionViewType::verify.
    """
    return _partition_like_view_issue(t)


def strided_view_issue(t: T.StridedViewType) -> TypeIssue | None:
    """``!cuda_tile.strided_view``: parser checks, ``verifyPartitionViewLike``, traversal strides.

    Source: NVIDIA Types.cpp StridedViewType::parse / StridedViewType::verify.
    """
    issue = _partition_like_view_issue(t)
    if issue is not None or not isinstance(t.tensor_view, T.TensorViewType):
        return issue
    if len(t.tile_shape) != len(t.traversal_strides):
        return _issue("traversal_count", rank=len(t.tile_shape), count=len(t.traversal_strides))
    if any(s is None or s <= 0 for s in t.traversal_strides):
        return _issue("traversal_positive", strides=join("?" if s is None else s for s in t.traversal_strides))
    return None


def gather_scatter_view_issue(t: T.GatherScatterViewType) -> TypeIssue | None:
    """``!cuda_tile.gather_scatter_view``: parser checks, then ``verify``.

    Source: NVIDIA Types.cpp GatherScatterViewType::parse / GatherScatterViewType::verify.
    """
    for issue in (_padding_keyword(t.padding_value), _tensor_view_param(t.view), _tile_dims_i32(t.tile_shape)):
        if issue is not None:
            return issue
    tv = t.view
    if not isinstance(tv, T.TensorViewType):
        return None
    shape = tuple(t.tile_shape)
    rank = len(tv.shape)
    issue = _view_shape_issue(shape, rank)
    if issue is not None:
        return issue
    if t.sparse_dim >= rank:
        return _issue("sparse_dim", rank=rank, dim=t.sparse_dim)
    return _view_element_issue(shape, tv, t.padding_value)


# the rule of each cuda_tile type class, in the order :func:`type_issue` tries them
_TYPE_RULES: tuple[tuple[type, Callable[[Any], TypeIssue | None]], ...] = (
    (T.TileType, tile_issue),
    (T.PointerType, pointer_issue),
    (T.TensorViewType, tensor_view_issue),
    (T.PartitionViewType, partition_view_issue),
    (T.StridedViewType, strided_view_issue),
    (T.GatherScatterViewType, gather_scatter_view_issue),
)


# ---------------------------------------------------------------------------
# Positions in the written text
# ---------------------------------------------------------------------------

# index of the nested tensor_view among the children of a view type node
_VIEW_PARAM_INDEX = {"partition_view_type": 2, "strided_view_type": 3, "gather_scatter_view_type": 2}

_TYPE_NODES = ("tile_type", "ptr_type", "tensor_view_type", "partition_view_type", "strided_view_type",
               "gather_scatter_view_type")


def _pos(x: Any, which: str) -> int | None:
    """Offset ``which`` (``start_pos`` or ``end_pos``) of a token or a tree's meta, ``None`` if unknown."""
    if x is None:
        return None
    if hasattr(x, which) and not hasattr(x, "meta"):
        return getattr(x, which)
    meta = getattr(x, "meta", None)
    if meta is None or getattr(meta, "empty", True):
        return None
    return getattr(meta, which)


def _start(x: Any) -> int | None:
    return _pos(x, "start_pos")


def _end(x: Any) -> int | None:
    return _pos(x, "end_pos")


def _skip_space(text: str, pos: int) -> int:
    """The offset of the next token at or after ``pos`` (whitespace and ``//`` comments skipped)."""
    n = len(text)
    while pos < n:
        if text[pos].isspace():
            pos += 1
        elif text.startswith("//", pos):
            nl = text.find("\n", pos)
            pos = n if nl < 0 else nl + 1
        else:
            break
    return pos


def _find(text: str, what: str, start: int, end: int | None) -> int | None:
    k = text.find(what, start, end if end is not None else len(text))
    return k if k >= 0 else None


def _syntax_issue(node: Any, text: str) -> LocatedTypeError | None:
    """Checks of ``TensorViewType::parse`` that need the written text (the ``strides`` clause)."""
    if getattr(node, "data", None) != "tensor_view_type":
        return None
    dims, elem, strides = (list(node.children) + [None, None, None])[:3]
    elem_end = _end(elem)
    node_end = _end(node)
    if elem_end is None or node_end is None:
        return None
    after = _skip_space(text, elem_end)
    has_dims = dims is not None and str(dims) != ""
    if not has_dims:
        if after < node_end and text[after] == ",":
            kw = _skip_space(text, after + 1)
            if text.startswith("strides", kw):
                return LocatedTypeError(MESSAGES["strides_0d"], _skip_space(text, kw + len("strides")))
        return None
    if after < node_end and text[after] != ",":
        return LocatedTypeError(MESSAGES["strides_missing"], after)
    return None


def _anchor_offset(node: Any, anchor: Anchor, text: str) -> int | None:
    start = _start(node)
    if start is None:
        return None
    end = _end(node)
    children = list(node.children)
    kind = anchor.kind
    if kind == "open":
        return _find(text, "<", start, end)
    if kind == "dim":
        tok = children[0] if children else None
        s = _start(tok)
        if s is None:
            return None
        off = s
        for k, part in enumerate(str(tok).split("x")):
            if k == anchor.index:
                return off
            off += len(part) + 1
        return None
    if kind == "stride":
        lists = [c for c in children if getattr(c, "data", None) == "stride_list"]
        if not lists:
            return None
        items = lists[0].children
        return _start(items[anchor.index]) if anchor.index < len(items) else None
    if kind == "tile_shape":
        shapes = [c for c in children if getattr(c, "data", None) == "view_tile_shape"]
        return _find(text, "(", _start(shapes[0]), end) if shapes and _start(shapes[0]) is not None else None
    if kind == "padding":
        pads = [c for c in children if getattr(c, "data", None) == "padding_spec"]
        return _find(text, "=", _start(pads[0]), end) if pads and _start(pads[0]) is not None else None
    if kind == "after_view":
        index = _VIEW_PARAM_INDEX.get(node.data)
        if index is None or index >= len(children):
            return None
        e = _end(children[index])
        return _skip_space(text, e) if e is not None else None
    return None


def locate_type_error(node: Any, t: T.Type, text: str) -> LocatedTypeError | None:
    """The first error of the written cuda_tile type ``node`` (a parse tree) of value ``t``.

    Returns the message with the code-point offset in ``text`` (the text the
    tree's positions refer to) where MLIR reports it, or ``None``.  Nodes
    that only refer to a type (aliases, wrappers) give ``None``.  Whether
    ``custom op '<op>' `` goes before the message is the caller's business
    (see :class:`LocatedTypeError`).  Source: NVIDIA Types.cpp.
    """
    if getattr(node, "data", None) not in _TYPE_NODES:
        return None
    for inner in _nested(t):
        if isinstance(inner, T.CudaTileType) and type_issue(inner) is not None:
            return None
    found = _syntax_issue(node, text)
    if found is not None:  # the strides clause is read before anything is verified
        return found
    issue = type_issue(t)
    if issue is None:
        return None
    off = _anchor_offset(node, issue.anchor, text)
    if off is None:
        off = _find(text, "<", _start(node) or 0, _end(node)) or (_start(node) or 0)
    return LocatedTypeError(issue.message, off, issue.prefixed)
