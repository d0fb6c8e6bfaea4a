"""The tile-lsp command line: --check, formats, exit codes, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tile_lsp.cli import main

ROOT = Path(__file__).resolve().parents[1]

VALID = """\
cuda_tile.module @m {
  testing$func @k(%a: tile<4xf32>) {
    %0 = absf %a : tile<4xf32>
    return
  }
}
"""

INVALID = """\
cuda_tile.module @m {
  testing$func @k(%a: tile<4xf32>) {
    %0 = absi %a : tile<4xf32>
    return
  }
}
"""


def run_main(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_file_exits_zero(tmp_path, capsys):
    f = tmp_path / "ok.mlir"
    f.write_text(VALID)
    code, out, _ = run_main(capsys, "--check", str(f))
    assert code == 0
    assert out.strip() == "0 errors, 0 warnings in 0 files (1 file checked)"


def test_errors_print_mlir_style_and_exit_one(tmp_path, capsys):
    f = tmp_path / "bad.mlir"
    f.write_text(INVALID)
    code, out, _ = run_main(capsys, "--check", str(f))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (f"{f}:3:10: error: 'cuda_tile.absi' op operand #0 must be tile of i1 or i8 or i16 "
                        "or i32 or i64 values, but got '!cuda_tile.tile<4xf32>'")
    assert lines[1] == "    %0 = absi %a : tile<4xf32>"
    assert lines[2] == "         ^"
    assert lines[-1] == "1 error, 0 warnings in 1 file (1 file checked)"


def test_json_format_fields(tmp_path, capsys):
    f = tmp_path / "bad.mlir"
    f.write_text(INVALID.replace("%0 = absi %a", "%0 = absf %nope"))
    code, out, _ = run_main(capsys, "--check", str(f), "--format", "json")
    assert code == 1
    (obj,) = json.loads(out)
    assert obj["file"] == str(f)
    assert (obj["line"], obj["column"], obj["endLine"], obj["endColumn"]) == (3, 15, 3, 20)
    assert obj["severity"] == "error"
    assert obj["message"] == "use of undeclared SSA value name"
    assert obj["code"] == "structure.undefined-value"
    assert obj["source"] == "tile-lsp"
    assert obj["notes"] == []


def test_github_and_sarif_formats(tmp_path, capsys):
    f = tmp_path / "bad.mlir"
    f.write_text(INVALID)
    code, out, _ = run_main(capsys, "--check", str(f), "--format", "github")
    assert code == 1
    assert out.startswith(f"::error file={f},line=3,col=10,")
    assert "op operand #0 must be tile of i1" in out
    code, out, _ = run_main(capsys, "--check", str(f), "--format", "sarif")
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    result = log["runs"][0]["results"][0]
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_split_input_file_keeps_whole_file_lines(tmp_path, capsys):
    f = tmp_path / "split.mlir"
    f.write_text(VALID + "// -----\n" + INVALID)
    code, out, _ = run_main(capsys, "--check", str(f), "--split-input-file")
    assert code == 1
    assert out.splitlines()[0].startswith(f"{f}:10:10: error: 'cuda_tile.absi' op operand #0")


def test_verify_diagnostics_pass_and_fail(tmp_path, capsys):
    good = tmp_path / "good.mlir"
    good.write_text(INVALID.replace("    %0 = absi", "    // expected-error @below {{must be tile of i1}}\n    %0 = absi"))
    code, out, _ = run_main(capsys, "--check", str(good), "--verify-diagnostics", "--split-input-file")
    assert code == 0, out
    bad = tmp_path / "bad.mlir"
    bad.write_text(VALID.replace("    %0 = absf", "    // expected-error @below {{nothing like this}}\n    %0 = absf"))
    code, out, _ = run_main(capsys, "--check", str(bad), "--verify-diagnostics")
    assert code == 1
    assert f'{bad}:3:8: error: expected error "nothing like this" was not produced' in out


def test_directory_search_and_missing_paths(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.tileir").write_text(VALID)
    (tmp_path / "sub" / "notes.txt").write_text("not IR")
    code, out, _ = run_main(capsys, "--check", str(tmp_path))
    assert code == 0 and "(1 file checked)" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_main(capsys, "--check", str(empty))
    assert code == 2 and f"no files matching *.mlir, *.tileir, *.tileirbc under '{empty}'" in err
    code, _, err = run_main(capsys, "--check", str(tmp_path / "missing.mlir"))
    assert code == 2 and "no such file or directory" in err


def test_usage_errors_exit_two(capsys):
    code, _, err = run_main(capsys)
    assert code == 2 and "nothing to do" in err
    code, _, _ = run_main(capsys, "--check", "x.mlir", "--format", "xml")
    assert code == 2


def test_binary_and_invalid_utf8_files_get_diagnostics(tmp_path, capsys):
    binary = tmp_path / "blob.mlir"
    binary.write_bytes(b"\x7fELF\x00\x01\x02" + bytes(range(256)))
    code, out, _ = run_main(capsys, "--check", str(binary))
    assert code == 1 and "not a text file: NUL byte at offset 4" in out
    latin = tmp_path / "latin.mlir"
    latin.write_bytes(b"// caf\xe9\ncuda_tile.module @m {\n}\n")
    code, out, _ = run_main(capsys, "--check", str(latin))
    assert code == 1 and "invalid UTF-8: byte 0xe9 at offset 6" in out


def test_console_script_runs_in_a_subprocess(tmp_path):
    f = tmp_path / "bad.mlir"
    f.write_text(INVALID)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "--check", str(f), "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)[0]["line"] == 3
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", ["vector_add.mlir", "row_max.mlir", "matmul_loop.mlir"])
def test_bundled_examples_are_clean(name, capsys):
    code, out, _ = run_main(capsys, "--check", str(ROOT / "examples" / name))
    assert code == 0, out


def test_bundled_broken_examples_report_their_errors(capsys):
    code, out, _ = run_main(capsys, "--check", str(ROOT / "examples" / "broken"))
    assert code == 1
    assert "use of value '%y' expects different type than prior uses" in out
    assert "use of undeclared SSA value name" in out
    assert "expected ':'" in out and "'cuda_tile.absi' op operand #0 must be tile of i1" in out


def test_options_before_or_after_the_paths(capsys, tmp_path):
    good = tmp_path / "good.mlir"
    good.write_text("cuda_tile.module @m {\n}\n")
    bad = tmp_path / "bad.mlir"
    bad.write_text("cuda_tile.module @m {\n  entry @k() {\n    %x = addf\n  }\n}\n")
    want = run_main(capsys, "--check", str(good), str(bad), "--format", "json", "--tile-version", "13.3")
    assert want[0] == 1 and json.loads(want[1]) and json.loads(want[1])[0]["file"].endswith("bad.mlir")
    for argv in (["--check", "--format", "json", "--tile-version", "13.3", str(good), str(bad)],
                 ["--format", "json", str(good), "--check", "--tile-version", "13.3", str(bad)],
                 [str(good), "--tile-version", "13.3", str(bad), "--format", "json", "--check"]):
        assert run_main(capsys, *argv) == want, argv
    split = run_main(capsys, "--check", "--split-input-file", "--quiet", str(bad))
    assert split == run_main(capsys, str(bad), "--quiet", "--check", "--split-input-file")
    code, _, err = run_main(capsys, "--check", "--format", "json")
    assert code == 2 and "--check needs at least one PATH" in err
    code, _, err = run_main(capsys, str(bad))
    assert code == 2 and "give --check PATH" in err


def test_with_tileiras_before_a_path_keeps_the_path(tmp_path):
    from tile_lsp.cli import _bare_optional_values

    assert _bare_optional_values(["--check", "--with-tileiras", "a.mlir"]) == ["--check", "--with-tileiras=sm_90",
                                                                            "a.mlir"]
    assert _bare_optional_values(["--with-tileiras", "sm_100", "a.mlir"]) == ["--with-tileiras", "sm_100", "a.mlir"]
    assert _bare_optional_values(["a.mlir", "--with-tileiras"]) == ["a.mlir", "--with-tileiras=sm_90"]


# what `tile-lsp --check` of a named file leaves unimported (docs/performance.md: start-up)
NOT_IMPORTED_BY_CHECK = ("pathspec", "subprocess", "pygls", "lsprotocol", "tile_lsp.server", "tile_lsp.codegen",
                         "tile_lsp.bytecode")
_IMPORTED = """
import sys
from tile_lsp.cli import main
code = main(sys.argv[1:])
print(code, *sorted(m for m in sys.modules if any(m == w or m.startswith(w + ".") for w in {watched!r})))
"""


def test_check_of_a_named_file_imports_only_what_it_needs(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    script = _IMPORTED.format(watched=NOT_IMPORTED_BY_CHECK)
    out = subprocess.run([sys.executable, "-c", script, "--check", str(ROOT / "examples" / "vector_add.mlir")],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "0"
