"""Text to syntax tree, with error recovery at the next operation.

:func:`parse` runs the LALR parser of :mod:`tile_lsp.grammar.loader` over a
text.  On a syntax error it records a :class:`SyntaxIssue` (message in MLIR's
words where MLIR has them, span of the offending token: :mod:`.syntax_errors`), blanks the
statement that failed (replacing its characters by spaces, newlines kept, so
every offset stays valid) and parses again, so that one typo does not hide
the rest of the file.  The tree returned is that of the last, successful,
parse; ``issues`` lists every error in text order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from tile_lsp.grammar.lexical import STRINGS_AND_COMMENTS
from tile_lsp.grammar.loader import get_parser
from tile_lsp.grammar.parser_state import SyntaxIssue
from tile_lsp.grammar.syntax_errors import at_end, blank, describe_error, line_bounds, met_offset

# Trees that end a statement: what lies below them on the parser's stack is
# not part of the operation being parsed.
_STATEMENT_BOUNDARIES = frozenset({"operation", "block_label", "attr_alias_def", "type_alias_def", "block"})
# Lark's lists of finished statements (``operation*`` of a region body, ``top_item*``)
_STATEMENT_LISTS = ("__region_body_", "__start_")

_VALUE_NAME = re.compile(r"(%[A-Za-z0-9_$.\-]+)(?:#[0-9]+)?")


@dataclass
class ParseResult:
    """The tree of the (possibly repaired) text, the repaired text and the syntax issues."""

    tree: Tree | None
    text: str
    issues: list[SyntaxIssue]
    #: the text ended inside regions or lists that recovery closed: its structure (which op holds which
    #: region) is a guess, MLIR's parser having met the end of the file there
    closed: bool = False

    def blanked_values(self, original: str) -> frozenset[str]:
        """Names (``%x``, result numbers dropped) of the SSA values written in the parts of ``original``
        that recovery blanked.

        A use of such a value that the IR builder cannot resolve is a
        consequence of the recovery, not an error of the text: MLIR, which
        stops at the first syntax error, never reports it (issue 15,
        "recovery cascades").
        """
        if not self.issues or self.text == original:
            return NO_NAMES
        names = set()
        for m in _VALUE_NAME.finditer(original):
            if self.text[m.start()] != original[m.start()]:
                names.add(m.group(1))
        return frozenset(names) if names else NO_NAMES


#: the empty set of names, shared (an empty ``frozenset()`` is a new 216-byte object in CPython 3.11,
#: and every statement of a big file keeps one)
NO_NAMES: frozenset[str] = frozenset()


def _partial_statement(err: UnexpectedInput) -> tuple[int, int] | None:
    """Span ``[first, last)`` of the tokens of the operation being parsed when ``err`` happened.

    Walks the LALR value stack down from the top until a finished statement
    or the ``{`` that opened the enclosing region (a ``{`` after which the
    parser accepts block labels); ``None`` when the error is at a statement's
    first token.
    """
    ip = getattr(err, "interactive_parser", None)
    if ip is None:
        return None
    state = ip.parser_state
    values, states = state.value_stack, state.state_stack
    table = state.parse_conf.parse_table.states
    first = last = None
    for i in range(len(values) - 1, -1, -1):
        item = values[i]
        if isinstance(item, Tree):
            if item.data in _STATEMENT_BOUNDARIES or str(item.data).startswith(_STATEMENT_LISTS):
                break
            if getattr(item.meta, "empty", True):
                continue
            lo, hi = item.meta.start_pos, item.meta.end_pos
        elif isinstance(item, Token):
            if item.type == "LBRACE" and i + 1 < len(states) and "CARET_ID" in table.get(states[i + 1], {}):
                break
            if item.start_pos is None:
                continue
            lo, hi = item.start_pos, item.end_pos
        else:
            continue
        first = lo if first is None else min(first, lo)
        last = hi if last is None else max(last, hi)
    return None if first is None else (first, last)


def _repair_span(text: str, err: UnexpectedInput, issue: SyntaxIssue) -> tuple[int, int]:
    """The span to blank after ``err``: the lines of the operation that failed.

    The operation starts at its first token (from the parser's stack); it ends
    with the line of the offending token, unless that token opens a new line
    after the operation's last token, in which case the operation was cut
    short and the next line is left alone.
    """
    if isinstance(err, UnexpectedToken) and err.token.type != "$END" and err.token.start_pos is not None:
        offset = err.token.start_pos
    elif isinstance(err, UnexpectedCharacters):
        offset = err.pos_in_stream
    else:
        offset = issue.start
    offset = min(offset, max(len(text) - 1, 0))
    line_start, line_end = line_bounds(text, offset)
    partial = _partial_statement(err)
    if partial is None:
        return _over_regions(text, line_start, _continuation_end(text, line_end))
    first, last = partial
    start = line_bounds(text, first)[0]
    at_line_start = text[line_start:offset].strip() == ""
    if at_line_start and last <= line_start:
        if _statement_may_end(err):
            # the operation above is complete: the line that starts with the offending token is the
            # error (blanking the operation would leave the token after the one before it, and so on up)
            return _over_regions(text, line_start, _continuation_end(text, line_end))
        return _over_regions(text, start, line_bounds(text, max(last - 1, first))[1])
    return _over_regions(text, start, _continuation_end(text, line_end))


def _statement_may_end(err: UnexpectedInput) -> bool:
    """Whether the operation being parsed at ``err`` could end there (its block's ``}`` or the end of the
    text may come next)."""
    expected = getattr(err, "expected", None) or ()
    return "RBRACE" in expected or "$END" in expected


def _depth(text: str) -> int:
    """Net bracket depth (``(``, ``[``, ``{``) of ``text``, strings and comments skipped."""
    code = _STRINGS_AND_COMMENTS.sub("", text)
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _over_regions(text: str, start: int, end: int) -> tuple[int, int]:
    """Extend the blanked lines ``[start, end)`` over the regions they open and leave open.

    An operation whose failing lines hold the ``{`` of its region (``%r =
    for ... {``, ``(%lhs: ..., %rhs: ...) {`` of a reduce) is blanked up to
    the line that closes it: its ``}`` at the indentation of its first line,
    every line between indented deeper.  Blanking the header alone would
    read the region's operations as operations of the enclosing block and
    its ``}`` as the end of the enclosing region, a cascade of errors that
    are not the user's (MLIR itself stops at the first error).  Where the
    lines below are not indented that way (a ``{`` being typed), the span is
    left as it was.
    """
    depth = _depth(text[start:end])
    if depth <= 0:
        return start, end
    first_line = text[start:line_bounds(text, start)[1]]
    indent = len(first_line) - len(first_line.lstrip())
    pos = end
    while depth > 0 and pos < len(text):
        nxt = text.find("\n", pos + 1)
        nxt = len(text) if nxt == -1 else nxt
        line = text[pos + 1:nxt]
        stripped = line.strip()
        if stripped and not stripped.startswith("//"):
            column = len(line) - len(line.lstrip())
            if column < indent or (column == indent and not stripped.startswith("}")):
                return start, end
            depth += _depth(line)
        pos = nxt
    if depth != 0:
        return start, end
    return start, _continuation_end(text, pos)


# A line starting with one of these continues the statement above it.
_CONTINUATION = re.compile(r"[ \t]*(?:[:,)\]>=\[(<{]|->)")


def _continuation_end(text: str, line_end: int) -> int:
    """Extend a statement ending at ``line_end`` over the lines that continue it."""
    end = line_end
    while end < len(text):
        nxt_start = end + 1
        nxt_end = text.find("\n", nxt_start)
        nxt_end = len(text) if nxt_end == -1 else nxt_end
        if not _CONTINUATION.match(text, nxt_start, nxt_end):
            break
        end = nxt_end
    return end


_STRINGS_AND_COMMENTS = STRINGS_AND_COMMENTS
_CLOSER = {"(": ")", "[": "]", "{": "}"}


def brackets_balance(text: str) -> bool:
    """Whether every ``(``, ``[`` and ``{`` of ``text`` is closed by its match (strings and comments skipped)."""
    stack: list[str] = []
    for ch in re.sub(r"[^()\[\]{}]+", "", _STRINGS_AND_COMMENTS.sub("", text)):
        if ch in _CLOSER:
            stack.append(_CLOSER[ch])
        elif not stack or stack.pop() != ch:
            return False
    return not stack


def _unclosed(text: str) -> str:
    """The brackets that would close what ``text`` leaves open (``"}"``, ``")}"``...), or ``""``.

    Strings and comments are skipped; an unbalanced closing bracket gives ``""``.
    """
    stack: list[str] = []
    for ch in re.sub(r"[^()\[\]{}]+", "", _STRINGS_AND_COMMENTS.sub("", text)):
        if ch in _CLOSER:
            stack.append(_CLOSER[ch])
        elif not stack or stack.pop() != ch:
            return ""
    return "".join(reversed(stack))


def parse(text: str, *, max_issues: int = 50, outer_ops: tuple[str, ...] = ()) -> ParseResult:
    """Parse ``text``; never raises on bad input.

    Returns the tree of the text with each failing statement blanked, and the
    syntax issues in order of discovery (the first is MLIR's).  After
    ``max_issues`` issues parsing stops and ``tree`` is ``None``.
    ``outer_ops`` names the ops whose regions hold ``text`` when it is a
    statement parsed apart from them (the editor's incremental analysis): what
    MLIR reports for an unknown op name depends on them (its default dialect).
    """
    parser = get_parser()
    issues: list[SyntaxIssue] = []
    work = text
    closed = False
    while True:
        try:
            tree = parser.parse(work)
            return ParseResult(tree, work, issues, closed)
        except UnexpectedInput as err:
            described = describe_error(err, work, outer_ops)
            met = met_offset(err, work)
            for d in described:
                d.met = met
            issue = described[0]
            if any((d.message, d.start) == (i.message, i.start) for d in described for i in issues):
                # recovery removed the statement before and met the same token again: one failure
                described = []
            if at_end(err) and any(i.blanked is not None and not work[i.blanked[1]:].strip() for i in issues):
                # the text ends right after a statement recovery removed: where MLIR would report
                # what is missing at the end depends on that statement, so say nothing of it
                described = []
            issues.extend(described)
            if at_end(err) or _partial_statement(err) is None:
                for d in described:
                    d.needs_context = True
            if len(issues) >= max_issues:
                break
            if not closed and at_end(err):
                # the text ends inside an operation, a region or a list: drop the unfinished operation
                # (its first line on), close what remains open on a line of its own and go on, rather
                # than blanking the statements above one by one
                partial = _partial_statement(err)
                cut = work if partial is None else blank(work, line_bounds(work, partial[0])[0], len(work))
                closers = _unclosed(cut)
                if closers:
                    if partial is not None:
                        for d in described:
                            d.blanked = (line_bounds(work, partial[0])[0], len(work))
                    closed = True
                    work = cut + "\n" + closers
                    continue
            start, end = _repair_span(work, err, issue)
            if work[start:end].strip() == "":
                # nothing left to remove on that line: drop everything from the error on
                start, end = issue.start, len(work)
                if work[start:end].strip() == "":
                    break
            for d in described:
                d.blanked = (start, end)
            work = blank(work, start, end)
        except RecursionError:
            issues.append(SyntaxIssue("nesting too deep", 0, 0))
            break
    return ParseResult(None, work, issues, closed)
