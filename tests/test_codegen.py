"""The PTX lowering: every corpus kernel through ptxas, ABI, directives, source mapping, diagnostics."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.ir.diagnostics import Severity
from tile_lsp.codegen import STAGES, lower_text
from tile_lsp.codegen.cli import find_ptxas, run_ptxas

ROOT = Path(__file__).resolve().parents[1]


def _require_ptxas() -> str:
    exe = find_ptxas()
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("ptxas (PyPI nvidia-cuda-nvcc) is not installed")
        pytest.skip("ptxas (PyPI nvidia-cuda-nvcc) is not installed")
    return exe


def _target_of(path: Path) -> str:
    m = re.search(r"\.(sm_\d+)\.", path.name)
    return m.group(1) if m else "sm_90"


def _manifest(corpus: Path) -> dict[str, str]:
    rows = (corpus / "kernels" / "MANIFEST.tsv").read_text().splitlines()
    head = rows[0].split("\t")
    out = {}
    for row in rows[1:]:
        cols = dict(zip(head, row.split("\t")))
        out[cols["file"]] = cols["verdict"]
    return out


def _lower_and_assemble(path_str: str) -> tuple[str, str, str]:
    """(file, verdict, detail) for one kernel: 'ok', 'lowering-error', 'stage-error' (the printed
    nv_tileas stage does not parse and verify clean) or 'ptxas-error'."""
    path = Path(path_str)
    target = _target_of(path)
    result = lower_text(path.read_text(), target, file_name=path.name)
    if not result.ok:
        errors = [d for d in result.diagnostics if d.severity == Severity.ERROR]
        return path.name, "lowering-error", "; ".join(
            f"{(d.range.start.line + 1) if d.range else 0}: {d.message}" for d in errors)
    stage_errors = _errors(result.stages["nv_tileas"])
    if stage_errors:
        return path.name, "stage-error", "; ".join(stage_errors)
    ok, log = run_ptxas(result.ptx, target)
    return path.name, "ok" if ok else "ptxas-error", log[:2000]


def _errors(text: str) -> list[str]:
    return [f"{d.range.start.line + 1 if d.range else 0}: {d.message}"
            for d in analyze_text(text).diagnostics if d.severity == Severity.ERROR]


def test_every_corpus_kernel_lowers_to_ptx_that_ptxas_accepts(corpus):
    """All corpus kernels (text and debug-info variants) for their target; tileiras' rejections agree;
    the nv_tileas stage of each parses and verifies with no error."""
    _require_ptxas()
    manifest = _manifest(corpus)
    files = sorted(str(p) for p in (corpus / "kernels").glob("*.mlir"))
    workers = max(1, min(4, os.cpu_count() or 1))
    with ProcessPoolExecutor(workers) as pool:
        outcomes = list(pool.map(_lower_and_assemble, files, chunksize=4))
    failures = []
    for name, verdict, detail in outcomes:
        expected = manifest.get(name.replace(".g.mlir", ".mlir"), "ok")
        if expected == "ok":
            if verdict != "ok":
                failures.append(f"{name}: {verdict}: {detail}")
        else:  # tileiras rejects this kernel for its target: we must say the same, not emit PTX
            want = expected.removeprefix("error: ")
            if verdict != "lowering-error" or want not in detail:
                failures.append(f"{name}: expected tileiras' rejection '{want}', got {verdict}: {detail}")
    assert not failures, f"{len(failures)} of {len(outcomes)} kernels failed:\n" + "\n".join(failures[:20])
    assert len(outcomes) >= 300


KERNEL = """\
cuda_tile.module @m {
  entry @scale(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<f32>) {
    %0 = make_token : token
    %tview = make_tensor_view %arg0, shape = [%arg1], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %pv = make_partition_view %tview : partition_view<tile=(256), tensor_view<?xf32, strides=[1]>>
    %t, %tok = load_view_tko weak %pv[%bx] token = %0 : partition_view<tile=(256), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<256xf32>, token
    %r = reshape %arg2 : tile<f32> -> tile<1xf32>
    %b = broadcast %r : tile<1xf32> -> tile<256xf32>
    %m = mulf %t, %b rounding<nearest_even> : tile<256xf32>
    %s = store_view_tko weak %m, %pv[%bx] token = %tok : tile<256xf32>, partition_view<tile=(256), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }
}
"""


def test_kernel_abi_directives_and_source_mapping():
    result = lower_text(KERNEL, "sm_80", file_name="scale.mlir")
    assert result.ok, result.diagnostics
    ptx = result.ptx
    assert ".target sm_80" in ptx and ".address_size 64" in ptx
    assert re.search(r"\.visible \.entry scale\(\s*\.param \.u64 scale_param_0,\s*\.param \.u32 scale_param_1,"
                     r"\s*\.param \.f32 scale_param_2\s*\)", ptx)
    assert ".reqntid 128, 1, 1" in ptx
    assert '.file 1 "scale.mlir"' in ptx
    # the mulf (line 10 of the text, column 5) maps to its mul instructions
    body = ptx[ptx.index(".loc 1 10 5"):]
    assert re.match(r"\.loc 1 10 5\s+(?:\S.*\n\s*)*?mul\.rn\.f32", body)
    assert [k.name for k in result.kernels] == ["scale"]
    assert result.kernels[0].params == [(".u64", "!cuda_tile.tile<ptr<f32>>"), (".u32", "!cuda_tile.tile<i32>"),
                                        (".f32", "!cuda_tile.tile<f32>")]


@pytest.mark.parametrize("name", ["vector_add.mlir", "matmul_loop.mlir"])
def test_memory_accesses_of_tile_pointers_are_global(name):
    """Every load and store through a Tile IR pointer (a view's element, a tile of pointers) is a
    ``.global`` access of an address made by ``cvta.to.global``, or an offset from one (``add.s64``,
    or ``mad.lo.s64`` with it as the addend): LDG/STG in SASS, as tileiras'; only parameters, shared
    and constant memory are read otherwise."""
    text = (Path(__file__).resolve().parents[1] / "examples" / name).read_text(encoding="utf-8")
    result = lower_text(text, "sm_90", file_name=name)
    assert result.ok, result.diagnostics
    lines = [line.strip() for line in result.ptx.splitlines()]
    converted = set()
    for line in lines:  # PTX defines a register before its uses here (straight-line address arithmetic)
        if m := re.match(r"cvta\.to\.global\.u64 (%rd\d+), ", line):
            converted.add(m.group(1))
        elif (m := re.match(r"add\.s64 (%rd\d+), (%rd\d+), (\S+);", line)) and m.group(2) in converted:
            converted.add(m.group(1))
        elif (m := re.match(r"mad\.lo\.s64 (%rd\d+), \S+, \S+, (%rd\d+);", line)) and m.group(2) in converted:
            converted.add(m.group(1))
    accesses = [line for line in lines if re.match(r"(?:@%p\d+ )?(?:ld|st)\.", line)]
    other = [a for a in accesses if re.search(r"\b(?:ld|st)\.(?:param|shared|const|local)\b", a)]
    global_ = [a for a in accesses if a not in other]
    assert global_ and all(".global." in a for a in global_), global_
    assert all(re.search(r"\[(%rd\d+)\]", a).group(1) in converted for a in global_)


def test_hints_project_to_ptx_directives():
    text = KERNEL.replace("%arg2: tile<f32>) {",
                          "%arg2: tile<f32>) optimization_hints=<default = {occupancy = 2}, "
                          "sm_100 = {num_worker_warps_per_cta = 8}> {")
    for gpu, threads in (("sm_90", 128), ("sm_100", 256)):
        result = lower_text(text, gpu)
        assert result.ok, result.diagnostics
        assert f".reqntid {threads}, 1, 1" in result.ptx
        assert ".minnctapersm 2" in result.ptx
        assert result.kernels[0].threads == threads


def test_occupancy_counts_ctas_of_four_warps_where_the_lowering_chose_a_larger_cta(corpus):
    # flash attention asks for occupancy = 2; its 128x64 tiles get 8 warps: one such CTA per SM keeps
    # the 8 warps the hint asks for (two would cap ptxas at 128 registers a thread)
    path = corpus / "kernels" / "flash_attention_f16_causal_d64_128x64.sm_90.mlir"
    result = lower_text(path.read_text(), "sm_90", file_name=path.name)
    assert result.ok
    assert ".reqntid 256, 1, 1" in result.ptx and ".minnctapersm 1" in result.ptx
    # with num_worker_warps_per_cta given too, both hints hold as written
    text = path.read_text().replace("{occupancy = 2}", "{occupancy = 2, num_worker_warps_per_cta = 8}")
    result = lower_text(text, "sm_90", file_name=path.name)
    assert ".reqntid 256, 1, 1" in result.ptx and ".minnctapersm 2" in result.ptx


@pytest.mark.parametrize("op, ftz, instruction", [
    ("exp2", " flush_to_zero", "ex2.approx.ftz.f32"), ("exp2", "", "ex2.approx.f32"),
    ("rsqrt", " flush_to_zero", "rsqrt.approx.ftz.f32"), ("rsqrt", "", "rsqrt.approx.f32"),
])
def test_flush_to_zero_math_takes_the_ftz_instruction(op, ftz, instruction):
    """A math op with ``flush_to_zero`` (subnormal inputs and results are zero, as the interpreter
    computes them) takes the ``.ftz`` form, without ptxas' subnormal range test and rescaling around
    ``ex2``; without it, subnormal results stay (exp2(-140)).  Run on the emulator."""
    import numpy as np

    from tests import ptx_emulator as emu
    text = KERNEL.replace("%m = mulf %t, %b rounding<nearest_even> : tile<256xf32>",
                          f"%m = {op} %t{ftz} : tile<256xf32>")
    assert _errors(text) == []
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    assert re.search(rf"\b{re.escape(instruction)} ", result.ptx)
    if op == "exp2":
        x = np.linspace(-140, 20, 256, dtype=np.float32)
        ref = np.exp2(x.astype(np.float64))
        flushed = np.where(ref < 2.0 ** -126, 0.0, ref)
    else:
        x = np.geomspace(1e-40, 1e4, 256).astype(np.float32)
        ref = 1 / np.sqrt(x.astype(np.float64))
        flushed = np.where(x < 2.0 ** -126, np.inf, ref)  # a subnormal input is +0
    got = x.copy()
    info = result.kernels[0]
    emu.run(result.ptx, info.name, [p for p, _ in info.params], [got, 256, 1.0], (1, 1, 1), info.threads, 0)
    if ftz:
        np.testing.assert_allclose(got, flushed.astype(np.float32), rtol=1e-5, atol=0)
    else:
        np.testing.assert_allclose(got, ref.astype(np.float32), rtol=1e-5, atol=2.0 ** -149)
        assert (got != flushed.astype(np.float32)).sum() >= 10  # the subnormal cases differ


def test_live_registers_counts_tiles_from_definition_to_last_use():
    """A 1024 x f32 tile over 128 threads is 8 registers a thread.  An operand dies at its last use
    (``%i`` at ``%a``, ``%a`` at ``%c``), so the peak is ``%b`` and ``%c`` (16); the f16 ``%e`` packs
    two elements a register (4), a replicated pointer takes two."""
    from tile_lsp.codegen.layouts import live_registers

    text = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>, %q: tile<ptr<f16>>) {
    %i = iota : tile<1024xi32>
    %a = itof %i signed : tile<1024xi32> -> tile<1024xf32>
    %b = negf %a : tile<1024xf32>
    %c = absf %a : tile<1024xf32>
    %d = addf %b, %c : tile<1024xf32>
    %e = ftof %d : tile<1024xf32> -> tile<1024xf16>
    %ptrs = reshape %q : tile<ptr<f16>> -> tile<1xptr<f16>>
    return
  }
}
"""
    analysis = analyze_text(text)
    assert [d.message for d in analysis.diagnostics if d.severity == Severity.ERROR] == []
    [entry] = [op for op in analysis.chunks[0].module.walk() if op.name == "cuda_tile.entry"]
    # at %c: %b (8) and %c (8), %i dead since %a; at %d: %d (8) alone after %b, %c die there
    assert live_registers(entry, 128) == 16
    assert live_registers(entry, 256) == 8
    assert live_registers(entry, 2048) == 2  # one element each (%b, %c), or the pointer %ptrs


def test_a_hinted_cta_size_that_would_spill_gets_more_warps(corpus):
    """layernorm_bwd_f16_16x1024 asks for 4 warps, where its 16 x 1024 f32 tiles (128 registers a
    thread each, several live at once) spill about 1 KB a thread to local memory, as tileiras' cubin
    does: 8 warps hold them in 229 registers or so, without spills."""
    exe = _require_ptxas()
    path = corpus / "kernels" / "layernorm_bwd_f16_16x1024.sm_90.mlir"
    result = lower_text(path.read_text(), "sm_90", file_name=path.name)
    assert result.ok and result.kernels[0].threads == 256
    assert 'num_worker_warps_per_cta = 4' in path.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(result.ptx)
        log = subprocess.run([exe, "-arch=sm_90", "-v", str(src), "-o", str(Path(tmp) / "k.cubin")],
                             capture_output=True, text=True, check=True).stderr
    assert "0 bytes spill stores, 0 bytes spill loads" in log, log
    # a kernel whose tiles fit keeps its hint
    path = corpus / "kernels" / "layernorm_bwd_bf16_32x256.sm_90.mlir"
    assert lower_text(path.read_text(), "sm_90", file_name=path.name).kernels[0].threads == 128


def test_mma_operands_are_swizzled_in_shared_memory(corpus):
    """16-bit MMA operands at 128-byte aligned offsets: the nv_tileas stage marks their buffers
    tile_lsp.swizzle, and the PTX XORs each address's chunk with its bits 7-9 (the emulator and GPU
    cases check that writers and readers agree)."""
    path = corpus / "kernels" / "matmul_tiled_f16_128x128x32.sm_90.mlir"
    result = lower_text(path.read_text(), "sm_90", file_name=path.name)
    assert result.ok
    allocs = re.findall(r"nv_tileas\.alloc_tensor \{([^}]*)\}", result.stages["nv_tileas"])
    assert allocs == ["tile_lsp.smem_offset = 0 : i32, tile_lsp.swizzle",
                      "tile_lsp.smem_offset = 8192 : i32, tile_lsp.swizzle"]
    assert re.search(r"shr\.u32 (%r\d+), %r\d+, 3;\n\s*and\.b32 \1, \1, 112;\n\s*xor\.b32", result.ptx)
    assert ".shared .align 128" in result.ptx or ".extern .shared .align 128" in result.ptx
    # 8-bit operands are not swizzled (their fragments are not ldmatrix rows)
    path = corpus / "kernels" / "matmul_int8_i8_128x128x64.sm_90.mlir"
    assert "tile_lsp.swizzle" not in lower_text(path.read_text(), "sm_90").stages["nv_tileas"]


def test_every_stage_prints_and_the_layout_stage_reparses_clean():
    result = lower_text(KERNEL, "sm_90")
    assert set(result.stages) == set(STAGES)
    layout = result.stages["layout"]
    assert "tile_lsp.slots = 2 : i32" in layout  # 256 elements over 128 threads
    assert 'tile_lsp.staging = "smem"' not in layout.split("broadcast")[0]
    reparsed = analyze_text(layout)
    assert [d.message for d in reparsed.diagnostics if d.severity == Severity.ERROR] == []


MMA_KERNEL = """\
cuda_tile.module @m {
  entry @mma(%arg0: tile<ptr<f16>>, %arg1: tile<ptr<i8>>, %arg2: tile<ptr<f64>>, %arg3: tile<ptr<f32>>) {
    %0 = make_token : token
    %c0 = constant <i32: 0> : tile<i32>
    %th = make_tensor_view %arg0, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf16, strides=[16,1]>
    %ph = make_partition_view %th : partition_view<tile=(16x16), tensor_view<16x16xf16, strides=[16,1]>>
    %h, %t1 = load_view_tko acquire device %ph[%c0, %c0] token = %0 : partition_view<tile=(16x16), tensor_view<16x16xf16, strides=[16,1]>>, tile<i32> -> tile<16x16xf16>, token
    %dh = mmaf %h, %h, %h : tile<16x16xf16>, tile<16x16xf16>, tile<16x16xf16>
    %s1 = store_view_tko weak %dh, %ph[%c0, %c0] token = %t1 : tile<16x16xf16>, partition_view<tile=(16x16), tensor_view<16x16xf16, strides=[16,1]>>, tile<i32> -> token
    %ti = make_tensor_view %arg1, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xi8, strides=[16,1]>
    %pi = make_partition_view %ti : partition_view<tile=(16x16), tensor_view<16x16xi8, strides=[16,1]>>
    %i, %t2 = load_view_tko weak %pi[%c0, %c0] token = %0 : partition_view<tile=(16x16), tensor_view<16x16xi8, strides=[16,1]>>, tile<i32> -> tile<16x16xi8>, token
    %zi = constant <i32: 0> : tile<16x16xi32>
    %di = mmai %i, %i, %zi unsigned signed : tile<16x16xi8>, tile<16x16xi8>, tile<16x16xi32>
    %sum = reduce %di dim=0 identities=[0 : i32] : tile<16x16xi32> -> tile<16xi32>
      (%lhs: tile<i32>, %rhs: tile<i32>) {
      %a = addi %lhs, %rhs : tile<i32>
      yield %a : tile<i32>
    }
    %td = make_tensor_view %arg2, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf64, strides=[16,1]>
    %pd = make_partition_view %td : partition_view<tile=(16x16), tensor_view<16x16xf64, strides=[16,1]>>
    %d, %t3 = load_view_tko weak %pd[%c0, %c0] token = %0 : partition_view<tile=(16x16), tensor_view<16x16xf64, strides=[16,1]>>, tile<i32> -> tile<16x16xf64>, token
    %dd = mmaf %d, %d, %d : tile<16x16xf64>, tile<16x16xf64>, tile<16x16xf64>
    %s3 = store_view_tko weak %dd, %pd[%c0, %c0] token = %t3 : tile<16x16xf64>, partition_view<tile=(16x16), tensor_view<16x16xf64, strides=[16,1]>>, tile<i32> -> token
    return
  }
}
"""


def _stage_lines(stage: str, word: str) -> list[str]:
    return [line.strip() for line in stage.splitlines() if word in line]


def test_the_nv_tileas_stage_expresses_memops_mma_and_reductions_as_nv_tileas_ops():
    result = lower_text(MMA_KERNEL, "sm_90", file_name="mma.mlir")
    assert result.ok, result.diagnostics
    stage = result.stages["nv_tileas"]
    assert _errors(stage) == []
    # one block_tile per view, one index_cast for %c0 shared by every access
    assert len(_stage_lines(stage, '"nv_tileaa.block_tile"')) == 3
    assert len(_stage_lines(stage, '"arith.index_cast"')) == 1
    loads = _stage_lines(stage, "nv_tileas.tiled_load")
    assert len(loads) == 3 and all("operandSegmentSizes = array<i32: 1, 2, 0, 1>" in x for x in loads)
    assert 'mem_scope = "gpu", mem_semantic = "acquire"' in loads[0]
    assert 'mem_semantic = "weak"' in loads[1] and "mem_scope" not in loads[1]
    stores = _stage_lines(stage, "nv_tileas.tiled_store")
    gmem = [x for x in stores if "GMEM" in x]
    assert len(gmem) == 2 and all("operandSegmentSizes = array<i32: 1, 1, 2, 0, 1>" in x for x in gmem)
    assert not _stage_lines(stage, "load_view_tko") and not _stage_lines(stage, "store_view_tko")
    # every dot reads its operands from shared memory: one alloc_tensor and one weak whole-tile store
    # each, at the offsets the emitter uses (i8 staged in 32-bit slots), coordinates the one index 0
    assert _stage_lines(stage, '"arith.constant"') == ['%0 = "arith.constant"() {value = 0 : index} : () -> index']
    allocs = _stage_lines(stage, "nv_tileas.alloc_tensor")
    assert [re.search(r"smem_offset = (\d+)", x).group(1) for x in allocs] == ["0", "512", "0", "1024"]
    assert allocs[2].endswith("-> !nv_tileas.tiled_view<16x16xi8, SMEM>")
    # the integer sum reduces the register tile: 16x16 over 128 threads, dim 0 is bit 4 (a lane), bits 5-6
    # (warps) and bit 7 (a slot)
    red = _stage_lines(stage, "nv_tileas.reduce")[0]
    assert re.search(r"nv_tileas\.reduce %\d+ .*: \(!cuda_tile\.tile<16x16xi32>\) -> !cuda_tile\.tile<16xi32>", red)
    assert 'tile_lsp.reduction = "fold 2, shfl.bfly 16, 4 warps through smem"' in red
    smem = [x for x in stores if "SMEM" in x]
    assert len(smem) == 4 and all(re.match(r"nv_tileas\.tiled_store %\d+, %\S+, %0, %0 \{atom = #nv_tileas<atom copy>, "
                                           r'mem_semantic = "weak", operandSegmentSizes = array<i32: 1, 1, 2, 0, 0>\}',
                                           x) for x in smem), smem
    # f16 accumulator: widened to f32 around the dot; integer dot: signedness; f64 stays mmaf
    dots = _stage_lines(stage, "nv_tileas.dot")
    assert len(dots) == 2
    assert "atom = #nv_tileas<atom mma_f16_f16_f32>" in dots[0] and dots[0].endswith("-> !cuda_tile.tile<16x16xf32>")
    assert "!nv_tileas.tiled_view<16x16xf16, SMEM>, !nv_tileas.tiled_view<16x16xf16, SMEM>, " \
        "!cuda_tile.tile<16x16xf32>" in dots[0]
    # the distribution of each tile as a thread-value layout: 256 elements over 128 threads, a
    # replicated 16-element row
    assert 'tile_lsp.layout = "(128,2):(1,128)"' in dots[0]
    assert 'tile_lsp.layout = "((16,8),1):((1,0),0)"' in _stage_lines(stage, "nv_tileas.reduce")[0]
    assert len(_stage_lines(stage, "ftof")) == 2
    assert "atom = #nv_tileas<atom mma_i8_i8_i32>, b_signed = true" in dots[1] and "a_signed = false" in dots[1]
    assert len(_stage_lines(stage, "mmaf")) == 1 and "xf64>" in _stage_lines(stage, "mmaf")[0]
    assert len(_stage_lines(stage, "nv_tileas.reduce")) == 1 and len(_stage_lines(stage, "nv_tileas.yield")) == 1
    # the PTX comes from this stage: acquire load, .loc of the tiled_load at the load_view_tko's line
    assert "ld.acquire.gpu.global.b16" in result.ptx
    body = result.ptx[result.ptx.index(".loc 1 7 5"):]
    assert re.match(r"\.loc 1 7 5\n(?:\t[^.\n].*\n)*?\t(?:@%p\d+ )?ld\.acquire\.gpu\.global\.b16", body)
    exe = find_ptxas()
    if exe is not None:
        ok, log = run_ptxas(result.ptx, "sm_90")
        assert ok, log


def test_mma_runs_on_tensor_cores_where_shapes_and_types_allow():
    """f16/bf16 x f16/bf16 + f32 (an f16 accumulator is widened by the nv_tileas stage) -> mma.sync
    m16n8k16 from sm_80; f64 -> mma.sync m8n8k4 (DMMA, one per 4-deep step of K); i8 outside a K
    loop keeps the CUDA-core loop."""
    bf16 = MMA_KERNEL.replace("f16", "bf16").replace(  # mmaf has no bf16 accumulator
        "%dh = mmaf %h, %h, %h : tile<16x16xbf16>, tile<16x16xbf16>, tile<16x16xbf16>",
        "%z = constant <f32: 0.000000e+00> : tile<16x16xf32>\n"
        "    %dz = mmaf %h, %h, %z : tile<16x16xbf16>, tile<16x16xbf16>, tile<16x16xf32>\n"
        "    %dh = ftof %dz : tile<16x16xf32> -> tile<16x16xbf16>")
    assert "%dz = mmaf" in bf16
    for text, kind in ((MMA_KERNEL, "f16"), (bf16, "bf16")):
        for gpu in ("sm_80", "sm_90", "sm_120"):
            result = lower_text(text, gpu)
            assert result.ok, result.diagnostics
            mma = [line.strip() for line in result.ptx.splitlines() if "mma.sync.aligned.m16n8k16" in line]
            assert len(mma) == 1 and mma[0].startswith(
                f"mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32 {{%f"), mma
            dmma = [line.strip() for line in result.ptx.splitlines() if "mma.sync.aligned.m8n8k4" in line]
            assert len(dmma) == 16 // 4 and all(d.startswith(
                "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd") for d in dmma), dmma
            assert "fma.rn.f64" not in result.ptx  # the f64 MMA no longer on the CUDA cores
            exe = find_ptxas()
            if exe is not None:
                ok, log = run_ptxas(result.ptx, gpu)
                assert ok, (gpu, log)
    # K = 8, not a multiple of 16: the CUDA-core loop
    result = lower_text(K8_KERNEL, "sm_90")
    assert result.ok, result.diagnostics
    assert "mma.sync" not in result.ptx and "fma.rn.f32" in result.ptx


