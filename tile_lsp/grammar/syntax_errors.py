"""MLIR's syntax errors from Lark's: which message NVIDIA's parser prints, and where.

:func:`describe_error` turns an ``UnexpectedInput`` of the LALR parser into
the :class:`SyntaxIssue` MLIR's parser (``mlir/lib/AsmParser``) and NVIDIA's
custom parsers (``CudaTile.cpp``) report for the same text: "expected ...",
"custom op 'x' is unknown", the enum keyword messages, dense literal and
dimension list errors, at the token MLIR stands on.  :mod:`.parse` drives the
parser and its recovery; this module only names what went wrong, reading the
parser's state through :mod:`.parser_state`; the assume predicates' errors are
in :mod:`.assume_errors`, a location's in :mod:`.location_errors`.
"""

from __future__ import annotations

import functools
import re

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.parsers.lalr_analysis import Reduce

from tile_lsp.analysis.ir.directives import DIRECTIVES, EnumKeywordDirective
from tile_lsp.dialect.custom_formats import (
    ASSUME_PREDICATE_WORDS,
    CUSTOM_FORMATS,
    DECLARATIVE_ENUMS,
    MSG_GENERATED_ENUM,
    MSG_DENSE_ELEMENT_TYPE,
    MSG_UNKNOWN_ASSUME_PREDICATE,
    NULL_TYPE,
    VIEW_KEYWORDS,
)
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.registry import lookup
from tile_lsp.grammar.formats import attr_grammar
from tile_lsp.grammar.lexical import STRINGS_AND_COMMENTS, comment_start, next_token_offset
from tile_lsp.grammar.loader import get_parser
from tile_lsp.grammar.assume_errors import assume_issue, not_a_predicate
from tile_lsp.grammar.location_errors import location_issue
from tile_lsp.grammar.parser_state import (
    SyntaxIssue,
    accepted,
    bracket_end,
    current_op,
    shift,
    state_after,
    value_stack,
    wrong_token_offset,
)



_KEYWORD_DIRECTIVES = [d for d in DIRECTIVES.values() if isinstance(d, EnumKeywordDirective)]
# Grammar rule of a missing enum keyword -> the message of NVIDIA's parser.
_MISSING_ENUM = {d.rule: d.message for d in _KEYWORD_DIRECTIVES}
# Enum rules -> (enum, message); ``enum_keyword`` is ODS's generic one.
_ENUM_RULES = {d.rule: (d.enum, d.message) for d in _KEYWORD_DIRECTIVES}
_ENUM_RULES["enum_keyword"] = ("", "")

# Terminal names -> the spelling MLIR uses in "expected ..." messages.
_PUNCT = {
    "COLON": ":", "COMMA": ",", "EQUAL": "=", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]",
    "LBRACE": "{", "RBRACE": "}", "LESSTHAN": "<", "MORETHAN": ">", "QMARK": "?", "ARROW": "->",
    "STAR": "*", "PLUS": "+",
}









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
    if puncts:
        return f"expected '{puncts[0]}'"
    if found:
        return "unexpected end of file"
    return "unexpected token"


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
    if opdef.name in VIEW_KEYWORDS:
        return _invalid_view_keyword(values, op, op_index, VIEW_KEYWORDS[opdef.name])
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


def _leading_keywords(values: list, start: int):
    """The keyword tokens read first from ``values[start]`` on: bare words, ``enum_keyword`` trees, an
    optional group (``og_*``) holding one; up to the first other item."""
    for value in values[start:]:
        while isinstance(value, Tree) and value.data.startswith("og_") and len(value.children) == 1:
            value = value.children[0]
        if isinstance(value, Tree) and value.data == "enum_keyword":
            value = value.children[0]
        if not (isinstance(value, Token) and value.type == "BARE_ID"):
            return
        yield value


def _invalid_view_keyword(values: list, op: str, op_index: int, keywords) -> SyntaxIssue | None:
    """A view op's leading keyword (ordering, then the optional scope) that its C++ parser rejects as
    it reads it (:data:`~tile_lsp.dialect.custom_formats.VIEW_KEYWORDS`), in its words."""
    previous = None
    for tok, (_, enum, message, after_weak) in zip(_leading_keywords(values, op_index + 1), keywords):
        word = str(tok)
        if after_weak is not None and previous == "weak":
            return SyntaxIssue(f"custom op '{op}' " + after_weak.format(kw=word), tok.start_pos, tok.start_pos)
        if word not in _cases(enum):
            return SyntaxIssue(f"custom op '{op}' " + message.format(kw=word), tok.start_pos, tok.start_pos)
        previous = word
    return None


def _missing_generated_enum(err: UnexpectedToken, rule: str | None, op: str, op_index: int, text: str,
                            eof: bool) -> SyntaxIssue | None:
    """A required enum keyword of a memory op's declarative format, missing (no keyword there).

    MLIR's generated enum parser (mlir-tblgen OpFormatGen, ``parseOptionalKeywordOrString``
    then the error) says "expected string or keyword containing one of the following enum
    values for attribute '<attr>' [<cases>]" at the token found (the end of the text at its
    end).  Which attribute: the enum keywords of the op's format in text order
    (:data:`~tile_lsp.dialect.custom_formats.DECLARATIVE_ENUMS`), after those already read.
    """
    if rule != "enum_keyword":
        return None
    attrs = DECLARATIVE_ENUMS.get(op.removeprefix("cuda_tile."))
    if attrs is None:
        return None
    ip = err.interactive_parser
    read = sum(1 for i in range(op_index + 1, len(ip.parser_state.value_stack))
               if _enum_rule_of(ip, i) == "enum_keyword")
    if read >= len(attrs):
        return None
    attr, enum, _ = attrs[read]
    at = len(text) if eof else err.token.start_pos
    return SyntaxIssue(f"custom op '{op}' " + MSG_GENERATED_ENUM.format(attr=attr, cases=", ".join(_cases(enum))),
                       at, at)


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
    """The rule a token of ``token_type`` would complete at the error (see :func:`_probe`).

    LALR states after the probe token reduce by a single rule; its name tells
    which part of the op's format was expected (e.g. ``enum_signedness``).
    """
    return _probe(err, [token_type])


# What MLIR's lexer reads as a bare identifier or a keyword (its integer types excepted): at the start of an
# operation such a word is taken for the name of a custom op, so it is not a wrong token there.
_NAME_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_INT_TYPE_WORD = re.compile(r"[su]?i[0-9]+")


