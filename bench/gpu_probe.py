"""Semantic probes: where our reading of Tile IR is in doubt, NVIDIA's tileiras cubin decides.

Each probe runs one kernel on one set of inputs three ways: our PTX, the
cubin tileiras compiles from the same kernel, and the reference interpreter
(every schedule outcome, ``tests.test_gpu.reference_outcomes``), and reports
per written array how many elements each pair disagrees on, also leaving
out the elements that depend on unspecified reads (out of bounds of a view
without padding value: those change when the interpreter reads 777 there).  Where a probe
carries alternative readings (NumPy models of the same kernel under another
semantics), each is compared with the cubin too.  The probes cover the
questions the H100 runs raised:

* ``custom_scans``: the order of a scan body's arguments (``tests/kernels``:
  "first non-zero" bodies, associative with identity 0 but not commutative),
  against both readings;
* ``advanced_index_*``: what the dense index of a ``gather_scatter_view``
  counts (tiles or elements), and rows outside the tensor;
* ``permute_reshape_3d`` / ``tiled_view_stencil``: kernels whose tile blocks
  share memory; the cubin is run several times to see its outcomes.

Two steps, because the GPU machine has no tileiras::

    python bench/gpu_probe.py prepare --out .devcarry/probes     # here: cubins + CTA sizes
    python bench/gpu_probe.py run --cubins .devcarry/probes --out OUT  # on the GPU machine

``run`` writes ``OUT/gpu_probe.json`` and prints one line per probe.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@dataclass
class Probe:
    """One kernel on one input set: ``arrays`` as ``tests.test_gpu._make`` takes them, ``models``:
    name -> function(inputs, scalars, grid) returning the written arrays under another reading."""

    name: str
    kernel: str
    arrays: list
    grid: tuple[int, int, int]
    scalars: list = field(default_factory=list)
    repeats: int = 1
    models: dict = field(default_factory=dict)
    rows: np.ndarray | None = None  # explicit gather indices (advanced_index probes)


def _gather_model(dense_is_tile: bool):
    """advanced_index_rows: out[16*b + i, :64] = 2 * x[idx[16*b + i], c:c + 64], rows outside x read as 0.

    ``c`` is ``64 * s`` when the dense index ``s`` counts tiles, ``s`` when it counts elements.
    """
    def model(inputs, scalars, grid):
        x, idx, out = (a.copy() for a in inputs)
        s = int(scalars[0])
        c = 64 * s if dense_is_tile else s
        for b in range(grid[0]):
            for i in range(16):
                r = int(idx[16 * b + i])
                row = np.zeros(64, x.dtype)
                if 0 <= r < x.shape[0]:
                    cols = np.arange(c, c + 64)
                    ok = (cols >= 0) & (cols < x.shape[1])
                    row[ok] = x[r, cols[ok]]
                out[16 * b + i] = 2 * row
        return [x, idx, out]
    return model


def _coalesce_model(acc_first: bool):
    """custom_scans under one binding of the body's arguments: ``f(acc, x)`` (``acc_first``) or ``f(x, acc)``.

    Scans 1 and 2 (dim 1, forward and reverse) yield the first non-zero of
    (lhs, rhs), scan 3 (dim 0) the first non-zero of (rhs, lhs); the identity is 0.
    """
    def first_nonzero(a, b):
        return np.where(a != 0, a, b)

    def scan(x, axis, reverse, body):
        x = np.moveaxis(x, axis, 0)
        out = np.empty_like(x)
        acc = np.zeros_like(x[0])
        for k in (range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])):
            lhs, rhs = (acc, x[k]) if acc_first else (x[k], acc)
            acc = body(lhs, rhs)
            out[k] = acc
        return np.moveaxis(out, 0, axis)

    def model(inputs, scalars, grid):
        x = inputs[0]
        return [x, scan(x.reshape(-1, 16, 128), 2, False, first_nonzero).reshape(x.shape),
                scan(x.reshape(-1, 16, 128), 2, True, first_nonzero).reshape(x.shape),
                scan(x.reshape(-1, 16, 128), 1, False, lambda a, b: first_nonzero(b, a)).reshape(x.shape)]
    return model


def probes() -> list[Probe]:
    """The probes (see the module docstring)."""
    F32 = "float32"
    adv = "advanced_index_rows_f32_r16_c64.sm_90"
    models = {"dense index counts tiles": _gather_model(True), "dense index counts elements": _gather_model(False)}
    in_range = np.arange(32, dtype=np.int32)[::-1] % 40
    outside = np.array([0, 39, 40, 41, -1, -40, 5, 6] * 4, np.int32)
    return [
        Probe("custom_scans", "custom_scans_f32_16x128.sm_90", [((32, 128), F32, "sparse")]
              + [((32, 128), F32, "zeros")] * 3, (2, 1, 1),
              models={"f(accumulator, element)": _coalesce_model(True), "f(element, accumulator)": _coalesce_model(False)}),
        Probe("advanced_index_dense0", adv, [((40, 128), F32, "normal"), ((32,), "int32", "rows40"),
                                             ((32, 64), F32, "zeros")], (2, 1, 1), [0], models=models, rows=in_range),
        Probe("advanced_index_dense1", adv, [((40, 128), F32, "normal"), ((32,), "int32", "rows40"),
                                             ((32, 64), F32, "zeros")], (2, 1, 1), [1], models=models, rows=in_range),
        Probe("advanced_index_random_rows", adv, [((40, 128), F32, "normal"), ((32,), "int32", "rows40"),
                                                  ((32, 64), F32, "zeros")], (2, 1, 1), [1], models=models),
        Probe("advanced_index_rows_outside", adv, [((40, 128), F32, "normal"), ((32,), "int32", "rows40"),
                                                   ((32, 64), F32, "zeros")], (2, 1, 1), [1], models=models,
              rows=outside),
        Probe("permute_reshape_3d", "permute_reshape_3d_f32_4x8x16.sm_90",
              [((8, 8, 16), F32, "normal"), ((16, 8, 8), F32, "zeros"), ((1024,), F32, "zeros")], (2, 1, 1),
              repeats=5),
        Probe("tiled_view_stencil", "tiled_view_stencil_f32_t64_h32.sm_90",
              [((256,), F32, "normal"), ((256,), F32, "zeros"), ((128,), "int32", "zeros")], (4, 1, 1), repeats=5),
    ]


def _text(kernel: str) -> str:
    from tests.test_gpu import kernel_path
    return kernel_path(kernel).read_text()


def prepare(args) -> None:
    """Compile each probe kernel with tileiras for its target; record the CTA size (``EIATTR_REQNTID``)."""
    from tile_lsp.nvidia import find_tool

    tileiras, cuobjdump = find_tool("tileiras"), find_tool("cuobjdump")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    info = {}
    for kernel in sorted({p.kernel for p in probes()}):
        target = re.search(r"sm_\d+", kernel).group(0)
        with tempfile.TemporaryDirectory() as tmp:
            bc = Path(tmp) / "k.tileirbc"
            src = Path(str(_kernel_file(kernel))[:-len(".mlir")] + ".tileirbc")
            if not src.exists():
                subprocess.run([sys.executable, "-m", "tile_lsp.cli", "translate", "--to-bytecode",
                                str(_kernel_file(kernel)), "-o", str(bc)], check=True, cwd=ROOT)
                src = bc
            cubin = out / f"{kernel}.cubin"
            subprocess.run([tileiras, "--gpu-name", target, str(src), "-o", str(cubin)], check=True)
        elf = subprocess.run([cuobjdump, "-elf", str(cubin)], capture_output=True, text=True, check=True).stdout
        m = re.search(r"EIATTR_REQNTID\s+Format:\s*\S+\s+Value:\s*(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)", elf)
        info[kernel] = {"threads": [int(v, 16) for v in m.groups()] if m else None}
        print(kernel, info[kernel])
    (out / "probes.json").write_text(json.dumps(info, indent=1))


def _kernel_file(kernel: str) -> Path:
    from tests.test_gpu import kernel_path
    return kernel_path(kernel)


def _mismatch(a, b) -> int:
    a, b = np.asarray(a), np.asarray(b)
    if np.issubdtype(a.dtype, np.integer):
        return int(np.count_nonzero(a != b))
    return int(np.count_nonzero(~np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-5,
                                            equal_nan=True)))


def run(args) -> None:
    """Run every probe on the GPU; write ``gpu_probe.json`` under ``--out``."""
    from tests.test_gpu import _make, reference_outcomes
    from tile_lsp.analysis import interpreter as interp
    from tile_lsp.codegen import launch, lower_text

    cubins = Path(args.cubins)
    info = json.loads((cubins / "probes.json").read_text())
    report = {"device": launch.device_name(), "probes": []}
    for p in probes():
        text = _text(p.kernel)
        target = re.search(r"sm_\d+", p.kernel).group(0)
        roles = interp.infer_array_params(text)
        rng = np.random.default_rng(1234)
        inputs = [_make(*a, rng) for a in p.arrays]
        if p.rows is not None:
            inputs[1][...] = p.rows
        row = {"probe": p.name, "kernel": p.kernel, "grid": p.grid, "scalars": p.scalars}
        try:
            refs = reference_outcomes(text, roles, inputs, p.scalars, p.grid)
        except Exception as e:  # noqa: BLE001 - reported, the probe goes on without a reference
            refs, row["ref_error"] = [], f"{type(e).__name__}: {e}"
        result = lower_text(text, target)
        k = result.kernels[0]
        ptypes = [t for t, _ in k.params]

        def gpu(image, threads, smem):
            arrays = [a.copy() for a in inputs]
            mod = launch.Module(image)
            try:
                launch.launch(mod, k.name, ptypes, interp.bind_arrays(roles, arrays, p.scalars), p.grid, threads,
                              smem)
            finally:
                mod.unload()
            return arrays

        ours = gpu(result.ptx.encode(), k.threads, k.dynamic_smem)
        cubin = (cubins / f"{p.kernel}.cubin").read_bytes()
        theirs = [gpu(cubin, tuple(info[p.kernel]["threads"]), 0) for _ in range(p.repeats)]
        models = {name: fn(inputs, p.scalars, p.grid) for name, fn in p.models.items()}
        # elements that depend on unspecified reads (out of bounds, no padding value): they change when
        # the interpreter reads another value there
        undefined = [np.zeros(a.shape, bool) for a in inputs]
        if refs:
            runs = []
            for value in (0.0, 777.0):
                arrays = [a.copy() for a in inputs]
                interp.run_kernel(text, None, interp.bind_arrays(roles, arrays, p.scalars), p.grid, schedule=0,
                                  unspecified=value)
                runs.append(arrays)
            undefined = [~np.isclose(np.asarray(a, np.float64), np.asarray(b, np.float64), equal_nan=True)
                         for a, b in zip(*runs)]
        arrays = []
        for i in range(len(inputs)):
            a = {"array": i,
                 "ours_vs_refs": [_mismatch(ours[i], r[i]) for r in refs],
                 "tileiras_vs_refs": [[_mismatch(t[i], r[i]) for r in refs] for t in theirs],
                 "ours_vs_tileiras": [_mismatch(ours[i], t[i]) for t in theirs],
                 "unspecified_elements": int(undefined[i].sum()),
                 "ours_vs_tileiras_specified": [_mismatch(ours[i][~undefined[i]], t[i][~undefined[i]])
                                                for t in theirs],
                 "tileiras_vs_models": {n: [_mismatch(t[i], m[i]) for t in theirs] for n, m in models.items()}}
            if np.issubdtype(inputs[i].dtype, np.integer) and inputs[i].size <= 256:
                a["tileiras_values"] = sorted({int(v) for t in theirs for v in np.unique(t[i])})[:16]
            arrays.append(a)
        row["reference_outcomes"] = len(refs)
        row["arrays"] = arrays
        report["probes"].append(row)
        print(json.dumps(row))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_probe.json").write_text(json.dumps(report, indent=1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="mode", required=True)
    pr = sub.add_parser("prepare")
    pr.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("--cubins", required=True)
    r.add_argument("--out", required=True)
    args = p.parse_args()
    {"prepare": prepare, "run": run}[args.mode](args)


if __name__ == "__main__":
    main()
