"""The frontend contract (spec 004 "Frontend Contract and Tile IR Emission") as checks on cuda_tile IR.

What a cuTile-style frontend must emit, beyond what the cuda_tile verifier
already enforces (entry without results and with rank-0 tile arguments,
power-of-two tile shapes: :mod:`tile_lsp.analysis.verify.rules.core` and the type
rules).

Registered verifier rules (silent on every corpus kernel):

* ``compute-capability``: a builtin module carrying tileiras kernel metadata
  (``tt.*`` / ``nv_tileaa.*`` attributes) without ``nv_tileaa.compute_capability``
  or ``nv_tileaa.target_spec``: "Failed to get ComputeCapability" (shipped);

* ``internal-dialect``: no op of an internal lowering dialect (nv_tileaa,
  nv_tileas, cute, cute_nvgpu, cutlass, nvgpu, nvvm, llvm) inside a
  ``cuda_tile.entry``: "nv_tileas is not legal at the bytecode boundary".
  A warning placed on the offending op; skipped under ``mlir_compat``
  (cuda-tile-opt does not check it).

Opt-in (:func:`check_frontend_contract`, because the corpus kernels are bare
``entry`` ops without the module shell and would all be flagged):

* the module shell: entries inside ``cuda_tile.module`` inside a builtin
  module carrying ``nv_tileaa.compute_capability`` (or the fallback
  ``nv_tileaa.target_spec = "sm_XX"``); missing both is reported with the
  shipped text "Failed to get ComputeCapability";
* the kernel-launch attributes ``tt.num_warps`` / ``tt.num_ctas`` /
  ``tt.num_stages`` (positive integers), ``tt.cluster_dim`` (three
  integers), launch attributes spelled under another namespace (silently
  ignored by tileiras);
* function attributes: ``nvvm.maxnreg`` / ``nvvm.minctasm`` /
  ``nvvm.maxclusterrank`` integers, ``nvvm.blocksareclusters`` only with
  cluster_dim (1, 1, 1), the synthesized ``nvvm.kernel`` /
  ``nv_tileaa.kernel_spec`` not emitted by the frontend;
* ``func.func`` instead of ``cuda_tile.entry`` (no ``.entry`` in the PTX).
"""

from __future__ import annotations

import re

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.diagnostics import Diagnostic, Severity
from tile_lsp.analysis.ir.core import Module, Operation
from tile_lsp.analysis.verify.verifier import VerifyContext, op_location, rule

#: Dialects internal to tileiras, illegal at the bytecode boundary (spec 004 "Dialect List").
INTERNAL_DIALECTS = ("nv_tileaa", "nv_tileas", "cute", "cute_nvgpu", "cutlass", "nvgpu", "nvvm", "llvm")

#: Compute capabilities of the spec 004 table (major * 10 + minor).
KNOWN_COMPUTE_CAPABILITIES = (70, 80, 89, 90, 100, 103, 120)

#: Module-level kernel-launch attributes (spec 004 "Kernel-Launch Attributes"): name -> kind.
LAUNCH_ATTRIBUTES = {"tt.num_warps": "int", "tt.num_ctas": "int", "tt.num_stages": "int",
                     "tt.cluster_dim": "int3"}
#: Function-level NVVM hints (spec 004 "Optional NVVM Directive Hints"): name -> kind.
NVVM_HINTS = {"nvvm.maxnreg": "int", "nvvm.minctasm": "int", "nvvm.maxclusterrank": "int",
              "nvvm.blocksareclusters": "unit"}
#: Attributes the pipeline synthesizes; a frontend should not emit them.
SYNTHESIZED = ("nvvm.kernel", "nv_tileaa.kernel_spec")

MESSAGES = {
    "internal_dialect": "'{op}' belongs to the internal dialect '{dialect}', which is not legal input: "
                        "a frontend must emit cuda_tile ops only",
    "compute_capability": "Failed to get ComputeCapability",
    "cc_type": "nv_tileaa.compute_capability must be an i32 of the form major * 10 + minor, but got {value}",
    "cc_unknown": "nv_tileaa.compute_capability {value} is not a known target ({known})",
    "target_spec": "nv_tileaa.target_spec must be a string of the form \"sm_XX\", but got {value}",
    "shell_module": "'{op}' must be nested in a cuda_tile.module inside a builtin module carrying the "
                    "kernel-launch attributes",
    "launch_int": "{name} must be a positive i32, but got {value}",
    "launch_int3": "{name} must be an array of three positive integers, but got {value}",
    "foreign_launch": "'{name}' is not read by tileiras (it reads tt.{field}); the default is used instead",
    "blocksareclusters": "nvvm.blocksareclusters requires tt.cluster_dim = [1, 1, 1]",
    "synthesized": "{name} is attached by the compiler; a frontend should not emit it",
    "func_kernel": "'func.func' is not a kernel: emit cuda_tile.entry (a func.func lowers to .func, not .entry)",
}

