"""The cuda_tile op table: one :class:`~tile_lsp.dialect.schema.OpDef` per op, as plain data.

Sources (facts only; the summaries and notes are our own words):

* every op of NVIDIA ``cuda-tile`` ``include/cuda_tile/Dialect/CudaTile/IR/Ops.td``
  (op names, versions, operand/attribute/result/region names, type
  constraints with the summaries ODS prints, traits in declaration order,
  assembly formats normalized to single spaces);
* the testing ops of ``TestingOps.td`` (registered in builds with
  ``TILE_IR_INCLUDE_TESTS``, as the ``cuda-tile-opt`` behind the oracle is;
  their versions are the testing versions ``250.x``);
* ops NVIDIA's ``tileirdisasm`` 13.5 prints that the public repository lacks
  (``insert``, ``fpowf``, ``fpowi``, ``gdc_wait_tko``,
  ``gdc_launch_dependents_tko``) and the ``inbounds`` attribute of
  ``load_view_tko``/``store_view_tko``.  Everything about them is INFERRED from
  the printed kernels of ``shared/corpus/kernels`` and from their 13.4
  bytecode (opcodes, operand order, attribute presence); each such fact is
  marked ``INFERRED`` below.

Conventions of this table (beyond ``schema.py``):

* The summary of a variadic operand/result's constraint includes ODS's
  ``variadic of`` prefix (``variadic of 0D tile of i32 values``): it is
  exactly the text of ``'cuda_tile.X' op operand #N must be <summary>, but got
  '<type>'``.  ``Optional<>`` operands keep the plain summary, as ODS does.
* ``RegionDef.kind``: ``single_block`` (ODS ``SizedRegion<1>``, message
  ``region with 1 blocks``) or ``max_one_block`` (``MaxSizedRegion<1>``: empty
  or one block, message ``region with at most 1 blocks``).
* ``AttrDef.kind`` ``dense_bool_array``: a ``DenseBoolArrayAttr`` written
  ``[true, false]`` in custom syntax (``array<i1: true, false>`` generic).
  ``unit`` attributes are always ``optional``.  Enum attributes wrapped as
  ``#cuda_tile.X<...>`` vs stored as plain ``i32``: see ``enums.py``.
  A required enum attribute whose ``custom<...RoundingMode>`` directive
  supplies a default when the text omits it says so in its ``doc``.
* Traits are written ``Name`` or ``Name<args>`` with op names (not C++
  class names) and operand names; ODS declaration order is kept.
  ``SingleBlockImplicitTerminator<a|b|c>``: the terminator may be any of the
  listed ops, the first one is inserted when the block has none.
  ``TypesMatchWith<from, to, transform>`` / ``OptionalTypesMatchWith<...>``:
  the type of ``to`` must match ``transform(type(from))`` (transforms are
  described in :data:`TYPE_TRANSFORMS`; the optional form is skipped when
  ``to`` is absent).  ``AllElementTypeMatch<...>`` is cuda_tile's own
  element-type trait (message "... have the same element type", with
  "the"), distinct from upstream ``AllElementTypesMatch``.
  Messages of the predicate traits: :data:`TRAIT_MESSAGES` for the unusual
  ones; the standard ones are ``failed to verify that all of {a, b} have same
  type`` / ``... same shape`` / ``... same rank`` for ``AllTypesMatch`` /
  ``AllShapesMatch`` / ``AllRanksMatch``.
* ``format`` ``None`` = the op has ``hasCustomAssemblyFormat = 1``; its syntax
  is described in :data:`CUSTOM_SYNTAX`.  The ``custom<X>`` directives used by
  the declarative formats are objects of :mod:`tile_lsp.analysis.ir.directives`.
* ``type_inference`` also covers the custom-syntax ops (where the C++ parser
  takes each unprinted type from).
* The ops of one family (element-wise unary and binary ops, ``make_*_view``,
  ``pow``/``fpowf``) are built by small factories, and attributes several ops
  declare alike are shared constants; both are defined above the table.
"""

from __future__ import annotations

from tile_lsp.dialect.schema import (
    ANY,
    ANY_TILE,
    BASE_FLOAT_TILE,
    CUDA_TILE_ANY,
    FLOAT_TILE,
    GATHER_SCATTER_VIEW,
    I1_TILE,
    I64_TILE,
    I8_TILE,
    INT_OR_I4_TILE,
    INT_TILE,
    NUMBER_OR_I4_TILE,
    NUMBER_TILE,
    PARTITION_VIEW,
    PTR_TILE,
    SCALAR_I1_TILE,
    SCALAR_I32_TILE,
    SCALAR_INT_TILE,
    SCALAR_PTR_TILE,
    STRIDED_VIEW,
    TENSOR_VIEW,
    TILE_VIEW,
    TOKEN,
    AttrDef,
    OpDef,
    OperandDef,
    RegionDef,
    ResultDef,
    TypeConstraint,
    tile_of,
    variadic_of,
)

# ---------------------------------------------------------------------------
# Op-specific type constraints (Ops.td ``def MmaFOp_OperandTileType`` etc.)
# ---------------------------------------------------------------------------


def _named_tile(prefix: str, *elements: str) -> TypeConstraint:
    """``CudaTile_TileOf<[...], [...], "<prefix>">``: summary ``<prefix> of a or b values``."""
    return tile_of(*elements, summary=f"{prefix} of {' or '.join(elements)} values")


MMAF_OPERAND = _named_tile("mmaf operand tile type", "f16", "bf16", "f32", "f64", "tf32", "f8E4M3FN", "f8E5M2")
MMAF_RESULT = _named_tile("mmaf acc/result tile type", "f16", "f32", "f64")
MMAF_SCALED_OPERAND = _named_tile("mmaf_scaled operand tile type", "f8E4M3FN", "f8E5M2", "f4E2M1FN")
MMAF_SCALED_SCALE = _named_tile("mmaf_scaled scale tile type", "f8E4M3FN", "f8E8M0FNU")
MMAF_SCALED_RESULT = _named_tile("mmaf_scaled result tile type", "f32")
MMAI_OPERAND = _named_tile("mmai operand tile type", "i8")
MMAI_ACC = _named_tile("mmai acc tile type", "i32")
MMAI_RESULT = _named_tile("mmai result tile type", "i32")

# ---------------------------------------------------------------------------
# Type transforms used by ``type_inference`` and by ``TypesMatchWith`` traits
# ---------------------------------------------------------------------------

TYPE_TRANSFORMS: dict[str, str] = {
    "<name>": "a bare operand/result name: exactly the type of that operand/result "
              "(from AllTypesMatch / SameOperandsAndResultType / an identity TypesMatchWith); "
              "for a variadic operand, every element has that type",
    "token": "!cuda_tile.token (a buildable type: ODS fills it in when the format omits it)",
    "scalar_i1_tile": "!cuda_tile.tile<i1> (0-d tile of i1; buildable)",
    "scalar_i32_tile": "!cuda_tile.tile<i32> (0-d tile of i32; buildable); for a variadic operand every element",
    "i1_like(x)": "tile with the shape of x and element i1 (ODS getI1SameShape)",
    "ptr_like(x)": "tile with the shape of x whose element is !cuda_tile.ptr<element of x> "
                   "(the comparator also fails when either side is not such a tile)",
    "same_shape(x)": "relation only: a tile whose shape equals the shape of tile x (elements not compared)",
    "identity": "the type itself (the two types must be equal: same shape and element)",
    "scalar_ptr_to_elem(x)": "0-d tile of !cuda_tile.ptr<element type of tensor_view x> (make_tensor_view base)",
    "tensor_view_of(x)": "the tensor_view parameter of view type x (operand of make_*_view)",
    "splat_rank(x)": "one result per index dimension of x (tensor_view rank, or the view's index-space "
                     "rank = rank of its tensor_view), each of the single type printed after '->'",
    "for_iv_type": "the type written after ':' in a for header; also the induction variable's type",
}

# ---------------------------------------------------------------------------
# Parts shared by several ops
# ---------------------------------------------------------------------------
# Attributes that several ops declare alike (Ops.td, too, describes them once:
# ``rounding_mode_desc``, ``flush_to_zero_desc``, ``overflow_desc``, ...).

ROUNDING_MODE = AttrDef("rounding_mode", "enum:RoundingMode", doc="Rounding applied to the result; `rounding<mode>` in the text, nearest_even when left out.")
FLUSH_TO_ZERO = AttrDef("flush_to_zero", "unit", optional=True, doc="When set, subnormal inputs and results become zero.")
OVERFLOW = AttrDef("overflow", "enum:IntegerOverflow", optional=True, default="none", doc="Wrap-around promise the compiler may exploit (`none` makes no promise).")
SIGNEDNESS = AttrDef("signedness", "enum:Signedness", doc="Whether the integer elements are read as `signed` or `unsigned`.")
PROPAGATE_NAN = AttrDef("propagate_nan", "unit", optional=True, doc="When set, a NaN in either input makes the element NaN; otherwise the other input wins.")
OPTIMIZATION_HINTS = AttrDef("optimization_hints", "opt_hints", optional=True, doc="Per-architecture tuning hints for this access (keyed by sm_XX).")
INBOUNDS = AttrDef("inbounds", "dense_bool_array", optional=True, doc="Per index dimension, a promise that the access stays inside the view, printed `inbounds = [true, ...]` (INFERRED from 13.4 bytecode).")
#: The attributes of a function (``entry``, ``testing$func``) after its ``sym_name``.
FUNCTION_SIGNATURE = (
    AttrDef("function_type", "type", doc="Signature of the kernel: argument types and (empty) result types."),
    AttrDef("arg_attrs", "array", optional=True, doc="Per-argument attribute dictionaries (not used by Tile IR today)."),
    AttrDef("res_attrs", "array", optional=True, doc="Per-result attribute dictionaries (not used by Tile IR today)."),
)

# Assembly formats of the element-wise ops: one per set of attributes.
UNARY_FORMAT = "$source attr-dict `:` custom<CudaTileType>(type($result))"
UNARY_FTZ_FORMAT = "$source (`flush_to_zero` $flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"
BINARY_FORMAT = "$lhs `,` $rhs attr-dict `:` custom<CudaTileType>(type($result))"
BINARY_OVERFLOW_FORMAT = "$lhs `,` $rhs (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($result))"
BINARY_ROUNDING_FORMAT = ("$lhs `,` $rhs custom<IEEERoundingMode>($rounding_mode) (`flush_to_zero` $flush_to_zero^)? attr-dict "
                          "`:` custom<CudaTileType>(type($result))")
BINARY_SIGNEDNESS_FORMAT = "$lhs `,` $rhs custom<Signedness>($signedness) attr-dict `:` custom<CudaTileType>(type($result))"
BINARY_NAN_FORMAT = ("$lhs `,` $rhs oilist(`flush_to_zero` $flush_to_zero | `propagate_nan` $propagate_nan) attr-dict "
                     "`:` custom<CudaTileType>(type($result))")

#: ``operand_docs`` of :func:`_elementwise_binary` for the ops that divide and for the shifts.
DIVISION_DOCS = ("Numerator.", "Denominator; same type as `lhs`.")
SHIFT_DOCS = ("Bits to shift.", "Shift distance per element, same type as `lhs`.")


def _memory_ordering(allowed: str, *, optional_scope: bool = True) -> tuple[AttrDef, AttrDef]:
    """The ``memory_ordering_semantics`` and ``memory_scope`` attributes of a memory access that admits the
    orderings ``allowed``; the scope is optional where weak accesses go without one."""
    return (
        AttrDef("memory_ordering_semantics", "enum:MemoryOrderingSemantics", doc=f"Memory ordering of the access; allowed here: {allowed}."),
        AttrDef("memory_scope", "enum:MemoryScope", optional=optional_scope, doc="Which threads the access must be coherent with (tl_blk, device or sys); absent for weak accesses."),
    )


def _elementwise_unary(name: str, since: str, opcode: int, tile: TypeConstraint, summary: str, *, result_doc: str,
                       attributes: tuple[AttrDef, ...] = (), format: str = UNARY_FORMAT,
                       traits: tuple[str, ...] = ("Pure", "AllTypesMatch<source, result>")) -> OpDef:
    """An element-wise op on one tile ``source`` of the type ``tile``; its ``result`` has the type of ``source``."""
    return OpDef(
        name=name, since=since, opcode=opcode, summary=summary,
        operands=(OperandDef("source", tile, doc="Input values, transformed element by element."),),
        attributes=attributes,
        results=(ResultDef("result", tile, doc=result_doc),),
        traits=traits, format=format,
        type_inference={"source": "result"},
    )


