"""Typed dense literals of ``constant`` and ``global``: ``<i32: [1, 2]> : tile<2xi32>``.

NVIDIA parses this syntax with C++ code (``parseDenseTypedElementsAttr`` in
``lib/Dialect/CudaTile/IR/CudaTile.cpp``, directive
``custom<DenseTypedElementsAttr>`` / ``...NoResult``).  This module replays
that parser over the parse subtree the builder bound (``ctx.nodes['value']``:
``dense_typed`` with children element type, literal, result type) and
reports the first error, in the C++ order and at the token MLIR points at:

1. the element type: one of :data:`DENSE_ELEMENT_TYPES` (``expect element type
   to be one of ... but got 'T'``, after an unknown keyword ``unknown type: kw``);
2. the literal, left to right (``parseNestedArrayWithShape``): integers for
   integer types (``expected integer value``; bounds of
   :data:`INTEGER_BOUNDS`: ``integer constant out of range for type``), floats
   otherwise through MLIR's ``Parser::parseFloatFromLiteral`` (``unexpected
   decimal integer literal for a floating point value`` with its note,
   ``hexadecimal float constant out of range for type`` ...: MLIR's own parser
   reports these, without the ``custom op`` prefix); nested lists must agree
   (``tensor literal is invalid; ranks are not consistent between elements``);
3. the type after ``:``: a tile (``result #0 must be tile of ...``) of the
   same element type (``mismatch between the element type: ...``) whose shape
   is the literal's, or any shape for a scalar (splat) literal (``inferred
   shape of elements literal ([..]) does not match type ([..])``).

The helpers :func:`source_text`, :func:`offset_range`, :func:`next_token`
and :func:`emit` give token-level positions and notes; ``entry.py`` uses them
too.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Tree

from tile_lsp.dialect.custom_formats import DENSE_ELEMENT_TYPES, MSG_DENSE_ELEMENT_TYPE, NULL_TYPE
from tile_lsp.analysis.ir.diagnostics import Note, Range
from tile_lsp.analysis.syntax.parse_rules import ParseContext, ParseRuleFailure, parse_rule
from tile_lsp.analysis.syntax.type_rules import verify_type
from tile_lsp.dialect import types as T

# ---------------------------------------------------------------------------
# Rule data (CudaTile.cpp isValidDenseElementType / validateIntegerBounds)
# ---------------------------------------------------------------------------

_TYPE_LIST = " or ".join(DENSE_ELEMENT_TYPES)
MSG_ELEMENT_TYPE = MSG_DENSE_ELEMENT_TYPE
MSG_RESULT_NOT_TILE = f"result #0 must be tile of {_TYPE_LIST} values, but got '{{}}'"
MSG_ELEMENT_MISMATCH = "mismatch between the element type: '{}' and the tile element type '{}'"
MSG_SHAPE = "inferred shape of elements literal ({}) does not match type ({})"
MSG_RANKS = "tensor literal is invalid; ranks are not consistent between elements"
MSG_INT_EXPECTED = "expected integer value"
MSG_INT_TOO_LARGE = "integer value too large"
MSG_INT_RANGE = "integer constant out of range for type"

#: Accepted integer values per width: the union of the signed and unsigned
#: ranges (validateIntegerBounds); i64 takes any value ``parseInteger<int64_t>`` reads.
INTEGER_BOUNDS: dict[int, tuple[int, int]] = {
    1: (-1, 1),
    8: (-128, 255),
    16: (-32768, 65535),
    32: (-2 ** 31, 2 ** 32 - 1),
    64: (-2 ** 63, 2 ** 63 - 1),
}

# MLIR Parser::parseFloatFromLiteral / parseFloatFromIntegerLiteral (no "custom op" prefix)
MSG_FLOAT_DECIMAL_INT = "unexpected decimal integer literal for a floating point value"
NOTE_FLOAT_DECIMAL_INT = "add a trailing dot to make the literal a float"
MSG_FLOAT_HEX_MINUS = "hexadecimal float literal should not have a leading minus"
MSG_FLOAT_HEX_RANGE = "hexadecimal float constant out of range for type"
MSG_FLOAT_EXPECTED = "expected floating point literal"

#: Storage size in bits of each float semantics (``APFloat::getSizeInBits``).
FLOAT_SEMANTICS_BITS = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 19, "f64": 64, "f8E4M3FN": 8,
                        "f8E5M2": 8, "f8E8M0FNU": 8, "f4E2M1FN": 4}


# ---------------------------------------------------------------------------
# Token-level positions (shared with entry.py)
# ---------------------------------------------------------------------------


def source_text(ctx: ParseContext) -> str:
    """The text the parse tree's offsets index (the chunk being built)."""
    return ctx.text


def offset_range(ctx: ParseContext, start: int, end: int | None = None) -> Range | None:
    """Whole-file range of the chunk offsets ``[start, end)`` (a point when ``end`` is omitted)."""
    return ctx.offset_range(start, end)


