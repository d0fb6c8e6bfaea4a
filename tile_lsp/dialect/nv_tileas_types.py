"""Decoders of the nv_tileas (and neighbouring nv_tileaa / async / cute_nvgpu) types and attributes.

The grammar keeps types of dialects other than cuda_tile as
:class:`~tile_lsp.dialect.types.OpaqueType` (their source text) and dialect
attributes as ``DialectAttr(dialect, mnemonic, body)``.  The functions here
turn that text into small frozen dataclasses the nv_tileas verifiers can
reason on.  Every decoder is total: text it does not recognise gives ``None``.

Accepted spellings (see ``docs/nv_tileas.md``; the spec documents only show
examples, so the residency and semantic spellings are tile-lsp's choice):

* ``!nv_tileas.async.pipeline.producer_token`` / ``...consumer_token``, with
  an optional body ``<consumer_idx = N, num_consumers = M>`` on consumer tokens;
* ``!nv_tileas.async.pipeline.iterator<T>`` where ``T`` is the payload type;
* ``!nv_tileaa.tiled_view<2x128x128xf16>`` / ``!nv_tileas.tiled_view<...>``,
  optionally followed by ``, RMEM|SMEM|TMEM|GMEM`` (case-insensitive) or
  ``, memory_space = smem`` and ``, element_stride = N``;
* ``!nv_tileas.tma_desc`` / ``!cute_nvgpu.tma_descriptor_tiled`` (TMA descriptor);
* ``!async.token`` / ``!nv_tileas.async_token`` (async completion token),
  ``!async.value<T>`` (an async value of payload ``T``);
* ``!nv_tileaa.mem_token`` / ``!nv_tileas.mem_token`` (memory ordering token);
* attributes ``#nv_tileas<atom NAME>`` / ``#nv_tileas.atom<NAME>`` and ``#nv_tileas<KIND WORD>``,
  decoded once by the builder into ``DialectAttr.value`` (:class:`KeywordAttr`).

Source of the type and attribute names: the spec documents 000 (verifiers)
and 002 (op roster, worked pipeline example).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tile_lsp.dialect import types as T

#: Residencies a tiled_view can carry (spec 000 "Tiled Memop Verification").
MEMORY_SPACES = ("RMEM", "SMEM", "TMEM", "GMEM")

#: Spelling of NVIDIA's ``FloatNV4E0M3F`` inside tiled_view bodies (no builtin MLIR type exists).
NV4_SPELLING = "f4E0M3"


@dataclass(frozen=True)
class PipelineTokenType:
    """A pipeline token: ``kind`` is ``producer`` or ``consumer``.

    ``consumer_idx`` / ``num_consumers``: optional parameters of a consumer
    token (the index carried "in token" and the consumer group size) used by
    the consumer_idx checks; ``None`` when not written.
    """

    kind: str
    consumer_idx: int | None = None
    num_consumers: int | None = None


@dataclass(frozen=True)
class PipelineIteratorType:
    """``!nv_tileas.async.pipeline.iterator<payload>``; ``payload`` is a decoded or builtin type."""

    payload: object
    payload_text: str


@dataclass(frozen=True)
class TiledViewType:
    """A tiled view: ``shape`` (ints, ``None`` for ``?``), ``element`` type, residency.

    ``memory_space`` is one of :data:`MEMORY_SPACES` or ``None`` when not
    written; ``element_stride`` is 1 unless written.  ``dialect`` is the
    dialect that spelled it (``nv_tileaa`` or ``nv_tileas``).
    """

    shape: tuple[int | None, ...]
    element: T.Type
    memory_space: str | None = None
    element_stride: int = 1
    dialect: str = "nv_tileas"

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class TmaDescType:
    """A TMA descriptor (``!nv_tileas.tma_desc`` or ``!cute_nvgpu.tma_descriptor_tiled``)."""

    spelling: str


@dataclass(frozen=True)
class AsyncTokenType:
    """An async completion token (``!async.token``)."""


@dataclass(frozen=True)
class AsyncValueType:
    """``!async.value<payload>``."""

    payload: object
    payload_text: str


@dataclass(frozen=True)
class MemTokenType:
    """A memory-ordering token (``!nv_tileaa.mem_token``)."""


@dataclass(frozen=True)
class AtomAttr:
    """``#nv_tileas<atom NAME>``: ``name`` is the atom's kind word (``tma_load_2d``, ``mxf4`` ...)."""

    name: str

    @property
    def family(self) -> str:
        """``tma_load``, ``tma_store``, ``tma_reduce``, ``mma``, ``copy`` or ``other`` from the name."""
        n = self.name.lower()
        for fam in ("tma_load", "tma_store", "tma_reduce"):
            if n.startswith(fam):
                return fam
        if n.startswith("mma") or n in BLOCK_SCALED_ATOMS or n.startswith("tcgen05") or n.startswith("wgmma"):
            return "mma"
        if n.startswith("copy") or n.startswith("ldsm") or n.startswith("stsm") or n.startswith("cp_async"):
            return "copy"
        return "other"

    @property
    def box_rank(self) -> int | None:
        """The box rank a TMA atom names by its ``_Nd`` suffix (``tma_load_2d`` -> 2), else ``None``."""
        m = re.search(r"_(\d)d$", self.name)
        return int(m.group(1)) if m else None


