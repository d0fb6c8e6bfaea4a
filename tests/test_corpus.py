"""NVIDIA's corpus: real kernels check clean, valid texts parse, the dialect tests pass."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.diagnostics import Severity
from tile_lsp.analysis.verify_diagnostics import verify

VALID_CONFORMANCE = [
    "Dialect/CudaTile/ops.mlir", "Dialect/CudaTile/arith.mlir", "Dialect/CudaTile/conversion.mlir",
    "Dialect/CudaTile/memory_consistency_ops.mlir", "Dialect/CudaTile/syntax_omit_dialect_prefix.mlir",
    "Dialect/CudaTile/types.mlir", "Dialect/CudaTile/dense_attr.mlir", "Dialect/CudaTile/debuginfo_attr.mlir",
    "Dialect/CudaTile/opt_hints.mlir", "Dialect/CudaTile/canonicalize.mlir",
    "Transforms/fuse-fma.mlir", "Transforms/loop_split.mlir", "Transforms/synthesize-debuginfo-scopes.mlir",
    "Bytecode/attrsTest.mlir", "Bytecode/constantTest.mlir", "Bytecode/debug_info.mlir",
    "Bytecode/edgeCasesTest.mlir", "Bytecode/emptyModuleTest.mlir", "Bytecode/globalSectionTest.mlir",
    "Bytecode/multidimTensorTest.mlir", "Bytecode/operationsTest.mlir", "Bytecode/optionalFieldsTest.mlir",
    "Bytecode/producerTest.mlir", "Bytecode/versionCompatibilityTest.mlir",
]


def test_every_corpus_kernel_checks_clean(corpus):
    kernels = sorted((corpus / "kernels").glob("*.mlir"))
    assert len(kernels) > 300
    dirty = {}
    for path in kernels:
        diagnostics = analyze_text(path.read_text(encoding="utf-8")).diagnostics
        if diagnostics:
            d = diagnostics[0]
            dirty[path.name] = f"{d.range.start.line + 1}: {d.message}" if d.range else d.message
    assert dirty == {}


@pytest.mark.parametrize("name", VALID_CONFORMANCE)
def test_valid_conformance_text_parses_without_parse_errors(corpus, name):
    text = (corpus / "conformance" / name).read_text(encoding="utf-8")
    analysis = analyze_text(text, AnalysisOptions(split_input_file=True))
    parse_errors = [(d.range.start.line + 1, d.message) for d in analysis.diagnostics
                    if d.severity == Severity.ERROR and (d.code.startswith("parse") or d.code.startswith("structure"))]
    assert parse_errors == []


def _invalid_files(corpus: Path) -> list[Path]:
    tests = corpus / "conformance" / "Dialect" / "CudaTile"
    return sorted(p for p in tests.glob("*.mlir") if p.name.endswith("_invalid.mlir") or p.name == "invalid.mlir")


def test_verify_diagnostics_passes_at_least_half_of_every_invalid_file(corpus, capsys):
    rows = []
    for path in _invalid_files(corpus):
        text = path.read_text(encoding="utf-8")
        analysis = analyze_text(text, AnalysisOptions(split_input_file=True, mlir_compat=True, tile_version="13.3"))
        passed = sum(not verify(c.chunk.text, c.diagnostics, line_offset=c.chunk.start_line) for c in analysis.chunks)
        rows.append((path.name, passed, len(analysis.chunks)))
    with capsys.disabled():
        sys.stdout.write("\nverify-diagnostics pass rate per file:\n")
        for name, passed, total in rows:
            sys.stdout.write(f"  {name:40} {passed:4d}/{total:<4d} {100 * passed / total:5.1f}%\n")
    below = [(n, p, t) for n, p, t in rows if 2 * p < t]
    assert below == []
