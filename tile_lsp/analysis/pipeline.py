"""Per-chunk analysis pipeline: parse, build IR, verify (placeholder until the parser lands)."""

from __future__ import annotations


def analyze_chunk(chunk, options):
    from tile_lsp.analysis.api import ChunkAnalysis

    return ChunkAnalysis(chunk, None, [])
