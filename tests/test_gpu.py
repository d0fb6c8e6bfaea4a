"""Our PTX on a real GPU against the reference interpreter (skips where there is no GPU).

Each case lowers a corpus kernel (or one of ``tests/kernels/``) for its own
target (sm_80 or sm_90: PTX the driver JIT-compiles for the device), runs it
with the CUDA driver API on seeded random inputs, runs the NumPy interpreter
on copies of the same inputs, and compares every array the kernel can write.

The tile blocks of a grid run concurrently on a GPU, so a kernel whose blocks
touch the same memory has one correct result per order of their memory
operations (``permute_reshape_3d`` reads what the other block stores;
``tiled_view_stencil`` mixes ``add`` and ``max`` atomics on the same words).
The reference is therefore a set of outcomes (:func:`reference_outcomes`):
the interpreter's blocks one after the other, in lockstep, and, where those
two disagree, under seeded random interleavings; an element is right when it
equals that element of any outcome.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require_corpus

launch = pytest.importorskip("tile_lsp.codegen.launch")
interp = pytest.importorskip("tile_lsp.analysis.interpreter")


def _gpu():
    try:
        launch.context()
    except launch.GpuUnavailable as e:
        pytest.skip(f"no GPU: {e}")


@dataclass
class Case:
    """A corpus kernel, how to make its arrays (shape, dtype name, kind), its scalars, grid and tolerance."""

    kernel: str
    arrays: list[tuple[tuple[int, ...], str, str]]
    grid: tuple[int, int, int]
    scalars: list = field(default_factory=list)
    rtol: float = 1e-5
    atol: float = 1e-5


F32, F16, I32 = "float32", "float16", "int32"
CASES = [
    Case("ew_float_arith_f32_b256.sm_90", [((1024,), F32, "normal")] * 3, (4, 1, 1)),
    Case("ew_float_arith_f16_b1024.sm_90", [((2048,), F16, "normal")] * 3, (2, 1, 1), rtol=2e-3, atol=2e-3),
    Case("ew_int_arith_i32_b256.sm_80", [((512,), I32, "int")] * 3, (2, 1, 1)),
    Case("saxpy_scalar_f32_b512.sm_90", [((1024,), F32, "normal")] * 2, (2, 1, 1), scalars=[1.5, -0.25]),
    Case("softmax_rows_f32_16x256.sm_90", [((48, 256), F32, "normal"), ((48, 256), F32, "zeros")], (3, 1, 1)),
    Case("softmax_rows_f16_4x1024.sm_90", [((8, 1024), F16, "normal"), ((8, 1024), F16, "zeros")], (2, 1, 1),
         rtol=2e-3, atol=1e-4),
    Case("reduce_rows_cols_f32_64x128.sm_90", [((128, 128), F32, "normal"), ((128,), F32, "zeros"),
                                               ((128, 1), F32, "zeros"), ((2, 128), F32, "zeros"),
                                               ((256,), F32, "zeros")], (2, 1, 1), rtol=1e-4),
    Case("prefix_scans_f32_16x128.sm_90", [((32, 128), F32, "uniform")] + [((32, 128), F32, "zeros")] * 3,
         (2, 1, 1), rtol=1e-4),
    Case("prefix_scans_i32_32x64.sm_90", [((64, 64), I32, "small")] + [((64, 64), I32, "zeros")] * 3, (2, 1, 1)),
    Case("matmul_tiled_f16_128x128x32.sm_90", [((256, 64), F16, "normal"), ((64, 256), F16, "normal"),
                                               ((256, 256), F16, "zeros")], (4, 1, 1), rtol=2e-3, atol=2e-3),
    # f64 on the tensor cores (DMMA, m8n8k4): a K loop of 32x32x16 tiles on a 2 x 2 grid
    Case("matmul_tiled_f64_32x32x16.sm_80", None, (2, 2, 1), rtol=1e-12, atol=1e-12),
    Case("matmul_int8_i8_128x128x64.sm_90", [((128, 128), "int8", "int8"), ((128, 128), "int8", "int8"),
                                             ((128, 128), I32, "zeros")], (1, 1, 1)),
    Case("permute_reshape_3d_f32_4x8x16.sm_90", [((8, 8, 16), F32, "normal"), ((16, 8, 8), F32, "zeros"),
                                                 ((1024,), F32, "zeros")], (2, 1, 1)),
    Case("cat_extract_insert_f32_t16.sm_90", [((32, 16), F32, "normal"), ((32, 16), F32, "normal"),
                                              ((64, 32), F32, "zeros"), ((32, 16), F32, "zeros")], (2, 1, 1)),
    Case("atomic_histogram_f32_bins64_b512.sm_90", [((1024,), F32, "uniform"), ((64,), I32, "zeros"),
                                                    ((1,), F32, "zeros")], (2, 1, 1), rtol=1e-4),
    Case("while_break_search_f32_b256.sm_90", [((1280,), F32, "uniform"), ((3,), I32, "zeros")], (3, 1, 1),
         scalars=[0.99]),
    Case("advanced_index_rows_f32_r16_c64.sm_90", [((40, 128), F32, "normal"), ((32,), I32, "rows40"),
                                                   ((32, 64), F32, "zeros")], (2, 1, 1), scalars=[1]),
    Case("tiled_view_stencil_f32_t64_h32.sm_90", [((256,), F32, "normal"), ((256,), F32, "zeros"),
                                                  ((128,), I32, "zeros")], (4, 1, 1)),
    Case("bitcast_pack_f32_b128.sm_90", [((256,), F32, "normal"), ((256,), I32, "zeros"), ((256,), I32, "zeros")],
         (2, 1, 1)),
    Case("transcendental_f32_b256.sm_90", [((512,), F32, "uniform")] + [((512,), F32, "zeros")] * 2, (2, 1, 1),
         rtol=2e-3, atol=2e-4),
    Case("rmsnorm_fwd_f16_4x2048.sm_90", [((8, 2048), F16, "normal"), ((2048,), F16, "uniform"),
                                          ((8, 2048), F16, "zeros")], (2, 1, 1), scalars=[1e-5],
         rtol=5e-3, atol=5e-3),
    Case("layernorm_bwd_f16_16x1024.sm_90", None, (2, 1, 1), rtol=5e-3, atol=5e-3),
    Case("matmul_fp8_e4m3_128x128x64.sm_90", None, (1, 1, 1), scalars=[0.5], rtol=1e-2, atol=1e-2),
    # tests/kernels: scans with associative but not commutative bodies (the order of the body's arguments)
    Case("custom_scans_f32_16x128.sm_90", [((32, 128), F32, "sparse")] + [((32, 128), F32, "zeros")] * 3,
         (2, 1, 1)),
    # tests/kernels: scans in one warp (lanes, then a chain of slots) and on a tile smaller than the warp
    Case("custom_scan_chains_f32_4x128.sm_90", [((8, 128), F32, "sparse")] + [((8, 128), F32, "zeros")] * 3,
         (2, 1, 1)),
    # tests/kernels: every register class through the warp-shuffle reductions
    Case("custom_reductions_64x32.sm_90", [((64, 32), F32, "normal"), ((768,), F32, "zeros")], (1, 1, 1),
         rtol=1e-5, atol=1e-5),
    # tests/kernels: cat, extract and insert as register moves and through shared memory
    Case("custom_shape_moves_f32_32x64.sm_90", [((32, 64), F32, "normal")] * 2 + [((20576,), F32, "zeros")],
         (1, 1, 1), scalars=[1]),
    # tests/kernels: one A operand of two MMAs, staged once in a pinned buffer
    Case("shared_operand_mma_f16_64x64x32.sm_80", [((64, 32), F16, "normal"), ((32, 128), F16, "normal"),
                                                   ((128, 64), F32, "zeros")], (1, 1, 1), rtol=1e-4, atol=1e-4),
    # tests/kernels: attention's rows in MMA fragments, two row blocks a warp, P stored from fragments
    Case("custom_fragment_rows_f16_64x32.sm_80", [((64, 32), F16, "normal"), ((32, 64), F16, "normal"),
                                                  ((64, 32), F16, "normal"), ((64, 32), F32, "zeros"),
                                                  ((64, 1), F32, "zeros"), ((64, 64), F16, "zeros")], (1, 1, 1),
         rtol=1e-2, atol=1e-2),
    # the same with K through a view that transposes it (staged transposed) and 40 keys (cut tiles)
    Case("custom_fragment_rows_kt_f16_64x32.sm_80", [((64, 32), F16, "normal"), ((40, 32), F16, "normal"),
                                                     ((40, 32), F16, "normal"), ((64, 32), F32, "zeros"),
                                                     ((64, 1), F32, "zeros"), ((64, 40), F16, "zeros")], (1, 1, 1),
         rtol=1e-2, atol=1e-2),
    Case("flash_attention_f16_causal_d64_128x64.sm_90", [((1, 1, 128, 64), F16, "normal")] * 3
         + [((1, 1, 128, 64), F16, "zeros")], (1, 1, 1), scalars=[0.125], rtol=1e-2, atol=1e-2),
]


def _make(shape, dtype, kind, rng):
    import ml_dtypes

    dt = np.dtype(getattr(ml_dtypes, dtype, None) or dtype)
    if kind == "zeros":
        return np.zeros(shape, dt)
    if kind == "normal":
        return rng.standard_normal(shape).astype(dt)
    if kind == "uniform":
        return rng.uniform(0.5, 1.5, shape).astype(dt)
    if kind == "int":
        return rng.integers(-1000, 1000, shape).astype(dt)
    if kind == "small":
        return rng.integers(-3, 4, shape).astype(dt)
    if kind == "int8":
        return rng.integers(-128, 128, shape).astype(dt)
    if kind == "sparse":  # normal values, about 70% of them zero
        return np.where(rng.uniform(size=shape) < 0.7, 0.0, rng.standard_normal(shape)).astype(dt)
    if kind == "rows40":
        return rng.integers(0, 40, shape).astype(dt)
    raise ValueError(kind)


def _auto_arrays(roles, rng, tile=128):
    """Arrays for kernels without a hand-written case: every array 2 tiles of 128 per dimension, normal f-data."""
    from tile_lsp.dialect import types as T

    specs = {}
    for r in roles:
        if r.kind == "pointer":
            elem = r.element
            name = getattr(elem, "name", None) or f"int{T.bit_width(elem)}"
            name = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
                    "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2"}.get(name, name)
            specs[r.array] = ((tile,) * (r.rank or 1), name, "normal" if "float" in name else "small")
    return [_make(*specs[k], rng) for k in sorted(specs)]


def _close(got, want, case) -> np.ndarray:
    """Element-wise: ``got`` equals ``want`` (exactly for integers, within the case's tolerance for floats)."""
    if np.issubdtype(np.asarray(want).dtype, np.integer):
        return np.asarray(got) == np.asarray(want)
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return np.isclose(g, w, rtol=case.rtol, atol=case.atol, equal_nan=True)


def _compare(name, got, wants, case):
    """Assert that each element of ``got`` equals that element of one of the outcomes ``wants``.

    ``wants``: one array, or a list of arrays (the outcomes of several
    schedules).  The message is NumPy's, against the nearest outcome per element.
    """
    if isinstance(wants, np.ndarray):
        wants = [wants]
    want = np.array(wants[0], copy=True)
    for other in wants[1:]:
        fill = ~_close(got, want, case) & _close(got, other, case)
        want[fill] = np.asarray(other)[fill]
    if len(wants) > 1:
        name += f" (against {len(wants)} schedule outcomes)"
    if np.issubdtype(np.asarray(want).dtype, np.integer):
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                                   rtol=case.rtol, atol=case.atol, err_msg=name, equal_nan=True)


