"""The text NVIDIA's ``tileirdisasm`` prints for a bytecode file.

``tileirdisasm FILE`` prints the ops of the file's ``cuda_tile.module`` one
after the other at column 0, in cuda-tile-opt's custom form with the
``cuda_tile`` dialect prefix elided (``entry @k(...) {``), and no
``module { cuda_tile.module @kernels { ... } }`` around them: the bytecode
does not store the module's name.  Each op's text is the IR printer's
(:mod:`tile_lsp.analysis.ir.printer`), floats as MLIR's ``printFloatValue``
prints them (:mod:`tile_lsp.analysis.ir.apfloat`).

``tileirdisasm -g`` (:func:`disassemble_with_locations`) adds ``loc(#alias)``
after every op (unknown locations included) and the alias definitions after
the ops, named and ordered as MLIR's ``AsmPrinter`` does (``AliasInitializer``):
every location gets the alias ``loc``, the debug-info attributes ``di_file``,
``di_compile_unit``, ``di_subprogram``, ``di_lexical_block``; aliases are
collected in a pre-order walk (an op's location before its regions', an
attribute before the attributes inside it), sorted (stably) by depth (0 for
one with no aliased parts, else one more than its deepest part) then by
alias name, and numbered per name in that order (``#loc``, ``#loc1``, ...).
Inside an alias definition, the parts are printed as their aliases.
"""

from __future__ import annotations

from typing import Any, Callable

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir import debuginfo as D
from tile_lsp.analysis.ir.core import Block, Module, Operation
from tile_lsp.analysis.ir.attr_text import apfloat_floats
from tile_lsp.analysis.ir.printer import Namer, Printer, top_level_ops


def module_ops(module: Module) -> list[Operation]:
    """The ops ``tileirdisasm`` prints: the body of the (single) ``cuda_tile.module``
    of a module from :func:`~tile_lsp.bytecode.reader.read_bytecode` (globals, then
    entries), or the top-level ops when there is no such module."""
    ops = top_level_ops(module)
    if len(ops) == 1 and ops[0].name == "cuda_tile.module" and ops[0].regions \
            and ops[0].regions[0].blocks:
        return list(ops[0].regions[0].blocks[0].operations)
    return list(ops)


def disassemble(module: Module, loc_text: Callable[[Operation], str | None] | None = None) -> str:
    """``tileirdisasm``'s text for ``module`` (read from bytecode), ending with a newline.

    ``loc_text``: gives an op's ``loc(...)`` text, printed after it (as
    ``tileirdisasm -g``); ``None``: no locations.
    """
    ops = module_ops(module)
    namer = Namer([Block(operations=ops)])
    printer = Printer(namer, False, loc_text)
    with apfloat_floats():
        return "".join(printer.op_lines(op, 0, "cuda_tile") + "\n" for op in ops)


def _location_value(loc: Any) -> D.Loc:
    """The decoded location of an op read from bytecode (unknown when it has none)."""
    from tile_lsp.bytecode.locations import decode

    if isinstance(loc, A.LocationAttr) and loc.kind == "callsite" and len(loc.children) == 2:
        return D.CallSiteLoc(_location_value(loc.children[0]), _location_value(loc.children[1]))
    value = decode(loc)
    return value if value is not None else D.UNKNOWN


def _alias_name(value: Any) -> str:
    if isinstance(value, D.Loc):
        return "loc"
    return value.mnemonic


def _parts(value: Any) -> list[Any]:
    """The aliased attributes printed inside ``value``, in print order."""
    if isinstance(value, D.DICompileUnit):
        return [value.file]
    if isinstance(value, D.DISubprogram):
        return [value.file, value.compile_unit]
    if isinstance(value, D.DILexicalBlock):
        return [value.scope, value.file]
    if isinstance(value, D.DILoc):
        return [value.source, value.scope]
    if isinstance(value, D.CallSiteLoc):
        return [value.callee, value.caller]
    return []


class _Aliases:
    """MLIR's alias table for the locations of the printed ops."""

    def __init__(self, locations: list[D.Loc]):
        self.order: dict[Any, int] = {}  # value -> visit index
        self.depth: dict[Any, int] = {}
        for loc in locations:
            self._visit(loc)
        ranked = sorted(self.order, key=lambda v: (self.depth[v], _alias_name(v), self.order[v]))
        counts: dict[str, int] = {}
        self.names: dict[Any, str] = {}
        for value in ranked:
            base = _alias_name(value)
            n = counts.get(base, 0)
            counts[base] = n + 1
            self.names[value] = base + (str(n) if n else "")
        self.ranked = ranked

    def _visit(self, value: Any) -> int:
        if value in self.order:
            return self.depth[value]
        self.order[value] = len(self.order)
        parts = [self._visit(p) for p in _parts(value)]
        self.depth[value] = max(parts) + 1 if parts else 0
        return self.depth[value]

    def ref(self, value: Any) -> str:
        return "#" + self.names[value]

    def definition(self, value: Any) -> str:
        """``#name = <value with its parts as aliases>``."""
        r = self.ref
        if isinstance(value, D.DICompileUnit):
            text = f"#cuda_tile.di_compile_unit<file = {r(value.file)}>"
        elif isinstance(value, D.DISubprogram):
            text = (f"#cuda_tile.di_subprogram<file = {r(value.file)}, line = {value.line}, "
                    f"name = {D.quote(value.name)}, linkageName = {D.quote(value.linkage_name)}, "
                    f"compileUnit = {r(value.compile_unit)}"
                    + (f", scopeLine = {value.scope_line}" if value.scope_line else "") + ">")
        elif isinstance(value, D.DILexicalBlock):
            text = (f"#cuda_tile.di_lexical_block<scope = {r(value.scope)}, file = {r(value.file)}, "
                    f"line = {value.line}" + (f", column = {value.column}" if value.column else "") + ">")
        elif isinstance(value, D.DILoc):
            text = f"#cuda_tile.di_loc<{r(value.source)} in {r(value.scope)}>"
        elif isinstance(value, D.CallSiteLoc):
            text = f"loc(callsite({r(value.callee)} at {r(value.caller)}))"
        else:
            text = str(value)
        return f"{r(value)} = {text}\n"


class _Recorder(Printer):
    """A printer that notes the ops it prints, in pre-order (MLIR's alias walk order)."""

    def __init__(self, namer: Namer):
        super().__init__(namer, False, None)
        self.printed: list[Operation] = []

    def op_lines(self, op: Operation, indent: int, default_dialect: str) -> str:
        self.printed.append(op)
        return super().op_lines(op, indent, default_dialect)


def disassemble_with_locations(module: Module) -> str:
    """``tileirdisasm -g``'s text for ``module`` (read from bytecode): each op followed
    by ``loc(#alias)``, then the alias definitions (see the module docstring)."""
    ops = module_ops(module)
    recorder = _Recorder(Namer([Block(operations=ops)]))
    with apfloat_floats():
        for op in ops:
            recorder.op_lines(op, 0, "cuda_tile")
    locations = {id(op): _location_value(op.location) for op in recorder.printed}
    aliases = _Aliases([locations[id(op)] for op in recorder.printed])
    text = disassemble(module, lambda op: f"loc({aliases.ref(locations[id(op)])})"
                       if id(op) in locations else None)
    return text + "".join(aliases.definition(v) for v in aliases.ranked)
