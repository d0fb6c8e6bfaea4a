"""tileiras' target errors (``--check --gpu-name``, the server's ``targetGpu``): ``tile_lsp.dialect.targets``.

Every expected text below was printed by NVIDIA ``tileiras`` 13.5 for the
same kernel (written as bytecode by tile-lsp) and ``--gpu-name``; the
position is the op tileiras names when the bytecode carries debug info.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT, require_corpus, require_nvidia_tool
from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.cli import main
from tile_lsp.dialect import targets

F8_CONSTANT = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<f32>>) {
    %c = constant <f8E4M3FN: 1.0> : tile<f8E4M3FN>
    return
  }
}
"""

# the pointee of a pointer counts; an entry's signature alone does not
E5M2_POINTER = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<f8E5M2>>, %arg1: tile<ptr<f8E4M3FN>>) {
    %p = reshape %arg0 : tile<ptr<f8E5M2>> -> tile<1xptr<f8E5M2>>
    return
  }
}
"""

E8M0_VIEW = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<f8E8M0FNU>>) {
    %tv = make_tensor_view %arg0, shape = [16], strides = [1] : tensor_view<16xf8E8M0FNU, strides=[1]>
    return
  }
}
"""

F4_UNPACK = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<i8>>) {
    %p = reshape %arg0 : tile<ptr<i8>> -> tile<1xptr<i8>>
    %v, %t = load_ptr_tko weak %p : tile<1xptr<i8>> -> tile<1xi8>, token
    %u = unpack %v : tile<1xi8> -> tile<2xf4E2M1FN>
    return
  }
}
"""

BF16_ATOMIC = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<bf16>>, %x: tile<bf16>) {
    %t = make_token : token
    %m = constant <i1: true> : tile<i1>
    %r, %t2 = atomic_rmw_tko relaxed device %arg0, addf, %x, %m token=%t : tile<ptr<bf16>>, tile<bf16>, tile<i1> -> tile<bf16>, token
    %c = constant <f8E5M2: 1.0> : tile<f8E5M2>
    return
  }
}
"""

BF16_ATOMIC_VIEW = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<bf16>>, %x: tile<bf16>) {
    %t = make_token : token
    %c0 = constant <i32: 0> : tile<i32>
    %tv = make_tensor_view %arg0, shape = [16], strides = [1] : tensor_view<16xbf16, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>
    %r = reshape %x : tile<bf16> -> tile<1xbf16>
    %v = broadcast %r : tile<1xbf16> -> tile<16xbf16>
    %t2 = atomic_red_view_tko relaxed device %pv[%c0], addf, %v token = %t : tile<16xbf16>, partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>, tile<i32> -> token
    return
  }
}
"""

# post-order: the op inside the loop comes before the loop and what follows it
NESTED_FIRST = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<f32>>, %x: tile<f8E5M2>) {
    %lb = constant <i32: 0> : tile<i32>
    %ub = constant <i32: 4> : tile<i32>
    %st = constant <i32: 1> : tile<i32>
    %r = for %i in (%lb to %ub, step %st) : tile<i32> iter_values(%a = %x) -> (tile<f8E5M2>) {
      %d = constant <f8E4M3FN: 1.0> : tile<f8E4M3FN>
      continue %a : tile<f8E5M2>
    }
    return
  }
}
"""

