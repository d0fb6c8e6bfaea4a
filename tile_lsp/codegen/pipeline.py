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

After each pass that yields IR, the between-pass verifier layer of spec 003
(:func:`tile_lsp.analysis.layers.run_layer`) runs and its diagnostics name
the pass.  :func:`lower_text` is the one entry point of the CLI and the
language server.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tile_lsp.analysis.diagnostics import Diagnostic, Severity
from tile_lsp.codegen.ptx import LoweringError
from tile_lsp.codegen.target import Target, TargetError, parse_gpu_name

#: (pass name, stage it produces); the stage names are what ``tile-lsp lower --stage`` accepts.
PASSES = (
    ("verify-input", "cuda_tile"),
    ("tile-legalize", "legal"),
    ("tile-assign-layouts", "layout"),
    ("convert-to-nv-tileas", "nv_tileas"),
    ("convert-to-ptx", "ptx"),
)
STAGES = tuple(stage for _, stage in PASSES)


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


@dataclass
class LoweringResult:
    """Outcome of :func:`lower_text`.

    ``stages``: printed text of each stage reached (``cuda_tile``, ``legal``,
    ``layout``, ``nv_tileas``, ``ptx``); ``ptx``: the PTX module or ``None`` on error;
    ``diagnostics``: errors (and warnings) with ranges in the input text.
    """

    target: Target | None
    ptx: str | None = None
    kernels: list[KernelInfo] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stages: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.ptx is not None and not any(d.severity == Severity.ERROR for d in self.diagnostics)


def _error(message: str, rng=None, code: str = "lowering") -> Diagnostic:
    return Diagnostic(Severity.ERROR, message, rng, code, source="tile-lsp-ptx")


def _after_pass(result: LoweringResult, module, pass_name: str, stage: str, stop_after: str | None) -> bool:
    """Print ``stage`` and run the between-pass verifier layer naming ``pass_name`` on ``module``;
    true when the pipeline stops here (the layer failed, or ``stage`` is ``stop_after``)."""
    from tile_lsp.analysis.layers import run_layer
    from tile_lsp.analysis.printer import print_module

    result.stages[stage] = print_module(module)
    layer = run_layer(module, "between-pass", pass_name, sm=result.target.sm)
    result.diagnostics.extend(layer)
    return bool(layer) or stop_after == stage


def lower_text(text: str, gpu_name: str | None = None, kernel: str | None = None,
               file_name: str = "input.mlir", stop_after: str | None = None) -> LoweringResult:
    """Lower the cuda_tile module in ``text`` to PTX for ``gpu_name`` (``sm_XX``).

    ``gpu_name`` ``None``: the module's compute capability
    (``nv_tileaa.compute_capability`` / ``tile_lsp.target``), else sm_90.
    ``kernel``: lower only that entry.  ``stop_after``: a :data:`STAGES` name.
    Never raises for bad input: problems are diagnostics.
    """
    from tile_lsp.analysis.api import AnalysisOptions, analyze_text
    from tile_lsp.analysis.printer import print_module
    from tile_lsp.codegen import emit, layouts, legalize, to_nv_tileas

    analysis = analyze_text(text, AnalysisOptions())
    errors = [d for d in analysis.diagnostics if d.severity == Severity.ERROR]
    module = analysis.chunks[0].module if analysis.chunks else None
    try:
        target = parse_gpu_name(gpu_name or legalize.module_target(module))
    except TargetError as e:
        return LoweringResult(None, diagnostics=[_error(str(e), code="target")])
    result = LoweringResult(target)
    if errors or module is None:
        result.diagnostics = errors or [_error("nothing to lower: the input has no module")]
        return result
    result.stages["cuda_tile"] = print_module(module)
    if stop_after == "cuda_tile":
        return result

    entries = legalize.entries(module, kernel)
    if not entries:
        result.diagnostics.append(_error(f"no cuda_tile.entry named '{kernel}'" if kernel
                                         else "the module has no cuda_tile.entry to lower"))
        return result
    found = legalize.legalize(module, entries, target)
    result.diagnostics.extend(found)
    if any(d.severity == Severity.ERROR for d in found):
        return result
    result.stages["legal"] = result.stages["cuda_tile"]
    if stop_after == "legal":
        return result

    plans = layouts.assign_layouts(module, entries, target)
    if _after_pass(result, module, "tile-assign-layouts", "layout", stop_after):
        return result
    to_nv_tileas.convert_to_nv_tileas(entries)
    if _after_pass(result, module, "convert-to-nv-tileas", "nv_tileas", stop_after):
        return result

    try:
        ptx, kernels, warnings = emit.emit_module(module, entries, plans, target, file_name)
    except LoweringError as e:
        rng = e.op.range if e.op is not None else None
        result.diagnostics.append(_error(e.message, rng))
        return result
    for op, message in warnings:
        result.diagnostics.append(Diagnostic(Severity.WARNING, message, op.range, "lowering-precision",
                                             source="tile-lsp-ptx"))
    result.ptx = ptx
    result.kernels = kernels
    result.stages["ptx"] = ptx
    return result
