"""Reductions across threads: in-thread folds, warp shuffles, one cross-warp step.

``cuda_tile.reduce`` combines the elements along one dimension with an
associative body (NVIDIA cuda-tile ``Ops.td``, ``ReduceOp``: "The reduction
function must be an associative operation").  The reduction follows the
distribution of :mod:`tile_lsp.codegen.ptx` instead of reading a staged
copy of the tile element by element (:func:`runs_in_registers`) where the
body is also commutative (:func:`commutative_combiner`: each yielded value
is one of ``addf``, ``mulf``, ``maxf``, ``minf``, ``addi``, ``muli``,
``maxi``, ``mini``, ``andi``, ``ori``, ``xori`` of its own pair of
arguments), or where the steps below keep the elements in order anyway
(argmax with its index, the first non-zero element):

1. **in the thread**: the slots of one thread that differ only in the
   reduced coordinate are folded into one partial;
2. **in the warp**: ``shfl.sync.bfly.b32`` over each lane bit that carries
   the reduced coordinate (``log2`` steps).  With a commutative body and
   several partials per thread (the rows of attention's and softmax's
   tiles), each step also halves them: of a pair of partials a lane keeps
   one and sends the other, its partner the reverse, so ``G`` partials take
   ``G/2 + G/4 + ...`` shuffles instead of ``G`` per step, and afterwards the
   lane bits used so say which partial a lane holds;
3. **across warps**: where warp bits carry the reduced coordinate, one lane
   per warp writes its partial to shared memory, and after one barrier each
   thread folds the ``W`` partials of each of its result slots.  The same
   step moves the results to the slots of the result's distribution where
   lanes were reduced, even with ``W = 1``.

The linear element index ``e`` of an ``N``-element tile held in a CTA of
``T`` threads has ``log2(N)`` bits; slot ``s`` of thread ``t`` holds
``e = s * T + t`` (``N >= T``) or ``e = t mod N``, so the low ``log2(T)``
bits of ``e`` are thread bits (lanes 0-4, then warps) and the high ones slot
bits.  Tile dimensions are powers of two in row-major order, so the reduced
dimension is one contiguous bit range ``[lo, hi)`` of ``e``
(:func:`plan_reduction`).  A body that may not commute keeps the
sequential loop of :mod:`tile_lsp.codegen.ops_shape` only where a thread
would fold slots that lanes or warps interleave.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.codegen.ptx import LoweringError, TileValue, reg_class, staged_bytes
from tile_lsp.dialect import types as T

if TYPE_CHECKING:
    from tile_lsp.codegen.lower import KernelLowering

#: Combiner ops whose two operands commute (IEEE add, multiply, max and min are commutative).
COMMUTATIVE_OPS = frozenset({"addf", "mulf", "maxf", "minf", "addi", "muli", "maxi", "mini", "andi", "ori",
                             "xori"})
#: Lanes of a warp (``shfl.sync`` works within one).
WARP = 32
LANE_BITS = 5


def commutative_combiner(op: Operation) -> bool:
    """Whether ``op``'s (a ``reduce``'s) body yields, for each operand ``i``, one op of
    :data:`COMMUTATIVE_OPS` applied to exactly its arguments ``2i`` and ``2i+1`` (in either order).

    Such a body is associative (Ops.td) and commutative, so any order of combination gives the same
    result up to floating-point rounding, as NVIDIA's tree reductions do."""
    if not op.regions or not op.regions[0].blocks:
        return False
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    ops = block.operations
    if not ops or len(args) != 2 * len(op.operands):
        return False
    term = ops[-1]
    if len(term.operands) != len(op.operands) or len(ops) - 1 != len(op.operands):
        return False
    for i, v in enumerate(term.operands):
        d = getattr(v, "owner", None)
        if not isinstance(d, Operation) or d.parent is not block or d.short_name not in COMMUTATIVE_OPS:
            return False
        if len(d.operands) != 2 or {id(x) for x in d.operands} != {id(args[2 * i]), id(args[2 * i + 1])}:
            return False
    return True


def reduction_plan_of(op: Operation, threads: int) -> ReductionPlan:
    """The :class:`ReductionPlan` of ``op`` (a cuda_tile or nv_tileas ``reduce``) in a CTA of ``threads``."""
    return plan_reduction(tuple(int(d) for d in op.operands[0].type.shape), op.attr("dim").value, threads)