# operand types before result types
OPERAND_FIRST = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<f32>>, %x: tile<f8E4M3FN>) {
    %d = ftof %x : tile<f8E4M3FN> -> tile<f8E5M2>
    return
  }
}
"""

# tileirdisasm's form: entries at the top level of the file
TOP_LEVEL_ENTRY = """\
entry @k(%arg0: tile<ptr<f32>>) {
  %c = constant <f8E5M2: 1.0> : tile<f8E5M2>
  return
}
"""

INCOMPAT = "Incompatibility with architecture '{sm}': "

#: (name, text, gpu, message after the prefix, 1-based line, 1-based column) — each one printed by tileiras 13.5
CASES = [
    ("f8-constant", F8_CONSTANT, "sm_80", "unsupported type 'f8E4M3FN'", 3, 10),
    ("f8-constant-sm88", F8_CONSTANT, "sm_88", "unsupported type 'f8E4M3FN'", 3, 10),
    ("e5m2-pointer", E5M2_POINTER, "sm_86", "unsupported type 'f8E5M2'", 3, 10),
    ("e8m0-view", E8M0_VIEW, "sm_90", "unsupported type 'f8E8M0FNU'", 3, 11),
    ("f4-unpack", F4_UNPACK, "sm_89", "unsupported type 'f4E2M1FN'", 5, 10),
    ("bf16-atomic", BF16_ATOMIC, "sm_80", "atomicRMW ADDF with bf16 is not supported", 5, 15),
    ("bf16-atomic-view", BF16_ATOMIC_VIEW, "sm_87", "atomicRMW ADDF with bf16 is not supported", 9, 11),
    ("nested-first", NESTED_FIRST, "sm_80", "unsupported type 'f8E4M3FN'", 7, 12),
    ("operand-first", OPERAND_FIRST, "sm_80", "unsupported type 'f8E4M3FN'", 3, 10),
    ("top-level-entry", TOP_LEVEL_ENTRY, "sm_80", "unsupported type 'f8E5M2'", 2, 8),
]

#: (text, a gpu that accepts it)
ACCEPTED = [(F8_CONSTANT, "sm_89"), (E5M2_POINTER, "sm_90"), (E8M0_VIEW, "sm_100"), (F4_UNPACK, "sm_120"),
            (BF16_ATOMIC.replace("    %c = constant <f8E5M2: 1.0> : tile<f8E5M2>\n", ""), "sm_89"),
            (BF16_ATOMIC_VIEW.replace("bf16", "f16"), "sm_80")]


def _check_json(capsys, *argv: str) -> tuple[int, list[dict]]:
    code = main(["--check", "--format", "json", *argv])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else []


@pytest.mark.parametrize("name,text,gpu,message,line,column", CASES, ids=[c[0] for c in CASES])
def test_target_error_text_and_position(name, text, gpu, message, line, column, tmp_path, capsys):
    f = tmp_path / f"{name}.mlir"
    f.write_text(text)
    want = [(line, column, "error", INCOMPAT.format(sm=gpu) + message)]
    for argv in (["--gpu-name", gpu, str(f)], [str(f), "--gpu-name", gpu], [str(f), f"--gpu-name={gpu}"]):
        code, diags = _check_json(capsys, *argv)
        assert code == 1
        assert [(d["line"], d["column"], d["severity"], d["message"]) for d in diags] == want, argv
    # without a target nothing is reported: cuda-tile-opt knows no target
    code, diags = _check_json(capsys, str(f))
    assert (code, diags) == (0, [])
    # nor under -verify-diagnostics (MLIR's tools, which also read a top-level 'entry' as 'builtin.entry')
    found = analyze_text(text, AnalysisOptions(target_sm=int(gpu[3:]), mlir_compat=True)).diagnostics
    assert [d.message for d in found if d.message.startswith("Incompatibility")] == []


@pytest.mark.parametrize("text,gpu", ACCEPTED)
def test_accepted_on_newer_targets(text, gpu):
    assert analyze_text(text, AnalysisOptions(target_sm=int(gpu[3:]))).diagnostics == []


def test_one_error_per_module_as_tileiras():
    text = F8_CONSTANT.replace("    return\n", "    %e = constant <f8E5M2: 1.0> : tile<f8E5M2>\n    return\n")
    diags = analyze_text(text, AnalysisOptions(target_sm=80)).diagnostics
    assert [d.message for d in diags] == [INCOMPAT.format(sm="sm_80") + "unsupported type 'f8E4M3FN'"]


def test_unknown_architectures_are_not_judged():
    # tileiras does not compile for sm_75: the table says nothing of it
    assert analyze_text(F8_CONSTANT, AnalysisOptions(target_sm=75)).diagnostics == []


@pytest.mark.parametrize("bad", ["sm_75", "sm80", "90", "sm_100a"])
def test_bad_gpu_name_is_a_usage_error(bad, tmp_path, capsys):
    f = tmp_path / "k.mlir"
    f.write_text(F8_CONSTANT)
    assert main(["--check", str(f), "--gpu-name", bad]) == 2
    err = capsys.readouterr().err
    assert f"invalid GPU name '{bad}'; expected one of: " + ", ".join(targets.GPU_NAMES) in err


def test_console_script(tmp_path):
    f = tmp_path / "k.mlir"
    f.write_text(BF16_ATOMIC)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "--check", "--format", "json", "--gpu-name",
                           "sm_80", str(f)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert [(d["line"], d["message"]) for d in json.loads(proc.stdout)] == [
        (5, "Incompatibility with architecture 'sm_80': atomicRMW ADDF with bf16 is not supported")]


def test_server_target_gpu_setting():
    """The language server's ``targetGpu`` setting names the target (in process)."""
    from tile_lsp.server.server import TileLanguageServer

    server = TileLanguageServer()
    assert [d.message for d in analyze_text(F8_CONSTANT, server.analysis_options(F8_CONSTANT)).diagnostics] == []
    server.settings, problems = server.settings.updated({"tileLsp": {"targetGpu": "sm_80"}})
    assert problems == []
    diags = analyze_text(F8_CONSTANT, server.analysis_options(F8_CONSTANT)).diagnostics
    assert [(d.range.start.line, d.range.start.character, d.message) for d in diags] == [
        (2, 9, "Incompatibility with architecture 'sm_80': unsupported type 'f8E4M3FN'")]
    server.settings, _ = server.settings.updated({"tileLsp": {"targetGpu": "sm_90"}})
    assert analyze_text(F8_CONSTANT, server.analysis_options(F8_CONSTANT)).diagnostics == []


