"""Incremental analysis (tile_lsp.analysis.incremental.units): units, reuse, and equality with a full analysis.

* On valid corpus kernels, the unit-by-unit analysis reports exactly what
  the whole-chunk parse reports.
* Property: after any sequence of random edits (characters typed or
  deleted, lines inserted) of documents assembled from corpus kernels,
  :class:`IncrementalAnalyzer` gives the same diagnostics (text, range,
  severity, code, notes) and the same navigation answers (definition,
  references, hover) as a fresh ``analyze_text`` of the same text.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import require_corpus
from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Position
from tile_lsp.analysis.incremental.document import IncrementalAnalyzer
from tile_lsp.analysis.ide.hover import hover_markdown
from tile_lsp.analysis.ide.index import DocumentIndex
from tile_lsp.analysis.incremental import layout as L
from tile_lsp.analysis.incremental.layout import split_units

KERNELS = ("activations_gelu_f32_b256.sm_100", "layernorm_bwd_bf16_32x256.sm_90", "flash_attention_bf16_d128_64x64.sm_90")


def _kernel(name: str, g: bool = False) -> str:
    return (require_corpus() / "kernels" / (name + (".g.mlir" if g else ".mlir"))).read_text(encoding="utf-8")


def _module(names: list[str]) -> str:
    parts = ["cuda_tile.module @m {\n"]
    for n, name in enumerate(names):
        text = re.sub(r"(entry @[A-Za-z0-9_$.]+)", lambda m, n=n: f"{m.group(1)}_{n}", _kernel(name))
        parts.append("".join("  " + line if line.strip() else line for line in text.splitlines(keepends=True)))
    parts.append("}\n")
    return "".join(parts)


def _renamed_aliases(text: str, prefix: str) -> str:
    """``text`` with each alias it defines (``#loc3 = ...``) renamed ``#<prefix>loc3``, so that files can be joined."""
    names = re.findall(r"^#([A-Za-z_][A-Za-z0-9_$.]*) =", text, flags=re.MULTILINE)
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(rf"#{re.escape(name)}(?![A-Za-z0-9_$.])", f"#{prefix}{name}", text)
    return text


def _diagnostics(analysis) -> list[tuple]:
    out = []
    for d in analysis.diagnostics:
        r = d.range
        out.append((d.severity.value, d.message, d.code,
                    None if r is None else (r.start.line, r.start.character, r.end.line, r.end.character),
                    [(n.message, n.range) for n in d.notes]))
    return out


def _whole(text: str, options: AnalysisOptions | None = None):
    """The analysis of ``text`` with every chunk parsed whole (no units)."""
    saved = L.split_units
    L.split_units = lambda _text: None
    try:
        return analyze_text(text, options)
    finally:
        L.split_units = saved


# -- layout ---------------------------------------------------------------------------


def test_split_units_of_a_module():
    text = ("// header comment\n"
            "cuda_tile.module @m {\n"
            "  global @g <i32: [1, 2]> : tile<2xi32>\n"
            "  entry @a() {\n"
            "    return\n"
            "  }\n"
            "\n"
            "  // the second kernel\n"
            "  entry @b() {\n"
            "    return\n"
            "  }\n"
            "}\n")
    units = split_units(text)
    assert [u.kind for u in units] == ["container"]
    module = units[0]
    assert text[module.start:module.header_end] == "// header comment\ncuda_tile.module @m {\n"
    assert text[module.footer_start:module.end] == "}\n"
    assert [text[c.start:c.end] for c in module.children] == [
        "  global @g <i32: [1, 2]> : tile<2xi32>\n",
        "  entry @a() {\n    return\n  }\n\n  // the second kernel\n",
        "  entry @b() {\n    return\n  }\n",
    ]
    assert [c.line for c in module.children] == [2, 3, 8]


def test_split_units_refuses_shared_values_and_cuts_around_a_missing_brace():
    shared = "%0 = \"foo.a\"() : () -> i32\n\"foo.b\"(%0) : (i32) -> ()\n"
    assert split_units(shared) is None
    broken = "entry @a() {\n  return\n\nentry @b() {\n  return\n}\n"
    units = split_units(broken)
    assert [broken[u.start:u.end] for u in units] == ["entry @a() {\n  return\n\n", "entry @b() {\n  return\n}\n"]


def test_a_missing_brace_is_reported_where_mlir_fails(corpus):
    text = _module(["activations_gelu_f32_b256.sm_100", "layernorm_bwd_bf16_32x256.sm_90"])
    lines = text.splitlines(keepends=True)
    second = next(k for k, line in enumerate(lines) if line.startswith("  entry @layernorm"))
    closing = second - 1
    assert lines[closing] == "  }\n"
    broken = "".join(lines[:closing] + lines[closing + 1:])
    diagnostics = analyze_text(broken).diagnostics
    # MLIR reads the second entry into the first one's body, where the first one's arguments are
    # visible: its first error is the second entry's %arg0 (cuda-tile-opt: 36:123 on this text), then
    # it would meet the end of the file inside the module (after the last `}`); nothing that only the
    # mis-nesting causes (the verifier does not run on a structure the recovery guessed)
    last = max(k for k, line in enumerate(broken.splitlines()) if line.strip())
    header = broken.splitlines()[second - 1]
    assert [(d.message, d.range.start.line, d.range.start.character) for d in diagnostics] == [
        ("region entry argument '%arg0' is already in use", second - 1, header.index("%arg0")),
        ("expected operation name in quotes", last, 1)]


# -- equality with the whole-chunk parse on valid input --------------------------------


@pytest.mark.parametrize("g", [False, True])
def test_units_equal_whole_parse_on_kernels(corpus, g):
    for name in KERNELS:
        text = _kernel(name, g)
        # one entry is one unit (parsed whole); with debug locations, each #loc alias is one more
        assert (split_units(text) is not None) == g
        assert _diagnostics(analyze_text(text)) == _diagnostics(_whole(text))
    text = _module(list(KERNELS))
    units = split_units(text)
    assert units[0].kind == "container" and len(units[0].children) == len(KERNELS)
    assert _diagnostics(analyze_text(text)) == _diagnostics(_whole(text))


def test_units_equal_whole_parse_with_errors_in_ir(corpus):
    # verifier and builder errors (no syntax error): same diagnostics
    text = _module(list(KERNELS[:2]))
    text = text.replace("%assume_3 ", "%assume_3x ", 1).replace("tile<32x256xf32>", "tile<32x256xf16>", 1)
    whole = _diagnostics(_whole(text))
    assert whole  # the edit broke something
    assert _diagnostics(analyze_text(text)) == whole


# -- incremental == fresh -----------------------------------------------------------------


def _navigation(analysis, lines: list[str]) -> list:
    """Definition, references and hover at every SSA name, symbol and alias on a sample of lines."""
    index = DocumentIndex(analysis)
    out = []
    for n in range(0, len(lines), 7):
        for m in re.finditer(r"[%@#!][A-Za-z0-9_$.\-]+", lines[n]):
            pos = Position(n, m.start() + 1)
            out.append((n, m.start(), index.definition(pos), index.references(pos), hover_markdown(index, pos)))
    return out


EDIT = st.tuples(st.sampled_from(["insert", "delete", "newline", "join"]), st.floats(0, 1), st.sampled_from("x0%:,( "))


def _apply(text: str, edit) -> str:
    kind, where, char = edit
    pos = int(where * (len(text) - 1))
    if kind == "insert":
        return text[:pos] + char + text[pos:]
    if kind == "delete":
        return text[:pos] + text[pos + 1:]
    if kind == "newline":
        return text[:pos] + "\n" + text[pos:]
    nl = text.find("\n", pos)
    return text if nl < 0 else text[:nl] + text[nl + 1:]


@pytest.mark.parametrize("shape", ["module", "bare-g", "split"])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDIT, min_size=1, max_size=4))
def test_incremental_equals_fresh(corpus, shape, edits):
    if shape == "module":
        text = _module(list(KERNELS[:2]))
    elif shape == "bare-g":
        text = _kernel(KERNELS[0], g=True) + _renamed_aliases(_kernel(KERNELS[1], g=True), "b_")
    else:
        text = _kernel(KERNELS[0]) + "// -----\n" + _module([KERNELS[1]])
    options = AnalysisOptions(split_input_file=shape == "split")
    inc = IncrementalAnalyzer()
    inc.analyze(text, options)
    for edit in edits:
        text = _apply(text, edit)
        got = inc.analyze(text, options)
        fresh = analyze_text(text, options)
        assert _diagnostics(got) == _diagnostics(fresh)
        lines = text.splitlines()
        assert _navigation(got, lines) == _navigation(fresh, lines)


