"""Position index over a :class:`~tile_lsp.analysis.incremental.results.DocumentAnalysis`.

Feature: navigation - ``textDocument/definition``, ``references``, ``documentHighlight``,
``prepareRename``/``rename``, ``documentSymbol``, ``foldingRange``, ``selectionRange``,
``workspace/symbol``; VS Code: Go to Definition (F12), Find All References, Rename Symbol (F2),
the Outline, folding, Expand Selection, Go to Symbol in Workspace.

The editor features (definition, references, highlights, rename, hover,
document symbols, folding) are answered here, in analysis terms; the
language server only converts classes.  The model is LLVM's
``mlir-lsp-server`` (``mlir/lib/Tools/mlir-lsp-server/MLIRServer.cpp``):
every name written in the text is an :class:`Occurrence` of an
:class:`Entity` (an SSA value or result group, a block, a symbol, an
operation name, a type or attribute alias), with one definition and any
number of uses.

Each ``// -----`` chunk is its own scope: entities never cross chunks.
Because the builder recovers from syntax errors, the index covers every op
that parsed, so the features keep working while the text is being edited.

Where the IR objects hold no range, the index reads the builder's span table:

* alias definitions and uses (``#loc = ...``, ``!t``, ``loc(#loc)``) come
  from the spans the builder recorded (:class:`~tile_lsp.analysis.ir.core.Span`,
  MLIR's ``AsmParserState``): the IR itself keeps no range for them, and
  the builder replaces ``loc(#alias)`` by its target;
* the type under the cursor (for hover) is the tile-type span of the op
  that contains it.

A block's references are its label and the successor lists that name it
(``"cf.br"()[^bb1]``, ``Operation.successor_ranges``).

All positions are whole-file LSP positions (0-based line, UTF-16 column).
"""

from __future__ import annotations

import bisect
import enum
import itertools
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.api import ChunkAnalysis, DocumentAnalysis
from tile_lsp.analysis.ir.diagnostics import Position, Range, SourceText
from tile_lsp.analysis.ir.core import Block, Module, Operation, Span, Value
from tile_lsp.dialect import types as T
from tile_lsp.grammar.lexical import BARE_ID, STRING


class EntityKind(enum.Enum):
    """What an :class:`Entity` is."""

    VALUE = "value"
    BLOCK = "block"
    SYMBOL = "symbol"
    OP = "op"
    TYPE_ALIAS = "type alias"
    ATTR_ALIAS = "attribute alias"


class HighlightKind(enum.Enum):
    """Kind of a document highlight: a definition writes, a use reads (LSP ``DocumentHighlightKind``)."""

    READ = "read"
    WRITE = "write"


#: Sigil each renamable kind's names start with.
SIGILS: dict[EntityKind, str] = {
    EntityKind.VALUE: "%",
    EntityKind.BLOCK: "^",
    EntityKind.SYMBOL: "@",
    EntityKind.TYPE_ALIAS: "!",
    EntityKind.ATTR_ALIAS: "#",
}

# MLIR's lexical grammar (mlir/docs/LangRef.md, "Identifiers and keywords"):
#   suffix-id ::= (digit+ | ((letter|id-punct) (letter|id-punct|digit)*)),  id-punct ::= [$._-]
#   bare-id   ::= (letter|[_]) (letter|digit|[_$.])*
#   symbol-ref-id ::= `@` (suffix-id | string-literal)
# Alias names are bare-ids without '.' (a dot would make them parse as a dialect attribute/type).
_SUFFIX_ID = r"(?:[0-9]+|[A-Za-z$._\-][A-Za-z0-9$._\-]*)"
#: Full-match patterns of valid new names, by kind.
NAME_SYNTAX: dict[EntityKind, re.Pattern[str]] = {
    EntityKind.VALUE: re.compile(r"%" + _SUFFIX_ID),
    EntityKind.BLOCK: re.compile(r"\^" + _SUFFIX_ID),
    EntityKind.SYMBOL: re.compile(r'@(?:' + BARE_ID + r'|' + STRING + ')'),
    EntityKind.TYPE_ALIAS: re.compile(r"![A-Za-z_][A-Za-z0-9_$]*"),
    EntityKind.ATTR_ALIAS: re.compile(r"#[A-Za-z_][A-Za-z0-9_$]*"),
}