def runs_in_registers(op: Operation, threads: int) -> bool:
    """Whether ``op`` (cuda_tile or nv_tileas) runs in registers and warp shuffles in a CTA of
    ``threads`` (the decision of ``tile-assign-layouts``; the later passes read its mark,
    :func:`marked_in_registers`) rather than over a staged copy:

    * a ``scan``, always (:mod:`tile_lsp.codegen.scans` keeps the order of the body's arguments);
    * a ``reduce`` with a :func:`commutative_combiner`;
    * a ``reduce`` with any other (associative) body whose plan keeps the elements in order: no
      thread folds slots before the lanes or warps combine (``fold == 1``), or no thread bit is
      reduced (``warps == 0``).  The lanes that write the results combine the lower lanes' partial
      first (:func:`emit_shuffle_reduce`), so the order of the elements is kept, as a body
      keeping the first non-zero element needs (Ops.td leaves the order open; the sequential
      reading is the one every in-order evaluation agrees with)."""
    if op.short_name == "scan":
        return True
    if op.short_name != "reduce":
        return False
    if commutative_combiner(op):
        return True
    plan = reduction_plan_of(op, threads)
    return plan.fold == 1 or plan.warps == 0


def marked_in_registers(op: Operation) -> bool:
    """Whether ``tile-assign-layouts`` marked ``op`` ``tile_lsp.staging = "shfl"``
    (:func:`runs_in_registers`)."""
    a = op.attr("tile_lsp.staging")
    return isinstance(a, A.StringAttr) and a.value == "shfl"


@dataclass(frozen=True)
class ReductionPlan:
    """How a reduction of an ``n``-element tile over ``threads`` threads runs (see the module).

    ``lo``/``hi``: the reduced bit range of the linear element index; ``fold``: slots folded in each
    thread; ``lane_masks``: the ``shfl.bfly`` lane masks, in order; ``warps``: partials per result
    element combined through shared memory (``1``: results only move to their slots), ``0`` where
    no thread bit is reduced (the folded slots are the result slots); ``warp_shift``: the first warp
    bit reduced; ``writer_mask``: thread bits that are zero in the threads writing partials (reduced
    lanes, replicas)."""

    n: int
    threads: int
    lo: int
    hi: int
    fold: int
    lane_masks: tuple[int, ...]
    warps: int
    warp_shift: int
    writer_mask: int

    def describe(self) -> str:
        """One line for the ``tile_lsp.reduction`` attribute of the ``layout`` and ``nv_tileas`` stages:
        ``"fold 2, shfl.bfly 1 2 4 8 16, 4 warps through smem"``."""
        parts = [f"fold {self.fold}"] if self.fold > 1 else []
        if self.lane_masks:
            parts.append("shfl.bfly " + " ".join(str(m) for m in self.lane_masks))
        if self.warps > 1:
            parts.append(f"{self.warps} warps through smem")
        elif self.warps == 1:
            parts.append("results through smem")
        return ", ".join(parts) or "in place"


def dim_bits(shape: tuple[int, ...], dim: int) -> tuple[int, int, int]:
    """``(n, lo, hi)``: the elements of a tile of ``shape`` (powers of two, row-major) and the bit range
    ``[lo, hi)`` of the linear element index that dimension ``dim`` takes."""
    n = 1
    for d in shape:
        n *= d
    inner = 1
    for d in shape[dim + 1:]:
        inner *= d
    lo = inner.bit_length() - 1
    return n, lo, lo + shape[dim].bit_length() - 1


def plan_reduction(shape: tuple[int, ...], dim: int, threads: int) -> ReductionPlan:
    """The :class:`ReductionPlan` of reducing dimension ``dim`` of a tile of ``shape`` (powers of two,
    row-major) in a CTA of ``threads`` threads (a power of two, a multiple of 32)."""
    n, lo, hi = dim_bits(shape, dim)
    tb = threads.bit_length() - 1
    nb = n.bit_length() - 1
    data_t = min(tb, nb)  # thread bits that carry element bits; the others hold replicas
    slot_lo, slot_hi = max(lo - tb, 0), max(hi - tb, 0)
    lanes = range(lo, min(hi, LANE_BITS, data_t))
    w_lo, w_hi = max(lo, LANE_BITS), min(hi, data_t)
    warps = (1 << max(w_hi - w_lo, 0)) if lo < min(hi, data_t) else 0  # 0: no thread bit reduced
    writer = 0
    for b in range(lo, min(hi, LANE_BITS, data_t)):
        writer |= 1 << b
    for b in range(data_t, tb):
        writer |= 1 << b
    return ReductionPlan(n, threads, lo, hi, 1 << (slot_hi - slot_lo), tuple(1 << b for b in lanes), warps,
                         w_lo, writer)


