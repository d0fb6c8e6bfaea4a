"""Editing features of the tile-lsp server: thin LSP adapters over the analysis layer.

:func:`register_editing_features` adds to a :class:`~tile_lsp.server.server.TileLanguageServer`:

* ``textDocument/formatting`` and ``rangeFormatting``
  (:mod:`tile_lsp.analysis.formatting`; no edits when refused);
* ``textDocument/semanticTokens/full`` (:mod:`tile_lsp.analysis.semantic_tokens`,
  legend from its ``TOKEN_TYPES``/``TOKEN_MODIFIERS``);
* ``textDocument/completion`` (:mod:`tile_lsp.analysis.completion`; trigger
  characters ``%``, ``@``, ``^``, ``<``, ``:``);
* ``textDocument/inlayHint`` (:mod:`tile_lsp.analysis.inlay_hints`).

Formatting, semantic tokens and inlay hints must describe the text the
client has now: they use the cached analysis when its version is the
document's, else analyse the current text on the spot.  Completion uses the
cached analysis (the IR of the last text analysed, which knows the values a
half-typed line would hide) and reads the context from the current text.
"""

from __future__ import annotations

from lsprotocol import types

from tile_lsp.analysis.api import DocumentAnalysis, analyze_text
from tile_lsp.analysis.completion import completions
from tile_lsp.analysis.diagnostics import Range
from tile_lsp.analysis.formatting import format_document, format_range
from tile_lsp.analysis.index import DocumentIndex
from tile_lsp.analysis.inlay_hints import inlay_hints
from tile_lsp.analysis.semantic_tokens import TOKEN_MODIFIERS, TOKEN_TYPES, encode, semantic_tokens
from tile_lsp.server import convert
from tile_lsp.server.convert import PositionEncoder
from tile_lsp.server.server import TileLanguageServer, guarded

#: Legend sent in the server's capabilities.
LEGEND = types.SemanticTokensLegend(token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS))

#: LSP completion item kinds of the analysis' item kinds.
_COMPLETION_KINDS = {
    "op": types.CompletionItemKind.Function,
    "enum": types.CompletionItemKind.EnumMember,
    "value": types.CompletionItemKind.Variable,
    "symbol": types.CompletionItemKind.Reference,
    "label": types.CompletionItemKind.Reference,
    "type": types.CompletionItemKind.TypeParameter,
}


def current_analysis(ls: TileLanguageServer, uri: str) -> tuple[DocumentAnalysis, PositionEncoder]:
    """An analysis of the document's current text and its position encoder.

    The cached one when its version is the document's, else a fresh analysis
    (run in the request's thread: formatting needs the text it edits).
    """
    document = ls.workspace.get_text_document(uri)
    snapshot = ls.latest_analysis(uri)
    if snapshot is not None and snapshot.version == document.version and snapshot.analysis.text == document.source:
        analysis = snapshot.analysis
    else:
        analysis = analyze_text(document.source, ls.analysis_options(document.source))
    return analysis, PositionEncoder(analysis.text, ls.workspace.position_encoding)


def _from_lsp_range(rng: types.Range, encoder: PositionEncoder) -> Range:
    return Range(convert.from_lsp_position(rng.start, encoder), convert.from_lsp_position(rng.end, encoder))


@guarded(default=[])
def on_formatting(ls: TileLanguageServer, params: types.DocumentFormattingParams) -> list[types.TextEdit]:
    """``textDocument/formatting``: the canonical print, or no edits when refused."""
    analysis, encoder = current_analysis(ls, params.text_document.uri)
    return convert.to_lsp_text_edits(format_document(analysis), encoder)


@guarded(default=[])
def on_range_formatting(ls: TileLanguageServer, params: types.DocumentRangeFormattingParams) -> list[types.TextEdit]:
    """``textDocument/rangeFormatting``: the top-level ops intersecting the range."""
    analysis, encoder = current_analysis(ls, params.text_document.uri)
    return convert.to_lsp_text_edits(format_range(analysis, _from_lsp_range(params.range, encoder)), encoder)


@guarded(default=None)
def on_semantic_tokens_full(ls: TileLanguageServer, params: types.SemanticTokensParams) -> types.SemanticTokens:
    """``textDocument/semanticTokens/full``: every token, relative-encoded for :data:`LEGEND`."""
    analysis, encoder = current_analysis(ls, params.text_document.uri)
    tokens = semantic_tokens(analysis)
    if not encoder.identity:
        from dataclasses import replace
        from tile_lsp.analysis.diagnostics import Position
        out = []
        for t in tokens:
            a = encoder.position(Position(t.line, t.start))
            b = encoder.position(Position(t.line, t.start + t.length))
            out.append(replace(t, start=a.character, length=b.character - a.character))
        tokens = out
    return types.SemanticTokens(data=encode(tokens))


@guarded(default=None)
def on_completion(ls: TileLanguageServer, params: types.CompletionParams) -> types.CompletionList | None:
    """``textDocument/completion``: values, symbols, labels, op names, enum cases, types."""
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    found = ls.document_index(uri)
    if found is None:
        analysis = analyze_text(document.source, ls.analysis_options(document.source))
        index = DocumentIndex(analysis)
    else:
        index = found[0]
        analysis = index.analysis
    encoder = PositionEncoder(document.source, ls.workspace.position_encoding)
    pos = convert.from_lsp_position(params.position, encoder)
    items = []
    for i, item in enumerate(completions(analysis, pos, index, text=document.source)):
        edit = None
        if item.replace is not None:
            edit = types.TextEdit(range=encoder.range(item.replace), new_text=item.label)
        items.append(types.CompletionItem(
            label=item.label,
            kind=_COMPLETION_KINDS.get(item.kind),
            detail=item.detail or None,
            text_edit=edit,
            sort_text=f"{i:05d}",
        ))
    return types.CompletionList(is_incomplete=False, items=items)


@guarded(default=[])
def on_inlay_hint(ls: TileLanguageServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    """``textDocument/inlayHint``: elided result types and tile sizes in the range."""
    analysis, encoder = current_analysis(ls, params.text_document.uri)
    hints = inlay_hints(analysis, _from_lsp_range(params.range, encoder))
    return [
        types.InlayHint(
            position=encoder.position(h.position),
            label=h.label,
            kind=types.InlayHintKind.Type if h.kind == "type" else None,
            padding_left=h.kind == "size",
        )
        for h in hints
    ]


def register_editing_features(server: TileLanguageServer) -> TileLanguageServer:
    """Register the editing handlers (and their capabilities) on ``server``; returns it."""
    server.feature(types.TEXT_DOCUMENT_FORMATTING)(on_formatting)
    server.feature(types.TEXT_DOCUMENT_RANGE_FORMATTING)(on_range_formatting)
    server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)(on_semantic_tokens_full)
    server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=["%", "@", "^", "<", ":"]),
    )(on_completion)
    server.feature(types.TEXT_DOCUMENT_INLAY_HINT)(on_inlay_hint)
    return server
