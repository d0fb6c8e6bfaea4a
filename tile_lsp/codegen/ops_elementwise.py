"""Lowering of the element-wise cuda_tile ops (arith, math, comparisons, conversions, select).

Operands of an element-wise op have the result's shape, so the lowering
works slot by slot.  Floats narrower than f32 (f16, bf16, f8, f4) are
computed in f32 and rounded back (exact for add/sub/mul/div/sqrt: f32 holds
more than twice their precision); f64 is computed in f64 for the IEEE
operations.  Transcendentals use the PTX ``.approx`` instructions (``ex2``,
``lg2``, ``sin``, ``cos``, ``rsqrt``) on f32, with argument reduction for
``sin``/``cos``; f64 transcendentals are computed in f32 precision and the
lowering says so in a warning.  Semantics: NVIDIA cuda-tile ``Ops.td``
(CudaTile_*Op descriptions).
"""

from __future__ import annotations

import math

from tile_lsp.analysis.ir.core import Operation
from tile_lsp.codegen.lower import KernelLowering, enum_case, f32_imm, f64_imm, handler
from tile_lsp.codegen.mma_fragments import RowFragments, ScaledFragments, from_rows, scaled_in_fragments
from tile_lsp.codegen.ptx import LoweringError, TileValue, reg_class
from tile_lsp.dialect import types as T

ROUNDING = {"nearest_even": "rn", "zero": "rz", "negative_inf": "rm", "positive_inf": "rp",
            "nearest_int_to_zero": "rz"}


def _operands(lw: KernelLowering, op: Operation) -> list[TileValue]:
    return [lw.tile(v) for v in op.operands]


def _fimm(cls: str, x: float) -> str:
    return f64_imm(x) if cls == "f64" else f32_imm(x)


# ---------------------------------------------------------------------------
# floating point
# ---------------------------------------------------------------------------

def _float_binary(ptx: str, ftz_ok: bool = True, rounding: bool = True):
    def lower(lw: KernelLowering, op: Operation) -> None:
        rnd = ROUNDING.get(enum_case(op, "rounding_mode", "nearest_even") or "nearest_even", "rn")
        scaled = scaled_in_fragments(op) if ptx == "mul" else None
        if scaled is not None:  # an MMA accumulator in fragments times a broadcast row vector: the MMA
            i, bcast = scaled   # computes it, staging the row vector with its operands
            ftz = ".ftz" if op.attr("flush_to_zero") is not None else ""
            scale = lw.get(bcast.operands[0])  # in the distribution, or as fragment rows (fragment_layouts.py)
            frag = lw.get(op.operands[i])
            if isinstance(scale, RowFragments) and not frag.blocked:
                scale = from_rows(lw, scale)
            elif not isinstance(scale, RowFragments):
                scale = lw.tile(bcast.operands[0])
            lw.set(op.results[0], ScaledFragments(frag, scale, f"mul.{rnd}{ftz}.f32"))
            return
        a, b = _operands(lw, op)
        out = lw.new_result(op)
        elem = a.elem
        cls = lw.fwide(elem)
        mode = enum_case(op, "rounding_mode")
        ftz = ".ftz" if op.attr("flush_to_zero") is not None and cls == "f32" and ftz_ok else ""
        for s in range(len(out.regs)):
            x, y = lw.to_compute(a.regs[s], elem), lw.to_compute(b.regs[s], elem)
            r = lw.f.reg(cls)
            if ptx == "div" and mode in ("approx", "full") and cls == "f32":
                lw.f.emit(f"div.{mode}{ftz}.f32 {r}, {x}, {y}")
            elif rounding:
                lw.f.emit(f"{ptx}.{rnd}{ftz}.{cls} {r}, {x}, {y}")
            else:
                lw.f.emit(f"{ptx}{ftz}.{cls} {r}, {x}, {y}")
            lw.mov(reg_class(elem), out.regs[s], lw.from_compute(r, elem))
    return lower


handler("addf")(_float_binary("add"))
handler("subf")(_float_binary("sub"))
handler("mulf")(_float_binary("mul"))
handler("divf")(_float_binary("div"))


@handler("maxf", "minf")
def _maxmin_f(lw: KernelLowering, op: Operation) -> None:
    a, b = _operands(lw, op)
    out = lw.new_result(op)
    cls = lw.fwide(a.elem)
    name = "max" if op.name.endswith("maxf") else "min"
    nan = ".NaN" if op.attr("propagate_nan") is not None and cls == "f32" else ""
    for s in range(len(out.regs)):
        r = lw.f.reg(cls)
        lw.f.emit(f"{name}{nan}.{cls} {r}, {lw.to_compute(a.regs[s], a.elem)}, {lw.to_compute(b.regs[s], a.elem)}")
        if nan == "" and op.attr("propagate_nan") is not None:  # f64: propagate by hand
            p = lw.f.reg("pred")
            x = lw.to_compute(a.regs[s], a.elem)
            y = lw.to_compute(b.regs[s], a.elem)
            lw.f.emit(f"setp.nan.{cls} {p}, {x}, {y}")
            lw.f.emit(f"selp.{cls} {r}, {_fimm(cls, math.nan)}, {r}, {p}")
        lw.mov(reg_class(a.elem), out.regs[s], lw.from_compute(r, a.elem))


