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
where something else reads the loop's result.  The accumulator may also be
multiplied by a broadcast row vector on its way to C (``mulf %acc,
broadcast(%scale : MxN1)``: the rescaling of an online softmax, FlashAttention's
``O * exp(m_old - m_new)``): that product is taken in the fragments
(:func:`scale_rows`), the row vector read from shared memory, and the
broadcast itself is not lowered (:func:`broadcast_only_scales`).

The MMAs (:func:`mma_shape`, PTX ISA "Warp-level matrix multiply-accumulate
instructions"): ``mma.sync.aligned.m16n8k16`` for f16/bf16 A and B with an f32
accumulator (sm_80), ``m16n8k8`` for tf32 (sm_80), ``m16n8k32`` for 8-bit integers with an i32 accumulator
(``mmai``, sm_80) and for fp8 (e4m3/e5m2) with an f32 accumulator (sm_89).  A
batched MMA (``B x M x K`` by ``B x K x N``) is the same with the batches'
rows one after the other: each 16-row tile lies in one batch, whose B it reads.

The layout (PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point
type"; m16n8k32's C/D are the same): the (rows/16) x (N/8) output tiles,
row-major over all the rows of the tile (``B * M``), go to the warps
round-robin (warp ``w`` owns tiles ``w, w + W, ...``); element ``i`` (0..3)
of a tile is in lane ``4g + q`` at row ``g + 8 * (i >> 1)``, column ``2q + (i
& 1)`` of the tile; register ``4j + i`` of a thread holds element ``i`` of
its warp's ``j``-th tile.  It needs every warp to own the same number of
tiles.
"""

from __future__ import annotations

from dataclasses import dataclass

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Block, BlockArgument, Operation, Value
from tile_lsp.codegen.lower import OPERAND_HOOKS, KernelLowering
from tile_lsp.codegen.ptx import REG_BYTES, LoweringError, StagedTile, TileValue, reg_class, staged_bytes
from tile_lsp.dialect import nv_tileas_types as NT
from tile_lsp.dialect import types as T

#: The ops whose operand 2 is an MMA accumulator the fragment path can take.
MMA_OPS = ("cuda_tile.mmaf", "cuda_tile.mmai", "nv_tileas.dot")
#: cuda_tile fp8 element types -> PTX's names of them in ``mma`` (PTX ISA "Alternate floating point data formats")
F8_PTX = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}
#: Shared memory the tensor-core path may stage its operands in (A and B here; A, B and C for an
#: accumulator in the distribution, ``ops_shape.mma_sync_applies``): the smallest opt-in dynamic
#: shared memory per CTA of the targets (99 KiB on sm_86, sm_89 and sm_120).
MMA_SYNC_SMEM_LIMIT = 99 * 1024


@dataclass(frozen=True)
class MmaShape:
    """One ``mma.sync`` of the fragment path: PTX types of A, B and C/D, and its depth ``k`` (16 or 32)."""

    a: str
    b: str
    c: str
    k: int

    @property
    def instruction(self) -> str:
        """``mma.sync.aligned.m16n8k<k>.row.col.<c>.<a>.<b>.<c>``."""
        return f"mma.sync.aligned.m16n8k{self.k}.row.col.{self.c}.{self.a}.{self.b}.{self.c}"


def operand_signs(op: Operation) -> tuple[bool, bool]:
    """Whether A and B of an integer MMA are signed: ``mmai``'s ``signedness_lhs``/``signedness_rhs``
    (Ops.td: signed unless ``unsigned``) or ``nv_tileas.dot``'s ``a_signed``/``b_signed``."""
    def signed(enum_name: str, bool_name: str) -> bool:
        e, b = op.attr(enum_name), op.attr(bool_name)
        if isinstance(b, A.BoolAttr):
            return b.value
        return not (isinstance(e, A.EnumAttr) and e.case == "unsigned")
    return signed("signedness_lhs", "a_signed"), signed("signedness_rhs", "b_signed")


def mma_shape(ea: T.Type, eb: T.Type, ec: T.Type, sm: int, signs: tuple[bool, bool] = (True, True)) -> MmaShape | None:
    """The ``mma.sync`` of A, B and C elements ``ea``, ``eb``, ``ec`` on ``sm`` (module docstring), or
    ``None``: f16 x f16 or bf16 x bf16 into f32 (m16n8k16, sm_80); tf32 x tf32 into f32 (m16n8k8,
    sm_80); i8 x i8 into i32 (m16n8k32 ``.s8``/``.u8`` after ``signs``, sm_80); e4m3/e5m2 x
    e4m3/e5m2 into f32 (m16n8k32, sm_89)."""
    if sm < 80:
        return None
    f32 = isinstance(ec, T.FloatType) and ec.name == "f32"
    fa, fb = (e.name if isinstance(e, T.FloatType) else None for e in (ea, eb))
    if f32 and fa in ("f16", "bf16") and fa == fb:
        return MmaShape(fa, fb, "f32", 16)
    if f32 and fa == fb == "tf32":
        return MmaShape("tf32", "tf32", "f32", 8)
    if isinstance(ea, T.IntegerType) and isinstance(eb, T.IntegerType) and ea.width == eb.width == 8 \
            and isinstance(ec, T.IntegerType) and ec.width == 32:
        return MmaShape("s8" if signs[0] else "u8", "s8" if signs[1] else "u8", "s32", 32)
    if f32 and sm >= 89 and fa in F8_PTX and fb in F8_PTX:
        return MmaShape(F8_PTX[fa], F8_PTX[fb], "f32", 32)
    return None


@dataclass
class FragmentTile:
    """A ``[B x] M x N`` f32 or i32 tile held as mma C/D fragments (module docstring): ``regs[4 * j + i]``
    is element ``i`` of the ``j``-th 16x8 tile of this thread's warp; ``warps`` warps in the CTA."""

    shape: tuple[int, ...]
    elem: T.Type
    regs: list[str]
    warps: int
    #: warp ``w``'s ``j``-th tile: ``w * P + j`` (``P`` tiles a warp: consecutive tiles, one tile row
    #: shares an A fragment) when set, else ``w + j * W`` (every ``W``-th: one tile column shares B)
    blocked: bool = False

    @property
    def n(self) -> int:
        """Columns."""
        return self.shape[-1]

    @property
    def rows(self) -> int:
        """Rows of all the batches together."""
        r = 1
        for d in self.shape[:-1]:
            r *= d
        return r

    @property
    def cls(self) -> str:
        """Register class of the elements (``f32`` or ``b32``)."""
        return reg_class(self.elem)

    @property
    def tiles_n(self) -> int:
        return self.n // 8

    @property
    def per_warp(self) -> int:
        return len(self.regs) // 4


def fragment_shape_fits(m: int, n: int, k: int, threads: int, k_step: int = 16, staged: int = 2,
                        batch: int = 1) -> bool:
    """Whether a ``[batch x] M x N`` accumulator with a ``K``-deep step of ``k_step``-deep MMAs can live
    in fragments in a CTA of ``threads``: M % 16 == N % 8 == K % k_step == 0, N / 8 a power of two,
    every warp the same number of 16x8 tiles, and A and B (``staged`` bytes per element in the
    staging scratch) within :data:`MMA_SYNC_SMEM_LIMIT`."""
    warps = threads // 32
    if m % 16 or n % 8 or k % k_step or (n // 8) & (n // 8 - 1) or not warps:
        return False
    tiles = batch * (m // 16) * (n // 8)
    return tiles % warps == 0 and batch * (m * k + k * n) * staged <= MMA_SYNC_SMEM_LIMIT


def _operand_tile(v: Value) -> tuple[T.Type, tuple[int, ...]] | None:
    """(element, shape) of an MMA operand: a tile, or a staged ``!nv_tileas.tiled_view<MxKxT, SMEM>``
    (decoded by :func:`~tile_lsp.dialect.nv_tileas_types.decode_type`); ``None`` for anything else."""
    if isinstance(v.type, T.TileType):
        return v.type.element, tuple(int(d) for d in v.type.shape)
    view = NT.decode_type(v.type)
    if isinstance(view, NT.TiledViewType) and None not in view.shape:
        return view.element, tuple(view.shape)
    return None


def _row_broadcast(v: Value, shape: tuple[int, ...]) -> Operation | None:
    """The ``broadcast`` op that defines ``v`` when it broadcasts a row vector to a tile of ``shape``:
    a source whose last dimension is 1 and whose other dimensions are those of ``shape`` (one value per
    row of all the batches) or all 1 (one value for the whole tile); else ``None``."""
    op = getattr(v, "owner", None)
    if not isinstance(op, Operation) or op.name != "cuda_tile.broadcast" or not op.operands:
        return None
    src = op.operands[0].type
    if not isinstance(src, T.TileType) or len(src.shape) != len(shape):
        return None
    lead = tuple(int(d) for d in src.shape[:-1])
    if int(src.shape[-1]) != 1 or (lead != tuple(shape[:-1]) and any(d != 1 for d in lead)):
        return None
    return op


def row_scale(op: Operation) -> tuple[int, Operation] | None:
    """For an f32 ``mulf`` of a block argument and a broadcast row vector (:func:`_row_broadcast`):
    ``(index of the block argument among the operands, the broadcast op)``; else ``None``.  Whether
    the argument is carried in fragments is the loop's mark (:func:`scaled_in_fragments`)."""
    if op.name != "cuda_tile.mulf" or len(op.operands) != 2 or not op.results:
        return None
    ty = op.results[0].type
    if not isinstance(ty, T.TileType) or not (isinstance(ty.element, T.FloatType) and ty.element.name == "f32"):
        return None
    shape = tuple(int(d) for d in ty.shape)
    for i in (0, 1):
        other = _row_broadcast(op.operands[1 - i], shape)
        if other is not None and isinstance(op.operands[i], BlockArgument):
            return i, other
    return None


def _marked_in_fragments(arg: Value) -> bool:
    """Whether block argument ``arg`` is an iteration value that its ``for`` carries in fragments
    (the ``tile_lsp.fragments`` mark of ``tile-assign-layouts``)."""
    block = getattr(arg, "owner", None)
    loop = block.parent_op if isinstance(block, Block) else None
    marked = loop.attr("tile_lsp.fragments") if isinstance(loop, Operation) else None
    return isinstance(marked, A.ArrayAttr) and any(a.value == arg.index - 1 for a in marked.elements)


def scaled_in_fragments(op: Operation) -> tuple[int, Operation] | None:
    """:func:`row_scale` of ``op`` when its block argument is carried in fragments: the product is
    then taken in the fragments (:func:`scale_rows`)."""
    hit = row_scale(op)
    return hit if hit is not None and _marked_in_fragments(op.operands[hit[0]]) else None


def broadcast_only_scales(op: Operation) -> bool:
    """Whether every use of broadcast ``op``'s result is a product taken in fragments
    (:func:`scaled_in_fragments`), which reads the broadcast's source instead: the broadcast then
    needs no lowering of its own."""
    uses = op.results[0].uses if op.results else []
    return bool(uses) and all((hit := scaled_in_fragments(u.owner)) is not None and hit[1] is op for u in uses)


def takes_fragments(op: Operation, index: int) -> bool:
    """Whether operand ``index`` of ``op`` may stay a :class:`FragmentTile` (every other use converts
    it first, :meth:`~tile_lsp.codegen.lower.KernelLowering.lower_op`): an MMA's C, a ``continue``'s
    values (the loop's registers take them as they are), a ``for``'s initial values, the
    accumulator of a product by a broadcast row vector (:func:`row_scale`)."""
    if op.name in MMA_OPS:
        a = op.attr("tile_lsp.operand_a")  # A from registers (codegen/fragment_layouts.py)
        return index == 2 or (index == 0 and isinstance(a, A.StringAttr) and a.value == "fragments")
    if op.name == "cuda_tile.mulf":
        hit = row_scale(op)
        return hit is not None and hit[0] == index
    return op.name in ("cuda_tile.continue",) or (op.name == "cuda_tile.for" and index >= 3)


def _operand_count(ops: list[Operation], v: Value) -> int:
    n = 0
    for op in ops:
        for inner in op.walk():
            n += sum(1 for x in inner.operands if x is v)
    return n


def carried_in_fragments(loop: Operation, index: int, threads: int, sm: int, max_smem: int) -> bool:
    """Whether iteration value ``index`` of the ``for`` op ``loop`` is carried in fragments: its block
    argument is used once, as C of an MMA op in the loop body (or by a product with a broadcast row
    vector, :func:`row_scale`, that is that C and used nowhere else) whose result is used once, as
    operand ``index`` of the ``continue``; an :func:`mma_shape` for its elements on ``sm``, 2-d or batched
    3-d operands, the shapes fitting (:func:`fragment_shape_fits`), and the accumulator within
    ``max_smem`` bytes (the target's shared memory per CTA: the conversions stage it whole)."""
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
    if len(mma.operands) != 3:
        return False
    c = mma.operands[2]
    if c is not arg:  # C = arg * broadcast(row vector), the product used by the MMA alone
        scale = getattr(c, "owner", None)
        hit = row_scale(scale) if isinstance(scale, Operation) and scale.parent is block else None
        if hit is None or scale.operands[hit[0]] is not arg or _operand_count(ops, c) != 1:
            return False
    if _operand_count(ops, arg) != 1 or _operand_count(ops, mma.results[0]) != 1:
        return False
    operands = [_operand_tile(v) for v in mma.operands]
    if None in operands:
        return False
    (ea, sa), (eb, sb), (ec, sc) = operands
    shape = mma_shape(ea, eb, ec, sm, operand_signs(mma))
    if shape is None or len(sa) not in (2, 3) or len(sb) != len(sa) or sa[:-2] != sb[:-2]:
        return False
    (m, k), n = sa[-2:], sb[-1]
    batch = sa[0] if len(sa) == 3 else 1
    staged = max(staged_bytes(ea), staged_bytes(eb))
    return fragment_shape_fits(m, n, k, threads, shape.k, staged, batch) and batch * m * n * 4 <= max_smem


def mma_shape_of(op: Operation, sm: int) -> MmaShape | None:
    """:func:`mma_shape` of an MMA op (``mmaf``, ``mmai``, ``nv_tileas.dot``) from its operand types."""
    operands = [_operand_tile(v) for v in op.operands[:3]]
    if None in operands:
        return None
    return mma_shape(operands[0][0], operands[1][0], operands[2][0], sm, operand_signs(op))


# ------------------------------------------------------------------ lane coordinates


def lane_coordinates(lw: KernelLowering) -> tuple[str, str, str]:
    """(warp, g, 2q) b32 registers of this thread, as the mma.m16n8k16 fragments index lanes (``g = lane >> 2``,
    ``q = lane & 3``); hoisted to the prologue, once per kernel."""
    f = lw.f

    def build() -> tuple[str, str, str]:
        warp, g, q2 = f.reg("b32"), f.reg("b32"), f.reg("b32")
        f.pro(f"shr.u32 {warp}, {lw.tid}, 5")
        f.pro(f"shr.u32 {g}, {lw.tid}, 2")
        f.pro(f"and.b32 {g}, {g}, 7")
        f.pro(f"and.b32 {q2}, {lw.tid}, 3")
        f.pro(f"shl.b32 {q2}, {q2}, 1")
        return warp, g, q2
    return f.once(("mma_lane",), build)


def ldmatrix_lane(lw: KernelLowering) -> tuple[str, str]:
    """(r, c) b32 registers of this thread (prologue, once per kernel): ``lane & 15`` and ``8 * (lane >> 4)``,
    the row and column of a 16x16 tile whose address a lane gives to ``ldmatrix.x4`` (PTX ISA
    "ldmatrix": lanes ``8k .. 8k + 7`` give the rows of 8x8 matrix ``k``; matrices 0-3 are the A
    fragment's registers: rows 0-7 and 8-15 of columns 0-7, then of columns 8-15).  ``r`` is also
    the row (of K) a lane gives to ``ldmatrix.x2.trans`` for a B fragment."""
    f = lw.f

    def build() -> tuple[str, str]:
        r, c = f.reg("b32"), f.reg("b32")
        f.pro(f"and.b32 {r}, {lw.tid}, 15")
        f.pro(f"shr.u32 {c}, {lw.tid}, 4")
        f.pro(f"and.b32 {c}, {c}, 1")
        f.pro(f"shl.b32 {c}, {c}, 3")
        return r, c
    return f.once(("ldmatrix_lane",), build)


def ldmatrix_lane_rows(lw: KernelLowering, two: bool = False) -> tuple[str, str]:
    """(r, c) b32 registers of this thread (prologue, once per kernel): ``lane & 7`` and ``8 * ((lane >> 3)
    & 1)``, the row and column of an 8x16 tile whose address a lane gives to ``ldmatrix.x2`` (lanes
    0-7 the rows of matrix 0, columns 0-7; lanes 8-15 those of matrix 1, columns 8-15): a B fragment
    from a transposed B buffer (``N x K`` row-major), rows ``n``, columns ``k``.  With ``two``, ``r``
    is ``(lane & 7) + 8 * (lane >> 4)``: ``ldmatrix.x4`` reads the next 8 rows (the B fragment of the
    next tile column) as matrices 2 and 3, from lanes 16-31."""
    f = lw.f

    def build() -> tuple[str, str]:
        r, c = f.reg("b32"), f.reg("b32")
        f.pro(f"and.b32 {r}, {lw.tid}, 7")
        f.pro(f"and.b32 {c}, {lw.tid}, 8")
        if two:
            t = f.reg("b32")
            f.pro(f"shr.u32 {t}, {lw.tid}, 1")
            f.pro(f"and.b32 {t}, {t}, 8")
            f.pro(f"or.b32 {r}, {r}, {t}")
        return r, c
    return f.once(("ldmatrix_lane_rows", two), build)


def tile_origin(lw: KernelLowering, frag: FragmentTile, j: int) -> tuple[str, str]:
    """(row, col) b32 registers of element 0 of this thread in its warp's ``j``-th tile:
    ``16 * tm + g`` (a row of all the batches) and ``8 * tn + 2q`` (the prologue keeps them)."""
    f = lw.f

    def build() -> tuple[str, str]:
        warp, g, q2 = lane_coordinates(lw)
        tile, row, col = f.reg("b32"), f.reg("b32"), f.reg("b32")
        if frag.blocked:
            f.pro(f"mad.lo.s32 {tile}, {warp}, {frag.per_warp}, {j}")
        else:
            f.pro(f"add.s32 {tile}, {warp}, {j * frag.warps}")
        f.pro(f"shr.u32 {row}, {tile}, {frag.tiles_n.bit_length() - 1}")
        f.pro(f"mad.lo.s32 {row}, {row}, 16, {g}")
        f.pro(f"and.b32 {col}, {tile}, {frag.tiles_n - 1}")
        f.pro(f"mad.lo.s32 {col}, {col}, 8, {q2}")
        return row, col
    return f.once(("mma_origin", frag.shape, frag.warps, frag.blocked, j), build)


def _element_index(lw: KernelLowering, frag: FragmentTile, j: int) -> str:
    """b32 register: row-major index in the M x N tile of element 0 of tile ``j`` in this thread."""
    f = lw.f

    def build() -> str:
        row, col = tile_origin(lw, frag, j)
        r = f.reg("b32")
        f.pro(f"mad.lo.s32 {r}, {row}, {frag.n}, {col}")
        return r
    return f.once(("mma_index", frag.shape, frag.warps, frag.blocked, j), build)


def _offsets(n: int) -> list[int]:
    """Element offsets of fragment elements 0..3 from element 0, in an ``n``-column row-major tile."""
    return [(i >> 1) * 8 * n + (i & 1) for i in range(4)]


# ------------------------------------------------------------------ conversions


def operand_keys(frag: FragmentTile, j: int, batch: int = 1) -> tuple[int, int]:
    """For tile ``j`` of a warp in ``frag``'s layout: which of the warp's A fragments (tiles in one
    tile row share it) and B fragments (tiles in one tile column of one batch) it reads, the same in
    every warp.  Tile ``j`` of warp ``w`` is ``w * P + j`` (blocked; ``P`` and the tile columns
    powers of two, so a warp's tiles are a run of one tile row or whole rows) or ``w + j * W``
    (strided: ``j1`` and ``j2`` lie in one tile column when ``(j1 - j2) * W`` is a multiple of it)."""
    if frag.blocked:
        return j // frag.tiles_n, (j % frag.tiles_n if batch == 1 else j)
    # strided: tile w + j W lies in tile row (j W) / tiles_n in every warp where the W warps fit in a
    # tile row (W and tiles_n powers of two), else each j in a row of its own
    w = frag.warps
    return (j * w // frag.tiles_n if w <= frag.tiles_n else j), ((j * w) % frag.tiles_n if batch == 1 else j)


def pairs_b_loads(frag: FragmentTile, threads: int) -> bool:
    """Whether :func:`mma_into_fragments` loads the B fragments of two neighbouring tile columns with
    one ``ldmatrix.x4`` for an accumulator of ``frag``'s layout (16-bit operands, not batched): blocked,
    and the accumulator within a quarter of the registers a thread may have (``min(255, 65,536 /
    threads)``): ptxas keeps the wider loads' registers live longer, and at the cap spills
    (matmul_tiled_bf16_128x256x64: 64 of 128, 4 bytes)."""
    return frag.blocked and len(frag.regs) * 4 <= min(255, 65536 // threads)


def fragment_loads(m: int, n: int, threads: int, blocked: bool) -> tuple[int, int]:
    """(registers, ``ldmatrix`` instructions) of the A and B fragments (4 and 2 registers each; B
    paired where :func:`pairs_b_loads`) that one k-step of an ``m x n`` MMA in fragments loads per
    warp, in the blocked or strided order (:func:`operand_keys`): the order to prefer is the one
    that loads fewer registers, then fewer instructions."""
    warps = threads // 32
    frag = FragmentTile((m, n), T.FloatType("f32"), [""] * (m * n // threads), warps, blocked)
    keys = [operand_keys(frag, j) for j in range(frag.per_warp)]
    a_keys, b_keys = {a for a, _ in keys}, {b for _, b in keys}
    paired = sum(1 for b in b_keys if b % 2 == 0 and b + 1 in b_keys) if pairs_b_loads(frag, threads) else 0
    return 4 * len(a_keys) + 2 * len(b_keys), len(a_keys) + len(b_keys) - paired


def new_fragments(lw: KernelLowering, shape: tuple[int, ...], elem: T.Type, blocked: bool = False) -> FragmentTile:
    """Fresh registers (f32 or b32, after ``elem``) for a ``[B x] M x N`` tile in fragments in this CTA,
    the warps' tiles ``blocked`` or strided (:class:`FragmentTile`)."""
    warps = lw.threads // 32
    rows = 1
    for d in shape[:-1]:
        rows *= d
    count = (rows // 16) * (shape[-1] // 8) // warps * 4
    return FragmentTile(tuple(shape), elem, [lw.f.reg(reg_class(elem)) for _ in range(count)], warps, blocked)


def _fragment_addresses(lw: KernelLowering, frag: FragmentTile, offset: int):
    """Yield ``(register index, shared address operand)`` of every register of ``frag`` in a swizzled
    row-major ``rows x N`` buffer at byte ``offset`` of the scratch (a 128-byte aligned offset; the
    buffer, 512 bytes or more, maps onto itself: :meth:`~tile_lsp.codegen.lower.KernelLowering.swizzled`).

    Unswizzled, the 8 rows a fragment register spans in a warp (lanes ``4g + q``, rows ``g``) lie a
    multiple of 128 bytes apart whenever N is a multiple of 32: an 8-way bank conflict at every
    access; swizzled, rows ``g`` and ``g + 4`` at most share banks.  The swizzle keeps a 16-byte
    chunk whole and depends on address bits 4-9 only, so it is computed once per row of a tile:
    the second element of a row (4 bytes on, in the chunk of the first, which starts a multiple of
    8 bytes in) is the first's address + 4, and the row 8 below is the same address plus its
    distance when that is a multiple of 1024 bytes (N a multiple of 32)."""
    f = lw.f
    esz = staged_bytes(frag.elem)
    down = 8 * frag.n * esz  # bytes from row g to row g + 8
    for j in range(frag.per_warp):
        addr = f.reg("b32")
        f.emit(f"mad.lo.s32 {addr}, {_element_index(lw, frag, j)}, {esz}, {lw.smem_addr()}")
        top = lw.swizzled(addr, offset)
        bottom, extra = (top, down) if down % 1024 == 0 else (lw.swizzled(addr, offset + down), 0)
        for i, (row, plus) in enumerate(((top, 0), (top, esz), (bottom, extra), (bottom, extra + esz))):
            yield 4 * j + i, f"[{row}+{plus}]" if plus else f"[{row}]"


def load_fragments(lw: KernelLowering, out: FragmentTile, offset: int) -> None:
    """Read ``out``'s registers from a swizzled row-major buffer of its shape at byte ``offset`` of
    the scratch (:func:`_fragment_addresses`).  No barrier."""
    for r, addr in _fragment_addresses(lw, out, offset):
        lw.f.emit(f"ld.shared.b32 {out.regs[r]}, {addr}")


def store_fragments(lw: KernelLowering, frag: FragmentTile, offset: int) -> None:
    """Write ``frag``'s registers to a swizzled row-major buffer of its shape at byte ``offset`` of
    the scratch (:func:`_fragment_addresses`).  No barrier."""
    for r, addr in _fragment_addresses(lw, frag, offset):
        lw.f.emit(f"st.shared.b32 {addr}, {frag.regs[r]}")


def _element_places(frag: FragmentTile):
    """Yield ``(register index, tile j, element offset)`` of every register of ``frag``: the element
    is ``offset`` past element 0 of tile ``j`` (:func:`_element_index`) in the row-major tile."""
    for j in range(frag.per_warp):
        for i in range(4):
            yield 4 * j + i, j, (i >> 1) * 8 * frag.n + (i & 1)


def to_fragments(lw: KernelLowering, tile: TileValue, blocked: bool = False) -> FragmentTile:
    """``tile`` (the distribution of :mod:`tile_lsp.codegen.ptx`) in fragments, the warps' tiles
    ``blocked`` or strided, through the staging scratch (barriers before and after the stores, as
    :meth:`KernelLowering.stage`): a swizzled buffer for 32-bit elements, else a plain row-major one."""
    out = new_fragments(lw, tile.shape, tile.elem, blocked)
    if out.cls in ("f32", "b32"):
        (off,) = lw.stage([tile], swizzle=True)
        load_fragments(lw, out, off)
        return out
    (off,) = lw.stage([tile])
    esz = REG_BYTES[out.cls]
    for r, j, e in _element_places(out):
        lw.mov(out.cls, out.regs[r], lw.smem_read(tile.elem, off + e * esz, _element_index(lw, out, j)))
    return out


def from_fragments(lw: KernelLowering, frag: FragmentTile) -> TileValue:
    """``frag`` in the distribution of :mod:`tile_lsp.codegen.ptx`, through the staging scratch (a
    swizzled buffer for 32-bit elements, else a plain row-major one)."""
    f = lw.f
    esz = REG_BYTES[frag.cls]
    swizzle = frag.cls in ("f32", "b32")
    lw.reserve(frag.rows * frag.n * (staged_bytes(frag.elem) if swizzle else esz))
    f.barrier()
    if swizzle:
        store_fragments(lw, frag, 0)
    else:
        for r, j, e in _element_places(frag):
            lw.smem_write(frag.elem, e * esz, _element_index(lw, frag, j), frag.regs[r])
    f.barrier()
    out = lw.new_tile(T.TileType(list(frag.shape), frag.elem))
    lw.read_staged(out, 0, swizzle=swizzle)
    return out


def relayout(lw: KernelLowering, frag: FragmentTile, blocked: bool) -> FragmentTile:
    """``frag`` with its warps' tiles ``blocked`` or strided (itself where it already is)."""
    return frag if frag.blocked == blocked else to_fragments(lw, from_fragments(lw, frag), blocked)


# ------------------------------------------------------------------ row vectors


@dataclass
class RowFragments:
    """An ``M`` or ``M x 1`` tile held as the rows of row-blocked fragments (``codegen/fragment_layouts.py``):
    the ``M / 16`` blocks of 16 rows split evenly over the ``warps`` warps, ``regs[2 * a + h]`` is row
    ``16 * (w * B + a) + g + 8 * h`` (``B`` blocks a warp) in every lane ``4g + q`` of warp ``w``: the
    rows of the C/D registers ``2h`` and ``2h + 1`` of the warp's tiles in its ``a``-th block."""

    shape: tuple[int, ...]
    elem: T.Type
    regs: list[str]
    warps: int

    @property
    def blocks(self) -> int:
        """Blocks of 16 rows a warp."""
        return len(self.regs) // 2

    @property
    def geometry(self) -> FragmentTile:
        """A blocked ``M x 8`` fragment tile with the same rows, for :func:`tile_origin` (its tile ``a`` is block ``a``)."""
        return FragmentTile((self.shape[0], 8), self.elem, [""] * (4 * self.blocks), self.warps, True)


@dataclass
class RowBroadcast:
    """A ``broadcast`` of :class:`RowFragments` ``rows`` to an ``M x N`` tile, not computed: an element-wise
    op in row-blocked fragments reads each register's row from ``rows``."""

    rows: RowFragments
    shape: tuple[int, ...]


def new_rows(lw: KernelLowering, shape: tuple[int, ...], elem: T.Type) -> RowFragments:
    """Fresh registers for an ``M`` or ``M x 1`` tile as :class:`RowFragments` in this CTA."""
    warps = lw.threads // 32
    return RowFragments(tuple(shape), elem, [lw.f.reg(reg_class(elem)) for _ in range(2 * (shape[0] // 16 // warps))],
                        warps)


def row_register(lw: KernelLowering, geometry: FragmentTile, j: int, half: int) -> str:
    """b32 register: the row of this thread's C/D registers ``2 * half`` and ``2 * half + 1`` in tile ``j``
    of ``geometry`` (a row of all the batches)."""
    row = tile_origin(lw, geometry, j)[0]
    return lw.once_in_block(("row", row, half), lambda: _plus(lw, row, 8 * half)) if half else row


def column_register(lw: KernelLowering, geometry: FragmentTile, j: int, odd: int) -> str:
    """b32 register: the column of this thread's C/D registers ``odd``, ``2 + odd`` in tile ``j`` of ``geometry``."""
    col = tile_origin(lw, geometry, j)[1]
    return lw.once_in_block(("col", col, odd), lambda: _plus(lw, col, odd)) if odd else col


def _plus(lw: KernelLowering, reg: str, k: int) -> str:
    r = lw.f.reg("b32")
    lw.f.emit(f"add.s32 {r}, {reg}, {k}")
    return r


def from_rows(lw: KernelLowering, rows: RowFragments) -> TileValue:
    """``rows`` in the distribution: lane ``4g`` of each warp writes its rows to the staging scratch,
    and after a barrier each thread reads its slots (barriers before and after the stores)."""
    f = lw.f
    esz = REG_BYTES[reg_class(rows.elem)]
    lw.reserve(rows.shape[0] * esz)
    f.barrier()
    _, _, q2 = lane_coordinates(lw)
    first = f.reg("pred")
    f.emit(f"setp.eq.u32 {first}, {q2}, 0")
    for a in range(rows.blocks):
        for h in (0, 1):
            lw.smem_write(rows.elem, 0, row_register(lw, rows.geometry, a, h), rows.regs[2 * a + h], first)
    f.barrier()
    out = lw.new_tile(T.TileType(list(rows.shape), rows.elem))
    lw.read_staged(out, 0)
    return out


def to_rows(lw: KernelLowering, tile: TileValue) -> RowFragments:
    """An ``M`` or ``M x 1`` ``tile`` of the distribution as :class:`RowFragments`, through the staging scratch."""
    out = new_rows(lw, tile.shape, tile.elem)
    (off,) = lw.stage([tile])
    cls = reg_class(tile.elem)
    for a in range(out.blocks):
        for h in (0, 1):
            lw.mov(cls, out.regs[2 * a + h], lw.smem_read(tile.elem, off, row_register(lw, out.geometry, a, h)))
    return out


def broadcast_rows(lw: KernelLowering, rb: RowBroadcast) -> TileValue:
    """A :class:`RowBroadcast` computed in the distribution (for an op that does not read it in fragments)."""
    vec = from_rows(lw, rb.rows)
    (off,) = lw.stage([vec])
    out = lw.new_tile(T.TileType(list(rb.shape), vec.elem))
    for s, r in enumerate(out.regs):
        lw.mov(reg_class(vec.elem), r, lw.smem_read(vec.elem, off, lw.coords(rb.shape, s)[0]))
    return out


def fresh_like(lw: KernelLowering, frag: FragmentTile) -> FragmentTile:
    """New registers in the same layout as ``frag``."""
    return FragmentTile(frag.shape, frag.elem, [lw.f.reg(frag.cls) for _ in frag.regs], frag.warps, frag.blocked)


@dataclass
class ScaledFragments:
    """``frag`` times the row vector ``scale`` (:func:`row_scale`), not computed yet: the MMA that takes
    it as C computes it (:func:`scale_rows`), staging ``scale`` with its own operands, under their
    barrier; any other use computes it first (:data:`~tile_lsp.codegen.lower.OPERAND_HOOKS`).
    ``instruction``: the multiplication, e.g. ``mul.rn.f32``."""

    frag: FragmentTile
    scale: TileValue | RowFragments
    instruction: str


def scale_rows(lw: KernelLowering, frag: FragmentTile, scale: TileValue | RowFragments, instruction: str,
               offset: int | None = None) -> FragmentTile:
    """``frag`` times ``scale`` broadcast along the rows (:func:`row_scale`), in fragments: each
    register ``instruction dst, x, s`` (e.g. ``mul.rn.f32``) with ``s`` the scale of its row.

    ``scale`` (in the distribution) is one value per row of all the batches, or one value: a single
    value is used as it is; a row vector is read from shared memory, where it is staged at byte
    ``offset`` already (made visible by the caller), or else here (barriers before and after, as
    :meth:`~tile_lsp.codegen.lower.KernelLowering.stage`): each thread reads the two rows of each of
    its tile rows (``g`` and ``g + 8`` of the tile's 16)."""
    f = lw.f
    out = fresh_like(lw, frag)
    if isinstance(scale, RowFragments):  # row-blocked: the rows of a warp's a-th block are registers 2a, 2a + 1
        if not frag.blocked or frag.per_warp // frag.tiles_n != scale.blocks:
            raise LoweringError("internal: row vector and fragments of different rows")
        rows = [scale.regs[2 * (j // frag.tiles_n):2 * (j // frag.tiles_n) + 2] for j in range(frag.per_warp)]
    elif scale.n == 1:
        rows = [[scale.regs[0]] * 2 for _ in range(frag.per_warp)]
    else:
        off = lw.stage([scale])[0] if offset is None else offset
        esz = staged_bytes(scale.elem)
        by_row: dict[int, list[str]] = {}  # the tiles of one tile row (one A key) share their rows' scales
        for j in range(frag.per_warp):
            key = operand_keys(frag, j)[0]
            if key not in by_row:
                row, _ = tile_origin(lw, frag, j)
                by_row[key] = [lw.smem_read(scale.elem, off + half * 8 * esz, row) for half in (0, 1)]
        rows = [by_row[operand_keys(frag, j)[0]] for j in range(frag.per_warp)]
    for j, (top, bottom) in enumerate(rows):
        for i in range(4):
            f.emit(f"{instruction} {out.regs[4 * j + i]}, {frag.regs[4 * j + i]}, {bottom if i >> 1 else top}")
    return out


# ------------------------------------------------------------------ the MMA


def _pack4(lw: KernelLowering, words: list[str], esz: int) -> str:
    """A b32 register with the low byte of each of four elements (bytes 0-3 in order), from ``words``:
    four b32 registers (``esz`` 4: one element each) or two (``esz`` 2: two 16-bit elements each),
    with ``prmt.b32`` (PTX ISA "prmt": byte ``i`` of the result is byte ``c[4i+2:4i]`` of ``{b, a}``)."""
    f = lw.f
    out = f.reg("b32")
    if esz == 2:
        f.emit(f"prmt.b32 {out}, {words[0]}, {words[1]}, 0x6420")
        return out
    lo, hi = f.reg("b32"), f.reg("b32")
    f.emit(f"prmt.b32 {lo}, {words[0]}, {words[1]}, 0x0040")
    f.emit(f"prmt.b32 {hi}, {words[2]}, {words[3]}, 0x0040")
    f.emit(f"prmt.b32 {out}, {lo}, {hi}, 0x5410")
    return out


def _load_a(lw: KernelLowering, at: str, esz: int, per: int) -> str:
    """A register of an A fragment: ``per`` elements of one row (``esz`` bytes each in the scratch)
    at the address operand ``at`` (``[...]``), packed as the MMA takes them."""
    f = lw.f
    if esz * per == 4:  # two 16-bit elements: as they are
        r = f.reg("b32")
        f.emit(f"ld.shared.b32 {r}, {at}")
        return r
    words = [f.reg("b32") for _ in range(esz * per // 4)]
    f.emit(f"ld.shared.v{len(words)}.b32 {{{', '.join(words)}}}, {at}")
    return _pack4(lw, words, esz)


def _load_b(lw: KernelLowering, ats: list[str], esz: int) -> str:
    """A register of a B fragment: the elements at the address operands ``ats`` (``[...]``; one
    column, ``esz`` bytes each in the scratch), packed as the MMA takes them."""
    f = lw.f
    if len(ats) == 1:  # one 32-bit element (tf32)
        r = f.reg("b32")
        f.emit(f"ld.shared.b32 {r}, {ats[0]}")
        return r
    if esz == 2:
        halves = [f.reg("b16") for _ in ats]
        for h, a in zip(halves, ats):
            f.emit(f"ld.shared.b16 {h}, {a}")
        words = []
        for lo, hi in zip(halves[0::2], halves[1::2]):
            w = f.reg("b32")
            f.emit(f"mov.b32 {w}, {{{lo}, {hi}}}")
            words.append(w)
        return words[0] if len(words) == 1 else _pack4(lw, words, 2)
    words = [f.reg("b32") for _ in ats]
    for w, a in zip(words, ats):
        f.emit(f"ld.shared.b32 {w}, {a}")
    return _pack4(lw, words, 4)


def operand_at(lw: KernelLowering, x: TileValue | StagedTile, addr: str, offset: int) -> str:
    """The PTX address operand of byte ``offset`` past register ``addr`` in MMA operand ``x``'s
    buffer: ``[addr+offset]``, or the swizzled address where ``x`` is a swizzled :class:`StagedTile`
    (:meth:`~tile_lsp.codegen.lower.KernelLowering.swizzled`)."""
    if getattr(x, "swizzled", False):
        return f"[{lw.swizzled(addr, offset)}]"
    return f"[{addr}+{offset}]"


class _SwizzledOperand:
    """Address operands in MMA operand ``x``'s buffer, swizzled as it says, with the swizzle
    (:meth:`~tile_lsp.codegen.lower.KernelLowering.swizzled`) computed once per base register and
    128-byte block: ``swizzle(base + offset)`` is ``swizzle(base + mid) XOR low + big``, where
    ``big`` (a multiple of 1024 bytes) leaves the swizzle's bits 7-9 alone, ``mid`` (the multiple
    of 128 below 1024) sets them, and ``low`` (below 128) has no bit in common with the base's
    own low bits (``lane_bits``: every bit below 7 any thread's base may have, the buffer and the
    scratch starting at multiples of 128), so it neither carries into bit 7 nor meets the base's
    bits.  Where that does not hold, the access is swizzled whole.  Unswizzled buffers get
    ``[base+offset]``.  With ``delta`` (a register, a multiple of 1024 bytes: the stage of a pipelined
    loop's iteration), each address register gets it added last."""

    def __init__(self, lw: KernelLowering, x: TileValue | StagedTile, lane_bits: int, delta: str | None = None):
        self.lw, self.on, self.lane_bits, self.delta = lw, getattr(x, "swizzled", False), lane_bits, delta
        self.blocks: dict[tuple[str, int], str] = {}
        self.moved: dict[str, str] = {}

    def _moved(self, r: str) -> str:
        """``r`` plus :attr:`delta` (the iteration's stage, 1024-byte multiples), once per register."""
        if not self.delta:
            return r
        if r not in self.moved:
            self.moved[r] = self.lw.f.reg("b32")
            self.lw.f.emit(f"add.s32 {self.moved[r]}, {r}, {self.delta}")
        return self.moved[r]

    def __call__(self, base: str, offset: int) -> str:
        if not self.on:
            return f"[{self._moved(base)}+{offset}]"
        big, rest = offset - offset % 1024, offset % 1024
        mid, low = rest - rest % 128, rest % 128
        if low & self.lane_bits:
            return f"[{self._moved(self.lw.swizzled(base, offset))}]"
        if (base, mid) not in self.blocks:
            self.blocks[(base, mid)] = self.lw.swizzled(base, mid)
        r = self.blocks[(base, mid)]
        if low:
            x = self.lw.f.reg("b32")
            self.lw.f.emit(f"xor.b32 {x}, {r}, {low}")
            r = x
        r = self._moved(r)
        return f"[{r}+{big}]" if big else f"[{r}]"


def a_registers(lw: KernelLowering, a: FragmentTile, block: int, k0: int) -> list[str]:
    """The four A registers of an m16n8k16 step at column ``k0`` of the warp's ``block``-th row block,
    from ``a``, a 16-bit tile in row-blocked fragments: C/D registers ``(0, 1)`` and ``(2, 3)`` of its
    tiles ``k0 / 8`` and ``k0 / 8 + 1`` of that block, each pair packed low half first.  (A register
    ``i`` holds row ``g + 8 (i & 1)``, columns ``2q + 8 (i >> 1)`` and the next; C/D registers ``2h``
    and ``2h + 1`` row ``g + 8 h``, columns ``2q`` and ``2q + 1``: PTX ISA "Matrix Fragments for
    mma.m16n8k16".)"""
    f = lw.f
    out = []
    for tile in (k0 // 8, k0 // 8 + 1):
        j = block * a.tiles_n + tile
        for h in (0, 1):
            r = f.reg("b32")
            f.emit(f"mov.b32 {r}, {{{a.regs[4 * j + 2 * h]}, {a.regs[4 * j + 2 * h + 1]}}}")
            out.append(r)
    return out


def mma_into_fragments(lw: KernelLowering, a: TileValue | StagedTile | FragmentTile, b: TileValue | StagedTile,
                       c: FragmentTile, offsets: list[int], mma: MmaShape) -> FragmentTile:
    """D = A x B + C with ``mma`` (:func:`mma_shape`), C and D in fragments.

    A (``[B x] M x K``) and B (``[B x] K x N``) are row-major in the staging scratch at byte
    ``offsets`` (made visible by the caller).  Each thread runs, for each ``mma.k``-deep step of K
    and each of its warp's tiles, one MMA; a B fragment is loaded once per step for the tiles of a
    warp that lie in one tile column (one batch).  With ``p = 2`` elements per
    register (m16n8k16) or 4 (m16n8k32, PTX ISA "Matrix Fragments for mma.m16n8k32"): A register i
    (0..3) holds row ``g + 8 * (i & 1)``, columns ``p*q + (k/2) * (i >> 1)`` and the next ``p - 1``;
    B register j (0..1) rows ``p*q + (k/2) * j`` and the next ``p - 1`` of column ``g``; with one
    tf32 per register (m16n8k8, ``p = 1``) the same formulas hold.  16-bit
    operands at 16-byte aligned offsets load them with ``ldmatrix.x4`` (A) and ``ldmatrix.x2.trans``
    (B, row-major K x N), one instruction each."""
    f = lw.f
    k, n, m = a.shape[-1], b.shape[-1], a.shape[-2]
    batch = a.shape[0] if len(a.shape) == 3 else 1
    per = mma.k // 8  # elements per operand register
    ea, eb = staged_bytes(a.elem), staged_bytes(b.elem)
    oa, ob = offsets
    # in a loop with two stages, addresses from the first stage (loop invariant: ptxas hoists them and
    # their swizzles), the iteration's stage added last (a multiple of 1024: the swizzle is the same)
    delta = lw.stage_delta
    base = lw.first_stage_addr() if delta else lw.smem_addr()
    out = fresh_like(lw, c)
    a_key, b_key = (lambda j: operand_keys(c, j, batch)[0]), (lambda j: operand_keys(c, j, batch)[1])  # noqa: E731
    regs = lambda rs: "{" + ", ".join(rs) + "}"  # noqa: E731
    _, g, q2 = lane_coordinates(lw)
    qp = q2  # p * q
    if per != 2:
        qp = f.reg("b32")
        f.emit(f"shl.b32 {qp}, {q2}, 1" if per == 4 else f"shr.u32 {qp}, {q2}, 1")
    # 16-bit operands at 16-byte aligned offsets: ldmatrix (.x4 for A, .x2.trans for B), whose lanes
    # give the addresses of the rows (ldmatrix_lane) instead of the elements of their own fragment
    ldm = per == 2 and oa % 16 == 0 and ob % 16 == 0
    lr, lc = ldmatrix_lane(lw) if ldm else (g, qp)
    # B held as its transpose (N x K row-major: ops_memory.in_tensor_order): ldmatrix.x2 without .trans
    b_rows = getattr(b, "transposed", False)
    if b_rows and not (ldm and batch == 1):
        raise LoweringError("internal: a transposed B buffer needs ldmatrix (16-bit operands at 16-byte offsets)")
    a_addr, b_addr = {}, {}
    # B fragments of two neighbouring tile columns in one ldmatrix.x4 (matrices 2 and 3 are the
    # second's): keys 2m and 2m + 1 of a blocked layout are the columns 8 apart of one tile row
    keys = {b_key(j) for j in range(c.per_warp)}
    pair = {key: key + 1 for key in keys if key % 2 == 0 and key + 1 in keys} \
        if ldm and batch == 1 and pairs_b_loads(c, lw.threads) else {}
    in_registers = isinstance(a, FragmentTile)  # P of attention: A fragments are its registers, paired
    if in_registers and not (a.blocked and c.blocked and a.per_warp // a.tiles_n == c.per_warp // c.tiles_n
                             and per == 2 and batch == 1):
        raise LoweringError("internal: an A operand in fragments needs row-blocked A and C of the same rows")
    for j in range(c.per_warp):
        row, col = tile_origin(lw, c, j)
        if a_key(j) not in a_addr and not in_registers:
            r = f.reg("b32")  # element (row, p*q) of A (rows of all the batches); with ldmatrix (row0 + lr, lc)
            if ldm:
                f.emit(f"sub.s32 {r}, {row}, {g}")
                f.emit(f"add.s32 {r}, {r}, {lr}")
                f.emit(f"mad.lo.s32 {r}, {r}, {k}, {lc}")
            else:
                f.emit(f"mad.lo.s32 {r}, {row}, {k}, {qp}")
            f.emit(f"mad.lo.s32 {r}, {r}, {ea}, {base}")
            a_addr[a_key(j)] = r
        key = b_key(j)
        if key not in b_addr and b_rows:  # row (tile's first column + lane & 7), column 8 (lane >> 3 & 1)
            rr, rc = ldmatrix_lane_rows(lw, key in pair)  # (+ 8 rows: the next tile, lane >> 4)
            r = f.reg("b32")
            f.emit(f"sub.s32 {r}, {col}, {q2}")
            f.emit(f"add.s32 {r}, {r}, {rr}")
            f.emit(f"mad.lo.s32 {r}, {r}, {k}, {rc}")
            f.emit(f"mad.lo.s32 {r}, {r}, {eb}, {base}")
            b_addr[key] = r
        if key not in b_addr:
            bcol = f.reg("b32")  # column g of the tile: col - 2q + g; with ldmatrix the tile's first column
            f.emit(f"sub.s32 {bcol}, {col}, {q2}")
            if not ldm:
                f.emit(f"add.s32 {bcol}, {bcol}, {g}")
            r = f.reg("b32")  # element (p*q, bcol) of B, in the tile's batch; with ldmatrix (lr, bcol)
            f.emit(f"mad.lo.s32 {r}, {lr if ldm else qp}, {n}, {bcol}")
            if key in pair:  # lanes 16-31: the next tile's columns
                f.emit(f"add.s32 {r}, {r}, {lc}")
            if batch > 1:
                bi = f.reg("b32")
                f.emit(f"shr.u32 {bi}, {row}, {m.bit_length() - 1}")
                f.emit(f"mad.lo.s32 {r}, {bi}, {k * n}, {r}")
            f.emit(f"mad.lo.s32 {r}, {r}, {eb}, {base}")
            b_addr[key] = r
    half = mma.k // 2

    # every bit below 7 that a thread's A or B base may have: its row's (rows K or N elements apart)
    # and its column's (A: p*q elements, or with ldmatrix 0 or 8; B: any column)
    def low_bits(step: int, values) -> int:
        bits = 0
        for v in list(values) + [r * step for r in range(128)]:
            bits |= v % 128
        return bits
    a_bits = low_bits(k * ea, [8 * ea] if ldm else [q * per * ea for q in range(4)])
    b_bits = low_bits(k * eb, [0, 8 * eb]) if b_rows else low_bits(n * eb, [c * eb for c in range(min(n, 128))])
    a_at, b_at = _SwizzledOperand(lw, a, a_bits, delta), _SwizzledOperand(lw, b, b_bits, delta)

    for k0 in range(0, k, mma.k):
        a_frag: dict[int, list[str]] = {}
        b_frag: dict[int, list[str]] = {}
        for j in range(c.per_warp):
            key = b_key(j)
            if a_key(j) not in a_frag:
                if in_registers:
                    a_frag[a_key(j)] = a_registers(lw, a, a_key(j), k0)
                elif ldm:
                    a_frag[a_key(j)] = [f.reg("b32") for _ in range(4)]
                    f.emit(f"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {regs(a_frag[a_key(j)])}, "
                           f"{a_at(a_addr[a_key(j)], oa + k0 * ea)}")
                else:
                    a_frag[a_key(j)] = [_load_a(lw, a_at(a_addr[a_key(j)], oa + (k0 + (i & 1) * 8 * k
                                                                                  + (i >> 1) * half) * ea), ea, per)
                                        for i in range(4)]
            ra = a_frag[a_key(j)]
            if ldm and key not in b_frag:
                first = key - 1 if key % 2 and pair.get(key - 1) == key else key
                count = 4 if first in pair else 2
                got = [f.reg("b32") for _ in range(count)]
                at = b_at(b_addr[first], ob + (k0 * eb if b_rows else k0 * n * eb))
                f.emit(f"ldmatrix.sync.aligned.m8n8.x{count}{'' if b_rows else '.trans'}.shared.b16 {regs(got)}, {at}")
                b_frag[first] = got[:2]
                if count == 4:
                    b_frag[first + 1] = got[2:]
            else:
                if key not in b_frag:
                    b_frag[key] = [_load_b(lw, [b_at(b_addr[key], ob + (k0 + jj * half + e) * n * eb)
                                                for e in range(per)], eb) for jj in range(2)]
            acc_in = (c.regs if k0 == 0 else out.regs)[4 * j:4 * j + 4]
            acc_out = out.regs[4 * j:4 * j + 4]
            f.emit(f"{mma.instruction} {regs(acc_out)}, {regs(ra)}, {regs(b_frag[key])}, {regs(acc_in)}")
    return out


def _convert_operand(lw: KernelLowering, op: Operation, index: int, x) -> TileValue | None:
    """The :data:`~tile_lsp.codegen.lower.OPERAND_HOOKS` entry: a :class:`FragmentTile` read by an op
    that does not take fragments (:func:`takes_fragments`) is converted to the distribution there; a
    :class:`ScaledFragments` read by anything but an MMA's C is computed there first."""
    if isinstance(x, ScaledFragments) and not (op.name in MMA_OPS and index == 2):
        x = scale_rows(lw, x.frag, x.scale, x.instruction)
        return x if takes_fragments(op, index) else from_fragments(lw, x)
    if isinstance(x, FragmentTile) and not takes_fragments(op, index):
        return from_fragments(lw, x)
    return None


OPERAND_HOOKS.append(_convert_operand)
