"""The cuda_tile dialect's own verifier rules (``XOp::verify`` of NVIDIA's CudaTile.cpp).

Each rule is registered with :func:`tile_lsp.analysis.verifier.rule` for the
ops it applies to; messages are verbatim.
"""

from __future__ import annotations

from tile_lsp.analysis.verifier import rule  # noqa: F401
