"""The enums of the cuda_tile dialect, as data.

One :class:`EnumDef` per ODS ``CudaTileI32EnumAttr`` of NVIDIA ``cuda-tile``
``include/cuda_tile/Dialect/CudaTile/IR/AttrDefs.td`` (plus the testing enum
of ``TestingAttrs.td``).  Facts carried over: enum names, case spellings,
integer values, versions, the ODS description string (``summary``, used by ODS
in "failed to satisfy constraint" messages) and the attribute mnemonic.  The
one-line case docs are our own words.

Two storage flavours exist (this matters for the generic form and for the
messages of the parsers):

* ``attr_mnemonic`` set: the enum is wrapped in a dialect attribute
  (``CudaTileEnumAttr``) whose generic spelling is
  ``#cuda_tile.<attr_mnemonic><spelling>``, e.g. ``#cuda_tile.rounding<zero>``,
  ``#cuda_tile.signedness<signed>``.  In custom assembly the ops mostly print
  the bare spelling through a ``custom<...>`` directive, or
  ``keyword<spelling>`` (``rounding<zero>``, ``overflow<no_wrap>``) when the
  format writes ``(`kw` `` $attr^)?``.
* ``attr_mnemonic`` ``None``: a plain ``I32EnumAttr``; the generic form stores
  the integer value (``memory_ordering_semantics = 1 : i32``) and custom
  assembly uses the bare keyword (``relaxed``).  The ODS-generated parser
  reports ``expected string or keyword containing one of the following enum
  values for attribute '<attr>' [a, b, ...]`` for an unknown keyword.

``keyword`` is the word tile-lsp uses for the enum in messages and hover
(``rounding``, ``signedness``, ``comparison_predicate``...).
"""

from __future__ import annotations

from dataclasses import dataclass

# A case: (spelling, integer value, since-version, one-line doc).
EnumCase = tuple[str, int, str, str]


@dataclass(frozen=True)
class EnumDef:
    """One cuda_tile enum.

    ``name``: ODS enum name (``RoundingMode``).
    ``keyword``: word used in messages (``rounding``).
    ``cases``: ``(spelling, value, since, doc)`` in declaration order.
    ``summary``: ODS description string of the enum (``"rounding mode"``).
    ``attr_mnemonic``: mnemonic of the wrapping ``#cuda_tile.X<...>`` attribute,
      ``None`` when the enum is stored as a plain i32 attribute.
    ``since``: version of the enum itself.
    ``testing``: only registered in builds with the testing ops.
    """

    name: str
    keyword: str
    cases: tuple[EnumCase, ...]
    summary: str = ""
    attr_mnemonic: str | None = None
    since: str = "13.1"
    testing: bool = False

    @property
    def spellings(self) -> tuple[str, ...]:
        return tuple(c[0] for c in self.cases)

    def case(self, spelling: str) -> EnumCase | None:
        return next((c for c in self.cases if c[0] == spelling), None)

    def value_of(self, spelling: str) -> int | None:
        c = self.case(spelling)
        return None if c is None else c[1]

    def spelling_of(self, value: int) -> str | None:
        return next((c[0] for c in self.cases if c[1] == value), None)


