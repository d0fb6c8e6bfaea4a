"""Lowering of constants and of the ops that move data between threads.

``reshape`` keeps the row-major linear order, so it is free in the
distribution of :mod:`tile_lsp.codegen.ptx`; ``broadcast``, ``permute``,
``extract``, ``insert``, ``cat``, ``pack``/``unpack``, ``reduce``, ``scan``
and the MMA ops stage their sources in shared memory and read them back
with each result slot's source index.  A ``reduce`` or ``scan`` that
``tile-assign-layouts`` marked ``tile_lsp.staging = "shfl"`` runs in
registers and warp shuffles (:mod:`tile_lsp.codegen.reductions`,
:mod:`tile_lsp.codegen.scans`); other reductions run their body (inlined) in
a loop over the reduced dimension of a staged copy; ``mmaf``/``mmai``/
``mmaf_scaled`` run on the tensor cores (``mma.sync`` m16n8k16) for f16/bf16
operands with an f32 accumulator from sm_80 (:func:`mma_sync_applies`), and
otherwise compute each accumulator element as a dot product over K in f32
(f64 for f64, i32 for mmai) on the CUDA cores.  Semantics: NVIDIA cuda-tile
``Ops.td``.
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.codegen.lower import KernelLowering, handler, load_pred_byte
from tile_lsp.codegen.ops_elementwise import zext
from tile_lsp.codegen.mma_fragments import (MMA_SYNC_SMEM_LIMIT, FragmentTile, broadcast_only_scales,
                                            fragment_loads, fragment_shape_fits, lane_coordinates, ldmatrix_lane,
                                            load_fragments, mma_into_fragments, mma_shape, mma_shape_of,
                                            new_fragments, operand_at, operand_signs, scale_rows,
                                            store_fragments, RowFragments, ScaledFragments, from_fragments)
from tile_lsp.codegen.fragment_layouts import TILE, mark, row_blocked_fits, splat_bits
from tile_lsp.codegen.ptx import (GlobalTile, LoweringError, StagedTile, TileValue, reg_class, row_major_strides,
                                  staged_bytes, unravel)
from tile_lsp.codegen.reductions import (emit_shuffle_reduce, identity_regs, lane_bit, marked_in_registers,
                                         reduction_plan_of, run_body, shuffle_register)
from tile_lsp.codegen.scans import emit_scan, scan_plan_of
from tile_lsp.dialect import types as T


@handler("constant")
def _constant(lw: KernelLowering, op: Operation) -> None:
    from tile_lsp.analysis.ir.numbers import dense_raw_data
    out = lw.new_result(op)
    value = op.attr("value")
    ty = op.results[0].type
    raw = dense_raw_data(value, ty)
    elem = out.elem
    w = T.bit_width(elem) or 32
    if w == 1:
        bits = [1 if (raw[i // 8] >> (i % 8)) & 1 else 0 for i in range(out.n)] if len(raw) > 1 or out.n == 1 \
            else [1 if raw[0] else 0]
    elif w < 8:
        per = 8 // w
        bits = [(raw[i // per] >> ((i % per) * w)) & ((1 << w) - 1) for i in range(len(raw) * per)]
    else:
        esz = w // 8
        bits = [int.from_bytes(raw[i:i + esz], "little") for i in range(0, len(raw), esz)]
    cls = reg_class(elem)
    if len(bits) == 1 or len(set(bits)) == 1:
        for r in out.regs:
            lw.mov(cls, r, lw.const_reg(elem, bits[0]))
        return
    # a non-splat constant: a .const table indexed by each slot's linear index
    esz = {"pred": 1, "b16": 2, "b32": 4, "b64": 8, "f32": 4, "f64": 8}[cls]
    sym = f"__tile_lsp_cst_{len(lw.decls)}"
    vals = []
    for b in bits[:out.n]:
        if cls == "b32" and w < 32 and b >> (w - 1):
            b = (b - (1 << w)) & 0xFFFFFFFF
        vals.append(str(b))
    lw.decls[sym] = f".const .align {esz} .b{esz * 8} {sym}[{out.n}] = {{{', '.join(vals)}}};"
    f = lw.f
    base = f.reg("b64")
    f.emit(f"mov.u64 {base}, {sym}")
    for s, r in enumerate(out.regs):
        a = f.reg("b64")
        f.emit(f"mad.wide.u32 {a}, {lw.lin(out.n, s)}, {esz}, {base}")
        if cls == "pred":
            load_pred_byte(f, r, "ld.const", a)
        else:
            f.emit(f"ld.const.b{esz * 8} {r}, [{a}]")


@handler("iota")
def _iota(lw: KernelLowering, op: Operation) -> None:
    out = lw.new_result(op)
    w = T.bit_width(out.elem) or 32
    for s, r in enumerate(out.regs):
        lin = lw.lin(out.n, s)
        if w == 64:
            lw.f.emit(f"cvt.u64.u32 {r}, {lin}")
        else:
            lw.f.emit(f"mov.b32 {r}, {lin}")
            if w in (8, 16):
                lw.f.emit(f"cvt.s32.s{w} {r}, {r}")


@handler("reshape")
def _reshape(lw: KernelLowering, op: Operation) -> None:
    src = lw.get(op.operands[0])
    if isinstance(src, GlobalTile):  # not loaded: the staging store copies it (ops_memory.copy_to_staged)
        lw.set(op.results[0], src)
        return
    src = lw.tile(op.operands[0])
    ty = op.results[0].type
    lw.set(op.results[0], TileValue(tuple(int(d) for d in ty.shape), src.elem, src.regs))


@handler("assume")
def _assume(lw: KernelLowering, op: Operation) -> None:
    lw.set(op.results[0], lw.get(op.operands[0]))


def _local_source(lw: KernelLowering, src: TileValue, out: TileValue, s: int, source_of) -> tuple[str, int] | None:
    """Where the threads find the source element of result slot ``s`` without shared memory:
    ``("slot", k)``: every thread holds it in its own slot ``k``; ``("lane", i)``: it is the same
    element ``i`` in every thread, held by lane ``i`` of every warp (a replicated source of at most 32
    elements: ``shfl.sync.idx``); ``None``: it needs the staging buffer.  ``source_of`` maps a result
    linear index to the source's (ints; the distribution of :mod:`tile_lsp.codegen.ptx`).

    Shapes and ``T`` are powers of two, so the thread bits are the low bits of the result index and
    ``source_of`` (broadcast, permute; extract, insert and cat at constant places, within one slot)
    only moves, drops or sets bit fields: every index map here is affine over the bits of ``t``,
    and thread 0 with the threads ``2**k`` decide for all ``T``."""
    T = lw.threads
    ts = [0] + [1 << k for k in range(T.bit_length() - 1)]
    srcs = [source_of(s * T + t if out.n >= T else t % out.n) for t in ts]
    if src.n >= T:
        slot = srcs[0] // T
        if all(i == slot * T + t for t, i in zip(ts, srcs)):
            return ("slot", slot)
        return None
    if all(i == t % src.n for t, i in zip(ts, srcs)):
        return ("slot", 0)
    if src.n <= 32 and all(i == srcs[0] for i in srcs):
        return ("lane", srcs[0])
    return None


def _slot_box(lw: KernelLowering, out: TileValue, s: int) -> list[tuple[int, int]]:
    """The coordinates the threads hold in result slot ``s``, per dimension ``(first, last)``: the
    elements ``s * T .. s * T + T - 1`` (an aligned run of ``T`` row-major indices in a tile of
    power-of-two dimensions: a box), or the whole tile when it is smaller than the CTA."""
    if out.n < lw.threads:
        return [(0, d - 1) for d in out.shape]
    T = lw.threads
    return list(zip(unravel(s * T, out.shape), unravel(s * T + T - 1, out.shape)))


def _local_part(lw: KernelLowering, parts: tuple[TileValue, ...], out: TileValue, s: int, part_of,
                source_of) -> tuple[TileValue, int] | None:
    """(part, slot) when every thread holds the element of result slot ``s`` itself, in that slot of
    the same one of ``parts`` (``cat``'s two operands, ``insert``'s destination and block): a move;
    ``None`` otherwise.  ``part_of`` maps the box of the slot's coordinates (:func:`_slot_box`) to
    the part all of them come from (``None``: not one part); ``source_of`` maps a result linear
    index to its index in that part, a map over bit fields as :func:`_local_source` needs."""
    which = part_of(_slot_box(lw, out, s))
    if which is None:
        return None
    part = parts[which]
    where = _local_source(lw, part, out, s, source_of)
    return (part, where[1]) if where is not None and where[0] == "slot" else None


def _constant_index(v) -> int | None:
    """The value of the 0-d integer tile ``v`` (an extract or insert index) when a ``constant`` op
    defines it and it is not negative, else ``None``."""
    bits = splat_bits(v)
    width = T.bit_width(v.type.element) if isinstance(v.type, T.TileType) else None
    if bits is None or not width or bits >> (width - 1):
        return None
    return bits


def _gather(lw: KernelLowering, src: TileValue, out: TileValue, index_of, source_of=None) -> None:
    """out[slot] = src[index_of(coords of slot)] (``index_of`` gives a b32 register).

    With ``source_of`` (result linear index -> source linear index, on ints), a result slot whose
    source every thread holds itself is a move, and one whose source is the same element of a small
    replicated tile in every thread a ``shfl.sync.idx`` (:func:`_local_source`; one per source
    element, however many slots take it); the other slots read a staged copy of ``src`` from
    shared memory."""
    cls = reg_class(out.elem)
    if src.n == 1:
        for r in out.regs:
            lw.mov(cls, r, src.regs[0])
        return
    local = [_local_source(lw, src, out, s, source_of) if source_of else None for s in range(len(out.regs))]
    off = None
    shuffled: dict[int, str] = {}  # source lane -> its element, shuffled once (a row's slots share it)
    for s, r in enumerate(out.regs):
        where = local[s]
        if where is not None and where[0] == "slot":
            lw.mov(cls, r, src.regs[where[1]])
        elif where is not None:
            if where[1] not in shuffled:
                shuffled[where[1]] = shuffle_register(lw, src.regs[0], cls, "idx", where[1])
            lw.mov(cls, r, shuffled[where[1]])
        else:
            if off is None:
                (off,) = lw.stage([src])
            idx = index_of(lw.coords(out.shape, s))
            lw.mov(cls, r, lw.smem_read(src.elem, off, idx))


@handler("broadcast")
def _broadcast(lw: KernelLowering, op: Operation) -> None:
    if broadcast_only_scales(op):  # its uses read the source (mma_fragments.scale_rows)
        return
    src = lw.tile(op.operands[0])
    out = lw.new_result(op)
    sst = row_major_strides(src.shape)
    if src.n == out.n:
        out.regs[:] = src.regs
        return

    def index_of(coords):
        return lw.linear([(c, sst[d] if src.shape[d] != 1 else 0) for d, c in enumerate(coords)])

    def source_of(e):
        return sum(c * sst[d] for d, c in enumerate(unravel(e, out.shape)) if src.shape[d] != 1)
    _gather(lw, src, out, index_of, source_of)


@handler("permute")
def _permute(lw: KernelLowering, op: Operation) -> None:
    src = lw.tile(op.operands[0])
    out = lw.new_result(op)
    perm = list(op.attr("permutation").values)
    sst = row_major_strides(src.shape)

    def index_of(coords):
        return lw.linear([(c, sst[perm[i]]) for i, c in enumerate(coords)])

    def source_of(e):
        return sum(c * sst[perm[i]] for i, c in enumerate(unravel(e, out.shape)))
    _gather(lw, src, out, index_of, source_of)


@handler("extract")
def _extract(lw: KernelLowering, op: Operation) -> None:
    src = lw.tile(op.operands[0])
    idx = [lw.scalar_int(v) for v in op.operands[1:]]
    out = lw.new_result(op)
    sst = row_major_strides(src.shape)
    f = lw.f
    starts = []
    for d, r in enumerate(idx):
        t = f.reg("b32")
        f.emit(f"mul.lo.s32 {t}, {r}, {out.shape[d] * sst[d]}")
        starts.append(t)

    def index_of(coords):
        base = lw.linear([(c, sst[d]) for d, c in enumerate(coords)])
        for t in starts:
            f.emit(f"add.s32 {base}, {base}, {t}")
        return base
    # constant indices the tile holds (the verifier warns of the others, "may be out of bounds": read
    # through the staging buffer like a run-time index, undefined as there)
    known = [k if k is not None and 0 <= k < src.shape[d] // out.shape[d] else None
             for d, k in enumerate(_constant_index(v) for v in op.operands[1:])]

    def source_of(e):
        return sum((c + k * out.shape[d]) * sst[d] for d, (c, k) in enumerate(zip(unravel(e, out.shape), known)))
    # constant indices: the slots whose element a thread holds itself are moves
    _gather(lw, src, out, index_of, source_of if None not in known else None)


@handler("insert")
def _insert(lw: KernelLowering, op: Operation) -> None:
    src = lw.tile(op.operands[0])
    dest = lw.tile(op.operands[1])
    idx = [lw.scalar_int(v) for v in op.operands[2:]]
    out = lw.new_result(op)
    f = lw.f
    sst = row_major_strides(src.shape)
    cls = reg_class(out.elem)
    known = [_constant_index(v) for v in op.operands[2:]]
    local: list[tuple[TileValue, int] | None] = [None] * len(out.regs)
    if None not in known:
        block = [(k * n, k * n + n - 1) for k, n in zip(known, src.shape)]

        def part_of(box):  # 1: inside the inserted block, 0: in the destination, None: both
            if all(b0 <= lo and hi <= b1 for (lo, hi), (b0, b1) in zip(box, block)):
                return 1
            if any(hi < b0 or b1 < lo for (lo, hi), (b0, b1) in zip(box, block)):
                return 0
            return None

        def source_of(e):
            coords = [c - b0 for c, (b0, _) in zip(unravel(e, out.shape), block)]
            if all(0 <= c < n for c, n in zip(coords, src.shape)):
                return sum(c * sst[d] for d, c in enumerate(coords))
            return e
        local = [_local_part(lw, (dest, src), out, s, part_of, source_of) for s in range(len(out.regs))]
    off = None
    for s, r in enumerate(out.regs):
        if local[s] is not None:
            lw.mov(cls, r, local[s][0].regs[local[s][1]])
            continue
        if off is None:
            (off,) = lw.stage([src])
        coords = lw.coords(out.shape, s)
        inside = f.reg("pred")
        f.emit(f"setp.eq.u32 {inside}, 0, 0")
        terms = []
        for d, c in enumerate(coords):
            start = f.reg("b32")
            f.emit(f"mul.lo.s32 {start}, {idx[d]}, {src.shape[d]}")
            rel = f.reg("b32")
            f.emit(f"sub.s32 {rel}, {c}, {start}" if not isinstance(c, int) else f"neg.s32 {rel}, {start}")
            p = f.reg("pred")
            f.emit(f"setp.lt.u32 {p}, {rel}, {src.shape[d]}")
            f.emit(f"and.pred {inside}, {inside}, {p}")
            terms.append((rel, sst[d]))
        i = lw.linear(terms)
        v = lw.smem_read(src.elem, off, i, inside)
        lw.select(reg_class(out.elem), r, inside, v, dest.regs[s])


@handler("cat")
def _cat(lw: KernelLowering, op: Operation) -> None:
    a, b = lw.tile(op.operands[0]), lw.tile(op.operands[1])
    out = lw.new_result(op)
    dim = op.attr("dim").value
    f = lw.f
    ast, bst = row_major_strides(a.shape), row_major_strides(b.shape)
    cls = reg_class(out.elem)

    def part_of(box):  # 0: from a, 1: from b, None: both
        lo, hi = box[dim]
        return 0 if hi < a.shape[dim] else 1 if lo >= a.shape[dim] else None

    def source_of(e):  # index in a, or in b
        coords = unravel(e, out.shape)
        if coords[dim] < a.shape[dim]:
            return sum(c * ast[d] for d, c in enumerate(coords))
        coords[dim] -= a.shape[dim]
        return sum(c * bst[d] for d, c in enumerate(coords))
    local = [_local_part(lw, (a, b), out, s, part_of, source_of) for s in range(len(out.regs))]
    # a thread bit picks the operand (tiles smaller than the CTA, or a small dim): when the element
    # with that bit cleared is in the same slot of a and of b in every thread, one selp on the bit
    pick = (a.shape[dim] * row_major_strides(out.shape)[dim]).bit_length() - 1
    ost = min(out.n, lw.threads)

    def same_place(e):  # index in a (and in b: they have one shape) of e with the picking bit cleared
        return sum((c % a.shape[d]) * ast[d] for d, c in enumerate(unravel(e, out.shape)))
    staged = None
    for s, r in enumerate(out.regs):
        if local[s] is not None:
            lw.mov(cls, r, local[s][0].regs[local[s][1]])
            continue
        if a.shape == b.shape and 1 << pick < ost:
            wa, wb = _local_source(lw, a, out, s, same_place), _local_source(lw, b, out, s, same_place)
            if wa is not None and wb is not None and wa[0] == wb[0] == "slot":
                lw.select(cls, r, lane_bit(lw, 1 << pick), b.regs[wb[1]], a.regs[wa[1]])
                continue
        if staged is None:
            staged = lw.stage([a, b])
        oa, ob = staged
        coords = lw.coords(out.shape, s)
        c = coords[dim]
        in_a = f.reg("pred")
        f.emit(f"setp.lt.u32 {in_a}, {c}, {a.shape[dim]}")
        in_b = f.reg("pred")
        f.emit(f"not.pred {in_b}, {in_a}")
        ia = lw.linear([(x, ast[d]) for d, x in enumerate(coords)])
        ib = lw.linear([(x, bst[d]) for d, x in enumerate(coords)], -a.shape[dim] * bst[dim])
        va = lw.smem_read(a.elem, oa, ia, in_a)
        vb = lw.smem_read(b.elem, ob, ib, in_b)
        if cls == "pred":
            f.emit(f"or.pred {r}, {va}, {vb}")  # predicated reads leave the other one false
        else:
            f.emit(f"selp.{cls} {r}, {va}, {vb}, {in_a}")


# ---------------------------------------------------------------------------
# pack / unpack: reinterpret the bytes of a 1-d tile
# ---------------------------------------------------------------------------

@handler("pack", "unpack")
def _pack(lw: KernelLowering, op: Operation) -> None:
    src = lw.tile(op.operands[0])
    out = lw.new_result(op)
    f = lw.f
    sw, ow = T.bit_width(src.elem), T.bit_width(out.elem)
    if sw is None or ow is None or sw < 8:
        raise LoweringError(f"'{op.name}' from {src.elem} is not supported by the lowering")
    # stage the source as its memory bytes
    nbytes = src.n * sw // 8
    lw.reserve(nbytes)
    base = lw.smem_addr()
    f.barrier()
    own = lw.owner(src.n)
    from tile_lsp.codegen.ops_memory import load_element, store_element
    for s, r in enumerate(src.regs):
        a = f.reg("b32")
        f.emit(f"mad.lo.s32 {a}, {lw.lin(src.n, s)}, {sw // 8}, {base}")
        store_element(lw, src.elem, r, a, own, "", ".shared")
    f.barrier()
    for s, r in enumerate(out.regs):
        lin = lw.lin(out.n, s)
        a = f.reg("b32")
        if ow >= 8:
            f.emit(f"mad.lo.s32 {a}, {lin}, {ow // 8}, {base}")
            load_element(lw, out.elem, r, a, None, "", ".shared")
        else:  # 4-bit elements: two per byte, the low nibble first
            per = 8 // ow
            q = f.reg("b32")
            f.emit(f"shr.u32 {q}, {lin}, {per.bit_length() - 1}")
            f.emit(f"add.s32 {a}, {q}, {base}")
            t = f.reg("b16")
            f.emit(f"ld.shared.u8 {t}, [{a}]")
            sh = f.reg("b32")
            f.emit(f"and.b32 {sh}, {lin}, {per - 1}")
            f.emit(f"mul.lo.s32 {sh}, {sh}, {ow}")
            t32 = f.reg("b32")
            f.emit(f"cvt.u32.u16 {t32}, {t}")
            f.emit(f"shr.u32 {t32}, {t32}, {sh}")
            f.emit(f"and.b32 {t32}, {t32}, {(1 << ow) - 1}")
            f.emit(f"cvt.u16.u32 {r}, {t32}")


# ---------------------------------------------------------------------------
# reduce / scan
# ---------------------------------------------------------------------------

@handler("reduce", "scan", "nv_tileas.reduce", "nv_tileas.scan")
def _reduce_scan(lw: KernelLowering, op: Operation) -> None:
    srcs = [_operand(lw, v) for v in op.operands]
    outs = [lw.new_result(op, i) for i in range(len(op.results))]
    dim = op.attr("dim").value
    is_scan = op.name.endswith("scan")
    if marked_in_registers(op) and all(isinstance(s, TileValue) for s in srcs):
        if is_scan:
            emit_scan(lw, op, srcs, outs, scan_plan_of(op, lw.threads))
        else:
            emit_shuffle_reduce(lw, op, srcs, outs, reduction_plan_of(op, lw.threads))
        return
    reverse = is_scan and isinstance(op.attr("reverse"), A.BoolAttr) and op.attr("reverse").value
    f = lw.f
    shape = srcs[0].shape
    extent = shape[dim]
    sst = row_major_strides(shape)
    offs = _in_smem(lw, srcs)
    elems = [s.elem for s in srcs]
    for s in range(len(outs[0].regs)):
        coords = lw.coords(outs[0].shape, s)
        if is_scan:
            full = list(coords)
            pos = coords[dim]
        else:
            full = list(coords[:dim]) + [0] + list(coords[dim:])
            pos = None
        base = lw.linear([(c, sst[d]) for d, c in enumerate(full) if d != dim])
        accs = [f.reg(reg_class(e)) for e in elems]
        for a, i, e in zip(accs, identity_regs(lw, op, elems), elems):
            lw.mov(reg_class(e), a, i)
        k = f.reg("b32")
        end = f.reg("b32")
        if is_scan and not reverse:
            f.emit(f"mov.b32 {k}, 0")
            f.emit(f"add.s32 {end}, {pos}, 1" if not isinstance(pos, int) else f"mov.b32 {end}, {pos + 1}")
        elif is_scan:
            f.emit(f"mov.b32 {k}, {extent - 1}")
            f.emit(f"mov.b32 {end}, {pos}")
        else:
            f.emit(f"mov.b32 {k}, 0")
            f.emit(f"mov.b32 {end}, {extent}")
        head, done = f.label("red"), f.label("red_end")
        p = f.reg("pred")
        f.place(head)
        if reverse:
            f.emit(f"setp.lt.s32 {p}, {k}, {end}")
        else:
            f.emit(f"setp.ge.s32 {p}, {k}, {end}")
        f.emit(f"@{p} bra.uni {done}")
        idx = f.reg("b32")
        f.emit(f"mad.lo.s32 {idx}, {k}, {sst[dim]}, {base}")
        xs = [lw.smem_read(e, o, idx) for e, o in zip(elems, offs)]
        run_body(lw, op, accs, xs, elems)
        f.emit(f"add.s32 {k}, {k}, {-1 if reverse else 1}")
        f.emit(f"bra.uni {head}")
        f.place(done)
        for o, a, e in zip(outs, accs, elems):
            lw.mov(reg_class(e), o.regs[s], a)


# ---------------------------------------------------------------------------
# MMA
# ---------------------------------------------------------------------------



def _operand(lw: KernelLowering, v) -> TileValue | StagedTile:
    """An operand read from shared memory: a tile in registers, or a buffer the nv_tileas stage
    staged (``alloc_tensor`` + ``tiled_store``)."""
    x = lw.get(v)
    return x if isinstance(x, StagedTile) else lw.tile(v)


def _in_smem(lw: KernelLowering, xs: list[TileValue | StagedTile]) -> list[int]:
    """Byte offsets of the operands ``xs`` in the staging scratch, with one barrier that makes them
    all visible: a :class:`StagedTile` (operand of ``nv_tileas.dot``/``reduce``/``scan`` in the
    nv_tileas stage) is read where its ``alloc_tensor`` put it; register tiles are staged after the
    last staged buffer (no barrier before them then: the staged stores' own barrier ended the earlier
    reads, and only writes came after it; unless every staged buffer is pinned, staged before a loop)."""
    staged = [x for x in xs if isinstance(x, StagedTile)]
    after = max([x.end for x in staged] + [0])
    regs = [x for x in xs if isinstance(x, TileValue)]
    if regs:
        # a pinned buffer (below the scratch, staged before a loop) was not just stored: no barrier then
        placed = iter(lw.stage(regs, after, sync_before=not any(x.offset >= 0 for x in staged)))
    else:
        lw.f.barrier()
    return [x.offset if isinstance(x, StagedTile) else next(placed) for x in xs]


def mma_sync_applies(lw: KernelLowering, a: TileValue | StagedTile, b: TileValue | StagedTile, c: TileValue,
                     out: T.Type) -> bool:
    """Whether ``mma.sync.aligned.m16n8k16`` computes this MMA: sm_80 or newer, A and B both f16 or
    both bf16, f32 accumulator, a 2-d problem with M % 16 == N % 8 == K % 16 == 0, and A, B, C
    staged together within :data:`MMA_SYNC_SMEM_LIMIT` (PTX ISA "Warp-level matrix multiply-accumulate
    instructions": mma.m16n8k16 for .f16/.bf16 with .f32 accumulators, sm_80)."""
    if lw.target.sm < 80 or len(a.shape) != 2 or a.elem != b.elem:
        return False
    if not (isinstance(a.elem, T.FloatType) and a.elem.name in ("f16", "bf16")):
        return False
    if not (isinstance(c.elem, T.FloatType) and c.elem.name == "f32" and T.element_of(out) == c.elem):
        return False
    (M, K), N = a.shape, b.shape[-1]
    if M % 16 or N % 8 or K % 16 or (N // 8) & (N // 8 - 1):
        return False
    return (M * K + K * N) * 2 + M * N * 4 + 16 <= MMA_SYNC_SMEM_LIMIT


def _mma_sync(lw: KernelLowering, a: TileValue | StagedTile, b: TileValue | StagedTile, c: TileValue,
              out: TileValue, c_bits: int | None = None, keep: bool = False) -> FragmentTile | None:
    """D = A x B + C on the tensor cores with ``mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32``.

    A (M x K), B (K x N) and C (M x N) are in shared memory row-major (A and B staged by the
    nv_tileas stage's ``alloc_tensor``/``tiled_store``, or here, C here).  Where every warp gets
    the same number of 16x8 output tiles, a warp computes all of its tiles at once, unrolled
    (:func:`~tile_lsp.codegen.mma_fragments.mma_into_fragments`, in the tile order that loads fewer
    fragments); otherwise warp ``w`` loops over the tiles ``w, w + warps, ...`` (row-major over the
    (M/16) x (N/8) tiles), loading each one's C fragment and running K/16 MMAs.  Either writes D
    over C; after a barrier every thread reads its result slots.  Fragments (PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point
    type"), with ``g = lane >> 2`` and ``q = lane & 3``: A register i (0..3) holds row ``g + 8 *
    (i & 1)``, columns ``2q + 8 * (i >> 1)`` and the next (one 32-bit shared load, A being
    row-major); B register j (0..1) holds rows ``2q + 8 * j`` and the next of column ``g``; C/D
    element i (0..3) is row ``g + 8 * (i >> 1)``, column ``2q + (i & 1)``.  C and D share a swizzled
    buffer (:meth:`~tile_lsp.codegen.lower.KernelLowering.swizzled`) after A and B; with ``c_bits``
    (C is that f32 in every element, :func:`splat_bits`), C is not staged: the accumulators start
    from it.  With ``keep`` (and every warp owning whole rows of tiles), D is not written back: the
    row-blocked fragments are returned instead (``codegen/fragment_layouts.py``).
    """
    f = lw.f
    (M, K), N = a.shape, b.shape[-1]
    # C and D in a swizzled buffer after A and B (a 16x8 tile's 8 rows in 8 different banks)
    oa, ob = _in_smem(lw, [a, b])
    ends = [off + x.n * staged_bytes(x.elem) for x, off in ((a, oa), (b, ob))]
    oc = (max(ends + [0]) + 127) // 128 * 128  # in the scratch, above any pinned buffer
    c_end = oc + M * N * staged_bytes(c.elem)  # reserved where C or D is in shared memory
    if c_bits is None:  # right after A's and B's stores and their barrier, unless both are pinned
        lw.reserve(c_end)
        pinned = all(isinstance(x, StagedTile) and x.offset < 0 for x in (a, b))
        lw.stage([c], oc, sync_before=pinned, swizzle=True)
    shape = mma_shape(a.elem, b.elem, c.elem, lw.target.sm)
    if shape is not None and fragment_shape_fits(M, N, K, lw.threads):
        # every tile of a warp at once, unrolled (mma_fragments.mma_into_fragments): a warp's MMAs are
        # independent of each other, where the loop below runs one tile after another
        # the order of a warp's tiles that loads fewer fragment registers a k-step (one warp's tiles in
        # one tile row share their A fragment: attention's S = Q K^T, 8 tiles a warp, 20 registers, not 34)
        blocked = fragment_loads(M, N, lw.threads, True) < fragment_loads(M, N, lw.threads, False)
        keep = keep and row_blocked_fits(M, N, lw.threads)
        acc = new_fragments(lw, (M, N), c.elem, blocked or keep)
        if c_bits is None:
            load_fragments(lw, acc, oc)
        else:
            for r in acc.regs:
                f.emit(f"mov.b32 {r}, {c_bits}")
        d = mma_into_fragments(lw, a, b, acc, [oa, ob], shape)
        if keep:
            return d
        lw.reserve(c_end)
        store_fragments(lw, d, oc)
        f.barrier()
        lw.read_staged(out, oc, swizzle=True)
        return None
    lw.reserve(c_end)
    base = lw.smem_addr()
    kind = a.elem.name
    warps = max(1, lw.threads // 32)
    tiles_n = N // 8
    ntiles = (M // 16) * tiles_n
    warp, g, q2 = lane_coordinates(lw)
    tile = f.reg("b32")
    f.emit(f"mov.b32 {tile}, {warp}")
    p = f.reg("pred")
    head, done = f.label("mma_tile"), f.label("mma_tile_end")
    f.place(head)
    f.emit(f"setp.ge.u32 {p}, {tile}, {ntiles}")
    f.emit(f"@{p} bra.uni {done}")
    tm, tn = f.reg("b32"), f.reg("b32")
    f.emit(f"shr.u32 {tm}, {tile}, {tiles_n.bit_length() - 1}")
    f.emit(f"and.b32 {tn}, {tile}, {tiles_n - 1}")
    row = f.reg("b32")  # g + 16 * tm
    f.emit(f"mad.lo.s32 {row}, {tm}, 16, {g}")
    col = f.reg("b32")  # 2q + 8 * tn (C/D columns)
    f.emit(f"mad.lo.s32 {col}, {tn}, 8, {q2}")
    bcol = f.reg("b32")  # g + 8 * tn (B column)
    f.emit(f"mad.lo.s32 {bcol}, {tn}, 8, {g}")
    # byte addresses of the C fragment: rows row and row + 8, columns col and col + 1
    caddr = f.reg("b32")
    f.emit(f"mad.lo.s32 {caddr}, {row}, {N}, {col}")
    f.emit(f"mad.lo.s32 {caddr}, {caddr}, 4, {base}")
    acc = [f.reg("f32") for _ in range(4)]
    for i, r in enumerate(acc):
        if c_bits is None:
            f.emit(f"ld.shared.f32 {r}, [{lw.swizzled(caddr, oc + (i >> 1) * 8 * N * 4 + (i & 1) * 4)}]")
        else:
            f.emit(f"mov.b32 {r}, {c_bits}")
    # A: element (row, k0 + 2q) and B: element (k0 + 2q, bcol), advanced by 16 columns / rows per step;
    # at 16-byte aligned offsets, the rows ldmatrix takes instead (mma_fragments.ldmatrix_lane)
    regs = lambda rs: "{" + ", ".join(rs) + "}"  # noqa: E731
    ldm = oa % 16 == 0 and ob % 16 == 0
    aaddr, baddr = f.reg("b32"), f.reg("b32")
    if ldm:
        lr, lc = ldmatrix_lane(lw)
        f.emit(f"sub.s32 {aaddr}, {row}, {g}")
        f.emit(f"add.s32 {aaddr}, {aaddr}, {lr}")
        f.emit(f"mad.lo.s32 {aaddr}, {aaddr}, {K}, {lc}")
        f.emit(f"sub.s32 {baddr}, {bcol}, {g}")
        f.emit(f"mad.lo.s32 {baddr}, {lr}, {N}, {baddr}")
    else:
        f.emit(f"mad.lo.s32 {aaddr}, {row}, {K}, {q2}")
        f.emit(f"mad.lo.s32 {baddr}, {q2}, {N}, {bcol}")
    f.emit(f"mad.lo.s32 {aaddr}, {aaddr}, 2, {base}")
    f.emit(f"mad.lo.s32 {baddr}, {baddr}, 2, {base}")
    k = f.reg("b32")
    f.emit(f"mov.b32 {k}, 0")
    khead = f.label("mma_k")
    f.place(khead)
    ra = [f.reg("b32") for _ in range(4)]
    rb = [f.reg("b32") for _ in range(2)]

    if ldm:
        f.emit(f"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {regs(ra)}, {operand_at(lw, a, aaddr, oa)}")
        f.emit(f"ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {regs(rb)}, {operand_at(lw, b, baddr, ob)}")
    else:
        for i, r in enumerate(ra):
            f.emit(f"ld.shared.b32 {r}, {operand_at(lw, a, aaddr, oa + (i & 1) * 8 * K * 2 + (i >> 1) * 8 * 2)}")
        for j, r in enumerate(rb):
            lo, hi = f.reg("b16"), f.reg("b16")
            f.emit(f"ld.shared.b16 {lo}, {operand_at(lw, b, baddr, ob + j * 8 * N * 2)}")
            f.emit(f"ld.shared.b16 {hi}, {operand_at(lw, b, baddr, ob + (j * 8 + 1) * N * 2)}")
            f.emit(f"mov.b32 {r}, {{{lo}, {hi}}}")
    f.emit(f"mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32 {regs(acc)}, {regs(ra)}, {regs(rb)}, "
           f"{regs(acc)}")
    f.emit(f"add.s32 {aaddr}, {aaddr}, 32")
    f.emit(f"add.s32 {baddr}, {baddr}, {16 * N * 2}")
    f.emit(f"add.s32 {k}, {k}, 16")
    f.emit(f"setp.lt.s32 {p}, {k}, {K}")
    f.emit(f"@{p} bra.uni {khead}")
    for i, r in enumerate(acc):
        f.emit(f"st.shared.f32 [{lw.swizzled(caddr, oc + (i >> 1) * 8 * N * 4 + (i & 1) * 4)}], {r}")
    f.emit(f"add.s32 {tile}, {tile}, {warps}")
    f.emit(f"bra.uni {head}")
    f.place(done)
    f.barrier()
    lw.read_staged(out, oc, swizzle=True)
    return None


#: the f64 MMA of the tensor cores (DMMA, sm_80): PTX ISA "Matrix Fragments for mma.m8n8k4 with .f64
#: floating point type"
DMMA = "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"


def dmma_applies(lw: KernelLowering, a: TileValue | StagedTile, b: TileValue | StagedTile, c: TileValue,
                 out: T.Type) -> bool:
    """Whether :data:`DMMA` computes this MMA (:func:`_mma_f64`): sm_80 or newer, f64 A, B and C, a 2-d
    problem with M % 8 == N % 8 == K % 4 == 0, N / 8 a power of two, A, B and C together within
    :data:`MMA_SYNC_SMEM_LIMIT`."""
    f64 = T.FloatType("f64")
    if lw.target.sm < 80 or len(a.shape) != 2 or not (a.elem == b.elem == c.elem == f64 == T.element_of(out)):
        return False
    (M, K), N = a.shape, b.shape[-1]
    if M % 8 or N % 8 or K % 4 or (N // 8) & (N // 8 - 1):
        return False
    return (M * K + K * N + M * N) * 8 + 16 <= MMA_SYNC_SMEM_LIMIT


def _mma_f64(lw: KernelLowering, a: TileValue | StagedTile, b: TileValue | StagedTile, c: TileValue,
             out: TileValue) -> None:
    """D = A x B + C in f64 on the tensor cores: A, B and C staged together (one barrier), warp ``w``
    computes the 8x8 output tiles ``w, w + warps, ...`` (row-major over the (M/8) x (N/8) tiles): its
    C fragment, one :data:`DMMA` per 4-deep step of K, D written over C; after a barrier each thread
    reads its result slots.  Fragments, with ``g = lane >> 2`` and ``q = lane & 3``: A's register is
    row ``g``, column ``q``; B's row ``q``, column ``g``; C/D register ``i`` row ``g``, column ``2q +
    i`` (PTX ISA "Matrix Fragments for mma.m8n8k4 with .f64 floating point type")."""
    f = lw.f
    (M, K), N = a.shape, b.shape[-1]
    oa, ob, oc = _in_smem(lw, [a, b, c])
    base = lw.smem_addr()
    warp, g, q2 = lane_coordinates(lw)
    tiles_n = N // 8
    tile, p = f.reg("b32"), f.reg("pred")
    f.emit(f"mov.b32 {tile}, {warp}")
    head, done = f.label("dmma_tile"), f.label("dmma_tile_end")
    f.place(head)
    f.emit(f"setp.ge.u32 {p}, {tile}, {(M // 8) * tiles_n}")
    f.emit(f"@{p} bra.uni {done}")
    row, tn, q = f.reg("b32"), f.reg("b32"), f.reg("b32")
    f.emit(f"shr.u32 {row}, {tile}, {tiles_n.bit_length() - 1}")
    f.emit(f"mad.lo.s32 {row}, {row}, 8, {g}")  # g + 8 * tile row
    f.emit(f"and.b32 {tn}, {tile}, {tiles_n - 1}")
    f.emit(f"shr.u32 {q}, {q2}, 1")
    caddr, aaddr, baddr = f.reg("b32"), f.reg("b32"), f.reg("b32")
    f.emit(f"mad.lo.s32 {caddr}, {tn}, 8, {q2}")  # C/D: row, column 8 tn + 2q
    f.emit(f"mad.lo.s32 {caddr}, {row}, {N}, {caddr}")
    f.emit(f"mad.lo.s32 {caddr}, {caddr}, 8, {base}")
    f.emit(f"mad.lo.s32 {aaddr}, {row}, {K}, {q}")  # A: row, column q (+ k0)
    f.emit(f"mad.lo.s32 {aaddr}, {aaddr}, 8, {base}")
    f.emit(f"mad.lo.s32 {baddr}, {tn}, 8, {g}")  # B: row q (+ k0), column 8 tn + g
    f.emit(f"mad.lo.s32 {baddr}, {q}, {N}, {baddr}")
    f.emit(f"mad.lo.s32 {baddr}, {baddr}, 8, {base}")
    acc = [f.reg("f64") for _ in range(2)]
    for i, r in enumerate(acc):
        f.emit(f"ld.shared.f64 {r}, [{caddr}+{oc + 8 * i}]")
    regs = "{" + ", ".join(acc) + "}"
    for k0 in range(0, K, 4):
        ra, rb = f.reg("f64"), f.reg("f64")
        f.emit(f"ld.shared.f64 {ra}, [{aaddr}+{oa + 8 * k0}]")
        f.emit(f"ld.shared.f64 {rb}, [{baddr}+{ob + 8 * k0 * N}]")
        f.emit(f"{DMMA} {regs}, {{{ra}}}, {{{rb}}}, {regs}")
    for i, r in enumerate(acc):
        f.emit(f"st.shared.f64 [{caddr}+{oc + 8 * i}], {r}")
    f.emit(f"add.s32 {tile}, {tile}, {lw.threads // 32}")
    f.emit(f"bra.uni {head}")
    f.place(done)
    f.barrier()
    lw.read_staged(out, oc)


def _mma(lw: KernelLowering, op: Operation, scaled: bool) -> None:
    a = lw.get(op.operands[0])
    if not isinstance(a, FragmentTile):  # else A from registers (codegen/fragment_layouts.py)
        a = _operand(lw, op.operands[0])
    b = _operand(lw, op.operands[1])
    carried = lw.get(op.operands[2])
    if isinstance(carried, ScaledFragments) and isinstance(carried.scale, RowFragments):
        carried = scale_rows(lw, carried.frag, carried.scale, carried.instruction)  # no staging: rows in registers
    shape = mma_shape_of(op, lw.target.sm)
    if isinstance(carried, FragmentTile) and isinstance(a, FragmentTile) and shape is not None:
        (ob,) = _in_smem(lw, [b])
        lw.set(op.results[0], mma_into_fragments(lw, a, b, carried, [0, ob], shape))
        return
    if isinstance(a, FragmentTile):  # not planned so: A through shared memory after all
        a = from_fragments(lw, a)
    if isinstance(carried, FragmentTile) and shape is None:
        carried = from_fragments(lw, carried)  # C in fragments of an MMA the tensor cores do not run
    if isinstance(carried, ScaledFragments) and carried.scale.n > 1:
        # C = the loop's accumulator times a row vector: the vector is staged after A and B, under the
        # one barrier that makes them visible, and applied to the fragments before the MMAs
        offsets = _in_smem(lw, [a, b, carried.scale])
        c = scale_rows(lw, carried.frag, carried.scale, carried.instruction, offsets[2])
        lw.set(op.results[0], mma_into_fragments(lw, a, b, c, offsets[:2], mma_shape_of(op, lw.target.sm)))
        return
    if isinstance(carried, ScaledFragments):
        carried = scale_rows(lw, carried.frag, carried.scale, carried.instruction)
    if isinstance(carried, FragmentTile):  # the accumulator of a loop, in MMA fragments
        lw.set(op.results[0], mma_into_fragments(lw, a, b, carried, _in_smem(lw, [a, b]),
                                                 mma_shape_of(op, lw.target.sm)))
        return
    c = carried if isinstance(carried, TileValue) else lw.tile(op.operands[2])
    if not scaled and mma_sync_applies(lw, a, b, c, op.results[0].type):
        kept = _mma_sync(lw, a, b, c, lw.new_result(op), splat_bits(op.operands[2]), keep=mark(op) == TILE)
        if kept is not None:  # D stays in row-blocked fragments (codegen/fragment_layouts.py)
            lw.set(op.results[0], kept)
        return
    if not scaled and dmma_applies(lw, a, b, c, op.results[0].type):
        _mma_f64(lw, a, b, c, lw.new_result(op))
        return
    sa = sb = None
    if scaled:
        sa, sb = lw.tile(op.operands[3]), lw.tile(op.operands[4])
    out = lw.new_result(op)
    f = lw.f
    batched = len(a.shape) == 3
    M, K = a.shape[-2], a.shape[-1]
    N = b.shape[-1]
    is_int = isinstance(a.elem, T.IntegerType)
    offs = _in_smem(lw, [a, b] + ([sa, sb] if scaled else []))
    acc_cls = "b32" if is_int else lw.fwide(out.elem)
    if is_int:
        sign_a, sign_b = operand_signs(op)
    for s, r in enumerate(out.regs):
        coords = lw.coords(out.shape, s)
        bi = coords[0] if batched else 0
        m, n = coords[-2], coords[-1]
        acc = f.reg(acc_cls)
        if is_int:
            f.emit(f"mov.b32 {acc}, {c.regs[s]}")
        else:
            lw.mov(acc_cls, acc, lw.to_compute(c.regs[s], c.elem))
        abase = lw.linear([(bi, M * K), (m, K)])
        bbase = lw.linear([(bi, K * N), (n, 1)])
        k = f.reg("b32")
        f.emit(f"mov.b32 {k}, 0")
        head, done = f.label("mma"), f.label("mma_end")
        p = f.reg("pred")
        f.place(head)
        ia = f.reg("b32")
        f.emit(f"add.s32 {ia}, {abase}, {k}")
        ib = f.reg("b32")
        f.emit(f"mad.lo.s32 {ib}, {k}, {N}, {bbase}")
        va = lw.smem_read(a.elem, offs[0], ia, swizzle=getattr(a, "swizzled", False))
        vb = lw.smem_read(b.elem, offs[1], ib, swizzle=getattr(b, "swizzled", False))
        if is_int:
            wa, wb = T.bit_width(a.elem), T.bit_width(b.elem)
            xa = va if sign_a else zext(lw, va, wa)
            xb = vb if sign_b else zext(lw, vb, wb)
            f.emit(f"mad.lo.s32 {acc}, {xa}, {xb}, {acc}")
        else:
            xa, xb = lw.to_compute(va, a.elem), lw.to_compute(vb, b.elem)
            if scaled:
                xa, xb = _apply_scale(lw, sa, offs[2], xa, m, k, K, bi, M, True), \
                    _apply_scale(lw, sb, offs[3], xb, n, k, K, bi, N, False)
            f.emit(f"fma.rn.{acc_cls} {acc}, {xa}, {xb}, {acc}")
        f.emit(f"add.s32 {k}, {k}, 1")
        f.emit(f"setp.lt.s32 {p}, {k}, {K}")
        f.emit(f"@{p} bra.uni {head}")
        f.place(done)
        if is_int:
            f.emit(f"mov.b32 {r}, {acc}")
        else:
            lw.mov(reg_class(out.elem), r, lw.from_compute(acc, out.elem))


def _apply_scale(lw, st: TileValue, off: int, x: str, mn, k: str, K: int, bi, MN: int, lhs: bool) -> str:
    """x * scale for the block of K that ``k`` falls in (lhs scale: [M, K/vs]; rhs scale: [K/vs, N])."""
    f = lw.f
    ks = st.shape[-1] if lhs else st.shape[-2]
    vs = K // ks
    kb = f.reg("b32")
    f.emit(f"shr.u32 {kb}, {k}, {vs.bit_length() - 1}")
    if lhs:
        idx = lw.linear([(bi, MN * ks), (mn, ks), (kb, 1)])
    else:
        idx = lw.linear([(bi, MN * ks), (kb, MN), (mn, 1)])
    sv = lw.to_f32(lw.smem_read(st.elem, off, idx), st.elem)
    r = f.reg("f32")
    f.emit(f"mul.f32 {r}, {x}, {sv}")
    return r


handler("mmaf", "mmai", "nv_tileas.dot")(lambda lw, op: _mma(lw, op, False))
handler("mmaf_scaled")(lambda lw, op: _mma(lw, op, True))
