"""What an analysis gives: its result per chunk and per document, and the exception of a cancelled one.

The data every layer above the pipeline reads (the CLI, the language server,
the lowering); it imports nothing of the parser, the builder or the verifier.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tile_lsp.analysis.ir.diagnostics import Diagnostic
from tile_lsp.analysis.ir.split import Chunk

if TYPE_CHECKING:  # the IR classes load with the analysis, not with its result types
    from tile_lsp.analysis.ir.core import Module


@dataclass
class ChunkAnalysis:
    """Result for one chunk: its IR (``None`` if nothing parsed) and diagnostics.

    Ranges of ``diagnostics`` are in whole-file coordinates.
    """

    chunk: Chunk
    module: Module | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: per-unit results when the chunk was analysed by units (:mod:`tile_lsp.analysis.incremental.units`)
    units: list | None = None


@dataclass
class DocumentAnalysis:
    """Result for a whole text: per-chunk results and all diagnostics sorted."""

    text: str
    chunks: list[ChunkAnalysis]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        for chunk in self.chunks:
            out.extend(chunk.diagnostics)
        return out


class AnalysisCancelled(Exception):
    """Raised inside an analysis whose ``cancelled`` check said yes (a newer version of the text came).

    ``state`` is the :class:`~tile_lsp.analysis.incremental.units.ChunkState` of the work done so far (the units
    built, those of the previous analysis not reached yet), for the next
    analysis to reuse; ``None`` when nothing is worth keeping.
    """

    def __init__(self, state=None):
        super().__init__("analysis cancelled")
        self.state = state
