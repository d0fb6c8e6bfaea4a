"""The op table of the reference interpreter: one handler per cuda_tile op.

Each handler implements the semantics of NVIDIA cuda-tile
``include/cuda_tile/Dialect/CudaTile/IR/Ops.td`` for its op (the section
named in its docstring).  The memory ops (views, loads, stores, atomics) are
in :mod:`.memory_ops`.  Ops that
the 13.5 printer shows but Ops.td lacks (``insert``, ``fpowf``, ``fpowi``,
``gdc_*``) follow the INFERRED definitions of
:mod:`tile_lsp.dialect.cuda_tile_ops`.
"""

from __future__ import annotations

import math
import re

import ml_dtypes
import numpy as np

from tile_lsp.analysis.interpreter import numerics as N
from tile_lsp.analysis.interpreter.arguments import attr_scalar, codes_to, dense_array
from tile_lsp.analysis.interpreter.attrs import enum_case, flag, int_attr, is_signed, result_type, scalar_int
from tile_lsp.analysis.interpreter.engine import (
    Engine,
    InterpreterError,
    Signal,
    group,
    op,
    operand,
)
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.dialect import types as T

# ---------------------------------------------------------------------------
# core ops
# ---------------------------------------------------------------------------


@op("constant")
def _constant(eng: Engine, o: Operation, env: dict):
    """Ops.td ConstantOp: a splat or dense literal of the result tile type."""
    hit = eng.cache.get(id(o))
    if hit is None:
        hit = dense_array(o.attr("value"), result_type(o), o)
        eng.cache[id(o)] = hit
    return [hit]


@op("assume")
def _assume(eng, o, env):
    """Ops.td AssumeOp: passes its value through (the predicate is not checked)."""
    return [operand(env, o, 0)]


@op("make_token", "join_tokens")
def _token(eng, o, env):
    """Tokens carry no runtime value; blocks run sequentially, so every order is kept."""
    return [None]


@op("gdc_wait_tko", "gdc_launch_dependents_tko")
def _gdc(eng, o, env):
    """Programmatic dependent launch (INFERRED ops): no effect on one sequential grid."""
    return [None] * len(o.results)


@op("get_tile_block_id")
def _block_id(eng, o, env):
    """Ops.td GetTileBlockIdOp: (x, y, z) of the running tile block."""
    return [N.scalar_to_storage(v, result_type(o, i)) for i, v in enumerate(eng.block_id)]


@op("get_num_tile_blocks")
def _num_blocks(eng, o, env):
    """Ops.td GetNumTileBlocksOp: the grid size (x, y, z)."""
    return [N.scalar_to_storage(v, result_type(o, i)) for i, v in enumerate(eng.grid)]


@op("get_global")
def _get_global(eng, o, env):
    """Ops.td GetGlobalOp: pointer to the first element of the named global."""
    name = o.attr("name")
    sym = getattr(name, "root", None) or getattr(name, "value", None)
    if sym not in eng.globals:
        raise InterpreterError(f"no global named @{sym}", o)
    return [np.array(eng.globals[sym], dtype=np.uint64)]


@op("iota")
def _iota(eng, o, env):
    """Ops.td IotaOp: 0, 1, ..., n-1 in the result's integer type (wrapping)."""
    t = result_type(o)
    return [N.wrap(np.arange(t.shape[0], dtype=np.int64), N.int_width(t))]


@op("broadcast")
def _broadcast(eng, o, env):
    """Ops.td BroadcastOp: size-1 dimensions stretched to the result shape."""
    return [np.broadcast_to(np.asarray(operand(env, o, 0)), result_type(o).shape)]


@op("reshape")
def _reshape(eng, o, env):
    """Ops.td ReshapeOp: same elements in row-major order, new shape."""
    return [np.reshape(np.asarray(operand(env, o, 0)), result_type(o).shape)]


@op("permute")
def _permute(eng, o, env):
    """Ops.td PermuteOp: result dimension i is source dimension permutation[i]."""
    perm = [int(v) for v in o.attr("permutation").values]
    return [np.transpose(np.asarray(operand(env, o, 0)), perm)]


@op("cat")
def _cat(eng, o, env):
    """Ops.td CatOp: concatenation along ``dim``."""
    return [np.concatenate([np.asarray(operand(env, o, 0)), np.asarray(operand(env, o, 1))], axis=int_attr(o, "dim"))]


def _slices(sub_shape, idx: list[int]) -> tuple:
    return tuple(slice(i * s, (i + 1) * s) for i, s in zip(idx, sub_shape))


@op("extract")
def _extract(eng, o, env):
    """Ops.td ExtractOp: slice number ``indices`` (unsigned) of the result's shape."""
    src = np.asarray(operand(env, o, 0))
    sub = result_type(o).shape
    idx = [scalar_int(v, o.operands[1 + k].type, False) for k, v in enumerate(group(env, o, "indices"))]
    for k, (i, s, full) in enumerate(zip(idx, sub, src.shape)):
        if (i + 1) * s > full:
            raise InterpreterError(f"slice index {i} of dimension {k} is out of bounds", o)
    return [src[_slices(sub, idx)]]


