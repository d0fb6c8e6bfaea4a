"""Trait checks: one function per MLIR trait, reusable by every op that declares it.

Trait names and parameters come from the op table (``OpDef.traits``), e.g.
``"AllTypesMatch<lhs, rhs, result>"``.  Messages are MLIR's
(``mlir/lib/IR/Operation.cpp`` ``OpTrait::impl::verify*`` and the ODS
predicate-trait wording ``failed to verify that <summary>``).
"""

from __future__ import annotations

import functools
import re
from typing import Callable

from tile_lsp.analysis.ir.core import Operation
from tile_lsp.dialect import types as T
from tile_lsp.dialect.type_transforms import TYPE_TRANSFORM_FUNCTIONS

TraitFn = Callable[[Operation, "object", list[str]], None]
TRAITS: dict[str, TraitFn] = {}

#: ODS predicate traits (``PredOpTrait``): verified with the op's invariants,
#: before its native traits.
PREDICATE_TRAITS = frozenset({
    "AllTypesMatch", "AllShapesMatch", "AllRanksMatch", "AllElementTypesMatch", "AllElementTypeMatch",
    "TypesMatchWith", "OptionalTypesMatchWith",
})


def trait(name: str):
    """Register the check of trait ``name``; ``fn(op, ctx, params)``."""

    def deco(fn: TraitFn) -> TraitFn:
        TRAITS[name] = fn
        return fn

    return deco


def parse_trait(text: str) -> tuple[str, list[str]]:
    """``"AllTypesMatch<lhs, rhs>"`` -> ``("AllTypesMatch", ["lhs", "rhs"])``."""
    name, params = _parse_trait(text)
    return name, list(params)


@functools.lru_cache(maxsize=4096)
def _parse_trait(text: str) -> tuple[str, tuple[str, ...]]:
    """:func:`parse_trait`, cached: the verifier parses the traits of every op it verifies."""
    m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_:]*)\s*(?:<(.*)>)?\s*", text, re.S)
    if not m:
        return text, ()
    params = [p.strip() for p in _split_params(m.group(2) or "")]
    return m.group(1), tuple(p for p in params if p)


