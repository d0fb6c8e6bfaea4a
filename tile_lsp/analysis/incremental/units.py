"""Incremental analysis of a chunk built on its top-level units (:mod:`.layout` cuts them).

Each unit is parsed on its own (with the parser's recovery confined to it),
built into the chunk's IR and verified; a container is parsed from its
header and footer lines alone (its body blanked).  :func:`analyze_units`
is the analysis of a chunk that has such units (``analyze_chunk`` calls it
outside ``mlir_compat`` mode);
:class:`~tile_lsp.analysis.incremental.document.IncrementalAnalyzer` keeps the
result of each unit between two analyses of a document and re-parses, re-builds and
re-verifies only the units whose text changed, reusing the others (their IR
and diagnostics moved by the number of lines inserted above them).  Checks
made at the level of a container (its own verifiers, symbol tables) run
again each time.  By construction the result equals a fresh
:func:`analyze_units` of the new text; ``tests/test_incremental.py`` checks
it on random edits of corpus kernels.
"""

from __future__ import annotations

import bisect
import dataclasses
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.incremental.layout import Edit, Unit, container_source, depth_change
from tile_lsp.analysis.incremental.moving import Shifter, alias_objects, shift_diagnostics, shift_spans
from tile_lsp.analysis.incremental.parses import HEADER_PARSES, RUN_PARSES, STATEMENT_PARSES, ParseCache
from tile_lsp.analysis.incremental.recovery import failure_scope, without_recovery_cascades, without_uses_of
from tile_lsp.analysis.incremental.results import AnalysisCancelled, ChunkAnalysis
from tile_lsp.analysis.ir.diagnostics import (
    Diagnostic,
    Range,
    Severity,
    SourceText,
    mlir_order,
)
from tile_lsp.grammar.lexical import STRINGS_AND_COMMENTS


class _Reorder(Exception):
    """Raised when a container built with its edited function first turns out to depend on the order
    (a unit put names in the body's scope): it is built again, in order."""




# ---------------------------------------------------------------------------
# Per-unit results
# ---------------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class UnitResult:
    """What the analysis of one unit produced, in whole-file coordinates.

    ``ops`` are the operations the unit built (usually one); ``issues`` its
    syntax errors, ``build`` the builder's diagnostics, ``verify`` the
    verifier's (``None`` until verified), ``verify_key`` the environment
    they were computed in.  ``first_line``/``last_line`` are the whole-file
    lines the unit spans.  A container's ``children`` are its body's units.
    """

    text: str
    kind: str
    first_line: int
    last_line: int
    ops: list = field(default_factory=list)
    issues: Sequence[Diagnostic] = ()
    build: Sequence[Diagnostic] = ()
    verify: Sequence[Diagnostic] | None = None
    verify_key: tuple | None = None
    aliases: tuple = ()
    # (the sequences below are replaced, never changed in place: their default, an empty tuple, is
    # shared by the tens of thousands of statements of a big file)
    #: an alias unit's spans outside every op (its definition, the aliases its value names)
    spans: Sequence = ()
    children: Sequence[UnitResult] = ()
    # a container's own verification: before its children, and after them
    head: Sequence[Diagnostic] = ()
    tail: Sequence[Diagnostic] = ()
    uses_locations: bool = False
    head_text: str = ""
    # a function's: how many of ``build`` its header gave; the others (forward references never
    # resolved) are met at the end of its body, after its statements' own
    build_head: int = 0
    # a statement's: the SSA values written in what its parser's recovery blanked
    blanked: frozenset = frozenset()
    # a function's: the syntax and builder diagnostics of its statements (None: not gathered yet)
    statement_diagnostics: tuple[list[Diagnostic], list[Diagnostic]] | None = None
    # whether the scope the unit was built in was empty (no value, no forward reference), and whether
    # building it put names in that scope or resolved names waiting there: a unit is reused only
    # when neither its build nor the scope it is reused in depends on the other units
    scope_clean: bool = True
    leaks: bool = False
    # the ops of the unit (a container: its own op only) located by ``loc(#alias)``, in text order
    # (None: not looked for yet); the IR of a reused unit is moved, not rebuilt, so the list stays true
    alias_located: list | None = None

    def ops_located_by_alias(self) -> list:
        """The unit's ops whose location is still ``loc(#alias)`` (no alias of that name resolved it)."""
        if self.alias_located is None:
            if self.kind == "container":
                ops = self.ops[:1]
            else:
                ops = [o for top in self.ops for o in top.walk()]
            self.alias_located = [o for o in ops if isinstance(o.location, A.LocationAttr)
                                  and o.location.kind == "alias"]
        return self.alias_located

    def gather_statements(self) -> tuple[list[Diagnostic], list[Diagnostic]]:
        """(syntax, builder) diagnostics of a function's statements, gathered once per version."""
        if self.statement_diagnostics is None:
            issues = [d for c in self.children for d in c.issues]
            build = [d for c in self.children for d in c.build]
            self.statement_diagnostics = (issues, build)
        return self.statement_diagnostics


# ---------------------------------------------------------------------------
# Analysis of a chunk by units
# ---------------------------------------------------------------------------


def options_key(options) -> tuple:
    if dataclasses.is_dataclass(options):
        return tuple((f.name, repr(getattr(options, f.name))) for f in dataclasses.fields(options))
    return (repr(options),)


#: the empty list of diagnostics a unit without any keeps (shared: a big file has tens of thousands of
#: statements, most without diagnostics, and an empty list is 56 bytes)
NONE: tuple = ()


