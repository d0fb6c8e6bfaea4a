"""Unit tests of the position index (tile_lsp/analysis/ide/index.py) and hovers (hover.py)."""

from __future__ import annotations

import pytest

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Position, Range
from tile_lsp.analysis.ide.hover import hover_markdown, tile_size_bytes
from tile_lsp.analysis.ide.index import DocumentIndex, HighlightKind, RenameError
from tile_lsp.dialect import types as T

TEXT = (
    "!t = !cuda_tile.tile<i32>\n"                                            # 0
    '#a = #cuda_tile.di_file<"x" in "y">\n'                                  # 1
    "cuda_tile.module @m {\n"                                                # 2
    "  global @g <i32: [1, 2]> : tile<2xi32>\n"                              # 3
    "  entry @e(%arg0: tile<i32>) {\n"                                       # 4
    "    %0 = get_global @g : tile<ptr<i32>>\n"                              # 5
    "    %1:2 = load_ptr_tko weak %0 : tile<ptr<i32>> -> tile<i32>, token\n"  # 6
    "    %2 = addi %1#0, %arg0 : !t\n"                                       # 7
    "    return\n"                                                           # 8
    "  } loc(#a)\n"                                                          # 9
    "}\n"
)

# The first op has a syntax error (missing comma); the later ops still parse.
BROKEN = (
    "cuda_tile.module @m {\n"
    "  entry @e(%a: tile<i32>) {\n"
    "    %0 = addi %a %a : tile<i32>\n"
    "    %1 = addi %a, %a : tile<i32>\n"
    "    %2 = muli %1, %1 : tile<i32>\n"
    "    return\n"
    "  }\n"
    "}\n"
)

SPLIT = (
    "// one\n"
    "// two\n"
    "cuda_tile.module @m {\n"
    "  entry @e() {\n"
    "    return\n"
    "  }\n"
    "}\n"
    "// -----\n"
    "cuda_tile.module @m {\n"
    "  entry @e() {\n"
    "    return\n"
    "  }\n"
    "}\n"
)


def R(line: int, c1: int, c2: int, line2: int | None = None) -> Range:
    return Range(Position(line, c1), Position(line if line2 is None else line2, c2))


def P(line: int, c: int) -> Position:
    return Position(line, c)


@pytest.fixture(scope="module")
def index() -> DocumentIndex:
    analysis = analyze_text(TEXT)
    assert analysis.diagnostics == []
    return DocumentIndex(analysis)


# -- definition / references / highlights -------------------------------------------


def test_definition_of_value_use(index):
    assert index.definition(P(6, 30)) == [R(5, 4, 6)]        # %0 used by load_ptr_tko


def test_result_group_use_goes_to_group_definition(index):
    assert index.definition(P(7, 15)) == [R(6, 4, 6)]        # %1#0 -> %1:2
    assert index.references(P(6, 5)) == [R(6, 4, 6), R(7, 14, 18)]


def test_block_argument_references(index):
    assert index.references(P(7, 22)) == [R(4, 11, 16), R(7, 20, 25)]
    assert index.references(P(4, 12), include_declaration=False) == [R(7, 20, 25)]


def test_cursor_just_after_a_name_is_on_it(index):
    assert index.definition(P(5, 6)) == [R(5, 4, 6)]


def test_symbol_definition_and_use(index):
    assert index.definition(P(5, 21)) == [R(3, 9, 11)]       # get_global @g -> global @g
    assert index.references(P(3, 10)) == [R(3, 9, 11), R(5, 20, 22)]


def test_aliases_definition_and_use(index):
    assert index.definition(P(7, 29)) == [R(0, 0, 2)]        # !t
    assert index.references(P(0, 1)) == [R(0, 0, 2), R(7, 28, 30)]
    assert index.references(P(9, 9)) == [R(1, 0, 2), R(9, 8, 10)]  # loc(#a)


