"""Typed dense literals of constant/global (tile_lsp/analysis/syntax/parse_rules/dense.py).

Messages and positions are those of NVIDIA's parseDenseTypedElementsAttr
(CudaTile.cpp) and MLIR's float literal parser, as cuda-tile-opt prints them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.syntax.parse_rules.dense import DENSE_ELEMENT_TYPES, INTEGER_BOUNDS

PREFIX = "custom op 'cuda_tile.constant' "
TYPES = " or ".join(DENSE_ELEMENT_TYPES)


def wrap(line: str) -> str:
    return "cuda_tile.module @m {\n  entry @k() {\n    " + line + "\n    return\n  }\n}\n"


def diags(text: str) -> list[tuple[str, str, int, int]]:
    """(severity, message, line, column) of every diagnostic, 0-based positions."""
    an = analyze_text(text, AnalysisOptions(mlir_compat=True))
    return [(d.severity.value, d.message, d.range.start.line, d.range.start.character) for d in an.diagnostics]


def at(text: str, needle: str, nth: int = 0, delta: int = 0) -> tuple[int, int]:
    """0-based (line, column) of the nth occurrence of ``needle`` plus ``delta`` columns."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    pos += delta
    line = text.count("\n", 0, pos)
    return line, pos - (text.rfind("\n", 0, pos) + 1)


def one_error(line: str) -> tuple[str, tuple[int, int], str]:
    text = wrap(line)
    ds = diags(text)
    assert len(ds) == 1, ds
    sev, msg, ln, col = ds[0]
    assert sev == "error"
    return msg, (ln, col), text


def test_shape_mismatch_at_type():
    msg, pos, text = one_error("%0 = constant <i32: [1, 2, 3]> : !cuda_tile.tile<8xi32>")
    assert msg == PREFIX + "inferred shape of elements literal ([3]) does not match type ([8])"
    assert pos == at(text, "!cuda_tile.tile<8")


def test_shape_mismatch_nested():
    msg, pos, text = one_error(
        "%0 = constant <i32: [[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]]> : tile<2x2x2xi32>")
    assert msg == PREFIX + "inferred shape of elements literal ([2, 3, 2]) does not match type ([2, 2, 2])"
    assert pos == at(text, "tile<2x2x2")


def test_list_for_scalar_tile():
    msg, _, _ = one_error("%0 = constant <i32: [1]> : tile<i32>")
    assert msg == PREFIX + "inferred shape of elements literal ([1]) does not match type ([])"


def test_splat_matches_any_shape():
    assert diags(wrap("%0 = constant <f32: 1.5> : tile<4x8xf32>")) == []


def test_ranks_inconsistent_inner():
    # the second inner list is shorter: reported at the ']' closing the outer list
    msg, pos, text = one_error("%0 = constant <i1: [[true, true], [true]]> : !cuda_tile.tile<2x2xi1>")
    assert msg == PREFIX + "tensor literal is invalid; ranks are not consistent between elements"
    assert pos == at(text, "]]>", delta=1)


def test_ranks_inconsistent_between_nested_elements():
    # [[1, 2]] vs [[3, 4], [5, 6]]: after the second element, at the outer ']'
    msg, pos, text = one_error("%0 = constant <i32: [[[1, 2]], [[3, 4], [5, 6]]]> : tile<2x2x2xi32>")
    assert msg.endswith("ranks are not consistent between elements")
    assert pos == at(text, "]]]>", delta=2)


def test_ranks_inconsistent_deeper_reported_after_element():
    # inside the first element: [1, 2] then [3]; reported at the ']' after [3]
    msg, pos, text = one_error("%0 = constant <i32: [[[1, 2], [3]]]> : tile<1x2x2xi32>")
    assert msg.endswith("ranks are not consistent between elements")
    assert pos == at(text, "[3]", delta=3)


@pytest.mark.parametrize("width", sorted(INTEGER_BOUNDS))
def test_integer_bounds_edges(width):
    low, high = INTEGER_BOUNDS[width]
    for value in (low, high):
        assert diags(wrap(f"%0 = constant <i{width}: {value}> : tile<i{width}>")) == []
    if width < 64:
        for value in (low - 1, high + 1):
            msg, pos, text = one_error(f"%0 = constant <i{width}: {value}> : tile<i{width}>")
            assert msg == PREFIX + "integer constant out of range for type"
            assert pos == at(text, str(value))  # at the minus sign for negative values


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1, 8, 16, 32]), st.integers(min_value=-2 ** 40, max_value=2 ** 40))
def test_integer_range_property(width, value):
    low, high = INTEGER_BOUNDS[width]
    ds = diags(wrap(f"%0 = constant <i{width}: [{value}, 0]> : tile<2xi{width}>"))
    if low <= value <= high:
        assert ds == []
    else:
        assert [d[1] for d in ds] == [PREFIX + "integer constant out of range for type"]