class _Pool:
    """Unit results of the previous analysis, by text (and functions also by header line), each taken at most once."""

    def __init__(self, results: list[UnitResult]):
        self.results = results
        self.taken: set[int] = set()
        self.members = {id(r) for r in results}
        self._by_text: dict[str, list[UnitResult]] | None = None
        self._by_head: dict[str, list[UnitResult]] | None = None

    def _index(self) -> None:
        # made when first asked for: after an edit, the units it did not touch are taken by identity
        # (take_result), and only the edited one by text
        self._by_text, self._by_head = {}, {}
        for r in self.results:
            self._by_text.setdefault(r.text, []).append(r)
            if r.kind == "function":
                self._by_head.setdefault(r.head_text, []).append(r)

    @property
    def by_text(self) -> dict[str, list[UnitResult]]:
        if self._by_text is None:
            self._index()
        return self._by_text

    @property
    def by_head(self) -> dict[str, list[UnitResult]]:
        if self._by_head is None:
            self._index()
        return self._by_head

    def _pick(self, found: list[UnitResult] | None, first_line: int) -> UnitResult | None:
        if not found:
            return None
        taken = self.taken
        pick = None  # the first one not taken at ``first_line``, else the first one not taken
        for r in found:
            if id(r) not in taken:
                if r.first_line == first_line:
                    pick = r
                    break
                if pick is None:
                    pick = r
        if pick is not None:
            taken.add(id(pick))
        return pick

    def take(self, text: str, first_line: int) -> UnitResult | None:
        """A result of exactly ``text`` (preferably at ``first_line``)."""
        return self._pick(self.by_text.get(text), first_line)

    def take_result(self, res: UnitResult) -> UnitResult | None:
        """``res`` itself, when it is one of the pool's results not taken yet."""
        if id(res) in self.taken or id(res) not in self.members:
            return None
        self.taken.add(id(res))
        return res

    def take_function(self, head: str, first_line: int) -> UnitResult | None:
        """A function's result with the header and footer lines ``head`` (see ``_signature``; its body edited)."""
        return self._pick(self.by_head.get(head), first_line)

    def remaining(self) -> list[UnitResult]:
        """The results nobody took yet, in the order given."""
        taken = self.taken
        return [r for r in self.results if id(r) not in taken]


@dataclass
class ChunkState:
    """What :class:`~tile_lsp.analysis.incremental.document.IncrementalAnalyzer` keeps of one analysed chunk."""

    text: str
    first_line: int
    units: list[UnitResult]
    alias_key: tuple
    line_span: tuple[int, int]
    aliases: tuple = ({}, {})
    layout: list | None = None
    #: the symbol tables and options of the verification keys (see :meth:`_ChunkRun.verify`)
    interned: dict = field(default_factory=dict)
    reused: int = 0
    rebuilt: int = 0
    #: False for the work of a cancelled analysis: ``units`` is then a flat list of unit results
    #: (some verified, some not) to reuse, not the chunk's structure
    complete: bool = True
    #: ``id`` of each unit of ``layout`` (not a container) -> its result
    by_unit: dict = field(default_factory=dict)

    def scopes_clean(self) -> bool:
        """Whether every unit was built in a clean scope and left it clean (see :mod:`.parallel`)."""
        return all(r.scope_clean and not r.leaks for r in _walk_results(self.units, into_functions=False))


