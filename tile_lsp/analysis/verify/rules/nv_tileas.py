"""Verifiers of the nv_tileas dialect (spec 000 "nv_tileas Verifiers", 002 op tables).

Covered: the region-op template shared by produce_one / produce_one_async /
consume_one / consume_one_async (and the yield of agent regions), the
consumer_idx checks, agent_switch, the TMA ops, the tiled memops
(tiled_load / tiled_store / tiled_atomic_rmw and async variants),
convert_layout, copy memory-space pairs, dot and block-scaled MMA (five
phases, packed ``(atom_K << 32) | vecSize`` result).  The shared helper rules
and the ``OpTrait::nv_tile`` trait checks live in
:mod:`tile_lsp.analysis.verify.rules.nv_tileas_traits`.

Messages: :data:`MESSAGES` maps a message id to its text.  Where the spec's
``verbatim-diagnostics.tsv`` marks a string ``in_tileiras=yes`` that string is
used byte for byte (typos kept: "arguement", "to be match", "such
asFloat4E2M1FNType"); ids listed in :data:`OWN_MESSAGES` are tile-lsp's words
for rules the spec states without a shipped string.
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import BlockArgument, Operation, OpResult, Value
from tile_lsp.analysis.verify.rules import nv_tileas_traits  # noqa: F401  (trait checks register first: they run first)
from tile_lsp.analysis.verify.rules.nv_tileas_traits import shape_of
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.dialect import nv_tileas_types as NT
from tile_lsp.dialect import types as T

P = "nv_tileas."
YIELD = "nv_tileas.async.pipeline.yield"

#: Message id -> text (format fields in braces).  Source: spec 000 tables and verbatim-diagnostics.tsv.
MESSAGES = {
    # region-op template (yes strings)
    "region_end": "expects regions to end with '" + YIELD + "', found '{found}'",
    "region_args": "expects region arguement types to match with producer types [{expected}], but got: [{got}]",
    "region_results": "expects region result types to be match with operation result types [{expected}], "
                      "but got: [{got}]",
    "region_yield": "expects region yield types to match with result types [{expected}], but got: [{got}]",
    "consumer_idx_bound": "expected 'consumer_idx' less than the number of consumer {count}",
    "consumer_idx_token": "expected 'consumer_idx' in token to be the same as 'consumer_idx' attribute of this "
                          "operation {token_idx}",
    # agent_switch (spec strings, in_tileiras=no; no shipped alternative)
    "agent_warps_disagree": "agent regions disagree on warp count",
    "agent_warps_budget": "agent warp count exceeds module budget",
    # TMA
    "tma_box_dims": "tma box-dim and copy atom box-dim mismatch",
    "tma_leading_align": "tma leading box-dim bit-width is not 16 bytes aligned",
    "tma_zero_padding": "TmaLoad only support zero padding now",
    "tma_scf": "expected MakeTiledTMADescOp not depends on scf",
    "tma_lower": "expect lower MakeTiledTMADescOp",
    "tma_load_atom": "expected a TMA load atom",
    "tma_unit_stride": "TMA descriptors require unit element stride",
    "tma_smem_layout": "smem layout is not TMA compatible",
    "coordinates": "expects {expected} coordinates, but got {got}",
    # tiled memops
    "segments": "operandSegmentSizes does not match the op schema",
    "token_segment": "tiled memop token segment must hold zero or one value",
    "coords_index": "tiled memop coordinates must be index-typed",
    "tile_shape": "tile shape must match tensor shape",
    "tile_element": "tile element type must match view element type",
    "load_acq_rel": "tiled_load rejects acquire_release semantic",
    "store_semantic": "tiled_store rejects {semantic} semantic",
    "scope_weak": "weak {kind} must not have memory scope",
    "scope_required": "memory scope is required for {semantic} {kind}",
    "block_tile": "{op}'s tiled_view type must be produced by block_tile directly",
    # atomics (yes strings; {prefix} is tiled_atomic_rmw or async_tiled_atomic_rmw)
    "rmw_8bit": "{prefix} not supported for 8-bit types",
    "rmw_16bit_int": "{prefix} not supported for 16-bit integer",
    "rmw_16bit_float": "{prefix} for 16-bit float only supports add, max, min operations",
    "rmw_fadd": "tiled_atomic_rmw op cannot use fadd operation, please use add instead for both int and float types",
    "rmw_xchg": "tiled_atomic_rmw op cannot use xchg operation",
    # layout, copy, dot
    "layout_element": "expects source and result element types to be the same",
    "layout_count": "expects source and result to have the same number of elements",
    "copy_pair": "unsupported memory space pair: {src} -> {dst}",
    "dot_elements": "expects A and B element types to be compatible, but got {a} and {b}",
    "dot_signedness": "integer MMA requires 'a_signed' and 'b_signed' attributes",
    # block-scaled MMA (phase order: presence, agreement, accumulator, K-extent, catalog)
    "bs_presence": "fp4 mma should expect scaling factors",
    "bs_agreement": "expects sfa/sfb element types to be the same",
    "bs_accumulator": "expects c type to be Float32",
    "bs_k_extent": "Scale factor vector size mismatch: {k_a}, {k_b}",
    "bs_sm": "mma block scale is not supported by compute capability < sm100",
    "bs_elements": "Block scale is not supported for f16, tf32, f8f6f4, i8 and ti16 types",
    "bs_vec32": "invalid block scale vector size. Expecting 32, but got {vec}",
    "bs_fp4_16": "expects A and B element types are valid 4bit types, such asFloat4E2M1FNType or "
                 "FloatNV4E0M3FType , when (atom_K=64 && vecSize=16)",
    "bs_sf_16": "expects sfa/sfb element types to be Float8E8M0FNUType or Float8E4M3FNType when "
                "(atom_K=64 && vecSize=16)",
    "bs_nvfp4": "expects A/B element types to be Float4E2M1FNType and sfa/sfb element types to be "
                "Float8E8M0FNUType when (atom_K=64 && vecSize=32)",
    "bs_sf_32": "expects sfa/sfb element types to be Float8E8M0FNUType when (atom_K=32 && vecSize=32)",
    "bs_2cta": "no 2-CTA block-scaled MMA atom for (atom_K=64 && vecSize=32)",
}

#: Ids whose text is tile-lsp's own (the spec states the rule without a string; see docs/nv_tileas.md).
OWN_MESSAGES = frozenset({"layout_element", "layout_count", "copy_pair", "dot_elements", "dot_signedness",
                          "store_semantic", "bs_sf_32", "bs_2cta"})

# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

#: Region ops of the template (spec 000 "Region-Op Verifier Template").
REGION_OPS = ("async.pipeline.produce_one", "async.pipeline.produce_one_async", "async.pipeline.consume_one",
              "async.pipeline.consume_one_async")
#: Ops carrying a consumer_idx checked against the consumer token (spec 000 diagnostics table).
CONSUMER_IDX_OPS = ("async.pipeline.consumer_wait", "async.pipeline.consumer_read", "async.pipeline.consume_one")

#: Legal (source, destination) residency pairs of copy / async.copy (spec 000 "Layout, Copy, and Dot").
COPY_PAIRS = frozenset({("GMEM", "RMEM"), ("GMEM", "SMEM"), ("RMEM", "GMEM"), ("RMEM", "SMEM"), ("RMEM", "TMEM"),
                        ("SMEM", "GMEM"), ("SMEM", "RMEM"), ("SMEM", "TMEM"), ("TMEM", "RMEM")})

#: Memory semantics each direction rejects (spec 002 tables: load accepts weak|relaxed|acquire).
LOAD_REJECTED = ("acq_rel", "acquire_release")
STORE_REJECTED = ("acquire", "acq_rel", "acquire_release")
#: Spellings of the semantics ordered by strength (weak has no scope).
SEMANTICS = ("weak", "relaxed", "acquire", "release", "acq_rel", "acquire_release")

#: Modes a 16-bit float atomic accepts (spec 000 atomic table).
RMW_F16_MODES = ("add", "max", "min")

FP4 = ("f4E2M1FN", NT.NV4_SPELLING)
FP8 = ("f8E5M2", "f8E4M3FN")
E8M0 = "f8E8M0FNU"
E4M3 = "f8E4M3FN"

#: Catalog of legal block-scaled (atom_K, vecSize) rows -> PTX kind (spec 000 "Block-Scaled MMA").
BLOCK_SCALED_CATALOG = {
    (32, 32): "tcgen05.mma.kind::f8f6f4",
    (64, 16): "tcgen05.mma.kind::mxf4",
    (64, 32): "tcgen05.mma.kind::mxf4nvf4",
}
#: Rows without a 2-CTA atom (spec 000 prose: "2-CTA rejects the NVFP4 row").
NO_TWO_CTA_ROWS = frozenset({(64, 32)})


def msg(mid: str, **fields) -> str:
    """The text of message ``mid`` with its fields filled in."""
    return MESSAGES[mid].format(**fields)


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def types_text(ts) -> str:
    """Types joined by ``, `` as MLIR streams a ``TypeRange``."""
    return ", ".join(str(t) for t in ts)


def attr_types(attr) -> list | None:
    """The types of an ``ArrayAttr`` of type attributes (``[tile<...>, ...]``), ``None`` if not one."""
    if not isinstance(attr, A.ArrayAttr):
        return None
    out = []
    for a in attr.elements:
        t = a.value if isinstance(a, A.TypeAttr) else None
        if not isinstance(t, T.Type):
            return None
        out.append(t)
    return out


def int_attr(op: Operation, name: str) -> int | None:
    """Value of integer attribute ``name`` of ``op``, else ``None``."""
    a = op.attr(name)
    v = getattr(a, "value", None)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def bool_attr(op: Operation, name: str) -> bool:
    """Whether ``name`` is a true bool attribute or a unit attribute on ``op``."""
    a = op.attr(name)
    if isinstance(a, A.UnitAttr):
        return True
    if isinstance(a, A.DialectAttr):
        return False  # its value is what the builder decoded (a carrier, a keyword), no truth value
    return bool(getattr(a, "value", False)) if a is not None else False


def int_list_attr(op: Operation, name: str) -> list[int] | None:
    """Values of a dense array / array of integers attribute, else ``None``."""
    a = op.attr(name)
    if isinstance(a, A.DenseArrayAttr):
        return [int(v) for v in a.values]
    if isinstance(a, A.ArrayAttr):
        vals = [getattr(x, "value", None) for x in _array_items(a)]
        return [int(v) for v in vals] if all(isinstance(v, int) for v in vals) else None
    return None


def _array_items(a) -> list:
    return list(getattr(a, "elements", None) or getattr(a, "values", None) or [])


def const_int(v: Value) -> int | None:
    """The integer a value is defined to by a constant op (``value`` attribute), else ``None``."""
    owner = v.defining_op
    if owner is None or not owner.name.endswith("constant"):
        return None
    a = owner.attr("value")
    val = getattr(a, "value", None)
    if isinstance(val, int):
        return val
    vals = getattr(a, "values", None)
    if vals and len(vals) == 1 and isinstance(vals[0], int):
        return vals[0]
    return None


def element_of(t) -> T.Type | None:
    """Element type of a tile, tiled_view or async value, a scalar itself, else ``None``."""
    d = NT.decode_type(t)
    if isinstance(d, NT.TiledViewType):
        return d.element
    if isinstance(d, NT.AsyncValueType):
        return element_of(d.payload)
    if isinstance(t, T.TileType):
        return t.element
    if isinstance(t, (T.IntegerType, T.FloatType)):
        return t
    return None


def fname(t) -> str | None:
    """Spelling of a float element type (``f16``), else ``None``."""
    return t.name if isinstance(t, T.FloatType) else None


def bits(t) -> int | None:
    """Storage width of a scalar element in bits."""
    return T.bit_width(t) if t is not None else None


def operand_range(op: Operation, index: int):
    """Range of operand ``index`` of ``op`` (start point), for diagnostics placed on an operand."""
    if index < len(op.operand_ranges) and op.operand_ranges[index] is not None:
        return op.operand_ranges[index]
    return None


# ---------------------------------------------------------------------------
# Region-op template and consumer_idx
# ---------------------------------------------------------------------------


def _payload_types(op: Operation) -> list | None:
    for name in ("producer_types", "consumer_types"):
        ts = attr_types(op.attr(name))
        if ts is not None:
            return ts
    return None


@rule(*(P + n for n in REGION_OPS), code="region-template")
def verify_pipeline_region_op(op: Operation, ctx: VerifyContext) -> None:
    """The shared template (spec 000): terminator, block args vs producer types, yield vs results.

    Block-argument types are unwrapped from ``iterator<T>`` before comparing;
    the producer-type list never is.
    """
    if not op.regions or not op.regions[0].blocks:
        return
    block = op.regions[0].blocks[0]
    term = block.operations[-1] if block.operations else None
    if term is None or term.name != YIELD:
        ctx.op_error(op, msg("region_end", found=term.name if term is not None else ""))
    producers = _payload_types(op)
    args = [a.type for a in block.arguments]
    if producers is not None:
        unwrapped = [NT.unwrap_pipeline_iterator(t) for t in args]
        if len(args) != len(producers) or any(u != p for u, p in zip(unwrapped, producers)):
            ctx.op_error(op, msg("region_args", expected=types_text(producers), got=types_text(args)))
    results = [r.type for r in op.results]
    yielded = [v.type for v in term.operands]
    if yielded != results:
        ctx.op_error(op, msg("region_results", expected=types_text(results), got=types_text(yielded)))


@rule(YIELD, code="yield-types")
def verify_pipeline_yield(op: Operation, ctx: VerifyContext) -> None:
    """Yield of agent_switch / producer_write regions: operand types equal the parent's results.

    The four template ops report the same mismatch themselves ("to be match" form), so
    the yield only speaks for the other region-bearing parents.
    """
    parent = op.parent_op
    if parent is None or parent.name[len(P):] in REGION_OPS or not parent.name.startswith(P):
        return
    results = [r.type for r in parent.results]
    yielded = [v.type for v in op.operands]
    if yielded != results:
        ctx.op_error(op, msg("region_yield", expected=types_text(results), got=types_text(yielded)))


@rule(*(P + n for n in CONSUMER_IDX_OPS), code="consumer-idx")
def verify_consumer_idx(op: Operation, ctx: VerifyContext) -> None:
    """consumer_idx below the consumer count of the token, and equal to the token's own index (spec 000)."""
    idx = int_attr(op, "consumer_idx")
    if idx is None or not op.operands:
        return
    tok = NT.decode_type(op.operands[0].type)
    if not isinstance(tok, NT.PipelineTokenType):
        return
    if tok.num_consumers is not None and not (0 <= idx < tok.num_consumers):
        ctx.op_error(op, msg("consumer_idx_bound", count=tok.num_consumers))
    if tok.consumer_idx is not None and tok.consumer_idx != idx:
        ctx.op_error(op, msg("consumer_idx_token", token_idx=tok.consumer_idx))


