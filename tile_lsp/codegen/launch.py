"""Run lowered PTX on a GPU with the CUDA driver API (``cuda-python`` / ``cuda-bindings``).

Used by the GPU tests (``tests/test_gpu.py``) and ``bench/ptx_vs_tileiras.py``;
optional: importing this module does not need CUDA, calling :func:`launch`
does.  Kernel arguments follow the ABI of :mod:`tile_lsp.codegen.emit`: a
NumPy array stands for a pointer parameter (copied to the device before the
launch and back after it), numbers for scalar parameters, packed by the
PTX parameter type of :class:`~tile_lsp.codegen.passes.KernelInfo`.
"""

from __future__ import annotations

import ctypes
import statistics
from dataclasses import dataclass

import numpy as np


class GpuUnavailable(RuntimeError):
    """No CUDA driver, no ``cuda-bindings`` package, or no device."""


class LaunchError(RuntimeError):
    """A driver call failed (module load = the JIT rejected the PTX, launch, copy)."""


def _driver():
    try:
        from cuda.bindings import driver as cu  # type: ignore
    except Exception as e:
        raise GpuUnavailable(f"cuda-bindings is not importable: {e}") from e
    return cu


def _check(result, what: str):
    cu = _driver()
    err = result[0] if isinstance(result, tuple) else result
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise LaunchError(f"{what} failed: {name.decode() if isinstance(name, bytes) else name}")
    if isinstance(result, tuple):
        return result[1] if len(result) == 2 else result[1:]
    return None


_CONTEXT = None


def context():
    """The primary context of device 0, made current (raises :class:`GpuUnavailable`)."""
    global _CONTEXT
    cu = _driver()
    if _CONTEXT is None:
        try:
            err = cu.cuInit(0)[0]
        except Exception as e:  # cuda-bindings 13 raises when libcuda (the driver) is missing
            raise GpuUnavailable(f"cuInit failed: {type(e).__name__}: {e}") from e
        if err != cu.CUresult.CUDA_SUCCESS:
            raise GpuUnavailable(f"cuInit failed ({err})")
        err, count = cu.cuDeviceGetCount()
        if err != cu.CUresult.CUDA_SUCCESS or count == 0:
            raise GpuUnavailable("no CUDA device")
        dev = _check(cu.cuDeviceGet(0), "cuDeviceGet")
        _CONTEXT = _check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    _check(cu.cuCtxSetCurrent(_CONTEXT), "cuCtxSetCurrent")
    return _CONTEXT


def device_name() -> str:
    cu = _driver()
    context()
    dev = _check(cu.cuDeviceGet(0), "cuDeviceGet")
    name = _check(cu.cuDeviceGetName(64, dev), "cuDeviceGetName")
    return name.split(b"\0", 1)[0].decode()


_SCALARS = {".u8": ctypes.c_uint8, ".s8": ctypes.c_int8, ".s16": ctypes.c_int16, ".u32": ctypes.c_uint32,
            ".u64": ctypes.c_uint64, ".f32": ctypes.c_float, ".f64": ctypes.c_double, ".b16": ctypes.c_uint16}


@dataclass
class LaunchResult:
    """``elapsed_ms``: median kernel time of the timed runs in milliseconds, each launch timed
    between two CUDA events (0 when none were asked); ``times_ms``: every timed run's time."""

    elapsed_ms: float = 0.0
    times_ms: tuple[float, ...] = ()


def time_launches(start_one, runs: int, warmup: int = 0) -> list[float]:
    """Kernel time in milliseconds of each of ``runs`` calls of ``start_one`` (which enqueues one
    launch on the default stream), after ``warmup`` untimed ones: each launch lies between two
    CUDA events (``cuEventRecord``; ``cuEventElapsedTime``, resolution about 0.5 us), so the
    time of one launch does not include the host's launch overhead or the other launches'.
    Raises :class:`LaunchError` when a call fails or the kernels fault."""
    cu = _driver()
    for _ in range(warmup):
        start_one()
    _check(cu.cuCtxSynchronize(), "kernel execution")
    elapsed = getattr(cu, "cuEventElapsedTime", None) or cu.cuEventElapsedTime_v2
    events = []
    try:
        for _ in range(runs):
            events.append((_check(cu.cuEventCreate(0), "cuEventCreate"), _check(cu.cuEventCreate(0), "cuEventCreate")))
        for start, end in events:
            _check(cu.cuEventRecord(start, 0), "cuEventRecord")
            start_one()
            _check(cu.cuEventRecord(end, 0), "cuEventRecord")
        _check(cu.cuCtxSynchronize(), "kernel execution")
        return [float(_check(elapsed(start, end), "cuEventElapsedTime")) for start, end in events]
    finally:
        for start, end in events:
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(end)


class Module:
    """A loaded PTX (or cubin) module; :meth:`function` gets a kernel handle."""

    def __init__(self, image: bytes):
        cu = _driver()
        context()
        self._cu = cu
        self.handle = _check(cu.cuModuleLoadData(image), "cuModuleLoadData")

    def function(self, name: str):
        return _check(self._cu.cuModuleGetFunction(self.handle, name.encode()), "cuModuleGetFunction")

    def unload(self) -> None:
        self._cu.cuModuleUnload(self.handle)


