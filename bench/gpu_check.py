"""One-call GPU check: our PTX, tileiras' cubins and the reference interpreter on every runnable corpus kernel.

Two halves, because tileiras is not installed on the GPU machine::

    # here, where tileiras and cuobjdump are (PyPI nvidia-cuda-tileiras):
    python bench/gpu_check.py prepare --out .devcarry/cubins
    # on the GPU machine (cuda-bindings, numpy, ml_dtypes; pytest-xdist optional):
    python bench/gpu_check.py run --cubins .devcarry/cubins --out OUTDIR [--jobs 16] [--only SUBSTR]
    # without a GPU: inputs + interpreter + lowering only ("gpu: skipped")
    python bench/gpu_check.py run --cubins .devcarry/cubins --out OUTDIR --no-gpu
    # one kernel, our PTX only (what compute-sanitizer wraps):
    python bench/gpu_check.py one KERNEL [--grid 2,2,1]

``prepare`` compiles the ``.tileirbc`` of every corpus kernel with verdict
``ok`` for sm_80/86/89/90 with ``tileiras --gpu-name sm_90`` (tileiras puts
only SASS in a cubin, and sm_8x SASS does not run on an H100), reads each
kernel's CTA size (``EIATTR_REQNTID``), cluster shape, static shared memory
and parameter sizes from ``cuobjdump -elf``, and writes ``manifest.json``.

``run`` (1) runs ``tests/test_gpu.py`` under pytest in the background,
(2) builds inputs for each kernel from its IR (:func:`make_inputs`), the
interpreter's reference (:func:`reference`) and our PTX in a process pool,
launching ours and tileiras' cubin on the GPU in a child process that is
replaced after a fault, and compares the three, (3) runs compute-sanitizer
racecheck/memcheck on our PTX for the tensor-core and reduction kernels, and
(4) writes ``OUTDIR/gpu_check.json``.  Every step is time-bounded (the whole
run stays under ~7.5 minutes).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
KERNELS = ROOT.parent / "shared" / "corpus" / "kernels"
H100_RUNNABLE = ("sm_80", "sm_86", "sm_89", "sm_90")
CUBIN_TARGET = "sm_90"

# ------------------------------------------------------------------ corpus


def runnable_kernels(kernels_dir: Path = KERNELS) -> list[dict]:
    """Corpus kernels an H100 can run: MANIFEST verdict ``ok`` and target sm_80/86/89/90.

    Returns dicts ``{"name", "target", "mlir", "tileirbc"}`` (``name``: file
    name without ``.mlir``; paths as strings).  Raises ``FileNotFoundError``
    without a MANIFEST.tsv.
    """
    rows = (kernels_dir / "MANIFEST.tsv").read_text().splitlines()
    head = rows[0].split("\t")
    out = []
    for row in rows[1:]:
        c = dict(zip(head, row.split("\t")))
        if c.get("verdict") != "ok" or c.get("target") not in H100_RUNNABLE:
            continue
        name = c["file"][: -len(".mlir")]
        out.append({"name": name, "target": c["target"], "mlir": str(kernels_dir / c["file"]),
                    "tileirbc": str(kernels_dir / (c.get("bytecode") or name + ".tileirbc"))})
    return out


# ------------------------------------------------------------------ cuobjdump


def parse_cuobjdump_elf(text: str) -> dict[str, dict]:
    """Launch facts per kernel function from ``cuobjdump -elf`` output.

    Returns ``{function: {"reqntid": [x, y, z] | None, "cluster": [x, y, z] | None,
    "static_smem": bytes, "param_sizes": [bytes per parameter, by ordinal],
    "attributes": [EIATTR names]}}``.  ``reqntid`` is the CTA size the kernel
    was compiled for (launch exactly that; the driver's MAX_THREADS_PER_BLOCK
    is only an upper bound); ``cluster`` comes from ``EIATTR_CTA_PER_CLUSTER``
    or ``EIATTR_REQUIRED_CLUSTER``-style attributes, ``None`` when absent.
    """
    funcs: dict[str, dict] = {}

    def entry(name):
        return funcs.setdefault(name, {"reqntid": None, "cluster": None, "static_smem": 0,
                                       "param_sizes": {}, "attributes": []})

    for m in re.finditer(r"^\s*\d+\s+[0-9a-f]+\s+([0-9a-f]+)\s.*NOBITS.*\s\.nv\.shared\.(\S+)\s*$", text, re.M):
        if not m.group(2).startswith("reserved"):
            entry(m.group(2))["static_smem"] = int(m.group(1), 16)
    current = None
    attr = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(".nv.info."):
            current = s[len(".nv.info."):]
            entry(current)
            attr = None
        elif s.startswith(".") and not s.startswith(".nv.info"):
            current = None
        elif current and s.startswith("Attribute:"):
            attr = s.split(":", 1)[1].strip()
            entry(current)["attributes"].append(attr)
        elif current and attr and s.startswith("Value:"):
            value = s.split(":", 1)[1].strip()
            f = entry(current)
            nums = [int(x, 16) for x in re.findall(r"0x[0-9a-fA-F]+", value)]
            if attr == "EIATTR_REQNTID" and len(nums) >= 3:
                f["reqntid"] = nums[:3]
            elif "CLUSTER" in attr and len(nums) >= 3 and attr != "EIATTR_MAX_CLUSTER_RANK":
                f["cluster"] = nums[:3]
            elif attr == "EIATTR_KPARAM_INFO":
                o = re.search(r"Ordinal\s*:\s*(0x[0-9a-f]+).*Size\s*:\s*(0x[0-9a-f]+)", value)
                if o:
                    f["param_sizes"][int(o.group(1), 16)] = int(o.group(2), 16)
            attr = None
    for f in funcs.values():
        sizes = f["param_sizes"]
        f["param_sizes"] = [sizes[i] for i in sorted(sizes)]
    return {k: v for k, v in funcs.items() if v["attributes"] or v["static_smem"]}


def cubin_facts(cubin: Path, cuobjdump: str) -> dict[str, dict]:
    """:func:`parse_cuobjdump_elf` of ``cuobjdump -elf cubin``; raises ``RuntimeError`` when cuobjdump fails."""
    proc = subprocess.run([cuobjdump, "-elf", str(cubin)], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"cuobjdump failed: {proc.stderr.strip()[:300]}")
    return parse_cuobjdump_elf(proc.stdout)


def _prepare_one(args) -> dict:
    k, out, tileiras, cuobjdump = args
    row = {"name": k["name"], "target": k["target"], "compiled_for": CUBIN_TARGET, "cubin": None}
    dst = Path(out) / f"{k['name']}.cubin"
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([tileiras, "--gpu-name", CUBIN_TARGET, k["tileirbc"], "-o", str(dst)],
                              capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        row["error"] = "tileiras timed out (300 s)"
        return row
    row["tileiras_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    if proc.returncode != 0 or not dst.exists():
        row["error"] = f"tileiras failed: {(proc.stderr or proc.stdout).strip()[:300]}"
        return row
    row["cubin"] = dst.name
    row["cubin_bytes"] = dst.stat().st_size
    try:
        row["functions"] = cubin_facts(dst, cuobjdump)
    except Exception as e:  # noqa: BLE001 - recorded in the manifest
        row["error"] = str(e)
    return row


def prepare(out: str | Path, only: str | None = None, jobs: int | None = None,
            kernels: list[dict] | None = None) -> dict:
    """Compile every runnable corpus kernel's ``.tileirbc`` to ``out/<name>.cubin`` and write ``out/manifest.json``.

    ``only``: substring filter on kernel names; ``kernels``: an explicit list
    (from :func:`runnable_kernels`).  Returns the manifest (``{"kernels": [row...]}``,
    a row per kernel with ``cubin`` = file name or ``None`` and ``error``).
    Raises ``RuntimeError`` when tileiras or cuobjdump is not installed.
    """
    from tile_lsp.nvidia import find_tool

    tileiras, cuobjdump = find_tool("tileiras"), find_tool("cuobjdump")
    if not tileiras or not cuobjdump:
        raise RuntimeError("tileiras/cuobjdump not found (pip install -e '.[nvidia]')")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ks = kernels if kernels is not None else runnable_kernels()
    if only:
        ks = [k for k in ks if only in k["name"]]
    with mp.get_context("spawn").Pool(jobs or os.cpu_count() or 2) as pool:
        rows = pool.map(_prepare_one, [(k, str(out), tileiras, cuobjdump) for k in ks])
    manifest = {"compiled_for": CUBIN_TARGET, "note": "sm_8x kernels compiled for sm_90: tileiras cubins "
                "hold SASS only, which does not run on another major architecture", "kernels": rows}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


# ------------------------------------------------------------------ inputs

_POSITIVE = ("transcendental", "pow_atan2", "hyperbolic", "while_break", "static_unroll")
_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", "tf32": "float32",
           "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2", "i1": "bool"}


def _np_dtype(t) -> np.dtype:
    import ml_dtypes

    from tile_lsp.dialect import types as T

    name = getattr(t, "name", None) or f"i{T.bit_width(t)}"
    name = _DTYPES.get(name, name)
    if re.fullmatch(r"i\d+", name):
        name = f"int{name[1:]}"
    return np.dtype(getattr(ml_dtypes, name, None) or name)


@dataclass
class Inputs:
    """Everything one launch needs, for the interpreter and the GPU alike.

    ``arrays``: one per array parameter (in array order); ``scalars``: the
    scalar parameters in order; ``memory``: arrays reached only through
    addresses stored in ``tables`` (``{array index: [memory index per row]}``;
    column 0 of each row holds the address, set by :func:`bind_tables`);
    ``args``: the argument recipe per parameter (``["array", k]``, ``["shape", k, d]``,
    ``["stride", k, d]``, ``["scalar", value]``); ``grid``: CTAs in x, y, z;
    ``notes``: how inputs were chosen.
    """

    arrays: list
    scalars: list
    memory: list
    tables: dict
    args: list
    grid: tuple
    kinds: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def copies(self) -> tuple[list, list]:
        """Fresh copies of ``arrays`` and ``memory``."""
        return [a.copy() for a in self.arrays], [m.copy() for m in self.memory]


def bind_tables(inputs: Inputs, arrays: list, memory: list, addr_of) -> None:
    """Write the address of each memory array (``addr_of(i) -> int``) into column 0 of its table row, in place."""
    for k, rows in inputs.tables.items():
        t = arrays[int(k)]
        for r, i in enumerate(rows):
            t[r, 0] = addr_of(i)


def bind_args(inputs: Inputs, arrays: list) -> list:
    """Kernel arguments from the recipe: arrays by index, shapes/strides (elements) from them, scalars."""
    out = []
    for a in inputs.args:
        if a[0] == "array":
            out.append(arrays[a[1]])
        elif a[0] == "shape":
            out.append(int(arrays[a[1]].shape[a[2]]))
        elif a[0] == "stride":
            arr = arrays[a[1]]
            out.append(int(arr.strides[a[2]] // arr.itemsize))
        else:
            out.append(a[1])
    return out


def _chase_array(v, params, array_of, view_src):
    """Array index a view/pointer value comes from (through views, tensor views, offsets, casts)."""
    from tile_lsp.analysis.interpreter.params import _pointer_source

    seen = 0
    while seen < 64:
        seen += 1
        if id(v) in view_src:
            return view_src[id(v)]
        d = v.defining_op
        if d is None:
            i = next((i for i, p in enumerate(params) if p is v), None)
            return array_of.get(i)
        if d.name in ("cuda_tile.make_partition_view", "cuda_tile.make_strided_view",
                      "cuda_tile.make_gather_scatter_view", "cuda_tile.make_tensor_view"):
            v = d.operands[0]
            continue
        i = _pointer_source(v, params)
        return array_of.get(i)
    return None


def _index_use(v, limit=400) -> set[str]:
    """What the values computed from ``v`` feed: ``index`` (offsets, view indices), ``table`` (int_to_ptr),
    ``control`` (the condition of an ``if``)."""
    out: set[str] = set()
    stack, seen = [v], set()
    while stack and len(seen) < limit:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        for u in x.uses:
            o = u.owner
            n = o.name
            if n == "cuda_tile.int_to_ptr":
                out.add("table")
                continue
            if n == "cuda_tile.offset" and u.index == 1:
                out.add("index")
                continue
            if n == "cuda_tile.if" and u.index == 0:
                out.add("control")
                continue
            first_index = {"cuda_tile.load_view_tko": 1, "cuda_tile.store_view_tko": 2,
                           "cuda_tile.atomic_red_view_tko": 2}.get(n)
            if first_index is not None and u.index >= first_index:
                out.add("index")
                continue
            stack.extend(o.results)
    return out


def make_inputs(text: str, kernel_name: str = "", entry: str | None = None, seed: int = 1234,
                scalars: list | None = None, positive: bool = False) -> Inputs:
    """Inputs valid for the kernel in ``text``, read from its IR, on a multi-CTA grid.

    Arrays: every dimension at least two tiles of each view on it (static
    tensor_view dimensions exactly as declared); index arrays (their values
    feed offsets or view indices) hold values in ``[0, smallest array extent)``;
    arrays updated by atomics start at zero, and so do integer arrays the
    kernel stores to and whose loaded values decide a branch (counters and
    flags, as split-K's per-tile count); an array addressed by pointer
    arithmetic (``offset``) has at least one element per CTA, since kernels
    index such arrays by the block id (split-K's locks and counts: with fewer,
    the accesses of the last tiles are masked off and their splits race); a
    table of pointers
    (``int_to_ptr`` of loaded values) gets three rows ``[address, shape...,
    strides...]`` naming arrays in :attr:`Inputs.memory`.  Scalars: floats
    0.5, integers 1 unless ``scalars`` is given.  Grid: 2 CTAs in x, 2 in y
    / z when the kernel uses that block id.  ``kernel_name`` (corpus name)
    picks positive data for log/pow/sqrt kernels; ``positive`` for all
    (used after a failed ``assert``).  Raises
    ``InterpreterError`` for IR the interpreter cannot read, ``ValueError``
    when no valid inputs can be built.
    """
    from tile_lsp.analysis.interpreter import Engine, load_module
    from tile_lsp.analysis.interpreter.params import _param_index, entry_param_roles
    from tile_lsp.dialect import types as T

    rng = np.random.default_rng(seed)
    eng = Engine(load_module(text))
    ent = eng.find_entry(entry)
    roles = entry_param_roles(ent)
    params = list(ent.regions[0].blocks[0].arguments)
    array_of = {i: r.array for i, r in enumerate(roles) if r.kind == "pointer"}
    n_arrays = len(set(array_of.values()))
    ranks = {r.array: r.rank for r in roles if r.kind == "pointer"}
    for r in roles:
        if r.kind in ("shape", "stride"):
            ranks[r.array] = max(ranks.get(r.array) or 0, r.dim + 1)
    dtypes = {r.array: _np_dtype(r.element) for r in roles if r.kind == "pointer"}
    static: dict[int, dict[int, int]] = {}
    tiles: dict[int, list] = {}
    view_src: dict[int, int | None] = {}
    mem_tiles: list = []
    mem_dtype = None
    usage: dict[int, set] = {k: set() for k in range(n_arrays)}
    offset_arrays: set[int] = set()  # addressed by pointer arithmetic (offset)
    grid = [2, 1, 1]
    ops = list(ent.walk())[1:]
    for o in ops:
        n = o.name
        if n == "cuda_tile.get_tile_block_id":
            for d in (1, 2):
                if len(o.results) > d and o.results[d].uses:
                    grid[d] = 2
        elif n == "cuda_tile.make_tensor_view":
            base = o.operands[0]
            i = _param_index(base, params)
            k = array_of.get(i)
            view_src[id(o.results[0])] = k
            tv = o.results[0].type
            if k is None:
                continue
            if isinstance(tv, T.TensorViewType):
                ranks[k] = max(ranks.get(k) or 0, tv.rank)
                for d, s in enumerate(tv.shape):
                    if s is not None:
                        static.setdefault(k, {})[d] = s
        elif n in ("cuda_tile.make_partition_view", "cuda_tile.make_strided_view",
                   "cuda_tile.make_gather_scatter_view"):
            k = _chase_array(o.operands[0], params, array_of, view_src)
            view_src[id(o.results[0])] = k
            vt = o.results[0].type
            shape = list(getattr(vt, "tile_shape", ()) or ())
            dmap = list(vt.effective_dim_map()) if hasattr(vt, "effective_dim_map") else list(range(len(shape)))
            per_dim = {dmap[i]: s for i, s in enumerate(shape) if i < len(dmap)}
            if k is None:
                mem_tiles.append(max(shape or [1]))
                tv = getattr(vt, "tensor_view", None) or getattr(vt, "view", None)
                if tv is not None and hasattr(tv, "element"):
                    mem_dtype = _np_dtype(tv.element)
            else:
                tiles.setdefault(k, []).append(per_dim)
        elif n == "cuda_tile.offset" and len(o.operands) == 2:
            k = _chase_array(o.operands[0], params, array_of, view_src)
            rt = o.results[0].type
            if k is not None and isinstance(rt, T.TileType):
                tiles.setdefault(k, []).append({0: max(1, rt.num_elements or 1)})
                offset_arrays.add(k)
        elif n == "cuda_tile.int_to_ptr":
            rt = o.results[0].type
            el = rt.element if isinstance(rt, T.TileType) else rt
            if isinstance(el, T.PointerType):
                mem_dtype = _np_dtype(el.pointee)
        if n in ("cuda_tile.load_view_tko", "cuda_tile.load_ptr_tko"):
            k = _chase_array(o.operands[0], params, array_of, view_src)
            if k is not None and o.results:
                usage[k] |= _index_use(o.results[0])
        if n in ("cuda_tile.store_view_tko", "cuda_tile.store_ptr_tko"):
            k = _chase_array(o.operands[1 if n == "cuda_tile.store_view_tko" else 0], params, array_of, view_src)
            if k is not None:
                usage[k].add("stored")
        if n.startswith("cuda_tile.atomic"):
            k = _chase_array(o.operands[0], params, array_of, view_src)
            if k is not None:
                usage[k].add("atomic")
    for d in (1, 2):
        if grid[d] == 2:
            pass
    # shapes
    shapes: dict[int, list[int]] = {}
    for k in range(n_arrays):
        r = max(1, ranks.get(k) or 1)
        dims = [0] * r
        for per_dim in tiles.get(k, []):
            for d, s in per_dim.items():
                if d < r:
                    dims[d] = max(dims[d], 2 * s)
        dims = [d or 128 for d in dims]
        if k in offset_arrays:
            # one element per CTA at least: kernels index such arrays by the block id (locks, counters)
            dims[0] = max(dims[0], grid[0] * grid[1] * grid[2])
        for d, s in static.get(k, {}).items():
            if d < r:
                dims[d] = s
        shapes[k] = dims
    notes = []
    table_arrays = [k for k in range(n_arrays) if "table" in usage[k]]
    memory: list = []
    tables: dict = {}
    for k in table_arrays:
        dims = shapes[k]
        if len(dims) != 2 or k not in static or 1 not in static[k]:
            raise ValueError(f"array #{k} holds pointers but is not a [rows, 1+2r] table")
        width = dims[1]
        rank = (width - 1) // 2
        rows = 3 if 0 not in static[k] else static[k][0]
        dims[0] = rows
        ln = 2 * max(mem_tiles or [128])
        md = mem_dtype or np.dtype("float32")
        idx = []
        for _ in range(rows):
            m = _fill((ln,) * max(1, rank), md, kernel_name, rng, positive)
            idx.append(len(memory))
            memory.append(m)
        tables[k] = idx
        notes.append(f"array #{k}: table of {rows} pointers to {md} arrays of {ln}^{max(1, rank)}")
    data_extents = [min(shapes[k]) for k in range(n_arrays)
                    if k not in table_arrays and "index" not in usage[k]] or [128]
    bound = max(1, min(data_extents))
    arrays = []
    kinds = []
    total = 0
    for k in range(n_arrays):
        dt = dtypes[k]
        shape = tuple(shapes[k])
        total += int(np.prod(shape))
        if k in tables:
            a = np.zeros(shape, dt)
            rank = (shape[1] - 1) // 2
            for r, i in enumerate(tables[k]):
                m = memory[i]
                a[r, 1:1 + rank] = m.shape[:rank]
                a[r, 1 + rank:1 + 2 * rank] = [s // m.itemsize for s in m.strides[:rank]]
            kind = "table"
        elif "atomic" in usage[k]:
            a = np.zeros(shape, dt)
            kind = "zeros (atomics)"
        elif {"control", "stored"} <= usage[k] and np.issubdtype(dt, np.integer):
            a = np.zeros(shape, dt)
            kind = "zeros (state: read into a branch and written)"
        elif "index" in usage[k] and np.issubdtype(dt, np.integer):
            a = rng.integers(0, bound, shape).astype(dt)
            kind = f"index [0,{bound})"
        else:
            a = _fill(shape, dt, kernel_name, rng, positive)
            kind = "data"
        arrays.append(a)
        kinds.append(kind)
    if total > 64 * 1024 * 1024:
        raise ValueError(f"arrays too large ({total} elements)")
    n_scalars = sum(1 for r in roles if r.kind == "scalar")
    if scalars is None or len(scalars) != n_scalars:
        scalars = []
        for r in roles:
            if r.kind == "scalar":
                el = r.element
                scalars.append(0.5 if isinstance(el, T.FloatType) else 1)
    it = iter(scalars)
    args = []
    for r in roles:
        if r.kind == "pointer":
            args.append(["array", r.array])
        elif r.kind in ("shape", "stride"):
            args.append([r.kind, r.array, r.dim])
        else:
            args.append(["scalar", next(it)])
    return Inputs(arrays, list(scalars), memory, tables, args, tuple(grid), kinds, notes)


def _fill(shape, dt, kernel_name, rng, positive=False):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dt, np.integer):
        if np.issubdtype(dt, np.unsignedinteger):
            return rng.integers(1, 50, shape).astype(dt)
        v = rng.integers(1, 50, shape) * rng.choice([-1, 1], shape)
        return v.astype(dt)
    if positive or any(p in kernel_name for p in _POSITIVE):
        return rng.uniform(0.5, 1.5, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def _case_scalars(name: str):
    try:
        from tests.test_gpu import CASES
    except Exception:  # noqa: BLE001 - pytest missing: defaults
        return None
    for c in CASES:
        if c.kernel == name:
            return list(c.scalars)
    return None


# ------------------------------------------------------------------ reference and comparison


def _interpret(text: str, inputs: Inputs, kernel: str | None, schedule: int | None,
               unspecified: float = 0.0) -> list:
    """One interpreter run on fresh copies of ``inputs``: ``arrays + memory`` afterwards, with the address
    columns of pointer tables reset to the inputs' values (runs compare on what the kernel wrote)."""
    from tile_lsp.analysis import interpreter as interp

    arrays, memory = inputs.copies()
    bind_tables(inputs, arrays, memory, lambda i: int(memory[i].ctypes.data))
    interp.run_kernel(text, kernel, bind_args(inputs, arrays), tuple(inputs.grid), memory=memory,
                      schedule=schedule, unspecified=unspecified)
    for k in inputs.tables:
        arrays[int(k)][:, 0] = inputs.arrays[int(k)][:, 0]
    return arrays + memory


def reference(text: str, inputs: Inputs, *, kernel: str | None = None) -> list[list]:
    """The acceptable outcomes of the kernel on ``inputs``: a list of array-lists.

    Each outcome lists ``inputs.arrays`` then ``inputs.memory`` after a run of
    the interpreter (:func:`_interpret`) under every schedule that matters
    (:func:`~tile_lsp.analysis.interpreter.schedule_outcomes`: blocks one
    after the other, in reverse order, in lockstep, and random interleavings).
    Raises ``InterpreterError``.
    """
    from tile_lsp.analysis import interpreter as interp

    return interp.schedule_outcomes(lambda schedule: _interpret(text, inputs, kernel, schedule))


def unspecified_elements(text: str, inputs: Inputs, *, kernel: str | None = None) -> list[np.ndarray]:
    """Per array (``inputs.arrays`` then ``inputs.memory``): the elements whose value depends on unspecified
    reads (out of bounds of a view without padding value, Types.td), found as those that change when the
    interpreter reads 777 there instead of 0 (lockstep both times).  Raises ``InterpreterError``."""
    zero, poison = (_interpret(text, inputs, kernel, 0, value) for value in (0.0, 777.0))
    return [~np.isclose(np.asarray(a, np.float64), np.asarray(b, np.float64), equal_nan=True)
            for a, b in zip(zero, poison)]


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing arrays of ``dtype``; integers and bools compare exactly (0, 0)."""
    name = np.dtype(dtype).name
    if "float8_e5m2" in name:
        return 0.26, 0.1
    if "float8" in name:
        return 0.13, 0.05
    return {"float64": (1e-6, 1e-9), "float32": (5e-3, 5e-4), "float16": (1e-2, 1e-2),
            "bfloat16": (3e-2, 3e-2)}.get(name, (0.0, 0.0))


def compare(got: list, outcomes: list[list], skip=(), f64_as_f32: bool = False, unspecified=None) -> dict:
    """Compare ``got`` (arrays) with acceptable ``outcomes``; an element agrees when it matches ANY outcome there.

    Returns ``{"agree": bool, "arrays": [{"array", "dtype", "bad", "of", "max_abs_err"}...]}``
    listing the arrays that differ (``max_abs_err`` against the closest
    outcome; NaN equals NaN).  ``skip``: array positions not compared.
    ``f64_as_f32``: compare f64 arrays at f32 precision (rtol 2e-6, atol
    1e-6), for kernels whose lowering warned that it computes some f64 ops
    in f32 (``lowering-precision`` diagnostics).  ``unspecified``: per array,
    a mask of elements any value is right for (:func:`unspecified_elements`).
    """
    diffs = []
    for i, g in enumerate(got):
        if i in skip:
            continue
        g = np.asarray(g)
        rtol, atol = (2e-6, 1e-6) if f64_as_f32 and g.dtype == np.float64 else tolerance(g.dtype)
        ok = np.zeros(g.shape, bool)
        err = np.full(g.shape, np.inf)
        gf = g.astype(np.float64)
        for out in outcomes:
            w = np.asarray(out[i]).astype(np.float64)
            if w.shape != g.shape:
                continue
            with np.errstate(invalid="ignore", over="ignore"):
                e = np.abs(gf - w)
                same = (e <= atol + rtol * np.abs(w)) | (np.isnan(gf) & np.isnan(w)) | (gf == w)
            ok |= same
            err = np.minimum(err, np.where(same, 0.0, np.nan_to_num(e, nan=np.inf)))
        if unspecified is not None and i < len(unspecified) and unspecified[i].shape == g.shape:
            ok |= unspecified[i]
        bad = int((~ok).sum())
        if bad:
            finite = err[np.isfinite(err)]
            diffs.append({"array": i, "dtype": g.dtype.name, "bad": bad, "of": int(g.size),
                          "max_abs_err": float(finite.max()) if finite.size else float("inf")})
    return {"agree": not diffs, "arrays": diffs}


# ------------------------------------------------------------------ CPU worker


def _entries(text: str) -> list[str]:
    from tile_lsp.analysis.interpreter import Engine, load_module

    return [e.symbol_name for e in Engine(load_module(text)).entries()]


def cpu_job(job: dict) -> dict:
    """Inputs, interpreter reference and our PTX for one kernel entry (runs in a pool worker).

    ``job``: ``{"name", "target", "mlir", "entry"}``.  Returns a row with
    ``inputs`` (:class:`Inputs`), ``outcomes``, ``ptx``, ``info`` (PTX entry
    name, param types, threads, dynamic shared bytes), ``times_ms`` and
    ``skip`` / ``error`` strings; never raises.
    """
    from tile_lsp.analysis.interpreter import InterpreterError
    from tile_lsp.codegen import lower_text

    row = {"name": job["name"], "entry": job["entry"], "target": job["target"], "times_ms": {}}
    text = Path(job["mlir"]).read_text()
    t0 = time.perf_counter()
    try:
        inputs = make_inputs(text, job["name"], job["entry"], scalars=_case_scalars(job["name"]))
    except (InterpreterError, ValueError) as e:
        row["skip"] = f"no valid inputs: {e}"
        return row
    except Exception as e:  # noqa: BLE001
        row["skip"] = f"no valid inputs ({type(e).__name__}): {e}"
        return row
    row["inputs"] = inputs
    row["grid"] = list(inputs.grid)
    row["input_kinds"] = inputs.kinds
    row["notes"] = inputs.notes
    t1 = time.perf_counter()
    row["times_ms"]["inputs"] = round((t1 - t0) * 1e3, 1)
    for attempt in (0, 1):
        try:
            row["outcomes"] = reference(text, inputs, kernel=job["entry"])
            row["reference_outcomes"] = len(row["outcomes"])  # > 1: the result depends on the order of the CTAs
            row["unspecified"] = unspecified_elements(text, inputs, kernel=job["entry"])
            row["unspecified_elements"] = int(sum(m.sum() for m in row["unspecified"]))
            unchanged = [i for i, (a, b) in enumerate(zip(row["outcomes"][0], inputs.arrays + inputs.memory))
                         if np.array_equal(a, b, equal_nan=a.dtype.kind == "f")]
            if len(unchanged) == len(row["outcomes"][0]):
                row.setdefault("notes", []).append("the reference run changed no array")
            break
        except InterpreterError as e:
            if attempt == 0 and "assert" in str(e):
                inputs = make_inputs(text, job["name"], job["entry"], scalars=_case_scalars(job["name"]),
                                     positive=True)
                row["inputs"] = inputs
                row["input_kinds"] = inputs.kinds
                row["notes"] = inputs.notes + [f"positive data after: {e}"]
                continue
            row["skip"] = f"interpreter rejects the inputs: {e}"
            break
        except Exception as e:  # noqa: BLE001
            row["skip"] = f"interpreter crashed ({type(e).__name__}): {e}"
            break
    t2 = time.perf_counter()
    row["times_ms"]["reference"] = round((t2 - t1) * 1e3, 1)
    try:
        result = lower_text(text, job["target"], kernel=job["entry"], file_name=Path(job["mlir"]).name)
        if not result.ok:
            d = result.diagnostics[0]
            row["lower_error"] = f"line {d.range.start.line + 1}: {d.message}"
        else:
            row["precision_warnings"] = sorted({d.message for d in result.diagnostics
                                                if d.code == "lowering-precision"})
            info = next((k for k in result.kernels if k.name == job["entry"]), result.kernels[0])
            row["ptx"] = result.ptx
            row["info"] = {"name": info.name, "params": [p for p, _ in info.params], "threads": info.threads,
                           "dynamic_smem": info.dynamic_smem}
    except Exception as e:  # noqa: BLE001
        row["lower_error"] = f"lowering crashed ({type(e).__name__}): {e}"
    row["times_ms"]["lower"] = round((time.perf_counter() - t2) * 1e3, 1)
    return row


# ------------------------------------------------------------------ GPU worker (child process)

_STICKY = ("ILLEGAL_ADDRESS", "LAUNCH_FAILED", "MISALIGNED", "ILLEGAL_INSTRUCTION", "HARDWARE_STACK",
           "INVALID_PC", "ASSERT", "TIMEOUT", "ECC", "CONTEXT_IS_DESTROYED", "UNKNOWN")


def gpu_launch(image: bytes, name: str, param_types: list, inputs: Inputs, block, dynamic_smem: int = 0,
               cluster=None, grid=None, timed_runs: int = 3, static_smem: int = 0) -> dict:
    """Launch one kernel image (PTX or cubin) on fresh copies of ``inputs``; returns ``{"arrays", "ms"}``.

    ``arrays``: the arrays then the memory arrays after the run; ``ms``:
    median kernel time in milliseconds of ``timed_runs`` extra runs, each timed
    by CUDA events (:func:`tile_lsp.codegen.launch.time_launches`).  Memory
    arrays live on the device and their tables get device addresses.
    Raises :class:`~tile_lsp.codegen.launch.LaunchError` / ``GpuUnavailable``.
    """
    from tile_lsp.codegen import launch

    arrays, memory = inputs.copies()
    dev_arrays = [launch.DeviceArray(m) for m in memory]
    module = None
    try:
        bind_tables(inputs, arrays, memory, lambda i: dev_arrays[i].ptr)
        module = launch.Module(image)
        call = dict(grid=tuple(grid or inputs.grid), threads=block, dynamic_smem=dynamic_smem,
                    timed_runs=timed_runs, cluster=cluster)
        note = None
        try:
            r = launch.launch(module, name, param_types, bind_args(inputs, arrays), **call)
        except launch.LaunchError as e:
            # a cubin with over 48 KiB of static shared memory may need the opt-in limit raised
            if static_smem <= 48 * 1024 or not any(s in str(e) for s in ("INVALID_VALUE", "OUT_OF_RESOURCES")):
                raise
            cu = launch._driver()
            func = module.function(name)
            dev = launch._check(cu.cuCtxGetDevice(), "cuCtxGetDevice")
            optin = launch._check(cu.cuDeviceGetAttribute(
                cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev), "optin")
            launch._check(cu.cuFuncSetAttribute(
                func, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                max(0, optin - static_smem)), "cuFuncSetAttribute")
            arrays, _ = inputs.copies()
            bind_tables(inputs, arrays, memory, lambda i: dev_arrays[i].ptr)
            r = launch.launch(module, name, param_types, bind_args(inputs, arrays), **call)
            note = f"first launch failed ({e}); ran after raising the shared-memory opt-in limit"
        for d in dev_arrays:
            d.copy_back()
        return {"arrays": arrays + memory, "ms": r.elapsed_ms, "note": note}
    finally:
        for d in dev_arrays:
            d.free()
        if module is not None:
            module.unload()


def _gpu_worker(conn) -> None:
    """Child process: takes launch jobs from ``conn``, answers each; exits after a context-poisoning error."""
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        out = {}
        sticky = False
        for which in ("ours", "tileiras"):
            spec = job.get(which)
            if spec is None:
                continue
            t0 = time.perf_counter()
            try:
                out[which] = gpu_launch(spec["image"], spec["name"], spec["params"], job["inputs"],
                                        spec["block"], spec.get("dynamic_smem", 0), spec.get("cluster"),
                                        timed_runs=job.get("timed_runs", 3), static_smem=spec.get("static_smem", 0))
            except Exception as e:  # noqa: BLE001
                out[which] = {"error": f"{type(e).__name__}: {e}"}
                sticky = sticky or any(s in str(e) for s in _STICKY)
            out[which]["wall_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
            if sticky:
                break
        conn.send(out)
        if sticky:
            return


class GpuRunner:
    """Runs launch jobs in a child process; replaces it after a fault or a timeout."""

    def __init__(self):
        self.ctx = mp.get_context("spawn")
        self.proc = None
        self.conn = None
        self.restarts = 0

    def _start(self):
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_gpu_worker, args=(child,), daemon=True)
        self.proc.start()
        self.conn = parent

    def run(self, job: dict, timeout: float) -> dict:
        """Send ``job`` and wait at most ``timeout`` seconds; ``{"error": ...}`` on timeout or a dead child."""
        if self.proc is None or not self.proc.is_alive():
            if self.proc is not None:
                self.restarts += 1
            self._start()
        try:
            self.conn.send(job)
            if self.conn.poll(timeout):
                return self.conn.recv()
            err = f"GPU launch timed out after {timeout:.0f} s"
        except (EOFError, BrokenPipeError, OSError) as e:
            err = f"GPU worker died: {e}"
        self.kill()
        return {"error": err}

    def kill(self):
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.proc = None

    def close(self):
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
                self.proc.join(5)
            except Exception:  # noqa: BLE001
                pass
        self.kill()


# ------------------------------------------------------------------ run


SANITIZE = re.compile(r"^(matmul_|flash_attention_|batched_matmul_|reduce_|prefix_scans|softmax_|rmsnorm_|"
                      r"layernorm_|argmax_|block_sum)")


def _find_sanitizer() -> str | None:
    exe = shutil.which("compute-sanitizer")
    if exe:
        return exe
    for pat in ("/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda-*/bin/compute-sanitizer",
                "/opt/nvidia/*/compute-sanitizer/compute-sanitizer"):
        import glob

        hits = sorted(glob.glob(pat))
        if hits:
            return hits[-1]
    try:
        import nvidia  # noqa: F401
        import glob

        for base in nvidia.__path__:
            hits = glob.glob(os.path.join(base, "*", "bin", "compute-sanitizer"))
            if hits:
                return hits[0]
    except Exception:  # noqa: BLE001
        pass
    return None


def _run_pytest(out: Path) -> subprocess.Popen:
    try:
        import xdist  # noqa: F401
        par = ["-n", "8"]
    except Exception:  # noqa: BLE001
        par = []
    log = open(out / "pytest.txt", "w")  # noqa: SIM115 - closed by the caller via the process
    return subprocess.Popen([sys.executable, "-m", "pytest", "-q", *par, "-p", "no:cacheprovider",
                             "tests/test_gpu.py"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


def _pytest_summary(out: Path, proc: subprocess.Popen, deadline: float) -> dict:
    try:
        proc.wait(max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return {"error": "pytest timed out", "log": "pytest.txt"}
    text = (out / "pytest.txt").read_text(errors="replace")
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|error|errors)", text)}
    failures = re.findall(r"^FAILED (\S+)", text, re.M) + re.findall(r"^ERROR (\S+)", text, re.M)
    return {"rc": proc.returncode, "counts": counts, "failures": failures, "log": "pytest.txt"}


def _cubin_spec(manifest: dict, cubins: Path, name: str, entry: str) -> dict | None:
    row = manifest.get(name)
    if not row or not row.get("cubin"):
        return {"error": (row or {}).get("error", "no cubin in the manifest")}
    f = (row.get("functions") or {}).get(entry)
    if not f or not f.get("reqntid"):
        return {"error": f"no EIATTR_REQNTID for {entry} in the cubin"}
    cl = f.get("cluster")
    return {"image": (cubins / row["cubin"]).read_bytes(), "name": entry, "block": tuple(f["reqntid"]),
            "cluster": tuple(cl) if cl and tuple(cl) != (1, 1, 1) else None, "static_smem": f.get("static_smem", 0),
            "param_sizes": f.get("param_sizes")}


_PSIZE = {".u8": 1, ".s8": 1, ".b16": 2, ".s16": 2, ".u16": 2, ".u32": 4, ".s32": 4, ".f32": 4, ".b32": 4,
          ".u64": 8, ".s64": 8, ".f64": 8, ".b64": 8}


def _summarise_row(row: dict) -> dict:
    keep = ("name", "entry", "target", "grid", "input_kinds", "notes", "skip", "lower_error", "times_ms",
            "status", "ours_vs_ref", "tileiras_vs_ref", "ours_vs_tileiras", "errors", "gpu_ms", "block",
            "reference_outcomes", "unspecified_elements", "precision_warnings")
    return {k: row[k] for k in keep if k in row}


def run(args) -> dict:
    """The ``run`` subcommand (see the module docstring); returns the report written to ``OUTDIR/gpu_check.json``."""
    start = time.monotonic()
    budget = args.budget
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cubins = Path(args.cubins)
    manifest_rows = {}
    if (cubins / "manifest.json").exists():
        manifest_rows = {r["name"]: r for r in json.loads((cubins / "manifest.json").read_text())["kernels"]}
    report: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "gpu": "skipped" if args.no_gpu else None}
    gpu = None
    if not args.no_gpu:
        try:
            from tile_lsp.codegen import launch

            report["gpu"] = launch.device_name()
        except Exception as e:  # noqa: BLE001
            report["gpu"] = f"unavailable: {e}"
            args.no_gpu = True
    pytest_proc = None if args.no_gpu or args.no_pytest else _run_pytest(out)

    kernels = runnable_kernels()
    if args.only:
        kernels = [k for k in kernels if args.only in k["name"]]
    jobs = []
    for k in kernels:
        try:
            entries = _entries(Path(k["mlir"]).read_text())
        except Exception as e:  # noqa: BLE001
            jobs.append(dict(k, entry=None, error=str(e)))
            continue
        for e in entries:
            jobs.append(dict(k, entry=e))
    rows: list[dict] = []
    cpu_deadline = start + budget * 0.62
    if not args.no_gpu:
        gpu = GpuRunner()
    pool = mp.get_context("spawn").Pool(args.jobs)
    pending = {i: pool.apply_async(cpu_job, (j,)) for i, j in enumerate(jobs) if j.get("entry")}
    for i, j in enumerate(jobs):
        if not j.get("entry"):
            rows.append({"name": j["name"], "entry": None, "target": j["target"], "status": "skipped",
                         "skip": f"unreadable IR: {j.get('error')}"})
    try:
        while pending and time.monotonic() < cpu_deadline:
            done = [i for i, r in pending.items() if r.ready()]
            if not done:
                time.sleep(0.05)
                continue
            for i in done:
                res = pending.pop(i)
                try:
                    row = res.get()
                except Exception as e:  # noqa: BLE001
                    row = {"name": jobs[i]["name"], "entry": jobs[i]["entry"], "target": jobs[i]["target"],
                           "skip": f"worker crashed: {e}"}
                _finish_row(row, gpu, manifest_rows, cubins, args)
                rows.append(row)
                print(f"  {row['name']:58} {row['status']}", flush=True)
    finally:
        pool.terminate()
    for i in pending:
        rows.append({"name": jobs[i]["name"], "entry": jobs[i]["entry"], "target": jobs[i]["target"],
                     "status": "timeout", "skip": "CPU phase (inputs/interpreter/lowering) ran out of time"})
    if gpu is not None:
        gpu.close()
        report["gpu_worker_restarts"] = gpu.restarts
    report["cpu_phase_s"] = round(time.monotonic() - start, 1)

    # sanitizer
    san: list = []
    if not args.no_gpu and not args.no_sanitizer:
        san = _sanitize(rows, start + budget * 0.9, out)
    report["sanitizer"] = san
    if pytest_proc is not None:
        report["pytest"] = _pytest_summary(out, pytest_proc, start + budget * 0.97)
    else:
        report["pytest"] = "skipped"
    counts: dict = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    report["counts"] = counts
    report["wall_s"] = round(time.monotonic() - start, 1)
    report["kernels"] = [_summarise_row(r) for r in sorted(rows, key=lambda r: (r["name"], r.get("entry") or ""))]
    (out / "gpu_check.json").write_text(json.dumps(report, indent=1, default=str))
    _print_summary(report)
    return report


def _finish_row(row: dict, gpu: GpuRunner | None, manifest_rows: dict, cubins: Path, args) -> None:
    """GPU launches and comparisons for one CPU result; sets ``row["status"]``."""
    inputs: Inputs | None = row.get("inputs")
    row["errors"] = {}
    if row.get("skip"):
        row["status"] = "skipped"
        return
    if row.get("lower_error"):
        row["errors"]["ours"] = row["lower_error"]
    if gpu is None:
        row["status"] = "lowering-failed" if row.get("lower_error") else "cpu-only"
        return
    job: dict = {"inputs": inputs, "timed_runs": args.timed_runs}
    if row.get("info"):
        info = row["info"]
        job["ours"] = {"image": row["ptx"].encode(), "name": info["name"], "params": info["params"],
                       "block": (info["threads"], 1, 1), "dynamic_smem": info["dynamic_smem"]}
        params = info["params"]
    else:
        params = None
    spec = _cubin_spec(manifest_rows, cubins, row["name"], row["entry"])
    if "error" in spec:
        row["errors"]["tileiras"] = spec["error"]
    elif params is None:
        row["errors"]["tileiras"] = "no PTX parameter types (our lowering failed)"
    else:
        sizes = spec.pop("param_sizes", None)
        if sizes and [_PSIZE.get(p, 4) for p in params] != sizes:
            row["errors"]["tileiras_params"] = f"cubin parameter sizes {sizes} differ from ours"
        job["tileiras"] = dict(spec, params=params)
        row["block"] = {"tileiras": list(spec["block"]), "cluster": spec["cluster"]}
    t0 = time.perf_counter()
    res = gpu.run(job, timeout=args.kernel_timeout) if ("ours" in job or "tileiras" in job) else {}
    row["times_ms"]["gpu_wall"] = round((time.perf_counter() - t0) * 1e3, 1)
    if "error" in res:
        row["errors"]["gpu"] = res["error"]
    got = {}
    row["gpu_ms"] = {}
    for which in ("ours", "tileiras"):
        r = res.get(which)
        if not r:
            continue
        if "error" in r:
            row["errors"][which] = r["error"]
        else:
            got[which] = r["arrays"]
            if r.get("note"):
                row.setdefault("notes", []).append(f"{which}: {r['note']}")
            row["gpu_ms"][which] = round(r["ms"], 4)
    skip = {int(k) for k in inputs.tables}
    outcomes = row.get("outcomes")
    loose = bool(row.get("precision_warnings"))
    free = row.get("unspecified")
    if outcomes is not None:
        for which in got:
            row[f"{which}_vs_ref"] = compare(got[which], outcomes, skip, loose, free)
    if len(got) == 2:
        row["ours_vs_tileiras"] = compare(got["ours"], [got["tileiras"]], skip, loose, free)
    if "ours" not in got:
        row["status"] = "ours-error"
    elif outcomes is None:
        row["status"] = "no-reference"
    elif row["ours_vs_ref"]["agree"]:
        row["status"] = "agree"
    else:
        row["status"] = "DIFFER"
    for k in ("inputs", "outcomes", "ptx", "unspecified"):
        row.pop(k, None)


def _sanitize(rows: list[dict], deadline: float, out: Path) -> list[dict]:
    exe = _find_sanitizer()
    if exe is None:
        return [{"error": "compute-sanitizer not found (PATH, /usr/local/cuda*/bin)"}]
    targets = [r for r in rows if r.get("status") in ("agree", "DIFFER") and SANITIZE.match(r["name"])]
    # round-robin over families, sm_90 first, so a short budget still covers every family once
    families: dict[str, list] = {}
    for r in sorted(targets, key=lambda r: (r["target"] != "sm_90", r["name"])):
        families.setdefault(SANITIZE.match(r["name"]).group(1) + r["name"].split("_")[1], []).append(r)
    targets = [r for rnd in range(max((len(v) for v in families.values()), default=0))
               for v in families.values() if rnd < len(v) for r in [v[rnd]]]

    def one_run(r, tool):
        left = deadline - time.monotonic()
        if left < 10:
            return {"kernel": r["name"], "tool": tool, "status": "not run (time budget)"}
        grid = ",".join(map(str, r["grid"]))
        cmd = [exe, "--tool", tool, "--error-exitcode", "3", sys.executable, str(Path(__file__).resolve()),
               "one", r["name"], "--entry", r["entry"], "--grid", grid]
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=min(45.0, left), cwd=ROOT)
            text = p.stdout + p.stderr
            errs = re.search(r"ERROR SUMMARY: (\d+) error", text)
            hazards = re.search(r"RACECHECK SUMMARY: (\d+) hazard", text)
            item = {"kernel": r["name"], "tool": tool, "rc": p.returncode,
                    "errors": int(errs.group(1)) if errs else None,
                    "hazards": int(hazards.group(1)) if hazards else None,
                    "s": round(time.monotonic() - t0, 1)}
            if p.returncode != 0:
                item["tail"] = text[-1500:]
        except subprocess.TimeoutExpired:
            item = {"kernel": r["name"], "tool": tool, "status": "timeout"}
        return item

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as ex:  # the sanitized processes are mostly CPU-side; four share the GPU
        res = list(ex.map(lambda rt: one_run(*rt), [(r, t) for r in targets for t in ("racecheck", "memcheck")]))
    return res


def _print_summary(report: dict) -> None:
    print(f"\ngpu: {report['gpu']}; counts: {report['counts']}; wall {report['wall_s']} s")
    for r in report["kernels"]:
        if r["status"] not in ("agree", "cpu-only"):
            why = r.get("skip") or "; ".join(f"{k}: {v}" for k, v in (r.get("errors") or {}).items())
            print(f"  {r['status']:16} {r['name']}  {why[:160]}")
        for key in ("ours_vs_ref", "tileiras_vs_ref", "ours_vs_tileiras"):
            c = r.get(key)
            if c and not c["agree"]:
                print(f"      {key}: " + ", ".join(f"#{d['array']} {d['bad']}/{d['of']} max {d['max_abs_err']:.3g}"
                                               for d in c["arrays"]))
    p = report.get("pytest")
    if isinstance(p, dict):
        print(f"pytest tests/test_gpu.py: {p.get('counts') or p.get('error')} {p.get('failures') or ''}")
    san = report.get("sanitizer") or []
    bad = [s for s in san if s.get("rc") not in (0, None) or s.get("status")]
    print(f"sanitizer: {len(san)} runs, {len(bad)} not clean" + (f": {bad[:1]}" if bad else ""))


def one(args) -> int:
    """Launch our PTX of one corpus kernel on its inputs (for compute-sanitizer); exit status 0 when it ran."""
    from tile_lsp.codegen import lower_text

    name = args.kernel.removesuffix(".mlir")
    k = next((k for k in runnable_kernels() if k["name"] == name), None)
    if k is None:
        print(f"unknown kernel {name}")
        return 2
    text = Path(k["mlir"]).read_text()
    inputs = make_inputs(text, name, args.entry, scalars=_case_scalars(name))
    grid = tuple(int(x) for x in args.grid.split(",")) if args.grid else inputs.grid
    result = lower_text(text, k["target"], kernel=args.entry, file_name=Path(k["mlir"]).name)
    if not result.ok:
        print(f"lowering failed: {result.diagnostics[0].message}")
        return 2
    info = next((x for x in result.kernels if x.name == args.entry), result.kernels[0])
    r = gpu_launch(result.ptx.encode(), info.name, [p for p, _ in info.params], inputs, (info.threads, 1, 1),
                   info.dynamic_smem, grid=grid, timed_runs=0)
    print(f"{name}: ran on grid {grid}; {len(r['arrays'])} arrays")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="mode", required=True)
    pr = sub.add_parser("prepare", help="compile tileiras cubins + manifest.json (needs tileiras)")
    pr.add_argument("--out", required=True)
    pr.add_argument("--only", default=None)
    pr.add_argument("--jobs", type=int, default=None)
    r = sub.add_parser("run", help="the GPU check")
    r.add_argument("--cubins", default=".devcarry/cubins")
    r.add_argument("--out", required=True)
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    r.add_argument("--only", default=None)
    r.add_argument("--no-gpu", action="store_true", help="inputs + interpreter + lowering only")
    r.add_argument("--no-pytest", action="store_true")
    r.add_argument("--no-sanitizer", action="store_true")
    r.add_argument("--budget", type=float, default=440.0, help="seconds for the whole run")
    r.add_argument("--kernel-timeout", type=float, default=60.0, help="seconds per kernel's GPU launches")
    r.add_argument("--timed-runs", type=int, default=3,
                   help="launches timed per image after the checked one (gpu_ms: their median, CUDA events); for figures, "
                        "more, with --no-pytest (pytest's kernels would share the GPU)")
    o = sub.add_parser("one", help="launch our PTX of one kernel (for compute-sanitizer)")
    o.add_argument("kernel")
    o.add_argument("--entry", default=None)
    o.add_argument("--grid", default=None)
    args = p.parse_args(argv)
    if args.mode == "prepare":
        m = prepare(args.out, args.only, args.jobs)
        bad = [r for r in m["kernels"] if not r.get("cubin")]
        print(f"{len(m['kernels']) - len(bad)} cubins in {args.out}; {len(bad)} failed")
        for b in bad:
            print(f"  {b['name']}: {b.get('error')}")
        return 0
    if args.mode == "one":
        return one(args)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