def test_an_edit_reuses_the_other_units(corpus):
    text = _module(list(KERNELS))
    inc = IncrementalAnalyzer()
    inc.analyze(text)
    edited = text.replace("%assume_3 ", "%assume_3x ", 1)
    got = inc.analyze(edited)
    reused, rebuilt = inc.last_stats
    assert (reused, rebuilt) == (len(KERNELS) - 1, 2)  # the edited entry and the module header
    assert _diagnostics(got) == _diagnostics(analyze_text(edited))
    # a line inserted above moves the other entries: reused, their diagnostics moved
    moved = "// a new first line\n" + edited
    got = inc.analyze(moved)
    assert inc.last_stats == (len(KERNELS), 1)
    assert got.diagnostics and _diagnostics(got) == _diagnostics(analyze_text(moved))


# -- statements of an entry ----------------------------------------------------------------


def _entry_whole(text: str, options: AnalysisOptions | None = None):
    """The analysis of ``text`` with each entry parsed whole (no statement units)."""
    saved = L.FUNCTION_OPS
    L.FUNCTION_OPS = frozenset()
    try:
        return analyze_text(text, options)
    finally:
        L.FUNCTION_OPS = saved


def _entry_ops(analysis, name: str):
    module = analysis.chunks[0].module
    container = module.body.operations[0]
    for op in container.regions[0].blocks[0].operations:
        if op.symbol_name == name:
            return op.regions[0].blocks[0].operations
    raise AssertionError(name)


