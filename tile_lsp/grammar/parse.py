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

from tile_lsp.dialect.custom_formats import CUSTOM_FORMATS, ENUM_KEYWORD_DIRECTIVES
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.registry import lookup
from tile_lsp.grammar.formats import attr_grammar
from tile_lsp.grammar.loader import get_parser

# Grammar rule of a missing enum keyword -> the message of NVIDIA's parser.
_MISSING_ENUM = {rule: message for rule, _, message in ENUM_KEYWORD_DIRECTIVES.values()}
# Enum rules -> (enum, message); ``enum_keyword`` is ODS's generic one.
_ENUM_RULES = {rule: (enum, message) for rule, enum, message in ENUM_KEYWORD_DIRECTIVES.values()}
_ENUM_RULES["enum_keyword"] = ("", "")

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
    #: the parser met the error at the first token of a statement or at the end of the text: what it
    #: reports then depends on what comes before or after (the statement before, in the same block)
    needs_context: bool = False


@dataclass
class ParseResult:
    """The tree of the (possibly repaired) text, the repaired text and the syntax issues."""

    tree: Tree | None
    text: str
    issues: list[SyntaxIssue]


# When several punctuation tokens may come next, MLIR's parsers report the one
# that is required (the optional ones were tried first): in this order.
# Punctuation not listed (``?``, ``*``, ``+``) comes after, in text order.
_PUNCT_PRIORITY = (":", "->", "=", ",", ")", "]", ">", "}", "(", "[", "<", "{")


def _punct_rank(p: str) -> tuple[int, str]:
    """Sort key of a punctuation token in :data:`_PUNCT_PRIORITY` order; unlisted ones last."""
    return (_PUNCT_PRIORITY.index(p) if p in _PUNCT_PRIORITY else len(_PUNCT_PRIORITY), p)


# What may stand, optionally, where an operand is required (keywords such as
# ``weak``, attributes, a ``,`` of an optional group): MLIR's parsers try them
# first, so a token that is none of them is "expected SSA operand".
_OPTIONAL_BEFORE_OPERAND = frozenset({"VALUE_ID", "BARE_ID", "BANG_ID", "COMMA"})


def _expected_message(expected: set[str], token: Token | None) -> str:
    names = {e for e in expected if not e.startswith("__")}
    puncts = sorted((_PUNCT[e] for e in names if e in _PUNCT), key=_punct_rank)
    if token is not None and token.type == "$END":
        found = "end of file"
    else:
        found = None
    if "VALUE_ID" in names and (len(names) <= 2 or names <= _OPTIONAL_BEFORE_OPERAND):
        # the custom parser tried its optional keywords/attributes, then
        # ``parseOperand`` (MLIR ``OperationParser::parseSSAUse``) failed
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


def _op_of(value: object) -> str | None:
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


def _current_op(err: UnexpectedInput) -> tuple[str, int] | None:
    """Full name of the custom op being parsed at ``err`` and its index on the value stack."""
    ip = getattr(err, "interactive_parser", None)
    if ip is None:
        return None
    values = ip.parser_state.value_stack
    for i in range(len(values) - 1, -1, -1):
        value = values[i]
        if isinstance(value, Tree) and value.data in ("operation", "region", "block_label"):
            return None
        name = _op_of(value)
        if name is not None:
            return name, i
    return None


def _enum_rule_of(ip, index: int) -> str | None:
    """The enum rule (``enum_keyword``...) the keyword at value-stack ``index`` belongs to."""
    state = ip.parser_state
    value = state.value_stack[index]
    if isinstance(value, Tree):
        return value.data if value.data in _ENUM_RULES else None
    if isinstance(value, Token) and value.type == "BARE_ID" and index + 1 < len(state.state_stack):
        actions = state.parse_conf.parse_table.states.get(state.state_stack[index + 1], {})
        for action, arg in actions.values():
            if action is Reduce and arg.origin.name in _ENUM_RULES:
                return arg.origin.name
    return None


