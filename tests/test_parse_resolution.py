"""MLIR's parse-time resolution order and the verifier's block/dominance passes.

Every probe here was written for these tests and checked against NVIDIA's
``cuda-tile-opt`` (same message, line and column).  Rules:

* a custom op's regions are parsed before its operands are resolved, and its
  results are bound after it (ODS-generated parsers, NVIDIA ``ForOp::parse``,
  MLIR ``OperationParser::parseOperation``);
* ``resolveSSAUse`` / ``addDefinition`` print a name without ``#N``; a forward
  reference takes the type of its first use;
* ``expected SSA operand`` is reported by ``emitWrongTokenError`` (end of the
  previous token), also where optional keywords could have stood;
* an optional operand after the element deciding its optional group may be
  absent; a group whose written types are not as many as its operands is
  ``number of operands and types do not match``;
* aliases defined twice; ``block with no terminator``; dominance as a second
  pass over an isolated op.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Severity


def first(text: str, compat: bool = True):
    """The first error (line, column, message, notes), 1-based as cuda-tile-opt prints it."""
    diags = [d for d in analyze_text(text, AnalysisOptions(mlir_compat=compat)).diagnostics
             if d.severity == Severity.ERROR]
    if not compat:
        diags.sort(key=lambda d: (d.range.start.line, d.range.start.character))
    d = diags[0]
    notes = [(n.range.start.line + 1, n.range.start.character + 1, n.message) for n in d.notes]
    return d.range.start.line + 1, d.range.start.character + 1, d.message, notes


def all_errors(text: str):
    """Every error of the editor mode (not MLIR compat), as :func:`first` gives one."""
    return [(d.range.start.line + 1, d.range.start.character + 1, d.message,
             [(n.range.start.line + 1, n.range.start.character + 1, n.message) for n in d.notes])
            for d in analyze_text(text, AnalysisOptions()).diagnostics if d.severity == Severity.ERROR]


def func(body: str, args: str = "%a: tile<i32>, %c: tile<i1>") -> str:
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return f"cuda_tile.module @m {{\n  testing$func @k({args}) {{\n{lines}\n    return\n  }}\n}}\n"


# -- regions before operands: for ... iter_values ----------------------------------

FOR_ITER_TYPE = func("""
%lb = constant <i32: 0> : tile<i32>
%n = constant <i32: 8> : tile<i32>
%s = constant <i32: 1> : tile<i32>
%for = for %i in (%lb to %n, step %s) : tile<i32> iter_values(%acc = %a) -> (tile<i64>) {
  %x = addi %acc, %acc : tile<i32>
  continue %x : tile<i32>
}
""")


def test_for_body_is_parsed_before_the_init_value_is_resolved():
    # the region argument has the result type (i64); its first use in the body
    # disagrees before the init value %a (i32) is ever resolved against i64
    want = (7, 17, "use of value '%acc' expects different type than prior uses: "
            "'!cuda_tile.tile<i32>' vs '!cuda_tile.tile<i64>'", [(6, 67, "prior use here")])
    assert first(FOR_ITER_TYPE) == want
    # the editor goes on after it (the init value is then reported too): the
    # region use is among its diagnostics, as MLIR words and places it
    assert want in all_errors(FOR_ITER_TYPE)


def test_result_number_is_not_part_of_the_name_in_use_type_errors():
    text = func('%t:2 = "cuda_tile.foo"() : () -> (!cuda_tile.tile<i32>, !cuda_tile.tile<i32>)\n'
                "%x = addi %t#1, %t#1 : tile<i64>")
    assert first(text)[2] == ("use of value '%t' expects different type than prior uses: "
                              "'!cuda_tile.tile<i64>' vs '!cuda_tile.tile<i32>'")
    assert first(text)[:2] == (4, 15)


# -- forward references and redefinitions ------------------------------------------

def test_definition_of_a_forward_reference_with_another_type():
    text = func("%1 = addi %2, %a : tile<i32>\n%2 = constant <i64: 0> : tile<i64>")
    assert first(text) == (4, 5, "definition of SSA value '%2#0' has type '!cuda_tile.tile<i64>'",
                           [(3, 15, "previously used here with type '!cuda_tile.tile<i32>'")])


def test_second_forward_use_is_checked_against_the_first():
    text = func("%1 = addi %2, %a : tile<i32>\n%3 = addf %2, %2 : tile<f32>\n%2 = constant <i32: 0> : tile<i32>")
    assert first(text) == (4, 15, "use of value '%2' expects different type than prior uses: "
                           "'!cuda_tile.tile<f32>' vs '!cuda_tile.tile<i32>'", [(3, 15, "prior use here")])


def test_redefinition_of_a_result_group_names_it_without_number():
    op = '%1:2 = "cuda_tile.foo"() : () -> (!cuda_tile.tile<i32>, !cuda_tile.tile<i32>)'
    assert first(func(op + "\n" + op)) == (4, 5, "redefinition of SSA value '%1'",
                                           [(3, 5, "previously defined here")])


def test_attribute_and_type_alias_redefinitions():
    attr = ('#a = loc("x.py":1:1)\ncuda_tile.module @m {\n  testing$func @k() {\n    return loc(#a)\n  }\n}\n'
            '#a = loc("x.py":2:1)\n')
    assert first(attr) == (7, 1, "redefinition of attribute alias id 'a'", [])
    typ = ("!t = !cuda_tile.tile<i32>\ncuda_tile.module @m {\n  testing$func @k(%b: !t) {\n    return\n  }\n}\n"
           "!t = !cuda_tile.tile<i64>\n")
    assert first(typ) == (7, 1, "redefinition of type alias id 't'", [])


# -- missing operands -----------------------------------------------------------------

def test_expected_ssa_operand_at_the_end_of_the_previous_token():
    text = func("%1 = absi  : tile<i32>")
    assert first(text) == (3, 14, "expected SSA operand", [])
    text = func("%1 = cmpi equal %a, signed : tile<i32> -> tile<i1>")
    assert first(text) == (3, 24, "expected SSA operand", [])


def test_optional_token_operand_may_be_absent_after_its_keyword():
    text = func('%t = print_tko "x %d", %a token= : tile<i32> -> token')
    assert [d for d in analyze_text(text, AnalysisOptions(mlir_compat=True)).diagnostics] == []


def test_operand_and_type_counts_of_an_optional_group():
    text = func('%t = print_tko "%d" : tile<i32> -> token')
    assert first(text) == (3, 10, "custom op 'cuda_tile.print_tko' number of operands and types do not "
                           "match: got 0 operands and 1 types", [])
    text = func("%token0 = cuda_tile.make_token : token\n"
                "%0, %res_token0 = cuda_tile.load_ptr_tko weak %ptr, %mask token=%token0\n"
                "    : tile<ptr<f32>>, tile<i1>, tile<f32> -> tile<f32>, token",
                args="%ptr: !cuda_tile.tile<ptr<f32>>, %mask: !cuda_tile.tile<i1>")
    assert first(text)[:3] == (4, 23, "custom op 'cuda_tile.load_ptr_tko' number of operands and types "
                               "do not match: got 0 operands and 1 types")


# -- verifier: terminators and dominance ---------------------------------------------

REDUCE_NO_YIELD = func("""
%c0 = constant <f32: 0.0> : tile<f32>
%r = reduce %v dim=0 identities=[0.0 : f32] : tile<8xf32> -> tile<f32>
(%x: tile<f32>, %y: tile<f32>) {
  %s = addf %x, %c0 : tile<f32>
  %t = addf %s, %y : tile<f32>
}
""", args="%v: tile<8xf32>")


def test_block_with_no_terminator_prints_the_last_op_generically():
    want = (7, 12, 'block with no terminator, has %3 = "cuda_tile.addf"(%2, %arg2) '
            "<{rounding_mode = #cuda_tile.rounding<nearest_even>}> : "
            "(!cuda_tile.tile<f32>, !cuda_tile.tile<f32>) -> !cuda_tile.tile<f32>", [])
    assert first(REDUCE_NO_YIELD) == want
    assert first(REDUCE_NO_YIELD, compat=False) == want


def test_generic_form_regions_get_no_implicit_terminator():
    text = ('cuda_tile.module @m {\n  testing$func @k(%a: tile<i1>) {\n    "cuda_tile.if"(%a) ({\n'
            "      %c = constant <f32: 0.0> : tile<f32>\n    }, {\n    }) : (!cuda_tile.tile<i1>) -> ()\n"
            "    return\n  }\n}\n")
    assert first(text)[:3] == (4, 12, 'block with no terminator, has %0 = "cuda_tile.constant"() '
                               "<{value = dense<0.000000e+00> : !cuda_tile.tile<f32>}> : () -> !cuda_tile.tile<f32>")


def test_use_in_a_nested_region_of_a_later_value_does_not_dominate():
    text = func("""
