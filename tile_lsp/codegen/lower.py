"""Lowering of one ``cuda_tile.entry`` to a PTX ``.entry``: the driver and shared helpers.

The op handlers live in :mod:`tile_lsp.codegen.ops_elementwise`,
:mod:`~tile_lsp.codegen.ops_memory`, :mod:`~tile_lsp.codegen.ops_shape` and
:mod:`~tile_lsp.codegen.ops_control`; each registers its ops in
:data:`HANDLERS` (one op, one handler).  The distribution of tiles over
threads is described in :mod:`tile_lsp.codegen.ptx`.

Cross-thread data movement (broadcast, permute, reduce, scan, mma ...) goes
through one shared-memory staging buffer: the source tiles are written at
their linear index, the CTA synchronises with ``bar.sync 0``, and each
thread reads the elements its result slots need.
"""

from __future__ import annotations

from contextlib import contextmanager

import struct
from collections.abc import Callable

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation, Region, Value
from tile_lsp.codegen.ptx import (
    STAGE_STRIDE,
    Function,
    REG_BYTES,
    LoweringError,
    SourceLoc,
    TileValue,
    num_elements,
    reg_class,
    storage_bytes,
)
from tile_lsp.codegen.target import Target
from tile_lsp.dialect import types as T

#: op short name (without ``cuda_tile.``) -> handler(lowering, op)
HANDLERS: dict[str, Callable[[KernelLowering, Operation], None]] = {}


def handler(*names: str):
    """Register the decorated function as the lowering of the cuda_tile ops ``names``."""
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn
    return deco


def f32_imm(x: float) -> str:
    return "0f{:08X}".format(struct.unpack("<I", struct.pack("<f", x))[0])


def f64_imm(x: float) -> str:
    return "0d{:016X}".format(struct.unpack("<Q", struct.pack("<d", x))[0])


def enum_case(op: Operation, name: str, default: str | None = None) -> str | None:
    """The case of ``op``'s enum attribute ``name`` (``rounding_mode`` -> ``"nearest_even"``), ``default``
    when absent: :meth:`~tile_lsp.analysis.ir.core.Operation.enum_case`."""
    return op.enum_case(name, default)


#: Run on each operand of an op before its handler, as ``hook(lowering, op, index, lowered value)``: a
#: value to use instead during that op (converted code emitted there), or ``None``.  The handler sees
#: the replacement; the value is restored after it.  ``codegen/mma_fragments.py`` converts an
#: accumulator held in MMA fragments for the ops that need the distribution.
OPERAND_HOOKS: list[Callable] = []

#: Run before an op's handler, as ``hook(lowering, op, handler)``: ``True`` where the hook lowered the
#: op itself (``codegen/fragment_layouts.py`` runs element-wise handlers on registers in MMA
#: fragments), and the handler is not called.
OP_HOOKS: list[Callable] = []