@handler("fma")
def _fma(lw: KernelLowering, op: Operation) -> None:
    a, b, c = _operands(lw, op)
    out = lw.new_result(op)
    cls = lw.fwide(a.elem)
    rnd = ROUNDING.get(enum_case(op, "rounding_mode", "nearest_even") or "nearest_even", "rn")
    ftz = ".ftz" if op.attr("flush_to_zero") is not None and cls == "f32" else ""
    for s in range(len(out.regs)):
        r = lw.f.reg(cls)
        lw.f.emit(f"fma.{rnd}{ftz}.{cls} {r}, {lw.to_compute(a.regs[s], a.elem)}, "
                  f"{lw.to_compute(b.regs[s], a.elem)}, {lw.to_compute(c.regs[s], a.elem)}")
        lw.mov(reg_class(a.elem), out.regs[s], lw.from_compute(r, a.elem))


def _warn_f32_precision(lw: KernelLowering, op: Operation) -> None:
    lw.warnings.append((op, f"'{op.name}' on f64 is computed with f32 precision by the PTX lowering"))


def _float_unary(build):
    def lower(lw: KernelLowering, op: Operation) -> None:
        (a,) = _operands(lw, op)[:1]
        out = lw.new_result(op)
        cls = lw.fwide(a.elem)
        if cls == "f64" and build.__name__ in _APPROX_ONLY:
            _warn_f32_precision(lw, op)
        for s in range(len(out.regs)):
            x = lw.to_compute(a.regs[s], a.elem)
            if cls == "f64" and build.__name__ in _APPROX_ONLY:
                x32 = lw.f.reg("f32")
                lw.f.emit(f"cvt.rn.f32.f64 {x32}, {x}")
                r32 = build(lw, op, x32, "f32")
                r = lw.f.reg("f64")
                lw.f.emit(f"cvt.f64.f32 {r}, {r32}")
            else:
                r = build(lw, op, x, cls)
            lw.mov(reg_class(a.elem), out.regs[s], lw.from_compute(r, a.elem))
    return lower


_APPROX_ONLY = {"_exp", "_exp2", "_log", "_log2", "_sin", "_cos", "_tan", "_tanh", "_sinh", "_cosh", "_atan_u"}


def _un(lw, ins, x, cls):
    r = lw.f.reg(cls)
    lw.f.emit(f"{ins}.{cls} {r}, {x}")
    return r


def _negf(lw, op, x, cls):
    return _un(lw, "neg", x, cls)


def _absf(lw, op, x, cls):
    return _un(lw, "abs", x, cls)


def _floor(lw, op, x, cls):
    return _cvt_round(lw, "rmi", x, cls)


def _ceil(lw, op, x, cls):
    return _cvt_round(lw, "rpi", x, cls)


def _cvt_round(lw, mode, x, cls):
    r = lw.f.reg(cls)
    lw.f.emit(f"cvt.{mode}.{cls}.{cls} {r}, {x}")
    return r


def _sqrt(lw, op, x, cls):
    r = lw.f.reg(cls)
    mode = enum_case(op, "rounding_mode", "nearest_even")
    if mode == "approx" and cls == "f32":
        lw.f.emit(f"sqrt.approx{_ftz(op)}.f32 {r}, {x}")
    else:
        lw.f.emit(f"sqrt.{ROUNDING.get(mode or 'nearest_even', 'rn')}.{cls} {r}, {x}")
    return r


def _rsqrt(lw, op, x, cls):
    r = lw.f.reg(cls)
    if cls == "f64":
        lw.f.emit(f"rsqrt.approx.f64 {r}, {x}")
    else:
        lw.f.emit(f"rsqrt.approx{_ftz(op)}.f32 {r}, {x}")
    return r


def _ftz(op) -> str:
    """``.ftz`` for the f32 ``.approx`` instruction of a math op with ``flush_to_zero`` (Ops.td: subnormal
    inputs and results are zero, what ``.ftz`` does: PTX ISA ``ex2``/``lg2``/``sin``/``cos``/``sqrt``/
    ``rsqrt``); without it ptxas wraps ``ex2.approx.f32`` in a range test and two multiplies."""
    return ".ftz" if op.attr("flush_to_zero") is not None else ""


def _exp2(lw, op, x, cls):
    r = lw.f.reg("f32")
    lw.f.emit(f"ex2.approx{_ftz(op)}.f32 {r}, {x}")
    return r


def _exp(lw, op, x, cls):
    t = lw.f.reg("f32")
    lw.f.emit(f"mul.f32 {t}, {x}, {f32_imm(1.4426950408889634)}")
    return _exp2(lw, op, t, cls)


def _log2(lw, op, x, cls):
    r = lw.f.reg("f32")
    lw.f.emit(f"lg2.approx{_ftz(op)}.f32 {r}, {x}")
    return r


