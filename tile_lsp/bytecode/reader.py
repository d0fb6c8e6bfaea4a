"""Read Tile IR bytecode (``.tileirbc``) into tile-lsp's IR.

Rule source: NVIDIA cuda-tile ``lib/Bytecode/Reader/BytecodeReader.cpp`` and
the per-op reader generator ``tools/cuda-tile-tblgen/BytecodeReaderGen.cpp``;
see ``docs/bytecode.md``.  Everything here is our own Python.

Robustness contract: :func:`read_bytecode` raises only :class:`BytecodeError`
on malformed input.  Every count read from the file is checked against the
bytes left before anything is allocated, type/debug references are resolved
with a recursion guard, and nesting depth is bounded, so random input ends
quickly with an error.
"""

from __future__ import annotations

import struct
from typing import Any

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import (
    Block,
    BlockArgument,
    Module,
    Operation,
    OpResult,
    Region,
    Use,
    Value,
)
from tile_lsp.analysis.ir.numbers import dense_element_bits, dense_storage_bytes, float_from_bits
from tile_lsp.analysis.syntax.parse_rules.entry import HAttr
from tile_lsp.bytecode import format as F
from tile_lsp.dialect import types as T
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.registry import lookup

#: Deepest region nesting accepted (bounds recursion on hostile input).
MAX_NESTING = 200


class BytecodeError(Exception):
    """Malformed or unsupported bytecode.

    ``message``: what is wrong; ``offset``: byte offset in the input where it
    was found (``None`` when not tied to a position).
    """

    def __init__(self, message: str, offset: int | None = None):
        self.message = message
        self.offset = offset
        super().__init__(f"{message} (at offset {offset})" if offset is not None else message)


