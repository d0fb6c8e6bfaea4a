"""Code actions (LSP ``textDocument/codeAction``), in analysis terms.

Feature: quick fixes and checks - ``textDocument/codeAction``; VS Code: the light bulb, Quick
Fix (Ctrl+.).

:func:`code_actions` answers for a range of a document:

* **"Add expected-* diagnostic checks"** (as ``mlir-lsp-server``): for each
  diagnostic of a chunk that no ``expected-*`` directive matches, a line
  ``// expected-<severity> @below {{<message>}}`` above the diagnostic's
  line, indented as that line (notes get ``expected-note``, diagnostics
  without a location ``@unknown``).  The diagnostics are those of
  ``-verify-diagnostics`` (``AnalysisOptions.mlir_compat``: a chunk stops at
  its first parse error, the verifier at the first failing op), so that
  ``tile-lsp --check --verify-diagnostics`` passes on the result.
* **"Update expected-* checks to the actual diagnostics"**: in a chunk whose
  checks fail, every ``expected-*`` directive is removed (a directive line
  entirely, a trailing directive from its ``//``) and the checks of the
  actual diagnostics are written as above.
* **Quick fixes**, each attached to the diagnostic it removes:

  - a prefix-less cuda_tile op outside every cuda_tile op
    (:mod:`tile_lsp.analysis.verify.rules.target`, ``missing-prefix``): add
    ``cuda_tile.`` (one op, or all of them);
  - a tile dimension that is not a power of two ("all dimensions must be
    powers of two, got 3, 8", "tile shape dimensions must have power of two
    length but got [3, 8]", :mod:`tile_lsp.analysis.syntax.type_rules`): the
    shape with the nearest powers of two, and rounded down or up;
  - an op name the registry does not know, at a parse error ("unexpected
    token"): the registered names within edit distance ``(len + 2) // 3``
    of the name without its dialect (LLVM's ``StringRef::edit_distance``,
    bounded as clang's typo correction bounds it), "did you mean";
  - "Failed to get ComputeCapability" (``missing-compute-capability``, or the
    frontend contract's check of a module shell):
    ``nv_tileaa.compute_capability = N : i32`` on the builtin module (added
    to its ``attributes {...}``, or a wrapping ``module attributes {...}``
    when the chunk has none), one action per known target (spec 004
    "Compute-Capability Attribute").

Ranges are whole-file (0-based line, UTF-16 column); edits never overlap.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

from tile_lsp.analysis.api import AnalysisOptions, DocumentAnalysis
from tile_lsp.analysis.ir.diagnostics import (
    Diagnostic,
    Position,
    Range,
    Severity,
    SourceText,
    split_lines,
)
from tile_lsp.analysis.verify.frontend_contract import KNOWN_COMPUTE_CAPABILITIES
from tile_lsp.analysis.verify.frontend_contract import msg as contract_message
from tile_lsp.analysis.ide.index import TextEdit
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.ir.split import Chunk
from tile_lsp.analysis.syntax.type_rules import MESSAGES as TYPE_MESSAGES
from tile_lsp.analysis.verify.verify_diagnostics import parse_expectations, verify
from tile_lsp.dialect.registry import all_ops, lookup

#: LSP code action kinds used.
QUICK_FIX = "quickfix"

TITLE_ADD_CHECKS = "Add expected-* diagnostic checks"
TITLE_UPDATE_CHECKS = "Update expected-* checks to the actual diagnostics"

#: Attribute a quick fix adds for a missing compute capability (spec 004).
COMPUTE_CAPABILITY_ATTR = "nv_tileaa.compute_capability"

# The expected-* directive as LLVM's verifier finds it (verify_diagnostics._DIRECTIVE, unanchored).
_DIRECTIVE = re.compile(r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *\{\{")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_OP_NAME_POSITION = re.compile(r'\s*(?:%[^=]*=\s*)?"?$')


@dataclass(frozen=True)
class CodeAction:
    """One action: ``title``, LSP ``kind``, the ``edits`` of the document, the ``diagnostics`` it fixes.

    ``preferred``: the fix an editor may apply on its own (LSP ``isPreferred``).
    """

    title: str
    kind: str
    edits: tuple[TextEdit, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    preferred: bool = False


def _intersects(a: Range | None, b: Range) -> bool:
    return a is not None and a.start <= b.end and b.start <= a.end


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance with replacements (LLVM ``StringRef::edit_distance``)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def similar_op_names(name: str, limit: int = 3) -> list[str]:
    """Registered op names within edit distance ``(len + 2) // 3`` of ``name``, closest first.

    ``name`` written with a dialect prefix is compared with full names, else
    with the cuda_tile names without prefix.
    """
    if "." in name:
        candidates = [op.full_name for op in all_ops()]
    else:
        candidates = [op.name for op in all_ops() if op.dialect == "cuda_tile"]
    bound = max(1, (len(name.split(".", 1)[-1]) + 2) // 3)  # the dialect prefix is no part of the typo
    scored = sorted((edit_distance(name, c), c) for c in set(candidates))
    return [c for d, c in scored if 0 < d <= bound][:limit]


def nearest_powers_of_two(d: int) -> tuple[int, int]:
    """``(largest power of two <= d, smallest power of two >= d)`` for ``d >= 1``."""
    low = 1 << (d.bit_length() - 1)
    return low, (low if low == d else low << 1)


# ---------------------------------------------------------------------------
# expected-* checks
# ---------------------------------------------------------------------------


def _options_key(options: AnalysisOptions) -> tuple:
    return dataclasses.astuple(options)


@functools.lru_cache(maxsize=16)
def _compat_diagnostics(chunk_text: str, start_line: int, options_key: tuple) -> tuple[Diagnostic, ...]:
    from tile_lsp.analysis.incremental.pipeline import analyze_chunk

    options = AnalysisOptions(*options_key)
    source = SourceText("\n" * start_line + chunk_text)
    return tuple(analyze_chunk(Chunk(start_line, start_line, chunk_text), options, source).diagnostics)


def verify_mode_diagnostics(chunk: Chunk, options: AnalysisOptions | None = None) -> list[Diagnostic]:
    """The diagnostics ``--verify-diagnostics`` checks for ``chunk`` (``mlir_compat`` on), whole-file ranges.

    Cached on the chunk's text, first line and options.
    """
    options = dataclasses.replace(options or AnalysisOptions(), mlir_compat=True, editor_checks=False)
    return list(_compat_diagnostics(chunk.text, chunk.start_line, _options_key(options)))


def _reported(diagnostics: list[Diagnostic]) -> list[tuple[Severity, str, Range | None]]:
    """Diagnostics then their notes, as MLIR's verifier handler sees them (notes in other files left out)."""
    out = []
    for d in diagnostics:
        out.append((d.severity, d.message, d.range))
        out.extend((n.severity, n.message, n.range) for n in d.notes if n.uri is None)
    return out


