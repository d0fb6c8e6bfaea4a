"""IndexedTextDocument (tile_lsp.server.document) applies changes as pygls' TextDocument does, over LSP lines.

pygls splits lines with ``str.splitlines``; LSP breaks lines only at ``\\n``,
``\\r\\n`` and ``\\r`` (issue 16), so the reference is pygls' algorithm with
LSP lines.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument

from tile_lsp.server.document import IndexedTextDocument, lsp_lines

TEXT = st.lists(st.sampled_from(list("ab %{}\n") + ["\r\n", "\r", "é", "😋", "\f", "\v", "\x1c", "\x85",
                                                   "\u2028", "\u2029"]), max_size=40).map("".join)


class LspTextDocument(TextDocument):
    """pygls' document with LSP lines: the reference."""

    @property
    def lines(self):
        return lsp_lines(self.source)
CHANGE = st.tuples(st.integers(0, 8), st.integers(0, 12), st.integers(0, 8), st.integers(0, 12), TEXT)


def _documents(text: str, encoding: types.PositionEncodingKind):
    kwargs = {"version": 0, "sync_kind": types.TextDocumentSyncKind.Incremental,
              "position_codec": PositionCodec(encoding)}
    return LspTextDocument("file:///a.mlir", text, **kwargs), IndexedTextDocument("file:///a.mlir", text, **kwargs)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, changes=st.lists(CHANGE, min_size=1, max_size=6),
       encoding=st.sampled_from([types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf32]))
def test_same_text_as_pygls(text, changes, encoding):
    reference, ours = _documents(text, encoding)
    for l1, c1, l2, c2, new in changes:
        start, end = sorted([(l1, c1), (l2, c2)])
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(*start), end=types.Position(*end)), text=new)
        reference.apply_change(change)
        ours.apply_change(change)
        assert ours.source == reference.source
        assert ours.lines == reference.lines
