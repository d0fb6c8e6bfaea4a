"""The LALR parser in a compact form that loads in milliseconds.

Lark's own cache pickles the whole parse table: this grammar's has 4,877
states and about 442,000 actions, and unpickling them (then rebuilding an
``(action, argument)`` tuple for each, and a lexer for each state) took
about a second.  Here the table is stored with :mod:`marshal` as a few
strings and byte arrays (about 1.3 MB, read in a few ms):

* ``names``: each distinct sequence of look-ahead names of a state, joined
  by spaces (629 distinct ones); ``state_names``: which one each state has;
* ``codes``: every state's actions, one unsigned integer per name, and
  ``offsets``: where each state's start: ``c < len(states)`` shifts to (or,
  after a rule name, goes to) state ``c``, ``len(states) + r`` reduces by
  rule ``r``;
* the rules, terminals and start states as tuples of plain values, and for
  each regular-expression terminal the keywords it matches whole.

:func:`decode` builds Lark's parser objects around that data without Lark
rebuilding anything; what the parser needs is made on first use and kept:
a state's action dictionary (:class:`LazyStates`), a rule
(:class:`LazyRules`), its tree-building callback (:class:`LazyCallbacks`),
the contextual lexer of a state (:class:`LazyContextualLexer`) and its
scanner's regular expression (:class:`_DeferredScanner`).  The objects are
Lark's own (``Lark``, ``ParsingFrontend``, ``LALR_Parser``, ``Rule``,
``TerminalDef``, ``BasicLexer``), so the parser, its interactive parser and
its errors behave as those of a parser built by ``Lark(...)``;
``tests/test_parser_table.py`` compares every state, every lexer and the
parses of the corpus with one.

This module depends on Lark internals (the constructors of those classes,
``ParseTreeBuilder``, ``Scanner``, what ``BasicLexer`` and
``_create_unless`` compute); ``pyproject.toml`` pins the Lark version it was
written against and :func:`check_lark_version` refuses another.
"""

from __future__ import annotations

import marshal
import re
import sys
import threading
import zlib
from array import array
from collections.abc import Mapping, Sequence
from copy import copy
from typing import Any, Iterator

import lark
from lark import Lark, Tree
from lark.common import LexerConf, ParserConf
from lark.exceptions import UnexpectedCharacters, UnexpectedToken
from lark.grammar import NonTerminal, Rule, RuleOptions, Terminal
from lark.lark import LarkOptions, PostLex
from lark.lexer import (BasicLexer, CallChain, Lexer, LexerState, PatternRE, PatternStr, Scanner, TerminalDef,
                        UnlessCallback, _regexp_has_newline)
from lark.parse_tree_builder import ParseTreeBuilder
from lark.parser_frontends import ParsingFrontend
from lark.parsers.lalr_analysis import ParseTableBase, Reduce, Shift
from lark.parsers.lalr_parser import LALR_Parser, _Parser

#: The Lark version these internals were read from (``pyproject.toml`` pins it).
LARK_VERSION = "1.3.1"

#: Version of the stored layout; bump it when :func:`encode` changes.
FORMAT = 2

_MAGIC = b"tile-lsp-lalr\n"


class CorruptTable(ValueError):
    """A stored table that cannot be decoded: truncated, altered, or of another format or Lark."""


def check_lark_version() -> None:
    """Raise ``RuntimeError`` unless the installed Lark is :data:`LARK_VERSION`."""
    if lark.__version__ != LARK_VERSION:
        raise RuntimeError(f"tile_lsp.grammar.table was written against lark {LARK_VERSION}, "
                           f"lark {lark.__version__} is installed; re-check its use of Lark internals")


# --- encoding --------------------------------------------------------------