def _directive(severity: Severity, message: str, indent: str, unknown: bool) -> str:
    text = message.split("\n", 1)[0]
    where = "@unknown" if unknown else "@below"
    return f"{indent}// expected-{severity.value} {where} {{{{{text}}}}}\n"


def _unmatched(expectations, diagnostics: list[Diagnostic]) -> list[tuple[Severity, str, Range | None]]:
    """The reported diagnostics that none of the chunk's ``expectations`` matches (``verify``'s matching)."""
    out = []
    for severity, message, rng in _reported(diagnostics):
        line = rng.start.line if rng is not None else None
        if not any(e.line == line and e.severity == severity and e.matches(message) for e in expectations):
            out.append((severity, message, rng))
    return out


def _lines(text: str) -> list[str]:
    return split_lines(text) or [""]


def _rewrite(lines: list[str], kept: list[str | None], chunk: Chunk, reported) -> dict[int, str]:
    """The text replacing each changed line of the chunk: ``{index: text}``, index ``len(lines)`` for
    what goes after the last line.

    ``lines``: the chunk's lines; ``kept``: each line as it stays (``None``: dropped).  A check line
    goes above the line of each reported diagnostic, indented as it.  A diagnostic past the last
    line (at the end of the chunk) gets its check at the end: a ``@below`` with no line after it
    refers to the buffer's last line, as in LLVM.
    """
    inserts: dict[int, list[str]] = {}
    seen: set[tuple] = set()
    for severity, message, rng in reported:
        index = rng.start.line - chunk.start_line if rng is not None else 0
        index = min(max(index, 0), len(lines))
        target = kept[index] if index < len(kept) and kept[index] is not None else ""
        if target.lstrip().startswith("//"):
            continue  # placed by a location attribute on a comment line: no directive can follow it
        key = (severity, message.split("\n", 1)[0], index, rng is None)
        if key in seen:
            continue  # one directive absorbs every diagnostic it matches
        seen.add(key)
        indent = target[: len(target) - len(target.lstrip(" \t"))].rstrip("\n")
        inserts.setdefault(index, []).append(_directive(severity, message, indent, rng is None))
    out: dict[int, str] = {}
    for i, line in enumerate(lines):
        if i in inserts or kept[i] != line:
            out[i] = "".join(inserts.get(i, [])) + (kept[i] or "")
    if len(lines) in inserts:
        last = kept[-1] if kept else None
        newline = "" if last is None or last.endswith("\n") or not last else "\n"
        out[len(lines)] = newline + "".join(inserts[len(lines)])
    return out


