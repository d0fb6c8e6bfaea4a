"""Parse-time errors of the parsers of ``for``, ``loop``, ``reduce``, ``scan`` and the terminators.

Sources: NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``
(``ForOp::parse``, ``LoopOp::parse``) and the parsers MLIR generates from the
declarative formats of ``reduce``/``scan``/``yield``/``break``/``continue``
(``OpAsmParser::resolveOperands`` with the location where the operand list
started).  All are reported with the ``custom op '<op>' `` prefix.
"""

from __future__ import annotations

from tile_lsp.analysis.ir.diagnostics import Position, Range
from tile_lsp.analysis.syntax.parse_rules import ParseContext, parse_rule

MSG_OPERAND_TYPE_COUNT = "number of operands and types do not match: got {n} operands and {m} types"
MSG_FOR_ITER_COUNT = "mismatch in number of loop-carried values and defined values"
MSG_LOOP_ITER_COUNT = "found different number of iter_values and types"

# Declarative formats binding a variadic operand group to ``type($group)``:
# short op name -> the operand group.
TYPED_OPERAND_GROUPS: dict[str, str] = {
    "reduce": "operands",
    "scan": "operands",
    "yield": "operands",
    "break": "operands",
    "continue": "operands",
}


def _point(r: Range | None) -> Range | None:
    return r.at_start() if r is not None else None



def next_token(ctx: ParseContext, after: Position) -> Range:
    """Where MLIR's lexer stands after ``after``: the next token, past blanks and ``//`` comments."""
    found = ctx.next_token_at(after)
    return found if found is not None else Range(after, after)


def _loop_types_end(ctx: ParseContext) -> Position | None:
    """End of the ``iter_values`` type list in the raw ``loop_header`` node."""
    header = ctx.nodes.get("initValues")
    children = getattr(header, "children", None)
    if not children or getattr(children[0], "children", None) is None:
        return None
    types_node = children[0].children[-1]
    r = ctx.rng(types_node)
    return r.end if r is not None else None


@parse_rule(*TYPED_OPERAND_GROUPS)
def operand_type_count(ctx: ParseContext) -> None:
    """``resolveOperands``: as many types as operands, reported where the operand list started."""
    group = TYPED_OPERAND_GROUPS[ctx.opdef.name]
    uses = ctx.operands.get(group) or []
    types = ctx.types.get(group)
    if types is None or len(types) == len(uses):
        return
    if uses:
        where = _point(uses[0][1])
    elif ctx.name_range is not None:
        where = next_token(ctx, ctx.name_range.end)
    else:
        where = None
    ctx.error(MSG_OPERAND_TYPE_COUNT.format(n=len(uses), m=len(types)), where)


@parse_rule("for")
def for_iter_values(ctx: ParseContext) -> None:
    """NVIDIA CudaTile.cpp ``ForOp::parse``: one result type per ``iter_values`` entry (at the op name)."""
    uses = ctx.operands.get("initValues") or []
    types = ctx.types.get("initValues") or []
    if len(uses) != len(types):
        ctx.error(MSG_FOR_ITER_COUNT, _point(ctx.name_range))


@parse_rule("loop")
def loop_iter_values(ctx: ParseContext) -> None:
    """NVIDIA CudaTile.cpp ``LoopOp::parse``: one type per ``iter_values`` entry (after the types)."""
    uses = ctx.operands.get("initValues") or []
    types = ctx.types.get("initValues")
    if not uses or types is None or len(uses) == len(types):
        return
    ranges = [r for r in ctx.type_ranges.get("initValues") or [] if r is not None]
    end = ranges[-1].end if ranges else _loop_types_end(ctx)
    where = next_token(ctx, end) if end is not None else _point(ctx.name_range)
    ctx.error(MSG_LOOP_ITER_COUNT, where)
