"""One file's functions analysed by several processes (tile_lsp.analysis.incremental.parallel).

The result is that of one process: nothing when the file is clean (then
the parallel path answered: the chunk has no module), and the whole
analysis's diagnostics when any process found one, whichever process's
function it is in, or when the module's own checks (symbol names) fail
across the shares.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import require_corpus
from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.incremental import parallel
from tile_lsp.analysis.incremental.layout import function_units

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the parallel analysis forks")

KERNELS = ("activations_gelu_f32_b256.sm_100", "layernorm_bwd_bf16_32x256.sm_90",
           "flash_attention_bf16_d128_64x64.sm_90", "activations_gelu_f32_b256.sm_100",
           "layernorm_bwd_bf16_32x256.sm_90", "flash_attention_bf16_d128_64x64.sm_90")


def _module(copies: int = 1) -> str:
    """A module of the corpus kernels above (``copies`` times), each entry renamed apart."""
    parts = ["cuda_tile.module @m {\n"]
    for n, name in enumerate(KERNELS * copies):
        text = (require_corpus() / "kernels" / f"{name}.mlir").read_text(encoding="utf-8")
        text = re.sub(r"(entry @[A-Za-z0-9_$.]+)", lambda m, n=n: f"{m.group(1)}_{n}", text)
        parts.append("".join("  " + line if line.strip() else line for line in text.splitlines(keepends=True)))
    parts.append("}\n")
    return "".join(parts)


def _found(analysis) -> list[tuple]:
    return [(d.severity.value, d.message, d.code, d.range, [(n.message, n.range) for n in d.notes])
            for d in analysis.diagnostics]


@pytest.fixture(autouse=True)
def _small_files_too(monkeypatch):
    monkeypatch.setattr(parallel, "MIN_LINES", 0)


def _nth_entry_body(text: str, n: int) -> int:
    """The offset of the first statement of the ``n``-th entry."""
    starts = [m.end() for m in re.finditer(r"entry @[^\n]*\{\n", text)]
    return starts[n]


def test_a_clean_file_is_answered_by_the_processes():
    text = _module()
    alone = analyze_text(text, AnalysisOptions())
    together = analyze_text(text, AnalysisOptions(), workers=2)
    assert _found(alone) == _found(together) == []
    assert alone.chunks[0].module is not None
    assert together.chunks[0].module is None  # the parallel path answered


@pytest.mark.parametrize("entry", [0, 1, 2, 5])
@pytest.mark.parametrize("workers", [2, 3])
def test_an_error_in_any_share_gives_the_whole_analysis(entry, workers):
    text = _module()
    at = _nth_entry_body(text, entry)
    line_end = text.index("\n", at)
    broken = text[:line_end] + " %oops" + text[line_end:]  # a syntax error in that entry's first statement
    alone = analyze_text(broken, AnalysisOptions())
    together = analyze_text(broken, AnalysisOptions(), workers=workers)
    assert _found(alone) and _found(together) == _found(alone)
    assert together.chunks[0].module is not None  # analysed again in one process


def _owned_by(text: str, process: int, workers: int = 2) -> list[int]:
    """The entries that ``parallel.owners`` gives to ``process``."""
    from tile_lsp.analysis.incremental.layout import split_units

    return [i for i, k in enumerate(parallel.owners(text, split_units(text), workers)) if k == process]


def test_copies_of_a_body_stay_together_and_the_processes_get_as_much_text():
    from tile_lsp.analysis.incremental.layout import split_units

    text = _module(copies=4)  # 24 entries: 8 copies of each of 3 bodies
    bodies = [text[u.header_end:u.end] for u in function_units(split_units(text))]
    for workers in (2, 3):
        dealt = parallel.owners(text, split_units(text), workers)
        assert set(dealt) == set(range(workers))
        # a group moves to another process only when its own is full: at most one split per process
        assert len({(b, k) for b, k in zip(bodies, dealt)}) <= len(set(bodies)) + workers
        load = [sum(len(b) for b, k in zip(bodies, dealt) if k == p) for p in range(workers)]
        assert max(load) - min(load) <= max(len(b) for b in bodies)


def test_many_copies_of_one_kernel_are_still_split():
    from tile_lsp.analysis.incremental.layout import split_units

    kernel = (require_corpus() / "kernels" / f"{KERNELS[0]}.mlir").read_text(encoding="utf-8")
    entries = [re.sub(r"(entry @[A-Za-z0-9_$.]+)", lambda m, n=n: f"{m.group(1)}_{n}", kernel) for n in range(100)]
    text = "cuda_tile.module @m {\n" + "".join(
        "".join("  " + line if line.strip() else line for line in e.splitlines(keepends=True)) for e in entries) + "}\n"
    dealt = parallel.owners(text, split_units(text), 2)
    assert len(dealt) == 100 and abs(dealt.count(0) - dealt.count(1)) <= 2


def test_a_type_error_in_another_process_share_gives_the_whole_analysis():
    text = _module()
    # an entry of the child's share: its first i32 tile made an i64 one
    entry = next(i for i in _owned_by(text, 1) if "tile<i32>" in text[_nth_entry_body(text, i):])
    at = text.index("tile<i32>", _nth_entry_body(text, entry))
    assert entry == len(KERNELS) - 1 or at < _nth_entry_body(text, entry + 1)
    broken = text[:at] + "tile<i64>" + text[at + len("tile<i32>"):]
    alone = analyze_text(broken, AnalysisOptions())
    together = analyze_text(broken, AnalysisOptions(), workers=2)
    assert _found(alone) and _found(together) == _found(alone)


def test_a_symbol_defined_twice_across_the_shares_is_found():
    text = _module()
    names = re.findall(r"entry @([A-Za-z0-9_$.]+)", text)
    # two entries of different processes: the child's takes the parent's name
    first, second = _owned_by(text, 0)[0], _owned_by(text, 1)[0]
    twice = text.replace(f"entry @{names[second]}(", f"entry @{names[first]}(", 1)
    alone = analyze_text(twice, AnalysisOptions())
    together = analyze_text(twice, AnalysisOptions(), workers=2)
    assert any("redefinition of symbol" in d.message for d in alone.diagnostics)
    assert _found(together) == _found(alone)


def test_check_spreads_one_file_over_its_jobs(tmp_path):
    """Through the command line: the same report with --jobs 1 and --jobs 2 on a clean and a broken
    file large enough to be spread (in a new process, so at the default threshold)."""
    text = _module(copies=4)
    assert text.count("\n") >= 2000  # parallel.MIN_LINES, the default
    clean = tmp_path / "clean.mlir"
    clean.write_text(text, encoding="utf-8")
    at = _nth_entry_body(text, 7)
    broken = tmp_path / "broken.mlir"
    broken.write_text(text[:at] + "%x = cuda_tile.nope\n" + text[at:], encoding="utf-8")
    for path in (clean, broken):
        out = [subprocess.run([sys.executable, "-m", "tile_lsp.cli", "check", "--no-cache", "--jobs", jobs, str(path)],
                              capture_output=True, text=True) for jobs in ("1", "2")]
        assert out[0].returncode == out[1].returncode == (0 if path is clean else 1)
        assert out[0].stdout == out[1].stdout


def test_names_are_read_past_comments_and_a_quoted_one_keeps_the_file_in_one_process():
    from tile_lsp.analysis.incremental.layout import split_units

    text = _module().replace("  entry @", "  // the kernel\n  entry @", 1)
    assert parallel._distinct_names(text, split_units(text))
    quoted = re.sub(r"entry @([A-Za-z0-9_$.]+)\(", r'entry @"\1"(', text, count=1)
    assert not parallel._distinct_names(quoted, split_units(quoted))
    assert _found(analyze_text(quoted, AnalysisOptions(), workers=2)) == _found(analyze_text(quoted, AnalysisOptions()))


def test_a_share_that_fails_leaves_the_file_to_one_process(monkeypatch):
    real = parallel._share_is_clean

    def failing(chunk, layout, options, source, share):
        if share[0] == 0:  # the calling process's share (the child runs the real one)
            raise RuntimeError("a bug of the share's analysis")
        return real(chunk, layout, options, source, share)

    monkeypatch.setattr(parallel, "_share_is_clean", failing)
    text = _module()
    together = analyze_text(text, AnalysisOptions(), workers=2)
    assert _found(together) == [] and together.chunks[0].module is not None  # analysed in one process


def test_a_fork_that_fails_leaves_the_file_to_one_process(monkeypatch):
    def no_fork():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(parallel.os, "fork", no_fork)
    together = analyze_text(_module(), AnalysisOptions(), workers=2)
    assert _found(together) == [] and together.chunks[0].module is not None