@op("insert")
def _insert(eng, o, env):
    """insert (INFERRED, 13.5): copy of ``dest`` with slice number ``indices`` replaced by ``source``."""
    src = np.asarray(env[o.operand_group("source")[0]])
    dest = np.asarray(env[o.operand_group("dest")[0]]).copy()
    ivals = o.operand_group("indices")
    idx = [scalar_int(env[v], v.type, False) for v in ivals]
    for k, (i, s, full) in enumerate(zip(idx, src.shape, dest.shape)):
        if (i + 1) * s > full:
            raise InterpreterError(f"slice index {i} of dimension {k} is out of bounds", o)
    dest[_slices(src.shape, idx)] = src
    return [dest]


@op("select")
def _select(eng, o, env):
    """Ops.td SelectOp: element-wise choice by an i1 condition."""
    c, a, b = (operand(env, o, i) for i in range(3))
    return [np.where(np.asarray(c), a, b)]


@op("bitcast")
def _bitcast(eng, o, env):
    """Ops.td BitcastOp: same bits, element type of the result (equal widths)."""
    x = np.asarray(operand(env, o, 0))
    dt = N.dtype_of(result_type(o))
    if x.dtype == np.bool_ or dt == np.bool_:
        return [x.astype(dt)]
    return [np.ascontiguousarray(x).view(dt)]


@op("pack")
def _pack(eng, o, env):
    """Ops.td PackOp: a rank-1 tile's bytes as ``tile<Nxi8>`` (sub-byte elements low bits first)."""
    x = np.asarray(operand(env, o, 0))
    elem = o.operands[0].type.element
    width = T.bit_width(elem) or 8
    if width < 8:
        per = 8 // width
        codes = _to_codes(x, elem).reshape(-1, per).astype(np.uint8)
        out = np.zeros(codes.shape[0], dtype=np.uint8)
        for k in range(per):
            out |= (codes[:, k] & ((1 << width) - 1)) << (k * width)
        return [out.view(np.int8)]
    return [np.ascontiguousarray(x).reshape(-1).view(np.int8).copy()]


def _to_codes(x: np.ndarray, elem: T.Type) -> np.ndarray:
    if isinstance(elem, T.IntegerType):
        return N.as_unsigned(x, elem.width)
    return np.ascontiguousarray(x).view(np.uint8)


@op("unpack")
def _unpack(eng, o, env):
    """Ops.td UnpackOp: ``tile<Nxi8>`` bytes read as the result's elements (sub-byte: low bits first)."""
    b = np.ascontiguousarray(np.asarray(operand(env, o, 0))).view(np.uint8).reshape(-1)
    t = result_type(o)
    elem = t.element
    width = T.bit_width(elem) or 8
    if width < 8:
        per = 8 // width
        parts = [(b >> (k * width)) & ((1 << width) - 1) for k in range(per)]
        codes = np.stack(parts, axis=-1).reshape(-1).astype(np.uint8)
        return [codes_to(codes, elem, N.dtype_of(elem)).reshape(t.shape)]
    return [b.view(N.dtype_of(elem)).reshape(t.shape).copy()]


@op("int_to_ptr")
def _int_to_ptr(eng, o, env):
    """Ops.td IntToPtrOp: the i64 bits as an address (unsigned)."""
    return [N.as_unsigned(np.asarray(operand(env, o, 0)), 64).astype(np.uint64)]


@op("ptr_to_int")
def _ptr_to_int(eng, o, env):
    """Ops.td PtrToIntOp: the address as i64 bits."""
    return [np.asarray(operand(env, o, 0)).astype(np.uint64).view(np.int64)]


@op("ptr_to_ptr")
def _ptr_to_ptr(eng, o, env):
    """Ops.td PtrToPtrOp: same address, other pointee type."""
    return [np.asarray(operand(env, o, 0))]


