"""Large-input benchmark: time and peak memory of ``tile-lsp --check`` on a big file.

Builds a synthetic file of about ``--mb`` megabytes by repeating the bundled
example kernels (renamed so that symbols stay unique), then runs the full
analysis (parse, IR, verify) in a child process and prints wall time,
throughput and the child's peak resident memory; then checks the file again,
as a second CI run does, answered from the result cache the first run wrote
(in a temporary cache directory).

Usage: ``python bench/bigfile.py [--mb 10] [--keep PATH]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_text(megabytes: float) -> str:
    """Concatenate renamed copies of the examples until the text reaches the size."""
    sources = [(ROOT / "examples" / n).read_text(encoding="utf-8")
               for n in ("vector_add.mlir", "row_max.mlir", "matmul_loop.mlir")]
    target = int(megabytes * 1_000_000)
    parts: list[str] = []
    size = 0
    i = 0
    while size < target:
        text = sources[i % len(sources)].replace("cuda_tile.module @", f"cuda_tile.module @copy{i}_")
        parts.append(text)
        size += len(text)
        i += 1
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0, help="size of the generated file in MB (default 10)")
    ap.add_argument("--keep", help="write the generated file here instead of a temporary file")
    args = ap.parse_args(argv)
    text = make_text(args.mb)
    path = Path(args.keep) if args.keep else Path(tempfile.mkstemp(suffix=".mlir")[1])
    path.write_text(text, encoding="utf-8")
    cache = tempfile.mkdtemp(prefix="tile-lsp-cache-")
    command = [sys.executable, "-m", "tile_lsp.cli", "--check", str(path), "--format", "json", "--cache-dir", cache]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - start
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        # the same file again: answered from the result cache the first run wrote
        start = time.perf_counter()
        again = subprocess.run(command, capture_output=True, text=True, env=env)
        cached = time.perf_counter() - start
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)
        shutil.rmtree(cache, ignore_errors=True)
    mb = len(text.encode()) / 1e6
    print(f"input: {mb:.1f} MB, {text.count(chr(10))} lines")
    print(f"exit status: {proc.returncode} (0 = clean)")
    print(f"wall time: {elapsed:.1f} s ({mb / elapsed:.2f} MB/s)")
    print(f"peak RSS of the checker: {peak_kb / 1024:.0f} MiB")
    print(f"second run, from the result cache: {cached:.2f} s (same output: {again.stdout == proc.stdout})")
    if "Traceback" in proc.stderr:
        print("checker raised:\n" + proc.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