def encode(parser: Lark, key: str) -> bytes:
    """The stored form of ``parser`` (an LALR ``Lark``), labelled with ``key`` (see :func:`key_of`).

    Returns the bytes :func:`decode` reads: a header, a CRC-32 and the
    :mod:`marshal` data.  Raises ``ValueError`` when the parser is not one
    this module can store (another parser type, a table whose states are
    not ``0..n-1``).
    """
    if parser.options.parser != "lalr":
        raise ValueError("only LALR parsers can be stored")
    table = parser.parser.parser._parse_table
    rules = list(parser.rules)
    rule_index = {id(r): i for i, r in enumerate(rules)}
    n_states = len(table.states)
    if sorted(table.states) != list(range(n_states)):
        raise ValueError("the parse table's states are not numbered 0..n-1")

    symbols: list[tuple] = []
    symbol_index: dict[tuple, int] = {}

    def symbol(s) -> int:
        ident = (str(s.name), s.is_term, bool(getattr(s, "filter_out", False)))
        if ident not in symbol_index:
            symbol_index[ident] = len(symbols)
            symbols.append(ident)
        return symbol_index[ident]

    def rule_entry(r: Rule) -> tuple:
        o = r.options
        return (symbol(r.origin), tuple(symbol(s) for s in r.expansion), r.order, _str(r.alias),
                bool(o.keep_all_tokens), bool(o.expand1), o.priority, _str(o.template_source),
                tuple(bool(e) for e in o.empty_indices))

    # rules reduced by the table but not in the grammar's list (none expected; kept for fidelity)
    by_value = {r: i for i, r in enumerate(rules)}
    extra: list[Rule] = []
    for actions in table.states.values():
        for action, arg in actions.values():
            if action is Reduce and id(arg) not in rule_index:
                if arg in by_value:
                    rule_index[id(arg)] = by_value[arg]
                else:
                    rule_index[id(arg)] = len(rules) + len(extra)
                    extra.append(arg)

    names: dict[tuple, int] = {}
    n_codes = n_states + len(rules) + len(extra)
    typecode = "H" if n_codes < 1 << 16 else "I"
    state_names = array("I")
    offsets = array("I", [0])
    codes = array(typecode)
    for state in range(n_states):
        actions = table.states[state]
        row_names = tuple(map(str, actions))
        if any(" " in n or not n for n in row_names):
            raise ValueError(f"an empty name or a name with a space in state {state}")
        state_names.append(names.setdefault(row_names, len(names)))
        codes.extend(arg if action is Shift else n_states + rule_index[id(arg)] for action, arg in actions.values())
        offsets.append(len(codes))

    terminals = []
    for t in parser.terminals:
        p = t.pattern
        width = (p.min_width, p.max_width) if isinstance(p, PatternRE) else None
        terminals.append((str(t.name), "re" if isinstance(p, PatternRE) else "str", str(p.value),
                          tuple(sorted(map(str, p.flags))), _str(p.raw), t.priority, width))

    data = {
        "format": FORMAT,
        "lark": lark.__version__,
        "key": key,
        "terminals": terminals,
        "ignore": tuple(map(str, parser.lexer_conf.ignore)),
        "g_regex_flags": parser.lexer_conf.g_regex_flags,
        "symbols": symbols,
        "rules": [rule_entry(r) for r in rules],
        "extra_rules": [rule_entry(r) for r in extra],
        "start": [str(s) for s in parser.options.start],
        "names": [" ".join(n) for n in sorted(names, key=names.__getitem__)],
        "typecode": typecode,
        "state_names": _little_endian(state_names),
        "offsets": _little_endian(offsets),
        "codes": _little_endian(codes),
        "start_states": {str(k): v for k, v in table.start_states.items()},
        "end_states": {str(k): v for k, v in table.end_states.items()},
        "literal_matches": _literal_matches(parser.terminals, parser.lexer_conf.g_regex_flags),
        "terminal_order": [str(t.name) for t in _lexer_order(parser.terminals)],
        "newline_terminals": sorted(str(t.name) for t in parser.terminals
                                    if _regexp_has_newline(t.pattern.to_regexp())),
    }
    body = marshal.dumps(data)
    return _MAGIC + zlib.crc32(body).to_bytes(4, "little") + body


def _little_endian(values: array) -> bytes:
    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _from_little_endian(typecode: str, data: bytes) -> array:
    values = array(typecode)
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return values


def _str(value):
    """``value`` as a plain ``str`` (Lark's names are often ``Token``, which :mod:`marshal` refuses), or ``None``."""
    return None if value is None else str(value)