class KernelLowering:
    """State of the lowering of one entry: registers of each IR value, the PTX function, the target.

    ``threads``: CTA size (a power of two); ``globals``: module-level PTX
    declarations the kernel needs (constant tables, strings), shared by the
    whole PTX module through ``module_decls``.
    """

    def __init__(self, entry: Operation, target: Target, threads: int, module_decls: dict[str, str],
                 file_index: int | None = 1, warnings: list | None = None):
        self.entry = entry
        self.target = target
        self.threads = threads
        self.values: dict[int, object] = {}
        self.decls = module_decls
        self.file_index = file_index
        self.warnings = warnings if warnings is not None else []
        name = entry.attr("sym_name")
        self.name = name.value if isinstance(name, A.StringAttr) else "kernel"
        self.f = Function(self.name, threads)
        self.op: Operation | None = None  # the op being lowered
        self.loop_stack: list[dict] = []
        self.yield_stack: list[list[TileValue]] = []
        self.tid = "%r_tid"
        #: registers a new tile gets instead of :meth:`slots` (a handler run on another layout's registers)
        self.forced_slots: int | None = None
        #: values helpers computed once per block: (``id`` of the block, key) -> value
        self.block_memo: dict[tuple, object] = {}
        #: staging stores whose loads an enclosing loop issues an iteration ahead (``ops_memory.Prefetch``)
        self.prefetched: dict[int, object] = {}
        #: what :meth:`smem_addr` gives inside a loop that pipelines copies (``codegen/prefetch.py``): the
        #: base of this iteration's stage
        self.shared_base: str | None = None
        #: in such a loop, the bytes from the first stage to the iteration's (0 or the stride): readers
        #: that address from the first stage add it last, so that ptxas hoists the rest
        self.stage_delta: str | None = None
        #: whether loops may pipeline their copies through two stages (the emitter retries without)
        self.pipelines = True

    # -- values -------------------------------------------------------------
    def get(self, v: Value):
        try:
            return self.values[id(v)]
        except KeyError:
            raise LoweringError(f"value {v.name} used before the lowering defined it") from None

    def set(self, v: Value, x) -> None:
        self.values[id(v)] = x

    def tile(self, v: Value) -> TileValue:
        x = self.get(v)
        if not isinstance(x, TileValue):
            raise LoweringError(f"value {v.name} is not a tile")
        return x

    def slots(self, n: int) -> int:
        return max(1, n // self.threads)

    def new_result(self, op: Operation, idx: int = 0) -> TileValue:
        """Fresh registers for result ``idx`` of ``op`` (a tile), bound to it."""
        out = self.new_tile(op.results[idx].type)
        self.set(op.results[idx], out)
        return out

    def new_tile(self, ty: T.Type) -> TileValue:
        """Fresh registers for a value of tile type ``ty``."""
        if not isinstance(ty, T.TileType):
            raise LoweringError(f"expected a tile type, got {ty}")
        shape = tuple(int(d) for d in ty.shape)
        cls = reg_class(ty.element)
        count = self.slots(num_elements(shape)) if self.forced_slots is None else self.forced_slots
        return TileValue(shape, ty.element, [self.f.reg(cls) for _ in range(count)])

    def once_in_block(self, key: tuple, build: Callable[[], object]) -> object:
        """``build()``, once per ``key`` in the block of ops being lowered (the block of :attr:`op`): the
        instructions it emits there dominate the rest of that block, and nothing outside it."""
        k = (id(self.op.parent) if self.op is not None else None,) + tuple(key)
        if k not in self.block_memo:
            self.block_memo[k] = build()
        return self.block_memo[k]

    # -- thread-index arithmetic (slot 0 hoisted to the prologue) ------------
    def lin(self, n: int, s: int) -> str:
        """b32 register: linear element index of slot ``s`` of an ``n``-element tile in this thread.

        Slot 0 (``tid``, or ``tid & (n - 1)`` for a tile smaller than the CTA) is computed once, in the
        prologue.  A later slot is slot 0's plus ``s * T``, added in the body where it is used: kept in
        the prologue, every slot's index stayed live through the whole kernel, and ptxas spilled them
        (matmul_operator_f16_64x64x64 on sm_80: 112 bytes)."""
        if s and n >= self.threads:
            r = self.f.reg("b32")
            self.f.emit(f"add.s32 {r}, {self.lin(n, 0)}, {s * self.threads}")
            return r

        def build() -> str:
            r = self.f.reg("b32")
            if n >= self.threads:
                self.f.pro(f"add.s32 {r}, {self.tid}, 0")
            else:
                self.f.pro(f"and.b32 {r}, {self.tid}, {n - 1}")
            return r
        return self.f.once(("lin", n, 0), build)

    def coords(self, shape: tuple[int, ...], s: int) -> list[str | int]:
        """Per-dimension index (b32 registers; ``0`` for size-1 dims) of slot ``s`` of a tile of ``shape``.

        Slot 0's indices are computed once, in the prologue.  Tiles and CTAs are powers of two, so the
        element ``s * T + t`` of slot ``s`` has the bits of ``s * T`` and of ``t`` apart: each index of
        slot ``s`` is slot 0's plus the constant ``((s * T) >> shift) & (d - 1)``, added in the body
        where it is used (one ``add`` a moved dimension; the unmoved ones are slot 0's registers)."""
        n = num_elements(shape)
        if s and n >= self.threads:
            out: list[str | int] = []
            inner = n
            for d, c0 in zip(shape, self.coords(shape, 0)):
                inner //= d
                step = ((s * self.threads) >> (inner.bit_length() - 1)) & (d - 1)
                if isinstance(c0, int) or not step:
                    out.append(c0)
                    continue
                r = self.f.reg("b32")
                self.f.emit(f"add.s32 {r}, {c0}, {step}")
                out.append(r)
            return out

        def build() -> list[str | int]:
            lin = self.lin(n, 0)
            out: list[str | int] = []
            inner = n
            for d in shape:
                inner //= d
                if d == 1:
                    out.append(0)
                    continue
                r = self.f.reg("b32")
                shift = inner.bit_length() - 1
                if shift:
                    self.f.pro(f"shr.u32 {r}, {lin}, {shift}")
                    self.f.pro(f"and.b32 {r}, {r}, {d - 1}")
                else:
                    self.f.pro(f"and.b32 {r}, {lin}, {d - 1}")
                out.append(r)
            return out
        return self.f.once(("coords", shape, 0), build)

    def owner(self, n: int) -> str | None:
        """Predicate register true in the threads that own an ``n``-element tile's elements (``None``: all)."""
        if n >= self.threads:
            return None

        def build() -> str:
            p = self.f.reg("pred")
            self.f.pro(f"setp.lt.u32 {p}, {self.tid}, {n}")
            return p
        return self.f.once(("owner", n), build)

    # -- constants ------------------------------------------------------------
    def const_reg(self, elem: T.Type, bits: int) -> str:
        """A register of ``elem``'s class holding the element bit pattern ``bits``."""
        cls = reg_class(elem)
        r = self.f.reg(cls)
        if cls == "pred":
            self.f.emit(f"setp.ne.u32 {r}, {1 if bits & 1 else 0}, 0")
        elif cls == "f32":
            self.f.emit(f"mov.b32 {r}, 0x{bits & 0xFFFFFFFF:08X}")
        elif cls == "f64":
            self.f.emit(f"mov.b64 {r}, 0x{bits & 0xFFFFFFFFFFFFFFFF:016X}")
        elif cls == "b16":
            self.f.emit(f"mov.b16 {r}, 0x{bits & 0xFFFF:04X}")
        elif cls == "b32":
            w = T.bit_width(elem) or 32
            v = bits & ((1 << w) - 1)
            if w < 32 and v >> (w - 1):
                v -= 1 << w  # keep i8/i16 sign-extended
            self.f.emit(f"mov.b32 {r}, {v & 0xFFFFFFFF}")
        else:
            self.f.emit(f"mov.b64 {r}, {bits & 0xFFFFFFFFFFFFFFFF}")
        return r

    def mov(self, cls: str, dst: str, src: str) -> None:
        if cls == "pred":
            self.f.emit(f"mov.pred {dst}, {src}")
        else:
            ty = {"b16": "b16", "b32": "b32", "b64": "b64", "f32": "f32", "f64": "f64"}[cls]
            self.f.emit(f"mov.{ty} {dst}, {src}")

    def select(self, cls: str, dst: str, cond: str, if_true: str, if_false: str) -> None:
        """``dst = cond ? if_true : if_false`` for registers of class ``cls``.

        ``selp`` has no ``.pred`` form (PTX ISA "selp"), so predicates are
        selected as ``(cond & if_true) | (!cond & if_false)``.
        """
        f = self.f
        if cls != "pred":
            f.emit(f"selp.{cls} {dst}, {if_true}, {if_false}, {cond}")
            return
        t1, not_cond, t2 = f.reg("pred"), f.reg("pred"), f.reg("pred")
        f.emit(f"and.pred {t1}, {cond}, {if_true}")
        f.emit(f"not.pred {not_cond}, {cond}")
        f.emit(f"and.pred {t2}, {not_cond}, {if_false}")
        f.emit(f"or.pred {dst}, {t1}, {t2}")

    def scalar_int(self, v: Value, width: int = 32) -> str:
        """A b32 (``width`` 32) or b64 register holding the 0-d integer tile ``v``, sign-extended."""
        tv = self.tile(v)
        r = tv.regs[0]
        w = T.bit_width(tv.elem) or 32
        if width == 64:
            if w == 64:
                return r
            out = self.f.reg("b64")
            if w == 1:
                self.f.emit(f"selp.b64 {out}, 1, 0, {r}")
            else:
                self.f.emit(f"cvt.s64.s32 {out}, {r}")
            return out
        if w == 64:
            out = self.f.reg("b32")
            self.f.emit(f"cvt.u32.u64 {out}, {r}")
            return out
        if w == 1:
            out = self.f.reg("b32")
            self.f.emit(f"selp.b32 {out}, 1, 0, {r}")
            return out
        return r

    # -- float helpers ----------------------------------------------------------
    def table(self, name: str) -> str:
        """Address register of the f32 decode table of an 8- or 4-bit float type (a ``.const`` array)."""
        sym = f"__tile_lsp_{name}_to_f32"
        if sym not in self.decls:
            width = T.FLOAT_WIDTHS[name]
            vals = []
            for bits in range(1 << width):
                x = T.float_from_bits(bits, name)
                vals.append("0x{:08X}".format(struct.unpack("<I", struct.pack("<f", float("nan") if x is None else x))[0]))
            self.decls[sym] = f".const .align 4 .b32 {sym}[{1 << width}] = {{{', '.join(vals)}}};"
        return sym

    def to_f32(self, reg: str, elem: T.Type) -> str:
        """f32 register with the value of element register ``reg`` of float type ``elem`` (exact)."""
        name = elem.name if isinstance(elem, T.FloatType) else str(elem)
        f = self.f
        if name in ("f32", "tf32"):
            return reg
        out = f.reg("f32")
        if name == "f16":
            f.emit(f"cvt.f32.f16 {out}, {reg}")
        elif name == "bf16":
            t = f.reg("b32")
            f.emit(f"cvt.u32.u16 {t}, {reg}")
            f.emit(f"shl.b32 {t}, {t}, 16")
            f.emit(f"mov.b32 {out}, {t}")
        elif name == "f64":
            f.emit(f"cvt.rn.f32.f64 {out}, {reg}")
        elif name in ("f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN"):
            sym = self.table(name)
            t = f.reg("b32")
            a = f.reg("b64")
            mask = 0xF if name == "f4E2M1FN" else 0xFF
            f.emit(f"cvt.u32.u16 {t}, {reg}")
            f.emit(f"and.b32 {t}, {t}, {mask}")
            f.emit(f"mul.wide.u32 {a}, {t}, 4")
            b = f.reg("b64")
            f.emit(f"mov.u64 {b}, {sym}")
            f.emit(f"add.s64 {a}, {a}, {b}")
            f.emit(f"ld.const.f32 {out}, [{a}]")
        else:
            raise LoweringError(f"no conversion of {name} to f32")
        return out

    def _to_tf32(self, freg: str, rnd: str) -> str:
        """f32 register: ``freg`` rounded to tf32 (10 mantissa bits, the low 13 bits zero) as ``rnd``
        says (``rn`` nearest even, ``rz``, ``rm``, ``rp``), on its bits: PTX's ``cvt.rna.tf32.f32``
        rounds ties away from zero, and ``ftof`` rounds to nearest even by default (Ops.td
        ``rounding_mode``; the interpreter's ``numerics._round_tf32``).  Infinities and NaNs stay
        as they are; a finite value rounded past the largest one becomes infinite."""
        f = self.f
        b, r, t = f.reg("b32"), f.reg("b32"), f.reg("b32")
        f.emit(f"mov.b32 {b}, {freg}")
        if rnd == "rz":
            f.emit(f"and.b32 {r}, {b}, -8192")
        elif rnd in ("rm", "rp"):
            inexact, neg, up = f.reg("pred"), f.reg("pred"), f.reg("pred")
            f.emit(f"and.b32 {t}, {b}, 8191")
            f.emit(f"setp.ne.u32 {inexact}, {t}, 0")
            f.emit(f"setp.{'lt' if rnd == 'rm' else 'ge'}.s32 {neg}, {b}, 0")  # away from zero toward rnd's side
            f.emit(f"and.pred {up}, {inexact}, {neg}")
            f.emit(f"selp.b32 {t}, 8192, 0, {up}")
            f.emit(f"add.s32 {r}, {b}, {t}")
            f.emit(f"and.b32 {r}, {r}, -8192")
        else:  # nearest even: add half an ulp less one, plus the kept last bit, then truncate
            f.emit(f"shr.u32 {t}, {b}, 13")
            f.emit(f"and.b32 {t}, {t}, 1")
            f.emit(f"add.s32 {t}, {t}, 4095")
            f.emit(f"add.s32 {r}, {b}, {t}")
            f.emit(f"and.b32 {r}, {r}, -8192")
        special, e = f.reg("pred"), f.reg("b32")
        f.emit(f"and.b32 {e}, {b}, 2139095040")  # the exponent: all ones for infinities and NaNs
        f.emit(f"setp.eq.u32 {special}, {e}, 2139095040")
        f.emit(f"selp.b32 {r}, {b}, {r}, {special}")
        out = f.reg("f32")
        f.emit(f"mov.b32 {out}, {r}")
        return out

    def from_f32(self, freg: str, elem: T.Type, rnd: str = "rn") -> str:
        """Register of float type ``elem`` with f32 ``freg`` rounded (``rnd``: rn/rz/rm/rp)."""
        name = elem.name
        f = self.f
        if name == "f32":
            return freg
        if name == "tf32":
            return self._to_tf32(freg, rnd)
        if name == "f64":
            out = f.reg("f64")
            f.emit(f"cvt.f64.f32 {out}, {freg}")
            return out
        out = f.reg("b16")
        if name == "f16":
            f.emit(f"cvt.{rnd}.f16.f32 {out}, {freg}")
        elif name == "bf16":
            f.emit(f"cvt.{rnd}.bf16.f32 {out}, {freg}")
        elif name in ("f8E4M3FN", "f8E5M2"):
            if "fp8" not in self.target.features:
                raise LoweringError(f"conversion to {name} needs sm_89 or newer (target {self.target.name})")
            kind = "e4m3x2" if name == "f8E4M3FN" else "e5m2x2"
            z = f.reg("f32")
            f.emit(f"mov.f32 {z}, 0f00000000")
            f.emit(f"cvt.rn.satfinite.{kind}.f32 {out}, {z}, {freg}")
        else:
            raise LoweringError(f"conversion of f32 to {name} is not supported by the lowering yet")
        return out

    def fwide(self, elem: T.Type) -> str:
        """Compute class for float element ``elem``: ``f64`` for f64, else ``f32``."""
        return "f64" if isinstance(elem, T.FloatType) and elem.name == "f64" else "f32"

    def to_compute(self, reg: str, elem: T.Type) -> str:
        return reg if self.fwide(elem) == "f64" else self.to_f32(reg, elem)

    def from_compute(self, reg: str, elem: T.Type, rnd: str = "rn") -> str:
        return reg if self.fwide(elem) == "f64" else self.from_f32(reg, elem, rnd)

    # -- shared-memory staging ----------------------------------------------------
    def smem_addr(self) -> str:
        """b32 register: the shared address of the staging scratch (prologue).  The entry's pinned
        buffers (``tile_lsp.smem_pinned`` bytes: loop-invariant MMA operands staged once,
        :mod:`tile_lsp.codegen.to_nv_tileas`) lie just below it, at negative offsets.  Inside a loop
        that pipelines its copies, the base of the iteration's stage (:attr:`shared_base`)."""
        return self.shared_base if self.shared_base is not None else self.first_stage_addr()

    def first_stage_addr(self) -> str:
        """b32 register: :meth:`smem_addr` outside pipelined loops (prologue)."""

        def build() -> str:
            r = self.f.reg("b32")
            self.f.pro(f"mov.u32 {r}, __tile_lsp_smem")
            if self.pinned:
                self.f.pro(f"add.u32 {r}, {r}, {self.pinned}")
            return r
        return self.f.once(("smem",), build)

    def second_stage_addr(self) -> str:
        """b32 register: :meth:`first_stage_addr` plus :data:`~tile_lsp.codegen.ptx.STAGE_STRIDE` bytes
        (prologue): the same offsets there are the second stage of a loop's pipelined copies
        (``codegen/prefetch.py``), a copy of the pinned buffers and the scratch the emitter places
        above them (``codegen/emit.py``), 1024-byte aligned so that swizzled buffers read the same."""

        def build() -> str:
            r = self.f.reg("b32")
            self.f.pro(f"add.u32 {r}, {self.first_stage_addr()}, {STAGE_STRIDE}")
            self.f.two_stages = True
            return r
        return self.f.once(("smem1",), build)

    @property
    def pinned(self) -> int:
        """Bytes of the entry's pinned buffers, below the staging scratch (0 without any)."""
        a = self.entry.attr("tile_lsp.smem_pinned")
        return a.value if isinstance(a, A.IntegerAttr) else 0

    @contextmanager
    def in_stage(self, base: str | None, delta: str | None = None):
        """Take the shared-memory addresses of the ops lowered in the block from ``base`` (a stage of a
        loop's pipelined copies, ``codegen/prefetch.py``; ``None``: the one layout), ``delta`` bytes
        above the first stage (:attr:`stage_delta`); restored after."""
        here = self.shared_base, self.stage_delta
        self.shared_base, self.stage_delta = base, delta
        try:
            yield
        finally:
            self.shared_base, self.stage_delta = here

    def reserve(self, nbytes: int) -> None:
        """Make the staging scratch at least ``nbytes`` long (the pinned buffers below it come on top);
        the op being lowered is remembered as the one that needs the most (for the shared-memory
        limit's diagnostic)."""
        nbytes += self.pinned
        if self.shared_base is not None:  # in a loop with two stages: the part of each stage used
            self.f.stage_bytes = max(self.f.stage_bytes, nbytes)
        if nbytes > self.f.smem_bytes:
            self.f.smem_bytes = nbytes
            self.f.smem_op = self.op

    def stage(self, tiles: list[TileValue], base: int = 0, sync_before: bool = True,
              swizzle: bool = False) -> list[int]:
        """Write ``tiles`` to shared memory at their linear index; returns each one's byte offset.

        The first tile goes at byte ``base`` of the scratch, each next one
        after the previous (8-byte aligned).  Emits ``bar.sync 0`` before
        (earlier readers are done; left out with ``sync_before=False`` where
        only writes followed the last barrier) and after (every element is
        written).  Element size: :func:`~tile_lsp.codegen.ptx.staged_bytes`.
        ``swizzle``: swizzled buffers (:meth:`swizzled`; the caller places them).
        """
        offsets = []
        off = base
        for tv in tiles:
            off = (off + 7) // 8 * 8
            offsets.append(off)
            off += tv.n * _reg_bytes(reg_class(tv.elem))
        self.reserve(off)
        if sync_before:
            self.f.barrier()
        for tv, o in zip(tiles, offsets):
            self.write_staged(tv, o, swizzle)
        self.f.barrier()
        return offsets

    def swizzled(self, addr: str, offset: int = 0) -> str:
        """b32 register: the shared address ``addr + offset`` in a swizzled buffer (:class:`StagedTile`
        ``swizzled``): its 16-byte chunk (bits 4-6) XORed with its bits 7-9, CUTLASS's
        ``Swizzle<3, 4, 3>``.  An involution that keeps each 16-byte chunk whole and each 128-byte
        line in place, so a buffer at a 128-byte aligned offset and size maps onto itself; the 8 rows
        an ``ldmatrix`` reads (strides of 64 or 128 bytes) fall in 8 different chunks, not one bank."""
        f = self.f
        a = addr
        if offset:
            a = f.reg("b32")
            f.emit(f"add.s32 {a}, {addr}, {offset}")
        t, out = f.reg("b32"), f.reg("b32")
        f.emit(f"shr.u32 {t}, {a}, 3")
        f.emit(f"and.b32 {t}, {t}, 112")
        f.emit(f"xor.b32 {out}, {a}, {t}")
        return out

    def swizzled_slots(self, n: int, esz: int, offset: int, count: int) -> list[tuple[str, int]]:
        """``(register, byte offset)`` per slot ``0 .. count - 1`` of an ``n``-element tile: where each
        slot's element lies in a swizzled row-major buffer (``esz`` bytes an element) at byte
        ``offset`` of the scratch (:meth:`swizzled`).  Slot ``s`` holds element ``s * T + t``; the
        swizzle depends on address bits 4-9 alone, so slots ``m * T * esz`` bytes apart (a multiple
        of 1024) share a swizzled register, ``m`` slots on: one swizzle for each of the first ``m``
        slots, not one per slot."""
        f = self.f
        period = max(1, 1024 // (self.threads * esz)) if n >= self.threads else count
        regs: list[str] = []
        out = []
        for s in range(count):
            if s < period:
                a = f.reg("b32")
                f.emit(f"mad.lo.s32 {a}, {self.lin(n, s)}, {esz}, {self.smem_addr()}")
                regs.append(self.swizzled(a, offset))
            out.append((regs[s % period], (s - s % period) * self.threads * esz))
        return out

    def write_staged(self, tv: TileValue, offset: int, swizzle: bool = False) -> None:
        """Store each slot of ``tv`` at its linear index of a row-major buffer at byte ``offset`` of
        the scratch (replicated small tiles: the owning threads only; ``swizzle``: a swizzled
        buffer, :meth:`swizzled`).  No barrier."""
        f = self.f
        base = self.smem_addr()
        cls = reg_class(tv.elem)
        esz = _reg_bytes(cls)
        own = self.owner(tv.n)
        guard = f"@{own} " if own else ""
        if swizzle and cls != "pred":
            for r, (a, off) in zip(tv.regs, self.swizzled_slots(tv.n, esz, offset, len(tv.regs))):
                f.emit(guard + st_shared(cls, a, off, r, f))
            return
        for s, r in enumerate(tv.regs):
            a = f.reg("b32")
            f.emit(f"mad.lo.s32 {a}, {self.lin(tv.n, s)}, {esz}, {base}")
            f.emit(guard + st_shared(cls, self.swizzled(a, offset) if swizzle else a, 0 if swizzle else offset, r, f))

    def read_staged(self, out: TileValue, offset: int, swizzle: bool = False) -> None:
        """Load each slot of ``out`` from its linear index of a row-major buffer at byte ``offset``
        of the scratch (the reverse of :meth:`write_staged`).  No barrier."""
        cls = reg_class(out.elem)
        esz = _reg_bytes(cls)
        if not swizzle or cls == "pred":
            for s, r in enumerate(out.regs):
                self.mov(cls, r, self.smem_read(out.elem, offset, self.lin(out.n, s), swizzle=swizzle))
            return
        for r, (a, off) in zip(out.regs, self.swizzled_slots(out.n, esz, offset, len(out.regs))):
            self.f.emit(f"ld.shared.{_cls_mem(cls)} {r}, [{a}+{off}]")

    def smem_read(self, elem: T.Type, offset: int, index: str, pred: str | None = None,
                  swizzle: bool = False) -> str:
        """Register with the element at ``index`` (b32 register, elements) of a staged tile at ``offset``
        (``swizzle``: a swizzled buffer, :meth:`swizzled`)."""
        f = self.f
        cls = reg_class(elem)
        esz = _reg_bytes(cls)
        a = f.reg("b32")
        f.emit(f"mad.lo.s32 {a}, {index}, {esz}, {self.smem_addr()}")
        if swizzle:
            a, offset = self.swizzled(a, offset), 0
        out = f.reg(cls)
        guard = f"@{pred} " if pred else ""
        if cls == "pred":
            load_pred_byte(f, out, f"{guard}ld.shared", f"{a}+{offset}", zero_first=pred is not None)
        else:
            f.emit(f"{guard}ld.shared.{_cls_mem(cls)} {out}, [{a}+{offset}]")
        return out

    def smem_write(self, elem: T.Type, offset: int, index: str, reg: str, pred: str | None = None) -> None:
        """Store register ``reg`` as element ``index`` (b32 register, elements) of a row-major buffer
        of ``elem`` at byte ``offset`` of the scratch (in the threads where ``pred`` holds).  No barrier."""
        f = self.f
        cls = reg_class(elem)
        a = f.reg("b32")
        f.emit(f"mad.lo.s32 {a}, {index}, {_reg_bytes(cls)}, {self.smem_addr()}")
        f.emit((f"@{pred} " if pred else "") + st_shared(cls, a, offset, reg, f))

    def linear(self, terms: list[tuple[str | int, int]], const: int = 0) -> str:
        """b32 register = ``const + sum(reg * mult)`` (``reg`` may be an int)."""
        f = self.f
        acc_const = const
        regs = []
        for r, m in terms:
            if isinstance(r, int):
                acc_const += r * m
            elif m:
                regs.append((r, m))
        out = f.reg("b32")
        if not regs:
            f.emit(f"mov.b32 {out}, {acc_const}")
            return out
        r0, m0 = regs[0]
        f.emit(f"mad.lo.s32 {out}, {r0}, {m0}, {acc_const}")
        for r, m in regs[1:]:
            f.emit(f"mad.lo.s32 {out}, {r}, {m}, {out}")
        return out

    # -- regions -----------------------------------------------------------------
    def run_ops(self, ops) -> None:
        for op in ops:
            self.lower_op(op)

    def lower_op(self, op: Operation) -> None:
        short = op.name.split(".", 1)[1] if op.name.startswith("cuda_tile.") else op.name
        h = HANDLERS.get(short)
        if h is None:
            raise LoweringError(f"the PTX lowering does not support '{op.name}' yet", op)
        self.f.loc = self.loc_of(op)
        self.op = op
        if "token" in op.operand_segments and any(after_access(t) for t in op.operand_group("token")):
            self.f.barrier()
        try:
            if any(hook(self, op, h) for hook in OP_HOOKS):
                return
        except LoweringError as e:
            if e.op is None:
                e.op = op
            raise
        converted = {}
        for hook in OPERAND_HOOKS:
            for i, v in enumerate(op.operands):
                if id(v) in converted or id(v) not in self.values:
                    continue
                y = hook(self, op, i, self.values[id(v)])
                if y is not None:
                    converted[id(v)] = self.values[id(v)]
                    self.values[id(v)] = y
                    self.f.loc = self.loc_of(op)
        try:
            h(self, op)
        except LoweringError as e:
            if e.op is None:
                e.op = op
            raise
        finally:
            self.values.update(converted)

    def loc_of(self, op: Operation) -> SourceLoc | None:
        """Where ``op``'s instructions come from: the start of its source range in file
        ``file_index`` (``None`` without either); assigned to ``f.loc`` before ``op`` emits, it is
        the ``.loc`` directive (``str()``) and the key of :attr:`Function.instructions`."""
        if self.file_index is None or op.range is None:
            return None
        return SourceLoc(self.file_index, op.range.start.line, op.range.start.character)

    def bind_block(self, region: Region, values: list) -> list:
        block = region.blocks[0]
        for arg, x in zip(block.arguments, values):
            self.set(arg, x)
        return block.operations


def after_access(token: Value) -> bool:
    """Whether a token-ordered op with operand ``token`` must wait for the whole CTA: the token comes
    after a memory access (the result token of a load, store or atomic, or a ``join_tokens`` with
    one), or from a block argument (a loop-carried token; assumed so).  ``make_token`` orders after
    nothing.

    cuda_tile orders the memory ops of one tile block by tokens (the ``*_tko`` ops of cuda-tile ``Ops.td``);
    the tile block is a CTA whose threads each access their own elements, and two accesses of one
    element may fall to different threads (another view, ``dim_map`` or tile shape), so the later
    access waits at ``bar.sync 0``, which also orders the CTA's memory accesses (PTX ISA
    "bar.sync": memory accesses before the barrier are performed relative to the participating
    threads).
    """
    if not isinstance(token.type, T.TokenType):
        return False
    op = token.defining_op
    if op is None:
        return True
    short = op.name.split(".", 1)[-1]
    if short == "make_token":
        return False
    if short == "join_tokens":
        return any(after_access(v) for v in op.operands)
    return True


def _reg_bytes(cls: str) -> int:
    return REG_BYTES[cls]


def _cls_mem(cls: str) -> str:
    return {"b16": "b16", "b32": "b32", "b64": "b64", "f32": "f32", "f64": "f64"}[cls]


def st_shared(cls: str, addr: str, off: int, reg: str, f: Function) -> str:
    """``st.shared`` of register ``reg`` of class ``cls`` at ``[addr+off]`` (a predicate as a byte)."""
    if cls == "pred":
        return f"st.shared.u8 [{addr}+{off}], {pred_byte(f, reg)}"
    return f"st.shared.{_cls_mem(cls)} [{addr}+{off}], {reg}"


# -- i1 in memory: one byte, 0 or 1 (PTX has no predicate loads or stores) -------

def pred_byte(f: Function, pred: str) -> str:
    """A fresh ``b16`` register holding 1 where predicate ``pred`` is true, else 0: the byte an i1
    element is stored as (``st...u8`` of it)."""
    t = f.reg("b16")
    f.emit(f"selp.u16 {t}, 1, 0, {pred}")
    return t


def load_pred_byte(f: Function, dst: str, load: str, address: str, zero_first: bool = False,
                   emit: Callable[[str], None] | None = None) -> None:
    """Load an i1 element stored as a byte (see :func:`pred_byte`) into predicate register ``dst``.

    ``load`` is the load instruction without its type, a guard allowed
    (``"@%p1 ld.shared"``), ``address`` what goes in its brackets
    (``"%r4+16"``): it reads ``.u8`` into a fresh ``b16`` register and
    ``setp.ne.u16`` makes ``dst`` true for any non-zero byte.
    ``zero_first`` clears that register before the load, so a guarded load
    that does not run reads false.  ``emit`` takes each instruction
    (default :meth:`Function.emit`).
    """
    emit = emit or f.emit
    t = f.reg("b16")
    if zero_first:
        emit(f"mov.b16 {t}, 0")
    emit(f"{load}.u8 {t}, [{address}]")
    emit(f"setp.ne.u16 {dst}, {t}, 0")


__all__ = ["HANDLERS", "KernelLowering", "OP_HOOKS", "OPERAND_HOOKS", "f32_imm", "f64_imm", "handler", "load_pred_byte", "pred_byte",
           "st_shared", "storage_bytes"]
