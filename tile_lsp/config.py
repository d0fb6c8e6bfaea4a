"""Configuration files: ``tile-lsp.toml`` and ``[tool.tile-lsp]`` in ``pyproject.toml``.

As ruff does, the configuration of a file is the nearest configuration file
found upward from the file's directory: in each directory, ``tile-lsp.toml``
(its keys at the top level, or under ``[tool.tile-lsp]``) is taken first,
then a ``pyproject.toml`` that has a ``[tool.tile-lsp]`` table; the search
stops at the first found (files are not merged).  Keys are the long options
of ``tile-lsp check`` without their dashes (:data:`KEYS`)::

    # tile-lsp.toml
    tile-version = "13.3"
    gpu-name = "sm_90"
    format = "github"
    include = ["*.mlir", "*.tileir", "*.tileirbc"]
    extend-exclude = ["generated/"]
    warn-unsupported-hints = true

A key the command line also gives is overridden by the command line.  An
unknown key, a value of the wrong type or a file that is not TOML is a
:class:`ConfigError` naming the file and the key (``tile-lsp`` prints it and
exits 2).  Glob patterns (``include``, ``exclude``, ``extend-exclude``) are
gitignore-style and match paths relative to the directory of the file that
sets them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Names of the configuration files looked for in each directory, in order.
CONFIG_FILE = "tile-lsp.toml"
PYPROJECT = "pyproject.toml"
#: The table of ``pyproject.toml`` (and, optionally, of ``tile-lsp.toml``) that holds the keys.
TOOL_TABLE = "tile-lsp"

#: Output formats of ``tile-lsp check`` (``--format``; ``format`` key).
FORMATS = ("text", "json", "github", "sarif", "gitlab")
#: Tile IR releases whose rules ``--tile-version`` selects.
TILE_VERSIONS = ("13.1", "13.2", "13.3")
#: Files a directory walk collects by default (``include``): text and bytecode.
DEFAULT_INCLUDE = ("*.mlir", "*.tileir", "*.tileirbc")
#: Directories a walk skips by default (``exclude``; gitignore-style patterns).
DEFAULT_EXCLUDE = (".git/", ".hg/", ".svn/", "node_modules/", ".venv/", "venv/", ".tox/", "__pycache__/",
                   ".tile-lsp-cache/")


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file (and the key)."""


def _gpu_names() -> tuple[str, ...]:
    from tile_lsp.dialect.targets import GPU_NAMES

    return GPU_NAMES


def _choice(choices: Callable[[], tuple[str, ...]]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        allowed = choices()
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"expected one of {', '.join(repr(c) for c in allowed)}, got {value!r}")
        return value

    return check


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _globs(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"expected a list of glob strings, got {value!r}")
    return tuple(value)


def _jobs(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"expected a number of processes (0: one per core), got {value!r}")
    return value


def _with_tileiras(value: Any) -> str | None:
    from tile_lsp.nvidia import DEFAULT_GPU, GPU_NAMES

    if value is True:
        return DEFAULT_GPU
    if value is False:
        return None
    if isinstance(value, str) and value in GPU_NAMES:
        return value
    raise ValueError(f"expected true, false or one of {', '.join(GPU_NAMES)}, got {value!r}")


#: Configuration keys -> (validator, the command-line option it stands for).  A validator
#: returns the value as ``tile-lsp check`` stores it and raises ``ValueError`` with the reason.
KEYS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "tile-version": (_choice(lambda: TILE_VERSIONS), "--tile-version"),
    "gpu-name": (_choice(_gpu_names), "--gpu-name"),
    "format": (_choice(lambda: FORMATS), "--format"),
    "include": (_globs, "--include"),
    "exclude": (_globs, "--exclude"),
    "extend-exclude": (_globs, "--extend-exclude"),
    "respect-gitignore": (_boolean, "--respect-gitignore / --no-respect-gitignore"),
    "force-exclude": (_boolean, "--force-exclude"),
    "warn-unsupported-hints": (_boolean, "-Wunsupported-hints (--warn-unsupported-hints)"),
    "error-unsupported-hints": (_boolean, "-Werr-hints (--error-unsupported-hints)"),
    "split-input-file": (_boolean, "--split-input-file"),
    "verify-diagnostics": (_boolean, "--verify-diagnostics"),
    "with-tileiras": (_with_tileiras, "--with-tileiras"),
    "jobs": (_jobs, "--jobs"),
    "quiet": (_boolean, "--quiet"),
}


