"""Our PTX on the CPU emulator (tests/ptx_emulator.py) against the reference interpreter.

The same cases as ``tests/test_gpu.py`` plus ``EXTRA_CASES`` (more corpus
kernels, for instructions the GPU cases do not reach), run without a GPU:
each corpus kernel is lowered for its own target, executed by the PTX
emulator on seeded random inputs, and every array the kernel can write is
compared with the NumPy interpreter's result.  The emulator also fails a run
on faults a GPU would hit (out-of-bounds or misaligned access, divergent
barrier, partial-warp mma) and on data races between the threads of a CTA,
which lockstep emulation would otherwise hide (the missing barriers of
``permute_reshape_3d`` and ``load_store_options`` were found so).  The unit tests at the end pin the emulator's own
semantics (mma.sync fragments, unordered compares, cvt rounding, scheduling,
race and fault detection) on hand-written PTX.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests import ptx_emulator as emu
from tests.test_gpu import CASES, Case, _compare, lower_and_reference


# More corpus kernels, for instructions the GPU cases do not reach (f64, i64, directed roundings, fp8 and
# bf16 conversions, bf16 mma, acquire/release accesses, griddepcontrol); arrays from _auto_arrays unless given.
BF16 = "bfloat16"
EXTRA_CASES = [
    Case("pow_atan2_rem_f32_b256.sm_90", None, (1, 1, 1), rtol=1e-4, atol=1e-5),
    # f64 pow/atan2/sinh/cosh/tanh are computed in f32 precision by design (the lowering warns about it):
    # compare those kernels at f32 precision.
    Case("pow_atan2_rem_f64_b128.sm_90", None, (1, 1, 1), rtol=2e-6, atol=1e-6),
    Case("hyperbolic_rounding_f32_b256.sm_80", None, (1, 1, 1), rtol=1e-5, atol=1e-6),
    Case("hyperbolic_rounding_f64_b128.sm_90", None, (1, 1, 1), rtol=2e-6, atol=1e-6),
    Case("ew_float_arith_f64_b128.sm_80", None, (1, 1, 1), rtol=1e-12, atol=1e-12),
    Case("ew_int_arith_i64_b128.sm_90", None, (1, 1, 1)),
    Case("bitwise_shift_i64_s7_b128.sm_90", None, (1, 1, 1)),
    Case("ew_signed_misc_i16_b256.sm_80", None, (1, 1, 1)),
    Case("int_promotion_i8_i16_u16_u64_t256.sm_90", None, (1, 1, 1)),
    Case("cast_roundtrip_bf16_to_i8_b256.sm_80", None, (1, 1, 1)),
    Case("cast_roundtrip_f32_to_f16_b256.sm_90", None, (1, 1, 1)),
    Case("cast_roundtrip_u8_to_f32_b512.sm_90", None, (1, 1, 1)),
    Case("argmax_argmin_f16_32x128.sm_90", None, (1, 1, 1)),
    # tf32 on m16n8k8 in fragments
    Case("matmul_tiled_tf32_64x64x32.sm_100", None, (1, 1, 1), rtol=1e-4, atol=1e-3),
    # batched MMA in fragments (each 16-row tile in one batch), and the u8 and e5m2 m16n8k32 MMAs
    Case("batched_matmul_bf16_b2_64x64x64.sm_90", None, (1, 1, 1), rtol=2e-2, atol=2e-2),
    Case("matmul_int8_u8_64x64x64.sm_90", None, (1, 1, 1)),
    Case("matmul_fp8_e5m2_fastacc_64x128x128.sm_90", None, (1, 1, 1), scalars=[0.5], rtol=2e-2, atol=2e-2),
    Case("branchy_scalar_f64_t64.sm_90", None, (1, 1, 1), scalars=[1, 0.75], rtol=1e-12, atol=1e-12),
    Case("quantize_fp8_rows_bf16_to_e4m3_32x256.sm_90", None, (1, 1, 1)),
    Case("quantize_fp8_rows_f16_to_e5m2_16x512.sm_90", None, (1, 1, 1)),
    Case("pdl_consumer_bf16_t512.sm_90", None, (1, 1, 1)),
    Case("load_store_options_f32_t256.sm_90", None, (1, 1, 1)),
    Case("flash_attention_bf16_d128_64x64.sm_90", [((1, 1, 128, 128), BF16, "normal")] * 3
         + [((1, 1, 128, 128), BF16, "zeros")], (2, 1, 1), scalars=[0.088], rtol=2e-2, atol=2e-2),
]

ALL_CASES = CASES + EXTRA_CASES


#: Emulator schedules of every case: CTAs in lockstep (what a GPU does, roughly, and what reproduced
#: the H100's results), then one seeded random interleaving with delayed stores.
SCHEDULES = (0, 1)


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.kernel for c in ALL_CASES])
def test_lowered_kernel_matches_the_interpreter_on_the_emulator(case):
    """Every case on its real grid, CTAs concurrent: each result must be one of the interpreter's outcomes.

    A kernel with one reference outcome (its result does not depend on the
    order of the CTAs) must give exactly that under every schedule; for one
    with several, lockstep must match them element by element (random
    interleavings can reach outcomes the interpreter's few schedules did not).
    """
    result, ours, refs, args = lower_and_reference(case)
    info = result.kernels[0]
    # which of `ours` each array argument is, so that every schedule runs on fresh copies
    which = {j: next(i for i, o in enumerate(ours) if o is a) for j, a in enumerate(args) if isinstance(a, np.ndarray)}
    for schedule in SCHEDULES if len(refs) == 1 else SCHEDULES[:1]:
        got = [o.copy() for o in ours]
        run_args = [got[which[j]] if j in which else a for j, a in enumerate(args)]
        emu.run(result.ptx, info.name, [p for p, _ in info.params], run_args, case.grid, info.threads,
                info.dynamic_smem, schedule=schedule)
        for i, g in enumerate(got):
            _compare(f"{case.kernel} array #{i} (schedule {schedule})", g, [r[i] for r in refs], case)


def test_gather_view_dense_index_counts_elements_in_our_ptx():
    # tileiras' cubin of advanced_index_rows (on an H200, bench/gpu_probe.py) reads columns s..s+63 for the
    # dense index s of its gather_scatter_view; our PTX read tile s (64*s..64*s+63) until it was fixed.
    # Checked against NumPy directly, since the interpreter shared the mistake.
    from tests.conftest import require_corpus
    from tile_lsp.analysis import interpreter as interp
    from tile_lsp.codegen import lower_text

    text = (require_corpus() / "kernels" / "advanced_index_rows_f32_r16_c64.sm_90.mlir").read_text()
    rng = np.random.default_rng(11)
    x = rng.standard_normal((40, 128)).astype(np.float32)
    rows = np.array(list(range(39, 7, -1)), np.int32)
    result = lower_text(text, "sm_90")
    info = result.kernels[0]
    for s in (1, 5):
        out = np.zeros((32, 64), np.float32)
        args = interp.bind_arrays(interp.infer_array_params(text), [x, rows, out], [s])
        emu.run(result.ptx, info.name, [p for p, _ in info.params], args, (2, 1, 1), info.threads, info.dynamic_smem)
        np.testing.assert_array_equal(out, 2 * x[rows, s:s + 64])


def test_view_access_with_run_time_strides_and_tails_on_the_emulator():
    """Slot addresses and bounds of a partition view (computed once per thread, then per slot from
    its fixed offset in the tile) on a permuted view of a strided tensor whose extents cut the
    tile in every dimension: what the interpreter reads and writes, padding included."""
    from tests.test_gpu import OWN_KERNELS
    from tile_lsp.analysis import interpreter as interp
    from tile_lsp.codegen import lower_text
    from tile_lsp.codegen.ops_memory import slot_offsets

    text = (OWN_KERNELS / "permuted_tail_copy_f32_2x4x64.sm_90.mlir").read_text()
    result = lower_text(text, "sm_90")
    assert result.ok, result.diagnostics
    info = result.kernels[0]
    # 128 threads, 4 slots: slot bits move along tile dimensions 0 and 1
    assert info.threads == 128
    assert [slot_offsets((2, 4, 64), 128, s) for s in range(4)] == [[0, 0, 0], [0, 2, 0], [1, 0, 0], [1, 2, 0]]
    rng = np.random.default_rng(5)
    buf = rng.standard_normal(100 * 21).astype(np.float32)  # x[i, j, k] = buf[3 * i + j + 21 * k], 7 x 3 x 100
    scalars_x = [7, 3, 100, 3, 1, 21]
    out_shape = (4, 7, 110)  # cuts the tiles' rows (8) and columns (128); row 3 and columns 100-109 are padding
    grid = (2, 2, 2)  # tile indices along (3 / 2, 7 / 4, 100 / 64), rounded up
    outs = []
    for run in ("interpreter", "emulator"):
        out = np.full(out_shape, -1.0, np.float32)
        args = [buf.copy(), *scalars_x, out, *out_shape, 7 * 110, 110]
        if run == "interpreter":
            interp.run_kernel(text, None, args, grid)
        else:
            emu.run(result.ptx, info.name, [p for p, _ in info.params], args, grid, info.threads, info.dynamic_smem)
        outs.append(out)
    np.testing.assert_array_equal(outs[1], outs[0])
    x = buf.reshape(100, 7, 3).transpose(1, 2, 0)
    # out[a, b, c] = x[b, a, c] (dim_map [1, 0, 2]) where x has that element, else the padding
    want = np.full(out_shape, np.inf, np.float32)
    want[:3, :7, :100] = x.transpose(1, 0, 2)
    assert np.isinf(want).sum() and not np.isinf(x).any()
    np.testing.assert_array_equal(outs[1], want)


# ---------------------------------------------------------------------------
# The emulator itself, on hand-written PTX
# ---------------------------------------------------------------------------


def _kernel(body: str, params: str = ".param .u64 out", regs: str = "", header: str = "") -> str:
    return f"""
.version 8.7
.target sm_90
.address_size 64
{header}
.visible .entry k({params})
{{
    .reg .pred %p<8>;
    .reg .b16 %h<16>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<32>;
    .reg .f64 %fd<8>;
    {regs}
{body}
}}
"""


_PRELUDE = """
    ld.param.u64 %rd0, [out];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd1, %r0, 4;
    add.s64 %rd2, %rd0, %rd1;
"""


def _run_f32(body: str, n: int, x=None, out_dtype=np.float32) -> np.ndarray:
    """Run ``body`` on ``n`` threads; %rd2 points to element tid of an output array, %f0 holds x[tid]."""
    out = np.zeros(n, out_dtype)
    if x is None:
        x = np.zeros(n, np.float32)
    load = """
    ld.param.u64 %rd5, [inp];
    add.s64 %rd6, %rd5, %rd1;
    ld.global.f32 %f0, [%rd6];
"""
    ptx = _kernel(_PRELUDE + load + body + "\n    ret;", params=".param .u64 out, .param .u64 inp")
    emu.run(ptx, "k", [".u64", ".u64"], [out, np.asarray(x, np.float32)], (1, 1, 1), n)
    return out


def _run_mma(instruction: str, afrag: np.ndarray, bfrag: np.ndarray, cfrag: np.ndarray) -> np.ndarray:
    """One warp runs ``instruction`` (an ``mma.sync`` with 4 A, 2 B, 4 C/D registers): lane ``l`` loads
    row ``l`` of ``afrag`` (16 bytes), ``bfrag`` (8 bytes) and ``cfrag`` (4 f32 or s32), and stores its
    D registers; returns D as the 16x8 matrix of the PTX ISA's C/D layout (element ``i`` of lane
    ``4g + t`` at row ``g + 8 * (i >> 1)``, column ``2t + (i & 1)``), in ``cfrag``'s dtype."""
    creg = "%r" if cfrag.dtype == np.int32 else "%f"
    c, d = (", ".join(f"{creg}{i}" for i in range(first, first + 4)) for first in (11, 21))
    body = f"""
    ld.param.u64 %rd0, [out];
    ld.param.u64 %rd3, [fa];
    ld.param.u64 %rd4, [fb];
    ld.param.u64 %rd5, [fc];
    mov.u32 %r0, %laneid;
    mul.wide.u32 %rd1, %r0, 16;
    add.s64 %rd6, %rd3, %rd1;
    ld.global.v4.b32 {{%r1, %r2, %r3, %r4}}, [%rd6];
    add.s64 %rd7, %rd5, %rd1;
    ld.global.v4.b32 {{{c}}}, [%rd7];
    mul.wide.u32 %rd8, %r0, 8;
    add.s64 %rd9, %rd4, %rd8;
    ld.global.v2.b32 {{%r5, %r6}}, [%rd9];
    {instruction} {{{d}}}, {{%r1, %r2, %r3, %r4}}, {{%r5, %r6}}, {{{c}}};
    add.s64 %rd10, %rd0, %rd1;
    st.global.v4.b32 [%rd10], {{{d}}};
    ret;
"""
    out = np.zeros((32, 4), cfrag.dtype)
    ptx = _kernel(body, params=".param .u64 out, .param .u64 fa, .param .u64 fb, .param .u64 fc")
    emu.run(ptx, "k", [".u64"] * 4, [out, afrag, bfrag, cfrag], (1, 1, 1), 32)
    got = np.zeros((16, 8), cfrag.dtype)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(4):
            got[g + (8 if i >= 2 else 0), t * 2 + (i & 1)] = out[lane, i]
    return got