class _ChunkRun:
    """One analysis of a chunk by units (fresh, or reusing ``pool``)."""

    def __init__(self, chunk, layout: list[Unit], options, source: SourceText, pool: _Pool | None,
                 previous: ChunkState | None, cancelled=None, edit: Edit | None = None, same: dict | None = None,
                 share: tuple[int, tuple[int, ...]] | None = None):
        from tile_lsp.analysis.ir.core import Module

        self.chunk = chunk
        self.layout = layout
        self.options = options
        self.source = source
        self.base = chunk.start_offset
        self.first_line = source.position(self.base).line
        self.module = Module()
        self.module.line_span = (self.first_line, self._line_at(len(chunk.text)))
        self.pool = pool
        self.previous = previous
        #: ``(k, owners)``: build and verify only the functions whose ordinal ``i`` has ``owners[i] == k``
        self.share = share
        self.functions = 0
        #: id of a unit -> the previous analysis' unit of the same text (:func:`~.layout.update_layout`)
        self.same = same or {}
        self.previous_by_unit = previous.by_unit if previous is not None and previous.complete else {}
        #: id of each unit of ``layout`` (not a container) -> its result
        self.by_unit: dict[int, UnitResult] = {}
        self.previous_aliases: tuple | None = None
        self.interned: dict = {}
        if previous is not None:
            self.interned = {k: k for k in previous.interned}  # what the last analysis' keys hold
        self.reused = 0
        self.rebuilt = 0
        # cancellation: asked between units, once every top-level alias is built (a unit reused
        # later must find the aliases it refers to)
        self.cancelled = cancelled
        self.aliases_left = sum(1 for u in layout if u.kind == "alias")
        self.edit = edit
        self.done: list[UnitResult] = []  # the results of the units finished (not containers)
        #: the statements this analysis parsed, by text (see :data:`~tile_lsp.analysis.incremental.parses.RUN_PARSES`)
        self.parses = ParseCache(RUN_PARSES)

    def _check_cancelled(self) -> None:
        if self.cancelled is not None and self.aliases_left == 0 and self.cancelled():
            raise AnalysisCancelled()

    def _focus_child(self, unit: Unit) -> int | None:
        """The index of the function in ``unit``'s body that the edit is in, when it is worth building first.

        Only while a long analysis reports progress: the unit edited is
        built before the others and reported at once (see
        :meth:`_Progress.report_now`).  Functions are isolated from above,
        so the order in which they are built changes nothing in them.
        """
        if self.edit is None or getattr(PROGRESS, "sink", None) is None:
            return None
        focus = self.edit.offset - self.base
        for k, child in enumerate(unit.children):
            if child.start <= focus < child.end:
                return k if child.kind == "function" else None
        return None

    def _not_reached(self):
        """``(result, lines it moves)`` for each unit of the previous analysis not reached yet that the
        edit left whole (those it touched are left out)."""
        if self.pool is None:
            return
        for r in self.pool.remaining():
            delta = self.edit.place(r.first_line, r.last_line) if self.edit is not None else 0
            if delta is not None:
                yield r, delta

    def carried(self) -> list[Diagnostic]:
        """Syntax and builder diagnostics of the previous analysis' units not reached yet, placed in the new text."""
        out: list[Diagnostic] = []
        for r, delta in self._not_reached():
            found = [*r.issues, *r.build, *(d for c in r.children for d in (*c.issues, *c.build))]
            out.extend(shift_diagnostics(found, delta, r.first_line, r.last_line) if delta else found)
        return out

    def partial_state(self, key: tuple) -> ChunkState:
        """What a cancelled run leaves for the next one: the units finished and the previous ones not reached.

        The previous analysis' units are moved to this run's text (those the
        edit touched are dropped), so that every result kept is in the
        coordinates of ``self.chunk``'s text.
        """
        from tile_lsp.analysis.syntax.types_attrs import resolve_location_aliases

        resolve_location_aliases(self.module, (op for top in getattr(self, "new_ops", ()) for op in top.walk()))
        kept = list(self.done)
        for r, delta in self._not_reached():
            if delta:
                self._move(r, delta)
            kept.append(r)
        aliases = self.previous_aliases if self.previous_aliases is not None else \
            (self.module.attr_aliases, self.module.type_aliases)
        state = ChunkState(self.chunk.text, self.first_line, kept, key, self.module.line_span, aliases=aliases,
                           layout=self.layout, complete=False)
        state.interned = _used_keys(self.interned)
        return state

    # -- building ---------------------------------------------------------------

    def _line_at(self, offset: int) -> int:
        """The file line of chunk offset ``offset`` (from the line index: no scan of the text)."""
        return bisect.bisect_right(self.source.line_starts, self.base + offset) - 1

    def _unit_lines(self, unit: Unit) -> tuple[int, int]:
        return self.first_line + unit.line, self._line_at(max(unit.end - 1, unit.start))

    def _parse_build(self, text: str, start: int, block, scope, aliases_only: bool = False, cache: bool = False,
                     outer_ops: tuple[str, ...] = ()):
        """Parse ``text`` (at chunk offset ``start``) and build its items into ``block``.

        ``cache``: take the parse from, and keep it in, :data:`~tile_lsp.analysis.incremental.parses.STATEMENT_PARSES` (an edit's
        statements, kept across analyses); otherwise this analysis' own :attr:`parses`.
        ``outer_ops``: the ops whose regions hold ``text`` (see :func:`tile_lsp.grammar.parse.parse`).

        Returns ``(ops, syntax issues, build diagnostics, aliases defined,
        the ParseResult, the spans outside every op)``.
        """
        from tile_lsp.analysis.syntax.builder import Builder
        from tile_lsp.grammar.parse import parse

        base = self.base + start
        key = "\x00".join(outer_ops + (text,))
        parses = STATEMENT_PARSES if cache else self.parses
        result = parses.get(key)
        if result is None:
            result = parse(text, max_issues=50, outer_ops=outer_ops)
            parses.put(key, result)
        issues = [Diagnostic.from_syntax(i, self.source, base) for i in result.issues]
        builder = Builder(self.source, base, result.text)
        builder.module = self.module
        ops = []
        aliases = []
        if result.tree is not None:
            for item in result.tree.children:
                if not hasattr(item, "data"):
                    continue
                if item.data == "operation":
                    op = builder.operation(item, block, scope)
                    if op is not None:
                        ops.append(op)
                else:
                    defined = builder.alias_definition(item)
                    if defined is not None:
                        aliases.append(defined)
        build = without_recovery_cascades(builder.diagnostics, result, text, self.source, base)
        return ops, issues, build, tuple(aliases), result, builder.spans

    def _build_container(self, unit: Unit, block, scope, first: int, last: int,
                         allow_focus: bool = True) -> UnitResult:
        """Build a container op from its header and footer lines (body blanked) and its body units.

        Raises :class:`_Reorder` when it built the edited function first
        (:meth:`_focus_child`) and a unit of the body put names in the
        body's scope: then the order matters, and the caller builds it
        again with ``allow_focus=False``.
        """
        from tile_lsp.analysis.syntax.builder import Builder
        from tile_lsp.analysis.ir.core import Block
        from tile_lsp.grammar.parse import parse

        text = self.chunk.text
        header = text[unit.start:unit.header_end]
        footer = text[unit.footer_start:unit.end]
        body_lines = self._line_at(unit.footer_start) - self._line_at(unit.header_end)
        # a source whose lines before the header and in the body are empty: header and footer keep their positions
        vsource, virtual = container_source(first, header, body_lines, footer)
        result = parse(virtual, max_issues=50)
        issues = [Diagnostic(Severity.ERROR, i.message, vsource.range(first + i.start, first + i.end), "parse.syntax")
                  for i in result.issues]
        builder = Builder(vsource, first, result.text)
        builder.module = self.module
        ops = []
        if result.tree is not None:
            for item in result.tree.children:
                if getattr(item, "data", None) == "operation":
                    op = builder.operation(item, block, scope)
                    if op is not None:
                        ops.append(op)
        if issues or len(ops) != 1 or not ops[0].regions:
            # the header and footer do not make one op with a body: parse the container whole
            for op in ops:
                block.operations.remove(op)
            return self._plain(unit, block, scope, first, last)
        res = UnitResult(text[unit.start:unit.end], unit.kind, first, last, ops, issues, builder.diagnostics)
        res.head_text = header
        sink = getattr(PROGRESS, "sink", None)
        if sink is not None:
            sink.partial.extend(issues + builder.diagnostics)
        container = ops[0]
        region = container.regions[0]
        from tile_lsp.analysis.syntax.builder import Scope

        inner_block = Block(parent=region)
        inner_scope = Scope(parent=scope, isolated=True)
        focus = self._focus_child(unit) if allow_focus else None
        if focus is None:
            res.children = [self._unit(child, inner_block, inner_scope) for child in unit.children]
        else:
            # the edited function first, reported at once; then the others, and the body put in order
            order = [focus] + [k for k in range(len(unit.children)) if k != focus]
            results: list = [None] * len(order)
            pieces: list = [None] * len(order)
            for k in order:
                before = len(inner_block.operations)
                results[k] = self._unit(unit.children[k], inner_block, inner_scope)
                pieces[k] = inner_block.operations[before:]
                if k == focus and sink is not None:
                    sink.report_now()
            if any(r.leaks or not r.scope_clean for r in results):
                raise _Reorder()
            inner_block.operations[:] = [op for piece in pieces for op in piece]
            res.children = results
        if inner_block.operations:
            region.blocks.append(inner_block)
            inner_block.range = Range(inner_block.operations[0].range.start, inner_block.operations[-1].range.end)
        return res

    def _build_function(self, unit: Unit, block, scope, first: int, last: int) -> UnitResult | None:
        """Build a function from its header and footer lines and its statements, or ``None`` (parse it whole).

        The statements of the previous version of the function (found by its
        header line) whose text is unchanged are reused when every value
        they use from other statements still exists with the same name and
        type: their IR is moved and re-linked to the new values.  The others
        are parsed and built on their own in the function's scope.  Falls
        back (``None``) when the header does not make one op with a
        single-block region, or a statement does not parse as a whole parse
        would (see :func:`_statement_parse_ok`).
        """
        from tile_lsp.analysis.syntax.builder import Builder, Scope, canonical_value_name
        from tile_lsp.analysis.ir.core import Block
        from tile_lsp.grammar.parse import parse

        text = self.chunk.text
        header = text[unit.start:unit.header_end]
        footer = text[unit.footer_start:unit.end]
        body_lines = text.count("\n", unit.header_end, unit.footer_start)
        vsource, virtual = container_source(first, header, body_lines, footer)
        # found again by its header and footer lines: the attributes of the entry its statements'
        # verification may read are all there
        signature = _signature(header, footer)
        old_fn = self.pool.take_function(signature, first) if self.pool is not None else None
        result = HEADER_PARSES.get(virtual)  # the tree is only read by the builder
        if result is None:
            result = parse(virtual, max_issues=50)
            HEADER_PARSES.put(virtual, result)
        if result.issues or result.tree is None:
            return None
        builder = Builder(vsource, first, result.text)
        builder.module = self.module
        ops = []
        for item in result.tree.children:
            if getattr(item, "data", None) == "operation":
                op = builder.operation(item, block, scope)
                if op is not None:
                    ops.append(op)
        if len(ops) != 1 or len(ops[0].regions) != 1 or len(ops[0].regions[0].blocks) > 1:
            for op in ops:
                block.operations.remove(op)
            return None
        fn = ops[0]
        region = fn.regions[0]
        if not region.blocks:
            region.blocks.append(Block(parent=region))
        body = region.blocks[0]
        remap: dict[int, object] = {}  # id of a value of the previous version -> its value now
        old_defs: dict[str, object] = {}  # the previous version's values by name (first definition)
        stmt_pool = None
        if old_fn is not None and old_fn.children and len(old_fn.ops) == 1 and old_fn.ops[0].regions \
                and old_fn.ops[0].regions[0].blocks:
            old_args = old_fn.ops[0].regions[0].blocks[0].arguments
            for arg in old_args:
                old_defs.setdefault(canonical_value_name(arg.name), arg)
            for k, (new_arg, old_arg) in enumerate(zip(body.arguments, old_args)):
                if new_arg.name == old_arg.name and new_arg.type == old_arg.type:
                    # keep the argument's object, so that statements using it keep their verification
                    old_arg.range, old_arg.owner, old_arg.index = new_arg.range, body, k
                    body.arguments[k] = old_arg
                    remap[id(old_arg)] = old_arg
            for child in old_fn.children:
                for op in child.ops:
                    for r in op.results:
                        old_defs.setdefault(canonical_value_name(r.name), r)
            stmt_pool = _Pool(old_fn.children)
        inner = Scope(parent=scope, isolated=True)
        for arg in body.arguments:
            inner.values.setdefault(canonical_value_name(arg.name), arg)
        shifters: dict[int, Shifter] = {}
        children: list[UnitResult] = []
        reused_names: set[str] = set()
        for rel in unit.children:
            stmt = Unit(unit.start + rel.start, unit.start + rel.end, unit.line + rel.line, rel.kind)
            s_text = text[stmt.start:stmt.end]
            s_first, s_last = self._unit_lines(stmt)
            old = stmt_pool.take(s_text, s_first) if stmt_pool is not None else None
            if old is not None and self._reuse_statement(old, s_first, s_last, body, inner, remap, shifters):
                children.append(old)
                reused_names.update(_defined_names(old.ops))
                continue
            # while the user types, the statements rebuilt are the one edited and the users of what it
            # renamed, typed again on the next keystroke: their parses are kept a while
            s_ops, issues, build, aliases, parsed, _ = self._parse_build(s_text, stmt.start, body, inner,
                                                                      cache=old_fn is not None,
                                                                      outer_ops=(fn.name,))
            if aliases or not _statement_parse_ok(s_text, parsed, s_ops, issues, s_first):
                block.operations.remove(fn)
                return None
            for op in s_ops:
                for r in op.results:
                    prior = old_defs.get(canonical_value_name(r.name))
                    if prior is not None and id(prior) not in remap and prior.type == r.type:
                        remap[id(prior)] = r
            res = UnitResult(s_text, "stmt", s_first, s_last, s_ops, issues or NONE, build or NONE)
            res.uses_locations = "loc(" in s_text
            res.blanked = parsed.blanked_values(s_text)
            children.append(res)
        if inner.pending and not reused_names.isdisjoint(inner.pending):
            # a use of a name no statement defines before it, which a reused statement defines
            # after it: what that means (a definition resolving the forward reference, a region
            # argument "already in use") depends on the order, which reuse did not look at: parse
            # the function whole
            block.operations.remove(fn)
            return None
        head = len(builder.diagnostics)
        builder.finish_scope(inner)  # uses of names no statement defines
        blanked = frozenset().union(*(c.blanked for c in children if c.blanked))
        builder.diagnostics[head:] = without_uses_of(builder.diagnostics[head:], blanked, self.source, self.base)
        if body.operations:
            body.range = Range(body.operations[0].range.start, body.operations[-1].range.end) \
                if body.operations[0].range and body.operations[-1].range else body.range
        _relink_uses(fn)
        self.new_ops.append(fn)
        res = UnitResult(text[unit.start:unit.end], "function", first, last, [fn], [], builder.diagnostics)
        res.build_head = head
        res.head_text = signature
        res.children = children
        res.uses_locations = "loc(" in res.text
        return res

    def _reuse_statement(self, old: UnitResult, first: int, last: int, body, scope, remap: dict,
                         shifters: dict) -> bool:
        """Move the IR of an unchanged statement into ``body`` when its context allows; ``False`` if not.

        Refused when the statement had diagnostics (they may depend on other
        statements), uses a value that no longer exists unchanged, or defines
        a name already defined (or used ahead) in ``scope``.
        """
        from tile_lsp.analysis.syntax.builder import canonical_value_name

        if old.issues or old.build:
            return False
        external = []
        for o, i, v in _external_operands(old.ops):
            now = remap.get(id(v))
            if now is None:
                return False
            external.append((o, i, v, now))
        names = [canonical_value_name(r.name) for op in old.ops for r in op.results]
        if any(n in scope.values or n in scope.pending for n in names):
            return False
        delta = first - old.first_line
        if delta:
            shifter = shifters.get(delta)
            if shifter is None:
                shifter = shifters[delta] = Shifter(delta, self.foreign)
            for _, _, v, now in external:
                shifter.seen.add(id(v))
                shifter.seen.add(id(now))
            for op in old.ops:
                shifter.op(op)
            if old.verify is not None:
                old.verify = None if old.uses_locations else \
                    shift_diagnostics(old.verify, delta, old.first_line, old.last_line)
            old.first_line, old.last_line = first, last
        for o, i, _, now in external:
            o.operands[i] = now
        for op in old.ops:
            op.parent = body
            body.operations.append(op)
            for r in op.results:
                scope.values.setdefault(canonical_value_name(r.name), r)
                remap[id(r)] = r
        return True

    def _unit(self, unit: Unit, block, scope) -> UnitResult:
        self._check_cancelled()
        sink = getattr(PROGRESS, "sink", None)
        clean = not scope.values and not scope.pending
        if unit.kind != "container" and self.pool is not None and clean:
            # a unit the edit did not touch: its previous result, found without cutting its text
            twin = self.same.get(id(unit))
            old = self.previous_by_unit.get(id(twin)) if twin is not None else None
            if old is not None and len(old.text) == unit.end - unit.start:
                old = self.pool.take_result(old)
            else:
                old = None
            if old is not None:  # the same text: as many lines (no look-up of its last line)
                first = self.first_line + unit.line
                last = first + old.last_line - old.first_line
            else:
                first, last = self._unit_lines(unit)
                old = self.pool.take(self.chunk.text[unit.start:unit.end], first)
            if old is not None and old.kind == unit.kind and old.scope_clean and not old.leaks:
                res = self._reuse(old, first, last, block)
                self._finished(unit, res, sink)
                return res
        else:
            first, last = self._unit_lines(unit)
        self.rebuilt += 1
        if unit.kind == "container":
            marks = (len(block.operations), len(self.done), len(getattr(self, "new_ops", ())),
                     len(sink.partial) if sink is not None else 0)
            try:
                res = self._build_container(unit, block, scope, first, last)
            except _Reorder:
                # what the first try built goes; its units, taken from the pool, are built again
                del block.operations[marks[0]:]
                del self.done[marks[1]:]
                del self.new_ops[marks[2]:]
                if sink is not None:
                    del sink.partial[marks[3]:]
                res = self._build_container(unit, block, scope, first, last, allow_focus=False)
            if res.kind != "container":
                self.done.append(res)  # parsed whole
            return res
        before = _scope_size(scope)
        res = None
        if unit.kind == "function" and clean and self.share is not None:
            ordinal, self.functions = self.functions, self.functions + 1
            owners = self.share[1]
            if ordinal < len(owners) and owners[ordinal] != self.share[0]:  # another process's (:mod:`.parallel`)
                res = UnitResult("", "function", first, last)  # no op: nothing to verify or report
                self._finished(unit, res, sink)
                return res
        if unit.kind == "function" and clean:
            # statement by statement only in a clean scope: where an earlier unit left values or
            # forward references (a broken header), the names outside are visible in the function
            # (Builder.region: no name shadowing), which its statements, built apart, would not see
            res = self._build_function(unit, block, scope, first, last)
        if res is None:
            res = self._plain(unit, block, scope, first, last)
        res.scope_clean = clean
        res.leaks = _scope_size(scope) != before
        self._finished(unit, res, sink)
        return res

    def _finished(self, unit: Unit, res: UnitResult, sink) -> None:
        self.done.append(res)
        self.by_unit[id(unit)] = res
        if unit.kind == "alias":
            self.aliases_left -= 1
        if sink is not None:
            sink.unit_done(res)

    def _plain(self, unit: Unit, block, scope, first: int, last: int) -> UnitResult:
        text = self.chunk.text[unit.start:unit.end]
        ops, issues, build, aliases, _, spans = self._parse_build(text, unit.start, block, scope,
                                                                  outer_ops=_outer_ops(block))
        kind = "op" if unit.kind == "container" else unit.kind
        res = UnitResult(text, kind, first, last, ops, issues, build, aliases=aliases, spans=spans)
        res.uses_locations = "loc(" in text
        if unit.kind == "function":
            res.head_text = _signature(self.chunk.text[unit.start:unit.header_end],
                                       self.chunk.text[unit.footer_start:unit.end])
        self.new_ops.extend(ops)
        return res

    def _reuse(self, old: UnitResult, first: int, last: int, block) -> UnitResult:
        self.reused += 1
        delta = first - old.first_line
        if delta:
            self._move(old, delta)
        for op in old.ops:
            op.parent = block
            block.operations.append(op)
        return old

    def _move(self, old: UnitResult, delta: int) -> None:
        """Move ``old``'s IR, diagnostics and lines down by ``delta`` lines."""
        shifter = Shifter(delta, self.foreign)
        for op in old.ops:
            shifter.op(op)
        old.issues = shift_diagnostics(old.issues, delta, old.first_line, old.last_line)
        old.build = shift_diagnostics(old.build, delta, old.first_line, old.last_line)
        old.spans = shift_spans(old.spans, delta)
        if old.verify is not None:
            if old.uses_locations:
                old.verify = None  # file locations are shown at fixed lines: verify again
            else:
                old.verify = shift_diagnostics(old.verify, delta, old.first_line, old.last_line)
        _shift_children(old, delta, old.first_line, old.last_line)
        old.first_line, old.last_line = old.first_line + delta, old.last_line + delta

    def build(self) -> list[UnitResult]:
        from tile_lsp.analysis.syntax.builder import Scope

        self.new_ops: list = []
        self.foreign: set[int] = set()
        scope = Scope(isolated=True)
        block = self.module.body
        full = self.previous_aliases
        if full is not None:
            # aliases are shared by every unit: reused only when none changed or moved.  While
            # building, a unit sees the aliases defined above it, as in a fresh build.
            self.module.attr_aliases, self.module.type_aliases = full
            self.foreign = alias_objects(self.module)
            self.module.attr_aliases, self.module.type_aliases = {}, {}
        units = []
        for u in self.layout:
            res = self._unit(u, block, scope)
            units.append(res)
            if full is not None:
                for sigil, name in res.aliases:
                    table, visible = (full[0], self.module.attr_aliases) if sigil == "#" else \
                        (full[1], self.module.type_aliases)
                    if name in table:
                        visible[name] = table[name]
        if full is not None:
            self.module.attr_aliases, self.module.type_aliases = full
        from tile_lsp.analysis.syntax.types_attrs import resolve_location_aliases

        resolve_location_aliases(self.module, (op for top in self.new_ops for op in top.walk()))
        return units

    # -- verifying ----------------------------------------------------------------

    def verify(self, units: list[UnitResult]) -> None:
        from tile_lsp.analysis.verify.verifier import (
            VerifyContext,
            load_rule_modules,
            verify_isolated_dominance,
            verify_op,
            verify_op_head,
            verify_op_tail,
        )

        load_rule_modules()
        ctx = VerifyContext(self.options, self.module)
        tables = ctx.symbol_tables
        # the parts of the verification keys, interned across analyses: a key then compares
        # with the previous one in constant time (identical parts), not element by element
        interned = self.interned
        okey = interned.setdefault(options_key(self.options), options_key(self.options))
        span = self.module.line_span

        sink = getattr(PROGRESS, "sink", None)

        def level(results: list[UnitResult], symbols: tuple, chain: tuple) -> None:
            for n, res in enumerate(results):
                self._check_cancelled()
                if sink is not None and res.kind != "container":
                    sink.verifying(res)
                if res.kind == "container" and len(res.ops) == 1 and res.ops[0].regions:
                    op = res.ops[0]
                    start = len(ctx.diagnostics)
                    ok = verify_op_head(op, ctx)
                    res.head = ctx.diagnostics[start:] or NONE
                    del ctx.diagnostics[start:]
                    if ok:
                        table = ctx.symbol_table(op)
                        inner_symbols = tuple((k, v.name) for k, v in table.symbols.items())
                        inner_symbols = interned.setdefault(inner_symbols, inner_symbols)
                        level(res.children, inner_symbols, chain + (res.head_text,))
                        start = len(ctx.diagnostics)
                        verify_op_tail(op, ctx, tables)
                        res.tail = ctx.diagnostics[start:] or NONE
                        del ctx.diagnostics[start:]
                    else:
                        res.tail = NONE
                        for child in res.children:
                            child.verify, child.verify_key = NONE, None
                    continue
                key = (okey, chain, symbols, n == len(results) - 1, span if res.uses_locations else None)
                if res.verify is not None and res.verify_key == key:
                    continue
                if res.kind == "function" and res.children:
                    verify_function(res, key)
                    continue
                start = len(ctx.diagnostics)
                verify_unit(res, key)
                del ctx.diagnostics[start:]

        def verify_unit(res: UnitResult, key: tuple) -> None:
            # verify the unit's ops; their diagnostics are kept in res.verify under key (and stay in ctx)
            start = len(ctx.diagnostics)
            for op in res.ops:
                verify_op(op, ctx, tables)
            res.verify = ctx.diagnostics[start:] or NONE
            res.verify_key = key

        def verify_function(res: UnitResult, key: tuple) -> None:
            # the function op, then each statement (its diagnostics kept while nothing it uses or
            # that uses it changed), then the function's region rules
            op = res.ops[0]
            start = len(ctx.diagnostics)
            if verify_op_head(op, ctx):
                last = len(res.children) - 1
                for m, child in enumerate(res.children):
                    context = (key, m == last, *_statement_context(child))
                    if child.verify is not None and _same_context(child.verify_key, context):
                        ctx.diagnostics.extend(child.verify)
                        continue
                    verify_unit(child, context)
                verify_op_tail(op, ctx, tables)
                verify_isolated_dominance(op, ctx)
            res.verify = ctx.diagnostics[start:] or NONE
            res.verify_key = key
            del ctx.diagnostics[start:]

        top = ctx.symbol_table(self.module)
        symbols = tuple((k, v.name) for k, v in top.symbols.items())
        try:
            level(units, interned.setdefault(symbols, symbols), ())
        finally:
            # ``level`` calls itself through its closure cell: a cycle holding this run (its chunk's
            # text, the previous state) until the collector runs; emptied here, reference counting
            # frees the run as soon as the analysis returns
            level = None  # noqa: F841