K8_KERNEL = """\
cuda_tile.module @m {
  entry @k8(%arg0: tile<ptr<f16>>, %arg1: tile<ptr<f32>>) {
    %0 = make_token : token
    %c0 = constant <i32: 0> : tile<i32>
    %ta = make_tensor_view %arg0, shape = [16, 8], strides = [8, 1] : tensor_view<16x8xf16, strides=[8,1]>
    %pa = make_partition_view %ta : partition_view<tile=(16x8), tensor_view<16x8xf16, strides=[8,1]>>
    %a, %t1 = load_view_tko weak %pa[%c0, %c0] token = %0 : partition_view<tile=(16x8), tensor_view<16x8xf16, strides=[8,1]>>, tile<i32> -> tile<16x8xf16>, token
    %b = reshape %a : tile<16x8xf16> -> tile<8x16xf16>
    %z = constant <f32: 0.000000e+00> : tile<16x16xf32>
    %d = mmaf %a, %b, %z : tile<16x8xf16>, tile<8x16xf16>, tile<16x16xf32>
    %tc = make_tensor_view %arg1, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf32, strides=[16,1]>
    %pc = make_partition_view %tc : partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>
    %s = store_view_tko weak %d, %pc[%c0, %c0] token = %t1 : tile<16x16xf32>, partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>, tile<i32> -> token
    return
  }
}
"""


