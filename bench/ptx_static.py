"""Static figures of our PTX against tileiras' cubin, per corpus kernel: no GPU needed.

For each kernel this lowers the ``.mlir`` with :func:`tile_lsp.codegen.lower_text`
and assembles the PTX with ``ptxas -v --gpu-name <target>`` to a cubin
("ours"), compiles the ``.tileirbc`` beside it with ``tileiras --gpu-name
<target>`` ("tir"; cubins cached, tileiras is slow), and reads both cubins
with ``cuobjdump``.  It prints two rows per kernel, then a totals row for
each side, then a table of counts in our PTX text::

    python bench/ptx_static.py                       # the default kernels (below)
    python bench/ptx_static.py --kernels softmax,matmul_tiled_f16 --json out.json
    python bench/ptx_static.py --all --jobs 2         # every ok sm_80/sm_90 kernel
    # the same measure of another checkout's lowering (its tile_lsp is imported:
    # PYTHONPATH comes before this script's own tree)
    PYTHONPATH=/other/checkout python bench/ptx_static.py

The first line says which ``tile_lsp`` was imported.  Kernels come from the
corpus ``MANIFEST.tsv`` (verdict ``ok``, target sm_80 or sm_90; ``--targets``
changes the targets).  The default set: the sm_90 kernels whose name starts
with one of :data:`DEFAULT_PREFIXES`; ``--kernels A,B`` takes those whose name
contains A or B instead; ``--all`` takes them all.  The NVIDIA tools come
from the venv's PyPI packages (``tile_lsp.nvidia.find_tool``).

Columns of the main table (one ``ours`` and one ``tir`` row per kernel):

``thr``    CTA threads: ours from the lowering (``kernels[0].threads``),
           tileiras' from ``EIATTR_REQNTID`` in ``cuobjdump -elf``.
``reg``    registers per thread (ours: ``ptxas -v``; tileiras: ``cuobjdump -res-usage``).
``spill``  ours: ``ptxas -v`` spill stores/loads bytes (``st/ld``, ``0`` when
           none); tileiras (no ptxas log; tileiras has no verbose option):
           the stack frame and local memory bytes per thread of
           ``-res-usage`` (``STACK``, where spills live, as ``S<n>``;
           ``LOCAL`` as ``L<n>``; ``0`` when both are 0).
``smem``   static shared memory bytes, ``SHARED`` of ``cuobjdump -res-usage``
           for both cubins, so that both count the same way (on sm_90 it
           includes the 1 KiB that ptxas reserves per CTA; ``ptxas -v``'s
           own ``smem`` figure, without it, is in the JSON as ``ptxas.smem``).
``inst``   SASS instructions (``cuobjdump -sass``, every function of the
           cubin, NOPs not counted).
``shfl``   warp shuffles (``SHFL.*``).
``mma``    tensor-core MMAs (any opcode with ``MMA`` in it: HMMA, IMMA,
           HGMMA, QGMMA, UTC*MMA ...).
``ldg``/``stg``  global loads/stores (``LDG``/``STG``); their widths in
           the ``widths`` column as ``<bits>x<count>``.
``ld``/``st``    generic loads/stores (``LD``/``ST``: what PTX ``ld``/``st``
           without ``.global`` become); widths in ``widths`` too.
``lds``/``sts``  shared loads/stores (``LDS``/``STS``); ``ldsm``: ``LDSM`` (ldmatrix).
``bar``    CTA barriers (``BAR.*``; mbarrier ``SYNCS.*`` are in the JSON).
``async``  asynchronous copies: ``LDGSTS`` (cp.async) + ``UTMALDG`` (TMA) + ``UBLKCP``.
``lcl``    local memory accesses ``LDL+STL`` (spills, or arrays ptxas could not keep in registers).

The totals rows sum the columns over the kernels that both sides compiled,
and count kernels with spills (ours: ptxas spill bytes or LDL/STL; tir:
STACK or LOCAL bytes, or LDL/STL), kernels where that side uses more
registers / SASS instructions than the other, and kernels that failed.  The PTX table counts, in our PTX text:
``shfl.sync``, ``mma.sync``, ``wgmma.mma_async``, ``bar.sync``/``barrier.sync``,
``ld.shared``/``st.shared``, ``ldmatrix``, ``cp.async`` (TMA:
``cp.async.bulk.tensor``), and global and generic ``ld``/``st`` by vector
width (``v4:8`` = eight ``.v4`` accesses; ``v1`` = scalar).

``--json OUT`` writes everything: per kernel and side the resource usage,
the ptxas figures, the SASS class counts, the widths and the full opcode
histogram, and the PTX counts.  Kernels run in a process pool (``--jobs``,
default 2).  tileiras cubins are cached in ``--cache`` (default: a
``ptx_static_cache`` folder in the system's temporary directory), keyed by
the ``.tileirbc``'s content and the target.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Appended, not prepended: with PYTHONPATH=/other/checkout that checkout's tile_lsp is the one imported.
# (Also keeps gpu_check, imported below, from inserting ROOT ahead of PYTHONPATH.)
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.append(str(BENCH))
KERNELS = ROOT.parent / "shared" / "corpus" / "kernels"
DEFAULT_TARGETS = ("sm_80", "sm_90")
DEFAULT_PREFIXES = ("matmul_tiled", "ew_float_arith_f32", "softmax_rows", "rmsnorm_fwd", "layernorm_bwd",
                    "flash_attention", "reduce_rows_cols", "argmax_argmin")
DEFAULT_CACHE = os.path.join(tempfile.gettempdir(), "ptx_static_cache")
TIMEOUT = 300

# ------------------------------------------------------------------ kernels


def corpus_kernels(kernels_dir: Path = KERNELS, targets=DEFAULT_TARGETS) -> list[dict]:
    """Corpus kernels with MANIFEST verdict ``ok`` and a target in ``targets``.

    Returns dicts ``{"name", "target", "mlir", "tileirbc"}`` (``name``: the
    file name without ``.mlir``), in MANIFEST order; ``*.g.mlir`` debug
    variants are skipped.  Raises ``FileNotFoundError`` without a MANIFEST.tsv.
    """
    rows = (kernels_dir / "MANIFEST.tsv").read_text().splitlines()
    head = rows[0].split("\t")
    out = []
    for row in rows[1:]:
        c = dict(zip(head, row.split("\t")))
        f = c.get("file", "")
        if c.get("verdict") != "ok" or c.get("target") not in targets or f.endswith(".g.mlir"):
            continue
        name = f[: -len(".mlir")]
        out.append({"name": name, "target": c["target"], "mlir": str(kernels_dir / f),
                    "tileirbc": str(kernels_dir / (c.get("bytecode") or name + ".tileirbc"))})
    return out


def select_kernels(kernels: list[dict], substrings: list[str] | None, everything: bool) -> list[dict]:
    """The kernels to measure: those whose name contains one of ``substrings``; else all
    when ``everything``; else the sm_90 ones starting with one of :data:`DEFAULT_PREFIXES`."""
    if substrings:
        return [k for k in kernels if any(s in k["name"] for s in substrings)]
    if everything:
        return kernels
    return [k for k in kernels if k["target"] == "sm_90" and k["name"].startswith(DEFAULT_PREFIXES)]


# ------------------------------------------------------------------ parsers


def parse_ptxas_verbose(text: str) -> dict:
    """Figures of ``ptxas -v`` output: ``regs`` (the most of any function),
    ``spill_stores``/``spill_loads``/``stack`` (bytes, summed over functions),
    ``smem`` (bytes, the most of any function), ``barriers``."""
    def ints(pattern):
        return [int(x) for x in re.findall(pattern, text)]

    return {"regs": max(ints(r"Used (\d+) registers"), default=0),
            "spill_stores": sum(ints(r"(\d+) bytes spill stores")),
            "spill_loads": sum(ints(r"(\d+) bytes spill loads")),
            "stack": sum(ints(r"(\d+) bytes stack frame")),
            "smem": max(ints(r"(\d+) bytes smem"), default=0),
            "barriers": max(ints(r"used (\d+) barriers"), default=0)}


def parse_res_usage(text: str) -> dict[str, dict]:
    """``cuobjdump -res-usage`` output as ``{function: {"REG": n, "STACK": n, "SHARED": n, "LOCAL": n, ...}}``."""
    out: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"\s*Function (\S+?):?\s*$", line)
        if m:
            current = m.group(1)
            continue
        if current and "REG:" in line:
            out[current] = {k: int(v) for k, v in re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", line)}
            current = None
    return out


def _kernel_usage(usage: dict[str, dict]) -> dict:
    """The entry's resource usage out of :func:`parse_res_usage` (internal ``$...`` functions skipped)."""
    funcs = {k: v for k, v in usage.items() if not k.startswith("$")} or usage
    if not funcs:
        return {}
    return max(funcs.values(), key=lambda u: u.get("REG", 0))


