"""MMA accumulators carried through a loop in the fragment layout (tile_lsp/codegen/mma_fragments.py).

Which loops qualify, and what the PTX of a K loop looks like then: no
accumulator staged in shared memory at each step, the MMAs unrolled per tile.
The numbers are checked on the emulator (tests/test_ptx_emulator.py: the
matmul, split-K and bf16 matmul cases) and on a GPU (tests/test_gpu.py).
"""

from __future__ import annotations

import re
from string import Template

import pytest

from tile_lsp.analysis.api import analyze_text
from tile_lsp.codegen import lower_text
from tile_lsp.codegen.mma_fragments import carried_in_fragments, fragment_shape_fits

LOOP = """\
cuda_tile.module @m {
  entry @k(%a: tile<ptr<f16>>, %b: tile<ptr<f16>>, %c: tile<ptr<f32>>, %n: tile<i32>) {
    %t0 = make_token : token
    %va = make_tensor_view %a, shape = [64, %n], strides = [%n, 1] : tile<i32> -> tensor_view<64x?xf16, strides=[?,1]>
    %vb = make_tensor_view %b, shape = [%n, 64], strides = [64, 1] : tile<i32> -> tensor_view<?x64xf16, strides=[64,1]>
    %vc = make_tensor_view %c, shape = [64, 64], strides = [64, 1] : tensor_view<64x64xf32, strides=[64,1]>
    %pa = make_partition_view %va : partition_view<tile=(64x32), tensor_view<64x?xf16, strides=[?,1]>>
    %pb = make_partition_view %vb : partition_view<tile=(32x64), tensor_view<?x64xf16, strides=[64,1]>>
    %pc = make_partition_view %vc : partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>
    %z = constant <f32: 0.0> : tile<64x64xf32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c4 = constant <i32: 4> : tile<i32>
    %acc = for %i in (%c0 to %c4, step %c1) : tile<i32> iter_values(%x = %z) -> (tile<64x64xf32>) {
      %ta, %k0 = load_view_tko weak %pa[%c0, %i] token = %t0 : partition_view<tile=(64x32), tensor_view<64x?xf16, strides=[?,1]>>, tile<i32> -> tile<64x32xf16>, token
      %tb, %k1 = load_view_tko weak %pb[%i, %c0] token = %t0 : partition_view<tile=(32x64), tensor_view<?x64xf16, strides=[64,1]>>, tile<i32> -> tile<32x64xf16>, token
      %y = mmaf %ta, %tb, %x : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32>
      USE
      continue %y : tile<64x64xf32>
    }
    %s = store_view_tko weak %acc, %pc[%c0, %c0] token = %t0 : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>, tile<i32> -> token
    return
  }
}
"""


def _for_op(text: str):
    module = analyze_text(text).chunks[0].module
    return next(op for op in module.walk() if op.name == "cuda_tile.for")


