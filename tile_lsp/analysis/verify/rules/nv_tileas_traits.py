"""The 23 ``OpTrait::nv_tile`` traits as reusable checks, and the shared helper rules (spec 000).

An op of :mod:`tile_lsp.dialect.nv_tileas_ops` lists its traits as
``nv_tile::<Name>``; :func:`run_nv_tile_traits` runs the check of each, in
table order, before the op's own verifier (spec 000: "the framework runs them
all before the op's own verify method").  Tag-only traits (memory-model
read/write, pipeline acquire/release) have no check.  Trait texts without a
shipped string are tile-lsp's words (:data:`TRAIT_MESSAGES`); the tile-size
helper reuses the shipped ``verifyTileSize`` strings.
"""

from __future__ import annotations

from typing import Callable

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.syntax.type_rules import MAX_TILE_ELEMENTS, join
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.dialect import nv_tileas_types as NT
from tile_lsp.dialect import types as T

TRAIT_MESSAGES = {
    "queue_alias": "the queue operand must not alias any other operand",
    "mem_layout": "expects at least one operand or the result to carry a memory layout",
    "shared_encoding": "expects results to carry the shared-memory (SMEM) encoding",
    "same_encoding": "expects operands and results to have the same encoding",
    "same_shape": "expects operands and results to have the same shape",
    "same_atom": "expects operands and results to carry the same atom",
    "view_shape": "tiled_view shape must match the tensor shape",
    "dim_positive": "all dimensions must be positive constants, got {shape}",
    "dim_pow2": "all dimensions must be powers of two, got {shape}",
    "too_many": "tile would exceed the maximum of {max} elements",
    "layout_missing": "expects every tensor operand to carry a layout",
    "element_type": "tile element type must match view element type",
    "padding_in_bounds": "padding value is only allowed when 'in_bounds' is false",
    "special_padding": "NaN, infinity and negative zero padding values require a floating-point element type",
}

#: The closed trait family (spec 000 "OpTrait::nv_tile Inventory"), 23 names.
NV_TILE_TRAITS = (
    "FirstOperandIsNonAliasingQueue", "MemoryModelReadTrait", "MemoryModelWriteTrait",
    "MemoryModelReadWriteTrait", "MustHaveMemLayoutAmongOperandsAndResult", "PipelineAcquireOpTrait",
    "PipelineReleaseOpTrait", "ResultsAreSharedEncoding", "SameLoadStoreOperandsAndResultEncoding",
    "SameLoadStoreOperandsAndResultShape", "SameLoadStoreOperandsEncoding", "SameLoadStoreOperandsShape",
    "SameOperandsAndResultEncoding", "SameOperandsEncoding", "SameOperandsAndResultsAtom",
    "SameOperationAndResultsAtom", "SameTiledViewAndTensorShapeTrait", "TensorSizeTrait",
    "TensorTypeHavingLayout", "TiledLoadStoreOpTrait", "TiledLoadStoreOpSameElementTypeTrait",
    "TiledPaddingValueTrait", "ValidTileASLoadOperandsAndResultEncoding",
)

#: Padding words valid only for floating-point elements (shared helper "special padding").
SPECIAL_PADDING = ("nan", "pos_inf", "neg_inf", "neg_zero", "inf", "-inf")


def tile_size_issue(shape) -> str | None:
    """Shared helper "tile dimensions": positive, power of two, total under ``maxTileNumElements``.

    Messages are the shipped ``verifyTileSize`` ones (cuda-tile SharedVerifiers.h).
    """
    count = 1
    for d in shape:
        if d is None:
            continue
        if d <= 0:
            return TRAIT_MESSAGES["dim_positive"].format(shape=join(shape))
        if d & (d - 1):
            return TRAIT_MESSAGES["dim_pow2"].format(shape=join(shape))
        if count > MAX_TILE_ELEMENTS // d:
            return TRAIT_MESSAGES["too_many"].format(max=MAX_TILE_ELEMENTS)
        count *= d
    return None


def _encoding(t) -> str | None:
    d = NT.decode_type(t)
    return d.memory_space if isinstance(d, NT.TiledViewType) else None


