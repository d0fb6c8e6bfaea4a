"""Names MLIR's parser looks up: op names, cuda_tile type mnemonics and keywords.

Each case misspells one name in a small valid module; the expected first error (1-based line
and column, message word for word) is what ``cuda-tile-opt -allow-unregistered-dialect`` prints
for it (run once by hand on these texts).  The rules: MLIR ``OperationParser::
parseCustomOperation`` (mlir/lib/AsmParser/Parser.cpp) for op names and their default dialect,
NVIDIA ``parseCudaTileType`` and the view types' parsers (lib/Dialect/CudaTile/IR/Types.cpp) for
types, MLIR ``AsmParser::parseKeyword`` for keywords.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Severity

BASE = 'cuda_tile.module @m {\n  entry @f(%a: tile<i32>, %p: tile<ptr<f32>>, %n: tile<i32>) {\n    %0 = make_token : token\n    %t = iota : tile<8xi32>\n    %1 = negi %a : tile<i32>\n    %v = make_tensor_view %p, shape = [%n], strides = [%n] : tile<i32> -> tensor_view<?xf32, strides=[?]>\n    %pv = make_partition_view %v : partition_view<tile=(16), tensor_view<?xf32, strides=[?]>>\n    %s = reduce %t dim=0 identities=[0 : i32] : tile<8xi32> -> tile<i32>\n    (%x: tile<i32>, %y: tile<i32>) {\n      %z = addi %x, %y : tile<i32>\n      yield %z : tile<i32>\n    }\n    return\n  }\n}\n'

CASES = [
    ('unprefixed_in_function', '%1 = negi %a', '%1 = negx %a', 5, 10,
     "custom op 'negx' is unknown (tried 'cuda_tile.negx' as well)"),
    ('prefixed_cuda_tile', '%1 = negi %a', '%1 = cuda_tile.negx %a', 5, 10,
     "custom op 'cuda_tile.negx' is unknown"),
    ('builtin_prefix', '%1 = negi %a', '%1 = builtin.negi %a', 5, 10,
     "custom op 'builtin.negi' is unknown"),
    ('unknown_dialect', '%1 = negi %a', '%1 = cuda_tle.negi %a', 5, 10,
     "Dialect `cuda_tle' not found for custom op 'cuda_tle.negi' "),
    ('unprefixed_in_module', '  entry @f', '  entyr @f', 2, 3,
     "custom op 'entyr' is unknown (tried 'cuda_tile.entyr' as well)"),
    ('misspelt_module', 'cuda_tile.module @m', 'cuda_tile.modul @m', 1, 1,
     "custom op 'cuda_tile.modul' is unknown"),
    ('top_level_unprefixed', 'cuda_tile.module @m', 'cuda_tilemodule @m', 1, 1,
     "custom op 'cuda_tilemodule' is unknown (tried 'builtin.cuda_tilemodule' as well)"),
    ('in_reduce_region', 'yield %z', 'yeild %z', 11, 7,
     "custom op 'yeild' is unknown (tried 'cuda_tile.yeild' as well)"),
    ('terminator', '    return\n', '    retrun\n', 13, 5,
     "custom op 'retrun' is unknown (tried 'cuda_tile.retrun' as well)"),
    ('int_type_as_name', '%1 = negi %a', '%1 = i32 %a', 5, 9,
     'expected operation name in quotes'),
    ('keyword_as_name', '%1 = negi %a', '%1 = loc %a', 5, 10,
     "custom op 'loc' is unknown (tried 'cuda_tile.loc' as well)"),
    ('short_type', '%1 = negi %a : tile<i32>', '%1 = negi %a : tlie<i32>', 5, 24,
     "custom op 'cuda_tile.negi' unknown type: tlie"),
    ('short_type_spaced', '%1 = negi %a : tile<i32>', '%1 = negi %a : tlie   <i32>', 5, 27,
     "custom op 'cuda_tile.negi' unknown type: tlie"),
    ('token_type_at_line_end', 'make_token : token', 'make_token : tokn', 4, 5,
     "custom op 'cuda_tile.make_token' unknown type: tokn"),
    ('element_type', '%1 = negi %a : tile<i32>', '%1 = negi %a : tile<ii32>', 5, 29,
     "custom op 'cuda_tile.negi' unknown type: ii32"),
    ('signature_type', '%p: tile<ptr<f32>>', '%p: tile<pr<f32>>', 2, 38,
     "custom op 'cuda_tile.entry' unknown type: pr"),
    ('bang_type_inner', '%1 = negi %a : tile<i32>', '%1 = negi %a : !cuda_tile.tile<ii32>', 5, 40,
     'unknown type: ii32'),
    ('bang_type_mnemonic', '%1 = negi %a : tile<i32>', '%1 = negi %a : !cuda_tile.tlie<i32>', 5, 31,
     'unknown  type `tlie` in dialect `cuda_tile`'),
    ('view_type_in_view', ': partition_view<tile=(16), tensor_view', ': partition_view<tile=(16), tensr_view', 7, 72,
     "custom op 'cuda_tile.make_partition_view' unknown type: tensr_view"),
    ('view_tile_keyword', 'partition_view<tile=(16)', 'partition_view<tiel=(16)', 7, 51,
     "custom op 'cuda_tile.make_partition_view' expected 'tile'"),
    ('strides_type_keyword', '-> tensor_view<?xf32, strides=[?]>', '-> tensor_view<?xf32, strdes=[?]>', 6, 94,
     "custom op 'cuda_tile.make_tensor_view' expected 'strides'"),
    ('strides_in_bang_type', '-> tensor_view<?xf32, strides=[?]>', '-> !cuda_tile.tensor_view<?xf32, stides=[?]>', 6, 105,
     "expected 'strides'"),
    ('zero_d_strides', '-> tensor_view<?xf32, strides=[?]>', '-> tensor_view<f32, stides=[?]>', 6, 92,
     "custom op 'cuda_tile.make_tensor_view' unexpected token after element type in 0-d tensor_view"),
    ('zero_d_strides_bang', '-> tensor_view<?xf32, strides=[?]>', '-> !cuda_tile.tensor_view<f32, stides=[?]>', 6, 103,
     'unexpected token after element type in 0-d tensor_view'),
    ('format_keyword', 'shape = [%n]', 'shpe = [%n]', 6, 31,
     "custom op 'cuda_tile.make_tensor_view' expected 'shape'"),
    ('format_keyword_after_list', 'reduce %t dim=0', 'reduce %t dmi=0', 8, 20,
     "custom op 'cuda_tile.reduce' expected 'dim'"),
    ('attribute_type', 'identities=[0 : i32]', 'identities=[0 : i3x]', 8, 41,
     'expected non-function type'),
    ('region_expected', '%n: tile<i32>) {', '%n: tile<i32>) optimizaton_hints {', 2, 61,
     "expected '{' to begin a region"),
]


def _first_error(text: str):
    analysis = analyze_text(text, AnalysisOptions(mlir_compat=True))
    errors = [d for d in analysis.diagnostics if d.severity == Severity.ERROR]
    assert errors, "no error reported"
    d = errors[0]
    return d.range.start.line + 1, d.range.start.character + 1, d.message


def test_base_text_is_clean():
    analysis = analyze_text(BASE, AnalysisOptions(mlir_compat=True))
    assert [d.message for d in analysis.diagnostics if d.severity == Severity.ERROR] == []


@pytest.mark.parametrize("name,old,new,line,col,message", CASES, ids=[c[0] for c in CASES])
def test_first_error_is_mlirs(name, old, new, line, col, message):
    assert BASE.count(old) == 1
    assert _first_error(BASE.replace(old, new)) == (line, col, message)


def test_editor_mode_names_the_enclosing_dialect():
    """Parsed statement by statement (the editor's mode), an op misspelt in a function still
    gets the function's default dialect, not the top level's."""
    text = BASE.replace("%1 = negi %a", "%1 = negx %a")
    messages = [d.message for d in analyze_text(text).diagnostics if d.severity == Severity.ERROR]
    assert "custom op 'negx' is unknown (tried 'cuda_tile.negx' as well)" in messages


def test_cli_reports_unknown_op(tmp_path):
    path = tmp_path / "typo.mlir"
    path.write_text(BASE.replace("%1 = negi %a", "%1 = cuda_tile.negx %a"))
    out = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "--check", "--format", "json", str(path)],
                         capture_output=True, text=True)
    assert out.returncode != 0
    first = json.loads(out.stdout)[0]
    assert (first["line"], first["column"], first["severity"], first["message"]) == (
        5, 10, "error", "custom op 'cuda_tile.negx' is unknown")
