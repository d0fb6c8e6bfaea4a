"""Moving a reused unit's IR and diagnostics by the lines inserted above it (:mod:`.units` calls these).

The IR of a unit an edit did not touch is kept, not rebuilt: when lines were
inserted or deleted above it, its ranges (ops, values, uses, attributes,
regions, blocks) and its diagnostics are moved by that many lines.
"""

from __future__ import annotations

import dataclasses

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Range


def shift_range(r: Range | None, delta: int) -> Range | None:
    """``r`` moved down by ``delta`` lines (``None`` as it is)."""
    if r is None:
        return None
    return Range.of(r.start_line + delta, r.start_character, r.end_line + delta, r.end_character)


def shift_spans(spans, delta: int) -> list:
    """``spans`` (:class:`~tile_lsp.analysis.ir.core.Span` outside every op) moved down by ``delta`` lines
    (an op's own spans count from its first line: they move with it); an empty ``spans`` as it is."""
    return [s.moved(delta) for s in spans] if spans else spans


def shift_diagnostics(diags: list[Diagnostic], delta: int, first: int, last: int) -> list[Diagnostic]:
    """Copies of ``diags`` moved by ``delta`` lines; notes outside lines ``first..last`` stay (an empty
    ``diags`` as it is: most units have none)."""
    if not diags:
        return diags
    out = []
    for d in diags:
        notes = [dataclasses.replace(n, range=shift_range(n.range, delta))
                 if n.range is not None and n.uri is None and first <= n.range.start.line <= last else n
                 for n in d.notes]
        out.append(dataclasses.replace(d, range=shift_range(d.range, delta), notes=notes,
                                       extent=shift_range(d.extent, delta)))
    return out


class Shifter:
    """Moves the ranges of a unit's IR by ``delta`` lines, in place; objects in ``foreign`` are left alone."""

    def __init__(self, delta: int, foreign: set[int]):
        self.delta = delta
        self.seen: set[int] = set(foreign)

    def value(self, v) -> None:
        if id(v) in self.seen:
            return
        self.seen.add(id(v))
        d = self.delta
        v.range = shift_range(v.range, d)
        for use in v.uses:
            if id(use) not in self.seen:
                self.seen.add(id(use))
                use.range = shift_range(use.range, d)

    def attribute(self, a) -> None:
        from tile_lsp.analysis.ir.attributes import Attribute

        stack = [a]
        while stack:
            a = stack.pop()
            if id(a) in self.seen:
                continue
            self.seen.add(id(a))
            a.range = shift_range(a.range, self.delta)
            for v in vars(a).values():
                if isinstance(v, Attribute):
                    stack.append(v)
                elif isinstance(v, (list, tuple)):
                    stack.extend(x for x in v if isinstance(x, Attribute))
                elif isinstance(v, dict):
                    stack.extend(x for x in v.values() if isinstance(x, Attribute))

    def op(self, op) -> None:
        d = self.delta
        for inner in op.walk():
            inner.range = shift_range(inner.range, d)
            inner.name_range = shift_range(inner.name_range, d)
            inner.operand_ranges = [shift_range(r, d) for r in inner.operand_ranges]
            if inner.successor_ranges:
                inner.successor_ranges = [shift_range(r, d) for r in inner.successor_ranges]
            for v in inner.operands:
                if v is not None:
                    self.value(v)
            for v in inner.results:
                self.value(v)
            for a in inner.properties.values():
                self.attribute(a)
            for a in inner.attributes.values():
                self.attribute(a)
            if inner.location is not None:
                self.attribute(inner.location)
            for region in inner.regions:
                region.range = shift_range(region.range, d)
                for block in region.blocks:
                    block.range = shift_range(block.range, d)
                    block.label_range = shift_range(block.label_range, d)
                    for arg in block.arguments:
                        self.value(arg)


def alias_objects(module) -> set[int]:
    """Ids of the attributes reachable from the module's alias tables (owned by alias units)."""
    from tile_lsp.analysis.ir.attributes import Attribute

    seen: set[int] = set()
    stack = list(module.attr_aliases.values())
    while stack:
        a = stack.pop()
        if not isinstance(a, Attribute) or id(a) in seen:
            continue
        seen.add(id(a))
        for v in vars(a).values():
            if isinstance(v, Attribute):
                stack.append(v)
            elif isinstance(v, (list, tuple)):
                stack.extend(v)
            elif isinstance(v, dict):
                stack.extend(v.values())
    return seen
