"""The result cache of ``tile-lsp check``: a file analysed once is not analysed again while
neither it, the options nor tile-lsp changed.

Like ruff's cache: one small JSON record per (text, options, tile-lsp build), under a cache
directory (``.tile-lsp-cache`` in the current directory by default, ``--cache-dir`` or
``$TILE_LSP_CACHE_DIR`` elsewhere, ``--no-cache`` for none).  The key is a SHA-256 of the
file's text, the options that change its analysis and a fingerprint of the installed
tile-lsp (its version and the size and modification time of each of its source and grammar
files), so a code change invalidates every record.  Records are written to a temporary file
and renamed into place, so concurrent runs (``--jobs``, two CI jobs) never read half a
record; one that cannot be read is a miss.  JSON, not pickle: a cache directory that came
with a repository must not be able to run code.  The directory holds a ``.gitignore`` of
``*`` and a ``CACHEDIR.TAG`` so that version control and backup tools skip it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tile_lsp import __version__
from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Position, Range, Severity

#: Default cache directory, relative to the current directory.
DEFAULT_DIR = ".tile-lsp-cache"
#: Environment variable naming the cache directory.
ENV_DIR = "TILE_LSP_CACHE_DIR"
#: Layout version of the records (a new layout starts a new subdirectory).
_LAYOUT = "v1"
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by tile-lsp.\n"
        "# For information about cache directory tags see https://bford.info/cachedir/\n")


@functools.lru_cache(maxsize=1)
def build_fingerprint() -> str:
    """A digest of the installed tile-lsp: its version and the path, size and modification time
    (ns) of every ``.py`` and ``.lark`` file of the package (the parse table is derived from them)."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256(__version__.encode())
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".lark")):
        try:
            st = path.stat()
        except OSError:
            continue
        h.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


@dataclass
class CachedCheck:
    """What ``tile-lsp check`` found in one file (the fields of ``cli.FileResult`` but its path and text)."""

    diagnostics: list[Diagnostic]
    chunks_total: int
    chunks_passed: int
    verified: bool


class CheckCache:
    """Records of :class:`CachedCheck` under ``directory`` (created on the first write).

    :meth:`get` and :meth:`put` never raise on a damaged, unreadable or unwritable cache:
    a record that cannot be read is a miss, one that cannot be written is skipped.
    """

    def __init__(self, directory: Path):
        self.directory = directory

    @staticmethod
    def key(text: str, options: tuple) -> str:
        """The record key of ``text`` analysed with ``options`` (a tuple of plain values) by this build."""
        h = hashlib.sha256(build_fingerprint().encode())
        h.update(json.dumps(options).encode())
        h.update(b"\0")
        h.update(text.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / _LAYOUT / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedCheck | None:
        """The record of ``key``, or ``None`` (absent, or unreadable)."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            return CachedCheck([_diagnostic(d) for d in data["diagnostics"]], int(data["chunks_total"]),
                               int(data["chunks_passed"]), bool(data["verified"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None

    def put(self, key: str, record: CachedCheck) -> None:
        """Store ``record`` under ``key``, atomically (temporary file, then rename)."""
        data = {"diagnostics": [_encode(d) for d in record.diagnostics], "chunks_total": record.chunks_total,
                "chunks_passed": record.chunks_passed, "verified": record.verified}
        path = self._path(key)
        try:
            self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(data, f)
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            return

    def _prepare(self) -> None:
        """Create the directory with its ``.gitignore`` and ``CACHEDIR.TAG`` (once)."""
        if (self.directory / "CACHEDIR.TAG").exists():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, content in ((".gitignore", "# created by tile-lsp\n*\n"), ("CACHEDIR.TAG", _TAG)):
            target = self.directory / name
            if not target.exists():
                target.write_text(content, encoding="utf-8")


def cache_directory(option: str | None) -> Path:
    """The cache directory: ``option`` (``--cache-dir``), else ``$TILE_LSP_CACHE_DIR``, else
    :data:`DEFAULT_DIR` in the current directory."""
    return Path(option or os.environ.get(ENV_DIR) or DEFAULT_DIR)


def _range(r: Range | None) -> list[int] | None:
    return None if r is None else [r.start.line, r.start.character, r.end.line, r.end.character]


def _unrange(v: list[int] | None) -> Range | None:
    return None if v is None else Range(Position(v[0], v[1]), Position(v[2], v[3]))


def _encode(d: Diagnostic) -> dict:
    return {"severity": d.severity.value, "message": d.message, "range": _range(d.range), "code": d.code,
            "source": d.source,
            "notes": [{"message": n.message, "range": _range(n.range), "uri": n.uri, "severity": n.severity.value}
                      for n in d.notes]}


def _diagnostic(data: dict) -> Diagnostic:
    notes = [Note(n["message"], _unrange(n["range"]), n["uri"], Severity(n["severity"])) for n in data["notes"]]
    return Diagnostic(Severity(data["severity"]), data["message"], _unrange(data["range"]), data["code"], notes,
                      data["source"])
