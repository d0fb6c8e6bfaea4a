"""Which entry parameter is which: the array ABI of cuTile kernels, read from the IR.

cuTile Python passes each array argument of a kernel as its base pointer,
then its shape (one integer per dimension), then its strides in elements
(one per dimension); scalars are passed as themselves.  The kernel's IR
tells the mapping: ``make_tensor_view %ptr, shape = [...], strides = [...]``
names the parameters that are the shape and the strides of the array whose
base is ``%ptr`` (through ``assume`` and integer casts).  Arrays that the
kernel addresses with ``offset`` instead of a tensor view get the
positional rule above, the split between shape/stride parameters and
scalars chosen so that the stride parameters are those that scale the
pointer's offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tile_lsp.analysis.ir.core import BlockArgument, Operation, Value
from tile_lsp.dialect import types as T

# ops a parameter passes through unchanged in meaning on its way to a use
_PASS_THROUGH = ("cuda_tile.assume", "cuda_tile.exti", "cuda_tile.trunci", "cuda_tile.reshape",
                 "cuda_tile.broadcast")


@dataclass(frozen=True)
class ParamRole:
    """The role of one entry parameter.

    ``kind``: ``pointer`` (base of array ``array``, of rank ``rank`` when
    known), ``shape`` / ``stride`` (dimension ``dim`` of array ``array``) or
    ``scalar``.  ``type`` is the parameter's type (``tile<ptr<f32>>``...).
    """

    kind: str
    type: T.Type
    array: int | None = None
    dim: int | None = None
    rank: int | None = None

    @property
    def element(self) -> T.Type | None:
        """Pointee type of a pointer parameter, element type of the others."""
        t = self.type.element if isinstance(self.type, T.TileType) else self.type
        return t.pointee if isinstance(t, T.PointerType) else t


def _param_index(v: Value, params: list) -> int | None:
    """Index of the entry parameter ``v`` comes from through pass-through ops, else ``None``."""
    seen = 0
    while not isinstance(v, BlockArgument):
        d = v.defining_op
        if d is None or d.name not in _PASS_THROUGH or not d.operands or seen > 64:
            return None
        v = d.operands[0]
        seen += 1
    for i, p in enumerate(params):
        if p is v:
            return i
    return None


def _pointer_source(v: Value, params: list) -> int | None:
    """Parameter a pointer value derives from (through reshape/broadcast/offset/assume)."""
    seen = 0
    while not isinstance(v, BlockArgument):
        d = v.defining_op
        if d is None or seen > 64 or d.name not in _PASS_THROUGH + ("cuda_tile.offset",):
            return None
        v = d.operands[0]
        seen += 1
    return next((i for i, p in enumerate(params) if p is v), None)


def _params_feeding(v: Value, params: list, limit: int = 256) -> set[int]:
    """Every parameter ``v`` is computed from (backwards through all defining ops)."""
    out: set[int] = set()
    stack = [v]
    seen: set[int] = set()
    while stack and len(seen) < limit:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, BlockArgument):
            for i, p in enumerate(params):
                if p is x:
                    out.add(i)
            continue
        d = x.defining_op
        if d is not None:
            stack.extend(d.operands)
    return out


def entry_param_roles(entry: Operation) -> list[ParamRole]:
    """The role of each parameter of ``entry`` (a ``cuda_tile.entry``), in order.

    Arrays are numbered in the order of their base pointers.  A parameter
    that is neither a pointer nor the shape or stride of an array is a
    ``scalar``.
    """
    body = entry.regions[0].blocks[0] if entry.regions and entry.regions[0].blocks else None
    params = list(body.arguments) if body is not None else []
    n = len(params)
    roles: list[ParamRole | None] = [None] * n
    array_of: dict[int, int] = {}
    for i, p in enumerate(params):
        if isinstance(p.type, T.TileType) and isinstance(p.type.element, T.PointerType):
            array_of[i] = len(array_of)
    rank_of: dict[int, int] = {}
    offset_feeds: dict[int, set[int]] = {}
    ops = list(entry.walk())[1:]
    for o in ops:
        if o.name == "cuda_tile.make_tensor_view":
            base = _param_index(o.operand_group("base")[0], params) if o.operand_group("base") else None
            tv = o.results[0].type if o.results else None
            if base is None or base not in array_of or not isinstance(tv, T.TensorViewType):
                continue
            rank_of.setdefault(base, tv.rank)
            k = array_of[base]
            for kind, group, extents in (("shape", "dynamicShape", tv.shape), ("stride", "dynamicStrides", tv.strides)):
                dyn = iter(o.operand_group(group))
                for d, extent in enumerate(extents):
                    if extent is None:
                        q = _param_index(next(dyn), params)
                        if q is not None and roles[q] is None and q not in array_of:
                            roles[q] = ParamRole(kind, params[q].type, k, d)
        elif o.name == "cuda_tile.offset" and len(o.operands) == 2:
            src = _pointer_source(o.operands[0], params)
            if src is not None:
                offset_feeds.setdefault(src, set()).update(_params_feeding(o.operands[1], params))
    for i in sorted(array_of):
        run_end = next((j for j in range(i + 1, n) if j in array_of), n)
        r = rank_of.get(i)
        if r is None:
            free = 0
            while i + 1 + free < run_end and roles[i + 1 + free] is None:
                free += 1
            r = _choose_rank(i, free, offset_feeds.get(i), params)
        rank_of[i] = r
        k = array_of[i]
        for d in range(r):
            for pos, kind in ((i + 1 + d, "shape"), (i + 1 + r + d, "stride")):
                if pos < run_end and roles[pos] is None:
                    roles[pos] = ParamRole(kind, params[pos].type, k, d)
    out: list[ParamRole] = []
    for i, p in enumerate(params):
        if i in array_of:
            out.append(ParamRole("pointer", p.type, array_of[i], rank=rank_of.get(i)))
        else:
            out.append(roles[i] or ParamRole("scalar", p.type))
    return out


def _choose_rank(i: int, free: int, feeds: set[int] | None, params: list) -> int:
    """Rank of the array at parameter ``i`` given ``free`` unclaimed integer parameters after it.

    The largest rank whose stride parameters all scale the pointer's offsets
    (or are unused); without offsets, half the free parameters.
    """
    if not feeds:
        return free // 2
    for r in range(free // 2, 0, -1):
        strides = range(i + 1 + r, i + 1 + 2 * r)
        if all(s in feeds or not params[s].uses for s in strides):
            return r
    return 0


def bind_arrays(roles: list[ParamRole], arrays: list[np.ndarray], scalars=()) -> list:
    """The argument list for :func:`run_kernel` from the kernel's arrays and scalars.

    Each pointer parameter gets ``arrays[k]``, each shape/stride parameter
    the array's extent / stride in elements (NumPy strides are in bytes), and
    scalar parameters take ``scalars`` in order.  Raises ``ValueError`` when
    the counts do not match the roles.
    """
    n_arrays = 1 + max((r.array for r in roles if r.kind == "pointer"), default=-1)
    if len(arrays) != n_arrays:
        raise ValueError(f"the kernel takes {n_arrays} arrays, got {len(arrays)}")
    scalars = list(scalars)
    n_scalars = sum(1 for r in roles if r.kind == "scalar")
    if len(scalars) != n_scalars:
        raise ValueError(f"the kernel takes {n_scalars} scalars, got {len(scalars)}")
    it = iter(scalars)
    out: list = []
    for r in roles:
        if r.kind == "pointer":
            out.append(arrays[r.array])
        elif r.kind in ("shape", "stride"):
            a = np.asarray(arrays[r.array])
            if r.dim >= a.ndim:
                raise ValueError(f"array #{r.array} has {a.ndim} dimensions; the kernel expects at least {r.dim + 1}")
            out.append(a.shape[r.dim] if r.kind == "shape" else a.strides[r.dim] // a.itemsize)
        else:
            out.append(next(it))
    return out