# ---------------------------------------------------------------------------
# agent_switch
# ---------------------------------------------------------------------------


@rule(P + "async.pipeline.agent_switch", code="agent-warps")
def verify_agent_switch(op: Operation, ctx: VerifyContext) -> None:
    """Per-agent warp counts (``num_warps``, 0 = inherited) agree; their sum fits ``available_warps``."""
    counts = int_list_attr(op, "num_warps")
    if not counts:
        return
    explicit = {c for c in counts if c != 0}
    if len(explicit) > 1:
        ctx.op_error(op, msg("agent_warps_disagree"))
    budget = int_attr(op, "available_warps")
    if budget is not None and sum(counts) > budget:
        ctx.op_error(op, msg("agent_warps_budget"))


# ---------------------------------------------------------------------------
# TMA
# ---------------------------------------------------------------------------


def leading_box_aligned(inner_dim: int, element: T.Type) -> bool:
    """Whether a TMA box's innermost extent times the element width is a multiple of 16 bytes."""
    b = bits(element)
    return b is None or (inner_dim * b) % 128 == 0


STRUCTURED_CONTROL = ("scf.", "cuda_tile.for", "cuda_tile.if", "cuda_tile.loop")


def _in_structured_control(v: Value) -> bool:
    owner = v.defining_op
    block = owner.parent if owner is not None else getattr(v, "owner", None)
    while block is not None:
        parent = block.parent_op
        if parent is None:
            return False
        if parent.name.startswith(STRUCTURED_CONTROL):
            return True
        block = parent.parent
    return False


