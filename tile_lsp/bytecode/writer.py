"""Write tile-lsp IR as Tile IR bytecode.

Rule source: NVIDIA cuda-tile ``lib/Bytecode/Writer/BytecodeWriter.cpp`` and
the per-op writer generator ``tools/cuda-tile-tblgen/BytecodeGen.cpp`` (our
own Python).  The output follows the C++ writer's order so that a file read
by :func:`~tile_lsp.bytecode.reader.read_bytecode` and written back is
byte-identical when the original came from that writer (or from cuTile
Python, which lays files out the same way): section order global, function,
constant, debug, type, producer, string, end; tables are indexed in
first-use order; alignment padding is ``0xCB``.

Errors (an op or attribute that has no bytecode form, an op or type that the
target version does not have) raise :class:`BytecodeWriteError`.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.debuginfo import DebugInfoDecoder, decoder_for
from tile_lsp.analysis.syntax.parse_rules.entry import HAttr, assume_predicate_value, optimization_hint_entries
from tile_lsp.analysis.ir.core import Block, Module, Operation, Region, Value
from tile_lsp.analysis.ir.numbers import DenseDataError, dense_raw_data, float_to_bits
from tile_lsp.analysis.ir.printer import adds_implicit_terminator, implicit_terminator, region_written
from tile_lsp.bytecode import format as F
from tile_lsp.bytecode.locations import encode as encode_location
from tile_lsp.bytecode.reader import DebugInfoAttr
from tile_lsp.dialect import types as T
from tile_lsp.dialect.cuda_tile_ops import BYTECODE_OPCODES
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.registry import lookup


class BytecodeWriteError(Exception):
    """The module cannot be written as bytecode (of the requested version)."""


class Buf:
    """A growable byte buffer with the bytecode encodings (varints, LE, alignment)."""

    def __init__(self, base: int = 0):
        self.b = bytearray()
        self.base = base  # absolute offset of b[0] (alignment is absolute)
        self.required_alignment = 1

    def byte(self, v: int) -> None:
        self.b.append(v & 0xFF)

    def varint(self, v: int) -> None:
        v &= (1 << 64) - 1
        while True:
            byte = v & 0x7F
            v >>= 7
            if v:
                self.b.append(byte | 0x80)
            else:
                self.b.append(byte)
                return

    def svarint(self, v: int) -> None:
        """Zigzag (``writeSignedVarInt``) of a 64-bit two's-complement value."""
        v &= (1 << 64) - 1
        signed = v - (1 << 64) if v >> 63 else v
        self.varint(((v << 1) ^ (-1 if signed < 0 else 0)) & ((1 << 64) - 1))

    def le(self, v: int, size: int) -> None:
        self.b += (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def le_array(self, values: list[int], size: int) -> None:
        self.varint(len(values))
        for v in values:
            self.le(v, size)

    def raw(self, data: bytes) -> None:
        self.b += data

    def offset_table(self, entries: list[bytes], size: int) -> None:
        """A table of ``entries``: their count (varint), padding to ``size`` bytes, each entry's byte
        offset from the first entry (``size``-byte little-endian), then the entries one after another."""
        self.varint(len(entries))
        self.align(size)
        running = 0
        for e in entries:
            self.le(running, size)
            running += len(e)
        for e in entries:
            self.raw(e)

    def align(self, alignment: int) -> None:
        if alignment < 2:
            return
        pad = (-(self.base + len(self.b))) % alignment
        self.b += bytes([F.ALIGNMENT_BYTE]) * pad
        self.required_alignment = max(self.required_alignment, alignment)


#: Debug-info attribute -> (bytecode tag, the kind of each of its fields in order: ``d`` a
#: debug-info index, ``s`` a string index, ``i`` an integer); each field is one varint.
_DI_LAYOUT: dict[str, tuple[int, str]] = {
    "di_compile_unit": (1, "d"),
    "di_file": (2, "ss"),
    "di_lexical_block": (3, "ddii"),
    "di_loc": (4, "dsii"),
    "di_subprogram": (5, "dissdi"),
}


def _optional_svarints(w: Buf, *values: int | None) -> None:
    """A presence byte (bit ``i`` set when ``values[i]`` is not ``None``), then the present values as signed varints."""
    w.byte(sum(1 << i for i, v in enumerate(values) if v is not None))
    for v in values:
        if v is not None:
            w.svarint(v)


def _dyn(xs: tuple[int | None, ...]) -> list[int]:
    return [F.DYNAMIC if x is None else x for x in xs]


class _Writer:
    def __init__(self, version: tuple[int, int], layout: str = "cutile"):
        self.version = version
        self.layout = layout
        self.strings: dict[str, int] = {}
        self.types: dict[T.Type, int] = {}
        self.type_list: list[T.Type] = []
        self.constants: dict[tuple[str, bytes], int] = {}
        self.constant_list: list[bytes] = []
        self.di_index: dict[Any, int] = {}
        self.di_list: list[Any] = []
        self.op_di: list[list[int]] = []
        self.values: dict[int, int] = {}
        self.next_value = 0
        self.decoder: DebugInfoDecoder | None = None
        self.text_locs: dict[int, tuple[Any, Any]] = {}

    # -- tables --------------------------------------------------------------

    def string(self, s: str) -> int:
        if s not in self.strings:
            self.strings[s] = len(self.strings)
        return self.strings[s]

    def type(self, t: T.Type) -> int:
        idx = self.types.get(t)
        if idx is not None:
            return idx
        for dep in _type_deps(t):
            self.type(dep)
        if t in self.types:
            return self.types[t]
        self._check_type(t)
        self.types[t] = len(self.type_list)
        self.type_list.append(t)
        return self.types[t]

    def _check_type(self, t: T.Type) -> None:
        tag = _type_tag(t)
        since = F.TYPE_TAG_SINCE.get(tag)
        if since and F.parse_version(since) > self.version:
            raise BytecodeWriteError(f"type '{t}' requires bytecode version {since}+, "
                                     f"targeting {F.version_text(self.version)}")

    def constant(self, attr: A.DenseElementsAttr, ty: T.Type) -> int:
        try:
            data = dense_raw_data(attr, ty)
        except DenseDataError as e:
            raise BytecodeWriteError(str(e)) from None
        # NVIDIA dedups by attribute (type and data); cuTile by the bytes alone.
        key = ("", data) if self.layout == "cutile" else (str(ty), data)
        if key not in self.constants:
            buf = Buf()
            buf.varint(len(data))
            buf.raw(data)
            self.constants[key] = len(self.constant_list)
            self.constant_list.append(bytes(buf.b))
        return self.constants[key]

    # -- debug info ----------------------------------------------------------

    def di(self, loc: Any) -> int:
        """Index of a location / debug-info attribute (0: the reserved unknown location)."""
        if loc is None or isinstance(loc, A.LocationAttr) and loc.kind in ("unknown", "file"):
            return F.DEBUG_UNKNOWN_LOC
        if isinstance(loc, A.LocationAttr) and loc.kind == "dialect" and isinstance(loc.attr, DebugInfoAttr):
            node: Any = loc.attr
            key: Any = ("loc", loc.attr.key())
        elif isinstance(loc, A.LocationAttr) and loc.kind == "callsite" and len(loc.children) == 2:
            node, key = loc, ("callsite", _loc_key(loc))
        elif isinstance(loc, DebugInfoAttr):
            node, key = loc, loc.key()
        else:
            return F.DEBUG_UNKNOWN_LOC  # locations with no bytecode form are dropped
        if key in self.di_index:
            return self.di_index[key]
        # register dependencies first (registerDebugInfo)
        if isinstance(node, A.LocationAttr):
            for ch in node.children:
                self.di(ch)
        else:
            for f in _di_children(node):
                self.di(f)
        if key in self.di_index:
            return self.di_index[key]
        self.di_index[key] = len(self.di_list) + F.DEBUG_RESERVED
        self.di_list.append(node)
        if self.layout == "cutile" and isinstance(node, DebugInfoAttr):
            for f in node.fields:  # cuTile interns strings when it registers the entry
                if isinstance(f, str):
                    self.string(f)
        return self.di_index[key]

    def _serialize_di(self, node: Any, w: Buf) -> None:
        if isinstance(node, A.LocationAttr):  # call site
            w.varint(6)
            w.varint(self.di(node.children[0]))
            w.varint(self.di(node.children[1]))
            return
        layout = _DI_LAYOUT.get(node.mnemonic)
        if layout is None:
            w.varint(0)
            return
        tag, kinds = layout
        w.varint(tag)
        for i, kind in enumerate(kinds):
            v = node.fields[i]
            w.varint(self.di(v) if kind == "d" else self.string(v) if kind == "s" else v)

    # -- module --------------------------------------------------------------

    def write(self, module: Module) -> bytes:
        self.decoder = decoder_for(module)
        top = _module_op(module)
        if top is None:
            ops = module.body.operations
        else:
            ops = top.regions[0].blocks[0].operations if top.regions and top.regions[0].blocks else []
        funcs = [op for op in ops if op.name == "cuda_tile.entry"]
        globals_ = [op for op in ops if op.name == "cuda_tile.global"]
        others = [op for op in ops if op not in funcs and op not in globals_]
        if others:
            raise BytecodeWriteError(f"'{others[0].name}' cannot appear at module level in bytecode")

        out = Buf()
        out.raw(F.MAGIC)
        out.byte(self.version[0])
        out.byte(self.version[1])
        out.le(0, 2)

        if self.layout == "cutile":  # cuTile Python always starts its type table with i1, i32
            self.type(T.IntegerType(1))
            self.type(T.IntegerType(32))
        # buildFunctionMap: names, signatures, function locations (NVIDIA: all
        # functions first; cuTile: each function when its body is written).
        meta = [self._function_meta(f) for f in funcs] if self.layout == "nvidia" else list(funcs)

        self._write_globals(out, globals_)
        self._write_functions(out, meta)
        self._write_constants(out)
        self._write_debug(out)
        self._write_types(out)
        producer = _attr(top, "producer") if top is not None else None
        if producer is not None and self.version >= F.PRODUCER_SECTION_VERSION:
            sec = Buf()
            sec.varint(self.string(producer.value))
            self._section(out, F.SECTION_PRODUCER, sec)
        self._write_strings(out)
        out.byte(F.SECTION_END)
        return bytes(out.b)

    def _function_meta(self, f: Operation) -> tuple[Operation, int, int, int]:
        loc = self._loc(f.location)
        if self.layout == "cutile":
            self.di(loc)
        name = _attr(f, "sym_name")
        sig = _attr(f, "function_type")
        if not isinstance(name, A.StringAttr) or not isinstance(sig, A.TypeAttr) \
                or not isinstance(sig.value, T.FunctionType):
            raise BytecodeWriteError(f"entry '{getattr(name, 'value', '?')}' has no name or function type")
        name_idx = self.string(name.value)
        sig_idx = self.type(sig.value)
        loc_idx = self._op_index(loc)
        return f, name_idx, sig_idx, loc_idx

    def _loc(self, loc: Any) -> Any:
        """``loc`` in the bytecode form: as read from bytecode, or the text's ``loc(...)``
        decoded (aliases resolved) and converted (:func:`~tile_lsp.bytecode.locations.encode`);
        ``None`` when it has no bytecode form."""
        if loc is None or _bytecode_form(loc):
            return loc
        hit = self.text_locs.get(id(loc))
        if hit is None:
            value = self.decoder.location(loc) if self.decoder is not None else None
            hit = self.text_locs[id(loc)] = (loc, encode_location(value))
        return hit[1]

    def _op_index(self, loc: Any) -> int:
        if self.di(loc) == F.DEBUG_UNKNOWN_LOC and not _has_di(loc):
            return F.DEBUG_UNKNOWN_LOC
        self.op_di.append([])
        index = len(self.op_di) - 1 + F.DEBUG_RESERVED
        self.op_di[-1].append(self.di(loc))
        return index

    def _add_loc(self, func_loc_index: int, loc: Any) -> None:
        if func_loc_index >= F.DEBUG_RESERVED:
            self.op_di[func_loc_index - F.DEBUG_RESERVED].append(self.di(self._loc(loc)))

    @staticmethod
    def _serialized(serialize: Callable[[Any, Buf], None], item: Any) -> bytes:
        """The bytes ``serialize(item, buf)`` writes into a fresh buffer (one entry of an offset table)."""
        buf = Buf()
        serialize(item, buf)
        return bytes(buf.b)

    def _section(self, out: Buf, sid: int, sec: Buf) -> None:
        alignment = sec.required_alignment
        out.byte(sid | (0x80 if alignment > 1 else 0))
        out.varint(len(sec.b))
        if alignment > 1:
            out.varint(alignment)
            out.align(alignment)
        out.raw(bytes(sec.b))

    def _write_globals(self, out: Buf, globals_: list[Operation]) -> None:
        if not globals_:
            return
        sec = Buf()
        sec.varint(len(globals_))
        for g in globals_:
            name = _attr(g, "sym_name").value
            value = _attr(g, "value")
            if not isinstance(value, A.DenseElementsAttr) or value.type is None:
                raise BytecodeWriteError(f"global '{name}' has no dense value")
            vis = _attr(g, "symbol_visibility")
            vis_val = _enum_value(vis, "SymbolVisibility") if vis is not None else 0
            const = _attr(g, "constant") is not None
            if self.version < F.GLOBAL_EXTENDED_VERSION and (vis_val or const):
                raise BytecodeWriteError(f"global `{name}` needs bytecode 13.3+ (visibility/constant)")
            sec.varint(self.string(name))
            sec.varint(self.type(value.type))
            sec.varint(self.constant(value, value.type))
            align = _attr(g, "alignment")
            sec.varint(align.value if isinstance(align, A.IntegerAttr) else 0)
            if self.version >= F.GLOBAL_EXTENDED_VERSION:
                sec.varint(vis_val)
                sec.varint(1 if const else 0)
        self._section(out, F.SECTION_GLOBAL, sec)

    def _write_functions(self, out: Buf, meta: list) -> None:
        sec = Buf()
        sec.varint(len(meta))
        for item in meta:
            f, name_idx, sig_idx, loc_idx = item if isinstance(item, tuple) else self._function_meta(item)
            hints = _attr(f, "optimization_hints")
            flags = F.FUNC_FLAG_KERNEL | (F.FUNC_FLAG_HAS_HINTS if hints is not None else 0)
            sec.varint(name_idx)
            sec.varint(sig_idx)
            sec.byte(flags)
            sec.varint(loc_idx)
            if hints is not None:
                sec.varint(F.ATTR_OPTIMIZATION_HINTS)
                self._dict_body(_hints_entries(hints), sec)
            body = Buf()
            self.values = {}
            self.next_value = 0
            block = f.regions[0].blocks[0] if f.regions and f.regions[0].blocks else Block()
            for arg in block.arguments:
                self._define(arg)
            for op in _ops_with_terminator(block, f):
                self._operation(op, body, loc_idx)
            sec.varint(len(body.b))
            sec.raw(bytes(body.b))
        if self.layout == "cutile":  # cuTile aligns the section start but pads no tail
            sec.required_alignment = 8
        else:
            sec.align(8)
        self._section(out, F.SECTION_FUNC, sec)

    def _write_constants(self, out: Buf) -> None:
        if not self.constant_list and self.layout != "cutile":
            return  # cuTile writes the section even when empty
        sec = Buf()
        sec.offset_table(self.constant_list, 8)
        self._section(out, F.SECTION_CONSTANT, sec)

    def _write_debug(self, out: Buf) -> None:
        if not self.op_di and not self.di_list:
            return
        sec = Buf()
        sec.varint(len(self.op_di))
        sec.align(4)
        off = 0
        for lst in self.op_di:
            sec.le(off, 4)
            off += len(lst)
        sec.varint(off)
        sec.align(8)
        for lst in self.op_di:
            for i in lst:
                sec.le(i, 8)
        # serializing may register strings but never new debug entries
        # (dependencies were registered first), so the list is final here
        sec.offset_table([self._serialized(self._serialize_di, node) for node in self.di_list], 4)
        self._section(out, F.SECTION_DEBUG, sec)

    def _write_types(self, out: Buf) -> None:
        entries = []
        i = 0
        while i < len(self.type_list):  # serializing never adds types (deps come first)
            entries.append(self._serialized(self._serialize_type, self.type_list[i]))
            i += 1
        sec = Buf()
        sec.offset_table(entries, 4)
        self._section(out, F.SECTION_TYPE, sec)

    def _write_strings(self, out: Buf) -> None:
        sec = Buf()
        sec.offset_table([s.encode("utf-8") for s in self.strings], 4)
        self._section(out, F.SECTION_STRING, sec)

    # -- types ---------------------------------------------------------------

    def _serialize_type(self, t: T.Type, w: Buf) -> None:
        tag = _type_tag(t)
        w.varint(tag)
        if tag in F.FLAGGED_13_4_TYPE_TAGS and self.version >= (13, 4):
            w.varint(0)
        if isinstance(t, (T.IntegerType, T.FloatType, T.TokenType)):
            return
        if isinstance(t, T.PointerType):
            w.varint(self.type(t.pointee))
        elif isinstance(t, T.TileType):
            w.varint(self.type(t.element))
            w.le_array(_dyn(t.shape), 8)
        elif isinstance(t, T.TensorViewType):
            w.varint(self.type(t.element))
            w.le_array(_dyn(t.shape), 8)
            w.le_array(_dyn(t.strides), 8)
        elif isinstance(t, T.PartitionViewType):
            self._type_flags(w, t.padding_value)
            w.le_array(list(t.tile_shape), 4)
            w.varint(self.type(t.tensor_view))
            w.le_array(list(t.effective_dim_map()), 4)
            self._padding(w, t.padding_value)
        elif isinstance(t, T.StridedViewType):
            self._type_flags(w, t.padding_value)
            w.le_array(list(t.tile_shape), 4)
            w.le_array(_dyn(t.traversal_strides), 4)
            w.varint(self.type(t.tensor_view))
            dim_map = t.dim_map if t.dim_map is not None else tuple(range(len(t.tile_shape)))
            w.le_array(list(dim_map), 4)
            self._padding(w, t.padding_value)
        elif isinstance(t, T.GatherScatterViewType):
            self._type_flags(w, t.padding_value)
            w.le_array(list(t.tile_shape), 4)
            w.varint(self.type(t.view))
            w.varint(t.sparse_dim)
            self._padding(w, t.padding_value)
        elif isinstance(t, T.FunctionType):
            w.varint(len(t.inputs))
            for x in t.inputs:
                w.varint(self.type(x))
            w.varint(len(t.results))
            for x in t.results:
                w.varint(self.type(x))

    def _type_flags(self, w: Buf, padding: str | None) -> None:
        if self.version >= F.UNIFIED_BITFIELD_VERSION:
            w.varint(1 if padding is not None else 0)

    def _padding(self, w: Buf, padding: str | None) -> None:
        if self.version < F.UNIFIED_BITFIELD_VERSION:
            w.byte(1 if padding is not None else 0)
        if padding is not None:
            w.varint(_case_value("PaddingValue", padding))

    # -- operations ----------------------------------------------------------

    def _define(self, v: Value) -> None:
        self.values[id(v)] = self.next_value
        self.next_value += 1

    def _operand(self, v: Value, w: Buf) -> None:
        idx = self.values.get(id(v))
        if idx is None:
            raise BytecodeWriteError(f"operand {v.name} is not defined in scope")
        w.varint(idx)

    def _operation(self, op: Operation, w: Buf, func_loc: int) -> None:
        od = op.opdef
        short = op.short_name
        code = BYTECODE_OPCODES.get(short)
        if od is None or code is None or "$" in short:
            raise BytecodeWriteError(f"operation '{op.name}' not supported in bytecode")
        if code > F.max_opcode(self.version):
            raise BytecodeWriteError(f"operation '{op.name}' is not available in bytecode version "
                                     f"{F.version_text(self.version)}")
        enc = F.op_encoding(od)
        w.varint(code)
        self._add_loc(func_loc, op.location)

        # Results.
        kept = [r for i, r in enumerate(op.results)
                if i >= len(enc.results) or enc.results[i].since <= self.version]
        if enc.variadic:
            w.varint(len(kept))
        for r in kept:
            w.varint(self.type(r.type))

        # Flags.
        flags = 0
        for a in enc.attributes:
            if a.optional and _attr(op, a.name) is not None:
                if a.since > self.version:
                    raise BytecodeWriteError(f"optional attribute '{a.name}' is provided but requires "
                                             f"bytecode version {F.version_text(a.since)}")
                flags |= 1 << a.bit
        groups = _operand_groups(op, enc)
        if enc.segmented:
            for o in enc.operands:
                if o.kind == "optional" and groups[o.name]:
                    if o.since > self.version:
                        raise BytecodeWriteError(f"optional operand '{o.name}' is provided but requires "
                                                 f"bytecode version {F.version_text(o.since)}")
                    flags |= 1 << o.bit
        if enc.flags_since is not None and self.version >= enc.flags_since:
            w.varint(flags)
        elif od.name in F.EXTRA_FLAGS_13_4 and self.version >= (13, 4):
            w.varint(0)

        # Attributes.
        result_type = op.results[0].type if op.results else None
        for a in enc.attributes:
            val = _attr(op, a.name)
            if a.kind == "unit":
                continue
            if a.optional:
                if val is not None:
                    self._op_attr(a.kind, val, w, result_type, op, a.name)
                continue
            if a.since > self.version:
                continue  # older target: the attribute must be at its default (not checked)
            if val is None:
                val = _default_value(op, a)
            self._op_attr(a.kind, val, w, result_type, op, a.name)

        # Operands.
        if enc.segmented:
            for o in enc.operands:
                vals = groups[o.name]
                if o.kind == "variadic":
                    w.varint(len(vals))
                for v in vals:
                    self._operand(v, w)
        else:
            if any(o.kind != "single" for o in enc.operands):
                w.varint(len(op.operands))
            for v in op.operands:
                self._operand(v, w)

        # Regions.
        if enc.num_regions:
            w.varint(len(op.regions))
            for r in op.regions:
                self._region(r, w, func_loc)
        for r in kept:
            self._define(r)

    def _region(self, region: Region, w: Buf, func_loc: int) -> None:
        blocks = region.blocks
        owner = region.parent
        if not blocks and owner is not None and adds_implicit_terminator(owner) and region_written(region):
            # ``{}`` of a custom-form if/for/loop: MLIR's parser gives it one block
            # holding the implicit terminator (``ensureTerminator``)
            blocks = [Block(parent=region)]
        w.varint(len(blocks))
        for b in blocks:
            self._block(b, w, func_loc)

    def _block(self, b: Block, w: Buf, func_loc: int) -> None:
        saved = dict(self.values), self.next_value
        w.varint(len(b.arguments))
        for arg in b.arguments:
            w.varint(self.type(arg.type))
            self._define(arg)
        ops = _ops_with_terminator(b, b.parent_op)
        w.varint(len(ops))
        for op in ops:
            self._operation(op, w, func_loc)
        self.values, self.next_value = saved

    # -- attributes ----------------------------------------------------------

    def _op_attr(self, kind: str, val: A.Attribute, w: Buf, result_type: T.Type | None,
                 op: Operation, name: str) -> None:
        if kind.startswith("enum:"):
            w.varint(_enum_value(val, kind[5:]))
        elif kind in ("i32", "i64"):
            w.varint(_int_value(val) & ((1 << int(kind[1:])) - 1))
        elif kind == "bool":
            w.byte(1 if _bool_value(val) else 0)
        elif kind == "dense_i32_array":
            w.le_array([int(x) for x in _array_values(val)], 4)
        elif kind == "dense_bool_array":
            w.le_array([1 if x else 0 for x in _array_values(val)], 1)
        elif kind in ("string", "symbol_name", "symbol_ref"):
            w.varint(self.string(_str_value(val)))
        elif kind == "type":
            w.varint(self.type(val.value))
        elif kind == "dense":
            ty = result_type if result_type is not None else val.type
            w.varint(self.constant(val, ty))
        elif kind == "opt_hints":
            self._dict_body(_hints_entries(val), w)
        elif kind == "array":
            elems = val.elements if isinstance(val, A.ArrayAttr) else []
            w.varint(len(elems))
            for e in elems:
                self._self_contained(e, w)
        elif kind == "dict":
            self._dict_body(val.entries, w)
        elif kind in ("assume_predicate", "attr"):
            self._self_contained(val, w)
        else:
            raise BytecodeWriteError(f"attribute '{name}' of '{op.name}' ({kind}) has no bytecode form")

    def _dict_body(self, entries: dict[str, A.Attribute], w: Buf) -> None:
        w.varint(len(entries))
        # MLIR dictionaries are sorted by key; cuTile keeps its own order
        keys = list(entries) if self.layout == "cutile" else sorted(entries)
        for k in keys:
            w.varint(self.string(k))
            self._self_contained(entries[k], w)

    def _self_contained(self, a: A.Attribute, w: Buf) -> None:
        if isinstance(a, A.AliasAttr) and a.target is not None:
            a = a.target
        if isinstance(a, A.TypeAttr):
            w.varint(F.ATTR_TYPE)
            w.varint(self.type(a.value))
        elif isinstance(a, A.StringAttr):
            w.varint(F.ATTR_STRING)
            w.varint(self.string(a.value))
        elif isinstance(a, A.BoolAttr):
            w.varint(F.ATTR_BOOL)
            w.byte(1 if a.value else 0)
        elif isinstance(a, A.IntegerAttr):
            ty = a.type if isinstance(a.type, T.IntegerType) else T.IntegerType(64)
            w.varint(F.ATTR_INTEGER)
            w.varint(self.type(ty))
            w.varint(a.value & ((1 << ty.width) - 1))
        elif isinstance(a, A.FloatAttr):
            ty = a.type if isinstance(a.type, T.FloatType) else T.FloatType("f64")
            w.varint(F.ATTR_FLOAT)
            w.varint(self.type(ty))
            bits = _float_attr_bits(a, ty.name)
            if ty.width <= 8:
                w.byte(bits)
            else:
                w.svarint(bits)
        elif isinstance(a, A.ArrayAttr):
            w.varint(F.ATTR_ARRAY)
            w.varint(len(a.elements))
            for e in a.elements:
                self._self_contained(e, w)
        elif isinstance(a, A.DenseElementsAttr):
            w.varint(F.ATTR_DENSE_ELEMENTS)
            w.varint(self.type(a.type))
            w.varint(self.constant(a, a.type))
        elif isinstance(a, A.DictAttr):
            w.varint(F.ATTR_DICTIONARY)
            self._dict_body(a.entries, w)
        elif isinstance(a, A.DialectAttr) and a.mnemonic == "optimization_hints":
            w.varint(F.ATTR_OPTIMIZATION_HINTS)
            self._dict_body(_hints_entries(a), w)
        elif isinstance(a, A.DialectAttr) and a.mnemonic in ("bounded", "div_by", "same_elements"):
            pred = _predicate(a)
            if isinstance(pred, A.Bounded):
                w.varint(F.ATTR_BOUNDED)
                _optional_svarints(w, pred.lb, pred.ub)
            elif isinstance(pred, A.DivBy):
                w.varint(F.ATTR_DIV_BY)
                w.varint(pred.divisor)
                _optional_svarints(w, pred.every, pred.along)
            else:
                w.varint(F.ATTR_SAME_ELEMENTS)
                w.le_array(list(pred.values), 8)
        else:
            raise BytecodeWriteError(f"unsupported attribute in bytecode: {a}")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _ops_with_terminator(b: Block, owner: Operation | None) -> list[Operation]:
    """The ops of ``b``, plus the terminator MLIR's parser adds when the text leaves it out.

    ``SingleBlockImplicitTerminator`` ops (``entry`` -> ``return``, ``if`` ->
    ``yield``, ...) may be written without it; the bytecode must hold it
    (NVIDIA's reader fails with "block with no terminator").
    """
    ops = list(b.operations)
    implicit = implicit_terminator(owner)
    last = ops[-1] if ops else None
    if implicit is not None and not (last is not None and last.opdef is not None
                                     and last.opdef.has_trait("Terminator")):
        ops.append(Operation(implicit, lookup(implicit), location=getattr(owner, "location", None)))
    return ops


def _module_op(module: Module) -> Operation | None:
    """The ``cuda_tile.module`` to write, or ``None`` for bare top-level entries/globals.

    As ``cuda-tile-translate -mlir-to-cudatilebc``
    (``lib/Bytecode/Translation/BytecodeTranslation.cpp``): the module itself,
    or the single ``cuda_tile.module`` of a ``builtin.module`` (its
    attributes have no bytecode form and are not written).
    Raises :class:`BytecodeWriteError` otherwise.
    """
    ops = module.body.operations
    if len(ops) == 1 and ops[0].name == "builtin.module":
        inner = ops[0].regions[0].blocks[0].operations if ops[0].regions and ops[0].regions[0].blocks else []
        if len(inner) != 1 or inner[0].name != "cuda_tile.module":
            raise BytecodeWriteError("expected a single CUDA Tile IR module in the MLIR module")
        return inner[0]
    modules = [op for op in ops if op.name == "cuda_tile.module"]
    if not modules:
        return None
    if len(ops) != 1:
        raise BytecodeWriteError("expected a single CUDA Tile IR module in the MLIR module")
    return modules[0]


def _attr(op: Operation | None, name: str) -> A.Attribute | None:
    if op is None:
        return None
    a = op.properties.get(name)
    if a is None:
        a = op.attributes.get(name)
    if isinstance(a, A.AliasAttr) and a.target is not None:
        a = a.target
    return a


def _type_tag(t: T.Type) -> int:
    if isinstance(t, T.IntegerType):
        tag = F.INT_TAG_BY_WIDTH.get(t.width)
    elif isinstance(t, T.FloatType):
        tag = F.FLOAT_TAG_BY_NAME.get(t.name)
    else:
        tag = {T.PointerType: F.TYPE_POINTER, T.TileType: F.TYPE_TILE, T.TensorViewType: F.TYPE_TENSOR_VIEW,
               T.PartitionViewType: F.TYPE_PARTITION_VIEW, T.FunctionType: F.TYPE_FUNCTION,
               T.TokenType: F.TYPE_TOKEN, T.GatherScatterViewType: F.TYPE_GATHER_SCATTER_VIEW,
               T.StridedViewType: F.TYPE_STRIDED_VIEW}.get(type(t))
    if tag is None:
        raise BytecodeWriteError(f"type '{t}' has no bytecode form")
    return tag


def _type_deps(t: T.Type) -> list[T.Type]:
    """Types registered before ``t`` (``registerDependentTypes``)."""
    if isinstance(t, T.PointerType):
        return [t.pointee]
    if isinstance(t, (T.TileType, T.TensorViewType)):
        return [t.element]
    if isinstance(t, (T.PartitionViewType, T.StridedViewType)):
        return [t.tensor_view]
    if isinstance(t, T.GatherScatterViewType):
        return [t.view]
    if isinstance(t, T.FunctionType):
        return [*t.inputs, *t.results]
    return []


def _loc_key(loc: A.LocationAttr) -> Any:
    if loc.kind == "dialect" and isinstance(loc.attr, DebugInfoAttr):
        return ("loc", loc.attr.key())
    if loc.kind == "callsite":
        return ("callsite", tuple(_loc_key(c) for c in loc.children))
    return ("unknown",)


def _di_children(node: DebugInfoAttr) -> list[DebugInfoAttr]:
    return [f for f in node.fields if isinstance(f, DebugInfoAttr)]


def _bytecode_form(loc: Any) -> bool:
    """Whether ``loc`` is a location as the reader builds them (a ``di_loc`` or a call site of
    such), not one of the text's (aliases, ``DialectAttr`` bodies)."""
    return isinstance(loc, A.LocationAttr) and (
        loc.kind == "dialect" and isinstance(loc.attr, DebugInfoAttr)
        or loc.kind == "callsite" and len(loc.children) == 2 and all(map(_bytecode_form, loc.children)))


def _has_di(loc: Any) -> bool:
    return isinstance(loc, A.LocationAttr) and (
        loc.kind == "dialect" and isinstance(loc.attr, DebugInfoAttr) or loc.kind == "callsite")


def _case_value(enum: str, case: str) -> int:
    edef = ENUMS.get(enum)
    if edef is not None:
        for sp, val, _s, _d in edef.cases:
            if sp == case or sp.lower() == case.lower():
                return val
    raise BytecodeWriteError(f"'{case}' is not a case of enum {enum}")


def _enum_value(a: A.Attribute, enum: str) -> int:
    """The integer of the case of ``enum`` that ``a`` holds: an enum attribute in custom or generic
    form (:func:`tile_lsp.analysis.ir.attributes.enum_case`), the integer itself, or a keyword or
    string naming the case.  Raises :class:`BytecodeWriteError` for anything else or a case
    ``enum`` lacks."""
    case = A.enum_case(a)
    if case is not None:
        return _case_value(enum, case)
    if isinstance(a, A.IntegerAttr):
        return a.value
    if isinstance(a, (A.OpaqueAttr, A.StringAttr)):
        return _case_value(enum, str(getattr(a, "value", None) or a).strip().strip('"'))
    raise BytecodeWriteError(f"expected a {enum} value, got {a}")


def _int_value(a: A.Attribute) -> int:
    if isinstance(a, A.IntegerAttr):
        return a.value
    if isinstance(a, A.BoolAttr):
        return int(a.value)
    raise BytecodeWriteError(f"expected an integer, got {a}")


def _bool_value(a: A.Attribute) -> bool:
    if isinstance(a, A.BoolAttr):
        return a.value
    if isinstance(a, A.IntegerAttr):
        return a.value != 0
    if isinstance(a, A.UnitAttr):
        return True
    raise BytecodeWriteError(f"expected a bool, got {a}")


def _array_values(a: A.Attribute) -> list[Any]:
    if isinstance(a, A.DenseArrayAttr):
        return list(a.values)
    if isinstance(a, A.ArrayAttr):
        return [getattr(e, "value", e) for e in a.elements]
    raise BytecodeWriteError(f"expected an array, got {a}")


def _str_value(a: A.Attribute) -> str:
    if isinstance(a, A.SymbolRefAttr):
        return a.root
    if isinstance(a, A.StringAttr):
        return a.value
    raise BytecodeWriteError(f"expected a string, got {a}")


def _default_value(op: Operation, a: F.FieldEnc) -> A.Attribute:
    if a.kind == "dense_bool_array":
        index = op.operand_group("index")
        return A.ArrayAttr([A.BoolAttr(False) for _ in index])
    if a.default is not None:
        if a.kind.startswith("enum:"):
            return A.EnumAttr(a.kind[5:], a.default.rsplit("::", 1)[-1])
        if a.kind in ("i32", "i64"):
            return A.IntegerAttr(int(a.default))
    raise BytecodeWriteError(f"'{op.name}' needs attribute '{a.name}'")


def _operand_groups(op: Operation, enc: F.OpEncoding) -> dict[str, list[Value]]:
    """Operands by ODS group: the op's segments, or a split by the op definition."""
    groups: dict[str, list[Value]] = {}
    if op.operand_segments and all(o.name in op.operand_segments for o in enc.operands):
        for o in enc.operands:
            groups[o.name] = op.operand_group(o.name)
        return groups
    n = len(op.operands)
    fixed = sum(1 for o in enc.operands if o.kind == "single")
    rest = n - fixed
    pos = 0
    for o in enc.operands:
        size = 1 if o.kind == "single" else max(rest, 0)
        if o.kind != "single":
            rest = 0
        groups[o.name] = op.operands[pos:pos + size]
        pos += size
    return groups


#: An integer type of a hint value (``1 : i64``).
_HINT_INT_TYPE = re.compile(r"i([0-9]+)")


def _hint_attribute(h: HAttr) -> A.Attribute:
    """The attribute the bytecode holds for the hint value ``h`` (as
    :func:`~tile_lsp.analysis.syntax.parse_rules.entry.optimization_hint_entries` gives it).

    An integer without a type is an ``i32`` (as cuTile writes the hints: ``latency = 2`` is
    ``2 : i32``), a float without one an ``f64``; dictionaries and arrays are converted element
    by element.  A value with no bytecode form here (a unit, a symbol, a dialect attribute, an
    integer of a non-``iN`` type) becomes an :class:`~tile_lsp.analysis.ir.attributes.OpaqueAttr`
    of its text, which :meth:`_Writer._self_contained` refuses.
    """
    k = h.kind
    if k == "dict":
        return A.DictAttr({key: _hint_attribute(v) for key, v in h.entries})
    if k == "array":
        return A.ArrayAttr([_hint_attribute(e) for e in h.value])
    if k == "bool":
        return A.BoolAttr(h.value)
    if k == "string" and h.type is None:
        return A.StringAttr(h.value)
    if k == "int":
        width = _HINT_INT_TYPE.fullmatch(h.type or "i32")
        if width is not None:
            return A.IntegerAttr(h.value, T.IntegerType(int(width.group(1))))
    if k == "float":
        ty = T.element_type(h.type or "f64")
        if isinstance(ty, T.FloatType):
            return A.FloatAttr(h.value, ty)
    if k == "type":
        ty = T.element_type(h.value)
        if ty is not None:
            return A.TypeAttr(ty)
    if k == "unit":
        return A.UnitAttr()
    return A.OpaqueAttr(h.print())


def _hints_entries(a: A.Attribute) -> dict[str, A.Attribute]:
    """The entries ``{arch: {hint: value}}`` of an ``optimization_hints`` attribute: the decoded
    value of ``#cuda_tile.optimization_hints<...>`` (the builder's or the reader's), or a
    dictionary.  Raises :class:`BytecodeWriteError` for another attribute or hints that do not
    parse."""
    if isinstance(a, A.DictAttr):
        return a.entries
    entries = optimization_hint_entries(a) if isinstance(a, A.DialectAttr) else None
    if entries is None:
        raise BytecodeWriteError(f"expected optimization hints, got {a}")
    return {key: _hint_attribute(value) for key, value in entries}


def _predicate(a: A.DialectAttr) -> A.DivBy | A.Bounded | A.SameElements:
    """The decoded assume predicate of ``a`` (the builder's ``value``, else decoded from its body)."""
    pred = assume_predicate_value(a)
    if pred is None:
        raise BytecodeWriteError(f"unsupported attribute in bytecode: {a}")
    return pred


# -- dense data --------------------------------------------------------------


def _float_attr_bits(a: A.FloatAttr, name: str) -> int:
    if a.text.lower().startswith("0x"):
        return int(a.text, 16)
    return float_to_bits(a.value, name)


def write_bytecode(module: Module, version: str = "13.4", layout: str = "cutile") -> bytes:
    """Serialize ``module`` (a ``cuda_tile.module`` or top-level entries/globals) as bytecode.

    ``version``: target Tile IR bytecode version, ``"13.1"`` to ``"13.4"``.
    ``layout``: order of the string/type tables: ``"cutile"`` (as cuTile
    Python writes them: types ``i1``, ``i32`` first, debug-info strings
    interned when the entry is registered) or ``"nvidia"`` (as NVIDIA's
    C++ ``writeBytecode``).  Both read back to the same IR.
    Raises :class:`BytecodeWriteError` for content that has no bytecode form
    in that version, ``ValueError`` for an unknown version.
    """
    v = F.parse_version(version)
    if v not in F.SUPPORTED_VERSIONS:
        raise ValueError(f"unsupported version requested {version}, must be in range "
                         f"[{F.version_text(F.MIN_VERSION)}, {F.version_text(F.MAX_VERSION)}]")
    if layout not in ("cutile", "nvidia"):
        raise ValueError(f"unknown layout {layout!r}")
    return _Writer(v, layout).write(module)
