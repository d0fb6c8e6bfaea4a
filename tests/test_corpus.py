"""NVIDIA's corpus: real kernels check clean, valid texts parse, the dialect tests pass."""

from __future__ import annotations

import sys

import pytest

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Severity
from tile_lsp.conformance import invalid_test_files, score_file

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


def test_conformance_files_pass_at_least_half_of_their_chunks(corpus, capsys):
    """verify-diagnostics for annotated tests; exact agreement with the oracle for FileCheck tests."""
    oracle = corpus / "oracle" / "Dialect" / "CudaTile"
    scores = [score_file(p, oracle) for p in invalid_test_files(corpus)]
    with capsys.disabled():
        sys.stdout.write("\nconformance per file (verify = -verify-diagnostics, exact = oracle text):\n")
        for s in scores:
            kind = "verify" if s.uses_annotations else "exact "
            sys.stdout.write(f"  {s.name:40} {kind} {s.primary:4d}/{s.chunks:<4d} "
                             f"{100 * s.primary / s.chunks:5.1f}%  (exact {s.exact}/{s.chunks})\n")
    below = [(s.name, s.primary, s.chunks) for s in scores if 2 * s.primary < s.chunks]
    assert below == []
