"""Operand and result groups of an op: which values each group of its OpDef holds.

MLIR's ODS (``mlir/include/mlir/IR/OpBase.td``): an op with several variadic
operand groups carries ``operandSegmentSizes`` (trait
``AttrSizedOperandSegments``); without it the generated accessors split the
values by the groups' kinds.  The builder records the result in
``Operation.operand_segments``/``result_segments``.
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A


def segment_sizes(attr: A.DenseArrayAttr, groups: int, count: int) -> list[int] | None:
    """``operandSegmentSizes`` (MLIR ``AttrSizedOperandSegments``) as integers when it describes
    ``count`` values in ``groups`` groups, else ``None``."""
    sizes = [v for v in attr.values if isinstance(v, int) and not isinstance(v, bool)]
    if len(sizes) != len(attr.values) or len(sizes) != groups or any(v < 0 for v in sizes) or sum(sizes) != count:
        return None
    return sizes


def op_segments(defs, count: int, sizes: list[int] | None) -> dict[str, tuple[int, int]]:
    """``{group name: (start, size)}`` of ``count`` operands (or results) split into the groups
    ``defs`` declares (the OpDef's ``operands``/``results``).

    With ``sizes`` (an ``operandSegmentSizes`` read by :func:`segment_sizes`) the groups take
    them in order.  Without, as ODS's generated accessors: a ``single`` group has one value,
    a lone variadic group takes what the fixed ones leave, and among several variable
    groups each ``optional`` one takes one value while any are left, a ``variadic`` one none.
    """
    out: dict[str, tuple[int, int]] = {}
    if sizes is not None and len(sizes) == len(defs):
        start = 0
        for d, n in zip(defs, sizes):
            out[d.name] = (start, n)
            start += n
        return out
    fixed = sum(1 for d in defs if d.kind == "single")
    var = [d for d in defs if d.kind != "single"]
    extra = max(count - fixed, 0)
    start = 0
    for d in defs:
        if d.kind == "single":
            n = 1
        elif len(var) == 1:
            n = extra
        else:
            n = min(1, extra) if d.kind == "optional" else 0
            extra -= n
        out[d.name] = (start, n)
        start += n
    return out