def _log(lw, op, x, cls):
    t = _log2(lw, op, x, cls)
    r = lw.f.reg("f32")
    lw.f.emit(f"mul.f32 {r}, {t}, {f32_imm(0.6931471805599453)}")
    return r


def _reduce_2pi(lw, x):
    """x - round(x / 2pi) * 2pi in two steps (Cody-Waite), for sin.approx/cos.approx."""
    f = lw.f
    k = f.reg("f32")
    f.emit(f"mul.f32 {k}, {x}, {f32_imm(1 / (2 * math.pi))}")
    f.emit(f"cvt.rni.f32.f32 {k}, {k}")
    r = f.reg("f32")
    hi = float.fromhex("0x1.921fb6p+2")  # 2*pi rounded to f32
    lo = 2 * math.pi - hi
    f.emit(f"fma.rn.f32 {r}, {k}, {f32_imm(-hi)}, {x}")
    f.emit(f"fma.rn.f32 {r}, {k}, {f32_imm(-lo)}, {r}")
    return r


def _sin(lw, op, x, cls):
    r = lw.f.reg("f32")
    lw.f.emit(f"sin.approx{_ftz(op)}.f32 {r}, {_reduce_2pi(lw, x)}")
    return r


def _cos(lw, op, x, cls):
    r = lw.f.reg("f32")
    lw.f.emit(f"cos.approx{_ftz(op)}.f32 {r}, {_reduce_2pi(lw, x)}")
    return r


def _tan(lw, op, x, cls):
    s, c = _sin(lw, op, x, cls), _cos(lw, op, x, cls)
    r = lw.f.reg("f32")
    lw.f.emit(f"div.rn.f32 {r}, {s}, {c}")
    return r


def _tanh(lw, op, x, cls):
    # tanh(x) = sign(x) * (1 - 2 / (exp(2|x|) + 1))
    f = lw.f
    a = f.reg("f32")
    f.emit(f"abs.f32 {a}, {x}")
    t = f.reg("f32")
    f.emit(f"mul.f32 {t}, {a}, {f32_imm(2 * 1.4426950408889634)}")
    e = f.reg("f32")
    f.emit(f"ex2.approx.f32 {e}, {t}")
    f.emit(f"add.f32 {e}, {e}, 0f3F800000")
    q = f.reg("f32")
    f.emit(f"div.rn.f32 {q}, 0f40000000, {e}")
    r = f.reg("f32")
    f.emit(f"sub.f32 {r}, 0f3F800000, {q}")
    f.emit(f"copysign.f32 {r}, {x}, {r}")
    return r


def _exp_pair(lw, x):
    f = lw.f
    t = f.reg("f32")
    f.emit(f"mul.f32 {t}, {x}, {f32_imm(1.4426950408889634)}")
    e = f.reg("f32")
    f.emit(f"ex2.approx.f32 {e}, {t}")
    n = f.reg("f32")
    f.emit(f"neg.f32 {t}, {t}")
    f.emit(f"ex2.approx.f32 {n}, {t}")
    return e, n


def _half_exp_pair(lw, x, ins):
    """(e^x ``ins`` e^-x) / 2 in f32 (``ins``: ``sub`` for sinh, ``add`` for cosh)."""
    e, n = _exp_pair(lw, x)
    r = lw.f.reg("f32")
    lw.f.emit(f"{ins}.f32 {r}, {e}, {n}")
    lw.f.emit(f"mul.f32 {r}, {r}, 0f3F000000")
    return r


def _sinh(lw, op, x, cls):
    return _half_exp_pair(lw, x, "sub")


def _cosh(lw, op, x, cls):
    return _half_exp_pair(lw, x, "add")


def _atan_u(lw, op, x, cls):
    """atan(x) for f32 (Cephes atanf: reduction to |x| <= tan(pi/8) and a degree-4 polynomial in x^2)."""
    f = lw.f
    a = f.reg("f32")
    f.emit(f"abs.f32 {a}, {x}")
    big = f.reg("pred")
    mid = f.reg("pred")
    f.emit(f"setp.gt.f32 {big}, {a}, {f32_imm(2.414213562373095)}")
    f.emit(f"setp.gt.f32 {mid}, {a}, {f32_imm(0.4142135623730950)}")
    # y0 and reduced argument
    t_big = f.reg("f32")
    f.emit(f"rcp.rn.f32 {t_big}, {a}")
    f.emit(f"neg.f32 {t_big}, {t_big}")
    t_mid = f.reg("f32")
    num = f.reg("f32")
    den = f.reg("f32")
    f.emit(f"sub.f32 {num}, {a}, 0f3F800000")
    f.emit(f"add.f32 {den}, {a}, 0f3F800000")
    f.emit(f"div.rn.f32 {t_mid}, {num}, {den}")
    z = f.reg("f32")
    y0 = f.reg("f32")
    f.emit(f"selp.f32 {z}, {t_mid}, {a}, {mid}")
    f.emit(f"selp.f32 {y0}, {f32_imm(math.pi / 4)}, 0f00000000, {mid}")
    f.emit(f"selp.f32 {z}, {t_big}, {z}, {big}")
    f.emit(f"selp.f32 {y0}, {f32_imm(math.pi / 2)}, {y0}, {big}")
    zz = f.reg("f32")
    f.emit(f"mul.f32 {zz}, {z}, {z}")
    p = f.reg("f32")
    f.emit(f"mov.f32 {p}, {f32_imm(8.05374449538e-2)}")
    for c in (-1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1):
        f.emit(f"fma.rn.f32 {p}, {p}, {zz}, {f32_imm(c)}")
    f.emit(f"mul.f32 {p}, {p}, {zz}")
    f.emit(f"fma.rn.f32 {p}, {p}, {z}, {z}")
    r = f.reg("f32")
    f.emit(f"add.f32 {r}, {y0}, {p}")
    f.emit(f"copysign.f32 {r}, {x}, {r}")
    return r


