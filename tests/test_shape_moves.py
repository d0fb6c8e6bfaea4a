"""cat, extract and insert without shared memory where every thread holds the elements it needs
(tile_lsp/codegen/ops_shape.py ``_local_part``, ``_gather``): the PTX of each op of
tests/kernels/custom_shape_moves, by its ``.loc`` line.  That the results are right is checked on
the emulator against the interpreter (tests/test_ptx_emulator.py, the case of the same kernel)."""

from __future__ import annotations

import re
from pathlib import Path

from tile_lsp.codegen import lower_text

KERNEL = Path(__file__).parent / "kernels" / "custom_shape_moves_f32_32x64.sm_90.mlir"
STAGING = ("bar.sync", "st.shared", "ld.shared", "shfl.sync")


def _ops_ptx() -> dict[str, list[str]]:
    """Result name (``%rows``...) -> the PTX instructions under its ``.loc`` line, guards left out."""
    text = KERNEL.read_text()
    result = lower_text(text, "sm_90", file_name=KERNEL.name)
    assert result.ok, result.diagnostics
    names = {i + 1: m.group(1) for i, line in enumerate(text.splitlines()) if (m := re.match(r"\s*(%\w+) = ", line))}
    out: dict[str, list[str]] = {}
    where = None
    for line in result.ptx.splitlines():
        line = line.strip()
        if m := re.match(r"\.loc 1 (\d+) \d+$", line):
            where = names.get(int(m.group(1)))
        elif where and line.endswith(";") and not line.startswith("."):
            out.setdefault(where, []).append(re.sub(r"^@!?%p\d+ ", "", line))  # without its guard
    return out


def test_slot_local_cat_extract_and_insert_are_register_moves():
    """128 threads.  cat along dim 0: result slots 0-15 are x's, 16-31 y's.  extract of the second
    half of that (constant indices): slots 16-31 of %rows.  extract of rows 16-31 of x: its slots
    8-15.  insert of 16 rows at row 0: slots 0-7 from the block, 8-15 from the destination.  Each
    is one mov a slot, nothing through shared memory."""
    ops = _ops_ptx()
    for name, slots in (("%rows", 32), ("%e0", 16), ("%e3", 8), ("%i0", 16)):
        movs = [i for i in ops[name] if i.startswith("mov.")]
        assert len(movs) == slots, (name, ops[name])
        assert not [i for i in ops[name] if i.startswith(STAGING)], (name, ops[name])


def test_cat_of_replicated_tiles_picks_by_a_thread_bit():
    """cat of two 32-element tiles into 64 elements, all replicated over the 128 threads: thread t
    holds element t % 64, which is element t % 32 of one operand, which it holds too; bit 5 of t
    picks the operand.  One selp."""
    ops = _ops_ptx()
    assert [i.split()[0] for i in ops["%sc"]] == ["selp.f32"], ops["%sc"]


def test_thread_dependent_and_run_time_sources_still_go_through_shared_memory():
    """cat along dim 1 of tiles larger than the CTA (a thread bit picks x or y, whose element is in
    another thread), extract and insert at a run-time index, a block that cuts one slot's rows, and
    an extract whose replicated source is elsewhere: staged, with barriers."""
    ops = _ops_ptx()
    for name in ("%cols", "%e1", "%e2", "%i1", "%i2", "%si"):
        assert any(i.startswith("bar.sync") for i in ops[name]), (name, ops[name])
        assert any(i.startswith("ld.shared") for i in ops[name]), (name, ops[name])


def test_an_extract_index_out_of_the_tile_lowers_without_a_move():
    """A constant extract index past the tile (found by ``bench/fuzz.py --mode lower``: a traceback
    from the register moves) is undefined at run time, and the verifier warns as cuda-tile-opt does;
    the lowering reads it through the staging buffer, as a run-time index."""
    from conftest import require_corpus

    from tile_lsp.analysis.api import analyze_text
    text = (require_corpus() / "kernels" / "cat_extract_insert_f32_t16.sm_90.mlir").read_text()
    line = "  %cst_1_i32_23 = constant <i32: 1> : tile<i32>\n"
    assert text.count(line) == 1
    text = text.replace(line, "  %cst_1_i32_23 = constant <i32: 11> : tile<i32>\n")
    warnings = [d.message for d in analyze_text(text).diagnostics]
    assert "extract index 0 value 11 may be out of bounds (max valid index: 1)" in warnings
    result = lower_text(text, "sm_90", file_name="k.mlir")
    assert result.ok, result.diagnostics
    assert "ld.shared" in result.ptx
