"""Compare our lowering with NVIDIA's tileiras: compile wall time, and kernel time on a GPU.

Compile time (no GPU needed), for each corpus kernel tileiras accepts:
``tile-lsp ptx`` (in-process: analysis + lowering, and then ptxas to a cubin,
as the driver would) against ``tileiras`` compiling the ``.tileirbc`` beside
it (PyPI ``nvidia-cuda-tileiras``)::

    python bench/ptx_vs_tileiras.py compile [--limit N] [--target sm_90]

Kernel time on a GPU, for the six sm_90 corpus kernels of :data:`BENCHES` at
realistic sizes (a 4096^3 f16 matmul, causal flash attention with B=4, H=8,
S=4096, D=64, row softmax / RMSNorm / LayerNorm backward over 32-64 Ki rows,
an element-wise kernel over 2^24 floats): our PTX, the cubin NVIDIA's
tileiras makes of the same ``.tileirbc``, and the nearest PyTorch op, on
the same inputs.  Two halves, since the GPU machine has no tileiras (nor
the corpus): all PTX and cubins are made beforehand, where they are::

    # 1. here (tileiras, cuobjdump, ptxas: the NVIDIA packages of the venv)
    python bench/ptx_vs_tileiras.py prepare --out DIR [--label ours] [--only SUBSTR]
    #    a second column, lowered by another checkout (its tile_lsp is imported:
    #    PYTHONPATH comes before this script's own tree)
    PYTHONPATH=/other/checkout python bench/ptx_vs_tileiras.py prepare --out DIR --label before
    # 2. on the GPU machine (numpy, ml_dtypes, cuda-bindings; torch for the PyTorch column)
    python bench/ptx_vs_tileiras.py gpu --cubins DIR [--runs 20] [--json OUT.json]
    #    anywhere: build the inputs and parameter bindings, print them, no CUDA call
    python bench/ptx_vs_tileiras.py gpu --cubins DIR --dry-run

``prepare`` lowers each kernel with the tile_lsp it imports (it prints
which tree) to ``DIR/<kernel>.<label>.ptx`` and checks it with ptxas,
compiles ``DIR/<kernel>.tileiras.cubin`` once (``tileiras --gpu-name
sm_90``) and reads its CTA size (``EIATTR_REQNTID``) and static shared
memory with ``cuobjdump -elf``, and merges into ``DIR/manifest.json``:
per kernel, the arrays (shape, dtype, how to fill them), scalars, grid,
rate (bytes or FLOPs), the binding of every kernel parameter (an array, the
extent or element stride of one of its dimensions, or a scalar; read from
the IR by the interpreter's ``infer_array_params``), the tileiras cubin's
facts and, under ``ours``, one entry per label (PTX file, entry name, PTX
parameter types, threads, dynamic shared memory).  Preparing twice with two
labels keeps both.

``gpu`` runs each kernel in a child process (a fault or a hang in one
leaves the others' numbers; ``--in-process`` to debug; ``--kernel-timeout``
120 s each, no kernel started after ``--budget`` 230 s): it fills the
arrays once (NumPy, fixed seed; outputs that are only written start as NaN,
so an unwritten element shows), launches every labelled PTX and the
tileiras cubin (with its REQNTID CTA size) on the same device buffers and
grid, compares each output with tileiras' (``agree`` / ``DIFFER``), times
``--warmup`` launches and then ``--runs`` launches, each between two CUDA
events, and reports the median; then the PyTorch op the same way (``-``
without torch).  Rates: memory-bound kernels as GB/s counting every array
argument once (the sum of their bytes), the matmul as 2*M*N*K and causal
attention as 4*B*H*S^2*D/2 FLOPs.  It prints a markdown table (a column per
label, tileiras, PyTorch, and ``<label> / tileiras``: the throughput ratio,
above 1 when ours is faster) and writes the same to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Appended, not prepended: with PYTHONPATH=/other/checkout that checkout's tile_lsp is the one imported.
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
KERNELS = ROOT.parent / "shared" / "corpus" / "kernels"
TARGET = "sm_90"


def _ok_kernels(target: str | None) -> list[Path]:
    rows = (KERNELS / "MANIFEST.tsv").read_text().splitlines()
    head = rows[0].split("\t")
    out = []
    for row in rows[1:]:
        c = dict(zip(head, row.split("\t")))
        if c.get("verdict") == "ok" and (target is None or c["target"] == target):
            out.append(KERNELS / c["file"])
    return out


def compile_times(args) -> None:
    """The ``compile`` mode: wall time of our lowering (+ptxas) and of tileiras per corpus kernel."""
    from tile_lsp.codegen import lower_text
    from tile_lsp.codegen.cli import run_ptxas
    from tile_lsp.nvidia import find_tool

    tileiras = find_tool("tileiras")
    files = _ok_kernels(args.target)[: args.limit or None]
    print(f"{'kernel':58} {'target':7} {'ours ms':>9} {'+ptxas ms':>10} {'tileiras ms':>12}")
    ours, ptxas_t, theirs = [], [], []
    for f in files:
        target = re.search(r"\.(sm_\d+)\.", f.name).group(1)
        t0 = time.perf_counter()
        result = lower_text(f.read_text(), target, file_name=f.name)
        t1 = time.perf_counter()
        if not result.ok:
            print(f"{f.name:58} {target:7} lowering failed: {result.diagnostics[0].message}")
            continue
        ok, _ = run_ptxas(result.ptx, target)
        t2 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            t3 = time.perf_counter()
            subprocess.run([tileiras, "--gpu-name", target, str(f.with_suffix(".tileirbc")), "-o",
                            str(Path(tmp) / "k.cubin")], capture_output=True, check=False)
            t4 = time.perf_counter()
        ours.append((t1 - t0) * 1e3)
        ptxas_t.append((t2 - t1) * 1e3)
        theirs.append((t4 - t3) * 1e3)
        print(f"{f.name:58} {target:7} {ours[-1]:9.0f} {ptxas_t[-1]:10.0f} {theirs[-1]:12.0f}"
              + ("" if ok else "  (ptxas rejected)"))
    if ours:
        print(f"\n{len(ours)} kernels; median ms: tile-lsp ptx {statistics.median(ours):.0f}, "
              f"+ptxas {statistics.median(ptxas_t):.0f}, tileiras {statistics.median(theirs):.0f}; "
              f"total s: {sum(ours) / 1e3:.1f} / {sum(ptxas_t) / 1e3:.1f} / {sum(theirs) / 1e3:.1f}")


# ------------------------------------------------------------------ the kernels of the GPU comparison

F16, F32 = "float16", "float32"


def _arr(name: str, shape, dtype: str, init: str, out: bool = False) -> dict:
    return {"name": name, "shape": list(shape), "dtype": dtype, "init": init, "out": out}


def _benches() -> list[dict]:
    """The kernels of the GPU comparison at their sizes (see :data:`BENCHES`)."""
    mm = 4096
    n_ew = 1 << 24
    sm_rows, sm_cols = 65536, 256
    rms_rows, rms_cols = 32768, 2048
    b, h, s, d = 4, 8, 4096, 64
    ln_rows, ln_cols = 32768, 1024
    qkv = (b, h, s, d)
    return [
        {"kernel": "matmul_tiled_f16_128x128x32.sm_90", "size": "4096^3 f16 (A 4096x4096, B 4096x4096, C 4096x4096)",
         "arrays": [_arr("A", (mm, mm), F16, "normal"), _arr("B", (mm, mm), F16, "normal"),
                    _arr("C", (mm, mm), F16, "nan", out=True)],
         "scalars": [], "rate": {"kind": "flops", "flops": 2 * mm * mm * mm},
         "tol": [1e-2, 6e-2], "torch": "torch.matmul"},
        {"kernel": "ew_float_arith_f32_b256.sm_90", "size": "2^24 f32",
         "arrays": [_arr("a", (n_ew,), F32, "normal"), _arr("b", (n_ew,), F32, "normal"),
                    _arr("out", (n_ew,), F32, "nan", out=True)],
         "scalars": [], "rate": {"kind": "bandwidth"}, "tol": [1e-3, 1e-4],
         "torch": "a*b - (a+b)*(a-b) - a/(|b|+1)"},
        {"kernel": "softmax_rows_f32_16x256.sm_90", "size": "65,536 x 256 f32",
         "arrays": [_arr("x", (sm_rows, sm_cols), F32, "normal"), _arr("y", (sm_rows, sm_cols), F32, "nan", out=True)],
         "scalars": [], "rate": {"kind": "bandwidth"}, "tol": [2e-3, 1e-5], "torch": "torch.softmax(x, -1)"},
        {"kernel": "rmsnorm_fwd_f16_4x2048.sm_90", "size": "32,768 x 2,048 f16",
         "arrays": [_arr("x", (rms_rows, rms_cols), F16, "normal"), _arr("w", (rms_cols,), F16, "uniform"),
                    _arr("y", (rms_rows, rms_cols), F16, "nan", out=True)],
         "scalars": [["eps", 1e-5]], "rate": {"kind": "bandwidth"}, "tol": [1e-2, 1e-2],
         "torch": "(x.float() * rsqrt(mean(x.float()^2, -1) + eps) * w.float()).half()"},
        {"kernel": "flash_attention_f16_causal_d64_128x64.sm_90", "size": "B=4, H=8, S=4096, D=64",
         "arrays": [_arr("q", qkv, F16, "normal"), _arr("k", qkv, F16, "normal"), _arr("v", qkv, F16, "normal"),
                    _arr("o", qkv, F16, "nan", out=True)],
         "scalars": [["sm_scale", 1 / math.sqrt(d)]],
         "rate": {"kind": "flops", "flops": 4 * b * h * s * s * d // 2}, "tol": [2e-2, 2e-2],
         "torch": "F.scaled_dot_product_attention(is_causal=True)"},
        {"kernel": "layernorm_bwd_f16_16x1024.sm_90", "size": "32,768 x 1,024 f16",
         "arrays": [_arr("dy", (ln_rows, ln_cols), F16, "normal"), _arr("x", (ln_rows, ln_cols), F16, "normal"),
                    _arr("w", (ln_cols,), F16, "uniform"), _arr("mean", (ln_rows,), F32, "rowmean:1"),
                    _arr("rstd", (ln_rows,), F32, "rowrstd:1"),
                    _arr("dx", (ln_rows, ln_cols), F16, "nan", out=True),
                    _arr("dw", (ln_cols,), F32, "zeros", out=True), _arr("db", (ln_cols,), F32, "zeros", out=True)],
         "scalars": [], "rate": {"kind": "bandwidth"}, "tol": [1e-2, 5e-2],
         "torch": "aten.native_layer_norm_backward"},
    ]


#: Per kernel: ``kernel`` (corpus name), ``size`` (for the table), ``arrays``
#: (one per array parameter, in the order of their base pointers: ``name``,
#: ``shape``, ``dtype``, ``init`` = ``normal`` / ``uniform`` (0.5-1.5) /
#: ``zeros`` / ``nan`` / ``rowmean:K`` / ``rowrstd:K`` (the mean / 1/sqrt(var + 1e-5)
#: of each row of array K), ``out``: the kernel writes it), ``scalars``
#: (``[name, value]`` per scalar parameter, in order), ``rate`` (``bandwidth``,
#: or ``flops`` with the count), ``tol`` (rtol, atol of the output comparison)
#: and ``torch`` (the PyTorch op timed beside it).
BENCHES = _benches()


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(what)


def grid_for(kernel: str, shapes: list[tuple]) -> tuple[tuple[int, int, int], str]:
    """The grid that covers ``kernel``'s problem exactly, from its array shapes, and how.

    The tile sizes are those of the kernel's IR (partition views and the
    block-id arithmetic).  Raises ``ValueError`` when the shapes do not fit
    the kernel (a dimension that is not a whole number of tiles, or a row
    length other than the kernel's fixed one).
    """
    fam = kernel.split(".")[0]
    if fam == "matmul_tiled_f16_128x128x32":
        (m, k), (k2, n), (m2, n2) = shapes
        _need(k == k2 and m == m2 and n == n2, "matmul: A is MxK, B KxN, C MxN")
        _need(m % 128 == 0 and n % 128 == 0 and k % 32 == 0, "matmul: M, N multiples of 128, K of 32")
        return (m // 128 * (n // 128), 1, 1), f"{m // 128} x {n // 128} C tiles of 128x128, {k // 32} K steps of 32"
    if fam == "ew_float_arith_f32_b256":
        _need(len(set(shapes)) == 1 and len(shapes[0]) == 1, "ew: three 1-D arrays of one length")
        _need(shapes[0][0] % 256 == 0, "ew: length a multiple of 256")
        return (shapes[0][0] // 256, 1, 1), f"{shapes[0][0] // 256} blocks of 256"
    if fam == "softmax_rows_f32_16x256":
        _need(shapes[0] == shapes[1] and shapes[0][1] == 256, "softmax: x, y of R x 256")
        _need(shapes[0][0] % 16 == 0, "softmax: rows a multiple of 16")
        return (shapes[0][0] // 16, 1, 1), f"{shapes[0][0] // 16} tiles of 16 rows x 256"
    if fam == "rmsnorm_fwd_f16_4x2048":
        (r, c), (cw,), y = shapes
        _need(y == (r, c) and cw == c == 2048, "rmsnorm: x, y of R x 2048, w of 2048")
        _need(r % 4 == 0, "rmsnorm: rows a multiple of 4")
        return (r // 4, 1, 1), f"{r // 4} tiles of 4 rows x 2048"
    if fam == "flash_attention_f16_causal_d64_128x64":
        _need(len(set(shapes)) == 1 and len(shapes[0]) == 4, "attention: q, k, v, o of one shape (B, H, S, D)")
        b, h, s, d = shapes[0]
        _need(h == 8 and d == 64, "attention: H = 8 (blockId.y // 8 is the batch) and D = 64")
        _need(s % 128 == 0, "attention: S a multiple of 128")
        return (s // 128, b * h, 1), f"{s // 128} query tiles of 128 x {b * h} (batch, head) pairs"
    if fam == "layernorm_bwd_f16_16x1024":
        dy, x, (cw,), (rm,), (rr,), dx, (cdw,), (cdb,) = shapes
        r, c = dy
        _need(x == dx == dy and c == cw == cdw == cdb == 1024 and rm == rr == r,
              "layernorm_bwd: dy, x, dx of R x 1024, w/dw/db of 1024, mean/rstd of R")
        _need(r % 16 == 0, "layernorm_bwd: rows a multiple of 16")
        return (r // 16, 1, 1), f"{r // 16} tiles of 16 rows x 1024"
    raise ValueError(f"no grid rule for {kernel}")


def _np_dtype(name: str):
    import ml_dtypes
    import numpy as np

    return np.dtype(getattr(ml_dtypes, name, None) or name)


def array_bytes(entry: dict) -> int:
    """Bytes of every array argument of ``entry`` (each read or written once)."""
    return sum(math.prod(a["shape"]) * _np_dtype(a["dtype"]).itemsize for a in entry["arrays"])


def make_arrays(entry: dict, seed: int = 7) -> list:
    """The kernel's arrays, filled as ``entry["arrays"]`` says (NumPy, seeded; C-contiguous)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out: list = []
    for spec in entry["arrays"]:
        dt, shape, init = _np_dtype(spec["dtype"]), tuple(spec["shape"]), spec["init"]
        if init == "normal":
            a = rng.standard_normal(shape, dtype=np.float32).astype(dt)
        elif init == "uniform":
            a = rng.uniform(0.5, 1.5, shape).astype(np.float32).astype(dt)
        elif init == "zeros":
            a = np.zeros(shape, dt)
        elif init == "nan":
            a = np.full(shape, np.nan, dt)
        elif init.startswith(("rowmean:", "rowrstd:")):
            src = out[int(init.split(":", 1)[1])].astype(np.float32)
            stat = src.mean(axis=-1) if init.startswith("rowmean") else 1 / np.sqrt(src.var(axis=-1) + 1e-5)
            a = stat.astype(dt).reshape(shape)
        else:
            raise ValueError(f"unknown init {init!r}")
        out.append(np.ascontiguousarray(a))
    return out


def binding_recipe(roles, n_arrays: int, n_scalars: int, ranks: list[int]) -> list:
    """Per kernel parameter, where its argument comes from, from the interpreter's parameter roles.

    ``["array", k]`` (base pointer of array k), ``["shape", k, d]`` /
    ``["stride", k, d]`` (extent / element stride of dimension d of array
    k), ``["scalar", i]``.  Raises ``ValueError`` when the kernel's arrays,
    their ranks or its scalars do not match the table's.
    """
    recipe, i_scalar, seen = [], 0, set()
    for r in roles:
        if r.kind == "pointer":
            _need(r.array < n_arrays, f"the kernel has more than {n_arrays} arrays")
            _need(r.rank in (None, ranks[r.array]), f"array #{r.array}: rank {r.rank} in the IR, "
                  f"{ranks[r.array]} in the table")
            recipe.append(["array", r.array])
            seen.add(r.array)
        elif r.kind in ("shape", "stride"):
            _need(r.dim < ranks[r.array], f"array #{r.array} has no dimension {r.dim}")
            recipe.append([r.kind, r.array, r.dim])
        else:
            recipe.append(["scalar", i_scalar])
            i_scalar += 1
    _need(seen == set(range(n_arrays)), f"the kernel takes {len(seen)} arrays, the table has {n_arrays}")
    _need(i_scalar == n_scalars, f"the kernel takes {i_scalar} scalars, the table has {n_scalars}")
    return recipe


def bind(recipe: list, arrays: list, scalars: list, pointer=lambda k, a: a) -> list:
    """Kernel arguments from ``recipe``: ``pointer(k, arrays[k])`` for array k, extents and element
    strides (checked to fit an i32), scalar values."""
    out: list = []
    for r in recipe:
        if r[0] == "array":
            out.append(pointer(r[1], arrays[r[1]]))
        elif r[0] in ("shape", "stride"):
            a = arrays[r[1]]
            v = int(a.shape[r[2]]) if r[0] == "shape" else int(a.strides[r[2]] // a.itemsize)
            _need(0 <= v < 2**31, f"{r[0]} {v} of array #{r[1]} does not fit an i32")
            out.append(v)
        else:
            out.append(scalars[r[1]])
    return out


def _ptx_type_ok(rule: list, ptx_type: str, scalar_value=None) -> bool:
    if rule[0] == "array":
        return ptx_type in (".u64", ".b64", ".s64")
    if rule[0] in ("shape", "stride"):
        return ptx_type in (".u32", ".s32", ".b32", ".u64", ".s64", ".b64")
    return ptx_type == ".f32" if isinstance(scalar_value, float) else ptx_type != ".f32"


# ------------------------------------------------------------------ prepare


def _tree_of(module) -> Path:
    return Path(module.__file__).resolve().parents[1]


def _git_rev(tree: Path) -> str | None:
    """``tree``'s commit (short hash, ``+dirty`` with uncommitted changes); ``None`` unless ``tree`` is the
    top of a git work tree (a copy inside another repository is not that repository's commit)."""
    try:
        top = subprocess.run(["git", "-C", str(tree), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=20)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != tree.resolve():
            return None
        rev = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=20)
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=20).stdout.strip()
        return rev.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _cubin_facts(cubin: Path, cuobjdump: str) -> dict:
    """``bench/gpu_check.py``'s :func:`cubin_facts` (loaded from beside this file; ``sys.path`` kept as it was)."""
    import importlib.util

    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location("_gpu_check", Path(__file__).with_name("gpu_check.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_gpu_check"] = mod
        spec.loader.exec_module(mod)
    finally:
        sys.path[:] = saved
    return mod.cubin_facts(cubin, cuobjdump)


_PSIZE = {".u8": 1, ".s8": 1, ".b16": 2, ".s16": 2, ".u16": 2, ".u32": 4, ".s32": 4, ".f32": 4, ".b32": 4,
          ".u64": 8, ".s64": 8, ".f64": 8, ".b64": 8}


def _lower_one(text: str, file_name: str, ptx_file: Path, recipe: list, entry: dict) -> dict:
    """Lower ``text`` for sm_90 to ``ptx_file``, check its parameters against ``recipe`` and it with ptxas;
    its manifest entry.  Raises ``ValueError`` when the lowering fails or its parameters do not fit."""
    from tile_lsp.codegen import lower_text
    from tile_lsp.codegen.cli import run_ptxas

    t0 = time.perf_counter()
    result = lower_text(text, TARGET, file_name=file_name)
    lower_s = time.perf_counter() - t0
    if not result.ok or not result.kernels:
        raise ValueError(f"lowering failed: {result.diagnostics[0].message if result.diagnostics else 'no kernel'}")
    info = result.kernels[0]
    params = [p for p, _ in info.params]
    _need(len(params) == len(recipe), f"{len(params)} PTX parameters, {len(recipe)} in the IR")
    bad = [i for i, (p, r) in enumerate(zip(params, recipe))
           if not _ptx_type_ok(r, p, entry["scalars"][r[1]][1] if r[0] == "scalar" else None)]
    _need(not bad, f"PTX parameters {bad} ({[params[i] for i in bad]}) do not fit their roles")
    ptx_file.write_text(result.ptx)
    t1 = time.perf_counter()
    try:
        ok, log = run_ptxas(result.ptx, TARGET)
    except FileNotFoundError:
        ok, log = None, ""
    return {"ptx": ptx_file.name, "entry": info.name, "params": params, "threads": info.threads,
            "dynamic_smem": info.dynamic_smem, "static_smem": info.static_smem, "lower_s": round(lower_s, 2),
            "ptxas_ok": ok, "ptxas_s": round(time.perf_counter() - t1, 2),
            **({"ptxas_log": log.strip()[:600]} if ok is False else {})}


def prepare(args) -> None:
    """Lower every kernel of :data:`BENCHES` with the imported tile_lsp, compile the tileiras cubins, merge
    ``manifest.json`` (see the module docstring)."""
    import tile_lsp
    from tile_lsp.analysis import interpreter as interp
    from tile_lsp.nvidia import find_tool

    label = args.label
    _need(label not in ("tileiras", "pytorch") and re.fullmatch(r"[A-Za-z0-9_-]+", label) is not None,
          f"bad label {label!r}: letters, digits, '_' and '-', not 'tileiras' or 'pytorch'")
    tree = _tree_of(tile_lsp)
    rev = _git_rev(tree)
    print(f"lowering with tile_lsp from {tree} (git {rev or '-'}), label {label!r}", flush=True)
    tileiras, cuobjdump = find_tool("tileiras"), find_tool("cuobjdump")
    if not tileiras or not cuobjdump:
        print("tileiras/cuobjdump not found (pip install -e '.[nvidia]'): no cubins this time")
    kernels_dir = Path(args.kernels)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    mpath = out / "manifest.json"
    manifest = json.loads(mpath.read_text()) if mpath.exists() else {}
    manifest.setdefault("target", TARGET)
    manifest.setdefault("kernels", {})
    for entry in BENCHES:
        name = entry["kernel"]
        if args.only and args.only not in name:
            continue
        row = manifest["kernels"].setdefault(name, {})
        try:
            mlir = kernels_dir / f"{name}.mlir"
            text = mlir.read_text()
            shapes = [tuple(a["shape"]) for a in entry["arrays"]]
            grid, how = grid_for(name, shapes)
            roles = interp.infer_array_params(text)
            recipe = binding_recipe(roles, len(entry["arrays"]), len(entry["scalars"]), [len(s) for s in shapes])
            rate = dict(entry["rate"])
            if rate["kind"] == "bandwidth":
                rate["bytes"] = array_bytes(entry)
            row.update({k: entry[k] for k in ("size", "arrays", "scalars", "tol", "torch")})
            row.update({"grid": list(grid), "grid_how": how, "rate": rate, "args": recipe})
            row.setdefault("ours", {})
            # ours
            try:
                row["ours"][label] = _lower_one(text, mlir.name, out / f"{name}.{label}.ptx", recipe, entry)
                row["ours"][label].update(tree=str(tree), git=rev)
                row["params"] = row["ours"][label]["params"]
                o = row["ours"][label]
                print(f"{name:46} {label}: {o['entry'][:40]}, {o['threads']} threads, "
                      f"{o['dynamic_smem']} B dynamic smem, lowered in {o['lower_s']:.1f} s; "
                      f"ptxas {({True: 'ok', False: 'REJECTED', None: 'not found'})[o['ptxas_ok']]} "
                      f"({o['ptxas_s']:.1f} s)", flush=True)
            except Exception as e:  # noqa: BLE001 - recorded; the tileiras half still runs
                row["ours"][label] = {"error": f"{type(e).__name__}: {e}", "tree": str(tree), "git": rev}
                print(f"{name:46} {label}: FAILED {row['ours'][label]['error']}", flush=True)
            # tileiras
            if tileiras and cuobjdump:
                cubin = out / f"{name}.tileiras.cubin"
                if not cubin.exists():
                    proc = subprocess.run([tileiras, "--gpu-name", TARGET, str(kernels_dir / f"{name}.tileirbc"),
                                           "-o", str(cubin)], capture_output=True, text=True, timeout=600)
                    if proc.returncode != 0 or not cubin.exists():
                        cubin.unlink(missing_ok=True)
                        raise RuntimeError(f"tileiras failed: {(proc.stderr or proc.stdout).strip()[:300]}")
                funcs = _cubin_facts(cubin, cuobjdump)
                entry_name = next((e for e in funcs if row.get("ours", {}).get(label, {}).get("entry") == e),
                                  next(iter(funcs)) if len(funcs) == 1 else None)
                _need(entry_name is not None, f"which kernel of the cubin? {sorted(funcs)}")
                f = funcs[entry_name]
                _need(f.get("reqntid") is not None, "no EIATTR_REQNTID in the tileiras cubin")
                cl = f.get("cluster")
                row["tileiras"] = {"cubin": cubin.name, "entry": entry_name, "reqntid": f["reqntid"],
                                   "static_smem": f.get("static_smem", 0), "param_sizes": f.get("param_sizes"),
                                   "cluster": cl if cl and list(cl) != [1, 1, 1] else None}
                if row.get("params") and f.get("param_sizes") and \
                        [_PSIZE.get(p, 4) for p in row["params"]] != f["param_sizes"]:
                    row["tileiras"]["warning"] = "parameter sizes differ from our PTX's"
                print(f"{name:46} tileiras: {f['reqntid']} threads, {f.get('static_smem', 0)} B static smem"
                      + (f", cluster {cl}" if row["tileiras"]["cluster"] else ""), flush=True)
        except Exception as e:  # noqa: BLE001 - one kernel's failure is recorded, the others go on
            row["error"] = f"{type(e).__name__}: {e}"
            print(f"{name:46} FAILED: {row['error']}", flush=True)
        else:
            row.pop("error", None)
    mpath.write_text(json.dumps(manifest, indent=1))
    print(f"manifest: {mpath}")


# ------------------------------------------------------------------ gpu


def _launch_module():
    """``tile_lsp.codegen.launch``; loaded from its file when ``tile_lsp.codegen`` cannot be imported
    (launch.py needs only NumPy and cuda-bindings)."""
    try:
        from tile_lsp.codegen import launch
        return launch
    except Exception:  # noqa: BLE001 - a broken lowering pipeline must not stop the timing of prepared PTX
        import importlib.util

        import tile_lsp

        spec = importlib.util.spec_from_file_location("_tile_lsp_launch",
                                                      _tree_of(tile_lsp) / "tile_lsp" / "codegen" / "launch.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_tile_lsp_launch"] = mod
        spec.loader.exec_module(mod)
        return mod


def _compare(got, want, rtol: float, atol: float) -> dict:
    """Element-wise ``got`` against ``want`` (NaN matches nothing: an unwritten output element differs)."""
    import numpy as np

    g = np.asarray(got, np.float32).reshape(-1)
    w = np.asarray(want, np.float32).reshape(-1)
    if g.shape != w.shape:
        return {"agree": False, "why": f"{g.size} elements against {w.size}"}
    close = np.isclose(g, w, rtol=rtol, atol=atol)
    fin = np.isfinite(g) & np.isfinite(w)
    err = np.abs(g[fin] - w[fin])
    return {"agree": bool(close.all()), "bad": int(close.size - np.count_nonzero(close)), "of": int(g.size),
            "max_abs_err": float(err.max()) if err.size else None, "nan": int(np.isnan(g).sum())}


def _check_text(c: dict | None) -> str:
    if c is None:
        return "-"
    if c["agree"]:
        return "agree"
    where = f" {c['array']}" if c.get("array") else ""
    if "why" in c:
        return f"DIFFER{where} ({c['why']})"
    err = "-" if c["max_abs_err"] is None else f"{c['max_abs_err']:.3g}"
    return f"DIFFER{where} ({c['bad']}/{c['of']} off, max abs err {err}, {c['nan']} NaN)"


def _stats(times: list[float]) -> dict:
    return {"ms": statistics.median(times), "mean_ms": statistics.fmean(times), "min_ms": min(times),
            "runs": len(times)}


class _Device:
    """The arrays of one kernel on the device (allocated once) and the launches on them."""

    def __init__(self, launch, arrays: list):
        self.launch = launch
        self.cu = launch._driver()
        launch.context()
        self.arrays = arrays
        self.ptrs = []
        for a in arrays:
            self.ptrs.append(launch._check(self.cu.cuMemAlloc(max(1, a.nbytes)), "cuMemAlloc"))

    def upload(self) -> None:
        for a, p in zip(self.arrays, self.ptrs):
            self.launch._check(self.cu.cuMemcpyHtoD(p, a.ctypes.data, a.nbytes), "cuMemcpyHtoD")

    def download(self, k: int):
        import numpy as np

        host = np.empty_like(self.arrays[k])
        self.launch._check(self.cu.cuMemcpyDtoH(host.ctypes.data, self.ptrs[k], host.nbytes), "cuMemcpyDtoH")
        return host

    def free(self) -> None:
        for p in self.ptrs:
            self.cu.cuMemFree(p)
        self.ptrs = []

    def launcher(self, func, param_types: list, args: list, grid, block, dynamic_smem: int, cluster):
        """A function that launches ``func`` once with ``args`` (device pointers as ints, scalars)."""
        import ctypes

        import numpy as np

        values = []
        for pty, a in zip(param_types, args):
            if pty in (".u64", ".b64", ".s64") and isinstance(a, int):
                values.append(ctypes.c_uint64(a))
            elif pty == ".b16" and isinstance(a, float):
                values.append(ctypes.c_uint16(int(np.array(a, dtype=np.float16).view(np.uint16))))
            else:
                values.append(self.launch._SCALARS.get(pty, ctypes.c_uint32)(a))
        ptrs = (ctypes.c_void_p * max(1, len(values)))(*[ctypes.addressof(v) for v in values])
        cu, launch = self.cu, self.launch
        grid, block = tuple(grid), tuple(block) + (1,) * (3 - len(block))

        def go():
            if cluster:
                launch._launch_ex(cu, func, grid, block, dynamic_smem, ptrs, tuple(cluster))
            else:
                launch._check(cu.cuLaunchKernel(func, *grid, *block, dynamic_smem, 0, ctypes.addressof(ptrs), 0),
                              "cuLaunchKernel")
        go.values = values  # the parameter buffers live as long as the launcher
        return go

    def time(self, go, warmup: int, runs: int) -> dict:
        """``warmup`` launches, then ``runs`` launches each between two CUDA events
        (:func:`tile_lsp.codegen.launch.time_launches`); their median and mean (ms)."""
        return _stats(self.launch.time_launches(go, runs, warmup))


def _torch_op(entry: dict, t: list, scalars: list):
    """The PyTorch equivalent of ``entry``'s kernel on tensors ``t`` (one per array, in order):
    a function returning ``{array index: output tensor}``."""
    import torch
    import torch.nn.functional as F

    name = entry["name"].split(".")[0]
    if name.startswith("matmul"):
        return lambda: {2: torch.matmul(t[0], t[1])}
    if name.startswith("ew_float_arith"):
        a, b = t[0], t[1]
        return lambda: {2: a * b - (a + b) * (a - b) - a / (b.abs() + 1)}
    if name.startswith("softmax"):
        return lambda: {1: torch.softmax(t[0], dim=-1)}
    if name.startswith("rmsnorm"):
        eps = scalars[0]

        def rms():
            xf = t[0].float()
            return {2: (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * t[1].float()).half()}
        return rms
    if name.startswith("flash_attention"):
        return lambda: {3: F.scaled_dot_product_attention(t[0], t[1], t[2], is_causal=True, scale=scalars[0])}
    if name.startswith("layernorm_bwd"):
        dy, x, w = t[:3]
        cols = x.shape[-1]
        bias = torch.zeros_like(w)
        # the kernel's mean and rstd, in the dtype and shape this backend's forward gives them (f32 on CUDA)
        _, m_ref, r_ref = torch.native_layer_norm(x, [cols], w, bias, 1e-5)
        mean, rstd = t[3].to(m_ref.dtype).view_as(m_ref), t[4].to(r_ref.dtype).view_as(r_ref)

        def ln_bwd():
            dx, dw, db = torch.ops.aten.native_layer_norm_backward(
                dy, x, [cols], mean, rstd, w, bias, [True, True, True])
            return {5: dx, 6: dw, 7: db}
        return ln_bwd
    raise ValueError(f"no PyTorch op for {entry['name']}")


def _variant_line(name: str, v: dict, rate: dict) -> str:
    if v.get("error"):
        return f"  {name:12} ERROR {v['error']}"
    r = _rate_text(rate, v["ms"])
    return f"  {name:12} {_time_text(v['ms']):>10} {r:>16}  {_check_text(v.get('check'))}"


def _row(entry: dict) -> dict:
    return {"kernel": entry["name"], "size": entry.get("size"), "grid": entry.get("grid"),
            "rate": entry.get("rate"), "variants": {}}


def run_one(entry: dict, cubins: Path, labels: list[str], runs: int, warmup: int, row: dict) -> dict:
    """Inputs, launches, checks and times of one manifest kernel (``entry``) on the GPU, filled into ``row``
    (:func:`_row`: what is done stays there when a step raises); returns ``row``."""
    import numpy as np

    name = entry["name"]
    launch = _launch_module()
    row["device"] = launch.device_name()
    t0 = time.perf_counter()
    arrays = make_arrays(entry)
    scalars = [v for _, v in entry["scalars"]]
    outs = [k for k, a in enumerate(entry["arrays"]) if a["out"]]
    rtol, atol = entry["tol"]
    print(f"{name}: inputs {sum(a.nbytes for a in arrays) / 1e6:.0f} MB in {time.perf_counter() - t0:.1f} s, "
          f"grid {tuple(entry['grid'])}", flush=True)
    dev = _Device(launch, arrays)
    results: dict[str, dict] = {}
    try:
        args = bind(entry["args"], arrays, scalars, pointer=lambda k, a: int(dev.ptrs[k]))
        jobs = []
        for label in labels:
            o = entry.get("ours", {}).get(label)
            if o is None:
                continue
            if o.get("error"):
                row["variants"][label] = {"error": o["error"]}
                continue
            jobs.append((label, (cubins / o["ptx"]).read_bytes(), o["entry"], o["params"], [o["threads"], 1, 1],
                         o["dynamic_smem"], 0, None))
        ti = entry.get("tileiras")
        if ti and entry.get("params"):
            jobs.append(("tileiras", (cubins / ti["cubin"]).read_bytes(), ti["entry"], entry["params"],
                         ti["reqntid"], 0, ti.get("static_smem", 0), ti.get("cluster")))
        elif ti is None:
            row["variants"]["tileiras"] = {"error": "no tileiras cubin in the manifest"}
        else:
            row["variants"]["tileiras"] = {"error": "no PTX parameter types (no lowering of this kernel worked)"}
        for which, image, fname, params, block, dsmem, ssmem, cluster in jobs:
            v = row["variants"][which] = {"block": block, "dynamic_smem": dsmem}
            module = None
            try:
                t1 = time.perf_counter()
                module = launch.Module(image)
                v["load_s"] = round(time.perf_counter() - t1, 2)
                func = module.function(fname)
                cu = dev.cu
                if dsmem > 48 * 1024 or ssmem > 48 * 1024:
                    limit = dsmem
                    if ssmem > 48 * 1024:  # tileiras' large static buffers need the opt-in limit raised
                        d = launch._check(cu.cuCtxGetDevice(), "cuCtxGetDevice")
                        optin = launch._check(cu.cuDeviceGetAttribute(
                            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d), "optin")
                        limit = max(dsmem, optin - ssmem)
                    launch._check(cu.cuFuncSetAttribute(
                        func, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, limit),
                        "cuFuncSetAttribute")
                go = dev.launcher(func, params, args, entry["grid"], block, dsmem, cluster)
                dev.upload()
                go()
                launch._check(cu.cuCtxSynchronize(), "kernel execution")
                results[which] = {k: dev.download(k) for k in outs}
                v.update(dev.time(go, warmup, runs))
            except Exception as e:  # noqa: BLE001 - recorded; the other variants still run
                v["error"] = f"{type(e).__name__}: {e}"
            finally:
                if module is not None:
                    module.unload()
        ref = results.get("tileiras")
        for which, got in results.items():
            if which != "tileiras" and ref is not None:
                checks = [dict(_compare(got[k], ref[k], rtol, atol), array=entry["arrays"][k]["name"]) for k in outs]
                row["variants"][which]["check"] = next((c for c in checks if not c["agree"]), checks[0])
        for which in row["variants"]:
            print(_variant_line(which, row["variants"][which], entry["rate"]), flush=True)
    finally:
        dev.free()
    # PyTorch
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        row["pytorch"] = {"missing": f"torch not importable: {e}"}
        print("  pytorch      -  (torch not importable)")
        return row
    row["torch_version"] = torch.__version__
    p = row["pytorch"] = {"op": entry["torch"]}
    try:
        def tensor(a):
            if a.dtype.name == "bfloat16":
                return torch.from_numpy(a.view(np.int16)).cuda().view(torch.bfloat16)
            return torch.from_numpy(a).cuda()

        t = [tensor(a) for a in arrays]
        fn = _torch_op(entry, t, scalars)
        got = fn()
        torch.cuda.synchronize()
        want = ref if ref is not None else next(iter(results.values()), None)
        if want is not None:
            checks = [dict(_compare(got[k].float().cpu().numpy(), want[k], 2 * rtol, 2 * atol),
                           array=entry["arrays"][k]["name"]) for k in got]
            p["check"] = next((c for c in checks if not c["agree"]), checks[0])
            p["checked_against"] = "tileiras" if ref is not None else next(iter(results))
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
        for s, e in events:
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        p.update(_stats([s.elapsed_time(e) for s, e in events]))
    except Exception as e:  # noqa: BLE001
        p["error"] = f"{type(e).__name__}: {e}"
    print(_variant_line("pytorch", p, entry["rate"]), flush=True)
    return row


def _time_text(ms: float) -> str:
    return f"{ms * 1e3:.1f} us" if ms < 1 else f"{ms:.3f} ms"


def _rate_value(rate: dict, ms: float) -> float:
    if rate["kind"] == "flops":
        return rate["flops"] / (ms * 1e-3) / 1e12
    return rate["bytes"] / (ms * 1e-3) / 1e9


def _rate_text(rate: dict, ms: float) -> str:
    v = _rate_value(rate, ms)
    return f"{v:.1f} TFLOP/s" if rate["kind"] == "flops" else f"{v:,.0f} GB/s"


def _cell(row: dict, v: dict | None) -> str:
    if not v:
        return "-"
    if v.get("error"):
        return "error"
    if "ms" not in v:
        return "-"
    return f"{_rate_text(row['rate'], v['ms'])} ({_time_text(v['ms'])})"


def table(rows: list[dict], labels: list[str]) -> str:
    """The markdown table of ``rows`` (one per kernel) with a column per label."""
    head = (["kernel (sm_90)", "size", "grid"] + labels + ["tileiras", "PyTorch"]
            + [f"{lab} / tileiras" for lab in labels] + ["outputs"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        vs = r.get("variants", {})
        th = vs.get("tileiras", {})
        cells = [r["kernel"], r.get("size", ""), "(" + ",".join(map(str, r.get("grid") or [])) + ")"]
        cells += [_cell(r, vs.get(lab)) for lab in labels]
        cells += [_cell(r, th), _cell(r, r.get("pytorch"))]
        for lab in labels:
            v = vs.get(lab) or {}
            cells.append(f"{th['ms'] / v['ms']:.2f}x" if "ms" in v and "ms" in th else "-")
        notes = []
        if r.get("error"):
            notes.append(f"ERROR {r['error']}"[:160])
        for name in labels + ["tileiras"]:
            v = vs.get(name) or {}
            if v.get("error"):
                notes.append(f"{name}: {v['error']}"[:160])
            elif v.get("check"):
                notes.append(f"{name} {_check_text(v['check'])}")
        p = r.get("pytorch") or {}
        if p.get("check"):
            notes.append(f"torch {_check_text(p['check'])}")
        elif p.get("error"):
            notes.append(f"torch: {p['error']}"[:160])
        cells.append("; ".join(notes) or "-")
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


def _manifest_kernels(cubins: Path, only: str | None) -> tuple[dict, list[dict], list[str]]:
    """The manifest, its kernels (table order first; each with ``name``) and the labels in first-seen order."""
    manifest = json.loads((cubins / "manifest.json").read_text())
    ks = manifest.get("kernels", {})
    order = [b["kernel"] for b in BENCHES if b["kernel"] in ks] + [k for k in ks if k not in
                                                                     {b["kernel"] for b in BENCHES}]
    entries = [dict(ks[k], name=k) for k in order if not only or only in k]
    labels: list[str] = []
    for e in entries:
        for lab in e.get("ours", {}):
            if lab not in labels:
                labels.append(lab)
    return manifest, entries, labels


def dry_run(entry: dict, labels: list[str], kernels_dir: Path) -> None:
    """Build ``entry``'s inputs and bind them as ``gpu`` would, print the bindings; no CUDA call.

    Checks the grid (:func:`grid_for`), the PTX parameter types of every
    label, and, where the interpreter and the kernel's ``.mlir`` are at hand,
    that its ``bind_arrays`` gives the same arguments.
    """
    name = entry["name"]
    t0 = time.perf_counter()
    arrays = make_arrays(entry)
    scalars = [v for _, v in entry["scalars"]]
    gen_s = time.perf_counter() - t0
    nbytes = sum(a.nbytes for a in arrays)
    rate = entry["rate"]
    grid, how = grid_for(name, [a.shape for a in arrays])
    _need(list(grid) == list(entry["grid"]), f"manifest grid {entry['grid']} != {list(grid)}")
    work = (f"{rate['flops'] / 1e9:,.1f} GFLOP" if rate["kind"] == "flops"
            else f"{rate['bytes'] / 1e6:,.1f} MB moved")
    _need(rate["kind"] == "flops" or rate["bytes"] == nbytes, "bytes in the manifest differ from the arrays'")
    print(f"\n{name}  [{entry['size']}]\n  grid {tuple(grid)} = {how}; {work}; "
          f"arrays {nbytes / 1e6:,.1f} MB, made in {gen_s:.1f} s")
    args = bind(entry["args"], arrays, scalars)
    where: dict[int, list[str]] = {}
    for i, r in enumerate(entry["args"]):
        if r[0] in ("shape", "stride"):
            where.setdefault(r[1], []).append(f"{r[0]}[{r[2]}]=arg{i}:{args[i]}")
    for k, (a, spec) in enumerate(zip(arrays, entry["arrays"])):
        ptr = [f"arg{i}" for i, r in enumerate(entry["args"]) if r == ["array", k]]
        estr = tuple(s // a.itemsize for s in a.strides)
        print(f"  #{k} {spec['name']:5} {str(a.shape):22} {a.dtype.name:8} {spec['init']:10}"
              f"{' out' if spec['out'] else '    '}  ptr={','.join(ptr)}  {' '.join(where.get(k, []))}"
              f"  (element strides {estr})")
    for i, r in enumerate(entry["args"]):
        if r[0] == "scalar":
            print(f"  scalar arg{i} {entry['scalars'][r[1]][0]} = {args[i]}")
    for lab in labels + ["tileiras"]:
        o = entry.get("tileiras") if lab == "tileiras" else entry.get("ours", {}).get(lab)
        if o is None:
            print(f"  {lab}: not prepared")
            continue
        if o.get("error"):
            print(f"  {lab}: {o['error']}")
            continue
        params = entry["params"] if lab == "tileiras" else o["params"]
        _need(len(params) == len(args), f"{lab}: {len(params)} parameters, {len(args)} arguments")
        bad = [i for i, (p, r) in enumerate(zip(params, entry["args"]))
               if not _ptx_type_ok(r, p, args[i] if r[0] == "scalar" else None)]
        _need(not bad, f"{lab}: parameters {bad} have types that do not fit their arguments")
        if lab == "tileiras":
            print(f"  tileiras: {o['entry'][:48]}, CTA {o['reqntid']}, static smem {o['static_smem']} B"
                  + (f", cluster {o['cluster']}" if o.get("cluster") else "") + (f"  {o['warning']}"
                                                                                 if o.get("warning") else ""))
        else:
            print(f"  {lab}: {o['ptx']}, {len(params)} params ok, {o['threads']} threads, "
                  f"{o['dynamic_smem']} B dynamic smem, ptxas {'ok' if o.get('ptxas_ok') else 'REJECTED'} "
                  f"(tree {o.get('tree')}, git {o.get('git')})")
    mlir = kernels_dir / f"{name}.mlir"
    try:
        from tile_lsp.analysis import interpreter as interp
    except Exception as e:  # noqa: BLE001 - optional cross-check
        print(f"  interpreter cross-check skipped: {type(e).__name__}: {e}")
        return
    if not mlir.exists():
        print(f"  interpreter cross-check skipped: no {mlir.name}")
        return
    theirs = interp.bind_arrays(interp.infer_array_params(mlir.read_text()), arrays, scalars)
    same = len(theirs) == len(args) and all(
        (x is y) if hasattr(x, "shape") else (x == y) for x, y in zip(args, theirs))
    _need(same, "the interpreter's bind_arrays binds differently")
    print(f"  interpreter bind_arrays: the same {len(args)} arguments")


def _run_child(entry: dict, args, labels: list[str], timeout: float) -> dict:
    """:func:`run_one` in a child process (``gpu --child``): a fault or hang there costs only this kernel."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "row.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "gpu", "--cubins", str(args.cubins), "--runs",
               str(args.runs), "--warmup", str(args.warmup), "--labels", ",".join(labels),
               "--child", entry["name"], "--child-out", str(out)]
        sys.stdout.flush()
        try:
            proc = subprocess.run(cmd, timeout=timeout, env=dict(os.environ, PYTHONUNBUFFERED="1"))
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = None
        if out.exists():
            return json.loads(out.read_text())
    why = f"timed out after {timeout:.0f} s" if rc is None else f"child process exited with status {rc}"
    print(f"{entry['name']}: {why}", flush=True)
    return dict(_row(entry), error=why)


def _guarded(entry: dict, args, labels: list[str]) -> dict:
    row = _row(entry)
    try:
        return run_one(entry, Path(args.cubins), labels, args.runs, args.warmup, row)
    except Exception as e:  # noqa: BLE001 - one kernel's failure is a row, the others still run
        print(f"{entry['name']}: FAILED {type(e).__name__}: {e}", flush=True)
        row["error"] = f"{type(e).__name__}: {e}"
        return row


def gpu_times(args) -> None:
    """The ``gpu`` mode: every prepared kernel on the GPU (or ``--dry-run``: inputs and bindings only)."""
    cubins = Path(args.cubins)
    manifest, entries, labels = _manifest_kernels(cubins, args.only)
    if args.labels:
        labels = [lab for lab in args.labels.split(",") if lab]
    if args.child:
        entry = next(e for e in entries if e["name"] == args.child)
        row = _guarded(entry, args, labels)
        Path(args.child_out).write_text(json.dumps(row, indent=1))
        return
    if args.dry_run:
        import tile_lsp

        print(f"dry run (no CUDA call); tile_lsp from {_tree_of(tile_lsp)}; labels {labels}")
        for entry in entries:
            try:
                dry_run(entry, labels, Path(args.kernels))
            except Exception as e:  # noqa: BLE001
                print(f"{entry['name']}: FAILED {type(e).__name__}: {e}")
        return
    start = time.monotonic()
    rows = []
    print(f"{len(entries)} kernels, labels {labels}, {args.warmup} warm-up + {args.runs} timed launches each "
          f"(CUDA events, median)", flush=True)
    for entry in entries:
        if entry.get("error") and not entry.get("args"):
            rows.append(dict(_row(entry), error=f"not prepared: {entry['error']}"))
            continue
        left = args.budget - (time.monotonic() - start)
        if left < 20:
            rows.append(dict(_row(entry), error="not run (time budget)"))
            continue
        if args.in_process:
            rows.append(_guarded(entry, args, labels))
        else:
            rows.append(_run_child(entry, args, labels, min(args.kernel_timeout, left)))
    device = next((r["device"] for r in rows if r.get("device")), "-")
    torch_v = next((r["torch_version"] for r in rows if r.get("torch_version")), "-")
    md = table(rows, labels)
    print(f"\ndevice: {device}; torch {torch_v}; {args.runs} runs, median; wall {time.monotonic() - start:.0f} s\n")
    print(md)
    if args.json:
        report = {"device": device, "torch": torch_v, "runs": args.runs, "warmup": args.warmup,
                  "timer": "CUDA events around each launch; ms = median, mean_ms, min_ms",
                  "labels": labels, "trees": {lab: next((e["ours"][lab].get("git") for e in entries
                                                         if lab in e.get("ours", {})), None) for lab in labels},
                  "rows": rows, "table": md}
        for r in rows:
            th = r.get("variants", {}).get("tileiras", {})
            for name, v in list(r.get("variants", {}).items()) + [("pytorch", r.get("pytorch") or {})]:
                if "ms" in v:
                    v["rate_value"] = _rate_value(r["rate"], v["ms"])
                    v["rate_unit"] = "TFLOP/s" if r["rate"]["kind"] == "flops" else "GB/s"
                    if name in labels and "ms" in th:
                        r.setdefault("ratios", {})[f"{name} / tileiras"] = th["ms"] / v["ms"]
        Path(args.json).write_text(json.dumps(report, indent=1))
        print(f"\nwrote {args.json}")


def main() -> None:
    """Command line: ``compile``, ``prepare`` or ``gpu`` (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("compile", help="compile wall time: tile-lsp ptx (+ptxas) against tileiras")
    c.add_argument("--limit", type=int, default=0)
    c.add_argument("--target", default=None)
    pr = sub.add_parser("prepare", help="lower the kernels to PTX, compile tileiras cubins, merge manifest.json")
    pr.add_argument("--out", required=True, help="folder for the PTX, cubins and manifest.json")
    pr.add_argument("--label", default="ours", help="name of this lowering's column (default: ours)")
    pr.add_argument("--only", default=None, help="kernels whose name contains this")
    pr.add_argument("--kernels", default=str(KERNELS), help="the corpus kernels folder")
    g = sub.add_parser("gpu", help="time the prepared kernels on the GPU")
    g.add_argument("--cubins", required=True, help="the folder prepare wrote")
    g.add_argument("--runs", type=int, default=20, help="timed launches per variant")
    g.add_argument("--warmup", type=int, default=3, help="untimed launches before them")
    g.add_argument("--json", default=None, help="write the table and all numbers here")
    g.add_argument("--only", default=None, help="kernels whose name contains this")
    g.add_argument("--labels", default=None, help="comma-separated labels to run, in column order")
    g.add_argument("--dry-run", action="store_true", help="inputs and bindings only, no CUDA call")
    g.add_argument("--in-process", action="store_true", help="no child process per kernel")
    g.add_argument("--budget", type=float, default=230.0, help="seconds for all kernels")
    g.add_argument("--kernel-timeout", type=float, default=120.0, help="seconds for one kernel")
    g.add_argument("--kernels", default=str(KERNELS), help="corpus kernels folder (dry run's cross-check)")
    g.add_argument("--child", default=None, help=argparse.SUPPRESS)
    g.add_argument("--child-out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    {"compile": compile_times, "prepare": prepare, "gpu": gpu_times}[args.mode](args)


if __name__ == "__main__":
    main()
