"""Which texts are written for MLIR tools (:func:`tile_lsp.analysis.verify.rules.target.is_mlir_tool_input`):
what decides whether the editor's own checks (the missing-prefix hint among them) apply."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

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


PIECES = ["// RUN: x", "  //RUN:", "x // RUN:", "// -----", "//\t-----\t", "// ----- x", "// -----\r", "-----",
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
