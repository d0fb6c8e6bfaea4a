"""Lowering of cuda_tile to PTX ("show PTX"): :func:`lower_text` runs the pass pipeline.

See :mod:`tile_lsp.codegen.pipeline` for the passes and stages, and
``docs/codegen.md`` for the design.
"""

from tile_lsp.codegen.pipeline import (
    PASSES,
    STAGES,
    KernelInfo,
    LoweringResult,
    lower_text,
)

__all__ = ["PASSES", "STAGES", "KernelInfo", "LoweringResult", "lower_text"]
