"""Execution engine of the reference interpreter: values, regions, control flow, tile blocks.

The engine walks the IR of one ``cuda_tile.entry`` per tile block of the
grid, by default blocks one after the other (x fastest, then y, then z).
With a ``schedule`` (:meth:`Engine.run`) the blocks run concurrently,
interleaved at their memory operations (:class:`BlockScheduler`): on a GPU
the tile blocks of a grid run at once, and a kernel whose blocks touch the
same memory (a data race between blocks, or atomics whose final value
depends on their order) has several correct results, one per schedule.  Each op is
executed by the handler registered for its name in :data:`OPS` (filled by
:mod:`.ops`); a handler gets the engine, the op and the environment (SSA
value -> runtime value) and returns the op's results, or a :class:`Signal`
for a terminator.  Structured control flow (``for``, ``loop``, ``if``,
``break``, ``continue``, ``yield``, ``return``) follows Ops.td: ``break`` and
``continue`` inside an ``if`` leave every enclosing ``if`` up to the
innermost loop.

Runtime values: tiles are NumPy arrays (see :mod:`.numerics`), tokens are
``None``, views are :class:`TensorView` / :class:`TileView`.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tile_lsp.analysis.interpreter.arguments import bind_arguments, load_globals
from tile_lsp.analysis.interpreter.errors import InterpreterError
from tile_lsp.analysis.interpreter.memory import Memory, MemoryFault
from tile_lsp.analysis.ir.core import Block, Module, Operation, Region
from tile_lsp.dialect import types as T


@dataclass
class Signal:
    """How a block ended: ``kind`` is ``yield``, ``continue``, ``break``, ``return`` or ``end``."""

    kind: str
    values: list = field(default_factory=list)


@dataclass
class TensorView:
    """A ``tensor_view``: base byte address, shape and strides in elements, element dtype."""

    base: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: np.dtype
    element: T.Type


@dataclass
class TileView:
    """A partition, strided or gather/scatter view over a :class:`TensorView`.

    ``kind``: ``partition``, ``strided`` or ``gather_scatter``; ``dim_map[i]``
    is the tensor dimension of tile dimension ``i``; ``steps[i]`` the distance
    in elements between consecutive tiles along tile dimension ``i`` (the tile
    size for a partition view, the traversal stride for a strided view);
    ``padding`` the padding value name or ``None``.
    """

    kind: str
    tensor: TensorView
    tile_shape: tuple[int, ...]
    dim_map: tuple[int, ...]
    steps: tuple[int, ...]
    padding: str | None
    sparse_dim: int | None = None

    def index_space(self) -> tuple[int, ...]:
        """Shape of the view's index space (Types.td ``partition_view``/``strided_view``)."""
        out = []
        for i, t in enumerate(self.tile_shape):
            extent = self.tensor.shape[self.dim_map[i]]
            if self.kind == "gather_scatter" and i == self.sparse_dim:
                out.append(extent)
            else:
                out.append(-(-extent // self.steps[i]) if self.steps[i] else 0)
        return tuple(out)


Handler = Callable[["Engine", Operation, dict], Any]

# op short name -> handler; filled by tile_lsp.analysis.interpreter.ops
OPS: dict[str, Handler] = {}


def op(*names: str):
    """Register the decorated function as the handler of the cuda_tile ops ``names``."""
    def deco(fn: Handler) -> Handler:
        for n in names:
            OPS[n] = fn
        return fn
    return deco


#: ops that read or write global memory: the points where concurrent tile blocks are interleaved
MEMORY_OPS = frozenset({"load_view_tko", "store_view_tko", "load_ptr_tko", "store_ptr_tko", "atomic_rmw_tko",
                        "atomic_cas_tko", "atomic_red_view_tko"})


class _Aborted(BaseException):
    """Raised in a waiting tile block when another block of the grid failed (a BaseException, so that
    no op handler's ``except Exception`` turns it into an error of that block)."""


class BlockScheduler:
    """Runs the tile blocks of a grid concurrently, one at a time, switching at memory operations.

    Each block runs on its own thread, but only the block holding the baton
    executes; before each op of :data:`MEMORY_OPS` it passes the baton on.
    ``seed`` chooses the next block: ``0`` is lockstep round robin (block
    ``k`` does its ``n``-th memory operation after every block before it did
    its ``n``-th: what a GPU does when all blocks are resident, roughly), any
    other value a seeded random choice among the blocks still running.  The
    same seed gives the same interleaving.  Memory operations are atomic at
    tile granularity (a whole tile is loaded or stored in one step): this
    models the order of operations between blocks, not the order of elements
    within one operation.  The first exception of any block stops the run and
    is re-raised by :meth:`run`.
    """

    def __init__(self, seed: int):
        self.seed = seed
        self._rng = random.Random(seed)
        self._cond = threading.Condition()
        self._turn: int | None = None
        self._live: list[int] = []
        self._error: BaseException | None = None

    def _pick_after(self, me: int) -> int | None:
        """The block to run after block ``me`` (which may have finished); caller holds the lock."""
        if not self._live:
            return None
        if self.seed == 0:
            later = [b for b in self._live if b > me]
            return later[0] if later else self._live[0]
        return self._rng.choice(self._live)

    def switch(self, me: int) -> None:
        """Called by block ``me`` before a memory operation: let the schedule pick who runs next."""
        with self._cond:
            self._turn = self._pick_after(me)
            self._cond.notify_all()
            self._wait(me)

    def _wait(self, me: int) -> None:
        while self._turn != me and self._error is None:
            self._cond.wait()
        if self._error is not None:
            raise _Aborted()

    def run(self, bodies: list[Callable[[], None]]) -> None:
        """Run ``bodies`` (one per tile block, in grid order) to completion under the schedule."""
        def worker(i: int, body: Callable[[], None]) -> None:
            try:
                with self._cond:
                    self._wait(i)
                with np.errstate(all="ignore"):
                    body()
            except _Aborted:
                return
            except BaseException as e:  # noqa: BLE001 - handed to the caller of run()
                with self._cond:
                    if self._error is None:
                        self._error = e
                    self._cond.notify_all()
                return
            with self._cond:
                self._live.remove(i)
                self._turn = self._pick_after(i)
                self._cond.notify_all()

        self._live = list(range(len(bodies)))
        self._turn = 0 if bodies else None
        threads = [threading.Thread(target=worker, args=(i, b), daemon=True) for i, b in enumerate(bodies)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self._error is not None:
            raise self._error


class Engine:
    """Runs entries of one analysed module.

    ``printed`` collects the text of every executed ``print_tko``;
    ``max_loop_iterations`` bounds each ``for``/``loop`` (a kernel that spins
    forever, e.g. on a lock no block releases, gets an :class:`InterpreterError`);
    ``unspecified``: the value an out-of-bounds element of a view without
    padding value reads (Types.td leaves it unspecified).
    """

    def __init__(self, module: Module, max_loop_iterations: int = 10_000_000, unspecified: float = 0.0):
        self.module = module
        self.max_loop_iterations = max_loop_iterations
        self.unspecified = unspecified
        self.printed: list[str] = []
        self.memory = Memory()
        self._block = threading.local()
        self._scheduler: BlockScheduler | None = None
        self.grid = (1, 1, 1)
        self.globals: dict[str, int] = {}
        self.cache: dict[int, Any] = {}  # per-op constant data (keyed by id(op))

    @property
    def block_id(self) -> tuple[int, int, int]:
        """The (x, y, z) index of the tile block being executed (per thread under a schedule)."""
        return getattr(self._block, "id", (0, 0, 0))

    @block_id.setter
    def block_id(self, value: tuple[int, int, int]) -> None:
        self._block.id = value

    # -- entry points ---------------------------------------------------------

    def entries(self) -> list[Operation]:
        """The ``cuda_tile.entry`` ops: top level or inside a ``cuda_tile.module``."""
        return [o for o in self._scope_ops() if o.name == "cuda_tile.entry"]

    def _scope_ops(self) -> list[Operation]:
        out: list[Operation] = []
        for top in self.module.body.operations:
            if top.name in ("cuda_tile.module", "builtin.module"):
                for r in top.regions:
                    for b in r.blocks:
                        for o in b.operations:
                            if o.name == "cuda_tile.module":
                                out.extend(x for r2 in o.regions for b2 in r2.blocks for x in b2.operations)
                            else:
                                out.append(o)
            else:
                out.append(top)
        return out

    def find_entry(self, kernel: str | None) -> Operation:
        """The entry named ``kernel`` (``None``: the only entry); raises :class:`InterpreterError`."""
        entries = self.entries()
        if kernel is None:
            if len(entries) != 1:
                names = ", ".join(e.symbol_name or "?" for e in entries) or "none"
                raise InterpreterError(f"the module has {len(entries)} entries ({names}); name the kernel")
            return entries[0]
        for e in entries:
            if e.symbol_name == kernel:
                return e
        names = ", ".join(e.symbol_name or "?" for e in entries) or "none"
        raise InterpreterError(f"no entry named '{kernel}' (entries: {names})")

    def run(self, entry: Operation, args: list, grid: tuple[int, int, int], extra_memory=(),
            schedule: int | None = None) -> None:
        """Run ``entry`` on ``args`` for every tile block of ``grid``.

        ``schedule``: ``None`` runs the blocks one after the other (x fastest),
        ``-1`` one after the other in reverse order; another int runs them
        concurrently under :class:`BlockScheduler` with that seed (``0``:
        lockstep round robin).
        """
        grid = tuple(int(g) for g in grid)
        if len(grid) != 3 or any(g < 1 for g in grid):
            raise InterpreterError(f"grid must be three positive sizes, got {grid}")
        self.grid = grid  # type: ignore[assignment]
        for i, a in enumerate(extra_memory):
            try:
                self.memory.register(a, f"memory[{i}]")
            except (TypeError, ValueError) as e:
                raise InterpreterError(str(e)) from None
        load_globals(self.memory, self.globals, self._scope_ops())
        body = entry.regions[0].blocks[0] if entry.regions and entry.regions[0].blocks else None
        if body is None:
            raise InterpreterError("entry has no body", entry)
        bound = bind_arguments(self.memory, entry, body, args)
        blocks = [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]

        def run_block(index: int, block_id: tuple[int, int, int]) -> None:
            self.block_id = block_id
            self._block.index = index
            sig = self.exec_block(body, dict(zip(body.arguments, bound)))
            if sig.kind not in ("return", "end"):
                raise InterpreterError(f"entry body ended with '{sig.kind}'", entry)

        if schedule is None or schedule == -1 or len(blocks) == 1:
            order = list(enumerate(blocks))
            with np.errstate(all="ignore"):
                for i, b in reversed(order) if schedule == -1 else order:
                    run_block(i, b)
            return
        self._scheduler = BlockScheduler(schedule)
        try:
            self._scheduler.run([lambda i=i, b=b: run_block(i, b) for i, b in enumerate(blocks)])
        finally:
            self._scheduler = None

    # -- execution ------------------------------------------------------------

    def exec_block(self, block: Block, env: dict) -> Signal:
        """Execute ``block``'s ops in order; returns the signal of its terminator."""
        sched = self._scheduler
        for o in block.operations:
            handler = OPS.get(o.short_name) if o.dialect == "cuda_tile" else None
            if handler is None:
                raise InterpreterError(f"operation '{o.name}' is not supported by the interpreter", o)
            if sched is not None and o.short_name in MEMORY_OPS:
                sched.switch(self._block.index)
            try:
                res = handler(self, o, env)
            except InterpreterError:
                raise
            except MemoryFault as e:
                raise InterpreterError(f"memory fault: {e}", o) from None
            except Exception as e:  # noqa: BLE001 - never a bare exception out of a bad kernel
                raise InterpreterError(f"cannot execute: {type(e).__name__}: {e}", o) from None
            if isinstance(res, Signal):
                return res
            if res is not None:
                for r, v in zip(o.results, res):
                    env[r] = v
        return Signal("end")

    def run_region(self, region: Region, args: list, env: dict) -> Signal:
        """Bind ``args`` to the entry block of ``region`` and execute it."""
        if not region.blocks:
            return Signal("end")
        block = region.blocks[0]
        for a, v in zip(block.arguments, args):
            env[a] = v
        return self.exec_block(block, env)

    def call_body(self, o: Operation, args: list, env: dict) -> list:
        """Values yielded by the single-block body of ``reduce``/``scan`` ``o`` for ``args``."""
        sig = self.run_region(o.regions[0], args, env)
        if sig.kind != "yield":
            raise InterpreterError(f"body ended with '{sig.kind}' instead of 'yield'", o)
        return sig.values


def operand(env: dict, o: Operation, i: int):
    """Runtime value of operand ``i`` of ``o``."""
    return env[o.operands[i]]


def group(env: dict, o: Operation, name: str) -> list:
    """Runtime values of ODS operand group ``name`` of ``o``."""
    return [env[v] for v in o.operand_group(name)]