def _matches_a_times_b_on_the_emulator(result, k: int, seed: int) -> None:
    """Run ``result`` (LOOP lowered, A of 64 x ``k`` f16, B of ``k`` x 64) on small-integer inputs on
    the emulator and check C = A @ B exactly."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    info = result.kernels[0]
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (64, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, b, c, k], (1, 1, 1), info.threads,
            info.dynamic_smem)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_a_k_loop_carries_its_accumulator_in_fragments():
    text = LOOP.replace("USE", "")
    assert analyze_text(text).diagnostics == []
    loop = _for_op(text)
    assert carried_in_fragments(loop, 0, 128, 90, 227 * 1024)
    assert not carried_in_fragments(loop, 0, 128, 75, 227 * 1024)  # no mma.sync before sm_80
    assert not carried_in_fragments(loop, 0, 128, 90, 8 * 1024)  # the 16 KiB accumulator must fit to convert


def test_another_use_of_the_accumulator_keeps_the_distribution():
    text = LOOP.replace("USE", "%w = addf %y, %y : tile<64x64xf32>")
    assert not carried_in_fragments(_for_op(text), 0, 128, 90, 227 * 1024)


def _scaled(source: str = "%sv", shape: str = "64x1", use: str = "") -> str:
    """LOOP with C = acc * broadcast(scale): the scale is a ``shape`` tile of f32 read from a fourth
    argument (``source`` the value broadcast), the rescaling of an online softmax."""
    return (LOOP.replace("%n: tile<i32>) {", "%n: tile<i32>, %sc: tile<ptr<f32>>) {")
            .replace("    %acc = for", f"""    %vs = make_tensor_view %sc, shape = [{shape.replace("x", ", ")}], strides = [{shape.split("x")[1]}, 1] : tensor_view<{shape}xf32, strides=[{shape.split("x")[1]},1]>
    %ps = make_partition_view %vs : partition_view<tile=({shape}), tensor_view<{shape}xf32, strides=[{shape.split("x")[1]},1]>>
    %sv, %k2 = load_view_tko weak %ps[%c0, %c0] token = %t0 : partition_view<tile=({shape}), tensor_view<{shape}xf32, strides=[{shape.split("x")[1]},1]>>, tile<i32> -> tile<{shape}xf32>, token
    %acc = for""")
            .replace("%y = mmaf %ta, %tb, %x :", f"""%bs = broadcast {source} : tile<{shape}xf32> -> tile<64x64xf32>
      %xs = mulf %x, %bs : tile<64x64xf32>
      %y = mmaf %ta, %tb, %xs :""")
            .replace("USE", use))


def _run_scaled(result, seed: int):
    """Run ``result`` (a :func:`_scaled` kernel, K = 128) on the emulator on small integers and
    scales that are powers of two (so every sum is exact); returns ``(a, b, scale, c)``."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    info = result.kernels[0]
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (64, 128)).astype(np.float16)
    b = rng.integers(-3, 4, (128, 64)).astype(np.float16)
    scale = rng.choice(np.array([0.5, 1.0, 2.0, -1.0], np.float32), (64, 1))
    c = np.full((64, 64), np.nan, np.float32)
    emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, b, c, 128, scale], (1, 1, 1), info.threads,
            info.dynamic_smem)
    return a, b, scale, c


def test_an_accumulator_rescaled_by_a_row_vector_stays_in_fragments():
    """``acc * broadcast(row vector)`` on the way to C (FlashAttention's rescaling of O) keeps the loop in
    fragments; a column vector, another use of the product, or of the accumulator, does not."""
    text = _scaled()
    assert analyze_text(text).diagnostics == []
    assert carried_in_fragments(_for_op(text), 0, 128, 90, 227 * 1024)
    assert not carried_in_fragments(_for_op(_scaled(shape="1x64")), 0, 128, 90, 227 * 1024)
    assert not carried_in_fragments(_for_op(_scaled(use="%w = addf %xs, %xs : tile<64x64xf32>")), 0, 128, 90,
                                    227 * 1024)
    assert not carried_in_fragments(_for_op(_scaled(use="%w = addf %x, %x : tile<64x64xf32>")), 0, 128, 90,
                                    227 * 1024)