@rule(P + "make_tiled_tma_desc", code="tma-desc")
def verify_make_tiled_tma_desc(op: Operation, ctx: VerifyContext) -> None:
    """Atom box rank, unit element stride, 16-byte leading box, no captures from structured control."""
    atom = NT.decode_atom(op.attr("atom"))
    box = op.operand_group("box_dims")
    view = NT.decode_type(op.operands[0].type) if op.operands else None
    if atom is not None and atom.box_rank is not None and atom.box_rank != len(box):
        ctx.op_error(op, msg("tma_box_dims"))
    if isinstance(view, NT.TiledViewType):
        if view.element_stride != 1:
            ctx.op_error(op, msg("tma_unit_stride"))
        inner = const_int(box[-1]) if box else None
        if inner is not None and not leading_box_aligned(inner, view.element):
            ctx.op_error(op, msg("tma_leading_align"))
    for v in op.operands:
        if _in_structured_control(v):
            ctx.op_error(op, msg("tma_scf"))


#: Function ops whose body is past the TileAS-to-LLVM conversion (spec 003 "Ordering Invariants":
#: TileAS-to-LLVM runs before the consumers of LLVM values; the descriptor builder must be gone by then).
LOWERED_FUNCTIONS = ("llvm.func",)


@rule(P + "make_tiled_tma_desc", code="tma-desc-lowered")
def verify_make_tiled_tma_desc_lowered(op: Operation, ctx: VerifyContext) -> None:
    """A descriptor builder inside an ``llvm.func`` survived the lowering that erases it (spec 000
    "expect lower MakeTiledTMADescOp"; the criterion, an enclosing ``llvm.func``, is tile-lsp's)."""
    p = op.parent_op
    while p is not None:
        if p.name in LOWERED_FUNCTIONS:
            ctx.op_error(op, msg("tma_lower"))
        p = p.parent_op