_SASS_LINE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
_MEM_BITS = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128}


def _access_bits(mods: list[str]) -> int:
    for m in mods:
        if m in _MEM_BITS:
            return _MEM_BITS[m]
    return 32


def count_sass(text: str) -> dict:
    """Instruction counts of ``cuobjdump -sass`` output.

    Returns ``{"inst", "shfl", "mma", "ldg", "stg", "ld", "st", "lds", "sts",
    "ldsm", "stsm", "bar", "syncs", "ldgsts", "utmaldg", "ublkcp", "async",
    "ldl", "stl", "atom", "widths": {"ldg"|"stg"|"ld"|"st": {bits: count}},
    "opcodes": {base opcode: count}}``.  ``inst`` leaves out ``NOP``.
    """
    ops: Counter = Counter()
    widths: dict[str, Counter] = {k: Counter() for k in ("ldg", "stg", "ld", "st")}
    c: Counter = Counter()
    for line in text.splitlines():
        m = _SASS_LINE.match(line)
        if not m:
            continue
        base, *mods = m.group(1).split(".")
        ops[base] += 1
        if base == "NOP":
            continue
        c["inst"] += 1
        key = {"SHFL": "shfl", "LDG": "ldg", "STG": "stg", "LD": "ld", "ST": "st", "LDS": "lds", "STS": "sts",
               "LDSM": "ldsm", "STSM": "stsm", "BAR": "bar", "SYNCS": "syncs", "LDGSTS": "ldgsts",
               "UTMALDG": "utmaldg", "UBLKCP": "ublkcp", "LDL": "ldl", "STL": "stl",
               "ATOM": "atom", "ATOMG": "atom", "ATOMS": "atom", "RED": "atom", "REDG": "atom"}.get(base)
        if "MMA" in base:
            key = "mma"
        if key:
            c[key] += 1
        if key in widths:
            widths[key][_access_bits(mods)] += 1
    out = {k: c.get(k, 0) for k in ("inst", "shfl", "mma", "ldg", "stg", "ld", "st", "lds", "sts", "ldsm",
                                     "stsm", "bar", "syncs", "ldgsts", "utmaldg", "ublkcp", "ldl", "stl", "atom")}
    out["async"] = out["ldgsts"] + out["utmaldg"] + out["ublkcp"]
    out["widths"] = {k: dict(sorted(v.items(), reverse=True)) for k, v in widths.items()}
    out["opcodes"] = dict(ops.most_common())
    return out


