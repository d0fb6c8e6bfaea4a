"""What an analysis takes and gives: its options, and its result per chunk and per document.

The data every layer above the analysis reads (the CLI, the language server,
the lowering); it imports nothing of the parser, the builder or the verifier.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tile_lsp.analysis.diagnostics import Diagnostic
from tile_lsp.analysis.split import Chunk


@dataclass
class AnalysisOptions:
    """Options of one analysis run.

    ``split_input_file``: analyse each ``// -----`` chunk on its own (MLIR's
    ``-split-input-file``).  ``allow_unregistered_dialect``: accept ops of
    unknown dialects (MLIR's ``-allow-unregistered-dialect``); tile-lsp
    accepts them by default, as an editor must.  ``tile_version``: targeted
    Tile IR version (``"13.1"`` ...), ``None`` for the newest.
    ``target_sm``: targeted compute capability (``90`` for ``sm_90``), used
    where the IR names none; ``editor_checks``: also run the language
    server's own checks (see :mod:`tile_lsp.analysis.rules.target`);
    ``mlir_tool_input``: the text is written for MLIR tools such as
    ``cuda-tile-opt`` (a ``RUN:`` line, ``expected-*`` directives...), so the
    editor checks also flag what those tools do not read.
    """

    split_input_file: bool = False
    allow_unregistered_dialect: bool = True
    tile_version: str | None = None
    mlir_compat: bool = False
    warn_unsupported_hints: bool = False
    error_unsupported_hints: bool = False
    target_sm: int | None = None
    editor_checks: bool = False
    mlir_tool_input: bool = False


@dataclass
class ChunkAnalysis:
    """Result for one chunk: its IR (``None`` if nothing parsed) and diagnostics.

    Ranges of ``diagnostics`` are in whole-file coordinates.
    """

    chunk: Chunk
    module: object | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: per-unit results when the chunk was analysed by units (:mod:`tile_lsp.analysis.units`)
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

    ``state`` is the :class:`~tile_lsp.analysis.units.ChunkState` of the work done so far (the units
    built, those of the previous analysis not reached yet), for the next
    analysis to reuse; ``None`` when nothing is worth keeping.
    """

    def __init__(self, state=None):
        super().__init__("analysis cancelled")
        self.state = state
