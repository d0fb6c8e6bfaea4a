"""Top-level units of a chunk, and incremental analysis built on them.

A chunk's text is cut, at text level, into **units**: the top-level items
(one ``cuda_tile.entry``, one ``global``, one ``#alias = ...`` definition) of
the chunk and, recursively, of the body of each container op
(``cuda_tile.module``, ``builtin.module``) written as::

    cuda_tile.module @m {      <- header line: ends with the `{` of the body
      entry @a(...) { ... }    <- body units, one per item
      global @g ...
    }                          <- footer line: starts with the `}` of the body

Each unit is parsed on its own (with the parser's recovery confined to it),
built into the chunk's IR and verified; a container is parsed from its
header and footer lines alone (its body blanked).  :func:`analyze_units`
is the analysis of a chunk that has such units (``analyze_chunk`` calls it
outside ``mlir_compat`` mode); :class:`IncrementalAnalyzer` keeps the result
of each unit between two analyses of a document and re-parses, re-builds and
re-verifies only the units whose text changed, reusing the others (their IR
and diagnostics moved by the number of lines inserted above them).  Checks
made at the level of a container (its own verifiers, symbol tables) run
again each time.  By construction the result equals a fresh
:func:`analyze_units` of the new text; ``tests/test_incremental.py`` checks
it on random edits of corpus kernels.

Boundaries are found on lines (MLIR puts no token across a line break that a
unit boundary could split): a unit starts on a line at bracket depth 0 of
its level (``()``, ``[]``, ``{}`` counted outside strings and ``//``
comments), indented as the level's first item, whose first word starts an
operation (a registered op name, a dialect-qualified name, a generic op's
string, ``%`` results) or an alias definition (``#a =``, ``!t =``).  Blank
and comment lines belong to the unit above.  A level is cut only when every
unit is *closed*: an alias, or an op whose name is ``IsolatedFromAbove`` or
whose text uses no SSA value, so no unit defines or uses a value of
another; otherwise the level is one unit (no chunk: :func:`split_units`
returns ``None`` and the chunk is parsed whole).
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import threading
import time
from dataclasses import dataclass, field

from tile_lsp.analysis import attributes as A
from tile_lsp.analysis.diagnostics import (
    Diagnostic,
    Position,
    Range,
    Severity,
    SourceText,
)

#: Ops whose body is cut into units when written as a container (header line `{`, footer line `}`).
CONTAINER_OPS = frozenset({"cuda_tile.module", "module", "builtin.module"})

_STRIP = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*')
_ITEM_START = re.compile(r'([ \t]*)(?:(%)|(")|([#!][A-Za-z0-9_$.\-]+[ \t]*=)|([A-Za-z_][A-Za-z0-9_$.]*))')
_OPENERS = "([{"
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """One unit: code-point span ``[start, end)`` of the chunk text and its first line.

    ``kind`` is ``"op"``, ``"alias"`` or ``"container"``.  A container's
    ``header_end`` is the offset just past its header line, ``footer_start``
    the offset of its footer line, ``children`` the units of its body.
    ``line`` is the 0-based line of ``start`` in the chunk.
    """

    start: int
    end: int
    line: int
    kind: str
    header_end: int = 0
    footer_start: int = 0
    children: tuple[Unit, ...] = ()
    #: False when the unit's level was cut by indentation (its brackets do not balance)
    exact: bool = True


def _depth_change(line: str, depth: int = 0) -> tuple[int, int]:
    """(net bracket depth change of ``line``, lowest running change reached) outside strings and comments.

    The lowest change is only computed when it could take a running depth
    of ``depth`` below zero (else 0 is returned for it).
    """
    if '"' in line or "//" in line:
        line = _STRIP.sub("", line)
    opens = line.count("(") + line.count("[") + line.count("{")
    closes = line.count(")") + line.count("]") + line.count("}")
    if closes <= depth:
        return opens - closes, 0
    low = change = 0
    for ch in _NOT_BRACKETS.sub("", line):
        if ch in _OPENERS:
            change += 1
        else:
            change -= 1
            low = min(low, change)
    return change, low


def _op_word(word: str):
    """The OpDef a line's first word names (``None`` when it names no registered op)."""
    from tile_lsp.dialect.registry import lookup

    return lookup(word)


def _is_closed(kind: str, word: str, text: str) -> bool:
    """Whether a unit neither defines nor uses SSA values of another unit."""
    if kind == "alias":
        return True
    if kind != "op":
        return False
    opdef = _op_word(word)
    if opdef is not None and opdef.has_trait("IsolatedFromAbove"):
        return True
    return "%" not in text


