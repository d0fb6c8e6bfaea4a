"""Structural comparison of two IR modules (for round-trip tests of the printer).

Two modules are the same IR when their ops correspond one to one in order:
same names, operands wired to corresponding values (by position: the n-th
result of the k-th op, or the i-th argument of the j-th block, both counted in
walk order), same result and block-argument types, same attributes by value,
and same region/block structure.  Locations, value names and source ranges
are ignored.  Attributes are compared as MLIR stores them: enum cases however
written (keyword, ``#cuda_tile.x<...>``, integer) are one value, and a
default-valued attribute equals its absence.  A block that ends without its
op's implicit terminator equals one that ends with it (MLIR's parser inserts
it: ``SingleBlockImplicitTerminator``).
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Block, Module, Operation, Region, Value
from tile_lsp.analysis.ir.attr_text import attr_kind, attr_text, default_attr
from tile_lsp.analysis.ir.printer import implicit_terminator, top_level_ops


class _Keys:
    """Position keys of values: ``("r", op#, result#)`` / ``("a", block#, arg#)``."""

    def __init__(self) -> None:
        self.ops = 0
        self.blocks = 0
        self.keys: dict[int, tuple] = {}

    def key(self, v: Value) -> tuple:
        return self.keys.get(id(v), ("external", v.name))


def _attrs(op: Operation) -> dict[str, str]:
    out = {}
    for k, v in {**op.properties, **op.attributes}.items():
        if k.startswith("__") or k in ("operandSegmentSizes", "resultSegmentSizes"):
            continue
        kind = attr_kind(op.opdef, k)
        d = default_attr(op.opdef, k) if op.opdef else None
        if isinstance(v, A.SymbolNameAttr):
            v = A.StringAttr(v.value)
        text = attr_text(v, kind)
        if d is not None and attr_text(d, kind) == text:
            continue
        if k == "optimization_hints" and text in ("#cuda_tile.optimization_hints<>", "{}"):
            continue  # the printer omits empty hints (CudaTile.cpp printOptimizationHints)
        out[k] = text
    for name in ("arg_attrs", "res_attrs"):
        # no argument attributes == a list of empty dictionaries
        if name in out and out[name].replace("{}", "").replace(",", "").replace(" ", "") == "[]":
            del out[name]
    return out


def _block_ops(block: Block, owner: Operation | None) -> list[Operation]:
    ops = list(block.operations)
    term = implicit_terminator(owner)
    if ops and term is not None and ops[-1].name == term and not ops[-1].operands \
            and not ops[-1].attributes and not ops[-1].properties:
        ops.pop()
    return ops


def _blocks(region: Region, owner: Operation | None) -> list[Block]:
    """The blocks of ``region``; one empty block without arguments counts as none
    (``{}`` parses either way)."""
    blocks = list(region.blocks)
    if len(blocks) == 1 and not blocks[0].arguments and not _block_ops(blocks[0], owner):
        return []
    return blocks


def _number(ops: list[Operation], keys: _Keys, owner_blocks: list[Block] | None = None) -> None:
    for op in ops:
        n = keys.ops
        keys.ops += 1
        for i, r in enumerate(op.results):
            keys.keys[id(r)] = ("r", n, i)
        for region in op.regions:
            for block in _blocks(region, op):
                b = keys.blocks
                keys.blocks += 1
                for i, a in enumerate(block.arguments):
                    keys.keys[id(a)] = ("a", b, i)
                _number(_block_ops(block, op), keys)


def _diff_ops(a: list[Operation], b: list[Operation], ka: _Keys, kb: _Keys, path: str, out: list[str]) -> None:
    if len(a) != len(b):
        out.append(f"{path}: {len(a)} ops vs {len(b)} ops ({[o.name for o in a]} vs {[o.name for o in b]})")
        return
    for i, (x, y) in enumerate(zip(a, b)):
        p = f"{path}/{i}:{x.name}"
        if x.name != y.name:
            out.append(f"{p}: op name {x.name} vs {y.name}")
            continue
        if [ka.key(v) for v in x.operands] != [kb.key(v) for v in y.operands]:
            out.append(f"{p}: operands {[ka.key(v) for v in x.operands]} vs {[kb.key(v) for v in y.operands]}")
        if [str(r.type) for r in x.results] != [str(r.type) for r in y.results]:
            out.append(f"{p}: result types {[str(r.type) for r in x.results]} vs {[str(r.type) for r in y.results]}")
        ax, ay = _attrs(x), _attrs(y)
        if ax != ay:
            out.append(f"{p}: attributes {ax} vs {ay}")
        if len(x.regions) != len(y.regions):
            out.append(f"{p}: {len(x.regions)} regions vs {len(y.regions)}")
            continue
        for ri, (rx, ry) in enumerate(zip(x.regions, y.regions)):
            _diff_region(rx, ry, x, y, ka, kb, f"{p}/r{ri}", out)


def _diff_region(rx: Region, ry: Region, x: Operation, y: Operation, ka: _Keys, kb: _Keys,
                 path: str, out: list[str]) -> None:
    bx = _blocks(rx, x)
    by = _blocks(ry, y)
    if len(bx) != len(by):
        out.append(f"{path}: {len(bx)} blocks vs {len(by)}")
        return
    for bi, (p, q) in enumerate(zip(bx, by)):
        if [str(a.type) for a in p.arguments] != [str(a.type) for a in q.arguments]:
            out.append(f"{path}/b{bi}: argument types differ")
        _diff_ops(_block_ops(p, x), _block_ops(q, y), ka, kb, f"{path}/b{bi}", out)


def ir_differences(a: Module, b: Module) -> list[str]:
    """The structural differences between modules ``a`` and ``b`` (empty: same IR).

    Each entry names the path of the op (``/index:name/r<region>/b<block>/...``) and what differs.
    """
    oa, ob = top_level_ops(a), top_level_ops(b)
    ka, kb = _Keys(), _Keys()
    _number(oa, ka)
    _number(ob, kb)
    out: list[str] = []
    _diff_ops(oa, ob, ka, kb, "", out)
    return out


def same_ir(a: Module, b: Module) -> bool:
    """True when :func:`ir_differences` finds nothing."""
    return not ir_differences(a, b)
