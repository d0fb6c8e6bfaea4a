"""Per-chunk analysis pipeline: parse (with recovery), build the IR, verify.

``analyze_chunk`` never raises on bad input: an internal error becomes an
``internal`` diagnostic at the top of the chunk, so the user still sees why
analysis stopped.
"""

from __future__ import annotations

import logging

from tile_lsp.analysis.ir.diagnostics import (
    LATE_PARSE_CODES,
    Diagnostic,
    Range,
    Severity,
    SourceText,
    follow_ups_end,
    mlir_order,
)
from tile_lsp.analysis.ir.split import Chunk
from tile_lsp.analysis.incremental.recovery import failure_scope, without_recovery_cascades
from tile_lsp.analysis.incremental.results import AnalysisCancelled, ChunkAnalysis
from tile_lsp.analysis.ir.options import AnalysisOptions
from tile_lsp.collector import collector_paused

log = logging.getLogger(__name__)


def analyze_chunk(chunk: Chunk, options: AnalysisOptions, source: SourceText | None = None, *, previous=None,
                  state_out: list | None = None, cancelled=None, edit=None, workers: int = 1):
    """Analyse one chunk; returns a :class:`~tile_lsp.analysis.incremental.results.ChunkAnalysis`.

    ``source`` indexes the whole document (for whole-file positions); when
    omitted, positions are relative to the chunk.  With
    ``options.mlir_compat`` the chunk stops at its first parse error, as
    ``mlir-opt`` does, and is not verified after one.  Otherwise a chunk
    made of several top-level units whose brackets balance is analysed unit
    by unit (:mod:`tile_lsp.analysis.incremental.units`); one whose brackets do not
    (a ``}`` missing or extra) is parsed whole, as MLIR parses it, so that
    the error reported first is where MLIR's parser really fails, not where
    a unit cut by indentation ends.  ``previous`` is the
    :class:`~tile_lsp.analysis.incremental.units.ChunkState` of an earlier analysis to
    reuse, and the new state is appended to ``state_out``.  ``cancelled`` and
    ``edit`` go to :func:`~tile_lsp.analysis.incremental.units.analyze_units` (the only
    path that can be cancelled: it raises
    :class:`~tile_lsp.analysis.incremental.results.AnalysisCancelled`).  Diagnostics come
    in MLIR's order (:func:`~tile_lsp.analysis.ir.diagnostics.mlir_order`): the
    parse phase, then the verifier.  The cyclic garbage collector is paused meanwhile
    (:func:`tile_lsp.collector.collector_paused`).

    ``workers`` > 1 (the command line only: it forks) lets a large chunk
    analysed by units, with no ``previous``, be analysed by that many
    processes (:mod:`tile_lsp.analysis.incremental.parallel`); when it is
    clean, the result has its diagnostics (none) but no module.
    """
    with collector_paused():
        return _analyze_chunk(chunk, options, source, previous=previous, state_out=state_out,
                              cancelled=cancelled, edit=edit, workers=workers)


def _analyze_chunk(chunk: Chunk, options: AnalysisOptions, source: SourceText | None, *, previous,
                   state_out: list | None, cancelled, edit, workers: int = 1):
    """:func:`analyze_chunk`, the collector paused."""
    from tile_lsp.analysis.syntax.builder import Builder
    from tile_lsp.analysis.verify.verifier import verify_module
    from tile_lsp.grammar.parse import brackets_balance, parse

    if source is None:
        source = SourceText(chunk.text)
        base = 0
    else:
        base = chunk.start_offset
    compat = options.mlir_compat
    diagnostics: list[Diagnostic] = []
    module = None
    try:
        if not compat:
            from tile_lsp.analysis.incremental.layout import all_exact, chunk_layout
            from tile_lsp.analysis.incremental.units import analyze_units

            same: dict = {}
            layout = chunk_layout(chunk.text, previous, same)
            if layout is not None and all_exact(layout):
                if previous is None and state_out is None and cancelled is None:
                    from tile_lsp.analysis.incremental import parallel

                    if parallel.worth_it(layout, chunk.text.count("\n"), workers):
                        found = parallel.analyze_clean_in_parallel(chunk, layout, options, source, workers)
                        if found is not None:
                            return found
                analysis, state = analyze_units(chunk, layout, options, source, previous,
                                                cancelled=cancelled, edit=edit, same=same)
                if state_out is not None:
                    state_out.append(state)
                return analysis
        result = parse(chunk.text, max_issues=50)
        syntax = [Diagnostic.from_syntax(issue, source, base) for issue in result.issues]
        builder = Builder(source, base, result.text, stop_at_first_error=compat, end=len(chunk.text),
                          builtin_default=compat)
        module = builder.build(result.tree)
        build = without_recovery_cascades(builder.diagnostics, result, chunk.text, source, base)
        if compat and (syntax or build):
            # MLIR stops at its first error, a syntax error or one of a custom op's parser met before
            # it (the builder stopped at its first fatal one); its diagnostics all sit at one place
            found = mlir_order(syntax, build, [])
            # every undeclared value, at the region's end (MLIR reports them all; of the location
            # aliases never defined only the first: its finalize walk stops there)
            late = found[0].code in LATE_PARSE_CODES and found[0].code != "parse.location-alias"
            # an error the parser reports again after the first, elsewhere, for the same failure
            chain = follow_ups_end(found, 0)
            return ChunkAnalysis(chunk, None if syntax else module,
                                 [d for d in found if d.code == found[0].code] if late else
                                 found[:chain] if chain > 1 else
                                 [d for d in found if d.range == found[0].range][:2])
        # brackets that do not balance (closed by recovery at the end of the text, or a `}` too many):
        # which op holds which region is a guess, so the verifier's findings on that structure would
        # be ours, not the user's (MLIR stops there too)
        guessed = result.closed or (bool(syntax) and not brackets_balance(chunk.text))
        verified = [] if guessed else verify_module(module, options)
        diagnostics = mlir_order(syntax, build, verified, failure_scope(module))
    except AnalysisCancelled:
        raise
    except Exception as exc:  # never let a bug hide the user's file
        log.exception("analysis failed")
        pos = source.position(base)
        diagnostics.append(Diagnostic(
            Severity.ERROR, f"tile-lsp internal error while analysing this chunk: {type(exc).__name__}: {exc}",
            Range(pos, pos), "internal"))
    return ChunkAnalysis(chunk, module, diagnostics)
