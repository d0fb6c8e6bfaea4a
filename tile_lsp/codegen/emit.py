"""Pass ``convert-to-ptx``: the PTX module of the planned entries.

Kernel ABI: one ``.visible .entry`` per ``cuda_tile.entry`` with its symbol
name, one ``.param`` per entry argument in order (pointers ``.u64``, i32
``.u32``, i64 ``.u64``, i1 ``.u8``, i8/i16 ``.s8``/``.s16``, f16/bf16
``.b16``, f32 ``.f32``, f64 ``.f64``).  Directives: ``.reqntid T, 1, 1``;
``.minnctapersm`` from the ``occupancy`` hint or ``nvvm.minctasm``;
``.maxnreg`` from ``nvvm.maxnreg``.  ``.file``/``.loc`` tie every
instruction to the IR line and column of the op it comes from, and the
instructions are counted per op as they are emitted
(:attr:`~tile_lsp.codegen.ptx.Function.instructions`; static counts, see
:attr:`~tile_lsp.codegen.passes.LoweringResult.op_counts`).
The staging buffer is a static ``.shared`` array up to 48 KiB and the
dynamic ``.extern .shared`` array beyond (the launcher then requests
:attr:`KernelInfo.dynamic_smem` bytes); a kernel whose staging needs more
than the target's :attr:`~tile_lsp.codegen.target.Target.max_smem` is a
:class:`~tile_lsp.codegen.ptx.LoweringError` at the op that needs the most.
"""

from __future__ import annotations

from tile_lsp.analysis.ir.core import Module, Operation
from tile_lsp.codegen.layouts import KernelPlan
from tile_lsp.codegen.lower import KernelLowering, load_pred_byte
from tile_lsp.codegen.ops_memory import global_decl
from tile_lsp.codegen.passes import KernelInfo
from tile_lsp.codegen.ptx import STAGE_STRIDE, LoweringError, TileValue, reg_class
from tile_lsp.codegen.target import Target
from tile_lsp.dialect import types as T

STATIC_SMEM_LIMIT = 48 * 1024


def _param_type(t: T.Type) -> str:
    elem = t.element if isinstance(t, T.TileType) else t
    if isinstance(t, T.TileType) and t.shape:
        raise LoweringError(f"entry argument of type {t} (not a scalar tile) is not supported by the lowering")
    if isinstance(elem, T.PointerType):
        return ".u64"
    if isinstance(elem, T.IntegerType):
        return {1: ".u8", 8: ".s8", 16: ".s16", 32: ".u32", 64: ".u64"}.get(elem.width, ".u32")
    if isinstance(elem, T.FloatType):
        return {"f32": ".f32", "tf32": ".f32", "f64": ".f64"}.get(elem.name, ".b16")
    raise LoweringError(f"entry argument of type {t} is not supported by the lowering")


def _entry_args(entry: Operation):
    region = entry.regions[0] if entry.regions else None
    if region is None or not region.blocks:
        return []
    return region.blocks[0].arguments


class _NoRoomForStages(Exception):
    """The two stages of a kernel's pipelined copies need more shared memory than the target has."""


