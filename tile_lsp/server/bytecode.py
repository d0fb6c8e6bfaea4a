"""Tile IR bytecode and tileiras support in the language server.

:func:`register_bytecode_features` adds to a server built by
:func:`tile_lsp.server.app.create_server`:

* ``tileir/convertFromBytecode`` (params ``{uri}``, a bytecode file on
  disk): answers ``{output: <MLIR text>}`` with the debug-info locations
  (:func:`~tile_lsp.bytecode.locations.print_with_locations`, so that
  writing it back keeps them), or an LSP error carrying the
  :class:`~tile_lsp.bytecode.reader.BytecodeError` message.  Modelled on
  mlir-lsp-server's ``mlir/convertFromBytecode``.
* ``tileir/convertToBytecode`` (params ``{uri, tileVersion?}`` of an open
  text document): answers ``{output: <base64 bytecode>}`` (our writer), or
  an error with the first analysis error / writer error.  The version
  written is ``tileVersion`` if given, else the version of the bytecode
  file at that path when this server converted it from bytecode (so a
  13.1 file stays 13.1), else the newest.

The editor flow (that of vscode-mlir for ``.mlirbc``): the client asks
``convertFromBytecode`` for a ``.tileirbc`` file and opens the text as a
document (any URI scheme: the file's, or a virtual one such as
``tileir.bytecode:/path/k.tileirbc``); the server analyses it as any text;
on save the client asks ``convertToBytecode`` for that document and writes
the bytes to the file.  The URI path alone names the file, whatever the
scheme.  Nothing else is special: ``willSave``/``didSave`` need no handler.
* command ``tile.compileWithTileiras`` (arguments: document URI, optional
  gpu name, default ``sm_90``): compiles the open document with NVIDIA's
  tileiras and answers :meth:`tile_lsp.nvidia.TileirasResult.to_json`
  (``ok``, ``kernels`` with registers/shared/spills/SASS size, ...), with
  work-done progress when the client supports it.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from typing import Any
from urllib.parse import unquote, urlparse

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import to_fs_path

from tile_lsp.server.server import command_arguments, work_done_progress

CONVERT_FROM_BYTECODE = "tileir/convertFromBytecode"
CONVERT_TO_BYTECODE = "tileir/convertToBytecode"
COMPILE_WITH_TILEIRAS = "tile.compileWithTileiras"

logger = logging.getLogger(__name__)


class BytecodeRequestFailed(JsonRpcException):
    """LSP ``RequestFailed`` (-32803): the conversion was understood but could not be done."""

    CODE = -32803
    MESSAGE = "Request failed"


def _uri(params: Any) -> str:
    uri = params.get("uri") if isinstance(params, dict) else getattr(params, "uri", None)
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams("expected params {uri: string}")
    return uri


def uri_path(uri: str) -> str:
    """File-system path a document URI names: that of a ``file:`` URI, else the URI's
    (percent-decoded) path, as for vscode-mlir's virtual ``mlir.bytecode-mlir:`` documents."""
    path = to_fs_path(uri)
    if path is None:
        path = unquote(urlparse(uri).path)
    return path


def convert_from_bytecode(uri: str) -> tuple[str, str]:
    """MLIR text of the bytecode file at ``uri`` and the file's Tile IR version (``"13.4"``).

    Raises :class:`BytecodeRequestFailed` when the file cannot be read or is not valid bytecode.
    """
    from tile_lsp.bytecode.locations import print_with_locations
    from tile_lsp.bytecode.reader import BytecodeError, read_bytecode

    path = uri_path(uri)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BytecodeRequestFailed(f"cannot read {uri}: {e.strerror}") from e
    try:
        text = print_with_locations(read_bytecode(data))
    except BytecodeError as e:
        where = f" at offset {e.offset}" if e.offset is not None else ""
        raise BytecodeRequestFailed(f"error{where}: {e.message}") from e
    return text, f"{data[8]}.{data[9]}"


