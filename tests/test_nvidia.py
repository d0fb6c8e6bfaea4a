"""NVIDIA's tileiras / tileirdisasm / cuobjdump as a second opinion (``tile_lsp.nvidia``).

Needs the ``nvidia`` extra (``pip install -e '.[test,nvidia]'``): skipped with
the reason when tileiras is not installed, a failure under CI=true.
"""

from __future__ import annotations

import argparse
import csv
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from tile_lsp import nvidia
from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.diagnostics import Severity
from tile_lsp.analysis.ir_compare import ir_differences, same_ir
from tile_lsp.bytecode.writer import write_bytecode


@pytest.fixture(scope="module")
def tileiras() -> str:
    """Path of tileiras; skip (fail under CI=true) when the package is missing."""
    exe = nvidia.find_tool("tileiras")
    if exe is None:
        message = "nvidia-cuda-tileiras is not installed (pip install -e '.[test,nvidia]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return exe


def _manifest(corpus) -> list[dict[str, str]]:
    with open(corpus / "kernels" / "MANIFEST.tsv", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _module(path):
    analysis = analyze_text(path.read_text(encoding="utf-8"))
    assert len(analysis.chunks) == 1 and analysis.chunks[0].module is not None
    return analysis.chunks[0].module


def test_tools_come_from_the_installed_package(tileiras):
    """tileiras lives in the distribution's bin/ folder, not at a fixed place."""
    assert os.path.basename(tileiras) == "tileiras"
    assert os.path.basename(os.path.dirname(tileiras)) == "bin"
    assert nvidia.tileiras_version().startswith("release 13.")


def _sample(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """Every 10th row (28 of the 274 ``ok`` kernels, all four targets): analysing all of them
    takes over 8 minutes, most of it in our parser."""
    sample = rows[::10]
    assert len(sample) >= 20 and {r["target"] for r in sample} >= {"sm_80", "sm_90", "sm_100", "sm_120"}
    return sample


def test_tileiras_accepts_ok_corpus_kernels(tileiras, corpus):
    """Our bytecode of kernels whose MANIFEST verdict is ``ok`` compiles for their target."""
    rows = _sample([r for r in _manifest(corpus) if r["verdict"] == "ok"])

    # our analysis and writer run here; only the tileiras/cuobjdump processes run in parallel
    jobs = [(row["file"], write_bytecode(_module(corpus / "kernels" / row["file"])), row["target"])
            for row in rows]

    def compile_one(job):
        name, data, target = job
        return name, nvidia.compile_with_tileiras(data, target)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        results = list(pool.map(compile_one, jobs))
    failed = [(f, r.output) for f, r in results if not r.ok]
    assert failed == []
    for f, r in results:
        assert r.kernels and all(k.registers and k.sass_bytes and k.sass_instructions for k in r.kernels), f


def test_tileiras_rejects_as_the_manifest_says(tileiras, corpus):
    """Kernels whose verdict is an error get that same tileiras error from our bytecode."""
    rows = [r for r in _manifest(corpus) if r["verdict"].startswith("error: ")]
    assert rows
    for row in rows:
        result = nvidia.compile_with_tileiras(_module(corpus / "kernels" / row["file"]), row["target"])
        assert not result.ok
        assert result.diagnostics[0].message == row["verdict"][len("error: "):]


def test_kernel_facts(tileiras, corpus):
    """Registers, shared memory, spills and SASS size come from cuobjdump."""
    text = (corpus / "kernels" / "ew_float_arith_f32_b256.sm_90.mlir").read_text(encoding="utf-8")
    result = nvidia.compile_with_tileiras(text, "sm_90")
    assert result.ok and result.returncode == 0 and result.cubin[:4] == b"\x7fELF"
    [k] = result.kernels
    assert k.name == "ew_float_arith_Kt1_A1f32_1l0_A1f32_1l0_A1f32_1l0_I256"
    if nvidia.find_tool("cuobjdump") is None:
        assert k.registers is None and result.unavailable
        return
    assert k.unavailable == {} and result.unavailable == []
    assert 0 < k.registers <= 255
    assert k.shared_bytes == 0 and k.local_bytes == 0
    assert k.spill_stores == 0 and k.spill_loads == 0
    assert k.sass_bytes > 0 and k.sass_bytes % 16 == 0
    assert k.sass_instructions > 0
    assert result.to_json()["kernels"][0]["registers"] == k.registers


BROKEN_LINE = "  %3 = absf %tile_8 : tile<256xf32>"


def test_broken_module_gets_tileiras_error_at_the_right_line(tileiras, corpus):
    """A type mismatch written to bytecode is tileiras' own verifier error, mapped to its op's line."""
    text = (corpus / "kernels" / "ew_float_arith_f32_b256.sm_90.mlir").read_text(encoding="utf-8")
    lines = text.splitlines()
    line = lines.index(BROKEN_LINE)
    broken = text.replace(BROKEN_LINE, BROKEN_LINE.replace("256xf32", "256xf16"))
    result = nvidia.compile_with_tileiras(broken, "sm_90")
    assert not result.ok and result.returncode != 0 and result.kernels == []
    d = result.diagnostics[0]
    assert d.severity == Severity.ERROR and d.source == "tileiras"
    assert d.message == "'cuda_tile.absf' op failed to verify that all of {source, result} have same type"
    assert d.range.start.line == line
    assert (d.range.start.character, d.range.end.character) == (7, 11)  # the op name "absf"
    assert [n.message for n in d.notes] == ["verification failed for deserialized cuda_tile::ModuleOp",
                                           "input does not correspond to Tile IR bytecode"]
    assert nvidia.tileiras_diagnostics("k.mlir", broken, "sm_90")[0].range == d.range


def test_parse_output_maps_same_named_ops_by_order():
    """With several ops of the erring name and no hint, the first in pre-order is chosen."""
    text = ("cuda_tile.module @m {\n  cuda_tile.entry @e() {\n"
            "    %a = cuda_tile.constant <i32: 1> : !cuda_tile.tile<i32>\n"
            "    %b = cuda_tile.addi %a, %a : !cuda_tile.tile<i32>\n"
            "    %c = cuda_tile.addi %b, %a : !cuda_tile.tile<i32>\n"
            "    cuda_tile.return\n  }\n}\n")
    module = analyze_text(text).chunks[0].module
    out = nvidia.parse_tileiras_output("error: 'cuda_tile.addi' op boom\nerror: later\n", module)
    assert [(d.message, d.range.start.line) for d in out] == [("'cuda_tile.addi' op boom", 3)]
    assert [n.message for n in out[0].notes] == ["later"]
    out = nvidia.parse_tileiras_output("x.mlir:5:3: warning: w\n", module)
    assert (out[0].severity, out[0].range.start.line, out[0].range.start.character) == (Severity.WARNING, 4, 2)


def test_unknown_gpu_is_refused(tileiras):
    with pytest.raises(ValueError, match="unknown gpu name 'sm_70'"):
        nvidia.compile_with_tileiras(b"", "sm_70")


def test_add_tileiras_option():
    p = argparse.ArgumentParser()
    nvidia.add_tileiras_option(p)
    assert p.parse_args([]).with_tileiras is None
    assert p.parse_args(["--with-tileiras"]).with_tileiras == nvidia.DEFAULT_GPU
    assert p.parse_args(["--with-tileiras=sm_100"]).with_tileiras == "sm_100"


def test_tileirdisasm_of_our_bytecode_is_our_ir(tileiras, corpus):
    """NVIDIA's disassembly of our bytecode parses to the same IR as the kernel's text (a sample over targets)."""
    if nvidia.find_tool("tileirdisasm") is None:
        pytest.skip("this nvidia-cuda-tileiras has no tileirdisasm")
    for row in _sample([r for r in _manifest(corpus) if r["verdict"] == "ok"]):
        module = _module(corpus / "kernels" / row["file"])
        text = nvidia.disassemble(write_bytecode(module))
        back = analyze_text(text).chunks[0].module
        assert same_ir(module, back), (row["file"], ir_differences(module, back)[:5])