def _used_keys(interned: dict) -> dict:
    """The interned key parts to keep for the next analysis (bounded: the newest few)."""
    keys = list(interned)[-64:]
    return {k: k for k in keys}


def _walk_results(units: list[UnitResult], into_functions: bool = True):
    for r in units:
        yield r
        if into_functions or r.kind != "function":
            yield from _walk_results(r.children, into_functions)


def _scope_size(scope) -> tuple[int, int, int]:
    """How many values and forward references ``scope`` holds (what a unit built in it may change)."""
    return len(scope.values), len(scope.pending), sum(len(v) for v in scope.pending.values()) if scope.pending else 0


def _alias_located_ops(units: list[UnitResult]):
    """The ops of ``units`` located by ``loc(#alias)``, in text order, from each unit's
    :meth:`UnitResult.ops_located_by_alias` (the module is not walked again on every edit)."""
    for r in units:
        yield from r.ops_located_by_alias()
        if r.kind == "container":
            yield from _alias_located_ops(r.children)


def _collect(units: list[UnitResult], module=None) -> list[Diagnostic]:
    """Diagnostics in the order the whole-chunk pipeline reports them (:func:`mlir_order`)."""
    issues: list[Diagnostic] = []
    build: list[Diagnostic] = []
    verify: list[Diagnostic] = []

    # (a big file has a thousand units, nearly all without diagnostics: the empty ones are skipped)
    def walk(results: list[UnitResult]) -> None:
        for r in results:
            if r.issues:
                issues.extend(r.issues)
            if r.kind == "function":
                if r.build_head:
                    build.extend(r.build[:r.build_head])
                more_issues, more_build = r.gather_statements()
                if more_issues:
                    issues.extend(more_issues)
                if more_build:
                    build.extend(more_build)
                if len(r.build) > r.build_head:
                    build.extend(r.build[r.build_head:])
            else:
                if r.build:
                    build.extend(r.build)
                if r.children:
                    walk(r.children)

    def walk_verify(results: list[UnitResult]) -> None:
        for r in results:
            if r.kind == "container" and r.ops and r.ops[0].regions:
                verify.extend(r.head)
                walk_verify(r.children)
                verify.extend(r.tail)
            elif r.verify:
                verify.extend(r.verify)

    walk(units)
    if module is not None:
        from tile_lsp.analysis.syntax.types_attrs import undefined_location_aliases

        build.extend(undefined_location_aliases(module, _alias_located_ops(units)))
    walk_verify(units)

    walk = walk_verify = None  # noqa: F841 (each called itself through its cell: no cycle left)
    return mlir_order(issues, build, verify, failure_scope(module))


