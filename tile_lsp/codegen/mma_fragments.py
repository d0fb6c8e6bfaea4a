"""MMA accumulators kept in the tensor cores' fragment layout across a ``for`` loop.

The distribution of :mod:`tile_lsp.codegen.ptx` (slot ``s`` of thread ``t`` holds
element ``s * T + t``) is not the layout ``mma.sync`` wants its C and D in, so
an MMA whose accumulator is in that distribution stages C in shared memory,
loads its fragments, and writes D back and reads it again: for a 128x128 f32
accumulator, 64 KiB each way at every step of the K loop.  Where a loop
carries the accumulator from one MMA to the next (``iter_values`` -> C of an
``mmaf`` / ``nv_tileas.dot`` -> ``continue``, nothing else using either),
the loop carries it in registers in the fragment layout instead
(:class:`FragmentTile`), and it is converted once before the loop and once
where something else reads the loop's result.

The layout (PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point
type"): the (M/16) x (N/8) output tiles, row-major, go to the warps round-robin
(warp ``w`` owns tiles ``w, w + W, ...``); element ``i`` (0..3) of a tile is in
lane ``4g + q`` at row ``g + 8 * (i >> 1)``, column ``2q + (i & 1)`` of the
tile; register ``4j + i`` of a thread holds element ``i`` of its warp's
``j``-th tile.  It needs every warp to own the same number of tiles.
"""

from __future__ import annotations

from dataclasses import dataclass

from tile_lsp.analysis.ir.core import Operation, Value
from tile_lsp.codegen.lower import OPERAND_HOOKS, KernelLowering
from tile_lsp.codegen.ptx import StagedTile, TileValue, staged_bytes
from tile_lsp.dialect import nv_tileas_types as NT
from tile_lsp.dialect import types as T

#: The ops whose operand 2 is an MMA accumulator the fragment path can take.
MMA_OPS = ("cuda_tile.mmaf", "nv_tileas.dot")
#: Shared memory the tensor-core path may stage its operands in (A and B here; A, B and C for an
#: accumulator in the distribution, ``ops_shape.mma_sync_applies``): the smallest opt-in dynamic
#: shared memory per CTA of the targets (99 KiB on sm_86, sm_89 and sm_120).
MMA_SYNC_SMEM_LIMIT = 99 * 1024


@dataclass
class FragmentTile:
    """An ``M x N`` f32 tile held as ``mma.m16n8k16`` C/D fragments (module docstring): ``regs[4 * j + i]``
    is element ``i`` of the ``j``-th 16x8 tile of this thread's warp; ``warps`` warps in the CTA."""

    shape: tuple[int, int]
    elem: T.Type
    regs: list[str]
    warps: int

    @property
    def tiles_n(self) -> int:
        return self.shape[1] // 8

    @property
    def per_warp(self) -> int:
        return len(self.regs) // 4


