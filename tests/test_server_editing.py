"""End-to-end tests of the editing features (tile_lsp.server.editing) over LSP, with pytest-lsp."""

from __future__ import annotations

import pathlib
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tile_lsp.analysis.ide.semantic_tokens import TOKEN_TYPES
from tests.conftest import server_env



@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "tile_lsp.server"], server_env=server_env()),
    loop_scope="function",
)
async def client(lsp_client: LanguageClient):
    """A client connected to a fresh server with the editing features."""
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual-studio-code"))
    )
    lsp_client.capabilities_result = result
    yield
    await lsp_client.shutdown_session()


def _kernel(corpus: pathlib.Path) -> pathlib.Path:
    return sorted((corpus / "kernels").glob("*.sm_100.mlir"))[0]


async def _open(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="mlir", version=1, text=text))
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


@pytest.mark.asyncio(loop_scope="function")
async def test_editing_features_on_a_kernel(client: LanguageClient, corpus: pathlib.Path) -> None:
    caps = client.capabilities_result.capabilities
    assert list(caps.semantic_tokens_provider.legend.token_types) == list(TOKEN_TYPES)
    assert caps.document_formatting_provider and caps.completion_provider and caps.inlay_hint_provider

    text = _kernel(corpus).read_text()
    messy = text.replace("\n  %0 = make_token", "\n        %0   =   make_token", 1)
    assert messy != text
    uri = "file:///kernel.mlir"
    await _open(client, uri, messy)

    edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        options=types.FormattingOptions(tab_size=2, insert_spaces=True)))
    assert len(edits) == 1
    assert edits[0].range.start == types.Position(line=0, character=0)
    assert "\n  %0 = make_token : token\n" in edits[0].new_text
    assert edits[0].new_text.startswith("cuda_tile.entry @")

    tokens = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    data = list(tokens.data)
    assert len(data) % 5 == 0 and len(data) > 100
    # first token: the op name `entry` at 0:0, a function
    assert data[:4] == [0, 0, 5, TOKEN_TYPES.index("function")]

    lines = messy.split("\n")
    row = next(i for i, line in enumerate(lines) if "get_tile_block_id" in line)
    completion = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=row, character=0)))
    labels = [i.label for i in completion.items]
    assert "cuda_tile.addi" in labels and "addi" in labels

    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=row, character=0), end=types.Position(line=row + 1, character=0))))
    assert [h.label for h in hints] == [": tile<i32>"] * 3


@pytest.mark.asyncio(loop_scope="function")
async def test_formatting_refused_with_comments(client: LanguageClient) -> None:
    uri = "file:///c.mlir"
    await _open(client, uri, "// keep me\ncuda_tile.module @m {\n   cuda_tile.entry @e() {\n  }\n}\n")
    edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        options=types.FormattingOptions(tab_size=2, insert_spaces=True)))
    assert not edits
