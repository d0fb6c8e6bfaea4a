"""Debug information: the cuda_tile ``di_*`` attributes and MLIR locations.

The builder keeps ``#cuda_tile.di_*<...>`` attributes as text
(:class:`~tile_lsp.analysis.ir.attributes.DialectAttr`) and locations as
:class:`~tile_lsp.analysis.ir.attributes.LocationAttr` trees whose aliases
(``loc(#loc3)``) are names.  This module decodes both into immutable values
that compare as MLIR's uniqued attributes do (structurally), prints them as
MLIR prints them in diagnostics, and reports the errors MLIR's parser gives
for malformed ``di_*`` attributes.

Rule sources:

- NVIDIA cuda-tile ``include/cuda_tile/Dialect/CudaTile/IR/AttrDefs.td``
  (``DIFileAttr`` ``<$name in $directory>``, ``DICompileUnitAttr``,
  ``DISubprogramAttr`` and ``DILexicalBlockAttr`` ``<struct(params)>``,
  ``DILocAttr`` ``<$sourceLoc in $scope>``) and
  ``lib/Dialect/CudaTile/IR/Attributes.cpp`` (``DILocalScopeAttr`` is a
  subprogram or a lexical block).  These attributes have no verifier of
  their own: their errors are those of the parsers that mlir-tblgen
  generates for the assembly formats (``AttrOrTypeFormatGen.cpp``:
  ``expected a parameter name in struct``, ``struct is missing required
  parameter: X``, ``duplicate or unknown struct parameter name: X``,
  ``failed to parse <Def> parameter 'x' which is to be a `T```) and of MLIR's
  ``AsmParser`` helpers (``expected '='``, ``invalid kind of attribute
  specified`` ...).
- MLIR ``lib/AsmParser/LocationParser.cpp`` (location syntax and errors),
  ``lib/IR/AsmPrinter.cpp`` (``printLocationInternal``, ``printEscapedString``)
  and ``lib/IR/Diagnostics.cpp`` (``SourceMgrDiagnosticHandler``: a diagnostic
  is shown at the first ``FileLineColLoc`` found in a pre-order walk of its
  location, and each caller of a ``CallSiteLoc`` adds a ``called from`` note).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, NamedTuple
from weakref import WeakKeyDictionary

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.diagnostics import Position, Range
from tile_lsp.grammar.lexical import STRING

# ---------------------------------------------------------------------------
# Strings
# ---------------------------------------------------------------------------


def escape_string(value: str) -> str:
    """``llvm::printEscapedString``: backslash doubled, ``"`` and non-printable bytes as ``\\XX``."""
    out = []
    for byte in value.encode("utf-8"):
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and byte != 0x22:
            out.append(chr(byte))
        else:
            out.append("\\%02X" % byte)
    return "".join(out)


def quote(value: str) -> str:
    """A string literal as MLIR prints it: ``"..."`` with :func:`escape_string`."""
    return '"' + escape_string(value) + '"'


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def unescape_string(literal: str) -> str:
    """The value of an MLIR string literal (``Token::getStringValue``), quotes included in ``literal``."""
    body = literal[1:-1]
    if "\\" not in body:
        return body
    data = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _ESCAPES:
                data += _ESCAPES[nxt].encode()
                i += 2
                continue
            hexpair = body[i + 1:i + 3]
            if len(hexpair) == 2 and all(h in "0123456789abcdefABCDEF" for h in hexpair):
                data.append(int(hexpair, 16))
                i += 3
                continue
        data += c.encode("utf-8")
        i += 1
    return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------
# Debug-info attributes (AttrDefs.td, "DebugInfo")
# ---------------------------------------------------------------------------


