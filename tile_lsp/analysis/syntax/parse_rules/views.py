"""Parse-time errors of the parsers of the view and memory operations.

``load_view_tko`` / ``store_view_tko`` (``parseMemoryAttributes``: the
ordering and scope keywords with their own wording, then the index types),
``atomic_red_view_tko`` (its own keyword wording), ``make_tensor_view`` (the
shape and stride lists against the tensor_view type), the
``make_*_view`` result types and the source types of ``get_tensor_shape`` /
``get_index_space_shape``; and the enum keywords of the memory ops with
declarative formats (``load_ptr_tko``, ``store_ptr_tko``, ``atomic_rmw_tko``,
``atomic_cas_tko``) in the wording of MLIR's generated parsers.  MLIR
prefixes these with ``custom op '<op>' `` (except the errors of its own
token-level helpers, reported with ``plain_error``).

Rule source: NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``
(``parseMemoryAttributes``, ``parseIndexTypes``, ``finalizeViewTkoParse``,
``LoadViewTkoOp::parse``, ``StoreViewTkoOp::parse``,
``AtomicRedViewTkoOp::parse``, ``MakeTensorViewOp::parse``,
``MakePartitionViewOp::parse``, ``MakeStridedViewOp::parse``,
``MakeGatherScatterViewOp::parse``, ``GetTensorShapeOp::parse``,
``GetIndexSpaceShapeOp::parse``) and the assembly formats of ``Ops.td``.
"""

from __future__ import annotations

from typing import Any

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.diagnostics import Range
from tile_lsp.analysis.syntax.parse_rules import ParseContext, parse_rule
from tile_lsp.dialect import types as T
from tile_lsp.dialect.custom_formats import (
    DECLARATIVE_ENUMS,
    MSG_GENERATED_ENUM,
    MSG_ORDERING,
    MSG_RED_MODE,
    MSG_RED_ORDERING,
    MSG_RED_SCOPE,
    MSG_SCOPE,
    MSG_WEAK_SCOPE,
)
from tile_lsp.dialect.enums import ENUMS

#: Attributes whose keywords the rules of this module check, with the parsers'
#: own wording (the builder's generic enum check must leave them alone).
CUSTOM_ENUM_KEYWORDS: dict[str, tuple[str, ...]] = {
    "load_view_tko": ("memory_ordering_semantics", "memory_scope"),
    "store_view_tko": ("memory_ordering_semantics", "memory_scope"),
    "atomic_red_view_tko": ("memory_ordering_semantics", "memory_scope", "mode"),
    "load_ptr_tko": ("memory_ordering_semantics", "memory_scope"),
    "store_ptr_tko": ("memory_ordering_semantics", "memory_scope"),
    "atomic_rmw_tko": ("memory_ordering_semantics", "memory_scope", "mode"),
    "atomic_cas_tko": ("memory_ordering_semantics", "memory_scope"),
}

# finalizeViewTkoParse / AtomicRedViewTkoOp::parse
MSG_INDEX_TYPES_MISSING = "index types must be specified when indices are present"
MSG_INDEX_TYPE_COUNT = "expected {n} index types, got {m}"
# MakeTensorViewOp::parse
MSG_NOT_TENSOR_VIEW = "expected 'tensor_view' type, but got {type}"
MSG_DECL_COUNT = "expected {name} declaration to contain {rank} elements due to tensor_view type, but {n} were provided"
MSG_DECL_ENTRY = "input {name} dimension {i} does not match tensor_view type (expected {want}, got {got})"
# Make*ViewOp::parse: result type class -> its keyword
VIEW_RESULT_KINDS: dict[str, tuple[type, str]] = {
    "make_partition_view": (T.PartitionViewType, "partition_view"),
    "make_strided_view": (T.StridedViewType, "strided_view"),
    "make_gather_scatter_view": (T.GatherScatterViewType, "gather_scatter_view"),
}


def _point(r: Range | None) -> Range | None:
    return r.at_start() if r is not None else None


def _end_point(r: Range | None) -> Range | None:
    return Range(r.end, r.end) if r is not None else None





def _next_token(ctx: ParseContext, after: Range | None) -> Range | None:
    """MLIR's ``getCurrentLocation`` after ``after``: the next token past blanks and ``//`` comments."""
    if after is None:
        return None
    found = ctx.next_token_at(after.end)
    return found if found is not None else _end_point(after)


def _case(ctx: ParseContext, name: str) -> tuple[str, Range | None] | None:
    a = ctx.props.get(name)
    if isinstance(a, A.EnumAttr):
        return a.case, a.range
    return None


def _is_case(enum: str, spelling: str) -> bool:
    return spelling in ENUMS[enum].spellings


