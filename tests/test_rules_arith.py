"""Arithmetic/math modifier and mma rules (tile_lsp/analysis/verify/rules/arith.py).

Messages are those of NVIDIA's CudaTile.cpp verifiers and SharedVerifiers.h,
placed at the op name as cuda-tile-opt does.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.verify.rules.arith import MMAF_ACCUMULATORS

FLOATS = ["f16", "bf16", "f32", "f64"]


def func(args: str, body: str) -> str:
    return ("cuda_tile.module @m {\n  cuda_tile.testing$func @f(" + args + ") {\n    "
            + body + "\n  }\n}\n")


def errors(text: str) -> list[tuple[str, int, int]]:
    an = analyze_text(text, AnalysisOptions(mlir_compat=True))
    return [(d.message, d.range.start.line, d.range.start.character) for d in an.diagnostics]


def op_pos(text: str, opname: str) -> tuple[int, int]:
    pos = text.index(opname)
    return text.count("\n", 0, pos), pos - (text.rfind("\n", 0, pos) + 1)


def single(text: str) -> tuple[str, tuple[int, int]]:
    es = errors(text)
    assert len(es) == 1, es
    return es[0][0], es[0][1:]


# ---------------------------------------------------------------------------
# flush_to_zero / approx / full
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["addf", "subf", "mulf", "maxf", "minf"])
@pytest.mark.parametrize("elem", FLOATS)
def test_ftz_binary(op, elem):
    t = f"!cuda_tile.tile<4x{elem}>"
    text = func(f"%a: {t}, %b: {t}", f"%0 = cuda_tile.{op} %a, %b flush_to_zero : {t}")
    es = errors(text)
    if elem == "f32":
        assert es == []
    else:
        msg, pos = single(text)
        assert msg == f"'cuda_tile.{op}' op flush_to_zero modifier only supported for f32 data type, but got: '{elem}'"
        assert pos == op_pos(text, f"cuda_tile.{op} ")


@pytest.mark.parametrize("op", ["exp2", "rsqrt", "sqrt"])
@pytest.mark.parametrize("elem", FLOATS)
def test_ftz_unary(op, elem):
    t = f"!cuda_tile.tile<4x{elem}>"
    text = func(f"%a: {t}", f"%0 = cuda_tile.{op} %a flush_to_zero : {t}")
    if elem == "f32":
        assert errors(text) == []
    else:
        assert single(text)[0] == (f"'cuda_tile.{op}' op flush_to_zero modifier only supported for f32 data "
                                   f"type, but got: '{elem}'")


def test_fma_ftz():
    t = "!cuda_tile.tile<4xf16>"
    text = func(f"%a: {t}", f"%0 = cuda_tile.fma %a, %a, %a flush_to_zero : {t}")
    assert single(text)[0] == ("'cuda_tile.fma' op flush_to_zero modifier only supported for f32 data type, "
                               "but got: 'f16'")


@pytest.mark.parametrize("mode,word", [("approx", "approx"), ("full", "full")])
@pytest.mark.parametrize("elem", FLOATS)
def test_divf_modes(mode, word, elem):
    t = f"!cuda_tile.tile<4x{elem}>"
    text = func(f"%a: {t}", f"%0 = cuda_tile.divf %a, %a rounding<{mode}> : {t}")
    if elem == "f32":
        assert errors(text) == []
    else:
        assert single(text)[0] == (f"'cuda_tile.divf' op {word} modifier only supported for f32 data type, "
                                   f"but got: '{elem}'")


def test_divf_ftz_reported_before_approx():
    t = "!cuda_tile.tile<4xf64>"
    text = func(f"%a: {t}", f"%0 = cuda_tile.divf %a, %a rounding<approx> flush_to_zero : {t}")
    assert single(text)[0].startswith("'cuda_tile.divf' op flush_to_zero modifier")


@pytest.mark.parametrize("op", ["exp", "tanh"])
@pytest.mark.parametrize("elem", FLOATS)
def test_approx_exp_tanh(op, elem):
    t = f"!cuda_tile.tile<4x{elem}>"
    text = func(f"%a: {t}", f"%0 = cuda_tile.{op} %a rounding<approx> : {t}")
    if elem == "f32":
        assert errors(text) == []
    else:
        assert single(text)[0] == (f"'cuda_tile.{op}' op approx modifier only supported for f32 data type, "
                                   f"but got: '{elem}'")


# ---------------------------------------------------------------------------
# rounding modes the verifiers reject (generic form: the custom parsers reject more)
# ---------------------------------------------------------------------------


def generic(op: str, mode: str, elem: str = "f32", n: int = 2) -> str:
    t = f"!cuda_tile.tile<4x{elem}>"
    operands = ", ".join(["%a"] * n)
    return func(f"%a: {t}", f'%0 = "cuda_tile.{op}"({operands}) <{{rounding_mode = #cuda_tile.rounding<{mode}>}}> '
                            f": ({', '.join([t] * n)}) -> {t}")


@pytest.mark.parametrize("op,n", [("addf", 2), ("subf", 2), ("mulf", 2), ("fma", 3)])
@pytest.mark.parametrize("mode", ["approx", "full", "nearest_int_to_zero", "zero"])
def test_ieee_rounding(op, n, mode):
    text = generic(op, mode, n=n)
    if mode == "zero":
        assert errors(text) == []
    else:
        msg, pos = single(text)
        assert msg == (f"'cuda_tile.{op}' op invalid rounding mode specified, expect one of "
                       "[nearest_even, zero, negative_inf, positive_inf]")
        assert pos == op_pos(text, f'"cuda_tile.{op}"')


def test_divf_sqrt_rounding_lists():
    assert single(generic("divf", "nearest_int_to_zero"))[0] == (
        "'cuda_tile.divf' op invalid rounding mode specified, expect one of "
        "[nearest_even, zero, negative_inf, positive_inf, approx, full]")
    assert single(generic("sqrt", "full", n=1))[0] == (
        "'cuda_tile.sqrt' op invalid rounding mode specified, expect one of "
        "[nearest_even, zero, negative_inf, positive_inf, approx]")
    assert single(generic("exp", "zero", n=1))[0] == (
        "'cuda_tile.exp' op invalid rounding mode specified, expect one of [approx, full]")


def test_generic_enum_case_is_the_one_mlir_reads():
    """The builder decodes ``#cuda_tile.rounding<...>`` once (its case a keyword or a string between
    blanks and comments, as the enum's generated ``FieldParser`` reads it) and every verifier reads
    that case: ``"full"`` and ``full // ...`` are ``full``, through an alias too.  cuda-tile-opt
    accepts ``divf`` with ``#cuda_tile.rounding<"full">`` and rejects ``addf`` with it."""
    t = "!cuda_tile.tile<4xf32>"
    assert errors(generic("divf", '"full"')) == []
    assert errors(generic("exp", " approx // the case\n", n=1)) == []
    assert single(generic("addf", '"full"'))[0] == (
        "'cuda_tile.addf' op invalid rounding mode specified, expect one of "
        "[nearest_even, zero, negative_inf, positive_inf]")
    def aliased(op: str) -> str:
        return "#r = #cuda_tile.rounding<full>\n" + func(
            f"%a: {t}", f'%0 = "cuda_tile.{op}"(%a, %a) <{{rounding_mode = #r}}> : ({t}, {t}) -> {t}')

    assert errors(aliased("divf")) == []
    assert single(aliased("mulf"))[0] == (
        "'cuda_tile.mulf' op invalid rounding mode specified, expect one of "
        "[nearest_even, zero, negative_inf, positive_inf]")

    def ftoi(mode: str) -> str:  # conversion.py's rule reads the same case (FToIOp::verify)
        return func(f"%a: {t}", f'%0 = "cuda_tile.ftoi"(%a) <{{rounding_mode = #cuda_tile.rounding<{mode}>, '
                                f'signedness = #cuda_tile.signedness<"signed">}}> : ({t}) -> !cuda_tile.tile<4xi32>')

    assert errors(ftoi('"nearest_int_to_zero"')) == []
    assert single(ftoi('"zero"'))[0] == (
        "'cuda_tile.ftoi' op invalid rounding mode specified. Only 'nearest_int_to_zero' is supported")


