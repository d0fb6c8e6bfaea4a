"""Rules of the core ops: global, get_global, entry, testing$func, return, assume, print_tko.

Rule source: NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``
(``GlobalOp::verify``, ``GetGlobalOp::verifySymbolUses``, ``EntryOp::verify``,
``ReturnOp::verify``, ``AssumeOp::verify``, ``PrintTkoOp::verify``),
``lib/Dialect/CudaTile/IR/Attributes.cpp`` (``DivByAttr``/``SameElementsAttr``/
``BoundedAttr::verifyWithAssumeOp``, ``OptimizationHintsAttr::verifyWithOp``)
and ``include/cuda_tile/Dialect/CudaTile/IR/SharedVerifiers.h``
(``verifyOptHintsCommon``); MLIR's ODS region constraints and
``SingleBlockImplicitTerminator`` (a function body without terminator gets
an implicit ``return`` located at the function).
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.diagnostics import Severity
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.syntax.parse_rules.entry import HAttr, assume_predicate_value, optimization_hint_entries
from tile_lsp.analysis.verify.rules.control_flow import MSG_REGION_BLOCKS, block_count, check_region_constraints
from tile_lsp.analysis.verify.verifier import VerifyContext, op_location, region_rule, rule
from tile_lsp.dialect import types as T

# ---------------------------------------------------------------------------
# SingleBlock and the region constraints of entry, testing$func and module
# ---------------------------------------------------------------------------


@rule("cuda_tile.entry", "cuda_tile.testing$func", "cuda_tile.module")
def region_constraints(op: Operation, ctx: VerifyContext) -> None:
    """``SingleBlock``, then ODS region constraints (``region #0 ('body') failed to verify
    constraint: region with 1 blocks``).

    ``SingleBlock`` comes first: ODS lists its traits before ``OpInvariants`` (the generated
    ``verifyInvariantsImpl``, which checks the region constraints), and MLIR stops at the first
    that fails.  A body with a labelled block has two blocks in the custom form too
    (``expects region #0 to have 0 or 1 blocks``); an empty region is the generic form's alone
    (the custom parsers give an empty body a block).
    """
    if op.opdef is None:
        return
    for index, region in enumerate(op.regions):
        if op.opdef.has_trait("SingleBlock") and block_count(op, region) > 1:
            ctx.op_error(op, MSG_REGION_BLOCKS.format(index=index))
            return
    if op.generic:
        check_region_constraints(op, ctx)


# ---------------------------------------------------------------------------
# global / get_global
# ---------------------------------------------------------------------------


@rule("cuda_tile.global")
def global_rank(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp GlobalOp::verify: the value is a rank-1 tile."""
    value = op.attr("value")
    t = getattr(value, "type", None)
    if isinstance(t, T.TileType) and t.rank != 1:
        ctx.op_error(op, "type must have rank 1")


@region_rule("cuda_tile.module")
def get_global_pointee(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp GetGlobalOp::verifySymbolUses: pointee type = the global's element type.

    MLIR checks symbol uses when it verifies the symbol table (after the
    module's nested ops) and stops at the first failing use.
    """
    table = ctx.symbol_table(op)
    if not any(t.name == "cuda_tile.global" for t in table.symbols.values()):
        return  # no global: no use can be checked (and the walk over the module is skipped)
    for user in op.walk():
        if user.name != "cuda_tile.get_global" or user.invalid:
            continue
        name = getattr(user.attr("name"), "value", None)
        target = table.lookup(name) if name is not None else None
        if target is None or target.name != "cuda_tile.global":
            continue  # reported by the framework's symbol check
        gtype = getattr(target.attr("value"), "type", None)
        rtype = user.results[0].type if user.results else None
        if not isinstance(gtype, T.TileType) or not isinstance(rtype, T.TileType):
            continue
        ptr = rtype.element
        if isinstance(ptr, T.PointerType) and ptr.pointee != gtype.element:
            ctx.emit(user, Severity.ERROR,
                     f"'{user.name}' op pointee type of result type '{ptr}' does not match type "
                     f"'{gtype.element}' of the global @{name}", None, None)
            return


# ---------------------------------------------------------------------------
# entry / testing$func / return
# ---------------------------------------------------------------------------


def function_type(op: Operation) -> T.FunctionType | None:
    t = getattr(op.attr("function_type"), "value", None)
    return t if isinstance(t, T.FunctionType) else None


def function_name(op: Operation) -> str:
    return op.symbol_name or ""


@rule("cuda_tile.entry")
def entry_signature(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp EntryOp::verify: no results, scalar tile arguments, then the hints."""
    ft = function_type(op)
    if ft is not None:
        if ft.results:
            ctx.op_error(op, "entry op must not return values")
        for t in ft.inputs:
            if isinstance(t, T.TileType) and t.rank != 0:
                ctx.op_error(op, "entry op must have scalar types (rank 0 !cuda_tile.tile)")
    verify_optimization_hints(op, ctx)


def _return_checks(ret: Operation | None, operand_types: list[T.Type], func: Operation,
                   ctx: VerifyContext, at: Operation) -> None:
    """ReturnOp::verify against the enclosing function ``func`` (``ret`` None: an implicit return)."""
    ft = function_type(func)
    if ft is None:
        return
    results = list(ft.results)
    n = len(operand_types)
    prefix = "'cuda_tile.return' op "
    where = op_location(at)
    if n != len(results):
        ctx.error(at, f"{prefix}has {n} operands, but enclosing function (@{function_name(func)}) returns "
                      f"{len(results)}", rng=where)
    if func.name == "cuda_tile.entry":
        if n != 0:
            ctx.error(at, f"{prefix}has {n} operands, but entry function must return 0 operands", rng=where)
        return
    for i, (t, r) in enumerate(zip(operand_types, results)):
        if t != T.UNKNOWN and t != r:
            ctx.error(at, f"type of return operand {i} ('{t}') doesn't match function result type ('{r}') "
                          f"in function @{function_name(func)}", rng=where)


@rule("cuda_tile.return")
def return_operands(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ReturnOp::verify: operands match the enclosing entry/testing$func."""
    parent = op.parent_op
    while parent is not None and parent.name == "cuda_tile.if":
        parent = parent.parent_op
    if parent is not None and parent.name in ("cuda_tile.entry", "cuda_tile.testing$func"):
        _return_checks(op, [v.type for v in op.operands], parent, ctx, op)
        return
    if parent is None:
        return  # a return at top level: the parent trait reported it
    ctx.op_error(op, "must be used within a cuda_tile.testing$func, cuda_tile.entry, or cuda_tile.if operation")


@region_rule("cuda_tile.entry", "cuda_tile.testing$func")
def implicit_return(op: Operation, ctx: VerifyContext) -> None:
    """SingleBlockImplicitTerminator<ReturnOp>: a body without terminator ends with ``return``.

    The parser (``ensureTerminator``) inserts a ``return`` without operands at
    the function's location; it is verified after the body's other ops.
    """
    if op.generic or not op.regions:
        return
    blocks = op.regions[0].blocks
    last = blocks[-1].operations[-1] if blocks and blocks[-1].operations else None
    if last is not None and last.opdef is not None and last.opdef.has_trait("Terminator"):
        return
    _return_checks(None, [], op, ctx, op)


# ---------------------------------------------------------------------------
# Optimization hints (entry; load/store ops call verify_optimization_hints too)
# ---------------------------------------------------------------------------

KNOWN_HINT_KEYS = ("sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110",
                   "sm_120", "sm_121", "default")
SINGLE_CTA_ARCHS = ("sm_80", "sm_86", "sm_87", "sm_88", "sm_89")

#: op -> hints valid on it (OptimizationHintsAttr::verifyWithOp)
HINTS_FOR_OP: dict[str, tuple[str, ...]] = {
    "cuda_tile.entry": ("num_cta_in_cga", "num_worker_warps_per_cta", "occupancy"),
    "cuda_tile.load_view_tko": ("latency", "allow_tma"),
    "cuda_tile.store_view_tko": ("latency", "allow_tma"),
    "cuda_tile.load_ptr_tko": ("latency",),
    "cuda_tile.store_ptr_tko": ("latency",),
}


def _int_of(a: HAttr) -> int | None:
    if a.kind == "int":
        return a.value
    if a.kind == "bool":  # an MLIR BoolAttr is an i1 IntegerAttr
        return int(a.value)
    return None


def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def hint_problem(key: str, value: HAttr, context: str) -> str | None:
    """The message of an invalid hint value (Attributes.cpp validate*), else ``None``."""
    if key == "num_cta_in_cga":
        n = _int_of(value)
        if n is None:
            return f"integer value expected for {context}.num_cta_in_cga"
        n &= (1 << 64) - 1  # read as uint64_t
        if any(context.startswith(a) for a in SINGLE_CTA_ARCHS) and n != 1:
            return f"expected 1 for {context}.num_cta_in_cga"
        if n == 0 or n > 16 or n & (n - 1):
            return f"expected power-of-two ≤ 16 for {context}.num_cta_in_cga"
        return None
    if key == "num_worker_warps_per_cta":
        n = _int_of(value)
        if n is None:
            return f"integer value expected for {context}.num_worker_warps_per_cta"
        n = _i32(n)
        if n == 0 or n > 32 or (n & (n - 1)) != 0:
            return f"expected power-of-two ≤ 32 for {context}.num_worker_warps_per_cta"
        return None
    if key == "allow_tma":
        return None if value.kind == "bool" else f"boolean value expected for {context}.allow_tma"
    if key in ("latency", "occupancy"):
        n = _int_of(value)
        if n is None:
            return f"integer value expected for {context}.{key}"
        high = 10 if key == "latency" else 32
        if not 1 <= n <= high:
            return f"integer value in the range [1, {high}] is expected for {context}.{key}"
        return None
    return f"unknown param {key} for {context}"


def verify_optimization_hints(op: Operation, ctx: VerifyContext) -> None:
    """``verifyOptHintsCommon``: hint entries are dictionaries; unsupported hints warn on request.

    Warnings (``unknown hint key ...``, ``<p> is not known hint for current
    Operation``, value checks) are emitted only with the option
    ``warn_unsupported_hints`` (cuda-tile-opt ``-Wunsupported-hints``); with
    ``error_unsupported_hints`` (``-Werr-hints``) they also fail the op with
    ``Optimization hints verification failed``.  Source: NVIDIA
    Attributes.cpp OptimizationHintsAttr::verifyWithOp / verifyParamWithContext.
    """
    entries = optimization_hint_entries(op.attr("optimization_hints"))
    if not entries:
        return
    warn = ctx.options.warn_unsupported_hints
    as_error = ctx.options.error_unsupported_hints
    valid = HINTS_FOR_OP.get(op.name, ())
    failed = False
    for key, value in entries:
        if value.kind != "dict":
            ctx.op_error(op, f"expected dictionary attribute for optimization_hints entry `{key}` got value="
                             f"{value.print()}")
        if not warn:
            continue
        if key not in KNOWN_HINT_KEYS:
            ctx.emit(op, Severity.WARNING, f"unknown hint key {key}", None, None)
            failed = True
        else:
            for param, pvalue in value.entries:
                if valid and param not in valid:
                    message = f"{param} is not known hint for current Operation"
                else:
                    message = hint_problem(param, pvalue, key)
                if message is not None:
                    ctx.emit(op, Severity.WARNING, message, None, None)
                    failed = True
        if failed and as_error:
            break
    if failed and as_error:
        ctx.op_error(op, "Optimization hints verification failed")


# ---------------------------------------------------------------------------
# assume
# ---------------------------------------------------------------------------

DIV_BY_MAX = 4611686018427387904


def _assume_type(op: Operation) -> T.Type:
    if op.results:
        return op.results[0].type
    return op.operands[0].type if op.operands else T.UNKNOWN


def predicate_of(attr: A.Attribute | None) -> tuple[str, A.DivBy | A.Bounded | A.SameElements | None] | None:
    """``(mnemonic, decoded value)`` of an assume predicate (short or full form): the value the
    builder decoded (``DialectAttr.value``), else decoded from its body (:func:`assume_predicate_value`);
    ``None`` as the value when the body does not read as the predicate."""
    if isinstance(attr, A.AliasAttr):
        attr = attr.target
    if isinstance(attr, A.DialectAttr) and attr.dialect == "cuda_tile" and attr.body is not None:
        return attr.mnemonic, assume_predicate_value(attr)
    return None


def _is_int_or_ptr(t: T.Type) -> bool:
    return isinstance(t, (T.IntegerType, T.PointerType))


def _verify_div_by(op: Operation, ctx: VerifyContext, pred: A.DivBy, ty: T.Type) -> None:
    """NVIDIA Attributes.cpp DivByAttr::verifyWithAssumeOp."""
    name = "'cuda_tile.div_by'"
    divisor, every, along = pred.divisor, pred.every, pred.along
    if divisor == 0 or divisor & (divisor - 1):
        ctx.op_error(op, f"{name} divisor must be a power of 2")
    if (every is None) != (along is None):
        ctx.op_error(op, f"{name} 'every'/'along' must be used in combination")
    if divisor > DIV_BY_MAX:
        ctx.op_error(op, f"{name} divisor is too large")
    if isinstance(ty, T.TensorViewType):
        if every is not None:
            ctx.op_error(op, f"{name} 'every'/'along' cannot be used if the constrained value is a tensor_view")
        return
    if not isinstance(ty, T.TileType):
        ctx.op_error(op, f"{name} is valid only for tile of integer/pointer or tensor_view values")
    if ty.rank == 0 and every is not None:
        ctx.op_error(op, f"{name} 'every'/'along' cannot be used if the constrained value is a 0D tile")
    if not _is_int_or_ptr(ty.element):
        ctx.op_error(op, f"{name} is valid only for tile of integer/pointer or tensor_view values")
    if every is None:
        return
    if along < 0 or along >= ty.rank:
        ctx.op_error(op, f"{name} every_dim ({along}) must be >= 0 and < tile rank ({ty.rank})")
    dim = ty.shape[along]
    if dim is not None and (every < 0 or every > dim):
        ctx.op_error(op, f"expected {name} every_dim to be within 0 and the size of the respective "
                         f"dimension ({dim})")


def _verify_same_elements(op: Operation, ctx: VerifyContext, pred: A.SameElements, ty: T.Type) -> None:
    """NVIDIA Attributes.cpp SameElementsAttr::verifyWithAssumeOp."""
    name = "'cuda_tile.same_elements'"
    values = pred.values
    if not isinstance(ty, T.TileType) or not _is_int_or_ptr(ty.element):
        ctx.op_error(op, f"{name} is valid only for tile of integer/pointer values")
    if len(values) != ty.rank:
        ctx.op_error(op, f"expected number of values in {name} ({len(values)}) to match rank of constrained "
                         f"tile ({ty.rank})")
    for i, (v, dim) in enumerate(zip(values, ty.shape)):
        if dim is not None and (v < 0 or v > dim):
            ctx.op_error(op, f"expected {name} value {i} to be within 0 and the size of the respective "
                             f"dimension ({dim})")


def _verify_bounded(op: Operation, ctx: VerifyContext, pred: A.Bounded, ty: T.Type) -> None:
    """NVIDIA Attributes.cpp BoundedAttr::verifyWithAssumeOp."""
    name = "'cuda_tile.bounded'"
    lb, ub = pred.lb, pred.ub
    if not isinstance(ty, T.TileType) or not isinstance(ty.element, T.IntegerType):
        ctx.op_error(op, f"{name} is valid only for tile of integer values")
    width = ty.element.width
    low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    if lb is not None and not low <= lb <= high:
        ctx.op_error(op, f"{name} expects lower bound to be within [{low}, {high}]")
    if ub is not None and not low <= ub <= high:
        ctx.op_error(op, f"{name} expects upper bound to be within [{low}, {high}]")
    if lb is not None and ub is not None and lb > ub:
        ctx.op_error(op, f"{name} expects lower bound to be less than or equal to upper bound")


ASSUME_PREDICATES = {
    "div_by": _verify_div_by,
    "same_elements": _verify_same_elements,
    "bounded": _verify_bounded,
}


@rule("cuda_tile.assume")
def assume_predicate(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp AssumeOp::verify: the predicate's verifyWithAssumeOp."""
    pred = predicate_of(op.attr("predicate"))
    ty = _assume_type(op)
    if pred is None or ty == T.UNKNOWN:
        return
    fn = ASSUME_PREDICATES.get(pred[0])
    if fn is not None and pred[1] is not None:
        fn(op, ctx, pred[1], ty)


# ---------------------------------------------------------------------------
# print_tko
# ---------------------------------------------------------------------------

#: Characters that end a printf conversion (the C ``strchr`` also matches the NUL).
FORMAT_END = set("diuoxXeEfFgGaAcsSpn%\0")


def count_format_arguments(fmt: str) -> int | None:
    """Number of arguments a printf format wants; ``None`` for an unterminated ``%`` expression.

    Source: NVIDIA CudaTile.cpp extractFormatExpression / PrintTkoOp::verify.
    """
    count = 0
    pos = 0
    while pos < len(fmt):
        if fmt[pos] != "%":
            pos += 1
            continue
        end = next((i for i in range(pos + 1, len(fmt)) if fmt[i] in FORMAT_END), None)
        if end is None:
            return None
        if end == pos + 1 and fmt[end] == "%":
            pos += 2  # an escaped '%'
            continue
        count += 1
        pos += 1
    return count


@rule("cuda_tile.print_tko")
def print_format(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp PrintTkoOp::verify: one operand per format expression."""
    fmt = getattr(op.attr("str"), "value", None)
    if not isinstance(fmt, str):
        return
    expected = count_format_arguments(fmt)
    if expected is None:
        ctx.op_error(op, "found unterminated format expression")
    found = len(op.operand_group("args"))
    if expected != found:
        ctx.op_error(op, f"incorrect number of operands: expected {expected}, found {found}")
