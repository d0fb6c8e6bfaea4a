"""Reductions and scans in registers and warp shuffles (tile_lsp/codegen/reductions.py, scans.py).

The plans are pinned on small cases worked out by hand from the distribution
(slot ``s`` of thread ``t`` holds element ``s * T + t``); the lowered kernels
are checked for what a performance engineer looks for in the PTX (shuffles,
no element-by-element loop over shared memory) and by ptxas.  Their results
are checked on the emulator (tests/test_ptx_emulator.py, ``custom_reductions``
and the corpus cases) and on a GPU (tests/test_gpu.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_codegen import _require_ptxas
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.codegen import lower_text
from tile_lsp.codegen.cli import run_ptxas
from tile_lsp.codegen.reductions import commutative_combiner, plan_reduction, runs_in_registers
from tile_lsp.codegen.scans import plan_scan

OWN = Path(__file__).parent / "kernels" / "custom_reductions_64x32.sm_90.mlir"
SCANS = [Path(__file__).parent / "kernels" / f"{k}.sm_90.mlir"
         for k in ("custom_scans_f32_16x128", "custom_scan_chains_f32_4x128")]


def test_row_reduction_of_softmax_folds_two_slots_then_shuffles_then_combines_four_warps():
    # 16x256 in 128 threads: e = s*128 + t; the column (bits 0-7) is lanes 0-4, warps 5-6 and slot bit 0.
    p = plan_reduction((16, 256), 1, 128)
    assert (p.lo, p.hi, p.fold, p.lane_masks, p.warps, p.warp_shift) == (0, 8, 2, (1, 2, 4, 8, 16), 4, 5)
    assert p.writer_mask == 0b11111  # lane 0 of each warp writes
    assert p.describe() == "fold 2, shfl.bfly 1 2 4 8 16, 4 warps through smem"


def test_column_reduction_over_slot_bits_needs_no_exchange():
    p = plan_reduction((16, 128), 0, 128)
    assert (p.fold, p.lane_masks, p.warps) == (16, (), 0)
    assert p.describe() == "fold 16"


def test_tile_smaller_than_the_cta_reduces_its_data_bits_and_skips_replicas():
    # 4x8 in 128 threads: thread t holds element t mod 32; bits 5-6 of t are replicas.
    p = plan_reduction((4, 8), 1, 128)
    assert (p.fold, p.lane_masks, p.warps) == (1, (1, 2, 4), 1)
    assert p.writer_mask == 0b1100111  # reduced lanes 0-2 and the replica warps write nothing


def test_middle_dimension_of_a_3d_tile():
    # 4x16x32 in 128 threads: dim 1 is bits 5-8: warps 5-6, slot bits 0-1.
    p = plan_reduction((4, 16, 32), 1, 128)
    assert (p.lo, p.hi, p.fold, p.lane_masks, p.warps, p.warp_shift) == (5, 9, 4, (), 4, 5)


def _reduce_ops(text: str) -> list[Operation]:
    from tile_lsp.analysis.api import analyze_text
    module = analyze_text(text).chunks[0].module
    return [op for op in module.walk() if op.name == "cuda_tile.reduce"]


def test_commutative_bodies_are_recognised_and_others_are_not(corpus):
    text = (corpus / "kernels" / "argmax_argmin_f32_64x64.sm_90.mlir").read_text()
    assert [commutative_combiner(op) for op in _reduce_ops(text)] == [False, False]
    own = [commutative_combiner(op) for op in _reduce_ops(OWN.read_text())]
    # the last three keep the first non-zero element: associative, not commutative
    assert own == [True] * 9 + [False] * 3


def test_row_partials_halve_at_each_shuffle_step(corpus):
    # softmax 16x256 in 128 threads: 16 row partials a thread after folding 2 slots; each of the first
    # four lane steps halves them (8 + 4 + 2 + 1 shuffles), the fifth shuffles the last one: 16 per
    # reduction instead of 16 x 5, for both reductions (max and sum)
    path = corpus / "kernels" / "softmax_rows_f32_16x256.sm_90.mlir"
    result = lower_text(path.read_text(), "sm_90", file_name=path.name)
    assert result.ok
    assert result.ptx.count("shfl.sync.bfly.b32") == 2 * (8 + 4 + 2 + 1 + 1)


def test_bodies_that_do_not_commute_run_in_registers_where_the_order_is_kept(corpus):
    # argmax: along the rows (lanes and warps, one slot each) yes; 64x64 along the columns, each thread
    # would fold the rows 2k+w of its slots before the warps combine: the sequential loop
    text = (corpus / "kernels" / "argmax_argmin_f32_64x64.sm_90.mlir").read_text()
    assert [runs_in_registers(op, 128) for op in _reduce_ops(text)] == [True, False]
    text = (corpus / "kernels" / "argmax_argmin_f16_32x128.sm_90.mlir").read_text()
    assert [runs_in_registers(op, 128) for op in _reduce_ops(text)] == [True, True]  # the second: slots alone
    assert [runs_in_registers(op, 128) for op in _reduce_ops(OWN.read_text())][-3:] == [True, True, False]


def test_row_scan_is_lane_steps_then_warp_totals():
    # 16x128 in 128 threads: the column (bits 0-6) is lanes 0-4 and warps 5-6, one slot per row
    p = plan_scan((16, 128), 1, 128)
    assert (p.lanes, p.warps, p.chain, p.replica_mask) == ((0, 1, 2, 3, 4), 4, 1, 0)
    assert p.describe() == "shfl.up 1 2 4 8 16, 4 warps through smem"
    assert plan_scan((16, 128), 1, 128, reverse=True).describe() == "shfl.down 1 2 4 8 16, 4 warps through smem"


def test_column_scan_over_slot_bits_is_a_chain_in_each_thread():
    assert plan_scan((16, 128), 0, 128).describe() == "16 slots in order"
    # 32x64: the row index (bits 6-10) is warp bit 6, then slot bits 0-3
    p = plan_scan((32, 64), 0, 128)
    assert (p.lanes, p.warps, p.chain, p.slot_lo, p.slot_hi) == ((), 2, 16, 0, 4)


def test_scan_in_one_warp_and_on_a_replicated_tile():
    p = plan_scan((4, 128), 1, 32)  # lanes, then a chain of 4 slots: totals from the last lane
    assert (p.lanes, p.warps, p.chain) == ((0, 1, 2, 3, 4), 1, 4)
    p = plan_scan((4, 4), 0, 32)  # 16 elements in 32 lanes: lane bit 4 holds replicas
    assert (p.lanes, p.warps, p.chain, p.replica_mask) == ((2, 3), 1, 1, 0b10000)
    assert p.describe() == "shfl.up 4 8"


@pytest.mark.parametrize("kernel", ["prefix_scans_f32_16x128.sm_90", "prefix_scans_i32_32x64.sm_90"])
def test_scans_of_real_kernels_use_warp_shuffles(corpus, kernel):
    path = corpus / "kernels" / f"{kernel}.mlir"
    result = lower_text(path.read_text(), "sm_90", file_name=path.name)
    assert result.ok
    assert "shfl.sync.up.b32" in result.ptx and "shfl.sync.down.b32" in result.ptx
    assert "red_end" not in result.ptx  # no loop over a staged copy
    stage = result.stages["nv_tileas"]
    assert stage.count('tile_lsp.scan = "') == 3 and 'tile_lsp.staging = "smem"' not in stage


def test_own_scan_kernels_are_accepted_by_ptxas():
    _require_ptxas()
    for path in SCANS:
        for target in ("sm_80", "sm_90"):
            result = lower_text(path.read_text(), target, file_name=path.name)
            assert result.ok, result.diagnostics
            ok, log = run_ptxas(result.ptx, target)
            assert ok, log
    assert "shfl.sync.idx.b32" in result.ptx  # the one-warp chain reads the last lane's total


@pytest.mark.parametrize("kernel", ["softmax_rows_f32_16x256.sm_90", "rmsnorm_fwd_f16_4x2048.sm_90",
                                    "layernorm_bwd_f16_16x1024.sm_90", "reduce_rows_cols_f32_64x128.sm_90"])
def test_row_reductions_of_real_kernels_use_warp_shuffles(corpus, kernel):
    path = corpus / "kernels" / f"{kernel}.mlir"
    result = lower_text(path.read_text(), "sm_90", file_name=path.name)
    assert result.ok
    ptx = result.ptx
    assert "shfl.sync.bfly.b32" in ptx
    # no reduction loop reads the staged tile element by element any more
    assert not re.search(r"\$red_\w*:", ptx) and "red_end" not in ptx
    assert 'tile_lsp.reduction = "' in result.stages["nv_tileas"]


def test_own_reduction_kernel_is_accepted_by_ptxas_on_sm80_and_sm90():
    _require_ptxas()
    text = OWN.read_text()
    for target in ("sm_80", "sm_90"):
        result = lower_text(text, target, file_name=OWN.name)
        assert result.ok, result.diagnostics
        ok, log = run_ptxas(result.ptx, target)
        assert ok, log
        # every register class goes through the shuffles: b16 widened, b64 in halves, i1 as 0/1
        assert "cvt.u32.u16" in result.ptx and "mov.b64 {" in result.ptx and "selp.u32" in result.ptx
