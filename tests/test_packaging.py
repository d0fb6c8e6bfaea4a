"""``python -m build`` makes a wheel and an sdist; the wheel, installed in a fresh virtual environment,
runs ``tile-lsp check`` on the examples.

Building needs the build backend (setuptools) from the package index or pip's
cache, and installing the wheel its dependencies: the same network access as
``pip install -e .``.  Marked ``packaging`` (``-m "not packaging"`` leaves it
out); it takes a minute or two.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from tile_lsp import __version__

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.packaging


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    proc = run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT)], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def test_wheel_and_sdist_contents(dists):
    wheel, sdist = dists["wheel"], dists["sdist"]
    assert wheel.name == f"tile_lsp-{__version__}-py3-none-any.whl"
    assert sdist.name == f"tile_lsp-{__version__}.tar.gz"
    names = set(zipfile.ZipFile(wheel).namelist())
    # every package file of the source tree is in the wheel: modules and data (the grammar)
    tracked = run(["git", "ls-files", "tile_lsp"], cwd=ROOT)
    sources = {p for p in tracked.stdout.split() if p.endswith((".py", ".lark"))} if tracked.returncode == 0 \
        else {p.relative_to(ROOT).as_posix() for p in (ROOT / "tile_lsp").rglob("*") if p.suffix in (".py", ".lark")}
    assert "tile_lsp/grammar/mlir.lark" in sources
    assert sources <= names, sorted(sources - names)[:10]
    dist_info = f"tile_lsp-{__version__}.dist-info"
    assert f"{dist_info}/licenses/LICENSE" in names
    assert f"{dist_info}/entry_points.txt" in names
    entry_points = zipfile.ZipFile(wheel).read(f"{dist_info}/entry_points.txt").decode()
    assert "tile-lsp = tile_lsp.cli:console_main" in entry_points
    assert not any(n.startswith(("tests/", "bench/", "vscode-extension/")) for n in names)
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "LICENSE", "tile_lsp/grammar/mlir.lark", "tile_lsp/cli.py"} <= members


def test_wheel_in_a_fresh_venv_checks_the_examples(dists, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    proc = run([str(python), "-m", "pip", "install", "--quiet", str(dists["wheel"])])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    tile_lsp = env_dir / "bin" / "tile-lsp"
    # from a directory outside the source tree: only the installed package is found
    examples = ROOT / "examples"
    proc = run([str(tile_lsp), "check", str(examples / "vector_add.mlir")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "0 errors, 0 warnings in 0 files (1 file checked)\n"
    proc = run([str(tile_lsp), "check", str(examples)], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "4 errors, 0 warnings in 3 files (6 files checked)"
    where = run([str(python), "-c", "import tile_lsp; print(tile_lsp.__file__)"], cwd=tmp_path)
    assert where.stdout.startswith(str(env_dir)), where.stdout
