"""The complete diagnostics of a large document's first lines, reported before the rest is analysed
(:mod:`tile_lsp.analysis.incremental.view`): what the language server publishes first after opening it.

* A clean large document's first report is an empty list, made before any
  unit of the complete analysis is built.
* The first report holds the verifier's findings in the first entries and
  nothing found below them; the later partial reports keep those findings;
  the complete analysis is unchanged.
* Property: on edited corpus kernels, the view's diagnostics are exactly
  the complete analysis's diagnostics in its lines (the module's own
  findings aside, which it leaves to the complete analysis).
* An edit during the first analysis keeps the view when it lies below it,
  in one function; inside it, the view is made again.
* No view for a small document, nor one longer than its bound.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_incremental import EDIT, KERNELS, _apply, _diagnostics, _module
from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.incremental import view as V
from tile_lsp.analysis.incremental.document import IncrementalAnalyzer

BODY = "".join(f"    %v{i} = constant <i32: {i}> : tile<i32>\n" for i in range(50))
#: a verifier error (not a parse error): the element counts differ
RESHAPE = "    %bad = reshape %v1 : tile<i32> -> tile<2xi32>\n"
RESHAPE_MESSAGE = "'cuda_tile.reshape' op expected source tile and result tile to have the same number of elements"


def _big(entries: int = 45, extra: dict[int, str] | None = None) -> str:
    """A module of ``entries`` entries of 53 lines (45: about 2,400 lines, over :data:`V.MIN_LINES`), with
    ``extra[k]`` added at the end of entry ``k``'s body."""
    extra = extra or {}
    return "cuda_tile.module @m {\n" + "".join(
        f"  entry @e{k}() {{\n" + BODY + extra.get(k, "") + "    return\n  }\n" for k in range(entries)) + "}\n"