def test_op_name_has_no_definition(index):
    assert index.definition(P(7, 10)) == []
    assert index.references(P(7, 10)) == [R(7, 9, 13)]


def test_highlights_read_and_write(index):
    hs = index.highlights(P(6, 4))
    assert [(h.range, h.kind) for h in hs] == [
        (R(6, 4, 6), HighlightKind.WRITE), (R(7, 14, 18), HighlightKind.READ)]


def test_nothing_under_whitespace(index):
    assert index.entity_at(P(8, 1)) is None
    assert index.definition(P(8, 1)) == []
    assert hover_markdown(index, P(8, 1)) is None


# -- rename ------------------------------------------------------------------------------


def test_rename_result_group_edits_only_the_base_name(index):
    edits = index.rename(P(7, 15), "v")
    assert [(e.range, e.new_text) for e in edits] == [(R(6, 4, 6), "%v"), (R(7, 14, 16), "%v")]


def test_rename_symbol_and_alias(index):
    assert [(e.range, e.new_text) for e in index.rename(P(5, 21), "@table")] == [
        (R(3, 9, 11), "@table"), (R(5, 20, 22), "@table")]
    assert [(e.range, e.new_text) for e in index.rename(P(0, 0), "!i32t")] == [
        (R(0, 0, 2), "!i32t"), (R(7, 28, 30), "!i32t")]


def test_prepare_rename(index):
    prep = index.prepare_rename(P(7, 17))
    assert (prep.range, prep.placeholder) == (R(7, 14, 16), "%1")
    with pytest.raises(RenameError, match="operation names cannot be renamed"):
        index.prepare_rename(P(7, 10))
    with pytest.raises(RenameError, match="nothing to rename"):
        index.prepare_rename(P(6, 25))                       # the keyword `weak`
    with pytest.raises(RenameError, match="nothing to rename"):
        index.prepare_rename(P(5, 28))                       # a type


@pytest.mark.parametrize("new_name", ["%a b", "%", "@1x", "^", "%x#1"])
def test_rename_rejects_invalid_names(index, new_name):
    with pytest.raises(RenameError, match="is not a valid"):
        index.rename(P(5, 4) if new_name.startswith("%") else P(3, 10), new_name)


def test_rename_rejects_a_name_already_defined(index):
    with pytest.raises(RenameError, match="already defined here \\(line 7\\)"):
        index.rename(P(5, 4), "%1")
    with pytest.raises(RenameError, match="already defined"):
        index.rename(P(3, 10), "@e")


# -- hover ----------------------------------------------------------------------------------


def test_hover_value(index):
    text = hover_markdown(index, P(5, 5))
    assert text == ("`%0` : `tile<ptr<i32>>`\n\n1 element of `ptr<i32>`, 8 bytes (8 bytes per element)\n\n"
                    "result #0 (`result`) of `cuda_tile.get_global` (line 6)\n\n1 use")


def test_hover_result_group_use_shows_that_result(index):
    text = hover_markdown(index, P(7, 15))
    assert text.startswith("`%1#0` : `tile<i32>`\n\n1 element of `i32`, 4 bytes")
    assert "result #0" in text and "cuda_tile.load_ptr_tko" in text


def test_hover_op_lists_operands_results_attributes(index):
    text = hover_markdown(index, P(6, 15))
    assert "cuda_tile.load_ptr_tko" in text
    assert "`%0` : `tile<ptr<i32>>`" in text
    assert "`%1#1` : `token`" in text
    assert "`memory_ordering_semantics` = `weak (MemoryOrderingSemantics)`" in text


def test_hover_symbol_and_alias_and_type(index):
    assert hover_markdown(index, P(5, 21)).startswith("global `@g` : `tile<2xi32>`\n\n`tile<2xi32>`\n\n2 elements of `i32`, 8 bytes")
    assert hover_markdown(index, P(4, 9)).startswith("entry `@e` : `(tile<i32>) -> ()`")
    assert hover_markdown(index, P(0, 1)).startswith("type alias `!t` = `tile<i32>`")
    assert hover_markdown(index, P(3, 32)) == "`tile<2xi32>`\n\n2 elements of `i32`, 8 bytes (4 bytes per element)"


