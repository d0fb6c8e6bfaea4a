"""Tests of the nv_tileas op table, type decoders, verifiers (spec 000/002) and packed-value decoders."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tile_lsp.analysis.api import analyze_text as _analyze_text
from tile_lsp.analysis.ir.decoders import (
    decode_block_scale_word,
    decode_tcgen05_kind_word,
    describe_tile_size,
    pack_block_scale,
    unpack_block_scale,
    unpack_tcgen05_kind,
)
from tile_lsp.analysis.verify.rules import nv_tileas as R
from tile_lsp.analysis.verify.rules.nv_tileas_traits import NV_TILE_TRAITS, TRAIT_CHECKS, tile_size_issue
from tile_lsp.dialect import nv_tileas_types as NT
from tile_lsp.dialect import types as T
from tile_lsp.dialect.nv_tileas_ops import OPS
from tile_lsp.dialect.registry import lookup


# The generic form is read by MLIR's own parser, which knows the cuda_tile types only with their
# prefix ("!cuda_tile.tile<...>"; a short form is "expected non-function type", as cuda-tile-opt
# says).  The texts below write the short forms for readability: in the function type of a generic
# op (after the last ' : (' of its line) and in a block label they get the prefix before analysis.
_GENERIC_LINE = re.compile(r'^\s*(?:%[^=]*=\s*)?"[A-Za-z_][\w.$]*"\(')
_SHORT_FORM = re.compile(r"(?<=[(\s,])(tile|ptr|tensor_view|partition_view)<|(?<=[(\s,])token(?=[\s,)]|$)")


def prefixed(text: str) -> str:
    """``text`` with the short-form cuda_tile types of its generic ops' function types and its block
    labels written with the ``!cuda_tile.`` prefix (nested dialect type parameters untouched)."""
    out = []
    for line in text.split("\n"):
        head, sep, tail = line.rpartition(" : (")
        if sep and _GENERIC_LINE.match(line):
            line = head + sep[:-1] + _SHORT_FORM.sub(lambda m: "!cuda_tile." + m.group(0), "(" + tail)
        elif line.lstrip().startswith("^"):
            line = _SHORT_FORM.sub(lambda m: "!cuda_tile." + m.group(0), line)
        out.append(line)
    return "\n".join(out)


def analyze_text(text: str, *args, **kwargs):
    """:func:`tile_lsp.analysis.api.analyze_text` of :func:`prefixed` ``text``."""
    return _analyze_text(prefixed(text), *args, **kwargs)


def diags(text: str) -> list[tuple[str, int, int]]:
    """(message, 0-based line, 0-based column) of every diagnostic of ``text``."""
    return [(d.message, d.range.start.line, d.range.start.character) for d in analyze_text(text).diagnostics]


def src(name: str, ty: str) -> str:
    """A line defining ``%name`` of type ``ty`` with an unregistered op."""
    return f'%{name} = "test.src"() : () -> {ty}'


def _bodiless_dialect_types_parse() -> bool:
    text = src("x", "!nv_tileas.async.pipeline.producer_token")
    return not diags(text)


needs_bodiless = pytest.mark.skipif(
    not _bodiless_dialect_types_parse(),
    reason="builder reads '!dialect.name' without '<...>' as a type alias (needs the builder change)")

# ---------------------------------------------------------------------------
# Op table
# ---------------------------------------------------------------------------

ROSTER = (
    "async.pipeline.create_pipeline async.pipeline.create_iterator async.pipeline.inc_iter "
    "async.pipeline.produce_one async.pipeline.produce_one_async async.pipeline.consume_one "
    "async.pipeline.consume_one_async async.pipeline.producer_acquire async.pipeline.producer_write "
    "async.pipeline.producer_commit async.pipeline.consumer_wait async.pipeline.consumer_read "
    "async.pipeline.consumer_release async.pipeline.agent_switch async.pipeline.yield async.wait "
    "async.future_wait async.to_async async.token_to_async create_none tiled_load tiled_store tiled_atomic_rmw "
    "async.tiled_load async.copy async.load async.store copy load store gather_load scatter_store alloc_tensor "
    "extract_slice insert_slice async.extract_slice async.insert_slice convert_layout view expand_dims "
    "reinterpret shuffle generate make_tiled_tma_desc async.tiled_tma_load async.tiled_tma_store "
    "async.gather_tma_load async.scatter_tma_store dot async.dot reduce scan yield pragma "
    "cancel_next_program_id async.cancel_next_program_id block_scaled_mma"
).split()


def test_roster_registered():
    names = {op.name for op in OPS}
    assert set(ROSTER) <= names
    for n in ROSTER:
        assert lookup("nv_tileas." + n).dialect == "nv_tileas"


def test_trait_inventory_complete():
    assert len(NV_TILE_TRAITS) == 23 and set(TRAIT_CHECKS) == set(NV_TILE_TRAITS)
    for op in OPS:
        for t in op.traits:
            if t.startswith("nv_tile::"):
                assert t[len("nv_tile::"):] in NV_TILE_TRAITS


# ---------------------------------------------------------------------------
# Type and attribute decoders
# ---------------------------------------------------------------------------


def test_decode_types():
    tv = NT.decode_type_text("!nv_tileaa.tiled_view<2x128x128xf16, smem>")
    assert tv == NT.TiledViewType((2, 128, 128), T.FloatType("f16"), "SMEM", 1, "nv_tileaa")
    assert NT.decode_type_text("!nv_tileas.tiled_view<64xi8, memory_space = GMEM, element_stride = 2>") == \
        NT.TiledViewType((64,), T.IntegerType(8), "GMEM", 2, "nv_tileas")
    assert NT.decode_type_text("!nv_tileas.tiled_view<64xi8, XMEM>") is None
    it = NT.decode_type_text("!nv_tileas.async.pipeline.iterator<tile<128x128xf16>>")
    assert it.payload == T.TileType((128, 128), T.FloatType("f16"))
    tok = NT.decode_type_text("!nv_tileas.async.pipeline.consumer_token<consumer_idx = 1, num_consumers = 2>")
    assert tok == NT.PipelineTokenType("consumer", 1, 2)
    assert NT.decode_type_text("!nv_tileas.async.pipeline.producer_token") == NT.PipelineTokenType("producer")
    assert NT.decode_type_text("!cute_nvgpu.tma_descriptor_tiled") == NT.TmaDescType("cute_nvgpu.tma_descriptor_tiled")
    assert NT.decode_type_text("!async.token") == NT.AsyncTokenType()
    assert NT.decode_type_text("!async.value<tile<4xf32>>").payload == T.TileType((4,), T.FloatType("f32"))
    assert NT.decode_type_text("!nv_tileaa.mem_token") == NT.MemTokenType()
    assert NT.decode_type_text("!foo.bar<1>") is None


def test_atom_attr():
    a = NT.AtomAttr("tma_load_2d")
    assert a.family == "tma_load" and a.box_rank == 2
    assert NT.AtomAttr("mxf4").family == "mma" and NT.AtomAttr("mxf4").box_rank is None


# ---------------------------------------------------------------------------
# Block-scaled MMA
# ---------------------------------------------------------------------------

F = T.FloatType
F4, NV4, E5M2, E4M3, E8M0, F32, F16 = (F("f4E2M1FN"), F(NT.NV4_SPELLING), F("f8E5M2"), F("f8E4M3FN"),
                                       F("f8E8M0FNU"), F("f32"), F("f16"))

MMA_LINES = [
    src("a", "tile<128x64xf4E2M1FN>"), src("b", "tile<64x128xf4E2M1FN>"), src("c", "tile<128x128xf32>"),
    src("sfa", "tile<128x4xf8E8M0FNU>"), src("sfb", "tile<4x128xf8E4M3FN>"),
]
MMA_OP = ('%d = "nv_tileas.block_scaled_mma"(%a, %b, %c, %sfa, %sfb) {atom = #nv_tileas<atom mxf4>, '
          'operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tile<128x64xf4E2M1FN>, tile<64x128xf4E2M1FN>, '
          'tile<128x128xf32>, tile<128x4xf8E8M0FNU>, tile<4x128xf8E4M3FN>) -> tile<128x128xf32>')


def test_block_scaled_worked_failure():
    """Spec 000's worked failure: sfa E8M0 vs sfb E4M3FN stops at phase 2."""
    text = "\n".join(MMA_LINES + [MMA_OP])
    assert diags(text) == [("'nv_tileas.block_scaled_mma' op expects sfa/sfb element types to be the same", 5, 5)]


