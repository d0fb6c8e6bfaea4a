"""The nv_tileas op table: one :class:`OpDef` per operation of the roster (spec 002).

nv_tileas is NVIDIA's scheduled-tile dialect inside tileiras (async pipeline
regions, tiled memory movement, TMA, layout conversion, MMA).  Its ops are
not part of the public cuda-tile repository; this table is built from the
spec documents 000 (verifiers) and 002 (op roster, operand/result tables,
PipelineOp enum).  Operand and result constraints are ``ANY`` because the
types are other dialects' (kept as opaque text by the grammar); the nv_tileas
verifiers decode them (:mod:`tile_lsp.dialect.nv_tileas_types`).

Every op parses in MLIR's generic form (``"nv_tileas.dot"(...) : (...) -> ...``) and in a
custom form: the documents' example forms (:data:`FORMATS`), the same convention for the other ops
(:func:`default_format`); docs/nv_tileas.md lists them.
``traits`` lists MLIR traits the framework knows (``Terminator``,
``AttrSizedOperandSegments``) and the ``OpTrait::nv_tile`` traits (spec 000
"OpTrait::nv_tile Inventory") as ``nv_tile::<Name>``; the latter are checked by
:mod:`tile_lsp.analysis.verify.rules.nv_tileas_traits`.
"""

from __future__ import annotations

from tile_lsp.dialect.schema import AttrDef, OpDef, OperandDef, RegionDef

V = "13.1"  # the op table's nominal version: nv_tileas ships with tileiras 13.x


#: One-line docs of the operand, result and attribute names used by several ops (hover text).
NAME_DOCS = {
    "a": "left MMA operand tile (M x K)",
    "b": "right MMA operand tile (K x N)",
    "c": "accumulator tile (M x N)",
    "sfa": "scale-factor tile of A (M x K/vecSize)",
    "sfb": "scale-factor tile of B (K/vecSize x N)",
    "a_signed": "whether integer A elements are signed",
    "b_signed": "whether integer B elements are signed",
    "available_warps": "warp budget of the enclosing launch",
    "barrier": "mbarrier memory token signalled on completion",
    "consumerGroupId": "agent group emitting the consumers (u8)",
    "producerGroupId": "agent group emitting the producers (u8)",
    "consumer_token": "consumer side of the pipeline",
    "producer_token": "producer side of the pipeline",
    "coords": "per-axis index coordinates",
    "offsets": "per-axis index offsets (may be empty)",
    "desc": "TMA descriptor from make_tiled_tma_desc",
    "dest": "destination tiled view",
    "source": "source value or tiled view",
    "view": "tiled view addressed by the op",
    "global_view": "global-memory (GMEM) tiled view the descriptor covers",
    "dynamic": "dynamic stage indexing",
    "sharedMem": "stage storage lives in shared memory",
    "numStages": "number of pipeline stages (i32)",
    "future": "async value to wait for",
    "indices": "view indices",
    "isolated": "whether agent regions are isolated from the surrounding SSA scope",
    "max_regs": "per-agent register budgets",
    "num_agents_per_group": "number of agents per group",
    "num_warps": "per-agent warp counts (0 inherits)",
    "ocgEnterDirectives": "optimizer-control directives active on entry",
    "ocgLeaveDirectives": "optimizer-control directives active on exit",
    "iterator": "pipeline stage iterator",
    "pipeline": "pipeline token the iterator walks",
    "operands": "operands of the op",
    "result": "result of the op",
    "results": "results of the op",
    "result_token": "ordering token after the op",
    "token": "ordering or pipeline token consumed by the op",
    "tokens": "tokens to wait for",
    "value": "tile value stored or combined",
    "values": "yielded or written values",
}


def _o(name: str, kind: str = "single", doc: str = "") -> OperandDef:
    return OperandDef(name, kind=kind, doc=doc or NAME_DOCS[name])


def _a(name: str, kind: str = "attr", optional: bool = True, doc: str = "") -> AttrDef:
    return AttrDef(name, kind, optional=optional, doc=doc or NAME_DOCS[name])


def _op(name: str, summary: str, operands=(), results=(), attributes=(), regions=(), traits=(),
        format: str | None = None) -> OpDef:
    if format is None:
        format = FORMATS.get(name) or default_format(tuple(operands), tuple(results), tuple(regions))
    return OpDef(name=name, since=V, summary=summary, operands=tuple(operands), results=tuple(results),
                 attributes=tuple(attributes), regions=tuple(regions), traits=tuple(traits), dialect="nv_tileas",
                 format=format)


