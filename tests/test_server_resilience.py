"""Resilience of the server (issue: "a syntax error in one op, a crash in one feature").

Through pytest-lsp against real server processes:

* with a syntax error in one entry of a module, diagnostics name only that
  error, and hover, definition, references, completion, document symbols and
  folding keep answering for the rest of the file (and for the broken entry's
  lines that parsed); an edit that repairs the entry clears the error;
* a feature that raises is logged (``window/logMessage``, error, with the
  traceback), answered with its empty result, and the server goes on
  answering other requests and publishing diagnostics.
"""

from __future__ import annotations

import asyncio
import sys
import time

import pytest
from lsprotocol import types

from tests.test_server_lsp import (  # noqa: F401
    RecordingClient,
    change_doc,
    client,
    edit,
    initialize,
    open_doc,
    recording_server,
    wait_for_publish,
)

TWO_ENTRIES = (
    "cuda_tile.module @m {\n"                                   # 0
    "  entry @first(%a: tile<i32>) {\n"                         # 1
    "    %s = addi %a, %a : tile<i32>\n"                        # 2
    "    %t = muli %s %s : tile<i32>\n"                         # 3  <- missing comma
    "    %u = subi %s, %a : tile<i32>\n"                        # 4
    "    return\n"                                              # 5
    "  }\n"                                                     # 6
    "  entry @second(%b: tile<i32>) {\n"                        # 7
    "    %x = addi %b, %b : tile<i32>\n"                        # 8
    "    %y = muli %x, %b : tile<i32>\n"                        # 9
    "    return\n"                                              # 10
    "  }\n"                                                     # 11
    "}\n"                                                       # 12
)


def _r(line: int, start: int, end: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=start), end=types.Position(line=line, character=end))


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def _pos(line: int, col: int) -> types.Position:
    return types.Position(line=line, character=col)


@pytest.mark.asyncio
async def test_every_feature_works_past_a_syntax_error_in_one_entry(client: RecordingClient):  # noqa: F811
    await initialize(client)
    uri = "file:///workspace/two.mlir"
    open_doc(client, uri, TWO_ENTRIES)
    published = await wait_for_publish(client, uri, timeout=60.0)
    assert [(d.range, d.message) for d in published.diagnostics] == [(_r(3, 16, 16), "expected ','")]

    # the other entry: definition, references, hover, completion
    got = await client.text_document_definition_async(types.DefinitionParams(text_document=_doc(uri), position=_pos(9, 15)))
    assert got == [types.Location(uri=uri, range=_r(8, 4, 6))]
    refs = await client.text_document_references_async(types.ReferenceParams(
        text_document=_doc(uri), position=_pos(8, 5), context=types.ReferenceContext(include_declaration=True)))
    assert [r.range for r in refs] == [_r(8, 4, 6), _r(9, 14, 16)]
    hover = await client.text_document_hover_async(types.HoverParams(text_document=_doc(uri), position=_pos(9, 15)))
    assert hover is not None and "tile<i32>" in hover.contents.value
    completion = await client.text_document_completion_async(types.CompletionParams(
        text_document=_doc(uri), position=_pos(9, 19)))
    labels = [item.label for item in completion.items]
    assert "%x" in labels and "%b" in labels and "%s" not in labels

    # the broken entry: the statements that parsed still answer
    got = await client.text_document_definition_async(types.DefinitionParams(text_document=_doc(uri), position=_pos(4, 15)))
    assert got == [types.Location(uri=uri, range=_r(2, 4, 6))]

    # outline and folding cover both entries
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=_doc(uri)))
    assert [s.name for s in symbols] == ["@m"]
    assert [c.name for c in symbols[0].children] == ["@first", "@second"]
    folds = await client.text_document_folding_range_async(types.FoldingRangeParams(text_document=_doc(uri)))
    assert [(f.start_line, f.end_line) for f in folds] == [(0, 11), (1, 5), (7, 10)]

    # typing the comma repairs the entry
    change_doc(client, uri, 2, [edit(3, 16, 3, 16, ",")])
    published = await wait_for_publish(client, uri, version=2, count=2, timeout=60.0)
    assert list(published.diagnostics) == []


CRASHING_HOVER = """
import tile_lsp.analysis.ide.hover as hover
from tile_lsp.server.app import serve_stdio

def explode(index, pos):
    raise RuntimeError("hover exploded")

hover.hover_markdown = explode
serve_stdio()
"""


crashing_client = recording_server([sys.executable, "-c", CRASHING_HOVER],
                                   "A client connected to a server whose hover raises.")


@pytest.mark.asyncio
async def test_a_crashing_feature_is_logged_answered_empty_and_not_fatal(crashing_client: RecordingClient):
    client = crashing_client  # noqa: F811
    await initialize(client)
    uri = "file:///workspace/crash.mlir"
    open_doc(client, uri, TWO_ENTRIES)
    await wait_for_publish(client, uri, timeout=60.0)
    for _ in range(2):  # twice: the first crash did not leave the server broken
        hover = await client.text_document_hover_async(types.HoverParams(text_document=_doc(uri), position=_pos(9, 15)))
        assert hover is None
    deadline = time.monotonic() + 30
    while not any("hover exploded" in m.message for m in client.log_messages):
        assert time.monotonic() < deadline, "the crash was not logged"
        await asyncio.sleep(0.01)
    logged = next(m for m in client.log_messages if "hover exploded" in m.message)
    assert logged.type == types.MessageType.Error
    assert "Traceback" in logged.message and "on_hover" in logged.message
    # other features and the analysis go on
    got = await client.text_document_definition_async(types.DefinitionParams(text_document=_doc(uri), position=_pos(9, 15)))
    assert got == [types.Location(uri=uri, range=_r(8, 4, 6))]
    change_doc(client, uri, 2, [edit(3, 16, 3, 16, ",")])
    published = await wait_for_publish(client, uri, version=2, count=2, timeout=60.0)
    assert list(published.diagnostics) == []
