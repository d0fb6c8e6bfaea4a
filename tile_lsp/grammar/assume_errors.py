"""The syntax errors of an assume predicate (``assume PRED, %v : T``), as NVIDIA's
``parseAssumePredicate`` (CudaTile.cpp) and the predicates' ODS-generated parsers report them.
:func:`assume_issue` covers the short forms (``div_by<...>``, ``same_elements<...>``,
``bounded<...>``), :func:`not_a_predicate` a predicate of another kind followed by an error.
"""

from __future__ import annotations

import re

from lark import Token, Tree
from lark.exceptions import UnexpectedInput, UnexpectedToken

from tile_lsp.dialect.custom_formats import ASSUME_PREDICATE_WORDS, MSG_UNKNOWN_ASSUME_PREDICATE
from tile_lsp.grammar.lexical import BARE_ID, STRING
from tile_lsp.grammar.parser_state import (
    SyntaxIssue,
    bracket_end,
    current_op,
    state_after,
    value_stack,
    wrong_token_offset,
)


_ASSUME_FORMS = {"DIV_BY": "div_by", "SAME_ELEMENTS": "same_elements", "BOUNDED": "bounded"}
_SAME_ELEMENTS_FAILED = ("failed to parse CudaTile_SameElementsAttr parameter 'values' which is to be a "
                         "`DenseI64ArrayAttr`")


def _assume_form(err: UnexpectedInput) -> tuple[str, str, list[str]] | None:
    """``(op, form, tokens)`` when ``err`` happened inside an assume predicate's short form.

    ``form`` is ``div_by``, ``same_elements`` or ``bounded``; ``tokens`` are the types of the
    terminals read since its keyword (``["LESSTHAN", "INT", "COMMA"]``).
    """
    values = value_stack(err)
    read: list[str] = []
    for i in range(len(values) - 1, -1, -1):
        value = values[i]
        if isinstance(value, Token):
            if value.type in _ASSUME_FORMS:
                current = current_op(err)
                if current is None:
                    return None
                return current[0], _ASSUME_FORMS[value.type], read[::-1]
            read.append(value.type)
        elif isinstance(value, Tree) and value.data == "assume_bound":
            read.append("BOUND")
        else:
            return None
    return None


#: What MLIR's ``parseOptionalAttribute`` reads as an attribute when it starts a token (the token
#: kinds of its switch, mlir/lib/AsmParser/AttributeParser.cpp): an assume predicate that starts so is
#: read whole as an attribute, and then is not a predicate.
_ATTRIBUTE_START = re.compile(r'"|[-0-9\[{@]|(?:unit|true|false|dense|dense_resource|sparse|loc|affine_map|affine_set)\b')


_STRING_RE = re.compile(STRING)
_WORD_OR_NUMBER = re.compile(r"-?[@A-Za-z0-9_$.+]+")


def _attribute_end(text: str, start: int) -> int | None:
    """Where the attribute starting at ``start`` ends, for the forms :func:`not_a_predicate` reads:
    a string, a bracketed list or dictionary (:func:`~tile_lsp.grammar.parser_state.bracket_end`), or
    a single word or number; ``None`` when its brackets or its string do not close."""
    if text.startswith('"', start):
        m = _STRING_RE.match(text, start)
        return m.end() if m else None
    if text[start] in "[{":
        end, unbalanced, _ = bracket_end(text, start)
        return end if unbalanced is None else None
    m = _WORD_OR_NUMBER.match(text, start)
    return m.end() if m else None


def not_a_predicate(err: UnexpectedToken, text: str, start: int, eof: bool) -> list[SyntaxIssue] | None:
    """``expected assume predicate attribute``, when an assume's predicate is an attribute of another
    kind (a string, a number, a list...) and the error comes after it: NVIDIA's
    ``parseAssumePredicate`` reads such an attribute with ``parseOptionalAttribute`` and rejects it
    before it reads on, so that error comes first.  Likewise ``unknown assume predicate attribute``
    for a keyword that names no predicate (``array<...>``)."""
    current = current_op(err)
    values = value_stack(err)
    if current is None or current[0] != "cuda_tile.assume" or current[1] + 1 >= len(values):
        return None
    first = values[current[1] + 1]
    while isinstance(first, Tree) and first.data == "assume_predicate" and first.children:
        first = first.children[0]  # reduced already: the predicate is followed by what the format wants
    if first is None:
        return None
    at = first.start_pos if isinstance(first, Token) else getattr(first.meta, "start_pos", None)
    if at is None:
        return None
    if isinstance(first, Token) and re.fullmatch(BARE_ID, str(first)) and not _ATTRIBUTE_START.match(text, at):
        # a keyword: one that names no predicate fails as soon as it is read
        if str(first) in ASSUME_PREDICATE_WORDS or (start < first.end_pos and not eof):
            return None
        return [SyntaxIssue("custom op 'cuda_tile.assume' " + MSG_UNKNOWN_ASSUME_PREDICATE.format(word=first),
                            at, first.end_pos)]
    if not _ATTRIBUTE_START.match(text, at):
        return None
    end = _attribute_end(text, at)
    if end is None or (start < end and not eof):
        return None
    return [SyntaxIssue("custom op 'cuda_tile.assume' expected assume predicate attribute", at, at)]