class Cursor:
    """A bounded view ``data[start:end]`` read front to back; offsets are absolute."""

    __slots__ = ("data", "end", "pos")

    def __init__(self, data: bytes, start: int = 0, end: int | None = None):
        self.data = data
        self.pos = start
        self.end = len(data) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def error(self, message: str) -> BytecodeError:
        return BytecodeError(message, self.pos)

    def byte(self, what: str = "byte") -> int:
        if self.pos >= self.end:
            raise self.error(f"unexpected end of data reading {what}")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def bytes(self, n: int, what: str = "bytes") -> bytes:
        if n < 0 or n > self.remaining():
            raise self.error(f"{what}: length {n} exceeds the {self.remaining()} bytes left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def varint(self, what: str = "varint", max_bits: int = 64) -> int:
        """Unsigned LEB128 (7 bits a byte, low first); at most 10 bytes / ``max_bits`` bits."""
        start = self.pos
        result = 0
        shift = 0
        while True:
            if self.pos >= self.end:
                raise BytecodeError(f"unexpected end of data reading {what}", start)
            if shift > 63:
                raise BytecodeError(f"overlong varint reading {what}", start)
            b = self.data[self.pos]
            self.pos += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if result >> max_bits:
            raise BytecodeError(f"varint reading {what} exceeds {max_bits} bits", start)
        return result

    def svarint(self, what: str = "signed varint") -> int:
        """Zigzag-encoded signed varint, as a signed 64-bit value."""
        v = self.varint(what)
        return (v >> 1) ^ -(v & 1)

    def count(self, what: str, min_bytes_each: int = 1) -> int:
        """A varint count, checked against the bytes left (``min_bytes_each`` per item)."""
        start = self.pos
        n = self.varint(what)
        if min_bytes_each and n > self.remaining() // min_bytes_each:
            raise BytecodeError(f"{what} {n} exceeds what the {self.remaining()} bytes left can hold", start)
        return n

    def le(self, size: int, what: str, signed: bool = False) -> int:
        return int.from_bytes(self.bytes(size, what), "little", signed=signed)

    def words(self, n: int, size: int, what: str, too_many: str) -> list[int]:
        """``n`` little-endian unsigned words of ``size`` bytes (a table of offsets or indices, aligned
        by the caller).  Raises :class:`BytecodeError` with ``too_many`` when ``n`` such words cannot
        fit in what is left."""
        if n > self.remaining() // size:
            raise self.error(too_many)
        return [self.le(size, what) for _ in range(n)]

    def offset_table(self, n: int, size: int, what: str, too_many: str) -> tuple[int, int, list[tuple[int, int]]]:
        """A table of ``n`` offsets of ``size`` bytes (aligned to ``size``) and the data they index, to
        the end of the cursor: ``(base, data size, [(start, end)])``, the bounds relative to ``base``
        and unchecked (an entry ends where the next starts, the last at the end of the data).  Raises
        :class:`BytecodeError` as :meth:`align` and :meth:`words` do."""
        self.align(size, f"{what}s")
        offs = self.words(n, size, what, too_many)
        base, end = self.pos, self.end - self.pos
        return base, end, [(o, offs[i + 1] if i + 1 < n else end) for i, o in enumerate(offs)]

    def align(self, alignment: int, what: str) -> None:
        """Skip padding so the absolute offset is a multiple of ``alignment``."""
        if alignment < 2:
            return
        pad = (-self.pos) % alignment
        if pad > self.remaining():
            raise self.error(f"padding of {what} runs past the end")
        self.pos += pad

    def le_array(self, size: int, what: str, signed: bool = True) -> list[int]:
        n = self.count(f"{what} size", size)
        raw = self.bytes(n * size, what)
        return [int.from_bytes(raw[i:i + size], "little", signed=signed) for i in range(0, len(raw), size)]


def _entry_bounds(c: Cursor, n: int, what: str, too_many: str) -> list[tuple[int, int]]:
    """The (start, end) absolute bounds of the ``n`` entries of a table at ``c``: ``n`` 4-byte offsets
    (4-aligned, relative to the data after them), then the entries' data to the end of ``c``.

    An entry whose bounds are bad is ``(-1, i)`` (``i`` its position), for its user to report (as
    NVIDIA's lazy tables).  Raises :class:`BytecodeError` with ``too_many`` (``{n}``: the count,
    ``{left}``: the bytes left) when ``n`` offsets cannot fit, and when the padding or offsets run past the end.
    """
    if n > c.remaining() // 4:
        raise c.error(too_many.format(n=n, left=c.remaining()))
    c.align(4, f"{what} offsets")
    offs = [c.le(4, f"{what} offset") for _ in range(n)]
    base, size = c.pos, c.end - c.pos
    ends = offs[1:] + [size]
    return [(base + o, base + e) if o <= e <= size else (-1, i) for i, (o, e) in enumerate(zip(offs, ends))]


def _version_ok(v: tuple[int, int]) -> bool:
    return v in F.SUPPORTED_VERSIONS


class _Reader:
    """State of one read: tables, version, value list."""

    def __init__(self, data: bytes):
        self.data = data
        self.version: tuple[int, int] = F.MIN_VERSION
        self.strings: list[tuple[int, int]] = []
        self.type_offsets: list[tuple[int, int]] = []
        self.type_cache: dict[int, T.Type] = {}
        self.type_busy: set[int] = set()
        self.constants: list[tuple[int, int]] = []
        # decoded strings and constants, shared by every use: a file may refer to one
        # large entry from many ops, and decoding each use would cost that many copies
        self.string_cache: dict[int, str] = {}
        self.constant_cache: dict[tuple[int, str], A.DenseElementsAttr] = {}
        self.name_counter = 0
        self.di_index_offsets: list[int] = []
        self.di_indices: list[int] = []
        self.di_offsets: list[tuple[int, int]] = []
        self.di_cache: dict[int, A.LocationAttr | A.DialectAttr] = {}
        self.di_busy: set[int] = set()
        self.di_cursor: tuple[int, int] | None = None  # (next index position, end) of the current function

    # -- header and sections -------------------------------------------------

    def read(self) -> Module:
        c = Cursor(self.data)
        if len(self.data) < len(F.MAGIC) or self.data[:8] != F.MAGIC:
            for i, want in enumerate(F.MAGIC):
                if i >= len(self.data):
                    raise BytecodeError("input too short for the Tile IR magic number", i)
                if self.data[i] != want:
                    raise BytecodeError(
                        f"invalid magic number at position {i}, got {self.data[i]} expected {want}", i)
        c.pos = 8
        major = c.byte("version major")
        minor = c.byte("version minor")
        tag = c.le(2, "version tag")
        if not _version_ok((major, minor)):
            raise BytecodeError(
                f"unsupported Tile version {major}.{minor}.{tag}, this reader supports versions "
                f"[{F.version_text(F.MIN_VERSION)}.0 - {F.version_text(F.MAX_VERSION)}.0]", 8)
        self.version = (major, minor)

        sections: dict[int, tuple[int, int]] = {}
        while True:
            start = c.pos
            idb = c.byte("section id")
            sid, aligned = idb & 0x7F, bool(idb & 0x80)
            if sid == F.SECTION_END:
                if aligned:
                    raise BytecodeError("end section should not have alignment flag set", start)
                if c.remaining():
                    raise BytecodeError("end section is not the last section", c.pos)
                break
            if sid >= F.NUM_SECTIONS:
                raise BytecodeError(f"unknown section ID: {sid}", start)
            length = c.varint("section length")
            if length > c.remaining():
                raise BytecodeError(
                    f"section length {length} exceeds remaining data size {c.remaining()}", start)
            alignment = 1
            if aligned:
                alignment = c.varint("section alignment")
                if alignment == 0 or alignment & (alignment - 1) or alignment > 1 << 16:
                    raise BytecodeError(f"invalid alignment value: {alignment}", start)
                c.align(alignment, "section")
            need = F.SECTION_REQUIRED_ALIGNMENT.get(sid)
            if need and (not aligned or alignment % need):
                raise BytecodeError(
                    f"section {sid} must have alignment that is a multiple of {need} bytes, but "
                    + (f"has alignment of {alignment}" if aligned else "has no alignment flag set"), start)
            if length > c.remaining():
                raise BytecodeError(
                    f"section length {length} exceeds remaining data size {c.remaining()}", start)
            if sid in sections:
                raise BytecodeError(f"duplicate {F.SECTION_NAMES[sid]} section", start)
            sections[sid] = (c.pos, c.pos + length)
            c.pos += length

        if F.SECTION_STRING not in sections:
            raise BytecodeError("string section is mandatory", None)
        if F.SECTION_FUNC not in sections:
            raise BytecodeError("function section is mandatory", None)
        self._read_strings(*sections[F.SECTION_STRING])
        producer = None
        if F.SECTION_PRODUCER in sections:
            pc = Cursor(self.data, *sections[F.SECTION_PRODUCER])
            producer = self.string(pc.varint("producer string index"), pc)
        if F.SECTION_TYPE in sections:
            self._read_type_table(*sections[F.SECTION_TYPE])
        if F.SECTION_CONSTANT in sections:
            self._read_constants(*sections[F.SECTION_CONSTANT])
        globals_ = self._read_globals(*sections[F.SECTION_GLOBAL]) if F.SECTION_GLOBAL in sections else []
        if F.SECTION_DEBUG in sections:
            self._read_debug(*sections[F.SECTION_DEBUG])
        funcs = self._read_functions(*sections[F.SECTION_FUNC])

        module_op = Operation(name="cuda_tile.module", opdef=lookup("module"))
        module_op.properties["sym_name"] = A.SymbolNameAttr("kernels")
        if producer is not None:
            module_op.properties["producer"] = A.StringAttr(producer)
        region = Region(parent=module_op)
        body = Block(parent=region)
        region.blocks.append(body)
        module_op.add_region(region)
        for op in (*globals_, *funcs):
            op.parent = body
            body.operations.append(op)
        mod = Module()
        module_op.parent = mod.body
        mod.body.operations.append(module_op)
        return mod

    # -- strings -------------------------------------------------------------

    def _read_strings(self, start: int, end: int) -> None:
        c = Cursor(self.data, start, end)
        n = c.varint("number of strings")
        if n == 0:
            return
        left = c.remaining() - (-c.pos % 4)  # after the offsets' padding
        base, size, bounds = c.offset_table(n, 4, "string offset",
                                            f"number of strings ({n}) exceeds what the {left} bytes left can hold")
        for o, e in bounds:
            # As NVIDIA's reader (StringRef::substr): a start past the data or
            # an end before the start clamps instead of failing here.
            s0 = min(o, size)
            e0 = min(s0 + ((e - o) % (1 << 32)), size)
            self.strings.append((base + s0, base + e0))

    def string(self, index: int, c: Cursor | None = None) -> str:
        if index >= len(self.strings):
            raise BytecodeError(f"string index {index} out of bounds", c.pos if c else None)
        cached = self.string_cache.get(index)
        if cached is not None:
            return cached
        s, e = self.strings[index]
        try:
            text = self.data[s:e].decode("utf-8")
        except UnicodeDecodeError:
            text = self.data[s:e].decode("latin-1")
        self.string_cache[index] = text
        return text

    def read_string(self, c: Cursor, what: str = "string index") -> str:
        return self.string(c.varint(what), c)

    # -- types ---------------------------------------------------------------

    def _read_type_table(self, start: int, end: int) -> None:
        c = Cursor(self.data, start, end)
        n = c.varint("number of types")
        if n == 0:
            return
        self.type_offsets = _entry_bounds(c, n, "type",
                                          "number of types ({n}) exceeds what the {left} bytes left can hold")

    def type(self, index: int, c: Cursor | None = None) -> T.Type:
        if index in self.type_cache:
            return self.type_cache[index]
        if index >= len(self.type_offsets):
            raise BytecodeError(f"type index {index} out of bounds", c.pos if c else None)
        if index in self.type_busy or len(self.type_busy) > MAX_NESTING:
            raise BytecodeError(f"type {index} refers to itself", c.pos if c else None)
        self.type_busy.add(index)
        try:
            ts, te = self.type_offsets[index]
            if ts < 0:
                raise BytecodeError(f"type {index} has invalid bounds in the type table", c.pos if c else None)
            tc = Cursor(self.data, ts, te)
            t = self._parse_type(tc)
        finally:
            self.type_busy.discard(index)
        self.type_cache[index] = t
        return t

    def read_type(self, c: Cursor, what: str = "type index") -> T.Type:
        return self.type(c.varint(what), c)

    def _padding(self, c: Cursor, present: bool) -> str | None:
        if not present:
            return None
        v = c.varint("padding value")
        return _enum_case("PaddingValue", v, c)

    def _parse_type(self, c: Cursor) -> T.Type:
        at = c.pos
        tag = c.varint("type tag")
        since = F.TYPE_TAG_SINCE.get(tag)
        if since and F.parse_version(since) > self.version:
            raise BytecodeError(f"type '{F.TYPE_TAG_CPP_NAMES.get(tag, tag)}' requires bytecode version "
                                f"{since}+, file version is {F.version_text(self.version)}", at)
        if tag in F.INT_TYPE_TAGS:
            return T.IntegerType(F.INT_TYPE_TAGS[tag])
        if tag in F.FLOAT_TYPE_TAGS:
            return T.FloatType(F.FLOAT_TYPE_TAGS[tag])
        if tag in F.FLAGGED_13_4_TYPE_TAGS and self.version >= (13, 4):
            fl = c.varint("type optional-parameter flags")
            if fl:
                raise BytecodeError(f"type tag {tag}: unknown optional parameters (flags {fl:#x})", at)
        if tag == F.TYPE_POINTER:
            return T.PointerType(self.read_type(c, "pointee type"))
        if tag == F.TYPE_TILE:
            elem = self.read_type(c, "tile element type")
            shape = c.le_array(8, "tile shape")
            return T.TileType(tuple(None if d == F.DYNAMIC else d for d in shape), elem)
        if tag == F.TYPE_TENSOR_VIEW:
            elem = self.read_type(c, "tensor_view element type")
            shape = c.le_array(8, "tensor_view shape")
            strides = c.le_array(8, "tensor_view strides")
            dyn = lambda xs: tuple(None if d == F.DYNAMIC else d for d in xs)
            return T.TensorViewType(dyn(shape), elem, dyn(strides))
        if tag == F.TYPE_PARTITION_VIEW:
            flags = self._type_flags(c)
            tile = c.le_array(4, "partition_view tile shape")
            tv = self.read_type(c, "partition_view tensor_view")
            dim_map = c.le_array(4, "partition_view dim_map")
            pad = self._padding(c, self._optional_present(c, flags, 0))
            return T.PartitionViewType(tuple(tile), tv, pad, tuple(dim_map))
        if tag == F.TYPE_STRIDED_VIEW:
            flags = self._type_flags(c)
            tile = c.le_array(4, "strided_view tile shape")
            strides = c.le_array(4, "strided_view traversal strides")
            tv = self.read_type(c, "strided_view tensor_view")
            dim_map = c.le_array(4, "strided_view dim_map")
            pad = self._padding(c, self._optional_present(c, flags, 0))
            return T.StridedViewType(tuple(tile), tuple(strides), tv, pad, tuple(dim_map))
        if tag == F.TYPE_GATHER_SCATTER_VIEW:
            flags = self._type_flags(c)
            tile = c.le_array(4, "gather_scatter_view tile shape")
            tv = self.read_type(c, "gather_scatter_view tensor_view")
            sparse = c.varint("sparse_dim")
            if sparse > 0xFFFFFFFF:
                raise c.error(f"sparse_dim {sparse} exceeds 32 bits")
            pad = self._padding(c, self._optional_present(c, flags, 0))
            return T.GatherScatterViewType(tuple(tile), tv, sparse, pad)
        if tag == F.TYPE_FUNCTION:
            n = c.count("number of function inputs")
            ins = tuple(self.read_type(c, "function input type") for _ in range(n))
            m = c.count("number of function results")
            outs = tuple(self.read_type(c, "function result type") for _ in range(m))
            return T.FunctionType(ins, outs)
        if tag == F.TYPE_TOKEN:
            return T.TokenType()
        raise BytecodeError(f"unknown type tag {tag}", at)

    def _type_flags(self, c: Cursor) -> int | None:
        """The optional-parameter bitfield (13.3+); ``None`` for the legacy inline flags."""
        if self.version >= F.UNIFIED_BITFIELD_VERSION:
            return c.varint("type optional-parameter flags")
        return None

    def _optional_present(self, c: Cursor, flags: int | None, bit: int) -> bool:
        if flags is not None:
            return bool(flags >> bit & 1)
        b = c.byte("optional parameter presence byte")
        if b > 1:
            raise c.error(f"invalid presence byte {b} for optional type parameter")
        return b == 1

    # -- debug info ----------------------------------------------------------

    def _read_debug(self, start: int, end: int) -> None:
        c = Cursor(self.data, start, end)
        nops = c.varint("number of operations with debug info")
        c.align(4, "debug info index offsets")
        self.di_index_offsets = c.words(nops, 4, "debug info index offset",
                                        f"number of operations with debug info ({nops}) exceeds the data left")
        nidx = c.varint("number of debug info indices")
        c.align(8, "debug info indices")
        self.di_indices = c.words(nidx, 8, "debug info index",
                                  f"number of debug info indices ({nidx}) exceeds the data left")
        nattr = c.varint("number of debug info attributes")
        self.di_offsets = _entry_bounds(c, nattr, "debug info",
                                        "number of debug info attributes ({n}) exceeds the data left")

    def _start_locations(self, op_index: int, c: Cursor) -> None:
        """Position the location iterator on the list of function ``op_index``."""
        if op_index == F.DEBUG_UNKNOWN_LOC:
            self.di_cursor = None
            return
        k = op_index - F.DEBUG_RESERVED
        if k >= len(self.di_index_offsets):
            raise c.error(f"function location index {op_index} out of bounds")
        self.di_cursor = (self.di_index_offsets[k], len(self.di_indices))

    def _next_location(self, c: Cursor) -> A.LocationAttr:
        if self.di_cursor is None:
            return A.LocationAttr("unknown")
        pos, end = self.di_cursor
        if pos >= end:
            raise c.error("failed to read operation location")
        self.di_cursor = (pos + 1, end)
        loc = self.debug_info(self.di_indices[pos], c)
        if not isinstance(loc, A.LocationAttr):
            raise c.error("failed to read operation location: debug info entry is not a location")
        return loc

    def debug_info(self, index: int, c: Cursor) -> A.LocationAttr | A.DialectAttr:
        """Debug-info entry ``index`` (0: unknown location) as a location or ``#cuda_tile.di_*``."""
        if index == F.DEBUG_UNKNOWN_LOC:
            return A.LocationAttr("unknown")
        k = index - F.DEBUG_RESERVED
        if k in self.di_cache:
            return self.di_cache[k]
        if k >= len(self.di_offsets) or self.di_offsets[k][0] < 0:
            raise c.error(f"debug info index {index} out of bounds")
        if k in self.di_busy or len(self.di_busy) > MAX_NESTING:
            raise c.error(f"debug info entry {index} refers to itself")
        self.di_busy.add(k)
        try:
            dc = Cursor(self.data, *self.di_offsets[k])
            tag = dc.varint("debug info tag")
            val = self._parse_debug(tag, dc)
        finally:
            self.di_busy.discard(k)
        self.di_cache[k] = val
        return val

    def _di(self, c: Cursor, mnemonic: str, what: str) -> DebugInfoAttr:
        v = self.debug_info(c.varint(what), c)
        if not isinstance(v, DebugInfoAttr) or (mnemonic and v.mnemonic != mnemonic):
            raise c.error(f"failed to read {what}: expected #cuda_tile.{mnemonic or 'di_*'}")
        return v

    def _parse_debug(self, tag: int, c: Cursor) -> A.LocationAttr | A.DialectAttr:
        if tag == 1:  # DICompileUnit
            return DebugInfoAttr.make("di_compile_unit", (self._di(c, "di_file", "compile unit file"),))
        if tag == 2:  # DIFile
            return DebugInfoAttr.make("di_file", (self.read_string(c), self.read_string(c)))
        if tag == 3:  # DILexicalBlock
            scope = self._di(c, "", "lexical block scope")
            file = self._di(c, "di_file", "lexical block file")
            return DebugInfoAttr.make("di_lexical_block", (scope, file, c.varint("line"), c.varint("column")))
        if tag == 4:  # DILoc
            scope = self._di(c, "", "location scope")
            filename = self.read_string(c)
            line, col = c.varint("line"), c.varint("column")
            return A.LocationAttr("dialect", attr=DebugInfoAttr.make("di_loc", (scope, filename, line, col)))
        if tag == 5:  # DISubprogram
            file = self._di(c, "di_file", "subprogram file")
            line = c.varint("line")
            name = self.read_string(c)
            linkage = self.read_string(c)
            cu = self._di(c, "di_compile_unit", "subprogram compile unit")
            return DebugInfoAttr.make("di_subprogram", (file, line, name, linkage, cu, c.varint("scope line")))
        if tag == 6:  # CallSite
            callee = self.debug_info(c.varint("callee"), c)
            caller = self.debug_info(c.varint("caller"), c)
            if not isinstance(callee, A.LocationAttr) or not isinstance(caller, A.LocationAttr):
                raise c.error("call site operands must be locations")
            return A.LocationAttr("callsite", children=[callee, caller])
        return A.LocationAttr("unknown")

    # -- constants -----------------------------------------------------------

    def _read_constants(self, start: int, end: int) -> None:
        c = Cursor(self.data, start, end)
        n = c.varint("number of constants")
        if n == 0:
            return
        base, size, bounds = c.offset_table(n, 8, "constant offset", "insufficient data for constant indices")
        for i, (o, e) in enumerate(bounds):
            if o > e or e > size:
                raise BytecodeError(f"constant {i} extends beyond available data", start)
            self.constants.append((base + o, base + e))

    def constant(self, index: int, ty: T.Type, c: Cursor) -> A.DenseElementsAttr:
        if index >= len(self.constants):
            raise c.error(f"constant index {index} out of bounds")
        if not isinstance(ty, T.TileType) or not isinstance(ty.element, (T.IntegerType, T.FloatType)):
            raise c.error(f"expect Cuda Tile integer or float type but got: {ty}")
        key = (index, str(ty))
        cached = self.constant_cache.get(key)
        if cached is not None:
            return cached
        cc = Cursor(self.data, *self.constants[index])
        size = cc.varint("constant data size")
        raw = cc.bytes(size, "constant data")
        attr = self.constant_cache[key] = decode_dense(raw, ty, cc)
        return attr

    # -- globals -------------------------------------------------------------

    def _read_globals(self, start: int, end: int) -> list[Operation]:
        c = Cursor(self.data, start, end)
        extended = self.version >= F.GLOBAL_EXTENDED_VERSION
        n = c.count("number of globals", 6 if extended else 4)
        ops = []
        for _ in range(n):
            name = self.read_string(c, "global name")
            ty = self.read_type(c, "global type")
            cidx = c.varint("global constant index")
            align = c.varint("global alignment")
            vis = c.varint("global visibility") if extended else 0
            const = c.varint("global constant flag") if extended else 0
            if not name:
                raise c.error("global symbol name is empty")
            op = Operation(name="cuda_tile.global", opdef=lookup("global"))
            op.location = A.LocationAttr("unknown")
            op.properties["sym_name"] = A.SymbolNameAttr(name)
            op.properties["value"] = self.constant(cidx, ty, c)
            op.properties["alignment"] = A.IntegerAttr(_signed(align, 64), T.IntegerType(64))
            if const:
                op.properties["constant"] = A.UnitAttr()
            op.properties["symbol_visibility"] = A.EnumAttr(
                "SymbolVisibility", _enum_case("SymbolVisibility", vis, c), _mnemonic("SymbolVisibility"))
            ops.append(op)
        return ops

    # -- functions -----------------------------------------------------------

    def _read_functions(self, start: int, end: int) -> list[Operation]:
        c = Cursor(self.data, start, end)
        n = c.count("number of functions", 4)
        ops = []
        for _ in range(n):
            name = self.read_string(c, "function name")
            sig = self.read_type(c, "function signature")
            flags = c.byte("function flags")
            loc_index = c.varint("function location index")
            hints = None
            if flags & F.FUNC_FLAG_KERNEL and flags & F.FUNC_FLAG_HAS_HINTS:
                hints = self.self_contained_attr(c, 0)
            length = c.varint("function body length")
            if length > c.remaining():
                raise c.error(f"function body length {length} exceeds remaining bytecode data "
                              f"({c.remaining()} bytes)")
            body = Cursor(self.data, c.pos, c.pos + length)
            c.pos += length
            if not name:
                raise c.error("function name is empty")
            if not isinstance(sig, T.FunctionType):
                raise c.error(f"signature of function '{name}' is not a function type: {sig}")
            if not flags & F.FUNC_FLAG_KERNEL:
                raise c.error(f"un-expected non-entry function '{name}'")
            self._start_locations(loc_index, c)
            func = self._function(name, sig, hints, body)
            ops.append(func)
        return ops

    def _function(self, name: str, sig: T.FunctionType, hints: A.Attribute | None, c: Cursor) -> Operation:
        op = Operation(name="cuda_tile.entry", opdef=lookup("entry"))
        op.location = self._next_location(c)
        op.properties["sym_name"] = A.SymbolNameAttr(name)
        op.properties["function_type"] = A.TypeAttr(sig)
        if hints is None:
            hints = A.DialectAttr("cuda_tile", "optimization_hints", "", [])
        op.properties["optimization_hints"] = hints
        region = Region(parent=op)
        block = Block(parent=region)
        region.blocks.append(block)
        op.add_region(region)
        values: list[Value] = []
        for i, t in enumerate(sig.inputs):
            arg = BlockArgument(f"%arg{i}", t, owner=block, index=i)
            block.arguments.append(arg)
            values.append(arg)
        while c.remaining():
            block.operations.append(self._operation(c, values, block, 0))
        return op

    def _new_name(self) -> str:
        self.name_counter += 1
        return f"%{self.name_counter - 1}"

    def _region(self, c: Cursor, values: list[Value], parent: Operation, depth: int) -> Region:
        region = Region(parent=parent)
        nblocks = c.count("region block count", 2)
        for _ in range(nblocks):
            block = Block(parent=region)
            mark = len(values)
            nargs = c.count("block argument count")
            for i in range(nargs):
                arg = BlockArgument(self._new_name(), self.read_type(c, "block argument type"),
                                    owner=block, index=i)
                block.arguments.append(arg)
                values.append(arg)
            nops = c.count("block operation count")
            for _ in range(nops):
                block.operations.append(self._operation(c, values, block, depth))
            if not block.operations:
                raise c.error("invalid block structure: block is expected to have a terminator "
                              "operation, but it is empty")
            del values[mark:]
            region.blocks.append(block)
        return region

    def _operation(self, c: Cursor, values: list[Value], parent: Block, depth: int) -> Operation:
        if depth > MAX_NESTING:
            raise c.error("operations nested too deeply")
        at = c.pos
        opcode = c.varint("opcode")
        if opcode > F.max_opcode(self.version):
            raise BytecodeError(f"unsupported opcode {opcode} for bytecode version "
                                f"{F.version_text(self.version)}.0", at)
        name = F.op_name_for_opcode(opcode, self.version)
        opdef = lookup(name) if name else None
        if opdef is None:
            raise BytecodeError(f"unknown opcode {opcode}", at)
        enc = F.op_encoding(opdef)
        op = Operation(name=f"cuda_tile.{opdef.name}", opdef=opdef, parent=parent)
        op.location = self._next_location(c)

        # Results (those newer than the file are not written; they get their
        # default type, a token for every such result of the op table).
        newer = [r for r in enc.results if r.since > self.version]
        if enc.variadic:
            nres = c.count("number of results")
        else:
            nres = len(enc.results) - len(newer)
        result_types = [self.read_type(c, "result type") for _ in range(nres)]
        serialized = len(result_types)
        result_types.extend(T.TokenType() for _ in newer)

        # Flags.
        flags = 0
        if enc.flags_since is not None and self.version >= enc.flags_since:
            flags = c.varint("flags field")
        elif opdef.name in F.EXTRA_FLAGS_13_4 and self.version >= (13, 4):
            at = c.pos
            if c.varint("flags field"):
                raise BytecodeError(f"{opdef.name}: flags field sets optional fields unknown to this reader", at)

        # Attributes.
        for a in enc.attributes:
            if a.since > self.version:
                if a.default is not None:
                    val = _default_attr(a, c)
                    if val is not None:
                        op.properties[a.name] = val
                continue
            if a.optional:
                if not flags >> a.bit & 1:
                    continue
                if a.kind == "unit":
                    op.properties[a.name] = A.UnitAttr()
                    continue
            val = self.op_attr(a.kind, c, result_types, a.name)
            if a.kind == "dense_bool_array" and not any(e.value for e in val.elements):
                continue  # all false: what the text form leaves out
            op.properties[a.name] = val

        # Operands.
        operands: list[Value] = []
        if enc.segmented:
            pos = 0
            for o in enc.operands:
                if o.kind == "optional":
                    size = 1 if (o.since <= self.version and flags >> o.bit & 1) else 0
                elif o.kind == "variadic":
                    size = c.count(f"size of operand segment '{o.name}'")
                else:
                    size = 1
                for _ in range(size):
                    operands.append(self._value(c, values))
                op.operand_segments[o.name] = (pos, size)
                pos += size
        else:
            if any(o.kind != "single" for o in enc.operands):
                n = c.count("operand count")
            else:
                n = len(enc.operands)
            for _ in range(n):
                operands.append(self._value(c, values))
            op.operand_segments.update(_sequential_segments(enc.operands, len(operands)))
        for i, v in enumerate(operands):
            v.uses.append(Use(op, i, None))
        op.operands = operands
        op.operand_ranges = [None] * len(operands)

        # Regions.
        if enc.num_regions:
            nreg = c.varint("number of regions")
            if nreg != enc.num_regions:
                raise c.error(f"{opdef.name} op expected {enc.num_regions} regions, got {nreg}")
            for _ in range(nreg):
                op.add_region(self._region(c, values, op, depth + 1))

        # Results become values after the regions are read.
        for i, t in enumerate(result_types):
            r = OpResult(self._new_name(), t, owner=op, index=i)
            op.results.append(r)
            if i < serialized:
                values.append(r)
        op.result_segments.update(_sequential_segments(enc.results, len(result_types)))
        return op

    def _value(self, c: Cursor, values: list[Value]) -> Value:
        at = c.pos
        idx = c.varint("operand index")
        if idx >= len(values):
            raise BytecodeError(f"operand index {idx} out of bounds (size={len(values)})", at)
        return values[idx]

    # -- attributes ----------------------------------------------------------

    def op_attr(self, kind: str, c: Cursor, result_types: list[T.Type], name: str) -> A.Attribute:
        """An inherent attribute of ``kind`` (AttrDef kind), written without its tag."""
        if kind.startswith("enum:"):
            enum = kind[5:]
            v = c.varint(f"enum value of '{name}'")
            return A.EnumAttr(enum, _enum_case(enum, v, c), _mnemonic(enum))
        if kind in ("i32", "i64"):
            w = int(kind[1:])
            v = c.varint(f"integer attribute '{name}'")
            if v >= 1 << w:
                raise c.error(f"value {v} does not fit in {w} bits")
            return A.IntegerAttr(_signed(v, w), T.IntegerType(w))
        if kind == "bool":
            b = c.byte(f"bool attribute '{name}'")
            return A.BoolAttr(b != 0)
        if kind == "dense_i32_array":
            vals = c.le_array(4, f"array attribute '{name}'")
            for v in vals:
                if v in (0x7FFFFFFF, -0x80000000):
                    raise c.error(f"array contains unsupported value {v}")
            return A.DenseArrayAttr(T.IntegerType(32), vals)
        if kind == "dense_bool_array":
            # INFERRED (13.4): like DenseI32/I64 arrays, a count then one byte a value.
            vals = c.le_array(1, f"bool array attribute '{name}'", signed=False)
            return A.ArrayAttr([A.BoolAttr(v != 0) for v in vals])
        if kind in ("string",):
            return A.StringAttr(self.read_string(c))
        if kind == "symbol_name":
            return A.SymbolNameAttr(self.read_string(c))
        if kind == "symbol_ref":
            s = self.read_string(c)
            if not s:
                raise c.error("empty symbol reference is invalid")
            return A.SymbolRefAttr(s)
        if kind == "type":
            return A.TypeAttr(self.read_type(c))
        if kind == "dense":
            ty = result_types[0] if result_types else None
            if ty is None:
                ty = self.read_type(c, "dense elements type")
            return self.constant(c.varint("constant index"), ty, c)
        if kind == "opt_hints":
            return _opt_hints(self._dict_body(c, 0))
        if kind == "array":
            n = c.count(f"size of array attribute '{name}'")
            return A.ArrayAttr([self.self_contained_attr(c, 0) for _ in range(n)])
        if kind == "dict":
            return A.DictAttr(self._dict_body(c, 0))
        if kind in ("assume_predicate", "attr"):
            return self.self_contained_attr(c, 0)
        raise c.error(f"attribute kind '{kind}' of '{name}' has no bytecode encoding")

    def _dict_body(self, c: Cursor, depth: int) -> dict[str, A.Attribute]:
        n = c.count("dictionary size", 2)
        out: dict[str, A.Attribute] = {}
        for i in range(n):
            key = self.read_string(c, "dictionary key")
            if not key:
                raise c.error(f"invalid empty attribute name for DictionaryAttr element {i}")
            if key in out:
                raise c.error(f"failed to parse DictionaryAttr, duplicate key found: {key}")
            out[key] = self.self_contained_attr(c, depth + 1)
        return out

    def self_contained_attr(self, c: Cursor, depth: int) -> A.Attribute:
        """A tagged attribute (tag varint, then the attribute's own encoding)."""
        if depth > MAX_NESTING:
            raise c.error("attributes nested too deeply")
        at = c.pos
        tag = c.varint("attribute tag")
        if tag == F.ATTR_INTEGER:
            ty = self.read_type(c, "integer attribute type")
            if not isinstance(ty, T.IntegerType):
                raise c.error("failed to read valid IntegerType for IntegerAttr")
            if ty.width == 1:
                return A.BoolAttr(c.byte("i1 value") != 0)
            v = c.varint("integer value")
            if v >= 1 << ty.width:
                raise c.error(f"value {v} does not fit in {ty.width} bits")
            return A.IntegerAttr(_signed(v, ty.width), ty)
        if tag == F.ATTR_FLOAT:
            ty = self.read_type(c, "float attribute type")
            if not isinstance(ty, T.FloatType) or ty.name not in T.FLOAT_WIDTHS:
                raise c.error("failed to read valid FloatType for FloatAttr")
            bits = _read_apint(c, ty.width)
            value = float_from_bits(bits, ty.name)
            return A.FloatAttr(value, ty, text=f"0x{bits:X}")
        if tag == F.ATTR_BOOL:
            return A.BoolAttr(c.byte("bool value") != 0)
        if tag == F.ATTR_TYPE:
            return A.TypeAttr(self.read_type(c))
        if tag == F.ATTR_STRING:
            return A.StringAttr(self.read_string(c))
        if tag == F.ATTR_ARRAY:
            n = c.count("array size")
            return A.ArrayAttr([self.self_contained_attr(c, depth + 1) for _ in range(n)])
        if tag == F.ATTR_DENSE_ELEMENTS:
            ty = self.read_type(c, "dense elements type")
            return self.constant(c.varint("constant index"), ty, c)
        if tag == F.ATTR_DIV_BY:
            divisor = c.varint("div_by divisor")
            fl = c.byte("div_by flags")
            every = c.svarint("div_by every") if fl & 1 else None
            along = c.svarint("div_by along") if fl & 2 else None
            body = str(divisor)
            if every is not None:
                body += f", every {every}"
            if along is not None:
                body += f" along {along}"
            return A.DialectAttr("cuda_tile", "div_by", body, A.DivBy(divisor, every, along))
        if tag == F.ATTR_SAME_ELEMENTS:
            vals = c.le_array(8, "same_elements values")
            for v in vals:
                if v in ((1 << 63) - 1, -(1 << 63)):
                    raise c.error(f"array contains unsupported value {v}")
            return A.DialectAttr("cuda_tile", "same_elements", "[" + ", ".join(map(str, vals)) + "]",
                                 A.SameElements(tuple(vals)))
        if tag == F.ATTR_DICTIONARY:
            return A.DictAttr(self._dict_body(c, depth))
        if tag == F.ATTR_OPTIMIZATION_HINTS:
            return _opt_hints(self._dict_body(c, depth))
        if tag == F.ATTR_BOUNDED:
            fl = c.byte("bounded flags")
            lb = c.svarint("bounded lower bound") if fl & 1 else None
            ub = c.svarint("bounded upper bound") if fl & 2 else None
            body = f"{'?' if lb is None else lb}, {'?' if ub is None else ub}"
            return A.DialectAttr("cuda_tile", "bounded", body, A.Bounded(lb, ub))
        raise BytecodeError(f"unsupported AttributeTag {tag} for self-contained attribute", at)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


class DebugInfoAttr(A.DialectAttr):
    """A cuda_tile debug-info attribute read from bytecode (``#cuda_tile.di_file<...>`` & co).

    ``fields`` holds its parameters in bytecode order (strings, ints and
    nested :class:`DebugInfoAttr`), so the writer re-encodes it exactly.
    """

    fields: tuple = ()

    @staticmethod
    def make(mnemonic: str, fields: tuple) -> DebugInfoAttr:
        body = ", ".join(f'"{f}"' if isinstance(f, str) else str(f) for f in fields)
        attr = DebugInfoAttr("cuda_tile", mnemonic, body)
        attr.fields = fields
        return attr

    def key(self) -> tuple:
        """Structural identity (MLIR uniques attributes by value)."""
        return (self.mnemonic, tuple(f.key() if isinstance(f, DebugInfoAttr) else f for f in self.fields))


def _signed(v: int, width: int) -> int:
    return v - (1 << width) if width > 1 and v >> (width - 1) & 1 else v


def _enum_case(enum: str, value: int, c: Cursor | None) -> str:
    edef = ENUMS.get(enum)
    if edef is not None:
        for case in edef.cases:
            if case[1] == value:
                return case[0]
    raise BytecodeError(f"invalid integer value for enum type {enum}: {value}", c.pos if c else None)


def _mnemonic(enum: str) -> str:
    edef = ENUMS.get(enum)
    return (edef.attr_mnemonic or "") if edef else ""


def _default_attr(a: F.FieldEnc, c: Cursor) -> A.Attribute | None:
    """Value of a DefaultValuedAttr absent from an older file (its ODS default)."""
    text = a.default or ""
    if a.kind.startswith("enum:"):
        enum = a.kind[5:]
        case = text.rsplit("::", 1)[-1]
        edef = ENUMS.get(enum)
        if edef:
            for sp, _val, _s, _d in edef.cases:
                if sp.lower() == case.lower() or sp.replace("_", "").lower() == case.replace("_", "").lower():
                    return A.EnumAttr(enum, sp, _mnemonic(enum))
        return None
    if a.kind in ("i32", "i64"):
        try:
            return A.IntegerAttr(int(text), T.IntegerType(int(a.kind[1:])))
        except ValueError:
            return None
    return None


def _sequential_segments(defs, n: int) -> dict[str, tuple[int, int]]:
    """Segments of ``n`` operands (or results) of ``defs`` in order: the first variable group takes the rest."""
    rest = n - sum(1 for d in defs if d.kind == "single")
    out: dict[str, tuple[int, int]] = {}
    pos = 0
    for d in defs:
        size = 1 if d.kind == "single" else max(rest, 0)
        if d.kind != "single":
            rest = 0
        out[d.name] = (pos, size)
        pos += size
    return out


def _read_apint(c: Cursor, width: int) -> int:
    """``parseAPInt``: <= 8 bits one byte; <= 64 bits a zigzag varint; else words."""
    if width <= 8:
        v = c.byte("small APInt")
        if v >> width:
            raise c.error(f"value {v} does not fit in {width} bits")
        return v
    if width <= 64:
        # cuTile Python zigzags the unsigned bit pattern (2*v, up to 65 bits)
        # where NVIDIA's C++ writer wraps to 64 bits.  NVIDIA's reader keeps
        # the low 64 bits before un-zigzagging (an f64 -inf from cuTile
        # reads as +inf there); we do the same so both readers agree.
        z = c.varint("APInt", max_bits=65) & ((1 << 64) - 1)
        v = ((z >> 1) ^ -(z & 1)) & ((1 << 64) - 1)
        if v >> width:
            raise c.error(f"value {v} does not fit in {width} bits")
        return v
    n = c.varint("APInt word count")
    if n == 0 or n > (width + 63) // 64:
        raise c.error(f"invalid APInt word count {n} for {width} bits")
    v = 0
    for i in range(n):
        v |= (c.svarint("APInt word") & ((1 << 64) - 1)) << (64 * i)
    return v & ((1 << width) - 1)


def decode_dense(raw: bytes, ty: T.TileType, c: Cursor) -> A.DenseElementsAttr:
    """A constant-pool entry as a :class:`DenseElementsAttr` of tile type ``ty``.

    The raw buffer is MLIR's ``DenseElementsAttr::getRawData``: little-endian
    elements of :func:`~tile_lsp.analysis.ir.numbers.dense_storage_bytes` each,
    one element for a splat; ``i1`` elements bit-packed (a splat is one byte
    ``0x00``/``0xFF``). ``values`` is the nested list (scalar for a
    splat or 0-d tile); ``texts`` keeps the raw hex blob for exact rewriting.
    """
    elem = ty.element
    width = dense_element_bits(elem)
    n = ty.num_elements
    if n is None:
        raise c.error(f"constant of dynamically shaped type {ty}")
    if width == 1:
        # MLIR DenseElementsAttr::isValidRawBuffer: one byte 0x00/0xFF is a splat,
        # else the elements are bit-packed
        if len(raw) == 1 and (raw[0] in (0, 0xFF) or n == 1):
            vals: list[Any] = [raw[0] != 0]
            splat = True
        elif len(raw) == (n + 7) // 8:
            vals = [bool(raw[i // 8] >> (i % 8) & 1) for i in range(n)]
            splat = False
        elif len(raw) == n:
            vals = [b != 0 for b in raw]
            splat = False
        else:
            raise c.error("failed to validate buffer size and format")
    else:
        size = dense_storage_bytes(elem)
        if len(raw) % size:
            raise c.error("failed to validate buffer size and format")
        mask = (1 << width) - 1
        bits = [int.from_bytes(raw[i:i + size], "little") & mask for i in range(0, len(raw), size)]
        if len(bits) == 1:
            splat = True
        elif len(bits) == n:
            splat = False
        else:
            raise c.error("failed to validate buffer size and format")
        if isinstance(elem, T.IntegerType):
            vals = [_signed(b, width) for b in bits]
        else:
            vals = [float_from_bits(b, elem.name) for b in bits]
    if splat or not ty.shape:
        value: Any = vals[0]
    else:
        value = _nest(vals, ty.shape)
    return A.DenseElementsAttr(elem, value, ty, () if splat else tuple(ty.shape), texts=raw.hex())


def _nest(flat: list[Any], shape: tuple[int | None, ...]) -> list[Any]:
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0] or 0)]


def _attr_text(a: A.Attribute) -> str:
    if isinstance(a, A.IntegerAttr):
        return str(a.value)
    if isinstance(a, A.DictAttr):
        return "{" + ", ".join(k if isinstance(v, A.UnitAttr) else f"{k} = {_attr_text(v)}"
                               for k, v in sorted(a.entries.items())) + "}"
    return str(a)


def _opt_hints(entries: dict[str, A.Attribute]) -> A.DialectAttr:
    """``#cuda_tile.optimization_hints<arch = {k = v}>`` with the body as MLIR prints it, and as
    ``value`` the entries decoded as the builder decodes the text's
    (:func:`tile_lsp.analysis.syntax.parse_rules.entry.optimization_hint_entries`), in the order
    the bytecode holds them, each value with its type (what the writer writes back)."""
    body = ", ".join(f"{k} = {_attr_text(v)}" for k, v in sorted(entries.items()))
    return A.DialectAttr("cuda_tile", "optimization_hints", body, [(k, _hint_value(v)) for k, v in entries.items()])


def _hint_value(a: A.Attribute) -> HAttr:
    """A hint value read from bytecode as the hints parser gives it (:class:`HAttr`): integers,
    floats and strings with their type, dictionaries and arrays element by element; another
    attribute (which ``OptimizationHintsAttr::verifyParamWithContext`` rejects) as its text."""
    if isinstance(a, A.DictAttr):
        return HAttr("dict", None, entries=[(k, _hint_value(v)) for k, v in a.entries.items()])
    if isinstance(a, A.ArrayAttr):
        return HAttr("array", [_hint_value(e) for e in a.elements])
    if isinstance(a, A.BoolAttr):
        return HAttr("bool", a.value)
    if isinstance(a, A.IntegerAttr):
        return HAttr("int", a.value, str(a.type) if a.type is not None else None)
    if isinstance(a, A.FloatAttr):
        return HAttr("float", a.value, str(a.type) if a.type is not None else None)
    if isinstance(a, A.StringAttr):
        return HAttr("string", a.value)
    if isinstance(a, A.TypeAttr):
        return HAttr("type", str(a.value))
    if isinstance(a, A.UnitAttr):
        return HAttr("unit", None)
    return HAttr("opaque", str(a))


def read_bytecode(data: bytes) -> Module:
    """Read a Tile IR bytecode file into an IR :class:`Module` (all ranges ``None``).

    The module's body holds one ``cuda_tile.module`` op (``@kernels``, as
    NVIDIA's reader names it) with the globals then the entries.
    Raises :class:`BytecodeError` (message and byte offset) on malformed or
    unsupported input, and nothing else.
    """
    data = bytes(data)
    try:
        return _Reader(data).read()
    except BytecodeError:
        raise
    except RecursionError:
        raise BytecodeError("input nested too deeply", None) from None
    except (ValueError, KeyError, IndexError, TypeError, OverflowError, struct.error,
            ZeroDivisionError, AttributeError) as e:  # defensive: report, never crash
        raise BytecodeError(f"malformed bytecode ({type(e).__name__}: {e})", None) from None