#: Symbol-defining ops: the word used for them in hovers and document symbols.
SYMBOL_OP_KINDS: dict[str, str] = {
    "cuda_tile.module": "module",
    "builtin.module": "module",
    "cuda_tile.entry": "entry",
    "cuda_tile.global": "global",
    "cuda_tile.testing$func": "function",
}

#: Ops whose region holds a symbol table (MLIR ``SymbolTable`` trait).
SYMBOL_TABLE_OPS = frozenset({"cuda_tile.module", "builtin.module"})


class RenameError(ValueError):
    """A rename that cannot be done; the message says why (shown to the user)."""


@dataclass(eq=False)
class Occurrence:
    """One place a name is written.

    ``range`` covers the whole name as written (``%x#1``, ``@a::@b``);
    ``edit_range`` the part a rename replaces (``%x``, ``@a``).  ``value`` is
    the precise value at this place (result ``#1`` of a group), ``op`` the
    operation the occurrence belongs to (the user of a use, the definer of a
    result, the op of an op name or symbol), when there is one.
    """

    range: Range
    entity: "Entity"
    is_definition: bool
    edit_range: Range
    value: Value | None = None
    op: Operation | None = None


@dataclass(eq=False)
class Entity:
    """Something with a name: its kind, spelling, chunk, definition and occurrences.

    ``name`` is the spelling with its sigil (``%x``, ``^bb0``, ``@g``, ``!t``,
    ``#loc``; the full op name for an op).  ``values`` are the values of a
    value entity (all results of a ``%x:2`` group), ``block`` the block of a
    block entity, ``op`` the defining op of a symbol or the op of an op name,
    ``target`` an alias' target (a type or an attribute).
    """

    kind: EntityKind
    name: str
    chunk: int
    definition: Occurrence | None = None
    occurrences: list[Occurrence] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    block: Block | None = None
    op: Operation | None = None
    target: object | None = None
    scope: object | None = None  # the op (or module) a rename conflict is checked in

    def add(self, occ_range: Range, is_definition: bool, edit_range: Range | None = None, *,
            value: Value | None = None, op: Operation | None = None) -> Occurrence:
        """Record an occurrence of this entity and return it."""
        occ = Occurrence(occ_range, self, is_definition, edit_range or occ_range, value, op)
        self.occurrences.append(occ)
        if is_definition and self.definition is None:
            self.definition = occ
        return occ


@dataclass
class TextEdit:
    """Replace ``range`` by ``new_text``."""

    range: Range
    new_text: str


@dataclass
class Highlight:
    """A document highlight: a range and whether it reads or writes."""

    range: Range
    kind: HighlightKind


@dataclass
class PrepareRename:
    """Answer of :meth:`DocumentIndex.prepare_rename`: the range renamed and its current text."""

    range: Range
    placeholder: str


@dataclass
class DocumentSymbol:
    """A node of the document outline.

    ``kind`` is ``"namespace"`` (a chunk of a split file), ``"module"``,
    ``"function"`` (entry, testing$func) or ``"variable"`` (global).
    ``range`` spans the whole op, ``selection_range`` its ``@name``.
    """

    name: str
    kind: str
    range: Range
    selection_range: Range
    detail: str = ""
    children: list["DocumentSymbol"] = field(default_factory=list)


@dataclass
class FoldingRange:
    """Lines ``start_line``..``end_line`` (0-based, inclusive) fold; ``kind`` is ``region`` or ``comment``."""

    start_line: int
    end_line: int
    kind: str = "region"


# -- helpers ---------------------------------------------------------------------


def _contains(rng: Range, pos: Position) -> bool:
    """True if ``pos`` is in ``rng``, its end included (a cursor just after a name is on it)."""
    return rng.start <= pos <= rng.end


def _contains_or_end(rng: Range, pos: Position) -> bool:
    return rng.start <= pos <= rng.end


def _strictly_inside(inner: Range, outer: Range) -> bool:
    """``inner`` lies within ``outer`` and is smaller."""
    return outer.start <= inner.start and inner.end <= outer.end and inner != outer


