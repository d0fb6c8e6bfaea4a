"""Lowering of views, loads, stores, pointers, atomics and globals.

cuda_tile pointers are generic addresses of global memory; every access
through one converts it with ``cvta.to.global`` and is a ``.global`` access
(:func:`global_address`).  A view access gives each element its tensor
coordinates (tile index times tile size, or traversal step, plus the
element's index in the tile, through ``dim_map``), checks them against the
tensor shape, and loads with a predicate; out-of-bounds elements take the
view's padding value (zero when it has none).  For partition and strided
views a thread computes this once, for its first slot, and each other slot
is a fixed offset from it (:func:`slot_offsets`).  Stores and atomics skip
out-of-bounds elements and, for tiles smaller than the CTA, the threads
holding replicas.  Semantics: NVIDIA cuda-tile ``Types.td``
(PartitionView, StridedView "dim_map" and "index space"), ``Ops.td``
(LoadViewTkoOp, StoreViewTkoOp, AtomicRMWTkoOp ...).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.codegen.lower import KernelLowering, enum_case, handler, load_pred_byte, pred_byte, st_shared
from tile_lsp.codegen.ptx import (
    TOKEN,
    GlobalTile,
    LoweringError,
    StagedTile,
    TensorViewValue,
    TileValue,
    TileViewValue,
    mem_type,
    num_elements,
    reg_class,
    row_major_strides,
    staged_bytes,
    storage_bytes,
    unravel,
)
from tile_lsp.dialect import types as T
from tile_lsp.dialect import nv_tileas_types as NT
from tile_lsp.dialect.nv_tileas_types import enum_word

#: cuda_tile ``memory_scope`` and nv_tileas ``mem_scope`` words -> PTX scope
SCOPES = {"device": "gpu", "sys": "sys", "tl_blk": "cta", "block": "cta", "gpu": "gpu", "cluster": "cluster"}


def _sem(op: Operation, kind: str) -> str:
    """PTX memory-ordering qualifier for a load (``kind='ld'``), store or atomic."""
    sem = enum_case(op, "memory_ordering_semantics", "weak") or "weak"
    scope = SCOPES.get(enum_case(op, "memory_scope", "device") or "device", "gpu")
    if sem == "weak":
        return ""
    return f".{sem}.{scope}"


def _pad_bits(elem: T.Type, padding: str | None) -> int:
    if padding is None or padding == "zero":
        return 0
    if isinstance(elem, T.IntegerType):
        return 0
    name = elem.name
    val = {"neg_zero": -0.0, "nan": float("nan"), "pos_inf": float("inf"), "neg_inf": float("-inf")}[padding]
    from tile_lsp.analysis.ir.numbers import float_to_bits
    return float_to_bits(val, name)


# ---------------------------------------------------------------------------
# views
# ---------------------------------------------------------------------------

@handler("make_tensor_view")
def _make_tensor_view(lw: KernelLowering, op: Operation) -> None:
    ty = op.results[0].type
    base = lw.tile(op.operands[0]).regs[0]
    dyn_shape = list(op.operand_group("dynamicShape")) if "dynamicShape" in op.operand_segments else []
    dyn_strides = list(op.operand_group("dynamicStrides")) if "dynamicStrides" in op.operand_segments else []
    if not op.operand_segments:
        rest = list(op.operands[1:])
        nshape = sum(1 for d in ty.shape if d is None)
        dyn_shape, dyn_strides = rest[:nshape], rest[nshape:]
    shape: list[str | int] = []
    it = iter(dyn_shape)
    for d in ty.shape:
        shape.append(lw.scalar_int(next(it), 64) if d is None else int(d))
    strides: list[str | int] = []
    it = iter(dyn_strides)
    for s in ty.strides:
        strides.append(lw.scalar_int(next(it), 64) if s is None else int(s))
    lw.set(op.results[0], TensorViewValue(base, shape, strides, ty.element))


@handler("make_partition_view", "make_strided_view", "make_gather_scatter_view")
def _make_tile_view(lw: KernelLowering, op: Operation) -> None:
    ty = op.results[0].type
    tv = lw.get(op.operands[0])
    if not isinstance(tv, TensorViewValue):
        raise LoweringError("view of something that is not a tensor_view")
    rank = len(ty.tile_shape)
    if isinstance(ty, T.PartitionViewType):
        dm = ty.effective_dim_map()
        lw.set(op.results[0], TileViewValue("partition", tv, tuple(ty.tile_shape), tuple(dm), ty.padding_value,
                                            tuple(ty.tile_shape)))
    elif isinstance(ty, T.StridedViewType):
        dm = ty.dim_map if ty.dim_map is not None else tuple(range(rank))
        if any(s is None for s in ty.traversal_strides):
            raise LoweringError("strided_view with dynamic traversal strides is not supported by the lowering yet")
        lw.set(op.results[0], TileViewValue("strided", tv, tuple(ty.tile_shape), tuple(dm), ty.padding_value,
                                            tuple(int(s) for s in ty.traversal_strides)))
    else:
        # The scalar indices of a gather_scatter_view count elements, not tiles: index s of a dense
        # dimension starts the tile at element s (what tileiras 13.5 compiles, checked on an H200 with
        # bench/gpu_probe.py: advanced_index_rows with dense index 1 reads columns 1..64).
        lw.set(op.results[0], TileViewValue("gather", tv, tuple(ty.tile_shape), tuple(range(rank)),
                                            ty.padding_value, (1,) * rank, ty.sparse_dim))


@handler("get_index_space_shape")
def _index_space_shape(lw: KernelLowering, op: Operation) -> None:
    """Per tile dimension: ceil(tensor extent / tile size) (partition) or the strided view's count."""
    view = lw.get(op.operands[0])
    f = lw.f
    for i, res in enumerate(op.results):
        out = lw.new_tile(res.type)
        lw.set(res, out)
        td = view.dim_map[i]
        extent = view.tensor.shape[td]
        ts, step = view.tile_shape[i], view.steps[i]
        w = T.bit_width(out.elem) or 32
        r64 = f.reg("b64")
        if isinstance(extent, int):
            f.emit(f"mov.b64 {r64}, {extent}")
        else:
            f.emit(f"mov.b64 {r64}, {extent}")
        if view.kind == "strided":
            # number of tile starts: ceil((extent - tile) / step) + 1, at least 1
            f.emit(f"sub.s64 {r64}, {r64}, {ts}")
            f.emit(f"max.s64 {r64}, {r64}, 0")
            f.emit(f"add.s64 {r64}, {r64}, {step - 1}")
            f.emit(f"div.s64 {r64}, {r64}, {step}")
            f.emit(f"add.s64 {r64}, {r64}, 1")
        else:
            f.emit(f"add.s64 {r64}, {r64}, {ts - 1}")
            f.emit(f"div.s64 {r64}, {r64}, {ts}")
        if w == 64:
            f.emit(f"mov.b64 {out.regs[0]}, {r64}")
        else:
            f.emit(f"cvt.u32.u64 {out.regs[0]}, {r64}")


def _tensor_coordinate(lw: KernelLowering, start: str, local: str | int) -> str:
    """b64 register: a tensor coordinate, the tile's ``start`` along a dimension (an s64 register:
    index x step) plus an element's coordinate ``local`` in the tile (a b32 register or an int)."""
    f = lw.f
    c = f.reg("b64")
    if isinstance(local, int):
        f.emit(f"add.s64 {c}, {start}, {local}")
    else:
        lc = f.reg("b64")
        f.emit(f"cvt.u64.u32 {lc}, {local}")
        f.emit(f"add.s64 {c}, {start}, {lc}")
    return c


