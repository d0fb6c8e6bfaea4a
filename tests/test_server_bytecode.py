"""Language-server bytecode requests and the tileiras command (``tile_lsp.server.bytecode``)."""

from __future__ import annotations

import asyncio
import base64
import os
import pathlib
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import server_env
from tile_lsp import nvidia
from tile_lsp.analysis.api import analyze_text
from tile_lsp.bytecode.locations import decode, print_with_locations
from tile_lsp.bytecode.reader import read_bytecode
from tile_lsp.bytecode.writer import write_bytecode

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent

KERNEL = "ew_float_arith_f32_b256.sm_90"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "tile_lsp.server"], server_env=server_env()),
    loop_scope="function",
)
async def client(lsp_client: LanguageClient):
    """A client connected to a fresh server with the bytecode features registered."""
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, path: pathlib.Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="mlir", version=1, text=path.read_text(encoding="utf-8"))))
    return uri


@pytest.mark.asyncio(loop_scope="function")
async def test_convert_from_bytecode(client: LanguageClient, corpus):
    kernels = corpus / "kernels"
    answer = await client.protocol.send_request_async(
        "tileir/convertFromBytecode", {"uri": (kernels / f"{KERNEL}.tileirbc").as_uri()})
    text = answer.output if hasattr(answer, "output") else answer["output"]
    assert text == print_with_locations(read_bytecode((kernels / f"{KERNEL}.tileirbc").read_bytes()))
    assert "entry @ew_float_arith_Kt1_A1f32_1l0_A1f32_1l0_A1f32_1l0_I256(" in text


@pytest.mark.asyncio(loop_scope="function")
async def test_convert_from_bad_bytecode_is_an_error(client: LanguageClient, tmp_path):
    bad = tmp_path / "bad.tileirbc"
    bad.write_bytes(b"not bytecode at all")
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("tileir/convertFromBytecode", {"uri": bad.as_uri()})
    from tile_lsp.bytecode.reader import BytecodeError
    with pytest.raises(BytecodeError) as direct:
        read_bytecode(bad.read_bytes())
    assert direct.value.message in str(info.value)


@pytest.mark.asyncio(loop_scope="function")
async def test_convert_to_bytecode(client: LanguageClient, corpus):
    path = corpus / "kernels" / f"{KERNEL}.mlir"
    uri = _open(client, path)
    answer = await client.protocol.send_request_async("tileir/convertToBytecode", {"uri": uri})
    data = base64.b64decode(answer.output if hasattr(answer, "output") else answer["output"])
    assert data == write_bytecode(analyze_text(path.read_text(encoding="utf-8")).chunks[0].module)
    assert data.startswith(b"\x7fTileIR\x00")


@pytest.mark.asyncio(loop_scope="function")
async def test_convert_to_bytecode_refuses_errors(client: LanguageClient, tmp_path):
    path = tmp_path / "broken.mlir"
    path.write_text("cuda_tile.module @m {\n  cuda_tile.entry @e() {\n"
                    "    %0 = cuda_tile.addi %x, %x : !cuda_tile.tile<i32>\n  }\n}\n", encoding="utf-8")
    uri = _open(client, path)
    with pytest.raises(JsonRpcException, match="3:"):
        await client.protocol.send_request_async("tileir/convertToBytecode", {"uri": uri})


@pytest.mark.asyncio(loop_scope="function")
async def test_compile_with_tileiras_command(client: LanguageClient, corpus):
    if nvidia.find_tool("tileiras") is None:
        message = "nvidia-cuda-tileiras is not installed (pip install -e '.[test,nvidia]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    uri = _open(client, corpus / "kernels" / f"{KERNEL}.mlir")
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tile.compileWithTileiras", arguments=[uri, "sm_90"]))
    result = result if isinstance(result, dict) else {k: getattr(result, k) for k in ("ok", "kernels")}
    assert result["ok"] is True
    [kernel] = result["kernels"]
    kernel = kernel if isinstance(kernel, dict) else kernel.__dict__
    assert kernel["name"] == "ew_float_arith_Kt1_A1f32_1l0_A1f32_1l0_A1f32_1l0_I256"
    assert kernel["registers"] > 0 and kernel["sass_bytes"] > 0


async def _published(client: LanguageClient, uri: str, timeout: float = 60.0) -> list[types.Diagnostic]:
    deadline = asyncio.get_running_loop().time() + timeout
    while uri not in client.diagnostics:
        assert asyncio.get_running_loop().time() < deadline, f"no diagnostics published for {uri}"
        await asyncio.sleep(0.02)
    return list(client.diagnostics[uri])


