"""The lowering pipeline: cuda_tile text -> verified IR -> annotated (layout) IR -> nv_tileas -> PTX.

Passes, in order (:data:`PASSES`; each is a function of its own module):

``verify-input`` (:mod:`tile_lsp.analysis`)
    parse and run every verifier; errors stop the pipeline.
``tile-legalize`` (:mod:`tile_lsp.codegen.legalize`)
    the target's element types (tileiras' "Incompatibility with
    architecture" rule) and ops the lowering supports.
``tile-assign-layouts`` (:mod:`tile_lsp.codegen.layouts`)
    CTA size per entry and the thread/slot distribution of tiles, recorded
    as discardable attributes (``tile_lsp.threads``, ``tile_lsp.slots``,
    ``tile_lsp.staging``) the ``layout`` stage prints.
``convert-to-nv-tileas`` (:mod:`tile_lsp.codegen.to_nv_tileas`)
    view loads and stores, MMA, reductions and scans as nv_tileas ops
    (``tiled_load``, ``tiled_store``, ``dot``, ``reduce``, ``scan``); the
    ``nv_tileas`` stage, which ``convert-to-ptx`` lowers.
``convert-to-ptx`` (:mod:`tile_lsp.codegen.emit`)
    the PTX module.

The pipeline is data: :data:`PIPELINE`, a list of pass objects that
:class:`~tile_lsp.codegen.passes.PassManager` runs; each pass is a thin
adapter over its module's function.  After ``tile-assign-layouts`` and
``convert-to-nv-tileas`` the between-pass verifier layer of spec 003
(:func:`tile_lsp.analysis.verify.layers.run_layer`) runs and its diagnostics name
the pass.  :func:`lower_text` is the one entry point of the CLI and the
language server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Severity
from tile_lsp.codegen.passes import KernelInfo, LoweringResult, LoweringState, OpCount, PassManager
from tile_lsp.codegen.target import TargetError, parse_gpu_name

if TYPE_CHECKING:
    from tile_lsp.analysis.incremental.results import DocumentAnalysis

__all__ = ["PASSES", "PIPELINE", "STAGES", "KernelInfo", "LoweringResult", "OpCount", "lower_text"]


# The passes import their modules when they run: importing the pipeline (the CLI, the server's
# command table) does not load the lowering.


@dataclass(frozen=True)
class VerifyInput:
    """``verify-input``: parse and verify the text (:func:`tile_lsp.analysis.api.analyze_text`) and
    choose the target (``gpu_name``, else the module's compute capability, else sm_90); any error stops.

    With the caller's analysis of the same text (``LoweringState.analysis``, one chunk: the
    editor's), its diagnostics are the input's and the passes rewrite a clone of its IR
    (:meth:`~tile_lsp.analysis.ir.core.Module.clone`): the text is not parsed again and the
    editor's IR stays as it is."""

    name: str = "verify-input"
    stage: str = "cuda_tile"
    verify_after: bool = False

    def run(self, state: LoweringState) -> str | None:
        from tile_lsp.analysis.api import AnalysisOptions, analyze_text
        from tile_lsp.analysis.ir.printer import print_module
        from tile_lsp.codegen import legalize

        given = state.analysis
        if given is not None and given.text == state.text and len(given.chunks) == 1:
            analysis = given
            module = given.chunks[0].module.clone() if given.chunks[0].module is not None else None
        else:
            analysis = analyze_text(state.text, AnalysisOptions())
            module = analysis.chunks[0].module if analysis.chunks else None
        errors = [d for d in analysis.diagnostics if d.severity == Severity.ERROR]
        try:
            state.result.target = parse_gpu_name(state.gpu_name or legalize.module_target(module))
        except TargetError as e:
            state.error(str(e), code="target")
            return None
        if errors or module is None:
            state.result.diagnostics.extend(errors)
            if not errors:
                state.error("nothing to lower: the input has no module")
            return None
        state.module = module
        state.op_names = {(op.range.start.line, op.range.start.character): op.name
                          for op in module.walk() if op.range is not None}
        return print_module(module)


@dataclass(frozen=True)
class Legalize:
    """``tile-legalize`` (:mod:`tile_lsp.codegen.legalize`): pick the entries to lower, and refuse
    element types the target lacks and ops without a lowering.  It changes no IR: its stage is the input's."""

    name: str = "tile-legalize"
    stage: str = "legal"
    verify_after: bool = False

    def run(self, state: LoweringState) -> str | None:
        from tile_lsp.codegen import legalize

        state.entries = legalize.entries(state.module, state.kernel)
        if not state.entries:
            state.error(f"no cuda_tile.entry named '{state.kernel}'" if state.kernel
                        else "the module has no cuda_tile.entry to lower")
            return None
        found = legalize.legalize(state.module, state.entries, state.result.target)
        state.result.diagnostics.extend(found)
        if any(d.severity == Severity.ERROR for d in found):
            return None
        return state.result.stages["cuda_tile"]


@dataclass(frozen=True)
class AssignLayouts:
    """``tile-assign-layouts`` (:mod:`tile_lsp.codegen.layouts`): CTA size and tile distributions,
    recorded as discardable attributes."""

    name: str = "tile-assign-layouts"
    stage: str = "layout"
    verify_after: bool = True

    def run(self, state: LoweringState) -> str | None:
        from tile_lsp.analysis.ir.printer import print_module
        from tile_lsp.codegen import layouts

        state.plans = layouts.assign_layouts(state.module, state.entries, state.result.target)
        return print_module(state.module)


@dataclass(frozen=True)
class ConvertToNvTileas:
    """``convert-to-nv-tileas`` (:mod:`tile_lsp.codegen.to_nv_tileas`): view accesses, MMA,
    reductions and scans rewritten as nv_tileas ops, in place."""

    name: str = "convert-to-nv-tileas"
    stage: str = "nv_tileas"
    verify_after: bool = True

    def run(self, state: LoweringState) -> str | None:
        from tile_lsp.analysis.ir.printer import print_module
        from tile_lsp.codegen import to_nv_tileas

        to_nv_tileas.convert_to_nv_tileas(state.entries)
        return print_module(state.module)


@dataclass(frozen=True)
class ConvertToPtx:
    """``convert-to-ptx`` (:mod:`tile_lsp.codegen.emit`): the PTX module; precision losses are warnings.
    The instructions counted per op become ``LoweringResult.op_counts``, named after the input's ops
    (``LoweringState.op_names``)."""

    name: str = "convert-to-ptx"
    stage: str = "ptx"
    verify_after: bool = False

    def run(self, state: LoweringState) -> str | None:
        from tile_lsp.codegen import emit

        result = state.result
        ptx, kernels, warnings, counts = emit.emit_module(state.module, state.entries, state.plans,
                                                          result.target, state.file_name)
        for op, message in warnings:
            result.diagnostics.append(Diagnostic(Severity.WARNING, message, op.range, "lowering-precision",
                                                 source="tile-lsp-ptx"))
        result.ptx = ptx
        result.kernels = kernels
        result.op_counts = {kernel: {pos: OpCount(state.op_names.get(pos, ""), n) for pos, n in sorted(ops.items())}
                            for kernel, ops in counts.items()}
        return ptx


#: The lowering pipeline, in order.
PIPELINE = PassManager([VerifyInput(), Legalize(), AssignLayouts(), ConvertToNvTileas(), ConvertToPtx()])
#: (pass name, stage it produces); the stage names are what ``tile-lsp lower --stage`` accepts.
PASSES = tuple((p.name, p.stage) for p in PIPELINE.passes)
STAGES = PIPELINE.stages


def lower_text(text: str, gpu_name: str | None = None, kernel: str | None = None,
               file_name: str = "input.mlir", stop_after: str | None = None,
               analysis: DocumentAnalysis | None = None) -> LoweringResult:
    """Lower the cuda_tile module in ``text`` to PTX for ``gpu_name`` (``sm_XX``).

    ``gpu_name`` ``None``: the module's compute capability
    (``nv_tileaa.compute_capability`` / ``tile_lsp.target``), else sm_90.
    ``kernel``: lower only that entry.  ``stop_after``: a :data:`STAGES` name.
    ``analysis``: the caller's analysis of ``text`` (the language server's of the
    document), lowered without parsing the text again (see :class:`VerifyInput`); its errors
    stop the lowering.  Never raises for bad input: problems are diagnostics.
    """
    return PIPELINE.run(LoweringState(text, file_name, gpu_name, kernel, analysis=analysis), stop_after)
