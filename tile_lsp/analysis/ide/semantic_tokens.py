"""Semantic tokens of a Tile IR document (LSP ``textDocument/semanticTokens``), in analysis terms.

Feature: semantic highlighting - ``textDocument/semanticTokens/full`` and ``full/delta``; VS
Code: colours by meaning.

A light lexical scan of the whole text (comments, strings, ``%`` values,
``^`` labels, ``@`` symbols, ``!``/``#`` names, numbers, shapes, bare
words) finds the tokens; the IR classifies them:

* a bare word at an op's ``name_range`` is an op name: its dialect prefix
  (``cuda_tile.``) is a ``namespace`` token and the rest a ``function``
  token; an op written in generic form (``"cuda_tile.addi"(...)``) is
  split the same way inside its quotes;
* ``%`` names are ``variable`` (op results) or ``parameter`` (block
  arguments), with the ``declaration`` modifier where they are defined
  (from :class:`~tile_lsp.analysis.ide.index.DocumentIndex`);
* element types, ``tile``/``ptr``/``token``/view mnemonics, ``!...`` types
  are ``type``; enum case spellings (:data:`~tile_lsp.dialect.enums.ENUMS`)
  are ``enumMember``; a bare word followed by ``=`` is a ``property`` (an
  attribute name); ``true``/``false``/``loc`` and every other bare word
  (format keywords: ``to``, ``step``, ``rounding``, ``shape``...) are
  ``keyword``; ``#...`` attributes are ``macro``; ``@`` symbols ``decorator``
  (``declaration`` where the symbol op defines them); ``^`` labels ``label``.

Tokens are single-line and sorted; positions are whole-file (0-based line,
UTF-16 column).  :func:`encode` turns them into LSP's relative integer array
for the legend :data:`TOKEN_TYPES` / :data:`TOKEN_MODIFIERS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tile_lsp.analysis.api import DocumentAnalysis
from tile_lsp.analysis.ir.diagnostics import Position, SourceText
from tile_lsp.analysis.ide.index import DocumentIndex, EntityKind
from tile_lsp.analysis.ir.core import BlockArgument
from tile_lsp.dialect.enums import ENUM_LIST
from tile_lsp.dialect.types import FLOAT_WIDTHS
from tile_lsp.grammar.lexical import BARE_ID, STRING

#: Legend: token types, in index order (LSP ``SemanticTokensLegend.tokenTypes``).
TOKEN_TYPES: tuple[str, ...] = (
    "namespace",   # dialect prefix of an op name
    "function",    # op name without its dialect prefix
    "variable",    # SSA value (op result)
    "parameter",   # SSA block argument
    "label",       # ^block label
    "decorator",   # @symbol
    "type",        # types and type aliases
    "macro",       # #attributes and attribute aliases
    "property",    # attribute name (word before '=')
    "enumMember",  # enum case
    "keyword",     # format keywords, true/false, loc
    "number",
    "string",
    "comment",
)
#: Legend: token modifiers, bit ``i`` is ``TOKEN_MODIFIERS[i]``.
TOKEN_MODIFIERS: tuple[str, ...] = ("declaration", "defaultLibrary")

_TYPE_INDEX = {name: i for i, name in enumerate(TOKEN_TYPES)}

#: Bare words that are types (or type mnemonics inside ``cuda_tile``).
TYPE_WORDS: frozenset[str] = frozenset(
    {"tile", "ptr", "token", "tensor_view", "partition_view", "strided_view", "gather_scatter_view",
     "index", "none"} | set(FLOAT_WIDTHS) | {f"i{w}" for w in (1, 4, 8, 16, 32, 64, 128)}
)
#: Enum case spellings of every cuda_tile enum.
ENUM_WORDS: frozenset[str] = frozenset(c[0] for e in ENUM_LIST for c in e.cases)
_CONSTANT_WORDS = frozenset({"true", "false", "unit", "loc"})


@dataclass(frozen=True)
class SemanticToken:
    """One token: ``line``, UTF-16 ``start`` column and ``length``, ``type`` (a name of
    :data:`TOKEN_TYPES`) and ``modifiers`` (names of :data:`TOKEN_MODIFIERS`)."""

    line: int
    start: int
    length: int
    type: str
    modifiers: frozenset[str] = frozenset()


_LEX = re.compile(
    r'(?P<comment>//[^\n]*)'
    r'|(?P<string>' + STRING + ')'
    r'|(?P<value>%[A-Za-z0-9$._\-]+(?:#[0-9]+)?)'
    r'|(?P<label>\^[A-Za-z0-9$._\-]+)'
    r'|(?P<symbol>@(?:' + BARE_ID + '|' + STRING + '))'
    r'|(?P<typename>![A-Za-z_][A-Za-z0-9_$.]*)'
    r'|(?P<attrname>#[A-Za-z_][A-Za-z0-9_$.]*)'
    r'|(?P<shape>(?:(?:[0-9]+|\?)x)+)'
    r'|(?P<number>[-+]?0x[0-9A-Fa-f]+|[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)'
    r'|(?P<word>[A-Za-z_][A-Za-z0-9_$.]*)'
)
_DIM = re.compile(r"[0-9]+|\?")


class _Collector:
    def __init__(self, source: SourceText):
        self.source = source
        self.tokens: list[SemanticToken] = []

    def add(self, start: int, end: int, kind: str, modifiers: frozenset[str] = frozenset()) -> None:
        """Add the code-point span ``[start, end)`` (single line) as a token."""
        if end <= start:
            return
        a = self.source.position(start)
        b = self.source.position(end)
        if a.line != b.line:
            return
        self.tokens.append(SemanticToken(a.line, a.character, b.character - a.character, kind, modifiers))


def _op_name_starts(analysis: DocumentAnalysis) -> dict[Position, int]:
    """Start position of each op name in the text -> its length in UTF-16 units."""
    out: dict[Position, int] = {}
    for chunk in analysis.chunks:
        if chunk.module is None:
            continue
        for op in chunk.module.walk():
            r = op.name_range
            if r is not None and r.start.line == r.end.line:
                out[r.start] = r.end.character - r.start.character
    return out


def _definition_kinds(index: DocumentIndex) -> dict[Position, tuple[EntityKind, bool, bool]]:
    """Start of each indexed occurrence -> (entity kind, is definition, is a block argument)."""
    out: dict[Position, tuple[EntityKind, bool, bool]] = {}
    for entity in index.entities:
        is_arg = any(isinstance(v, BlockArgument) for v in entity.values)
        for occ in entity.occurrences:
            out[occ.range.start] = (entity.kind, occ.is_definition, is_arg)
    return out


def _op_name(col: _Collector, start: int, end: int) -> None:
    text = col.source.text[start:end]
    dot = text.find(".")
    if dot > 0:
        col.add(start, start + dot + 1, "namespace")
        col.add(start + dot + 1, end, "function")
    else:
        col.add(start, end, "function")


def semantic_tokens(analysis: DocumentAnalysis, index: DocumentIndex | None = None) -> list[SemanticToken]:
    """Every semantic token of ``analysis``'s text, sorted by position.

    ``index`` (built when omitted) tells definitions and block arguments
    apart.  Works on partial IR: words the IR does not know are classified
    lexically.
    """
    index = index or DocumentIndex(analysis)
    source = index.source
    text = analysis.text
    op_names = _op_name_starts(analysis)
    occurrences = _definition_kinds(index)
    col = _Collector(source)
    decl = frozenset({"declaration"})
    for m in _LEX.finditer(text):
        kind = m.lastgroup
        start, end = m.start(), m.end()
        if kind == "comment":
            col.add(start, end, "comment")
        elif kind == "string":
            pos = source.position(start)
            if pos in op_names or source.position(start + 1) in op_names:
                col.add(start, start + 1, "string")
                _op_name(col, start + 1, end - 1)
                col.add(end - 1, end, "string")
            else:
                col.add(start, end, "string")
        elif kind == "value":
            info = occurrences.get(source.position(start))
            is_def = info is not None and info[1]
            kind_name = "parameter" if info is not None and info[2] else "variable"
            col.add(start, end, kind_name, decl if is_def else frozenset())
        elif kind == "label":
            info = occurrences.get(source.position(start))
            col.add(start, end, "label", decl if info is not None and info[1] else frozenset())
        elif kind == "symbol":
            info = occurrences.get(source.position(start))
            col.add(start, end, "decorator", decl if info is not None and info[1] else frozenset())
        elif kind == "typename":
            col.add(start, end, "type")
        elif kind == "attrname":
            col.add(start, end, "macro")
        elif kind == "shape":
            for d in _DIM.finditer(m.group()):
                col.add(start + d.start(), start + d.end(), "number")
        elif kind == "number":
            col.add(start, end, "number")
        elif kind == "word":
            word = m.group()
            if source.position(start) in op_names:
                _op_name(col, start, end)
            elif word in TYPE_WORDS:
                col.add(start, end, "type")
            elif word in _CONSTANT_WORDS:
                col.add(start, end, "keyword")
            elif re.match(r"\s*=(?!=)", text[end:end + 8]) and "." not in word:
                col.add(start, end, "property")
            elif word in ENUM_WORDS:
                col.add(start, end, "enumMember")
            else:
                col.add(start, end, "keyword")
    col.tokens.sort(key=lambda t: (t.line, t.start))
    return col.tokens


def encode(tokens: list[SemanticToken]) -> list[int]:
    """LSP's relative encoding of sorted ``tokens``: 5 integers per token
    (delta line, delta start, length, type index, modifier bits)."""
    data: list[int] = []
    prev_line = 0
    prev_start = 0
    for t in tokens:
        delta_line = t.line - prev_line
        delta_start = t.start - prev_start if delta_line == 0 else t.start
        bits = 0
        for i, name in enumerate(TOKEN_MODIFIERS):
            if name in t.modifiers:
                bits |= 1 << i
        data.extend((delta_line, delta_start, t.length, _TYPE_INDEX[t.type], bits))
        prev_line, prev_start = t.line, t.start
    return data