def test_tile_size_counts_i1_as_a_byte():
    assert tile_size_bytes(T.TileType((4, 8), T.IntegerType(1))) == 32
    assert tile_size_bytes(T.TileType((128,), T.FloatType("f16"))) == 256


# -- outline, folding -------------------------------------------------------------------------


def test_document_symbols(index):
    (module,) = index.document_symbols()
    assert (module.name, module.kind, module.selection_range) == ("@m", "module", R(2, 17, 19))
    assert [(c.name, c.kind, c.detail) for c in module.children] == [
        ("@g", "variable", "global tile<2xi32>"), ("@e", "function", "entry (tile<i32>) -> ()")]


def test_folding_ranges(index):
    assert [(f.start_line, f.end_line, f.kind) for f in index.folding_ranges()] == [
        (2, 9, "region"), (4, 8, "region")]


def test_split_file_chunks_are_separate_scopes():
    index = DocumentIndex(analyze_text(SPLIT, AnalysisOptions(split_input_file=True)))
    assert index.references(P(2, 18)) == [R(2, 17, 19)]
    assert [(s.name, s.kind, s.range) for s in index.document_symbols()] == [
        ("chunk 1", "namespace", R(0, 0, 1, 6)), ("chunk 2", "namespace", R(8, 0, 1, 12))]
    assert [(f.start_line, f.end_line, f.kind) for f in index.folding_ranges()] == [
        (0, 1, "comment"), (0, 6, "region"), (2, 5, "region"), (3, 4, "region"),
        (8, 11, "region"), (8, 12, "region"), (9, 10, "region")]


# -- syntax errors ----------------------------------------------------------------------------------


def test_features_work_after_a_syntax_error_in_the_first_op():
    analysis = analyze_text(BROKEN)
    assert [d.range for d in analysis.diagnostics] == [R(2, 16, 16)]
    index = DocumentIndex(analysis)
    assert index.definition(P(4, 15)) == [R(3, 4, 6)]
    assert index.references(P(1, 11)) == [R(1, 11, 13), R(3, 14, 16), R(3, 18, 20)]
    assert [(e.range, e.new_text) for e in index.rename(P(3, 5), "%sum")] == [
        (R(3, 4, 6), "%sum"), (R(4, 14, 16), "%sum"), (R(4, 18, 20), "%sum")]
    assert hover_markdown(index, P(4, 5)).endswith("0 uses")
    assert "cuda_tile.muli" in hover_markdown(index, P(4, 10))


def test_selection_ranges_grow_from_the_name_to_the_chunk():
    text = """\
cuda_tile.module @m {
  testing$func @k(%a: tile<i32>) {
    %0 = addi %a, %a : tile<i32>
    return
  }
}
"""
    from tile_lsp.analysis.api import analyze_text
    from tile_lsp.analysis.ir.diagnostics import Position
    from tile_lsp.analysis.ide.index import DocumentIndex

    index = DocumentIndex(analyze_text(text))
    ranges = index.selection_ranges(Position(2, 16))  # on the first %a use
    spans = [(r.start.line, r.start.character, r.end.line, r.end.character) for r in ranges]
    assert spans[0] == (2, 14, 2, 16)  # %a
    assert spans[1] == (2, 4, 2, 32)  # the addi op
    assert spans[-1][0] == 0  # the whole chunk
    for inner, outer in zip(ranges, ranges[1:]):
        assert outer.start <= inner.start and inner.end <= outer.end and inner != outer


# -- the builder's spans: aliases and types the IR keeps no range for ---------------------