def view_payload_field(t, field: str):
    """``field`` (``"shape"`` or ``"element"``) of a tiled_view, of a tile, or of the payload of an
    async value of either; ``None`` for any other type (never raises)."""
    d = NT.decode_type(t)
    if isinstance(d, NT.TiledViewType):
        return getattr(d, field)
    if isinstance(d, NT.AsyncValueType):
        return view_payload_field(d.payload, field)
    return getattr(t, field) if isinstance(t, T.TileType) else None


def shape_of(t) -> tuple | None:
    """Shape of a tile, tiled_view or async value of a tile, else ``None``."""
    return view_payload_field(t, "shape")


def _value_types(op: Operation, results: bool = True) -> list:
    ts = [v.type for v in op.operands]
    return ts + [r.type for r in op.results] if results else ts


def _check_queue(op: Operation, ctx: VerifyContext) -> None:
    if op.operands and any(v is op.operands[0] for v in op.operands[1:]):
        ctx.op_error(op, TRAIT_MESSAGES["queue_alias"])


def _check_mem_layout(op: Operation, ctx: VerifyContext) -> None:
    if not any(_encoding(t) for t in _value_types(op)):
        ctx.op_error(op, TRAIT_MESSAGES["mem_layout"])


def _check_shared_results(op: Operation, ctx: VerifyContext) -> None:
    if any(_encoding(r.type) not in (None, "SMEM") for r in op.results):
        ctx.op_error(op, TRAIT_MESSAGES["shared_encoding"])


def _same(values) -> bool:
    known = [v for v in values if v is not None]
    return all(v == known[0] for v in known)


def _check_same_encoding(with_results: bool) -> Callable:
    def check(op: Operation, ctx: VerifyContext) -> None:
        if not _same([_encoding(t) for t in _value_types(op, with_results)]):
            ctx.op_error(op, TRAIT_MESSAGES["same_encoding"])
    return check


def _check_same_shape(with_results: bool) -> Callable:
    def check(op: Operation, ctx: VerifyContext) -> None:
        shaped = [t for t in _value_types(op, with_results) if isinstance(NT.decode_type(t), NT.TiledViewType)
                  or isinstance(t, T.TileType)]
        if not _same([shape_of(t) for t in shaped]):
            ctx.op_error(op, TRAIT_MESSAGES["same_shape"])
    return check


def _atom_of(v) -> str | None:
    owner = v.defining_op
    atom = NT.decode_atom(owner.attr("atom")) if owner is not None else None
    return atom.name if atom else None


def _check_same_atom(op: Operation, ctx: VerifyContext) -> None:
    mine = NT.decode_atom(op.attr("atom"))
    theirs = [_atom_of(v) for v in op.operands]
    if not _same(theirs + [mine.name if mine else None]):
        ctx.op_error(op, TRAIT_MESSAGES["same_atom"])


def _check_tensor_size(op: Operation, ctx: VerifyContext) -> None:
    for t in _value_types(op):
        d = NT.decode_type(t)
        if isinstance(d, NT.TiledViewType):
            issue = tile_size_issue(d.shape)
            if issue:
                ctx.op_error(op, issue)


def _check_layout(op: Operation, ctx: VerifyContext) -> None:
    for t in _value_types(op, False):
        d = NT.decode_type(t)
        if isinstance(d, NT.TiledViewType) and d.memory_space is None:
            ctx.op_error(op, TRAIT_MESSAGES["layout_missing"])


def _check_view_shape(op: Operation, ctx: VerifyContext) -> None:
    views = [NT.decode_type(t) for t in _value_types(op)]
    views = [v for v in views if isinstance(v, NT.TiledViewType)]
    tiles = [t for t in _value_types(op) if isinstance(t, T.TileType)]
    if views and tiles and any(t.shape != views[0].shape for t in tiles):
        ctx.op_error(op, TRAIT_MESSAGES["view_shape"])


def padding_issue(padding, in_bounds, element) -> str | None:
    """Shared helpers "store padding" and "special padding" (spec 000).

    ``padding``: the padding attribute or ``None``; ``in_bounds``: the
    in_bounds attribute or ``None`` (absent = false); ``element``: the
    element type.  Padding needs every in_bounds flag false; NaN, infinities
    and negative zero need a float element.
    """
    if padding is None:
        return None
    flags = getattr(in_bounds, "values", None)
    if flags is None and isinstance(in_bounds, A.BoolAttr):
        flags = [in_bounds.value]
    if flags and any(bool(f) for f in flags):
        return TRAIT_MESSAGES["padding_in_bounds"]
    word = NT.enum_word(padding)
    value = getattr(padding, "value", None)
    special = (word or "").lower() in SPECIAL_PADDING or (
        isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))
                                      or (value == 0 and str(getattr(padding, "text", "")).startswith("-"))))
    if special and element is not None and not isinstance(element, T.FloatType):
        return TRAIT_MESSAGES["special_padding"]
    return None


