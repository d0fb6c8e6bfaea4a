"""Target-dependent checks and editor hints, off for ``--check`` and ``-verify-diagnostics``.

They read two fields of :class:`~tile_lsp.analysis.ir.options.AnalysisOptions`:
``target_sm`` (the compute capability the user targets, ``90`` for
``sm_90``; the language server's ``targetGpu`` setting) and
``editor_checks`` (set by the language server only).  Under ``mlir_compat``
none of them runs: ``cuda-tile-opt`` reports none of this.

* ``missing-compute-capability`` (warning, editor only): nv_tileas ops (IR
  bound to a target) where nothing names a compute capability
  (``nv_tileaa.compute_capability`` / ``nv_tileaa.target_spec`` on the
  builtin module, or an op's own ``compute_capability``) and no
  ``target_sm`` is set.  (A builtin module carrying ``tt.*`` /
  ``nv_tileaa.*`` kernel metadata is the frontend contract's to check.)  The text is the one tileiras ships, "Failed to get
  ComputeCapability" (spec 004 "Compute-Capability Attribute": its absence
  is fatal at ConvertTileFuncToLLVM).  Placed at the builtin module, else at
  the chunk's first nv_tileas op.
* ``param-space`` (error; with ``target_sm`` set, or in the editor): the
  module-level verifier layer's NVVM kernel-parameter check
  (:mod:`tile_lsp.analysis.verify.layers`, spec 003 "NVVM Parameter Verification")
  on each ``cuda_tile.entry``, for the compute capability the IR names, else
  ``target_sm``.
* ``missing-prefix`` (remark, shown as a hint; editor only, in text written
  for MLIR tools: ``AnalysisOptions.mlir_tool_input``, see
  :func:`is_mlir_tool_input`): a cuda_tile op written without its
  ``cuda_tile.`` prefix outside any cuda_tile op (at the top level of the
  file or of a builtin module).  tile-lsp accepts this form, which
  ``tileirdisasm`` prints, but MLIR's parser resolves a prefix-less name
  there in the builtin dialect (``builtin.module``'s default dialect), so
  ``cuda-tile-opt`` does not read it as the cuda_tile op.
* ``target-support`` (error; with ``target_sm`` set, or in the editor when
  the IR names a compute capability): what NVIDIA's ``tileiras`` refuses for
  that architecture (element types such as ``f8E4M3FN`` before sm_89, a
  bf16 ``addf`` atomic before sm_89), with tileiras' text ("Incompatibility
  with architecture 'sm_80': unsupported type 'f8E4M3FN'").  The rows and
  how each was observed are in :mod:`tile_lsp.dialect.targets`.  As
  tileiras, one error per ``cuda_tile.module`` (its first refused op in
  MLIR's post-order walk, operand types before result types), placed at
  that op; an ``entry`` outside any ``cuda_tile.module`` (``tileirdisasm``'s
  form) counts as a module of its own, so that each top-level op is checked
  on its own.  Only for the architectures tileiras compiles for.

Every check looks only at the op, its ancestors and what it contains, so
that the incremental analysis (:mod:`tile_lsp.analysis.incremental.units`) may reuse
the result of an unchanged top-level op.
"""

from __future__ import annotations

import re

from tile_lsp.analysis.ir.diagnostics import Severity
from tile_lsp.analysis.verify.frontend_contract import compute_capability_of
from tile_lsp.analysis.verify.frontend_contract import msg as contract_message
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.ir.split import word_in_line
from tile_lsp.analysis.verify.layers import MESSAGES as LAYER_MESSAGES
from tile_lsp.analysis.verify.layers import kernel_parameter_bytes, parameter_space_limit
from tile_lsp.analysis.verify.verifier import VerifyContext, post_order, rule
from tile_lsp.dialect import targets
from tile_lsp.dialect import types as T
from tile_lsp.dialect.registry import all_ops

#: Prefix of the ops of the cuda_tile dialect.
CUDA_TILE_PREFIX = "cuda_tile."

#: Text of the missing-prefix hint; ``{name}`` is the op's name without prefix.
MISSING_PREFIX_MESSAGE = ("'{name}' outside a cuda_tile op is read by MLIR as 'builtin.{name}'; "
                          "write 'cuda_tile.{name}'")


#: what marks a text written for MLIR tools: (a word, the pattern of a whole line holding it), and
#: ``expected-*`` anywhere.  The module comes first: where it is, it is usually the first line, and a
#: word found early saves searching the whole text for the others
_TOOL_LINES = (("cuda_tile.module", re.compile(r"[ \t]*cuda_tile\.module\b")),
               ("RUN:", re.compile(r"[ \t]*//[ \t]*RUN:")),
               ("-----", re.compile(r"[ \t]*//[ \t]*-----[ \t]*$")))