def _cut(text: str, lines: list[str], offsets: list[int], first: int, last: int, top: bool) -> list[Unit] | None:
    """Units of lines ``first``..``last`` (exclusive) of one level, or ``None`` if the level cannot be cut."""
    starts: list[tuple[int, str, str]] = []  # (line, kind, word)
    indent: str | None = None
    depth = 0
    for k in range(first, last):
        line = lines[k]
        if depth == 0:
            m = _ITEM_START.match(line)
            if m is not None and (indent is None or m.group(1) == indent):
                kind, word = _item_kind(m, top)
                if kind:
                    if indent is None:
                        indent = m.group(1)
                    starts.append((k, kind, word))
        change, low = _depth_change(line, depth)
        if depth + low < 0:
            return _cut_by_indent(text, lines, offsets, first, last, top, indent)
        depth += change
    if not starts:
        return None
    if depth != 0:
        return _cut_by_indent(text, lines, offsets, first, last, top, indent)
    return _make_units(text, lines, offsets, first, last, starts)


def _cut_by_indent(text: str, lines: list[str], offsets: list[int], first: int, last: int, top: bool,
                   indent: str | None) -> list[Unit] | None:
    """Units of a level whose brackets do not balance: cut at the item lines indented as the level's first.

    Accepted only when at most one unit is unbalanced, so that a missing or
    extra bracket stays within the unit being edited.
    """
    if indent is None:
        return None
    starts: list[tuple[int, str, str]] = []
    for k in range(first, last):
        m = _ITEM_START.match(lines[k])
        if m is None or m.group(1) != indent:
            continue
        kind, word = _item_kind(m, top)
        if kind:
            starts.append((k, kind, word))
    if not starts:
        return None
    unbalanced = 0
    for n, (k, _, _) in enumerate(starts):
        begin = first if n == 0 else k
        stop = starts[n + 1][0] if n + 1 < len(starts) else last
        depth = 0
        ok = True
        for j in range(begin, stop):
            change, low = _depth_change(lines[j], depth)
            if depth + low < 0:
                ok = False
            depth += change
        if not ok or depth != 0:
            unbalanced += 1
    if unbalanced > 1:
        return None
    units = _make_units(text, lines, offsets, first, last, starts)
    return None if units is None else [dataclasses.replace(u, exact=False) for u in units]


def _item_kind(m: re.Match, top: bool) -> tuple[str, str]:
    """(kind, first word) of a line matching ``_ITEM_START``; kind ``""`` when the line starts no item."""
    if m.group(2):
        return "value-op", ""  # results: closed only if the unit uses no value
    if m.group(3):
        return "value-op", ""
    if m.group(4):
        return ("alias" if top else "bad"), ""
    word = m.group(5)
    if _op_word(word) is not None or "." in word:
        return "op", word
    return "", ""


def _make_units(text: str, lines: list[str], offsets: list[int], first: int, last: int,
                starts: list[tuple[int, str, str]]) -> list[Unit] | None:
    units: list[Unit] = []
    for n, (k, kind, word) in enumerate(starts):
        begin = first if n == 0 else k
        stop = starts[n + 1][0] if n + 1 < len(starts) else last
        start, end = offsets[begin], offsets[stop]
        body = text[start:end]
        if kind == "value-op":
            if "%" in _STRIP.sub("", body):
                return None
            kind = "op"
        if not _is_closed(kind, word, body):
            return None
        unit = Unit(start, end, begin, kind)
        if kind == "op" and word in CONTAINER_OPS:
            unit = _container(text, lines, offsets, k, stop, unit) or unit
        units.append(unit)
    return units


def _container(text: str, lines: list[str], offsets: list[int], head: int, stop: int, unit: Unit) -> Unit | None:
    """``unit`` as a container when its header line opens the body and a later line closes it."""
    header = _STRIP.sub("", lines[head]).rstrip()
    if not header.endswith("{") or _depth_change(lines[head])[0] != 1:
        return None
    foot = None
    for k in range(stop - 1, head, -1):
        stripped = lines[k].strip()
        if stripped and not stripped.startswith("//"):
            foot = k
            break
    if foot is None or foot == head + 1 or not lines[foot].lstrip().startswith("}"):
        return None
    change, low = _depth_change(lines[foot])
    if low != -1 or change != -1:
        return None
    children = _cut(text, lines, offsets, head + 1, foot, top=False)
    if children is None:
        return None
    return dataclasses.replace(unit, kind="container", header_end=offsets[head + 1], footer_start=offsets[foot],
                               children=tuple(children))


def _source_of_lines(text: str, line_starts: list[int]) -> SourceText:
    source = SourceText.__new__(SourceText)
    source.text = text
    source.line_starts = line_starts
    return source


