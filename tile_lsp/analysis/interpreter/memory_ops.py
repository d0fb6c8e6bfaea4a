"""The memory ops of the reference interpreter: views (``make_*_view``), loads, stores and atomics.

Semantics: NVIDIA cuda-tile ``Ops.td`` for each op (the section named in its
docstring), view addressing as ``Types.td`` defines ``partition_view``,
``strided_view`` and ``gather_scatter_view``.  Handlers register with
:func:`~tile_lsp.analysis.interpreter.engine.op`, as those of :mod:`.ops`.
"""

from __future__ import annotations

import math

import numpy as np

from tile_lsp.analysis.interpreter import numerics as N
from tile_lsp.analysis.interpreter.attrs import enum_case, result_type, scalar_int
from tile_lsp.analysis.interpreter.engine import Engine, InterpreterError, TensorView, TileView, op, operand
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.dialect import types as T




def _ptr_elem(o: Operation, i: int) -> T.Type:
    t = o.operands[i].type
    return t.element.pointee


def _load_dtype(elem: T.Type) -> np.dtype:
    """Memory dtype of ``elem``: i1 occupies a byte (Ops.td load/store of i1)."""
    dt = N.dtype_of(elem)
    return np.dtype(np.uint8) if dt == np.bool_ else dt


def _from_memory(x: np.ndarray, elem: T.Type) -> np.ndarray:
    return x != 0 if N.dtype_of(elem) == np.bool_ else x


def _to_memory(x: np.ndarray, elem: T.Type) -> np.ndarray:
    return x.astype(np.uint8) if N.dtype_of(elem) == np.bool_ else x.astype(N.dtype_of(elem), copy=False)


@op("make_tensor_view")
def _make_tensor_view(eng, o, env):
    """Ops.td MakeTensorViewOp: base pointer with shape and strides (dynamic ones unsigned, in elements)."""
    tv_t = result_type(o)
    base = int(np.asarray(env[o.operand_group("base")[0]]).reshape(-1)[0])
    dyn_shape = [scalar_int(env[v], v.type, False) for v in o.operand_group("dynamicShape")]
    dyn_strides = [scalar_int(env[v], v.type, False) for v in o.operand_group("dynamicStrides")]
    shape = [d if d is not None else dyn_shape.pop(0) for d in tv_t.shape]
    strides = [s if s is not None else dyn_strides.pop(0) for s in tv_t.strides]
    return [TensorView(base, tuple(shape), tuple(strides), _load_dtype(tv_t.element), tv_t.element)]


@op("make_partition_view")
def _make_partition_view(eng, o, env):
    """Ops.td MakePartitionViewOp / Types.td partition_view: tiles of tile_shape, dim_map, padding."""
    pv = result_type(o)
    tv = env[o.operands[0]]
    dm = tuple(pv.effective_dim_map())
    return [TileView("partition", tv, tuple(pv.tile_shape), dm, tuple(pv.tile_shape), pv.padding_value)]


@op("make_strided_view")
def _make_strided_view(eng, o, env):
    """Ops.td MakeStridedViewOp / Types.td strided_view: tile i starts every traversal_strides[i] elements."""
    sv = result_type(o)
    tv = env[o.operands[0]]
    dm = sv.dim_map if sv.dim_map is not None else tuple(range(len(sv.tile_shape)))
    if any(s is None for s in sv.traversal_strides):
        raise InterpreterError("dynamic traversal strides are not supported", o)
    return [TileView("strided", tv, tuple(sv.tile_shape), tuple(dm), tuple(sv.traversal_strides),
                     sv.padding_value)]


@op("make_gather_scatter_view")
def _make_gs_view(eng, o, env):
    """Ops.td MakeGatherScatterViewOp / Types.td gather_scatter_view: rows of ``sparse_dim`` chosen by a 1-d index.

    The scalar indices of the other dimensions count elements, not tiles
    (step 1): index ``s`` starts the tile at element ``s``.  Types.td does not
    say; NVIDIA's tileiras 13.5 compiles it so (bench/gpu_probe.py on an H200:
    ``advanced_index_rows`` with dense index 1 reads columns 1..64, not 64..127).
    """
    gv = result_type(o)
    tv = env[o.operands[0]]
    r = len(gv.tile_shape)
    return [TileView("gather_scatter", tv, tuple(gv.tile_shape), tuple(range(r)), (1,) * r,
                     gv.padding_value, gv.sparse_dim)]


