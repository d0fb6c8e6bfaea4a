"""Text to syntax tree, with error recovery at the next operation.

:func:`parse` runs the LALR parser of :mod:`tile_lsp.grammar.loader` over a
text.  On a syntax error it records a :class:`SyntaxIssue` (message in MLIR's
words where MLIR has them, span of the offending token), blanks the
statement that failed (replacing its characters by spaces, newlines kept, so
every offset stays valid) and parses again, so that one typo does not hide
the rest of the file.  The tree returned is that of the last, successful,
parse; ``issues`` lists every error in text order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.parsers.lalr_analysis import Reduce

from tile_lsp.dialect.custom_formats import ENUM_KEYWORD_DIRECTIVES
from tile_lsp.grammar.loader import get_parser

# Grammar rule of a missing enum keyword -> the message of NVIDIA's parser.
_MISSING_ENUM = {rule: message for rule, _, message in ENUM_KEYWORD_DIRECTIVES.values()}

# Terminal names -> the spelling MLIR uses in "expected ..." messages.
_PUNCT = {
    "COLON": ":", "COMMA": ",", "EQUAL": "=", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]",
    "LBRACE": "{", "RBRACE": "}", "LESSTHAN": "<", "MORETHAN": ">", "QMARK": "?", "ARROW": "->",
    "STAR": "*", "PLUS": "+",
}


@dataclass
class SyntaxIssue:
    """A syntax error: ``message`` and the code-point span ``[start, end)`` in the text."""

    message: str
    start: int
    end: int


@dataclass
class ParseResult:
    """The tree of the (possibly repaired) text, the repaired text and the syntax issues."""

    tree: Tree | None
    text: str
    issues: list[SyntaxIssue]


# When several punctuation tokens may come next, MLIR's parsers report the one
# that is required (the optional ones were tried first): in this order.
_PUNCT_PRIORITY = (":", "->", "=", ",", ")", "]", ">", "}", "(", "[", "<", "{")


def _expected_message(expected: set[str], token: Token | None) -> str:
    names = {e for e in expected if not e.startswith("__")}
    puncts = sorted((_PUNCT[e] for e in names if e in _PUNCT), key=_PUNCT_PRIORITY.index)
    if token is not None and token.type == "$END":
        found = "end of file"
    else:
        found = None
    if "VALUE_ID" in names and len(names) <= 2:
        return "expected SSA operand"
    if len(names) == 1 and puncts:
        return f"expected '{puncts[0]}'"
    if names and all(n in ("BARE_ID",) for n in names):
        return "expected valid keyword"
    if "AT_ID" in names and len(names) == 1:
        return "expected valid '@'-identifier for symbol name"
    if "INT" in names and len(names) <= 2:
        return "expected integer value"
    if found:
        return "unexpected end of file"
    if puncts:
        return f"expected '{puncts[0]}'"
    return "unexpected token"


def _current_op(err: UnexpectedToken) -> str | None:
    """Full name of the custom op being parsed when ``err`` happened, if any."""
    ip = err.interactive_parser
    if ip is None:
        return None
    for value in reversed(ip.parser_state.value_stack):
        if isinstance(value, Tree) and isinstance(value.data, str) and value.data.startswith("opname_"):
            name = str(value.children[0])
            return name if "." in name else f"cuda_tile.{name}"
        if isinstance(value, Tree) and value.data in ("operation", "region"):
            return None
    return None


def _completed_rule(err: UnexpectedToken, token_type: str, value: str) -> str | None:
    """The rule a token of ``token_type`` would complete at the error, probing a copy of the parser.

    LALR states after the probe token reduce by a single rule; its name tells
    which part of the op's format was expected (e.g. ``enum_signedness``).
    """
    ip = err.interactive_parser
    if ip is None:
        return None
    try:
        probe = ip.copy()
        probe.feed_token(Token(token_type, value))
        state = probe.parser_state.state_stack[-1]
        actions = probe.parser_state.parse_conf.parse_table.states[state]
    except Exception:  # the probe token does not fit either
        return None
    for action, arg in actions.values():
        if action is Reduce:
            return arg.origin.name
    return None


def _end_of_previous_token(text: str, offset: int) -> int:
    """Offset just past the token before ``offset``, skipping blanks and ``//`` comments backwards."""
    i = offset
    while i > 0:
        if text[i - 1].isspace():
            i -= 1
            continue
        line_start = text.rfind("\n", 0, i) + 1
        comment = _comment_start(text[line_start:i])
        if comment is None:
            break
        i = line_start + comment
    return i


def _comment_start(line: str) -> int | None:
    """Index of a ``//`` comment in ``line`` outside string literals, or ``None``."""
    in_string = False
    k = 0
    while k < len(line):
        ch = line[k]
        if in_string:
            if ch == "\\":
                k += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif line.startswith("//", k):
            return k
        k += 1
    return None


