"""Hovers of the spec decoders through the running server (pytest-lsp): tcgen05 kind words, block-scaled
MMA results, UMMA layouts and swizzle modes by name, FP4 tile sizes, an entry's launch directives and
parameter space.  The texts are computed by tile_lsp/analysis/ide/hover.py; the server only shows them.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.test_server_lsp import (  # noqa: F401
    RecordingClient,
    client,
    initialize,
    open_doc,
    wait_for_publish,
)

URI = "file:///spec_hovers.mlir"
TEXT = """module attributes {nv_tileaa.compute_capability = 100 : i32, tt.num_warps = 8 : i32} {
  cuda_tile.module @kernels {
    cuda_tile.entry @gemm(%p: tile<ptr<f16>>, %n: tile<i32>) {
      cuda_tile.return
    } {nvvm.maxnreg = 128 : i32}
  }
  %a = "test.src"() : () -> !cuda_tile.tile<64x32xi8>
  %b = "test.src"() : () -> !cuda_tile.tile<32x64xi8>
  %c = "test.src"() : () -> !cuda_tile.tile<64x64xi32>
  %d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_signed = true, b_signed = true, tcgen05_kind = 0x42 : i32} : tile<64x32xi8>, tile<32x64xi8>, tile<64x64xi32> -> tile<64x64xi32>
  %e = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_signed = true, b_signed = true, tcgen05_kind = 0x42 : i32, arch_conditional} : tile<64x32xi8>, tile<32x64xi8>, tile<64x64xi32> -> tile<64x64xi32>
  %fa = "test.src"() : () -> !cuda_tile.tile<128x64xf4E2M1FN>
  %fb = "test.src"() : () -> !cuda_tile.tile<64x128xf4E2M1FN>
  %acc = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
  %sfa = "test.src"() : () -> !cuda_tile.tile<128x2xf8E8M0FNU>
  %sfb = "test.src"() : () -> !cuda_tile.tile<2x128xf8E8M0FNU>
  %m = nv_tileas.block_scaled_mma %fa, %fb, %acc, %sfa, %sfb {atom = #nv_tileas<atom mxf4nvf4>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : tile<128x64xf4E2M1FN>, tile<64x128xf4E2M1FN>, tile<128x128xf32>, tile<128x2xf8E8M0FNU>, tile<2x128xf8E8M0FNU> -> tile<128x128xf32>
  %h = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
  %g = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
  %f = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
  %u = nv_tileas.dot %h, %g, %f {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout K, swizzle = (3, 4, 3), ((8, 16), (8, 8)) : ((8, 64), (1, 512))>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>
  %gv = "test.src"() : () -> !nv_tileaa.tiled_view<128x128xf16, GMEM>
  %c128 = "arith.constant"() {value = 128 : index} : () -> index
  %desc = nv_tileas.make_tiled_tma_desc %gv, %c128, %c128 {atom = #nv_tileas<atom tma_load_2d>, swizzle_mode = "128B"} : !nv_tileaa.tiled_view<128x128xf16, GMEM>, index, index -> !nv_tileas.tma_desc
}
"""
LINES = TEXT.split("\n")

KIND_TABLE = """**tcgen05 kind word** `0x42` = `0b001000010`

| field | bits | value | meaning |
|---|---|---|---|
| cta_group | 0-1 | 2 | cta_group::2 |
| scale_vector_size | 2-3 | 0 | 1X (16) |
| scale_input_acc | 4 | 0 | not set |
| block_scale | 5 | 0 | not set |
| mma_kind | 6-8 | 1 | i8 |
| ws (overlay) | 0 | 0 | not weight stationary |

"""


def _at(needle: str, nth: int = 0, offset: int = 1) -> types.Position:
    """Position ``offset`` characters into the ``nth`` occurrence of ``needle`` (0-based line/column)."""
    seen = 0
    for line, text in enumerate(LINES):
        col = text.find(needle)
        while col >= 0:
            if seen == nth:
                return types.Position(line=line, character=col + offset)
            seen += 1
            col = text.find(needle, col + 1)
    raise AssertionError(f"{needle!r} #{nth} not found")


async def _hover(client: RecordingClient, pos: types.Position) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=URI), position=pos))


async def _open(client: RecordingClient) -> list[types.Diagnostic]:
    await initialize(client)
    open_doc(client, URI, TEXT)
    return list((await wait_for_publish(client, URI, timeout=60.0)).diagnostics)


@pytest.mark.asyncio
async def test_kind_word_hover_decodes_fields_and_ladder(client: RecordingClient):
    diagnostics = await _open(client)
    # the module's target is sm_100 (not arch-conditional): 0x42 trips rule 1, which the diagnostic reports too
    assert [d.message for d in diagnostics] == [
        "'nv_tileas.dot' op INT8 type is supported only on arch-conditional variants."]
    hover = await _hover(client, _at("0x42", 0))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value == KIND_TABLE + (
        "Ladder (not arch-conditional, ISA sm_100): fails rule 1: INT8 type is supported only on "
        "arch-conditional variants.")
    hover = await _hover(client, _at("0x42", 1, offset=3))
    assert hover.contents.value == KIND_TABLE + (
        "Ladder (arch-conditional, ISA sm_100a): passes the 13 rules: opcode 10522 (`tcgen05.mma`)")


@pytest.mark.asyncio
async def test_block_scaled_result_hover(client: RecordingClient):
    await _open(client)
    pos = _at("%m = ")
    hover = await _hover(client, pos)
    assert hover.contents.value == (
        "`%m` : `tile<128x128xf32>`\n\n16384 elements of `f32`, 65536 bytes (4 bytes per element)\n\n"
        f"result #0 (`result`) of `nv_tileas.block_scaled_mma` (line {pos.line + 1})\n\n0 uses\n\n"
        "**Block-scaled MMA**: atom_K = 64, vecSize = 32, packed `0x4000000020`, "
        "PTX `tcgen05.mma.kind::mxf4nvf4`\n\n"
        "1-CTA accepted; 2-CTA rejected (no 2-CTA block-scaled MMA atom for (atom_K=64 && vecSize=32)) "
        "(this op: 1-CTA)")
    assert hover.range == types.Range(start=types.Position(line=pos.line, character=2),
                                      end=types.Position(line=pos.line, character=4))
    op_hover = await _hover(client, _at("nv_tileas.block_scaled_mma", offset=3))
    assert op_hover.contents.value.endswith("(this op: 1-CTA)")


@pytest.mark.asyncio
async def test_layout_swizzle_and_fp4_tile_hovers(client: RecordingClient):
    await _open(client)
    hover = await _hover(client, _at("umma_layout", offset=2))
    assert hover.contents.value == (
        "**UMMA layout** of `a`: UMMA_K (K-major)\n\n"
        "swizzle `(3, 4, 3)`: 128B: 128-byte swizzle (CUTLASS SWIZZLE_128B, Swizzle<3,4,3>)\n\n"
        "16-bit elements: canonical")
    hover = await _hover(client, _at('"128B"'))
    assert hover.contents.value == (
        "TMA swizzle mode `128B`: 128B: 128-byte swizzle (CUTLASS SWIZZLE_128B, Swizzle<3,4,3>)")
    hover = await _hover(client, _at("tile<128x64xf4E2M1FN>", offset=3))
    assert hover.contents.value == (
        "`tile<128x64xf4E2M1FN>`\n\n8192 elements of `f4E2M1FN`, 8192 bytes (1 byte per element); "
        "4096 bytes packed at 4 bits")


@pytest.mark.asyncio
async def test_entry_hover_shows_launch_directives_and_parameter_space(client: RecordingClient):
    await _open(client)
    pos = _at("@gemm")
    hover = await _hover(client, pos)
    assert hover.contents.value == (
        "entry `@gemm` : `(tile<ptr<f16>>, tile<i32>) -> ()`\n\n"
        f"defined at line {pos.line + 1}, 0 uses in this file\n\n"
        "**Launch** (PTX directives):\n"
        "- `.reqntid 256, 1, 1` ← tt.num_warps = 8\n"
        "- `.maxnreg 128` ← nvvm.maxnreg\n\n"
        "**Parameter space**: 12 bytes used of the 32760-byte limit of sm_100")
