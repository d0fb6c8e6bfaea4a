"""What one iteration of flash attention's K/V loop costs in our PTX, on the CPU emulator: no GPU needed.

The corpus kernel ``flash_attention_f16_causal_d64_128x64.sm_90`` runs its loop once per 64 keys
up to the end of its 128-query block (causal), so CTA ``b`` makes ``2 (b + 1)`` iterations.  Two
emulator runs with traffic counting (``tests/ptx_emulator.py``, :class:`Traffic`), on S = 256 (2
CTAs, 6 iterations) and S = 512 (4 CTAs, 20 iterations), give each counter as ``per CTA x CTAs +
per iteration x iterations``; this prints both parts::

    python bench/flash_iteration_counts.py
    PYTHONPATH=/other/checkout python bench/flash_iteration_counts.py   # another checkout's lowering

Counters as in ``bench/emulator_counts.py``: warp instructions (PTX), global requests, 32-byte
sectors and bytes, shared requests and wavefronts (and the conflict-free minimum), barriers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import tile_lsp  # noqa: F401  - from PYTHONPATH first: the lowering measured

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's emulator and test helpers

KERNEL = "flash_attention_f16_causal_d64_128x64.sm_90"
#: (keys S, CTAs) of the two runs; CTA b of a run makes 2 (b + 1) iterations
RUNS = ((256, 2), (512, 4))


def counts(seq: int, ctas: int) -> dict[str, int]:
    """The traffic totals of one run over ``seq`` keys (B = H = 1, D = 64) in ``ctas`` CTAs."""
    import numpy as np

    from tests import ptx_emulator as emu
    from tests.test_gpu import _make, kernel_path
    from tile_lsp.analysis import interpreter as interp
    from tile_lsp.codegen import lower_text

    text = kernel_path(KERNEL).read_text()
    result = lower_text(text, "sm_90", file_name=f"{KERNEL}.mlir")
    if not result.ok:
        raise SystemExit(f"{KERNEL} does not lower: {result.diagnostics[0].message}")
    info = result.kernels[0]
    rng = np.random.default_rng(0)
    arrays = [_make((1, 1, seq, 64), "float16", "normal", rng) for _ in range(3)]
    arrays.append(np.zeros((1, 1, seq, 64), np.float16))
    args = interp.bind_arrays(interp.infer_array_params(text), arrays, [0.125])
    stats = emu.run(result.ptx, info.name, [p for p, _ in info.params], args, (ctas, 1, 1), info.threads,
                    info.dynamic_smem, traffic=True)
    return {k: v for k, v in vars(stats.traffic).items() if k != "by_line"}


def split() -> dict[str, tuple[float, float]]:
    """Each counter as ``(per CTA, per iteration)``, solved from the two :data:`RUNS`."""
    (c1, i1, t1), (c2, i2, t2) = [(ctas, sum(2 * (b + 1) for b in range(ctas)), counts(seq, ctas))
                                  for seq, ctas in RUNS]
    det = c1 * i2 - c2 * i1
    out = {}
    for k in t1:
        per_iteration = (c1 * t2[k] - c2 * t1[k]) / det
        out[k] = ((t1[k] - per_iteration * i1) / c1, per_iteration)
    return out


def main() -> int:
    from tests.conftest import require_corpus
    require_corpus()
    from bench.ptx_static import tile_lsp_origin
    print(f"tile_lsp: {tile_lsp_origin()}")
    print(f"{'counter':28s} {'per CTA':>10s} {'per iteration':>14s}")
    for k, (per_cta, per_iteration) in split().items():
        print(f"{k:28s} {per_cta:10.0f} {per_iteration:14.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