def test_the_nv_tileas_verifiers_check_the_stage():
    """The stage is verified as nv_tileas: a wrong edit of it gets the nv_tileas diagnostics."""
    stage = lower_text(MMA_KERNEL, "sm_90", stop_after="nv_tileas").stages["nv_tileas"]
    acquire_without_scope = stage.replace('mem_scope = "gpu", ', '')
    assert [e.split(": ", 1)[1] for e in _errors(acquire_without_scope)] == [
        "'nv_tileas.tiled_load' op memory scope is required for acquire load"]
    view = r"!nv_tileas\.tiled_view<[^>]*>"
    f16_accumulator = re.sub(rf"nv_tileas.dot (%\w+), (%\w+), %[\w#]+ (\{{[^}}]*\}}) : ({view}), ({view}), \S+ ->",
                             r"nv_tileas.dot \1, \2, \1 \3 : \4, \5, \4 ->", stage, count=1)
    assert f16_accumulator != stage
    assert [e.split(": ", 1)[1] for e in _errors(f16_accumulator)] == [
        "'nv_tileas.dot' op expects c type to be Float32"]
    # the shared-memory staging is checked too: a buffer smaller than the tile stored into it
    small_buffer = stage.replace("!nv_tileas.tiled_view<16x16xi8, SMEM>", "!nv_tileas.tiled_view<16x8xi8, SMEM>")
    assert small_buffer != stage
    assert [e.split(": ", 1)[1] for e in _errors(small_buffer)] == [
        "'nv_tileas.tiled_store' op tile shape must match tensor shape"] * 2