# ------------------------------------------------------------------ combiner


def identity_regs(lw: KernelLowering, op: Operation, elems: list[T.Type]) -> list[str]:
    """Registers holding ``op``'s ``identities`` (one per operand, in ``elems``' element types).

    Raises :class:`LoweringError` for an identity that is not a float, integer or bool."""
    from tile_lsp.analysis.ir.numbers import float_to_bits
    ids = op.attr("identities")
    out = []
    for a, elem in zip(ids.elements if isinstance(ids, A.ArrayAttr) else [], elems):
        if isinstance(a, A.FloatAttr):
            bits = int(a.text, 16) if a.text.lower().startswith("0x") else float_to_bits(a.value, elem.name)
        elif isinstance(a, A.IntegerAttr):
            bits = a.value
        elif isinstance(a, A.BoolAttr):
            bits = int(a.value)
        else:
            raise LoweringError(f"identity {a} is not supported by the lowering")
        out.append(lw.const_reg(elem, bits))
    return out


def run_body(lw: KernelLowering, op: Operation, accs: list[str], xs: list[str], elems: list[T.Type]) -> None:
    """Inline the combiner region of ``op``: arguments ``(lhs0, rhs0, lhs1, rhs1, ...) = (acc, x)``
    per operand; each ``acc`` register then holds the yielded value."""
    args = []
    for a, x, e in zip(accs, xs, elems):
        args += [TileValue((), e, [a]), TileValue((), e, [x])]
    ops = lw.bind_block(op.regions[0], args)
    for inner in ops[:-1]:
        lw.lower_op(inner)
    term = ops[-1]
    for a, v, e in zip(accs, term.operands, elems):
        lw.mov(reg_class(e), a, lw.tile(v).regs[0])
    lw.f.loc = lw.loc_of(op)


# ------------------------------------------------------------------ emission


#: Register classes that cross a shuffle in a b32 register: (widen, narrow) instruction templates.
_THROUGH_B32 = {
    "b16": ("cvt.u32.u16 {d}, {s}", "cvt.u16.u32 {d}, {s}"),
    "pred": ("selp.u32 {d}, 1, 0, {s}", "setp.ne.u32 {d}, {s}, 0"),
}


def shuffle_register(lw: KernelLowering, reg: str, cls: str, mode: str, b: int | str) -> str:
    """A fresh register with ``reg`` of another lane of this warp: ``shfl.sync.<mode>.b32`` with
    operand ``b`` (an int or a b32 register; ``bfly``: lane ``laneid ^ b``; ``idx``: lane ``b``;
    ``up``/``down``: lane ``laneid -/+ b``, the own value where that is outside the warp), all 32
    lanes taking part.
    16-bit values travel widened, 64-bit ones as two halves, predicates as 0/1 (register classes of
    :func:`~tile_lsp.codegen.ptx.reg_class`); raises :class:`LoweringError` for another class."""
    f = lw.f
    clamp = 0 if mode == "up" else 31  # the lane bound: 0 for .up, 31 for the others (PTX ISA "shfl.sync")

    def shfl(src: str) -> str:
        d = f.reg("b32")
        f.emit(f"shfl.sync.{mode}.b32 {d}, {src}, {b}, {clamp}, -1")
        return d

    if cls in ("b32", "f32"):
        out = f.reg(cls)
        f.emit(f"shfl.sync.{mode}.b32 {out}, {reg}, {b}, {clamp}, -1")
        return out
    if cls in _THROUGH_B32:
        widen, narrow = _THROUGH_B32[cls]
        w = f.reg("b32")
        f.emit(widen.format(d=w, s=reg))
        out = f.reg(cls)
        f.emit(narrow.format(d=out, s=shfl(w)))
        return out
    if cls in ("b64", "f64"):
        lo, hi = f.reg("b32"), f.reg("b32")
        f.emit(f"mov.b64 {{{lo}, {hi}}}, {reg}")
        slo, shi = shfl(lo), shfl(hi)
        out = f.reg(cls)
        f.emit(f"mov.b64 {out}, {{{slo}, {shi}}}")
        return out
    raise LoweringError(f"no warp shuffle for register class {cls}")


