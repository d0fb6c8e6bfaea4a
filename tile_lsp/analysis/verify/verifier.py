"""The verifier framework: rules registered per op name, run in MLIR's order.

For each operation, :func:`verify_module` runs, as ``mlir::verify`` does
(``mlir/lib/IR/Verifier.cpp``, ``OperationVerifier``):

1. the ODS invariants of the op definition (``verifyInvariantsImpl``):
   attribute presence, operand and result type constraints
   (``operand #N must be <summary>, but got '<type>'``), then the
   predicate traits of the table (``failed to verify that ...``);
2. the native traits (``SameOperandsAndResultType`` ...), in table order;
3. the op's own rules (``@rule("cuda_tile.addi")``), in registration order;
4. the nested regions' operations, then the op's region rules
   (``@region_rule``), as MLIR runs ``verifyRegions`` after the nested ops;
5. the structural rules (dominance, terminators, parents, symbols).

As in MLIR, the first failing step of an op stops that op's verification;
with ``mlir_compat`` (``--verify-diagnostics``) the first failing op ends the
run, as ``mlir::verify`` does, while an editor gets every failing op.
Every rule reports through :class:`VerifyContext`, which prefixes op errors
with ``'<op name>' op `` as ``Operation::emitOpError`` does and places them at
the op's name.  Each diagnostic carries a ``code`` naming its rule.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Range, Severity
from tile_lsp.analysis.ir.core import Module, Operation, SymbolTable, Value
from tile_lsp.analysis.ir.options import AnalysisOptions
from tile_lsp.dialect import types as T
from tile_lsp.dialect.registry import unregistered_in_loaded_dialect


log = logging.getLogger(__name__)


class VerifyFailure(Exception):
    """Raised by :meth:`VerifyContext.op_error` to stop verifying the current op."""


class StopVerification(Exception):
    """Ends the whole run after a failure when emulating mlir-opt (its verifier stops at the first failing op)."""


RuleFn = Callable[[Operation, "VerifyContext"], None]

_RULES: dict[str, list[tuple[str, RuleFn]]] = {}
_REGION_RULES: dict[str, list[tuple[str, RuleFn]]] = {}


def _registering(table: dict[str, list[tuple[str, RuleFn]]], op_names: tuple[str, ...], code: str | None):
    """A decorator appending ``(code or fn.__name__, fn)`` to ``table``'s list of each op in ``op_names``."""

    def deco(fn: RuleFn) -> RuleFn:
        for name in op_names:
            table.setdefault(name, []).append((code or fn.__name__, fn))
        return fn

    return deco


def rule(*op_names: str, code: str | None = None):
    """Register ``fn(op, ctx)`` as an own rule of each op in ``op_names`` (full names)."""
    return _registering(_RULES, op_names, code)


def region_rule(*op_names: str, code: str | None = None):
    """Register a rule run after the op's nested operations (MLIR ``verifyRegions``)."""
    return _registering(_REGION_RULES, op_names, code)


@dataclass
class VerifyContext:
    """State of one verification run: options, the module and the diagnostics."""

    options: AnalysisOptions
    module: Module
    diagnostics: list[Diagnostic] = field(default_factory=list)
    code: str = ""
    #: the symbol tables built so far in this run, by ``id`` of their op (or of the module)
    symbol_tables: dict[int, SymbolTable] = field(default_factory=dict)

    def symbol_table(self, op: Operation | Module) -> SymbolTable:
        """The :class:`~tile_lsp.analysis.ir.core.SymbolTable` of ``op``, built once per run: the
        region trait's duplicate check, the symbol uses and the incremental analysis's
        verification keys all read the module's (977 functions at 50,000 lines: it was built
        three times on each edit)."""
        table = self.symbol_tables.get(id(op))
        if table is None:
            table = self.symbol_tables[id(op)] = SymbolTable(op)
        return table

    def op_error(self, op: Operation, message: str, notes: list[Note] | None = None,
                 rng: Range | None = None) -> None:
        """Report ``'<op>' op <message>`` at the op's name and stop verifying ``op``."""
        self.emit(op, Severity.ERROR, f"'{op.name}' op {message}", notes, rng)
        raise VerifyFailure()

    def op_warning(self, op: Operation, message: str, rng: Range | None = None) -> None:
        """Report ``'<op>' op <message>`` as a warning; verification goes on."""
        self.emit(op, Severity.WARNING, f"'{op.name}' op {message}", None, rng)

    def error(self, op: Operation, message: str, notes: list[Note] | None = None, rng: Range | None = None) -> None:
        """Report ``message`` (no op prefix, MLIR ``emitError``) and stop verifying ``op``."""
        self.emit(op, Severity.ERROR, message, notes, rng)
        raise VerifyFailure()

    def emit(self, op: Operation, severity: Severity, message: str, notes: list[Note] | None,
             rng: Range | None) -> None:
        where = rng if rng is not None else op_location(op)
        self.diagnostics.append(Diagnostic(severity, message, where, self.code, notes or []))


