"""Tile IR bytecode reader/writer tests (tile_lsp/bytecode).

Corpus checks: every ``kernels/*.tileirbc`` reads and is structurally equal
to our parse of the ``.mlir`` beside it (which NVIDIA's tileirdisasm printed
from it); every file of ``conformance/Bytecode/invalid`` is rejected with a
:class:`BytecodeError`; random and mutated input only ever raises
:class:`BytecodeError`.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.core import Module, Operation
from tile_lsp.bytecode import BytecodeError, read_bytecode
from tile_lsp.analysis.ir.numbers import float_from_bits
from tile_lsp.bytecode.reader import Cursor
from tile_lsp.dialect import types as T

# ---------------------------------------------------------------------------
# Structural comparison (ignores locations, value names, ranges)
# ---------------------------------------------------------------------------


def _flat(v: Any) -> list[Any]:
    if isinstance(v, list):
        out: list[Any] = []
        for x in v:
            out.extend(_flat(x))
        return out
    return [v]


def _canon_scalar(x: Any) -> Any:
    if isinstance(x, bool):
        return ("b", x)
    if isinstance(x, int):
        return ("i", x)
    if isinstance(x, float):
        return ("f", x)
    return ("s", str(x))


def _close(a: float, b: float, rel: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-30)


class Dense:
    """A dense literal compared by its flattened values (float tolerance by width)."""

    def __init__(self, attr: A.DenseElementsAttr):
        self.type = str(attr.type)
        vals = attr.values
        if isinstance(vals, str) and vals.startswith("0x"):
            vals = [vals]
        flat = _flat(vals)
        if isinstance(attr.element_type, T.FloatType):  # hex literals are bit patterns
            flat = [float_from_bits(v, attr.element_type.name) if isinstance(v, int) and not isinstance(v, bool)
                    else v for v in flat]
        self.values = [_canon_scalar(v) for v in flat]
        width = getattr(attr.element_type, "width", 64)
        self.rel = 1e-6 if width >= 32 else 1e-2

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Dense) or self.type != other.type:
            return False
        a, b = self.values, other.values
        if len(a) != len(b):
            if len(a) == 1:
                a = a * len(b)
            elif len(b) == 1:
                b = b * len(a)
            else:
                return False
        for (ka, va), (kb, vb) in zip(a, b):
            if "f" in (ka, kb) and ka in "fi" and kb in "fi":
                if not _close(float(va), float(vb), self.rel):
                    return False
            elif ka == "b" or kb == "b":
                if bool(va) != bool(vb):
                    return False
            elif va != vb:
                return False
        return True

    def __repr__(self) -> str:
        return f"Dense({self.type}, {self.values[:8]})"


class Flt:
    """A float compared with tolerance."""

    def __init__(self, v: float):
        self.v = v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Flt) and _close(self.v, other.v, 1e-6)

    def __repr__(self) -> str:
        return f"Flt({self.v})"


def canon_attr(a: A.Attribute) -> Any:
    """A comparable form of an attribute: by value, enums by case, dialect attrs by body."""
    if isinstance(a, A.EnumAttr):
        return ("enum", a.case.lower())
    if isinstance(a, A.BoolAttr):
        return ("bool", a.value)
    if isinstance(a, A.IntegerAttr):
        return ("int", a.value)
    if isinstance(a, A.FloatAttr):
        value = a.value
        if a.text.lower().startswith("0x") and a.type is not None:  # hex literal: the bit pattern
            value = float_from_bits(int(a.text, 16), str(a.type))
        return ("float", Flt(value))
    if isinstance(a, A.StringAttr):
        return ("str", a.value)
    if isinstance(a, A.SymbolRefAttr):
        return ("sym", a.root, a.nested)
    if isinstance(a, A.TypeAttr):
        return ("type", str(a.value))
    if isinstance(a, A.DenseArrayAttr):
        return ("array", tuple(a.values))
    if isinstance(a, A.ArrayAttr):
        return ("arrayattr", tuple(canon_attr(e) for e in a.elements))
    if isinstance(a, A.DictAttr):
        return ("dict", tuple(sorted((k, canon_attr(v)) for k, v in a.entries.items())))
    if isinstance(a, A.DenseElementsAttr):
        return ("dense", Dense(a))
    if isinstance(a, A.DialectAttr):
        return ("dialect", a.mnemonic, "".join((a.body or "").split()))
    if isinstance(a, A.UnitAttr):
        return ("unit",)
    if isinstance(a, A.OpaqueAttr):
        return ("enum", a.text.strip().lower())
    if isinstance(a, A.AliasAttr) and a.target is not None:
        return canon_attr(a.target)
    return (type(a).__name__, str(a))


def top_ops(module: Module) -> list[Operation]:
    """The ops inside the ``cuda_tile.module`` (or the top-level ops when there is none)."""
    ops = module.body.operations
    if len(ops) == 1 and ops[0].name == "cuda_tile.module":
        return ops[0].regions[0].blocks[0].operations
    return ops


def canon_ops(ops: list[Operation]) -> list[Any]:
    """Nested comparable form of ``ops``: names, operand wiring, types, attributes, regions."""
    ids: dict[int, int] = {}

    def vid(v: Any) -> Any:
        return ids.get(id(v), ("external", str(v.type)))

    def define(v: Any) -> None:
        ids[id(v)] = len(ids)

    def op_form(op: Operation) -> Any:
        defaults = {a.name: a.default for a in (op.opdef.attributes if op.opdef else ()) if a.default}
        attrs = {}
        for k, v in {**op.attributes, **op.properties}.items():
            if k.startswith("__") or k in ("operandSegmentSizes", "operand_segment_sizes"):
                continue
            form = canon_attr(v)
            if k in defaults and form[-1] in (defaults[k].lower(), _int_or_none(defaults[k])):
                continue  # a default-valued attribute at its default: printed or not
            attrs[k] = form
        regions = []
        for r in op.regions:
            if _is_implicit_yield_region(r):
                regions.append([])
                continue
            blocks = []
            for b in r.blocks:
                for arg in b.arguments:
                    define(arg)
                body = b.operations
                if body and body[-1].name == "cuda_tile.yield" and not body[-1].operands:
                    body = body[:-1]  # the implicit terminator the text form leaves out
                blocks.append(([str(a.type) for a in b.arguments], [op_form(o) for o in body]))
            regions.append(blocks)
        form = (op.name, [vid(v) for v in op.operands], [str(v.type) for v in op.operands],
                [str(r.type) for r in op.results], attrs, regions)
        for r in op.results:
            define(r)
        return form

    return [op_form(op) for op in ops]


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _is_implicit_yield_region(region: Any) -> bool:
    """A region holding only ``yield`` with no operands: the text form may leave it out."""
    if len(region.blocks) != 1:
        return False
    b = region.blocks[0]
    return not b.arguments and (not b.operations or (
        len(b.operations) == 1 and b.operations[0].name == "cuda_tile.yield" and not b.operations[0].operands))


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two canonical forms differ (a readable path), or None when equal."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}: {a!r:.300} vs {b!r:.300}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r:.200} != {b!r:.200}"


def compare_modules(read: Module, parsed: Module) -> str | None:
    """None when ``read`` and ``parsed`` are structurally equal, else the first difference."""
    return first_difference(canon_ops(top_ops(read)), canon_ops(top_ops(parsed)))


def parse_mlir(path: Path) -> Module:
    analysis = analyze_text(path.read_text(), AnalysisOptions())
    return analysis.chunks[0].module


# ---------------------------------------------------------------------------
# Unit tests of the encoding primitives
# ---------------------------------------------------------------------------


def test_varint_decoding():
    assert Cursor(bytes([0x7F])).varint() == 127
    assert Cursor(bytes([0xAE, 0x01])).varint() == 174
    assert Cursor(bytes([0x03])).svarint() == -2
    assert Cursor(bytes([0x04])).svarint() == 2


def test_overlong_varint_is_an_error():
    with pytest.raises(BytecodeError) as e:
        Cursor(bytes([0x80] * 11 + [0x01])).varint("x")
    assert "overlong varint" in e.value.message
    assert e.value.offset == 0


def test_truncated_varint_is_an_error():
    with pytest.raises(BytecodeError) as e:
        Cursor(bytes([0x80, 0x80])).varint("section length")
    assert e.value.message == "unexpected end of data reading section length"


def test_bad_magic():
    with pytest.raises(BytecodeError) as e:
        read_bytecode(b"\x7fTileIR\x0a\x0d\x04\x00\x00\x00")
    assert e.value.message == "invalid magic number at position 7, got 10 expected 0"
    assert e.value.offset == 7


def test_unsupported_version():
    with pytest.raises(BytecodeError) as e:
        read_bytecode(b"\x7fTileIR\x00\x0d\x00\x00\x00\x00")
    assert e.value.message.startswith("unsupported Tile version 13.0.0")
    assert e.value.offset == 8


def test_empty_and_short_inputs():
    for data in (b"", b"\x7f", b"\x7fTileIR\x00", b"\x7fTileIR\x00\x0d\x04\x00\x00"):
        with pytest.raises(BytecodeError):
            read_bytecode(data)


def test_missing_sections():
    with pytest.raises(BytecodeError) as e:
        read_bytecode(b"\x7fTileIR\x00\x0d\x04\x00\x00\x00")
    assert e.value.message == "string section is mandatory"


def test_absurd_section_length():
    data = b"\x7fTileIR\x00\x0d\x04\x00\x00" + b"\x01\xff\xff\xff\xff\x0f"
    with pytest.raises(BytecodeError) as e:
        read_bytecode(data)
    assert e.value.message.startswith("section length 4294967295 exceeds remaining data size 0")


# ---------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------


def _kernel_files(corpus: Path) -> list[Path]:
    return sorted((corpus / "kernels").glob("*.tileirbc"))


def test_corpus_kernels_read_and_match_disassembly(corpus):
    files = _kernel_files(corpus)
    assert len(files) > 200
    mismatches = {}
    for f in files:
        module = read_bytecode(f.read_bytes())
        text_file = f.with_suffix(".mlir")
        diff = compare_modules(module, parse_mlir(text_file))
        if diff:
            mismatches[f.name] = diff
    assert not mismatches, f"{len(mismatches)} of {len(files)} differ: " + repr(dict(list(mismatches.items())[:5]))


#: conformance/Bytecode/invalid file -> the text NVIDIA's reader reports
#: (the CHECK lines of invalid_structure.mlir).
INVALID_FILES = {
    "invalid_magic_number.tileirbc": "invalid magic number",
    "unsupported_version.tileirbc": "unsupported Tile version 18.0.0",
    "invalid_section_id.tileirbc": "unknown section ID: 127",
    "excessive_section_length.tileirbc": "end section is not the last section",
    "invalid_dense_map_value.bc": "array contains unsupported value -2147483648",
    "invalid_attribute_name.bc": "invalid empty attribute name for DictionaryAttr element 0",
}


def test_corpus_invalid_files_are_rejected(corpus):
    folder = corpus / "conformance/Bytecode/invalid"
    files = sorted(p.name for p in folder.iterdir() if p.suffix in (".tileirbc", ".bc"))
    assert files == sorted(INVALID_FILES)
    for name, expected in INVALID_FILES.items():
        with pytest.raises(BytecodeError) as e:
            read_bytecode((folder / name).read_bytes())
        assert expected in e.value.message, name


def test_corpus_versioned_inputs_read(corpus):
    files = sorted((corpus / "conformance/Bytecode/versioning/Inputs/13.1").glob("*.tileirbc"))
    assert files
    names = {}
    for f in files:
        if f.name.startswith("f4e2m1fn"):
            continue
        module = read_bytecode(f.read_bytes())
        names[f.name] = [op.name for op in module.walk()]
    assert names["negi-op-13.1.tileirbc"] == [
        "cuda_tile.module", "cuda_tile.entry", "cuda_tile.constant", "cuda_tile.negi",
        "cuda_tile.negi", "cuda_tile.return"]
    module = read_bytecode((files[0].parent / "negi-op-13.1.tileirbc").read_bytes())
    negi = next(op for op in module.walk() if op.name == "cuda_tile.negi")
    assert str(negi.properties["overflow"].case) == "none"  # 13.2 attribute: its default
    assert "cuda_tile.print_tko" in names["print-op-13.1.tileirbc"]
    printop = next(op for op in read_bytecode((files[0].parent / "print-op-13.1.tileirbc").read_bytes()).walk()
                   if op.name == "cuda_tile.print_tko")
    assert [str(r.type) for r in printop.results] == ["!cuda_tile.token"]  # 13.2 result, default type
    assert printop.properties["str"].value == "Iteration result"


def test_new_type_in_old_version_is_rejected(corpus):
    data = (corpus / "conformance/Bytecode/versioning/Inputs/13.1/f4e2m1fn-in-13.1.tileirbc").read_bytes()
    with pytest.raises(BytecodeError) as e:
        read_bytecode(data)
    assert e.value.message == "type 'Float4E2M1FN' requires bytecode version 13.3+, file version is 13.1"


def test_truncations_and_mutations_only_raise_bytecode_error(corpus):
    import random

    rng = random.Random(1234)
    files = _kernel_files(corpus)[::25]
    start = time.monotonic()
    for f in files:
        data = f.read_bytes()
        for cut in range(0, len(data), max(1, len(data) // 60)):
            try:
                read_bytecode(data[:cut])
            except BytecodeError:
                pass
        for _ in range(150):
            buf = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                buf[rng.randrange(len(buf))] = rng.randrange(256)
            try:
                read_bytecode(bytes(buf))
            except BytecodeError:
                pass
    assert time.monotonic() - start < 120


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st

_HEADER = b"\x7fTileIR\x00\x0d\x04\x00\x00"


@settings(max_examples=300, deadline=2000)
@given(st.binary(max_size=400))
def test_random_bytes_after_header_only_raise_bytecode_error(tail):
    for data in (tail, _HEADER + tail):
        try:
            read_bytecode(data)
        except BytecodeError:
            pass


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v >> 7 else 0))
        v >>= 7
        if not v:
            return bytes(out)


def _file(*sections: tuple[int, bytes, int]) -> bytes:
    """A 13.4 file of ``(section id, payload, alignment)`` sections and the end marker."""
    out = bytearray(_HEADER)
    for sid, payload, align in sections:
        out.append(sid | (0x80 if align > 1 else 0))
        out += _varint(len(payload))
        if align > 1:
            out += _varint(align)
            out += b"\xcb" * (-len(out) % align)
        out += payload
    out.append(0)
    return bytes(out)


_STRINGS = (1, _varint(1) + b"\xcb" * 3 + bytes(4) + b"k", 4)  # one string, "k"
_NO_FUNCTIONS = (2, _varint(0), 8)


@pytest.mark.parametrize("sections, message", [
    ([(1, _varint(2**40) + bytes(16), 4), _NO_FUNCTIONS], "number of strings (1099511627776) exceeds what the 14 bytes left can hold"),
    ([_STRINGS, _NO_FUNCTIONS, (5, _varint(2**40) + bytes(16), 4)], "number of types (1099511627776) exceeds"),
    ([_STRINGS, _NO_FUNCTIONS, (4, _varint(2**40) + bytes(16), 8)], "insufficient data for constant indices"),
    ([_STRINGS, _NO_FUNCTIONS, (3, _varint(2**40) + bytes(16), 8)],
     "number of operations with debug info (1099511627776) exceeds"),
    ([_STRINGS, _NO_FUNCTIONS, (6, _varint(2**40) + bytes(16), 1)], "number of globals 1099511627776 exceeds"),
    ([_STRINGS, (2, _varint(2**62) + bytes(16), 8)], "number of functions 4611686018427387904 exceeds"),
    ([_STRINGS, (2, b"\xff" * 11, 8)], "overlong varint reading number of functions"),
])
def test_absurd_counts_are_errors(sections, message):
    """Counts far beyond the data are refused before anything is allocated for them."""
    with pytest.raises(BytecodeError) as e:
        read_bytecode(_file(*sections))
    assert message in e.value.message


def test_one_large_constant_used_many_times_is_decoded_once():
    """A file whose ops all refer to one large constant (or string) entry reads in memory
    proportional to the file: the decoded entry is shared, not copied per use."""
    import tracemalloc

    from tile_lsp.analysis.api import analyze_text

    uses = 400
    text = "cuda_tile.module @m {\n  entry @k() {\n" + "".join(
        f"    %c{i} = constant <f32: [1.0, 2.0]> : tile<2xf32>\n" for i in range(uses)) + "  }\n}\n"
    module = analyze_text(text).chunks[0].module
    big_type = T.TileType((8192,), T.FloatType("f32"))
    big = A.DenseElementsAttr(T.FloatType("f32"), [float(i) for i in range(8192)], big_type, (8192,))
    for op in module.walk():
        if op.name == "cuda_tile.constant":
            op.properties["value"] = big
            op.results[0].type = big_type
    data = write_bytecode(module)
    assert len(data) < 40_000  # one 32 KiB constant entry, 400 small ops
    tracemalloc.start()
    back = read_bytecode(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    values = [op.properties["value"] for op in back.walk() if op.name == "cuda_tile.constant"]
    assert len(values) == uses and len({id(v) for v in values}) == 1
    assert values[0].values[8191] == 8191.0
    assert peak < 10_000_000, peak  # 400 decoded copies would take over 100 MB


def _small_kernels() -> list[bytes]:
    from conftest import require_corpus

    files = sorted((require_corpus() / "kernels").glob("*.tileirbc"), key=lambda p: p.stat().st_size)
    return [f.read_bytes() for f in files[:40:8]]


_EDIT = st.tuples(st.sampled_from(["set", "insert", "delete", "varint", "truncate"]),
                  st.integers(0, 1 << 16), st.integers(0, 255))


@settings(max_examples=250, deadline=None)
@given(st.integers(0, 4), st.lists(_EDIT, min_size=1, max_size=6))
def test_mutated_kernels_only_raise_bytecode_error(which, edits):
    """Real files with bytes changed, inserted or removed, huge or overlong varints spliced
    in, or cut short: a BytecodeError or a module, quickly (no hang), never another exception."""
    blob = bytearray(_small_kernels()[which])
    for kind, pos, value in edits:
        pos %= len(blob) + 1
        if kind == "set" and pos < len(blob):
            blob[pos] = value
        elif kind == "insert":
            blob[pos:pos] = bytes([value])
        elif kind == "delete":
            del blob[pos:pos + 1 + value % 8]
        elif kind == "varint":  # a count or length of up to 2**70: absurd, or overlong
            blob[pos:pos + 1] = b"\xff" * (1 + value % 10) + b"\x7f"
        elif kind == "truncate":
            del blob[pos:]
    start = time.monotonic()
    try:
        read_bytecode(bytes(blob))
    except BytecodeError as e:
        assert e.message
    assert time.monotonic() - start < 10


# ---------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------

from tile_lsp.bytecode import BytecodeWriteError, write_bytecode
from tile_lsp.bytecode.cli import translate_main

#: Corpus files that are not byte-identical after read+write, and why
#: (the writer reproduces cuTile Python's layout; these files have content
#: that cannot be reproduced from the IR).
NON_CANONICAL = {
    # reduce identity f64 -inf: cuTile zigzags the unsigned bit pattern into a
    # 65-bit varint; NVIDIA's reader (and ours) keeps 64 bits (reads +inf).
    "debug_print_assert_f64_t64": "65-bit APInt varint",
    # the debug table holds an entry no op refers to
    "foreign_view_copy_f32_t256": "unused debug-info entry",
    # cuTile registered a type before the op that first uses it
    "list_weighted_sum_f32_list_t256": "type table order",
    "list_weighted_sum_f16_list_i64idx_t512": "type table order",
}


def test_write_read_roundtrip_and_byte_identity(corpus):
    files = _kernel_files(corpus)
    identical = 0
    differing = []
    for f in files:
        data = f.read_bytes()
        module = read_bytecode(data)
        out = write_bytecode(module)
        assert compare_modules(read_bytecode(out), module) is None, f.name
        if out == data:
            identical += 1
        else:
            differing.append(f.name.split(".sm_")[0])
    assert set(differing) <= set(NON_CANONICAL), sorted(set(differing) - set(NON_CANONICAL))
    assert identical >= len(files) - 12


def test_nvidia_layout_roundtrips(corpus):
    for f in _kernel_files(corpus)[::9]:
        module = read_bytecode(f.read_bytes())
        out = write_bytecode(module, layout="nvidia")
        assert compare_modules(read_bytecode(out), module) is None, f.name


def test_text_to_bytecode_matches_original(corpus):
    for f in _kernel_files(corpus)[::7]:
        written = write_bytecode(parse_mlir(f.with_suffix(".mlir")))
        assert compare_modules(read_bytecode(written), read_bytecode(f.read_bytes())) is None, f.name


def test_write_older_version(corpus):
    f = corpus / "kernels/activations_gelu_f32_b256.sm_100.tileirbc"
    module = read_bytecode(f.read_bytes())
    out = write_bytecode(module, version="13.1")
    assert out[8:12] == b"\x0d\x01\x00\x00"
    assert compare_modules(read_bytecode(out), module) is None


def test_write_rejects_unknown_version():
    with pytest.raises(ValueError):
        write_bytecode(Module(), version="12.0")


def test_write_rejects_op_newer_than_target(corpus):
    # fpowf/pow is opcode 0x54 in all versions; insert (0x76) is 13.4 only
    files = [f for f in _kernel_files(corpus) if "cat_extract_insert" in f.name]
    assert files
    module = read_bytecode(files[0].read_bytes())
    with pytest.raises(BytecodeWriteError) as e:
        write_bytecode(module, version="13.3")
    assert "is not available in bytecode version 13.3" in str(e.value)


def test_translate_cli(corpus, tmp_path, capsys):
    src = corpus / "kernels/activations_gelu_f32_b256.sm_100.mlir"
    out = tmp_path / "k.tileirbc"
    assert translate_main(["--to-bytecode", str(src), "-o", str(out)]) == 0
    assert compare_modules(read_bytecode(out.read_bytes()), parse_mlir(src)) is None
    assert translate_main(["--to-bytecode", "--tile-version", "13.2", str(src), "-o", str(out)]) == 0
    assert out.read_bytes()[8:10] == b"\x0d\x02"
    text_out = tmp_path / "k.mlir"
    assert translate_main(["--from-bytecode", str(out), "-o", str(text_out)]) == 0
    # tileirdisasm's text: the entries at column 0, no module around them (the corpus
    # .mlir is tileirdisasm's print of the same kernel)
    assert text_out.read_bytes() == src.read_bytes()
    bad = corpus / "conformance/Bytecode/invalid/invalid_section_id.tileirbc"
    assert translate_main(["--from-bytecode", str(bad), "-o", str(text_out)]) == 1
    assert "error at offset 12: unknown section ID: 127" in capsys.readouterr().err
    assert translate_main(["--to-bytecode", "--from-bytecode", str(src)]) == 2


def test_translate_cli_rejects_invalid_text(tmp_path, capsys):
    src = tmp_path / "bad.mlir"
    src.write_text("cuda_tile.module @m {\n  entry @k() {\n    %0 = addi %x, %x : tile<i32>\n    return\n  }\n}\n")
    assert translate_main(["--to-bytecode", str(src), "-o", str(tmp_path / "o.bc")]) == 1
    assert "error:" in capsys.readouterr().err
    assert not (tmp_path / "o.bc").exists()


def test_writer_adds_the_implicit_terminator_the_text_leaves_out():
    """An `if` written without `yield` gets one in the bytecode, as MLIR's parser would add it."""
    from tile_lsp.analysis.api import analyze_text
    from tile_lsp.bytecode.reader import read_bytecode
    from tile_lsp.bytecode.writer import write_bytecode

    text = """\
cuda_tile.module @m {
  entry @k(%c: tile<i1>) {
    if %c {
      %t = make_token : token
    }
    return
  }
}
"""
    module = analyze_text(text).chunks[0].module
    back = read_bytecode(write_bytecode(module))
    if_op = next(op for op in back.walk() if op.name == "cuda_tile.if")
    assert [op.name for op in if_op.regions[0].blocks[0].operations] == ["cuda_tile.make_token", "cuda_tile.yield"]


