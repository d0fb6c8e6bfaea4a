"""The pre-commit hook (.pre-commit-hooks.yaml) and the CI workflows of docs/ci.md, run as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import require_corpus

ROOT = Path(__file__).resolve().parents[1]
CI_DOC = ROOT / "docs" / "ci.md"
BIN = Path(sys.executable).parent  # where pip put the tile-lsp console script


def tile_lsp_env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONPATH=str(ROOT))


def blocks(markdown: str, language: str, heading: str) -> list[str]:
    """The ``language`` code blocks of the ``## heading`` section of ``markdown``."""
    section = markdown.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def hook() -> dict:
    (entry,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return entry


def test_pre_commit_hook_definition():
    h = hook()
    assert h["id"] == "tile-lsp"
    assert h["language"] == "python"
    assert shlex.split(h["entry"])[:2] == ["tile-lsp", "check"]
    files = re.compile(h["files"])
    for name in ("a.mlir", "k/b.tileir", "k/c.tileirbc"):
        assert files.search(name), name
    for name in ("a.mlir.txt", "README.md", "c.tileirbc.orig"):
        assert not files.search(name), name
    assert "text" not in h.get("types", []) and "binary" not in h.get("types", [])  # bytecode is binary
    # the configuration example of docs/ci.md names this hook
    (config,) = blocks(CI_DOC.read_text(), "yaml", "pre-commit")
    assert yaml.safe_load(config)["repos"][0]["hooks"] == [{"id": "tile-lsp"}]


def run_hook(files: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """What pre-commit runs: the hook's entry with the staged files that match ``files:`` appended."""
    h = hook()
    matching = [f for f in files if re.search(h["files"], f)]
    return subprocess.run([*shlex.split(h["entry"]), *h.get("args", []), *matching], cwd=cwd,
                          env=tile_lsp_env(), capture_output=True, text=True, timeout=300)


def test_pre_commit_hook_entry_on_corpus_files(tmp_path):
    corpus = require_corpus()
    kernels = corpus / "kernels"
    names = ["ew_float_arith_f32_b256.sm_90.mlir", "ew_float_arith_f32_b256.sm_90.tileirbc",
             "activations_gelu_f32_b256.sm_100.tileirbc"]
    for name in names:
        shutil.copy(kernels / name, tmp_path / name)
    (tmp_path / "notes.md").write_text("not Tile IR\n")
    proc = run_hook([*names, "notes.md"], tmp_path)
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout + proc.stderr
    assert proc.stdout == "0 errors, 0 warnings in 0 files (3 files checked)\n"
    # a broken text file and a cut bytecode file fail the commit, with the file named
    (tmp_path / "broken.mlir").write_text((ROOT / "examples" / "broken" / "undefined_value.mlir").read_text())
    (tmp_path / "cut.tileirbc").write_bytes((tmp_path / names[1]).read_bytes()[:100])
    proc = run_hook([*names, "broken.mlir", "cut.tileirbc"], tmp_path)
    assert proc.returncode == 1
    assert "broken.mlir:4:19: error: use of undeclared SSA value name" in proc.stdout
    assert "cut.tileirbc:1:1: error: invalid Tile IR bytecode:" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "2 errors, 0 warnings in 2 files (5 files checked)"
    # the project's configuration applies, and its exclusions too (--force-exclude)
    (tmp_path / "tile-lsp.toml").write_text('extend-exclude = ["broken.mlir"]\nformat = "json"\n')
    proc = run_hook([*names, "broken.mlir", "cut.tileirbc"], tmp_path)
    assert proc.returncode == 1
    assert [Path(d["file"]).name for d in json.loads(proc.stdout)] == ["cut.tileirbc"]


def github_workflow() -> dict:
    (workflow,) = blocks(CI_DOC.read_text(), "yaml", "GitHub Actions")
    return yaml.safe_load(workflow)


def test_github_workflow_annotations_and_sarif_upload(tmp_path):
    wf = github_workflow()
    assert wf["permissions"]["security-events"] == "write"
    (job,) = wf["jobs"].values()
    steps = job["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    assert any("pip install" in r for r in runs)
    annotate = next(r for r in runs if "--format github" in r)
    sarif_step = next(s for s in steps if "--format sarif" in s.get("run", ""))
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert sarif_step.get("if") == "always()" and upload.get("if") == "always()"
    assert steps.index(sarif_step) < steps.index(upload)
    sarif_file = upload["with"]["sarif_file"]
    assert f"> {sarif_file}" in sarif_step["run"]

    # run the two check steps as the runner's bash would, on a checkout holding the examples
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "examples", checkout / "examples")
    proc = subprocess.run(["bash", "-e", "-c", annotate], cwd=checkout, env=tile_lsp_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1  # examples/broken has errors: the job fails
    lines = proc.stdout.splitlines()
    assert len(lines) == 4 and all(line.startswith("::error file=examples/broken/") for line in lines)
    assert "::error file=examples/broken/undefined_value.mlir,line=4,col=19," in proc.stdout
    proc = subprocess.run(["bash", "-e", "-c", sarif_step["run"]], cwd=checkout, env=tile_lsp_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr  # status 1 is accepted here
    log = json.loads((checkout / sarif_file).read_text())
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"examples/broken/syntax_then_verify.mlir", "examples/broken/type_mismatch.mlir",
                    "examples/broken/undefined_value.mlir"}  # relative to the checkout, as code scanning wants
    # status 2 (a usage error) still fails the SARIF step
    proc = subprocess.run(["bash", "-e", "-c", sarif_step["run"].replace(" .", " missing/")], cwd=checkout,
                          env=tile_lsp_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "no such file or directory: 'missing/'" in proc.stderr


def test_gitlab_job_writes_the_code_quality_report(tmp_path):
    (job_text,) = blocks(CI_DOC.read_text(), "yaml", "GitLab CI")
    (job,) = yaml.safe_load(job_text).values()
    report = job["artifacts"]["reports"]["codequality"]
    check = next(line for line in job["script"] if line.startswith("tile-lsp check"))
    assert check.endswith(f"> {report}")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    proc = subprocess.run(["bash", "-c", check], cwd=tmp_path, env=tile_lsp_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1
    issues = json.loads((tmp_path / report).read_text())
    assert sorted((i["location"]["path"], i["location"]["lines"]["begin"]) for i in issues) == [
        ("examples/broken/syntax_then_verify.mlir", 5), ("examples/broken/syntax_then_verify.mlir", 6),
        ("examples/broken/type_mismatch.mlir", 6), ("examples/broken/undefined_value.mlir", 4)]


def test_exit_status_table_matches_the_cli():
    from tile_lsp import cli

    table = CI_DOC.read_text().split("## Exit status", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| (\d) \| (.*) \|$", table, re.M))
    assert set(rows) == {str(cli.EXIT_OK), str(cli.EXIT_ERRORS), str(cli.EXIT_USAGE)}


def test_repository_ci_workflow_caches_what_ci_sh_uses():
    (text,) = blocks(CI_DOC.read_text(), "yaml", "This repository's CI")
    (job,) = yaml.safe_load(text)["jobs"].values()
    cache_dir = job["env"]["TILE_LSP_E2E_CACHE"]
    caches = [s["with"] for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
    e2e = next(c for c in caches if c["path"] == cache_dir)
    ci_sh = (ROOT / "vscode-extension" / "ci.sh").read_text()
    key_line = next(line for line in ci_sh.splitlines() if line.startswith("KEY=$("))
    locks = re.findall(r"cat ([\w/.-]+) ([\w/.-]+);", key_line)[0]
    for lock in locks:
        assert f"'vscode-extension/{lock}'" in e2e["key"], lock
        assert (ROOT / "vscode-extension" / lock).is_file()
    assert 'CACHE=${TILE_LSP_E2E_CACHE:-$HOME/.cache/tile-lsp-e2e}' in ci_sh
    assert job["steps"][-1] == {"run": ".ci/run"}


@pytest.mark.parametrize("name", ["ci.md", "editors.md"])
def test_docs_are_linked_from_the_readme(name):
    assert f"docs/{name}" in (ROOT / "README.md").read_text()
