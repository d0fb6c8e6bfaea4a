"""Tiles kept in the MMA fragment layout from one tensor-core MMA to the next (FlashAttention-2's layout).

The distribution of :mod:`tile_lsp.codegen.ptx` (slot ``s`` of thread ``t`` holds element ``s * T +
t``) is not the layout ``mma.sync`` leaves D in.  Attention computes ``S = Q K^T`` on the tensor cores,
then a masked, scaled softmax of S along its rows, then ``P V``: in the distribution, S goes through
shared memory after the MMA, each row statistic (max, sum) through a cross-warp reduction and back
through a broadcast, and P through shared memory again as the next MMA's A.  FlashAttention-2 keeps
all of it in the registers where the MMA leaves S: a thread holds two rows of each 16-row block of
its warp, so the row statistics need two warp shuffles, and P's registers are the next MMA's A
fragments as they are.

``tile-assign-layouts`` plans this per entry (:func:`plan_fragment_layouts`), and marks the ops
whose results take another layout with ``tile_lsp.fragment``:

``"tile"``
    An ``[M x N]`` tile in *row-blocked* MMA fragments (:class:`~tile_lsp.codegen.mma_fragments.FragmentTile`
    with ``blocked``): the M/16 blocks of 16 rows are split evenly over the warps, warp ``w`` holding
    every 16x8 tile of its blocks (``M / 16`` a multiple of the warps).  Results of a tensor-core MMA
    whose C is a splat constant (S), of the element-wise ops (:data:`SLOT_LOCAL`) of such tiles with
    each other, with uniform tiles, with row broadcasts and with index expressions, and of the MMA
    that carries a loop's accumulator.
``"rows"``
    An ``M`` or ``M x 1`` vector held as the rows of those fragments (:class:`RowFragments`): the
    result of a ``reduce`` of a ``"tile"`` along its last dimension with a commutative body, of a
    ``reshape`` of one, of element-wise ops of them with uniform tiles, and loop-carried values
    (``tile_lsp.fragment_rows`` on the ``for``: indices of the iteration values) whose initial value
    is uniform and whose next value is ``"rows"``.
``"row_broadcast"``
    A ``broadcast`` of a ``"rows"`` vector to ``M x N``: no code; the element-wise op that reads it
    takes each register's row value (:class:`RowBroadcast`).
``"index"`` / ``"remat"``
    A tile computed from ``iota`` and uniform tiles alone (attention's causal mask): an op that
    reads it in fragments recomputes the elements it needs from their coordinates (:func:`remat`).
    ``"remat"`` where nothing else reads it, so that it is never lowered in the distribution.

An MMA whose A is a ``"tile"`` of 16-bit floats (P, after ``ftof``) and whose C is a loop's
accumulator carried in fragments has ``tile_lsp.operand_a = "fragments"``: A is not staged in shared
memory (``convert-to-nv-tileas``), its A fragments are P's registers packed in pairs
(:func:`~tile_lsp.codegen.mma_fragments.mma_into_fragments`), and the loop carries that accumulator
row-blocked (``tile_lsp.fragments_blocked`` on the ``for``).

Uniform tiles (every element equal: splat constants, broadcasts of one element, element-wise ops of
uniform tiles) need no layout: a thread's first register holds the value.  Every other op reads a
fragment value converted back to the distribution, through shared memory
(:data:`~tile_lsp.codegen.lower.OPERAND_HOOKS`).

Sources: PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point type" (C/D element ``i``
of a 16x8 tile in lane ``4g + q`` at row ``g + 8 (i >> 1)``, column ``2q + (i & 1)``; A register
``i`` holds row ``g + 8 (i & 1)``, columns ``2q + 8 (i >> 1)`` and the next), Dao, "FlashAttention-2"
(2023), section 3.
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation, Value
from tile_lsp.codegen.lower import OP_HOOKS, OPERAND_HOOKS, KernelLowering
from tile_lsp.codegen.mma_fragments import (MMA_OPS, MMA_SYNC_SMEM_LIMIT, FragmentTile, RowBroadcast, RowFragments,
                                            broadcast_rows, carried_in_fragments, column_register,
                                            fragment_shape_fits, from_rows, mma_shape, relayout, row_register,
                                            row_scale, scaled_in_fragments, to_fragments, to_rows)
from tile_lsp.codegen.ptx import LoweringError, TileValue, num_elements, reg_class
from tile_lsp.codegen.reductions import commutative_combiner
from tile_lsp.dialect import types as T

#: The element-wise ops whose lowering works register by register (``codegen/ops_elementwise.py``), so
#: that it runs unchanged on registers in another layout, all operands in the same one.
SLOT_LOCAL = frozenset({
    "absf", "absi", "addf", "addi", "andi", "atan", "atan2", "bitcast", "ceil", "cmpf", "cmpi", "cos", "cosh",
    "divf", "divi", "exp", "exp2", "exti", "floor", "fma", "fpowf", "fpowi", "ftof", "ftoi", "itof", "log",
    "log2", "maxf", "maxi", "minf", "mini", "mulf", "mulhii", "muli", "negf", "negi", "ori", "pow", "remf",
    "remi", "rsqrt", "select", "shli", "shri", "sin", "sinh", "sqrt", "subf", "subi", "tan", "tanh",
    "trunci", "xori"})

#: ``tile_lsp.fragment`` marks (module docstring)
TILE, ROWS, ROW_BROADCAST, INDEX, REMAT = "tile", "rows", "row_broadcast", "index", "remat"
_UNIFORM, _SCALED = "uniform", "scaled"
I32 = T.IntegerType(32)
F32 = T.FloatType("f32")


# ------------------------------------------------------------------ geometry


def row_blocked_fits(m: int, n: int, threads: int) -> bool:
    """Whether an ``M x N`` tile fits the row-blocked fragment layout in ``threads`` threads: M % 16 ==
    N % 8 == 0, N / 8 a power of two, and the M / 16 row blocks split evenly over the warps."""
    warps = threads // 32
    return bool(warps) and m % 16 == 0 and n % 8 == 0 and (n // 8) & (n // 8 - 1) == 0 \
        and (m // 16) % warps == 0


def _shape(v: Value) -> tuple[int, ...] | None:
    t = v.type
    if not isinstance(t, T.TileType) or any(not isinstance(d, int) for d in t.shape):
        return None
    return tuple(int(d) for d in t.shape)


def _tile_shape_ok(v: Value, threads: int) -> bool:
    s = _shape(v)
    return s is not None and len(s) == 2 and row_blocked_fits(s[0], s[1], threads)


def _rows_shape_ok(v: Value, threads: int) -> bool:
    s = _shape(v)
    return s is not None and (len(s) == 1 or (len(s) == 2 and s[1] == 1)) and row_blocked_fits(s[0], 8, threads)


def fragment_layout_text(shape: tuple[int, ...], threads: int, rows: bool) -> str:
    """The CuTe thread-value layout (thread, register) -> row-major element index of a row-blocked
    ``M x N`` fragment tile, or (``rows``) of an ``M`` vector held as its rows: threads ``(q, g, warp)``
    = ``(4, 8, W)``; registers ``(column pair, half, tile column, row block)`` or ``(half, row block)``."""
    warps = threads // 32
    m = shape[0]
    blocks = m // 16 // warps
    if rows:
        return f"((4,8,{warps}),(2,{blocks})):((0,1,{16 * blocks}),(8,16))"
    n = shape[1]
    return f"((4,8,{warps}),(2,2,{n // 8},{blocks})):((2,{n},{16 * n * blocks}),(1,{8 * n},8,{16 * n}))"


# ------------------------------------------------------------------ the plan


def splat_bits(v: Value, widths: tuple[int, ...] = (16, 32, 64)) -> int | None:
    """The bits of every element of ``v`` when a ``constant`` op defines it with one value throughout
    (an MMA's zero accumulator), for elements of one of ``widths`` bits; else ``None`` (also for a
    literal the verifier reports: the lowering does not run then)."""
    from tile_lsp.analysis.ir.numbers import dense_raw_data
    op = v.defining_op
    if op is None or op.short_name != "constant" or not isinstance(v.type, T.TileType):
        return None
    w = T.bit_width(v.type.element) or 0
    if w not in widths:
        return None
    try:
        raw = dense_raw_data(op.attr("value"), v.type)
    except (ValueError, TypeError):
        return None
    esz = w // 8
    values = {raw[i:i + esz] for i in range(0, len(raw), esz)}
    return int.from_bytes(values.pop(), "little") if len(values) == 1 else None


#: element widths whose splat constants the plan takes for uniform tiles
SPLAT_WIDTHS = (8, 16, 32, 64)


def _splat(v: Value) -> bool:
    """Whether a ``constant`` op defines ``v`` with one value throughout."""
    return splat_bits(v, SPLAT_WIDTHS) is not None


def _unit_reshape(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    """Whether a reshape from ``src`` to ``dst`` only adds or removes dimensions of size 1."""
    return [d for d in src if d != 1] == [d for d in dst if d != 1]


def is_uniform(v: Value) -> bool:
    """Whether every element of ``v`` is equal: one element, a splat constant, a broadcast of one
    element, a reshape or element-wise op of uniform tiles.  A thread's first register of the lowered
    tile then holds the value, whatever the layout."""
    if not isinstance(v.type, T.TileType):
        return False
    shape = _shape(v)
    if shape is not None and num_elements(shape) == 1:
        return True
    op = v.defining_op
    if op is None or shape is None:
        return False
    short = op.short_name
    if short == "constant":
        return _splat(v)
    if short in ("broadcast", "reshape"):
        return is_uniform(op.operands[0])
    if op.dialect == "cuda_tile" and short in SLOT_LOCAL:
        return all(is_uniform(x) for x in op.operands if isinstance(x.type, T.TileType))
    return False


class _Planner:
    """One entry's plan (module docstring): ``kind`` per value id, the marks to write."""

    def __init__(self, entry: Operation, threads: int, sm: int, max_smem: int):
        self.entry, self.threads, self.sm, self.max_smem = entry, threads, sm, max_smem
        self.kind: dict[int, str] = {}
        self.a_registers: set[int] = set()
        #: element-wise ops and broadcasts left in the distribution: nothing reads them in fragments
        self.dropped: set[int] = set()

    # -- candidates -----------------------------------------------------------------------------
    def loops(self):
        return [op for op in self.entry.walk() if op.name == "cuda_tile.for" and op.regions
                and op.regions[0].blocks]

    def carried_tiles(self, loop: Operation) -> list[int]:
        """Iteration values the loop carries in fragments (:func:`carried_in_fragments`) that fit rows."""
        out = []
        for i in range(len(loop.operands) - 3):
            if carried_in_fragments(loop, i, self.threads, self.sm, self.max_smem) \
                    and _tile_shape_ok(loop.results[i], self.threads):
                out.append(i)
        return out

    def rows_candidates(self, loop: Operation) -> list[int]:
        """Iteration values that may be carried as rows: an M or M x 1 tile with a uniform initial value."""
        return [i for i in range(len(loop.operands) - 3)
                if _rows_shape_ok(loop.results[i], self.threads) and is_uniform(loop.operands[3 + i])]

    def seed(self, op: Operation) -> bool:
        """An MMA outside a K loop whose D may stay in fragments: f16/bf16 A and B, a splat f32 C, the
        tensor-core path of ``ops_shape._mma_sync`` and a row-blocked D."""
        if op.name not in MMA_OPS or len(op.operands) != 3 or not _splat(op.operands[2]):
            return False
        shapes = [_shape(v) for v in op.operands]
        if None in shapes or len(shapes[0]) != 2 or len(shapes[1]) != 2:
            return False
        (m, k), (_, n) = shapes[0], shapes[1]
        ea, eb, ec = (v.type.element for v in op.operands)
        mma = mma_shape(ea, eb, ec, self.sm)
        if mma is None or mma.k != 16 or ec != F32 or not row_blocked_fits(m, n, self.threads):
            return False
        return fragment_shape_fits(m, n, k, self.threads) \
            and (m * k + k * n) * 2 + m * n * 4 + 16 <= MMA_SYNC_SMEM_LIMIT

    # -- kinds ----------------------------------------------------------------------------------
    def of(self, v: Value) -> str | None:
        k = self.kind.get(id(v))
        if k is None and is_uniform(v):
            return _UNIFORM
        return k

    def forward(self, seeds: set[int], carried: dict[int, set[int]], rows: dict[int, set[int]]) -> None:
        """Kinds of every value, in program order."""
        self.kind = {}
        self.a_registers = set()
        for op in self.entry.walk():
            if op is self.entry:
                continue
            if op.name == "cuda_tile.for" and op.regions and op.regions[0].blocks:
                args = op.regions[0].blocks[0].arguments
                for i in carried.get(id(op), ()):
                    self.kind[id(args[i + 1])] = self.kind[id(op.results[i])] = TILE
                for i in rows.get(id(op), ()):
                    self.kind[id(args[i + 1])] = self.kind[id(op.results[i])] = ROWS
                continue
            k = None if id(op) in self.dropped else self.op_kind(op, seeds)
            if k is not None and op.results:
                self.kind[id(op.results[0])] = k

    def op_kind(self, op: Operation, seeds: set[int]) -> str | None:
        short = op.short_name
        if op.name in MMA_OPS and len(op.operands) == 3:
            shapes = [_shape(v) for v in op.operands]
            if self.of(op.operands[2]) in (TILE, _SCALED) and None not in shapes and len(shapes[0]) == 2 \
                    and mma_shape(op.operands[0].type.element, op.operands[1].type.element,
                                  op.operands[2].type.element, self.sm) is not None:  # C in fragments: so is D
                a = op.operands[0]
                if self.of(a) == TILE and getattr(a.type.element, "name", None) in ("f16", "bf16") \
                        and mma_shape(a.type.element, op.operands[1].type.element, F32, self.sm) is not None:
                    self.a_registers.add(id(op))
                return TILE
            return TILE if id(op) in seeds else None
        if op.dialect != "cuda_tile" or not op.results:
            return None
        v = op.results[0]
        if short == "iota":
            # i32: remat takes the coordinate registers (b32) as its elements
            return INDEX if len(_shape(v) or ()) == 1 and v.type.element == I32 else None
        if short in ("broadcast", "reshape"):
            src = self.of(op.operands[0])
            shape, src_shape = _shape(v), _shape(op.operands[0])
            if src is None or shape is None or src_shape is None:
                return None
            if short == "broadcast" and src == ROWS and len(shape) == 2 and src_shape == (shape[0], 1) \
                    and _tile_shape_ok(v, self.threads):
                return ROW_BROADCAST
            if short == "reshape" and src == ROWS and _rows_shape_ok(v, self.threads) and shape[0] == src_shape[0]:
                return ROWS
            if src == INDEX and (short == "broadcast" or _unit_reshape(src_shape, shape)):
                return INDEX
            return None
        if short == "reduce":
            if len(op.operands) == 1 and self.of(op.operands[0]) == TILE and op.attr("dim") is not None \
                    and op.attr("dim").value == 1 and commutative_combiner(op) and _rows_shape_ok(v, self.threads):
                return ROWS
            return None
        if short not in SLOT_LOCAL:
            return None
        if short == "mulf":
            hit = row_scale(op)
            if hit is not None and self.of(op.operands[hit[0]]) == TILE \
                    and self.of(hit[1].results[0]) == ROW_BROADCAST:
                return _SCALED
        kinds = [self.of(x) for x in op.operands if isinstance(x.type, T.TileType)]
        if any(k in (TILE, ROW_BROADCAST) for k in kinds) and _tile_shape_ok(v, self.threads) \
                and all(k in (TILE, ROW_BROADCAST, _UNIFORM, INDEX) for k in kinds):
            return TILE
        if ROWS in kinds and all(k in (ROWS, _UNIFORM) for k in kinds) and _rows_shape_ok(v, self.threads):
            return ROWS
        if INDEX in kinds and all(k in (INDEX, _UNIFORM) for k in kinds):
            return INDEX
        return None

    # -- uses -----------------------------------------------------------------------------------
    def reads_in_fragments(self, user: Operation) -> bool:
        """Whether ``user`` reads its fragment-layout operands as they are, in the row-blocked layout:
        an element-wise op, reduce or broadcast of the plan, or an MMA taking A from registers (an MMA
        that only takes C in fragments does not need the rows blocked)."""
        if id(user) in self.a_registers:
            return True
        k = self.kind.get(id(user.results[0])) if user.results else None
        return k in (TILE, ROWS, ROW_BROADCAST, _SCALED) and user.name not in MMA_OPS

    def run(self) -> None:
        by_id = {id(op): op for op in self.entry.walk()}
        seeds = {key for key, op in by_id.items() if self.seed(op)}
        loops = self.loops()
        carried = {id(lp): set(self.carried_tiles(lp)) for lp in loops}
        rows = {id(lp): set(self.rows_candidates(lp)) for lp in loops}
        for _ in range(32):
            self.forward(seeds, carried, rows)
            changed = False
            for s in list(seeds):
                op = by_id[s]
                if not any(self.reads_in_fragments(u.owner) for u in op.results[0].uses):
                    seeds.discard(s)
                    changed = True
            for op in self.entry.walk():  # computed in fragments only to go back to the distribution
                k = self.kind.get(id(op.results[0])) if op.results and op is not self.entry else None
                if (k == ROW_BROADCAST or (k == TILE and op.short_name in SLOT_LOCAL)) and not any(
                        self.reads_in_fragments(u.owner) or u.owner.short_name == "continue"
                        for u in op.results[0].uses):
                    self.dropped.add(id(op))
                    changed = True
            for lp in loops:
                term = lp.regions[0].blocks[0].operations[-1]
                for i in list(rows[id(lp)]):
                    if term.short_name != "continue" or self.kind.get(id(term.operands[i])) != ROWS:
                        rows[id(lp)].discard(i)
                        changed = True
                for i in list(carried[id(lp)]):
                    arg = lp.regions[0].blocks[0].arguments[i + 1]
                    users = [u.owner for u in arg.uses] + [u.owner for u in lp.results[i].uses]
                    if not any(self.reads_in_fragments(u) for u in users if u.short_name != "continue"):
                        carried[id(lp)].discard(i)
                        changed = True
            if not changed:
                break
        self.carried, self.rows = carried, rows

    def index_uses(self) -> tuple[set[int], set[int]]:
        """Index-expression ops read in fragments (by an element-wise op in fragments, which recomputes
        what it reads, or by such an index op), and those of them that nothing else reads."""
        read: set[int] = set()
        only: set[int] = set()
        for op in reversed(list(self.entry.walk())):
            if not op.results or self.kind.get(id(op.results[0])) != INDEX:
                continue
            users = [u.owner for r in op.results for u in r.uses]
            remats = [id(u) in read or (bool(u.results) and self.kind.get(id(u.results[0])) == TILE
                                        and u.short_name in SLOT_LOCAL) for u in users]
            if any(remats):
                read.add(id(op))
                if all(id(u) in only or (r and id(u) not in read) for u, r in zip(users, remats)):
                    only.add(id(op))
        return read, only


