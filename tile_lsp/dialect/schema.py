"""Schema of the op table: one :class:`OpDef` per operation, as data.

An :class:`OpDef` carries everything tile-lsp knows about one op: its operands,
attributes, results and regions with their constraints, its traits, its
assembly format (MLIR declarative assembly format syntax, see
``tile_lsp/grammar/formats.py``), how the types the format leaves out are
inferred, and a one-line summary in our own words.  The grammar, the IR
builder, the verifiers, the printer and hover text all walk these entries.

Type constraints carry the summary MLIR's ODS prints in
``operand #N must be <summary>, but got '<type>'``.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field

from tile_lsp.dialect import types as T

# ---------------------------------------------------------------------------
# Type constraints
# ---------------------------------------------------------------------------


def _element_name(t: T.Type) -> str | None:
    if isinstance(t, (T.IntegerType, T.FloatType)):
        return str(t)
    if isinstance(t, T.PointerType):
        return "ptr"
    return None


#: The constraint kinds that accept exactly the instances of a cuda_tile type (class).
_KIND_TYPES: dict[str, type | tuple[type, ...]] = {
    "token": T.TokenType,
    "tensor_view": T.TensorViewType,
    "partition_view": T.PartitionViewType,
    "tile_view": T.TILE_VIEW_TYPES,
    "ptr": T.PointerType,
    "strided_view": T.StridedViewType,
    "gather_scatter_view": T.GatherScatterViewType,
    "cuda_tile": T.CudaTileType,
}


@dataclass(frozen=True)
class TypeConstraint:
    """A type constraint: ``kind`` selects the predicate, ``summary`` is ODS's text.

    Kinds:
      ``any``: every type.
      ``tile``: a tile whose element is one of ``elements`` (spellings such as
        ``i32``, ``f16``, or ``ptr`` for any pointer); ``ranks`` restricts the
        rank when not empty; empty ``elements`` allows any element.
      ``scalar``: a builtin scalar type, one of ``elements``.
      ``token``, ``tensor_view``, ``partition_view``, ``tile_view`` (partition,
      strided or gather/scatter view), ``ptr``: that cuda_tile type.
      ``one_of``: any of ``alternatives``.
      ``strided_view``, ``gather_scatter_view``: that cuda_tile view type.
      ``cuda_tile``: any ``!cuda_tile.*`` type.
    """

    kind: str
    summary: str
    elements: tuple[str, ...] = ()
    ranks: tuple[int, ...] = ()
    alternatives: tuple["TypeConstraint", ...] = ()

    def accepts(self, t: T.Type) -> bool:
        """Whether type ``t`` satisfies the constraint."""
        k = self.kind
        if k == "any":
            return True
        if k == "tile":
            if not isinstance(t, T.TileType):
                return False
            if self.ranks and t.rank not in self.ranks:
                return False
            return not self.elements or _element_name(t.element) in self.elements
        if k == "scalar":
            return _element_name(t) in self.elements
        if k == "one_of":
            return any(a.accepts(t) for a in self.alternatives)
        if k in _KIND_TYPES:
            return isinstance(t, _KIND_TYPES[k])
        raise ValueError(f"unknown constraint kind {k!r}")


def tile_of(*elements: str, summary: str | None = None, ranks: tuple[int, ...] = ()) -> TypeConstraint:
    """``CudaTile_TileOf`` / ``CudaTile_RankedTileOf``: a tile of the given element types.

    The default summary is ODS's: ``tile of i1 or i8 values``; with ranks
    ``0D tile of i32 values`` (ranks joined by ``/``).
    """
    if summary is None:
        prefix = "/".join(f"{r}D" for r in ranks) + " tile" if ranks else "tile"
        names = [("ptr" if e == "ptr" else e) for e in elements]
        summary = f"{prefix} of {' or '.join(names)} values" if names else f"{prefix} of any type values"
    return TypeConstraint("tile", summary, tuple(elements), tuple(ranks))


ANY = TypeConstraint("any", "any type")
TOKEN = TypeConstraint("token", "cuda tile token type")
TENSOR_VIEW = TypeConstraint("tensor_view", "tensor view type")
PARTITION_VIEW = TypeConstraint("partition_view", "partition view type")
TILE_VIEW = TypeConstraint("tile_view", "TileView instance")

# ---------------------------------------------------------------------------
# Op definitions
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OperandDef:
    """An operand (or a result, see :class:`ResultDef`).

    ``kind``: ``single``, ``optional`` (0 or 1) or ``variadic`` (0 or more).
    ``doc``: one line in our own words (hover text).
    ``since``: first Tile IR version with this operand/result (Ops.td
    ``CudaTileArg<..., "13.2">``); ``None`` means the op's own version.
    """

    name: str
    constraint: TypeConstraint = ANY
    kind: str = "single"
    doc: str = ""
    since: str | None = None


ResultDef = OperandDef


@dataclass(frozen=True)
class AttrDef:
    """An attribute or property of an op.

    ``kind`` names its storage and syntax:
      ``unit`` (present or absent), ``bool``, ``i32``, ``i64`` (integer),
      ``dense_i32_array`` (``array<i32: ...>`` / ``[1, 2]``), ``string``,
      ``symbol_name`` (``@name`` defining a symbol), ``symbol_ref``
      (``@name`` use), ``type`` (a type attribute), ``dense`` (a typed
      dense elements literal), ``dict``, ``enum:<EnumName>`` (a case of an
      enum of ``tile_lsp/dialect/enums.py``), ``attr`` (any attribute), or a
      dialect attribute kind such as ``opt_hints``, ``assume_predicate``,
      ``array`` (an array attribute).
    ``optional``: may be absent.  ``default``: value used when absent, as text.
    ``doc``: one line in our own words (hover text).  ``since``: first Tile IR
    version with this attribute (Ops.td ``CudaTileArg<..., "13.2">``);
    ``None`` means the op's own version.
    """

    name: str
    kind: str
    optional: bool = False
    default: str | None = None
    doc: str = ""
    since: str | None = None


@dataclass(frozen=True)
class RegionDef:
    """A region of an op; ``kind`` is ``single_block`` or ``any``."""

    name: str
    kind: str = "single_block"
    doc: str = ""


@dataclass(frozen=True)
class OpDef:
    """One operation of a dialect.

    ``name``: the op name without dialect (``addi``); ``dialect``: ``cuda_tile``.
    ``since``: first Tile IR version with the op (``"13.1"``).
    ``format``: MLIR declarative assembly format; ``None`` means generic form only.
    ``type_inference``: for each operand/result whose type the format does not
      print, an expression giving it from printed ones: the name of another
      operand/result (same type), or a function call string understood by
      ``tile_lsp/grammar/formats.py`` (for instance ``"i1_like(lhs)"``).
    ``traits``: MLIR trait names, parameters in angle brackets
      (``"AllTypesMatch<lhs, rhs, result>"``, ``"HasParent<entry>"``,
      ``"Terminator"``, ``"Pure"``, ``"IsolatedFromAbove"``,
      ``"AttrSizedOperandSegments"``).
    ``opcode``: the op's Tile IR bytecode opcode (``BytecodeOpcodes.td``); ``None`` for ops that have
      none (the nv_tileas ops of the spec).
    """

    name: str
    since: str
    summary: str
    operands: tuple[OperandDef, ...] = ()
    attributes: tuple[AttrDef, ...] = ()
    results: tuple[ResultDef, ...] = ()
    regions: tuple[RegionDef, ...] = ()
    traits: tuple[str, ...] = ()
    format: str | None = None
    type_inference: dict[str, str] = field(default_factory=dict)
    dialect: str = "cuda_tile"
    opcode: int | None = None

    @functools.cached_property
    def full_name(self) -> str:
        """``dialect.name`` (``cuda_tile.addi``): one string per op kind, which every op of that kind
        names (a string made per call cost 3 MiB on a 50,000-line file)."""
        return f"{self.dialect}.{self.name}"

    @functools.cached_property
    def trait_names(self) -> frozenset[str]:
        """The names of ``traits`` without their parameters (``HasParent<entry>`` -> ``HasParent``)."""
        return frozenset(t.split("<", 1)[0] for t in self.traits)

    def has_trait(self, name: str) -> bool:
        """Whether the op has trait ``name`` (a name without parameters: ``HasParent`` matches
        ``HasParent<entry>``); a set look-up, as the verifier asks it of each op several times."""
        return name in self.trait_names

    def operand(self, name: str) -> OperandDef | None:
        return next((o for o in self.operands if o.name == name), None)

    def result(self, name: str) -> ResultDef | None:
        return next((r for r in self.results if r.name == name), None)

    def attribute(self, name: str) -> AttrDef | None:
        return next((a for a in self.attributes if a.name == name), None)


# ---------------------------------------------------------------------------
# Constraint constants of the cuda_tile op table
# ---------------------------------------------------------------------------
# Summaries are the ones ODS prints (``Types.td``): a ``CudaTile_TileOf`` is
# ``tile of <element summaries joined by " or "> values``, a pointer element
# summarizes as ``Pointer type``, ranked tiles start with ``0D tile``, a
# ``Variadic<>`` operand is ``variadic of <summary>``; TypeDefs and interfaces
# use their own summary (``Tile type``, ``tensor view type``, ``TileView instance``).

INT_ELEMENTS = ("i1", "i8", "i16", "i32", "i64")
BASE_FLOAT_ELEMENTS = ("f16", "bf16", "f32", "f64")
FLOAT_ELEMENTS = ("f16", "bf16", "f32", "f64", "tf32", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")
NUMBER_ELEMENTS = INT_ELEMENTS + FLOAT_ELEMENTS
# ``CudaTile_NumberType`` (scalar): ``CudaTile_AnyFloat`` then ``CudaTile_AnyInt``.
SCALAR_NUMBER_ELEMENTS = ("f16", "bf16", "f32", "tf32", "f64", "f8E4M3FN", "f8E5M2", "f8E8M0FNU",
                          "f4E2M1FN") + INT_ELEMENTS


def variadic_of(c: TypeConstraint) -> TypeConstraint:
    """ODS ``Variadic<c>``: same predicate, summary ``variadic of <summary>``."""
    return TypeConstraint(c.kind, "variadic of " + c.summary, c.elements, c.ranks, c.alternatives)


def ptr_tile(ranks: tuple[int, ...] = ()) -> TypeConstraint:
    """``CudaTile_TileOf<[CudaTile_PointerType]>`` (``tile of Pointer type values``)."""
    prefix = "/".join(f"{r}D" for r in ranks) + " tile" if ranks else "tile"
    return tile_of("ptr", summary=f"{prefix} of Pointer type values", ranks=ranks)


def scalar_of(*elements: str, summary: str | None = None) -> TypeConstraint:
    """A builtin scalar type constraint; the default summary joins the spellings with `` or ``."""
    return TypeConstraint("scalar", summary if summary is not None else " or ".join(elements), tuple(elements))


def one_of(summary: str, *alternatives: TypeConstraint) -> TypeConstraint:
    """ODS ``AnyTypeOf<[...]>``: any of ``alternatives``."""
    return TypeConstraint("one_of", summary, alternatives=tuple(alternatives))


INT_TILE = tile_of(*INT_ELEMENTS)                      # CudaTile_IntTileType
INT_OR_I4_TILE = tile_of(*INT_ELEMENTS, "i4")          # exti/trunci operand types
BASE_FLOAT_TILE = tile_of(*BASE_FLOAT_ELEMENTS)        # CudaTile_BaseFloatTileType
FLOAT_TILE = tile_of(*FLOAT_ELEMENTS)                  # CudaTile_FloatTileType
NUMBER_TILE = tile_of(*NUMBER_ELEMENTS)                # CudaTile_NumberTileType
NUMBER_OR_I4_TILE = tile_of(*NUMBER_ELEMENTS, "i4")    # pack/unpack unpacked side
PTR_TILE = ptr_tile()                                  # CudaTile_PointerTileType
I1_TILE = tile_of("i1")
I8_TILE = tile_of("i8")
I64_TILE = tile_of("i64")                              # CudaTile_IntTileInt64Type
SCALAR_I1_TILE = tile_of("i1", ranks=(0,))             # CudaTile_ScalarTileOf<CudaTile_Int1>
SCALAR_I32_TILE = tile_of("i32", ranks=(0,))           # CudaTile_ScalarTileOf<CudaTile_Int32>
SCALAR_INT_TILE = tile_of(*INT_ELEMENTS, ranks=(0,))   # CudaTile_ScalarTileOf<CudaTile_AnyInt>
SCALAR_PTR_TILE = ptr_tile(ranks=(0,))                 # CudaTile_ScalarTileOf<CudaTile_PointerType>
ANY_TILE = TypeConstraint("tile", "Tile type")         # CudaTile_TileType used as a constraint
STRIDED_VIEW = TypeConstraint("strided_view", "strided view type")
GATHER_SCATTER_VIEW = TypeConstraint("gather_scatter_view", "gather/scatter view type")
NUMBER_SCALAR = scalar_of(*SCALAR_NUMBER_ELEMENTS)     # CudaTile_NumberType
# ``CudaTile_AnyType`` = AnyTypeOf<[CudaTile_NumberType, Type<isa CudaTileType>]>.  The
# second alternative has an empty summary, so ODS's joined summary ends in "or ".
CUDA_TILE_ANY = one_of(NUMBER_SCALAR.summary + " or ", NUMBER_SCALAR, TypeConstraint("cuda_tile", ""))
