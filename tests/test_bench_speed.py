"""bench/speed.py, the bounded slice: the three speed benchmarks run small, and every figure of
issue 18's table is read from their outputs (the table's patterns follow what the scripts print)."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT, require_corpus, server_env


def test_speed_bench_prints_every_figure_of_the_table():
    require_corpus()
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "speed.py"), "--lines", "400", "--runs", "1",
                           "--quick"], capture_output=True, text=True, env=server_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("issue 18's targets"):].splitlines()[1:]
    assert len(table) == 11
    for row in table:
        assert "not printed" not in row, row
        assert re.search(r"target <= [\d.]+ \S+  (met|NOT met)$", row), row
    # the cached second run answered what the first printed (the figures themselves are not asserted:
    # speed targets are the benchmark's, not a test's)
    assert "second run, from the result cache: " in done.stdout and "(same output: True)" in done.stdout