def _write_read(text: str) -> Module:
    from tile_lsp.analysis.api import analyze_text

    analysis = analyze_text(text)
    assert [d.message for d in analysis.diagnostics] == []
    return read_bytecode(write_bytecode(analysis.chunks[0].module))


def _constant_values(module: Module) -> list[tuple[str, Any]]:
    return [(str(op.results[0].type), op.properties["value"].values)
            for op in module.walk() if op.name == "cuda_tile.constant"]


def test_dense_storage_is_mlirs():
    """tf32 takes 3 bytes, f4 one byte an element, i1 is bit-packed (a splat: 0x00/0xFF),
    an f16 literal past the largest f16 is infinity (as NVIDIA's reader expects them)."""
    from tile_lsp.analysis.ir.numbers import dense_raw_data

    ty = {n: T.TileType((2,), T.FloatType(n)) for n in ("tf32", "f4E2M1FN", "f16")}
    assert dense_raw_data(A.DenseElementsAttr(T.FloatType("tf32"), [1.5, -2.0], ty["tf32"], (2,)),
                          ty["tf32"]) == bytes.fromhex("00fe01" "000006")  # 0x3FC00000 >> 13, 0xC0000000 >> 13
    assert dense_raw_data(A.DenseElementsAttr(T.FloatType("f4E2M1FN"), [1.0, -6.0], ty["f4E2M1FN"], (2,)),
                          ty["f4E2M1FN"]) == bytes([0x2, 0xF])
    assert dense_raw_data(A.DenseElementsAttr(T.FloatType("f16"), [70000.0, -1e9], ty["f16"], (2,)),
                          ty["f16"]) == bytes.fromhex("007c" "00fc")
    text = """\
cuda_tile.module @m {
  entry @k() {
    %0 = constant <f4E2M1FN: [[1.0, 2.0], [4.0, -6.0]]> : tile<2x2xf4E2M1FN>
    %1 = constant <tf32: [1.5, -2.0]> : tile<2xtf32>
    %2 = constant <i1: [true, false, true, true]> : tile<4xi1>
    %3 = constant <i1: [true, true, true, true]> : tile<4xi1>
  }
}
"""
    assert _constant_values(_write_read(text)) == [
        ("!cuda_tile.tile<2x2xf4E2M1FN>", [[1.0, 2.0], [4.0, -6.0]]), ("!cuda_tile.tile<2xtf32>", [1.5, -2.0]),
        ("!cuda_tile.tile<4xi1>", [True, False, True, True]), ("!cuda_tile.tile<4xi1>", True)]