#: Ids using a shipped string (verbatim-diagnostics.tsv in_tileiras=yes); the others are tile-lsp's words.
SHIPPED_MESSAGES = frozenset({"compute_capability"})


def msg(mid: str, **fields) -> str:
    """The text of message ``mid`` with its fields filled in."""
    return MESSAGES[mid].format(**fields)


def dialect_of(op_name: str) -> str:
    """The dialect prefix of a full op name (``nv_tileas.async.copy`` -> ``nv_tileas``)."""
    return op_name.split(".", 1)[0]


def _int_value(a) -> int | None:
    v = getattr(a, "value", None)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _int_values(a) -> list[int] | None:
    if isinstance(a, A.DenseArrayAttr):
        return [int(v) for v in a.values]
    if isinstance(a, A.ArrayAttr):
        vals = [_int_value(x) for x in a.elements]
        return vals if all(v is not None for v in vals) else None
    return None


def _text(a) -> str:
    """An attribute as a message quotes it: its text, its value, or (a dialect attribute, whose value
    is what the builder decoded from it) as written."""
    if getattr(a, "dialect", None) is not None and getattr(a, "body", None) is not None:
        return str(a)
    return getattr(a, "text", None) or str(getattr(a, "value", a))


def _enclosing_builtin_module(op: Operation) -> Operation | None:
    p = op.parent_op
    while p is not None and p.name != "builtin.module":
        p = p.parent_op
    return p


def compute_capability_of(op: Operation) -> int | None:
    """Target compute capability for ``op``: its own ``compute_capability`` attribute, else the
    enclosing builtin module's ``nv_tileaa.compute_capability`` or ``nv_tileaa.target_spec``
    (``"sm_90"`` -> 90); ``None`` when none is written."""
    own = _int_value(op.attr("compute_capability"))
    if own is not None:
        return own
    p: Operation | None = op
    while p is not None:
        if p.name == "builtin.module":
            cc = _int_value(p.attr("nv_tileaa.compute_capability"))
            if cc is not None:
                return cc
            spec = getattr(p.attr("nv_tileaa.target_spec"), "value", None)
            m = re.fullmatch(r"sm_(\d+)[a-z]?", spec) if isinstance(spec, str) else None
            if m:
                return int(m.group(1))
        p = p.parent_op
    return None


def arch_conditional_target(op: Operation) -> bool:
    """Whether ``op`` targets an arch- or family-conditional variant: its own ``arch_conditional``
    attribute (unit or bool), else an enclosing module's ``nv_tileaa.target_spec`` with an ``a`` or
    ``f`` suffix (``"sm_100a"``)."""
    own = op.attr("arch_conditional")
    if own is not None:
        return isinstance(own, A.UnitAttr) or getattr(own, "value", None) is True
    p: Operation | None = op
    while p is not None:
        if p.name == "builtin.module":
            spec = getattr(p.attr("nv_tileaa.target_spec"), "value", None)
            if isinstance(spec, str) and re.fullmatch(r"sm_\d+[af]", spec):
                return True
        p = p.parent_op
    return False


#: Defaults of the kernel-launch attributes when absent (spec 004 "Kernel-Launch Attributes").
LAUNCH_DEFAULTS = {"tt.num_warps": 4, "tt.num_ctas": 1, "tt.cluster_dim": [1, 1, 1]}
#: Function-level NVVM hints -> the PTX directive each projects to (spec 004 "Optional NVVM Directive Hints").
NVVM_DIRECTIVES = {"nvvm.maxnreg": ".maxnreg", "nvvm.minctasm": ".minnctapersm",
                   "nvvm.maxclusterrank": ".maxclusterrank", "nvvm.blocksareclusters": ".blocksareclusters"}
#: First compute capability with thread-block clusters (``.reqnctapercluster``).
CLUSTER_SM = 90