#: Custom forms, MLIR declarative format syntax.  The ops of the documents' examples (spec 002 worked
#: pipeline, spec 000 worked block-scaled MMA failure) are written as the examples write them; every
#: other op gets :func:`default_format`, the same convention: operands, attribute dictionary,
#: ``:`` operand types ``->`` result types (``: (operand types) -> result types { region }`` for ops
#: with regions, as the examples' region ops).
REGION_FORMAT = "$token `,` $iterator attr-dict `:` functional-type(operands, results) $body"
WAIT_FORMAT = "$token (`,` $iterator^)? attr-dict `:` type($token) (`,` type($iterator)^)? `->` type(results)"
YIELD_FORMAT = "($values^ `:` type($values))? attr-dict"
TMA_LOAD_FORMAT = ("$desc `,` $dest `[` $coords `]` (`,` $barrier^)? attr-dict `:` type(operands) "
                   "`->` type($result)")
TMA_STORE_FORMAT = "$desc `,` $source `[` $coords `]` attr-dict `:` type(operands) `->` type($result)"
FORMATS = {
    "dot": "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($result)",
    "convert_layout": "$source attr-dict `:` type($source) `->` type($result)",
    "async.pipeline.consumer_release": "$token attr-dict `:` type($token) `->` type($result)",
    "async.pipeline.producer_commit": "$token attr-dict `:` type($token) `->` type($result)",
    "async.pipeline.create_iterator": "$pipeline attr-dict `:` type($pipeline) `->` type($iterator)",
    "async.pipeline.create_pipeline": "$buffer_view attr-dict `:` type($buffer_view) `->` type($producer_token) "
                                      "`,` type($consumer_token)",
    "async.pipeline.produce_one": REGION_FORMAT,
    "async.pipeline.produce_one_async": REGION_FORMAT,
    "async.pipeline.consume_one": REGION_FORMAT,
    "async.pipeline.consume_one_async": REGION_FORMAT,
    "async.pipeline.consumer_wait": WAIT_FORMAT,
    "async.pipeline.consumer_read": WAIT_FORMAT,
    "async.pipeline.producer_acquire": WAIT_FORMAT,
    "async.pipeline.yield": YIELD_FORMAT,
    "yield": YIELD_FORMAT,
    "async.tiled_tma_load": TMA_LOAD_FORMAT,
    "async.gather_tma_load": TMA_LOAD_FORMAT,
    "async.tiled_tma_store": TMA_STORE_FORMAT,
    "async.scatter_tma_store": TMA_STORE_FORMAT,
    # one region per agent (spec 002 PipelineOp enum: "variadic body builder")
    "async.pipeline.agent_switch": "operands attr-dict `:` functional-type(operands, results) regions",
    "block_scaled_mma": "operands attr-dict `:` type(operands) `->` type($result)",
}


def default_format(operands, results, regions) -> str:
    """The custom form of an op without an example in the documents, from its operand/result/region table.

    ``%a, %b {attrs} : A, B -> R`` (operands through the ``operands`` directive,
    split into ODS groups as the generic form is: by ``operandSegmentSizes``
    when present); ``: (A, B) -> R { ... }`` for ops with regions (several
    regions are comma-separated).  A colon or arrow group whose types may all
    be absent is optional (``nv_tileas.async.wait %t : !async.token``).
    """
    elems = ["operands"] if operands else []
    elems.append("attr-dict")
    if regions:
        elems += ["`:`", "functional-type(operands, results)"]
        elems += ["regions"] if len(regions) > 1 else [f"${regions[0].name}"]
        return " ".join(elems)
    must_operands = any(o.kind == "single" for o in operands)
    must_results = any(r.kind == "single" for r in results)
    if operands:
        elems.append("`:` type(operands)" if must_operands else "(`:` type(operands)^)?")
    if results:
        arrow = "`->`" if operands else "`:`"
        elems.append(f"{arrow} type(results)" if must_results else f"({arrow} type(results)^)?")
    return " ".join(elems)