def test_hex_integer_out_of_range():
    msg, pos, text = one_error("%0 = constant <i8: 0x10AB> : !cuda_tile.tile<i8>")
    assert msg == PREFIX + "integer constant out of range for type"
    assert pos == at(text, "0x10AB")


def test_i64_too_large():
    text = wrap("%0 = constant <i64: 9223372036854775808> : tile<i64>")
    an = analyze_text(text)  # not compat: both errors of parseInteger + parseNumericValue
    msgs = [d.message for d in an.diagnostics]
    assert msgs[0] == PREFIX + "integer value too large"


def test_bool_for_wide_integer():
    msg, pos, text = one_error("%0 = cuda_tile.constant <i8: true> : tile<i8>")
    assert msg == PREFIX + "expected integer value"
    assert pos == at(text, "true")


def test_bool_for_i1_is_fine():
    assert diags(wrap("%0 = constant <i1: [true, false, 1, 0]> : tile<4xi1>")) == []


def test_float_for_integer():
    # NVIDIA's parser reports this one twice (the element parser, then the literal parser)
    text = wrap("%0 = constant <i32: [1, 2.5]> : tile<2xi32>")
    found = diags(text)
    assert [(sev, msg) for sev, msg, _, _ in found] == [("error", PREFIX + "expected integer value")] * 2
    assert {(ln, col) for _, _, ln, col in found} == {at(text, "2.5")}


def test_empty_list():
    # as for any non-integer token: parseInteger reports, then parseNumericValue again
    text = wrap("%0 = constant <i32: []> : tile<2xi32>")
    found = diags(text)
    assert [(sev, msg) for sev, msg, _, _ in found] == [("error", PREFIX + "expected integer value")] * 2
    assert {(ln, col) for _, _, ln, col in found} == {at(text, "]>")}


def test_decimal_integer_for_float_with_note():
    text = wrap("%0 = constant <f32: [1.0, -7]> : tile<2xf32>")
    an = analyze_text(text, AnalysisOptions(mlir_compat=True))
    [d] = an.diagnostics
    assert d.message == "unexpected decimal integer literal for a floating point value"  # no prefix
    # MLIR lexes '-' apart: the literal starts after it
    assert (d.range.start.line, d.range.start.character) == at(text, "-7", delta=1)
    [note] = d.notes
    assert note.message == "add a trailing dot to make the literal a float"
    assert note.range.start == d.range.start


def test_hex_float():
    assert diags(wrap("%0 = constant <f32: 0x7F800000> : tile<f32>")) == []
    assert diags(wrap("%0 = constant <f16: [0x7C00, 0xFC00]> : tile<2xf16>")) == []
    msg, pos, text = one_error("%0 = constant <f16: 0x12345678> : !cuda_tile.tile<f16>")
    assert msg == "hexadecimal float constant out of range for type"
    assert pos == at(text, "0x1234")
    msg, _, _ = one_error("%0 = constant <f4E2M1FN: [0x1F, 0x1]> : tile<2xf4E2M1FN>")
    assert msg == "hexadecimal float constant out of range for type"


def test_decimal_float_overflow_is_not_an_error():
    assert diags(wrap("%0 = constant <f16: 70000.0> : tile<f16>")) == []


def test_bool_for_float():
    msg, _, _ = one_error("%0 = constant <f32: true> : tile<f32>")
    assert msg == "expected floating point literal"


@pytest.mark.parametrize("literal, shape", [("inf", "f32"), ("nan", "f32"), ("inf", "f16"),
                                             ("[1.0, inf]", "2xf32")])
def test_inf_and_nan_are_no_float_literal(literal, shape):
    """cuda-tile-opt: "expected floating point literal" at the keyword (a hex pattern such as
    0x7F800000 writes infinity); the lowering crashed on the literal accepted before."""
    msg, pos, text = one_error(f"%0 = constant <{shape.split('x')[-1]}: {literal}> : tile<{shape}>")
    assert msg == "expected floating point literal"
    assert pos == at(text, "inf" if "inf" in literal else "nan")