def without_bits(lw: KernelLowering, n: int, slot: int, lo: int, hi: int) -> str:
    """b32 register: the linear index of the element slot ``slot`` of this thread holds in an
    ``n``-element tile, with its bits ``[lo, hi)`` removed (the higher ones shifted down)."""
    f = lw.f
    lin = lw.lin(n, slot)
    out = f.reg("b32")
    f.emit(f"shr.u32 {out}, {lin}, {hi}")
    if lo:
        low = f.reg("b32")
        f.emit(f"shl.b32 {out}, {out}, {lo}")
        f.emit(f"and.b32 {low}, {lin}, {(1 << lo) - 1}")
        f.emit(f"or.b32 {out}, {out}, {low}")
    return out


def _without(e: int, lo: int, hi: int) -> int:
    """``e`` with its bits ``[lo, hi)`` removed (the higher ones shifted down)."""
    return ((e >> hi) << lo) | (e & ((1 << lo) - 1))


def _transpose_step(lw: KernelLowering, op: Operation, groups: list[tuple[int, list[str]]], mask: int,
                    elems: list[T.Type], classes: list[str]) -> list[tuple[int, list[str]]]:
    """One butterfly step over lane bit ``mask`` that also halves the partials a thread holds: of each
    pair of groups (2i, 2i+1), a lane whose bit is 0 keeps group 2i and sends 2i+1, its partner the
    reverse, and each combines what it kept with what it received (one shuffle per pair instead of
    two).  Returns the new groups, keyed by the first slot of the even group: in a lane whose bit is
    1 the partial is the odd group's (:func:`_spread_index`).  For commutative bodies only."""
    upper = lane_bit(lw, mask)
    out = []
    for (s, a), (_, b) in zip(groups[0::2], groups[1::2]):
        keep, send = [lw.f.reg(c) for c in classes], [lw.f.reg(c) for c in classes]
        for k, x, y, z, c in zip(keep, send, a, b, classes):
            lw.select(c, k, upper, z, y)
            lw.select(c, x, upper, y, z)
        got = [shuffle_register(lw, x, c, "bfly", mask) for x, c in zip(send, classes)]
        run_body(lw, op, keep, got, elems)
        out.append((s, keep))
    return out


def lane_bit(lw: KernelLowering, mask: int) -> str:
    """Predicate register (prologue, cached): ``tid & mask != 0``."""
    f = lw.f

    def build() -> str:
        t, p = f.reg("b32"), f.reg("pred")
        f.pro(f"and.b32 {t}, {lw.tid}, {mask}")
        f.pro(f"setp.ne.u32 {p}, {t}, 0")
        return p
    return f.once(("lane_bit", mask), build)


def _spread_index(lw: KernelLowering, plan: ReductionPlan, spread: list[int], first_slots: list[int]) -> str:
    """b32 register: the part of the result's linear index that depends on this thread, after the
    :func:`_transpose_step` over the lane masks ``spread`` (in order): the thread's own bits with the
    reduced ones removed, plus, for step ``j``, the slot bit of group ``2^j`` where this lane's bit
    ``spread[j]`` is set (``first_slots``: the first slot of each group before the steps).  The
    result's index of the ``i``-th remaining partial adds the slot part of its key."""
    f = lw.f
    out = without_bits(lw, plan.n, 0, plan.lo, plan.hi)
    for j, mask in enumerate(spread):
        at = _without(first_slots[1 << j] * plan.threads, plan.lo, plan.hi).bit_length() - 1
        t = f.reg("b32")
        f.emit(f"shr.u32 {t}, {lw.tid}, {mask.bit_length() - 1}")
        f.emit(f"and.b32 {t}, {t}, 1")
        if at:
            f.emit(f"shl.b32 {t}, {t}, {at}")
        f.emit(f"or.b32 {out}, {out}, {t}")
    return out