def _container_source(first: int, header: str, blank: int, footer: str) -> tuple[SourceText, str]:
    """The source ``"\\n" * first + header + "\\n" * blank + footer`` and its part after the first lines.

    Built without scanning the blank lines (a module's body is most of a file).
    """
    virtual = header + "\n" * blank + footer
    starts = list(range(first + 1))
    base = first
    starts.extend(base + s for s in SourceText(header).line_starts[1:])
    base += len(header)
    starts.extend(range(base + 1, base + blank + 1))
    base += blank
    starts.extend(base + s for s in SourceText(footer).line_starts[1:])
    return _source_of_lines("\n" * first + virtual, starts), virtual


def updated_source(old: SourceText, text: str) -> SourceText:
    """``SourceText(text)`` computed from ``old`` (an earlier version of the text): only the edited span is scanned."""
    p = _common_prefix(old.text, text)
    s = _common_suffix(old.text, text, p)
    old_end, new_end = len(old.text) - s, len(text) - s
    chars = len(text) - len(old.text)
    starts = old.line_starts
    keep = bisect.bisect_right(starts, p)
    out = starts[:keep]
    i = text.find("\n", p, new_end)
    while i != -1:
        out.append(i + 1)
        i = text.find("\n", i + 1, new_end)
    after = bisect.bisect_left(starts, old_end + 1)
    out.extend(x + chars for x in starts[after:])
    return _source_of_lines(text, out)


def _all_exact(units) -> bool:
    return all(u.exact and _all_exact(u.children) for u in units)


_BLOCK = 4096


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (compared block by block)."""
    n = min(len(a), len(b))
    i = 0
    while i + _BLOCK <= n and a[i:i + _BLOCK] == b[i:i + _BLOCK]:
        i += _BLOCK
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix of ``a`` and ``b`` not overlapping their first ``limit`` characters."""
    la, lb = len(a), len(b)
    n = min(la, lb) - limit
    i = 0
    while i + _BLOCK <= n and a[la - i - _BLOCK:la - i] == b[lb - i - _BLOCK:lb - i]:
        i += _BLOCK
    while i < n and a[la - i - 1] == b[lb - i - 1]:
        i += 1
    return i


def _shifted(u: Unit, chars: int, lines: int) -> Unit:
    return dataclasses.replace(
        u, start=u.start + chars, end=u.end + chars, line=u.line + lines,
        header_end=u.header_end + chars if u.kind == "container" else u.header_end,
        footer_start=u.footer_start + chars if u.kind == "container" else u.footer_start,
        children=tuple(_shifted(c, chars, lines) for c in u.children))


def update_layout(old_text: str, old_layout: list[Unit] | None, new_text: str) -> list[Unit] | None:
    """The layout of ``new_text`` from that of ``old_text`` when an edit stays inside one unit.

    The edit (the span where the texts differ) must lie within one unit that
    is not a container, after its first line; the unit's new text, cut on
    its own, must still make one balanced unit of the same kind.  Then only
    the offsets and lines of what follows move, and the result is what
    :func:`split_units` returns for ``new_text``.  ``None`` when that cannot be
    shown (the caller cuts the whole text).
    """
    if not old_layout or not _all_exact(old_layout):
        return None
    p = _common_prefix(old_text, new_text)
    s = _common_suffix(old_text, new_text, p)
    old_end, new_end = len(old_text) - s, len(new_text) - s
    chars = len(new_text) - len(old_text)
    path: list[tuple[list[Unit], int]] = []
    units = old_layout
    top = True
    while True:
        k = next((k for k, u in enumerate(units) if u.start <= p < u.end or (u.start <= p == u.end == len(old_text))),
                 None)
        if k is None:
            return None
        u = units[k]
        path.append((units, k))
        if u.kind != "container":
            break
        if not (u.header_end <= p and old_end <= u.footer_start):
            return None
        units = list(u.children)
        top = False
    leaf = path[-1][0][path[-1][1]]
    first_line_end = old_text.find("\n", leaf.start)
    if first_line_end < 0 or p <= first_line_end or old_end > leaf.end:
        return None
    text = new_text[leaf.start:leaf.end + chars]
    lines = text.splitlines(keepends=True)
    offsets = [0] * (len(lines) + 1)
    pos = 0
    for n, line in enumerate(lines):
        offsets[n] = pos
        pos += len(line)
    offsets[len(lines)] = pos
    again = _cut(text, lines, offsets, 0, len(lines), top)
    if again is None or len(again) != 1 or not again[0].exact or again[0].kind != leaf.kind:
        return None
    line_delta = new_text.count("\n", p, new_end) - old_text.count("\n", p, old_end)
    # rebuild the path from the leaf up, moving what follows the edit
    replacement = dataclasses.replace(leaf, end=leaf.end + chars)
    for depth in range(len(path) - 1, -1, -1):
        level, k = path[depth]
        rebuilt = list(level[:k]) + [replacement] + [_shifted(u, chars, line_delta) for u in level[k + 1:]]
        if depth == 0:
            return rebuilt
        parent_level, pk = path[depth - 1]
        parent = parent_level[pk]
        replacement = dataclasses.replace(parent, end=parent.end + chars, footer_start=parent.footer_start + chars,
                                          children=tuple(rebuilt))
    return None