def test_mma_m16n8k16_fragments_follow_the_ptx_isa():
    # Each lane loads its fragments from A (16x16, row-major), B (16x8, stored as B^T row-major = "col")
    # and C (16x8) with the layouts of the PTX ISA, and stores D with the C layout.
    rng = np.random.default_rng(0)
    A = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    B = rng.integers(-4, 5, (16, 8)).astype(np.float16)
    C = rng.integers(-8, 9, (16, 8)).astype(np.float32)
    # Host-side fragment packing from the ISA formulas, one row of words per lane.
    afrag = np.zeros((32, 4), np.uint32)
    bfrag = np.zeros((32, 2), np.uint32)
    cfrag = np.zeros((32, 4), np.float32)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        a = [A[g + (8 if i in (2, 3, 6, 7) else 0), t * 2 + (i & 1) + (8 if i >= 4 else 0)] for i in range(8)]
        b = [B[t * 2 + (i & 1) + (8 if i >= 2 else 0), g] for i in range(4)]
        for r in range(4):
            afrag[lane, r] = int(a[2 * r].view(np.uint16)) | int(a[2 * r + 1].view(np.uint16)) << 16
        for r in range(2):
            bfrag[lane, r] = int(b[2 * r].view(np.uint16)) | int(b[2 * r + 1].view(np.uint16)) << 16
        cfrag[lane] = [C[g + (8 if i >= 2 else 0), t * 2 + (i & 1)] for i in range(4)]
    got = _run_mma("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", afrag, bfrag, cfrag)
    np.testing.assert_array_equal(got, A.astype(np.float32) @ B.astype(np.float32) + C)


