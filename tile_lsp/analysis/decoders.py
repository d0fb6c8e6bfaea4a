"""Pure decoders of packed values into readable text (for hovers and diagnostics).

* :func:`decode_block_scale_word`: the ``(atom_K << 32) | vecSize`` word the
  block-scaled MMA verifier returns (spec 000; 0 means rejection);
* :func:`decode_tcgen05_kind_word`: the 9-bit ``Tcgen05MmaKind`` word (spec 001,
  cta_group in bits 0-1, scale_vector_size 2-3, scale_input_acc 4,
  block_scale 5, mma_kind 6-8);
* :func:`tile_size_bytes` / :func:`describe_tile_size`: the storage size of a tile.

Every function is total on its documented domain and raises ``ValueError``
outside it (negative words, words wider than the field).
"""

from __future__ import annotations

from dataclasses import dataclass

from tile_lsp.dialect import types as T

#: (atom_K, vecSize) -> PTX kind of the legal block-scaled rows (spec 000 catalog).
BLOCK_SCALE_KINDS = {
    (32, 32): "tcgen05.mma.kind::f8f6f4",
    (64, 16): "tcgen05.mma.kind::mxf4",
    (64, 32): "tcgen05.mma.kind::mxf4nvf4",
}

#: mma_kind field values (spec 001 table; 6 is unassigned).
TCGEN05_MMA_KINDS = {0: "mxf4nvf4", 1: "i8", 2: "mxf8f6f4", 3: "f16", 4: "tf32", 5: "f8f6f4", 7: "mxf4"}
#: cta_group field values.
TCGEN05_CTA_GROUPS = {0: "reserved", 1: "cta_group::1", 2: "cta_group::2", 3: "cta_group::4"}
#: scale_vector_size field values.
TCGEN05_SCALE_VEC = {0: "1X (16)", 1: "2X (32)", 2: "4X (64)", 3: "reserved"}


def pack_block_scale(atom_k: int, vec_size: int) -> int:
    """``(atom_K << 32) | vecSize`` with both fields as unsigned 32-bit values."""
    if not (0 <= atom_k < 2**32 and 0 <= vec_size < 2**32):
        raise ValueError("atom_K and vecSize must fit in 32 unsigned bits")
    return (atom_k << 32) | vec_size


def unpack_block_scale(word: int) -> tuple[int, int]:
    """``(atom_K, vecSize)`` of a packed word (high and low 32 bits)."""
    if not 0 <= word < 2**64:
        raise ValueError("the packed word is a 64-bit unsigned value")
    return word >> 32, word & 0xFFFFFFFF


def decode_block_scale_word(word: int) -> str:
    """Readable text of the block-scaled MMA verifier's result, e.g.
    ``0x4000000010`` -> ``atom_K=64, vecSize=16 (tcgen05.mma.kind::mxf4)``; 0 -> ``0 (verification rejected)``."""
    if word == 0:
        return "0 (verification rejected)"
    k, v = unpack_block_scale(word)
    kind = BLOCK_SCALE_KINDS.get((k, v), "not a catalog row")
    return f"atom_K={k}, vecSize={v} ({kind})"


@dataclass(frozen=True)
class Tcgen05Kind:
    """The fields of a ``Tcgen05MmaKind`` word (spec 001 bitfield); ``ws`` overlays bit 0."""

    raw: int
    cta_group: int
    scale_vector_size: int
    scale_input_acc: bool
    block_scale: bool
    mma_kind: int

    @property
    def ws(self) -> bool:
        return bool(self.raw & 1)


def unpack_tcgen05_kind(raw: int) -> Tcgen05Kind:
    """Split a 9-bit kind word into its fields; ``ValueError`` if it does not fit 9 bits."""
    if not 0 <= raw < 2**9:
        raise ValueError("a Tcgen05MmaKind word has 9 bits")
    return Tcgen05Kind(raw, raw & 3, (raw >> 2) & 3, bool(raw >> 4 & 1), bool(raw >> 5 & 1), raw >> 6 & 7)


def decode_tcgen05_kind_word(raw: int) -> str:
    """Readable text of a kind word: ``0x42`` -> ``kind::i8, cta_group::2, scale_vec 1X (16)``."""
    k = unpack_tcgen05_kind(raw)
    parts = [f"kind::{TCGEN05_MMA_KINDS.get(k.mma_kind, f'unassigned({k.mma_kind})')}",
             TCGEN05_CTA_GROUPS[k.cta_group], f"scale_vec {TCGEN05_SCALE_VEC[k.scale_vector_size]}"]
    if k.block_scale:
        parts.append("block_scale")
    if k.scale_input_acc:
        parts.append("scale_input_acc")
    if k.ws:
        parts.append("ws")
    return ", ".join(parts)


def tile_size_bytes(shape: tuple[int, ...], element: T.Type) -> int | None:
    """Storage size in bytes of a tile (sub-byte elements packed), ``None`` if a dim or the width is unknown."""
    width = T.bit_width(element)
    if width is None or any(d is None for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d
    return (n * width + 7) // 8


def describe_tile_size(shape: tuple[int, ...], element: T.Type) -> str:
    """``tile<128x64xf16>`` -> ``8192 elements, 16384 bytes (16 KiB)``."""
    size = tile_size_bytes(shape, element)
    n = 1
    for d in shape:
        n *= d or 0
    if size is None:
        return f"{n} elements"
    text = f"{n} elements, {size} bytes"
    if size >= 1024 and size % 1024 == 0:
        text += f" ({size // 1024} KiB)"
    return text