@pytest.mark.parametrize("line, errors", [
    ("%0 = constant <f32: -inf> : tile<f32>", [("expected floating point literal", "inf")]),
    ("%0 = constant <f32: [1.0, -x]> : tile<2xf32>", [("expected floating point literal", "x]")]),
    ("%0 = constant <i32: -foo> : tile<i32>", [("expected integer value", "foo")]),
])
def test_a_minus_before_no_number(line, errors):
    """cuda-tile-opt takes the minus, then wants a literal right after it (the lexer makes a lone
    ``-`` a token of its own): the first error and column it prints, not "expected '>'" (for an
    integer it adds "custom op 'cuda_tile.constant' expected integer value" at the minus)."""
    text = wrap(line)
    assert diags(text)[:1] == [("error", msg, *at(text, where)) for msg, where in errors]


def test_element_type_mismatch():
    msg, pos, text = one_error("%0 = constant <f16: 42.0> : !cuda_tile.tile<f32>")
    assert msg == PREFIX + "mismatch between the element type: 'f16' and the tile element type 'f32'"
    assert pos == at(text, "!cuda_tile.tile")


def test_result_not_a_tile():
    msg, pos, text = one_error("%0 = cuda_tile.constant <f32: 10.0> : tensor<f32>")
    assert msg == PREFIX + f"result #0 must be tile of {TYPES} values, but got 'tensor<f32>'"
    assert pos == at(text, "tensor<f32>")


def test_invalid_element_type_at_next_token():
    msg, pos, text = one_error("%0 = constant <tensor<i32> : 42.0> : tensor<i32>")
    assert msg == PREFIX + f"expect element type to be one of {TYPES} values, but got 'tensor<i32>'"
    assert pos == at(text, ": 42.0")
    msg, pos, text = one_error("%0 = constant <i4: 1> : tile<i4>")
    assert msg.endswith("but got 'i4'")
    assert pos == at(text, ": 1>")


def test_global_uses_the_same_parser():
    text = "cuda_tile.module @m {\n  cuda_tile.global @g <i32: [1, 2, 3]> : !cuda_tile.tile<4xi32>\n}\n"
    [(sev, msg, line, col)] = diags(text)
    assert msg == "custom op 'cuda_tile.global' inferred shape of elements literal ([3]) does not match type ([4])"
    assert (line, col) == at(text, "!cuda_tile.tile")


def _literal(shape, values):
    if not shape:
        return next(values)
    return "[" + ", ".join(_literal(shape[1:], values) for _ in range(shape[0])) + "]"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=3),
       st.sampled_from(["i8", "i32", "f16", "f32", "bf16"]))
def test_well_formed_literals_are_silent(shape, elem):
    values = iter(["1.5" if elem.startswith(("f", "b")) else "3"] * 1000)
    lit = _literal(shape, values)
    dims = "x".join(str(d) for d in shape)
    assert diags(wrap(f"%0 = constant <{elem}: {lit}> : tile<{dims}x{elem}>")) == []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=3),
       st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=3))
def test_shape_mismatch_property(shape, declared):
    lit = _literal(shape, iter(["7"] * 1000))
    dims = "x".join(str(d) for d in declared)
    ds = diags(wrap(f"%0 = constant <i32: {lit}> : tile<{dims}xi32>"))
    if list(shape) == list(declared):
        assert ds == []
    else:
        assert [d[1] for d in ds] == [
            PREFIX + f"inferred shape of elements literal ([{', '.join(map(str, shape))}]) does not match type "
                     f"([{', '.join(map(str, declared))}])"]


def test_corpus_dense_attr_invalid(corpus):
    """Every chunk of dense_attr_invalid.mlir the grammar lets through matches the oracle."""
    from tile_lsp.analysis.verify.verify_diagnostics import verify

    path = corpus / "conformance" / "Dialect" / "CudaTile" / "dense_attr_invalid.mlir"
    an = analyze_text(path.read_text(), AnalysisOptions(split_input_file=True, mlir_compat=True))
    passing = sum(1 for ca in an.chunks if not verify(ca.chunk.text, ca.diagnostics, line_offset=ca.chunk.start_line))
    assert passing >= 18
