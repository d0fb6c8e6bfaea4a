"""Tests of the spec 003 verifier layers and the spec 004 frontend contract checks."""

from __future__ import annotations

import pytest

from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.verify.frontend_contract import check_frontend_contract, compute_capability_of
from tile_lsp.analysis.verify.layers import LAYERS, kernel_parameter_bytes, parameter_space_limit, run_layer
from tile_lsp.dialect import types as T


def module_of(text: str):
    return analyze_text(text).chunks[0].module


def entry(args: str) -> str:
    return f"cuda_tile.module @m {{\n  cuda_tile.entry @k({args}) {{\n    cuda_tile.return\n  }}\n}}"


def summary(diags):
    return [(d.message, d.range.start.line, d.range.start.character, d.code) for d in diags]


def test_layers_table():
    assert [(l.number, n) for n, l in LAYERS.items()] == [(1, "per-op"), (2, "between-pass"), (3, "module")]


def test_clean_module_passes_every_layer():
    m = module_of(entry("%a: !cuda_tile.tile<!cuda_tile.ptr<f32>>, %b: !cuda_tile.tile<i32>"))
    for name in LAYERS:
        assert run_layer(m, name, "canonicalize") == []


def test_per_op_layer_names_the_pass_in_a_note():
    m = module_of(entry("%a: !cuda_tile.tile<4xi32>"))
    got = run_layer(m, "per-op", "canonicalize")
    op_msg = "'cuda_tile.entry' op entry op must have scalar types (rank 0 !cuda_tile.tile)"
    assert summary(got) == [("pass failed; per-op verifier may have fired", 0, 0, "layer.per-op"),
                            (op_msg, 1, 2, "cuda_tile.entry.entry_signature")]
    assert [n.message for n in got[0].notes] == ["in pass 'canonicalize'", op_msg]


def test_between_pass_layer_catches_structural_failures():
    m = module_of('%1 = "test.use"(%0) : (i32) -> i32\n%0 = "test.src"() : () -> i32\n')
    assert run_layer(m, "per-op", "cse") == []
    assert summary(run_layer(m, "between-pass", "cse")) == [
        ("between-pass verifier rejected IR after 'cse'", 0, 0, "layer.between-pass"),
        ("operand #0 does not dominate this use", 0, 5, "structure.dominance")]  # MLIR: emitError, no op prefix


def test_module_layer_parameter_space():
    args = ", ".join(f"%a{i}: !cuda_tile.tile<!cuda_tile.ptr<f32>>" for i in range(600))
    m = module_of(entry(args))
    assert run_layer(m, "module", "nvvm-verify", sm=90) == []
    got = run_layer(m, "module", "nvvm-verify", sm=80)
    assert summary(got) == [
        ("module verifier 'nvvm-verify' rejected IR", 0, 0, "layer.module"),
        ("Formal parameter space overflowed (4800 bytes required, max 4096 bytes allowed) in function k for sm_80",
         1, 2, "layer.module.param-space")]


def test_module_layer_reads_the_module_target():
    args = ", ".join(f"%a{i}: !cuda_tile.tile<!cuda_tile.ptr<f32>>" for i in range(600))
    text = "module attributes {nv_tileaa.target_spec = \"sm_80\"} {\n" + entry(args) + "\n}"
    m = module_of(text)
    assert [d.code for d in run_layer(m, "module", "nvvm-verify")] == ["layer.module", "layer.module.param-space"]
    entry_op = next(op for op in m.walk() if op.name == "cuda_tile.entry")
    assert compute_capability_of(entry_op) == 80


def test_module_layer_kernel_metadata():
    """Spec 003 layer-3 example: a kernel-shaped function that lost its kernel marker is rejected."""
    shaped = ('"func.func"() ({\n}) {sym_name = "k", function_type = () -> (), nvvm.maxnreg = 64 : i32} : () -> ()\n')
    got = run_layer(module_of(shaped), "module", "nvvm-verify")
    assert summary(got) == [
        ("module verifier 'nvvm-verify' rejected IR", 0, 0, "layer.module"),
        (("function '@k' carries nvvm.maxnreg, which only a kernel has, but is not a kernel: none of "
          "cuda_tile.entry, nvvm.kernel, nv_tileaa.kernel_spec, cute.kernel marks it (it would be emitted as "
          ".func, not .entry)"), 0, 0, "layer.module.kernel-metadata")]
    for marker in ("nvvm.kernel", "nv_tileaa.kernel_spec", "cute.kernel"):
        marked = shaped.replace("nvvm.maxnreg", f"{marker}, nvvm.maxnreg")
        assert run_layer(module_of(marked), "module", "nvvm-verify") == []
    # a launch names a non-kernel function; the same launch of a cuda_tile.entry is accepted
    launch = ('"func.func"() ({\n}) {sym_name = "f", function_type = () -> ()} : () -> ()\n'
              '"gpu.launch_func"() {kernel = @f} : () -> ()\n')
    assert summary(run_layer(module_of(launch), "module", "nvvm-verify"))[1:] == [
        (("'gpu.launch_func' launches '@f', which is not a kernel: none of cuda_tile.entry, nvvm.kernel, "
          "nv_tileaa.kernel_spec, cute.kernel marks it"), 2, 0, "layer.module.kernel-metadata")]
    ok = entry("") + '\n"gpu.launch_func"() {kernel = @m::@k} : () -> ()\n'
    assert run_layer(module_of(ok), "module", "nvvm-verify") == []


