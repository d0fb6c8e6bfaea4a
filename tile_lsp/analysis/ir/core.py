"""The IR model: operations, regions, blocks, values, attributes, symbol tables.

Mirrors MLIR's core IR (``mlir/IR/Operation.h``, ``Region.h``, ``Block.h``,
``Value.h``): an :class:`Operation` has operands (:class:`Value` uses),
results (:class:`OpResult`), attributes, regions of :class:`Block` with
:class:`BlockArgument` s, and successors.  Every entity carries its source
range (:class:`~tile_lsp.analysis.ir.diagnostics.Range`, 0-based line and
UTF-16 column); ranges are ``None`` only for entities without text.

Attributes are structured (:mod:`tile_lsp.analysis.ir.attributes`); types come
from :mod:`tile_lsp.dialect.types`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterator, Literal, Sequence, TypeVar

from tile_lsp.analysis.ir.attributes import Attribute, enum_spelling
from tile_lsp.analysis.ir.diagnostics import Position, Range
from tile_lsp.dialect.schema import OpDef
from tile_lsp.dialect.types import Type


def _where(rng: Range | None) -> str:
    return f" at {rng.start.line + 1}:{rng.start.character + 1}" if rng is not None else ""


_V = TypeVar("_V")


def _segment(values: list[_V], segments: dict[str, tuple[int, int]], name: str) -> list[_V]:
    """The slice of ``values`` that segment ``name`` (``(start, size)`` in ``segments``) covers; ``[]`` if none."""
    seg = segments.get(name)
    if seg is None:
        return []
    start, size = seg
    return values[start:start + size]


@dataclass(frozen=True, slots=True)
class Span:
    """A name or type written in the text whose range the IR keeps nowhere else.

    The builder records them while it parses, as MLIR's ``AsmParserState``
    (``mlir/include/mlir/AsmParser/AsmParserState.h``) records alias
    definitions and uses: ``kind`` is

    * ``"!"``: a type alias, defined (``!t = ...``, ``definition``) or used (``!t``);
    * ``"#"``: an attribute alias, defined or used (``#a``, ``loc(#a)``, and
      ``#a`` inside a ``#cuda_tile.di_*<...>`` body);
    * ``"type"``: a tile type as written (``tile<4xi32>``, ``!cuda_tile.tile<...>``), with
      the :class:`~tile_lsp.dialect.types.Type` it denotes in ``type``.

    ``name`` is an alias' name without its sigil (a use of a name that no
    alias defines is recorded too: the reader decides).  An op's spans are in
    :attr:`Operation.spans` (those written in its own text, not its nested
    ops'), with ``line``/``end_line`` counted from the op's first line, so
    that an op the incremental analysis moves takes its spans along (and a
    big file's spans share the small line numbers); the ones outside any op
    (alias definitions) are in :attr:`Module.spans`, counted from the
    document's first line.
    """

    kind: Literal["!", "#", "type"]
    # the range as plain numbers (a big file holds one span per tile type written: no Range objects)
    line: int
    character: int
    end_line: int
    end_character: int
    name: str = ""
    definition: bool = False
    type: Type | None = None

    @staticmethod
    def of(kind: Literal["!", "#", "type"], rng: Range, name: str = "", definition: bool = False,
           type: Type | None = None, base_line: int = 0) -> "Span":
        """The span of ``kind`` over ``rng``, its lines counted from ``base_line``."""
        return Span(kind, rng.start.line - base_line, rng.start.character, rng.end.line - base_line,
                    rng.end.character, name, definition, type)

    def range_at(self, base_line: int) -> Range:
        """The document range of the span when its lines count from ``base_line``."""
        return Range(Position(self.line + base_line, self.character),
                     Position(self.end_line + base_line, self.end_character))

    def contains(self, pos: Position, base_line: int = 0) -> bool:
        """Whether ``pos`` is in the span (its lines counted from ``base_line``), its ends included
        (where a hover still points at it)."""
        line = pos.line - base_line
        return (self.line, self.character) <= (line, pos.character) <= (self.end_line, self.end_character)

    def moved(self, lines: int) -> "Span":
        """The span ``lines`` lines further down."""
        return Span(self.kind, self.line + lines, self.character, self.end_line + lines, self.end_character,
                    self.name, self.definition, self.type)


# The IR is a graph (values know their uses, ops their parents): the reprs name an object and its
# place instead of recursing through it (a dataclass repr of one op printed much of the module).


@dataclass(eq=False, repr=False, slots=True)
class Use:
    """One use of a value: the operation, the operand index and the range of the use."""

    owner: "Operation"
    index: int
    range: Range | None

    def __repr__(self) -> str:
        return f"<Use: operand {self.index} of {self.owner.name}{_where(self.range)}>"


@dataclass(eq=False, repr=False)
class Value:
    """An SSA value.  ``name`` is its spelling (``%0``, ``%x#1``, ``%arg0``)."""

    name: str
    type: Type
    range: Range | None = None
    uses: list[Use] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} : {self.type}{_where(self.range)}>"

    @property
    def defining_op(self) -> "Operation | None":
        return None


@dataclass(eq=False, repr=False)
class OpResult(Value):
    """Result ``index`` of operation ``owner``."""

    owner: "Operation | None" = None
    index: int = 0

    @property
    def defining_op(self) -> "Operation | None":
        return self.owner


@dataclass(eq=False, repr=False)
class BlockArgument(Value):
    """Argument ``index`` of ``owner`` block."""

    owner: "Block | None" = None
    index: int = 0


@dataclass(eq=False, repr=False)
class Block:
    """A basic block: optional label (``^bb0``), arguments, operations."""

    label: str | None = None
    arguments: list[BlockArgument] = field(default_factory=list)
    operations: list["Operation"] = field(default_factory=list)
    parent: "Region | None" = None
    range: Range | None = None
    label_range: Range | None = None

    def __repr__(self) -> str:
        return (f"<Block {self.label or ''}({len(self.arguments)} arguments, "
                f"{len(self.operations)} operations){_where(self.range)}>")

    @property
    def parent_op(self) -> "Operation | None":
        return self.parent.parent if self.parent else None

    @property
    def terminator(self) -> "Operation | None":
        return self.operations[-1] if self.operations else None


@dataclass(eq=False, repr=False)
class Region:
    """A region: a list of blocks owned by ``parent``."""

    blocks: list[Block] = field(default_factory=list)
    parent: "Operation | None" = None
    range: Range | None = None

    def __repr__(self) -> str:
        return f"<Region of {len(self.blocks)} blocks{_where(self.range)}>"

    @property
    def empty(self) -> bool:
        return not self.blocks


@dataclass(eq=False, repr=False)
class Operation:
    """An operation.

    ``name`` is the full name (``cuda_tile.addi``); ``opdef`` its table entry
    (``None`` for unregistered ops).  ``attributes`` holds discardable
    attributes and ``properties`` the inherent ones (MLIR ``<{...}>``); for
    custom forms, inherent attributes go to ``properties``.
    ``operand_ranges[i]`` is the range of the i-th operand's use, ``successor_ranges[i]`` that of
    the i-th successor's label (``^bb1`` in ``"cf.br"()[^bb1]``).
    ``generic`` is true when the op was written in generic form.
    ``range`` spans the whole op (results through location), ``name_range``
    the op name.
    """

    name: str
    opdef: OpDef | None = None
    operands: list[Value] = field(default_factory=list)
    operand_ranges: list[Range | None] = field(default_factory=list)
    results: list[OpResult] = field(default_factory=list)
    attributes: dict[str, Attribute] = field(default_factory=dict)
    properties: dict[str, Attribute] = field(default_factory=dict)
    # (no regions, no successors: one shared empty tuple, not an empty list per op; an op with
    # regions gets a list (add_region), one with successors lists)
    regions: Sequence[Region] = ()
    successors: Sequence[Block] = ()
    successor_ranges: Sequence[Range | None] = ()
    location: Attribute | None = None
    parent: Block | None = None
    range: Range | None = None
    name_range: Range | None = None
    generic: bool = False
    # operand segment sizes when the op has several variadic operand groups
    operand_segments: dict[str, tuple[int, int]] = field(default_factory=dict)
    result_segments: dict[str, tuple[int, int]] = field(default_factory=dict)
    # set when building the op already reported an error (its verifiers are skipped)
    invalid: bool = False
    # alias uses and tile types written in the op's own text (:class:`Span`), in text order
    spans: tuple[Span, ...] = ()

    def add_region(self, region: Region) -> Region:
        """Append ``region`` to :attr:`regions` (a list from the first one on) and return it."""
        if type(self.regions) is not list:
            self.regions = list(self.regions)
        self.regions.append(region)
        return region

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0] if "." in self.name else ""

    @property
    def short_name(self) -> str:
        return self.name.split(".", 1)[1] if "." in self.name else self.name

    @property
    def parent_op(self) -> "Operation | None":
        return self.parent.parent_op if self.parent else None

    def attr(self, name: str) -> Attribute | None:
        """Inherent or discardable attribute ``name``."""
        a = self.properties.get(name)
        return a if a is not None else self.attributes.get(name)

    def enum_case(self, name: str, default: str | None = None) -> str | None:
        """The case of enum attribute ``name`` (``rounding_mode`` -> ``"nearest_even"``) in any of the
        forms MLIR reads (:func:`~tile_lsp.analysis.ir.attributes.enum_spelling`, the enum taken from
        the op table), ``default`` when the op has no such attribute, the attribute's text when it
        holds no case."""
        a = self.attr(name)
        if a is None:
            return default
        adef = self.opdef.attribute(name) if self.opdef is not None else None
        enum = adef.kind[5:] if adef is not None and adef.kind.startswith("enum:") else ""
        case = enum_spelling(a, enum)
        return case if case is not None else str(a)

    def operand_group(self, name: str) -> list[Value]:
        """The operands of ODS operand ``name`` (by the op definition's segments)."""
        return _segment(self.operands, self.operand_segments, name)

    def result_group(self, name: str) -> list[OpResult]:
        return _segment(self.results, self.result_segments, name)

    def walk(self) -> Iterator["Operation"]:
        """Pre-order walk of this op and every op nested in its regions.

        Iterative (no generator per op): module-level checks walk every op
        of a file after each edit.
        """
        stack = [self]
        pop, extend = stack.pop, stack.extend
        while stack:
            op = pop()
            yield op
            regions = op.regions
            if regions:
                children = [c for region in regions for block in region.blocks for c in block.operations]
                children.reverse()
                extend(children)

    @property
    def symbol_name(self) -> str | None:
        a = self.attr("sym_name")
        return getattr(a, "value", None) if a is not None else None

    def __repr__(self) -> str:
        return (f"<Operation {self.name}: {len(self.operands)} operands, {len(self.results)} results, "
                f"{len(self.regions)} regions{_where(self.range)}>")


@dataclass(eq=False, repr=False)
class Module:
    """The IR of one chunk: a top-level block holding the top-level operations.

    MLIR wraps a file in an implicit ``builtin.module``; tile-lsp keeps the
    top-level ops in ``body`` and their attribute/type aliases in ``aliases``.
    """

    body: Block = field(default_factory=Block)
    attr_aliases: dict[str, Attribute] = field(default_factory=dict)
    type_aliases: dict[str, Type] = field(default_factory=dict)
    # first and last 0-based line of the chunk in its document (file locations are relative to it)
    line_span: tuple[int, int] | None = None
    # the :class:`Span` s written outside every op (alias definitions), in text order
    spans: list[Span] = field(default_factory=list)

    def walk(self) -> Iterator[Operation]:
        for op in self.body.operations:
            yield from op.walk()

    def clone(self) -> "Module":
        """A copy of the module's IR that a pass may rewrite without touching this one.

        As MLIR's ``Operation::clone`` with an ``IRMapping``
        (``mlir/lib/IR/Operation.cpp``): every operation, region, block and
        value is new, operands and successors point into the copy, and
        attributes and types are shared (no pass changes one in place: MLIR
        uniques them).  Two walks, as ``Region::cloneInto``: the structure
        first, then the operands, so that a use before its definition in
        the block list (a successor, a forward reference) maps too.  A value
        the module uses without defining it gets one stand-in, so the
        original's use lists never change.  Cost: linear in the number of ops.
        """
        cloner = _Cloner()
        body = cloner.block(self.body, None)
        cloner.link()
        return Module(body, dict(self.attr_aliases), dict(self.type_aliases), self.line_span, list(self.spans))

    def __repr__(self) -> str:
        return f"<Module of {len(self.body.operations)} top-level operations>"


class _Cloner:
    """The two walks of :meth:`Module.clone`: ``block`` copies the structure, ``link`` the operands."""

    def __init__(self) -> None:
        self.values: dict[int, Value] = {}
        self.blocks: dict[int, Block] = {}
        self.pairs: list[tuple[Operation, Operation]] = []

    def block(self, block: Block, region: Region | None) -> Block:
        new = Block(block.label, [], [], region, block.range, block.label_range)
        self.blocks[id(block)] = new
        for arg in block.arguments:
            copy = BlockArgument(arg.name, arg.type, arg.range, owner=new, index=arg.index)
            self.values[id(arg)] = copy
            new.arguments.append(copy)
        new.operations = [self.op(op, new) for op in block.operations]
        return new

    def op(self, op: Operation, parent: Block) -> Operation:
        new = dataclasses.replace(
            op, operands=[], operand_ranges=list(op.operand_ranges), successor_ranges=list(op.successor_ranges),
            results=[],
            attributes=dict(op.attributes), properties=dict(op.properties), regions=[], successors=[],
            parent=parent, operand_segments=dict(op.operand_segments),
            result_segments=dict(op.result_segments))
        for r in op.results:
            copy = OpResult(r.name, r.type, r.range, owner=new, index=r.index)
            self.values[id(r)] = copy
            new.results.append(copy)
        for region in op.regions:
            copy = Region([], new, region.range)
            copy.blocks = [self.block(b, copy) for b in region.blocks]
            new.add_region(copy)
        self.pairs.append((op, new))
        return new

    def link(self) -> None:
        for old, new in self.pairs:
            for index, value in enumerate(old.operands):
                if value is not None:
                    rng = old.operand_ranges[index] if index < len(old.operand_ranges) else None
                    mapped = self.values.get(id(value))
                    if mapped is None:  # defined nowhere in the module: a stand-in of its own
                        mapped = self.values[id(value)] = Value(value.name, value.type, value.range)
                    mapped.uses.append(Use(new, index, rng))
                    value = mapped
                new.operands.append(value)
            new.successors = [self.blocks.get(id(b), b) for b in old.successors]


class SymbolTable:
    """Symbols defined directly in the region of a symbol-table op (``cuda_tile.module``).

    Maps the symbol name (without ``@``) to the defining operation: the first
    op of that name; ``duplicates`` lists each later one, in order, with the
    first.  An op whose ``sym_name`` is not a string defines no symbol.  Rule
    source: MLIR ``SymbolTable`` (``mlir/IR/SymbolTable.h``).
    """

    def __init__(self, op: Operation | Module):
        self.symbols: dict[str, Operation] = {}
        self.duplicates: list[tuple[Operation, Operation]] = []
        blocks = [op.body] if isinstance(op, Module) else [b for r in op.regions for b in r.blocks]
        for block in blocks:
            for child in block.operations:
                name = child.symbol_name
                if not isinstance(name, str):
                    continue
                if name in self.symbols:
                    self.duplicates.append((child, self.symbols[name]))
                else:
                    self.symbols[name] = child

    def lookup(self, name: str) -> Operation | None:
        return self.symbols.get(name)
