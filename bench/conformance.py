"""Conformance table: tile-lsp against NVIDIA's cuda_tile dialect tests.

For every ``*_invalid.mlir`` and ``invalid.mlir`` of
``../shared/corpus/conformance/Dialect/CudaTile`` this prints, per file:

- ``verify``: chunks passing ``tile-lsp --check --split-input-file
  --verify-diagnostics --tile-version 13.3`` (MLIR's -verify-diagnostics
  semantics; the tests are those of the 13.3 release).  Files that
  NVIDIA checks with FileCheck instead of annotations (``debuginfo_*``) have
  no annotations, so this column counts chunks with no diagnostic at all.
- ``exact``: chunks whose diagnostics equal, line, column, severity and full
  message, what NVIDIA's ``cuda-tile-opt`` printed (``../shared/corpus/oracle``).

Usage: ``python bench/conformance.py [--corpus DIR] [--files NAME...]``.
Prints the table and a total line; exit status 0.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tile_lsp.analysis.api import AnalysisOptions, analyze_text  # noqa: E402
from tile_lsp.analysis.diagnostics import SourceText  # noqa: E402
from tile_lsp.analysis.verify_diagnostics import verify  # noqa: E402

_ORACLE_LINE = re.compile(r"^(\d+):(\d+): (error|warning|note|remark): (.*)$")


def oracle_diagnostics(path: Path) -> list[tuple[int, int, str, str]]:
    """``(line, col, severity, message)`` of an oracle ``*.diagnostics.txt`` (1-based)."""
    out = []
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _ORACLE_LINE.match(line)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)))
    return out


def measure(path: Path, oracle_dir: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    source = SourceText(text)
    # NVIDIA's dialect tests are those of the 13.3 release: verify as 13.3 does
    analysis = analyze_text(text, AnalysisOptions(split_input_file=True, mlir_compat=True, tile_version="13.3"))
    oracle = oracle_diagnostics(oracle_dir / (path.stem + ".diagnostics.txt"))
    verify_ok = exact_ok = 0
    for ca in analysis.chunks:
        chunk = ca.chunk
        if not verify(chunk.text, ca.diagnostics, line_offset=chunk.start_line):
            verify_ok += 1
        first = chunk.start_line + 1
        last = chunk.start_line + chunk.text.count("\n") + 1
        expected = sorted(d for d in oracle if first <= d[0] <= last)
        ours = []
        for d in ca.diagnostics:
            entries = [(d.range, d.severity.value, d.message)] + [(n.range, "note", n.message) for n in d.notes]
            for rng, sev, msg in entries:
                if rng is None:
                    continue
                ours.append((rng.start.line + 1, source.cli_column(rng.start), sev, msg))
        if sorted(ours) == expected:
            exact_ok += 1
    return {"chunks": len(analysis.chunks), "verify": verify_ok, "exact": exact_ok}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--files", nargs="*", help="only these file names")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus)
    tests = corpus / "conformance" / "Dialect" / "CudaTile"
    oracle = corpus / "oracle" / "Dialect" / "CudaTile"
    if not tests.is_dir():
        print(f"corpus not found: {tests}", file=sys.stderr)
        return 2
    files = sorted(p for p in tests.glob("*.mlir") if p.name.endswith("_invalid.mlir") or p.name == "invalid.mlir")
    if args.files:
        files = [p for p in files if p.name in args.files]
    print(f"{'file':40} {'chunks':>6} {'verify':>14} {'exact':>14}")
    tv = te = tc = 0
    start = time.perf_counter()
    for p in files:
        r = measure(p, oracle)
        tc += r["chunks"]
        tv += r["verify"]
        te += r["exact"]
        n = r["chunks"]
        print(f"{p.name:40} {n:6d} {r['verify']:6d} ({100 * r['verify'] / n:5.1f}%) "
              f"{r['exact']:6d} ({100 * r['exact'] / n:5.1f}%)")
    print(f"{'total':40} {tc:6d} {tv:6d} ({100 * tv / max(tc, 1):5.1f}%) {te:6d} ({100 * te / max(tc, 1):5.1f}%)")
    print(f"time: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
