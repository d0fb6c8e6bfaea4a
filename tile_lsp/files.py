"""Which files ``tile-lsp check`` reads: paths as named, directories walked.

A named file is checked whatever its name (unless ``--force-exclude`` and an
exclude pattern matches it).  A named directory is walked recursively and
yields the files that match an ``include`` pattern (by default ``*.mlir``,
``*.tileir`` and ``*.tileirbc``) and no ``exclude`` / ``extend-exclude``
pattern, skipping what ``.gitignore`` files ignore (those of the walked tree
and, inside a git repository, those between the repository's root and the
walked directory).  Patterns are gitignore-style (:mod:`pathspec`); those of
a configuration file match paths relative to that file's directory, those of
the command line paths relative to the current directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from tile_lsp.config import DEFAULT_EXCLUDE, DEFAULT_INCLUDE, Config, ConfigResolver

if TYPE_CHECKING:
    import pathspec


class PathError(Exception):
    """A path that names nothing to check (missing, not a file or directory, no IR file under it)."""


@dataclass(frozen=True)
class Selection:
    """File-selection options given on the command line; ``None``: the configuration's (or the default).

    ``include`` / ``exclude`` replace the configuration's lists;
    ``extend_exclude`` adds to them.  ``respect_gitignore``: skip what
    ``.gitignore`` ignores (default true).  ``force_exclude``: apply the
    exclusions to files named on the command line too (default false).
    """

    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool | None = None
    force_exclude: bool | None = None


def _spec(patterns: Sequence[str]) -> pathspec.GitIgnoreSpec:
    import pathspec  # here: a file named on the command line needs no pattern (~20 ms of imports)

    return pathspec.GitIgnoreSpec.from_lines(list(patterns))


def _relative(path: Path, base: Path) -> str | None:
    """``path`` relative to ``base`` in POSIX form, or ``None`` when it is not under ``base``."""
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return None


class _Rules:
    """The include and exclude patterns of one configuration, with the command line's over them."""

    def __init__(self, config: Config, selection: Selection, cwd: Path):
        self.config = config
        self.include_patterns = selection.include or config.get("include") or DEFAULT_INCLUDE
        self._include_base = cwd if selection.include else config.root
        # (patterns, the directory they are relative to); compiled on first use (_excludes)
        exclude = selection.exclude if selection.exclude is not None else config.get("exclude")
        self._exclude_patterns: list[tuple[Sequence[str], Path]] = [
            (DEFAULT_EXCLUDE if exclude is None else exclude, cwd if selection.exclude is not None else config.root)]
        if config.get("extend-exclude"):
            self._exclude_patterns.append((config.get("extend-exclude"), config.root))
        if selection.extend_exclude:
            self._exclude_patterns.append((selection.extend_exclude, cwd))

    @cached_property
    def _include(self) -> pathspec.GitIgnoreSpec:
        return _spec(self.include_patterns)

    @cached_property
    def _excludes(self) -> list[tuple[pathspec.GitIgnoreSpec, Path]]:
        return [(_spec(patterns), base) for patterns, base in self._exclude_patterns]

    def included(self, path: Path, walk_root: Path) -> bool:
        """Whether the file ``path`` (absolute) matches an include pattern."""
        rel = _relative(path, self._include_base) or _relative(path, walk_root) or path.name
        return self._include.match_file(rel)

    def excluded(self, path: Path, walk_root: Path, is_dir: bool) -> bool:
        """Whether ``path`` (absolute) matches an exclude pattern (a directory as ``dir/``)."""
        for spec, base in self._excludes:
            rel = _relative(path, base) or _relative(path, walk_root) or path.name
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


def _repository_root(directory: Path) -> Path | None:
    """The nearest ancestor of ``directory`` (itself included) holding ``.git``, or ``None``."""
    for d in (directory, *directory.parents):
        if (d / ".git").exists():
            return d
    return None


