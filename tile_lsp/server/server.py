"""The tile-lsp language server: thin LSP adapters over :mod:`tile_lsp.analysis`.

The server knows nothing of Tile IR.  It keeps the documents (pygls's
workspace, incremental sync), runs :func:`tile_lsp.analysis.api.analyze_text`
in a worker thread and publishes the diagnostics:

* ``textDocument/didOpen``: analysed at once;
* ``textDocument/didChange``: analysed after the last change, at most
  ``debounceMs`` (150 ms by default) after it, sooner once the document's
  analyses are quick (:class:`EditDelay`); a change cancels the analysis in
  flight (it stops between two units and its work is reused);
* ``textDocument/didClose``: an empty list is published;
* ``workspace/didChangeConfiguration``: settings updated, open documents
  analysed again.

The workspace's configuration file (``tile-lsp.toml`` or ``pyproject.toml``
``[tool.tile-lsp]``, found upward from the root the client names in
``initialize``; :mod:`tile_lsp.config`) gives ``tile-version``,
``gpu-name`` and the hint warnings; ``tile-lsp serve --tile-version /
--gpu-name`` override it, and the client's ``tileVersion`` / ``targetGpu``
settings, when set, override both.

Its features are registered by :func:`tile_lsp.server.app.create_server`
from their own modules (:mod:`~tile_lsp.server.navigation`,
:mod:`~tile_lsp.server.editing`, :mod:`~tile_lsp.server.bytecode`,
:mod:`~tile_lsp.server.codegen`), which import this one; they read the
document's cached analysis and its index (:meth:`TileLanguageServer.document_index`).

Each document carries a generation number, bumped on every open, change,
close and configuration change; an analysis publishes only if its generation
is still the document's, so an older version never overwrites a newer one.

Start it with :func:`tile_lsp.server.app.serve_stdio` (``python -m
tile_lsp.server`` or ``tile-lsp serve``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from tile_lsp import __version__
from tile_lsp.analysis.api import AnalysisOptions, DocumentAnalysis, analyze_text
from tile_lsp.analysis.ide.index import DocumentIndex
from tile_lsp.analysis.incremental.document import IncrementalAnalyzer
from tile_lsp.server.convert import PositionEncoder, to_lsp_diagnostics
from tile_lsp.collector import collector_paused
from tile_lsp.server.heap import HeapPolicy
from tile_lsp.server.protocol import TileProtocol
from tile_lsp.server.settings import ServerSettings, parse_target_gpu

logger = logging.getLogger(__name__)

#: Name reported in ``serverInfo``.
SERVER_NAME = "tile-lsp"
#: Worker threads running analyses.
ANALYSIS_WORKERS = 2

F = TypeVar("F", bound=Callable[..., Any])


class AnalysisSnapshot(NamedTuple):
    """The latest published analysis of a document: its version and result."""

    version: int | None
    analysis: DocumentAnalysis


class EditDelay:
    """How long after a change to start analysing it: the debounce, adapted to the document.

    Until an analysis of a change has completed, the configured debounce
    (``debounceMs``).  Then, while the last three such analyses each took at
    most :attr:`QUICK` (done before a typist's next keystroke), no wait at
    all: the diagnostics follow the keystroke as soon as the work is done.
    Otherwise as long as the longest of them took, and never more than the
    debounce: a keystroke that comes while an analysis runs cancels it, so
    waiting about as long as an analysis takes bounds the work thrown away
    at about half.  What the user waits for is the work, not a fixed delay.
    Durations are in seconds.
    """

    KEPT = 3
    #: an analysis this short ends before the next keystroke of fast typing (10 characters a second)
    QUICK = 0.1

    def __init__(self) -> None:
        self._recent: list[float] = []

    def record(self, seconds: float) -> None:
        """Note how long the analysis of a change took (from its hand-over to the worker to its end)."""
        self._recent = (self._recent + [seconds])[-self.KEPT:]

    def delay(self, debounce_s: float) -> float:
        """The wait before analysing the next change, at most ``debounce_s``."""
        if not self._recent:
            return debounce_s
        longest = max(self._recent)
        return 0.0 if longest <= self.QUICK else min(debounce_s, longest)


@dataclass
class _DocumentState:
    """Per-URI bookkeeping of the server (the text itself lives in pygls)."""

    generation: int = 0
    pending: asyncio.Task | None = None
    latest: AnalysisSnapshot | None = None
    index: "DocumentIndex | None" = None  # index of ``latest.analysis``, built on first use
    # re-analyses only the top-level units an edit touched (tile_lsp.analysis.incremental.units)
    analyzer: IncrementalAnalyzer = field(default_factory=IncrementalAnalyzer)
    edit_delay: EditDelay = field(default_factory=EditDelay)


class RequestFailed(JsonRpcException):
    """LSP ``RequestFailed`` (-32803): a request understood but refused (a rename that cannot be done)."""

    CODE = -32803
    MESSAGE = "Request failed"


class TileLanguageServer(LanguageServer):
    """pygls language server holding tile-lsp's settings and analysis cache.

    Handlers are registered by :func:`~tile_lsp.server.app.create_server`; this class holds the
    state they share: :attr:`settings`, the per-document generation counters
    and the cache of the latest analysis (:meth:`latest_analysis`).
    """

    def __init__(self) -> None:
        super().__init__(
            SERVER_NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=TileProtocol,
        )
        self.settings = ServerSettings()
        #: the workspace's configuration file (:meth:`load_project_config`), ``None``: none
        self.project_config: Any = None
        #: configuration keys given on the command line (``tile-lsp serve --gpu-name``): over the file
        self.cli_overrides: dict[str, Any] = {}
        self._docs: dict[str, _DocumentState] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._warmed_up = False
        self.heap = HeapPolicy()
        self._heap_task: asyncio.Task | None = None
        self._young_timer: asyncio.TimerHandle | None = None
        #: URI -> instruction counts of its last Show PTX (:class:`tile_lsp.server.codegen.PtxCounts`)
        self.ptx_counts: dict[str, Any] = {}
        #: (the last text analysis_options was asked of, its TextMarks)
        self._marks: tuple[str, Any] | None = None

    # -- public accessors ---------------------------------------------------

    def latest_analysis(self, uri: str) -> AnalysisSnapshot | None:
        """The latest analysis published for ``uri``, or ``None``.

        Features such as hover and definition read the IR from here.  The
        snapshot's ``version`` may be older than the document's current
        version while an analysis is pending.
        """
        state = self._docs.get(uri)
        return state.latest if state is not None else None

    def document_index(self, uri: str) -> tuple[DocumentIndex, PositionEncoder] | None:
        """Position index of the latest analysis of ``uri`` and the client's position encoder.

        The index is built once per analysis (on the first feature request)
        and kept with the document's state.  ``None`` when ``uri`` has no
        analysis yet.
        """
        state = self._docs.get(uri)
        if state is None or state.latest is None:
            return None
        analysis = state.latest.analysis
        if state.index is None or state.index.analysis is not analysis:
            state.index = DocumentIndex(analysis)
        return state.index, PositionEncoder(analysis.text, self.workspace.position_encoding)

    def analyze_current_text(self, uri: str) -> DocumentAnalysis | None:
        """An analysis of the document's current text, made now (in the caller's thread).

        Uses the document's incremental analyzer, so only the top-level ops
        changed since its last analysis are analysed again.  ``None`` when
        ``uri`` is not open or an analysis of it is running in a worker (a
        large file's first one takes seconds: the caller decides what to do).
        """
        state = self._docs.get(uri)
        if state is None:
            return None
        text = self.workspace.get_text_document(uri).source
        return state.analyzer.analyze(text, self.analysis_options(text), blocking=False)

    def current_analysis(self, uri: str) -> DocumentAnalysis:
        """An analysis of the open document's current text: the document's facade for features
        that need the text as it is now (formatting edits it, completion reads it).

        The cached analysis when its version is the document's; else one made
        now, in the caller's thread, by the document's incremental analyzer
        when it is free (only the top-level ops changed since its last
        analysis are analysed again), else a fresh one.  ``KeyError`` when
        ``uri`` is not open.
        """
        document = self.workspace.get_text_document(uri)
        snapshot = self.latest_analysis(uri)
        if snapshot is not None and snapshot.version == document.version and snapshot.analysis.text == document.source:
            return snapshot.analysis
        return self.analyze_current_text(uri) or analyze_text(document.source, self.analysis_options(document.source))

    def open_uris(self) -> list[str]:
        """URIs of the documents currently open."""
        return list(self._docs)

    def analysis_options(self, text: str) -> AnalysisOptions:
        """Analysis options for ``text`` under the current settings.

        Split mode is on exactly when ``text`` has a ``// -----`` line; the
        editor's own checks are on, with the target of :attr:`target_gpu`,
        the Tile IR version of :attr:`tile_version` and the hint warnings of
        the workspace's configuration file.
        """
        from tile_lsp.analysis.incremental.marks import text_marks  # late: loads the verifier rules

        # from the last text's marks: only the lines an edit touched are searched (TextMarks)
        marks = text_marks(text, self._marks)
        self._marks = (text, marks)
        target = self.target_gpu
        return AnalysisOptions(
            split_input_file=marks.split_marker,
            tile_version=self.tile_version,
            target_sm=target[1] if target else None,
            warn_unsupported_hints=bool(self._configured("warn-unsupported-hints")),
            error_unsupported_hints=bool(self._configured("error-unsupported-hints")),
            editor_checks=True,
            mlir_tool_input=marks.mlir_tool_input,
        )

    # -- the workspace's configuration file -----------------------------------

    def _configured(self, key: str) -> Any:
        """``key`` of :mod:`tile_lsp.config` from the command line, else the workspace's file, else ``None``."""
        if key in self.cli_overrides:
            return self.cli_overrides[key]
        return self.project_config.get(key) if self.project_config is not None else None

    @property
    def tile_version(self) -> str | None:
        """The Tile IR version the rules follow: the ``tileVersion`` setting, else the configuration's."""
        return self.settings.tile_version or self._configured("tile-version")

    @property
    def target_gpu(self) -> tuple[str, int] | None:
        """The target as ``("sm_90", 90)``: the ``targetGpu`` setting, else the configuration's ``gpu-name``."""
        if self.settings.target_sm is not None:
            return self.settings.target_gpu or f"sm_{self.settings.target_sm}", self.settings.target_sm
        return parse_target_gpu(self._configured("gpu-name"))

    def load_project_config(self, root: Path | None) -> None:
        """Read the configuration file governing the workspace ``root`` (none: ``None`` or no file).

        An invalid file is reported to the client as a warning naming the
        file and the key, and ignored; the server goes on with its defaults.
        """
        from tile_lsp.config import ConfigError, find_config_file, load_config

        self.project_config = None
        if root is None or not root.is_dir():
            return
        try:
            found = find_config_file(root)
            self.project_config = load_config(found) if found is not None else None
        except ConfigError as exc:
            self.log(f"tile-lsp: {exc}; the configuration file is ignored", types.MessageType.Warning)
            return
        if self.project_config is not None:
            self.log(f"tile-lsp: configuration from {self.project_config.path}")

    # -- logging -----------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """Send ``message`` to the client (``window/logMessage``) and to Python logging."""
        level = {
            types.MessageType.Error: logging.ERROR,
            types.MessageType.Warning: logging.WARNING,
        }.get(kind, logging.INFO)
        logger.log(level, "%s", message)
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # the connection may be gone; nothing else to do
            logger.debug("could not send window/logMessage", exc_info=True)

    def log_exception(self, what: str) -> None:
        """Log the exception being handled, with its traceback, as an error."""
        self.log(f"{what}\n{traceback.format_exc()}", types.MessageType.Error)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Report pygls-level errors through ``window/logMessage`` instead of a popup.

        A message that is not JSON (or not UTF-8) is the client's fault, not
        an internal error: a warning with the reason.
        """
        if isinstance(error, (ValueError, UnicodeError)) and not isinstance(error, JsonRpcException):
            self.log(f"tile-lsp: malformed message dropped: {type(error).__name__}: {error}", types.MessageType.Warning)
            return
        try:
            self.log(f"tile-lsp internal error ({getattr(source, '__name__', source)}): {error}", types.MessageType.Error)
        except Exception:
            logger.exception("failed to report a server error")

    # -- settings ------------------------------------------------------------

    def apply_settings(self, raw: Any) -> bool:
        """Update :attr:`settings` from client JSON; True if the analysis options changed.

        When the inlay-hint switches change, the client is asked to refresh
        its hints (``workspace/inlayHint/refresh``, if it supports it) when
        documents are open.
        """
        new, problems = self.settings.updated(raw)
        for problem in problems:
            self.log(problem, types.MessageType.Warning)
        changed = new.analysis_key != self.settings.analysis_key
        hints_changed = new.inlay_key != self.settings.inlay_key
        self.settings = new
        if hints_changed and self._docs:  # (never during initialize: no document is open yet)
            self.refresh_inlay_hints()
        return changed

    def refresh_inlay_hints(self) -> None:
        """Send ``workspace/inlayHint/refresh`` when the client declared ``refreshSupport``."""
        caps = getattr(self, "client_capabilities", None)
        workspace = getattr(caps, "workspace", None)
        inlay = getattr(workspace, "inlay_hint", None)
        if inlay is not None and inlay.refresh_support:
            try:
                self.workspace_inlay_hint_refresh(None)
            except Exception:  # the connection may be gone; nothing else to do
                logger.debug("could not send workspace/inlayHint/refresh", exc_info=True)

    # -- document lifecycle ----------------------------------------------------

    def document_opened(self, uri: str) -> None:
        """Start tracking ``uri`` (already in the workspace) and analyse it now."""
        old = self._docs.pop(uri, None)
        if old is not None and old.pending is not None:
            old.pending.cancel()
        self.ptx_counts.pop(uri, None)
        self._docs[uri] = _DocumentState()
        self.schedule_analysis(uri, delay_s=0.0)

    def document_changed(self, uri: str) -> None:
        """Note a change of ``uri`` and analyse it after the document's :class:`EditDelay`."""
        state = self._docs.get(uri)
        if state is None:
            return
        self.schedule_analysis(uri, delay_s=state.edit_delay.delay(self.settings.debounce_s), change=True)

    def document_closed(self, uri: str) -> None:
        """Forget ``uri`` (its Show PTX counts too), drop its pending analysis and clear its diagnostics."""
        self.ptx_counts.pop(uri, None)
        state = self._docs.pop(uri, None)
        if state is not None:
            state.generation += 1
            if state.pending is not None:
                state.pending.cancel()
        self.publish(uri, None, [])

    def reanalyze_all(self, delay_s: float = 0.0) -> None:
        """Analyse every open document again (after a settings change)."""
        for uri in list(self._docs):
            self.schedule_analysis(uri, delay_s=delay_s)

    def schedule_analysis(self, uri: str, *, delay_s: float, change: bool = False) -> None:
        """Analyse ``uri`` after ``delay_s`` seconds, superseding earlier requests.

        ``change``: the analysis is that of an edit (its duration goes to
        the document's :class:`EditDelay`).

        Does nothing for a document that is not open.  Must be called from the
        event loop thread.
        """
        state = self._docs.get(uri)
        if state is None:
            return
        state.generation += 1
        if state.pending is not None and not state.pending.done():
            state.pending.cancel()
        task = asyncio.ensure_future(self._analyze_and_publish(uri, state, state.generation, delay_s, change))
        state.pending = task

    def shutdown_analyses(self) -> None:
        """Cancel pending analyses and stop the worker threads (``shutdown``)."""
        for state in self._docs.values():
            state.generation += 1
            if state.pending is not None:
                state.pending.cancel()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    # -- analysis ----------------------------------------------------------------

    def _is_current(self, uri: str, state: _DocumentState, generation: int) -> bool:
        return self._docs.get(uri) is state and state.generation == generation

    def _get_executor(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=ANALYSIS_WORKERS, thread_name_prefix="tile-lsp-analysis"
            )
        return self._executor

    def _run_analysis(
        self, uri: str, state: _DocumentState, generation: int, text: str, options: AnalysisOptions,
        progress: Callable[[list], None] | None = None, fraction: Callable[[float], None] | None = None,
    ) -> DocumentAnalysis | None:
        """Worker-thread body: analyse ``text`` unless it is already stale.

        Only the units an edit touched are analysed again
        (:class:`~tile_lsp.analysis.incremental.document.IncrementalAnalyzer`); ``progress``
        receives the diagnostics found so far when the analysis is long, and
        ``fraction`` the share of the document analysed so far.
        A newer version of the document (or its closing) cancels the
        analysis between two units: ``None`` is returned, and what was built
        is kept for the analysis of the newer text.
        """
        if not self._is_current(uri, state, generation):
            return None
        return state.analyzer.analyze(text, options, progress=progress, fraction=fraction,
                                      cancelled=lambda: not self._is_current(uri, state, generation))

    def _progress_publisher(
        self, loop: asyncio.AbstractEventLoop, uri: str, state: _DocumentState, generation: int,
        version: int | None, text: str,
    ) -> Callable[[list], None]:
        """A callback for the worker thread publishing the partial diagnostics of a long analysis.

        A large file's first analysis takes seconds.  The complete
        diagnostics of its first lines (the entries the editor shows on
        opening it; :mod:`tile_lsp.analysis.incremental.view`) are published
        first, before the rest is built, even when there are none; half a
        second later, what is known then (those, and below them the syntax
        and IR-building errors of the top-level ops analysed so far), then
        every two seconds; the complete list follows as usual.  Nothing is
        published once the analysis is stale.
        """
        encoding = self.workspace.position_encoding

        def report(diagnostics: list) -> None:
            if not self._is_current(uri, state, generation):
                return
            lsp = to_lsp_diagnostics(diagnostics, uri, text=text, encoding=encoding)
            loop.call_soon_threadsafe(self._publish_if_current, uri, state, generation, version, lsp)

        return report

    def _publish_if_current(self, uri: str, state: _DocumentState, generation: int, version: int | None,
                            diagnostics: list[types.Diagnostic]) -> None:
        if self._is_current(uri, state, generation):
            self.publish(uri, version, diagnostics)

    async def _analyze_and_publish(
        self, uri: str, state: _DocumentState, generation: int, delay_s: float, change: bool = False
    ) -> None:
        """Task body: wait ``delay_s``, analyse in a worker, publish if still current.

        Should the analysis itself raise (it is designed not to), the
        traceback is logged and one ``internal`` error is published in place
        of the diagnostics, so stale ones do not linger.
        """
        version: int | None = None
        try:
            if delay_s > 0:
                await asyncio.sleep(delay_s)
            if not self._is_current(uri, state, generation):
                return
            document = self.workspace.get_text_document(uri)
            text = document.source
            version = document.version
            options = self.analysis_options(text)
            loop = asyncio.get_running_loop()
            progress = self._progress_publisher(loop, uri, state, generation, version, text)
            shown = AnalysisProgress(self, loop, Path(uri).name) \
                if not state.analyzer.complete and supports_progress(self) else None
            started = time.perf_counter()
            # the collector stays paused until the diagnostics are sent: the young collection an
            # analysis makes due (5 ms after an edit of a 50,000-line file) runs after, not before
            with collector_paused():
                try:
                    analysis = await loop.run_in_executor(
                        self._get_executor(), self._run_analysis, uri, state, generation, text, options,
                        progress, shown.from_worker if shown is not None else None,
                    )
                finally:
                    if shown is not None:
                        shown.end()
                if analysis is None or not self._is_current(uri, state, generation):
                    return
                if change:
                    state.edit_delay.record(time.perf_counter() - started)
                state.latest = AnalysisSnapshot(version, analysis)
                diagnostics = to_lsp_diagnostics(
                    analysis.diagnostics,
                    uri,
                    text=text,
                    encoding=self.workspace.position_encoding,
                )
                self.publish(uri, version, diagnostics)
            self._after_analysis(time.perf_counter() - started)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.log_exception(f"tile-lsp: analysis of {uri} failed")
            if self._is_current(uri, state, generation):
                self.publish(uri, version, [internal_error_diagnostic(exc)])

    def _after_analysis(self, seconds: float) -> None:
        """Apply the :class:`~tile_lsp.server.heap.HeapPolicy` once an analysis is published: a full
        collection now after a long analysis, else the young objects collected once the server has
        been idle a moment (now if very many wait), and a full one when it has been idle longer."""
        if self._young_timer is not None:
            self._young_timer.cancel()
            self._young_timer = None
        if self.heap.after_analysis(seconds):
            self.heap.collect()
            return
        loop = asyncio.get_running_loop()
        if self.heap.young_collection_now():
            self.heap.collect_young()
        else:
            self._young_timer = loop.call_later(self.heap.young_idle_s, self._collect_young_when_idle)
        if self.heap.since_collect >= self.heap.every and (self._heap_task is None or self._heap_task.done()):
            self._heap_task = loop.create_task(self._collect_when_idle())

    def _collect_young_when_idle(self) -> None:
        """Timer body: no analysis was published for ``heap.young_idle_s`` seconds; none is running."""
        self._young_timer = None
        if any(s.pending is not None and not s.pending.done() for s in self._docs.values()):
            # an analysis is under way (it was handed its text after the last publication): after it
            return
        self.heap.collect_young()

    async def _collect_when_idle(self) -> None:
        """Wait until no analysis ran for ``heap.idle_s`` seconds, then collect and refreeze the heap."""
        while not self.heap.idle_collection_due():
            await asyncio.sleep(self.heap.idle_s / 2)
        self.heap.collect()

    def warm_up(self) -> None:
        """Import and exercise the analysis in a worker thread, off the event loop.

        :func:`~tile_lsp.server.app.serve_stdio` calls it as the process starts, so that the first
        ``didOpen`` does not pay for importing the parser and building its
        tables.  Runs at most once per server.
        """
        if self._warmed_up:
            return
        self._warmed_up = True
        # import the analysis packages here, on the main thread: modules imported lazily by
        # several worker threads at once once raised KeyError('tile_lsp.analysis.syntax.parse_rules')
        for name in WARM_IMPORTS:
            try:
                importlib.import_module(name)
            except Exception:  # reported when a real document is analysed
                logger.debug("import of %s failed", name, exc_info=True)

        def run() -> None:
            try:
                # a real kernel: the parser makes a state's actions, lexer and tree callbacks
                # when it first meets them, so the first document would pay for them otherwise
                analyze_text(WARM_UP_TEXT, AnalysisOptions())
            except Exception:  # reported when a real document is analysed
                logger.debug("analysis warm-up failed", exc_info=True)

        self._get_executor().submit(run)

    def publish(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> None:
        """Send ``textDocument/publishDiagnostics`` for ``uri``."""
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )


def supports_progress(ls: LanguageServer) -> bool:
    """Whether the client accepts server-initiated work-done progress (``window.workDoneProgress``)."""
    caps = getattr(ls, "client_capabilities", None)
    window = getattr(caps, "window", None) if caps is not None else None
    return bool(window and window.work_done_progress)


@contextlib.asynccontextmanager
async def work_done_progress(ls: LanguageServer, title: str, message: str):
    """Report LSP work-done progress (``$/progress`` begin, then end) around the body of an
    ``async with`` when the client supports it; a client that refuses the token gets none."""
    token = None
    if supports_progress(ls):
        token = str(uuid.uuid4())
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                title=title, message=message, cancellable=False))
        except Exception:  # noqa: BLE001 - progress is optional
            token = None
    try:
        yield
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))


