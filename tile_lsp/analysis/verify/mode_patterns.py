"""Mode-pattern verifiers (spec 001 "Mode Pattern Verifiers") as pure, table-driven checks.

Every verifier takes decoded values (ints, strings, tuples) and returns the
text of the first failing check, or ``None`` when the values are accepted.
None of them raises on well-typed input; the tcgen05 kind-word verifier
raises ``ValueError`` for a word that does not fit 9 bits (from
:func:`tile_lsp.analysis.ir.decoders.unpack_tcgen05_kind`).

* :func:`verify_kind_word`: the 13-rule tcgen05.mma kind-word ladder, walked
  in order from the table :data:`KIND_WORD_LADDER` (fail-first, as the spec's
  pseudocode does);
* :func:`verify_umma_canonical_layout`: the UMMA_MN / UMMA_K canonical
  layout gates with their seven shipped strings;
* :func:`verify_ldsm_mode`, :func:`verify_matrix_space_copy`,
  :func:`verify_register_fragment`: LDSM/STSM and matrix-movement checks;
* :func:`verify_sm120_scale_lattice`: the SM120 block-scaled lattice;
* :func:`verify_swizzle_offset_commutation`: swizzle / offset commutation;
* :func:`verify_tma_rank_and_mode`: TMA rank and mode gates.

Messages: :data:`MESSAGES`.  Strings that ``verbatim-diagnostics.tsv`` marks
``in_tileiras=yes`` are used byte for byte (the "colletor" typo of ladder
rule 10 is kept); rule 6 uses the shipped text ("..., i8 and ti16 types")
instead of the spec's unshipped "..., and i8 types".  Ids in
:data:`OWN_MESSAGES` are tile-lsp's words: the spec's pseudocode for those
checks is a bare ``require(...)`` with no string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tile_lsp.analysis.ir.decoders import TCGEN05_MMA_KINDS, Tcgen05Kind, unpack_tcgen05_kind

# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------

#: Message id -> text (format fields in braces).
MESSAGES = {
    # tcgen05.mma kind-word ladder (spec 001 table, shipped strings)
    "kind_1": "INT8 type is supported only on arch-conditional variants.",
    "kind_2": "MXF4 and MXF4NVF4 types with Sparsity are supported only on arch-conditional variants.",
    "kind_3": "Explicit scale vector size is supported only on arch-conditional variants.",
    "kind_4": "Scale input accumulator is not supported on this architecture.",
    "kind_5": "Scale input accumulator can only be used with f16 and tf32 types",
    "kind_6": "Block scale is not supported for f16, tf32, f8f6f4, i8 and ti16 types",
    "kind_7": "ashift is not supported with tcgen05.mma.block_scale variants",
    "kind_8": "cta_group::2 is not supported with weight stationary",
    "kind_9": "Cannot use weight stationary with mxf8f6f4 and fp4 types",
    "kind_10": "Cannot use collector::a::use or colletor::a::fill with ashift",
    "kind_11": "Cannot use 2X or 4X as scale vector size for mxf8f6f4 type",
    "kind_12": "Cannot use 1X as scale vector size for mxf4nvf4 type",
    "kind_13": "Cannot use 1X or 4X as scale vector size for mxf4 type",
    # UMMA canonical layout (shipped strings; "unsupported swizzle, got " is followed by the triple)
    "umma_swizzle": "unsupported swizzle, got {swizzle}",
    "umma_mn_k_size": "Not a canonical UMMA_MN Layout: Expected K-size 256/sizeof_bits<T> or 512/sizeof_bits(T) "
                      "in sparse gemm kernels.",
    "umma_mn_flat": "Not a canonical UMMA_MN Layout: No flat offset mode",
    "umma_mn_stride": "Not a canonical UMMA_MN Layout: Expected stride failure.",
    "umma_k_mn_size": "Not a canonical UMMA_K Layout: Expected MN-size multiple of {per_lane}.",
    "umma_k_flat": "Not a canonical UMMA_K Layout: No flat offset mode",
    "umma_k_stride": "Not a canonical UMMA_K Layout: Expected stride failure.",
    # LDSM / STSM and matrix movement (tile-lsp's words)
    "ldsm_mode": "unknown LDSM/STSM mode '{mode}'; expected one of {modes}",
    "ldsm_count": "LDSM/STSM mode {mode} accepts {counts} matrices, but got {got}",
    "ldsm_transpose": "LDSM/STSM mode {mode} requires transpose = {expected}",
    "ldsm_size": "LDSM/STSM mode {mode} does not accept size pattern '{size}'; expected one of {sizes}",
    "ldsm_rank": "LDSM/STSM result must be a rank-1 fragment, but got rank {rank}",
    "ldsm_extent": "LDSM/STSM mode {mode} with {count} matrices produces {expected} registers, but got {got}",
    "copy_space": "{direction} matrix copy moves {expected_src} -> {expected_dst}, but got {src} -> {dst}",
    "copy_align": "shared-memory operand is {alignment}-byte aligned; the matrix atom requires {required} bytes",
    "fragment_size": "register fragment holds {actual} bits, but the layout cosize needs {expected} bits",
    # SM120 block-scaled lattice (tile-lsp's words)
    "sm120_vec": "SM120 block-scaled MMA expects scale vector size 16 or 32, but got {vec}",
    "sm120_k": "SM120 block-scaled MMA expects K = 32 or K = 64, but got {k}",
    "sm120_k32_types": "SM120 block-scaled MMA with K = 32 expects FP4, FP6 or FP8 A/B element types, "
                       "but got {a} and {b}",
    "sm120_k32_sf": "SM120 block-scaled MMA with K = 32 expects f8E8M0FNU scale factors, but got {sf}",
    "sm120_k32_vec": "SM120 block-scaled MMA with K = 32 expects scale vector size 32, but got {vec}",
    "sm120_k32_frag": "SM120 block-scaled MMA with K = 32 expects 8-bit scale fragments, but got {bits}",
    "sm120_k64_types": "SM120 block-scaled MMA with K = 64 expects f4E2M1FN A/B element types, but got {a} and {b}",
    "sm120_k64_frag": "SM120 block-scaled MMA with K = 64 expects scale fragment bits x vector size = 512, "
                      "but got {bits} x {vec}",
    # swizzle / TMA (tile-lsp's words)
    "swizzle_commute": "offset {offset} does not commute with Swizzle<{b},{m},{s}>: it must be a multiple "
                       "of {quantum}",
    "tma_rank": "TMA {mode} transfers support ranks 1 to 5, but got rank {rank}",
    "tma_im2col_rank": "TMA {mode} mode requires rank >= 3, but got rank {rank}",
    "tma_scatter4_rank": "TMA scatter4 mode requires rank 2, but got rank {rank}",
    "tma_blackwell": "TMA {mode} mode requires a Blackwell target (sm_100 or newer), but got sm_{sm}",
    "tma_mode": "unknown TMA mode '{mode}'; expected one of {modes}",
}

#: Ids whose text is tile-lsp's own (the spec gives the rule without a string).
OWN_MESSAGES = frozenset(k for k in MESSAGES if not k.startswith(("kind_", "umma_")))


def msg(mid: str, **fields) -> str:
    """The text of message ``mid`` with its fields filled in (``KeyError`` for an unknown id)."""
    return MESSAGES[mid].format(**fields)


# ---------------------------------------------------------------------------
# tcgen05.mma kind word
# ---------------------------------------------------------------------------

#: mma_kind field values by name (inverse of ``decoders.TCGEN05_MMA_KINDS``).
KIND = {name: value for value, name in TCGEN05_MMA_KINDS.items()}

#: ISA version of sm_100a as the ladder's rule 4 compares it (compute capability x 10 + arch suffix).
SM100A = 1001


def isa_version(sm: int, arch_conditional: bool = False) -> int:
    """ISA ordinal used by rule 4: ``sm * 10`` plus 1 for an ``a`` (arch-conditional) target.

    ``isa_version(100, True)`` is :data:`SM100A`; ``isa_version(100)`` (plain
    sm_100) is below it, so rule 4 rejects scale_input_acc there.
    """
    return sm * 10 + (1 if arch_conditional else 0)


@dataclass(frozen=True)
class KindWordContext:
    """What the ladder reads besides the word itself (spec 001 ``verify_tcgen05_mma_kind`` arguments).

    ``arch_conditional``: the instruction is an arch- or family-conditional
    variant (``sm_100a``/``sm_100f``).  ``isa``: ISA ordinal
    (:func:`isa_version`).  ``sparse``: the ``.sp`` variant (the spec gives
    no bit for it in the 9-bit word; see docs/spec-notes.md).
    ``block_scale_opcode``: the selected opcode is a ``.block_scale`` one
    (10521 / 10526); ``None`` reads it from the word's block_scale bit.
    ``ashift`` and ``collector_a``: the collector operand's ``ashift`` bit and
    ``collector::a::use`` / ``::fill`` bits.
    """

    arch_conditional: bool = False
    isa: int = SM100A
    sparse: bool = False
    block_scale_opcode: bool | None = None
    ashift: bool = False
    collector_a: bool = False


KindPredicate = Callable[[Tcgen05Kind, KindWordContext], bool]


def _bs_opcode(k: Tcgen05Kind, c: KindWordContext) -> bool:
    return k.block_scale if c.block_scale_opcode is None else c.block_scale_opcode


#: The 13 rules in the order the verifier walks them: (rule number, message id, trigger).
#: Source: spec 001 "tcgen05.mma Kind-Word Verifier" table and pseudocode.
KIND_WORD_LADDER: tuple[tuple[int, str, KindPredicate], ...] = (
    (1, "kind_1", lambda k, c: k.mma_kind == KIND["i8"] and not c.arch_conditional),
    (2, "kind_2", lambda k, c: k.mma_kind in (KIND["mxf4nvf4"], KIND["mxf4"]) and c.sparse
     and not c.arch_conditional),
    (3, "kind_3", lambda k, c: k.scale_vector_size != 0 and not c.arch_conditional),
    (4, "kind_4", lambda k, c: k.scale_input_acc and c.isa < SM100A),
    (5, "kind_5", lambda k, c: k.scale_input_acc and k.mma_kind not in (KIND["f16"], KIND["tf32"])),
    (6, "kind_6", lambda k, c: k.block_scale
     and k.mma_kind in (KIND["i8"], KIND["f16"], KIND["tf32"], KIND["f8f6f4"])),
    (7, "kind_7", lambda k, c: _bs_opcode(k, c) and c.ashift),
    (8, "kind_8", lambda k, c: (k.raw & 3) == 3),
    (9, "kind_9", lambda k, c: k.ws and k.mma_kind in (KIND["mxf8f6f4"], KIND["f8f6f4"], KIND["mxf4"])),
    (10, "kind_10", lambda k, c: c.collector_a and c.ashift),
    (11, "kind_11", lambda k, c: k.mma_kind == KIND["mxf8f6f4"] and k.scale_vector_size > 1),
    (12, "kind_12", lambda k, c: k.mma_kind == KIND["mxf4nvf4"] and k.scale_vector_size == 0),
    (13, "kind_13", lambda k, c: k.mma_kind == KIND["mxf4"] and k.scale_vector_size in (0, 2)),
)


def kind_word_rule(word: int, ctx: KindWordContext = KindWordContext()) -> int | None:
    """Number (1-13) of the first ladder rule ``word`` trips under ``ctx``, ``None`` if it passes.

    ``word``: the 9-bit ``Tcgen05MmaKind`` (``ValueError`` outside 0..511).
    """
    k = unpack_tcgen05_kind(word)
    for number, _mid, trigger in KIND_WORD_LADDER:
        if trigger(k, ctx):
            return number
    return None


#: NVPTX opcode indices of the tcgen05.mma variants the ladder selects on success (spec 001: the closed
#: range 10521..10530, ten variants; 10521 / 10526 are the ``.block_scale`` opcodes and 10522 the
#: dense, non-block-scale, non-weight-stationary ``tcgen05.mma``).  The spec names only those three;
#: the rest of the table is tile-lsp's reconstruction (docs/spec-notes.md): two groups of five
#: (dense 10521..10525, ``.sp`` 10526..10530), each ordered block_scale, plain, plain with
#: scale_input_acc, ``.ws``, ``.ws`` with scale_input_acc.
TCGEN05_OPCODE_BASE = 10521
TCGEN05_OPCODES = {
    10521: "tcgen05.mma.block_scale",
    10522: "tcgen05.mma",
    10523: "tcgen05.mma with scale_input_acc",
    10524: "tcgen05.mma.ws",
    10525: "tcgen05.mma.ws with scale_input_acc",
    10526: "tcgen05.mma.sp.block_scale",
    10527: "tcgen05.mma.sp",
    10528: "tcgen05.mma.sp with scale_input_acc",
    10529: "tcgen05.mma.ws.sp",
    10530: "tcgen05.mma.ws.sp with scale_input_acc",
}
#: Opcodes of the ``.block_scale`` variants (ladder rule 7).
TCGEN05_BLOCK_SCALE_OPCODES = frozenset({10521, 10526})


def select_tcgen05_opcode(word: int, sparse: bool = False) -> int:
    """Opcode index (:data:`TCGEN05_OPCODES`) of a kind word that passed the ladder.

    Block scale selects the ``.block_scale`` opcode; otherwise the
    weight-stationary view (``ws = raw & 1``) and scale_input_acc pick the
    variant; ``sparse`` selects the ``.sp`` group.  ``ValueError`` for a
    word outside 0..511.

    >>> select_tcgen05_opcode(0x42)
    10522
    """
    k = unpack_tcgen05_kind(word)
    if k.block_scale:
        index = 0
    elif k.ws:
        index = 4 if k.scale_input_acc else 3
    else:
        index = 2 if k.scale_input_acc else 1
    return TCGEN05_OPCODE_BASE + 5 * int(sparse) + index


def kind_word_outcome(word: int, ctx: KindWordContext = KindWordContext()) -> tuple[int | None, int | None]:
    """``(rule, opcode)``: the number of the first failing ladder rule and ``None``, or ``None`` and
    the selected opcode index (``ValueError`` for a word outside 0..511).

    >>> kind_word_outcome(0x42)
    (1, None)
    >>> kind_word_outcome(0x42, KindWordContext(arch_conditional=True))
    (None, 10522)
    """
    number = kind_word_rule(word, ctx)
    if number is not None:
        return number, None
    return None, select_tcgen05_opcode(word, ctx.sparse)


def verify_kind_word(word: int, ctx: KindWordContext = KindWordContext()) -> str | None:
    """The tcgen05.mma kind-word verifier: the first failing rule's message, or ``None``.

    Fail-first like the spec's pseudocode: a word tripping rules 3 and 10
    reports only rule 3.  The success path of the binary returns an NVPTX
    opcode index (10521..10530): see :func:`kind_word_outcome`.
    ``ValueError`` for a word outside 0..511.

    >>> verify_kind_word(0x42)
    'INT8 type is supported only on arch-conditional variants.'
    """
    number = kind_word_rule(word, ctx)
    return None if number is None else MESSAGES[KIND_WORD_LADDER[number - 1][1]]


def pack_kind_word(cta_group: int, scale_vector_size: int = 0, scale_input_acc: bool = False,
                   block_scale: bool = False, mma_kind: int | str = 0) -> int:
    """Build a kind word from its fields (cta_group in bits 0-1, mma_kind in bits 6-8).

    ``mma_kind`` is the field value or its name (``"f16"``).  ``ValueError``
    when a field does not fit its width or the name is unknown.
    """
    kind = KIND[mma_kind] if isinstance(mma_kind, str) else mma_kind
    if not (0 <= cta_group < 4 and 0 <= scale_vector_size < 4 and 0 <= kind < 8):
        raise ValueError("kind-word field out of range")
    return cta_group | scale_vector_size << 2 | int(scale_input_acc) << 4 | int(block_scale) << 5 | kind << 6


# ---------------------------------------------------------------------------
# UMMA canonical layouts
# ---------------------------------------------------------------------------

UMMA_MN = 1
UMMA_K = 0

#: elem_bits -> (per_lane_count, stride_multiplier) (spec 001 step 3: fp4 -> (4, 8), default (8, ...)).
#: Widths missing here (above 32 bits) are rejected without a message (the caller diagnoses).
UMMA_ELEMENT_CLASSES = {4: (4, 8), 8: (8, 16), 16: (8, 8), 32: (8, 4)}

#: Swizzle triples (mode, B, M) accepted in any direction; (2, 5, 2) is listed twice by the spec.
UMMA_SWIZZLES = frozenset({(0, 2, 5), (2, 5, 2)} | {(n, 4, 3) for n in range(4)})

#: One layout mode: ``((shape_inner, shape_outer), (stride_inner, stride_outer))``; entries may nest.
Mode = tuple


def _product(shape) -> int:
    if isinstance(shape, int):
        return shape
    out = 1
    for s in shape:
        out *= _product(s)
    return out


def _is_flat_pair(mode) -> bool:
    shape, stride = mode
    return (isinstance(shape, tuple) and isinstance(stride, tuple) and len(shape) == len(stride) == 2
            and all(isinstance(x, int) for x in shape + stride))


def verify_umma_canonical_layout(direction: int, elem_bits: int, swizzle: tuple[int, int, int],
                                 mn_mode: Mode, k_mode: Mode) -> str | None:
    """UMMA_MN / UMMA_K canonical-layout gates (spec 001 "UMMA Canonical Layout Verifier").

    ``direction``: :data:`UMMA_MN` (1) or :data:`UMMA_K` (0); any other value
    raises ``ValueError`` (the spec calls it a bug).  ``swizzle``: the
    ``(swz_mode, B, M)`` triple.  ``mn_mode`` / ``k_mode``: the layout's
    two modes already divided into the canonical (inner, outer) form, each
    ``((shape_inner, shape_outer), (stride_inner, stride_outer))`` with
    strides in 16-byte (uint128) units as CUTLASS's ``make_umma_desc`` uses.

    Gates in order: swizzle triple; element class (no message for widths
    outside 4/8/16/32: returns ``""``); K-size (MN) or MN-size multiple of
    per_lane_count (K); flat offset mode (both modes a flat pair of ints);
    stride (the major mode's inner stride is 1, CUTLASS's canonical strides).
    """
    if direction not in (UMMA_MN, UMMA_K):
        raise ValueError(f"UMMA direction must be 0 (K) or 1 (MN), got {direction}")
    if tuple(swizzle) not in UMMA_SWIZZLES:
        return msg("umma_swizzle", swizzle="({}, {}, {})".format(*swizzle))
    ec = UMMA_ELEMENT_CLASSES.get(elem_bits)
    if ec is None:
        return ""
    per_lane, _mult = ec
    if direction == UMMA_MN:
        k_elements = _product(k_mode[0])
        if k_elements not in (256 // elem_bits, 512 // elem_bits):
            return msg("umma_mn_k_size")
        if not (_is_flat_pair(mn_mode) and _is_flat_pair(k_mode)):
            return msg("umma_mn_flat")
        if mn_mode[1][0] != 1:
            return msg("umma_mn_stride")
        return None
    if _product(mn_mode[0]) % per_lane:
        return msg("umma_k_mn_size", per_lane=per_lane)
    if not (_is_flat_pair(mn_mode) and _is_flat_pair(k_mode)):
        return msg("umma_k_flat")
    if k_mode[1][0] != 1:
        return msg("umma_k_stride")
    return None


# ---------------------------------------------------------------------------
# LDSM / STSM, matrix movement, register fragments
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LdsmModeRow:
    """One row of the LDSM/STSM matrix (spec 001 table): shape, counts, size patterns, transpose."""

    rows: int
    cols: int
    counts: tuple[int, ...]
    sizes: tuple[str, ...]
    transpose: bool


#: Size pattern -> destination element bits (what one fragment element holds after the load).
LDSM_SIZE_BITS = {"u16": 16, "u4to8": 8, "s4to8": 8, "u6to8": 8, "s6to8": 8, "u2to4": 4, "s2to4": 4, "u8": 8}
_PACKED = ("u6to8", "s6to8")

#: Mode -> row (spec 001 "LDSM and STSM Matrix"); "packed 4/6-bit to 8-bit modes" are the *6to8 patterns.
LDSM_MODES = {
    "M88": LdsmModeRow(8, 8, (1, 2, 4), ("u16",), False),
    "MT88": LdsmModeRow(8, 8, (1, 2, 4), ("u16",), True),
    "M816": LdsmModeRow(8, 16, (1, 2, 4), ("u4to8", "s4to8") + _PACKED, False),
    "M832": LdsmModeRow(8, 32, (1, 2, 4), ("u2to4", "s2to4"), False),
    "MT1616": LdsmModeRow(16, 16, (1, 2), ("u8",) + _PACKED, True),
}


def expected_ldsm_extent(mode: str, num_matrices: int, size: str) -> int:
    """32-bit registers per thread of an LDSM of ``num_matrices`` matrices (PTX ldmatrix: a warp
    of 32 threads shares each rows x cols matrix of ``LDSM_SIZE_BITS[size]``-bit elements).
    ``KeyError`` for an unknown mode or size pattern."""
    row = LDSM_MODES[mode]
    return num_matrices * row.rows * row.cols * LDSM_SIZE_BITS[size] // (32 * 32)


def verify_ldsm_mode(mode: str, size: str, num_matrices: int, transpose: bool,
                     result_shape: tuple[int, ...]) -> str | None:
    """The LDSM/STSM tuple check (spec 001 ``verify_ldsm_mode``): count, transpose, size, rank, extent."""
    row = LDSM_MODES.get(mode)
    if row is None:
        return msg("ldsm_mode", mode=mode, modes=", ".join(LDSM_MODES))
    if num_matrices not in row.counts:
        return msg("ldsm_count", mode=mode, counts="/".join(map(str, row.counts)), got=num_matrices)
    if transpose != row.transpose:
        return msg("ldsm_transpose", mode=mode, expected=str(row.transpose).lower())
    if size not in row.sizes:
        return msg("ldsm_size", mode=mode, size=size, sizes=", ".join(row.sizes))
    if len(result_shape) != 1:
        return msg("ldsm_rank", rank=len(result_shape))
    expected = expected_ldsm_extent(mode, num_matrices, size)
    if result_shape[0] != expected:
        return msg("ldsm_extent", mode=mode, count=num_matrices, expected=expected, got=result_shape[0])
    return None


def verify_matrix_space_copy(is_load: bool, src_space: str, dst_space: str,
                             shared_alignment: int | None = None, required_alignment: int = 16) -> str | None:
    """Memory-space direction and alignment of a matrix copy (spec 001 "Shared-Memory Matrix Movement").

    Spaces are ``SMEM`` / ``RMEM`` (other residencies fail).  Load: SMEM ->
    RMEM; store: RMEM -> SMEM.  ``shared_alignment`` (bytes, ``None`` =
    unknown) must be a multiple of ``required_alignment`` (16: one ldmatrix row).
    """
    want = ("SMEM", "RMEM") if is_load else ("RMEM", "SMEM")
    if (src_space, dst_space) != want:
        return msg("copy_space", direction="load" if is_load else "store", expected_src=want[0],
                   expected_dst=want[1], src=src_space, dst=dst_space)
    if shared_alignment is not None and shared_alignment % required_alignment:
        return msg("copy_align", alignment=shared_alignment, required=required_alignment)
    return None


def layout_cosize(shape, stride) -> int:
    """CuTe ``cosize``: 1 + the largest offset the layout reaches (``(4,2):(1,4)`` -> 8); 0 if empty."""
    if isinstance(shape, int):
        return 0 if shape == 0 else (shape - 1) * stride + 1 if stride >= 0 else 1
    if any(_product(s) == 0 for s in shape):
        return 0
    return 1 + sum(layout_cosize(s, d) - 1 for s, d in zip(shape, stride))


def verify_register_fragment(layout_cosize_words: int, register_count: int) -> str | None:
    """Register count vs layout cosize (spec 001 ``verify_register_fragment``, both in 32-bit words)."""
    expected, actual = 32 * layout_cosize_words, 32 * register_count
    return None if expected == actual else msg("fragment_size", actual=actual, expected=expected)


# ---------------------------------------------------------------------------
# SM120 block-scaled lattice
# ---------------------------------------------------------------------------

FP4_FP6_FP8 = frozenset({"f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E4M3FN", "f8E5M2"})


def verify_sm120_scale_lattice(k: int, scale_vector_size: int, a_type: str, b_type: str, sf_type: str,
                               scale_fragment_bits: int) -> str | None:
    """SM120 block-scaled gate (spec 001 ``verify_sm120_scale_lattice``); types by MLIR spelling.

    K = 32: FP4/FP6/FP8 inputs, E8M0 scales, vector 32, 8-bit fragments.
    K = 64: f4E2M1FN inputs only and fragment bits x vector size = 512.
    """
    if scale_vector_size not in (16, 32):
        return msg("sm120_vec", vec=scale_vector_size)
    if k not in (32, 64):
        return msg("sm120_k", k=k)
    if k == 32:
        if a_type not in FP4_FP6_FP8 or b_type not in FP4_FP6_FP8:
            return msg("sm120_k32_types", a=a_type, b=b_type)
        if sf_type != "f8E8M0FNU":
            return msg("sm120_k32_sf", sf=sf_type)
        if scale_vector_size != 32:
            return msg("sm120_k32_vec", vec=scale_vector_size)
        if scale_fragment_bits != 8:
            return msg("sm120_k32_frag", bits=scale_fragment_bits)
        return None
    if a_type != "f4E2M1FN" or b_type != "f4E2M1FN":
        return msg("sm120_k64_types", a=a_type, b=b_type)
    if scale_fragment_bits * scale_vector_size != 512:
        return msg("sm120_k64_frag", bits=scale_fragment_bits, vec=scale_vector_size)
    return None


# ---------------------------------------------------------------------------
# Swizzle / offset commutation
# ---------------------------------------------------------------------------


def verify_swizzle_offset_commutation(b: int, m: int, s: int, offset: int) -> str | None:
    """Whether ``add_offset`` commutes with CuTe ``Swizzle<B, M, S>`` for ``offset`` (spec 001).

    The swizzle XORs bits ``[M + |S|, M + |S| + B)`` into ``[M, M + B)``;
    it is the identity only when ``B == 0``.  Adding an offset commutes for every
    address when the offset is a multiple of ``2 ** (M + |S| + B)`` (it leaves
    the involved bits alone and carries only upward); tile-lsp accepts exactly
    those (a sufficient, data-independent proof).
    """
    if b == 0:
        return None
    quantum = 1 << (m + abs(s) + b)
    if offset % quantum == 0:
        return None
    return msg("swizzle_commute", offset=offset, b=b, m=m, s=s, quantum=quantum)


# ---------------------------------------------------------------------------
# TMA rank and modes
# ---------------------------------------------------------------------------

#: TMA modes -> (minimum rank, exact rank or None, Blackwell-only) (spec 001 "TMA Rank and Mode Gates").
TMA_MODES = {
    "tile": (1, None, False),
    "im2col": (3, None, False),
    "im2col_w": (3, None, True),
    "im2col_w128": (3, None, True),
    "scatter4": (2, 2, False),
}
TMA_MAX_RANK = 5
#: First compute capability with the Blackwell TMA modes.
BLACKWELL_SM = 100


def verify_tma_rank_and_mode(mode: str, rank: int, sm: int | None = None) -> str | None:
    """TMA rank 1..5, im2col* rank >= 3, scatter4 rank 2, im2col_w* Blackwell only (spec 001).

    ``mode`` is a :data:`TMA_MODES` key; ``sm``: the target compute
    capability (``None`` = unknown: the target gate is skipped).
    """
    row = TMA_MODES.get(mode)
    if row is None:
        return msg("tma_mode", mode=mode, modes=", ".join(TMA_MODES))
    if not 1 <= rank <= TMA_MAX_RANK:
        return msg("tma_rank", mode=mode, rank=rank)
    minimum, exact, blackwell = row
    if exact is not None and rank != exact:
        return msg("tma_scatter4_rank", rank=rank)
    if rank < minimum:
        return msg("tma_im2col_rank", mode=mode, rank=rank)
    if blackwell and sm is not None and sm < BLACKWELL_SM:
        return msg("tma_blackwell", mode=mode, sm=sm)
    return None


def tma_mode_of_atom(atom_name: str) -> str:
    """TMA mode named inside a TMA atom word (``tma_load_im2col_w_4d`` -> ``im2col_w``), default ``tile``.

    tile-lsp's spelling: the mode follows ``tma_load_`` / ``tma_store_`` /
    ``tma_reduce_`` and precedes the ``_Nd`` suffix.
    """
    n = atom_name.lower()
    for mode in sorted(TMA_MODES, key=len, reverse=True):
        if f"_{mode}_" in n + "_" and mode != "tile":
            return mode
    return "tile"
