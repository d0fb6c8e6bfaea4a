"""What an analysis is asked to do: :class:`AnalysisOptions`.

Read by every layer of the analysis (the builder, the verifier and its
rules, the pipeline) and given by the CLI, the language server and the
lowering; it imports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    server's own checks (see :mod:`tile_lsp.analysis.verify.rules.target`);
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
