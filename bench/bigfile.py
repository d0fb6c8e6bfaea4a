"""Large-input benchmark: time and peak memory of ``tile-lsp --check`` on a big file.

The input is, by default, the issue's file: ``--lines`` (50,000) lines of
distinct corpus kernels (``../shared/corpus/kernels``), each entry renamed,
inside one ``cuda_tile.module``, built as ``bench/lsp.py`` builds its file.
Without the corpus (or with ``--mb``) it repeats the bundled examples
(renamed so that symbols stay unique) up to about ``--mb`` megabytes.

It runs ``tile-lsp --check FILE`` (parse, IR, verify) in a child process
and prints wall time, CPU time, throughput and the child's peak resident
memory; then checks the file again, as a second CI run does, answered from
the result cache the first run wrote (in a temporary cache directory); then,
when NVIDIA's ``cuda-tile-opt`` is found (``--oracle``, ``$CUDA_TILE_OPT``,
``PATH``, ``~/.local/bin``), the anchor's time on the same file
(``-allow-unregistered-dialect FILE -o /dev/null``; it stops at the first
error, so its exit status is printed beside its time: 38 corpus kernels use
features newer than its 13.3).

Usage: ``python bench/bigfile.py [--lines 50000 | --mb 10] [--runs 3] [--keep PATH] [--oracle PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from differential import find_oracle  # noqa: E402 - the same search for cuda-tile-opt (this folder is on sys.path)


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


def _child(command: list[str], env: dict) -> tuple[subprocess.CompletedProcess, float, float, int]:
    """Run ``command``; returns (the process, wall s, its CPU s (user + system), the peak RSS in KiB of
    the children run so far: ``getrusage`` keeps the largest)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done, elapsed, cpu, after.ru_maxrss


def _accepted_text(lines: int, corpus: Path, oracle: str) -> str | None:
    """``lines`` lines of the corpus kernels ``oracle`` checks without an error (each wrapped in a module
    for it, as ``../shared/corpus/README.md`` says), built as ``bench/lsp.py`` builds its file."""
    from lsp import build_text

    def accept(path: Path) -> bool:
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write("cuda_tile.module @kernels {\n" + path.read_text(encoding="utf-8") + "}\n")
            f.flush()
            ran = subprocess.run([oracle, "-allow-unregistered-dialect", f.name, "-o", "/dev/null"],
                                 capture_output=True, text=True)
        return ran.returncode == 0 and "error:" not in ran.stderr

    text = build_text(lines, corpus.parent, accept=accept)
    return text if text.count("\n") > 2 else None


def _both_on(text: str, command: list[str], env: dict, oracle: str) -> tuple[float, float, int]:
    """(tile-lsp s, cuda-tile-opt s, its exit status) on ``text``: ``command`` with the file's path added."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
        f.write(text)
        f.flush()
        _, ours, _, _ = _child(command + [f.name], env)
        start = time.perf_counter()
        ran = subprocess.run([oracle, "-allow-unregistered-dialect", f.name, "-o", "/dev/null"],
                             capture_output=True, text=True)
        return ours, time.perf_counter() - start, ran.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=50_000,
                    help="lines of corpus kernels, as bench/lsp.py builds them (default 50000)")
    ap.add_argument("--mb", type=float, default=None,
                    help="instead, repeat the bundled examples up to this many MB")
    ap.add_argument("--runs", type=int, default=1, help="cold runs of the checker (the median is printed)")
    ap.add_argument("--keep", help="write the generated file here instead of a temporary file")
    ap.add_argument("--oracle", help="cuda-tile-opt (default: $CUDA_TILE_OPT, PATH, ~/.local/bin)")
    ap.add_argument("--root", default=str(ROOT),
                    help="the checkout whose tile-lsp is measured (default: this one), e.g. an older commit "
                         "extracted with git archive or git worktree, for before/after figures")
    args = ap.parse_args(argv)
    corpus = ROOT.parent / "shared" / "corpus" / "kernels"
    if args.mb is None and corpus.is_dir():
        from lsp import build_text

        text = build_text(args.lines)
        what = "corpus kernels"
    else:
        text = make_text(args.mb or 10.0)
        what = "repeated examples"
    path = Path(args.keep) if args.keep else Path(tempfile.mkstemp(suffix=".mlir")[1])
    path.write_text(text, encoding="utf-8")
    cache = tempfile.mkdtemp(prefix="tile-lsp-cache-")
    command = [sys.executable, "-m", "tile_lsp.cli", "--check", str(path), "--format", "json"]
    env = dict(os.environ, PYTHONPATH=str(Path(args.root).resolve()))
    runs = []
    try:
        for k in range(max(1, args.runs)):
            # the first run fills the cache; the others (and the first's figures) are cold: no cache read
            extra = ["--cache-dir", cache] if k == 0 else ["--no-cache"]
            runs.append(_child(command + extra, env))
        proc = runs[0][0]
        # the same file again: answered from the result cache the first run wrote
        again, cached, _, _ = _child(command + ["--cache-dir", cache], env)
        oracle = find_oracle(args.oracle)
        anchor = None
        if oracle is not None:
            start = time.perf_counter()
            ran = subprocess.run([oracle, "-allow-unregistered-dialect", str(path), "-o", "/dev/null"],
                                 capture_output=True, text=True)
            anchor = (time.perf_counter() - start, ran.returncode,
                      next((line for line in ran.stderr.splitlines() if "error:" in line), ""))
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)
        shutil.rmtree(cache, ignore_errors=True)
    mb = len(text.encode()) / 1e6
    walls = sorted(r[1] for r in runs)
    wall = walls[len(walls) // 2]
    cpu = sorted(r[2] for r in runs)[len(runs) // 2]
    print(f"input: {what}, {mb:.1f} MB, {text.count(chr(10))} lines")
    print(f"exit status: {proc.returncode} (0 = clean), {len(json.loads(proc.stdout or '[]'))} diagnostics")
    print(f"tile-lsp --check, whole process: {wall:.2f} s (median of {len(runs)}; all {', '.join(f'{w:.2f}' for w in walls)}), "
          f"{mb / wall:.2f} MB/s")
    print(f"  CPU time of the checker (user + system, median): {cpu:.1f} s")
    print(f"  peak RSS of the checker: {max(r[3] for r in runs) / 1024:.0f} MiB")
    print(f"second run, from the result cache: {cached:.2f} s (same output: {again.stdout == proc.stdout})")
    if anchor is not None:
        print(f"anchor cuda-tile-opt: {anchor[0]:.2f} s (exit status {anchor[1]}); "
              f"tile-lsp / cuda-tile-opt = {wall / anchor[0]:.0f}x")
        if anchor[2]:
            print(f"  it stopped at its first error, so it read only part of the file: {anchor[2][-160:]}")
        # the same measure on a file cuda-tile-opt reads to its end: the kernels it accepts
        accepted = _accepted_text(args.lines, corpus, oracle) if corpus.is_dir() and args.mb is None else None
        if accepted is not None:
            checker = [sys.executable, "-m", "tile_lsp.cli", "--format", "json", "--no-cache", "--check"]
            both = _both_on(accepted, checker, env, oracle)
            print(f"on {accepted.count(chr(10))} lines of the kernels cuda-tile-opt 13.3 accepts: tile-lsp "
                  f"{both[0]:.2f} s, cuda-tile-opt {both[1]:.2f} s (exit status {both[2]}): {both[0] / both[1]:.0f}x")
    else:
        print("anchor cuda-tile-opt: not found")
    if "Traceback" in proc.stderr:
        print("checker raised:\n" + proc.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
