"""Settings of the language server and their parsing from client JSON.

Settings arrive in ``initialize``'s ``initializationOptions`` and in
``workspace/didChangeConfiguration``'s ``settings``.  Both are free-form JSON;
the keys read are (:data:`SETTINGS` documents each)::

    {"tileVersion": "13.2", "targetGpu": "sm_90", "debounceMs": 150,
     "inlayHints": {"enabled": true, "resultTypes": true, "tileSizes": true}}

either at the top level or nested under one of the sections ``tileLsp``,
``tile-lsp`` or ``tile_lsp`` (editors usually namespace their settings).
A nested object may also be written with dotted keys
(``"inlayHints.resultTypes": false``), as VS Code's flat settings are.
Keys that are absent leave the current value alone; ``null`` (or ``""``)
resets ``tileVersion`` and ``targetGpu`` to "none".
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any

#: Debounce applied to ``didChange`` when the client says nothing.
DEFAULT_DEBOUNCE_MS = 150
#: Upper bound of ``debounceMs``: more than this is surely a mistake.
MAX_DEBOUNCE_MS = 10_000

_SECTIONS = ("tileLsp", "tile-lsp", "tile_lsp")

#: The settings a client may send: (JSON key, type, default, meaning).  README.md lists the same.
SETTINGS: tuple[tuple[str, str, str, str], ...] = (
    ("tileVersion", "string or null", "null",
     'Tile IR release the rules follow ("13.1", "13.2", "13.3"...); null: the newest.'),
    ("targetGpu", "string or null", "null",
     ('Target GPU ("sm_90", "sm_100a", or the number 90) for checks that need a compute capability '
      "when the IR names none (nv_tileaa.compute_capability); null: none.")),
    ("debounceMs", "number", str(DEFAULT_DEBOUNCE_MS),
     ("Most milliseconds between the last change of a document and its analysis; less once the "
      "document's analyses are quick: as long as the longest of its last three took.")),
    ("inlayHints.enabled", "boolean", "true",
     "Show inlay hints at all; false hides both kinds below."),
    ("inlayHints.resultTypes", "boolean", "true",
     "Show the result types the custom form leaves out (%x, %y = get_tile_block_id : tile<i32>)."),
    ("inlayHints.tileSizes", "boolean", "true",
     "Show the element count and byte size after each static tile type (256 × f32 = 1 KiB)."),
)

_TARGET = re.compile(r"(?:sm_?)?([0-9]{2,3})([a-z]?)", re.IGNORECASE)


def parse_target_gpu(value: Any) -> tuple[str, int] | None:
    """``("sm_90", 90)`` for ``"sm_90"``, ``"sm90"``, ``"90"`` or ``90``; ``"sm_100a"`` keeps its suffix.

    Returns ``None`` when ``value`` is not such a target.  The number is the
    compute capability as major * 10 + minor (spec 004).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        value = str(value)
    if not isinstance(value, str):
        return None
    m = _TARGET.fullmatch(value.strip())
    if m is None:
        return None
    return f"sm_{m.group(1)}{m.group(2).lower()}", int(m.group(1))


@dataclass(frozen=True)
class ServerSettings:
    """Current settings of the server.

    ``tile_version``: targeted Tile IR version passed to the analysis as
    ``AnalysisOptions.tile_version`` (``None``: the newest).
    ``target_gpu``: the target (``"sm_90"``) and ``target_sm`` its compute
    capability (``90``), passed as ``AnalysisOptions.target_sm``; ``None``:
    no target.
    ``debounce_ms``: the longest delay between the last ``didChange`` and
    the analysis (:class:`tile_lsp.server.server.EditDelay` shortens it).
    ``inlay_result_types`` / ``inlay_tile_sizes``: the two kinds of inlay
    hints (:class:`tile_lsp.analysis.ide.inlay_hints.InlayHintOptions`), both
    off when ``inlay_enabled`` is false.
    """

    tile_version: str | None = None
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    target_gpu: str | None = None
    target_sm: int | None = None
    inlay_enabled: bool = True
    inlay_result_types: bool = True
    inlay_tile_sizes: bool = True

    @property
    def debounce_s(self) -> float:
        """``debounce_ms`` in seconds."""
        return self.debounce_ms / 1000.0

    @property
    def analysis_key(self) -> tuple:
        """The settings the analysis depends on: when they change, documents are analysed again."""
        return (self.tile_version, self.target_sm)

    @property
    def inlay_key(self) -> tuple:
        """The settings inlay hints depend on: when they change, the client is asked to refresh them."""
        return (self.inlay_enabled, self.inlay_result_types, self.inlay_tile_sizes)

    @property
    def show_result_types(self) -> bool:
        """Whether result-type inlay hints are shown."""
        return self.inlay_enabled and self.inlay_result_types

    @property
    def show_tile_sizes(self) -> bool:
        """Whether tile-size inlay hints are shown."""
        return self.inlay_enabled and self.inlay_tile_sizes

    def updated(self, raw: Any) -> tuple[ServerSettings, list[str]]:
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

        if "targetGpu" in merged:
            value = merged["targetGpu"]
            if value is None or (isinstance(value, str) and value.strip() == ""):
                changes["target_gpu"] = changes["target_sm"] = None
            else:
                target = parse_target_gpu(value)
                if target is None:
                    problems.append(f"ignoring targetGpu {value!r}: expected a GPU such as \"sm_90\"")
                else:
                    changes["target_gpu"], changes["target_sm"] = target

        if "debounceMs" in merged:
            value = merged["debounceMs"]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
                problems.append(f"ignoring debounceMs {value!r}: expected a number of milliseconds")
            else:
                changes["debounce_ms"] = int(min(max(value, 0), MAX_DEBOUNCE_MS))

        for key, field in (("inlayHints.enabled", "inlay_enabled"),
                           ("inlayHints.resultTypes", "inlay_result_types"),
                           ("inlayHints.tileSizes", "inlay_tile_sizes")):
            if key in merged:
                value = merged[key]
                if isinstance(value, bool):
                    changes[field] = value
                else:
                    problems.append(f"ignoring {key} {value!r}: expected true or false")

        return dataclasses.replace(self, **changes), problems


def _dotted(raw: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a": {"b": 1}, "a.b": 1}`` (nested objects also under dotted keys)."""
    out: dict[str, Any] = {}
    for k, v in raw.items():
        key = prefix + str(k)
        out[key] = v
        if isinstance(v, dict):
            out.update(_dotted(v, key + "."))
    return out


def _flatten(raw: Any) -> dict[str, Any]:
    """Top-level keys of ``raw`` overlaid with those of its known sections, nested keys also dotted."""
    if not isinstance(raw, dict):
        return {}
    out = _dotted({k: v for k, v in raw.items() if k not in _SECTIONS})
    for section in _SECTIONS:
        nested = raw.get(section)
        if isinstance(nested, dict):
            out.update(_dotted(nested))
    return out