for _name, _fn in (("negf", _negf), ("absf", _absf), ("floor", _floor), ("ceil", _ceil), ("sqrt", _sqrt),
                   ("rsqrt", _rsqrt), ("exp", _exp), ("exp2", _exp2), ("log", _log), ("log2", _log2),
                   ("sin", _sin), ("cos", _cos), ("tan", _tan), ("tanh", _tanh), ("sinh", _sinh),
                   ("cosh", _cosh), ("atan", _atan_u)):
    handler(_name)(_float_unary(_fn))


def _f32_binary(build):
    """The handler of a binary float op computed in f32 by ``build(lw, op, x, y) -> f32 register``
    (f64 operands are rounded to f32, with a warning, and the result widened back)."""
    def lower(lw: KernelLowering, op: Operation) -> None:
        xv, yv = _operands(lw, op)
        out = lw.new_result(op)
        if lw.fwide(xv.elem) == "f64":
            _warn_f32_precision(lw, op)
        for s in range(len(out.regs)):
            x = _as_f32(lw, xv.regs[s], xv.elem)
            y = _as_f32(lw, yv.regs[s], yv.elem)
            r = build(lw, op, x, y)
            lw.mov(reg_class(xv.elem), out.regs[s], _from_f32_any(lw, r, xv.elem))
    return lower


def _atan2_f32(lw, op, x, y):
    """atan2(x, y): the angle of (y, x), i.e. C's ``atan2(x, y)`` (Ops.td CudaTile_Atan2Op)."""
    f = lw.f
    q = f.reg("f32")
    f.emit(f"div.rn.f32 {q}, {x}, {y}")
    r = _atan_u(lw, op, q, "f32")
    # y < 0: add +-pi by the sign of x
    neg = f.reg("pred")
    f.emit(f"setp.lt.f32 {neg}, {y}, 0f00000000")
    pi = f.reg("f32")
    f.emit(f"mov.f32 {pi}, {f32_imm(math.pi)}")
    f.emit(f"copysign.f32 {pi}, {x}, {pi}")
    adj = f.reg("f32")
    f.emit(f"add.f32 {adj}, {r}, {pi}")
    f.emit(f"selp.f32 {r}, {adj}, {r}, {neg}")
    # y == 0: +-pi/2 (0 when x == 0 too)
    z = f.reg("pred")
    f.emit(f"setp.eq.f32 {z}, {y}, 0f00000000")
    h = f.reg("f32")
    f.emit(f"mov.f32 {h}, {f32_imm(math.pi / 2)}")
    f.emit(f"copysign.f32 {h}, {x}, {h}")
    xz = f.reg("pred")
    f.emit(f"setp.eq.f32 {xz}, {x}, 0f00000000")
    f.emit(f"selp.f32 {h}, 0f00000000, {h}, {xz}")
    f.emit(f"selp.f32 {r}, {h}, {r}, {z}")
    return r


handler("atan2")(_f32_binary(_atan2_f32))


def _as_f32(lw, reg, elem):
    if lw.fwide(elem) == "f64":
        r = lw.f.reg("f32")
        lw.f.emit(f"cvt.rn.f32.f64 {r}, {reg}")
        return r
    return lw.to_f32(reg, elem)


def _from_f32_any(lw, r, elem):
    if lw.fwide(elem) == "f64":
        o = lw.f.reg("f64")
        lw.f.emit(f"cvt.f64.f32 {o}, {r}")
        return o
    return lw.from_f32(r, elem)