_EXPECTED = re.compile(r"expected-(?:error|warning|note|remark)")


def is_mlir_tool_input(text: str) -> bool:
    """Whether ``text`` is written for MLIR tools (``cuda-tile-opt``, ``mlir-opt``): it has a ``// RUN:``
    line, a ``// -----`` marker, an ``expected-*`` directive, or a ``cuda_tile.module`` written with
    its prefix at the start of a line.  ``tileirdisasm``'s output has none of these.

    The words are found by string search and only their lines matched: one regular expression
    anchored at every line start took 65 ms on a 50,000-line file without them, on each keystroke."""
    return mlir_tool_input_at(text) is not None


def mlir_tool_input_at(text: str, lo: int = 0, hi: int | None = None) -> int | None:
    """The offset of what makes ``text[lo:hi]`` (whole lines) written for MLIR tools (see
    :func:`is_mlir_tool_input`), or ``None``."""
    hi = len(text) if hi is None else hi
    for word, line in _TOOL_LINES:
        at = word_in_line(text, word, lambda start, end, line=line: line.match(text, start, end) is not None, lo, hi)
        if at is not None:
            return at
    m = _EXPECTED.search(text, lo, hi)
    return m.start() if m is not None else None


def _editor(ctx: VerifyContext) -> bool:
    options = ctx.options
    return options.editor_checks and not options.mlir_compat


def _target_sm(ctx: VerifyContext) -> int | None:
    sm = ctx.options.target_sm
    return sm if isinstance(sm, int) and not isinstance(sm, bool) else None


def written_without_prefix(op: Operation) -> bool:
    """Whether ``op`` (a cuda_tile op) was written without its ``cuda_tile.`` prefix.

    Read from the width of its name: ``entry`` is 5 columns wide, ``cuda_tile.entry`` 15.
    """
    r = op.name_range
    if op.generic or r is None or r.start.line != r.end.line or not op.name.startswith(CUDA_TILE_PREFIX):
        return False
    return r.end.character - r.start.character == len(op.name) - len(CUDA_TILE_PREFIX)


def outside_cuda_tile_ops(op: Operation) -> bool:
    """Whether no cuda_tile op encloses ``op`` (its parents are builtin modules or the file)."""
    parent = op.parent_op
    while parent is not None:
        if parent.name.startswith(CUDA_TILE_PREFIX):
            return False
        parent = parent.parent_op
    return True


@rule(*(op.full_name for op in all_ops() if op.dialect == "cuda_tile"), code="missing-prefix")
def missing_prefix(op: Operation, ctx: VerifyContext) -> None:
    """Hint at a prefix-less cuda_tile op outside every cuda_tile op (editor only)."""
    if not _editor(ctx) or not ctx.options.mlir_tool_input:
        return
    if not written_without_prefix(op) or not outside_cuda_tile_ops(op):
        return
    ctx.emit(op, Severity.REMARK, MISSING_PREFIX_MESSAGE.format(name=op.name[len(CUDA_TILE_PREFIX):]), None,
             op.name_range)


def _builtin_module_of(op: Operation) -> Operation | None:
    p: Operation | None = op
    while p is not None and p.name != "builtin.module":
        p = p.parent_op
    return p


def _names_target(op: Operation) -> bool:
    """Whether ``op`` or an op inside it carries a compute capability."""
    return compute_capability_of(op) is not None or any(
        compute_capability_of(inner) is not None for inner in op.walk())


#: Attribute namespaces of a tileiras module shell: a module carrying them is checked by the frontend
#: contract's own rule (:mod:`tile_lsp.analysis.verify.frontend_contract`), not here.
SHELL_NAMESPACES = ("tt.", "nv_tileaa.")


@rule("builtin.module", code="missing-compute-capability")
def module_compute_capability(op: Operation, ctx: VerifyContext) -> None:
    """A builtin module holding nv_tileas ops, without kernel metadata, that names no compute capability."""
    if not _editor(ctx) or _target_sm(ctx) is not None:
        return
    if op.parent_op is not None and _builtin_module_of(op.parent_op) is not None:
        return  # the outermost builtin module speaks for the file
    if any(name.startswith(SHELL_NAMESPACES) for name in list(op.attributes) + list(op.properties)):
        return
    if any(inner.name.startswith("nv_tileas.") for inner in op.walk()) and not _names_target(op):
        ctx.emit(op, Severity.WARNING, contract_message("compute_capability"), None, None)


def _outermost(op: Operation) -> Operation:
    while op.parent_op is not None:
        op = op.parent_op
    return op