class AnalysisProgress:
    """The work-done progress (LSP ``$/progress``) of a document's long first analysis.

    Nothing is shown for an analysis that ends within half a second: the
    first share reported by the worker
    (:meth:`~tile_lsp.analysis.incremental.document.IncrementalAnalyzer.analyze`'s
    ``fraction``) creates the token and begins it ("tile-lsp", "analysing
    <file>", its percentage); later shares report the percentage; :meth:`end`
    ends it ("done") once the analysis has returned, completed or cancelled.
    A client that refuses the token is shown nothing.  Created and ended
    on the event loop; :meth:`from_worker` is called from the analysis thread.
    """

    def __init__(self, ls: LanguageServer, loop: asyncio.AbstractEventLoop, name: str):
        self.ls = ls
        self.loop = loop
        self.name = name
        self.token: str | None = None
        self.begun: asyncio.Task | None = None
        self.ended = False

    def from_worker(self, fraction: float) -> None:
        """Note the share of the document analysed (0 to 1); safe to call from any thread."""
        self.loop.call_soon_threadsafe(self._show, fraction)

    def _show(self, fraction: float) -> None:
        if self.ended:
            return
        percentage = min(100, int(fraction * 100))
        if self.begun is None:
            self.begun = self.loop.create_task(self._begin(percentage))
        elif self.begun.done() and self.token is not None:
            self.ls.work_done_progress.report(self.token, types.WorkDoneProgressReport(
                message=f"analysing {self.name}", percentage=percentage))

    async def _begin(self, percentage: int) -> None:
        token = str(uuid.uuid4())
        try:
            await self.ls.work_done_progress.create_async(token)
        except Exception:  # noqa: BLE001 - progress is optional: a client that refuses it sees none
            return
        self.ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=SERVER_NAME, message=f"analysing {self.name}", percentage=percentage, cancellable=False))
        self.token = token
        if self.ended:
            self._finish()

    def end(self) -> None:
        """The analysis returned: end the progress (at once, or when its creation is answered)."""
        self.ended = True
        if self.begun is not None and self.begun.done():
            self._finish()

    def _finish(self) -> None:
        if self.token is not None:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message="done"))
            self.token = None