def op_location(op: Operation) -> Range | None:
    """Where MLIR reports an op's diagnostics: the start of its name."""
    r = op.name_range or op.range
    return r.at_start() if r else None


def post_order(op: Operation) -> Iterator[Operation]:
    """MLIR's default ``Operation::walk`` order (``mlir/IR/Visitors.h``, ``WalkOrder::PostOrder``):
    the ops nested in ``op``'s regions, each after its own nested ops, then ``op`` itself."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from post_order(inner)
    yield op


# ---------------------------------------------------------------------------
# ODS invariants
# ---------------------------------------------------------------------------


def _verify_ods(op: Operation, ctx: VerifyContext) -> None:
    opdef = op.opdef
    if opdef is None:
        return
    ctx.code = f"{op.name}.attributes"
    for a in opdef.attributes:
        if not a.optional and a.default is None and a.kind != "unit" and op.attr(a.name) is None:
            ctx.op_error(op, f"requires attribute '{a.name}'")
    ctx.code = f"{op.name}.segments"
    _verify_segment_sizes(op, ctx)
    ctx.code = f"{op.name}.operand-type"
    _verify_type_constraints(op, ctx, "operand", opdef.operands, op.operand_segments, op.operands)
    ctx.code = f"{op.name}.result-type"
    _verify_type_constraints(op, ctx, "result", opdef.results, op.result_segments, op.results)


def _verify_segment_sizes(op: Operation, ctx: VerifyContext) -> None:
    """``operandSegmentSizes`` of an ``AttrSizedOperandSegments`` op describes its operands.

    MLIR's wording: ODS ``verifyInvariantsImpl`` for the number of entries
    ("'operandSegmentSizes' attribute for specifying operand segments must
    have N elements, but got M"), then ``OpTrait::impl::verifyValueSizeAttr``
    (``mlir/lib/IR/Operation.cpp``) for negative entries and for a total
    other than the operand count.  Checked before the type constraints,
    which split the operands by it.
    """
    from tile_lsp.analysis.ir import attributes as A

    opdef = op.opdef
    if opdef is None or not opdef.has_trait("AttrSizedOperandSegments"):
        return
    attr = op.properties.get("operandSegmentSizes") or op.attributes.get("operandSegmentSizes")
    if not isinstance(attr, A.DenseArrayAttr):
        return  # the custom form derives it; a missing one in the generic form is the builder's business
    sizes = [v for v in attr.values if isinstance(v, int) and not isinstance(v, bool)]
    if len(sizes) != len(attr.values):
        ctx.op_error(op, "requires dense i32 array attribute 'operandSegmentSizes'")
    if len(sizes) != len(opdef.operands):
        ctx.op_error(op, f"'operandSegmentSizes' attribute for specifying operand segments must have "
                         f"{len(opdef.operands)} elements, but got {len(sizes)}")
    if any(v < 0 for v in sizes):
        ctx.op_error(op, "'operandSegmentSizes' attribute cannot have negative elements")
    if sum(sizes) != len(op.operands):
        ctx.op_error(op, f"operand count ({len(op.operands)}) does not match with the total size "
                         f"({sum(sizes)}) specified in attribute 'operandSegmentSizes'")


def _verify_type_constraints(op: Operation, ctx: VerifyContext, what: str, defs, segments, values) -> None:
    """ODS ``<what> #N must be <summary>, but got '<type>'`` over the ODS groups of operands or results.

    Variadic constraints already read "variadic of ..." in the table.
    """
    for d in defs:
        start, size = segments.get(d.name, (0, 0))
        for k in range(max(start, 0), min(start + size, len(values))):
            t = values[k].type
            if t != T.UNKNOWN and not d.constraint.accepts(t):
                ctx.op_error(op, f"{what} #{k} must be {d.constraint.summary}, but got '{t}'")


def _verify_traits(op: Operation, ctx: VerifyContext) -> None:
    """Predicate traits first (ODS checks them in verifyInvariantsImpl), then native traits.

    ODS places ``OpInvariants`` before the native traits an op declares, so
    ``failed to verify that all of {...} have same type`` comes before, say,
    ``requires the same shape for all operands and results``, whatever the
    declaration order.
    """
    from tile_lsp.analysis.verify.traits import PREDICATE_TRAITS, check_trait, parse_trait

    opdef = op.opdef
    if opdef is None:
        return
    predicate = [t for t in opdef.traits if parse_trait(t)[0] in PREDICATE_TRAITS]
    native = [t for t in opdef.traits if parse_trait(t)[0] not in PREDICATE_TRAITS]
    for trait in predicate + native:
        ctx.code = f"{op.name}.trait"
        check_trait(trait, op, ctx)


def _verify_symbol_parent(op: Operation, ctx: VerifyContext) -> None:
    """MLIR ``detail::verifySymbol`` (SymbolOpInterface; a FunctionOpInterface op is a symbol): an op
    that defines a symbol sits in an op with the SymbolTable trait (the text's top level counts)."""
    opdef, parent = op.opdef, op.parent_op
    if opdef is None or parent is None or parent.opdef is None:
        return
    if not (opdef.has_trait("Symbol") or opdef.has_trait("FunctionOpInterface")):
        return
    if not parent.opdef.has_trait("SymbolTable"):
        ctx.code = f"{op.name}.symbol"
        ctx.op_error(op, "symbol's parent must have the SymbolTable trait")


# ---------------------------------------------------------------------------
# Structural rules
# ---------------------------------------------------------------------------


def _region_of(op: Operation):
    return op.parent.parent if op.parent is not None else None


def _is_proper_ancestor(outer, inner) -> bool:
    """Whether region ``outer`` strictly encloses region ``inner`` (MLIR ``Region::isProperAncestor``)."""
    while inner is not None:
        owner = inner.parent
        inner = _region_of(owner) if owner is not None else None
        if inner is outer:
            return True
    return False


def _result_dominates(owner: Operation, user: Operation, order: dict[int, dict[int, int]]) -> bool:
    """``DominanceInfo::properlyDominates`` for a result of ``owner`` used by ``user``
    (single-block regions; a value of a multi-block region is not judged).  ``order`` caches
    each block's op positions (``id(block) -> id(op) -> index``)."""
    block = owner.parent
    if block is None or (block.parent is not None and len(block.parent.blocks) != 1):
        return True
    anc: Operation | None = user
    while anc is not None and anc.parent is not block:
        anc = anc.parent_op
    if anc is None or anc is owner:
        return False
    index = order.get(id(block))
    if index is None:
        index = order[id(block)] = {id(o): i for i, o in enumerate(block.operations)}
    return index[id(owner)] < index[id(anc)]


def verify_dominance(root: Operation, ctx: VerifyContext) -> None:
    """MLIR ``OperationVerifier::verifyDominanceOfContainedRegions`` (``mlir/lib/IR/Verifier.cpp``).

    Run on an isolated-from-above op once it and everything in it verified:
    its regions' ops in order, nested regions after (a worklist, last pushed
    first), isolated ops and graph regions (``HasOnlyGraphRegion``) apart.  An
    operand whose definition does not properly dominate its user is "operand #N
    does not dominate this use" with the note "operand defined here (op ...)"
    naming where the definition's region is (``diagnoseInvalidOperandDominance``).
    """
    _verify_dominance_in(root, ctx)


def _verify_dominance_in(root, ctx: VerifyContext) -> None:
    """:func:`verify_dominance` over ``root``: an op, or the document's top-level :class:`Module`."""
    ctx.code = "structure.dominance"
    order: dict[int, dict[int, int]] = {}
    worklist = [root]
    while worklist:
        op = worklist.pop()
        graph = getattr(op, "opdef", None) is not None and op.opdef.has_trait("HasOnlyGraphRegion")
        blocks = [op.body] if isinstance(op, Module) else [b for r in op.regions for b in r.blocks]
        for block in blocks:
            for user in block.operations:
                if not graph:
                    for k, v in enumerate(user.operands):
                        owner = v.defining_op if v is not None else None
                        if owner is None or _result_dominates(owner, user, order):
                            continue
                        mine, theirs = _region_of(user), _region_of(owner)
                        if user.parent is owner.parent:
                            where = "op in the same block"
                        elif mine is theirs:
                            where = "op in the same region"
                        elif _is_proper_ancestor(theirs, mine):
                            where = "op in a parent region"
                        elif _is_proper_ancestor(mine, theirs):
                            where = "op in a child region"
                        else:
                            where = "op is neither in a parent nor in a child region"
                        ctx.diagnostics.append(Diagnostic(
                            Severity.ERROR, f"operand #{k} does not dominate this use", op_location(user),
                            ctx.code, [Note(f"operand defined here ({where})", op_location(owner))]))
                        raise VerifyFailure()
                if user.regions and not (user.opdef is not None and user.opdef.has_trait("IsolatedFromAbove")):
                    worklist.append(user)


def _verify_terminator(op: Operation, ctx: VerifyContext) -> None:
    """A terminator must be the last operation of its block (MLIR ``OpTrait::IsTerminator``)."""
    ctx.code = "structure.terminator"
    if op.opdef is None or not op.opdef.has_trait("Terminator"):
        return
    block = op.parent
    if block is not None and block.operations and block.operations[-1] is not op:
        ctx.op_error(op, "must be the last operation in the parent block")


# Custom parsers that end their regions with the default terminator when one
# is missing (``ensureTerminator``): NVIDIA CudaTile.cpp ``parseControlFlowRegion``
# (if, for, loop), ``ForOp::build`` and the ``parseFuncOp`` of entry and
# testing$func.  The generic form never adds one.
_ENSURES_TERMINATOR = frozenset({"cuda_tile.if", "cuda_tile.for", "cuda_tile.loop",
                                 "cuda_tile.entry", "cuda_tile.testing$func"})


def _isolated_ancestor(op: Operation) -> Operation:
    """The op whose values MLIR numbers when printing ``op`` with a local scope."""
    while op.opdef is None or not op.opdef.has_trait("IsolatedFromAbove"):
        parent = op.parent_op
        if parent is None:
            break
        op = parent
    return op


def _generic_op_text(op: Operation) -> str:
    """``op`` as a diagnostic streams it at error severity (MLIR ``Diagnostic::appendOp``):
    generic form, values numbered in the nearest isolated-from-above op; on a
    new line when it spans several."""
    from tile_lsp.analysis.ir.printer import Namer, Printer

    scope = _isolated_ancestor(op)
    namer = Namer(list(scope.regions) if scope is not op else [], generic=True)
    text = Printer(namer, generic=True).op_text(op, 0, "")
    return "\n" + text if "\n" in text else text


def verify_block_terminator(op: Operation, block, ctx: VerifyContext) -> None:
    """MLIR ``OperationVerifier::verifyOnEntrance(Block &)`` (``mlir/lib/IR/Verifier.cpp``).

    A block whose last op is not a terminator is "block with no terminator,
    has <op>" at that op, unless its parent op has ``NoTerminator``
    (``mayBeValidWithoutTerminator``); an empty one is "empty block: expect at
    least a terminator" at the parent op.  Checked when the block is entered: after the parent
    op's own verifiers, before the block's ops.  Regions of ops whose custom
    parser adds the default terminator (:data:`_ENSURES_TERMINATOR`) have one.
    """
    opdef = op.opdef
    if opdef is None or opdef.has_trait("NoTerminator"):
        return
    if not op.generic and op.name in _ENSURES_TERMINATOR:
        return
    if not opdef.full_name.startswith("cuda_tile.") and not op.generic:
        return  # other dialects' custom parsers are not modelled
    ctx.code = "structure.block-terminator"
    if not block.operations:
        # at the region's location, which is its parent op's
        ctx.diagnostics.append(Diagnostic(Severity.ERROR, "empty block: expect at least a terminator",
                                          op_location(op), ctx.code))
        raise VerifyFailure()
    last = block.operations[-1]
    if last.opdef is None or last.opdef.has_trait("Terminator"):
        return  # an unregistered op might be a terminator
    ctx.diagnostics.append(Diagnostic(Severity.ERROR, f"block with no terminator, has {_generic_op_text(last)}",
                                      op_location(last), ctx.code))
    raise VerifyFailure()


def verify_symbol_table(op: Operation, ctx: VerifyContext) -> None:
    """MLIR ``detail::verifySymbolTable`` (``mlir/lib/IR/SymbolTable.cpp``), the region
    trait of ``SymbolTable`` ops: a second op of the body with the same
    ``sym_name`` is "redefinition of symbol named 'X'" at that op, with the note
    "see existing symbol definition here" at the first."""
    if op.opdef is None or not op.opdef.has_trait("SymbolTable") or len(op.regions) != 1:
        return
    ctx.code = "structure.symbol-table"
    duplicates = ctx.symbol_table(op).duplicates
    if duplicates:
        child, prior = duplicates[0]  # the first op, in order, whose name an earlier one took
        ctx.diagnostics.append(Diagnostic(
            Severity.ERROR, f"redefinition of symbol named '{child.symbol_name}'", op_location(child), ctx.code,
            [Note("see existing symbol definition here", op_location(prior))]))
        raise VerifyFailure()


def _verify_symbol_uses(op: Operation, ctx: VerifyContext, tables: dict[int, SymbolTable]) -> None:
    """``get_global @g`` must name a ``global`` of the enclosing symbol table."""
    if op.name != "cuda_tile.get_global":
        return
    ctx.code = "structure.symbol"
    ref = op.attr("name")
    name = getattr(ref, "value", None)
    if name is None:
        return
    scope = op.parent_op
    while scope is not None and not (scope.opdef and scope.opdef.has_trait("SymbolTable")):
        scope = scope.parent_op
    target = ctx.symbol_table(scope if scope is not None else ctx.module).lookup(name)
    if target is None or target.name != "cuda_tile.global":
        ctx.op_error(op, f"'{name}' does not reference a valid global")


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def _failed(op: Operation, ctx: VerifyContext) -> None:
    if ctx.options.mlir_compat and not op.invalid:
        raise StopVerification()


def verify_op_head(op: Operation, ctx: VerifyContext) -> bool:
    """Steps 1-3 of :func:`_verify_op` (the op's own checks); False when they failed (skip its regions)."""
    try:
        if op.invalid:  # building it already failed: its verifiers would only echo that
            raise VerifyFailure()
        _verify_ods(op, ctx)
        _verify_traits(op, ctx)
        _verify_symbol_parent(op, ctx)
        for code, fn in _RULES.get(op.name, ()):
            ctx.code = f"{op.name}.{code}"
            fn(op, ctx)
    except VerifyFailure:
        _failed(op, ctx)
        return False
    except (StopVerification, RecursionError, MemoryError):
        raise
    except Exception as exc:  # a faulty rule must not end the analysis of the others
        _internal_error(op, ctx, exc)
        return False
    return True


def _internal_error(op: Operation, ctx: VerifyContext, exc: Exception) -> None:
    """Report a rule that raised as an ``internal`` error at the op, and log its traceback.

    The rule is a bug of tile-lsp, not of the text; the other ops and rules
    are still verified (issue 16: no exception escapes a verifier).
    """
    log.error("verifier rule %s raised on %s", ctx.code, op.name, exc_info=exc)
    ctx.diagnostics.append(Diagnostic(
        Severity.ERROR, f"tile-lsp internal error in rule {ctx.code}: {type(exc).__name__}: {exc}",
        op_location(op), "internal"))


def _verify_op(op: Operation, ctx: VerifyContext, tables: dict[int, SymbolTable]) -> None:
    if not verify_op_head(op, ctx):
        return
    for region in op.regions:
        for block in region.blocks:
            try:
                verify_block_terminator(op, block, ctx)
            except VerifyFailure:
                _failed(op, ctx)
                return
            for child in block.operations:
                _verify_op(child, ctx, tables)
    verify_op_tail(op, ctx, tables)
    verify_isolated_dominance(op, ctx)


def verify_isolation(op: Operation, ctx: VerifyContext) -> None:
    """MLIR ``OpTrait::impl::verifyIsIsolatedFromAbove`` (``mlir/lib/IR/Operation.cpp``): no op in the
    regions of an IsolatedFromAbove op uses a value defined outside them: "'<user>' op using value
    defined outside the region", noted "required by region isolation constraints" at ``op``.

    Only reachable through broken text: MLIR's parser resolves names across function bodies
    (see :meth:`tile_lsp.analysis.syntax.builder.Builder.region`).  Raises :class:`VerifyFailure`.
    """
    if not _isolated(op):
        return
    ctx.code = "structure.isolation"
    inside: set[int] = set()
    users = []
    # the ops of its regions, but not those of a nested isolated op (it checks its own)
    regions = list(op.regions)
    while regions:
        for block in regions.pop().blocks:
            inside.update(id(a) for a in block.arguments)
            for nested in block.operations:
                users.append(nested)
                inside.update(id(r) for r in nested.results)
                if not _isolated(nested):
                    regions.extend(nested.regions)
    for user in users:
        for value in user.operands:
            defined = getattr(value, "owner", None) is not None  # not a name that was never defined
            if defined and id(value) not in inside:
                ctx.diagnostics.append(Diagnostic(
                    Severity.ERROR, f"'{user.name}' op using value defined outside the region", op_location(user),
                    ctx.code, [Note("required by region isolation constraints", op_location(op))]))
                raise VerifyFailure()


def verify_isolated_dominance(op: Operation, ctx: VerifyContext) -> None:
    """MLIR ``verifyOpAndDominance``: dominance is a second pass over a verified isolated op
    (:func:`verify_dominance`); nothing for another op or one already found invalid."""
    if op.regions and _isolated(op) and not op.invalid:
        try:
            verify_dominance(op, ctx)
        except VerifyFailure:
            _failed(op, ctx)


def _isolated(op: Operation) -> bool:
    return bool(op.regions) and op.opdef is not None and op.opdef.has_trait("IsolatedFromAbove")


#: Verify one op and everything nested in it (steps 1-5), reporting into ``ctx``.
verify_op = _verify_op


def verify_op_tail(op: Operation, ctx: VerifyContext, tables: dict[int, SymbolTable]) -> None:
    """Steps 4-5 of :func:`_verify_op`, run after the op's nested operations: region and structural rules."""
    if op.invalid:
        return
    try:
        verify_symbol_table(op, ctx)
        verify_isolation(op, ctx)
        for code, fn in _REGION_RULES.get(op.name, ()):
            ctx.code = f"{op.name}.{code}"
            fn(op, ctx)
        _verify_terminator(op, ctx)
        _verify_symbol_uses(op, ctx, tables)
        verify_registered(op, ctx)
    except VerifyFailure:
        _failed(op, ctx)
        return
    except (StopVerification, RecursionError, MemoryError):
        raise
    except Exception as exc:  # see verify_op_head
        _internal_error(op, ctx, exc)


def verify_registered(op: Operation, ctx: VerifyContext) -> None:
    """MLIR ``OperationVerifier::verifyOnExit`` (``mlir/lib/IR/Verifier.cpp``), its last step: an op
    the parser did not know, of a dialect that is loaded (``cuda_tile``, ``builtin``: see
    :func:`tile_lsp.dialect.registry.unregistered_in_loaded_dialect`), is "unregistered operation
    'N' found in dialect ('D') that does not allow unknown operations" at the op, after the ops
    nested in it were verified.  Only the generic form can name one (a custom form with an unknown
    name is a parse error).  Raises :class:`VerifyFailure`."""
    if op.opdef is not None:
        return
    dialect = unregistered_in_loaded_dialect(op.name)
    if dialect is None:
        return
    ctx.code = "structure.unregistered-op"
    ctx.diagnostics.append(Diagnostic(
        Severity.ERROR,
        f"unregistered operation '{op.name}' found in dialect ('{dialect}') that does not allow unknown operations",
        op_location(op), ctx.code))
    raise VerifyFailure()


def verify_module(module: Module, options: AnalysisOptions | None = None) -> list[Diagnostic]:
    """Run every verifier over ``module`` with ``options`` (default: :class:`AnalysisOptions`());
    returns the diagnostics in report order."""
    load_rule_modules()
    ctx = VerifyContext(options or AnalysisOptions(), module)
    tables = ctx.symbol_tables
    try:
        for op in module.body.operations:
            _verify_op(op, ctx, tables)
        try:
            # the ops written at the top level, outside any module op
            _verify_dominance_in(module, ctx)
        except VerifyFailure:
            if ctx.options.mlir_compat:
                raise StopVerification()
    except StopVerification:
        pass
    return ctx.diagnostics


_LOADED = False
_LOAD_LOCK = threading.Lock()


def load_rule_modules() -> None:
    """Import the modules that register rules (once); returns when every rule is registered.

    Thread-safe: a caller that finds the import under way in another thread
    waits for it to finish.  (The flag was once set before the import, so
    the server's first document, analysed while its warm-up thread was
    importing the rules, was verified with part of them: no diagnostics.)
    A failed import is tried again by the next call.
    """
    global _LOADED
    if _LOADED:
        return
    with _LOAD_LOCK:
        if not _LOADED:
            import tile_lsp.analysis.verify.rules  # noqa: F401  (registers the cuda_tile rules)

            _LOADED = True


def value_type(v: Value) -> T.Type:
    return v.type