def test_nv_tileas_ops_in_the_input_are_not_lowered():
    """The lowering's input is cuda_tile: nv_tileas text (e.g. a printed stage) gets a diagnostic, no crash."""
    stage = lower_text(MMA_KERNEL, "sm_90", stop_after="nv_tileas").stages["nv_tileas"]
    result = lower_text(stage, "sm_90")
    assert result.ptx is None
    messages = {d.message for d in result.diagnostics}
    assert "the PTX lowering does not support 'nv_tileas.tiled_load' yet" in messages
    assert "the PTX lowering does not support 'nv_tileas.dot' yet" in messages


def test_unsupported_op_is_a_diagnostic_naming_it():
    text = KERNEL.replace("    return\n", "    %p = alloca num_elem = 4, alignment = 16 : tile<ptr<f32>>\n    return\n")
    assert [d for d in analyze_text(text).diagnostics if d.severity == Severity.ERROR] == []
    result = lower_text(text, "sm_90")
    assert not result.ok and result.ptx is None
    msgs = [(d.message, d.range.start.line) for d in result.diagnostics]
    assert ("the PTX lowering does not support 'cuda_tile.alloca' yet", 11) in msgs


def test_target_type_incompatibility_uses_tileiras_wording():
    text = KERNEL.replace("%m = mulf %t, %b rounding<nearest_even> : tile<256xf32>",
                          "%m0 = mulf %t, %b rounding<nearest_even> : tile<256xf32>\n"
                          "    %q = ftof %m0 : tile<256xf32> -> tile<256xf8E4M3FN>\n"
                          "    %m = ftof %q : tile<256xf8E4M3FN> -> tile<256xf32>")
    bad = lower_text(text, "sm_80")
    assert [d.message for d in bad.diagnostics] == [
        "Incompatibility with architecture 'sm_80': unsupported type 'f8E4M3FN'"]
    assert bad.diagnostics[0].range.start.line == 10
    good = lower_text(text, "sm_90")
    assert good.ok and "cvt.rn.satfinite.e4m3x2.f32" in good.ptx


