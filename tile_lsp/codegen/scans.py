"""Scans across threads: warp shuffles, one cross-warp step, a carry through the slots.

``cuda_tile.scan`` computes the inclusive prefix of its operands along one
dimension with an associative body (NVIDIA cuda-tile ``Ops.td``, ``ScanOp``);
``reverse = true`` scans from the last element to the first.  The order in
which the body receives its arguments is kept: the body gets the combination
of the *earlier* elements (lower indices; higher ones when reversed) as its
first argument of each pair, so a body that is associative but not
commutative gives the sequential scan's result.  The scanned dimension is one
contiguous bit range ``[lo, hi)`` of the linear element index ``e``
(row-major, powers of two), and in the distribution of
:mod:`tile_lsp.codegen.ptx` (``e = s * T + t``) its low bits are lane bits,
then warp bits, then slot bits (:func:`plan_scan`).  Each step runs on all
threads with ``selp`` where a thread takes no part, so control flow stays
uniform (``shfl.sync`` with a full mask, ``bar.sync``):

1. **in the warp** (Hillis-Steele): for each lane bit ``b`` of the scanned
   coordinate, ``shfl.sync.up`` (``down`` when reversed) by ``2^b`` lanes, and
   the threads whose coordinate has an element ``2^j`` earlier combine it in
   front of their own value;
2. **across warps**: the last lane of the coordinate in each warp writes its
   warp's total to shared memory; after one barrier each thread folds the
   totals of the earlier warps, in order, and puts them in front;
3. **through the slots**: the slots of one thread that differ only in the
   scanned coordinate are the slowest-moving part of it; a running carry (the
   total of the earlier slots, read with ``shfl.sync.idx`` from the last lane
   or taken from step 2) goes in front of each later slot.

The body runs about ``lanes + warps + 2`` times per slot instead of once per
earlier element as the sequential loop over a staged copy did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.codegen.ptx import TileValue, reg_class, staged_bytes
from tile_lsp.codegen.reductions import LANE_BITS, dim_bits, run_body, shuffle_register, without_bits

if TYPE_CHECKING:
    from tile_lsp.codegen.lower import KernelLowering


@dataclass(frozen=True)
class ScanPlan:
    """How a scan of an ``n``-element tile over ``threads`` threads runs (see the module).

    ``lo``/``hi``: the scanned bit range of the linear element index; ``lanes``: the lane bits that
    carry the scanned coordinate (ascending, from ``lo``); ``warp_lo``/``warp_hi``: the thread bits
    above the lanes that carry it (``warps = 2^(warp_hi - warp_lo)``); ``slot_lo``/``slot_hi``: the
    slot bits that carry it (``chain`` slots in order); ``replica_mask``: thread bits that hold
    replicas of a tile smaller than the CTA."""

    n: int
    threads: int
    lo: int
    hi: int
    reverse: bool
    lanes: tuple[int, ...]
    warp_lo: int
    warp_hi: int
    slot_lo: int
    slot_hi: int
    replica_mask: int

    @property
    def warps(self) -> int:
        """Warps along the scanned coordinate (1: none)."""
        return 1 << (self.warp_hi - self.warp_lo)

    @property
    def chain(self) -> int:
        """Slots of one thread along the scanned coordinate (1: none)."""
        return 1 << (self.slot_hi - self.slot_lo)

    @property
    def thread_bits(self) -> int:
        """Bits of the scanned coordinate that threads carry (lanes, then warps)."""
        return len(self.lanes) + self.warp_hi - self.warp_lo

    def describe(self) -> str:
        """One line for the ``tile_lsp.scan`` attribute of the ``layout`` and ``nv_tileas`` stages:
        ``"shfl.up 1 2 4 8 16, 4 warps through smem, 2 slots in order"``."""
        parts = []
        if self.lanes:
            parts.append(("shfl.down " if self.reverse else "shfl.up ") + " ".join(str(1 << b) for b in self.lanes))
        if self.warps > 1:
            parts.append(f"{self.warps} warps through smem")
        if self.chain > 1:
            parts.append(f"{self.chain} slots in order")
        return ", ".join(parts) or "in place"


def plan_scan(shape: tuple[int, ...], dim: int, threads: int, reverse: bool = False) -> ScanPlan:
    """The :class:`ScanPlan` of scanning dimension ``dim`` of a tile of ``shape`` (powers of two,
    row-major) in a CTA of ``threads`` threads (a power of two, a multiple of 32)."""
    n, lo, hi = dim_bits(shape, dim)
    tb = threads.bit_length() - 1
    data_t = min(tb, n.bit_length() - 1)  # thread bits that carry element bits; the others hold replicas
    lanes = tuple(range(lo, min(hi, LANE_BITS, data_t)))
    warp_lo = max(lo, LANE_BITS)
    warp_hi = max(min(hi, data_t), warp_lo)
    replicas = ((1 << tb) - 1) & ~((1 << data_t) - 1)
    return ScanPlan(n, threads, lo, hi, reverse, lanes, warp_lo, warp_hi, max(lo - tb, 0), max(hi - tb, 0),
                    replicas)


def scan_plan_of(op: Operation, threads: int) -> ScanPlan:
    """The :class:`ScanPlan` of ``op`` (a cuda_tile or nv_tileas ``scan``) in a CTA of ``threads``."""
    shape = tuple(int(d) for d in op.operands[0].type.shape)
    rev = op.attr("reverse")
    return plan_scan(shape, op.attr("dim").value, threads, isinstance(rev, A.BoolAttr) and rev.value)


# ------------------------------------------------------------------ emission


def _combine_in_front(lw: KernelLowering, op: Operation, front: list[str], accs: list[str], elems, classes,
                      when: str | None) -> None:
    """``accs = body(front, accs)`` (``front`` the earlier part), where the predicate ``when`` holds
    (everywhere for ``None``); ``front`` is left as it was."""
    tmp = [lw.f.reg(c) for c in classes]
    for t, x, c in zip(tmp, front, classes):
        lw.mov(c, t, x)
    run_body(lw, op, tmp, accs, elems)
    for a, t, c in zip(accs, tmp, classes):
        if when is None:
            lw.mov(c, a, t)
        else:
            lw.select(c, a, when, t, a)


def _thread_field(lw: KernelLowering, shift: int, bits: int) -> str:
    """b32 register (prologue, cached): ``(tid >> shift) & (2^bits - 1)``."""
    f = lw.f

    def build() -> str:
        r = f.reg("b32")
        f.pro(f"shr.u32 {r}, {lw.tid}, {shift}")
        f.pro(f"and.b32 {r}, {r}, {(1 << bits) - 1}")
        return r
    return f.once(("tfield", shift, bits), build)


def _compare(lw: KernelLowering, reg: str, cmp: str, value: int) -> str:
    """Predicate register (prologue, cached): ``reg <cmp> value`` (unsigned)."""
    f = lw.f

    def build() -> str:
        p = f.reg("pred")
        f.pro(f"setp.{cmp}.u32 {p}, {reg}, {value}")
        return p
    return f.once(("cmp", reg, cmp, value), build)


def emit_scan(lw: KernelLowering, op: Operation, srcs: list[TileValue], outs: list[TileValue],
              plan: ScanPlan) -> None:
    """Lower ``op`` (a ``scan``) on register tiles ``srcs`` into the result registers ``outs`` as
    ``plan`` says (module docstring).  Needs every thread of the CTA (full-mask ``shfl.sync``,
    ``bar.sync``): the distribution keeps control flow uniform."""
    f = lw.f
    elems = [s.elem for s in srcs]
    classes = [reg_class(e) for e in elems]
    slots = len(srcs[0].regs)
    accs = []
    for s in range(slots):
        regs = [f.reg(c) for c in classes]
        for r, src, c in zip(regs, srcs, classes):
            lw.mov(c, r, src.regs[s])
        accs.append(regs)
    # 1. Hillis-Steele over the lane bits of the coordinate
    nl = len(plan.lanes)
    if nl:
        field = _thread_field(lw, plan.lo, nl)
        for j, b in enumerate(plan.lanes):
            # the thread has an element 2^j earlier: coordinate >= 2^j (reversed: <= last - 2^j)
            when = _compare(lw, field, "lt", (1 << nl) - (1 << j)) if plan.reverse \
                else _compare(lw, field, "ge", 1 << j)
            for regs in accs:
                ys = [shuffle_register(lw, a, c, "down" if plan.reverse else "up", 1 << b) for a, c in zip(regs, classes)]
                _combine_in_front(lw, op, ys, regs, elems, classes, when)
    totals = _warp_step(lw, op, plan, accs, elems, classes) if plan.warps > 1 else None
    # 3. the carry through the slots of the coordinate, earliest slot first
    if plan.chain > 1:
        own = totals is None and not nl  # no thread carries the coordinate: a slot's total is itself
        if totals is None and nl:
            totals = [_last_lane_value(lw, plan, regs, classes) for regs in accs]
        elif own:
            totals = [list(regs) for regs in accs]
        step = 1 << plan.slot_lo
        for s in range(slots):
            if (s >> plan.slot_lo) & (plan.chain - 1):
                continue
            order = [s + k * step for k in range(plan.chain)]
            if plan.reverse:
                order.reverse()
            carry = [f.reg(c) for c in classes]
            for r, t, c in zip(carry, totals[order[0]], classes):
                lw.mov(c, r, t)
            for q in order[1:]:
                _combine_in_front(lw, op, carry, accs[q], elems, classes, None)
                if q == order[-1]:
                    break
                if own:  # the slot's inclusive prefix is the next carry
                    for r, a, c in zip(carry, accs[q], classes):
                        lw.mov(c, r, a)
                else:
                    run_body(lw, op, carry, totals[q], elems)
    for s, regs in enumerate(accs):
        for o, a, c in zip(outs, regs, classes):
            lw.mov(c, o.regs[s], a)


def _last_lane_value(lw: KernelLowering, plan: ScanPlan, regs: list[str], classes: list[str]) -> list[str]:
    """Registers with ``regs`` of the lane that holds the last element (first when reversed) of this
    thread's run of lanes along the coordinate: the total over the lanes."""
    f = lw.f

    def build() -> str:
        mask = ((1 << len(plan.lanes)) - 1) << plan.lo
        r = f.reg("b32")
        f.pro(f"and.b32 {r}, {lw.tid}, {31 & ~mask}")
        if not plan.reverse:
            f.pro(f"or.b32 {r}, {r}, {mask}")
        return r
    lane = f.once(("scan_last_lane", plan.lo, len(plan.lanes), plan.reverse), build)
    return [shuffle_register(lw, a, c, "idx", lane) for a, c in zip(regs, classes)]


