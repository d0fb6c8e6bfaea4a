"""The stored parse table (``tile_lsp/grammar/table.py``) and its cache (``tile_lsp/grammar/loader.py``).

The parser loaded from the compact table must be the parser Lark builds:
every state's actions, every state's lexer and every parse (trees, errors,
the recovering driver's issues) are compared with a parser built from
scratch by ``Lark(...)`` (built once per module, about 15 s).  The cache is
exercised in a temporary directory: cold, warm, corrupt, stale.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.parsers.lalr_analysis import Reduce, Shift

import tile_lsp.grammar.parse as parse_module
from tests.conftest import ROOT, require_corpus, server_env
from tile_lsp.grammar import loader, table

EXAMPLES = sorted((ROOT / "examples").rglob("*.mlir")) + sorted((ROOT / "tests" / "kernels").rglob("*.mlir"))


@pytest.fixture(scope="module")
def fresh():
    """A parser built by Lark from the grammar text, without any cache."""
    return loader.build_lark(loader.grammar_text()[0])


@pytest.fixture(scope="module")
def compact(fresh, tmp_path_factory):
    """The parser of ``fresh``'s table, stored in a temporary cache and loaded back."""
    directory = tmp_path_factory.mktemp("cache")
    original = loader.build_lark
    loader.build_lark = lambda text: fresh
    try:
        loader.load_parser(directory)
    finally:
        loader.build_lark = original
    return loader.load_parser(directory)


def _canon(value):
    """A comparable form of a tree or token, with types and positions (``Token ==`` compares text only)."""
    if isinstance(value, Tree):
        meta = value.meta
        where = None if getattr(meta, "empty", True) else (
            meta.line, meta.column, meta.end_line, meta.end_column, meta.start_pos, meta.end_pos)
        return (str(value.data), where, [_canon(c) for c in value.children])
    if isinstance(value, Token):
        return (value.type, str(value), value.start_pos, value.end_pos, value.line, value.column,
                value.end_line, value.end_column)
    return value


def _outcome(parser, text: str):
    """What Lark's parser does with ``text``: the tree, or the error with the parser's stacks."""
    try:
        return ("tree", _canon(parser.parse(text)))
    except UnexpectedInput as err:
        ip = getattr(err, "interactive_parser", None)
        stacks = None if ip is None else (list(ip.parser_state.state_stack),
                                          [_canon(v) for v in ip.parser_state.value_stack])
        token = _canon(err.token) if isinstance(err, UnexpectedToken) else None
        allowed = sorted(err.allowed) if isinstance(err, UnexpectedCharacters) else None
        return (type(err).__name__, err.line, err.column, token, sorted(getattr(err, "expected", None) or ()),
                allowed, stacks)


def _recovered(monkeypatch, parser, text: str):
    """What the recovering driver (``tile_lsp.grammar.parse.parse``) makes of ``text`` with ``parser``."""
    monkeypatch.setattr(parse_module, "get_parser", lambda: parser)
    result = parse_module.parse(text)
    return (_canon(result.tree), result.text, result.closed,
            [(i.message, i.start, i.end, i.needs_context, i.blanked) for i in result.issues])


def _chunks(paths) -> list[str]:
    return [chunk for p in paths for chunk in p.read_text(encoding="utf-8").split("// -----")]


def _compare(monkeypatch, fresh, compact, texts: list[str]) -> int:
    differences = []
    for text in texts:
        if _outcome(compact, text) != _outcome(fresh, text):
            differences.append(("lark", text[:200]))
        elif _recovered(monkeypatch, compact, text) != _recovered(monkeypatch, fresh, text):
            differences.append(("recovery", text[:200]))
    assert not differences, f"{len(differences)} of {len(texts)} texts parse differently, e.g. {differences[:3]}"
    return len(texts)


def test_lark_is_the_version_the_table_was_written_for():
    """The table module uses Lark internals: pyproject pins that exact Lark and the check agrees."""
    table.check_lark_version()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"lark=={table.LARK_VERSION}"' in pyproject