@op("get_index_space_shape")
def _index_space_shape(eng, o, env):
    """Ops.td GetIndexSpaceShapeOp: the view's index space (ceil(extent / step) per dimension)."""
    view = operand(env, o, 0)
    return [N.scalar_to_storage(s, r.type) for s, r in zip(view.index_space(), o.results)]


@op("get_tensor_shape")
def _tensor_shape(eng, o, env):
    """Ops.td GetTensorShapeOp: the tensor view's shape."""
    view = operand(env, o, 0)
    return [N.scalar_to_storage(s, r.type) for s, r in zip(view.shape, o.results)]


_PADDING = {"zero": 0.0, "neg_zero": -0.0, "nan": math.nan, "pos_inf": math.inf, "neg_inf": -math.inf}


def _view_addresses(o: Operation, view: TileView, idx_vals: list, idx_types: list) -> tuple[np.ndarray, np.ndarray]:
    """Byte address and in-bounds flag of each element of the tile at ``index`` of ``view``.

    Tile element ``t`` has tensor coordinate ``c[dim_map[i]] = index[i] *
    step[i] + t[i]`` (for the sparse dimension of a gather/scatter view,
    ``index[sparse][t[sparse]]``).  Indices are unsigned (Ops.td
    LoadViewTkoOp); an index outside the view's index space is undefined
    behaviour and an error here.
    """
    tv = view.tensor
    shape = view.tile_shape
    r = len(shape)
    if len(idx_vals) != r:
        raise InterpreterError(f"view of rank {r} indexed with {len(idx_vals)} indices", o)
    space = view.index_space()
    offset = np.zeros(shape, dtype=np.int64)
    inb = np.ones(shape, dtype=bool)
    for i in range(r):
        j = view.dim_map[i]
        w = N.int_width(idx_types[i])
        iv = N.int_operands(np.asarray(idx_vals[i]), w, False).astype(np.int64)
        bshape = [1] * r
        bshape[i] = shape[i]
        if view.kind == "gather_scatter" and i == view.sparse_dim:
            coord = iv.reshape(-1)
            if coord.size != shape[i]:
                raise InterpreterError(f"gather index has {coord.size} elements for a tile dimension of {shape[i]}", o)
            coord = coord.reshape(bshape)
        else:
            k = int(iv.reshape(-1)[0])
            if k >= space[i]:
                raise InterpreterError(f"index {k} of dimension {i} is outside the view's index space {list(space)}", o)
            coord = (k * view.steps[i] + np.arange(shape[i], dtype=np.int64)).reshape(bshape)
        inb = inb & (coord >= 0) & (coord < tv.shape[j])
        offset = offset + coord * np.int64(tv.strides[j])
    addrs = np.uint64(tv.base) + (offset * np.int64(tv.dtype.itemsize)).astype(np.uint64)
    return addrs, inb


def _padding_fill(view: TileView, elem: T.Type, dt: np.dtype, unspecified: float = 0.0) -> np.ndarray:
    pad = _PADDING[view.padding] if view.padding in _PADDING else unspecified
    if isinstance(elem, T.FloatType):
        return N.scalar_to_storage(pad, elem)
    return np.zeros((), dtype=dt)


@op("load_view_tko")
def _load_view(eng, o, env):
    """Ops.td LoadViewTkoOp: the tile at ``index``; out-of-bounds elements read the padding value.

    Without a padding value those elements are unspecified; the interpreter
    reads ``eng.unspecified`` (0 unless the caller chose another value to
    find the results that depend on them).
    """
    view = env[o.operand_group("view")[0]]
    idx = o.operand_group("index")
    addrs, inb = _view_addresses(o, view, [env[v] for v in idx], [v.type for v in idx])
    elem = view.tensor.element
    data = _from_memory(eng.memory.load(addrs, view.tensor.dtype, inb), elem)
    if not inb.all():
        data = np.where(inb, data, _padding_fill(view, elem, data.dtype, eng.unspecified)).astype(data.dtype)
    return [data, None]