def _elementwise_binary(name: str, since: str, opcode: int, tile: TypeConstraint, summary: str, *, result_doc: str,
                        operand_docs: tuple[str, str] = ("Left operand.", "Right operand; same type as `lhs`."),
                        attributes: tuple[AttrDef, ...] = (), format: str = BINARY_FORMAT,
                        traits: tuple[str, ...] = ("Pure", "AllTypesMatch<lhs, rhs, result>")) -> OpDef:
    """An element-wise op on two tiles ``lhs`` and ``rhs`` of the type ``tile``; its ``result`` has their type."""
    lhs_doc, rhs_doc = operand_docs
    return OpDef(
        name=name, since=since, opcode=opcode, summary=summary,
        operands=(OperandDef("lhs", tile, doc=lhs_doc), OperandDef("rhs", tile, doc=rhs_doc)),
        attributes=attributes,
        results=(ResultDef("result", tile, doc=result_doc),),
        traits=traits, format=format,
        type_inference={"lhs": "result", "rhs": "result"},
    )


def _tile_view_op(name: str, since: str, opcode: int, view: TypeConstraint, summary: str, *, result_doc: str,
                  tensor_view_since: str | None = None) -> OpDef:
    """A ``make_*_view`` op: views its operand ``tensor_view`` as tiles, a result of the view type ``view``."""
    return OpDef(
        name=name, since=since, opcode=opcode, summary=summary,
        operands=(OperandDef("tensor_view", TENSOR_VIEW, doc="Tensor view being tiled.", since=tensor_view_since),),
        results=(ResultDef("result", view, doc=result_doc),),
        traits=("Pure", "OpAsmOpInterface"),
        format=None,
        type_inference={"tensor_view": "tensor_view_of(result)"},
    )


def _float_power(name: str, since: str, opcode: int, summary: str) -> OpDef:
    """Ops.td PowOp under the name ``name`` (``pow``; ``fpowf`` in the 13.5 printer): a float base raised to a
    float exponent of its type."""
    return OpDef(
        name=name, since=since, opcode=opcode, summary=summary,
        operands=(
            OperandDef("source", BASE_FLOAT_TILE, doc="Base."),
            OperandDef("exponent", BASE_FLOAT_TILE, doc="Float power, same type as the base."),
        ),
        results=(ResultDef("result", BASE_FLOAT_TILE, doc="source ** exponent per element."),),
        traits=("Pure", "AllTypesMatch<result, source, exponent>", "AllRanksMatch<source, exponent, result>"),
        format="$source `,` $exponent attr-dict `:` custom<CudaTileType>(type($result))",
        type_inference={"source": "result", "exponent": "result"},
    )


# ---------------------------------------------------------------------------
# The ops
# ---------------------------------------------------------------------------

