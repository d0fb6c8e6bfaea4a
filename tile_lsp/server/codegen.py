"""The lowering in the language server: commands ``tile.showPTX`` and ``tile.showLowered``, and the
code lenses of Show PTX's instruction counts.

Both are ``workspace/executeCommand`` commands on an open document:

* ``tile.showPTX`` — arguments ``[uri, kernelName?]``;
* ``tile.showLowered`` — arguments ``[uri, stageName?, kernelName?]``
  (stage: one of :data:`tile_lsp.codegen.STAGES`, default ``nv_tileas``).

They answer ``{"ok", "content", "language", "title", "message",
"diagnostics"}``: ``content`` is the PTX (``language`` ``ptx``) or the
stage's IR (``tileir``); when ``ok`` is false, ``message`` says why (the
first lowering error, with its line) and ``diagnostics`` lists all of them
(``{"line", "character", "severity", "message"}``, 0-based).  A successful
answer also has ``target`` (``sm_90``) and, for the PTX only,
``instructionCounts``: ``{"line", "character", "kernel", "op",
"instructions"}`` per op that emitted PTX instructions, sorted by position
(0-based start of the op's range; ``instructions``: a static count of the
text, :attr:`tile_lsp.codegen.LoweringResult.op_counts`).  The target is
the ``targetGpu`` setting, else the module's compute capability, else sm_90.

After a successful ``tile.showPTX`` of an open document the server keeps
its counts with the document's version and the target (:class:`PtxCounts`;
forgotten on ``didClose`` and when a later Show PTX fails; a Show PTX of a
document edited while it ran changes nothing), asks the client to refresh
its code lenses (``workspace/codeLens/refresh``, when it declares
``refreshSupport``) and shows them while that version is current:
``textDocument/codeLens`` answers one lens per counted op (``"12 PTX
instructions (sm_90, static)"``, no command to run), and the hover on an op
gets a line (:func:`ptx_hover_note`).  Once the document changes, the lenses
are ``[]`` and the hover has no line, until the next Show PTX.
Work-done progress is reported when the client supports it.  The lowering
itself is :func:`tile_lsp.codegen.lower_text`, given the document's analysis
(:meth:`~tile_lsp.server.server.TileLanguageServer.current_analysis`): the
text is not parsed again, and an error the editor shows stops the lowering.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from tile_lsp.analysis.ir.diagnostics import Position
from tile_lsp.server.convert import PositionEncoder
from tile_lsp.server.server import command_arguments, guarded, work_done_progress

logger = logging.getLogger(__name__)

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
    answer = {"ok": True, "content": content, "language": language, "title": title + suffix,
              "message": f"{stage} for {target}", "diagnostics": diags, "target": target}
    if stage == "ptx":
        answer["instructionCounts"] = sorted(
            ({"line": line, "character": character, "kernel": kernel, "op": count.op,
              "instructions": count.instructions}
             for kernel, ops in result.op_counts.items() for (line, character), count in ops.items()),
            key=lambda c: (c["line"], c["character"], c["kernel"]))
    return answer


@dataclass(frozen=True)
class PtxCounts:
    """The instruction counts of a document's last successful Show PTX: ``version`` of the document
    they are of, ``target`` (``sm_90``) and ``counts``, the answer's ``instructionCounts``
    (0-based positions in that version's text, UTF-16; static counts)."""

    version: int | None
    target: str
    counts: tuple[dict[str, Any], ...]

    def describe(self, instructions: int) -> str:
        """``"12 PTX instructions (sm_90, static)"`` (``instruction`` for 1): a code lens's title."""
        noun = "instruction" if instructions == 1 else "instructions"
        return f"{instructions} PTX {noun} ({self.target}, static)"

    def at(self, line: int, character: int) -> list[dict[str, Any]]:
        """The counts of the op that starts at (``line``, ``character``), 0-based (one per kernel)."""
        return [c for c in self.counts if c["line"] == line and c["character"] == character]


def current_counts(ls: Any, uri: str) -> PtxCounts | None:
    """``uri``'s :class:`PtxCounts` when they are of its current version (else ``None``: never stale)."""
    stored = ls.ptx_counts.get(uri)
    if stored is None or uri not in ls.open_uris():
        return None
    return stored if ls.workspace.get_text_document(uri).version == stored.version else None


def ptx_hover_note(ls: Any, uri: str, op_start: Position) -> str | None:
    """The hover's line for the op of ``uri`` that starts at ``op_start`` (of the document's latest
    analysis): ``"PTX: N instructions (sm_90, static, from the last Show PTX)"``, or ``None``
    when the last Show PTX is not of the current version (nor of that analysis) or counted no
    instruction for that op."""
    stored = current_counts(ls, uri)
    snapshot = ls.latest_analysis(uri)
    if stored is None or snapshot is None or snapshot.version != stored.version:
        return None
    found = stored.at(op_start.line, op_start.character)
    if not found:
        return None
    n = sum(c["instructions"] for c in found)
    noun = "instruction" if n == 1 else "instructions"
    return f"PTX: {n} {noun} ({stored.target}, static, from the last Show PTX)"


def _remember(ls: Any, uri: str, version: int | None, answer: dict[str, Any]) -> None:
    """Keep the counts of a PTX ``answer`` for ``uri`` at ``version`` (a failed one: forget the
    earlier ones); ask the client for fresh code lenses.  Nothing when the document is no longer
    at ``version`` (edited during the lowering: the answer is already stale)."""
    if ls.workspace.get_text_document(uri).version != version:
        return
    if answer["ok"]:
        ls.ptx_counts[uri] = PtxCounts(version, answer["target"], tuple(answer["instructionCounts"]))
    elif ls.ptx_counts.pop(uri, None) is None:
        return
    caps = getattr(ls, "client_capabilities", None)
    lens = getattr(getattr(caps, "workspace", None), "code_lens", None)
    if lens is not None and lens.refresh_support:
        try:
            ls.workspace_code_lens_refresh(None)
        except Exception:  # noqa: BLE001 - the connection may be gone; the lenses come on the next request
            logger.debug("could not send workspace/codeLens/refresh", exc_info=True)


@guarded(default=[])
def on_code_lens(ls: Any, params: types.CodeLensParams) -> list[types.CodeLens]:
    """``textDocument/codeLens``: one lens per op counted by the last Show PTX of the document's current
    version, at the op's start, its title the count (:meth:`PtxCounts.describe`) and no command to
    run; ``[]`` for any other document or version."""
    uri = params.text_document.uri
    stored = current_counts(ls, uri)
    if stored is None:
        return []
    encoder = PositionEncoder(ls.workspace.get_text_document(uri).source, ls.workspace.position_encoding)
    lenses = []
    for c in stored.counts:
        at = encoder.position(Position(c["line"], c["character"]))
        lenses.append(types.CodeLens(range=types.Range(start=at, end=at),
                                     command=types.Command(title=stored.describe(c["instructions"]), command="")))
    return lenses


async def _run(ls: Any, uri: str, stage: str, kernel: str | None) -> dict[str, Any]:
    doc = ls.workspace.get_text_document(uri)
    text, version = doc.source, doc.version
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
            result = await asyncio.get_running_loop().run_in_executor(None, answer)
        except Exception as e:  # noqa: BLE001 - a bug in the lowering must not kill the server
            return _failure(_language(stage), title, f"internal error in the lowering: {e}")
    if stage == "ptx" and uri in ls.open_uris():
        _remember(ls, uri, version, result)
    return result


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
    """Register ``tile.showPTX``, ``tile.showLowered`` and ``textDocument/codeLens`` on ``server`` (a
    :class:`~tile_lsp.server.server.TileLanguageServer`)."""
    server.feature(types.TEXT_DOCUMENT_CODE_LENS)(on_code_lens)

    @server.command(SHOW_PTX)
    async def on_show_ptx(ls: Any, *args: Any) -> dict[str, Any]:
        return await _command(ls, args, "ptx")

    @server.command(SHOW_LOWERED)
    async def on_show_lowered(ls: Any, *args: Any) -> dict[str, Any]:
        return await _command(ls, args, None)