def convert_to_bytecode(text: str, version: str | None = None, analysis: Any = None) -> bytes:
    """Bytecode of the one module in ``text`` (Tile IR ``version``, default the newest).

    ``analysis``: the document's analysis of ``text`` (a
    :class:`~tile_lsp.analysis.api.DocumentAnalysis` of one chunk), written as it is
    (the writer only reads the IR); else ``text`` is analysed here.  Raises
    :class:`BytecodeRequestFailed` on analysis errors, content with no bytecode
    form, or an unknown version.
    """
    from tile_lsp.analysis.api import analyze_text
    from tile_lsp.analysis.ir.diagnostics import Severity
    from tile_lsp.bytecode.writer import BytecodeWriteError, write_bytecode

    if analysis is None or analysis.text != text or len(analysis.chunks) != 1:
        analysis = analyze_text(text)
    errors = [d for d in analysis.diagnostics if d.severity == Severity.ERROR]
    if errors:
        d = errors[0]
        pos = f"{d.range.start.line + 1}:{d.range.start.character + 1}: " if d.range else ""
        raise BytecodeRequestFailed(f"{pos}error: {d.message}")
    if len(analysis.chunks) != 1 or analysis.chunks[0].module is None:
        raise BytecodeRequestFailed("expected one module")
    try:
        if version is None:
            return write_bytecode(analysis.chunks[0].module)
        return write_bytecode(analysis.chunks[0].module, version=version)
    except (BytecodeWriteError, ValueError) as e:
        raise BytecodeRequestFailed(f"error: {e}") from e
    except Exception as e:  # a writer bug must answer the request, not escape it
        logger.exception("writing bytecode failed")
        raise BytecodeRequestFailed(f"internal error writing bytecode: {type(e).__name__}: {e}") from e


def _document_text(ls: Any, uri: str) -> str:
    """Text of the open document ``uri``; refuses a document the client has not opened."""
    if uri not in ls.workspace.text_documents:
        raise BytecodeRequestFailed(f"{uri} is not open")
    return ls.workspace.get_text_document(uri).source


def _param(params: Any, name: str) -> Any:
    return params.get(name) if isinstance(params, dict) else getattr(params, name, None)


def register_bytecode_features(server: Any) -> None:
    """Register the bytecode requests and the tileiras command on ``server`` (a pygls LanguageServer)."""
    versions: dict[str, str] = {}  # file path -> Tile IR version of the bytecode converted from it

    @server.feature(CONVERT_FROM_BYTECODE)
    async def on_convert_from_bytecode(ls: Any, params: Any) -> dict[str, str]:
        uri = _uri(params)
        output, version = await asyncio.get_running_loop().run_in_executor(None, convert_from_bytecode, uri)
        versions[uri_path(uri)] = version
        return {"output": output}

    @server.feature(CONVERT_TO_BYTECODE)
    async def on_convert_to_bytecode(ls: Any, params: Any) -> dict[str, str]:
        uri = _uri(params)
        version = _param(params, "tileVersion")
        if version is not None and not isinstance(version, str):
            raise JsonRpcInvalidParams("tileVersion must be a string such as \"13.1\"")
        text = _document_text(ls, uri)
        version = version or versions.get(uri_path(uri))

        def convert() -> bytes:
            return convert_to_bytecode(text, version, ls.current_analysis(uri))

        data = await asyncio.get_running_loop().run_in_executor(None, convert)
        return {"output": base64.b64encode(data).decode("ascii")}

    @server.command(COMPILE_WITH_TILEIRAS)
    async def on_compile_with_tileiras(ls: Any, *args: Any) -> dict[str, Any]:
        from tile_lsp import nvidia

        args = command_arguments(args)
        if not args or not isinstance(args[0], str):
            raise JsonRpcInvalidParams("expected arguments [uri, gpuName?]")
        uri = args[0]
        gpu = args[1] if len(args) > 1 and args[1] else nvidia.DEFAULT_GPU
        if gpu not in nvidia.GPU_NAMES:
            raise JsonRpcInvalidParams(f"unknown gpu name {gpu!r}")
        text = _document_text(ls, uri)
        try:
            async with work_done_progress(ls, "tileiras", f"compiling for {gpu}"):
                result = await asyncio.get_running_loop().run_in_executor(
                    None, nvidia.compile_with_tileiras, text, gpu)
        except nvidia.TileirasUnavailable as e:
            raise BytecodeRequestFailed(str(e)) from e
        except Exception as e:  # tileiras timed out, could not start...: answer, never escape
            logger.exception("tileiras failed")
            raise BytecodeRequestFailed(f"tileiras failed: {type(e).__name__}: {e}") from e
        return result.to_json()
