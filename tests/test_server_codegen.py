"""Language-server commands tile.showPTX and tile.showLowered (``tile_lsp.server.codegen``), over LSP."""

from __future__ import annotations

import asyncio
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
    # VS Code declares workspace.codeLens.refreshSupport and answers the server's refresh requests
    lsp_client.code_lens_refreshed = asyncio.Event()

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def on_code_lens_refresh(params: None) -> None:
        lsp_client.code_lens_refreshed.set()

    lsp_client.initialized = await lsp_client.initialize_session(types.InitializeParams(
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


def _lens_title(n: int, target: str = "sm_90") -> str:
    return f"{n} PTX instruction{'' if n == 1 else 's'} ({target}, static)"


async def _analysed(client: LanguageClient, uri: str) -> None:
    """Wait for the first publishDiagnostics of ``uri`` (the hover reads the published analysis)."""
    for _ in range(200):
        if uri in client.diagnostics:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics published for {uri}")


async def _lenses(client: LanguageClient, uri: str) -> list:
    return list(await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri))))


async def _hover(client: LanguageClient, uri: str, line: int, character: int):
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))


@pytest.mark.asyncio(loop_scope="function")
async def test_show_ptx_counts_become_code_lenses_and_hover_lines_until_the_document_changes(
        client: LanguageClient):
    lens_provider = client.initialized.capabilities.code_lens_provider
    assert lens_provider is not None and not lens_provider.resolve_provider
    uri = "file:///ws/scale.mlir"
    _open(client, uri, KERNEL)
    await _analysed(client, uri)
    assert await _lenses(client, uri) == []  # no Show PTX yet
    assert await _lenses(client, "file:///ws/unknown.mlir") == []
    answer = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showPTX", arguments=[uri])))
    assert answer["ok"] is True and answer["target"] == "sm_90"
    await asyncio.wait_for(client.code_lens_refreshed.wait(), 10)

    counts = lower_text(KERNEL, None, file_name="scale.mlir").op_counts["scale"]
    lenses = await _lenses(client, uri)
    assert [(lens.range.start.line, lens.range.start.character, lens.command.title) for lens in lenses] == [
        (line, col, _lens_title(c.instructions)) for (line, col), c in sorted(counts.items())]
    assert all(lens.command.command == "" for lens in lenses)
    assert [c["instructions"] for c in answer["instructionCounts"]] == [c.instructions for _, c in sorted(counts.items())]
    # make_tensor_view (line 4) is one instruction: singular
    assert lenses[0].range.start.line == 3 and lenses[0].command.title == "1 PTX instruction (sm_90, static)"

    # the hover on the mulf (line 10) has its count
    mulf = KERNEL.splitlines()[9]
    (line, col), mulf_count = next((pos, c) for pos, c in counts.items() if c.op == "cuda_tile.mulf")
    assert line == 9
    hover = await _hover(client, uri, 9, mulf.index("mulf") + 1)
    assert hover.contents.value.endswith(
        f"\n\nPTX: {mulf_count.instructions} instructions (sm_90, static, from the last Show PTX)")
    assert "cuda_tile.mulf" in hover.contents.value
    # the reshape (line 8) emitted no instruction: its hover has no PTX line
    assert (7, 4) not in counts
    hover = await _hover(client, uri, 7, KERNEL.splitlines()[7].index("reshape") + 1)
    assert "cuda_tile.reshape" in hover.contents.value and "PTX:" not in hover.contents.value

    # after an edit the counts are stale: no lens, no hover line
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=KERNEL.replace("%m", "%mm"))]))
    assert await _lenses(client, uri) == []
    hover = await _hover(client, uri, 9, mulf.index("mulf") + 1)
    assert hover is None or "PTX:" not in hover.contents.value


@pytest.mark.asyncio(loop_scope="function")
async def test_show_ptx_counts_are_forgotten_on_close_and_after_a_failed_show_ptx(client: LanguageClient):
    uri = "file:///ws/scale.mlir"
    _open(client, uri, KERNEL)
    show = types.ExecuteCommandParams(command="tile.showPTX", arguments=[uri])
    answer = _plain(await client.workspace_execute_command_async(show))
    assert answer["ok"] is True and len(await _lenses(client, uri)) == len(answer["instructionCounts"]) > 0
    failed = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.showPTX", arguments=[uri, "nope"])))
    assert failed["ok"] is False and await _lenses(client, uri) == []
    answer = _plain(await client.workspace_execute_command_async(show))
    assert len(await _lenses(client, uri)) == len(answer["instructionCounts"]) > 0
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    assert await _lenses(client, uri) == []
    _open(client, uri, KERNEL)  # the same version number again: still nothing until the next Show PTX
    assert await _lenses(client, uri) == []
