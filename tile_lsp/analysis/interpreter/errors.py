"""The one exception of the reference interpreter."""

from __future__ import annotations

from tile_lsp.analysis.ir.core import Operation


class InterpreterError(Exception):
    """A kernel the interpreter cannot run, or a fault while running it.

    ``line`` is the 1-based source line of the op at fault (``None`` when no
    op is involved, e.g. a bad argument list); ``op`` its name.  ``str()``
    reads ``line N: 'cuda_tile.op': message``.
    """

    def __init__(self, message: str, op: Operation | None = None, line: int | None = None):
        self.message = message
        self.op_name = op.name if op is not None else None
        if line is None and op is not None and op.range is not None:
            line = op.range.start.line + 1
        self.line = line
        prefix = ""
        if self.line is not None:
            prefix += f"line {self.line}: "
        if self.op_name:
            prefix += f"'{self.op_name}': "
        super().__init__(prefix + message)
