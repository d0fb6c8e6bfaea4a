"""Speed of the reference interpreter on corpus kernels (analysis excluded).

For a few kernel families (a GEMM with a K loop, a row softmax, a histogram
with atomics, a split-K GEMM with a spin lock) it builds random inputs, runs
the interpreter ``--repeat`` times and prints, per kernel, the grid, the
number of tile blocks and the best wall time per run and per tile block.

Usage: ``python bench/interpreter.py [--repeat 3]`` (needs ../shared/corpus).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from tile_lsp.analysis.interpreter import (
    bind_arrays,
    infer_array_params,
    load_module,
    run_kernel,
)

KERNELS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "kernels"


def cases(rng: np.random.Generator):
    """(file, arrays factory, scalars, grid) of each benchmarked kernel."""
    return [
        ("matmul_tiled_f16_128x128x32.sm_90",
         lambda: [rng.standard_normal((512, 512)).astype(np.float16),
                  rng.standard_normal((512, 512)).astype(np.float16), np.zeros((512, 512), np.float16)],
         [], (16, 1, 1)),
        ("softmax_rows_f32_16x256.sm_90",
         lambda: [rng.standard_normal((1024, 256)).astype(np.float32), np.zeros((1024, 256), np.float32)],
         [], (64, 1, 1)),
        ("atomic_histogram_f32_bins256_b1024.sm_90",
         lambda: [rng.uniform(0, 1, 65536).astype(np.float32), np.zeros(256, np.int32), np.zeros(1, np.float32)],
         [], (64, 1, 1)),
        ("split_k_locked_f32_s2_32x32x32.sm_90",
         lambda: [rng.standard_normal((128, 128)).astype(np.float32),
                  rng.standard_normal((128, 128)).astype(np.float32), np.zeros((128, 128), np.float32),
                  np.zeros(16, np.int32), np.zeros(16, np.int32)],
         [], (4, 4, 2)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'kernel':45s} {'grid':>12s} {'blocks':>6s} {'run ms':>9s} {'ms/block':>9s}")
    for name, make, scalars, grid in cases(rng):
        module = load_module((KERNELS / f"{name}.mlir").read_text(encoding="utf-8"))
        roles = infer_array_params(module)
        best = float("inf")
        for _ in range(args.repeat):
            call = bind_arrays(roles, make(), scalars)
            t0 = time.perf_counter()
            run_kernel(module, None, call, grid)
            best = min(best, time.perf_counter() - t0)
        blocks = grid[0] * grid[1] * grid[2]
        print(f"{name:45s} {grid!s:>12s} {blocks:6d} {best * 1e3:9.1f} {best * 1e3 / blocks:9.2f}")


if __name__ == "__main__":
    main()