class _Calls:
    """A ``cancelled`` check that never cancels and counts its calls (one per unit the analysis starts)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> bool:
        self.calls += 1
        return False


def _analyse(text: str) -> tuple[list[tuple[int, list]], object]:
    """The reports of a first analysis of ``text`` (with the units started when each came) and its result."""
    calls = _Calls()
    reports: list[tuple[int, list]] = []
    result = IncrementalAnalyzer().analyze(text, progress=lambda d: reports.append((calls.calls, d)),
                                           first_after=0.0, every=0.0, cancelled=calls)
    return reports, result


def test_a_clean_large_document_is_first_reported_clean_before_the_rest_is_built():
    text = _big()
    assert text.count("\n") >= V.MIN_LINES
    reports, result = _analyse(text)
    assert result.diagnostics == []
    assert reports[0] == (0, [])  # before the complete analysis started its first unit
    assert all(found == [] for _, found in reports)


def test_a_small_document_has_no_view():
    reports, result = _analyse(_big(entries=6))
    assert result.diagnostics == [] and reports == []


def test_no_view_longer_than_its_bound():
    """Thousands of globals (which the view analyses too, as the entries may name them): the view would
    take as long as the rest, and an edit cannot cancel it."""
    globals_ = "".join(f"  global @g{k} <i32: [1, 2]> : tile<2xi32>\n" for k in range(2600))
    text = _big(entries=300).replace("cuda_tile.module @m {\n", "cuda_tile.module @m {\n" + globals_, 1)
    assert V.MAX_CHARS < len(globals_) < len(text) / 5  # long, though a small part of the file
    reports, result = _analyse(text)
    assert result.diagnostics == [] and reports == []


def test_the_first_report_has_the_first_entries_verifier_errors_and_nothing_below():
    text = _big(extra={0: RESHAPE, 30: RESHAPE, 40: "    %v9 = constant <i32: 9> : tile<i32\n"})
    reports, result = _analyse(text)
    bad_line = next(n for n, line in enumerate(text.splitlines()) if line.startswith("    %bad"))
    calls, first = reports[0]
    assert calls == 0
    assert [(d.message, d.range.start.line) for d in first] == [(RESHAPE_MESSAGE, bad_line)]
    # the later partial reports keep it (no flicker while the rest is built), and add what they find below
    assert all(any(d.message == RESHAPE_MESSAGE and d.range.start.line == bad_line for d in found)
               for _, found in reports)
    assert any(d.code == "parse.syntax" for _, found in reports for d in found)
    final = _diagnostics(result)
    assert final == _diagnostics(analyze_text(text))
    assert len([d for d in final if d[1] == RESHAPE_MESSAGE]) == 2 and any(d[2] == "parse.syntax" for d in final)


def test_the_view_leaves_the_module_s_own_findings_to_the_complete_analysis():
    """Two entries of one name, both in the first lines: the redefinition is the module's finding (its
    symbol table), reported with the complete diagnostics, not in the view."""
    text = _big().replace("entry @e1()", "entry @e0()", 1)
    reports, result = _analyse(text)
    assert reports[0] == (0, [])
    assert [d.message for d in result.diagnostics] == ["redefinition of symbol named 'e0'"]


def _corpus_module() -> str:
    names = [KERNELS[k % len(KERNELS)] for k in range(40)]
    return _module(names)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDIT, min_size=1, max_size=3), top=st.lists(st.booleans(), min_size=3, max_size=3))
def test_the_view_is_the_complete_analysis_in_its_lines(corpus, edits, top):
    """Property: edits mostly in the first entries (``top``: within the first 3 % of the text) of a
    module of corpus kernels; the view's diagnostics (message, range) are exactly those of the complete
    analysis in the view's lines."""
    text = _corpus_module()
    for edit, near in zip(edits, top):
        kind, where, char = edit
        text = _apply(text, (kind, where * 0.03 if near else where, char))
    views: list = []
    made = V.first_view

    def spy(*args, **kwargs):
        views.append(made(*args, **kwargs))
        return views[-1]

    V.first_view = spy
    try:
        reports, result = _analyse(text)
    finally:
        V.first_view = made
    if not views or views[0] is None:
        return  # brackets that do not balance (the chunk is parsed whole), or a header that leaks names
    view = views[0]

    def key(d):
        return d.message, (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)

    own = [key(d) for d in view.diagnostics]
    assert sorted(own) == sorted(key(d) for d in result.diagnostics
                                 if view.holds(d) and not d.message.startswith("redefinition of symbol"))
    assert sorted(key(d) for d in reports[0][1]) == sorted(own)
    assert _diagnostics(result) == _diagnostics(analyze_text(text))


class _CancelAt(_Calls):
    """Cancels from its ``n``-th call on."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def __call__(self) -> bool:
        super().__call__()
        return self.calls >= self.n


def _views_made(monkeypatch) -> list:
    made: list = []
    original = V.first_view

    def spy(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(V, "first_view", spy)
    return made


@pytest.mark.parametrize("where", ["below", "inside"])
def test_an_edit_during_the_first_analysis_keeps_the_view_it_left_whole(monkeypatch, where):
    """The first analysis is cancelled by an edit.  Typed in an entry below the view, the edit leaves
    the view as it was: it is not made again, and the report made once the edited entry is built
    carries its findings.  Typed in the view's lines, the view is made again and reported first."""
    text = _big(extra={0: RESHAPE})
    made = _views_made(monkeypatch)
    inc = IncrementalAnalyzer()
    assert inc.analyze(text, progress=lambda d: None, first_after=60.0, every=60.0, cancelled=_CancelAt(5)) is None
    assert len(made) == 1 and len(made[0].diagnostics) == 1
    entry = 30 if where == "below" else 1
    lines = text.splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.startswith(f"  entry @e{entry}()")) + 2
    lines.insert(at, "    cuda_tile.not_an_op\n")
    edited = "".join(lines)
    reports: list = []
    result = inc.analyze(edited, progress=reports.append, first_after=60.0, every=60.0)
    assert _diagnostics(result) == _diagnostics(analyze_text(edited))
    expected = sorted((d.message, d.range.start.line) for d in result.diagnostics)
    assert len(expected) == 2
    assert len(made) == (1 if where == "below" else 2)
    assert sorted((d.message, d.range.start.line) for d in reports[0]) == expected
