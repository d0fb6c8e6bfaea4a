"""What NVIDIA's ``tileiras`` refuses for a given GPU architecture: the table behind ``--gpu-name``.

``tileiras --gpu-name sm_XX`` compiles Tile IR for one architecture and
refuses some element types and some atomic operations on older ones, with
an error whose text starts ``Incompatibility with architecture 'sm_XX': ``.
The bytecode and its textual form name no architecture: only the
``--gpu-name`` of tileiras (``tile-lsp --check --gpu-name``, the language
server's ``targetGpu`` setting) decides, so ``cuda-tile-opt``, which knows
no target, accepts all of it.

Source of every row: NVIDIA ``tileiras`` 13.5 (release 13.5, V13.5.37, PyPI
``nvidia-cuda-tileiras``), probed with small kernels written as text,
converted to bytecode by tile-lsp's writer (Tile IR 13.4) and compiled
with ``tileiras --gpu-name=sm_XX`` for each of :data:`GPU_NAMES`
(``tileiras --help``).  What was observed, common to all rows:

* tileiras checks the ops of the module in MLIR's post-order walk (an op
  nested in a region before the op holding it, the ops of a block in
  order), looking at each op's operand types then its result types
  (nested types included: ``tile<ptr<f8E4M3FN>>``,
  ``partition_view<..., tensor_view<...xf8E4M3FN>>``), and stops at the
  first op it refuses: one error per module, placed at that op (seen with
  a kernel carrying debug info, whose error names that op's location).
* Types written only in the signature of an ``entry`` (an unused
  argument) or in a ``global`` are not looked at.
* Every text ends ``error: failed to compile Tile IR program``, which is
  not repeated here; tileiras exits 5.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Compute capabilities tileiras 13.5 compiles for (``tileiras --help``, option ``--gpu-name``).
ARCHS = (80, 86, 87, 88, 89, 90, 100, 103, 107, 110, 120, 121)
#: Their ``--gpu-name`` spellings.
GPU_NAMES = tuple(f"sm_{sm}" for sm in ARCHS)

#: Start of every target error of tileiras (the string is in the binary as
#: ``Incompatibility with architecture 'sm_``); ``{sm}``: the compute capability.
ARCH_PREFIX = "Incompatibility with architecture 'sm_{sm}': "


@dataclass(frozen=True)
class UnsupportedType:
    """An element type tileiras refuses below compute capability ``since``.

    Text: ``Incompatibility with architecture 'sm_80': unsupported type 'f8E4M3FN'``.
    """

    element: str
    since: int
    observed: str

    def message(self, sm: int) -> str:
        return ARCH_PREFIX.format(sm=sm) + f"unsupported type '{self.element}'"


@dataclass(frozen=True)
class UnsupportedAtomic:
    """An atomic ``mode`` on ``element`` tileiras refuses, in any of ``ops``, below ``since``."""

    ops: tuple[str, ...]
    mode: str
    element: str
    since: int
    text: str
    observed: str

    def message(self, sm: int) -> str:
        return ARCH_PREFIX.format(sm=sm) + self.text


_TYPE_PROBE = ("tileiras 13.5: refused for sm_80, sm_86, sm_87, sm_88{more}; accepted for {ok} (an op "
               "result or operand of the type, e.g. reshape of tile<ptr<T>> or constant <T: 1.0>)")

#: Element types tileiras refuses on older architectures.  The other element types
#: (i1, i8, i16, i32, i64, f16, bf16, tf32, f32, f64) were accepted for every architecture.
UNSUPPORTED_TYPES: tuple[UnsupportedType, ...] = (
    UnsupportedType("f8E4M3FN", 89, _TYPE_PROBE.format(more="", ok="sm_89 and newer")),
    UnsupportedType("f8E5M2", 89, _TYPE_PROBE.format(more="", ok="sm_89 and newer")),
    UnsupportedType("f8E8M0FNU", 100, _TYPE_PROBE.format(more=", sm_89, sm_90", ok="sm_100 and newer")),
    UnsupportedType("f4E2M1FN", 100, _TYPE_PROBE.format(more=", sm_89, sm_90", ok="sm_100 and newer")
                    + "; probed as the result of unpack tile<1xi8> -> tile<2xf4E2M1FN>"),
)

#: Atomic updates tileiras refuses on older architectures.  Of the modes and
#: element types the verifier lets through (and, or, xor, add, max, min, umax,
#: umin, xchg on i32/i64/f32/f64; addf on f16/bf16/f32/f64), only this one
#: depends on the architecture.
UNSUPPORTED_ATOMICS: tuple[UnsupportedAtomic, ...] = (
    UnsupportedAtomic(
        ("cuda_tile.atomic_rmw_tko", "cuda_tile.atomic_red_view_tko"), "addf", "bf16", 89,
        "atomicRMW ADDF with bf16 is not supported",
        "tileiras 13.5: refused for sm_80, sm_86, sm_87, sm_88; accepted for sm_89 and newer; the same "
        "text for atomic_rmw_tko (rank 0 and 1) and atomic_red_view_tko; addf on f16, f32, f64 accepted"),
)


def known_arch(sm: int | None) -> bool:
    """Whether tileiras compiles for compute capability ``sm`` (the table says nothing of others)."""
    return sm in ARCHS


def unsupported_types(sm: int) -> dict[str, UnsupportedType]:
    """The element types (by spelling) tileiras refuses for ``sm``; empty for an unknown ``sm``."""
    if not known_arch(sm):
        return {}
    return {r.element: r for r in UNSUPPORTED_TYPES if sm < r.since}


def unsupported_atomic(sm: int, op_name: str, mode: str | None, element: str | None) -> UnsupportedAtomic | None:
    """The row refusing atomic ``mode`` on ``element`` in op ``op_name`` for ``sm``, or ``None``."""
    if not known_arch(sm):
        return None
    for r in UNSUPPORTED_ATOMICS:
        if op_name in r.ops and mode == r.mode and element == r.element and sm < r.since:
            return r
    return None
