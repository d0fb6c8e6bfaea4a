"""Conformance table: tile-lsp against NVIDIA's cuda_tile dialect tests.

For every ``*_invalid.mlir`` and ``invalid.mlir`` of
``../shared/corpus/conformance/Dialect/CudaTile`` this prints, per file, the
chunks passing ``tile-lsp --check --split-input-file --verify-diagnostics
--tile-version 13.3`` (``verify``) and the chunks whose diagnostics equal,
line, column, severity and message, what NVIDIA's ``cuda-tile-opt`` printed
(``exact``, from ``../shared/corpus/oracle``), and (``cli``) the chunks
whose diagnostics, as ``tile-lsp --check --format json --split-input-file
--tile-version 13.3 FILE`` prints them in its default mode (a subprocess per
file, as users call it), equal that oracle output.  For the tests NVIDIA
checks with FileCheck (no annotations; marked ``F``) only ``exact`` and
``cli`` are meaningful.  See :mod:`tile_lsp.conformance`.

Usage: ``python bench/conformance.py [--corpus DIR] [--files NAME...] [--show]``
(``--show``: list the chunks the CLI gets wrong).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tile_lsp.conformance import cli_exact, invalid_test_files, score_file  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--files", nargs="*", help="only these file names")
    ap.add_argument("--show", action="store_true", help="list the chunks the CLI gets wrong")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus)
    if not (corpus / "conformance").is_dir():
        print(f"corpus not found: {corpus}", file=sys.stderr)
        return 2
    oracle = corpus / "oracle" / "Dialect" / "CudaTile"
    files = invalid_test_files(corpus)
    if args.files:
        files = [p for p in files if p.name in args.files]
    print(f"{'file':42} {'chunks':>6} {'verify':>14} {'exact':>14} {'cli':>14}")
    tv = te = tc = tcli = 0
    start = time.perf_counter()
    wrong = []
    for p in files:
        r = score_file(p, oracle)
        _, cli_ok, differ = cli_exact(p, oracle)
        wrong += [f"{p.name}#{k}" for k in differ]
        tc, tv, te, tcli = tc + r.chunks, tv + r.verify, te + r.exact, tcli + cli_ok
        kind = " " if r.uses_annotations else "F"
        print(f"{p.name:40} {kind} {r.chunks:6d} {r.verify:6d} ({100 * r.verify / r.chunks:5.1f}%) "
              f"{r.exact:6d} ({100 * r.exact / r.chunks:5.1f}%) {cli_ok:6d} ({100 * cli_ok / r.chunks:5.1f}%)")
    print(f"{'total':42} {tc:6d} {tv:6d} ({100 * tv / max(tc, 1):5.1f}%) {te:6d} ({100 * te / max(tc, 1):5.1f}%) "
          f"{tcli:6d} ({100 * tcli / max(tc, 1):5.1f}%)")
    if args.show and wrong:
        print("chunks the CLI gets wrong: " + " ".join(wrong))
    print("F: checked by NVIDIA with FileCheck, not annotations: only 'exact' is meaningful")
    print(f"time: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