def test_block_scaled_valid_mxf4():
    lines = MMA_LINES[:4] + [src("sfb", "tile<4x128xf8E8M0FNU>")]
    text = "\n".join(lines + [MMA_OP.replace("tile<4x128xf8E4M3FN>)", "tile<4x128xf8E8M0FNU>)")])
    assert diags(text) == []


def test_block_scaled_k_extent():
    lines = MMA_LINES[:4] + [src("sfb", "tile<2x128xf8E8M0FNU>")]
    text = "\n".join(lines + [MMA_OP.replace("tile<4x128xf8E4M3FN>)", "tile<2x128xf8E8M0FNU>)")])
    assert diags(text) == [("'nv_tileas.block_scaled_mma' op Scale factor vector size mismatch: 16, 32", 5, 5)]


@pytest.mark.parametrize("args,expected", [
    ((F4, F4, F32, None, None), R.MESSAGES["bs_presence"]),
    ((F4, F4, F32, E8M0, E4M3), R.MESSAGES["bs_agreement"]),
    ((F4, F4, F16, E8M0, E8M0), R.MESSAGES["bs_accumulator"]),
    ((E4M3, E5M2, F32, E8M0, E8M0, "mxf8f6f4", False, (16, 16)),
     "invalid block scale vector size. Expecting 32, but got 16"),
    ((F16, F16, F32, E8M0, E8M0, None, False, (32, 32)), R.MESSAGES["bs_elements"]),
    ((E4M3, E4M3, F32, E8M0, E8M0, "mxf4", False, (16, 16)), R.MESSAGES["bs_fp4_16"]),
    ((F4, F4, F32, E5M2, E5M2, "mxf4", False, (16, 16)), R.MESSAGES["bs_sf_16"]),
    ((NV4, F4, F32, E8M0, E8M0, "mxf4nvf4", False, (32, 32)), R.MESSAGES["bs_nvfp4"]),
    ((F4, F4, F32, E8M0, E8M0, "mxf4nvf4", True, (32, 32)), R.MESSAGES["bs_2cta"]),
    ((F4, F4, F32, E8M0, E8M0, "mxf4", False, (16, 16), 90), R.MESSAGES["bs_sm"]),
])
def test_block_scaled_phases(args, expected):
    assert R.verify_block_scaled_mma(*args) == (0, expected)


