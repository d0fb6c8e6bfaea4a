"""The builder's reading of types, attributes and locations from the parse tree.

:class:`TypeAttributeReader` is a part of :class:`~tile_lsp.analysis.syntax.builder.Builder`
(its base class): it turns type, attribute, dense literal and location
subtrees into the IR's typed values, with MLIR's errors for what its type
and attribute parsers reject (``cuda_tile`` mnemonics, attribute syntax).  It
relies on the builder's ``rng``, ``slice``, ``error`` and ``_after_token``.
The token helpers at the end are shared with the builder, and the
location aliases of a chunk are resolved once the whole of it is read
(:func:`resolve_location_aliases`).
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Tree

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir import debuginfo
from tile_lsp.analysis.ir.core import Span
from tile_lsp.analysis.ir.decoders import decode_nv_tileas_attribute
from tile_lsp.analysis.ir.diagnostics import Diagnostic, Range, Severity
from tile_lsp.dialect import types as T
from tile_lsp.analysis.syntax.parse_rules.dense import start_of
from tile_lsp.analysis.syntax.parse_rules.entry import CUDA_TILE_ATTRIBUTE_DECODERS
from tile_lsp.analysis.syntax.type_rules import locate_type_error
from tile_lsp.dialect.attr_syntax import attribute_issues
from tile_lsp.grammar.lexical import next_token_offset
from tile_lsp.grammar.parser_state import wrong_token_offset


class TypeAttributeReader:
    """Types, attributes, dense values and locations of a parse tree (see the module docstring)."""

    def cuda_tile_attribute(self, mnemonic: str, body: str | None, rng: Range | None) -> A.DialectAttr:
        """``#cuda_tile.<mnemonic><body>``, decoded once where a decoder knows the mnemonic
        (:data:`~tile_lsp.analysis.syntax.parse_rules.entry.CUDA_TILE_ATTRIBUTE_DECODERS`: the
        assume predicates, the optimization hints, the enum attributes) into ``value``."""
        decode = CUDA_TILE_ATTRIBUTE_DECODERS.get(mnemonic)
        value = decode(body) if decode is not None and body is not None else None
        return A.DialectAttr("cuda_tile", mnemonic, body, value, range=rng)

    def _span(self, kind: str, node: Any, name: str = "", type: T.Type | None = None) -> None:
        """Record a :class:`~tile_lsp.analysis.ir.core.Span` of ``node`` (a token or subtree)
        where the op being built keeps its spans (nothing for a node without a position)."""
        rng = self.rng(node)
        if rng is not None:
            self.spans.append(Span.of(kind, rng, name, type=type, base_line=self.span_base))

    def type_ranges(self, node: Any) -> list[Range | None]:
        """Ranges of the types of a type or type-list subtree, in order."""
        if isinstance(node, Tree) and node.data == "type_list":
            return [self.rng(c) for c in node.children]
        if isinstance(node, Tree) and node.data == "paren_type_list":
            return self.type_ranges(node.children[0]) if node.children[0] is not None else []
        return [self.rng(node)]

    def generic_type(self, node: Any) -> T.Type:
        """:meth:`type` for a type that MLIR's own type parser reads, not a dialect's custom one.

        MLIR ``Parser::parseNonFunctionType`` (``mlir/lib/AsmParser/TypeParser.cpp``) knows the
        builtin types and ``!``-prefixed dialect types only: the short forms of cuda_tile types
        (``tile<i32>``, ``token``) exist only inside NVIDIA's custom op parsers
        (``parseCustomTypeWithFallback``).  Where the generic parser reads a type (a generic op's
        function type, a block label's argument types, a type alias definition), the first
        short-form cuda_tile type, nested in a function type or not, is
        "expected non-function type", reported by ``emitWrongTokenError`` (at the end of the
        token before it).
        """
        bare = self._short_form_type(node)
        if bare is not None:
            at = self.base + wrong_token_offset(self.text, bare.meta.start_pos)
            self.error("expected non-function type", self.source.range(at, at), "parse.type")
        return self.type(node)

    def _short_form_type(self, node: Any) -> Tree | None:
        """The first cuda_tile type written without ``!cuda_tile.`` in the type (or type list)
        ``node``, looking through function types and parenthesised lists only (a dialect type's
        own parameters are the dialect's to parse); ``None`` when there is none."""
        if not isinstance(node, Tree) or getattr(node.meta, "empty", True):
            return None
        if node.data in _CUDA_TYPE_NODES:
            return None if self.slice(node).lstrip().startswith("!") else node
        if node.data in ("function_type", "paren_type_list", "type_list"):
            for child in node.children:
                found = self._short_form_type(child)
                if found is not None:
                    return found
        return None

    def type_list(self, node: Any) -> list[T.Type]:
        if node is None:
            return []
        if isinstance(node, Tree) and node.data == "type_list":
            return [self.type(c) for c in node.children]
        if isinstance(node, Tree) and node.data == "paren_type_list":
            return self.type_list(node.children[0])
        return [self.type(node)]

    def type(self, node: Any) -> T.Type:
        """Convert a type subtree to a :class:`~tile_lsp.dialect.types.Type`, verifying it.

        A cuda_tile type that breaks its type verifier
        (:func:`tile_lsp.analysis.syntax.type_rules.verify_type`) is reported at its
        range, as MLIR's parser does.
        """
        outermost = self._type_depth == 0
        if outermost:
            self._outermost_bang = self.slice(node).lstrip().startswith("!") if isinstance(node, Tree) else True
        self._type_depth += 1
        try:
            t = self._type(node)
        finally:
            self._type_depth -= 1
        if isinstance(t, T.CudaTileType) and isinstance(node, Tree) and id(node) not in self._reported_types:
            found = locate_type_error(node, t, self.text)
            if found is not None:
                self._reported_types.add(id(node))
                message = found.message
                # NVIDIA's short-form type parser runs inside the custom op's parser
                if found.prefixed and self._custom_op is not None and not self._outermost_bang:
                    message = f"custom op '{self._custom_op}' {message}"
                where = self.source.range(self.base + found.offset, self.base + found.offset)
                self.error(message, where, "type.verify")
        return t

    def _type(self, node: Any) -> T.Type:
        if node is None:
            return T.UNKNOWN
        if isinstance(node, Token):
            return T.element_type(str(node)) or T.OpaqueType(str(node))
        d = node.data
        c = node.children
        if d == "scalar_type":
            return T.element_type(str(c[0])) or (T.NoneType() if str(c[0]) == "none" else T.OpaqueType(str(c[0])))
        if d == "tile_type":
            tile = T.interned(T.TileType(_dims(c[0]), self.type(c[1])))
            self._span("type", node, type=tile)
            return tile
        if d == "ptr_type":
            return T.interned(T.PointerType(self.type(c[0])))
        if d == "token_type":
            return T.TokenType()
        if d == "tensor_view_type":
            shape = _dims(c[0])
            strides = tuple(_stride(s) for s in c[2].children) if c[2] is not None else ()
            return T.TensorViewType(shape, self.type(c[1]), strides)
        if d == "partition_view_type":
            tile_shape = _view_shape(c[0])
            pad = str(c[1].children[0]) if c[1] is not None else None
            dim_map = _dim_map(c[3])
            return T.PartitionViewType(tile_shape, self.type(c[2]), pad, dim_map)
        if d == "strided_view_type":
            tile_shape = _view_shape(c[0])
            strides = tuple(_stride(s) for s in c[1].children) if c[1] is not None else ()
            pad = str(c[2].children[0]) if c[2] is not None else None
            return T.StridedViewType(tile_shape, strides, self.type(c[3]), pad, _dim_map(c[4]))
        if d == "gather_scatter_view_type":
            tile_shape = _view_shape(c[0])
            pad = str(c[1].children[0]) if c[1] is not None else None
            return T.GatherScatterViewType(tile_shape, self.type(c[2]), int_token(c[3]), pad)
        if d == "function_type":
            ins = self.type_list(c[0])
            outs = self.type_list(c[1])
            return T.FunctionType(tuple(ins), tuple(outs))
        if d == "paren_type_list":
            ts = self.type_list(c[0])
            return ts[0] if len(ts) == 1 else T.OpaqueType(self.slice(node))
        if d == "type_alias":
            name = str(c[0])[1:]
            self._span("!", c[0], name)
            if self._check_cuda_tile_mnemonic(c[0]) and name == "cuda_tile.":
                return T.UNKNOWN
            t = self.module.type_aliases.get(name)
            if t is None and "." in name:
                # `!dialect.name` without a body is a dialect type, not an alias (MLIR LangRef)
                return T.OpaqueType("!" + name)
            if t is None:
                # MLIR Parser::parseExtendedSymbol reports it as a wrong token: after the name
                self.error(f"undefined symbol alias id '{name}'", self._after_token(c[0]), "parse.alias")
                return T.UNKNOWN
            return t
        if d in ("dialect_type", "builtin_opaque_type"):
            if d == "dialect_type":
                self._check_cuda_tile_mnemonic(c[0])
            return T.OpaqueType(self.slice(node))
        if d == "uniform_type":
            return self.type(c[0])
        return T.OpaqueType(self.slice(node))

    def _check_cuda_tile_mnemonic(self, tok: Token) -> bool:
        """Report ``!cuda_tile.<mnemonic>`` naming no type of the dialect.

        The dialect's type parser generated by MLIR's tblgen (``parseType`` of a dialect with
        ``useDefaultTypePrinterParser``; NVIDIA Types.td) reads the mnemonic and, finding no type
        of that name, reports "unknown  type `<mnemonic>` in dialect `cuda_tile`" at it.  The
        types it knows are in the grammar and never reach here.  ``!cuda_tile.`` alone: the
        mnemonic is the next token ("expected valid keyword" when it is not a word; within the
        text the builder sees).  Returns whether an error was reported (once per token).
        """
        text = str(tok)
        prefix = "!cuda_tile."
        if not isinstance(tok, Token) or not text.startswith(prefix) or tok.start_pos is None:
            return False
        if tok.start_pos in self._checked_mnemonics:
            return True
        self._checked_mnemonics.add(tok.start_pos)
        mnemonic = re.match(r"[A-Za-z_][A-Za-z0-9_$.]*", text[len(prefix):])
        if mnemonic is None:
            if text == prefix:
                # no mnemonic: the type parser reads the next token as one (parseKeyword)
                after = next_token_offset(self.text, tok.end_pos)
                word = re.match(r"[A-Za-z_][A-Za-z0-9_$.]*", self.text[after:self.end])
                at = self.base + min(after, self.end)
                self.error(f"unknown  type `{word.group(0)}` in dialect `cuda_tile`" if word
                           else "expected valid keyword", self.source.range(at, at), "parse.type")
                return True
            return False
        at = self.base + tok.start_pos + len(prefix)
        self.error(f"unknown  type `{mnemonic.group(0)}` in dialect `cuda_tile`", self.source.range(at, at),
                   "parse.type")
        return True

    # -- attributes ------------------------------------------------------------------------

    def attribute(self, node: Any) -> A.Attribute:
        """Convert an attribute subtree to an :class:`~tile_lsp.analysis.ir.attributes.Attribute`."""
        rng = self.rng(node)
        if isinstance(node, Token):
            t = node.type
            if t == "INT":
                return A.IntegerAttr(int_token(node), range=rng)
            if t == "FLOAT":
                return A.FloatAttr(float(str(node)), text=str(node), range=rng)
            if t == "BOOL":
                return A.BoolAttr(str(node) == "true", range=rng)
            if t == "STRING":
                return A.StringAttr(unquote(str(node)), range=rng)
            return A.OpaqueAttr(str(node), range=rng)
        d = node.data
        c = node.children
        if d == "typed_number":
            ty = self.type(c[1])
            tok = c[0]
            if tok.type == "FLOAT" or isinstance(ty, T.FloatType):
                return A.FloatAttr(_float_value(str(tok), ty), ty, str(tok), range=rng)
            return A.IntegerAttr(int_token(tok), ty, range=rng)
        if d == "array_attr":
            return A.ArrayAttr([self.attribute(x) for x in c if x is not None], range=rng)
        if d == "attr_dict":
            entries: dict[str, A.Attribute] = {}
            for e in c:
                if e is None:
                    continue
                key_node, val = e.children
                key = self._attr_name(key_node)
                entries[key] = self.attribute(val) if val is not None else A.UnitAttr(range=self.rng(e))
            return A.DictAttr(entries, range=rng)
        if d == "dense_attr":
            ty = self.type(c[2])
            values = self.dense_values(c[1], T.element_of(ty)) if c[1] is not None else []
            return A.DenseElementsAttr(T.element_of(ty), values, ty, literal_shape(values), range=rng)
        if d == "dense_array_attr":
            et = self.type(c[1])
            vals = []
            if c[2] is not None:
                for v in c[2].children:
                    vals.append(_scalar(v))
            return A.DenseArrayAttr(et, vals, range=rng)
        if d == "attr_alias":
            name = str(c[0])[1:]
            self._span("#", c[0], name)
            target = self.module.attr_aliases.get(name)
            if target is None and "." in name:
                # `#dialect.name` without a body is a dialect attribute, not an alias
                dialect, _, mnemonic = name.partition(".")
                if dialect == "cuda_tile":
                    self._report_attr_issues(c[0], mnemonic, None)
                return A.DialectAttr(dialect, mnemonic, None, range=rng)
            return A.AliasAttr(name, target, range=rng)
        if d == "dialect_attr":
            full = str(c[0])[1:]
            dialect, _, mnemonic = full.partition(".")
            body = self.slice(c[1])[1:-1]
            if dialect == "cuda_tile":
                attr = self.cuda_tile_attribute(mnemonic, body, rng)
            else:  # an nv_tileas attribute (a carrier's value, an atom, a word) is decoded once, here
                value = decode_nv_tileas_attribute(mnemonic, body) if dialect == "nv_tileas" else None
                attr = A.DialectAttr(dialect, mnemonic, body, value, range=rng)
            if dialect == "cuda_tile" and self._report_attr_issues(c[0], mnemonic, c[1]):
                return attr
            # debug-info attributes are parsed by their own (generated) parsers
            aliases: list[tuple[str, Range]] = []
            errors = debuginfo.check_attribute(attr, self.module, aliases)
            self.spans.extend(Span.of("#", where, name, base_line=self.span_base) for name, where in aliases)
            for k, (message, where) in enumerate(errors):
                self.error(message, where, "parse.debuginfo", fatal=k == len(errors) - 1)
            return attr
        if d == "symbol_ref":
            names = [symbol_text(str(t)) for t in c]
            return A.SymbolRefAttr(names[0], tuple(names[1:]), range=rng)
        if d == "type_attr":
            return A.TypeAttr(self.type(c[0]), range=rng)
        if d == "unit_attr":
            return A.UnitAttr(range=rng)
        if d == "location_attr":
            return self.location(c[0])
        if d in ("fmt_int", "fmt_string", "fmt_bool", "fmt_symbol"):
            return self.attribute(c[0])
        # a type in attribute position (inlined cuda/scalar/function types)
        if d.endswith("_type") or d in ("function_type",):
            return A.TypeAttr(self.type(node), range=rng)
        return A.OpaqueAttr(self.slice(node), range=rng)

    def _report_attr_issues(self, name_tok: Token, mnemonic: str, body: Any) -> bool:
        """Report what the cuda_tile dialect's attribute parser says of ``#cuda_tile.<mnemonic>``
        followed by ``body`` (the ``<...>`` subtree, or ``None``): see
        :func:`tile_lsp.dialect.attr_syntax.attribute_issues`.  Returns whether it reported any."""
        issues = attribute_issues(mnemonic, self.slice(body) if body is not None else None)
        for k, issue in enumerate(issues):
            if issue.at == "after_name":
                where = self._after_token(name_tok)
            else:
                if issue.at == "mnemonic":
                    at = name_tok.start_pos + 1 + len("cuda_tile.")
                elif issue.at == "next":
                    at = min(next_token_offset(self.text, name_tok.end_pos), self.end)
                else:
                    at = (start_of(body) or 0) + issue.offset
                    if issue.wrong_token:
                        at = wrong_token_offset(self.text, at)
                where = self.source.range(self.base + at, self.base + at)
            self.error(issue.message, where, "parse.attribute", fatal=k == len(issues) - 1)
        return bool(issues)

    def _attr_name(self, node: Any) -> str:
        if isinstance(node, Token):
            s = str(node)
            return unquote(s) if s.startswith('"') else s
        return str(node.children[0])

    def dense_values(self, node: Any, element: T.Type | None = None) -> Any:
        """The literal as nested lists; with a float ``element``, hex integers are bit patterns."""
        if isinstance(node, Token):
            if (node.type == "INT" and isinstance(element, T.FloatType)
                    and str(node).lower().lstrip("-").startswith("0x")):
                return _float_value(str(node), element)
            return _scalar(node)
        if node.data == "dense_literal":
            return self.dense_values(node.children[0], element)
        if node.data == "dense_list":
            return [self.dense_values(x, element) for x in node.children if x is not None]
        return self.slice(node)

    def location(self, node: Any, deferred: bool = False) -> A.LocationAttr:
        """Convert a location subtree.  ``deferred``: it is an op's own ``loc(...)``, whose alias may be
        defined later in the text (MLIR ``parseTrailingLocationSpecifier``); any other alias must be
        defined already: "undefined symbol alias id" after its name (``parseExtendedAttr``)."""
        rng = self.rng(node)
        d = node.data if isinstance(node, Tree) else ""
        c = node.children if isinstance(node, Tree) else []
        if d == "file_loc":
            if len(c) < 2 or c[1] is None:  # loc("name"): MLIR's NameLoc without a child
                return A.LocationAttr("name", name=unquote(str(c[0])), range=rng)
            line = int_token(c[1])
            col = int_token(c[2]) if len(c) > 2 and c[2] is not None else 0
            return A.LocationAttr("file", filename=unquote(str(c[0])), line=line, column=col, range=rng)
        if d == "name_loc":
            return A.LocationAttr("name", name=unquote(str(c[0])), children=[self.location(c[1])], range=rng)
        if d == "unknown_loc":
            return A.LocationAttr("unknown", range=rng)
        if d == "alias_loc":
            name = str(c[0])[1:]
            self._span("#", c[0], name)
            if not deferred and name not in self.module.attr_aliases:
                self.error(f"undefined symbol alias id '{name}'", self._after_token(c[0]), "parse.alias")
            return A.LocationAttr("alias", alias=name, range=rng)
        if d == "dialect_loc":
            attr = self.attribute(Tree("dialect_attr", c, node.meta))
            return A.LocationAttr("dialect", attr=attr, range=rng)
        if d == "callsite_loc":
            return A.LocationAttr("callsite", children=[self.location(c[0]), self.location(c[1])], range=rng)
        if d == "fused_loc":
            meta = self.attribute(c[0]) if c and c[0] is not None else None
            kids = [self.location(x) for x in c[1:] if x is not None]
            return A.LocationAttr("fused", children=kids, metadata=meta, range=rng)
        return A.LocationAttr("unknown", range=rng)


_CUDA_TYPE_NODES = frozenset({"tile_type", "ptr_type", "token_type", "tensor_view_type", "partition_view_type",
                              "strided_view_type", "gather_scatter_view_type"})


def _dim_map(node: Tree | None) -> tuple[int, ...] | None:
    if node is None:
        return None
    lst = node.children[0]
    return tuple(int_token(t) for t in lst.children) if lst is not None else ()


def _dims(tok: Any) -> tuple[int | None, ...]:
    if tok is None:
        return ()
    parts = str(tok).rstrip("x").split("x")
    return tuple(None if p == "?" else int(p) for p in parts if p != "")


def _float_value(text: str, ty: T.Type) -> float:
    """A float literal's value; a hex literal is the bit pattern of the float type ``ty``."""
    if text.lower().startswith(("0x", "-0x")) and isinstance(ty, T.FloatType):
        value = T.float_from_bits(int(text, 16), ty.name)
        if value is not None:
            return value
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _scalar(tok: Any) -> Any:
    if isinstance(tok, Token):
        if tok.type == "INT":
            return int_token(tok)
        if tok.type == "FLOAT":
            return float(str(tok))
        if tok.type == "BOOL":
            return str(tok) == "true"
        if tok.type == "STRING":
            return unquote(str(tok))
    return str(tok)


def _stride(tok: Any) -> int | None:
    return None if str(tok) == "?" else int_token(tok)


def _view_shape(node: Tree) -> tuple[int, ...]:
    tok = node.children[0]
    if tok is None:
        return ()
    return tuple(int(p) for p in str(tok).split("x"))


def int_token(tok: Any) -> int:
    s = str(tok)
    try:
        return int(s, 0)
    except ValueError:
        try:
            return int(s)
        except ValueError:
            return 0


def literal_shape(values: Any) -> tuple[int, ...]:
    shape = []
    v = values
    while isinstance(v, list):
        shape.append(len(v))
        if not v:
            break
        v = v[0]
    return tuple(shape)


def symbol_text(s: str) -> str:
    s = s[1:] if s.startswith("@") else s
    return unquote(s)


def unquote(s: str) -> str:
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        body = s[1:-1]
        return re.sub(r"\\(\\|\"|n|t|[0-9a-fA-F]{2})",
                      lambda m: {"\\": "\\", '"': '"', "n": "\n", "t": "\t"}.get(m.group(1))
                      or chr(int(m.group(1), 16)), body)
    return s


def resolve_location_aliases(module, ops) -> None:
    """Give each of ``ops`` whose location is ``loc(#alias)`` the location the alias names, once every
    alias of the chunk is known (MLIR resolves them when the whole text is parsed)."""
    aliases = module.attr_aliases
    if not aliases:
        return
    for op in ops:
        loc = op.location
        if isinstance(loc, A.LocationAttr) and loc.kind == "alias" and loc.alias in aliases:
            op.location = aliases[loc.alias]


def undefined_location_aliases(module, ops=None) -> list[Diagnostic]:
    """"operation location alias was never defined", at each ``loc(#alias)`` of an op naming no alias of
    ``module``; in text order of the locations.  MLIR ``OperationParser::finalize`` reports them when the
    whole text is parsed (after everything else of the parse phase: their code is one of
    ``LATE_PARSE_CODES``), walking the ops in post-order (an op's trailing location after those of
    the ops in its regions: the locations' text order), and stops at the first.  ``ops``: the ops to
    look at (default: all of ``module``'s)."""
    out = []
    for op in module.walk() if ops is None else ops:
        loc = op.location
        if isinstance(loc, A.LocationAttr) and loc.kind == "alias" and loc.alias not in module.attr_aliases:
            out.append(Diagnostic(Severity.ERROR, "operation location alias was never defined", loc.range,
                                  "parse.location-alias"))
    out.sort(key=lambda d: (d.range.start.line, d.range.start.character) if d.range is not None else (-1, -1))
    return out
