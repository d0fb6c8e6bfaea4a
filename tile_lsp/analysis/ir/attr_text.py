"""Attributes as MLIR prints them: floats (MLIR's shortest round-tripping text, or
``tileirdisasm``'s APFloat digits), dense literals, strings, dictionaries, enums.

Used by the printer (:mod:`.printer`) and by whatever compares or shows an
attribute the way ``cuda-tile-opt`` writes it.  Sources: MLIR
``AsmPrinter.cpp`` (``printFloatValue``, ``printAttribute``, dense elements)
and the op table's attribute kinds and defaults.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import struct
from typing import Any, Iterator

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.dialect import types as T
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.schema import OpDef

INDENT = 2
CHUNK_SEPARATOR = "// -----\n"

# ---------------------------------------------------------------------------
# Value naming (mlir/lib/IR/AsmPrinter.cpp SSANameState)
# ---------------------------------------------------------------------------
from tile_lsp.analysis.ir.numbers import flatten


# ---------------------------------------------------------------------------
# Attributes
# ---------------------------------------------------------------------------

_FLOAT_FORMATS = {"f64": "d", "f32": "f", "f16": "e"}


def round_float(value: float, type_name: str) -> float:
    """``value`` rounded to the float semantics ``type_name`` (f64/f32/f16/bf16; others unchanged)."""
    if math.isnan(value) or math.isinf(value):
        return value
    fmt = _FLOAT_FORMATS.get(type_name)
    try:
        if fmt == "d":
            return value
        if fmt:
            return struct.unpack(fmt, struct.pack(fmt, value))[0]
        if type_name == "bf16":
            bits = struct.unpack("<I", struct.pack("<f", value))[0]
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
            return struct.unpack("<f", struct.pack("<I", bits))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return value


def _float_bits_hex(value: float, type_name: str) -> str:
    """The ``0x...`` bit pattern MLIR prints for a non-finite float of ``type_name``."""
    width = T.FLOAT_WIDTHS.get(type_name, 64)
    if width == 64:
        bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    elif width == 32:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    elif width == 16 and type_name == "f16":
        bits = struct.unpack("<H", struct.pack("<e", value))[0]
    elif type_name == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", value))[0] >> 16
    else:
        bits = 0
    return "0x" + format(bits, "X").rjust(max(1, width // 4), "0")


# True while printing in ``tileirdisasm``'s style (see :func:`apfloat_floats`).
_APFLOAT_FLOATS: contextvars.ContextVar[bool] = contextvars.ContextVar("apfloat_floats", default=False)


@contextlib.contextmanager
def apfloat_floats() -> Iterator[None]:
    """Within the ``with`` block, :func:`format_float` prints as MLIR's C++
    ``printFloatValue`` does (LLVM ``APFloat::toString`` digits, as ``tileirdisasm``
    prints): 9 significant digits for f32 and 17 for f64 when ``%e`` is not exact,
    instead of the shortest text that reads back."""
    token = _APFLOAT_FLOATS.set(True)
    try:
        yield
    finally:
        _APFLOAT_FLOATS.reset(token)


def format_float(value: float, type_name: str = "f64") -> str:
    """MLIR's ``printFloatValue``: ``%e`` with 6 digits when it reads back to the same value
    in ``type_name``'s semantics, else the shortest exact decimal, hex bits for NaN/inf
    (within :func:`apfloat_floats`: LLVM's ``APFloat::toString`` digits exactly)."""
    r = round_float(value, type_name)
    if math.isnan(r) or math.isinf(r):
        return _float_bits_hex(r, type_name)
    if _APFLOAT_FLOATS.get():
        from tile_lsp.analysis.ir.apfloat import mlir_float_text

        return mlir_float_text(r, type_name)
    text = f"{r:e}"
    if round_float(float(text), type_name) == r:
        return text
    if type_name == "f64":
        s = repr(r)
    else:
        s = repr(r)
        for digits in range(1, 18):
            cand = f"{r:.{digits}g}"
            if round_float(float(cand), type_name) == r:
                s = cand
                break
    if "e" in s:
        mant, exp = s.split("e")
        if "." not in mant:
            mant += ".0"
        return f"{mant}E{int(exp):+d}".replace("+", "+")
    return s if "." in s else s + ".0"


def enum_of(attr: A.Attribute, kind: str | None = None):
    if isinstance(attr, A.EnumAttr):
        return ENUMS.get(attr.enum)
    if kind and kind.startswith("enum:"):
        return ENUMS.get(kind[5:])
    return None


def dense_is_splat(values: Any) -> bool:
    flat = list(flatten(values))
    return bool(flat) and all(v == flat[0] and type(v) is type(flat[0]) for v in flat)




def signed_value(v: int, elem: str) -> int:
    """``v`` read as a two's complement ``iN`` (MLIR prints signless integers signed)."""
    if elem.startswith("i") and elem[1:].isdigit():
        w = int(elem[1:])
        if w > 1:
            v &= (1 << w) - 1
            if v >= 1 << (w - 1):
                v -= 1 << w
    return v


def _dense_element(v: Any, elem: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if elem == "i1" and isinstance(v, int):
        return "true" if v else "false"
    if isinstance(v, int) and elem.startswith("i"):
        return str(signed_value(v, elem))
    if isinstance(v, float) or (elem.startswith(("f", "bf", "tf")) and isinstance(v, int)):
        return format_float(float(v), elem)
    return str(v)


def dense_body(attr: A.DenseElementsAttr) -> str:
    elem = str(attr.element_type)
    values = attr.values
    if isinstance(values, str):
        return values
    if isinstance(values, list) and dense_is_splat(values):
        values = next(iter(flatten(values)))

    def body(v: Any) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(body(x) for x in v) + "]"
        return _dense_element(v, elem)

    return body(values)


def string_literal(value: str) -> str:
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= ord(ch) < 0x7F:
            out.append(ch)
        else:
            out.extend(f"\\{b:02X}" for b in ch.encode())
    return '"' + "".join(out) + '"'


def normalize_attr(attr: A.Attribute, kind: str | None) -> A.Attribute:
    """``attr`` as the ODS attribute of ``kind`` stores it: enum cases written as a
    keyword, string, ``#cuda_tile.x<case>`` or integer become one :class:`EnumAttr`.

    The case of ``#cuda_tile.x<case>`` is the one the builder decoded (``DialectAttr.value``,
    :func:`~tile_lsp.analysis.ir.attributes.enum_case`; NVIDIA AttrDefs.td ``CudaTileEnumAttr``);
    a dialect attribute holding no decoded case (made elsewhere, or not a cuda_tile enum attribute:
    ``#nv_tileas<signed>``) names the case by its whole body, as before the builder decoded it."""
    if isinstance(attr, A.AliasAttr) and attr.target is not None:
        attr = attr.target
    if not kind or not kind.startswith("enum:"):
        return attr
    enum = ENUMS.get(kind[5:])
    if enum is None:
        return attr
    case = None
    if isinstance(attr, A.EnumAttr):
        case = attr.case
    elif isinstance(attr, A.StringAttr):
        case = attr.value
    elif isinstance(attr, A.DialectAttr):
        case = A.enum_case(attr)
        if case is None:
            case = attr.body
    elif isinstance(attr, A.IntegerAttr):
        case = enum.spelling_of(attr.value)
    elif isinstance(attr, A.OpaqueAttr):
        case = attr.text
    if case is None or enum.case(case) is None:
        return attr
    return A.EnumAttr(enum.name, case, enum.attr_mnemonic or "")


def attr_text(attr: A.Attribute, kind: str | None = None, elide_type: bool = False) -> str:
    """The MLIR print of ``attr`` in full form (``printAttribute``), e.g. ``0 : i64``,
    ``#cuda_tile.overflow<none>``, ``dense<42> : !cuda_tile.tile<i32>``.

    ``kind`` (an :class:`AttrDef` kind such as ``enum:MemoryScope``) resolves
    enums stored without a mnemonic; ``elide_type`` drops the ``: i64``-style
    suffix of integers and floats (``printAttributeWithoutType``).
    """
    attr = normalize_attr(attr, kind)
    if isinstance(attr, A.EnumAttr):
        enum = enum_of(attr, kind)
        if enum is not None and enum.attr_mnemonic:
            return f"#cuda_tile.{enum.attr_mnemonic}<{attr.case}>"
        if enum is not None:
            value = enum.value_of(attr.case)
            return str(value) if elide_type else f"{value} : i32"
        return str(attr)
    if isinstance(attr, A.UnitAttr):
        return "unit"
    if isinstance(attr, A.BoolAttr):
        return "true" if attr.value else "false"
    if isinstance(attr, A.IntegerAttr):
        ty = str(attr.type) if attr.type is not None else "i64"
        if ty == "i1":
            return "true" if attr.value else "false"
        return str(attr.value) if elide_type else f"{attr.value} : {ty}"
    if isinstance(attr, A.FloatAttr):
        ty = str(attr.type) if attr.type is not None else "f64"
        body = format_float(attr.value, ty)
        return body if elide_type else f"{body} : {ty}"
    if isinstance(attr, A.StringAttr):
        return string_literal(attr.value)
    if isinstance(attr, A.TypeAttr):
        return str(attr.value)
    if isinstance(attr, A.ArrayAttr):
        return "[" + ", ".join(_array_element_text(e) for e in attr.elements) + "]"
    if isinstance(attr, A.DictAttr):
        return dict_text(attr.entries)
    if isinstance(attr, A.DenseArrayAttr):
        if not attr.values:
            return f"array<{attr.element_type}>"
        elem = str(attr.element_type)
        vals = ", ".join(_dense_element(v, elem) if not isinstance(v, bool) else ("true" if v else "false")
                         for v in attr.values)
        return f"array<{elem}: {vals}>"
    if isinstance(attr, A.DenseElementsAttr):
        text = f"dense<{dense_body(attr)}>"
        return f"{text} : {attr.type}" if attr.type is not None else text
    return str(attr)


def _array_element_text(attr: A.Attribute) -> str:
    """An ``ArrayAttr`` element as MLIR prints it (``AttrTypeElision::May``): an i64
    integer or a (non-hex) f64 float without its ``: i64``/``: f64`` suffix."""
    if isinstance(attr, A.IntegerAttr) and (attr.type is None or str(attr.type) == "i64"):
        return attr_text(attr, elide_type=True)
    if isinstance(attr, A.FloatAttr) and (attr.type is None or str(attr.type) == "f64"):
        body = attr_text(attr, elide_type=True)
        return body if not body.startswith(("0x", "-0x")) else body + " : f64"
    return attr_text(attr)


def _attr_key(name: str) -> str:
    ok = name and (name[0].isalpha() or name[0] == "_") and all(c.isalnum() or c in "_$." for c in name)
    return name if ok else string_literal(name)


def dict_text(entries: dict[str, A.Attribute], kinds: dict[str, str] | None = None) -> str:
    """``{a = 1 : i64, b}``: entries sorted by name (MLIR ``DictionaryAttr``), unit attributes bare."""
    parts = []
    for k in sorted(entries):
        v = entries[k]
        if isinstance(v, A.UnitAttr):
            parts.append(_attr_key(k))
        else:
            parts.append(f"{_attr_key(k)} = {attr_text(v, (kinds or {}).get(k))}")
    return "{" + ", ".join(parts) + "}"


def default_attr(opdef: OpDef, name: str) -> A.Attribute | None:
    """The attribute a default-valued ODS attribute takes when absent (``None``: no default)."""
    for a in opdef.attributes:
        if a.name != name or a.default is None:
            continue
        if a.kind.startswith("enum:"):
            enum = ENUMS.get(a.kind[5:])
            return A.EnumAttr(a.kind[5:], a.default, enum.attr_mnemonic or "" if enum else "")
        if a.kind in ("i64", "i32", "i16", "i8"):
            return A.IntegerAttr(int(a.default), T.IntegerType(int(a.kind[1:])))
        if a.kind == "bool":
            return A.BoolAttr(a.default == "true")
    return None


def attr_kind(opdef: OpDef | None, name: str) -> str | None:
    if opdef is None:
        return None
    return next((a.kind for a in opdef.attributes if a.name == name), None)


def same_attr(a: A.Attribute, b: A.Attribute, kind: str | None) -> bool:
    return attr_text(a, kind) == attr_text(b, kind)
