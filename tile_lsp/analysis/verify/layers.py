"""The in-pipeline verifier layers (spec 003 "Pipeline Invariants and Verifiers") as a reusable API.

A lowering pipeline calls :func:`run_layer` around each pass:

* ``per-op`` (layer 1, OperationName verifiers): every op's own invariants
  (ODS, traits, op rules).  On failure the layer adds the pass-level
  diagnostic "pass failed; per-op verifier may have fired" with a note
  naming the pass.
* ``between-pass`` (layer 2, ``verify-each``): the full recursive verifier
  (per-op plus region and structural rules: terminators, dominance,
  symbols).  On failure: "between-pass verifier rejected IR after
  '<pass>'".
* ``module`` (layer 3, explicit verifier passes): whole-module rules with
  target context: the kernel metadata (a function carrying ``.entry``-only
  launch hints, or launched by a ``*.launch_func`` op, must be a kernel by one
  of four criteria: ``cuda_tile.entry``, ``nvvm.kernel``,
  ``nv_tileaa.kernel_spec``, ``cute.kernel``; see docs/spec-notes.md), then
  the NVVM kernel-parameter overflow check of every ``cuda_tile.entry``
  (argument sizes aligned and summed, compared with 4096 bytes before sm_90
  and 32760 bytes from sm_90 on).  On failure: "module verifier '<pass>'
  rejected IR".

:data:`ORDERING_INVARIANTS` and :func:`check_stage_order` hold the spec's
ordering table (which stage must run before which).

Each call returns the layer diagnostic first (at the anchor: the first
top-level op), then the underlying diagnostics unchanged; an empty list when
the layer accepts the module.  The underlying diagnostics are also attached
to the layer diagnostic as notes.  None of the spec 003 strings is shipped
(``verbatim-diagnostics.tsv``: in_tileiras=no), except that the shipped
libNVVM text of the parameter check starts "Formal parameter space
overflowed (", which tile-lsp uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Range, Severity
from tile_lsp.analysis.ir.core import Module
from tile_lsp.analysis.ir.options import AnalysisOptions
from tile_lsp.dialect import types as T

MESSAGES = {
    "per-op": "pass failed; per-op verifier may have fired",
    "between-pass": "between-pass verifier rejected IR after '{pass_name}'",
    "module": "module verifier '{pass_name}' rejected IR",
    "in_pass": "in pass '{pass_name}'",
    "param_overflow": "Formal parameter space overflowed ({total} bytes required, max {limit} bytes allowed) "
                      "in function {name} for sm_{sm}",
}

#: Parameter-space limit in bytes by compute capability (spec 003 "NVVM Parameter Verification").
PARAM_LIMIT_PRE_HOPPER = 4096
PARAM_LIMIT_HOPPER = 32760
HOPPER_SM = 90


def parameter_space_limit(sm: int) -> int:
    """Kernel parameter-space limit in bytes for compute capability ``sm`` (90 = sm_90)."""
    return PARAM_LIMIT_HOPPER if sm >= HOPPER_SM else PARAM_LIMIT_PRE_HOPPER


def kernel_argument_layout(t: T.Type) -> tuple[int, int] | None:
    """(size, ABI alignment) in bytes of a kernel argument type, ``None`` if unknown.

    Rank-0 tiles are their element; pointers are 8 bytes; integers and floats
    their width rounded up to whole bytes (``i1`` -> 1), alignment = size.
    """
    if isinstance(t, T.TileType):
        if t.rank != 0:
            return None
        t = t.element
    if isinstance(t, T.PointerType):
        return 8, 8
    width = T.bit_width(t)
    if width is None:
        return None
    size = max(1, (width + 7) // 8)
    return size, size


def kernel_parameter_bytes(arg_types: list[T.Type]) -> int | None:
    """Aligned cumulative size in bytes of a kernel's arguments, ``None`` if one is unknown."""
    total = 0
    for t in arg_types:
        layout = kernel_argument_layout(t)
        if layout is None:
            return None
        size, align = layout
        total = -(-total // align) * align + size
    return total


@dataclass(frozen=True)
class ParameterSpace:
    """A kernel's parameter-space use: ``total`` bytes (``None`` if an argument's layout is unknown),
    the target ``sm`` (``None`` if the module names none) and its ``limit`` in bytes (``None`` then)."""

    total: int | None
    sm: int | None
    limit: int | None


def parameter_space_use(entry) -> ParameterSpace | None:
    """Parameter bytes of a ``cuda_tile.entry`` against its target's limit (spec 003), ``None`` for other ops."""
    from tile_lsp.analysis.verify.frontend_contract import compute_capability_of
    from tile_lsp.analysis.verify.rules.core import function_type

    if entry.name != "cuda_tile.entry":
        return None
    ft = function_type(entry)
    total = kernel_parameter_bytes(list(ft.inputs)) if ft is not None else None
    sm = compute_capability_of(entry)
    return ParameterSpace(total, sm, parameter_space_limit(sm) if sm is not None else None)


def _verify_ops(module: Module, options, recursive: bool) -> list[Diagnostic]:
    from tile_lsp.analysis.verify.verifier import verify_module

    diagnostics = verify_module(module, options)
    if recursive:
        return diagnostics
    return [d for d in diagnostics if not (d.code or "").startswith("structure.")]


def _check_kernel_parameters(module: Module, sm: int | None) -> list[Diagnostic]:
    from tile_lsp.analysis.verify.frontend_contract import compute_capability_of
    from tile_lsp.analysis.verify.rules.core import function_type
    from tile_lsp.analysis.verify.verifier import op_location

    out = []
    for op in module.walk():
        if op.name != "cuda_tile.entry":
            continue
        target = sm if sm is not None else compute_capability_of(op)
        ft = function_type(op)
        if target is None or ft is None:
            continue
        total = kernel_parameter_bytes(list(ft.inputs))
        limit = parameter_space_limit(target)
        if total is not None and total > limit:
            out.append(Diagnostic(Severity.ERROR, MESSAGES["param_overflow"].format(
                total=total, limit=limit, name=op.symbol_name or "", sm=target), op_location(op),
                "layer.module.param-space", []))
    return out


#: Kernel identity (spec 003 "Layer-3 Example" names a four-criteria ``isKernelFunction``; spec 004 gives
#: them: a ``cuda_tile.entry``, or a function carrying one of these markers).
KERNEL_MARKERS = ("nvvm.kernel", "nv_tileaa.kernel_spec", "cute.kernel")
#: Function ops the module layer examines (besides ``cuda_tile.entry``).
FUNCTION_OPS = ("func.func", "llvm.func", "gpu.func")
#: Function attributes that project to ``.entry``-only PTX directives (spec 004 "Optional NVVM Directive
#: Hints"): a function carrying one is kernel-shaped.
KERNEL_SHAPED_ATTRIBUTES = ("nvvm.maxnreg", "nvvm.minctasm", "nvvm.maxclusterrank", "nvvm.blocksareclusters")

MESSAGES["kernel_marker"] = ("function '@{name}' carries {attrs}, which only a kernel has, but is not a kernel: "
                             "none of cuda_tile.entry, nvvm.kernel, nv_tileaa.kernel_spec, cute.kernel marks it "
                             "(it would be emitted as .func, not .entry)")
MESSAGES["launch_target"] = ("'{op}' launches '@{name}', which is not a kernel: none of cuda_tile.entry, "
                             "nvvm.kernel, nv_tileaa.kernel_spec, cute.kernel marks it")


def is_kernel(op) -> bool:
    """The four kernel-identity criteria: a ``cuda_tile.entry``, or ``nvvm.kernel`` /
    ``nv_tileaa.kernel_spec`` / ``cute.kernel`` on the function."""
    return op.name == "cuda_tile.entry" or any(op.attr(m) is not None for m in KERNEL_MARKERS)


def _check_kernel_metadata(module: Module) -> list[Diagnostic]:
    """Layer-3 kernel metadata (spec 003 "Layer-3 Example: Missing Kernel Metadata"): a function the
    pipeline treats as a kernel (it carries ``.entry``-only launch hints, or a ``*.launch_func`` op names it
    as its ``kernel``) must meet one of the kernel-identity criteria (:func:`is_kernel`)."""
    from tile_lsp.analysis.verify.verifier import op_location

    functions = {op.symbol_name: op for op in module.walk()
                 if (op.name in FUNCTION_OPS or op.name == "cuda_tile.entry") and op.symbol_name}
    out = []
    for op in functions.values():
        shaped = [a for a in KERNEL_SHAPED_ATTRIBUTES if op.attr(a) is not None]
        if shaped and not is_kernel(op):
            out.append(Diagnostic(Severity.ERROR, MESSAGES["kernel_marker"].format(
                name=op.symbol_name, attrs=", ".join(shaped)), op_location(op), "layer.module.kernel-metadata", []))
    for op in module.walk():
        target = op.attr("kernel") if op.name.endswith("launch_func") else None
        leaf = (target.nested[-1] if getattr(target, "nested", None) else getattr(target, "value", None)) \
            if target is not None else None
        callee = functions.get(leaf) if isinstance(leaf, str) else None
        if callee is not None and not is_kernel(callee):
            out.append(Diagnostic(Severity.ERROR, MESSAGES["launch_target"].format(op=op.name, name=leaf),
                                  op_location(op), "layer.module.kernel-metadata", []))
    return out


@dataclass(frozen=True)
class Layer:
    """One verifier layer: its spec 003 number, the message naming the pass, and its check.

    ``check(module, options, sm)`` returns the underlying diagnostics
    (``sm``: target compute capability override, ``None`` = read the module).
    """

    number: int
    name: str
    message: str
    check: Callable[[Module, object, int | None], list[Diagnostic]]
    doc: str


#: The three in-pipeline layers in the order the pass manager runs them (spec 003 "Verifier Layers").
LAYERS: dict[str, Layer] = {
    layer.name: layer for layer in (
        Layer(1, "per-op", MESSAGES["per-op"], lambda m, o, sm: _verify_ops(m, o, recursive=False),
              "OperationName verifiers: operand counts, types, region structure, op rules"),
        Layer(2, "between-pass", MESSAGES["between-pass"], lambda m, o, sm: _verify_ops(m, o, recursive=True),
              "full recursive verify() of the anchor after each pass (verify-each)"),
        Layer(3, "module", MESSAGES["module"],
              lambda m, o, sm: _check_kernel_metadata(m) + _check_kernel_parameters(m, sm),
              "explicit verifier passes: kernel metadata, NVVM kernel-parameter space"),
    )
}


def _anchor_range(module: Module) -> Range | None:
    ops = module.body.operations
    if not ops:
        return None
    r = ops[0].range or ops[0].name_range
    return r.at_start() if r else None


def run_layer(module: Module, layer_name: str, pass_name: str, options=None,
              sm: int | None = None) -> list[Diagnostic]:
    """Run verifier layer ``layer_name`` (a :data:`LAYERS` key) after pass ``pass_name``.

    Returns ``[]`` when the layer accepts ``module``; otherwise the layer's
    diagnostic naming the pass (code ``layer.<name>``, at the first top-level
    op, the underlying diagnostics as notes) followed by the underlying
    diagnostics.  ``options``: analysis options for the verifier (default:
    :class:`~tile_lsp.analysis.ir.options.AnalysisOptions`).  ``KeyError`` for an
    unknown layer name.
    """
    layer = LAYERS[layer_name]
    if options is None:
        options = AnalysisOptions()
    found = [d for d in layer.check(module, options, sm) if d.severity == Severity.ERROR]
    if not found:
        return []
    notes = [Note(d.message, d.range) for d in found]
    if layer.number == 1:
        notes.insert(0, Note(MESSAGES["in_pass"].format(pass_name=pass_name), _anchor_range(module)))
    head = Diagnostic(Severity.ERROR, layer.message.format(pass_name=pass_name), _anchor_range(module),
                      f"layer.{layer.name}", notes)
    return [head] + found


# ---------------------------------------------------------------------------
# Ordering invariants (spec 003 "Ordering Invariants")
# ---------------------------------------------------------------------------

#: (invariant, stage that must come first, stage that must come later).  Stages are labels a
#: pipeline assigns to its passes (a pass may carry several); spec 003 names them in prose only.
ORDERING_INVARIANTS: tuple[tuple[str, str, str], ...] = (
    ("Frontend conversion", "cuda_tile-to-tileaa", "tileaa-function-pass"),
    ("TileAA lowering", "tileaa-to-tileas", "tileas-to-llvm"),
    ("TileAA lowering", "tileaa-to-tileas", "tileas-to-nvgpu"),
    ("TileAS lowering", "tileas-to-llvm", "llvm-consumer"),
    ("TileIR semantic verification", "tileir-verify", "llvm-conversion"),
    ("NVVM verification", "kernel-metadata", "nvvm-verify"),
    ("NVVM verification", "address-space-conversion", "nvvm-verify"),
    ("Target serialization", "tileir-erased", "serialize"),
)


def check_stage_order(stages: list[set[str] | frozenset[str]]) -> list[str]:
    """Violated ordering invariants of a pipeline given as one stage-label set per pass, in order.

    Returns ``"<invariant>: '<first>' must run before '<later>'"`` for each
    invariant whose later stage occurs before any pass of its first stage
    (an invariant whose stages are both absent is not checked).
    """
    out = []
    for name, first, later in ORDERING_INVARIANTS:
        firsts = [i for i, s in enumerate(stages) if first in s]
        laters = [i for i, s in enumerate(stages) if later in s]
        if laters and (not firsts or laters[0] < firsts[0]):
            out.append(f"{name}: '{first}' must run before '{later}'")
    return out
