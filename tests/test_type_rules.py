"""Tests of tile_lsp.analysis.syntax.type_rules (NVIDIA Types.cpp type parsers and verifiers)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.syntax.builder import Builder
from tile_lsp.analysis.ir.diagnostics import SourceText
from tile_lsp.analysis.syntax.type_rules import (
    MAX_TILE_ELEMENTS,
    NUMBER_SUMMARY,
    TILE_ELEMENT_SUMMARY,
    Anchor,
    locate_type_error,
    type_issue,
    verify_type,
)
from tile_lsp.dialect import types as T
from tile_lsp.grammar.parse import parse

F32 = T.FloatType("f32")
I32 = T.IntegerType(32)
F4 = T.FloatType("f4E2M1FN")


def tv(shape, strides, element=F32) -> T.TensorViewType:
    return T.TensorViewType(tuple(shape), element, tuple(strides))


TV2 = tv((4096, 4096), (4096, 1))

# ---------------------------------------------------------------------------
# tile and pointer
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("t, message", [
    (T.TileType((4, 8), F32), None),
    (T.TileType((), I32), None),
    (T.TileType((4,), T.PointerType(F32)), None),
    (T.TileType((4,), T.IntegerType(4)), None),
    (T.TileType((5, 5), F32), "all dimensions must be powers of two, got 5, 5"),
    (T.TileType((1, 0, 2), F32), "all dimensions must be positive constants, got 1, 0, 2"),
    (T.TileType((1024, 1024, 1024), F32), f"tile would exceed the maximum of {MAX_TILE_ELEMENTS} elements"),
    (T.TileType((8, 4), T.IntegerType(28)), f"failed to verify 'elementType': {TILE_ELEMENT_SUMMARY}"),
    (T.TileType((5, None), F32), "expected static shape"),
    (T.TileType((), F4), "F4E2M1FN tiles must have an even number of elements"),
    (T.TileType((3, 3, 3), F4), "F4E2M1FN tiles must have an even number of elements"),
    (T.TileType((2, 1), F4), None),
    (T.PointerType(F32), None),
    (T.PointerType(T.TileType((2, 2), F32)), f"failed to verify 'pointeeType': {NUMBER_SUMMARY}"),
])
def test_tile_and_pointer(t, message):
    assert verify_type(t) == message


def test_element_summaries_are_ods_text():
    assert NUMBER_SUMMARY == ("f16 or bf16 or f32 or tf32 or f64 or f8E4M3FN or f8E5M2 or f8E8M0FNU or "
                              "f4E2M1FN or i1 or i8 or i16 or i32 or i64")
    assert TILE_ELEMENT_SUMMARY == NUMBER_SUMMARY + " or Pointer type or i4"


def test_static_shape_is_reported_at_the_dimension_without_prefix():
    issue = type_issue(T.TileType((1, None, 4), F32))
    assert issue.anchor == Anchor("dim", 1)
    assert issue.prefixed is False


def test_nested_invalid_type_is_left_to_the_nested_type():
    assert verify_type(T.TileType((4,), T.PointerType(T.TileType((2,), F32)))) is None


@given(st.lists(st.integers(0, 12), min_size=0, max_size=4))
def test_power_of_two_shapes_within_the_limit_are_valid(exponents):
    shape = tuple(2 ** e for e in exponents)
    n = 1
    for d in shape:
        n *= d
    message = verify_type(T.TileType(shape, F32))
    if n <= MAX_TILE_ELEMENTS:
        assert message is None
    else:
        assert message == f"tile would exceed the maximum of {MAX_TILE_ELEMENTS} elements"


@given(st.lists(st.integers(1, 64), min_size=1, max_size=4))
def test_first_failing_dimension_rule(shape):
    shape = tuple(shape)
    message = verify_type(T.TileType(shape, F32))
    if any(d & (d - 1) for d in shape):
        assert message == "all dimensions must be powers of two, got " + ", ".join(map(str, shape))
    else:
        assert message is None


# ---------------------------------------------------------------------------
# tensor_view
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("t, message", [
    (tv((), ()), None),
    (tv((None, 64), (64, 1)), None),
    (tv((None,), (4, 1)), "expected shape and stride to be of same rank but got shape of rank 1 and stride of rank 2"),
    (tv((0,), (1,)), "dimensions must have strictly positive constant sizes but got [0]"),
    (tv((None, 0), (None, 1)), "dimensions must have strictly positive constant sizes but got [?, 0]"),
    (tv((None,), (-5,)), "expected strictly positive integer, got -5"),
    (tv((None,), (0,)), "expected strictly positive integer, got 0"),
    (tv((None,), (-9223372036854775808,)), "expected strictly positive integer, got -9223372036854775808"),
    (tv((32, 32), (32, 1), T.PointerType(F32)), f"failed to verify 'elementType': {NUMBER_SUMMARY}"),
])
def test_tensor_view(t, message):
    assert verify_type(t) == message


# ---------------------------------------------------------------------------
# partition_view / strided_view / gather_scatter_view
# ---------------------------------------------------------------------------


def pv(tile, view=TV2, padding=None, dim_map=None) -> T.PartitionViewType:
    return T.PartitionViewType(tuple(tile), view, padding, None if dim_map is None else tuple(dim_map))


def sv(tile, strides, view=TV2, padding=None, dim_map=None) -> T.StridedViewType:
    return T.StridedViewType(tuple(tile), tuple(strides), view, padding,
                             None if dim_map is None else tuple(dim_map))


@pytest.mark.parametrize("t, message", [
    (pv((1024, 1024)), None),
    (pv((1024, 1024), dim_map=(1, 0)), None),
    (pv((1024, 1024), dim_map=(0,)), "expected dim_map to map exactly all 2 dimensions of the tile, got 1 mappings"),
    (pv((1024, 1024), dim_map=(2, 1)),
     "target dimension is outside of tensor view dimensions, expected strictly less than 2, got 2"),
    (pv((1024, 1024), dim_map=(0, 0)), "target dimension 0 mapped at least twice (for tile dimensions 0 and 1)"),
    (pv((1024, 1024), dim_map=(-1, 1)), "target dimension must not be negative, got -1"),
    (pv((5, 1024)), "tile shape dimensions must have power of two length but got [5, 1024]"),
    (pv((1099511627776, 1024)),
     "tile dimension 0 exceeds i32 limitations (got 1099511627776, expected strictly positive and less than or "
     "equal to 2147483647)"),
    (pv((1, 1), tv((8192, 8192, 64), (524288, 64, 1))),
     "expected tensor_view rank and tile rank to match, got tensor_view of rank 3 and tiles of rank 2"),
    (pv((), tv((), ())), "0-dimension tile shape is not supported"),
    (pv((8192, 8192)), "tile would exceed the maximum of 16777216 elements"),
    (pv((4, 4), tv((16, 16), (16, 1), I32), padding="nan"),
     "padding_value nan can only be used with floating point element types, got 'i32'"),
    (pv((4, 4), tv((16, 16), (16, 1), I32), padding="zero"), None),
    (pv((4, 4), padding="bogus"),
     'invalid padding_value attribute specification. Got "bogus" but expect one of: zero, neg_zero, nan, '
     "pos_inf, neg_inf"),
    (pv((4, 4), pv((4, 4))),
     "expected 'tensor_view' type, but got '!cuda_tile.partition_view<tile=(4x4), "
     "tensor_view<4096x4096xf32, strides=[4096,1]>>'"),
    (sv((1024, 1024), (1024, 1)), None),
    (sv((1024, 1024), (1,)), "expected 2 traversal strides, got 1"),
    (sv((1024, 1024), (1, 0)), "traversal strides must be strictly positive but got [1, 0]"),
    (sv((1024, 1024), (1, -1)), "traversal strides must be strictly positive but got [1, -1]"),
    (sv((1024, 1024), (1,), dim_map=(0,)),
     "expected dim_map to map exactly all 2 dimensions of the tile, got 1 mappings"),
    (sv((), (), tv((), ())), "0-dimension tile shape is not supported"),
])
def test_partition_and_strided_views(t, message):
    assert verify_type(t) == message


@pytest.mark.parametrize("t, message", [
    (T.GatherScatterViewType((16, 16), tv((1024, 16), (16, 1)), 0), None),
    (T.GatherScatterViewType((16, 16), tv((1024, 16), (16, 1)), 2),
     "gather dimension is outside of tensor view dimensions, expected strictly less than 2, got 2"),
    (T.GatherScatterViewType((16, 12), tv((1024, 16), (16, 1)), 0),
     "tile shape dimensions must have power of two length but got [16, 12]"),
    (T.GatherScatterViewType((16,), tv((1024, 16), (16, 1)), 0),
     "expected tensor_view rank and tile rank to match, got tensor_view of rank 2 and tiles of rank 1"),
    (T.GatherScatterViewType((16, 16), tv((1024, 16), (16, 1), I32), 0, "neg_inf"),
     "padding_value neg_inf can only be used with floating point element types, got 'i32'"),
])
def test_gather_scatter_view(t, message):
    assert verify_type(t) == message


@given(st.permutations(range(4)))
def test_every_permutation_is_a_valid_dim_map(perm):
    view = tv((64, 64, 64, 64), (1, 1, 1, 1))
    assert verify_type(pv((4, 4, 4, 4), view, dim_map=perm)) is None


@given(st.lists(st.integers(0, 3), min_size=4, max_size=4))
def test_dim_map_duplicates_name_the_first_two_tile_dimensions(dim_map):
    view = tv((64, 64, 64, 64), (1, 1, 1, 1))
    message = verify_type(pv((4, 4, 4, 4), view, dim_map=dim_map))
    seen: dict[int, int] = {}
    expected = None
    for i, d in enumerate(dim_map):
        if d in seen:
            expected = f"target dimension {d} mapped at least twice (for tile dimensions {seen[d]} and {i})"
            break
        seen[d] = i
    assert message == expected


# ---------------------------------------------------------------------------
# positions in the text
# ---------------------------------------------------------------------------


def locate(type_text: str):
    """locate_type_error on ``"use_type"() : () -> TYPE``; returns (message, column, prefixed)."""
    text = f'%0 = "use_type"() : () -> {type_text}\n'
    tree = parse(text).tree
    node = next(n for n in tree.iter_subtrees_topdown() if n.data == "function_type").children[1]
    t = Builder(SourceText(text), 0, text)._type(node)
    found = locate_type_error(node, t, text)
    return None if found is None else (found.message, found.offset, found.prefixed)


PV_BIG = ("!cuda_tile.partition_view<tile=(1099511627776x1024), "
          "!cuda_tile.tensor_view<4096x4096xf32, strides=[4096,1]>>")
PV_POW2 = "!cuda_tile.partition_view<tile=(5x1024), !cuda_tile.tensor_view<4096x4096xf32, strides=[4096,1]>>"
PV_PAD = "!cuda_tile.partition_view<tile=(4), padding_value = bad, tensor_view<16xf32, strides=[1]>>"
PV_PV = ("!cuda_tile.partition_view<tile=(4x4), partition_view<tile=(4x4), "
         "tensor_view<16x16xf32, strides=[16,1]>>>")


# ``at``: the offset in the type text where MLIR reports (the type starts at offset 26 of the line)
@pytest.mark.parametrize("type_text, message, at, prefixed", [
    ("!cuda_tile.tensor_view<?xf32, strides=[4, 1]>",
     "expected shape and stride to be of same rank but got shape of rank 1 and stride of rank 2", "<", True),
    ("!cuda_tile.tensor_view<?xf32, strides=[1, -5]>", "expected strictly positive integer, got -5", "-5", True),
    ("!cuda_tile.tensor_view<f32, strides=[]>", "strides must not be provided for 0-d tiles", "=", True),
    ("!cuda_tile.tensor_view<f32 , strides =[]>", "strides must not be provided for 0-d tiles", "=", True),
    ("!cuda_tile.tensor_view<2xf32>", "expected 'strides'", ">", True),
    ("!cuda_tile.tile<5x?xf32>", "expected static shape", "?", False),
    (PV_BIG, "tile dimension 0 exceeds i32 limitations (got 1099511627776, expected strictly positive and less "
             "than or equal to 2147483647)", "(", True),
    (PV_POW2, "tile shape dimensions must have power of two length but got [5, 1024]", "<", True),
    (PV_PAD, 'invalid padding_value attribute specification. Got "bad" but expect one of: zero, neg_zero, nan, '
             "pos_inf, neg_inf", "= bad", True),
    (PV_PV, "expected 'tensor_view' type, but got '!cuda_tile.partition_view<tile=(4x4), "
            "tensor_view<16x16xf32, strides=[16,1]>>'", ">>>", True),
])
def test_locations(type_text, message, at, prefixed):
    offset = 26 + type_text.index(at) + (2 if at == ">>>" else 0)
    assert locate(type_text) == (message, offset, prefixed)


def test_valid_type_is_not_located():
    assert locate("!cuda_tile.tile<4xf32>") is None


def test_nodes_that_only_name_a_type_are_not_located():
    text = '%0 = "use_type"() : () -> !cuda_tile.tile<3xf32>\n'
    tree = parse(text).tree
    fn = next(n for n in tree.iter_subtrees_topdown() if n.data == "function_type")
    assert locate_type_error(fn, T.TileType((3,), F32), text) is None


# ---------------------------------------------------------------------------
# end to end (message and line; the column is the builder's)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("type_text, message", [
    ("!cuda_tile.tile<5x5xf32>", "all dimensions must be powers of two, got 5, 5"),
    ("!cuda_tile.tensor_view<0xf32, strides=[1]>", "dimensions must have strictly positive constant sizes but got [0]"),
    ("!cuda_tile.strided_view<tile=(1024x1024), traversal_strides=[1], "
     "!cuda_tile.tensor_view<4096x4096xf32, strides=[4096,1]>>", "expected 2 traversal strides, got 1"),
])
def test_end_to_end(type_text, message):
    text = f'// a comment\n%0 = "use_type"() : () -> {type_text}\n'
    diags = analyze_text(text).diagnostics
    assert [(d.message.removeprefix("custom op 'use_type' "), d.range.start.line) for d in diags] == [(message, 1)]
