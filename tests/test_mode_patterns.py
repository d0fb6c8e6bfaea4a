"""Tests of the spec 001 mode-pattern verifiers (pure functions and their nv_tileas rules)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tile_lsp.analysis.verify import mode_patterns as MP
from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.verify.mode_patterns import KIND, KindWordContext, pack_kind_word, verify_kind_word

LADDER_TEXTS = [
    "INT8 type is supported only on arch-conditional variants.",
    "MXF4 and MXF4NVF4 types with Sparsity are supported only on arch-conditional variants.",
    "Explicit scale vector size is supported only on arch-conditional variants.",
    "Scale input accumulator is not supported on this architecture.",
    "Scale input accumulator can only be used with f16 and tf32 types",
    "Block scale is not supported for f16, tf32, f8f6f4, i8 and ti16 types",
    "ashift is not supported with tcgen05.mma.block_scale variants",
    "cta_group::2 is not supported with weight stationary",
    "Cannot use weight stationary with mxf8f6f4 and fp4 types",
    "Cannot use collector::a::use or colletor::a::fill with ashift",
    "Cannot use 2X or 4X as scale vector size for mxf8f6f4 type",
    "Cannot use 1X as scale vector size for mxf4nvf4 type",
    "Cannot use 1X or 4X as scale vector size for mxf4 type",
]

ARCH = KindWordContext(arch_conditional=True)


def test_ladder_table_is_the_spec_order():
    assert [n for n, _, _ in MP.KIND_WORD_LADDER] == list(range(1, 14))
    assert [MP.MESSAGES[mid] for _, mid, _ in MP.KIND_WORD_LADDER] == LADDER_TEXTS


def test_worked_examples():
    """Spec 001 worked examples: 0x42 (i8, cta_group::2) and 0xE2 (f16 + block_scale)."""
    assert verify_kind_word(0x42) == LADDER_TEXTS[0]
    assert verify_kind_word(0x42, ARCH) is None
    assert verify_kind_word(0xE2, ARCH) == LADDER_TEXTS[5]
    assert pack_kind_word(2, mma_kind="i8") == 0x42
    assert pack_kind_word(2, block_scale=True, mma_kind="f16") == 0xE2


def test_opcode_selection():
    """The ladder's success path: 0x42 selects the dense tcgen05.mma (10522); block scale 10521 / 10526."""
    assert MP.kind_word_outcome(0x42) == (1, None)
    assert MP.kind_word_outcome(0x42, ARCH) == (None, 10522)
    assert MP.kind_word_outcome(0xE2, ARCH) == (6, None)
    block = pack_kind_word(2, 1, block_scale=True, mma_kind="mxf4nvf4")
    assert MP.kind_word_outcome(block, ARCH) == (None, 10521)
    assert MP.kind_word_outcome(block, KindWordContext(arch_conditional=True, sparse=True)) == (None, 10526)
    assert MP.TCGEN05_BLOCK_SCALE_OPCODES == {10521, 10526}
    assert MP.select_tcgen05_opcode(pack_kind_word(1, mma_kind="f16")) == 10524  # bit 0: weight stationary
    assert MP.select_tcgen05_opcode(pack_kind_word(2, scale_input_acc=True, mma_kind="tf32")) == 10523
    assert sorted(MP.TCGEN05_OPCODES) == list(range(10521, 10531))


@given(st.integers(0, 511), st.booleans())
def test_every_passing_word_selects_one_opcode_in_range(word, sparse):
    rule, opcode = MP.kind_word_outcome(word, KindWordContext(arch_conditional=True, sparse=sparse))
    assert (rule is None) == (opcode is not None)
    if opcode is not None:
        assert opcode in MP.TCGEN05_OPCODES
        assert (opcode in MP.TCGEN05_BLOCK_SCALE_OPCODES) == bool(word >> 5 & 1)