def _transpose_kernel(rows: int, cols: int) -> str:
    return f"""\
cuda_tile.module @m {{
  entry @transpose(%arg0: tile<ptr<f32>>, %arg1: tile<ptr<f32>>) {{
    %0 = make_token : token
    %a = make_tensor_view %arg0, shape = [{rows}, {cols}], strides = [{cols}, 1] : tensor_view<{rows}x{cols}xf32, strides=[{cols},1]>
    %b = make_tensor_view %arg1, shape = [{cols}, {rows}], strides = [{rows}, 1] : tensor_view<{cols}x{rows}xf32, strides=[{rows},1]>
    %pa = make_partition_view %a : partition_view<tile=({rows}x{cols}), tensor_view<{rows}x{cols}xf32, strides=[{cols},1]>>
    %pb = make_partition_view %b : partition_view<tile=({cols}x{rows}), tensor_view<{cols}x{rows}xf32, strides=[{rows},1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %t, %tok = load_view_tko weak %pa[%c0, %c0] token = %0 : partition_view<tile=({rows}x{cols}), tensor_view<{rows}x{cols}xf32, strides=[{cols},1]>>, tile<i32> -> tile<{rows}x{cols}xf32>, token
    %p = permute %t [1, 0] : tile<{rows}x{cols}xf32> -> tile<{cols}x{rows}xf32>
    %s = store_view_tko weak %p, %pb[%c0, %c0] token = %tok : tile<{cols}x{rows}xf32>, partition_view<tile=({cols}x{rows}), tensor_view<{cols}x{rows}xf32, strides=[{rows},1]>>, tile<i32> -> token
    return
  }}
}}
"""