%r = if %c -> (tile<i32>) {
  %1 = addi %2, %a : tile<i32>
  yield %1 : tile<i32>
} else {
  yield %a : tile<i32>
}
%2 = addi %a, %a : tile<i32>
""")
    want = (4, 12, "operand #0 does not dominate this use",
            [(9, 10, "operand defined here (op in a parent region)")])
    assert first(text) == want
    assert first(text, compat=False) == want


def test_dominance_is_checked_after_the_other_verifiers():
    text = func("%1 = addi %2, %a : tile<i32>\n%2 = addi %a, %a : tile<i32>\n%3 = ftof %a : tile<i32> -> tile<i32>")
    assert first(text)[:2] == (5, 10)
    assert first(text)[2].startswith("'cuda_tile.ftof' op operand #0 must be tile of f16")


def test_cli_json_reports_the_use_in_the_loop_body(tmp_path):
    f = tmp_path / "k.mlir"
    f.write_text(FOR_ITER_TYPE)
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "--check", "--format", "json", str(f)],
                          capture_output=True, text=True, timeout=600)
    errors = [(d["line"], d["column"], d["message"]) for d in json.loads(proc.stdout) if d["severity"] == "error"]
    assert (7, 17, "use of value '%acc' expects different type than prior uses: "
            "'!cuda_tile.tile<i32>' vs '!cuda_tile.tile<i64>'") in errors


def test_forward_reference_is_resolved_by_a_definition_in_a_sibling_region():
    # MLIR keeps one value table per isolated region: the later definition in
    # another if's body resolves the name, and dominance rejects it
    text = func("""
