"""Conversion of tile-lsp diagnostics into ``lsprotocol`` diagnostics.

The analysis layer already speaks LSP coordinates (0-based line, UTF-16
column), so the conversion is mostly a change of classes.  The one thing it
may have to do is re-encode columns when the client negotiated another
position encoding (``utf-8`` or ``utf-32``) during ``initialize``.
"""

from __future__ import annotations

from collections.abc import Iterable

from lsprotocol import types

from tile_lsp.analysis.ide import index as _index
from tile_lsp.analysis.ir.diagnostics import Diagnostic, Position, Range, Severity

#: Source name attached to every published diagnostic.
SOURCE = "tile-lsp"

#: MLIR severity name -> LSP severity.
SEVERITY_TO_LSP: dict[Severity, types.DiagnosticSeverity] = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
    Severity.REMARK: types.DiagnosticSeverity.Hint,
}

_UTF16 = str(types.PositionEncodingKind.Utf16.value)
_UTF8 = str(types.PositionEncodingKind.Utf8.value)
_UTF32 = str(types.PositionEncodingKind.Utf32.value)


def _encoding_name(encoding: types.PositionEncodingKind | str | None) -> str:
    if encoding is None:
        return _UTF16
    if isinstance(encoding, types.PositionEncodingKind):
        return str(encoding.value)
    return str(encoding)


class PositionEncoder:
    """Re-encodes UTF-16 positions of ``text`` into the client's encoding.

    ``encoding`` is the position encoding negotiated with the client
    (``None`` or ``utf-16`` mean no conversion at all).  ``text`` is the text
    the positions refer to, i.e. the analysed text; it is only needed for
    ``utf-8`` and ``utf-32`` clients.
    """

    def __init__(self, text: str | None = None, encoding: types.PositionEncodingKind | str | None = None):
        name = _encoding_name(encoding)
        self.encoding = name if name in (_UTF8, _UTF32) else _UTF16
        self._lines: list[str] | None = None
        if self.encoding != _UTF16 and text is not None:
            self._lines = text.split("\n")

    @property
    def identity(self) -> bool:
        """True when positions pass through unchanged (UTF-16 client or no text)."""
        return self.encoding == _UTF16 or self._lines is None

    def position(self, pos: Position) -> types.Position:
        """LSP position of the tile-lsp (UTF-16) position ``pos``."""
        if self.identity:
            return types.Position(line=max(0, pos.line), character=max(0, pos.character))
        assert self._lines is not None
        if pos.line < 0 or pos.line >= len(self._lines):
            return types.Position(line=max(0, pos.line), character=max(0, pos.character))
        line = self._lines[pos.line]
        if line.isascii():
            return types.Position(line=pos.line, character=min(pos.character, len(line)))
        units16 = 0
        out = 0
        for ch in line:
            if units16 >= pos.character:
                break
            wide = ord(ch) > 0xFFFF
            units16 += 2 if wide else 1
            if self.encoding == _UTF8:
                out += len(ch.encode("utf-8", errors="surrogatepass"))
            else:
                out += 1
        return types.Position(line=pos.line, character=out)

    def range(self, rng: Range | None) -> types.Range:
        """LSP range of ``rng``; ``None`` (MLIR's unknown location) becomes 0:0-0:0."""
        if rng is None:
            zero = types.Position(line=0, character=0)
            return types.Range(start=zero, end=zero)
        return types.Range(start=self.position(rng.start), end=self.position(rng.end))


def to_lsp_diagnostic(diag: Diagnostic, uri: str, encoder: PositionEncoder | None = None) -> types.Diagnostic:
    """Convert one tile-lsp :class:`Diagnostic` of document ``uri`` to LSP.

    Notes become ``relatedInformation``: a note's location is its own ``uri``
    (or ``uri`` when it has none) and its own range (or the diagnostic's range
    when it has none).  Notes in other documents keep their positions as they
    are, since their text is not at hand.  ``source`` is the diagnostic's own
    (``tile-lsp`` by default).
    """
    encoder = encoder or PositionEncoder()
    rng = encoder.range(diag.range)
    related: list[types.DiagnosticRelatedInformation] = []
    for note in diag.notes:
        note_uri = note.uri or uri
        if note.range is None:
            note_range = rng
        elif note.uri is None or note.uri == uri:
            note_range = encoder.range(note.range)
        else:
            note_range = PositionEncoder().range(note.range)
        related.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=note_uri, range=note_range),
                message=note.message,
            )
        )
    return types.Diagnostic(
        range=rng,
        message=diag.message,
        severity=SEVERITY_TO_LSP.get(diag.severity, types.DiagnosticSeverity.Error),
        code=diag.code or None,
        source=diag.source or SOURCE,
        related_information=related or None,
    )


