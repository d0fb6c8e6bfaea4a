"""Semantic tokens of a Tile IR document (LSP ``textDocument/semanticTokens``), in analysis terms.

Feature: semantic highlighting - ``textDocument/semanticTokens/full`` and ``full/delta``; VS
Code: colours by meaning.

Every token the IR knows comes from the IR, at the range the builder
recorded (each IR token is a claim on the text):

* op names (``Operation.name_range``): the dialect prefix (``cuda_tile.``)
  is a ``namespace`` token and the rest a ``function`` token; an op written
  in generic form (``"cuda_tile.addi"(...)``) is split the same way inside
  its quotes, which are ``string`` tokens;
* values: op results (``OpResult.range``) are ``variable``, block arguments
  (``BlockArgument.range``) ``parameter``, both with the ``declaration``
  modifier; their uses (``Operation.operand_ranges``) take the kind of the
  value used;
* block labels (``Block.label_range``, ``declaration``) and the successor
  lists that name them (``Operation.successor_ranges``) are ``label``;
* symbols: the name a symbol op defines (``SymbolNameAttr``) is a
  ``decorator`` with ``declaration``, each ``@name`` of a symbol reference
  (``SymbolRefAttr``, ``@a::@b``) a ``decorator``;
* attributes that are one token: an enum case (``EnumAttr``, also the case
  of ``#cuda_tile.rounding<zero>`` in generic form) is an ``enumMember``,
  an integer or float a ``number``, a string a ``string``,
  ``true``/``false`` a ``keyword``;
* the builder's span table (:class:`~tile_lsp.analysis.ir.core.Span`,
  ``Operation.spans`` and the module's): type aliases (``!t``) are
  ``type`` and attribute aliases (``#loc``) ``macro``, with ``declaration``
  where the alias is defined; in each tile type as written, the words are
  ``type`` tokens and the dimensions ``number`` s.

The text at each range is checked to be what the IR says is there (a
``%`` at a value, the case at an enum attribute...), so that a range that
does not fit is left to the scan below.

A lexical scan (:data:`_LEX`) covers only the text between those claims,
what the IR has no notion of: comments, format keywords (``to``,
``step``, ``rounding``, ``iter_values``, ``shape``...: ``keyword``),
attribute names (a bare word before ``=``: ``property``), ``loc``,
``#...`` dialect attributes (``macro``) and the numbers and strings inside
attributes of more than one token (dense literals, ``0 : i32``, locations,
assume predicates).  It also classifies by spelling (:data:`TYPE_WORDS`,
:data:`ENUM_WORDS`) what the builder keeps no range for: the types it
records no span for (views, ``token``, element types inside literals),
the enum cases inside them (a view's ``padding_value``), ``global
private``.  Where the text does not parse (a chunk without IR, a statement
error recovery dropped), the IR knows nothing, and classifying every token
by its spelling, as the scan does (``%`` names ``variable``, ``@`` names
``decorator``, known enum cases ``enumMember``...), is the right answer:
the editor keeps its colours while the user types.

Tokens are single-line and sorted; positions are whole-file (0-based line,
UTF-16 column).  :func:`encode` turns them into LSP's relative integer array
for the legend :data:`TOKEN_TYPES` / :data:`TOKEN_MODIFIERS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from tile_lsp.analysis.api import ChunkAnalysis, DocumentAnalysis
from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import BlockArgument, Operation, Span
from tile_lsp.analysis.ir.diagnostics import Position, Range, SourceText
from tile_lsp.analysis.ide.index import DocumentIndex
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

#: Bare words that are types (or type mnemonics inside ``cuda_tile``): the lexical scan's types.
TYPE_WORDS: frozenset[str] = frozenset(
    {"tile", "ptr", "token", "tensor_view", "partition_view", "strided_view", "gather_scatter_view",
     "index", "none"} | set(FLOAT_WIDTHS) | {f"i{w}" for w in (1, 4, 8, 16, 32, 64, 128)}
)
#: Enum case spellings of every cuda_tile enum: the lexical scan's enum cases.
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
#: The token type of a lexical class that is not its own name.
_LEX_TYPES = {"value": "variable", "symbol": "decorator", "typename": "type", "attrname": "macro"}
_DIM = re.compile(r"[0-9]+|\?")
_ATTR_NAME_FOLLOWS = re.compile(r"\s*=(?!=)")
_NUMBER = re.compile(r"[-+]?0x[0-9A-Fa-f]+|[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")
_STRING = re.compile(STRING)
_SYMBOL_PART = re.compile(r"@(?:" + BARE_ID + "|" + STRING + ")")

_NONE: frozenset[str] = frozenset()
_DECL = frozenset({"declaration"})

# A token in code points: (start offset, end offset, type, modifiers).
_Tok = tuple[int, int, str, frozenset]


class _Offsets:
    """LSP positions of the IR to code-point offsets of the text, fast on ASCII lines."""

    def __init__(self, source: SourceText):
        self.source = source
        self.starts = source.line_starts
        self.ascii: dict[int, bool] = {}

    def of(self, pos: Position) -> int:
        """The code-point offset of ``pos``."""
        line = pos.line
        if line >= len(self.starts):
            return len(self.source.text)
        ascii_line = self.ascii.get(line)
        if ascii_line is None:
            ascii_line = self.ascii[line] = self.source.line_text(line).isascii()
        if ascii_line:
            return self.starts[line] + pos.character
        return self.source.offset(pos)


class _IRTokens:
    """The tokens the IR knows, grouped in claims: ``(start, end, tokens)`` in code points, each
    a whole lexical token, an op name in generic form, a symbol reference or a tile type (whose
    words are its tokens).  The text at each range is checked to be what the IR says is there, so
    that a range that does not fit is left to the lexical scan."""

    def __init__(self, source: SourceText):
        self.text = source.text
        self.offsets = _Offsets(source)
        self.claims: list[tuple[int, int, list[_Tok]]] = []

    def span(self, rng: Range | None) -> tuple[int, int] | None:
        """Offsets of a single-line ``rng``, ``None`` when there is none."""
        if rng is None or rng.start.line != rng.end.line or rng.end.character <= rng.start.character:
            return None
        of = self.offsets.of
        return of(rng.start), of(rng.end)

    def one(self, rng: Range | None, sigil: str, kind: str, modifiers: frozenset = _NONE) -> None:
        """A one-token claim of ``kind`` at ``rng`` when its text starts with ``sigil``."""
        s = self.span(rng)
        if s is not None and self.text.startswith(sigil, s[0]):
            self.claims.append((s[0], s[1], [(s[0], s[1], kind, modifiers)]))

    # -- the IR of a chunk --

    def chunk(self, chunk: ChunkAnalysis) -> None:
        """The claims of a chunk with IR: the spans outside every op (those of its units when it was
        analysed by units, as :class:`~tile_lsp.analysis.ide.index.DocumentIndex` reads them), then
        every op's."""
        module = chunk.module
        assert module is not None
        units = getattr(chunk, "units", None)
        outside = [s for unit in units for s in unit.spans] if units else module.spans
        self.spans(outside, 0)
        for op in module.walk():
            self.op(op)

    def op(self, op: Operation) -> None:
        """The claims of ``op``'s own text: name, spans, results, operands, successors, the labels and
        arguments of its blocks, attributes (its nested ops are walked by :meth:`chunk`)."""
        self.op_name(op)
        if op.spans and op.range is not None:
            self.spans(op.spans, op.range.start.line)
        for res in op.results:
            self.one(res.range, "%", "variable", _DECL)
        for value, rng in zip(op.operands, op.operand_ranges):
            self.one(rng, "%", "parameter" if isinstance(value, BlockArgument) else "variable")
        for rng in op.successor_ranges:
            self.one(rng, "^", "label")
        for region in op.regions:
            for block in region.blocks:
                if block.label is not None:
                    self.one(block.label_range, "^", "label", _DECL)
                for arg in block.arguments:
                    self.one(arg.range, "%", "parameter", _DECL)
        for attr in _attributes_of(op):
            self.attribute(attr)

    def op_name(self, op: Operation) -> None:
        """``cuda_tile.`` (``namespace``) and ``addi`` (``function``), inside quotes in generic form."""
        s = self.span(op.name_range)
        if s is None:
            return
        start, end = s
        quoted = end - start >= 2 and self.text[start] == '"' and self.text[end - 1] == '"'
        a, b = (start + 1, end - 1) if quoted else (start, end)
        written = self.text[a:b]
        if written != op.name and written != op.short_name:
            return
        toks: list[_Tok] = []
        if quoted:
            toks.append((start, a, "string", _NONE))
        dot = written.find(".")
        if dot > 0:
            toks.append((a, a + dot + 1, "namespace", _NONE))
            toks.append((a + dot + 1, b, "function", _NONE))
        else:
            toks.append((a, b, "function", _NONE))
        if quoted:
            toks.append((b, end, "string", _NONE))
        self.claims.append((start, end, toks))

    def attribute(self, attr: A.Attribute) -> None:
        """The claim of an attribute that is one token (or a symbol reference, or a generic enum)."""
        s = self.span(attr.range)
        if s is None:
            return
        start, end = s
        written = self.text[start:end]
        kind = None
        if isinstance(attr, A.SymbolNameAttr):
            if written.startswith("@"):
                kind = "decorator"
            elif _STRING.fullmatch(written):
                kind = "string"  # sym_name = "m" in generic form
            if kind is not None:
                self.claims.append((start, end, [(start, end, kind, _DECL if kind == "decorator" else _NONE)]))
            return
        if isinstance(attr, A.SymbolRefAttr):
            parts = list(_SYMBOL_PART.finditer(written))
            if parts and parts[0].start() == 0:
                self.claims.append((start, end, [(start + m.start(), start + m.end(), "decorator", _NONE)
                                                 for m in parts]))
            return
        if isinstance(attr, A.DialectAttr):
            self.generic_enum(attr, start, written)
            return
        if isinstance(attr, A.EnumAttr):
            kind = "enumMember" if written == attr.case else None
        elif isinstance(attr, (A.IntegerAttr, A.FloatAttr)):
            kind = "number" if _NUMBER.fullmatch(written) else None
        elif isinstance(attr, A.StringAttr):
            kind = "string" if _STRING.fullmatch(written) else None
        elif isinstance(attr, A.BoolAttr):
            kind = "keyword" if written in ("true", "false") else None
        if kind is not None:
            self.claims.append((start, end, [(start, end, kind, _NONE)]))

    def generic_enum(self, attr: A.DialectAttr, start: int, written: str) -> None:
        """An enum attribute in generic form (``#cuda_tile.rounding<zero>``, the case decoded in
        ``DialectAttr.value``): its name a ``macro``, its case an ``enumMember``."""
        value = attr.value
        if not isinstance(value, A.EnumAttr) or not attr.mnemonic:
            return
        name = f"#{attr.dialect}.{attr.mnemonic}"
        if not written.startswith(name + "<") or not written.endswith(">"):
            return
        inner = written[len(name) + 1:-1]
        if inner.strip() != value.case:
            return
        a = start + len(name) + 1 + inner.find(value.case)
        self.claims.append((start, start + len(written), [(start, start + len(name), "macro", _NONE),
                                                          (a, a + len(value.case), "enumMember", _NONE)]))

    def spans(self, spans: "tuple[Span, ...] | list[Span]", base_line: int) -> None:
        """Alias definitions and uses, and tile types as written, from the builder's span table."""
        for span in spans:
            if span.kind == "type":
                self.tile_type(span.range_at(base_line))
            else:
                self.one(span.range_at(base_line), span.kind + span.name,
                         "type" if span.kind == "!" else "macro", _DECL if span.definition else _NONE)

    def tile_type(self, rng: Range) -> None:
        """A tile type as written: its words are ``type`` tokens (but a parameter's name, a word
        before ``=``, is a ``property``), its dimensions ``number`` s."""
        of = self.offsets.of
        start, end = of(rng.start), of(rng.end)
        text = self.text
        if end <= start or (start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_$.")):
            return  # not at the start of a token: a range that does not fit
        toks: list[_Tok] = []
        for m in _LEX.finditer(text, start, end):
            kind = m.lastgroup
            a, b = m.start(), m.end()
            if kind == "shape":
                toks.extend((a + d.start(), a + d.end(), "number", _NONE) for d in _DIM.finditer(m.group()))
            elif kind == "word":
                word = m.group()
                prop = word not in TYPE_WORDS and _ATTR_NAME_FOLLOWS.match(text, b) is not None
                toks.append((a, b, "property" if prop else "type", _NONE))
            elif kind in ("typename", "number"):
                toks.append((a, b, "type" if kind == "typename" else "number", _NONE))
            else:
                return  # not a type: a range that does not fit
        self.claims.append((start, end, toks))

    def sorted_claims(self) -> list[tuple[int, int, list[_Tok]]]:
        """The claims in text order, without overlaps (of two that overlap, the outer or first one)."""
        self.claims.sort(key=lambda c: (c[0], -c[1]))
        out: list[tuple[int, int, list[_Tok]]] = []
        last_end = -1
        for claim in self.claims:
            if claim[0] >= last_end:
                out.append(claim)
                last_end = claim[1]
        return out


def _attributes_of(op: Operation) -> Iterator[A.Attribute]:
    """Every attribute of ``op`` with a range, nested ones included (arrays, dictionaries)."""
    stack: list[A.Attribute] = [*op.properties.values(), *op.attributes.values()]
    while stack:
        attr = stack.pop()
        if attr.range is not None:
            yield attr
        if isinstance(attr, A.ArrayAttr):
            stack.extend(attr.elements)
        elif isinstance(attr, A.DictAttr):
            stack.extend(attr.entries.values())


def _lexical(text: str, start: int, end: int, out: list[_Tok]) -> None:
    """The tokens of ``text[start:end]``, text the IR has no token in, classified by spelling."""
    for m in _LEX.finditer(text, start, end):
        kind = m.lastgroup
        a, b = m.start(), m.end()
        if kind == "word":
            word = m.group()
            if word in TYPE_WORDS:
                kind = "type"
            elif word in _CONSTANT_WORDS:
                kind = "keyword"
            elif "." not in word and _ATTR_NAME_FOLLOWS.match(text, b, b + 8) is not None:
                kind = "property"
            elif word in ENUM_WORDS:
                kind = "enumMember"
            else:
                kind = "keyword"
        elif kind == "shape":
            out.extend((a + d.start(), a + d.end(), "number", _NONE) for d in _DIM.finditer(m.group()))
            continue
        out.append((a, b, _LEX_TYPES.get(kind, kind), _NONE))  # type: ignore[arg-type]


def semantic_tokens(analysis: DocumentAnalysis, index: DocumentIndex | None = None) -> list[SemanticToken]:
    """Every semantic token of ``analysis``'s text, sorted by position.

    The tokens the IR knows come from the IR and the builder's span table;
    the text between them is scanned lexically (see the module docstring).
    ``index`` is optional (its source text is reused; the IR is read
    directly).  Works on partial IR: text without IR is classified lexically.
    """
    source = index.source if index is not None else SourceText(analysis.text)
    text = source.text
    ir = _IRTokens(source)
    for chunk in analysis.chunks:
        if chunk.module is not None:
            ir.chunk(chunk)
    found: list[_Tok] = []
    pos = 0
    for start, end, toks in ir.sorted_claims():
        if start > pos:
            _lexical(text, pos, start, found)
        found.extend(toks)
        pos = end
    _lexical(text, pos, len(text), found)
    return _to_positions(source, found)


def _to_positions(source: SourceText, found: list[_Tok]) -> list[SemanticToken]:
    """The code-point tokens ``found`` (in text order) as single-line LSP tokens."""
    out: list[SemanticToken] = []
    starts = source.line_starts
    text = source.text
    n_lines = len(starts)
    line = 0
    line_start = 0
    line_end = starts[1] if n_lines > 1 else len(text) + 1
    ascii_line = source.line_text(0).isascii()
    for a, b, kind, modifiers in found:
        if b <= a:
            continue
        if a >= line_end:
            while line + 1 < n_lines and starts[line + 1] <= a:
                line += 1
            line_start = starts[line]
            line_end = starts[line + 1] if line + 1 < n_lines else len(text) + 1
            ascii_line = source.line_text(line).isascii()
        if b >= line_end:
            continue  # crosses a line
        if ascii_line:
            out.append(SemanticToken(line, a - line_start, b - a, kind, modifiers))
        else:
            col = len(text[line_start:a].encode("utf-16-le")) // 2
            out.append(SemanticToken(line, col, len(text[a:b].encode("utf-16-le")) // 2, kind, modifiers))
    return out


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