_PTX_LINE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_.:]*)")
_SPACES = {"global", "shared", "local", "param", "const"}


def count_ptx(ptx: str) -> dict:
    """Counts of instructions in PTX text.

    Returns ``{"shfl", "mma", "wgmma", "bar", "ld_shared", "st_shared",
    "ldmatrix", "cp_async", "tma", "ld_global": {"v4": n, ...},
    "ld_generic": {...}, "st_global": {...}, "st_generic": {...},
    "bits": {"ld_global": {bits: n}, ...}}``; ``v1`` is a scalar access,
    ``bits`` the width of one access (vector length times element bits).
    """
    c: Counter = Counter()
    vec: dict[str, Counter] = {k: Counter() for k in ("ld_global", "ld_generic", "st_global", "st_generic")}
    bits: dict[str, Counter] = {k: Counter() for k in vec}
    for line in ptx.splitlines():
        s = line.strip()
        if not s or s.startswith(("//", ".", "{", "}")) or s.endswith(":"):
            continue
        m = _PTX_LINE.match(s)
        if not m:
            continue
        parts = [p.split("::")[0] for p in m.group(1).split(".")]
        op = parts[0]
        if op == "shfl":
            c["shfl"] += 1
        elif op == "mma":
            c["mma"] += 1
        elif op == "wgmma" and "mma_async" in parts:
            c["wgmma"] += 1
        elif op in ("bar", "barrier") and "warp" not in parts and ("sync" in parts or "arrive" in parts
                                                                    or "red" in parts):
            c["bar"] += 1
        elif op == "ldmatrix":
            c["ldmatrix"] += 1
        elif op == "cp" and len(parts) > 1 and parts[1] == "async":
            c["tma" if "tensor" in parts else "cp_async"] += 1
        elif op in ("ld", "st", "ldu"):
            space = parts[1] if len(parts) > 1 and parts[1] in _SPACES else "generic"
            if space == "shared":
                c[f"{op}_shared"] += 1
            elif space in ("global", "generic"):
                key = f"{'ld' if op == 'ldu' else op}_{space}"
                v = next((p for p in parts if re.fullmatch(r"v\d+", p)), "v1")
                vec[key][v] += 1
                eb = next((int(re.search(r"\d+", p).group()) * (2 if p.endswith("x2") else 1)
                           for p in reversed(parts) if re.fullmatch(r"[bsuf]\d+(x2)?|bf16(x2)?", p)), 32)
                bits[key][int(v[1:]) * eb] += 1
    out = {k: c.get(k, 0) for k in ("shfl", "mma", "wgmma", "bar", "ld_shared", "st_shared", "ldmatrix",
                                     "cp_async", "tma")}
    for k, v in vec.items():
        out[k] = dict(sorted(v.items(), key=lambda kv: -int(kv[0][1:])))
    out["bits"] = {k: dict(sorted(v.items(), reverse=True)) for k, v in bits.items()}
    return out


