"""Reductions in registers and warp shuffles (tile_lsp/codegen/reductions.py).

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
from tile_lsp.codegen.reductions import commutative_combiner, plan_reduction

OWN = Path(__file__).parent / "kernels" / "custom_reductions_64x32.sm_90.mlir"


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
    assert own and all(own)


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