def test_generic_enum_attribute_value():
    """``DialectAttr.value`` of a generic enum attribute is its :class:`EnumAttr`; one that names no
    case of its enum has none (the parser reported it)."""
    from tile_lsp.analysis.ir import attributes as A
    from tile_lsp.analysis.syntax.parse_rules.entry import decode_enum_attribute, optimization_hint_entries

    assert decode_enum_attribute("rounding", ' "zero" ') == A.EnumAttr("RoundingMode", "zero", "rounding")
    assert decode_enum_attribute("signedness", "unsigned // u\n").case == "unsigned"
    assert decode_enum_attribute("rounding", "signed") is None
    assert decode_enum_attribute("rounding", "zero zero") is None
    assert decode_enum_attribute("div_by", "16") is None
    text = generic("divf", " zero ")
    op = next(o for o in analyze_text(text).chunks[0].module.walk() if o.name == "cuda_tile.divf")
    attr = op.attr("rounding_mode")
    assert isinstance(attr, A.DialectAttr) and attr.body == " zero "
    assert attr.value == A.EnumAttr("RoundingMode", "zero", "rounding") and A.enum_case(attr) == "zero"
    assert optimization_hint_entries(attr) is None  # a decoded value, but no hints


def test_tanh_rounding_error_does_not_stop_verification():
    t = "!cuda_tile.tile<4xf32>"
    text = func(f"%a: {t}", f"%0 = cuda_tile.tanh %a rounding<nearest_even> : {t}")
    assert single(text)[0] == "'cuda_tile.tanh' op invalid rounding mode specified, expect one of [approx, full]"