def test_entries_are_cut_into_statements(corpus):
    text = _module(list(KERNELS))
    units = split_units(text)
    entries = units[0].children
    assert [u.kind for u in entries] == ["function"] * len(KERNELS)
    first = entries[0]
    # statements are relative to their entry: the first starts on the line after the header
    assert first.children[0].line == 1 and first.children[0].start == first.header_end - first.start
    assert all(c.kind == "stmt" for c in first.children)


def test_an_edit_rebuilds_one_statement_and_its_users(corpus):
    text = _module(list(KERNELS[:2]))
    inc = IncrementalAnalyzer()
    before = inc.analyze(text)
    at = text.index("%assume_3 ")
    name = re.findall(r"entry @([A-Za-z0-9_$.]+)", text[:at])[-1]
    old_ops = list(_entry_ops(before, name))
    # rename the definition of %assume_3: it and its user are rebuilt, the other statements are moved as they are
    edited = text.replace("%assume_3 ", "%assume_3x ", 1)
    got = inc.analyze(edited)
    new_ops = _entry_ops(got, name)
    kept = sum(any(op is o for o in old_ops) for op in new_ops)
    assert (len(new_ops), kept) == (len(old_ops), len(old_ops) - 2)
    assert _diagnostics(got) == _diagnostics(_entry_whole(edited)) == _diagnostics(analyze_text(edited))
    assert [m for _, m, *_ in _diagnostics(got)] == ["use of undeclared SSA value name"]
    # every use list is that of a fresh analysis
    fresh = _entry_ops(analyze_text(edited), name)
    assert [[len(r.uses) for r in op.results] for op in new_ops] == [[len(r.uses) for r in op.results] for op in fresh]
    # typing it back: no diagnostics, and the users are linked to the definition again
    got = inc.analyze(text)
    assert _diagnostics(got) == []
    ops = _entry_ops(got, name)
    assume = next(op for op in ops if op.results and op.results[0].name == "%assume_3")
    nested = [o for op in ops for o in op.walk()]
    assert assume.results[0].uses and all(any(u.owner is o for o in nested) for u in assume.results[0].uses)


def test_a_type_change_reverifies_the_users(corpus):
    text = _module([KERNELS[1]])
    inc = IncrementalAnalyzer()
    inc.analyze(text)
    edited = text.replace("tile<32x256xf32>", "tile<32x256xf16>", 1)
    got = inc.analyze(edited)
    assert _diagnostics(got) and _diagnostics(got) == _diagnostics(_entry_whole(edited))


@pytest.mark.parametrize("typo", [("= reduce %12", "= reduceq %12"),
                                  ("(%reduce_lhs: tile<f32>", "(%reduce_lhs: tile<f3q2>")])
