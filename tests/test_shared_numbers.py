"""The shared integers of line numbers and statement offsets (:func:`tile_lsp.analysis.ir.diagnostics.numbers`):
shared where the list reaches, plain integers past its bound, the same values either way."""

from __future__ import annotations

from tile_lsp.analysis.incremental import layout as L
from tile_lsp.analysis.ir import diagnostics as D


def test_ranges_of_one_line_share_its_number():
    text = "x\n" * 3000 + "abc def\n"
    source = D.SourceText(text)
    a, b = source.range(6000, 6001), source.range(6004, 6007)
    assert (a.start.line, b.end.line) == (3000, 3000)
    assert a.start.line is b.start.line is source.position(6002).line


def test_past_the_bound_values_are_plain_integers(monkeypatch):
    """With the shared list at its bound, longer texts still get their line numbers and containers
    their line lists, and a long function its statements' offsets."""
    monkeypatch.setattr(D, "NUMBERS_MAX", len(D.numbers(0)))
    limit = len(D.numbers(0))
    assert len(D.numbers(limit + 10)) == limit  # not grown
    assert L._counting(limit + 10) == list(range(limit + 10))
    text = "x\n" * (limit + 5) + "abc\n"
    source = D.SourceText(text)
    assert source.range(2 * (limit + 5), 2 * (limit + 5) + 3).start.line == limit + 5
    assert source.position(2 * (limit + 5) + 1).line == limit + 5
    body = "".join(f"  %v{i} = constant <i32: {i}> : tile<i32>\n" for i in range(2000))
    long_function = "entry @k() {\n" + body + "  return\n}\n"
    assert len(long_function) > L._SHARED_OFFSETS
    (unit,) = L.split_units(long_function + long_function.replace("@k", "@j"))[:1]
    starts = [c.start for c in unit.children]
    assert starts[:2] == [long_function.index("  %v0"), long_function.index("  %v1 ")] and len(starts) == 2001