def analyze_units(chunk, layout: list[Unit], options, source: SourceText, previous: ChunkState | None = None,
                  *, cancelled=None, edit: Edit | None = None, same: dict | None = None,
                  share: tuple[int, tuple[int, ...]] | None = None):
    """Analyse ``chunk`` unit by unit; returns ``(ChunkAnalysis, ChunkState)``.

    ``previous`` is the state of the last analysis of the same document
    chunk (reused where units are unchanged); ``None`` for a fresh analysis.
    ``cancelled``, when given, is asked between units (a cheap call, from
    this thread); once it answers true, :class:`AnalysisCancelled` is raised
    carrying the work done so far (see :meth:`_ChunkRun.partial_state`).
    ``edit`` is where the text changed since ``previous``: while a long
    analysis reports progress, the function edited is built first.
    ``same`` maps the units the edit did not touch to those of ``previous``
    (:func:`~tile_lsp.analysis.incremental.layout.update_layout`): their
    results are taken without cutting and hashing their texts.  ``share``
    ``(k, owners)``: only the functions whose ordinal ``i`` (among those built
    statement by statement) has ``owners[i] == k`` are built and verified, the
    others left out of the IR
    (:mod:`~tile_lsp.analysis.incremental.parallel`).
    """
    run = _ChunkRun(chunk, layout, options, source, None, previous, cancelled, edit, same, share)
    alias_key = tuple(chunk.text[u.start:u.end] for u in layout if u.kind == "alias")
    alias_lines = tuple(u.line for u in layout if u.kind == "alias")
    # aliases are reused in place: only when none changed or moved (a chunk without any may move)
    key = (alias_key, alias_lines, run.first_line if alias_key else None)
    if previous is not None and previous.alias_key == key:
        run.pool = _Pool([r for r in _walk_results(previous.units, into_functions=False) if r.kind != "container"])
        run.previous_aliases = previous.aliases
    sink = getattr(PROGRESS, "sink", None)
    if sink is not None:
        sink.carry = run.carried
        if share is None and sink.wants_view():
            from tile_lsp.analysis.incremental.view import view_for_edit

            def analyse_share(owners: tuple[int, ...]):
                PROGRESS.sink = None  # the view's own analysis reports nothing
                try:
                    return analyze_units(chunk, layout, options, source, share=(0, owners))
                finally:
                    PROGRESS.sink = sink

            sink.show_view(*view_for_edit(sink.previous_view, edit, chunk, layout, source, analyse_share))
    try:
        units = run.build()
        run.verify(units)
    except AnalysisCancelled as stop:
        stop.state = run.partial_state(key)
        raise
    finally:
        if sink is not None:
            sink.carry = None
    state = ChunkState(chunk.text, run.first_line, units, key, run.module.line_span, layout=layout)
    state.interned = _used_keys(run.interned)
    state.aliases = (run.module.attr_aliases, run.module.type_aliases)
    state.reused, state.rebuilt = run.reused, run.rebuilt
    state.by_unit = run.by_unit
    analysis = ChunkAnalysis(chunk, run.module, _collect(units, run.module))
    analysis.units = units
    return analysis, state