@dataclass(frozen=True)
class Config:
    """One configuration file's settings.

    ``path``: the file (``None`` for the empty configuration of a file that
    has none).  ``values``: validated values by key (:data:`KEYS`), only
    the keys the file sets.  ``root``: the directory glob patterns are
    relative to (the file's directory).
    """

    path: Path | None
    root: Path
    values: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key`` (a :data:`KEYS` name), or ``default`` when the file does not set it."""
        return self.values.get(key, default)


def _table(path: Path) -> tuple[dict[str, Any], str] | None:
    """The tile-lsp table of ``path`` and the prefix of its keys in messages (``"tool.tile-lsp."`` or
    ``""``); ``None`` for a pyproject.toml without one.  Raises :class:`ConfigError`."""
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    tool = data.get("tool")
    nested = tool.get(TOOL_TABLE) if isinstance(tool, dict) else None
    if path.name == PYPROJECT:
        if nested is None:
            return None
        prefix = f"tool.{TOOL_TABLE}."
    elif nested is not None:
        if set(data) != {"tool"} or set(tool) != {TOOL_TABLE}:
            extra = sorted(set(data) - {"tool"}) or sorted(f"tool.{k}" for k in set(tool) - {TOOL_TABLE})
            raise ConfigError(f"{path}: unknown key '{extra[0]}' beside [tool.{TOOL_TABLE}]")
        prefix = f"tool.{TOOL_TABLE}."
    else:
        nested, prefix = data, ""
    if not isinstance(nested, dict):
        raise ConfigError(f"{path}: [tool.{TOOL_TABLE}] must be a table")
    return nested, prefix


def load_config(path: Path) -> Config | None:
    """Read and validate the configuration file ``path``.

    Returns ``None`` for a ``pyproject.toml`` without a ``[tool.tile-lsp]``
    table.  Raises :class:`ConfigError` (message ``PATH: ...`` naming the
    key) for an unreadable file, invalid TOML, an unknown key or a value of
    the wrong type.
    """
    found = _table(path)
    if found is None:
        return None
    table, prefix = found
    values: dict[str, Any] = {}
    for key, raw in table.items():
        if key not in KEYS:
            known = ", ".join(KEYS)
            raise ConfigError(f"{path}: unknown key '{prefix}{key}' (known keys: {known})")
        validate, _ = KEYS[key]
        try:
            values[key] = validate(raw)
        except ValueError as exc:
            raise ConfigError(f"{path}: key '{prefix}{key}': {exc}") from None
    return Config(path, path.parent, values)


def config_file_in(directory: Path) -> Path | None:
    """The configuration file of ``directory`` itself (not its parents), or ``None``.

    ``tile-lsp.toml`` first, then a ``pyproject.toml`` with a
    ``[tool.tile-lsp]`` table.  A ``pyproject.toml`` that is not valid TOML
    is passed over here (it may not be ours); :func:`load_config` reports
    the errors of the file found.
    """
    candidate = directory / CONFIG_FILE
    if candidate.is_file():
        return candidate
    candidate = directory / PYPROJECT
    if candidate.is_file():
        try:
            with candidate.open("rb") as f:
                data = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError):
            return None
        tool = data.get("tool")
        if isinstance(tool, dict) and TOOL_TABLE in tool:
            return candidate
    return None


def find_config_file(start: Path) -> Path | None:
    """The configuration file that governs ``start`` (a file or a directory), or ``None``.

    Looks in ``start`` (or its directory, for a file) and then in each parent
    (:func:`config_file_in`); the first found wins.
    """
    start = start.resolve()
    directory = start if start.is_dir() else start.parent
    for d in (directory, *directory.parents):
        found = config_file_in(d)
        if found is not None:
            return found
    return None


class ConfigResolver:
    """Finds and caches the configuration of each directory.

    ``fixed``: a configuration that applies to every file (``--config``);
    ``isolated``: use no configuration file at all (``--isolated``).  Raises
    :class:`ConfigError` from :meth:`for_path` when the file found is invalid.
    """

    def __init__(self, fixed: Path | None = None, isolated: bool = False):
        self._fixed: Config | None = None
        self._isolated = isolated
        self._by_dir: dict[Path, Config] = {}
        if fixed is not None:
            if not fixed.is_file():
                raise ConfigError(f"{fixed}: no such configuration file")
            self._fixed = load_config(fixed) or Config(fixed, fixed.parent.resolve())

    def for_path(self, path: Path) -> Config:
        """The configuration governing ``path`` (a file or directory); an empty one when there is none."""
        if self._fixed is not None:
            return self._fixed
        directory = (path if path.is_dir() else path.parent).resolve()
        if self._isolated:
            return Config(None, directory)
        return self._for_directory(directory)

    def _for_directory(self, directory: Path) -> Config:
        """The configuration of the absolute ``directory``, each directory looked at once."""
        found = self._by_dir.get(directory)
        if found is None:
            file = config_file_in(directory)
            if file is not None:
                found = load_config(file) or Config(None, directory)
            elif directory.parent != directory:
                found = self._for_directory(directory.parent)
            else:
                found = Config(None, directory)
            self._by_dir[directory] = found
        return found
