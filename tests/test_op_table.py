"""The cuda_tile op and enum tables against the corpus and NVIDIA's oracle diagnostics.

Corpus tests use ``../shared/corpus`` (fixture ``corpus`` of conftest: skipped
when absent, failing when ``CI=true``).  The remaining tests check the tables'
internal consistency and need nothing else.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from tile_lsp.dialect.cuda_tile_ops import (
    BYTECODE_OPCODES,
    CUSTOM_SYNTAX,
    OP_ALIASES,
    OPS,
    OPS_BY_NAME,
    TRAIT_MESSAGES,
    TYPE_TRANSFORMS,
)
from tile_lsp.dialect import types as T
from tile_lsp.dialect.enums import ENUMS
from tile_lsp.dialect.schema import OperandDef

RELEASES = {"13.1", "13.2", "13.3", "13.4", "13.5"}

# Words that can start a continuation line of a multi-line op in the corpus.
NOT_OPS = {"else", "iter_values"}

_STMT = re.compile(
    r"^\s*(?:%[\w$#.:-]+(?:\s*,\s*%[\w$#.:-]+)*\s*=\s*)?"  # results
    r"(\"?)([A-Za-z_][\w$.]*)\1?(?=\s|$|\()"              # op name, maybe quoted (generic form)
)
_PREFIXED = re.compile(r"(?<![!#\w.])\"?cuda_tile\.([A-Za-z_][\w$]*)\b(?!\s*=)")


def _code(line: str) -> str:
    return re.sub(r"//.*", "", line)


def _statement_op(line: str) -> str | None:
    """The cuda_tile op name a statement line starts with, if any."""
    m = _STMT.match(line)
    if not m:
        return None
    quoted, name = m.group(1), m.group(2)
    rest = line[m.end():]
    if re.match(r"\s*[=:]", rest):  # `key = value` / `name: type` continuation lines
        return None
    if "." in name:
        return name[len("cuda_tile."):] if name.startswith("cuda_tile.") else None
    if quoted or name in NOT_OPS:  # quoted unprefixed names are unregistered generic ops
        return None
    return name


def corpus_op_names(corpus: Path) -> dict[str, str]:
    """{op name: first file using it} over the kernels and the conformance tests."""
    found: dict[str, str] = {}
    files = sorted((corpus / "kernels").glob("*.mlir")) + sorted((corpus / "conformance").rglob("*.mlir"))
    for path in files:
        for line in path.read_text(errors="replace").splitlines():
            code = _code(line)
            if not code.strip() or code.lstrip().startswith(("#", "}", "^", "(")):
                continue
            names = [m.group(1) for m in _PREFIXED.finditer(code)]
            stmt = _statement_op(code)
            if stmt:
                names.append(stmt)
            for name in names:
                found.setdefault(name, path.name)
    return found


# ---------------------------------------------------------------------------
# (a) every op of the corpus is in the table
# ---------------------------------------------------------------------------


def test_corpus_ops_are_known(corpus):
    names = corpus_op_names(corpus)
    assert len(names) > 90, "op name extraction found suspiciously few ops"
    missing = {n: f for n, f in names.items() if n not in OPS_BY_NAME}
    assert not missing, f"ops used in the corpus but missing from OPS: {missing}"


def test_kernel_only_ops_present():
    # Ops printed by tileirdisasm 13.5 that the public Ops.td lacks.
    for name in ("insert", "fpowf", "fpowi", "gdc_wait_tko", "gdc_launch_dependents_tko"):
        assert name in OPS_BY_NAME
        assert OPS_BY_NAME[name].since in {"13.4", "13.5"}


# ---------------------------------------------------------------------------
# (b) "must be <summary>, but got" messages match the constraint summaries
# ---------------------------------------------------------------------------

_MUST_BE = re.compile(
    r"'cuda_tile\.([\w$]+)' (?:op )?(operand|result) #(\d+) must be (.*), but got '"
)


def _candidates(defs: tuple[OperandDef, ...], index: int) -> list[OperandDef]:
    """The operand/result definitions that flat index ``index`` may belong to."""
    out, lo, hi = [], 0, 0
    for d in defs:
        if lo <= index <= hi:
            out.append(d)
        if d.kind == "single":
            lo, hi = lo + 1, hi + 1
        elif d.kind == "optional":
            hi += 1
        else:
            hi = math.inf
    return out


def _oracle_lines(corpus: Path) -> list[tuple[str, str]]:
    out = []
    for path in sorted((corpus / "oracle").rglob("*.diagnostics.txt")):
        for line in path.read_text(errors="replace").splitlines():
            out.append((path.name, line))
    return out


def test_oracle_constraint_summaries(corpus):
    checked = 0
    problems = []
    for fname, line in _oracle_lines(corpus):
        m = _MUST_BE.search(line)
        if not m:
            continue
        op_name, which, index, summary = m.group(1), m.group(2), int(m.group(3)), m.group(4)
        op = OPS_BY_NAME.get(op_name)
        if op is None:
            problems.append(f"{fname}: unknown op {op_name}")
            continue
        defs = op.operands if which == "operand" else op.results
        cands = _candidates(defs, index)
        if not any(c.constraint.summary == summary for c in cands):
            got = [(c.name, c.constraint.summary) for c in cands]
            problems.append(f"{fname}: {op_name} {which} #{index}: oracle {summary!r}, table {got}")
        checked += 1
    assert checked > 100, f"only {checked} 'must be' messages found"
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------
# (c) enum case spellings named in oracle messages are in ENUMS
# ---------------------------------------------------------------------------

# (pattern, enum name or None to take it from the attribute named in group 1)
_ENUM_LISTS = [
    (re.compile(r"expected signedness to be one of: (.*)$"), "Signedness"),
    (re.compile(r"expected 'comparison_predicate' to be one of: (.*)$"), "ComparisonPredicate"),
    (re.compile(r"expected 'comparison_ordering' to be one of: (.*)$"), "ComparisonOrdering"),
    (re.compile(r"expected rounding mode to be one of: (.*?)(?:, got: .*)?$"), "RoundingMode"),
    (re.compile(r"invalid rounding mode specified, expect one of \[(.*)\]"), "RoundingMode"),
    (re.compile(r"memory ordering semantics must be one of: (.*)$"), "MemoryOrderingSemantics"),
    (re.compile(r"op expect one of: (.*), but got: \w+$"), "MemoryOrderingSemantics"),
    (re.compile(r"invalid memory_ordering_semantics attribute specification\..* expect one of: (.*)$"),
     "MemoryOrderingSemantics"),
    (re.compile(r"invalid memory_scope attribute specification\..* expect one of: (.*)$"), "MemoryScope"),
    (re.compile(r"one of the following enum values for attribute '(\w+)' \[(.*)\]"), None),
]

_ATTR_ENUM = {"mode": "AtomicRMWMode", "memory_ordering_semantics": "MemoryOrderingSemantics",
              "memory_scope": "MemoryScope"}


def _spellings(text: str) -> list[str]:
    text = text.replace("{", "").replace("}", "").replace("'", "")
    words = re.split(r",\s*(?:or\s+)?|\s+or\s+", text)
    return [w.strip() for w in words if w.strip()]


def test_oracle_enum_spellings(corpus):
    checked = 0
    problems = []
    for fname, line in _oracle_lines(corpus):
        for pattern, enum_name in _ENUM_LISTS:
            m = pattern.search(line)
            if not m:
                continue
            if enum_name is None:
                enum_name, text = _ATTR_ENUM[m.group(1)], m.group(2)
            else:
                text = m.group(1)
            spellings = ENUMS[enum_name].spellings
            for word in _spellings(text):
                checked += 1
                if word not in spellings:
                    problems.append(f"{fname}: {word!r} not a case of {enum_name}: {line.strip()}")
            break
    assert checked > 50, f"only {checked} enum spellings found in the oracle"
    assert not problems, "\n".join(problems)


def test_enum_table():
    expected = {"Signedness", "IntegerOverflow", "RoundingMode", "ComparisonOrdering", "ComparisonPredicate",
                "AtomicRMWMode", "MemoryScope", "MemoryOrderingSemantics", "PaddingValue", "SymbolVisibility"}
    assert expected <= set(ENUMS)
    for enum in ENUMS.values():
        values = [c[1] for c in enum.cases]
        assert len(set(values)) == len(values), enum.name
        assert len(set(enum.spellings)) == len(enum.spellings), enum.name
        for spelling, _value, since, doc in enum.cases:
            assert re.fullmatch(r"[a-z_0-9]+", spelling)
            assert doc and since
    assert ENUMS["RoundingMode"].value_of("nearest_int_to_zero") == 6
    assert ENUMS["MemoryOrderingSemantics"].spelling_of(4) == "acq_rel"


# ---------------------------------------------------------------------------
# (d) summaries and versions
# ---------------------------------------------------------------------------


def test_summaries_and_versions():
    for op in OPS:
        assert op.summary.strip(), op.name
        if op.name.startswith("testing$"):
            # Testing ops carry testing versions (TestingOps.td: "250.0").
            assert op.since.startswith("250."), op.name
        else:
            assert op.since in RELEASES, (op.name, op.since)


# ---------------------------------------------------------------------------
# (e) trait messages and parents named in the oracle agree with the traits
# ---------------------------------------------------------------------------

# "failed to verify that ..." texts produced by C++ verifiers, not by traits.
_CPP_VERIFIER_MESSAGES = {
    ("atomic_rmw_tko", "all of {pointers, arg, mask} have same shape"),
    ("atomic_cas_tko", "all of {pointers, cmp, val, mask} have same shape"),
}


def _trait_messages(op) -> set[str]:
    out = set(m.removeprefix("failed to verify that ") for m in TRAIT_MESSAGES.get(op.name, {}).values())
    words = {"AllTypesMatch": "type", "AllShapesMatch": "shape", "AllRanksMatch": "rank"}
    for t in op.traits:
        m = re.fullmatch(r"(\w+)<(.*)>", t)
        if m and m.group(1) in words:
            out.add(f"all of {{{m.group(2)}}} have same {words[m.group(1)]}")
    return out


def test_oracle_trait_messages(corpus):
    checked = 0
    problems = []
    for fname, line in _oracle_lines(corpus):
        m = re.search(r"'cuda_tile\.([\w$]+)' op failed to verify that (.*)$", line)
        if m:
            op = OPS_BY_NAME[m.group(1)]
            text = m.group(2)
            checked += 1
            if text not in _trait_messages(op) and (op.name, text) not in _CPP_VERIFIER_MESSAGES:
                problems.append(f"{fname}: {op.name}: {text!r} not produced by {op.traits}")
        m = re.search(r"'cuda_tile\.([\w$]+)' op expects parent op to be one of '(.*)'", line)
        if m:
            op = OPS_BY_NAME[m.group(1)]
            parents = next(t for t in op.traits if t.startswith("ParentOneOf<"))
            names = parents[len("ParentOneOf<"):-1].split(", ")
            checked += 1
            if ", ".join(f"cuda_tile.{n}" for n in names) != m.group(2):
                problems.append(f"{fname}: {op.name}: parents {m.group(2)!r} vs {parents}")
    assert checked > 20
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------
# Internal consistency
# ---------------------------------------------------------------------------


def _names(op) -> set[str]:
    return ({o.name for o in op.operands} | {a.name for a in op.attributes} | {r.name for r in op.results}
            | {r.name for r in op.regions})


def test_names_unique():
    assert len(OPS) == len(OPS_BY_NAME)
    for op in OPS:
        names = [o.name for o in op.operands] + [a.name for a in op.attributes] + [r.name for r in op.results]
        assert len(names) == len(set(names)), op.name


def test_format_variables_exist():
    for op in OPS:
        if op.format is None:
            assert op.name in CUSTOM_SYNTAX, op.name
            continue
        assert "  " not in op.format and op.format == op.format.strip(), op.name
        for var in re.findall(r"\$(\w+)", op.format):
            assert var in _names(op), (op.name, var)
    assert set(CUSTOM_SYNTAX) == {op.name for op in OPS if op.format is None}


def test_custom_directives_described():
    """Every custom<X> of the op table (NVIDIA's formats and tile-lsp's own) has its object, with a
    grammar and a description, and no object is left without a use."""
    from tile_lsp.analysis.ir.directives import DIRECTIVES
    from tile_lsp.dialect.registry import all_ops

    used = {d for op in all_ops() for d in re.findall(r"custom<(\w+)>", op.format or "")}
    assert used == set(DIRECTIVES)
    assert [name for name, d in DIRECTIVES.items() if not d.grammar or not d.doc] == []


def _transform_name(expr: str) -> str:
    return expr.split("(", 1)[0] + ("(x)" if "(" in expr else "")


def test_type_inference_well_formed():
    for op in OPS:
        value_names = {o.name for o in op.operands} | {r.name for r in op.results}
        for target, expr in op.type_inference.items():
            assert target in value_names, (op.name, target)
            if expr in value_names:
                continue
            assert _transform_name(expr) in TYPE_TRANSFORMS, (op.name, expr)
            for arg in re.findall(r"\((\w+)\)", expr):
                assert arg in value_names, (op.name, expr)


def test_traits_reference_known_names():
    for op in OPS:
        for trait in op.traits:
            m = re.fullmatch(r"(\w+)<(.*)>", trait)
            if not m:
                assert re.fullmatch(r"\w+", trait), (op.name, trait)
                continue
            kind, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
            if kind in ("AllTypesMatch", "AllShapesMatch", "AllRanksMatch", "AllElementTypeMatch"):
                for a in args:
                    assert a in _names(op), (op.name, trait)
            elif kind in ("TypesMatchWith", "OptionalTypesMatchWith"):
                assert args[0] in _names(op) and args[1] in _names(op), (op.name, trait)
                assert args[2] in TYPE_TRANSFORMS or f"{args[2]}(x)" in TYPE_TRANSFORMS, (op.name, trait)
            elif kind == "ParentOneOf":
                for a in args:
                    assert a in OPS_BY_NAME, (op.name, trait)
            elif kind == "SingleBlockImplicitTerminator":
                for a in m.group(2).split("|"):
                    assert a in OPS_BY_NAME, (op.name, trait)
            else:
                pytest.fail(f"unexpected parameterized trait {trait} on {op.name}")
    for name, messages in TRAIT_MESSAGES.items():
        for trait in messages:
            assert trait in OPS_BY_NAME[name].traits, (name, trait)


def test_attribute_kinds():
    simple = {"unit", "bool", "i32", "i64", "dense_i32_array", "dense_bool_array", "string", "symbol_name",
              "symbol_ref", "type", "dense", "dict", "attr", "opt_hints", "assume_predicate", "array"}
    for op in OPS:
        for a in op.attributes:
            if a.kind.startswith("enum:"):
                enum = ENUMS[a.kind[5:]]
                if a.default is not None:
                    assert a.default in enum.spellings, (op.name, a.name)
            else:
                assert a.kind in simple, (op.name, a.name, a.kind)
            if a.kind == "unit":
                assert a.optional, (op.name, a.name)
        for r in op.regions:
            assert r.kind in ("single_block", "max_one_block"), (op.name, r.name)


def test_variadic_summaries_and_kinds():
    for op in OPS:
        for d in op.operands + op.results:
            assert d.kind in ("single", "optional", "variadic"), (op.name, d.name)
            assert (d.kind == "variadic") == d.constraint.summary.startswith("variadic of "), (op.name, d.name)


def test_bytecode_opcodes_and_aliases():
    assert set(BYTECODE_OPCODES) == set(OPS_BY_NAME)
    for alias, target in OP_ALIASES.items():
        assert BYTECODE_OPCODES[alias] == BYTECODE_OPCODES[target]
    public = {n: c for n, c in BYTECODE_OPCODES.items() if n not in OP_ALIASES}
    assert len(set(public.values())) == len(public)


def test_known_summaries():
    # A few summaries spelled out, as cuda-tile-opt prints them.
    assert OPS_BY_NAME["addi"].operand("lhs").constraint.summary == "tile of i1 or i8 or i16 or i32 or i64 values"
    assert OPS_BY_NAME["get_global"].result("result").constraint.summary == "0D tile of Pointer type values"
    assert OPS_BY_NAME["make_tensor_view"].operand("dynamicShape").constraint.summary == (
        "variadic of 0D tile of i1 or i8 or i16 or i32 or i64 values")
    assert OPS_BY_NAME["load_view_tko"].operand("view").constraint.summary == "TileView instance"
    assert OPS_BY_NAME["make_token"].result("result").constraint.summary == "cuda tile token type"


def test_type_transform_functions_are_documented():
    """Every type transform the builder and the TypesMatchWith trait apply is one the op table documents."""
    from tile_lsp.dialect.type_transforms import TYPE_TRANSFORM_FUNCTIONS

    documented = {name.split("(")[0] for name in TYPE_TRANSFORMS}
    assert set(TYPE_TRANSFORM_FUNCTIONS) <= documented, set(TYPE_TRANSFORM_FUNCTIONS) - documented
    assert TYPE_TRANSFORM_FUNCTIONS["ptr_like"](T.TileType((4,), T.FloatType("f32"))) == \
        T.TileType((4,), T.PointerType(T.FloatType("f32")))
