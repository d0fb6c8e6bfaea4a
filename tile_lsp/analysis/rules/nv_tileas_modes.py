"""Spec 001 mode-pattern verifiers attached to nv_tileas ops.

The pure checks live in :mod:`tile_lsp.analysis.mode_patterns`; this module
registers the ones the spec ties to ops of the nv_tileas table:

* TMA rank and mode gates (spec 001 "TMA Rank and Mode Gates") on
  ``make_tiled_tma_desc`` and the four async TMA transfers.  The rank is the
  tiled view's rank (else the atom's ``_Nd`` box rank); the mode is read from
  the atom word (:func:`~tile_lsp.analysis.mode_patterns.tma_mode_of_atom`,
  ``tile`` when none is named); the target from the op's
  ``compute_capability`` or the enclosing module's
  ``nv_tileaa.compute_capability`` / ``nv_tileaa.target_spec``.
* Matrix-movement direction (spec 001 "Shared-Memory Matrix Movement") on
  ``copy`` / ``async.copy`` whose atom is an LDSM (load, SMEM -> RMEM) or STSM
  (store, RMEM -> SMEM) atom, read from the tiled views' residency tags.

The tcgen05 kind-word ladder, UMMA layouts, the LDSM tuple and the SM120
lattice have no carrier in the op table (they check NVVM-level
``tcgen05.mma`` words and CuTe layouts); they stay pure functions.
"""

from __future__ import annotations

from tile_lsp.analysis import mode_patterns as MP
from tile_lsp.analysis.frontend_contract import compute_capability_of
from tile_lsp.analysis.ir import Operation
from tile_lsp.analysis.verifier import VerifyContext, rule
from tile_lsp.dialect import nv_tileas_types as NT

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
    """Runs :func:`~tile_lsp.analysis.mode_patterns.verify_tma_rank_and_mode` on the op."""
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