def test_ir_named_compute_capability_in_the_editor():
    """A builtin module naming its target (nv_tileaa.compute_capability) stands for targetGpu in the
    editor; the command line still needs --gpu-name (cuda-tile-opt knows no target)."""
    text = ("module attributes {nv_tileaa.compute_capability = 80 : i32} {\n"
            + "".join("  " + line + "\n" for line in F8_CONSTANT.splitlines()) + "}\n")
    message = INCOMPAT.format(sm="sm_80") + "unsupported type 'f8E4M3FN'"
    assert [d.message for d in analyze_text(text, AnalysisOptions(editor_checks=True)).diagnostics] == [message]
    assert analyze_text(text).diagnostics == []
    assert [d.message for d in analyze_text(text, AnalysisOptions(target_sm=90)).diagnostics] == [message]


def _manifest(corpus) -> dict[str, str]:
    with open(corpus / "kernels" / "MANIFEST.tsv", newline="") as fh:
        return {r["file"]: r["verdict"] for r in csv.DictReader(fh, delimiter="\t")}


def test_corpus_kernels_for_their_own_arch():
    """Each corpus kernel checked for the arch of its file name: the kernels tileiras compiled stay
    free of target errors; those it refused get its recorded text (MANIFEST ``verdict``)."""
    corpus = require_corpus()
    verdicts = _manifest(corpus)
    seen_refused = 0
    files = sorted((corpus / "kernels").glob("*.mlir"))
    assert files
    for f in files:
        sm = int(re.search(r"\.sm_(\d+)\.", f.name).group(1))
        verdict = verdicts.get(f.name.replace(".g.mlir", ".mlir"), "ok")
        diags = analyze_text(f.read_text(), AnalysisOptions(target_sm=sm)).diagnostics
        got = [d.message for d in diags if d.message.startswith("Incompatibility with architecture")]
        if verdict.startswith("error: Incompatibility with architecture"):
            seen_refused += 1
            assert got == [verdict[len("error: "):]], f.name
        else:
            assert got == [], f.name
    assert seen_refused >= 4


def test_rule_text_against_tileiras(tmp_path):
    """tileiras itself prints each case's text and accepts the kernels on the newer targets (needs the
    nvidia extra)."""
    require_nvidia_tool("tileiras")
    from tile_lsp import nvidia

    for name, text, gpu, message, _, _ in CASES:
        result = nvidia.compile_with_tileiras(text, gpu, facts=False)
        assert not result.ok
        assert [d.message for d in result.diagnostics][:1] == [INCOMPAT.format(sm=gpu) + message], name
    for text, gpu in ACCEPTED:
        result = nvidia.compile_with_tileiras(text, gpu, facts=False)
        assert result.ok, (gpu, result.output)