def test_staging_beyond_the_targets_shared_memory_is_a_diagnostic_at_the_op():
    # The permute of a 128x256 f32 tile stages 128 KiB: within sm_80's 163 KB and sm_90/sm_100's 227 KB,
    # beyond the 99 KB of sm_86, sm_89 and sm_120; 256x256 (256 KiB) fits no target.
    from tile_lsp.codegen.target import TARGETS

    text = _transpose_kernel(128, 256)
    assert [d for d in analyze_text(text).diagnostics if d.severity == Severity.ERROR] == []
    for sm, target in TARGETS.items():
        result = lower_text(text, target.name)
        if target.max_smem >= 128 * 1024:
            assert result.ok, (target.name, result.diagnostics)
            assert result.kernels[0].dynamic_smem == 128 * 1024
        else:
            assert not result.ok and result.ptx is None
            assert [(d.message, d.range.start.line) for d in result.diagnostics] == [
                (f"staging needs 131072 bytes of shared memory per CTA; {target.name} allows at most "
                 f"{target.max_smem} bytes (99 KB)", 9)]  # the permute
    assert {t.name for t in TARGETS.values() if t.max_smem < 128 * 1024} == {"sm_86", "sm_89", "sm_120"}
    big = lower_text(_transpose_kernel(256, 256), "sm_90")
    assert [d.message for d in big.diagnostics] == [
        "staging needs 262144 bytes of shared memory per CTA; sm_90 allows at most 232448 bytes (227 KB)"]


