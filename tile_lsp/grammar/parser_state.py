"""The LALR parser's state at a syntax error, as the error messages read it.

:func:`value_stack` and :func:`current_op` tell what the parser has read (the
custom op whose format it is in, the tokens since), :func:`state_after` and
:func:`accepted` which terminals really fit next (Lark's look-ahead sets merge
contexts), and :func:`wrong_token_offset` where MLIR reports a token it did not
want.  :class:`SyntaxIssue` is what :mod:`.syntax_errors` and its helpers return.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lark import Token, Tree
from lark.exceptions import UnexpectedInput
from lark.parsers.lalr_analysis import Reduce

from tile_lsp.dialect.registry import lookup
from tile_lsp.grammar.lexical import STRING


@dataclass
class SyntaxIssue:
    """A syntax error: ``message`` and the code-point span ``[start, end)`` in the text."""

    message: str
    start: int
    end: int
    #: the parser met the error at the first token of a statement or at the end of the text: what it
    #: reports then depends on what comes before or after (the statement before, in the same block)
    needs_context: bool = False
    #: the span ``[start, end)`` recovery blanked after this error (the statement that failed), if any
    blanked: tuple[int, int] | None = None
    #: where the parser met the token it could not take (the end of the text for its end)
    met: int | None = None


def op_of(value: object) -> str | None:
    """The op name a stack item stands for: a reduced ``opname_*`` tree or an op-name keyword token."""
    if isinstance(value, Tree) and isinstance(value.data, str) and value.data.startswith("opname_"):
        name = str(value.children[0])
    elif isinstance(value, Token) and value.type not in ("VALUE_ID", "BARE_ID", "STRING", "INT", "FLOAT"):
        name = str(value)
        if lookup(name) is None:
            return None
    else:
        return None
    return name if "." in name else f"cuda_tile.{name}"


def value_stack(err: UnexpectedInput) -> list:
    """The parser's value stack at ``err`` (its top last); empty when ``err`` carries no parser."""
    ip = getattr(err, "interactive_parser", None)
    return ip.parser_state.value_stack if ip is not None else []


def current_op(err: UnexpectedInput) -> tuple[str, int] | None:
    """Full name of the custom op being parsed at ``err`` and its index on the value stack."""
    values = value_stack(err)
    for i in range(len(values) - 1, -1, -1):
        value = values[i]
        if isinstance(value, Tree) and value.data in ("operation", "region", "block_label"):
            return None
        name = op_of(value)
        if name is not None:
            return name, i
    return None


def wrong_token_offset(text: str, offset: int, eof: bool = False) -> int:
    """Where MLIR's ``Parser::emitWrongTokenError`` reports an error met at ``offset``.

    Rule (MLIR ``mlir/lib/AsmParser/Parser.cpp``, ``emitWrongTokenError``):
    at the end of the file the location first moves back one character;
    then the text before it is trimmed of blanks and tabs and, while it ends
    with a line break, of that break, of the part of the line above from a
    ``//`` on (found naively, as MLIR does, even inside a string) and of the
    blanks before; the error is reported just past what remains, or at the
    original location when nothing does.  So a missing token is reported at
    the end of the previous one, even across blank and comment lines, and an
    error at the end of a text whose last character ends a token is reported
    *at* that last character.
    """
    loc = max(offset - 1, 0) if eof else offset
    buf = text[:loc]
    while True:
        buf = buf.rstrip(" \t")
        if not buf:
            return loc
        if buf[-1] not in "\n\r":
            return len(buf)
        buf = buf[:-1]
        newline = max(buf.rfind("\n"), buf.rfind("\r"))
        line = buf[newline:] if newline >= 0 else buf
        comment = line.find("//")
        if comment >= 0:
            buf = buf[:len(buf) - (len(line) - comment)]


def state_after(err: UnexpectedInput, name: str) -> int | None:
    """The LALR state the parser at ``err`` would be in after shifting a ``name`` terminal,
    ``None`` when that terminal does not fit there.

    Replays the parse table on a copy of the state stack alone (reductions, then the shift):
    Lark's own ``InteractiveParser.copy`` deep-copies every tree on the value stack.
    """
    ip = getattr(err, "interactive_parser", None)
    if ip is None:
        return None
    state = ip.parser_state
    return shift(state.parse_conf.parse_table.states, list(state.state_stack), name)


def shift(table, stack: list, name: str) -> int | None:
    """Reduce ``stack`` (LALR states, modified in place) as the terminal ``name`` asks, then the state
    its shift goes to; ``None`` when ``name`` does not fit."""
    for _ in range(10000):
        action = table.get(stack[-1], {}).get(name)
        if action is None:
            return None
        kind, arg = action
        if kind is not Reduce:
            return arg
        size = len(arg.expansion)
        if size:
            del stack[-size:]
        goto = table.get(stack[-1], {}).get(arg.origin.name)
        if goto is None:
            return None
        stack.append(goto[1])
    return None


def accepted(err: UnexpectedInput, names) -> set[str]:
    """The terminals among ``names`` that the parser at ``err`` really accepts next.

    Lark's ``expected`` is the look-ahead set of an LALR state, which merges the contexts that
    share it (after a type, what may follow any type); replaying each terminal on the parser's
    stack keeps those that fit this context.
    """
    return {name for name in names if not name.startswith("$") and state_after(err, name) is not None}


_CLOSERS = {">": "<", "]": "[", ")": "(", "}": "{"}
_STRING_RE = re.compile(STRING)


def bracket_end(text: str, start: int) -> tuple[int, str | None, int]:
    """Scan the bracketed text opened by the ``<``, ``[``, ``(`` or ``{`` at ``start`` as MLIR's
    ``Parser::parseDialectSymbolBody`` scans a pretty dialect body: nested brackets of all four kinds,
    ``->`` skipped, strings lexed whole.

    Returns ``(end, None, start)`` when it closes (``end`` just past the closer); else ``(where, char,
    at)``: the innermost unbalanced opener ``char`` (a closer of another kind met at ``where``, or
    the end of the text), or ``'"'`` for a string that does not end (at ``where``), and ``at`` where
    MLIR reports an unbalanced body: its current token, the last string the scan lexed, else ``start``.
    """
    nested: list[str] = []
    at = start
    i = start
    while True:
        if i >= len(text):
            return i, nested[-1], at
        c = text[i]
        i += 1
        if c in "<[({":
            nested.append(c)
        elif c == "-" and text.startswith(">", i):
            i += 1
        elif c in _CLOSERS:
            if nested[-1] != _CLOSERS[c]:
                return i - 1, nested[-1], at
            nested.pop()
            if not nested:
                return i, None, start
        elif c == '"':
            m = _STRING_RE.match(text, i - 1)
            if m is None:
                return i - 1, '"', start
            at = i - 1
            i = m.end()
