"""Staged copies that a ``for`` loop moves one iteration ahead: a two-stage ``cp.async`` pipeline,
or a software prefetch through registers.

A K loop (or attention's K/V loop) copies its MMA operands from global to shared memory at the
staging store before its MMA (:func:`~tile_lsp.codegen.ops_memory.copy_to_staged`), so each
iteration waits there for its global loads.  Where it cannot change what is read, the loop issues
the first iteration's copies before it, and each staging store issues the next iteration's
(:func:`prefetch_loads`): the latency of the loads overlaps an iteration's work.

- **Two stages of** ``cp.async`` (sm_80 and newer, copies in 16-byte vectors with zero padding:
  :class:`AsyncPrefetch`).  Every shared-memory address in the loop body is taken from the base of
  the iteration's *stage*, the first one (``KernelLowering.first_stage_addr``) in even iterations
  and a copy of the whole shared-memory layout above it in odd ones (``second_stage_addr``), so
  the body's offsets and swizzles stay what they are.  Iteration ``i`` issues the copies of
  iteration ``i + 1`` into the other stage, ``cp.async.commit_group``, and waits with
  ``cp.async.wait_group G`` (``G`` the loop's pipelined copies) for its own, issued by the
  iteration before: PTX ISA "cp.async", "cp.async.wait_group"; the pipeline of CUTLASS's
  ``MmaMultistage`` with two stages.  The pinned buffers (staged before the loop) are copied into
  the second stage first.  No registers hold the tiles in flight.
- **Registers** (older targets, or a copy that cannot take ``cp.async``: :class:`Prefetch`): each
  staging store stores the registers loaded by the iteration before, then loads the next
  iteration's tile into them.  PTX registers keep their values across the back edge; their count
  is bounded (:data:`PREFETCH_FLOOR`).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from tile_lsp.analysis.ir.core import Operation
from tile_lsp.codegen.lower import KernelLowering, after_access
from tile_lsp.codegen.ops_memory import (VECTOR_BYTES, LoadedCopy, async_copy_applies, copy_elements,
                                         copy_vectors_async, deferred_copy, load_for_staged, staged_buffer,
                                         staged_tile_of, store_loaded, vector_copy_applies, vectors_aligned)
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
        store_loaded(lw, tile, buf, self.loaded)
        nxt, more = _next_iteration(lw)
        with _induction_at(lw, self.casts, nxt):
            load_for_staged(lw, tile, into=self.loaded, guard=more, prefetch=True)


def _next_iteration(lw: KernelLowering) -> tuple[str, str]:
    """(b32 ``iv + step``, predicate ``iv + step < ub``) of the innermost loop of ``lw``: where the
    next iteration's copies go and whether it comes."""
    f = lw.f
    loop = lw.loop_stack[-1]
    nxt, more = f.reg("b32"), f.reg("pred")
    f.emit(f"add.s32 {nxt}, {loop['iv']}, {loop['step']}")
    f.emit(f"setp.lt.{loop['cmp']}32 {more}, {nxt}, {loop['ub']}")
    return nxt, more


@dataclass
class AsyncPrefetch:
    """A staged copy that its ``for`` loop moves by ``cp.async`` into the other stage an iteration
    ahead (module docstring): the body's ``index_cast`` values of the induction variable
    (``casts``), the uniform predicate under which 16-byte vectors apply (``aligned``, loop
    invariant; where it fails each iteration copies its elements itself), and the loop's number of
    such copies (``groups``: each commits one group an iteration)."""

    casts: list
    aligned: str
    groups: int = 1

    def store(self, lw: KernelLowering, tile: GlobalTile, buf: StagedTile) -> None:
        """The staging store: this iteration's tile is in this stage already (the previous iteration's
        copy) where the vectors apply, else its elements are copied now; then the next iteration's
        copy into the other stage, under ``iv + step < ub``, and the wait for this iteration's.  No
        barrier."""
        f = lw.f
        done = f.label("copied_ahead")
        f.emit(f"@{self.aligned} bra.uni {done}")
        copy_elements(lw, tile, buf)
        f.place(done)
        nxt, more = _next_iteration(lw)
        f.emit(f"and.pred {more}, {more}, {self.aligned}")
        with lw.in_stage(lw.loop_stack[-1]["other_stage"]), _induction_at(lw, self.casts, nxt):
            copy_vectors_async(lw, tile, buf, more)
        f.emit(f"cp.async.wait_group {self.groups}")