OPS: tuple[OpDef, ...] = (
    _elementwise_unary("absf", "13.1", 0x0, BASE_FLOAT_TILE, "Absolute value of each element of a float tile.",
                       result_doc="|x| for each element x of `source`.",
                       traits=("Pure", "SameOperandsAndResultShape", "AllTypesMatch<source, result>")),
    _elementwise_unary("absi", "13.1", 0x1, INT_TILE, "Absolute value of each element of an integer tile.",
                       result_doc="|x| for each element x of `source`.",
                       traits=("Pure", "SameOperandsAndResultShape", "AllTypesMatch<source, result>")),
    _elementwise_binary("addi", "13.1", 0x3, INT_TILE, "Adds two integer tiles element by element.",
                        result_doc="Element-wise lhs + rhs (wraps modulo 2^width).", attributes=(OVERFLOW,),
                        format=BINARY_OVERFLOW_FORMAT),
    _elementwise_binary("addf", "13.1", 0x2, BASE_FLOAT_TILE, "Adds two float tiles element by element.",
                        result_doc="Element-wise lhs + rhs.", attributes=(ROUNDING_MODE, FLUSH_TO_ZERO),
                        format=BINARY_ROUNDING_FORMAT),
    _elementwise_binary("andi", "13.1", 0x4, INT_TILE, "Bitwise AND of two integer tiles, element by element.",
                        result_doc="Element-wise lhs & rhs."),
    OpDef(
        name="assert", since="13.1", opcode=0x5,
        summary="Stops the kernel with the given message unless every condition element is true.",
        operands=(OperandDef("condition", I1_TILE, doc="i1 tile that must be all true for the kernel to go on."),),
        attributes=(AttrDef("message", "string", doc="Text reported when some element of `condition` is false."),),
        format="$condition `,` $message attr-dict `:` custom<CudaTileType>(type($condition))",
    ),
    OpDef(
        name="alloca", since="13.3", opcode=0x71,
        summary="Allocates scratch memory of a given element count and alignment and yields a pointer to it.",
        attributes=(
            AttrDef("num_elem", "i64", doc="How many elements of the pointee type to reserve (>= 0)."),
            AttrDef("alignment", "i64", doc="Byte alignment of the reserved memory (>= 0)."),
            AttrDef("global", "unit", optional=True, doc="When set, the returned pointer is in the global address space."),
        ),
        results=(ResultDef("result", SCALAR_PTR_TILE, doc="Scalar pointer to the start of the reserved memory."),),
        format="`num_elem` `=` $num_elem `,` `alignment` `=` $alignment (`global` $global^)? attr-dict `:` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="assume", since="13.1", opcode=0x6,
        summary="Attaches a fact the compiler may rely on (divisibility, bounds, repeated elements) to a value.",
        operands=(OperandDef("value", ANY, doc="Value the fact is about; passed through unchanged."),),
        attributes=(AttrDef("predicate", "assume_predicate", doc="The fact: #cuda_tile.div_by, same_elements or bounded."),),
        results=(ResultDef("result", ANY, doc="`value` itself, now carrying the fact for later uses."),),
        traits=("AllTypesMatch<value, result>", "OpAsmOpInterface"),
        format="custom<AssumePredicate>($predicate) `,` $value attr-dict `:` custom<CudaTileType>(type($value))",
        type_inference={"result": "value"},
    ),
    OpDef(
        name="atan2", since="13.2", opcode=0x6e,
        summary="Element-wise two-argument arctangent of float tiles.",
        operands=(
            OperandDef("x", BASE_FLOAT_TILE, doc="Numerator of the ratio whose arctangent is taken."),
            OperandDef("y", BASE_FLOAT_TILE, doc="Denominator of that ratio; the signs of both pick the quadrant."),
        ),
        results=(ResultDef("result", BASE_FLOAT_TILE, doc="Angle in radians per element, same type as the inputs."),),
        traits=("Pure", "AllTypesMatch<x, y, result>"),
        format="$x `,` $y attr-dict `:` custom<CudaTileType>(type($result))",
        type_inference={"x": "result", "y": "result"},
    ),
    OpDef(
        name="atomic_cas_tko", since="13.1", opcode=0x7,
        summary="Atomic compare-and-swap at each pointer of a tile (token-ordered).",
        operands=(
            OperandDef("pointers", PTR_TILE, doc="Where to compare and swap, one pointer per element."),
            OperandDef("cmp", ANY_TILE, doc="Expected current values; the swap only happens where memory equals them."),
            OperandDef("val", ANY_TILE, doc="Values written where the comparison succeeds."),
            OperandDef("mask", I1_TILE, "optional", doc="Optional i1 tile; elements with false are skipped."),
            OperandDef("token", TOKEN, "optional", doc="Optional token this access must be ordered after."),
        ),
        attributes=_memory_ordering("relaxed, acquire, release, acq_rel", optional_scope=False),
        results=(
            ResultDef("result", ANY_TILE, doc="Values found in memory before the operation."),
            ResultDef("result_token", TOKEN, doc="Token that completes once the access has happened."),
        ),
        traits=("AllShapesMatch<pointers, cmp, val, result>", "AllTypesMatch<cmp, val, result>", "AttrSizedOperandSegments"),
        format="$memory_ordering_semantics $memory_scope $pointers `,` $cmp `,` $val (`,` $mask^)? (`token` `` `=` `` $token^)? attr-dict `:` custom<CudaTileType>(type($pointers)) `,` custom<CudaTileType>(type($val)) (`,` custom<CudaTileType>(type($mask))^)? `->` custom<CudaTileType>(type($result)) `,` custom<CudaTileType>(type($result_token))",
        type_inference={"cmp": "val", "token": "token"},
    ),
    OpDef(
        name="atomic_rmw_tko", since="13.1", opcode=0x8,
        summary="Atomic read-modify-write at each pointer of a tile, returning the old values (token-ordered).",
        operands=(
            OperandDef("pointers", PTR_TILE, doc="Where to update, one pointer per element."),
            OperandDef("arg", ANY_TILE, doc="Operand combined with the stored value according to `mode`."),
            OperandDef("mask", I1_TILE, "optional", doc="Optional i1 tile; elements with false are skipped."),
            OperandDef("token", TOKEN, "optional", doc="Optional token this access must be ordered after."),
        ),
        attributes=(
            *_memory_ordering("relaxed, acquire, release, acq_rel", optional_scope=False),
            AttrDef("mode", "enum:AtomicRMWMode", doc="How the stored value and `arg` are combined (add, max, xchg, ...)."),
        ),
        results=(
            ResultDef("result", ANY_TILE, doc="Values found in memory before the update."),
            ResultDef("result_token", TOKEN, doc="Token that completes once the update has happened."),
        ),
        traits=("AllShapesMatch<pointers, arg, result>", "AllTypesMatch<arg, result>", "AttrSizedOperandSegments"),
        format="$memory_ordering_semantics $memory_scope $pointers `,` $mode `,` $arg (`,` $mask^)? (`token` `` `=` `` $token^)? attr-dict `:` custom<CudaTileType>(type($pointers)) `,` custom<CudaTileType>(type($arg)) (`,` custom<CudaTileType>(type($mask))^)? `->` custom<CudaTileType>(type($result)) `,` custom<CudaTileType>(type($result_token))",
        type_inference={"token": "token"},
    ),
    OpDef(
        name="atomic_red_view_tko", since="13.3", opcode=0x75,
        summary="Atomically combines a tile into a tile view at a tile index (token-ordered).",
        operands=(
            OperandDef("view", TILE_VIEW, doc="Tile view receiving the reduction."),
            OperandDef("index", variadic_of(INT_TILE), "variadic", doc="Position of the target tile in the view's tile grid, one scalar per dimension."),
            OperandDef("value", ANY_TILE, doc="Tile combined into memory element by element."),
            OperandDef("token", TOKEN, "optional", doc="Optional token this access must be ordered after."),
        ),
        attributes=(
            AttrDef("memory_ordering_semantics", "enum:MemoryOrderingSemantics", doc="Memory ordering of the access; allowed here: relaxed."),
            AttrDef("memory_scope", "enum:MemoryScope", doc="Which threads the access must be coherent with; allowed here: tl_blk, device."),
            AttrDef("mode", "enum:AtomicRMWMode", doc="Combining operation; allowed here: and, or, xor, add, addf, max, min, umax, umin."),
        ),
        results=(ResultDef("result_token", TOKEN, doc="Token that completes once the reduction has happened."),),
        traits=("AttrSizedOperandSegments",),
        format=None,
        type_inference={"token": "token"},
    ),
    OpDef(
        name="bitcast", since="13.1", opcode=0x9,
        summary="Reinterprets the bits of each element as another element type of the same width.",
        operands=(OperandDef("source", NUMBER_TILE, doc="Tile whose bits are reused."),),
        results=(ResultDef("result", NUMBER_TILE, doc="Same bits read as the new element type; same shape and bit width."),),
        traits=("Pure", "AllShapesMatch<source, result>"),
        format="$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="broadcast", since="13.1", opcode=0xb,
        summary="Expands the size-1 dimensions of a tile to a larger shape of the same rank.",
        operands=(OperandDef("source", ANY_TILE, doc="Tile whose size-1 dimensions get repeated."),),
        results=(ResultDef("result", ANY_TILE, doc="Tile of the target shape, same rank and element type."),),
        traits=("Pure", "SameOperandsAndResultElementType", "AllRanksMatch<source, result>", "OpAsmOpInterface"),
        format="$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="cat", since="13.1", opcode=0xc,
        summary="Joins two tiles along one dimension.",
        operands=(
            OperandDef("lhs", ANY_TILE, doc="Tile placed first along `dim`."),
            OperandDef("rhs", ANY_TILE, doc="Tile placed after `lhs` along `dim`."),
        ),
        attributes=(AttrDef("dim", "i64", doc="Dimension along which the two tiles are joined."),),
        results=(ResultDef("result", ANY_TILE, doc="Joined tile; its `dim` extent is the sum of the inputs' extents."),),
        traits=("Pure", "AllRanksMatch<lhs, rhs, result>", "AllElementTypeMatch<lhs, rhs, result>"),
        format="$lhs `,` $rhs `dim` `=` $dim attr-dict `:` custom<CudaTileType>(type($lhs)) `,` custom<CudaTileType>(type($rhs)) `->` custom<CudaTileType>(type($result))",
    ),
    _elementwise_unary("cos", "13.1", 0x12, BASE_FLOAT_TILE, "Cosine of each element of a float tile (radians).",
                       result_doc="cos(x) per element (radians)."),
    _elementwise_unary("cosh", "13.1", 0x13, BASE_FLOAT_TILE, "Hyperbolic cosine of each element of a float tile.",
                       result_doc="cosh(x) per element."),
    OpDef(
        name="break", since="13.1", opcode=0xa,
        summary="Leaves the enclosing loop, handing values to the loop's results.",
        operands=(OperandDef("operands", variadic_of(CUDA_TILE_ANY), "variadic", doc="Values that become the results of the enclosing loop."),),
        traits=("ReturnLike", "Terminator", "ParentOneOf<if, loop>"),
        format="attr-dict ($operands^ `:` custom<CudaTileType>(type($operands)))?",
    ),
    _elementwise_unary("ceil", "13.1", 0xd, BASE_FLOAT_TILE, "Rounds each float element up to an integral value.",
                       result_doc="Smallest integral value not below each element, still a float."),
    OpDef(
        name="cmpf", since="13.1", opcode=0xe,
        summary="Compares two float tiles element by element into an i1 tile.",
        operands=(
            OperandDef("lhs", BASE_FLOAT_TILE, doc="Left side of the comparison."),
            OperandDef("rhs", BASE_FLOAT_TILE, doc="Right side; same type as `lhs`."),
        ),
        attributes=(
            AttrDef("comparison_predicate", "enum:ComparisonPredicate", doc="Relation tested: equal, less_than, greater_than, ..."),
            AttrDef("comparison_ordering", "enum:ComparisonOrdering", doc="How NaN inputs answer: `ordered` gives false, `unordered` true."),
        ),
        results=(ResultDef("result", I1_TILE, doc="i1 tile, true where the relation holds."),),
        traits=("Pure", "AllTypesMatch<lhs, rhs>", "TypesMatchWith<lhs, result, i1_like>"),
        format="custom<ComparisonPredicate>($comparison_predicate) custom<ComparisonOrdering>($comparison_ordering) $lhs `,` $rhs attr-dict `:` custom<CudaTileType>(type($lhs)) `->` custom<CudaTileType>(type($result))",
        type_inference={"rhs": "lhs"},
    ),
    OpDef(
        name="cmpi", since="13.1", opcode=0xf,
        summary="Compares two integer tiles element by element into an i1 tile.",
        operands=(
            OperandDef("lhs", INT_TILE, doc="Left side of the comparison."),
            OperandDef("rhs", INT_TILE, doc="Right side; same type as `lhs`."),
        ),
        attributes=(
            AttrDef("comparison_predicate", "enum:ComparisonPredicate", doc="Relation tested: equal, less_than, greater_than, ..."),
            SIGNEDNESS,
        ),
        results=(ResultDef("result", I1_TILE, doc="i1 tile, true where the relation holds."),),
        traits=("Pure", "AllTypesMatch<lhs, rhs>", "TypesMatchWith<lhs, result, i1_like>"),
        format="custom<ComparisonPredicate>($comparison_predicate) $lhs `,` $rhs `,` custom<Signedness>($signedness) attr-dict `:` custom<CudaTileType>(type($lhs)) `->` custom<CudaTileType>(type($result))",
        type_inference={"rhs": "lhs"},
    ),
    OpDef(
        # AllTypesMatch<value, result>: `value` is the dense attribute; its type takes part.
        name="constant", since="13.1", opcode=0x10,
        summary="Materializes a tile from a literal value.",
        attributes=(AttrDef("value", "dense", doc="Literal contents (a splat or one value per element)."),),
        results=(ResultDef("result", NUMBER_TILE, doc="Tile holding the literal."),),
        traits=("ConstantLike", "Pure", "AllTypesMatch<value, result>", "OpAsmOpInterface"),
        format="custom<DenseTypedElementsAttr>($value, type($result)) attr-dict",
    ),
    OpDef(
        name="continue", since="13.1", opcode=0x11,
        summary="Ends the current loop iteration, handing over the next loop-carried values.",
        operands=(OperandDef("operands", variadic_of(CUDA_TILE_ANY), "variadic", doc="Loop-carried values for the next iteration."),),
        traits=("Terminator", "ParentOneOf<for, if, loop>"),
        format="attr-dict ($operands^ `:` custom<CudaTileType>(type($operands)))?",
    ),
    OpDef(
        name="get_index_space_shape", since="13.1", opcode=0x2d,
        summary="Returns the extent of each dimension of a tile view's index space.",
        operands=(OperandDef("src", TILE_VIEW, doc="Tile view whose tile grid is measured."),),
        results=(ResultDef("result", variadic_of(SCALAR_INT_TILE), "variadic", doc="Number of tiles along each dimension of the grid, one scalar each."),),
        traits=("NoMemoryEffect",),
        format=None,
        type_inference={"result": "splat_rank(src)"},
    ),
    OpDef(
        name="get_tensor_shape", since="13.1", opcode=0x2f,
        summary="Returns the extent of each dimension of a tensor view.",
        operands=(OperandDef("src", TENSOR_VIEW, doc="Tensor view whose extents are read."),),
        results=(ResultDef("result", variadic_of(SCALAR_INT_TILE), "variadic", doc="Element count along each dimension, one scalar each."),),
        traits=("NoMemoryEffect",),
        format=None,
        type_inference={"result": "splat_rank(src)"},
    ),
    _elementwise_binary("divf", "13.1", 0x14, BASE_FLOAT_TILE, "Divides two float tiles element by element.",
                        result_doc="Element-wise quotient lhs / rhs.", operand_docs=DIVISION_DOCS,
                        attributes=(ROUNDING_MODE, FLUSH_TO_ZERO),
                        format="$lhs `,` $rhs custom<DivFOpRoundingMode>($rounding_mode) (`flush_to_zero` $flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"),
    _elementwise_binary("divi", "13.1", 0x15, INT_TILE,
                        "Divides two integer tiles element by element, rounding in the chosen direction.",
                        result_doc="Element-wise integer quotient, rounded as `rounding` says.",
                        operand_docs=DIVISION_DOCS,
                        attributes=(SIGNEDNESS, AttrDef("rounding", "enum:RoundingMode", optional=True, default="zero", doc="Direction of the quotient's rounding: zero (default), positive_inf or negative_inf.")),
                        format="$lhs `,` $rhs custom<Signedness>($signedness) (`rounding` `` $rounding^)? attr-dict `:` custom<CudaTileType>(type($result))",
                        traits=("NoMemoryEffect", "AllTypesMatch<lhs, rhs, result>")),
    OpDef(
        name="mmaf", since="13.1", opcode=0x49,
        summary="Float matrix multiply of two tiles added to an accumulator tile.",
        operands=(
            OperandDef("lhs", MMAF_OPERAND, doc="Left matrix (M x K, optionally batched)."),
            OperandDef("rhs", MMAF_OPERAND, doc="Right matrix (K x N, optionally batched)."),
            OperandDef("acc", MMAF_RESULT, doc="Addend matrix (M x N); also fixes the result type."),
        ),
        attributes=(AttrDef("fast_acc", "unit", optional=True, doc="When set, f8 products use the hardware's faster, less precise accumulation.", since="13.3"),),
        results=(ResultDef("result", MMAF_RESULT, doc="lhs x rhs + acc, same type as `acc`."),),
        traits=("Pure", "AllTypesMatch<acc, result>", "AllElementTypeMatch<lhs, rhs>", "AllRanksMatch<lhs, rhs, acc>"),
        format="$lhs `,` $rhs `,` $acc (`fast_acc` $fast_acc^)? attr-dict `:` custom<CudaTileType>(type($lhs)) `,` custom<CudaTileType>(type($rhs)) `,` custom<CudaTileType>(type($acc))",
        type_inference={"result": "acc"},
    ),
    OpDef(
        name="mmaf_scaled", since="13.3", opcode=0x72,
        summary="Block-scaled low-precision float matrix multiply added to an f32 accumulator.",
        operands=(
            OperandDef("lhs", MMAF_SCALED_OPERAND, doc="Left low-precision matrix (M x K)."),
            OperandDef("rhs", MMAF_SCALED_OPERAND, doc="Right low-precision matrix (K x N)."),
            OperandDef("acc", MMAF_SCALED_RESULT, doc="f32 addend matrix (M x N)."),
            OperandDef("lhs_scale", MMAF_SCALED_SCALE, doc="Block scale factors applied to `lhs` along K."),
            OperandDef("rhs_scale", MMAF_SCALED_SCALE, doc="Block scale factors applied to `rhs` along K."),
        ),
        results=(ResultDef("result", MMAF_SCALED_RESULT, doc="Scaled lhs x scaled rhs + acc, in f32."),),
        traits=("Pure", "AllTypesMatch<acc, result>", "AllElementTypeMatch<lhs, rhs>", "AllElementTypeMatch<lhs_scale, rhs_scale>", "AllRanksMatch<lhs, rhs, acc, lhs_scale, rhs_scale>"),
        format="$lhs `,` $rhs `,` $acc `,` $lhs_scale `,` $rhs_scale attr-dict `:` custom<CudaTileType>(type($lhs)) `,` custom<CudaTileType>(type($rhs)) `,` custom<CudaTileType>(type($acc)) `,` custom<CudaTileType>(type($lhs_scale)) `,` custom<CudaTileType>(type($rhs_scale))",
        type_inference={"result": "acc"},
    ),
    OpDef(
        name="mmai", since="13.1", opcode=0x4a,
        summary="i8 matrix multiply added to an i32 accumulator tile.",
        operands=(
            OperandDef("lhs", MMAI_OPERAND, doc="Left i8 matrix (M x K)."),
            OperandDef("rhs", MMAI_OPERAND, doc="Right i8 matrix (K x N)."),
            OperandDef("acc", MMAI_ACC, doc="i32 addend matrix (M x N)."),
        ),
        attributes=(
            AttrDef("signedness_lhs", "enum:Signedness", doc="Whether `lhs` bytes are read as signed or unsigned."),
            AttrDef("signedness_rhs", "enum:Signedness", doc="Whether `rhs` bytes are read as signed or unsigned."),
        ),
        results=(ResultDef("result", MMAI_RESULT, doc="lhs x rhs + acc, in i32."),),
        traits=("Pure", "AllTypesMatch<acc, result>", "AllElementTypeMatch<lhs, rhs>", "AllRanksMatch<lhs, rhs, acc>"),
        format="$lhs `,` $rhs `,` $acc custom<Signedness>($signedness_lhs) custom<Signedness>($signedness_rhs) attr-dict `:` custom<CudaTileType>(type($lhs)) `,` custom<CudaTileType>(type($rhs)) `,` custom<CudaTileType>(type($acc))",
        type_inference={"result": "acc"},
    ),
    OpDef(
        name="extract", since="13.1", opcode=0x26,
        summary="Takes one sub-tile out of a tile, chosen by its position in the sub-tile grid.",
        operands=(
            OperandDef("source", ANY_TILE, doc="Tile cut into equal sub-tiles of the result's shape."),
            OperandDef("indices", variadic_of(SCALAR_I32_TILE), "variadic", doc="Position of the wanted sub-tile in the sub-tile grid, one i32 scalar per dimension."),
        ),
        results=(ResultDef("result", ANY_TILE, doc="The selected sub-tile."),),
        traits=("Pure", "AllRanksMatch<source, result>"),
        format="$source `[` $indices `]` attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
        type_inference={"indices": "scalar_i32_tile"},
    ),
    _elementwise_unary("exp", "13.1", 0x17, BASE_FLOAT_TILE, "Element-wise natural exponential.",
                       result_doc="e raised to each element.",
                       attributes=(AttrDef("rounding_mode", "enum:RoundingMode", optional=True, default="full", doc="Rounding applied to the result; `rounding<mode>` in the text, full when left out.", since="13.3"),),
                       format="$source custom<ExpOpRoundingMode>($rounding_mode) attr-dict `:` custom<CudaTileType>(type($result))"),
    _elementwise_unary("exp2", "13.1", 0x18, BASE_FLOAT_TILE, "Element-wise base-2 exponential.",
                       result_doc="2 raised to each element.", attributes=(FLUSH_TO_ZERO,), format=UNARY_FTZ_FORMAT),
    OpDef(
        name="exti", since="13.1", opcode=0x25,
        summary="Widens integer elements by sign or zero extension.",
        operands=(OperandDef("from", INT_OR_I4_TILE, doc="Narrow integer tile."),),
        attributes=(SIGNEDNESS,),
        results=(ResultDef("to", INT_OR_I4_TILE, doc="Wider integer tile of the same shape."),),
        traits=("Pure", "AllShapesMatch<from, to>"),
        format="$from custom<Signedness>($signedness) attr-dict `:` custom<CudaTileType>(type($from)) `->` custom<CudaTileType>(type($to))",
    ),
    OpDef(
        name="for", since="13.1", opcode=0x29,
        summary="Counted loop over an integer range, with loop-carried values.",
        operands=(
            OperandDef("lowerBound", SCALAR_INT_TILE, doc="First value of the induction variable."),
            OperandDef("upperBound", SCALAR_INT_TILE, doc="Exclusive end of the iteration range."),
            OperandDef("step", SCALAR_INT_TILE, doc="Positive amount added to the induction variable each iteration."),
            OperandDef("initValues", variadic_of(ANY), "variadic", doc="Starting values of the loop-carried variables."),
        ),
        attributes=(AttrDef("unsignedCmp", "unit", optional=True, doc="When set, bounds and step are compared as unsigned integers.", since="13.2"),),
        results=(ResultDef("resultValues", variadic_of(ANY), "variadic", doc="Loop-carried values after the last iteration."),),
        regions=(RegionDef("region", "single_block"),),
        traits=("AutomaticAllocationScope", "AllTypesMatch<lowerBound, upperBound, step>", "AllTypesMatch<initValues, resultValues>", "OpAsmOpInterface", "RecursiveMemoryEffects", "SingleBlockImplicitTerminator<continue>"),
        format=None,
        type_inference={"lowerBound": "for_iv_type", "upperBound": "for_iv_type", "step": "for_iv_type", "initValues": "resultValues"},
    ),
    _elementwise_unary("floor", "13.1", 0x27, BASE_FLOAT_TILE, "Rounds each float element down to an integral value.",
                       result_doc="Largest integral value not above each element, still a float."),
    OpDef(
        name="fma", since="13.1", opcode=0x28,
        summary="Fused multiply-add of three float tiles, element by element.",
        operands=(
            OperandDef("lhs", BASE_FLOAT_TILE, doc="First factor."),
            OperandDef("rhs", BASE_FLOAT_TILE, doc="Second factor."),
            OperandDef("acc", BASE_FLOAT_TILE, doc="Addend."),
        ),
        attributes=(ROUNDING_MODE, FLUSH_TO_ZERO),
        results=(ResultDef("result", BASE_FLOAT_TILE, doc="lhs * rhs + acc with a single rounding."),),
        traits=("Pure", "AllTypesMatch<lhs, rhs, acc, result>"),
        format="$lhs `,` $rhs `,` $acc custom<IEEERoundingMode>($rounding_mode) (`flush_to_zero` $flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))",
        type_inference={"lhs": "result", "rhs": "result", "acc": "result"},
    ),
    OpDef(
        name="ftof", since="13.1", opcode=0x2a,
        summary="Converts tile elements from one float type to another.",
        operands=(OperandDef("from", FLOAT_TILE, doc="Float tile to convert."),),
        attributes=(AttrDef("rounding_mode", "enum:RoundingMode", optional=True, default="nearest_even", doc="Rounding applied to the result; `rounding<mode>` in the text, nearest_even when left out."),),
        results=(ResultDef("to", FLOAT_TILE, doc="Same values in the target float type."),),
        traits=("Pure", "AllShapesMatch<from, to>"),
        format="$from custom<IEEERoundingMode>($rounding_mode) attr-dict `:` custom<CudaTileType>(type($from)) `->` custom<CudaTileType>(type($to))",
    ),
    OpDef(
        name="ftoi", since="13.1", opcode=0x2b,
        summary="Converts float elements to integers.",
        operands=(OperandDef("from", FLOAT_TILE, doc="Float tile to convert."),),
        attributes=(
            SIGNEDNESS,
            AttrDef("rounding_mode", "enum:RoundingMode", doc="Rounding applied to the result; `rounding<mode>` in the text, nearest_int_to_zero when left out."),
        ),
        results=(ResultDef("to", INT_TILE, doc="Integer tile of the same shape."),),
        traits=("Pure", "AllShapesMatch<from, to>"),
        format="$from custom<Signedness>($signedness) custom<IntegerRoundingMode>($rounding_mode) attr-dict `:` custom<CudaTileType>(type($from)) `->` custom<CudaTileType>(type($to))",
    ),
    OpDef(
        name="entry", since="13.1", opcode=0x16,
        summary="Defines a kernel entry point.",
        attributes=(
            AttrDef("sym_name", "symbol_name", doc="Kernel name."),
            *FUNCTION_SIGNATURE,
            AttrDef("optimization_hints", "opt_hints", optional=True, doc="Per-architecture launch hints (num_cta_in_cga, occupancy, ...)."),
        ),
        regions=(RegionDef("body", "single_block"),),
        traits=("FunctionOpInterface", "IsolatedFromAbove", "OpAsmOpInterface", "SingleBlock", "SingleBlockImplicitTerminator<return>"),
        format=None,
    ),
    OpDef(
        name="get_tile_block_id", since="13.1", opcode=0x30,
        summary="Returns the x, y and z coordinates of the running tile block.",
        results=(
            ResultDef("blockId_x", SCALAR_I32_TILE, doc="Index of this tile block along x."),
            ResultDef("blockId_y", SCALAR_I32_TILE, doc="Index of this tile block along y."),
            ResultDef("blockId_z", SCALAR_I32_TILE, doc="Index of this tile block along z."),
        ),
        traits=("Pure",),
        format="attr-dict `:` custom<CudaTileType>(type($blockId_x))",
        type_inference={"blockId_y": "scalar_i32_tile", "blockId_z": "scalar_i32_tile"},
    ),
    OpDef(
        name="get_num_tile_blocks", since="13.1", opcode=0x2e,
        summary="Returns the number of tile blocks in the grid along x, y and z.",
        results=(
            ResultDef("gridSize_x", SCALAR_I32_TILE, doc="Grid extent along x, in tile blocks."),
            ResultDef("gridSize_y", SCALAR_I32_TILE, doc="Grid extent along y, in tile blocks."),
            ResultDef("gridSize_z", SCALAR_I32_TILE, doc="Grid extent along z, in tile blocks."),
        ),
        traits=("Pure",),
        format="attr-dict `:` custom<CudaTileType>(type($gridSize_x))",
        type_inference={"gridSize_y": "scalar_i32_tile", "gridSize_z": "scalar_i32_tile"},
    ),
    OpDef(
        name="get_global", since="13.1", opcode=0x2c,
        summary="Returns a pointer to a module-level global.",
        attributes=(AttrDef("name", "symbol_ref", doc="Symbol of the `global` to address."),),
        results=(ResultDef("result", SCALAR_PTR_TILE, doc="Scalar pointer to the global's storage."),),
        traits=("Pure", "SymbolUserOpInterface"),
        format="$name attr-dict `:` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="global", since="13.1", opcode=0x31,
        summary="Declares a module-level global buffer with an initial value.",
        attributes=(
            AttrDef("sym_name", "symbol_name", doc="Name by which `get_global` refers to it."),
            AttrDef("value", "dense", doc="Initial contents (typed literal; its type fixes the element type and size)."),
            AttrDef("alignment", "i64", optional=True, default="0", doc="Byte alignment of the storage."),
            AttrDef("constant", "unit", optional=True, doc="When set, the global is read-only.", since="13.3"),
            AttrDef("symbol_visibility", "enum:SymbolVisibility", optional=True, default="public", doc="`public` (the default) or `private` to the module.", since="13.3"),
        ),
        traits=("Symbol",),
        format="custom<SymbolVisibility>($symbol_visibility) (`constant` $constant^)? $sym_name (`alignment` `=` $alignment^)? attr-dict custom<DenseTypedElementsAttrNoResult>($value)",
    ),
    OpDef(
        name="if", since="13.1", opcode=0x32,
        summary="Runs the then region, or the optional else region, depending on a scalar i1 condition.",
        operands=(OperandDef("condition", SCALAR_I1_TILE, doc="Scalar i1 choosing the `then` (true) or `else` region."),),
        results=(ResultDef("results", variadic_of(ANY), "variadic", doc="Values yielded by whichever region ran."),),
        regions=(
            RegionDef("thenRegion", "single_block"),
            RegionDef("elseRegion", "max_one_block"),
        ),
        traits=("NoRegionArguments", "OpAsmOpInterface", "RecursiveMemoryEffects", "SingleBlockImplicitTerminator<yield|break|continue|return>"),
        format="$condition (`->` `(` custom<CudaTileType>(type($results))^ `)`)? custom<IfOpRegion>($thenRegion) (`else` custom<IfOpRegion>($elseRegion)^)? attr-dict",
        type_inference={"condition": "scalar_i1_tile"},
    ),
    OpDef(
        name="int_to_ptr", since="13.1", opcode=0x33,
        summary="Reinterprets i64 elements as pointers.",
        operands=(OperandDef("source", I64_TILE, doc="i64 addresses."),),
        results=(ResultDef("result", PTR_TILE, doc="Pointers with those addresses."),),
        traits=("Pure", "AllShapesMatch<source, result>"),
        format="$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="iota", since="13.1", opcode=0x3a,
        summary="Produces the 1-d integer tile 0, 1, ..., n-1.",
        results=(ResultDef("result", INT_TILE, doc="1-d tile whose element i holds i."),),
        traits=("Pure",),
        format="attr-dict `:` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="join_tokens", since="13.1", opcode=0x3c,
        summary="Merges ordering tokens into one that depends on all of them.",
        operands=(OperandDef("tokens", variadic_of(TOKEN), "variadic", doc="Tokens to wait for."),),
        results=(ResultDef("result", TOKEN, doc="Token that completes when all inputs have."),),
        traits=("Pure",),
        format="$tokens attr-dict `:` custom<CudaTileType>(type($result))",
        type_inference={"tokens": "token"},
    ),
    OpDef(
        name="trunci", since="13.1", opcode=0x6b,
        summary="Narrows integer elements by dropping their high bits.",
        operands=(OperandDef("from", INT_OR_I4_TILE, doc="Wide integer tile."),),
        attributes=(OVERFLOW,),
        results=(ResultDef("to", INT_OR_I4_TILE, doc="Narrower integer tile of the same shape (high bits dropped)."),),
        traits=("Pure", "AllShapesMatch<from, to>"),
        format="$from (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($from)) `->` custom<CudaTileType>(type($to))",
    ),
    OpDef(
        name="itof", since="13.1", opcode=0x3b,
        summary="Converts integer elements to floats.",
        operands=(OperandDef("from", INT_TILE, doc="Integer tile to convert."),),
        attributes=(SIGNEDNESS, ROUNDING_MODE),
        results=(ResultDef("to", FLOAT_TILE, doc="Float tile of the same shape."),),
        traits=("Pure", "AllShapesMatch<from, to>"),
        format="$from custom<Signedness>($signedness) custom<IEEERoundingMode>($rounding_mode) attr-dict `:` custom<CudaTileType>(type($from)) `->` custom<CudaTileType>(type($to))",
    ),
    OpDef(
        name="load_view_tko", since="13.1", opcode=0x3e,
        summary="Loads one tile from a tile view at a tile index (token-ordered).",
        operands=(
            OperandDef("view", TILE_VIEW, doc="Tile view to read from."),
            OperandDef("index", variadic_of(INT_TILE), "variadic", doc="Position of the tile in the view's tile grid, one scalar per dimension."),
            OperandDef("token", TOKEN, "optional", doc="Optional token this read must be ordered after."),
        ),
        attributes=(*_memory_ordering("weak, relaxed, acquire"), OPTIMIZATION_HINTS, INBOUNDS),
        results=(
            ResultDef("tile", ANY_TILE, doc="Loaded tile, shaped as the view's tile."),
            ResultDef("result_token", TOKEN, doc="Token that completes once the read has happened."),
        ),
        traits=("AttrSizedOperandSegments",),
        format=None,
        type_inference={"token": "token"},
    ),
    OpDef(
        name="load_ptr_tko", since="13.1", opcode=0x3d,
        summary="Gathers a tile from memory through a tile of pointers (token-ordered).",
        operands=(
            OperandDef("source", PTR_TILE, doc="Where to read, one pointer per element."),
            OperandDef("mask", I1_TILE, "optional", doc="Optional i1 tile; false elements are not read."),
            OperandDef("paddingValue", NUMBER_TILE, "optional", doc="Optional value used for masked-off elements."),
            OperandDef("token", TOKEN, "optional", doc="Optional token this read must be ordered after."),
        ),
        attributes=(*_memory_ordering("weak, relaxed, acquire"), OPTIMIZATION_HINTS),
        results=(
            ResultDef("result", ANY_TILE, doc="Values read (or padding)."),
            ResultDef("result_token", TOKEN, doc="Token that completes once the read has happened."),
        ),
        traits=("AttrSizedOperandSegments", "TypesMatchWith<result, source, ptr_like>", "OptionalTypesMatchWith<source, mask, same_shape>", "OptionalTypesMatchWith<result, paddingValue, identity>"),
        format="$memory_ordering_semantics ($memory_scope^)? $source (`,` $mask^)? (`,` $paddingValue^)? (`token` `` `=` `` $token^)? (`optimization_hints` `=` $optimization_hints^)? attr-dict `:` custom<CudaTileType>(type($source)) (`,` custom<CudaTileType>(type($mask))^)? (`,` custom<CudaTileType>(type($paddingValue))^)? `->` custom<CudaTileType>(type($result)) `,` custom<CudaTileType>(type($result_token))",
        type_inference={"token": "token"},
    ),
    _elementwise_unary("log", "13.1", 0x3f, BASE_FLOAT_TILE, "Natural logarithm of each element of a float tile.",
                       result_doc="Natural logarithm of each element."),
    _elementwise_unary("log2", "13.1", 0x40, BASE_FLOAT_TILE, "Base-2 logarithm of each element of a float tile.",
                       result_doc="Base-2 logarithm of each element."),
    OpDef(
        name="loop", since="13.1", opcode=0x41,
        summary="Loop that repeats until a break, with loop-carried values.",
        operands=(OperandDef("initValues", variadic_of(ANY), "variadic", doc="Starting values of the loop-carried variables."),),
        results=(ResultDef("resultValues", variadic_of(ANY), "variadic", doc="Values handed over by the `break` that ends the loop."),),
        regions=(RegionDef("region", "single_block"),),
        traits=("AutomaticAllocationScope", "OpAsmOpInterface", "RecursiveMemoryEffects", "SingleBlockImplicitTerminator<continue|break>"),
        format=None,
    ),
    OpDef(
        name="make_tensor_view", since="13.1", opcode=0x43,
        summary="Builds a tensor view with a shape and strides over a global memory pointer.",
        operands=(
            OperandDef("base", SCALAR_PTR_TILE, doc="Scalar pointer to the first element in global memory."),
            OperandDef("dynamicShape", variadic_of(SCALAR_INT_TILE), "variadic", doc="Extents written as `?` in the view type, in order."),
            OperandDef("dynamicStrides", variadic_of(SCALAR_INT_TILE), "variadic", doc="Strides written as `?` in the view type, in order."),
        ),
        results=(ResultDef("result", TENSOR_VIEW, doc="New tensor view over that memory."),),
        traits=("AttrSizedOperandSegments", "NoMemoryEffect", "OpAsmOpInterface"),
        format=None,
        type_inference={"base": "scalar_ptr_to_elem(result)"},
    ),
    _elementwise_binary("maxf", "13.1", 0x45, BASE_FLOAT_TILE, "Element-wise maximum of two float tiles.",
                        result_doc="Element-wise larger of lhs and rhs.", attributes=(PROPAGATE_NAN, FLUSH_TO_ZERO),
                        format=BINARY_NAN_FORMAT),
    _elementwise_binary("maxi", "13.1", 0x46, INT_TILE, "Element-wise maximum of two integer tiles.",
                        result_doc="Element-wise larger of lhs and rhs under the chosen signedness.",
                        attributes=(SIGNEDNESS,), format=BINARY_SIGNEDNESS_FORMAT),
    _elementwise_binary("minf", "13.1", 0x47, BASE_FLOAT_TILE, "Element-wise minimum of two float tiles.",
                        result_doc="Element-wise smaller of lhs and rhs.", attributes=(PROPAGATE_NAN, FLUSH_TO_ZERO),
                        format=BINARY_NAN_FORMAT),
    _elementwise_binary("mini", "13.1", 0x48, INT_TILE, "Element-wise minimum of two integer tiles.",
                        result_doc="Element-wise smaller of lhs and rhs under the chosen signedness.",
                        attributes=(SIGNEDNESS,), format=BINARY_SIGNEDNESS_FORMAT),
    OpDef(
        name="module", since="13.1", opcode=0x4b,
        summary="Top-level container of kernels and globals.",
        attributes=(
            AttrDef("sym_name", "symbol_name", doc="Module name."),
            AttrDef("producer", "string", optional=True, doc="Free-form name of the tool that produced the module.", since="13.3"),
        ),
        regions=(RegionDef("body", "max_one_block"),),
        traits=("IsolatedFromAbove", "OpAsmOpInterface", "NoRegionArguments", "SingleBlock", "SymbolTable", "NoTerminator", "RegionKindInterface", "HasOnlyGraphRegion"),
        format="$sym_name attr-dict-with-keyword $body",
    ),
    _elementwise_binary("mulf", "13.1", 0x4c, BASE_FLOAT_TILE, "Multiplies two float tiles element by element.",
                        result_doc="Element-wise lhs * rhs.", attributes=(ROUNDING_MODE, FLUSH_TO_ZERO),
                        format=BINARY_ROUNDING_FORMAT),
    _elementwise_binary("muli", "13.1", 0x4e, INT_TILE,
                        "Multiplies two integer tiles element by element (low half of the product).",
                        result_doc="Low `width` bits of lhs * rhs per element.", attributes=(OVERFLOW,),
                        format=BINARY_OVERFLOW_FORMAT),
    OpDef(
        name="mulhii", since="13.1", opcode=0x4d,
        summary="High half of the double-width product of two integer tiles, element by element.",
        operands=(
            OperandDef("x", INT_TILE, doc="First factor."),
            OperandDef("y", INT_TILE, doc="Second factor; same type as `x`."),
        ),
        results=(ResultDef("result", INT_TILE, doc="Upper `width` bits of x * y per element."),),
        traits=("Pure", "AllTypesMatch<x, y, result>"),
        format="$x `,` $y attr-dict `:` custom<CudaTileType>(type($result))",
        type_inference={"x": "result", "y": "result"},
    ),
    _elementwise_unary("negi", "13.1", 0x50, INT_TILE, "Negates each element of an integer tile.",
                       result_doc="-x for each element x (two's complement).",
                       attributes=(AttrDef("overflow", "enum:IntegerOverflow", optional=True, default="none", doc="Wrap-around promise the compiler may exploit (`none` makes no promise).", since="13.2"),),
                       format="$source (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($result))"),
    _elementwise_unary("negf", "13.1", 0x4f, BASE_FLOAT_TILE, "Negates each element of a float tile.",
                       result_doc="-x for each element x."),
    OpDef(
        name="make_token", since="13.1", opcode=0x44,
        summary="Creates a fresh ordering token that depends on nothing.",
        results=(ResultDef("result", TOKEN, doc="Token with no dependencies."),),
        traits=("Pure",),
        format="attr-dict `:` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="offset", since="13.1", opcode=0x51,
        summary="Advances each pointer of a tile by a number of pointee elements.",
        operands=(
            OperandDef("ptr", PTR_TILE, doc="Starting pointers."),
            OperandDef("offset", INT_TILE, doc="Element counts to move each pointer by."),
        ),
        results=(ResultDef("result", PTR_TILE, doc="Moved pointers."),),
        traits=("Pure", "Elementwise", "SameOperandsAndResultShape", "AllTypesMatch<result, ptr>"),
        format="$ptr `,` $offset attr-dict `:` custom<CudaTileType>(type($ptr)) `,` custom<CudaTileType>(type($offset)) `->` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="pack", since="13.3", opcode=0x6f,
        summary="Packs the elements of a tile densely into a tile of bytes.",
        operands=(OperandDef("source", NUMBER_OR_I4_TILE, doc="Rank-1 tile whose elements are packed."),),
        results=(ResultDef("result", I8_TILE, doc="Rank-1 i8 tile holding the packed bits."),),
        traits=("Pure", "AllRanksMatch<source, result>"),
        format="$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="permute", since="13.1", opcode=0x53,
        summary="Reorders the dimensions of a tile.",
        operands=(OperandDef("source", ANY_TILE, doc="Tile to transpose."),),
        attributes=(AttrDef("permutation", "dense_i32_array", doc="Result dimension i takes source dimension permutation[i]."),),
        results=(ResultDef("result", ANY_TILE, doc="Tile with reordered dimensions."),),
        traits=("Pure", "AllElementTypeMatch<source, result>", "AllRanksMatch<source, result>"),
        format="$source $permutation attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
    ),
    _float_power("pow", "13.1", 0x54, "Element-wise float power: base raised to exponent."),
    OpDef(
        name="print_tko", since="13.1", opcode=0x55,
        summary="Prints a printf-style message with tile arguments (token-ordered).",
        operands=(
            OperandDef("args", variadic_of(ANY_TILE), "variadic", doc="Tiles formatted by the `%` specifiers of `str`."),
            OperandDef("token", TOKEN, "optional", doc="Optional token the print must be ordered after.", since="13.2"),
        ),
        attributes=(AttrDef("str", "string", doc="printf-style format text."),),
        results=(ResultDef("result_token", TOKEN, doc="Token that completes once the text is printed.", since="13.2"),),
        traits=("AttrSizedOperandSegments",),
        format="$str (`,` $args^)? (`token` `` `=` `` $token^)? attr-dict (`:` custom<CudaTileType>(type($args))^)? `->` custom<CudaTileType>(type($result_token))",
        type_inference={"token": "token"},
    ),
    OpDef(
        name="ptr_to_int", since="13.1", opcode=0x56,
        summary="Reinterprets pointers as i64 values.",
        operands=(OperandDef("source", PTR_TILE, doc="Pointers to read as numbers."),),
        results=(ResultDef("result", I64_TILE, doc="Their addresses as i64."),),
        traits=("Pure", "AllShapesMatch<source, result>"),
        format="$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="ptr_to_ptr", since="13.1", opcode=0x57,
        summary="Changes the pointee type of a tile of pointers.",
        operands=(OperandDef("source", PTR_TILE, doc="Pointers to retype."),),
        results=(ResultDef("result", PTR_TILE, doc="Same addresses with the new pointee type."),),
        traits=("Pure", "AllShapesMatch<source, result>"),
        format="$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="reduce", since="13.1", opcode=0x58,
        summary="Reduces tiles along one dimension with a combining region.",
        operands=(OperandDef("operands", variadic_of(ANY_TILE), "variadic", doc="Tiles reduced together (same shape)."),),
        attributes=(
            AttrDef("dim", "i32", doc="Dimension that is reduced away."),
            AttrDef("identities", "array", doc="Identity value of the combining region, one per operand tile."),
        ),
        results=(ResultDef("results", variadic_of(ANY_TILE), "variadic", doc="Reduced tiles, one per operand, without `dim`."),),
        regions=(RegionDef("body", "single_block"),),
        traits=("InferTypeOpAdaptor", "OpAsmOpInterface", "RecursiveMemoryEffects", "SameOperandsShape", "SingleBlockImplicitTerminator<yield>"),
        format="$operands attr-dict ` ` `dim` `` `=` `` $dim `identities` `` `=` `` $identities `:` custom<CudaTileType>(type($operands)) `->` custom<CudaTileType>(type($results)) custom<ArgumentRegion>($body)",
    ),
    _elementwise_binary("remi", "13.1", 0x5a, INT_TILE, "Remainder of dividing two integer tiles, element by element.",
                        result_doc="Element-wise integer remainder of lhs / rhs.", operand_docs=DIVISION_DOCS,
                        attributes=(SIGNEDNESS,), format=BINARY_SIGNEDNESS_FORMAT,
                        traits=("Pure", "AllTypesMatch<result, lhs, rhs>", "AllShapesMatch<result, lhs, rhs>")),
    OpDef(
        name="reshape", since="13.1", opcode=0x5b,
        summary="Gives a tile a new shape with the same number of elements.",
        operands=(OperandDef("source", ANY_TILE, doc="Tile to reshape."),),
        results=(ResultDef("result", ANY_TILE, doc="Same elements in row-major order, new shape."),),
        traits=("Pure", "SameOperandsAndResultElementType", "OpAsmOpInterface"),
        format="$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
    ),
    OpDef(
        name="return", since="13.1", opcode=0x5c,
        summary="Returns from a kernel (or from an if region nested in one).",
        operands=(OperandDef("operands", variadic_of(ANY), "variadic", doc="Values returned to the caller (kernels return none)."),),
        traits=("ParentOneOf<entry, if, testing$func>", "ReturnLike", "Terminator"),
        format="attr-dict ($operands^ `:` custom<CudaTileType>(type($operands)))?",
    ),
    OpDef(
        name="scan", since="13.1", opcode=0x5e,
        summary="Prefix scan of tiles along one dimension with a combining region.",
        operands=(OperandDef("operands", variadic_of(ANY_TILE), "variadic", doc="Tiles scanned together (same shape)."),),
        attributes=(
            AttrDef("dim", "i32", doc="Dimension along which prefixes are combined."),
            AttrDef("reverse", "bool", doc="When true, prefixes run from the last element to the first."),
            AttrDef("identities", "array", doc="Identity value of the combining region, one per operand tile."),
        ),
        results=(ResultDef("results", variadic_of(ANY_TILE), "variadic", doc="Running combinations, one tile per operand, same shape."),),
        regions=(RegionDef("body", "single_block"),),
        traits=("InferTypeOpAdaptor", "OpAsmOpInterface", "RecursiveMemoryEffects", "SameOperandsShape", "SingleBlockImplicitTerminator<yield>"),
        format="$operands attr-dict ` ` `dim` `` `=` `` $dim `reverse` `` `=` `` $reverse `identities` `` `=` `` $identities `:` custom<CudaTileType>(type($operands)) `->` custom<CudaTileType>(type($results)) custom<ArgumentRegion>($body)",
    ),
    OpDef(
        name="select", since="13.1", opcode=0x5f,
        summary="Picks each element from one of two tiles according to an i1 condition tile.",
        operands=(
            OperandDef("cond", I1_TILE, doc="i1 tile choosing per element."),
            OperandDef("val_if_true", ANY_TILE, doc="Element taken where `cond` is true."),
            OperandDef("val_if_false", ANY_TILE, doc="Element taken where `cond` is false."),
        ),
        results=(ResultDef("result", ANY_TILE, doc="Chosen elements."),),
        traits=("Pure", "AllTypesMatch<val_if_true, val_if_false, result>", "AllShapesMatch<cond, val_if_true, val_if_false, result>"),
        format="$cond `,` $val_if_true `,` $val_if_false attr-dict `:` custom<CudaTileType>(type($cond)) `,` custom<CudaTileType>(type($result))",
        type_inference={"val_if_true": "result", "val_if_false": "result"},
    ),
    _elementwise_binary("shli", "13.1", 0x60, INT_TILE, "Shifts integer elements left.",
                        result_doc="lhs shifted left by rhs bits, per element.", operand_docs=SHIFT_DOCS,
                        attributes=(OVERFLOW,), format=BINARY_OVERFLOW_FORMAT),
    _elementwise_binary("shri", "13.1", 0x61, INT_TILE, "Shifts integer elements right (arithmetic or logical).",
                        result_doc="lhs shifted right by rhs bits, per element.", operand_docs=SHIFT_DOCS,
                        attributes=(SIGNEDNESS,), format=BINARY_SIGNEDNESS_FORMAT),
    _elementwise_unary("sin", "13.1", 0x62, BASE_FLOAT_TILE, "Sine of each element of a float tile (radians).",
                       result_doc="sin(x) per element (radians)."),
    _elementwise_unary("sinh", "13.1", 0x63, BASE_FLOAT_TILE, "Hyperbolic sine of each element of a float tile.",
                       result_doc="sinh(x) per element."),
    OpDef(
        name="store_ptr_tko", since="13.1", opcode=0x65,
        summary="Scatters a tile to memory through a tile of pointers (token-ordered).",
        operands=(
            OperandDef("destination", PTR_TILE, doc="Where to write, one pointer per element."),
            OperandDef("value", ANY_TILE, doc="Values to write."),
            OperandDef("mask", I1_TILE, "optional", doc="Optional i1 tile; false elements are not written."),
            OperandDef("token", TOKEN, "optional", doc="Optional token this write must be ordered after."),
        ),
        attributes=(*_memory_ordering("weak, relaxed, release"), OPTIMIZATION_HINTS),
        results=(ResultDef("result_token", TOKEN, doc="Token that completes once the write has happened."),),
        traits=("AttrSizedOperandSegments", "TypesMatchWith<value, destination, ptr_like>", "OptionalTypesMatchWith<mask, destination, same_shape>"),
        format="$memory_ordering_semantics ($memory_scope^)? $destination `,` $value (`,` $mask^)? (`token` `` `=` `` $token^)? (`optimization_hints` `=` $optimization_hints^)? attr-dict `:` custom<CudaTileType>(type($destination)) `,` custom<CudaTileType>(type($value)) (`,` custom<CudaTileType>(type($mask))^)? `->` custom<CudaTileType>(type($result_token))",
        type_inference={"token": "token"},
    ),
    OpDef(
        name="store_view_tko", since="13.1", opcode=0x66,
        summary="Stores one tile into a tile view at a tile index (token-ordered).",
        operands=(
            OperandDef("tile", ANY_TILE, doc="Tile to write."),
            OperandDef("view", TILE_VIEW, doc="Tile view to write into."),
            OperandDef("index", variadic_of(INT_TILE), "variadic", doc="Position of the target tile in the view's tile grid, one scalar per dimension."),
            OperandDef("token", TOKEN, "optional", doc="Optional token this write must be ordered after."),
        ),
        attributes=(*_memory_ordering("weak, relaxed, release"), OPTIMIZATION_HINTS, INBOUNDS),
        results=(ResultDef("result_token", TOKEN, doc="Token that completes once the write has happened."),),
        traits=("AttrSizedOperandSegments",),
        format=None,
        type_inference={"token": "token"},
    ),
    _elementwise_binary("subf", "13.1", 0x67, BASE_FLOAT_TILE, "Subtracts two float tiles element by element.",
                        result_doc="Element-wise lhs - rhs.", attributes=(ROUNDING_MODE, FLUSH_TO_ZERO),
                        format=BINARY_ROUNDING_FORMAT),
    _elementwise_binary("subi", "13.1", 0x68, INT_TILE, "Subtracts two integer tiles element by element.",
                        result_doc="Element-wise lhs - rhs (wraps modulo 2^width).", attributes=(OVERFLOW,),
                        format=BINARY_OVERFLOW_FORMAT),
    _elementwise_unary("tan", "13.1", 0x69, BASE_FLOAT_TILE, "Tangent of each element of a float tile (radians).",
                       result_doc="tan(x) per element (radians)."),
    _elementwise_unary("tanh", "13.1", 0x6a, BASE_FLOAT_TILE, "Hyperbolic tangent of each element of a float tile.",
                       result_doc="tanh(x) per element.",
                       attributes=(AttrDef("rounding_mode", "enum:RoundingMode", optional=True, default="full", doc="Rounding applied to the result; `rounding<mode>` in the text, full when left out.", since="13.2"),),
                       format="$source custom<TanHOpRoundingMode>($rounding_mode) attr-dict `:` custom<CudaTileType>(type($result))"),
    OpDef(
        name="unpack", since="13.3", opcode=0x70,
        summary="Unpacks a tile of bytes into a tile of another element type.",
        operands=(OperandDef("source", I8_TILE, doc="Rank-1 i8 tile of packed bits."),),
        results=(ResultDef("result", NUMBER_OR_I4_TILE, doc="Rank-1 tile of the unpacked elements."),),
        traits=("Pure", "AllRanksMatch<source, result>"),
        format="$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))",
    ),
    _tile_view_op("make_partition_view", "13.1", 0x42, PARTITION_VIEW,
                  "Splits a tensor view into a grid of equally sized, non-overlapping tiles.",
                  result_doc="Partition view over it."),
    _tile_view_op("make_strided_view", "13.3", 0x74, STRIDED_VIEW,
                  "Views a tensor view as tiles placed at a chosen traversal stride.",
                  result_doc="Strided view over it."),
    _tile_view_op("make_gather_scatter_view", "13.3", 0x73, GATHER_SCATTER_VIEW,
                  "Views a tensor view as tiles whose one dimension is gathered or scattered by indices.",
                  result_doc="Gather/scatter view over it.", tensor_view_since="13.1"),
    _elementwise_binary("xori", "13.1", 0x6c, INT_TILE, "Bitwise exclusive OR of two integer tiles, element by element.",
                        result_doc="Element-wise lhs ^ rhs."),
    OpDef(
        name="yield", since="13.1", opcode=0x6d,
        summary="Hands values from a region back to its parent op.",
        operands=(OperandDef("operands", variadic_of(CUDA_TILE_ANY), "variadic", doc="Values handed to the parent op (its results or next iteration)."),),
        traits=("Pure", "ReturnLike", "Terminator", "ParentOneOf<if, reduce, scan>"),
        format="attr-dict ($operands^ `:` custom<CudaTileType>(type($operands)))?",
    ),
    _elementwise_binary("ori", "13.1", 0x52, INT_TILE, "Bitwise OR of two integer tiles, element by element.",
                        result_doc="Element-wise lhs | rhs."),
    _elementwise_binary("remf", "13.1", 0x59, BASE_FLOAT_TILE, "Element-wise float remainder.",
                        result_doc="Element-wise float remainder of lhs / rhs, sign of lhs.",
                        operand_docs=DIVISION_DOCS),
    _elementwise_unary("rsqrt", "13.1", 0x5d, BASE_FLOAT_TILE, "One over the square root of each element of a float tile.",
                       result_doc="1 / sqrt(x) for each element x.", attributes=(FLUSH_TO_ZERO,),
                       format=UNARY_FTZ_FORMAT),
    _elementwise_unary("sqrt", "13.1", 0x64, BASE_FLOAT_TILE, "Square root of each element of a float tile.",
                       result_doc="sqrt(x) for each element x.", attributes=(ROUNDING_MODE, FLUSH_TO_ZERO),
                       format="$source custom<SqrtOpRoundingMode>($rounding_mode) (`flush_to_zero` $flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"),
    # -----------------------------------------------------------------------
    # Testing ops (TestingOps.td, builds with TILE_IR_INCLUDE_TESTS).  Their
    # version strings are testing versions, not Tile IR releases.
    # -----------------------------------------------------------------------
    OpDef(
        name="testing$func", since="250.0", opcode=0x3001,
        summary="Testing-only function op (an entry without hints) used by NVIDIA's tests.",
        attributes=(
            AttrDef("sym_name", "symbol_name", doc="Function name."),
            *FUNCTION_SIGNATURE,
        ),
        regions=(RegionDef("body", "single_block"),),
        traits=("IsolatedFromAbove", "FunctionOpInterface", "SingleBlock", "OpAsmOpInterface",
                "SingleBlockImplicitTerminator<return>"),
        format=None,
    ),
    OpDef(
        name="testing$bytecode_test_new_attribute", since="250.0", opcode=0x3000,
        summary="Testing-only op for bytecode versioning of added attributes.",
        attributes=(
            AttrDef("new_flag", "unit", optional=True, doc="Test flag introduced in testing version 250.1.", since="250.1"),
            AttrDef("new_param", "i32", optional=True, default="42", doc="Test integer (42 when absent) introduced in testing version 250.1.", since="250.1"),
        ),
        format="(`new_flag` $new_flag^)? (`new_param` `=` $new_param^)? attr-dict",
    ),
    OpDef(
        name="testing$bytecode_test_evolution", since="250.0", opcode=0x3002,
        summary="Testing-only op for bytecode versioning of evolving operands and attributes.",
        operands=(
            OperandDef("inputs", variadic_of(ANY_TILE), "variadic", doc="Test input tiles."),
            OperandDef("optional_token", TOKEN, "optional", doc="Optional test token introduced in 250.1.", since="250.1"),
        ),
        attributes=(
            AttrDef("new_attr", "i32", optional=True, doc="Optional test integer introduced in 250.1.", since="250.1"),
            AttrDef("priority", "enum:BytecodeTestPriority", optional=True, doc="Optional test enum value."),
            AttrDef("test_attr", "attr", optional=True, doc="Optional #cuda_tile.bytecode_test_value<N> attribute introduced in 250.1.", since="250.1"),
        ),
        results=(ResultDef("result_token", TOKEN, doc="Test token result introduced in 250.1.", since="250.1"),),
        traits=("AttrSizedOperandSegments",),
        format="`(` $inputs `:` type($inputs) `)` (`new_attr` `=` $new_attr^)? (`token` `=` $optional_token^ `:` "
               "custom<CudaTileType>(type($optional_token)))? (`priority` `=` $priority^)? (`test_attr` `=` "
               "$test_attr^)? `->` custom<CudaTileType>(type($result_token)) attr-dict",
    ),
    # -----------------------------------------------------------------------
    # Ops newer than the public repository (printed by tileirdisasm 13.5).
    # INFERRED from shared/corpus/kernels: names and printed syntax from the
    # .mlir texts; versions, opcodes, operand order and the absence of
    # attributes from their 13.4 bytecode (.tileirbc: header version 13.4,
    # opcodes above the 13.3 maximum 0x75).  Operand names, constraints and
    # traits are our best guess by analogy with the neighbouring public ops.
    # -----------------------------------------------------------------------
    OpDef(
        # INFERRED.  Printed: `insert %src, %dst[%i, %j] : tile<16x16xf32>, tile<32x32xf32>`.
        # Bytecode 0x76: result type, then operands in the order source, dest, indices...
        name="insert", since="13.4", opcode=0x76,
        summary="Writes a sub-tile into a copy of a larger tile at a position of its sub-tile grid.",
        operands=(
            OperandDef("source", ANY_TILE, doc="Smaller tile written into `dest` (INFERRED name)."),
            OperandDef("dest", ANY_TILE, doc="Tile that receives `source`; same type as the result (INFERRED name)."),
            OperandDef("indices", variadic_of(SCALAR_I32_TILE), "variadic",
                       doc="Position in the sub-tile grid of `dest`, one i32 scalar per dimension (INFERRED)."),
        ),
        results=(ResultDef("result", ANY_TILE, doc="Copy of `dest` with the sub-tile replaced."),),
        traits=("Pure", "AllTypesMatch<dest, result>", "AllRanksMatch<source, dest>"),  # INFERRED
        format="$source `,` $dest `[` $indices `]` attr-dict `:` custom<CudaTileType>(type($source)) `,` "
               "custom<CudaTileType>(type($dest))",
        type_inference={"result": "dest", "indices": "scalar_i32_tile"},
    ),
    # INFERRED.  The 13.5 printer's name for the op whose bytecode opcode is
    # 0x54, i.e. Ops.td's `pow` (see OP_ALIASES); printed
    # `fpowf %a, %b : tile<256xf32>`.  Operands, constraints and traits are
    # those of `pow`.  The version is the one of the rename as far as we can
    # tell (the op itself exists since 13.1).
    _float_power("fpowf", "13.4", 0x54, "Element-wise float power with a float exponent (13.5 spelling of pow)."),
    OpDef(
        # INFERRED.  Printed `fpowi %x, %n : tile<256xf32>, tile<256xi32>`; bytecode
        # 0x79 carries one result type and two operands, no attributes.  Only i32
        # exponents were observed; the exponent constraint is a guess.
        name="fpowi", since="13.4", opcode=0x79,
        summary="Element-wise float base raised to an integer exponent.",
        operands=(
            OperandDef("source", BASE_FLOAT_TILE, doc="Float base (INFERRED name)."),
            OperandDef("exponent", INT_TILE, doc="Integer power (INFERRED name; i32 seen)."),
        ),
        results=(ResultDef("result", BASE_FLOAT_TILE, doc="source ** exponent per element."),),
        traits=("Pure", "AllTypesMatch<source, result>", "AllShapesMatch<source, exponent, result>"),  # INFERRED
        format="$source `,` $exponent attr-dict `:` custom<CudaTileType>(type($source)) `,` "
               "custom<CudaTileType>(type($exponent))",
        type_inference={"result": "source"},
    ),
    OpDef(
        # INFERRED.  Grid dependency control (programmatic dependent launch).
        # Printed `gdc_wait_tko token = %t -> token`; bytecode 0x78: result type,
        # then one (optional) token operand.
        name="gdc_wait_tko", since="13.4", opcode=0x78,
        summary="Waits until the grids this kernel depends on allow it to proceed (token-ordered).",
        operands=(OperandDef("token", TOKEN, "optional", doc="Optional token the wait must be ordered after (INFERRED)."),),
        results=(ResultDef("result_token", TOKEN, doc="Token that completes once the wait is over."),),
        format="(`token` `=` $token^)? attr-dict `->` custom<CudaTileType>(type($result_token))",
        type_inference={"token": "token"},
    ),
    OpDef(
        # INFERRED.  Printed `gdc_launch_dependents_tko token = %t -> token`; bytecode 0x77.
        name="gdc_launch_dependents_tko", since="13.4", opcode=0x77,
        summary="Signals that grids depending on this kernel may start launching (token-ordered).",
        operands=(OperandDef("token", TOKEN, "optional", doc="Optional token the signal must be ordered after (INFERRED)."),),
        results=(ResultDef("result_token", TOKEN, doc="Token that completes once the signal is sent."),),
        format="(`token` `=` $token^)? attr-dict `->` custom<CudaTileType>(type($result_token))",
        type_inference={"token": "token"},
    ),
)

