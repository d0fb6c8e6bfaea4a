"""A CPU emulator for the PTX that tile-lsp's codegen emits (test support: no GPU needed).

:func:`run` mirrors :func:`tile_lsp.codegen.launch.launch`: NumPy arrays for
``.u64`` pointer parameters are copied into a simulated global memory and
copied back after the kernel ran; other arguments are scalars packed by
their PTX parameter type (``.b16`` floats as f16 bits).

Execution model
---------------
By default the CTAs of the grid run one after another (``run(schedule=None)``;
see "Concurrent CTAs" below for the other mode).  Inside a CTA every thread runs
at once, vectorised with NumPy: a register is an array with one lane per
thread (raw bits: ``uint16/32/64``, ``bool`` for predicates), each thread has
its own program counter, and every step executes the instruction at the
smallest PC among the live threads for exactly the threads at that PC
(min-PC scheduling; a guard ``@%p`` / ``@!%p`` masks further).  This runs
structured divergence and loops: threads that leave a loop early wait at a
higher PC until the others catch up.  While all live threads share one PC
(the usual case) a scalar PC is kept and no per-step scheduling work is done.

``bar.sync`` needs no work of its own under min-PC scheduling: a thread that
reaches a barrier only runs past it once it is the lowest-PC thread, so every
thread with a smaller PC (everything before the barrier) has run first.  But
that argument holds only if *all* live threads are at the barrier when it
executes; a barrier reached while other live threads wait elsewhere (at a
higher PC, or at another barrier) is a deadlock or undefined behaviour on a
GPU, so it raises :class:`EmulatorError`.  ``mma.sync`` checks that the 32
lanes of each warp execute it together.

Because lockstep execution hides missing barriers, global and shared memory
also record, per byte, the last writing and reading thread and the barrier
interval ("epoch") of the access: two threads of one CTA touching the same
bytes in the same interval, one of them writing, raise :class:`DataRace`
(atomics are exempt; several threads storing the same value in one
instruction are allowed).  Run one after another, CTAs cannot race with each
other; a concurrent run records their conflicts instead (below).

Concurrent CTAs
---------------
``run(schedule=seed)`` with an int seed makes every CTA of the grid live at
once, as on a GPU with all CTAs resident.  Each CTA has its own registers
(its own lanes of the register arrays), PCs, shared memory, barrier epoch
and ``%ctaid``, and runs as a generator (:func:`_cta_steps`).  A scheduler
runs one CTA at a time and switches CTA at *scheduling points*: just before
an ``ld``/``st``/``atom``/``red`` on ``.global`` or on a generic address
(generic addresses count even when they resolve to shared memory), a
``bar.sync``, or a ``membar``/``fence`` executes (whether or not its guard
lets a thread through, so CTAs on the same path stay aligned), and at CTA
exit.  Seed ``0`` is round-robin lockstep: CTA 0, 1, ..., n-1, 0, ... each
runs to its next scheduling point in turn (what a GPU with all CTAs resident
usually does; it reproduces the H100 results of ``permute_reshape_3d`` and
``tiled_view_stencil``).  A seed >= 1 picks the next CTA with
``random.Random(seed)``.  Switching costs no copying.

Global memory is weakly ordered between CTAs.  A *weak* global store (plain
``st``, i.e. without ``.relaxed``/``.acquire``/``.release``/``.volatile``) goes
into its CTA's store buffer: the CTA's own loads see it at once (byte-accurate
store forwarding), other CTAs only once it is drained to global memory.
Under seed 0 a CTA's buffer drains completely at its next scheduling point;
under a seed >= 1, at every scheduling point each buffered store of every
CTA drains with probability p (drawn once per run from [0.1, 0.5)), so other
CTAs see stores late and out of order (a newer buffered store to the same
bytes supersedes an older one, so each byte's stores stay in program order).
The whole buffer drains at any ``membar``/``fence`` (whatever its scope), at
a ``.release`` store, a ``.release``/``.acq_rel`` atomic, at CTA exit, and
before an atomic or a strong store to bytes the buffer holds.  Atomics and
strong (scoped or volatile) stores act on global memory directly; loads
read global memory (plus the CTA's own buffer) when they execute.  Shared
memory is per CTA and unbuffered.

Race and fault detection work per CTA as above (barrier epochs are numbered
across CTAs, so a race check only matches accesses of its own CTA).  Two CTAs
touching the same global bytes, at least one of them with a weak store,
do not raise: ``RunStats.cross_cta_conflicts`` lists them (deduplicated by
array and the two PTX lines, at most 20), telling a test that the kernel's
result depends on the schedule.  ``max_steps`` holds per CTA; a grid of one
CTA runs as in sequential mode.

Memory: one flat global space (buffers 256-byte aligned from 4 GiB up, so a
pointer truncated to 32 bits is caught), a constant space for module
``.const`` arrays, and per-CTA shared memory (static ``.shared`` arrays, then
the ``.extern .shared`` dynamic part; filled with ``0xFF`` bytes so that a
read of never-written shared memory gives NaNs / -1 instead of plausible
zeros).  Accesses outside an allocation or misaligned raise an error that
names the instruction.  Generic addresses are global ones unless they were
made with ``cvta.shared`` (a separate window) or point into the constant
space.

Arithmetic follows the PTX ISA: integers wrap at their width with the
signedness of the instruction type; shift amounts at or above the width
clamp; integer division by zero does not trap (quotient all ones, remainder
the dividend: the ISA leaves the values unspecified); float-to-integer
``cvt`` saturates and maps NaN to 0.  f32 arithmetic is NumPy float32
(round to nearest even = ``.rn``); directed roundings (``.rz/.rm/.rp``) are
emulated through float64.  ``fma.f32`` is computed in float64 (exact product)
and rounded once to float32 from the float64 sum, which can differ from a
true fused result in the last bit in rare double-rounding cases.  ``.approx``
transcendental ops are evaluated exactly (float64) and rounded to the
instruction type: they are *more* accurate than the hardware.  f16/bf16/fp8
conversions use NumPy and ``ml_dtypes`` (round to nearest even).  Atomics are
applied lane by lane in thread order.

Anything not implemented raises :class:`EmulatorError` naming the PTX line
when it would execute; nothing is skipped silently.
"""

from __future__ import annotations

import itertools
import operator
import random
import re
from dataclasses import dataclass, field
from fractions import Fraction

import ml_dtypes
import numpy as np

__all__ = ["EmulatorError", "KernelTrap", "Program", "RunStats", "Traffic", "parse", "run"]


class EmulatorError(RuntimeError):
    """The PTX cannot be emulated, or it did something a GPU would fault or hang on."""


class KernelTrap(EmulatorError):
    """The kernel executed ``trap`` (a failed device-side assertion)."""


class DataRace(EmulatorError):
    """Two threads of a CTA accessed the same bytes, one of them writing, with no barrier in between."""


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------

_VIEW = {
    "pred": np.bool_,
    "b8": np.uint8, "u8": np.uint8, "s8": np.int8,
    "b16": np.uint16, "u16": np.uint16, "s16": np.int16,
    "f16": np.float16, "bf16": ml_dtypes.bfloat16,
    "b32": np.uint32, "u32": np.uint32, "s32": np.int32, "f32": np.float32,
    "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64,
    "f16x2": np.uint32, "bf16x2": np.uint32, "tf32": np.uint32,
    "e4m3x2": np.uint16, "e5m2x2": np.uint16,
}
_BITS = {t: (1 if t == "pred" else np.dtype(v).itemsize * 8) for t, v in _VIEW.items()}
_STORE = {1: np.bool_, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_FLOATS = {"f16", "bf16", "f32", "f64"}
_F8 = {"e4m3": (ml_dtypes.float8_e4m3fn, 448.0), "e5m2": (ml_dtypes.float8_e5m2, 57344.0)}
_F16_MAX = {"f16": 65504.0, "bf16": float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)}


def _kind(t: str) -> str:
    """'p' predicate, 'f' float, 's' signed, 'u' unsigned, 'b' untyped bits."""
    if t == "pred":
        return "p"
    if t in _FLOATS:
        return "f"
    return t[0] if t[0] in "sub" else "x"


# Address windows of the simulated address spaces.
GLOBAL_BASE = 1 << 32
CONST_BASE = 3 << 32
SHARED_WINDOW = 5 << 32  # generic addresses of shared memory (cvta.shared)
_SMEM_LIMIT = {"sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_89": 99 * 1024, "sm_90": 227 * 1024}
_STATIC_SMEM_LIMIT = 48 * 1024

_CMP_INT = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
_CMP_FLOAT = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
              "ge": np.greater_equal}


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------