# ------------------------------------------------------------------ one kernel


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def cubin_figures(cubin: Path, cuobjdump: str) -> dict:
    """``-res-usage``, ``-sass`` and ``-elf`` figures of one cubin.

    Returns ``{"usage": {REG, SHARED, LOCAL, ...}, "sass": count_sass(...),
    "reqntid": [x, y, z] | None}``.  Raises ``RuntimeError`` when cuobjdump fails.
    """
    from gpu_check import parse_cuobjdump_elf  # bench/gpu_check.py (numpy: imported only here)

    out = {}
    for flag in ("-res-usage", "-sass", "-elf"):
        proc = _run([cuobjdump, flag, str(cubin)])
        if proc.returncode != 0:
            raise RuntimeError(f"cuobjdump {flag} failed: {proc.stderr.strip()[:300]}")
        out[flag] = proc.stdout
    elf = parse_cuobjdump_elf(out["-elf"])
    reqntid = next((f["reqntid"] for f in elf.values() if f.get("reqntid")), None)
    return {"usage": _kernel_usage(parse_res_usage(out["-res-usage"])), "sass": count_sass(out["-sass"]),
            "reqntid": reqntid}


def _threads(reqntid) -> int | None:
    if not reqntid:
        return None
    n = 1
    for x in reqntid:
        n *= max(int(x), 1)
    return n


def tileiras_cubin(k: dict, tileiras: str, cache: Path) -> Path:
    """The cached tileiras cubin of kernel ``k`` (compiled for ``k["target"]`` when not cached).

    Keyed by the ``.tileirbc``'s SHA-256 and the target; written atomically.
    Raises ``RuntimeError`` when tileiras fails.
    """
    data = Path(k["tileirbc"]).read_bytes()
    digest = hashlib.sha256(data + k["target"].encode()).hexdigest()[:16]
    dst = cache / f"{k['name']}.{digest}.cubin"
    if dst.exists():
        return dst
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".{dst.name}.{os.getpid()}.tmp"
    proc = _run([tileiras, "--gpu-name", k["target"], k["tileirbc"], "-o", str(tmp)])
    if proc.returncode != 0 or not tmp.exists():
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"tileiras failed: {(proc.stderr or proc.stdout).strip()[:300]}")
    os.replace(tmp, dst)
    return dst