def _split_params(s: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def check_trait(text: str, op: Operation, ctx) -> None:
    """Run the check of one trait of ``op`` (unknown traits have no check)."""
    name, params = parse_trait(text)
    fn = TRAITS.get(name)
    if fn is _types_match_with:
        fn(op, ctx, params, text)
    elif fn is not None:
        fn(op, ctx, params)


def _entity_types(op: Operation, name: str) -> list[T.Type]:
    if op.opdef is not None and op.opdef.operand(name) is not None:
        return [v.type for v in op.operand_group(name)]
    if op.opdef is not None and op.opdef.result(name) is not None:
        return [r.type for r in op.result_group(name)]
    if op.opdef is not None and op.opdef.attribute(name) is not None:
        a = op.attr(name)
        t = getattr(a, "type", None)  # a typed attribute (dense literal, typed number)
        return [t] if isinstance(t, T.Type) else []
    return []


def _known(ts: list[T.Type]) -> list[T.Type]:
    return [t for t in ts if t != T.UNKNOWN]


def _shape(t: T.Type):
    return getattr(t, "shape", None)


def _all_same(values: list) -> bool:
    return all(v == values[0] for v in values[1:])


def _match_all(kind: str, key: Callable[[T.Type], object]):
    """ODS ``AllMatchSameOperatorTrait``: the listed operands/results agree on ``key``.

    A variadic operand or result contributes its whole list of types, so
    variadic groups must agree element-wise (same length, same keys).
    """

    def check(op: Operation, ctx, params: list[str]) -> None:
        groups = []
        for p in params:
            ts = _entity_types(op, p)
            if any(t == T.UNKNOWN for t in ts):
                return
            groups.append([key(t) for t in ts])
        if len(groups) > 1 and not _all_same(groups):
            ctx.op_error(op, "failed to verify that all of {" + ", ".join(params) + "} have " + kind)

    return check


trait("AllTypesMatch")(_match_all("same type", lambda t: t))
trait("AllShapesMatch")(_match_all("same shape", _shape))
trait("AllRanksMatch")(_match_all("same rank", lambda t: len(_shape(t) or ())))
trait("AllElementTypesMatch")(_match_all("same element type", T.element_of))
# cuda_tile's own element-type predicate (Ops.td AllElementTypeMatch), worded "the same"
trait("AllElementTypeMatch")(_match_all("the same element type", T.element_of))


def _relation(transform: str, src: T.Type, dst: T.Type) -> bool | None:
    """Whether ``dst`` is ``transform(src)``; ``None`` when the transform is unknown."""
    if transform == "identity":
        return src == dst
    if transform == "same_shape":
        return _shape(src) == _shape(dst)
    fn = TYPE_TRANSFORM_FUNCTIONS.get(transform)
    if fn is None:
        return None
    return fn(src) == dst


def _trait_message(op: Operation, text: str, default: str) -> str:
    from tile_lsp.dialect.cuda_tile_ops import TRAIT_MESSAGES

    return TRAIT_MESSAGES.get(op.short_name, {}).get(text, default)


def _types_match_with(op: Operation, ctx, params: list[str], text: str = "") -> None:
    """ODS ``TypesMatchWith<from, to, transform>``: ``to``'s type is ``transform(from)``."""
    if len(params) < 3:
        return
    src, dst, transform = params[0], params[1], params[2]
    s, d = _entity_types(op, src), _entity_types(op, dst)
    if not s or not d or T.UNKNOWN in s or T.UNKNOWN in d:
        return  # absent optional operand, or a type not known
    if _relation(transform, s[0], d[0]) is False:
        ctx.op_error(op, _trait_message(op, text, f"failed to verify that {dst} type matches {src} type"))


TRAITS["TypesMatchWith"] = _types_match_with
TRAITS["OptionalTypesMatchWith"] = _types_match_with


def _operands_and_results(op: Operation) -> list[T.Type]:
    return _known([v.type for v in op.operands] + [r.type for r in op.results])


@trait("SameOperandsAndResultType")
def _same_operands_and_result_type(op, ctx, params):
    ts = _operands_and_results(op)
    if len(ts) > 1 and not _all_same(ts):
        ctx.op_error(op, "requires the same type for all operands and results")


@trait("SameOperandsAndResultElementType")
def _same_elem(op, ctx, params):
    ts = [T.element_of(t) for t in _operands_and_results(op)]
    if len(ts) > 1 and not _all_same(ts):
        ctx.op_error(op, "requires the same element type for all operands and results")


@trait("SameOperandsAndResultShape")
def _same_shape(op, ctx, params):
    ts = [_shape(t) for t in _operands_and_results(op)]
    if len(ts) > 1 and not _all_same(ts):
        ctx.op_error(op, "requires the same shape for all operands and results")


@trait("SameOperandsShape")
def _same_operand_shape(op, ctx, params):
    ts = [_shape(v.type) for v in op.operands if v.type != T.UNKNOWN]
    if len(ts) > 1 and not _all_same(ts):
        ctx.op_error(op, "requires the same shape for all operands")


@trait("SameOperandsElementType")
def _same_operand_elem(op, ctx, params):
    ts = [T.element_of(v.type) for v in op.operands if v.type != T.UNKNOWN]
    if len(ts) > 1 and not _all_same(ts):
        ctx.op_error(op, "requires the same element type for all operands")


@trait("SameTypeOperands")
def _same_type_operands(op, ctx, params):
    ts = [v.type for v in op.operands if v.type != T.UNKNOWN]
    if len(ts) > 1 and not _all_same(ts):
        ctx.op_error(op, "requires all operands to have the same type")


def _full(name: str) -> str:
    return name if "." in name else f"cuda_tile.{name}"


@trait("HasParent")
def _has_parent(op, ctx, params):
    parent = op.parent_op
    names = [_full(p) for p in params]
    if parent is None or parent.name not in names:
        if len(names) == 1:
            ctx.op_error(op, f"expects parent op '{names[0]}'")
        ctx.op_error(op, "expects parent op to be one of '" + ", ".join(names) + "'")


TRAITS["ParentOneOf"] = _has_parent
