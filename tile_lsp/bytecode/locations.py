"""Debug-info locations between Tile IR bytecode and text.

The bytecode's debug section (``docs/bytecode.md``) holds ``di_loc``
locations (a file, line, column and a ``di_subprogram`` or
``di_lexical_block`` scope) and call sites; the reader keeps them as
:class:`~tile_lsp.analysis.ir.attributes.LocationAttr` objects holding
:class:`~tile_lsp.bytecode.reader.DebugInfoAttr` trees (the writer's input).
The text form is MLIR's ``--mlir-print-debuginfo``: ``loc(#loc3)`` after
each op and ``#loc3 = #cuda_tile.di_loc<loc("k.py":12:4) in
#cuda_tile.di_subprogram<...>>`` definitions after the module, which the
builder keeps as aliases and :mod:`tile_lsp.analysis.ir.debuginfo` decodes.

:func:`decode` and :func:`encode` convert between the two;
:func:`print_with_locations` prints a module with its locations, so that a
``.tileirbc`` opened as text and written back keeps its debug info.

Rule source: NVIDIA cuda-tile ``include/cuda_tile/Dialect/CudaTile/IR/AttrDefs.td``
(the ``di_*`` attributes) and ``lib/Bytecode/Writer/BytecodeWriter.cpp``
(only ``DILocAttr`` and ``CallSiteLoc`` have a bytecode form; other
locations are written as unknown).
"""

from __future__ import annotations

from typing import Any

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir import debuginfo as D
from tile_lsp.analysis.ir.core import Module, Operation
from tile_lsp.analysis.ir.printer import print_module
from tile_lsp.bytecode.reader import DebugInfoAttr


def _decode_di(attr: DebugInfoAttr) -> Any:
    f = attr.fields
    if attr.mnemonic == "di_file":
        return D.DIFile(f[0], f[1])
    if attr.mnemonic == "di_compile_unit":
        return D.DICompileUnit(_decode_di(f[0]))
    if attr.mnemonic == "di_subprogram":
        return D.DISubprogram(_decode_di(f[0]), f[1], f[2], f[3], _decode_di(f[4]), f[5])
    if attr.mnemonic == "di_lexical_block":
        return D.DILexicalBlock(_decode_di(f[0]), _decode_di(f[1]), f[2], f[3])
    raise ValueError(f"not a debug-info scope: #cuda_tile.{attr.mnemonic}")


def decode(loc: Any) -> D.Loc | None:
    """The :mod:`~tile_lsp.analysis.ir.debuginfo` value of a location read from bytecode.

    ``loc``: an op's ``location`` from :func:`~tile_lsp.bytecode.reader.read_bytecode`
    (``None``, unknown, a ``di_loc`` or a call site).  Returns ``None`` for an
    unknown location.
    """
    if not isinstance(loc, A.LocationAttr):
        return None
    if loc.kind == "dialect" and isinstance(loc.attr, DebugInfoAttr) and loc.attr.mnemonic == "di_loc":
        scope, filename, line, column = loc.attr.fields
        return D.DILoc(D.FileLoc(filename, line, column), _decode_di(scope))
    if loc.kind == "callsite" and len(loc.children) == 2:
        callee, caller = (decode(c) for c in loc.children)
        if callee is not None and caller is not None:
            return D.CallSiteLoc(callee, caller)
    return None


def _encode_di(value: Any) -> DebugInfoAttr:
    if isinstance(value, D.DIFile):
        return DebugInfoAttr.make("di_file", (value.name, value.directory))
    if isinstance(value, D.DICompileUnit):
        return DebugInfoAttr.make("di_compile_unit", (_encode_di(value.file),))
    if isinstance(value, D.DISubprogram):
        return DebugInfoAttr.make("di_subprogram", (
            _encode_di(value.file), value.line, value.name, value.linkage_name,
            _encode_di(value.compile_unit), value.scope_line))
    if isinstance(value, D.DILexicalBlock):
        return DebugInfoAttr.make("di_lexical_block", (
            _encode_di(value.scope), _encode_di(value.file), value.line, value.column))
    raise ValueError(f"not a debug-info attribute: {value}")


def encode(value: D.Loc | None) -> A.LocationAttr | None:
    """The bytecode form of a decoded location (the writer's input), or ``None`` when it
    has none: only ``di_loc`` locations and call sites of them are written."""
    if isinstance(value, D.DILoc):
        src = value.source
        return A.LocationAttr("dialect", attr=DebugInfoAttr.make(
            "di_loc", (_encode_di(value.scope), src.filename, src.line, src.column or 0)))
    if isinstance(value, D.CallSiteLoc):
        callee, caller = encode(value.callee), encode(value.caller)
        if callee is not None and caller is not None:
            return A.LocationAttr("callsite", children=[callee, caller])
    return None


def print_with_locations(module: Module, generic: bool = False) -> str:
    """:func:`~tile_lsp.analysis.ir.printer.print_module` of a module read from bytecode, with
    each op's debug-info location as MLIR's ``--mlir-print-debuginfo`` prints it:
    ``loc(#locN)`` after the op and the ``#locN = ...`` definitions after the module
    (a call site's callee and caller get their own aliases first).  Without debug
    info the text is :func:`print_module`'s (``generic``: MLIR's generic op form).
    """
    aliases: dict[D.Loc, str] = {}
    definitions: list[str] = []

    def alias(value: D.Loc) -> str:
        name = aliases.get(value)
        if name is None:
            if isinstance(value, D.CallSiteLoc):
                text = f"loc(callsite({alias(value.callee)} at {alias(value.caller)}))"
            else:
                text = str(value)
            name = aliases[value] = "#loc" + (str(len(aliases)) if aliases else "")
            definitions.append(f"{name} = {text}\n")
        return name

    def loc_text(op: Operation) -> str | None:
        value = decode(op.location)
        return f"loc({alias(value)})" if value is not None else None

    return print_module(module, generic, loc_text=loc_text) + "".join(definitions)
