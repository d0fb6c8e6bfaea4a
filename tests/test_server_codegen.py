"""Language-server commands tile.showPTX and tile.showLowered (``tile_lsp.server.codegen``), over LSP."""

from __future__ import annotations

import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import server_env
from tests.test_codegen import KERNEL
from tile_lsp.codegen import lower_text


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "tile_lsp.server"], server_env=server_env()),
    loop_scope="function",
)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="tileir", version=1, text=text)))


def _plain(answer) -> dict:
    return answer if isinstance(answer, dict) else dict(answer.__dict__)


@pytest.mark.asyncio(loop_scope="function")
async def test_show_ptx_returns_the_lowering_of_the_open_text(client: LanguageClient):
    uri = "file:///ws/scale.mlir"
    _open(client, uri, KERNEL)
    answer = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showPTX", arguments=[uri])))
    assert answer["ok"] is True and answer["language"] == "ptx" and answer["title"] == "scale.mlir.ptx"
    assert answer["content"] == lower_text(KERNEL, None, file_name="scale.mlir").ptx
    assert ".visible .entry scale(" in answer["content"]


@pytest.mark.asyncio(loop_scope="function")
async def test_show_lowered_stage_and_errors(client: LanguageClient):
    uri = "file:///ws/scale.mlir"
    _open(client, uri, KERNEL)
    answer = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showLowered", arguments=[uri, "layout"])))
    assert answer["ok"] is True and answer["language"] == "tileir"
    assert "tile_lsp.slots = 2 : i32" in answer["content"]
    answer = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showLowered", arguments=[uri, "nope"])))
    assert answer["ok"] is False and answer["message"].startswith("unknown stage 'nope'")
    bad = "file:///ws/bad.mlir"
    _open(client, bad, KERNEL.replace("    return\n",
                                      "    %p = alloca num_elem = 4, alignment = 16 : tile<ptr<f32>>\n    return\n"))
    answer = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showPTX", arguments=[bad])))
    assert answer["ok"] is False
    assert answer["message"] == "line 12: the PTX lowering does not support 'cuda_tile.alloca' yet"
    assert answer["diagnostics"][0]["line"] == 11


@pytest.mark.asyncio(loop_scope="function")
async def test_show_ptx_uses_the_target_gpu_setting(client: LanguageClient):
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"tileLsp": {"targetGpu": "sm_86"}}))
    uri = "file:///ws/scale.mlir"
    _open(client, uri, KERNEL)
    answer = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showPTX", arguments=[uri])))
    assert answer["ok"] is True and ".target sm_86" in answer["content"]


@pytest.mark.asyncio(loop_scope="function")
async def test_show_ptx_refuses_staging_beyond_the_targets_shared_memory(client: LanguageClient):
    from tests.test_codegen import _transpose_kernel

    uri = "file:///ws/transpose.mlir"
    _open(client, uri, _transpose_kernel(128, 256))
    answer = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showPTX", arguments=[uri])))
    assert answer["ok"] is True  # sm_90 by default: 128 KiB of 227 KB
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"tileLsp": {"targetGpu": "sm_120"}}))
    answer = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showPTX", arguments=[uri])))
    assert answer["ok"] is False and answer["content"] == ""
    assert answer["message"] == ("line 10: staging needs 131072 bytes of shared memory per CTA; sm_120 allows at "
                                 "most 101376 bytes (99 KB)")
    assert answer["diagnostics"][0]["line"] == 9


@pytest.mark.asyncio(loop_scope="function")
async def test_show_ptx_reports_work_done_progress(client: LanguageClient):
    """A client with ``window.workDoneProgress`` sees the lowering begin and end (server.work_done_progress)."""
    uri = "file:///ws/scale.mlir"
    _open(client, uri, KERNEL)
    answer = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showPTX", arguments=[uri])))
    assert answer["ok"] is True
    reports = [r for r in client.progress_reports.values()
               if r and isinstance(r[0], types.WorkDoneProgressBegin) and r[0].title == "tile-lsp lowering"]
    assert len(reports) == 1
    begin, end = reports[0][0], reports[0][-1]
    assert begin.message == "lowering to ptx" and not begin.cancellable
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "done"


@pytest.mark.asyncio(loop_scope="function")
async def test_show_lowered_leaves_the_documents_ir_as_it_is(client: LanguageClient):
    """The lowering rewrites a clone of the editor's IR: the same request answers the same twice,
    and the hover still sees the cuda_tile op the lowering turned into nv_tileas.tiled_load."""
    uri = "file:///ws/scale.mlir"
    _open(client, uri, KERNEL)
    params = types.ExecuteCommandParams(command="tile.showLowered", arguments=[uri, "nv_tileas"])
    first = _plain(await client.workspace_execute_command_async(params))
    assert first["ok"] is True and "nv_tileas.tiled_load" in first["content"]
    second = _plain(await client.workspace_execute_command_async(params))
    assert second["content"] == first["content"]
    assert first["content"] == lower_text(KERNEL, None, file_name="scale.mlir", stop_after="nv_tileas").stages[
        "nv_tileas"]
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=6, character=20)))
    assert hover is not None and "cuda_tile.load_view_tko" in hover.contents.value
