"""Code actions (tile_lsp.analysis.ide.code_actions): expected-* checks and quick fixes, applied and re-checked."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ide.code_actions import (
    TITLE_ADD_CHECKS,
    TITLE_UPDATE_CHECKS,
    check_actions,
    code_actions,
    edit_distance,
    nearest_powers_of_two,
    quick_fixes,
    similar_op_names,
)
from tile_lsp.analysis.ir.diagnostics import Position, Range, SourceText
from tile_lsp.analysis.verify.rules.target import is_mlir_tool_input
from tile_lsp.analysis.ir.split import has_split_marker
from tile_lsp.analysis.verify.verify_diagnostics import verify

WHOLE = Range(Position(0, 0), Position(10**6, 0))


def apply(text: str, edits) -> str:
    """``text`` with non-overlapping ``edits`` applied (as an LSP client applies a WorkspaceEdit)."""
    source = SourceText(text)
    spans = sorted((source.offset(e.range.start), source.offset(e.range.end), e.new_text) for e in edits)
    out, last = [], 0
    for start, end, new in spans:
        assert start >= last, "overlapping edits"
        out += [text[last:start], new]
        last = end
    return "".join(out + [text[last:]])


def editor_options(text: str, **kw) -> AnalysisOptions:
    """The options the language server analyses ``text`` with."""
    return AnalysisOptions(split_input_file=has_split_marker(text), editor_checks=True,
                           mlir_tool_input=is_mlir_tool_input(text), **kw)


def analyse(text: str, **kw):
    return analyze_text(text, editor_options(text, **kw))


def verify_failures(text: str) -> list[str]:
    """What ``tile-lsp --check --verify-diagnostics`` reports for ``text``, chunk by chunk."""
    analysis = analyze_text(text, AnalysisOptions(split_input_file=has_split_marker(text), mlir_compat=True))
    out = []
    for c in analysis.chunks:
        out += [d.message for d in verify(c.chunk.text, c.diagnostics, line_offset=c.chunk.start_line)]
    return out


def _action(actions, title: str):
    found = [a for a in actions if a.title == title]
    assert len(found) == 1, [a.title for a in actions]
    return found[0]


def _keys(diagnostics) -> set:
    return {(d.message, d.range) for d in diagnostics}


SPLIT = """\
// RUN: cuda-tile-opt %s -verify-diagnostics -split-input-file
cuda_tile.module @a {
  entry @k() {
    %0 = constant <f32: 1.0> : tile<4xf32>
    %1 = addi %0, %0 : tile<4xf32>
    return
  }
}

// -----

cuda_tile.module @b {
  entry @k() {
    %0 = constant <i32: 1> : tile<3xi32>
    return
  }
}
"""


def test_add_checks_writes_mlir_directives_above_the_ops():
    analysis = analyse(SPLIT)
    action = _action(check_actions(analysis, WHOLE), TITLE_ADD_CHECKS)
    new = apply(SPLIT, action.edits)
    assert new.split("\n")[4] == ("    // expected-error @below {{'cuda_tile.addi' op operand #0 must be tile of i1 "
                                  "or i8 or i16 or i32 or i64 values, but got '!cuda_tile.tile<4xf32>'}}")
    assert new.split("\n")[14] == ("    // expected-error @below {{custom op 'cuda_tile.constant' all dimensions "
                                   "must be powers of two, got 3}}")
    assert verify_failures(SPLIT) != [] and verify_failures(new) == []
    # nothing left to add; the checks pass, so no update either
    assert check_actions(analyse(new), WHOLE) == []


def test_add_checks_only_for_the_chunks_in_the_range():
    analysis = analyse(SPLIT)
    action = _action(check_actions(analysis, Range(Position(13, 0), Position(13, 5))), TITLE_ADD_CHECKS)
    assert [e.range.start.line for e in action.edits] == [13]
    # a line without diagnostic nor directive: nothing (and no -verify-diagnostics run)
    assert check_actions(analysis, Range(Position(14, 0), Position(14, 5))) == []
    assert len(verify_failures(apply(SPLIT, action.edits))) == 1  # the first chunk is still unchecked


def test_round_trip_through_the_command_line(tmp_path):
    new = apply(SPLIT, _action(check_actions(analyse(SPLIT), WHOLE), TITLE_ADD_CHECKS).edits)
    path = tmp_path / "checked.mlir"
    path.write_text(new)
    done = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "--verify-diagnostics", "--split-input-file",
                           "--check", str(path)], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verify-diagnostics: 2/2 chunks pass" in done.stdout


def test_update_checks_rewrites_stale_directives():
    stale = SPLIT.replace("    %1 = addi", "    // expected-error @+1 {{something else}}\n    %1 = addi") \
                 .replace("tile<3xi32>\n", "tile<3xi32> // expected-error {{wrong}}\n")
    assert len(verify_failures(stale)) == 4
    actions = check_actions(analyse(stale), WHOLE)
    update = _action(actions, TITLE_UPDATE_CHECKS)
    new = apply(stale, update.edits)
    assert new == apply(SPLIT, _action(check_actions(analyse(SPLIT), WHOLE), TITLE_ADD_CHECKS).edits)
    assert verify_failures(new) == []


@pytest.mark.parametrize("name", ["permute_invalid.mlir", "get_shape_invalid.mlir", "memory_consistency_ops_invalid.mlir"])
def test_checks_of_nvidia_invalid_tests_round_trip(corpus, name):
    """NVIDIA's invalid dialect tests, their directives stripped, then checked again by the action."""
    text = (corpus / "conformance" / "Dialect" / "CudaTile" / name).read_text()
    analysis = analyse(text)
    stripped = apply(text, _action(check_actions(analysis, WHOLE), TITLE_UPDATE_CHECKS).edits) \
        if verify_failures(text) else text
    bare = "".join(line for line in stripped.splitlines(keepends=True) if "expected-" not in line)
    assert "expected-" not in bare
    added = apply(bare, _action(check_actions(analyse(bare), WHOLE), TITLE_ADD_CHECKS).edits)
    assert verify_failures(added) == []
    assert added.count("expected-") >= text.count("expected-error")


