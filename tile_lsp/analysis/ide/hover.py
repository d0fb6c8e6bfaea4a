"""Hover text (Markdown) for what is under a position of a :class:`~tile_lsp.analysis.ide.index.DocumentIndex`.

Feature: hover - ``textDocument/hover``; VS Code: the pointer resting on a name.

* an op name: full name, the one-line summary of the op table
  (the per-op documentation of :mod:`tile_lsp.analysis.ide.opdocs`), operands and
  results with their names, values and types, attributes decoded;
* a value: its type, its definition (result ``#N`` of an op, or argument
  ``#N`` of a block), its number of uses;
* a symbol: what it is (module, entry, global, function), its type;
* a block label: its arguments and number of predecessors-free facts;
* an alias: its target;
* a tile type (of a value, an alias, or written in the op under the cursor):
  element count and size in bytes (see :func:`tile_size_bytes`);
* decoded values (spec documents 000, 001, 003, 004; the decoders live in
  :mod:`tile_lsp.analysis.ir.decoders`, the rules that compute verdicts in the
  verifier modules): a ``tcgen05_kind`` attribute field by field with the
  first failing ladder rule or the selected opcode, a ``block_scaled_mma``
  op or result with (atom_K, vecSize), the packed word in hex, the PTX kind and
  the 1-CTA / 2-CTA verdict, UMMA layouts and swizzle modes by name, and a
  ``cuda_tile.entry``'s launch attributes as PTX directives with its
  parameter-space use against the target's limit.
"""

from __future__ import annotations


from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ide.opdocs import op_doc, render_markdown
from tile_lsp.analysis.ir.diagnostics import Position
from tile_lsp.analysis.ir.core import BlockArgument, Operation, OpResult, Value
from tile_lsp.analysis.ide.index import DocumentIndex, Entity, EntityKind, Occurrence, symbol_detail
from tile_lsp.dialect import types as T


