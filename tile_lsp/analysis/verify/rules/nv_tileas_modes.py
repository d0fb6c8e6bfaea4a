"""Spec 001 mode-pattern verifiers attached to nv_tileas ops.

The pure checks live in :mod:`tile_lsp.analysis.verify.mode_patterns`; this module
registers the ones the spec ties to ops of the nv_tileas table:

* TMA rank and mode gates (spec 001 "TMA Rank and Mode Gates") on
  ``make_tiled_tma_desc`` and the four async TMA transfers.  The rank is the
  tiled view's rank (else the atom's ``_Nd`` box rank); the mode is read from
  the atom word (:func:`~tile_lsp.analysis.verify.mode_patterns.tma_mode_of_atom`,
  ``tile`` when none is named); the target from the op's
  ``compute_capability`` or the enclosing module's
  ``nv_tileaa.compute_capability`` / ``nv_tileaa.target_spec``.
* Matrix-movement direction (spec 001 "Shared-Memory Matrix Movement") on
  ``copy`` / ``async.copy`` whose atom is an LDSM (load, SMEM -> RMEM) or STSM
  (store, RMEM -> SMEM) atom, read from the tiled views' residency tags.

* The tcgen05.mma kind-word ladder (spec 001) on ``dot`` / ``async.dot`` /
  ``block_scaled_mma`` carrying a ``tcgen05_kind`` attribute (tile-lsp's
  carrier, docs/nv_tileas.md), with the context the ladder reads:
  ``arch_conditional`` (or a module ``nv_tileaa.target_spec`` ending in
  ``a``/``f``), the target's compute capability (ISA of rule 4), ``sparse``,
  ``ashift`` and ``collector_a``.
* The UMMA canonical-layout verifier (spec 001) on the same ops' ``a_layout``
  / ``b_layout`` attributes, with the element width of the A / B operand.

The diagnostics point at the attribute.  The LDSM tuple and the SM120 lattice
have no carrier (no op of the table holds an LDSM size pattern or an SM120
scale fragment); they stay pure functions.
"""

from __future__ import annotations

from tile_lsp.analysis.ir import decoders as D
from tile_lsp.analysis.verify import mode_patterns as MP
from tile_lsp.analysis.verify.frontend_contract import (
    arch_conditional_target,
    compute_capability_of,
)
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.dialect import nv_tileas_types as NT
from tile_lsp.dialect import types as T

P = "nv_tileas."

#: TMA ops -> the operand group holding the tiled view whose rank is the transfer rank.
TMA_VIEW_OPERAND = {
    "make_tiled_tma_desc": "global_view",
    "async.tiled_tma_load": "dest",
    "async.gather_tma_load": "dest",
    "async.tiled_tma_store": "source",
    "async.scatter_tma_store": "source",
}

#: Atom-name prefix -> whether the matrix copy is a load (LDSM) or a store (STSM).
MATRIX_ATOMS = {"ldsm": True, "stsm": False}


def tma_rank(op: Operation, view_group: str) -> int | None:
    """Rank of a TMA op's view operand, else its atom's ``_Nd`` box rank, else ``None``."""
    views = op.operand_group(view_group)
    view = NT.decode_type(views[0].type) if views else None
    if isinstance(view, NT.TiledViewType):
        return view.rank
    atom = NT.decode_atom(op.attr("atom"))
    return atom.box_rank if atom is not None else None


@rule(*(P + n for n in TMA_VIEW_OPERAND), code="tma-rank-mode")
def verify_tma_rank_mode(op: Operation, ctx: VerifyContext) -> None:
    """Runs :func:`~tile_lsp.analysis.verify.mode_patterns.verify_tma_rank_and_mode` on the op."""
    atom = NT.decode_atom(op.attr("atom"))
    rank = tma_rank(op, TMA_VIEW_OPERAND[op.name[len(P):]])
    if rank is None:
        return
    mode = MP.tma_mode_of_atom(atom.name) if atom is not None else "tile"
    message = MP.verify_tma_rank_and_mode(mode, rank, compute_capability_of(op))
    if message is not None:
        ctx.op_error(op, message)


@rule(P + "copy", P + "async.copy", code="matrix-copy")
def verify_matrix_copy(op: Operation, ctx: VerifyContext) -> None:
    """LDSM copies move SMEM -> RMEM and STSM copies RMEM -> SMEM (residency of the two views)."""
    atom = NT.decode_atom(op.attr("atom"))
    if atom is None or len(op.operands) < 2:
        return
    is_load = next((v for k, v in MATRIX_ATOMS.items() if atom.name.lower().startswith(k)), None)
    if is_load is None:
        return
    src, dst = NT.decode_type(op.operands[0].type), NT.decode_type(op.operands[1].type)
    if not (isinstance(src, NT.TiledViewType) and isinstance(dst, NT.TiledViewType)):
        return
    if src.memory_space is None or dst.memory_space is None:
        return
    message = MP.verify_matrix_space_copy(is_load, src.memory_space, dst.memory_space)
    if message is not None:
        ctx.op_error(op, message)


