"""One document's analysis across its versions: what the language server keeps per open file.

:class:`IncrementalAnalyzer` analyses each version of a document as
:func:`tile_lsp.analysis.api.analyze_text` would, reusing the units
(:mod:`tile_lsp.analysis.incremental.units`) the edit did not touch, reporting progress
while a first analysis of a big file runs, and stopping when a newer
version arrives.
"""

from __future__ import annotations

import threading
import time

from tile_lsp.analysis.ir.diagnostics import Diagnostic, SourceText
from tile_lsp.analysis.incremental.pipeline import analyze_chunk
from tile_lsp.analysis.ir.options import AnalysisOptions
from tile_lsp.analysis.incremental.results import AnalysisCancelled, DocumentAnalysis
from tile_lsp.analysis.ir.split import Chunk, split_chunks
from tile_lsp.analysis.incremental.layout import Edit, updated_source
from tile_lsp.analysis.incremental.units import PROGRESS, ChunkState, UnitResult, options_key


#: seconds between two reports of the share of a long first analysis done (:class:`_Progress`)
FRACTION_EVERY = 0.5


class _Progress:
    """Reports the diagnostics found so far while a long analysis runs (see :meth:`IncrementalAnalyzer.analyze`).

    Before the end, what is known is the complete diagnostics of a large
    document's first lines (:mod:`~tile_lsp.analysis.incremental.view`, made
    first), and below them the syntax and IR-building diagnostics of the
    units built so far (their verification waits for the whole chunk).
    """

    def __init__(self, report, first_after: float, every: float, fraction=None, lines: int = 0):
        self.report = report
        self.first_after = first_after
        self.next: float | None = None  # the clock starts with the first unit (not while the parser loads)
        self.every = every
        self.done: list[Diagnostic] = []
        self.partial: list[Diagnostic] = []
        # the diagnostics the previous (cancelled) analysis found in the units not reached yet
        self.carry = None
        #: called with the share of the work done so far (0 to 1: building the document's lines,
        #: then verifying them, each half of it), ``first_after`` seconds after the first unit, then
        #: at most every ``FRACTION_EVERY`` seconds
        self.fraction = fraction
        self.lines = max(lines, 1)
        self.built = 0  # the furthest line a unit built reaches
        self.verified = 0  # the furthest line a unit verified reaches
        self.next_fraction: float | None = None
        #: the complete diagnostics of the document's first lines (:class:`~.view.View`), once made
        self.view = None
        #: the view of the last analysis, cancelled (:func:`~.view.view_for_edit` may keep it)
        self.previous_view = None
        self._viewed = False

    def known(self) -> list[Diagnostic]:
        """What is known now: chunks done; the first lines' view; below it, the units built so far and
        the units of the last analysis not reached yet."""
        found = self.partial + (self.carry() if self.carry is not None else [])
        if self.view is not None:
            found = self.view.diagnostics + [d for d in found if not self.view.holds(d)]
        return self.done + sorted(found, key=Diagnostic.sort_key)

    def wants_view(self) -> bool:
        """Whether the chunk about to be analysed by units should first have its first lines' view made:
        the first time only (:func:`~.view.first_view` makes one only of the document's first chunk)."""
        wanted = not self._viewed
        self._viewed = True
        return wanted

    def show_view(self, view, made: bool = True) -> None:
        """Keep the :class:`~.view.View` ``view`` in what is reported until its chunk is done, and report
        at once one just ``made`` (even when it found nothing: the lines the editor shows are checked)."""
        if view is not None:
            self.view = view
            if made:
                self.report_now()

    def report_now(self) -> None:
        """Report at once (the unit just built is the one the user edited), even when nothing is found."""
        self.report(self.known())
        self.next = time.perf_counter() + self.every

    def unit_done(self, res: UnitResult) -> None:
        for r in (res, *res.children):
            self.partial.extend(r.issues)
            self.partial.extend(r.build)
        now = time.perf_counter()
        if self.fraction is not None:
            self.built = max(self.built, res.last_line + 1)
            self._share(now)
        if self.next is None:
            self.next = now + self.first_after
        elif now >= self.next:
            known = self.known()
            if known:
                # nothing found yet is no news: the client of a first analysis shows nothing already,
                # and an empty list would look like the final answer
                self.next = now + self.every
                self.report(known)

    def verifying(self, res: UnitResult) -> None:
        """Note that ``res``'s unit is being verified, the lines above it done (the second half of the work)."""
        if self.fraction is not None:
            self.verified = max(self.verified, res.first_line)
            self._share(time.perf_counter())

    def _share(self, now: float) -> None:
        if self.next_fraction is None:
            self.next_fraction = now + self.first_after
        elif now >= self.next_fraction:
            self.next_fraction = now + FRACTION_EVERY
            self.fraction(min((self.built + self.verified) / (2 * self.lines), 1.0))

    def chunk_done(self, diagnostics: list[Diagnostic]) -> None:
        self.done.extend(diagnostics)
        self.partial = []
        self.view = None  # its chunk's complete diagnostics say it all now


