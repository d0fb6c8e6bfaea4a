"""Global memory of the reference interpreter: NumPy buffers addressed by byte.

A pointer is a ``uint64`` byte address.  The interpreter uses the real
addresses of the NumPy arrays it is given (``ndarray.ctypes.data``), so a
kernel argument's pointer is the address of its array's first byte, pointer
arithmetic is byte arithmetic (Ops.td ``offset``: ``ptr + offset *
sizeof(pointee)``), and ``ptr_to_int`` / ``int_to_ptr`` round-trip as on a
GPU: an array of addresses built with ``a.ctypes.data`` (a "list of arrays"
argument) reaches the arrays it names when they are registered too.

Every access is checked: each element's bytes must lie inside one
registered buffer and be aligned to the element size (a GPU faults on a
misaligned global access); otherwise :class:`MemoryFault` names the first
bad address.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class MemoryFault(Exception):
    """An access outside every registered buffer, misaligned, or to a read-only buffer."""


@dataclass
class Buffer:
    """One registered region: ``start`` address, ``nbytes``, the bytes as a writable/readonly uint8 array."""

    start: int
    nbytes: int
    data: np.ndarray  # uint8 view of the memory
    name: str

    @property
    def end(self) -> int:
        return self.start + self.nbytes


def _root_array(a: np.ndarray) -> np.ndarray:
    """The ndarray that owns ``a``'s memory (through ``.base`` links), or ``a``."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