def _prefix(rng: Range, length: int) -> Range:
    """The first ``length`` UTF-16 units of a single-line ``rng``."""
    return Range(rng.start, Position(rng.start.line, rng.start.character + length))


def _base_name(name: str) -> str:
    """``%x`` of ``%x#1``."""
    return name.split("#", 1)[0]


def _attributes_of(op: Operation) -> Iterator[A.Attribute]:
    """Every attribute of ``op``, nested ones included (arrays, dictionaries)."""
    stack: list[A.Attribute] = [*op.properties.values(), *op.attributes.values()]
    while stack:
        attr = stack.pop()
        yield attr
        if isinstance(attr, A.ArrayAttr):
            stack.extend(attr.elements)
        elif isinstance(attr, A.DictAttr):
            stack.extend(attr.entries.values())


def _symbol_def_attr(op: Operation) -> A.Attribute | None:
    attr = op.properties.get("sym_name") or op.attributes.get("sym_name")
    return attr if attr is not None and attr.range is not None else None


def _quote_symbol(name: str) -> str:
    """``@name`` as MLIR prints it: bare when a bare-id, else a quoted string."""
    if re.fullmatch(BARE_ID, name):
        return "@" + name
    return '@"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- the index ------------------------------------------------------------------


class DocumentIndex:
    """Every named entity of a document and where it is written.

    Build it once per analysis (``DocumentIndex(analysis)``); queries take
    whole-file :class:`Position` s and return whole-file :class:`Range` s.
    Never raises on a partial IR (chunks whose module is ``None`` are skipped).
    """

    def __init__(self, analysis: DocumentAnalysis):
        self.analysis = analysis
        self.source = SourceText(analysis.text)
        self._entities: list[Entity] = []
        self._by_line: dict[int, list[Occurrence]] = {}
        self._lazy: list[_LazyChunk] = []
        for number, chunk in enumerate(analysis.chunks):
            if chunk.module is None:
                continue
            if getattr(chunk, "units", None):
                self._lazy.append(_LazyChunk(self, number, chunk))
            else:
                _ChunkIndexer(self, number, chunk).run()
        for occs in self._by_line.values():
            occs.sort(key=lambda o: (o.range.start, o.range.end))

    @property
    def entities(self) -> list[Entity]:
        """Every entity of the document (indexes the units not indexed yet)."""
        self._ensure_all()
        return self._entities

    # -- construction (used by _ChunkIndexer) --

    def _register(self, entity: Entity) -> Entity:
        self._entities.append(entity)
        return entity

    def _ensure_line(self, line: int) -> None:
        """Index the unit holding ``line`` (chunks analysed by units are indexed one unit at a time)."""
        for lazy in self._lazy:
            lazy.ensure_line(line)

    def _ensure_all(self) -> None:
        for lazy in self._lazy:
            lazy.ensure_all()

    # -- lookups --

    def occurrence_at(self, pos: Position) -> Occurrence | None:
        """The occurrence under ``pos``.

        A cursor just after a name is on it, unless another name starts
        there (``%a,%b``); of nested occurrences the innermost wins.
        """
        self._ensure_line(pos.line)
        hits = [o for o in self._by_line.get(pos.line, ()) if _contains(o.range, pos)]
        if not hits:
            return None
        found = min(hits, key=lambda o: (o.range.end == pos, o.range.end.character - o.range.start.character))
        if found.entity.kind in _CHUNK_WIDE:
            self._ensure_all()  # its occurrences are in every unit of the chunk
        return found

    def entity_at(self, pos: Position) -> Entity | None:
        """The entity whose name is under ``pos``, or ``None``."""
        occ = self.occurrence_at(pos)
        return occ.entity if occ is not None else None

    def op_at(self, pos: Position) -> Operation | None:
        """The innermost operation whose range contains ``pos``."""
        found: Operation | None = None
        for chunk in self.analysis.chunks:
            if chunk.module is None:
                continue
            units = getattr(chunk, "units", None)
            ops = _unit_ops_at(units, pos.line) if units else chunk.module.walk()
            for op in ops:
                if op.range is not None and _contains(op.range, pos):
                    if found is None or found.range is None or op.range.start >= found.range.start:
                        found = op
        return found

    # -- features --

    def definition(self, pos: Position) -> list[Range]:
        """Range of the definition of the entity under ``pos`` (empty if none: op names, undefined values)."""
        entity = self.entity_at(pos)
        if entity is None or entity.definition is None:
            return []
        return [entity.definition.range]

    def references(self, pos: Position, include_declaration: bool = True) -> list[Range]:
        """Ranges of every occurrence of the entity under ``pos``, in text order."""
        entity = self.entity_at(pos)
        if entity is None:
            return []
        occs = [o for o in entity.occurrences if include_declaration or not o.is_definition]
        return sorted((o.range for o in occs), key=lambda r: (r.start, r.end))

    def highlights(self, pos: Position) -> list[Highlight]:
        """Occurrences of the entity under ``pos``: definitions ``WRITE``, uses ``READ``."""
        entity = self.entity_at(pos)
        if entity is None:
            return []
        out = [Highlight(o.range, HighlightKind.WRITE if o.is_definition else HighlightKind.READ)
               for o in entity.occurrences]
        return sorted(out, key=lambda h: (h.range.start, h.range.end))

    def prepare_rename(self, pos: Position) -> PrepareRename:
        """The range a rename at ``pos`` would replace, and its text.

        Raises :class:`RenameError` when there is nothing renamable there:
        op names, keywords and types (builtin or dialect) cannot be renamed,
        nor a value whose definition is not in the text.
        """
        occ = self.occurrence_at(pos)
        if occ is None:
            raise RenameError("nothing to rename here (only %values, ^blocks, @symbols and aliases can be renamed)")
        entity = occ.entity
        if entity.kind is EntityKind.OP:
            raise RenameError(f"operation names cannot be renamed ('{entity.name}')")
        if entity.definition is None:
            raise RenameError(f"'{entity.name}' is not defined in this file")
        return PrepareRename(occ.edit_range, entity.name)

    def rename(self, pos: Position, new_name: str) -> list[TextEdit]:
        """Text edits renaming the entity under ``pos`` to ``new_name``.

        ``new_name`` may omit the sigil (``y`` for ``%y``).  Raises
        :class:`RenameError` when the entity cannot be renamed
        (:meth:`prepare_rename`), the new name breaks MLIR's identifier
        syntax (:data:`NAME_SYNTAX`), or it is already defined in the same
        scope (values: the same isolated op; blocks: the same region;
        symbols: the same symbol table; aliases: the same chunk).
        """
        self.prepare_rename(pos)
        entity = self.entity_at(pos)
        assert entity is not None
        sigil = SIGILS[entity.kind]
        new_name = new_name.strip()
        if not new_name.startswith(sigil):
            new_name = sigil + new_name
        if not NAME_SYNTAX[entity.kind].fullmatch(new_name):
            raise RenameError(f"'{new_name}' is not a valid {entity.kind.value} name")
        if new_name == entity.name:
            return []
        for other in self.entities:
            if (other is not entity and other.kind is entity.kind and other.chunk == entity.chunk
                    and other.name == new_name and other.definition is not None and other.scope is entity.scope):
                raise RenameError(f"'{new_name}' is already defined here (line {other.definition.range.start.line + 1})")
        edits = {(o.edit_range.start, o.edit_range.end): TextEdit(o.edit_range, new_name) for o in entity.occurrences}
        return [edits[k] for k in sorted(edits)]

    def document_symbols(self) -> list[DocumentSymbol]:
        """The outline: modules holding entries, globals and functions; one namespace per chunk of a split file."""
        out: list[DocumentSymbol] = []
        split = len(self.analysis.chunks) > 1
        for number, chunk in enumerate(self.analysis.chunks):
            symbols = _symbols_of(chunk.module.body.operations) if chunk.module is not None else []
            if not split:
                out.extend(symbols)
                continue
            rng = self._chunk_range(chunk)
            head = rng.at_start()
            out.append(DocumentSymbol(f"chunk {number + 1}", "namespace", rng, head,
                                      f"line {rng.start.line + 1}", symbols))
        return out

    def workspace_symbols(self, query: str) -> list[tuple[DocumentSymbol, str]]:
        """Flattened outline entries whose name contains ``query`` (case-insensitive), with their container name."""
        q = query.lower()
        out: list[tuple[DocumentSymbol, str]] = []

        def visit(symbols: list[DocumentSymbol], container: str) -> None:
            for s in symbols:
                if s.kind != "namespace" and q in s.name.lower():
                    out.append((s, container))
                visit(s.children, s.name if s.kind != "namespace" else container)

        visit(self.document_symbols(), "")
        return out

    def folding_ranges(self) -> list[FoldingRange]:
        """Folds for regions (op line to the line before ``}``), chunks of split files and comment blocks."""
        out: list[FoldingRange] = []
        for chunk in self.analysis.chunks:
            if len(self.analysis.chunks) > 1:
                rng = self._chunk_range(chunk)
                if rng.end.line > rng.start.line:
                    out.append(FoldingRange(rng.start.line, rng.end.line, "region"))
            if chunk.module is None:
                continue
            for op in chunk.module.walk():
                for region in op.regions:
                    r = region.range
                    if r is None:
                        continue
                    start = r.start.line
                    end = r.end.line - 1
                    if end > start:
                        out.append(FoldingRange(start, end, "region"))
        out.extend(self._comment_folds())
        seen: set[tuple[int, int, str]] = set()
        unique = []
        for f in sorted(out, key=lambda f: (f.start_line, f.end_line, f.kind)):
            key = (f.start_line, f.end_line, f.kind)
            if key not in seen:
                seen.add(key)
                unique.append(f)
        return unique

    def selection_ranges(self, pos: Position) -> list[Range]:
        """Ranges around ``pos`` from the innermost out (LSP selectionRange).

        The name under the cursor, then each enclosing operation, its region
        and the operations around it, then the chunk; ranges strictly grow.
        """
        out: list[Range] = []

        def add(rng: Range | None) -> None:
            if rng is None or not _contains_or_end(rng, pos):
                return
            if out and not _strictly_inside(out[-1], rng):
                return
            out.append(rng)

        occ = self.occurrence_at(pos)
        if occ is not None:
            add(occ.range)
        op = self.op_at(pos)
        chain: list[Range | None] = []
        while op is not None:
            if op.name_range is not None and _contains_or_end(op.name_range, pos):
                chain.append(op.name_range)
            chain.append(op.range)
            for region in op.regions:
                chain.append(region.range)
            op = op.parent_op
        # innermost first: an op's regions come before the op only when pos is inside them
        for rng in sorted((r for r in chain if r is not None and _contains_or_end(r, pos)),
                          key=lambda r: (r.end.line - r.start.line, r.end.character - r.start.character)):
            add(rng)
        for chunk in self.analysis.chunks:
            add(self._chunk_range(chunk))
        return out

    # -- internals --

    def _chunk_range(self, chunk: ChunkAnalysis) -> Range:
        """Range of a chunk, from its first line to its last non-blank line."""
        text = chunk.chunk.text.rstrip()
        start = chunk.chunk.start_offset
        return self.source.range(start, start + len(text))

    def _comment_folds(self) -> list[FoldingRange]:
        out: list[FoldingRange] = []
        run_start: int | None = None
        for line in range(self.source.line_count + 1):
            text = self.source.line_text(line).strip() if line < self.source.line_count else ""
            is_comment = text.startswith("//") and text != "// -----"
            if is_comment and run_start is None:
                run_start = line
            elif not is_comment and run_start is not None:
                if line - 1 > run_start:
                    out.append(FoldingRange(run_start, line - 1, "comment"))
                run_start = None
        return out


