"""Tile IR bytecode: reader, writer and the shared format tables.

``read_bytecode(data) -> Module`` and ``write_bytecode(module, version) -> bytes``;
malformed input raises :class:`BytecodeError`, content without a bytecode form
:class:`BytecodeWriteError`.  See ``docs/bytecode.md``.
"""

from tile_lsp.bytecode.reader import BytecodeError, read_bytecode
from tile_lsp.bytecode.writer import BytecodeWriteError, write_bytecode

__all__ = ["BytecodeError", "BytecodeWriteError", "read_bytecode", "write_bytecode"]
