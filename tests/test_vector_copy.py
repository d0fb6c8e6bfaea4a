"""MMA operands copied from global to shared memory in 16-byte vectors (tile_lsp/codegen/ops_memory.py
``copy_to_staged``, codegen/prefetch.py): where the tensor's last dimension is statically
contiguous, a uniform run-time test of the alignment picks the vectors, else the element copy.
Vectors of a zero-padded tile go by ``cp.async`` (sm_80+), which zero-fills what lies outside the
tensor, through two stages in a K loop (``KERNEL``); other paddings (``REGISTERS``: -0.0) by
``ld.global.v4.b32`` / ``st.shared.v4.b32``, prefetched through registers.  On the emulator: C = A @ B
exact on small integers, for sizes and strides that take each path, with tiles that cut the tensors
(the padding), and which path ran."""

from __future__ import annotations

import re

import pytest

from tile_lsp.analysis.api import analyze_text
from tile_lsp.codegen import lower_text
from tile_lsp.codegen.ops_memory import vector_copy_applies

KERNEL = """\
cuda_tile.module @m {
  entry @k(%a: tile<ptr<f16>>, %b: tile<ptr<f16>>, %c: tile<ptr<f32>>, %m: tile<i32>, %n: tile<i32>, %kk: tile<i32>, %sa: tile<i32>, %sb: tile<i32>, %steps: tile<i32>) {
    %t0 = make_token : token
    %va = make_tensor_view %a, shape = [%m, %kk], strides = [%sa, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %vb = make_tensor_view %b, shape = [%kk, %n], strides = [%sb, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %vc = make_tensor_view %c, shape = [%m, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %pa = make_partition_view %va : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>
    %pb = make_partition_view %vb : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>
    %pc = make_partition_view %vc : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %z = constant <f32: 0.0> : tile<64x64xf32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %acc = for %i in (%c0 to %steps, step %c1) : tile<i32> iter_values(%x = %z) -> (tile<64x64xf32>) {
      %ta, %k0 = load_view_tko weak %pa[%bx, %i] token = %t0 : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<64x32xf16>, token
      %tb, %k1 = load_view_tko weak %pb[%i, %by] token = %t0 : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<32x64xf16>, token
      %y = mmaf %ta, %tb, %x : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32>
      continue %y : tile<64x64xf32>
    }
    %s = store_view_tko weak %acc, %pc[%bx, %by] token = %t0 : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }
}
"""


#: the same kernel with -0.0 for padding: cp.async cannot fill that, so the copies go through registers
REGISTERS = KERNEL.replace("padding_value = zero", "padding_value = neg_zero")
#: the instruction that moves a vector, per kernel
VECTOR = {KERNEL: "cp.async.cg.shared.global", REGISTERS: "ld.global.v4.b32"}


def _lowered(text: str = REGISTERS):
    assert analyze_text(text).diagnostics == []
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    return result


def _loop_body(ptx: str) -> str:
    return ptx[ptx.index("\n$L_for_") + 1:ptx.index("\n$L_for_end_")]


def test_zero_padded_operands_pipeline_through_two_stages_of_cp_async():
    """A (64x32) and B (32x64) f16 in 128 threads, two vectors a thread each: ``cp.async`` into the
    first stage before the loop, and in the body for the next iteration into the other stage (its
    base register), each operand's group committed and waited for as ``wait_group 2`` (the two
    copies issued since this iteration's).  The stages swap at the back edge; no register holds a
    vector, and the element copy stays for tensors the alignment test rejects."""
    ptx = _lowered(KERNEL).ptx
    body = _loop_body(ptx)
    head = ptx.index("$L_for_")
    assert ptx[:head].count("cp.async.cg.shared.global") == 4 and body.count("cp.async.cg.shared.global") == 4
    assert ptx[:head].count("cp.async.commit_group") == 2 and body.count("cp.async.commit_group") == 2
    assert body.count("cp.async.wait_group 2;") == 2 and "cp.async.wait_all" not in ptx
    assert "ld.global.v4.b32" not in ptx and "st.shared.v4.b32" not in ptx
    assert body.count("bra.uni $L_copied_ahead_") == 2 and "ld.global.b16" in body  # elements if unaligned
    # this iteration's stage, the other, their XOR, the bytes from the first stage to this one, the stride
    setup = re.search(r"mov.b32 (%r\d+), (%r\d+);\n\tmov.b32 (%r\d+), %r\d+;\n\txor.b32 (%r\d+), \1, \3;\n"
                      r"\tmov.b32 (%r\d+), 0;\n\tsub.s32 (%r\d+), \3, \1;", ptx)
    this, base0, other, swap, delta, stride = setup.group(1, 2, 3, 4, 5, 6)
    assert re.search(rf"xor.b32 {this}, {this}, {swap};\n\txor.b32 {other}, {other}, {swap};\n"
                     rf"\txor.b32 {delta}, {delta}, {stride};\n\tbra.uni \$L_for_", ptx)
    # the next iteration's vectors go to the other stage, this iteration's elements (if unaligned) to
    # this one, guarded by iv + step < ub and the test; the MMA reads from the first stage's addresses
    # (which ptxas hoists) plus the delta
    assert re.search(rf"mad.lo.s32 %r\d+, %r\d+, 2, {other};", body) and \
        re.search(rf"mad.lo.s32 %r\d+, %r\d+, 2, {this};", body)
    assert re.search(rf"mad.lo.s32 %r\d+, %r\d+, 2, {base0};", body)
    assert len(re.findall(rf"add.s32 %r\d+, %r\d+, {delta};\n\tldmatrix", body)) >= 4
    assert re.search(r"add.s32 (%r\d+), %r\d+, %r\d+;\n\tsetp.lt.s32 (%p\d+), \1, %r\d+;\n\tand.pred \2, \2, %p\d+;",
                     body)