class Memory:
    """The registered buffers, sorted by address, with vectorised loads and stores."""

    def __init__(self) -> None:
        self.buffers: list[Buffer] = []
        self._starts = np.zeros(0, dtype=np.uint64)
        self._typed: dict[tuple[int, str], tuple[np.ndarray, int]] = {}

    def register(self, array: np.ndarray, name: str = "") -> int:
        """Make ``array``'s memory addressable; returns its address.

        A view is registered through the contiguous array that owns its
        memory, so two arguments that alias (the same array twice, or views
        of one array) address the same bytes.  Raises ``ValueError`` for a
        non-contiguous array whose owner is not contiguous either.
        """
        if not isinstance(array, np.ndarray):
            raise TypeError(f"{name or 'buffer'}: expected a NumPy array, got {type(array).__name__}")
        addr = int(array.ctypes.data)
        root = _root_array(array)
        region = root if root.flags.c_contiguous or root.flags.f_contiguous else array
        if not (region.flags.c_contiguous or region.flags.f_contiguous):
            raise ValueError(f"{name or 'buffer'}: the array's memory is not contiguous")
        start = int(region.ctypes.data)
        nbytes = region.nbytes
        for b in self.buffers:
            if start >= b.start and start + nbytes <= b.end:
                return addr  # already covered
        # drop buffers the new one covers
        self.buffers = [b for b in self.buffers if not (b.start >= start and b.end <= start + nbytes)]
        for b in self.buffers:
            if b.start < start + nbytes and start < b.end:
                raise ValueError(f"{name or 'buffer'}: memory partially overlaps another argument")
        flat = region.reshape(-1, order="A") if region.ndim else region.reshape(1)
        data = flat.view(np.uint8)
        self.buffers.append(Buffer(start, nbytes, data, name))
        self.buffers.sort(key=lambda b: b.start)
        self._starts = np.array([b.start for b in self.buffers], dtype=np.uint64)
        self._typed.clear()
        return addr

    def allocate(self, nbytes: int, name: str, alignment: int = 16) -> tuple[int, np.ndarray]:
        """A fresh zeroed buffer of ``nbytes`` (for globals); returns (address, uint8 array)."""
        raw = np.zeros(max(nbytes, 1) + alignment, dtype=np.uint8)
        off = (-int(raw.ctypes.data)) % alignment
        arr = raw[off:off + max(nbytes, 1)]
        self.register(arr, name)
        return int(arr.ctypes.data), arr

    # -- address resolution -------------------------------------------------

    def _locate(self, addrs: np.ndarray, size: int) -> np.ndarray:
        """Index of the buffer holding each ``size``-byte access at ``addrs``; raises on a fault."""
        if not self.buffers:
            if addrs.size:
                raise MemoryFault(f"address {int(addrs.reshape(-1)[0]):#x} is outside every buffer")
            return np.zeros(addrs.shape, dtype=np.intp)
        if addrs.size:
            # the common case: every address in one buffer (two bounds checks, no search)
            lo, hi = int(addrs.min()), int(addrs.max())
            bi = int(np.searchsorted(self._starts, np.uint64(lo), side="right")) - 1
            if bi >= 0 and hi + size <= self.buffers[bi].end:
                if size > 1 and (addrs % np.uint64(size)).any():
                    bad = int(addrs[(addrs % np.uint64(size)) != 0].reshape(-1)[0])
                    raise MemoryFault(f"address {bad:#x} is not aligned to {size} bytes")
                return np.full(addrs.shape, bi, dtype=np.intp)
        idx = np.searchsorted(self._starts, addrs, side="right").astype(np.intp) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        ends = np.array([b.end for b in self.buffers], dtype=np.uint64)
        ok &= (addrs + np.uint64(size)) <= ends[safe]
        if not ok.all():
            bad = int(addrs[~ok].reshape(-1)[0])
            raise MemoryFault(f"address {bad:#x} ({size} bytes) is outside every buffer")
        if size > 1 and (addrs % np.uint64(size)).any():
            bad = int(addrs[(addrs % np.uint64(size)) != 0].reshape(-1)[0])
            raise MemoryFault(f"address {bad:#x} is not aligned to {size} bytes")
        return safe

    def _typed_view(self, bi: int, dtype: np.dtype) -> tuple[np.ndarray, int]:
        """Buffer ``bi`` as an array of ``dtype`` starting at its first aligned address."""
        key = (bi, dtype.str if dtype.kind != "V" else dtype.name)
        hit = self._typed.get(key)
        if hit is not None:
            return hit
        b = self.buffers[bi]
        size = dtype.itemsize
        skip = (-b.start) % size
        n = (b.nbytes - skip) // size
        view = b.data[skip:skip + n * size].view(dtype)
        hit = (view, b.start + skip)
        self._typed[key] = hit
        return hit

    def load(self, addrs: np.ndarray, dtype: np.dtype, mask: np.ndarray | None = None) -> np.ndarray:
        """Elements of ``dtype`` at byte addresses ``addrs`` (masked-off lanes are zero and not accessed)."""
        addrs = np.asarray(addrs, dtype=np.uint64)
        out = np.zeros(addrs.shape, dtype=dtype)
        sel = np.ones(addrs.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        if not sel.any():
            return out
        a = addrs[sel]
        bidx = self._locate(a, dtype.itemsize)
        vals = np.empty(a.shape, dtype=dtype)
        for bi, m in _groups(bidx):
            view, base = self._typed_view(bi, dtype)
            vals[m] = view[((a[m] - np.uint64(base)) // np.uint64(dtype.itemsize)).astype(np.intp)]
        out[sel] = vals
        return out

    def store(self, addrs: np.ndarray, values: np.ndarray, mask: np.ndarray | None = None) -> None:
        """Write ``values`` at ``addrs`` (lanes with a false ``mask`` are skipped).

        Lanes that write the same address are applied in row-major lane order
        (the last one wins).
        """
        addrs = np.asarray(addrs, dtype=np.uint64)
        values = np.broadcast_to(np.asarray(values), addrs.shape)
        sel = np.ones(addrs.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        if not sel.any():
            return
        a = addrs[sel]
        v = values[sel]
        dtype = v.dtype
        bidx = self._locate(a, dtype.itemsize)
        for bi, m in _groups(bidx):
            view, base = self._typed_view(bi, dtype)
            if not view.flags.writeable:
                raise MemoryFault(f"buffer {self.buffers[bi].name or hex(base)} is read-only")
            view[((a[m] - np.uint64(base)) // np.uint64(dtype.itemsize)).astype(np.intp)] = v[m]

    def element_indices(self, addrs: np.ndarray, dtype: np.dtype) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For read-modify-write: per buffer, (typed view, element indices, lane selector) of ``addrs``."""
        addrs = np.asarray(addrs, dtype=np.uint64)
        bidx = self._locate(addrs, dtype.itemsize)
        out = []
        for bi, m in _groups(bidx):
            view, base = self._typed_view(bi, dtype)
            if not view.flags.writeable:
                raise MemoryFault(f"buffer {self.buffers[bi].name or hex(base)} is read-only")
            out.append((view, ((addrs[m] - np.uint64(base)) // np.uint64(dtype.itemsize)).astype(np.intp), m))
        return out


def _groups(bidx: np.ndarray):
    """(buffer index, lane selector) for each buffer that ``bidx`` names (one group when all agree)."""
    if bidx.size and bidx.min() == bidx.max():
        return [(int(bidx.reshape(-1)[0]), slice(None))]
    return [(int(b), bidx == b) for b in np.unique(bidx)]
