"""Every valid conformance text round-trips through our bytecode.

For each ``cuda_tile.module`` of each valid text of NVIDIA's conformance
tests (the files ``tests/test_corpus.py`` parses without errors, plus the
``Bytecode/versioning`` texts that ``cuda-tile-translate`` writes), our text
-> our bytecode -> (our reader | NVIDIA's ``tileirdisasm -g`` -> our parse) is
the IR we parsed (:func:`tile_lsp.analysis.ir.compare.ir_differences`), with
the same debug-info locations where the text has ones with a bytecode form
(``di_loc`` and call sites of them; others are written as unknown).

What cannot take that path is listed below with the reason, and the test
checks that each listed reason is real (the writer or tileirdisasm does
refuse it) and still used; the counts are printed.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import require_nvidia_tool
from test_corpus import VALID_CONFORMANCE

from tile_lsp import nvidia
from tile_lsp.analysis.api import analyze_text
from tile_lsp.analysis.ir.debuginfo import decoder_for
from tile_lsp.analysis.ir.diagnostics import Severity
from tile_lsp.analysis.ir.core import Block, Module, Operation
from tile_lsp.analysis.ir.compare import ir_differences
from tile_lsp.analysis.ir.split import split_chunks
from tile_lsp.bytecode import BytecodeWriteError, read_bytecode, write_bytecode
from tile_lsp.bytecode.locations import decode, encode

#: Valid texts of ``conformance/Bytecode/versioning`` (``cuda-tile-translate
#: -mlir-to-cudatilebc`` RUN lines); the others there are error tests or use
#: the test dialect's version-250 ops.
VERSIONING_TEXTS = [
    "Bytecode/versioning/multiple_globals_legacy_bytecode.mlir",
    "Bytecode/versioning/producer_attr_backward_compat.mlir",
    "Bytecode/versioning/versioned_results_backward_compat.mlir",
]

ROUND_TRIP_TEXTS = VALID_CONFORMANCE + VERSIONING_TEXTS

#: Top-level ops with no bytecode form, left out of their module (each one counted).
EXCLUDED_OPS = {
    "cuda_tile.testing$func": "the test dialect's function op: Tile IR bytecode has entries and "
                              "globals only (the writer refuses it)",
}

#: Entries left out, by (file, entry name): the tileirdisasm of nvidia-cuda-tileiras 13.5
#: checks bytecode invariants that cuda-tile's round-trip tests predate.
EXCLUDED_ENTRIES = {
    ("Bytecode/operationsTest.mlir", "join_tokens_op"): (
        "tileirdisasm 13.5 requires rank-0 tile entry arguments",
        ("unsupported type in bytecode for entry argument #0: '!cuda_tile.token'; "
         "expected a rank-0 !cuda_tile.tile type")),
    ("Bytecode/operationsTest.mlir", "assume"): (
        "tileirdisasm 13.5 requires rank-0 tile entry arguments",
        ("unsupported type in bytecode for entry argument #3: "
         "'!cuda_tile.tensor_view<8192x8192x64xf32, strides=[524288,64,1]>'; "
         "expected a rank-0 !cuda_tile.tile type")),
}

#: Discardable attributes: Tile IR bytecode stores inherent attributes only, so the
#: writer does not write these (as NVIDIA's writer); removed before comparing.
DROPPED_ATTRIBUTES = {
    "cuda_tile.loop_split": "discardable hint of the loop-split pass (Transforms/loop_split.mlir)",
}

#: Ops that tileirdisasm 13.5 and our reader print under their 13.5 name (same opcode).
RENAMED_OPS = {
    "cuda_tile.fpowf": "cuda_tile.pow",  # opcode 0x54
}

#: Known differences, exactly, by unit and reader: (differences, reason).
KNOWN_DIFFERENCES = {
    "Bytecode/constantTest.mlir#0@kernels": (
        {"ours": [("/0:cuda_tile.entry/r0/b0/20:cuda_tile.constant: attributes "
                   "{'value': 'dense<3.140000e+00> : !cuda_tile.tile<tf32>'} vs "
                   "{'value': 'dense<3.140625e+00> : !cuda_tile.tile<tf32>'}")],
         "tileirdisasm": [("/0:cuda_tile.entry/r0/b0/20:cuda_tile.constant: attributes "
                           "{'value': 'dense<3.140000e+00> : !cuda_tile.tile<tf32>'} vs "
                           "{'value': 'dense<3.140630e+00> : !cuda_tile.tile<tf32>'}")]},
        ("our printer does not round a tf32 literal to tf32 precision (3.14 is 3.140625 in tf32; "
         "f16/bf16 literals are rounded); the bytecode holds the rounded value")),
}


def _known(key: str, reader: str) -> list[str]:
    return KNOWN_DIFFERENCES[key][0][reader] if key in KNOWN_DIFFERENCES else []


@dataclass
class Unit:
    """One ``cuda_tile.module`` of a chunk of a conformance text, with its exclusions applied."""

    key: str
    file: str
    module: Operation = field(repr=False)  # (an IR's dataclass repr is huge: pytest prints arguments)
    text_module: Module = field(repr=False)  # the chunk's module (its aliases decode the locations)
    excluded: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)  # DROPPED_ATTRIBUTES removed after writing
    bytecode: bytes | None = field(default=None, repr=False)

    @property
    def ops(self) -> list[Operation]:
        return self.module.regions[0].blocks[0].operations if self.module.regions[0].blocks else []


def _as_module(ops: list[Operation], aliases_of: Module | None = None) -> Module:
    """A module of ``ops`` (with the alias table of ``aliases_of``, which their locations use)."""
    module = Module(body=Block(operations=list(ops)))
    if aliases_of is not None:
        module.attr_aliases = aliases_of.attr_aliases
    return module


def _cuda_tile_modules(module: Module) -> list[Operation]:
    ops = module.body.operations
    if len(ops) == 1 and ops[0].name == "builtin.module":
        ops = ops[0].regions[0].blocks[0].operations
    return [op for op in ops if op.name == "cuda_tile.module"]


def _sym(op: Operation) -> str:
    a = op.properties.get("sym_name") or op.attributes.get("sym_name")
    return getattr(a, "value", "?")


def _drop_attributes(ops: list[Operation], counts: Counter) -> None:
    for top in ops:
        for op in top.walk():
            for name in DROPPED_ATTRIBUTES:
                if op.attributes.pop(name, None) is not None:
                    counts[name] += 1


@pytest.fixture(scope="module")
def units(corpus) -> list[Unit]:
    """Every module of every valid text, written as bytecode (exclusions applied)."""
    out: list[Unit] = []
    for name in ROUND_TRIP_TEXTS:
        text = (corpus / "conformance" / name).read_text(encoding="utf-8")
        for i, chunk in enumerate(split_chunks(text)):
            analysis = analyze_text(chunk.text)
            errors = [d.message for d in analysis.diagnostics if d.severity == Severity.ERROR]
            assert errors == [], (name, i)
            for mod in _cuda_tile_modules(analysis.chunks[0].module):
                unit = Unit(f"{name}#{i}@{_sym(mod)}", name, mod, analysis.chunks[0].module)
                body = unit.ops
                kept = []
                for op in body:
                    if op.name in EXCLUDED_OPS:
                        with pytest.raises(BytecodeWriteError, match=f"^'{re.escape(op.name)}' cannot appear"):
                            write_bytecode(_as_module([op]))
                        unit.excluded[op.name] += 1
                    elif (name, _sym(op)) in EXCLUDED_ENTRIES:
                        unit.excluded[(name, _sym(op))] += 1
                    else:
                        kept.append(op)
                body[:] = kept
                if body or not unit.excluded:
                    unit.bytecode = write_bytecode(_as_module([mod], unit.text_module))
                _drop_attributes(body, unit.dropped)
                out.append(unit)
    return out


def _compare(unit: Unit, back: list[Operation], renamed: Counter) -> list[str]:
    for top in back:
        for op in top.walk():
            if op.name in RENAMED_OPS:
                renamed[op.name] += 1
                op.name = RENAMED_OPS[op.name]
    return ir_differences(_as_module(unit.ops), _as_module(back))


def _report(title: str, units: list[Unit], extra: dict[str, int], capsys) -> None:
    written = [u for u in units if u.bytecode is not None]
    excluded = Counter()
    for u in units:
        excluded.update(u.excluded)
    with capsys.disabled():
        sys.stdout.write(f"\n{title}: {len(written)} of {len(units)} modules round-tripped "
                         f"({sum(1 for u in written for top in u.ops for _ in top.walk())} ops) from "
                         f"{len(ROUND_TRIP_TEXTS)} texts; left out: "
                         + ", ".join(f"{k if isinstance(k, str) else '@' + k[1]} x{n}"
                                     for k, n in sorted(excluded.items(), key=str))
                         + "".join(f"; {k} x{n}" for k, n in extra.items()) + "\n")


def _locations(ops: list[Operation], module: Module | None) -> list[tuple[str, str]]:
    """(op, location) in walk order: decoded from the text with ``module``'s aliases, or read
    from bytecode (``module`` None); locations without a bytecode form count as none, and
    operand-less terminators (the text may leave them implicit) are skipped."""
    dec = decoder_for(module) if module is not None else None
    out = []
    for top in ops:
        for op in top.walk():
            if op.opdef is not None and op.opdef.has_trait("Terminator") and not op.operands:
                continue
            loc = dec.location(op.location) if dec is not None else decode(op.location)
            out.append((op.name, str(loc) if encode(loc) is not None else "none"))
    return out


def _extra(units: list[Unit], renamed: Counter) -> dict[str, int]:
    dropped: Counter = Counter()
    for u in units:
        dropped.update(u.dropped)
    assert set(dropped) == set(DROPPED_ATTRIBUTES)
    return {**{f"dropped {k}": n for k, n in dropped.items()},
            **{f"read back as {k} (= {RENAMED_OPS[k]})": n for k, n in renamed.items()}}


def test_valid_conformance_texts_round_trip_through_our_reader(units, capsys):
    renamed: Counter = Counter()
    differ = {}
    for unit in units:
        if unit.bytecode is None:
            continue
        read = read_bytecode(unit.bytecode).body.operations[0]
        back = read.regions[0].blocks[0].operations if read.regions[0].blocks else []
        diffs = _compare(unit, back, renamed)
        if diffs != _known(unit.key, "ours"):
            differ[unit.key] = diffs[:3]
        elif _locations(unit.ops, unit.text_module) != _locations(back, None):
            differ[unit.key] = "locations differ"
    assert differ == {}
    assert set(renamed) == set(RENAMED_OPS)
    _report("ours", units, _extra(units, renamed), capsys)


def test_valid_conformance_texts_round_trip_through_tileirdisasm(units, capsys):
    require_nvidia_tool("tileirdisasm")
    written = [u for u in units if u.bytecode is not None]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        texts = list(pool.map(lambda u: _disassemble(u.bytecode), written))
    located = 0
    renamed: Counter = Counter()
    differ = {}
    for unit, text in zip(written, texts):
        if text.startswith("error:"):
            differ[unit.key] = text
            continue
        back = analyze_text(text).chunks[0].module
        diffs = _compare(unit, back.body.operations, renamed)
        if diffs != _known(unit.key, "tileirdisasm"):
            differ[unit.key] = diffs[:3]
        elif _locations(unit.ops, unit.text_module) != _locations(back.body.operations, back):
            differ[unit.key] = "locations differ"
        located += sum(1 for _, loc in _locations(unit.ops, unit.text_module) if loc != "none")
    assert differ == {}
    assert set(renamed) == set(RENAMED_OPS)
    assert located > 0
    _report("tileirdisasm", units, {**_extra(units, renamed), "ops with a debug-info location": located}, capsys)


def _disassemble(data: bytes) -> str:
    try:
        return nvidia.disassemble(data, debug_info=True)
    except RuntimeError as e:
        return f"error: {e}"


def test_every_listed_exclusion_is_used_and_real(units, corpus):
    """No stale entry in the lists above; tileirdisasm does refuse each excluded entry."""
    excluded = Counter()
    for u in units:
        excluded.update(u.excluded)
    assert set(excluded) == set(EXCLUDED_OPS) | set(EXCLUDED_ENTRIES)
    assert set(KNOWN_DIFFERENCES) <= {u.key for u in units if u.bytecode is not None}
    require_nvidia_tool("tileirdisasm")
    for (name, entry), (_, message) in EXCLUDED_ENTRIES.items():
        text = (corpus / "conformance" / name).read_text(encoding="utf-8")
        [mod] = _cuda_tile_modules(analyze_text(text).chunks[0].module)
        ops = mod.regions[0].blocks[0].operations
        ops[:] = [op for op in ops if _sym(op) == entry]
        with pytest.raises(RuntimeError) as info:
            nvidia.disassemble(write_bytecode(_as_module([mod])))
        assert message in str(info.value)


def test_round_trip_texts_exist(corpus):
    missing = [n for n in ROUND_TRIP_TEXTS if not Path(corpus / "conformance" / n).is_file()]
    assert missing == []