def test_block_scaled_phase_order():
    """Presence before agreement before accumulator before K-extent."""
    assert R.verify_block_scaled_mma(F4, F4, F16, E8M0, None, None, False, (16, 32))[1] == R.MESSAGES["bs_presence"]
    assert R.verify_block_scaled_mma(F4, F4, F16, E8M0, E4M3, None, False, (16, 32))[1] == R.MESSAGES["bs_agreement"]
    assert R.verify_block_scaled_mma(F4, F4, F16, E8M0, E8M0, None, False, (16, 32))[1] == \
        R.MESSAGES["bs_accumulator"]


@given(st.sampled_from([F4, NV4]), st.sampled_from([F4, NV4]), st.sampled_from([E8M0, E4M3]),
       st.sampled_from([16, 32]), st.booleans())
def test_block_scaled_fp4_catalog(a, b, sf, vec, two_cta):
    """FP4 rows: (64,16) takes any FP4 and E8M0/E4M3 scales, any CTA count; (64,32) only f4E2M1FN + E8M0, 1-CTA."""
    packed, message = R.verify_block_scaled_mma(a, b, F32, sf, sf, None, two_cta, (vec, vec))
    legal = vec == 16 or (a == F4 and b == F4 and sf == E8M0 and not two_cta)
    assert (packed != 0) == legal and (message is None) == legal
    if legal:
        assert unpack_block_scale(packed) == (64, vec)
        assert (64, vec) in R.BLOCK_SCALED_CATALOG


@given(st.sampled_from([E5M2, E4M3]), st.sampled_from([E5M2, E4M3]), st.integers(1, 256), st.booleans())
def test_block_scaled_fp8_catalog(a, b, vec, two_cta):
    packed, message = R.verify_block_scaled_mma(a, b, F32, E8M0, E8M0, None, two_cta, (vec, vec))
    if vec == 32:
        assert packed == 0x2000000020 and message is None
    else:
        assert packed == 0 and message == f"invalid block scale vector size. Expecting 32, but got {vec}"


# ---------------------------------------------------------------------------
# Region-op template
# ---------------------------------------------------------------------------

CTOK = "!nv_tileas.async.pipeline.consumer_token<consumer_idx = 0, num_consumers = 2>"
ITER = "!nv_tileas.async.pipeline.iterator<tile<128x128xf16>>"


def consume_one(arg_ty: str, yield_line: str, idx: int = 0, result: str = CTOK) -> str:
    return "\n".join([
        src("tok", CTOK), src("it", ITER),
        f'%r = "nv_tileas.async.pipeline.consume_one"(%tok, %it) ({{',
        f"^bb0(%x: {arg_ty}):",
        yield_line,
        f'}}) {{consumer_idx = {idx} : i32, consumer_types = [tile<128x128xf16>]}} : ({CTOK}, {ITER}) -> {result}',
    ])


def test_region_valid():
    y = f'  "nv_tileas.async.pipeline.yield"(%tok) : ({CTOK}) -> ()'
    assert diags(consume_one("tile<128x128xf16>", y)) == []
    # block arguments are unwrapped from iterator<...>
    assert diags(consume_one(ITER, y)) == []


def test_region_arguement_typo():
    y = f'  "nv_tileas.async.pipeline.yield"(%tok) : ({CTOK}) -> ()'
    assert diags(consume_one("tile<128x64xf16>", y)) == [(
        "'nv_tileas.async.pipeline.consume_one' op expects region arguement types to match with producer types "
        "[!cuda_tile.tile<128x128xf16>], but got: [!cuda_tile.tile<128x64xf16>]", 2, 5)]


def test_region_result_types_to_be_match():
    y = '  "nv_tileas.async.pipeline.yield"(%x) : (tile<128x128xf16>) -> ()'
    assert diags(consume_one("tile<128x128xf16>", y)) == [(
        "'nv_tileas.async.pipeline.consume_one' op expects region result types to be match with operation result "
        f"types [{CTOK}], but got: [!cuda_tile.tile<128x128xf16>]", 2, 5)]