def test_both_operands_get_the_vector_copy_and_the_element_copy():
    """-0.0 padding: 128 threads; A (64x32) and B (32x64) are 256 vectors of 8 f16 each: two a thread,
    loaded before the loop for its first iteration and in the body for the next one
    (prefetch.prefetch_loads)."""
    result = _lowered()
    assert result.kernels[0].threads == 128
    ptx = result.ptx
    assert ptx.count("ld.global.v4.b32") == 2 * 4 and ptx.count("st.shared.v4.b32") == 4
    assert ptx.count("bra.uni $L_copy_elements_") == 2  # prefetched vectors, or elements copied then
    assert "bra.uni $L_load_elements_" not in ptx  # the prefetch loads vectors under the alignment test
    assert "ld.global.b16" in ptx  # the element copies


def test_the_loop_loads_the_next_iteration_after_storing_this_one():
    """-0.0 padding: in the body, each operand's shared stores come first, then the loads of the next
    iteration, under ``iv + step < ub``; the first iteration's loads stand before the loop."""
    ptx = _lowered().ptx
    head = ptx.index("$L_for_")
    body = _loop_body(ptx)
    assert ptx[:head].count("ld.global.v4.b32") == 4
    assert body.count("ld.global.v4.b32") == 4
    first_store, first_load = body.index("st.shared.v4.b32"), body.index("ld.global.v4.b32")
    assert first_store < first_load
    guard = re.search(r"@(%p\d+) ld.global.v4.b32", body[first_load - 200:]).group(1)
    assert re.search(rf"and.pred {guard}, %p\d+, (%p\d+);", body) or guard  # bounds and the next iteration
    assert re.search(r"add.s32 (%r\d+), %r\d+, %r\d+;\n\tsetp.lt.s32 %p\d+, \1, %r\d+;", body)


