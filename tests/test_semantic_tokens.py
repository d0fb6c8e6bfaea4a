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


# A statement that does not parse (line 6: `::`) has no IR: its words are classified by spelling.
IR_TEXT = (
    "!t = !cuda_tile.tile<i32>\n"
    '#loc = loc("k.py":1:2)\n'
    "cuda_tile.module @m {\n"
    "  cuda_tile.entry @e(%a: !t) {\n"
    "    %x = addi %a, %a overflow<none> : !t loc(#loc)\n"
    '    %c = "cuda_tile.cmpi"(%x, %a) {comparison_predicate = #cuda_tile.comparison_predicate<less_than>,'
    " signedness = #cuda_tile.signedness<signed>} : (tile<i32>, tile<i32>) -> tile<i1>\n"
    "    %y = addi %x, %a overflow<none> :: tile<i32>\n"
    "    return\n"
    "  }\n"
    "}\n"
)


def test_enum_case_comes_from_the_ir() -> None:
    """``none`` is the IntegerOverflow case where the IR has an EnumAttr there, a type (its spelling)
    where the statement did not parse: a word list alone called both a type."""
    got = _table(IR_TEXT)
    assert (4, "none", "enumMember", set()) in got
    assert (6, "none", "type", set()) in got
    # the rest of the statement without IR is classified lexically too
    assert (6, "addi", "keyword", set()) in got and (6, "%a", "variable", set()) in got
    assert (4, "%a", "parameter", set()) in got


def test_generic_enum_case_from_the_ir() -> None:
    line5 = [t[1:3] for t in _table(IR_TEXT) if t[0] == 5]
    assert line5[:7] == [("%c", "variable"), ('"', "string"), ("cuda_tile.", "namespace"), ("cmpi", "function"),
                         ('"', "string"), ("%x", "variable"), ("%a", "parameter")]
    assert ("comparison_predicate", "property") in line5
    assert ("#cuda_tile.comparison_predicate", "macro") in line5 and ("less_than", "enumMember") in line5
    assert ("#cuda_tile.signedness", "macro") in line5 and ("signed", "enumMember") in line5


def test_aliases_from_the_span_table() -> None:
    """Alias definitions and uses come from the builder's spans; a definition is a declaration."""
    got = _table(IR_TEXT)
    assert got[:3] == [(0, "!t", "type", {"declaration"}), (0, "!cuda_tile.tile", "type", set()),
                       (0, "i32", "type", set())]
    assert (1, "#loc", "macro", {"declaration"}) in got
    assert (3, "!t", "type", set()) in got
    line4 = [t for t in got if t[0] == 4]
    assert line4[-3:] == [(4, "!t", "type", set()), (4, "loc", "keyword", set()), (4, "#loc", "macro", set())]


def test_ranges_that_do_not_fit_the_text_are_scanned() -> None:
    """A range whose text is not what the IR says is there (an edit the IR does not know yet) is
    left to the lexical scan instead of colouring the wrong characters."""
    from tile_lsp.analysis.ir.diagnostics import Position, Range

    analysis = analyze_text(IR_TEXT)
    before = semantic_tokens(analysis)
    for op in analysis.chunks[0].module.walk():
        if op.name_range is not None:
            r = op.name_range
            op.name_range = Range(Position(r.start.line, r.start.character + 1), r.end)
        for attr in op.properties.values():
            if attr.range is not None:
                attr.range = Range(attr.range.start, Position(attr.range.end.line, attr.range.end.character + 1))
        for res in op.results:
            if res.range is not None:
                res.range = Range(Position(res.range.start.line, res.range.start.character + 1), res.range.end)
    after = semantic_tokens(analysis)
    lines = IR_TEXT.split("\n")
    words = {(t.line, lines[t.line][t.start:t.start + t.length]): t.type for t in after}
    assert words[(4, "addi")] == "keyword" and words[(4, "none")] == "type"  # the word lists' guesses
    assert words[(4, "%x")] == "variable" and words[(4, "%a")] == "parameter"
    assert [(t.line, t.start, t.length) for t in after if t.line in (0, 1, 7, 8, 9)] == \
        [(t.line, t.start, t.length) for t in before if t.line in (0, 1, 7, 8, 9)]


def test_unicode_columns_are_utf16() -> None:
    text = (
        "cuda_tile.module @m {\n"
        "  cuda_tile.entry @e(%a: tile<i32>) {\n"
        '    %t = print_tko "é😀 %d", %a : tile<i32> -> token // ü\n'
        "    return\n"
        "  }\n"
        "}\n"
    )
    tokens = [t for t in semantic_tokens(analyze_text(text)) if t.line == 2]
    got = [(t.start, t.length, t.type) for t in tokens]
    s = text.split("\n")[2].find('"')
    # '"é😀 %d"' is 7 code points, 8 UTF-16 units (the emoji is a surrogate pair)
    assert (s, 8, "string") in got
    assert (s + 10, 2, "parameter") in got
    assert got[-1][2] == "comment" and got[-1][1] == 4


def test_same_tokens_with_an_index_and_by_units() -> None:
    """The index argument changes nothing; a text analysed unit by unit (top-level aliases) and the
    incremental analyzer after an edit give the tokens of a fresh analysis."""
    from tile_lsp.analysis.ide.index import DocumentIndex
    from tile_lsp.analysis.incremental.document import IncrementalAnalyzer

    analysis = analyze_text(IR_TEXT)
    assert analysis.chunks[0].units  # the aliases make it a chunk of several units
    assert semantic_tokens(analysis, DocumentIndex(analysis)) == semantic_tokens(analysis)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(IR_TEXT)
    edited = "// one more line\n" + IR_TEXT
    assert semantic_tokens(analyzer.analyze(edited)) == semantic_tokens(analyze_text(edited))