def test_reader_rejects_a_constant_of_the_wrong_size():
    c = Cursor(b"")
    from tile_lsp.bytecode.reader import decode_dense

    with pytest.raises(BytecodeError, match="failed to validate buffer size and format"):
        decode_dense(bytes(4), T.TileType((2,), T.FloatType("tf32")), c)  # 2 x 3 bytes expected
    with pytest.raises(BytecodeError, match="failed to validate buffer size and format"):
        decode_dense(bytes(2), T.TileType((3,), T.FloatType("f4E2M1FN")), c)  # one byte each


def test_writer_adds_the_implicit_return_and_loop_block():
    """An entry without `return` and a custom-form `loop {}` get what MLIR's parser adds."""
    back = _write_read("""\
cuda_tile.module @m {
  entry @k() {
    %0 = constant <i32: 1> : tile<i32>
    loop {
    }
  }
}
""")
    entry = next(op for op in back.walk() if op.name == "cuda_tile.entry")
    assert [op.name for op in entry.regions[0].blocks[0].operations] == [
        "cuda_tile.constant", "cuda_tile.loop", "cuda_tile.return"]
    loop = entry.regions[0].blocks[0].operations[1]
    assert [[op.name for op in b.operations] for b in loop.regions[0].blocks] == [["cuda_tile.continue"]]


