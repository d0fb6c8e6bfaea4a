"""Debug-info scope rules of functions, their operations and module-level operations.

Rule source: NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``,
``DebugInfoVerifier``, run by ``EntryOp::verify`` (``verifyFuncDebugInfo``:
rules 6, 1, 2), ``EntryOp::verifyRegions`` (``verifyFuncBodyDebugInfo``:
rules 3, 4) and ``cuda_tile::ModuleOp::verify`` (rule 5):

1. a function with a debug-info scope has a ``di_subprogram`` scope;
2. whose linkage name is the function's name;
3. the operations of a function without scope have none;
4. an operation's scope belongs to its function's subprogram;
5. the operations of a module other than functions have no scope;
6. a function's location is not a call site.

NVIDIA emits these at the operation's location; when that location carries
a ``FileLineColLoc`` (inside a ``di_loc``, a call site, a fused or a name
location), ``cuda-tile-opt`` prints the diagnostic there and adds a
``called from`` note per caller of a call-site location.  The diagnostics
below go to the same places, read in the chunk
(:func:`tile_lsp.analysis.ir.debuginfo.shown_range`), and to the op's name
when the location has no position in the document.
"""

from __future__ import annotations

from tile_lsp.analysis.ir import debuginfo as D
from tile_lsp.analysis.ir.diagnostics import Note, Range
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.verifier import VerifyContext, op_location, post_order, region_rule, rule

#: the function ops that run NVIDIA's ``verifyFuncDebugInfo`` / ``verifyFuncBodyDebugInfo``
FUNCTION_DEBUG_INFO_OPS = ("cuda_tile.entry",)

MESSAGES = {
    "callsite": "invalid function debug info location: {loc}. Function location must not be a CallSiteLoc.",
    "not_subprogram": ("invalid function debug info scope: {scope}. Function location must have "
                       "cuda_tile.di_subprogram debug info scope."),
    "linkage": ('invalid function debug info scope: {scope}. Function name "{name}" does not match '
                "subprogram scope linkage name {linkage}."),
    "no_function_scope": ("invalid operation debug info scope: {scope}. Operation has debug info scope, "
                          "but function debug info scope is undefined."),
    "mismatch": ("invalid operation debug info scope: {scope}. Operation debug info scope does not match "
                 "function debug info scope: {function_scope}."),
    "global": "invalid operation debug info scope: {loc}. Global variables must not have scope.",
}


def line_span(ctx: VerifyContext) -> tuple[int, int | None] | None:
    """Lines of the document the chunk spans, for reading ``FileLineColLoc`` positions.

    ``Module.line_span`` (first, last; 0-based) when the builder records it;
    otherwise, when the document is not split, from its first line to the
    last line any operation or alias definition reaches; else unknown.
    """
    span = getattr(ctx.module, "line_span", None)
    if span is not None:
        return span
    if ctx.options.split_input_file:
        return None
    ranges = [op.range for op in ctx.module.body.operations]
    ranges += [a.range for a in ctx.module.attr_aliases.values()]
    last = max((r.end.line for r in ranges if r is not None), default=0)
    return (0, last)


def _where(op: Operation, loc: D.Loc | None, ctx: VerifyContext) -> tuple[Range | None, list[Note]]:
    """Position and ``called from`` notes of a diagnostic at ``op`` whose location is ``loc``."""
    span = line_span(ctx)
    rng = D.shown_range(loc, span)
    if rng is None:
        return op_location(op), []
    notes = [Note("called from", D.shown_range(caller, span)) for caller in D.call_stack(loc)]
    return rng, notes


def _report(ctx: VerifyContext, op: Operation, loc: D.Loc | None, message: str, *, op_prefix: bool) -> None:
    rng, notes = _where(op, loc, ctx)
    text = f"'{op.name}' op {message}" if op_prefix else message
    ctx.error(op, text, notes=notes, rng=rng)


def _is_function(op: Operation) -> bool:
    return op.opdef is not None and op.opdef.has_trait("FunctionOpInterface")


@rule(*FUNCTION_DEBUG_INFO_OPS)
def function_debug_info(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``DebugInfoVerifier::verifyFunc`` (rules 6, 1, 2).

    ``EntryOp::verify`` runs it after the signature checks and before the
    optimization hints.
    """
    dec = D.decoder_for(ctx.module)
    loc = dec.location(op.location)
    if isinstance(loc, D.CallSiteLoc):
        _report(ctx, op, loc, MESSAGES["callsite"].format(loc=loc), op_prefix=True)
    di_loc = D.get_di_loc(loc)
    if di_loc is None:
        return
    subprogram = di_loc.scope
    if not isinstance(subprogram, D.DISubprogram):
        _report(ctx, op, loc, MESSAGES["not_subprogram"].format(scope=subprogram), op_prefix=True)
        return
    name = op.symbol_name or ""
    if subprogram.linkage_name != name:
        _report(ctx, op, loc, MESSAGES["linkage"].format(scope=subprogram, name=name,
                                                         linkage=D.quote(subprogram.linkage_name)),
                op_prefix=True)


@region_rule(*FUNCTION_DEBUG_INFO_OPS)
def function_body_debug_info(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``DebugInfoVerifier::verifyFuncBody`` (rules 3, 4), first failing op only."""
    dec = D.decoder_for(ctx.module)
    fn_di = D.get_di_loc(dec.location(op.location))
    fn_subprogram = D.get_subprogram(fn_di.scope) if fn_di is not None else None
    for inner in post_order(op):
        loc = dec.location(inner.location)
        di_loc = D.get_di_loc(loc)
        subprogram = D.get_subprogram(di_loc.scope) if di_loc is not None else None
        if subprogram is None:
            continue
        if fn_subprogram is None:
            _report(ctx, inner, loc, MESSAGES["no_function_scope"].format(scope=subprogram), op_prefix=True)
        if subprogram != fn_subprogram:
            _report(ctx, inner, loc, MESSAGES["mismatch"].format(scope=subprogram, function_scope=fn_subprogram),
                    op_prefix=False)


@rule("cuda_tile.module")
def module_debug_info(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``DebugInfoVerifier::verifyModule`` (rule 5), run by ``ModuleOp::verify``."""
    dec = D.decoder_for(ctx.module)
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                if _is_function(child):
                    continue
                loc = dec.location(child.location)
                di_loc = D.get_di_loc(loc)
                if di_loc is not None:
                    _report(ctx, child, loc, MESSAGES["global"].format(loc=di_loc), op_prefix=True)