ENUM_LIST: tuple[EnumDef, ...] = (
    EnumDef(
        "Signedness", "signedness",
        (
            ("unsigned", 0, "13.1", "Integers are read as unsigned numbers."),
            ("signed", 1, "13.1", "Integers are read as two's complement signed numbers."),
        ),
        summary="signedness", attr_mnemonic="signedness",
    ),
    EnumDef(
        "IntegerOverflow", "overflow",
        (
            ("none", 0, "13.1", "No assumption is made about wrap-around."),
            ("no_signed_wrap", 1, "13.1", "The result is assumed not to wrap when read as signed."),
            ("no_unsigned_wrap", 2, "13.1", "The result is assumed not to wrap when read as unsigned."),
            ("no_wrap", 3, "13.1", "The result is assumed not to wrap, signed or unsigned."),
        ),
        summary="integer overflow", attr_mnemonic="overflow",
    ),
    EnumDef(
        "RoundingMode", "rounding",
        (
            ("nearest_even", 0, "13.1", "Round to nearest, ties to the even value."),
            ("zero", 1, "13.1", "Round toward zero (truncation)."),
            ("negative_inf", 2, "13.1", "Round toward negative infinity."),
            ("positive_inf", 3, "13.1", "Round toward positive infinity."),
            ("approx", 4, "13.1", "Fast approximation, no exact rounding guarantee."),
            ("full", 5, "13.1", "Full-precision evaluation."),
            ("nearest_int_to_zero", 6, "13.1", "Integer conversion rounding toward zero."),
        ),
        summary="rounding mode", attr_mnemonic="rounding",
    ),
    EnumDef(
        "ComparisonOrdering", "comparison_ordering",
        (
            ("unordered", 0, "13.1", "The comparison is true when either input is NaN."),
            ("ordered", 1, "13.1", "The comparison is false when either input is NaN."),
        ),
        summary="comparison_ordering", attr_mnemonic="comparison_ordering",
    ),
    EnumDef(
        "ComparisonPredicate", "comparison_predicate",
        (
            ("equal", 0, "13.1", "lhs == rhs."),
            ("not_equal", 1, "13.1", "lhs != rhs."),
            ("less_than", 2, "13.1", "lhs < rhs."),
            ("less_than_or_equal", 3, "13.1", "lhs <= rhs."),
            ("greater_than", 4, "13.1", "lhs > rhs."),
            ("greater_than_or_equal", 5, "13.1", "lhs >= rhs."),
        ),
        summary="cmp_predicate", attr_mnemonic="comparison_predicate",
    ),
    EnumDef(
        # Plain I32EnumAttr with an empty ODS description.
        "AtomicRMWMode", "mode",
        (
            ("and", 0, "13.1", "Bitwise and with the stored value."),
            ("or", 1, "13.1", "Bitwise or with the stored value."),
            ("xor", 2, "13.1", "Bitwise exclusive or with the stored value."),
            ("add", 3, "13.1", "Integer addition to the stored value."),
            ("addf", 4, "13.1", "Floating-point addition to the stored value."),
            ("max", 5, "13.1", "Keep the (signed) maximum."),
            ("min", 6, "13.1", "Keep the (signed) minimum."),
            ("umax", 7, "13.1", "Keep the unsigned maximum."),
            ("umin", 8, "13.1", "Keep the unsigned minimum."),
            ("xchg", 9, "13.1", "Replace the stored value (exchange)."),
        ),
        summary="", attr_mnemonic=None,
    ),
    EnumDef(
        "MemoryScope", "memory_scope",
        (
            ("tl_blk", 0, "13.1", "Other accesses may come from the same tile block."),
            ("device", 1, "13.1", "Other accesses may come from anywhere on the same GPU."),
            ("sys", 2, "13.1", "Other accesses may come from anywhere in the system."),
        ),
        summary="memory scope", attr_mnemonic=None,
    ),
    EnumDef(
        "MemoryOrderingSemantics", "memory_ordering_semantics",
        (
            ("weak", 0, "13.1", "Assumes no concurrent access to the location."),
            ("relaxed", 1, "13.1", "Concurrent access allowed, no ordering established."),
            ("acquire", 2, "13.1", "Observing a release orders later accesses after it."),
            ("release", 3, "13.1", "Earlier accesses become visible to an acquiring observer."),
            ("acq_rel", 4, "13.1", "Both acquire and release."),
        ),
        summary="memory ordering semantics", attr_mnemonic=None,
    ),
    EnumDef(
        "PaddingValue", "padding_value",
        (
            ("zero", 0, "13.1", "Out-of-bounds loads read zero."),
            ("neg_zero", 1, "13.1", "Out-of-bounds loads read -0.0 (floats only)."),
            ("nan", 2, "13.1", "Out-of-bounds loads read NaN (floats only)."),
            ("pos_inf", 3, "13.1", "Out-of-bounds loads read +inf (floats only)."),
            ("neg_inf", 4, "13.1", "Out-of-bounds loads read -inf (floats only)."),
        ),
        summary="load padding value for out of bound access", attr_mnemonic="padding_value",
    ),
    EnumDef(
        "SymbolVisibility", "symbol_visibility",
        (
            ("public", 0, "13.1", "Visible outside the module (the default)."),
            ("private", 1, "13.1", "Only visible inside the module."),
        ),
        summary="symbol visibility", attr_mnemonic="symbol_visibility",
    ),
    # Testing enum (TestingAttrs.td, only in builds with TILE_IR_INCLUDE_TESTS);
    # used by cuda_tile.testing$bytecode_test_evolution.
    EnumDef(
        "BytecodeTestPriority", "priority",
        (
            ("low", 0, "250.0", "Testing value."),
            ("normal", 1, "250.0", "Testing value."),
            ("high", 2, "250.1", "Testing value added in a later testing version."),
        ),
        summary="test priority", attr_mnemonic="bytecode_test_priority",
        since="250.0", testing=True,
    ),
)

ENUMS: dict[str, EnumDef] = {e.name: e for e in ENUM_LIST}

# Enum of each attribute name used by a cuda_tile op (handy for hover and
# completion; ops reference enums through ``AttrDef.kind == "enum:<Name>"``).
ENUM_BY_KEYWORD: dict[str, EnumDef] = {e.keyword: e for e in ENUM_LIST}
