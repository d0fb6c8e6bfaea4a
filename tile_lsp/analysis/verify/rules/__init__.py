"""The cuda_tile dialect's own verifier rules (``XOp::verify`` of NVIDIA's CudaTile.cpp).

One module per area of the dialect; each registers its rules with
:func:`tile_lsp.analysis.verify.verifier.rule` (or ``region_rule``) for the ops it
applies to.  Importing this package imports every module in it.
"""

from __future__ import annotations

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
