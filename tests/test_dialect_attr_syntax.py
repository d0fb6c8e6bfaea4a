"""The cuda_tile dialect's attribute parser at the surface (:mod:`tile_lsp.dialect.attr_syntax`).

Every case was checked against NVIDIA's ``cuda-tile-opt`` (same messages, lines and columns):
an unknown mnemonic, a mnemonic without its ``<``, and the keyword of an enum attribute,
written in an alias definition or a generic op's attribute dictionary.
"""

from __future__ import annotations

import pytest

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Severity

ROUNDING = ("expected ::mlir::cuda_tile::RoundingMode to be one of: nearest_even, zero, negative_inf, "
            "positive_inf, approx, full, nearest_int_to_zero")
ROUNDING_FAILED = ("failed to parse CudaTile_RoundingModeAttr parameter 'value' which is to be a "
                   "`::mlir::cuda_tile::RoundingMode`")
PADDING_FAILED = ("failed to parse CudaTile_PaddingValueAttr parameter 'value' which is to be a "
                  "`::mlir::cuda_tile::PaddingValue`")


def errors(text: str, compat: bool = False) -> list[tuple[int, int, str]]:
    """(line, column, message) of each error, 1-based as cuda-tile-opt prints them."""
    return [(d.range.start.line + 1, d.range.start.character + 1, d.message)
            for d in analyze_text(text, AnalysisOptions(mlir_compat=compat)).diagnostics
            if d.severity == Severity.ERROR]


CASES = [
    ("#b = #cuda_tile.foo\n", [(1, 17, "unknown attribute `foo` in dialect `cuda_tile`")]),
    ("#b = #cuda_tile.foo<1>\n", [(1, 17, "unknown attribute `foo` in dialect `cuda_tile`")]),
    ("#b = #cuda_tile.memory_scope\n", [(1, 17, "unknown attribute `memory_scope` in dialect `cuda_tile`")]),
    ("#b = #cuda_tile.\n", [(2, 1, "expected valid keyword")]),
    ("#b = #cuda_tile.di_lexical_block\n", [(1, 33, "expected '<'")]),
    ("#b = #cuda_tile.di_lexical_block", [(1, 32, "expected '<'")]),  # at the end of the text
    ("#b = #cuda_tile.rounding\ncuda_tile.module @m {\n}\n", [(1, 25, "expected '<'")]),
    ("#b = #cuda_tile.rounding<zero 1>\n", [(1, 30, "expected '>'")]),
    ("#b = #cuda_tile.rounding<>\n", [(1, 26, "expected valid keyword or string"), (1, 26, ROUNDING_FAILED)]),
    ("#b = #cuda_tile.rounding<1>\n", [(1, 26, "expected valid keyword or string"), (1, 26, ROUNDING_FAILED)]),
    ("#b = #cuda_tile.rounding< zro  >\n", [(1, 27, ROUNDING), (1, 32, ROUNDING_FAILED)]),
    ('#b = #cuda_tile.rounding<"zro">\n', [(1, 26, ROUNDING), (1, 31, ROUNDING_FAILED)]),
    ("#b = #cuda_tile.rounding<\nzro>\n", [(2, 1, ROUNDING), (2, 4, ROUNDING_FAILED)]),
    ("#b = #cuda_tile.signedness<signed>\n#c = #cuda_tile.overflow<nsw>\n",
     [(2, 26, "expected ::mlir::cuda_tile::IntegerOverflow to be one of: none, no_signed_wrap, "
              "no_unsigned_wrap, no_wrap"),
      (2, 29, "failed to parse CudaTile_IntegerOverflowAttr parameter 'value' which is to be a "
              "`::mlir::cuda_tile::IntegerOverflow`")]),
    ("#b = #cuda_tile.padding_value\n", [(2, 1, "expected valid keyword or string"), (2, 1, PADDING_FAILED)]),
    ("#b = #cuda_tile.padding_value<zero>\n",
     [(1, 30, "expected valid keyword or string"), (1, 30, PADDING_FAILED)]),
]


@pytest.mark.parametrize("text,want", CASES)
def test_attribute_surface_errors(text, want):
    assert errors(text) == want
    assert errors(text, compat=True) == want


def test_valid_spellings_are_accepted():
    assert errors('#a = #cuda_tile.rounding<"zero">\n#b = #cuda_tile.signedness<signed>\n'
                  "#c = #cuda_tile.comparison_predicate<less_than>\n") == []


def test_in_a_generic_op_the_parse_error_replaces_the_verifier_message():
    def op(attr: str) -> str:
        return ('cuda_tile.module @m {\n  entry @k(%a: tile<f32>) {\n'
                f'    %x = "cuda_tile.addf"(%a, %a) {{rounding_mode = {attr}}} : '
                "(!cuda_tile.tile<f32>, !cuda_tile.tile<f32>) -> !cuda_tile.tile<f32>\n    return\n  }\n}\n")
    assert errors(op("#cuda_tile.rounding<zro>")) == [(3, 72, ROUNDING), (3, 75, ROUNDING_FAILED)]
    assert errors(op("#cuda_tile.rounding")) == [(3, 71, "expected '<'")]
    assert errors(op("#cuda_tile.roundin<zero>")) == [(3, 63, "unknown attribute `roundin` in dialect `cuda_tile`")]