def test_writer_takes_the_module_as_cuda_tile_translate_does():
    """A builtin.module holding one cuda_tile.module is written (its attributes are not);
    several modules, or an empty one, are as NVIDIA's translation handles them."""
    from tile_lsp.analysis.api import analyze_text

    one = "module attributes {gpu.container_module} {\n  cuda_tile.module @m {\n    entry @k() {\n    }\n  }\n}\n"
    back = read_bytecode(write_bytecode(analyze_text(one).chunks[0].module))
    assert [op.name for op in back.walk()] == ["cuda_tile.module", "cuda_tile.entry", "cuda_tile.return"]
    empty = read_bytecode(write_bytecode(analyze_text("cuda_tile.module @m {\n}\n").chunks[0].module))
    assert [op.name for op in empty.walk()] == ["cuda_tile.module"]
    two = "cuda_tile.module @a {\n}\ncuda_tile.module @b {\n}\n"
    with pytest.raises(BytecodeWriteError, match="^expected a single CUDA Tile IR module in the MLIR module$"):
        write_bytecode(analyze_text(two).chunks[0].module)


def test_text_with_locations_translates_back_to_the_same_debug_info(corpus):
    """A .tileirbc printed with its debug-info locations (what the language server and
    ``translate --from-bytecode -g`` give) parses without diagnostics and writes back to the
    same IR with the same locations, call sites included; byte for byte for one kernel."""
    from tile_lsp.analysis.ir import debuginfo as D
    from tile_lsp.bytecode.locations import decode, print_with_locations

    call_sites = 0
    for f in _kernel_files(corpus)[::14]:
        module = read_bytecode(f.read_bytes())
        analysis = analyze_text(print_with_locations(module))
        assert analysis.diagnostics == [], f.name
        back = read_bytecode(write_bytecode(analysis.chunks[0].module))
        assert compare_modules(back, module) is None, f.name
        locations = [decode(op.location) for op in module.walk()]
        assert [decode(op.location) for op in back.walk()] == locations, f.name
        call_sites += sum(isinstance(loc, D.CallSiteLoc) for loc in locations)
    assert call_sites > 0

    data = (corpus / "kernels/ew_float_arith_f32_b256.sm_90.tileirbc").read_bytes()
    text = print_with_locations(read_bytecode(data))
    lines = text.splitlines()
    assert lines[lines.index("}") - 2:lines.index("}") + 2] == ["    } loc(#loc)", "  }", "}", (
        '#loc = #cuda_tile.di_loc<loc("corpus-gen/kernels.py":135:0) in #cuda_tile.di_subprogram<file = '
        '<"kernels.py" in "corpus-gen">, line = 134, name = "ew_float_arith", linkageName = '
        '"ew_float_arith_Kt1_A1f32_1l0_A1f32_1l0_A1f32_1l0_I256", compileUnit = <file = <"kernels.py" in '
        '"corpus-gen">>, scopeLine = 134>>')]
    assert write_bytecode(analyze_text(text).chunks[0].module) == data