@pytest.mark.parametrize("aty,bty", [("s8", "u8"), ("e4m3", "e5m2")])
def test_mma_m16n8k32_8_bit_fragments_follow_the_ptx_isa(aty, bty):
    # PTX ISA "Matrix Fragments for mma.m16n8k32": A byte i of a lane is row g + 8 * ((i // 4) & 1),
    # column 4t + (i & 3) + 16 * (i >= 8); B byte i is row 4t + (i & 3) + 16 * (i >= 4), column g.
    import ml_dtypes
    rng = np.random.default_rng(1)
    kinds = {"s8": np.int8, "u8": np.uint8, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
    A = rng.integers(-4 if aty == "s8" else 0, 5, (16, 32)).astype(kinds[aty])
    B = rng.integers(0, 5, (32, 8)).astype(kinds[bty])
    acc, cdt = ("s32", np.int32) if aty == "s8" else ("f32", np.float32)
    C = rng.integers(-8, 9, (16, 8)).astype(cdt)
    afrag = np.zeros((32, 16), np.uint8)
    bfrag = np.zeros((32, 8), np.uint8)
    cfrag = np.zeros((32, 4), cdt)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(16):
            afrag[lane, i] = A[g + 8 * ((i // 4) & 1), 4 * t + (i & 3) + (16 if i >= 8 else 0)].view(np.uint8)
        for i in range(8):
            bfrag[lane, i] = B[4 * t + (i & 3) + (16 if i >= 4 else 0), g].view(np.uint8)
        cfrag[lane] = [C[g + (8 if i >= 2 else 0), t * 2 + (i & 1)] for i in range(4)]
    got = _run_mma(f"mma.sync.aligned.m16n8k32.row.col.{acc}.{aty}.{bty}.{acc}", afrag.view(np.uint32),
                   bfrag.view(np.uint32), cfrag)
    np.testing.assert_array_equal(got.astype(np.float64), A.astype(np.float64) @ B.astype(np.float64) + C)


def test_ldmatrix_gives_each_lane_its_rows_elements_and_transposes():
    # a 16x16 b16 matrix (values 0..255) in shared memory, row-major; lane l gives the address of row
    # l & 15, column 8 * (l >> 4): .x4 hands out the A fragment of mma.m16n8k16, .x2.trans (rows of lanes
    # 0-15, column 0) the B fragment of a row-major 16x8 K x N tile
    M = np.arange(256, dtype=np.uint16).reshape(16, 16)
    out = np.zeros((32, 6), np.uint32)
    body = """
    ld.param.u64 %rd0, [out];
    ld.param.u64 %rd3, [src];
    mov.u32 %r0, %laneid;
    mul.wide.u32 %rd1, %r0, 16;
    add.s64 %rd4, %rd3, %rd1;
    ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd4];
    mov.u32 %r5, smem;
    mad.lo.s32 %r6, %r0, 16, %r5;
    st.shared.v4.b32 [%r6], {%r1, %r2, %r3, %r4};
    bar.sync 0;
    and.b32 %r7, %r0, 15;
    shr.u32 %r8, %r0, 4;
    shl.b32 %r8, %r8, 3;
    mad.lo.s32 %r9, %r7, 16, %r8;
    mad.lo.s32 %r9, %r9, 2, %r5;
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r10, %r11, %r12, %r13}, [%r9];
    mad.lo.s32 %r14, %r7, 32, %r5;
    ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r15, %r16}, [%r14];
    mul.wide.u32 %rd5, %r0, 24;
    add.s64 %rd6, %rd0, %rd5;
    st.global.v2.b32 [%rd6], {%r10, %r11};
    st.global.v2.b32 [%rd6+8], {%r12, %r13};
    st.global.v2.b32 [%rd6+16], {%r15, %r16};
    ret;
"""
    ptx = _kernel(body, params=".param .u64 out, .param .u64 src", header=".shared .align 16 .b8 smem[512];")
    emu.run(ptx, "k", [".u64", ".u64"], [out, M], (1, 1, 1), 32)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        a = [M[g + 8 * (i & 1), 2 * t + 8 * (i >> 1)] for i in range(4)]  # A fragment registers, low halves
        assert [int(out[lane, i]) for i in range(4)] == [int(x) | int(x + 1) << 16 for x in a]
        b = [(M[2 * t + 8 * j, g], M[2 * t + 8 * j + 1, g]) for j in range(2)]  # B: rows 2t, 2t+1 of column g
        assert [int(out[lane, 4 + j]) for j in range(2)] == [int(lo) | int(hi) << 16 for lo, hi in b]


@pytest.mark.parametrize("sel,want", [(0x3210, 0x44332211), (0x7654, 0x88776655), (0x6420, 0x77553311),
                                      (0x0040, 0x11115511), (0x5410, 0x66552211), (0x000B, 0x11111100),
                                      (0x000F, 0x111111FF)])
def test_prmt_picks_bytes_of_b_and_a(sel, want):
    # a = 0x44332211 (bytes 0-3), b = 0x88776655 (bytes 4-7); a selector with bit 3 set replicates the sign
    body = f"""
    mov.b32 %r1, 0x44332211;
    mov.b32 %r2, 0x88776655;
    prmt.b32 %r3, %r1, %r2, {sel};
    st.global.u32 [%rd2], %r3;"""
    out = _run_f32(body, 32, out_dtype=np.uint32)
    assert int(out[0]) == want


@pytest.mark.parametrize("mode,b,c,want", [
    # the PTX ISA's shfl.sync pseudocode, lanes of 64 threads (two warps), each sending 100 + tid
    ("bfly", 5, 31, lambda t: t ^ 5),
    ("down", 3, 31, lambda t: t + 3 if t % 32 + 3 <= 31 else t),
    ("up", 2, 0, lambda t: t - 2 if t % 32 >= 2 else t),
    ("idx", 7, 31, lambda t: t // 32 * 32 + 7),
    # segments of 8 lanes (c = 0x1807: segmask 0x18, clamp 7)
    ("idx", 3, 0x1807, lambda t: t // 8 * 8 + 3),
    ("down", 6, 0x1807, lambda t: t + 6 if t % 8 + 6 <= 7 else t),
])
def test_shfl_sync_follows_the_ptx_isa(mode, b, c, want):
    body = f"""
    add.u32 %r1, %r0, 100;
    shfl.sync.{mode}.b32 %r2|%p1, %r1, {b}, {c}, -1;
    selp.u32 %r3, 1000, 0, %p1;
    add.u32 %r2, %r2, %r3;
    st.global.u32 [%rd2], %r2;"""
    out = _run_f32(body, 64, out_dtype=np.uint32)
    expect = [100 + want(t) + (1000 if want(t) != t or mode in ("bfly", "idx") else 0) for t in range(64)]
    assert out.tolist() == expect


def test_shfl_sync_needs_the_whole_warp():
    body = """
    setp.lt.u32 %p1, %r0, 16;
    @%p1 bra $skip;
    shfl.sync.bfly.b32 %r1, %r0, 1, 31, -1;
$skip:
    ret;
"""
    with pytest.raises(emu.EmulatorError, match="partial warp"):
        _run_f32(body, 32)


def test_mma_needs_the_whole_warp():
    body = """
    mov.u32 %r0, %laneid;
    setp.lt.u32 %p1, %r0, 16;
    @%p1 bra $skip;
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};
$skip:
    ret;
"""
    with pytest.raises(emu.EmulatorError, match="partial warp"):
        emu.run(_kernel(body), "k", [".u64"], [np.zeros(1, np.float32)], (1, 1, 1), 32)


def test_setp_unordered_and_ordered_compares():
    nan = np.float32("nan")
    pairs = [(1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (nan, 1.0), (1.0, nan), (nan, nan)]
    n = len(pairs)
    ops = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]
    out = np.zeros((n, len(ops)), np.uint32)
    lines = []
    for j, op in enumerate(ops):
        lines.append(f"    setp.{op}.f32 %p1, %f0, %f1;\n    selp.u32 %r5, 1, 0, %p1;\n"
                     f"    st.global.u32 [%rd2+{4 * j}], %r5;")
    body = f"""
    ld.param.u64 %rd0, [out];
    ld.param.u64 %rd3, [xy];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd1, %r0, 8;
    add.s64 %rd4, %rd3, %rd1;
    ld.global.v2.f32 {{%f0, %f1}}, [%rd4];
    mul.wide.u32 %rd5, %r0, {4 * len(ops)};
    add.s64 %rd2, %rd0, %rd5;
{chr(10).join(lines)}
    ret;
"""
    xy = np.array(pairs, np.float32)
    emu.run(_kernel(body, params=".param .u64 out, .param .u64 xy"), "k", [".u64", ".u64"], [out, xy], (1, 1, 1), n)
    with np.errstate(invalid="ignore"):
        for i, (a, b) in enumerate(pairs):
            un = np.isnan(a) or np.isnan(b)
            want = [a == b, (a != b) and not un, a < b, a <= b, a > b, a >= b,
                    a == b or un, a != b, a < b or un, a <= b or un, a > b or un, a >= b or un, not un, un]
            assert out[i].tolist() == [int(w) for w in want], (a, b)


def test_setp_with_boolean_combination_and_two_destinations():
    body = """
    setp.lt.u32 %p1, %r0, 3;
    setp.ge.and.u32 %p2|%p3, %r0, 2, %p1;
    selp.u32 %r5, 1, 0, %p2;
    selp.u32 %r6, 2, 0, %p3;
    or.b32 %r7, %r5, %r6;
    st.global.u32 [%rd2], %r7;
    ret;
"""
    out = np.zeros(5, np.uint32)
    emu.run(_kernel(_PRELUDE + body), "k", [".u64"], [out], (1, 1, 1), 5)
    # p2 = (tid >= 2) & (tid < 3); p3 = !(tid >= 2) & (tid < 3)
    assert out.tolist() == [2, 2, 1, 0, 0]


def test_cvt_float_to_int_rounding_and_saturation():
    x = np.array([2.5, -2.5, 3.5, -0.5, 1e10, -1e10, np.nan, 0.7], np.float32)
    results = {}
    for mode in ("rni", "rzi", "rmi", "rpi"):
        body = f"    cvt.{mode}.s32.f32 %r5, %f0;\n    st.global.s32 [%rd2], %r5;"
        results[mode] = _run_f32(body, len(x), x, np.int32).tolist()
    big, small = 2**31 - 1, -2**31
    assert results["rni"] == [2, -2, 4, 0, big, small, 0, 1]
    assert results["rzi"] == [2, -2, 3, 0, big, small, 0, 0]
    assert results["rmi"] == [2, -3, 3, -1, big, small, 0, 0]
    assert results["rpi"] == [3, -2, 4, 0, big, small, 0, 1]
    sat8 = _run_f32("    cvt.rzi.sat.s8.f32 %h1, %f0;\n    cvt.s32.s8 %r5, %h1;\n    st.global.s32 [%rd2], %r5;",
                    len(x), x, np.int32)
    assert sat8.tolist() == [2, -2, 3, 0, 127, -128, 0, 0]


def test_cvt_float_narrowing_roundings():
    # 1 + 2**-11 + 2**-20 lies just above the midpoint between two f16 neighbours of 1.
    x = np.array([1 + 2**-11 + 2**-20, -(1 + 2**-11 + 2**-20), 1 + 2**-11, 70000.0, -70000.0], np.float32)
    up = float(np.float16(1 + 2**-10))
    res = {}
    for mode in ("rn", "rz", "rm", "rp"):
        body = f"    cvt.{mode}.f16.f32 %h1, %f0;\n    cvt.f32.f16 %f1, %h1;\n    st.global.f32 [%rd2], %f1;"
        res[mode] = _run_f32(body, len(x), x).tolist()
    assert res["rn"] == [up, -up, 1.0, np.inf, -np.inf]  # the tie 1 + 2**-11 rounds to even
    assert res["rz"] == [1.0, -1.0, 1.0, 65504.0, -65504.0]
    assert res["rm"] == [1.0, -up, 1.0, 65504.0, -np.inf]
    assert res["rp"] == [up, -1.0, up, np.inf, -65504.0]
    bf = _run_f32("    cvt.rn.bf16.f32 %h1, %f0;\n    st.global.b16 [%rd2], %h1;", len(x), x, np.uint32)
    want = x.astype(ml_dtypes.bfloat16).view(np.uint16)
    assert (bf.view(np.uint16)[::2] == want).all()


def test_cvt_fp8x2_packs_a_high_and_b_low_with_satfinite():
    x = np.array([1.0, 1000.0, -3.3, np.nan], np.float32)
    body = """
    mov.f32 %f1, 0f3F000000;
    cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f0;
    cvt.u32.u16 %r5, %h1;
    st.global.u32 [%rd2], %r5;
"""
    out = _run_f32(body, len(x), x, np.uint32)
    lo = (out & 0xFF).astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    hi = (out >> 8).astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    assert (hi == 0.5).all()
    assert lo[:3].tolist() == [1.0, 448.0, float(np.float32(-3.3).astype(ml_dtypes.float8_e4m3fn))]
    assert np.isnan(lo[3])


def test_integer_semantics_wraparound_division_and_shifts():
    body = """
    ld.param.u64 %rd0, [out];
    mov.u32 %r1, 0x7fffffff;
    add.s32 %r2, %r1, 1;
    st.global.s32 [%rd0], %r2;
    mov.u32 %r3, -7;
    div.s32 %r4, %r3, 2;
    st.global.s32 [%rd0+4], %r4;
    rem.s32 %r5, %r3, 2;
    st.global.s32 [%rd0+8], %r5;
    div.u32 %r6, %r3, 2;
    st.global.u32 [%rd0+12], %r6;
    div.s32 %r7, %r3, 0;
    st.global.s32 [%rd0+16], %r7;
    shl.b32 %r8, %r1, 40;
    st.global.u32 [%rd0+20], %r8;
    shr.s32 %r9, %r3, 99;
    st.global.s32 [%rd0+24], %r9;
    shr.u32 %r10, %r3, 32;
    st.global.u32 [%rd0+28], %r10;
    mul.hi.s32 %r11, %r3, %r1;
    st.global.s32 [%rd0+32], %r11;
    mul.wide.s32 %rd3, %r3, %r1;
    st.global.s64 [%rd0+40], %rd3;
    cvt.u64.s32 %rd4, %r3;
    st.global.u64 [%rd0+48], %rd4;
    ret;
"""
    out = np.zeros(14, np.int32)
    emu.run(_kernel(body), "k", [".u64"], [out], (1, 1, 1), 1)
    assert out[:10].tolist() == [-2**31, -3, -1, (2**32 - 7) // 2, -1, 0, -1, 0, (-7 * (2**31 - 1)) >> 32, 0]
    assert out[10:12].view(np.int64)[0] == -7 * (2**31 - 1)
    assert out[12:14].view(np.uint64)[0] == 2**64 - 7


def test_copysign_takes_the_sign_of_the_first_operand():
    x = np.array([-1.0, 2.0], np.float32)
    out = _run_f32("    mov.f32 %f1, 0f40400000;\n    copysign.f32 %f2, %f0, %f1;\n    st.global.f32 [%rd2], %f2;",
                   2, x)
    assert out.tolist() == [-3.0, 3.0]


def test_divergent_loop_and_barrier_scheduling():
    # Thread t loops t times (divergent trip counts), all threads then meet at a barrier and read a
    # neighbour's shared-memory slot written before it.
    body = """
    mov.u32 %r1, 0;
$loop:
    setp.ge.u32 %p1, %r1, %r0;
    @%p1 bra $done;
    add.u32 %r1, %r1, 1;
    bra $loop;
$done:
    mov.u32 %r2, buf;
    shl.b32 %r3, %r0, 2;
    add.u32 %r4, %r2, %r3;
    st.shared.u32 [%r4], %r1;
    bar.sync 0;
    add.u32 %r5, %r0, 1;
    and.b32 %r5, %r5, 63;
    shl.b32 %r5, %r5, 2;
    add.u32 %r6, %r2, %r5;
    ld.shared.u32 %r7, [%r6];
    st.global.u32 [%rd2], %r7;
    ret;
"""
    out = np.zeros(64, np.uint32)
    emu.run(_kernel(_PRELUDE + body, header=".shared .align 4 .b8 buf[256];"), "k", [".u64"], [out], (1, 1, 1), 64)
    assert out.tolist() == [(t + 1) % 64 for t in range(64)]


def test_divergent_barrier_is_reported():
    body = """
    setp.lt.u32 %p1, %r0, 32;
    @%p1 bra $skip;
    bar.sync 0;
$skip:
    ret;
"""
    with pytest.raises(emu.EmulatorError, match="barrier"):
        emu.run(_kernel(_PRELUDE + body), "k", [".u64"], [np.zeros(64, np.float32)], (1, 1, 1), 64)


def test_out_of_bounds_and_misaligned_accesses_are_reported():
    with pytest.raises(emu.EmulatorError, match="out of bounds|outside"):
        _run_f32("    st.global.f32 [%rd2+4096], %f0;", 4)
    with pytest.raises(emu.EmulatorError, match="misaligned"):
        _run_f32("    st.global.f32 [%rd2+2], %f0;", 4)


def test_atomics_apply_in_thread_order():
    body = """
    mov.u32 %r1, 1;
    atom.global.add.u32 %r2, [%rd0], %r1;
    st.global.u32 [%rd2+4], %r2;
    atom.global.cas.b32 %r3, [%rd0+256], %r0, 7;
    ret;
"""
    out = np.zeros(65, np.uint32)
    ptx = _kernel("    ld.param.u64 %rd0, [out];\n    mov.u32 %r0, %tid.x;\n    mul.wide.u32 %rd1, %r0, 4;\n"
                  "    add.s64 %rd2, %rd0, %rd1;\n" + body)
    emu.run(ptx, "k", [".u64"], [out], (1, 1, 1), 63)
    assert out[0] == 63
    assert out[1:64].tolist() == list(range(63))  # old values in thread order
    assert out[64] == 7  # thread 0 swapped 0 -> 7; later compares fail


def test_unsupported_instructions_raise_when_executed():
    with pytest.raises(emu.EmulatorError, match="popc"):
        _run_f32("    popc.b32 %r5, %r0;", 2)


def test_shared_memory_race_without_barrier_is_reported():
    body = """
    mov.u32 %r2, buf;
    shl.b32 %r3, %r0, 2;
    add.u32 %r4, %r2, %r3;
    st.shared.u32 [%r4], %r0;
    add.u32 %r5, %r4, 4;
    ld.shared.u32 %r7, [%r5];
    st.global.u32 [%rd2], %r7;
    ret;
"""
    ptx = _kernel(_PRELUDE + body, header=".shared .align 4 .b8 buf[260];")
    with pytest.raises(emu.DataRace, match="thread 0 reads bytes written by thread 1"):
        emu.run(ptx, "k", [".u64"], [np.zeros(64, np.uint32)], (1, 1, 1), 64)
    out = np.zeros(64, np.uint32)
    emu.run(ptx, "k", [".u64"], [out], (1, 1, 1), 64, check_races=False)  # lockstep: the racy value
    assert out[:63].tolist() == list(range(1, 64))


STALE = 0xFFFFFFFF  # the emulator's shared memory before any write
_CP_ASYNC = """
    ld.param.u64 %rd0, [out];
    ld.param.u64 %rd3, [src];
    mov.u32 %r0, %laneid;
    mul.wide.u32 %rd1, %r0, 16;
    add.s64 %rd4, %rd3, %rd1;
    mov.u32 %r5, smem;
    mad.lo.s32 %r6, %r0, 16, %r5;
    setp.lt.u32 %p1, %r0, 24;
    selp.u32 %r9, 16, 4, %p1;
    cp.async.cg.shared.global [%r6], [%rd4], 16, %r9;
    cp.async.commit_group;
    cp.async.ca.shared.global [%r6+512], [%rd4], 8;
    cp.async.commit_group;
    ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%r6];
    WAIT1
    ld.shared.v4.b32 {%r10, %r11, %r12, %r13}, [%r6];
    ld.shared.v2.b32 {%r14, %r15}, [%r6+512];
    WAIT2
    ld.shared.v2.b32 {%r16, %r17}, [%r6+512];
    bar.sync 0;
    xor.b32 %r7, %r0, 1;
    mad.lo.s32 %r8, %r7, 16, %r5;
    ld.shared.b32 %r18, [%r8];
    mul.wide.u32 %rd5, %r0, 48;
    add.s64 %rd6, %rd0, %rd5;
    st.global.v4.b32 [%rd6], {%r1, %r2, %r3, %r4};
    st.global.v4.b32 [%rd6+16], {%r10, %r11, %r12, %r13};
    st.global.v4.b32 [%rd6+32], {%r14, %r15, %r16, %r17};
    st.global.b32 [%rd6+44], %r18;
    ret;
"""


def test_cp_async_writes_shared_memory_at_the_wait_of_its_group():
    """A copy is in shared memory only once a wait of its thread completes its group: before
    ``wait_group 1`` the bytes are the old ones (the emulator fills shared memory with 0xFF), after it the first group's are there but
    not the second's, ``wait_all`` brings those.  ``src-size`` 4 of 16 zero-fills the rest; after a
    barrier a thread sees its neighbour's copy."""
    M = np.arange(1, 32 * 4 + 1, dtype=np.uint32).reshape(32, 4)
    out = np.zeros((32, 12), np.uint32)
    body = _CP_ASYNC.replace("WAIT1", "cp.async.wait_group 1;").replace("WAIT2", "cp.async.wait_all;")
    ptx = _kernel(body, params=".param .u64 out, .param .u64 src", header=".shared .align 16 .b8 smem[1024];")
    emu.run(ptx, "k", [".u64", ".u64"], [out, M], (1, 1, 1), 32)
    got = [M[lane] if lane < 24 else np.array([M[lane, 0], 0, 0, 0]) for lane in range(32)]
    for lane in range(32):
        assert out[lane, :4].tolist() == [STALE] * 4
        assert out[lane, 4:8].tolist() == got[lane].tolist()
        assert out[lane, 8:10].tolist() == [STALE] * 2  # the second group: not written before its wait
        # the 8-byte copy's words, then the neighbour's first word through the barrier (it overwrote
        # the second word of the 8-byte copy's read: +44 is the last slot)
        assert out[lane, 10].tolist() == M[lane, 0]
        assert out[lane, 11].tolist() == got[lane ^ 1][0]


def test_cp_async_without_its_wait_is_never_written():
    """Without any wait the copy is never written: a barrier does not complete it."""
    M = np.arange(1, 32 * 4 + 1, dtype=np.uint32).reshape(32, 4)
    out = np.zeros((32, 12), np.uint32)
    body = _CP_ASYNC.replace("WAIT1", "").replace("WAIT2", "")
    ptx = _kernel(body, params=".param .u64 out, .param .u64 src", header=".shared .align 16 .b8 smem[1024];")
    emu.run(ptx, "k", [".u64", ".u64"], [out, M], (1, 1, 1), 32)
    assert (out == STALE).all()


def test_cvt_rna_tf32_rounds_ties_away_from_zero():
    x = np.array([1 + 2**-11, -(1 + 2**-11), 1 + 2**-12, 1 + 3 * 2**-11], np.float32)
    out = _run_f32("    cvt.rna.tf32.f32 %r5, %f0;\n    st.global.b32 [%rd2], %r5;", len(x), x, np.uint32)
    assert out.view(np.float32).tolist() == [1 + 2**-10, -(1 + 2**-10), 1.0, 1 + 2 * 2**-10]


def test_trap_raises():
    with pytest.raises(emu.KernelTrap):
        _run_f32("    trap;", 2)


def test_mma_m16n8k8_tf32_fragments_follow_the_ptx_isa():
    # PTX ISA "Matrix Fragments for mma.m16n8k8" (.tf32): A register i is row g + 8 * (i & 1), column
    # t + 4 * (i >> 1); B register j is row t + 4 * j, column g; the low 13 bits of an operand are ignored
    rng = np.random.default_rng(2)
    A = rng.integers(-4, 5, (16, 8)).astype(np.float32)
    B = rng.integers(-4, 5, (8, 8)).astype(np.float32)
    C = rng.integers(-8, 9, (16, 8)).astype(np.float32)
    noise = np.uint32(0x1FFF)  # bits the MMA ignores
    afrag = np.zeros((32, 4), np.uint32)
    bfrag = np.zeros((32, 2), np.uint32)
    cfrag = np.zeros((32, 4), np.float32)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        afrag[lane] = [A[g + 8 * (i & 1), t + 4 * (i >> 1)].view(np.uint32) | noise for i in range(4)]
        bfrag[lane] = [B[t + 4 * j, g].view(np.uint32) | noise for j in range(2)]
        cfrag[lane] = [C[g + (8 if i >= 2 else 0), t * 2 + (i & 1)] for i in range(4)]
    got = _run_mma("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", afrag, bfrag, cfrag)
    np.testing.assert_array_equal(got, A @ B + C)


@pytest.mark.parametrize("mode", ["", " rounding<zero>", " rounding<negative_inf>", " rounding<positive_inf>"])
def test_ftof_to_tf32_rounds_as_the_interpreter(mode):
    """f32 -> tf32 -> f32 through our PTX on the emulator against the interpreter: ties to even by
    default (cvt.rna would round them away), the directed modes, infinities, NaN and the largest
    finite value (rounded to infinity when nearest or up)."""
    from tile_lsp.analysis import interpreter as interp
    from tile_lsp.codegen import lower_text
    text = f"""cuda_tile.module @m {{
  entry @k(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {{
    %t0 = make_token : token
    %vp = make_tensor_view %p, shape = [64], strides = [1] : tensor_view<64xf32, strides=[1]>
    %vq = make_tensor_view %q, shape = [64], strides = [1] : tensor_view<64xf32, strides=[1]>
    %pp = make_partition_view %vp : partition_view<tile=(64), tensor_view<64xf32, strides=[1]>>
    %pq = make_partition_view %vq : partition_view<tile=(64), tensor_view<64xf32, strides=[1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %x, %t1 = load_view_tko weak %pp[%c0] token = %t0 : partition_view<tile=(64), tensor_view<64xf32, strides=[1]>>, tile<i32> -> tile<64xf32>, token
    %y = ftof %x{mode} : tile<64xf32> -> tile<64xtf32>
    %z = ftof %y : tile<64xtf32> -> tile<64xf32>
    %t2 = store_view_tko weak %z, %pq[%c0] token = %t0 : tile<64xf32>, partition_view<tile=(64), tensor_view<64xf32, strides=[1]>>, tile<i32> -> token
    return
  }}
}}
"""
    result = lower_text(text, "sm_90")
    assert result.ok, [d.message for d in result.diagnostics]
    special = [1 + 2**-11, -(1 + 2**-11), 1 + 3 * 2**-11, 1 + 2**-12, -(1 + 2**-12), np.inf, -np.inf, np.nan,
               np.finfo(np.float32).max, -np.finfo(np.float32).max, 1e-40, -0.0, 0.0]
    x = np.concatenate([np.array(special, np.float32),
                        np.random.default_rng(4).standard_normal(64 - len(special)).astype(np.float32)])
    want, got = np.zeros(64, np.float32), np.zeros(64, np.float32)
    interp.run_kernel(text, None, [x, want], (1, 1, 1))
    info = result.kernels[0]
    emu.run(result.ptx, info.name, [p for p, _ in info.params], [x, got], (1, 1, 1), info.threads,
            info.dynamic_smem)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist() or \
        np.array_equal(got, want, equal_nan=True)
    assert "cvt.rna.tf32" not in result.ptx


# ---------------------------------------------------------------------------
# Warp-level traffic counts (run(traffic=True))
# ---------------------------------------------------------------------------


def _traffic(body: str, threads: int = 32, smem: int = 0) -> emu.Traffic:
    """Run ``body`` (after :data:`_PRELUDE`: %r0 = tid, %rd2 = out + 4 * tid) with a 64 KiB ``out``
    and ``smem`` bytes of static shared memory ``buf``; the run's traffic."""
    header = f".shared .align 128 .b8 buf[{smem}];" if smem else ""
    ptx = _kernel(_PRELUDE + body + "\n    ret;", header=header)
    out = np.zeros(16384, np.float32)
    return emu.run(ptx, "k", [".u64"], [out], (1, 1, 1), threads, traffic=True).traffic


@pytest.mark.parametrize("stride,sectors", [(4, 4), (8, 8), (32, 32), (128, 32)])
def test_global_sectors_per_warp_follow_the_addresses(stride, sectors):
    """32 lanes storing 4 bytes each, ``stride`` bytes apart: 4 sectors when coalesced, one a lane at
    32 bytes and beyond.  Requested bytes stay 128."""
    t = _traffic(f"""
    mul.wide.u32 %rd3, %r0, {stride};
    add.s64 %rd4, %rd0, %rd3;
    st.global.b32 [%rd4], %r0;""")
    assert (t.global_store_requests, t.global_store_sectors, t.global_store_bytes) == (1, sectors, 128)
    assert t.global_load_requests == 0


def test_vector_and_two_warp_accesses_count_per_warp():
    """Two warps, each lane loading 16 contiguous bytes (``.v4``): 2 requests of 16 sectors each."""
    t = _traffic("""
    mul.wide.u32 %rd3, %r0, 16;
    add.s64 %rd4, %rd0, %rd3;
    ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd4];""", threads=64)
    assert (t.global_load_requests, t.global_load_sectors, t.global_load_bytes) == (2, 32, 1024)


@pytest.mark.parametrize("width,stride,fronts,ideal", [
    ("b32", 4, 1, 1),     # one word per bank
    ("b32", 8, 2, 1),     # two lanes per bank: a 2-way conflict
    ("b32", 128, 32, 1),  # every lane in bank 0: 32-way
    ("b32", 0, 1, 1),     # one word for all lanes: a broadcast
    ("b16", 2, 1, 1),     # two lanes per word
    ("v4.b32", 16, 4, 4),  # 512 bytes: four phases of 8 lanes, no conflict
    ("v2.b32", 256, 32, 2),  # two phases of 16 lanes, all in banks 0-1: 16-way in each
])
def test_shared_wavefronts_count_bank_conflicts(width, stride, fronts, ideal):
    regs = {"b32": "%r1", "b16": "%h1", "v4.b32": "{%r1, %r2, %r3, %r4}", "v2.b32": "{%r1, %r2}"}[width]
    t = _traffic(f"""
    mov.u32 %r5, buf;
    mad.lo.u32 %r6, %r0, {stride}, %r5;
    ld.shared.{width} {regs}, [%r6];""", smem=8192)
    assert (t.shared_load_requests, t.shared_load_wavefronts, t.shared_load_ideal) == (1, fronts, ideal)


@pytest.mark.parametrize("row_bytes,fronts", [(16, 4), (64, 16), (128, 32)])
def test_ldmatrix_wavefronts_per_matrix(row_bytes, fronts):
    """``ldmatrix.x4``: lane ``l`` gives row ``l % 8`` of matrix ``l // 8``, rows ``row_bytes`` apart and
    matrices 8 rows apart.  Contiguous rows: one wavefront a matrix; 64 bytes apart, rows 0, 2, 4
    and 6 share banks 0-3 (the others 16-19): 4 a matrix; 128 bytes apart, all 8 rows in banks 0-3:
    8 a matrix (the 8-way conflict the swizzle of MMA operands avoids)."""
    t = _traffic(f"""
    mov.u32 %r5, buf;
    mad.lo.u32 %r6, %r0, {row_bytes}, %r5;
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r1, %r2, %r3, %r4}}, [%r6];""", smem=8192)
    assert (t.shared_load_requests, t.shared_load_wavefronts, t.shared_load_ideal) == (1, fronts, 4)


def test_warp_instructions_and_barriers():
    """64 threads: every instruction twice (one per warp) but where only warp 1's lanes run it."""
    t = _traffic("""
    bar.sync 0;
    setp.ge.u32 %p1, %r0, 32;
    @%p1 add.u32 %r1, %r0, 1;
    bar.sync 0;""", threads=64)
    assert t.barriers == 2
    # the prelude's 4, bar, setp, bar, ret: 8 instructions for both warps; the guarded add: warp 1 only
    assert t.warp_instructions == 8 * 2 + 1


def test_emulator_counts_bench_on_a_coalesced_kernel():
    """``bench/emulator_counts.py`` on ew_float_arith (256 f32 a CTA in 128 threads, two loads and one
    store an element): every request coalesced, 4 sectors a warp, no shared memory, no barrier."""
    from bench.emulator_counts import measure

    case = next(c for c in ALL_CASES if c.kernel == "ew_float_arith_f32_b256.sm_90")
    row = measure(case)
    p = row["per_cta"]
    assert (row["threads"], row["ctas"]) == (128, 4)
    # 2 arrays x 256 elements: 2 slots a thread, 4 warps, one request a slot per warp
    assert (p["global_load_requests"], p["global_load_sectors"], p["global_load_bytes"]) == (16, 64, 2048)
    assert (p["global_store_requests"], p["global_store_sectors"], p["global_store_bytes"]) == (8, 32, 1024)
    assert p["shared_load_requests"] == p["shared_store_requests"] == p["barriers"] == 0
    assert p["warp_instructions"] > 0


def test_traffic_per_line_names_the_conflicting_instruction():
    """``Traffic.by_line`` keeps the counters per PTX instruction, and the bench's ``worst_lines`` ranks
    them: the 32-way conflicting store first, the conflict-free load not at all."""
    from bench.emulator_counts import worst_lines

    t = _traffic("""
    mov.u32 %r5, buf;
    mad.lo.u32 %r6, %r0, 128, %r5;
    st.shared.b32 [%r6], %r0;
    mad.lo.u32 %r7, %r0, 4, %r5;
    ld.shared.b32 %r1, [%r7];""", smem=8192)
    (store,) = [w for w in t.by_line if "st.shared" in w]
    assert t.by_line[store] == {"shared_store_requests": 1, "shared_store_wavefronts": 32, "shared_store_ideal": 1}
    worst = worst_lines({"by_line": t.by_line}, 3)
    assert len(worst) == 1 and worst[0].split()[0] == "31" and "st.shared.b32 [%r6], %r0" in worst[0]


def test_tf32_operands_are_swizzled_and_their_fragment_loads_conflict_free():
    """tf32 K loops load A and B fragments with plain 32-bit loads (no ldmatrix): a warp's lanes read
    8 rows of A 128 bytes apart and 4 rows of B 256 bytes apart, which unswizzled fell in the same
    banks (6.95x the conflict-free wavefronts).  The buffers are swizzled like the 16-bit ones now,
    the swizzle computed once per base register and 128-byte block."""
    from bench.emulator_counts import measure

    case = next(c for c in ALL_CASES if c.kernel == "matmul_tiled_tf32_64x64x32.sm_100")
    p = measure(case)["per_cta"]
    assert p["shared_load_requests"] > 0
    assert p["shared_load_wavefronts"] <= 1.1 * p["shared_load_ideal"]


def test_flash_iteration_counts_match_the_loop_body():
    """``bench/flash_iteration_counts.py`` splits flash attention's counters into a per-CTA and a
    per-iteration part from two runs: the per-iteration barriers are the loop body's ``bar.sync``
    in the PTX, and each iteration loads its 64 x 64 K and V tiles (16 KiB) once, in whole sectors."""
    import re

    from bench.flash_iteration_counts import KERNEL, split
    from tests.test_gpu import kernel_path
    from tile_lsp.codegen import lower_text

    ptx = lower_text(kernel_path(KERNEL).read_text(), "sm_90").ptx
    body = ptx[re.search(r"^\$L_for_\d+:", ptx, re.M).start():re.search(r"^\$L_for_next_\d+:", ptx, re.M).start()]
    parts = split()
    assert parts["barriers"][1] == body.count("bar.sync")
    assert parts["global_load_bytes"][1] == 2 * 64 * 64 * 2
    assert parts["global_load_sectors"][1] * 32 == parts["global_load_bytes"][1]