@op("store_view_tko")
def _store_view(eng, o, env):
    """Ops.td StoreViewTkoOp: writes the tile at ``index``; out-of-bounds elements are not written."""
    tile = np.asarray(env[o.operand_group("tile")[0]])
    view = env[o.operand_group("view")[0]]
    idx = o.operand_group("index")
    addrs, inb = _view_addresses(o, view, [env[v] for v in idx], [v.type for v in idx])
    eng.memory.store(addrs, _to_memory(np.broadcast_to(tile, addrs.shape), view.tensor.element), inb)
    return [None]


@op("load_ptr_tko")
def _load_ptr(eng, o, env):
    """Ops.td LoadPtrTkoOp: gather through a pointer tile; masked-off lanes take ``paddingValue`` (else 0)."""
    ptrs = np.asarray(env[o.operand_group("source")[0]])
    mask_v = o.operand_group("mask")
    pad_v = o.operand_group("paddingValue")
    mask = np.broadcast_to(np.asarray(env[mask_v[0]]), ptrs.shape) if mask_v else None
    elem = _ptr_elem(o, 0)
    data = _from_memory(eng.memory.load(ptrs, _load_dtype(elem), mask), elem)
    if mask is not None and pad_v:
        data = np.where(mask, data, np.asarray(env[pad_v[0]])).astype(data.dtype)
    return [data, None]


@op("store_ptr_tko")
def _store_ptr(eng, o, env):
    """Ops.td StorePtrTkoOp: scatter through a pointer tile (lanes with a false mask are skipped)."""
    ptrs = np.asarray(env[o.operand_group("destination")[0]])
    val = np.asarray(env[o.operand_group("value")[0]])
    mask_v = o.operand_group("mask")
    mask = np.broadcast_to(np.asarray(env[mask_v[0]]), ptrs.shape) if mask_v else None
    elem = _ptr_elem(o, 0)
    eng.memory.store(ptrs, _to_memory(np.broadcast_to(val, ptrs.shape), elem), mask)
    return [None]


def _rmw_fn(mode: str, elem: T.Type):
    """New memory value from (old, arg) for AtomicRMWMode ``mode`` on element ``elem``."""
    if isinstance(elem, T.IntegerType):
        w = elem.width

        def ints(fn, signed=True):
            return lambda old, arg: N.wrap(fn(N.int_operands(old, w, signed), N.int_operands(arg, w, signed)), w)
        table = {
            "add": ints(lambda a, b: a + b), "and": ints(lambda a, b: a & b), "or": ints(lambda a, b: a | b),
            "xor": ints(lambda a, b: a ^ b), "max": ints(np.maximum), "min": ints(np.minimum),
            "umax": ints(np.maximum, False), "umin": ints(np.minimum, False),
            "xchg": lambda old, arg: arg,
        }
    else:
        name = str(elem)
        table = {
            "addf": lambda old, arg: N.round_to(
                np.asarray(old.astype(N.compute_dtype(name)) + arg.astype(N.compute_dtype(name))), name),
            "xchg": lambda old, arg: arg,
        }
    fn = table.get(mode)
    if fn is None:
        raise ValueError(f"atomic mode '{mode}' is not defined for {elem}")
    return fn


def _atomic_apply(eng: Engine, addrs: np.ndarray, args: np.ndarray, lanes: np.ndarray, elem: T.Type, fn) -> np.ndarray:
    """Apply ``fn`` atomically at ``addrs`` for lanes ``lanes`` in row-major lane order; returns old values."""
    dt = _load_dtype(elem)
    old_all = np.zeros(addrs.shape, dtype=dt)
    flat_sel = np.flatnonzero(lanes.reshape(-1))
    if flat_sel.size == 0:
        return _from_memory(old_all, elem)
    a = addrs.reshape(-1)[flat_sel]
    v = _to_memory(args.reshape(-1)[flat_sel], elem)
    old_sel = np.empty(a.shape, dtype=dt)
    for view, eidx, m in eng.memory.element_indices(a, dt):
        vals = v[m]
        olds = np.empty(eidx.shape, dtype=dt)
        # lanes that share an address apply in lane order: round r takes the r-th lane of each address
        order = np.argsort(eidx, kind="stable")
        se = eidx[order]
        first = np.r_[True, se[1:] != se[:-1]]
        starts = np.maximum.accumulate(np.where(first, np.arange(se.size), 0))
        rank = np.empty(se.size, dtype=np.intp)
        rank[order] = np.arange(se.size) - starts
        for r in range(int(rank.max()) + 1 if rank.size else 0):
            lanes_r = rank == r
            e = eidx[lanes_r]
            old = view[e].copy()
            view[e] = _to_memory(np.asarray(fn(_from_memory(old, elem), _from_memory(vals[lanes_r], elem))), elem)
            olds[lanes_r] = old
        old_sel[m] = olds
    flat_old = old_all.reshape(-1)
    flat_old[flat_sel] = old_sel
    return _from_memory(old_all, elem)