def _verify_tma_transfer(op: Operation, ctx: VerifyContext, view_name: str, load: bool) -> None:
    atom = NT.decode_atom(op.attr("atom"))
    if load and atom is not None and atom.family != "tma_load":
        ctx.op_error(op, msg("tma_load_atom"))
    views = op.operand_group(view_name)
    view = NT.decode_type(views[0].type) if views else None
    coords = op.operand_group("coords")
    if isinstance(view, NT.TiledViewType):
        if len(coords) != view.rank:
            ctx.op_error(op, msg("coordinates", expected=view.rank, got=len(coords)))
        if atom is not None and atom.box_rank is not None and atom.box_rank != view.rank:
            ctx.op_error(op, msg("tma_box_dims"))
        if view.element_stride != 1:
            ctx.op_error(op, msg("tma_unit_stride"))
        if view.memory_space not in (None, "SMEM"):
            ctx.op_error(op, msg("tma_smem_layout"))
        if view.shape and view.shape[-1] is not None and not leading_box_aligned(view.shape[-1], view.element):
            ctx.op_error(op, msg("tma_leading_align"))
    if load:
        pad = op.attr("padding_value")
        if pad is not None and not _is_zero(pad):
            ctx.op_error(op, msg("tma_zero_padding"))


def _is_zero(a) -> bool:
    v = getattr(a, "value", None)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v == 0 and str(getattr(a, "text", "")).strip()[:1] != "-"
    word = NT.enum_word(a)
    return word == "zero"


