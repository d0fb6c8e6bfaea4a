"""What a text says of how to analyse it: written for MLIR tools
(:func:`tile_lsp.analysis.verify.rules.target.is_mlir_tool_input`: whether the editor's own checks, the
missing-prefix hint among them, apply), and split at ``// -----``; and both kept across edits
(:func:`tile_lsp.analysis.incremental.marks.text_marks`)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tile_lsp.analysis.incremental.marks import text_marks
from tile_lsp.analysis.ir.split import has_split_marker
from tile_lsp.analysis.verify.rules.target import is_mlir_tool_input


def _by_lines(text: str) -> bool:
    """The definition, line by line: a ``// RUN:`` or ``// -----`` line, an ``expected-*`` directive, or a
    line starting with ``cuda_tile.module`` (spaces and tabs before each allowed)."""
    if re.search(r"expected-(?:error|warning|note|remark)", text):
        return True
    for line in text.split("\n"):
        body = line.lstrip(" \t")
        if body.startswith("//"):
            rest = body[2:].lstrip(" \t")
            if rest.startswith("RUN:") or (rest.startswith("-----") and rest[5:].strip(" \t") == ""):
                return True
        if re.match(r"cuda_tile\.module\b", body):
            return True
    return False


PIECES = ["// RUN: x", "// -----", "x // -----", "  //RUN:", "x // RUN:", "// -----", "//\t-----\t", "// ----- x", "// -----\r", "-----",
          "  cuda_tile.module @m {", "cuda_tile.modulex", "x cuda_tile.module", "\tcuda_tile.module{",
          "expected-error", "expected-err", "RUN:", "entry @k() {", "", " ", "\t"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8), st.sampled_from(["\n", "\r\n", " "]))
def test_is_mlir_tool_input_follows_its_definition(pieces, joint):
    text = joint.join(pieces)
    assert is_mlir_tool_input(text) == _by_lines(text)


def test_examples():
    assert is_mlir_tool_input("// RUN: cuda-tile-opt %s\n")
    assert is_mlir_tool_input("a\n  // -----  \nb")
    assert not is_mlir_tool_input("a\n  // ----- b\n")
    assert is_mlir_tool_input("entry @k() {\n}\n// expected-error@+1 {{x}}")
    assert is_mlir_tool_input("x\n\tcuda_tile.module @m {\n}")
    assert not is_mlir_tool_input("entry @k() {\n  cuda_tile.return\n}\n" * 3)
    assert not is_mlir_tool_input("module { cuda_tile.module }")


EDITS = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 12), st.sampled_from(PIECES + ["\n", "-", "/", " "])),
                 min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=10), EDITS)
def test_marks_kept_across_edits_equal_fresh_ones(pieces, edits):
    """Each edit replaces up to 12 characters at a random place with a piece (a marker's part, a line
    break...); the marks computed from the previous version's equal those of the text alone."""
    text = "\n".join(pieces)
    previous = (text, text_marks(text))
    for where, cut, piece in edits:
        at = int(where * len(text))
        text = text[:at] + piece + text[at + cut:]
        marks = text_marks(text, previous)
        assert (marks.split_marker, marks.mlir_tool_input) == (has_split_marker(text), is_mlir_tool_input(text))
        fresh = text_marks(text)
        assert (fresh.split_marker, fresh.mlir_tool_input) == (marks.split_marker, marks.mlir_tool_input)
        # a witness points into a line that has the mark
        if marks.split_at is not None:
            assert has_split_marker(_line_at(text, marks.split_at))
        if marks.tool_at is not None:
            assert is_mlir_tool_input(_line_at(text, marks.tool_at))
        previous = (text, marks)


def _line_at(text: str, at: int) -> str:
    end = text.find("\n", at)
    return text[text.rfind("\n", 0, at) + 1:len(text) if end < 0 else end]