def launch_directives(entry: Operation) -> list[tuple[str, str]]:
    """The PTX directives a kernel's launch attributes project to, as ``(directive, origin)`` pairs.

    Spec 004: ``tt.num_warps = N`` (default 4) -> ``.reqntid 32*N, 1, 1``;
    ``tt.cluster_dim = [X, Y, Z]`` (default [1, 1, 1]) -> ``.reqnctapercluster X, Y, Z``
    from sm_90 on, written only for a cluster other than [1, 1, 1] or when
    ``tt.num_ctas`` > 1; the entry's ``nvvm.*`` hints -> ``.maxnreg N``,
    ``.minnctapersm N``, ``.maxclusterrank N``, ``.blocksareclusters``.
    ``origin`` names the attribute, or says that the default applies.
    Attributes of the wrong kind are skipped (the contract checks report them).
    """
    mod = _enclosing_builtin_module(entry)

    def module_attr(name: str):
        return mod.attr(name) if mod is not None else None

    out: list[tuple[str, str]] = []
    warps = _int_value(module_attr("tt.num_warps"))
    origin = f"tt.num_warps = {warps}" if warps is not None else "tt.num_warps absent: default 4"
    warps = warps if warps is not None and warps > 0 else LAUNCH_DEFAULTS["tt.num_warps"]
    out.append((f".reqntid {32 * warps}, 1, 1", origin))
    dims = _int_values(module_attr("tt.cluster_dim")) if module_attr("tt.cluster_dim") is not None else None
    ctas = _int_value(module_attr("tt.num_ctas"))
    sm = compute_capability_of(entry)
    if (dims is not None and len(dims) == 3 and dims != [1, 1, 1]) or (ctas is not None and ctas > 1):
        cluster = dims if dims is not None and len(dims) == 3 else [ctas or 1, 1, 1]
        where = "tt.cluster_dim" if dims is not None else "tt.num_ctas"
        if sm is None or sm >= CLUSTER_SM:
            out.append((".reqnctapercluster " + ", ".join(map(str, cluster)), where))
        else:
            out.append(("(no cluster directive before sm_90)", where))
    for name, directive in NVVM_DIRECTIVES.items():
        a = entry.attr(name)
        if a is None:
            continue
        if name == "nvvm.blocksareclusters":
            out.append((directive, name))
        elif _int_value(a) is not None:
            out.append((f"{directive} {_int_value(a)}", name))
    return out


# ---------------------------------------------------------------------------
# Registered rule
# ---------------------------------------------------------------------------


@rule("cuda_tile.entry", code="frontend-internal-dialect")
def no_internal_dialect_ops(op: Operation, ctx: VerifyContext) -> None:
    """Warn on every internal-dialect op in an entry body (spec 004: not legal at the bytecode boundary)."""
    if ctx.options.mlir_compat:
        return
    for inner in op.walk():
        d = dialect_of(inner.name)
        if inner is not op and d in INTERNAL_DIALECTS:
            ctx.emit(inner, Severity.WARNING, msg("internal_dialect", op=inner.name, dialect=d), None, None)


#: Attribute namespaces of the kernel metadata a tileiras module shell carries (spec 004 tables).
SHELL_NAMESPACES = ("tt.", "nv_tileaa.")


@rule("builtin.module", code="frontend-compute-capability")
def compute_capability_present(op: Operation, ctx: VerifyContext) -> None:
    """A module written as tileiras input (kernel metadata under ``tt.*`` / ``nv_tileaa.*``) names its
    target: ``nv_tileaa.compute_capability`` or the fallback ``nv_tileaa.target_spec`` (spec 004
    "Compute-Capability Attribute"; without either, tileiras fails in ConvertTileFuncToLLVM with the
    shipped "Failed to get ComputeCapability").  Modules without such metadata (plain MLIR test
    files, the corpus kernels) are not checked.  Skipped under ``mlir_compat``."""
    if ctx.options.mlir_compat:
        return
    names = list(op.attributes) + list(op.properties)
    if not any(n.startswith(SHELL_NAMESPACES) for n in names):
        return
    if op.attr("nv_tileaa.compute_capability") is None and op.attr("nv_tileaa.target_spec") is None:
        ctx.error(op, msg("compute_capability"))  # emitError: no op prefix


# ---------------------------------------------------------------------------
# Opt-in checks
# ---------------------------------------------------------------------------


def _diag(op: Operation, severity: Severity, text: str) -> Diagnostic:
    return Diagnostic(severity, text, op_location(op), "frontend-contract", [])