def _invalid_enum_before(err: UnexpectedInput, op: str, op_index: int) -> SyntaxIssue | None:
    """An enum keyword of the current op already read but not a case of its enum.

    MLIR's parsers check each keyword as they read it, so such a keyword is
    reported before the later syntax error Lark found.
    """
    ip = err.interactive_parser
    opdef = lookup(op)
    if opdef is None:
        return None
    generic_attrs = _declarative_enum_attrs(opdef)
    seen_generic = 0
    values = ip.parser_state.value_stack
    for i in range(op_index + 1, len(values)):
        rule = _enum_rule_of(ip, i)
        if rule is None:
            continue
        value = values[i]
        tok = value.children[0] if isinstance(value, Tree) else value
        word = str(tok)
        if rule == "enum_keyword":
            if seen_generic >= len(generic_attrs):
                continue
            attr, enum = generic_attrs[seen_generic]
            seen_generic += 1
            cases = _cases(enum)
            if cases and word not in cases:
                message = (f"custom op '{op}' expected string or keyword containing one of the following enum "
                           f"values for attribute '{attr}' [{', '.join(cases)}]")
                return SyntaxIssue(message, tok.start_pos, tok.end_pos)
            continue
        enum, message = _ENUM_RULES[rule]
        cases = _cases(enum)
        if cases and word not in cases:
            return SyntaxIssue(f"custom op '{op}' {message}", tok.start_pos, tok.end_pos)
    return None


def _declarative_enum_attrs(opdef) -> list[tuple[str, str]]:
    """``(attribute, enum)`` of the bare enum keywords of an ODS-format op, in format order."""
    if opdef.name in CUSTOM_FORMATS or opdef.format is None:
        return []  # a C++ parser with its own wording
    out = []
    for name in re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", opdef.format):
        a = opdef.attribute(name)
        if a is not None and a.kind.startswith("enum:") and attr_grammar(a.kind) == "enum_keyword":
            out.append((name, a.kind[5:]))
    return out


def _cases(enum: str) -> tuple[str, ...]:
    e = ENUMS.get(enum)
    return tuple(c[0] for c in e.cases) if e is not None else ()


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


_TYPE_START = re.compile(r"(!cuda_tile\.)?\b(tile|ptr|tensor_view|partition_view|strided_view|gather_scatter_view)<")


def _written_with_bang(text: str, pos: int) -> bool:
    """Whether the cuda_tile type around ``pos`` was written in the full ``!cuda_tile.`` form."""
    line_start = text.rfind("\n", 0, pos) + 1
    for m in reversed(list(_TYPE_START.finditer(text, line_start, pos))):
        segment = text[m.end() - 1:pos]
        if segment.count("<") > segment.count(">"):  # pos is still inside this type
            return m.group(1) is not None
    return False


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
        current = _current_op(err)
        op = current[0] if current is not None else None
        if current is not None:
            earlier = _invalid_enum_before(err, *current)
            if earlier is not None:
                return [earlier]
        if "STRIDES" in expected and len(expected) == 1:
            return [SyntaxIssue("unexpected token after element type in 0-d tensor_view", start, end)]
        if {"INT", "QUESTION"} <= expected and "VALUE_ID" not in expected:
            return [SyntaxIssue("expected either 64-bit integer or question mark", start, end)]
        if op is not None and {"INT", "VALUE_ID"} <= expected:
            return [SyntaxIssue(f"custom op '{op}' expected either integer or SSA value", start, end)]
        if "STRING" in expected and expected <= {"STRING", "BARE_ID", "BANG_ID"}:
            pos = _end_of_previous_token(text, start)
            return [SyntaxIssue("expected attribute value", pos, pos)]
        if op is not None and "BARE_ID" in expected:
            rule = _completed_rule(err, "BARE_ID", "x")
            if rule in _MISSING_ENUM:
                return [SyntaxIssue(f"custom op '{op}' expected valid keyword", start, end),
                        SyntaxIssue(f"custom op '{op}' {_MISSING_ENUM[rule]}", start, end)]
        if op is not None and "AT_ID" in expected and not ({"VALUE_ID", "COLON"} & expected):
            return [SyntaxIssue(f"custom op '{op}' expected valid '@'-identifier for symbol name", start, end)]
        if {"INT_TYPE", "FLOAT_TYPE"} <= expected and "COLON" not in expected:
            # a type was required: its parser wants a keyword first; NVIDIA's short-form
            # type parser runs inside the custom op's parser (hence the prefix)
            prefix = f"custom op '{op}' " if op is not None and not _written_with_bang(text, start) else ""
            if prefix or tok.type == "INT":
                return [SyntaxIssue(prefix + "expected valid keyword", start, end)]
        message = _expected_message(expected, tok)
        if message.startswith("expected '") or message == "expected SSA operand":
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
            # a negative dimension: MLIR's type parser wants the element type keyword here
            current = _current_op(err)
            prefix = f"custom op '{current[0]}' " if current and not _written_with_bang(text, pos) else ""
            return [SyntaxIssue(prefix + "expected valid keyword", pos, pos)]
        return [SyntaxIssue("unexpected character", pos, pos + 1)]
    if isinstance(err, UnexpectedEOF):
        pos = len(text.rstrip())
        return [SyntaxIssue("unexpected end of file", pos, pos)]
    return [SyntaxIssue(str(err).splitlines()[0], 0, 0)]


