"""Shared tables of the Tile IR bytecode format (reader and writer).

Facts carried over from NVIDIA cuda-tile (``lib/Bytecode/BytecodeEnums.h``,
``include/cuda_tile/Dialect/CudaTile/IR/Bytecode{Opcodes,TypeOpcodes,
AttrOpcodes}.td``, ``lib/Bytecode/Common/Version.cpp``, and the per-op
encoding rules of ``tools/cuda-tile-tblgen/Bytecode{Gen,ReaderGen}.cpp``),
plus what the 13.4 files of the corpus show (marked INFERRED).  See
``docs/bytecode.md`` for the format as a whole.

The per-op encoding is not a table of its own: :func:`op_encoding` derives it
from the op's :class:`~tile_lsp.dialect.schema.OpDef` (ODS order of
operands, attributes, results, regions) plus :data:`FIELD_SINCE`, the
operands/attributes/results introduced after their op.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tile_lsp.dialect.cuda_tile_ops import BYTECODE_OPCODES, OP_ALIASES
from tile_lsp.dialect.schema import OpDef

#: The 8 magic bytes every file starts with (``\x7fTileIR\0``).
MAGIC = b"\x7fTileIR\x00"

#: Padding byte written before aligned data (``kAlignmentByte``).
ALIGNMENT_BYTE = 0xCB

# Section ids (low 7 bits of the section id byte; bit 7 = "has alignment").
SECTION_END = 0x00
SECTION_STRING = 0x01
SECTION_FUNC = 0x02
SECTION_DEBUG = 0x03
SECTION_CONSTANT = 0x04
SECTION_TYPE = 0x05
SECTION_GLOBAL = 0x06
SECTION_PRODUCER = 0x07
NUM_SECTIONS = 0x08

SECTION_NAMES = {
    SECTION_END: "end", SECTION_STRING: "string", SECTION_FUNC: "function",
    SECTION_DEBUG: "debug", SECTION_CONSTANT: "constant", SECTION_TYPE: "type",
    SECTION_GLOBAL: "global", SECTION_PRODUCER: "producer",
}

#: Alignment (bytes) the reader requires of a section (``readBytecode``).
SECTION_REQUIRED_ALIGNMENT = {
    SECTION_STRING: 4, SECTION_TYPE: 4,
    SECTION_CONSTANT: 8, SECTION_DEBUG: 8, SECTION_FUNC: 8,
}

# Function flags (byte after the signature index in the function table).
FUNC_FLAG_PRIVATE = 0x01
FUNC_FLAG_KERNEL = 0x02
FUNC_FLAG_HAS_HINTS = 0x04

# Debug-info tags and reserved indices.
DEBUG_TAGS = {0: "unknown", 1: "di_compile_unit", 2: "di_file", 3: "di_lexical_block",
              4: "di_loc", 5: "di_subprogram", 6: "call_site"}
DEBUG_UNKNOWN_LOC = 0
DEBUG_RESERVED = 1

# ---------------------------------------------------------------------------
# Types (BytecodeTypeOpcodes.td)
# ---------------------------------------------------------------------------

#: Integer type tags: tag -> bit width.
INT_TYPE_TAGS = {0: 1, 1: 8, 2: 16, 3: 32, 4: 64, 22: 4}
#: Float type tags: tag -> MLIR spelling.
FLOAT_TYPE_TAGS = {5: "f16", 6: "bf16", 7: "f32", 8: "tf32", 9: "f64",
                   10: "f8E4M3FN", 11: "f8E5M2", 18: "f8E8M0FNU", 19: "f4E2M1FN"}
TYPE_POINTER = 12
TYPE_TILE = 13
TYPE_TENSOR_VIEW = 14
TYPE_PARTITION_VIEW = 15
TYPE_FUNCTION = 16
TYPE_TOKEN = 17
TYPE_GATHER_SCATTER_VIEW = 20
TYPE_STRIDED_VIEW = 21

#: INFERRED from the 13.4 corpus: these types carry an optional-parameter
#: flags varint (always 0 in the corpus) right after their tag from 13.4 on.
FLAGGED_13_4_TYPE_TAGS = frozenset({12, 14})

INT_TAG_BY_WIDTH = {w: t for t, w in INT_TYPE_TAGS.items()}

FLOAT_TAG_BY_NAME = {n: t for t, n in FLOAT_TYPE_TAGS.items()}

#: Version each type tag appeared in (Types.td ``CudaTileTypeAlias``/type versions).
TYPE_TAG_SINCE = {18: "13.2", 19: "13.3", 20: "13.3", 21: "13.3", 22: "13.3"}

#: ODS names of the tags (used in messages).
TYPE_TAG_CPP_NAMES = {
    0: "Int1", 1: "Int8", 2: "Int16", 3: "Int32", 4: "Int64", 5: "Float16", 6: "BFloat16",
    7: "Float32", 8: "TFloat32", 9: "Float64", 10: "Float8E4M3FN", 11: "Float8E5M2",
    12: "PointerType", 13: "TileType", 14: "TensorViewType", 15: "PartitionViewType",
    16: "FunctionType", 17: "TokenType", 18: "Float8E8M0FNU", 19: "Float4E2M1FN",
    20: "GatherScatterViewType", 21: "StridedViewType", 22: "Int4",
}

#: ``ShapedType::kDynamic``: a ``?`` size/stride in an int64 array.
DYNAMIC = -(1 << 63)

# ---------------------------------------------------------------------------
# Self-contained attributes (BytecodeAttrOpcodes.td)
# ---------------------------------------------------------------------------

ATTR_INTEGER = 1
ATTR_FLOAT = 2
ATTR_BOOL = 3
ATTR_TYPE = 4
ATTR_STRING = 5
ATTR_ARRAY = 6
ATTR_DENSE_ELEMENTS = 7
ATTR_DIV_BY = 8
ATTR_SAME_ELEMENTS = 9
ATTR_DICTIONARY = 10
ATTR_OPTIMIZATION_HINTS = 11
ATTR_BOUNDED = 12

ATTR_TAG_NAMES = {
    ATTR_INTEGER: "Integer", ATTR_FLOAT: "Float", ATTR_BOOL: "Bool", ATTR_TYPE: "Type",
    ATTR_STRING: "String", ATTR_ARRAY: "Array", ATTR_DENSE_ELEMENTS: "DenseElements",
    ATTR_DIV_BY: "DivBy", ATTR_SAME_ELEMENTS: "SameElements", ATTR_DICTIONARY: "Dictionary",
    ATTR_OPTIMIZATION_HINTS: "OptimizationHints", ATTR_BOUNDED: "Bounded",
}

# ---------------------------------------------------------------------------
# Versions (BytecodeOpcodes.td SupportedVersion, Version.cpp)
# ---------------------------------------------------------------------------

#: Versions this reader accepts.  13.1-13.3 are NVIDIA's; 13.4 is INFERRED
#: from the corpus (cuTile Python writes it; no public reader knows it yet).
SUPPORTED_VERSIONS: tuple[tuple[int, int], ...] = ((13, 1), (13, 2), (13, 3), (13, 4))
MIN_VERSION = SUPPORTED_VERSIONS[0]
MAX_VERSION = SUPPORTED_VERSIONS[-1]

#: First version in which a type's optional parameters are flagged by one
#: leading bitfield varint (``kUnifiedBitfieldVersion``); before it each
#: optional enum parameter has its own presence byte.
UNIFIED_BITFIELD_VERSION = (13, 3)

#: Global entries gained ``symbol_visibility`` and ``constant`` in 13.3.
GLOBAL_EXTENDED_VERSION = (13, 3)

#: The producer section exists from 13.3.
PRODUCER_SECTION_VERSION = (13, 3)


def parse_version(text: str) -> tuple[int, int]:
    """``"13.4"`` -> ``(13, 4)``; raises ``ValueError`` on another spelling."""
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def version_text(v: tuple[int, int] | tuple[int, int, int]) -> str:
    """``(13, 4)`` -> ``"13.4"``; ``(13, 4, 0)`` -> ``"13.4.0"``."""
    return ".".join(str(x) for x in v)


#: Opcode -> op name (the ODS name when two names share an opcode).
OPS_BY_OPCODE: dict[int, str] = {}
for _name, _code in BYTECODE_OPCODES.items():
    if "$" in _name or _name in OP_ALIASES:
        continue
    OPS_BY_OPCODE.setdefault(_code, _name)

#: Opcodes whose op is printed under a new name from some version on
#: (INFERRED: tileirdisasm 13.5 prints 13.4 files' opcode 0x54 as ``fpowf``).
RENAMED_OPCODES: dict[int, tuple[tuple[int, int], str]] = {0x54: ((13, 4), "fpowf")}


def op_name_for_opcode(opcode: int, version: tuple[int, int]) -> str | None:
    """The op name of ``opcode`` in a file of ``version`` (None: no such opcode)."""
    renamed = RENAMED_OPCODES.get(opcode)
    if renamed and version >= renamed[0]:
        return renamed[1]
    return OPS_BY_OPCODE.get(opcode)


#: Operand/attribute/result names introduced after their op (Ops.td
#: ``CudaTileArg<..., "version">``): (op, field) -> version.  Extracted from
#: Ops.td; ``inbounds`` is INFERRED (13.4, absent from the public Ops.td).
FIELD_SINCE: dict[tuple[str, str], str] = {
    ("exp", "rounding_mode"): "13.3",
    ("for", "unsignedCmp"): "13.2",
    ("global", "constant"): "13.3",
    ("global", "symbol_visibility"): "13.3",
    ("mmaf", "fast_acc"): "13.3",
    ("module", "producer"): "13.3",
    ("negi", "overflow"): "13.2",
    ("print_tko", "token"): "13.2",
    ("print_tko", "result_token"): "13.2",
    ("tanh", "rounding_mode"): "13.2",
    ("load_view_tko", "inbounds"): "13.4",
    ("store_view_tko", "inbounds"): "13.4",
}

#: Attributes our op table marks optional that the bytecode writes always
#: (INFERRED from the 13.4 corpus: ``inbounds`` is a bool array with one
#: entry per index operand, all ``false`` when the text omits it).
ALWAYS_WRITTEN: frozenset[tuple[str, str]] = frozenset({
    ("load_view_tko", "inbounds"), ("store_view_tko", "inbounds"),
})


#: INFERRED from the 13.4 corpus: ops that gained a flags varint (for
#: optional fields the public Ops.td does not have; always 0 in the corpus).
EXTRA_FLAGS_13_4: frozenset[str] = frozenset({"ftoi"})


def op_since(opdef: OpDef) -> tuple[int, int]:
    """The version an op appeared in."""
    return parse_version(opdef.since)


@cache
def max_opcode(version: tuple[int, int]) -> int:
    """Highest public opcode a file of ``version`` may use (``isOpcodeAvailableInVersion``).

    Opcodes are assigned in version order, so an opcode is available when it is
    not above the highest opcode of the ops of that version or older.
    """
    from tile_lsp.dialect.registry import lookup

    best = 0
    for name, code in BYTECODE_OPCODES.items():
        if "$" in name:
            continue
        od = lookup(name)
        since = op_since(od) if od is not None else MAX_VERSION
        if since <= version:
            best = max(best, code)
    return best


# ---------------------------------------------------------------------------
# Per-op encodings (BytecodeGen.cpp / BytecodeReaderGen.cpp)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldEnc:
    """One operand/attribute/result of an op's encoding.

    ``kind``: operand/result kind (``single``/``optional``/``variadic``) or
    attribute kind (AttrDef.kind).  ``since``: version it appeared in.
    ``bit``: flags bit of an optional attribute/operand (-1: none).
    ``optional``: an optional attribute (``OptionalAttr`` or ``UnitAttr``).
    ``default``: default value text of a ``DefaultValuedAttr``.
    """

    name: str
    kind: str
    since: tuple[int, int]
    bit: int = -1
    optional: bool = False
    default: str | None = None


@dataclass(frozen=True)
class OpEncoding:
    """How one op is laid out: results, flags, attributes, operands, regions.

    ``variadic``: result count is written (ODS ``Operator::isVariadic``: some
    operand or result is ``Variadic``).  ``segmented``: AttrSizedOperandSegments
    (one group per ODS operand).  ``flags_since``: the flags varint is present
    from that version (None: no flags field).
    """

    name: str
    since: tuple[int, int]
    results: tuple[FieldEnc, ...]
    attributes: tuple[FieldEnc, ...]
    operands: tuple[FieldEnc, ...]
    num_regions: int
    variadic: bool
    segmented: bool
    flags_since: tuple[int, int] | None


_ENCODINGS: dict[str, OpEncoding] = {}


def op_encoding(opdef: OpDef) -> OpEncoding:
    """Derive the bytecode layout of ``opdef`` (rules of cuda-tile-tblgen BytecodeGen.cpp).

    Flags bits go to optional attributes, then (segmented ops only) optional
    operands, grouped by version, earliest version first.
    """
    cached = _ENCODINGS.get(opdef.name)
    if cached is None:
        cached = _ENCODINGS[opdef.name] = _derive_encoding(opdef)
    return cached


def _derive_encoding(opdef: OpDef) -> OpEncoding:
    since = op_since(opdef)
    name = opdef.name

    def field_since(n: str) -> tuple[int, int]:
        v = FIELD_SINCE.get((name, n))
        return parse_version(v) if v else since

    segmented = "AttrSizedOperandSegments" in opdef.traits
    groups: dict[tuple[int, int], list[str]] = {}
    def is_optional(a) -> bool:
        if (name, a.name) in ALWAYS_WRITTEN:
            return False
        return a.optional and a.default is None or a.kind == "unit"

    for a in opdef.attributes:
        if is_optional(a):
            groups.setdefault(field_since(a.name), []).append(a.name)
    if segmented:
        for o in opdef.operands:
            if o.kind == "optional":
                groups.setdefault(field_since(o.name), []).append(o.name)
    bits: dict[str, int] = {}
    for v in sorted(groups):
        for n in groups[v]:
            bits[n] = len(bits)
    flags_since = min(groups) if groups else None
    attrs = tuple(
        FieldEnc(a.name, a.kind, field_since(a.name), bits.get(a.name, -1),
                 is_optional(a), a.default)
        for a in opdef.attributes)
    operands = tuple(FieldEnc(o.name, o.kind, field_since(o.name), bits.get(o.name, -1))
                     for o in opdef.operands)
    results = tuple(FieldEnc(r.name, r.kind, field_since(r.name)) for r in opdef.results)
    variadic = any(x.kind == "variadic" for x in (*opdef.operands, *opdef.results))
    return OpEncoding(name, since, results, attrs, operands, len(opdef.regions),
                      variadic, segmented, flags_since)