def test_region_terminator():
    y = '  "test.other"() : () -> ()'
    assert diags(consume_one("tile<128x128xf16>", y)) == [(
        "'nv_tileas.async.pipeline.consume_one' op expects regions to end with 'nv_tileas.async.pipeline.yield', "
        "found 'test.other'", 2, 5)]


def test_consumer_idx():
    y = f'  "nv_tileas.async.pipeline.yield"(%tok) : ({CTOK}) -> ()'
    assert diags(consume_one("tile<128x128xf16>", y, idx=2)) == [(
        "'nv_tileas.async.pipeline.consume_one' op expected 'consumer_idx' less than the number of consumer 2", 2, 5)]
    assert diags(consume_one("tile<128x128xf16>", y, idx=1)) == [(
        "'nv_tileas.async.pipeline.consume_one' op expected 'consumer_idx' in token to be the same as "
        "'consumer_idx' attribute of this operation 0", 2, 5)]


@needs_bodiless
def test_bodiless_pipeline_token():
    text = "\n".join([src("t", "!nv_tileas.async.pipeline.producer_token"),
                      '%u = "nv_tileas.async.pipeline.producer_commit"(%t) : '
                      "(!nv_tileas.async.pipeline.producer_token) -> !nv_tileas.async.pipeline.producer_token"])
    assert diags(text) == []


# ---------------------------------------------------------------------------
# Tiled memops
# ---------------------------------------------------------------------------

VIEW = "!nv_tileaa.tiled_view<128x64xf16, SMEM>"


def tiled_load(view: str = VIEW, result: str = "tile<128x64xf16>", coords: int = 2, attrs: str = "",
               coord_ty: str = "index") -> str:
    cs = ", ".join(f"%i{k}" for k in range(coords))
    lines = [f'%v = "nv_tileaa.block_tile"() : () -> {view}'] + [src(f"i{k}", coord_ty) for k in range(coords)]
    types = ", ".join([view] + [coord_ty] * coords)
    lines.append(f'%t = "nv_tileas.tiled_load"(%v{", " if cs else ""}{cs}) {{atom = #nv_tileas<atom copy_s2r>, '
                 f"operandSegmentSizes = array<i32: 1, {coords}, 0, 0>{attrs}}} : ({types}) -> {result}")
    return "\n".join(lines)


def test_tiled_load_valid():
    assert diags(tiled_load()) == []
    assert diags(tiled_load(attrs=', mem_semantic = "acquire", mem_scope = "gpu"')) == []


def test_tiled_load_errors():
    op = "'nv_tileas.tiled_load' op "
    assert diags(tiled_load(coords=1)) == [(op + "expects 2 coordinates, but got 1", 2, 5)]
    assert diags(tiled_load(result="tile<64x64xf16>")) == [(op + "tile shape must match tensor shape", 3, 5)]
    assert diags(tiled_load(result="tile<128x64xf32>")) == [
        (op + "tile element type must match view element type", 3, 5)]
    assert diags(tiled_load(coord_ty="i32")) == [(op + "tiled memop coordinates must be index-typed", 3, 32)]
    assert diags(tiled_load(attrs=', mem_semantic = "acq_rel", mem_scope = "gpu"')) == [
        (op + "tiled_load rejects acquire_release semantic", 3, 5)]
    assert diags(tiled_load(attrs=', mem_semantic = "relaxed"')) == [
        (op + "memory scope is required for relaxed load", 3, 5)]
    assert diags(tiled_load(attrs=', mem_semantic = "weak", mem_scope = "gpu"')) == [
        (op + "weak load must not have memory scope", 3, 5)]
    assert diags(tiled_load(view="!nv_tileaa.tiled_view<96x64xf16, SMEM>", result="tile<128x64xf16>")) == [
        (op + "all dimensions must be powers of two, got 96, 64", 3, 5)]
    assert diags(tiled_load(attrs=", padding_value = 0.0 : f16, in_bounds = array<i1: true, false>")) == [
        (op + "padding value is only allowed when 'in_bounds' is false", 3, 5)]


def test_tiled_load_view_from_block_tile():
    """The view must be a block_tile result (shipped text); another op's result or a block argument is not."""
    message = ("'nv_tileas.tiled_load' op tiled_load's tiled_view type must be produced by block_tile directly", 3, 5)
    assert diags(tiled_load().replace('"nv_tileaa.block_tile"', '"nv_tileaa.make_view"')) == [message]
    view_as_arg = "\n".join(["^bb0(%v: " + VIEW + "):"] + tiled_load().split("\n")[1:])
    text = '"test.region"() ({\n' + view_as_arg + '\n}) : () -> ()'
    assert [m for m, *_ in diags(text)] == [message[0]]


