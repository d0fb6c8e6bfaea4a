"""Parse-time rules of the ops NVIDIA parses with C++ code (``XOp::parse`` in CudaTile.cpp).

MLIR reports these while parsing, before any verifier runs, with the prefix
``custom op '<op name>' ``.  The builder (:mod:`tile_lsp.analysis.syntax.builder`)
calls :func:`run_parse_rules` once an op's format has been bound, with a
:class:`ParseContext` giving the bound operands, types, attributes and the
source ranges of each part.  Rules register with :func:`parse_rule`; one
module per area, all imported with this package.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

from tile_lsp.analysis.ir.diagnostics import Position, Range, SourceText
from tile_lsp.dialect.schema import OpDef
from tile_lsp.grammar.lexical import next_token_offset

ParseRuleFn = Callable[["ParseContext"], None]
PARSE_RULES: dict[str, list[ParseRuleFn]] = {}


def parse_rule(*op_names: str):
    """Register ``fn(ctx)`` as a parse-time rule of ops ``op_names`` (short names: ``load_view_tko``)."""

    def deco(fn: ParseRuleFn) -> ParseRuleFn:
        for name in op_names:
            PARSE_RULES.setdefault(name, []).append(fn)
        return fn

    return deco


@dataclass
class ParseContext:
    """What the builder bound for one custom-form op.

    ``operands``: ODS operand name -> list of ``(value name, range)``;
    ``types``: operand/result name -> list of types (written or inferred);
    ``type_ranges``: operand/result name -> list of ranges of the written types;
    ``props``: inherent attributes bound from the format (attributes carry
    their ``range``); ``nodes``: raw parse subtrees by element name (for
    rules that need token-level positions, e.g. dense literals);
    ``value_types``: value name -> type of values already defined;
    ``name_range``: range of the op name; ``op_range``: the whole op;
    ``text``: the chunk's text (parse-tree offsets index it); ``source``: the
    whole document's :class:`SourceText`; ``base``: the chunk's offset in it.
    ``emit(message, range, notes=None, fatal=True)`` reports ``message`` as
    is (``fatal=False``: a first error the parser follows with another);
    ``error(message, range)`` reports ``custom op '<op>' <message>`` and
    stops building the op; ``plain_error`` reports without the prefix (the
    errors of MLIR's own parser helpers, e.g. ``expected ':'``).
    """

    opdef: OpDef
    operands: dict[str, list[tuple[str, Range | None]]]
    types: dict[str, list[Any]]
    type_ranges: dict[str, list[Range | None]]
    props: dict[str, Any]
    nodes: dict[str, Any]
    value_types: Callable[[str], Any]
    name_range: Range | None
    op_range: Range | None
    emit: Callable[..., None]
    rng: Callable[[Any], Range | None] = field(default=lambda node: None)
    text: str = ""
    source: SourceText | None = None
    base: int = 0

    def offset_range(self, start: int, end: int | None = None) -> Range | None:
        """Whole-file range of the chunk offsets ``[start, end)`` (a point when ``end`` is omitted)."""
        if self.source is None:
            return None
        return self.source.range(self.base + start, self.base + (start if end is None else end))

    def next_token_at(self, pos: Position) -> Range | None:
        """Point range of the first token at or after document position ``pos`` (MLIR's current location)."""
        if self.source is None:
            return None
        here = self.source.position(next_token_offset(self.source.text, self.source.offset(pos)))
        return Range(here, here)

    def next_token_offset(self, offset: int) -> int:
        """Chunk offset of the first token at or after ``offset``, past blanks and ``//`` comments.

        This is where MLIR's parser stands (``getCurrentLocation``) after the
        token that ends at ``offset``.
        """
        return next_token_offset(self.text, offset)

    @property
    def op_name(self) -> str:
        return self.opdef.full_name

    def error(self, message: str, rng: Range | None) -> None:
        self.emit(f"custom op '{self.op_name}' {message}", rng)
        raise ParseRuleFailure(message)

    def plain_error(self, message: str, rng: Range | None) -> None:
        self.emit(message, rng)
        raise ParseRuleFailure(message)


class ParseRuleFailure(Exception):
    """Stops the rules of the current op after an error was reported."""


def run_parse_rules(ctx: ParseContext) -> None:
    """Run the parse-time rules of ``ctx.opdef`` in registration order; stop at the first error."""
    for fn in PARSE_RULES.get(ctx.opdef.name, ()):
        try:
            fn(ctx)
        except ParseRuleFailure:
            return


for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
