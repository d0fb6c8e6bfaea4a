"""Tests of tile_lsp.report (output formats of tile-lsp --check)."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Position, Range, Severity, SourceText
from tile_lsp.report import (
    SARIF_SCHEMA,
    count_diagnostics,
    escape_github_data,
    escape_github_property,
    format_github,
    format_json,
    format_sarif,
    format_summary,
    format_text,
)

SOURCE = SourceText(
    'cuda_tile.module @m {\n'
    '  %0 = constant <i32: 1> : tile<i32>\n'
    '  %1 = "é" %0 : x\n'
    '\t%2 = addi %0, %9\n'
)


def rng(line: int, start: int, end: int | None = None) -> Range:
    return Range(Position(line, start), Position(line, start if end is None else end))


def sample() -> list[Diagnostic]:
    """Two diagnostics in position order (the reports keep the order they are given)."""
    return [
        Diagnostic(Severity.WARNING, "unused value", rng(1, 2, 4), code="lint.unused"),
        Diagnostic(
            Severity.ERROR,
            "use of undeclared SSA value name",
            rng(3, 15, 17),
            code="structure.undefined-value",
            notes=[Note("value defined here", rng(1, 2, 4))],
        ),
    ]


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------


def test_text_in_analysis_order_with_source_and_caret():
    # the analysis gives MLIR's order (parse phase first), which the report keeps: not by position
    out = format_text([("t.mlir", SOURCE, list(reversed(sample())))])
    assert out == (
        "t.mlir:4:16: error: use of undeclared SSA value name\n"
        "        %2 = addi %0, %9\n"  # the tab expands to 8 columns
        "                      ^\n"
        "t.mlir:2:3: note: value defined here\n"
        "  %0 = constant <i32: 1> : tile<i32>\n"
        "  ^\n"
        "t.mlir:2:3: warning: unused value\n"
        "  %0 = constant <i32: 1> : tile<i32>\n"
        "  ^\n"
    )


def test_text_caret_under_non_ascii_line():
    # "é" is two bytes: the column is 13 (bytes) but the caret sits under "%0".
    diag = Diagnostic(Severity.ERROR, "bad operand", rng(2, 11), code="x")
    out = format_text([("t.mlir", SOURCE, [diag])])
    assert out == (
        "t.mlir:3:13: error: bad operand\n"
        '  %1 = "é" %0 : x\n'
        "           ^\n"
    )
    # LLVM prints no caret line under a line with non-ASCII bytes.
    assert format_text([("t.mlir", SOURCE, [diag])], mlir_exact=True) == (
        "t.mlir:3:13: error: bad operand\n"
        '  %1 = "é" %0 : x\n'
    )


def test_text_caret_after_wide_characters():
    source = SourceText('%s = "漢字" x\n')
    diag = Diagnostic(Severity.ERROR, "here", rng(0, 10), code="x")
    assert format_text([("w.mlir", source, [diag])]) == (
        "w.mlir:1:15: error: here\n"
        '%s = "漢字" x\n'
        "            ^\n"
    )


def test_text_ranges_and_end_of_line():
    diag = Diagnostic(Severity.ERROR, "bad type", rng(1, 28, 37), code="x")
    assert format_text([("t.mlir", SOURCE, [diag])], show_ranges=True) == (
        "t.mlir:2:29: error: bad type\n"
        "  %0 = constant <i32: 1> : tile<i32>\n"
        "                            ^~~~~~~~\n"
    )
    # A column past the end of the line puts the caret just after the line.
    diag = Diagnostic(Severity.ERROR, "eol", rng(0, 21), code="x")
    assert format_text([("t.mlir", SOURCE, [diag])]).splitlines()[1:] == [
        "cuda_tile.module @m {",
        "                     ^",
    ]


def test_text_unknown_location_and_notes():
    diag = Diagnostic(
        Severity.ERROR,
        "failed",
        None,
        notes=[
            Note("unknown", None),
            Note("first", rng(1, 2)),
            Note("again", rng(1, 2)),  # same location as the previous note
            Note("elsewhere", rng(0, 4), uri="file:///src/other.mlir"),
        ],
    )
    assert format_text([("t.mlir", SOURCE, [diag])]) == (
        "<unknown>:0: error: failed\n"
        "<unknown>:0: note: unknown\n"
        "t.mlir:2:3: note: first\n"
        "  %0 = constant <i32: 1> : tile<i32>\n"
        "  ^\n"
        "t.mlir:2:3: note: again\n"
        "/src/other.mlir:1:5: note: elsewhere\n"
    )


def test_text_summary():
    entries = [("t.mlir", SOURCE, sample()), ("u.mlir", SourceText(""), [])]
    assert count_diagnostics(entries) == (1, 1, 1)
    out = format_text(entries, files_checked=2)
    assert out.endswith("\n1 error, 1 warning in 1 file (2 files checked)\n")
    assert format_text([("u.mlir", SourceText(""), [])], files_checked=1) == (
        "0 errors, 0 warnings in 0 files (1 file checked)\n"
    )
    assert format_summary(3, 1, 2, 5) == "3 errors, 1 warning in 2 files (5 files checked)"


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------


def test_json_fields():
    data = json.loads(format_json([("t.mlir", SOURCE, sample())]))
    assert data == [
        {
            "file": "t.mlir",
            "line": 2,
            "column": 3,
            "endLine": 2,
            "endColumn": 5,
            "severity": "warning",
            "message": "unused value",
            "code": "lint.unused",
            "source": "tile-lsp",
            "notes": [],
        },
        {
            "file": "t.mlir",
            "line": 4,
            "column": 16,
            "endLine": 4,
            "endColumn": 18,
            "severity": "error",
            "message": "use of undeclared SSA value name",
            "code": "structure.undefined-value",
            "source": "tile-lsp",
            "notes": [{"file": "t.mlir", "line": 2, "column": 3, "message": "value defined here"}],
        },
    ]


def test_json_byte_columns_and_unknown_location():
    diags = [
        Diagnostic(Severity.NOTE, "nowhere", None),
        Diagnostic(Severity.REMARK, "after é", rng(2, 11, 13)),
    ]
    data = json.loads(format_json([("t.mlir", SOURCE, diags)]))
    assert [(d["severity"], d["line"], d["column"], d["endColumn"]) for d in data] == [
        ("note", None, None, None),
        ("remark", 3, 13, 15),
    ]
    assert "after é" in format_json([("t.mlir", SOURCE, diags)])  # not \u-escaped


# ---------------------------------------------------------------------------
# GitHub
# ---------------------------------------------------------------------------


def test_github_commands():
    out = format_github([("dir/t,1.mlir", SOURCE, sample())])
    assert out == (
        "::warning file=dir/t%2C1.mlir,line=2,col=3,endLine=2,endColumn=5,title=lint.unused::unused value\n"
        "::error file=dir/t%2C1.mlir,line=4,col=16,endLine=4,endColumn=18,"
        "title=structure.undefined-value::use of undeclared SSA value name"
        "%0Adir/t,1.mlir:2:3: note: value defined here\n"
    )


def test_github_escaping_and_notice():
    diags = [
        Diagnostic(Severity.REMARK, "100% done\r\nok: a,b", None, code="a:b,c"),
        Diagnostic(Severity.NOTE, "n", rng(0, 0)),
    ]
    assert format_github([("C:\\x.mlir", SOURCE, diags)]) == (
        "::notice file=C%3A\\x.mlir,title=a%3Ab%2Cc::100%25 done%0D%0Aok: a,b\n"
        "::notice file=C%3A\\x.mlir,line=1,col=1,endLine=1,endColumn=1::n\n"
    )


_UNESCAPES = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def _unescape(text: str) -> str:
    return re.sub("%25|%0D|%0A|%3A|%2C", lambda m: _UNESCAPES[m.group()], text)


@given(st.text())
def test_github_escaping_round_trips(text):
    data = escape_github_data(text)
    prop = escape_github_property(text)
    assert _unescape(data) == text
    assert _unescape(prop) == text
    assert "\n" not in data and "\r" not in data
    assert not set(":,\r\n") & set(prop)


# ---------------------------------------------------------------------------
# SARIF
# ---------------------------------------------------------------------------


def test_sarif_structure():
    extra = Diagnostic(Severity.REMARK, "fyi", None, code="lint.unused")
    log = json.loads(format_sarif([("dir/t.mlir", SOURCE, [extra] + sample())], tool_version="0.1"))
    assert log["$schema"] == SARIF_SCHEMA
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    assert run["tool"]["driver"] == {
        "name": "tile-lsp",
        "version": "0.1",
        "rules": [{"id": "lint.unused"}, {"id": "structure.undefined-value"}],
    }
    unknown, warning, error = run["results"]
    assert unknown == {
        "ruleId": "lint.unused",
        "ruleIndex": 0,
        "level": "note",
        "message": {"text": "fyi"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "dir/t.mlir"}}}],
    }
    assert warning["level"] == "warning"
    assert error == {
        "ruleId": "structure.undefined-value",
        "ruleIndex": 1,
        "level": "error",
        "message": {"text": "use of undeclared SSA value name"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": "dir/t.mlir"},
                    "region": {"startLine": 4, "startColumn": 16, "endLine": 4, "endColumn": 18},
                }
            }
        ],
        "relatedLocations": [
            {
                "id": 0,
                "message": {"text": "value defined here"},
                "physicalLocation": {
                    "artifactLocation": {"uri": "dir/t.mlir"},
                    "region": {"startLine": 2, "startColumn": 3, "endLine": 2, "endColumn": 5},
                },
            }
        ],
    }


def test_sarif_uri_is_percent_encoded_and_empty_code_uses_source():
    diag = Diagnostic(Severity.ERROR, "x", rng(0, 0))
    log = json.loads(format_sarif([("my dir/a b.mlir", SOURCE, [diag])]))
    result = log["runs"][0]["results"][0]
    assert result["ruleId"] == "tile-lsp"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "my%20dir/a%20b.mlir"


def test_empty_outputs():
    assert format_text([]) == ""
    assert format_github([]) == ""
    assert json.loads(format_json([])) == []
    assert json.loads(format_sarif([]))["runs"][0]["results"] == []
