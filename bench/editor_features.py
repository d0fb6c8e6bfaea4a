"""Timings of signature help, code actions and semantic-token deltas on a large file.

Builds a file of about ``--lines`` lines (10,000 by default) from NVIDIA's
corpus kernels (``../shared/corpus/kernels/*.mlir`` without debug
locations, entries renamed, inside one ``cuda_tile.module``), analyses it as
the language server does, then times, in process (the analysis functions
the server's handlers call, without the JSON-RPC transport):

* ``signature_help`` at ``--queries`` random places after an op name (its
  operands partly typed, the cursor at the end of a word);
* ``code_actions`` on a line of a random entry where a tile dimension was
  made 3 (a non-power-of-two error): the quick fixes plus the
  ``-verify-diagnostics`` analysis the expected-* actions need, first
  request (cold) and repeated (cached); and on a clean line;
* semantic tokens of the whole file (``semantic_tokens`` + ``encode``) and
  the delta (:func:`tile_lsp.server.editing.token_delta`) after a
  one-character edit, with the size of the delta.

Prints p50/p95/max in milliseconds.  Exits 0 whatever the figures.

Usage: ``python bench/editor_features.py [--lines 10000] [--queries 200] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"


def build_text(lines: int) -> str:
    """About ``lines`` lines of distinct, renamed corpus kernels inside one ``cuda_tile.module``."""
    files = sorted(p for p in (CORPUS / "kernels").glob("*.mlir") if not p.name.endswith(".g.mlir"))
    if not files:
        raise SystemExit(f"no kernels under {CORPUS / 'kernels'}")
    parts, count, n = ["cuda_tile.module @bench {\n"], 1, 0
    while count < lines - 1:
        text = re.sub(r"(entry @[A-Za-z0-9_$.]+)", lambda m, n=n: f"{m.group(1)}_{n}",
                      files[n % len(files)].read_text(encoding="utf-8"))
        body = "".join("  " + line if line.strip() else line for line in text.splitlines(keepends=True))
        parts.append(body)
        count += body.count("\n")
        n += 1
    parts.append("}\n")
    return "".join(parts)


def figures(name: str, samples: list[float]) -> None:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    print(f"{name:<34} n={len(ms):<4} p50={statistics.median(ms):8.2f} ms  p95={p95:8.2f} ms  max={ms[-1]:8.2f} ms")


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> int:
    from tile_lsp.analysis.api import AnalysisOptions, analyze_text
    from tile_lsp.analysis.ide.code_actions import code_actions
    from tile_lsp.analysis.ir.diagnostics import Position, Range
    from tile_lsp.analysis.verify.rules.target import is_mlir_tool_input
    from tile_lsp.analysis.ide.semantic_tokens import encode, semantic_tokens
    from tile_lsp.analysis.ide.signature_help import signature_help
    from tile_lsp.server.editing import token_delta

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)

    text = build_text(args.lines)
    lines = text.split("\n")

    def options(t: str) -> AnalysisOptions:
        return AnalysisOptions(editor_checks=True, mlir_tool_input=is_mlir_tool_input(t))

    print(f"file: {len(lines)} lines, {len(text) / 1e6:.2f} MB")

    # signature help: the cursor after the op name and part of its operands
    op_lines = [(n, m) for n, line in enumerate(lines)
                if (m := re.match(r"\s*(?:%[^=]*=\s*)?[a-z_][a-z0-9_.]*\s", line)) and "=" in line[:m.end()]]
    samples, hits = [], 0
    for n, m in rng.sample(op_lines, min(args.queries, len(op_lines))):
        rest = lines[n][m.end():]
        cut = m.end() + rng.choice([0] + [k.end() for k in re.finditer(r"[%\w]+", rest)][:4])
        elapsed, found = timed(signature_help, text, Position(n, cut))
        samples.append(elapsed)
        hits += found is not None
    figures("signatureHelp", samples)
    print(f"{'':<34} answered {hits}/{len(samples)}")

    # code actions on an error line (a tile dimension made 3) and on a clean line
    candidates = [n for n, line in enumerate(lines) if re.search(r"tile<(?:[0-9]+x)+[a-z]", line)]
    n = rng.choice(candidates)
    broken_lines = list(lines)
    broken_lines[n] = re.sub(r"tile<([0-9]+)x", "tile<3x", lines[n], count=1)
    broken = "\n".join(broken_lines)
    analysis = analyze_text(broken, options(broken))
    errors = [d for d in analysis.diagnostics if d.range is not None and d.range.start.line == n]
    where = Range(Position(n, 0), Position(n, len(broken_lines[n])))
    cold, actions = timed(code_actions, analysis, where)
    warm = [timed(code_actions, analysis, where)[0] for _ in range(10)]
    clean_line = rng.choice([k for k in candidates if k != n])
    clean = [timed(code_actions, analysis, Range(Position(clean_line, 0), Position(clean_line, 10)))[0]
             for _ in range(20)]
    print(f"codeAction on line {n + 1} ({len(errors)} diagnostic(s)): {[a.title for a in actions]}")
    figures("codeAction, error line (first)", [cold])
    figures("codeAction, error line (again)", warm)
    figures("codeAction, clean line", clean)

    # semantic tokens: full, and the delta after a one-character edit
    base = analyze_text(text, options(text))
    full = []
    for _ in range(5):
        elapsed, data = timed(lambda: encode(semantic_tokens(base)))
        full.append(elapsed)
    edited_lines = list(lines)
    k = rng.choice(op_lines)[0]
    edited_lines[k] = edited_lines[k].replace("%", "%x", 1)
    edited = "\n".join(edited_lines)
    new_data = encode(semantic_tokens(analyze_text(edited, options(edited))))
    deltas = [timed(token_delta, data, new_data)[0] for _ in range(20)]
    [edit] = token_delta(data, new_data) or [None]
    figures("semanticTokens/full", full)
    figures("semanticTokens delta (diff only)", deltas)
    if edit is not None:
        print(f"{'':<34} {len(data)} integers; delta replaces {edit.delete_count} with {len(edit.data)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