@op("offset")
def _offset(eng, o, env):
    """Ops.td OffsetOp: ``ptr + offset * sizeof(pointee)``; offset signed, wrapping at 64 bits."""
    ptr = np.asarray(operand(env, o, 0)).astype(np.uint64)
    off_t = o.operands[1].type
    off = N.int_operands(np.asarray(operand(env, o, 1)), N.int_width(off_t), True).astype(np.int64)
    pointee = result_type(o).element.pointee
    size = max(1, (T.bit_width(pointee) or 8) // 8)
    return [ptr + (off * np.int64(size)).astype(np.uint64)]


# ---------------------------------------------------------------------------
# integer arithmetic (Ops.td integer_arith_suffix: wrap-around on overflow)
# ---------------------------------------------------------------------------


def _int_binary(fn, signed_from_attr: bool = False, default_signed: bool = True):
    def handler(eng, o, env):
        t = result_type(o)
        w = N.int_width(t)
        signed = is_signed(o) if signed_from_attr else default_signed
        a = N.int_operands(np.asarray(operand(env, o, 0)), w, signed)
        b = N.int_operands(np.asarray(operand(env, o, 1)), w, signed)
        return [N.wrap(fn(a, b, w, signed, o), w)]
    return handler


OPS_INT = {
    "addi": lambda a, b, w, s, o: a + b,
    "subi": lambda a, b, w, s, o: a - b,
    "muli": lambda a, b, w, s, o: a * b,
    "andi": lambda a, b, w, s, o: a & b,
    "ori": lambda a, b, w, s, o: a | b,
    "xori": lambda a, b, w, s, o: a ^ b,
}
for _name, _fn in OPS_INT.items():
    op(_name)(_int_binary(_fn))


def _divi(a, b, w, signed, o):
    """Ops.td DivIOp: truncating by default, ``rounding`` positive_inf/negative_inf for ceil/floor.

    Division by zero is undefined behaviour; the interpreter yields 0 there.
    """
    mode = enum_case(o, "rounding", "zero")
    zero = b == 0
    bb = np.where(zero, 1, b)
    q = np.floor_divide(a, bb)
    r = a - q * bb
    if mode == "zero":
        q = q + ((r != 0) & ((a < 0) != (bb < 0))).astype(q.dtype)
    elif mode == "positive_inf":
        q = q + (r != 0).astype(q.dtype)
    return np.where(zero, 0, q)


def _remi(a, b, w, signed, o):
    """Ops.td RemIOp: remainder of truncated division (sign of the dividend); 0 for a zero divisor."""
    zero = b == 0
    bb = np.where(zero, 1, b)
    r = np.fmod(a, bb)
    return np.where(zero, 0, r)


op("divi")(_int_binary(_divi, signed_from_attr=True))
op("remi")(_int_binary(_remi, signed_from_attr=True))
op("maxi")(_int_binary(lambda a, b, w, s, o: np.maximum(a, b), signed_from_attr=True))
op("mini")(_int_binary(lambda a, b, w, s, o: np.minimum(a, b), signed_from_attr=True))


def _unsigned_operand(env: dict, o: Operation, i: int, width: int) -> np.ndarray:
    """Operand ``i`` of ``o`` read as unsigned ``width``-bit integers, as ``uint64``."""
    return N.as_unsigned(np.asarray(operand(env, o, i)), width).astype(np.uint64)


def _unsigned_operands(env: dict, o: Operation) -> tuple[int, np.ndarray, np.ndarray]:
    """The width of ``o``'s integer result and its two operands read as unsigned integers of that width."""
    w = N.int_width(result_type(o))
    return w, _unsigned_operand(env, o, 0, w), _unsigned_operand(env, o, 1, w)


@op("mulhii")
def _mulhii(eng, o, env):
    """Ops.td MulhiIOp: high ``N`` bits of the unsigned 2N-bit product."""
    w, a, b = _unsigned_operands(env, o)
    if w <= 32:
        return [N.wrap((a * b) >> np.uint64(w), w)]
    m32 = np.uint64(0xFFFFFFFF)
    al, ah, bl, bh = a & m32, a >> np.uint64(32), b & m32, b >> np.uint64(32)
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> np.uint64(32)) + (lh & m32) + (hl & m32)
    hi = hh + (lh >> np.uint64(32)) + (hl >> np.uint64(32)) + (mid >> np.uint64(32))
    return [hi.view(np.int64)]


@op("shli")
def _shli(eng, o, env):
    """Ops.td ShLIOp: left shift, amount unsigned; amounts >= the width give 0 (PTX shl clamps)."""
    w, a, s = _unsigned_operands(env, o)
    big = s >= np.uint64(w)
    res = np.where(big, np.uint64(0), a << np.where(big, np.uint64(0), s))
    return [N.wrap(res.view(np.int64) if w == 64 else res.astype(np.int64), w)]


@op("shri")
def _shri(eng, o, env):
    """Ops.td ShRIOp: right shift, sign- or zero-filling; amounts >= the width fill completely."""
    w = N.int_width(result_type(o))
    s = _unsigned_operand(env, o, 1, w)
    sc = np.minimum(s, np.uint64(max(w - 1, 0))).astype(np.int64)
    if is_signed(o):
        a = N.as_signed(np.asarray(operand(env, o, 0)), w).astype(np.int64)
        return [N.wrap(a >> sc, w)]
    a = _unsigned_operand(env, o, 0, w)
    res = np.where(s >= np.uint64(w), np.uint64(0), a >> sc.astype(np.uint64))
    return [N.wrap(res.view(np.int64) if w == 64 else res.astype(np.int64), w)]


@op("negi")
def _negi(eng, o, env):
    """Ops.td NegIOp: two's complement negation (wrapping)."""
    t = result_type(o)
    w = N.int_width(t)
    return [N.wrap(-N.int_operands(np.asarray(operand(env, o, 0)), w, True), w)]


@op("absi")
def _absi(eng, o, env):
    """Ops.td AbsIOp: absolute value of the signed reading (the minimum value wraps to itself)."""
    t = result_type(o)
    w = N.int_width(t)
    return [N.wrap(np.abs(N.int_operands(np.asarray(operand(env, o, 0)), w, True)), w)]