def measure_ours(k: dict, ptxas: str, cuobjdump: str) -> dict:
    """Lower kernel ``k``, assemble with ``ptxas -v`` and read the cubin.

    Returns ``{"threads", "ptxas": parse_ptxas_verbose(...), "usage", "sass",
    "ptx": count_ptx(...), "lower_ms", "ptxas_ms"}``, or ``{"error": text}``.
    """
    from tile_lsp.codegen import lower_text

    t0 = time.perf_counter()
    try:
        result = lower_text(Path(k["mlir"]).read_text(), k["target"], file_name=Path(k["mlir"]).name)
    except Exception as e:  # noqa: BLE001 - one kernel's crash is its row's error
        return {"error": f"lowering raised {type(e).__name__}: {e}"[:300]}
    lower_ms = (time.perf_counter() - t0) * 1e3
    if not result.ok:
        msg = next((d.message for d in result.diagnostics), "no PTX")
        return {"error": f"lowering failed: {msg}"[:300]}
    out = {"threads": result.kernels[0].threads if result.kernels else None, "lower_ms": round(lower_ms, 1),
           "ptx": count_ptx(result.ptx)}
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        src.write_text(result.ptx)
        t1 = time.perf_counter()
        proc = _run([ptxas, "-v", "--gpu-name", k["target"], str(src), "-o", str(cubin)])
        out["ptxas_ms"] = round((time.perf_counter() - t1) * 1e3, 1)
        if proc.returncode != 0:
            out["error"] = f"ptxas failed: {(proc.stderr or proc.stdout).strip()[:300]}"
            return out
        out["ptxas"] = parse_ptxas_verbose(proc.stdout + proc.stderr)
        try:
            out.update(cubin_figures(cubin, cuobjdump))
        except Exception as e:  # noqa: BLE001
            out["error"] = str(e)[:300]
    return out


def measure_tileiras(k: dict, tileiras: str, cuobjdump: str, cache: Path) -> dict:
    """tileiras' cubin of kernel ``k`` (cached): ``{"threads", "usage", "sass", "reqntid", "cubin"}`` or ``{"error"}``."""
    try:
        cubin = tileiras_cubin(k, tileiras, cache)
        out = cubin_figures(cubin, cuobjdump)
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)[:300]}
    out["threads"] = _threads(out["reqntid"])
    out["cubin"] = cubin.name
    return out


def measure(job: tuple) -> dict:
    """One kernel, both sides (the pool's task): ``{"name", "target", "ours", "tileiras"}``."""
    k, tools, cache = job
    return {"name": k["name"], "target": k["target"],
            "ours": measure_ours(k, tools["ptxas"], tools["cuobjdump"]),
            "tileiras": measure_tileiras(k, tools["tileiras"], tools["cuobjdump"], Path(cache))}


# ------------------------------------------------------------------ report

_COLS = ("thr", "reg", "spill", "smem", "inst", "shfl", "mma", "ldg", "stg", "ld", "st", "lds", "sts", "ldsm",
         "bar", "async", "lcl")
_WIDTH = {"spill": 9, "smem": 6, "inst": 6}


def _widths_text(sass: dict) -> str:
    parts = []
    for k in ("ldg", "stg", "ld", "st"):
        w = sass.get("widths", {}).get(k) or {}
        if w:
            parts.append(k + " " + ",".join(f"{b}x{n}" for b, n in w.items()))
    return " ".join(parts)


def _has_spills(side: dict, ours: bool) -> bool:
    sass = side.get("sass", {})
    if sass.get("ldl", 0) or sass.get("stl", 0):
        return True
    if ours:
        p = side.get("ptxas", {})
        return bool(p.get("spill_stores") or p.get("spill_loads"))
    usage = side.get("usage", {})
    return bool(usage.get("STACK") or usage.get("LOCAL"))


