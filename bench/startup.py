"""Start-up benchmark: how long ``tile-lsp`` takes before it answers, in whole processes.

Prints, in one run, the median (and minimum) wall time over ``--runs``
fresh processes of:

* the Python interpreter alone (``python -c pass``): the floor;
* ``import tile_lsp.cli`` (time measured inside the process, and the whole process);
* the parser ready (``tile_lsp.grammar.loader.get_parser()`` from process
  start) with the stored table (warm), and once with an empty cache
  directory (cold: the table is built, about 15 s; ``--no-cold`` skips it);
* the first parse of the file after that (per-state lexers and tree
  callbacks are made on first use);
* the whole ``tile-lsp --check FILE`` process (default
  ``examples/vector_add.mlir``), against its anchor, NVIDIA's
  ``cuda-tile-opt -allow-unregistered-dialect FILE -o /dev/null``, when one is
  found (``--oracle``, ``$CUDA_TILE_OPT``, ``PATH``, ``~/.local/bin``); the
  anchor column is left out otherwise.

Python reads compiled bytecode (``__pycache__``) when present; where
``PYTHONDONTWRITEBYTECODE`` is set nothing writes it and every start compiles
the sources again.  By default the benchmark first compiles the checkout's
package (``compileall``, what ``pip install`` does), so the figures are those
of an installed tile-lsp; ``--no-compile`` measures as the environment is.

``--root DIR`` measures another checkout (e.g. an older commit extracted
with ``git archive``) with the same Python, for before/after figures.

Usage: ``python bench/startup.py [--runs 15] [--file F] [--no-cold] [--root DIR]``.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_IMPORT_CLI = """
import time
t = time.perf_counter()
import tile_lsp.cli
print(time.perf_counter() - t)
"""

# prints the wall-clock time when the parser was ready (the parent subtracts the time it
# started the process), the in-process import and load time, and the first parse's time
_PARSER = """
import time
t = time.perf_counter()
from tile_lsp.grammar.loader import get_parser
parser = get_parser()
ready = time.time()
t1 = time.perf_counter()
parser.parse(open({file!r}, encoding="utf-8").read())
t2 = time.perf_counter()
print(repr(ready), t1 - t, t2 - t1)
"""


def find_oracle(given: str | None) -> str | None:
    """NVIDIA's ``cuda-tile-opt``: ``given``, ``$CUDA_TILE_OPT``, ``PATH`` or ``~/.local/bin``; ``None`` if absent."""
    for cand in (given, os.environ.get("CUDA_TILE_OPT"), shutil.which("cuda-tile-opt"),
                 str(Path.home() / ".local" / "bin" / "cuda-tile-opt")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, str, float]:
    """Wall time (s) of one process, its standard output and the wall-clock time it was started at.

    Runs in the checkout ``env["PYTHONPATH"]`` names: ``python -c`` and ``-m`` put the working
    directory first on ``sys.path``.
    """
    started = time.time()
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                          cwd=env["PYTHONPATH"])
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # 1: the file has errors, still a complete run
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}")
    return elapsed, proc.stdout, started


def _stats(values: list[float]) -> tuple[float, float]:
    return statistics.median(values), min(values)


def measure(root: Path, file: Path, runs: int, cold: bool, oracle: str | None) -> list[tuple]:
    """Rows ``(what, median_s, min_s, anchor_median_s or None)``: the figures described in the module doc."""
    env = dict(os.environ, PYTHONPATH=str(root))
    py = sys.executable
    check = [py, "-m", "tile_lsp.cli", "--check", str(file)]
    rows = []

    # warm everything once (the stored table, the OS's file cache)
    _run(check, env)

    interp, imports_in, imports_whole, ready_in, ready_whole, first_parse, whole, anchor = ([] for _ in range(8))
    for _ in range(runs):  # interleaved, so that a burst of load on the machine hits every figure alike
        interp.append(_run([py, "-c", "pass"], env)[0])
        t, out, _ = _run([py, "-c", _IMPORT_CLI], env)
        imports_whole.append(t)
        imports_in.append(float(out.split()[0]))
        _, out, started = _run([py, "-c", _PARSER.format(file=str(file))], env)
        ready, load, parse = map(float, out.split())
        ready_whole.append(ready - started)
        ready_in.append(load)
        first_parse.append(parse)
        whole.append(_run(check, env)[0])
        if oracle:
            anchor.append(_run([oracle, "-allow-unregistered-dialect", str(file), "-o", os.devnull], env)[0])

    rows.append(("python -c pass (interpreter start)", *_stats(interp), None))
    rows.append(("import tile_lsp.cli, in process", *_stats(imports_in), None))
    rows.append(("import tile_lsp.cli, whole process", *_stats(imports_whole), None))
    rows.append(("parser ready (warm cache), in process", *_stats(ready_in), None))
    rows.append(("parser ready (warm cache), from process start", *_stats(ready_whole), None))
    if cold:
        with tempfile.TemporaryDirectory() as cache:
            _, out, _ = _run([py, "-c", _PARSER.format(file=str(file))], dict(env, XDG_CACHE_HOME=cache))
            load = float(out.split()[1])
        rows.append(("parser ready (cold: table built), in process", load, load, None))
    rows.append((f"first parse of {file.name} after that", *_stats(first_parse), None))
    rows.append((f"tile-lsp --check {file.name}, whole process", *_stats(whole),
                 statistics.median(anchor) if anchor else None))
    return rows


def format_table(rows: list[tuple], oracle: str | None) -> str:
    """The rows as a plain-text table (milliseconds); an anchor column when ``oracle`` was run."""
    head = ["what", "median ms", "min ms"] + (["cuda-tile-opt ms", "ratio"] if oracle else [])
    lines = []
    for what, med, low, anchor in rows:
        cells = [what, f"{med * 1e3:.1f}", f"{low * 1e3:.1f}"]
        if oracle:
            cells += [f"{anchor * 1e3:.1f}", f"{med / anchor:.0f}x"] if anchor else ["", ""]
        lines.append(cells)
    widths = [max(len(str(c)) for c in col) for col in zip(head, *lines)]

    def fmt(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(c) for c in lines])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="processes per figure (default 15)")
    ap.add_argument("--file", default=str(ROOT / "examples" / "vector_add.mlir"), help="the file checked")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-cache figure (a ~15 s table build)")
    ap.add_argument("--no-compile", action="store_true", help="do not compile the package's bytecode first")
    ap.add_argument("--root", default=str(ROOT), help="the checkout to measure (default: this one)")
    ap.add_argument("--oracle", help="cuda-tile-opt (default: $CUDA_TILE_OPT, PATH, ~/.local/bin)")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    file = Path(args.file).resolve()
    if not args.no_compile:
        compileall.compile_dir(str(root / "tile_lsp"), quiet=1)
    oracle = find_oracle(args.oracle)
    rows = measure(root, file, args.runs, not args.no_cold, oracle)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    bytecode = "as the environment is" if args.no_compile else "compiled"
    print(f"checkout: {root}  python {sys.version.split()[0]}  load average: {load}  bytecode: {bytecode}")
    print(f"{args.runs} processes per figure; anchor: {oracle or 'cuda-tile-opt not found'}")
    print(format_table(rows, oracle))
    return 0


if __name__ == "__main__":
    sys.exit(main())