def atomic(element: str, mode: str, prefix: str = "") -> str:
    view = f"!nv_tileaa.tiled_view<64x{element}, GMEM>"
    tile = f"tile<64x{element}>"
    return "\n".join([
        src("v", view), src("x", tile), src("i", "index"),
        f'%o = "nv_tileas.{prefix}tiled_atomic_rmw"(%v, %x, %i) {{atom = #nv_tileas<atom red>, rmw_mode = "{mode}", '
        f"operandSegmentSizes = array<i32: 1, 1, 1, 0>}} : ({view}, {tile}, index) -> {tile}"])


@pytest.mark.parametrize("element,mode,message", [
    ("i8", "add", "tiled_atomic_rmw not supported for 8-bit types"),
    ("f8E4M3FN", "max", "tiled_atomic_rmw not supported for 8-bit types"),
    ("i16", "add", "tiled_atomic_rmw not supported for 16-bit integer"),
    ("f16", "and", "tiled_atomic_rmw for 16-bit float only supports add, max, min operations"),
    ("f32", "fadd", "tiled_atomic_rmw op cannot use fadd operation, please use add instead for both int and "
                    "float types"),
    ("i32", "xchg", "tiled_atomic_rmw op cannot use xchg operation"),
])
def test_atomic_rules(element, mode, message):
    assert diags(atomic(element, mode)) == [("'nv_tileas.tiled_atomic_rmw' op " + message, 3, 5)]


def test_atomic_async_prefix_and_valid():
    assert diags(atomic("i8", "add", "async.")) == [
        ("'nv_tileas.async.tiled_atomic_rmw' op async_tiled_atomic_rmw not supported for 8-bit types", 3, 5)]
    for element, mode in (("f16", "add"), ("bf16", "max"), ("i32", "add"), ("f32", "min")):
        assert diags(atomic(element, mode)) == []


def test_atomic_requires_rmw_mode():
    text = atomic("i32", "add").replace(' rmw_mode = "add",', "")
    assert diags(text) == [("'nv_tileas.tiled_atomic_rmw' op requires attribute 'rmw_mode'", 3, 5)]


# ---------------------------------------------------------------------------
# TMA, copy, convert_layout, dot
# ---------------------------------------------------------------------------


DESC, MEM = "!nv_tileas.tma_desc<>", "!nv_tileaa.mem_token<>"


def tma_load(view: str = "!nv_tileaa.tiled_view<128x128xf16, SMEM>", coords: int = 2,
             atom: str = "tma_load_2d", attrs: str = "", desc: str = DESC, mem: str = MEM) -> str:
    cs = "".join(f", %i{k}" for k in range(coords))
    types = ", ".join([desc, view] + ["index"] * coords + [mem])
    return "\n".join([src("d", desc), src("v", view), src("m", mem)]
                      + [src(f"i{k}", "index") for k in range(coords)] + [
        f'%r = "nv_tileas.async.tiled_tma_load"(%d, %v{cs}, %m) {{atom = #nv_tileas<atom {atom}>, '
        f"operandSegmentSizes = array<i32: 1, 1, {coords}, 1>{attrs}}} : ({types}) -> !async.value<tile<128x128xf16>>"])


@needs_bodiless
def test_tma_load_spec_spellings():
    """The spellings of spec 002's worked example (bodiless dialect types)."""
    assert diags(tma_load(desc="!cute_nvgpu.tma_descriptor_tiled", mem="!nv_tileaa.mem_token")) == []


def test_tma_load():
    op = "'nv_tileas.async.tiled_tma_load' op "
    line = 5
    assert diags(tma_load()) == []
    assert diags(tma_load(coords=1)) == [(op + "expects 2 coordinates, but got 1", 4, 5)]
    assert diags(tma_load(atom="tma_load_3d")) == [(op + "tma box-dim and copy atom box-dim mismatch", line, 5)]
    assert diags(tma_load(atom="tma_store_2d")) == [(op + "expected a TMA load atom", line, 5)]
    assert diags(tma_load(view="!nv_tileaa.tiled_view<128x4xf16, SMEM>")) == [
        (op + "tma leading box-dim bit-width is not 16 bytes aligned", line, 5)]
    assert diags(tma_load(view="!nv_tileaa.tiled_view<128x128xf16, GMEM>")) == [
        (op + "smem layout is not TMA compatible", line, 5)]
    assert diags(tma_load(attrs=", padding_value = 1.0 : f16")) == [
        (op + "TmaLoad only support zero padding now", line, 5)]


def test_copy_pairs():
    def copy(s: str, d: str) -> str:
        a, b = f"!nv_tileaa.tiled_view<64xf32, {s}>", f"!nv_tileaa.tiled_view<64xf32, {d}>"
        return "\n".join([src("s", a), src("t", b),
                          f'"nv_tileas.copy"(%s, %t) {{atom = #nv_tileas<atom copy>}} : ({a}, {b}) -> ()'])
    for s in NT.MEMORY_SPACES:
        for d in NT.MEMORY_SPACES:
            got = diags(copy(s, d))
            if (s, d) in R.COPY_PAIRS:
                assert got == []
            else:
                assert got == [(f"'nv_tileas.copy' op unsupported memory space pair: {s} -> {d}", 2, 0)]


