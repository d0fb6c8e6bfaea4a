"""Navigation features of the language server: thin adapters over
:class:`tile_lsp.analysis.ide.index.DocumentIndex`.

Feature: go to definition (``textDocument/definition``), find references
(``textDocument/references``), highlight of the symbol under the cursor
(``textDocument/documentHighlight``), hover (``textDocument/hover``, Markdown
from :func:`tile_lsp.analysis.ide.hover.hover_markdown`), rename
(``textDocument/prepareRename``, ``textDocument/rename``; a refused rename
answers LSP ``RequestFailed`` with the reason), the outline
(``textDocument/documentSymbol``), folding (``textDocument/foldingRange``),
expand selection (``textDocument/selectionRange``) and go to symbol in
workspace (``workspace/symbol``).  The index is built once per cached
analysis (:meth:`~tile_lsp.server.server.TileLanguageServer.document_index`).
"""

from __future__ import annotations

from lsprotocol import types

from tile_lsp.analysis.ir.diagnostics import Position
from tile_lsp.analysis.ide.index import DocumentIndex, RenameError
from tile_lsp.server import convert
from tile_lsp.server.convert import PositionEncoder
from tile_lsp.server.server import RequestFailed, TileLanguageServer, guarded


def _at(ls: TileLanguageServer, uri: str, position: types.Position) -> tuple[DocumentIndex, PositionEncoder, Position] | None:
    found = ls.document_index(uri)
    if found is None:
        return None
    index, encoder = found
    return index, encoder, convert.from_lsp_position(position, encoder)


@guarded(default=[])
def on_definition(ls: TileLanguageServer, params: types.DefinitionParams) -> list[types.Location]:
    """``textDocument/definition``: where the name under the cursor is defined."""
    uri = params.text_document.uri
    found = _at(ls, uri, params.position)
    if found is None:
        return []
    index, encoder, pos = found
    return convert.to_lsp_locations(uri, index.definition(pos), encoder)


@guarded(default=[])
def on_references(ls: TileLanguageServer, params: types.ReferenceParams) -> list[types.Location]:
    """``textDocument/references``: every occurrence of the name under the cursor."""
    uri = params.text_document.uri
    found = _at(ls, uri, params.position)
    if found is None:
        return []
    index, encoder, pos = found
    ranges = index.references(pos, include_declaration=params.context.include_declaration)
    return convert.to_lsp_locations(uri, ranges, encoder)


@guarded(default=[])
def on_document_highlight(ls: TileLanguageServer, params: types.DocumentHighlightParams) -> list[types.DocumentHighlight]:
    """``textDocument/documentHighlight``: definitions (write) and uses (read) of the name."""
    found = _at(ls, params.text_document.uri, params.position)
    if found is None:
        return []
    index, encoder, pos = found
    return convert.to_lsp_highlights(index.highlights(pos), encoder)


@guarded(default=None)
def on_hover(ls: TileLanguageServer, params: types.HoverParams) -> types.Hover | None:
    """``textDocument/hover``: Markdown from :func:`tile_lsp.analysis.ide.hover.hover_markdown`."""
    found = _at(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    from tile_lsp.analysis.ide.hover import hover_markdown

    index, encoder, pos = found
    text = hover_markdown(index, pos)
    if text is None:
        return None
    occ = index.occurrence_at(pos)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=encoder.range(occ.range) if occ is not None else None,
    )


@guarded(default=None)
def on_prepare_rename(ls: TileLanguageServer, params: types.PrepareRenameParams) -> types.PrepareRenamePlaceholder | None:
    """``textDocument/prepareRename``: the renamed range, or a refusal with its reason."""
    found = _at(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    index, encoder, pos = found
    try:
        prep = index.prepare_rename(pos)
    except RenameError as exc:
        raise RequestFailed(str(exc)) from None
    return types.PrepareRenamePlaceholder(range=encoder.range(prep.range), placeholder=prep.placeholder)


@guarded(default=None)
def on_rename(ls: TileLanguageServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
    """``textDocument/rename``: edits of every occurrence; refused names answer ``RequestFailed``."""
    uri = params.text_document.uri
    found = _at(ls, uri, params.position)
    if found is None:
        return None
    index, encoder, pos = found
    try:
        edits = index.rename(pos, params.new_name)
    except RenameError as exc:
        raise RequestFailed(str(exc)) from None
    return types.WorkspaceEdit(changes={uri: convert.to_lsp_text_edits(edits, encoder)})


@guarded(default=[])
def on_document_symbol(ls: TileLanguageServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
    """``textDocument/documentSymbol``: modules, entries, globals, functions (a namespace per chunk)."""
    found = ls.document_index(params.text_document.uri)
    if found is None:
        return []
    index, encoder = found
    return [convert.to_lsp_document_symbol(s, encoder) for s in index.document_symbols()]


@guarded(default=[])
def on_selection_range(ls: TileLanguageServer, params: types.SelectionRangeParams) -> list[types.SelectionRange]:
    """``textDocument/selectionRange``: name, enclosing ops and regions, chunk (innermost first)."""
    found = ls.document_index(params.text_document.uri)
    if found is None:
        return []
    index, encoder = found
    out: list[types.SelectionRange] = []
    for lsp_pos in params.positions:
        pos = convert.from_lsp_position(lsp_pos, encoder)
        chain: types.SelectionRange | None = None
        for rng in reversed(index.selection_ranges(pos)):
            chain = types.SelectionRange(range=encoder.range(rng), parent=chain)
        out.append(chain or types.SelectionRange(range=types.Range(start=lsp_pos, end=lsp_pos)))
    return out


@guarded(default=[])
def on_folding_range(ls: TileLanguageServer, params: types.FoldingRangeParams) -> list[types.FoldingRange]:
    """``textDocument/foldingRange``: regions, chunks of split files, comment blocks."""
    found = ls.document_index(params.text_document.uri)
    if found is None:
        return []
    return [convert.to_lsp_folding_range(f) for f in found[0].folding_ranges()]


@guarded(default=[])
def on_workspace_symbol(ls: TileLanguageServer, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
    """``workspace/symbol``: symbols of every open document whose name contains the query."""
    out: list[types.WorkspaceSymbol] = []
    for uri in ls.open_uris():
        found = ls.document_index(uri)
        if found is None:
            continue
        index, encoder = found
        for symbol, container in index.workspace_symbols(params.query):
            out.append(convert.to_lsp_workspace_symbol(uri, symbol, container, encoder))
    return out


def register_navigation_features(server: TileLanguageServer) -> None:
    """Register this module's handlers on ``server``."""
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(on_definition)
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(on_references)
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)(on_document_highlight)
    server.feature(types.TEXT_DOCUMENT_HOVER)(on_hover)
    server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)(on_prepare_rename)
    server.feature(types.TEXT_DOCUMENT_RENAME)(on_rename)
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(on_document_symbol)
    server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)(on_folding_range)
    server.feature(types.TEXT_DOCUMENT_SELECTION_RANGE)(on_selection_range)
    server.feature(types.WORKSPACE_SYMBOL)(on_workspace_symbol)