DI_TEXT = (
    '#file = #cuda_tile.di_file<"k.py" in "/src/">\n'                                          # 0
    '#cu = #cuda_tile.di_compile_unit<file = #file>\n'                                          # 1
    "// #file and #cu in a comment are not uses\n"                                              # 2
    "cuda_tile.module @m {\n"                                                                   # 3
    '  entry @e(%p: !cuda_tile.tile<!cuda_tile.ptr<f32>>) {\n'                                  # 4
    "    // CHECK: addf %x, %y : tile<f32>\n"                                                   # 5
    "    return loc(#cu)\n"                                                                     # 6
    "  }\n"
    "}\n"
)


def test_alias_uses_inside_debug_info_bodies_and_locations():
    index = DocumentIndex(analyze_text(DI_TEXT))
    assert index.references(P(0, 2)) == [R(0, 0, 5), R(1, 40, 45)]   # #file in the di_compile_unit body
    assert index.references(P(6, 16)) == [R(1, 0, 3), R(6, 15, 18)]  # loc(#cu); the comment is not a use
    assert index.definition(P(1, 42)) == [R(0, 0, 5)]


def test_type_hover_reads_the_types_as_parsed_not_the_line():
    index = DocumentIndex(analyze_text(DI_TEXT))
    # a tile of pointers written with both dialect prefixes
    assert hover_markdown(index, P(4, 20)).startswith("`tile<ptr<f32>>`")
    # a type in a comment inside the op is nothing
    assert hover_markdown(index, P(5, 35)) is None


MOVED = (
    "!t = !cuda_tile.tile<i32>\n"        # 0
    '#a = loc("k.py":1:2)\n'              # 1
    "cuda_tile.module @m {\n"             # 2
    "  entry @e() {\n"                    # 3
    "    return\n"                        # 4
    "  }\n"                               # 5
    "  entry @f(%x: !t) {\n"              # 6
    "    %0 = addi %x, %x : !t\n"         # 7
    "    return loc(#a)\n"                # 8
    "  }\n"
    "}\n"
)


def test_alias_spans_move_with_a_reused_unit():
    from tile_lsp.analysis.incremental.document import IncrementalAnalyzer

    inc = IncrementalAnalyzer()
    inc.analyze(MOVED)
    moved = inc.analyze(MOVED.replace("    return\n", "    return\n\n", 1))  # @f moves down a line
    assert inc.last_stats[0] >= 1  # @f is reused, not rebuilt
    index = DocumentIndex(moved)
    assert index.references(P(0, 1)) == [R(0, 0, 2), R(7, 15, 17), R(8, 23, 25)]
    assert index.references(P(1, 1)) == [R(1, 0, 2), R(9, 15, 17)]
    assert hover_markdown(index, P(8, 24)).startswith("type alias `!t`")


def test_successors_are_references_of_their_block():
    """A successor list names blocks of its region (``Operation.successors`` point at them); the label's
    references include those uses, and renaming the label renames them."""
    text = ('"cuda_tile.module"() <{sym_name = "m"}> ({\n'
            '  "cuda_tile.entry"() <{function_type = () -> (), sym_name = "k"}> ({\n'
            '    "cuda_tile.return"()[^bb1] : () -> ()\n'
            '  ^bb1:\n'
            '    "cuda_tile.return"()[^bb1] : () -> ()\n'
            '  }) : () -> ()\n'
            '}) : () -> ()\n')
    analysis = analyze_text(text)
    entry = analysis.chunks[0].module.body.operations[0].regions[0].blocks[0].operations[0]
    region = entry.regions[0]
    assert [op.successors[0] is region.blocks[1] for b in region.blocks for op in b.operations] == [True, True]
    index = DocumentIndex(analysis)
    uses = [R(2, 25, 29), R(3, 2, 6), R(4, 25, 29)]
    assert sorted((r.start.line, r.start.character) for r in index.references(P(2, 26), True)) == \
        [(r.start.line, r.start.character) for r in uses]
    assert sorted((e.range.start.line, e.range.start.character, e.new_text) for e in index.rename(P(3, 3), "^exit")) \
        == [(r.start.line, r.start.character, "^exit") for r in uses]