def test_dot_and_convert_layout():
    def dot(a: str, b: str, c: str) -> str:
        return "\n".join([src("a", a), src("b", b), src("c", c),
                          f'%d = "nv_tileas.dot"(%a, %b, %c) {{atom = #nv_tileas<atom mma_f16_f16_f32>}} : '
                          f"({a}, {b}, {c}) -> {c}"])
    assert diags(dot("tile<64x16xf16>", "tile<16x64xf16>", "tile<64x64xf32>")) == []
    assert diags(dot("tile<64x16xf16>", "tile<16x64xf16>", "tile<64x64xf16>")) == [
        ("'nv_tileas.dot' op expects c type to be Float32", 3, 5)]
    assert diags(dot("tile<64x16xf16>", "tile<16x64xbf16>", "tile<64x64xf32>")) == [
        ("'nv_tileas.dot' op expects A and B element types to be compatible, but got f16 and bf16", 3, 5)]
    conv = "\n".join([src("a", "tile<64x16xf16>"),
                      '%b = "nv_tileas.convert_layout"(%a) : (tile<64x16xf16>) -> tile<32x32xf16>',
                      '%c = "nv_tileas.convert_layout"(%a) : (tile<64x16xf16>) -> tile<32x16xf16>'])
    assert diags(conv) == [
        ("'nv_tileas.convert_layout' op expects source and result to have the same number of elements", 2, 5)]


def test_agent_switch():
    text = ('"nv_tileas.async.pipeline.agent_switch"() ({\n}, {\n}) '
            "{num_warps = array<i32: 4, 8>} : () -> ()")
    assert diags(text) == [("'nv_tileas.async.pipeline.agent_switch' op agent regions disagree on warp count", 0, 0)]
    text = ('"nv_tileas.async.pipeline.agent_switch"() ({\n}, {\n}) '
            "{num_warps = array<i32: 4, 4>, available_warps = 4 : i32} : () -> ()")
    assert diags(text) == [("'nv_tileas.async.pipeline.agent_switch' op agent warp count exceeds module budget",
                            0, 0)]


# ---------------------------------------------------------------------------
# Shared helpers and decoders
# ---------------------------------------------------------------------------


@given(st.lists(st.integers(1, 4096), min_size=1, max_size=4))
def test_tile_size_helper_power_of_two(shape):
    issue = tile_size_issue(tuple(shape))
    expected, total = None, 1
    for d in shape:  # first failing dimension decides, as verifyTileSize walks them
        if d & (d - 1):
            expected = "all dimensions must be powers of two, got " + ", ".join(map(str, shape))
            break
        if total * d > 16777216:
            expected = "tile would exceed the maximum of 16777216 elements"
            break
        total *= d
    assert issue == expected


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_pack_roundtrip(k, v):
    assert unpack_block_scale(pack_block_scale(k, v)) == (k, v)


def test_decoders_text():
    assert decode_block_scale_word(0x4000000010) == "atom_K=64, vecSize=16 (tcgen05.mma.kind::mxf4)"
    assert decode_block_scale_word(0x2000000020) == "atom_K=32, vecSize=32 (tcgen05.mma.kind::f8f6f4)"
    assert decode_block_scale_word(0) == "0 (verification rejected)"
    # spec 001 worked examples
    assert decode_tcgen05_kind_word(0x42) == "kind::i8, cta_group::2, scale_vec 1X (16)"
    k = unpack_tcgen05_kind(0xE2)
    assert (k.mma_kind, k.block_scale, k.cta_group) == (3, True, 2)
    assert describe_tile_size((128, 64), F16) == "8192 elements, 16384 bytes (16 KiB)"
    assert describe_tile_size((128, 64), F4) == "8192 elements, 4096 bytes (4 KiB)"
    with pytest.raises(ValueError):
        unpack_tcgen05_kind(512)


# ---------------------------------------------------------------------------
# Custom forms (spec 002 worked example)
# ---------------------------------------------------------------------------


