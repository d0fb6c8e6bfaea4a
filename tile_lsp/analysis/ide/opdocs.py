"""Op documentation as data, for hover text.

:func:`op_doc` gathers, for one registered op, everything a hover shows: the
one-line summary, the assembly format (declarative, or tile-lsp's own syntax
for ops NVIDIA parses in C++), the Tile IR version that introduced it, and for
each operand, result and attribute its name, kind, constraint summary,
default, one-line doc and since-version.  :func:`render_markdown` turns an
:class:`OpDoc` into Markdown.

Sources: the op table (``tile_lsp/dialect/cuda_tile_ops.py``, whose docs are
our own words), the enums (``tile_lsp/dialect/enums.py``) for the cases of enum
attributes, and the registry (``tile_lsp/dialect/registry.py``).  Constraint
summaries are the texts ODS prints in its messages
(``tile of i1 or i8 or i16 or i32 or i64 values``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.registry import lookup
from tile_lsp.dialect.schema import AttrDef, OperandDef

#: How an attribute kind of ``AttrDef.kind`` is summarized (enums: see :func:`attr_constraint`).
ATTR_KIND_SUMMARIES: dict[str, str] = {
    "unit": "unit attribute (present or absent)",
    "bool": "boolean",
    "i32": "32-bit integer",
    "i64": "64-bit integer",
    "dense_i32_array": "array of i32",
    "dense_bool_array": "array of booleans",
    "string": "string",
    "symbol_name": "symbol name (@name)",
    "symbol_ref": "symbol reference (@name)",
    "type": "type",
    "dense": "dense elements literal",
    "dict": "dictionary",
    "attr": "any attribute",
    "opt_hints": "optimization hints (#cuda_tile.optimization_hints)",
    "assume_predicate": "assume predicate (div_by, same_elements or bounded)",
    "array": "array attribute",
}


@dataclass(frozen=True)
class ArgDoc:
    """One operand, result or attribute of an op.

    ``kind``: ``single``/``optional``/``variadic`` for operands and results,
    the ``AttrDef.kind`` (``unit``, ``i64``, ``enum:RoundingMode``...) for
    attributes.  ``constraint``: the ODS constraint summary (operands and
    results) or a summary of the attribute kind; enum attributes list their
    cases.  ``optional``: the attribute may be left out (always ``False`` for
    operands and results: see ``kind``).  ``default``: the value used when
    absent, as text.  ``since``: first Tile IR version with it.
    """

    name: str
    kind: str
    constraint: str
    doc: str
    since: str
    default: str | None = None
    optional: bool = False


@dataclass(frozen=True)
class OpDoc:
    """Documentation of one op; ``name`` is the full name (``cuda_tile.addi``)."""

    name: str
    summary: str
    format: str | None
    since: str
    operands: tuple[ArgDoc, ...]
    results: tuple[ArgDoc, ...]
    attributes: tuple[ArgDoc, ...]


def attr_constraint(kind: str) -> str:
    """Summary of an attribute kind; an enum lists its cases (``rounding mode: nearest_even, zero, ...``).

    Cases newer than the enum itself carry their version (``high (250.1+)``).
    """
    if kind.startswith("enum:"):
        enum = ENUMS.get(kind[5:])
        if enum is None:
            return kind
        cases = ", ".join(c[0] if c[2] == enum.since else f"{c[0]} ({c[2]}+)" for c in enum.cases)
        label = enum.summary or enum.keyword
        return f"{label}: one of {cases}"
    return ATTR_KIND_SUMMARIES.get(kind, kind)


def _operand_doc(o: OperandDef, op_since: str) -> ArgDoc:
    return ArgDoc(o.name, o.kind, o.constraint.summary, o.doc, o.since or op_since)


def _attr_doc(a: AttrDef, op_since: str) -> ArgDoc:
    optional = a.optional or a.kind == "unit"
    return ArgDoc(a.name, a.kind, attr_constraint(a.kind), a.doc, a.since or op_since, a.default, optional)


@functools.lru_cache(maxsize=None)
def op_doc(name: str) -> OpDoc | None:
    """The documentation of op ``name`` (``cuda_tile.addi`` or ``addi``); ``None`` when unknown."""
    op = lookup(name)
    if op is None:
        return None
    return OpDoc(
        name=op.full_name,
        summary=op.summary,
        format=op.format,
        since=op.since,
        operands=tuple(_operand_doc(o, op.since) for o in op.operands),
        results=tuple(_operand_doc(r, op.since) for r in op.results),
        attributes=tuple(_attr_doc(a, op.since) for a in op.attributes),
    )


def _bullet(arg: ArgDoc, op_since: str, attribute: bool) -> str:
    notes = []
    if attribute:
        if arg.optional:
            notes.append("optional")
    elif arg.kind != "single":
        notes.append(arg.kind)
    if arg.default is not None:
        notes.append(f"default `{arg.default}`")
    if arg.since != op_since:
        notes.append(f"since {arg.since}")
    head = f"- `{arg.name}`" + (f" ({', '.join(notes)})" if notes else "")
    return f"{head}: {arg.constraint}. {arg.doc}".rstrip()


def render_markdown(doc: OpDoc) -> str:
    """Hover text of an op: name and version, summary, format in a code block, then bullet lists.

    Layout::

        **cuda_tile.addi** (since 13.1)

        <summary>

        ```mlir
        <format>
        ```

        **Operands**
        - `lhs`: <constraint>. <doc>
        ...

    followed by ``**Results**`` and ``**Attributes**``; empty sections are
    left out, as is the code block when the op has no format.  Bullets note
    ``optional``/``variadic``, the default and a since-version that differs
    from the op's.
    """
    parts = [f"**{doc.name}** (since {doc.since})", doc.summary]
    if doc.format:
        parts.append(f"```mlir\n{doc.format}\n```")
    for title, items, is_attr in (("Operands", doc.operands, False), ("Results", doc.results, False),
                                  ("Attributes", doc.attributes, True)):
        if items:
            parts.append(f"**{title}**\n" + "\n".join(_bullet(a, doc.since, is_attr) for a in items))
    return "\n\n".join(parts) + "\n"