def test_bad_input_and_bad_target_are_diagnostics():
    r = lower_text("cuda_tile.module @m { entry @k() { %x = addf } }", "sm_90")
    assert r.ptx is None and r.diagnostics and all(d.severity == Severity.ERROR for d in r.diagnostics)
    r = lower_text(KERNEL, "sm_75")
    assert r.ptx is None
    assert r.diagnostics[0].message.startswith("unsupported GPU 'sm_75'")
    r = lower_text(KERNEL, "sm_90", kernel="nope")
    assert [d.message for d in r.diagnostics] == ["no cuda_tile.entry named 'nope'"]


def test_cli_ptx_and_lower(tmp_path):
    _require_ptxas()
    src = tmp_path / "scale.mlir"
    src.write_text(KERNEL)
    out = tmp_path / "scale.ptx"
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "ptx", str(src), "--gpu-name", "sm_86",
                           "--ptxas", "-o", str(out)], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ".target sm_86" in out.read_text()
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "lower", str(src), "--stage", "layout"],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0 and "tile_lsp.slots" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "ptx", str(src), "--gpu-name", "sm_75"],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 1 and "unsupported GPU 'sm_75'" in proc.stderr


def test_ptx_of_every_target_is_accepted():
    _require_ptxas()
    for gpu in ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"):
        result = lower_text(KERNEL, gpu)
        ok, log = run_ptxas(result.ptx, gpu)
        assert ok, (gpu, log)


