"""PTX instructions per source op (``LoweringResult.op_counts``): recorded by ``Function.emit`` as the
lowering writes them, checked here against the PTX text itself; the Show PTX answer's
``instructionCounts`` and ``tile-lsp ptx --op-counts``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_codegen import KERNEL
from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.cli import main
from tile_lsp.codegen import lower_text
from tile_lsp.codegen.ptx import Function, SourceLoc
from tile_lsp.server.codegen import lowering_answer

ROOT = Path(__file__).resolve().parents[1]
LOC = re.compile(r"\.loc 1 (\d+) (\d+)$")


def _inputs() -> list[tuple[str, str]]:
    return [("scale.mlir", KERNEL)] + [
        (name, (ROOT / "examples" / name).read_text(encoding="utf-8")) for name in ("vector_add.mlir", "matmul_loop.mlir")]


def _entry_bodies(ptx: str) -> dict[str, list[str]]:
    """Entry name -> the stripped lines between its ``{`` and ``}``."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"^\.visible \.entry (\w+)\(.*?^\{\n(.*?)^\}$", ptx, re.S | re.M):
        out[m.group(1)] = [line.strip() for line in m.group(2).split("\n")]
    return out


def _is_instruction(line: str) -> bool:
    return line.endswith(";") and not line.startswith(".") and not line.endswith(":")


def _text_counts(body: list[str]) -> tuple[dict[tuple[int, int], int], int, int, int]:
    """From the PTX text: instructions after each ``.loc`` (0-based position -> count), the number
    of instructions before the first ``.loc`` (the prologue), the total, and how many ``.loc``
    lines there are."""
    counts: dict[tuple[int, int], int] = {}
    at = None
    before = total = locs = 0
    for line in body:
        m = LOC.match(line)
        if m:
            at = (int(m.group(1)) - 1, int(m.group(2)) - 1)
            locs += 1
        elif _is_instruction(line):
            total += 1
            if at is None:
                before += 1
            else:
                counts[at] = counts.get(at, 0) + 1
    return counts, before, total, locs


@pytest.mark.parametrize("name,text", _inputs(), ids=[n for n, _ in _inputs()])
def test_counts_are_the_instructions_after_each_loc_of_the_ptx(name, text):
    result = lower_text(text, "sm_90", file_name=name)
    assert result.ok, result.diagnostics
    bodies = _entry_bodies(result.ptx)
    assert sorted(bodies) == sorted(result.op_counts) == sorted(k.name for k in result.kernels)
    source_ops = {(op.range.start.line, op.range.start.character): op.name
                  for op in analyze_text(text, AnalysisOptions()).chunks[0].module.walk()}
    for kernel, body in bodies.items():
        expected, prologue, total, _ = _text_counts(body)
        recorded = result.op_counts[kernel]
        assert {pos: c.instructions for pos, c in recorded.items()} == expected
        assert sum(c.instructions for c in recorded.values()) == total - prologue
        assert prologue > 0  # mov %tid.x, the parameter loads, the shared thread-index arithmetic
        # every key is an op of the input, named as the input names it
        assert {pos: c.op for pos, c in recorded.items()} == {pos: source_ops[pos] for pos in recorded}


def test_an_op_in_a_loop_body_counts_once_and_rewritten_ops_keep_their_source_name():
    text = (ROOT / "examples" / "matmul_loop.mlir").read_text(encoding="utf-8")
    result = lower_text(text, "sm_90", file_name="matmul_loop.mlir")
    [(kernel, recorded)] = result.op_counts.items()
    body = _entry_bodies(result.ptx)[kernel]
    names = {c.op for c in recorded.values()}
    # mmaf becomes nv_tileas ops (staging stores, dot) that keep its range: counted as the mmaf
    assert "cuda_tile.mmaf" in names and not any(n.startswith("nv_tileas.") for n in names)
    # the for op's .loc comes back after its body (the back edge): both runs count for it
    [(for_pos, for_count)] = [(pos, c) for pos, c in recorded.items() if c.op == "cuda_tile.for"]
    loc_line = f".loc 1 {for_pos[0] + 1} {for_pos[1] + 1}"
    assert body.count(loc_line) > 1
    assert for_count.instructions == _text_counts(body)[0][for_pos]


def test_function_emit_counts_instructions_but_not_locs_labels_or_prologue():
    f = Function("k", 32)
    f.pro("mov.u32 %r0, 1")
    a, b = SourceLoc(1, 2, 4), SourceLoc(1, 3, 4)
    assert str(a) == ".loc 1 3 5"
    f.loc = a
    f.emit("add.s32 %r1, %r0, 1")
    f.place(f.label())
    f.emit("add.s32 %r2, %r1, 1")
    f.loc = b
    f.emit("ret")
    assert f.instructions == {a: 2, b: 1}
    assert f.body == ["\t.loc 1 3 5", "\tadd.s32 %r1, %r0, 1;", "$L_L_1:", "\t.loc 1 3 5", "\tadd.s32 %r2, %r1, 1;",
                      "\t.loc 1 4 5", "\tret;"]


def test_show_ptx_answer_lists_the_counts_sorted_and_ir_stages_do_not():
    answer = lowering_answer(KERNEL, "ptx", None, None, "scale.mlir")
    result = lower_text(KERNEL, None, file_name="scale.mlir")
    assert answer["ok"] and answer["target"] == "sm_90"
    expected = [{"line": line, "character": col, "kernel": kernel, "op": c.op, "instructions": c.instructions}
                for kernel, ops in result.op_counts.items() for (line, col), c in ops.items()]
    assert answer["instructionCounts"] == sorted(expected, key=lambda c: (c["line"], c["character"]))
    assert [c["op"] for c in answer["instructionCounts"]][-2:] == ["cuda_tile.store_view_tko", "cuda_tile.return"]
    assert "instructionCounts" not in lowering_answer(KERNEL, "nv_tileas", None, None, "scale.mlir")


def test_cli_op_counts_prints_one_line_per_op_one_based(tmp_path, capsys):
    src = tmp_path / "vector_add.mlir"
    text = (ROOT / "examples" / "vector_add.mlir").read_text(encoding="utf-8")
    src.write_text(text)
    out = tmp_path / "out.ptx"
    assert main(["ptx", str(src), "--op-counts", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    result = lower_text(text, None, file_name="vector_add.mlir")
    assert out.read_text() == result.ptx  # -o still writes the PTX; stdout has only the counts
    rows = [line.split("\t") for line in printed.splitlines()]
    expected = [[f"{line + 1}:{col + 1}", kernel, str(c.instructions), c.op]
                for kernel, ops in result.op_counts.items() for (line, col), c in sorted(ops.items())]
    assert rows == expected and len(rows) == len(result.op_counts["vadd"]) > 0
    # 1-based: the addf's line, and the column where its line's text starts (its result's name)
    assert [r[0] for r in rows if r[3] == "cuda_tile.addf"] == [
        f"{i + 1}:{len(ln) - len(ln.lstrip()) + 1}" for i, ln in enumerate(text.splitlines()) if " addf " in ln]
    assert main(["ptx", str(src), "--op-counts"]) == 0
    assert capsys.readouterr().out == printed