@pytest.mark.parametrize("text", [KERNEL, REGISTERS], ids=["cp.async", "registers"])
@pytest.mark.parametrize("m, n, k, sa, sb, vectors", [  # vectors: the operands copied in vectors
    (128, 128, 96, 96, 128, 2),  # whole tiles, aligned rows: both operands in vectors
    (80, 72, 88, 88, 72, 2),     # tiles cut in rows and in whole vectors: the padding, in vectors
    (64, 64, 64, 68, 66, 0),     # rows of 136 and 132 bytes: vectors would be misaligned
    (64, 64, 60, 64, 64, 1),     # A's rows end inside a vector (60 columns): A by elements, B in vectors
    (64, 64, 32, 32, 64, 2),     # one iteration: the body's loads for a next one do not run
    (64, 64, 0, 32, 64, 0),      # no iteration: nor do the loads before the loop
    (64, 64, 160, 160, 64, 2),   # five iterations: the stages swap back and forth
])
def test_the_copy_path_and_the_product_on_the_emulator(m, n, k, sa, sb, vectors, text):
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    result = _lowered(text)
    info = result.kernels[0]
    rng = np.random.default_rng(m + n + k)
    a = rng.integers(-3, 4, (m, sa)).astype(np.float16)
    b = rng.integers(-3, 4, (k, sb)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    grid = (-(-m // 64), -(-n // 64), 1)
    stats = emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, b, c, m, n, k, sa, sb, -(-k // 32)],
                    grid, info.threads, info.dynamic_smem, traffic=True)
    np.testing.assert_array_equal(c, a[:, :k].astype(np.float32) @ b[:, :n].astype(np.float32))
    ran = [line for line, counts in stats.traffic.by_line.items() if VECTOR[text] in line and counts]
    # two vectors a thread an operand, loaded before the loop, and in it where a next iteration comes
    assert len(ran) == (2 if k <= 32 else 4) * vectors, ran


# A's last stride given at run time (cuTile passes every stride): the test also checks that it is 1
DYNAMIC = KERNEL.replace("%steps: tile<i32>)", "%steps: tile<i32>, %ua: tile<i32>)").replace(
    "strides = [%sa, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>",
    "strides = [%sa, %ua] : tile<i32> -> tensor_view<?x?xf16, strides=[?,?]>").replace(
    "padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<64x32xf16>",
    "padding_value = zero, tensor_view<?x?xf16, strides=[?,?]>>, tile<i32> -> tile<64x32xf16>").replace(
    "%pa = make_partition_view %va : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>",
    "%pa = make_partition_view %va : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,?]>>")


@pytest.mark.parametrize("padding", ["zero", "neg_zero"])
@pytest.mark.parametrize("ua, vectors", [(1, 2), (2, 1)])
def test_a_run_time_last_stride_takes_vectors_only_when_it_is_1(ua, vectors, padding):
    """A 64 x 64 read with last stride ``ua``: 1 takes vectors; 2 (every other element of rows of
    256) copies A by elements, B still in vectors; by cp.async or through registers."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    text = DYNAMIC.replace("padding_value = zero", f"padding_value = {padding}")
    vector = VECTOR[KERNEL if padding == "zero" else REGISTERS]
    assert analyze_text(text).diagnostics == []
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    assert result.ptx.count(vector) == 2 * 4  # before the loop, and for the next iteration
    info = result.kernels[0]
    rng = np.random.default_rng(ua)
    a = rng.integers(-3, 4, (64, 128)).astype(np.float16)
    b = rng.integers(-3, 4, (64, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    stats = emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, b, c, 64, 64, 64, 128, 64, 2, ua],
                    (1, 1, 1), info.threads, info.dynamic_smem, traffic=True)
    np.testing.assert_array_equal(c, a[:, :64 * ua:ua].astype(np.float32) @ b.astype(np.float32))
    ran = [line for line, counts in stats.traffic.by_line.items() if vector in line and counts]
    assert len(ran) == 2 * 2 * vectors, ran  # two iterations: the second's loads in the first


def test_which_accesses_may_take_vectors():
    """Only weak loads of 2- or 4-byte elements, with the tensor's last dimension contiguous and on
    the tile's last, in whole vectors."""
    from tile_lsp.codegen.ptx import TensorViewValue, TileViewValue
    from tile_lsp.dialect import types as T
    f16, f32, i8 = T.FloatType("f16"), T.FloatType("f32"), T.IntegerType(8)

    def view(strides, dim_map=(0, 1), steps=(64, 32), elem=f16):
        return TileViewValue("partition", TensorViewValue("%rd0", ["%rd1", "%rd2"], strides, elem), (64, 32),
                             dim_map, "zero", steps)
    assert vector_copy_applies(view(["%rd3", 1]), (64, 32), f16, "")
    assert vector_copy_applies(view(["%rd3", 1], elem=f32), (64, 32), f32, "")
    assert vector_copy_applies(view(["%rd3", "%rd4"]), (64, 32), f16, "")  # 1 or not: the run-time test
    assert not vector_copy_applies(view(["%rd3", 2]), (64, 32), f16, "")
    assert not vector_copy_applies(view(["%rd3", 1]), (64, 32), f16, ".relaxed.gpu")
    assert not vector_copy_applies(view(["%rd3", 1], elem=i8), (64, 32), i8, "")  # staged 4 bytes an i8
    assert not vector_copy_applies(view(["%rd3", 1]), (64, 4), f16, "")  # half a vector a row
    assert not vector_copy_applies(view(["%rd3", 1], steps=(64, 4)), (64, 32), f16, "")  # tiles start mid-vector
    assert not vector_copy_applies(view([1, "%rd3"], dim_map=(1, 0)), (64, 32), f16, "")  # transposed


@pytest.mark.parametrize("kernel", [KERNEL, REGISTERS], ids=["cp.async", "registers"])
def test_tiles_of_fewer_vectors_than_threads(kernel):
    """16x16 f16 tiles are 32 vectors for 128 threads: threads 0-31 copy one each, the others none
    (the owner predicate), still exact with a tile cut at the edge (20 x 24 x 40)."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    text = kernel.replace("64x32", "16x16").replace("32x64", "16x16").replace("64x64", "16x16")
    assert analyze_text(text).diagnostics == []
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    info = result.kernels[0]
    assert info.threads == 128 and result.ptx.count(VECTOR[kernel]) == 2 * 2  # and the next iteration's
    m, n, k = 20, 24, 40
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    stats = emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, b, c, m, n, k, k, n, 3],
                    (2, 2, 1), info.threads, info.dynamic_smem, traffic=True)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
    assert [line for line, counts in stats.traffic.by_line.items() if VECTOR[kernel] in line and counts]


def test_f32_operands_move_four_elements_a_vector():
    """f32 A and B (4 elements a vector; rows of 32 and 64 floats), -0.0 padding: vectors for
    132-column rows (528 bytes), elements for 130 (520 bytes, not a multiple of 16); exact on small
    integers."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    text = REGISTERS.replace("f16", "f32")
    assert analyze_text(text).diagnostics == []
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    info = result.kernels[0]
    # A 64x32 and B 32x64 f32: 512 vectors each, 4 a thread.  A's 16 registers are prefetched (before
    # the loop and for the next iteration); B's 16 more would pass the budget of 31 (128 threads):
    # copied in their iteration
    assert result.ptx.count("ld.global.v4.b32") == 2 * 4 + 4
    for sa, vectors in ((132, 2), (130, 1)):
        rng = np.random.default_rng(sa)
        a = rng.integers(-3, 4, (64, sa)).astype(np.float32)
        b = rng.integers(-3, 4, (64, 64)).astype(np.float32)
        c = np.full((64, 64), np.nan, np.float32)
        stats = emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, b, c, 64, 64, 64, sa, 64, 2],
                        (1, 1, 1), info.threads, info.dynamic_smem, traffic=True)
        np.testing.assert_array_equal(c, a[:, :64] @ b)
        ran = [line for line, counts in stats.traffic.by_line.items() if "ld.global.v4.b32" in line and counts]
        assert len(ran) == (2 * 4 if vectors == 2 else 0) + 4, ran  # A's lines in vectors, if aligned; B's


def test_two_stages_that_do_not_fit_in_shared_memory_are_one():
    """128 x 128 f16 A and B: 64 KB a stage.  sm_90 (227 KB a CTA) holds two stages; sm_86 (99 KB)
    does not, so its loop copies each iteration's operands by cp.async in that iteration (waited for
    at the barrier before the MMA), in one stage of 64 KB; both exact on the emulator."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    text = KERNEL.replace("64x32", "128x128").replace("32x64", "128x128").replace("64x64", "128x128")
    for gpu, smem, waits in (("sm_90", 128 * 1024, "cp.async.wait_group 2;"), ("sm_86", 64 * 1024, "cp.async.wait_all;")):
        result = lower_text(text, gpu, file_name="k.mlir")
        assert result.ok, result.diagnostics
        info = result.kernels[0]
        assert info.dynamic_smem == smem and waits in _loop_body(result.ptx)
        rng = np.random.default_rng(5)
        a = rng.integers(-3, 4, (128, 256)).astype(np.float16)
        b = rng.integers(-3, 4, (256, 128)).astype(np.float16)
        c = np.full((128, 128), np.nan, np.float32)
        emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, b, c, 128, 128, 256, 256, 128, 2],
                (1, 1, 1), info.threads, info.dynamic_smem)
        np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_rows_known_misaligned_at_compile_time_take_no_vectors_and_no_second_stage():
    """A's and B's rows given as 68 and 66 elements in the types (136 and 132 bytes, not multiples of
    16): no vector can be aligned, so no cp.async, no run-time test and no second stage; exact."""
    np = pytest.importorskip("numpy")
    from tests import ptx_emulator as emu
    text = KERNEL.replace("strides = [%sa, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>",
                          "strides = [68, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[68,1]>") \
        .replace("strides = [%sb, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>",
                 "strides = [66, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[66,1]>")
    text = re.sub(r"(partition_view<tile=\(64x32\), padding_value = zero, tensor_view<\?x\?xf16, strides=\[)\?,1",
                  r"\g<1>68,1", text)
    text = re.sub(r"(partition_view<tile=\(32x64\), padding_value = zero, tensor_view<\?x\?xf16, strides=\[)\?,1",
                  r"\g<1>66,1", text)
    result = _lowered(text)
    assert "cp.async" not in result.ptx and "ld.global.v4" not in result.ptx
    info = result.kernels[0]
    assert "bra.uni $L_copy_elements_" not in result.ptx  # no run-time test: elements only
    rng = np.random.default_rng(9)
    a = rng.integers(-3, 4, (64, 68)).astype(np.float16)
    b = rng.integers(-3, 4, (64, 66)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    emu.run(result.ptx, info.name, [p for p, _ in info.params], [a, b, c, 64, 64, 64, 68, 66, 2],
            (1, 1, 1), info.threads, info.dynamic_smem)
    np.testing.assert_array_equal(c, a[:, :64].astype(np.float32) @ b[:, :64].astype(np.float32))
