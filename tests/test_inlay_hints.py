"""Inlay hints (tile_lsp.analysis.ide.inlay_hints): elided result types and tile sizes."""

from __future__ import annotations

from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.ir.diagnostics import Position, Range
from tile_lsp.analysis.ide.inlay_hints import InlayHint, InlayHintOptions, inlay_hints, size_text

TEXT = (
    "cuda_tile.module @m {\n"
    "  cuda_tile.entry @e() {\n"
    "    %x, %y, %z = get_tile_block_id : tile<i32>\n"
    "    %a = addi %x, %y : tile<i32>\n"
    "    %c = constant <f32: 1.0> : tile<256x4xf32>\n"
    "    return\n"
    "  }\n"
    "}\n"
)


def test_result_types_and_sizes() -> None:
    assert inlay_hints(analyze_text(TEXT)) == [
        InlayHint(Position(2, 6), ": tile<i32>", "type"),
        InlayHint(Position(2, 10), ": tile<i32>", "type"),
        InlayHint(Position(2, 14), ": tile<i32>", "type"),
        InlayHint(Position(4, 46), "1024 × f32 = 4 KiB", "size"),
    ]


def test_options_and_range() -> None:
    a = analyze_text(TEXT)
    only_types = inlay_hints(a, options=InlayHintOptions(tile_sizes=False))
    assert [h.kind for h in only_types] == ["type"] * 3
    only_sizes = inlay_hints(a, options=InlayHintOptions(result_types=False))
    assert [h.label for h in only_sizes] == ["1024 × f32 = 4 KiB"]
    assert inlay_hints(a, Range(Position(3, 0), Position(3, 40))) == []


def test_size_text() -> None:
    assert size_text(512) == "512 B"
    assert size_text(1024) == "1 KiB"
    assert size_text(1536) == "1.5 KiB"
    assert size_text(2 << 20) == "2 MiB"


def test_sub_byte_elements_rounded_up() -> None:
    text = TEXT.replace("tile<256x4xf32>", "tile<3xi1>").replace("<f32: 1.0>", "<i1: true>")
    sizes = [h.label for h in inlay_hints(analyze_text(text)) if h.kind == "size"]
    assert sizes == ["3 × i1 = 1 B"]
