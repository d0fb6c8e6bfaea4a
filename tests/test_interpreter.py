"""The reference interpreter: corpus kernels against independent NumPy computations.

Each corpus test runs a real cuTile kernel (``../shared/corpus/kernels``) on
small random arrays and compares with what the kernel family computes,
written directly in NumPy.  Small hand-written kernels pin the numerics
(directed rounding, fused multiply-add, integer semantics) and the errors.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from tests.conftest import CORPUS, require_corpus
from tile_lsp.analysis.interpreter import (
    InterpreterError,
    bind_arrays,
    infer_array_params,
    load_module,
    run_kernel,
    supported_ops,
)

KERNELS = CORPUS / "kernels"
# ops that structure a module rather than execute in a tile block
STRUCTURAL = {"entry", "module", "global"}


@cache
def _module(name: str):
    """The analysed IR of corpus kernel file ``name`` (e.g. ``softmax_rows_f32_16x256.sm_90``)."""
    require_corpus()
    path = KERNELS / f"{name}.mlir"
    module = load_module(path.read_text(encoding="utf-8"))
    unknown = {o.short_name for o in module.walk()} - supported_ops() - STRUCTURAL
    assert not unknown, f"{name}: ops the interpreter lacks: {sorted(unknown)}"
    return module


def _run(name: str, arrays: list, scalars=(), grid=(1, 1, 1), **kw):
    module = _module(name)
    roles = infer_array_params(module)
    run_kernel(module, None, bind_arrays(roles, arrays, scalars), grid, **kw)


RNG = np.random.default_rng(20240601)


# ---------------------------------------------------------------------------
# coverage of the corpus
# ---------------------------------------------------------------------------

_OP_AT_LINE = re.compile(r"^\s*(?:%[^=()]*=\s*)?([a-z_][a-z0-9_]*)\b")


def test_every_corpus_op_has_an_implementation(corpus: Path):
    """Every op of every corpus kernel (by the manifest and by the text) is in the op table."""
    manifest = (corpus / "kernels" / "MANIFEST.tsv").read_text().splitlines()
    header = manifest[0].split("\t")
    col = header.index("ops")
    listed = set()
    for row in manifest[1:]:
        listed.update(row.split("\t")[col].split(","))
    in_text = set()
    files = sorted((corpus / "kernels").glob("*.mlir"))
    assert len(files) > 200
    for f in files:
        for line in f.read_text().splitlines():
            m = _OP_AT_LINE.match(line)
            if m and not line.lstrip().startswith(("}", "(", "//", "#")):
                in_text.add(m.group(1))
    in_text -= {"loc", "else"}  # `} else {` is caught above; `loc(` lines of .g.mlir
    assert "mmaf_scaled" in listed and "atomic_cas_tko" in in_text
    missing = (listed | in_text) - supported_ops() - STRUCTURAL
    assert not missing, sorted(missing)


# ---------------------------------------------------------------------------
# parameter roles
# ---------------------------------------------------------------------------


def _roles(name: str) -> list[tuple]:
    return [(r.kind, r.array, r.dim) for r in infer_array_params(_module(name))]


def test_roles_from_tensor_views_and_offsets():
    # arrays 0 and 2 are addressed with `offset`, array 1 with a tensor view; the last i32 is a scalar
    assert _roles("gather_scatter_1d_f32_i32_b256.sm_80") == [
        ("pointer", 0, None), ("shape", 0, 0), ("stride", 0, 0),
        ("pointer", 1, None), ("shape", 1, 0), ("stride", 1, 0),
        ("pointer", 2, None), ("shape", 2, 0), ("stride", 2, 0),
        ("scalar", None, None),
    ]


def test_roles_static_shapes_and_lists():
    # static shapes/strides in the view: the parameters keep their positional roles
    assert _roles("static_shape_copy_f32_static256x256_32x32.sm_120") == [
        ("pointer", 0, None), ("shape", 0, 0), ("shape", 0, 1), ("stride", 0, 0), ("stride", 0, 1),
        ("pointer", 1, None), ("shape", 1, 0), ("shape", 1, 1), ("stride", 1, 0), ("stride", 1, 1),
    ]
    # a list of arrays: an i64 table with its length; then the output array
    assert _roles("list_weighted_sum_f32_list_t256.sm_80") == [
        ("pointer", 0, None), ("shape", 0, 0),
        ("pointer", 1, None), ("shape", 1, 0), ("stride", 1, 0),
    ]
    roles = infer_array_params(_module("list_weighted_sum_f32_list_t256.sm_80"))
    assert roles[0].rank == 2 and str(roles[0].element) == "i64"


def test_bind_arrays_uses_element_strides():
    roles = infer_array_params(_module("softmax_rows_f32_16x256.sm_90"))
    x = np.zeros((32, 256), np.float32)
    y = np.zeros((512, 256), np.float32)[::2]  # a row-strided view
    assert bind_arrays(roles, [x, y]) == [x, 32, 256, 256, 1, y, 256, 256, 512, 1]
    with pytest.raises(ValueError, match="takes 2 arrays"):
        bind_arrays(roles, [x])


# ---------------------------------------------------------------------------
# corpus kernels against NumPy
# ---------------------------------------------------------------------------


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_softmax_rows_f32():
    x = RNG.standard_normal((48, 256)).astype(np.float32)
    y = np.full_like(x, np.nan)
    _run("softmax_rows_f32_16x256.sm_90", [x, y], grid=(3, 1, 1))
    np.testing.assert_allclose(y, _softmax(x.astype(np.float64)), rtol=1e-5, atol=1e-7)


def test_softmax_rows_bf16():
    x = RNG.standard_normal((16, 512)).astype(ml_dtypes.bfloat16)
    y = np.zeros_like(x)
    _run("softmax_rows_bf16_8x512.sm_100", [x, y], grid=(2, 1, 1))
    np.testing.assert_allclose(y.astype(np.float64), _softmax(x.astype(np.float64)), rtol=2e-2, atol=1e-4)


def test_reduce_rows_cols_f32():
    x = RNG.standard_normal((128, 128)).astype(np.float32)
    sums = np.zeros(128, np.float32)
    maxes = np.zeros((128, 1), np.float32)
    colmin = np.zeros((2, 128), np.float32)
    colprod = np.zeros(256, np.float32)
    _run("reduce_rows_cols_f32_64x128.sm_90", [x, sums, maxes, colmin, colprod], grid=(2, 1, 1))
    np.testing.assert_allclose(sums, x.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(maxes[:, 0], x.max(axis=1))
    np.testing.assert_array_equal(colmin, x.reshape(2, 64, 128).min(axis=1))
    np.testing.assert_allclose(colprod, x.astype(np.float64).reshape(2, 64, 128).prod(axis=1).reshape(-1),
                               rtol=1e-4)


def test_prefix_scans_i32_wraps():
    x = RNG.integers(-3, 4, (64, 64)).astype(np.int32)
    x[5, 3] = 2**31 - 1  # the running sums wrap at 32 bits
    rows, cols, rev = (np.zeros_like(x) for _ in range(3))
    _run("prefix_scans_i32_32x64.sm_90", [x, rows, cols, rev], grid=(2, 1, 1))
    wide = x.astype(np.int64)
    np.testing.assert_array_equal(rows, np.cumsum(wide, axis=1).astype(np.int32))
    blocks = wide.reshape(2, 32, 64)
    np.testing.assert_array_equal(cols, np.cumprod(blocks, axis=1).reshape(64, 64).astype(np.int32))
    np.testing.assert_array_equal(rev, np.cumsum(wide[:, ::-1], axis=1)[:, ::-1].astype(np.int32))


def test_prefix_scans_f32():
    x = RNG.uniform(0.5, 1.5, (32, 128)).astype(np.float32)
    rows, cols, rev = (np.zeros_like(x) for _ in range(3))
    _run("prefix_scans_f32_16x128.sm_90", [x, rows, cols, rev], grid=(2, 1, 1))
    # the scan is sequential in f32: the same order as np.cumsum in f32
    np.testing.assert_array_equal(rows, np.cumsum(x, axis=1, dtype=np.float32))
    np.testing.assert_array_equal(cols, np.cumprod(x.reshape(2, 16, 128), axis=1, dtype=np.float32).reshape(32, 128))
    np.testing.assert_array_equal(rev, np.cumsum(x[:, ::-1], axis=1, dtype=np.float32)[:, ::-1])


def test_matmul_tiled_f16():
    a = RNG.standard_normal((256, 64)).astype(np.float16)
    b = RNG.standard_normal((64, 256)).astype(np.float16)
    c = np.zeros((256, 256), np.float16)
    _run("matmul_tiled_f16_128x128x32.sm_90", [a, b, c], grid=(4, 1, 1))
    want = (a.astype(np.float64) @ b.astype(np.float64))
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name,dtype", [("matmul_int8_i8_128x128x64.sm_90", np.int8),
                                        ("matmul_int8_u8_64x64x64.sm_90", np.uint8)])
def test_matmul_int8_is_exact(name, dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max + 1, (128, 128)).astype(dtype)
    b = RNG.integers(info.min, info.max + 1, (128, 128)).astype(dtype)
    c = np.zeros((128, 128), np.int32)
    tiles = 1 if "128x128" in name else 2
    _run(name, [a, b, c], grid=(tiles, tiles, 1))
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


def test_permute_reshape_3d_f32_with_dim_map():
    x = RNG.standard_normal((8, 8, 16)).astype(np.float32)
    x0 = x.copy()
    y = np.zeros((16, 16, 8), np.float32)
    flat = np.zeros(1024, np.float32)
    _run("permute_reshape_3d_f32_4x8x16.sm_90", [x, y, flat], grid=(2, 1, 1))
    want_y = np.zeros_like(y)
    want_x = np.zeros_like(x)
    for blk in range(2):  # tile blocks run one after the other
        want_y[:, 4 * blk:4 * blk + 4, :] = x0[4 * blk:4 * blk + 4].transpose(2, 0, 1)
        # load with tile=(16x4x8), dim_map=[1, 2, 0] at [0, blk, 0]: t[a, b, c] = y[c, a, 4 * blk + b]
        t = want_y[0:8, 0:16, 4 * blk:4 * blk + 4].transpose(1, 2, 0)
        want_x[4 * blk:4 * blk + 4] = np.transpose(t, [1, 2, 0]) + 1
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(flat, x0.reshape(-1))
    np.testing.assert_array_equal(x, want_x)


def test_cat_extract_insert_f32():
    a = RNG.standard_normal((32, 16)).astype(np.float32)
    b = RNG.standard_normal((32, 16)).astype(np.float32)
    big = np.full((64, 32), np.nan, np.float32)
    diff = np.zeros((32, 16), np.float32)
    _run("cat_extract_insert_f32_t16.sm_90", [a, b, big, diff], grid=(2, 1, 1))
    want = np.zeros((2, 32, 32), np.float32)
    want[:, :16, :16] = b.reshape(2, 16, 16)  # extract(cat(a, b, dim=1))[0, 1]
    want[:, 16:, 16:] = b.reshape(2, 16, 16)  # extract(cat(a, b, dim=0))[1, 0]
    np.testing.assert_array_equal(big, want.reshape(64, 32))
    np.testing.assert_array_equal(diff, a - b)


def test_gather_scatter_1d_f32():
    n = 512
    x = RNG.standard_normal(300).astype(np.float32)
    idx = RNG.permutation(n).astype(np.int32) - 100  # negative and out-of-range indices too
    out = np.zeros(n, np.float32)
    limit = 400
    _run("gather_scatter_1d_f32_i32_b256.sm_90", [x, idx, out], scalars=[limit], grid=(2, 1, 1))
    want = np.zeros(n, np.float32)
    for blk in range(2):  # tile blocks run one after the other
        t = idx[blk * 256:(blk + 1) * 256].astype(np.int64)
        keep = t < limit
        ok = keep & (t >= 0) & (t < x.size)
        g = np.where(ok, x[np.clip(t, 0, x.size - 1)], np.float32(-1.0))
        h = x[t % 256]
        pos = blk * 256 + np.arange(256)
        want[pos[keep]] = (g + h)[keep]
        dst = (t >= 0) & (t < n)
        want[t[dst]] = g[dst]
    np.testing.assert_array_equal(out, want)


def test_atomic_histogram_f32():
    x = RNG.uniform(-0.2, 1.2, 1024).astype(np.float32)
    x[[3, 700]] = np.nan
    hist = np.zeros(64, np.int32)
    total = np.zeros(1, np.float32)
    _run("atomic_histogram_f32_bins64_b512.sm_90", [x, hist, total], grid=(2, 1, 1))
    valid = ~np.isnan(x)
    clipped = np.minimum(np.maximum(x[valid], np.float32(0)), np.float32(0.999))
    bins = np.trunc(clipped * np.float32(64)).astype(np.int64)
    np.testing.assert_array_equal(hist, np.bincount(bins, minlength=64))
    np.testing.assert_allclose(total[0], x[valid].sum(dtype=np.float64), rtol=1e-5)


def test_while_break_search_f32():
    x = RNG.uniform(0, 1, 256 * 5).astype(np.float32)
    x[256 * 3 + 17] = 6.5
    out = np.zeros(3, np.int32)
    _run("while_break_search_f32_b256.sm_90", [x, out], scalars=[5.0], grid=(3, 1, 1))
    # block b searches the first tile whose max exceeds 5 + b; the for loop counts even tiles
    evens = 3
    np.testing.assert_array_equal(out, [3 * 1000 + evens, 3 * 1000 + evens, -1000 + evens])


def test_advanced_index_rows_gathers_rows():
    x = RNG.standard_normal((40, 128)).astype(np.float32)
    rows = np.array(list(range(39, 39 - 30, -1)) + [55, 1], dtype=np.int32)  # 55 is out of bounds
    out = np.full((32, 64), np.nan, np.float32)
    _run("advanced_index_rows_f32_r16_c64.sm_90", [x, rows, out], scalars=[1], grid=(2, 1, 1))
    # the dense index (1) counts elements, as tileiras compiles it: columns 1..64, not tile 1 (64..127)
    want = np.where((rows < 40)[:, None], 2 * x[np.minimum(rows, 39), 1:65], 0)
    np.testing.assert_array_equal(out, want)


def test_tiled_view_stencil_strided_view_and_atomic_reduction():
    x = RNG.standard_normal(256).astype(np.float32)
    y = np.zeros(256, np.float32)
    counts = np.zeros(128, np.int32)
    _run("tiled_view_stencil_f32_t64_h32.sm_90", [x, y, counts], grid=(4, 1, 1))
    xp = np.concatenate([x, np.zeros(64, np.float32)])  # padding_value = zero past the end
    j = np.arange(256)
    want = (xp[j] + np.float32(2) * xp[j + 32] + xp[j + 64]) * np.float32(0.25)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    c = np.zeros(128, np.int64)
    for blk in range(4):
        tile = blk % 2
        c[tile * 64:(tile + 1) * 64] += 1
        c[:64] = np.maximum(c[:64], 7)
    np.testing.assert_array_equal(counts, c)


def test_list_weighted_sum_reaches_arrays_through_int_to_ptr():
    parts = [RNG.standard_normal(300).astype(np.float32) for _ in range(3)]
    table = np.array([[p.ctypes.data, p.size, 1] for p in parts], dtype=np.int64)
    out = np.zeros(512, np.float32)
    _run("list_weighted_sum_f32_list_t256.sm_90", [table, out], grid=(2, 1, 1), memory=parts)
    padded = np.zeros((3, 512), np.float32)
    for i, p in enumerate(parts):
        padded[i, :p.size] = p
    want = (padded.astype(np.float64) * np.arange(1, 4)[:, None]).sum(axis=0)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_list_weighted_sum_without_registered_memory_faults():
    parts = [np.ones(256, np.float32)]
    table = np.array([[parts[0].ctypes.data, 256, 1]], dtype=np.int64)
    with pytest.raises(InterpreterError, match=r"^line \d+: 'cuda_tile.load_view_tko': memory fault: address"):
        _run("list_weighted_sum_f32_list_t256.sm_90", [table, np.zeros(256, np.float32)])


def test_split_k_locked_spin_lock_and_compare_and_swap():
    a = RNG.standard_normal((64, 64)).astype(np.float32)
    b = RNG.standard_normal((64, 64)).astype(np.float32)
    c = np.zeros((64, 64), np.float32)
    locks = np.zeros(4, np.int32)
    counts = np.zeros(4, np.int32)
    _run("split_k_locked_f32_s2_32x32x32.sm_90", [a, b, c, locks, counts], grid=(2, 2, 2))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(locks, 0)  # every lock released (xchg 0)
    np.testing.assert_array_equal(counts, 0)  # two splits: (0 + 1 + 1) mod 2


def test_bitcast_pack_f32_round_trips_bits():
    x = RNG.standard_normal(256).astype(np.float32)
    x[0] = -0.0
    bits, packed = np.zeros(256, np.int32), np.zeros(256, np.int32)
    _run("bitcast_pack_f32_b128.sm_90", [x, bits, packed], grid=(2, 1, 1))
    np.testing.assert_array_equal(bits, x.view(np.int32))
    np.testing.assert_array_equal(packed, x.view(np.int32))


def test_cast_roundtrip_f32_to_f16_rounds_toward_zero():
    x = np.array([1 + 2**-11 + 2**-12, -(1 + 2**-11 + 2**-12), 3.7, -3.7, 70000.0, 0.1] + [0.5] * 250,
                 dtype=np.float32)
    out = np.zeros(256, np.float16)
    _run("cast_roundtrip_f32_to_f16_b256.sm_90", [x, out])
    # ftof rounding<zero> to f16, through bf16 and back, plus itof(trunc(x) + 1)
    toward_zero = np.array([1.0, -1.0, 3.69921875, -3.69921875, 65504.0, 0.0999755859375], np.float64)
    via_bf16 = toward_zero.astype(ml_dtypes.bfloat16).astype(np.float16)
    plus = np.trunc(x[:6]).astype(np.int64) + 1
    want = (via_bf16.astype(np.float32) + np.int16(plus).astype(np.float16).astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(out[:6], want)


def test_debug_print_assert_prints_and_asserts():
    x = RNG.uniform(0, 2, 128)
    y = np.zeros(128)
    printed: list[str] = []
    _run("debug_print_assert_f64_t64.sm_90", [x, y], grid=(2, 1, 1), printed=printed)
    assert printed == [f"block 0 first={x[0]:f}\n", f"pid=0 max={x[:64].max():.3f}\n", f"sum: {x[:64].sum():f}\n"]
    np.testing.assert_array_equal(y, np.sqrt(x))
    x[70] = -1.0
    printed.clear()
    with pytest.raises(InterpreterError) as err:
        _run("debug_print_assert_f64_t64.sm_90", [x, y], grid=(2, 1, 1), printed=printed)
    assert str(err.value).endswith(
        "'cuda_tile.assert': assertion failed at index [6] in tile block [1, 0, 0]: input must be non-negative")
    assert err.value.line == 17
    assert len(printed) == 3  # block 0 printed before block 1 failed


# ---------------------------------------------------------------------------
# hand-written kernels: numerics and errors
# ---------------------------------------------------------------------------


def _elementwise(expr: str, ins: list[str], out: str, n: int = 4) -> str:
    """A kernel computing ``%r = <expr>`` from tiles %x0.. of types ``ins`` into one ``out`` tile."""
    params = ", ".join(f"%a{i}: tile<ptr<{t}>>" for i, t in enumerate(ins)) + f", %o: tile<ptr<{out}>>"
    lines = [f"entry @k({params}) {{", "  %c0 = constant <i32: 0> : tile<i32>"]
    for i, t in enumerate([*ins, out]):
        src = f"%a{i}" if i < len(ins) else "%o"
        tv = f"tensor_view<{n}x{t}, strides=[1]>"
        lines.append(f"  %tv{i} = make_tensor_view {src}, shape = [{n}], strides = [1] : {tv}")
        lines.append(f"  %pv{i} = make_partition_view %tv{i} : partition_view<tile=({n}), {tv}>")
        if i < len(ins):
            lines.append(f"  %x{i}, %t{i} = load_view_tko weak %pv{i}[%c0] : partition_view<tile=({n}), {tv}>, "
                         f"tile<i32> -> tile<{n}x{t}>, token")
    lines.append(f"  %r = {expr}")
    tv = f"tensor_view<{n}x{out}, strides=[1]>"
    lines.append(f"  %s = store_view_tko weak %r, %pv{len(ins)}[%c0] : tile<{n}x{out}>, "
                 f"partition_view<tile=({n}), {tv}>, tile<i32> -> token")
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


def _eval(expr: str, arrays: list[np.ndarray], out_dtype, out_name: str) -> np.ndarray:
    ins = [_mlir_name(a.dtype) for a in arrays]
    out = np.zeros(arrays[0].shape[0], out_dtype)
    run_kernel(_elementwise(expr, ins, out_name, n=out.size), None, [*arrays, out], (1, 1, 1))
    return out


def _mlir_name(dt: np.dtype) -> str:
    return {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
            np.dtype(np.int32): "i32", np.dtype(np.int8): "i8", np.dtype(np.int64): "i64",
            np.dtype(ml_dtypes.bfloat16): "bf16"}[np.dtype(dt)]


def test_divf_rounding_modes_f64():
    a = np.array([1.0, 2.0, 1.0, -1.0])
    b = np.array([10.0, 3.0, 3.0, 10.0])
    zero = _eval("divf %x0, %x1 rounding<zero> : tile<4xf64>", [a, b], np.float64, "f64")
    up = _eval("divf %x0, %x1 rounding<positive_inf> : tile<4xf64>", [a, b], np.float64, "f64")
    down = _eval("divf %x0, %x1 rounding<negative_inf> : tile<4xf64>", [a, b], np.float64, "f64")
    nearest = a / b
    # to nearest, 1/10 rounds up, 2/3 and 1/3 round down, -1/10 rounds down (away from zero)
    np.testing.assert_array_equal(zero, [np.nextafter(0.1, 0), nearest[1], nearest[2], np.nextafter(-0.1, 0)])
    np.testing.assert_array_equal(up, [0.1, np.nextafter(nearest[1], 1), np.nextafter(nearest[2], 1),
                                       np.nextafter(-0.1, 0)])
    np.testing.assert_array_equal(down, [np.nextafter(0.1, 0), nearest[1], nearest[2], -0.1])


def test_fma_rounds_once():
    e = 2.0**-12
    a = np.array([1 + e, 1 + e, 2.0, 1.0], np.float32)
    c = np.array([-(1 + 2 * e), 0.0, 1.0, 2**-30], np.float32)
    r = _eval("fma %x0, %x1, %x2 : tile<4xf32>", [a, a, c], np.float32, "f32")
    # (1+e)^2 - (1+2e) = e^2 exactly; unfused it would be 0
    np.testing.assert_array_equal(r, np.array([e * e, 1 + 2 * e, 5.0, 1.0], np.float32))
    h = np.array([1 + 2**-10, 1, 1, 1], np.float16)
    r16 = _eval("fma %x0, %x1, %x2 : tile<4xf16>", [h, h, np.array([-1, 0, 0, 0], np.float16)], np.float16, "f16")
    assert r16[0] == np.float16(2**-9)  # 2^-9 + 2^-20 is a tie at f16 precision: even


def test_mulf_bf16_rounds_to_nearest_even():
    a = np.array([1 + 2**-7, 3, 0.1, -2], ml_dtypes.bfloat16)
    r = _eval("mulf %x0, %x1 : tile<4xbf16>", [a, a], ml_dtypes.bfloat16, "bf16")
    np.testing.assert_array_equal(r, (a.astype(np.float64) ** 2).astype(np.float32).astype(ml_dtypes.bfloat16))


def test_integer_semantics():
    a = np.array([-7, 7, -2**31, 5], np.int32)
    b = np.array([2, -2, -1, 0], np.int32)
    trunc = _eval("divi %x0, %x1 signed : tile<4xi32>", [a, b], np.int32, "i32")
    floor = _eval("divi %x0, %x1 signed rounding<negative_inf> : tile<4xi32>", [a, b], np.int32, "i32")
    ceil = _eval("divi %x0, %x1 signed rounding<positive_inf> : tile<4xi32>", [a, b], np.int32, "i32")
    udiv = _eval("divi %x0, %x1 unsigned : tile<4xi32>", [a, b], np.int32, "i32")
    rem = _eval("remi %x0, %x1 signed : tile<4xi32>", [a, b], np.int32, "i32")
    # -2^31 / -1 overflows (undefined); division by zero is undefined: the interpreter gives the wrapped
    # quotient and 0
    np.testing.assert_array_equal(trunc[:2], [-3, -3])
    np.testing.assert_array_equal(floor[:2], [-4, -4])
    np.testing.assert_array_equal(ceil[:2], [-3, -3])
    np.testing.assert_array_equal(udiv[:2], [(2**32 - 7) // 2, 0])
    np.testing.assert_array_equal(rem, [-1, 1, 0, 0])
    s = np.array([1, 31, 32, 40], np.int32)
    x = np.array([-8, -8, -8, 3], np.int32)
    np.testing.assert_array_equal(_eval("shli %x0, %x1 : tile<4xi32>", [x, s], np.int32, "i32"),
                                  [-16, 0, 0, 0])
    np.testing.assert_array_equal(_eval("shri %x0, %x1 signed : tile<4xi32>", [x, s], np.int32, "i32"),
                                  [-4, -1, -1, 0])
    np.testing.assert_array_equal(_eval("shri %x0, %x1 unsigned : tile<4xi32>", [x, s], np.int32, "i32"),
                                  [(2**32 - 8) >> 1, 1, 0, 0])
    big = np.array([127, -128, 100, 1], np.int8)
    np.testing.assert_array_equal(_eval("addi %x0, %x1 : tile<4xi8>", [big, big], np.int8, "i8"),
                                  [-2, 0, -56, 2])


def test_ftoi_saturates_and_maxf_zeros():
    x = np.array([3.9, -3.9, 1e20, np.nan], np.float32)
    np.testing.assert_array_equal(_eval("ftoi %x0 signed : tile<4xf32> -> tile<4xi32>", [x], np.int32, "i32"),
                                  [3, -3, 2**31 - 1, 0])
    z = np.array([-0.0, 0.0, np.nan, np.nan], np.float32)
    w = np.array([0.0, -0.0, 1.0, np.nan], np.float32)
    mx = _eval("maxf %x0, %x1 : tile<4xf32>", [z, w], np.float32, "f32")
    assert not np.signbit(mx[0]) and not np.signbit(mx[1]) and mx[2] == 1.0 and np.isnan(mx[3])
    mn = _eval("minf %x0, %x1 propagate_nan : tile<4xf32>", [z, w], np.float32, "f32")
    assert np.signbit(mn[0]) and np.signbit(mn[1]) and np.isnan(mn[2]) and np.isnan(mn[3])


def test_unsupported_op_names_op_and_line():
    text = _elementwise("ptr_to_ptr %x0 : tile<4xf32> -> tile<4xf32>", ["f32"], "f32")
    text = text.replace("ptr_to_ptr %x0 : tile<4xf32> -> tile<4xf32>", '"test.unknown"(%x0) : (!cuda_tile.tile<4xf32>) -> !cuda_tile.tile<4xf32>')
    with pytest.raises(InterpreterError) as err:
        run_kernel(text, "k", [np.zeros(4, np.float32), np.zeros(4, np.float32)], (1, 1, 1))
    assert str(err.value) == "line 8: 'test.unknown': operation 'test.unknown' is not supported by the interpreter"


def test_out_of_bounds_pointer_access_is_an_error():
    text = """entry @k(%p: tile<ptr<f32>>, %n: tile<i64>) {
  %v = offset %p, %n : tile<ptr<f32>>, tile<i64> -> tile<ptr<f32>>
  %x, %t = load_ptr_tko weak %v : tile<ptr<f32>> -> tile<f32>, token
  return
}
"""
    buf = np.arange(4, dtype=np.float32)
    run_kernel(text, None, [buf, 3], (1, 1, 1))
    with pytest.raises(InterpreterError, match=r"^line 3: 'cuda_tile.load_ptr_tko': memory fault: address 0x[0-9a-f]+ "
                                               r"\(4 bytes\) is outside every buffer$"):
        run_kernel(text, None, [buf, 4], (1, 1, 1))


def test_bad_calls_are_interpreter_errors():
    text = _elementwise("negf %x0 : tile<4xf32>", ["f32"], "f32")
    with pytest.raises(InterpreterError, match="takes 2 arguments, got 1"):
        run_kernel(text, None, [np.zeros(4, np.float32)], (1, 1, 1))
    with pytest.raises(InterpreterError, match=r"argument #0 \(%a0: tile<ptr<f32>>\) must be a NumPy array"):
        run_kernel(text, None, [1.0, np.zeros(4, np.float32)], (1, 1, 1))
    with pytest.raises(InterpreterError, match="no entry named 'nope'"):
        run_kernel(text, "nope", [], (1, 1, 1))
    with pytest.raises(InterpreterError, match="^line 1: the module has errors"):
        run_kernel("entry @k( {", None, [], (1, 1, 1))
    with pytest.raises(InterpreterError, match="grid must be three positive sizes"):
        run_kernel(text, None, [np.zeros(4, np.float32)] * 2, (0, 1, 1))


def test_globals_and_block_ids():
    text = """cuda_tile.module @m {
  global @g <f32: [1.0, 2.0, 3.0, 4.0]> : tile<4xf32>
  entry @k(%o: tile<ptr<f32>>) {
    %p = get_global @g : tile<ptr<f32>>
    %x, %y, %z = get_tile_block_id : tile<i32>
    %nx, %ny, %nz = get_num_tile_blocks : tile<i32>
    %i = muli %y, %nx : tile<i32>
    %j = addi %i, %x : tile<i32>
    %q = offset %p, %j : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %v, %t = load_ptr_tko weak %q : tile<ptr<f32>> -> tile<f32>, token
    %d = offset %o, %j : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %w = addf %v, %v : tile<f32>
    %s = store_ptr_tko weak %d, %w : tile<ptr<f32>>, tile<f32> -> token
    %s2 = store_ptr_tko weak %q, %w : tile<ptr<f32>>, tile<f32> -> token
  }
}
"""
    out = np.zeros(4, np.float32)
    run_kernel(text, "k", [out], (2, 2, 1))
    np.testing.assert_array_equal(out, [2, 4, 6, 8])


def test_mma_scaled_fp4_unpacks_nibbles_and_scales_blocks():
    m = n = k = 128
    codes_a = RNG.integers(0, 16, (m, k)).astype(np.uint8)
    codes_b = RNG.integers(0, 16, (k, n)).astype(np.uint8)
    a = (codes_a[:, 0::2] | (codes_a[:, 1::2] << 4)).astype(np.uint8)  # two f4E2M1FN per byte, low first
    b = (codes_b[:, 0::2] | (codes_b[:, 1::2] << 4)).astype(np.uint8)
    sa = RNG.choice([0.25, 0.5, 1.0, 2.0], (m, k // 16)).astype(ml_dtypes.float8_e4m3fn)
    sb = RNG.choice([0.25, 0.5, 1.0, 2.0], (k // 16, n)).astype(ml_dtypes.float8_e4m3fn)
    c = np.zeros((m, n), np.float32)
    _run("mma_scaled_fp4_nvfp4_e4m3_128x128x128_b16.sm_100", [a, sa, b, sb, c])
    fa = codes_a.view(ml_dtypes.float4_e2m1fn).astype(np.float64) * np.repeat(sa.astype(np.float64), 16, axis=1)
    fb = codes_b.view(ml_dtypes.float4_e2m1fn).astype(np.float64) * np.repeat(sb.astype(np.float64), 16, axis=0)
    np.testing.assert_allclose(c, fa @ fb, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# concurrent tile blocks (schedules) and the order of a scan body's arguments
# ---------------------------------------------------------------------------


def _permute_inputs():
    rng = np.random.default_rng(5)
    return [rng.standard_normal((8, 8, 16)).astype(np.float32), np.zeros((16, 8, 8), np.float32),
            np.zeros(1024, np.float32)]


def test_lockstep_blocks_see_each_others_stores():
    # Each block stores its tile to array #1, then loads a region of array #1 that the other block
    # stores too.  In lockstep both stores come before both loads: the same result as running the
    # blocks one after the other on an array #1 that already holds what the stores write.
    name = "permute_reshape_3d_f32_4x8x16.sm_90"
    seq = _permute_inputs()
    _run(name, seq, grid=(2, 1, 1))
    lock = _permute_inputs()
    _run(name, lock, grid=(2, 1, 1), schedule=0)
    prefilled = _permute_inputs()
    prefilled[1][...] = seq[1]
    _run(name, prefilled, grid=(2, 1, 1))
    np.testing.assert_array_equal(lock[0], prefilled[0])
    assert np.count_nonzero(lock[0] != seq[0]) == 128  # block 0's reads of block 1's rows
    np.testing.assert_array_equal(lock[1], seq[1])


def test_atomic_add_and_max_results_depend_on_the_schedule():
    # Blocks b and b+2 add 1 to tile b % 2 of the counts, then every block takes max(count, 7) of tile 0.
    name = "tiled_view_stencil_f32_t64_h32.sm_90"
    x = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    results = {}
    for schedule in (None, 0, 1, 2, 3, 4, 5, 6, 7, 8):
        counts = np.zeros(128, np.int32)
        _run(name, [x.copy(), np.zeros(256, np.float32), counts], grid=(4, 1, 1), schedule=schedule)
        assert (counts[:64] == counts[0]).all() and (counts[64:] == 2).all()
        results[schedule] = int(counts[0])
    assert results[None] == 8  # add, max, add: 1 -> 7 -> 8
    assert results[0] == 7  # lockstep: both adds before every max
    assert set(results.values()) <= {7, 8, 9} and len(set(results.values())) > 1


def test_a_failing_block_stops_a_concurrent_run():
    x = -np.ones(128, np.float32)  # the kernel asserts its input is non-negative
    with pytest.raises(InterpreterError, match="assertion failed"):
        _run("debug_print_assert_f32_t128.sm_90", [x, np.zeros(128, np.float32)], grid=(4, 1, 1), schedule=1,
             printed=[])


def test_spin_lock_kernel_under_random_schedules():
    for schedule in (0, 1, 2):
        a = RNG.standard_normal((64, 64)).astype(np.float32)
        b = RNG.standard_normal((64, 64)).astype(np.float32)
        c = np.zeros((64, 64), np.float32)
        locks, counts = np.zeros(4, np.int32), np.zeros(4, np.int32)
        _run("split_k_locked_f32_s2_32x32x32.sm_90", [a, b, c, locks, counts], grid=(2, 2, 2), schedule=schedule)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(locks, 0)


def test_scan_body_gets_the_accumulator_then_the_element():
    # tests/kernels/custom_scans: bodies that keep the first non-zero of (lhs, rhs) (scans 1 and 2, dim 1
    # forward and reverse) or of (rhs, lhs) (scan 3, dim 0), identity 0.  Bound as f(acc, x), as Ops.td's
    # formula and NVIDIA's tileiras have it, scan 1 keeps the first non-zero element so far, scan 3 the last.
    text = (Path(__file__).parent / "kernels" / "custom_scans_f32_16x128.sm_90.mlir").read_text()
    x = np.where(RNG.uniform(size=(32, 128)) < 0.7, 0.0, RNG.standard_normal((32, 128))).astype(np.float32)
    outs = [np.zeros((32, 128), np.float32) for _ in range(3)]
    run_kernel(text, None, bind_arrays(infer_array_params(text), [x] + outs), (2, 1, 1))
    want = [np.zeros_like(x) for _ in range(3)]
    for r in range(32):
        first = 0.0
        for j in range(128):
            first = first or x[r, j]
            want[0][r, j] = first
        first = 0.0
        for j in range(127, -1, -1):
            first = first or x[r, j]
            want[1][r, j] = first
    for blk in range(2):
        last = np.zeros(128, np.float32)
        for i in range(16):
            row = x[blk * 16 + i]
            last = np.where(row != 0, row, last)
            want[2][blk * 16 + i] = last
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, w)


def test_unspecified_reads_can_be_told_apart():
    # permute_reshape_3d loads a 16x4x8 tile through dim_map [1, 2, 0] from a 16x8x8 tensor: tile dimension 0
    # runs over tensor dimension 1 (extent 8), so half of the tile is out of bounds with no padding value.
    def run(value):
        arrays = _permute_inputs()
        _run("permute_reshape_3d_f32_4x8x16.sm_90", arrays, grid=(2, 1, 1), schedule=0, unspecified=value)
        return arrays[0]

    assert np.count_nonzero(run(0.0) != run(777.0)) == 512
    assert np.count_nonzero(run(777.0) >= 700) == 512
