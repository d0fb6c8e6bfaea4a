"""The lowering's pass manager: what a pass is, what passes share, and how they run.

As MLIR's ``PassManager``: a :class:`PassManager` runs a list of
:class:`Pass` objects in order on one :class:`LoweringState`; after each pass
it records the stage the pass produced (``tile-lsp lower --stage``) and,
where the pass asks for it, runs the between-pass verifier layer of spec 003
(:func:`tile_lsp.analysis.verify.layers.run_layer`, "between-pass") naming the
pass.  A pass that finds an error, or a layer that fails, stops the
pipeline.  The passes themselves and the pipeline they form are in
:mod:`tile_lsp.codegen.pipeline`; this module imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Range, Severity
from tile_lsp.analysis.ir.core import Module, Operation
from tile_lsp.codegen.ptx import LoweringError
from tile_lsp.codegen.target import Target

if TYPE_CHECKING:
    from tile_lsp.analysis.incremental.results import DocumentAnalysis


@dataclass
class KernelInfo:
    """What a launcher needs to know of one generated ``.entry``.

    ``params``: (PTX parameter type, IR type text) per parameter in order;
    ``threads``: the CTA size (``.reqntid``); ``dynamic_smem``: bytes of
    dynamic shared memory to request at launch (0 when the kernel's staging
    buffer is static).
    """

    name: str
    params: list[tuple[str, str]]
    threads: int
    static_smem: int = 0
    dynamic_smem: int = 0


class OpCount(NamedTuple):
    """The PTX instructions of one source op: ``op``, its name in the input (``cuda_tile.mulf``,
    also when a pass rewrote it), and ``instructions``, how many the lowering emitted for it."""

    op: str
    instructions: int


@dataclass
class LoweringResult:
    """Outcome of :func:`tile_lsp.codegen.pipeline.lower_text`.

    ``stages``: printed text of each stage reached (``cuda_tile``, ``legal``,
    ``layout``, ``nv_tileas``, ``ptx``); ``ptx``: the PTX module or ``None`` on error;
    ``diagnostics``: errors (and warnings) with ranges in the input text.

    ``op_counts``: entry name -> {(line, character): :class:`OpCount`}, filled
    by ``convert-to-ptx``: the instructions each op of the input emitted, keyed
    by the 0-based start of the op's range in the input (the position its
    ``.loc`` names, less one in each).  Counted by
    :meth:`~tile_lsp.codegen.ptx.Function.emit` as it writes them (the PTX
    text is not read back); static, the instructions in the text, so an op in
    a loop body counts once.  The ops a pass made from one input op (an
    ``mmaf`` becomes staging stores and an ``nv_tileas.dot``) count together;
    the kernel's shared thread-index prologue, parameter loads and the
    ``ret`` added at the end of a body without one count for no op.  Ops that
    emitted nothing are absent.
    """

    target: Target | None
    ptx: str | None = None
    kernels: list[KernelInfo] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stages: dict[str, str] = field(default_factory=dict)
    op_counts: dict[str, dict[tuple[int, int], OpCount]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.ptx is not None and not any(d.severity == Severity.ERROR for d in self.diagnostics)


@dataclass
class LoweringState:
    """What the passes of one lowering share.

    ``text``, ``file_name``: the input; ``gpu_name`` (``sm_XX`` or ``None``)
    and ``kernel`` (one entry's name or ``None``) as the caller gave them;
    ``module``, ``entries`` (the ``cuda_tile.entry`` ops lowered) and
    ``plans`` (entry id -> :class:`~tile_lsp.codegen.layouts.KernelPlan`) are
    filled by the passes that compute them; ``result`` is what the caller
    gets (its ``target`` set by the first pass).  ``analysis``: an analysis of
    ``text`` the caller already has (the editor's); the first pass lowers a
    clone of its IR instead of analysing the text again.  ``op_names``: the
    (0-based line, character) of the start of each op of the input -> its name,
    recorded before any pass rewrites the IR (``LoweringResult.op_counts``
    names the input's ops).
    """

    text: str
    file_name: str
    gpu_name: str | None
    kernel: str | None
    analysis: DocumentAnalysis | None = None
    result: LoweringResult = field(default_factory=lambda: LoweringResult(None))
    module: Module | None = None
    entries: list[Operation] = field(default_factory=list)
    plans: dict = field(default_factory=dict)
    op_names: dict[tuple[int, int], str] = field(default_factory=dict)

    def error(self, message: str, rng: Range | None = None, code: str = "lowering") -> None:
        """Record an error of the lowering (source ``tile-lsp-ptx``) at ``rng``."""
        self.result.diagnostics.append(lowering_error(message, rng, code))


class Pass(Protocol):
    """One pass of the lowering.

    ``name``: the pass's name (MLIR style, ``tile-legalize``), which the
    between-pass verifier layer's diagnostics name; ``stage``: the stage it
    produces; ``verify_after``: whether the between-pass layer runs on the
    module after it.  :meth:`run` transforms ``state`` and returns the text
    of its stage (the printed IR, or the PTX), or ``None`` when the pipeline
    must stop (its diagnostics, in ``state.result``, say why).  It may raise
    :class:`~tile_lsp.codegen.ptx.LoweringError`, which becomes an error at
    the op named.
    """

    name: str
    stage: str
    verify_after: bool

    def run(self, state: LoweringState) -> str | None: ...


def lowering_error(message: str, rng: Range | None = None, code: str = "lowering") -> Diagnostic:
    """An error of the lowering (source ``tile-lsp-ptx``)."""
    return Diagnostic(Severity.ERROR, message, rng, code, source="tile-lsp-ptx")


class PassManager:
    """Runs ``passes`` in order on a :class:`LoweringState` (see the module's docstring)."""

    def __init__(self, passes: Sequence[Pass]):
        self.passes = tuple(passes)
        names = [p.stage for p in self.passes]
        if len(set(names)) != len(names):
            raise ValueError(f"two passes produce the same stage: {names}")

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages of the passes, in order."""
        return tuple(p.stage for p in self.passes)

    def run(self, state: LoweringState, stop_after: str | None = None) -> LoweringResult:
        """Run the passes on ``state`` until one stops, a between-pass layer fails or the stage
        ``stop_after`` (``None``: the last) is produced; returns ``state.result``.  Never raises
        for bad input: a :class:`~tile_lsp.codegen.ptx.LoweringError` becomes a diagnostic."""
        from tile_lsp.analysis.verify.layers import run_layer

        result = state.result
        for p in self.passes:
            try:
                text = p.run(state)
            except LoweringError as e:
                state.error(e.message, e.op.range if e.op is not None else None)
                return result
            if text is None:
                return result
            result.stages[p.stage] = text
            if p.verify_after:
                layer = run_layer(state.module, "between-pass", p.name, sm=result.target.sm)
                result.diagnostics.extend(layer)
                if layer:
                    return result
            if stop_after == p.stage:
                return result
        return result
