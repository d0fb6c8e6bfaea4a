"""The registry of known ops: the cuda_tile op table merged with the custom formats.

``all_ops()`` is what the grammar generator, the IR builder and the verifiers
walk.  It is computed once per process.
"""

from __future__ import annotations

import dataclasses
import functools

from tile_lsp.dialect.custom_formats import CUSTOM_FORMATS, EXTRA_ATTRIBUTES, FORMAT_OVERRIDES
from tile_lsp.dialect.schema import AttrDef, OpDef, RegionDef

# MLIR's builtin.module: the implicit top-level op, also written explicitly
# (``module attributes {...} { cuda_tile.module @m {...} }``).
BUILTIN_MODULE = OpDef(
    name="module", since="13.1", dialect="builtin",
    summary="MLIR's top-level container; holds cuda_tile.module ops.",
    attributes=(AttrDef("sym_name", "symbol_name", optional=True),),
    regions=(RegionDef("body", "max_one_block"),),
    traits=("IsolatedFromAbove", "NoRegionArguments", "SingleBlock", "SymbolTable", "NoTerminator"),
    format=FORMAT_OVERRIDES["module"],
)


@functools.lru_cache(maxsize=None)
def all_ops() -> tuple[OpDef, ...]:
    """Every registered op, with a format for each op that has a custom syntax."""
    from tile_lsp.dialect.cuda_tile_ops import OPS

    out = []
    for op in OPS + _other_dialect_ops():
        if op.format is None and op.name in CUSTOM_FORMATS:
            op = dataclasses.replace(op, format=CUSTOM_FORMATS[op.name])
        if op.name in FORMAT_OVERRIDES:
            op = dataclasses.replace(op, format=FORMAT_OVERRIDES[op.name])
        extra = [a for a in EXTRA_ATTRIBUTES.get(op.name, ()) if op.attribute(a.name) is None]
        if extra:
            op = dataclasses.replace(op, attributes=op.attributes + tuple(extra))
        out.append(op)
    return tuple(out)


def _other_dialect_ops() -> tuple[OpDef, ...]:
    """Ops of the other dialects tile-lsp knows (nv_tileas), when their table is present."""
    try:
        from tile_lsp.dialect.nv_tileas_ops import OPS as NV_TILEAS_OPS
    except ImportError:
        return ()
    return tuple(NV_TILEAS_OPS)


@functools.lru_cache(maxsize=None)
def ops_by_full_name() -> dict[str, OpDef]:
    """``{"cuda_tile.addi": OpDef, ...}``."""
    return {op.full_name: op for op in all_ops()}


#: The dialects ``cuda-tile-opt`` has loaded when it parses a file: ``builtin`` (always) and
#: ``cuda_tile`` (its registry; ``MLIRContext::getOrLoadDialect`` on the op's prefix).  An op
#: of another dialect is accepted unverified (``-allow-unregistered-dialect``); an op of
#: one of these that the dialect does not define is a verifier error
#: (:func:`unregistered_in_loaded_dialect`).
LOADED_DIALECTS = frozenset({"builtin", "cuda_tile"})

#: The builtin dialect's ops (``mlir/include/mlir/IR/BuiltinOps.td``); tile-lsp models
#: only ``builtin.module``, the other is accepted as registered but unverified.
BUILTIN_OP_NAMES = frozenset({"builtin.module", "builtin.unrealized_conversion_cast"})


def unregistered_in_loaded_dialect(name: str) -> str | None:
    """The dialect of ``name`` (a full op name, ``"cuda_tile.cmp"``) when that dialect is
    loaded (:data:`LOADED_DIALECTS`) but defines no such op; ``None`` otherwise.

    MLIR ``OperationVerifier::verifyOnExit`` (``mlir/lib/IR/Verifier.cpp``): "unregistered
    operation 'N' found in dialect ('D') that does not allow unknown operations".
    """
    dialect, dot, _ = name.partition(".")
    if not dot or dialect not in LOADED_DIALECTS or name in BUILTIN_OP_NAMES:
        return None
    return dialect if ops_by_full_name().get(name) is None else None


def lookup(name: str) -> OpDef | None:
    """The OpDef of ``name`` given with or without the ``cuda_tile.`` prefix."""
    if name == "builtin.module":
        return BUILTIN_MODULE
    table = ops_by_full_name()
    op = table.get(name)
    if op is None and "." not in name:
        op = table.get("cuda_tile." + name)
    return op