def _without_directives(lines: list[str]) -> list[str | None]:
    """``lines`` with their expected-* directives removed (``None``: the whole line goes)."""
    out: list[str | None] = []
    for line in lines:
        m = _DIRECTIVE.search(line) if "expected-" in line else None
        if m is None:
            out.append(line)
            continue
        comment = line.rfind("//", 0, m.start())
        before = line[:comment] if comment >= 0 else ""
        if not before.strip():
            out.append(None)
        else:
            out.append(before.rstrip() + ("\n" if line.endswith("\n") else ""))
    return out


def _line_edits(lines: list[str], rewrite: dict[int, str], chunk: Chunk, source: SourceText) -> list[TextEdit]:
    """One edit per rewritten line of the chunk (the whole line, its newline included)."""
    end_of_chunk = source.position(chunk.start_offset + len(chunk.text))
    edits = []
    for i in sorted(rewrite):
        start = Position(chunk.start_line + i, 0)
        if i >= len(lines):
            start = end = end_of_chunk
        elif lines[i].endswith("\n"):
            end = Position(chunk.start_line + i + 1, 0)
        else:
            end = end_of_chunk
        edits.append(TextEdit(Range(start, end), rewrite[i]))
    return edits


def _chunks_in(analysis: DocumentAnalysis, rng: Range):
    for c in analysis.chunks:
        last = c.chunk.start_line + max(0, c.chunk.text.count("\n") - (1 if c.chunk.text.endswith("\n") else 0))
        if c.chunk.start_line <= rng.end.line and rng.start.line <= last:
            yield c


def check_actions(analysis: DocumentAnalysis, rng: Range, options: AnalysisOptions | None = None) -> list[CodeAction]:
    """The "Add expected-*" and "Update expected-*" actions for the chunks meeting ``rng``.

    "Add" appears when a diagnostic of ``-verify-diagnostics`` is not yet
    checked; "Update" when the chunk has expected-* directives and its
    checks fail.  Each action edits every such chunk meeting the range.
    A chunk is looked at only when a line of the range carries one of its
    diagnostics or an expected-* directive: the ``-verify-diagnostics`` run
    of a chunk costs an analysis, and editors ask for code actions at every
    move of the cursor.
    """
    source: SourceText | None = None  # built only when a chunk needs it (a large document costs time)
    first, last = rng.start.line, rng.end.line
    add: list[TextEdit] = []
    update: list[TextEdit] = []
    fixed: list[Diagnostic] = []
    for c in _chunks_in(analysis, rng):
        chunk = c.chunk
        here = [d for d in c.diagnostics if d.range is not None and first <= d.range.start.line <= last]
        directive_here = "expected-" in chunk.text and any(
            "expected-" in line for line in chunk.text.split("\n")[max(0, first - chunk.start_line):
                                                                   max(0, last + 1 - chunk.start_line)])
        if not here and not directive_here:
            continue
        source = source or SourceText(analysis.text)
        diagnostics = verify_mode_diagnostics(chunk, options)
        lines = _lines(chunk.text)
        if "expected-" in chunk.text:
            expectations, scan_errors = parse_expectations(chunk.text, line_offset=chunk.start_line)
        else:
            expectations, scan_errors = [], []
        missing = _unmatched(expectations, diagnostics)
        if missing:
            add.extend(_line_edits(lines, _rewrite(lines, lines, chunk, missing), chunk, source))
            fixed.extend(here)
        if (expectations or scan_errors) and verify(chunk.text, diagnostics, line_offset=chunk.start_line):
            rewrite = _rewrite(lines, _without_directives(lines), chunk, _reported(diagnostics))
            update.extend(_line_edits(lines, rewrite, chunk, source))
    out = []
    if add:
        out.append(CodeAction(TITLE_ADD_CHECKS, QUICK_FIX, tuple(add), tuple(fixed)))
    if update:
        out.append(CodeAction(TITLE_UPDATE_CHECKS, QUICK_FIX, tuple(update)))
    return out