def next_token(ctx: ParseContext, offset: int) -> int:
    """Offset of the first token at or after ``offset`` (MLIR's ``getCurrentLocation``)."""
    return ctx.next_token_offset(offset)


def _offset(node: Any, which: str) -> int | None:
    """Offset ``which`` (``start_pos``/``end_pos``) of a token or a non-empty tree, else ``None``."""
    if isinstance(node, Token):
        return getattr(node, which)
    if isinstance(node, Tree) and not getattr(node.meta, "empty", True):
        return getattr(node.meta, which)
    return None


def start_of(node: Any) -> int | None:
    return _offset(node, "start_pos")


def end_of(node: Any) -> int | None:
    return _offset(node, "end_pos")


def emit(ctx: ParseContext, message: str, rng: Range | None, *, prefix: bool = True,
         notes: list[Note] | None = None, stop: bool = True) -> None:
    """Report ``message`` (``custom op '<op>' `` first when ``prefix``), optionally with notes.

    ``stop``: raise :class:`ParseRuleFailure` afterwards, as a failed C++ parser does.
    """
    text = f"custom op '{ctx.op_name}' {message}" if prefix else message
    ctx.emit(text, rng, notes, stop)
    if stop:
        raise ParseRuleFailure(message)


# ---------------------------------------------------------------------------
# The literal
# ---------------------------------------------------------------------------


class _Literal:
    """Replays ``parseNestedArrayWithShape`` over a ``dense_literal`` subtree."""

    def __init__(self, ctx: ParseContext, element: T.Type):
        self.ctx = ctx
        self.element = element
        self.is_integer = isinstance(element, T.IntegerType)
        self.count = 0

    def point(self, offset: int) -> Range | None:
        return offset_range(self.ctx, offset)

    def after(self, node: Any) -> Range | None:
        end = end_of(node)
        return self.point(next_token(self.ctx, end)) if end is not None else None

    @staticmethod
    def unwrap(node: Any) -> Any:
        while isinstance(node, Tree) and node.data == "dense_literal":
            node = node.children[0] if node.children else None
        return node

    @staticmethod
    def items(lst: Tree) -> list:
        return [c for c in lst.children if c is not None]

    def is_list(self, node: Any) -> bool:
        return isinstance(node, Tree) and node.data == "dense_list"

    def closing_bracket(self, lst: Tree) -> int:
        end = end_of(lst)
        return end - 1 if end is not None else 0

    def nested(self, node: Any) -> list[int]:
        """Shape of ``node`` (``[]`` for a scalar); reports and stops at the first error."""
        node = self.unwrap(node)
        if not self.is_list(node):
            self.numeric(node)
            return []
        element_shape: list[int] | None = None
        items = self.items(node)
        if not items:  # `[]`: the list parser wants one element, ']' is not a number
            self.numeric(None, self.closing_bracket(node))
        for item in items:
            item = self.unwrap(item)
            if not self.is_list(item):
                self.numeric(item)
                continue
            first: list[int] | None = None
            sub = self.items(item)
            if not sub:
                self.numeric(None, self.closing_bracket(item))
            for s in sub:
                shape = self.nested(s)
                if first is None:
                    first = shape
                elif shape != first:
                    emit(self.ctx, MSG_RANKS, self.after(s))
            this = [len(sub), *(first or [])]
            if element_shape is None:
                element_shape = this
            elif this != element_shape:
                emit(self.ctx, MSG_RANKS, self.after(item))
        return [len(items), *(element_shape or [])]

    # -- scalars ------------------------------------------------------------------

    def numeric(self, tok: Any, offset: int | None = None) -> None:
        """``parseNumericValue``: one integer or float of the element type."""
        self.count += 1
        if offset is None:
            offset = start_of(tok) or 0
        if self.is_integer:
            self.integer(tok, offset)
        else:
            self.float(tok, offset)

    def integer(self, tok: Any, offset: int) -> None:
        loc = self.point(offset)
        kind = tok.type if isinstance(tok, Token) else None
        text = str(tok) if isinstance(tok, Token) else ""
        width = self.element.width
        if kind == "BOOL" or (kind == "BARE_ID" and text in ("true", "false")):
            if width != 1:
                emit(self.ctx, MSG_INT_EXPECTED, loc)
            return
        value = _int_value(text) if kind == "INT" else None
        if value is None:
            # parseInteger reports, then parseNumericValue reports again
            emit(self.ctx, MSG_INT_EXPECTED, loc, stop=False)
            emit(self.ctx, MSG_INT_EXPECTED, loc)
        if not (-2 ** 63 <= value <= 2 ** 63 - 1):
            emit(self.ctx, MSG_INT_TOO_LARGE, loc, stop=False)
            emit(self.ctx, MSG_INT_EXPECTED, loc)
        low, high = INTEGER_BOUNDS.get(width, INTEGER_BOUNDS[64])
        if not low <= value <= high:
            emit(self.ctx, MSG_INT_RANGE, loc)

    def float(self, tok: Any, offset: int) -> None:
        kind = tok.type if isinstance(tok, Token) else None
        text = str(tok) if isinstance(tok, Token) else ""
        name = str(self.element)
        negative = text.startswith("-")
        # MLIR lexes the minus sign as its own token: the literal starts after it
        loc = self.point(offset + 1 if negative else offset)
        body = text[1:] if negative else text
        # `inf` and `nan` are no literal here: cuda-tile-opt reports "expected floating point literal"
        if kind == "FLOAT" and not body.startswith("+"):
            return  # decimal floats convert with rounding; overflow gives inf (no error)
        if kind == "INT":
            if not (len(body) > 1 and body[1] in "xX"):
                emit(self.ctx, MSG_FLOAT_DECIMAL_INT, loc, prefix=False,
                     notes=[Note(NOTE_FLOAT_DECIMAL_INT, loc)])
            if negative:
                emit(self.ctx, MSG_FLOAT_HEX_MINUS, loc, prefix=False)
            bits = int(body, 16).bit_length()
            if bits > FLOAT_SEMANTICS_BITS.get(name, 64):
                emit(self.ctx, MSG_FLOAT_HEX_RANGE, loc, prefix=False)
            return
        emit(self.ctx, MSG_FLOAT_EXPECTED, self.point(offset), prefix=False)