def chunk_layout(text: str, previous=None) -> list[Unit] | None:
    """The units of a chunk's ``text``: updated from ``previous`` (a :class:`ChunkState`) when possible."""
    if previous is not None and previous.layout is not None:
        updated = update_layout(previous.text, previous.layout, text)
        if updated is not None:
            return updated
    return split_units(text)


def split_units(text: str) -> list[Unit] | None:
    """The top-level units of a chunk's ``text``, or ``None`` when it has fewer than two or cannot be cut.

    Offsets and lines are relative to ``text``.
    """
    lines = text.splitlines(keepends=True)
    if not lines:
        return None
    offsets = [0] * (len(lines) + 1)
    pos = 0
    for k, line in enumerate(lines):
        offsets[k] = pos
        pos += len(line)
    offsets[len(lines)] = pos
    units = _cut(text, lines, offsets, 0, len(lines), top=True)
    if units is None:
        return None
    if len(units) == 1 and units[0].kind != "container":
        return None
    return units


# ---------------------------------------------------------------------------
# Per-unit results
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class UnitResult:
    """What the analysis of one unit produced, in whole-file coordinates.

    ``ops`` are the operations the unit built (usually one); ``issues`` its
    syntax errors, ``build`` the builder's diagnostics, ``verify`` the
    verifier's (``None`` until verified), ``verify_key`` the environment
    they were computed in.  ``first_line``/``last_line`` are the whole-file
    lines the unit spans.  A container's ``children`` are its body's units.
    """

    text: str
    kind: str
    first_line: int
    last_line: int
    ops: list = field(default_factory=list)
    issues: list[Diagnostic] = field(default_factory=list)
    build: list[Diagnostic] = field(default_factory=list)
    verify: list[Diagnostic] | None = None
    verify_key: tuple | None = None
    aliases: tuple = ()
    children: list[UnitResult] = field(default_factory=list)
    # a container's own verification: before its children, and after them
    head: list[Diagnostic] = field(default_factory=list)
    tail: list[Diagnostic] = field(default_factory=list)
    uses_locations: bool = False
    head_text: str = ""


def _shift_range(r: Range | None, delta: int) -> Range | None:
    if r is None:
        return None
    return Range(Position(r.start.line + delta, r.start.character), Position(r.end.line + delta, r.end.character))


def _shift_diagnostics(diags: list[Diagnostic], delta: int, first: int, last: int) -> list[Diagnostic]:
    """Copies of ``diags`` moved by ``delta`` lines; notes outside lines ``first..last`` stay."""
    out = []
    for d in diags:
        notes = [dataclasses.replace(n, range=_shift_range(n.range, delta))
                 if n.range is not None and n.uri is None and first <= n.range.start.line <= last else n
                 for n in d.notes]
        out.append(dataclasses.replace(d, range=_shift_range(d.range, delta), notes=notes))
    return out


class _Shifter:
    """Moves the ranges of a unit's IR by ``delta`` lines, in place; objects in ``foreign`` are left alone."""

    def __init__(self, delta: int, foreign: set[int]):
        self.delta = delta
        self.seen: set[int] = set(foreign)

    def value(self, v) -> None:
        if id(v) in self.seen:
            return
        self.seen.add(id(v))
        d = self.delta
        v.range = _shift_range(v.range, d)
        for use in v.uses:
            if id(use) not in self.seen:
                self.seen.add(id(use))
                use.range = _shift_range(use.range, d)

    def attribute(self, a) -> None:
        from tile_lsp.analysis.attributes import Attribute

        stack = [a]
        while stack:
            a = stack.pop()
            if id(a) in self.seen:
                continue
            self.seen.add(id(a))
            a.range = _shift_range(a.range, self.delta)
            for v in vars(a).values():
                if isinstance(v, Attribute):
                    stack.append(v)
                elif isinstance(v, (list, tuple)):
                    stack.extend(x for x in v if isinstance(x, Attribute))
                elif isinstance(v, dict):
                    stack.extend(x for x in v.values() if isinstance(x, Attribute))

    def op(self, op) -> None:
        d = self.delta
        for inner in op.walk():
            inner.range = _shift_range(inner.range, d)
            inner.name_range = _shift_range(inner.name_range, d)
            inner.operand_ranges = [_shift_range(r, d) for r in inner.operand_ranges]
            if inner.part_ranges:
                inner.part_ranges = {k: _shift_range(r, d) for k, r in inner.part_ranges.items()}
            for v in inner.operands:
                if v is not None:
                    self.value(v)
            for v in inner.results:
                self.value(v)
            for a in inner.properties.values():
                self.attribute(a)
            for a in inner.attributes.values():
                self.attribute(a)
            if inner.location is not None:
                self.attribute(inner.location)
            for region in inner.regions:
                region.range = _shift_range(region.range, d)
                for block in region.blocks:
                    block.range = _shift_range(block.range, d)
                    block.label_range = _shift_range(block.label_range, d)
                    for arg in block.arguments:
                        self.value(arg)