def _pow_f32(lw, op, x, y):
    """pow(x, y) = 2^(y * log2|x|), negative x allowed for integral y (sign from y's parity)."""
    f = lw.f
    a = f.reg("f32")
    f.emit(f"abs.f32 {a}, {x}")
    lg = f.reg("f32")
    f.emit(f"lg2.approx.f32 {lg}, {a}")
    f.emit(f"mul.f32 {lg}, {lg}, {y}")
    r = f.reg("f32")
    f.emit(f"ex2.approx.f32 {r}, {lg}")
    # odd integral y and negative x: negative result
    half = f.reg("f32")
    f.emit(f"mul.f32 {half}, {y}, 0f3F000000")
    fl = f.reg("f32")
    f.emit(f"cvt.rzi.f32.f32 {fl}, {half}")
    odd = f.reg("pred")
    f.emit(f"setp.ne.f32 {odd}, {fl}, {half}")
    yi = f.reg("f32")
    f.emit(f"cvt.rzi.f32.f32 {yi}, {y}")
    integral = f.reg("pred")
    f.emit(f"setp.eq.f32 {integral}, {yi}, {y}")
    negx = f.reg("pred")
    f.emit(f"setp.lt.f32 {negx}, {x}, 0f00000000")
    flip = f.reg("pred")
    f.emit(f"and.pred {flip}, {odd}, {negx}")
    f.emit(f"and.pred {flip}, {flip}, {integral}")
    nr = f.reg("f32")
    f.emit(f"neg.f32 {nr}, {r}")
    f.emit(f"selp.f32 {r}, {nr}, {r}, {flip}")
    bad = f.reg("pred")
    f.emit(f"not.pred {integral}, {integral}")
    f.emit(f"and.pred {bad}, {negx}, {integral}")
    f.emit(f"selp.f32 {r}, 0f7FC00000, {r}, {bad}")
    return r


_fpowf = handler("fpowf")(_f32_binary(_pow_f32))


@handler("fpowi")
def _fpowi(lw: KernelLowering, op: Operation) -> None:
    """x^n for integer n by binary exponentiation (a loop per slot), 1/x^|n| for negative n."""
    xv, nv = _operands(lw, op)
    out = lw.new_result(op)
    f = lw.f
    cls = lw.fwide(xv.elem)
    one = _fimm(cls, 1.0)
    for s in range(len(out.regs)):
        x = lw.to_compute(xv.regs[s], xv.elem)
        n = nv.regs[s]
        if (T.bit_width(nv.elem) or 32) == 64:
            n32 = f.reg("b32")
            f.emit(f"cvt.u32.u64 {n32}, {n}")
            n = n32
        e = f.reg("b32")
        f.emit(f"abs.s32 {e}, {n}")
        base = f.reg(cls)
        acc = f.reg(cls)
        f.emit(f"mov.{cls} {base}, {x}")
        f.emit(f"mov.{cls} {acc}, {one}")
        head, done = f.label("pow"), f.label("pow_end")
        p = f.reg("pred")
        f.place(head)
        f.emit(f"setp.eq.u32 {p}, {e}, 0")
        f.emit(f"@{p} bra {done}")
        bit = f.reg("b32")
        f.emit(f"and.b32 {bit}, {e}, 1")
        q = f.reg("pred")
        f.emit(f"setp.ne.u32 {q}, {bit}, 0")
        t = f.reg(cls)
        f.emit(f"mul.rn.{cls} {t}, {acc}, {base}")
        f.emit(f"selp.{cls} {acc}, {t}, {acc}, {q}")
        f.emit(f"mul.rn.{cls} {base}, {base}, {base}")
        f.emit(f"shr.u32 {e}, {e}, 1")
        f.emit(f"bra.uni {head}")
        f.place(done)
        neg = f.reg("pred")
        f.emit(f"setp.lt.s32 {neg}, {n}, 0")
        inv = f.reg(cls)
        f.emit(f"div.rn.{cls} {inv}, {one}, {acc}")
        f.emit(f"selp.{cls} {acc}, {inv}, {acc}, {neg}")
        lw.mov(reg_class(xv.elem), out.regs[s], lw.from_compute(acc, xv.elem))


@handler("remf")
def _remf(lw: KernelLowering, op: Operation) -> None:
    """fmod(x, y) = x - trunc(x / y) * y (the sign of x), computed in the compute class."""
    a, b = _operands(lw, op)
    out = lw.new_result(op)
    cls = lw.fwide(a.elem)
    f = lw.f
    for s in range(len(out.regs)):
        x, y = lw.to_compute(a.regs[s], a.elem), lw.to_compute(b.regs[s], a.elem)
        q = f.reg(cls)
        f.emit(f"div.rn.{cls} {q}, {x}, {y}")
        f.emit(f"cvt.rzi.{cls}.{cls} {q}, {q}")
        r = f.reg(cls)
        f.emit(f"neg.{cls} {q}, {q}")
        f.emit(f"fma.rn.{cls} {r}, {q}, {y}, {x}")
        lw.mov(reg_class(a.elem), out.regs[s], lw.from_compute(r, a.elem))


CMP = {"equal": "eq", "not_equal": "ne", "less_than": "lt", "less_than_or_equal": "le",
       "greater_than": "gt", "greater_than_or_equal": "ge"}


@handler("cmpf")
def _cmpf(lw: KernelLowering, op: Operation) -> None:
    a, b = _operands(lw, op)
    out = lw.new_result(op)
    cls = lw.fwide(a.elem)
    pred = CMP[enum_case(op, "comparison_predicate")]
    unordered = enum_case(op, "comparison_ordering", "ordered") == "unordered"
    cmp = pred + "u" if unordered else pred
    for s in range(len(out.regs)):
        lw.f.emit(f"setp.{cmp}.{cls} {out.regs[s]}, {lw.to_compute(a.regs[s], a.elem)}, "
                  f"{lw.to_compute(b.regs[s], a.elem)}")