def test_lowering_the_callers_analysis_gives_the_same_stages_and_leaves_its_ir():
    from tile_lsp.analysis.api import analyze_text
    from tile_lsp.analysis.ir.printer import print_module

    analysis = analyze_text(KERNEL)
    printed = print_module(analysis.chunks[0].module)
    given = lower_text(KERNEL, "sm_80", file_name="scale.mlir", analysis=analysis)
    fresh = lower_text(KERNEL, "sm_80", file_name="scale.mlir")
    assert given.ok and given.stages == fresh.stages
    assert print_module(analysis.chunks[0].module) == printed
    # an analysis of another text is not used
    other = lower_text(KERNEL, "sm_80", file_name="scale.mlir", analysis=analyze_text("cuda_tile.module @x {\n}\n"))
    assert other.stages == fresh.stages


def test_sass_loop_bench_counts_the_executed_loop_of_a_k_loop():
    """``bench/sass_loop.py`` on the K loop of tests/test_vector_copy.py's kernel: the element copies
    removed (every alignment test taken as passed), the loop holds its 16 MMAs a warp (8 tiles, two
    k-steps), the cp.async of the next iteration's 2 + 2 vectors and no element load."""
    _require_ptxas()
    from bench.sass_loop import assume_aligned, measure
    from tests.test_vector_copy import KERNEL as K_LOOP

    ptx = lower_text(K_LOOP, "sm_90", file_name="k.mlir").ptx
    aligned = assume_aligned(ptx)
    assert "bra.uni $L_copied_ahead_" in aligned and not re.search(r"@%p\d+ bra\.uni \$L_copied_ahead_", aligned)
    assert re.search(r"@%p\d+ bra\.uni \$L_copied_ahead_", ptx)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k_loop.sm_90.mlir"
        path.write_text(K_LOOP)
        m = measure(path, "sm_90")
        whole = measure(path, "sm_90", as_is=True)
    ops = m["opcodes"]
    assert ops["HMMA.16816.F32"] == 16 and ops["LDGSTS.E.BYPASS.128"] == 4
    assert not any(op.startswith("LDG.E") for op in ops)  # the element copies are gone
    assert any(op.startswith("LDG.E") for op in whole["opcodes"]) and whole["instructions"] > m["instructions"]