def test_translate_cli_prints_debug_info_with_g(corpus, tmp_path):
    src = corpus / "kernels/activations_silu_bf16_b512.sm_120.tileirbc"
    plain, located = tmp_path / "plain.mlir", tmp_path / "g.mlir"
    assert translate_main(["--from-bytecode", str(src), "-o", str(plain)]) == 0
    assert translate_main(["--from-bytecode", "-g", str(src), "-o", str(located)]) == 0
    assert " loc(" not in plain.read_text()
    # tileirdisasm -g's aliases: every location is `loc`, ordered by depth, so call sites come last
    assert "#loc22 = loc(callsite(#loc14 at #loc13))" in located.read_text().splitlines()
    back = tmp_path / "back.tileirbc"
    assert translate_main(["--to-bytecode", str(located), "-o", str(back)]) == 0
    assert back.read_bytes() == write_bytecode(read_bytecode(src.read_bytes()))


def test_check_accepts_tileirbc_and_reports_a_malformed_one(corpus, tmp_path, capsys):
    """``tile-lsp --check`` reads a .tileirbc as its printed text; a malformed one is one
    diagnostic with the reader's message and offset, exit status 1."""
    from tile_lsp.cli import main

    good = corpus / "kernels/ew_float_arith_f32_b256.sm_90.tileirbc"
    assert main(["--check", str(good)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "0 errors, 0 warnings in 0 files (1 file checked)"
    bad = tmp_path / "cut.tileirbc"
    bad.write_bytes(good.read_bytes()[:100])
    assert main(["--check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (f"{bad}:1:1: error: invalid Tile IR bytecode: section length 184 exceeds "
                                   "remaining data size 85 (at offset 12)")
    assert out.splitlines()[-1] == "1 error, 0 warnings in 1 file (1 file checked)"


def test_assume_predicates_round_trip_with_mlir_integers():
    """div_by<0x10> is sixteen in the bytecode (the writer once read the hex digits after '0' as 0)."""
    from tile_lsp.bytecode.writer import write_bytecode

    text = ("cuda_tile.module @m {\n  entry @f(%p: tile<ptr<i32>>) {\n"
            "    %a = iota : tile<16xi32>\n"
            "    %0 = assume div_by<0x10, every 4 along 0>, %a : tile<16xi32>\n"
            "    %1 = assume bounded<-08, ?>, %a : tile<16xi32>\n"
            "    %2 = assume same_elements<[016]>, %a : tile<16xi32>\n    return\n  }\n}\n")
    analysis = analyze_text(text)
    assert analysis.diagnostics == []
    read = read_bytecode(write_bytecode(analysis.chunks[0].module))
    preds = [op.attr("predicate") for op in read.walk() if op.name == "cuda_tile.assume"]
    assert [p.value for p in preds] == [A.DivBy(16, 4, 0), A.Bounded(-8, None), A.SameElements((16,))]
    assert [p.body for p in preds] == ["16, every 4 along 0", "-8, ?", "[16]"]


def _entry_bytecode(signature: str, body: str) -> bytes:
    """The bytecode of ``cuda_tile.module @m { entry @f<signature> { <body> return } }`` (no diagnostics)."""
    text = f"cuda_tile.module @m {{\n  entry @f{signature} {{\n    {body}\n    return\n  }}\n}}\n"
    analysis = analyze_text(text)
    assert analysis.diagnostics == [], [d.message for d in analysis.diagnostics]
    return write_bytecode(analysis.chunks[0].module)


def test_generic_enum_attribute_is_written_as_its_decoded_case():
    """``#cuda_tile.rounding<"zero">`` is the case ``zero`` (the builder decoded it once): the same
    bytes as the custom form (the writer once looked up the case ``"zero"``, quotes included)."""
    t = "!cuda_tile.tile<f32>"
    custom = _entry_bytecode("(%a: tile<f32>)", "%0 = divf %a, %a rounding<zero> : tile<f32>")
    for case in ('"zero"', " zero // the case\n"):
        generic = _entry_bytecode("(%a: tile<f32>)", f'%0 = "cuda_tile.divf"(%a, %a) '
                                  f"<{{rounding_mode = #cuda_tile.rounding<{case}>}}> : ({t}, {t}) -> {t}")
        assert generic == custom


def test_optimization_hints_are_written_from_their_decoded_entries():
    """The writer writes the entries the builder decoded (``OptimizationHintsAttr::parse``): a key
    as a string and an integer in hexadecimal are read as MLIR reads them; an integer without a
    type is an ``i32`` (as cuTile writes hints), one with a type keeps it.  The reader gives its
    attribute the same decoded entries (typed as read), which write back to the same bytes."""
    from tile_lsp.analysis.syntax.parse_rules.entry import optimization_hint_entries

    def entry(hints: str) -> bytes:
        return _entry_bytecode(f"(%a: tile<ptr<f32>>) optimization_hints=<{hints}>", "")

    plain = entry("sm_100 = {num_cta_in_cga = 2}, sm_120 = {occupancy = 4 : i64, num_cta_in_cga = 1}")
    assert entry('"sm_100" = {num_cta_in_cga = 0x2}, sm_120 = {occupancy = 4 : i64, num_cta_in_cga = 01}') \
        == plain
    read = read_bytecode(plain)
    hints = next(op for op in read.walk() if op.name == "cuda_tile.entry").attr("optimization_hints")
    assert hints.body == "sm_100 = {num_cta_in_cga = 2}, sm_120 = {num_cta_in_cga = 1, occupancy = 4}"
    assert [(key, [(p, v.kind, v.value, v.type) for p, v in d.entries])
            for key, d in optimization_hint_entries(hints)] == [
        ("sm_100", [("num_cta_in_cga", "int", 2, "i32")]),
        ("sm_120", [("occupancy", "int", 4, "i64"), ("num_cta_in_cga", "int", 1, "i32")])]
    assert write_bytecode(read) == plain