@rule(P + "async.tiled_tma_load", P + "async.gather_tma_load", code="tma-load")
def verify_tma_load(op: Operation, ctx: VerifyContext) -> None:
    """TMA load atom, coordinates per view rank, box rank, unit stride, SMEM, 16-byte box, zero padding."""
    _verify_tma_transfer(op, ctx, "dest", load=True)


@rule(P + "async.tiled_tma_store", P + "async.scatter_tma_store", code="tma-store")
def verify_tma_store(op: Operation, ctx: VerifyContext) -> None:
    """Coordinates per view rank, box rank, unit stride, SMEM source, 16-byte leading box."""
    _verify_tma_transfer(op, ctx, "source", load=False)


# ---------------------------------------------------------------------------
# Tiled memops
# ---------------------------------------------------------------------------

#: Operand groups of each tiled memop, in operandSegmentSizes order (spec 002 tables).
TILED_MEMOPS = {
    "tiled_load": ("load", "tiled_load"),
    "async.tiled_load": ("load", "tiled_load"),
    "tiled_store": ("store", "tiled_store"),
    "async.tiled_store": ("store", "tiled_store"),
    "tiled_atomic_rmw": ("atomic", "tiled_atomic_rmw"),
    "async.tiled_atomic_rmw": ("atomic", "async_tiled_atomic_rmw"),
}


