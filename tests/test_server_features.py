"""End-to-end tests of the editor features of the server (definition, references, hover, rename, symbols).

The server runs in a subprocess driven by pytest-lsp; the client fixture and
helpers are those of ``tests/test_server_lsp.py``.  Expected ranges are
computed from the kernel's own text, so they are exact.
"""

from __future__ import annotations

import pathlib

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.test_server_lsp import RecordingClient, client, initialize, open_doc, wait_for_publish  # noqa: F401

KERNEL = "activations_gelu_f32_b256.sm_100.mlir"

BROKEN = (
    "cuda_tile.module @m {\n"
    "  entry @e(%a: tile<i32>) {\n"
    "    %0 = addi %a %a : tile<i32>\n"
    "    %1 = addi %a, %a : tile<i32>\n"
    "    %2 = muli %1, %1 : tile<i32>\n"
    "    return\n"
    "  }\n"
    "}\n"
)


def _range(line: int, start: int, end: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=start), end=types.Position(line=line, character=end))


def _find(lines: list[str], needle: str, line: int | None = None) -> tuple[int, int]:
    """(line, column) of the first ``needle`` (on ``line`` if given)."""
    for n, text in enumerate(lines):
        if line is not None and n != line:
            continue
        col = text.find(needle)
        if col >= 0:
            return n, col
    raise AssertionError(f"{needle!r} not found")


def _occurrences(lines: list[str], name: str) -> list[types.Range]:
    """Ranges of ``name`` as a whole SSA name (not a prefix of a longer one)."""
    out = []
    for n, text in enumerate(lines):
        col = text.find(name)
        while col >= 0:
            after = text[col + len(name):col + len(name) + 1]
            if not (after.isalnum() or after in "_#"):
                out.append(_range(n, col, col + len(name)))
            col = text.find(name, col + 1)
    return out


async def _open_kernel(client: RecordingClient, corpus: pathlib.Path) -> tuple[str, list[str]]:
    await initialize(client)
    path = corpus / "kernels" / KERNEL
    text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    open_doc(client, uri, text)
    published = await wait_for_publish(client, uri, timeout=30.0)
    assert list(published.diagnostics) == []
    return uri, text.split("\n")


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def _pos(line: int, col: int) -> types.Position:
    return types.Position(line=line, character=col)


@pytest.mark.asyncio
async def test_definition_references_and_highlights(client: RecordingClient, corpus):
    uri, lines = await _open_kernel(client, corpus)
    uses = _occurrences(lines, "%tview_3")
    assert len(uses) == 2                                   # definition + one use
    use = uses[1].start
    got = await client.text_document_definition_async(
        types.DefinitionParams(text_document=_doc(uri), position=_pos(use.line, use.character + 2)))
    assert got == [types.Location(uri=uri, range=uses[0])]

    tokens = _occurrences(lines, "%0")
    refs = await client.text_document_references_async(types.ReferenceParams(
        text_document=_doc(uri), position=tokens[0].start,
        context=types.ReferenceContext(include_declaration=True)))
    assert [r.range for r in refs] == tokens

    highlights = await client.text_document_document_highlight_async(
        types.DocumentHighlightParams(text_document=_doc(uri), position=tokens[-1].start))
    assert [(h.range, h.kind) for h in highlights] == [(tokens[0], types.DocumentHighlightKind.Write)] + [
        (r, types.DocumentHighlightKind.Read) for r in tokens[1:]]


@pytest.mark.asyncio
async def test_hover_on_op_and_value(client: RecordingClient, corpus):
    uri, lines = await _open_kernel(client, corpus)
    line, col = _find(lines, "tanh")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=_pos(line, col + 1)))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert "cuda_tile.tanh" in hover.contents.value
    assert "`%4` : `tile<256xf32>`" in hover.contents.value
    assert hover.range == _range(line, col, col + 4)

    line, col = _find(lines, "%tile,")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=_pos(line, col + 1)))
    uses = len(_occurrences(lines, "%tile")) - 1
    assert hover.contents.value == (
        "`%tile` : `tile<256xf32>`\n\n256 elements of `f32`, 1024 bytes (4 bytes per element)\n\n"
        f"result #0 (`tile`) of `cuda_tile.load_view_tko` (line {line + 1})\n\n{uses} uses")

    nothing = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=_pos(len(lines) + 5, 0)))
    assert nothing is None


@pytest.mark.asyncio
async def test_rename_and_prepare_rename(client: RecordingClient, corpus):
    uri, lines = await _open_kernel(client, corpus)
    occ = _occurrences(lines, "%bcast_6")
    prep = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=_doc(uri), position=occ[1].start))
    assert prep.range == occ[1] and prep.placeholder == "%bcast_6"

    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=_doc(uri), position=occ[0].start, new_name="%scale"))
    assert [(e.range, e.new_text) for e in edit.changes[uri]] == [(r, "%scale") for r in occ]

    line, col = _find(lines, "mulf")
    with pytest.raises(JsonRpcException, match="operation names cannot be renamed"):
        await client.text_document_prepare_rename_async(
            types.PrepareRenameParams(text_document=_doc(uri), position=_pos(line, col)))
    with pytest.raises(JsonRpcException, match="is not a valid value name"):
        await client.text_document_rename_async(
            types.RenameParams(text_document=_doc(uri), position=occ[0].start, new_name="%not valid"))


@pytest.mark.asyncio
async def test_document_and_workspace_symbols(client: RecordingClient, corpus):
    uri, lines = await _open_kernel(client, corpus)
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=_doc(uri)))
    name = lines[0].split()[1].split("(")[0]
    assert [(s.name, s.kind) for s in symbols] == [(name, types.SymbolKind.Function)]
    assert symbols[0].selection_range == _range(0, 6, 6 + len(name))
    assert symbols[0].detail.startswith("entry (tile<ptr<f32>>, tile<i32>")

    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="activations_kt1"))
    assert [(s.name, s.location.uri, s.location.range) for s in found] == [(name, uri, _range(0, 6, 6 + len(name)))]

    # selection ranges: from the entry's name out to the whole chunk
    (sel,) = await client.text_document_selection_range_async(types.SelectionRangeParams(
        text_document=_doc(uri), positions=[types.Position(line=0, character=8)]))
    chain = []
    while sel is not None:
        chain.append(sel.range)
        sel = sel.parent
    assert chain[0] == _range(0, 6, 6 + len(name))
    assert chain[-1].start == types.Position(line=0, character=0)
    assert len(chain) >= 2


@pytest.mark.asyncio
async def test_features_survive_a_syntax_error(client: RecordingClient):
    await initialize(client)
    uri = "file:///workspace/broken.mlir"
    open_doc(client, uri, BROKEN)
    published = await wait_for_publish(client, uri, timeout=30.0)
    assert [d.range for d in published.diagnostics] == [_range(2, 16, 16)]
    got = await client.text_document_definition_async(
        types.DefinitionParams(text_document=_doc(uri), position=_pos(4, 15)))
    assert got == [types.Location(uri=uri, range=_range(3, 4, 6))]
    folds = await client.text_document_folding_range_async(types.FoldingRangeParams(text_document=_doc(uri)))
    assert [(f.start_line, f.end_line) for f in folds] == [(0, 6), (1, 5)]