# ---------------------------------------------------------------------------
# integers (i8/i16 kept sign-extended in b32 registers)
# ---------------------------------------------------------------------------

def _w(t: T.Type) -> int:
    return T.bit_width(t) or 32


def canon(lw: KernelLowering, reg: str, width: int) -> None:
    """Re-sign-extend an i8/i16 value kept in a b32 register after an op that may carry out."""
    if width in (8, 16):
        lw.f.emit(f"cvt.s32.s{width} {reg}, {reg}")


def zext(lw: KernelLowering, reg: str, width: int) -> str:
    """The zero-extended form of an i8/i16 value (b32 register), for unsigned ops."""
    if width in (8, 16):
        r = lw.f.reg("b32")
        lw.f.emit(f"and.b32 {r}, {reg}, {(1 << width) - 1}")
        return r
    return reg


def _ity(width: int, signed: bool = True) -> str:
    return ("s" if signed else "u") + ("64" if width == 64 else "32")


def _int_binary(kind: str):
    def lower(lw: KernelLowering, op: Operation) -> None:
        a, b = _operands(lw, op)
        out = lw.new_result(op)
        w = _w(a.elem)
        signed = enum_case(op, "signedness", "signed") != "unsigned"
        f = lw.f
        for s in range(len(out.regs)):
            x, y, r = a.regs[s], b.regs[s], out.regs[s]
            if w == 1:
                ins = {"add": "xor", "sub": "xor", "mul": "and", "and": "and", "or": "or", "xor": "xor"}.get(kind)
                if ins is None:
                    raise LoweringError(f"'{op.name}' on i1 is not supported by the lowering")
                f.emit(f"{ins}.pred {r}, {x}, {y}")
                continue
            bt = "b64" if w == 64 else "b32"
            if kind in ("and", "or", "xor"):
                f.emit(f"{kind}.{bt} {r}, {x}, {y}")
                continue
            if kind in ("add", "sub"):
                f.emit(f"{kind}.{_ity(w)} {r}, {x}, {y}")
            elif kind == "mul":
                f.emit(f"mul.lo.{_ity(w)} {r}, {x}, {y}")
            elif kind == "shl":
                sh = _shift_amount(lw, y, w)
                f.emit(f"shl.{bt} {r}, {x}, {sh}")
            elif kind == "shr":
                sh = _shift_amount(lw, y, w)
                xx = x if signed else zext(lw, x, w)
                f.emit(f"shr.{_ity(w, signed)} {r}, {xx}, {sh}")
            elif kind in ("max", "min"):
                xx, yy = (x, y) if signed else (zext(lw, x, w), zext(lw, y, w))
                f.emit(f"{kind}.{_ity(w, signed)} {r}, {xx}, {yy}")
            elif kind == "rem":
                xx, yy = (x, y) if signed else (zext(lw, x, w), zext(lw, y, w))
                f.emit(f"rem.{_ity(w, signed)} {r}, {xx}, {yy}")
            elif kind == "div":
                _divi(lw, op, x, y, r, w, signed)
            canon(lw, r, w)
    return lower


def _shift_amount(lw, y, w):
    if w == 64:
        r = lw.f.reg("b32")
        lw.f.emit(f"cvt.u32.u64 {r}, {y}")
        return r
    return zext(lw, y, w)


def _divi(lw, op, x, y, r, w, signed):
    """Integer division with the op's rounding (zero by default; negative_inf/positive_inf for signed)."""
    f = lw.f
    rounding = enum_case(op, "rounding", "zero")
    if not signed:
        xx, yy = zext(lw, x, w), zext(lw, y, w)
        f.emit(f"div.{_ity(w, False)} {r}, {xx}, {yy}")
        if rounding == "positive_inf":
            rem = f.reg("b64" if w == 64 else "b32")
            f.emit(f"rem.{_ity(w, False)} {rem}, {xx}, {yy}")
            p = f.reg("pred")
            f.emit(f"setp.ne.{_ity(w, False)} {p}, {rem}, 0")
            f.emit(f"@{p} add.{_ity(w)} {r}, {r}, 1")
        return
    f.emit(f"div.{_ity(w)} {r}, {x}, {y}")
    if rounding in ("negative_inf", "positive_inf"):
        cls = "b64" if w == 64 else "b32"
        rem = f.reg(cls)
        f.emit(f"rem.{_ity(w)} {rem}, {x}, {y}")
        nz = f.reg("pred")
        f.emit(f"setp.ne.{_ity(w)} {nz}, {rem}, 0")
        sx = f.reg("pred")
        sy = f.reg("pred")
        f.emit(f"setp.lt.{_ity(w)} {sx}, {x}, 0")
        f.emit(f"setp.lt.{_ity(w)} {sy}, {y}, 0")
        diff = f.reg("pred")
        f.emit(f"xor.pred {diff}, {sx}, {sy}")
        if rounding == "negative_inf":
            f.emit(f"and.pred {diff}, {diff}, {nz}")
            f.emit(f"@{diff} sub.{_ity(w)} {r}, {r}, 1")
        else:
            same = f.reg("pred")
            f.emit(f"not.pred {same}, {diff}")
            f.emit(f"and.pred {same}, {same}, {nz}")
            f.emit(f"@{same} add.{_ity(w)} {r}, {r}, 1")