def _known(t: Any) -> bool:
    return t is not None and t != T.UNKNOWN


# ---------------------------------------------------------------------------
# load_view_tko / store_view_tko / atomic_red_view_tko
# ---------------------------------------------------------------------------


@parse_rule("load_view_tko", "store_view_tko")
def memory_attributes(ctx: ParseContext) -> None:
    """``parseMemoryAttributes``: a known ordering; no scope after weak; a known scope.

    Source: NVIDIA CudaTile.cpp parseMemoryAttributes.
    """
    ordering = _case(ctx, "memory_ordering_semantics")
    if ordering is not None and not _is_case("MemoryOrderingSemantics", ordering[0]):
        ctx.error(MSG_ORDERING.format(kw=ordering[0]), _point(ordering[1]))
    scope = _case(ctx, "memory_scope")
    if scope is None:
        return
    if ordering is not None and ordering[0] == "weak":
        ctx.error(MSG_WEAK_SCOPE.format(kw=scope[0]), _point(scope[1]))
    if not _is_case("MemoryScope", scope[0]):
        ctx.error(MSG_SCOPE.format(kw=scope[0]), _point(scope[1]))


@parse_rule("atomic_red_view_tko")
def atomic_red_keywords(ctx: ParseContext) -> None:
    """The ordering, scope and mode keywords, in the parser's order and wording.

    The mode is reported where the parser stood before the ``,`` that
    precedes it.  Source: NVIDIA CudaTile.cpp AtomicRedViewTkoOp::parse.
    """
    ordering = _case(ctx, "memory_ordering_semantics")
    if ordering is not None and not _is_case("MemoryOrderingSemantics", ordering[0]):
        ctx.error(MSG_RED_ORDERING.format(kw=ordering[0]), _point(ordering[1]))
    scope = _case(ctx, "memory_scope")
    if scope is not None and not _is_case("MemoryScope", scope[0]):
        ctx.error(MSG_RED_SCOPE.format(kw=scope[0]), _point(scope[1]))
    mode = _case(ctx, "mode")
    if mode is not None and not _is_case("AtomicRMWMode", mode[0]):
        index_list = ctx.nodes.get("index")
        where = _next_token(ctx, ctx.rng(index_list)) if index_list is not None else None
        ctx.error(MSG_RED_MODE.format(kw=mode[0]), where or _point(mode[1]))


@parse_rule("load_view_tko", "store_view_tko", "atomic_red_view_tko")
def index_types(ctx: ParseContext) -> None:
    """Index types: present when there are indices; one (splat) or one per index.

    Source: NVIDIA CudaTile.cpp parseIndexTypes / finalizeViewTkoParse.
    """
    indices = ctx.operands.get("index") or []
    written = ctx.type_ranges.get("index") or []
    if indices and not written:
        ctx.error(MSG_INDEX_TYPES_MISSING, _next_token(ctx, ctx.op_range))
    if len(written) > 1 and len(written) != len(indices):
        ctx.error(MSG_INDEX_TYPE_COUNT.format(n=len(indices), m=len(written)), _point(written[0]))


# ---------------------------------------------------------------------------
# load_ptr_tko / store_ptr_tko / atomic_rmw_tko / atomic_cas_tko (declarative formats)
# ---------------------------------------------------------------------------


@parse_rule("load_ptr_tko", "store_ptr_tko", "atomic_rmw_tko", "atomic_cas_tko")
def generated_enum_keywords(ctx: ParseContext) -> None:
    """The enum keywords of the memory ops with declarative formats, as MLIR's generated parser reads them.

    A required enum must be one of its cases (``expected string or keyword
    containing one of the following enum values for attribute ...``).  An
    optional one (``($memory_scope^)?``) that is not a case leaves its group
    out, so the keyword is read as the next operand: ``expected SSA operand``
    at the end of the token before it (MLIR ``emitWrongTokenError``).
    Source: the parsers mlir-tblgen generates from the formats of NVIDIA Ops.td.
    """
    previous: Range | None = None
    for attr, enum, optional in DECLARATIVE_ENUMS[ctx.opdef.name]:
        found = _case(ctx, attr)
        if found is None:
            continue
        case, rng = found
        if not _is_case(enum, case):
            if optional and previous is not None:
                ctx.plain_error("expected SSA operand", _end_point(previous))
            ctx.error(MSG_GENERATED_ENUM.format(attr=attr, cases=", ".join(ENUMS[enum].spellings)), _point(rng))
        previous = rng


# ---------------------------------------------------------------------------
# make_tensor_view
# ---------------------------------------------------------------------------