def _symbols_of(ops: Iterable[Operation]) -> list[DocumentSymbol]:
    """Outline entries of the symbol ops among ``ops`` (recursively inside modules)."""
    out: list[DocumentSymbol] = []
    for op in ops:
        name_attr = _symbol_def_attr(op)
        if name_attr is None or op.range is None:
            continue
        what = SYMBOL_OP_KINDS.get(op.name, op.short_name)
        kind = {"module": "module", "global": "variable"}.get(what, "function")
        children: list[DocumentSymbol] = []
        if op.name in SYMBOL_TABLE_OPS:
            children = _symbols_of(o for r in op.regions for b in r.blocks for o in b.operations)
        out.append(DocumentSymbol(_quote_symbol(name_attr.value), kind, op.range, name_attr.range,
                                  symbol_detail(op), children))
    return out


def symbol_detail(op: Operation) -> str:
    """Short description of a symbol op: ``entry (tile<i32>) -> ()``, ``global tile<2xi32>``, ``module``."""
    what = SYMBOL_OP_KINDS.get(op.name, op.short_name)
    ftype = op.attr("function_type")
    if isinstance(ftype, A.TypeAttr):
        return f"{what} {T.type_text(ftype.value)}"
    value = op.attr("value")
    vtype = getattr(value, "type", None)
    if isinstance(vtype, T.Type):
        return f"{what} {vtype.short()}"
    return what


