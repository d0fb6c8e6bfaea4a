"""The syntax errors of a location (``loc(...)``), in MLIR's words.

MLIR parses a location by hand (``mlir/lib/AsmParser/LocationParser.cpp``:
``parseLocationInstance``, ``parseNameOrFileLineColRange``,
``parseCallSiteLocation``, ``parseFusedLocation``; the ``loc(`` wrapper in
``Parser.cpp``), and each step names what it wanted: "expected '(' in location",
"expected location instance", "expected 'at' in callsite location", "expected
integer line number in FileLineColRange"...  Every one is reported as a wrong
token (:func:`~tile_lsp.grammar.parser_state.wrong_token_offset`).

:func:`location_issue` reads the parser's value stack at a syntax error: the
innermost open location construct and what was read in it since.
"""

from __future__ import annotations

from lark import Token, Tree
from lark.exceptions import UnexpectedToken

from tile_lsp.grammar.parser_state import SyntaxIssue, value_stack, wrong_token_offset

_OPENERS = {"LPAR": "RPAR", "LSQB": "RSQB", "LESSTHAN": "MORETHAN"}
_CLOSERS = frozenset(_OPENERS.values())
#: The reduced trees of a location instance (the ``loc_item`` alternatives of ``mlir.lark``).
_INSTANCES = frozenset({"file_loc", "name_loc", "unknown_loc", "alias_loc", "dialect_loc", "callsite_loc",
                        "fused_loc"})

#: What MLIR says when a complete instance is not followed by what its construct wants next.
_AFTER_INSTANCE = {
    "loc": "expected ')' in location",
    "callee": "expected 'at' in callsite location",
    "caller": "expected ')' in callsite location",
    "name": "expected ')' after child location of NameLoc",
    "fused": "expected ']' in fused location",
}
#: What MLIR says when a location keyword is not followed by its bracket.
_AFTER_KEYWORD = {
    "LOC": "expected '(' in location",
    "CALLSITE": "expected '(' in callsite location",
    "FUSED": "expected '[' in fused location",
}
_LINE = "expected integer line number in FileLineColRange"
_COLUMN = "expected integer column number in FileLineColRange"
_AFTER_TO = "expected either integer or `:` post `to` in FileLineColRange"

#: Instances read but not reduced yet (types of what is on the stack), and the message when what
#: follows does not fit; ``None``: the instance is complete.
_PARTIAL: dict[tuple[str, ...], str | None] = {
    ("UNKNOWN",): None,
    ("HASH_ID",): None,
    ("HASH_ID", "pretty_body"): None,
    ("INSTANCE",): None,
    ("STRING",): None,
    ("STRING", "GROUP"): None,
    ("CALLSITE", "GROUP"): None,
    ("FUSED", "GROUP"): None,
    ("FUSED", "GROUP", "GROUP"): None,
    ("STRING", "COLON"): _LINE,
    ("STRING", "COLON", "INT"): None,
    ("STRING", "COLON", "INT", "COLON"): _COLUMN,
    ("STRING", "COLON", "INT", "COLON", "INT"): None,
    ("STRING", "COLON", "INT", "COLON", "INT", "TO"): _AFTER_TO,
    ("STRING", "COLON", "INT", "COLON", "INT", "TO", "INT"): _AFTER_TO,
    ("STRING", "COLON", "INT", "COLON", "INT", "TO", "COLON"): _COLUMN,
    ("STRING", "COLON", "INT", "COLON", "INT", "TO", "INT", "COLON"): _COLUMN,
    ("STRING", "COLON", "INT", "COLON", "INT", "TO", "COLON", "INT"): None,
    ("STRING", "COLON", "INT", "COLON", "INT", "TO", "INT", "COLON", "INT"): None,
}


def _kind(value: object) -> str:
    if isinstance(value, Token):
        return value.type
    if isinstance(value, Tree) and value.data in _INSTANCES:
        return "INSTANCE"
    return value.data if isinstance(value, Tree) else ""