def verify_segments(op: Operation, ctx: VerifyContext) -> None:
    """``operandSegmentSizes`` has one entry per operand group (a mask entry allowed extra) summing to the operands."""
    sizes = int_list_attr(op, "operandSegmentSizes")
    if sizes is None or op.opdef is None:
        return
    groups = len(op.opdef.operands)
    if len(sizes) not in (groups, groups + 1) or sum(sizes) != len(op.operands) or any(s < 0 for s in sizes):
        ctx.op_error(op, msg("segments"))
    for d, n in zip(op.opdef.operands, sizes):
        if d.kind == "single" and n != 1:
            ctx.op_error(op, msg("segments"))
        if d.name == "token" and n > 1:
            ctx.op_error(op, msg("token_segment"))


def memory_semantics_issue(kind: str, semantic: str | None, scope: str | None) -> str | None:
    """Shared helper "memory semantics and scope" (spec 000) with the per-direction rejections (spec 002)."""
    if semantic is None:
        return None
    if kind == "load" and semantic in LOAD_REJECTED:
        return msg("load_acq_rel")
    if kind == "store" and semantic in STORE_REJECTED:
        return msg("store_semantic", semantic=semantic)
    if semantic == "weak":
        return msg("scope_weak", kind=kind) if scope is not None else None
    if scope is None:
        return msg("scope_required", semantic=semantic, kind=kind)
    return None


def atomic_issue(prefix: str, mode: str | None, element: T.Type | None) -> str | None:
    """Element-type and mode rules of tiled_atomic_rmw (spec 000 atomic table), ``None`` when legal."""
    if mode == "fadd" or mode == "addf":
        return msg("rmw_fadd")
    if mode == "xchg":
        return msg("rmw_xchg")
    b = bits(element)
    if b == 8:
        return msg("rmw_8bit", prefix=prefix)
    if b == 16 and isinstance(element, T.IntegerType):
        return msg("rmw_16bit_int", prefix=prefix)
    if b == 16 and isinstance(element, T.FloatType) and mode is not None and mode not in RMW_F16_MODES:
        return msg("rmw_16bit_float", prefix=prefix)
    return None


@rule(*(P + n for n in TILED_MEMOPS), code="tiled-memop")
def verify_tiled_memop(op: Operation, ctx: VerifyContext) -> None:
    """The tiled memop base shape (spec 000 "Tiled Memop Verification"), then direction rules."""
    kind, prefix = TILED_MEMOPS[op.name[len(P):]]
    verify_segments(op, ctx)
    views = op.operand_group("view")
    view = NT.decode_type(views[0].type) if views else None
    coords = op.operand_group("coords")
    if isinstance(view, NT.TiledViewType) and len(coords) != view.rank:
        ctx.op_error(op, msg("coordinates", expected=view.rank, got=len(coords)))
    first = op.operand_segments.get("coords", (0, 0))[0]
    for k, c in enumerate(coords + op.operand_group("offsets")):
        if c.type != T.UNKNOWN and not isinstance(c.type, T.IndexType):
            ctx.op_error(op, msg("coords_index"), rng=operand_range(op, first + k))
    tile = op.results[0].type if kind != "store" and op.results else None
    if kind != "load":
        vals = op.operand_group("value")
        tile = vals[0].type if vals else tile
    if isinstance(view, NT.TiledViewType) and tile is not None:
        tshape, tel = shape_of(tile), element_of(tile)
        if tshape is not None and tshape != view.shape:
            ctx.op_error(op, msg("tile_shape"))
        if tel is not None and tel != view.element:
            ctx.op_error(op, msg("tile_element"))
    if kind == "atomic":
        mode = NT.enum_word(op.attr("rmw_mode"))
        el = element_of(tile) if tile is not None else None
        issue = atomic_issue(prefix, mode, el)
        if issue:
            ctx.op_error(op, issue)
        return
    semantic = NT.enum_word(op.attr("mem_semantic"))
    scope = NT.enum_word(op.attr("mem_scope")) if op.attr("mem_scope") is not None else None
    issue = memory_semantics_issue(kind, semantic, scope)
    if issue:
        ctx.op_error(op, issue)


#: Ops producing the tiled views tiled_load reads (``block_tile`` belongs to nv_tileaa; spec 000).
BLOCK_TILE_OPS = ("nv_tileaa.block_tile", "nv_tileas.block_tile")


