"""Tests of tile_lsp.analysis.verify.verify_diagnostics (mlir-opt -verify-diagnostics)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Position, Range, Severity
from tile_lsp.analysis.ir.split import split_chunks
from tile_lsp.analysis.verify.verify_diagnostics import (
    VERIFY_CODE,
    LlvmRegexError,
    check_chunks,
    compile_llvm_regex,
    llvm_regex_escape,
    parse_expectations,
    verify,
)

E, W, N, R = Severity.ERROR, Severity.WARNING, Severity.NOTE, Severity.REMARK


def diag(severity: Severity, message: str, line: int | None, col: int = 0, notes=None) -> Diagnostic:
    rng = None if line is None else Range.point(line, col)
    return Diagnostic(severity, message, rng, code="test", notes=notes or [])


def summary(failures: list[Diagnostic]) -> list[tuple]:
    """(message, start line, start col, end col) of each failure; None for no range."""
    out = []
    for f in failures:
        assert f.severity is Severity.ERROR
        assert f.code == VERIFY_CODE
        if f.range is None:
            out.append((f.message, None))
        else:
            out.append((f.message, f.range.start.line, f.range.start.character, f.range.end.character))
    return out


# ---------------------------------------------------------------------------
# Locations
# ---------------------------------------------------------------------------


def test_below_matches_substring():
    text = "// expected-error @below{{foo}}\n%0 = op\n"
    assert verify(text, [diag(E, "xx foo yy", 1, 5)]) == []


def test_wrong_line_reports_both_failures():
    text = "// expected-error @below{{foo}}\n%0 = op\n%1 = op\n"
    failures = verify(text, [diag(E, "xx foo yy", 2, 5)])
    assert summary(failures) == [
        ("unexpected error: xx foo yy", 2, 5, 5),
        # LLVM underlines from `expected-` over len(message) bytes.
        ('expected error "foo" was not produced', 0, 3, 6),
    ]


def test_same_line_directive_after_code():
    text = "%0 = op // expected-error {{bad op}}\n"
    assert verify(text, [diag(E, "a bad op here", 0, 5)]) == []
    assert summary(verify(text, [])) == [('expected error "bad op" was not produced', 0, 11, 17)]


def test_plus_and_minus_offsets():
    text = "%0 = op\n// expected-error @+2 {{two}}\n// expected-error @-1 {{zero}}\n%1 = op\n"
    assert verify(text, [diag(E, "two", 3), diag(E, "zero", 1)]) == []
    failures = verify(text, [diag(E, "two", 2), diag(E, "zero", 0)])
    assert [f[0] for f in summary(failures)] == [
        "unexpected error: two",
        "unexpected error: zero",
        'expected error "two" was not produced',
        'expected error "zero" was not produced',
    ]


def test_offset_is_read_with_auto_radix():
    # StringRef::getAsInteger(0, ...): a leading 0 means octal, so @+010 is 8.
    text = "// expected-error @+010 {{x}}\n" + "\n" * 10
    assert verify(text, [diag(E, "x", 8)]) == []
    assert [f[0] for f in summary(verify(text, [diag(E, "x", 10)]))] == [
        "unexpected error: x",
        'expected error "x" was not produced',
    ]


def test_above_skips_directive_lines():
    text = "%0 = op\n// expected-error @above {{a}}\n// expected-warning @above {{b}}\n"
    exps, errors = parse_expectations(text)
    assert errors == []
    assert [(e.severity, e.message, e.line) for e in exps] == [(E, "a", 0), (W, "b", 0)]
    assert verify(text, [diag(E, "a", 0), diag(W, "b", 0)]) == []


def test_below_applies_to_next_non_directive_line():
    text = "// expected-error @below {{a}}\n// expected-note @below {{b}}\n// expected-error {{c}}\n%0 = op\n"
    exps, _ = parse_expectations(text)
    assert [(e.message, e.line) for e in exps] == [("a", 3), ("b", 3), ("c", 2)]


def test_dangling_below_gets_last_line():
    text = "%0 = op\n// expected-error @below {{x}}\n"
    exps, _ = parse_expectations(text)
    # "a\n...\n".split("\n") has a final empty piece: LLVM's last line.
    assert exps[0].line == 2
    assert summary(verify(text, [])) == [('expected error "x" was not produced', 1, 3, 4)]


def test_unknown_location():
    text = "// expected-error @unknown {{lost}}\n%0 = op\n"
    assert verify(text, [diag(E, "we got lost", None)]) == []
    # A located diagnostic does not match @unknown, nor an unknown one a line.
    failures = verify(text, [diag(E, "lost", 0)])
    assert summary(failures) == [
        ("unexpected error: lost", 0, 0, 0),
        ('expected error "lost" was not produced', 0, 3, 7),
    ]
    failures = verify("// expected-error @below {{x}}\n%0 = op\n", [diag(E, "x", None)])
    assert summary(failures) == [
        ("unexpected error: x", None),
        ('expected error "x" was not produced', 0, 3, 4),
    ]


def test_unknown_expectations_are_reported_last():
    text = "// expected-error @unknown {{u}}\n// expected-error {{l}}\n"
    assert [f[0] for f in summary(verify(text, []))] == [
        'expected error "l" was not produced',
        'expected error "u" was not produced',
    ]


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------


def test_regex_directive():
    text = "// expected-error-re @below {{value {{[0-9]+}} is out of range}}\n%0 = op\n"
    assert verify(text, [diag(E, "op: value 42 is out of range!", 1)]) == []
    failures = verify(text, [diag(E, "value x is out of range", 1)])
    assert [f[0] for f in summary(failures)] == [
        "unexpected error: value x is out of range",
        'expected error "value {{[0-9]+}} is out of range" was not produced',
    ]


def test_regex_literal_text_is_escaped():
    text = "// expected-error-re @below {{a.b {{.}}}}\n%0 = op\n"
    assert verify(text, [diag(E, "a.b c", 1)]) == []
    assert len(verify(text, [diag(E, "axb c", 1)])) == 2


def test_regex_is_posix_not_python():
    # In LLVM's POSIX ERE "\d" is a literal "d".
    text = "// expected-error-re @below {{n={{\\d}}}}\n%0 = op\n"
    assert verify(text, [diag(E, "n=d", 1)]) == []
    assert len(verify(text, [diag(E, "n=7", 1)])) == 2


def test_empty_messages():
    # A plain {{}} matches anything; an -re {{}} is an invalid (empty) regex,
    # which llvm::Regex::match never matches.
    assert verify("// expected-error @below {{}}\n%0 = op\n", [diag(E, "anything", 1)]) == []
    failures = verify("// expected-error-re @below {{}}\n%0 = op\n", [diag(E, "anything", 1)])
    assert [f[0] for f in summary(failures)] == [
        "unexpected error: anything",
        'expected error "" was not produced',
    ]


def test_bad_regex_directives():
    text = (
        "// expected-error-re @below {{a {{[0-9}}}}\n"
        "// expected-error-re @below {{a {{b}}\n"
        "%0 = op\n"
    )
    exps, errors = parse_expectations(text)
    assert exps == []
    # The second directive's text is "a {{b": a block start without end.
    assert summary(errors) == [
        ("invalid regex: brackets ([ ]) not balanced", 0, 3, 13),
        ("found start of regex with no end '}}'", 1, 3, 8),
    ]
    assert summary(verify(text, [])) == summary(errors)


def test_message_is_everything_up_to_the_last_braces():
    exps, _ = parse_expectations("// expected-error {{a}} expected-error {{b}}\n")
    assert [e.message for e in exps] == ["a}} expected-error {{b"]


def test_not_a_directive():
    # No count form, no space inside "expected-error", braces must end the line.
    text = "// expected-error 2 {{x}}\n// expected error {{x}}\n// expected-error {{x}} trailing\n"
    assert parse_expectations(text) == ([], [])


# ---------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------


def test_severity_mismatch_is_a_near_miss():
    text = "// expected-error @below {{careful}}\n%0 = op\n"
    failures = verify(text, [diag(W, "be careful", 1, 2)])
    assert summary(failures) == [
        ("'warning' diagnostic emitted when expecting a 'error'", 0, 3, 3),
        ('expected error "careful" was not produced', 0, 3, 10),
    ]


def test_warning_remark_and_note_kinds():
    text = (
        "// expected-warning @below {{w}}\n"
        "// expected-remark @below {{r}}\n"
        "%0 = op\n"
    )
    assert verify(text, [diag(W, "w", 2), diag(R, "r", 2)]) == []
    assert [f[0] for f in summary(verify(text, []))] == [
        'expected warning "w" was not produced',
        'expected remark "r" was not produced',
    ]
    assert summary(verify("", [diag(R, "r", 0)])) == [("unexpected remark: r", 0, 0, 0)]


def test_notes_are_checked_at_their_own_location():
    text = (
        "// expected-note @below {{defined here}}\n"
        "%0 = def\n"
        "// expected-error @below {{bad use}}\n"
        "%1 = use %0\n"
    )
    note = Note("defined here", Range.point(1, 0))
    assert verify(text, [diag(E, "bad use", 3, notes=[note])]) == []
    # A note at the use's line instead does not match the expectation.
    misplaced = Note("defined here", Range.point(3, 9))
    failures = verify(text, [diag(E, "bad use", 3, notes=[misplaced])])
    assert summary(failures) == [
        ("unexpected note: defined here", 3, 9, 9),
        ('expected note "defined here" was not produced', 0, 3, 15),
    ]


def test_note_in_another_document_is_unexpected():
    note = Note("see there", Range.point(4, 2), uri="file:///elsewhere.mlir")
    failures = verify("// expected-note {{see there}}\n", [diag(E, "x", 0, notes=[note])])
    assert failures[0].message == "unexpected error: x"
    assert failures[1].message == "unexpected note: see there"
    assert failures[1].range is None
    assert failures[1].notes[0].uri == "file:///elsewhere.mlir"


def test_two_expectations_for_one_line():
    text = "// expected-error @below {{first}}\n// expected-error @below {{second}}\n%0 = op\n"
    assert verify(text, [diag(E, "second thing", 2), diag(E, "first thing", 2)]) == []
    failures = verify(text, [diag(E, "first thing", 2)])
    assert summary(failures) == [('expected error "second" was not produced', 1, 3, 9)]


def test_an_expectation_absorbs_repeated_diagnostics():
    # LLVM does not skip matched expectations: the first match takes them all.
    text = "// expected-error @below {{dup}}\n// expected-error @below {{dup}}\n%0 = op\n"
    failures = verify(text, [diag(E, "dup", 2), diag(E, "dup", 2)])
    assert summary(failures) == [('expected error "dup" was not produced', 1, 3, 6)]
    assert verify("// expected-error @below {{dup}}\n%0 = op\n", [diag(E, "dup", 1)] * 3) == []


def test_only_expected_ignores_unexpected_diagnostics():
    text = "// expected-error @below {{a}}\n%0 = op\n"
    failures = verify(text, [diag(E, "a", 1), diag(E, "other", 1), diag(W, "a", 1)], only_expected=True)
    assert failures == []
    assert [f[0] for f in summary(verify(text, [], only_expected=True))] == [
        'expected error "a" was not produced'
    ]


def test_columns_are_utf16_and_range_is_bytes_of_message():
    # "é" is 2 UTF-8 bytes: the underline covers 2 code units from "expected-".
    text = "%0 = \"\U0001F600\" // expected-error {{é}}\n"
    exps, _ = parse_expectations(text)
    assert exps[0].range == Range(Position(0, 13), Position(0, 15))
    assert verify(text, [diag(E, "é!", 0)]) == []


# ---------------------------------------------------------------------------
# Chunks
# ---------------------------------------------------------------------------


def test_line_offset_and_check_chunks():
    text = (
        "// expected-error @below {{one}}\n"
        "%0 = op\n"
        "// -----\n"
        "// expected-error @below {{two}}\n"
        "%1 = op\n"
    )
    chunks = split_chunks(text)
    assert [c.start_line for c in chunks] == [0, 3]
    ok = check_chunks(text, [(chunks[0], [diag(E, "one", 1)]), (chunks[1], [diag(E, "two", 4)])])
    assert ok == []
    failures = check_chunks(text, [(chunks[0], [diag(E, "one", 1)]), (chunks[1], [diag(E, "two", 3)])])
    assert summary(failures) == [
        ("unexpected error: two", 3, 0, 0),
        ('expected error "two" was not produced', 3, 3, 6),
    ]


def test_above_at_chunk_start_refers_to_marker_line():
    # MLIR's chunk buffer starts with the rest of the "// -----" line.
    text = "%0 = op\n// -----\n// expected-error @above {{x}}\n"
    chunk = split_chunks(text)[1]
    exps, _ = parse_expectations(chunk.text, line_offset=chunk.start_line)
    assert exps[0].line == 1
    exps, _ = parse_expectations("// expected-error @above {{x}}\n")
    assert exps[0].line == 0


# ---------------------------------------------------------------------------
# LLVM regex dialect
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "error"),
    [
        ("", "empty (sub)expression"),
        ("a|", "empty (sub)expression"),
        ("a{0}", "empty (sub)expression"),
        ("(a", "parentheses not balanced"),
        ("a)", "parentheses not balanced"),
        ("[a", "brackets ([ ]) not balanced"),
        ("[[:nope:]]", "invalid character class"),
        ("a**", "repetition-operator operand invalid"),
        ("a*?", "repetition-operator operand invalid"),
        ("*a", "repetition-operator operand invalid"),
        ("{1}", "repetition-operator operand invalid"),
        ("a{2,1}", "invalid repetition count(s)"),
        ("a{256}", "invalid repetition count(s)"),
        ("a{2", "braces not balanced"),
        ("[z-a]", "invalid character range"),
        ("(a)\\2", "invalid backreference number"),
        ("a\\", "trailing backslash (\\)"),
        ("[[.nope.]]", "invalid collating element"),
    ],
)
def test_llvm_regex_errors(pattern, error):
    with pytest.raises(LlvmRegexError) as info:
        compile_llvm_regex(pattern)
    assert str(info.value) == error


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("[0-9]+", "abc 123", True),
        ("^abc$", "abc", True),
        ("^b", "abc", False),
        ("a{,2}", "a{,2}", True),  # '{' not followed by a digit is literal
        ("[[:alpha:]]+[[:digit:]]", "xy7", True),
        ("[]a]", "]", True),
        ("[^a]", "\n", True),
        ("a.c", "a\nc", True),  # '.' matches newline (no REG_NEWLINE)
        ("a.c", "aéc", False),  # ... but only one byte
        ("a..c", "aéc", True),
        ("(ab)\\1", "abab", True),
        ("[[:<:]]bar", "foo bar", True),
        ("[[:<:]]bar", "foobar", False),
        ("[[.comma.]]", ",", True),
    ],
)
def test_llvm_regex_matching(pattern, text, found):
    assert (compile_llvm_regex(pattern).search(text.encode()) is not None) is found


@given(st.text())
def test_escaped_text_matches_itself(text):
    pattern = compile_llvm_regex(llvm_regex_escape(text)) if text else None
    if pattern is not None:
        assert pattern.search(text.encode("utf-8", "surrogatepass")) is not None


@given(
    st.text(alphabet=st.characters(blacklist_characters="\n\r{}", blacklist_categories=("Cs",)), min_size=1),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
)
def test_plain_directive_matches_any_message_containing_it(expected, padding):
    text = "// expected-error @below {{" + expected + "}}\n%0 = op\n"
    message = padding + expected + padding
    assert verify(text, [diag(E, message, 1)]) == []
