"""Semantic tokens (tile_lsp.analysis.ide.semantic_tokens): classification, legend, encoding."""

from __future__ import annotations

from pathlib import Path

from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.ide.semantic_tokens import TOKEN_MODIFIERS, TOKEN_TYPES, encode, semantic_tokens

TEXT = (
    "// hi\n"
    "cuda_tile.module @m {\n"
    "  cuda_tile.entry @e(%a: !cuda_tile.tile<i32>) {\n"
    "    %x = cuda_tile.addi %a, %a overflow<no_wrap> : !cuda_tile.tile<i32>\n"
    "    %c = constant <f32: 1.5> : tile<4x8xf32>\n"
    '    %y = "cuda_tile.addi"(%x, %x) {k = "s"} : (tile<i32>, tile<i32>) -> tile<i32>\n'
    "    cuda_tile.return\n"
    "  }\n"
    "}\n"
)


def _table(text: str) -> list[tuple[int, str, str, set[str]]]:
    lines = text.split("\n")
    return [(t.line, lines[t.line][t.start:t.start + t.length], t.type, set(t.modifiers))
            for t in semantic_tokens(analyze_text(text))]


def test_classification() -> None:
    got = _table(TEXT)
    assert got[:9] == [
        (0, "// hi", "comment", set()),
        (1, "cuda_tile.", "namespace", set()),
        (1, "module", "function", set()),
        (1, "@m", "decorator", {"declaration"}),
        (2, "cuda_tile.", "namespace", set()),
        (2, "entry", "function", set()),
        (2, "@e", "decorator", {"declaration"}),
        (2, "%a", "parameter", {"declaration"}),
        (2, "!cuda_tile.tile", "type", set()),
    ]
    line3 = [t for t in got if t[0] == 3]
    assert line3 == [
        (3, "%x", "variable", {"declaration"}),
        (3, "cuda_tile.", "namespace", set()),
        (3, "addi", "function", set()),
        (3, "%a", "parameter", set()),
        (3, "%a", "parameter", set()),
        (3, "overflow", "keyword", set()),
        (3, "no_wrap", "enumMember", set()),
        (3, "!cuda_tile.tile", "type", set()),
        (3, "i32", "type", set()),
    ]
    line4 = [t[1:3] for t in got if t[0] == 4]
    assert line4 == [("%c", "variable"), ("constant", "function"), ("f32", "type"), ("1.5", "number"),
                     ("tile", "type"), ("4", "number"), ("8", "number"), ("f32", "type")]
    line5 = [t[1:3] for t in got if t[0] == 5][:8]
    assert line5 == [("%y", "variable"), ('"', "string"), ("cuda_tile.", "namespace"), ("addi", "function"),
                     ('"', "string"), ("%x", "variable"), ("%x", "variable"), ("k", "property")]
    assert (5, '"s"', "string", set()) in got


def test_tokens_sorted_and_legend_complete() -> None:
    tokens = semantic_tokens(analyze_text(TEXT))
    keys = [(t.line, t.start) for t in tokens]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert {t.type for t in tokens} <= set(TOKEN_TYPES)
    assert all(m in TOKEN_MODIFIERS for t in tokens for m in t.modifiers)


def test_encode_relative() -> None:
    tokens = semantic_tokens(analyze_text("// a\ncuda_tile.module @m {\n}\n"))
    assert encode(tokens) == [
        0, 0, 4, TOKEN_TYPES.index("comment"), 0,
        1, 0, 10, TOKEN_TYPES.index("namespace"), 0,
        0, 10, 6, TOKEN_TYPES.index("function"), 0,
        0, 7, 2, TOKEN_TYPES.index("decorator"), 1,
    ]


def test_partial_ir_still_tokenized() -> None:
    got = _table("cuda_tile.module @m {\n  %x = cuda_tile.addi %a,, \n}\n")
    assert (1, "%x", "variable", set()) in got or (1, "%x", "variable", {"declaration"}) in got
    assert any(t[1] == "%a" for t in got)


def test_corpus_kernel_tokens_cover_every_op_name(corpus: Path) -> None:
    path = sorted((corpus / "kernels").glob("*.sm_100.mlir"))[0]
    text = path.read_text()
    a = analyze_text(text)
    tokens = semantic_tokens(a)
    starts = {(t.line, t.start): t for t in tokens}
    ops = [op for op in a.chunks[0].module.walk() if op.name_range is not None]
    assert ops
    for op in ops:
        tok = starts[(op.name_range.start.line, op.name_range.start.character)]
        assert tok.type in ("function", "namespace")
