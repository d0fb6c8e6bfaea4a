"""What a kernel starts from in the reference interpreter: its arguments bound to
runtime values, its module's globals in memory, and dense literals as NumPy arrays.

Semantics: NVIDIA cuda-tile ``Ops.td`` (``EntryOp`` parameters, ``GlobalOp``,
``ConstantOp``'s dense literals); the element encodings are those of the
bytecode writer's dense data.
"""

from __future__ import annotations

import numpy as np

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.interpreter import numerics as N
from tile_lsp.analysis.interpreter.errors import InterpreterError
from tile_lsp.analysis.interpreter.memory import Memory
from tile_lsp.analysis.ir.core import Block, Operation
from tile_lsp.analysis.ir.numbers import dense_raw_data, flatten
from tile_lsp.dialect import types as T




def bind_arguments(memory: Memory, entry: Operation, body: Block, args: list) -> list:
    """Runtime values of the entry's block arguments from the caller's ``args``.

    A ``tile<ptr<T>>`` parameter takes a NumPy array (registered in ``memory``;
    the pointer is the address of its first element); a ``tile<iN>`` /
    ``tile<fN>`` parameter a Python or NumPy number (integers wrap to N
    bits).  Raises :class:`InterpreterError` on a count or kind mismatch.
    """
    params = body.arguments
    if len(args) != len(params):
        raise InterpreterError(f"kernel '{entry.symbol_name}' takes {len(params)} arguments, got {len(args)}", entry)
    out = []
    for i, (p, a) in enumerate(zip(params, args)):
        t = p.type
        if not isinstance(t, T.TileType) or t.shape:
            raise InterpreterError(f"parameter #{i} has type {t.short() if hasattr(t, 'short') else t}, "
                                   "which the interpreter cannot bind", entry)
        if isinstance(t.element, T.PointerType):
            if not isinstance(a, np.ndarray):
                raise InterpreterError(f"argument #{i} ({p.name}: {t.short()}) must be a NumPy array, "
                                       f"got {type(a).__name__}", entry)
            try:
                addr = memory.register(a, f"argument #{i}")
            except (TypeError, ValueError) as e:
                raise InterpreterError(str(e), entry) from None
            out.append(np.array(addr, dtype=np.uint64))
            continue
        if isinstance(a, np.ndarray) and a.ndim == 0:
            a = a.item()
        if not isinstance(a, (int, float, bool, np.integer, np.floating, np.bool_)):
            raise InterpreterError(f"argument #{i} ({p.name}: {t.short()}) must be a number, "
                                   f"got {type(a).__name__}", entry)
        try:
            out.append(N.scalar_to_storage(a, t))
        except (N.UnsupportedType, ValueError, OverflowError) as e:
            raise InterpreterError(f"argument #{i}: {e}", entry) from None
    return out


def dense_array(attr: A.Attribute, ty: T.Type, o: Operation) -> np.ndarray:
    """The array of dense literal ``attr`` with tile type ``ty`` (splats broadcast)."""
    if not isinstance(ty, T.TileType) or not isinstance(attr, A.DenseElementsAttr):
        raise InterpreterError(f"unsupported constant {attr}", o)
    shape = tuple(int(d) for d in ty.shape)
    n = int(np.prod(shape)) if shape else 1
    elem = ty.element
    if isinstance(elem, T.IntegerType) and elem.width == 1:
        flat = flatten(attr.values)
        vals = np.array([bool(int(v, 16) if isinstance(v, str) else v) for v in flat], dtype=bool)
        return np.broadcast_to(vals if vals.size != 1 else vals[0], shape).copy()
    try:
        raw = dense_raw_data(attr, ty)
    except (ValueError, TypeError) as e:
        raise InterpreterError(f"cannot decode constant: {e}", o) from None
    dt = N.dtype_of(elem)
    width = T.bit_width(elem) or 8
    if width < 8:
        nib = np.frombuffer(raw, dtype=np.uint8)
        per = 8 // width
        parts = [(nib >> (k * width)) & ((1 << width) - 1) for k in range(per)]
        codes = np.stack(parts, axis=-1).reshape(-1)
        count = 1 if len(raw) * per < n or (len(raw) == 1 and n > per) else n
        codes = codes[:count] if count <= codes.size else codes
        vals = codes_to(codes.astype(np.uint8), elem, dt)
    else:
        vals = np.frombuffer(raw, dtype=dt).copy()
    if vals.size == 1:
        return np.broadcast_to(vals.reshape(()), shape).copy()
    if vals.size != n:
        raise InterpreterError(f"constant has {vals.size} values for {ty.short()}", o)
    return vals.reshape(shape)


def codes_to(codes: np.ndarray, elem: T.Type, dt: np.dtype) -> np.ndarray:
    """Sub-byte bit patterns ``codes`` as values of ``elem`` (i4 sign-extends)."""
    if isinstance(elem, T.IntegerType):
        return N.wrap(codes.astype(np.int64), elem.width)
    return codes.view(dt) if dt.itemsize == 1 else codes.astype(dt)


def attr_scalar(a: A.Attribute, elem: T.Type) -> np.ndarray:
    """0-d array of element type ``elem`` for an identity attribute (integer or float)."""
    if isinstance(a, A.FloatAttr):
        if a.text.lower().lstrip("-").startswith("0x") and isinstance(elem, T.FloatType):
            bits = int(a.text, 16)
            width = T.bit_width(elem) or 32
            u = np.array(bits & ((1 << width) - 1), dtype={8: np.uint8, 16: np.uint16, 32: np.uint32,
                                                            64: np.uint64}[max(8, width)])
            return u.view(N.dtype_of(elem))
        return N.scalar_to_storage(a.value, elem)
    if isinstance(a, A.IntegerAttr):
        return N.scalar_to_storage(a.value, elem)
    if isinstance(a, A.BoolAttr):
        return N.scalar_to_storage(int(a.value), elem)
    raise ValueError(f"unsupported identity {a}")


def load_globals(memory: Memory, addresses: dict[str, int], scope_ops: list[Operation]) -> None:
    """Allocate in ``memory`` and initialise every ``cuda_tile.global`` of ``scope_ops`` (Ops.td GlobalOp:
    1-d, linear order); ``addresses`` gets each named global's address."""
    for g in scope_ops:
        if g.name != "cuda_tile.global":
            continue
        val = g.attr("value")
        ty = getattr(val, "type", None)
        if not isinstance(ty, T.TileType):
            raise InterpreterError("global without a tile-typed value", g)
        data = dense_array(val, ty, g).reshape(-1)
        if data.dtype == np.bool_:
            data = data.astype(np.uint8)
        alignment = g.attr("alignment")
        align = max(int(alignment.value) if alignment is not None else 0, data.dtype.itemsize, 16)
        addr, raw = memory.allocate(data.nbytes, f"@{g.symbol_name}", align)
        raw[:] = data.view(np.uint8)
        if g.symbol_name:
            addresses[g.symbol_name] = addr