class DeviceArray:
    """A device copy of a NumPy array that lives across launches (for arrays reached through pointer tables).

    ``ptr``: the device address (int); :meth:`copy_back` copies the device
    bytes into the host array; :meth:`free` releases the memory (idempotent).
    Raises :class:`GpuUnavailable` / :class:`LaunchError`.
    """

    def __init__(self, host: np.ndarray):
        cu = _driver()
        context()
        self._cu = cu
        if not host.flags.c_contiguous:
            raise LaunchError("DeviceArray needs a C-contiguous array")
        self.host = host
        self._dptr = _check(cu.cuMemAlloc(max(1, host.nbytes)), "cuMemAlloc")
        self.ptr = int(self._dptr)
        if host.nbytes:
            _check(cu.cuMemcpyHtoD(self._dptr, host.ctypes.data, host.nbytes), "cuMemcpyHtoD")

    def copy_back(self) -> None:
        if self.host.nbytes and self._dptr is not None:
            _check(self._cu.cuMemcpyDtoH(self.host.ctypes.data, self._dptr, self.host.nbytes), "cuMemcpyDtoH")

    def free(self) -> None:
        if self._dptr is not None:
            self._cu.cuMemFree(self._dptr)
            self._dptr = None


def _dims3(v, what: str) -> tuple[int, int, int]:
    t = (int(v), 1, 1) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)
    t = t + (1,) * (3 - len(t))
    if len(t) != 3 or min(t) < 1:
        raise ValueError(f"{what} must be 1 to 3 positive integers, got {v!r}")
    return t


def _launch_ex(cu, func, grid, block, dynamic_smem, ptrs, cluster) -> None:
    """``cuLaunchKernelEx`` with a cluster-dimension launch attribute (``cluster``: CTAs per cluster in x, y, z)."""
    config = cu.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid
    config.blockDimX, config.blockDimY, config.blockDimZ = block
    config.sharedMemBytes = dynamic_smem
    config.hStream = 0
    attr = cu.CUlaunchAttribute()
    attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster
    config.attrs = [attr]
    config.numAttrs = 1
    _check(cu.cuLaunchKernelEx(config, func, ctypes.addressof(ptrs), 0), "cuLaunchKernelEx")


def launch(module: Module, name: str, param_types: list[str], args: list, grid: tuple[int, int, int],
           threads, dynamic_smem: int = 0, *, timed_runs: int = 0, cluster=None) -> LaunchResult:
    """Run kernel ``name`` once (results copied back into the argument arrays), then ``timed_runs`` more.

    ``param_types``: PTX ``.param`` types in order; ``args``: one per
    parameter (NumPy arrays for ``.u64`` pointer parameters, copied to the
    device and back; a :class:`DeviceArray` passes its device address as
    is; numbers for scalars).  ``grid``: CTAs in x, y, z.  ``threads``: the
    CTA size, an int (x) or 1-3 ints (x, y, z): for a cubin, the kernel's
    ``EIATTR_REQNTID`` (``cuobjdump -elf``), not the driver's
    MAX_THREADS_PER_BLOCK.  ``dynamic_smem``: bytes of dynamic shared
    memory (over 48 KiB sets the function's opt-in limit first).
    ``cluster``: CTAs per cluster (x, y, z) for kernels compiled for thread
    block clusters (sm_90+), launched with ``cuLaunchKernelEx``; ``None`` or
    (1, 1, 1) launches with ``cuLaunchKernel``.  The timed runs work on the
    first run's outputs (they only measure time; ``elapsed_ms`` is their
    median in milliseconds, :func:`time_launches`).  Raises :class:`GpuUnavailable`,
    :class:`LaunchError`, or ``ValueError`` for bad grid/threads/cluster.
    """
    cu = _driver()
    func = module.function(name)
    block = _dims3(threads, "threads")
    gx, gy, gz = _dims3(grid, "grid")
    cl = _dims3(cluster, "cluster") if cluster is not None else (1, 1, 1)
    if dynamic_smem > 48 * 1024:
        _check(cu.cuFuncSetAttribute(
            func, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic_smem),
            "cuFuncSetAttribute")
    buffers = []
    values = []
    try:
        for pty, a in zip(param_types, args):
            if isinstance(a, DeviceArray):
                values.append(ctypes.c_uint64(a.ptr))
            elif isinstance(a, np.ndarray):
                host = np.ascontiguousarray(a)
                nbytes = max(1, host.nbytes)
                dptr = _check(cu.cuMemAlloc(nbytes), "cuMemAlloc")
                buffers.append((a, host, dptr))
                if host.nbytes:
                    _check(cu.cuMemcpyHtoD(dptr, host.ctypes.data, host.nbytes), "cuMemcpyHtoD")
                values.append(ctypes.c_uint64(int(dptr)))
            else:
                ctype = _SCALARS.get(pty, ctypes.c_uint32)
                if pty == ".b16" and isinstance(a, float):
                    a = int(np.array(a, dtype=np.float16).view(np.uint16))
                values.append(ctype(a))
        ptrs = (ctypes.c_void_p * max(1, len(values)))(*[ctypes.addressof(v) for v in values])

        def start_one():
            if cl != (1, 1, 1):
                _launch_ex(cu, func, (gx, gy, gz), block, dynamic_smem, ptrs, cl)
            else:
                _check(cu.cuLaunchKernel(func, gx, gy, gz, *block, dynamic_smem, 0,
                                         ctypes.addressof(ptrs), 0), "cuLaunchKernel")

        start_one()
        _check(cu.cuCtxSynchronize(), "kernel execution")
        for a, host, dptr in buffers:
            if host.nbytes:
                _check(cu.cuMemcpyDtoH(host.ctypes.data, dptr, host.nbytes), "cuMemcpyDtoH")
            if host is not a:
                a[...] = host
        if not timed_runs:
            return LaunchResult()
        times = time_launches(start_one, timed_runs)
        return LaunchResult(statistics.median(times), tuple(times))
    finally:
        for _, _, dptr in buffers:
            cu.cuMemFree(dptr)
