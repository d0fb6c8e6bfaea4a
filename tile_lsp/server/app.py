"""The language server's composition root: :func:`create_server` registers every
feature module's handlers on a :class:`~tile_lsp.server.server.TileLanguageServer`,
:func:`serve_stdio` runs it (``python -m tile_lsp.server``, ``tile-lsp serve``).

Feature modules: this one (the document lifecycle: ``initialize``,
``textDocument/didOpen``, ``didChange``, ``didClose``,
``workspace/didChangeConfiguration``, ``shutdown``),
:mod:`~tile_lsp.server.navigation`, :mod:`~tile_lsp.server.editing`,
:mod:`~tile_lsp.server.bytecode` and :mod:`~tile_lsp.server.codegen`.  Each imports
:mod:`tile_lsp.server.server`; none imports this module.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.workspace import Workspace

from tile_lsp.server.bytecode import register_bytecode_features
from tile_lsp.server.codegen import register_codegen_features
from tile_lsp.server.document import IndexedWorkspace
from tile_lsp.server.editing import register_editing_features
from tile_lsp.server.heap import configure_collector
from tile_lsp.server.navigation import register_navigation_features
from tile_lsp.server.server import TileLanguageServer, guarded


# Handlers are synchronous on purpose: they only update state and schedule
# tasks, and running them synchronously keeps them in message order.


@guarded()
def on_initialize(ls: TileLanguageServer, params: types.InitializeParams) -> None:
    """``initialize``: read ``initializationOptions`` (:data:`tile_lsp.server.settings.SETTINGS`).

    pygls has just created the (still empty) workspace: its documents become
    :class:`~tile_lsp.server.document.IndexedTextDocument`, which apply an
    incremental change to the changed lines only.
    """
    if type(ls.workspace) is Workspace:
        ls.workspace.__class__ = IndexedWorkspace  # same state, one method overridden
    ls.load_project_config(workspace_root(params))
    ls.apply_settings(params.initialization_options)


def workspace_root(params: types.InitializeParams) -> Path | None:
    """The directory of the workspace ``initialize`` names: its first workspace folder, else
    ``rootUri``, else ``rootPath``; ``None`` when it names none (or not a ``file:`` URI)."""
    from pygls.uris import to_fs_path

    uris = [f.uri for f in params.workspace_folders or []] + ([params.root_uri] if params.root_uri else [])
    for uri in uris:
        path = to_fs_path(uri)
        if path:
            return Path(path)
    return Path(params.root_path) if params.root_path else None


@guarded()
def on_did_open(ls: TileLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    """``textDocument/didOpen``: analyse the document and publish at once."""
    ls.document_opened(params.text_document.uri)


@guarded()
def on_did_change(ls: TileLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    """``textDocument/didChange``: pygls applied the edits; analyse after the debounce."""
    ls.document_changed(params.text_document.uri)


@guarded()
def on_did_close(ls: TileLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    """``textDocument/didClose``: publish an empty list for the document."""
    ls.document_closed(params.text_document.uri)


@guarded()
def on_did_change_configuration(ls: TileLanguageServer, params: types.DidChangeConfigurationParams) -> None:
    """``workspace/didChangeConfiguration``: update settings, re-analyse if needed."""
    if ls.apply_settings(params.settings):
        ls.reanalyze_all()


@guarded()
def on_shutdown(ls: TileLanguageServer, params: Any) -> None:
    """``shutdown``: cancel pending analyses."""
    ls.shutdown_analyses()


def create_server() -> TileLanguageServer:
    """Build a fresh tile-lsp server with all its handlers registered.

    Returns a :class:`pygls.lsp.server.LanguageServer` (a
    :class:`TileLanguageServer`) named ``tile-lsp`` with incremental text
    synchronisation; start it with ``start_io()`` or use :func:`serve_stdio`.
    """
    server = TileLanguageServer()
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(on_did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(on_did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(on_did_close)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(on_did_change_configuration)
    server.feature(types.SHUTDOWN)(on_shutdown)
    register_navigation_features(server)
    register_editing_features(server)
    register_bytecode_features(server)
    register_codegen_features(server)
    return server


def serve_stdio(overrides: Mapping[str, Any] | None = None) -> None:
    """Run a tile-lsp server over stdin/stdout until the client says ``exit``.

    ``overrides``: configuration keys (``{"gpu-name": "sm_80"}``) that
    take the place of the workspace configuration file's.  Python logging
    goes to stderr (stdout carries the protocol).  The analysis is warmed up
    in a worker thread while the client initializes.
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.WARNING,
            stream=sys.stderr,
            format="tile-lsp %(levelname)s %(name)s: %(message)s",
        )
    configure_collector()
    server = create_server()
    server.cli_overrides = dict(overrides or {})
    server.warm_up()
    server.start_io()
