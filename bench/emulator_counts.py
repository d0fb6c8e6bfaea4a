"""Warp-level memory traffic of our PTX per corpus kernel, on the CPU emulator: no GPU needed.

Each kernel is lowered for its own target (:func:`tile_lsp.codegen.lower_text`) and run on the
PTX emulator (``tests/ptx_emulator.py``) with the inputs and grid of its emulator test case
(``tests/test_ptx_emulator.py``: ``ALL_CASES``), counting per warp what Nsight Compute would call
requests, sectors and wavefronts (:class:`tests.ptx_emulator.Traffic`).  Printed per CTA::

    python bench/emulator_counts.py                    # the kernels of bench/ptx_static.py's default set
    python bench/emulator_counts.py --kernels flash,matmul_tiled --json out.json
    python bench/emulator_counts.py --all              # every emulator case
    python bench/emulator_counts.py --kernels flash --lines 5   # and the 5 most wasteful PTX lines
    PYTHONPATH=/other/checkout python bench/emulator_counts.py   # another checkout's lowering

Columns (per CTA, averaged over the case's grid):

``warp inst``        PTX instructions executed, once per warp with an active lane.
``gld req/sect``     global load requests (warp-level ``ld``) and the 32-byte sectors they touch;
``eff``              bytes the lanes asked for / (32 x sectors): 100% when fully coalesced (over
                     100% where lanes read the same bytes: a tile smaller than the CTA is replicated).
``gst req/sect``     the same for global stores.
``lds req/wf``       shared loads (``ld.shared`` and ``ldmatrix``): requests and wavefronts;
``x``                wavefronts / the conflict-free minimum (1.00x: no bank conflicts).
``sts req/wf x``     the same for shared stores.
``bar``              ``bar.sync`` executed.

These count the PTX as written: ptxas may merge, split or drop accesses (``bench/ptx_static.py``
counts the SASS instead).  The first line says which ``tile_lsp`` was imported.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
import tile_lsp  # noqa: E402,F401  - from PYTHONPATH first: the lowering measured

# this checkout's tests (the emulator, the cases) whichever tile_lsp is measured
sys.path.insert(0, str(ROOT))
from bench.ptx_static import DEFAULT_PREFIXES, tile_lsp_origin  # noqa: E402  - the same default set


def measure(case) -> dict:
    """Lower ``case``'s kernel and run it with traffic counting; the counts per CTA (a dict)."""
    import numpy as np

    from tests import ptx_emulator as emu
    from tests.test_gpu import _auto_arrays, _make, kernel_path
    from tile_lsp.analysis import interpreter as interp
    from tile_lsp.codegen import lower_text

    path = kernel_path(case.kernel)
    text = path.read_text()
    target = re.search(r"sm_\d+", case.kernel).group(0)
    result = lower_text(text, target, file_name=path.name)
    if not result.ok:
        return {"kernel": case.kernel, "error": "; ".join(d.message for d in result.diagnostics[:2])}
    roles = interp.infer_array_params(text)
    rng = np.random.default_rng(1234)
    arrays = [_make(*a, rng) for a in case.arrays] if case.arrays else _auto_arrays(roles, rng)
    args = interp.bind_arrays(roles, arrays, case.scalars)
    info = result.kernels[0]
    t0 = time.perf_counter()
    stats = emu.run(result.ptx, info.name, [p for p, _ in info.params], args, case.grid, info.threads,
                    info.dynamic_smem, traffic=True)
    t = stats.traffic
    per = {k: v / stats.ctas for k, v in vars(t).items() if k != "by_line"}
    lines = {where: {k: v / stats.ctas for k, v in c.items()} for where, c in t.by_line.items()}
    return {"kernel": case.kernel, "threads": info.threads, "ctas": stats.ctas, "grid": list(case.grid),
            "seconds": round(time.perf_counter() - t0, 2), "per_cta": per, "by_line": lines}


