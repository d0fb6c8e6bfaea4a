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
from conftest import require_nvidia_tool

from tile_lsp import nvidia
from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.ir.diagnostics import Severity
from tile_lsp.bytecode.reader import read_bytecode
from tile_lsp.bytecode.writer import write_bytecode


@pytest.fixture(scope="module")
def tileiras() -> str:
    """Path of tileiras; skip (fail under CI=true) when the package is missing."""
    return require_nvidia_tool("tileiras")


def _manifest(corpus) -> list[dict[str, str]]:
    with open(corpus / "kernels" / "MANIFEST.tsv", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _module(path):
    analysis = analyze_text(path.read_text(encoding="utf-8"))
    assert len(analysis.chunks) == 1 and analysis.chunks[0].module is not None
    return analysis.chunks[0].module


def _ours(corpus, row) -> tuple[bytes, list[str]]:
    """Our bytecode of a corpus kernel and its entry names.

    The ``.tileirbc`` is read into our IR and written in NVIDIA's layout
    (cuTile's layout would give the original bytes back for most files).
    The text path (parse, write) is checked on every kernel through
    ``test_corpus_kernels_read_and_match_disassembly`` (same IR) and on a
    sample below; parsing all of them here would double the time.
    """
    module = read_bytecode((corpus / "kernels" / row["bytecode"]).read_bytes())
    names = [op.properties["sym_name"].value for op in module.walk() if op.name == "cuda_tile.entry"]
    return write_bytecode(module, layout="nvidia"), names


def _in_parallel(fn, items: list) -> list:
    """``fn`` over ``items`` in threads: each call waits on one NVIDIA process."""
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return list(pool.map(fn, items))


def test_tools_come_from_the_installed_package(tileiras):
    """tileiras lives in the distribution's bin/ folder, not at a fixed place."""
    assert os.path.basename(tileiras) == "tileiras"
    assert os.path.basename(os.path.dirname(tileiras)) == "bin"
    assert nvidia.tileiras_version().startswith("release 13.")


def test_tileiras_accepts_every_ok_corpus_kernel(tileiras, corpus):
    """Our bytecode of every kernel whose MANIFEST verdict is ``ok`` compiles for its target.

    Longest compiles first (MANIFEST ``tileiras_ms``) so the pool ends together; the
    figure of how long this takes: ``python bench/tileiras_corpus.py``.
    """
    rows = sorted((r for r in _manifest(corpus) if r["verdict"] == "ok"), key=lambda r: -float(r["tileiras_ms"]))
    assert len(rows) >= 270 and {r["target"] for r in rows} >= {"sm_80", "sm_90", "sm_100", "sm_120"}
    jobs = [(row, *_ours(corpus, row)) for row in rows]

    def compile_one(job):
        row, data, names = job
        return row["file"], names, nvidia.compile_with_tileiras(data, row["target"], facts=False)

    results = _in_parallel(compile_one, jobs)
    assert {f: r.output for f, _, r in results if not r.ok} == {}
    for f, names, r in results:
        assert r.cubin[:4] == b"\x7fELF" and names, f
        assert all(b".text." + n.encode() in r.cubin for n in names), f  # each entry's SASS section


def test_tileiras_rejects_as_the_manifest_says(tileiras, corpus):
    """Kernels whose verdict is an error get that same tileiras error from our bytecode,
    written from the ``.tileirbc`` (with debug info: tileiras prefixes its location) and from
    the text."""
    rows = [r for r in _manifest(corpus) if r["verdict"].startswith("error: ")]
    assert rows
    jobs = [(row, source) for row in rows for source in (
        _ours(corpus, row)[0], _module(corpus / "kernels" / row["file"]))]
    results = _in_parallel(lambda job: nvidia.compile_with_tileiras(job[1], job[0]["target"]), jobs)
    for (row, _), result in zip(jobs, results):
        assert not result.ok and result.returncode not in (0, None)
        assert result.diagnostics[0].message == row["verdict"][len("error: "):], row["file"]
        assert [n.message for n in result.diagnostics[0].notes] == ["failed to compile Tile IR program"]


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


def test_parse_output_reads_past_a_debug_info_location():
    """tileiras prints a diagnostic at a debug-info location as the attribute; the message
    is what follows it (the location's line is one of the generating source)."""
    output = ("#cuda_tile.di_loc<loc(\"gen/kernels.py\":612:0) in #cuda_tile.di_subprogram<file = "
              "<\"kernels.py\" in \"gen\">, line = 611, name = \"mm\", linkageName = \"mm_K\", compileUnit = "
              "<file = <\"kernels.py\" in \"gen\">>, scopeLine = 611>>: error: Incompatibility with "
              "architecture 'sm_80': unsupported type 'f8E4M3FN'\n"
              "error: failed to compile Tile IR program\n")
    out = nvidia.parse_tileiras_output(output, None)
    assert [(d.severity, d.message, [n.message for n in d.notes]) for d in out] == [
        (Severity.ERROR, "Incompatibility with architecture 'sm_80': unsupported type 'f8E4M3FN'",
         ["failed to compile Tile IR program"])]


def test_unknown_gpu_is_refused(tileiras):
    with pytest.raises(ValueError, match="unknown gpu name 'sm_70'"):
        nvidia.compile_with_tileiras(b"", "sm_70")


def test_add_tileiras_option():
    p = argparse.ArgumentParser()
    nvidia.add_tileiras_option(p)
    assert p.parse_args([]).with_tileiras is None
    assert p.parse_args(["--with-tileiras"]).with_tileiras == nvidia.DEFAULT_GPU
    assert p.parse_args(["--with-tileiras=sm_100"]).with_tileiras == "sm_100"


def test_tileirdisasm_prints_our_bytecode_of_every_kernel_as_the_corpus(corpus):
    """NVIDIA's disassembly of our bytecode of each ``.tileirbc`` is, character for
    character, the ``.mlir`` beside it (which tileirdisasm printed from the original)."""
    require_nvidia_tool("tileirdisasm")
    rows = _manifest(corpus)
    texts = _in_parallel(lambda row: nvidia.disassemble(_ours(corpus, row)[0]), rows)
    differ = [row["file"] for row, text in zip(rows, texts)
              if text != (corpus / "kernels" / row["file"]).read_text(encoding="utf-8")]
    assert differ == []


def test_tileirdisasm_of_our_bytecode_of_the_text_is_the_text(corpus):
    """Text -> our IR -> our bytecode -> tileirdisasm gives the kernel's text back (every 10th
    kernel, all four targets: the parse is the costly part)."""
    require_nvidia_tool("tileirdisasm")
    rows = _manifest(corpus)[::10]
    assert {r["target"] for r in rows} >= {"sm_80", "sm_90", "sm_100", "sm_120"}
    data = [write_bytecode(_module(corpus / "kernels" / row["file"])) for row in rows]
    texts = _in_parallel(nvidia.disassemble, data)
    differ = [row["file"] for row, text in zip(rows, texts)
              if text != (corpus / "kernels" / row["file"]).read_text(encoding="utf-8")]
    assert differ == []
