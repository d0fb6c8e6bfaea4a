"""Pure decoders of packed values into readable text (for hovers and diagnostics).

* :func:`decode_block_scale_word`: the ``(atom_K << 32) | vecSize`` word the
  block-scaled MMA verifier returns (spec 000; 0 means rejection);
* :func:`decode_tcgen05_kind_word`: the 9-bit ``Tcgen05MmaKind`` word (spec 001,
  cta_group in bits 0-1, scale_vector_size 2-3, scale_input_acc 4,
  block_scale 5, mma_kind 6-8);
* :func:`tile_size_bytes` / :func:`describe_tile_size`: the storage size of a tile;
* :func:`describe_swizzle`: a UMMA swizzle triple by name;
* :func:`kind_word_of` / :func:`umma_layout_of`: the kind word or UMMA layout an
  attribute carries (tile-lsp's spellings), ``CarrierError`` when malformed.  The
  builder decodes such an attribute's text once (:func:`decode_carrier`, kept in
  ``DialectAttr.value`` as a :class:`CarrierValue`); these read that value;
* :func:`decode_nv_tileas_attribute`: what the builder decodes any nv_tileas attribute to, the
  carriers' :class:`CarrierValue` or the others' ``KeywordAttr`` (an atom, an enum word).

Every function is total on its documented domain and raises ``ValueError``
outside it (negative words, words wider than the field).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tile_lsp.dialect import types as T
from tile_lsp.dialect.nv_tileas_types import KeywordAttr, decode_keyword_attr

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


def kind_word_fields(raw: int) -> list[tuple[str, str, int, str]]:
    """The fields of a kind word as ``(field, bits, value, meaning)`` rows, in bit order, then the
    weight-stationary overlay of bit 0 (spec 001 bitfield).  ``ValueError`` outside 0..511."""
    k = unpack_tcgen05_kind(raw)
    return [
        ("cta_group", "0-1", k.cta_group, TCGEN05_CTA_GROUPS[k.cta_group]),
        ("scale_vector_size", "2-3", k.scale_vector_size, TCGEN05_SCALE_VEC[k.scale_vector_size]),
        ("scale_input_acc", "4", int(k.scale_input_acc), "set" if k.scale_input_acc else "not set"),
        ("block_scale", "5", int(k.block_scale), "set" if k.block_scale else "not set"),
        ("mma_kind", "6-8", k.mma_kind, TCGEN05_MMA_KINDS.get(k.mma_kind, "unassigned")),
        ("ws (overlay)", "0", int(k.ws), "weight stationary" if k.ws else "not weight stationary"),
    ]


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


# ---------------------------------------------------------------------------
# Values carried by attributes in text (tile-lsp's spellings, docs/nv_tileas.md "Mode-pattern carriers")
# ---------------------------------------------------------------------------

#: UMMA shared-memory swizzle triples (spec 001's accepted set) -> (short name, description).  The
#: (n, 4, 3) family and (2, 5, 2) read as CuTe ``Swizzle<B, M, S>`` are CUTLASS's UMMA layout types
#: (cute/atom/mma_traits_sm100.hpp: SWIZZLE_NONE = Swizzle<0,4,3>, SWIZZLE_32B = <1,4,3>,
#: SWIZZLE_64B = <2,4,3>, SWIZZLE_128B = <3,4,3>, SWIZZLE_128B_BASE32B = <2,5,2>); (0, 2, 5) is
#: spec 001's "no swizzle" case.
SWIZZLES = {
    (0, 2, 5): ("none", "no swizzle"),
    (0, 4, 3): ("interleave", "no swizzle, 16-byte interleave (CUTLASS SWIZZLE_NONE, Swizzle<0,4,3>)"),
    (1, 4, 3): ("32B", "32-byte swizzle (CUTLASS SWIZZLE_32B, Swizzle<1,4,3>)"),
    (2, 4, 3): ("64B", "64-byte swizzle (CUTLASS SWIZZLE_64B, Swizzle<2,4,3>)"),
    (3, 4, 3): ("128B", "128-byte swizzle (CUTLASS SWIZZLE_128B, Swizzle<3,4,3>)"),
    (2, 5, 2): ("128B_base32B",
                ("128-byte swizzle with 32-byte atoms (CUTLASS SWIZZLE_128B_BASE32B, Swizzle<2,5,2>)")),
}
#: Symbolic swizzle spellings -> triple (the short names, and CUTLASS's enum names).
SWIZZLE_SPELLINGS = {name.lower(): t for t, (name, _) in SWIZZLES.items()} | {
    "swizzle_none": (0, 4, 3), "swizzle_32b": (1, 4, 3), "swizzle_64b": (2, 4, 3), "swizzle_128b": (3, 4, 3),
    "swizzle_128b_base32b": (2, 5, 2),
}


#: TMA descriptor swizzle modes (spec 002 make_tiled_tma_desc ``swizzle_mode``) -> the CuTe swizzle triple.
TMA_SWIZZLE_MODES = {"none": (0, 4, 3), "32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3)}


def describe_swizzle(triple: tuple[int, ...]) -> str:
    """``(3, 4, 3)`` -> ``128B: 128-byte swizzle (CUTLASS SWIZZLE_128B, Swizzle<3,4,3>)``; unknown triples say so."""
    found = SWIZZLES.get(tuple(triple))
    if found is None:
        return "({}) is not a UMMA swizzle (spec 001 accepts {})".format(
            ", ".join(map(str, triple)), ", ".join(f"({a}, {b}, {c})" for a, b, c in SWIZZLES))
    return f"{found[0]}: {found[1]}"


class CarrierError(ValueError):
    """An attribute that should carry a packed value cannot be read (the message says why)."""


_TUPLE_TOKEN = re.compile(r"\s*(\(|\)|,|-?\d+)")


def parse_int_tuple(text: str):
    """A CuTe int tuple: ``((8, 2), 64)`` -> ``((8, 2), 64)``; ``CarrierError`` when malformed."""
    pos, tokens = 0, []
    text = text.strip()
    while pos < len(text):
        m = _TUPLE_TOKEN.match(text, pos)
        if not m:
            raise CarrierError(f"unexpected '{text[pos:].strip()[:12]}' in the int tuple '{text}'")
        tokens.append(m.group(1))
        pos = m.end()

    def item(i: int):
        if i >= len(tokens):
            raise CarrierError(f"incomplete int tuple '{text}'")
        if tokens[i] == "(":
            out, i = [], i + 1
            while True:
                value, i = item(i)
                out.append(value)
                if i < len(tokens) and tokens[i] == ",":
                    i += 1
                    continue
                if i < len(tokens) and tokens[i] == ")":
                    return tuple(out), i + 1
                raise CarrierError(f"expected ',' or ')' in the int tuple '{text}'")
        if tokens[i] in (",", ")"):
            raise CarrierError(f"expected an integer in the int tuple '{text}'")
        return int(tokens[i]), i + 1

    value, end = item(0)
    if end != len(tokens):
        raise CarrierError(f"trailing text after the int tuple '{text}'")
    return value


def _carrier_body(mnemonic: str, body: str, carrier: str) -> str | None:
    """The body of ``#nv_tileas<CARRIER ...>`` (``mnemonic`` empty, ``body`` starting with the
    carrier's word) or ``#nv_tileas.CARRIER<...>`` without the carrier's word, else ``None``."""
    body = body.strip()
    if mnemonic == carrier:
        return body
    if not mnemonic and (body == carrier or body.startswith((carrier + " ", carrier + ","))):
        return body[len(carrier):].strip()
    return None


def _int_of(attr) -> int | None:
    v = getattr(attr, "value", None)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


#: Symbolic cta_group spellings -> field value (bits 0-1: 1 = cta_group::1, 2 = ::2, 3 = ::4).
CTA_GROUP_FIELDS = {"1": 1, "2": 2, "4": 3}
#: Symbolic scale-vector spellings -> field value (bits 2-3).
SCALE_VEC_FIELDS = {"1x": 0, "16": 0, "2x": 1, "32": 1, "4x": 2, "64": 2}


def kind_word_of(attr) -> int | None:
    """The 9-bit tcgen05 kind word an attribute carries, ``None`` when it carries none.

    Spellings (tile-lsp's, docs/nv_tileas.md): an integer (``0x42 : i32``) or
    ``#nv_tileas<tcgen05_kind KIND[, cta_group = 1|2|4][, scale_vec = 1X|2X|4X]
    [, scale_input_acc][, block_scale]>`` with ``KIND`` an mma_kind name
    (:data:`TCGEN05_MMA_KINDS`); ``cta_group`` defaults to 1, ``scale_vec``
    to 1X.  The latter is read from the value the builder decoded (:func:`carried_value`).
    ``CarrierError`` when the value is malformed or out of range.
    """
    value = _int_of(attr)
    if value is not None:
        if not 0 <= value < 2**9:
            raise CarrierError(f"a tcgen05 kind word has 9 bits (0 to 511), but got {value}")
        return value
    return carried_value(attr, "tcgen05_kind")


def _kind_word(body: str) -> int:
    """The kind word of the body of a ``tcgen05_kind`` carrier (after the word), see
    :func:`kind_word_of`; ``CarrierError`` when malformed."""
    items = [x.strip() for x in body.split(",") if x.strip()]
    names = {v: k for k, v in TCGEN05_MMA_KINDS.items()}
    if not items or items[0] not in names:
        raise CarrierError("tcgen05_kind expects an mma kind first (one of {}), but got '{}'".format(
            ", ".join(names), items[0] if items else ""))
    kind, cta, vec, acc, block = names[items[0]], 1, 0, False, False
    for item in items[1:]:
        key, eq, val = (x.strip() for x in item.partition("="))
        val = val.lower().replace(" ", "")
        if eq and key == "cta_group" and val in CTA_GROUP_FIELDS:
            cta = CTA_GROUP_FIELDS[val]
        elif eq and key == "scale_vec" and val in SCALE_VEC_FIELDS:
            vec = SCALE_VEC_FIELDS[val]
        elif not eq and key == "scale_input_acc":
            acc = True
        elif not eq and key == "block_scale":
            block = True
        else:
            raise CarrierError(f"unknown tcgen05_kind field '{item}' (cta_group = 1|2|4, scale_vec = 1X|2X|4X, "
                               "scale_input_acc, block_scale)")
    return cta | vec << 2 | int(acc) << 4 | int(block) << 5 | kind << 6


@dataclass(frozen=True)
class UmmaLayout:
    """A UMMA operand layout as an attribute carries it: direction, swizzle triple, CuTe shape:stride.

    ``direction`` is 1 for UMMA_MN (MN-major) and 0 for UMMA_K (K-major)
    (spec 001's encoding); ``shape`` / ``stride`` are ``(MN mode, K mode)``
    int tuples; strides in 16-byte units, as CUTLASS's ``make_umma_desc``.
    """

    direction: int
    swizzle: tuple[int, int, int]
    shape: tuple
    stride: tuple

    @property
    def mn_mode(self) -> tuple:
        """``(shape, stride)`` of the MN mode."""
        return self.shape[0], self.stride[0]

    @property
    def k_mode(self) -> tuple:
        """``(shape, stride)`` of the K mode."""
        return self.shape[1], self.stride[1]


_UMMA_BODY = re.compile(r"^\s*(\w+)\s*,\s*swizzle\s*=\s*(\([^()]*\)|\w+)\s*,\s*(.*?)\s*:\s*(.*?)\s*$", re.DOTALL)


def umma_layout_of(attr) -> UmmaLayout | None:
    """The UMMA layout an attribute carries, ``None`` when it carries none.

    Spelling (tile-lsp's): ``#nv_tileas<umma_layout MN|K, swizzle = (mode, B, M) | NAME,
    (MN, K) : (MN stride, K stride)>``, the layout in CuTe's ``shape : stride``
    notation with one mode per dimension (``((8, 16), (8, 2)) : ((1, 64), (8, 512))``);
    ``NAME`` is a :data:`SWIZZLE_SPELLINGS` key.  Read from the value the builder decoded
    (:func:`carried_value`).  ``CarrierError`` when malformed.
    """
    return carried_value(attr, "umma_layout")


def _umma_layout(body: str) -> UmmaLayout:
    """The layout of the body of an ``umma_layout`` carrier (after the word), see
    :func:`umma_layout_of`; ``CarrierError`` when malformed."""
    m = _UMMA_BODY.match(body)
    if not m:
        raise CarrierError("umma_layout expects 'MN|K, swizzle = (mode, B, M), (MN, K) : (MN stride, K stride)', "
                           f"but got '{body}'")
    direction = {"mn": 1, "umma_mn": 1, "k": 0, "umma_k": 0}.get(m.group(1).lower())
    if direction is None:
        raise CarrierError(f"umma_layout direction must be MN or K, but got '{m.group(1)}'")
    swz_text = m.group(2)
    if swz_text.startswith("("):
        swizzle = parse_int_tuple(swz_text)
        if not (isinstance(swizzle, tuple) and len(swizzle) == 3 and all(isinstance(x, int) for x in swizzle)):
            raise CarrierError(f"a swizzle triple has three integers, but got '{swz_text}'")
    elif swz_text.lower() in SWIZZLE_SPELLINGS:
        swizzle = SWIZZLE_SPELLINGS[swz_text.lower()]
    else:
        raise CarrierError(f"unknown swizzle '{swz_text}' (one of {', '.join(n for n, _ in SWIZZLES.values())} "
                           "or a (mode, B, M) triple)")
    shape, stride = parse_int_tuple(m.group(3)), parse_int_tuple(m.group(4))
    if not (isinstance(shape, tuple) and isinstance(stride, tuple) and len(shape) == len(stride) == 2):
        raise CarrierError("a UMMA layout has two modes (MN, K) in its shape and its stride")
    if not _congruent(shape, stride):
        raise CarrierError(f"layout shape {m.group(3)} and stride {m.group(4)} are not congruent")
    return UmmaLayout(direction, tuple(swizzle), shape, stride)


@dataclass(frozen=True)
class CarrierValue:
    """What an nv_tileas carrier attribute's text decodes to (``DialectAttr.value``, decoded once by
    the builder: :func:`decode_carrier`).

    ``carrier``: ``"tcgen05_kind"`` or ``"umma_layout"``; ``value``: the kind word (``int``) or the
    :class:`UmmaLayout`, ``None`` when the text does not read; ``error``: then the
    :class:`CarrierError` message saying why.
    """

    carrier: str
    value: Any = None
    error: str | None = None


#: The carriers tile-lsp decodes: carrier word -> decoder of the body after the word.
_CARRIER_DECODERS = {"tcgen05_kind": _kind_word, "umma_layout": _umma_layout}


def decode_carrier(mnemonic: str, body: str | None) -> CarrierValue | None:
    """The value of the nv_tileas attribute ``#nv_tileas.<mnemonic><body>`` (``mnemonic`` empty for
    ``#nv_tileas<body>``) when it is a carrier (``tcgen05_kind``, ``umma_layout``: the spellings
    of :func:`kind_word_of` and :func:`umma_layout_of`), else ``None``.  A malformed carrier gives
    a :class:`CarrierValue` holding the error; nothing is raised."""
    if body is None:
        return None
    for carrier, decode in _CARRIER_DECODERS.items():
        text = _carrier_body(mnemonic, body, carrier)
        if text is not None:
            try:
                return CarrierValue(carrier, decode(text))
            except CarrierError as e:
                return CarrierValue(carrier, error=str(e))
    return None


def decode_nv_tileas_attribute(mnemonic: str, body: str | None) -> CarrierValue | KeywordAttr | None:
    """What the builder decodes the nv_tileas attribute ``#nv_tileas.<mnemonic><body>`` to, once
    (``DialectAttr.value``; ``mnemonic`` empty for ``#nv_tileas<body>``): a carrier's
    :class:`CarrierValue` (:func:`decode_carrier`), else the
    :class:`~tile_lsp.dialect.nv_tileas_types.KeywordAttr` of ``#nv_tileas<KIND WORD>``, the
    atom of ``#nv_tileas<atom NAME>`` or the word of an enum-like attribute
    (:func:`~tile_lsp.dialect.nv_tileas_types.decode_keyword_attr`); ``None`` without a body.
    Spellings: docs/nv_tileas.md "Attributes" and "Mode-pattern carriers" (spec 000, 001, 002)."""
    if body is None:
        return None
    return decode_carrier(mnemonic, body) or decode_keyword_attr(mnemonic, body)


def carried_value(attr, carrier: str) -> Any:
    """The value the nv_tileas carrier ``carrier`` attribute ``attr`` holds (the builder's
    :class:`CarrierValue`; an attribute made elsewhere is decoded here, :func:`decode_carrier`),
    ``None`` when ``attr`` is no such carrier.  ``CarrierError`` when its text does not read."""
    if getattr(attr, "dialect", None) != "nv_tileas":
        return None
    decoded = getattr(attr, "value", None)
    if isinstance(decoded, KeywordAttr):  # the builder read it: no carrier
        return None
    if not isinstance(decoded, CarrierValue):
        decoded = decode_carrier(getattr(attr, "mnemonic", ""), getattr(attr, "body", None))
    if decoded is None or decoded.carrier != carrier:
        return None
    if decoded.error is not None:
        raise CarrierError(decoded.error)
    return decoded.value


def _congruent(a, b) -> bool:
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int)
    return len(a) == len(b) and all(_congruent(x, y) for x, y in zip(a, b))