def test_each_rule_fires_with_its_text():
    cases = [
        (pack_kind_word(2, mma_kind="i8"), KindWordContext(), 1),
        (pack_kind_word(2, 1, mma_kind="mxf4"), KindWordContext(sparse=True), 2),
        (pack_kind_word(2, 1, mma_kind="f16"), KindWordContext(), 3),
        (pack_kind_word(2, scale_input_acc=True, mma_kind="f16"), KindWordContext(isa=MP.isa_version(100)), 4),
        (pack_kind_word(2, scale_input_acc=True, mma_kind="i8"), ARCH, 5),
        (pack_kind_word(2, block_scale=True, mma_kind="tf32"), ARCH, 6),
        (pack_kind_word(2, 1, block_scale=True, mma_kind="mxf4"), KindWordContext(True, ashift=True), 7),
        (pack_kind_word(3, mma_kind="f16"), ARCH, 8),
        (pack_kind_word(1, mma_kind="mxf8f6f4"), ARCH, 9),
        (pack_kind_word(2, mma_kind="f16"), KindWordContext(True, ashift=True, collector_a=True), 10),
        (pack_kind_word(2, 2, mma_kind="mxf8f6f4"), ARCH, 11),
        (pack_kind_word(2, 0, mma_kind="mxf4nvf4"), ARCH, 12),
        (pack_kind_word(2, 2, mma_kind="mxf4"), ARCH, 13),
    ]
    for word, ctx, number in cases:
        assert MP.kind_word_rule(word, ctx) == number, (hex(word), number)
        assert verify_kind_word(word, ctx) == LADDER_TEXTS[number - 1]


def test_fail_first_masks_later_rules():
    """A word tripping rules 3 and 10 reports only rule 3 (spec 001 QUIRK)."""
    word = pack_kind_word(2, 1, mma_kind="f16")
    ctx = KindWordContext(ashift=True, collector_a=True)
    assert verify_kind_word(word, ctx) == LADDER_TEXTS[2]
    assert verify_kind_word(word, KindWordContext(True, ashift=True, collector_a=True)) == LADDER_TEXTS[9]


def test_field_order_quirk():
    """Swapping the field order still yields a word the ladder reads, as another instruction."""
    right = pack_kind_word(2, mma_kind="f16")            # kind::f16, cta_group::2
    swapped = (KIND["f16"]) | (2 << 7)                   # mma_kind in the low bits
    assert verify_kind_word(right, ARCH) is None
    assert MP.unpack_tcgen05_kind(swapped).mma_kind != KIND["f16"]


def test_kind_word_domain():
    with pytest.raises(ValueError):
        verify_kind_word(512)
    with pytest.raises(ValueError):
        verify_kind_word(-1)


def _reference(word: int, c: KindWordContext) -> str | None:
    """The spec's pseudocode transliterated as an if-chain (independent of the table)."""
    svs, sia, bs, kind = (word >> 2) & 3, (word >> 4) & 1, (word >> 5) & 1, word >> 6
    ws = word & 1
    bs_op = bs if c.block_scale_opcode is None else c.block_scale_opcode
    checks = [
        kind == 1 and not c.arch_conditional,
        kind in (0, 7) and c.sparse and not c.arch_conditional,
        svs != 0 and not c.arch_conditional,
        sia and c.isa < MP.SM100A,
        sia and kind not in (3, 4),
        bs and kind in (1, 3, 4, 5),
        bs_op and c.ashift,
        (word & 3) == 3,
        ws and kind in (2, 5, 7),
        c.collector_a and c.ashift,
        kind == 2 and svs > 1,
        kind == 0 and svs == 0,
        kind == 7 and svs in (0, 2),
    ]
    for text, hit in zip(LADDER_TEXTS, checks):
        if hit:
            return text
    return None


contexts = st.builds(KindWordContext, st.booleans(), st.sampled_from([900, 1000, MP.SM100A, 1031]), st.booleans(),
                     st.sampled_from([None, False, True]), st.booleans(), st.booleans())


@given(st.integers(0, 511), contexts)
def test_ladder_matches_pseudocode(word, ctx):
    assert verify_kind_word(word, ctx) == _reference(word, ctx)


@given(st.integers(0, 511))
def test_arch_conditional_clean_context_never_hits_gates(word):
    """With an arch-conditional sm_100a target and no collector flags, rules 1-4, 7 and 10 never fire."""
    assert MP.kind_word_rule(word, ARCH) not in (1, 2, 3, 4, 7, 10)


# ---------------------------------------------------------------------------
# UMMA, LDSM, SM120, swizzle, TMA
# ---------------------------------------------------------------------------