def _lexer_order(terminals) -> list[TerminalDef]:
    """``terminals`` in the order of Lark's ``BasicLexer`` (priority, then the longest first, then by name)."""
    return sorted(terminals, key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))


def _literal_matches(terminals, g_regex_flags: int) -> dict[str, tuple[str, ...]]:
    """For each regular-expression terminal, the literal terminals of the same priority it matches whole.

    What Lark's ``_create_unless`` computes for every lexer of the contextual
    lexer (a ``re.match`` per pair); computed once for the whole grammar.
    """
    out = {}
    literals = [t for t in terminals if isinstance(t.pattern, PatternStr)]
    for t in terminals:
        if not isinstance(t.pattern, PatternRE):
            continue
        regexp = t.pattern.to_regexp()
        hits = []
        for s in literals:
            if s.priority != t.priority:
                continue
            m = re.match(regexp, s.pattern.value, g_regex_flags)
            if m and m.group(0) == s.pattern.value:
                hits.append(str(s.name))
        if hits:
            out[str(t.name)] = tuple(hits)
    return out


# --- decoding --------------------------------------------------------------


def decode(blob: bytes, options: dict[str, Any], postlex: PostLex | None = None, key: str | None = None) -> Lark:
    """A ``Lark`` parser from ``blob`` (made by :func:`encode`).

    ``options`` are the ``Lark(...)`` options the table was built with
    (``propagate_positions``, ``maybe_placeholders``...; ``parser`` must be
    ``"lalr"``, ``lexer`` is replaced by :class:`LazyContextualLexer`);
    ``postlex`` is the post-lexer the parser was built with.  Raises
    :class:`CorruptTable` when ``blob`` is not an intact table of this
    format and Lark version, or (``key`` given) was labelled with another key.
    """
    data = _read(blob)
    if key is not None and data.get("key") != key:
        raise CorruptTable(f"a table of {data.get('key')!r}, not {key!r}")
    try:
        return _assemble(data, options, postlex)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise CorruptTable(f"inconsistent table: {exc!r}") from exc


def key_of(blob: bytes) -> str:
    """The key ``blob`` was labelled with by :func:`encode`; raises :class:`CorruptTable` as :func:`decode` does."""
    return _read(blob)["key"]


