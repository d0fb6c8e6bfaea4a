"""``tile-lsp serve`` reads the workspace's tile-lsp.toml / pyproject.toml [tool.tile-lsp]."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.test_cli_conventions import F8_CONSTANT, F8_SM80, HINT_WARNING, HINTED
from tests.test_server_lsp import RecordingClient, open_doc, recording_server, wait_for_publish
from tile_lsp.analysis.api import analyze_text
from tile_lsp.config import KEYS
from tile_lsp.server.server import TileLanguageServer


client = recording_server([sys.executable, "-m", "tile_lsp.cli", "serve"],
                          "A client connected to ``tile-lsp serve``; tests initialize it with their workspace.")


async def initialize_in(client: LanguageClient, root: Path, options: dict | None = None) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options=options,
    ))


def messages(params: types.PublishDiagnosticsParams) -> list[str]:
    return [d.message for d in params.diagnostics]


@pytest.mark.asyncio
async def test_workspace_config_sets_target_and_hint_warnings(client: RecordingClient, tmp_path: Path):
    (tmp_path / "tile-lsp.toml").write_text('gpu-name = "sm_80"\nwarn-unsupported-hints = true\n')
    await initialize_in(client, tmp_path)
    f8, hinted = (tmp_path / "f8.mlir").as_uri(), (tmp_path / "hinted.mlir").as_uri()
    open_doc(client, f8, F8_CONSTANT)
    open_doc(client, hinted, HINTED)
    assert messages(await wait_for_publish(client, f8)) == [F8_SM80]
    assert messages(await wait_for_publish(client, hinted)) == [HINT_WARNING]
    assert any(m.message == f"tile-lsp: configuration from {tmp_path / 'tile-lsp.toml'}"
               for m in client.log_messages)
    # the editor's setting, when given, wins over the file
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tileLsp": {"targetGpu": "sm_90"}}))
    assert messages(await wait_for_publish(client, f8, count=2)) == []


@pytest.mark.asyncio
async def test_invalid_workspace_config_is_a_warning_not_a_failure(client: RecordingClient, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.tile-lsp]\ngpu = "sm_80"\n')
    await initialize_in(client, tmp_path)
    uri = (tmp_path / "f8.mlir").as_uri()
    open_doc(client, uri, F8_CONSTANT)
    assert messages(await wait_for_publish(client, uri)) == []
    warnings = [m.message for m in client.log_messages if m.type == types.MessageType.Warning]
    assert warnings == [f"tile-lsp: {tmp_path / 'pyproject.toml'}: unknown key 'tool.tile-lsp.gpu' (known keys: "
                        + ", ".join(KEYS) + "); the configuration file is ignored"]


def test_serve_options_override_the_file_and_settings_override_both(tmp_path: Path):
    (tmp_path / "tile-lsp.toml").write_text('gpu-name = "sm_90"\ntile-version = "13.2"\n')
    server = TileLanguageServer()
    server.load_project_config(tmp_path)
    assert (server.tile_version, server.target_gpu) == ("13.2", ("sm_90", 90))
    assert analyze_text(F8_CONSTANT, server.analysis_options(F8_CONSTANT)).diagnostics == []
    server.cli_overrides = {"gpu-name": "sm_80"}  # tile-lsp serve --gpu-name sm_80
    assert server.target_gpu == ("sm_80", 80)
    assert [d.message for d in analyze_text(F8_CONSTANT, server.analysis_options(F8_CONSTANT)).diagnostics] == [
        F8_SM80]
    server.settings, _ = server.settings.updated({"tileLsp": {"targetGpu": "sm_100", "tileVersion": "13.3"}})
    assert (server.tile_version, server.target_gpu) == ("13.3", ("sm_100", 100))
    server.settings, _ = server.settings.updated({"tileLsp": {"targetGpu": None}})
    assert server.target_gpu == ("sm_80", 80)  # cleared in the editor: back to the command line's