def _has_mma(entry: Operation) -> bool:
    """Whether ``entry`` has an MMA op: without one, the plan marks nothing (no tile in fragments)."""
    return any(op.name in MMA_OPS for op in entry.walk())


def fragments_apply(entry: Operation, threads: int, sm: int, max_smem: int) -> bool:
    """Whether the plan keeps some MMA's D in fragments in a CTA of ``threads`` (nothing marked)."""
    if sm < 80 or threads < 32 or not _has_mma(entry):
        return False
    p = _Planner(entry, threads, sm, max_smem)
    p.run()
    return any(p.kind.get(id(op.results[0])) == TILE for op in entry.walk() if op.name in MMA_OPS and p.seed(op))


def plan_fragment_layouts(entry: Operation, threads: int, sm: int, max_smem: int) -> int:
    """Plan ``entry`` (module docstring) and write its marks; returns the number of ops marked.

    Marks: ``tile_lsp.fragment`` on ops, with ``tile_lsp.slots`` and ``tile_lsp.layout`` (the CuTe
    layout, :func:`fragment_layout_text`) for ``"tile"`` and ``"rows"``; ``tile_lsp.operand_a =
    "fragments"`` on MMAs that take A from registers; ``tile_lsp.fragment_rows`` and
    ``tile_lsp.fragments_blocked`` on ``for`` ops."""
    if sm < 80 or threads < 32 or not _has_mma(entry):
        return 0
    p = _Planner(entry, threads, sm, max_smem)
    p.run()
    read, only = p.index_uses()
    marked = 0
    for op in entry.walk():
        if op is entry:
            continue
        if op.name == "cuda_tile.for" and id(op) in p.rows:
            if p.rows[id(op)]:
                op.attributes["tile_lsp.fragment_rows"] = A.ArrayAttr(
                    [A.IntegerAttr(i, I32) for i in sorted(p.rows[id(op)])])
            if p.carried[id(op)]:  # with those tile-assign-layouts blocked for their loads
                op.attributes["tile_lsp.fragments_blocked"] = A.ArrayAttr(
                    [A.IntegerAttr(i, I32) for i in sorted(p.carried[id(op)]
                                                         | loop_marks(op, "tile_lsp.fragments_blocked"))])
            continue
        if not op.results:
            continue
        k = p.kind.get(id(op.results[0]))
        if k == INDEX and id(op) not in read:
            continue
        if k == INDEX and id(op) in only:
            k = REMAT
        if k not in (TILE, ROWS, ROW_BROADCAST, INDEX, REMAT):
            continue
        op.attributes["tile_lsp.fragment"] = A.StringAttr(k)
        marked += 1
        shape = _shape(op.results[0])
        if k in (TILE, ROWS) and shape is not None:
            regs = num_elements(shape) // threads if k == TILE else 2 * (shape[0] // 16 // (threads // 32))
            op.attributes["tile_lsp.slots"] = A.IntegerAttr(regs, I32)
            op.attributes["tile_lsp.layout"] = A.StringAttr(fragment_layout_text(shape, threads, k == ROWS))
        if id(op) in p.a_registers:
            op.attributes["tile_lsp.operand_a"] = A.StringAttr("fragments")
    return marked


