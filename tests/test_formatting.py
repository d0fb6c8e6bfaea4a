"""Document and range formatting (tile_lsp.analysis.ide.formatting): canonical print, meaning kept."""

from __future__ import annotations

import re
from pathlib import Path


from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Position, Range
from tile_lsp.analysis.ide.formatting import (
    CHUNK_JOIN, format_document, format_range, format_text, has_comments, refusal_reason,
)
from tile_lsp.analysis.ir.compare import ir_differences
from tile_lsp.analysis.ir.split import has_split_marker

MESSY = (
    "cuda_tile.module @m {\n"
    "cuda_tile.entry @e(%a: !cuda_tile.tile<i32>) {\n"
    "      %x = cuda_tile.addi %a,%a : !cuda_tile.tile<i32>\n"
    "  cuda_tile.return\n"
    "}\n"
    "}\n"
)
FORMATTED = (
    "cuda_tile.module @m {\n"
    "  entry @e(%arg0: tile<i32>) {\n"
    "    %0 = addi %arg0, %arg0 : tile<i32>\n"
    "    return\n"
    "  }\n"
    "}\n"
)


def _analyze(text: str):
    return analyze_text(text, AnalysisOptions(split_input_file=has_split_marker(text)))


def test_format_document_exact() -> None:
    a = _analyze(MESSY)
    edits = format_document(a)
    assert len(edits) == 1
    assert edits[0].range == Range(Position(0, 0), Position(6, 0))
    assert edits[0].new_text == FORMATTED
    assert format_document(_analyze(FORMATTED)) == []  # already formatted: no edits


def test_split_chunks_joined_with_markers() -> None:
    text = MESSY + "// -----\n" + MESSY.replace("@m", "@n")
    out = format_text(_analyze(text))
    assert out == FORMATTED + CHUNK_JOIN + FORMATTED.replace("@m", "@n")
    assert out.count("// -----") == 1
    assert format_text(_analyze(out)) == out


def test_explicit_builtin_module_kept() -> None:
    text = "module {\n" + MESSY + "}\n"
    out = format_text(_analyze(text))
    assert out == "module {\n" + "".join("  " + line + "\n" for line in FORMATTED.splitlines()) + "}\n"


def test_refused_on_syntax_error() -> None:
    text = MESSY.replace("addi %a,%a", "addi %a,,%a")
    a = _analyze(text)
    assert "syntax error" in refusal_reason(a)
    assert format_document(a) == []
    assert format_range(a, Range(Position(0, 0), Position(9, 0))) == []


def test_refused_on_comments_but_not_split_markers() -> None:
    text = "// a comment\n" + MESSY
    assert has_comments(text)
    assert format_document(_analyze(text)) == []
    trailing = MESSY.replace("%a,%a :", "%a,%a : // why\n")
    assert has_comments(trailing) and format_document(_analyze(trailing)) == []
    quoted = 'cuda_tile.module @"a//b" {\n}\n'
    assert not has_comments(quoted)
    assert not has_comments(MESSY + "// -----\n" + MESSY)


def test_refused_on_locations() -> None:
    text = MESSY.replace("cuda_tile.return", 'cuda_tile.return loc("f.py":1:2)')
    assert format_document(_analyze(text)) == []


def test_range_formatting_formats_the_intersecting_top_level_op() -> None:
    second = "cuda_tile.module @n {\n}\n"
    text = MESSY + second
    a = _analyze(text)
    # a range on line 2 (inside @m) formats @m only
    edits = format_range(a, Range(Position(2, 0), Position(2, 3)))
    assert len(edits) == 1
    assert edits[0].range == Range(Position(0, 0), Position(5, 1))
    assert edits[0].new_text == FORMATTED.rstrip("\n")
    # a range on @n: already formatted, nothing to do
    assert format_range(a, Range(Position(6, 0), Position(6, 5))) == []


def _kernels(corpus: Path) -> list[Path]:
    return sorted(p for p in (corpus / "kernels").glob("*.mlir") if not p.name.endswith(".g.mlir"))


def _check_round_trip(text: str) -> int:
    """Format ``text``; assert same IR per chunk and idempotence; the number of chunks checked."""
    a = _analyze(text)
    out = format_text(a)
    assert out is not None, refusal_reason(a)
    b = _analyze(out)
    assert len(a.chunks) == len(b.chunks)
    for i, (x, y) in enumerate(zip(a.chunks, b.chunks)):
        assert ir_differences(x.module, y.module) == [], f"chunk {i}"
    assert format_text(b) == out
    return len(a.chunks)


def test_every_corpus_kernel_keeps_its_ir_and_is_idempotent(corpus: Path) -> None:
    kernels = _kernels(corpus)
    assert kernels
    for path in kernels:
        try:
            _check_round_trip(path.read_text())
        except AssertionError as exc:
            raise AssertionError(f"{path.name}: {exc}") from None


_COMMENT_LINE = re.compile(r"^\s*//(?!\s*-----\s*$).*\n?", re.MULTILINE)
_TRAILING_COMMENT = re.compile(r"\s+//[^\n\"]*$", re.MULTILINE)


def _valid_conformance_chunks(corpus: Path) -> list[tuple[str, int, str]]:
    """``(file, chunk#, text)`` of each conformance chunk without errors, comments stripped."""
    out = []
    for path in sorted((corpus / "conformance").rglob("*.mlir")):
        text = _TRAILING_COMMENT.sub("", _COMMENT_LINE.sub("", path.read_text()))
        a = _analyze(text)
        for i, chunk in enumerate(a.chunks):
            if chunk.module is None or any(d.severity.value == "error" for d in chunk.diagnostics):
                continue
            if has_comments(chunk.chunk.text) or "loc(" in chunk.chunk.text or not chunk.chunk.text.strip():
                continue
            if re.search(r"^\s*[#!][\w$.]+\s*=", chunk.chunk.text, re.MULTILINE):
                continue
            out.append((path.name, i, chunk.chunk.text))
    return out


def test_every_valid_conformance_chunk_keeps_its_ir(corpus: Path) -> None:
    chunks = _valid_conformance_chunks(corpus)
    assert len(chunks) > 30
    failures = []
    for name, i, text in chunks:
        try:
            _check_round_trip(text)
        except AssertionError as exc:
            failures.append(f"{name}#{i}: {str(exc)[:300]}")
    assert failures == []