def _read(blob: bytes) -> dict:
    if not blob.startswith(_MAGIC) or len(blob) < len(_MAGIC) + 4:
        raise CorruptTable("not a tile-lsp parse table")
    crc = int.from_bytes(blob[len(_MAGIC):len(_MAGIC) + 4], "little")
    body = memoryview(blob)[len(_MAGIC) + 4:]
    if zlib.crc32(body) != crc:
        raise CorruptTable("checksum mismatch (truncated or altered)")
    try:
        data = marshal.loads(body)
    except (EOFError, ValueError, TypeError) as exc:
        raise CorruptTable(f"unreadable: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("lark") != lark.__version__:
        raise CorruptTable("another format or Lark version")
    return data


def _assemble(data: dict, options: dict[str, Any], postlex: PostLex | None) -> Lark:
    terminals = []
    for name, kind, value, flags, raw, priority, width in data["terminals"]:
        if kind == "re":
            pattern = PatternRE(value, flags, raw)
            if width is not None:
                pattern._width = tuple(width)  # what Lark computes with sre_parse on first use
        else:
            pattern = PatternStr(value, flags, raw)
        terminals.append(TerminalDef(name, pattern, priority))

    opts = dict(options)
    if opts.get("parser") != "lalr":
        raise ValueError("only LALR parsers can be loaded")
    opts.update(lexer=LazyContextualLexer, postlex=postlex, cache=False)
    lark_options = LarkOptions(opts)

    lexer_conf = LexerConf(terminals, re, data["ignore"], postlex, {}, data["g_regex_flags"],
                           skip_validation=True, use_bytes=False, strict=False)
    lexer_conf.lexer_type = LazyContextualLexer
    lexer_conf.literal_matches = data["literal_matches"]
    lexer_conf.terminal_order = {name: i for i, name in enumerate(data["terminal_order"])}
    lexer_conf.newline_terminals = frozenset(data["newline_terminals"])
    if lexer_conf.terminal_order.keys() != lexer_conf.terminals_by_name.keys():
        raise ValueError("the lexer order does not list the terminals")

    rules = LazyRules(data["symbols"], data["rules"] + data["extra_rules"])
    grammar_rules = rules.head(len(data["rules"]))
    callbacks = LazyCallbacks(grammar_rules, lark_options.tree_class or Tree, lark_options.propagate_positions,
                              lark_options.maybe_placeholders)
    parser_conf = ParserConf(grammar_rules, callbacks, list(data["start"]))
    parser_conf.parser_type = "lalr"

    states = LazyStates(data["names"], _from_little_endian("I", data["state_names"]),
                        _from_little_endian("I", data["offsets"]),
                        _from_little_endian(data["typecode"], data["codes"]), rules)
    table = ParseTableBase(states, dict(data["start_states"]), dict(data["end_states"]))
    for start in parser_conf.start:
        if not (table.start_states[start] in states and table.end_states[start] in states):
            raise ValueError(f"start state of {start!r} out of range")
    lalr_parser = LALR_Parser.__new__(LALR_Parser)
    lalr_parser._parse_table = table
    lalr_parser.parser = _Parser(table, callbacks, lark_options.debug)
    lalr_parser.parser_conf = parser_conf

    out = Lark.__new__(Lark)
    out.options = lark_options
    out.source_path = "<tile-lsp parse table>"
    out.source_grammar = None
    out.rules = grammar_rules
    out.terminals = terminals
    out.ignore_tokens = tuple(data["ignore"])
    out.lexer_conf = lexer_conf
    out._terminals_dict = {t.name: t for t in terminals}
    out._callbacks = callbacks
    out.parser = ParsingFrontend(lexer_conf, parser_conf, lark_options, parser=lalr_parser)
    return out


class LazyRules(Sequence):
    """The grammar's rules (Lark ``Rule`` objects), each made on first access and kept.

    A read-only sequence: ``[i]``, ``len``, iteration (which makes them
    all).  ``head(n)`` is the sequence of the first ``n`` rules, sharing
    the same objects.  Raises ``IndexError`` out of range.
    """

    def __init__(self, symbols: list[tuple], entries: list[tuple], _shared=None):
        self._symbols = symbols
        self._entries = entries
        self._made: list = _shared if _shared is not None else [None] * len(entries)
        self._index: dict[int, int] = {}  # id(rule) -> index, for the rules made
        self._symbol_objects: dict[int, Any] = {}
        self._lock = threading.Lock()

    def head(self, n: int) -> LazyRules:
        """The first ``n`` rules, the same objects as this sequence's."""
        out = LazyRules(self._symbols, self._entries[:n], self._made)
        out._index, out._symbol_objects, out._lock = self._index, self._symbol_objects, self._lock
        return out

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self._entries):
            raise IndexError(i)
        made = self._made[i]
        if made is None:
            with self._lock:
                made = self._made[i]
                if made is None:
                    made = self._make(self._entries[i])
                    self._index[id(made)] = i
                    self._made[i] = made
        return made

    def owns(self, rule: object) -> bool:
        """Whether ``rule`` is one of this sequence's rules (the object itself, already made)."""
        i = self._index.get(id(rule))
        return i is not None and i < len(self._entries) and self._made[i] is rule

    def _symbol(self, i: int):
        made = self._symbol_objects.get(i)
        if made is None:
            name, is_term, filter_out = self._symbols[i]
            made = self._symbol_objects[i] = Terminal(name, filter_out) if is_term else NonTerminal(name)
        return made

    def _make(self, entry: tuple) -> Rule:
        origin, expansion, order, alias, keep_all, expand1, priority, template, empty = entry
        return Rule(self._symbol(origin), [self._symbol(i) for i in expansion], order, alias,
                    RuleOptions(keep_all, expand1, priority, template, empty))


