"""Output formats of ``tile-lsp check``: text, JSON, GitHub Actions, SARIF, GitLab code quality.

Every formatter takes a list of ``(path, source, diagnostics)`` entries:
``path`` is the file name to print, ``source`` the :class:`SourceText` of the
file the diagnostics' ranges refer to, ``diagnostics`` its diagnostics.  Lines
are printed 1-based and columns as MLIR's tools print them: 1-based, counted
in bytes of the UTF-8 line (:meth:`SourceText.cli_column`); end columns are
exclusive (the column just past the range).  Within a file diagnostics are
sorted by position (unknown locations first); files keep the given order.

Notes in another document (``Note.uri`` set) are printed with the path of that
URI; their source is not known here, so their column is the LSP column plus
one (equal to the byte column on ASCII lines) and no source line is shown.
"""

from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from collections.abc import Iterable, Sequence
from urllib.parse import quote, urlparse

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Position, Range, Severity, SourceText

__all__ = [
    "Entry",
    "SARIF_SCHEMA",
    "UNKNOWN_LOCATION",
    "count_diagnostics",
    "escape_github_data",
    "escape_github_property",
    "format_github",
    "format_gitlab",
    "format_json",
    "format_sarif",
    "format_summary",
    "format_text",
    "to_json_objects",
    "to_gitlab_issues",
    "to_sarif_log",
]

#: One file's diagnostics: ``(path, source, diagnostics)``.
Entry = tuple[str, SourceText, Sequence[Diagnostic]]

#: ``$schema`` of the SARIF output.
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

#: How MLIR prints a diagnostic without location: ``SourceMgr::GetMessage``
#: names the buffer ``<unknown>`` with line 0 and no column.
UNKNOWN_LOCATION = "<unknown>:0"

_TAB_STOP = 8  # llvm/lib/Support/SourceMgr.cpp TabStop


# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------