def _cells(side: dict, ours: bool) -> dict:
    sass, usage = side.get("sass", {}), side.get("usage", {})
    if ours:
        p = side.get("ptxas", {})
        st, ld = p.get("spill_stores", 0), p.get("spill_loads", 0)
        spill = f"{st}/{ld}" if st or ld else "0"
        reg = p.get("regs", usage.get("REG", ""))
    else:
        stack, local = usage.get("STACK", 0), usage.get("LOCAL", 0)
        spill = " ".join(([f"S{stack}"] if stack else []) + ([f"L{local}"] if local else [])) or "0"
        reg = usage.get("REG", "")
    cells = {"thr": side.get("threads") or "?", "reg": reg, "spill": spill, "smem": usage.get("SHARED", ""),
             "lcl": sass.get("ldl", 0) + sass.get("stl", 0)}
    for k in _COLS:
        if k not in cells:
            cells[k] = sass.get(k, "")
    return cells


def format_table(rows: list[dict]) -> list[str]:
    """The main table: an ``ours`` and a ``tir`` line per kernel, then a totals line per side."""
    name_w = max([len(r["name"]) for r in rows] + [6])
    head = f"{'kernel':{name_w}} {'who':4} " + " ".join(f"{c:>{_WIDTH.get(c, 5)}}" for c in _COLS) + "  widths"
    lines = [head, "-" * len(head)]
    for r in rows:
        for label, key in (("ours", "ours"), ("tir", "tileiras")):
            side = r[key]
            name = r["name"] if key == "ours" else ""
            if "sass" not in side:
                lines.append(f"{name:{name_w}} {label:4} ERROR {side.get('error', '?')}")
                continue
            cells = _cells(side, key == "ours")
            lines.append(f"{name:{name_w}} {label:4} "
                         + " ".join(f"{str(cells[c]):>{_WIDTH.get(c, 5)}}" for c in _COLS)
                         + "  " + _widths_text(side["sass"])
                         + (f"  [{side['error']}]" if side.get("error") else ""))
    return lines


def totals(rows: list[dict]) -> dict:
    """Sums per side over the kernels both sides compiled (``kernels``: how many), plus
    ``with_spills`` (kernels with spills), ``more_regs`` / ``more_inst`` (kernels where that
    side uses more registers / SASS instructions than the other)."""
    both = [r for r in rows if "sass" in r["ours"] and "sass" in r["tileiras"]]
    out = {}
    for key, ours in (("ours", True), ("tileiras", False)):
        other = "tileiras" if ours else "ours"
        t: dict = {"kernels": len(both)}
        for c in ("inst", "shfl", "mma", "ldg", "stg", "ld", "st", "lds", "sts", "ldsm", "bar", "async", "ldl",
                  "stl"):
            t[c] = sum(r[key]["sass"].get(c, 0) for r in both)
        t["with_spills"] = sum(_has_spills(r[key], ours) for r in both)
        t["more_regs"] = sum(int(_cells(r[key], ours)["reg"] or 0) > int(_cells(r[other], not ours)["reg"] or 0)
                           for r in both)
        t["more_inst"] = sum(r[key]["sass"]["inst"] > r[other]["sass"]["inst"] for r in both)
        t["failed"] = sum("sass" not in r[key] for r in rows)
        out[key] = t
    return out


def format_totals(t: dict) -> list[str]:
    """The totals lines of :func:`totals`."""
    lines = []
    for key, label in (("ours", "ours"), ("tileiras", "tir ")):
        s = t[key]
        lines.append(f"TOTAL {label} ({s['kernels']} kernels): inst {s['inst']}  SHFL {s['shfl']}  MMA {s['mma']}  "
                     f"LDG {s['ldg']}  STG {s['stg']}  LD {s['ld']}  ST {s['st']}  LDS {s['lds']}  STS {s['sts']}  "
                     f"LDSM {s['ldsm']}  BAR {s['bar']}  async {s['async']}  LDL/STL {s['ldl']}/{s['stl']}  "
                     f"spilling kernels {s['with_spills']}  more regs {s['more_regs']}  "
                     f"more inst {s['more_inst']}  failed {s['failed']}")
    return lines


def _vec_text(d: dict) -> str:
    return ",".join(f"{k}:{v}" for k, v in d.items()) or "-"