_CMP = {
    "equal": np.equal, "not_equal": np.not_equal, "less_than": np.less,
    "less_than_or_equal": np.less_equal, "greater_than": np.greater, "greater_than_or_equal": np.greater_equal,
}


@op("cmpi")
def _cmpi(eng, o, env):
    """Ops.td CmpIOp: predicate on the signed or unsigned reading of both operands."""
    t = o.operands[0].type
    w = N.int_width(t)
    s = is_signed(o)
    a = N.int_operands(np.asarray(operand(env, o, 0)), w, s)
    b = N.int_operands(np.asarray(operand(env, o, 1)), w, s)
    return [np.asarray(_CMP[enum_case(o, "comparison_predicate")](a, b))]


# ---------------------------------------------------------------------------
# conversions
# ---------------------------------------------------------------------------


@op("exti")
def _exti(eng, o, env):
    """Ops.td ExtIOp: sign- or zero-extension to the wider type."""
    w_from = N.int_width(o.operands[0].type)
    w_to = N.int_width(result_type(o))
    v = N.int_operands(np.asarray(operand(env, o, 0)), w_from, is_signed(o))
    return [N.wrap(v.view(np.int64) if v.dtype == np.uint64 else v, w_to)]


@op("trunci")
def _trunci(eng, o, env):
    """Ops.td TruncIOp: the low bits."""
    x = np.asarray(operand(env, o, 0))
    w_to = N.int_width(result_type(o))
    return [N.wrap(x.astype(np.int64), w_to)]


@op("itof")
def _itof(eng, o, env):
    """Ops.td IToFOp: integer (signed or unsigned reading) to the nearest float of the result type."""
    w = N.int_width(o.operands[0].type)
    v = N.int_operands(np.asarray(operand(env, o, 0)), w, is_signed(o))
    name = N.elem_name(result_type(o))
    mode = enum_case(o, "rounding_mode", "nearest_even")
    exact_int = v.astype(np.float64)
    r = N.round_to(exact_int, name) if np.all(np.abs(exact_int) < 2.0**53) else _itof_big(v, name)
    if mode in ("zero", "positive_inf", "negative_inf"):
        from fractions import Fraction
        flat = v.reshape(-1)
        r = N.directed_round(r, lambda i: Fraction(int(flat[i])), mode)
    return [r]


def _itof_big(v: np.ndarray, name: str) -> np.ndarray:
    """Integers beyond 2^53 rounded once to ``name`` (through Python's exact int -> float)."""
    from fractions import Fraction
    flat = v.reshape(-1)
    out = np.empty(flat.shape, dtype=np.float64)
    sticky = np.zeros(flat.shape, dtype=np.float64)
    for i, x in enumerate(flat.tolist()):
        out[i] = float(x)
        sticky[i] = float(Fraction(int(x)) - Fraction(out[i]))
    return N.round_f64_sticky(out, sticky, name).reshape(v.shape)


@op("ftoi")
def _ftoi(eng, o, env):
    """Ops.td FToIOp: truncation toward zero; NaN gives 0 and out-of-range values saturate (PTX cvt.rzi)."""
    x = np.asarray(operand(env, o, 0)).astype(np.float64)
    t = result_type(o)
    w = N.int_width(t)
    signed = is_signed(o)
    lo, hi = (-(2 ** (w - 1)), 2 ** (w - 1) - 1) if signed else (0, 2 ** w - 1)
    tr = np.trunc(np.where(np.isnan(x), 0.0, x))
    if w == 64:  # beyond f64's exact integer range: Python ints
        res = [min(max(int(v) if math.isfinite(v) else (hi if v > 0 else lo), lo), hi) for v in tr.reshape(-1).tolist()]
        return [np.array([r - (1 << 64) if r >= 1 << 63 else r for r in res], dtype=np.int64).reshape(x.shape)]
    clipped = np.clip(tr, lo, hi).astype(np.int64)
    return [N.wrap(clipped, w)]


@op("ftof")
def _ftof(eng, o, env):
    """Ops.td FToFOp: rounding to the result float type (``rounding_mode``: nearest-even by default,
    zero and the infinities directed; zero/positive_inf for e8m0)."""
    x = np.asarray(operand(env, o, 0))
    name = N.elem_name(result_type(o))
    mode = enum_case(o, "rounding_mode", "nearest_even")
    x64 = x.astype(np.float64)
    if name == "f8E8M0FNU":
        return [_to_e8m0(x64, mode)]
    directed = mode in ("zero", "positive_inf", "negative_inf")
    # tf32 lives in f32 storage: a directed rounding goes to f32 first (exact when x is f32; directed
    # roundings compose), then to tf32's 10 mantissa bits
    r = N.round_to(x64 if x.dtype != np.float32 else x, "f32" if name == "tf32" and directed else name)
    if directed:
        from fractions import Fraction
        flat = x64.reshape(-1)
        r = N.directed_round(r, lambda i: Fraction(float(flat[i])) if math.isfinite(flat[i]) else None, mode)
        if name == "tf32":
            r = N.directed_round_tf32(r, mode)
    return [r]


