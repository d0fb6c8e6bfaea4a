"""Structured types of Tile IR text: MLIR builtin element types and cuda_tile types.

Each type prints itself as MLIR prints it in diagnostics (``str(t)``): the full
``!cuda_tile.`` form at the top level and the short form nested inside another
cuda_tile type (``!cuda_tile.tile<4xptr<f32>>``).  ``short()`` gives the form
``cuda-tile-opt`` prints inside a ``cuda_tile.module`` (``tile<4xf32>``).

Source of the syntax: NVIDIA ``cuda-tile`` ``include/cuda_tile/Dialect/CudaTile/IR/Types.td``
and the type printers of ``lib/Dialect/CudaTile/IR/Types.cpp``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DYNAMIC = None  # a ``?`` dimension or stride


class Type:
    """Base class of all types.  Subclasses are frozen dataclasses (hashable, comparable)."""

    def short(self) -> str:
        """Form printed inside a ``cuda_tile`` context (no ``!cuda_tile.`` prefix)."""
        return str(self)

    @property
    def is_cuda_tile(self) -> bool:
        return False


@dataclass(frozen=True)
class IntegerType(Type):
    """Signless integer ``iN`` (MLIR builtin)."""

    width: int

    def __str__(self) -> str:
        return f"i{self.width}"


@dataclass(frozen=True)
class FloatType(Type):
    """MLIR builtin float type by its MLIR spelling (``f16``, ``bf16``, ``f8E4M3FN``...).

    ``width`` is the storage width in bits.
    """

    name: str

    def __str__(self) -> str:
        return self.name

    @property
    def width(self) -> int:
        return FLOAT_WIDTHS[self.name]


# Storage widths in bits of the MLIR float types Tile IR uses.
FLOAT_WIDTHS = {
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "tf32": 32,
    "f64": 64,
    "f8E4M3FN": 8,
    "f8E5M2": 8,
    "f8E8M0FNU": 8,
    "f4E2M1FN": 4,
    "f6E2M3FN": 6,
    "f6E3M2FN": 6,
    "f8E4M3": 8,
    "f8E3M4": 8,
    "f8E4M3FNUZ": 8,
    "f8E5M2FNUZ": 8,
    "f8E4M3B11FNUZ": 8,
    "f80": 80,
    "f128": 128,
}


@dataclass(frozen=True)
class IndexType(Type):
    """MLIR builtin ``index``."""

    def __str__(self) -> str:
        return "index"


@dataclass(frozen=True)
class NoneType(Type):
    """MLIR builtin ``none``."""

    def __str__(self) -> str:
        return "none"


@dataclass(frozen=True)
class FunctionType(Type):
    """MLIR builtin function type ``(inputs) -> results``."""

    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __str__(self) -> str:
        ins = ", ".join(str(t) for t in self.inputs)
        if len(self.results) == 1 and not isinstance(self.results[0], FunctionType):
            outs = str(self.results[0])
        else:
            outs = "(" + ", ".join(str(t) for t in self.results) + ")"
        return f"({ins}) -> {outs}"


def type_text(t: Type) -> str:
    """``t`` as written inside cuda_tile ops: ``tile<i32>`` without the ``!cuda_tile.`` prefix,
    function types likewise (``(tile<i32>) -> ()``), other dialects' types in full."""
    if isinstance(t, FunctionType):
        ins = ", ".join(type_text(x) for x in t.inputs)
        outs = ", ".join(type_text(x) for x in t.results)
        return f"({ins}) -> " + (outs if len(t.results) == 1 else f"({outs})")
    return t.short() if t.is_cuda_tile else str(t)


@dataclass(frozen=True)
class OpaqueType(Type):
    """A type tile-lsp does not model: kept as its source spelling.

    Used for unregistered dialect types (``!foo.bar<...>``) and builtin types
    outside Tile IR (``tensor<...>``, ``memref<...>``, ``vector<...>``).
    """

    text: str

    def __str__(self) -> str:
        return self.text


def _dims(shape: tuple[int | None, ...]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape)


