"""Version awareness: what an older targeted Tile IR version cannot encode (rules/versions.py).

Messages are those of NVIDIA's bytecode writer (``BytecodeWriter.cpp`` and the
generated op writers, see ``test/Bytecode/versioning/*.mlir``).
"""

from __future__ import annotations


from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.verify.rules.versions import parse_version, type_requirements
from tile_lsp.dialect import types as T
from tile_lsp.dialect.registry import lookup

KERNEL = """\
cuda_tile.module @kernels {
  global constant @g <f32: 1.0> : tile<1xf32>
  global private @h <f32: 1.0> : tile<1xf32>
  entry @k(%a: tile<f8E8M0FNU>, %f: tile<f32>) {
    %c = constant <i32: [1, -2]> : tile<2xi32>
    %n = negi %c overflow<no_signed_wrap> : tile<2xi32>
    %n2 = negi %c : tile<2xi32>
    %lb = constant <i32: 0> : tile<i32>
    %ub = constant <i32: 4> : tile<i32>
    for unsigned %i in (%lb to %ub, step %ub) : tile<i32> {
      continue
    }
    %t = print_tko "%d", %lb : tile<i32> -> token
    %t2 = print_tko "%d", %lb token=%t : tile<i32> -> token
    %u = print_tko "%d", %lb : tile<i32> -> token
    %e = exp %f rounding<approx> : tile<f32>
    %e2 = exp %f : tile<f32>
    return
  }
}
"""

MMAF_SCALED = """\
cuda_tile.module @m {
  entry @k() {
    %l = constant <f4E2M1FN: 0.0> : tile<128x128xf4E2M1FN>
    %r = constant <f4E2M1FN: 0.0> : tile<128x128xf4E2M1FN>
    %acc = constant <f32: 0.0> : tile<128x128xf32>
    %ls = constant <f8E8M0FNU: 1.0> : tile<128x4xf8E8M0FNU>
    %rs = constant <f8E8M0FNU: 1.0> : tile<4x128xf8E8M0FNU>
    %0 = mmaf_scaled %l, %r, %acc, %ls, %rs : tile<128x128xf4E2M1FN>, tile<128x128xf4E2M1FN>, tile<128x128xf32>, tile<128x4xf8E8M0FNU>, tile<4x128xf8E8M0FNU>
    return
  }
}
"""


def diags(text: str, version: str | None) -> list[tuple[int, int, str]]:
    result = analyze_text(text, AnalysisOptions(tile_version=version))
    return [(d.range.start.line, d.range.start.character, d.message) for d in result.diagnostics]


def test_newest_version_is_clean():
    assert diags(KERNEL, None) == []
    assert diags(KERNEL, "13.3") == []
    assert diags(MMAF_SCALED, None) == []
    assert diags(MMAF_SCALED, "13.3") == []


def test_kernel_against_13_1():
    assert diags(KERNEL, "13.1") == [
        (1, 2, "constant global `g` cannot be encoded in bytecode version 13.1 "
               "(the `constant` attribute requires bytecode 13.3+)"),
        (2, 9, "global `h` uses non-public symbol visibility, which cannot be encoded in bytecode "
               "version 13.1 (requires bytecode 13.3+)"),
        # the function_type attribute of the entry holds the 13.2 element type
        (3, 10, "type 'Float8E8M0FNU' requires bytecode version 13.2+, targeting 13.1"),
        # a default-valued attribute: only a non-default value is refused (the second negi is fine)
        (5, 26, "attribute 'overflow' requires bytecode version 13.2+, but targeting 13.1"),
        (9, 4, "optional attribute 'unsignedCmp' is provided but requires bytecode version 13.2, "
               "targeting 13.1"),
        # a used 13.2 result is refused at the result; unused ones (%t2, %u) are silently dropped
        (12, 4, "result 'result_token' requires bytecode version 13.2 but is being used and targeting 13.1"),
        (13, 36, "optional operand 'token' is provided but requires bytecode version 13.2, targeting 13.1"),
        (15, 25, "attribute 'rounding_mode' requires bytecode version 13.3+, but targeting 13.1"),
    ]


def test_kernel_against_13_2():
    assert diags(KERNEL, "13.2") == [
        (1, 2, "constant global `g` cannot be encoded in bytecode version 13.2 "
               "(the `constant` attribute requires bytecode 13.3+)"),
        (2, 9, "global `h` uses non-public symbol visibility, which cannot be encoded in bytecode "
               "version 13.2 (requires bytecode 13.3+)"),
        (15, 25, "attribute 'rounding_mode' requires bytecode version 13.3+, but targeting 13.2"),
    ]