def test_parameter_layout():
    ptr = T.TileType((), T.PointerType(T.FloatType("f32")))
    i8, i32 = T.TileType((), T.IntegerType(8)), T.TileType((), T.IntegerType(32))
    assert kernel_parameter_bytes([i8, ptr, i32]) == 20      # 1, pad to 8, +8 = 16, +4
    assert kernel_parameter_bytes([T.TileType((4,), T.IntegerType(32))]) is None
    assert parameter_space_limit(89) == 4096 and parameter_space_limit(90) == 32760


def test_unknown_layer():
    with pytest.raises(KeyError):
        run_layer(module_of(""), "nvvm", "x")


# ---------------------------------------------------------------------------
# Frontend contract (spec 004)
# ---------------------------------------------------------------------------


def contract(text: str):
    return [(d.severity.value, d.message, d.range.start.line) for d in check_frontend_contract(module_of(text))]


def test_contract_minimal_kernel_is_clean():
    text = ("module attributes {nv_tileaa.compute_capability = 90 : i32, tt.num_warps = 4 : i32} {\n"
            + entry("") + "\n}")
    assert analyze_text(text).diagnostics == []
    assert contract(text) == []


def test_contract_shell_and_compute_capability():
    assert contract(entry("")) == [
        ("warning", "'cuda_tile.entry' must be nested in a cuda_tile.module inside a builtin module carrying "
                    "the kernel-launch attributes", 1),
        ("warning", "Failed to get ComputeCapability", 1)]
    text = "module attributes {nv_tileaa.compute_capability = 91 : i32} {\n" + entry("") + "\n}"
    assert contract(text) == [
        ("warning", "nv_tileaa.compute_capability 91 is not a known target (70, 80, 89, 90, 100, 103, 120)", 0)]


def test_contract_launch_attributes():
    text = ("module attributes {nv_tileaa.target_spec = \"sm_100\", tt.num_warps = 0 : i32, "
            "my.num_warps = 8 : i32, tt.cluster_dim = array<i32: 2, 1>} {\n" + entry("") + "\n}")
    assert contract(text) == [
        ("error", "tt.num_warps must be a positive i32, but got 0", 0),
        ("error", "tt.cluster_dim must be an array of three positive integers, but got array<i32: 2, 1>", 0),
        ("warning", "'my.num_warps' is not read by tileiras (it reads tt.num_warps); the default is used instead", 0)]


def test_internal_dialect_rule():
    text = ('cuda_tile.module @m {\n  cuda_tile.entry @k() {\n'
            '    %0 = "nv_tileas.create_none"() : () -> i32\n    cuda_tile.return\n  }\n}')
    assert [(d.severity.value, d.message, d.range.start.line, d.range.start.character)
            for d in analyze_text(text).diagnostics] == [
        ("warning", "'nv_tileas.create_none' belongs to the internal dialect 'nv_tileas', which is not legal "
                    "input: a frontend must emit cuda_tile ops only", 2, 9)]


def test_stage_order():
    from tile_lsp.analysis.verify.layers import check_stage_order
    good = [{"cuda_tile-to-tileaa"}, {"tileaa-function-pass"}, {"tileaa-to-tileas"}, {"tileir-verify"},
            {"tileas-to-llvm", "llvm-conversion"}, {"kernel-metadata"}, {"address-space-conversion"},
            {"nvvm-verify"}, {"tileir-erased"}, {"serialize"}]
    assert check_stage_order(good) == []
    bad = [{"tileaa-function-pass"}, {"cuda_tile-to-tileaa"}, {"nvvm-verify"}, {"kernel-metadata"}]
    assert check_stage_order(bad) == [
        "Frontend conversion: 'cuda_tile-to-tileaa' must run before 'tileaa-function-pass'",
        "NVVM verification: 'kernel-metadata' must run before 'nvvm-verify'",
        "NVVM verification: 'address-space-conversion' must run before 'nvvm-verify'"]