def _to_e8m0(x: np.ndarray, mode: str) -> np.ndarray:
    """f8E8M0FNU (a power of two) of ``x``: rounding down (``zero``) or up (``positive_inf``) in magnitude."""
    a = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        m, e = np.frexp(a)  # a = m * 2^e, m in [0.5, 1)
    exp_down = e - 1
    exp_up = np.where(m == 0.5, e - 1, e)
    if mode == "positive_inf":
        ex = exp_up
    elif mode == "zero":
        ex = exp_down
    else:
        ex = np.where(m > 0.75, e, e - 1)
    ex = np.clip(ex, -127, 127)
    code = (ex + 127).astype(np.int64)
    code = np.where(np.isnan(x) | np.isinf(x), 255, code)  # 0xFF is e8m0's NaN
    code = np.where(a == 0, 0, code)  # no zero in e8m0: the smallest value 2^-127
    return code.astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)


# ---------------------------------------------------------------------------
# float arithmetic
# ---------------------------------------------------------------------------


def _ftz(o: Operation, x: np.ndarray) -> np.ndarray:
    return N.flush_subnormals(x) if flag(o, "flush_to_zero") and x.dtype == np.float32 else x


_EXACT = {
    "addf": lambda v: v[0] + v[1],
    "subf": lambda v: v[0] - v[1],
    "mulf": lambda v: v[0] * v[1],
    "divf": lambda v: v[0] / v[1] if v[1] != 0 else None,
}

_NP = {"addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide}


def _float_binary(name: str):
    def handler(eng, o, env):
        t = result_type(o)
        en = N.elem_name(t)
        a = _ftz(o, np.asarray(operand(env, o, 0)))
        b = _ftz(o, np.asarray(operand(env, o, 1)))
        cd = N.compute_dtype(en)
        r = N.round_to(np.asarray(_NP[name](a.astype(cd), b.astype(cd))), en)
        mode = enum_case(o, "rounding_mode", "nearest_even")
        if mode in ("zero", "positive_inf", "negative_inf"):
            get = N.exact_values(a, b)
            fn = _EXACT[name]

            def exact(i):
                v = get(i)
                return None if v is None else fn(v)
            r = N.directed_round(np.broadcast_to(r, np.broadcast_shapes(a.shape, b.shape)), exact, mode)
        return [_ftz(o, np.asarray(r))]
    handler.__doc__ = f"Ops.td {name}: IEEE {name[:-1]} rounded per ``rounding_mode`` in the element type."
    return handler


for _n in ("addf", "subf", "mulf", "divf"):
    op(_n)(_float_binary(_n))


@op("fma")
def _fma(eng, o, env):
    """Ops.td FmaOp: ``lhs * rhs + acc`` with one rounding."""
    t = result_type(o)
    en = N.elem_name(t)
    a, b, c = (_ftz(o, np.asarray(operand(env, o, i))) for i in range(3))
    r = N.fma_nearest(a, b, c, en)
    mode = enum_case(o, "rounding_mode", "nearest_even")
    if mode in ("zero", "positive_inf", "negative_inf"):
        get = N.exact_values(a, b, c)

        def exact(i):
            v = get(i)
            return None if v is None else v[0] * v[1] + v[2]
        r = N.directed_round(r, exact, mode)
    return [_ftz(o, np.asarray(r))]


def _maxmin(is_max: bool):
    def handler(eng, o, env):
        a = _ftz(o, np.asarray(operand(env, o, 0)))
        b = _ftz(o, np.asarray(operand(env, o, 1)))
        a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
        if flag(o, "propagate_nan"):
            r = np.maximum(a64, b64) if is_max else np.minimum(a64, b64)
        else:
            r = np.fmax(a64, b64) if is_max else np.fmin(a64, b64)
        both_zero = (a64 == 0) & (b64 == 0)
        if both_zero.any():
            neg_a, neg_b = np.signbit(a64), np.signbit(b64)
            zero = np.where(neg_a & neg_b, -0.0, 0.0) if is_max else np.where(neg_a | neg_b, -0.0, 0.0)
            r = np.where(both_zero, zero, r)
        return [r.astype(a.dtype)]
    handler.__doc__ = ("Ops.td MaxFOp/MinFOp: IEEE 754-2019 maximum/minimum with ``propagate_nan``, "
                       "maximumNumber/minimumNumber without; +0 > -0.")
    return handler


op("maxf")(_maxmin(True))
op("minf")(_maxmin(False))


@op("remf")
def _remf(eng, o, env):
    """Ops.td RemFOp: ``x - trunc(x / y) * y`` (C fmod; exact)."""
    a = np.asarray(operand(env, o, 0))
    b = np.asarray(operand(env, o, 1))
    return [N.round_to(np.fmod(a.astype(np.float64), b.astype(np.float64)), N.elem_name(result_type(o)))]


@op("negf")
def _negf(eng, o, env):
    """Ops.td NegFOp: sign flip."""
    return [np.negative(np.asarray(operand(env, o, 0)))]


@op("absf")
def _absf(eng, o, env):
    """Ops.td AbsFOp: sign cleared."""
    return [np.abs(np.asarray(operand(env, o, 0)))]


def _math(fn):
    def handler(eng, o, env):
        x = _ftz(o, np.asarray(operand(env, o, 0)))
        en = N.elem_name(result_type(o))
        r = N.round_to(np.asarray(fn(x.astype(np.float64))), en)
        return [_ftz(o, r)]
    handler.__doc__ = ("Ops.td floating_point_math_suffix: evaluated in f64 and rounded to the element "
                       "type (f16/bf16 are emulated in f32 on the GPU; approx/full use the accurate value).")
    return handler


_MATH = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "ceil": np.ceil, "floor": np.floor,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
}
for _n, _f in _MATH.items():
    op(_n)(_math(_f))