def test_mmaf_scaled_and_new_float_types():
    assert diags(MMAF_SCALED, "13.2") == [
        (2, 9, "type 'Float4E2M1FN' requires bytecode version 13.3+, targeting 13.2"),
        (3, 9, "type 'Float4E2M1FN' requires bytecode version 13.3+, targeting 13.2"),
        (7, 9, "operation 'cuda_tile.mmaf_scaled' is not available in bytecode version 13.2"),
    ]
    assert diags(MMAF_SCALED, "13.1") == [
        (2, 9, "type 'Float4E2M1FN' requires bytecode version 13.3+, targeting 13.1"),
        (3, 9, "type 'Float4E2M1FN' requires bytecode version 13.3+, targeting 13.1"),
        (5, 10, "type 'Float8E8M0FNU' requires bytecode version 13.2+, targeting 13.1"),
        (6, 10, "type 'Float8E8M0FNU' requires bytecode version 13.2+, targeting 13.1"),
        (7, 9, "operation 'cuda_tile.mmaf_scaled' is not available in bytecode version 13.1"),
    ]


def test_type_requirements_walk_nested_types():
    tv = T.TensorViewType((8,), T.FloatType("f8E8M0FNU"), (1,))
    sv = T.StridedViewType((4,), (1,), tv)
    assert list(type_requirements(sv)) == [("StridedViewType", "13.3"), ("Float8E8M0FNU", "13.2")]
    assert list(type_requirements(T.TileType((2,), T.IntegerType(4)))) == [("Int4", "13.3")]
    assert list(type_requirements(T.TileType((2,), T.IntegerType(32)))) == []


def test_per_argument_versions_in_the_table():
    """Ops.td ``CudaTileArg<..., "13.x">`` versions newer than the op are in the table."""
    assert lookup("for").attribute("unsignedCmp").since == "13.2"
    assert lookup("negi").attribute("overflow").since == "13.2"
    assert lookup("print_tko").operand("token").since == "13.2"
    assert lookup("print_tko").result("result_token").since == "13.2"
    assert lookup("global").attribute("constant").since == "13.3"
    assert lookup("exp").attribute("rounding_mode").since == "13.3"
    assert lookup("addi").attribute("overflow").since is None


def test_parse_version():
    assert parse_version("13.2") == (13, 2)
    assert parse_version(None) is None
    assert parse_version("newest") is None


def test_corpus_kernels_clean_with_newest_version(corpus):
    kernels = sorted((corpus / "kernels").glob("*.mlir"))
    kernels = [k for k in kernels if not k.name.endswith(".g.mlir")]
    assert kernels
    dirty = {}
    for path in kernels:
        found = diags(path.read_text(), None)
        if found:
            dirty[path.name] = found[:3]
    assert dirty == {}


def test_corpus_kernels_use_13_4_ops(corpus):
    """The kernels are 13.4 bytecode: against 13.3 the 13.4 ops are reported, nothing else crashes."""
    path = next(p for p in sorted((corpus / "kernels").glob("*.mlir"))
                if not p.name.endswith(".g.mlir") and "gdc_wait_tko" in p.read_text())
    messages = {m for _, _, m in diags(path.read_text(), "13.3")}
    assert "operation 'cuda_tile.gdc_wait_tko' is not available in bytecode version 13.3" in messages


def test_no_version_check_when_emulating_cuda_tile_opt():
    """cuda-tile-opt verifies without the bytecode writer: mlir_compat reports nothing of it."""
    result = analyze_text(MMAF_SCALED, AnalysisOptions(tile_version="13.1", mlir_compat=True))
    assert result.diagnostics == []


def test_testing_ops_only_checked_against_testing_versions():
    text = """\
cuda_tile.module @m {
  testing$func @k() {
    testing$bytecode_test_new_attribute new_flag new_param = 123
    return
  }
}
"""
    assert diags(text, "13.1") == []
    assert diags(text, "250.0") == [
        (2, 4, "optional attribute 'new_flag' is provided but requires bytecode version 250.1, targeting 250.0"),
        (2, 61, "attribute 'new_param' requires bytecode version 250.1+, but targeting 250.0"),
    ]
