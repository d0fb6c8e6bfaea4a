"""Tests of the view and memory rules (rules/views.py, rules/memory.py, parse_rules/views.py)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.ir.diagnostics import Range
from tile_lsp.analysis.syntax.parse_rules import ParseContext, run_parse_rules
from tile_lsp.analysis.verify.rules.memory import (
    ATOMIC_ORDERINGS,
    atomic_ordering_issue,
    memory_model_issue,
    rmw_mode_issue,
)
from tile_lsp.dialect import types as T
from tile_lsp.dialect.registry import lookup


def diags(text: str) -> list[tuple[str, int, int]]:
    """(message, 0-based line, 0-based column) of every diagnostic of ``text``."""
    return [(d.message, d.range.start.line, d.range.start.character) for d in analyze_text(text).diagnostics]


def col(line: str, needle: str) -> int:
    return line.index(needle)


PV = "!cuda_tile.partition_view<tile=(1024x1024), !cuda_tile.tensor_view<4096x4096xf32, strides=[4096,1]>>"
PV_SHORT = "partition_view<tile=(1024x1024), tensor_view<4096x4096xf32, strides=[4096,1]>>"


def in_func(args: str, *body: str) -> str:
    lines = ["cuda_tile.module @m {", f"  cuda_tile.testing$func @f({args}) {{", *body, "  }", "}"]
    return "\n".join(lines) + "\n"


C0 = "    %c0 = cuda_tile.constant <i32: 0> : !cuda_tile.tile<i32>"
C0_64 = "    %c1 = cuda_tile.constant <i64: 0> : !cuda_tile.tile<i64>"

# ---------------------------------------------------------------------------
# load_view_tko / store_view_tko
# ---------------------------------------------------------------------------


def test_valid_view_load_and_store_have_no_diagnostics():
    text = in_func(f"%v: {PV}, %t: !cuda_tile.tile<1024x1024xf32>", C0,
                   f"    %x, %tok = load_view_tko weak %v[%c0, %c0] : {PV_SHORT}, tile<i32> -> tile<1024x1024xf32>, token",
                   f"    %tok2 = store_view_tko relaxed device %t, %v[%c0, %c0] token = %tok : tile<1024x1024xf32>, "
                   f"{PV_SHORT}, tile<i32> -> token")
    assert diags(text) == []


def test_load_tile_type_from_view():
    line = f"    load_view_tko weak %v[%c0, %c0] : {PV_SHORT}, tile<i32> -> tile<8xf32>, token"
    text = in_func(f"%v: {PV}", C0, line)
    assert diags(text) == [(
        "'cuda_tile.load_view_tko' op expected tile type to be '!cuda_tile.tile<1024x1024xf32>' (based on view "
        "type), got '!cuda_tile.tile<8xf32>'", 3, col(line, "load_view_tko"))]


def test_load_index_count_from_view():
    line = f"    %a, %b = load_view_tko weak %v[] : {PV_SHORT}, tile<i32> -> tile<1024x1024xf32>, token"
    text = in_func(f"%v: {PV}", C0, line)
    assert diags(text) == [("'cuda_tile.load_view_tko' op expected 2 index operands (based on view type), got 0",
                            3, col(line, "load_view_tko"))]


def test_index_types_all_equal_generic_form():
    line = (f'    %x, %t = "cuda_tile.load_view_tko"(%v, %c0, %c1) <{{memory_ordering_semantics = 0 : i32, '
            f'operandSegmentSizes = array<i32: 1, 2, 0>}}> : ({PV}, !cuda_tile.tile<i32>, !cuda_tile.tile<i64>) '
            f'-> (!cuda_tile.tile<1024x1024xf32>, !cuda_tile.token)')
    text = in_func(f"%v: {PV}", C0, C0_64, line)
    assert diags(text) == [(
        "'cuda_tile.load_view_tko' op expected index type 1 to be the same as other index types "
        "('!cuda_tile.tile<i32>'), got '!cuda_tile.tile<i64>'", 4, col(line, '"cuda_tile.load_view_tko"'))]


def test_index_types_must_be_scalar():
    line = (f'    %t = "cuda_tile.store_view_tko"(%tile, %v, %i, %i) <{{memory_ordering_semantics = 0 : i32, '
            f'operandSegmentSizes = array<i32: 1, 1, 2, 0>}}> : (!cuda_tile.tile<1024x1024xf32>, {PV}, '
            f'!cuda_tile.tile<1xi32>, !cuda_tile.tile<1xi32>) -> !cuda_tile.token')
    text = in_func(f"%v: {PV}, %tile: !cuda_tile.tile<1024x1024xf32>, %i: !cuda_tile.tile<1xi32>", line)
    assert diags(text) == [(
        "'cuda_tile.store_view_tko' op expected index type to be a scalar tile, got '!cuda_tile.tile<1xi32>'",
        2, col(line, '"cuda_tile.store_view_tko"'))]


@pytest.mark.parametrize("op, ordering, message", [
    ("load", "release", "expect one of: weak, relaxed, or acquire, but got: release"),
    ("store", "acquire", "expect one of: weak, relaxed, or release, but got: acquire"),
])
def test_view_memory_ordering_verifier(op, ordering, message):
    if op == "load":
        line = (f"    %x, %t = load_view_tko {ordering} device %v[%c0, %c0] : {PV_SHORT}, tile<i32> -> "
                f"tile<1024x1024xf32>, token")
    else:
        line = f"    %t = store_view_tko {ordering} device %w, %v[%c0, %c0] : tile<1024x1024xf32>, {PV_SHORT}, tile<i32> -> token"
    text = in_func(f"%v: {PV}, %w: !cuda_tile.tile<1024x1024xf32>", C0, line)
    assert diags(text) == [(f"'cuda_tile.{op}_view_tko' op {message}", 3, col(line, f"{op}_view_tko"))]


def test_weak_with_scope_is_a_parse_error_at_the_scope():
    line = f"    %x, %t = load_view_tko weak device %v[%c0, %c0] : {PV_SHORT}, tile<i32> -> tile<1024x1024xf32>, token"
    text = in_func(f"%v: {PV}", C0, line)
    assert diags(text) == [(
        "custom op 'cuda_tile.load_view_tko' operation specifies weak memory ordering semantics, but then provides "
        '"device" scope, expected no memory scope.', 3, col(line, "device"))]


def test_index_type_count():
    line = (f"    %x, %t = load_view_tko weak %v[%c0, %c0] : {PV_SHORT}, tile<i32>, tile<i32>, tile<i32> -> "
            f"tile<1024x1024xf32>, token")
    text = in_func(f"%v: {PV}", C0, line)
    assert diags(text) == [("custom op 'cuda_tile.load_view_tko' expected 2 index types, got 3", 3,
                            col(line, "tile<i32>"))]


# ---------------------------------------------------------------------------
# parse rules called directly (keywords the builder would otherwise reject first)
# ---------------------------------------------------------------------------


def run_rules(op: str, props: dict, operands=None, type_ranges=None, nodes=None) -> list[tuple[str, Range | None]]:
    out: list[tuple[str, Range | None]] = []
    ctx = ParseContext(lookup(op), operands or {}, {}, type_ranges or {}, props, nodes or {},
                       lambda name: None, None, None, lambda m, r: out.append((m, r)))
    run_parse_rules(ctx)
    return out


def kw(enum: str, case: str, column: int) -> A.EnumAttr:
    return A.EnumAttr(enum, case, range=Range.point(0, column))


@pytest.mark.parametrize("op", ["load_view_tko", "store_view_tko"])
def test_memory_keyword_wording(op):
    bad = run_rules(op, {"memory_ordering_semantics": kw("MemoryOrderingSemantics", "invalid", 5)})
    assert bad == [(f"custom op 'cuda_tile.{op}' invalid memory_ordering_semantics attribute specification. "
                    'Got "invalid" but expect one of: weak, relaxed, acquire, release, acq_rel', Range.point(0, 5))]
    scope = run_rules(op, {"memory_ordering_semantics": kw("MemoryOrderingSemantics", "relaxed", 5),
                           "memory_scope": kw("MemoryScope", "invalid", 13)})
    assert scope == [(f"custom op 'cuda_tile.{op}' invalid memory_scope attribute specification. "
                      'Got "invalid" but expect one of: tl_blk, device, sys', Range.point(0, 13))]
    weak = run_rules(op, {"memory_ordering_semantics": kw("MemoryOrderingSemantics", "weak", 5),
                          "memory_scope": kw("MemoryScope", "invalid", 10)})
    assert weak == [(f"custom op 'cuda_tile.{op}' operation specifies weak memory ordering semantics, but then "
                     'provides "invalid" scope, expected no memory scope.', Range.point(0, 10))]


def test_atomic_red_view_keyword_wording():
    got = run_rules("atomic_red_view_tko", {"memory_ordering_semantics": kw("MemoryOrderingSemantics", "x", 3)})
    assert got == [("custom op 'cuda_tile.atomic_red_view_tko' invalid memory_ordering_semantics: 'x'; "
                    "expected one of: weak, relaxed, acquire, release, acq_rel", Range.point(0, 3))]
    got = run_rules("atomic_red_view_tko", {"memory_ordering_semantics": kw("MemoryOrderingSemantics", "relaxed", 3),
                                            "memory_scope": kw("MemoryScope", "y", 11)})
    assert got == [("custom op 'cuda_tile.atomic_red_view_tko' invalid memory_scope: 'y'; expected one of: "
                    "tl_blk, device, sys", Range.point(0, 11))]
    got = run_rules("atomic_red_view_tko", {"memory_ordering_semantics": kw("MemoryOrderingSemantics", "relaxed", 3),
                                            "mode": kw("AtomicRMWMode", "nand", 30)})
    assert got == [("custom op 'cuda_tile.atomic_red_view_tko' unknown atomic RMW mode: 'nand'; expected one of: "
                    "and, or, xor, add, addf, max, min, umax, umin", Range.point(0, 30))]


def test_index_types_must_be_written_when_indices_are_present():
    got = run_rules("store_view_tko", {"memory_ordering_semantics": kw("MemoryOrderingSemantics", "weak", 3)},
                    operands={"index": [("%i", Range.point(0, 20))]})
    assert [m for m, _ in got] == ["custom op 'cuda_tile.store_view_tko' index types must be specified when "
                                   "indices are present"]


# ---------------------------------------------------------------------------
# make_tensor_view
# ---------------------------------------------------------------------------

BASE = "%base: !cuda_tile.tile<!cuda_tile.ptr<f32>>"


@pytest.mark.parametrize("lists, type_text, message, at", [
    ("shape = [], strides = [32, 1]", "tensor_view<32x32xf32, strides=[32, 1]>",
     "expected shape declaration to contain 2 elements due to tensor_view type, but 0 were provided", "[]"),
    ("shape = [32, 32], strides = []", "tensor_view<32x32xf32, strides=[32, 1]>",
     "expected stride declaration to contain 2 elements due to tensor_view type, but 0 were provided", "[]"),
    ("shape = [32, 64], strides = [32, 1]", "tensor_view<32x32xf32, strides=[32, 1]>",
     "input shape dimension 1 does not match tensor_view type (expected 32, got 64)", "64"),
    ("shape = [2, %n, %n], strides = [64, 32, 1]", "tile<i64> -> tensor_view<2x?x32xf32, strides=[64, 32, 1]>",
     "input shape dimension 2 does not match tensor_view type (expected 32, got dynamic)", "%n]"),
    ("shape = [2, 32, 32], strides = [64, 32, 1]", "tensor_view<2x?x32xf32, strides=[64, 32, 1]>",
     "input shape dimension 1 does not match tensor_view type (expected dynamic, got 32)", "32, 32]"),
    ("shape = [2, %n, 32], strides = [64, 32, 1]", "tile<i64> -> tensor_view<2x?x32xf32, strides=[64, ?, 1]>",
     "input stride dimension 1 does not match tensor_view type (expected dynamic, got 32)", "32, 1]"),
])
def test_make_tensor_view_declarations(lists, type_text, message, at):
    line = f"    cuda_tile.make_tensor_view %base, {lists} : {type_text}"
    text = in_func(f"{BASE}, %n: !cuda_tile.tile<i64>", line)
    assert diags(text) == [(f"custom op 'cuda_tile.make_tensor_view' {message}", 2, col(line, at))]


@pytest.mark.parametrize("sizes, view, message", [
    ("1, 1, 0", "32xf32, strides=[1]", "expected 0 dynamic shape operands, got 1"),
    ("1, 0, 1", "32xf32, strides=[1]", "expected 0 dynamic stride operands, got 1"),
    ("1, 0, 0", "?xf32, strides=[1]", "expected 1 dynamic shape operands, got 0"),
    ("1, 0, 0", "32xf32, strides=[?]", "expected 1 dynamic stride operands, got 0"),
    ("1, 0, 0", "f64", "expected pointer to 'f64' to build tensor_view of this type, got 'f32'"),
])
def test_make_tensor_view_verifier(sizes, view, message):
    n = sum(int(x) for x in sizes.split(","))
    operands = ", ".join(["%base", "%n"][:n])
    types = ", ".join(["!cuda_tile.tile<!cuda_tile.ptr<f32>>", "!cuda_tile.tile<i64>"][:n])
    line = (f'    "cuda_tile.make_tensor_view"({operands}) <{{operandSegmentSizes = array<i32: {sizes}>}}> : '
            f"({types}) -> !cuda_tile.tensor_view<{view}>")
    text = in_func(f"{BASE}, %n: !cuda_tile.tile<i64>", line)
    assert diags(text) == [(f"'cuda_tile.make_tensor_view' op {message}", 2, 4)]


def test_make_view_operand_type_generic_form():
    other = "!cuda_tile.tensor_view<4096x2048xf32, strides=[4096,1]>"
    line = f'    "cuda_tile.make_partition_view"(%tv) : ({other}) -> {PV}'
    text = in_func(f"%tv: {other}", line)
    assert diags(text) == [(
        "'cuda_tile.make_partition_view' op expected the type of the provided tensor_view value "
        f"('{other}') to be the same as the view's tensor_view type "
        "('!cuda_tile.tensor_view<4096x4096xf32, strides=[4096,1]>')", 2, 4)]


# ---------------------------------------------------------------------------
# get_tensor_shape / get_index_space_shape
# ---------------------------------------------------------------------------

TV = "!cuda_tile.tensor_view<64x64xf16, strides=[1,1]>"


def test_get_tensor_shape_source_must_be_a_tensor_view():
    line = "    %0 = cuda_tile.get_tensor_shape %x : !cuda_tile.tile<8x8xi32> -> !cuda_tile.tile<i32>"
    text = in_func("%x: !cuda_tile.tile<8x8xi32>", line)
    assert diags(text) == [("custom op 'cuda_tile.get_tensor_shape' expected tensor_view, got "
                            "'!cuda_tile.tile<8x8xi32>'", 2, col(line, "!cuda_tile.tile<8x8"))]


def test_get_index_space_shape_source_must_be_a_view():
    line = f"    %0:2 = cuda_tile.get_index_space_shape %x : {TV} -> !cuda_tile.tile<i32>"
    text = in_func(f"%x: {TV}", line)
    assert diags(text) == [(f"custom op 'cuda_tile.get_index_space_shape' expected tile view, got '{TV}'",
                            2, col(line, TV))]


def test_result_counts_generic_form():
    line = (f'    %0:3 = "cuda_tile.get_tensor_shape"(%x) : ({TV}) -> (!cuda_tile.tile<i32>, '
            f"!cuda_tile.tile<i32>, !cuda_tile.tile<i32>)")
    text = in_func(f"%x: {TV}", line)
    assert diags(text) == [("'cuda_tile.get_tensor_shape' op expected 2 results due to tensor rank, but got 3",
                            2, col(line, '"cuda_tile'))]
    line = f'    "cuda_tile.get_index_space_shape"(%v) : ({PV}) -> (!cuda_tile.tile<i32>)'
    text = in_func(f"%v: {PV}", line)
    assert diags(text) == [("'cuda_tile.get_index_space_shape' op expected 2 results due to view index space "
                            "rank, but got 1", 2, 4)]


# ---------------------------------------------------------------------------
# load_ptr_tko / store_ptr_tko / atomics / join_tokens
# ---------------------------------------------------------------------------

PTRS = "%p: !cuda_tile.tile<16x!cuda_tile.ptr<f32>>, %val: !cuda_tile.tile<16xf32>"


@pytest.mark.parametrize("line, message", [
    ("    %x, %t = load_ptr_tko weak device %p : tile<16xptr<f32>> -> tile<16xf32>, token",
     "'cuda_tile.load_ptr_tko' op weak load must not have memory scope"),
    ("    %x, %t = load_ptr_tko acquire %p : tile<16xptr<f32>> -> tile<16xf32>, token",
     "'cuda_tile.load_ptr_tko' op memory scope is required for acquire load"),
    ("    %x, %t = load_ptr_tko release device %p : tile<16xptr<f32>> -> tile<16xf32>, token",
     "'cuda_tile.load_ptr_tko' op expect one of: weak, relaxed, or acquire, but got: release"),
    ("    %t = store_ptr_tko weak sys %p, %val : tile<16xptr<f32>>, tile<16xf32> -> token",
     "'cuda_tile.store_ptr_tko' op weak store must not have memory scope"),
    ("    %t = store_ptr_tko relaxed %p, %val : tile<16xptr<f32>>, tile<16xf32> -> token",
     "'cuda_tile.store_ptr_tko' op memory scope is required for relaxed store"),
])
def test_pointer_memory_model(line, message):
    text = in_func(PTRS, line)
    name = message.split("'")[1].split(".")[1]
    assert diags(text) == [(message, 2, col(line, name))]


def test_valid_pointer_accesses():
    text = in_func(PTRS,
                   "    %x, %t = load_ptr_tko relaxed device %p : tile<16xptr<f32>> -> tile<16xf32>, token",
                   "    %t2 = store_ptr_tko release sys %p, %x token=%t : tile<16xptr<f32>>, tile<16xf32> -> token")
    assert diags(text) == []


def rmw(ptr_elem: str, arg_elem: str, mode: str, ordering: str = "relaxed") -> str:
    line = (f"    %0, %t = cuda_tile.atomic_rmw_tko {ordering} device %p, {mode}, %a : "
            f"!cuda_tile.tile<2x!cuda_tile.ptr<{ptr_elem}>>, !cuda_tile.tile<2x{arg_elem}> -> "
            f"!cuda_tile.tile<2x{arg_elem}>, !cuda_tile.token")
    return in_func(f"%p: !cuda_tile.tile<2x!cuda_tile.ptr<{ptr_elem}>>, %a: !cuda_tile.tile<2x{arg_elem}>", line)


@pytest.mark.parametrize("args, message", [
    (("i32", "i32", "add"), None),
    (("i32", "i32", "addf"), "'addf' works only with floats f16, bf16, f32, and f64"),
    (("f32", "i32", "add"), "expected pointee type ('f32') to match element type of 'arg' ('i32')"),
    (("tf32", "tf32", "xchg"), "'xchg' works only with integers or float of 32 or 64 bitwidth"),
    (("f32", "f32", "xchg"), None),
    (("i16", "i16", "max"), "'max' works only with integers i32 and i64"),
    (("i32", "i32", "add", "weak"), "memory ordering semantics must be one of: relaxed, acquire, release, acq_rel"),
])
def test_atomic_rmw(args, message):
    got = diags(rmw(*args))
    assert got == ([] if message is None else [(f"'cuda_tile.atomic_rmw_tko' op {message}", 2, 13)])


def test_atomic_cas_width():
    line = ("    %0, %t = atomic_cas_tko relaxed device %p, %a, %a : !cuda_tile.tile<2x!cuda_tile.ptr<i8>>, "
            "!cuda_tile.tile<2xi8> -> !cuda_tile.tile<2xi8>, !cuda_tile.token")
    text = in_func("%p: !cuda_tile.tile<2x!cuda_tile.ptr<i8>>, %a: !cuda_tile.tile<2xi8>", line)
    assert diags(text) == [("'cuda_tile.atomic_cas_tko' op expect only float or integer types with 32 or 64 bit",
                            2, col(line, "atomic_cas_tko"))]


def test_join_tokens_needs_two():
    text = in_func("%t: !cuda_tile.token", "    %0 = join_tokens %t : token")
    assert diags(text) == [("'cuda_tile.join_tokens' op expect two or more tokens", 2, 9)]
    assert diags(in_func("%t: !cuda_tile.token", "    %0 = join_tokens %t, %t : token")) == []


# ---------------------------------------------------------------------------
# atomic_red_view_tko
# ---------------------------------------------------------------------------

RPV = "partition_view<tile=(2x2), tensor_view<2x2xi32, strides=[2, 1]>>"


def red(ordering_scope: str, mode: str, value: str, view: str = RPV, index: str = "%c0, %c0",
        index_type: str = "tile<i32>") -> tuple[str, str]:
    line = (f"    %t = atomic_red_view_tko {ordering_scope} %v[{index}], {mode}, %val : {value}, {view}, "
            f"{index_type} -> token")
    return in_func(f"%v: !cuda_tile.{view}, %val: !cuda_tile.{value}", C0, line), line


@pytest.mark.parametrize("kwargs, message", [
    (dict(ordering_scope="relaxed device", mode="add", value="tile<2x2xi32>"), None),
    (dict(ordering_scope="weak device", mode="add", value="tile<2x2xi32>"),
     "only 'relaxed' memory ordering is supported for view-based atomic reductions"),
    (dict(ordering_scope="relaxed device", mode="xchg", value="tile<2x2xi32>"),
     "atomic_red_view_tko op cannot use xchg operation"),
    (dict(ordering_scope="relaxed sys", mode="add", value="tile<2x2xi32>"),
     "memory scope 'sys' is not supported for view-based atomic reductions; use 'tl_blk' or 'device' for TMA "
     "compatibility"),
    (dict(ordering_scope="relaxed device", mode="addf", value="tile<2x2xf32>"),
     "view element type ('i32') must match value element type ('f32')"),
    (dict(ordering_scope="relaxed device", mode="add", value="tile<4x4xi32>"),
     "view tile shape 2, 2 must match value shape 4, 4 for element-wise atomic operations"),
    (dict(ordering_scope="relaxed device", mode="add", value="tile<2x2xi32>", index="%c0"),
     "expected 2 index operand(s) for view with tile rank 2, got 1"),
    (dict(ordering_scope="relaxed device", mode="add", value="tile<2x2xi32>",
          view="partition_view<tile=(2x2), padding_value = zero, tensor_view<2x2xi32, strides=[2, 1]>>"),
     "views with padding_value are not supported for atomic reductions"),
])
def test_atomic_red_view(kwargs, message):
    text, line = red(**kwargs)
    expected = [] if message is None else [(f"'cuda_tile.atomic_red_view_tko' op {message}", 3,
                                            col(line, "atomic_red_view_tko"))]
    assert diags(text) == expected


# ---------------------------------------------------------------------------
# the rule tables as functions (property tests)
# ---------------------------------------------------------------------------

ORDERINGS = ("weak", "relaxed", "acquire", "release", "acq_rel")
SCOPES = (None, "tl_blk", "device", "sys")


@pytest.mark.parametrize("kind, ordering, scope", list(itertools.product(("load", "store"), ORDERINGS, SCOPES)))
def test_memory_model_table(kind, ordering, scope):
    allowed = {"load": ("weak", "relaxed", "acquire"), "store": ("weak", "relaxed", "release")}[kind]
    message = memory_model_issue(kind, ordering, scope)
    if ordering not in allowed:
        assert message == f"expect one of: weak, relaxed, or {allowed[2]}, but got: {ordering}"
    elif ordering == "weak":
        assert message == (None if scope is None else f"weak {kind} must not have memory scope")
    else:
        assert message == (None if scope is not None else f"memory scope is required for {ordering} {kind}")


ELEMENTS = [T.IntegerType(w) for w in (1, 8, 16, 32, 64)] + [
    T.FloatType(n) for n in ("f16", "bf16", "f32", "tf32", "f64", "f8E4M3FN", "f8E5M2")]
MODES = ("and", "or", "xor", "add", "addf", "max", "min", "umax", "umin", "xchg")


@given(st.sampled_from(MODES), st.sampled_from(ELEMENTS))
def test_rmw_mode_element_types(mode, element):
    message = rmw_mode_issue(mode, element)
    if mode == "addf":
        ok = isinstance(element, T.FloatType) and element.name in ("f16", "bf16", "f32", "f64")
    elif mode == "xchg":
        ok = str(element) in ("i32", "i64", "f32", "f64")
    else:
        ok = str(element) in ("i32", "i64")
    assert (message is None) == ok
    if not ok:
        assert message.startswith(f"'{mode}' works only with ")


@given(st.sampled_from(ORDERINGS))
def test_atomic_orderings(ordering):
    message = atomic_ordering_issue(ordering)
    assert (message is None) == (ordering in ATOMIC_ORDERINGS)


@pytest.mark.parametrize("op, attr, enum, cases", [
    ("load_ptr_tko", "memory_ordering_semantics", "MemoryOrderingSemantics", "weak, relaxed, acquire, release, acq_rel"),
    ("atomic_rmw_tko", "mode", "AtomicRMWMode", "and, or, xor, add, addf, max, min, umax, umin, xchg"),
    ("atomic_cas_tko", "memory_scope", "MemoryScope", "tl_blk, device, sys"),
])
def test_generated_enum_wording(op, attr, enum, cases):
    props = {"memory_ordering_semantics": kw("MemoryOrderingSemantics", "relaxed", 3),
             "memory_scope": kw("MemoryScope", "device", 11), "mode": kw("AtomicRMWMode", "add", 25)}
    props[attr] = kw(enum, "bogus", 40)
    got = run_rules(op, props)
    assert got == [(f"custom op 'cuda_tile.{op}' expected string or keyword containing one of the following enum "
                    f"values for attribute '{attr}' [{cases}]", Range.point(0, 40))]


def test_unknown_optional_scope_is_read_as_the_operand():
    ordering = A.EnumAttr("MemoryOrderingSemantics", "weak", range=Range(Range.point(0, 30).start,
                                                                         Range.point(0, 34).start))
    got = run_rules("load_ptr_tko", {"memory_ordering_semantics": ordering,
                                     "memory_scope": kw("MemoryScope", "blah", 35)})
    assert got == [("expected SSA operand", Range.point(0, 34))]