# ---------------------------------------------------------------------------
# integer ops
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("signedness", ["signed", "unsigned"])
@pytest.mark.parametrize("mode", ["zero", "negative_inf", "positive_inf"])
def test_divi_floor_unsigned(signedness, mode):
    t = "!cuda_tile.tile<4xi32>"
    text = func(f"%a: {t}", f"%0 = cuda_tile.divi %a, %a {signedness} rounding<{mode}> : {t}")
    if mode == "negative_inf" and signedness == "unsigned":
        msg, pos = single(text)
        assert msg == "'cuda_tile.divi' op rounding mode 'negative_inf' is not allowed with 'unsigned' flag"
        assert pos == op_pos(text, "cuda_tile.divi")
    else:
        assert errors(text) == []


@pytest.mark.parametrize("flag", ["none", "no_signed_wrap", "no_unsigned_wrap", "no_wrap"])
def test_negi_overflow(flag):
    t = "!cuda_tile.tile<4xi16>"
    text = func(f"%a: {t}", f"%0 = cuda_tile.negi %a overflow<{flag}> : {t}")
    if flag == "no_unsigned_wrap":
        assert single(text)[0] == "'cuda_tile.negi' op 'no_unsigned_wrap' overflow flag is not supported"
    else:
        assert errors(text) == []


def test_select_sub_byte():
    t = "!cuda_tile.tile<4xf4E2M1FN>"
    c = "!cuda_tile.tile<4xi1>"
    text = func(f"%c: {c}, %a: {t}", f"%0 = cuda_tile.select %c, %a, %a : {c}, {t}")
    assert single(text)[0] == "'cuda_tile.select' op cannot operate on sub-byte type F4E2M1FN"


# ---------------------------------------------------------------------------
# mma
# ---------------------------------------------------------------------------


