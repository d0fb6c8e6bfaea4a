"""Version awareness: what a targeted Tile IR version cannot encode.

When ``AnalysisOptions.tile_version`` names a version (``"13.1"``, ``"13.2"``,
``"13.3"``), every op is checked as NVIDIA's bytecode writer checks it before
writing bytecode of that version, and each problem is reported with the
writer's message:

* an op newer than the target:
  ``operation 'cuda_tile.X' is not available in bytecode version 13.1``;
* a newer attribute that is set: ``optional attribute 'X' is provided but
  requires bytecode version 13.2, targeting 13.1`` (optional and unit
  attributes), ``attribute 'X' requires bytecode version 13.2+, but targeting
  13.1`` (required or default-valued ones, when the value is not the default);
* a newer optional operand that is present: ``optional operand 'X' is provided
  but requires bytecode version V, targeting T``;
* a newer result that has uses: ``result 'X' requires bytecode version V but
  is being used and targeting T`` (an unused one is silently left out);
* an enum case newer than the target: ``enum value for attribute 'X' is not
  available in bytecode version 13.1``;
* a type newer than the target, anywhere in a result type or a type/dense
  attribute: ``type 'Float8E8M0FNU' requires bytecode version 13.2+,
  targeting 13.1`` (names as in ``BytecodeTypeOpcodes.td``);
* ``global``: its own messages for ``constant`` and non-public visibility
  (``writeGlobalSection``); ``module``'s ``producer`` is silently dropped.

The testing ops (``testing$*``, versions ``250.x``, only in NVIDIA's test
builds) are checked only against testing versions: NVIDIA's dialect tests
use ``testing$func`` as a container whatever version they are about.

``tile_version`` ``None`` means the newest version: nothing is checked.
Nothing is checked either with ``mlir_compat`` (``--verify-diagnostics``):
that mode reproduces ``cuda-tile-opt``, which verifies without writing
bytecode, while ``tile_version`` there only selects the dialect's rules
(see ``rules/conversion.py``).
Diagnostics are errors placed at the op name, or at the attribute, operand
use or result they are about; checking goes on after one (an editor wants
them all; the writer stops at the first).

Rule source: NVIDIA cuda-tile ``lib/Bytecode/Writer/BytecodeWriter.cpp``
(``writeOperation``, ``writeOpAttribute``, ``writeGlobalSection``), the
versioning tests ``test/Bytecode/versioning/*.mlir`` (messages of the
generated op writers), ``Types.td`` (``CudaTileTypeAlias`` /
``CudaTileTypeDef`` versions) and the per-argument versions of ``Ops.td``
(``OperandDef.since`` / ``AttrDef.since`` of the op table).
"""

from __future__ import annotations

from typing import Iterator

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.diagnostics import Range, Severity
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.dialect import types as T
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.registry import all_ops
from tile_lsp.dialect.schema import AttrDef

#: Element types newer than 13.1: MLIR spelling -> (bytecode type name, since).
ELEMENT_TYPE_VERSIONS: dict[str, tuple[str, str]] = {
    "i4": ("Int4", "13.3"),
    "f8E8M0FNU": ("Float8E8M0FNU", "13.2"),
    "f4E2M1FN": ("Float4E2M1FN", "13.3"),
}

#: cuda_tile types newer than 13.1: class -> (bytecode type name, since).
CUDA_TILE_TYPE_VERSIONS: dict[type, tuple[str, str]] = {
    T.StridedViewType: ("StridedViewType", "13.3"),
    T.GatherScatterViewType: ("GatherScatterViewType", "13.3"),
}

#: Attributes the writer drops without a word when the target lacks them.
SILENTLY_DROPPED: frozenset[tuple[str, str]] = frozenset({("cuda_tile.module", "producer")})

#: Version from which ``global`` carries ``constant`` and its visibility.
GLOBAL_EXTENDED_FIELDS = "13.3"


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``"13.2"`` -> ``(13, 2)``; ``None`` for ``None`` or text that is not dotted integers."""
    if not text:
        return None
    try:
        return tuple(int(p) for p in text.split("."))
    except ValueError:
        return None


def newer(since: str | None, target: tuple[int, ...]) -> bool:
    """Whether version ``since`` is newer than ``target`` (unparsable versions never are)."""
    v = parse_version(since)
    return v is not None and v > target


def type_requirements(t: T.Type) -> Iterator[tuple[str, str]]:
    """``(bytecode type name, since)`` for each versioned type inside ``t``, outermost first."""
    if isinstance(t, (T.IntegerType, T.FloatType)):
        hit = ELEMENT_TYPE_VERSIONS.get(str(t))
        if hit:
            yield hit
        return
    hit = CUDA_TILE_TYPE_VERSIONS.get(type(t))
    if hit:
        yield hit
    if isinstance(t, (T.TileType, T.TensorViewType)):
        yield from type_requirements(t.element)
    elif isinstance(t, T.PointerType):
        yield from type_requirements(t.pointee)
    elif isinstance(t, (T.PartitionViewType, T.StridedViewType)):
        yield from type_requirements(t.tensor_view)
    elif isinstance(t, T.GatherScatterViewType):
        yield from type_requirements(t.view)
    elif isinstance(t, T.FunctionType):
        for sub in t.inputs + t.results:
            yield from type_requirements(sub)


def _is_default(a: A.Attribute, adef: AttrDef) -> bool:
    """Whether attribute ``a`` holds ``adef``'s default value."""
    if adef.default is None:
        return False
    if adef.kind.startswith("enum:"):
        return A.enum_spelling(a, adef.kind[5:]) == adef.default
    value = getattr(a, "value", None)
    return value is not None and str(value).lower() == adef.default.lower()


