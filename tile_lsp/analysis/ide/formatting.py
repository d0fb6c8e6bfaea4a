"""Document and range formatting: the text rewritten as cuda-tile-opt's canonical print.

Feature: formatting - ``textDocument/formatting`` and ``rangeFormatting``; VS Code: Format
Document / Format Selection.

The formatted text of a chunk is what :mod:`tile_lsp.analysis.ir.printer` prints
for its IR (cuda-tile-opt's canonical form: custom assembly, MLIR's value
names, 2-space indentation), with one difference: the implicit
``module { ... }`` wrapper of MLIR's print is written only when the chunk
itself wrote an explicit top-level ``module { ... }``; otherwise the
top-level ops are printed at column 0, as the user wrote them.  The chunks
of a split file are joined with ``// -----`` lines (a blank line either side).

Formatting never changes meaning and never loses text:

* it is refused (no edits) when the document has a syntax error (a
  diagnostic whose code is one of :data:`SYNTAX_ERROR_CODES`, i.e. reported
  by the parser or the IR builder rather than by a verifier): the IR of such
  a text is partial and its print would drop what did not parse;
* it is refused when the text has comments other than the ``// -----``
  split markers: the printer keeps no comments, so formatting would delete
  them (:func:`has_comments`);
* value names are renamed as MLIR prints them (``%0``, ``%arg0``,
  ``%cst_1_f32``...), locations are dropped as cuda-tile-opt drops them
  without ``-mlir-print-debuginfo``; so formatting is refused as well when a
  chunk has ``loc(...)`` locations or alias definitions (``#x = ...``,
  ``!t = ...``), which the printer does not reproduce.

The results are :class:`~tile_lsp.analysis.ide.index.TextEdit` s in whole-file
positions (0-based line, UTF-16 column).
"""

from __future__ import annotations

import re
from typing import Iterator

from tile_lsp.analysis.api import ChunkAnalysis, DocumentAnalysis
from tile_lsp.analysis.ir.diagnostics import Range, SourceText
from tile_lsp.analysis.ide.index import TextEdit
from tile_lsp.analysis.ir.core import Block, Module, Operation
from tile_lsp.analysis.ir.printer import Namer, Printer, top_level_ops
from tile_lsp.analysis.ir.split import SPLIT_MARKER
from tile_lsp.grammar.lexical import STRING, STRINGS_AND_COMMENTS

#: Diagnostic codes (or code prefixes, ending with ``.``) that mark a text whose IR is
#: incomplete: the parser's (``parse.*``), the builder's structural errors, internal errors.
SYNTAX_ERROR_CODES: tuple[str, ...] = (
    "parse.",
    "internal",
    "structure.undefined-value",
    "structure.result-count",
)

#: Lines between two chunks of a formatted split file.
CHUNK_JOIN = "\n" + SPLIT_MARKER + "\n\n"

# strings first, so that "//" inside a string is not a comment
_LEXEME = STRINGS_AND_COMMENTS
_LOC = re.compile(STRING + r'|\bloc\s*\(')
_ALIAS_DEF = re.compile(r'^\s*[#!][A-Za-z_][A-Za-z0-9_$.]*\s*=', re.MULTILINE)


def comments(text: str) -> Iterator[tuple[int, int]]:
    """Code-point spans ``[start, end)`` of the ``//`` comments of ``text`` (strings skipped).

    The ``// -----`` split markers (alone on their line) are not comments here.
    """
    for m in _LEXEME.finditer(text):
        if not m.group().startswith("//"):
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start:m.start()].strip() == "" and m.group().strip() == SPLIT_MARKER:
            continue
        yield m.start(), m.end()


def has_comments(text: str) -> bool:
    """True when ``text`` has a ``//`` comment other than a split marker."""
    return next(comments(text), None) is not None


def _has_locations_or_aliases(text: str) -> bool:
    if _ALIAS_DEF.search(text):
        return True
    return any(m.group().startswith("loc") for m in _LOC.finditer(text))


def refusal_reason(analysis: DocumentAnalysis) -> str | None:
    """Why ``analysis``'s text cannot be formatted, or ``None`` when it can."""
    for d in analysis.diagnostics:
        if any(d.code == c or (c.endswith(".") and d.code.startswith(c)) for c in SYNTAX_ERROR_CODES):
            return f"the document has a syntax error ({d.message})"
    if any(c.module is None for c in analysis.chunks):
        return "a chunk did not parse"
    if has_comments(analysis.text):
        return "the document has comments, which formatting would delete"
    if _has_locations_or_aliases(analysis.text):
        return "the document has locations or aliases, which formatting would delete"
    return None


def _explicit_module(module: Module) -> bool:
    """True when the chunk is one explicit ``module { ... }`` standing for MLIR's implicit one."""
    return top_level_ops(module) is not module.body.operations


def format_module(module: Module) -> str:
    """Canonical text of one chunk's IR, ending with a newline ("" for an empty chunk).

    The top-level ops are printed at column 0, or inside ``module { ... }`` when
    the chunk wrote that wrapper (see the module docstring).
    """
    if _explicit_module(module):
        from tile_lsp.analysis.ir.printer import print_module
        return print_module(module)
    block = Block(operations=list(module.body.operations))
    printer = Printer(Namer([block]))
    return "".join(printer.op_lines(op, 0, "") + "\n" for op in block.operations)


def format_text(analysis: DocumentAnalysis) -> str | None:
    """The formatted text of the whole document, or ``None`` when refused (:func:`refusal_reason`)."""
    if refusal_reason(analysis) is not None:
        return None
    parts = [format_module(c.module) for c in analysis.chunks]  # type: ignore[arg-type]
    return CHUNK_JOIN.join(p if p else "" for p in parts)


def _whole(text: str) -> Range:
    return SourceText(text).range(0, len(text))


def format_document(analysis: DocumentAnalysis) -> list[TextEdit]:
    """Edits turning the document into its formatted text: one edit replacing it all,
    none when already formatted or refused."""
    new = format_text(analysis)
    if new is None or new == analysis.text:
        return []
    return [TextEdit(_whole(analysis.text), new)]


def _chunk_top_ops(chunk: ChunkAnalysis) -> list[Operation]:
    module = chunk.module
    if module is None:
        return []
    return list(module.body.operations)


def _overlaps(a: Range, b: Range) -> bool:
    return a.start <= b.end and b.start <= a.end


def format_range(analysis: DocumentAnalysis, rng: Range) -> list[TextEdit]:
    """Edits formatting the top-level ops intersecting ``rng`` (whole-file positions).

    Each such op is replaced by its canonical print, indented as it starts.
    Ops whose results are used elsewhere are left alone (reformatting renames
    their results).  Refused (no edits) as :func:`format_document` is.
    """
    if refusal_reason(analysis) is not None:
        return []
    source = SourceText(analysis.text)
    edits: list[TextEdit] = []
    for chunk in analysis.chunks:
        for op in _chunk_top_ops(chunk):
            if op.range is None or not _overlaps(op.range, rng):
                continue
            if any(r.uses for r in op.results):
                continue
            indent = op.range.start.character
            line = source.line_text(op.range.start.line)
            if line[:indent].strip():
                continue  # the op shares its line with other text: leave it
            block = Block(operations=[op])
            text = Printer(Namer([block])).op_lines(op, 0, "")
            lines = text.split("\n")
            text = "\n".join([lines[0]] + [(" " * indent + s) if s else s for s in lines[1:]])
            old = analysis.text[source.offset(op.range.start):source.offset(op.range.end)]
            if old != text:
                edits.append(TextEdit(op.range, text))
    return edits