def _attribute_kind_issue(name: str, kind: str, a, mod: Operation | None) -> str | None:
    """The message for attribute ``name`` of :data:`LAUNCH_ATTRIBUTES` / :data:`NVVM_HINTS` kind ``kind``
    holding ``a``, else ``None``: ``int`` a positive integer, ``int3`` three of them, ``unit``
    (``nvvm.blocksareclusters``) only with the module's ``tt.cluster_dim`` absent or (1, 1, 1)."""
    if kind == "int":
        v = _int_value(a)
        return msg("launch_int", name=name, value=_text(a)) if v is None or v <= 0 else None
    if kind == "int3":
        vs = _int_values(a)
        bad = vs is None or len(vs) != 3 or any(v <= 0 for v in vs)
        return msg("launch_int3", name=name, value=_text(a)) if bad else None
    dims = _int_values(mod.attr("tt.cluster_dim")) if mod is not None and mod.attr("tt.cluster_dim") else None
    return msg("blocksareclusters") if dims is not None and dims != [1, 1, 1] else None


def _check_attribute_kinds(op: Operation, table: dict[str, str], mod: Operation | None,
                           out: list[Diagnostic]) -> None:
    """An error on ``op`` for each attribute of ``table`` (name -> kind) it holds with a value of the wrong kind."""
    for name, kind in table.items():
        a = op.attr(name)
        if a is not None:
            issue = _attribute_kind_issue(name, kind, a, mod)
            if issue is not None:
                out.append(_diag(op, Severity.ERROR, issue))


def _check_launch_attributes(mod: Operation, out: list[Diagnostic]) -> None:
    _check_attribute_kinds(mod, LAUNCH_ATTRIBUTES, mod, out)
    fields = {n.split(".", 1)[1] for n in LAUNCH_ATTRIBUTES}
    for name in list(mod.attributes):
        ns, _, field = name.partition(".")
        if field in fields and ns not in ("tt",):
            out.append(_diag(mod, Severity.WARNING, msg("foreign_launch", name=name, field=field)))


def _check_compute_capability(mod: Operation | None, anchor: Operation, out: list[Diagnostic]) -> None:
    cc = mod.attr("nv_tileaa.compute_capability") if mod is not None else None
    spec = mod.attr("nv_tileaa.target_spec") if mod is not None else None
    if cc is None and spec is None:
        out.append(_diag(anchor, Severity.WARNING, msg("compute_capability")))
        return
    if cc is not None:
        v = _int_value(cc)
        if v is None:
            out.append(_diag(mod, Severity.ERROR, msg("cc_type", value=_text(cc))))
        elif v not in KNOWN_COMPUTE_CAPABILITIES:
            out.append(_diag(mod, Severity.WARNING, msg("cc_unknown", value=v,
                                                         known=", ".join(map(str, KNOWN_COMPUTE_CAPABILITIES)))))
    elif not (isinstance(getattr(spec, "value", None), str) and re.fullmatch(r"sm_\d+[a-z]?", spec.value)):
        out.append(_diag(mod, Severity.ERROR, msg("target_spec", value=_text(spec))))


def _check_function_attributes(fn: Operation, mod: Operation | None, out: list[Diagnostic]) -> None:
    _check_attribute_kinds(fn, NVVM_HINTS, mod, out)
    for name in SYNTHESIZED:
        if fn.attr(name) is not None:
            out.append(_diag(fn, Severity.WARNING, msg("synthesized", name=name)))


def check_frontend_contract(module: Module) -> list[Diagnostic]:
    """Opt-in spec 004 checks of a whole chunk; returns diagnostics in walk order (never raises).

    Errors for attribute values of the wrong kind, warnings for what
    tileiras silently defaults or ignores (missing compute capability,
    foreign launch namespaces, synthesized attributes, ``func.func`` kernels,
    entries outside the module shell).
    """
    out: list[Diagnostic] = []
    for op in module.walk():
        if op.name == "builtin.module":
            _check_launch_attributes(op, out)
        elif op.name == "cuda_tile.entry":
            parent = op.parent_op
            mod = _enclosing_builtin_module(op)
            if parent is None or parent.name != "cuda_tile.module" or mod is None:
                out.append(_diag(op, Severity.WARNING, msg("shell_module", op=op.name)))
            _check_compute_capability(mod, op, out)
            _check_function_attributes(op, mod, out)
        elif op.name == "func.func":
            out.append(_diag(op, Severity.WARNING, msg("func_kernel")))
    return out