@rule(P + "tiled_load", P + "async.tiled_load", code="block-tile-provenance")
def verify_view_from_block_tile(op: Operation, ctx: VerifyContext) -> None:
    """The view operand is a result of ``block_tile`` itself (spec 000; shipped text for tiled_load only:
    the store and atomic analogues are not in the shipped compiler, so they are not checked)."""
    views = op.operand_group("view")
    if not views:
        return
    v = views[0]
    if isinstance(v, OpResult) and v.owner is not None and v.owner.name in BLOCK_TILE_OPS:
        return
    if not isinstance(v, (OpResult, BlockArgument)):
        return  # an undefined name, reported by the parser
    ctx.op_error(op, msg("block_tile", op="tiled_load"))


# ---------------------------------------------------------------------------
# convert_layout, copy, dot
# ---------------------------------------------------------------------------


def _count(shape) -> int | None:
    if shape is None or any(d is None for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d
    return n


@rule(P + "convert_layout", code="convert-layout")
def verify_convert_layout(op: Operation, ctx: VerifyContext) -> None:
    """Same element type and same total element count (spec 000)."""
    if not op.operands or not op.results:
        return
    s, r = op.operands[0].type, op.results[0].type
    es, er = element_of(s), element_of(r)
    if es is not None and er is not None and es != er:
        ctx.op_error(op, msg("layout_element"))
    ns, nr = _count(shape_of(s)), _count(shape_of(r))
    if ns is not None and nr is not None and ns != nr:
        ctx.op_error(op, msg("layout_count"))


@rule(P + "copy", P + "async.copy", code="copy-pair")
def verify_copy(op: Operation, ctx: VerifyContext) -> None:
    """The (source, destination) residency pair read from the tiled_view types is legal (spec 000)."""
    if len(op.operands) < 2:
        return
    src, dst = NT.decode_type(op.operands[0].type), NT.decode_type(op.operands[1].type)
    if isinstance(src, NT.TiledViewType) and isinstance(dst, NT.TiledViewType) \
            and src.memory_space and dst.memory_space and (src.memory_space, dst.memory_space) not in COPY_PAIRS:
        ctx.op_error(op, msg("copy_pair", src=src.memory_space, dst=dst.memory_space))


def dot_elements_compatible(a: T.Type, b: T.Type) -> bool:
    """A and B element types of an MMA: equal, or two FP8 / two FP4 formats (mixed FP8 kinds are legal)."""
    if a == b:
        return True
    fa, fb = fname(a), fname(b)
    return (fa in FP8 and fb in FP8) or (fa in FP4 and fb in FP4)


@rule(P + "dot", P + "async.dot", code="dot")
def verify_dot(op: Operation, ctx: VerifyContext) -> None:
    """Compatible A/B elements, signedness attributes for integer MMA, Float32 accumulator for floats."""
    if len(op.operands) < 3:
        return
    a, b, c = (element_of(v.type) for v in op.operands[:3])
    if a is None or b is None:
        return
    if not dot_elements_compatible(a, b):
        ctx.op_error(op, msg("dot_elements", a=a, b=b))
    if isinstance(a, T.IntegerType):
        if op.attr("a_signed") is None or op.attr("b_signed") is None:
            ctx.op_error(op, msg("dot_signedness"))
    elif c is not None and c != T.FloatType("f32"):
        ctx.op_error(op, msg("bs_accumulator"))


# ---------------------------------------------------------------------------
# Block-scaled MMA
# ---------------------------------------------------------------------------


def verify_block_scaled_mma(a, b, c, sfa, sfb, atom: str | None = None, two_cta: bool = False,
                            k_extents: tuple[int | None, int | None] = (None, None),
                            sm: int | None = None) -> tuple[int, str | None]:
    """The five-phase block-scaled MMA verifier (spec 000); returns ``(packed, message)``.

    ``a``, ``b``, ``c``, ``sfa``, ``sfb``: element types (``sfa``/``sfb``
    ``None`` when absent).  ``atom``: the atom word (``mxf8f6f4``, ``mxf4``,
    ``mxf4nvf4``) or ``None``.  ``k_extents``: the vector sizes implied by
    A/sfa and B/sfb (K of the operand over K of its scale tile), ``None``
    where unknown.  ``sm``: target compute capability (100 = sm_100) if known.
    ``packed`` is ``(atom_K << 32) | vecSize`` on success, 0 on rejection,
    in which case ``message`` names the first failing phase.
    """
    fa = fname(a)
    is_fp4, is_fp8 = fa in FP4, fa in FP8
    # 1: presence
    if is_fp4 and (sfa is None or sfb is None):
        return 0, msg("bs_presence")
    # 2: agreement
    if sfa is not None and sfb is not None and sfa != sfb:
        return 0, msg("bs_agreement")
    # 3: accumulator
    if c != T.FloatType("f32"):
        return 0, msg("bs_accumulator")
    # 4: K-extent agreement
    k_a, k_b = k_extents
    if k_a is not None and k_b is not None and k_a != k_b:
        return 0, msg("bs_k_extent", k_a=k_a, k_b=k_b)
    # 5: catalog
    if sm is not None and sm < 100:
        return 0, msg("bs_sm")
    row = NT.BLOCK_SCALED_ATOMS.get(atom) if atom else None
    atom_k = row[0] if row else (64 if is_fp4 else 32 if is_fp8 else 0)
    vec = k_a if k_a is not None else (k_b if k_b is not None else (row[1] if row else 0))
    if atom_k == 0:
        return 0, msg("bs_elements")
    fb, fs = fname(b), fname(sfa)
    if atom_k == 32:
        if vec != 32:
            return 0, msg("bs_vec32", vec=vec)
        if not (is_fp8 and fb in FP8):
            return 0, msg("bs_elements")
        if fs != E8M0:
            return 0, msg("bs_sf_32")
    elif vec == 16:
        if not (is_fp4 and fb in FP4):
            return 0, msg("bs_fp4_16")
        if fs not in (E8M0, E4M3):
            return 0, msg("bs_sf_16")
    elif vec == 32:
        if not (fa == "f4E2M1FN" and fb == "f4E2M1FN" and fs == E8M0):
            return 0, msg("bs_nvfp4")
    else:
        return 0, msg("bs_vec32", vec=vec)
    if two_cta and (atom_k, vec) in NO_TWO_CTA_ROWS:
        return 0, msg("bs_2cta")
    return (atom_k << 32) | vec, None


def _implied_vec(x, sfx, k_axis: int) -> int | None:
    """Vector size implied by operand ``x`` and its scale tile: K(x) / K(sfx), along ``k_axis``."""
    sx, ss = shape_of(x), shape_of(sfx) if sfx is not None else None
    if not sx or not ss or len(sx) != 2 or len(ss) != 2:
        return None
    kx, ks = sx[k_axis], ss[k_axis]
    if kx is None or not ks:
        return None
    return kx // ks


def block_scaled_mma_result(op: Operation, two_cta: bool | None = None) -> tuple[int, str | None] | None:
    """:func:`verify_block_scaled_mma` on a ``block_scaled_mma`` op: ``(packed, message)``, ``None``
    when A, B or C is missing.  ``two_cta``: the catalog to check (default: the op's ``two_cta``)."""
    groups = {name: op.operand_group(name) for name in ("a", "b", "c", "sfa", "sfb")}
    if any(not groups[n] for n in ("a", "b", "c")):
        return None
    ty = {n: (g[0].type if g else None) for n, g in groups.items()}
    el = {n: (element_of(t) if t is not None else None) for n, t in ty.items()}
    atom = NT.decode_atom(op.attr("atom"))
    k_a = _implied_vec(ty["a"], ty["sfa"], 1)
    k_b = _implied_vec(ty["b"], ty["sfb"], 0)
    return verify_block_scaled_mma(
        el["a"], el["b"], el["c"], el["sfa"], el["sfb"], atom.name if atom else None,
        bool_attr(op, "two_cta") if two_cta is None else two_cta, (k_a, k_b), int_attr(op, "compute_capability"))


@rule(P + "block_scaled_mma", code="block-scaled-mma")
def verify_block_scaled_mma_op(op: Operation, ctx: VerifyContext) -> None:
    """Runs :func:`verify_block_scaled_mma` on the op's operand types and atom."""
    result = block_scaled_mma_result(op)
    if result is not None and result[1] is not None:
        ctx.op_error(op, result[1])