def _alias_objects(module) -> set[int]:
    """Ids of the attributes reachable from the module's alias tables (owned by alias units)."""
    from tile_lsp.analysis.attributes import Attribute

    seen: set[int] = set()
    stack = list(module.attr_aliases.values())
    while stack:
        a = stack.pop()
        if not isinstance(a, Attribute) or id(a) in seen:
            continue
        seen.add(id(a))
        for v in vars(a).values():
            if isinstance(v, Attribute):
                stack.append(v)
            elif isinstance(v, (list, tuple)):
                stack.extend(v)
            elif isinstance(v, dict):
                stack.extend(v.values())
    return seen


# ---------------------------------------------------------------------------
# Analysis of a chunk by units
# ---------------------------------------------------------------------------


def _options_key(options) -> tuple:
    if dataclasses.is_dataclass(options):
        return tuple((f.name, repr(getattr(options, f.name))) for f in dataclasses.fields(options))
    return (repr(options),)


class _Pool:
    """Unit results of the previous analysis, by text, each taken at most once."""

    def __init__(self, results: list[UnitResult]):
        self.by_text: dict[str, list[UnitResult]] = {}
        for r in results:
            self.by_text.setdefault(r.text, []).append(r)

    def take(self, text: str, first_line: int) -> UnitResult | None:
        found = self.by_text.get(text)
        if not found:
            return None
        for k, r in enumerate(found):
            if r.first_line == first_line:
                return found.pop(k)
        return found.pop(0)


@dataclass
class ChunkState:
    """What :class:`IncrementalAnalyzer` keeps of one analysed chunk."""

    text: str
    first_line: int
    units: list[UnitResult]
    alias_key: tuple
    line_span: tuple[int, int]
    aliases: tuple = ({}, {})
    layout: list | None = None
    reused: int = 0
    rebuilt: int = 0