for _name, _kind in (("addi", "add"), ("subi", "sub"), ("muli", "mul"), ("andi", "and"), ("ori", "or"),
                     ("xori", "xor"), ("shli", "shl"), ("shri", "shr"), ("maxi", "max"), ("mini", "min"),
                     ("remi", "rem"), ("divi", "div")):
    handler(_name)(_int_binary(_kind))


@handler("negi", "absi")
def _int_unary(lw: KernelLowering, op: Operation) -> None:
    (a,) = _operands(lw, op)
    out = lw.new_result(op)
    w = _w(a.elem)
    ins = "neg" if op.name.endswith("negi") else "abs"
    for s in range(len(out.regs)):
        if w == 1:
            lw.f.emit(f"mov.pred {out.regs[s]}, {a.regs[s]}")
            continue
        lw.f.emit(f"{ins}.{_ity(w)} {out.regs[s]}, {a.regs[s]}")
        canon(lw, out.regs[s], w)


@handler("cmpi")
def _cmpi(lw: KernelLowering, op: Operation) -> None:
    a, b = _operands(lw, op)
    out = lw.new_result(op)
    w = _w(a.elem)
    signed = enum_case(op, "signedness", "signed") != "unsigned"
    pred = CMP[enum_case(op, "comparison_predicate")]
    f = lw.f
    for s in range(len(out.regs)):
        x, y = a.regs[s], b.regs[s]
        if w == 1:
            xs, ys = f.reg("b32"), f.reg("b32")
            f.emit(f"selp.b32 {xs}, 1, 0, {x}")
            f.emit(f"selp.b32 {ys}, 1, 0, {y}")
            if signed:  # i1 true is -1 when signed
                f.emit(f"neg.s32 {xs}, {xs}")
                f.emit(f"neg.s32 {ys}, {ys}")
            x, y, w2 = xs, ys, 32
        else:
            w2 = w
            if not signed:
                x, y = zext(lw, x, w), zext(lw, y, w)
        ty = _ity(w2, signed) if pred not in ("eq", "ne") else ("b64" if w2 == 64 else "b32")
        f.emit(f"setp.{pred}.{ty} {out.regs[s]}, {x}, {y}")


@handler("select")
def _select(lw: KernelLowering, op: Operation) -> None:
    c, a, b = _operands(lw, op)
    out = lw.new_result(op)
    cls = reg_class(a.elem)
    for s in range(len(out.regs)):
        lw.select(cls, out.regs[s], c.regs[s if len(c.regs) > 1 else 0], a.regs[s], b.regs[s])


# ---------------------------------------------------------------------------
# conversions
# ---------------------------------------------------------------------------

@handler("ftof")
def _ftof(lw: KernelLowering, op: Operation) -> None:
    (a,) = _operands(lw, op)
    out = lw.new_result(op)
    src, dst = a.elem.name, out.elem.name
    rnd = ROUNDING.get(enum_case(op, "rounding_mode", "nearest_even") or "nearest_even", "rn")
    f = lw.f
    for s in range(len(out.regs)):
        x = a.regs[s]
        if src == "f64" and dst == "f64":
            r = x
        elif src == "f64":
            x32 = f.reg("f32")
            f.emit(f"cvt.{rnd}.f32.f64 {x32}, {x}")
            r = lw.from_f32(x32, out.elem, rnd)
        elif dst == "f64":
            r = f.reg("f64")
            f.emit(f"cvt.f64.f32 {r}, {lw.to_f32(x, a.elem)}")
        elif dst == "f32":
            r = lw.to_f32(x, a.elem)
        else:
            r = lw.from_f32(lw.to_f32(x, a.elem), out.elem, rnd)
        lw.mov(reg_class(out.elem), out.regs[s], r)


@handler("itof")
def _itof(lw: KernelLowering, op: Operation) -> None:
    (a,) = _operands(lw, op)
    out = lw.new_result(op)
    w = _w(a.elem)
    signed = enum_case(op, "signedness", "signed") != "unsigned"
    rnd = ROUNDING.get(enum_case(op, "rounding_mode", "nearest_even") or "nearest_even", "rn")
    cls = lw.fwide(out.elem)
    f = lw.f
    for s in range(len(out.regs)):
        x = a.regs[s]
        if w == 1:
            t = f.reg("b32")
            f.emit(f"selp.b32 {t}, {-1 if signed else 1}, 0, {x}")
            x, w2 = t, 32
        else:
            w2 = w
            if not signed:
                x = zext(lw, x, w)
        r = f.reg(cls)
        f.emit(f"cvt.{rnd}.{cls}.{_ity(w2, signed)} {r}, {x}")
        lw.mov(reg_class(out.elem), out.regs[s], lw.from_compute(r, out.elem, rnd))


