"""Structured control flow: ``if``, ``for``, ``loop`` and their terminators.

Rules of NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``:
``IfOp::verify``, ``ForOp::verifyRegions``, ``LoopOp::verifyRegions``
(``verifyLoopIterValues``), ``BreakOp::verify``, ``ContinueOp::verify``
(``verifyEarlyExitOp``), plus the MLIR checks these ops get from ODS and
from their traits (``mlir/IR/OpDefinition.h``):

* the region constraints of ODS (``SizedRegion<1>`` / ``MaxSizedRegion<1>``:
  ``region #0 ('body') failed to verify constraint: region with 1 blocks``);
* ``SingleBlock`` (``expects a non-empty block``) and
  ``SingleBlockImplicitTerminator`` (``expects regions to end with ...``);
* ``NoRegionArguments`` of ``if``.

The C++ parsers of ``if``/``for``/``loop`` call ``ensureTerminator``: a
region written in custom form without a terminator gets the default one
(``yield`` for ``if``, ``continue`` for the loops), without operands and
located at the op's name.  tile-lsp's IR does not materialize it, so
:func:`region_terminator` models it; the checks of the implicit ``continue``
(``ContinueOp::verify``) run as the first region rule of the loop, where MLIR
verifies the last nested op.

The helpers here are shared with :mod:`tile_lsp.analysis.verify.rules.reductions`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tile_lsp.analysis.ir.diagnostics import Note
from tile_lsp.analysis.ir.core import Operation, Region
from tile_lsp.analysis.ir.printer import IMPLICIT_TERMINATOR, adds_implicit_terminator, region_written
from tile_lsp.analysis.verify.verifier import VerifyContext, op_location, region_rule, rule
from tile_lsp.dialect import types as T

IF = "cuda_tile.if"
FOR = "cuda_tile.for"
LOOP = "cuda_tile.loop"
BREAK = "cuda_tile.break"
CONTINUE = "cuda_tile.continue"
YIELD = "cuda_tile.yield"

# Terminators a region may end with (``SingleBlockImplicitTerminator``; cuda_tile's
# ``IfOpImplicitTerminatorType`` / ``LoopOpImplicitTerminatorType`` accept several).
# The first one names the trait in its message.
ALLOWED_TERMINATORS: dict[str, tuple[str, ...]] = {
    IF: (YIELD, BREAK, CONTINUE, "cuda_tile.return"),
    FOR: (CONTINUE,),
    LOOP: (CONTINUE, BREAK),
    "cuda_tile.reduce": (YIELD,),
    "cuda_tile.scan": (YIELD,),
}

# ODS region constraints (``RegionDef.kind``) -> text of the constraint.
REGION_CONSTRAINTS: dict[str, tuple[str, int | None, int | None]] = {
    "single_block": ("region with 1 blocks", 1, 1),
    "max_one_block": ("region with at most 1 blocks", 0, 1),
}

# Loops a break/continue may exit, by early-exit op (``verifyEarlyExitOp<...>``).
EARLY_EXIT_LOOPS: dict[str, tuple[str, ...]] = {
    BREAK: (LOOP,),
    CONTINUE: (FOR, LOOP),
}

# Messages.
MSG_REGION_CONSTRAINT = "region #{index} ('{name}') failed to verify constraint: {text}"
MSG_REGION_BLOCKS = "expects region #{index} to have 0 or 1 blocks"
MSG_NON_EMPTY_BLOCK = "expects a non-empty block"
MSG_TERMINATOR_KIND = "expects regions to end with '{expected}', found '{found}'"
MSG_TERMINATOR_NOTE = "in custom textual format, the absence of terminator implies '{expected}'"
MSG_ANCESTOR = "can only be nested within a ancestor chain of {names} operations"
MSG_ANCESTOR_NOTE = "see unexpected ancestor operation"


# ---------------------------------------------------------------------------
# Shared helpers: type lists, regions, terminators
# ---------------------------------------------------------------------------


def type_list(types) -> str:
    """A ``TypeRange`` streamed into an MLIR diagnostic: quoted, comma separated."""
    return ", ".join(f"'{t}'" for t in types)


def is_terminator(op: Operation) -> bool:
    """Whether ``op`` has MLIR's ``IsTerminator`` trait (unregistered ops do not)."""
    return op.opdef is not None and op.opdef.has_trait("Terminator")