class _ChunkIndexer:
    """Builds the entities of one chunk into a :class:`DocumentIndex`."""

    def __init__(self, index: DocumentIndex, number: int, chunk: ChunkAnalysis):
        self.index = index
        self.number = number
        self.chunk = chunk
        self.module: Module = chunk.module  # type: ignore[assignment]
        self.value_entities: dict[int, Entity] = {}  # id(value) -> entity
        self.undefined: dict[str, Entity] = {}  # name -> entity of a value used but never defined
        self.symbols: dict[int, Entity] = {}  # id(defining op) -> entity
        self.blocks: dict[int, Entity] = {}  # id(labelled block) -> entity
        self.unresolved_symbols: dict[str, Entity] = {}

    def run(self) -> None:
        before = len(self.index.entities)
        self.collect_definitions(self.module.body.operations, self.module, self.module)
        self.collect_uses(self.module.body.operations)
        self.collect_aliases()
        for entity in self.index.entities[before:]:
            for occ in entity.occurrences:
                self.index._by_line.setdefault(occ.range.start.line, []).append(occ)

    def new(self, kind: EntityKind, name: str, **kw) -> Entity:
        return self.index._register(Entity(kind, name, self.number, **kw))

    # values, blocks, symbols and op names defined by ``ops``; ``value_scope`` is the
    # nearest isolated-from-above op, ``symbol_scope`` the nearest symbol table.
    def collect_definitions(self, ops: list[Operation], value_scope: object, symbol_scope: object) -> None:
        for op in ops:
            if op.name_range is not None:
                self.new(EntityKind.OP, op.name, op=op).add(op.name_range, False, op=op)
            sym = _symbol_def_attr(op)
            if sym is not None and id(op) not in self.symbols:
                entity = self.new(EntityKind.SYMBOL, _quote_symbol(sym.value), op=op, scope=symbol_scope)
                entity.add(sym.range, True, op=op)
                self.symbols[id(op)] = entity
            groups: dict[str, Entity] = {}
            for res in op.results:
                if res.range is None:
                    continue
                base = _base_name(res.name)
                entity = groups.get(base)
                if entity is None:
                    entity = groups[base] = self.new(EntityKind.VALUE, base, scope=value_scope)
                    entity.add(res.range, True, _prefix(res.range, len(base)), value=res, op=op)
                entity.values.append(res)
                self.value_entities[id(res)] = entity
            isolated = op.opdef is not None and op.opdef.has_trait("IsolatedFromAbove")
            inner_values = op if isolated or op.name in SYMBOL_TABLE_OPS else value_scope
            inner_symbols = op if op.name in SYMBOL_TABLE_OPS else symbol_scope
            for region in op.regions:
                for block in region.blocks:
                    if block.label is not None and block.label_range is not None:
                        entity = self.new(EntityKind.BLOCK, block.label, block=block, scope=region)
                        entity.add(block.label_range, True, op=op)
                        self.blocks[id(block)] = entity
                    for arg in block.arguments:
                        if arg.range is None:
                            continue
                        entity = self.new(EntityKind.VALUE, arg.name, values=[arg], scope=inner_values)
                        entity.add(arg.range, True, value=arg, op=op)
                        self.value_entities[id(arg)] = entity
                    self.collect_definitions(block.operations, inner_values, inner_symbols)

    def collect_definitions_shallow(self, op: Operation, symbol_scope: object) -> None:
        """The op name and symbol of a container op, without its body (indexed unit by unit)."""
        if op.name_range is not None:
            self.new(EntityKind.OP, op.name, op=op).add(op.name_range, False, op=op)
        sym = _symbol_def_attr(op)
        if sym is not None:
            entity = self.new(EntityKind.SYMBOL, _quote_symbol(sym.value), op=op, scope=symbol_scope)
            entity.add(sym.range, True, op=op)
            self.symbols[id(op)] = entity

    def collect_uses(self, ops: list[Operation]) -> None:
        for op in ops:
            for value, rng in zip(op.operands, op.operand_ranges):
                if rng is None:
                    continue
                entity = self.value_entities.get(id(value))
                if entity is None:
                    base = _base_name(value.name)
                    entity = self.undefined.get(base)
                    if entity is None:
                        entity = self.undefined[base] = self.new(EntityKind.VALUE, base, values=[value])
                entity.add(rng, False, _prefix(rng, len(_base_name(value.name))), value=value, op=op)
            for attr in _attributes_of(op):
                if isinstance(attr, A.SymbolRefAttr) and attr.range is not None:
                    self.symbol_use(op, attr)
            for block, rng in zip(op.successors, op.successor_ranges):
                entity = self.blocks.get(id(block))
                if entity is not None and rng is not None:
                    entity.add(rng, False, op=op)
            for region in op.regions:
                for block in region.blocks:
                    self.collect_uses(block.operations)

    def symbol_use(self, op: Operation, attr: A.SymbolRefAttr) -> None:
        """Resolve ``@root`` from the nearest enclosing symbol table outwards (MLIR's lookup)."""
        target: Operation | None = None
        scope: Operation | None = op.parent_op
        while target is None:
            if scope is None:
                target = _lookup(self.module.body.operations, attr.root)
                break
            if scope.name in SYMBOL_TABLE_OPS:
                target = _lookup([o for r in scope.regions for b in r.blocks for o in b.operations], attr.root)
                break
            scope = scope.parent_op
        root = _quote_symbol(attr.root)
        edit = _prefix(attr.range, len(root))
        entity = self.symbols.get(id(target)) if target is not None else None
        if entity is None:
            entity = self.unresolved_symbols.get(root)
            if entity is None:
                entity = self.unresolved_symbols[root] = self.new(EntityKind.SYMBOL, root)
        entity.add(edit, False, edit, op=op)

    def collect_aliases(self) -> None:
        """Alias definitions and uses, from the builder's spans (:class:`~tile_lsp.analysis.ir.core.Span`)."""
        if not self.module.type_aliases and not self.module.attr_aliases:
            return
        maps = {"!": (EntityKind.TYPE_ALIAS, self.module.type_aliases),
                "#": (EntityKind.ATTR_ALIAS, self.module.attr_aliases)}
        entities: dict[tuple[str, str], Entity] = {}
        for span in sorted(self.alias_spans(), key=lambda s: (s.line, s.character)):
            kind, table = maps[span.kind]
            if span.name not in table:
                continue
            entity = entities.get((span.kind, span.name))
            if entity is None:
                entity = entities[(span.kind, span.name)] = self.new(
                    kind, span.kind + span.name, target=table[span.name], scope=self.module)
            entity.add(span.range_at(0), span.definition)

    def alias_spans(self) -> Iterator[Span]:
        """The alias spans of the chunk: those outside every op (the whole chunk's, or its units'),
        then each op's."""
        units = getattr(self.chunk, "units", None)
        outside = [s for unit in units for s in unit.spans] if units else self.module.spans
        inside = (s.moved(op.range.start.line) for op in self.module.walk() for s in op.spans if s.kind != "type")
        return itertools.chain((s for s in outside if s.kind != "type"), inside)