@handler("ftoi")
def _ftoi(lw: KernelLowering, op: Operation) -> None:
    (a,) = _operands(lw, op)
    out = lw.new_result(op)
    w = _w(out.elem)
    signed = enum_case(op, "signedness", "signed") != "unsigned"
    mode = {"nearest_int_to_zero": "rzi", "zero": "rzi", "nearest_even": "rni",
            "negative_inf": "rmi", "positive_inf": "rpi"}.get(
                enum_case(op, "rounding_mode", "nearest_int_to_zero"), "rzi")
    cls = lw.fwide(a.elem)
    f = lw.f
    for s in range(len(out.regs)):
        x = lw.to_compute(a.regs[s], a.elem)
        if w == 1:
            f.emit(f"setp.ne.{cls} {out.regs[s]}, {x}, {_fimm(cls, 0.0)}")
            continue
        ity = ("s" if signed else "u") + (str(w) if w in (8, 16) else ("64" if w == 64 else "32"))
        f.emit(f"cvt.{mode}.sat.{ity}.{cls} {out.regs[s]}, {x}" if w in (8, 16)
               else f"cvt.{mode}.{ity}.{cls} {out.regs[s]}, {x}")
        canon(lw, out.regs[s], w)


@handler("exti")
def _exti(lw: KernelLowering, op: Operation) -> None:
    (a,) = _operands(lw, op)
    out = lw.new_result(op)
    wi, wo = _w(a.elem), _w(out.elem)
    signed = enum_case(op, "signedness", "signed") != "unsigned"
    f = lw.f
    for s in range(len(out.regs)):
        x, r = a.regs[s], out.regs[s]
        if wi == 1:
            v = -1 if signed else 1
            if wo == 64:
                f.emit(f"selp.b64 {r}, {v & 0xFFFFFFFFFFFFFFFF}, 0, {x}")
            else:
                f.emit(f"selp.b32 {r}, {v & 0xFFFFFFFF}, 0, {x}")
                canon(lw, r, wo)
            continue
        xx = x if signed else zext(lw, x, wi)
        if wo == 64:
            f.emit(f"cvt.{'s64.s32' if signed else 'u64.u32'} {r}, {xx}")
        else:
            f.emit(f"mov.b32 {r}, {xx}")
            canon(lw, r, wo)


@handler("trunci")
def _trunci(lw: KernelLowering, op: Operation) -> None:
    (a,) = _operands(lw, op)
    out = lw.new_result(op)
    wi, wo = _w(a.elem), _w(out.elem)
    f = lw.f
    for s in range(len(out.regs)):
        x, r = a.regs[s], out.regs[s]
        if wo == 1:
            t = f.reg("b64" if wi == 64 else "b32")
            bt = "b64" if wi == 64 else "b32"
            f.emit(f"and.{bt} {t}, {x}, 1")
            f.emit(f"setp.ne.{bt} {r}, {t}, 0")
            continue
        if wi == 64:
            f.emit(f"cvt.u32.u64 {r}, {x}")
        else:
            f.emit(f"mov.b32 {r}, {x}")
        canon(lw, r, wo)


@handler("bitcast")
def _bitcast(lw: KernelLowering, op: Operation) -> None:
    (a,) = _operands(lw, op)
    out = lw.new_result(op)
    ci, co = reg_class(a.elem), reg_class(out.elem)
    f = lw.f
    for s in range(len(out.regs)):
        x, r = a.regs[s], out.regs[s]
        if ci == co:
            lw.mov(co, r, x)
        elif {ci, co} <= {"b32", "f32"} or {ci, co} <= {"b64", "f64"}:
            f.emit(f"mov.b{32 if '32' in co else 64} {r}, {x}")
        elif ci == "b16" and co == "b32":
            f.emit(f"cvt.s32.s16 {r}, {x}" if _w(out.elem) == 16 else f"cvt.u32.u16 {r}, {x}")
            canon(lw, r, _w(out.elem))
        elif ci == "b32" and co == "b16":
            f.emit(f"cvt.u16.u32 {r}, {x}")
        else:
            raise LoweringError(f"bitcast from {a.elem} to {out.elem} is not supported by the lowering")


@handler("mulhii")
def _mulhii(lw: KernelLowering, op: Operation) -> None:
    """High half of the double-width product (Ops.td MulhiiOp: unsigned, as the high word of x * y)."""
    a, b = _operands(lw, op)
    out = lw.new_result(op)
    w = _w(a.elem)
    for s in range(len(out.regs)):
        x, y = zext(lw, a.regs[s], w), zext(lw, b.regs[s], w)
        if w in (8, 16):
            lw.f.emit(f"mul.lo.u32 {out.regs[s]}, {x}, {y}")
            lw.f.emit(f"shr.u32 {out.regs[s]}, {out.regs[s]}, {w}")
            canon(lw, out.regs[s], w)
        else:
            lw.f.emit(f"mul.hi.{_ity(w, False)} {out.regs[s]}, {x}, {y}")


handler("pow")(_fpowf)