#: The progress sink of the analysis running in this thread (set by
#: :class:`~tile_lsp.analysis.incremental.document.IncrementalAnalyzer`; ``sink`` is ``None`` when nobody listens).
PROGRESS = threading.local()


def _outer_ops(block) -> tuple[str, ...]:
    """Names of the ops whose regions hold ``block``, outermost first (what a unit parsed apart is
    inside: MLIR's default dialect for op names depends on them)."""
    names = []
    region = getattr(block, "parent", None)
    while region is not None:
        op = getattr(region, "parent", None)
        if op is None or not hasattr(op, "name"):
            break
        names.append(op.name)
        owner = getattr(op, "parent", None)
        region = getattr(owner, "parent", None)
    return tuple(reversed(names))


def _signature(header: str, footer: str) -> str:
    """What finds a function's previous version: its header and footer lines."""
    return header + "\x00" + footer


def _statement_parse_ok(text: str, parsed, ops: list, issues: list[Diagnostic], first_line: int) -> bool:
    """Whether a statement parsed on its own gives what the whole function's parse gives for it.

    ``text`` is the statement (its first line is line ``first_line`` of the
    file), ``parsed`` its :class:`~tile_lsp.grammar.parse.ParseResult`.
    Without syntax errors: one op.  With some: when every error ends before
    the statement's last character, none was met at the first token of what
    remained of it or at its end, and the blanked text still balances its
    brackets.  The parser then stopped inside the statement, in a state that
    does not depend on what surrounds it, and its recovery blanked the same
    lines in both parses (a region whose header fails is blanked whole, see
    :func:`tile_lsp.grammar.parse._over_regions`), leaving the structure of
    the function intact.  An error at the end would read the next
    statement's first token in the whole parse; a region left open or closed
    by the blanking would read the following statements as part of another
    region; an error at a statement's first token is reported after the
    statement before it in the whole parse.
    """
    if not issues:
        return len(ops) == 1
    if any(i.needs_context for i in parsed.issues):
        return False
    # STRINGS_AND_COMMENTS matches strings too, so that `//` inside one is not taken for a comment
    code = [STRINGS_AND_COMMENTS.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", line).rstrip()
            for line in text.split("\n")]
    last = max((k for k, line in enumerate(code) if line.strip()), default=None)
    if last is None:
        return False
    end_line, end_char = first_line + last, len(code[last])
    for issue in issues:
        r = issue.range
        if r is None or (r.end.line, r.end.character) >= (end_line, end_char):
            return False
    depth = 0
    for line in parsed.text.split("\n"):
        change, low = depth_change(line, depth)
        if depth + low < 0:
            return False
        depth += change
    return depth == 0