def format_ptx_table(rows: list[dict]) -> list[str]:
    """The table of counts in our PTX text, a line per kernel."""
    name_w = max([len(r["name"]) for r in rows] + [6])
    cols = ("shfl", "mma", "wgmma", "bar", "ld_shared", "st_shared", "ldmatrix", "cp_async", "tma")
    short = {"ld_shared": "ld.sh", "st_shared": "st.sh", "ldmatrix": "ldmx", "cp_async": "cp.as"}
    head = (f"{'kernel (our PTX)':{name_w}} " + " ".join(f"{short.get(c, c):>5}" for c in cols)
            + "  ld.global     ld(generic)   st.global     st(generic)")
    lines = [head, "-" * len(head)]
    for r in rows:
        p = r["ours"].get("ptx")
        if p is None:
            lines.append(f"{r['name']:{name_w}} -")
            continue
        lines.append(f"{r['name']:{name_w}} " + " ".join(f"{p[c]:>5}" for c in cols) + "  "
                     + " ".join(f"{_vec_text(p[k]):13}" for k in ("ld_global", "ld_generic", "st_global",
                                                                   "st_generic")).rstrip())
    return lines


# ------------------------------------------------------------------ main


def tile_lsp_origin() -> str:
    """Where ``tile_lsp`` is imported from, with the git commit of that tree when it has one."""
    spec = importlib.util.find_spec("tile_lsp")
    if spec is None or not spec.origin:
        return "tile_lsp not importable"
    pkg = Path(spec.origin).parent
    try:
        rev = subprocess.run(["git", "-C", str(pkg.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(pkg.parent), "status", "--porcelain", "--", "tile_lsp"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev, dirty = "", ""
    return f"{pkg}" + (f" (git {rev}{', tile_lsp modified' if dirty else ''})" if rev else "")


def main(argv: list[str] | None = None) -> int:
    """Command line: measure the selected kernels, print the tables, write ``--json``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--kernels", help="comma-separated name substrings (instead of the default set)")
    ap.add_argument("--all", action="store_true", help="every ok kernel of --targets")
    ap.add_argument("--targets", default=",".join(DEFAULT_TARGETS), help="MANIFEST targets (default sm_80,sm_90)")
    ap.add_argument("--json", metavar="OUT", help="write everything to this JSON file")
    ap.add_argument("--cache", default=DEFAULT_CACHE, help=f"tileiras cubin cache (default {DEFAULT_CACHE})")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--kernels-dir", default=str(KERNELS), help="corpus kernels folder (with MANIFEST.tsv)")
    args = ap.parse_args(argv)

    origin = tile_lsp_origin()
    print(f"tile_lsp: {origin}")
    from tile_lsp.codegen.cli import find_ptxas
    from tile_lsp.nvidia import find_tool

    tools = {"ptxas": find_ptxas(), "tileiras": find_tool("tileiras"), "cuobjdump": find_tool("cuobjdump")}
    missing = [k for k, v in tools.items() if not v]
    if missing:
        print(f"missing NVIDIA tools: {', '.join(missing)} (pip install -e '.[nvidia]')", file=sys.stderr)
        return 2
    kernels = select_kernels(corpus_kernels(Path(args.kernels_dir), tuple(args.targets.split(","))),
                             [s for s in (args.kernels or "").split(",") if s], args.all)
    if not kernels:
        print("no kernels selected", file=sys.stderr)
        return 1
    print(f"{len(kernels)} kernels, {args.jobs} worker(s), tileiras cache {args.cache}\n")
    t0 = time.perf_counter()
    jobs = [(k, tools, args.cache) for k in kernels]
    if args.jobs <= 1:
        rows = [measure(j) for j in jobs]
    else:
        with mp.get_context("spawn").Pool(args.jobs) as pool:
            rows = pool.map(measure, jobs, chunksize=1)
    elapsed = time.perf_counter() - t0

    for line in format_table(rows):
        print(line)
    print()
    t = totals(rows)
    for line in format_totals(t):
        print(line)
    print()
    for line in format_ptx_table(rows):
        print(line)
    print(f"\n{elapsed:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"tile_lsp": origin, "tools": tools, "cache": args.cache,
                                               "kernels": rows, "totals": t}, indent=1))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