def _probe(err: UnexpectedToken, names: list[str]) -> str | None:
    """The rule a parser at ``err`` would reduce right after shifting the terminals ``names``.

    ``None`` when a terminal does not fit.  Asks "what would these tokens
    complete here?" (an attribute dictionary, the results of an op), by
    replaying the parse table on the state stack (:func:`state_after`).
    """
    ip = getattr(err, "interactive_parser", None)
    if ip is None:
        return None
    state = None
    stack = list(ip.parser_state.state_stack)
    table = ip.parser_state.parse_conf.parse_table.states
    for name in names:
        state = shift(table, stack, name)
        if state is None:
            return None
        stack.append(state)
    for action, arg in table.get(state, {}).values():
        if action is Reduce:
            return arg.origin.name
    return None


def _in_hint_dictionary(err: UnexpectedToken, text: str, start: int) -> str | None:
    """Inside the ``{...}`` of an ``optimization_hints=<arch = {...}>`` entry when ``err`` happened:
    ``"name"`` after its ``{`` or a ``,`` (an attribute name was expected), ``"close"`` after an
    entry (``,`` or ``}`` was), else ``None``.

    The grammar reads the hints as a balanced token soup; NVIDIA's parser
    (``OptimizationHintsAttr::parse``, cuda-tile ``AttrDefs``) reads each
    architecture's value as a dictionary attribute, with MLIR's messages
    (``Parser::parseAttributeDict``).
    """
    values = value_stack(err)
    for i in range(len(values) - 1, -1, -1):
        item = values[i]
        if isinstance(item, Token) and item.type == "LBRACE":
            if not any(isinstance(v, Token) and v.type == "OPTIMIZATION_HINTS" for v in values[max(i - 4, 0):i]):
                return None
            # the soup's trees drop its commas: read the character before the error instead
            return "name" if text[:start].rstrip()[-1:] in ("{", ",") else "close"
        if isinstance(item, Token) and item.type in ("RBRACE", "LESSTHAN", "MORETHAN"):
            return None
    return None


def _accepts_op(err: UnexpectedToken) -> bool:
    """Whether an operation may start at ``err``: the parser takes an op name there.

    Probed with ``make_token`` (an op without operands or attributes), which
    no attribute or type body accepts, unlike a quoted name or ``%``.
    """
    return state_after(err, "MAKE_TOKEN") is not None


def _structural_issue(err: UnexpectedToken, text: str, start: int, end: int, eof: bool) -> SyntaxIssue | None:
    """MLIR's message for a token that breaks the structure of the text, or ``None``.

    Rules of MLIR's ``OperationParser`` and ``Parser`` (``mlir/lib/AsmParser/Parser.cpp``,
    ``AttributeParser.cpp``), each decided by what the parser accepts at the error:

    * where an operation may start (an SSA result or a generic op's quoted
      name is accepted), a token that is neither a name nor ``%`` nor ``}``
      (a number, punctuation, the end of the file inside a region):
      "expected operation name in quotes" (``parseOperation``; reported as a
      wrong token: :func:`wrong_token_offset`);
    * after the result names of an operation, no ``=``: "expected '=' after
      SSA name" (wrong token);
    * in an attribute dictionary, after ``{`` or ``,``, a token that cannot
      name an attribute: "expected attribute name"; after an entry, neither
      ``,`` nor ``}``: "expected '}' in attribute dictionary" (both wrong
      tokens) (``parseAttributeDict``; also in the dictionaries of
      ``optimization_hints``, :func:`_in_hint_dictionary`);
    * where a region must open: "expected '{' to begin a region" (wrong token) (``parseRegion``).
    """
    expected = set(err.expected)
    tok = err.token
    hint_dict = _in_hint_dictionary(err, text, start)
    if hint_dict == "name":
        pos = wrong_token_offset(text, start, eof)
        return SyntaxIssue("expected attribute name", pos, pos)
    if hint_dict == "close":
        pos = wrong_token_offset(text, start, eof)
        return SyntaxIssue("expected '}' in attribute dictionary", pos, pos)
    word = "" if eof else str(tok)
    is_name = _NAME_WORD.fullmatch(word) is not None and _INT_TYPE_WORD.fullmatch(word) is None
    if "STRING" in expected and not is_name and _accepts_op(err):
        pos = wrong_token_offset(text, start, eof)
        return SyntaxIssue("expected operation name in quotes", pos, pos)
    if "EQUAL" in expected and _probe(err, ["EQUAL"]) == "op_results":
        pos = wrong_token_offset(text, start, eof)
        return SyntaxIssue("expected '=' after SSA name", pos, pos)
    if expected == {"VALUE_ID"} and _probe(err, ["VALUE_ID", "EQUAL"]) == "op_results":
        # after a `,` of the result list (MLIR ``parseSSADefOrUseAndType`` via ``parseSSAUse``)
        pos = wrong_token_offset(text, start, eof)
        return SyntaxIssue("expected valid ssa identifier", pos, pos)
    if "COMMA" in expected and _probe(err, ["RBRACE"]) == "attr_dict":
        pos = wrong_token_offset(text, start, eof)
        return SyntaxIssue("expected '}' in attribute dictionary", pos, pos)
    if "STRING" in expected and "VALUE_ID" not in expected \
            and _probe(err, ["STRING", "RBRACE"]) == "attr_dict":
        pos = wrong_token_offset(text, start, eof)
        return SyntaxIssue("expected attribute name", pos, pos)
    if "LBRACE" in expected and _opens_region(err):
        pos = wrong_token_offset(text, start, eof)
        return SyntaxIssue("expected '{' to begin a region", pos, pos)
    return None


#: The short forms of an assume predicate the grammar spells out, by their keyword's terminal.
_DENSE_READ_TOKENS = frozenset({"LSQB", "COMMA", "INT", "FLOAT", "BOOL", "STRING", "BARE_ID"})


#: element type words of a dense literal read by the op's integer parser / by MLIR's float parser
_INTEGER_WORD = re.compile(r"i[0-9]+")
_FLOAT_WORD = re.compile(r"(?:bf|tf|f)[0-9]+[A-Za-z0-9]*")