def assume_issue(err: UnexpectedToken, text: str, start: int, end: int, eof: bool) -> list[SyntaxIssue] | None:
    """MLIR's errors for a token that does not fit an assume predicate's short form, or ``None``.

    The forms and their parsers (NVIDIA ``parseAssumePredicate`` in CudaTile.cpp and the
    attributes' formats in AttrDefs.td): ``bounded<LB|?, UB|?>`` is read by hand, a bound being
    an optional integer or ``?`` ("expected '?'", a wrong token); ``div_by<N (, every E along
    A)?>`` and ``same_elements<[N, ...]>`` by ODS-generated parsers, whose integers and keywords
    are read through the op's parser ("custom op 'cuda_tile.assume' expected integer value",
    "... expected 'every'", at the token found), and which add "failed to parse ..." when a
    parameter fails; punctuation is read with ``parseToken`` ("expected '>'", a wrong token).
    At the end of the file a token's position is the end of the text.
    """
    at = len(text) if eof else start
    current = current_op(err)
    if current is not None and state_after(err, "BOUNDED") is not None:
        # the predicate itself: parseOptionalKeyword found none, then parseAttribute wanted a name
        prefix = f"custom op '{current[0]}' "
        return [SyntaxIssue(prefix + "expected valid keyword", at, at),
                SyntaxIssue(prefix + "expected attribute name", at, at)]
    found = _assume_form(err)
    if found is None:
        return None
    op, form, read = found
    if read and read[-1] == "MORETHAN":
        return None  # the form is complete: the error is in what follows it
    prefix = f"custom op '{op}' "
    wrong = wrong_token_offset(text, start, eof)
    last = read[-1] if read else None
    if not read:
        return [SyntaxIssue("expected '<'", wrong, wrong)]
    if form == "bounded":
        if last in ("LESSTHAN", "COMMA"):
            return [SyntaxIssue("expected '?'", wrong, wrong)]
        message = "expected ','" if len(read) == 2 else "expected '>'"
        return [SyntaxIssue(message, wrong, wrong)]
    if form == "div_by":
        if last == "LESSTHAN":
            return [SyntaxIssue(prefix + "expected integer value", at, at),
                    SyntaxIssue(prefix + "failed to parse parameter 'divisor' which is expected to be an integer",
                                at, at)]
        if last == "COMMA":
            return [SyntaxIssue(prefix + "expected 'every'", at, at)]
        if last in ("EVERY", "ALONG"):
            return [SyntaxIssue(prefix + "expected integer value", at, at)]
        if last == "INT" and read[-2] == "EVERY":
            return [SyntaxIssue(prefix + "expected 'along'", at, at)]
        return [SyntaxIssue("expected '>'", wrong, wrong)]
    # same_elements
    if last == "LESSTHAN":
        return [SyntaxIssue("expected '['", wrong, wrong), SyntaxIssue(prefix + _SAME_ELEMENTS_FAILED, at, at)]
    if last in ("LSQB", "COMMA"):
        return [SyntaxIssue(prefix + "expected integer value", at, at), SyntaxIssue("expected ']'", wrong, wrong),
                SyntaxIssue(prefix + _SAME_ELEMENTS_FAILED, at, at)]
    if last == "INT":
        return [SyntaxIssue("expected ']'", wrong, wrong), SyntaxIssue(prefix + _SAME_ELEMENTS_FAILED, at, at)]
    return [SyntaxIssue("expected '>'", wrong, wrong)]


#: What may stand, in the parser's value stack, between a dense literal's ``:`` and the end of the text.
