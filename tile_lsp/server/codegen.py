"""The lowering in the language server: commands ``tile.showPTX`` and ``tile.showLowered``.

Both are ``workspace/executeCommand`` commands on an open document:

* ``tile.showPTX`` — arguments ``[uri, kernelName?]``;
* ``tile.showLowered`` — arguments ``[uri, stageName?, kernelName?]``
  (stage: one of :data:`tile_lsp.codegen.STAGES`, default ``nv_tileas``).

They answer ``{"ok", "content", "language", "title", "message",
"diagnostics"}``: ``content`` is the PTX (``language`` ``ptx``) or the
stage's IR (``tileir``); when ``ok`` is false, ``message`` says why (the
first lowering error, with its line) and ``diagnostics`` lists all of them
(``{"line", "character", "severity", "message"}``, 0-based).  The target is
the ``targetGpu`` setting, else the module's compute capability, else sm_90.
Work-done progress is reported when the client supports it.  The lowering
itself is :func:`tile_lsp.codegen.lower_text`, given the document's analysis
(:meth:`~tile_lsp.server.server.TileLanguageServer.current_analysis`): the
text is not parsed again, and an error the editor shows stops the lowering.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tile_lsp.server.server import command_arguments, work_done_progress

SHOW_PTX = "tile.showPTX"
SHOW_LOWERED = "tile.showLowered"


def _language(stage: str) -> str:
    """The ``language`` of a stage's answer: ``ptx`` for the PTX, ``tileir`` for an IR stage."""
    return "ptx" if stage == "ptx" else "tileir"


def _failure(language: str, title: str, message: str, diagnostics: list | None = None) -> dict[str, Any]:
    """A command's answer when it produced nothing: ``message`` says why."""
    return {"ok": False, "content": "", "language": language, "title": title, "message": message,
            "diagnostics": diagnostics or []}


def lowering_answer(text: str, stage: str, gpu: str | None, kernel: str | None, title: str,
                    analysis: Any = None) -> dict[str, Any]:
    """The command's answer for ``text`` (see the module docstring); ``analysis``: the document's
    analysis of ``text`` (a :class:`~tile_lsp.analysis.api.DocumentAnalysis`), lowered as it is."""
    from tile_lsp.analysis.ir.diagnostics import Severity
    from tile_lsp.codegen import STAGES, lower_text

    if stage not in STAGES:
        return _failure("tileir", title, f"unknown stage '{stage}' (expected one of {', '.join(STAGES)})")
    result = lower_text(text, gpu, kernel, file_name=title, stop_after=stage, analysis=analysis)
    diags = [{"line": d.range.start.line if d.range else 0,
              "character": d.range.start.character if d.range else 0,
              "severity": d.severity.name.lower(), "message": d.message} for d in result.diagnostics]
    errors = [d for d in result.diagnostics if d.severity == Severity.ERROR]
    content = result.stages.get(stage)
    language = _language(stage)
    if errors or content is None:
        first = errors[0] if errors else None
        where = f"line {first.range.start.line + 1}: " if first is not None and first.range else ""
        message = f"{where}{first.message}" if first is not None else "the lowering produced nothing"
        return _failure(language, title, message, diags)
    target = result.target.name if result.target else ""
    suffix = ".ptx" if stage == "ptx" else f".{stage}.mlir"
    return {"ok": True, "content": content, "language": language, "title": title + suffix,
            "message": f"{stage} for {target}", "diagnostics": diags}


async def _run(ls: Any, uri: str, stage: str, kernel: str | None) -> dict[str, Any]:
    doc = ls.workspace.get_text_document(uri)
    text = doc.source
    title = uri.rsplit("/", 1)[-1] or "document"
    # the targetGpu setting, else the workspace's configuration (TileLanguageServer.target_gpu)
    target = getattr(ls, "target_gpu", None)
    gpu = target[0] if isinstance(target, tuple) else getattr(getattr(ls, "settings", None), "target_gpu", None)

    def answer() -> dict[str, Any]:
        # the open document's own analysis (the editor's, or one made now): the lowering clones its IR
        analysis = ls.current_analysis(uri) if uri in ls.open_uris() else None
        return lowering_answer(text, stage, gpu, kernel, title, analysis)

    async with work_done_progress(ls, "tile-lsp lowering", f"lowering to {stage}"):
        try:
            return await asyncio.get_running_loop().run_in_executor(None, answer)
        except Exception as e:  # noqa: BLE001 - a bug in the lowering must not kill the server
            return _failure(_language(stage), title, f"internal error in the lowering: {e}")


async def _command(ls: Any, args: tuple, stage: str | None) -> dict[str, Any]:
    """A lowering command's answer for its ``args``: ``[uri, stageName?, kernelName?]``, or
    ``[uri, kernelName?]`` when the command names the ``stage`` itself."""
    a = command_arguments(args)
    if not a or not isinstance(a[0], str):
        usage = "[uri, kernelName?]" if stage is not None else "[uri, stageName?, kernelName?]"
        return _failure(_language(stage or ""), "", f"expected arguments {usage}")
    uri, *options = a + [None, None]  # an argument not given: None
    if stage is None:
        given = options.pop(0)
        stage = given if given else "nv_tileas"
    return await _run(ls, uri, stage, options[0] or None)


def register_codegen_features(server: Any) -> None:
    """Register ``tile.showPTX`` and ``tile.showLowered`` on ``server`` (a pygls LanguageServer)."""

    @server.command(SHOW_PTX)
    async def on_show_ptx(ls: Any, *args: Any) -> dict[str, Any]:
        return await _command(ls, args, "ptx")

    @server.command(SHOW_LOWERED)
    async def on_show_lowered(ls: Any, *args: Any) -> dict[str, Any]:
        return await _command(ls, args, None)