# ---------------------------------------------------------------------------
# tcgen05 kind word and UMMA layouts on the MMA ops
# ---------------------------------------------------------------------------

#: MMA ops carrying ``tcgen05_kind`` / ``a_layout`` / ``b_layout``.
MMA_OPS = ("dot", "async.dot", "block_scaled_mma")
#: collector::a usages that rule 10 combines with ashift.
COLLECTOR_A_USE_OR_FILL = ("use", "fill")

#: tile-lsp's texts for values the carriers cannot hold.
CARRIER_MESSAGES = {
    "unreadable": "cannot read '{name}': {detail}",
    "not_a_word": "'tcgen05_kind' must be a 9-bit integer or #nv_tileas<tcgen05_kind ...>, but got {text}",
    "not_a_layout": "'{name}' must be #nv_tileas<umma_layout MN|K, swizzle = ..., shape : stride>, but got {text}",
    "umma_width": "UMMA operands hold 4-, 8-, 16- or 32-bit elements, but {operand} has {bits}-bit elements",
}


def _flag(op: Operation, name: str) -> bool:
    a = op.attr(name)
    return a is not None and (getattr(a, "value", None) is True or type(a).__name__ == "UnitAttr")


def kind_word_context(op: Operation) -> MP.KindWordContext:
    """The ladder's context for an MMA op: arch-conditional variant, ISA of the target, sparsity,
    ashift, collector::a use/fill.  Without a known target the ISA is sm_100a's (rule 4 stays silent)."""
    arch = arch_conditional_target(op)
    sm = compute_capability_of(op)
    collector = NT.enum_word(op.attr("collector_a"))
    return MP.KindWordContext(arch_conditional=arch, isa=MP.isa_version(sm, arch) if sm is not None else MP.SM100A,
                              sparse=_flag(op, "sparse"), ashift=_flag(op, "ashift"),
                              collector_a=collector in COLLECTOR_A_USE_OR_FILL)


def _read_carrier(op: Operation, ctx: VerifyContext, name: str, attr, decode, not_carried: str):
    """``decode(attr)`` for the carrier attribute ``name`` of ``op`` (``attr``, present), e.g.
    :func:`~tile_lsp.analysis.ir.decoders.kind_word_of`.  A ``CarrierError`` is reported as
    :data:`CARRIER_MESSAGES` ``unreadable``, a ``None`` (the attribute carries no value) as
    ``not_carried``, both at the attribute with :meth:`VerifyContext.op_error` (which stops
    verifying ``op``); returns ``None`` then.  Messages: tile-lsp's (spec 001 carriers)."""
    rng = getattr(attr, "range", None)
    try:
        value = decode(attr)
    except D.CarrierError as e:
        ctx.op_error(op, CARRIER_MESSAGES["unreadable"].format(name=name, detail=e), rng=rng)
        return None
    if value is None:
        ctx.op_error(op, CARRIER_MESSAGES[not_carried].format(name=name, text=attr), rng=rng)
    return value


@rule(*(P + n for n in MMA_OPS), code="tcgen05-kind-word")
def verify_tcgen05_kind_word(op: Operation, ctx: VerifyContext) -> None:
    """The 13-rule kind-word ladder (spec 001) on the op's ``tcgen05_kind``, fail-first."""
    attr = op.attr("tcgen05_kind")
    if attr is None:
        return
    rng = getattr(attr, "range", None)
    word = _read_carrier(op, ctx, "tcgen05_kind", attr, D.kind_word_of, "not_a_word")
    if word is None:
        return
    message = MP.verify_kind_word(word, kind_word_context(op))
    if message is not None:
        ctx.op_error(op, message, rng=rng)


@rule(*(P + n for n in MMA_OPS), code="umma-layout")
def verify_umma_layouts(op: Operation, ctx: VerifyContext) -> None:
    """The UMMA canonical-layout verifier (spec 001) on ``a_layout`` / ``b_layout``."""
    for name, operand in (("a_layout", "a"), ("b_layout", "b")):
        attr = op.attr(name)
        if attr is None:
            continue
        rng = getattr(attr, "range", None)
        layout = _read_carrier(op, ctx, name, attr, D.umma_layout_of, "not_a_layout")
        if layout is None:
            return
        values = op.operand_group(operand)
        element = _element(values[0].type) if values else None
        bits = T.bit_width(element) if element is not None else None
        if bits is None:
            continue
        message = MP.verify_umma_canonical_layout(layout.direction, bits, layout.swizzle, layout.mn_mode,
                                                  layout.k_mode)
        if message == "":
            message = CARRIER_MESSAGES["umma_width"].format(operand=operand, bits=bits)
        if message is not None:
            ctx.op_error(op, message, rng=rng)


def _element(t):
    d = NT.decode_type(t)
    if isinstance(d, NT.TiledViewType):
        return d.element
    return t.element if isinstance(t, T.TileType) else None