def _dense_element_issue(err: UnexpectedToken, text: str, eof: bool) -> list[SyntaxIssue] | None:
    """MLIR's error when the text ends where a dense literal's element is expected, or ``None``.

    After ``<T:``, ``[`` or ``,`` in the literal of ``constant`` or ``global``
    (``dense_typed``), NVIDIA's literal parser (CudaTile.cpp, ``parseNestedArrayWithShape``)
    reads an element with the op's ``parseInteger`` for an integer type, reported twice
    ("custom op '<op>' expected integer value"), or with MLIR's float parser for a float type
    ("expected floating point literal", no prefix); at the end of the file the error sits at
    the end of the text.  Elsewhere the grammar lets the literal be empty and the builder
    reports it (:mod:`tile_lsp.analysis.syntax.parse_rules.dense`).
    """
    if not eof:
        return None
    found = _dense_element_context(err)
    if found is None:
        return None
    word, op = found
    at = len(text)
    if _INTEGER_WORD.fullmatch(word):
        message = f"custom op '{op}' expected integer value"
        return [SyntaxIssue(message, at, at), SyntaxIssue(message, at, at)]
    if _FLOAT_WORD.fullmatch(word):
        return [SyntaxIssue("expected floating point literal", at, at)]
    return None


def _dense_minus_issue(err: UnexpectedToken, text: str, pos: int) -> list[SyntaxIssue] | None:
    """MLIR's errors for a ``-`` followed by no number where a dense literal's element is expected
    (``<f32: -inf>``), or ``None``: the literal parser takes the minus, then wants a float ("expected
    floating point literal") or an integer ("expected integer value", then the op's "custom op '<op>'
    expected integer value" at the minus) right after it, as cuda-tile-opt reports."""
    found = _dense_element_context(err)
    if found is None:
        return None
    word, op = found
    after = pos + 1
    end = after + len(re.match(r"[A-Za-z0-9_$.]*", text[after:]).group(0))
    if _INTEGER_WORD.fullmatch(word):
        return [SyntaxIssue("expected integer value", after, end),
                SyntaxIssue(f"custom op '{op}' expected integer value", pos, after)]
    if _FLOAT_WORD.fullmatch(word):
        return [SyntaxIssue("expected floating point literal", after, end)]
    return None


def _dense_element_context(err: UnexpectedToken) -> tuple[str, str] | None:
    """(element type word, op name) where ``err`` stands at an element of the literal of a
    ``constant`` or ``global`` (``dense_typed``: after ``<T:``, ``[`` or ``,``), else ``None``."""
    values = value_stack(err)
    if not values or not (isinstance(values[-1], Token) and values[-1].type in ("COLON", "LSQB", "COMMA")):
        return None
    i = len(values) - 1
    while i >= 0 and not (isinstance(values[i], Token) and values[i].type == "COLON"):
        value = values[i]
        if not (isinstance(value, Token) and value.type in _DENSE_READ_TOKENS
                or isinstance(value, Tree) and value.data in ("dense_literal", "dense_list")):
            return None
        i -= 1
    if i < 2 or not (isinstance(values[i - 2], Token) and values[i - 2].type == "LESSTHAN"):
        return None
    if i >= 3 and isinstance(values[i - 3], Token) and values[i - 3].type == "ARRAY_KW":
        return None  # array<T: ...> has its own parser
    element = values[i - 1]
    word = str(element) if isinstance(element, Token) else (
        str(element.children[0]) if isinstance(element, Tree) and element.data == "scalar_type" else "")
    current = current_op(err)
    return None if current is None else (word, current[0])


_DIMENSION = re.compile(r"[ \t\r\n]*(?:\?|[0-9]+)")
_BLANKS = re.compile(r"[ \t\r\n]*")


def _dimension_list_issue(err: UnexpectedToken, text: str, start: int, op: str | None) -> SyntaxIssue | None:
    """MLIR's error for a shaped type's dimension list that our lexer could not take whole.

    Our lexer reads a dimension list as one token (``4x8x``, followed by the element type);
    when it could not (``tile<4x2`` at the end of the text, ``tile<4x4 f32>``), the parser meets
    the first dimension alone.  MLIR's ``Parser::parseDimensionListRanked`` reads dimensions
    (an integer or ``?``) each followed by an ``x`` (``parseXInDimensionList``: "expected 'x' in
    dimension list", a wrong token), then the element type, which must start with a keyword
    ("expected valid keyword" at the token found, through the custom op's parser when it reads
    a short-form type).  ``None`` when the list reads well that way (another error).
    """
    if err.token.type not in ("INT", "QUESTION") or "DIMS_X" not in err.expected:
        return None
    i = start
    while True:
        m = _DIMENSION.match(text, i)
        if m is None or m.end() == i:
            break
        i = m.end()
        after = _BLANKS.match(text, i).end()
        if after >= len(text) or text[after] != "x":
            pos = wrong_token_offset(text, after, eof=after >= len(text))
            return SyntaxIssue("expected 'x' in dimension list", pos, pos)
        i = after + 1
    at = _BLANKS.match(text, i).end()
    if at < len(text) and (text[at].isalpha() or text[at] == "_"):
        return None
    prefix = _type_prefix(op, text, start) or ""
    return SyntaxIssue(prefix + "expected valid keyword", at, at)


_CLOSERS = {"RSQB": "]", "MORETHAN": ">", "RPAR": ")", "RBRACE": "}"}


def _list_end(err: UnexpectedToken) -> str | None:
    """The error for a list that neither goes on nor ends: "expected ']'" (or the list's closer).

    Where both ``,`` and a closing bracket fit, the ``,`` is optional: MLIR's
    ``parseCommaSeparatedList`` (and an ODS optional group) tries it first, then requires the
    closer.  The strides of a ``tensor_view`` type are NVIDIA's own list, whose message runs on:
    "expected ']'strides array" (TensorViewType::parse, Types.cpp).  ``None`` unless exactly one
    closer fits.
    """
    closers = accepted(err, sorted(name for name in err.expected if name in _CLOSERS))
    if len(closers) != 1:
        return None
    closer = _CLOSERS[next(iter(closers))]
    if closer == "]" and _in_type_strides(err):
        return "expected ']'strides array"
    return f"expected '{closer}'"