class _ChunkRun:
    """One analysis of a chunk by units (fresh, or reusing ``pool``)."""

    def __init__(self, chunk, layout: list[Unit], options, source: SourceText, pool: _Pool | None,
                 previous: ChunkState | None):
        from tile_lsp.analysis.ir import Module

        self.chunk = chunk
        self.layout = layout
        self.options = options
        self.source = source
        self.base = chunk.start_offset
        self.first_line = source.position(self.base).line
        self.module = Module()
        self.module.line_span = (self.first_line, self.first_line + chunk.text.count("\n"))
        self.pool = pool
        self.previous = previous
        self.previous_aliases: tuple | None = None
        self.reused = 0
        self.rebuilt = 0

    # -- building ---------------------------------------------------------------

    def _unit_lines(self, unit: Unit) -> tuple[int, int]:
        text = self.chunk.text
        first = self.first_line + unit.line
        return first, first + text.count("\n", unit.start, max(unit.end - 1, unit.start))

    def _parse_build(self, text: str, start: int, block, scope, aliases_only: bool = False):
        """Parse ``text`` (at chunk offset ``start``) and build its items into ``block``."""
        from tile_lsp.analysis.builder import Builder
        from tile_lsp.grammar.parse import parse

        base = self.base + start
        result = parse(text, max_issues=50)
        issues = [Diagnostic(Severity.ERROR, i.message, self.source.range(base + i.start, base + i.end), "parse.syntax")
                  for i in result.issues]
        builder = Builder(self.source, base, result.text)
        builder.module = self.module
        ops = []
        aliases = []
        if result.tree is not None:
            for item in result.tree.children:
                if not hasattr(item, "data"):
                    continue
                if item.data == "attr_alias_def":
                    name = str(item.children[0])[1:]
                    self.module.attr_aliases[name] = builder.attribute(item.children[1])
                    aliases.append(("#", name))
                elif item.data == "type_alias_def":
                    name = str(item.children[0])[1:]
                    self.module.type_aliases[name] = builder.type(item.children[1])
                    aliases.append(("!", name))
                elif item.data == "operation":
                    op = builder.operation(item, block, scope)
                    if op is not None:
                        ops.append(op)
        return ops, issues, builder.diagnostics, tuple(aliases)

    def _build_container(self, unit: Unit, block, scope, first: int, last: int) -> UnitResult:
        """Build a container op from its header and footer lines (body blanked) and its body units."""
        from tile_lsp.analysis.builder import Builder
        from tile_lsp.analysis.ir import Block
        from tile_lsp.grammar.parse import parse

        text = self.chunk.text
        header = text[unit.start:unit.header_end]
        footer = text[unit.footer_start:unit.end]
        body_lines = text.count("\n", unit.header_end, unit.footer_start)
        # a source whose lines before the header and in the body are empty: header and footer keep their positions
        vsource, virtual = _container_source(first, header, body_lines, footer)
        result = parse(virtual, max_issues=50)
        issues = [Diagnostic(Severity.ERROR, i.message, vsource.range(first + i.start, first + i.end), "parse.syntax")
                  for i in result.issues]
        builder = Builder(vsource, first, result.text)
        builder.module = self.module
        ops = []
        if result.tree is not None:
            for item in result.tree.children:
                if getattr(item, "data", None) == "operation":
                    op = builder.operation(item, block, scope)
                    if op is not None:
                        ops.append(op)
        if issues or len(ops) != 1 or not ops[0].regions:
            # the header and footer do not make one op with a body: parse the container whole
            for op in ops:
                block.operations.remove(op)
            return self._plain(unit, block, scope, first, last)
        res = UnitResult(text[unit.start:unit.end], unit.kind, first, last, ops, issues, builder.diagnostics)
        res.head_text = header
        sink = getattr(_PROGRESS, "sink", None)
        if sink is not None:
            sink.partial.extend(issues + builder.diagnostics)
        container = ops[0]
        region = container.regions[0]
        from tile_lsp.analysis.builder import Scope

        inner_block = Block(parent=region)
        inner_scope = Scope(parent=scope, isolated=True)
        for child in unit.children:
            res.children.append(self._unit(child, inner_block, inner_scope))
        if inner_block.operations:
            region.blocks.append(inner_block)
            inner_block.range = Range(inner_block.operations[0].range.start, inner_block.operations[-1].range.end)
        return res

    def _unit(self, unit: Unit, block, scope) -> UnitResult:
        text = self.chunk.text[unit.start:unit.end]
        first, last = self._unit_lines(unit)
        sink = getattr(_PROGRESS, "sink", None)
        if unit.kind != "container" and self.pool is not None:
            old = self.pool.take(text, first)
            if old is not None and old.kind == unit.kind:
                res = self._reuse(old, first, last, block)
                if sink is not None:
                    sink.unit_done(res)
                return res
        self.rebuilt += 1
        if unit.kind == "container":
            return self._build_container(unit, block, scope, first, last)
        res = self._plain(unit, block, scope, first, last)
        if sink is not None:
            sink.unit_done(res)
        return res

    def _plain(self, unit: Unit, block, scope, first: int, last: int) -> UnitResult:
        text = self.chunk.text[unit.start:unit.end]
        ops, issues, build, aliases = self._parse_build(text, unit.start, block, scope)
        kind = "op" if unit.kind == "container" else unit.kind
        res = UnitResult(text, kind, first, last, ops, issues, build, aliases=aliases)
        res.uses_locations = "loc(" in text
        self.new_ops.extend(ops)
        return res

    def _reuse(self, old: UnitResult, first: int, last: int, block) -> UnitResult:
        self.reused += 1
        delta = first - old.first_line
        if delta:
            shifter = _Shifter(delta, self.foreign)
            for op in old.ops:
                shifter.op(op)
            old.issues = _shift_diagnostics(old.issues, delta, old.first_line, old.last_line)
            old.build = _shift_diagnostics(old.build, delta, old.first_line, old.last_line)
            if old.verify is not None:
                if old.uses_locations:
                    old.verify = None  # file locations are shown at fixed lines: verify again
                else:
                    old.verify = _shift_diagnostics(old.verify, delta, old.first_line, old.last_line)
            old.first_line, old.last_line = first, last
        for op in old.ops:
            op.parent = block
            block.operations.append(op)
        return old

    def build(self) -> list[UnitResult]:
        from tile_lsp.analysis.builder import Scope

        self.new_ops: list = []
        self.foreign: set[int] = set()
        scope = Scope(isolated=True)
        block = self.module.body
        full = self.previous_aliases
        if full is not None:
            # aliases are shared by every unit: reused only when none changed or moved.  While
            # building, a unit sees the aliases defined above it, as in a fresh build.
            self.module.attr_aliases, self.module.type_aliases = full
            self.foreign = _alias_objects(self.module)
            self.module.attr_aliases, self.module.type_aliases = {}, {}
        units = []
        for u in self.layout:
            res = self._unit(u, block, scope)
            units.append(res)
            if full is not None:
                for sigil, name in res.aliases:
                    table, visible = (full[0], self.module.attr_aliases) if sigil == "#" else \
                        (full[1], self.module.type_aliases)
                    if name in table:
                        visible[name] = table[name]
        if full is not None:
            self.module.attr_aliases, self.module.type_aliases = full
        aliases = self.module.attr_aliases
        if self.new_ops and aliases:
            # as Builder.resolve_location_aliases, once every alias of the chunk is known
            for top in self.new_ops:
                for op in top.walk():
                    loc = op.location
                    if isinstance(loc, A.LocationAttr) and loc.kind == "alias" and loc.alias in aliases:
                        op.location = aliases[loc.alias]
        return units

    # -- verifying ----------------------------------------------------------------

    def verify(self, units: list[UnitResult]) -> None:
        from tile_lsp.analysis.ir import SymbolTable
        from tile_lsp.analysis.verifier import (
            VerifyContext,
            _load_rule_modules,
            verify_op,
            verify_op_head,
            verify_op_tail,
        )

        _load_rule_modules()
        ctx = VerifyContext(self.options, self.module)
        tables: dict = {}
        okey = _options_key(self.options)
        span = self.module.line_span

        def level(results: list[UnitResult], symbols: tuple, chain: tuple) -> None:
            for n, res in enumerate(results):
                if res.kind == "container" and len(res.ops) == 1 and res.ops[0].regions:
                    op = res.ops[0]
                    start = len(ctx.diagnostics)
                    ok = verify_op_head(op, ctx)
                    res.head = ctx.diagnostics[start:]
                    del ctx.diagnostics[start:]
                    if ok:
                        table = SymbolTable(op)
                        inner_symbols = tuple((k, v.name) for k, v in table.symbols.items())
                        level(res.children, inner_symbols, chain + (res.head_text,))
                        start = len(ctx.diagnostics)
                        verify_op_tail(op, ctx, tables)
                        res.tail = ctx.diagnostics[start:]
                        del ctx.diagnostics[start:]
                    else:
                        res.tail = []
                        for child in res.children:
                            child.verify, child.verify_key = [], None
                    continue
                key = (okey, chain, symbols, n == len(results) - 1, span if res.uses_locations else None)
                if res.verify is not None and res.verify_key == key:
                    continue
                start = len(ctx.diagnostics)
                for op in res.ops:
                    verify_op(op, ctx, tables)
                res.verify = ctx.diagnostics[start:]
                res.verify_key = key
                del ctx.diagnostics[start:]

        top = SymbolTable(self.module)
        level(units, tuple((k, v.name) for k, v in top.symbols.items()), ())