@op("sqrt")
def _sqrt(eng, o, env):
    """Ops.td SqrtOp: square root rounded per ``rounding_mode`` (exact rounding from f64 for smaller types)."""
    x = _ftz(o, np.asarray(operand(env, o, 0)))
    en = N.elem_name(result_type(o))
    r = N.round_to(np.sqrt(x.astype(np.float64)), en)
    mode = enum_case(o, "rounding_mode", "nearest_even")
    if mode in ("zero", "positive_inf", "negative_inf"):
        from fractions import Fraction
        flat_x = x.astype(np.float64).reshape(-1)
        flat_r = r.astype(np.float64).reshape(-1)

        # compare r^2 with x instead of r with sqrt(x): exact on rationals
        def exact(i):
            xv = flat_x[i]
            if not math.isfinite(xv) or xv < 0:
                return None
            rv = Fraction(float(flat_r[i]))
            xf = Fraction(float(xv))
            sq = rv * rv
            if sq == xf:
                return rv
            # any rational strictly on the correct side of r works for directed_round
            eps = Fraction(1, 1 << 1100)
            return rv - eps if sq > xf else rv + eps
        r = N.directed_round(r, exact, mode)
    return [_ftz(o, np.asarray(r))]


def _f64_binary(fn, doc: str):
    """A handler applying the NumPy function ``fn`` to the two float operands in f64, rounded to the element type."""
    def handler(eng, o, env):
        a = np.asarray(operand(env, o, 0)).astype(np.float64)
        b = np.asarray(operand(env, o, 1)).astype(np.float64)
        return [N.round_to(fn(a, b), N.elem_name(result_type(o)))]
    handler.__doc__ = doc
    return handler


op("pow", "fpowf")(_f64_binary(np.power, "Ops.td PowOp (printed ``fpowf`` by 13.5): ``x ** y`` evaluated in f64, "
                                         "rounded to the element type."))
op("atan2")(_f64_binary(np.arctan2, "Ops.td Atan2Op: ``atan2(lhs, rhs)`` evaluated in f64, "
                                   "rounded to the element type."))


@op("fpowi")
def _fpowi(eng, o, env):
    """fpowi (INFERRED, 13.5): float base to a signed integer power, evaluated in f64 and rounded."""
    a = np.asarray(operand(env, o, 0)).astype(np.float64)
    w = N.int_width(o.operands[1].type)
    n = N.int_operands(np.asarray(operand(env, o, 1)), w, True).astype(np.float64)
    return [N.round_to(np.power(a, n), N.elem_name(result_type(o)))]


@op("cmpf")
def _cmpf(eng, o, env):
    """Ops.td CmpFOp: ``ordered`` is false when either is NaN, ``unordered`` true."""
    a = np.asarray(operand(env, o, 0)).astype(np.float64)
    b = np.asarray(operand(env, o, 1)).astype(np.float64)
    pred = enum_case(o, "comparison_predicate")
    nan = np.isnan(a) | np.isnan(b)
    base = _CMP[pred](a, b)
    if enum_case(o, "comparison_ordering", "ordered") == "ordered":
        return [np.asarray(base & ~nan)]
    return [np.asarray(base | nan)]


# ---------------------------------------------------------------------------
# matrix multiply-accumulate
# ---------------------------------------------------------------------------


@op("mmaf")
def _mmaf(eng, o, env):
    """Ops.td MmaFOp: ``lhs @ rhs + acc``.

    Products and sums are computed in f64 (exact products for every input
    type but f64; the sum of K products is then rounded once to the
    accumulator type), i.e. more precise than a tensor core's f32
    accumulation.  ``fast_acc`` does not change the result.
    """
    a = np.asarray(operand(env, o, 0)).astype(np.float64)
    b = np.asarray(operand(env, o, 1)).astype(np.float64)
    c = np.asarray(operand(env, o, 2)).astype(np.float64)
    return [N.round_to(np.matmul(a, b) + c, N.elem_name(result_type(o)))]


@op("mmai")
def _mmai(eng, o, env):
    """Ops.td MmaIOp: i8 operands read per ``signedness_lhs``/``signedness_rhs``, exact i32 sum (wrapping)."""
    sl = enum_case(o, "signedness_lhs", "signed") == "signed"
    sr = enum_case(o, "signedness_rhs", "signed") == "signed"
    a = N.int_operands(np.asarray(operand(env, o, 0)), 8, sl)
    b = N.int_operands(np.asarray(operand(env, o, 1)), 8, sr)
    c = N.as_signed(np.asarray(operand(env, o, 2)), 32).astype(np.int64)
    return [N.wrap(np.matmul(a, b) + c, 32)]