def fragment_shape_fits(m: int, n: int, k: int, threads: int) -> bool:
    """Whether an ``M x N`` accumulator with a ``K``-deep step can live in fragments in a CTA of
    ``threads``: M % 16 == N % 8 == K % 16 == 0, N / 8 a power of two, every warp the same number of
    16x8 tiles, and A and B staged within :data:`MMA_SYNC_SMEM_LIMIT`."""
    warps = threads // 32
    if m % 16 or n % 8 or k % 16 or (n // 8) & (n // 8 - 1) or not warps:
        return False
    tiles = (m // 16) * (n // 8)
    return tiles % warps == 0 and (m * k + k * n) * 2 <= MMA_SYNC_SMEM_LIMIT


def _operand_tile(v: Value) -> tuple[T.Type, tuple[int, ...]] | None:
    """(element, shape) of an MMA operand: a tile, or a staged ``!nv_tileas.tiled_view<MxKxT, SMEM>``
    (decoded by :func:`~tile_lsp.dialect.nv_tileas_types.decode_type`); ``None`` for anything else."""
    if isinstance(v.type, T.TileType):
        return v.type.element, tuple(int(d) for d in v.type.shape)
    view = NT.decode_type(v.type)
    if isinstance(view, NT.TiledViewType) and None not in view.shape:
        return view.element, tuple(view.shape)
    return None


def takes_fragments(op: Operation, index: int) -> bool:
    """Whether operand ``index`` of ``op`` may stay a :class:`FragmentTile` (every other use converts
    it first, :meth:`~tile_lsp.codegen.lower.KernelLowering.lower_op`): an MMA's C, a ``continue``'s
    values (the loop's registers take them as they are), a ``for``'s initial values."""
    if op.name in MMA_OPS:
        return index == 2
    return op.name in ("cuda_tile.continue",) or (op.name == "cuda_tile.for" and index >= 3)


def _operand_count(ops: list[Operation], v: Value) -> int:
    n = 0
    for op in ops:
        for inner in op.walk():
            n += sum(1 for x in inner.operands if x is v)
    return n


def carried_in_fragments(loop: Operation, index: int, threads: int, sm: int, max_smem: int) -> bool:
    """Whether iteration value ``index`` of the ``for`` op ``loop`` is carried in fragments: its block
    argument is used once, as C of an MMA op in the loop body whose result is used once, as operand
    ``index`` of the ``continue``; A and B f16 or bf16, C f32, sm_80 or newer, the shapes fitting
    (:func:`fragment_shape_fits`), and the f32 accumulator within ``max_smem`` bytes (the target's
    shared memory per CTA: the conversions stage it whole)."""
    if sm < 80 or not loop.regions or not loop.regions[0].blocks:
        return False
    block = loop.regions[0].blocks[0]
    ops = block.operations
    if not ops or len(block.arguments) <= index + 1:
        return False
    arg = block.arguments[index + 1]
    term = ops[-1]
    if term.short_name != "continue" or len(term.operands) <= index:
        return False
    mma = getattr(term.operands[index], "owner", None)
    if not isinstance(mma, Operation) or mma.name not in MMA_OPS or mma.parent is not block:
        return False
    if len(mma.operands) != 3 or mma.operands[2] is not arg:
        return False
    if _operand_count(ops, arg) != 1 or _operand_count(ops, mma.results[0]) != 1:
        return False
    operands = [_operand_tile(v) for v in mma.operands]
    if None in operands:
        return False
    (ea, sa), (eb, sb), (ec, _) = operands
    if not (isinstance(ea, T.FloatType) and ea.name in ("f16", "bf16") and ea == eb):
        return False
    if not (isinstance(ec, T.FloatType) and ec.name == "f32") or len(sa) != 2 or len(sb) != 2:
        return False
    (m, k), n = sa, sb[1]
    return fragment_shape_fits(m, n, k, threads) and m * n * 4 <= max_smem


# ------------------------------------------------------------------ lane coordinates


def lane_coordinates(lw: KernelLowering) -> tuple[str, str, str]:
    """(warp, g, 2q) b32 registers of this thread, as the mma.m16n8k16 fragments index lanes (``g = lane >> 2``,
    ``q = lane & 3``); hoisted to the prologue, once per kernel."""
    key = ("mma_lane",)
    if key not in lw.f.cache:
        f = lw.f
        warp, g, q2 = f.reg("b32"), f.reg("b32"), f.reg("b32")
        f.pro(f"shr.u32 {warp}, {lw.tid}, 5")
        f.pro(f"shr.u32 {g}, {lw.tid}, 2")
        f.pro(f"and.b32 {g}, {g}, 7")
        f.pro(f"and.b32 {q2}, {lw.tid}, 3")
        f.pro(f"shl.b32 {q2}, {q2}, 1")
        lw.f.cache[key] = (warp, g, q2)
    return lw.f.cache[key]


def _tile_origin(lw: KernelLowering, frag: FragmentTile, j: int) -> tuple[str, str]:
    """(row, col) b32 registers of element 0 of this thread in its warp's ``j``-th tile:
    ``16 * tm + g`` and ``8 * tn + 2q`` (the prologue keeps them)."""
    key = ("mma_origin", frag.shape, frag.warps, j)
    if key not in lw.f.cache:
        f = lw.f
        warp, g, q2 = lane_coordinates(lw)
        tile, row, col = f.reg("b32"), f.reg("b32"), f.reg("b32")
        f.pro(f"add.s32 {tile}, {warp}, {j * frag.warps}")
        tn_bits = frag.tiles_n.bit_length() - 1
        f.pro(f"shr.u32 {row}, {tile}, {tn_bits}")
        f.pro(f"mad.lo.s32 {row}, {row}, 16, {g}")
        f.pro(f"and.b32 {col}, {tile}, {frag.tiles_n - 1}")
        f.pro(f"mad.lo.s32 {col}, {col}, 8, {q2}")
        lw.f.cache[key] = (row, col)
    return lw.f.cache[key]


def _element_index(lw: KernelLowering, frag: FragmentTile, j: int) -> str:
    """b32 register: row-major index in the M x N tile of element 0 of tile ``j`` in this thread."""
    key = ("mma_index", frag.shape, frag.warps, j)
    if key not in lw.f.cache:
        row, col = _tile_origin(lw, frag, j)
        r = lw.f.reg("b32")
        lw.f.pro(f"mad.lo.s32 {r}, {row}, {frag.shape[1]}, {col}")
        lw.f.cache[key] = r
    return lw.f.cache[key]


def _offsets(n: int) -> list[int]:
    """Element offsets of fragment elements 0..3 from element 0, in an ``n``-column row-major tile."""
    return [(i >> 1) * 8 * n + (i & 1) for i in range(4)]


# ------------------------------------------------------------------ conversions


def new_fragments(lw: KernelLowering, shape: tuple[int, int], elem: T.Type) -> FragmentTile:
    """Fresh f32 registers for an ``M x N`` tile in fragments in this CTA."""
    warps = lw.threads // 32
    count = (shape[0] // 16) * (shape[1] // 8) // warps * 4
    return FragmentTile(shape, elem, [lw.f.reg("f32") for _ in range(count)], warps)


def to_fragments(lw: KernelLowering, tile: TileValue) -> FragmentTile:
    """``tile`` (the distribution of :mod:`tile_lsp.codegen.ptx`) in fragments, through the staging
    scratch (barriers before and after the stores, as :meth:`KernelLowering.stage`)."""
    shape = (tile.shape[0], tile.shape[1])
    out = new_fragments(lw, shape, tile.elem)
    (off,) = lw.stage([tile])
    for j in range(out.per_warp):
        base = _element_index(lw, out, j)
        for i, d in enumerate(_offsets(shape[1])):
            lw.mov("f32", out.regs[4 * j + i], lw.smem_read(tile.elem, off + d * 4, base))
    return out


def from_fragments(lw: KernelLowering, frag: FragmentTile) -> TileValue:
    """``frag`` in the distribution of :mod:`tile_lsp.codegen.ptx`, through the staging scratch."""
    f = lw.f
    nbytes = frag.shape[0] * frag.shape[1] * staged_bytes(frag.elem)
    lw.reserve(nbytes)
    f.emit("bar.sync 0")
    for j in range(frag.per_warp):
        base = _element_index(lw, frag, j)
        for i, d in enumerate(_offsets(frag.shape[1])):
            lw.smem_write(frag.elem, d * 4, base, frag.regs[4 * j + i])
    f.emit("bar.sync 0")
    out = lw.new_tile(T.TileType(list(frag.shape), frag.elem))
    for s, r in enumerate(out.regs):
        lw.mov("f32", r, lw.smem_read(frag.elem, 0, lw.lin(out.n, s)))
    return out


def fresh_like(lw: KernelLowering, frag: FragmentTile) -> FragmentTile:
    """New registers in the same layout as ``frag``."""
    return FragmentTile(frag.shape, frag.elem, [lw.f.reg("f32") for _ in frag.regs], frag.warps)


# ------------------------------------------------------------------ the MMA


def mma_into_fragments(lw: KernelLowering, a: TileValue | StagedTile, b: TileValue | StagedTile,
                       c: FragmentTile, offsets: list[int]) -> FragmentTile:
    """D = A x B + C with ``mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32``, C and D in fragments.

    A (M x K) and B (K x N) are row-major in the staging scratch at byte ``offsets`` (made visible by
    the caller).  Each thread runs, for each 16-deep step of K and each of its warp's tiles, one MMA;
    a B fragment shared by all of a warp's tiles (the warps a multiple of the tile columns) is loaded
    once per step.  A register i (0..3) holds row ``g + 8 * (i & 1)``, columns ``2q + 8 * (i >> 1)``
    and the next; B register j (0..1) rows ``2q + 8 * j`` and the next of column ``g``."""
    f = lw.f
    k, n = a.shape[1], b.shape[-1]
    kind = a.elem.name
    oa, ob = offsets
    base = lw.smem_addr()
    out = fresh_like(lw, c)
    shared_b = c.warps % c.tiles_n == 0
    regs = lambda rs: "{" + ", ".join(rs) + "}"  # noqa: E731
    _, g, q2 = lane_coordinates(lw)
    a_addr, b_addr = [], {}
    for j in range(c.per_warp):
        row, col = _tile_origin(lw, c, j)
        r = f.reg("b32")  # element (row, 2q) of A
        f.emit(f"mad.lo.s32 {r}, {row}, {k}, {q2}")
        f.emit(f"mad.lo.s32 {r}, {r}, 2, {base}")
        a_addr.append(r)
        key = 0 if shared_b else j
        if key not in b_addr:
            bcol = f.reg("b32")  # column g of the tile: col - 2q + g
            f.emit(f"sub.s32 {bcol}, {col}, {q2}")
            f.emit(f"add.s32 {bcol}, {bcol}, {g}")
            r = f.reg("b32")  # element (2q, bcol) of B
            f.emit(f"mad.lo.s32 {r}, {q2}, {n}, {bcol}")
            f.emit(f"mad.lo.s32 {r}, {r}, 2, {base}")
            b_addr[key] = r
    for step in range(k // 16):
        k0 = step * 16
        b_frag: dict[int, list[str]] = {}
        for j in range(c.per_warp):
            ra = []
            for i in range(4):
                r = f.reg("b32")
                f.emit(f"ld.shared.b32 {r}, [{a_addr[j]}+{oa + k0 * 2 + (i & 1) * 8 * k * 2 + (i >> 1) * 8 * 2}]")
                ra.append(r)
            key = 0 if shared_b else j
            if key not in b_frag:
                rb = []
                for jj in range(2):
                    lo, hi, r = f.reg("b16"), f.reg("b16"), f.reg("b32")
                    at = ob + (k0 + jj * 8) * n * 2
                    f.emit(f"ld.shared.b16 {lo}, [{b_addr[key]}+{at}]")
                    f.emit(f"ld.shared.b16 {hi}, [{b_addr[key]}+{at + n * 2}]")
                    f.emit(f"mov.b32 {r}, {{{lo}, {hi}}}")
                    rb.append(r)
                b_frag[key] = rb
            acc_in = (c.regs if step == 0 else out.regs)[4 * j:4 * j + 4]
            acc_out = out.regs[4 * j:4 * j + 4]
            f.emit(f"mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32 {regs(acc_out)}, {regs(ra)}, "
                   f"{regs(b_frag[key])}, {regs(acc_in)}")
    return out


def _convert_operand(lw: KernelLowering, op: Operation, index: int, x) -> TileValue | None:
    """The :data:`~tile_lsp.codegen.lower.OPERAND_HOOKS` entry: a :class:`FragmentTile` read by an op
    that does not take fragments (:func:`takes_fragments`) is converted to the distribution there."""
    if isinstance(x, FragmentTile) and not takes_fragments(op, index):
        return from_fragments(lw, x)
    return None


OPERAND_HOOKS.append(_convert_operand)