def _lookup(ops: list[Operation], name: str) -> Operation | None:
    for op in ops:
        if op.symbol_name == name and _symbol_def_attr(op) is not None:
            return op
    return None


#: Entities whose occurrences may be in any unit of a chunk (a query on one indexes the whole document).
_CHUNK_WIDE = frozenset({EntityKind.SYMBOL, EntityKind.TYPE_ALIAS, EntityKind.ATTR_ALIAS})


def _leaf_units(units, container=None):
    """``(unit result, enclosing container op or None)`` of every unit that is not a container, in text order."""
    for u in units:
        if u.kind == "container" and u.ops and u.ops[0].regions:
            yield from _leaf_units(u.children, u.ops[0])
        else:
            yield u, container


def _containers(units):
    for u in units:
        if u.kind == "container" and u.ops and u.ops[0].regions:
            yield u.ops[0]
            yield from _containers(u.children)


def _unit_ops_at(units, line: int):
    """The ops of the units around ``line`` (containers and the unit holding it), pre-order."""
    yield from _containers(units)
    for u, _ in _leaf_units(units):
        if u.first_line <= line <= u.last_line:
            for op in u.ops:
                yield from op.walk()


class _LazyChunk:
    """Indexes a chunk analysed by units (:mod:`tile_lsp.analysis.incremental.units`) one unit at a time.

    Symbols (definitions at unit level), container ops and aliases are
    indexed at once; the values, blocks, op names and symbol uses of a unit
    when a query first reaches one of its lines.  Values used but never
    defined get one entity per unit (a unit is its own value scope).
    """

    def __init__(self, index: DocumentIndex, number: int, chunk: ChunkAnalysis):
        self.index = index
        self.indexer = _ChunkIndexer(index, number, chunk)
        self.pending = list(_leaf_units(chunk.units))
        self.pending.sort(key=lambda item: item[0].first_line)
        self.starts = [u.first_line for u, _ in self.pending]
        self.done = [False] * len(self.pending)
        module = self.indexer.module
        before = len(index._entities)
        for op in _containers(chunk.units):
            scope = op.parent_op or module
            self.indexer.collect_definitions_shallow(op, scope)
        for u, container in self.pending:
            scope = container if container is not None else module
            for op in u.ops:
                sym = _symbol_def_attr(op)
                if sym is not None:
                    entity = self.indexer.new(EntityKind.SYMBOL, _quote_symbol(sym.value), op=op, scope=scope)
                    entity.add(sym.range, True, op=op)
                    self.indexer.symbols[id(op)] = entity
        for op in _containers(chunk.units):
            for attr in _attributes_of(op):
                if isinstance(attr, A.SymbolRefAttr) and attr.range is not None:
                    self.indexer.symbol_use(op, attr)
        self.indexer.collect_aliases()
        self._publish(before)

    def _publish(self, before: int) -> None:
        by_line = self.index._by_line
        touched = set()
        for entity in self.index._entities[before:]:
            for occ in entity.occurrences:
                by_line.setdefault(occ.range.start.line, []).append(occ)
                touched.add(occ.range.start.line)
        self._sort(touched)

    def _sort(self, lines) -> None:
        by_line = self.index._by_line
        for line in lines:
            by_line[line].sort(key=lambda o: (o.range.start, o.range.end))

    def _build(self, k: int) -> None:
        self.done[k] = True
        unit, container = self.pending[k]
        module = self.indexer.module
        scope = container if container is not None else module
        indexer = self.indexer
        indexer.undefined = {}
        before = len(self.index._entities)
        symbols = [*indexer.symbols.values(), *indexer.unresolved_symbols.values()]
        symbol_counts = [len(e.occurrences) for e in symbols]
        indexer.collect_definitions(unit.ops, scope, scope)
        indexer.collect_uses(unit.ops)
        self._publish(before)
        # symbol uses of this unit landed on entities created earlier: add them too
        by_line = self.index._by_line
        touched = set()
        for entity, n in zip(symbols, symbol_counts):
            if len(entity.occurrences) == n:
                continue
            for occ in entity.occurrences[n:]:
                by_line.setdefault(occ.range.start.line, []).append(occ)
                touched.add(occ.range.start.line)
        self._sort(touched)

    def ensure_line(self, line: int) -> None:
        k = bisect.bisect_right(self.starts, line) - 1
        if k >= 0 and not self.done[k] and self.pending[k][0].first_line <= line <= self.pending[k][0].last_line:
            self._build(k)

    def ensure_all(self) -> None:
        for k in range(len(self.pending)):
            if not self.done[k]:
                self._build(k)
