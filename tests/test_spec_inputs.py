"""The spec documents' diagnostics through ``tile-lsp --check``, on the inputs of ``tests/spec_inputs``.

Each ``tests/spec_inputs/NAME.mlir`` is checked with ``--split-input-file
--format json``; its diagnostics (range, severity, exact text, notes) must
equal ``NAME.mlir.expected``, one diagnostic per line::

    LINE:COL-ENDLINE:ENDCOL severity: message
      note LINE:COL: message

(1-based, as the CLI's JSON, whose notes carry their start only).  The inputs hold the documents' worked
examples (spec 000's sfa/sfb mismatch, spec 001's kind words 0x42 and 0xE2,
spec 002's producer/consumer pipeline, spec 004's minimal kernel) and one
input per diagnostic.  :func:`test_every_shipped_string_is_emitted` walks
``../shared/spec/verbatim-diagnostics.tsv``: every string NVIDIA's shipped
tileiras contains (``in_tileiras=yes``) must occur in a diagnostic of these
inputs.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import json
import os
from pathlib import Path

import pytest

from tile_lsp.cli import main

INPUTS = Path(__file__).resolve().parent / "spec_inputs"
SPEC = Path(__file__).resolve().parents[1].parent / "shared" / "spec"
TSV = SPEC / "verbatim-diagnostics.tsv"


def _span(d: dict) -> str:
    start = f"{d['line']}:{d['column']}"
    return f"{start}-{d['endLine']}:{d['endColumn']}" if "endLine" in d else start  # notes carry a start


def render(diagnostics: list[dict]) -> str:
    """The expected-file text of the CLI's JSON diagnostics."""
    lines = []
    for d in diagnostics:
        lines.append(f"{_span(d)} {d['severity']}: {d['message']}")
        for n in d.get("notes") or []:
            lines.append(f"  note {_span(n)}: {n['message']}")
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=None)
def check(name: str) -> tuple[int, list[dict]]:
    """Exit status and JSON diagnostics of ``tile-lsp --check --split-input-file`` on one input."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["--format", "json", "--split-input-file", "--check", str(INPUTS / name)])
    return rc, json.loads(out.getvalue())


NAMES = sorted(p.name for p in INPUTS.glob("*.mlir"))


@pytest.mark.parametrize("name", NAMES)
def test_spec_input(name: str):
    rc, diagnostics = check(name)
    expected = (INPUTS / (name + ".expected")).read_text(encoding="utf-8")
    assert render(diagnostics) == expected
    assert rc == (1 if any(d["severity"] == "error" for d in diagnostics) else 0)


def test_worked_examples_are_inputs():
    """The documents' worked examples are among the inputs, with the outcome each document states."""
    rows = {name: render(check(name)[1]) for name in NAMES}
    # spec 000: the sfa/sfb mismatch stops at phase 2, on the op of the example (line 8)
    assert rows["000_block_scaled_mma.mlir"].splitlines()[0] == (
        "8:6-8:6 error: 'nv_tileas.block_scaled_mma' op expects sfa/sfb element types to be the same")
    kinds = rows["001_tcgen05_kind_words.mlir"].splitlines()
    # spec 001: 0x42 trips rule 1 without the arch-conditional variant and passes with it (line 16)
    assert kinds[0] == ("9:118-9:128 error: 'nv_tileas.dot' op INT8 type is supported only on "
                        "arch-conditional variants.")
    assert not any(line.startswith("16:") for line in kinds)
    # spec 001: 0xE2 trips rule 6 (the shipped text of the rule)
    assert ("53:84-53:94 error: 'nv_tileas.dot' op Block scale is not supported for f16, tf32, f8f6f4, "
            "i8 and ti16 types") in kinds


def _spec_tsv() -> Path:
    if TSV.is_file():
        return TSV
    message = f"spec not found at {TSV} (expected ../shared/spec beside the project)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def shipped_strings() -> list[str]:
    """The strings of verbatim-diagnostics.tsv marked ``in_tileiras=yes`` (deduplicated, in file order)."""
    out: list[str] = []
    with _spec_tsv().open(encoding="utf-8") as f:
        rows = csv.reader((line for line in f if not line.startswith("#")), delimiter="\t")
        for row in rows:
            if len(row) >= 2 and row[1] == "yes" and row[0] != "string" and row[0] not in out:
                out.append(row[0])
    return out


def test_every_shipped_string_is_emitted():
    messages = []
    for name in NAMES:
        for d in check(name)[1]:
            messages.append(d["message"])
            messages.extend(n["message"] for n in d.get("notes") or [])
    missing = [s for s in shipped_strings() if not any(s in m for m in messages)]
    assert missing == [], "shipped strings no input under tests/spec_inputs makes tile-lsp --check emit"
