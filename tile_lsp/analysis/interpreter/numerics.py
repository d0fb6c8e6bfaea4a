"""Element types and arithmetic of the reference interpreter, on NumPy arrays.

A tile value is a NumPy array whose shape is the tile's shape (``()`` for a
0-d tile) and whose dtype is the storage of the element type
(:data:`_DTYPES`): signless integers are kept in the signed NumPy type of
their width (``i1`` as ``bool``), and the operations that take a
``signed``/``unsigned`` flag reinterpret the bits (:func:`as_unsigned`).
Floats use NumPy's IEEE types and ``ml_dtypes`` for ``bf16`` and the 8-, 6-
and 4-bit formats; ``tf32`` is stored as ``float32`` holding values with a
10-bit mantissa.  Pointers are ``uint64`` byte addresses.

Rounding (Ops.td "floating_point_arith_suffix": the rounding modifier
applies to each element of the result):

* ``nearest_even`` results are correctly rounded in the element type: f32 and
  f64 operations are NumPy's IEEE operations; f16 and bf16 ``+ - * / sqrt``
  are computed in f32 and rounded, which is exact rounding because f32 has
  more than 2p+2 bits for those formats (the "emulated in f32" of the Ops.td
  modifier tables).
* ``fma`` is fused: f16/bf16/f32 products are exact in f64 and the sum is
  rounded once, using the exact error of the f64 addition (TwoSum) to break
  the f64 rounding; f64 ``fma`` is evaluated exactly with rationals.
* ``zero``, ``negative_inf`` and ``positive_inf`` start from the nearest
  result and step one unit in the last place where an exact rational
  comparison shows it on the wrong side of the true value.
* ``approx`` and ``full`` (fast hardware approximations) are computed like
  ``nearest_even`` / NumPy's math library: the interpreter gives the accurate
  value, within the ULP bounds Ops.td allows for them.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np

from tile_lsp.dialect import types as T

# Storage dtype of each element type, by MLIR spelling.
_DTYPES: dict[str, np.dtype] = {
    "i1": np.dtype(np.bool_),
    "i4": np.dtype(np.int8),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "tf32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "f4E2M1FN": np.dtype(ml_dtypes.float4_e2m1fn),
    "f6E2M3FN": np.dtype(ml_dtypes.float6_e2m3fn),
    "f6E3M2FN": np.dtype(ml_dtypes.float6_e3m2fn),
}

_UNSIGNED = {1: np.dtype(np.bool_), 4: np.dtype(np.uint8), 8: np.dtype(np.uint8), 16: np.dtype(np.uint16),
             32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}
_SIGNED = {8: np.dtype(np.int8), 16: np.dtype(np.int16), 32: np.dtype(np.int32), 64: np.dtype(np.int64)}

PTR_DTYPE = np.dtype(np.uint64)

# Types computed in f32 and rounded back ("emulated in f32" in Ops.td)
_HALF_TYPES = ("f16", "bf16")


class UnsupportedType(Exception):
    """An element type the interpreter has no storage for."""


def dtype_of(t: T.Type) -> np.dtype:
    """NumPy storage dtype of element type ``t`` (a tile's element, or the tile itself).

    Raises :class:`UnsupportedType` for a type without storage (``index``,
    ``f80``...).
    """
    if isinstance(t, T.TileType):
        t = t.element
    if isinstance(t, T.PointerType):
        return PTR_DTYPE
    dt = _DTYPES.get(str(t))
    if dt is None:
        raise UnsupportedType(str(t))
    return dt


def int_width(t: T.Type) -> int:
    """Bit width of integer element type ``t`` (a tile or its element)."""
    if isinstance(t, T.TileType):
        t = t.element
    assert isinstance(t, T.IntegerType)
    return t.width


def is_float(t: T.Type) -> bool:
    """Whether ``t`` (a tile or an element type) has a float element."""
    if isinstance(t, T.TileType):
        t = t.element
    return isinstance(t, T.FloatType)


def elem_name(t: T.Type) -> str:
    """MLIR spelling of the element type of ``t``."""
    if isinstance(t, T.TileType):
        t = t.element
    return str(t)


# ---------------------------------------------------------------------------
# Integers: signless values, signed/unsigned views, wrapping
# ---------------------------------------------------------------------------


def as_unsigned(x: np.ndarray, width: int) -> np.ndarray:
    """The bits of signless ``x`` read as unsigned ``width``-bit integers."""
    if width == 1:
        return x.astype(np.uint8)
    if width == 4:
        return (x.astype(np.uint8) & 0xF)
    return x.view(_UNSIGNED[width]) if x.dtype.itemsize * 8 == width else x.astype(_UNSIGNED[width])


def as_signed(x: np.ndarray, width: int) -> np.ndarray:
    """The bits of signless ``x`` read as two's complement ``width``-bit integers (i1: 0 or -1)."""
    if width == 1:
        return -x.astype(np.int8)
    if width == 4:
        v = x.astype(np.int8) & 0xF
        return np.where(v >= 8, v - 16, v).astype(np.int8)
    return x.view(_SIGNED[width]) if x.dtype.itemsize * 8 == width else x.astype(_SIGNED[width])


def wrap(x: np.ndarray, width: int) -> np.ndarray:
    """Signless storage of the low ``width`` bits of integer array ``x`` (wrap-around)."""
    if width == 1:
        return (np.asarray(x) & 1).astype(np.bool_)
    if width == 4:
        v = np.asarray(x).astype(np.int64) & 0xF
        return np.where(v >= 8, v - 16, v).astype(np.int8)
    x = np.asarray(x)
    target = _SIGNED[width]
    if x.dtype == target:
        return x
    if x.dtype.kind in "iub" and x.dtype.itemsize * 8 == width:
        return x.view(target)
    return x.astype(np.uint64 if x.dtype.kind == "u" else np.int64).astype(target)


def int_operands(x: np.ndarray, width: int, signed: bool) -> np.ndarray:
    """``x`` widened to 64-bit Python-exact integers read with the given signedness.

    Unsigned i64 stays ``uint64`` (every value fits); everything else becomes
    ``int64``.
    """
    if signed:
        return as_signed(x, width).astype(np.int64)
    u = as_unsigned(x, width)
    return u.astype(np.uint64) if width == 64 else u.astype(np.int64)


def scalar_to_storage(value, t: T.Type) -> np.ndarray:
    """A 0-d array of element type ``t`` holding Python number ``value`` (integers wrap)."""
    dt = dtype_of(t)
    if isinstance(t, T.TileType):
        t = t.element
    if isinstance(t, T.IntegerType):
        v = int(value) & ((1 << t.width) - 1)
        if t.width == 1:
            return np.array(bool(v))
        if v >= 1 << (t.width - 1):
            v -= 1 << t.width
        return np.array(v, dtype=dt)
    if isinstance(t, T.PointerType):
        return np.array(int(value) & (2**64 - 1), dtype=PTR_DTYPE)
    return round_to(np.array(float(value), dtype=np.float64), elem_name(t))


# ---------------------------------------------------------------------------
# Floats
# ---------------------------------------------------------------------------


def round_to(x: np.ndarray, name: str) -> np.ndarray:
    """``x`` (any float array) rounded to nearest-even in element type ``name``.

    ``tf32`` keeps 10 mantissa bits of an f32 (round to nearest even).
    """
    dt = _DTYPES[name]
    if name == "tf32":
        return _round_tf32(np.asarray(x, dtype=np.float32))
    x = np.asarray(x)
    if x.dtype == dt:
        return x
    if x.dtype == np.float64 and dt not in (np.dtype(np.float32), np.dtype(np.float16)):
        # ml_dtypes converts f64 through f32 with two nearest roundings; an
        # f32 rounded to odd first makes the final rounding exact (f32 has
        # more than p + 2 bits for every smaller format)
        x = _f64_to_f32_odd(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(dt)


def _f64_to_f32_odd(x: np.ndarray) -> np.ndarray:
    """f64 ``x`` rounded to f32 with round-to-odd (truncate, then set the last bit if inexact)."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(np.float32)
    back = r.astype(np.float64)
    finite = np.isfinite(x) & np.isfinite(back)
    too_big = finite & (np.abs(back) > np.abs(x))
    r = np.where(too_big, step(r, x < 0), r)
    inexact = finite & (r.astype(np.float64) != x)
    bits = r.view(np.uint32) | inexact.astype(np.uint32)
    return bits.view(np.float32).reshape(np.shape(x))


def _round_tf32(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to tf32 (1-8-10), nearest even, kept in f32 storage."""
    bits = x.view(np.uint32).astype(np.uint64)
    finite = np.isfinite(x)
    lsb = (bits >> 13) & 1
    rounded = ((bits + 0xFFF + lsb) & ~np.uint64(0x1FFF)) & 0xFFFFFFFF
    out = np.where(finite, rounded, bits).astype(np.uint32).view(np.float32)
    return out.reshape(x.shape)


def directed_round_tf32(x: np.ndarray, mode: str) -> np.ndarray:
    """f32 values rounded to tf32 (1-8-10) toward ``zero``, ``positive_inf`` or ``negative_inf``,
    kept in f32 storage: the low 13 bits dropped, and the magnitude one tf32 ulp up where bits were
    dropped and the direction is away from zero.  Infinities and NaNs are kept."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    neg = (bits >> 31) == 1
    away = np.zeros(bits.shape, bool) if mode == "zero" else (neg if mode == "negative_inf" else ~neg)
    up = ((bits & 0x1FFF) != 0) & away
    rounded = ((bits & ~np.uint64(0x1FFF)) + np.where(up, 0x2000, 0).astype(np.uint64)) & 0xFFFFFFFF
    out = np.where(np.isfinite(x), rounded, bits).astype(np.uint32).view(np.float32)
    return out.reshape(x.shape)


def compute_dtype(name: str) -> np.dtype:
    """dtype in which ``name`` arithmetic is evaluated: f32 for the half types, else itself."""
    if name in _HALF_TYPES or name == "tf32":
        return np.dtype(np.float32)
    return _DTYPES[name]


def flush_subnormals(x: np.ndarray) -> np.ndarray:
    """Subnormal values of ``x`` replaced by zero of the same sign (``flush_to_zero``)."""
    tiny = ml_dtypes.finfo(x.dtype).smallest_normal
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x).astype(x.dtype)


def step(x: np.ndarray, toward_positive: np.ndarray) -> np.ndarray:
    """The neighbour of each element of ``x`` in its own float format, up or down.

    Works on the sign-magnitude bit pattern so it covers every ``ml_dtypes``
    format with a sign bit.  Infinities and NaNs are returned unchanged except
    that stepping down from +inf gives the largest finite value.
    """
    x = np.asarray(x)
    bits_t = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
    nbits = _storage_bits(x.dtype)
    sign_bit = np.uint64(1) << np.uint64(nbits - 1)
    b = x.view(bits_t).astype(np.uint64)
    neg = (b & sign_bit) != 0
    mag = b & (sign_bit - np.uint64(1))
    up = np.asarray(toward_positive, dtype=bool)
    # moving away from zero when (positive and up) or (negative and down)
    away = np.where(neg, ~up, up)
    is_zero = mag == 0
    new_mag = np.where(away, mag + np.uint64(1), np.where(is_zero, np.uint64(1), mag - np.uint64(1)))
    # from a zero, moving down/up crosses to the smallest value of the right sign
    new_neg = np.where(is_zero, ~up, neg)
    out = np.where(new_neg, new_mag | sign_bit, new_mag)
    res = out.astype(bits_t).view(x.dtype).reshape(x.shape)
    keep = np.isnan(x.astype(np.float64))
    return np.where(keep, x, res)


def _storage_bits(dt: np.dtype) -> int:
    return {np.dtype(ml_dtypes.float4_e2m1fn): 4, np.dtype(ml_dtypes.float6_e2m3fn): 6,
            np.dtype(ml_dtypes.float6_e3m2fn): 6}.get(np.dtype(dt), np.dtype(dt).itemsize * 8)


def _exact(v) -> Fraction | None:
    f = float(v)
    if not math.isfinite(f):
        return None
    return Fraction(f)


def directed_round(r: np.ndarray, exact_of, mode: str) -> np.ndarray:
    """Correct the nearest-rounded result ``r`` to rounding ``mode`` (zero, negative_inf, positive_inf).

    ``exact_of(i)`` returns the exact rational value of element ``i`` (flat
    index) or ``None`` when it is not finite.  Elements whose exact value
    lies on the wrong side of ``r`` move one step (:func:`step`).
    """
    flat = np.asarray(r).reshape(-1)
    fix_idx: list[int] = []
    fix_up: list[bool] = []
    for i in range(flat.size):
        ex = exact_of(i)
        if ex is None:
            continue
        rv = float(flat[i])
        if math.isnan(rv):
            continue
        if rv in (float("inf"), float("-inf")):
            cmp = 1 if rv > 0 else -1
        else:
            fr = Fraction(rv)
            cmp = (fr > ex) - (fr < ex)
        if cmp == 0:
            continue
        # cmp > 0: r is above the exact value, so it must move down (and vice versa)
        wrong = {"zero": (cmp > 0) == (ex >= 0), "positive_inf": cmp < 0, "negative_inf": cmp > 0}[mode]
        if wrong:
            fix_idx.append(i)
            fix_up.append(cmp < 0)
    if not fix_idx:
        return np.asarray(r)
    out = flat.copy()
    idx = np.array(fix_idx)
    out[idx] = step(out[idx], np.array(fix_up))
    return out.reshape(np.shape(r))


def exact_values(*arrays: np.ndarray):
    """Per-element exact rationals of broadcast ``arrays`` (``None`` for inf/NaN)."""
    flat = [np.asarray(a).reshape(-1) for a in np.broadcast_arrays(*arrays)]

    def get(i: int):
        vals = [_exact(a[i]) for a in flat]
        return None if any(v is None for v in vals) else vals
    return get


def fma_nearest(a: np.ndarray, b: np.ndarray, c: np.ndarray, name: str) -> np.ndarray:
    """``a * b + c`` rounded once to nearest-even in element type ``name``."""
    if name == "f64":
        get = exact_values(a, b, c)
        shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
        approx = (np.asarray(a, np.float64) * b + c).reshape(-1)
        out = approx.copy()
        for i in range(out.size):
            v = get(i)
            if v is None:
                continue
            ex = v[0] * v[1] + v[2]
            out[i] = _fraction_to_f64(ex)
        return out.reshape(shape)
    a64, b64, c64 = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    p = a64 * b64  # exact: at most 2x24 significant bits
    s = p + c64
    e = _two_sum_err(p, c64, s)
    return round_f64_sticky(s, e, name)


def _fraction_to_f64(x: Fraction) -> float:
    """Nearest-even f64 of rational ``x`` (Python's true division rounds correctly)."""
    try:
        return x.numerator / x.denominator
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def _two_sum_err(a: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Exact error ``(a + b) - s`` of the f64 sum ``s = fl(a + b)`` (Knuth's TwoSum)."""
    with np.errstate(invalid="ignore", over="ignore"):
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
    return np.where(np.isfinite(err), err, 0.0)


def round_f64_sticky(s: np.ndarray, e: np.ndarray, name: str, mode: str = "nearest_even") -> np.ndarray:
    """Round the exact value ``s + e`` (f64 ``s``, tiny f64 error ``e``) to element type ``name``.

    ``s`` alone would double-round when it is exactly a tie (or, for directed
    modes, exactly representable) in the target format; the sign of ``e``
    breaks it.
    """
    r = round_to(s, name)
    back = r.astype(np.float64)
    with np.errstate(invalid="ignore"):
        other = step(r, s > back).astype(np.float64)
        exact_fit = back == s
        tie = (~exact_fit) & (np.abs(s - back) == np.abs(other - s)) & (e != 0)
    if mode == "nearest_even":
        move = tie & ((e > 0) != (back > s))  # the tie broke away from the current choice
        # a tie resolved by e: pick the neighbour on e's side of s
        return np.where(move, step(r, e > 0), r)
    up = e > 0
    down = e < 0
    if mode == "positive_inf":
        need = (exact_fit & up) | (~exact_fit & (back < s))
        return np.where(need, step(r, np.ones_like(need)), r)
    if mode == "negative_inf":
        need = (exact_fit & down) | (~exact_fit & (back > s))
        return np.where(need, step(r, np.zeros_like(need)), r)
    # zero
    mag_too_big = (exact_fit & (((s > 0) & down) | ((s < 0) & up))) | (~exact_fit & (np.abs(back) > np.abs(s)))
    return np.where(mag_too_big, step(r, s < 0), r)