def mmaf(lhs: str, rhs: str, acc: str) -> str:
    return func(f"%a: !cuda_tile.tile<{lhs}>, %b: !cuda_tile.tile<{rhs}>, %c: !cuda_tile.tile<{acc}>",
                f"%0 = cuda_tile.mmaf %a, %b, %c : !cuda_tile.tile<{lhs}>, !cuda_tile.tile<{rhs}>, "
                f"!cuda_tile.tile<{acc}>")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([4, 8, 16]), st.sampled_from([4, 8, 16]), st.sampled_from([4, 8, 16]),
       st.sampled_from([4, 8, 16]), st.sampled_from([4, 8, 16]), st.sampled_from([4, 8, 16]))
def test_mma_shape_property(m, k, k2, n, m2, n2):
    text = mmaf(f"{m}x{k}xf32", f"{k2}x{n}xf32", f"{m2}x{n2}xf32")
    es = [e[0] for e in errors(text)]
    if k != k2:
        assert es == [f"'cuda_tile.mmaf' op  shape error: dim 1 of lhs ({k}) and dim 0 of rhs ({k2}) must match, "
                      f"but got lhs shape ({m}, {k}) and rhs shape ({k2}, {n})"]
    elif m != m2:
        assert es == [f"'cuda_tile.mmaf' op  shape error: dim 0 of lhs ({m}) and dim 0 of acc ({m2}) must match, "
                      f"but got lhs shape ({m}, {k}) and acc shape ({m2}, {n2})"]
    elif n != n2:
        assert es == [f"'cuda_tile.mmaf' op  shape error: dim 1 of rhs ({n}) and dim 1 of acc ({n2}) must match, "
                      f"but got rhs shape ({k2}, {n}) and acc shape ({m2}, {n2})"]
    else:
        assert es == []


def test_mma_batch():
    text = mmaf("2x4x8xf32", "2x8x16xf32", "4x4x16xf32")
    assert single(text)[0] == ("'cuda_tile.mmaf' op shape error: dim 0 of lhs (2) and dim 0 of acc (4) must match, "
                               "but got lhs shape (2, 4, 8) and acc shape (4, 4, 16)")
    text = mmaf("2x4x8xf32", "4x8x16xf32", "2x4x16xf32")
    assert single(text)[0].startswith("'cuda_tile.mmaf' op shape error: dim 0 of lhs (2) and dim 0 of rhs (4)")


def test_mma_rank():
    assert single(mmaf("8xf32", "8xf32", "8xf32"))[0] == "'cuda_tile.mmaf' op operands must be 2D or 3D tiles"


@pytest.mark.parametrize("inp", ["f16", "bf16", "tf32", "f32", "f64", "f8E4M3FN", "f8E5M2"])
@pytest.mark.parametrize("acc", ["f16", "f32", "f64"])
def test_mmaf_accumulators(inp, acc):
    allowed = dict(MMAF_ACCUMULATORS)[inp]
    es = [e[0] for e in errors(mmaf(f"2x2x{inp}", f"2x2x{inp}", f"2x2x{acc}"))]
    if acc in allowed:
        assert es == []
    else:
        listed = ", ".join(f"'{a}'" for a in allowed)
        assert es == [f"'cuda_tile.mmaf' op unsupported combination of element types. Input type '{inp}' expects "
                      f"accumulator/result type to be one of {{{listed}}}, but got '{acc}'"]


def scaled(a: str, b: str, sa: str, sb: str, acc: str = "128x128xf32") -> str:
    names = ["a", "b", "c", "sa", "sb"]
    ts = [f"!cuda_tile.tile<{x}>" for x in (a, b, acc, sa, sb)]
    args = ", ".join(f"%{n}: {t}" for n, t in zip(names, ts))
    return func(args, "%0 = cuda_tile.mmaf_scaled %a, %b, %c, %sa, %sb : " + ", ".join(ts))


