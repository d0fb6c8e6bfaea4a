"""Completion at a position (LSP ``textDocument/completion``), in analysis terms.

Feature: completion - ``textDocument/completion``; VS Code: suggestions while typing, or
Ctrl+Space.

The context is read from the text before the cursor (the word being typed
and what precedes it on the line); the candidates come from the IR, the op
table and the enum table:

* ``%``: SSA values in scope at the cursor (block arguments and results of
  the ops before it in the enclosing blocks, up to the nearest
  ``IsolatedFromAbove`` op), with their types as detail;
* ``@``: symbols defined in the chunk (:class:`~tile_lsp.analysis.ide.index.DocumentIndex`);
* ``^``: block labels of the enclosing region;
* at the start of a statement, or after ``%r = ``: op names of
  :func:`tile_lsp.dialect.registry.all_ops`, each with and without its
  ``cuda_tile.`` prefix;
* after ``keyword<`` (``rounding<``, ``signedness<``...) the cases of the
  enum the op's format puts there; after the op name (before ``:``) the
  cases of the enum attributes the op's format writes bare
  (``cmpi equal``, ``load_ptr_tko weak``);
* after ``:``, ``->`` or ``,`` in an op's type list: type constructors and
  the types of values in scope; after ``tile<``, ``ptr<`` or a shape ``4x``:
  element types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tile_lsp.analysis.api import DocumentAnalysis
from tile_lsp.analysis.ir.diagnostics import Position, Range, SourceText
from tile_lsp.analysis.ide.index import DocumentIndex, EntityKind
from tile_lsp.analysis.ir.core import Block, Value
from tile_lsp.analysis.ir.directives import DIRECTIVES
from tile_lsp.dialect.assembly_format import Directive, Literal, OptionalGroup, Var, parse_format
from tile_lsp.dialect.enums import ENUM_BY_KEYWORD, ENUMS, EnumDef
from tile_lsp.dialect.registry import all_ops, lookup
from tile_lsp.dialect.schema import OpDef
from tile_lsp.dialect.types import FLOAT_WIDTHS, INTEGER_WIDTHS

#: Element types offered after ``tile<``/``ptr<``/a shape.
ELEMENT_TYPES: tuple[str, ...] = tuple(f"i{w}" for w in INTEGER_WIDTHS) + tuple(
    n for n in FLOAT_WIDTHS if n not in ("f80", "f128"))
#: Type constructors offered in a type position: ``(label, snippet-free insert text)``.
TYPE_CONSTRUCTORS: tuple[str, ...] = (
    "tile<", "ptr<", "token", "tensor_view<", "partition_view<",
)


@dataclass(frozen=True)
class CompletionItem:
    """One candidate: ``label`` shown and inserted, ``kind`` (``op``, ``enum``,
    ``value``, ``symbol``, ``label``, ``type``), ``detail`` (a type, an op summary...),
    ``replace`` the range of the word being typed that the label replaces."""

    label: str
    kind: str
    detail: str = ""
    replace: Range | None = None


_WORD_BEFORE = re.compile(r"[%@^!#]?[A-Za-z0-9_$.\-]*(?:#[0-9]*)?$")


def _contains(rng: Range | None, pos: Position) -> bool:
    return rng is not None and rng.start <= pos <= rng.end


def _block_contains(block: Block, pos: Position) -> bool:
    if block.range is not None:
        return _contains(block.range, pos)
    return False


def values_in_scope(analysis: DocumentAnalysis, pos: Position) -> list[Value]:
    """Values visible at ``pos``: block arguments and earlier results of the enclosing
    blocks, innermost last, stopping at the nearest ``IsolatedFromAbove`` op."""
    for chunk in analysis.chunks:
        if chunk.module is None:
            continue
        ops = chunk.module.body.operations
        if not any(_contains(op.range, pos) for op in ops):
            continue
        out: list[Value] = []
        while True:
            owner = next((op for op in ops if _contains(op.range, pos)), None)
            if owner is None:
                return out
            region_block = None
            for region in owner.regions:
                for block in region.blocks:
                    if _block_contains(block, pos):
                        region_block = block
            if region_block is None:
                region_block = next((b for r in owner.regions for b in r.blocks
                                     if _contains(r.range, pos)), None)
            if region_block is None:
                return out
            if owner.opdef is not None and owner.opdef.has_trait("IsolatedFromAbove"):
                out = []
            out.extend(region_block.arguments)
            for op in region_block.operations:
                if op.range is not None and op.range.end <= pos:
                    out.extend(op.results)
            ops = region_block.operations
    return []


def _op_for_line(before: str) -> OpDef | None:
    """The op definition named on the line before the cursor (``%x = addf``, ``cuda_tile.cmpi``)."""
    m = re.match(r'\s*(?:%[^=]*=\s*)?"?([A-Za-z_][A-Za-z0-9_$.]*)', before)
    if m is None:
        return None
    name = m.group(1)
    return lookup(name if "." in name else "cuda_tile." + name)


def _enum_of_kind(kind: str) -> EnumDef | None:
    return ENUMS.get(kind[5:]) if kind.startswith("enum:") else None


def _elements(elems: tuple):
    """The elements of a parsed format in text order, optional groups opened."""
    for e in elems:
        if isinstance(e, OptionalGroup):
            yield from _elements(e.then)
            yield from _elements(e.else_)
        else:
            yield e


def _keyword_before(literals: list[str]) -> str:
    """The keyword of ``kw`` or ``kw <`` ending ``literals``; ``""`` after nothing, ``(`` or ``,``."""
    if literals and literals[-1] == "<" and len(literals) > 1:
        return literals[-2]
    return literals[-1] if literals and literals[-1] not in ("(", ",") else ""


def _format_enums(opdef: OpDef) -> list[tuple[str, EnumDef, tuple[str, ...] | None]]:
    """``(keyword, enum, words)`` of each enum the op's format reads: ``keyword`` the literal written
    before it (``""`` when it stands bare or after ``(``/``,``), ``words`` the cases its custom
    directive accepts (``None``: all)."""
    out = []
    before: list[str] = []  # the literals since the last non-literal element
    for e in _elements(parse_format(opdef.format)) if opdef.format else ():
        if isinstance(e, Literal):
            if e.text.strip():
                before.append(e.text.strip())
            continue
        if isinstance(e, Var):
            attr = opdef.attribute(e.name)
            enum = _enum_of_kind(attr.kind) if attr is not None else None
            if enum is not None:
                out.append((_keyword_before(before), enum, None))
        elif isinstance(e, Directive) and e.name == "custom":
            directive = DIRECTIVES.get(e.custom)
            if directive is not None and directive.enum in ENUMS:
                out.append((directive.keyword, ENUMS[directive.enum], directive.words(opdef)))
        before = []
    return out


def _keyword_enum(opdef: OpDef | None, keyword: str) -> tuple[EnumDef, tuple[str, ...] | None] | None:
    """The enum the op's format reads after ``keyword<``, and the cases it accepts there (``None``:
    all); without an op, the enum whose attribute that keyword spells."""
    found = next(((enum, words) for kw, enum, words in _format_enums(opdef) if kw == keyword), None) \
        if opdef is not None else None
    if found is None and keyword in ENUM_BY_KEYWORD:
        return ENUM_BY_KEYWORD[keyword], None
    return found


def _enum_items(enums: list[tuple[EnumDef, tuple[str, ...] | None]], replace: Range) -> list[CompletionItem]:
    """The cases of each ``(enum, accepted cases or None for all)``, in declaration order."""
    out = []
    for enum, words in enums:
        for case in enum.cases:
            if words is not None and case[0] not in words:
                continue
            out.append(CompletionItem(case[0], "enum", f"{enum.keyword}: {case[3]}", replace))
    return out


def _op_items(replace: Range) -> list[CompletionItem]:
    out = []
    for op in all_ops():
        out.append(CompletionItem(op.full_name, "op", op.summary, replace))
        if op.dialect == "cuda_tile":
            out.append(CompletionItem(op.name, "op", op.summary, replace))
    return out


def completions(analysis: DocumentAnalysis, pos: Position, index: DocumentIndex | None = None,
                text: str | None = None) -> list[CompletionItem]:
    """Completion candidates at ``pos`` (whole-file position), best first; empty when nothing fits.

    ``text`` is the document's current text, from which the context before the
    cursor is read (default: the analysed text).  The IR comes from
    ``analysis``, which may be older: an editor asks for completions while
    the line is incomplete, and the analysis of the last complete text knows
    the values that a parse error would hide.
    """
    index = index or DocumentIndex(analysis)
    current = SourceText(text) if text is not None and text != index.source.text else index.source
    if pos.line >= current.line_count:
        return []
    offset = current.offset(pos)
    line_start = current.line_starts[pos.line]
    before = current.text[line_start:offset]
    if "//" in before:
        return []
    word = _WORD_BEFORE.search(before).group()  # always matches (possibly empty)
    replace = Range(current.position(offset - len(word)), pos)
    head = before[: len(before) - len(word)]
    stripped = head.rstrip()

    if word.startswith("%"):
        seen: set[str] = set()
        items = []
        for v in reversed(values_in_scope(analysis, pos)):
            if v.name in seen:
                continue
            seen.add(v.name)
            items.append(CompletionItem(v.name, "value", v.type.short() if hasattr(v.type, "short") else str(v.type), replace))
        return items
    if word.startswith("@"):
        chunk_no = next((i for i, c in enumerate(analysis.chunks)
                         if c.chunk.start_line <= pos.line), 0)
        for i, c in enumerate(analysis.chunks):
            if c.chunk.start_line <= pos.line:
                chunk_no = i
        names = sorted({e.name for e in index.entities
                        if e.kind is EntityKind.SYMBOL and e.definition is not None and e.chunk == chunk_no})
        return [CompletionItem(n, "symbol", "", replace) for n in names]
    if word.startswith("^"):
        labels = sorted({e.name for e in index.entities if e.kind is EntityKind.BLOCK})
        return [CompletionItem(n, "label", "", replace) for n in labels]

    # element types: tile<, ptr<, 4x8x
    if re.search(r"(?:tile|ptr|tensor_view)<$", head) or re.search(r"[<x](?:[0-9]+|\?)x$", head) \
            or re.search(r"<(?:[0-9]+|\?)x$", head):
        return [CompletionItem(t, "type", "element type", replace) for t in ELEMENT_TYPES]
    # keyword<  -> enum cases
    m = re.search(r"([A-Za-z_]\w*)<$", head)
    opdef = _op_for_line(before)
    if m is not None:
        found = _keyword_enum(opdef, m.group(1))
        if found is not None:
            return _enum_items([found], replace)
    # a type position: after ':' / '->' or ',' following the op's ':'
    if stripped.endswith((":", "->")) or (stripped.endswith((",", "(")) and " : " in head) \
            or (opdef is not None and stripped.endswith(",") and ":" in head.split("=", 1)[-1]):
        types = [CompletionItem(t, "type", "type", replace) for t in TYPE_CONSTRUCTORS]
        seen_t: set[str] = set()
        for v in values_in_scope(analysis, pos):
            text = v.type.short() if hasattr(v.type, "short") else str(v.type)
            if text not in seen_t:
                seen_t.add(text)
                types.append(CompletionItem(text, "type", "type of a value in scope", replace))
        return types
    # statement start, or after '%x = '
    if not stripped or re.fullmatch(r"\s*%[^=]*=", head.rstrip() if head.rstrip().endswith("=") else "x"):
        return _op_items(replace)
    # after the op name: bare enum cases of the op
    if opdef is not None and ":" not in head.split("=", 1)[-1]:
        return _enum_items([(enum, words) for kw, enum, words in _format_enums(opdef) if not kw], replace)
    return []
