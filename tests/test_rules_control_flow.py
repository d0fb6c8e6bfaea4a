"""Tests of the control-flow and reduction rules.

Covers tile_lsp/analysis/verify/rules/control_flow.py (if, for, loop, break,
continue), rules/reductions.py (reduce, scan) and
parse_rules/control_flow.py (parse-time errors of for/loop/reduce/scan).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Severity


def diags(text: str, compat: bool = True) -> list[tuple]:
    """(1-based line, column, severity, message, notes) of every diagnostic."""
    out = []
    for d in analyze_text(text, AnalysisOptions(mlir_compat=compat)).diagnostics:
        notes = [(n.message, n.range.start.line + 1, n.range.start.character + 1) if n.range
                 else (n.message, None, None) for n in d.notes]
        out.append((d.range.start.line + 1, d.range.start.character + 1, d.severity.value, d.message, notes))
    return out


def errors(text: str, compat: bool = True) -> list[tuple[int, int, str]]:
    return [(line, col, msg) for line, col, sev, msg, _ in diags(text, compat) if sev == Severity.ERROR.value]


I32 = "!cuda_tile.tile<i32>"
CONSTS = (f"%c0 = cuda_tile.constant <i32: 0> : {I32}\n"
          f"%c1 = cuda_tile.constant <i32: 1> : {I32}\n"
          "%cond = cuda_tile.constant <i1: true> : !cuda_tile.tile<i1>\n")


# ---------------------------------------------------------------------------
# if
# ---------------------------------------------------------------------------


def test_if_without_else_but_with_results():
    text = CONSTS + f"%r = cuda_tile.if %cond -> ({I32}) {{\n  cuda_tile.yield %c0 : {I32}\n}}\n"
    assert errors(text) == [(4, 6, "'cuda_tile.if' op has non-empty return type, must define else branch")]


def test_if_implicit_yield_in_else():
    text = CONSTS + (f"%r = cuda_tile.if %cond -> ({I32}) {{\n  cuda_tile.yield %c0 : {I32}\n}} else {{\n"
                     "  cuda_tile.print_tko \"x\" -> !cuda_tile.token\n}\n")
    assert errors(text) == [(4, 6, f"'cuda_tile.if' op has return type of '{I32}' but else branch does not "
                                   "yield anything")]


def test_if_empty_else_region_gets_implicit_yield():
    text = CONSTS + f"%r = cuda_tile.if %cond -> ({I32}) {{\n  cuda_tile.yield %c0 : {I32}\n}} else {{\n}}\n"
    assert errors(text) == [(4, 6, f"'cuda_tile.if' op has return type of '{I32}' but else branch does not "
                                   "yield anything")]


@pytest.mark.parametrize("then_t,else_t,res_t,message", [
    ("i32", "i64", "i64", "type does not match yield type, then branch yields '!cuda_tile.tile<i32>' but op "
                          "result type is '!cuda_tile.tile<i64>'"),
    ("i64", "i32", "i64", "type does not match yield type, else branch yields '!cuda_tile.tile<i32>' but op "
                          "result type is '!cuda_tile.tile<i64>'"),
])
def test_if_yield_types(then_t, else_t, res_t, message):
    text = (f"%a = cuda_tile.constant <{then_t}: 1> : !cuda_tile.tile<{then_t}>\n"
            f"%b = cuda_tile.constant <{else_t}: 1> : !cuda_tile.tile<{else_t}>\n"
            "%cond = cuda_tile.constant <i1: true> : !cuda_tile.tile<i1>\n"
            f"%r = cuda_tile.if %cond -> (!cuda_tile.tile<{res_t}>) {{\n"
            f"  cuda_tile.yield %a : !cuda_tile.tile<{then_t}>\n}} else {{\n"
            f"  cuda_tile.yield %b : !cuda_tile.tile<{else_t}>\n}}\n")
    assert errors(text) == [(4, 6, f"'cuda_tile.if' op {message}")]


def test_if_without_results_yielding():
    text = CONSTS + f"cuda_tile.if %cond {{\n  cuda_tile.yield %c0 : {I32}\n}}\n"
    assert errors(text) == [(4, 1, f"'cuda_tile.if' op does not return a value, but then branch yields '{I32}'")]


def test_if_view_result():
    tv = "!cuda_tile.tensor_view<2x2xf32, strides=[2,1]>"
    text = (f"cuda_tile.testing$func @f(%c: !cuda_tile.tile<i1>, %v: {tv}) {{\n"
            f"  %0 = if %c -> ({tv}) {{\n    cuda_tile.return %v : {tv}\n  }} else {{\n"
            f"    cuda_tile.return %v : {tv}\n  }}\n}}\n")
    assert errors(text) == [(2, 8, "'cuda_tile.if' op result type 0 is a tensor_view, which is not supported")]


def test_if_branch_ending_in_break_is_not_checked():
    text = (CONSTS + "cuda_tile.loop {\n  cuda_tile.if %cond {\n    cuda_tile.break\n  }\n"
            "  cuda_tile.break\n}\n")
    assert errors(text) == []


# ---------------------------------------------------------------------------
# for / loop
# ---------------------------------------------------------------------------


def test_for_continue_types():
    text = CONSTS + (f"cuda_tile.for %iv in (%c0 to %c1, step %c1) : {I32} {{\n"
                     f"  cuda_tile.continue %c0 : {I32}\n}}\n")
    assert errors(text) == [(5, 3, "`for` is missing a valid terminator. `continue` op should have operand types "
                                   f"that match the parent loop return types: (), but found: ('{I32}')")]


def test_for_implicit_continue_with_results():
    text = CONSTS + (f"%r = cuda_tile.for %iv in (%c0 to %c1, step %c1) : {I32} iter_values(%x = %c0) -> ({I32}) {{\n"
                     "}\n")
    assert errors(text) == [(4, 6, "`for` is missing a valid terminator. `continue` op should have operand types "
                                   f"that match the parent loop return types: ('{I32}'), but found: ()")]


def test_loop_implicit_continue_at_op_name():
    text = CONSTS + "cuda_tile.loop iter_values(%arg0 = %c0) : tile<i32> { }\n"
    assert errors(text) == [(4, 1, "`loop` is missing a valid terminator. `continue` op should have operand types "
                                   f"that match the parent loop iter_values: ('{I32}'), but found: ()")]


def test_generic_for_induction_variable_type():
    text = (CONSTS + '"cuda_tile.for"(%c0, %c0, %c0) ({\n  ^bb0(%i0 : !cuda_tile.tile<f32>):\n'
            f"    cuda_tile.continue\n}}) : ({I32}, {I32}, {I32}) -> ()\n")
    assert errors(text) == [(4, 1, "'cuda_tile.for' op expected induction variable to be same type as bounds "
                                   f"and step: '!cuda_tile.tile<f32>' vs '{I32}'")]


def test_generic_loop_iter_values():
    f32 = "!cuda_tile.tile<f32>"
    text = (f"%init = cuda_tile.constant <f32: 0.0> : {f32}\n"
            f'%x = "cuda_tile.loop"(%init) ({{\n  ^bb0(%a: {f32}, %b: {f32}):\n'
            f"    cuda_tile.continue %a : {f32}\n}}) : ({f32}) -> ({f32})\n")
    assert errors(text) == [(2, 6, "'cuda_tile.loop' op mismatch in number of region iterator values and loop "
                                   "iterator inits: 2 vs 1")]
    text = (f"%init = cuda_tile.constant <f32: 0.0> : {f32}\n"
            f'"cuda_tile.loop"(%init) ({{\n  ^bb0(%a: !cuda_tile.tile<f64>):\n'
            f"    cuda_tile.continue %init : {f32}\n}}) : ({f32}) -> ({f32})\n")
    assert errors(text) == [(2, 1, f"'cuda_tile.loop' op init value 0 and region iter_value 0 have different type: "
                                   f"'{f32}' != '!cuda_tile.tile<f64>'")]


def test_loop_view_carried_and_result():
    tv = "tensor_view<2x2xf32, strides=[1,1]>"
    text = (f"cuda_tile.testing$func @f(%v: !cuda_tile.{tv}) {{\n"
            f"  loop iter_values(%x = %v) : {tv} {{\n    continue %x : {tv}\n  }}\n}}\n")
    assert errors(text) == [(2, 3, "'cuda_tile.loop' op loop-carried value 0 is a tensor_view, which is not supported")]
    text = (f"cuda_tile.testing$func @f(%v: !cuda_tile.{tv}) {{\n"
            f"  %0 = loop : {tv} {{\n    break %v : {tv}\n  }}\n}}\n")
    assert errors(text) == [(2, 8, "'cuda_tile.loop' op result type 0 is a tensor_view, which is not supported")]


def test_region_constraint_of_generic_for():
    text = CONSTS + f'"cuda_tile.for"(%c0, %c0, %c0) ({{ }}) : ({I32}, {I32}, {I32}) -> ()\n'
    assert errors(text) == [(4, 1, "'cuda_tile.for' op region #0 ('region') failed to verify constraint: "
                                   "region with 1 blocks")]


def test_loop_body_without_terminator_gets_implicit_continue():
    text = CONSTS + (f"cuda_tile.for %iv in (%c0 to %c1, step %c1) : {I32} {{\n"
                     f"  %x = cuda_tile.addi %iv, %c1 : {I32}\n}}\n")
    assert errors(text) == []


# ---------------------------------------------------------------------------
# break / continue
# ---------------------------------------------------------------------------


def test_continue_ancestor_chain_note():
    text = ("cuda_tile.module @k {\ncuda_tile.entry @kernel() {\n"
            "  %cond = \"cond\"() : () -> !cuda_tile.tile<i1>\n"
            "  cuda_tile.if %cond {\n    cuda_tile.continue\n  }\n}\n}\n")
    assert diags(text) == [(5, 5, "error", "'cuda_tile.continue' op can only be nested within a ancestor chain of "
                                           "'cuda_tile.for', 'cuda_tile.loop', 'cuda_tile.if' operations",
                            [("see unexpected ancestor operation", 2, 1)])]


def test_break_inside_for_is_rejected():
    text = CONSTS + (f"cuda_tile.for %iv in (%c0 to %c1, step %c1) : {I32} {{\n"
                     "  cuda_tile.if %cond {\n    cuda_tile.break\n  }\n}\n")
    assert diags(text) == [(6, 5, "error", "'cuda_tile.break' op can only be nested within a ancestor chain of "
                                           "'cuda_tile.loop', 'cuda_tile.if' operations",
                            [("see unexpected ancestor operation", 4, 1)])]


def test_break_types():
    text = CONSTS + f"cuda_tile.loop {{\n  cuda_tile.break %c0 : {I32}\n}}\n"
    assert errors(text) == [(5, 3, "'cuda_tile.break' op operand types must correspond to the parent loop result "
                                   f"types: ('{I32}') vs ()")]


# ---------------------------------------------------------------------------
# reduce / scan
# ---------------------------------------------------------------------------


def reduce(op: str = "reduce", dim: int = 0, operands: str = "%a", idents: str = "0.0 : f32",
           in_types: str = "!cuda_tile.tile<8xf32>", out_types: str | None = None,
           args: str = "%x : !cuda_tile.tile<f32>, %y : !cuda_tile.tile<f32>", body: str = "",
           term: str = "cuda_tile.yield %x : !cuda_tile.tile<f32>") -> str:
    if out_types is None:
        out_types = "!cuda_tile.tile<f32>" if op == "reduce" else in_types
    reverse = " reverse=false" if op == "scan" else ""
    return ("cuda_tile.module @m {\n  testing$func @f(%a: !cuda_tile.tile<8xf32>, %b: !cuda_tile.tile<8xi32>) {\n"
            f"    %0 = cuda_tile.{op} {operands} dim={dim}{reverse} identities=[{idents}] : {in_types} -> {out_types}\n"
            f"    ({args}) {{\n{body}      {term}\n    }}\n  }}\n}}\n")


@pytest.mark.parametrize("op", ["reduce", "scan"])
def test_aggregate_valid(op):
    assert errors(reduce(op)) == []


@pytest.mark.parametrize("op", ["reduce", "scan"])
def test_aggregate_dim_attribute_constraint(op):
    assert errors(reduce(op, dim=-10)) == [
        (3, 10, f"'cuda_tile.{op}' op attribute 'dim' failed to satisfy constraint: 32-bit signless integer "
                "attribute whose value is non-negative")]


@pytest.mark.parametrize("op", ["reduce", "scan"])
def test_aggregate_dim_out_of_bound(op):
    assert errors(reduce(op, dim=3)) == [(3, 10, f"'cuda_tile.{op}' op dimension (3) is out of bound [0, 1)")]


def test_reduce_identity_type():
    assert errors(reduce(idents="0 : i32")) == [
        (3, 10, "'cuda_tile.reduce' op expect same type for operand at index: 0 and identity at index: 0 but got: "
                "'f32' and 'i32'")]


def test_reduce_identity_f16_bf16_interchangeable():
    text = reduce(in_types="!cuda_tile.tile<8xbf16>", out_types="!cuda_tile.tile<bf16>", idents="0.0 : f16",
                  args="%x : !cuda_tile.tile<bf16>, %y : !cuda_tile.tile<bf16>",
                  term="cuda_tile.yield %x : !cuda_tile.tile<bf16>").replace("%a: !cuda_tile.tile<8xf32>",
                                                                            "%a: !cuda_tile.tile<8xbf16>")
    assert errors(text) == []


def test_reduce_inferred_types():
    found = errors(reduce(out_types="!cuda_tile.tile<1xf32>"))
    assert found == [
        (3, 10, "'cuda_tile.reduce' op inferred type(s) '!cuda_tile.tile<f32>' are incompatible with return type(s) "
                "of operation '!cuda_tile.tile<1xf32>'"),
        (3, 10, "'cuda_tile.reduce' op failed to infer returned types")]


def test_scan_result_type():
    assert errors(reduce("scan", out_types="!cuda_tile.tile<16xf32>")) == [
        (3, 10, "'cuda_tile.scan' op expect same type for operand at index: 0 and result at index: 0")]


@pytest.mark.parametrize("args,message", [
    ("", "expect 2 block arguments but got: 0"),
    ("%x : f32, %y : !cuda_tile.tile<f32>", "expect 0-rank tile type at index: 0 but got: 'f32'"),
    ("%x : !cuda_tile.tile<f32>, %y : !cuda_tile.tile<i32>",
     "expect same element type for block argument at index: 0 and 1 but got: 'f32' and 'i32'"),
    ("%x : !cuda_tile.tile<i32>, %y : !cuda_tile.tile<i32>",
     "expect same type for operand at index: 0 and block argument at index: 0 but got: 'f32' and 'i32'"),
])
def test_aggregate_block_arguments(args, message):
    assert errors(reduce(args=args, term="cuda_tile.yield")) == [(3, 10, f"'cuda_tile.reduce' op {message}")]


def test_aggregate_terminator():
    assert errors(reduce(term="cuda_tile.yield")) == [
        (3, 10, "'cuda_tile.reduce' op expect number of terminators operands (0) to match number of operands (1)")]
    assert errors(reduce(term="cuda_tile.yield %c : !cuda_tile.tile<i32>",
                         body="      %c = cuda_tile.constant <i32: 0> : !cuda_tile.tile<i32>\n")) == [
        (3, 10, "'cuda_tile.reduce' op expect same type for operand at index: 0 and terminator argument at index: 0 "
                "but got: 'f32' and 'i32'")]


def test_aggregate_missing_terminator():
    # reduce's parser adds no terminator: MLIR's verifier finds the block without
    # one (verifyOnEntrance(Block&)) before the region trait (as cuda-tile-opt)
    found = diags(reduce(term="%z = cuda_tile.addf %x, %y : !cuda_tile.tile<f32>"))
    assert found == [(5, 12, "error", 'block with no terminator, has %1 = "cuda_tile.addf"(%arg2, %arg3) '
                                      "<{rounding_mode = #cuda_tile.rounding<nearest_even>}> : "
                                      "(!cuda_tile.tile<f32>, !cuda_tile.tile<f32>) -> !cuda_tile.tile<f32>", [])]


def test_aggregate_purity():
    body = '      %t = cuda_tile.print_tko "step" -> !cuda_tile.token\n'
    assert errors(reduce("scan", body=body)) == [
        (5, 12, "'cuda_tile.print_tko' op only pure operations are allowed inside 'cuda_tile.scan'")]


def test_aggregate_empty_region():
    text = reduce(args="", term="").replace("() {\n      \n    }", "() {}")
    assert errors(text) == [
        (3, 10, "'cuda_tile.reduce' op region #0 ('body') failed to verify constraint: region with 1 blocks")]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4))
def test_identity_count(n_ops, n_idents):
    operands = ", ".join(["%a"] * n_ops)
    types = ", ".join(["!cuda_tile.tile<8xf32>"] * n_ops)
    outs = ", ".join(["!cuda_tile.tile<f32>"] * n_ops)
    idents = ", ".join(["0.0 : f32"] * n_idents)
    args = ", ".join(f"%x{i} : !cuda_tile.tile<f32>" for i in range(2 * n_ops))
    yields = ", ".join(f"%x{2 * i}" for i in range(n_ops))
    text = reduce(operands=operands, in_types=types, out_types=outs, idents=idents, args=args,
                  term=f"cuda_tile.yield {yields} : {outs}").replace("%0 =", f"%0:{n_ops} =" if n_ops > 1 else "%0 =")
    expected = [] if n_ops == n_idents else [
        (3, 12 if n_ops > 1 else 10, "'cuda_tile.reduce' op expect identities to match the number of operands but got: "
                f"{n_ops} operands and {n_idents} identities")]
    assert errors(text) == expected


# ---------------------------------------------------------------------------
# parse-time rules
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("op,col", [("reduce", 27), ("scan", 25)])
def test_operand_type_count(op, col):
    reverse = " reverse=false" if op == "scan" else ""
    res = "!cuda_tile.tile<f32>" if op == "reduce" else "!cuda_tile.tile<8xf32>"
    text = ("cuda_tile.module @m {\n  testing$func @f() {\n"
            f"    %0 = cuda_tile.{op} dim=0{reverse} identities=[0.0 : f32] : !cuda_tile.tile<8xf32> -> {res}\n"
            "    (%x : !cuda_tile.tile<f32>, %y : !cuda_tile.tile<f32>) {\n      cuda_tile.yield\n    }\n  }\n}\n")
    assert errors(text) == [(3, col, f"custom op 'cuda_tile.{op}' number of operands and types do not match: "
                                         "got 0 operands and 1 types")]


def test_yield_operand_type_count():
    text = CONSTS + f"cuda_tile.if %cond {{\n  cuda_tile.yield %c0, %c1 : {I32}\n}}\n"
    assert errors(text) == [(5, 19, "custom op 'cuda_tile.yield' number of operands and types do not match: "
                                    "got 2 operands and 1 types")]


def test_for_iter_values_count():
    text = CONSTS + (f"%r = cuda_tile.for %iv in (%c0 to %c1, step %c1) : {I32} "
                     f"iter_values(%a = %c0, %b = %c0) -> ({I32}) {{\n  cuda_tile.continue %a : {I32}\n}}\n")
    assert errors(text) == [(4, 6, "custom op 'cuda_tile.for' mismatch in number of loop-carried values and "
                                   "defined values")]


def test_loop_iter_values_count():
    text = (CONSTS + f"cuda_tile.loop iter_values(%a = %c0) : {I32}, {I32}  {{\n"
            f"  cuda_tile.continue %a : {I32}\n}}\n")
    col = text.splitlines()[3].index("{") + 1
    assert errors(text) == [(4, col, "custom op 'cuda_tile.loop' found different number of iter_values and types")]


@pytest.mark.parametrize("dim,ok", [("0 : i32", True), ("0", False), ("0 : i64", False), ("-1 : i32", False)])
def test_generic_reduce_dim_type(dim, ok):
    f32 = "!cuda_tile.tile<f32>"
    text = ('%a = "x"() : () -> !cuda_tile.tile<8xf32>\n'
            f'%0 = "cuda_tile.reduce"(%a) <{{dim = {dim}, identities = [0.0 : f32]}}> ({{\n'
            f"^bb0(%x: {f32}, %y: {f32}):\n  cuda_tile.yield %x : {f32}\n}}) : (!cuda_tile.tile<8xf32>) -> {f32}\n")
    expected = [] if ok else [(2, 6, "'cuda_tile.reduce' op attribute 'dim' failed to satisfy constraint: 32-bit "
                                     "signless integer attribute whose value is non-negative")]
    assert errors(text) == expected
