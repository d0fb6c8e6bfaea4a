"""Pass ``tile-legalize``: can this module be lowered for this target?

Two checks, both before any code is generated:

* element types the target lacks, with NVIDIA ``tileiras``' own wording
  ("Incompatibility with architecture 'sm_80': unsupported type
  'f8E4M3FN'", as tileiras 13.5 prints it for the corpus kernels in
  MANIFEST.tsv), at the first op using the type;
* ops the PTX lowering has no handler for: "the PTX lowering does not
  support '<op>' yet", at each such op (never a crash, never silent).
"""

from __future__ import annotations

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Severity
from tile_lsp.analysis.verify.frontend_contract import compute_capability_of
from tile_lsp.analysis.ir.core import Module, Operation

# the handler modules register themselves on import
from tile_lsp.codegen import ops_control, ops_elementwise, ops_memory, ops_shape  # noqa: F401
from tile_lsp.codegen.lower import HANDLERS
from tile_lsp.codegen.target import Target
from tile_lsp.dialect import types as T

INCOMPATIBLE = "Incompatibility with architecture '{arch}': unsupported type '{type}'"
UNSUPPORTED_OP = "the PTX lowering does not support '{op}' yet"


def module_target(module: Module | None) -> int | None:
    """Compute capability written in the module (``None``: not written)."""
    if module is None:
        return None
    for op in module.body.operations:
        cc = compute_capability_of(op)
        if cc is not None:
            return cc
        for inner in op.walk():
            if inner.name == "cuda_tile.entry":
                cc = compute_capability_of(inner)
                if cc is not None:
                    return cc
    return None


def entries(module: Module, kernel: str | None = None) -> list[Operation]:
    """The ``cuda_tile.entry`` ops of ``module`` (only ``kernel`` when given), in text order."""
    out = []
    for op in module.walk():
        if op.name == "cuda_tile.entry":
            name = op.attr("sym_name")
            if kernel is None or getattr(name, "value", None) == kernel:
                out.append(op)
    return out


def _element_types(t: T.Type):
    if isinstance(t, T.TileType):
        yield from _element_types(t.element)
    elif isinstance(t, T.PointerType):
        yield from _element_types(t.pointee)
    elif isinstance(t, (T.TensorViewType,)):
        yield from _element_types(t.element)
    elif isinstance(t, T.FloatType):
        yield t


def legalize(module: Module, kernels: list[Operation], target: Target) -> list[Diagnostic]:
    """Diagnostics of pass ``tile-legalize`` for ``kernels`` on ``target`` (empty: legal)."""
    out: list[Diagnostic] = []
    reported: set[str] = set()
    for entry in kernels:
        for op in entry.walk():
            if op is entry:
                continue
            # input is cuda_tile: the nv_tileas handlers lower what convert-to-nv-tileas makes, not user text
            if not op.name.startswith("cuda_tile.") or op.name.split(".", 1)[1] not in HANDLERS:
                out.append(Diagnostic(Severity.ERROR, UNSUPPORTED_OP.format(op=op.name), op.name_range or op.range,
                                      "lowering-unsupported-op", source="tile-lsp-ptx"))
            for v in list(op.results) + [a for r in op.regions for b in r.blocks for a in b.arguments]:
                for ft in _element_types(v.type):
                    if ft.name in target.unsupported_types and not reported:  # tileiras stops at the first
                        reported.add(ft.name)
                        out.append(Diagnostic(Severity.ERROR, INCOMPATIBLE.format(arch=target.name, type=ft.name),
                                              op.name_range or op.range, "lowering-target-type",
                                              source="tile-lsp-ptx"))
    return out