@op("mmaf_scaled")
def _mmaf_scaled(eng, o, env):
    """Ops.td MmaFScaledOp: ``(lhs * lhs_scale) @ (rhs * rhs_scale) + acc``, scales broadcast along K.

    The block size V is K divided by the scale tile's K extent; computed in f64.
    """
    lhs, rhs, acc, ls, rs = (np.asarray(operand(env, o, i)).astype(np.float64) for i in range(5))
    k = lhs.shape[-1]
    vl = k // ls.shape[-1]
    vr = k // rs.shape[-2]
    a = lhs * np.repeat(ls, vl, axis=-1)
    b = rhs * np.repeat(rs, vr, axis=-2)
    return [N.round_to(np.matmul(a, b) + acc, N.elem_name(result_type(o)))]


# ---------------------------------------------------------------------------
# reduce and scan
# ---------------------------------------------------------------------------


def _identities(o: Operation) -> list[np.ndarray]:
    ids = o.attr("identities")
    elems = [v.type.element for v in o.operands]
    return [attr_scalar(a, e) for a, e in zip(ids.elements, elems)]


@op("reduce")
def _reduce(eng, o, env):
    """Ops.td ReduceOp: combines the elements along ``dim`` with the body (a pairwise tree).

    The body is evaluated on whole slices at once (its ops are element-wise).
    Ops.td leaves the order unspecified and requires an associative body; the
    tree combines neighbours, ``f(x[2i], x[2i+1])``, padding an odd count with
    the identity at the end, so it keeps the elements in order: an associative
    body that does not commute (the first non-zero element) gives the
    sequential left fold's result, as the lowering's reductions do
    (:mod:`tile_lsp.codegen.reductions`).
    """
    dim = int_attr(o, "dim")
    xs = [np.moveaxis(np.asarray(env[v]), dim, 0) for v in o.operands]
    ids = _identities(o)
    n = xs[0].shape[0]
    if n == 0:
        return [np.broadcast_to(i, x.shape[1:]) for i, x in zip(ids, xs)]
    while n > 1:
        if n % 2:
            xs = [np.concatenate([x, np.broadcast_to(i, (1,) + x.shape[1:])]) for x, i in zip(xs, ids)]
            n += 1
        half = n // 2
        args = []
        for x in xs:
            args += [x[0::2], x[1::2]]
        res = eng.call_body(o, args, env)
        xs = [np.broadcast_to(np.asarray(r), (half,) + x.shape[1:]) for r, x in zip(res, xs)]
        n = half
    return [x[0] for x in xs]


@op("scan")
def _scan(eng, o, env):
    """Ops.td ScanOp: inclusive prefix along ``dim`` (``reverse``: from the end), from the identity.

    The body is called as ``f(accumulator, element)`` per operand pair:
    Ops.td's formula ``result[j] = f(result[j-1], X[j])`` and its example
    ``(%acc, %elem)``, and what NVIDIA's tileiras 13.5 compiles (checked on an
    H200 with ``tests/kernels/custom_scans_f32_16x128.sm_90.mlir``, whose
    bodies keep the first non-zero of their arguments: the cubin matches this
    reading in every element and the other in none of 3909).  Ops.td's prose
    that lists the arguments as ``[current_iter, prev_iter]`` disagrees.
    """
    dim = int_attr(o, "dim")
    rev = bool(getattr(o.attr("reverse"), "value", False))
    xs = [np.moveaxis(np.asarray(env[v]), dim, 0) for v in o.operands]
    ids = _identities(o)
    n = xs[0].shape[0]
    accs = [np.broadcast_to(i, x.shape[1:]) for i, x in zip(ids, xs)]
    outs = [np.empty_like(x) for x in xs]
    for k in (range(n - 1, -1, -1) if rev else range(n)):
        args = []
        for x, acc in zip(xs, accs):
            args += [acc, x[k]]
        accs = [np.asarray(r) for r in eng.call_body(o, args, env)]
        for out, acc in zip(outs, accs):
            out[k] = acc
    return [np.moveaxis(out, 0, dim) for out in outs]


# ---------------------------------------------------------------------------
# control flow
# ---------------------------------------------------------------------------


@op("yield", "continue", "break", "return")
def _terminator(eng, o, env):
    """The terminators end their block with a :class:`Signal` named after the op, carrying its operands.

    Ops.td YieldOp: ends an ``if`` branch or a reduce/scan body with values.
    ContinueOp: next iteration of the innermost loop, with its carried values.
    BreakOp: leaves the innermost ``loop`` with its result values.
    ReturnOp: ends the tile block's execution.
    """
    return Signal(o.short_name, [env[v] for v in o.operands])