#: Kernels of our own (for behaviour the corpus does not cover), beside the corpus kernels.
OWN_KERNELS = Path(__file__).parent / "kernels"


def reference_outcomes(text: str, roles, arrays: list[np.ndarray], scalars: list, grid) -> list[list[np.ndarray]]:
    """The interpreter's results for ``arrays`` under every schedule that matters, distinct ones only
    (:func:`~tile_lsp.analysis.interpreter.schedule_outcomes`); ``arrays`` are not modified."""
    def run(schedule):
        out = [a.copy() for a in arrays]
        interp.run_kernel(text, None, interp.bind_arrays(roles, out, scalars), grid, schedule=schedule)
        return out

    return interp.schedule_outcomes(run)


def kernel_path(kernel: str) -> Path:
    """The ``.mlir`` file of a case's kernel: ``tests/kernels/`` first, else the corpus."""
    own = OWN_KERNELS / f"{kernel}.mlir"
    return own if own.exists() else require_corpus() / "kernels" / f"{kernel}.mlir"


def lower_and_reference(case: Case):
    """Lower ``case``'s kernel for its own target and run the interpreter on seeded inputs.

    Returns ``(result, ours, refs, args)``: the lowering result, the arrays for
    our PTX to write (fresh copies of the inputs), the interpreter's outcomes
    (:func:`reference_outcomes`: a list of array lists, one per distinct
    schedule result), and ``ours`` bound as kernel arguments (scalars included).
    """
    require_corpus()
    from tile_lsp.codegen import lower_text

    path = kernel_path(case.kernel)
    text = path.read_text()
    gpu = re.search(r"sm_\d+", case.kernel).group(0)
    result = lower_text(text, gpu, file_name=path.name)
    assert result.ok, result.diagnostics
    roles = interp.infer_array_params(text)
    rng = np.random.default_rng(1234)
    arrays = [_make(*a, rng) for a in case.arrays] if case.arrays else _auto_arrays(roles, rng)
    ours = [a.copy() for a in arrays]
    refs = reference_outcomes(text, roles, arrays, case.scalars, case.grid)
    return result, ours, refs, interp.bind_arrays(roles, ours, case.scalars)


@pytest.mark.parametrize("case", CASES, ids=[c.kernel for c in CASES])
def test_lowered_kernel_matches_the_interpreter_on_the_gpu(case):
    require_corpus()
    _gpu()
    result, ours, refs, args = lower_and_reference(case)
    info = result.kernels[0]
    module = launch.Module(result.ptx.encode())
    try:
        launch.launch(module, info.name, [p for p, _ in info.params],
                      args, case.grid, info.threads, info.dynamic_smem)
    finally:
        module.unload()
    for i, got in enumerate(ours):
        _compare(f"{case.kernel} array #{i}", got, [r[i] for r in refs], case)