# ---------------------------------------------------------------------------
# Messages of the predicate traits whose wording is not the standard one
# ("failed to verify that all of {a, b} have same type|shape|rank").
# ---------------------------------------------------------------------------

TRAIT_MESSAGES: dict[str, dict[str, str]] = {
    "cat": {
        "AllElementTypeMatch<lhs, rhs, result>":
            "failed to verify that all of {lhs, rhs, result} have the same element type",
    },
    "cmpf": {
        "TypesMatchWith<lhs, result, i1_like>":
            "failed to verify that Result type has i1 element type and same shape as operands",
    },
    "cmpi": {
        "TypesMatchWith<lhs, result, i1_like>":
            "failed to verify that Result type has i1 element type and same shape as operands",
    },
    "mmaf": {
        "AllElementTypeMatch<lhs, rhs>":
            "failed to verify that all of {lhs, rhs} have the same element type",
    },
    "mmaf_scaled": {
        "AllElementTypeMatch<lhs, rhs>":
            "failed to verify that all of {lhs, rhs} have the same element type",
        "AllElementTypeMatch<lhs_scale, rhs_scale>":
            "failed to verify that all of {lhs_scale, rhs_scale} have the same element type",
    },
    "mmai": {
        "AllElementTypeMatch<lhs, rhs>":
            "failed to verify that all of {lhs, rhs} have the same element type",
    },
    "load_ptr_tko": {
        "TypesMatchWith<result, source, ptr_like>":
            "failed to verify that `source` type is expected a pointer type of `result` type",
        "OptionalTypesMatchWith<source, mask, same_shape>":
            "failed to verify that shape of 'mask' must match the shape of 'source'",
        "OptionalTypesMatchWith<result, paddingValue, identity>":
            "failed to verify that type of 'paddingValue' must match the type of 'result'",
    },
    "permute": {
        "AllElementTypeMatch<source, result>":
            "failed to verify that all of {source, result} have the same element type",
    },
    "store_ptr_tko": {
        "TypesMatchWith<value, destination, ptr_like>":
            "failed to verify that `destination` type is expected a pointer type of `value` type",
        "OptionalTypesMatchWith<mask, destination, same_shape>":
            "failed to verify that shape of 'destination' must match the shape of 'mask'",
    },
}