def _walk_results(units: list[UnitResult]):
    for r in units:
        yield r
        yield from _walk_results(r.children)


def _collect(units: list[UnitResult]) -> list[Diagnostic]:
    """Diagnostics in the order the whole-chunk pipeline reports them, then sorted by position."""
    issues: list[Diagnostic] = []
    build: list[Diagnostic] = []
    verify: list[Diagnostic] = []

    def walk(results: list[UnitResult]) -> None:
        for r in results:
            issues.extend(r.issues)
            build.extend(r.build)
            walk(r.children)

    def walk_verify(results: list[UnitResult]) -> None:
        for r in results:
            if r.kind == "container" and r.ops and r.ops[0].regions:
                verify.extend(r.head)
                walk_verify(r.children)
                verify.extend(r.tail)
            elif r.verify is not None:
                verify.extend(r.verify)

    walk(units)
    walk_verify(units)
    out = issues + build + verify
    out.sort(key=Diagnostic.sort_key)
    return out


def analyze_units(chunk, layout: list[Unit], options, source: SourceText, previous: ChunkState | None = None):
    """Analyse ``chunk`` unit by unit; returns ``(ChunkAnalysis, ChunkState)``.

    ``previous`` is the state of the last analysis of the same document
    chunk (reused where units are unchanged); ``None`` for a fresh analysis.
    """
    from tile_lsp.analysis.api import ChunkAnalysis

    run = _ChunkRun(chunk, layout, options, source, None, previous)
    alias_key = tuple(chunk.text[u.start:u.end] for u in layout if u.kind == "alias")
    alias_lines = tuple(u.line for u in layout if u.kind == "alias")
    # aliases are reused in place: only when none changed or moved (a chunk without any may move)
    key = (alias_key, alias_lines, run.first_line if alias_key else None)
    if previous is not None and previous.alias_key == key:
        run.pool = _Pool([r for r in _walk_results(previous.units) if r.kind != "container"])
        run.previous_aliases = previous.aliases
    units = run.build()
    run.verify(units)
    state = ChunkState(chunk.text, run.first_line, units, key, run.module.line_span, layout=layout)
    state.aliases = (run.module.attr_aliases, run.module.type_aliases)
    state.reused, state.rebuilt = run.reused, run.rebuilt
    analysis = ChunkAnalysis(chunk, run.module, _collect(units))
    analysis.units = units
    return analysis, state