def test_umma_canonical_layout():
    mn_ok = ((8, 2), (1, 64))
    k16 = ((16, 1), (8, 128))  # 16 f16 elements = 256 bits of K
    assert MP.verify_umma_canonical_layout(MP.UMMA_MN, 16, (0, 4, 3), mn_ok, k16) is None
    assert MP.verify_umma_canonical_layout(MP.UMMA_MN, 16, (1, 2, 3), mn_ok, k16) == \
        "unsupported swizzle, got (1, 2, 3)"
    assert MP.verify_umma_canonical_layout(MP.UMMA_MN, 16, (0, 4, 3), mn_ok, ((8, 1), (8, 128))) == (
        "Not a canonical UMMA_MN Layout: Expected K-size 256/sizeof_bits<T> or 512/sizeof_bits(T) in sparse "
        "gemm kernels.")
    assert MP.verify_umma_canonical_layout(MP.UMMA_MN, 16, (0, 4, 3), (((8, 1), 2), (1, 64)), k16) == \
        "Not a canonical UMMA_MN Layout: No flat offset mode"
    assert MP.verify_umma_canonical_layout(MP.UMMA_MN, 16, (0, 4, 3), ((8, 2), (2, 64)), k16) == \
        "Not a canonical UMMA_MN Layout: Expected stride failure."
    k_ok = ((8, 2), (1, 1))
    assert MP.verify_umma_canonical_layout(MP.UMMA_K, 16, (0, 4, 3), ((8, 4), (8, 64)), k_ok) is None
    assert MP.verify_umma_canonical_layout(MP.UMMA_K, 16, (0, 4, 3), ((6, 1), (8, 64)), k_ok) == \
        "Not a canonical UMMA_K Layout: Expected MN-size multiple of 8."
    assert MP.verify_umma_canonical_layout(MP.UMMA_K, 4, (0, 4, 3), ((6, 1), (8, 64)), k_ok) == \
        "Not a canonical UMMA_K Layout: Expected MN-size multiple of 4."
    assert MP.verify_umma_canonical_layout(MP.UMMA_K, 16, (0, 4, 3), ((8, 4), (8, 64)), ((8, 2, 1), (1, 1, 1))) == \
        "Not a canonical UMMA_K Layout: No flat offset mode"
    assert MP.verify_umma_canonical_layout(MP.UMMA_K, 16, (0, 4, 3), ((8, 4), (8, 64)), ((8, 2), (2, 1))) == \
        "Not a canonical UMMA_K Layout: Expected stride failure."
    assert MP.verify_umma_canonical_layout(MP.UMMA_K, 64, (0, 4, 3), ((8, 4), (8, 64)), k_ok) == ""
    with pytest.raises(ValueError):
        MP.verify_umma_canonical_layout(2, 16, (0, 4, 3), mn_ok, k16)


def test_ldsm_modes():
    assert MP.verify_ldsm_mode("M88", "u16", 4, False, (4,)) is None
    assert MP.verify_ldsm_mode("MT1616", "u8", 2, True, (4,)) is None
    assert MP.verify_ldsm_mode("MT1616", "u8", 4, True, (8,)) == "LDSM/STSM mode MT1616 accepts 1/2 matrices, but got 4"
    assert MP.verify_ldsm_mode("M88", "u16", 3, False, (3,)) == "LDSM/STSM mode M88 accepts 1/2/4 matrices, but got 3"
    assert MP.verify_ldsm_mode("MT88", "u16", 1, False, (1,)) == "LDSM/STSM mode MT88 requires transpose = true"
    assert MP.verify_ldsm_mode("M832", "u16", 1, False, (1,)) == \
        "LDSM/STSM mode M832 does not accept size pattern 'u16'; expected one of u2to4, s2to4"
    assert MP.verify_ldsm_mode("M816", "s4to8", 2, False, (2, 1)) == \
        "LDSM/STSM result must be a rank-1 fragment, but got rank 2"
    assert MP.verify_ldsm_mode("M816", "s4to8", 2, False, (4,)) == \
        "LDSM/STSM mode M816 with 2 matrices produces 2 registers, but got 4"
    assert MP.verify_ldsm_mode("M99", "u16", 1, False, (1,)).startswith("unknown LDSM/STSM mode 'M99'")