def block_count(op: Operation, region: Region) -> int:
    """Blocks of ``region`` after parsing (an empty custom-form if/for/loop region gets one)."""
    if not region.blocks and adds_implicit_terminator(op) and region_written(region):
        return 1
    return len(region.blocks)


@dataclass
class Terminator:
    """The terminator of a region's block; ``op`` is ``None`` for an implicit one."""

    name: str
    operand_types: list
    op: Operation | None = None


def region_terminator(op: Operation, region: Region) -> Terminator | None:
    """The terminator of the first block of ``region`` as MLIR sees it after parsing.

    A custom-form if/for/loop region whose block does not end with a
    terminator gets the implicit default one (``ensureTerminator``); other
    regions have none in that case.
    """
    if region.blocks:
        ops = region.blocks[0].operations
        if ops and is_terminator(ops[-1]):
            last = ops[-1]
            return Terminator(last.name, [v.type for v in last.operands], last)
    elif not region_written(region):
        return None
    if adds_implicit_terminator(op):
        return Terminator(IMPLICIT_TERMINATOR[op.name], [], None)
    return None


def last_op_name(op: Operation, region: Region) -> str | None:
    """Name of the last op of the region's first block (implicit terminator included)."""
    term = region_terminator(op, region)
    if term is not None:
        return term.name
    if region.blocks and region.blocks[0].operations:
        return region.blocks[0].operations[-1].name
    return None


def region_arguments(region: Region) -> list:
    """Arguments of the region's entry block (none when the region is empty)."""
    return list(region.blocks[0].arguments) if region.blocks else []


def check_region_constraints(op: Operation, ctx: VerifyContext) -> None:
    """ODS region constraints (``verifyInvariantsImpl``): ``SizedRegion<1>``, ``MaxSizedRegion<1>``."""
    if op.opdef is None:
        return
    for index, (rdef, region) in enumerate(zip(op.opdef.regions, op.regions)):
        spec = REGION_CONSTRAINTS.get(rdef.kind)
        if spec is None:
            continue
        text, low, high = spec
        n = block_count(op, region)
        if (low is not None and n < low) or (high is not None and n > high):
            ctx.op_error(op, MSG_REGION_CONSTRAINT.format(index=index, name=rdef.name, text=text))


def check_single_block(op: Operation, ctx: VerifyContext) -> None:
    """MLIR ``OpTrait::SingleBlock::verifyTrait``: 0 or 1 blocks, and a non-empty block."""
    for index, region in enumerate(op.regions):
        n = block_count(op, region)
        if n == 0:
            continue
        if n != 1:
            ctx.op_error(op, MSG_REGION_BLOCKS.format(index=index))
        if region.blocks and not region.blocks[0].operations and not adds_implicit_terminator(op):
            ctx.op_error(op, MSG_NON_EMPTY_BLOCK)


def check_terminator_kind(op: Operation, ctx: VerifyContext) -> None:
    """MLIR ``SingleBlockImplicitTerminator<T>::verifyRegionTrait``: the block ends with ``T``."""
    allowed = ALLOWED_TERMINATORS.get(op.name)
    if not allowed:
        return
    check_single_block(op, ctx)
    for region in op.regions:
        if block_count(op, region) == 0:
            continue
        found = last_op_name(op, region)
        if found is None or found in allowed:
            continue
        expected = allowed[0]
        ctx.op_error(op, MSG_TERMINATOR_KIND.format(expected=expected, found=found),
                     notes=[Note(MSG_TERMINATOR_NOTE.format(expected=expected), op_location(op))])


def structural_checks(op: Operation, ctx: VerifyContext) -> None:
    """ODS region constraints, then ``SingleBlock`` (the order ``verifyInvariants`` runs them)."""
    check_region_constraints(op, ctx)
    check_single_block(op, ctx)


