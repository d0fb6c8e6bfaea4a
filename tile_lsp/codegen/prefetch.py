"""Staged copies that a ``for`` loop loads one iteration ahead (software prefetch through registers).

A K loop (or attention's K/V loop) copies its MMA operands from global to shared memory at the
staging store before its MMA (:func:`~tile_lsp.codegen.ops_memory.copy_to_staged`), so each
iteration waits there for its global loads.  Where it cannot change what is read, the loop issues
the first iteration's loads before it, and each staging store stores the registers and then loads
the next iteration's tile into them (:func:`prefetch_loads`, :class:`Prefetch`): the latency of the
loads overlaps an iteration's work.  PTX registers keep their values across the back edge, so the
prefetched registers need nothing else; their count is bounded (:data:`PREFETCH_FLOOR`).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from tile_lsp.analysis.ir.core import Operation
from tile_lsp.codegen.lower import KernelLowering, after_access
from tile_lsp.codegen.ops_memory import (VECTOR_BYTES, LoadedCopy, deferred_copy, load_for_staged, store_loaded,
                                         vector_copy_applies)
from tile_lsp.codegen.ptx import GlobalTile, StagedTile, TileValue, TileViewValue, storage_bytes
from tile_lsp.codegen.to_nv_tileas import defined_inside
from tile_lsp.dialect import types as T

#: registers a thread keeps for the rest of a loop before its copies are prefetched (:func:`prefetch_loads`):
#: CTAs of 512 threads, 128 registers a thread at most, spilled with any (matmul_tiled_bf16_128x256x64)
PREFETCH_FLOOR = 128
#: short names of the ops that write memory (a loop with one does not prefetch: :func:`prefetch_loads`)
WRITES = frozenset({"store_view_tko", "store_ptr_tko", "atomic_rmw_tko", "atomic_cas_tko", "atomic_red_view_tko"})


def _writes_global(op: Operation) -> bool:
    if op.short_name in WRITES:
        return True
    if op.name == "nv_tileas.tiled_store":
        maker = op.operand_group("view")[0].defining_op
        return maker is None or maker.name != "nv_tileas.alloc_tensor"
    return False


@dataclass
class Prefetch:
    """A staged copy that its ``for`` loop loads one iteration ahead (:func:`prefetch_loads`): the
    registers (``loaded``) and the body's ``index_cast`` values of the induction variable, which the
    next iteration's loads see as ``iv + step``."""

    loaded: LoadedCopy
    casts: list

    def store(self, lw: KernelLowering, tile: GlobalTile, buf: StagedTile) -> None:
        """The staging store of this copy: the registers into ``buf``, then the next iteration's loads
        into them, under ``iv + step < ub`` (the innermost loop of ``lw``).  No barrier."""
        f = lw.f
        store_loaded(lw, tile, buf, self.loaded)
        loop = lw.loop_stack[-1]
        nxt, more = f.reg("b32"), f.reg("pred")
        f.emit(f"add.s32 {nxt}, {loop['iv']}, {loop['step']}")
        f.emit(f"setp.lt.{loop['cmp']}32 {more}, {nxt}, {loop['ub']}")
        with _induction_at(lw, self.casts, nxt):
            load_for_staged(lw, tile, into=self.loaded, guard=more, prefetch=True)


def prefetch_loads(lw: KernelLowering, loop: Operation, lb: str, ub: str) -> None:
    """Issue, before ``loop``, the loads of its first iteration's staged copies, where they can run an
    iteration early: a ``tiled_load`` in the body whose tile is copied by the staging store
    (:func:`~tile_lsp.codegen.ops_memory.deferred_copy`), of a view made outside the loop, at
    coordinates made outside it or the induction variable itself, with a token that orders it after
    nothing; and a body that writes no memory (the loads then read what they would have read in their
    iteration).  The loads count for the ``tiled_load`` (``.loc``, Show PTX's counts).  The staging store
    takes those registers, then loads the next iteration's (:meth:`Prefetch.store`): the global
    load's latency overlaps an iteration's work instead of waiting at its MMA.  Under the predicate
    ``lb < ub``.

    The registers stay live through the whole loop, so the copies prefetched, in body order, take
    at most a quarter of the registers a thread of this CTA size may have beyond
    :data:`PREFETCH_FLOOR` (65,536 a CTA, 255 a thread: none in CTAs of 512 threads or more, 31 in
    smaller ones); a copy that may take vectors prefetches only those (one register for 2 or 4
    elements), its element fallback copying in its iteration."""
    block = loop.regions[0].blocks[0]
    if loop.operands[0].type.element.width != 32 or any(_writes_global(o) for o in loop.walk()):
        return
    iv = block.arguments[0]
    budget = max(0, min(255, 65536 // lw.threads) - PREFETCH_FLOOR) // 4
    first = None
    for op in block.operations:
        if op.name != "nv_tileas.tiled_load" or any(after_access(t) for t in op.operand_group("token")):
            continue
        view = op.operand_group("view")[0]
        if defined_inside(view, loop) or not isinstance(lw.values.get(id(view)), TileViewValue):
            continue
        casts = []
        for c in op.operand_group("coords"):
            d = c.defining_op
            if d is not None and d.name == "arith.index_cast" and d.operands[0] is iv:
                casts.append(c)
            elif defined_inside(c, loop):
                break
        else:
            here, lw.f.loc = lw.f.loc, lw.loc_of(op)
            try:
                with _induction_at(lw, casts, lb):
                    tile = deferred_copy(lw, op)
                    if tile is None:
                        continue
                    if vector_copy_applies(tile.view, tile.shape, tile.elem, tile.sem):
                        cost = lw.slots(tile.n * storage_bytes(tile.elem) // VECTOR_BYTES) * 4
                    else:
                        cost = lw.slots(tile.n)
                    if cost > budget:
                        continue
                    budget -= cost
                    if first is None:
                        first = lw.f.reg("pred")
                        cmp = "u" if loop.attr("unsignedCmp") is not None else "s"
                        lw.f.emit(f"setp.lt.{cmp}32 {first}, {lb}, {ub}")
                    prefetched = load_for_staged(lw, tile, guard=first, prefetch=True)
                    lw.prefetched[id(_staging_store(op))] = Prefetch(prefetched, casts)
            finally:
                lw.f.loc = here


@contextmanager
def _induction_at(lw: KernelLowering, casts: list, reg: str):
    """Bind the ``index_cast`` values ``casts`` of a loop's induction variable to b32 register ``reg``
    (the first iteration's or the next one's) for the loads emitted in the block; restored after."""
    saved = {id(c): lw.values.get(id(c)) for c in casts}
    for c in casts:
        lw.set(c, TileValue((), T.IntegerType(32), [reg]))
    try:
        yield
    finally:
        for c in casts:
            if saved[id(c)] is None:
                lw.values.pop(id(c), None)
            else:
                lw.values[id(c)] = saved[id(c)]


def _staging_store(op: Operation) -> Operation:
    """The ``tiled_store`` that stages ``tiled_load`` op's tile (through reshapes:
    :func:`~tile_lsp.codegen.ops_memory.staged_buffer`)."""
    v = op.results[0]
    while v.uses[0].owner.name == "cuda_tile.reshape":
        v = v.uses[0].owner.results[0]
    return v.uses[0].owner