class CudaTileType(Type):
    """Base of the ``!cuda_tile.*`` types; ``str`` is the full form."""

    mnemonic = ""

    @property
    def is_cuda_tile(self) -> bool:
        return True

    def body(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def short(self) -> str:
        return self.mnemonic + self.body()

    def __str__(self) -> str:
        return "!cuda_tile." + self.short()


def _nested(t: Type) -> str:
    return t.short() if isinstance(t, CudaTileType) else str(t)


@dataclass(frozen=True)
class PointerType(CudaTileType):
    """``!cuda_tile.ptr<pointee>`` (Types.td ``CudaTile_PointerType``)."""

    pointee: Type
    mnemonic = "ptr"

    def body(self) -> str:
        return f"<{_nested(self.pointee)}>"


@dataclass(frozen=True)
class TileType(CudaTileType):
    """``!cuda_tile.tile<SHAPExELEM>``; ``shape`` is a tuple of static sizes (``()`` is 0-d).

    Dynamic sizes are not legal in a tile but are kept (as ``None``) so the
    verifier can report them.
    """

    shape: tuple[int | None, ...]
    element: Type
    mnemonic = "tile"

    def body(self) -> str:
        if self.shape:
            return f"<{_dims(self.shape)}x{_nested(self.element)}>"
        return f"<{_nested(self.element)}>"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def num_elements(self) -> int | None:
        n = 1
        for d in self.shape:
            if d is None:
                return None
            n *= d
        return n


@dataclass(frozen=True)
class TokenType(CudaTileType):
    """``!cuda_tile.token``."""

    mnemonic = "token"

    def body(self) -> str:
        return ""


def _strides(strides: tuple[int | None, ...], sep: str = ",") -> str:
    return "[" + sep.join("?" if s is None else str(s) for s in strides) + "]"


@dataclass(frozen=True)
class TensorViewType(CudaTileType):
    """``!cuda_tile.tensor_view<SHAPExELEM, strides=[...]>`` (``None`` for ``?``).

    A 0-d view prints as ``tensor_view<f32>`` with no strides.
    """

    shape: tuple[int | None, ...]
    element: Type
    strides: tuple[int | None, ...]
    mnemonic = "tensor_view"

    def body(self) -> str:
        if not self.shape:
            return f"<{_nested(self.element)}>"
        return f"<{_dims(self.shape)}x{_nested(self.element)}, strides={_strides(self.strides)}>"

    @property
    def rank(self) -> int:
        return len(self.shape)


def _dim_map_part(dim_map: tuple[int, ...] | None) -> list[str]:
    """``dim_map=[...]`` as a view type prints it: only when it is not the identity."""
    if dim_map is None or tuple(dim_map) == tuple(range(len(dim_map))):
        return []
    return ["dim_map=[" + ", ".join(str(d) for d in dim_map) + "]"]


def _view_body(leading: list[str], padding_value: str | None, view: Type, trailing: list[str]) -> str:
    """The body of a tile view type: ``<leading..., [padding_value = P,] VIEW, trailing...>``."""
    parts = [*leading]
    if padding_value is not None:
        parts.append(f"padding_value = {padding_value}")
    parts.append(_nested(view))
    parts.extend(trailing)
    return "<" + ", ".join(parts) + ">"


@dataclass(frozen=True)
class PartitionViewType(CudaTileType):
    """``!cuda_tile.partition_view<tile=(AxB), [padding_value = P,] tensor_view<...>[, dim_map=[...]]>``.

    ``dim_map`` is printed only when it is not the identity.
    """

    tile_shape: tuple[int, ...]
    tensor_view: Type
    padding_value: str | None = None
    dim_map: tuple[int, ...] | None = None
    mnemonic = "partition_view"

    def effective_dim_map(self) -> tuple[int, ...]:
        return self.dim_map if self.dim_map is not None else tuple(range(len(self.tile_shape)))

    def body(self) -> str:
        return _view_body([f"tile=({_dims(self.tile_shape)})"], self.padding_value, self.tensor_view,
                          _dim_map_part(self.dim_map))


@dataclass(frozen=True)
class StridedViewType(CudaTileType):
    """``!cuda_tile.strided_view<tile=(...), traversal_strides=[...], [padding_value = P,] tensor_view<...>[, dim_map=[...]]>``."""

    tile_shape: tuple[int, ...]
    traversal_strides: tuple[int | None, ...]
    tensor_view: Type
    padding_value: str | None = None
    dim_map: tuple[int, ...] | None = None
    mnemonic = "strided_view"

    def body(self) -> str:
        return _view_body([f"tile=({_dims(self.tile_shape)})", "traversal_strides=" + _strides(self.traversal_strides)],
                          self.padding_value, self.tensor_view, _dim_map_part(self.dim_map))


@dataclass(frozen=True)
class GatherScatterViewType(CudaTileType):
    """``!cuda_tile.gather_scatter_view<tile=(...), [padding_value = P,] VIEW, sparse_dim=N>``."""

    tile_shape: tuple[int, ...]
    view: Type
    sparse_dim: int
    padding_value: str | None = None
    mnemonic = "gather_scatter_view"

    def body(self) -> str:
        return _view_body([f"tile=({_dims(self.tile_shape)})"], self.padding_value, self.view,
                          [f"sparse_dim={self.sparse_dim}"])


TILE_VIEW_TYPES = (PartitionViewType, StridedViewType, GatherScatterViewType)

# Element types Tile IR knows, by spelling.
INTEGER_WIDTHS = (1, 4, 8, 16, 32, 64)


def element_type(name: str) -> Type | None:
    """The builtin element type spelled ``name`` (``i32``, ``f16``...), or ``None``.

    The same object for the same spelling (types are frozen values): a file
    names the same few element types tens of thousands of times."""
    try:
        return _ELEMENT_TYPES[name]
    except KeyError:
        found = _new_element_type(name)
        if len(_ELEMENT_TYPES) < 4096:  # the spellings seen first (the text decides how many there are)
            _ELEMENT_TYPES[name] = found
        return found


def _new_element_type(name: str) -> Type | None:
    if name in FLOAT_WIDTHS:
        return FloatType(name)
    if name.startswith("i") and name[1:].isdigit():
        return IntegerType(int(name[1:]))
    if name == "index":
        return IndexType()
    return None


_ELEMENT_TYPES: dict[str, Type | None] = {}

_INTERNED: dict[Type, Type] = {}


def interned(t: Type) -> Type:
    """The first object equal to ``t`` met so far (``t`` itself if none): types are frozen values,
    and the IR of a big file writes the same few tile types tens of thousands of times.  Keeps at
    most 65,536 types; one with an unhashable part is returned as it is."""
    try:
        found = _INTERNED.get(t)
    except TypeError:
        return t
    if found is not None:
        return found
    if len(_INTERNED) < 65536:
        _INTERNED[t] = t
    return t


def element_of(t: Type) -> Type:
    """Element type of a tile or view type, else ``t`` itself (MLIR ``getElementTypeOrSelf``)."""
    if isinstance(t, (TileType, TensorViewType)):
        return t.element
    return t


def bit_width(t: Type) -> int | None:
    """Bit width of a scalar type (pointers count 64), ``None`` when it has none."""
    if isinstance(t, IntegerType):
        return t.width
    if isinstance(t, FloatType):
        return FLOAT_WIDTHS.get(t.name)
    if isinstance(t, PointerType):
        return 64
    return None


@dataclass(frozen=True)
class _Unknown(Type):
    """Placeholder type of a value whose type could not be determined (after an error)."""

    reason: str = field(default="", compare=False)

    def __str__(self) -> str:
        return "<<unknown type>>"


UNKNOWN = _Unknown()


# (exponent bits, mantissa bits, bias, IEEE specials) of the small float formats;
# IEEE specials: an all-ones exponent is inf/NaN.  The "FN" formats have no
# infinity and NaN only where every exponent and mantissa bit is set.
_SMALL_FLOATS = {
    "f16": (5, 10, 15, True),
    "bf16": (8, 7, 127, True),
    "f8E5M2": (5, 2, 15, True),
    "f8E4M3FN": (4, 3, 7, False),
    "f4E2M1FN": (2, 1, 1, False),
    "f6E2M3FN": (2, 3, 1, False),
    "f6E3M2FN": (3, 2, 3, False),
}


def float_from_bits(bits: int, name: str) -> float | None:
    """Value of the bit pattern ``bits`` read as float type ``name`` (MLIR hex float literals).

    ``None`` for a type tile-lsp does not decode.  Source: the formats of
    LLVM APFloat (IEEE half/single/double, bfloat, the OCP 8-, 6- and 4-bit
    formats; f8E8M0FNU is an unsigned power of two, 0xFF its NaN).
    """
    import math
    import struct

    if name in ("f32", "tf32"):
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    if name == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits & 0xFFFFFFFFFFFFFFFF))[0]
    if name == "f8E8M0FNU":
        bits &= 0xFF
        return math.nan if bits == 0xFF else math.ldexp(1.0, bits - 127)
    spec = _SMALL_FLOATS.get(name)
    if spec is None:
        return None
    ebits, mbits, bias, ieee = spec
    total = 1 + ebits + mbits
    bits &= (1 << total) - 1
    sign = -1.0 if bits >> (total - 1) else 1.0
    exp = (bits >> mbits) & ((1 << ebits) - 1)
    man = bits & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    if ieee and exp == top:
        return math.nan if man else sign * math.inf
    if not ieee and exp == top and man == (1 << mbits) - 1 and name.startswith("f8"):
        return math.nan
    if exp == 0:
        return sign * math.ldexp(man / (1 << mbits), 1 - bias)
    return sign * math.ldexp(1 + man / (1 << mbits), exp - bias)