class LazyStates(Mapping):
    """The states of the parse table, ``{state: {name: (Shift, state) | (Reduce, rule)}}``.

    A state's action dictionary is decoded on first access and kept (the
    same dictionary object afterwards).  A read-only ``Mapping`` over every
    state: ``[]``, ``get``, ``in``, ``len``, iteration, ``keys``,
    ``values`` and ``items`` see all of them (the last two decode them).
    Raises ``KeyError`` for a state that does not exist.
    """

    def __init__(self, names: list[str], state_names: array, offsets: array, codes: array, rules: LazyRules):
        if len(offsets) != len(state_names) + 1 or offsets[-1] != len(codes):
            raise ValueError("state offsets do not match the actions")
        self._names = names
        self._split: dict[int, tuple[str, ...]] = {}
        self._state_names = state_names
        self._offsets = offsets
        self._codes = codes
        self._rules = rules
        self._n = len(state_names)
        # code -> action, each made when a state first needs it
        self._actions: list = [None] * (self._n + len(rules))
        self._decoded: dict[int, dict[str, tuple]] = {}

    def __getitem__(self, state: int) -> dict[str, tuple]:
        try:
            return self._decoded[state]
        except KeyError:
            return self._decode(state)

    def _decode(self, state: int) -> dict[str, tuple]:
        if not isinstance(state, int) or not 0 <= state < self._n:
            raise KeyError(state)
        names_index = self._state_names[state]
        names = self._split.get(names_index)
        if names is None:
            joined = self._names[names_index]
            names = self._split[names_index] = tuple(joined.split(" ")) if joined else ()
        codes = self._codes[self._offsets[state]:self._offsets[state + 1]]
        if len(codes) != len(names):
            # not a KeyError, which Lark's parser would take for an unexpected token
            raise RuntimeError(f"parse table state {state}: {len(codes)} actions for {len(names)} names")
        table = self._actions
        for code in set(codes):  # a row's distinct actions are few; its names are often hundreds
            if table[code] is None:
                table[code] = (Shift, code) if code < self._n else (Reduce, self._rules[code - self._n])
        row = dict(zip(names, map(table.__getitem__, codes)))
        # concurrent first accesses build equal rows; keep the first so a state has one dictionary
        return self._decoded.setdefault(state, row)

    def __contains__(self, state: object) -> bool:
        return isinstance(state, int) and 0 <= state < self._n

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._n))

    def __len__(self) -> int:
        return self._n

    def decoded_count(self) -> int:
        """How many states have been decoded so far (for benchmarks and tests)."""
        return len(self._decoded)


class LazyCallbacks(dict):
    """Lark's ``{rule: tree-building callback}``, each callback made on the rule's first reduction.

    Lark's ``ParseTreeBuilder`` makes all 1,838 (a few tens of ms); here
    ``callbacks[rule]`` makes the missing one with the same code, a
    ``ParseTreeBuilder`` of that rule alone.  Only the given rules are
    known: another key raises ``KeyError`` (as Lark's dictionary does).
    The first rule's callback is made at once: Lark's parser skips the
    callbacks when the dictionary is empty.
    """

    def __init__(self, rules: LazyRules, tree_class, propagate_positions, maybe_placeholders: bool):
        super().__init__()
        self._rules = rules
        self._args = (tree_class, propagate_positions, False, maybe_placeholders)
        if len(rules):
            self[rules[0]]

    def __missing__(self, rule):
        if not isinstance(rule, Rule) or not self._rules.owns(rule):
            raise KeyError(rule)
        made = ParseTreeBuilder([rule], *self._args).create_callback(None)[rule]
        return self.setdefault(rule, made)


class _LiteralUnless:
    """Lark's ``UnlessCallback`` for literal keywords: a dictionary look-up instead of a regex.

    A token matched by a regular expression (``BARE_ID``) whose text is one
    of the keywords takes the keyword's type, as Lark's callback does with
    a ``fullmatch`` of the alternation of the keywords (for literals without
    flags, that is equality).
    """

    __slots__ = ("types",)

    def __init__(self, literals: list[TerminalDef]):
        self.types = {t.pattern.value: t.name for t in reversed(literals)}  # the first wins, as in the regex

    def __call__(self, t):
        found = self.types.get(t.value)
        if found is not None:
            t.type = found
        return t