class IncrementalAnalyzer:
    """Analyses successive versions of one document, reusing unchanged units.

    :meth:`analyze` returns what :func:`tile_lsp.analysis.api.analyze_text`
    returns for the same text and options.  Calls are serialised (a lock):
    the IR of reused units is moved in place, so two analyses of one
    document must not overlap.  ``last_stats`` tells how many units the
    last call reused and rebuilt.

    An analysis can be cancelled (``cancelled``): the units it finished are
    kept, and the next analysis reuses them, as rust-analyzer keeps what a
    cancelled query computed.  Until one analysis of the document completes,
    each reports progress, and builds the function just edited first.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chunks: list[ChunkState] = []
        self._options_key: tuple | None = None
        self._source: SourceText | None = None
        self._complete = False  # the states in _chunks are those of a finished analysis
        self._view = None  # the first lines' view made by the last analysis, cancelled (see _Progress)
        self.last_stats: tuple[int, int] = (0, 0)

    @property
    def complete(self) -> bool:
        """Whether the last analysis ran to its end (not cancelled); ``False`` before the first one."""
        return self._complete

    def analyze(self, text: str, options=None, *, progress=None, first_after: float = 0.5, every: float = 2.0,
                blocking: bool = True, cancelled=None, fraction=None):
        """Analyse ``text``; never raises on bad input (see ``analyze_text``).

        ``progress``, when given and no analysis of the document (since the
        options changed) has completed yet, is called (in the calling
        thread) with the diagnostics known so far: at once when the complete
        diagnostics of a large document's first lines are known (made before
        the rest, :mod:`~tile_lsp.analysis.incremental.view`; kept by the next
        analysis when its edit left them whole); when a unit is done
        ``first_after`` seconds after the first one, then every ``every``
        seconds, if anything is known: those of the chunks done, of the first
        lines, the syntax and IR-building diagnostics of the units built so
        far, and those a cancelled analysis found in the units not reached
        yet; and at once after the function the last edit is in, which is
        built first.  The returned analysis is complete.  With
        ``blocking=False``, ``None`` is returned at once when another
        analysis of the document is running.

        ``cancelled``: a cheap callable asked between units; when it answers
        true the analysis stops and returns ``None``, keeping what it built
        for the next call.

        ``fraction``, with ``progress``, is called (in the calling thread)
        with the share of the work done so far, a number from 0 to 1 (the
        document's lines built, then verified, each half of it),
        ``first_after`` seconds after the first unit and then
        every :data:`FRACTION_EVERY` seconds, while no analysis of the
        document has completed: what an editor shows as work-done progress.
        """
        options = options or AnalysisOptions()
        if not self._lock.acquire(blocking=blocking):
            return None
        try:
            return self._analyze(text, options, progress, first_after, every, cancelled, fraction)
        finally:
            self._lock.release()

    def _analyze(self, text: str, options, progress, first_after: float, every: float, cancelled, fraction):
        key = options_key(options)
        if key != self._options_key:
            self._chunks = []
            self._complete = False
            self._options_key = key
            self._view = None
        chunks = split_chunks(text) if options.split_input_file else [Chunk(0, 0, text)]
        old_source = self._source
        source = updated_source(old_source, text) if old_source is not None else SourceText(text)
        edit = Edit.between(old_source, source) if old_source is not None and self._chunks else None
        self._source = source
        previous = {c.text: c for c in self._chunks}
        states: list[ChunkState] = []
        results = []
        reused = rebuilt = 0
        # only a first analysis is long enough to be worth partial reports
        sink = _Progress(progress, first_after, every, fraction, source.line_count) \
            if progress is not None and not self._complete else None
        if sink is not None:
            sink.previous_view = self._view
        self._view = None
        PROGRESS.sink = sink
        n = 0
        try:
            used: set[int] = set()
            for n, chunk in enumerate(chunks):
                prev = self._chunks[n] if n < len(self._chunks) else None
                if (prev is None or prev.text != chunk.text) and chunk.text in previous:
                    prev = previous[chunk.text]
                if prev is not None and id(prev) in used:
                    prev = None  # its IR went to an earlier chunk of the same text
                if prev is not None:
                    used.add(id(prev))
                state_box: list = []
                results.append(analyze_chunk(chunk, options, source, previous=prev, state_out=state_box,
                                             cancelled=cancelled, edit=edit))
                if sink is not None:
                    sink.chunk_done(results[-1].diagnostics)
                if state_box:
                    states.append(state_box[0])
                    reused += state_box[0].reused
                    rebuilt += state_box[0].rebuilt
                else:
                    states.append(ChunkState(chunk.text, 0, [], (), (0, 0)))
        except AnalysisCancelled as stop:
            # the chunks done, the work on this one, and the older states of the chunks not reached
            kept = states + ([stop.state] if stop.state is not None else [])
            self._chunks = kept + [c for c in self._chunks if id(c) not in used][:max(0, len(chunks) - len(kept))]
            self._complete = False
            self._view = sink.view if sink is not None else None
            return None
        finally:
            PROGRESS.sink = None
        self._chunks = states
        self._complete = True
        self.last_stats = (reused, rebuilt)
        return DocumentAnalysis(text, results)