def _copy_pinned_to_second_stage(lw: KernelLowering) -> None:
    """The pinned buffers (below the scratch: ``lw.pinned`` bytes, a multiple of 128) into the second
    stage, 16 bytes a thread at a time, between two barriers: what was staged before the loop is
    complete and visible first, and no thread writes either stage before the copy is done."""
    f = lw.f
    f.barrier()
    src, dst = lw.first_stage_addr(), lw.second_stage_addr()
    chunks = lw.pinned // VECTOR_BYTES
    at, to = f.reg("b32"), f.reg("b32")
    f.emit(f"mad.lo.s32 {at}, {lw.tid}, {VECTOR_BYTES}, {src}")
    f.emit(f"mad.lo.s32 {to}, {lw.tid}, {VECTOR_BYTES}, {dst}")
    for s in range(-(-chunks // lw.threads)):
        words = [f.reg("b32") for _ in range(4)]
        guard = ""
        if (s + 1) * lw.threads > chunks:
            p = f.reg("pred")
            f.emit(f"setp.lt.u32 {p}, {lw.tid}, {chunks - s * lw.threads}")
            guard = f"@{p} "
        offset = s * lw.threads * VECTOR_BYTES - lw.pinned
        f.emit(f"{guard}ld.shared.v4.b32 {{{', '.join(words)}}}, [{at}+{offset}]")
        f.emit(f"{guard}st.shared.v4.b32 [{to}+{offset}], {{{', '.join(words)}}}")
    f.barrier()


def _candidates(lw: KernelLowering, loop: Operation) -> list:
    """``(tiled_load op, its induction casts)`` of ``loop``'s body whose staged copy may move an
    iteration ahead (:func:`prefetch_loads`), staged in the body's own block."""
    block = loop.regions[0].blocks[0]
    if loop.operands[0].type.element.width != 32 or any(_writes_global(o) for o in loop.walk()):
        return []
    iv = block.arguments[0]
    found = []
    for op in block.operations:
        if op.name != "nv_tileas.tiled_load" or any(after_access(t) for t in op.operand_group("token")):
            continue
        # staged in the body itself: a staging store under an `if` would not run every iteration
        if staged_buffer(op) is None or _staging_store(op).parent is not block:
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
            found.append((op, casts))
    return found


def prefetch_loads(lw: KernelLowering, loop: Operation, lb: str, ub: str) -> bool:
    """Issue, before ``loop``, the loads of its first iteration's staged copies, where they can run an
    iteration early: a ``tiled_load`` in the body whose tile is copied by the staging store
    (:func:`~tile_lsp.codegen.ops_memory.deferred_copy`), of a view made outside the loop, at
    coordinates made outside it or the induction variable itself, with a token that orders it after
    nothing; and a body that writes no memory (the loads then read what they would have read in their
    iteration).  The loads count for the ``tiled_load`` (``.loc``, Show PTX's counts).  Under the
    predicate ``lb < ub``.  Returns whether the loop pipelines copies through two stages: the caller
    then gives the body the iteration's stage (``lw.shared_base``) and the other one
    (``"other_stage"`` of its ``loop_stack`` entry), and swaps them at the back edge.

    Where :func:`~tile_lsp.codegen.ops_memory.async_copy_applies` (and not inside another pipelined
    loop), the copy goes by ``cp.async`` into the first stage, and each staging store issues the
    next iteration's (:class:`AsyncPrefetch`).  Otherwise the staging store takes the registers
    loaded before the loop, then loads the next iteration's (:meth:`Prefetch.store`): the global
    load's latency overlaps an iteration's work instead of waiting at its MMA.
    Those registers stay live through the whole loop, so the copies prefetched, in body order, take
    at most a quarter of the registers a thread of this CTA size may have beyond
    :data:`PREFETCH_FLOOR` (65,536 a CTA, 255 a thread: none in CTAs of 512 threads or more, 31 in
    smaller ones); a copy that may take vectors prefetches only those (one register for 2 or 4
    elements), its element fallback copying in its iteration."""
    budget = max(0, min(255, 65536 // lw.threads) - PREFETCH_FLOOR) // 4
    first = None
    found = []  # (tiled_load, induction casts, its copy): a GlobalTile resolves its indices when emitted
    here = lw.f.loc
    for op, casts in _candidates(lw, loop):
        lw.f.loc = lw.loc_of(op)  # the copy's .loc (Show PTX's counts)
        tile = deferred_copy(lw, op)
        if tile is not None:
            found.append((op, casts, tile))
    lw.f.loc = here
    # the copies cp.async moves (module docstring): not inside another pipelined loop
    pipelined = [op for op, _, tile in found if async_copy_applies(lw, tile)] \
        if lw.pipelines and lw.shared_base is None else []
    if pipelined and lw.pinned:
        _copy_pinned_to_second_stage(lw)
    staged: list[AsyncPrefetch] = []
    for op, casts, tile in found:
        here, lw.f.loc = lw.f.loc, lw.loc_of(op)
        try:
            with _induction_at(lw, casts, lb):
                if first is None:  # lb < ub, once
                    first = lw.f.reg("pred")
                    cmp = "u" if loop.attr("unsignedCmp") is not None else "s"
                    lw.f.emit(f"setp.lt.{cmp}32 {first}, {lb}, {ub}")
                if op in pipelined:  # async_copy_applies: no compile-time stride rules the vectors out
                    aligned = vectors_aligned(lw, tile.view, storage_bytes(tile.elem))
                    guard = lw.f.reg("pred")
                    lw.f.emit(f"and.pred {guard}, {first}, {aligned}")
                    buf = staged_tile_of(staged_buffer(op))
                    with lw.in_stage(lw.first_stage_addr()):
                        lw.reserve(buf.end)  # both stages hold it
                    copy_vectors_async(lw, tile, buf, guard)
                    staged.append(AsyncPrefetch(casts, aligned))
                    lw.prefetched[id(_staging_store(op))] = staged[-1]
                    continue
                if vector_copy_applies(tile.view, tile.shape, tile.elem, tile.sem):
                    cost = lw.slots(tile.n * storage_bytes(tile.elem) // VECTOR_BYTES) * 4
                else:
                    cost = lw.slots(tile.n)
                if cost > budget:
                    continue
                budget -= cost
                prefetched = load_for_staged(lw, tile, guard=first, prefetch=True)
                lw.prefetched[id(_staging_store(op))] = Prefetch(prefetched, casts)
        finally:
            lw.f.loc = here
    for s in staged:
        s.groups = len(staged)
    return bool(staged)


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
