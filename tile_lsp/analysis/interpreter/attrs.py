"""How the interpreter's op handlers read an op: its attributes and scalar operands."""

from __future__ import annotations

import numpy as np

from tile_lsp.analysis.interpreter import numerics as N
from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.dialect import types as T




def result_type(o: Operation, i: int = 0) -> T.Type:
    """The type of result ``i`` of ``o``."""
    return o.results[i].type


def enum_case(o: Operation, name: str, default: str | None = None) -> str | None:
    """The case of ``o``'s enum attribute ``name``, ``default`` when absent:
    :meth:`~tile_lsp.analysis.ir.core.Operation.enum_case`."""
    return o.enum_case(name, default)


def flag(o: Operation, name: str) -> bool:
    """Whether unit or bool attribute ``name`` of ``o`` is set."""
    return o.attr(name) is not None and not (isinstance(o.attr(name), A.BoolAttr) and not o.attr(name).value)


def int_attr(o: Operation, name: str, default: int = 0) -> int:
    """Integer attribute ``name`` of ``o``, ``default`` when absent."""
    a = o.attr(name)
    return int(a.value) if a is not None else default


def scalar_int(x: np.ndarray, t: T.Type, signed: bool) -> int:
    """Python int of a 0-d integer tile."""
    return int(N.int_operands(np.asarray(x), N.int_width(t), signed).reshape(-1)[0])


def is_signed(o: Operation) -> bool:
    """Whether ``o``'s ``signedness`` attribute (default signed) says signed."""
    return enum_case(o, "signedness", "signed") == "signed"