def test_missing_prefix_fix():
    text = "// RUN: cuda-tile-opt %s\nentry @k() {\n  return\n}\nentry @j() {\n  return\n}\n"
    analysis = analyse(text)
    hints = [d for d in analysis.diagnostics if d.code == "cuda_tile.entry.missing-prefix"]
    assert [(d.severity.value, d.message, d.range.start.line) for d in hints] == [
        ("remark", "'entry' outside a cuda_tile op is read by MLIR as 'builtin.entry'; write 'cuda_tile.entry'", 1),
        ("remark", "'entry' outside a cuda_tile op is read by MLIR as 'builtin.entry'; write 'cuda_tile.entry'", 4)]
    fixes = quick_fixes(analysis, Range(Position(1, 0), Position(1, 3)))
    assert [f.title for f in fixes] == ["Add the 'cuda_tile.' prefix",
                                        "Add the 'cuda_tile.' prefix to every top-level op"]
    one = apply(text, fixes[0].edits)
    assert one.split("\n")[1] == "cuda_tile.entry @k() {"
    assert _keys(fixes[0].diagnostics) == _keys(hints[:1])
    assert _keys(analyse(one).diagnostics) == _keys(hints[1:])
    every = apply(text, fixes[1].edits)
    assert analyse(every).diagnostics == []
    # tileirdisasm's bare form (no RUN line, no split marker, no expected-*) is not flagged
    assert analyse(text.split("\n", 1)[1]).diagnostics == []


POW2 = "cuda_tile.module @m {\n  entry @k() {\n    %0 = constant <f32: 1.0> : tile<3x6xf32>\n    return\n  }\n}\n"


def test_power_of_two_fixes():
    analysis = analyse(POW2)
    [diag] = analysis.diagnostics
    assert diag.message == "custom op 'cuda_tile.constant' all dimensions must be powers of two, got 3, 6"
    assert quick_fixes(analysis, Range(Position(2, 0), Position(2, 0))) == []
    # the client's diagnostic, sent with a request elsewhere on the line
    assert len(quick_fixes(analysis, Range(Position(2, 0), Position(2, 0)), {(diag.message, diag.range)})) == 2
    fixes = quick_fixes(analysis, Range(Position(2, 35), Position(2, 35)))
    assert [(f.title, f.preferred) for f in fixes] == [
        ("Change the shape 3x6 to 4x8 (nearest powers of two)", True),
        ("Change the shape 3x6 to 2x4 (rounded down)", False)]
    for fix in fixes:
        assert list(fix.diagnostics) == [diag]
        assert analyse(apply(POW2, fix.edits)).diagnostics == []
    assert "tile<4x8xf32>" in apply(POW2, fixes[0].edits)


def test_power_of_two_fix_of_a_partition_view():
    text = ("cuda_tile.module @m {\n  entry @k(%t: !cuda_tile.tensor_view<128x128xf32, strides=[128,1]>) {\n"
            "    %v = make_partition_view %t : partition_view<tile=(3x8), tensor_view<128x128xf32, strides=[128,1]>>\n"
            "    return\n  }\n}\n")
    analysis = analyse(text)
    assert [d.message for d in analysis.diagnostics] == [
        "custom op 'cuda_tile.make_partition_view' tile shape dimensions must have power of two length but got [3, 8]"]
    fixes = quick_fixes(analysis, WHOLE)
    assert [f.title for f in fixes] == ["Change the shape 3x8 to 4x8 (nearest powers of two)",
                                        "Change the shape 3x8 to 2x8 (rounded down)"]
    fixed = apply(text, fixes[0].edits)
    assert "partition_view<tile=(4x8), tensor_view" in fixed
    assert analyse(fixed).diagnostics == []


