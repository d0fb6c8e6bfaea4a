"""Bounds on counts and sizes taken from the text, checked before any work proportional to them.

The rule (issue 16): a number written in the text never drives a loop or an
allocation before it is checked against a bound here, and a number out of
range is a located diagnostic, never a hang, a ``MemoryError`` or a
traceback.  Tile shapes are bounded by the dialect's own rule (at most
2**24 elements, ``tile would exceed the maximum of 16777216 elements``,
:mod:`tile_lsp.analysis.syntax.type_rules`); this module holds the bounds MLIR has
no diagnostic for, and the checked conversion of integer tokens.
"""

from __future__ import annotations

import re

#: Most results one operation may bind through result groups (``%x:N``), all groups together.
#: MLIR has no limit of its own (it builds ``N`` results, ``unsigned``); no cuda_tile op has
#: more than a few dozen results, so 65536 leaves ample room while keeping the builder's work
#: (one result object per bound name) small.
MAX_BOUND_RESULTS = 1 << 16

_UINT = re.compile(r"(0x[0-9a-fA-F]+|[0-9]+)\Z")


def parse_uint64(text: str) -> int | None:
    """The value of an MLIR integer token as ``Token::getUInt64IntegerValue`` reads it.

    Decimal (``42``) or hexadecimal (``0x2a``); ``None`` for anything else
    (a sign, other characters) or a value that does not fit in 64 bits.
    """
    if not _UINT.match(text):
        return None
    hexa = text.startswith("0x")
    digits = (text[2:] if hexa else text).lstrip("0")
    if len(digits) > (16 if hexa else 20):  # beyond 64 bits (and Python's int-from-str digit limit)
        return None
    value = int(digits or "0", 16 if hexa else 10)
    return value if value < (1 << 64) else None

