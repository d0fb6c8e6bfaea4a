"""Tile IR bytecode and tileiras support in the language server.

:func:`register_bytecode_features` adds to a server built by
:func:`tile_lsp.server.server.create_server`:

* ``tileir/convertFromBytecode`` (params ``{uri}``, a bytecode file on
  disk): answers ``{output: <MLIR text>}``, or an LSP error carrying the
  :class:`~tile_lsp.bytecode.reader.BytecodeError` message.  Modelled on
  mlir-lsp-server's ``mlir/convertFromBytecode``.
* ``tileir/convertToBytecode`` (params ``{uri}`` of an open text
  document): answers ``{output: <base64 bytecode>}`` (our writer, newest
  version), or an error with the first analysis error / writer error.
* command ``tile.compileWithTileiras`` (arguments: document URI, optional
  gpu name, default ``sm_90``): compiles the open document with NVIDIA's
  tileiras and answers :meth:`tile_lsp.nvidia.TileirasResult.to_json`
  (``ok``, ``kernels`` with registers/shared/spills/SASS size, ...), with
  work-done progress when the client supports it.
"""

from __future__ import annotations

import asyncio
import base64
import uuid
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import to_fs_path

CONVERT_FROM_BYTECODE = "tileir/convertFromBytecode"
CONVERT_TO_BYTECODE = "tileir/convertToBytecode"
COMPILE_WITH_TILEIRAS = "tile.compileWithTileiras"


class BytecodeRequestFailed(JsonRpcException):
    """LSP ``RequestFailed`` (-32803): the conversion was understood but could not be done."""

    CODE = -32803
    MESSAGE = "Request failed"


def _uri(params: Any) -> str:
    uri = params.get("uri") if isinstance(params, dict) else getattr(params, "uri", None)
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams("expected params {uri: string}")
    return uri


def convert_from_bytecode(uri: str) -> str:
    """MLIR text of the bytecode file at ``uri``; raises :class:`BytecodeRequestFailed`."""
    from tile_lsp.analysis.printer import print_module
    from tile_lsp.bytecode.reader import BytecodeError, read_bytecode

    path = to_fs_path(uri)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BytecodeRequestFailed(f"cannot read {uri}: {e.strerror}") from e
    try:
        return print_module(read_bytecode(data))
    except BytecodeError as e:
        where = f" at offset {e.offset}" if e.offset is not None else ""
        raise BytecodeRequestFailed(f"error{where}: {e.message}") from e


def convert_to_bytecode(text: str) -> bytes:
    """Bytecode of the one module in ``text``; raises :class:`BytecodeRequestFailed` on errors."""
    from tile_lsp.analysis.api import analyze_text
    from tile_lsp.analysis.diagnostics import Severity
    from tile_lsp.bytecode.writer import BytecodeWriteError, write_bytecode

    analysis = analyze_text(text)
    errors = [d for d in analysis.diagnostics if d.severity == Severity.ERROR]
    if errors:
        d = errors[0]
        pos = f"{d.range.start.line + 1}:{d.range.start.character + 1}: " if d.range else ""
        raise BytecodeRequestFailed(f"{pos}error: {d.message}")
    if len(analysis.chunks) != 1 or analysis.chunks[0].module is None:
        raise BytecodeRequestFailed("expected one module")
    try:
        return write_bytecode(analysis.chunks[0].module)
    except BytecodeWriteError as e:
        raise BytecodeRequestFailed(f"error: {e}") from e


def _document_text(ls: Any, uri: str) -> str:
    doc = ls.workspace.get_text_document(uri)
    return doc.source


def _supports_progress(ls: Any) -> bool:
    caps = getattr(ls, "client_capabilities", None)
    window = getattr(caps, "window", None) if caps is not None else None
    return bool(window and window.work_done_progress)


def register_bytecode_features(server: Any) -> None:
    """Register the bytecode requests and the tileiras command on ``server`` (a pygls LanguageServer)."""

    @server.feature(CONVERT_FROM_BYTECODE)
    async def on_convert_from_bytecode(ls: Any, params: Any) -> dict[str, str]:
        uri = _uri(params)
        output = await asyncio.get_running_loop().run_in_executor(None, convert_from_bytecode, uri)
        return {"output": output}

    @server.feature(CONVERT_TO_BYTECODE)
    async def on_convert_to_bytecode(ls: Any, params: Any) -> dict[str, str]:
        uri = _uri(params)
        text = _document_text(ls, uri)
        data = await asyncio.get_running_loop().run_in_executor(None, convert_to_bytecode, text)
        return {"output": base64.b64encode(data).decode("ascii")}

    @server.command(COMPILE_WITH_TILEIRAS)
    async def on_compile_with_tileiras(ls: Any, *args: Any) -> dict[str, Any]:
        from tile_lsp import nvidia

        if len(args) == 1 and isinstance(args[0], list):  # pygls versions differ in unpacking
            args = tuple(args[0])
        if not args or not isinstance(args[0], str):
            raise JsonRpcInvalidParams("expected arguments [uri, gpuName?]")
        uri = args[0]
        gpu = args[1] if len(args) > 1 and args[1] else nvidia.DEFAULT_GPU
        if gpu not in nvidia.GPU_NAMES:
            raise JsonRpcInvalidParams(f"unknown gpu name {gpu!r}")
        text = _document_text(ls, uri)
        token = None
        if _supports_progress(ls):
            token = str(uuid.uuid4())
            try:
                await ls.work_done_progress.create_async(token)
                ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="tileiras", message=f"compiling for {gpu}", cancellable=False))
            except Exception:  # noqa: BLE001 - progress is optional
                token = None
        try:
            result = await asyncio.get_running_loop().run_in_executor(
                None, nvidia.compile_with_tileiras, text, gpu)
        except nvidia.TileirasUnavailable as e:
            raise BytecodeRequestFailed(str(e)) from e
        finally:
            if token is not None:
                ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
        return result.to_json()
