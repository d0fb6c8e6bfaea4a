"""MLIR's lexical pieces as regular-expression source, for the code that scans text around the parser.

The same patterns as the terminals of ``mlir.lark`` (``STRING``, ``COMMENT``,
``BARE_ID``), which follow MLIR's lexer (``mlir/lib/AsmParser/Lexer.cpp``): a
string is double-quoted on one line with backslash escapes, a comment runs
from ``//`` to the end of the line.  Combine them into larger expressions
(``re.compile(STRING + "|" + LINE_COMMENT)``) instead of writing them again;
``tests/test_parse_structure.py`` checks that they match what the grammar's
terminals match.
"""

from __future__ import annotations

import re

#: A string literal: ``"..."`` on one line, ``\\`` escaping the next character.
STRING = r'"(?:[^"\\\n]|\\.)*"'
#: A ``//`` comment, up to (not including) the end of the line.
LINE_COMMENT = r"//[^\n]*"
#: A bare identifier (op and attribute names, keywords): MLIR's ``bare-id``.
BARE_ID = r"[A-Za-z_][A-Za-z0-9_$.]*"

#: Strings and comments, to skip them while scanning text for brackets or names.
STRINGS_AND_COMMENTS = re.compile(f"{STRING}|{LINE_COMMENT}")

#: Blanks and ``//`` comments, as MLIR's lexer skips them between tokens.
_SKIP_BLANKS = re.compile(rf"(?:\s+|{LINE_COMMENT})*")


def next_token_offset(text: str, offset: int) -> int:
    """Offset in ``text`` of the first token at or after ``offset`` (past blanks and ``//`` comments):
    where MLIR's lexer stands (``getCurrentLocation``) after the token that ends at ``offset``."""
    m = _SKIP_BLANKS.match(text, offset)
    return m.end() if m else offset


def comment_start(line: str) -> int | None:
    """Index of the ``//`` comment in ``line`` (one line), outside string literals; ``None`` when it has none.

    A string runs from its ``"`` to the closing one, ``\\`` escaping the next character; an
    unterminated string runs to the end of the line.
    """
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