def test_a_rescaled_accumulator_is_multiplied_in_fragments_on_the_emulator():
    """C_k = s * C_(k-1) + A_k B_k over four K steps, s one value per row: exact on small integers and
    powers of two.  In the loop, each thread multiplies its 32 fragment registers by the scales of
    their rows (read from the row vector, staged with the MMA's A and B), the broadcast is not
    lowered, and the accumulator never goes through shared memory."""
    np = pytest.importorskip("numpy")
    result = lower_text(_scaled(), "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    ptx = result.ptx
    body = ptx[re.search(r"^\$L_for_\d+:", ptx, re.M).start():re.search(r"^\$L_for_end_\d+:", ptx, re.M).start()]
    assert len(re.findall(r"mul\.rn\.f32", body)) == 32
    assert len(re.findall(r"mma\.sync\.aligned\.m16n8k16", body)) == 16
    # the scale's staging only: one write per thread holding one of its 64 values; the warp's 8 tiles
    # are one tile row (blocked: one A fragment a k-step), so a thread reads the scales of 2 rows
    assert "tile_lsp.fragments_blocked = [0 : i32]" in result.stages["layout"]
    assert body.count("st.shared.f32") == 1 and body.count("ld.shared.f32") == 2
    # staged after A and B, under their barriers: one before their stores, one before the reads
    assert body.count("bar.sync") == 2
    a, b, scale, c = _run_scaled(result, 7)
    want = np.zeros((64, 64), np.float32)
    for k in range(0, 128, 32):
        want = scale * want + a[:, k:k + 32].astype(np.float32) @ b[k:k + 32].astype(np.float32)
    np.testing.assert_array_equal(c, want)


def test_a_rescaled_accumulator_with_both_operands_staged_before_the_loop():
    """A and B both defined outside the loop (so both pinned, staged once before it) and C = acc * s:
    nothing is stored into the scratch right before the MMA, so staging s needs its own barrier
    first (the emulator reports a data race otherwise).  C_k = s * C_(k-1) + A B, exact."""
    np = pytest.importorskip("numpy")
    text = _scaled()
    for name, view in (("%ta, %k0", "%pa[%c0, %i]"), ("%tb, %k1", "%pb[%i, %c0]")):
        line = next(t for t in text.splitlines() if t.strip().startswith(name))
        text = text.replace(line + "\n", "").replace(
            "    %acc = for", line.strip().replace(view, view.replace("%i", "%c0")).join(["    ", "\n    %acc = for"]))
    assert analyze_text(text).diagnostics == []
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    assert re.search(r"\} \{tile_lsp.smem_pinned = 8192 : i32", result.stages["nv_tileas"])
    a, b, scale, c = _run_scaled(result, 8)
    ab = a[:, :32].astype(np.float32) @ b[:32].astype(np.float32)
    want = np.zeros((64, 64), np.float32)
    for _ in range(4):
        want = scale * want + ab
    np.testing.assert_array_equal(c, want)


def test_a_loop_invariant_mma_operand_is_staged_once_before_the_loop():
    """A defined outside the K loop (FlashAttention's Q): staged once, before the loop, in a pinned
    buffer below the staging scratch, so that the loop stages B alone; C = sum_k A B_k on the
    emulator, exact on small integers."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    load_a = ("%ta, %k0 = load_view_tko weak %pa[%c0, %i] token = %t0 : partition_view<tile=(64x32), "
              "tensor_view<64x?xf16, strides=[?,1]>>, tile<i32> -> tile<64x32xf16>, token")
    text = LOOP.replace("USE", "").replace("      " + load_a + "\n", "").replace(
        "    %acc = for", "    " + load_a.replace("%i]", "%c0]") + "\n    %acc = for")
    assert analyze_text(text).diagnostics == []
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    stage = result.stages["nv_tileas"]
    # 64x32 f16: 4 KiB pinned, A's buffer at -4096 from the scratch, before the loop; B at 0 in it
    assert re.search(r"\} \{tile_lsp.smem_pinned = 4096 : i32", stage)
    before, loop = stage.split(" = for %", 1)
    assert re.search(r"nv_tileas.alloc_tensor \{tile_lsp.smem_offset = -4096 : i32, tile_lsp.swizzle\}", before)
    assert re.findall(r"smem_offset = (-?\d+)", loop) == ["0"]
    ptx = result.ptx
    body = ptx[re.search(r"^\$L_for_\d+:", ptx, re.M).start():re.search(r"^\$L_for_end_\d+:", ptx, re.M).start()]
    assert body.count("st.shared.b16") == 2048 // 128  # B's 32x64 elements, 16 a thread; no A
    info = result.kernels[0]
    rng = np.random.default_rng(9)
    a = rng.integers(-3, 4, (64, 128)).astype(np.float16)
    b = rng.integers(-3, 4, (128, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    emu.run(ptx, info.name, [p for p, _ in info.params], [a, b, c, 128], (1, 1, 1), info.threads,
            info.dynamic_smem)
    a0 = a[:, :32].astype(np.float32)
    np.testing.assert_array_equal(c, sum(a0 @ b[k:k + 32].astype(np.float32) for k in range(0, 128, 32)))


def test_a_transposed_mma_operand_is_copied_to_shared_memory_in_the_tensors_order():
    """B read through a view that transposes its tensor (``dim_map = [1, 0]`` over an N x K tensor:
    attention's K^T) and used only as an MMA operand: copied into its shared-memory buffer with
    consecutive lanes on consecutive addresses (every global sector fully used, on the emulator's
    counts), not loaded in the distribution's order, where each lane would read another row.
    C = A B exactly, against NumPy."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    text = LOOP.replace("USE", "").replace(
        "%vb = make_tensor_view %b, shape = [%n, 64], strides = [64, 1] : tile<i32> -> "
        "tensor_view<?x64xf16, strides=[64,1]>",
        "%vb = make_tensor_view %b, shape = [64, %n], strides = [%n, 1] : tile<i32> -> "
        "tensor_view<64x?xf16, strides=[?,1]>").replace(
        "partition_view<tile=(32x64), tensor_view<?x64xf16, strides=[64,1]>>",
        "partition_view<tile=(32x64), tensor_view<64x?xf16, strides=[?,1]>, dim_map=[1, 0]>")
    assert analyze_text(text).diagnostics == []
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    info = result.kernels[0]
    rng = np.random.default_rng(4)
    a = rng.integers(-3, 4, (64, 128)).astype(np.float16)
    bt = rng.integers(-3, 4, (64, 128)).astype(np.float16)  # B^T: N x K
    c = np.full((64, 64), np.nan, np.float32)
    stats = emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, bt, c, 128], (1, 1, 1),
                    info.threads, info.dynamic_smem, traffic=True)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ bt.T.astype(np.float32))
    t = stats.traffic
    assert t.global_load_bytes == 2 * 4 * (64 * 32 * 2)  # A and B, four K steps
    assert t.global_load_sectors * 32 == t.global_load_bytes
    # the copy's instructions are the load's (its .loc, and Show PTX's count on its line), not the MMA's
    line = next(i for i, text_line in enumerate(text.splitlines()) if "%tb, %k1 = load_view_tko" in text_line)
    (count,) = [c for (ln, _), c in result.op_counts[info.name].items() if ln == line]
    assert count.op == "cuda_tile.load_view_tko" and count.instructions > 16 * 4  # 16 slots: load, store, address