def _check_padding(op: Operation, ctx: VerifyContext) -> None:
    views = [NT.decode_type(t) for t in _value_types(op)]
    elements = [v.element for v in views if isinstance(v, NT.TiledViewType)]
    issue = padding_issue(op.attr("padding_value"), op.attr("in_bounds"), elements[0] if elements else None)
    if issue:
        ctx.op_error(op, issue)


def _check_element_type(op: Operation, ctx: VerifyContext) -> None:
    views = [NT.decode_type(t) for t in _value_types(op)]
    views = [v for v in views if isinstance(v, NT.TiledViewType)]
    tiles = [view_payload_field(t, "element") for t in _value_types(op) if isinstance(t, T.TileType)
             or isinstance(NT.decode_type(t), NT.AsyncValueType)]
    if views and any(e is not None and e != views[0].element for e in tiles):
        ctx.op_error(op, TRAIT_MESSAGES["element_type"])


def _tag(op: Operation, ctx: VerifyContext) -> None:
    """Tag-only trait: marks the op for an analysis, nothing to verify."""


#: Trait name -> check ``fn(op, ctx)``.  Every name of :data:`NV_TILE_TRAITS` has an entry.
TRAIT_CHECKS: dict[str, Callable[[Operation, VerifyContext], None]] = {
    "FirstOperandIsNonAliasingQueue": _check_queue,
    "MemoryModelReadTrait": _tag,
    "MemoryModelWriteTrait": _tag,
    "MemoryModelReadWriteTrait": _tag,
    "MustHaveMemLayoutAmongOperandsAndResult": _check_mem_layout,
    "PipelineAcquireOpTrait": _tag,
    "PipelineReleaseOpTrait": _tag,
    "ResultsAreSharedEncoding": _check_shared_results,
    "SameLoadStoreOperandsAndResultEncoding": _check_same_encoding(True),
    "SameLoadStoreOperandsAndResultShape": _check_same_shape(True),
    "SameLoadStoreOperandsEncoding": _check_same_encoding(False),
    "SameLoadStoreOperandsShape": _check_same_shape(False),
    "SameOperandsAndResultEncoding": _check_same_encoding(True),
    "SameOperandsEncoding": _check_same_encoding(False),
    "SameOperandsAndResultsAtom": _check_same_atom,
    "SameOperationAndResultsAtom": _check_same_atom,
    "SameTiledViewAndTensorShapeTrait": _check_view_shape,
    "TensorSizeTrait": _check_tensor_size,
    "TensorTypeHavingLayout": _check_layout,
    "TiledLoadStoreOpTrait": _tag,  # pulls in the memop helper bundle: verify_tiled_memop
    "TiledLoadStoreOpSameElementTypeTrait": _check_element_type,
    "TiledPaddingValueTrait": _check_padding,
    "ValidTileASLoadOperandsAndResultEncoding": _check_same_encoding(True),
}
assert set(TRAIT_CHECKS) == set(NV_TILE_TRAITS) and len(NV_TILE_TRAITS) == 23


def run_nv_tile_traits(op: Operation, ctx: VerifyContext) -> None:
    """Run the check of each ``nv_tile::`` trait of ``op``'s definition, in table order."""
    if op.opdef is None:
        return
    for trait in op.opdef.traits:
        if trait.startswith("nv_tile::"):
            fn = TRAIT_CHECKS.get(trait[len("nv_tile::"):])
            if fn is not None:
                ctx.code = f"{op.name}.trait.{trait[len('nv_tile::'):]}"
                fn(op, ctx)


def _register() -> None:
    try:
        from tile_lsp.dialect.nv_tileas_ops import OPS
    except ImportError:  # pragma: no cover - table absent
        return
    names = [op.full_name for op in OPS if any(t.startswith("nv_tile::") for t in op.traits)]
    rule(*names, code="nv-tile-traits")(run_nv_tile_traits)


_register()