def tile_size_bytes(t: T.TileType) -> int | None:
    """Storage size in bytes of tile type ``t``: element count x bytes per element.

    Bytes per element are ``ceil(bits / 8)``: ``i1`` counts one byte per
    element, as cuda-tile's own natural-size rule does (``verifyAlloca`` in
    ``SharedVerifiers.h``: ``sizeInBytes = isInteger(1) ? 1 : width / 8``),
    and as MLIR's ``DataLayout`` and LLVM's store size round scalars up to
    whole bytes; ``i4`` also counts one byte.  Pointers count 8 bytes
    (64 bits).  ``None`` when the element has no width or a dimension is
    dynamic.
    """
    n = t.num_elements
    bits = T.bit_width(t.element)
    if n is None or bits is None:
        return None
    return n * ((bits + 7) // 8)


def type_markdown(t: T.Type) -> str:
    """``tile<4x8xf32>``: 32 elements of f32, 128 bytes (a line per fact)."""
    lines = [f"`{T.type_text(t)}`"]
    if isinstance(t, T.TileType):
        n = t.num_elements
        size = tile_size_bytes(t)
        bits = T.bit_width(t.element)
        elem = t.element.short() if t.element.is_cuda_tile else str(t.element)
        if n is not None:
            facts = f"{n} element{'s' if n != 1 else ''} of `{elem}`"
            if size is not None and bits is not None:
                per = (bits + 7) // 8
                facts += f", {size} bytes ({per} byte{'s' if per != 1 else ''} per element)"
                if 1 < bits < 8:  # FP4 / FP6 elements travel packed in MMA operands (nv_tileas)
                    facts += f"; {(n * bits + 7) // 8} bytes packed at {bits} bits"
            lines.append(facts)
    return "\n\n".join(lines)


def _line(occ_range) -> str:
    return f"line {occ_range.start.line + 1}" if occ_range is not None else "unknown line"


def _value_origin(value: Value) -> str:
    if isinstance(value, OpResult) and value.owner is not None:
        op = value.owner
        name = _result_name(op, value.index)
        what = f"result #{value.index}" + (f" (`{name}`)" if name else "")
        return f"{what} of `{op.name}` ({_line(op.range)})"
    if isinstance(value, BlockArgument) and value.owner is not None:
        block = value.owner
        parent = block.parent_op
        where = f"block `{block.label}`" if block.label else "the entry block"
        if parent is not None:
            sym = parent.symbol_name
            where += f" of `{parent.name}`" + (f" `@{sym}`" if sym else "")
        return f"argument #{value.index} of {where}"
    return "not defined in this file"


def _segment_name(segments: dict[str, tuple[int, int]], defs, index: int, count: int) -> str:
    for name, (start, size) in segments.items():
        if start <= index < start + size:
            return name if size == 1 else f"{name}[{index - start}]"
    if defs and len(defs) == count:
        return defs[index].name
    return ""


def _operand_name(op: Operation, index: int) -> str:
    defs = op.opdef.operands if op.opdef else ()
    return _segment_name(op.operand_segments, defs, index, len(op.operands))


def _result_name(op: Operation, index: int) -> str:
    defs = op.opdef.results if op.opdef else ()
    return _segment_name(op.result_segments, defs, index, len(op.results))


def _attr_text(attr: A.Attribute) -> str:
    if isinstance(attr, A.EnumAttr):
        return f"{attr.case} ({attr.enum})"
    if isinstance(attr, A.TypeAttr):
        return T.type_text(attr.value)
    if isinstance(attr, A.SymbolNameAttr):
        return "@" + attr.value
    text = str(attr)
    return text if len(text) <= 200 else text[:197] + "..."


def _op_doc_section(op: Operation) -> str | None:
    """The op's documentation (:mod:`tile_lsp.analysis.ide.opdocs`); ``None`` for an unregistered op."""
    doc = op_doc(op.name)
    return render_markdown(doc) if doc is not None else None


# ---------------------------------------------------------------------------
# Decoded values
# ---------------------------------------------------------------------------


def _isa_text(isa: int) -> str:
    return f"sm_{isa // 10}" + ("a" if isa % 10 else "")


def kind_word_markdown(word: int, ctx=None) -> str:
    """A tcgen05 kind word field by field, then the ladder's verdict under ``ctx`` (a
    :class:`~tile_lsp.analysis.verify.mode_patterns.KindWordContext`; default: not arch-conditional, sm_100a):
    the first failing rule and its message, or the selected opcode.  ``ValueError`` outside 0..511."""
    from tile_lsp.analysis.ir import decoders as D
    from tile_lsp.analysis.verify import mode_patterns as MP

    ctx = ctx if ctx is not None else MP.KindWordContext()
    rows = ["| field | bits | value | meaning |", "|---|---|---|---|"]
    rows += [f"| {f} | {b} | {v} | {m} |" for f, b, v, m in D.kind_word_fields(word)]
    where = (f"{'arch-conditional' if ctx.arch_conditional else 'not arch-conditional'}, ISA {_isa_text(ctx.isa)}"
             + (", sparse" if ctx.sparse else "") + (", ashift" if ctx.ashift else "")
             + (", collector::a use/fill" if ctx.collector_a else ""))
    number, opcode = MP.kind_word_outcome(word, ctx)
    if number is not None:
        verdict = f"fails rule {number}: {MP.verify_kind_word(word, ctx)}"
    else:
        verdict = f"passes the 13 rules: opcode {opcode} (`{MP.TCGEN05_OPCODES[opcode]}`)"
    return "\n\n".join([f"**tcgen05 kind word** `{word:#x}` = `{word:#011b}`", "\n".join(rows),
                         f"Ladder ({where}): {verdict}"])


def block_scaled_markdown(op: Operation) -> str | None:
    """The block-scaled MMA verdict of a ``nv_tileas.block_scaled_mma`` op: (atom_K, vecSize), the
    packed ``(atom_K << 32) | vecSize`` in hex, the PTX kind, the 1-CTA / 2-CTA verdict; ``None`` for
    other ops or when A, B or C is missing."""
    from tile_lsp.analysis.ir import decoders as D
    from tile_lsp.analysis.verify.rules import nv_tileas as R

    if op.name != "nv_tileas.block_scaled_mma":
        return None
    results = {two: R.block_scaled_mma_result(op, two) for two in (False, True)}
    if results[False] is None:
        return None
    selected = R.bool_attr(op, "two_cta")
    packed, message = results[selected]
    head = "**Block-scaled MMA**"
    if packed == 0:
        return f"{head}: packed `0x0` (verification rejected): {message}"
    k, vec = D.unpack_block_scale(packed)
    cta = []
    for two, (p, m) in results.items():
        cta.append(f"{'2' if two else '1'}-CTA {'accepted' if p else 'rejected (' + str(m) + ')'}")
    kind = D.BLOCK_SCALE_KINDS.get((k, vec), "not a catalog row")
    return (f"{head}: atom_K = {k}, vecSize = {vec}, packed `{packed:#x}`, PTX `{kind}`\n\n"
            f"{'; '.join(cta)} (this op: {'2' if selected else '1'}-CTA)")


def _tile_bits(op: Operation, operand: str) -> int | None:
    from tile_lsp.analysis.verify.rules.nv_tileas import element_of

    values = op.operand_group(operand)
    element = element_of(values[0].type) if values else None
    return T.bit_width(element) if element is not None else None


def attribute_markdown(op: Operation, key: str, attr: A.Attribute) -> str | None:
    """Hover of an attribute value whose packed or named meaning tile-lsp decodes, else ``None``:
    ``tcgen05_kind``, ``a_layout`` / ``b_layout`` (UMMA layouts), ``swizzle_mode`` (TMA)."""
    from tile_lsp.analysis.ir import decoders as D
    from tile_lsp.analysis.verify import mode_patterns as MP
    from tile_lsp.analysis.verify.rules.nv_tileas_modes import kind_word_context

    try:
        if key == "tcgen05_kind":
            word = D.kind_word_of(attr)
            return kind_word_markdown(word, kind_word_context(op)) if word is not None else None
        if key in ("a_layout", "b_layout"):
            layout = D.umma_layout_of(attr)
            if layout is None:
                return None
            operand = key[0]
            bits = _tile_bits(op, operand)
            direction = "UMMA_MN (MN-major)" if layout.direction == MP.UMMA_MN else "UMMA_K (K-major)"
            lines = [f"**UMMA layout** of `{operand}`: {direction}",
                     f"swizzle `({', '.join(map(str, layout.swizzle))})`: {D.describe_swizzle(layout.swizzle)}"]
            if bits is not None:
                found = MP.verify_umma_canonical_layout(layout.direction, bits, layout.swizzle, layout.mn_mode,
                                                        layout.k_mode)
                lines.append(f"{bits}-bit elements: " + ("canonical" if found is None else
                                                         f"not canonical: {found or 'unsupported width'}"))
            return "\n\n".join(lines)
    except D.CarrierError as e:
        return f"`{key}` cannot be read: {e}"
    if key == "swizzle_mode":
        from tile_lsp.dialect import nv_tileas_types as NT

        word = NT.enum_word(attr)
        triple = D.TMA_SWIZZLE_MODES.get(word or "")
        if triple is None:
            return f"TMA swizzle mode `{word}`: not one of {', '.join(D.TMA_SWIZZLE_MODES)}"
        return f"TMA swizzle mode `{word}`: {D.describe_swizzle(triple)}"
    return None


def launch_markdown(op: Operation) -> str | None:
    """A ``cuda_tile.entry``'s launch attributes as PTX directives and its parameter-space use
    against the target's limit (spec 004, spec 003); ``None`` for other ops."""
    from tile_lsp.analysis.verify.frontend_contract import launch_directives
    from tile_lsp.analysis.verify.layers import (
        PARAM_LIMIT_HOPPER,
        PARAM_LIMIT_PRE_HOPPER,
        parameter_space_use,
    )

    use = parameter_space_use(op)
    if use is None:
        return None
    rows = [f"- `{d}` ← {origin}" for d, origin in launch_directives(op)]
    parts = ["**Launch** (PTX directives):\n" + "\n".join(rows)]
    total = "unknown (an argument has no known size)" if use.total is None else f"{use.total} bytes"
    if use.limit is None:
        parts.append(f"**Parameter space**: {total}; target unknown (limit {PARAM_LIMIT_PRE_HOPPER} bytes before "
                     f"sm_90, {PARAM_LIMIT_HOPPER} from sm_90)")
    else:
        verdict = "" if use.total is None or use.total <= use.limit else " — exceeds the limit"
        parts.append(f"**Parameter space**: {total} used of the {use.limit}-byte limit of sm_{use.sm}{verdict}")
    return "\n\n".join(parts)


def decoded_facts(op: Operation) -> list[str]:
    """The decoded sections of an op's hover: block-scaled MMA verdict, kind word, launch attributes."""
    out = []
    for fn in (block_scaled_markdown, launch_markdown):
        text = fn(op)
        if text:
            out.append(text)
    attr = op.attr("tcgen05_kind")
    if attr is not None:
        text = attribute_markdown(op, "tcgen05_kind", attr)
        if text:
            out.append(text)
    return out


def _attribute_under(index: DocumentIndex, pos: Position) -> tuple[Operation, str, A.Attribute] | None:
    op = index.op_at(pos)
    if op is None:
        return None
    for key, attr in {**op.properties, **op.attributes}.items():
        r = getattr(attr, "range", None)
        if r is not None and r.start <= pos <= r.end:
            return op, key, attr
    return None


def op_markdown(op: Operation) -> str:
    """Hover of an op: name, summary (or opdocs), operands, results, attributes."""
    docs = _op_doc_section(op)
    parts = [] if docs else [f"**`{op.name}`**"]
    if docs:
        parts.append(docs + "\n\n---\n\n**This operation**")
    elif op.opdef is not None and op.opdef.summary:
        parts.append(op.opdef.summary)
    elif op.opdef is None:
        parts.append("unregistered operation")
    for title, values, group in (("Operands", op.operands, _operand_name), ("Results", op.results, _result_name)):
        if values:
            rows = []
            for i, v in enumerate(values):
                name = group(op, i)
                rows.append(f"- {'`' + name + '` ' if name else ''}`{v.name}` : `{T.type_text(v.type)}`")
            parts.append(f"{title}:\n" + "\n".join(rows))
    attrs = {**op.properties, **op.attributes}
    if attrs:
        rows = []
        for key, attr in attrs.items():
            adef = op.opdef.attribute(key) if op.opdef else None
            doc = f" — {adef.doc}" if adef is not None and adef.doc else ""
            rows.append(f"- `{key}` = `{_attr_text(attr)}`{doc}")
        parts.append("Attributes:\n" + "\n".join(rows))
    parts.extend(decoded_facts(op))
    return "\n\n".join(parts)


def value_markdown(entity: Entity, occ: Occurrence) -> str:
    """Hover of a value: name and type, origin, number of uses."""
    value = occ.value if occ.value is not None else (entity.values[0] if entity.values else None)
    if value is None:
        return f"`{entity.name}`"
    if entity.definition is None:
        return f"`{value.name}` : `{T.type_text(value.type)}`\n\nuse of a value not defined in this file"
    shown = [value] if occ.value is not None and not occ.is_definition else entity.values
    parts = []
    for v in shown:
        parts.append(f"`{v.name}` : {type_markdown(v.type)}")
    parts.append(_value_origin(shown[0]) if len(shown) == 1 else
                 f"{len(shown)} results of `{shown[0].owner.name}`" if isinstance(shown[0], OpResult) and shown[0].owner
                 else _value_origin(shown[0]))
    uses = sum(len(v.uses) for v in shown)
    parts.append(f"{uses} use{'s' if uses != 1 else ''}")
    owner = shown[0].owner if isinstance(shown[0], OpResult) else None
    if owner is not None:
        text = block_scaled_markdown(owner)
        if text:
            parts.append(text)
    return "\n\n".join(parts)


def symbol_markdown(entity: Entity) -> str:
    """Hover of a symbol: ``entry @e`` and its type, or that it is undefined."""
    op = entity.op
    if op is None:
        return f"`{entity.name}`: symbol not defined in this file"
    detail = symbol_detail(op)
    what, _, rest = detail.partition(" ")
    text = f"{what} `{entity.name}`" + (f" : `{rest}`" if rest else "")
    value = op.attr("value")
    vtype = getattr(value, "type", None)
    if isinstance(vtype, T.TileType):
        text += "\n\n" + type_markdown(vtype)
    uses = sum(1 for o in entity.occurrences if not o.is_definition)
    text += f"\n\ndefined at {_line(op.range)}, {uses} use{'s' if uses != 1 else ''} in this file"
    launch = launch_markdown(op)
    return text + ("\n\n" + launch if launch else "")


def block_markdown(entity: Entity) -> str:
    """Hover of a block label: its arguments and its parent op."""
    block = entity.block
    args = ", ".join(f"`{a.name}` : `{T.type_text(a.type)}`" for a in block.arguments) if block else ""
    parent = block.parent_op if block else None
    text = f"block `{entity.name}`" + (f" in `{parent.name}`" if parent else "")
    return text + (f"\n\nArguments: {args}" if args else "")


def alias_markdown(entity: Entity) -> str:
    """Hover of an alias: its target (type facts for a tile type)."""
    target = entity.target
    if isinstance(target, T.Type):
        return f"type alias `{entity.name}` = {type_markdown(target)}"
    return f"attribute alias `{entity.name}` = `{target}`"


def _type_under(index: DocumentIndex, pos: Position) -> T.Type | None:
    """The tile type written under ``pos`` inside an op: the innermost of the op's tile-type spans
    (:class:`~tile_lsp.analysis.ir.core.Span`) that holds it."""
    op = index.op_at(pos)
    if op is None or op.range is None:
        return None
    found = None
    for span in op.spans:
        if span.kind == "type" and span.contains(pos, op.range.start.line):
            if found is None or (span.line, span.character) >= (found.line, found.character):
                found = span
    return found.type if found is not None else None


def hover_markdown(index: DocumentIndex, pos: Position) -> str | None:
    """Markdown for what is under ``pos``, or ``None`` when nothing is."""
    occ = index.occurrence_at(pos)
    if occ is not None:
        entity = occ.entity
        if entity.kind is EntityKind.OP and entity.op is not None:
            return op_markdown(entity.op)
        if entity.kind is EntityKind.VALUE:
            return value_markdown(entity, occ)
        if entity.kind is EntityKind.SYMBOL:
            return symbol_markdown(entity)
        if entity.kind is EntityKind.BLOCK:
            return block_markdown(entity)
        return alias_markdown(entity)
    found = _attribute_under(index, pos)
    if found is not None:
        text = attribute_markdown(*found)
        if text is not None:
            return text
    t = _type_under(index, pos)
    return type_markdown(t) if t is not None else None