def _in_type_strides(err: UnexpectedInput, opening: bool = False) -> bool:
    """Whether ``err`` happened in the ``strides=[...]`` list of a ``tensor_view`` type (``opening``:
    right after its ``strides=``)."""
    values = err.interactive_parser.parser_state.value_stack
    if opening:
        kinds = [v.type if isinstance(v, Token) else None for v in values[-3:]]
        if kinds != ["COMMA", "STRIDES", "EQUAL"]:
            return False
        return any(isinstance(v, Token) and str(v) in ("tensor_view", "!cuda_tile.tensor_view")
                   for v in values[-8:-3])
    i = len(values) - 1
    while i >= 0 and (isinstance(values[i], Tree) and values[i].data in ("stride_list", "stride")
                      or isinstance(values[i], Token) and values[i].type in ("INT", "QUESTION", "COMMA")):
        i -= 1
    kinds = [v.type if isinstance(v, Token) else None for v in values[max(i - 2, 0):i + 1]]
    return kinds == ["STRIDES", "EQUAL", "LSQB"]


def _word_read_before_end(err: UnexpectedToken, text: str) -> list[SyntaxIssue] | None:
    """Errors of a custom op's parser on the last word it read, when the text ends right after it.

    MLIR's parsers check a keyword as they read it, so these come before the end of the text:
    the element type of a typed dense literal that names no type (``constant <f``: "unknown
    type: f", then NVIDIA's element-type message, where the next token would be: the end of
    the text; ``parseDenseTypedElementsAttr``) and an assume predicate keyword that names no
    predicate (at the keyword; ``parseAssumePredicate``).  Elsewhere the builder reports them.
    """
    values = value_stack(err)
    if len(values) < 2 or not isinstance(values[-1], Token) or values[-1].type != "BARE_ID":
        return None
    current = current_op(err)
    if current is None:
        return None
    op, index = current
    word, before = values[-1], values[-2]
    prefix = f"custom op '{op}' "
    if index == len(values) - 2 and op == "cuda_tile.assume" and str(word) not in ASSUME_PREDICATE_WORDS:
        return [SyntaxIssue(prefix + MSG_UNKNOWN_ASSUME_PREDICATE.format(word=word), word.start_pos, word.end_pos)]
    if isinstance(before, Token) and before.type == "LESSTHAN" \
            and state_after(err, "COLON") is not None and op in ("cuda_tile.constant", "cuda_tile.global"):
        end = len(text)
        return [SyntaxIssue(f"{prefix}unknown type: {word}", end, end),
                SyntaxIssue(prefix + MSG_DENSE_ELEMENT_TYPE.format(NULL_TYPE), end, end)]
    return None


def _end_of_previous_token(text: str, offset: int) -> int:
    """Offset just past the token before ``offset``, skipping blanks and ``//`` comments backwards."""
    i = offset
    while i > 0:
        if text[i - 1].isspace():
            i -= 1
            continue
        line_start = text.rfind("\n", 0, i) + 1
        comment = comment_start(text[line_start:i])
        if comment is None:
            break
        i = line_start + comment
    return i


_TYPE_START = re.compile(r"(!cuda_tile\.)?\b(tile|ptr|tensor_view|partition_view|strided_view|gather_scatter_view)<")


def _written_with_bang(text: str, pos: int) -> bool:
    """Whether a cuda_tile type around ``pos`` was written in the full ``!cuda_tile.`` form.

    Inside such a type (``!cuda_tile.partition_view<..., tensor_view<...>>``), the nested short
    forms are read by the dialect's type parser too, not by the custom op's.
    """
    line_start = text.rfind("\n", 0, pos) + 1
    for m in _TYPE_START.finditer(text, line_start, pos):
        segment = text[m.end() - 1:pos]
        if m.group(1) is not None and segment.count("<") > segment.count(">"):  # pos is still inside it
            return True
    return False


# ---------------------------------------------------------------- names: ops, types and keywords
# MLIR's lexer (mlir/lib/AsmParser/Lexer.cpp, lexBareIdentifierOrKeyword): a bare identifier or
# keyword; one spelled like an integer type (``i32``, ``si8``, ``ui16``) is an ``inttype`` token.
_MLIR_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_MLIR_INT_TYPE = re.compile(r"(?:[su]?i)[0-9]+\Z")
# Dialects that cuda-tile-opt loads (its note "Available dialects: builtin, cuda_tile").
_LOADED_DIALECTS = ("builtin", "cuda_tile")


def _is_mlir_keyword(word: str) -> bool:
    """Whether MLIR lexes ``word`` as a bare identifier or keyword (not an integer type)."""
    return bool(_MLIR_WORD.match(word)) and not (len(word) > 1 and _MLIR_INT_TYPE.match(word))