def _element_addresses(lw: KernelLowering, view: TileViewValue, index_vals, shape: tuple[int, ...],
                       s: int, gather_idx: str | None = None) -> tuple[str, str]:
    """(b64 address, pred in-bounds) of slot ``s`` of a tile of ``shape`` at tile index ``index_vals``."""
    f = lw.f
    tensor = view.tensor
    coords = lw.coords(shape, s)
    rank = len(tensor.shape)
    tcoord: list[str | None] = [None] * rank
    for i, local in enumerate(coords):
        td = view.dim_map[i]
        if view.kind == "gather" and i == view.sparse_dim:
            c = f.reg("b64")
            f.emit(f"mov.b64 {c}, {gather_idx}")
        else:
            c = _tensor_coordinate(lw, index_vals[i], local)
        tcoord[td] = c
    inb = f.reg("pred")
    f.emit(f"setp.eq.u32 {inb}, 0, 0")
    off = f.reg("b64")
    f.emit(f"mov.b64 {off}, 0")
    for d in range(rank):
        c = tcoord[d]
        if c is None:
            continue
        ext = tensor.shape[d]
        p = f.reg("pred")
        f.emit(f"setp.lt.u64 {p}, {c}, {ext}")
        f.emit(f"and.pred {inb}, {inb}, {p}")
        f.emit(f"mad.lo.s64 {off}, {c}, {tensor.strides[d]}, {off}")
    addr = f.reg("b64")
    f.emit(f"mad.lo.s64 {addr}, {off}, {storage_bytes(tensor.elem)}, {tensor.base}")
    return addr, inb


def _index_bases(lw: KernelLowering, view: TileViewValue, index_ops, skip: int | None = None) -> list:
    """s64 register per tile dimension: index * step (tile size or traversal stride); ``None`` at ``skip``."""
    f = lw.f
    out: list = []
    for i, v in enumerate(index_ops):
        if i == skip:
            out.append(None)
            continue
        r = lw.scalar_int(v, 64)
        b = f.reg("b64")
        f.emit(f"mul.lo.s64 {b}, {r}, {view.steps[i]}")
        out.append(b)
    return out


def _view_indices(lw: KernelLowering, view: TileViewValue, index, shape: tuple[int, ...]):
    """(per-dimension s64 bases, slot -> gather coordinate register or None) of a view access.

    For a gather_scatter_view the index of ``sparse_dim`` is a 1-d tile of
    tensor coordinates (one per tile row along that dimension): it is staged
    in shared memory and each slot reads the entry of its own row.
    """
    if view.kind != "gather":
        return _index_bases(lw, view, index), lambda s: None
    sd = view.sparse_dim
    bases = _index_bases(lw, view, index, skip=sd)
    idx_tile = lw.tile(index[sd])
    (off,) = lw.stage([idx_tile])

    def gather(s: int) -> str:
        c = lw.coords(shape, s)[sd]
        if isinstance(c, int):
            c = lw.linear([], c)
        v = lw.smem_read(idx_tile.elem, off, c)
        if (T.bit_width(idx_tile.elem) or 32) == 64:
            return v
        r = lw.f.reg("b64")
        lw.f.emit(f"cvt.s64.s32 {r}, {v}")
        return r
    return bases, gather


def load_element(lw: KernelLowering, elem: T.Type, dst: str, addr: str, pred: str | None, sem: str,
        space: str = "") -> None:
    """Load one element of ``elem`` into ``dst`` (its register class; i8/i16 sign-extended, i1 from a byte).

    ``space``: PTX state space (``""`` generic, ``".shared"``); ``sem``: from :func:`_sem`.
    """
    f = lw.f
    cls = reg_class(elem)
    g = f"@{pred} " if pred else ""
    if cls == "pred":
        load_pred_byte(f, dst, f"{g}ld{sem}{space}", addr, zero_first=True)
        return
    mt = mem_type(elem)
    w = T.bit_width(elem) or 32
    if cls == "b32" and w in (8, 16):
        f.emit(f"{g}ld{sem}{space}.s{w} {dst}, [{addr}]")
    elif cls == "b16" and w == 8:
        f.emit(f"{g}ld{sem}{space}.u8 {dst}, [{addr}]")
    else:
        f.emit(f"{g}ld{sem}{space}{mt} {dst}, [{addr}]")


def store_element(lw: KernelLowering, elem: T.Type, src: str, addr: str, pred: str | None, sem: str,
        space: str = "") -> None:
    """Store one element of ``elem`` from ``src`` (the counterpart of :func:`load_element`)."""
    f = lw.f
    cls = reg_class(elem)
    g = f"@{pred} " if pred else ""
    if cls == "pred":
        f.emit(f"{g}st{sem}{space}.u8 [{addr}], {pred_byte(f, src)}")
        return
    f.emit(f"{g}st{sem}{space}{mem_type(elem)} [{addr}], {src}")


def global_address(lw: KernelLowering, addr: str) -> str:
    """``addr`` (a generic b64 address of global memory: every Tile IR pointer is one, from a kernel
    parameter or ``get_global``) converted for a ``.global`` access, as nvcc does (``cvta.to.global``,
    PTX ISA "Generic Addressing"): the access is then ``LDG``/``STG`` in SASS, as in tileiras'
    cubins, instead of a generic ``LD``/``ST`` that checks the address's window at run time."""
    r = lw.f.reg("b64")
    lw.f.emit(f"cvta.to.global.u64 {r}, {addr}")
    return r