#: Block-scaled MMA atom words -> (atom_K, vecSize) (spec 000 "Block-Scaled MMA", catalog rows).
BLOCK_SCALED_ATOMS = {
    "mxf8f6f4": (32, 32),
    "mxf4": (64, 16),
    "mxf4nvf4": (64, 32),
}

Decoded = PipelineTokenType | PipelineIteratorType | TiledViewType | TmaDescType | AsyncTokenType | AsyncValueType \
    | MemTokenType

_NAME = re.compile(r"^!([A-Za-z_][\w$]*(?:\.[\w$]+)*)\s*(?:<(.*)>)?\s*$", re.S)


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split ``text`` at ``sep`` outside ``<>``, ``()``, ``[]`` and ``{}``; items stripped."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail or out:
        out.append(tail)
    return out


def _element(name: str) -> T.Type | None:
    if name == NV4_SPELLING:
        return T.FloatType(NV4_SPELLING)
    return T.element_type(name)


def parse_shape_element(text: str) -> tuple[tuple[int | None, ...], T.Type] | None:
    """``"2x128xf16"`` -> ``((2, 128), FloatType("f16"))``; ``None`` if malformed."""
    parts = text.strip().split("x")
    if len(parts) < 2:
        el = _element(text.strip())
        return ((), el) if el is not None else None
    dims: list[int | None] = []
    for p in parts[:-1]:
        if p == "?":
            dims.append(None)
        elif p.isdigit():
            dims.append(int(p))
        else:
            return None
    el = _element(parts[-1])
    return (tuple(dims), el) if el is not None else None


def decode_payload(text: str):
    """Decode a payload type written inside ``iterator<...>`` / ``value<...>``: builtin tile or nv type."""
    text = text.strip()
    m = re.fullmatch(r"(?:!cuda_tile\.)?tile<(.*)>", text, re.S)
    if m:
        se = parse_shape_element(m.group(1))
        if se is not None:
            return T.TileType(se[0], se[1])
    if text.startswith("!"):
        return decode_type_text(text)
    return _element(text)


def decode_type_text(text: str) -> Decoded | None:
    """Decode the source text of an nv_tileas-family type, ``None`` when not one."""
    m = _NAME.match(text.strip())
    if not m:
        return None
    name, body = m.group(1), m.group(2)
    dialect, _, mnemonic = name.partition(".")
    if mnemonic in ("async.pipeline.producer_token", "async.pipeline.consumer_token") and dialect == "nv_tileas":
        kind = mnemonic.rsplit(".", 1)[1].split("_")[0]
        params = _key_values(body or "")
        return PipelineTokenType(kind, params.get("consumer_idx"), params.get("num_consumers"))
    if dialect == "nv_tileas" and mnemonic == "async.pipeline.iterator" and body is not None:
        return PipelineIteratorType(decode_payload(body), body.strip())
    if dialect in ("nv_tileas", "nv_tileaa") and mnemonic == "tiled_view" and body is not None:
        return _tiled_view(dialect, body)
    if (dialect, mnemonic) in (("nv_tileas", "tma_desc"), ("cute_nvgpu", "tma_descriptor_tiled")):
        return TmaDescType(name)
    if (dialect, mnemonic) in (("async", "token"), ("nv_tileas", "async_token"), ("nv_tileas", "async.token")):
        return AsyncTokenType()
    if dialect == "async" and mnemonic == "value" and body is not None:
        return AsyncValueType(decode_payload(body), body.strip())
    if mnemonic == "mem_token" and dialect in ("nv_tileaa", "nv_tileas"):
        return MemTokenType()
    return None


def _key_values(body: str) -> dict[str, int]:
    out = {}
    for item in split_top(body):
        k, eq, v = item.partition("=")
        v = v.strip().split(":")[0].strip()
        if eq and v.lstrip("-").isdigit():
            out[k.strip()] = int(v)
    return out


def _tiled_view(dialect: str, body: str) -> TiledViewType | None:
    items = split_top(body)
    se = parse_shape_element(items[0]) if items else None
    if se is None:
        return None
    space, stride = None, 1
    for item in items[1:]:
        k, eq, v = item.partition("=")
        word = (v if eq else k).strip().strip('"')
        key = k.strip() if eq else ""
        if key == "element_stride" and word.isdigit():
            stride = int(word)
        elif word.upper() in MEMORY_SPACES and key in ("", "memory_space", "address_space"):
            space = word.upper()
        else:
            return None
    return TiledViewType(se[0], se[1], space, stride, dialect)


def decode_type(t: object) -> Decoded | None:
    """Decode a type of the IR (an ``OpaqueType``), or return it if already decoded; else ``None``."""
    if isinstance(t, (PipelineTokenType, PipelineIteratorType, TiledViewType, TmaDescType, AsyncTokenType,
                      AsyncValueType, MemTokenType)):
        return t
    if isinstance(t, T.OpaqueType):
        return decode_type_text(t.text)
    return None