def _is_set(a: A.Attribute) -> bool:
    return not (isinstance(a, A.BoolAttr) and not a.value)


def _global_messages(op: Operation, vt: str) -> Iterator[tuple[str, Range | None]]:
    """``writeGlobalSection``'s refusals for a 13.1/13.2 target."""
    name = op.symbol_name
    vis = op.attr("symbol_visibility")
    if vis is not None and A.enum_spelling(vis, "SymbolVisibility") not in (None, "public"):
        yield (f"global `{name}` uses non-public symbol visibility, which cannot be encoded "
               f"in bytecode version {vt} (requires bytecode {GLOBAL_EXTENDED_FIELDS}+)", vis.range)
    const = op.attr("constant")
    if const is not None and _is_set(const):
        yield (f"constant global `{name}` cannot be encoded in bytecode version {vt} "
               f"(the `constant` attribute requires bytecode {GLOBAL_EXTENDED_FIELDS}+)", const.range)


def version_problems(op: Operation, target_text: str) -> Iterator[tuple[str, Range | None]]:
    """Every ``(message, range or None)`` the bytecode writer of ``target_text`` would raise for ``op``.

    ``None`` ranges mean the op's own location.  Raises nothing; ops without
    a table entry yield nothing.
    """
    opdef = op.opdef
    target = parse_version(target_text)
    if opdef is None or target is None:
        return
    vt = ".".join(str(p) for p in target[:2])
    if op.name.startswith("cuda_tile.testing$") and newer(opdef.since, target):
        return  # scaffolding of NVIDIA's tests, written against any version (see module docstring)
    if newer(opdef.since, target):
        yield f"operation '{op.name}' is not available in bytecode version {vt}", None
        return
    # attributes (enum cases first within an attribute, as the writer checks the value it writes)
    special = op.name == "cuda_tile.global" and newer(GLOBAL_EXTENDED_FIELDS, target)
    if special:
        yield from _global_messages(op, vt)
    for adef in opdef.attributes:
        a = op.attr(adef.name)
        if a is None or (op.name, adef.name) in SILENTLY_DROPPED:
            continue
        since = adef.since or opdef.since
        if newer(since, target) and not (special and adef.name in ("constant", "symbol_visibility")):
            if adef.kind == "unit" or (adef.optional and adef.default is None):
                if _is_set(a):
                    yield (f"optional attribute '{adef.name}' is provided but requires bytecode version "
                           f"{since}, targeting {vt}", a.range)
            elif not _is_default(a, adef):
                yield f"attribute '{adef.name}' requires bytecode version {since}+, but targeting {vt}", a.range
            continue
        if adef.kind.startswith("enum:"):
            enum = ENUMS.get(adef.kind[5:])
            case = enum.case(A.enum_spelling(a, enum.name) or "") if enum else None
            if case is not None and newer(case[2], target):
                yield f"enum value for attribute '{adef.name}' is not available in bytecode version {vt}", a.range
    # operands
    for odef in opdef.operands:
        since = odef.since or opdef.since
        if not newer(since, target):
            continue
        start, size = op.operand_segments.get(odef.name, (0, 0))
        if size:
            rng = op.operand_ranges[start] if start < len(op.operand_ranges) else None
            yield (f"optional operand '{odef.name}' is provided but requires bytecode version {since}, "
                   f"targeting {vt}", rng)
    # results
    for rdef in opdef.results:
        since = rdef.since or opdef.since
        if not newer(since, target):
            continue
        for res in op.result_group(rdef.name):
            if res.uses:
                yield (f"result '{rdef.name}' requires bytecode version {since} but is being used and "
                       f"targeting {vt}", res.range)
    # types
    seen: set[str] = set()
    typed: list[tuple[T.Type, Range | None]] = [(r.type, None) for r in op.results]
    for a in list(op.properties.values()) + list(op.attributes.values()):
        if isinstance(a, A.TypeAttr):
            typed.append((a.value, a.range))
        elif isinstance(a, A.DenseElementsAttr) and a.type is not None:
            typed.append((a.type, a.range))
    for t, rng in typed:
        for name, since in type_requirements(t):
            if name not in seen and newer(since, target):
                seen.add(name)
                yield f"type '{name}' requires bytecode version {since}+, targeting {vt}", rng


def check_versions(op: Operation, ctx: VerifyContext) -> None:
    """Report what the targeted ``tile_version`` cannot encode (see the module docstring)."""
    target = ctx.options.tile_version
    if target is None or ctx.options.mlir_compat:
        return
    for message, rng in version_problems(op, target):
        ctx.emit(op, Severity.ERROR, message, None, rng)


# Registered for every cuda_tile op (the bytecode writer only writes that
# dialect): the framework has no all-ops hook.
rule(*(op.full_name for op in all_ops() if op.dialect == "cuda_tile"), code="version")(check_versions)