def emit_shuffle_reduce(lw: KernelLowering, op: Operation, srcs: list[TileValue], outs: list[TileValue],
                        plan: ReductionPlan) -> None:
    """Lower ``op`` (a ``reduce`` that :func:`runs_in_registers`) on register tiles ``srcs`` into
    the result registers ``outs``, as ``plan`` says (module docstring).  Needs every thread of
    the CTA (``shfl.sync`` with a full mask, ``bar.sync``): the distribution keeps control flow
    uniform."""
    f = lw.f
    elems = [s.elem for s in srcs]
    classes = [reg_class(e) for e in elems]
    tb = plan.threads.bit_length() - 1
    slot_lo, slot_hi = max(plan.lo - tb, 0), max(plan.hi - tb, 0)
    slots = len(srcs[0].regs)
    # 1. fold the slots that differ only in reduced slot bits; groups keyed by their first slot
    groups: list[tuple[int, list[str]]] = []
    for s in range(slots):
        if (s >> slot_lo) & (plan.fold - 1):
            continue
        accs = [f.reg(c) for c in classes]
        for a, src, c in zip(accs, srcs, classes):
            lw.mov(c, a, src.regs[s])
        for k in range(1, plan.fold):
            other = s | (k << slot_lo)
            run_body(lw, op, accs, [src.regs[other] for src in srcs], elems)
        groups.append((s, accs))
    first_slots = [g for g, _ in groups]
    # 2. butterfly over the reduced lane bits.  A commutative body with several groups halves them at
    # each step first (_transpose_step); then each remaining partial goes through the plain butterfly.
    # There only the lanes whose reduced bits are 0 write (step 3), and at every step they combine their
    # own partial (lower lanes) with the partner's (higher ones): the order of the elements is kept where
    # it is read, for a body that does not commute as well.
    masks = list(plan.lane_masks)
    spread: list[int] = []  # the lane masks whose bits now tell which group a lane holds
    if commutative_combiner(op):
        while len(groups) > 1 and masks:
            spread.append(masks.pop(0))
            groups = _transpose_step(lw, op, groups, spread[-1], elems, classes)
    for mask in masks:
        for _, accs in groups:
            xs = [shuffle_register(lw, a, c, "bfly", mask) for a, c in zip(accs, classes)]
            run_body(lw, op, accs, xs, elems)
    if plan.warps == 0:
        # only slot bits were reduced: group g's partial is result slot g (kept slot bits, compacted)
        for s, accs in groups:
            r = ((s >> slot_hi) << slot_lo) | (s & ((1 << slot_lo) - 1))
            for o, a, c in zip(outs, accs, classes):
                lw.mov(c, o.regs[r], a)
        return
    # 3. partials through shared memory: [result element][warp], one buffer per operand
    m = outs[0].n
    offsets, end = [], 0
    for e in elems:
        end = (end + 7) // 8 * 8
        offsets.append(end)
        end += m * plan.warps * staged_bytes(e)
    lw.reserve(end)
    f.barrier()
    writer = None
    writer_mask = plan.writer_mask & ~sum(spread)  # every lane of a spread bit holds its own group
    if writer_mask:
        t = f.reg("b32")
        writer = f.reg("pred")
        f.emit(f"and.b32 {t}, {lw.tid}, {writer_mask}")
        f.emit(f"setp.eq.u32 {writer}, {t}, 0")
    warp = None
    if plan.warps > 1:
        warp = f.reg("b32")
        f.emit(f"shr.u32 {warp}, {lw.tid}, {plan.warp_shift}")
        f.emit(f"and.b32 {warp}, {warp}, {plan.warps - 1}")
    lane_part = _spread_index(lw, plan, spread, first_slots) if spread else None
    for s, accs in groups:
        if lane_part is None:
            idx = without_bits(lw, plan.n, s, plan.lo, plan.hi)  # the result's linear index
        else:
            idx = f.reg("b32")
            f.emit(f"add.s32 {idx}, {lane_part}, {_without(s * plan.threads, plan.lo, plan.hi)}")
        if warp is not None:
            at = f.reg("b32")
            f.emit(f"mad.lo.s32 {at}, {idx}, {plan.warps}, {warp}")
            idx = at
        for a, e, off in zip(accs, elems, offsets):
            lw.smem_write(e, off, idx, a, writer)
    f.barrier()
    for r in range(len(outs[0].regs)):
        first = lw.lin(m, r)
        if plan.warps > 1:
            first = f.reg("b32")
            f.emit(f"mul.lo.s32 {first}, {lw.lin(m, r)}, {plan.warps}")
        accs = []
        for k in range(plan.warps):
            xs = [lw.smem_read(e, off + k * staged_bytes(e), first) for e, off in zip(elems, offsets)]
            if not accs:
                accs = xs
            else:
                run_body(lw, op, accs, xs, elems)
        for o, a, c in zip(outs, accs, classes):
            lw.mov(c, o.regs[r], a)