def _literal_terminals() -> dict[str, str]:
    """Terminal name -> literal text, for the grammar's keyword terminals (``"tile"``...)."""
    cached = getattr(_literal_terminals, "_cache", None)
    if cached is None:
        cached = {t.name: t.pattern.value for t in get_parser().terminals
                  if t.pattern.type == "str" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", t.pattern.value)}
        _literal_terminals._cache = cached
    return cached


def _op_name_terminals() -> frozenset[str]:
    """Names of the terminals that spell an op name (``negi``, ``cuda_tile.negi``...)."""
    cached = getattr(_op_name_terminals, "_cache", None)
    if cached is None:
        cached = frozenset(name for name, lit in _literal_terminals().items() if lookup(lit) is not None)
        _op_name_terminals._cache = cached
    return cached


def _at_operation_name(err: UnexpectedInput, expected: set[str]) -> bool:
    """Whether the parser at ``err`` expected the name of an operation (it then takes any op name).

    A state that accepts a handful of op-name keywords for another reason (a format keyword
    that happens to be an op's name) does not count, nor one whose look-ahead set holds op
    names only through LALR state merging.
    """
    names = expected & _op_name_terminals()
    if len(names) < 20:
        return False
    return bool(accepted(err, sorted(names)[:3]))


def _region_owners(err: UnexpectedInput) -> list[str | None]:
    """The ops whose regions enclose the error, outermost first: their name as written for a
    custom op, ``None`` for a generic op (``"dialect.op"(...) ({...})``)."""
    ip = getattr(err, "interactive_parser", None)
    if ip is None:
        return []
    state = ip.parser_state
    values, states = state.value_stack, state.state_stack
    table = state.parse_conf.parse_table.states
    owners: list[str | None] = []
    looking = False
    closed = 0  # `}` on the stack not yet reduced with their `{`
    for i in range(len(values) - 1, -1, -1):
        item = values[i]
        if isinstance(item, Token) and item.type == "RBRACE":
            closed += 1
            continue
        if isinstance(item, Token) and item.type == "LBRACE":
            if closed:
                closed -= 1
            elif i + 1 < len(states) and "CARET_ID" in table.get(states[i + 1], {}):
                looking = True  # an open region's `{`: the op below it owns the region
            continue
        if not looking:
            continue
        if isinstance(item, Token) and item.type == "STRING" and i + 1 < len(values) \
                and isinstance(values[i + 1], Token) and values[i + 1].type == "LPAR":
            owners.append(None)
            looking = False
            continue
        if isinstance(item, Tree) and isinstance(item.data, str) and item.data.startswith("opname_"):
            owners.append(str(item.children[0]))
            looking = False
        elif isinstance(item, Token) and item.type in _op_name_terminals():
            owners.append(str(item))
            looking = False
    owners.reverse()
    return owners


def default_dialect(owners: list[str | None]) -> str:
    """The dialect MLIR prepends to an op name without prefix inside the regions of ``owners``.

    MLIR ``OperationParser::parseCustomOperation`` pushes the default dialect of each custom op
    whose regions it parses (``OpAsmOpInterface::getDefaultDialect``); the top level's is
    ``builtin``, generic ops push nothing.  NVIDIA's ops with regions (``Ops.td``: module, entry,
    for, if, loop, reduce, scan, via ``CudaTile_DefaultDialect``) name ``cuda_tile``; builtin's
    ``module`` names ``builtin``.

    An owner whose name does not resolve that way but names a cuda_tile op (``entry`` in a
    function parsed apart from its ``cuda_tile.module``, as the editor does) is that op, as for
    the rest of the analysis: MLIR itself would have stopped at that owner's name.
    """
    dialect = "builtin"
    for name in owners:
        if name is None:
            continue
        full = name if "." in name else f"{dialect}.{name}"
        if lookup(full) is None and lookup(name) is not None:
            full = lookup(name).full_name
        prefix = full.split(".", 1)[0]
        dialect = prefix if prefix in _LOADED_DIALECTS else ""
    return dialect


def unknown_operation_message(name: str, default: str) -> str:
    """MLIR's message for a custom operation name that names no registered op.

    Source: MLIR ``OperationParser::parseCustomOperationName`` and ``parseCustomOperation``
    (mlir/lib/AsmParser/Parser.cpp): a name without a ``.`` is tried in the default dialect
    (``default``); a name whose dialect is not loaded gets "Dialect `d' not found for custom op",
    otherwise "custom op '...' is unknown", adding "(tried '...' as well)" when the default
    dialect was prepended.
    """
    full = name if "." in name else f"{default}.{name}"
    dialect = full.split(".", 1)[0]
    tried = f" (tried '{full}' as well)" if full != name else ""
    if dialect not in _LOADED_DIALECTS:
        return f"Dialect `{dialect}' not found for custom op '{name}' {tried}"
    return f"custom op '{name}' is unknown{tried}"


def _unknown_operation(err: UnexpectedToken, text: str, outer_ops: tuple[str, ...] = ()) -> SyntaxIssue | None:
    """The error MLIR reports for a token met where an operation's name was expected.

    ``outer_ops``: the ops (names as written) whose regions hold the whole text parsed, outermost
    first, when it is a statement parsed apart from them (see :func:`parse`).
    """
    tok = err.token
    word = str(tok)
    start = tok.start_pos
    if tok.type in ("STRING", "VALUE_ID", "CARET_ID", "HASH_ID", "BANG_ID", "RBRACE"):
        return None  # Lark expected it elsewhere; not a name
    if not _is_mlir_keyword(word):
        # MLIR OperationParser::parseOperation: neither a keyword nor a string
        pos = _end_of_previous_token(text, start)
        return SyntaxIssue("expected operation name in quotes", pos, pos)
    if lookup(word) is not None:
        return None  # a registered op the grammar does not take here: another error
    owners = list(outer_ops) + _region_owners(err)
    issue = SyntaxIssue(unknown_operation_message(word, default_dialect(owners)), start, tok.end_pos)
    # parsed alone, a statement does not know the regions around it
    issue.needs_context = not owners
    return issue


def _type_prefix(op: str | None, text: str, pos: int) -> str | None:
    """``"custom op 'X' "`` for a short-form type read by custom op X's parser, ``""`` inside a
    ``!cuda_tile.`` type (read by the dialect's type parser), ``None`` for neither."""
    if _written_with_bang(text, pos):
        return ""
    return f"custom op '{op}' " if op is not None else None


def _attribute_type(err: UnexpectedInput) -> bool:
    """Whether the type expected at ``err`` is that of an attribute (``0.0 : f32``,
    ``dense<...> : type``), read by MLIR's own type parser rather than NVIDIA's."""
    values = value_stack(err)
    if len(values) < 2 or not (isinstance(values[-1], Token) and values[-1].type == "COLON"):
        return False
    before = values[-2]
    if isinstance(before, Token) and before.type in ("INT", "FLOAT", "BOOL"):
        return True
    if isinstance(before, Token) and before.type == "MORETHAN":
        depth = 0
        for i in range(len(values) - 2, 0, -1):
            v = values[i]
            if isinstance(v, Token) and v.type == "MORETHAN":
                depth += 1
            elif isinstance(v, Token) and v.type == "LESSTHAN":
                depth -= 1
                if depth == 0:
                    prev = values[i - 1]
                    return isinstance(prev, Token) and prev.type in ("DENSE", "ARRAY_KW")
    return False


#: Where a dialect type or attribute in pretty form opens its body: ``!cuda_tile.tile<``,
#: ``#cuda_tile.div_by<`` (a dialect namespace, a dot, the mnemonic).
_PRETTY_START = re.compile(r"[!#][A-Za-z_][A-Za-z0-9_$]*\.[A-Za-z0-9_$.]*<")


def _signature_issue(err: UnexpectedToken, text: str, start: int, eof: bool) -> SyntaxIssue | None:
    """An argument of a function signature (``entry``, ``testing$func``) that is not ``%name: type``.

    Source: MLIR ``function_interface_impl::parseFunctionArgumentList``: after a named argument and
    a ``,``, another name is required ("expected SSA identifier", at the token met); the first
    argument without a name is read as a type, which NVIDIA's type parser wants to start with a
    keyword ("expected valid keyword").  Both are prefixed with the custom op's name.
    """
    values = value_stack(err)
    if len(values) < 3 or err.token.type == "VALUE_ID":
        return None
    top = values[-1]
    if not isinstance(top, Token) or top.type not in ("COMMA", "LPAR"):
        return None
    i = len(values) - 1
    while i > 0 and not (isinstance(values[i], Token) and values[i].type == "LPAR"):
        if not (isinstance(values[i], Tree) and (values[i].data == "block_arg"
                                                 or values[i].data.startswith("__block_arg_list"))
                or isinstance(values[i], Token) and values[i].type == "COMMA"):
            return None
        i -= 1
    before = values[i - 1] if i > 0 else None
    if not (isinstance(before, Tree) and before.data == "fmt_symbol"):
        return None
    current = current_op(err)
    if current is None or current[0] not in ("cuda_tile.entry", "cuda_tile.testing$func"):
        return None
    at = len(text) if eof else start
    if top.type == "COMMA":
        return SyntaxIssue(f"custom op '{current[0]}' expected SSA identifier", at, at)
    if err.token.type in ("INT", "FLOAT", "STRING", "COMMA", "COLON", "LBRACE", "$END"):
        return SyntaxIssue(f"custom op '{current[0]}' expected valid keyword", at, at)
    return None


def _unnamed_module(err: UnexpectedToken, text: str, start: int, eof: bool,
                    outer_ops: tuple[str, ...] = ()) -> SyntaxIssue | None:
    """``cuda_tile.module`` followed by anything but its ``@name``: NVIDIA's ModuleOp::parse reads the
    symbol name first ("expected valid '@'-identifier for symbol name", at the token met).  A bare
    ``module`` is cuda_tile's only inside a cuda_tile op (else it is builtin's, whose name is optional);
    ``outer_ops``: the ops around the text parsed (:func:`describe_error`)."""
    values = value_stack(err)
    if not values or err.token.type == "AT_ID":
        return None
    top = values[-1]
    if isinstance(top, Tree) and top.data.startswith("opname_"):
        written = str(top.children[0])
    elif isinstance(top, Token) and top.type not in ("BARE_ID", "STRING", "VALUE_ID"):
        written = str(top)  # the op name's keyword, not reduced yet
    else:
        return None
    if written not in ("cuda_tile.module", "module"):
        return None
    if written == "module" and default_dialect(list(outer_ops) + _region_owners(err)) != "cuda_tile":
        return None
    at = len(text) if eof else start
    return SyntaxIssue("custom op 'cuda_tile.module' expected valid '@'-identifier for symbol name", at, at)


@functools.lru_cache(maxsize=1)
def _unbalanced_pretty_bodies(text: str) -> tuple[tuple[int, str, int], ...]:
    """``(offset of the '<', unbalanced character, where MLIR reports it)`` of each pretty dialect body
    of ``text`` that does not balance (:func:`~tile_lsp.grammar.parser_state.bracket_end`), in text order; bodies in comments and
    strings aside.  Cached for the last text only: the syntax errors of one text come one after the
    other, and a document's older versions are not kept alive."""
    blanked = STRINGS_AND_COMMENTS.sub(lambda m: " " * len(m.group()), text)
    found = []
    pos = 0
    while True:
        m = _PRETTY_START.search(blanked, pos)
        if m is None:
            return tuple(found)
        lt = m.end() - 1
        end, unbalanced, at = bracket_end(text, lt)
        if unbalanced not in (None, '"'):  # an unterminated string is the lexer's error, elsewhere
            found.append((lt, unbalanced, at))
        pos = max(end, lt + 1)


def _pretty_body_issue(text: str, offset: int) -> SyntaxIssue | None:
    """MLIR's "unbalanced '<' character in pretty dialect name" when a pretty dialect body
    (``!cuda_tile.tile<...``) that does not balance opens before ``offset``, where Lark failed: MLIR
    scans each body whole as it meets it (``parseDialectSymbolBody``) and reports at its current token
    (the ``<``, or the last string it lexed in the body)."""
    for lt, unbalanced, at in _unbalanced_pretty_bodies(text):
        if lt >= offset:
            return None
        return SyntaxIssue(f"unbalanced '{unbalanced}' character in pretty dialect name", at, at)
    return None


#: MLIR's builtin types written ``keyword<...>`` (mlir/lib/AsmParser/TypeParser.cpp): without the
#: ``<`` their parser says "expected '<' in tensor type".
_BUILTIN_ANGLE_TYPES = frozenset({"tensor", "vector", "memref", "complex", "tuple"})


def _unknown_type(tok: Token, op: str | None, text: str) -> SyntaxIssue | None:
    """A keyword read where a cuda_tile type was required that names no type.

    Source: NVIDIA ``parseCudaTileType`` (lib/Dialect/CudaTile/IR/Types.cpp): after the
    ``token`` keyword and MLIR's builtin types, the keyword is looked up among the dialect's
    type mnemonics; none matching, "unknown type: <keyword>" is reported at the token after it.
    A builtin type keyword without its ``<`` fails in MLIR's type parser instead.
    """
    word = str(tok)
    if not _is_mlir_keyword(word):
        return None
    prefix = _type_prefix(op, text, tok.start_pos)
    if prefix is None:
        return None
    pos = next_token_offset(text, tok.end_pos)
    if word in _BUILTIN_ANGLE_TYPES:
        # a builtin type: MLIR's type parser wants its '<' (parseToken, reported as a wrong token)
        where = wrong_token_offset(text, pos, pos >= len(text))
        return SyntaxIssue(f"expected '<' in {word} type", where, where)
    return SyntaxIssue(f"{prefix}unknown type: {word}", pos, pos)


def _open_tensor_view_shape(err: UnexpectedInput) -> bool | None:
    """Inside a ``tensor_view<...>`` type at ``err``: whether it was given a shape (``?x4x...``);
    ``None`` when not inside one."""
    values = value_stack(err)
    for i in range(len(values) - 1, -1, -1):
        item = values[i]
        if isinstance(item, Token) and str(item) in ("tensor_view", "!cuda_tile.tensor_view"):
            after = [v for v in values[i + 1:] if isinstance(v, Token)]
            depth = sum(v.type == "LESSTHAN" for v in after) - sum(v.type == "MORETHAN" for v in after)
            if depth <= 0:
                return None
            return any(v.type == "DIMS_X" for v in after)
    return None


def _after_comma(err: UnexpectedInput) -> bool:
    """Whether the token before the error was a ``,`` (in a 0-d tensor_view: after its element type)."""
    values = value_stack(err)
    return bool(values) and isinstance(values[-1], Token) and values[-1].type == "COMMA"


def _punctuation_named(expected: set[str]) -> set[str]:
    """``expected`` with Lark's anonymous names of punctuation terminals (``__ANON_0`` for ``->``)
    replaced by the names :data:`_PUNCT` knows."""
    cached = getattr(_punctuation_named, "_cache", None)
    if cached is None:
        by_text = {text: name for name, text in _PUNCT.items()}
        cached = {t.name: by_text[t.pattern.value] for t in get_parser().terminals
                  if t.name.startswith("__") and t.pattern.type == "str" and t.pattern.value in by_text}
        _punctuation_named._cache = cached
    return {cached.get(name, name) for name in expected}


def _keyword_or_region(err: UnexpectedToken, expected: set[str], op: str | None, text: str) -> SyntaxIssue | None:
    """What an op's parser reports when the next token fits no keyword or region it accepts.

    Of the terminals the parser really accepts (:func:`accepted`): when only keywords, ``,``
    (a list that may go on) and an attribute dictionary's ``{`` remain, the optional ones were tried first
    (MLIR ``parseOptionalKeyword``/``parseOptionalComma``/``parseOptionalAttrDict``) and the
    error is the required one: a single keyword gives "expected '<keyword>'" at the token
    (``AsmParser::parseKeyword``, mlir/include/mlir/IR/OpImplementation.h).  When a region may
    come next, whatever else may come first is optional: "expected '{' to begin a region" at the
    end of the token before (MLIR ``OperationParser::parseRegion``, emitWrongTokenError).
    """
    fits = accepted(err, expected - {"BARE_ID"} - _op_name_terminals())
    literals = _literal_terminals()
    keywords = {n for n in fits if n in literals and n not in _op_name_terminals()}
    region = "LBRACE" in fits and _opens_region(err)
    tok = err.token
    if region:
        # what else fits here comes before the region, so is optional
        pos = _end_of_previous_token(text, tok.start_pos)
        return SyntaxIssue("expected '{' to begin a region", pos, pos)
    rest = fits - keywords - {"COMMA", "LBRACE"}  # a `{` here opens an optional attribute dictionary
    if not rest and len(keywords) == 1:
        return _missing_keyword(tok, literals[next(iter(keywords))], op, text)
    return None


def _opens_region(err: UnexpectedInput) -> bool:
    """Whether a ``{`` fed to the parser at ``err`` opens a region (block labels may follow)."""
    after = state_after(err, "LBRACE")
    if after is None:
        return False
    return "CARET_ID" in err.interactive_parser.parser_state.parse_conf.parse_table.states.get(after, {})


def _missing_keyword(tok: Token, word: str, op: str | None, text: str) -> SyntaxIssue:
    """A required keyword not found: MLIR ``AsmParser::parseKeyword`` (mlir/include/mlir/IR/
    OpImplementation.h) reports "expected '<keyword>'" at the token found instead (the end of
    the text at its end); through a custom op's parser (an ODS format, or a short-form type it
    reads) with the op's prefix."""
    start, end = (len(text), len(text)) if tok.type == "$END" else (tok.start_pos, tok.end_pos)
    prefix = _type_prefix(op, text, start) or ""
    return SyntaxIssue(f"{prefix}expected '{word}'", start, end)


def describe_error(err: UnexpectedInput, text: str, outer_ops: tuple[str, ...] = ()) -> list[SyntaxIssue]:
    """The issues MLIR would print for ``err`` (usually one; NVIDIA's enum parsers print two).

    ``outer_ops``: see :func:`parse`."""
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = set(err.expected)
        eof = tok.type == "$END"
        # Lark stops in the state before the reductions a fitting token would make: its look-ahead
        # set merges the contexts that share that state; keep what really fits here
        fits = accepted(err, expected)
        if fits:
            err.expected = expected = fits
        if eof:
            # MLIR's end-of-file token sits at the end of the buffer
            start = end = len(text)
        else:
            start = tok.start_pos if tok.start_pos is not None else 0
            end = tok.end_pos if tok.end_pos is not None else start + len(str(tok))
        body = _pretty_body_issue(text, start)
        if body is not None:
            return [body]
        located = location_issue(err, text, start, eof)
        if located is not None:
            return located
        signature = _signature_issue(err, text, start, eof)
        if signature is not None:
            return [signature]
        unnamed = _unnamed_module(err, text, start, eof, outer_ops)
        if unnamed is not None:
            return [unnamed]
        structural = _structural_issue(err, text, start, end, eof)
        if structural is not None:
            return [structural]
        assume = not_a_predicate(err, text, start, eof) or assume_issue(err, text, start, end, eof)
        if assume is not None:
            return assume
        element = _dense_element_issue(err, text, eof)
        if element is not None:
            return element
        if eof:
            read = _word_read_before_end(err, text)
            if read is not None:
                return read
        current = current_op(err)
        op = current[0] if current is not None else None
        dims = _dimension_list_issue(err, text, start, op)
        if dims is not None:
            return [dims]
        if current is not None:
            earlier = _invalid_enum_before(err, *current)
            if earlier is not None:
                return [earlier]
        if _at_operation_name(err, expected):
            unknown = _unknown_operation(err, text, outer_ops)
            if unknown is not None:
                return [unknown]
        if _open_tensor_view_shape(err) is False and ("STRIDES" in expected and len(expected) == 1
                                                       or _after_comma(err)):
            # NVIDIA TensorViewType::parse (Types.cpp): a 0-d tensor_view takes no strides
            prefix = _type_prefix(op, text, start) or ""
            return [SyntaxIssue(f"{prefix}unexpected token after element type in 0-d tensor_view", start, end)]
        if expected & _literal_terminals().keys():
            missing = _keyword_or_region(err, expected, op, text)
            if missing is not None:
                return [missing]
        if {"INT", "QUESTION"} <= expected and "VALUE_ID" not in expected:
            # NVIDIA's dimension parser, inside a short-form type read by the custom op's parser
            prefix = _type_prefix(op, text, start) or ""
            return [SyntaxIssue(prefix + "expected either 64-bit integer or question mark", start, end)]
        if op is not None and {"INT", "VALUE_ID"} <= expected:
            # NVIDIA's shape lists mix integers and operands (parseDynamicIndexList)
            return [SyntaxIssue(f"custom op '{op}' expected either integer or SSA value", start, end)]
        if "STRING" in expected and expected <= {"STRING", "BARE_ID", "BANG_ID"}:
            pos = _end_of_previous_token(text, start)
            return [SyntaxIssue("expected attribute value", pos, pos)]
        if op is not None and "BARE_ID" in expected:
            rule = _completed_rule(err, "BARE_ID", "x")
            generated = _missing_generated_enum(err, rule, *current, text, eof)
            if generated is not None:
                return [generated]
            if rule in _MISSING_ENUM:
                return [SyntaxIssue(f"custom op '{op}' expected valid keyword", start, end),
                        SyntaxIssue(f"custom op '{op}' {_MISSING_ENUM[rule]}", start, end)]
        if op is not None and "AT_ID" in expected and not ({"VALUE_ID", "COLON"} & expected):
            return [SyntaxIssue(f"custom op '{op}' expected valid '@'-identifier for symbol name", start, end)]
        if {"INT_TYPE", "FLOAT_TYPE"} <= expected and "COLON" not in expected:
            if _is_mlir_keyword(str(tok)) and _attribute_type(err):
                # MLIR Parser::parseNonFunctionType: a keyword that starts no builtin type
                pos = _end_of_previous_token(text, start)
                return [SyntaxIssue("expected non-function type", pos, pos)]
            unknown = _unknown_type(tok, op, text)
            if unknown is not None:
                return [unknown]
            # a type was required: its parser wants a keyword first; NVIDIA's short-form
            # type parser runs inside the custom op's parser (hence the prefix)
            prefix = f"custom op '{op}' " if op is not None and not _written_with_bang(text, start) else ""
            if prefix or tok.type == "INT":
                return [SyntaxIssue(prefix + "expected valid keyword", start, end)]
        if tok.type != "INT" and "INT" in expected and _probe(err, ["INT"]) == "fmt_int":
            # an integer attribute of an ODS format: MLIR's parseAttribute found no attribute
            pos = wrong_token_offset(text, start, eof)
            return [SyntaxIssue("expected attribute value", pos, pos)]
        message = _expected_message(_punctuation_named(expected), tok)
        if message == "expected ','":
            message = _list_end(err) or message
        elif message == "expected '['" and _in_type_strides(err, opening=True):
            message = "expected '['strides array"  # NVIDIA TensorViewType::parse, as it runs on
        elif message == "expected valid keyword":
            # a keyword the custom op's parser reads (an enum case, a short-form type's)
            message = (_type_prefix(op, text, start) or "") + message
        if message.startswith("expected '") or message == "expected SSA operand":
            # MLIR's emitWrongTokenError (``parseToken``, ``parseSSAUse``): a missing token is
            # reported at the end of the previous token, not at the unexpected one
            start = end = wrong_token_offset(text, start, eof)
        elif eof and message == "unexpected end of file":
            start = end = len(text.rstrip())
        return [SyntaxIssue(message, start, end)]
    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream
        ch = text[pos] if pos < len(text) else ""
        if ch == '"':
            # MLIR Lexer::lexString: reported where the string runs into a line break or the end
            stop = next((i for i in range(pos + 1, len(text)) if text[i] in "\n\v\f"), len(text))
            return [SyntaxIssue("expected '\"' in string literal", stop, stop)]
        minus = _minus_token(err, text, pos, outer_ops)
        if minus is not None:
            return minus
        if ch == "@" and not _AT_ID_START.match(text, pos + 1):
            # MLIR Lexer::lexAtIdentifier: reported at the character after the '@'
            return [SyntaxIssue("@ identifier expected to start with letter or '_'", pos + 1, pos + 1)]
        if ch in _PREFIX_ERRORS and not _SUFFIX_ID_START.match(text, pos + 1):
            # MLIR Lexer::lexPrefixedIdentifier: a prefix without a name, reported at the prefix
            return [SyntaxIssue(_PREFIX_ERRORS[ch], pos, pos + 1)]
        if ch == "-" and "INT_TYPE" in (err.allowed or ()):
            # a negative dimension: MLIR's type parser wants the element type keyword here
            current = current_op(err)
            prefix = f"custom op '{current[0]}' " if current and not _written_with_bang(text, pos) else ""
            return [SyntaxIssue(prefix + "expected valid keyword", pos, pos)]
        return [SyntaxIssue("unexpected character", pos, pos + 1)]
    if isinstance(err, UnexpectedEOF):
        pos = len(text.rstrip())
        return [SyntaxIssue("unexpected end of file", pos, pos)]
    return [SyntaxIssue(str(err).splitlines()[0], 0, 0)]


def _minus_token(err: UnexpectedCharacters, text: str, pos: int, outer_ops: tuple[str, ...]) -> list[SyntaxIssue] | None:
    """A ``-`` that starts no ``->`` and no number: MLIR's lexer makes it a ``minus`` token (where
    ``->`` is being typed, for one), so the parser's error is that of any token it does not want
    there ("expected '->'", "expected '{' to begin a region"...): described as such a token."""
    ip = getattr(err, "interactive_parser", None)
    if ip is None or not text.startswith("-", pos) or text.startswith(">", pos + 1) \
            or (pos + 1 < len(text) and text[pos + 1].isdigit()):
        return None
    line, column = getattr(err, "line", 0), getattr(err, "column", 0)
    token = Token("MINUS", "-", pos, line, column, line, column + 1, pos + 1)
    as_token = UnexpectedToken(token, ip.accepts(), state=getattr(err, "state", None), interactive_parser=ip)
    return _dense_minus_issue(as_token, text, pos) or describe_error(as_token, text, outer_ops)


#: MLIR's lexer errors for a ``#``, ``%``, ``^`` or ``!`` not followed by a name (``lexPrefixedIdentifier``).
_PREFIX_ERRORS = {"#": "invalid attribute name", "%": "invalid SSA name", "^": "invalid block name",
                  "!": "invalid type identifier"}
_SUFFIX_ID_START = re.compile(r"[0-9A-Za-z$._\-]")
_AT_ID_START = re.compile(r'[A-Za-z_"]')


def met_offset(err: UnexpectedInput, text: str) -> int | None:
    """Offset of the token (or character) the parser could not take at ``err``; the end of the
    text for its end."""
    if at_end(err):
        return len(text)
    if isinstance(err, UnexpectedToken):
        return err.token.start_pos
    return getattr(err, "pos_in_stream", None)


def line_bounds(text: str, offset: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, (len(text) if end == -1 else end)


def blank(text: str, start: int, end: int) -> str:
    segment = re.sub(r"[^\n]", " ", text[start:end])
    return text[:start] + segment + text[end:]


def at_end(err: UnexpectedInput) -> bool:
    """Whether ``err`` is the end of the text coming too early."""
    return isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END")