def test_matrix_copy_and_fragment():
    assert MP.verify_matrix_space_copy(True, "SMEM", "RMEM") is None
    assert MP.verify_matrix_space_copy(False, "SMEM", "RMEM") == \
        "store matrix copy moves RMEM -> SMEM, but got SMEM -> RMEM"
    assert MP.verify_matrix_space_copy(True, "SMEM", "RMEM", shared_alignment=8) == \
        "shared-memory operand is 8-byte aligned; the matrix atom requires 16 bytes"
    assert MP.layout_cosize((4, 2), (1, 4)) == 8
    assert MP.layout_cosize((4, 2), (2, 1)) == 8
    assert MP.verify_register_fragment(MP.layout_cosize((4, 2), (1, 4)), 8) is None
    assert MP.verify_register_fragment(8, 4) == "register fragment holds 128 bits, but the layout cosize needs 256 bits"


def test_sm120_lattice():
    f = MP.verify_sm120_scale_lattice
    assert f(32, 32, "f8E4M3FN", "f6E2M3FN", "f8E8M0FNU", 8) is None
    assert f(64, 32, "f4E2M1FN", "f4E2M1FN", "f8E8M0FNU", 16) is None
    assert f(64, 16, "f4E2M1FN", "f4E2M1FN", "f8E4M3FN", 32) is None
    assert f(32, 8, "f8E4M3FN", "f8E4M3FN", "f8E8M0FNU", 8) == \
        "SM120 block-scaled MMA expects scale vector size 16 or 32, but got 8"
    assert f(16, 32, "f8E4M3FN", "f8E4M3FN", "f8E8M0FNU", 8) == \
        "SM120 block-scaled MMA expects K = 32 or K = 64, but got 16"
    assert f(32, 32, "f16", "f8E4M3FN", "f8E8M0FNU", 8) == \
        "SM120 block-scaled MMA with K = 32 expects FP4, FP6 or FP8 A/B element types, but got f16 and f8E4M3FN"
    assert f(32, 32, "f8E4M3FN", "f8E4M3FN", "f8E4M3FN", 8) == \
        "SM120 block-scaled MMA with K = 32 expects f8E8M0FNU scale factors, but got f8E4M3FN"
    assert f(32, 16, "f8E4M3FN", "f8E4M3FN", "f8E8M0FNU", 8) == \
        "SM120 block-scaled MMA with K = 32 expects scale vector size 32, but got 16"
    assert f(32, 32, "f8E4M3FN", "f8E4M3FN", "f8E8M0FNU", 16) == \
        "SM120 block-scaled MMA with K = 32 expects 8-bit scale fragments, but got 16"
    assert f(64, 32, "f8E4M3FN", "f4E2M1FN", "f8E8M0FNU", 16) == \
        "SM120 block-scaled MMA with K = 64 expects f4E2M1FN A/B element types, but got f8E4M3FN and f4E2M1FN"
    assert f(64, 32, "f4E2M1FN", "f4E2M1FN", "f8E8M0FNU", 8) == \
        "SM120 block-scaled MMA with K = 64 expects scale fragment bits x vector size = 512, but got 8 x 32"


@given(st.integers(0, 3), st.integers(0, 6), st.integers(-3, 3), st.integers(0, 1 << 16), st.integers(0, 1 << 16))
def test_swizzle_commutation_is_sound(b, m, s, offset, x):
    """Whenever the verifier accepts an offset, swizzle and add_offset commute on every address."""
    def swz(v: int) -> int:
        if b == 0:
            return v
        sh = abs(s)
        mask = ((1 << b) - 1) << (m + sh)
        return v ^ ((v & mask) >> sh)
    if MP.verify_swizzle_offset_commutation(b, m, s, offset) is None:
        assert swz(x) + offset == swz(x + offset)


def test_swizzle_message():
    assert MP.verify_swizzle_offset_commutation(3, 4, 3, 64) == \
        "offset 64 does not commute with Swizzle<3,4,3>: it must be a multiple of 1024"
    assert MP.verify_swizzle_offset_commutation(0, 4, 3, 7) is None


