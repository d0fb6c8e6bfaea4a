"""Per-chunk analysis pipeline: parse (with recovery), build the IR, verify.

``analyze_chunk`` never raises on bad input: an internal error becomes an
``internal`` diagnostic at the top of the chunk, so the user still sees why
analysis stopped.
"""

from __future__ import annotations

import logging

from tile_lsp.analysis.diagnostics import Diagnostic, Range, Severity, SourceText
from tile_lsp.analysis.split import Chunk

log = logging.getLogger(__name__)


def analyze_chunk(chunk: Chunk, options, source: SourceText | None = None, *, previous=None,
                  state_out: list | None = None):
    """Analyse one chunk; returns a :class:`~tile_lsp.analysis.api.ChunkAnalysis`.

    ``source`` indexes the whole document (for whole-file positions); when
    omitted, positions are relative to the chunk.  With
    ``options.mlir_compat`` the chunk stops at its first parse error, as
    ``mlir-opt`` does, and is not verified after one.  Otherwise a chunk
    made of several top-level units is analysed unit by unit
    (:mod:`tile_lsp.analysis.units`): ``previous`` is the
    :class:`~tile_lsp.analysis.units.ChunkState` of an earlier analysis to
    reuse, and the new state is appended to ``state_out``.
    """
    from tile_lsp.analysis.api import ChunkAnalysis
    from tile_lsp.analysis.builder import Builder
    from tile_lsp.analysis.verifier import verify_module
    from tile_lsp.grammar.parse import parse

    if source is None:
        source = SourceText(chunk.text)
        base = 0
    else:
        base = chunk.start_offset
    compat = getattr(options, "mlir_compat", False)
    diagnostics: list[Diagnostic] = []
    module = None
    try:
        if not compat:
            from tile_lsp.analysis.units import analyze_units, chunk_layout

            layout = chunk_layout(chunk.text, previous)
            if layout is not None:
                analysis, state = analyze_units(chunk, layout, options, source, previous)
                if state_out is not None:
                    state_out.append(state)
                return analysis
        result = parse(chunk.text, max_issues=1 if compat else 50)
        for issue in result.issues:
            diagnostics.append(Diagnostic(
                Severity.ERROR, issue.message,
                source.range(base + issue.start, base + issue.end), "parse.syntax"))
        if compat and result.issues:
            # MLIR stops at the first error; its diagnostics all sit at one place
            first = diagnostics[0].range
            return ChunkAnalysis(chunk, None, [d for d in diagnostics if d.range == first][:2])
        builder = Builder(source, base, result.text, stop_at_first_error=compat)
        module = builder.build(result.tree)
        diagnostics.extend(builder.diagnostics)
        if compat and builder.diagnostics:
            # the builder stopped at the first fatal error; what it reported up to it is MLIR's
            return ChunkAnalysis(chunk, module, builder.diagnostics)
        diagnostics.extend(verify_module(module, options))
    except Exception as exc:  # never let a bug hide the user's file
        log.exception("analysis failed")
        pos = source.position(base)
        diagnostics.append(Diagnostic(
            Severity.ERROR, f"tile-lsp internal error while analysing this chunk: {type(exc).__name__}: {exc}",
            Range(pos, pos), "internal"))
    diagnostics.sort(key=Diagnostic.sort_key)
    return ChunkAnalysis(chunk, module, diagnostics)