def _open_construct(kinds: list[str], top: int) -> tuple[int, int | None] | None:
    """``(opener index, separator index)``: the innermost bracket open below ``top`` (inclusive) and
    the last ``at``/``,`` between it and ``top``; ``None`` when no bracket is open."""
    depth = 0
    separator = None
    for i in range(top, -1, -1):
        kind = kinds[i]
        if kind in _CLOSERS:
            depth += 1
        elif kind in _OPENERS:
            if not depth:
                return i, separator
            depth -= 1
        elif not depth and separator is None and kind in ("AT", "COMMA"):
            separator = i
    return None


def _context(kinds: list[str], opener: int, separator: int | None) -> str | None:
    """The location construct the bracket at ``opener`` opens, ``None`` for another bracket."""
    before = kinds[opener - 1] if opener else ""
    if kinds[opener] == "LPAR":
        if before == "LOC":
            return "loc"
        if before == "CALLSITE":
            return "caller" if separator is not None else "callee"
        if before == "STRING" and _inside_location(kinds, opener - 2):
            return "name"
        return None
    if kinds[opener] == "LSQB" and (before == "FUSED" or (before == "MORETHAN" and _after_fused_metadata(kinds,
                                                                                                   opener - 1))):
        return "fused"
    if kinds[opener] == "LESSTHAN" and before == "FUSED":
        return "metadata"
    return None


def _after_fused_metadata(kinds: list[str], close: int) -> bool:
    """Whether the ``>`` at ``close`` ends a fused location's ``<metadata>``."""
    depth = 0
    for i in range(close, -1, -1):
        if kinds[i] in _CLOSERS:
            depth += 1
        elif kinds[i] in _OPENERS:
            depth -= 1
            if not depth:
                return kinds[i] == "LESSTHAN" and i > 0 and kinds[i - 1] == "FUSED"
    return False


def _inside_location(kinds: list[str], top: int) -> bool:
    """Whether an unclosed ``loc(`` holds position ``top`` of the stack."""
    while top >= 0:
        found = _open_construct(kinds, top)
        if found is None:
            return False
        opener = found[0]
        if kinds[opener] == "LPAR" and opener and kinds[opener - 1] == "LOC":
            return True
        top = opener - 1
    return False


def _grouped(kinds: list[str]) -> tuple[str, ...]:
    """``kinds`` with each closed bracket group (``( ... )``) folded into one ``GROUP``."""
    out: list[str] = []
    depth = 0
    for kind in kinds:
        if kind in _OPENERS:
            depth += 1
        elif kind in _CLOSERS and depth:
            depth -= 1
            if not depth:
                out.append("GROUP")
            continue
        if not depth:
            out.append(kind)
    return tuple(out)


def location_issue(err: UnexpectedToken, text: str, start: int, eof: bool) -> list[SyntaxIssue] | None:
    """MLIR's error for a token that does not fit the location being read at ``err``, or ``None``
    when the parser is not inside a location (or the token fits where MLIR's parser would go on)."""
    values = value_stack(err)
    if not values:
        return None
    kinds = [_kind(v) for v in values]
    where = wrong_token_offset(text, start, eof)
    message = _AFTER_KEYWORD.get(kinds[-1])
    if message is None:
        found = _open_construct(kinds, len(kinds) - 1)
        if found is None:
            return None
        opener, separator = found
        context = _context(kinds, opener, separator)
        if context is None:
            return None
        if context == "metadata":
            message = "expected '>' after fused location metadata" if opener < len(kinds) - 1 \
                else "expected attribute value"
        else:
            tail = _grouped(kinds[(separator if separator is not None else opener) + 1:])
            if not tail:
                message = "expected location instance"
            elif tail in _PARTIAL:
                message = _PARTIAL[tail] or _AFTER_INSTANCE[context]
    if message is None:
        return None
    return [SyntaxIssue(message, where, where)]
