"""Loading the Lark parser: ``mlir.lark`` plus the rules generated from the op table.

The parser is LALR(1) with Lark's contextual lexer and position propagation.
Lark's grammar cache is on: the compiled tables are stored in the user's
cache directory (``$XDG_CACHE_HOME/tile-lsp`` or ``~/.cache/tile-lsp``, else
the system temporary directory), keyed by a hash of the grammar text, so a
change of the op table rebuilds them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import threading
from importlib import resources
from pathlib import Path

from lark import Lark
from lark.grammar import Rule
from lark.lark import PostLex
from lark.parsers.lalr_analysis import IntParseTable, Reduce, Shift

from tile_lsp.grammar.formats import FMT_ATTR_RULES, GrammarBuilder


@functools.lru_cache(maxsize=None)
def grammar_text() -> tuple[str, dict[str, str]]:
    """The full grammar text and the map op name -> op rule name.

    Raises ``ValueError`` when an op's format cannot be turned into rules.
    """
    from tile_lsp.dialect.registry import all_ops

    base = resources.files("tile_lsp.grammar").joinpath("mlir.lark").read_text(encoding="utf-8")
    builder = GrammarBuilder(list(all_ops()))
    generated = builder.build()
    if builder.errors:
        raise ValueError("op formats: " + "; ".join(builder.errors))
    return base + "\n" + FMT_ATTR_RULES + "\n" + generated + "\n", dict(builder.op_rule)


def _cache_path(text: str) -> str | None:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    for base in (Path(root) / "tile-lsp", Path(tempfile.gettempdir()) / "tile-lsp-cache"):
        try:
            base.mkdir(parents=True, exist_ok=True)
            probe = base / ".probe"
            probe.write_text("")
            return str(base / f"grammar-{digest}.lark.cache")
        except OSError:
            continue
    return None


class _KeywordsAsIdentifiers(PostLex):
    """Keeps the identifier terminals in every state of the contextual lexer.

    With ``BARE_ID`` and ``BANG_ID`` always in a state's lexer, Lark folds the
    keywords they match (op names, ``!cuda_tile.tile``...) into one regex and
    a dictionary look-up instead of an alternation of hundreds of literals,
    which makes lexing several times faster.  Tokens pass through unchanged.
    """

    always_accept = ("BARE_ID", "BANG_ID")

    def process(self, stream):
        return stream


def _deserialize_sharing_actions(cls, data, memo):
    """``IntParseTable.deserialize`` sharing one ``(action, argument)`` tuple per distinct action.

    Lark's own builds a tuple (and looks the rule up) for each of the
    ~440,000 entries of this grammar's table; sharing them halves the time
    to load the cached parser and saves tens of MB of memory.
    """
    tokens = data["tokens"]
    shared: dict = {}

    def action(kind, arg):
        if kind == 1:  # reduce: the rule is memoized (``{"@": n}``)
            key = arg.get("@") if isinstance(arg, dict) else None
            if key is None:
                return (Reduce, Rule.deserialize(arg, memo))
            got = shared.get(("r", key))
            if got is None:
                got = shared[("r", key)] = (Reduce, memo[key])
            return got
        got = shared.get(arg)
        if got is None:
            got = shared[arg] = (Shift, arg)
        return got

    states = {state: {tokens[t]: action(kind, arg) for t, (kind, arg) in actions.items()}
              for state, actions in data["states"].items()}
    return cls(states, data["start_states"], data["end_states"])


_PARSER_LOCK = threading.Lock()


@functools.cache
def _load_parser() -> Lark:
    text, _ = grammar_text()
    cache = _cache_path(text)
    original = IntParseTable.__dict__.get("deserialize")  # Lark defines it on the base class
    IntParseTable.deserialize = classmethod(_deserialize_sharing_actions)
    try:
        return Lark(
            text,
            parser="lalr",
            lexer="contextual",
            propagate_positions=True,
            maybe_placeholders=True,
            cache=cache if cache else False,
            start="start",
            postlex=_KeywordsAsIdentifiers(),
        )
    finally:
        if original is None:
            del IntParseTable.deserialize
        else:
            IntParseTable.deserialize = original


def get_parser() -> Lark:
    """The process-wide LALR parser of Tile IR text (built once, cached on disk).

    Thread-safe: concurrent first calls (the server's warm-up and its first
    analysis) load it once.
    """
    with _PARSER_LOCK:
        return _load_parser()