def test_did_you_mean_fixes():
    text = ("cuda_tile.module @m {\n  entry @k() {\n    %0 = constant <f32: 1.0> : tile<4xf32>\n"
            "    %1 = mulff %0, %0 : tile<4xf32>\n    %2 = cuda_tile.subff %0, %0 : tile<4xf32>\n    return\n  }\n}\n")
    analysis = analyse(text)
    # cuda-tile-opt's messages; the second typo is another statement's, a real independent error
    assert [(d.message, d.range.start.line) for d in analysis.diagnostics] == [
        ("custom op 'mulff' is unknown (tried 'cuda_tile.mulff' as well)", 3),
        ("custom op 'cuda_tile.subff' is unknown", 4)]
    first = quick_fixes(analysis, Range(Position(3, 0), Position(3, 30)))
    assert [(f.title, f.preferred) for f in first] == [("Did you mean 'mulf'?", True), ("Did you mean 'muli'?", False)]
    second = quick_fixes(analysis, Range(Position(4, 0), Position(4, 30)))
    assert [f.title for f in second][:2] == ["Did you mean 'cuda_tile.subf'?", "Did you mean 'cuda_tile.subi'?"]
    fixed = apply(apply(text, first[0].edits), [])
    fixed = apply(fixed, quick_fixes(analyse(fixed), Range(Position(4, 0), Position(4, 30)))[0].edits)
    assert "    %1 = mulf %0, %0" in fixed and "    %2 = cuda_tile.subf %0, %0" in fixed
    assert analyse(fixed).diagnostics == []


NV = '%x = "nv_tileas.create_none"() : () -> !nv_tileas.none\n'


@pytest.mark.parametrize("text, expected", [
    (NV, 'module attributes {nv_tileaa.compute_capability = 100 : i32} {\n' + NV + '}\n'),
    ("module {\n  " + NV + "}\n",
     "module attributes {nv_tileaa.compute_capability = 100 : i32} {\n  " + NV + "}\n"),
    ("module attributes {foo.x = 1 : i32} {\n  " + NV + "}\n",
     "module attributes {nv_tileaa.compute_capability = 100 : i32, foo.x = 1 : i32} {\n  " + NV + "}\n"),
])
def test_missing_compute_capability_fix(text: str, expected: str):
    analysis = analyse(text)
    assert [(d.severity.value, d.message) for d in analysis.diagnostics] == [
        ("warning", "Failed to get ComputeCapability")]
    fixes = quick_fixes(analysis, WHOLE)
    assert [f.title for f in fixes] == [
        f"Target sm_{sm}: add nv_tileaa.compute_capability = {sm} : i32 to the module"
        for sm in (120, 103, 100, 90, 89, 80, 70)]
    fixed = apply(text, fixes[2].edits)
    assert fixed == expected
    assert analyse(fixed).diagnostics == []
    # the targetGpu setting stands for the attribute; off the editor nothing is checked
    assert analyse(text, target_sm=90).diagnostics == []
    assert analyze_text(text).diagnostics == []


def test_kernel_parameter_space_with_a_target():
    args = ", ".join(f"%a{i}: tile<ptr<f32>>" for i in range(600))
    text = "cuda_tile.entry @k(" + args + ") {\n  cuda_tile.return\n}\n"
    assert analyse(text).diagnostics == []
    assert [d.message for d in analyse(text, target_sm=80).diagnostics] == [
        "Formal parameter space overflowed (4800 bytes required, max 4096 bytes allowed) in function k for sm_80"]
    assert analyse(text, target_sm=90).diagnostics == []
    # the command line checks it when given a target only
    assert [d.code for d in analyze_text(text, AnalysisOptions(target_sm=80)).diagnostics] == [
        "cuda_tile.entry.param-space"]
    assert analyze_text(text, AnalysisOptions(target_sm=80, mlir_compat=True)).diagnostics == []


def test_helpers():
    assert edit_distance("mulff", "mulf") == 1 and edit_distance("kitten", "sitting") == 3
    assert similar_op_names("mulff") == ["mulf", "muli"]
    assert similar_op_names("cuda_tile.subff")[:2] == ["cuda_tile.subf", "cuda_tile.subi"]
    assert similar_op_names("zzzzzz") == []
    assert [nearest_powers_of_two(d) for d in (1, 3, 4, 6, 100)] == [(1, 1), (2, 4), (4, 4), (4, 8), (64, 128)]


def test_no_action_on_a_clean_document():
    text = "cuda_tile.module @m {\n  entry @k() {\n    return\n  }\n}\n"
    assert code_actions(analyse(text), WHOLE) == []