@op("if")
def _if(eng, o, env):
    """Ops.td IfOp: runs one branch; its ``yield`` gives the results, continue/break/return propagate."""
    cond = bool(np.asarray(operand(env, o, 0)).reshape(-1)[0])
    region = o.regions[0] if cond else (o.regions[1] if len(o.regions) > 1 else None)
    if region is None or not region.blocks:
        return [None] * len(o.results) if o.results else None
    sig = eng.run_region(region, [], env)
    if sig.kind == "yield":
        return sig.values
    if sig.kind == "end":
        return None
    return sig


@op("for")
def _for(eng, o, env):
    """Ops.td ForOp: ``iv`` from lowerBound while ``iv < upperBound`` (signed, or ``unsignedCmp``) by step."""
    lb_v, ub_v, st_v = (o.operand_group(n)[0] for n in ("lowerBound", "upperBound", "step"))
    t = lb_v.type
    w = N.int_width(t)
    unsigned = o.attr("unsignedCmp") is not None
    lb = scalar_int(env[lb_v], t, not unsigned)
    ub = scalar_int(env[ub_v], t, not unsigned)
    st = scalar_int(env[st_v], t, True)
    if st <= 0:
        raise InterpreterError(f"step must be positive, got {st}", o)
    iters = [env[v] for v in o.operand_group("initValues")]
    body = o.regions[0]
    count = 0
    iv = lb
    while iv < ub:
        count += 1
        if count > eng.max_loop_iterations:
            raise InterpreterError(f"loop did not finish after {eng.max_loop_iterations} iterations", o)
        sig = eng.run_region(body, [N.scalar_to_storage(iv, t)] + iters, env)
        if sig.kind in ("continue", "end"):
            if sig.kind == "continue":
                iters = sig.values
        elif sig.kind == "break":
            return sig.values
        else:
            return sig
        iv += st
        if iv >= 1 << w if unsigned else iv >= 1 << (w - 1):
            break  # the induction variable would wrap: the range ends
    return iters


@op("loop")
def _loop(eng, o, env):
    """Ops.td LoopOp: repeats the body until a ``break`` (whose values are the results)."""
    iters = [env[v] for v in o.operands]
    body = o.regions[0]
    count = 0
    while True:
        count += 1
        if count > eng.max_loop_iterations:
            raise InterpreterError(f"loop did not finish after {eng.max_loop_iterations} iterations", o)
        sig = eng.run_region(body, iters, env)
        if sig.kind == "continue":
            iters = sig.values
        elif sig.kind == "end":
            continue
        elif sig.kind == "break":
            return sig.values
        else:
            return sig


@op("assert")
def _assert(eng, o, env):
    """Ops.td AssertOp: an element that is 0 stops the run with the message and the element's index."""
    cond = np.asarray(operand(env, o, 0))
    if not cond.all():
        msg = getattr(o.attr("message"), "value", "")
        bad = tuple(int(i) for i in np.argwhere(~cond.astype(bool))[0]) if cond.ndim else ()
        where = f" at index {list(bad)}" if bad else ""
        raise InterpreterError(f"assertion failed{where} in tile block {list(eng.block_id)}: {msg}", o)


# ---------------------------------------------------------------------------
# print_tko: C printf format
# ---------------------------------------------------------------------------

_FMT = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|L|z|j|t)?([diouxXeEfFgGcsaA%])")


@op("print_tko")
def _print(eng, o, env):
    """Ops.td PrintTkoOp: C printf-style text, appended to the engine's ``printed`` list.

    A tile of one element prints as its element; a larger tile as ``[v0, v1,
    ...]`` with each element in the conversion's format (row-major), the
    interpreter's own rendering.
    """
    fmt = getattr(o.attr("str"), "value", "")
    args = [(env[v], v.type) for v in o.operand_group("args")]
    out: list[str] = []
    pos = 0
    k = 0
    for m in _FMT.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        conv = m.group(5)
        if conv == "%":
            out.append("%")
            continue
        if k >= len(args):
            raise InterpreterError("print_tko format has more conversions than arguments", o)
        val, t = args[k]
        k += 1
        spec = "%" + (m.group(1) or "") + (m.group(2) or "") + (("." + m.group(3)) if m.group(3) else "")
        out.append(_format_tile(np.asarray(val), t, spec, conv))
    out.append(fmt[pos:])
    eng.printed.append("".join(out))
    return [None]


def _format_tile(x: np.ndarray, t: T.Type, spec: str, conv: str) -> str:
    elem = t.element if isinstance(t, T.TileType) else t
    conv_py = {"u": "d", "i": "d", "a": "e", "A": "E"}.get(conv, conv)

    def one(v) -> str:
        if conv in "diouxXc":
            if isinstance(elem, T.IntegerType):
                iv = int(N.int_operands(np.asarray(v), elem.width, conv in "di").reshape(-1)[0])
            elif isinstance(elem, T.PointerType):
                iv = int(v)
            else:
                iv = int(float(v))
            return (spec + conv_py) % iv
        if conv == "s":
            return (spec + "s") % str(v)
        fv = float(v)
        return (spec + conv_py) % fv
    if x.size == 1:
        return one(x.reshape(()))
    return "[" + ", ".join(one(v) for v in x.reshape(-1)) + "]"
