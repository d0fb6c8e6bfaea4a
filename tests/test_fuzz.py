"""Fuzz tests in CI (issue 16): mutated inputs never give a traceback, a hang or an unlocated error.

Hypothesis drives the mutations of ``bench/fuzz.py`` (its mutators and
checks are shared) with a bounded number of examples, so the whole file
stays around a minute on a small machine:

- text mutations of corpus kernels and conformance chunks through the
  in-process analysis (random options), and a few through ``tile-lsp --check``;
- byte mutations of ``.tileirbc`` files through the bytecode reader;
- lowering of mutated kernels (:func:`tile_lsp.codegen.lower_text`);
- an LSP session with random incremental edits (the line-break look-alikes
  included) and requests: every request answered, the server alive, its final
  diagnostics equal to a fresh analysis of the final text.

Long campaigns: ``python bench/fuzz.py --help``.
"""

from __future__ import annotations

import random
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, require_corpus

if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import fuzz  # noqa: E402  (bench/fuzz.py)

#: seconds one input may take (the campaign's bound is 10 s; CI machines are slower and shared)
TIME_BOUND = 20.0
SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def texts():
    require_corpus()
    return fuzz.corpus_texts()


@pytest.fixture(scope="module")
def blobs():
    require_corpus()
    return fuzz.corpus_bytecode()


def _timed(check, *args):
    t0 = time.monotonic()
    check(*args)
    elapsed = time.monotonic() - t0
    assert elapsed < TIME_BOUND, f"{elapsed:.1f} s"


@settings(max_examples=120, **SETTINGS)
@given(data=st.data())
def test_mutated_text_through_the_analysis(texts, data):
    name, text = texts[data.draw(st.integers(0, len(texts) - 1), label="input")]
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    mutated = fuzz.mutate_text(rng, text)
    options = {"split_input_file": data.draw(st.booleans()), "mlir_compat": data.draw(st.booleans()),
               "editor_checks": data.draw(st.booleans())}
    _timed(fuzz.check_text, mutated, options)


@pytest.mark.parametrize("text", [
    "%x:4294967296 = constant <i32: 1> : tile<i32>\n",
    '"\\u"():()->!w<>',
    "entry @k(%a: tile<i32>) {\n  %0 = addi %a,\f %a : tile<i32>\u2028\n  return\x85\n}\n",
])
def test_reproducers_through_the_analysis(text):
    _timed(fuzz.check_text, text, {})


@settings(max_examples=4, **SETTINGS)
@given(data=st.data())
def test_mutated_text_through_the_cli(texts, data):
    name, text = texts[data.draw(st.integers(0, len(texts) - 1), label="input")]
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    fuzz.check_cli(fuzz.mutate_text(rng, text), timeout=120.0)


@settings(max_examples=150, **SETTINGS)
@given(data=st.data())
def test_mutated_bytecode_through_the_reader(blobs, data):
    name, blob = blobs[data.draw(st.integers(0, len(blobs) - 1), label="input")]
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    _timed(fuzz.check_bytecode, fuzz.mutate_bytes(rng, blob))


@settings(max_examples=12, **SETTINGS)
@given(data=st.data())
def test_lowering_of_mutated_kernels(texts, data):
    valid = fuzz._valid_kernels(texts)
    name, text = valid[data.draw(st.integers(0, len(valid) - 1), label="input")]
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    gpu = data.draw(st.sampled_from(["sm_80", "sm_90", "sm_100", "sm_120"]))
    _timed(fuzz.check_lower, fuzz.mutate_text(rng, text, rng.randint(1, 2)), gpu)


def test_ddmin_finds_a_minimal_failing_sublist():
    items = list(range(40))
    got = fuzz.ddmin(items, lambda xs: 7 in xs and 31 in xs)
    assert got == [7, 31]


def test_apply_lsp_edit_counts_only_lsp_line_breaks():
    text = "a\u2028b\r\nc\rd\ne"
    assert fuzz.apply_lsp_edit(text, (1, 0), (1, 1), "X") == "a\u2028b\r\nX\rd\ne"
    assert fuzz.apply_lsp_edit(text, (2, 0), (3, 1), "") == "a\u2028b\r\nc\r"


def test_server_session_with_random_edits(texts):
    valid = fuzz._valid_kernels(texts)
    session = fuzz.server_session(seed=3, index=0, edits=60, timeout=TIME_BOUND, texts=valid)
    assert session["failures"] == [], session["failures"]
    assert session["answered"] == session["requests"] > 0