# ---------------------------------------------------------------------------
# quick fixes
# ---------------------------------------------------------------------------


def _find_op(analysis: DocumentAnalysis, at: Range | None) -> Operation | None:
    if at is None:
        return None
    for c in analysis.chunks:
        if c.module is None:
            continue
        for op in c.module.walk():
            r = op.name_range or op.range
            if r is not None and r.start == at.start:
                return op
    return None


def _prefix_fixes(analysis: DocumentAnalysis, diagnostic: Diagnostic, all_prefix: list[Diagnostic]) -> list[CodeAction]:
    out = []
    if diagnostic.range is not None:
        out.append(CodeAction("Add the 'cuda_tile.' prefix", QUICK_FIX,
                              (TextEdit(Range(diagnostic.range.start, diagnostic.range.start), "cuda_tile."),),
                              (diagnostic,), True))
    if len(all_prefix) > 1:
        edits = tuple(TextEdit(Range(d.range.start, d.range.start), "cuda_tile.") for d in all_prefix if d.range)
        out.append(CodeAction("Add the 'cuda_tile.' prefix to every top-level op", QUICK_FIX, edits,
                              tuple(all_prefix)))
    return out


def _pow2_pattern(mid: str) -> re.Pattern[str]:
    """Regex of a type_rules message: its ``{dims}``/``{shape}`` field captured."""
    template = TYPE_MESSAGES[mid]
    head, _, tail = template.partition("{" + ("shape" if "{shape}" in template else "dims") + "}")
    return re.compile(re.escape(head) + r"([0-9, ]+)" + re.escape(tail) + "$")


_POW2_MESSAGES = (_pow2_pattern("dim_pow2"), _pow2_pattern("view_dim_pow2"))


def _pow2_fixes(analysis: DocumentAnalysis, source: SourceText, diagnostic: Diagnostic) -> list[CodeAction]:
    dims = None
    for pattern in _POW2_MESSAGES:
        m = pattern.search(diagnostic.message)
        if m:
            dims = [int(x) for x in m.group(1).replace(" ", "").split(",") if x]
            break
    if not dims or diagnostic.range is None or any(d <= 0 for d in dims):
        return []
    start = source.offset(diagnostic.range.start)
    window = analysis.text[start:start + 4000]
    spelled = "x".join(str(d) for d in dims)
    m = re.search(r"(?<![0-9A-Za-z_])" + re.escape(spelled) + r"(?=x|\)|>)", window)
    if m is None:
        return []
    where = Range(source.position(start + m.start()), source.position(start + m.end()))
    nearest = [lo if d - lo < hi - d else hi for d in dims for lo, hi in [nearest_powers_of_two(d)]]
    down = [nearest_powers_of_two(d)[0] for d in dims]
    up = [nearest_powers_of_two(d)[1] for d in dims]
    out = []
    seen: set[str] = set()
    for shape, label in ((nearest, "nearest powers of two"), (down, "rounded down"), (up, "rounded up")):
        text = "x".join(map(str, shape))
        if text in seen:
            continue
        seen.add(text)
        out.append(CodeAction(f"Change the shape {spelled} to {text} ({label})", QUICK_FIX,
                              (TextEdit(where, text),), (diagnostic,), not out))
    return out


