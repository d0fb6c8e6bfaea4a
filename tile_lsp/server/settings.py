"""Settings of the language server and their parsing from client JSON.

Settings arrive in ``initialize``'s ``initializationOptions`` and in
``workspace/didChangeConfiguration``'s ``settings``.  Both are free-form JSON;
the keys read are::

    {"tileVersion": "13.2", "debounceMs": 150}

either at the top level or nested under one of the sections ``tileLsp``,
``tile-lsp`` or ``tile_lsp`` (editors usually namespace their settings).
Keys that are absent leave the current value alone; a ``null``
``tileVersion`` selects the newest version again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

#: Debounce applied to ``didChange`` when the client says nothing.
DEFAULT_DEBOUNCE_MS = 150
#: Upper bound of ``debounceMs``: more than this is surely a mistake.
MAX_DEBOUNCE_MS = 10_000

_SECTIONS = ("tileLsp", "tile-lsp", "tile_lsp")


@dataclass(frozen=True)
class ServerSettings:
    """Current settings of the server.

    ``tile_version``: targeted Tile IR version passed to the analysis as
    ``AnalysisOptions.tile_version`` (``None``: the newest).
    ``debounce_ms``: delay between the last ``didChange`` and the analysis.
    """

    tile_version: str | None = None
    debounce_ms: int = DEFAULT_DEBOUNCE_MS

    @property
    def debounce_s(self) -> float:
        """``debounce_ms`` in seconds."""
        return self.debounce_ms / 1000.0

    def updated(self, raw: Any) -> tuple["ServerSettings", list[str]]:
        """Return these settings updated from the client JSON ``raw``.

        Returns the new settings and a list of human readable problems
        (values of the wrong type, ignored).  Never raises.
        """
        problems: list[str] = []
        merged = _flatten(raw)
        changes: dict[str, Any] = {}

        if "tileVersion" in merged:
            value = merged["tileVersion"]
            if value is None or (isinstance(value, str) and value.strip() == ""):
                changes["tile_version"] = None
            elif isinstance(value, str):
                changes["tile_version"] = value.strip()
            else:
                problems.append(f"ignoring tileVersion {value!r}: expected a string such as \"13.2\"")

        if "debounceMs" in merged:
            value = merged["debounceMs"]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                problems.append(f"ignoring debounceMs {value!r}: expected a number of milliseconds")
            else:
                changes["debounce_ms"] = int(min(max(value, 0), MAX_DEBOUNCE_MS))

        return dataclasses.replace(self, **changes), problems


def _flatten(raw: Any) -> dict[str, Any]:
    """Top-level keys of ``raw`` overlaid with those of its known sections."""
    if not isinstance(raw, dict):
        return {}
    out = {k: v for k, v in raw.items() if k not in _SECTIONS}
    for section in _SECTIONS:
        nested = raw.get(section)
        if isinstance(nested, dict):
            out.update(nested)
    return out