# ---------------------------------------------------------------------------
# if
# ---------------------------------------------------------------------------


def _is_view(t: T.Type) -> str | None:
    """``"a tensor_view"`` / ``"a tile view"`` for the types loops and ifs may not carry."""
    if isinstance(t, T.TensorViewType):
        return "a tensor_view"
    if isinstance(t, T.TILE_VIEW_TYPES):
        return "a tile view"
    return None


@rule(IF)
def if_structure(op: Operation, ctx: VerifyContext) -> None:
    """ODS region constraints, ``NoRegionArguments`` and ``SingleBlock`` of ``if`` (Ops.td IfOp)."""
    check_region_constraints(op, ctx)
    for index, region in enumerate(op.regions):
        if region.blocks and region.blocks[0].arguments:
            if len(op.regions) > 1:
                ctx.op_error(op, f"region #{index} should have no arguments")
            ctx.op_error(op, "region should have no arguments")
    check_single_block(op, ctx)


@rule(IF)
def if_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``IfOp::verify``: result types against the branches' ``yield``."""
    results = [r.type for r in op.results]
    if any(t == T.UNKNOWN for t in results):
        return
    if not op.regions or block_count(op, op.regions[0]) == 0:
        ctx.op_error(op, "must define then branch")
    for i, t in enumerate(results):
        kind = _is_view(t)
        if kind is not None:
            ctx.op_error(op, f"result type {i} is {kind}, which is not supported")

    def check_branch(region: Region, name: str) -> None:
        term = region_terminator(op, region)
        if term is None or term.name != YIELD:
            return
        yields = term.operand_types
        if any(t == T.UNKNOWN for t in yields):
            return
        if results and not yields:
            ctx.op_error(op, f"has return type of {type_list(results)} but {name} branch does not yield anything")
        if not results and yields:
            ctx.op_error(op, f"does not return a value, but {name} branch yields {type_list(yields)}")
        if yields != results:
            ctx.op_error(op, f"type does not match yield type, {name} branch yields {type_list(yields)} "
                             f"but op result type is {type_list(results)}")

    check_branch(op.regions[0], "then")
    if len(op.regions) < 2 or block_count(op, op.regions[1]) == 0:
        if results:
            ctx.op_error(op, "has non-empty return type, must define else branch")
        return
    check_branch(op.regions[1], "else")


@region_rule(IF)
def if_terminator(op: Operation, ctx: VerifyContext) -> None:
    """``SingleBlockImplicitTerminator<IfOpImplicitTerminatorType>`` (yield, break, continue or return)."""
    check_terminator_kind(op, ctx)


# ---------------------------------------------------------------------------
# for / loop
# ---------------------------------------------------------------------------


@rule(FOR, LOOP)
def loop_structure(op: Operation, ctx: VerifyContext) -> None:
    """ODS region constraint (``SizedRegion<1>``) and ``SingleBlock`` of ``for``/``loop``."""
    structural_checks(op, ctx)


def _implicit_continue(op: Operation, ctx: VerifyContext) -> None:
    """``ContinueOp::verify`` of the ``continue`` the parser inserted (no operands, at the op name)."""
    if not op.regions:
        return
    term = region_terminator(op, op.regions[0])
    if term is None or term.op is not None or term.name != CONTINUE:
        return
    _check_continue_types(op, [], ctx, at=op)


@region_rule(FOR, LOOP)
def loop_implicit_terminator(op: Operation, ctx: VerifyContext) -> None:
    """The implicit ``continue`` of a custom-form loop body, then the terminator kind."""
    _implicit_continue(op, ctx)
    check_terminator_kind(op, ctx)


