"""Completion (tile_lsp.analysis.ide.completion): the candidates by context, cursor marked by '|'."""

from __future__ import annotations

from pathlib import Path

from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.ide.completion import ELEMENT_TYPES, TYPE_CONSTRUCTORS, completions
from tile_lsp.analysis.ir.diagnostics import Position, Range

BASE = (
    "cuda_tile.module @m {\n"
    "  cuda_tile.global @g <i32: [42]> : !cuda_tile.tile<1xi32>\n"
    "  cuda_tile.entry @e(%a: !cuda_tile.tile<i32>) {\n"
    "    %x = cuda_tile.addi %a, %a : !cuda_tile.tile<i32>\n"
    "    %c = cmpi equal %x, %a, signed : tile<i32> -> tile<i1>\n"
    "    LINE\n"
    "    cuda_tile.return\n"
    "  }\n"
    "}\n"
)


def _complete(line: str):
    """Completions at '|' of ``line`` put in BASE.

    As in the editor, the IR is the analysis of the text before the line was
    typed (an empty line there) and the context is read from the current text.
    """
    text = BASE.replace("LINE", line.replace("|", ""))
    row = 5
    col = 4 + line.index("|")
    return completions(analyze_text(BASE.replace("LINE", "")), Position(row, col), text=text)


def _labels(items) -> list[str]:
    return [i.label for i in items]


def test_values_in_scope_with_types() -> None:
    items = _complete("%y = addi %|")
    assert _labels(items) == ["%c", "%x", "%a"]
    assert [i.detail for i in items] == ["tile<i1>", "tile<i32>", "tile<i32>"]
    assert items[0].replace == Range(Position(5, 14), Position(5, 15))


def test_value_defined_later_is_not_in_scope() -> None:
    text = BASE.replace("LINE", "%y = addi %x, %x : tile<i32>")
    a = analyze_text(text)
    # on line 3 (%x's own op) only %a is visible; on line 5, %x and %c too
    assert _labels(completions(a, Position(3, 25))) == ["%a"]
    assert _labels(completions(a, Position(5, 15))) == ["%c", "%x", "%a"]


def test_symbols_after_at() -> None:
    assert _labels(_complete("%y = get_global @|")) == ["@e", "@g", "@m"]


def test_op_names_with_and_without_prefix() -> None:
    items = _complete("|")
    labels = _labels(items)
    assert "cuda_tile.addi" in labels and "addi" in labels
    assert "cuda_tile.get_tile_block_id" in labels and "get_tile_block_id" in labels
    after_eq = _labels(_complete("%y = ad|"))
    assert "addf" in after_eq and "cuda_tile.addf" in after_eq
    assert next(i for i in items if i.label == "addi").replace == Range(Position(5, 4), Position(5, 4))


def test_enum_after_keyword_angle() -> None:
    """After ``rounding<`` the modes the op's rounding directive accepts (NVIDIA's parser rejects
    the others: ``addf`` takes the four IEEE modes, ``tanh`` approx and full)."""
    items = _complete("%y = addf %x, %x rounding<|")
    assert _labels(items) == ["nearest_even", "zero", "negative_inf", "positive_inf"]
    assert items[1].kind == "enum"
    assert _labels(_complete("%y = tanh %x rounding<|")) == ["approx", "full"]
    assert _labels(_complete("%y = divf %x, %x rounding<|")) == [
        "nearest_even", "zero", "negative_inf", "positive_inf", "approx", "full"]
    # no op on the line: every case of the enum the keyword spells
    assert len(_labels(_complete("rounding<|"))) == 7


def test_bare_enum_after_op_name() -> None:
    labels = _labels(_complete("%y = cmpi |"))
    assert labels[:6] == ["equal", "not_equal", "less_than", "less_than_or_equal", "greater_than",
                          "greater_than_or_equal"]
    assert "signed" in labels
    # a rounding mode is written after `rounding<`, never bare
    assert "nearest_even" not in _labels(_complete("%y = addf |"))


def test_types_after_colon_and_element_types() -> None:
    items = _complete("%y = addi %x, %x : |")
    assert _labels(items)[:len(TYPE_CONSTRUCTORS)] == list(TYPE_CONSTRUCTORS)
    assert "tile<i32>" in _labels(items) and "tile<i1>" in _labels(items)
    assert _labels(_complete("%y = addi %x, %x : tile<|")) == list(ELEMENT_TYPES)
    assert _labels(_complete("%y = addi %x, %x : tile<4x|")) == list(ELEMENT_TYPES)


def test_nothing_in_comments() -> None:
    assert _complete("// %|") == []


def test_corpus_kernel_values(corpus: Path) -> None:
    path = sorted((corpus / "kernels").glob("*.sm_100.mlir"))[0]
    text = path.read_text()
    a = analyze_text(text)
    entry = a.chunks[0].module.body.operations[0]
    last = entry.regions[0].blocks[0].operations[-1]
    pos = last.range.start
    lines = text.split("\n")
    lines[pos.line] = lines[pos.line][:pos.character] + "%" + lines[pos.line][pos.character:]
    items = completions(a, Position(pos.line, pos.character + 1), text="\n".join(lines))
    expected = list(entry.regions[0].blocks[0].arguments)
    for op in entry.regions[0].blocks[0].operations[:-1]:
        expected.extend(op.results)
    assert _labels(items) == [v.name for v in reversed(expected)]