def test_custom_forms_parse_and_verify():
    text = "\n".join([
        src("v", "!nv_tileaa.tiled_view<2x128x128xf16>"),
        "%p, %c = nv_tileas.async.pipeline.create_pipeline %v { numStages = 2 : i32, producerGroupId = 0 : i8, "
        "consumerGroupId = 1 : i8, sharedMem = true, dynamic = false } : !nv_tileaa.tiled_view<2x128x128xf16> "
        "-> !nv_tileas.async.pipeline.producer_token<>, !nv_tileas.async.pipeline.consumer_token<>",
        "%i = nv_tileas.async.pipeline.create_iterator %p : !nv_tileas.async.pipeline.producer_token<> "
        "-> !nv_tileas.async.pipeline.iterator<tile<128x128xf16>>",
        src("a", "tile<64x16xf16>"), src("b", "tile<16x64xf16>"), src("acc", "tile<64x64xf16>"),
        "%d = nv_tileas.dot %a, %b, %acc { atom = #nv_tileas<atom mma_f16_f16_f16> } "
        ": tile<64x16xf16>, tile<16x64xf16>, tile<64x64xf16> -> tile<64x64xf16>",
    ])
    analysis = analyze_text(text)
    ops = [(o.name, o.generic) for o in analysis.chunks[0].module.walk() if o.name.startswith("nv_tileas.")]
    assert ops == [("nv_tileas.async.pipeline.create_pipeline", False),
                   ("nv_tileas.async.pipeline.create_iterator", False), ("nv_tileas.dot", False)]
    assert diags(text) == [("'nv_tileas.dot' op expects c type to be Float32", 6, 5)]
    missing = text.replace("consumerGroupId = 1 : i8, ", "")
    assert diags(missing)[0] == ("'nv_tileas.async.pipeline.create_pipeline' op requires attribute "
                                 "'consumerGroupId'", 1, 9)


# ---------------------------------------------------------------------------
# Carriers of packed values in text (docs/nv_tileas.md "Mode-pattern carriers")
# ---------------------------------------------------------------------------


def _attr(body: str):
    from tile_lsp.analysis.ir import attributes as A

    return A.DialectAttr("nv_tileas", "", body)


def test_kind_word_spellings():
    from tile_lsp.analysis.ir import attributes as A
    from tile_lsp.analysis.ir.decoders import CarrierError, kind_word_of

    assert kind_word_of(A.IntegerAttr(0x42)) == 0x42
    assert kind_word_of(_attr("tcgen05_kind i8, cta_group = 2")) == 0x42
    assert kind_word_of(_attr("tcgen05_kind f16, cta_group = 2, block_scale")) == 0xE2
    assert kind_word_of(_attr("tcgen05_kind mxf4nvf4, cta_group = 4, scale_vec = 4X, scale_input_acc")) == \
        3 | 2 << 2 | 1 << 4
    assert kind_word_of(_attr("atom mxf4")) is None
    for bad, text in ((_attr("tcgen05_kind f64"), "expects an mma kind first"),
                      (_attr("tcgen05_kind f16, cta_group = 3"), "unknown tcgen05_kind field 'cta_group = 3'"),
                      (A.IntegerAttr(-1), "has 9 bits (0 to 511), but got -1")):
        with pytest.raises(CarrierError, match=re.escape(text)):
            kind_word_of(bad)


def test_carriers_are_decoded_once_by_the_builder():
    """The builder decodes a carrier's text once (``DialectAttr.value``, a ``CarrierValue``: the
    word or layout, or why it does not read); the verifier reports that reading at the attribute."""
    from tile_lsp.analysis.ir.decoders import CarrierValue, UmmaLayout

    layout = "#nv_tileas<umma_layout K, swizzle = 128B, ((8, 8), (16, 4)) : ((16, 128), (1, 2048))>"
    text = ('%a = "test.src"() : () -> !cuda_tile.tile<64x32xi8>\n'
            '%b = "test.src"() : () -> !cuda_tile.tile<32x64xi8>\n'
            '%c = "test.src"() : () -> !cuda_tile.tile<64x64xi32>\n'
            "%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_signed = true, "
            f"b_signed = true, tcgen05_kind = KIND, a_layout = {layout}}} : "
            "tile<64x32xi8>, tile<32x64xi8>, tile<64x64xi32> -> tile<64x64xi32>\n")

    def dot(kind: str):
        analysis = analyze_text(text.replace("KIND", kind))
        op = next(o for o in analysis.chunks[0].module.walk() if o.name == "nv_tileas.dot")
        return op, [(d.message, d.range.start.line, d.range.start.character) for d in analysis.diagnostics]

    op, found = dot("#nv_tileas.tcgen05_kind<i8, cta_group = 2>")
    assert op.attr("tcgen05_kind").value == CarrierValue("tcgen05_kind", 0x42)
    assert op.attr("a_layout").value == CarrierValue(
        "umma_layout", UmmaLayout(0, (3, 4, 3), ((8, 8), (16, 4)), ((16, 128), (1, 2048))))
    assert [m for m, _, _ in found] == ["'nv_tileas.dot' op INT8 type is supported only on arch-conditional variants."]
    kind = "#nv_tileas<tcgen05_kind f64>"
    op, found = dot(kind)
    why = ("tcgen05_kind expects an mma kind first (one of mxf4nvf4, i8, mxf8f6f4, f16, tf32, f8f6f4, mxf4), "
           "but got 'f64'")
    assert op.attr("tcgen05_kind").value == CarrierValue("tcgen05_kind", error=why)
    column = text.index("KIND") - text.index("%d")
    assert found == [(f"'nv_tileas.dot' op cannot read 'tcgen05_kind': {why}", 3, column)]
    assert op.attr("atom").value == NT.KeywordAttr("tcgen05_mma", NT.AtomAttr("tcgen05_mma"))  # not a carrier