def test_tma_rank_and_mode():
    f = MP.verify_tma_rank_and_mode
    assert f("tile", 5) is None
    assert f("tile", 6) == "TMA tile transfers support ranks 1 to 5, but got rank 6"
    assert f("im2col", 2) == "TMA im2col mode requires rank >= 3, but got rank 2"
    assert f("scatter4", 3) == "TMA scatter4 mode requires rank 2, but got rank 3"
    assert f("im2col_w128", 4, sm=90) == \
        "TMA im2col_w128 mode requires a Blackwell target (sm_100 or newer), but got sm_90"
    assert f("im2col_w128", 4, sm=100) is None
    assert f("im2col_w", 4) is None
    assert MP.tma_mode_of_atom("tma_load_im2col_w_4d") == "im2col_w"
    assert MP.tma_mode_of_atom("tma_load_im2col_w128_4d") == "im2col_w128"
    assert MP.tma_mode_of_atom("tma_store_scatter4_2d") == "scatter4"
    assert MP.tma_mode_of_atom("tma_load_2d") == "tile"


# ---------------------------------------------------------------------------
# Rules on nv_tileas ops
# ---------------------------------------------------------------------------


def diags(text: str) -> list[tuple[str, int, int]]:
    return [(d.message, d.range.start.line, d.range.start.character) for d in analyze_text(text).diagnostics]


def src(name: str, ty: str) -> str:
    return f'%{name} = "test.src"() : () -> {ty}'


DESC, MEM = "!nv_tileas.tma_desc<>", "!nv_tileaa.mem_token<>"


def tma_load(shape: str, atom: str, coords: int) -> str:
    view = f"!nv_tileaa.tiled_view<{shape}xf16, SMEM>"
    cs = "".join(f", %i{k}" for k in range(coords))
    types = ", ".join([DESC, view] + ["index"] * coords + [MEM])
    return "\n".join([src("d", DESC), src("v", view), src("m", MEM)]
                     + [src(f"i{k}", "index") for k in range(coords)] + [
        f'%r = "nv_tileas.async.tiled_tma_load"(%d, %v{cs}, %m) {{atom = #nv_tileas<atom {atom}>, '
        f"operandSegmentSizes = array<i32: 1, 1, {coords}, 1>}} : ({types}) -> !async.value<tile<8x8xf16>>"])


def test_tma_rules_on_ops():
    op = "'nv_tileas.async.tiled_tma_load' op "
    assert diags(tma_load("8x8x8", "tma_load_im2col_3d", 3)) == []
    assert diags(tma_load("8x64", "tma_load_im2col_2d", 2)) == [
        (op + "TMA im2col mode requires rank >= 3, but got rank 2", 5, 5)]
    assert diags(tma_load("2x2x2x2x2x64", "tma_load_6d", 6)) == [
        (op + "TMA tile transfers support ranks 1 to 5, but got rank 6", 9, 5)]


def test_tma_blackwell_mode_reads_module_target():
    def module(cc: int) -> str:
        body = tma_load("8x8x64", "tma_load_im2col_w_3d", 3).replace("\n", "\n  ")
        return f"module attributes {{nv_tileaa.compute_capability = {cc} : i32}} {{\n  {body}\n}}"
    assert diags(module(100)) == []
    assert diags(module(90)) == [("'nv_tileas.async.tiled_tma_load' op TMA im2col_w mode requires a Blackwell "
                                  "target (sm_100 or newer), but got sm_90", 7, 7)]


def test_matrix_copy_rule():
    def copy(atom: str, s: str, d: str) -> str:
        a, b = f"!nv_tileaa.tiled_view<64xf16, {s}>", f"!nv_tileaa.tiled_view<64xf16, {d}>"
        return "\n".join([src("s", a), src("t", b),
                          f'"nv_tileas.copy"(%s, %t) {{atom = #nv_tileas<atom {atom}>}} : ({a}, {b}) -> ()'])
    assert diags(copy("ldsm_m88_x4", "SMEM", "RMEM")) == []
    assert diags(copy("stsm_m88_x4", "RMEM", "SMEM")) == []
    assert diags(copy("ldsm_m88_x4", "RMEM", "SMEM")) == [
        ("'nv_tileas.copy' op load matrix copy moves SMEM -> RMEM, but got RMEM -> SMEM", 2, 0)]
    assert diags(copy("copy", "RMEM", "SMEM")) == []
