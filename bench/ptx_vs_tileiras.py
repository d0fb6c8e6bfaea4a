"""Compare our lowering with NVIDIA's tileiras: compile wall time, and kernel time on a GPU.

Compile time (no GPU needed), for each corpus kernel tileiras accepts:
``tile-lsp ptx`` (in-process: analysis + lowering, and then ptxas to a cubin,
as the driver would) against ``tileiras`` compiling the ``.tileirbc`` beside
it (PyPI ``nvidia-cuda-tileiras``)::

    python bench/ptx_vs_tileiras.py compile [--limit N] [--target sm_90]

Kernel time, on a GPU (cuda-bindings), for the cases of ``tests/test_gpu.py``:
our PTX against tileiras' cubin, same inputs, same grid, after a warm-up;
memory-bound kernels as achieved bandwidth (bytes of every array argument,
read once and written once, over the kernel time), matrix products as
TFLOP/s (2*M*N*K).  tileiras is not needed there: ``prepare`` compiles the
cubins beforehand (where tileiras is installed) into a folder::

    python bench/ptx_vs_tileiras.py prepare --out .devcarry/cubins
    python bench/ptx_vs_tileiras.py gpu --cubins .devcarry/cubins

Prints one row per kernel and the totals; correctness is the GPU test's job,
but the ``gpu`` mode also says whether both outputs agree.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
KERNELS = ROOT.parent / "shared" / "corpus" / "kernels"


def _ok_kernels(target: str | None) -> list[Path]:
    rows = (KERNELS / "MANIFEST.tsv").read_text().splitlines()
    head = rows[0].split("\t")
    out = []
    for row in rows[1:]:
        c = dict(zip(head, row.split("\t")))
        if c.get("verdict") == "ok" and (target is None or c["target"] == target):
            out.append(KERNELS / c["file"])
    return out


def compile_times(args) -> None:
    from tile_lsp.codegen import lower_text
    from tile_lsp.codegen.cli import run_ptxas
    from tile_lsp.nvidia import find_tool

    tileiras = find_tool("tileiras")
    files = _ok_kernels(args.target)[: args.limit or None]
    print(f"{'kernel':58} {'target':7} {'ours ms':>9} {'+ptxas ms':>10} {'tileiras ms':>12}")
    ours, ptxas_t, theirs = [], [], []
    for f in files:
        target = re.search(r"\.(sm_\d+)\.", f.name).group(1)
        t0 = time.perf_counter()
        result = lower_text(f.read_text(), target, file_name=f.name)
        t1 = time.perf_counter()
        if not result.ok:
            print(f"{f.name:58} {target:7} lowering failed: {result.diagnostics[0].message}")
            continue
        ok, _ = run_ptxas(result.ptx, target)
        t2 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            t3 = time.perf_counter()
            subprocess.run([tileiras, "--gpu-name", target, str(f.with_suffix(".tileirbc")), "-o",
                            str(Path(tmp) / "k.cubin")], capture_output=True, check=False)
            t4 = time.perf_counter()
        ours.append((t1 - t0) * 1e3)
        ptxas_t.append((t2 - t1) * 1e3)
        theirs.append((t4 - t3) * 1e3)
        print(f"{f.name:58} {target:7} {ours[-1]:9.0f} {ptxas_t[-1]:10.0f} {theirs[-1]:12.0f}"
              + ("" if ok else "  (ptxas rejected)"))
    if ours:
        print(f"\n{len(ours)} kernels; median ms: tile-lsp ptx {statistics.median(ours):.0f}, "
              f"+ptxas {statistics.median(ptxas_t):.0f}, tileiras {statistics.median(theirs):.0f}; "
              f"total s: {sum(ours) / 1e3:.1f} / {sum(ptxas_t) / 1e3:.1f} / {sum(theirs) / 1e3:.1f}")


def prepare(args) -> None:
    from tests.test_gpu import CASES
    from tile_lsp.nvidia import find_tool

    tileiras = find_tool("tileiras")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        target = re.search(r"sm_\d+", case.kernel).group(0)
        src = KERNELS / f"{case.kernel}.tileirbc"
        proc = subprocess.run([tileiras, "--gpu-name", "sm_90", str(src), "-o", str(out / f"{case.kernel}.cubin")],
                              capture_output=True, text=True, check=False)
        print(case.kernel, target, "ok" if proc.returncode == 0 else proc.stderr.strip()[:200])


def gpu_times(args) -> None:
    import numpy as np

    from tests.test_gpu import CASES, _auto_arrays, _make
    from tile_lsp.analysis import interpreter as interp
    from tile_lsp.codegen import launch, lower_text

    print(f"device: {launch.device_name()}")
    cu = launch._driver()
    print(f"{'kernel':48} {'ours us':>9} {'tileiras us':>12} {'ours':>14} {'tileiras':>14}  outputs")
    for case in CASES:
        path = KERNELS / f"{case.kernel}.mlir"
        text = path.read_text()
        target = re.search(r"sm_\d+", case.kernel).group(0)
        result = lower_text(text, target, file_name=path.name)
        roles = interp.infer_array_params(text)
        rng = np.random.default_rng(7)
        arrays = [_make(*a, rng) for a in case.arrays] if case.arrays else _auto_arrays(roles, rng)
        nbytes = 2 * sum(a.nbytes for a in arrays)
        info = result.kernels[0]
        ours_arrays = [a.copy() for a in arrays]
        mod = launch.Module(result.ptx.encode())
        r1 = launch.launch(mod, info.name, [p for p, _ in info.params], interp.bind_arrays(roles, ours_arrays,
                           case.scalars), case.grid, info.threads, info.dynamic_smem, timed_runs=args.runs)
        mod.unload()
        cubin = Path(args.cubins) / f"{case.kernel}.cubin"
        theirs = "-"
        agree = "-"
        t2 = None
        if cubin.exists():
            their_arrays = [a.copy() for a in arrays]
            mod2 = launch.Module(cubin.read_bytes())
            func = mod2.function(info.name)
            _, threads = cu.cuFuncGetAttribute(
                cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, func)
            r2 = launch.launch(mod2, info.name, [p for p, _ in info.params],
                               interp.bind_arrays(roles, their_arrays, case.scalars), case.grid, threads, 0,
                               timed_runs=args.runs)
            mod2.unload()
            t2 = r2.elapsed_ms
            theirs = f"{t2 * 1e3:12.1f}"
            agree = "agree" if all(np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                               rtol=max(case.rtol, 1e-2), atol=max(case.atol, 1e-2),
                                               equal_nan=True)
                                   for a, b in zip(ours_arrays, their_arrays)) else "DIFFER"
        m = re.search(r"_(\d+)x(\d+)x(\d+)", case.kernel)
        if m and "matmul" in case.kernel:
            a0, b0 = arrays[0].shape, arrays[1].shape
            flop = 2 * a0[0] * a0[1] * b0[1]
            unit = lambda ms, flop=flop: f"{flop / (ms * 1e-3) / 1e12:9.3f} TF/s" if ms else "-"
        else:
            unit = lambda ms, nbytes=nbytes: f"{nbytes / (ms * 1e-3) / 1e9:9.1f} GB/s" if ms else "-"
        print(f"{case.kernel:48} {r1.elapsed_ms * 1e3:9.1f} {theirs:>12} {unit(r1.elapsed_ms):>14} "
              f"{unit(t2) if t2 else '-':>14}  {agree}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--limit", type=int, default=0)
    c.add_argument("--target", default=None)
    pr = sub.add_parser("prepare")
    pr.add_argument("--out", required=True)
    g = sub.add_parser("gpu")
    g.add_argument("--cubins", default=".devcarry/cubins")
    g.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    {"compile": compile_times, "prepare": prepare, "gpu": gpu_times}[args.mode](args)


if __name__ == "__main__":
    main()