def _warp_step(lw: KernelLowering, op: Operation, plan: ScanPlan, accs: list[list[str]], elems,
               classes) -> list[list[str]]:
    """Step 2 (module docstring): put the totals of the earlier warps in front of ``accs`` (per slot);
    returns each slot's total over all the threads of the coordinate."""
    f = lw.f
    w = plan.warps
    tw = plan.thread_bits
    m = plan.n >> tw  # entries per warp: every element index with the thread bits of the coordinate removed
    offsets, end = [], 0
    for e in elems:
        end = (end + 7) // 8 * 8
        offsets.append(end)
        end += m * w * staged_bytes(e)
    lw.reserve(end)
    lane_mask = ((1 << len(plan.lanes)) - 1) << plan.lo
    writer = None
    if lane_mask | plan.replica_mask:
        t = f.reg("b32")
        writer = f.reg("pred")
        f.emit(f"and.b32 {t}, {lw.tid}, {lane_mask | plan.replica_mask}")
        f.emit(f"setp.eq.u32 {writer}, {t}, {0 if plan.reverse else lane_mask}")
    warp = _thread_field(lw, plan.warp_lo, plan.warp_hi - plan.warp_lo)
    # position of this thread's warp in the order of the scan: 0 is the earliest
    pos = warp
    if plan.reverse:

        def build() -> str:
            r = f.reg("b32")
            f.pro(f"sub.s32 {r}, {w - 1}, {warp}")
            return r
        pos = f.once(("scan_warp_pos", plan.warp_lo, w), build)
    f.barrier()
    kept = []
    for s in range(len(accs)):
        idx = without_bits(lw, plan.n, s, plan.lo, plan.lo + tw)
        first = f.reg("b32")
        f.emit(f"mul.lo.s32 {first}, {idx}, {w}")
        kept.append(first)
        at = f.reg("b32")
        f.emit(f"add.s32 {at}, {first}, {warp}")
        for a, e, off in zip(accs[s], elems, offsets):
            lw.smem_write(e, off, at, a, writer)
    f.barrier()
    order = list(range(w))
    if plan.reverse:
        order.reverse()
    later = _compare(lw, pos, "gt", 0)
    totals = []
    for s, regs in enumerate(accs):
        def total_of(k: int) -> list[str]:
            return [lw.smem_read(e, off + k * staged_bytes(e), kept[s]) for e, off in zip(elems, offsets)]
        running = [f.reg(c) for c in classes]
        for r, t, c in zip(running, total_of(order[0]), classes):
            lw.mov(c, r, t)
        mine = [f.reg(c) for c in classes]
        for r, t, c in zip(mine, running, classes):
            lw.mov(c, r, t)
        for k in range(1, w):
            if k > 1:
                here = _compare(lw, pos, "eq", k)
                for r, t, c in zip(mine, running, classes):
                    lw.select(c, r, here, t, r)
            run_body(lw, op, running, total_of(order[k]), elems)
        _combine_in_front(lw, op, mine, regs, elems, classes, later)
        totals.append(running)
    return totals