def test_mmaf_scaled_valid():
    assert errors(scaled("128x128xf4E2M1FN", "128x128xf4E2M1FN", "128x8xf8E8M0FNU", "8x128xf8E8M0FNU")) == []
    assert errors(scaled("128x128xf8E4M3FN", "128x128xf8E4M3FN", "128x4xf8E8M0FNU", "4x128xf8E8M0FNU")) == []


def test_mmaf_scaled_errors():
    msg = single(scaled("128x128xf8E5M2", "128x128xf8E5M2", "128x4xf8E4M3FN", "4x128xf8E4M3FN"))[0]
    assert msg == ("'cuda_tile.mmaf_scaled' op unsupported combination of element types. Scale type 'f8E4M3FN' "
                   "expects lhs and rhs element types to be 'f4E2M1FN', but got 'f8E5M2'")
    msg = single(scaled("128x128xf4E2M1FN", "128x128xf4E2M1FN", "64x4xf8E8M0FNU", "4x128xf8E8M0FNU"))[0]
    assert msg == ("'cuda_tile.mmaf_scaled' op shape error: dim 0 of lhs (128) and dim 0 of lhs_scale (64) must "
                   "match, but got lhs shape (128, 128) and lhs_scale shape (64, 4)")
    msg = single(scaled("128x128xf4E2M1FN", "128x128xf4E2M1FN", "128x8xf8E8M0FNU", "4x128xf8E8M0FNU"))[0]
    assert msg.endswith("dim 1 of lhs_scale (8) and dim 0 of rhs_scale (4) must match, but got lhs_scale shape "
                        "(128, 8) and rhs_scale shape (4, 128)")
    msg = single(scaled("128x128xf8E4M3FN", "128x128xf8E4M3FN", "128x8xf8E8M0FNU", "8x128xf8E8M0FNU"))[0]
    assert msg.endswith("shape error: f8 element type requires block scale factor of lhs_scale and rhs_scale to "
                        "be 32, but got 16")
    msg = single(scaled("128x128xf4E2M1FN", "128x128xf4E2M1FN", "128x16xf8E8M0FNU", "16x128xf8E8M0FNU"))[0]
    assert msg.endswith("with f8E8M0FNU scales requires block scale factor of lhs_scale and rhs_scale to be 16 "
                        "or 32, but got 8")
    msg = single(scaled("128x128xf4E2M1FN", "128x128xf4E2M1FN", "128x256xf8E8M0FNU", "256x128xf8E8M0FNU"))[0]
    assert msg.endswith("shape error: dim 1 of lhs_scale (256) must be a divisor of dim 1 of lhs (128), but got "
                        "lhs_scale shape (128, 256) and lhs shape (128, 128)")


def test_mmai_shapes():
    t = func("%a: !cuda_tile.tile<4x8xi8>, %b: !cuda_tile.tile<4x8xi8>, %c: !cuda_tile.tile<4x8xi32>",
             "%0 = cuda_tile.mmai %a, %b, %c signed signed : !cuda_tile.tile<4x8xi8>, !cuda_tile.tile<4x8xi8>, "
             "!cuda_tile.tile<4x8xi32>")
    assert single(t)[0].startswith("'cuda_tile.mmai' op  shape error: dim 1 of lhs (8) and dim 0 of rhs (4)")


def test_corpus_files_pass(corpus):
    """arith_invalid/math_invalid chunks of this area verify (the rest are parser messages)."""
    from tile_lsp.analysis.verify.verify_diagnostics import verify

    base = corpus / "conformance" / "Dialect" / "CudaTile"
    for name, minimum in (("math_invalid.mlir", 103), ("arith_invalid.mlir", 214)):
        an = analyze_text((base / name).read_text(), AnalysisOptions(split_input_file=True, mlir_compat=True))
        ok = sum(1 for ca in an.chunks if not verify(ca.chunk.text, ca.diagnostics, line_offset=ca.chunk.start_line))
        assert ok >= minimum, name