# Attribute groups shared by several ops (spec 002 "Attribute Roster").
ATOM = _a("atom", optional=False, doc="copy, MMA, TMA or reduce atom (#nv_tileas<atom NAME>)")
ATOM_OPT = _a("atom", doc="copy, MMA, TMA or reduce atom (#nv_tileas<atom NAME>)")
SEGMENTS = _a("operandSegmentSizes", "dense_i32_array", doc="sizes of the operand groups")
MEMORY = (
    _a("mem_semantic", doc="memory ordering: weak, relaxed, acquire, release, acq_rel"),
    _a("mem_scope", doc="visibility scope: tl_blk, cluster, gpu, sys; needed when the semantic is not weak"),
)
IN_BOUNDS = _a("in_bounds", doc="per-axis in-bounds flags (array<i1: ...>); default false")
PADDING = _a("padding_value", doc="element-typed value read out of bounds; only with in_bounds false")
CONSUMER_IDX = _a("consumer_idx", "i32", optional=False, doc="selects a consumer inside the consumer group")
#: Carriers of the spec 001 mode-pattern values on the MMA ops (tile-lsp's spellings, docs/nv_tileas.md).
MMA_CARRIERS = (
    _a("tcgen05_kind", doc="tcgen05.mma kind word: 9-bit integer or #nv_tileas<tcgen05_kind KIND, "
                           "cta_group = N, scale_vec = 1X|2X|4X, scale_input_acc, block_scale>"),
    _a("arch_conditional", "bool", doc="the instruction is an arch-conditional variant (sm_100a)"),
    _a("sparse", "bool", doc="the .sp (sparse) variant"),
    _a("ashift", "bool", doc="the collector operand's ashift bit"),
    _a("collector_a", doc="collector::a usage: discard, lastuse, use or fill"),
    _a("a_layout", doc="UMMA layout of A: #nv_tileas<umma_layout MN|K, swizzle = ..., shape : stride>"),
    _a("b_layout", doc="UMMA layout of B: #nv_tileas<umma_layout MN|K, swizzle = ..., shape : stride>"),
)

TILED_MEMOP_TRAITS = ("AttrSizedOperandSegments", "nv_tile::TiledLoadStoreOpTrait",
                      "nv_tile::TiledLoadStoreOpSameElementTypeTrait", "nv_tile::TensorSizeTrait",
                      "nv_tile::TiledPaddingValueTrait")
REGION_OP_TRAITS: tuple[str, ...] = ()


def _tiled_load(name: str, summary: str) -> OpDef:
    return _op(name, summary,
               operands=(_o("view", doc="tiled_view source"), _o("coords", "variadic", "index coordinates"),
                         _o("offsets", "variadic", "index offsets"), _o("token", "optional", "ordering token")),
               results=(_o("result", doc="loaded tile"), _o("result_token", "optional")),
               attributes=(ATOM, *MEMORY, IN_BOUNDS, PADDING, SEGMENTS),
               traits=TILED_MEMOP_TRAITS + ("nv_tile::MemoryModelReadTrait",
                                            "nv_tile::ValidTileASLoadOperandsAndResultEncoding"))


def _tiled_store(name: str, summary: str) -> OpDef:
    return _op(name, summary,
               operands=(_o("view", doc="tiled_view destination"), _o("value", doc="stored tile"),
                         _o("coords", "variadic"), _o("offsets", "variadic"), _o("token", "optional")),
               results=(_o("result_token", "optional"),),
               attributes=(ATOM, *MEMORY, IN_BOUNDS, PADDING, SEGMENTS),
               traits=TILED_MEMOP_TRAITS + ("nv_tile::MemoryModelWriteTrait",))


def _tiled_atomic(name: str, summary: str) -> OpDef:
    return _op(name, summary,
               operands=(_o("view"), _o("value"), _o("coords", "variadic"), _o("token", "optional")),
               results=(_o("result", doc="old value tile"), _o("result_token", "optional")),
               attributes=(ATOM, _a("rmw_mode", optional=False, doc="add, and, or, xor, xchg, min, max, umin, "
                                    "umax, cmpxchg, addf"), *MEMORY, SEGMENTS),
               traits=("AttrSizedOperandSegments", "nv_tile::TiledLoadStoreOpTrait", "nv_tile::TensorSizeTrait",
                       "nv_tile::MemoryModelReadWriteTrait"))


def _region_op(name: str, summary: str, token: str, async_: bool, consumer: bool) -> OpDef:
    results = [_o("result_token", doc=f"{token} token returned to the caller")]
    if async_:
        results.append(_o("async_token", doc="completion of the async region work"))
    attrs = [_a(f"{token}_types", optional=False, doc="payload types the body's block arguments carry")]
    if token == "consumer":
        attrs.append(_a("consumer_idx", "i32", optional=not consumer, doc="consumer inside the group"))
    return _op(name, summary,
               operands=(_o("token", doc=f"{token} token"), _o("iterator", doc="pipeline stage iterator")),
               results=results, attributes=attrs,
               regions=(RegionDef("body", doc="terminated by nv_tileas.async.pipeline.yield"),),
               traits=REGION_OP_TRAITS)


