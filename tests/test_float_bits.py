"""Hex float literals: bit patterns read as MLIR reads them (``<f16: 0x7C00>`` is +inf)."""

from __future__ import annotations

import math
import struct

from hypothesis import given
from hypothesis import strategies as st

from tile_lsp.analysis.api import analyze_text
from tile_lsp.dialect.types import float_from_bits


@given(st.integers(min_value=0, max_value=0xFFFF))
def test_f16_matches_ieee_half(bits):
    expected = struct.unpack("<e", struct.pack("<H", bits))[0]
    got = float_from_bits(bits, "f16")
    assert (math.isnan(expected) and math.isnan(got)) or got == expected


@given(st.integers(min_value=0, max_value=0xFFFF))
def test_bf16_is_the_top_half_of_f32(bits):
    expected = struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    got = float_from_bits(bits, "bf16")
    assert (math.isnan(expected) and math.isnan(got)) or got == expected


def test_small_formats():
    assert [float_from_bits(b, "f4E2M1FN") for b in range(8)] == [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    assert float_from_bits(0xF, "f4E2M1FN") == -6.0
    assert float_from_bits(0x7E, "f8E4M3FN") == 448.0 and math.isnan(float_from_bits(0x7F, "f8E4M3FN"))
    assert float_from_bits(0x7B, "f8E5M2") == 57344.0 and float_from_bits(0x7C, "f8E5M2") == math.inf
    assert float_from_bits(127, "f8E8M0FNU") == 1.0 and math.isnan(float_from_bits(0xFF, "f8E8M0FNU"))


def test_hex_literals_in_constants_and_identities():
    text = """\
cuda_tile.module @m {
  testing$func @k(%a: tile<4xf32>) {
    %c = constant <f16: [0x7C00, 0x3C00]> : tile<2xf16>
    %r = reduce %a dim=0 identities=[0xFF800000 : f32] : tile<4xf32> -> tile<f32>
    (%l: tile<f32>, %q: tile<f32>) {
      %m = maxf %l, %q : tile<f32>
      yield %m : tile<f32>
    }
    return
  }
}
"""
    analysis = analyze_text(text)
    assert analysis.diagnostics == []
    ops = {op.name: op for op in analysis.chunks[0].module.walk()}
    assert ops["cuda_tile.constant"].attr("value").values == [math.inf, 1.0]
    assert ops["cuda_tile.reduce"].attr("identities").elements[0].value == -math.inf