# ---------------------------------------------------------------------------
# Ops with a C++ parser/printer (format None): their syntax
# ---------------------------------------------------------------------------
# Notation: 'x' a literal keyword or punctuation; %name an SSA value bound to
# the operand `name`; @name a symbol; TYPE(x) a type read with parseCudaTileType
# (the CudaTileType directive) giving the type of x; [ ... ] optional;
# ( ... )* zero or more; ( ... )+ one or more; A | B alternatives;
# ATTR-DICT an optional `{...}` attribute dictionary; ATTR-DICT-KW an
# optional `attributes {...}`; REGION an MLIR region `{ ... }`.
# "print" gives the exact text the printer writes after the op name (MLIR
# writes the op name itself, preceded by `%results = `).  Parser error texts
# are prefixed by MLIR with "custom op 'cuda_tile.<op>' " when reported.

_MEMSEM_LOAD_STORE = """\
  MEMSEM := bare keyword, memory_ordering_semantics: weak | relaxed | acquire | release | acq_rel
  SCOPE  := bare keyword, memory_scope: tl_blk | device | sys.  Taken as a scope only when a bare
            keyword follows MEMSEM (the next operand starts with '%').
  INDEX_TYPES := TYPE                   one type for every index ("splat")
               | TYPE (',' TYPE)+       one type per index, in order
  OPT_HINTS := the OptHints directive (tile_lsp/analysis/ir/directives.py)"""