def test_every_state_has_lark_s_actions(fresh, compact):
    """All 4,877 states, each action: shifts to the same state, reductions by the same rule."""
    theirs = fresh.parser.parser._parse_table
    ours = compact.parser.parser._parse_table
    assert ours.start_states == theirs.start_states and ours.end_states == theirs.end_states
    assert len(ours.states) == len(theirs.states) == len(list(ours.states))
    for state, actions in theirs.states.items():
        row = ours.states[state]
        assert list(row) == list(actions), state  # same names, same order
        for name, (action, arg) in actions.items():
            got_action, got_arg = row[name]
            assert got_action is action
            if action is Shift:
                assert got_arg == arg
            else:
                assert got_action is Reduce
                assert (got_arg.origin.name, [s.name for s in got_arg.expansion], got_arg.alias) == \
                    (arg.origin.name, [s.name for s in arg.expansion], arg.alias)
                assert got_arg.options.empty_indices == arg.options.empty_indices
                assert got_arg.options.expand1 == arg.options.expand1


def test_lazy_states_is_a_read_only_mapping(compact):
    """``in``, ``get``, ``len``, iteration and ``[]`` see every state; others are absent."""
    states = compact.parser.parser._parse_table.states
    n = len(states)
    assert n > 1000
    assert 0 in states and n - 1 in states and n not in states and -1 not in states and "0" not in states
    assert states.get(n) is None and states.get(-1, {}) == {}
    with pytest.raises(KeyError):
        states[n]
    assert list(states) == list(range(n))
    assert states[5] is states[5]  # decoded once
    assert dict(states.items())[7] is states[7]


def test_every_state_lexes_as_lark_s(fresh, compact):
    """Each state's lexer: Lark's terminals in Lark's order, the same keyword folding."""
    theirs = fresh.parser.lexer.lexer  # PostLexConnector -> ContextualLexer
    ours = compact.parser.lexer.lexer
    states = compact.parser.parser._parse_table.states
    words = sorted({t.pattern.value for t in fresh.terminals if t.pattern.type == "str"}
                   | {"foo", "tile", "cuda_tile.addi", "!cuda_tile.tile", "!foo.bar"})
    seen = set()
    for state in range(len(states)):
        lark_lexer = theirs.lexers[state]
        if id(lark_lexer) in seen:
            continue
        seen.add(id(lark_lexer))
        lexer = ours.lexer_for(states, state)
        assert [t.name for t in lexer.terminals] == [t.name for t in lark_lexer.terminals]
        assert lexer.newline_types == lark_lexer.newline_types
        assert lexer.ignore_types == lark_lexer.ignore_types
        assert [t.name for t in lexer.scanner.terminals] == [t.name for t in lark_lexer.scanner.terminals]
        assert lexer.scanner.allowed_types == lark_lexer.scanner.allowed_types
        assert set(lexer.callback) == set(lark_lexer.callback)
        for name in lexer.callback:
            for word in words:
                assert lexer.callback[name](Token(name, word)).type == \
                    lark_lexer.callback[name](Token(name, word)).type, (state, name, word)
    assert len(seen) > 100
    # the lexers set what Lark's BasicLexer sets, no more, no less (a new Lark would fail here)
    assert set(vars(lexer)) - {"_shared", "_matches", "_order"} == set(vars(lark_lexer))
    root = ours.root_lexer
    assert [t.name for t in root.terminals] == [t.name for t in theirs.root_lexer.terminals]
    assert root.newline_types == theirs.root_lexer.newline_types


def test_scanners_match_as_lark_s_alternation(compact):
    """A scanner matching terminal by terminal (before it compiles) finds Lark's token at every position."""
    from lark.lexer import Scanner
    from lark.utils import TextSlice

    from tile_lsp.grammar.table import _DeferredScanner

    texts = [p.read_text(encoding="utf-8") for p in EXAMPLES]
    for text in texts:  # makes the scanners of the states these texts reach
        try:
            compact.parse(text)
        except UnexpectedInput:
            pass  # examples/broken
    lexer = compact.parser.lexer.lexer
    scanners = [v for k, v in lexer._shared.items() if k[0] == "scanner"] + [lexer.root_lexer.scanner]
    assert len(scanners) > 20
    sample = "\n".join(texts) + ' "a string" 0x1F -1.5e3 #alias = !type<"x"> ^bb0 @sym %v#2 ->'
    slice_ = TextSlice(sample, 0, len(sample))
    for scanner in scanners:
        lark_scanner = Scanner(scanner.terminals, scanner.g_regex_flags, scanner.re_, scanner.use_bytes)
        one_by_one = _DeferredScanner(scanner.terminals, scanner.g_regex_flags, scanner.re_, scanner.use_bytes, {})
        one_by_one.COMPILE_AFTER = len(sample) + 1
        compiled = _DeferredScanner(scanner.terminals, scanner.g_regex_flags, scanner.re_, scanner.use_bytes, {})
        compiled.COMPILE_AFTER = 0
        for pos in range(len(sample)):
            expected = lark_scanner.match(slice_, pos)
            assert one_by_one.match(slice_, pos) == expected, (pos, sample[pos:pos + 20])
            assert compiled.match(slice_, pos) == expected
        assert one_by_one._mres is None and compiled._mres is not None
        assert one_by_one.allowed_types == lark_scanner.allowed_types


