"""Entry point of the analysis layer: text in, IR and diagnostics out.

Both the command line (``tile-lsp --check``) and the language server call
:func:`analyze_text` (the server through
:class:`~tile_lsp.analysis.incremental.document.IncrementalAnalyzer`, which returns the
same); neither re-derives anything the analysis knows.  The options
(:mod:`tile_lsp.analysis.ir.options`) and result types
(:mod:`tile_lsp.analysis.incremental.results`) are exported here.
"""

from __future__ import annotations

from tile_lsp.analysis.ir.options import AnalysisOptions
from tile_lsp.analysis.incremental.results import AnalysisCancelled, ChunkAnalysis, DocumentAnalysis
from tile_lsp.analysis.ir.split import Chunk, split_chunks

__all__ = ["AnalysisCancelled", "AnalysisOptions", "ChunkAnalysis", "DocumentAnalysis", "analyze_text"]


def analyze_text(text: str, options: AnalysisOptions | None = None, *, workers: int = 1) -> DocumentAnalysis:
    """Parse, build the IR and verify ``text``; never raises on bad input.

    Returns a :class:`DocumentAnalysis` whose diagnostics carry whole-file
    positions (0-based line, UTF-16 column).  ``workers`` > 1 lets a large
    chunk be analysed by that many forked processes (``tile-lsp check``;
    :mod:`tile_lsp.analysis.incremental.parallel`): the diagnostics are the
    same, but a clean chunk analysed so has no module.
    """
    from tile_lsp.analysis.ir.diagnostics import SourceText
    from tile_lsp.analysis.incremental.pipeline import analyze_chunk  # late: heavy import

    options = options or AnalysisOptions()
    chunks = split_chunks(text) if options.split_input_file else [Chunk(0, 0, text)]
    source = SourceText(text)
    return DocumentAnalysis(text, [analyze_chunk(c, options, source, workers=workers) for c in chunks])