_MEMSEM_ERRORS = """\
  unknown MEMSEM: 'invalid memory_ordering_semantics attribute specification. Got "<kw>" but expect one of: weak, relaxed, acquire, release, acq_rel'
  no keyword at all: 'expected valid keyword', then the message above with Got "" (same location)
  MEMSEM weak followed by a keyword: 'operation specifies weak memory ordering semantics, but then provides "<kw>" scope, expected no memory scope.'
  unknown SCOPE: 'invalid memory_scope attribute specification. Got "<kw>" but expect one of: tl_blk, device, sys'"""

_INDEX_ERRORS = """\
  ',' after the view type but no type: 'expected index type after comma'
  indices present, no index types: 'index types must be specified when indices are present'
  several index types, count != number of indices: 'expected <n> index types, got <m>'"""

CUSTOM_SYNTAX: dict[str, str] = {
    "load_view_tko": f"""\
syntax:
  MEMSEM [SCOPE] %view '[' [%index (',' %index)*] ']'
      ['token' '=' %token]
      ['inbounds' '=' '[' BOOL (',' BOOL)* ']']            (13.4+, INFERRED; see notes)
      ['optimization_hints' '=' OPT_HINTS]
      ATTR-DICT-KW
      ':' TYPE(view) [',' INDEX_TYPES] '->' TYPE(tile) ',' TYPE(result_token)
{_MEMSEM_LOAD_STORE}
print:
  ' ' MEMSEM [' ' SCOPE] ' ' %view '[' indices joined by ', ' ']' [' token = ' %token]
  [' optimization_hints = ' OPT_HINTS] [' attributes {{...}}' of the attributes other than
  memory_ordering_semantics, memory_scope, optimization_hints, operandSegmentSizes]
  ' : ' TYPE(view) [', ' T when all index types equal T | (', ' T_i) for each index]
  ' -> ' TYPE(tile) ', ' TYPE(result_token)
  Example (13.5): `load_view_tko weak %pv[%i, %j] token = %t : partition_view<...>, tile<i32> -> tile<16x16xf32>, token`
types: view, index, tile and result_token types are written; token is !cuda_tile.token.
errors:
{_MEMSEM_ERRORS}
{_INDEX_ERRORS}
notes:
  inbounds (INFERRED from 13.4 bytecode and 13.5 text): a bool per index dimension, stored even
  when all false; 13.5 prints `inbounds = [true]` right after the token clause when a flag is
  set (observed without optimization_hints only, so their relative order is unknown).
  The verifier (not the parser) restricts MEMSEM to weak, relaxed, acquire.""",

    "store_view_tko": f"""\
syntax:
  MEMSEM [SCOPE] %tile ',' %view '[' [%index (',' %index)*] ']'
      ['token' '=' %token]
      ['inbounds' '=' '[' BOOL (',' BOOL)* ']']            (13.4+, INFERRED; see notes)
      ['optimization_hints' '=' OPT_HINTS]
      ATTR-DICT-KW
      ':' TYPE(tile) ',' TYPE(view) [',' INDEX_TYPES] '->' TYPE(result_token)
{_MEMSEM_LOAD_STORE}
print:
  ' ' MEMSEM [' ' SCOPE] ' ' %tile ', ' %view '[' indices joined by ', ' ']' [' token = ' %token]
  [' optimization_hints = ' OPT_HINTS] [' attributes {{...}}' (same elisions as load_view_tko)]
  ' : ' TYPE(tile) ', ' TYPE(view) [index types as for load_view_tko] ' -> ' TYPE(result_token)
  Example (13.5): `store_view_tko weak %v, %pv[%i] token = %t : tile<256xf32>, partition_view<...>, tile<i32> -> token`
types: tile, view, index and result_token types are written; token is !cuda_tile.token.
errors:
{_MEMSEM_ERRORS}
{_INDEX_ERRORS}
notes:
  inbounds (INFERRED): the 13.4 bytecode of store_view_tko carries the same per-dimension flag
  array as load_view_tko; no printed store with a set flag was observed.
  The verifier restricts MEMSEM to weak, relaxed, release.""",

    "atomic_red_view_tko": f"""\
syntax:
  MEMSEM [SCOPE] %view '[' [%index (',' %index)*] ']' ',' MODE ',' %value
      ['token' '=' %token] ATTR-DICT-KW
      ':' TYPE(value) ',' TYPE(view) [',' INDEX_TYPES] '->' TYPE(result_token)
{_MEMSEM_LOAD_STORE}
  MODE := bare keyword, mode (AtomicRMWMode): and | or | xor | add | addf | max | min | umax | umin | xchg
print:
  ' ' MEMSEM [' ' SCOPE] ' ' %view '[' indices joined by ', ' ']' ', ' MODE ', ' %value
  [' token = ' %token] [' attributes {{...}}' without memory_ordering_semantics, memory_scope,
  mode, operandSegmentSizes] ' : ' TYPE(value) ', ' TYPE(view) [index types as for
  load_view_tko] ' -> ' TYPE(result_token)
  Example: `atomic_red_view_tko relaxed device %pv[%c0, %c0], add, %v token = %t : tile<2x2xi32>, partition_view<...>, tile<i32> -> token`
types: value, view, index and result_token types are written; token is !cuda_tile.token.
errors (this parser has its own wording):
  no keyword where MEMSEM or MODE is expected: 'expected valid keyword' (only that)
  unknown MEMSEM: "invalid memory_ordering_semantics: '<kw>'; expected one of: weak, relaxed, acquire, release, acq_rel"
  unknown SCOPE: "invalid memory_scope: '<kw>'; expected one of: tl_blk, device, sys"
  unknown MODE: "unknown atomic RMW mode: '<kw>'; expected one of: and, or, xor, add, addf, max, min, umax, umin"
{_INDEX_ERRORS}
notes:
  No weak-plus-scope check at parse time.  The verifier restricts MEMSEM to relaxed, SCOPE to
  tl_blk/device and MODE to everything but xchg.""",

    "get_tensor_shape": """\
syntax:
  %src ':' TYPE(src) '->' TYPE
print:
  ' ' %src ' : ' TYPE(src) ' -> ' TYPE(result#0)
  Example: `%0:2 = get_tensor_shape %tv : tensor_view<64x64xi32, strides=[1,1]> -> tile<i32>`
types: the op has one result per dimension of the tensor_view TYPE(src), each of type TYPE.
errors:
  TYPE(src) not a tensor_view: 'expected tensor_view, got <type>' (at the type)
notes:
  No attribute dictionary is parsed or printed.""",

    "get_index_space_shape": """\
syntax:
  %src ':' TYPE(src) '->' TYPE
print:
  ' ' %src ' : ' TYPE(src) ' -> ' TYPE(result#0)
  Example: `%0:3 = get_index_space_shape %pv : partition_view<tile=(8x1x16), tensor_view<...>> -> tile<i64>`
types: one result per index dimension of the view TYPE(src) (partition, strided or
  gather/scatter view: the rank of its tensor_view), each of type TYPE.
errors:
  TYPE(src) not a tile view: 'expected tile view, got <type>' (at the type)
notes:
  No attribute dictionary is parsed or printed.""",

    "make_tensor_view": """\
syntax:
  %base ',' 'shape' '=' '[' [ELEM (',' ELEM)*] ']' ',' 'strides' '=' '[' [ELEM (',' ELEM)*] ']'
      ATTR-DICT ':' [TYPE '->'] TYPE(result)
  ELEM := integer            a static size/stride (must equal the tensor_view type's entry)
        | %value             a dynamic size/stride (the type's entry must be '?'); the values of
                             'shape' become dynamicShape, those of 'strides' dynamicStrides, in order
  The 'TYPE ->' part is present exactly when there is at least one dynamic value; TYPE is the
  type of every dynamic value.
print:
  ' ' %base ', shape = [' entries joined by ', ' ']' ', strides = [' entries joined by ', ' ']'
  [' {...}' attributes without operandSegmentSizes] ' : ' [TYPE(first dynamic value) ' -> ']
  TYPE(result)
  Example: `make_tensor_view %p, shape = [%n, 64], strides = [64, 1] : tile<i32> -> tensor_view<?x64xf32, strides=[64,1]>`
types: base is tile<ptr<E>> (0-d) with E the element type of the result tensor_view.
errors:
  ELEM neither integer nor value: 'expected either integer or SSA value'
  result type not a tensor_view: "expected 'tensor_view' type, but got <type>"
  list length != rank: 'expected shape declaration to contain <r> elements due to tensor_view type, but <n> were provided'
    (same with 'stride declaration')
  entry mismatch: 'input shape dimension <i> does not match tensor_view type (expected <dynamic|N>, got <dynamic|N>)'
    (same with 'input stride dimension')""",

    "make_partition_view": """\
syntax:
  %tensor_view ATTR-DICT ':' TYPE(result)
print:
  ' ' %tensor_view [' {...}'] ' : ' TYPE(result)
  Example: `make_partition_view %tv : partition_view<tile=(256), tensor_view<?xf32, strides=[?]>>`
types: the operand's type is the tensor_view parameter of TYPE(result).
errors:
  TYPE(result) not a partition_view: "expected 'partition_view' type, but got <type>\"""",

    "make_strided_view": """\
syntax:
  %tensor_view ATTR-DICT ':' TYPE(result)
print:
  ' ' %tensor_view [' {...}'] ' : ' TYPE(result)
types: the operand's type is the tensor_view parameter of TYPE(result).
errors:
  TYPE(result) not a strided_view: "expected 'strided_view' type, but got <type>\"""",

    "make_gather_scatter_view": """\
syntax:
  %tensor_view ATTR-DICT ':' TYPE(result)
print:
  ' ' %tensor_view [' {...}'] ' : ' TYPE(result)
types: the operand's type is the tensor_view parameter of TYPE(result).
errors:
  TYPE(result) not a gather_scatter_view: "expected 'gather_scatter_view' type, but got <type>\"""",

    "for": """\
syntax:
  ['unsigned'] %iv 'in' '(' %lowerBound 'to' %upperBound ',' 'step' %step ')' ':' TYPE
      ['iter_values' '(' %arg '=' %initValue (',' %arg '=' %initValue)* ')'
       '->' '(' TYPE (',' TYPE)* ')']
      REGION ATTR-DICT
  'unsigned' sets the unit attribute unsignedCmp.  %iv and the %arg names are the region's block
  arguments (not written in the region header).
print:
  [' unsigned'] ' ' %iv ' in (' %lowerBound ' to ' %upperBound ', step ' %step ') : ' TYPE ' '
  ['iter_values(' (%arg ' = ' %init) joined by ', ' ') -> (' result types joined by ', ' ') ']
  REGION [' {...}' attributes without unsignedCmp]
  Example: `%for = for %loopIdx in (%c0 to %c8, step %c1) : tile<i32> iter_values(%iterArg0 = %x) -> (tile<f32>) {`
types: lowerBound, upperBound, step and %iv have type TYPE; initValues, the %arg block arguments
  and the results have the parenthesized types, in order.
errors:
  number of iter_values != number of types: 'mismatch in number of loop-carried values and defined values' (at the op name)
notes:
  A block without terminator gets an implicit `continue`; the printer omits the terminator when
  it is a `continue` without operands.  Printer names: %loopIdx, %iterArg<i>, result %for.""",

    "loop": """\
syntax:
  [ 'iter_values' '(' %arg '=' %initValue (',' %arg '=' %initValue)* ')'
        ':' TYPE (',' TYPE)* ['->' TYPE (',' TYPE)*]
  | ':' TYPE (',' TYPE)* ]
      REGION ATTR-DICT
  With iter_values, the ':' list gives the types of the init values and block arguments and the
  optional '->' list the result types.  Without iter_values, an optional ':' list gives the
  result types.
print:
  ' ' ['iter_values(' (%arg ' = ' %init) joined by ', ' ') '] [': ' when there are init values
  or results] [init types joined by ', ' ' ' ['-> ' when there are results]]
  [result types joined by ', ' ' '] REGION [' {...}']
  Examples: `%0 = loop iter_values(%arg0 = %c0) : tile<i32> -> tile<i32> {`, `%1 = loop : tile<i32> {`
errors:
  number of iter_values != number of types: 'found different number of iter_values and types'
notes:
  A block without terminator gets an implicit `continue`; the printer omits a `continue`
  terminator without operands.""",

    "entry": """\
syntax:
  @sym_name '(' [ARG (',' ARG)*] ')' ['->' RESULTS]
      ['optimization_hints' '=' OPT_HINTS] REGION ATTR-DICT
  ARG     := %name ':' TYPE [ATTR-DICT] [loc(...)]   (the SSA names are the body's block arguments;
             either every argument has a name or none has one)
  RESULTS := TYPE | '(' [TYPE [ATTR-DICT] (',' TYPE [ATTR-DICT])*] ')'
  OPT_HINTS := the OptHints directive (tile_lsp/analysis/ir/directives.py)
print:
  ' ' @sym_name '(' (%arg ': ' TYPE) joined by ', ' ')' [' -> ' TYPE | ' -> (' TYPEs ')']
  [' optimization_hints=' OPT_HINTS  (no spaces around '=')] ' ' REGION
  [' {...}' attributes without sym_name, function_type, arg_attrs, res_attrs, optimization_hints]
  Example (13.5): `entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>) optimization_hints=<default = {}> {`
types: function_type = (argument types) -> (result types); arg_attrs gets one dictionary per
  argument (empty when none was written).
errors:
  a name after unnamed arguments: 'expected type instead of SSA identifier'
  a missing name after named arguments: 'expected SSA identifier'
notes:
  The region's block arguments are not redeclared in the region (no name shadowing allowed).
  An empty body gets a block with an implicit `return`.  The public printer writes the hints only
  when the dictionary is non-empty; tileirdisasm 13.5 writes `optimization_hints=<default = {}>`
  for every kernel.  Argument attributes are parsed but not printed.""",

    "testing$func": """\
syntax:
  @sym_name '(' [ARG (',' ARG)*] ')' ['->' RESULTS] REGION ATTR-DICT
  (ARG and RESULTS as for entry; no optimization_hints)
print:
  ' ' @sym_name '(' (%arg ': ' TYPE) joined by ', ' ')' [' -> ' TYPE | ' -> (' TYPEs ')'] ' '
  REGION [' {...}' attributes without sym_name, function_type, arg_attrs, res_attrs]
notes:
  Same parser/printer as entry (SharedFuncParserAndPrinter.h) minus the hints; implicit
  terminator `return`.""",
}

# ---------------------------------------------------------------------------
# Bytecode opcodes (BytecodeOpcodes.td; the 13.4 ones INFERRED from the
# corpus bytecode) and alternative spellings
# ---------------------------------------------------------------------------

# Ops that are one op under two names: {13.5 printed name: Ops.td name}.
OP_ALIASES: dict[str, str] = {
    "fpowf": "pow",  # INFERRED: same bytecode opcode 0x54
}

OPS_BY_NAME: dict[str, OpDef] = {op.name: op for op in OPS}
#: op name -> bytecode opcode, from each op's ``opcode`` (BytecodeOpcodes.td; the 13.4 ones INFERRED from
#: the corpus bytecode: insert, fpowf, fpowi, gdc_*).
BYTECODE_OPCODES: dict[str, int] = {op.name: op.opcode for op in OPS if op.opcode is not None}