def _and(lw: KernelLowering, a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    r = lw.f.reg("pred")
    lw.f.emit(f"and.pred {r}, {a}, {b}")
    return r


def slot_offsets(shape: tuple[int, ...], threads: int, s: int) -> list[int]:
    """Per tile dimension, how far slot ``s`` of a tile of ``shape`` lies from slot 0 of the same
    thread, in elements of that dimension: the coordinates of element ``s * threads``
    (``[0, ...]`` for a tile smaller than the CTA, which has one slot).

    In the distribution of :mod:`tile_lsp.codegen.ptx` slot ``s`` of thread ``t`` holds element
    ``s * T + t`` (``t < T``); with power-of-two dimensions each coordinate is a bit field of that
    index, and the bits of ``s * T`` and of ``t`` do not overlap, so every coordinate of slot ``s``
    is the thread's slot-0 coordinate plus this constant: no carry from one dimension to another."""
    if num_elements(shape) < threads or not s:
        return [0] * len(shape)
    return unravel(s * threads, shape)


def _affine_accesses(lw: KernelLowering, view: TileViewValue, bases: list, shape: tuple[int, ...],
                     count: int):
    """Yield ``(address, in-bounds predicate)`` of slots ``0 .. count - 1`` of a partition or strided
    view access (``.global`` b64 address; the predicate may be ``None``: always in bounds).

    The same addresses and bounds as :func:`_element_addresses` (per element: tensor coordinate =
    tile start + the element's coordinate in the tile, each checked below its extent as an unsigned
    64-bit number, offset = sum of coordinate x stride), computed once per thread for slot 0 and then
    per slot from the compile-time :func:`slot_offsets`: an address is one ``add.s64`` from the
    previous slot's (by a register made once per distinct move, where strides are known only at
    run time), and only the dimensions the slots move along are checked per slot.  The
    tensor's base address is converted for ``.global`` once per access (:func:`global_address`)."""
    f = lw.f
    tensor = view.tensor
    esz = storage_bytes(tensor.elem)
    c0 = lw.coords(shape, 0)
    moves = [slot_offsets(shape, lw.threads, s) for s in range(count)]
    starts: dict[int, tuple[int, str]] = {}  # tensor dimension -> (tile dimension, slot 0's coordinate)
    for i, local in enumerate(c0):
        starts[view.dim_map[i]] = (i, _tensor_coordinate(lw, bases[i], local))
    varying = {i for m in moves for i, k in enumerate(m) if k}
    fixed = None
    off = f.reg("b64")
    f.emit(f"mov.b64 {off}, 0")
    for d in range(len(tensor.shape)):
        if d not in starts:
            continue
        i, c = starts[d]
        if i not in varying:
            p = f.reg("pred")
            f.emit(f"setp.lt.u64 {p}, {c}, {tensor.shape[d]}")
            fixed = _and(lw, fixed, p)
        f.emit(f"mad.lo.s64 {off}, {c}, {tensor.strides[d]}, {off}")
    base = f.reg("b64")
    f.emit(f"mad.lo.s64 {base}, {off}, {esz}, {global_address(lw, tensor.base)}")
    step: dict[int, str | int] = {}  # tile dimension -> bytes between neighbours along it
    for i in sorted(varying):
        stride = tensor.strides[view.dim_map[i]]
        if isinstance(stride, int):
            step[i] = stride * esz
        else:
            r = f.reg("b64")
            f.emit(f"mul.lo.s64 {r}, {stride}, {esz}")
            step[i] = r
    checks: dict[tuple[int, int], str] = {}

    def check(i: int, k: int) -> str:
        if (i, k) not in checks:
            d = view.dim_map[i]
            c = starts[d][1]
            if k:
                moved = f.reg("b64")
                f.emit(f"add.s64 {moved}, {c}, {k}")
                c = moved
            p = f.reg("pred")
            f.emit(f"setp.lt.u64 {p}, {c}, {tensor.shape[d]}")
            checks[(i, k)] = p
        return checks[(i, k)]

    # each slot's address from the previous slot's: slots usually move by one fixed step, so one
    # register holds the run-time part of each distinct move (a register per slot, each a product of
    # loop-invariant values, is what ptxas hoists out of a loop and then keeps live or spills)
    moved: dict[tuple[tuple[int, int], ...], str] = {}
    addr, prev = base, [0] * len(shape)
    for m in moves:
        inb = fixed
        for i in sorted(varying):
            inb = _and(lw, inb, check(i, m[i]))
        delta = [k - p for k, p in zip(m, prev)]
        consts = sum(d * step[i] for i, d in enumerate(delta) if d and isinstance(step.get(i), int))
        key = tuple((i, d) for i, d in enumerate(delta) if d and not isinstance(step[i], int))
        if key and key not in moved:
            r = f.reg("b64")
            f.emit(f"mul.lo.s64 {r}, {step[key[0][0]]}, {key[0][1]}")
            for i, d in key[1:]:
                f.emit(f"mad.lo.s64 {r}, {step[i]}, {d}, {r}")
            moved[key] = r
        if key or consts:
            nxt = f.reg("b64")
            f.emit(f"add.s64 {nxt}, {addr}, {moved[key] if key else consts}")
            if key and consts:
                f.emit(f"add.s64 {nxt}, {nxt}, {consts}")
            addr = nxt
        prev = m
        yield addr, inb


def _slot_accesses(lw: KernelLowering, view: TileViewValue, index, shape: tuple[int, ...], count: int):
    """Yield ``(.global address, in-bounds predicate or None)`` of each of ``count`` slots of a tile of
    ``shape`` in ``view`` at the scalar (or gather) ``index`` values: :func:`_affine_accesses` for
    partition and strided views, :func:`_element_addresses` per element for a gather view (its
    sparse coordinate comes from a staged tile, one per slot)."""
    bases, gather = _view_indices(lw, view, index, shape)
    if view.kind != "gather":
        yield from _affine_accesses(lw, view, bases, shape, count)
        return
    for s in range(count):
        addr, inb = _element_addresses(lw, view, bases, shape, s, gather(s))
        yield global_address(lw, addr), inb


def _load_tile(lw: KernelLowering, op: Operation, view, index, sem: str) -> None:
    """Result 0 of ``op``: the tile of ``view`` at the scalar (or gather) ``index`` values."""
    out = lw.new_result(op)
    pad = _pad_bits(out.elem, view.padding)
    for r, (addr, inb) in zip(out.regs, _slot_accesses(lw, view, index, out.shape, len(out.regs))):
        lw.mov(reg_class(out.elem), r, lw.const_reg(out.elem, pad))
        load_element(lw, out.elem, r, addr, inb, sem, ".global")


def _store_tile(lw: KernelLowering, tile: TileValue, view, index, sem: str) -> None:
    """Store ``tile`` into ``view`` at ``index``: in-bounds elements, by the thread that owns each."""
    own = lw.owner(tile.n)
    for r, (addr, inb) in zip(tile.regs, _slot_accesses(lw, view, index, tile.shape, len(tile.regs))):
        store_element(lw, tile.elem, r, addr, _and(lw, inb, own), sem, ".global")


@handler("load_view_tko")
def _load_view(lw: KernelLowering, op: Operation) -> None:
    view = lw.get(op.operand_group("view")[0] if op.operand_segments else op.operands[0])
    index = op.operand_group("index") if op.operand_segments else op.operands[1:]
    lw.set(op.results[1], TOKEN)
    _load_tile(lw, op, view, index, _sem(op, "ld"))


@handler("store_view_tko")
def _store_view(lw: KernelLowering, op: Operation) -> None:
    index = op.operand_group("index") if op.operand_segments else op.operands[2:]
    lw.set(op.results[0], TOKEN)
    _store_tile(lw, lw.tile(op.operands[0]), lw.get(op.operands[1]), index, _sem(op, "st"))


def _nv_sem(op: Operation) -> str:
    """PTX qualifier of an nv_tileas memop's ``mem_semantic`` / ``mem_scope``."""
    word = enum_word(op.attr("mem_semantic")) or "weak"
    if word == "weak":
        return ""
    scope = enum_word(op.attr("mem_scope")) or "gpu"
    if scope not in SCOPES or word not in ("relaxed", "acquire", "release"):
        raise LoweringError(f"memory semantic '{word}' at scope '{scope}' is not supported by the lowering")
    return f".{word}.{SCOPES[scope]}"


def staged_buffer(op: Operation) -> Operation | None:
    """The ``alloc_tensor`` op of the shared-memory buffer that alone uses ``tiled_load`` op's tile:
    through ``reshape`` ops, each result used once, as the value of one ``tiled_store`` into it;
    ``None`` where the tile has another use, or where the load's token has one (then something is
    ordered after the load, which must run where it is: tokens order Tile IR's memory operations,
    cuda-tile ``Ops.td``)."""
    if any(r.uses for r in op.results[1:]):
        return None
    v = op.results[0]
    while len(v.uses) == 1:
        user = v.uses[0].owner
        if user.name == "cuda_tile.reshape":
            v = user.results[0]
            continue
        if user.name != "nv_tileas.tiled_store" or user.operand_group("value")[0] is not v:
            return None
        maker = user.operand_group("view")[0].defining_op
        return maker if maker is not None and maker.name == "nv_tileas.alloc_tensor" else None
    return None


def copy_order(view: TileViewValue) -> list[int]:
    """The tile dimensions of ``view`` in the order :func:`copy_to_staged` walks them, the fastest
    last: the one ``dim_map`` puts on the tensor's last dimension goes last."""
    last = len(view.tensor.shape) - 1
    dims = range(len(view.dim_map))
    return [i for i in dims if view.dim_map[i] != last] + [i for i in dims if view.dim_map[i] == last]


#: bytes a thread moves with one ``ld.global.v4.b32`` / ``st.shared.v4.b32`` in :func:`copy_to_staged`
VECTOR_BYTES = 16


def vector_copy_applies(view: TileViewValue, shape: tuple[int, ...], elem: T.Type, sem: str) -> bool:
    """Whether :func:`copy_to_staged` may move a tile of ``shape`` in 16-byte vectors when the run-time
    test allows (:func:`vectors_aligned`): a weak load of 2- or 4-byte elements (staged in their
    own width) through a partition or strided view that keeps the tensor's last dimension on the
    tile's last, which holds whole vectors, as do the tile starts along it (their step).  That
    dimension's stride is 1, or known at run time only (cuTile passes every stride; the test
    checks it is 1)."""
    if view.kind == "gather" or sem or copy_order(view) != list(range(len(view.dim_map))):
        return False
    esz = storage_bytes(elem)
    if esz not in (2, 4) or staged_bytes(elem) != esz or len(view.tensor.shape) != len(shape):
        return False
    per = VECTOR_BYTES // esz
    last = len(shape) - 1
    stride = view.tensor.strides[view.dim_map[last]]
    return (stride == 1 or isinstance(stride, str)) and shape[last] % per == 0 and view.steps[last] % per == 0


def _alignment_terms(view: TileViewValue, esz: int) -> list[str] | None:
    """The run-time values (s64 registers) :func:`vectors_aligned` tests for multiples of 16 bytes:
    the tensor's strides but the last and the extent of its last dimension; ``None`` where one
    known at compile time is not such a multiple."""
    tensor = view.tensor
    last = len(tensor.shape) - 1
    values = [v for d, v in enumerate(tensor.strides) if d != last] + [tensor.shape[last]]
    if any(isinstance(v, int) and v * esz % VECTOR_BYTES for v in values):
        return None
    return [v for v in values if not isinstance(v, int)]


def vectors_aligned(lw: KernelLowering, view: TileViewValue, esz: int) -> str | None:
    """Predicate register, uniform: the tensor's last dimension is contiguous (a stride known at run
    time only is 1), and its base address, its other strides and the extent of its last dimension,
    each in bytes, are multiples of 16, so that every vector of a tile starts 16-byte aligned and
    lies wholly inside or wholly outside the tensor.  ``None``: a compile-time stride or extent
    rules it out."""
    f = lw.f
    tensor = view.tensor
    last = len(tensor.shape) - 1
    dynamic = _alignment_terms(view, esz)
    if dynamic is None:
        return None
    acc = f.reg("b64")
    f.emit(f"and.b64 {acc}, {tensor.base}, 15")
    for v in dynamic:
        t = f.reg("b64")
        f.emit(f"mul.lo.s64 {t}, {v}, {esz}")
        f.emit(f"or.b64 {acc}, {acc}, {t}")
    f.emit(f"and.b64 {acc}, {acc}, 15")
    if not isinstance(tensor.strides[last], int):  # 0 when the stride is 1
        t = f.reg("b64")
        f.emit(f"xor.b64 {t}, {tensor.strides[last]}, 1")
        f.emit(f"or.b64 {acc}, {acc}, {t}")
    p = f.reg("pred")
    f.emit(f"setp.eq.u64 {p}, {acc}, 0")
    return p


@dataclass
class LoadedCopy:
    """The registers of a :func:`copy_to_staged` between its two phases (:func:`load_for_staged`, then
    :func:`store_loaded`): ``vectors`` (four b32 registers a slot) where a uniform test picks 16-byte
    vectors at run time (``aligned``, its predicate), and ``elements`` (one register a slot)."""

    vectors: list[list[str]] | None
    elements: list[str]
    aligned: str | None


def async_copy_applies(lw: KernelLowering, tile: GlobalTile) -> bool:
    """Whether :func:`copy_to_staged` moves ``tile``'s 16-byte vectors with ``cp.async`` (global to
    shared memory without registers, sm_80 and newer: PTX ISA ``cp.async``): where the copy may take
    vectors (:func:`vector_copy_applies`, and no compile-time stride or extent rules them out:
    :func:`vectors_aligned`) and the padding is zero, which is what a copy of fewer source bytes
    (``src-size`` 0 for a vector outside the tensor) fills in."""
    return lw.target.sm >= 80 and _pad_bits(tile.elem, tile.view.padding) == 0 \
        and vector_copy_applies(tile.view, tile.shape, tile.elem, tile.sem) \
        and _alignment_terms(tile.view, storage_bytes(tile.elem)) is not None


def copy_to_staged(lw: KernelLowering, tile: GlobalTile, buf: StagedTile) -> None:
    """Copy ``tile`` from global memory into the staged buffer ``buf`` (row-major in the loaded
    tile's order, swizzled as ``buf`` says), without a register tile in the distribution.  No barrier.

    Where :func:`vector_copy_applies`, a uniform branch picks at run time between 16-byte vectors
    (:func:`_load_vectors`, when :func:`vectors_aligned`) and single elements
    (:func:`_load_elements`).  The vectors go by ``cp.async`` where :func:`async_copy_applies`
    (:func:`copy_vectors_async`; the next barrier waits for them: ``Function.barrier``);
    otherwise each slot's load is followed by its store, so that few registers are live at once; a
    loop that prefetches a copy splits it in two phases instead (:func:`load_for_staged`,
    :func:`store_loaded`)."""
    f = lw.f
    esz = storage_bytes(tile.elem)
    aligned = vectors_aligned(lw, tile.view, esz) if vector_copy_applies(tile.view, tile.shape, tile.elem,
                                                                          tile.sem) else None
    if aligned is None:
        _store_elements(lw, tile, buf, _load_elements(lw, tile, None, None))
        return
    scalar, done = f.label("copy_elements"), f.label("copy_done")
    f.emit(f"@!{aligned} bra.uni {scalar}")
    if async_copy_applies(lw, tile):
        copy_vectors_async(lw, tile, buf)
    else:
        _store_vectors(lw, tile, buf, _load_vectors(lw, tile, None, None))
    f.emit(f"bra.uni {done}")
    f.place(scalar)
    _store_elements(lw, tile, buf, _load_elements(lw, tile, None, None))
    f.place(done)
    if async_copy_applies(lw, tile):
        f.async_pending = True


def copy_vectors_async(lw: KernelLowering, tile: GlobalTile, buf: StagedTile, guard: str | None = None) -> None:
    """:func:`copy_to_staged`'s 16-byte vectors by ``cp.async.cg.shared.global`` (L2 only: each
    byte is read once), each under the predicate ``guard`` where given, then
    ``cp.async.commit_group`` (whatever the guard: waits count groups): the addresses and bounds of
    :func:`_load_vectors`, the places of :func:`_store_vectors` (from ``lw.smem_addr()``); a vector
    outside the tensor copies 0 source bytes and is zero-filled (PTX ISA ``cp.async``:
    ``src-size``).  Not waited for here."""
    f = lw.f
    vview, vshape, _ = _vector_access(lw, tile)
    place, own = _vector_places(lw, tile, buf)
    g = _and(lw, own, guard)
    count = lw.slots(num_elements(vshape))
    for s, (addr, inb) in enumerate(_affine_accesses(lw, vview, _index_bases(lw, vview, tile.index), vshape,
                                                     count)):
        to, at = place(s)
        size = "16"
        if inb is not None:
            size = f.reg("b32")
            f.emit(f"selp.b32 {size}, 16, 0, {inb}")
        f.emit((f"@{g} " if g else "") + f"cp.async.cg.shared.global [{to}+{at}], [{addr}], 16, {size}")
    f.emit("cp.async.commit_group")


def load_for_staged(lw: KernelLowering, tile: GlobalTile, into: LoadedCopy | None = None,
                    guard: str | None = None, prefetch: bool = False) -> LoadedCopy:
    """The load phase of :func:`copy_to_staged`: ``tile``'s elements into registers (``into``'s, else
    new ones), in the copy's order, out-of-bounds ones the padding; every load also under the
    predicate ``guard`` where given (a prefetch for an iteration that may not come).  A ``prefetch``
    of a copy that may take vectors loads only those, under the alignment test (no branch); where
    the test fails, :func:`store_loaded` copies the elements itself."""
    f = lw.f
    esz = storage_bytes(tile.elem)
    if into is not None:
        aligned = into.aligned
    else:
        aligned = vectors_aligned(lw, tile.view, esz) if vector_copy_applies(tile.view, tile.shape, tile.elem,
                                                                              tile.sem) else None
    if aligned is None:
        return LoadedCopy(None, list(_load_elements(lw, tile, into.elements if into else None, guard)), None)
    if prefetch:
        return LoadedCopy(list(_load_vectors(lw, tile, into.vectors if into else None, _and(lw, guard, aligned))),
                          None, aligned)
    scalar, done = f.label("load_elements"), f.label("load_done")
    f.emit(f"@!{aligned} bra.uni {scalar}")
    vectors = list(_load_vectors(lw, tile, into.vectors if into else None, guard))
    f.emit(f"bra.uni {done}")
    f.place(scalar)
    elements = list(_load_elements(lw, tile, into.elements if into else None, guard))
    f.place(done)
    return LoadedCopy(vectors, elements, aligned)


def store_loaded(lw: KernelLowering, tile: GlobalTile, buf: StagedTile, loaded: LoadedCopy) -> None:
    """The store phase of :func:`copy_to_staged`: ``loaded``'s registers into ``buf`` (elements a
    prefetch did not load, loaded here first).  No barrier."""
    f = lw.f
    if loaded.aligned is None:
        _store_elements(lw, tile, buf, loaded.elements)
        return
    scalar, done = f.label("copy_elements"), f.label("copy_done")
    f.emit(f"@!{loaded.aligned} bra.uni {scalar}")
    _store_vectors(lw, tile, buf, loaded.vectors)
    f.emit(f"bra.uni {done}")
    f.place(scalar)
    _store_elements(lw, tile, buf, loaded.elements if loaded.elements is not None
                    else _load_elements(lw, tile, None, None))
    f.place(done)


def _vector_access(lw: KernelLowering, tile: GlobalTile):
    """(view over the tensor seen as 16-byte vectors, the tile's shape in vectors, elements a vector)."""
    f = lw.f
    view, shape = tile.view, tile.shape
    esz = storage_bytes(tile.elem)
    per = VECTOR_BYTES // esz
    last = len(shape) - 1
    d = view.dim_map[last]
    ext = view.tensor.shape[d]
    if isinstance(ext, int):
        ext //= per
    else:
        r = f.reg("b64")
        f.emit(f"shr.u64 {r}, {ext}, {per.bit_length() - 1}")
        ext = r
    tensor = replace(view.tensor, shape=[ext if i == d else x for i, x in enumerate(view.tensor.shape)],
                     strides=[per if i == d else x for i, x in enumerate(view.tensor.strides)])
    vshape = shape[:last] + (shape[last] // per,)
    vview = replace(view, tensor=tensor, tile_shape=vshape,
                    steps=tuple(k // per if i == last else k for i, k in enumerate(view.steps)))
    return vview, vshape, per


def _load_vectors(lw: KernelLowering, tile: GlobalTile, into: list[list[str]] | None,
                  guard: str | None) -> Iterator[list[str]]:
    """:func:`copy_to_staged`'s loads in 16-byte vectors, ``V = 16 / element bytes`` elements of a row
    each: the access of a view over the tensor seen as vectors (last extent and tile size / V, the
    other strides and the view's steps in elements as they are, the last stride V), so that its
    slots' addresses and bounds come from :func:`_affine_accesses` and a thread's vectors are ``s * T
    + t`` of the tile's vectors.  A vector out of bounds is the padding (the predicate of its
    ``ld.global.v4.b32``).  A generator: each slot's load is emitted when it is taken."""
    f = lw.f
    vview, vshape, _ = _vector_access(lw, tile)
    esz = storage_bytes(tile.elem)
    count = lw.slots(num_elements(vshape))
    own = lw.owner(num_elements(vshape))
    pad = _pad_bits(tile.elem, tile.view.padding)
    word = pad | pad << 16 if esz == 2 else pad
    accesses = _affine_accesses(lw, vview, _index_bases(lw, vview, tile.index), vshape, count)
    for s, (addr, inb) in enumerate(accesses):
        regs = into[s] if into else [f.reg("b32") for _ in range(4)]
        for r in regs:
            f.emit(f"mov.b32 {r}, {word}")
        g = _and(lw, _and(lw, inb, own), guard)
        f.emit((f"@{g} " if g else "") + f"ld.global.v4.b32 {{{', '.join(regs)}}}, [{addr}]")
        yield regs


def _store_vectors(lw: KernelLowering, tile: GlobalTile, buf: StagedTile, loaded: Iterable[list[str]]) -> None:
    """:func:`copy_to_staged`'s stores of :func:`_load_vectors`' registers: ``st.shared.v4.b32`` puts a
    vector whole at its place in ``buf`` (a swizzle keeps 16-byte chunks whole)."""
    f = lw.f
    place, own = _vector_places(lw, tile, buf)
    for s, regs in enumerate(loaded):
        to, at = place(s)
        f.emit((f"@{own} " if own else "") + f"st.shared.v4.b32 [{to}+{at}], {{{', '.join(regs)}}}")


def _vector_places(lw: KernelLowering, tile: GlobalTile, buf: StagedTile):
    """(:func:`_buffer_places`' function of a vector slot, the owner predicate or ``None``) of ``tile``
    copied into ``buf`` in 16-byte vectors (:func:`_store_vectors`, :func:`copy_vectors_async`)."""
    shape = tile.shape
    per = VECTOR_BYTES // storage_bytes(tile.elem)
    vshape = shape[:-1] + (shape[-1] // per,)
    strides = row_major_strides(shape)
    strides[len(shape) - 1] = per  # buffer elements between neighbouring vectors of a row
    return _buffer_places(lw, buf, vshape, strides, storage_bytes(tile.elem)), lw.owner(num_elements(vshape))


def _buffer_places(lw: KernelLowering, buf: StagedTile, shape: tuple[int, ...], strides: list[int], esz: int):
    """Where :func:`copy_to_staged` puts each slot of a tile of ``shape`` (in the copy's order) in
    ``buf``, a step along its dimension ``i`` being ``strides[i]`` elements of ``esz`` bytes there:
    slot 0's shared address is computed here, once; the function returned maps a slot to its
    ``(register, byte offset)``, a constant (:func:`slot_offsets`) from slot 0's, the address
    swizzled where ``buf`` is."""
    f = lw.f
    index = lw.linear([(c, strides[i]) for i, c in enumerate(lw.coords(shape, 0))])
    base = f.reg("b32")
    f.emit(f"mad.lo.s32 {base}, {index}, {esz}, {lw.smem_addr()}")

    def place(s: int) -> tuple[str, int]:
        at = buf.offset + esz * sum(k * strides[i] for i, k in enumerate(slot_offsets(shape, lw.threads, s)))
        return (lw.swizzled(base, at), 0) if buf.swizzled else (base, at)
    return place


def copy_elements(lw: KernelLowering, tile: GlobalTile, buf: StagedTile) -> None:
    """:func:`copy_to_staged` one element at a time (its path where 16-byte vectors do not apply)."""
    _store_elements(lw, tile, buf, _load_elements(lw, tile, None, None))


def _element_order(tile: GlobalTile):
    """(tile dimensions in the copy's order, the view with its dimensions so, the moved shape)."""
    view, shape = tile.view, tile.shape
    order = copy_order(view)
    moved_shape = tuple(shape[i] for i in order)
    moved_view = replace(view, tile_shape=moved_shape, dim_map=tuple(view.dim_map[i] for i in order),
                         steps=tuple(view.steps[i] for i in order))
    return order, moved_view, moved_shape


def _load_elements(lw: KernelLowering, tile: GlobalTile, into: list[str] | None,
                   guard: str | None) -> Iterator[str]:
    """:func:`copy_to_staged`'s loads one element at a time.

    The copy gives the threads its elements in an order of its own: the tile dimension that
    ``dim_map`` puts on the tensor's last dimension (in a row-major tensor the contiguous one) varies
    fastest, so consecutive lanes read consecutive addresses even where the view transposes the
    tensor (attention's K^T); the distribution's order would put each lane in another row there, a
    32-byte sector a lane.  Each slot's address and bounds come as in :func:`_affine_accesses`;
    out-of-bounds elements take the view's padding.  A generator: each slot's load is emitted when
    it is taken."""
    order, moved_view, moved_shape = _element_order(tile)
    bases = _index_bases(lw, tile.view, tile.index)
    count = lw.slots(tile.n)
    cls = reg_class(tile.elem)
    own = lw.owner(tile.n)
    pad = _pad_bits(tile.elem, tile.view.padding)
    accesses = _affine_accesses(lw, moved_view, [bases[i] for i in order], moved_shape, count)
    for s, (addr, inb) in enumerate(accesses):
        r = into[s] if into else lw.f.reg(cls)
        lw.mov(cls, r, lw.const_reg(tile.elem, pad))
        load_element(lw, tile.elem, r, addr, _and(lw, _and(lw, inb, own), guard), tile.sem, ".global")
        yield r


def _store_elements(lw: KernelLowering, tile: GlobalTile, buf: StagedTile, loaded: Iterable[str]) -> None:
    """:func:`copy_to_staged`'s stores of :func:`_load_elements`' registers: each at its place in
    ``buf`` (row-major in the loaded tile's order), slot 0's plus a constant."""
    order, _, moved_shape = _element_order(tile)
    strides = row_major_strides(tile.shape)  # the buffer's order: the loaded tile's
    cls = reg_class(tile.elem)
    place = _buffer_places(lw, buf, moved_shape, [strides[i] for i in order], staged_bytes(tile.elem))
    own = lw.owner(tile.n)
    for s, r in enumerate(loaded):
        to, at = place(s)
        lw.f.emit((f"@{own} " if own else "") + st_shared(cls, to, at, r, lw.f))


@handler("nv_tileas.tiled_load")
def _tiled_load(lw: KernelLowering, op: Operation) -> None:
    """``tiled_load`` of a ``block_tile`` view (:mod:`tile_lsp.codegen.to_nv_tileas`): as ``load_view_tko``.
    A tile of a view that puts the tensor's last dimension on another tile dimension than the last
    (a transposed view: attention's K^T), used only to be staged in a swizzled shared-memory buffer
    (:func:`staged_buffer`), is copied there by the staging store instead, contiguous addresses in
    consecutive lanes (a :class:`~tile_lsp.codegen.ptx.GlobalTile`, :func:`copy_to_staged`).  Other
    tiles load in the distribution's order (for a view that does not transpose, already that one)."""
    for r in op.results[1:]:
        lw.set(r, TOKEN)
    view = lw.get(op.operand_group("view")[0])
    deferred = deferred_copy(lw, op)
    if deferred is not None:
        lw.set(op.results[0], deferred)
        return
    _load_tile(lw, op, view, op.operand_group("coords"), _nv_sem(op))


def deferred_copy(lw: KernelLowering, op: Operation) -> GlobalTile | None:
    """The :class:`~tile_lsp.codegen.ptx.GlobalTile` of ``tiled_load`` op where the staging store copies
    its tile (:func:`copy_to_staged`) instead of loading it into registers: a tile used only to be
    staged (:func:`staged_buffer`) that the copy moves in 16-byte vectors (:func:`vector_copy_applies`)
    or that the view transposes, into a swizzled buffer; ``None`` otherwise."""
    view = lw.get(op.operand_group("view")[0])
    ty = op.results[0].type
    shape = tuple(int(d) for d in ty.shape)
    transposed = isinstance(view, TileViewValue) and view.kind != "gather" \
        and copy_order(view) != list(range(len(view.dim_map)))
    vectors = isinstance(view, TileViewValue) and vector_copy_applies(view, shape, ty.element, _nv_sem(op))
    buf = staged_buffer(op) if transposed or vectors else None
    # transposed, into a swizzled buffer only: lanes write down one of its columns, rows a multiple of
    # 128 bytes apart, which the swizzle spreads over 4 or 8 banks; unswizzled (8-bit elements) they
    # would all fall in one bank, a 32-way conflict
    if buf is not None and (vectors or buf.attr("tile_lsp.swizzle") is not None):
        tile = GlobalTile(view, tuple(op.operand_group("coords")), shape, ty.element, _nv_sem(op), lw.f.loc)
        return in_tensor_order(tile) if buf.attr("tile_lsp.transposed") is not None else tile
    return None


def in_tensor_order(tile: GlobalTile) -> GlobalTile:
    """``tile`` with its dimensions in :func:`copy_order` (the one on the tensor's last dimension
    last), as a buffer marked ``tile_lsp.transposed`` holds it: copied so, it moves whole tensor
    rows, in 16-byte vectors where :func:`vector_copy_applies`."""
    order, view, shape = _element_order(tile)
    return replace(tile, view=view, index=tuple(tile.index[i] for i in order), shape=shape)




@handler("nv_tileas.tiled_store")
def _tiled_store(lw: KernelLowering, op: Operation) -> None:
    """``tiled_store`` into a ``block_tile`` view: as ``store_view_tko``; into a shared-memory
    buffer (``alloc_tensor``): :func:`_store_staged`."""
    for r in op.results:
        lw.set(r, TOKEN)
    view = lw.get(op.operand_group("view")[0])
    if isinstance(view, StagedTile):
        _store_staged(lw, op, view)
        return
    _store_tile(lw, lw.tile(op.operand_group("value")[0]), lw.get(op.operand_group("view")[0]),
                op.operand_group("coords"), _nv_sem(op))


# -- shared-memory staging (convert-to-nv-tileas) ------------------------------------------------
@handler("nv_tileas.alloc_tensor")
def _alloc_tensor(lw: KernelLowering, op: Operation) -> None:
    """A buffer of the staging scratch: the result's ``!nv_tileas.tiled_view<SHAPE x ELEM, SMEM>`` at
    byte ``tile_lsp.smem_offset`` (placed by :mod:`tile_lsp.codegen.to_nv_tileas`), swizzled with
    ``tile_lsp.swizzle``."""
    buf = staged_tile_of(op)
    lw.reserve(buf.end)
    lw.set(op.results[0], buf)


def staged_tile_of(op: Operation) -> StagedTile:
    """The :class:`StagedTile` of ``alloc_tensor`` op.  ``LoweringError`` where its result is not a
    static SMEM ``tiled_view`` with a ``tile_lsp.smem_offset``."""
    view = NT.decode_type(op.results[0].type)
    offset = op.attr("tile_lsp.smem_offset")
    if not (isinstance(view, NT.TiledViewType) and view.memory_space == "SMEM" and None not in view.shape
            and isinstance(offset, A.IntegerAttr)):
        raise LoweringError("the PTX lowering supports 'nv_tileas.alloc_tensor' only for a static SMEM "
                            "tiled_view with a 'tile_lsp.smem_offset'", op)
    return StagedTile(tuple(view.shape), view.element, offset.value, op.attr("tile_lsp.swizzle") is not None,
                      op.attr("tile_lsp.transposed") is not None)


def _barrier_before_store(op: Operation, lw: KernelLowering) -> bool:
    """Whether staging store ``op`` starts with ``bar.sync 0`` (earlier readers of the buffer are done):
    not where the op before it (``alloc_tensor`` ops aside) is a store into a staged buffer, whose
    barrier was emitted already, nor where ``tile_lsp.readers_done`` says another barrier follows
    the buffer's readers (``to_nv_tileas._Rewriter.own_buffers``)."""
    return op.attr("tile_lsp.readers_done") is None and not _staged_store_before(op, lw)


def _staged_store_before(op: Operation, lw: KernelLowering) -> bool:
    """Whether the op before ``op`` (``alloc_tensor`` ops aside) is a store into a staged buffer: then
    the barrier that ended the scratch's earlier reads has been emitted already."""
    ops = op.parent.operations
    for prev in reversed(ops[:ops.index(op)]):
        if prev.name == "nv_tileas.alloc_tensor":
            continue
        views = prev.operand_group("view") if prev.name == "nv_tileas.tiled_store" else []
        return bool(views) and isinstance(lw.values.get(id(views[0])), StagedTile)
    return False


def _store_staged(lw: KernelLowering, op: Operation, buf: StagedTile) -> None:
    """A whole tile into a staged buffer: ``bar.sync 0`` (earlier readers of the scratch are done;
    once for a run of such stores), then every thread writes its slots.  The reader
    (``nv_tileas.dot``) waits on its own barrier before it reads."""
    for c in op.operand_group("coords"):
        d = c.defining_op
        v = d.attr("value") if d is not None and d.name == "arith.constant" else None
        if not (isinstance(v, A.IntegerAttr) and v.value == 0):
            raise LoweringError("the PTX lowering stores only whole tiles into shared memory (coordinates 0)", op)
    value = lw.get(op.operand_group("value")[0])
    if isinstance(value, GlobalTile):
        if value.n != buf.n or value.elem != buf.elem:
            raise LoweringError("the stored tile does not match the shared-memory buffer", op)
        if _barrier_before_store(op, lw):
            lw.f.barrier()
        here, lw.f.loc = lw.f.loc, value.loc or lw.f.loc
        prefetched = lw.prefetched.get(id(op))  # loaded an iteration ahead (codegen/prefetch.py)
        if prefetched is not None:
            prefetched.store(lw, value, buf)
        else:
            copy_to_staged(lw, value, buf)
        lw.f.loc = here
        return
    value = lw.tile(op.operand_group("value")[0])
    if value.shape != buf.shape or value.elem != buf.elem:
        raise LoweringError("the stored tile does not match the shared-memory buffer", op)
    if _barrier_before_store(op, lw):
        lw.f.barrier()
    if buf.transposed:  # to_nv_tileas.transposes_b marks only the buffers of copies deferred_copy makes
        raise LoweringError("internal: a transposed MMA operand buffer takes a register tile", op)
    lw.write_staged(value, buf.offset, buf.swizzled)


@handler("arith.constant")
def _index_constant(lw: KernelLowering, op: Operation) -> None:
    """An integer ``index`` constant (the coordinates of staged stores): a uniform b32 register."""
    v = op.attr("value")
    if not (isinstance(v, A.IntegerAttr) and isinstance(op.results[0].type, T.IndexType)):
        raise LoweringError("the PTX lowering supports 'arith.constant' only for index integers", op)
    r = lw.f.reg("b32")
    lw.f.emit(f"mov.b32 {r}, {v.value}")
    lw.set(op.results[0], TileValue((), T.IntegerType(32), [r]))


@handler("nv_tileaa.block_tile", "arith.index_cast")
def _same_registers(lw: KernelLowering, op: Operation) -> None:
    """The view's tiled_view and an index of a ``tile<i32>`` are the operand's own registers."""
    lw.set(op.results[0], lw.get(op.operands[0]))


ATOM_OPS = {"add": "add", "addf": "add", "max": "max", "min": "min", "umax": "max", "umin": "min",
            "and": "and", "or": "or", "xor": "xor", "xchg": "exch"}


def _atom_type(mode: str, elem: T.Type) -> str:
    if isinstance(elem, T.FloatType):
        if elem.name not in ("f32", "f64", "f16", "bf16"):
            raise LoweringError(f"atomic on {elem} is not supported by the lowering")
        return {"f32": ".f32", "f64": ".f64", "f16": ".noftz.f16", "bf16": ".noftz.bf16"}[elem.name]
    w = T.bit_width(elem) or 32
    if w not in (32, 64):
        raise LoweringError(f"atomic on {elem} is not supported by the lowering")
    if mode in ("and", "or", "xor", "xchg"):
        return f".b{w}"
    signed = mode in ("max", "min")
    if mode == "add":
        return f".u{w}"
    return f".{'s' if signed else 'u'}{w}"


@handler("atomic_red_view_tko")
def _atomic_red_view(lw: KernelLowering, op: Operation) -> None:
    view = lw.get(op.operand_group("view")[0])
    index = op.operand_group("index")
    value = lw.tile(op.operand_group("value")[0])
    lw.set(op.results[0], TOKEN)
    mode = enum_case(op, "mode", "add")
    ins = ATOM_OPS.get(mode)
    if ins is None or ins == "exch":
        raise LoweringError(f"atomic_red_view_tko mode '{mode}' is not supported by the lowering")
    bases = _index_bases(lw, view, index)
    shape = view.tile_shape
    n = 1
    for d in shape:
        n *= d
    own = lw.owner(n)
    sem = _sem(op, "red")
    ty = _atom_type(mode, value.elem)
    for s in range(lw.slots(n)):
        addr, inb = _element_addresses(lw, view, bases, shape, s)
        v = value.regs[s if len(value.regs) > 1 else 0]
        g = _and(lw, inb, own)
        lw.f.emit((f"@{g} " if g else "") + f"red{sem}.global.{ins}{ty} [{global_address(lw, addr)}], {v}")


# ---------------------------------------------------------------------------
# pointers
# ---------------------------------------------------------------------------

@handler("offset")
def _offset(lw: KernelLowering, op: Operation) -> None:
    ptr, off = lw.tile(op.operands[0]), lw.tile(op.operands[1])
    out = lw.new_result(op)
    esz = storage_bytes(ptr.elem.pointee if isinstance(ptr.elem, T.PointerType) else ptr.elem)
    w = T.bit_width(off.elem) or 32
    f = lw.f
    for s, r in enumerate(out.regs):
        p = ptr.regs[s if len(ptr.regs) > 1 else 0]
        o = off.regs[s if len(off.regs) > 1 else 0]
        if w == 64:
            f.emit(f"mad.lo.s64 {r}, {o}, {esz}, {p}")
        else:
            f.emit(f"mad.wide.s32 {r}, {o}, {esz}, {p}")


@handler("int_to_ptr", "ptr_to_int")
def _ptr_int(lw: KernelLowering, op: Operation) -> None:
    a = lw.tile(op.operands[0])
    out = lw.new_result(op)
    for s, r in enumerate(out.regs):
        lw.f.emit(f"mov.b64 {r}, {a.regs[s]}")


def _group(op: Operation, name: str, pos: int):
    g = op.operand_group(name) if op.operand_segments else op.operands[pos:pos + 1]
    return g[0] if g else None


def _optional_tile(lw: KernelLowering, op: Operation, name: str, pos: int) -> TileValue | None:
    """The tile of the optional operand ``name`` (operand ``pos`` without segment sizes), ``None`` when absent."""
    v = _group(op, name, pos)
    return lw.tile(v) if v is not None else None


@handler("load_ptr_tko")
def _load_ptr(lw: KernelLowering, op: Operation) -> None:
    src = lw.tile(_group(op, "source", 0))
    mask = _optional_tile(lw, op, "mask", 1)
    pad = _optional_tile(lw, op, "paddingValue", 2)
    out = lw.new_result(op)
    lw.set(op.results[1], TOKEN)
    sem = _sem(op, "ld")
    for s, r in enumerate(out.regs):
        m = mask.regs[s] if mask else None
        if pad is not None:
            lw.mov(reg_class(out.elem), r, pad.regs[s])
        elif m is not None:
            lw.mov(reg_class(out.elem), r, lw.const_reg(out.elem, 0))
        load_element(lw, out.elem, r, global_address(lw, src.regs[s]), m, sem, ".global")


@handler("store_ptr_tko")
def _store_ptr(lw: KernelLowering, op: Operation) -> None:
    dst = lw.tile(_group(op, "destination", 0))
    val = lw.tile(_group(op, "value", 1))
    mask = _optional_tile(lw, op, "mask", 2)
    lw.set(op.results[0], TOKEN)
    own = lw.owner(dst.n)
    sem = _sem(op, "st")
    for s in range(len(dst.regs)):
        g = _and(lw, mask.regs[s] if mask else None, own)
        store_element(lw, val.elem, val.regs[s], global_address(lw, dst.regs[s]), g, sem, ".global")


def _atomic(lw: KernelLowering, op: Operation, ptrs: TileValue, mask: TileValue | None,
            operation: Callable[[], str], args: list[TileValue]) -> None:
    """Result 0 of the atomic ``op`` on the pointer tile ``ptrs`` (result 1: its token).

    Each slot reads 0, then, where ``mask`` (``None``: everywhere) and the owning threads allow,
    runs ``atom<sem>.global<operation()> r, [ptr], args...`` (``operation``, e.g. ``.add.u32``, is called
    once, after the results are bound, and may raise :class:`LoweringError`); replicas then take
    the owner's result.
    """
    out = lw.new_result(op)
    lw.set(op.results[1], TOKEN)
    ins = operation()
    sem = _sem(op, "atom")
    own = lw.owner(ptrs.n)
    for s, r in enumerate(out.regs):
        g = _and(lw, mask.regs[s] if mask else None, own)
        lw.mov(reg_class(out.elem), r, lw.const_reg(out.elem, 0))
        values = "".join(f", {a.regs[s]}" for a in args)
        lw.f.emit((f"@{g} " if g else "") + f"atom{sem}.global{ins} {r}, [{global_address(lw, ptrs.regs[s])}]{values}")
    if own:
        _broadcast_from_owner(lw, out)


@handler("atomic_rmw_tko")
def _atomic_rmw(lw: KernelLowering, op: Operation) -> None:
    ptrs = lw.tile(_group(op, "pointers", 0))
    arg = lw.tile(_group(op, "arg", 1))
    mask = _optional_tile(lw, op, "mask", 2)

    def operation() -> str:
        mode = enum_case(op, "mode", "add")
        ins = ATOM_OPS.get(mode)
        if ins is None:
            raise LoweringError(f"atomic_rmw_tko mode '{mode}' is not supported by the lowering")
        ty = _atom_type(mode, arg.elem)
        if ins == "exch" and isinstance(arg.elem, T.FloatType):
            ty = f".b{T.bit_width(arg.elem)}"
        return f".{ins}{ty}"
    _atomic(lw, op, ptrs, mask, operation, [arg])


@handler("atomic_cas_tko")
def _atomic_cas(lw: KernelLowering, op: Operation) -> None:
    ptrs = lw.tile(_group(op, "pointers", 0))
    cmp = lw.tile(_group(op, "cmp", 1))
    val = lw.tile(_group(op, "val", 2))
    mask = _optional_tile(lw, op, "mask", 3)
    _atomic(lw, op, ptrs, mask, lambda: f".cas.b{T.bit_width(val.elem) or 32}", [cmp, val])


def _broadcast_from_owner(lw: KernelLowering, tv: TileValue) -> None:
    """After an atomic done by the owning threads only, give every replica the owner's result."""
    (off,) = lw.stage([tv])
    for s, r in enumerate(tv.regs):
        v = lw.smem_read(tv.elem, off, lw.lin(tv.n, s))
        lw.mov(reg_class(tv.elem), r, v)


# ---------------------------------------------------------------------------
# globals
# ---------------------------------------------------------------------------

def global_decl(op: Operation) -> tuple[str, str]:
    """(symbol, PTX ``.global`` declaration) of a ``cuda_tile.global`` with its initial value."""
    from tile_lsp.analysis.ir.numbers import dense_raw_data
    name = op.attr("sym_name").value
    value = op.attr("value")
    ty = value.type if isinstance(value, A.DenseElementsAttr) else None
    if not isinstance(ty, T.TileType):
        raise LoweringError(f"global @{name} has no tile-typed initial value")
    raw = dense_raw_data(value, ty)
    n = ty.num_elements or 1
    esz = storage_bytes(ty.element)
    if len(raw) == esz and n > 1:
        raw = raw * n
    align = op.attr("alignment")
    al = align.value if isinstance(align, A.IntegerAttr) else max(esz, 8)
    body = ", ".join(str(b) for b in raw)
    sym = _ptx_symbol(name)
    return sym, f".global .align {al} .b8 {sym}[{len(raw)}] = {{{body}}};"


def _ptx_symbol(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_$" else "_" for c in name)


@handler("get_global")
def _get_global(lw: KernelLowering, op: Operation) -> None:
    ref = op.attr("name")
    name = ref.root if isinstance(ref, A.SymbolRefAttr) else str(ref).lstrip("@")
    out = lw.new_result(op)
    sym = _ptx_symbol(name)
    r = out.regs[0]
    lw.f.emit(f"mov.u64 {r}, {sym}")
    lw.f.emit(f"cvta.global.u64 {r}, {r}")


def float_bits_f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


@handler("ptr_to_ptr")
def _ptr_to_ptr(lw: KernelLowering, op: Operation) -> None:
    lw.set(op.results[0], TileValue(lw.tile(op.operands[0]).shape, op.results[0].type.element,
                                    lw.tile(op.operands[0]).regs))


@handler("get_tensor_shape")
def _get_tensor_shape(lw: KernelLowering, op: Operation) -> None:
    """The extents of a tensor view (static ones as constants)."""
    view = lw.get(op.operands[0])
    for res, extent in zip(op.results, view.shape):
        out = lw.new_tile(res.type)
        lw.set(res, out)
        w = T.bit_width(out.elem) or 32
        if isinstance(extent, int):
            lw.f.emit(f"mov.b{64 if w == 64 else 32} {out.regs[0]}, {extent}")
        elif w == 64:
            lw.f.emit(f"mov.b64 {out.regs[0]}, {extent}")
        else:
            lw.f.emit(f"cvt.u32.u64 {out.regs[0]}, {extent}")
