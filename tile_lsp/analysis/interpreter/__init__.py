"""A reference interpreter of cuda_tile on NumPy arrays: the oracle of the GPU tests.

:func:`run_kernel` runs one ``cuda_tile.entry`` of an analysed module (or of
Tile IR text) on NumPy arrays, for every tile block of a grid, one block
after the other (or concurrently, interleaved at memory operations, under a
seeded schedule).  It is independent of the PTX lowering it checks: the
semantics come from NVIDIA cuda-tile ``Ops.td`` and ``Types.td`` (see
:mod:`.ops`), the numerics from :mod:`.numerics`, memory from :mod:`.memory`.

::

    from tile_lsp.analysis.interpreter import run_kernel, infer_array_params, bind_arrays
    roles = infer_array_params(text, None)          # which parameter is which
    args = bind_arrays(roles, [x, y], scalars=[2.0])  # arrays -> (ptr, shape, strides)
    run_kernel(text, None, args, grid=(4, 1, 1))      # y is written in place

Errors (an op the interpreter does not know, an access outside every
buffer, a failed ``assert``, a bad argument list, IR with errors) raise
:class:`InterpreterError` with the op's line; no other exception escapes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tile_lsp.analysis.interpreter import memory_ops as _memory_ops  # noqa: F401  (fills the op table)
from tile_lsp.analysis.interpreter import ops as _ops  # noqa: F401  (fills the op table)
from tile_lsp.analysis.interpreter.engine import (
    Engine,
    InterpreterError,
    TensorView,
    TileView,
)
from tile_lsp.analysis.interpreter.params import (
    ParamRole,
    bind_arrays,
    entry_param_roles,
)
from tile_lsp.analysis.ir.core import Module

__all__ = [
    "Engine", "InterpreterError", "ParamRole", "TensorView", "TileView", "bind_arrays",
    "infer_array_params", "load_module", "run_kernel", "schedule_outcomes", "supported_ops",
]


def load_module(module) -> Module:
    """The IR :class:`~tile_lsp.analysis.ir.core.Module` of ``module``.

    ``module`` may be a Module, an analysis result (``analyze_text(...)`` or
    one of its chunks) or Tile IR text, which is analysed here; text or an
    analysis with errors raises :class:`InterpreterError` naming the first.
    """
    from tile_lsp.analysis.api import ChunkAnalysis, DocumentAnalysis, analyze_text
    from tile_lsp.analysis.ir.diagnostics import Severity

    if isinstance(module, Module):
        return module
    if isinstance(module, str):
        module = analyze_text(module)
    if isinstance(module, DocumentAnalysis):
        if len(module.chunks) != 1:
            raise InterpreterError(f"expected one module, got {len(module.chunks)} chunks")
        module = module.chunks[0]
    if isinstance(module, ChunkAnalysis):
        errors = [d for d in module.diagnostics if d.severity == Severity.ERROR]
        if errors:
            d = errors[0]
            raise InterpreterError(f"the module has errors: {d.message}", line=d.range.start.line + 1)
        if module.module is None:
            raise InterpreterError("nothing to run: the text has no IR")
        return module.module
    raise InterpreterError(f"cannot run a {type(module).__name__}; pass IR text or an analysed module")


def run_kernel(module, kernel: str | None, args: list, grid: tuple[int, int, int], *,
               memory=(), printed: list | None = None, max_loop_iterations: int = 10_000_000,
               schedule: int | None = None, unspecified: float = 0.0) -> None:
    """Run entry ``kernel`` of ``module`` on ``args`` for every tile block of ``grid``.

    ``module``: an analysed module or Tile IR text (:func:`load_module`).
    ``kernel``: the entry's name, ``None`` when the module has one entry.
    ``args``: one per entry parameter: a NumPy array for a ``tile<ptr<T>>``
    (the pointer is the address of its first byte; the kernel addresses it
    in bytes and stores write it in place), a number for a ``tile<iN>`` /
    ``tile<fN>``.  ``grid``: tile blocks in x, y, z.  ``memory``: more
    arrays the kernel may reach through addresses it reads from memory
    (``int_to_ptr`` of a list of arrays).  ``printed``: a list that receives
    the text of each ``print_tko``.  ``schedule``: ``None`` runs the tile
    blocks one after the other, ``-1`` the same in reverse order; another int
    runs them concurrently, interleaved at memory operations in the order
    that seed gives (``0``: lockstep round robin; see
    :class:`~.engine.BlockScheduler`).  ``unspecified``: what an
    out-of-bounds element of a view without padding value reads (0; run
    again with another value to find the results that depend on it).
    Raises :class:`InterpreterError`.
    """
    mod = load_module(module)
    eng = Engine(mod, max_loop_iterations=max_loop_iterations, unspecified=unspecified)
    try:
        eng.run(eng.find_entry(kernel), list(args), grid, memory, schedule)
    finally:
        if printed is not None:
            printed.extend(eng.printed)


#: Schedules every :func:`schedule_outcomes` runs: tile blocks one after the other, the same in reverse
#: order, in lockstep, and one random interleaving (lockstep can order contending blocks as the
#: sequential run does: split-K's lock).
BASE_SCHEDULES = (None, -1, 0, 1)
#: Seeds of the random interleavings :func:`schedule_outcomes` adds when the base schedules disagree.
RANDOM_SCHEDULES = (2, 3, 4, 5, 6, 7)


def schedule_outcomes(run: Callable[[int | None], list[np.ndarray]],
                      random_schedules: tuple[int, ...] = RANDOM_SCHEDULES) -> list[list[np.ndarray]]:
    """The distinct results of ``run(schedule)`` over the schedules that matter.

    ``run`` runs the kernel on fresh copies of its inputs under ``schedule``
    (see :func:`run_kernel`) and returns the arrays it may write.  The tile
    blocks run one after the other, in reverse order, in lockstep and in one
    random interleaving (:data:`BASE_SCHEDULES`); when those agree the kernel is
    taken as schedule-independent and one outcome is returned, otherwise the
    random interleavings of ``random_schedules`` are added.  Outcomes are compared bit for bit (NaNs
    equal).  A kernel whose result depends on the schedule has one correct
    result per order of its blocks' memory operations (a GPU runs blocks at
    once): an element is right when it equals that element of any outcome.
    """
    def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
        return all(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc") for x, y in zip(a, b))

    outcomes: list[list[np.ndarray]] = []
    for s in BASE_SCHEDULES:
        o = run(s)
        if not any(same(o, p) for p in outcomes):
            outcomes.append(o)
    if len(outcomes) == 1:
        return outcomes
    for s in random_schedules:
        o = run(s)
        if not any(same(o, p) for p in outcomes):
            outcomes.append(o)
    return outcomes


def infer_array_params(module, kernel: str | None = None) -> list[ParamRole]:
    """The role of each parameter of entry ``kernel`` (see :mod:`.params`): pointer, shape, stride or scalar."""
    eng = Engine(load_module(module))
    return entry_param_roles(eng.find_entry(kernel))


def supported_ops() -> frozenset[str]:
    """Names (without ``cuda_tile.``) of the ops the interpreter executes."""
    from tile_lsp.analysis.interpreter.engine import OPS
    return frozenset(OPS)
