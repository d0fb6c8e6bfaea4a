"""The tile-lsp language server (pygls), a thin adapter over :mod:`tile_lsp.analysis`.

Modules: :mod:`~tile_lsp.server.app` (:func:`create_server`, :func:`serve_stdio`),
:mod:`~tile_lsp.server.server` (the server: documents, analyses, publishing),
:mod:`~tile_lsp.server.navigation`, :mod:`~tile_lsp.server.editing`,
:mod:`~tile_lsp.server.bytecode`, :mod:`~tile_lsp.server.codegen` (its features),
:mod:`~tile_lsp.server.convert` (tile-lsp diagnostics to
``lsprotocol`` diagnostics) and :mod:`~tile_lsp.server.settings` (client
settings).  Run it with ``python -m tile_lsp.server`` or ``tile-lsp serve``.

``create_server`` and ``serve_stdio`` are re-exported lazily so that importing
this package does not import pygls.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_server", "serve_stdio"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from tile_lsp.server import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
