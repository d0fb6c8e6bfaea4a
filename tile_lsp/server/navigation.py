"""Navigation features of the language server: thin adapters over
:class:`tile_lsp.analysis.ide.index.DocumentIndex`.

Feature: go to definition (``textDocument/definition``), find references
(``textDocument/references``), highlight of the symbol under the cursor
(``textDocument/documentHighlight``), hover (``textDocument/hover``, Markdown
from :func:`tile_lsp.analysis.ide.hover.hover_markdown`, with the op's
instruction count from the last Show PTX: :mod:`tile_lsp.server.codegen`), rename
(``textDocument/prepareRename``, ``textDocument/rename``; a refused rename
answers LSP ``RequestFailed`` with the reason), the outline
(``textDocument/documentSymbol``), folding (``textDocument/foldingRange``),
expand selection (``textDocument/selectionRange``) and go to symbol in
workspace (``workspace/symbol``).  The index is built once per cached
analysis (:meth:`~tile_lsp.server.server.TileLanguageServer.document_index`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types

from tile_lsp.analysis.ir.diagnostics import Position
from tile_lsp.analysis.ide.index import DocumentIndex, RenameError
from tile_lsp.server import convert
from tile_lsp.server.codegen import ptx_hover_note
from tile_lsp.server.convert import PositionEncoder
from tile_lsp.server.server import RequestFailed, TileLanguageServer, guarded


def _index_handler(default: Any, position: bool = True,
                   server: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Make a guarded handler ``(ls, params)`` of a document request from its answer.

    The answer is called as ``answer(params, index, encoder, pos)``: the document's
    index and position encoder, and the request's position converted (without
    ``pos`` when ``position`` is false; with the server ``ls`` first when
    ``server`` is true).  While the document has no analysis yet the request
    is answered ``default``.
    """

    def decorate(answer: Callable[..., Any]) -> Callable[..., Any]:
        def handler(ls: TileLanguageServer, params: Any) -> Any:
            found = ls.document_index(params.text_document.uri)
            if found is None:
                return default
            index, encoder = found
            args = (ls, params) if server else (params,)
            if not position:
                return answer(*args, index, encoder)
            return answer(*args, index, encoder, convert.from_lsp_position(params.position, encoder))

        handler.__name__, handler.__qualname__, handler.__doc__ = answer.__name__, answer.__qualname__, answer.__doc__
        return guarded(default=default)(handler)

    return decorate


@_index_handler(default=[])
def on_definition(params: types.DefinitionParams, index: DocumentIndex, encoder: PositionEncoder,
                  pos: Position) -> list[types.Location]:
    """``textDocument/definition``: where the name under the cursor is defined."""
    return convert.to_lsp_locations(params.text_document.uri, index.definition(pos), encoder)


@_index_handler(default=[])
def on_references(params: types.ReferenceParams, index: DocumentIndex, encoder: PositionEncoder,
                  pos: Position) -> list[types.Location]:
    """``textDocument/references``: every occurrence of the name under the cursor."""
    ranges = index.references(pos, include_declaration=params.context.include_declaration)
    return convert.to_lsp_locations(params.text_document.uri, ranges, encoder)


@_index_handler(default=[])
def on_document_highlight(params: types.DocumentHighlightParams, index: DocumentIndex, encoder: PositionEncoder,
                          pos: Position) -> list[types.DocumentHighlight]:
    """``textDocument/documentHighlight``: definitions (write) and uses (read) of the name."""
    return convert.to_lsp_highlights(index.highlights(pos), encoder)


@_index_handler(default=None, server=True)
def on_hover(ls: TileLanguageServer, params: types.HoverParams, index: DocumentIndex, encoder: PositionEncoder,
             pos: Position) -> types.Hover | None:
    """``textDocument/hover``: Markdown from :func:`tile_lsp.analysis.ide.hover.hover_markdown`, and for
    an op the last Show PTX of this version counted, its line (:func:`~tile_lsp.server.codegen.ptx_hover_note`)."""
    from tile_lsp.analysis.ide.hover import hover_markdown

    text = hover_markdown(index, pos)
    if text is None:
        return None
    op = index.op_at(pos)
    note = ptx_hover_note(ls, params.text_document.uri, op.range.start) if op is not None and op.range else None
    if note is not None:
        text = f"{text}\n\n{note}"
    occ = index.occurrence_at(pos)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=encoder.range(occ.range) if occ is not None else None,
    )


@_index_handler(default=None)
def on_prepare_rename(params: types.PrepareRenameParams, index: DocumentIndex, encoder: PositionEncoder,
                      pos: Position) -> types.PrepareRenamePlaceholder | None:
    """``textDocument/prepareRename``: the renamed range, or a refusal with its reason."""
    try:
        prep = index.prepare_rename(pos)
    except RenameError as exc:
        raise RequestFailed(str(exc)) from None
    return types.PrepareRenamePlaceholder(range=encoder.range(prep.range), placeholder=prep.placeholder)


@_index_handler(default=None)
def on_rename(params: types.RenameParams, index: DocumentIndex, encoder: PositionEncoder,
              pos: Position) -> types.WorkspaceEdit | None:
    """``textDocument/rename``: edits of every occurrence; refused names answer ``RequestFailed``."""
    try:
        edits = index.rename(pos, params.new_name)
    except RenameError as exc:
        raise RequestFailed(str(exc)) from None
    return types.WorkspaceEdit(changes={params.text_document.uri: convert.to_lsp_text_edits(edits, encoder)})


@_index_handler(default=[], position=False)
def on_document_symbol(params: types.DocumentSymbolParams, index: DocumentIndex,
                       encoder: PositionEncoder) -> list[types.DocumentSymbol]:
    """``textDocument/documentSymbol``: modules, entries, globals, functions (a namespace per chunk)."""
    return [convert.to_lsp_document_symbol(s, encoder) for s in index.document_symbols()]


@_index_handler(default=[], position=False)
def on_selection_range(params: types.SelectionRangeParams, index: DocumentIndex,
                       encoder: PositionEncoder) -> list[types.SelectionRange]:
    """``textDocument/selectionRange``: name, enclosing ops and regions, chunk (innermost first)."""
    out: list[types.SelectionRange] = []
    for lsp_pos in params.positions:
        pos = convert.from_lsp_position(lsp_pos, encoder)
        chain: types.SelectionRange | None = None
        for rng in reversed(index.selection_ranges(pos)):
            chain = types.SelectionRange(range=encoder.range(rng), parent=chain)
        out.append(chain or types.SelectionRange(range=types.Range(start=lsp_pos, end=lsp_pos)))
    return out


@_index_handler(default=[], position=False)
def on_folding_range(params: types.FoldingRangeParams, index: DocumentIndex,
                     encoder: PositionEncoder) -> list[types.FoldingRange]:
    """``textDocument/foldingRange``: regions, chunks of split files, comment blocks."""
    return [convert.to_lsp_folding_range(f) for f in index.folding_ranges()]


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