def mark(op: Operation | None) -> str | None:
    """The ``tile_lsp.fragment`` mark of ``op`` (``None`` without one)."""
    a = op.attr("tile_lsp.fragment") if isinstance(op, Operation) else None
    return a.value if isinstance(a, A.StringAttr) else None


def a_in_registers(op: Operation) -> bool:
    """Whether MMA ``op`` takes A from registers in fragments (``tile_lsp.operand_a``)."""
    a = op.attr("tile_lsp.operand_a")
    return isinstance(a, A.StringAttr) and a.value == "fragments"


def loop_marks(loop: Operation, name: str) -> set[int]:
    """The indices in the ``for`` op's array attribute ``name`` (``tile_lsp.fragment_rows``, ...)."""
    a = loop.attr(name)
    return {x.value for x in a.elements} if isinstance(a, A.ArrayAttr) else set()


# ------------------------------------------------------------------ the emitter


def _tile_geometry(lw: KernelLowering, shape: tuple[int, ...]) -> FragmentTile:
    return FragmentTile(tuple(shape), F32, [""] * (num_elements(shape) // lw.threads), lw.threads // 32, True)


def tile_points(lw: KernelLowering, geometry: FragmentTile) -> list[tuple[str, str]]:
    """(row, column) b32 registers of each register of a row-blocked fragment tile in this thread."""
    return [(row_register(lw, geometry, j, i >> 1), column_register(lw, geometry, j, i & 1))
            for j in range(geometry.per_warp) for i in range(4)]


def _as_tile_view(lw: KernelLowering, v: Value, geometry: FragmentTile, points) -> TileValue:
    """Operand ``v`` of an element-wise op in row-blocked fragments, as registers in that layout."""
    x = lw.values.get(id(v))
    shape, elem = _shape(v), v.type.element
    count = len(geometry.regs)
    if isinstance(x, FragmentTile):
        if not x.blocked:
            x = relayout(lw, x, True)
        return TileValue(shape, elem, list(x.regs))
    if isinstance(x, RowBroadcast):
        tn = geometry.tiles_n
        return TileValue(shape, elem, [x.rows.regs[2 * (j // tn) + h] for j in range(geometry.per_warp)
                                       for h in (0, 0, 1, 1)])
    if mark(v.defining_op) in (INDEX, REMAT):
        return TileValue(shape, elem, remat(lw, v, points()))
    if isinstance(x, TileValue) and is_uniform(v):
        return TileValue(shape, elem, [x.regs[0]] * count)
    if isinstance(x, TileValue):  # not planned so: converted through shared memory
        return TileValue(shape, elem, list(to_fragments(lw, x, True).regs))
    raise LoweringError(f"internal: operand {v.name} has no registers in fragments")


def _as_rows_view(lw: KernelLowering, v: Value, count: int) -> TileValue:
    """Operand ``v`` of an element-wise op on :class:`RowFragments`, as registers in that layout."""
    x = lw.values.get(id(v))
    shape, elem = _shape(v), v.type.element
    if isinstance(x, RowFragments):
        return TileValue(shape, elem, list(x.regs))
    if isinstance(x, TileValue) and is_uniform(v):
        return TileValue(shape, elem, [x.regs[0]] * count)
    if isinstance(x, TileValue):
        return TileValue(shape, elem, list(to_rows(lw, x).regs))
    raise LoweringError(f"internal: operand {v.name} has no registers as fragment rows")


_MISSING = object()


def run_on_registers(lw: KernelLowering, op: Operation, handler, views: dict[int, TileValue],
                     count: int) -> list[TileValue]:
    """Run element-wise ``handler`` on ``op`` with its operands bound to ``views`` (operand index ->
    registers) and ``count`` registers a result; returns the results, and restores what the operands
    and results were bound to (an op lowered in the distribution keeps its registers there)."""
    saved = [(id(r), lw.values.get(id(r), _MISSING)) for r in op.results]
    for i, x in views.items():
        v = op.operands[i]
        saved.append((id(v), lw.values.get(id(v), _MISSING)))
        lw.values[id(v)] = x
    lw.forced_slots = count
    try:
        handler(lw, op)
        return [lw.values[id(r)] for r in op.results]
    finally:
        lw.forced_slots = None
        for key, x in reversed(saved):
            if x is _MISSING:
                lw.values.pop(key, None)
            else:
                lw.values[key] = x


def remat(lw: KernelLowering, v: Value, points: list[tuple]) -> list[str]:
    """Registers with the elements of index expression ``v`` (``iota``, uniform tiles, and broadcasts,
    unit reshapes and element-wise ops of them) at ``points`` (per register, its coordinates in
    ``v``'s shape: b32 registers or ints), computed here, once per point and block."""
    x = lw.values.get(id(v))
    if isinstance(x, TileValue) and is_uniform(v):
        return [x.regs[0]] * len(points)
    op = v.defining_op
    if op is None:
        raise LoweringError(f"internal: {v.name} is not an index expression")
    short = op.short_name
    missing = [p for p in dict.fromkeys(points) if (id(v), p) not in _block_remat(lw)]
    if missing:
        if short == "iota":
            regs = []
            for (c,) in missing:
                if isinstance(c, int):
                    r = lw.f.reg("b32")
                    lw.f.emit(f"mov.b32 {r}, {c}")
                    c = r
                regs.append(c)
        elif short == "broadcast":
            src = _shape(op.operands[0])
            regs = remat(lw, op.operands[0], [tuple(0 if src[d] == 1 else c for d, c in enumerate(p))
                                              for p in missing])
        elif short == "reshape":
            src = _shape(op.operands[0])
            regs = remat(lw, op.operands[0], [_unit_coords(p, _shape(v), src) for p in missing])
        elif short in SLOT_LOCAL:
            from tile_lsp.codegen.lower import HANDLERS
            views = {i: TileValue(_shape(o), o.type.element, remat(lw, o, missing))
                     for i, o in enumerate(op.operands) if isinstance(o.type, T.TileType)}
            regs = run_on_registers(lw, op, HANDLERS[short], views, len(missing))[0].regs
        else:
            raise LoweringError(f"internal: '{op.name}' is not an index expression")
        for p, r in zip(missing, regs):
            _block_remat(lw)[(id(v), p)] = r
    memo = _block_remat(lw)
    return [memo[(id(v), p)] for p in points]


def _block_remat(lw: KernelLowering) -> dict:
    return lw.once_in_block(("remat",), dict)


def _unit_coords(p: tuple, shape: tuple[int, ...], src: tuple[int, ...]) -> tuple:
    """Coordinates ``p`` in ``shape`` as coordinates in ``src`` (the same dimensions but those of size 1)."""
    kept = iter([c for c, d in zip(p, shape) if d != 1])
    return tuple(0 if d == 1 else next(kept) for d in src)


def reduce_rows(lw: KernelLowering, op: Operation, frag: FragmentTile) -> RowFragments:
    """``reduce`` of row-blocked fragments along their rows, with its commutative body: each thread
    folds the 2 x (N / 8) registers of each of its rows as a tree, then two ``shfl.sync.bfly`` steps
    (lane bits 0 and 1, the four lanes of a row) combine the threads' partials."""
    from tile_lsp.codegen.reductions import run_body, shuffle_register
    elem, cls = frag.elem, reg_class(frag.elem)

    def combine(x: str, y: str) -> str:
        acc = lw.f.reg(cls)
        lw.mov(cls, acc, x)
        run_body(lw, op, [acc], [y], [elem])
        return acc
    tn = frag.tiles_n
    parts = []
    for a in range(frag.per_warp // tn):
        for h in (0, 1):
            parts.append([frag.regs[4 * (a * tn + t) + 2 * h + e] for t in range(tn) for e in (0, 1)])
    while any(len(p) > 1 for p in parts):  # one tree level of every row at a time
        parts = [[combine(p[i], p[i + 1]) for i in range(0, len(p) - 1, 2)] + (p[-1:] if len(p) % 2 else [])
                 for p in parts]
    accs = [p[0] for p in parts]
    for lane in (1, 2):
        others = [shuffle_register(lw, x, cls, "bfly", lane) for x in accs]
        accs = [combine(x, y) for x, y in zip(accs, others)]
    return RowFragments(_shape(op.results[0]), elem, accs, frag.warps)


def _lower_in_fragments(lw: KernelLowering, op: Operation, handler) -> bool:
    """The :data:`~tile_lsp.codegen.lower.OP_HOOKS` entry: the ops the plan marked (module docstring)."""
    k = mark(op)
    if k is None:
        return False
    if k == REMAT:
        return True  # computed where read
    short = op.short_name
    x = lw.values.get(id(op.operands[0])) if op.operands else None
    if k == ROW_BROADCAST and isinstance(x, RowFragments):
        lw.set(op.results[0], RowBroadcast(x, _shape(op.results[0])))
        return True
    if k == ROWS and short == "reshape" and isinstance(x, RowFragments):
        lw.set(op.results[0], RowFragments(_shape(op.results[0]), x.elem, x.regs, x.warps))
        return True
    if k == ROWS and short == "reduce" and isinstance(x, FragmentTile) and x.blocked:
        lw.set(op.results[0], reduce_rows(lw, op, x))
        return True
    if op.dialect != "cuda_tile" or short not in SLOT_LOCAL or k not in (TILE, ROWS):
        return False
    out_shape = _shape(op.results[0])
    tiles = [i for i, v in enumerate(op.operands) if isinstance(v.type, T.TileType)]
    if k == TILE:
        geometry = _tile_geometry(lw, out_shape)
        pts: list = []

        def points():
            if not pts:
                pts.extend(tile_points(lw, geometry))
            return pts
        views = {i: _as_tile_view(lw, op.operands[i], geometry, points) for i in tiles}
        outs = run_on_registers(lw, op, handler, views, len(geometry.regs))
        for r, o in zip(op.results, outs):
            lw.set(r, FragmentTile(tuple(out_shape), o.elem, o.regs, geometry.warps, True))
        return True
    count = 2 * (out_shape[0] // 16 // (lw.threads // 32))
    views = {i: _as_rows_view(lw, op.operands[i], count) for i in tiles}
    outs = run_on_registers(lw, op, handler, views, count)
    for r, o in zip(op.results, outs):
        lw.set(r, RowFragments(tuple(out_shape), o.elem, o.regs, lw.threads // 32))
    return True


def _convert_rows(lw: KernelLowering, op: Operation, index: int, x) -> TileValue | None:
    """The :data:`~tile_lsp.codegen.lower.OPERAND_HOOKS` entry: :class:`RowFragments` and
    :class:`RowBroadcast` read by an op that does not take them, in the distribution."""
    if isinstance(x, RowFragments):
        if op.name in ("cuda_tile.continue", "cuda_tile.for") or mark(op) in (ROWS, ROW_BROADCAST):
            return None
        return from_rows(lw, x)
    if isinstance(x, RowBroadcast):
        if (mark(op) == TILE and op.short_name in SLOT_LOCAL) or scaled_in_fragments(op) is not None:
            return None  # read in fragments, or the row scale of an accumulator (mma_fragments.ScaledFragments)
        return broadcast_rows(lw, x)
    return None


OP_HOOKS.append(_lower_in_fragments)
OPERAND_HOOKS.append(_convert_rows)