def _defined_names(ops: list) -> set[str]:
    """Canonical names of the values ``ops`` define: results and block arguments, nested ones included."""
    from tile_lsp.analysis.syntax.builder import canonical_value_name

    out: set[str] = set()
    for top in ops:
        for op in top.walk():
            out.update(canonical_value_name(r.name) for r in op.results)
            for region in op.regions:
                for block in region.blocks:
                    out.update(canonical_value_name(a.name) for a in block.arguments)
    return out


def _statement_context(res: UnitResult) -> tuple:
    """What a statement's verification depends on beyond its text: the values it uses from other
    statements (the objects themselves) and which of its results are used."""
    external = tuple(v for _, _, v in _external_operands(res.ops))
    used = tuple(bool(r.uses) for op in res.ops for r in op.results)
    return external, used


def _external_operands(ops: list) -> list[tuple]:
    """``(op, operand index, value)`` of every operand of ``ops`` (nested ops included) whose value
    they do not define themselves (a result or block argument of another statement)."""
    internal: set[int] = set()
    nested = [o for op in ops for o in op.walk()]
    for o in nested:
        internal.update(id(r) for r in o.results)
        for region in o.regions:
            for b in region.blocks:
                internal.update(id(a) for a in b.arguments)
    return [(o, i, v) for o in nested for i, v in enumerate(o.operands) if v is not None and id(v) not in internal]


