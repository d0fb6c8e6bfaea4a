"""Structured attributes (MLIR builtin attributes and the cuda_tile ones).

``str(attr)`` prints the attribute as MLIR prints it in diagnostics.  Each
attribute records the source range it was parsed from (``range``), which is
not part of its identity.

Rule source: MLIR builtin attributes (``mlir/IR/BuiltinAttributes.td``) and
NVIDIA cuda-tile ``AttrDefs.td``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tile_lsp.analysis.ir.diagnostics import Range
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.types import Type


@dataclass(eq=False)
class Attribute:
    """Base class; ``range`` is where the attribute was written."""

    range: Range | None = field(default=None, kw_only=True, compare=False)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, str(self)))


@dataclass(eq=False)
class UnitAttr(Attribute):
    def __str__(self) -> str:
        return "unit"


@dataclass(eq=False)
class BoolAttr(Attribute):
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass(eq=False)
class IntegerAttr(Attribute):
    """An integer, with its type (``None``: MLIR's default ``i64``)."""

    value: int
    type: Type | None = None

    def __str__(self) -> str:
        if self.type is None or str(self.type) == "i64":
            return str(self.value)
        return f"{self.value} : {self.type}"


@dataclass(eq=False)
class FloatAttr(Attribute):
    """A float; ``text`` keeps the spelling (hex literals included)."""

    value: float
    type: Type | None = None
    text: str = ""

    def __str__(self) -> str:
        body = format_float(self.value)
        return f"{body} : {self.type}" if self.type is not None else body


def format_float(value: float) -> str:
    """MLIR's print of a float: ``1.000000e+00`` (``%e``), ``0x7FC00000`` style for NaN/inf."""
    if value != value or value in (float("inf"), float("-inf")):
        return repr(value)
    return f"{value:e}"


@dataclass(eq=False)
class StringAttr(Attribute):
    value: str

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'


@dataclass(eq=False)
class TypeAttr(Attribute):
    value: Type

    def __str__(self) -> str:
        return str(self.value)


@dataclass(eq=False)
class SymbolRefAttr(Attribute):
    """``@root::@nested`` (names without ``@``)."""

    root: str
    nested: tuple[str, ...] = ()

    @property
    def value(self) -> str:
        return self.root

    def __str__(self) -> str:
        return "::".join("@" + n for n in (self.root, *self.nested))


@dataclass(eq=False)
class SymbolNameAttr(StringAttr):
    """The name a symbol op defines (``sym_name``), printed ``@name`` in custom forms."""


@dataclass(eq=False)
class ArrayAttr(Attribute):
    elements: list[Attribute]

    def __str__(self) -> str:
        return "[" + ", ".join(str(e) for e in self.elements) + "]"


@dataclass(eq=False)
class DictAttr(Attribute):
    entries: dict[str, Attribute]

    def get(self, key: str) -> Attribute | None:
        return self.entries.get(key)

    def __str__(self) -> str:
        parts = []
        for k, v in self.entries.items():
            parts.append(k if isinstance(v, UnitAttr) else f"{k} = {v}")
        return "{" + ", ".join(parts) + "}"


@dataclass(eq=False)
class DenseArrayAttr(Attribute):
    """``array<i32: 1, 2>`` (``DenseI32ArrayAttr`` & co)."""

    element_type: Type
    values: list[Any]

    def __str__(self) -> str:
        if not self.values:
            return f"array<{self.element_type}>"
        return f"array<{self.element_type}: " + ", ".join(str(v) for v in self.values) + ">"


@dataclass(eq=False)
class DenseElementsAttr(Attribute):
    """A dense literal of ``type`` (``dense<...> : tensor<...>`` or cuda_tile ``<f32: [...]>``).

    ``values`` is the literal as nested Python lists (ints, floats, bools, or
    a hex string for a splat/blob); ``shape`` is the literal's inferred
    shape (``()`` for a scalar/splat).  ``element_type`` is the element type
    written in the literal (cuda_tile form) or that of ``type``.
    """

    element_type: Type
    values: Any
    type: Type | None = None
    shape: tuple[int, ...] = ()
    texts: Any = None

    def __str__(self) -> str:
        return f"dense<{_dense_body(self.values)}> : {self.type}" if self.type else f"dense<{_dense_body(self.values)}>"


def _dense_body(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_dense_body(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format_float(v)
    return str(v)


@dataclass(eq=False)
class EnumAttr(Attribute):
    """A case of a cuda_tile enum (``RoundingMode`` ``nearest_even`` ...)."""

    enum: str
    case: str
    mnemonic: str = ""

    @property
    def value(self) -> str:
        return self.case

    def __str__(self) -> str:
        if self.mnemonic:
            return f"#cuda_tile.{self.mnemonic}<{self.case}>"
        return self.case


@dataclass(eq=False)
class DialectAttr(Attribute):
    """A dialect attribute as written: ``#dialect.mnemonic<body>``.

    ``body`` is the text between the angle brackets (what the printer
    prints).  ``value`` is what the builder decoded from it, once, for the
    readers downstream: the debug-info value of a ``#cuda_tile.di_*``
    attribute (:mod:`tile_lsp.analysis.ir.debuginfo`), the entries of
    ``optimization_hints`` (:func:`tile_lsp.analysis.syntax.parse_rules.entry.optimization_hint_entries`),
    the :class:`DivBy` / :class:`Bounded` / :class:`SameElements` of an assume
    predicate, the :class:`EnumAttr` of an enum attribute in generic form
    (``#cuda_tile.rounding<zero>``: read it with :func:`enum_case`), the
    :class:`~tile_lsp.analysis.ir.decoders.CarrierValue` of an nv_tileas carrier
    (``#nv_tileas<tcgen05_kind ...>``); ``None`` when nothing decoded it (an
    attribute that does not parse, or one made outside the builder).
    """

    dialect: str
    mnemonic: str
    body: str | None
    value: Any = field(default=None, repr=False)

    def __str__(self) -> str:
        name = f"#{self.dialect}.{self.mnemonic}" if self.mnemonic else f"#{self.dialect}"
        return name + (f"<{self.body}>" if self.body is not None else "")


@dataclass(eq=False)
class AliasAttr(Attribute):
    """A use of an attribute alias (``#loc3``); ``target`` is resolved after parsing."""

    name: str
    target: Attribute | None = None

    def __str__(self) -> str:
        return str(self.target) if self.target is not None else f"#{self.name}"


@dataclass(eq=False)
class OpaqueAttr(Attribute):
    """An attribute kept as its source text (keyword-style dialect attribute bodies)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(eq=False)
class LocationAttr(Attribute):
    """A location: ``kind`` is ``file``, ``name``, ``unknown``, ``callsite``, ``fused``, ``alias`` or ``dialect``.

    ``file``: ``filename``, ``line``, ``column``; ``name``: ``name`` and
    ``children[0]``; ``callsite``: ``children`` (callee, caller); ``fused``:
    ``children`` and ``metadata``; ``alias``: ``alias`` (e.g. ``loc3``);
    ``dialect``: ``attr`` (a ``#cuda_tile.di_loc<...>``).
    """

    kind: str
    filename: str = ""
    line: int = 0
    column: int = 0
    name: str = ""
    alias: str = ""
    children: list["LocationAttr"] = field(default_factory=list)
    metadata: Attribute | None = None
    attr: Attribute | None = None

    def __str__(self) -> str:
        k = self.kind
        if k == "file":
            return f'loc("{self.filename}":{self.line}:{self.column})'
        if k == "unknown":
            return "loc(unknown)"
        if k == "alias":
            return f"loc(#{self.alias})"
        if k == "name":
            return f'loc("{self.name}")'
        if k == "callsite":
            return "loc(callsite(...))"
        if k == "fused":
            return "loc(fused[...])"
        return f"loc({self.attr})"


def enum_case(attr: Attribute | None) -> str | None:
    """The case spelling (``"zero"``) a cuda_tile enum attribute holds, in the two forms MLIR
    reads: the custom form's :class:`EnumAttr`, or the generic ``#cuda_tile.<mnemonic><case>``
    (NVIDIA AttrDefs.td ``CudaTileEnumAttr``, e.g. ``#cuda_tile.rounding<zero>``), whose case the
    builder decoded once into ``DialectAttr.value`` (an :class:`EnumAttr`).  An alias is followed.

    ``None`` for any other attribute, an enum attribute in generic form that did not decode (the
    parser reported it) included: a string or an integer standing for a case is the caller's to
    read, as the ODS attribute it expects says.  The case is that of the attribute as written,
    which need not belong to the enum the caller expects (``#cuda_tile.signedness<signed>`` where
    a rounding mode is expected gives ``"signed"``).
    """
    if isinstance(attr, AliasAttr):
        attr = attr.target
    if isinstance(attr, DialectAttr):
        attr = attr.value
    return attr.case if isinstance(attr, EnumAttr) else None


def enum_spelling(attr: Attribute | None, enum: str) -> str | None:
    """The case of ``enum`` (``"MemoryOrderingSemantics"``) that ``attr`` holds, in every form an
    enum attribute takes in MLIR text: the enum attribute custom or generic (:func:`enum_case`),
    the integer of an enum stored as a plain ``i32`` property (``memory_ordering_semantics = 0 : i32``,
    the generic form tileirdisasm prints: its case by value in ``tile_lsp.dialect.enums``), or a
    string naming the case.  ``None`` for anything else, or an integer that is no case of ``enum``."""
    case = enum_case(attr)
    if case is not None:
        return case
    if isinstance(attr, IntegerAttr):
        found = ENUMS.get(enum)
        return found.spelling_of(attr.value) if found is not None else None
    if isinstance(attr, StringAttr):
        return attr.value
    return None


# -- the decoded values of cuda_tile's assume predicates (``DialectAttr.value``) --------------


@dataclass(frozen=True)
class DivBy:
    """``#cuda_tile.div_by<divisor[, every N along D]>`` (NVIDIA Attributes.td ``DivByAttr``):
    ``divisor`` as the unsigned 64-bit value MLIR reads; ``every``/``along`` ``None`` when absent."""

    divisor: int
    every: int | None = None
    along: int | None = None


@dataclass(frozen=True)
class Bounded:
    """``#cuda_tile.bounded<lb, ub>`` (``BoundedAttr``): each bound ``None`` where written ``?``."""

    lb: int | None
    ub: int | None


@dataclass(frozen=True)
class SameElements:
    """``#cuda_tile.same_elements<[n, ...]>`` (``SameElementsAttr``): one count per tile dimension."""

    values: tuple[int, ...]