def _output(answer) -> str:
    return answer.output if hasattr(answer, "output") else answer["output"]


@pytest.mark.asyncio(loop_scope="function")
async def test_tileirbc_opened_as_text_edited_and_saved_as_bytecode(client: LanguageClient, corpus, tmp_path):
    """The editor flow (vscode-mlir's for .mlirbc): convertFromBytecode of a .tileirbc, didOpen
    of that text under the .tileirbc URI (analysed as text), an edit, convertToBytecode on save,
    the bytes written back; our reader and NVIDIA's tileirdisasm both see the edit, and the
    file keeps its debug info."""
    path = tmp_path / f"{KERNEL}.tileirbc"
    path.write_bytes((corpus / "kernels" / f"{KERNEL}.tileirbc").read_bytes())
    uri = path.as_uri()
    text = _output(await client.protocol.send_request_async("tileir/convertFromBytecode", {"uri": uri}))
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="mlir", version=1, text=text)))
    assert await _published(client, uri) == []

    [line] = [i for i, t in enumerate(text.splitlines()) if " = absf %tile_8 : " in t]
    col = text.splitlines()[line].index("absf")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line, col + 4)), text="negf")]))
    answer = await client.protocol.send_request_async("tileir/convertToBytecode", {"uri": uri})
    path.write_bytes(base64.b64decode(_output(answer)))

    original = list(read_bytecode((corpus / "kernels" / f"{KERNEL}.tileirbc").read_bytes()).walk())
    saved = list(read_bytecode(path.read_bytes()).walk())
    before, after = [op.name for op in original], [op.name for op in saved]
    changed = [(i, a, b) for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(after) == len(before) and [(a, b) for _, a, b in changed] == [("cuda_tile.absf", "cuda_tile.negf")]
    assert [decode(op.location) for op in saved] == [decode(op.location) for op in original]
    assert sum(decode(op.location) is not None for op in saved) > 20
    assert path.read_bytes()[8:10] == b"\x0d\x04"  # the corpus file's version, 13.4

    if nvidia.find_tool("tileirdisasm") is None and os.environ.get("CI") != "true":
        return  # the rest needs NVIDIA's tileirdisasm (the nvidia extra)
    printed = (corpus / "kernels" / f"{KERNEL}.mlir").read_text(encoding="utf-8")
    assert printed.count("%3 = absf %tile_8") == 1
    assert nvidia.disassemble(path.read_bytes()) == printed.replace("%3 = absf %tile_8", "%3 = negf %tile_8")


@pytest.mark.asyncio(loop_scope="function")
async def test_saving_keeps_the_version_of_the_bytecode_file(client: LanguageClient, corpus, tmp_path):
    """A 13.1 file opened under a virtual URI (as vscode-mlir does) is written back as 13.1;
    ``tileVersion`` asks for another version; a document that is not open is refused."""
    path = tmp_path / "negi-op-13.1.tileirbc"
    path.write_bytes((corpus / "conformance/Bytecode/versioning/Inputs/13.1/negi-op-13.1.tileirbc").read_bytes())
    text = _output(await client.protocol.send_request_async("tileir/convertFromBytecode", {"uri": path.as_uri()}))
    virtual = "tileir.bytecode:" + path.as_posix()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=virtual, language_id="mlir", version=1, text=text)))
    assert await _published(client, virtual) == []
    data = base64.b64decode(_output(await client.protocol.send_request_async(
        "tileir/convertToBytecode", {"uri": virtual})))
    assert data[8:10] == b"\x0d\x01"
    assert [op.name for op in read_bytecode(data).walk()] == [op.name for op in read_bytecode(path.read_bytes()).walk()]
    data = base64.b64decode(_output(await client.protocol.send_request_async(
        "tileir/convertToBytecode", {"uri": virtual, "tileVersion": "13.3"})))
    assert data[8:10] == b"\x0d\x03"
    with pytest.raises(JsonRpcException, match="unsupported version requested 12.0"):
        await client.protocol.send_request_async("tileir/convertToBytecode", {"uri": virtual, "tileVersion": "12.0"})
    with pytest.raises(JsonRpcException, match="is not open"):
        await client.protocol.send_request_async("tileir/convertToBytecode", {"uri": path.as_uri() + ".x"})