_PROGRESS = threading.local()


class _Progress:
    """Reports the diagnostics found so far while a long analysis runs (see :meth:`IncrementalAnalyzer.analyze`).

    Before the end only syntax and IR-building diagnostics of the units
    built so far are known (verification needs the whole chunk's symbols).
    """

    def __init__(self, report, first_after: float, every: float):
        self.report = report
        self.first_after = first_after
        self.next: float | None = None  # the clock starts with the first unit (not while the parser loads)
        self.every = every
        self.done: list[Diagnostic] = []
        self.partial: list[Diagnostic] = []

    def unit_done(self, res: UnitResult) -> None:
        self.partial.extend(res.issues)
        self.partial.extend(res.build)
        now = time.perf_counter()
        if self.next is None:
            self.next = now + self.first_after
        elif now >= self.next:
            self.next = now + self.every
            self.report(self.done + sorted(self.partial, key=Diagnostic.sort_key))

    def chunk_done(self, diagnostics: list[Diagnostic]) -> None:
        self.done.extend(diagnostics)
        self.partial = []


class IncrementalAnalyzer:
    """Analyses successive versions of one document, reusing unchanged units.

    :meth:`analyze` returns what :func:`tile_lsp.analysis.api.analyze_text`
    returns for the same text and options.  Calls are serialised (a lock):
    the IR of reused units is moved in place, so two analyses of one
    document must not overlap.  ``last_stats`` tells how many units the
    last call reused and rebuilt.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chunks: list[ChunkState] = []
        self._options_key: tuple | None = None
        self._source: SourceText | None = None
        self.last_stats: tuple[int, int] = (0, 0)

    def analyze(self, text: str, options=None, *, progress=None, first_after: float = 0.5, every: float = 2.0,
                blocking: bool = True):
        """Analyse ``text``; never raises on bad input (see ``analyze_text``).

        ``progress``, when given and this is the document's first analysis
        (or the first since the options changed), is called (in the calling
        thread) with the diagnostics known so far when a unit is done ``first_after`` seconds
        after the first one, then every ``every`` seconds: those of the
        chunks done and the syntax and IR-building diagnostics of the units
        built so far.  The returned analysis is complete.  With
        ``blocking=False``, ``None`` is returned at once when another
        analysis of the document is running.
        """
        from tile_lsp.analysis.api import AnalysisOptions

        options = options or AnalysisOptions()
        if not self._lock.acquire(blocking=blocking):
            return None
        try:
            return self._analyze(text, options, progress, first_after, every)
        finally:
            self._lock.release()

    def _analyze(self, text: str, options, progress, first_after: float, every: float):
        from tile_lsp.analysis.api import DocumentAnalysis
        from tile_lsp.analysis.pipeline import analyze_chunk
        from tile_lsp.analysis.split import Chunk, split_chunks

        key = _options_key(options)
        if key != self._options_key:
            self._chunks = []
            self._options_key = key
        chunks = split_chunks(text) if options.split_input_file else [Chunk(0, 0, text)]
        source = updated_source(self._source, text) if self._source is not None else SourceText(text)
        self._source = source
        previous = {c.text: c for c in self._chunks}
        states: list[ChunkState] = []
        results = []
        reused = rebuilt = 0
        # only a first analysis is long enough to be worth partial reports
        sink = _Progress(progress, first_after, every) if progress is not None and not self._chunks else None
        _PROGRESS.sink = sink
        try:
            used: set[int] = set()
            for n, chunk in enumerate(chunks):
                prev = self._chunks[n] if n < len(self._chunks) else None
                if (prev is None or prev.text != chunk.text) and chunk.text in previous:
                    prev = previous[chunk.text]
                if prev is not None and id(prev) in used:
                    prev = None  # its IR went to an earlier chunk of the same text
                if prev is not None:
                    used.add(id(prev))
                state_box: list = []
                results.append(analyze_chunk(chunk, options, source, previous=prev, state_out=state_box))
                if sink is not None:
                    sink.chunk_done(results[-1].diagnostics)
                if state_box:
                    states.append(state_box[0])
                    reused += state_box[0].reused
                    rebuilt += state_box[0].rebuilt
                else:
                    states.append(ChunkState(chunk.text, 0, [], (), (0, 0)))
        finally:
            _PROGRESS.sink = None
        self._chunks = states
        self.last_stats = (reused, rebuilt)
        return DocumentAnalysis(text, results)
