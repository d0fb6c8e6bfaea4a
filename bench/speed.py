"""Issue 18's acceptance figures in one run: start-up, a 50,000-line check, the language server.

Runs, each in its own process as a user would:

* ``bench/startup.py --no-cold --runs N``: ``tile-lsp --check`` and ``tile-lsp ptx``
  of a small kernel (``examples/vector_add.mlir``), whole processes;
* ``bench/bigfile.py --lines L``: ``tile-lsp --check`` of L lines of corpus
  kernels, then the same file answered from the result cache (and
  ``cuda-tile-opt`` on it when one is installed);
* ``bench/lsp.py --lines L``: the language server on that file over stdio,
  as an editor speaks to it (first diagnostics after ``didOpen``, edits,
  hover, definition, completion, RSS, edits typed during the first analysis);

then prints each figure against its target (``met`` / ``NOT met``), and each
script's own output above the table (its anchors included).  The figures
depend on the machine's load: the table gives the load average.

Usage: ``python bench/speed.py [--lines 50000] [--runs 11] [--root DIR] [--quick]``
(``--root``: measure another checkout, e.g. a ``git worktree`` of an older commit).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(script: str, args: list[str], root: Path) -> str:
    """The output of ``bench/<script>`` (of ``root``'s checkout) run with ``args``; echoed as it is read."""
    command = [sys.executable, str(ROOT / "bench" / script), *args]
    env = dict(os.environ, PYTHONPATH=str(root))
    print(f"$ {' '.join(command[1:])}", flush=True)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    print(done.stdout + done.stderr, flush=True)
    return done.stdout


def _number(pattern: str, text: str) -> float | None:
    """The number ``pattern``'s first group matches in ``text`` (``None``: the script did not print it)."""
    m = re.search(pattern, text, re.MULTILINE)
    return float(m.group(1).replace(",", "")) if m else None


def figures(startup: str, bigfile: str, lsp: str) -> list[tuple[str, float | None, float, str]]:
    """Rows ``(what, measured, target, unit)`` read from the three scripts' outputs."""
    p95 = r"p95\s+([\d.]+) ms"
    return [
        ("tile-lsp --check of a small kernel, median", _number(r"^tile-lsp --check \S+, whole process\s+([\d.]+)", startup),
         300, "ms"),
        ("tile-lsp ptx of a small kernel, median", _number(r"^tile-lsp ptx \S+, whole process\s+([\d.]+)", startup),
         500, "ms"),
        ("--check of the big file", _number(r"^tile-lsp --check, whole process: ([\d.]+) s", bigfile), 4, "s"),
        ("--check of it again, from the cache", _number(r"^second run, from the result cache: ([\d.]+) s", bigfile),
         1, "s"),
        ("server: didOpen to first diagnostics", _number(r"^didOpen -> first diagnostics .*?p50\s+([\d.]+) ms", lsp),
         1000, "ms"),
        ("server: edit to diagnostics, p95 (debounce included)",
         _number(r"^edit -> diagnostics \(debounce included\).*?" + p95, lsp), 50, "ms"),
        ("server: longest wait of an edit typed during the first analysis",
         _number(r"^edit during first analysis -> diagnostics.*?max\s+([\d.]+) ms", lsp), 1000, "ms"),
        ("server: hover p95", _number(r"^hover .*?" + p95, lsp), 20, "ms"),
        ("server: definition p95", _number(r"^definition .*?" + p95, lsp), 20, "ms"),
        ("server: completion p95", _number(r"^completion .*?" + p95, lsp), 20, "ms"),
        ("server: RSS", _number(r"^server RSS ([\d.]+) MiB", lsp), 300, "MiB"),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=50_000, help="lines of the big file (default 50000)")
    ap.add_argument("--runs", type=int, default=11, help="processes per start-up figure (default 11)")
    ap.add_argument("--root", default=str(ROOT), help="the checkout to measure (default: this one)")
    ap.add_argument("--quick", action="store_true",
                    help="a few edits and queries only (checks that every figure is printed, in seconds)")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    startup = _run("startup.py", ["--no-cold", "--runs", str(args.runs), "--root", str(root)], root)
    bigfile = _run("bigfile.py", ["--lines", str(args.lines), "--root", str(root)], root)
    quick = ["--edits", "4", "--queries", "4", "--open-edits", "1"] if args.quick else []
    lsp = _run("lsp.py", ["--lines", str(args.lines), "--root", str(root), *quick], root)
    rows = figures(startup, bigfile, lsp)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"issue 18's targets ({args.lines} lines; checkout {root}; load average {load}):")
    width = max(len(r[0]) for r in rows)
    for what, value, target, unit in rows:
        shown = "not printed" if value is None else f"{value:g} {unit}"
        verdict = "" if value is None else ("met" if value <= target else "NOT met")
        print(f"  {what.ljust(width)}  {shown:>12}  target <= {target:g} {unit}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
