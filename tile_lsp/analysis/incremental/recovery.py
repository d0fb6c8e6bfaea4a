"""Where MLIR's parser failed, and which diagnostics only tile-lsp's recovery caused.

Used by the whole-chunk analysis (:mod:`tile_lsp.analysis.incremental.pipeline`) and the
unit-by-unit one (:mod:`tile_lsp.analysis.incremental.units`) alike, so both order and
filter the parse phase's diagnostics the same way.
"""

from __future__ import annotations

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Position, SourceText


def without_recovery_cascades(build: list[Diagnostic], parsed, text: str, source: SourceText,
                              base: int) -> list[Diagnostic]:
    """``build`` (the IR builder's diagnostics) less those that only the parser's recovery caused.

    ``parsed`` is the :class:`~tile_lsp.grammar.parse.ParseResult` of
    ``text`` (at document offset ``base``); see :func:`without_uses_of`.
    """
    return without_uses_of(build, parsed.blanked_values(text), source, base)


def without_uses_of(build: list[Diagnostic], names: frozenset[str] | set[str], source: SourceText,
                    base: int) -> list[Diagnostic]:
    """``build`` less its "use of undeclared SSA value name" errors for the values ``names``.

    ``names`` are the values written in statements that recovery blanked
    (:meth:`~tile_lsp.grammar.parse.ParseResult.blanked_values`): their
    uses are unresolved only because of the recovery, since the value is
    defined in the text, not in what was left of it (issue 15: a follow-on
    diagnostic is welcome only when it is a real, independent error).
    ``base`` is the document offset of the text the names were read from.
    """
    if not names:
        return build
    text = source.text
    out = []
    for d in build:
        if d.code == "structure.undefined-value" and d.range is not None:
            name = text[source.offset(d.range.start):source.offset(d.range.end)].split("#", 1)[0]
            if name in names:
                continue
        out.append(d)
    return out


def failure_scope(module):
    """For :func:`~tile_lsp.analysis.ir.diagnostics.mlir_order`: ``position -> ((start, end), holders)``.

    ``(start, end)`` is the span of the op MLIR's parser was reading when it
    failed at ``position``, found in the IR ``module`` of the chunk: the
    innermost op whose own text (outside its regions) holds the position, or,
    where recovery removed the failed statement, the gap between the ops
    around it in the innermost block holding it; ``holders`` are the start
    positions (and those of the names) of the ops whose regions hold it.
    """
    def scope(pos):
        holders = set()
        ops = module.body.operations if module is not None else []
        lo, hi = Position(-1, -1), Position(1 << 62, 0)
        while True:
            inner = None
            for op in ops:
                r = op.range
                if r is None:
                    continue
                if r.start <= pos <= r.end:
                    inner = op
                    break
                if r.end < pos:
                    lo = max(lo, _after(r.end))
                elif r.start > pos:
                    hi = min(hi, r.start)
            if inner is None:
                return (lo, hi), holders
            block = next((b for reg in inner.regions for b in reg.blocks
                          if b.range is not None and b.range.start <= pos <= b.range.end), None)
            region = next((reg for reg in inner.regions
                           if reg.range is not None and reg.range.start <= pos <= reg.range.end), None)
            if block is None and region is None:
                return (inner.range.start, _after(inner.range.end)), holders
            holders.add(inner.range.start)
            if inner.name_range is not None:  # the verifier reports an op at its name
                holders.add(inner.name_range.start)
            lo = region.range.start if region is not None else block.range.start
            hi = _after(region.range.end if region is not None else block.range.end)
            ops = block.operations if block is not None else [o for b in region.blocks for o in b.operations]

    return scope


def _after(p: Position) -> Position:
    return Position(p.line, p.character + 1)