def command_arguments(args: tuple) -> list:
    """The arguments of a ``workspace/executeCommand`` handler called with ``*args``: pygls versions
    differ in unpacking them (one list, or each argument apart)."""
    if len(args) == 1 and isinstance(args[0], list):
        return list(args[0])
    return list(args)


def internal_error_diagnostic(exc: BaseException) -> types.Diagnostic:
    """The diagnostic published when the analysis of a document crashed."""
    zero = types.Position(line=0, character=0)
    return types.Diagnostic(
        range=types.Range(start=zero, end=zero),
        message=f"tile-lsp internal error: {type(exc).__name__}: {exc}",
        severity=types.DiagnosticSeverity.Error,
        code="internal",
        source=SERVER_NAME,
    )


def guarded(default: Any = None) -> Callable[[F], F]:
    """Decorate a handler so that no exception escapes it.

    The exception is logged (``window/logMessage`` and Python logging) and
    ``default`` is returned, which answers a request with ``default``.
    A :class:`pygls.exceptions.JsonRpcException` is a deliberate error
    answer (a refused rename) and passes through.
    The wrapper keeps the handler's signature, which pygls inspects.
    """

    def decorate(fn: F) -> F:
        if asyncio.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(ls: TileLanguageServer, *args: Any, **kwargs: Any) -> Any:
                try:
                    return await fn(ls, *args, **kwargs)
                except (asyncio.CancelledError, JsonRpcException):
                    raise
                except Exception:
                    ls.log_exception(f"tile-lsp: handler {fn.__name__} failed")
                    return default

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(ls: TileLanguageServer, *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(ls, *args, **kwargs)
            except JsonRpcException:
                raise
            except Exception:
                ls.log_exception(f"tile-lsp: handler {fn.__name__} failed")
                return default

        return wrapper  # type: ignore[return-value]

    return decorate


#: modules :meth:`TileLanguageServer.warm_up` imports on the main thread before any worker runs
WARM_IMPORTS = ("tile_lsp.analysis.incremental.pipeline", "tile_lsp.analysis.syntax.builder",
                "tile_lsp.analysis.syntax.parse_rules", "tile_lsp.analysis.verify.verifier",
                "tile_lsp.analysis.ide.hover", "tile_lsp.codegen.pipeline", "tile_lsp.codegen.legalize")


#: what :meth:`TileLanguageServer.warm_up` analyses: a small kernel with the common ops and a loop
WARM_UP_TEXT = """\
cuda_tile.module @warm_up {
  entry @matmul(%a: tile<ptr<f16>>, %b: tile<ptr<f16>>, %c: tile<ptr<f32>>, %k: tile<i32>) {
    %tok = make_token : token
    %kk = assume bounded<0, ?>, %k : tile<i32>
    %ta = make_tensor_view %a, shape = [64, %kk], strides = [%kk, 1] : tile<i32> -> tensor_view<64x?xf16, strides=[?,1]>
    %tb = make_tensor_view %b, shape = [%kk, 64], strides = [64, 1] : tile<i32> -> tensor_view<?x64xf16, strides=[64,1]>
    %tc = make_tensor_view %c, shape = [64, 64], strides = [64, 1] : tensor_view<64x64xf32, strides=[64,1]>
    %pa = make_partition_view %ta : partition_view<tile=(64x32), padding_value = zero, tensor_view<64x?xf16, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x64xf16, strides=[64,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c32 = constant <i32: 32> : tile<i32>
    %steps = divi %kk, %c32 signed : tile<i32>
    %acc0 = constant <f32: 0.000000e+00> : tile<64x64xf32>
    %acc = for %i in (%c0 to %steps, step %c1) : tile<i32> iter_values(%run = %acc0) -> (tile<64x64xf32>) {
      %ra, %t1 = load_view_tko weak %pa[%c0, %i] token = %tok : partition_view<tile=(64x32), padding_value = zero, tensor_view<64x?xf16, strides=[?,1]>>, tile<i32> -> tile<64x32xf16>, token
      %rb, %t2 = load_view_tko weak %pb[%i, %c0] token = %tok : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x64xf16, strides=[64,1]>>, tile<i32> -> tile<32x64xf16>, token
      %next = mmaf %ra, %rb, %run : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32>
      continue %next : tile<64x64xf32>
    }
    %t3 = store_view_tko weak %acc, %pc[%c0, %c0] token = %tok : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>, tile<i32> -> token
    return
  }
}
"""