def unwrap_pipeline_iterator(t: object) -> object:
    """The payload of an iterator type (decoded or opaque), else ``t`` unchanged (spec 000 step 2)."""
    d = decode_type(t)
    if isinstance(d, PipelineIteratorType):
        return d.payload if d.payload is not None else T.OpaqueType(d.payload_text)
    return t


@dataclass(frozen=True)
class KeywordAttr:
    """What an nv_tileas attribute that carries no packed value decodes to: ``#nv_tileas<KIND WORD>``
    or ``#nv_tileas.KIND<WORD>`` (``#nv_tileas<atom tma_load_2d>``, ``#nv_tileas<mem_semantic relaxed>``).

    The builder decodes it once into ``DialectAttr.value`` (the carriers ``tcgen05_kind`` /
    ``umma_layout`` hold their packed value instead:
    :func:`tile_lsp.analysis.ir.decoders.decode_nv_tileas_attribute`).  ``word``: the last word of
    the body, the case an enum-like attribute names (:func:`enum_word`), ``None`` for an empty body;
    ``atom``: the :class:`AtomAttr` of an atom attribute (:func:`decode_atom`), else ``None``.
    Spellings: docs/nv_tileas.md "Attributes" (tile-lsp's; spec 000 and 002 show
    ``#nv_tileas<atom tma_load_2d>`` / ``#nv_tileas<atom mxf4>``).
    """

    word: str | None
    atom: AtomAttr | None = None


def decode_keyword_attr(mnemonic: str, body: str) -> KeywordAttr:
    """The :class:`KeywordAttr` of ``#nv_tileas.<mnemonic><body>`` (``mnemonic`` empty for
    ``#nv_tileas<body>``; ``body`` without the angle brackets).  An atom is ``#nv_tileas<atom NAME>``
    or ``#nv_tileas.atom<NAME>`` (one word for its name); the word is the last of the body's words,
    commas read as blanks (docs/nv_tileas.md "Attributes"; spec 000 and 002 examples)."""
    words = body.split()
    atom = None
    if mnemonic == "" and len(words) == 2 and words[0] == "atom":
        atom = AtomAttr(words[1])
    elif mnemonic == "atom" and len(words) == 1:
        atom = AtomAttr(words[0])
    items = body.replace(",", " ").split()
    return KeywordAttr(items[-1] if items else None, atom)


def _keyword_attr(attr: object) -> KeywordAttr | None:
    """The :class:`KeywordAttr` of an nv_tileas ``DialectAttr``: the builder's (``value``), else
    decoded from its body (an attribute made elsewhere, or a carrier, whose value is its packed
    value); ``None`` for another attribute or one without a body."""
    if getattr(attr, "dialect", None) != "nv_tileas":
        return None
    value = getattr(attr, "value", None)
    if isinstance(value, KeywordAttr):
        return value
    body = getattr(attr, "body", None)
    return decode_keyword_attr(getattr(attr, "mnemonic", ""), body) if isinstance(body, str) else None


def decode_atom(attr: object) -> AtomAttr | None:
    """The atom of ``#nv_tileas<atom NAME>`` / ``#nv_tileas.atom<NAME>`` (a ``DialectAttr``: the
    :class:`KeywordAttr` the builder decoded, :func:`decode_keyword_attr`) or of a string attribute
    naming it (docs/nv_tileas.md "Attributes"; spec 000 and 002 examples)."""
    keyword = _keyword_attr(attr)
    if keyword is not None and keyword.atom is not None:
        return keyword.atom
    value = getattr(attr, "value", None)
    if isinstance(value, str) and value:
        return AtomAttr(value)
    return None


def enum_word(attr: object) -> str | None:
    """The case word of an enum-like attribute: an enum attribute's case (custom form, or the generic
    ``#cuda_tile.<mnemonic><case>`` whose case the builder decoded into ``DialectAttr.value``), a
    string, ``#nv_tileas<kind WORD>`` (the last word: :class:`KeywordAttr`), a bare keyword
    (docs/nv_tileas.md "Attributes"; NVIDIA AttrDefs.td ``CudaTileEnumAttr`` for the generic form)."""
    if attr is None:
        return None
    case = getattr(attr, "case", None)
    if isinstance(case, str):
        return case
    value = getattr(attr, "value", None)
    if isinstance(value, str):
        return value
    body = getattr(attr, "body", None)
    if isinstance(body, str):  # a DialectAttr: what the builder decoded, else the last word of the body
        if isinstance(value, KeywordAttr):
            return value.word
        if isinstance(getattr(value, "case", None), str):  # the EnumAttr of #cuda_tile.<mnemonic><case>
            return value.case
        items = body.replace(",", " ").split()
        return items[-1] if items else None
    text = getattr(attr, "text", None)
    if isinstance(text, str):
        return text.strip().strip('"')
    return str(attr).strip().strip('"')


def type_text(t: object) -> str:
    """MLIR text of a type of the IR (what diagnostics print)."""
    return str(t)