@op("atomic_rmw_tko")
def _atomic_rmw(eng, o, env):
    """Ops.td AtomicRMWTkoOp: per lane ``old = *p; *p = mode(old, arg)``; returns the old values.

    Blocks run one after the other, so the read-modify-write is exact;
    lanes of one op that hit the same address apply in row-major lane order.
    Masked-off lanes return 0 (implementation-defined in Ops.td).
    """
    ptrs = np.asarray(env[o.operand_group("pointers")[0]])
    arg = np.broadcast_to(np.asarray(env[o.operand_group("arg")[0]]), ptrs.shape)
    mask_v = o.operand_group("mask")
    lanes = np.broadcast_to(np.asarray(env[mask_v[0]]), ptrs.shape) if mask_v else np.ones(ptrs.shape, dtype=bool)
    elem = _ptr_elem(o, 0)
    fn = _rmw_fn(enum_case(o, "mode"), elem)
    return [_atomic_apply(eng, ptrs, arg, lanes, elem, fn), None]


@op("atomic_cas_tko")
def _atomic_cas(eng, o, env):
    """Ops.td AtomicCASTkoOp: writes ``val`` where memory equals ``cmp`` bitwise; returns the old values.

    Masked-off lanes return ``cmp``.
    """
    ptrs = np.asarray(env[o.operand_group("pointers")[0]])
    cmp = np.broadcast_to(np.asarray(env[o.operand_group("cmp")[0]]), ptrs.shape)
    val = np.broadcast_to(np.asarray(env[o.operand_group("val")[0]]), ptrs.shape)
    mask_v = o.operand_group("mask")
    lanes = np.broadcast_to(np.asarray(env[mask_v[0]]), ptrs.shape) if mask_v else np.ones(ptrs.shape, dtype=bool)
    elem = _ptr_elem(o, 0)
    dt = _load_dtype(elem)
    bits_t = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    # pack (cmp, val) per lane so the combining function sees both
    pairs = np.stack([_to_memory(cmp, elem).view(bits_t).astype(np.uint64),
                      _to_memory(val, elem).view(bits_t).astype(np.uint64)], axis=-1)
    old = np.zeros(ptrs.shape, dtype=dt)
    flat_lanes = np.flatnonzero(lanes.reshape(-1))
    flat_ptrs = ptrs.reshape(-1)
    flat_pairs = pairs.reshape(-1, 2)
    flat_old = old.reshape(-1)
    for lane in flat_lanes:
        cur = eng.memory.load(flat_ptrs[lane:lane + 1], dt)
        if int(cur.view(bits_t)[0]) == int(flat_pairs[lane, 0]):
            new = np.array([flat_pairs[lane, 1]], dtype=np.uint64).astype(bits_t).view(dt)
            eng.memory.store(flat_ptrs[lane:lane + 1], new)
        flat_old[lane] = cur[0]
    out = _from_memory(old, elem)
    return [np.where(lanes, out, cmp), None]


@op("atomic_red_view_tko")
def _atomic_red_view(eng, o, env):
    """Ops.td AtomicRedViewTkoOp: ``view[index][i] := mode(view[index][i], value[i])``; out-of-bounds skipped."""
    view = env[o.operand_group("view")[0]]
    idx = o.operand_group("index")
    addrs, inb = _view_addresses(o, view, [env[v] for v in idx], [v.type for v in idx])
    value = np.broadcast_to(np.asarray(env[o.operand_group("value")[0]]), addrs.shape)
    elem = view.tensor.element
    _atomic_apply(eng, addrs, value, inb, elem, _rmw_fn(enum_case(o, "mode"), elem))
    return [None]