def _describe(err: UnexpectedInput, text: str) -> list[SyntaxIssue]:
    """The issues MLIR would print for ``err`` (usually one; NVIDIA's enum parsers print two)."""
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = set(err.expected)
        if tok.type == "$END":
            pos = len(text.rstrip())
            return [SyntaxIssue(_expected_message(expected, tok), pos, pos)]
        start = tok.start_pos if tok.start_pos is not None else 0
        end = tok.end_pos if tok.end_pos is not None else start + len(str(tok))
        op = _current_op(err)
        if op is not None and "BARE_ID" in expected:
            rule = _completed_rule(err, "BARE_ID", "x")
            if rule in _MISSING_ENUM:
                return [SyntaxIssue(f"custom op '{op}' expected valid keyword", start, end),
                        SyntaxIssue(f"custom op '{op}' {_MISSING_ENUM[rule]}", start, end)]
        if op is not None and "AT_ID" in expected and not ({"VALUE_ID", "COLON"} & expected):
            return [SyntaxIssue(f"custom op '{op}' expected valid '@'-identifier for symbol name", start, end)]
        if op is not None and {"INT_TYPE", "FLOAT_TYPE"} <= expected and "COLON" not in expected:
            # a cuda_tile type was required (custom<CudaTileType> parses a keyword first)
            return [SyntaxIssue(f"custom op '{op}' expected valid keyword", start, end)]
        message = _expected_message(expected, tok)
        if message.startswith("expected '"):
            # MLIR's emitWrongTokenError: a missing punctuation is reported at
            # the end of the previous token, not at the unexpected one
            start = end = _end_of_previous_token(text, start)
        return [SyntaxIssue(message, start, end)]
    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream
        ch = text[pos] if pos < len(text) else ""
        if ch == '"':
            return [SyntaxIssue("expected '\"' in string literal", pos, pos + 1)]
        if ch == "-" and "INT_TYPE" in (err.allowed or ()):
            return [SyntaxIssue("expected valid keyword", pos, pos + 1)]
        return [SyntaxIssue("unexpected character", pos, pos + 1)]
    if isinstance(err, UnexpectedEOF):
        pos = len(text.rstrip())
        return [SyntaxIssue("unexpected end of file", pos, pos)]
    return [SyntaxIssue(str(err).splitlines()[0], 0, 0)]


_STATEMENT_START = re.compile(r"\s*(%|\^|\"|\}|[A-Za-z_])")


def _line_bounds(text: str, offset: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, (len(text) if end == -1 else end)


def _blank(text: str, start: int, end: int) -> str:
    segment = re.sub(r"[^\n]", " ", text[start:end])
    return text[:start] + segment + text[end:]


def _repair_span(text: str, err: UnexpectedInput, issue: SyntaxIssue) -> tuple[int, int]:
    """The span to blank for an error: the statement that was being parsed.

    If the offending token is the first of its line, the broken statement is
    the one before it (a statement cut short), so the previous non-blank
    line is blanked; otherwise the offending line is.
    """
    offset = min(issue.start, max(len(text) - 1, 0))
    line_start, line_end = _line_bounds(text, offset)
    before = text[line_start:offset]
    if before.strip() == "" and line_start > 0:
        prev = line_start - 1
        while prev > 0:
            ps, pe = _line_bounds(text, prev - 1 if text[prev] == "\n" else prev)
            if text[ps:pe].strip() and not text[ps:pe].strip().startswith("//"):
                return ps, pe
            prev = ps - 1
            if prev < 0:
                break
    return line_start, line_end


def parse(text: str, *, max_issues: int = 50) -> ParseResult:
    """Parse ``text``; never raises on bad input.

    Returns the tree of the text with each failing statement blanked, and the
    syntax issues in order of discovery (at most ``max_issues``; after that
    the rest of the text is blanked and ``tree`` covers what parsed).
    """
    parser = get_parser()
    issues: list[SyntaxIssue] = []
    work = text
    for _ in range(max_issues + 1):
        try:
            tree = parser.parse(work)
            issues.sort(key=lambda i: i.start)
            return ParseResult(tree, work, issues)
        except UnexpectedInput as err:
            described = _describe(err, work)
            issue = described[0]
            issues.extend(described)
            start, end = _repair_span(work, err, issue)
            if work[start:end].strip() == "":
                # nothing left to remove on that line: drop everything from the error on
                start, end = issue.start, len(work)
                if work[start:end].strip() == "":
                    break
            work = _blank(work, start, end)
        except RecursionError:
            issues.append(SyntaxIssue("nesting too deep", 0, 0))
            break
    issues.sort(key=lambda i: i.start)
    return ParseResult(None, work, issues)