def to_lsp_diagnostics(
    diagnostics: Iterable[Diagnostic],
    uri: str,
    *,
    text: str | None = None,
    encoding: types.PositionEncodingKind | str | None = None,
) -> list[types.Diagnostic]:
    """Convert the diagnostics of document ``uri`` (whose analysed text is ``text``).

    ``encoding`` is the client's negotiated position encoding; ``None`` means
    UTF-16, the LSP default and the analysis' own.
    """
    encoder = PositionEncoder(text, encoding)
    return [to_lsp_diagnostic(d, uri, encoder) for d in diagnostics]


# -- editor features --------------------------------------------------------------
#
# The analysis layer answers in its own classes (tile_lsp/analysis/ide/index.py);
# these functions only change classes and position encodings.

#: Outline kind (``DocumentSymbol.kind`` of the index) -> LSP symbol kind.
SYMBOL_KIND_TO_LSP: dict[str, types.SymbolKind] = {
    "namespace": types.SymbolKind.Namespace,
    "module": types.SymbolKind.Module,
    "function": types.SymbolKind.Function,
    "variable": types.SymbolKind.Variable,
}

#: Highlight kind -> LSP highlight kind.
HIGHLIGHT_KIND_TO_LSP: dict[_index.HighlightKind, types.DocumentHighlightKind] = {
    _index.HighlightKind.READ: types.DocumentHighlightKind.Read,
    _index.HighlightKind.WRITE: types.DocumentHighlightKind.Write,
}

#: Folding kind -> LSP folding range kind.
FOLDING_KIND_TO_LSP: dict[str, types.FoldingRangeKind] = {
    "region": types.FoldingRangeKind.Region,
    "comment": types.FoldingRangeKind.Comment,
}


def from_lsp_position(pos: types.Position, encoder: PositionEncoder) -> Position:
    """tile-lsp (UTF-16) position of a client position in the encoder's encoding.

    The inverse of :meth:`PositionEncoder.position`; a column past the end of
    its line stays past it (the index then finds nothing there).
    """
    if encoder.identity:
        return Position(pos.line, pos.character)
    assert encoder._lines is not None
    if pos.line < 0 or pos.line >= len(encoder._lines):
        return Position(pos.line, pos.character)
    line = encoder._lines[pos.line]
    if line.isascii():
        return Position(pos.line, pos.character)
    units_in = 0
    units16 = 0
    for ch in line:
        if units_in >= pos.character:
            break
        units_in += len(ch.encode("utf-8", errors="surrogatepass")) if encoder.encoding == _UTF8 else 1
        units16 += 2 if ord(ch) > 0xFFFF else 1
    return Position(pos.line, units16)


def to_lsp_locations(uri: str, ranges: Iterable[Range], encoder: PositionEncoder) -> list[types.Location]:
    """Locations of ``ranges`` in document ``uri``."""
    return [types.Location(uri=uri, range=encoder.range(r)) for r in ranges]


def to_lsp_highlights(highlights: Iterable[_index.Highlight], encoder: PositionEncoder) -> list[types.DocumentHighlight]:
    """LSP document highlights of the index's highlights."""
    return [types.DocumentHighlight(range=encoder.range(h.range), kind=HIGHLIGHT_KIND_TO_LSP[h.kind])
            for h in highlights]


def to_lsp_text_edits(edits: Iterable[_index.TextEdit], encoder: PositionEncoder) -> list[types.TextEdit]:
    """LSP text edits of the index's edits."""
    return [types.TextEdit(range=encoder.range(e.range), new_text=e.new_text) for e in edits]


def to_lsp_document_symbol(symbol: _index.DocumentSymbol, encoder: PositionEncoder) -> types.DocumentSymbol:
    """An LSP ``DocumentSymbol`` (with its children) of an outline node."""
    return types.DocumentSymbol(
        name=symbol.name,
        kind=SYMBOL_KIND_TO_LSP.get(symbol.kind, types.SymbolKind.Object),
        range=encoder.range(symbol.range),
        selection_range=encoder.range(symbol.selection_range),
        detail=symbol.detail or None,
        children=[to_lsp_document_symbol(c, encoder) for c in symbol.children],
    )


def to_lsp_folding_range(fold: _index.FoldingRange) -> types.FoldingRange:
    """An LSP folding range (whole lines, so no column conversion)."""
    return types.FoldingRange(start_line=fold.start_line, end_line=fold.end_line,
                              kind=FOLDING_KIND_TO_LSP.get(fold.kind))


def to_lsp_workspace_symbol(uri: str, symbol: _index.DocumentSymbol, container: str,
                            encoder: PositionEncoder) -> types.WorkspaceSymbol:
    """An LSP ``WorkspaceSymbol`` for an outline node of document ``uri``."""
    return types.WorkspaceSymbol(
        name=symbol.name,
        kind=SYMBOL_KIND_TO_LSP.get(symbol.kind, types.SymbolKind.Object),
        location=types.Location(uri=uri, range=encoder.range(symbol.selection_range)),
        container_name=container or None,
    )
