"""Pass ``tile-assign-layouts``: CTA size and the distribution of every tile over threads.

The distribution (see :mod:`tile_lsp.codegen.ptx`): element ``s * T + t`` of
an ``N``-element tile in slot ``s`` of thread ``t`` when ``N >= T``, replicated
otherwise.  ``T`` is 32 x the number of warps: ``num_worker_warps_per_cta``
of the entry's ``optimization_hints`` for the target (or ``default``), else
enough warps (4 to 16) that the largest tile has at most 32 elements per
thread (fewer where only fewer let the tiles between tensor-core MMAs stay in
fragments: :func:`_fragment_warps`); then more, a hint's size included, where
only more keep the tiles out of local memory (:func:`_spill_free_warps`).  ``occupancy`` becomes ``.minnctapersm``, in CTAs of 4 warps
(the frontend's CTA size) when no ``num_worker_warps_per_cta`` is given: a
CTA of 8 warps for the tiles with ``occupancy = 2`` asks for one.  The pass records its
decisions as discardable attributes, so the ``layout`` stage prints them
and our own parser and verifiers accept the result:
``tile_lsp.threads`` on each entry; on every op with tile results
``tile_lsp.slots`` (registers per thread) and ``tile_lsp.layout``, the
distribution as a CuTe thread-value layout (:func:`tv_layout`);
``tile_lsp.staging = "smem"`` on ops that move data through shared memory;
``tile_lsp.staging = "shfl"`` and ``tile_lsp.reduction`` (the plan of
:mod:`tile_lsp.codegen.reductions`, e.g. ``"fold 2, shfl.bfly 1 2 4 8 16, 4
warps through smem"``) on a ``reduce`` that runs in registers and warp
shuffles, or ``tile_lsp.scan`` (:mod:`tile_lsp.codegen.scans`, e.g.
``"shfl.up 1 2 4 8 16, 4 warps through smem"``) on a ``scan``; ``tile_lsp.fragments = [i, ...]`` on a ``for`` whose iteration
values ``i`` the loop carries in MMA fragments
(:mod:`tile_lsp.codegen.mma_fragments`), and ``tile_lsp.fragments_blocked`` for those whose warps
load fewer fragments with their tiles in one tile row (:func:`_blocked_loads_fewer`).  Last, per entry, the plan of the tiles that stay in MMA
fragments between tensor-core MMAs (attention's S, P and row statistics), ``tile_lsp.fragment`` on
their ops (:mod:`tile_lsp.codegen.fragment_layouts`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.syntax.parse_rules.entry import optimization_hint_entries
from tile_lsp.analysis.ir.core import Module, Operation
from tile_lsp.codegen.fragment_layouts import fragments_apply, plan_fragment_layouts
from tile_lsp.codegen.mma_fragments import carried_in_fragments, fragment_loads
from tile_lsp.codegen.reductions import reduction_plan_of, runs_in_registers
from tile_lsp.codegen.scans import scan_plan_of
from tile_lsp.codegen.target import Target
from tile_lsp.dialect import types as T

DEFAULT_WARPS = 4
MAX_WARPS = 16
#: registers a thread may have (PTX ISA: 255; 65,536 a CTA on sm_80 to sm_120)
MAX_REGS = 255
REGS_PER_CTA = 65536
#: how far :func:`live_registers` may exceed a thread's registers before ptxas spills: the estimate
#: counts each tile's registers from its definition to its last use, which ptxas shortens by
#: rematerialising and fusing element-wise chains (layernorm_bwd_bf16_32x256: 326 estimated, 254 used,
#: no spill; layernorm_bwd_f16_16x1024 in 4 warps: 646 estimated, 992 bytes spilled)
SPILL_FACTOR = 2
#: registers per thread the default CTA size aims at for the largest tile (code size and ptxas time)
SLOTS_PER_THREAD = 32
I32 = T.IntegerType(32)

#: ops whose lowering stages their operands through shared memory (ops_shape, ops_memory)
STAGING_OPS = {"broadcast", "permute", "extract", "insert", "cat", "pack", "unpack", "reduce", "scan",
               "mmaf", "mmai", "mmaf_scaled", "atomic_rmw_tko", "atomic_cas_tko"}


@dataclass
class KernelPlan:
    """Launch shape of one entry: ``threads`` per CTA and PTX performance directives."""

    threads: int
    min_ctas_per_sm: int | None = None
    max_nreg: int | None = None


def _hint(entry: Operation, target: Target, key: str) -> int | None:
    """Integer hint ``key`` of ``entry``'s ``optimization_hints`` for the target's ``sm_XX`` section,
    else its ``default`` one (the verifier read and checked the same entries)."""
    sections = dict(optimization_hint_entries(entry.attr("optimization_hints")) or ())
    for section in (f"sm_{target.sm}", "default"):
        value = sections.get(section)
        if value is not None and value.kind == "dict":
            found = dict(value.entries).get(key)
            if found is not None and found.kind == "int":
                return found.value
    return None


def _int_attr(entry: Operation, name: str) -> int | None:
    a = entry.attr(name)
    return a.value if isinstance(a, A.IntegerAttr) else None


def default_warps(entry: Operation) -> int:
    """Warps per CTA without a hint: enough that the largest tile takes at most
    :data:`SLOTS_PER_THREAD` registers per thread, between 4 and 16 warps."""
    largest = 1
    for op in entry.walk():
        for r in op.results:
            if isinstance(r.type, T.TileType) and r.type.num_elements:
                largest = max(largest, r.type.num_elements)
    warps = DEFAULT_WARPS
    while warps < MAX_WARPS and largest > warps * 32 * SLOTS_PER_THREAD:
        warps *= 2
    return warps


def tv_layout(n: int, threads: int) -> str:
    """The distribution of an ``n``-element tile over ``threads`` threads as a CuTe thread-value
    layout ``(threads, values) : (strides)`` from (thread, slot) to the row-major linear element
    index: ``(T,S):(1,T)`` (slot ``s`` of thread ``t`` holds element ``s * T + t``) when ``n >= T``,
    ``((n,T/n),1):((1,0),0)`` (thread ``t`` holds a replica of element ``t mod n``) when smaller.
    ``n`` and ``threads`` are powers of two (cuda_tile tile shapes; :func:`plan_kernel`)."""
    if n >= threads:
        return f"({threads},{n // threads}):(1,{threads})"
    if n == 1:
        return f"({threads},1):(0,0)"
    return f"(({n},{threads // n}),1):((1,0),0)"


def _fragment_warps(entry: Operation, target: Target, warps: int) -> int:
    """The default ``warps``, or fewer (down to :data:`DEFAULT_WARPS`) where only fewer let the tiles
    between tensor-core MMAs stay in fragments (:func:`~tile_lsp.codegen.fragment_layouts.fragments_apply`:
    attention's 64-row query blocks need M / 16 = 4 row blocks split evenly over the warps), as long as
    the largest tile takes at most twice :data:`SLOTS_PER_THREAD` registers a thread."""
    if entry.attr("nvvm.reqntid") is not None or fragments_apply(entry, 32 * warps, target.sm, target.max_smem):
        return warps
    largest = max((r.type.num_elements or 1 for op in entry.walk() for r in op.results
                   if isinstance(r.type, T.TileType)), default=1)
    fewer = warps // 2
    while fewer >= DEFAULT_WARPS and largest <= fewer * 32 * 2 * SLOTS_PER_THREAD:
        if fragments_apply(entry, 32 * fewer, target.sm, target.max_smem):
            return fewer
        fewer //= 2
    return warps


def _value_registers(ty, threads: int) -> int:
    """32-bit registers a thread holds of a value of type ``ty`` in the distribution over ``threads``
    threads (sub-word elements packed, as ptxas does; a replicated tile: its one element)."""
    if not isinstance(ty, T.TileType):
        return 0
    width = getattr(ty.element, "width", None) or 64  # pointers
    return max(1, -(-max(1, (ty.num_elements or 1) // threads) * width // 32))


def live_registers(entry: Operation, threads: int) -> int:
    """Estimated peak of the registers a thread holds in tile values of ``entry`` at once, with
    ``threads`` threads: over the ops in program order, the sum of :func:`_value_registers` of the
    values defined before an op and used by it or later.  A value used inside an op's region (a loop
    body) but defined outside it is live through the whole op; an operand dies where it is last used
    (element-wise ops reuse its registers).  An upper bound in practice (see :data:`SPILL_FACTOR`)."""
    ops = [op for op in entry.walk() if op is not entry]
    pos = {id(op): i for i, op in enumerate(ops)}
    end: dict[int, int] = {}
    for op in reversed(ops):
        end[id(op)] = max([pos[id(op)]] + [end[id(inner)] for r in op.regions for b in r.blocks
                                           for inner in b.operations])
    delta = [0] * (len(ops) + 2)

    def add(value, start: int, block) -> None:
        cost = _value_registers(value.type, threads)
        last = start + 1
        for use in value.uses:
            user, inside = use.owner, False
            while user is not None and user.parent is not block:
                user, inside = user.parent_op, True
            if user is not None and id(user) in pos:
                last = max(last, end[id(user)] + 1 if inside else pos[id(user)])
        if cost:
            delta[start] += cost
            delta[max(last, start + 1)] -= cost

    for op in ops:
        for r in op.results:
            add(r, pos[id(op)], op.parent)
        for region in op.regions:
            for b in region.blocks:
                for a in b.arguments:
                    add(a, pos[id(op)], b)
    peak = live = 0
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak


def _spill_free_warps(entry: Operation, warps: int) -> int:
    """``warps``, or more (up to :data:`MAX_WARPS`) where only more keep the tiles' registers within
    what a thread may have (:func:`live_registers` over :data:`SPILL_FACTOR` times ``min(255, 65,536 /
    threads)``): the tiles spread over more threads, fewer registers each.  Spilled registers go to
    local memory, a round trip through L1 for each; a hint's CTA size that would spill is a hint
    ptxas cannot honour well (tileiras spills there too)."""
    def over(w: int) -> bool:
        return live_registers(entry, 32 * w) > SPILL_FACTOR * min(MAX_REGS, REGS_PER_CTA // (32 * w))
    more = warps
    while over(more):
        if more >= MAX_WARPS:
            return warps
        more *= 2
    return more


def plan_kernel(entry: Operation, target: Target) -> KernelPlan:
    """The :class:`KernelPlan` of ``entry`` on ``target`` (hints, ``nvvm.*``/``tt.*`` attributes).
    The warps: ``num_worker_warps_per_cta`` (``tt.num_warps``), else :func:`default_warps` or
    :func:`_fragment_warps`; more where only more keep the tiles out of local memory
    (:func:`_spill_free_warps`)."""
    warps = _hint(entry, target, "num_worker_warps_per_cta") or _int_attr(entry, "tt.num_warps") \
        or _fragment_warps(entry, target, default_warps(entry))
    warps = _spill_free_warps(entry, warps)
    threads = _int_attr(entry, "nvvm.reqntid") or 32 * warps
    if threads & (threads - 1) or not 32 <= threads <= 1024:
        threads = 32 * DEFAULT_WARPS
    occupancy = _hint(entry, target, "occupancy")
    if occupancy and not _hint(entry, target, "num_worker_warps_per_cta") and threads > 32 * DEFAULT_WARPS:
        # the hint counts CTAs of the frontend's CTA size (cuTile's 4 warps): a larger CTA chosen here for
        # the tiles keeps the warps per SM it asks for, not the CTAs (twice the warps would halve the
        # registers a thread may use, and spill)
        occupancy = max(1, occupancy * 32 * DEFAULT_WARPS // threads)
    occupancy = occupancy or _int_attr(entry, "nvvm.minctasm")
    return KernelPlan(threads, occupancy, _int_attr(entry, "nvvm.maxnreg"))


def _blocked_loads_fewer(ty: T.Type, threads: int) -> bool:
    """Whether a 2-d ``M x N`` accumulator a loop carries in fragments is better blocked (a warp's
    tiles consecutive in one tile row, sharing their A fragment) than strided (one tile column,
    sharing B): fewer fragment registers loaded a k-step, then fewer ``ldmatrix``
    (:func:`~tile_lsp.codegen.mma_fragments.fragment_loads`).  ``matmul_tiled_f16_128x128x32`` in 16
    warps: one A and 8 B fragments (20 registers, 5 ``ldmatrix``) instead of 8 A and one B (34
    registers, 9)."""
    if not isinstance(ty, T.TileType) or len(ty.shape) != 2:
        return False
    m, n = (int(d) for d in ty.shape)
    return fragment_loads(m, n, threads, True) < fragment_loads(m, n, threads, False)


def assign_layouts(module: Module, entries: list[Operation], target: Target) -> dict[int, KernelPlan]:
    """Run the pass: returns the plan per entry (keyed by ``id(entry)``) and annotates the IR."""
    plans = {}
    for entry in entries:
        plan = plan_kernel(entry, target)
        plans[id(entry)] = plan
        entry.attributes["tile_lsp.threads"] = A.IntegerAttr(plan.threads, I32)
        for op in entry.walk():
            if op is entry:
                continue
            tiles = [r.type for r in op.results if isinstance(r.type, T.TileType)]
            if tiles:
                n = tiles[0].num_elements or 1
                op.attributes["tile_lsp.slots"] = A.IntegerAttr(max(1, n // plan.threads), I32)
                op.attributes["tile_lsp.layout"] = A.StringAttr(tv_layout(n, plan.threads))
            short = op.name.split(".", 1)[-1]
            if short == "for":
                carried = [i for i in range(len(op.operands) - 3)
                           if carried_in_fragments(op, i, plan.threads, target.sm, target.max_smem)]
                if carried:
                    op.attributes["tile_lsp.fragments"] = A.ArrayAttr(
                        [A.IntegerAttr(i, I32) for i in carried])
                    # a warp's tiles one run of a tile row where that loads fewer fragments a k-step
                    blocked = [i for i in carried if _blocked_loads_fewer(op.operands[3 + i].type, plan.threads)]
                    if blocked:
                        op.attributes["tile_lsp.fragments_blocked"] = A.ArrayAttr(
                            [A.IntegerAttr(i, I32) for i in blocked])
            if short in ("reduce", "scan") and runs_in_registers(op, plan.threads):
                op.attributes["tile_lsp.staging"] = A.StringAttr("shfl")
                if short == "reduce":
                    how = reduction_plan_of(op, plan.threads).describe()
                    op.attributes["tile_lsp.reduction"] = A.StringAttr(how)
                else:
                    op.attributes["tile_lsp.scan"] = A.StringAttr(scan_plan_of(op, plan.threads).describe())
            elif short in STAGING_OPS:
                op.attributes["tile_lsp.staging"] = A.StringAttr("smem")
        plan_fragment_layouts(entry, plan.threads, target.sm, target.max_smem)
    return plans
