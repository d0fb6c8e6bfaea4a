"""The command line as users of ruff or mypy expect it: subcommands, configuration files,
directory walks (bytecode, exclusions, .gitignore), --jobs, the progress bar, --help examples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tile_lsp.bytecode.cli import translate_main
from tile_lsp.cli import main
from tile_lsp.config import ConfigError, ConfigResolver, load_config
from tile_lsp.files import Selection, collect_files

ROOT = Path(__file__).resolve().parents[1]

VALID = """\
cuda_tile.module @m {
  testing$func @k(%a: tile<4xf32>) {
    %0 = absf %a : tile<4xf32>
    return
  }
}
"""

INVALID = VALID.replace("absf", "absi")
ABSI_ERROR = ("'cuda_tile.absi' op operand #0 must be tile of i1 or i8 or i16 or i32 or i64 values, "
              "but got '!cuda_tile.tile<4xf32>'")

# an f8 constant: an error for sm_80 (before sm_89), nothing for sm_90 or without a target
F8_CONSTANT = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<f32>>) {
    %c = constant <f8E4M3FN: 1.0> : tile<f8E4M3FN>
    return
  }
}
"""
F8_SM80 = "Incompatibility with architecture 'sm_80': unsupported type 'f8E4M3FN'"

# an optimization hint that cuda-tile-opt warns about only with -Wunsupported-hints
HINTED = """\
cuda_tile.module @m {
  entry @k(%arg0: !cuda_tile.tile<ptr<f32>>) optimization_hints=<sm_100={num_qqq=1}> {
    return
  }
}
"""
HINT_WARNING = "num_qqq is not known hint for current Operation"

# an attribute Tile IR 13.3 introduced: reported when an older release is targeted
APPROX_EXP = """\
cuda_tile.module @m {
  entry @k(%f: tile<f32>) {
    %e = exp %f rounding<approx> : tile<f32>
    return
  }
}
"""
NEEDS_13_3 = "attribute 'rounding_mode' requires bytecode version 13.3+, but targeting {}"