def _lower_entry(entry: Operation, plan: KernelPlan, target: Target, decls: dict[str, str],
                 warnings: list, pipelines: bool = True) -> tuple[list[str], KernelInfo, dict[tuple[int, int], int]]:
    lw = KernelLowering(entry, target, plan.threads, decls, 1, warnings)
    lw.pipelines = pipelines
    f = lw.f
    head: list[str] = []

    def load_param(line: str) -> None:  # parameter loads precede the prologue and body: not f.emit
        head.append(f"\t{line};")

    params = []
    for i, arg in enumerate(_entry_args(entry)):
        pty = _param_type(arg.type)
        pname = f"{lw.name}_param_{i}"
        params.append((pty, pname, arg))
    for pty, pname, arg in params:
        elem = arg.type.element
        cls = reg_class(elem)
        r = f.reg(cls)
        if cls == "pred":
            load_pred_byte(f, r, "ld.param", pname, emit=load_param)
        else:
            load_param(f"ld.param{pty} {r}, [{pname}]")
        lw.set(arg, TileValue((), elem, [r]))
    ops = entry.regions[0].blocks[0].operations if entry.regions and entry.regions[0].blocks else []
    lw.run_ops(ops)
    if not f.body or f.body[-1].strip() != "ret;":
        f.body.append("\tret;")

    smem = f.smem_bytes
    if f.two_stages:  # the second stage of pipelined copies above the part of the first they use
        stride = (f.stage_bytes + 1023) // 1024 * 1024
        smem = max(smem, stride + f.stage_bytes)
        if smem > target.max_smem:
            raise _NoRoomForStages
        f.prologue = [line.replace(STAGE_STRIDE, str(stride)) for line in f.prologue]
    if smem > target.max_smem:
        raise LoweringError(f"staging needs {smem} bytes of shared memory per CTA; {target.name} allows at most "
                            f"{target.max_smem} bytes ({target.max_smem // 1024} KB)", f.smem_op)
    dynamic = smem > STATIC_SMEM_LIMIT
    sym = "__tile_lsp_dsmem" if dynamic else "__tile_lsp_smem"
    lines = [f".visible .entry {lw.name}("]
    lines.append(",\n".join(f"\t.param {pty} {pname}" for pty, pname, _ in params))
    lines.append(")")
    lines.append(f".reqntid {plan.threads}, 1, 1")
    if plan.max_nreg:
        lines.append(f".maxnreg {plan.max_nreg}")
    if plan.min_ctas_per_sm:
        lines.append(f".minnctapersm {plan.min_ctas_per_sm}")
    lines.append("{")
    lines.extend(f.declarations())
    lines.append("\t.reg .b32 \t%r_tid;")
    if ("printbuf",) in f.cache:
        lines.append(f"\t.local .align 8 .b8 __tile_lsp_printbuf[{f.cache[('printbuf',)]}];")
    if smem and not dynamic:
        lines.append(f"\t.shared .align 128 .b8 __tile_lsp_smem[{smem}];")
    lines.append("")
    lines.append("\tmov.u32 %r_tid, %tid.x;")
    lines.extend(head)
    lines.extend(line.replace("__tile_lsp_smem", sym) for line in f.prologue)
    lines.extend(f.body)
    lines.append("}")
    info = KernelInfo(lw.name, [(pty, str(arg.type)) for pty, _, arg in params], plan.threads,
                      0 if dynamic else smem, smem if dynamic else 0)
    counts = {(loc.line, loc.character): n for loc, n in f.instructions.items()}
    return lines, info, counts


def emit_module(module: Module, entries: list[Operation], plans: dict[int, KernelPlan], target: Target,
                file_name: str) -> tuple[str, list[KernelInfo], list, dict[str, dict[tuple[int, int], int]]]:
    """PTX text, kernel infos, precision warnings ((op, message) pairs) and instruction counts for
    ``entries``.

    The counts: entry name -> {(line, character): instructions}, keyed by the
    0-based start of the source range of the op that emitted them (the
    position of its ``.loc``); static counts of the text, prologue and
    parameter loads left out (:attr:`~tile_lsp.codegen.ptx.Function.instructions`).

    Raises :class:`~tile_lsp.codegen.ptx.LoweringError` (with the op) when an
    op cannot be lowered.
    """
    decls: dict[str, str] = {}
    warnings: list = []
    for op in module.walk():
        if op.name == "cuda_tile.global":
            sym, decl = global_decl(op)
            decls[sym] = decl
    bodies: list[str] = []
    infos = []
    counts: dict[str, dict[tuple[int, int], int]] = {}
    for entry in entries:
        found: list = []
        try:
            lines, info, op_counts = _lower_entry(entry, plans[id(entry)], target, decls, found)
        except _NoRoomForStages:  # copies not pipelined then (codegen/prefetch.py)
            found = []
            lines, info, op_counts = _lower_entry(entry, plans[id(entry)], target, decls, found, pipelines=False)
        warnings.extend(found)
        bodies.append("\n".join(lines))
        infos.append(info)
        counts[info.name] = op_counts
    out = [
        "//",
        "// Generated by tile-lsp (convert-to-ptx) from " + file_name,
        "// CTA size and shared memory per kernel: " + ", ".join(
            f"{k.name}: {k.threads} threads, {k.static_smem or k.dynamic_smem} B"
            f"{' dynamic' if k.dynamic_smem else ''}" for k in infos),
        "//",
        f".version {target.ptx_version}",
        f".target {target.name}",
        ".address_size 64",
        "",
        f'.file 1 "{_escape(file_name)}"',
    ]
    if any(k.dynamic_smem for k in infos):
        out.append(".extern .shared .align 128 .b8 __tile_lsp_dsmem[];")
    out.extend(decls.values())
    out.append("")
    out.append("\n\n".join(bodies))
    out.append("")
    return "\n".join(out), infos, warnings, counts


def _escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')