class _Space:
    """One flat address space: bytes at ``base``..``base+size``, allocations marked valid."""

    def __init__(self, name: str, base: int, size: int, fill: int = 0, races: bool = False):
        self.name, self.base, self.size = name, base, size
        n = (size + 15) // 16 * 16 + 16
        self.data = np.full(n, fill, np.uint8)
        self.valid = np.zeros(n, bool)
        self.top = 0
        # Race detection (per byte): last writer thread and its barrier epoch, last reader (-2: several).
        self.races = races
        self.epoch = 0
        if races:
            self.writer = np.full(n, -1, np.int16)  # thread ids < 1024
            self.wepoch = np.full(n, -1, np.int32)
            self.reader = np.full(n, -1, np.int16)
            self.repoch = np.full(n, -1, np.int32)

    def _race(self, kind: str, where: str, byte: int, this: int, other: int) -> DataRace:
        who = "several threads" if other == -2 else f"thread {other}"
        return DataRace(f"{where}: data race on {self.name} memory at {self.base + byte:#x}: thread {this} "
                        f"{kind} {who} since the last barrier")

    def _check_read(self, off, nbytes: int, lanes, where: str) -> None:
        b = (np.atleast_1d(off)[:, None] + np.arange(nbytes)).reshape(-1)
        ln = np.repeat(np.broadcast_to(np.atleast_1d(lanes), np.atleast_1d(off).shape), nbytes)
        bad = (self.wepoch[b] == self.epoch) & (self.writer[b] != ln)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise self._race("reads bytes written by", where, int(b[k]), int(ln[k]), int(self.writer[b[k]]))
        same = self.repoch[b] == self.epoch
        new = np.where(same & (self.reader[b] != ln), -2, ln)
        order = np.argsort(b, kind="stable")
        bs, ls = b[order], ln[order]
        dup = (bs[1:] == bs[:-1]) & (ls[1:] != ls[:-1])
        self.reader[b] = new
        self.reader[bs[1:][dup]] = -2
        self.repoch[b] = self.epoch

    def _check_write(self, off, nbytes: int, lanes, bits, where: str) -> None:
        offs = np.atleast_1d(off)
        b = (offs[:, None] + np.arange(nbytes)).reshape(-1)
        ln = np.repeat(np.broadcast_to(np.atleast_1d(lanes), offs.shape), nbytes)
        for kind, who in (("overwrites bytes written by", self.writer[b] * (self.wepoch[b] == self.epoch)
                           + -1 * (self.wepoch[b] != self.epoch)),
                          ("overwrites bytes read by", np.where(self.repoch[b] == self.epoch, self.reader[b], -1))):
            bad = (who != -1) & (who != ln)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise self._race(kind, where, int(b[k]), int(ln[k]), int(who[k]))
        # Several threads storing to the same address in one instruction: a race unless the values agree.
        if offs.size > 1:
            vals = np.broadcast_to(np.asarray(bits), offs.shape)
            order = np.argsort(offs, kind="stable")
            o, v, lo = offs[order], vals[order], np.broadcast_to(np.atleast_1d(lanes), offs.shape)[order]
            dup = (o[1:] == o[:-1]) & (v[1:] != v[:-1])
            if dup.any():
                k = int(np.flatnonzero(dup)[0])
                raise self._race("stores a different value than", where, int(o[k]), int(lo[k + 1]), int(lo[k]))
        self.writer[b] = ln
        self.wepoch[b] = self.epoch

    def allocate(self, nbytes: int, align: int = 256) -> int:
        """Reserve ``nbytes`` at the next ``align``-aligned offset; returns the address."""
        off = (self.top + align - 1) // align * align
        if off + nbytes > self.size:
            raise EmulatorError(f"{self.name} space too small for {nbytes} bytes")
        self.valid[off:off + nbytes] = True
        self.top = off + nbytes
        return self.base + off

    def contains(self, addr) -> np.ndarray:
        a = np.asarray(addr, np.int64)
        return (a >= self.base) & (a < self.base + self.size)

    def _offsets(self, addr, nbytes: int, where: str) -> np.ndarray:
        off = np.asarray(addr, np.int64) - self.base
        bad = (off < 0) | (off + nbytes > self.size)
        if np.any(bad):
            a = int(np.asarray(addr, np.int64)[bad].flat[0]) if np.ndim(addr) else int(addr)
            raise EmulatorError(f"{where}: {self.name} access of {nbytes} bytes at {a:#x} is outside "
                                f"the {self.name} space [{self.base:#x}, {self.base + self.size:#x})")
        if np.any(off % nbytes):
            a = int(np.asarray(off)[np.asarray(off % nbytes) != 0].flat[0]) + self.base
            raise EmulatorError(f"{where}: misaligned {nbytes}-byte {self.name} access at {a:#x}")
        ok = self.valid[off] & self.valid[off + nbytes - 1]
        if not np.all(ok):
            a = int(np.asarray(off)[~np.asarray(ok)].flat[0]) + self.base
            raise EmulatorError(f"{where}: {self.name} access of {nbytes} bytes at {a:#x} is not inside "
                                f"any allocation (out of bounds)")
        return off

    def load(self, addr, nbytes: int, where: str, lanes=None, order: str = "weak"):
        """Raw bits (``uint{8*nbytes}``) at the addresses; ``lanes``: the threads (for race checks).

        ``order`` (``weak``, ``strong``, ``release``, ``atomic``) matters only to :class:`_WeakGlobal`.
        """
        if self.races and lanes is not None and np.ndim(addr) == 0:
            addr = np.full(np.shape(lanes), addr, np.int64)
        off = self._offsets(addr, nbytes, where)
        if self.races and lanes is not None:
            self._check_read(off, nbytes, lanes, where)
        return self.data.view(_STORE[8 * nbytes])[off // nbytes]

    def check_store(self, addr, nbytes: int, bits, where: str, lanes=None) -> np.ndarray:
        """Fault and race checks of a store (recording it as the bytes' last write); returns the offsets."""
        if self.races and lanes is not None and np.ndim(addr) == 0:
            addr = np.full(np.shape(lanes), addr, np.int64)
        off = self._offsets(addr, nbytes, where)
        if self.races and lanes is not None:
            self._check_write(off, nbytes, lanes, bits, where)
        return off

    def store(self, addr, nbytes: int, bits, where: str, lanes=None, order: str = "weak") -> None:
        """Store raw bits at the addresses (see :meth:`load` for ``lanes`` and ``order``)."""
        off = self.check_store(addr, nbytes, bits, where, lanes)
        self.data.view(_STORE[8 * nbytes])[off // nbytes] = bits


class _Cta:
    """The state of one CTA in a concurrent run (``run(schedule=...)``).

    Its registers are lanes ``base .. base+T`` of the machine's register
    arrays; ``gen`` is its :func:`_cta_steps` generator (PCs, live mask and
    step count live in that frame); ``shared`` is its shared memory; ``buf``
    its store buffer of weak global stores, oldest first, as ``(seq, byte
    offsets, byte values)``; ``owner[b]``/``own[b]``: the newest buffered
    store covering global byte ``b`` (-1: none) and its value (store
    forwarding).
    """

    __slots__ = ("index", "ctaid", "base", "shared", "gen", "buf", "seq", "owner", "own")

    def __init__(self, index: int, ctaid: tuple[int, int, int], base: int, shared: _Space):
        self.index, self.ctaid, self.base, self.shared = index, ctaid, base, shared
        self.gen = None
        self.buf: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.seq = 0
        self.owner: np.ndarray | None = None
        self.own: np.ndarray | None = None


class _WeakGlobal:
    """Global memory as the CTAs of a concurrent run see it: shared bytes plus a store buffer per CTA.

    It stands in for the global :class:`_Space` (same ``load``/``store``
    interface) and acts for the running CTA ``cur``.  A weak store (``order``
    ``weak``) is fault- and race-checked at once but only buffered; the
    CTA's own loads see it (byte-accurate forwarding), other CTAs once it is
    drained.  Other stores drain the buffer first (all of it for ``release``,
    only if it holds bytes they overlap otherwise) and write through;
    ``atomic`` accesses go straight to memory (:meth:`atomic` drained and
    recorded them beforehand).  A newer buffered store to the same bytes
    supersedes an older one, so draining in any order keeps each byte's
    writes in program order.  Two CTAs touching the same bytes, one of them
    with a weak store, are recorded in ``conflicts``.
    """

    MAX_CONFLICTS = 20

    def __init__(self, space: _Space, regions: list[tuple[int, int, str]]):
        self.space = space
        self.name, self.base, self.size = space.name, space.base, space.size
        self.cur: _Cta | None = None
        self.pending: dict[int, _Cta] = {}  # CTAs with buffered stores, in the order they buffered
        n = space.data.size
        # Per byte: the CTA that stored it weakly / accessed it at all (-1: none, -2: several), and where.
        self.weak_cta = np.full(n, -1, np.int32)
        self.any_cta = np.full(n, -1, np.int32)
        self.weak_at = np.zeros(n, np.int32)
        self.any_at = np.zeros(n, np.int32)
        self.wheres: list[str] = []
        self.where_id: dict[str, int] = {}
        self.regions = sorted(regions)  # (offset, bytes, label) of the arrays and .global variables
        self.conflicts: list[str] = []
        self._seen: set = set()
        self._bytes = {nb: np.arange(nb) for nb in (1, 2, 4, 8, 16)}

    @property
    def epoch(self) -> int:
        return self.space.epoch

    @epoch.setter
    def epoch(self, value: int) -> None:
        self.space.epoch = value

    def contains(self, addr) -> np.ndarray:
        return self.space.contains(addr)

    def _byte_offsets(self, off, nbytes: int) -> np.ndarray:
        return (np.atleast_1d(np.asarray(off, np.int64))[:, None] + self._bytes[nbytes]).reshape(-1)

    # -- accesses ----------------------------------------------------------
    def load(self, addr, nbytes: int, where: str, lanes=None, order: str = "weak"):
        v = self.space.load(addr, nbytes, where, lanes)
        if order == "atomic":
            return v
        b = self._byte_offsets(np.broadcast_to(np.asarray(addr, np.int64), np.shape(v)) - self.base, nbytes)
        self._record(b, where, False, False)
        c = self.cur
        if c.buf:
            hit = c.owner[b] >= 0
            if hit.any():  # store forwarding from this CTA's buffer
                raw = self.space.data[b]
                raw[hit] = c.own[b[hit]]
                return raw.view(_STORE[8 * nbytes]).reshape(np.shape(v))
        return v

    def store(self, addr, nbytes: int, bits, where: str, lanes=None, order: str = "weak") -> None:
        st = _STORE[8 * nbytes]
        if order == "atomic":
            self.space.store(addr, nbytes, bits, where)
            return
        off = self.space.check_store(addr, nbytes, bits, where, lanes)
        off, bits = np.broadcast_arrays(np.atleast_1d(off), np.atleast_1d(np.asarray(bits, st)))
        b = self._byte_offsets(off, nbytes)
        weak = order == "weak"
        self._record(b, where, True, weak)
        c = self.cur
        if weak:
            if c.owner is None:
                c.owner = np.full(self.space.data.size, -1, np.int32)
                c.own = np.zeros(self.space.data.size, np.uint8)
            vals = np.ascontiguousarray(bits).view(np.uint8)
            c.seq += 1
            c.owner[b] = c.seq
            c.own[b] = vals
            c.buf.append((c.seq, b, vals))
            self.pending.setdefault(c.index, c)
            return
        if order == "release" or (c.buf and (c.owner[b] >= 0).any()):
            self.drain(c)
        self.space.data.view(st)[off // nbytes] = bits

    def atomic(self, addrs, nbytes: int, release: bool, where: str) -> None:
        """Before an atomic of the running CTA: drain its buffer (same-address coherence, release) and record it."""
        a = np.atleast_1d(np.asarray(addrs, np.int64))
        a = a[(a >= self.base) & (a < self.base + self.size)]
        c = self.cur
        if not a.size:
            if release:
                self.drain(c)
            return
        b = self._byte_offsets(a - self.base, nbytes)
        if release or (c.buf and (c.owner[b] >= 0).any()):
            self.drain(c)
        self._record(b, where, True, False)

    # -- store buffers -----------------------------------------------------
    def _drain_entry(self, c: _Cta, entry) -> None:
        seq, b, vals = entry
        newest = c.owner[b] == seq  # bytes a newer buffered store of the CTA has not superseded
        if newest.all():
            self.space.data[b] = vals
            c.owner[b] = -1
        else:
            bb = b[newest]
            self.space.data[bb] = vals[newest]
            c.owner[bb] = -1

    def drain(self, c: _Cta) -> None:
        """Make all of ``c``'s buffered stores visible (fence, release, exit)."""
        for entry in c.buf:
            self._drain_entry(c, entry)
        c.buf.clear()
        self.pending.pop(c.index, None)

    def drain_some(self, rng, p: float) -> None:
        """Drain each buffered store of every CTA with probability ``p`` (late and out-of-order visibility)."""
        for c in list(self.pending.values()):
            keep = []
            for entry in c.buf:
                if rng.random() < p:
                    self._drain_entry(c, entry)
                else:
                    keep.append(entry)
            c.buf[:] = keep
            if not keep:
                del self.pending[c.index]

    # -- cross-CTA conflicts -----------------------------------------------
    def _record(self, b: np.ndarray, where: str, write: bool, weak: bool) -> None:
        """Note an access of the running CTA to global bytes ``b``; report a conflict with another CTA's."""
        c = self.cur.index
        wid = self.where_id.get(where)
        if wid is None:
            wid = self.where_id[where] = len(self.wheres)
            self.wheres.append(where)
        # A weak store conflicts with any other CTA's access, any access with another CTA's weak store.
        other, at = (self.any_cta, self.any_at) if weak else (self.weak_cta, self.weak_at)
        o = other[b]
        bad = (o != -1) & (o != c)
        if bad.any() and len(self.conflicts) < self.MAX_CONFLICTS:
            self._report(b, bad, o, at, wid, write, weak)
        for cta, at_ in ((self.any_cta, self.any_at),) + (((self.weak_cta, self.weak_at),) if weak else ()):
            prev = cta[b]
            cta[b] = np.where((prev == -1) | (prev == c), c, -2)
            at_[b] = wid

    def _report(self, b, bad, o, at, wid: int, write: bool, weak: bool) -> None:
        k = int(np.flatnonzero(bad)[0])
        first, other, other_wid = int(b[k]), int(o[k]), int(at[b[k]])
        label, start = f"global bytes at {self.base:#x}", 0
        for roff, rbytes, rlabel in self.regions:
            if roff <= first < roff + rbytes:
                label, start = rlabel, roff
                break
        key = (label, wid, other_wid)
        if key in self._seen:
            return
        self._seen.add(key)
        hit = b[bad]
        lo, hi = int(hit.min()) - start, int(hit.max()) - start + 1
        what = "weakly stores" if weak else ("writes (atomic or strong)" if write else "loads")
        others = "other CTAs" if other == -2 else f"CTA {other}"
        theirs = "accessed" if weak else "weakly stored"

        def line(w):
            return w.split(":", 1)[0]
        self.conflicts.append(f"{label} bytes [{lo}, {hi}): CTA {self.cur.index} {what} them at "
                              f"{line(self.wheres[wid])}, {others} {theirs} them at {line(self.wheres[other_wid])}")


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


@dataclass
class _Stmt:
    """One PTX instruction as text: guard, opcode pieces, operands, source line."""

    line: int
    text: str
    guard: str | None
    guard_neg: bool
    opcode: str
    mods: list[str]
    operands: list[str]


@dataclass
class _Var:
    """A module or kernel variable (``.shared`` / ``.const`` / ``.global`` / ``.local``)."""

    space: str
    name: str
    elem_bits: int
    count: int | None  # None: ``.extern`` array of unknown size (dynamic shared memory)
    align: int
    init: list[int] | None


@dataclass
class Program:
    """A parsed kernel: parameters, register declarations, variables, statements and labels."""

    name: str
    params: list[tuple[str, str]]  # (PTX type without the dot, name)
    reg_decls: dict[str, tuple[str, int | None]]  # name or prefix -> (type, count or None)
    variables: list[_Var]
    stmts: list[_Stmt]
    labels: dict[str, int]
    target: str
    reqntid: tuple[int, ...] | None = None


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_VAR = re.compile(r"^(?:\.extern\s+|\.visible\s+|\.weak\s+)*\.(shared|const|global|local)\s+(.*?)\s*"
                  r"([$\w]+)\s*(\[\s*(\d*)\s*\])?\s*(?:=\s*\{?([^{}]*)\}?)?$", re.DOTALL)


def _split_top(s: str, sep: str = ",") -> list[str]:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _parse_var(stmt: str) -> _Var | None:
    m = _VAR.match(stmt.strip())
    if not m:
        return None
    space, attrs, name, brackets, count, init = m.groups()
    if brackets is None:
        count = "1"
    align = 1
    am = re.search(r"\.align\s+(\d+)", attrs)
    if am:
        align = int(am.group(1))
    tm = re.findall(r"\.([a-z]+\d+)", attrs)
    if not tm or tm[-1] not in _BITS:
        raise EmulatorError(f"cannot parse the variable declaration {stmt!r}")
    values = [int(v, 0) for v in init.split(",")] if init else None
    return _Var(space, name, _BITS[tm[-1]], int(count) if count else None, max(align, _BITS[tm[-1]] // 8), values)


def parse(ptx: str, kernel_name: str) -> Program:
    """Parse the PTX module text and return kernel ``kernel_name`` as a :class:`Program`."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), ptx)
    tm = re.search(r"^\s*\.target\s+(\w+)", text, re.MULTILINE)
    target = tm.group(1) if tm else "sm_90"
    em = re.search(r"\.entry\s+" + re.escape(kernel_name) + r"\s*\(", text)
    if not em:
        raise EmulatorError(f"no .entry {kernel_name} in the PTX")
    # Parameter list: up to the matching ')'.
    depth, i = 1, em.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    params = []
    for p in _split_top(text[em.end():i - 1]):
        pm = re.match(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([$\w]+)$", p.strip())
        if not pm:
            raise EmulatorError(f"unsupported kernel parameter {p!r}")
        params.append((pm.group(1), pm.group(2)))
    body_open = text.index("{", i)
    header = text[i:body_open]
    rq = re.search(r"\.reqntid\s+([\d\s,]+)", header)
    reqntid = tuple(int(x) for x in rq.group(1).replace(",", " ").split()) if rq else None
    depth, j = 1, body_open + 1
    while depth:
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        j += 1
    body_start_line = text.count("\n", 0, body_open) + 1

    variables: list[_Var] = []
    # Module-level variables: statements outside every function body.
    module_text = text[:em.start()] + "\n" + text[j:]
    for chunk in module_text.split(";"):
        # A chunk may start with directives that end without ';' (.version, .target, .file).
        dm = re.search(r"^[ \t]*((?:\.extern\s+|\.visible\s+|\.weak\s+)*\.(?:shared|const|global|local)\b.*)\Z",
                       chunk, re.MULTILINE | re.DOTALL)
        if dm:
            c = dm.group(1).strip()
            v = _parse_var(c)
            if v is None:
                raise EmulatorError(f"cannot parse the module variable {c!r}")
            variables.append(v)

    reg_decls: dict[str, tuple[str, int | None]] = {}
    stmts: list[_Stmt] = []
    labels: dict[str, int] = {}
    pending, pending_line = "", 0
    for k, raw in enumerate(text[body_open + 1:j - 1].split("\n")):
        lineno = body_start_line + k
        line = raw.strip()
        if not line or line.startswith((".loc", ".file", ".section")):
            continue
        while line:
            lm = re.match(r"^([$\w]+)\s*:(?!:)", line) if not pending else None
            if lm:
                labels[lm.group(1)] = len(stmts)
                line = line[lm.end():].strip()
                continue
            if line[0] in "{}" and not pending:
                line = line[1:].strip()
                continue
            if ";" not in line:
                if not pending:
                    pending_line = lineno
                pending += " " + line
                break
            piece, line = line.split(";", 1)
            line = line.strip()
            stmt = (pending + " " + piece).strip()
            sline = pending_line if pending else lineno
            pending = ""
            if stmt:
                _body_statement(stmt, sline, reg_decls, variables, stmts)
    return Program(kernel_name, params, reg_decls, variables, stmts, labels, target, reqntid)


def _body_statement(stmt: str, line: int, reg_decls, variables, stmts) -> None:
    if stmt.startswith(".reg"):
        m = re.match(r"\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.*)$", stmt)
        if not m:
            raise EmulatorError(f"line {line}: cannot parse {stmt!r}")
        for name in _split_top(m.group(2)):
            nm = re.match(r"^(%[$\w]+)\s*<\s*(\d+)\s*>$", name)
            if nm:
                reg_decls[nm.group(1)] = (m.group(1), int(nm.group(2)))
            else:
                reg_decls[name.strip()] = (m.group(1), None)
        return
    if stmt.startswith((".shared", ".const", ".global", ".local")):
        v = _parse_var(stmt)
        if v is None:
            raise EmulatorError(f"line {line}: cannot parse {stmt!r}")
        variables.append(v)
        return
    if stmt.startswith(".param"):
        # Call-site parameter declarations (vprintf): st.param/call to them raise when executed.
        return
    if stmt.startswith((".pragma", ".maxnreg", ".maxntid", ".reqntid")):
        return
    if stmt.startswith("."):
        raise EmulatorError(f"line {line}: unsupported directive {stmt!r}")
    guard, neg = None, False
    gm = re.match(r"^@(!?)(%[$\w]+)\s+", stmt)
    if gm:
        guard, neg = gm.group(2), bool(gm.group(1))
        stmt_body = stmt[gm.end():]
    else:
        stmt_body = stmt
    parts = stmt_body.split(None, 1)
    full_op = parts[0]
    operands = _split_top(parts[1]) if len(parts) > 1 else []
    pieces = full_op.split(".")
    stmts.append(_Stmt(line, stmt, guard, neg, pieces[0], pieces[1:], operands))


# ---------------------------------------------------------------------------
# Numeric helpers
# ---------------------------------------------------------------------------


def _parse_imm(tok: str, t: str):
    """An immediate as a NumPy scalar of the view type of ``t``."""
    vdt = _VIEW[t]
    k = _kind(t)
    s = tok.strip()
    neg = s.startswith("-")
    body = s[1:] if neg else s
    if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", body):  # f32 bits
        bits, bw = int("0x" + body[2:], 0), 32
        val = float(np.uint32(bits).view(np.float32))
    elif re.fullmatch(r"0[dD][0-9a-fA-F]{16}", body):  # f64 bits
        bits, bw = int("0x" + body[2:], 0), 64
        val = float(np.uint64(bits).view(np.float64))
    elif re.fullmatch(r"0[xX][0-9a-fA-F]+U?|\d+U?|0[0-7]+U?|0[bB][01]+U?", body):
        b = body.rstrip("U")
        ival = int(b, 8) if re.fullmatch(r"0[0-7]+", b) else int(b, 0)
        ival = -ival if neg else ival
        if k == "f":
            return vdt(float(ival))
        w = _BITS[t]
        return np.array(ival & ((1 << w) - 1), _STORE[w]).view(vdt)[()]
    else:
        try:
            val = float(body)
        except ValueError:
            raise EmulatorError(f"cannot parse the immediate {tok!r}") from None
        bits, bw = None, None
    if neg:
        val = -val
    if k == "f":
        return vdt(val)
    if bits is not None and bw == _BITS[t] and not neg:
        return np.array(bits, _STORE[bw]).view(vdt)[()]
    raise EmulatorError(f"float immediate {tok!r} for a .{t} operand")


def _step_toward(bits: np.ndarray, sign_mask: int, toward_zero: np.ndarray) -> np.ndarray:
    """Move finite float bit patterns one ulp toward zero (or away from it)."""
    mag = bits & (sign_mask - 1)
    sign = bits & sign_mask
    one = np.array(1, bits.dtype)
    down = np.where(mag == 0, mag, mag - one)
    up = mag + one
    return sign | np.where(toward_zero, down, up)


def _round_float(x64: np.ndarray, dtype, mode: str) -> np.ndarray:
    """Round float64 values to ``dtype`` (float32/float16/bfloat16) with rounding ``mode`` (rn rz rm rp)."""
    x64 = np.asarray(x64, np.float64)
    r = x64.astype(dtype)
    if mode in ("rn", None):
        return r
    width = np.dtype(dtype).itemsize * 8
    st = _STORE[width]
    sign_mask = 1 << (width - 1)
    r = np.atleast_1d(r).copy()
    x = np.atleast_1d(x64)
    rv = r.astype(np.float64)
    finite_x = np.isfinite(x)
    if mode == "rz":
        fix = finite_x & (np.abs(rv) > np.abs(x))
        toward0 = np.ones_like(fix)
    elif mode == "rm":
        fix = finite_x & (rv > x)
        toward0 = rv > 0  # moving down: toward zero for positives, away for negatives
    elif mode == "rp":
        fix = finite_x & (rv < x)
        toward0 = rv < 0
    else:
        raise EmulatorError(f"unsupported rounding mode .{mode}")
    if fix.any():
        bits = r.view(st)
        # rv == 0 moving away from zero: step to the smallest subnormal with the sign of x.
        zero = rv == 0
        bits_fixed = _step_toward(bits, sign_mask, toward0)
        bits_fixed = np.where(zero & ~toward0, np.where(x < 0, st(sign_mask | 1), st(1)), bits_fixed)
        bits = np.where(fix, bits_fixed, bits)
        r = bits.astype(st).view(dtype)
    return r.reshape(np.shape(x64))


def _exact_fma(a, b, c):
    return a * b + c


def _float_step(v, dtype, up: bool):
    """The next representable ``dtype`` value above (``up``) or below ``v``."""
    width = np.dtype(dtype).itemsize * 8
    st = _STORE[width]
    sign = 1 << (width - 1)
    bits = int(np.asarray(v, dtype).view(st))
    if np.isnan(float(v)):
        return v
    if float(v) == 0:
        bits = 1 if up else sign | 1
    elif (float(v) > 0) == up:
        bits = bits + 1 if (bits & (sign - 1)) != (np.asarray(np.inf, dtype).view(st) & (sign - 1)) else bits
    else:
        bits -= 1
    return np.asarray(bits, st).view(dtype)[()]


def _round_fraction(q: Fraction, dtype, mode: str):
    """The exact value ``q`` rounded to ``dtype`` toward zero (rz), -inf (rm) or +inf (rp)."""
    c = np.asarray(float(q)).astype(dtype)[()]

    def val(x):
        return Fraction(float(x)) if np.isfinite(float(x)) else float(x)
    if mode == "rm" or (mode == "rz" and q >= 0):  # the largest value <= q
        while val(c) > q:
            c = _float_step(c, dtype, False)
        while val(_float_step(c, dtype, True)) <= q and np.isfinite(float(_float_step(c, dtype, True))):
            c = _float_step(c, dtype, True)
    else:  # the smallest value >= q
        while val(c) < q:
            c = _float_step(c, dtype, True)
        while val(_float_step(c, dtype, False)) >= q and np.isfinite(float(_float_step(c, dtype, False))):
            c = _float_step(c, dtype, False)
    return c


def _directed(exact, f64fn, args, dtype, mode: str) -> np.ndarray:
    """Lane by lane: ``exact`` on Fractions rounded with ``mode``; non-finite cases from ``f64fn``."""
    arrays = np.broadcast_arrays(*[np.atleast_1d(np.asarray(x).astype(np.float64)) for x in args])
    approx = np.asarray(f64fn(*arrays), np.float64)
    out = approx.astype(dtype)
    for j in range(out.size):
        xs = [float(a.flat[j]) for a in arrays]
        if not all(np.isfinite(xs)) or not np.isfinite(approx.flat[j]):
            continue  # inf / nan / division by zero: the same under every rounding mode
        out.flat[j] = _round_fraction(exact(*[Fraction(x) for x in xs]), dtype, mode)
    return out


def _ftz32(x):
    x = np.asarray(x, np.float32)
    return np.where(np.abs(x) < np.float32(1.1754944e-38), np.copysign(np.float32(0), x), x)


def _sat01(x):
    x = np.asarray(x)
    return np.where(np.isnan(x), x.dtype.type(0), np.clip(x, 0, 1)).astype(x.dtype)


def _idivmod(a, b, signed: bool, dtype):
    """Truncating integer quotient and remainder; division by zero gives all ones / the dividend."""
    a = np.asarray(a, dtype)
    b = np.asarray(b, dtype)
    zero = b == 0
    bs = np.where(zero, dtype(1), b).astype(dtype)
    q = np.floor_divide(a, bs)
    r = a - q * bs
    if signed:
        adjust = (r != 0) & ((a < 0) != (bs < 0))  # floor -> truncation
        q = np.where(adjust, q + dtype(1), q).astype(dtype)
        r = (a - q * bs).astype(dtype)
    q = np.where(zero, dtype(-1) if signed else dtype(np.iinfo(dtype).max), q).astype(dtype)
    r = np.where(zero, a, r).astype(dtype)
    return q, r


def _mul_hi(a, b, t: str):
    w = _BITS[t]
    signed = _kind(t) == "s"
    if w <= 32:
        wide = np.int64 if signed else np.uint64
        p = np.asarray(a).astype(wide) * np.asarray(b).astype(wide)
        return (p >> wide(w)).astype(_VIEW[t])
    av = np.atleast_1d(np.asarray(a))
    bv = np.broadcast_to(np.asarray(b), av.shape) if np.ndim(b) == 0 else np.asarray(b)
    av = np.broadcast_to(av, bv.shape)
    out = [((int(x) * int(y)) >> 64) & ((1 << 64) - 1) for x, y in zip(av, bv)]
    return np.array(out, np.uint64).view(_VIEW[t])


def _float_to_int(x, t: str, mode: str):
    """cvt from float to integer type ``t``: round with ``mode`` (rni rzi rmi rpi), saturate, NaN -> 0."""
    x = np.asarray(x).astype(np.float64)
    f = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}.get(mode)
    if f is None:
        raise EmulatorError(f"float-to-integer cvt needs .rni/.rzi/.rmi/.rpi, not .{mode}")
    r = f(x)
    info = np.iinfo(_VIEW[t])
    r = np.where(np.isnan(r), 0, np.clip(r, float(info.min), float(info.max)))
    if _BITS[t] == 64:
        # float(max) of a 64-bit type rounds up to 2**63 / 2**64: clamp in integer space.
        big = r >= float(info.max)
        out = np.where(big, 0, r).astype(_VIEW[t])
        return np.where(big, _VIEW[t](info.max), out)
    return r.astype(_VIEW[t])


def _to_f8(x32: np.ndarray, fmt: str, satfinite: bool, relu: bool) -> np.ndarray:
    dt, fmax = _F8[fmt]
    x = np.asarray(x32, np.float32)
    if relu:
        x = np.where(np.isnan(x), x, np.maximum(x, np.float32(0)))
    if satfinite:
        x = np.where(np.isnan(x), x, np.clip(x, -fmax, fmax))
    return x.astype(dt).view(np.uint8)


# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------


@dataclass
class _Instr:
    fn: object  # callable(idx) for ordinary instructions
    kind: str  # op bra ret bar warp
    guard: int | None
    guard_neg: bool
    target: int
    where: str
    opname: str = ""
    sched: bool = False  # a scheduling point of a concurrent run (global access, barrier, fence)


_SPECIALS = ["%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
             "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid", "%nwarpid"]
_SPECIAL_ALIASES = {"%tid": "%tid.x", "%ntid": "%ntid.x", "%ctaid": "%ctaid.x", "%nctaid": "%nctaid.x"}
_IGNORED_LDST = {"weak", "volatile", "relaxed", "acquire", "release", "cta", "gpu", "sys", "cluster", "ca", "cg",
                 "cs", "lu", "cv", "wb", "wt", "nc", "L1::evict_normal", "L1::evict_unchanged", "L1::evict_first",
                 "L1::evict_last", "L1::no_allocate", "L2::evict_normal", "L2::evict_first", "L2::evict_last",
                 "L2::64B", "L2::128B", "L2::256B", "unified", "mmio"}
_SPACES = {"global", "shared", "shared::cta", "param", "const", "local"}


class _Machine:
    """Decoded kernel plus the state of the CTA being run."""

    def __init__(self, prog: Program, threads: int):
        self.prog = prog
        self.T = threads
        self.tids = np.arange(threads)
        self.epoch = 0
        self.regs: dict[str, tuple[int, int, str]] = {}  # name -> (index, width, declared type)
        self.R: list[np.ndarray] = []
        self.params: dict[str, tuple[int, str]] = {}
        self.global_space: _Space | None = None
        self.const_space: _Space | None = None
        self.shared_space: _Space | None = None
        self.symbols: dict[str, tuple[str, int]] = {}  # variable -> (space, address)
        self.param_bytes = b""
        for s in _SPECIALS:
            self._new_reg(s, 32, "u32")
        self.written: set[int] = set()
        self.read: dict[int, str] = {}
        self.code: list[_Instr] = []  # decoded by run() once symbols and parameters are placed
        self.weak: _WeakGlobal | None = None  # set (as global_space too) for a concurrent run
        self.traffic: Traffic | None = None  # counted when run(traffic=True)
        self.async_committed = np.zeros(0, np.int64)  # cp.async.commit_group count per register lane
        self.async_copies: list[dict] = []  # issued cp.async copies not yet written (_op_cp)

    # -- registers ---------------------------------------------------------
    def _new_reg(self, name: str, width: int, rtype: str) -> tuple[int, int, str]:
        entry = (len(self.regs), width, rtype)
        self.regs[name] = entry
        return entry

    def reg(self, name: str) -> tuple[int, int, str]:
        name = _SPECIAL_ALIASES.get(name, name)
        if name in self.regs:
            return self.regs[name]
        decl = self.prog.reg_decls.get(name)
        if decl is not None and decl[1] is None:
            return self._new_reg(name, _BITS[decl[0]], decl[0])
        m = re.fullmatch(r"(%[$A-Za-z_]*?)(\d+)", name)
        if m and m.group(1) in self.prog.reg_decls:
            rtype, count = self.prog.reg_decls[m.group(1)]
            if count is not None and int(m.group(2)) < count:
                return self._new_reg(name, _BITS[rtype], rtype)
        raise EmulatorError(f"undeclared register {name}")

    def new_epoch(self) -> None:
        """A barrier (or a new CTA): accesses before it no longer race with accesses after it."""
        self.epoch += 1
        for sp in (self.global_space, self.shared_space):
            if sp is not None:
                sp.epoch = self.epoch

    def alloc_regs(self, n_ctas: int = 1) -> None:
        """Zeroed registers for ``n_ctas`` CTAs: CTA k owns lanes ``k*T .. (k+1)*T`` of every register."""
        n = n_ctas * self.T
        self.R[:] = [np.zeros(n, _STORE[w]) for _, (i, w, _) in sorted(self.regs.items(), key=lambda kv: kv[1][0])]
        self.tids = np.tile(np.arange(self.T), n_ctas)  # lane -> thread index in its CTA
        self.async_committed = np.zeros(n, np.int64)
        self.async_copies = []

    def set_specials(self, ctaid: tuple[int, int, int], grid: tuple[int, int, int], lanes=slice(None)) -> None:
        """The special registers (%tid, %ctaid, ...) of the CTA ``ctaid`` whose lanes are ``lanes``."""
        T = self.T
        tid = np.arange(T, dtype=np.uint32)
        vals = {"%tid.x": tid, "%tid.y": 0, "%tid.z": 0, "%ntid.x": T, "%ntid.y": 1, "%ntid.z": 1,
                "%ctaid.x": ctaid[0], "%ctaid.y": ctaid[1], "%ctaid.z": ctaid[2], "%nctaid.x": grid[0],
                "%nctaid.y": grid[1], "%nctaid.z": grid[2], "%laneid": tid % 32, "%warpid": tid // 32,
                "%nwarpid": (T + 31) // 32}
        for name, v in vals.items():
            self.R[self.regs[name][0]][lanes] = v

    def reset_cta(self, ctaid: tuple[int, int, int], grid: tuple[int, int, int]) -> None:
        """Fresh registers for the next CTA of a sequential run."""
        self.alloc_regs()
        self.set_specials(ctaid, grid)

    # -- operand access ----------------------------------------------------
    def rd(self, tok: str, t: str):
        """A function of the lane index giving operand ``tok`` as values of type ``t``."""
        tok = tok.strip()
        if tok.startswith("%"):
            i, rw, _ = self.reg(tok)
            self.read.setdefault(i, tok)
            R = self.R
            if t == "pred":
                if rw != 1:
                    raise EmulatorError(f"{tok} is not a predicate")
                return lambda idx: R[i][idx]
            if rw == 1:
                raise EmulatorError(f"predicate {tok} used as .{t}")
            tw = _BITS[t]
            vdt = _VIEW[t]
            if rw == tw:
                if np.dtype(vdt) == np.dtype(_STORE[rw]):
                    return lambda idx: R[i][idx]
                return lambda idx: R[i][idx].view(vdt)
            if _kind(t) == "f":
                raise EmulatorError(f"register {tok} ({rw} bits) used as .{t}")
            st = _STORE[tw]
            if rw > tw:
                return lambda idx: R[i][idx].astype(st).view(vdt)
            if _kind(t) == "s":
                sw = _SIGNED[rw]
                return lambda idx: R[i][idx].view(sw).astype(vdt)
            return lambda idx: R[i][idx].astype(vdt)
        if tok in self.symbols:
            v = _parse_imm(str(self.symbols[tok][1]), t)
            return lambda idx: v
        if tok.startswith("{"):
            raise EmulatorError(f"vector operand {tok} not allowed here")
        v = _parse_imm(tok, t)
        return lambda idx: v

    def wr(self, tok: str, t: str):
        """A function ``(idx, values)`` storing values of type ``t`` into register ``tok``."""
        tok = tok.strip()
        if not tok.startswith("%"):
            raise EmulatorError(f"destination {tok!r} is not a register")
        if tok in self.regs and self.regs[tok][0] < len(_SPECIALS):
            raise EmulatorError(f"cannot write the special register {tok}")
        i, rw, _ = self.reg(tok)
        self.written.add(i)
        R = self.R
        if t == "pred":
            if rw != 1:
                raise EmulatorError(f"{tok} is not a predicate")

            def wp(idx, v):
                R[i][idx] = v
            return wp
        if rw == 1:
            raise EmulatorError(f"predicate {tok} written as .{t}")
        tw = _BITS[t]
        vdt = _VIEW[t]
        st = _STORE[tw]
        if rw == tw:
            def w(idx, v):
                R[i][idx] = np.asarray(v).astype(vdt, copy=False).view(st)
            return w
        if rw < tw:
            raise EmulatorError(f"register {tok} ({rw} bits) too narrow for .{t}")
        rst = _STORE[rw]
        if _kind(t) == "s":
            sw = _SIGNED[rw]

            def ws(idx, v):
                R[i][idx] = np.asarray(v).astype(vdt, copy=False).astype(sw).view(rst)
            return ws

        def wz(idx, v):
            R[i][idx] = np.asarray(v).astype(vdt, copy=False).view(st).astype(rst)
        return wz

    def vec(self, tok: str) -> list[str]:
        tok = tok.strip()
        if not (tok.startswith("{") and tok.endswith("}")):
            raise EmulatorError(f"expected a vector operand, got {tok!r}")
        return [x.strip() for x in tok[1:-1].split(",")]

    def addr(self, tok: str):
        """``[reg+off]`` / ``[symbol+off]``: (function of idx giving int64 addresses, symbol space or None)."""
        m = re.fullmatch(r"\[\s*([%$\w.]+)\s*(?:([+-])\s*(-?(?:0[xX][0-9a-fA-F]+|\d+)))?\s*\]", tok.strip())
        if not m:
            raise EmulatorError(f"cannot parse the address {tok!r}")
        base, sign, off = m.groups()
        off = int(off, 0) if off else 0
        if sign == "-":
            off = -off
        if base.startswith("%"):
            i, rw, _ = self.reg(base)
            self.read.setdefault(i, base)
            R = self.R
            if rw not in (32, 64):
                raise EmulatorError(f"address register {base} has {rw} bits")
            return (lambda idx: R[i][idx].astype(np.int64) + off), None
        if base in self.params:
            poff, _ = self.params[base]
            return (lambda idx: np.int64(poff + off)), "param"
        if base in self.symbols:
            space, a = self.symbols[base]
            return (lambda idx: np.int64(a + off)), space
        if re.fullmatch(r"-?\d+|0[xX][0-9a-fA-F]+", base):
            v = int(base, 0) + off
            return (lambda idx: np.int64(v)), None
        raise EmulatorError(f"unknown symbol {base} in address")

    # -- memory routing ----------------------------------------------------
    def space_for(self, space: str | None, where: str) -> _Space | None:
        if space in ("global",):
            return self.global_space
        if space in ("shared", "shared::cta"):
            return self.shared_space
        if space == "const":
            return self.const_space
        if space is None:
            return None
        raise EmulatorError(f"{where}: unsupported state space .{space}")

    def mem_load(self, space: str | None, addr, nbytes: int, where: str, lanes=None, order: str = "weak"):
        sp = self.space_for(space, where)
        if sp is not None:
            return sp.load(addr, nbytes, where, lanes, order)
        return self._generic(addr, nbytes, where, None, lanes, order)

    def mem_store(self, space: str | None, addr, nbytes: int, bits, where: str, lanes=None,
                  order: str = "weak") -> None:
        sp = self.space_for(space, where)
        if sp is not None:
            sp.store(addr, nbytes, bits, where, lanes, order)
        else:
            self._generic(addr, nbytes, where, bits, lanes, order)

    def count_access(self, space: str | None, addr, nbytes: int, idx, load: bool, where: str) -> None:
        """Add one ``ld``/``st`` of ``nbytes`` per lane by the threads ``idx`` to :attr:`traffic`
        (global: ``.global`` or a generic address outside the shared window; shared)."""
        lanes = self.tids[idx]
        a = np.broadcast_to(np.asarray(addr, np.int64), np.shape(lanes))
        if space in ("shared", "shared::cta"):
            self.traffic.add_shared(lanes, a, nbytes, load, where=where)
        elif space == "global":
            self.traffic.add_global(lanes, a, nbytes, load, where)
        elif space is None:
            shared = (a >= SHARED_WINDOW) & (a < SHARED_WINDOW + (1 << 32))
            if shared.any():
                self.traffic.add_shared(lanes[shared], a[shared] - SHARED_WINDOW, nbytes, load, where=where)
            if (~shared).any():
                self.traffic.add_global(lanes[~shared], a[~shared], nbytes, load, where)

    def _generic(self, addr, nbytes, where, bits, lanes, order="weak"):
        """A generic-address access: shared window, const space, or global."""
        a = np.asarray(addr, np.int64)
        in_shared = (a >= SHARED_WINDOW) & (a < SHARED_WINDOW + (1 << 32))
        in_const = self.const_space.contains(a)
        if not in_shared.any() and not in_const.any():
            sp = self.global_space
            return (sp.load(a, nbytes, where, lanes, order) if bits is None
                    else sp.store(a, nbytes, bits, where, lanes, order))
        if lanes is not None:
            a = np.broadcast_to(a, np.shape(lanes))
            in_shared = np.broadcast_to(in_shared, a.shape)
            in_const = np.broadcast_to(in_const, a.shape)
        if np.ndim(a) == 0:
            sp, aa = ((self.shared_space, a - SHARED_WINDOW) if in_shared else (self.const_space, a))
            return sp.load(aa, nbytes, where) if bits is None else sp.store(aa, nbytes, bits, where)
        out = np.zeros(a.shape, _STORE[8 * nbytes]) if bits is None else None
        bits_b = None if bits is None else np.broadcast_to(np.asarray(bits), a.shape)
        for mask, sp, shift in ((in_shared, self.shared_space, SHARED_WINDOW), (in_const, self.const_space, 0),
                                (~in_shared & ~in_const, self.global_space, 0)):
            if mask.any():
                ln = None if lanes is None else np.asarray(lanes)[mask]
                if bits is None:
                    out[mask] = sp.load(a[mask] - shift, nbytes, where, ln, order)
                else:
                    sp.store(a[mask] - shift, nbytes, bits_b[mask], where, ln, order)
        return out

    # -- decoding ----------------------------------------------------------
    def _decode(self, s: _Stmt) -> _Instr:
        where = f"line {s.line}: `{s.text}`"
        guard = None
        if s.guard is not None:
            gi, gw, _ = self.reg(s.guard)
            if gw != 1:
                raise EmulatorError(f"{where}: guard {s.guard} is not a predicate")
            self.read.setdefault(gi, s.guard)
            guard = gi
        try:
            kind, fn, target = "op", None, -1
            op = s.opcode
            if op == "bra":
                label = s.operands[0]
                if label not in self.prog.labels:
                    raise EmulatorError(f"unknown label {label}")
                kind, target = "bra", self.prog.labels[label]
            elif op in ("ret", "exit"):
                kind = "ret"
            elif op in ("bar", "barrier"):
                if s.mods[-1:] not in (["sync"], ["aligned"]) or len(s.operands) != 1:
                    raise EmulatorError("only `bar.sync id` (whole CTA) is supported")
                kind = "bar"
            elif op == "mma":
                kind, fn = "warp", self._mma(s)
            elif op == "shfl":
                kind, fn = "warp", self._shfl(s)
            elif op == "ldmatrix":
                kind, fn = "warp", self._ldmatrix(s)
            else:
                handler = getattr(self, "_op_" + op, None)
                if handler is None:
                    raise EmulatorError(f"unsupported instruction {op}")
                fn = handler(s, where)
        except EmulatorError as e:
            message = f"{where}: {e}"

            def unsupported(idx, message=message):
                raise EmulatorError(message)
            return _Instr(unsupported, "op", guard, s.guard_neg, -1, where, ".".join([s.opcode] + s.mods))
        return _Instr(fn, kind, guard, s.guard_neg, target, where, ".".join([s.opcode] + s.mods))

    # -- generic shapes ----------------------------------------------------
    @staticmethod
    def _type(s: _Stmt) -> str:
        for m in reversed(s.mods):
            if m in _VIEW:
                return m
        raise EmulatorError("no type suffix")

    def _unary(self, s, t, f, dt=None):
        d, a = s.operands
        ra, w = self.rd(a, t), self.wr(d, dt or t)
        return lambda idx: w(idx, f(ra(idx)))

    def _binary(self, s, t, f, tb=None):
        d, a, b = s.operands
        ra, rb, w = self.rd(a, t), self.rd(b, tb or t), self.wr(d, t)
        return lambda idx: w(idx, f(ra(idx), rb(idx)))

    def _ternary(self, s, t, f, tc=None):
        d, a, b, c = s.operands
        ra, rb, rc, w = self.rd(a, t), self.rd(b, t), self.rd(c, tc or t), self.wr(d, tc or t)
        return lambda idx: w(idx, f(ra(idx), rb(idx), rc(idx)))

    def _float_rounded(self, s, t, f64fn, f32fn, exact=None):
        """A float op: rounding modifier, .ftz, .sat handled around the float64/float32 function.

        Round to nearest uses ``f32fn`` on float32 (or ``f64fn`` on float64
        and one rounding); the directed roundings compute ``exact`` on
        :class:`~fractions.Fraction` values lane by lane and round that.
        """
        mods = set(s.mods)
        rnd = next((m for m in ("rn", "rz", "rm", "rp") if m in mods), "rn")
        ftz = "ftz" in mods and t == "f32"
        sat = "sat" in mods
        vdt = _VIEW[t]
        if t not in ("f64", "f32", "f16", "bf16"):
            raise EmulatorError(f"unsupported float type .{t}")
        if rnd != "rn":
            if exact is None:
                raise EmulatorError(f".{rnd} is not supported for {s.opcode}")

            def g(*args):
                return _directed(exact, f64fn, args, vdt, rnd)
        elif t == "f64":
            def g(*args):
                return f64fn(*[np.asarray(x, np.float64) for x in args])
        elif t == "f32" and f32fn is not None:
            def g(*args):
                return f32fn(*[np.asarray(x, np.float32) for x in args])
        else:
            def g(*args):
                return _round_float(f64fn(*[np.asarray(x).astype(np.float64) for x in args]), vdt, rnd)
        if ftz:
            g0 = g

            def g(*args):
                return _ftz32(g0(*[_ftz32(x) for x in args]))
        if sat:
            g1 = g

            def g(*args):
                return _sat01(np.asarray(g1(*args), vdt))
        return g

    # -- integer and float arithmetic --------------------------------------
    def _op_add(self, s, where):
        t = self._type(s)
        if _kind(t) == "f":
            return self._binary(s, t, self._float_rounded(s, t, np.add, np.add, operator.add))
        if "sat" in s.mods:
            if t != "s32":
                raise EmulatorError("add.sat needs .s32")
            return self._binary(s, t, lambda a, b: np.clip(np.asarray(a, np.int64) + b, -2**31, 2**31 - 1))
        return self._binary(s, t, np.add)

    def _op_sub(self, s, where):
        t = self._type(s)
        if _kind(t) == "f":
            return self._binary(s, t, self._float_rounded(s, t, np.subtract, np.subtract, operator.sub))
        if "sat" in s.mods:
            if t != "s32":
                raise EmulatorError("sub.sat needs .s32")
            return self._binary(s, t, lambda a, b: np.clip(np.asarray(a, np.int64) - b, -2**31, 2**31 - 1))
        return self._binary(s, t, np.subtract)

    def _op_mul(self, s, where):
        t = self._type(s)
        if _kind(t) == "f":
            return self._binary(s, t, self._float_rounded(s, t, np.multiply, np.multiply, operator.mul))
        if "wide" in s.mods:
            wt = {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64"}[t]
            d, a, b = s.operands
            ra, rb, w = self.rd(a, t), self.rd(b, t), self.wr(d, wt)
            wdt = _VIEW[wt]
            return lambda idx: w(idx, np.asarray(ra(idx)).astype(wdt) * np.asarray(rb(idx)).astype(wdt))
        if "hi" in s.mods:
            return self._binary(s, t, lambda a, b: _mul_hi(a, b, t))
        if "lo" in s.mods:
            return self._binary(s, t, np.multiply)
        raise EmulatorError("integer mul needs .lo, .hi or .wide")

    def _op_mad(self, s, where):
        t = self._type(s)
        if _kind(t) == "f":
            return self._op_fma(s, where)
        if "wide" in s.mods:
            wt = {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64"}[t]
            d, a, b, c = s.operands
            ra, rb, rc, w = self.rd(a, t), self.rd(b, t), self.rd(c, wt), self.wr(d, wt)
            wdt = _VIEW[wt]
            return lambda idx: w(idx, np.asarray(ra(idx)).astype(wdt) * np.asarray(rb(idx)).astype(wdt) + rc(idx))
        if "hi" in s.mods:
            return self._ternary(s, t, lambda a, b, c: _mul_hi(a, b, t) + c)
        if "lo" in s.mods:
            return self._ternary(s, t, lambda a, b, c: a * b + c)
        raise EmulatorError("integer mad needs .lo, .hi or .wide")

    def _op_fma(self, s, where):
        t = self._type(s)
        if t == "f64":
            def f64(a, b, c):
                ld = np.longdouble
                return (np.asarray(a, ld) * np.asarray(b, ld) + np.asarray(c, ld)).astype(np.float64)
            return self._ternary(s, t, self._float_rounded(s, t, f64, None, _exact_fma))
        # f32/f16: the product is exact in float64, the sum rounds once there and once more to the type.
        return self._ternary(s, t, self._float_rounded(s, t, lambda a, b, c: a * b + c, None, _exact_fma))

    def _op_div(self, s, where):
        t = self._type(s)
        if _kind(t) == "f":
            # div.approx / div.full are within a few ulp of the correctly rounded quotient used here.
            return self._binary(s, t, self._float_rounded(s, t, np.divide, np.divide, operator.truediv))
        signed = _kind(t) == "s"
        return self._binary(s, t, lambda a, b: _idivmod(a, b, signed, _VIEW[t])[0])

    def _op_rem(self, s, where):
        t = self._type(s)
        signed = _kind(t) == "s"
        return self._binary(s, t, lambda a, b: _idivmod(a, b, signed, _VIEW[t])[1])

    def _op_abs(self, s, where):
        t = self._type(s)
        if _kind(t) == "f":
            w = _BITS[t]
            mask = _STORE[w]((1 << (w - 1)) - 1)
            st = _STORE[w]
            f = (lambda a: _ftz32(a).view(st) & mask) if "ftz" in s.mods else (lambda a: np.asarray(a).view(st) & mask)
            return self._unary(s, t, lambda a: np.asarray(f(a), st).view(_VIEW[t]))
        return self._unary(s, t, np.abs)

    def _op_neg(self, s, where):
        t = self._type(s)
        if _kind(t) == "f":
            w = _BITS[t]
            st = _STORE[w]
            sign = st(1 << (w - 1))
            pre = _ftz32 if "ftz" in s.mods else np.asarray
            return self._unary(s, t, lambda a: (np.asarray(pre(a)).view(st) ^ sign).view(_VIEW[t]))
        return self._unary(s, t, np.negative)

    def _op_min(self, s, where):
        return self._minmax(s, np.fmin, np.minimum)

    def _op_max(self, s, where):
        return self._minmax(s, np.fmax, np.maximum)

    def _minmax(self, s, fnum, fnan):
        t = self._type(s)
        if _kind(t) == "f":
            f = fnan if "NaN" in s.mods else fnum
            if "ftz" in s.mods:
                return self._binary(s, t, lambda a, b: _ftz32(f(_ftz32(a), _ftz32(b))))
            return self._binary(s, t, f)
        return self._binary(s, t, fnan)

    def _op_copysign(self, s, where):
        # PTX: copy the sign bit of a into the value of b (d = |b| with the sign of a).
        t = self._type(s)
        w = _BITS[t]
        st = _STORE[w]
        sign = st(1 << (w - 1))

        def f(a, b):
            return ((np.asarray(a).view(st) & sign) | (np.asarray(b).view(st) & ~sign)).view(_VIEW[t])
        return self._binary(s, t, f)

    def _transcendental(self, s, f64fn):
        t = self._type(s)
        if t not in ("f32", "f64"):
            raise EmulatorError(f"unsupported type .{t}")
        ftz = "ftz" in s.mods and t == "f32"
        vdt = _VIEW[t]

        def f(a):
            x = _ftz32(a) if ftz else a
            r = f64fn(np.asarray(x, np.float64)).astype(vdt)
            return _ftz32(r) if ftz else r
        return self._unary(s, t, f)

    def _op_ex2(self, s, where):
        return self._transcendental(s, np.exp2)

    def _op_lg2(self, s, where):
        return self._transcendental(s, np.log2)

    def _op_sin(self, s, where):
        return self._transcendental(s, np.sin)

    def _op_cos(self, s, where):
        return self._transcendental(s, np.cos)

    def _op_tanh(self, s, where):
        return self._transcendental(s, np.tanh)

    def _op_rsqrt(self, s, where):
        return self._transcendental(s, lambda x: 1.0 / np.sqrt(x))

    def _op_sqrt(self, s, where):
        t = self._type(s)
        if "approx" in s.mods:
            return self._transcendental(s, np.sqrt)
        return self._unary(s, t, self._float_rounded(s, t, np.sqrt, np.sqrt))

    def _op_rcp(self, s, where):
        t = self._type(s)
        if "approx" in s.mods:
            return self._transcendental(s, lambda x: 1.0 / x)
        one = _VIEW[t](1)
        return self._unary(s, t, self._float_rounded(s, t, lambda x: 1.0 / x, lambda x: one / x, lambda x: 1 / x))

    # -- bits and logic ----------------------------------------------------
    def _logic(self, s, f):
        t = self._type(s)
        if _kind(t) not in "bp":
            raise EmulatorError(f"logic op on .{t}")
        return self._binary(s, t, f)

    def _op_and(self, s, where):
        return self._logic(s, np.bitwise_and)

    def _op_or(self, s, where):
        return self._logic(s, np.bitwise_or)

    def _op_xor(self, s, where):
        return self._logic(s, np.bitwise_xor)

    def _op_not(self, s, where):
        t = self._type(s)
        return self._unary(s, t, np.logical_not if t == "pred" else np.invert)

    def _op_cnot(self, s, where):
        t = self._type(s)
        return self._unary(s, t, lambda a: (np.asarray(a) == 0).astype(_VIEW[t]))

    def _op_shl(self, s, where):
        t = self._type(s)
        w = _BITS[t]
        vdt = _VIEW[t]

        def f(a, b):
            b = np.asarray(b, np.uint32)
            r = np.left_shift(np.asarray(a, vdt), np.minimum(b, w - 1).astype(vdt))
            return np.where(b >= w, vdt(0), r).astype(vdt)
        return self._binary(s, t, f, tb="u32")

    def _op_shr(self, s, where):
        t = self._type(s)
        w = _BITS[t]
        vdt = _VIEW[t]
        signed = _kind(t) == "s"

        def f(a, b):
            b = np.asarray(b, np.uint32)
            r = np.right_shift(np.asarray(a, vdt), np.minimum(b, w - 1).astype(vdt))
            if signed:  # shifting by >= width fills with the sign: same as shifting by width-1
                return r.astype(vdt)
            return np.where(b >= w, vdt(0), r).astype(vdt)
        return self._binary(s, t, f, tb="u32")

    # -- compare and select ------------------------------------------------
    def _op_setp(self, s, where):
        t = self._type(s)
        cmp = s.mods[0]
        boolop = next((m for m in s.mods[1:] if m in ("and", "or", "xor")), None)
        ftz = "ftz" in s.mods
        k = _kind(t)
        if k == "f":
            base = cmp[:-1] if cmp.endswith("u") and cmp[:-1] in _CMP_FLOAT else cmp
            if cmp not in ("num", "nan") and base not in _CMP_FLOAT:
                raise EmulatorError(f"unsupported float compare .{cmp}")
            unordered = cmp != base

            def compare(a, b):
                a = np.asarray(a).astype(np.float32 if t != "f64" else np.float64)
                b = np.asarray(b).astype(a.dtype)
                if ftz:
                    a, b = _ftz32(a), _ftz32(b)
                nan = np.isnan(a) | np.isnan(b)
                if cmp == "num":
                    return ~nan
                if cmp == "nan":
                    return nan
                r = _CMP_FLOAT[base](a, b)
                return (r | nan) if unordered else (r & ~nan)
        else:
            if cmp not in _CMP_INT:
                raise EmulatorError(f"unsupported integer compare .{cmp}")
            if cmp in ("lo", "ls", "hi", "hs") and k == "s":
                raise EmulatorError(f".{cmp} needs an unsigned type")
            if k == "b" and cmp not in ("eq", "ne"):
                raise EmulatorError(f".{cmp} on an untyped .{t} compare")
            compare = _CMP_INT[cmp]
        ops = s.operands
        dests = [x.strip() for x in ops[0].split("|")]
        ra, rb = self.rd(ops[1], t), self.rd(ops[2], t)
        wp = self.wr(dests[0], "pred")
        wq = self.wr(dests[1], "pred") if len(dests) > 1 else None
        if boolop is None and len(ops) != 3:
            raise EmulatorError("setp with a fourth operand needs .and/.or/.xor")
        if boolop is not None:
            ctok = ops[3].strip()
            cneg = ctok.startswith("!")
            rc = self.rd(ctok.lstrip("!"), "pred")
            combine = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[boolop]

        def fn(idx):
            r = np.asarray(compare(ra(idx), rb(idx)), bool)
            if boolop is None:
                p, q = r, ~r
            else:
                c = np.asarray(rc(idx), bool)
                if cneg:
                    c = ~c
                p, q = combine(r, c), combine(~r, c)
            wp(idx, p)
            if wq is not None:
                wq(idx, q)
        return fn

    def _op_prmt(self, s, where):
        """``prmt.b32 d, a, b, c`` in the default mode (PTX ISA "prmt"): byte ``i`` of ``d`` is byte
        ``c[4i+2:4i]`` of the eight bytes ``{b, a}`` (``a`` bytes 0-3), sign-replicated where
        ``c[4i+3]`` is set."""
        if s.mods != ["b32"]:
            raise EmulatorError("only prmt.b32 (default mode) is supported")
        d, a, b, c = s.operands
        ra, rb, rc, w = self.rd(a, "b32"), self.rd(b, "b32"), self.rd(c, "b32"), self.wr(d, "b32")

        def f(idx):
            x = np.asarray(ra(idx), np.uint64) | (np.asarray(rb(idx), np.uint64) << np.uint64(32))
            sel = np.asarray(rc(idx), np.uint64)
            out = np.zeros(np.shape(x), np.uint64)
            for i in range(4):
                nib = (sel >> np.uint64(4 * i)) & np.uint64(0xF)
                byte = (x >> ((nib & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
                byte = np.where(nib & np.uint64(8), np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0)),
                                byte)
                out |= byte << np.uint64(8 * i)
            return out.astype(np.uint32)
        return lambda idx: w(idx, f(idx))

    def _op_selp(self, s, where):
        t = self._type(s)
        d, a, b, c = s.operands
        ra, rb, rc, w = self.rd(a, t), self.rd(b, t), self.rd(c, "pred"), self.wr(d, t)
        return lambda idx: w(idx, np.where(rc(idx), ra(idx), rb(idx)))

    # -- moves and conversions ---------------------------------------------
    def _op_mov(self, s, where):
        t = self._type(s)
        d, a = s.operands
        if d.strip().startswith("{"):  # unpack: mov.b32 {lo, hi}, a
            parts = self.vec(d)
            w = _BITS[t] // len(parts)
            ra = self.rd(a, t)
            ws = [self.wr(p, f"b{w}") if p != "_" else None for p in parts]
            st = _STORE[w]

            def unpack(idx):
                v = np.asarray(ra(idx))
                for k, wk in enumerate(ws):
                    if wk is not None:
                        wk(idx, ((v >> v.dtype.type(k * w)) & v.dtype.type((1 << w) - 1)).astype(st))
            return unpack
        if a.strip().startswith("{"):  # pack: mov.b32 d, {lo, hi}
            parts = self.vec(a)
            w = _BITS[t] // len(parts)
            rs = [self.rd(p, f"b{w}") for p in parts]
            wd = self.wr(d, t)
            wide = _STORE[_BITS[t]]

            def pack(idx):
                acc = None
                for k, r in enumerate(rs):
                    v = np.asarray(r(idx)).astype(wide) << wide(k * w)
                    acc = v if acc is None else acc | v
                wd(idx, acc)
            return pack
        if a.strip() in self.symbols:
            space, addr = self.symbols[a.strip()]
            if space == "local":
                raise EmulatorError("addresses of .local variables are not supported")
            v = _VIEW[t](addr)
            wd = self.wr(d, t)
            return lambda idx: wd(idx, v)
        return self._unary(s, t, lambda x: x)

    def _op_cvta(self, s, where):
        t = self._type(s)
        to = "to" in s.mods
        space = next((m for m in s.mods if m in ("global", "shared", "const", "local", "param")), None)
        if space in ("global", "const"):
            return self._unary(s, t, lambda x: x)
        if space == "shared":
            win = _VIEW[t](SHARED_WINDOW) if t.endswith("64") else None
            if win is None:
                raise EmulatorError("cvta.shared needs a 64-bit type")
            return self._unary(s, t, (lambda x: x - win) if to else (lambda x: x + win))
        raise EmulatorError(f"cvta for .{space} is not supported")

    def _op_cvt(self, s, where):
        mods = [m for m in s.mods]
        types = [m for m in mods if m in _VIEW]
        flags = {m for m in mods if m not in _VIEW}
        if len(types) != 2:
            raise EmulatorError("cvt needs a destination and a source type")
        dt, at = types
        rnd = next((m for m in ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi") if m in flags), None)
        unknown = flags - {"rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi", "ftz", "sat", "satfinite",
                           "relu"}
        if unknown:
            raise EmulatorError(f"unsupported cvt modifier(s) {sorted(unknown)}")
        ftz = "ftz" in flags
        sat = "sat" in flags
        kd, ka = _kind(dt), _kind(at)
        ops = s.operands
        # Packed conversions of two f32 values: a goes to the upper half, b to the lower.
        if dt in ("e4m3x2", "e5m2x2", "f16x2", "bf16x2"):
            if at != "f32" or len(ops) != 3:
                raise EmulatorError(f"unsupported packed cvt .{dt}.{at}")
            ra, rb, wd = self.rd(ops[1], "f32"), self.rd(ops[2], "f32"), self.wr(ops[0], dt)
            relu = "relu" in flags
            satf = "satfinite" in flags
            if dt in ("e4m3x2", "e5m2x2"):
                if rnd != "rn" or not satf:
                    raise EmulatorError("fp8x2 cvt needs .rn.satfinite")
                fmt = dt[:4]

                def f8(idx):
                    hi = _to_f8(ra(idx), fmt, satf, relu).astype(np.uint16)
                    lo = _to_f8(rb(idx), fmt, satf, relu).astype(np.uint16)
                    wd(idx, (hi << np.uint16(8)) | lo)
                return f8
            half = np.float16 if dt == "f16x2" else ml_dtypes.bfloat16

            def h2(idx):
                vals = []
                for r in (ra, rb):
                    x = np.asarray(r(idx), np.float32)
                    if relu:
                        x = np.where(np.isnan(x), x, np.maximum(x, np.float32(0)))
                    y = _round_float(x, half, rnd or "rn")
                    if satf:
                        m = _F16_MAX[dt[:-2]]
                        y = np.where(np.isnan(x), y, np.clip(y.astype(np.float32), -m, m).astype(half))
                    vals.append(np.asarray(y, half).view(np.uint16).astype(np.uint32))
                wd(idx, (vals[0] << np.uint32(16)) | vals[1])
            return h2
        if len(ops) != 2:
            raise EmulatorError("cvt takes two operands here")
        d, a = ops
        if dt == "tf32":
            if at != "f32" or rnd != "rna":
                raise EmulatorError("only cvt.rna.tf32.f32 is supported")
            ra, wd = self.rd(a, "u32"), self.wr(d, "u32")

            def tf32(idx):
                u = np.asarray(ra(idx), np.uint32)
                special = (u & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
                rounded = (u + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
                wd(idx, np.where(special, u, rounded))
            return tf32
        ra, wd = self.rd(a, at), self.wr(d, dt)
        if ka in "sub" and kd in "sub":
            if rnd is not None:
                raise EmulatorError("rounding modifier on an integer cvt")
            if sat:
                dst = np.iinfo(_VIEW[dt])

                def isat(x):
                    # Clamp in the source type, where the bounds that matter are representable.
                    x = np.asarray(x)
                    src = np.iinfo(x.dtype)
                    if dst.min > src.min:
                        x = np.maximum(x, x.dtype.type(dst.min))
                    if dst.max < src.max:
                        x = np.minimum(x, x.dtype.type(dst.max))
                    return x.astype(_VIEW[dt])
                return lambda idx: wd(idx, isat(ra(idx)))
            vdt = _VIEW[dt]
            return lambda idx: wd(idx, np.asarray(ra(idx)).astype(vdt))
        if ka == "f" and kd in "su":
            pre = _ftz32 if (ftz and at == "f32") else (lambda x: x)
            return lambda idx: wd(idx, _float_to_int(pre(ra(idx)), dt, rnd))
        if ka in "su" and kd == "f":
            mode = rnd or "rn"
            vdt = _VIEW[dt]
            if mode not in ("rn", "rz", "rm", "rp"):
                raise EmulatorError(f"integer-to-float cvt with .{mode}")
            if dt == "f64" and mode != "rn":
                raise EmulatorError("directed rounding to f64 is not supported")
            if mode == "rn":
                return lambda idx: wd(idx, np.asarray(ra(idx)).astype(vdt))
            return lambda idx: wd(idx, _round_float(np.asarray(ra(idx)).astype(np.float64), vdt, mode))
        if ka == "f" and kd == "f":
            vdt = _VIEW[dt]
            ftz_in = ftz and at == "f32"
            ftz_out = ftz and dt == "f32"
            if rnd in ("rni", "rzi", "rmi", "rpi"):
                if dt != at:
                    raise EmulatorError("integer rounding between different float types")
                f = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rnd]
                conv = lambda x: f(np.asarray(x))
            elif _BITS[dt] > _BITS[at] or dt == at:
                if rnd not in (None,) and dt != at:
                    raise EmulatorError("rounding modifier on a widening float cvt")
                conv = lambda x: np.asarray(x).astype(vdt)
            else:
                if rnd is None:
                    raise EmulatorError("narrowing float cvt needs a rounding modifier")
                mode = rnd
                if at == "f32" and dt in ("f16", "bf16") and mode == "rn":
                    conv = lambda x: np.asarray(x, np.float32).astype(vdt)
                else:
                    conv = lambda x: _round_float(np.asarray(x).astype(np.float64), vdt, mode)
                if "satfinite" in flags and dt in _F16_MAX:
                    m = _F16_MAX[dt]
                    conv0 = conv
                    conv = lambda x: np.where(np.isnan(np.asarray(x, np.float64)), conv0(x),
                                              np.clip(conv0(x).astype(np.float64), -m, m).astype(vdt))
            if sat:
                conv1 = conv
                conv = lambda x: _sat01(np.asarray(conv1(x), vdt))
            if ftz_in or ftz_out:
                conv2 = conv
                conv = lambda x: (_ftz32 if ftz_out else np.asarray)(conv2(_ftz32(x) if ftz_in else x))
            return lambda idx: wd(idx, conv(ra(idx)))
        raise EmulatorError(f"unsupported cvt .{dt}.{at}")

    # -- memory ------------------------------------------------------------
    def _ldst_shape(self, s):
        space, vec, t = None, 1, None
        for m in s.mods:
            if m in _SPACES:
                space = m
            elif m in ("v2", "v4", "v8"):
                vec = int(m[1:])
            elif m in _VIEW:
                t = m
            elif m in _IGNORED_LDST:
                pass
            else:
                raise EmulatorError(f"unsupported {s.opcode} qualifier .{m}")
        if t is None:
            raise EmulatorError("no type")
        return space, vec, t

    @staticmethod
    def _order(s) -> str:
        """How a concurrent run orders an ld/st: ``release``, ``strong`` (scoped/volatile) or ``weak``."""
        if "release" in s.mods:
            return "release"
        if any(m in ("relaxed", "acquire", "volatile", "mmio") for m in s.mods):
            return "strong"
        return "weak"

    def _op_ld(self, s, where):
        space, vec, t = self._ldst_shape(s)
        order = self._order(s)
        d, a = s.operands
        get_addr, sym_space = self.addr(a)
        if space is None and sym_space not in (None,):
            space = sym_space
        if space == "local":
            raise EmulatorError("ld.local is not supported")
        nb = _BITS[t] // 8
        dests = self.vec(d) if vec > 1 else [d]
        if len(dests) != vec:
            raise EmulatorError("vector width mismatch")
        ws = [self.wr(x, t) for x in dests]
        vdt = _VIEW[t]
        if space == "param":
            def ldp(idx):
                off = int(get_addr(idx))
                raw = self.param_bytes[off:off + nb]
                if len(raw) != nb or off % nb:
                    raise EmulatorError(f"{where}: bad .param access at offset {off}")
                val = np.frombuffer(raw, _STORE[8 * nb])[0].view(vdt)
                ws[0](idx, val)
            if vec > 1:
                raise EmulatorError("vector ld.param is not supported")
            return ldp

        def ld(idx):
            base = get_addr(idx)
            if vec > 1 and np.any(np.asarray(base) % (nb * vec)):
                raise EmulatorError(f"{where}: misaligned vector access")
            if self.traffic is not None:
                self.count_access(space, base, nb * vec, idx, True, where)
            for k, w in enumerate(ws):
                w(idx, np.asarray(self.mem_load(space, base + k * nb, nb, where, self.tids[idx], order)).view(vdt))
        return ld

    def _op_st(self, s, where):
        space, vec, t = self._ldst_shape(s)
        order = self._order(s)
        a, v = s.operands
        get_addr, sym_space = self.addr(a)
        if space is None and sym_space is not None:
            space = sym_space
        if space in ("local", "param"):
            raise EmulatorError(f"st.{space} is not supported")
        nb = _BITS[t] // 8
        srcs = self.vec(v) if vec > 1 else [v]
        if len(srcs) != vec:
            raise EmulatorError("vector width mismatch")
        rs = [self.rd(x, t) for x in srcs]
        st = _STORE[8 * nb]

        def store(idx):
            base = get_addr(idx)
            if vec > 1 and np.any(np.asarray(base) % (nb * vec)):
                raise EmulatorError(f"{where}: misaligned vector access")
            if self.traffic is not None:
                self.count_access(space, base, nb * vec, idx, False, where)
            for k, r in enumerate(rs):
                self.mem_store(space, base + k * nb, nb, np.asarray(r(idx)).view(st), where, self.tids[idx], order)
        return store

    def _atomic(self, s, where, returns: bool):
        space, op, t = None, None, None
        release = "release" in s.mods or "acq_rel" in s.mods
        for m in s.mods:
            if m in ("global", "shared", "shared::cta"):
                space = m
            elif m in ("add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec"):
                op = m
            elif m in _VIEW:
                t = m
            elif m in ("relaxed", "acquire", "release", "acq_rel", "sem", "cta", "gpu", "sys", "noftz"):
                pass
            else:
                raise EmulatorError(f"unsupported {s.opcode} qualifier .{m}")
        if op is None or t is None:
            raise EmulatorError(f"{s.opcode} needs an operation and a type")
        ops = list(s.operands)
        d = ops.pop(0) if returns else None
        get_addr, sym_space = self.addr(ops[0])
        space = space or sym_space
        rb = self.rd(ops[1], t)
        rc = self.rd(ops[2], t) if op == "cas" else None
        if (op == "cas") != (len(ops) == 3):
            raise EmulatorError("operand count")
        wd = self.wr(d, t) if returns else None
        nb = _BITS[t] // 8
        vdt = _VIEW[t]
        st = _STORE[8 * nb]
        k = _kind(t)
        if op in ("and", "or", "xor") and k != "b":
            raise EmulatorError(f"atomic .{op} needs a .b type")
        if op == "add" and t not in ("u32", "s32", "u64", "f32", "f64", "f16", "bf16"):
            raise EmulatorError(f"atomic add on .{t}")

        def apply(old, b, c):
            if op == "add":
                return vdt(old + b)
            if op == "min":
                return np.fmin(old, b) if k == "f" else min(old, b)
            if op == "max":
                return np.fmax(old, b) if k == "f" else max(old, b)
            if op == "exch":
                return b
            if op == "cas":
                return c if old == b else old
            if op == "and":
                return old & b
            if op == "or":
                return old | b
            if op == "xor":
                return old ^ b
            if op == "inc":
                return vdt(0) if old >= b else vdt(old + vdt(1))
            if op == "dec":
                return b if (old == 0 or old > b) else vdt(old - vdt(1))
            raise AssertionError(op)

        def fn(idx):
            lanes = self.tids[idx]
            n = len(lanes)
            addrs = np.broadcast_to(np.asarray(get_addr(idx), np.int64), (n,))
            bs = np.broadcast_to(np.asarray(rb(idx), vdt), (n,))
            cs = np.broadcast_to(np.asarray(rc(idx), vdt), (n,)) if rc is not None else bs
            olds = np.empty(n, vdt)
            if self.weak is not None and space not in ("shared", "shared::cta"):
                self.weak.atomic(addrs, nb, release, where)
            for j in range(n):  # one lane at a time, in thread order
                old = np.asarray(self.mem_load(space, addrs[j], nb, where, order="atomic")).view(vdt)[()]
                olds[j] = old
                new = np.asarray(apply(old, bs[j], cs[j]), vdt)
                self.mem_store(space, addrs[j], nb, new.view(st), where, order="atomic")
            if wd is not None:
                wd(idx, olds)
        return fn

    def _op_atom(self, s, where):
        return self._atomic(s, where, True)

    def _op_red(self, s, where):
        return self._atomic(s, where, False)

    # -- no-ops and traps --------------------------------------------------
    def _op_membar(self, s, where):
        # Sequential CTAs: nothing to order.  Concurrent: every fence (whatever its scope) drains the store buffer.
        weak = self.weak
        if weak is None:
            return lambda idx: None
        return lambda idx: weak.drain(weak.cur)

    _op_fence = _op_membar

    def _op_cp(self, s, where):
        """``cp.async`` (PTX ISA "Data Movement and Conversion Instructions: cp.async"): each thread's
        copy reads global memory when it is issued and writes shared memory only when a
        ``cp.async.wait_group N`` / ``cp.async.wait_all`` of that thread completes its group (all but
        the ``N`` most recent committed groups; ``wait_all`` also the uncommitted copies), so a read
        before the wait sees the old bytes and the race detector sees the write at the wait.
        ``src-size`` < ``cp-size`` fills the rest with zeros; ``cp.async.commit_group`` closes the
        thread's group.  A ``bar.sync`` does not complete a copy."""
        mods = s.mods
        if mods[:1] != ["async"]:
            raise EmulatorError("only cp.async is supported")
        if mods[1:] == ["commit_group"]:
            def commit(idx):
                self.async_committed[idx] += 1
            return commit
        if mods[1:] in (["wait_group"], ["wait_all"]):
            keep = int(s.operands[0]) if mods[1] == "wait_group" else None

            def wait(idx):
                lanes = np.zeros(len(self.async_committed), bool)
                lanes[idx] = True
                for rec in self.async_copies:
                    done = lanes[rec["idx"]] & rec["open"]
                    if keep is None:
                        done |= lanes[rec["idx"]]
                    else:
                        done &= rec["group"] < self.async_committed[rec["idx"]] - keep
                    if done.any():
                        self._complete_copy(rec, done)
                self.async_copies = [r for r in self.async_copies if r["open"].any()]
            return wait
        if mods[1] not in ("ca", "cg") or mods[2:] != ["shared", "global"] and mods[2:] != ["shared::cta", "global"]:
            raise EmulatorError("only cp.async.{ca,cg}.shared.global is supported")
        dst, src, size = s.operands[:3]
        nb = int(size, 0)
        if nb not in (4, 8, 16) or (mods[1] == "cg" and nb != 16):
            raise EmulatorError(f"cp-size {nb} is not allowed here")
        get_dst, _ = self.addr(dst)
        get_src, _ = self.addr(src)
        src_size = self.rd(s.operands[3], "u32") if len(s.operands) > 3 else None

        def issue(idx):
            idx = np.asarray(np.arange(len(self.async_committed))[idx])
            d, a = np.broadcast_to(get_dst(idx), idx.shape), np.broadcast_to(get_src(idx), idx.shape)
            if np.any(d % nb) or np.any(a % nb):
                raise EmulatorError(f"{where}: misaligned cp.async")
            n = np.full(idx.shape, nb) if src_size is None else np.broadcast_to(
                np.asarray(src_size(idx)).astype(np.int64), idx.shape)
            if np.any(n > nb):
                raise EmulatorError(f"{where}: src-size over cp-size")
            data = np.zeros((len(idx), nb), np.uint8)
            for k in range(nb):
                live = k < n
                if live.any():
                    if self.traffic is not None and k == 0:
                        self.count_access("global", a[live], nb, idx[live], True, where)
                    data[live, k] = np.asarray(self.mem_load("global", a[live] + k, 1, where,
                                                             self.tids[idx[live]])).view(np.uint8)
            if self.traffic is not None:
                self.count_access("shared", d, nb, idx, False, where)
            self.async_copies.append({"idx": idx, "dst": d, "data": data, "where": where,
                                      "group": self.async_committed[idx].copy(),
                                      "open": np.ones(len(idx), bool)})
        return issue

    def _complete_copy(self, rec, done) -> None:
        """Write the bytes of ``cp.async`` record ``rec``'s lanes ``done`` to shared memory (their wait)."""
        idx, nb = rec["idx"][done], rec["data"].shape[1]
        words = rec["data"][done].view(np.uint32)
        for k in range(nb // 4):
            self.mem_store("shared", rec["dst"][done] + 4 * k, 4, words[:, k], rec["where"], self.tids[idx])
        rec["open"] &= ~done

    def _op_griddepcontrol(self, s, where):
        # Programmatic dependent launch: with one kernel launched at a time there is nothing to wait for.
        if s.mods not in (["wait"], ["launch_dependents"]):
            raise EmulatorError("unknown griddepcontrol form")
        return lambda idx: None

    def _op_trap(self, s, where):
        def trap(idx):
            raise KernelTrap(f"{where}: trap executed by thread(s) {self.tids[idx][:8].tolist()}")
        return trap

    # -- warp-level matrix multiply ----------------------------------------
    def _whole_warps(self, idx, s, what: str) -> np.ndarray:
        """The thread ids of ``idx``, checked to be whole warps in order: a warp-collective instruction
        (``shfl.sync``/``mma.sync``/``ldmatrix`` with a full mask) needs every lane of each warp.
        Raises :class:`EmulatorError` otherwise."""
        lanes = self.tids[idx]
        n = len(lanes)
        if n % 32 or np.any(lanes.reshape(-1, 32) != (lanes.reshape(-1, 32)[:, :1] // 32 * 32 + np.arange(32))):
            raise EmulatorError(f"line {s.line}: {what} executed by a partial warp (lanes {lanes.tolist()})")
        return lanes

    def _shfl(self, s):
        """``shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask`` as the PTX ISA's
        pseudocode for shfl.sync defines it (``c`` packs the clamp in bits 0-4 and the segment mask
        in bits 8-12).  Only a full-warp member mask is supported, and every lane of each warp must
        execute it together (as ``shfl.sync`` with mask -1 requires)."""
        if s.mods[:1] != ["sync"] or len(s.mods) != 3 or s.mods[1] not in ("up", "down", "bfly", "idx") \
                or s.mods[2] != "b32" or len(s.operands) != 5:
            raise EmulatorError("only shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask is supported")
        mode = s.mods[1]
        dst, a, b, c, mask = s.operands
        if _parse_imm(mask, "b32") != 0xFFFFFFFF:
            raise EmulatorError("shfl.sync with a partial member mask is not supported")
        dparts = dst.split("|")
        wd = self.wr(dparts[0], "b32")
        wp = self.wr(dparts[1], "pred") if len(dparts) == 2 else None
        ra, rb = self.rd(a, "b32"), self.rd(b, "b32")
        cv = int(_parse_imm(c, "b32"))
        cval, segmask = cv & 0x1F, (cv >> 8) & 0x1F

        def shfl(idx):
            lanes = self._whole_warps(idx, s, "shfl.sync")
            glob = np.arange(len(self.tids))[idx]
            lane = (lanes % 32).astype(np.int64)
            bval = np.asarray(rb(idx)).astype(np.int64) & 0x1F
            max_lane = (lane & segmask) | (cval & ~segmask)
            min_lane = lane & segmask
            if mode == "up":
                j = lane - bval
                ok = j >= max_lane
            elif mode == "down":
                j = lane + bval
                ok = j <= max_lane
            elif mode == "bfly":
                j = lane ^ bval
                ok = j <= max_lane
            else:
                j = min_lane | (bval & ~segmask)
                ok = j <= max_lane
            j = np.where(ok, j, lane)
            src = glob - lane + j
            wd(idx, np.asarray(ra(src)))
            if wp is not None:
                wp(idx, ok)
        return shfl

    def _ldmatrix(self, s):
        """``ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16 {d...}, [a]`` (PTX ISA
        "ldmatrix"): lane ``8k + r`` gives the address of row ``r`` of 8x8 matrix ``k`` (16 bytes, 16-byte
        aligned); lane ``l`` receives in ``d[k]`` the elements (``l // 4``, ``2 (l % 4)``) and the next
        of matrix ``k``, or with ``.trans`` the elements (``2 (l % 4)``, ``l // 4``) and
        (``2 (l % 4) + 1``, ``l // 4``), the first in the low half.  Every lane of each warp must
        execute it together."""
        mods = s.mods
        if mods[:3] != ["sync", "aligned", "m8n8"] or mods[-2:] != ["shared", "b16"] \
                or len(mods) not in (6, 7) or mods[3] not in ("x1", "x2", "x4") \
                or (len(mods) == 7 and mods[4] != "trans"):
            raise EmulatorError("only ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16 is supported")
        num = int(mods[3][1])
        trans = len(mods) == 7
        dst, a = s.operands
        dests = self.vec(dst) if num > 1 else [dst]
        if len(dests) != num:
            raise EmulatorError(f"ldmatrix .x{num} takes {num} destination registers")
        ws = [self.wr(x, "b32") for x in dests]
        get_addr, _ = self.addr(a)
        where = f"line {s.line}: `{s.text}`"

        def ldm(idx):
            lanes = self._whole_warps(idx, s, "ldmatrix")
            glob = np.arange(len(self.tids))[idx]
            lane = (lanes % 32).astype(np.int64)
            if self.traffic is not None:  # lanes 8k .. 8k+7 give matrix k's rows: one phase per matrix
                given = lane < 8 * num
                self.traffic.add_shared(lanes[given], np.asarray(get_addr(glob[given])).astype(np.int64), 16,
                                        load=True, phase_lanes=8, where=where)

            def row_addr(r):  # the address lane r of this thread's warp gives
                at = np.asarray(get_addr(glob - lane + r)).astype(np.int64)
                if np.any(at % 16):
                    raise EmulatorError(f"{where}: a row address of ldmatrix is not 16-byte aligned")
                return at

            for k, w in enumerate(ws):
                if not trans:
                    at = row_addr(8 * k + lane // 4) + 4 * (lane % 4)
                    val = np.asarray(self.mem_load("shared", at, 4, where, lanes)).view(np.uint32)
                else:
                    col = 2 * (lane // 4)
                    lo = np.asarray(self.mem_load("shared", row_addr(8 * k + 2 * (lane % 4)) + col, 2, where, lanes))
                    hi = np.asarray(self.mem_load("shared", row_addr(8 * k + 2 * (lane % 4) + 1) + col, 2, where,
                                                  lanes))
                    val = lo.view(np.uint16).astype(np.uint32) | (hi.view(np.uint16).astype(np.uint32) << np.uint32(16))
                w(idx, val)
        return ldm

    #: mma.sync shapes: ``.mNnNkK`` -> (A/B element types, bits per element, the accumulator type)
    _MMA_TYPES = {
        "m16n8k8": ({"tf32"}, 32),
        "m16n8k16": ({"f16", "bf16"}, 16),
        "m16n8k32": ({"s8", "u8", "e4m3", "e5m2"}, 8),
    }

    def _mma(self, s):
        """``mma.sync.aligned.m16n8k{8,16,32}.row.col.<d>.<a>.<b>.<c>``: ``.f32.tf32.tf32.f32`` (k8),
        ``.f32.{f16,bf16}`` with both the same (k16), ``.s32.{s8,u8}.{s8,u8}.s32`` (products summed
        in wrapping 32-bit integers) or ``.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32`` (k32).  Every lane
        holds 4 A and 2 B registers of ``p = 32 / bits`` elements each (element ``e`` of register
        ``i`` is its bits ``[e * bits, (e + 1) * bits)``; a tf32 is its register's upper 19 bits),
        and the PTX ISA's "Matrix Fragments for mma.m16n8k8/k16/k32" place them alike: A register
        ``i`` is row ``g + 8 * (i & 1)``, columns ``p * q + e + (k / 2) * (i >> 1)``; B register
        ``j`` is rows ``p * q + e + (k / 2) * j`` of column ``g``; C/D element ``i`` (0..3) is row
        ``g + 8 * (i >> 1)``, column ``2q + (i & 1)`` (``g = lane >> 2``, ``q = lane & 3``)."""
        shape = s.mods[2] if len(s.mods) > 2 else ""
        if s.mods == ["sync", "aligned", "m8n8k4", "row", "col", "f64", "f64", "f64", "f64"]:
            return self._dmma(s)
        if s.mods[:2] != ["sync", "aligned"] or s.mods[3:5] != ["row", "col"] or len(s.mods) != 9 \
                or shape not in self._MMA_TYPES:
            raise EmulatorError("only mma.sync.aligned.m16n8k{8,16,32}.row.col.<d>.<a>.<b>.<c> is supported")
        dty, aty, bty, cty = s.mods[5:]
        kinds, bits = self._MMA_TYPES[shape]
        ints = aty in ("s8", "u8") and bty in ("s8", "u8")
        acc = "s32" if ints else "f32"
        same = aty == bty or shape == "m16n8k32"  # k32 mixes s8/u8 and e4m3/e5m2, not ints with floats
        if dty != acc or cty != acc or aty not in kinds or bty not in kinds or not same \
                or ints != (bty in ("s8", "u8")):
            raise EmulatorError(f"unsupported mma types .{dty}.{aty}.{bty}.{cty}")
        dv, av, bv, cv = (self.vec(x) for x in s.operands)
        if (len(dv), len(av), len(bv), len(cv)) != (4, 4, 2, 4):
            raise EmulatorError(f"{shape} takes 4 D, 4 A, 2 B and 4 C registers")
        ra = [self.rd(x, "b32") for x in av]
        rb = [self.rd(x, "b32") for x in bv]
        rc = [self.rd(x, acc) for x in cv]
        wd = [self.wr(x, acc) for x in dv]
        k = int(shape.split("k")[1])
        per = 32 // bits
        dt = np.int64 if ints else np.float64

        def elements(r, idx, ty):  # the per elements of register r, in order
            v = np.asarray(r(idx), np.uint32)
            if ty == "tf32":
                return [(v & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)]
            out = []
            for e in range(per):
                raw = (v >> np.uint32(e * bits)) & np.uint32((1 << bits) - 1)
                if ty in ("s8", "u8"):
                    out.append(raw.astype(np.uint8).view(np.int8 if ty == "s8" else np.uint8).astype(np.int64))
                elif ty in _F8:
                    out.append(raw.astype(np.uint8).view(_F8[ty][0]).astype(np.float64))
                else:
                    out.append(raw.astype(np.uint16).view(np.float16 if ty == "f16" else ml_dtypes.bfloat16)
                               .astype(np.float64))
            return out

        def mma(idx):
            lanes = self._whole_warps(idx, s, "mma.sync")
            n = len(lanes)
            lane = lanes % 32
            group, tig = lane >> 2, lane % 4
            wi = np.arange(n) // 32
            nw = n // 32
            A = np.zeros((nw, 16, k), dt)
            for i, r in enumerate(ra):
                for e, x in enumerate(elements(r, idx, aty)):
                    A[wi, group + 8 * (i & 1), per * tig + e + (k // 2) * (i >> 1)] = x
            B = np.zeros((nw, k, 8), dt)
            for j, r in enumerate(rb):
                for e, x in enumerate(elements(r, idx, bty)):
                    B[wi, per * tig + e + (k // 2) * j, group] = x
            C = np.zeros((nw, 16, 8), dt)
            for i in range(4):
                C[wi, group + (8 if i >= 2 else 0), tig * 2 + (i & 1)] = np.asarray(rc[i](idx)).astype(dt)
            D = A @ B + C
            D = D.astype(np.uint64).astype(np.uint32).view(np.int32) if ints else D.astype(np.float32)
            for i in range(4):
                wd[i](idx, D[wi, group + (8 if i >= 2 else 0), tig * 2 + (i & 1)])
        return mma

    def _dmma(self, s):
        """``mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {d0, d1}, {a}, {b}, {c0, c1}`` (sm_80): the PTX
        ISA's "Matrix Fragments for mma.m8n8k4 with .f64 floating point type": A's register is row ``g``,
        column ``q``; B's row ``q``, column ``g``; C/D register ``i`` row ``g``, column ``2q + i``
        (``g = lane >> 2``, ``q = lane & 3``).  Each element of D is its dot product and C in f64."""
        dv, av, bv, cv = (self.vec(x) for x in s.operands)
        if (len(dv), len(av), len(bv), len(cv)) != (2, 1, 1, 2):
            raise EmulatorError("m8n8k4 .f64 takes 2 D, 1 A, 1 B and 2 C registers")
        ra, rb = self.rd(av[0], "f64"), self.rd(bv[0], "f64")
        rc = [self.rd(x, "f64") for x in cv]
        wd = [self.wr(x, "f64") for x in dv]

        def mma(idx):
            lanes = self._whole_warps(idx, s, "mma.sync")
            lane = lanes % 32
            group, tig = lane >> 2, lane % 4
            wi = np.arange(len(lanes)) // 32
            nw = len(lanes) // 32
            A = np.zeros((nw, 8, 4))
            B = np.zeros((nw, 4, 8))
            C = np.zeros((nw, 8, 8))
            A[wi, group, tig] = np.asarray(ra(idx), np.float64)
            B[wi, tig, group] = np.asarray(rb(idx), np.float64)
            for i in range(2):
                C[wi, group, 2 * tig + i] = np.asarray(rc[i](idx), np.float64)
            D = A @ B + C
            for i in range(2):
                wd[i](idx, D[wi, group, 2 * tig + i])
        return mma


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


#: Bytes of a global-memory sector (the unit an L1/L2 transaction moves) and of a shared-memory
#: wavefront (32 banks of 4 bytes: one pass of the shared-memory pipeline).
SECTOR = 32
WAVEFRONT = 128


@dataclass
class Traffic:
    """Warp-level counts of a run with ``run(..., traffic=True)``, summed over its CTAs.

    Each executed instruction counts once per warp with an active lane
    (``warp_instructions``: PTX, not SASS).  A global ``ld``/``st`` (``.global``, or a generic
    address outside the shared window) is one *request* per warp; its *sectors* are the distinct
    32-byte sectors its active lanes touch, and ``*_bytes`` what they asked for (so
    ``bytes / (32 * sectors)`` is the coalescing efficiency).  A shared ``ld``/``st``/``ldmatrix``
    goes through the 32 banks of 4 bytes in *wavefronts*: its lanes are split into phases of at
    most 128 bytes (all 32 lanes for accesses of up to 4 bytes, 16 for 8 bytes, 8 for 16 bytes; one
    8x8 matrix, 8 rows of 16 bytes, per phase of ``ldmatrix``), and a phase takes as many
    wavefronts as the most distinct 4-byte words any one bank holds (lanes reading the same word
    share it); ``*_ideal`` counts one wavefront per phase, so the difference is what bank
    conflicts cost.  ``barriers``: ``bar.sync`` executed, per CTA summed.  Atomics are not counted.
    This is the model NVIDIA's Nsight Compute documents for sectors and shared wavefronts, applied
    to the PTX: ptxas may merge, split or reorder accesses.
    """

    warp_instructions: int = 0
    global_load_requests: int = 0
    global_load_sectors: int = 0
    global_load_bytes: int = 0
    global_store_requests: int = 0
    global_store_sectors: int = 0
    global_store_bytes: int = 0
    shared_load_requests: int = 0
    shared_load_wavefronts: int = 0
    shared_load_ideal: int = 0
    shared_store_requests: int = 0
    shared_store_wavefronts: int = 0
    shared_store_ideal: int = 0
    barriers: int = 0
    #: the same counters per PTX instruction (``"line N: `text`"``), for the accesses counted
    by_line: dict[str, dict[str, int]] = field(default_factory=dict)

    def add_global(self, lanes: np.ndarray, addr: np.ndarray, nbytes: int, load: bool, where: str = "") -> None:
        """One global access of ``nbytes`` (at most 16) per lane by the CTA-local threads ``lanes`` at
        the byte addresses ``addr``, by instruction ``where``."""
        warp = lanes.astype(np.int64) // 32
        first, last = addr // SECTOR, (addr + nbytes - 1) // SECTOR  # at most two sectors a lane
        sectors = np.unique(np.concatenate([warp * (1 << 40) + first, warp * (1 << 40) + last])).size
        kind = "load" if load else "store"
        self._add(where, f"global_{kind}_requests", np.unique(warp).size)
        self._add(where, f"global_{kind}_sectors", sectors)
        self._add(where, f"global_{kind}_bytes", len(lanes) * nbytes)

    def add_shared(self, lanes: np.ndarray, addr: np.ndarray, nbytes: int, load: bool,
                   phase_lanes: int | None = None, where: str = "") -> None:
        """One shared access of ``nbytes`` (at most 16) per lane, in phases of ``phase_lanes``
        consecutive lanes of a warp (by default as many as keep a phase within 128 bytes)."""
        if phase_lanes is None:
            phase_lanes = min(32, WAVEFRONT // max(4, nbytes))
        lanes = lanes.astype(np.int64)
        phase = (lanes // 32) * 32 + (lanes % 32) // phase_lanes
        first, last = addr // 4, (addr + nbytes - 1) // 4
        parts = [phase * (1 << 32) + first]
        for k in range(1, -(-nbytes // 4) + 1):  # the other words of the access (one more if misaligned)
            ok = first + k <= last
            parts.append(phase[ok] * (1 << 32) + first[ok] + k)
        words = np.unique(np.concatenate(parts))  # distinct (phase, word): lanes reading one word share it
        groups, word = words >> 32, words & 0xFFFFFFFF
        banks, per_bank = np.unique(groups * 32 + (word & 31), return_counts=True)
        fronts = np.zeros(int(groups.max()) + 1, np.int64)
        np.maximum.at(fronts, banks // 32, per_bank)
        kind = "load" if load else "store"
        self._add(where, f"shared_{kind}_requests", np.unique(lanes // 32).size)
        self._add(where, f"shared_{kind}_wavefronts", int(fronts.sum()))
        self._add(where, f"shared_{kind}_ideal", np.unique(phase).size)

    def _add(self, where: str, name: str, n: int) -> None:
        setattr(self, name, getattr(self, name) + int(n))
        line = self.by_line.setdefault(where, {})
        line[name] = line.get(name, 0) + int(n)


@dataclass
class RunStats:
    """What a run did.

    ``steps``: scheduled instruction executions (all CTAs); ``executed``:
    opcode (with modifiers) -> times it ran for at least one thread;
    ``never_written``: registers the kernel reads but no instruction writes;
    ``cross_cta_conflicts`` (concurrent runs only, at most 20, one per pair
    of PTX lines and array): two CTAs touched the same global bytes and at
    least one of them with a weak (plain) store, so the result may depend on
    the schedule, e.g. ``"array out bytes [0, 4): CTA 1 loads them at line
    31, CTA 0 weakly stored them at line 29"``; ``traffic``: the warp-level
    counts of :class:`Traffic` (with ``run(traffic=True)``).
    """

    ctas: int = 0
    steps: int = 0
    executed: dict[str, int] = field(default_factory=dict)
    never_written: list[str] = field(default_factory=list)
    cross_cta_conflicts: list[str] = field(default_factory=list)
    traffic: Traffic | None = None


def _pack_param(pty: str, value) -> bytes:
    """Bytes of one scalar kernel argument, as ``launch`` packs it with ctypes."""
    t = pty.lstrip(".")
    if t == "f32":
        return np.float32(value).tobytes()
    if t == "f64":
        return np.float64(value).tobytes()
    if t == "b16" and isinstance(value, float):
        return np.float16(value).tobytes()
    bits = _BITS.get(t, 32)
    return np.array(int(value) & ((1 << bits) - 1), _STORE[bits]).tobytes()


def run(ptx_text: str, kernel_name: str, param_types: list[str], args: list, grid: tuple[int, int, int],
        threads: int, dynamic_smem: int = 0, *, max_steps: int = 20_000_000, check_races: bool = True,
        schedule: int | None = None, traffic: bool = False) -> RunStats:
    """Emulate kernel ``kernel_name`` of ``ptx_text`` on the CPU, like ``launch.launch`` runs it on a GPU.

    ``param_types``: PTX ``.param`` types in order; ``args``: NumPy arrays
    for pointer parameters (copied in, and results copied back into them)
    and numbers for the others.  ``grid``: CTAs (x, y, z); ``threads``: CTA
    size (1-D); ``dynamic_smem``: bytes of dynamic shared memory.  Raises
    :class:`EmulatorError` for unsupported PTX or for faults (out-of-bounds
    or misaligned access, divergent barrier, partial-warp ``mma.sync``,
    ``trap``, more than ``max_steps`` steps in one CTA) and, with
    ``check_races``, :class:`DataRace` for two threads of a CTA touching the
    same global or shared bytes (one writing) with no barrier in between;
    atomics are exempt.

    ``schedule``: ``None`` runs the CTAs one after another.  An int runs
    them concurrently (see "Concurrent CTAs" in the module docstring): all
    CTAs are live at once and a scheduler switches between them at
    scheduling points (reaching a global or generic ``ld``/``st``/``atom``/
    ``red``, a ``bar.sync``, a ``membar``/``fence``; CTA exit).  ``0`` is
    round-robin lockstep (CTA 0, 1, ..., 0, ... each to its next scheduling
    point) with every weak global store visible to the other CTAs from the
    storing CTA's next scheduling point on; a seed >= 1 picks the next CTA
    at random (``random.Random(seed)``) and drains buffered weak stores late
    and out of order.  Each CTA sees its own stores at once; fences,
    release operations, overlapping atomics and CTA exit drain its store
    buffer.  Accesses of different CTAs to the same global bytes, one of
    them a weak store, do not raise: they are listed in
    ``RunStats.cross_cta_conflicts``.  ``max_steps`` holds per CTA; a
    one-CTA grid runs as with ``None``.  ``traffic``: count warp
    instructions, global sectors, shared wavefronts and barriers
    (:class:`Traffic`, in ``RunStats.traffic``).
    """
    prog = parse(ptx_text, kernel_name)
    if len(prog.params) != len(param_types) or len(args) != len(param_types):
        raise EmulatorError(f"{kernel_name} takes {len(prog.params)} parameters; got {len(param_types)} types "
                            f"and {len(args)} arguments")
    for (ptype, pname), given in zip(prog.params, param_types):
        if _BITS.get(ptype) != _BITS.get(given.lstrip(".")):
            raise EmulatorError(f"parameter {pname} is .{ptype} in the PTX but the caller packs {given}")
    if prog.reqntid is not None and int(np.prod(prog.reqntid)) != threads:
        raise EmulatorError(f".reqntid {prog.reqntid} but launched with {threads} threads")
    if threads <= 0 or threads > 1024:
        raise EmulatorError(f"bad CTA size {threads}")
    m = _Machine(prog, threads)
    m.R.extend([None] * len(m.regs))

    # Global and constant memory.
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    gvars = [v for v in prog.variables if v.space == "global"]
    gsize = sum((a.nbytes + 511) // 256 * 256 for a in arrays) + sum(
        ((v.count or 0) * v.elem_bits // 8 + 511) // 256 * 256 for v in gvars) + 256
    m.global_space = _Space("global", GLOBAL_BASE, gsize, races=check_races)
    cvars = [v for v in prog.variables if v.space == "const"]
    m.const_space = _Space("const", CONST_BASE, sum(((v.count or 1) * v.elem_bits // 8 + 511) // 256 * 256
                                                       for v in cvars) + 256)
    for v, sp in [(v, m.global_space) for v in gvars] + [(v, m.const_space) for v in cvars]:
        nbytes = (v.count or 0) * v.elem_bits // 8
        addr = sp.allocate(max(nbytes, 1), max(v.align, 16))
        if v.init:
            data = np.array([x & ((1 << v.elem_bits) - 1) for x in v.init], _STORE[v.elem_bits]).view(np.uint8)
            off = addr - sp.base
            sp.data[off:off + data.size] = data
        m.symbols[v.name] = (v.space, addr)
    # Shared memory layout: static arrays, then the dynamic (extern) part.
    svars = [v for v in prog.variables if v.space == "shared"]
    static = [v for v in svars if v.count is not None]
    dynamic = [v for v in svars if v.count is None]
    layout, top = [], 0
    for v in static:
        top = (top + v.align - 1) // v.align * v.align
        layout.append((v, top, v.count * v.elem_bits // 8))
        top += v.count * v.elem_bits // 8
    static_bytes = top
    if static_bytes > _STATIC_SMEM_LIMIT:
        raise EmulatorError(f"{static_bytes} bytes of static shared memory (limit {_STATIC_SMEM_LIMIT})")
    dyn_base = (top + 127) // 128 * 128 if dynamic else top
    for v in dynamic:
        layout.append((v, dyn_base, dynamic_smem))
    if dynamic_smem and not dynamic:
        raise EmulatorError("dynamic shared memory requested but the kernel declares no .extern .shared array")
    total_smem = (dyn_base + dynamic_smem) if dynamic else static_bytes
    limit = _SMEM_LIMIT.get(prog.target)
    if limit is not None and total_smem > limit:
        raise EmulatorError(f"{total_smem} bytes of shared memory per CTA exceed the {prog.target} limit {limit}")
    for v, off, _ in layout:
        m.symbols[v.name] = ("shared", off)
    for v in prog.variables:
        if v.space == "local":
            m.symbols[v.name] = ("local", 0)

    # Parameters.
    pbytes = bytearray()
    buffers = []
    for (ptype, pname), given, a in zip(prog.params, param_types, args):
        nb = max(_BITS[ptype] // 8, 1)
        pbytes.extend(b"\0" * ((-len(pbytes)) % nb))
        m.params[pname] = (len(pbytes), ptype)
        if isinstance(a, np.ndarray):
            host = np.ascontiguousarray(a)
            addr = m.global_space.allocate(max(host.nbytes, 1), 256)
            off = addr - GLOBAL_BASE
            m.global_space.data[off:off + host.nbytes] = host.reshape(-1).view(np.uint8)
            buffers.append((a, host, off))
            pbytes.extend(np.uint64(addr).tobytes())
        else:
            pbytes.extend(_pack_param(given, a))
    m.param_bytes = bytes(pbytes)

    ctaids = [(cx, cy, cz) for cz, cy, cx in itertools.product(range(grid[2]), range(grid[1]), range(grid[0]))]
    concurrent = schedule is not None and len(ctaids) > 1
    memory = m.global_space
    if concurrent:
        pnames = [pname for (_, pname), a in zip(prog.params, args) if isinstance(a, np.ndarray)]
        regions = [(off, host.nbytes, f"array {pname}") for (_, host, off), pname in zip(buffers, pnames)]
        regions += [(addr - GLOBAL_BASE, (v.count or 0) * v.elem_bits // 8, f".global {v.name}")
                    for v in gvars for space, addr in [m.symbols[v.name]]]
        m.weak = m.global_space = _WeakGlobal(memory, regions)

    # Decode after the symbols and parameters are known.
    m.code = [m._decode(st) for st in prog.stmts]
    if concurrent:
        for ins, st in zip(m.code, prog.stmts):
            ins.sched = ins.kind == "bar" or _touches_global(st, m)
    m.R[:] = [None] * len(m.regs)
    stats = RunStats()
    if traffic:
        m.traffic = stats.traffic = Traffic()
    stats.never_written = sorted(tok for i, tok in m.read.items() if i not in m.written and i >= len(_SPECIALS))
    smem_size = max(total_smem, 16)

    def new_shared() -> _Space:
        sp = _Space("shared", 0, smem_size, fill=0xFF, races=check_races)
        if total_smem:
            sp.valid[:total_smem] = True
        return sp
    with np.errstate(all="ignore"):
        if not concurrent:
            for ctaid in ctaids:
                m.shared_space = new_shared()
                m.reset_cta(ctaid, grid)
                m.new_epoch()
                gen = _cta_steps(m, 0, max_steps, stats.executed)
                try:
                    next(gen)
                except StopIteration as done:
                    stats.steps += done.value
                else:
                    raise AssertionError("a sequential CTA stopped at a scheduling point")
                stats.ctas += 1
        else:
            m.alloc_regs(len(ctaids))
            ctas = []
            for k, ctaid in enumerate(ctaids):
                c = _Cta(k, ctaid, k * threads, new_shared())
                m.set_specials(ctaid, grid, slice(c.base, c.base + threads))
                m.shared_space = c.shared
                m.new_epoch()  # epochs are numbered across CTAs: a race check only matches its own CTA's
                c.gen = _cta_steps(m, c.base, max_steps, stats.executed)
                ctas.append(c)
            _schedule(m, ctas, schedule, stats)
            stats.cross_cta_conflicts = list(m.weak.conflicts)
    for a, host, off in buffers:
        host.reshape(-1).view(np.uint8)[:] = memory.data[off:off + host.nbytes]
        if host is not a:
            a[...] = host
    return stats


def _touches_global(s: _Stmt, m: _Machine) -> bool:
    """Whether ``s`` is a fence or an ld/st/atom/red whose address is global or generic (maybe global)."""
    if s.opcode in ("membar", "fence") or s.opcode == "cp" and "global" in s.mods:
        return True
    if s.opcode not in ("ld", "st", "atom", "red") or not s.operands:
        return False
    if "global" in s.mods:
        return True
    if any(x in s.mods for x in ("shared", "shared::cta", "const", "param", "local")):
        return False
    addr = s.operands[1 if s.opcode in ("ld", "atom") and len(s.operands) > 1 else 0]
    am = re.match(r"\[\s*([%$\w.]+)", addr.strip())
    base = am.group(1) if am else ""
    if base in m.params:
        return False
    if base in m.symbols:
        return m.symbols[base][0] == "global"
    return True


def _schedule(m: _Machine, ctas: list[_Cta], seed: int, stats: RunStats) -> None:
    """Run the CTAs' generators to completion, switching CTA at every scheduling point."""
    rng = random.Random(seed)
    weak = m.weak
    space = weak.space
    p = 0.1 + 0.4 * rng.random()  # seeds >= 1: chance that a buffered store drains at a scheduling point
    live = list(ctas)
    i = 0
    while live:
        i = i % len(live) if seed == 0 else rng.randrange(len(live))
        c = live[i]
        m.shared_space = c.shared
        space.epoch = c.shared.epoch
        weak.cur = c
        try:
            next(c.gen)
        except StopIteration as done:  # CTA exit: its stores become visible
            stats.steps += done.value
            stats.ctas += 1
            weak.drain(c)
            c.gen = c.owner = c.own = None
            live.pop(i)
        else:
            i += 1
        if seed == 0:
            weak.drain(c)
        elif weak.pending:
            weak.drain_some(rng, p)


def _cta_steps(m: _Machine, base: int, max_steps: int, executed: dict[str, int]):
    """Run one CTA with min-PC scheduling: a generator that returns the number of steps.

    The CTA's registers are lanes ``base .. base+T`` of ``m.R``.  It yields
    before each instruction marked ``sched`` (only a concurrent run marks
    any), whether or not its guard lets a thread through.
    """
    code = m.code
    R = m.R
    T = m.T
    n_code = len(code)
    counts = m.traffic
    kind_is_bar = [int(ins.kind == "bar") for ins in code]
    ALL = slice(None)  # all threads, in CTA-local indices (live, pc)
    GALL = ALL if len(R[0]) == T else slice(base, base + T)  # the same lanes in the register arrays
    live = np.ones(T, bool)
    n_live = T
    live_idx = ALL  # ALL while every thread is live, else their indices
    pc = np.zeros(T, np.int64)
    converged, cur = True, 0
    steps = 0
    while n_live:
        steps += 1
        if steps > max_steps:
            raise EmulatorError(f"more than {max_steps} steps in one CTA (endless loop?)")
        if converged:
            idx = live_idx
        else:
            cur = int(pc[live].min())
            at = live & (pc == cur)
            n_at = int(np.count_nonzero(at))
            if n_at == n_live:
                converged, idx = True, live_idx
            else:
                idx = np.flatnonzero(at)
        if cur >= n_code:
            raise EmulatorError("threads ran past the end of the kernel without ret/exit")
        ins = code[cur]
        if ins.sched:
            yield
        # Lanes the guard lets through.
        if ins.guard is None:
            act = idx
        else:
            g = R[ins.guard][GALL if idx is ALL else (idx + base if base else idx)]
            if ins.guard_neg:
                g = ~g
            if idx is ALL:
                act = ALL if g.all() else np.flatnonzero(g)
            else:
                act = idx[g]
        n_act = T if act is ALL else len(act)
        if n_act:
            executed[ins.opname] = executed.get(ins.opname, 0) + 1
            if counts is not None:
                counts.warp_instructions += (T + 31) // 32 if act is ALL else np.unique(act // 32).size
                counts.barriers += kind_is_bar[cur]
        kind = ins.kind
        if kind == "op":
            if n_act:
                ins.fn(GALL if act is ALL else (act + base if base else act))
            nxt, taken = cur + 1, None
        elif kind == "bra":
            nxt, taken = cur + 1, ins.target
        elif kind == "ret":
            if n_act:
                live[act] = False
                n_live = int(np.count_nonzero(live))
                live_idx = ALL if n_live == T else np.flatnonzero(live)
            if not converged:
                rest = np.setdiff1d(idx, act) if act is not ALL else np.empty(0, np.int64)
                pc[rest] = cur + 1
                continue
            cur += 1
            continue
        elif kind == "bar":
            n_idx = T if idx is ALL else len(idx)
            if n_idx != n_live or n_act != n_idx:
                waiting = np.flatnonzero(live & (pc != cur)) if not converged else np.empty(0)
                raise EmulatorError(f"{ins.where}: barrier reached by {n_act} of {n_live} live threads "
                                    f"(others at PCs {sorted(set(pc[waiting].tolist()))[:8]}): deadlock on a GPU")
            m.new_epoch()
            nxt, taken = cur + 1, None
        elif kind == "warp":  # the mma itself checks that whole warps execute it
            if n_act:
                ins.fn(GALL if act is ALL else (act + base if base else act))
            nxt, taken = cur + 1, None
        else:
            raise AssertionError(kind)
        if taken is None:
            if converged:
                cur = nxt
            else:
                pc[idx] = nxt
            continue
        # A branch: lanes in act jump, the rest of idx falls through.
        n_idx = T if idx is ALL else len(idx)
        if converged:
            if n_act == n_idx:
                cur = taken
            elif n_act == 0:
                cur = nxt
            else:
                pc[:] = 0
                pc[live_idx] = nxt
                pc[act] = taken
                converged = False
        else:
            pc[idx] = nxt
            if n_act:
                pc[act] = taken
    return steps
