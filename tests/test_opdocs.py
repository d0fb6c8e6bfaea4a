"""Op documentation for hovers (tile_lsp/analysis/ide/opdocs.py) and the docs of the op table."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tile_lsp.analysis.ide.opdocs import attr_constraint, op_doc, render_markdown
from tile_lsp.dialect.registry import all_ops

CUDA_TILE_OPS = [op for op in all_ops() if op.dialect == "cuda_tile"]
# A checkout of NVIDIA's public cuda-tile repository, when the environment names one.
REF_TD = Path(os.environ.get("CUDA_TILE_SRC", "")) / "include/cuda_tile/Dialect/CudaTile/IR"


def _normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".").lower()


def _reference_sentences() -> set[str]:
    """Every argument description string and description sentence of NVIDIA's Ops.td / TestingOps.td."""
    out: set[str] = set()
    for name in ("Ops.td", "TestingOps.td"):
        text = (REF_TD / name).read_text()
        for s in re.findall(r'"((?:[^"\\]|\\.)*)"', text):
            out.add(_normalize(s))
        for block in re.findall(r"\[\{(.*?)\}\]", text, re.S):
            for sentence in re.split(r"(?<=[.!?])\s+", block):
                out.add(_normalize(sentence))
    out.discard("")
    return out


def test_every_op_has_complete_docs():
    missing = []
    for op in CUDA_TILE_OPS:
        assert op.summary.strip(), op.name
        doc = op_doc(op.full_name)
        assert doc is not None and doc.summary == op.summary
        for item in doc.operands + doc.results + doc.attributes:
            if not item.doc.strip() or "\n" in item.doc:
                missing.append(f"{op.name}.{item.name}")
            assert item.since, f"{op.name}.{item.name}"
            assert item.constraint, f"{op.name}.{item.name}"
    assert missing == []


@pytest.mark.skipif(not os.environ.get("CUDA_TILE_SRC") or not REF_TD.is_dir(),
                    reason="set CUDA_TILE_SRC to a checkout of NVIDIA's cuda-tile to compare with its Ops.td")
def test_docs_are_our_own_words():
    reference = _reference_sentences()
    copied = []
    for op in CUDA_TILE_OPS:
        texts = [("summary", op.summary)] + [(i.name, i.doc) for i in op.operands + op.results + op.attributes]
        for name, text in texts:
            if _normalize(text) in reference:
                copied.append(f"{op.name}.{name}: {text}")
    assert copied == []


def test_lookup_by_short_and_full_name():
    assert op_doc("addi") == op_doc("cuda_tile.addi")
    assert op_doc("cuda_tile.nope") is None
    assert op_doc("nope") is None


def test_arg_docs_carry_kind_default_and_since():
    doc = op_doc("print_tko")
    token = next(o for o in doc.operands if o.name == "token")
    assert (token.kind, token.constraint, token.since) == ("optional", "cuda tile token type", "13.2")
    args = doc.operands[0]
    assert (args.kind, args.constraint, args.since) == ("variadic", "variadic of Tile type", "13.1")
    exp_rounding = op_doc("exp").attributes[0]
    assert (exp_rounding.kind, exp_rounding.default, exp_rounding.optional, exp_rounding.since) == (
        "enum:RoundingMode", "full", True, "13.3")


def test_enum_constraints_list_cases():
    assert attr_constraint("enum:Signedness") == "signedness: one of unsigned, signed"
    assert attr_constraint("enum:BytecodeTestPriority") == "test priority: one of low, normal, high (250.1+)"
    assert attr_constraint("i64") == "64-bit integer"


def test_render_addi():
    assert render_markdown(op_doc("addi")) == """\
**cuda_tile.addi** (since 13.1)

Adds two integer tiles element by element.

```mlir
$lhs `,` $rhs (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($result))
```

**Operands**
- `lhs`: tile of i1 or i8 or i16 or i32 or i64 values. Left operand.
- `rhs`: tile of i1 or i8 or i16 or i32 or i64 values. Right operand; same type as `lhs`.

**Results**
- `result`: tile of i1 or i8 or i16 or i32 or i64 values. Element-wise lhs + rhs (wraps modulo 2^width).

**Attributes**
- `overflow` (optional, default `none`): integer overflow: one of none, no_signed_wrap, no_unsigned_wrap, \
no_wrap. Wrap-around promise the compiler may exploit (`none` makes no promise).
"""


def test_render_print_tko_marks_newer_arguments():
    assert render_markdown(op_doc("cuda_tile.print_tko")) == """\
**cuda_tile.print_tko** (since 13.1)

Prints a printf-style message with tile arguments (token-ordered).

```mlir
$str (`,` $args^)? (`token` `` `=` `` $token^)? attr-dict (`:` custom<CudaTileType>(type($args))^)? \
`->` custom<CudaTileType>(type($result_token))
```

**Operands**
- `args` (variadic): variadic of Tile type. Tiles formatted by the `%` specifiers of `str`.
- `token` (optional, since 13.2): cuda tile token type. Optional token the print must be ordered after.

**Results**
- `result_token` (since 13.2): cuda tile token type. Token that completes once the text is printed.

**Attributes**
- `str`: string. printf-style format text.
"""


def test_render_op_without_operands():
    assert render_markdown(op_doc("make_token")) == """\
**cuda_tile.make_token** (since 13.1)

Creates a fresh ordering token that depends on nothing.

```mlir
attr-dict `:` custom<CudaTileType>(type($result))
```

**Results**
- `result`: cuda tile token type. Token with no dependencies.
"""