def _same_context(a: tuple | None, b: tuple) -> bool:
    """``a == b``, the external values compared by identity."""
    if a is None or len(a) != len(b) or a[:2] != b[:2] or a[3] != b[3]:
        return False
    return len(a[2]) == len(b[2]) and all(x is y for x, y in zip(a[2], b[2]))


def _relink_uses(fn) -> None:
    """Recompute the ``uses`` of every value defined in ``fn`` from the operands of its ops."""
    from tile_lsp.analysis.ir.core import BlockArgument, OpResult, Use

    ops = list(fn.walk())
    for op in ops:
        for r in op.results:
            r.uses = []
        for region in op.regions:
            for b in region.blocks:
                for a in b.arguments:
                    a.uses = []
    for op in ops:
        ranges = op.operand_ranges
        for i, v in enumerate(op.operands):
            if isinstance(v, (OpResult, BlockArgument)):
                v.uses.append(Use(op, i, ranges[i] if i < len(ranges) else None))


def _shift_children(res: UnitResult, delta: int, first: int, last: int) -> None:
    """Move the lines and diagnostics of ``res``'s children by ``delta`` (notes within ``first..last`` too)."""
    res.statement_diagnostics = None
    for child in res.children:
        child.issues = shift_diagnostics(child.issues, delta, first, last)
        child.build = shift_diagnostics(child.build, delta, first, last)
        if child.verify is not None:
            child.verify = None if child.uses_locations else shift_diagnostics(child.verify, delta, first, last)
        child.first_line += delta
        child.last_line += delta
        _shift_children(child, delta, first, last)