def test_fragment_shapes():
    assert fragment_shape_fits(128, 128, 32, 512)  # 128 tiles of 16x8, 8 per warp
    assert not fragment_shape_fits(16, 8, 16, 128)  # one tile for four warps
    assert not fragment_shape_fits(64, 24, 16, 128)  # 3 tile columns


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_the_k_loop_stages_a_and_b_only_and_unrolls_its_mmas(target):
    result = lower_text(LOOP.replace("USE", ""), target, file_name="k.mlir")
    assert result.ok, result.diagnostics
    ptx = result.ptx
    start = re.search(r"^\$L_for_\d+:", ptx, re.M).start()
    body = ptx[start:re.search(r"^\$L_for_end_\d+:", ptx, re.M).start()]
    # 64x64 in 4 warps: 8 tiles per warp, K = 32: two MMAs per tile, no accumulator through shared memory
    assert len(re.findall(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32", body)) == 16
    assert "st.shared.f32" not in body and "ld.shared.f32" not in body
    # blocked (tile-assign-layouts: fewer fragments to load): a warp's 8 tiles are one tile row of 8
    # columns, so per 16-deep step one ldmatrix.x4 for A, and the 8 B fragments in 4 ldmatrix.x4.trans
    # (instead of 8 A fragments for tiles w, w + 4, ... and 2 B fragments for columns w and w + 4)
    assert "tile_lsp.fragments_blocked = [0 : i32]" in result.stages["layout"]
    assert len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16", body)) == 2
    assert len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16", body)) == 8
    assert "ldmatrix.sync.aligned.m8n8.x2" not in body
    # the layout and nv_tileas stages say which iteration value the loop carries in fragments
    for stage in ("layout", "nv_tileas"):
        assert re.search(r"^ *\} \{tile_lsp\.fragments = \[0 : i32\]", result.stages[stage], re.M)
    # converted once before the loop (32 slots per thread staged, 8 x 4 fragment elements read) and once
    # after it (8 x 4 written, 32 slots read), for the store: the fragment side as b32 accesses
    assert ptx.count("st.shared.f32") == 32 and ptx.count("ld.shared.f32") == 32
    assert ptx.count("st.shared.b32") == 32 and ptx.count("ld.shared.b32") == 32


def test_the_k_loop_computes_a_times_b_on_the_emulator():
    """64x128 by 128x64 in four K steps, 4 warps of 8 tiles each, one tile row a warp."""
    result = lower_text(LOOP.replace("USE", ""), "sm_90", file_name="k.mlir")
    _matches_a_times_b_on_the_emulator(result, 128, 3)


def test_mma_shapes_of_the_element_types():
    from tile_lsp.codegen.mma_fragments import mma_shape
    from tile_lsp.dialect import types as T
    f16, bf16, f32, tf32 = (T.FloatType(n) for n in ("f16", "bf16", "f32", "tf32"))
    e4m3, e5m2 = T.FloatType("f8E4M3FN"), T.FloatType("f8E5M2")
    i8, i32 = T.IntegerType(8), T.IntegerType(32)
    assert mma_shape(f16, f16, f32, 80).instruction == "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    assert mma_shape(i8, i8, i32, 80, (False, True)).instruction == \
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32"
    assert mma_shape(e4m3, e5m2, f32, 90).instruction == "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32"
    assert mma_shape(e4m3, e4m3, f32, 86) is None  # fp8 mma.sync from sm_89
    assert mma_shape(tf32, tf32, f32, 80).instruction == "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    assert mma_shape(f16, bf16, f32, 90) is None and mma_shape(f32, f32, f32, 90) is None
    assert mma_shape(f16, f16, f32, 75) is None and mma_shape(i8, i8, i8, 90) is None


def test_fragment_shapes_of_8_bit_and_batched_mmas():
    assert fragment_shape_fits(64, 64, 64, 128, k_step=32, staged=4)
    assert not fragment_shape_fits(64, 64, 48, 128, k_step=32, staged=4)  # K not a multiple of 32
    assert fragment_shape_fits(64, 64, 64, 128, batch=2)
    assert not fragment_shape_fits(128, 128, 256, 128, k_step=32, staged=4)  # 256 KiB of staged A and B


@pytest.mark.parametrize("kernel, loads", [("matmul_int8_i8_128x128x64.sm_80", "ld.shared.v4.b32"),
                                           ("matmul_fp8_e4m3_128x128x64.sm_90", "ld.shared.v2.b32")])
def test_8_bit_k_loops_pack_four_elements_per_register(corpus, kernel, loads):
    """The staging scratch keeps an i8 in 4 bytes and an fp8 in 2: an A register is one vector load and
    prmt, a B register four loads of one column and prmt (the emulator and GPU cases check the values)."""
    path = corpus / "kernels" / f"{kernel}.mlir"
    result = lower_text(path.read_text(), kernel.split(".")[-1], file_name=path.name)
    assert result.ok, result.diagnostics
    # 128x128 in 16 warps (the CTA for 32 slots a thread): 8 of the 128 16x8 tiles per warp, K = 64:
    # two m16n8k32 per tile
    assert result.kernels[0].threads == 512
    assert len(re.findall(r"mma\.sync\.aligned\.m16n8k32\.", result.ptx)) == 16
    assert loads in result.ptx and "prmt.b32" in result.ptx
    assert re.search(r"^ *\} \{tile_lsp\.fragments = \[0 : i32\]", result.stages["layout"], re.M)


def test_a_batched_k_loop_reads_each_tiles_batch_of_b(corpus):
    path = corpus / "kernels" / "batched_matmul_bf16_b2_64x64x64.sm_90.mlir"
    result = lower_text(path.read_text(), "sm_90", file_name=path.name)
    assert result.ok, result.diagnostics
    assert re.search(r"^ *\} \{tile_lsp\.fragments = \[0 : i32\]", result.stages["layout"], re.M)
    # 2 x 64 x 64: 64 tiles of 16x8 over the warps, K = 64: four m16n8k16 per tile; B at batch * 64 * 64
    per_warp = 64 // (result.kernels[0].threads // 32)
    assert len(re.findall(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32", result.ptx)) == 4 * per_warp
    assert re.search(r"mad\.lo\.s32 %r\d+, %r\d+, 4096, %r\d+", result.ptx)


def test_a_zero_accumulator_outside_a_loop_is_not_staged():
    """``mmaf A, B, 0`` outside a K loop: the accumulators start from the constant; only D goes
    through shared memory (4 stores for each of the 8 16x8 tiles of a thread's warp), not the 32
    slots a thread holds of C.  A warp's tiles are computed at once, unrolled, in the order that
    loads fewer fragments: 64x64 in 4 warps, one tile row a warp, one A and 8 B fragments a step,
    the B fragments of two neighbouring tile columns in one ``ldmatrix.x4.trans``."""
    from tile_lsp.codegen.fragment_layouts import splat_bits
    text = LOOP.replace("USE", "").replace(
        "%acc = for %i in (%c0 to %c4, step %c1) : tile<i32> iter_values(%x = %z) -> (tile<64x64xf32>) {",
        "%acc0 = for %i in (%c0 to %c1, step %c1) : tile<i32> iter_values(%x = %z) -> (tile<64x64xf32>) {"
    ).replace("%y = mmaf %ta, %tb, %x", "%y = mmaf %ta, %tb, %z").replace(
        "store_view_tko weak %acc,", "store_view_tko weak %acc0,")
    assert analyze_text(text).diagnostics == []
    z = next(op for op in analyze_text(text).chunks[0].module.walk() if op.name == "cuda_tile.constant")
    assert splat_bits(z.results[0]) == 0
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    assert result.ptx.count("st.shared.f32") == 0 and result.ptx.count("st.shared.b32") == 32
    assert "tile_lsp.fragments" not in result.stages["layout"] and "$L_mma_tile" not in result.ptx
    assert len(re.findall(r"mma\.sync\.aligned\.m16n8k16", result.ptx)) == 16  # 8 tiles, K = 32
    assert len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared", result.ptx)) == 2
    assert len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.", result.ptx)) == 8
    assert "ldmatrix.sync.aligned.m8n8.x2" not in result.ptx
    _matches_a_times_b_on_the_emulator(result, 32, 5)


ONE_MMA = Template("""\
cuda_tile.module @m {
  entry @k(%a: tile<ptr<f16>>, %b: tile<ptr<f16>>, %c: tile<ptr<f32>>, %d: tile<ptr<f32>>) {
    %t0 = make_token : token
    %c0 = constant <i32: 0> : tile<i32>
    %va = make_tensor_view %a, shape = [$M, $K], strides = [$K, 1] : tensor_view<${M}x${K}xf16, strides=[$K,1]>
    %vb = make_tensor_view %b, shape = [$K, $N], strides = [$N, 1] : tensor_view<${K}x${N}xf16, strides=[$N,1]>
    %vc = make_tensor_view %c, shape = [$M, $N], strides = [$N, 1] : tensor_view<${M}x${N}xf32, strides=[$N,1]>
    %vd = make_tensor_view %d, shape = [$M, $N], strides = [$N, 1] : tensor_view<${M}x${N}xf32, strides=[$N,1]>
    %pa = make_partition_view %va : partition_view<tile=(${M}x${K}), tensor_view<${M}x${K}xf16, strides=[$K,1]>>
    %pb = make_partition_view %vb : partition_view<tile=(${K}x${N}), tensor_view<${K}x${N}xf16, strides=[$N,1]>>
    %pc = make_partition_view %vc : partition_view<tile=(${M}x${N}), tensor_view<${M}x${N}xf32, strides=[$N,1]>>
    %pd = make_partition_view %vd : partition_view<tile=(${M}x${N}), tensor_view<${M}x${N}xf32, strides=[$N,1]>>
    %ta, %k0 = load_view_tko weak %pa[%c0, %c0] token = %t0 : partition_view<tile=(${M}x${K}), tensor_view<${M}x${K}xf16, strides=[$K,1]>>, tile<i32> -> tile<${M}x${K}xf16>, token
    %tb, %k1 = load_view_tko weak %pb[%c0, %c0] token = %t0 : partition_view<tile=(${K}x${N}), tensor_view<${K}x${N}xf16, strides=[$N,1]>>, tile<i32> -> tile<${K}x${N}xf16>, token
    %tc, %k2 = load_view_tko weak %pc[%c0, %c0] token = %t0 : partition_view<tile=(${M}x${N}), tensor_view<${M}x${N}xf32, strides=[$N,1]>>, tile<i32> -> tile<${M}x${N}xf32>, token
    %y = mmaf %ta, %tb, %tc : tile<${M}x${K}xf16>, tile<${K}x${N}xf16>, tile<${M}x${N}xf32>
    %s = store_view_tko weak %y, %pd[%c0, %c0] token = %t0 : tile<${M}x${N}xf32>, partition_view<tile=(${M}x${N}), tensor_view<${M}x${N}xf32, strides=[$N,1]>>, tile<i32> -> token
    return
  }
}
""")


@pytest.mark.parametrize("m,n,k,unrolled", [(64, 64, 32, True), (16, 16, 16, False)])
def test_an_mma_outside_loops_on_the_emulator(m, n, k, unrolled):
    """D = A B + C with C read from memory, outside any loop: C staged in its swizzled buffer, D
    written over it and read back.  Where every warp gets the same number of 16x8 tiles (64x64 in 4
    warps: 8 each) a warp's tiles are computed at once, unrolled, C loaded as fragments; otherwise
    (two tiles for four warps) each warp loops over its tiles.  Exact on small integers."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    text = ONE_MMA.substitute(M=m, N=n, K=k)
    assert analyze_text(text).diagnostics == []
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    assert ("$L_mma_tile" not in result.ptx) == unrolled
    info = result.kernels[0]
    rng = np.random.default_rng(m + k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = rng.integers(-8, 9, (m, n)).astype(np.float32)
    d = np.full((m, n), np.nan, np.float32)
    emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, b, c, d], (1, 1, 1), info.threads,
            info.dynamic_smem)
    np.testing.assert_array_equal(d, a.astype(np.float32) @ b.astype(np.float32) + c)


def test_a_k_step_of_128_reads_both_128_byte_blocks_of_each_swizzled_row():
    """A 64x128 f16 A tile: 256-byte rows, so the k-steps of a tile fall in two 128-byte blocks, each
    swizzled once and the steps within it XORed in (mma_into_fragments); checked on the emulator."""
    text = LOOP.replace("USE", "").replace("64x32", "64x128").replace("32x64", "128x64").replace(
        "(%c0 to %c4, step %c1)", "(%c0 to %c1, step %c1)")
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    assert "tile_lsp.swizzle" in result.stages["nv_tileas"]
    _matches_a_times_b_on_the_emulator(result, 128, 7)


def test_an_operand_of_two_mmas_is_staged_once():
    """tests/kernels/shared_operand_mma: A is the operand of two MMAs of the entry's block.  The first
    stages it in a pinned buffer and the second reads that buffer: A's 64x32 f16 elements are stored
    to shared memory once (16 a thread), the two B tiles once each.  The results are checked on the
    emulator with the other cases of tests/test_gpu.py."""
    from pathlib import Path

    text = (Path(__file__).parent / "kernels" / "shared_operand_mma_f16_64x64x32.sm_80.mlir").read_text()
    result = lower_text(text, "sm_80", file_name="k.mlir")
    assert result.ok, result.diagnostics
    stage = result.stages["nv_tileas"]
    assert re.search(r"\} \{tile_lsp.smem_pinned = 4096 : i32", stage)
    pinned = re.findall(r"(%\d+) = nv_tileas.alloc_tensor \{tile_lsp.smem_offset = -4096 : i32", stage)
    assert len(pinned) == 1
    assert [d.split(",")[0] for d in re.findall(r"nv_tileas.dot (%\d+, %\d+)", stage)] == pinned * 2
    assert result.ptx.count("st.shared.b16") == 3 * 2048 // 128