def test_an_error_in_a_region_header_stays_in_its_statement(corpus, typo):
    """A typo in the lines that open a reduce's region: the reduce alone is re-parsed (its region blanked
    with it), the other statements are kept, and the result is that of parsing the entry whole."""
    text = _module([KERNELS[1]])
    inc = IncrementalAnalyzer()
    before = inc.analyze(text)
    name = re.findall(r"entry @([A-Za-z0-9_$.]+)", text)[0]
    old_ops = list(_entry_ops(before, name))
    edited = text.replace(typo[0], typo[1], 1)
    assert edited != text
    got = inc.analyze(edited)
    diags = _diagnostics(got)
    assert diags == _diagnostics(_entry_whole(edited)) == _diagnostics(analyze_text(edited))
    # one syntax error and nothing else: the reduce's users do not see its result, which the recovery
    # blanked, but the text defines it, so that is not reported (issue 15, recovery cascades)
    assert [d[2] for d in diags] == ["parse.syntax"]
    new_ops = _entry_ops(got, name)
    assert len(new_ops) == len(old_ops) - 1
    removed = [o for o in old_ops if not any(o is n for n in new_ops)]
    removed_names = {r.name for o in removed for r in o.results}
    rebuilt = [op for op in new_ops if not any(op is o for o in old_ops)]
    # what was rebuilt is the users of the blanked reduce's result
    assert rebuilt and all(any(v.name in removed_names for v in op.operands) for op in rebuilt)
    # typed back: clean, and the statements kept across both edits are the same objects
    got = inc.analyze(text)
    assert _diagnostics(got) == []
    ops = _entry_ops(got, name)
    assert sum(any(op is o for o in old_ops) for op in ops) >= len(old_ops) - len(rebuilt) - 1


BODY_EDIT = st.tuples(st.sampled_from(["insert", "delete", "newline", "join"]), st.floats(0, 1),
                      st.sampled_from("xq7%:,({} "))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(BODY_EDIT, min_size=1, max_size=4))
def test_statements_equal_entries_parsed_whole(corpus, edits):
    """Property: with statements reused across edits, the diagnostics are those of parsing each entry whole."""
    text = _module(list(KERNELS[:2]))
    inc = IncrementalAnalyzer()
    inc.analyze(text)
    for edit in edits:
        text = _apply(text, edit)
        got = inc.analyze(text)
        assert _diagnostics(got) == _diagnostics(_entry_whole(text))


def test_a_long_first_analysis_reports_only_what_it_found():
    """The partial reports of a long first analysis (the server publishes them) never carry an empty
    list before the verifier has run on what they cover: an empty list would look like the final answer.
    (A document of 2,000 lines or more is first reported with its first lines verified, even when
    clean: ``tests/test_first_view.py``; this one has about 330.)"""

    body = "".join(f"    %v{i} = constant <i32: {i}> : tile<i32>\n" for i in range(50))
    clean = "cuda_tile.module @m {\n" + "".join(f"  entry @e{k}() {{\n" + body + "    return\n  }\n"
                                               for k in range(6)) + "}\n"
    reports: list[list] = []
    result = IncrementalAnalyzer().analyze(clean, progress=reports.append, first_after=0.0, every=0.0)
    assert result.diagnostics == []
    assert reports == []
    broken = clean.replace("%v3 = constant <i32: 3> : tile<i32>", "%v3 = constant <i32: 3> : tile<i32")
    reports.clear()
    IncrementalAnalyzer().analyze(broken, progress=reports.append, first_after=0.0, every=0.0)
    assert reports and all(r for r in reports)


# -- cancellation --------------------------------------------------------------------------


class _CancelAfter:
    """A ``cancelled`` check answering true from its ``n``-th call on (``None``: never); counts its calls."""

    def __init__(self, n: int | None):
        self.n = n
        self.calls = 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.n is not None and self.calls >= self.n


SIX = [KERNELS[k % len(KERNELS)] for k in range(6)]


