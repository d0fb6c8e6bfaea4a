"""Attention's S, P and row statistics in MMA fragments (``codegen/fragment_layouts.py``).

What the plan marks, what the nv_tileas stage then stages, what the PTX of attention's loop does
without shared memory, and the printed layouts against the PTX ISA's fragment definition.  The
results on the emulator against the interpreter are ``tests/test_ptx_emulator.py``'s cases
``custom_fragment_rows_f16_64x32.sm_80`` and ``flash_attention_f16_causal_d64_128x64.sm_90``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import require_corpus
from tile_lsp.codegen import layouts, lower_text
from tile_lsp.codegen.fragment_layouts import fragment_layout_text, row_blocked_fits

ROOT = Path(__file__).resolve().parents[1]
CUSTOM = ROOT / "tests" / "kernels" / "custom_fragment_rows_f16_64x32.sm_80.mlir"


def _marks(stage: str) -> dict[str, str]:
    """SSA name of each op's first result -> its ``tile_lsp.fragment`` mark."""
    out = {}
    for line in stage.splitlines():
        m = re.match(r"\s*(%[\w#:]+)(?:, %\w+)* = .*tile_lsp\.fragment = \"(\w+)\"", line)
        if m:
            out[m.group(1).split(":")[0]] = m.group(2)
    return out


def _loop_body(ptx: str) -> str:
    """The PTX from the first loop's head label to its end label."""
    start = re.search(r"^\$L_for_\d+:", ptx, re.M)
    end = re.search(r"^\$L_for_end_\d+:", ptx, re.M)
    return ptx[start.start():end.start()]


def test_the_plan_of_the_custom_kernel():
    r = lower_text(CUSTOM.read_text(), "sm_80", file_name=CUSTOM.name)
    assert r.ok, r.diagnostics
    marks = _marks(r.stages["layout"])
    # S and what the softmax makes of it; the mask is recomputed where select reads it
    assert {k: marks[k] for k in ("%7", "%11", "%12", "%14", "%15", "%19", "%22")} == dict.fromkeys(
        ("%7", "%11", "%12", "%14", "%15", "%19", "%22"), "tile")
    assert {marks[k] for k in ("%1", "%2", "%3", "%9", "%10", "%bcast_23", "%bcast_32")} == {"remat"}
    # the row statistics: reductions, their reshapes and arithmetic, and the broadcasts of them
    assert {marks[k] for k in ("%reduce", "%reshape_33", "%13", "%16", "%17", "%reduce_35", "%18")} == {"rows"}
    assert marks["%bcast_34"] == marks["%bcast_39"] == "row_broadcast"
    # the final O / l only goes back to the distribution to be stored: not in fragments
    assert "%23" not in marks and "%bcast_40" not in marks
    layout = r.stages["layout"]
    assert 'tile_lsp.operand_a = "fragments"' in layout
    assert "tile_lsp.fragment_rows = [1 : i32, 2 : i32]" in layout
    assert "tile_lsp.fragments_blocked = [0 : i32]" in layout
    # 2 warps, 64 rows: two 16-row blocks a warp
    assert 'tile_lsp.layout = "((4,8,2),(2,2,4,2)):((2,32,1024),(1,256,8,512))"' in layout
    assert 'tile_lsp.layout = "((4,8,2),(2,2)):((0,1,32),(8,16))"' in layout


def test_p_is_not_staged_and_the_loop_has_no_cross_warp_step():
    r = lower_text(CUSTOM.read_text(), "sm_80", file_name=CUSTOM.name)
    nv = r.stages["nv_tileas"]
    dots = [line for line in nv.splitlines() if "nv_tileas.dot" in line]
    assert len(dots) == 2
    # S = Q K reads two staged buffers; P V reads P as a register tile and V's buffer
    assert re.search(r"nv_tileas.dot %\w+, %\w+, %\w+ .*: !nv_tileas.tiled_view<64x32xf16, SMEM>", dots[0])
    assert ": !cuda_tile.tile<64x32xf16>, !nv_tileas.tiled_view<32x32xf16, SMEM>" in dots[1]
    body = _loop_body(r.ptx)
    # two reductions, two rows of two blocks a thread, two butterfly steps each
    assert body.count("shfl.sync.bfly") == 2 * 4 * 2
    # Q's A fragments (2 blocks x 2 k-steps of S); P's are its registers
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.shared") == 2 * 2