class DIAttr:
    """Base of the decoded ``di_*`` attributes.

    ``str(attr)`` is the full form (``#cuda_tile.di_file<...>``), :meth:`body`
    the form without the dialect prefix that MLIR prints for parameters whose
    C++ type has its own parser (``file = <"a.py" in "/x">``).
    """

    mnemonic: ClassVar[str] = ""

    def body(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __str__(self) -> str:
        return f"#cuda_tile.{self.mnemonic}{self.body()}"


@dataclass(frozen=True)
class DIFile(DIAttr):
    """``#cuda_tile.di_file<"name" in "directory">``."""

    name: str
    directory: str
    mnemonic: ClassVar[str] = "di_file"

    def body(self) -> str:
        return f"<{quote(self.name)} in {quote(self.directory)}>"


@dataclass(frozen=True)
class DICompileUnit(DIAttr):
    """``#cuda_tile.di_compile_unit<file = ...>``."""

    file: DIFile
    mnemonic: ClassVar[str] = "di_compile_unit"

    def body(self) -> str:
        return f"<file = {self.file.body()}>"


@dataclass(frozen=True)
class DISubprogram(DIAttr):
    """``#cuda_tile.di_subprogram<file, line, name, linkageName, compileUnit[, scopeLine]>``.

    ``scope_line`` 0 means absent (an ``OptionalParameter<"unsigned">`` is
    not printed when it equals its default).
    """

    file: DIFile
    line: int
    name: str
    linkage_name: str
    compile_unit: DICompileUnit
    scope_line: int = 0
    mnemonic: ClassVar[str] = "di_subprogram"

    def body(self) -> str:
        text = (f"<file = {self.file.body()}, line = {self.line}, name = {quote(self.name)}, "
                f"linkageName = {quote(self.linkage_name)}, compileUnit = {self.compile_unit.body()}")
        if self.scope_line:
            text += f", scopeLine = {self.scope_line}"
        return text + ">"


@dataclass(frozen=True)
class DILexicalBlock(DIAttr):
    """``#cuda_tile.di_lexical_block<scope, file, line[, column]>`` (``column`` 0: absent)."""

    scope: "DISubprogram | DILexicalBlock"
    file: DIFile
    line: int
    column: int = 0
    mnemonic: ClassVar[str] = "di_lexical_block"

    def body(self) -> str:
        # the scope is a DILocalScopeAttr, which has no parser of its own: printed in full
        text = f"<scope = {self.scope}, file = {self.file.body()}, line = {self.line}"
        if self.column:
            text += f", column = {self.column}"
        return text + ">"


DILocalScope = (DISubprogram, DILexicalBlock)


# ---------------------------------------------------------------------------
# Locations (MLIR BuiltinLocationAttributes.td) and the DILocAttr
# ---------------------------------------------------------------------------


class Loc:
    """Base of the decoded locations; ``str(loc)`` prints it as a diagnostic argument."""

    def inner(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __str__(self) -> str:
        return f"loc({self.inner()})"


@dataclass(frozen=True)
class UnknownLoc(Loc):
    def inner(self) -> str:
        return "unknown"


UNKNOWN = UnknownLoc()


@dataclass(frozen=True)
class FileLoc(Loc):
    """A ``FileLineColRange``; a ``FileLineColLoc`` when it has exactly a line and a column."""

    filename: str
    line: int
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None

    @property
    def is_file_line_col(self) -> bool:
        return self.column is not None and self.end_column is None

    def inner(self) -> str:
        text = f"{quote(self.filename)}:{self.line}"
        if self.column is not None:
            text += f":{self.column}"
        if self.end_column is not None:
            text += " to " + (str(self.end_line) if self.end_line is not None else "") + f":{self.end_column}"
        return text


@dataclass(frozen=True)
class NameLoc(Loc):
    name: str
    child: Loc = UNKNOWN

    def inner(self) -> str:
        if isinstance(self.child, UnknownLoc):
            return quote(self.name)
        return f"{quote(self.name)}({self.child.inner()})"


@dataclass(frozen=True)
class CallSiteLoc(Loc):
    callee: Loc
    caller: Loc

    def inner(self) -> str:
        return f"callsite({self.callee.inner()} at {self.caller.inner()})"


@dataclass(frozen=True)
class FusedLoc(Loc):
    """``fused<metadata>[...]``; ``metadata`` is kept as printed text."""

    locations: tuple[Loc, ...]
    metadata: str | None = None

    def inner(self) -> str:
        meta = f"<{self.metadata}>" if self.metadata is not None else ""
        return f"fused{meta}[" + ", ".join(loc.inner() for loc in self.locations) + "]"


@dataclass(frozen=True)
class DILoc(Loc, DIAttr):
    """``#cuda_tile.di_loc<loc("f":l:c) in #scope>``: a location with a debug-info scope.

    A dialect location: MLIR prints it as the attribute itself, never inside
    ``loc(...)``.
    """

    source: FileLoc
    scope: "DISubprogram | DILexicalBlock"
    mnemonic: ClassVar[str] = "di_loc"

    def body(self) -> str:
        return f"<{self.source} in {self.scope}>"

    def inner(self) -> str:
        return DIAttr.__str__(self)

    def __str__(self) -> str:
        return DIAttr.__str__(self)


# ---------------------------------------------------------------------------
# Queries on locations
# ---------------------------------------------------------------------------


def get_di_loc(loc: Loc | None) -> DILoc | None:
    """The ``DILocAttr`` carried by ``loc`` (NVIDIA CudaTile.cpp ``DebugInfoVerifier::getDILoc``).

    A call site gives its caller's, a fused location its first child's that
    has one, a name location its child's.
    """
    if isinstance(loc, DILoc):
        return loc
    if isinstance(loc, CallSiteLoc):
        return get_di_loc(loc.caller)
    if isinstance(loc, FusedLoc):
        for sub in loc.locations:
            found = get_di_loc(sub)
            if found is not None:
                return found
        return None
    if isinstance(loc, NameLoc):
        return get_di_loc(loc.child)
    return None


def get_subprogram(scope: Any) -> DISubprogram | None:
    """The subprogram enclosing a local scope (NVIDIA ``DebugInfoVerifier::getSubprogram``)."""
    while isinstance(scope, DILexicalBlock):
        scope = scope.scope
    return scope if isinstance(scope, DISubprogram) else None


def find_file_loc(loc: Loc | None) -> FileLoc | None:
    """First ``FileLineColLoc`` of a pre-order walk (MLIR ``LocationAttr::findInstanceOf``).

    Sub-locations in parameter order: callee before caller, fused children in
    order, a name location's child, a ``di_loc``'s source location.
    """
    if isinstance(loc, FileLoc):
        return loc if loc.is_file_line_col else None
    if isinstance(loc, NameLoc):
        return find_file_loc(loc.child)
    if isinstance(loc, CallSiteLoc):
        return find_file_loc(loc.callee) or find_file_loc(loc.caller)
    if isinstance(loc, FusedLoc):
        for sub in loc.locations:
            found = find_file_loc(sub)
            if found is not None:
                return found
        return None
    if isinstance(loc, DILoc):
        return find_file_loc(loc.source)
    return None


def get_call_site(loc: Loc | None) -> CallSiteLoc | None:
    """MLIR Diagnostics.cpp ``getCallSiteLoc``: through name locations and fused children."""
    if isinstance(loc, NameLoc):
        return get_call_site(loc.child)
    if isinstance(loc, CallSiteLoc):
        return loc
    if isinstance(loc, FusedLoc):
        for sub in loc.locations:
            found = get_call_site(sub)
            if found is not None:
                return found
    return None


#: SourceMgrDiagnosticHandler's default call stack limit
CALL_STACK_LIMIT = 10


def call_stack(loc: Loc | None, limit: int = CALL_STACK_LIMIT) -> list[Loc]:
    """The caller locations MLIR prints as ``called from`` notes after a diagnostic at ``loc``."""
    out: list[Loc] = []
    site = get_call_site(loc)
    if site is None:
        return out
    current = site.caller
    for _ in range(limit):
        out.append(current)
        site = get_call_site(current)
        if site is None:
            break
        current = site.caller
    return out


# ---------------------------------------------------------------------------
# Lexing the text of an attribute
# ---------------------------------------------------------------------------


class _Tok(NamedTuple):
    kind: str  # string int float hash bang at ident punct eof bad
    text: str
    start: int
    end: int


_TOKEN = re.compile(r"""
  (?P<ws>(?:\s+|//[^\n]*)+)
| (?P<string>""" + STRING + r""")
| (?P<badstring>")
| (?P<float>[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?)
| (?P<int>0x[0-9a-fA-F]+|[0-9]+)
| (?P<hash>\#(?:[0-9]+|[A-Za-z_$.\-][A-Za-z0-9_$.\-]*))
| (?P<bang>!(?:[0-9]+|[A-Za-z_$.\-][A-Za-z0-9_$.\-]*))
| (?P<at>@(?:[A-Za-z_][A-Za-z0-9_$.]*|""" + STRING + r"""))
| (?P<ident>[A-Za-z_][A-Za-z0-9_$.]*)
| (?P<punct>->|[<>()\[\]{}=,:?*+\-])
""", re.X)


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            toks.append(_Tok("bad", text[pos], pos, pos + 1))
            pos += 1
            continue
        kind = m.lastgroup or "bad"
        if kind != "ws":
            toks.append(_Tok("bad" if kind == "badstring" else kind, m.group(), m.start(), m.end()))
        pos = m.end()
    toks.append(_Tok("eof", "", len(text), len(text)))
    return toks


# ---------------------------------------------------------------------------
# Parsing (mlir-tblgen parsers of the assembly formats, MLIR AsmParser)
# ---------------------------------------------------------------------------


class _Fail(Exception):
    """The parse failed; the errors are in the parser's ``errors``."""


class _Silent(Exception):
    """An alias used here is itself invalid: MLIR already reported it at its definition."""


@dataclass(frozen=True)
class _Str:
    value: str

    def __str__(self) -> str:
        return quote(self.value)


@dataclass(frozen=True)
class _Other:
    """Any other attribute, kept as text (only its kind matters here)."""

    text: str

    def __str__(self) -> str:
        return self.text


_UNDEFINED = object()


class _Param(NamedTuple):
    name: str
    kind: str  # file, compile_unit, local_scope, unsigned, string, file_line_col
    cpp_type: str
    optional: bool = False


#: mnemonic -> (TableGen record name, struct parameters); AttrDefs.td
STRUCT_ATTRS: dict[str, tuple[str, tuple[_Param, ...]]] = {
    "di_compile_unit": ("CudaTile_DICompileUnitAttr", (
        _Param("file", "file", "DIFileAttr"),
    )),
    "di_subprogram": ("CudaTile_DISubprogramAttr", (
        _Param("file", "file", "DIFileAttr"),
        _Param("line", "unsigned", "unsigned"),
        _Param("name", "string", "StringAttr"),
        _Param("linkageName", "string", "StringAttr"),
        _Param("compileUnit", "compile_unit", "DICompileUnitAttr"),
        _Param("scopeLine", "unsigned", "unsigned", optional=True),
    )),
    "di_lexical_block": ("CudaTile_DILexicalBlockAttr", (
        _Param("scope", "local_scope", "DILocalScopeAttr"),
        _Param("file", "file", "DIFileAttr"),
        _Param("line", "unsigned", "unsigned"),
        _Param("column", "unsigned", "unsigned", optional=True),
    )),
}

#: mnemonic -> (TableGen record name, parameters) of the formats `<$a in $b>`
IN_ATTRS: dict[str, tuple[str, tuple[_Param, _Param]]] = {
    "di_file": ("CudaTile_DIFileAttr", (
        _Param("name", "string", "StringAttr"),
        _Param("directory", "string", "StringAttr"),
    )),
    "di_loc": ("CudaTile_DILocAttr", (
        _Param("sourceLoc", "file_line_col", "FileLineColLoc"),
        _Param("scope", "local_scope", "DILocalScopeAttr"),
    )),
}

DI_MNEMONICS = frozenset(STRUCT_ATTRS) | frozenset(IN_ATTRS)

#: parameter kind -> (accepts a value, mnemonic of the custom parser used without '#')
_KINDS: dict[str, tuple[Callable[[Any], bool], str | None]] = {
    "file": (lambda v: isinstance(v, DIFile), "di_file"),
    "compile_unit": (lambda v: isinstance(v, DICompileUnit), "di_compile_unit"),
    "local_scope": (lambda v: isinstance(v, DILocalScope), None),
    "string": (lambda v: isinstance(v, _Str), None),
    "file_line_col": (lambda v: isinstance(v, FileLoc) and v.is_file_line_col, None),
}

_UINT_LIMIT = 1 << 32


def _int(spelling: str) -> int:
    """Value of an integer token (decimal, or hexadecimal with ``0x``)."""
    return int(spelling, 16) if spelling[:2] in ("0x", "0X") else int(spelling, 10)


class _Parser:
    """Recursive-descent parser over the text ``<body>`` of one ``di_*`` attribute.

    ``resolve(name)`` gives the value of attribute alias ``name`` (or
    ``_UNDEFINED``).  Errors are ``(message, offset in text)``; parsing stops
    at the first failure, which may report several errors as MLIR does
    (a helper's error followed by the generated parser's own).
    """

    def __init__(self, text: str, resolve: Callable[[str], Any]):
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.resolve = resolve
        self.errors: list[tuple[str, int]] = []
        #: ``(name, start, end)`` of each ``#alias`` read, offsets in ``text``
        self.aliases_read: list[tuple[str, int, int]] = []

    # -- tokens ----------------------------------------------------------------

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def advance(self) -> _Tok:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def at(self, text: str) -> bool:
        t = self.tok
        return t.kind in ("punct", "ident") and t.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.advance()
            return True
        return False

    def error_at(self, message: str, offset: int) -> None:
        self.errors.append((message, offset))

    def fail(self, message: str, offset: int | None = None) -> _Fail:
        """Report at the current token (``emitError(getCurrentLocation())``) and fail."""
        self.error_at(message, self.tok.start if offset is None else offset)
        return _Fail()

    def wrong_token(self, message: str) -> _Fail:
        """MLIR ``Parser::emitWrongTokenError``: at the end of the previous token.

        It backs up from the current token over blanks, line ends and ``//``
        comments of the lines it crosses.
        """
        end = self.tok.start
        text = self.text
        while True:
            while end > 0 and text[end - 1] in " \t":
                end -= 1
            if end == 0:
                return self.fail(message, self.tok.start)
            if text[end - 1] not in "\n\r":
                return self.fail(message, end)
            end -= 1
            line_start = max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1
            comment = text.find("//", line_start, end)
            if comment != -1:
                end = comment

    def expect(self, text: str, message: str) -> None:
        """``parseToken`` / ``parseLess`` & co: ``expected 'x'`` after the previous token."""
        if not self.accept(text):
            raise self.wrong_token(message)

    # -- entry -----------------------------------------------------------------

    def parse_top(self, mnemonic: str) -> Any:
        value = self.di_attr(mnemonic)
        if self.tok.kind != "eof":
            raise self.fail("expected '>'")
        return value

    def di_attr(self, mnemonic: str) -> Any:
        if mnemonic in STRUCT_ATTRS:
            return self.struct_attr(mnemonic)
        return self.in_attr(mnemonic)

    def in_attr(self, mnemonic: str) -> Any:
        record, (first, second) = IN_ATTRS[mnemonic]
        self.expect("<", "expected '<'")
        a = self.field(first, record)
        if not self.at("in"):
            raise self.fail("expected 'in'")
        self.advance()
        b = self.field(second, record)
        self.expect(">", "expected '>'")
        if mnemonic == "di_file":
            return DIFile(a.value, b.value)
        return DILoc(a, b)

    def struct_attr(self, mnemonic: str) -> Any:
        record, params = STRUCT_ATTRS[mnemonic]
        self.expect("<", "expected '<'")
        seen: dict[str, Any] = {}

        def one() -> None:
            if self.tok.kind != "ident":
                self.error_at("expected valid keyword", self.tok.start)
                raise self.fail("expected a parameter name in struct")
            key = self.advance().text
            self.expect("=", "expected '='")
            param = next((p for p in params if p.name == key and p.name not in seen), None)
            if param is None:
                raise self.fail(f"duplicate or unknown struct parameter name: {key}")
            seen[key] = self.field(param, record)

        if any(p.optional for p in params):
            one()
            while self.accept(","):
                one()
            for p in params:
                if not p.optional and p.name not in seen:
                    raise self.fail(f"struct is missing required parameter: {p.name}")
        else:
            for k in range(len(params)):
                one()
                if k != len(params) - 1:
                    self.expect(",", "expected ','")
        self.expect(">", "expected '>'")
        values = [seen.get(p.name, 0) for p in params]
        if mnemonic == "di_compile_unit":
            return DICompileUnit(*values)
        if mnemonic == "di_subprogram":
            f, line, name, linkage, cu, scope_line = values
            return DISubprogram(f, line, name.value, linkage.value, cu, scope_line)
        scope, f, line, column = values
        return DILexicalBlock(scope, f, line, column)

    # -- parameters ------------------------------------------------------------

    def field(self, param: _Param, record: str) -> Any:
        """``FieldParser<T>::parse``; on failure the generated ``failed to parse`` error."""
        try:
            if param.kind == "unsigned":
                return self.unsigned()
            accepts, custom = _KINDS[param.kind]
            start = self.tok.start
            if custom is not None and self.tok.kind != "hash":
                value = self.di_attr(custom)  # parseCustomAttributeWithFallback
            else:
                value = self.attribute()
            if not accepts(value):
                raise self.fail("invalid kind of attribute specified", start)
            return value
        except _Fail:
            raise self.fail(f"failed to parse {record} parameter '{param.name}' which is to be a "
                            f"`{param.cpp_type}`") from None

    def unsigned(self) -> int:
        """``AsmParser::parseInteger<unsigned>``."""
        start = self.tok.start
        if self.at("true") or self.at("false"):
            return int(self.advance().text == "true")
        if not (self.tok.kind == "int" or self.at("-")):
            raise self.fail("expected integer value")
        negative = self.accept("-")
        if self.tok.kind != "int":
            raise self.wrong_token("expected integer value")
        value = _int(self.advance().text)
        if negative:
            value = -value
        if not -_UINT_LIMIT < value < _UINT_LIMIT:
            raise self.fail("integer value too large", start)
        return value % _UINT_LIMIT

    # -- generic attributes ----------------------------------------------------

    def attribute(self) -> Any:
        """``Parser::parseAttribute``: the value, or ``_Other`` for kinds not needed here."""
        t = self.tok
        if t.kind == "hash":
            return self.extended_attr()
        if t.kind == "string":
            self.advance()
            value = _Str(unescape_string(t.text))
            if self.accept(":"):
                self.type_()
            return value
        if t.kind in ("int", "float") or self.at("-"):
            start = t.start
            self.accept("-")
            if self.tok.kind not in ("int", "float"):
                raise self.wrong_token("expected constant integer or floating point value")
            self.advance()
            if self.accept(":"):
                self.type_()
            return _Other(self.text[start:self.toks[self.i - 1].end])
        if self.at("loc"):
            self.advance()
            self.expect("(", "expected '(' in inline location")
            loc = self.location()
            self.expect(")", "expected ')' in inline location")
            return loc
        if t.kind in ("at", "bang") or t.kind == "ident":
            start = t.start
            self.advance()
            if self.at("<") or self.at("("):
                self.balanced()
            return _Other(self.text[start:self.toks[self.i - 1].end])
        if self.at("[") or self.at("{"):
            start = t.start
            self.balanced()
            return _Other(self.text[start:self.toks[self.i - 1].end])
        raise self.wrong_token("expected attribute value")

    def type_(self) -> None:
        t = self.tok
        if t.kind in ("ident", "bang"):
            self.advance()
            if self.at("<"):
                self.balanced()
            return
        if self.at("("):
            self.balanced()
            if self.accept("->"):
                self.type_()
            return
        raise self.wrong_token("expected non-function type")

    def balanced(self) -> None:
        """Skip a bracketed group starting at the current token."""
        pairs = {"<": ">", "(": ")", "[": "]", "{": "}"}
        stack = [pairs[self.advance().text]]
        while stack:
            t = self.advance()
            if t.kind == "eof":
                raise self.fail("unbalanced brackets")
            if t.kind == "punct":
                if t.text in pairs:
                    stack.append(pairs[t.text])
                elif t.text == stack[-1]:
                    stack.pop()

    def extended_attr(self) -> Any:
        """``#alias`` or ``#dialect.mnemonic<...>`` (MLIR ``parseExtendedSymbol``)."""
        t = self.advance()
        name = t.text[1:]
        trailing = self.at("<") and self.tok.start == t.end
        if "." not in name and not trailing:
            self.aliases_read.append((name, t.start, t.end))
            value = self.resolve(name)
            if value is _UNDEFINED:
                raise self.wrong_token(f"undefined symbol alias id '{name}'")
            return value
        dialect, _, mnemonic = name.partition(".")
        if dialect == "cuda_tile" and mnemonic in DI_MNEMONICS:
            return self.di_attr(mnemonic)
        if self.at("<"):
            self.balanced()
        return _Other(self.text[t.start:self.toks[self.i - 1].end])

    # -- locations (LocationParser.cpp) ----------------------------------------

    def location(self) -> Loc:
        t = self.tok
        if t.kind == "hash":
            value = self.extended_attr()
            if not isinstance(value, Loc):
                raise self.fail(f"expected location attribute, but got{value}")
            return value
        if t.kind == "string":
            return self.name_or_file_loc()
        if t.kind != "ident":
            raise self.wrong_token("expected location instance")
        if t.text == "callsite":
            self.advance()
            self.expect("(", "expected '(' in callsite location")
            callee = self.location()
            if not self.at("at"):
                raise self.wrong_token("expected 'at' in callsite location")
            self.advance()
            caller = self.location()
            self.expect(")", "expected ')' in callsite location")
            return CallSiteLoc(callee, caller)
        if t.text == "fused":
            self.advance()
            metadata = None
            if self.accept("<"):
                start = self.tok.start
                self.attribute()
                metadata = self.text[start:self.toks[self.i - 1].end]
                self.expect(">", "expected '>' after fused location metadata")
            self.expect("[", "expected '[' in fused location")
            locs = []
            if not self.at("]"):
                locs.append(self.location())
                while self.accept(","):
                    locs.append(self.location())
            self.expect("]", "expected ']' in fused location")
            return FusedLoc(tuple(locs), metadata)
        if t.text == "unknown":
            self.advance()
            return UNKNOWN
        raise self.wrong_token("expected location instance")

    def name_or_file_loc(self) -> Loc:
        name = unescape_string(self.advance().text)
        if self.accept(":"):
            what = "FileLineColRange"
            if self.tok.kind != "int":
                raise self.wrong_token(f"expected integer line number in {what}")
            line = _int(self.advance().text)
            if not self.at(":"):
                return FileLoc(name, line)
            self.advance()
            if self.tok.kind != "int":
                raise self.wrong_token(f"expected integer column number in {what}")
            column = _int(self.advance().text)
            if not self.at("to"):
                return FileLoc(name, line, column)
            self.advance()
            end_line = _int(self.advance().text) if self.tok.kind == "int" else None
            if not self.at(":"):
                raise self.wrong_token(f"expected either integer or `:` post `to` in {what}")
            self.advance()
            if self.tok.kind != "int":
                raise self.wrong_token(f"expected integer column number in {what}")
            return FileLoc(name, line, column, end_line, _int(self.advance().text))
        if self.accept("("):
            child = self.location()
            self.expect(")", "expected ')' after child location of NameLoc")
            return NameLoc(name, child)
        return NameLoc(name)


# ---------------------------------------------------------------------------
# Decoding the builder's attributes
# ---------------------------------------------------------------------------


class DebugInfoDecoder:
    """Decodes the debug info of one module; results are cached per attribute object.

    ``aliases`` is the module's alias table (``Module.attr_aliases``); it is
    read when an alias is met, so aliases defined later are seen once added.
    Decoding is lenient: a malformed attribute gives ``None`` (its errors
    are :func:`check_attribute`'s business).
    """

    def __init__(self, aliases: Mapping[str, A.Attribute]):
        self.aliases = aliases
        self._cache: dict[int, tuple[A.Attribute, Any]] = {}
        self._active: set[int] = set()

    # -- values ----------------------------------------------------------------

    def value(self, attr: A.Attribute | None) -> Any:
        """The decoded value of ``attr``: a DI attribute, a :class:`Loc`, or ``None``/other."""
        if attr is None:
            return None
        key = id(attr)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is attr:
            return hit[1]
        if key in self._active:  # an alias cycle
            return None
        self._active.add(key)
        try:
            result = self._value(attr)
        finally:
            self._active.discard(key)
        self._cache[key] = (attr, result)
        return result

    def _value(self, attr: A.Attribute) -> Any:
        if isinstance(attr, A.AliasAttr):
            target = attr.target if attr.target is not None else self.aliases.get(attr.name)
            return self.value(target)
        if isinstance(attr, A.LocationAttr):
            return self._location(attr)
        if isinstance(attr, A.DialectAttr):
            if attr.value is not None:  # decoded by the builder (check)
                return attr.value
            if attr.dialect == "cuda_tile" and attr.mnemonic in DI_MNEMONICS and attr.body is not None:
                parser = _Parser(f"<{attr.body}>", self._resolve_lenient)
                try:
                    return parser.parse_top(attr.mnemonic)
                except (_Fail, _Silent):
                    return None
            return _Other(str(attr))
        if isinstance(attr, A.StringAttr) and not isinstance(attr, A.SymbolNameAttr):
            return _Str(attr.value)
        return _Other(str(attr))

    def _resolve_lenient(self, name: str) -> Any:
        target = self.aliases.get(name)
        if target is None:
            return _UNDEFINED
        value = self.value(target)
        if value is None:
            raise _Silent()
        return value

    def _location(self, attr: A.LocationAttr) -> Loc | None:
        kind = attr.kind
        if kind == "file":
            if attr.line == 0 and attr.column == 0:  # `loc("name")`: a name location
                return NameLoc(attr.filename)
            return FileLoc(attr.filename, attr.line, attr.column)
        if kind == "unknown":
            return UNKNOWN
        if kind == "name":
            child = self._child(attr.children[0]) if attr.children else UNKNOWN
            return NameLoc(attr.name, child) if child is not None else None
        if kind == "alias":
            value = self.value(self.aliases.get(attr.alias))
            return value if isinstance(value, Loc) else None
        if kind == "dialect":
            value = self.value(attr.attr)
            return value if isinstance(value, Loc) else None
        if kind == "callsite" and len(attr.children) == 2:
            callee, caller = (self._child(c) for c in attr.children)
            return CallSiteLoc(callee, caller) if callee is not None and caller is not None else None
        if kind == "fused":
            kids = [self._child(c) for c in attr.children]
            if any(k is None for k in kids):
                return None
            meta = str(attr.metadata) if attr.metadata is not None else None
            return FusedLoc(tuple(kids), meta)
        return None

    def _child(self, attr: A.Attribute) -> Loc | None:
        value = self.value(attr)
        return value if isinstance(value, Loc) else None

    def location(self, attr: A.Attribute | None) -> Loc | None:
        """The decoded location of ``attr`` (an op's ``location``), ``None`` if not a valid one."""
        value = self.value(attr)
        return value if isinstance(value, Loc) else None

    # -- errors ----------------------------------------------------------------

    def check(self, attr: A.DialectAttr, aliases_read: list[tuple[str, int, int]] | None = None,
              ) -> list[tuple[str, int]]:
        """MLIR's parse errors for ``attr`` as ``(message, offset in "<body>")``.

        Aliases are those currently in the table: called while building,
        before ``attr``'s own alias is added, that is what MLIR sees.
        ``aliases_read``, when given, gets ``(name, start, end)`` (offsets in
        ``"<body>"``) of each ``#alias`` the body names, up to where parsing stopped.
        A body that parses leaves its decoded value in ``attr.value``, which
        :meth:`value` returns from then on (the attribute is decoded once).
        """
        if attr.dialect != "cuda_tile" or attr.mnemonic not in DI_MNEMONICS or attr.body is None:
            return []
        parser = _Parser(f"<{attr.body}>", self._resolve_lenient)
        try:
            value = parser.parse_top(attr.mnemonic)
        except _Silent:
            return []
        except _Fail:
            return parser.errors
        finally:
            if aliases_read is not None:
                aliases_read.extend(parser.aliases_read)
        attr.value = value  # decoded once: the readers downstream take it from the attribute
        return []


_DECODERS: "WeakKeyDictionary[Any, DebugInfoDecoder]" = WeakKeyDictionary()


def decoder_for(module: Any) -> DebugInfoDecoder:
    """The (cached) decoder of ``module`` (a :class:`~tile_lsp.analysis.ir.core.Module`)."""
    dec = _DECODERS.get(module)
    if dec is None or dec.aliases is not module.attr_aliases:
        dec = DebugInfoDecoder(module.attr_aliases)
        _DECODERS[module] = dec
    return dec


def decode_attribute(attr: A.Attribute, aliases: Mapping[str, A.Attribute] | None = None) -> Any:
    """Decode one attribute (a ``di_*`` DialectAttr, an alias, a location) with ``aliases``."""
    return DebugInfoDecoder(aliases or {}).value(attr)


def check_attribute(attr: A.Attribute, module: Any, aliases: list[tuple[str, Range]] | None = None,
                    ) -> list[tuple[str, Range | None]]:
    """Parse errors of a ``#cuda_tile.di_*`` attribute as MLIR reports them, with their positions.

    Meant for the builder, right after it builds a ``dialect_attr`` (an alias
    definition, an attribute value or a ``loc(#cuda_tile.di_loc<...>)``),
    before adding it to ``module.attr_aliases``: each ``(message, range)``
    is a parse error (several for one failure, as MLIR emits them).  Empty
    for valid attributes and for non-debug-info ones.  ``aliases``, when
    given, gets ``(name, range)`` of each ``#alias`` the body names (the
    builder's span table).
    """
    if not isinstance(attr, A.DialectAttr):
        return []
    read: list[tuple[str, int, int]] | None = [] if aliases is not None else None
    errors = decoder_for(module).check(attr, read)
    for name, start, end in read or ():
        at = body_offset_range(attr, start - 1)
        if at is not None:
            aliases.append((name, Range(at.start, Position(at.start.line, at.start.character + end - start))))
    return [(msg, body_offset_range(attr, off - 1)) for msg, off in errors]


def body_offset_range(attr: A.DialectAttr, offset: int) -> Range | None:
    """Document position (as an empty range) of ``offset`` in ``attr.body`` (``len(body)``: the ``>``).

    Computed from the attribute's range: the body ends just before its last
    character; lines before the body's first line break are assumed to start
    right after ``#dialect.mnemonic<``.
    """
    rng = attr.range
    body = attr.body or ""
    if rng is None:
        return None
    offset = max(0, min(offset, len(body)))
    tail = body[offset:]
    breaks = tail.count("\n")
    if breaks == 0:
        char = rng.end.character - 1 - _utf16(tail)
        return Range.point(rng.end.line, max(char, 0))
    line = rng.end.line - breaks
    before = body.rfind("\n", 0, offset)
    if before != -1:
        return Range.point(line, _utf16(body[before + 1:offset]))
    prefix = f"#{attr.dialect}.{attr.mnemonic}<"
    return Range.point(line, rng.start.character + _utf16(prefix) + _utf16(body[:offset]))


def _utf16(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


# ---------------------------------------------------------------------------
# Where MLIR shows a diagnostic
# ---------------------------------------------------------------------------


def file_loc_position(loc: FileLoc, line_span: tuple[int, int | None]) -> Position | None:
    """Document position of a ``FileLineColLoc`` read as a position in the chunk.

    ``cuda-tile-opt --split-input-file`` gives each chunk its own buffer, so
    ``"f":L:C`` prints at line L of the chunk; the oracle counts it from the
    chunk's first line.  ``line_span`` is (first line, last line or None),
    0-based in the document.  ``None`` when the line is outside the chunk.
    """
    first, last = line_span
    if loc.line < 1:
        return None
    line = first + loc.line - 1
    if last is not None and line > last:
        return None
    return Position(line, max((loc.column or 1) - 1, 0))


def shown_range(loc: Loc | None, line_span: tuple[int, int | None] | None) -> Range | None:
    """Where MLIR shows a diagnostic located at ``loc`` (its first ``FileLineColLoc``), or ``None``."""
    if line_span is None:
        return None
    f = find_file_loc(loc)
    if f is None:
        return None
    pos = file_loc_position(f, line_span)
    return Range(pos, pos) if pos is not None else None