@rule(*(op.full_name for op in all_ops() if op.dialect == "nv_tileas"), code="missing-compute-capability")
def nv_tileas_compute_capability(op: Operation, ctx: VerifyContext) -> None:
    """Outside any builtin module: the first nv_tileas op of its top-level op, when nothing there names
    the target."""
    if not _editor(ctx) or _target_sm(ctx) is not None or _builtin_module_of(op) is not None:
        return
    top = _outermost(op)
    # one walk per top-level op and verification run (the rule runs for each of its nv_tileas ops)
    memo: dict = ctx.__dict__.setdefault("_first_untargeted_nv_tileas", {})
    if id(top) not in memo:
        first = next((o for o in top.walk() if o.name.startswith("nv_tileas.")), None)
        memo[id(top)] = (top, None if _names_target(top) else first)
    if memo[id(top)][1] is not op:
        return
    ctx.emit(op, Severity.WARNING, contract_message("compute_capability"), None, None)


@rule("cuda_tile.entry", code="param-space")
def kernel_parameter_space(op: Operation, ctx: VerifyContext) -> None:
    """The module layer's kernel-parameter check for the IR's compute capability, else ``target_sm``."""
    if ctx.options.mlir_compat:
        return
    target = compute_capability_of(op)
    if target is None:
        target = _target_sm(ctx)
    elif not _editor(ctx) and _target_sm(ctx) is None:
        return  # the command line checks the layer only when asked for a target
    if target is None:
        return
    from tile_lsp.analysis.verify.rules.core import function_type

    ft = function_type(op)
    total = kernel_parameter_bytes(list(ft.inputs)) if ft is not None else None
    limit = parameter_space_limit(target)
    if total is not None and total > limit:
        ctx.emit(op, Severity.ERROR, LAYER_MESSAGES["param_overflow"].format(
            total=total, limit=limit, name=op.symbol_name or "", sm=target), None, None)


def _target_for(op: Operation, ctx: VerifyContext) -> int | None:
    """The compute capability the target-dependent checks of ``op`` use: the one the IR names, else
    ``target_sm``; ``None`` (no check) under ``mlir_compat`` and, on the command line, without
    ``target_sm`` (``--gpu-name``), so that a plain ``--check`` agrees with ``cuda-tile-opt``."""
    if ctx.options.mlir_compat:
        return None
    target = compute_capability_of(op)
    if target is None:
        return _target_sm(ctx)
    if not _editor(ctx) and _target_sm(ctx) is None:
        return None
    return target


def contained_types(t: object):
    """``t`` and every type nested in it (pointee, element, tensor view...), outer first."""
    if not isinstance(t, T.Type):
        return
    yield t
    fields = getattr(t, "__dataclass_fields__", None)
    for name in fields or ():
        value = getattr(t, name, None)
        if isinstance(value, T.Type):
            yield from contained_types(value)


def _atomic_element(op: Operation) -> str | None:
    vals = op.operand_group("arg" if op.name == "cuda_tile.atomic_rmw_tko" else "value")
    t = vals[0].type if vals else None
    return str(t.element) if isinstance(t, T.TileType) else None


def refused_by_tileiras(op: Operation, sm: int) -> tuple[Operation, str] | None:
    """The first op inside ``op`` (itself included) that tileiras refuses for ``sm`` and its message
    (see :mod:`tile_lsp.dialect.targets`), or ``None``."""
    if not targets.known_arch(sm):
        return None
    bad_types = targets.unsupported_types(sm)
    atomic_ops = {name for row in targets.UNSUPPORTED_ATOMICS for name in row.ops}
    from tile_lsp.analysis.verify.rules.memory import enum_case

    for inner in post_order(op):
        if bad_types:
            for value in (*inner.operands, *inner.results):
                for t in contained_types(getattr(value, "type", None)):
                    if isinstance(t, T.FloatType) and t.name in bad_types:
                        return inner, bad_types[t.name].message(sm)
        if inner.name in atomic_ops:
            row = targets.unsupported_atomic(sm, inner.name, enum_case(inner, "mode", "AtomicRMWMode"),
                                             _atomic_element(inner))
            if row is not None:
                return inner, row.message(sm)
    return None


@rule("cuda_tile.module", "cuda_tile.entry", code="target-support")
def target_support(op: Operation, ctx: VerifyContext) -> None:
    """tileiras' refusal of a type or an atomic for the target: once per ``cuda_tile.module`` (or per
    ``entry`` outside any)."""
    if op.name == "cuda_tile.entry" and any(
            p.name == "cuda_tile.module" for p in _ancestors(op)):
        return
    sm = _target_for(op, ctx)
    if sm is None:
        return
    found = refused_by_tileiras(op, sm)
    if found is not None:
        ctx.emit(found[0], Severity.ERROR, found[1], None, None)


def _ancestors(op: Operation):
    p = op.parent_op
    while p is not None:
        yield p
        p = p.parent_op
