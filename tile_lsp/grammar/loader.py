"""Loading the Lark parser: ``mlir.lark`` plus the rules generated from the op table.

The parser is LALR(1) with a contextual lexer and position propagation.
Building its table takes Lark about 15 s, so the table is stored, in the
compact form of :mod:`tile_lsp.grammar.table`, in the user's cache directory
(``$XDG_CACHE_HOME/tile-lsp`` or ``~/.cache/tile-lsp``, else the system
temporary directory):

* ``parser-<key>.table``: the table, ``<key>`` a hash of the grammar text,
  the Lark options, the Lark and Python versions and the table format, so a
  change of the op table builds a new one;
* ``sources-<key>``: the table key for a hash of the sources the grammar is
  generated from (every ``.py`` and ``.lark`` file of ``tile_lsp/grammar``
  and ``tile_lsp/dialect``).  A warm start reads it instead of generating
  the grammar text (which imports the op table and takes tens of ms); an
  edited source whose grammar is unchanged costs that generation once, not
  a rebuild.

Files are written to a temporary name and renamed, so concurrent processes
see a whole table or none; a table that does not decode (truncated,
altered, another format) is built again and replaced.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
import threading
from pathlib import Path

from lark import Lark
from lark.lark import PostLex

from tile_lsp.grammar import table as _table

#: The ``Lark(...)`` options of the parser (the post-lexer aside).
OPTIONS = {
    "parser": "lalr",
    "lexer": "contextual",
    "propagate_positions": True,
    "maybe_placeholders": True,
    "start": "start",
}

_PACKAGE = Path(__file__).resolve().parent.parent
#: Where the grammar comes from: its key covers every source file of these folders, not their
#: subfolders (the op table; the custom directives' grammar in ``analysis/ir/directives.py``, the
#: modules it imports and the ``analysis`` package's ``__init__``, which importing it runs).
SOURCE_DIRS = (_PACKAGE / "grammar", _PACKAGE / "dialect", _PACKAGE / "analysis", _PACKAGE / "analysis" / "ir")


@functools.lru_cache(maxsize=None)
def grammar_text() -> tuple[str, dict[str, str]]:
    """The full grammar text and the map op name -> op rule name.

    Raises ``ValueError`` when an op's format cannot be turned into rules.
    """
    from importlib import resources  # here: a warm start does not generate the grammar

    from tile_lsp.dialect.registry import all_ops
    from tile_lsp.grammar.formats import FMT_ATTR_RULES, GrammarBuilder

    base = resources.files("tile_lsp.grammar").joinpath("mlir.lark").read_text(encoding="utf-8")
    builder = GrammarBuilder(list(all_ops()))
    generated = builder.build()
    if builder.errors:
        raise ValueError("op formats: " + "; ".join(builder.errors))
    return base + "\n" + FMT_ATTR_RULES + "\n" + generated + "\n", dict(builder.op_rule)


class _KeywordsAsIdentifiers(PostLex):
    """Keeps the identifier terminals in every state of the contextual lexer.

    With ``BARE_ID`` and ``BANG_ID`` always in a state's lexer, Lark folds the
    keywords they match (op names, ``!cuda_tile.tile``...) into the
    identifier's match and a dictionary look-up instead of an alternation of
    hundreds of literals, which makes lexing several times faster.  Tokens
    pass through unchanged.
    """

    always_accept = ("BARE_ID", "BANG_ID")

    def process(self, stream):
        return stream


def _environment() -> str:
    """What a table depends on besides the grammar text."""
    import lark

    return (f"format={_table.FORMAT} lark={lark.__version__} python={sys.version_info[:2]} "
            f"options={sorted(OPTIONS.items())} always_accept={_KeywordsAsIdentifiers.always_accept}")


def table_key(text: str) -> str:
    """The key of the table of grammar ``text`` (16 hex digits)."""
    return hashlib.sha256((_environment() + "\n" + text).encode()).hexdigest()[:16]


def source_key(dirs=SOURCE_DIRS) -> str | None:
    """The key of the sources the grammar is generated from (16 hex digits).

    Hashes the names and contents of the ``.py`` and ``.lark`` files of
    ``dirs`` (not their subdirectories); ``None`` when one cannot be read
    (then the grammar text is generated to find the table).
    """
    digest = hashlib.sha256(_environment().encode())
    try:
        for directory in dirs:
            names = sorted(n for n in os.listdir(directory) if n.endswith((".py", ".lark")))
            for name in names:
                data = Path(directory, name).read_bytes()
                digest.update(f"\n{Path(directory).name}/{name} {len(data)}\n".encode())
                digest.update(data)
    except OSError:
        return None
    return digest.hexdigest()[:16]


def cache_dir() -> Path | None:
    """The directory of the stored tables, created if needed; ``None`` when none is writable."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for base in (Path(root) / "tile-lsp", Path(tempfile.gettempdir()) / "tile-lsp-cache"):
        if os.access(base, os.W_OK | os.X_OK) and base.is_dir():
            return base
        try:
            base.mkdir(parents=True, exist_ok=True)
            probe = base / ".probe"
            probe.write_text("")
            return base
        except OSError:
            continue
    return None


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename; errors are ignored (no cache)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _decode(blob: bytes | None, key: str) -> Lark | None:
    """The parser of ``blob`` when it is an intact table of ``key``, else ``None``."""
    if blob is None:
        return None
    try:
        return _table.decode(blob, OPTIONS, _KeywordsAsIdentifiers(), key)
    except _table.CorruptTable:
        return None


def build_lark(text: str) -> Lark:
    """A parser of grammar ``text`` built by Lark from scratch (no cache; about 15 s)."""
    return Lark(text, cache=False, postlex=_KeywordsAsIdentifiers(), **OPTIONS)


def load_parser(directory: Path | None) -> Lark:
    """The parser, from the tables stored in ``directory`` (``None``: no cache), built and stored when missing.

    A missing, corrupt or stale table is rebuilt (:func:`build_lark`) and
    replaced.  Raises ``ValueError`` when the op table's formats do not make
    a grammar, and Lark's ``GrammarError`` when the grammar is not LALR(1).
    """
    _table.check_lark_version()
    sources = source_key() if directory is not None else None
    if sources is not None:
        index = _read(directory / f"sources-{sources}")
        key = index.decode("ascii", "replace").strip() if index else ""
        if len(key) == 16:
            parser = _decode(_read(directory / f"parser-{key}.table"), key)
            if parser is not None:
                return parser
    text = grammar_text()[0]
    key = table_key(text)
    parser = _decode(_read(directory / f"parser-{key}.table"), key) if directory is not None else None
    if parser is None:
        blob = _table.encode(build_lark(text), key)
        if directory is not None:
            _write_atomically(directory / f"parser-{key}.table", blob)
        parser = _table.decode(blob, OPTIONS, _KeywordsAsIdentifiers())
    if sources is not None:
        _write_atomically(directory / f"sources-{sources}", key.encode("ascii"))
    return parser


_PARSER_LOCK = threading.Lock()
_PARSER: Lark | None = None


def get_parser() -> Lark:
    """The process-wide LALR parser of Tile IR text (built once, stored in the user's cache directory).

    Thread-safe: concurrent first calls (the server's warm-up and its first
    analysis) load it once.  Raises as :func:`load_parser`.
    """
    global _PARSER
    parser = _PARSER
    if parser is None:
        with _PARSER_LOCK:
            if _PARSER is None:
                _PARSER = load_parser(cache_dir())
            parser = _PARSER
    return parser
