"""Syntax tree to IR: build operations, values, types and attributes, resolve names.

The builder plays the part of MLIR's parser after the grammar: it walks each
op's assembly format (:mod:`tile_lsp.dialect.assembly_format`) against the op's parse
tree, binds operands, attributes, types and regions, infers the types the
format leaves out (the op table's ``type_inference``), and resolves SSA names
in MLIR's scoping (regions nest, ``IsolatedFromAbove`` ops start a new scope).

The errors it reports are those MLIR's parser reports, with MLIR's words:
``use of undeclared SSA value name``, ``use of value '%x' expects different
type than prior uses: 'A' vs 'B'`` (note ``prior use here``), ``redefinition
of SSA value '%x'`` (note ``previously defined here``), ``operation defines N
results but was provided M to bind`` and the enum keyword errors of NVIDIA's
custom parsers (``CudaTile.cpp``).  Rule source: MLIR ``mlir/lib/AsmParser/Parser.cpp``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lark import Token, Tree

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Range, Severity, SourceText
from tile_lsp.analysis.ir.core import Block, BlockArgument, Module, OpResult, Operation, Region, Span, Use, Value
from tile_lsp.analysis.ir.limits import MAX_BOUND_RESULTS, parse_uint64
from tile_lsp.dialect import types as T
from tile_lsp.analysis.syntax.parse_rules import PARSE_RULES, ParseContext, run_parse_rules
from tile_lsp.analysis.syntax.segments import op_segments, segment_sizes
from tile_lsp.analysis.syntax.parse_rules.views import CUSTOM_ENUM_KEYWORDS
from tile_lsp.analysis.syntax.types_attrs import (
    TypeAttributeReader,
    int_token,
    literal_shape,
    resolve_location_aliases,
    symbol_text,
    undefined_location_aliases,
    unquote,
)
from tile_lsp.analysis.ir.directives import DIRECTIVES, target
from tile_lsp.dialect.custom_formats import CUSTOM_FORMATS, OPTIONAL_OPERANDS_BY_TYPE
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.registry import lookup
from tile_lsp.dialect.schema import OpDef
from tile_lsp.dialect.type_transforms import apply_transform, index_space_rank
from tile_lsp.grammar.lexical import next_token_offset
from tile_lsp.grammar.parser_state import wrong_token_offset
from tile_lsp.grammar.syntax_errors import default_dialect, unknown_operation_message
from tile_lsp.dialect.assembly_format import Directive, Literal, OIList, OptionalGroup, Var, parse_format


class BuildError(Exception):
    """Raised inside the builder to abandon the current op after a reported error."""


# ---------------------------------------------------------------------------
# Scopes
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Scope:
    """Value names visible in one region; ``isolated``: outer names are invisible (the text's top).

    ``pending_boundary``: the forward references made inside wait here and are reported
    undeclared when the region ends (the regions of IsolatedFromAbove ops: each function is
    analysed on its own, by the editor too, although MLIR resolves names across them).
    """

    parent: "Scope | None" = None
    isolated: bool = False
    pending_boundary: bool = False
    values: dict[str, Value] = field(default_factory=dict)
    # forward references: name -> list of (op, operand index, range, expected type)
    pending: dict[str, list[tuple[Operation, int, Range | None, T.Type | None]]] = field(default_factory=dict)

    def lookup(self, name: str) -> Value | None:
        scope: Scope | None = self
        while scope is not None:
            v = scope.values.get(name)
            if v is not None:
                return v
            if scope.isolated:
                return None
            scope = scope.parent
        return None


def _isolated_scope(scope: Scope) -> Scope:
    """The nearest isolated-from-above scope (MLIR ``isolatedNameScopes.back()``)."""
    s: Scope | None = scope
    while s is not None and not (s.isolated or s.pending_boundary):
        s = s.parent
    return s or scope


def _ssa_name(name: str) -> str:
    """The name of ``%x#N`` without its result number, as MLIR's ``resolveSSAUse`` prints it."""
    return name.split("#", 1)[0]


def canonical_value_name(name: str) -> str:
    """``%x`` and ``%x#0`` name the same value."""
    return name[:-2] if name.endswith("#0") else name


# ---------------------------------------------------------------------------
# The builder
# ---------------------------------------------------------------------------


@dataclass
class _OpParts:
    """What the format walk collected for one custom op."""

    operands: dict[str, list[tuple[str, Range | None]]] = field(default_factory=dict)
    types: dict[str, list[T.Type]] = field(default_factory=dict)
    # names whose types the text gives (``type($x)``), not inferred
    written_types: frozenset[str] = frozenset()
    # operand variables the format walk reached (an absent optional group's are not)
    read_operands: set[str] = field(default_factory=set)
    props: dict[str, A.Attribute] = field(default_factory=dict)
    attrs: dict[str, A.Attribute] = field(default_factory=dict)
    regions: dict[str, tuple[Tree, list[tuple[str, T.Type, Range | None]]]] = field(default_factory=dict)
    # extra region arguments supplied before the region is seen (for/loop headers)
    region_args: list[tuple[str, T.Type | None, Range | None]] = field(default_factory=list)
    uniform_result_type: T.Type | None = None
    type_ranges: dict[str, list[Range | None]] = field(default_factory=dict)
    nodes: dict[str, Any] = field(default_factory=dict)
    # types read without verification, verified once the parse-time rules ran
    deferred_types: list[Any] = field(default_factory=list)
    # the `regions` directive: every region of the op, in order
    all_regions: list[Tree] | None = None


class Builder(TypeAttributeReader):
    """Builds a :class:`~tile_lsp.analysis.ir.core.Module` from the tree of one chunk.

    ``source`` indexes the whole document; ``base`` is the code-point offset
    of the chunk in it.  Diagnostics go to ``diagnostics`` with whole-file
    ranges.  ``stop_at_first_error`` mimics MLIR's parser, which abandons a
    chunk at its first error.
    """

    def __init__(self, source: SourceText, base: int, text: str, *, stop_at_first_error: bool = False,
                 end: int | None = None, builtin_default: bool = False):
        self.source = source
        #: whether a cuda_tile op name without prefix where MLIR's default dialect is builtin (the top
        #: level, a builtin module: :func:`default_dialect`) is MLIR's "custom op 'entry' is unknown
        #: (tried 'builtin.entry' as well)"; else it is taken as the cuda_tile op, as tileirdisasm
        #: prints it (``entry @k(...)`` with no module around it), which an editor must read
        self.builtin_default = builtin_default
        self.base = base
        self.text = text
        #: the end of the text as written: recovery may have closed its brackets after it
        self.end = len(text) if end is None else end
        self._checked_mnemonics: set[int] = set()
        self.diagnostics: list[Diagnostic] = []
        self.stop_at_first_error = stop_at_first_error
        self.module = Module()
        first = source.position(base).line
        self.module.line_span = (first, first + text.count("\n"))
        self._reported_types: set[int] = set()
        # index the next error will have when the last one was non-fatal (its failure goes on)
        self._continued = -1
        self._type_depth = 0
        self._outermost_bang = False
        self._custom_op: str | None = None  # the custom-form op whose format is being bound
        #: where the :class:`~tile_lsp.analysis.ir.core.Span` s read now go: the op being built's
        #: own list while it is built, else the top level's (the module's)
        self.spans: list[Span] = self.module.spans
        #: the line the spans read now count from (:class:`~tile_lsp.analysis.ir.core.Span`)
        self.span_base = 0
        #: per region being built, innermost last: the ``(op, successor index)`` of its ops' successors
        self._successors: list[list[tuple[Operation, int]]] = []

    # -- ranges and diagnostics ------------------------------------------------

    def rng(self, node: Any) -> Range | None:
        if isinstance(node, Token):
            if node.start_pos is None:
                return None
            return self.source.range(self.base + node.start_pos, self.base + node.end_pos)
        if isinstance(node, Tree):
            meta = node._meta  # not ``node.meta``, which makes an empty Meta for a node without one
            if meta is None or getattr(meta, "empty", True):
                return None
            return self.source.range(self.base + meta.start_pos, self.base + meta.end_pos)
        return None

    def point(self, node: Any) -> Range | None:
        r = self.rng(node)
        return r.at_start() if r else None

    def error(self, message: str, rng: Range | None, code: str, notes: list[Note] | None = None,
              fatal: bool = True) -> None:
        """Report a parse-level error.  With ``stop_at_first_error``, a ``fatal`` one ends the chunk.

        Some of NVIDIA's parsers emit a second error before failing
        (``fatal=False`` for the first), as MLIR prints both.
        """
        follows = self._continued == len(self.diagnostics)
        self.diagnostics.append(Diagnostic(Severity.ERROR, message, rng, code, notes or [], follows=follows))
        self._continued = -1 if fatal else len(self.diagnostics)
        if self.stop_at_first_error and fatal:
            raise BuildError(message)

    def _token_before(self, rng: Range | None) -> Range | None:
        """The one-character token just before ``rng`` (past blanks), as a point; ``None`` when the text
        before it is not such a token."""
        if rng is None:
            return None
        i = self.source.offset(rng.start) - self.base
        while i > 0 and self.text[i - 1] in " \t\r\n":
            i -= 1
        if i == 0 or self.text[i - 1] not in ":=(,":
            return None
        return self.source.range(self.base + i - 1, self.base + i - 1)

    def _after_token(self, tok: Token) -> Range:
        """Where MLIR's ``emitWrongTokenError`` reports an error met at the token after ``tok``:
        the end of ``tok`` (past blanks and comments), or, at the end of the text, its last
        character (:func:`~tile_lsp.grammar.parser_state.wrong_token_offset`)."""
        after = next_token_offset(self.text, tok.end_pos)
        at_end = after >= self.end
        pos = wrong_token_offset(self.text[:self.end], self.end, eof=True) if at_end \
            else wrong_token_offset(self.text, after)
        return self.source.range(self.base + pos, self.base + pos)

    def slice(self, node: Tree | Token) -> str:
        if isinstance(node, Token):
            return str(node)
        if getattr(node.meta, "empty", True):
            return ""
        return self.text[node.meta.start_pos:node.meta.end_pos]

    # -- entry ---------------------------------------------------------------

    def build(self, tree: Tree | None) -> Module:
        """Build the module of ``tree`` (the ``start`` rule); never raises."""
        if tree is None:
            return self.module
        scope = Scope(isolated=True)
        try:
            for item in tree.children:
                if not isinstance(item, Tree):
                    continue
                if item.data == "operation":
                    self.operation(item, self.module.body, scope)
                else:
                    self.alias_definition(item)
            self.finish_scope(scope)
        except BuildError:
            pass
        resolve_location_aliases(self.module, self.module.walk())
        self.diagnostics.extend(undefined_location_aliases(self.module))
        return self.module

    def alias_definition(self, item: Tree) -> tuple[str, str] | None:
        """Define the alias of a top-level ``#a = attr`` / ``!t = type`` item in the module's tables;
        returns ``(sigil, name)``, or ``None`` for another item.

        MLIR ``TopLevelOperationParser::parseAttributeAliasDef`` / ``parseTypeAliasDef``: an alias
        defined again is "redefinition of <kind> alias id '<name>'", at its name.
        """
        if item.data == "attr_alias_def":
            sigil, kind, table = "#", "attribute", self.module.attr_aliases
        elif item.data == "type_alias_def":
            sigil, kind, table = "!", "type", self.module.type_aliases
        else:
            return None
        tok = item.children[0]
        name = str(tok)[1:]
        rng = self.rng(tok)
        if rng is not None:
            self.spans.append(Span.of(sigil, rng, name, definition=True, base_line=self.span_base))
        if name in table:
            self.error(f"redefinition of {kind} alias id '{name}'", rng, "parse.alias")
        table[name] = self.attribute(item.children[1]) if sigil == "#" else self.generic_type(item.children[1])
        return sigil, name

    def reference_range(self, scope: Scope, key: str) -> Range | None:
        """Where ``key`` was defined (visible from ``scope``) or first used as a forward reference in
        ``scope``'s isolated region, else ``None`` (MLIR ``OperationParser::getReferenceLoc``)."""
        value = scope.lookup(key)
        if value is not None:
            return value.range
        uses = _isolated_scope(scope).pending.get(key)
        return uses[0][2] if uses else None

    def finish_scope(self, scope: Scope) -> None:
        """Report forward references never defined, at the end of the region.

        As MLIR's ``OperationParser::popSSANameScope``: one error per name, at
        its first use (where its placeholder was made), in text order.
        """
        firsts = [uses[0][2] for uses in scope.pending.values() if uses]
        firsts.sort(key=lambda r: (r is not None, r.start if r is not None else None))
        for rng in firsts:
            self.error("use of undeclared SSA value name", rng, "structure.undefined-value")

    # -- values ------------------------------------------------------------------

    def define(self, scope: Scope, value: Value, name_node: Any) -> None:
        """Bind ``value`` in ``scope``; a name bound already is "redefinition of SSA value".

        The error sits at ``name_node`` or, for block arguments (no node), at
        the value's own range: never without a location.
        """
        key = canonical_value_name(value.name)
        # MLIR OperationParser::addDefinition: any name visible there, from an enclosing region too
        # (one table per isolated-from-above region), cannot be defined again
        prior = scope.lookup(key)
        if prior is not None:
            where = self.rng(name_node) if name_node is not None else value.range
            self.error(f"redefinition of SSA value '{_ssa_name(value.name)}'", where,
                       "structure.redefinition", [Note("previously defined here", prior.range)])
            return
        scope.values[key] = value
        # forward references wait in the isolated scope (see :meth:`use`): as
        # MLIR's per-isolated-region value table, a definition in any nested
        # region resolves them (the verifier then reports the dominance)
        pending = _isolated_scope(scope).pending.pop(key, None)
        if pending:
            # MLIR ``OperationParser::addDefinition``: the forward reference's
            # placeholder has the type of its first use
            _, _, first_rng, expected = pending[0]
            if expected is not None and expected != T.UNKNOWN and value.type != T.UNKNOWN and expected != value.type:
                number = value.name.split("#", 1)[1] if "#" in value.name else "0"
                where = self.rng(name_node) if name_node is not None else value.range
                self.error(
                    f"definition of SSA value '{_ssa_name(value.name)}#{number}' has type {_q(value.type)}",
                    where, "structure.use-type",
                    [Note(f"previously used here with type {_q(expected)}", _start(first_rng))])
            for op, idx, rng, expected in pending:
                op.operands[idx] = value
                value.uses.append(Use(op, idx, rng))

    def use(self, scope: Scope, name: str, rng: Range | None, expected: T.Type | None,
            op: Operation, index: int) -> Value:
        """Resolve a use of ``name`` expecting type ``expected`` (``None``: any).

        As MLIR's parser stops at the first error, only the first mismatching
        use of an op is reported (``op.invalid`` marks that one was).
        """
        key = canonical_value_name(name)
        value = scope.lookup(key)
        if value is None:
            # forward reference within this region, resolved when defined
            placeholder = Value(name, expected if expected is not None else T.UNKNOWN, rng)
            target = _isolated_scope(scope)
            earlier = target.pending.get(key)
            if earlier:
                # resolveSSAUse: a later use checks the placeholder's type (its first use's)
                _, _, first_rng, first_type = earlier[0]
                if (expected is not None and expected != T.UNKNOWN and first_type is not None
                        and first_type != T.UNKNOWN and expected != first_type and not op.invalid):
                    op.invalid = True
                    self.error(
                        f"use of value '{_ssa_name(name)}' expects different type than prior uses: "
                        f"{_q(expected)} vs {_q(first_type)}",
                        rng, "structure.use-type", [Note("prior use here", _start(first_rng))])
            target.pending.setdefault(key, []).append((op, index, rng, expected))
            return placeholder
        if (expected is not None and expected != T.UNKNOWN and value.type != T.UNKNOWN
                and expected != value.type and not op.invalid):
            op.invalid = True
            self.error(
                f"use of value '{_ssa_name(name)}' expects different type than prior uses: "
                f"{_q(expected)} vs {_q(value.type)}",
                rng, "structure.use-type", [Note("prior use here", _start(value.range))])
        value.uses.append(Use(op, index, rng))
        return value

    # -- operations ----------------------------------------------------------------

    def operation(self, tree: Tree, block: Block, scope: Scope) -> Operation | None:
        """Build the op of an ``operation`` tree into ``block`` (``None`` when it cannot be built),
        with the spans of its own text (:attr:`Operation.spans`)."""
        # the op's spans go on the end of the one list (a nested op takes its own off before it
        # returns), counted from the op's first line
        mark, outer_base = len(self.spans), self.span_base
        rng = self.rng(tree)
        self.span_base = rng.start.line if rng is not None else 0
        try:
            op = self._operation(tree, block, scope, rng)
        finally:
            mine = self.spans[mark:]
            del self.spans[mark:]
            self.span_base = outer_base
        if op is not None and mine and rng is not None:
            op.spans = tuple(mine)
        return op

    def _operation(self, tree: Tree, block: Block, scope: Scope, rng: Range | None) -> Operation | None:
        results_tree, body, loc_tree = tree.children
        bound: list[tuple[str, int, Any]] = []  # (name, count, node)
        if results_tree is not None:
            total = 0
            for r in results_tree.children:
                name_tok, count_tok = r.children
                count = self.result_count(count_tok, total) if count_tok is not None else 1
                total += count
                bound.append((str(name_tok), count, name_tok))
        if body.data == "generic_op":
            op = self.generic_op(body, bound, block, scope)
        else:
            op = self.custom_op(body.children[0], bound, block, scope)
        if op is None:
            return None
        op.range = rng
        if loc_tree is not None:
            op.location = self.location(loc_tree.children[0], deferred=True)
        op.parent = block
        block.operations.append(op)
        return op

    def result_count(self, tok: Token, bound_so_far: int) -> int:
        """The size of a result group ``%x:N``, checked before any work proportional to it.

        As MLIR's ``OperationParser::parseOperation``, ``N`` is read as an
        unsigned 64-bit integer (decimal or ``0x`` hexadecimal), and a value
        below 1 or beyond 64 bits is "expected named operation to have at
        least 1 result".  tile-lsp also bounds the results bound by one op to
        :data:`~tile_lsp.analysis.ir.limits.MAX_BOUND_RESULTS` (all groups
        together; a group beyond it is reported at ``N``).  A rejected group
        counts as one result, so the names after it stay defined.
        """
        value = parse_uint64(str(tok))
        if value is None or value < 1:
            self.error("expected named operation to have at least 1 result", self.point(tok),
                       "structure.result-count")
            return 1
        if bound_so_far + value > MAX_BOUND_RESULTS:
            self.error(f"result group of {value} results is out of range: an operation binds at most "
                       f"{MAX_BOUND_RESULTS} results", self.rng(tok), "structure.result-count")
            return 1
        return value

    def bind_results(self, op: Operation, bound: list[tuple[str, int, Any]], result_types: list[T.Type],
                     scope: Scope, node: Any) -> None:
        total = sum(c for _, c, _ in bound)
        if bound and not result_types:
            self.error("cannot name an operation with no results", self.point(bound[0][2]), "structure.result-count")
        elif bound and total != len(result_types):
            # MLIR reports it at the start of the statement (the first result name)
            self.error(f"operation defines {len(result_types)} results but was provided {total} to bind",
                       self.point(bound[0][2]), "structure.result-count")
        index = 0
        for name, count, name_node in bound:
            for k in range(count):
                t = result_types[index] if index < len(result_types) else T.UNKNOWN
                vname = name if count == 1 else f"{name}#{k}"
                res = OpResult(vname, t, self.rng(name_node), owner=op, index=index)
                op.results.append(res)
                if k == 0:  # `%x` (and `%x#0`) names the first result of a group
                    self.define(scope, res, name_node)
                elif f"{name}#{k}" not in scope.values:
                    scope.values[f"{name}#{k}"] = res
                index += 1
        while index < len(result_types):
            op.results.append(OpResult(f"<result {index}>", result_types[index], None, owner=op, index=index))
            index += 1

    # -- generic form ------------------------------------------------------------

    def generic_op(self, tree: Tree, bound, block: Block, scope: Scope) -> Operation:
        name_tok, operands_t, succ_t, props_t, regions_t, attrs_t, ftype_t = tree.children
        name = self.string_literal(name_tok) if str(name_tok).startswith('"') else str(name_tok)
        opdef = lookup(name) if "." in name else None
        op = Operation(name, opdef, generic=True, name_range=self.rng(name_tok))
        op.parent = block  # known to what its regions hold while they are built (_enclosing_ops)
        errors_before = len(self.diagnostics)
        # MLIR ``parseGenericOperationAfterOpName``: operands (unresolved),
        # successors, properties, regions, attribute dict, function type; only
        # then are the operands resolved, and the results bound after the op.
        if succ_t is not None:
            op.successors, op.successor_ranges = [], []
            for s in succ_t.children:
                # a stand-in until the enclosing region's blocks are known (region)
                op.successors.append(Block(label=str(s.children[0])))
                op.successor_ranges.append(self.rng(s.children[0]))
                if self._successors:
                    self._successors[-1].append((op, len(op.successors) - 1))
                else:
                    # built outside any region of this builder: at the top level, or as one statement of
                    # a body the incremental analysis splits, which it does only for a body without
                    # block labels (a labelled body is built whole); no label is in scope
                    self.error("reference to an undefined block", op.successor_ranges[-1],
                               "structure.undefined_block")
        if props_t is not None:
            d = self.attribute(props_t.children[0])
            op.properties.update(d.entries if isinstance(d, A.DictAttr) else {})
        region_errors = len(self.diagnostics)
        if regions_t is not None:
            isolated = opdef is not None and opdef.has_trait("IsolatedFromAbove")
            for rt in regions_t.children:
                op.add_region(self.region(rt, op, scope, [], isolated))
        region_errors = len(self.diagnostics) - region_errors
        if attrs_t is not None:
            d = self.attribute(attrs_t)
            if isinstance(d, A.DictAttr):
                for k, v in d.entries.items():
                    if opdef is not None and opdef.attribute(k) is not None and k not in op.properties:
                        op.properties[k] = v
                    else:
                        op.attributes[k] = v
        ftype = self.generic_type(ftype_t)
        inputs = list(ftype.inputs) if isinstance(ftype, T.FunctionType) else []
        outputs = list(ftype.results) if isinstance(ftype, T.FunctionType) else []
        uses = operands_t.children if operands_t is not None else []
        if len(uses) != len(inputs):
            self.error(f"expected {len(uses)} operand type{'s' if len(uses) != 1 else ''} but had {len(inputs)}",
                       self.point(ftype_t), "parse.operand-types")
        for i, u in enumerate(uses):
            vname = str(u.children[0])
            rng = self.rng(u)
            op.operands.append(None)  # type: ignore[arg-type]
            op.operand_ranges.append(rng)
            op.operands[i] = self.use(scope, vname, rng, inputs[i] if i < len(inputs) else None, op, i)
        self.bind_results(op, bound, outputs, scope, name_tok)
        if opdef is not None:
            self.assign_segments(op, opdef)
        # errors of the op itself, not of the ops nested in its regions
        op.invalid = len(self.diagnostics) - region_errors > errors_before
        return op

    def string_literal(self, tok: Token) -> str:
        """The value of a string token, decoding the escapes MLIR's lexer knows.

        MLIR (``Lexer::lexString``) accepts a backslash followed by a
        backslash, a double quote, ``n``, ``t`` or two hex digits; any other
        escape is "unknown escape in string literal", reported at the
        backslash (the value keeps it as written).
        """
        text = str(tok)
        m = next((e for e in _ESCAPE.finditer(text, 1, max(len(text) - 1, 1)) if e.group(1) is not None), None)
        if m is not None:
            where = self.rng(tok)
            if where is not None and tok.start_pos is not None:
                at = self.source.position(self.base + tok.start_pos + m.start())
                where = Range(at, at)
            self.error("unknown escape in string literal", where, "parse.string")
        return unquote(text)

    def assign_segments(self, op: Operation, opdef: OpDef) -> None:
        """Split a generic op's operands/results into ODS groups (``operandSegmentSizes``).

        Sizes that cannot describe the operands (negative, another count of
        groups, another total) are ignored here: the verifier reports them
        (:func:`tile_lsp.analysis.verify.verifier._verify_segment_sizes`).
        """
        seg_attr = op.properties.get("operandSegmentSizes") or op.attributes.get("operandSegmentSizes")
        sizes: list[int] | None = None
        if isinstance(seg_attr, A.DenseArrayAttr):
            sizes = segment_sizes(seg_attr, len(opdef.operands), len(op.operands))
        op.operand_segments = op_segments(opdef.operands, len(op.operands), sizes)
        op.result_segments = op_segments(opdef.results, len(op.results), None)

    # -- custom form -----------------------------------------------------------------

    def custom_op(self, tree: Tree, bound, block: Block, scope: Scope) -> Operation | None:
        opname_tree = tree.children[0]
        name_tok = opname_tree.children[0]
        short = str(name_tok).split(".", 1)[-1] if str(name_tok).startswith("cuda_tile.") else str(name_tok)
        opdef = lookup(short)
        assert opdef is not None and opdef.format is not None
        if opdef.name == "module" and str(name_tok) in ("module", "builtin.module") and (
                str(name_tok) == "builtin.module" or block is self.module.body
                or (block.parent_op is not None and block.parent_op.name == "builtin.module")):
            # MLIR resolves a bare `module` outside cuda_tile ops to builtin.module
            opdef = lookup("builtin.module")
        op = Operation(opdef.full_name, opdef, name_range=self.rng(name_tok))
        op.parent = block  # known to what its regions hold while they are built (_enclosing_ops)
        if self.builtin_default and "." not in str(name_tok) and opdef.dialect == "cuda_tile" \
                and default_dialect(_enclosing_ops(block)) == "builtin":
            # MLIR parseCustomOperationName: a name without a dialect is tried in the default dialect of
            # the enclosing ops (builtin at the top level); the op is built all the same
            self.error(unknown_operation_message(str(name_tok), "builtin"), self.rng(name_tok), "parse.unknown_op")
        errors_before = len(self.diagnostics)
        parts = _OpParts()
        elems = parse_format(opdef.format)
        fmt_tree = tree.children[1] if len(tree.children) > 1 else None
        children = _children(fmt_tree)
        outer_custom_op, self._custom_op = self._custom_op, opdef.full_name
        try:
            self.bind_format(opdef, elems, children, parts, bound, op, scope, tree, name_tok)
        finally:
            self._custom_op = outer_custom_op
        self.finish_custom_op(op, opdef, parts, bound, scope, name_tok, errors_before)
        return op

    def bind_format(self, opdef: OpDef, elems: tuple, children: list, parts: _OpParts, bound,
                    op: Operation, scope: Scope, tree: Tree, name_tok: Token) -> None:
        """Walk the format, infer the types it leaves out and run the op's parse-time rules."""
        self.walk(opdef, elems, children, parts)
        if opdef.full_name == "cuda_tile.module" and "sym_name" not in parts.props:
            # NVIDIA ModuleOp::parse (parseSymbolName): at the token after the op name
            after = next_token_offset(self.text, name_tok.end_pos)
            self.error(f"custom op '{opdef.full_name}' expected valid '@'-identifier for symbol name",
                       self.source.range(self.base + after, self.base + after), "parse.symbol")
        _disambiguate_optional_operands(opdef, parts)
        self.split_operands_directive(opdef, parts, name_tok)
        parts.written_types = frozenset(parts.types)
        self.infer_types(opdef, parts, bound)
        if opdef.dialect == "cuda_tile" and opdef.name in PARSE_RULES:  # rules are keyed by cuda_tile names
            self.run_parse_rules(opdef, parts, op, scope, tree)
        for node in parts.deferred_types:
            self.type(node)

    def split_operands_directive(self, opdef: OpDef, parts: _OpParts, name_tok: Token) -> None:
        """Split the ``operands`` directive's values into the ODS groups and check ``type(operands)``.

        The groups are sized as the generic form's (``operandSegmentSizes``
        when it is written and consistent, else one variadic group takes the
        rest).  As MLIR's ``resolveOperands``, a type list of another length
        is reported where the operands start: ``number of operands and types
        do not match: got N operands and M types``.
        """
        uses = parts.operands.pop("__operands__", None)
        n = len(uses) if uses is not None else sum(len(parts.operands.get(o.name, [])) for o in opdef.operands)
        types = parts.types.get("__operands__")
        if types is not None and len(types) != n:
            if uses:
                where = _start(uses[0][1])
            else:
                first = next((u for o in opdef.operands for u in parts.operands.get(o.name, [])), None)
                where = _start(first[1]) if first is not None else self.point(name_tok)
            self.error(f"custom op '{opdef.full_name}' number of operands and types do not match: "
                       f"got {n} operands and {len(types)} types", where, "parse.operand-types")
        if uses is None:
            return
        seg = parts.attrs.get("operandSegmentSizes") or parts.props.get("operandSegmentSizes")
        # sizes that do not describe the operands: the verifier reports the attribute
        sizes = segment_sizes(seg, len(opdef.operands), n) if isinstance(seg, A.DenseArrayAttr) else None
        for name, (start, size) in op_segments(opdef.operands, n, sizes).items():
            parts.operands[name] = uses[start:start + size]

    def finish_custom_op(self, op: Operation, opdef: OpDef, parts: _OpParts, bound, scope: Scope,
                         name_tok: Token, errors_before: int) -> None:
        """Build the regions, resolve the operands, attach attributes and bind the results.

        The order is MLIR's: a custom parser reads the whole format (regions
        included) before ``resolveOperands``, and ``OperationParser::parseOperation``
        binds the result names once the op is parsed.
        """
        # results
        result_types: list[T.Type] = []
        for r in opdef.results:
            ts = parts.types.get(r.name)
            if r.kind == "variadic":
                if ts is None and parts.uniform_result_type is not None:
                    others = sum(1 for x in opdef.results if x.kind != "variadic")
                    n = max(sum(c for _, c, _ in bound) - others, 0)
                    ts = [parts.uniform_result_type] * n
                result_types.extend(ts or [])
            elif r.kind == "optional":
                result_types.extend(ts or [])
            else:
                result_types.append(ts[0] if ts else T.UNKNOWN)
        # after an error in the op's format (a type that breaks its verifier...) MLIR never gets to
        # resolve the operands: their types are not compared
        op.invalid = op.invalid or len(self.diagnostics) > errors_before
        # MLIR parses the whole format, regions included, before resolving
        # the operands (ODS-generated parsers and NVIDIA's ``ForOp::parse`` /
        # ``LoopOp::parse`` alike); the results are bound after the op.
        region_errors = len(self.diagnostics)
        self.custom_regions(op, opdef, parts, scope)
        region_errors = len(self.diagnostics) - region_errors
        # operands in ODS order
        index = 0
        for o in opdef.operands:
            uses = parts.operands.get(o.name, [])
            ts = parts.types.get(o.name)
            start = index
            self.check_operand_type_count(opdef, o, uses, ts, parts, name_tok)
            for k, (vname, rng) in enumerate(uses):
                expected = None
                if ts:
                    expected = ts[k] if k < len(ts) else ts[-1]
                op.operands.append(None)  # type: ignore[arg-type]
                op.operand_ranges.append(rng)
                op.operands[index] = self.use(scope, vname, rng, expected, op, index)
                index += 1
            op.operand_segments[o.name] = (start, index - start)
        op.properties.update(parts.props)
        for k, v in parts.attrs.items():
            if opdef.attribute(k) is not None and k not in op.properties:
                op.properties[k] = v
            else:
                op.attributes[k] = v
        self.bind_results(op, bound, result_types, scope, name_tok)
        rindex = 0
        for r in opdef.results:
            n = 1 if r.kind == "single" else len(parts.types.get(r.name) or [])
            if r.kind == "variadic" and r.name not in parts.types:
                n = len(op.results) - rindex
            op.result_segments[r.name] = (rindex, n)
            rindex += n
        # errors of the op itself, not of the ops nested in its regions
        op.invalid = len(self.diagnostics) - region_errors > errors_before
        return op

    def check_operand_type_count(self, opdef: OpDef, o, uses, ts, parts: _OpParts, name_tok: Token) -> None:
        """MLIR ``OpAsmParser::resolveOperands``, as ODS-generated parsers call it per operand group.

        An optional or variadic group whose written types (``type($x)``) are
        not as many as its operands is "custom op 'X' number of operands and
        types do not match: got N operands and M types", at the group's first
        operand, or at the op name when the group's optional part was absent
        (its location was never set).  Only for declarative formats: NVIDIA's
        C++ parsers resolve their own way.
        """
        if o.kind == "single" or ts is None or o.name not in parts.written_types or len(ts) == len(uses):
            return
        if opdef.format == CUSTOM_FORMATS.get(opdef.name):
            return
        if uses:
            where = _start(uses[0][1])
        elif o.name not in parts.read_operands:
            where = self.point(name_tok)
        elif parts.type_ranges.get(o.name):
            # an empty list where it was read: at the token that came instead of an operand, the
            # punctuation before its types (`(` `:` in `( : type)`, `token =  : type`)
            where = self._token_before(parts.type_ranges[o.name][0])
            if where is None:
                return
        else:
            return
        self.error(f"custom op '{opdef.full_name}' number of operands and types do not match: "
                   f"got {len(uses)} operands and {len(ts)} types", where, "parse.operand-types")

    def custom_regions(self, op: Operation, opdef: OpDef, parts: _OpParts, scope: Scope) -> None:
        """Build the regions of a custom-form op (before its operands are resolved, as MLIR)."""
        isolated = opdef.has_trait("IsolatedFromAbove")
        if parts.all_regions is not None:
            for rtree in parts.all_regions:
                op.add_region(self.region(rtree, op, scope, [], isolated))
            return
        for rdef in opdef.regions:
            entry = parts.regions.get(rdef.name)
            if entry is None:
                op.add_region(Region(parent=op))
                continue
            rtree, args = entry
            op.add_region(self.region(rtree, op, scope, args, isolated))

    def run_parse_rules(self, opdef: OpDef, parts: _OpParts, op: Operation, scope: Scope, tree: Tree) -> None:
        """Run the parse-time rules of NVIDIA's C++ parser for this op (parse_rules package)."""

        def value_type(name: str) -> T.Type | None:
            v = scope.lookup(canonical_value_name(name))
            return v.type if v is not None else None

        def emit(message: str, rng: Range | None, notes: list[Note] | None = None, fatal: bool = True) -> None:
            self.error(message, rng, f"parse.{opdef.name}", notes, fatal)

        run_parse_rules(ParseContext(
            opdef, parts.operands, parts.types, parts.type_ranges, parts.props, parts.nodes,
            value_type, op.name_range, self.rng(tree), emit, self.rng, self.text, self.source, self.base))

    def walk(self, opdef: OpDef, elems: tuple, children: list, parts: _OpParts) -> None:
        """Bind the format elements ``elems`` to the aligned tree ``children``."""
        it = iter(children)
        for e in elems:
            if isinstance(e, Literal):
                continue
            if isinstance(e, Var):
                attr = opdef.attribute(e.name)
                if attr is not None and attr.kind == "unit":
                    parts.props[e.name] = A.UnitAttr()
                    continue
                self.bind_var(opdef, e, next(it, None), parts)
            elif isinstance(e, Directive):
                self.bind_directive(opdef, e, next(it, None), parts)
            elif isinstance(e, OptionalGroup):
                child = next(it, None)
                if child is None:
                    continue
                if child.data.startswith("alt_"):
                    inner = child.children[0]
                    if inner.data.startswith("og_"):
                        self.walk(opdef, e.then, _children(inner), parts)
                    else:
                        self.walk(opdef, e.else_, _children(inner), parts)
                else:
                    self.walk(opdef, e.then, _children(child), parts)
            elif isinstance(e, OIList):
                child = next(it, None)
                present = {str(t) for t in (child.children if child is not None else [])}
                for kw, attr_name in e.clauses:
                    if kw in present:
                        parts.props[attr_name] = A.UnitAttr()

    def bind_var(self, opdef: OpDef, var: Var, child: Any, parts: _OpParts) -> None:
        name = var.name
        parts.nodes[name] = child
        if opdef.operand(name) is not None:
            parts.read_operands.add(name)
            if child is None:
                parts.operands[name] = []
            elif child.data == "value_use":
                parts.operands[name] = [(str(child.children[0]), self.rng(child))]
            else:  # value_use_list
                parts.operands[name] = [(str(u.children[0]), self.rng(u)) for u in child.children]
            return
        attr = opdef.attribute(name)
        if attr is not None:
            if child is None:
                return
            parts.props[name] = self.format_attr(attr.kind, child, name, opdef)
            return
        if any(r.name == name for r in opdef.regions):
            parts.regions[name] = (child, [])
            return

    def format_attr(self, kind: str, node: Any, name: str, opdef: OpDef) -> A.Attribute:
        """Convert the format child ``node`` of attribute ``name`` of ``kind`` (see AttrDef)."""
        if kind.startswith("enum:"):
            enum = kind[5:]
            tok = node.children[0]
            case = str(tok)
            cases = ENUMS[enum].spellings if enum in ENUMS else None
            if (cases is not None and case not in cases
                    and name not in CUSTOM_ENUM_KEYWORDS.get(opdef.name, ())):  # those have their own words
                # the wording of ODS's generated enum parser
                self.error(f"custom op '{opdef.full_name}' expected string or keyword containing one of the "
                           f"following enum values for attribute '{name}' [{', '.join(cases)}]",
                           self.point(tok), "parse.enum")
            return A.EnumAttr(enum, case, range=self.rng(tok))
        if isinstance(node, Tree) and node.data in ("fmt_int", "fmt_bool", "fmt_string", "fmt_symbol"):
            tok = node.children[0]
            if node.data == "fmt_int":
                return A.IntegerAttr(int_token(tok), range=self.rng(tok))
            if node.data == "fmt_bool":
                return A.BoolAttr(str(tok) == "true", range=self.rng(tok))
            if node.data == "fmt_string":
                return A.StringAttr(unquote(str(tok)), range=self.rng(tok))
            sym = symbol_text(str(tok))
            if kind == "symbol_name":
                return A.SymbolNameAttr(sym, range=self.rng(tok))
            return A.SymbolRefAttr(sym, range=self.rng(tok))
        if isinstance(node, Tree) and node.data == "fmt_int_array":
            lst = node.children[0]
            vals = [int_token(t) for t in lst.children] if lst is not None else []
            return A.DenseArrayAttr(T.IntegerType(32), vals, range=self.rng(node))
        if isinstance(node, Tree) and node.data == "pretty_body":
            return self.cuda_tile_attribute(name, self.slice(node)[1:-1].strip(), self.rng(node))
        if kind == "type":
            return A.TypeAttr(self.type(node), range=self.rng(node))
        return self.attribute(node)

    def bind_directive(self, opdef: OpDef, d: Directive, child: Any, parts: _OpParts) -> None:
        """Bind the tree ``child`` of directive ``d``: MLIR's own directives here, a ``custom<X>`` one
        by its object (:data:`~tile_lsp.analysis.ir.directives.DIRECTIVES`)."""
        name = d.name
        if name == "attr-dict":
            if child is not None:
                parts.attrs.update(self.attribute(child).entries)
            return
        if name == "attr-dict-with-keyword":
            if child is not None:
                parts.attrs.update(self.attribute(child.children[0]).entries)
            return
        if name == "type":
            bound = target(d)
            if bound is None and d.args and isinstance(d.args[0], Directive) \
                    and d.args[0].name in ("operands", "results"):
                bound = f"__{d.args[0].name}__"  # split into the ODS groups by infer_types
            if bound is not None and child is not None:
                parts.types[bound] = self.type_list(child)
                parts.type_ranges[bound] = self.type_ranges(child)
            return
        if name == "functional-type":
            ft = self.type(child)
            if isinstance(ft, T.FunctionType):
                for arg, types in zip(d.args, (ft.inputs, ft.results)):
                    if isinstance(arg, Directive) and arg.name in ("operands", "results"):
                        parts.types[f"__{arg.name}__"] = list(types)
            return
        if name == "operands":
            # every operand, split into the ODS groups once the attributes are known (bind_format)
            uses = child.children if child is not None else []
            parts.operands["__operands__"] = [(str(u.children[0]), self.rng(u)) for u in uses]
            return
        if name == "regions":
            parts.all_regions = [c for c in child.children if isinstance(c, Tree)] if child is not None else []
            return
        if name != "custom":
            return
        first = target(d.args[0]) if d.args else None
        if first is not None:
            parts.nodes.setdefault(first, child)
        DIRECTIVES[d.custom].build(self, opdef, d, child, parts)

    # -- what the custom directives ask of the builder ---------------------------

    def point_after(self, node: Tree) -> Range:
        """Where MLIR reports an error met after ``node``: the start of the next token, as a point."""
        after = next_token_offset(self.text, node.meta.end_pos)
        return self.source.range(self.base + after, self.base + after)

    def unverified_type(self, node: Any) -> T.Type:
        """:meth:`type` without the type verifier, for a type whose verification comes later."""
        return self._type(node)

    def dense_literal(self, lit: Any, element: T.Type) -> tuple[Any, tuple[int, ...] | None]:
        """``(values, shape)`` of a dense literal subtree of ``element`` values (``[]`` for none)."""
        values = self.dense_values(lit, element) if lit is not None else []
        return values, literal_shape(values)

    def infer_types(self, opdef: OpDef, parts: _OpParts, bound) -> None:
        """Fill the types the format leaves out from the op table's ``type_inference``."""
        for name, expr in opdef.type_inference.items():
            m = re.fullmatch(r"splat_rank\((\w+)\)", expr)
            if m and parts.uniform_result_type is not None and parts.types.get(m.group(1)):
                rank = index_space_rank(parts.types[m.group(1)][0])
                if rank is not None:
                    parts.types[name] = [parts.uniform_result_type] * rank
        for _ in range(3):  # chains (a from b from c) settle in a few rounds
            for name, expr in opdef.type_inference.items():
                if name in parts.types:
                    continue
                ts = apply_transform(expr, parts.types)
                if ts is not None:
                    entity = opdef.operand(name) or opdef.result(name)
                    if entity is not None and entity.kind == "variadic":
                        n = len(parts.operands.get(name, [])) if opdef.operand(name) else len(ts)
                        ts = (ts * n)[:n] if len(ts) == 1 and n != 1 else ts
                    parts.types[name] = ts
        if "__operands__" in parts.types:
            ts = parts.types.pop("__operands__")
            k = 0
            for o in opdef.operands:
                n = len(parts.operands.get(o.name, []))
                parts.types.setdefault(o.name, ts[k:k + n])
                k += n
        if "__results__" in parts.types:
            ts = parts.types.pop("__results__")
            for name, (start, size) in op_segments(opdef.results, len(ts), None).items():
                parts.types.setdefault(name, ts[start:start + size])

    # -- regions --------------------------------------------------------------------

    def block_args(self, args_t: Tree | None, generic: bool = False) -> list[tuple[str, T.Type, Range | None]]:
        """``[(name, type, name range)]`` of a block argument list; ``generic``: a block label's
        (``^bb0(%x: T)``), whose types MLIR's generic type parser reads (:meth:`generic_type`)."""
        if args_t is None:
            return []
        out = []
        for a in args_t.children:
            name_tok, ty_t, _loc = a.children
            out.append((str(name_tok), self.generic_type(ty_t) if generic else self.type(ty_t), self.rng(name_tok)))
        return out

    def region(self, tree: Tree, op: Operation, scope: Scope, entry_args, isolated: bool) -> Region:
        """Build the region ``tree`` of ``op`` in a name scope nested in ``scope``.

        ``isolated`` (the op is IsolatedFromAbove) does not hide the names outside: MLIR's parser
        gives a region its own name table only at the top of the text (custom parsers, NVIDIA's
        function parser included, call ``parseRegion`` with name shadowing off; the generic form
        likewise), so an outer name is visible (and cannot be defined again); the verifier's
        isolation check then reports a use across the boundary ("using value defined outside the
        region").  Its forward references are still reported undeclared at its end
        (``Scope.pending_boundary``), where MLIR would look for them in the rest of the text.
        """
        region = Region(parent=op, range=self.rng(tree))
        inner = Scope(parent=scope, pending_boundary=isolated)
        self._successors.append([])
        body = tree.children[0]
        ops = [c for c in body.children if isinstance(c, Tree) and c.data == "operation"]
        blocks = [c for c in body.children if isinstance(c, Tree) and c.data == "block"]
        if ops or entry_args or not blocks:
            entry = Block(parent=region, range=self.rng(body))
            for k, (name, ty, rng) in enumerate(entry_args):
                arg = BlockArgument(name, ty if ty is not None else T.UNKNOWN, rng, owner=entry, index=k)
                entry.arguments.append(arg)
                prior = self.reference_range(scope, canonical_value_name(name))
                if prior is not None:
                    # MLIR OperationParser::parseRegionBody (getReferenceLoc): a named entry argument
                    # must not name a value visible where the region starts (checked before the
                    # region's own name scope is pushed, isolated or not) nor one used earlier and
                    # not defined yet (a forward reference)
                    self.error(f"region entry argument '{name}' is already in use", rng, "structure.redefinition",
                               [Note("previously referenced here", _start(prior))])
                    continue
                self.define(inner, arg, None)
            if ops or entry_args:
                region.blocks.append(entry)
                for o in ops:
                    self.operation(o, entry, inner)
        for bt in blocks:
            label_t = bt.children[0]
            label_tok, args_t = label_t.children
            blk = Block(label=str(label_tok), parent=region, range=self.rng(bt), label_range=self.rng(label_tok))
            for k, (name, ty, rng) in enumerate(self.block_args(args_t, generic=True)):
                arg = BlockArgument(name, ty, rng, owner=blk, index=k)
                blk.arguments.append(arg)
                self.define(inner, arg, None)
            region.blocks.append(blk)
            for o in bt.children[1:]:
                if isinstance(o, Tree):
                    self.operation(o, blk, inner)
        self.resolve_successors(region, self._successors.pop())
        self.finish_scope(inner) if isolated else self._hoist_pending(inner, scope)
        return region

    def resolve_successors(self, region: Region, successors: list[tuple[Operation, int]]) -> None:
        """Point each ``(op, index)`` successor at the block of ``region`` its label names; report those
        naming none, in text order: MLIR ``OperationParser::popSSANameScope``, "reference to an
        undefined block", once the region is parsed (block names are scoped to their region)."""
        if not successors:
            return  # the usual region: nothing to resolve, no table of its labels to build
        blocks = {b.label: b for b in region.blocks if b.label is not None}
        undefined = []
        for op, index in successors:
            block = blocks.get(op.successors[index].label)
            if block is None:
                undefined.append(op.successor_ranges[index])
            else:
                op.successors[index] = block
        undefined.sort(key=lambda r: (r.start.line, r.start.character) if r is not None else (-1, -1))
        for k, rng in enumerate(undefined):
            self.error("reference to an undefined block", rng, "structure.undefined_block",
                       fatal=k == len(undefined) - 1)

    def _hoist_pending(self, inner: Scope, outer: Scope) -> None:
        for name, uses in inner.pending.items():
            outer.pending.setdefault(name, []).extend(uses)

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _enclosing_ops(block: Block) -> list[str | None]:
    """The ops whose regions hold ``block``, outermost first, as :func:`default_dialect` reads them:
    the full name of a custom-form op, ``None`` for a generic one."""
    out: list[str | None] = []
    op = block.parent_op
    while op is not None:
        out.append(None if op.generic else op.name)
        op = op.parent_op
    return out[::-1]


def _disambiguate_optional_operands(opdef: OpDef, parts: _OpParts) -> None:
    """Give a lone optional operand to the slot its type fits (custom_formats.OPTIONAL_OPERANDS_BY_TYPE)."""
    entry = OPTIONAL_OPERANDS_BY_TYPE.get(opdef.name)
    if entry is None:
        return
    first, second, element = entry
    if not parts.operands.get(first) or parts.operands.get(second):
        return
    ts = parts.types.get(first)
    second_def = opdef.operand(second)
    if (ts and isinstance(ts[0], T.TileType) and str(ts[0].element) != element
            and second_def is not None and second_def.constraint.accepts(ts[0])):
        parts.operands[second] = parts.operands.pop(first)
        parts.types[second] = parts.types.pop(first)


def _children(tree: Tree | None) -> list:
    """Aligned children of a format rule: subtrees and ``None`` placeholders, tokens dropped."""
    if tree is None:
        return []
    return [c for c in tree.children if c is None or isinstance(c, Tree)]


#: an escape in a string token; group 1 is set for one MLIR's lexer rejects (anything but a
#: backslash, a double quote, ``n``, ``t`` or two hex digits after the backslash)
_ESCAPE = re.compile(r'\\(?:[\\"nt]|[0-9a-fA-F]{2}|(.|\Z))', re.S)


def _q(t: T.Type) -> str:
    return f"'{t}'"


def _start(r: Range | None) -> Range | None:
    return r.at_start() if r else None


#: The type nodes of the grammar that are cuda_tile types (short form or ``!cuda_tile.``-prefixed).
