"""PTX targets of the lowering: which GPUs, which PTX ISA, which instructions.

One table (:data:`TARGETS`) says, per ``sm_XX`` the lowering supports, the
PTX ISA version it writes and the features the instruction selection asks
about.  Sources: the PTX ISA 9.x "Target ISA notes" of each instruction
(``griddepcontrol`` sm_90, ``cvt ... e4m3x2/e5m2x2`` sm_89, ``max.NaN`` sm_80,
``tanh.approx`` sm_75) and NVIDIA's ``tileiras`` diagnostics for element
types a target lacks ("Incompatibility with architecture 'sm_80':
unsupported type 'f8E4M3FN'", MANIFEST.tsv of the kernel corpus).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """One GPU target.

    ``sm``: compute capability as an integer (``90`` for sm_90); ``ptx_version``:
    the ``.version`` directive written; ``features``: names the lowering tests
    (``"fp8"``: cvt to/from e4m3/e5m2, ``"gdc"``: griddepcontrol,
    ``"e8m0"``: the f8E8M0FNU type); ``unsupported_types``: element types
    tileiras rejects for this target; ``max_smem``: the most shared memory
    one CTA can have, in bytes (static plus opt-in dynamic: CUDA C
    Programming Guide, "Technical Specifications per Compute Capability",
    maximum shared memory per thread block: 163 KB on sm_80, 99 KB on
    sm_86/sm_89/sm_120, 227 KB on sm_90/sm_100).
    """

    sm: int
    ptx_version: str
    features: frozenset[str]
    unsupported_types: frozenset[str]
    max_smem: int

    @property
    def name(self) -> str:
        return f"sm_{self.sm}"


_ALL = frozenset({"fp8", "gdc", "e8m0", "fp4"})

#: The targets of the lowering (issue: sm_80, sm_86, sm_89, sm_90, sm_100, sm_120).
TARGETS: dict[int, Target] = {
    80: Target(80, "8.7", frozenset(), frozenset({"f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN"}), 163 * 1024),
    86: Target(86, "8.7", frozenset(), frozenset({"f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN"}), 99 * 1024),
    89: Target(89, "8.7", frozenset({"fp8"}), frozenset({"f8E8M0FNU", "f4E2M1FN"}), 99 * 1024),
    90: Target(90, "8.7", frozenset({"fp8", "gdc"}), frozenset({"f8E8M0FNU", "f4E2M1FN"}), 227 * 1024),
    100: Target(100, "8.8", _ALL, frozenset(), 227 * 1024),
    120: Target(120, "8.8", _ALL, frozenset(), 99 * 1024),
}

DEFAULT_SM = 90


class TargetError(ValueError):
    """An unknown or unsupported GPU name."""


def parse_gpu_name(name: str | int | None) -> Target:
    """The :class:`Target` of ``sm_90`` / ``sm_90a`` / ``90`` (``None``: :data:`DEFAULT_SM`).

    Raises :class:`TargetError` for names outside :data:`TARGETS`.
    """
    if name is None:
        return TARGETS[DEFAULT_SM]
    if isinstance(name, int):
        sm = name
    else:
        m = re.fullmatch(r"(?:sm_|compute_)?(\d+)[af]?", str(name).strip())
        if not m:
            raise TargetError(f"unknown GPU name '{name}' (expected sm_XX)")
        sm = int(m.group(1))
    if sm not in TARGETS:
        known = ", ".join(f"sm_{s}" for s in TARGETS)
        raise TargetError(f"unsupported GPU 'sm_{sm}' (the lowering supports {known})")
    return TARGETS[sm]