@pytest.mark.parametrize("stop", [1, 3, 6, 9])
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDIT, min_size=1, max_size=3))
def test_a_cancelled_analysis_leaves_work_that_the_next_one_reuses(corpus, stop, edits):
    """Cancelled after some units (``stop`` 9: while verifying), then edited: each analysis that is
    cancelled returns None, and the one that completes equals a fresh analysis of its text."""
    text = _module(SIX)
    inc = IncrementalAnalyzer()
    stopped = inc.analyze(text, cancelled=_CancelAfter(stop)) is None  # (no repr of an analysis on failure)
    assert stopped
    assert not inc.complete
    for n, edit in enumerate(edits):
        text = _apply(text, edit)
        if n < len(edits) - 1:
            # cancelled again before its end, with the work of the first one still pending
            inc.analyze(text, cancelled=_CancelAfter(stop + 1))
            continue
        got = inc.analyze(text, cancelled=_CancelAfter(None))
        assert inc.complete
        fresh = analyze_text(text)
        assert _diagnostics(got) == _diagnostics(fresh)
        lines = text.splitlines()
        assert _navigation(got, lines) == _navigation(fresh, lines)


def test_the_next_analysis_reuses_the_units_a_cancelled_one_built(corpus):
    text = _module(SIX)
    inc = IncrementalAnalyzer()
    stopped = inc.analyze(text, cancelled=_CancelAfter(5)) is None  # the module header and 3 entries built
    assert stopped
    edited = "// a new first line\n" + text
    got = inc.analyze(edited)
    reused, rebuilt = inc.last_stats
    assert (reused, rebuilt) == (3, 1 + 3)  # the 3 entries moved down one line; the header and 3 others built
    assert _diagnostics(got) == _diagnostics(analyze_text(edited))


def _entry_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines()) if line.lstrip().startswith("entry @")]


@pytest.mark.parametrize("edited", [0, 5])
def test_the_edited_function_is_built_and_reported_first(corpus, edited):
    """After a cancelled first analysis, the entry just edited is built before the others and the
    diagnostics known then are reported at once: its own, and those the cancelled analysis found in
    the entries not reached yet, at their new lines.  Entry 0 was built before the cancellation, entry
    5 was not; a line is inserted in it (the entries below move down)."""
    text = _module(SIX)
    lines = text.splitlines(keepends=True)
    entries = _entry_lines(text)
    # a syntax error in the second entry (built before the cancellation)
    second = entries[1] + 1
    lines[second] = lines[second].rstrip("\n") + " garbage\n"
    text = "".join(lines)
    inc = IncrementalAnalyzer()
    early: list[list] = []
    stopped = inc.analyze(text, progress=early.append, first_after=0.0, every=0.0, cancelled=_CancelAfter(4)) is None
    assert stopped
    # the user adds a line, with an unknown op, in the edited entry, above its last line
    end = next(n for n in range(entries[edited], len(lines)) if lines[n] == "  }\n")
    lines.insert(end - 1, "    cuda_tile.not_an_op\n")
    edited_text = "".join(lines)
    reports: list[tuple] = []
    check = _CancelAfter(None)

    def report(diagnostics: list) -> None:
        reports.append((check.calls, diagnostics))

    inc.analyze(edited_text, progress=report, first_after=60.0, every=60.0, cancelled=check)
    assert inc.complete
    final = _diagnostics(inc.analyze(edited_text))
    assert final == _diagnostics(analyze_text(edited_text))
    assert len(final) >= 2
    calls, first = reports[0]
    # reported after the module header and the edited entry: before any other entry was looked at
    assert calls == 2
    as_tuples = [(d.message, d.range.start.line, d.range.start.character) for d in first]
    expected = [(m, r[0], r[1]) for _, m, _, r, _ in final]
    assert as_tuples == expected  # the edited entry's error and the second entry's, where they are now


def test_an_undefined_location_alias_of_a_reused_entry_is_still_reported_where_it_now_is():
    text = "cuda_tile.module @m {\n  entry @a() {\n    return\n  }\n  entry @b() {\n    return loc(#nope)\n  }\n}\n"
    inc = IncrementalAnalyzer()
    versions = [text,
                text.replace("entry @a() {\n", "entry @a() {\n\n"),  # a line inserted above entry @b
                "#nope = loc(\"k.py\":1:1)\n" + text,  # the alias defined: the error goes
                text]
    for version in versions:
        got = _diagnostics(inc.analyze(version))
        assert got == _diagnostics(analyze_text(version))
        assert len(got) == (0 if version.startswith("#nope") else 1)
    inc.analyze(versions[1])
    assert inc.last_stats[0] >= 1  # entry @b reused, its error found again