def _corpus(name: str):
    """The lowering of corpus kernel ``name`` (``NAME.sm_XX``) for its target (``require_corpus``)."""
    path = require_corpus() / "kernels" / f"{name}.mlir"
    r = lower_text(path.read_text(), name.rsplit(".", 1)[1], file_name=path.name)
    assert r.ok, r.diagnostics
    return r


def test_flash_attention_keeps_s_p_and_the_statistics_in_registers():
    r = _corpus("flash_attention_f16_causal_d64_128x64.sm_90")
    body = _loop_body(r.ptx)
    # per iteration: one barrier at each MMA (its operands visible); K^T's and V's buffers are their
    # own, so their stores need none before them (the other MMA's barrier follows their readers);
    # S, the softmax and P none
    assert body.count("bar.sync") == 2
    assert r.stages["nv_tileas"].count("tile_lsp.readers_done") == 2
    assert body.count("shfl.sync.bfly") == 2 * 2 * 2
    marks = _marks(r.stages["layout"])
    assert marks["%21"] == "tile" and marks["%reduce"] == "rows" and marks["%bcast_71"] == "row_broadcast"


@pytest.mark.parametrize("m,n,warps,rows", [(64, 32, 2, False), (128, 64, 8, False), (64, 32, 2, True),
                                            (128, 64, 8, True), (128, 128, 4, False)])
def test_printed_layouts_are_the_fragment_definition(m, n, warps, rows):
    """Evaluate the CuTe layout text at every (thread, register) against PTX ISA "Matrix Fragments for
    mma.m16n8k16": C/D element i of a 16x8 tile in lane 4g + q at row g + 8 (i >> 1), column
    2q + (i & 1); warp w holding row blocks w B .. w B + B - 1 whole."""
    threads = 32 * warps
    assert row_blocked_fits(m, n, threads)
    text = fragment_layout_text((m, n) if not rows else (m, 1), threads, rows)
    shapes, strides = [re.findall(r"\d+", part) for part in text.split(":")]
    shapes, strides = [int(x) for x in shapes], [int(x) for x in strides]
    thread_modes = 3
    blocks = m // 16 // warps
    tn = n // 8

    def evaluate(index: int, modes: list[int], steps: list[int]) -> int:
        out = 0
        for size, step in zip(modes, steps):
            out += (index % size) * step
            index //= size
        return out
    regs = 2 * blocks if rows else 4 * tn * blocks
    for t in range(threads):
        w, g, q = t // 32, (t % 32) // 4, t % 4
        for v in range(regs):
            got = evaluate(t, shapes[:thread_modes], strides[:thread_modes]) \
                + evaluate(v, shapes[thread_modes:], strides[thread_modes:])
            if rows:
                a, h = v // 2, v % 2
                assert got == 16 * (w * blocks + a) + g + 8 * h
            else:
                j, i = v // 4, v % 4
                a, col_tile = j // tn, j % tn
                row, col = 16 * (w * blocks + a) + g + 8 * (i >> 1), 8 * col_tile + 2 * q + (i & 1)
                assert got == row * n + col


def test_plain_k_loops_keep_their_layout():
    """A K loop whose accumulator nothing reads in fragments gets none of the attention plan's marks;
    tile-assign-layouts blocks its warps' tiles (one tile row a warp) for fewer fragment loads."""
    r = _corpus("matmul_tiled_f16_128x128x32.sm_90")
    layout = r.stages["layout"]
    assert "tile_lsp.fragment =" not in layout and "tile_lsp.fragment_rows" not in layout
    assert "tile_lsp.operand_a" not in layout and "tile_lsp.fragments_blocked = [0 : i32]" in layout


def test_a_64_row_attention_takes_the_warps_its_row_blocks_split_over():
    """No hint sets the CTA size; 64 query rows are 4 row blocks, which 8 warps (the default for its
    64x128 f32 accumulator) cannot share evenly: 4 warps, and S, P and the statistics in fragments."""
    r = _corpus("flash_attention_bf16_d128_64x64.sm_90")
    assert r.kernels[0].threads == 128
    marks = _marks(r.stages["layout"])
    assert list(marks.values()).count("rows") >= 4 and 'tile_lsp.operand_a = "fragments"' in r.stages["layout"]


