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
* the whole ``tile-lsp --check FILE`` process (``python -m tile_lsp.cli``; default
  ``examples/vector_add.mlir``), against its anchor, NVIDIA's
  ``cuda-tile-opt -allow-unregistered-dialect FILE -o /dev/null``, when one is
  found (``--oracle``, ``$CUDA_TILE_OPT``, ``PATH``, ``~/.local/bin``); the
  anchor column is left out otherwise;
* the whole ``tile-lsp ptx FILE`` process (the file analysed, then lowered to PTX).

Whole processes also get their CPU time (user + system, median): on a
shared machine the wall time includes waiting for a core, the CPU time
much less so.

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
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from differential import find_oracle  # the same search for cuda-tile-opt (this folder is on sys.path)

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


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, str, float, float]:
    """One process: its wall time (s), standard output, wall-clock start time and CPU time (user + system, s).

    Runs in the checkout ``env["PYTHONPATH"]`` names: ``python -c`` and ``-m`` put the working
    directory first on ``sys.path``.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                          cwd=env["PYTHONPATH"])
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1: the file has errors, still a complete run
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, proc.stdout, started, cpu


def _row(what: str, wall: list[float], cpu: list[float] | None = None, anchor: list[float] | None = None) -> tuple:
    return (what, statistics.median(wall), min(wall), statistics.median(cpu) if cpu else None,
            statistics.median(anchor) if anchor else None)


def measure(root: Path, file: Path, runs: int, cold: bool, oracle: str | None) -> list[tuple]:
    """Rows ``(what, median_s, min_s, median_cpu_s or None, anchor_median_s or None)``: the figures
    described in the module doc."""
    env = dict(os.environ, PYTHONPATH=str(root))
    py = sys.executable
    check = [py, "-m", "tile_lsp.cli", "--check", "--no-cache", str(file)]
    ptx = [py, "-m", "tile_lsp.cli", "ptx", str(file)]

    _run(check, env)  # warm everything once (the stored table, the OS's file cache)

    names = ("interp", "interp_cpu", "imports_in", "imports_whole", "imports_cpu", "ready_in", "ready_whole",
             "first_parse", "whole", "whole_cpu", "anchor", "ptx", "ptx_cpu")
    m: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(runs):  # interleaved, so that a burst of load on the machine hits every figure alike
        t, _, _, cpu = _run([py, "-c", "pass"], env)
        m["interp"].append(t)
        m["interp_cpu"].append(cpu)
        t, out, _, cpu = _run([py, "-c", _IMPORT_CLI], env)
        m["imports_whole"].append(t)
        m["imports_cpu"].append(cpu)
        m["imports_in"].append(float(out.split()[0]))
        _, out, started, _ = _run([py, "-c", _PARSER.format(file=str(file))], env)
        ready, load, parse = map(float, out.split())
        m["ready_whole"].append(ready - started)
        m["ready_in"].append(load)
        m["first_parse"].append(parse)
        t, _, _, cpu = _run(check, env)
        m["whole"].append(t)
        m["whole_cpu"].append(cpu)
        if oracle:
            m["anchor"].append(_run([oracle, "-allow-unregistered-dialect", str(file), "-o", os.devnull], env)[0])
        t, _, _, cpu = _run(ptx, env)
        m["ptx"].append(t)
        m["ptx_cpu"].append(cpu)

    rows = [
        _row("python -c pass (interpreter start)", m["interp"], m["interp_cpu"]),
        _row("import tile_lsp.cli, in process", m["imports_in"]),
        _row("import tile_lsp.cli, whole process", m["imports_whole"], m["imports_cpu"]),
        _row("parser ready (warm cache), in process", m["ready_in"]),
        _row("parser ready (warm cache), from process start", m["ready_whole"]),
    ]
    if cold:
        with tempfile.TemporaryDirectory() as cache:
            _, out, _, _ = _run([py, "-c", _PARSER.format(file=str(file))], dict(env, XDG_CACHE_HOME=cache))
        rows.append(_row("parser ready (cold: table built), in process", [float(out.split()[1])]))
    rows.append(_row(f"first parse of {file.name} after that", m["first_parse"]))
    rows.append(_row(f"tile-lsp --check {file.name}, whole process", m["whole"], m["whole_cpu"], m["anchor"]))
    rows.append(_row(f"tile-lsp ptx {file.name}, whole process", m["ptx"], m["ptx_cpu"]))
    return rows


def format_table(rows: list[tuple], oracle: str | None) -> str:
    """The rows as a plain-text table (milliseconds); an anchor column when ``oracle`` was run."""
    head = ["what", "median ms", "min ms", "cpu ms"] + (["cuda-tile-opt ms", "ratio"] if oracle else [])
    lines = []
    for what, med, low, cpu, anchor in rows:
        cells = [what, f"{med * 1e3:.1f}", f"{low * 1e3:.1f}", f"{cpu * 1e3:.0f}" if cpu is not None else ""]
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