def _items(node: Any) -> list[Any]:
    if node is None:
        return []
    return [c for c in getattr(node, "children", []) if c is not None]


def _is_value(item: Any) -> bool:
    return getattr(item, "data", None) == "value_use"


def _entry(item: Any) -> int | None:
    """A written shape/stride entry: its integer, or ``None`` for an SSA value (dynamic)."""
    if _is_value(item):
        return None
    try:
        return int(str(item), 0)
    except ValueError:
        return int(str(item))


def _dynamic_or(v: int | None) -> str:
    return "dynamic" if v is None else str(v)


def _compare_declaration(ctx: ParseContext, node: Any, from_type: tuple[int | None, ...], name: str) -> None:
    items = _items(node)
    if len(items) != len(from_type):
        ctx.error(MSG_DECL_COUNT.format(name=name, rank=len(from_type), n=len(items)), _point(ctx.rng(node)))
    for i, (item, want) in enumerate(zip(items, from_type)):
        got = _entry(item)
        if got != want:
            ctx.error(MSG_DECL_ENTRY.format(name=name, i=i, want=_dynamic_or(want), got=_dynamic_or(got)),
                      _point(ctx.rng(item)))


@parse_rule("make_tensor_view")
def make_tensor_view_declarations(ctx: ParseContext) -> None:
    """The optional ``T ->`` of the dynamic values, a tensor_view result, then the lists against it.

    Source: NVIDIA CudaTile.cpp MakeTensorViewOp::parse.
    """
    shape_node = ctx.nodes.get("dynamicShape")
    stride_node = ctx.nodes.get("dynamicStrides")
    arrow = ctx.nodes.get("result")
    if arrow is None or not getattr(arrow, "children", None):
        return
    first, second = (list(arrow.children) + [None, None])[:2]
    dynamic = any(_is_value(i) for i in _items(shape_node) + _items(stride_node))
    if dynamic and second is None:
        ctx.plain_error("expected '->'", _next_token(ctx, ctx.rng(first)))
    result_types = ctx.types.get("result") or []
    if not dynamic and second is not None:
        # without dynamic values the first type is read as the tensor_view type
        view, view_node = _index_type(ctx), first
    else:
        view, view_node = (result_types[0] if result_types else None), (second if second is not None else first)
    if not _known(view):
        return
    if not isinstance(view, T.TensorViewType):
        ctx.error(MSG_NOT_TENSOR_VIEW.format(type=f"'{view}'"), _next_token(ctx, ctx.rng(view_node)))
    _compare_declaration(ctx, shape_node, tuple(view.shape), "shape")
    _compare_declaration(ctx, stride_node, tuple(view.strides), "stride")


def _index_type(ctx: ParseContext) -> Any:
    """The type written before ``->`` (the builder gives it to the dynamic operand groups)."""
    for name in ("dynamicShape", "dynamicStrides"):
        ts = ctx.types.get(name)
        if ts:
            return ts[0]
    return None


# ---------------------------------------------------------------------------
# make_*_view, get_tensor_shape, get_index_space_shape
# ---------------------------------------------------------------------------


def _expect_type(ctx: ParseContext, group: str, cls: type | tuple[type, ...], message: str) -> None:
    """Report ``message`` (``{}``: the type) at the first type written for ``group`` unless it is a ``cls``."""
    ts = ctx.types.get(group) or []
    ranges = ctx.type_ranges.get(group) or []
    if ts and _known(ts[0]) and not isinstance(ts[0], cls):
        ctx.error(message.format(ts[0]), _point(ranges[0] if ranges else None))


@parse_rule("make_partition_view", "make_strided_view", "make_gather_scatter_view")
def make_view_result_type(ctx: ParseContext) -> None:
    """The written type must be the op's view kind (NVIDIA CudaTile.cpp Make*ViewOp::parse)."""
    cls, keyword = VIEW_RESULT_KINDS[ctx.opdef.name]
    _expect_type(ctx, "result", cls, f"expected '{keyword}' type, but got '{{}}'")


@parse_rule("get_tensor_shape")
def get_tensor_shape_source(ctx: ParseContext) -> None:
    """The source type must be a tensor_view (NVIDIA CudaTile.cpp GetTensorShapeOp::parse)."""
    _expect_type(ctx, "src", T.TensorViewType, "expected tensor_view, got '{}'")


@parse_rule("get_index_space_shape")
def get_index_space_shape_source(ctx: ParseContext) -> None:
    """The source type must be a tile view (NVIDIA CudaTile.cpp GetIndexSpaceShapeOp::parse)."""
    _expect_type(ctx, "src", T.TILE_VIEW_TYPES, "expected tile view, got '{}'")
