"""Editing features of the tile-lsp server: thin LSP adapters over the analysis layer.

:func:`register_editing_features` adds to a :class:`~tile_lsp.server.server.TileLanguageServer`:

* ``textDocument/formatting`` and ``rangeFormatting``
  (:mod:`tile_lsp.analysis.ide.formatting`; no edits when refused);
* ``textDocument/semanticTokens/full`` (:mod:`tile_lsp.analysis.ide.semantic_tokens`,
  legend from its ``TOKEN_TYPES``/``TOKEN_MODIFIERS``) and
  ``semanticTokens/full/delta``: the last result of each document is kept
  with its ``resultId``; a delta is the edit between the common prefix and
  suffix of the two integer arrays (:func:`token_delta`), or the full
  tokens when the client's ``previousResultId`` is not the one kept;
* ``textDocument/completion`` (:mod:`tile_lsp.analysis.ide.completion`; trigger
  characters ``%``, ``@``, ``^``, ``<``, ``:``);
* ``textDocument/inlayHint`` (:mod:`tile_lsp.analysis.ide.inlay_hints`), the two
  kinds switched by the ``inlayHints.*`` settings;
* ``textDocument/signatureHelp`` (:mod:`tile_lsp.analysis.ide.signature_help`,
  read from the current text; trigger characters :data:`SIGNATURE_TRIGGERS`);
* ``textDocument/codeAction`` (:mod:`tile_lsp.analysis.ide.code_actions`): quick
  fixes attached to the client's diagnostics they fix, and the expected-*
  checks actions, each a ``WorkspaceEdit`` of the document.

Formatting, semantic tokens and inlay hints must describe the text the
client has now: they use the cached analysis when its version is the
document's, else analyse the current text on the spot.  Completion uses the
cached analysis (the IR of the last text analysed, which knows the values a
half-typed line would hide) and reads the context from the current text.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from itertools import count

from lsprotocol import types

from tile_lsp.analysis.api import DocumentAnalysis
from tile_lsp.analysis.ide.code_actions import QUICK_FIX, code_actions
from tile_lsp.analysis.ide.completion import completions
from tile_lsp.analysis.ir.diagnostics import Range
from tile_lsp.analysis.ide.formatting import format_document, format_range
from tile_lsp.analysis.ide.index import DocumentIndex
from tile_lsp.analysis.ide.inlay_hints import InlayHintOptions, inlay_hints
from tile_lsp.analysis.ide.semantic_tokens import (
    TOKEN_MODIFIERS,
    TOKEN_TYPES,
    encode,
    semantic_tokens,
)
from tile_lsp.analysis.ide.signature_help import signature_help
from tile_lsp.server import convert
from tile_lsp.server.convert import PositionEncoder
from tile_lsp.server.server import TileLanguageServer, guarded

#: Legend sent in the server's capabilities.
LEGEND = types.SemanticTokensLegend(token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS))

#: Characters after which the client asks for signature help, and those after which it asks again.
SIGNATURE_TRIGGERS = [" ", ",", "(", "[", "=", "<"]
SIGNATURE_RETRIGGERS = [")", "]", ">", ":"]

#: Documents whose last semantic tokens are kept for deltas (least recently asked dropped first).
SEMANTIC_TOKEN_CACHE_SIZE = 64

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
    """:meth:`TileLanguageServer.current_analysis` and the position encoder of its text."""
    analysis = ls.current_analysis(uri)
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


def token_delta(old: list[int], new: list[int]) -> list[types.SemanticTokensEdit]:
    """The edit turning ``old`` into ``new``: replace what lies between their common prefix and suffix.

    No edit when the arrays are equal.  Applying the edit (``old[start:start + deleteCount] = data``)
    gives ``new``.
    """
    if old == new:
        return []
    limit = min(len(old), len(new))
    prefix = _common_length(old, new, limit, lambda a, b, n: a[b:b + n], forward=True)
    suffix = _common_length(old, new, limit - prefix,
                            lambda a, b, n: a[len(a) - b - n:len(a) - b], forward=False)
    return [types.SemanticTokensEdit(start=prefix, delete_count=len(old) - prefix - suffix,
                                     data=new[prefix:len(new) - suffix])]


def _common_length(old: list[int], new: list[int], limit: int, window, forward: bool) -> int:
    """Length of the common prefix (``forward``) or suffix of two lists, at most ``limit``.

    Compares blocks first (list equality runs in C), then element by element.
    """
    done, block = 0, 4096
    while block:
        while done + block <= limit and window(old, done, block) == window(new, done, block):
            done += block
        block //= 8
    while done < limit:
        i = done if forward else -1 - done
        if old[i] != new[i]:
            break
        done += 1
    return done


class _TokenCache:
    """The last semantic tokens sent for each document, with their result ids."""

    def __init__(self) -> None:
        self.results: OrderedDict[str, tuple[str, list[int]]] = OrderedDict()
        self.ids = count(1)

    def store(self, uri: str, data: list[int]) -> str:
        result_id = str(next(self.ids))
        self.results[uri] = (result_id, data)
        self.results.move_to_end(uri)
        while len(self.results) > SEMANTIC_TOKEN_CACHE_SIZE:
            self.results.popitem(last=False)
        return result_id

    def previous(self, uri: str, result_id: str) -> list[int] | None:
        found = self.results.get(uri)
        return found[1] if found is not None and found[0] == result_id else None


def _token_cache(ls: TileLanguageServer) -> _TokenCache:
    cache = getattr(ls, "_tile_lsp_token_cache", None)
    if cache is None:
        cache = _TokenCache()
        ls._tile_lsp_token_cache = cache  # type: ignore[attr-defined]
    return cache


@guarded(default=None)
def on_semantic_tokens_full(ls: TileLanguageServer, params: types.SemanticTokensParams) -> types.SemanticTokens:
    """``textDocument/semanticTokens/full``: every token, relative-encoded for :data:`LEGEND`, with a result id."""
    uri = params.text_document.uri
    data = _semantic_token_data(ls, uri)
    return types.SemanticTokens(data=data, result_id=_token_cache(ls).store(uri, data))


@guarded(default=None)
def on_semantic_tokens_delta(ls: TileLanguageServer, params: types.SemanticTokensDeltaParams
                             ) -> types.SemanticTokensDelta | types.SemanticTokens:
    """``textDocument/semanticTokens/full/delta``: the edit from the result ``previousResultId``.

    The full tokens when that result is not the one kept for the document.
    """
    uri = params.text_document.uri
    cache = _token_cache(ls)
    old = cache.previous(uri, params.previous_result_id)
    data = _semantic_token_data(ls, uri)
    result_id = cache.store(uri, data)
    if old is None:
        return types.SemanticTokens(data=data, result_id=result_id)
    return types.SemanticTokensDelta(edits=token_delta(old, data), result_id=result_id)


def _semantic_token_data(ls: TileLanguageServer, uri: str) -> list[int]:
    analysis, encoder = current_analysis(ls, uri)
    tokens = semantic_tokens(analysis)
    if not encoder.identity:
        from dataclasses import replace

        from tile_lsp.analysis.ir.diagnostics import Position
        out = []
        for t in tokens:
            a = encoder.position(Position(t.line, t.start))
            b = encoder.position(Position(t.line, t.start + t.length))
            out.append(replace(t, start=a.character, length=b.character - a.character))
        tokens = out
    return encode(tokens)


@guarded(default=None)
def on_completion(ls: TileLanguageServer, params: types.CompletionParams) -> types.CompletionList | None:
    """``textDocument/completion``: values, symbols, labels, op names, enum cases, types."""
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    found = ls.document_index(uri)
    if found is None:
        analysis = ls.current_analysis(uri)
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
    options = InlayHintOptions(result_types=ls.settings.show_result_types, tile_sizes=ls.settings.show_tile_sizes)
    hints = inlay_hints(analysis, _from_lsp_range(params.range, encoder), options)
    return [
        types.InlayHint(
            position=encoder.position(h.position),
            label=h.label,
            kind=types.InlayHintKind.Type if h.kind == "type" else None,
            padding_left=h.kind == "size",
        )
        for h in hints
    ]


@guarded(default=None)
def on_signature_help(ls: TileLanguageServer, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
    """``textDocument/signatureHelp``: the op at the cursor, from the current text (parsed or not)."""
    document = ls.workspace.get_text_document(params.text_document.uri)
    encoder = PositionEncoder(document.source, ls.workspace.position_encoding)
    found = signature_help(document.source, convert.from_lsp_position(params.position, encoder))
    if found is None:
        return None
    sig = found.signature
    # no active slot (the cursor on the op name, or past the last slot): an index past the parameters,
    # which clients highlight nothing for (an omitted index would mean the first parameter)
    active = found.active_parameter if found.active_parameter is not None else len(sig.parameters)
    info = types.SignatureInformation(
        label=sig.label,
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=sig.doc),
        parameters=[types.ParameterInformation(
            label=p.label, documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=p.doc))
            for p in sig.parameters],
        active_parameter=active,
    )
    return types.SignatureHelp(signatures=[info], active_signature=0, active_parameter=active)


def _client_diagnostic(diag, context: list[types.Diagnostic], uri: str, encoder: PositionEncoder) -> types.Diagnostic:
    """The client's copy of an analysis diagnostic (same message and range), else its conversion."""
    rng = encoder.range(diag.range)
    for d in context:
        if d.message == diag.message and d.range == rng:
            return d
    return convert.to_lsp_diagnostic(diag, uri, encoder)


