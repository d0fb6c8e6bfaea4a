"""The top of a large document, analysed completely before the rest: the first diagnostics the server publishes.

The first analysis of a 50,000-line file takes seconds, and what the user
looks at after opening it is its first screen.  :func:`first_view` analyses
that first: the functions that begin in the chunk's first
:data:`VIEW_LINES` lines (at least one), with every unit that is not a
function (aliases and globals, which those functions may name), the other
functions left out of the IR, as in a process's share of
:mod:`~tile_lsp.analysis.incremental.parallel`.  The window is the chunk's
lines down to the last line of the last of those functions.

Its diagnostics inside the window, minus those of the containers' own
verification (the module's, which sees the other functions missing), are
the diagnostics the whole analysis finds there, verifier's included:

* a function's analysis depends on the aliases and globals, which are
  built, and not on the other functions (``IsolatedFromAbove``; nothing refers
  to a function by its symbol);
* the first parse error of the whole chunk either lies in the window, where
  this analysis meets it first too, or below it, where what it hides
  (:func:`~tile_lsp.analysis.ir.diagnostics.mlir_order`: the rest of the
  failed op, the verification of the ops holding it) is below the window or
  the module's own.

What the window lacks is only the module's own findings (a symbol defined
twice, one copy below the window), which the complete analysis adds.  A
test checks that every diagnostic of the view is one of the complete
analysis, on edited corpus kernels.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from tile_lsp.analysis.ir.diagnostics import Diagnostic, SourceText
from tile_lsp.analysis.incremental.layout import Unit, function_units

log = logging.getLogger(__name__)

#: the functions beginning in this many lines of the chunk make the view (a tall editor shows about 80)
VIEW_LINES = 100
#: a chunk with fewer lines is analysed whole as fast as its view would be worth (about 0.3 s)
MIN_LINES = 2000
#: the view is not made when its text is longer (about 1,600 lines, a quarter of a second): one huge
#: first function, or a file of globals.  It cannot be cancelled, so an edit meanwhile waits for it
MAX_CHARS = 100_000


@dataclass
class View:
    """The complete diagnostics of a document's first lines, ``first_line`` to ``last_line`` (file lines,
    0-based, inclusive)."""

    first_line: int
    last_line: int
    diagnostics: list[Diagnostic]

    def holds(self, d: Diagnostic) -> bool:
        """Whether ``d`` lies in the window (so this view, not a partial analysis, speaks for it)."""
        return d.range is not None and self.first_line <= d.range.start.line <= self.last_line


def first_view(chunk, layout: list[Unit], source: SourceText, analyse_share) -> View | None:
    """The :class:`View` of ``chunk``'s first lines, or ``None`` when it is not worth making.

    ``chunk`` is the document's first chunk (its ``start_offset`` 0), of at
    least :data:`MIN_LINES` lines; ``layout`` its units
    (:func:`~tile_lsp.analysis.incremental.layout.chunk_layout`, all exact);
    ``source`` indexes the whole document.  ``analyse_share(owners)``
    analyses the chunk with only the functions ``i`` (in the order of
    :func:`~tile_lsp.analysis.incremental.layout.function_units`) whose
    ``owners[i]`` is 0, and returns ``(ChunkAnalysis, ChunkState)``
    (:func:`tile_lsp.analysis.incremental.units.analyze_units` with a
    ``share``), reporting no progress.  ``None`` also when the view would
    be longer than :data:`MAX_CHARS` characters, or a unit was built in a
    scope an earlier unit left names in (the functions then depend on their
    order).  Never raises: a failure is logged and gives ``None`` (the
    complete analysis reports it).
    """
    if chunk.start_offset != 0 or chunk.text.count("\n") < MIN_LINES:
        return None
    functions = list(function_units(layout))
    if not functions:
        return None
    seen = [u for u in functions if u.line < VIEW_LINES] or functions[:1]
    left_out = sum(u.end - u.start for u in functions[len(seen):])
    if len(chunk.text) - left_out > MAX_CHARS:
        return None
    try:
        return _analyse_view(chunk, source, seen, len(functions), analyse_share)
    except Exception:  # the complete analysis, which follows, reports what went wrong
        log.exception("the analysis of a document's first lines failed")
        return None


def view_for_edit(previous: View | None, edit, chunk, layout: list[Unit], source: SourceText,
                  analyse_share) -> tuple[View | None, bool]:
    """The view of a new version of the document: ``(view, made)``.

    ``previous`` is the view of the text the last (cancelled) analysis had,
    ``edit`` (:class:`~tile_lsp.analysis.incremental.layout.Edit`) the change
    since (``None``: none).  It is kept (``made`` False) when the edit left
    its lines untouched and in place (it begins below them) and lies inside
    one function of the new text (whose analysis nothing in the window
    depends on); else the view is made now (:func:`first_view`, with
    ``analyse_share``; ``made`` True).  So a keystroke while a large file's first analysis runs does not
    wait for the view again, and the view's findings stay shown.
    """
    if previous is not None and (edit is None or _inside_one_function(previous, edit, chunk, layout, source)):
        return previous, False
    return first_view(chunk, layout, source, analyse_share), True


def _inside_one_function(view: View, edit, chunk, layout: list[Unit], source: SourceText) -> bool:
    if edit.first_line <= view.last_line or chunk.start_offset != 0:
        return False
    last_edited = edit.last_line + edit.line_delta  # in the new text
    for u in function_units(layout):
        if u.line > edit.first_line:
            return False
        if source.position(max(u.end - 1, u.start)).line >= last_edited:
            return True
    return False


def _analyse_view(chunk, source: SourceText, seen: list[Unit], count: int, analyse_share):
    analysis, state = analyse_share((0,) * len(seen) + (1,) * (count - len(seen)))
    if not state.scopes_clean():
        return None
    first_line = source.position(chunk.start_offset).line
    last = seen[-1]
    last_line = source.position(chunk.start_offset + max(last.end - 1, last.start)).line
    own = {id(d) for r in _containers(state.units) for d in (*r.head, *r.tail)}
    view = View(first_line, last_line, [])
    view.diagnostics = [d for d in analysis.diagnostics if id(d) not in own and view.holds(d)]
    return view


def _containers(units):
    for r in units:
        if r.kind == "container":
            yield r
            yield from _containers(r.children)
