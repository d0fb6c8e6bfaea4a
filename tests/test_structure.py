"""Structural rules: SSA names, types of uses, dominance, terminators, symbols, recovery."""

from __future__ import annotations

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Position, Range, Severity


def diags(text: str, **kw):
    return analyze_text(text, AnalysisOptions(**kw)).diagnostics


def wrap(body: str, args: str = "%a: tile<i32>") -> str:
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return f"cuda_tile.module @m {{\n  testing$func @k({args}) {{\n{lines}\n    return\n  }}\n}}\n"


def test_undeclared_value_is_reported_at_the_use():
    (d,) = diags(wrap("%0 = addi %a, %nope : tile<i32>"))
    assert d.message == "use of undeclared SSA value name"
    assert d.range == Range(Position(2, 18), Position(2, 23))
    assert d.code == "structure.undefined-value"


def test_use_with_a_different_type_names_both_types_and_points_at_the_definition():
    (d,) = diags(wrap("%0 = addi %a, %a : tile<i64>"))
    assert d.message == ("use of value '%a' expects different type than prior uses: "
                         "'!cuda_tile.tile<i64>' vs '!cuda_tile.tile<i32>'")
    assert d.range.start == Position(2, 14)
    assert [(n.message, n.range.start) for n in d.notes] == [("prior use here", Position(1, 18))]


def test_redefinition_has_a_note_at_the_first_definition():
    (d,) = diags(wrap("%0 = addi %a, %a : tile<i32>\n%0 = addi %a, %a : tile<i32>"))
    assert d.message == "redefinition of SSA value '%0'"
    assert d.range.start == Position(3, 4)
    assert d.notes[0].message == "previously defined here" and d.notes[0].range.start == Position(2, 4)


def test_result_count_mismatch():
    (d,) = diags(wrap("%0, %1 = addi %a, %a : tile<i32>"))
    assert d.message == "operation defines 1 results but was provided 2 to bind"


def test_use_before_definition_in_the_same_block_does_not_dominate():
    (d,) = diags(wrap("%0 = addi %a, %1 : tile<i32>\n%1 = addi %a, %a : tile<i32>"))
    assert d.message == "operand #1 does not dominate this use"  # Operation::emitError: no op prefix
    assert d.range.start == Position(2, 9)
    # MLIR's diagnoseInvalidOperandDominance says where the definition is
    assert d.notes[0].message == "operand defined here (op in the same block)"
    assert d.notes[0].range.start == Position(3, 9)


def test_isolated_from_above_hides_outer_values():
    # as cuda-tile-opt: one error per undeclared name, at its first use, in text order
    text = ("cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    return\n  }\n"
            "  entry @j() {\n    %0 = addi %a, %a : tile<i32>\n    %1 = addi %b, %b : tile<i32>\n"
            "    return\n  }\n}\n")
    found = [(d.message, d.range.start) for d in diags(text)]
    assert found == [("use of undeclared SSA value name", Position(5, 14)),
                     ("use of undeclared SSA value name", Position(6, 14))]


def test_terminator_must_end_its_block():
    (d,) = diags(wrap("return"))  # wrap() adds a second return after it
    assert d.message == "'cuda_tile.return' op must be the last operation in the parent block"
    assert d.range.start == Position(2, 4)


def test_get_global_must_reference_a_global():
    text = ("cuda_tile.module @m {\n  entry @k() {\n    %0 = get_global @missing : tile<ptr<f32>>\n"
            "    return\n  }\n}\n")
    (d,) = diags(text)
    assert d.message == "'cuda_tile.get_global' op 'missing' does not reference a valid global"


def test_operand_type_constraint_uses_ods_wording():
    (d,) = diags(wrap("%0 = absi %a : tile<f32>", args="%a: tile<f32>"))
    assert d.message == ("'cuda_tile.absi' op operand #0 must be tile of i1 or i8 or i16 or i32 or i64 "
                         "values, but got '!cuda_tile.tile<f32>'")
    assert d.range.start == Position(2, 9)


def test_syntax_error_in_the_first_op_still_reports_a_later_verifier_error():
    text = wrap("%0 = addf %a, %a tile<f32>\n%1 = absi %a : tile<f32>", args="%a: tile<f32>")
    found = [(d.severity, d.message, d.range.start.line) for d in diags(text)]
    assert found[0] == (Severity.ERROR, "expected ':'", 2)
    assert found[1][1].startswith("'cuda_tile.absi' op operand #0 must be tile of i1")
    assert found[1][2] == 3


def test_mlir_compat_mode_stops_a_chunk_at_its_first_parse_error():
    text = wrap("%0 = addf %a, %a tile<f32>\n%1 = absi %a : tile<f32>", args="%a: tile<f32>")
    assert [d.message for d in diags(text, mlir_compat=True)] == ["expected ':'"]


def test_unbalanced_braces_give_diagnostics_not_exceptions():
    for text in ("cuda_tile.module @m {\n  entry @k() {\n", "}\n}\n", "cuda_tile.module @m {{{{\n", "((((", "%"):
        found = diags(text)
        assert found and all(d.severity == Severity.ERROR for d in found)
        assert not any(d.code == "internal" for d in found), found


def test_binary_garbage_in_text_is_a_diagnostic():
    found = diags("\x00\x01\x02\ufffd\x7f garbage \x1b[0m")
    assert found and not any(d.code == "internal" for d in found)