class _DeferredScanner(Scanner):
    """Lark's ``Scanner``, which compiles the alternation of its terminals only once it has been used.

    Lark compiles one regular expression per distinct set of terminals, about
    a millisecond each, and a small kernel's first parse meets dozens.  Until
    it has matched :attr:`COMPILE_AFTER` tokens, this scanner tries the
    terminals one after the other, in Lark's order, each terminal's own
    expression compiled once for all the scanners (``shared``): the first
    that matches wins, which is what the alternation ``(?P<A>...)|(?P<B>...)``
    matches.  After that it compiles the alternation (at most as long again
    as the one-by-one matching took, and faster for the long files).
    """

    COMPILE_AFTER = 1000

    def __init__(self, terminals, g_regex_flags, re_, use_bytes, shared: dict):
        self.terminals = terminals
        self.g_regex_flags = g_regex_flags
        self.re_ = re_
        self.use_bytes = use_bytes
        self.allowed_types = {t.name for t in self.terminals}
        self._mres = None
        self._regexps = shared
        self._sequence = None
        self._uses = 0

    def _compile(self):
        if self._mres is None:
            self._mres = self._build_mres(self.terminals, len(self.terminals))
        return self._mres

    def match(self, text, pos):
        """``(token text, terminal name)`` of the terminal matching ``text`` at ``pos``, or ``None``."""
        if self._mres is not None or self._uses >= self.COMPILE_AFTER or self.use_bytes:
            self._compile()
            return Scanner.match(self, text, pos)
        self._uses += 1
        sequence = self._sequence
        if sequence is None:
            regexps = self._regexps
            sequence = []
            for t in self.terminals:
                rx = regexps.get(t.name)
                if rx is None:
                    rx = regexps.setdefault(t.name, self.re_.compile(t.pattern.to_regexp(), self.g_regex_flags))
                sequence.append((rx.match, t.name))
            self._sequence = sequence
        source, end = text.text, text.end
        for match, name in sequence:
            m = match(source, pos, end)
            if m:
                return m.group(0), name
        return None

    def fullmatch(self, text: str):
        """Lark's ``Scanner.fullmatch`` (with the compiled alternation)."""
        self._compile()
        return Scanner.fullmatch(self, text)


class _SharingBasicLexer(BasicLexer):
    """Lark's ``BasicLexer`` whose scanner is built from the grammar's precomputed keyword matches
    and shared with the other lexers of the same terminals.

    Builds what Lark's ``_build_scanner`` builds (the same terminals in the
    same order, the same keyword callbacks) without a ``re.match`` per
    pair of terminals, and compiles each distinct alternation once.
    """

    def __init__(self, conf: LexerConf, shared: dict, order: dict[str, int] | None = None,
                 newline: frozenset[str] | None = None):
        if order is None or newline is None or not conf.skip_validation:
            super().__init__(conf)
        else:
            # what BasicLexer.__init__ sets for validated terminals, with the sort key and the
            # newline test of every terminal computed once for the grammar (``order``, ``newline``)
            self.re = conf.re_module
            self.newline_types = frozenset(t.name for t in conf.terminals if t.name in newline)
            self.ignore_types = frozenset(conf.ignore)
            self.terminals = sorted(conf.terminals, key=lambda t: order[t.name])
            self.user_callbacks = conf.callbacks
            self.g_regex_flags = conf.g_regex_flags
            self.use_bytes = conf.use_bytes
            self.terminals_by_name = conf.terminals_by_name
            self._scanner = None
        self._shared = shared
        self._matches = getattr(conf, "literal_matches", None)
        self._order = order

    def _build_scanner(self):
        if self._matches is None:
            return super()._build_scanner()
        terminals, self.callback = self._create_unless()
        for type_, f in self.user_callbacks.items():  # as Lark does (the loader gives none)
            if type_ in self.callback:
                self.callback[type_] = CallChain(self.callback[type_], f, lambda t, type_=type_: t.type == type_)
            else:
                self.callback[type_] = f
        key = ("scanner", tuple(t.name for t in terminals))
        scanner = self._shared.get(key)
        if scanner is None:
            made = _DeferredScanner(terminals, self.g_regex_flags, self.re, self.use_bytes,
                                    self._shared.setdefault("terminal regexps", {}))
            scanner = self._shared.setdefault(key, made)
        return scanner

    def _create_unless(self):
        """Lark's ``_create_unless`` over :attr:`terminals`, from the precomputed matches."""
        present = {t.name: t for t in self.terminals}
        embedded = set()
        callback = {}
        order = self._order or {t.name: i for i, t in enumerate(self.terminals)}
        for retok in self.terminals:
            matched = self._matches.get(retok.name)  # only regular expressions have matches, literals only
            if not matched:
                continue
            unless = [present[n] for n in matched if n in present]
            if not unless:
                continue
            unless.sort(key=lambda t: order[t.name])
            for s in unless:
                if s.pattern.flags <= retok.pattern.flags:
                    embedded.add(s.name)
            key = ("unless", retok.name, tuple(t.name for t in unless))
            made = self._shared.get(key)
            if made is None:
                if self.g_regex_flags or any(s.pattern.flags for s in unless):
                    made = UnlessCallback(Scanner(unless, self.g_regex_flags, self.re, self.use_bytes))
                else:
                    made = _LiteralUnless(unless)
                made = self._shared.setdefault(key, made)
            callback[retok.name] = made
        return [t for t in self.terminals if t.name not in embedded], callback