def _line_bounds(text: str, offset: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, (len(text) if end == -1 else end)


def _blank(text: str, start: int, end: int) -> str:
    segment = re.sub(r"[^\n]", " ", text[start:end])
    return text[:start] + segment + text[end:]


# Trees that end a statement: what lies below them on the parser's stack is
# not part of the operation being parsed.
_STATEMENT_BOUNDARIES = frozenset({"operation", "block_label", "attr_alias_def", "type_alias_def", "block"})
# Lark's lists of finished statements (``operation*`` of a region body, ``top_item*``)
_STATEMENT_LISTS = ("__region_body_", "__start_")


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
    line_start, line_end = _line_bounds(text, offset)
    partial = _partial_statement(err)
    if partial is None:
        return _over_regions(text, line_start, _continuation_end(text, line_end))
    first, last = partial
    start = _line_bounds(text, first)[0]
    at_line_start = text[line_start:offset].strip() == ""
    if at_line_start and last <= line_start:
        if _statement_may_end(err):
            # the operation above is complete: the line that starts with the offending token is the
            # error (blanking the operation would leave the token after the one before it, and so on up)
            return _over_regions(text, line_start, _continuation_end(text, line_end))
        return _over_regions(text, start, _line_bounds(text, max(last - 1, first))[1])
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
    first_line = text[start:_line_bounds(text, start)[1]]
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


def _at_end(err: UnexpectedInput) -> bool:
    """Whether ``err`` is the end of the text coming too early."""
    return isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END")


_STRINGS_AND_COMMENTS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*')
_CLOSER = {"(": ")", "[": "]", "{": "}"}


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


def parse(text: str, *, max_issues: int = 50) -> ParseResult:
    """Parse ``text``; never raises on bad input.

    Returns the tree of the text with each failing statement blanked, and the
    syntax issues in order of discovery (the first is MLIR's).  After
    ``max_issues`` issues parsing stops and ``tree`` is ``None``.
    """
    parser = get_parser()
    issues: list[SyntaxIssue] = []
    work = text
    closed = False
    while True:
        try:
            tree = parser.parse(work)
            return ParseResult(tree, work, issues)
        except UnexpectedInput as err:
            described = _describe(err, work)
            issue = described[0]
            issues.extend(described)
            if _at_end(err) or _partial_statement(err) is None:
                for d in described:
                    d.needs_context = True
            if len(issues) >= max_issues:
                break
            if not closed and _at_end(err):
                closers = _unclosed(work)
                if closers:
                    # the text ends inside regions or lists: close them after its last token and go on,
                    # rather than blanking the unfinished statements one by one
                    closed = True
                    at = _end_of_previous_token(work, len(work))
                    work = work[:at] + closers + work[at:]
                    continue
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
    return ParseResult(None, work, issues)
