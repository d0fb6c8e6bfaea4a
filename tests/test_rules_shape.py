"""Tests of the shape and conversion rules (tile_lsp/analysis/verify/rules/shape.py, conversion.py)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Severity


def diags(text: str, **options) -> list[tuple[int, int, str, str]]:
    """(1-based line, 1-based column, severity, message) of every diagnostic of ``text``."""
    out = []
    for d in analyze_text(text, AnalysisOptions(**options)).diagnostics:
        out.append((d.range.start.line + 1, d.range.start.character + 1, d.severity.value, d.message))
    return out


def errors(text: str, **options) -> list[tuple[int, int, str]]:
    return [(line, col, msg) for line, col, sev, msg in diags(text, **options) if sev == Severity.ERROR.value]


def func(body: str, args: str = "") -> str:
    """``body`` (one op per line) inside a testing function with arguments ``args``."""
    return f"cuda_tile.module @m {{\n  testing$func @f({args}) {{\n{body}\n  }}\n}}\n"


def tile(shape, elem: str = "f32") -> str:
    dims = "x".join(str(d) for d in shape)
    return f"!cuda_tile.tile<{dims}x{elem}>" if shape else f"!cuda_tile.tile<{elem}>"


# ---------------------------------------------------------------------------
# permute
# ---------------------------------------------------------------------------


def permute(src_shape, perm, res_shape) -> str:
    p = ", ".join(str(x) for x in perm)
    return func(f"    %0 = permute %a [{p}] : {tile(src_shape)} -> {tile(res_shape)}", f"%a: {tile(src_shape)}")


@pytest.mark.parametrize("src,perm,res,message", [
    ((2,), [0], (2,), "expects at least rank 2, but got: 1"),
    ((1, 2), [0, 1, 100], (1, 2), "expect permutation size (3) to equal the rank of the source (2)"),
    ((1, 2), [0, 0], (1, 2), "expect permutation elements to be unique"),
    ((1, 2), [0, 100], (1, 2), "permutation element at index 1 (100) is out of bound [0, 2)"),
    ((1, 2), [-1, 1], (1, 2), "permutation element at index 0 (-1) is out of bound [0, 2)"),
    ((1, 2), [1, 0], (1, 1), "result shape invalid at index 0, expected: 2, but got: 1"),
])
def test_permute_messages(src, perm, res, message):
    assert errors(permute(src, perm, res)) == [(3, 10, f"'cuda_tile.permute' op {message}")]


def test_permute_unique_before_bounds():
    # PermuteOp::verify checks uniqueness before the bounds of each element
    assert errors(permute((2, 4), [7, 7], (2, 4)))[0][2].endswith("expect permutation elements to be unique")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=2, max_size=4), st.data())
def test_permute_valid_permutations_pass(shape, data):
    perm = data.draw(st.permutations(list(range(len(shape)))))
    res = [shape[p] for p in perm]
    assert errors(permute(shape, perm, res)) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([2, 4, 8]), min_size=2, max_size=4), st.data())
def test_permute_wrong_result_shape_reported(shape, data):
    perm = data.draw(st.permutations(list(range(len(shape)))))
    res = [shape[p] for p in perm]
    k = data.draw(st.integers(0, len(shape) - 1))
    res[k] *= 2
    found = errors(permute(shape, perm, res))
    assert len(found) == 1
    first_bad = next(i for i, p in enumerate(perm) if res[i] != shape[p])
    assert found[0][2] == (f"'cuda_tile.permute' op result shape invalid at index {first_bad}, "
                           f"expected: {shape[perm[first_bad]]}, but got: {res[first_bad]}")


# ---------------------------------------------------------------------------
# reshape / broadcast / cat
# ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 4]), max_size=3), st.lists(st.sampled_from([1, 2, 4]), max_size=3))
def test_reshape_counts_elements(src, res):
    text = func(f"    %0 = reshape %a : {tile(src)} -> {tile(res)}", f"%a: {tile(src)}")
    n = lambda s: 1 if not s else __import__("math").prod(s)  # noqa: E731
    expected = [] if n(src) == n(res) else [
        (3, 10, "'cuda_tile.reshape' op expected source tile and result tile to have the same number of elements")]
    assert errors(text) == expected


def test_broadcast_incompatible_shape():
    text = func(f"    %0 = broadcast %a : {tile((4, 4))} -> {tile((2, 4))}", f"%a: {tile((4, 4))}")
    assert errors(text) == [(3, 10, "'cuda_tile.broadcast' op expects the shape of source tile to be compatible "
                                    "with that of the result tile, but got: 4, 4 and 2, 4")]


def test_broadcast_ones_expand():
    assert errors(func(f"    %0 = broadcast %a : {tile((1, 4))} -> {tile((8, 4))}", f"%a: {tile((1, 4))}")) == []


def cat(dim: int, res) -> str:
    return func(f"    %0 = cat %a, %a dim = {dim} : {tile((2, 2))}, {tile((2, 2))} -> {tile(res)}",
                f"%a: {tile((2, 2))}")


@pytest.mark.parametrize("dim,res,message", [
    (-1, (2, 4), "expect dim to be [0, 2), but got: -1"),
    (2, (2, 4), "expect dim to be [0, 2), but got: 2"),
    (1, (2, 16), "invalid concat at position 1, expected: 4 but got: 16"),
    (1, (4, 4), "expect lhs and result shapes to match at non-concat position 0, expected: 2 but got: 4"),
])
def test_cat_messages(dim, res, message):
    assert errors(cat(dim, res)) == [(3, 10, f"'cuda_tile.cat' op {message}")]


def test_cat_valid():
    assert errors(cat(0, (4, 2))) == []


# ---------------------------------------------------------------------------
# extract
# ---------------------------------------------------------------------------


def extract(src, res, n_idx: int, elem: str = "f32", index_value: str | None = None) -> str:
    lines = []
    idx = ", ".join(["%i"] * n_idx)
    if index_value is not None:
        lines.append(f"    %i = constant <i32: {index_value}> : !cuda_tile.tile<i32>")
        args = f"%t: {tile(src)}"
    else:
        args = f"%t: {tile(src)}, %i: !cuda_tile.tile<i32>"
    lines.append(f"    %0 = extract %t[{idx}] : {tile(src)} -> {tile(res, elem)}")
    return func("\n".join(lines), args)


@pytest.mark.parametrize("src,res,n,elem,message", [
    ((8,), (2,), 1, "i32", "source and result element type do not match"),
    ((8,), (2,), 2, "f32", "expected 1 indices, but got 2"),
    ((8, 4), (4, 8), 2, "f32", "source dimension 1 size (4) must be evenly divisible by result dimension 1 size (8)"),
])
def test_extract_messages(src, res, n, elem, message):
    assert errors(extract(src, res, n, elem)) == [(3, 10, f"'cuda_tile.extract' op {message}")]


def test_extract_constant_index_warnings():
    found = diags(extract((8,), (2,), 1, index_value="7"))
    assert found == [(4, 10, "warning", "extract index 0 value 7 may be out of bounds (max valid index: 3)")]
    found = diags(extract((8,), (2,), 1, index_value="-1"))
    assert found == [(4, 10, "warning", "extract index 0 has negative value -1, which may cause undefined behavior")]


# ---------------------------------------------------------------------------
# select / iota / bitcast / pack / unpack
# ---------------------------------------------------------------------------


def test_select_f4():
    t, c = tile((4,), "f4E2M1FN"), tile((4,), "i1")
    text = func(f"    %0 = select %c, %a, %a : {c}, {t}", f"%c: {c}, %a: {t}")
    assert errors(text) == [(3, 10, "'cuda_tile.select' op cannot operate on sub-byte type F4E2M1FN")]


@pytest.mark.parametrize("shape,elem,message", [
    ((), "i64", "expects result type to be 1-d tile"),
    ((32, 64), "i32", "expects result type to be 1-d tile"),
    ((512,), "i8", "the number of elements 512 exceeds the maximum value of element type 'i8'"),
])
def test_iota_messages(shape, elem, message):
    assert errors(f"cuda_tile.iota : {tile(shape, elem)}\n") == [(1, 1, f"'cuda_tile.iota' op {message}")]


@pytest.mark.parametrize("n,elem,ok", [(256, "i8", True), (257, "i8", False), (2, "i1", True), (4, "i1", False)])
def test_iota_element_range(n, elem, ok):
    assert (errors(f"cuda_tile.iota : {tile((n,), elem)}\n") == []) is ok


WIDTHS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "tf32": 19}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(WIDTHS)), st.sampled_from(sorted(WIDTHS)))
def test_bitcast_widths(a, b):
    text = func(f"    %0 = bitcast %x : {tile((4,), a)} -> {tile((4,), b)}", f"%x: {tile((4,), a)}")
    expected = [] if WIDTHS[a] == WIDTHS[b] else [
        (3, 10, f"'cuda_tile.bitcast' op types must be equal width, cannot convert '{tile((4,), a)}' of width "
                f"{WIDTHS[a]} to type '{tile((4,), b)}' of width {WIDTHS[b]}")]
    assert errors(text) == expected


@pytest.mark.parametrize("src,res,message", [
    ((32, 32), "f16", "expects source and result to be rank-1 tiles"),
    ((32,), "f8E4M3FN", "expects source and result to have different element type widths"),
])
def test_pack_messages(src, res, message):
    s = tile(src, res)
    text = func(f"    %0 = pack %a : {s} -> {tile((src[0] * 2,) + src[1:], 'i8')}", f"%a: {s}")
    assert errors(text) == [(3, 10, f"'cuda_tile.pack' op {message}")]


@pytest.mark.parametrize("op,src,res,message", [
    ("pack", "tile<32xf16>", "tile<32xi8>",
     "expects source and result to have the same size in bytes, but got source tile size 64 bytes and result tile "
     "size 32 bytes"),
    ("unpack", "tile<64xi8>", "tile<64xf16>",
     "expects source and result to have the same size in bytes, but got source tile size 64 bytes and result tile "
     "size 128 bytes"),
    ("unpack", "tile<32xi8>", "tile<32xi8>", "expects source and result to have different element type widths"),
])
def test_pack_unpack_sizes(op, src, res, message):
    text = func(f"    %0 = {op} %a : {src} -> {res}", f"%a: !cuda_tile.{src}")
    assert errors(text) == [(3, 10, f"'cuda_tile.{op}' op {message}")]


def test_pack_valid_and_tf32_storage():
    assert errors(func("    %0 = pack %a : tile<32xf16> -> tile<64xi8>", "%a: !cuda_tile.tile<32xf16>")) == []
    # tf32 occupies 32 bits in a packed tile
    assert errors(func("    %0 = pack %a : tile<4xtf32> -> tile<16xi8>", "%a: !cuda_tile.tile<4xtf32>")) == []


# ---------------------------------------------------------------------------
# conversions
# ---------------------------------------------------------------------------


INTS = [1, 8, 16, 32, 64]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(INTS), st.sampled_from(INTS), st.sampled_from(["exti", "trunci"]))
def test_integer_width_rules(a, b, op):
    sign = " signed" if op == "exti" else ""
    src, dst = tile((2,), f"i{a}"), tile((2,), f"i{b}")
    text = func(f"    %0 = {op} %x{sign} : {src} -> {dst}", f"%x: {src}")
    bad = b <= a if op == "exti" else b >= a
    msg = "extending to smaller or identical integer" if op == "exti" else "truncating to larger or identical integer"
    assert errors(text) == ([(3, 10, f"'cuda_tile.{op}' op {msg}")] if bad else [])


def test_ftof_no_op_and_rounding():
    t = tile((2,), "f16")
    assert errors(func(f"    %0 = ftof %x : {t} -> {t}", f"%x: {t}")) == [
        (3, 10, "'cuda_tile.ftof' op converting tiles must not be a no-op")]
    text = func(f"    %0 = ftof %x rounding<nearest_even> : {tile((2,), 'f32')} -> {tile((2,), 'f8E8M0FNU')}",
                f"%x: {tile((2,), 'f32')}")
    assert errors(text) == [(3, 10, "'cuda_tile.ftof' op invalid rounding mode specified for conversion to "
                                    "f8E8M0FNU. Only 'zero' and 'positive_inf' are supported")]


def test_ftof_rounding_by_version():
    text = func(f"    %0 = ftof %x rounding<zero> : {tile((2,), 'f32')} -> {tile((2,), 'f16')}",
                f"%x: {tile((2,), 'f32')}")
    message = (3, 10, "'cuda_tile.ftof' op invalid rounding mode specified. Only 'nearest_even' is supported")
    assert errors(text, tile_version="13.3") == [message]
    assert errors(text, tile_version="13.1") == [message]
    assert errors(text) == []  # Tile IR 13.4+ (newest) accepts it
    assert errors(text, mlir_compat=True) == []  # the version decides, not the parse mode


def test_ftof_generic_rounding_attribute():
    text = ('%0 = "use"() : () -> !cuda_tile.tile<2xf32>\n'
            '%1 = "cuda_tile.ftof"(%0) <{rounding_mode = #cuda_tile.rounding<nearest_even>}> : '
            '(!cuda_tile.tile<2xf32>) -> !cuda_tile.tile<2xf16>\n')
    assert errors(text, mlir_compat=True) == []


def test_itof_and_ftoi():
    text = func(f"    %0 = itof %x signed : {tile((2,), 'i8')} -> {tile((2,), 'f8E8M0FNU')}", f"%x: {tile((2,), 'i8')}")
    assert errors(text) == [(3, 10, "'cuda_tile.itof' op integer to f8E8M0FNU conversion is not supported, "
                                    "please first convert to another float type")]
    text = func(f"    %0 = itof %x signed rounding<zero> : {tile((2,), 'i8')} -> {tile((2,), 'f16')}",
                f"%x: {tile((2,), 'i8')}")
    assert errors(text) == [(3, 10, "'cuda_tile.itof' op invalid rounding mode specified. Only 'nearest_even' "
                                    "is supported")]
    ok = func(f"    %0 = ftoi %x signed : {tile((2,), 'f16')} -> {tile((2,), 'i32')}", f"%x: {tile((2,), 'f16')}")
    assert errors(ok) == []


def test_permute_file_from_corpus(corpus):
    from tile_lsp.analysis.verify.verify_diagnostics import verify

    path = corpus / "conformance" / "Dialect" / "CudaTile" / "permute_invalid.mlir"
    analysis = analyze_text(path.read_text(), AnalysisOptions(split_input_file=True, mlir_compat=True))
    failing = [ca.chunk.start_line for ca in analysis.chunks
               if verify(ca.chunk.text, ca.diagnostics, line_offset=ca.chunk.start_line)]
    assert failing == []


def test_no_errors_on_valid_shapes():
    body = "\n".join([
        f"    %0 = permute %a [1, 0] : {tile((2, 4))} -> {tile((4, 2))}",
        f"    %1 = reshape %a : {tile((2, 4))} -> {tile((8,))}",
        f"    %2 = cat %a, %a dim = 1 : {tile((2, 4))}, {tile((2, 4))} -> {tile((2, 8))}",
        f"    %3 = bitcast %a : {tile((2, 4))} -> {tile((2, 4), 'i32')}",
    ])
    assert errors(func(body, f"%a: {tile((2, 4))}")) == []


def test_all_shapes_of_broadcast_rank2():
    for s0, s1, r0, r1 in itertools.product([1, 2], [1, 4], [2], [4]):
        text = func(f"    %0 = broadcast %a : {tile((s0, s1))} -> {tile((r0, r1))}", f"%a: {tile((s0, s1))}")
        assert errors(text) == []