OPS: tuple[OpDef, ...] = (
    # -- async pipeline (PipelineOp enum 0..14) ----------------------------------------------------
    _op("async.pipeline.create_pipeline", "Creates a pipeline over a stage buffer: a producer/consumer token pair.",
        operands=(_o("buffer_view", doc="stage-local storage view"),),
        results=(_o("producer_token"), _o("consumer_token")),
        attributes=(_a("numStages", "i32", optional=False), _a("producerGroupId", optional=False),
                    _a("consumerGroupId", optional=False), _a("sharedMem", "bool"), _a("dynamic", "bool"))),
    _op("async.pipeline.create_iterator", "Creates an iterator rotating through the pipeline stages.",
        operands=(_o("pipeline"),), results=(_o("iterator"),)),
    _op("async.pipeline.inc_iter", "Advances a pipeline iterator to the next stage.",
        operands=(_o("iterator"),), results=(_o("result"),)),
    _region_op("async.pipeline.produce_one", "Producer region filling one stage.", "producer", False, False),
    _region_op("async.pipeline.produce_one_async", "Async producer region filling one stage.", "producer", True,
               False),
    _region_op("async.pipeline.consume_one", "Consumer region reading one stage.", "consumer", False, True),
    _region_op("async.pipeline.consume_one_async", "Async consumer region reading one stage.", "consumer", True,
               False),
    _op("async.pipeline.producer_acquire", "Acquires a stage for the producer.",
        operands=(_o("token"), _o("iterator", "optional")), results=(_o("result"),),
        traits=("nv_tile::PipelineAcquireOpTrait",)),
    _op("async.pipeline.producer_write", "Writes a payload into the acquired stage (producer body).",
        operands=(_o("token"), _o("values", "variadic")), results=(_o("result"),),
        regions=(RegionDef("body", "any"),)),
    _op("async.pipeline.producer_commit", "Publishes the producer's stage to the consumers.",
        operands=(_o("token"),), results=(_o("result"),), traits=("nv_tile::PipelineReleaseOpTrait",)),
    _op("async.pipeline.consumer_wait", "Waits for a committed stage (consumer side).",
        operands=(_o("token"), _o("iterator", "optional")), results=(_o("result"),),
        attributes=(CONSUMER_IDX,), traits=("nv_tile::PipelineAcquireOpTrait",)),
    _op("async.pipeline.consumer_read", "Reads the payload of the waited stage.",
        operands=(_o("token"), _o("iterator", "optional")), results=(_o("results", "variadic"),),
        attributes=(CONSUMER_IDX,)),
    _op("async.pipeline.consumer_release", "Returns the consumer's stage to the producer pool.",
        operands=(_o("token"),), results=(_o("result"),), traits=("nv_tile::PipelineReleaseOpTrait",)),
    _op("async.pipeline.agent_switch", "Partitions the body into per-agent regions (warp specialization).",
        operands=(_o("operands", "variadic"),), results=(_o("results", "variadic"),),
        attributes=(_a("num_agents_per_group", "i32"), _a("max_regs", "dense_i32_array"), _a("isolated", "bool"),
                    _a("num_warps", "dense_i32_array"), _a("available_warps", "i32")),
        regions=(RegionDef("agents", "any"),)),
    _op("async.pipeline.yield", "Terminates a pipeline region, yielding the region's values.",
        operands=(_o("values", "variadic"),), traits=("Terminator",)),
    # -- async tokens -------------------------------------------------------------------------------
    _op("async.wait", "Waits for async tokens to complete.", operands=(_o("tokens", "variadic"),),
        results=(_o("results", "variadic"),)),
    _op("async.future_wait", "Waits for an async value and yields its payload.", operands=(_o("future"),),
        results=(_o("result"),)),
    _op("async.to_async", "Wraps a value into an async value.", operands=(_o("value"),), results=(_o("result"),)),
    _op("async.token_to_async", "Bridges a memory token to an async token.", operands=(_o("token"),),
        results=(_o("result"),)),
    _op("create_none", "Creates a placeholder value.", results=(_o("result"),)),
    # -- tiled memops -----------------------------------------------------------------------------------
    _tiled_load("tiled_load", "Loads a tile from a tiled_view at index coordinates."),
    _tiled_load("async.tiled_load", "Asynchronously loads a tile from a tiled_view."),
    _tiled_store("tiled_store", "Stores a tile into a tiled_view at index coordinates."),
    _tiled_store("async.tiled_store", "Asynchronously stores a tile into a tiled_view."),
    _tiled_atomic("tiled_atomic_rmw", "Atomic read-modify-write of a tile through a tiled_view."),
    _tiled_atomic("async.tiled_atomic_rmw", "Async atomic read-modify-write of a tile through a tiled_view."),
    _op("copy", "Copies between tiled views of two memory spaces with a copy atom.",
        operands=(_o("source"), _o("dest"), _o("operands", "variadic")), results=(_o("results", "variadic"),),
        attributes=(ATOM,), traits=("nv_tile::SameOperandsAndResultsAtom",)),
    _op("async.copy", "Asynchronously copies between tiled views of two memory spaces.",
        operands=(_o("source"), _o("dest"), _o("operands", "variadic")), results=(_o("results", "variadic"),),
        attributes=(ATOM,), traits=("nv_tile::SameOperandsAndResultsAtom",)),
    _op("async.load", "Asynchronous load.", operands=(_o("operands", "variadic"),),
        results=(_o("results", "variadic"),), attributes=(ATOM_OPT, *MEMORY),
        traits=("nv_tile::MemoryModelReadTrait",)),
    _op("async.store", "Asynchronous store.", operands=(_o("operands", "variadic"),),
        results=(_o("results", "variadic"),), attributes=(ATOM_OPT, *MEMORY),
        traits=("nv_tile::MemoryModelWriteTrait",)),
    _op("load", "Token-ordered load.", operands=(_o("operands", "variadic"),), results=(_o("results", "variadic"),),
        attributes=(ATOM_OPT, *MEMORY), traits=("nv_tile::MemoryModelReadTrait",)),
    _op("store", "Token-ordered store.", operands=(_o("operands", "variadic"),),
        results=(_o("results", "variadic"),), attributes=(ATOM_OPT, *MEMORY),
        traits=("nv_tile::MemoryModelWriteTrait",)),
    _op("gather_load", "Gathers a tile through per-lane coordinates.", operands=(_o("operands", "variadic"),),
        results=(_o("results", "variadic"),), attributes=(ATOM_OPT, PADDING, IN_BOUNDS),
        traits=("nv_tile::MemoryModelReadTrait",)),
    _op("scatter_store", "Scatters a tile through per-lane coordinates.", operands=(_o("operands", "variadic"),),
        results=(_o("results", "variadic"),), attributes=(ATOM_OPT,), traits=("nv_tile::MemoryModelWriteTrait",)),
    # -- tensor slices -----------------------------------------------------------------------------------
    _op("alloc_tensor", "Allocates local tile storage.", operands=(_o("operands", "variadic"),),
        results=(_o("result"),)),
    _op("extract_slice", "Extracts a slice of a tile.", operands=(_o("source"), _o("offsets", "variadic")),
        results=(_o("result"),)),
    _op("insert_slice", "Inserts a tile into a slice of another.",
        operands=(_o("source"), _o("dest"), _o("offsets", "variadic")), results=(_o("result"),)),
    _op("async.extract_slice", "Async slice extraction.", operands=(_o("source"), _o("offsets", "variadic")),
        results=(_o("results", "variadic"),)),
    _op("async.insert_slice", "Async slice insertion.",
        operands=(_o("source"), _o("dest"), _o("offsets", "variadic")), results=(_o("results", "variadic"),)),
    # -- layout ---------------------------------------------------------------------------------------------
    _op("convert_layout", "Converts a tile between layouts (same element type and element count).",
        operands=(_o("source"),), results=(_o("result"),)),
    _op("view", "Creates a tiled view of a value.", operands=(_o("source"), _o("indices", "variadic")),
        results=(_o("result"),)),
    _op("expand_dims", "Inserts unit dimensions.", operands=(_o("source"),), results=(_o("result"),)),
    _op("reinterpret", "Reinterprets a value's type.", operands=(_o("source"),), results=(_o("result"),)),
    _op("shuffle", "Shuffles tile elements.", operands=(_o("operands", "variadic"),), results=(_o("result"),)),
    _op("generate", "Builds a tile from a body region.", operands=(_o("operands", "variadic"),),
        results=(_o("result"),), regions=(RegionDef("body", "any"),)),
    # -- TMA ---------------------------------------------------------------------------------------------------
    _op("make_tiled_tma_desc", "Builds a TMA descriptor over a global tiled view.",
        operands=(_o("global_view"), _o("box_dims", "variadic", "per-axis box sizes (index)")),
        results=(_o("desc"),),
        attributes=(ATOM, _a("swizzle_mode", doc="none, 32B, 64B or 128B"),
                    _a("oob_mode", doc="zero, nan or constant"))),
    _op("async.tiled_tma_load", "Async TMA bulk load into a shared-memory tiled view.",
        operands=(_o("desc"), _o("dest"), _o("coords", "variadic"), _o("barrier", "optional")),
        results=(_o("result"),), attributes=(ATOM, PADDING, SEGMENTS),
        traits=("AttrSizedOperandSegments", "nv_tile::MemoryModelReadTrait")),
    _op("async.tiled_tma_store", "Async TMA bulk store from a shared-memory tiled view.",
        operands=(_o("desc"), _o("source"), _o("coords", "variadic")),
        results=(_o("result"),), attributes=(ATOM, SEGMENTS),
        traits=("AttrSizedOperandSegments", "nv_tile::MemoryModelWriteTrait")),
    _op("async.gather_tma_load", "Async TMA gather through a per-lane coordinate tile.",
        operands=(_o("desc"), _o("dest"), _o("coords", "variadic"), _o("barrier", "optional")),
        results=(_o("result"),), attributes=(ATOM, PADDING, SEGMENTS), traits=("AttrSizedOperandSegments",)),
    _op("async.scatter_tma_store", "Async TMA scatter through a per-lane address tile.",
        operands=(_o("desc"), _o("source"), _o("coords", "variadic")),
        results=(_o("result"),), attributes=(ATOM, PADDING, SEGMENTS), traits=("AttrSizedOperandSegments",)),
    # -- compute -------------------------------------------------------------------------------------------------
    _op("dot", "Matrix multiply-accumulate with an MMA atom.",
        operands=(_o("a"), _o("b"), _o("c")), results=(_o("result"),),
        attributes=(ATOM, _a("a_signed", "bool"), _a("b_signed", "bool"), *MMA_CARRIERS)),
    _op("async.dot", "Async matrix multiply-accumulate with an MMA atom.",
        operands=(_o("a"), _o("b"), _o("c")), results=(_o("results", "variadic"),),
        attributes=(ATOM, _a("a_signed", "bool"), _a("b_signed", "bool"), *MMA_CARRIERS)),
    _op("block_scaled_mma", "Block-scaled MMA (tcgen05.mma block_scale) with scale-factor tiles.",
        operands=(_o("a"), _o("b"), _o("c"), _o("sfa", "optional"), _o("sfb", "optional")),
        results=(_o("result"),),
        attributes=(ATOM_OPT, SEGMENTS, _a("two_cta", "bool", doc="2-CTA atom catalog (cta_group::2)"),
                    _a("compute_capability", "i32", doc="target SM (100 for sm_100)"), *MMA_CARRIERS),
        traits=("AttrSizedOperandSegments",)),
    _op("reduce", "Reduction with a combiner region.", operands=(_o("operands", "variadic"),),
        results=(_o("results", "variadic"),), regions=(RegionDef("body", "any"),)),
    _op("scan", "Scan with a combiner region.", operands=(_o("operands", "variadic"),),
        results=(_o("results", "variadic"),), regions=(RegionDef("body", "any"),)),
    # -- control and metadata -------------------------------------------------------------------------------------
    _op("yield", "Terminates an nv_tileas region.", operands=(_o("values", "variadic"),), traits=("Terminator",)),
    _op("pragma", "Optimizer directives active on entry and exit of its body.",
        operands=(_o("operands", "variadic"),), results=(_o("results", "variadic"),),
        attributes=(_a("ocgEnterDirectives"), _a("ocgLeaveDirectives")), regions=(RegionDef("body", "any"),)),
    _op("cancel_next_program_id", "Cancels the next program id (scheduling control).",
        operands=(_o("operands", "variadic"),), results=(_o("results", "variadic"),)),
    _op("async.cancel_next_program_id", "Async variant of cancel_next_program_id.",
        operands=(_o("operands", "variadic"),), results=(_o("results", "variadic"),)),
)