def test_kernels_without_such_tiles_keep_the_default_cta_size():
    r = _corpus("matmul_tiled_f16_128x128x32.sm_90")
    assert r.kernels[0].threads == 512


def test_a_transposed_b_is_staged_as_its_transpose():
    """K given as keys x d through a view that transposes it: the S MMA's buffer is marked
    ``tile_lsp.transposed`` and filled in whole tensor rows, 16 bytes a thread (prefetched: before the
    loop and for the next iteration), and its B fragments are read by ``ldmatrix`` without
    ``.trans``; V, not transposed, keeps ``.trans``.  Two neighbouring tile columns' B fragments
    are one ``.x4``.  The results on the emulator:
    ``custom_fragment_rows_kt_f16_64x32.sm_80`` in tests/test_ptx_emulator.py."""
    path = ROOT / "tests" / "kernels" / "custom_fragment_rows_kt_f16_64x32.sm_80.mlir"
    r = lower_text(path.read_text(), "sm_80", file_name=path.name)
    assert r.ok, r.diagnostics
    allocs = [line for line in r.stages["nv_tileas"].splitlines() if "nv_tileas.alloc_tensor" in line]
    assert sum("tile_lsp.transposed" in line for line in allocs) == 1
    body = _loop_body(r.ptx)
    # per 16-deep k-step of S (2) and pair of tile columns (2): the B fragments of two tiles
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 2 * 2 + 4  # and Q's A fragments
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 2 * 2  # V's
    assert "ldmatrix.sync.aligned.m8n8.x2" not in body
    # K and V: 32 x 32 f16 in 64 threads, two 16-byte vectors a thread each, for the next iteration
    # (by cp.async into the other stage: zero padding)
    assert body.count("cp.async.cg.shared.global") == 2 + 2 and "ld.global.v4.b32" not in body
    assert "ld.global.b16" in body  # the element copies where the alignment test fails
    straight = _loop_body(lower_text(CUSTOM.read_text(), "sm_80", file_name=CUSTOM.name).ptx)
    assert "tile_lsp.transposed" not in lower_text(CUSTOM.read_text(), "sm_80").stages["nv_tileas"]
    assert straight.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4  # Q's alone


@pytest.mark.parametrize("warps, marked", [(1, True), (4, True), (8, False)])
def test_the_custom_kernel_in_other_cta_sizes_on_the_emulator(warps, marked, monkeypatch, tmp_path):
    """``custom_fragment_rows_kt`` with its hint at 1 warp (four row blocks a warp), 4 (one) and 8 (64
    rows are 4 blocks: no plan, the distribution), against the interpreter, CTAs interleaved."""
    import numpy as np

    from tests import ptx_emulator as emu
    from tests import test_gpu
    name = "custom_fragment_rows_kt_f16_64x32.sm_80"
    text = (ROOT / "tests" / "kernels" / f"{name}.mlir").read_text()
    variant = text.replace("num_worker_warps_per_cta = 2", f"num_worker_warps_per_cta = {warps}")
    # one warp holds 255 registers and spills 2 bytes, so the lowering would take 2 warps
    # (layouts.SPILL_FACTOR): this test is of the fragment plan at the hinted size
    monkeypatch.setattr(layouts, "SPILL_FACTOR", 100)
    assert variant != text
    path = tmp_path / f"{name}.mlir"
    path.write_text(variant)
    monkeypatch.setattr(test_gpu, "kernel_path", lambda kernel: path)
    case = next(c for c in test_gpu.CASES if c.kernel == name)
    result, ours, refs, args = test_gpu.lower_and_reference(case)
    info = result.kernels[0]
    assert info.threads == 32 * warps
    assert ('tile_lsp.fragment = "tile"' in result.stages["layout"]) is marked
    which = {j: next(i for i, o in enumerate(ours) if o is a) for j, a in enumerate(args) if isinstance(a, np.ndarray)}
    run_args = [ours[which[j]] if j in which else a for j, a in enumerate(args)]
    emu.run(result.ptx, info.name, [p for p, _ in info.params], run_args, case.grid, info.threads,
            info.dynamic_smem, schedule=1)
    for i, got in enumerate(ours):
        test_gpu._compare(f"{name} in {warps} warps, array #{i}", got, [r[i] for r in refs], case)