def _sorted(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """``diagnostics`` in the order the analysis gives them: MLIR's, whose first error is the one
    ``cuda-tile-opt`` prints (:func:`tile_lsp.analysis.ir.diagnostics.mlir_order`), not by position."""
    return list(diagnostics)


def _uri_to_path(uri: str) -> str:
    """File system path of a ``file:`` URI; other URIs are returned unchanged."""
    if uri.startswith("file:"):
        from urllib.request import url2pathname

        return url2pathname(urlparse(uri).path)
    return uri


def _path_to_uri(path: str) -> str:
    """SARIF ``artifactLocation.uri`` for ``path`` (a URI or URI reference)."""
    if "://" in path or path.startswith("file:"):
        return path
    if os.path.isabs(path):
        from pathlib import Path

        return Path(path).as_uri()
    return quote(path.replace(os.sep, "/"))


def _note_path(note: Note, path: str) -> str:
    return path if note.uri is None else _uri_to_path(note.uri)


def _column(source: SourceText | None, pos: Position) -> int:
    """1-based UTF-8 byte column of ``pos`` (LSP column + 1 without source)."""
    return source.cli_column(pos) if source is not None else pos.character + 1


def _span(source: SourceText | None, rng: Range) -> tuple[int, int, int, int]:
    """``(line, column, endLine, endColumn)``, all 1-based, end exclusive."""
    return (
        rng.start.line + 1,
        _column(source, rng.start),
        rng.end.line + 1,
        _column(source, rng.end),
    )


def _note_source(note: Note, source: SourceText) -> SourceText | None:
    return source if note.uri is None else None


def _location_prefix(path: str, source: SourceText | None, rng: Range | None) -> str:
    """``path:line:col`` as MLIR prints it, or ``<unknown>:0``."""
    if rng is None:
        return UNKNOWN_LOCATION
    return f"{path}:{rng.start.line + 1}:{_column(source, rng.start)}"


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------


def _char_width(ch: str) -> int:
    """Terminal columns of ``ch``: 1 for ASCII (as LLVM counts), else by Unicode."""
    if ch < "\x80":
        return 1
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _source_and_caret(
    source: SourceText, rng: Range, *, show_ranges: bool, mlir_exact: bool
) -> list[str]:
    """The source line and caret line MLIR prints under a diagnostic.

    Follows ``SMDiagnostic::print`` / ``printSourceLine`` of
    ``llvm/lib/Support/SourceMgr.cpp``: the line runs between ``\\r``/``\\n``
    characters around the location, tabs expand to multiples of 8, the caret
    is clamped to the end of the line and trailing blanks of the caret line
    are dropped.  LLVM prints no caret line under a line with non-ASCII bytes;
    unless ``mlir_exact``, one is printed here, aligned by character width.
    """
    line_no = rng.start.line
    if line_no >= source.line_count:
        return []
    line = source.line_text(line_no)
    line_start = source.line_starts[line_no]
    caret = source.offset(rng.start) - line_start
    # SourceMgr::GetMessage: the displayed line stops at '\r' as well as '\n'.
    seg_start = line.rfind("\r", 0, caret) + 1
    seg_end = line.find("\r", caret)
    if seg_end == -1:
        seg_end = len(line)
    segment = line[seg_start:seg_end]
    caret -= seg_start
    range_end = caret
    if show_ranges:
        if rng.end.line == line_no:
            range_end = min(source.offset(rng.end) - line_start - seg_start, len(segment))
        else:
            range_end = len(segment)

    src_out: list[str] = []
    caret_out: list[str] = []
    col = 0
    for index, ch in enumerate(segment):
        if ch == "\t":
            width = _TAB_STOP - col % _TAB_STOP
            src_out.append(" " * width)
        else:
            width = _char_width(ch)
            src_out.append(ch)
        col += width
        if index == caret:
            mark = "^"
        elif caret < index < range_end:
            mark = "~"
        else:
            mark = " "
        if ch == "\t" or mark == "~":
            caret_out.append(mark * width)
        elif width or mark == "^":
            caret_out.append(mark + " " * (width - 1))
    if caret >= len(segment):
        caret_out.append("^")
    lines = ["".join(src_out)]
    if mlir_exact and not segment.isascii():
        return lines
    lines.append("".join(caret_out).rstrip(" "))
    return lines


def format_text(
    entries: Sequence[Entry],
    *,
    files_checked: int | None = None,
    show_ranges: bool = False,
    mlir_exact: bool = False,
) -> str:
    """MLIR style text: ``path:line:col: error: message``, source line, caret.

    For each diagnostic: the header line (``<unknown>:0: error: message`` for
    an unknown location, as ``SourceMgr`` prints it), then the source line and
    a caret line under the column; then each note the same way, except that,
    as in MLIR's ``SourceMgrDiagnosticHandler::emitDiagnostic``, a note at the
    same location as the previous diagnostic or note gets no source line.
    ``show_ranges`` adds ``~`` under the rest of the range (MLIR shows ranges
    only for its own verifier errors).  ``mlir_exact`` omits the caret under
    lines with non-ASCII characters, as LLVM does.  With ``files_checked``,
    the :func:`format_summary` line closes the output.  Returns the text,
    each line ending in ``\\n`` (``""`` when there is nothing to print).
    """
    out: list[str] = []
    for path, source, diagnostics in entries:
        for diag in _sorted(diagnostics):
            out.append(f"{_location_prefix(path, source, diag.range)}: {diag.severity.value}: {diag.message}")
            if diag.range is not None:
                out.extend(_source_and_caret(source, diag.range, show_ranges=show_ranges, mlir_exact=mlir_exact))
            previous: tuple[str | None, Position | None] = (None, diag.range.start if diag.range else None)
            for note in diag.notes:
                note_source = _note_source(note, source)
                prefix = _location_prefix(_note_path(note, path), note_source, note.range)
                out.append(f"{prefix}: {note.severity.value}: {note.message}")
                here = (note.uri, note.range.start if note.range else None)
                if note.range is not None and note_source is not None and here != previous:
                    out.extend(
                        _source_and_caret(note_source, note.range, show_ranges=show_ranges, mlir_exact=mlir_exact)
                    )
                previous = here
    if files_checked is not None:
        errors, warnings, files = count_diagnostics(entries)
        out.append(format_summary(errors, warnings, files, files_checked))
    return "".join(line + "\n" for line in out)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def format_summary(errors: int, warnings: int, files_with_problems: int, files_checked: int) -> str:
    """Closing line, e.g. ``3 errors, 1 warning in 2 files (5 files checked)``.

    Counts are taken as given (see :func:`count_diagnostics`); words are
    singular for a count of 1.  No trailing newline.
    """
    return (
        f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')} in "
        f"{_plural(files_with_problems, 'file')} ({_plural(files_checked, 'file')} checked)"
    )


def count_diagnostics(entries: Sequence[Entry]) -> tuple[int, int, int]:
    """``(errors, warnings, files with an error or warning)`` of ``entries``.

    Only top-level diagnostics count; notes and remarks do not.
    """
    errors = warnings = files = 0
    for _path, _source, diagnostics in entries:
        e = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
        w = sum(1 for d in diagnostics if d.severity is Severity.WARNING)
        errors += e
        warnings += w
        files += 1 if e or w else 0
    return errors, warnings, files


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------


def _json_note(note: Note, path: str, source: SourceText) -> dict:
    line = column = None
    if note.range is not None:
        line = note.range.start.line + 1
        column = _column(_note_source(note, source), note.range.start)
    return {"file": _note_path(note, path), "line": line, "column": column, "message": note.message}


def to_json_objects(entries: Sequence[Entry]) -> list[dict]:
    """The objects :func:`format_json` serialises, one per diagnostic."""
    result = []
    for path, source, diagnostics in entries:
        for diag in _sorted(diagnostics):
            line = column = end_line = end_column = None
            if diag.range is not None:
                line, column, end_line, end_column = _span(source, diag.range)
            result.append(
                {
                    "file": path,
                    "line": line,
                    "column": column,
                    "endLine": end_line,
                    "endColumn": end_column,
                    "severity": diag.severity.value,
                    "message": diag.message,
                    "code": diag.code,
                    "source": diag.source,
                    "notes": [_json_note(n, path, source) for n in diag.notes],
                }
            )
    return result


def format_json(entries: Sequence[Entry], *, indent: int | None = 2) -> str:
    """A JSON array with one object per diagnostic.

    Keys: ``file``, ``line``, ``column``, ``endLine``, ``endColumn`` (1-based,
    byte columns, end exclusive; ``null`` for an unknown location),
    ``severity`` (``error``/``warning``/``note``/``remark``), ``message``,
    ``code``, ``source`` and ``notes`` (objects with ``file``, ``line``,
    ``column``, ``message``).  Non-ASCII text is written as is.  Ends with a
    newline.
    """
    return json.dumps(to_json_objects(entries), indent=indent, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------
# GitHub Actions
# ---------------------------------------------------------------------------


def escape_github_data(text: str) -> str:
    """Escape a workflow command's message (``escapeData`` of actions/toolkit).

    ``%`` → ``%25``, ``\\r`` → ``%0D``, ``\\n`` → ``%0A``.
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_github_property(text: str) -> str:
    """Escape a workflow command's property value (``escapeProperty``).

    As :func:`escape_github_data`, plus ``:`` → ``%3A`` and ``,`` → ``%2C``.
    """
    return escape_github_data(text).replace(":", "%3A").replace(",", "%2C")


_GITHUB_COMMANDS = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.NOTE: "notice",
    Severity.REMARK: "notice",
}


def format_github(entries: Sequence[Entry]) -> str:
    """GitHub Actions workflow commands, one line per diagnostic.

    ``::error file=PATH,line=L,col=C,endLine=EL,endColumn=EC,title=CODE::MESSAGE``
    (``::warning`` for warnings, ``::notice`` for notes and remarks; position
    properties are left out for an unknown location, ``title`` for an empty
    code).  Each note is appended to the message on its own line as
    ``path:line:col: note: message``.  Property values and message are escaped
    as GitHub requires.  Each line ends in ``\\n``.
    """
    out = []
    for path, source, diagnostics in entries:
        for diag in _sorted(diagnostics):
            props: list[tuple[str, str]] = [("file", path)]
            if diag.range is not None:
                line, column, end_line, end_column = _span(source, diag.range)
                props += [
                    ("line", str(line)),
                    ("col", str(column)),
                    ("endLine", str(end_line)),
                    ("endColumn", str(end_column)),
                ]
            if diag.code:
                props.append(("title", diag.code))
            message = diag.message
            for note in diag.notes:
                prefix = _location_prefix(_note_path(note, path), _note_source(note, source), note.range)
                message += f"\n{prefix}: {note.severity.value}: {note.message}"
            rendered = ",".join(f"{k}={escape_github_property(v)}" for k, v in props)
            out.append(f"::{_GITHUB_COMMANDS[diag.severity]} {rendered}::{escape_github_data(message)}\n")
    return "".join(out)


# ---------------------------------------------------------------------------
# SARIF
# ---------------------------------------------------------------------------

_SARIF_LEVELS = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.NOTE: "note",
    Severity.REMARK: "note",
}


def _sarif_location(uri: str, source: SourceText | None, rng: Range | None) -> dict:
    physical: dict = {"artifactLocation": {"uri": uri}}
    if rng is not None:
        line, column, end_line, end_column = _span(source, rng)
        physical["region"] = {
            "startLine": line,
            "startColumn": column,
            "endLine": end_line,
            "endColumn": end_column,
        }
    return {"physicalLocation": physical}


def to_sarif_log(entries: Sequence[Entry], *, tool_version: str | None = None) -> dict:
    """The SARIF 2.1.0 log object :func:`format_sarif` serialises."""
    rules: list[dict] = []
    rule_index: dict[str, int] = {}
    results = []
    for path, source, diagnostics in entries:
        uri = _path_to_uri(path)
        for diag in _sorted(diagnostics):
            rule_id = diag.code or diag.source
            if rule_id not in rule_index:
                rule_index[rule_id] = len(rules)
                rules.append({"id": rule_id})
            result: dict = {
                "ruleId": rule_id,
                "ruleIndex": rule_index[rule_id],
                "level": _SARIF_LEVELS[diag.severity],
                "message": {"text": diag.message},
                "locations": [_sarif_location(uri, source, diag.range)],
            }
            if diag.notes:
                related = []
                for index, note in enumerate(diag.notes):
                    note_uri = uri if note.uri is None else note.uri
                    location = _sarif_location(note_uri, _note_source(note, source), note.range)
                    location = {"id": index, "message": {"text": note.message}, **location}
                    related.append(location)
                result["relatedLocations"] = related
            results.append(result)
    driver: dict = {"name": "tile-lsp", "rules": rules}
    if tool_version is not None:
        driver["version"] = tool_version
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }


def format_sarif(entries: Sequence[Entry], *, tool_version: str | None = None, indent: int | None = 2) -> str:
    """SARIF 2.1.0 JSON: one run of ``tile-lsp`` with rules and results.

    ``tool.driver.rules`` lists each distinct rule id (the diagnostic's
    ``code``, or its ``source`` when the code is empty) in order of first
    use; each result has ``ruleId``, ``ruleIndex``, ``level`` (``error``,
    ``warning``, ``note``; remarks are ``note``), ``message.text``, one
    location (``artifactLocation.uri`` is the path as a URI reference;
    ``region`` with 1-based ``startLine``/``startColumn``/``endLine``/
    ``endColumn``, byte columns, end exclusive; no region for an unknown
    location) and notes as ``relatedLocations``.  Ends with a newline.
    """
    return json.dumps(to_sarif_log(entries, tool_version=tool_version), indent=indent, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------
# GitLab code quality
# ---------------------------------------------------------------------------

_GITLAB_SEVERITIES = {
    Severity.ERROR: "major",
    Severity.WARNING: "minor",
    Severity.NOTE: "info",
    Severity.REMARK: "info",
}


def to_gitlab_issues(entries: Sequence[Entry]) -> list[dict]:
    """The code-quality issues :func:`format_gitlab` serialises, one per diagnostic."""
    issues = []
    seen: dict[str, int] = {}
    for path, source, diagnostics in entries:
        for diag in _sorted(diagnostics):
            line = _span(source, diag.range)[0] if diag.range is not None else 1
            check = diag.code or diag.source
            key = f"{path}\0{line}\0{check}\0{diag.message}"
            seen[key] = seen.get(key, 0) + 1  # the same finding twice on a line stays two issues
            fingerprint = hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()
            issues.append({
                "description": diag.message,
                "check_name": check,
                "fingerprint": fingerprint,
                "severity": _GITLAB_SEVERITIES[diag.severity],
                "location": {"path": path, "lines": {"begin": line}},
            })
    return issues


def format_gitlab(entries: Sequence[Entry], *, indent: int | None = 2) -> str:
    """GitLab code-quality report (``artifacts:reports:codequality``): a JSON array of issues.

    Each issue has ``description`` (the message), ``check_name`` (the code,
    or the source when the code is empty), ``fingerprint`` (SHA-256 of
    path, line, check and message, stable between runs), ``severity``
    (``major`` for errors, ``minor`` for warnings, ``info`` for notes and
    remarks) and ``location`` (``path`` as printed, ``lines.begin`` 1-based;
    1 for an unknown location).  Ends with a newline.
    """
    return json.dumps(to_gitlab_issues(entries), indent=indent, ensure_ascii=False) + "\n"