def _typo_fixes(source: SourceText, diagnostic: Diagnostic) -> list[CodeAction]:
    if diagnostic.range is None or not diagnostic.code.startswith("parse"):
        return []
    start = source.offset(diagnostic.range.start)
    line_start = source.line_starts[diagnostic.range.start.line]
    if not _OP_NAME_POSITION.match(source.text[line_start:start]):
        return []
    m = _IDENT.match(source.text, start)
    if m is None:
        return []
    word = m.group()
    if lookup(word) is not None:
        return []
    where = Range(source.position(m.start()), source.position(m.end()))
    return [CodeAction(f"Did you mean '{name}'?", QUICK_FIX, (TextEdit(where, name),), (diagnostic,), i == 0)
            for i, name in enumerate(similar_op_names(word))]


def _cc_fixes(analysis: DocumentAnalysis, source: SourceText, diagnostic: Diagnostic) -> list[CodeAction]:
    op = _find_op(analysis, diagnostic.range)
    if op is None:
        return []
    module = op if op.name == "builtin.module" else None
    p = op.parent_op
    while module is None and p is not None:
        if p.name == "builtin.module":
            module = p
        p = p.parent_op
    out = []
    for sm in sorted(KNOWN_COMPUTE_CAPABILITIES, reverse=True):
        attr = f"{COMPUTE_CAPABILITY_ATTR} = {sm} : i32"
        edits = _cc_edits(analysis, source, module, op, attr)
        if edits:
            out.append(CodeAction(f"Target sm_{sm}: add {attr} to the module", QUICK_FIX, tuple(edits),
                                  (diagnostic,)))
    return out


def _cc_edits(analysis: DocumentAnalysis, source: SourceText, module: Operation | None, op: Operation,
              attr: str) -> list[TextEdit]:
    if module is not None and module.name_range is not None and module.regions and module.regions[0].range:
        head_start = source.offset(module.name_range.end)
        body = source.offset(module.regions[0].range.start)
        head = analysis.text[head_start:body]
        m = re.search(r"\battributes\s*\{", head)
        if m is not None:
            at = head_start + m.end()
            inner = head[m.end():].lstrip()
            sep = "" if inner.startswith("}") else ", "
            pos = source.position(at)
            return [TextEdit(Range(pos, pos), attr + sep)]
        pos = source.position(body)
        return [TextEdit(Range(pos, pos), f"attributes {{{attr}}} ")]
    chunk = next((c.chunk for c in analysis.chunks if c.module is not None and any(o is op for o in c.module.walk())),
                 None)
    if chunk is None:
        return []
    first = Position(chunk.start_line, 0)
    end = source.position(chunk.start_offset + len(chunk.text))
    closing = "}\n" if chunk.text.endswith("\n") or not chunk.text else "\n}\n"
    return [TextEdit(Range(first, first), f"module attributes {{{attr}}} {{\n"), TextEdit(Range(end, end), closing)]


def quick_fixes(analysis: DocumentAnalysis, rng: Range, wanted: set | None = None) -> list[CodeAction]:
    """The quick fixes of the analysis' diagnostics that meet ``rng``.

    ``wanted``: ``(message, range)`` of further diagnostics to fix wherever
    they are (the diagnostics an LSP client sends with its request).
    """
    source: SourceText | None = None
    diagnostics = analysis.diagnostics
    prefix = [d for d in diagnostics if d.code.endswith(".missing-prefix")]
    out: list[CodeAction] = []
    for d in diagnostics:
        if not _intersects(d.range, rng) and (not wanted or (d.message, d.range) not in wanted):
            continue
        source = source or SourceText(analysis.text)
        if d.code.endswith(".missing-prefix"):
            out.extend(_prefix_fixes(analysis, d, prefix))
        elif d.message == contract_message("compute_capability"):
            out.extend(_cc_fixes(analysis, source, d))
        elif d.severity == Severity.ERROR:
            out.extend(_pow2_fixes(analysis, source, d))
            out.extend(_typo_fixes(source, d))
    return out


def code_actions(analysis: DocumentAnalysis, rng: Range, options: AnalysisOptions | None = None,
                 wanted: set | None = None) -> list[CodeAction]:
    """Every code action for ``rng`` of the analysed document: quick fixes first, then the checks actions.

    ``options``: the options the document is analysed with (its Tile IR
    version matters to the ``-verify-diagnostics`` run).  ``wanted``: see
    :func:`quick_fixes`.  Never raises on bad input.
    """
    return quick_fixes(analysis, rng, wanted) + check_actions(analysis, rng, options)
