"""Scoring tile-lsp against NVIDIA's dialect tests and ``cuda-tile-opt``'s own output.

A conformance file (MLIR ``// RUN:`` test) is scored chunk by chunk
(``// -----``):

- ``verify``: the chunk passes ``-verify-diagnostics`` (its ``expected-*``
  annotations are met, nothing unexpected is reported);
- ``exact``: the chunk's diagnostics equal what ``cuda-tile-opt`` printed for
  it (an oracle ``<file>.diagnostics.txt``: ``LINE:COL: SEVERITY: MESSAGE``
  lines, LINE in the whole file): same line, column, severity and message,
  notes included, in the same order.

Files that NVIDIA checks with FileCheck instead of annotations (their RUN
line has no ``-verify-diagnostics``) have no annotations, so for them only
``exact`` means anything; :attr:`FileScore.uses_annotations` tells which.
The tests are those of the 13.3 release, so they are analysed as Tile IR 13.3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Diagnostic, SourceText
from tile_lsp.analysis.verify.verify_diagnostics import verify

_ORACLE_LINE = re.compile(r"^(\d+):(\d+): (error|warning|note|remark): (.*)$")

#: Tile IR version of NVIDIA's public dialect tests.
CONFORMANCE_TILE_VERSION = "13.3"


@dataclass
class FileScore:
    """Per-file result: number of chunks, chunks passing each measure, and the test's kind."""

    name: str
    chunks: int
    verify: int
    exact: int
    uses_annotations: bool

    @property
    def primary(self) -> int:
        """The measure that counts for this file: ``verify``, or ``exact`` for FileCheck tests."""
        return self.verify if self.uses_annotations else self.exact


def oracle_diagnostics(path: Path) -> list[tuple[int, int, str, str]]:
    """``(line, column, severity, message)`` entries of an oracle file (1-based); ``[]`` if absent."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _ORACLE_LINE.match(line)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)))
    return out


def _cli_entries(source: SourceText, diagnostics: list[Diagnostic]) -> list[tuple[int, int, str, str]]:
    out = []
    for d in diagnostics:
        for rng, sev, msg in [(d.range, d.severity.value, d.message)] + [
                (n.range, n.severity.value, n.message) for n in d.notes]:
            if rng is not None:
                out.append((rng.start.line + 1, source.cli_column(rng.start), sev, msg))
    return out


def score_file(path: Path, oracle_dir: Path | None = None) -> FileScore:
    """Score one conformance file; ``oracle_dir`` holds its ``<stem>.diagnostics.txt``."""
    text = path.read_text(encoding="utf-8")
    source = SourceText(text)
    options = AnalysisOptions(split_input_file=True, mlir_compat=True, tile_version=CONFORMANCE_TILE_VERSION)
    analysis = analyze_text(text, options)
    oracle = oracle_diagnostics(oracle_dir / (path.stem + ".diagnostics.txt")) if oracle_dir else []
    run_lines = [line for line in text.splitlines()[:5] if "RUN:" in line]
    uses_annotations = any("-verify-diagnostics" in line for line in run_lines)
    verify_ok = exact_ok = 0
    for ca in analysis.chunks:
        chunk = ca.chunk
        if not verify(chunk.text, ca.diagnostics, line_offset=chunk.start_line):
            verify_ok += 1
        first = chunk.start_line + 1
        last = chunk.start_line + chunk.text.count("\n") + 1
        expected = [d for d in oracle if first <= d[0] <= last]  # in the order the tool printed them
        if _cli_entries(source, ca.diagnostics) == expected:
            exact_ok += 1
    return FileScore(path.name, len(analysis.chunks), verify_ok, exact_ok, uses_annotations)


def cli_exact(path: Path, oracle_dir: Path, command: list[str] | None = None) -> tuple[int, int, list[int]]:
    """Chunks of ``path`` whose diagnostics, printed by the CLI as users call it, equal the oracle's.

    Runs ``tile-lsp --check --format json --split-input-file --tile-version
    13.3 FILE`` (``command`` replaces ``tile-lsp``; default: this Python
    with ``-m tile_lsp.cli``) in its default mode, not ``-verify-diagnostics``
    nor MLIR-compat: what an editor or CI user sees.  The JSON objects
    (notes after their diagnostic) are compared, in the order printed, with
    the oracle's lines of each chunk.  Returns ``(chunks, chunks equal,
    0-based indices of the chunks that differ)``.
    """
    import json
    import subprocess
    import sys

    from tile_lsp.analysis.ir.split import split_chunks

    text = path.read_text(encoding="utf-8")
    cmd = (command or [sys.executable, "-m", "tile_lsp.cli"]) + [
        "--check", "--no-cache", "--format", "json", "--split-input-file", "--tile-version", CONFORMANCE_TILE_VERSION,
        str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    printed: list[tuple[int, int, str, str]] = []
    for o in json.loads(proc.stdout):
        if o.get("line") is not None:
            printed.append((o["line"], o["column"], o["severity"], o["message"]))
        for n in o.get("notes") or []:
            if n.get("line") is not None:
                printed.append((n["line"], n["column"], "note", n["message"]))
    oracle = oracle_diagnostics(oracle_dir / (path.stem + ".diagnostics.txt"))
    chunks = split_chunks(text)
    equal, differ = 0, []
    for k, chunk in enumerate(chunks):
        first = chunk.start_line + 1
        last = chunk.start_line + chunk.text.count("\n") + 1
        ours = [d for d in printed if first <= d[0] <= last]
        if ours == [d for d in oracle if first <= d[0] <= last]:
            equal += 1
        else:
            differ.append(k)
    return len(chunks), equal, differ


def invalid_test_files(corpus: Path) -> list[Path]:
    """The ``*_invalid.mlir`` and ``invalid.mlir`` tests of ``corpus/conformance/Dialect/CudaTile``."""
    tests = corpus / "conformance" / "Dialect" / "CudaTile"
    return sorted(p for p in tests.glob("*.mlir") if p.name.endswith("_invalid.mlir") or p.name == "invalid.mlir")