def run_main(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def messages(out: str) -> list[str]:
    return [d["message"] for d in json.loads(out)]


# -- one CLI style ------------------------------------------------------------------


def test_check_subcommand_and_the_check_alias_agree(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text(INVALID)
    want = run_main(capsys, "check", "--format", "json", str(bad))
    assert want[0] == 1 and messages(want[1]) == [ABSI_ERROR] and want[2] == ""
    assert run_main(capsys, "--check", str(bad), "--format", "json") == want
    assert run_main(capsys, "--check", "--format", "json", str(bad)) == want
    assert run_main(capsys, "check", str(bad), "--format", "json") == want
    code, out, _ = run_main(capsys, "check", str(bad))
    assert code == 1 and out.splitlines()[-1] == "1 error, 0 warnings in 1 file (1 file checked)"


def test_check_usage_errors(tmp_path, capsys):
    code, _, err = run_main(capsys, "check")
    assert code == 2 and "tile-lsp: error: nothing to do: check needs at least one PATH" in err
    code, _, err = run_main(capsys, "check", "--format", "xml", "x.mlir")
    assert code == 2 and "invalid choice: 'xml'" in err
    code, _, err = run_main(capsys, "check", str(tmp_path / "missing.mlir"))
    assert code == 2 and f"no such file or directory: '{tmp_path / 'missing.mlir'}'" in err
    code, _, err = run_main(capsys, "check", "--jobs", "-3", str(tmp_path))
    assert code == 2 and "invalid number of jobs '-3'" in err


def test_console_script_check_subcommand(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(INVALID)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "check", "--format", "json", str(bad)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert [(d["line"], d["column"]) for d in json.loads(proc.stdout)] == [(3, 10)]
    assert proc.stderr == ""


@pytest.mark.parametrize("command", ["check", "ptx", "lower", "translate", "serve"])
def test_every_subcommand_has_help_with_examples(command, capsys):
    code, out, _ = run_main(capsys, command, "--help")
    assert code == 0
    assert f"usage: tile-lsp {command}" in out
    examples = out[out.index("examples:"):]
    assert f"  tile-lsp {command} " in examples


def test_top_level_help_lists_the_commands(capsys):
    code, out, _ = run_main(capsys, "--help")
    assert code == 0
    for command in ("check PATH...", "ptx FILE", "lower FILE", "translate IN", "serve"):
        assert f"\n  {command}" in out
    assert "'tile-lsp --check PATH...' is the same as 'tile-lsp check PATH...'" in out


def test_translate_bytecode_version_and_its_deprecated_spelling(tmp_path, capsys):
    src = tmp_path / "k.mlir"
    src.write_text(VALID.replace("testing$func", "entry").replace("(%a: tile<4xf32>)", "()")
                   .replace("    %0 = absf %a : tile<4xf32>\n", ""))
    new, old, default = tmp_path / "new.tileirbc", tmp_path / "old.tileirbc", tmp_path / "default.tileirbc"
    assert translate_main(["--to-bytecode", "--bytecode-version", "13.1", str(src), "-o", str(new)]) == 0
    assert capsys.readouterr().err == ""
    assert main(["translate", "--to-bytecode", "--tile-version", "13.1", str(src), "-o", str(old)]) == 0
    assert "warning: --tile-version is deprecated here; use --bytecode-version" in capsys.readouterr().err
    assert old.read_bytes() == new.read_bytes()
    assert translate_main(["--to-bytecode", str(src), "-o", str(default)]) == 0
    assert default.read_bytes() != new.read_bytes()  # the newest version, not 13.1
    assert translate_main(["--to-bytecode", "--bytecode-version", "13.1", "--tile-version", "13.2",
                           str(src), "-o", str(old)]) == 2
    assert "disagree" in capsys.readouterr().err


def test_gitlab_code_quality_format(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text(INVALID)
    code, out, _ = run_main(capsys, "check", "--format", "gitlab", str(bad))
    assert code == 1
    (issue,) = json.loads(out)
    assert {k: v for k, v in issue.items() if k != "fingerprint"} == {
        "description": ABSI_ERROR, "check_name": "cuda_tile.absi.operand-type", "severity": "major",
        "location": {"path": str(bad), "lines": {"begin": 3}}}
    assert len(issue["fingerprint"]) == 64
    assert json.loads(run_main(capsys, "check", "--format", "gitlab", str(bad))[1]) == [issue]  # stable


# -- directory walks ---------------------------------------------------------------


def _bytecode(tmp_path: Path, name: str) -> Path:
    src = tmp_path / "src.txt"
    src.write_text("cuda_tile.module @m {\n  entry @k() {\n    return\n  }\n}\n")
    out = tmp_path / name
    out.parent.mkdir(parents=True, exist_ok=True)
    assert translate_main(["--to-bytecode", str(src), "-o", str(out)]) == 0
    return out


def test_check_dir_counts_the_bytecode_files(tmp_path, capsys):
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.mlir").write_text(VALID)
    (tree / "sub" / "b.tileir").write_text(VALID)
    _bytecode(tmp_path, "tree/sub/c.tileirbc")
    _bytecode(tmp_path, "tree/d.tileirbc")
    code, out, _ = run_main(capsys, "check", str(tree))
    assert code == 0
    assert out.strip() == "0 errors, 0 warnings in 0 files (4 files checked)"
    code, out, _ = run_main(capsys, "check", "--format", "json", "--include", "*.tileirbc", str(tree))
    assert code == 0 and out.strip() == "[]"
    assert collect_files([str(tree)], selection=Selection(include=("*.tileirbc",))) == [
        tree / "d.tileirbc", tree / "sub" / "c.tileirbc"]


def test_walk_respects_gitignore_and_excludes(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitignore").write_text("generated/\n*.skip.mlir\n")
    files = ["a.mlir", "x.skip.mlir", "generated/g.mlir", "k/b.tileir", "k/keep.skip.mlir",
             "k/old/c.mlir", "node_modules/pkg/n.mlir", ".venv/v.mlir", "k/notes.txt"]
    for f in files:
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        (repo / f).write_text(VALID)
    (repo / "k" / ".gitignore").write_text("!keep.skip.mlir\nold/\n")
    monkeypatch.chdir(tmp_path)

    def walk(path: str = "repo", **selection) -> list[str]:
        return [p.as_posix() for p in collect_files([path], selection=Selection(**selection))]

    assert walk() == ["repo/a.mlir", "repo/k/b.tileir", "repo/k/keep.skip.mlir"]
    # a .gitignore above the walked directory (inside the repository) counts too
    assert walk("repo/k") == ["repo/k/b.tileir", "repo/k/keep.skip.mlir"]
    # a directory named on the command line is walked even when git ignores it
    assert walk("repo/generated") == ["repo/generated/g.mlir"]
    assert walk(respect_gitignore=False) == [
        "repo/a.mlir", "repo/generated/g.mlir", "repo/k/b.tileir", "repo/k/keep.skip.mlir",
        "repo/k/old/c.mlir", "repo/x.skip.mlir"]
    assert walk(extend_exclude=("k/",)) == ["repo/a.mlir"]
    # --exclude replaces the default list (which skips node_modules/ and .venv/)
    assert walk(exclude=("*.tileir",)) == ["repo/.venv/v.mlir", "repo/a.mlir", "repo/k/keep.skip.mlir",
                                           "repo/node_modules/pkg/n.mlir"]
    # files named on the command line are checked whatever the patterns, unless --force-exclude
    assert [p.as_posix() for p in collect_files(["repo/x.skip.mlir", "repo/k/notes.txt"],
                                                selection=Selection(extend_exclude=("*.txt",)))] == [
        "repo/x.skip.mlir", "repo/k/notes.txt"]
    assert [p.as_posix() for p in collect_files(["repo/x.skip.mlir", "repo/k/notes.txt"],
                                                selection=Selection(extend_exclude=("*.txt",),
                                                                    force_exclude=True))] == ["repo/x.skip.mlir"]


# -- configuration files -------------------------------------------------------------


def test_config_file_sets_options_and_the_command_line_overrides(tmp_path, monkeypatch, capsys):
    project = tmp_path / "project"
    (project / "kernels" / "deep").mkdir(parents=True)
    f = project / "kernels" / "deep" / "f8.mlir"
    f.write_text(F8_CONSTANT)
    (project / "tile-lsp.toml").write_text('gpu-name = "sm_80"\nformat = "json"\n')
    monkeypatch.chdir(project)
    # found upward from the checked file; the format from the one of the current directory
    code, out, _ = run_main(capsys, "check", str(f))
    assert code == 1 and messages(out) == [F8_SM80]
    # the command line wins over the file
    code, out, _ = run_main(capsys, "check", "--gpu-name", "sm_90", str(f))
    assert code == 0 and json.loads(out) == []
    code, out, _ = run_main(capsys, "--check", str(f), "--format", "text", "--quiet")
    assert code == 1 and out.startswith(f"{f}:3:10: error: {F8_SM80}")
    # --isolated: no configuration file
    code, out, _ = run_main(capsys, "check", "--isolated", str(f))
    assert code == 0 and out.strip() == "0 errors, 0 warnings in 0 files (1 file checked)"
    # --config: this file for every checked file
    other = tmp_path / "other.toml"
    other.write_text('gpu-name = "sm_90"\nquiet = true\n')
    code, out, _ = run_main(capsys, "check", "--config", str(other), str(f))
    assert (code, out) == (0, "")


def test_config_sets_the_tile_version(tmp_path, monkeypatch, capsys):
    (tmp_path / "tile-lsp.toml").write_text('tile-version = "13.1"\n')
    f = tmp_path / "exp.mlir"
    f.write_text(APPROX_EXP)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_main(capsys, "check", "--format", "json", str(f))
    assert code == 1 and messages(out) == [NEEDS_13_3.format("13.1")]
    code, out, _ = run_main(capsys, "check", "--format", "json", "--tile-version", "13.2", str(f))
    assert code == 1 and messages(out) == [NEEDS_13_3.format("13.2")]
    code, out, _ = run_main(capsys, "check", "--format", "json", "--tile-version", "13.3", str(f))
    assert code == 0 and json.loads(out) == []


def test_config_in_pyproject_and_the_hint_switches(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "kernels"\n\n[tool.tile-lsp]\nwarn-unsupported-hints = true\n')
    f = tmp_path / "hinted.mlir"
    f.write_text(HINTED)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_main(capsys, "check", "--format", "json", str(f))
    assert code == 0 and messages(out) == [HINT_WARNING]
    code, out, _ = run_main(capsys, "check", "--format", "json", "-Werr-hints", str(f))
    assert code == 1 and messages(out) == [HINT_WARNING, "'cuda_tile.entry' op Optimization hints verification failed"]
    code, out, _ = run_main(capsys, "check", "--format", "json", "--no-warn-unsupported-hints", str(f))
    assert code == 0 and json.loads(out) == []
    # a tile-lsp.toml nearer to the file wins over the pyproject.toml above it (files are not merged)
    (tmp_path / "sub").mkdir()
    g = tmp_path / "sub" / "hinted.mlir"
    g.write_text(HINTED)
    (tmp_path / "sub" / "tile-lsp.toml").write_text("[tool.tile-lsp]\nerror-unsupported-hints = true\n")
    code, out, _ = run_main(capsys, "check", "--format", "json", str(g))
    assert code == 0 and json.loads(out) == []  # -Werr-hints alone: nothing to report


def test_config_walk_patterns_are_relative_to_the_config_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "tile-lsp.toml").write_text('extend-exclude = ["legacy/"]\ninclude = ["*.mlir", "*.ir"]\n')
    for f in ("a.mlir", "b.ir", "c.tileir", "legacy/d.mlir", "src/legacy/e.mlir"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text(VALID)
    monkeypatch.chdir(tmp_path / "src")
    got = collect_files([str(tmp_path)], ConfigResolver())
    assert [p.relative_to(tmp_path).as_posix() for p in got] == ["a.mlir", "b.ir"]


@pytest.mark.parametrize("text,message", [
    ('tile-version = "13.3"\ngpu_name = "sm_90"\n', "unknown key 'gpu_name' (known keys: tile-version, gpu-name,"),
    ('gpu-name = "sm_75"\n', "key 'gpu-name': expected one of 'sm_80',"),
    ("warn-unsupported-hints = 1\n", "key 'warn-unsupported-hints': expected true or false, got 1"),
    ('include = "*.mlir"\n', "key 'include': expected a list of glob strings, got '*.mlir'"),
    ('format = "xml"\n', "key 'format': expected one of 'text', 'json', 'github', 'sarif', 'gitlab', got 'xml'"),
    ("jobs = -1\n", "key 'jobs': expected a number of processes (0: one per core), got -1"),
    ("gpu-name = \n", "not valid TOML: "),
])
def test_bad_config_is_a_usage_error_naming_file_and_key(text, message, tmp_path, monkeypatch, capsys):
    config = tmp_path / "tile-lsp.toml"
    config.write_text(text)
    f = tmp_path / "ok.mlir"
    f.write_text(VALID)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(capsys, "check", str(f))
    assert code == 2 and out == ""
    assert err.startswith(f"tile-lsp: error: {config.resolve()}: {message}"), err
    assert "Traceback" not in err


def test_bad_pyproject_table_names_the_dotted_key(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.tile-lsp]\ntile_version = '13.3'\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml: unknown key 'tool.tile-lsp.tile_version'"):
        load_config(config)
    config.write_text("[tool.black]\nline-length = 100\n")
    assert load_config(config) is None  # not ours


# -- --jobs and the progress bar -------------------------------------------------------


def test_jobs_give_the_same_output_in_the_same_order(tmp_path, capsys):
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(6):
        (tree / f"k{i}.mlir").write_text(INVALID if i % 2 else VALID)
    _bytecode(tmp_path, "tree/z.tileirbc")
    for fmt in ("text", "json", "sarif"):
        serial = run_main(capsys, "check", "--format", fmt, "-j", "1", str(tree), str(ROOT / "examples"))
        parallel = run_main(capsys, "check", "--format", fmt, "--jobs", "3", str(tree), str(ROOT / "examples"))
        assert serial == parallel, fmt
        assert serial[0] == 1
    assert serial[1].count(ABSI_ERROR) == 3
    everything = run_main(capsys, "check", "--jobs", "0", "--quiet", str(tree))
    assert everything == run_main(capsys, "check", "--quiet", str(tree))


def _run_with_stderr_tty(args: list[str], cwd: Path) -> tuple[int, str, bytes]:
    """Run tile-lsp with stderr on a pseudo-terminal; returns (status, stdout, stderr bytes)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # as a terminal window
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80")
    proc = subprocess.Popen([sys.executable, "-m", "tile_lsp.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode()
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, out, b"".join(chunks)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_bar_only_on_a_terminal_and_for_more_than_a_few_files(tmp_path):
    for i in range(6):
        (tmp_path / f"k{i}.mlir").write_text(VALID)
    code, out, err = _run_with_stderr_tty(["check", "."], tmp_path)
    assert code == 0 and out == "0 errors, 0 warnings in 0 files (6 files checked)\n"
    assert err.startswith(b"\rtile-lsp check:   0%|") and b"| 0/6 [00:00<?, ?file/s]" in err
    assert err.endswith(b"\r" + b" " * 80 + b"\r")  # cleared at the end: the terminal keeps the report only
    code, _, err = _run_with_stderr_tty(["check", "--no-progress", "."], tmp_path)
    assert code == 0 and err == b""
    code, _, err = _run_with_stderr_tty(["check", "k0.mlir", "k1.mlir", "k2.mlir", "k3.mlir"], tmp_path)
    assert code == 0 and err == b""  # fewer than 5 files
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "check", "."], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""  # not a terminal: silent


# -- ptx and lower read the target of the configuration ----------------------------------


def test_ptx_takes_the_gpu_of_the_configuration(tmp_path, capsys):
    kernel = tmp_path / "vector_add.mlir"
    kernel.write_text((ROOT / "examples" / "vector_add.mlir").read_text())
    (tmp_path / "tile-lsp.toml").write_text('gpu-name = "sm_80"\n')
    code, out, _ = run_main(capsys, "ptx", str(kernel))
    assert code == 0 and ".target sm_80\n" in out
    code, out, _ = run_main(capsys, "ptx", "--gpu-name", "sm_90", str(kernel))
    assert code == 0 and ".target sm_90\n" in out
    (tmp_path / "tile-lsp.toml").write_text('gpu = "sm_80"\n')
    code, _, err = run_main(capsys, "ptx", str(kernel))
    assert code == 2 and "tile-lsp.toml: unknown key 'gpu'" in err


@pytest.mark.skipif(__import__("multiprocessing").get_start_method() != "fork",
                    reason="the workers must inherit the patched function")
def test_a_dying_worker_is_a_usage_error_not_a_traceback(monkeypatch, capsys):
    import tile_lsp.cli as cli

    monkeypatch.setattr(cli, "check_file", lambda path, args, workers=1: os._exit(3))
    code, out, err = run_main(capsys, "check", "--jobs", "2", str(ROOT / "examples"))
    assert (code, out) == (2, "")
    assert err.startswith("tile-lsp: error: a --jobs worker process died (") and err.endswith("try --jobs 1\n")
