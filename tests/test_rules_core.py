"""Core op rules (rules/core.py) and the entry hints parser (parse_rules/entry.py).

Messages and positions are those of NVIDIA's CudaTile.cpp / Attributes.cpp as
cuda-tile-opt prints them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.verify.rules.core import count_format_arguments


def errors(text: str, **options) -> list[tuple[str, str, int, int]]:
    opts = AnalysisOptions(mlir_compat=True)
    for k, v in options.items():
        setattr(opts, k, v)
    an = analyze_text(text, opts)
    return [(d.severity.value, d.message, d.range.start.line, d.range.start.character) for d in an.diagnostics]


def messages(text: str, **options) -> list[str]:
    return [e[1] for e in errors(text, **options)]


def at(text: str, needle: str, delta: int = 0) -> tuple[int, int]:
    pos = text.index(needle) + delta
    return text.count("\n", 0, pos), pos - (text.rfind("\n", 0, pos) + 1)


def module(body: str) -> str:
    return "cuda_tile.module @m {\n" + body + "\n}\n"


def func(args: str, body: str, results: str = "") -> str:
    arrow = f" -> {results}" if results else ""
    return module(f"  cuda_tile.testing$func @f({args}){arrow} {{\n    {body}\n  }}")


# ---------------------------------------------------------------------------
# global / get_global
# ---------------------------------------------------------------------------


def test_global_rank():
    text = module("  cuda_tile.global @g1 <f16: [[1.0, 2.0]]> : !cuda_tile.tile<1x2xf16>")
    [(sev, msg, line, col)] = errors(text)
    assert msg == "'cuda_tile.global' op type must have rank 1"
    assert (line, col) == at(text, "cuda_tile.global")
    assert errors(module("  cuda_tile.global @g1 <f16: [1.0, 2.0]> : !cuda_tile.tile<2xf16>")) == []


def test_get_global_pointee():
    text = module("  cuda_tile.global @g1 <f16: [1.0, 2.0]> : !cuda_tile.tile<2xf16>\n"
                  "  entry @k() {\n"
                  "    %0 = cuda_tile.get_global @g1 : !cuda_tile.tile<!cuda_tile.ptr<f32>>\n  }")
    [(sev, msg, line, col)] = errors(text)
    assert msg == ("'cuda_tile.get_global' op pointee type of result type '!cuda_tile.ptr<f32>' does not match "
                   "type 'f16' of the global @g1")
    assert (line, col) == at(text, "cuda_tile.get_global")
    ok = text.replace("ptr<f32>", "ptr<f16>")
    assert errors(ok) == []


# ---------------------------------------------------------------------------
# entry / return
# ---------------------------------------------------------------------------


def test_entry_results_and_arguments():
    text = module("  cuda_tile.entry @e(%a: !cuda_tile.tile<2x2xf32>) -> !cuda_tile.tile<2x2xf32> {\n"
                  "    cuda_tile.return %a : !cuda_tile.tile<2x2xf32>\n  }")
    [(sev, msg, line, col)] = errors(text)
    assert msg == "'cuda_tile.entry' op entry op must not return values"
    assert (line, col) == at(text, "cuda_tile.entry")
    text = module("  cuda_tile.entry @e(%a: !cuda_tile.tile<2x2xf32>) {}")
    assert messages(text) == ["'cuda_tile.entry' op entry op must have scalar types (rank 0 !cuda_tile.tile)"]
    assert errors(module("  cuda_tile.entry @e(%a: !cuda_tile.tile<f32>, %p: !cuda_tile.tile<ptr<f32>>) {}")) == []


def test_implicit_return_of_function_with_results():
    text = module("  testing$func @kernel(%arg0: !cuda_tile.tile<2xi16>) -> !cuda_tile.tile<2xi16> {}")
    [(sev, msg, line, col)] = errors(text)
    assert msg == "'cuda_tile.return' op has 0 operands, but enclosing function (@kernel) returns 1"
    assert (line, col) == at(text, "testing$func")


def test_return_count_and_types():
    text = func("%a: !cuda_tile.tile<2xi16>, %b: !cuda_tile.tile<2xf32>",
                "cuda_tile.return %b : !cuda_tile.tile<2xf32>", "!cuda_tile.tile<2xi16>")
    [(sev, msg, line, col)] = errors(text)
    assert msg == ("type of return operand 0 ('!cuda_tile.tile<2xf32>') doesn't match function result type "
                   "('!cuda_tile.tile<2xi16>') in function @f")
    assert (line, col) == at(text, "cuda_tile.return")
    text = func("%a: !cuda_tile.tile<2xi16>", "cuda_tile.return %a, %a : !cuda_tile.tile<2xi16>, "
                "!cuda_tile.tile<2xi16>", "!cuda_tile.tile<2xi16>")
    assert messages(text) == ["'cuda_tile.return' op has 2 operands, but enclosing function (@f) returns 1"]
    text = func("%a: !cuda_tile.tile<2xi16>", "cuda_tile.return %a : !cuda_tile.tile<2xi16>",
                "!cuda_tile.tile<2xi16>")
    assert errors(text) == []


def test_return_in_entry():
    text = module("  entry @e(%a: !cuda_tile.tile<i32>) {\n    cuda_tile.return %a : !cuda_tile.tile<i32>\n  }")
    assert messages(text) == ["'cuda_tile.return' op has 1 operands, but enclosing function (@e) returns 0"]


def test_generic_function_region_constraint():
    text = module('  "cuda_tile.testing$func"() ({ }) {function_type = () -> (), sym_name = "foo"} : () -> ()')
    [(sev, msg, line, col)] = errors(text)
    assert msg == "'cuda_tile.testing$func' op region #0 ('body') failed to verify constraint: region with 1 blocks"
    assert (line, col) == at(text, '"cuda_tile.testing$func"')


def test_single_block_before_the_region_constraint_custom_form_too():
    """A labelled block makes two: SingleBlock's message, in custom and generic form, before ODS's
    region constraint (cuda-tile-opt 13.x prints only 'expects region #0 to have 0 or 1 blocks')."""
    body = "    return\n  ^bb1:\n    return\n"
    text = module("  entry @e() {\n" + body + "  }")
    [(sev, msg, line, col)] = errors(text)
    assert msg == "'cuda_tile.entry' op expects region #0 to have 0 or 1 blocks"
    assert (line, col) == at(text, "entry")
    generic = module('  "cuda_tile.entry"() <{function_type = () -> (), sym_name = "e"}> ({\n'
                     '    "cuda_tile.return"() : () -> ()\n  ^bb1:\n    "cuda_tile.return"() : () -> ()\n'
                     "  }) : () -> ()")
    assert messages(generic) == ["'cuda_tile.entry' op expects region #0 to have 0 or 1 blocks"]


# ---------------------------------------------------------------------------
# assume
# ---------------------------------------------------------------------------


def assume(pred: str, ty: str) -> str:
    return func(f"%arg0: {ty}", f"cuda_tile.assume {pred}, %arg0 : {ty}")


@pytest.mark.parametrize("pred,ty,expected", [
    ("#cuda_tile.div_by<16>", "!cuda_tile.tile<f32>",
     "'cuda_tile.div_by' is valid only for tile of integer/pointer or tensor_view values"),
    ("#cuda_tile.div_by<9223372036854775808>", "!cuda_tile.tile<i8>", "'cuda_tile.div_by' divisor is too large"),
    ("div_by<1, every 8 along 0>", "!cuda_tile.tile<!cuda_tile.ptr<f16>>",
     "'cuda_tile.div_by' 'every'/'along' cannot be used if the constrained value is a 0D tile"),
    ("div_by<1, every 8 along 0>", "!cuda_tile.tensor_view<64x64xf16, strides=[1,1]>",
     "'cuda_tile.div_by' 'every'/'along' cannot be used if the constrained value is a tensor_view"),
    ("div_by<1, every 24 along 0>", "!cuda_tile.tile<16xi32>",
     "expected 'cuda_tile.div_by' every_dim to be within 0 and the size of the respective dimension (16)"),
    ("div_by<1, every 2 along 1>", "!cuda_tile.tile<16xi32>",
     "'cuda_tile.div_by' every_dim (1) must be >= 0 and < tile rank (1)"),
    ("div_by<7>", "!cuda_tile.tile<16xi32>", "'cuda_tile.div_by' divisor must be a power of 2"),
    # integers as MLIR's lexer reads them: 012 is twelve, 0x1F thirty-one
    ("div_by<012>", "!cuda_tile.tile<16xi32>", "'cuda_tile.div_by' divisor must be a power of 2"),
    ("#cuda_tile.div_by<0x1F>", "!cuda_tile.tile<16xi32>", "'cuda_tile.div_by' divisor must be a power of 2"),
    ("same_elements<[017]>", "!cuda_tile.tile<16xi32>",
     "expected 'cuda_tile.same_elements' value 0 to be within 0 and the size of the respective dimension (16)"),
    ("same_elements<[8]>", "!cuda_tile.tile<!cuda_tile.ptr<f16>>",
     "expected number of values in 'cuda_tile.same_elements' (1) to match rank of constrained tile (0)"),
    ("same_elements<[8]>", "!cuda_tile.tile<16xf32>",
     "'cuda_tile.same_elements' is valid only for tile of integer/pointer values"),
    ("same_elements<[24]>", "!cuda_tile.tile<16xi32>",
     "expected 'cuda_tile.same_elements' value 0 to be within 0 and the size of the respective dimension (16)"),
    ("bounded<0, 0>", "!cuda_tile.tile<16xf32>", "'cuda_tile.bounded' is valid only for tile of integer values"),
    ("bounded<0, 128>", "!cuda_tile.tile<16xi8>", "'cuda_tile.bounded' expects upper bound to be within [-128, 127]"),
    ("bounded<-129, 6>", "!cuda_tile.tile<16xi8>", "'cuda_tile.bounded' expects lower bound to be within [-128, 127]"),
    ("bounded<8, 6>", "!cuda_tile.tile<16xi8>",
     "'cuda_tile.bounded' expects lower bound to be less than or equal to upper bound"),
])
def test_assume_predicates(pred, ty, expected):
    text = assume(pred, ty)
    [(sev, msg, line, col)] = errors(text)
    assert msg == "'cuda_tile.assume' op " + expected
    assert (line, col) == at(text, "cuda_tile.assume")


@pytest.mark.parametrize("pred,ty", [
    ("div_by<16>", "!cuda_tile.tile<4xi32>"),
    ("div_by<16, every 4 along 0>", "!cuda_tile.tile<4xi32>"),
    ("div_by<16>", "!cuda_tile.tensor_view<64x64xf16, strides=[1,1]>"),
    ("same_elements<[2, 4]>", "!cuda_tile.tile<4x8xi16>"),
    ("bounded<0, ?>", "!cuda_tile.tile<4xi16>"),
    ("bounded<?, ?>", "!cuda_tile.tile<4xi1>"),
])
def test_assume_valid(pred, ty):
    assert errors(assume(pred, ty)) == []


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=1, max_value=64), st.integers(min_value=-300, max_value=300),
       st.integers(min_value=-300, max_value=300))
def test_bounded_property(width_pick, lb, ub):
    width = [8, 16, 32, 64][width_pick % 4]
    low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    got = messages(assume(f"bounded<{lb}, {ub}>", f"!cuda_tile.tile<4xi{width}>"))
    if not low <= lb <= high:
        assert got == [f"'cuda_tile.assume' op 'cuda_tile.bounded' expects lower bound to be within [{low}, {high}]"]
    elif not low <= ub <= high:
        assert got == [f"'cuda_tile.assume' op 'cuda_tile.bounded' expects upper bound to be within [{low}, {high}]"]
    elif lb > ub:
        assert len(got) == 1 and got[0].endswith("less than or equal to upper bound")
    else:
        assert got == []


# ---------------------------------------------------------------------------
# print_tko
# ---------------------------------------------------------------------------


def test_format_counting():
    assert count_format_arguments("hello") == 0
    assert count_format_arguments("%d %f") == 2
    assert count_format_arguments("100%% %i") == 1
    assert count_format_arguments("%5.2f|%-8x") == 2
    assert count_format_arguments("oops %") is None
    assert count_format_arguments("%5") is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["ab", "%d", "%%", "%5.1f", " ", "%s"]), max_size=8))
def test_format_counting_property(parts):
    assert count_format_arguments("".join(parts)) == sum(p in ("%d", "%5.1f", "%s") for p in parts)


def test_print_tko_operand_count():
    t = "!cuda_tile.tile<2xf16>"
    text = func(f"%0: {t}", f'cuda_tile.print_tko "hello_world, %f, %f", %0 : {t} -> !cuda_tile.token')
    [(sev, msg, line, col)] = errors(text)
    assert msg == "'cuda_tile.print_tko' op incorrect number of operands: expected 2, found 1"
    assert (line, col) == at(text, "cuda_tile.print_tko")
    text = func(f"%0: {t}", f'cuda_tile.print_tko "hello_world, %", %0 : {t} -> !cuda_tile.token')
    assert messages(text) == ["'cuda_tile.print_tko' op found unterminated format expression"]
    text = func("", 'cuda_tile.print_tko "Expect one parameter %i" -> !cuda_tile.token')
    assert messages(text) == ["'cuda_tile.print_tko' op incorrect number of operands: expected 1, found 0"]
    text = func(f"%0: {t}", f'cuda_tile.print_tko "v=%f 100%%\\n", %0 : {t} -> !cuda_tile.token')
    assert errors(text) == []


# ---------------------------------------------------------------------------
# optimization hints
# ---------------------------------------------------------------------------


def hinted(hints: str) -> str:
    return module(f"  entry @k(%arg0: !cuda_tile.tile<ptr<f32>>) optimization_hints={hints} {{\n    return\n  }}")


def test_hints_entry_not_a_dictionary():
    text = hinted("<sm_100=2>")
    [(sev, msg, line, col)] = errors(text)
    assert msg == ("custom op 'cuda_tile.entry' expected dictionary attribute for optimization_hints entry `sm_100` "
                   "got value=2 : i64")
    assert (line, col) == at(text, "=2>", delta=2)  # the token after the attribute
    assert messages(hinted('<sm_100="x">'))[0].endswith('got value="x"')
    assert messages(hinted("<sm_100=[1, 2.5]>"))[0].endswith("got value=[1, 2.500000e+00]")
    assert messages(hinted("<default=1.5>"))[0].endswith("got value=1.500000e+00 : f64")


def test_hints_key_errors():
    text = hinted("<2>")
    [(sev, msg, line, col)] = errors(text)
    assert msg == "custom op 'cuda_tile.entry' expected valid keyword or string"
    assert (line, col) == at(text, "<2>", delta=1)
    text = hinted("<sm_100={}, sm_100={}>")
    [(sev, msg, line, col)] = errors(text)
    assert msg == "custom op 'cuda_tile.entry' duplicate optimization_hints key `sm_100`"
    assert (line, col) == at(text, "> {")
    assert messages(hinted("<sm_100 {}>")) == ["expected '='"]


def test_hints_valid_and_default_silent():
    for hints in ("<>", "<sm_100={num_cta_in_cga=2}>", '<"sm_90"={occupancy=4}, default={}>',
                  "<sm_100={num_qqq=1}>", "<sm_100a={num_cta_in_cga=2}>"):
        assert errors(hinted(hints)) == [], hints


@pytest.mark.parametrize("hints,warning", [
    ("<sm_100a={num_cta_in_cga=2}>", "unknown hint key sm_100a"),
    ("<sm_100={num_qqq=1}>", "num_qqq is not known hint for current Operation"),
    ('<sm_100={num_cta_in_cga="a"}>', "integer value expected for sm_100.num_cta_in_cga"),
    ("<sm_100={num_cta_in_cga=7}>", "expected power-of-two ≤ 16 for sm_100.num_cta_in_cga"),
    ("<sm_80={num_cta_in_cga=2}>", "expected 1 for sm_80.num_cta_in_cga"),
    ("<sm_100={occupancy=64}>", "integer value in the range [1, 32] is expected for sm_100.occupancy"),
    ("<sm_100={num_worker_warps_per_cta=3}>", "expected power-of-two ≤ 32 for sm_100.num_worker_warps_per_cta"),
    ("<default={allow_tma=true}>", "allow_tma is not known hint for current Operation"),
])
def test_hints_warnings_on_request(hints, warning):
    text = hinted(hints)
    assert errors(text) == []  # cuda-tile-opt's default: silent
    got = errors(text, warn_unsupported_hints=True)
    assert [(s, m) for s, m, _, _ in got] == [("warning", warning)]
    assert got[0][2:] == at(text, "entry")
    got = errors(text, warn_unsupported_hints=True, error_unsupported_hints=True)
    assert [(s, m) for s, m, _, _ in got] == [
        ("warning", warning), ("error", "'cuda_tile.entry' op Optimization hints verification failed")]


def test_corpus_hint_files(corpus):
    from tile_lsp.analysis.verify.verify_diagnostics import verify

    base = corpus / "conformance" / "Dialect" / "CudaTile"
    cases = [("entry_opt_hints_invalid.mlir", {}), ("entry_opt_hints_default_silent.mlir", {}),
             ("entry_opt_hints_warn.mlir", {"warn_unsupported_hints": True}),
             ("entry_opt_hints_error.mlir", {"warn_unsupported_hints": True, "error_unsupported_hints": True})]
    for name, options in cases:
        opts = AnalysisOptions(split_input_file=True, mlir_compat=True)
        for k, v in options.items():
            setattr(opts, k, v)
        an = analyze_text((base / name).read_text(), opts)
        for ca in an.chunks:
            assert not verify(ca.chunk.text, ca.diagnostics, line_offset=ca.chunk.start_line), name
    # without the options the warn/error files produce nothing (as the oracle shows)
    for name in ("entry_opt_hints_warn.mlir", "entry_opt_hints_error.mlir"):
        an = analyze_text((base / name).read_text(), AnalysisOptions(split_input_file=True, mlir_compat=True))
        assert an.diagnostics == []


def test_assume_predicate_syntax():
    ty = "!cuda_tile.tile<4xi32>"
    text = assume("foo<1>", ty)
    [(sev, msg, line, col)] = errors(text)
    assert msg == ("custom op 'cuda_tile.assume' unknown assume predicate attribute: foo (expected 'div_by', "
                   "'same_elements', or 'bounded')")
    assert (line, col) == at(text, "foo<1>")
    for pred in ("#cuda_tile.rounding<zero>", "#foo.bar<1>"):
        text = assume(pred, ty)
        [(sev, msg, line, col)] = errors(text)
        assert msg == "custom op 'cuda_tile.assume' expected assume predicate attribute"
        assert (line, col) == at(text, pred)
    assert errors("#p = #cuda_tile.div_by<4>\n" + assume("#p", ty)) == []


def test_the_builder_decodes_optimization_hints_once():
    from tile_lsp.analysis.syntax.parse_rules.entry import optimization_hint_entries

    text = module("  entry @k(%arg0: !cuda_tile.tile<ptr<f32>>) optimization_hints=<sm_100 = {num_cta_in_cga = 2}> {\n"
                  "    return\n  }")
    analysis = analyze_text(text)
    assert analysis.diagnostics == []
    entry = next(op for op in analysis.chunks[0].module.walk() if op.name == "cuda_tile.entry")
    attr = entry.attr("optimization_hints")
    assert [key for key, _ in attr.value] == ["sm_100"]
    assert optimization_hint_entries(attr) is attr.value  # the readers take the decoded entries


def test_assume_predicates_are_decoded_once_by_the_builder():
    text = module("  entry @e(%a: tile<i32>) {\n"
                  "    %b = assume div_by<08>, %a : tile<i32>\n"
                  "    %c = assume bounded<0, ?>, %a : tile<i32>\n"
                  "    %d = assume #cuda_tile.div_by<0x10, every 2 along 0>, %a : tile<i32>\n"
                  "    return\n  }")
    analysis = analyze_text(text)
    # 08 is eight, as cuda-tile-opt reads it (it was an internal error of the verifier)
    assert [d.message for d in analysis.diagnostics] == [
        "'cuda_tile.assume' op 'cuda_tile.div_by' 'every'/'along' cannot be used if the constrained value is a 0D tile"]
    preds = [op.attr("predicate").value for op in analysis.chunks[0].module.walk() if op.name == "cuda_tile.assume"]
    assert preds == [A.DivBy(8), A.Bounded(0, None), A.DivBy(16, 2, 0)]
