"""Signature help (tile_lsp.analysis.ide.signature_help): labels from the op table, the active slot while typing."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tile_lsp.analysis.ir.diagnostics import Position, SourceText
from tile_lsp.analysis.ide.signature_help import op_signature, signature_help
from tile_lsp.dialect.registry import lookup


def _slots(name: str) -> list[tuple[str, str]]:
    sig = op_signature(name)
    assert sig is not None
    return [(p.name, sig.label[p.label[0]:p.label[1]]) for p in sig.parameters]


def _active(text: str) -> tuple[str, str | None] | None:
    """(op, active parameter name) with the cursor at the end of ``text``."""
    lines = text.split("\n")
    found = signature_help(text, Position(len(lines) - 1, len(lines[-1])))
    if found is None:
        return None
    index = found.active_parameter
    return found.signature.op, (found.signature.parameters[index].name if index is not None else None)


def test_labels_follow_the_assembly_format():
    assert op_signature("addf").label == (
        "%result = cuda_tile.addf %lhs, %rhs [rounding<rounding_mode>] [flush_to_zero] : type(result)")
    assert _slots("addf") == [("lhs", "%lhs"), ("rhs", "%rhs"), ("rounding_mode", "rounding<rounding_mode>"),
                              ("flush_to_zero", "flush_to_zero"), ("type(result)", "type(result)")]
    assert op_signature("cuda_tile.addi").label == (
        "%result = cuda_tile.addi %lhs, %rhs [overflow<overflow>] : type(result)")
    assert op_signature("cmpi").label == (
        "%result = cuda_tile.cmpi comparison_predicate %lhs, %rhs, signedness : type(lhs) -> type(result)")
    assert op_signature("for").label == (
        "%resultValues... = cuda_tile.for [unsigned] %iv in (%lowerBound to %upperBound, step %step) "
        ": type(lowerBound) [iter_values(%initValues...) -> (result_types...)] {...}")
    assert op_signature("entry").label == (
        "cuda_tile.entry @sym_name(arguments...) [-> result_types...] "
        "[optimization_hints = optimization_hints] {...}")
    assert _slots("entry")[1] == ("function_type", "(arguments...) [-> result_types...]")
    assert op_signature("load_ptr_tko").label.startswith(
        "%result, %result_token = cuda_tile.load_ptr_tko memory_ordering_semantics [memory_scope] "
        "%source[, %mask[, %paddingValue]] [token=%token]")
    assert op_signature("alloca").label == (
        "%result = cuda_tile.alloca num_elem = num_elem, alignment = alignment [global] : type(result)")
    assert _slots("alloca")[0] == ("num_elem", "num_elem = num_elem")
    assert op_signature("maxf").label == (
        "%result = cuda_tile.maxf %lhs, %rhs [flush_to_zero] [propagate_nan] : type(result)")
    # nv_tileas ops: their format's `operands` directive lists every operand
    assert op_signature("nv_tileas.copy").label == (
        "%results... = nv_tileas.copy %source, %dest, %operands... : type(operands) [-> type(results)]")
    assert op_signature("cuda_tile.nonexistent") is None


def test_generic_form_for_ops_without_a_custom_form(monkeypatch):
    from tile_lsp.analysis.ide import signature_help as SH

    addi = dataclasses.replace(lookup("addi"), format=None)
    monkeypatch.setattr(SH, "lookup", lambda name: addi if name.endswith("addi") else lookup(name))
    SH.op_signature.cache_clear()
    SH._nodes_of.cache_clear()
    try:
        sig = SH.op_signature("cuda_tile.addi")
        assert sig.label == '%result = "cuda_tile.addi"(%lhs, %rhs) <{overflow}>'
        assert [p.name for p in sig.parameters] == ["lhs", "rhs", "overflow"]
        assert _active('%0 = "cuda_tile.addi"(%a, ') == ("cuda_tile.addi", "rhs")
    finally:
        SH.op_signature.cache_clear()
        SH._nodes_of.cache_clear()


def test_parameter_docs_come_from_the_op_table():
    sig = op_signature("addf")
    docs = {p.name: p.doc for p in sig.parameters}
    assert docs["lhs"].startswith("`lhs` (operand): tile of f16 or bf16 or f32 or f64 values.")
    assert docs["rounding_mode"] == (
        "`rounding_mode` (attribute): rounding mode: one of nearest_even, zero, negative_inf, positive_inf, "
        "approx, full, nearest_int_to_zero. Rounding applied to the result; `rounding<mode>` in the text, "
        "nearest_even when left out.")
    assert {p.name: p.doc for p in op_signature("addi").parameters}["overflow"].startswith(
        "`overflow` (attribute, optional, default `none`): ")
    assert docs["type(result)"] == "Type of result `result`: tile of f16 or bf16 or f32 or f64 values."
    assert sig.doc.startswith("**cuda_tile.addf** (since 13.1): ")


@pytest.mark.parametrize("text, expected", [
    ("%0 = addf ", "lhs"),
    ("%0 = addf %a", "lhs"),
    ("%0 = addf %a,", "rhs"),
    ("%0 = addf %a, %b", "rhs"),
    ("%0 = addf %a, %b ", "rounding_mode"),
    ("%0 = addf %a, %b round", "rounding_mode"),
    ("%0 = addf %a, %b rounding<", "rounding_mode"),
    ("%0 = addf %a, %b rounding<zero> ", "flush_to_zero"),
    ("%0 = addf %a, %b rounding<zero> flush", "flush_to_zero"),
    ("%0 = addf %a, %b : ", "type(result)"),
    ("%0 = addf %a, %b : tile<4x", "type(result)"),
    ("  %c = cmpi ", "comparison_predicate"),
    ("  %c = cmpi equal ", "lhs"),
    ("  %c = cmpi equal %a, %b, ", "signedness"),
    ("  %c = cmpi equal %a, %b, signed : ", "type(lhs)"),
    ("%r = for %i in (", "lowerBound"),
    ("%r = for %i in (%a to ", "upperBound"),
    ("%r = for %i in (%a to %b, step %c) : tile<i32> iter_values(%x = ", "initValues"),
    ("%t, %tok = load_view_tko weak ", "memory_scope"),
    ("%t, %tok = load_view_tko weak %v[", "index"),
    ("%t, %tok = load_view_tko weak %v[%i, %j] token = ", "token"),
    ("%t, %tok = load_view_tko weak %v[%i, %j] : ", "type(view)"),
    ("%0 = constant <", "value"),
    ("%0 = constant <f32: 1.0> : ", "type(result)"),
    ("entry @k(", "function_type"),
    ("entry @k(%a: tile<i32>) ", "optimization_hints"),
    ("%0 = alloca num_elem = 4, ali", "alignment"),
    ("%0 = maxf %a, %b propagate_nan ", "flush_to_zero"),
    ("%0 = maxf %a, %b fl", "flush_to_zero"),
    ('%0 = "cuda_tile.addi"(%a, ', "rhs"),
    ('%0 = "cuda_tile.addi"(%a, %b) <{ov', "overflow"),
    ("%0 = make_tensor_view %p, shape = [", "dynamicShape"),
])
def test_active_parameter_while_typing(text: str, expected: str):
    op, active = _active(text)
    assert active == expected, (text, op)


def test_multi_line_ops_and_places_without_signature():
    # an op continued on the next line
    assert _active("%0 = addf %a,\n     ") == ("cuda_tile.addf", "rhs")
    assert _active("%v = make_partition_view %t\n    : ") == ("cuda_tile.make_partition_view", "type(result)")
    # the op name itself, then after it
    assert _active("%0 = addf") == ("cuda_tile.addf", None)
    # a new statement, an unknown op, a comment, the results, a region body
    assert _active("%0 = addf %a, %b : tile<f32>\n") is None
    assert _active("%0 = ad") is None
    assert _active("%0 = addf %a, %b // rhs ") is None
    assert _active("%0, %1 = ") is None
    assert _active("%r = for %i in (%a to %b, step %c) : tile<i32> {\n  ") is None
    assert _active("entry @k() {\n  %0 = muli ") == ("cuda_tile.muli", "lhs")


def test_works_on_a_line_that_does_not_parse_yet():
    text = ("cuda_tile.module @m {\n  entry @k(%a: tile<4xf32>) {\n    %0 = addf %a, \n"
            "    return\n  }\n}\n")
    found = signature_help(text, Position(2, 18))
    assert found is not None and found.signature.parameters[found.active_parameter].name == "rhs"


def test_every_op_line_of_a_corpus_kernel_has_a_signature(corpus):
    path = min((corpus / "kernels").glob("*.sm_100.mlir"))
    text = path.read_text()
    source = SourceText(text)
    checked = 0
    for line in range(source.line_count):
        m = re.match(r"\s*(?:%[^=]*=\s*)?([a-z_][a-z0-9_.]*)", source.line_text(line))
        if m is None or m.group(1) in ("}",):
            continue
        found = signature_help(text, Position(line, m.end()))
        assert found is not None, source.line_text(line)
        assert found.signature.op.endswith("." + m.group(1).split(".")[-1])
        checked += 1
    assert checked > 20