@guarded(default=[])
async def on_code_action(ls: TileLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """``textDocument/codeAction``: quick fixes and the expected-* checks actions for the range.

    Computed in a worker thread: the expected-* actions analyse a chunk in
    ``-verify-diagnostics`` mode, which must not hold up other requests.
    """
    only = params.context.only
    if only and not any(str(k.value if hasattr(k, "value") else k).split(".")[0] == QUICK_FIX for k in only):
        return []
    return await asyncio.get_running_loop().run_in_executor(None, _code_actions, ls, params)


def _code_actions(ls: TileLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    analysis, encoder = current_analysis(ls, uri)
    rng = _from_lsp_range(params.range, encoder)
    wanted = {(d.message, _from_lsp_range(d.range, encoder)) for d in params.context.diagnostics}
    out = []
    for action in code_actions(analysis, rng, ls.analysis_options(analysis.text), wanted):
        out.append(types.CodeAction(
            title=action.title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[_client_diagnostic(d, params.context.diagnostics, uri, encoder)
                         for d in action.diagnostics] or None,
            edit=types.WorkspaceEdit(changes={uri: convert.to_lsp_text_edits(action.edits, encoder)}),
            is_preferred=action.preferred or None,
        ))
    return out


def register_editing_features(server: TileLanguageServer) -> TileLanguageServer:
    """Register the editing handlers (and their capabilities) on ``server``; returns it."""
    server.feature(types.TEXT_DOCUMENT_FORMATTING)(on_formatting)
    server.feature(types.TEXT_DOCUMENT_RANGE_FORMATTING)(on_range_formatting)
    server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)(on_semantic_tokens_full)
    server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, LEGEND)(on_semantic_tokens_delta)
    server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=["%", "@", "^", "<", ":"]),
    )(on_completion)
    server.feature(types.TEXT_DOCUMENT_INLAY_HINT)(on_inlay_hint)
    server.feature(
        types.TEXT_DOCUMENT_SIGNATURE_HELP,
        types.SignatureHelpOptions(trigger_characters=SIGNATURE_TRIGGERS, retrigger_characters=SIGNATURE_RETRIGGERS),
    )(on_signature_help)
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )(on_code_action)
    return server