def _broken_header(text: str) -> str:
    """``text`` with a line break inside the argument list of its third entry's header: that entry is
    then an op whose uses wait in the module body's scope (MLIR then finds the later entries' region
    arguments "already in use")."""
    line = _entry_lines(text)[2]
    lines = text.splitlines(keepends=True)
    cut = lines[line].index("%arg1")
    lines[line] = lines[line][:cut] + "\n%" + lines[line][cut:]
    return "".join(lines)


def test_units_after_one_that_fills_the_body_scope_are_built_again():
    text = _module(SIX)
    inc = IncrementalAnalyzer()
    inc.analyze(text)
    broken = _broken_header(text)
    got = _diagnostics(inc.analyze(broken))
    fresh = _diagnostics(analyze_text(broken))
    assert got == fresh
    assert any("is already in use" in d[1] for d in fresh)


def test_the_edited_function_first_falls_back_to_the_order_when_a_unit_fills_the_body_scope():
    text = _module(SIX)
    inc = IncrementalAnalyzer()
    stopped = inc.analyze(text, cancelled=_CancelAfter(3)) is None
    assert stopped
    broken = _broken_header(text)
    stopped = inc.analyze(broken, cancelled=_CancelAfter(3)) is None
    assert stopped
    # then a letter typed in the last entry: built first, until the broken entry shows the order matters
    last = _entry_lines(broken)[-1] + 1
    lines = broken.splitlines(keepends=True)
    lines[last] = lines[last].replace("%", "%q", 1)
    edited = "".join(lines)
    reports: list = []
    got = _diagnostics(inc.analyze(edited, progress=reports.append, first_after=60.0, every=60.0))
    assert reports  # the edited entry was built first and reported
    assert got == _diagnostics(analyze_text(edited))


def test_a_function_after_a_unit_that_left_names_is_built_whole(corpus):
    """A broken entry header leaves values and forward references in the module body's scope.  The
    entries after it are then built whole, as ``Builder.region`` builds them (names outside stay
    visible, so redefining one is an error), not statement by statement in a scope of their own:
    incremental, fresh and entry-whole analyses agree (a case Hypothesis found)."""
    text = _module(list(KERNELS[:2]))
    statement = "%4 = mulf %bcast_6, %3  : tile<256xf32>"
    assert text.count("optimization_hints=") >= 2 and statement in text
    broken = text.replace("optimization_hints=", "optimxization_hints=", 1).replace(
        statement, statement.replace("  :", "\n  :"), 1)
    inc = IncrementalAnalyzer()
    inc.analyze(text)
    got = _diagnostics(inc.analyze(broken))
    assert got == _diagnostics(analyze_text(broken)) == _diagnostics(_entry_whole(broken))
    second_entry = _entry_lines(broken)[1]
    assert any("redefinition of SSA value" in d[1] and d[3][0] > second_entry for d in got)


_TEXT = st.text(alphabet="ab\n", max_size=1500)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, cut=st.tuples(st.integers(0, 1500), st.integers(0, 1500)), typed=st.text(alphabet="ab\n", max_size=4))
def test_the_edited_span_is_the_common_prefix_and_suffix(text, cut, typed):
    """The prefix and suffix that an edit left alone, found block by block (blocks growing and shrinking),
    are those a character-by-character comparison finds, on texts longer than several blocks."""
    p, q = sorted(min(c, len(text)) for c in cut)
    new = text[:p] + typed + text[q:]
    prefix = 0
    while prefix < min(len(text), len(new)) and text[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(text), len(new)) - prefix and text[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    assert L._common_prefix(text, new) == prefix
    assert L._common_suffix(text, new, prefix) == suffix


def test_an_analysis_leaves_no_cycle_holding_the_previous_version():
    """Reference counting alone frees what an edit's analysis no longer needs (the server collects only
    when idle): no run of the analysis survives it, and so neither the texts nor the states it held."""
    import gc

    from tile_lsp.analysis.incremental.units import _ChunkRun

    text = _module(list(KERNELS))
    edited = text.replace("%0 =", "%0  =", 1)
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        analyzer = IncrementalAnalyzer()
        analyzer.analyze(text)
        analyzer.analyze(edited)
        assert analyzer.last_stats[0] > 0  # the edit was analysed incrementally
        assert not [o for o in gc.get_objects() if isinstance(o, _ChunkRun)]
    finally:
        if was:
            gc.enable()