def worst_lines(row: dict, count: int) -> list[str]:
    """The ``count`` PTX instructions of ``row`` that waste the most per CTA: shared wavefronts beyond
    the conflict-free minimum, and global sectors beyond the bytes asked for (in 32-byte sectors)."""
    waste = []
    for where, c in row.get("by_line", {}).items():
        for kind in ("load", "store"):
            extra = c.get(f"shared_{kind}_wavefronts", 0) - c.get(f"shared_{kind}_ideal", 0)
            if extra > 0:
                waste.append((extra, f"{extra:8.0f} shared wavefronts beyond conflict-free  {where}"))
            extra = c.get(f"global_{kind}_sectors", 0) - c.get(f"global_{kind}_bytes", 0) / 32
            if extra > 0:
                waste.append((extra, f"{extra:8.0f} global sectors beyond the bytes used   {where}"))
    return [text for _, text in sorted(waste, reverse=True)[:count]]


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def _eff(nbytes: float, sectors: float) -> str:
    return f"{100 * nbytes / (32 * sectors):.0f}%" if sectors else "-"


def table(rows: list[dict]) -> str:
    head = (f"{'kernel':44s} {'thr':>4s} {'ctas':>4s} {'warp inst':>10s} {'gld req':>8s} {'sect':>8s} {'eff':>5s} "
            f"{'gst req':>8s} {'sect':>7s} {'eff':>5s} {'lds req':>8s} {'wf':>8s} {'x':>6s} {'sts req':>8s} "
            f"{'wf':>8s} {'x':>6s} {'bar':>5s}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['kernel']:44s} error: {r['error']}")
            continue
        p = r["per_cta"]
        lines.append(
            f"{r['kernel']:44s} {r['threads']:4d} {r['ctas']:4d} {p['warp_instructions']:10.0f} "
            f"{p['global_load_requests']:8.0f} {p['global_load_sectors']:8.0f} "
            f"{_eff(p['global_load_bytes'], p['global_load_sectors']):>5s} "
            f"{p['global_store_requests']:8.0f} {p['global_store_sectors']:7.0f} "
            f"{_eff(p['global_store_bytes'], p['global_store_sectors']):>5s} "
            f"{p['shared_load_requests']:8.0f} {p['shared_load_wavefronts']:8.0f} "
            f"{_ratio(p['shared_load_wavefronts'], p['shared_load_ideal']):>6s} "
            f"{p['shared_store_requests']:8.0f} {p['shared_store_wavefronts']:8.0f} "
            f"{_ratio(p['shared_store_wavefronts'], p['shared_store_ideal']):>6s} {p['barriers']:5.0f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", help="comma-separated substrings of the case names to run")
    ap.add_argument("--all", action="store_true", help="every emulator case")
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--lines", type=int, default=0, metavar="N",
                    help="also print, per kernel, the N PTX instructions that waste the most (bank conflicts, "
                         "sectors beyond the bytes used)")
    args = ap.parse_args(argv)
    from tests.conftest import require_corpus
    require_corpus()
    from tests.test_ptx_emulator import ALL_CASES

    if args.kernels:
        wanted = [k for k in args.kernels.split(",") if k]
        cases = [c for c in ALL_CASES if any(w in c.kernel for w in wanted)]
    elif args.all:
        cases = list(ALL_CASES)
    else:
        cases = [c for c in ALL_CASES if c.kernel.startswith(DEFAULT_PREFIXES)]
    print(f"tile_lsp: {tile_lsp_origin()}")
    rows = []
    for case in cases:
        try:
            rows.append(measure(case))
        except Exception as e:  # noqa: BLE001 - one kernel's failure is a row, not the end of the run
            rows.append({"kernel": case.kernel, "error": f"{type(e).__name__}: {e}"[:200]})
    print(table(rows))
    if args.lines:
        for r in rows:
            worst = worst_lines(r, args.lines)
            if worst:
                print(f"\n{r['kernel']} (per CTA):")
                print("\n".join("  " + w for w in worst))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
        print(f"wrote {args.json}")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