def test_umma_layout_and_swizzle_spellings():
    from tile_lsp.analysis.ir.decoders import (
        CarrierError,
        UmmaLayout,
        describe_swizzle,
        parse_int_tuple,
        umma_layout_of,
    )

    assert parse_int_tuple("((8, 2), 64)") == ((8, 2), 64)
    body = "umma_layout MN, swizzle = SWIZZLE_128B_BASE32B, ((64, 2), (8, 2)) : ((1, 64), (8, 512))"
    assert umma_layout_of(_attr(body)) == UmmaLayout(1, (2, 5, 2), ((64, 2), (8, 2)), ((1, 64), (8, 512)))
    assert umma_layout_of(_attr("umma_layout K, swizzle = (0, 4, 3), (8, 8) : (1, 8)")).swizzle == (0, 4, 3)
    for body, text in (("umma_layout X, swizzle = none, (8, 8) : (1, 8)", "direction must be MN or K"),
                       ("umma_layout K, swizzle = 16B, (8, 8) : (1, 8)", "unknown swizzle '16B'"),
                       ("umma_layout K, swizzle = none, ((8, 2), 8) : (1, 8)", "are not congruent"),
                       ("umma_layout K, swizzle = none, (8, 8, 8) : (1, 8, 64)", "two modes (MN, K)"),
                       ("umma_layout K, swizzle = none, (8, 8) : (1, x)", "unexpected 'x)'")):
        with pytest.raises(CarrierError, match=re.escape(text)):
            umma_layout_of(_attr(body))
    assert describe_swizzle((3, 4, 3)) == "128B: 128-byte swizzle (CUTLASS SWIZZLE_128B, Swizzle<3,4,3>)"
    assert describe_swizzle((0, 2, 5)) == "none: no swizzle"
    assert describe_swizzle((1, 2, 3)).startswith("(1, 2, 3) is not a UMMA swizzle")


def test_launch_directives():
    from tile_lsp.analysis.verify.frontend_contract import launch_directives

    def directives(module_attrs: str, fn_attrs: str = "") -> list:
        text = (f"module attributes {{{module_attrs}}} {{\n  cuda_tile.module @m {{\n    cuda_tile.entry @k() {{\n"
                f"      cuda_tile.return\n    }}{fn_attrs}\n  }}\n}}\n")
        entry_op = next(o for o in analyze_text(text).chunks[0].module.walk() if o.name == "cuda_tile.entry")
        return launch_directives(entry_op)

    assert directives("nv_tileaa.compute_capability = 90 : i32") == [
        (".reqntid 128, 1, 1", "tt.num_warps absent: default 4")]
    assert directives("nv_tileaa.compute_capability = 90 : i32, tt.num_ctas = 2 : i32",
                      " {nvvm.minctasm = 2 : i32, nvvm.blocksareclusters}") == [
        (".reqntid 128, 1, 1", "tt.num_warps absent: default 4"), (".reqnctapercluster 2, 1, 1", "tt.num_ctas"),
        (".minnctapersm 2", "nvvm.minctasm"), (".blocksareclusters", "nvvm.blocksareclusters")]
    assert directives("nv_tileaa.compute_capability = 80 : i32, tt.cluster_dim = [2, 2, 1]")[1] == (
        "(no cluster directive before sm_90)", "tt.cluster_dim")


def test_custom_forms_print_back():
    """The printer writes the custom forms back; the print parses and verifies as the input did."""
    from pathlib import Path

    from tile_lsp.analysis.ir.printer import print_module

    path = Path(__file__).parent / "spec_inputs" / "002_pipeline_example.mlir"
    fixed = path.read_text(encoding="utf-8").split("// -----")[1]
    analysis = analyze_text(fixed)
    assert analysis.diagnostics == []
    printed = print_module(analysis.chunks[0].module)
    again = analyze_text(printed)
    assert again.diagnostics == []
    names = [(o.name, o.generic) for o in again.chunks[0].module.walk() if o.name.startswith("nv_tileas.")]
    assert names == [(o.name, False) for o in analysis.chunks[0].module.walk() if o.name.startswith("nv_tileas.")]
    assert len(names) == 10
    # the operand groups show in the form: operandSegmentSizes is elided, as MLIR's printer does
    assert ("nv_tileas.async.tiled_tma_load %1, %2[%4, %4], %3 {atom = #nv_tileas<atom tma_load_2d>} : "
            "!cute_nvgpu.tma_descriptor_tiled, !nv_tileaa.tiled_view<128x128xf16, SMEM>, index, index, "
            "!nv_tileaa.mem_token -> !async.value<tile<128x128xf16>>") in printed
