"""Scans and reductions over many shapes, dimensions, CTA sizes and element types, on the emulator.

Each case is a small kernel written here (one 2-d or 3-d tile loaded from an array, one scan or
reduce, its result stored), lowered with a CTA of 1, 2, 4 or 8 warps (the ``num_worker_warps_per_cta``
hint), run on tests/ptx_emulator.py and compared with the interpreter's result: lanes, warps, slots
and replicas (tiles smaller than the CTA) in every combination of the plans of
tile_lsp/codegen/scans.py and reductions.py, bodies that commute and one that does not (the first
non-zero element), forward and reversed.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests import ptx_emulator as emu
from tile_lsp.analysis import interpreter as interp
from tile_lsp.codegen import lower_text

BODIES = {
    "add": "%y = {add} %a, %b : tile<{t}>\n    yield %y : tile<{t}>",
    "max": "%y = {max} %b, %a{msigned} : tile<{t}>\n    yield %y : tile<{t}>",
    "first_nonzero": ("%z = constant <{t}: 0{zero}> : tile<{t}>\n"
                      "    %nz = {cmp} %a, %z{signed} : tile<{t}> -> tile<i1>\n"
                      "    %y = select %nz, %a, %b : tile<i1>, tile<{t}>\n    yield %y : tile<{t}>"),
}
TYPES = {  # element type -> (add, max, not-equal compare, ' signed' suffix, zero literal suffix, numpy dtype)
    "f32": ("addf", "maxf", "cmpf not_equal ordered", "", ".0", np.float32),
    "i32": ("addi", "maxi", "cmpi not_equal", ", signed", "", np.int32),
    "f64": ("addf", "maxf", "cmpf not_equal ordered", "", ".0", np.float64),
    "i16": ("addi", "maxi", "cmpi not_equal", ", signed", "", np.int16),
}


def _kernel(shape: tuple[int, ...], dim: int, op: str, body: str, t: str, warps: int, reverse: bool) -> str:
    add, mx, cmp, signed, zero, _ = TYPES[t]
    r = len(shape)
    tile = "x".join(map(str, shape))
    dyn = ",".join("?" * r)
    out_shape = shape if op == "scan" else shape[:dim] + shape[dim + 1:]
    otile = "x".join(map(str, out_shape))
    orank = len(out_shape)
    odyn = ",".join("?" * orank)
    args = ", ".join(f"%s{i}: tile<i32>, %t{i}: tile<i32>" for i in range(r))
    oargs = ", ".join(f"%u{i}: tile<i32>, %v{i}: tile<i32>" for i in range(orank))
    zeros = ", ".join(["%c0"] * r)
    ozeros = ", ".join(["%c0"] * orank)
    text = BODIES[body].format(add=add, max=mx, cmp=cmp, signed=signed, msigned=signed.replace(",", ""),
                               zero=zero, t=t)
    ident = {"add": "0", "max": "-1000", "first_nonzero": "0"}[body] + (zero if t.startswith("f") else "")
    head = f"{op} %x dim={dim}" + (f" reverse={'true' if reverse else 'false'}" if op == "scan" else "")
    return f"""entry @k(%p: tile<ptr<{t}>>, {args}, %q: tile<ptr<{t}>>, {oargs}) optimization_hints=<default = {{num_worker_warps_per_cta = {warps}}}> {{
  %tok = make_token : token
  %tv = make_tensor_view %p, shape = [{", ".join(f"%s{i}" for i in range(r))}], strides = [{", ".join(f"%t{i}" for i in range(r))}] : tile<i32> -> tensor_view<{dyn.replace(",", "x")}x{t}, strides=[{dyn}]>
  %pv = make_partition_view %tv : partition_view<tile=({tile}), tensor_view<{dyn.replace(",", "x")}x{t}, strides=[{dyn}]>>
  %ov = make_tensor_view %q, shape = [{", ".join(f"%u{i}" for i in range(orank))}], strides = [{", ".join(f"%v{i}" for i in range(orank))}] : tile<i32> -> tensor_view<{odyn.replace(",", "x")}x{t}, strides=[{odyn}]>
  %po = make_partition_view %ov : partition_view<tile=({otile}), tensor_view<{odyn.replace(",", "x")}x{t}, strides=[{odyn}]>>
  %c0 = constant <i32: 0> : tile<i32>
  %x, %lt = load_view_tko weak %pv[{zeros}] token = %tok : partition_view<tile=({tile}), tensor_view<{dyn.replace(",", "x")}x{t}, strides=[{dyn}]>>, tile<i32> -> tile<{tile}x{t}>, token
  %res = {head} identities=[{ident} : {t}] : tile<{tile}x{t}> -> tile<{otile}x{t}>
  (%a: tile<{t}>, %b: tile<{t}>) {{
    {text}
  }}
  %st = store_view_tko weak %res, %po[{ozeros}] token = %tok : tile<{otile}x{t}>, partition_view<tile=({otile}), tensor_view<{odyn.replace(",", "x")}x{t}, strides=[{odyn}]>>, tile<i32> -> token
  return
}}
"""


# (shape, dim, op, body, type, warps, reverse): lanes / warps / slots / replicas in turn
CASES = [
    ((8, 64), 1, "scan", "add", "f32", 1, False),         # lanes + a chain of 2 slots
    ((8, 64), 1, "scan", "first_nonzero", "i32", 1, True),
    ((64, 8), 0, "scan", "first_nonzero", "f32", 2, False),  # lane bits 3-4, warp bit, slots
    ((4, 4), 1, "scan", "add", "i32", 4, True),           # 16 elements in 128 threads: replicas
    ((2, 256), 1, "scan", "max", "f64", 8, False),        # lanes and 3 warp bits, one slot
    ((2, 8, 16), 1, "scan", "first_nonzero", "f32", 2, True),  # middle dimension: lane bit 4, warp, slots
    ((32, 32), 0, "scan", "add", "i16", 4, False),        # warps then slots
    ((16, 16), 1, "reduce", "first_nonzero", "f32", 2, False),  # lanes 0-3, in order
    ((16, 64), 1, "reduce", "first_nonzero", "i32", 1, False),  # lanes then slots: the sequential loop
    ((64, 16), 0, "reduce", "max", "f64", 4, False),
    ((4, 8), 0, "reduce", "add", "i16", 2, False),        # replicated
    ((2, 16, 8), 1, "reduce", "first_nonzero", "f32", 4, False),
    ((64, 32), 1, "reduce", "add", "f32", 1, False),      # 64 row partials over 5 lane steps: 2 left a lane
    ((16, 256), 1, "reduce", "max", "i32", 4, False),     # fold 2, 16 partials halved 4 times, 4 warps
    ((8, 16), 1, "reduce", "add", "f64", 2, False),       # two-half shuffles of halved partials
]


@pytest.mark.parametrize("shape, dim, op, body, t, warps, reverse", CASES,
                         ids=[f"{c[2]}-{c[3]}-{'x'.join(map(str, c[0]))}-d{c[1]}-{c[4]}-w{c[5]}{'-rev' if c[6] else ''}"
                              for c in CASES])
def test_scan_and_reduce_match_the_interpreter_on_the_emulator(shape, dim, op, body, t, warps, reverse):
    text = _kernel(shape, dim, op, body, t, warps, reverse)
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, [d.message for d in result.diagnostics]
    assert result.kernels[0].threads == 32 * warps
    dtype = TYPES[t][5]
    rng = np.random.default_rng(len(shape) * 100 + dim * 10 + warps)
    x = rng.integers(-4, 5, shape)
    x = np.where(rng.uniform(size=shape) < 0.5, 0, x).astype(dtype)  # zeros for the first-non-zero body
    out_shape = shape if op == "scan" else shape[:dim] + shape[dim + 1:]
    want = np.zeros(out_shape, dtype)
    got = np.zeros(out_shape, dtype)

    def bind(a, o):
        args = [a]
        for d, s in zip(a.shape, a.strides):
            args += [d, s // a.itemsize]
        args.append(o)
        for d, s in zip(o.shape, o.strides):
            args += [d, s // o.itemsize]
        return args

    interp.run_kernel(text, None, bind(x, want), (1, 1, 1))
    info = result.kernels[0]
    emu.run(result.ptx, info.name, [p for p, _ in info.params], bind(x, got), (1, 1, 1), info.threads,
            info.dynamic_smem)
    np.testing.assert_array_equal(got, want)