%r = if %c -> (tile<i32>) {
  %1 = addi %2, %a : tile<i32>
  yield %1 : tile<i32>
} else {
  yield %a : tile<i32>
}
%s = if %c -> (tile<i32>) {
  %2 = addi %a, %a : tile<i32>
  yield %2 : tile<i32>
} else {
  yield %a : tile<i32>
}
""")
    assert first(text) == (4, 12, "operand #0 does not dominate this use",
                           [(10, 12, "operand defined here (op is neither in a parent nor in a child region)")])


def test_symbol_redefinition_is_checked_after_the_nested_ops():
    text = ("cuda_tile.module @m {\n  testing$func @k(%a: tile<i32>) {\n    return\n  }\n"
            "  global private @g <f32: 2.0> : tile<1xf32>\n  global private @g <f32: 2.0> : tile<1xf32>\n}\n")
    assert first(text) == (6, 3, "redefinition of symbol named 'g'", [(5, 3, "see existing symbol definition here")])
    # an error inside the function comes first, as cuda-tile-opt reports it
    bad = text.replace("    return\n", "    %0 = ftof %a : tile<i32> -> tile<i32>\n    return\n", 1)
    assert first(bad)[:2] == (3, 10)


UNREGISTERED = 'unregistered operation \'{}\' found in dialect (\'{}\') that does not allow unknown operations'


def test_generic_op_unknown_to_a_loaded_dialect_is_a_verifier_error():
    # cuda_tile and builtin are loaded; their unknown ops are errors at the op, after the ops nested in it
    body = ('cuda_tile.module @kernels {\n  entry @k(%a: tile<i32>) {\n'
            '    %c = "cuda_tile.cmp"(%a, %a) : (!cuda_tile.tile<i32>, !cuda_tile.tile<i32>) -> !cuda_tile.tile<i1>\n'
            '    return\n  }\n}\n')
    want = (3, 10, UNREGISTERED.format("cuda_tile.cmp", "cuda_tile"), [])
    assert first(body) == want
    assert first(body, compat=False) == want
    top = '"cuda_tile.modul"() ({\n}) : () -> ()\n'
    assert first(top) == (1, 1, UNREGISTERED.format("cuda_tile.modul", "cuda_tile"), [])
    nested = ('cuda_tile.module @kernels {\n  entry @k() {\n    "cuda_tile.foo"() ({\n'
              '      "builtin.bar"() : () -> ()\n    }) : () -> ()\n    return\n  }\n}\n')
    assert first(nested) == (4, 7, UNREGISTERED.format("builtin.bar", "builtin"), [])
    assert UNREGISTERED.format("cuda_tile.foo", "cuda_tile") in [d[2] for d in all_errors(nested)]


def test_generic_ops_of_other_dialects_and_builtin_casts_are_accepted():
    text = ('cuda_tile.module @kernels {\n  entry @k(%a: tile<i32>) {\n'
            '    %x = "builtin.unrealized_conversion_cast"(%a) : (!cuda_tile.tile<i32>) -> i32\n'
            '    "func.zzz"(%x) : (i32) -> ()\n    "nv_tileas.zzz"() : () -> ()\n    return\n  }\n}\n')
    assert all_errors(text) == []


def test_short_form_cuda_tile_types_are_only_for_custom_syntax():
    # MLIR's own type parser (generic op function types, block labels, type aliases) knows only
    # builtin and '!'-prefixed types: "expected non-function type" at the end of the token before
    def op(ftype: str) -> str:
        return ('cuda_tile.module @kernels {\n  entry @k(%a: tile<i32>) {\n'
                f'    %x = "foo.bar"(%a) : {ftype}\n    return\n  }}\n}}\n')
    want = "expected non-function type"
    assert first(op("(tile<i32>) -> i32")) == (3, 27, want, [])
    assert first(op("(!cuda_tile.tile<i32>) -> tile<i32>")) == (3, 51, want, [])
    assert first(op("(!cuda_tile.tile<i32>) -> (i32, token, tile<i32>)"), compat=False) == (3, 57, want, [])
    assert first("!t = tile<i32>\ncuda_tile.module @kernels {\n}\n") == (1, 5, want, [])
    assert first("!t = (i32, ptr<f32>) -> ()\n") == (1, 11, want, [])
    label = ('cuda_tile.module @kernels {\n  entry @k() {\n    "foo.bar"() ({\n    ^bb0(%x: tile<i32>):\n'
             '      "foo.y"() : () -> ()\n    }) : () -> ()\n    return\n  }\n}\n')
    assert first(label) == (4, 13, want, [])
    # the prefixed forms, and short forms nested in a prefixed type's parameters, are fine
    assert all_errors(op("(!cuda_tile.tile<i32>) -> !cuda_tile.tile<ptr<f32>>")) == []
    assert all_errors("!t = !cuda_tile.tile<ptr<f32>>\n") == []