def _verify_loop_iter_values(op: Operation, inits: list, iter_args: list, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``verifyLoopIterValues``: inits vs region iter_values, and results."""
    if len(iter_args) != len(inits):
        ctx.op_error(op, "mismatch in number of region iterator values and loop iterator inits: "
                         f"{len(iter_args)} vs {len(inits)}")
    for index, (init, arg) in enumerate(zip(inits, iter_args)):
        kind = _is_view(arg.type)
        if kind is not None:
            ctx.op_error(op, f"loop-carried value {index} is {kind}, which is not supported")
        if T.UNKNOWN in (init.type, arg.type):
            continue
        if init.type != arg.type:
            ctx.op_error(op, f"init value {index} and region iter_value {index} have different type: "
                             f"'{init.type}' != '{arg.type}'")
    for index, result in enumerate(op.results):
        kind = _is_view(result.type)
        if kind is not None:
            ctx.op_error(op, f"result type {index} is {kind}, which is not supported")


@region_rule(FOR)
def for_verify_regions(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``ForOp::verifyRegions``: induction variable, then loop-carried values."""
    args = region_arguments(op.regions[0]) if op.regions else []
    if not args:
        ctx.op_error(op, "expected at least one block argument for induction variable")
    lower = op.operand_group("lowerBound")
    if lower and T.UNKNOWN not in (args[0].type, lower[0].type) and args[0].type != lower[0].type:
        ctx.op_error(op, "expected induction variable to be same type as bounds and step: "
                         f"'{args[0].type}' vs '{lower[0].type}'")
    _verify_loop_iter_values(op, op.operand_group("initValues"), args[1:], ctx)


@region_rule(LOOP)
def loop_verify_regions(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``LoopOp::verifyRegions`` (``verifyLoopIterValues``)."""
    args = region_arguments(op.regions[0]) if op.regions else []
    _verify_loop_iter_values(op, list(op.operands), args, ctx)


# ---------------------------------------------------------------------------
# break / continue
# ---------------------------------------------------------------------------


def _early_exit_ancestors(op: Operation, ctx: VerifyContext) -> Operation:
    """NVIDIA CudaTile.cpp ``verifyEarlyExitOp``: only ``if`` ops between the op and its loop.

    Returns the loop; reports ``can only be nested within a ancestor chain of
    ...`` with a note at the first other ancestor.
    """
    loops = EARLY_EXIT_LOOPS[op.name]
    parent = op.parent_op
    while True:
        if parent is not None and parent.name in loops:
            return parent
        if parent is None or parent.name != IF:
            names = ", ".join(f"'{n}'" for n in (*loops, IF))
            where = op_location(parent) if parent is not None else None
            ctx.op_error(op, MSG_ANCESTOR.format(names=names), notes=[Note(MSG_ANCESTOR_NOTE, where)])
        parent = parent.parent_op


@rule(BREAK)
def break_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``BreakOp::verify``: nesting, then operand types = loop result types."""
    _early_exit_ancestors(op, ctx)
    loop = op.parent_op
    while loop is not None and loop.name != LOOP:
        loop = loop.parent_op
    if loop is None:
        return
    mine = [v.type for v in op.operands]
    theirs = [r.type for r in loop.results]
    if T.UNKNOWN in mine or T.UNKNOWN in theirs:
        return
    if mine != theirs:
        ctx.op_error(op, "operand types must correspond to the parent loop result types: "
                         f"({type_list(mine)}) vs ({type_list(theirs)})")


def _check_continue_types(loop: Operation, mine: list, ctx: VerifyContext, at: Operation) -> None:
    """The type check of ``ContinueOp::verify`` against the nearest loop (``emitError``)."""
    if loop.name == LOOP:
        theirs = [v.type for v in loop.operands]
        what, kind = "`loop`", "iter_values"
    else:
        theirs = [r.type for r in loop.results]
        what, kind = "`for`", "return types"
    if T.UNKNOWN in mine or T.UNKNOWN in theirs:
        return
    if mine != theirs:
        ctx.error(at, f"{what} is missing a valid terminator. `continue` op should have operand types "
                      f"that match the parent loop {kind}: ({type_list(theirs)}), but found: ({type_list(mine)})")


@rule(CONTINUE)
def continue_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``ContinueOp::verify``: nesting, then types against the nearest loop."""
    loop = _early_exit_ancestors(op, ctx)
    _check_continue_types(loop, [v.type for v in op.operands], ctx, at=op)
