"""Shared test fixtures: the corpus in ../shared (skipped when absent, except in CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"


def server_env() -> dict[str, str]:
    """Environment for a language-server subprocess: this checkout first on ``PYTHONPATH``."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + path if path else "")
    return env


def require_corpus() -> Path:
    """The corpus directory; skip the test when it is absent, fail when CI=true."""
    if CORPUS.is_dir():
        return CORPUS
    message = f"corpus not found at {CORPUS} (expected ../shared/corpus beside the project)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of ../shared/corpus."""
    return require_corpus()


def require_nvidia_tool(name: str) -> str:
    """Path of NVIDIA tool ``name`` (tileiras, tileirdisasm) from the ``nvidia`` extra.

    Skips the test when it is not installed, fails when CI=true (CI installs
    ``.[test,nvidia]``).
    """
    from tile_lsp import nvidia

    exe = nvidia.find_tool(name)
    if exe is not None:
        return exe
    message = f"{name} is not installed (pip install -e '.[test,nvidia]')"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)
