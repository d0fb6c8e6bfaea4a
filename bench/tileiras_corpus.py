"""How long NVIDIA's tileiras takes on our bytecode of every corpus kernel.

What ``tests/test_nvidia.py::test_tileiras_accepts_every_ok_corpus_kernel``
does, timed: each ``../shared/corpus/kernels/*.tileirbc`` whose MANIFEST
verdict is ``ok`` is read into our IR, written in NVIDIA's layout and
compiled with ``tileiras`` for its target (default ``--opt-level``), several
processes at a time, longest compiles first (MANIFEST ``tileiras_ms``).
Prints the wall time, the CPU time of the tileiras processes, the sum of
the per-kernel times the MANIFEST recorded on the machine that made the
corpus (for scale), the failures, and the slowest kernels.

Usage: ``python bench/tileiras_corpus.py [--workers N] [--opt-level N]
[--every K] [--corpus DIR]`` (needs ``pip install -e '.[nvidia]'``).
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tile_lsp import nvidia
from tile_lsp.bytecode import read_bytecode, write_bytecode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--workers", type=int, default=max(2, os.cpu_count() or 2))
    ap.add_argument("--opt-level", type=int, default=None)
    ap.add_argument("--every", type=int, default=1, help="only every K-th kernel")
    args = ap.parse_args(argv)
    kernels = Path(args.corpus) / "kernels"
    if not (kernels / "MANIFEST.tsv").is_file():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    if nvidia.find_tool("tileiras") is None:
        print("tileiras is not installed (pip install -e '.[nvidia]')", file=sys.stderr)
        return 2
    with open(kernels / "MANIFEST.tsv", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["verdict"] == "ok"][::args.every]
    rows.sort(key=lambda r: -float(r["tileiras_ms"]))

    start = time.perf_counter()
    jobs = [(r, write_bytecode(read_bytecode((kernels / r["bytecode"]).read_bytes()), layout="nvidia"))
            for r in rows]
    written = time.perf_counter()
    seconds: dict[str, float] = {}

    def compile_one(job):
        row, data = job
        t = time.perf_counter()
        result = nvidia.compile_with_tileiras(data, row["target"], opt_level=args.opt_level, facts=False)
        seconds[row["file"]] = time.perf_counter() - t
        return row, result

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        results = list(pool.map(compile_one, jobs))
    end = time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    failed = [row["file"] for row, r in results if not r.ok]

    print(f"kernels            {len(rows)} (workers {args.workers}, cpus {os.cpu_count()}, "
          f"load {os.getloadavg()[0]:.1f})")
    print(f"read + write       {written - start:8.1f} s")
    print(f"tileiras, wall     {end - written:8.1f} s")
    print(f"tileiras, cpu      {children.ru_utime + children.ru_stime:8.1f} s (user+sys of the processes)")
    print(f"manifest ms, sum   {sum(float(r['tileiras_ms']) for r in rows) / 1000:8.1f} s (corpus machine, serial)")
    print(f"total              {end - start:8.1f} s")
    print(f"failed             {len(failed)} {failed[:5]}")
    for name, s in sorted(seconds.items(), key=lambda kv: -kv[1])[:5]:
        print(f"  slowest  {s:7.1f} s  {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
