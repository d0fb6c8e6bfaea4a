"""Numbers as the IR stores them: float bit patterns and the raw data of dense literals.

Shared by everything that turns an attribute into bits (the bytecode writer
and reader, the PTX lowering, the interpreter), so that they agree bit for
bit.  Sources: LLVM ``APFloat`` (the float formats, ``convert`` rounding to
nearest even) and MLIR ``DenseElementsAttr`` (its raw storage).
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.dialect import types as T


class DenseDataError(ValueError):
    """A dense literal that has no raw data for its type (a count or type mismatch)."""


#: Value bit widths of dense-constant elements where MLIR's differs from the dialect
#: table's storage width: ``tf32`` is 19 bits (``FloatTF32Type::getWidth``).
DENSE_ELEMENT_BITS = {"tf32": 19}


def dense_element_bits(elem) -> int:
    """Bit width of the value of one dense-constant element of type ``elem`` (a
    :class:`~tile_lsp.dialect.types.Type` with ``width``)."""
    return DENSE_ELEMENT_BITS.get(getattr(elem, "name", None), elem.width)


def dense_storage_bytes(elem) -> int:
    """Bytes one element of a dense constant of type ``elem`` takes in the constant section.

    MLIR's ``DenseElementsAttr`` raw storage (``getDenseElementStorageWidth``:
    ``alignTo(width, 8)`` bits): ``tf32`` takes 3 bytes, ``i4``/``f4E2M1FN``
    one byte each (not two per byte); NVIDIA's reader rejects any other size
    with "failed to validate buffer size and format".  ``i1`` (bit-packed
    unless a splat) is handled by the callers.
    """
    return (dense_element_bits(elem) + 7) // 8


# Float formats: name -> (exponent bits, mantissa bits, has_inf_nan IEEE-like).
_MINIFLOATS = {
    "f8E4M3FN": (4, 3), "f8E5M2": (5, 2), "f4E2M1FN": (2, 1), "f8E8M0FNU": (8, 0),
    "tf32": (8, 10),
}


def float_from_bits(bits: int, name: str) -> float:
    """The value of a float of MLIR type ``name`` stored as the integer ``bits``."""
    if name == "f32":
        return struct.unpack("<f", bits.to_bytes(4, "little"))[0]
    if name == "f64":
        return struct.unpack("<d", bits.to_bytes(8, "little"))[0]
    if name == "f16":
        return struct.unpack("<e", bits.to_bytes(2, "little"))[0]
    if name == "bf16":
        return struct.unpack("<f", (bits << 16).to_bytes(4, "little"))[0]
    if name == "tf32":
        return struct.unpack("<f", ((bits & 0x7FFFF) << 13).to_bytes(4, "little"))[0]
    if name == "f8E8M0FNU":
        return math.nan if bits == 0xFF else 2.0 ** (bits - 127)
    exp_bits, man_bits = _MINIFLOATS.get(name, (0, 0))
    if not exp_bits:
        return math.nan
    sign = -1.0 if bits >> (exp_bits + man_bits) & 1 else 1.0
    e = bits >> man_bits & ((1 << exp_bits) - 1)
    m = bits & ((1 << man_bits) - 1)
    bias = (1 << (exp_bits - 1)) - 1
    if name == "f8E5M2" and e == (1 << exp_bits) - 1:
        return sign * math.inf if m == 0 else math.nan
    if name == "f8E4M3FN" and e == 15 and m == 7:
        return math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - man_bits)
    return sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)


def _pack(fmt: str, value: float) -> bytes:
    """``struct.pack`` of one float, rounding to nearest even; a value that rounds past the
    largest finite number becomes infinity (APFloat ``convert`` with ``rmNearestTiesToEven``)."""
    try:
        return struct.pack(fmt, value)
    except OverflowError:
        return struct.pack(fmt, math.copysign(math.inf, value))


def float_to_bits(value: float, name: str) -> int:
    """The bit pattern of ``value`` in float type ``name`` (round to nearest even)."""
    if name == "f32":
        return struct.unpack("<I", _pack("<f", value))[0]
    if name == "f64":
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if name == "f16":
        return struct.unpack("<H", _pack("<e", value))[0]
    if name in ("bf16", "tf32"):
        b = struct.unpack("<I", _pack("<f", value))[0]
        shift = 16 if name == "bf16" else 13
        if math.isnan(value):
            return (b >> shift) | 1 << (22 - shift) if name == "bf16" else b >> shift
        b += (1 << (shift - 1)) - 1 + (b >> shift & 1)
        return b >> shift
    width = T.FLOAT_WIDTHS[name]
    best, best_err = 0, math.inf
    for bits in range(1 << width):  # minifloats: nearest representable code
        f = float_from_bits(bits, name)
        if math.isnan(value) and math.isnan(f):
            return bits
        if math.isnan(f):
            continue
        err = abs(f - value) if not math.isinf(value) else (0 if f == value else math.inf)
        if err < best_err:
            best, best_err = bits, err
    return best


def flatten(v: Any) -> list[Any]:
    """The leaves of nested lists ``v``, in order."""
    if isinstance(v, list):
        out: list[Any] = []
        for x in v:
            out.extend(flatten(x))
        return out
    return [v]


def dense_raw_data(attr: A.DenseElementsAttr, ty: T.Type) -> bytes:
    """MLIR's raw buffer of a dense constant (one element when all are equal): ``dense_storage_bytes``
    little-endian bytes per element, ``i1`` bit-packed unless a splat.  Raises :class:`DenseDataError`
    when the literal does not fit ``ty``."""
    texts = attr.texts
    if isinstance(texts, str) and re.fullmatch(r"(?:[0-9a-f]{2})*", texts) and str(attr.type) == str(ty):
        return bytes.fromhex(texts)
    if not isinstance(ty, T.TileType):
        raise DenseDataError(f"dense constant of non-tile type {ty}")
    elem = ty.element
    values = attr.values
    if isinstance(values, str) and values.lower().startswith("0x"):  # hex blob (MLIR raw data)
        return bytes.fromhex(values[2:])
    flat = flatten(values)
    n = ty.num_elements or 1
    if all(v == flat[0] or (isinstance(v, float) and isinstance(flat[0], float) and math.isnan(v)
                            and math.isnan(flat[0])) for v in flat):
        flat = flat[:1]
    elif len(flat) != n:
        raise DenseDataError(f"dense constant has {len(flat)} values for {ty}")
    width = elem.width
    if width == 1:
        if len(flat) == 1:
            return b"\xff" if flat[0] else b"\x00"
        out = bytearray((len(flat) + 7) // 8)
        for i, v in enumerate(flat):
            if v:
                out[i // 8] |= 1 << (i % 8)
        return bytes(out)
    if isinstance(elem, T.FloatType):
        # the text builder keeps hex float literals (``0xFF800000``) as their
        # integer bit pattern; decimal literals arrive as floats
        bits = [int(v, 16) if isinstance(v, str) else
                (v if isinstance(v, int) and not isinstance(v, bool) else float_to_bits(float(v), elem.name))
                for v in flat]
    else:
        bits = [int(v, 16) if isinstance(v, str) else int(v) for v in flat]
    width = dense_element_bits(elem)
    size = dense_storage_bytes(elem)
    return b"".join((b & ((1 << width) - 1)).to_bytes(size, "little") for b in bits)