def test_examples_parse_as_with_lark(monkeypatch, fresh, compact):
    """The repository's kernels, whole, and with a character deleted here and there (syntax errors)."""
    texts = _chunks(EXAMPLES)
    mutated = [t[:i] + t[i + 1:] for t in texts for i in range(7, len(t), max(len(t) // 9, 1))]
    assert _compare(monkeypatch, fresh, compact, texts + mutated) > 50


def test_conformance_corpus_parses_as_with_lark(monkeypatch, fresh, compact):
    """Every chunk of NVIDIA's conformance tests (``../shared/corpus/conformance``)."""
    corpus = require_corpus()
    assert _compare(monkeypatch, fresh, compact, _chunks(sorted((corpus / "conformance").rglob("*.mlir")))) > 500


def test_mutated_corpus_parses_as_with_lark(monkeypatch, fresh, compact):
    """Every 11th mutation of the differential sample (typos, deleted braces, truncations...)."""
    corpus = require_corpus()
    name = "tile_lsp_bench_differential"
    bench = sys.modules.get(name)
    if bench is None:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "differential.py")
        bench = importlib.util.module_from_spec(spec)
        sys.modules[name] = bench
        spec.loader.exec_module(bench)
    muts, bases, _ = bench.load_sample(ROOT / "tests" / "data" / "differential" / "sample.jsonl", corpus)
    texts = [bench.apply_edit(bases[m.source], m.edit) for m in muts[::11]]  # 11: prime to the 12 kinds
    assert _compare(monkeypatch, fresh, compact, texts) > 200


# --- the cache ---------------------------------------------------------------


class _Builds:
    """Stands in for :func:`loader.build_lark`, counting its calls (and returning the fresh parser)."""

    def __init__(self, parser):
        self.parser = parser
        self.texts: list[str] = []

    def __call__(self, text):
        self.texts.append(text)
        return self.parser


@pytest.fixture()
def builds(monkeypatch, fresh):
    counter = _Builds(fresh)
    monkeypatch.setattr(loader, "build_lark", counter)
    return counter


def _works(parser) -> None:
    tree = parser.parse((ROOT / "examples" / "vector_add.mlir").read_text(encoding="utf-8"))
    assert tree.data == "start"
    assert any(t.data == "operation" for t in tree.iter_subtrees())


def _table_file(directory: Path) -> Path:
    (found,) = directory.glob("parser-*.table")
    return found


def test_cold_then_warm(tmp_path, builds):
    """The first load builds and stores; the next one reads, without generating the grammar."""
    _works(loader.load_parser(tmp_path))
    assert len(builds.texts) == 1
    assert re.fullmatch(r"parser-[0-9a-f]{16}\.table", _table_file(tmp_path).name)
    (index,) = tmp_path.glob("sources-*")
    assert index.read_text() == _table_file(tmp_path).name[len("parser-"):-len(".table")]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left

    loader.grammar_text.cache_clear()
    _works(loader.load_parser(tmp_path))
    assert len(builds.texts) == 1
    assert loader.grammar_text.cache_info().misses == 0  # the source index was enough


def test_threads_parsing_with_a_parser_just_loaded_get_lark_s_outcomes(tmp_path, builds, fresh):
    """Threads parsing at once with a parser whose states, lexers, rules and callbacks are still to be
    made (the server's warm-up and first analysis do) each get what Lark's own parser gives."""
    texts = _chunks(EXAMPLES)
    expected = [_outcome(fresh, text) for text in texts]
    loader.load_parser(tmp_path)  # builds and stores the table
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, inside the first-use code too
    try:
        for _ in range(3):
            parser = loader.load_parser(tmp_path)  # a new parser: nothing made yet
            with ThreadPoolExecutor(max_workers=4) as pool:
                results = list(pool.map(lambda _: [_outcome(parser, text) for text in texts], range(4)))
            assert all(result == expected for result in results)
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage", "other-key"])
def test_a_corrupt_table_is_rebuilt(tmp_path, builds, damage):
    """A table that does not decode is built again and replaced, not an error."""
    loader.load_parser(tmp_path)
    path = _table_file(tmp_path)
    blob = path.read_bytes()
    damaged = {
        "truncate": blob[:len(blob) // 2],
        "flip": blob[:-100] + bytes([blob[-100] ^ 0x40]) + blob[-99:],
        "empty": b"",
        "garbage": b"\x00\x01 not a table" * 50,
        "other-key": table.encode(builds.parser, "0123456789abcdef"),
    }[damage]
    path.write_bytes(damaged)
    with pytest.raises(table.CorruptTable):
        table.decode(damaged, loader.OPTIONS, key=path.name[len("parser-"):-len(".table")])
    _works(loader.load_parser(tmp_path))
    assert len(builds.texts) == 2
    key = path.name[len("parser-"):-len(".table")]
    _works(table.decode(path.read_bytes(), loader.OPTIONS, loader._KeywordsAsIdentifiers(), key))


def test_a_corrupt_source_index_falls_back_to_the_grammar(tmp_path, builds):
    """A damaged ``sources-*`` file costs generating the grammar text, not a rebuild; it is rewritten."""
    loader.load_parser(tmp_path)
    (index,) = tmp_path.glob("sources-*")
    good = index.read_text()
    index.write_bytes(b"\xff\xfe junk")
    _works(loader.load_parser(tmp_path))
    assert len(builds.texts) == 1
    assert index.read_text() == good


def test_a_changed_grammar_builds_a_new_table(tmp_path, builds, monkeypatch):
    """A change of the op table (so of the grammar text) makes another key and another table."""
    loader.load_parser(tmp_path)
    text, op_rule = loader.grammar_text()
    monkeypatch.setattr(loader, "grammar_text", lambda: (text + "\n// another op\n", op_rule))
    monkeypatch.setattr(loader, "source_key", lambda: "feedfacefeedface")
    loader.load_parser(tmp_path)
    assert builds.texts[-1].endswith("// another op\n") and len(builds.texts) == 2
    assert len(list(tmp_path.glob("parser-*.table"))) == 2


def test_source_key_follows_the_sources(tmp_path):
    """Editing any grammar or dialect source changes the source key; other files do not."""
    for directory in loader.SOURCE_DIRS:
        target = tmp_path / directory.name
        target.mkdir()
        for p in directory.iterdir():
            if p.suffix in (".py", ".lark"):
                (target / p.name).write_bytes(p.read_bytes())
    dirs = tuple(tmp_path / d.name for d in loader.SOURCE_DIRS)
    key = loader.source_key(dirs)
    assert key == loader.source_key(loader.SOURCE_DIRS)
    (dirs[0] / "notes.txt").write_text("not a source")
    assert loader.source_key(dirs) == key
    ops = dirs[1] / "cuda_tile_ops.py"
    ops.write_text(ops.read_text() + "\n# an edit\n")
    assert loader.source_key(dirs) != key


def test_the_grammar_comes_from_the_hashed_sources_only():
    """Generating the grammar imports tile-lsp modules of ``SOURCE_DIRS`` only, so the source key
    changes whenever the grammar can (run in a fresh interpreter, where nothing is imported yet)."""
    code = (
        "import sys\n"
        "import tile_lsp.grammar.loader as loader\n"
        "loader.grammar_text()\n"
        "print('\\n'.join(m.__file__ for n, m in sys.modules.items()\n"
        "                 if n.startswith('tile_lsp') and getattr(m, '__file__', None)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env=server_env()).stdout
    files = [Path(line).resolve() for line in out.splitlines()]
    assert any(f.name == "cuda_tile_ops.py" for f in files)
    allowed = {d.resolve() for d in loader.SOURCE_DIRS} | {(ROOT / "tile_lsp").resolve()}
    outside = [f for f in files if f.parent not in allowed or (f.parent == ROOT / "tile_lsp"
                                                               and f.name != "__init__.py")]
    assert not outside, f"the grammar depends on modules the source key does not hash: {outside}"


def test_no_cache_directory_still_loads(builds):
    """Without a writable cache directory the parser is built in memory."""
    _works(loader.load_parser(None))
    assert len(builds.texts) == 1


def test_table_key_depends_on_the_text():
    assert loader.table_key("a") != loader.table_key("b")
    assert re.fullmatch(r"[0-9a-f]{16}", loader.table_key("a"))


def test_encode_refuses_a_non_lalr_parser():
    from lark import Lark

    with pytest.raises(ValueError):
        table.encode(Lark('start: "a"', parser="earley"), "0" * 16)
    assert json.dumps(loader.OPTIONS)  # the options are plain data (they are part of the key)