class LazyContextualLexer(Lexer):
    """Lark's contextual lexer, each state's lexer made when the parser first lexes in that state.

    Lark's ``ContextualLexer`` makes a lexer for each of the 4,877 states
    when the parser is built (351 distinct ones); this one looks the
    state's names up in the parser's own table (``parser_state``) on first
    need, shares lexers between states that accept the same names, and adds
    the post-lexer's ``always_accept`` terminals as Lark does.  Tokens and
    errors are Lark's (``UnexpectedCharacters``, or ``UnexpectedToken`` for
    a terminal the grammar has but the state does not accept).
    """

    __future_interface__ = 2

    def __init__(self, conf: LexerConf):
        self.conf = conf
        self.always_accept = tuple(conf.postlex.always_accept) if conf.postlex else ()
        self._shared: dict = {}
        self._by_state: dict[int, BasicLexer] = {}
        self._by_names: dict[frozenset, BasicLexer] = {}
        # BasicLexer's order of terminals and its newline test, once for all the lexers (stored in the table)
        self._order = getattr(conf, "terminal_order", None)
        if self._order is None:
            self._order = {t.name: i for i, t in enumerate(_lexer_order(conf.terminals))}
        self._newline = getattr(conf, "newline_terminals", None)
        if self._newline is None:
            self._newline = frozenset(t.name for t in conf.terminals if _regexp_has_newline(t.pattern.to_regexp()))
        self.root_lexer = _SharingBasicLexer(conf, self._shared, self._order, self._newline)

    def lexer_for(self, states: Mapping, state: int) -> BasicLexer:
        """The lexer of parser state ``state`` of table ``states`` (made and kept on first call)."""
        names = frozenset(states[state])
        lexer = self._by_names.get(names)
        if lexer is None:
            conf = self.conf
            by_name = conf.terminals_by_name
            accepts = set(names) | set(conf.ignore) | set(self.always_accept)
            lexer_conf = copy(conf)
            lexer_conf.terminals = [by_name[n] for n in accepts if n in by_name]
            lexer = self._by_names.setdefault(
                names, _SharingBasicLexer(lexer_conf, self._shared, self._order, self._newline))
        self._by_state[state] = lexer
        return lexer

    def lex(self, lexer_state: LexerState, parser_state) -> Iterator:
        """Tokens of ``lexer_state`` for the parser in ``parser_state`` (Lark's ``ContextualLexer.lex``)."""
        by_state = self._by_state
        try:
            while True:
                state = parser_state.position
                lexer = by_state.get(state) or self.lexer_for(parser_state.parse_conf.states, state)
                yield lexer.next_token(lexer_state, parser_state)
        except EOFError:
            pass
        except UnexpectedCharacters as e:
            # as Lark: a terminal of the grammar that this state does not accept is an unexpected token
            try:
                last_token = lexer_state.last_token
                token = self.root_lexer.next_token(lexer_state, parser_state)
                raise UnexpectedToken(token, e.allowed, state=parser_state, token_history=[last_token],
                                      terminals_by_name=self.root_lexer.terminals_by_name)
            except UnexpectedCharacters:
                raise e
