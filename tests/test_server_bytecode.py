"""Language-server bytecode requests and the tileiras command (``tile_lsp.server.bytecode``)."""

from __future__ import annotations

import base64
import os
import pathlib
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tile_lsp import nvidia
from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.printer import print_module
from tile_lsp.bytecode.reader import read_bytecode
from tile_lsp.bytecode.writer import write_bytecode

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent

# Until the lead wires register_bytecode_features into create_server.

KERNEL = "ew_float_arith_f32_b256.sm_90"


def _server_env() -> dict[str, str]:
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + path if path else "")
    return env


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "tile_lsp.server"], server_env=_server_env()),
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
    assert text == print_module(read_bytecode((kernels / f"{KERNEL}.tileirbc").read_bytes()))
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