def _int_value(text: str) -> int | None:
    negative = text.startswith("-")
    body = text[1:] if negative else text
    try:
        value = int(body, 16) if body[:2] in ("0x", "0X") else int(body, 10)
    except ValueError:
        return None
    return -value if negative else value


def _shape_text(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


# ---------------------------------------------------------------------------
# The rule
# ---------------------------------------------------------------------------


def check_dense_typed(ctx: ParseContext, node: Any, attr_name: str = "value") -> None:
    """Replay ``parseDenseTypedElementsAttr`` over a ``dense_typed`` subtree; report the first error.

    ``attr_name``: the property the builder made of the literal (its element
    type and type are read from it).  Source: NVIDIA CudaTile.cpp
    parseDenseTypedElementsAttr, isValidDenseElementType, validateIntegerBounds;
    MLIR Parser::parseFloatFromLiteral.
    """
    if not isinstance(node, Tree) or len(node.children) < 3:
        return
    elem_node, lit_node, type_node = node.children[:3]
    attr = ctx.props.get(attr_name)
    # 1. the element type
    elem_end = end_of(elem_node)
    after_elem = offset_range(ctx, next_token(ctx, elem_end)) if elem_end is not None else None
    if isinstance(elem_node, Token) and elem_node.type == "BARE_ID":
        # parseCudaTileType: a keyword that names no type
        emit(ctx, f"unknown type: {elem_node}", after_elem, stop=False)
        emit(ctx, MSG_ELEMENT_TYPE.format(NULL_TYPE), after_elem)
    element = getattr(attr, "element_type", None)
    if element is None or element == T.UNKNOWN:
        return
    if str(element) not in DENSE_ELEMENT_TYPES:
        emit(ctx, MSG_ELEMENT_TYPE.format(element), after_elem)
    # 2. the literal
    literal = _Literal(ctx, element)
    if lit_node is None:  # `<i32: >`: the value parser meets '>'
        colon = next_token(ctx, elem_end) if elem_end is not None else 0
        literal.numeric(None, next_token(ctx, colon + 1))
        return
    inferred = literal.nested(lit_node)
    # 3. the type
    result = getattr(attr, "type", None)
    type_loc = offset_range(ctx, start_of(type_node)) if start_of(type_node) is not None else None
    if result is None or result == T.UNKNOWN:
        return
    if verify_type(result) is not None:
        # the type's own parser fails first (a dimension that is not a power of two...): the builder
        # reports it, after the literal's rules, and NVIDIA's parser stops there
        return
    if not isinstance(result, T.TileType):
        emit(ctx, MSG_RESULT_NOT_TILE.format(result), type_loc)
    if result.element != element:
        emit(ctx, MSG_ELEMENT_MISMATCH.format(element, result.element), type_loc)
    expected = result.shape
    if any(d is None for d in expected):
        return
    if inferred and list(inferred) != list(expected):
        emit(ctx, MSG_SHAPE.format(_shape_text(inferred), _shape_text(expected)), type_loc)


@parse_rule("constant", "global")
def dense_typed_literal(ctx: ParseContext) -> None:
    """``constant``/``global`` literal syntax (NVIDIA CudaTile.cpp parseDenseTypedElementsAttr)."""
    check_dense_typed(ctx, ctx.nodes.get("value"))