class _GitIgnore:
    """The ``.gitignore`` files that apply in a walk, read once each."""

    def __init__(self) -> None:
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def _spec_of(self, directory: Path) -> pathspec.GitIgnoreSpec | None:
        if directory not in self._specs:
            spec = None
            f = directory / ".gitignore"
            if f.is_file():
                try:
                    spec = _spec(f.read_text(encoding="utf-8", errors="replace").splitlines())
                except OSError:
                    spec = None
            self._specs[directory] = spec
        return self._specs[directory]

    def ignored(self, path: Path, top: Path, is_dir: bool) -> bool:
        """Whether git would ignore ``path`` (absolute, under ``top``) by the ``.gitignore`` files
        of ``top`` and the directories between it and ``path``; the deepest file that decides wins."""
        verdict = False
        chain = [top, *(top / Path(*path.relative_to(top).parts[:i])
                        for i in range(1, len(path.relative_to(top).parts)))]
        for directory in chain:
            spec = self._spec_of(directory)
            if spec is None:
                continue
            rel = path.relative_to(directory).as_posix() + ("/" if is_dir else "")
            result = spec.check_file(rel)
            if result.include is not None:
                verdict = result.include
        return verdict


def collect_files(paths: Sequence[str], resolver: ConfigResolver | None = None,
                  selection: Selection | None = None) -> list[Path]:
    """Files named by ``paths``: files as given, directories walked (see the module's text).

    ``resolver`` finds the configuration of each directory (default: no
    configuration file).  Within a directory the files come sorted as
    :class:`pathlib.Path` sorts them.  Raises :class:`PathError` for a
    missing path or a directory with no file to check, and
    :class:`tile_lsp.config.ConfigError` for an invalid configuration file.
    """
    resolver = resolver or ConfigResolver(isolated=True)
    selection = selection or Selection()
    cwd = Path.cwd().resolve()
    rules_cache: dict[int, _Rules] = {}

    def rules_for(directory: Path) -> _Rules:
        config = resolver.for_path(directory)
        key = id(config)
        if key not in rules_cache:
            rules_cache[key] = _Rules(config, selection, cwd)
        return rules_cache[key]

    def respect_gitignore(directory: Path) -> bool:
        if selection.respect_gitignore is not None:
            return selection.respect_gitignore
        return resolver.for_path(directory).get("respect-gitignore", True)

    out: list[Path] = []
    gitignore = _GitIgnore()
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = _walk(p, rules_for, respect_gitignore, gitignore)
            if not found:
                patterns = ", ".join(rules_for(p.resolve()).include_patterns)
                raise PathError(f"no files matching {patterns} under '{raw}'")
            out.extend(found)
        elif p.is_file():
            absolute = p.resolve()
            rules = rules_for(absolute.parent)
            force = selection.force_exclude if selection.force_exclude is not None \
                else rules.config.get("force-exclude", False)
            if force and rules.excluded(absolute, absolute.parent, is_dir=False):
                continue
            out.append(p)
        elif p.exists():
            raise PathError(f"'{raw}' is not a regular file or directory")
        else:
            raise PathError(f"no such file or directory: '{raw}'")
    return out


def _walk(root: Path, rules_for, respect_gitignore, gitignore: _GitIgnore) -> list[Path]:
    """The files to check under the directory ``root``, as paths that start with ``root``."""
    absolute_root = root.resolve()
    repository = _repository_root(absolute_root)
    top = repository if repository is not None else absolute_root
    if top != absolute_root and gitignore.ignored(absolute_root, top, is_dir=True):
        top = absolute_root  # a directory named on the command line is walked even when git ignores it
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(absolute_root):
        directory = Path(dirpath)
        rules = rules_for(directory)
        use_gitignore = respect_gitignore(directory)
        kept = []
        for name in sorted(dirnames):
            sub = directory / name
            if rules.excluded(sub, absolute_root, is_dir=True):
                continue
            if use_gitignore and gitignore.ignored(sub, top, is_dir=True):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in filenames:
            f = directory / name
            if not f.is_file() or not rules.included(f, absolute_root):
                continue
            if rules.excluded(f, absolute_root, is_dir=False):
                continue
            if use_gitignore and gitignore.ignored(f, top, is_dir=False):
                continue
            found.append(root / f.relative_to(absolute_root))
    return sorted(found)
