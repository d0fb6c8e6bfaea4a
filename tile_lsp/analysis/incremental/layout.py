"""Where a chunk's text is cut into units, and how the cut follows an edit.

A chunk's text is cut, at text level, into **units**: the top-level items
(one ``cuda_tile.entry``, one ``global``, one ``#alias = ...`` definition) of
the chunk and, recursively, of the body of each container op
(``cuda_tile.module``, ``builtin.module``) written as::

    cuda_tile.module @m {      <- header line: ends with the `{` of the body
      entry @a(...) { ... }    <- body units, one per item
      global @g ...
    }                          <- footer line: starts with the `}` of the body

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

:func:`update_layout` moves the units of the previous text past an edit
without cutting the whole text again; :class:`Edit` says where the text
changed.  The analysis of the units is :mod:`tile_lsp.analysis.incremental.units`.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass

from tile_lsp.analysis.ir.diagnostics import SourceText, numbers, split_lines
from tile_lsp.grammar.lexical import STRINGS_AND_COMMENTS

#: Ops whose body is cut into units when written as a container (header line `{`, footer line `}`).
CONTAINER_OPS = frozenset({"cuda_tile.module", "module", "builtin.module"})
#: Ops whose single-block body is cut into statements (units sharing SSA values) when written as a container.
FUNCTION_OPS = frozenset({"cuda_tile.entry"})

_ITEM_START = re.compile(r'([ \t]*)(?:(%)|(")|([#!][A-Za-z0-9_$.\-]+[ \t]*=)|([A-Za-z_][A-Za-z0-9_$.]*))')
_OPENERS = "([{"
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)
class Unit:
    """One unit: code-point span ``[start, end)`` of the chunk text and its first line; a value
    (never changed once made; not ``frozen``, which makes each of a big file's 50,000 slower to build).

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


def depth_change(line: str, depth: int = 0) -> tuple[int, int]:
    """(net bracket depth change of ``line``, lowest running change reached) outside strings and comments.

    The lowest change is only computed when it could take a running depth
    of ``depth`` below zero (else 0 is returned for it).
    """
    return _change(_counts(line), depth)


def _counts(line: str) -> tuple[int, int, str]:
    """(net bracket change, closing brackets, the line without strings and comments) of ``line``."""
    plain = STRINGS_AND_COMMENTS.sub("", line) if '"' in line or "//" in line else line
    closes = plain.count(")") + plain.count("]") + plain.count("}")
    return plain.count("(") + plain.count("[") + plain.count("{") - closes, closes, plain


def _change(counts: tuple[int, int, str], depth: int) -> tuple[int, int]:
    """:func:`depth_change` from a line's :func:`_counts`: the running change walked only when its
    closing brackets could take ``depth`` below zero."""
    net, closes, plain = counts
    if closes <= depth:
        return net, 0
    low = change = 0
    for ch in _NOT_BRACKETS.sub("", plain):
        if ch in _OPENERS:
            change += 1
        else:
            change -= 1
            low = min(low, change)
    return change, low


#: line -> its :func:`_counts`, while one layout is made (:func:`split_units`, :func:`update_layout`
#: empty it when they return): a line is read at each level (the module's, its body's, a function's),
#: and the lines of copied kernels repeat
_BRACKETS: dict[str, tuple[int, int, str]] = {}


def _depth(line: str, depth: int = 0) -> tuple[int, int]:
    """:func:`depth_change` of ``line``, its counts kept in :data:`_BRACKETS` (the layout being made)."""
    found = _BRACKETS.get(line)
    if found is None:
        found = _BRACKETS[line] = _counts(line)
    return _change(found, depth)


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
        change, low = _depth(line, depth)
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
            change, low = _depth(lines[j], depth)
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
            if "%" in STRINGS_AND_COMMENTS.sub("", body):
                return None
            kind = "op"
        if not _is_closed(kind, word, body):
            return None
        unit = Unit(start, end, begin, kind)
        if kind == "op" and word in CONTAINER_OPS:
            unit = _container(text, lines, offsets, k, stop, unit) or unit
        elif kind == "op" and _is_function_word(word):
            unit = _function(text, lines, offsets, k, stop, unit) or unit
        units.append(unit)
    return units


def _is_function_word(word: str) -> bool:
    opdef = _op_word(word)
    return opdef is not None and opdef.full_name in FUNCTION_OPS


def _cut_statements(lines: list[str], offsets: list[int], first: int, last: int
                    ) -> tuple[list[Unit], str, int] | None:
    """Statements of a single-block body (lines ``first``..``last``): ``(units, indent, first item line)``.

    A statement starts on a line at bracket depth 0 indented as the body's
    first item, whose first word starts an operation (``%`` results, a
    registered or dialect-qualified op name, a generic op's string).
    ``None`` when the body's brackets do not balance, when it has block
    labels (``^bb``) or alias definitions, or no statement.
    """
    starts: list[int] = []
    indent: str | None = None
    depth = 0
    for k in range(first, last):
        line = lines[k]
        if depth == 0:
            if line.lstrip().startswith("^"):
                return None
            m = _ITEM_START.match(line)
            if m is not None and (indent is None or m.group(1) == indent):
                kind, _ = _item_kind(m, False)
                if kind == "bad":
                    return None
                if kind:
                    if indent is None:
                        indent = m.group(1)
                    starts.append(k)
        change, low = _depth(line, depth)
        if depth + low < 0:
            return None
        depth += change
    if not starts or depth != 0:
        return None
    units = []
    for n, k in enumerate(starts):
        begin = first if n == 0 else k
        stop = starts[n + 1] if n + 1 < len(starts) else last
        units.append(Unit(offsets[begin], offsets[stop], begin, "stmt"))
    return units, indent or "", starts[0]


#: the longest function whose statements' offsets are shared ints (see ``_function``)
_SHARED_OFFSETS = 1 << 16


def _function(text: str, lines: list[str], offsets: list[int], head: int, stop: int, unit: Unit) -> Unit | None:
    """``unit`` as a function (its body cut into statements) when its header line opens the body."""
    bounds = _body_bounds(lines, head, stop)
    if bounds is None:
        return None
    cut = _cut_statements(lines, offsets, head + 1, bounds)
    if cut is None:
        return None
    # statements are kept relative to the function (offsets from its start, lines from its first line),
    # so that an edit above moves the function alone; their numbers are the shared ints of ``numbers``
    # (40,000 statements of a big file held 80,000 ints of their own: 2.5 MiB), for a function of
    # fewer than 65,536 characters (a longer one would grow the shared list for good)
    size = unit.end - unit.start + 1
    if size <= _SHARED_OFFSETS:
        n = numbers(size)
        children = tuple(Unit(n[c.start - unit.start], n[c.end - unit.start], n[c.line - unit.line], c.kind)
                         for c in cut[0])
    else:
        children = tuple(Unit(c.start - unit.start, c.end - unit.start, c.line - unit.line, c.kind) for c in cut[0])
    return dataclasses.replace(unit, kind="function", header_end=offsets[head + 1], footer_start=offsets[bounds],
                               children=children)


def _body_bounds(lines: list[str], head: int, stop: int) -> int | None:
    """The footer line of an op of lines ``head``..``stop`` whose header line opens its body, or ``None``.

    The header line must end with the ``{`` of the body and the footer line
    (its last line that is not blank or a comment) start with its ``}``.
    """
    header = STRINGS_AND_COMMENTS.sub("", lines[head]).rstrip()
    if not header.endswith("{") or _depth(lines[head])[0] != 1:
        return None
    foot = None
    for k in range(stop - 1, head, -1):
        stripped = lines[k].strip()
        if stripped and not stripped.startswith("//"):
            foot = k
            break
    if foot is None or foot == head + 1 or not lines[foot].lstrip().startswith("}"):
        return None
    change, low = _depth(lines[foot])
    if low != -1 or change != -1:
        return None
    return foot


def _container(text: str, lines: list[str], offsets: list[int], head: int, stop: int, unit: Unit) -> Unit | None:
    """``unit`` as a container when its header line opens the body and a later line closes it."""
    foot = _body_bounds(lines, head, stop)
    if foot is None:
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


def _counting(n: int) -> list[int]:
    """``list(range(n))``, sliced from one list kept for all calls (:func:`~tile_lsp.analysis.ir.diagnostics.numbers`):
    the n integers are made once, not for each of a big file's 977 functions (whose lines before them
    number 25,000 on average)."""
    shared = numbers(n)
    return shared[:n] if len(shared) >= n else list(range(n))


def container_source(first: int, header: str, blank: int, footer: str) -> tuple[SourceText, str]:
    """The source ``"\\n" * first + header + "\\n" * blank + footer`` and its part after the first lines.

    Built without scanning the blank lines (a module's body is most of a file).
    """
    virtual = header + "\n" * blank + footer
    starts = _counting(first + 1)
    base = first
    starts.extend(base + s for s in SourceText(header).line_starts[1:])
    base += len(header)
    starts.extend(range(base + 1, base + blank + 1))
    base += blank
    starts.extend(base + s for s in SourceText(footer).line_starts[1:])
    return _source_of_lines("\n" * first + virtual, starts), virtual


def updated_source(old: SourceText, text: str) -> SourceText:
    """``SourceText(text)`` computed from ``old`` (an earlier version of the text): only the edited span is scanned."""
    p, s = edit_span(old.text, text)
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
    out.extend([x + chars for x in starts[after:]] if chars else starts[after:])
    return _source_of_lines(text, out)


def all_exact(units) -> bool:
    """Whether every level of a layout was cut on balanced brackets (no unit cut by indentation)."""
    return all(u.exact and (u.kind == "function" or all_exact(u.children)) for u in units)


def function_units(units):
    """The units of kind ``"function"`` among ``units`` and inside their containers, in text order."""
    for u in units:
        if u.kind == "function":
            yield u
        elif u.kind == "container":
            yield from function_units(u.children)


_BLOCK = 256


_LAST_SPAN: list[tuple | None] = [None]  # (old text, new text, prefix, suffix) of the last edit measured


def edit_span(a: str, b: str) -> tuple[int, int]:
    """(common prefix, common suffix not overlapping it) of ``a`` and ``b``.

    The last answer is kept (one tuple, swapped atomically between threads):
    a document and its chunk are compared with their previous versions in turn.
    """
    last = _LAST_SPAN[0]
    if last is not None and last[0] is a and last[1] is b:
        return last[2], last[3]
    p = _common_prefix(a, b)
    s = _common_suffix(a, b, p)
    _LAST_SPAN[0] = (a, b, p, s)
    return p, s


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b``.

    Compared block by block, each block twice as long as the last while they
    match and half as long once one differs: an edit in the middle of a 4 MB
    text takes a few dozen comparisons of slices, not a thousand.
    """
    n = min(len(a), len(b))
    i = 0
    block = _BLOCK
    while block >= _BLOCK:
        while i + block <= n and a[i:i + block] == b[i:i + block]:
            i += block
            block *= 2
        block //= 2
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix of ``a`` and ``b`` not overlapping their first ``limit``
    characters (blocks as in :func:`_common_prefix`)."""
    la, lb = len(a), len(b)
    n = min(la, lb) - limit
    i = 0
    block = _BLOCK
    while block >= _BLOCK:
        while i + block <= n and a[la - i - block:la - i] == b[lb - i - block:lb - i]:
            i += block
            block *= 2
        block //= 2
    while i < n and a[la - i - 1] == b[lb - i - 1]:
        i += 1
    return i


_BODIED = ("container", "function")


def _shifted(u: Unit, chars: int, lines: int) -> Unit:
    """``u`` moved by ``chars`` code points and ``lines`` lines (a function's statements are relative to it)."""
    bodied = u.kind in _BODIED
    return Unit(u.start + chars, u.end + chars, u.line + lines, u.kind,
                u.header_end + chars if bodied else u.header_end,
                u.footer_start + chars if bodied else u.footer_start,
                u.children if u.kind == "function" else tuple(_shifted(c, chars, lines) for c in u.children),
                u.exact)


def _pair(new: Unit, old: Unit, same: dict) -> None:
    """Note that ``new`` and ``old`` (and their bodies' units, level by level) have the same text."""
    same[id(new)] = old
    if new.kind == "container":
        for n, o in zip(new.children, old.children):
            _pair(n, o, same)


def update_layout(old_text: str, old_layout: list[Unit] | None, new_text: str,
                  same: dict | None = None) -> list[Unit] | None:
    """The layout of ``new_text`` from that of ``old_text`` when an edit stays inside one unit.

    The edit (the span where the texts differ) must lie within one unit that
    is not a container: a top-level item after its first line, or one
    statement of a function's body.  The unit's new text, cut on its own,
    must still make one balanced unit of the same kind (a statement: with
    its first item on the same line and equally indented).  Then only the
    offsets and lines of what follows move, and the result is what
    :func:`split_units` returns for ``new_text``.  ``None`` when that cannot
    be shown (the caller cuts the whole text).

    ``same``, when given, receives ``id(new unit) -> old unit`` for each unit
    (at the top level and in containers' bodies) that the edit did not touch:
    their texts are equal, so the analysis finds their previous results
    without cutting and hashing their texts.
    """
    try:
        return _update_layout(old_text, old_layout, new_text, same)
    finally:
        _BRACKETS.clear()


def _update_layout(old_text: str, old_layout: list[Unit] | None, new_text: str, same: dict | None):
    if not old_layout or not all_exact(old_layout):
        return None
    p, s = edit_span(old_text, new_text)
    old_end, new_end = len(old_text) - s, len(new_text) - s
    chars = len(new_text) - len(old_text)
    path: list[tuple[list[Unit], int]] = []
    units = old_layout
    top = True
    base = 0  # offset of the level's origin: a function's statements are relative to it
    while True:
        k = next((k for k, u in enumerate(units)
                  if u.start <= p - base < u.end or (u.start <= p - base == u.end == len(old_text) - base)), None)
        if k is None:
            return None
        u = units[k]
        path.append((units, k))
        inside = u.header_end <= p and old_end <= u.footer_start
        if u.kind == "container" and not inside:
            return None
        if u.kind not in _BODIED or not inside:
            break
        if u.kind == "function":
            base += u.start
        units = list(u.children)
        top = False
    leaf = path[-1][0][path[-1][1]]
    start, end = base + leaf.start, base + leaf.end
    if old_end > end:
        return None
    text = new_text[start:end + chars]
    if old_text.endswith("\n", start, end) and not text.endswith("\n"):
        return None  # the line break after the unit was deleted: the next line joins it
    lines, offsets = _lines_and_offsets(text)
    if leaf.kind == "stmt":
        old_lines, old_offsets = _lines_and_offsets(old_text[start:end])
        before = _cut_statements(old_lines, old_offsets, 0, len(old_lines))
        after = _cut_statements(lines, offsets, 0, len(lines))
        if before is None or after is None or len(after[0]) != 1 or before[1:] != after[1:]:
            return None
    else:
        first_line_end = old_text.find("\n", start)
        if first_line_end < 0 or p <= first_line_end:
            return None
        again = _cut(text, lines, offsets, 0, len(lines), top)
        if again is None or len(again) != 1 or not again[0].exact or again[0].kind != leaf.kind:
            return None
    line_delta = new_text.count("\n", p, new_end) - old_text.count("\n", p, old_end)
    # rebuild the path from the leaf up, moving what follows the edit
    if leaf.kind == "function":
        replacement = _shifted(again[0], leaf.start, leaf.line)  # its statements were cut again
    else:
        replacement = dataclasses.replace(leaf, end=leaf.end + chars)
    pairs: list[tuple[Unit, Unit]] = []
    for depth in range(len(path) - 1, -1, -1):
        level, k = path[depth]
        moved = [_shifted(u, chars, line_delta) for u in level[k + 1:]]
        pairs.extend((u, u) for u in level[:k])
        pairs.extend(zip(moved, level[k + 1:]))
        rebuilt = list(level[:k]) + [replacement] + moved
        if depth == 0:
            if same is not None:
                for n, o in pairs:
                    _pair(n, o, same)
            return rebuilt
        parent_level, pk = path[depth - 1]
        parent = parent_level[pk]
        replacement = dataclasses.replace(parent, end=parent.end + chars, footer_start=parent.footer_start + chars,
                                          children=tuple(rebuilt))
    return None


def _lines_and_offsets(text: str) -> tuple[list[str], list[int]]:
    """The lines of ``text`` (with their breaks) and the offset of each, plus ``len(text)``."""
    lines = split_lines(text)
    offsets = [0] * (len(lines) + 1)
    pos = 0
    for n, line in enumerate(lines):
        offsets[n] = pos
        pos += len(line)
    offsets[len(lines)] = pos
    return lines, offsets


def chunk_layout(text: str, previous=None, same: dict | None = None) -> list[Unit] | None:
    """The units of a chunk's ``text``: updated from ``previous`` (a
    :class:`~tile_lsp.analysis.incremental.units.ChunkState`) when possible (then ``same``, when
    given, receives the units the edit did not touch, as :func:`update_layout` says)."""
    if previous is not None and previous.layout is not None:
        updated = update_layout(previous.text, previous.layout, text, same)
        if updated is not None:
            return updated
    return split_units(text)


def split_units(text: str) -> list[Unit] | None:
    """The top-level units of a chunk's ``text``, or ``None`` when it has fewer than two or cannot be cut.

    Offsets and lines are relative to ``text``.
    """
    lines, offsets = _lines_and_offsets(text)
    if not lines:
        return None
    try:
        units = _cut(text, lines, offsets, 0, len(lines), top=True)
    finally:
        _BRACKETS.clear()
    if units is None:
        return None
    if len(units) == 1 and units[0].kind != "container":
        return None
    return units


@dataclass(frozen=True)
class Edit:
    """Where the text changed since the analysis whose units are reused, in whole-file terms.

    ``offset``: the first character that differs, in the new text;
    ``first_line``/``last_line``: the lines of the old text the change
    spans; ``line_delta``: lines inserted (negative: deleted).  Units of the
    old text entirely below ``last_line`` move by ``line_delta``; those
    above ``first_line`` stay; the others are the edited ones.
    """

    offset: int
    first_line: int
    last_line: int
    line_delta: int

    @staticmethod
    def between(old: SourceText, new: SourceText) -> "Edit | None":
        """The edit from ``old`` to ``new`` (``None`` when they are equal)."""
        if old.text is new.text or old.text == new.text:
            return None
        p, s = edit_span(old.text, new.text)
        first = old.line_of(p)
        last = old.line_of(len(old.text) - s)
        return Edit(p, first, last, (new.line_of(len(new.text) - s) - first) - (last - first))

    def place(self, first_line: int, last_line: int) -> int | None:
        """How far a unit of the old text at lines ``first_line..last_line`` moves; ``None``: it was edited."""
        if last_line < self.first_line:
            return 0
        if first_line > self.last_line:
            return self.line_delta
        return None
