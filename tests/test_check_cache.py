"""The result cache of ``tile-lsp check`` (:mod:`tile_lsp.check_cache`), through the CLI as users run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import server_env
from tile_lsp.check_cache import CachedCheck, CheckCache
from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Position, Range, Severity

BAD = "cuda_tile.module @m {\n  entry @e() {\n    %x = constant <i32: 1> : tile<i33>\n    return\n  }\n}\n"


def check(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tile_lsp.cli", "check", "--format", "json", *args],
                          capture_output=True, text=True, cwd=cwd, env=env or server_env(), timeout=300)


def records(directory: Path) -> list[Path]:
    return sorted(directory.glob("v1/*/*.json"))


def test_a_second_run_is_answered_from_the_cache(tmp_path):
    (tmp_path / "k.mlir").write_text(BAD)
    first = check(tmp_path, "k.mlir")
    assert first.returncode == 1 and json.loads(first.stdout)
    cache = tmp_path / ".tile-lsp-cache"
    assert len(records(cache)) == 1
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    # the record is what a second run prints: change its message and see it come back
    record = records(cache)[0]
    data = json.loads(record.read_text())
    data["diagnostics"][0]["message"] = "from the cache"
    record.write_text(json.dumps(data))
    second = check(tmp_path, "k.mlir")
    assert second.returncode == 1
    assert [d["message"] for d in json.loads(second.stdout)] == ["from the cache"]
    # --no-cache analyses afresh and leaves the record alone
    fresh = check(tmp_path, "--no-cache", "k.mlir")
    assert json.loads(fresh.stdout) == json.loads(first.stdout)
    assert json.loads(record.read_text())["diagnostics"][0]["message"] == "from the cache"


def test_text_and_options_are_the_key_and_a_damaged_record_is_a_miss(tmp_path):
    (tmp_path / "k.mlir").write_text(BAD)
    elsewhere = tmp_path / "cache"
    first = check(tmp_path, "--cache-dir", str(elsewhere), "k.mlir")
    check(tmp_path, "--cache-dir", str(elsewhere), "--tile-version", "13.3", "k.mlir")
    assert len(records(elsewhere)) == 2  # other options, another record
    assert not (tmp_path / ".tile-lsp-cache").exists()
    for record in records(elsewhere):
        record.write_text("{ not json")
    again = check(tmp_path, "--cache-dir", str(elsewhere), "k.mlir")
    assert json.loads(again.stdout) == json.loads(first.stdout)
    (tmp_path / "k.mlir").write_text(BAD.replace("i33", "i32"))
    clean = check(tmp_path, "--cache-dir", str(elsewhere), "k.mlir")
    assert clean.returncode == 0 and json.loads(clean.stdout) == []
    # the environment names the directory too
    env = dict(server_env(), TILE_LSP_CACHE_DIR=str(tmp_path / "env-cache"))
    check(tmp_path, "k.mlir", env=env)
    assert len(records(tmp_path / "env-cache")) == 1


def test_parallel_runs_share_one_cache(tmp_path):
    for n in range(6):
        (tmp_path / f"k{n}.mlir").write_text(BAD.replace("@e", f"@e{n}"))
    runs = [subprocess.Popen([sys.executable, "-m", "tile_lsp.cli", "check", "--format", "json", "--jobs", "2", "."],
                             cwd=tmp_path, env=server_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    outs = [json.loads(r.communicate(timeout=300)[0]) for r in runs]
    assert outs[0] == outs[1] and len(outs[0]) == 6
    assert len(records(tmp_path / ".tile-lsp-cache")) == 6
    assert not list((tmp_path / ".tile-lsp-cache").glob("v1/*/.tmp-*"))
    assert json.loads(check(tmp_path, ".").stdout) == outs[0]


def test_records_keep_every_field(tmp_path):
    cache = CheckCache(tmp_path)
    where = Range(Position(2, 4), Position(2, 9))
    diagnostics = [Diagnostic(Severity.ERROR, "m", where, "c.d", [Note("n", None), Note("o", where, "file:///x")]),
                   Diagnostic(Severity.WARNING, "w", None, "", [], "tileiras")]
    key = cache.key("text", (False, None))
    assert key != cache.key("text", (True, None)) and key != cache.key("text ", (False, None))
    assert cache.get(key) is None
    cache.put(key, CachedCheck(diagnostics, 3, 2, True))
    assert cache.get(key) == CachedCheck(diagnostics, 3, 2, True)

