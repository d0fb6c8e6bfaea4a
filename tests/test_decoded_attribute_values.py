"""Attributes decoded once by the builder (``DialectAttr.value``), read by the verifiers, hovers and the
printer without re-reading the attribute's text: nv_tileas atoms and keyword attributes
(docs/nv_tileas.md "Attributes"), generic-form cuda_tile enum attributes (NVIDIA AttrDefs.td
``CudaTileEnumAttr``).  Attributes made by hand (``value`` left ``None``) are decoded from their body."""

from __future__ import annotations

from tile_lsp.analysis.ide.hover import attribute_markdown
from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.attr_text import attr_text, normalize_attr
from tile_lsp.analysis.ir.decoders import (
    CarrierValue,
    decode_nv_tileas_attribute,
    kind_word_of,
    umma_layout_of,
)
from tile_lsp.dialect import nv_tileas_types as NT
from tests.test_nv_tileas import analyze_text, diags, tiled_load


def _op(text: str, name: str):
    return next(o for o in analyze_text(text).chunks[0].module.walk() if o.name == name)


def test_builder_decodes_nv_tileas_keyword_attributes_once():
    op = _op(tiled_load(attrs=", mem_semantic = #nv_tileas<mem_semantic relaxed>, mem_scope = #nv_tileas.scope<gpu>"),
             "nv_tileas.tiled_load")
    assert op.attr("atom").value == NT.KeywordAttr("copy_s2r", NT.AtomAttr("copy_s2r"))
    assert op.attr("mem_semantic").value == NT.KeywordAttr("relaxed")
    assert op.attr("mem_scope").value == NT.KeywordAttr("gpu")
    assert decode_nv_tileas_attribute("atom", "tma_load_2d") == NT.KeywordAttr("tma_load_2d", NT.AtomAttr("tma_load_2d"))
    assert decode_nv_tileas_attribute("", "atom a b") == NT.KeywordAttr("b")  # not an atom: three words
    assert decode_nv_tileas_attribute("", "") == NT.KeywordAttr(None)
    assert decode_nv_tileas_attribute("", "tcgen05_kind i8, cta_group = 2") == CarrierValue("tcgen05_kind", 0x42)
    assert decode_nv_tileas_attribute("atom", None) is None


def test_readers_read_the_decoded_value_first():
    # the builder's value wins over the body (which nothing re-reads) ...
    attr = A.DialectAttr("nv_tileas", "", "atom copy", NT.KeywordAttr("acquire", NT.AtomAttr("tma_load_3d")))
    assert NT.decode_atom(attr) == NT.AtomAttr("tma_load_3d")
    assert NT.enum_word(attr) == "acquire"
    assert kind_word_of(attr) is None and umma_layout_of(attr) is None
    # ... the generic cuda_tile enum attribute's decoded case too
    rounding = A.DialectAttr("cuda_tile", "rounding", ' "zero" ', A.EnumAttr("RoundingMode", "zero", "rounding"))
    assert NT.enum_word(rounding) == "zero"
    assert normalize_attr(rounding, "enum:RoundingMode").case == "zero"
    assert attr_text(rounding, "enum:RoundingMode") == "#cuda_tile.rounding<zero>"


def test_attributes_made_by_hand_are_decoded_from_their_body():
    assert NT.decode_atom(A.DialectAttr("nv_tileas", "", "atom tma_load_2d")).box_rank == 2
    assert NT.decode_atom(A.DialectAttr("nv_tileas", "atom", "mxf4")) == NT.AtomAttr("mxf4")
    assert NT.decode_atom(A.DialectAttr("nv_tileas", "", "mem_semantic relaxed")) is None
    assert NT.decode_atom(A.StringAttr("copy")) == NT.AtomAttr("copy")
    assert NT.enum_word(A.DialectAttr("nv_tileas", "", "mem_semantic relaxed")) == "relaxed"
    assert NT.enum_word(A.DialectAttr("other", "", "a, b")) == "b"
    assert NT.enum_word(A.StringAttr("gpu")) == "gpu"
    assert normalize_attr(A.DialectAttr("cuda_tile", "rounding", "zero"), "enum:RoundingMode").case == "zero"
    assert isinstance(normalize_attr(A.DialectAttr("cuda_tile", "rounding", "up"), "enum:RoundingMode"),
                      A.DialectAttr)
    # a dialect attribute holding no decoded case names it by its body, as before
    signed = A.DialectAttr("nv_tileas", "", "signed", NT.KeywordAttr("signed"))
    assert attr_text(signed, "enum:Signedness") == "#cuda_tile.signedness<signed>"


def test_verifier_and_hover_results_unchanged_by_the_decoded_value():
    op = "'nv_tileas.tiled_load' op "
    for semantic in ('"relaxed"', "#nv_tileas<mem_semantic relaxed>", "#nv_tileas.mem_semantic<relaxed>"):
        assert diags(tiled_load(attrs=f", mem_semantic = {semantic}")) == [
            (op + "memory scope is required for relaxed load", 3, 5)]
    assert diags(tiled_load(attrs=", mem_semantic = #nv_tileas<mem_semantic acquire>, mem_scope = #nv_tileas<s gpu>")) \
        == []
    # the atom's box rank, read from the decoded AtomAttr
    text = ('%gv = "test.src"() : () -> !nv_tileaa.tiled_view<128x128xf16, GMEM>\n'
            '%c = "arith.constant"() {value = 128 : index} : () -> index\n'
            "%d = nv_tileas.make_tiled_tma_desc %gv, %c, %c {atom = ATOM, swizzle_mode = SWZ} : "
            "!nv_tileaa.tiled_view<128x128xf16, GMEM>, index, index -> !nv_tileas.tma_desc\n")
    good = text.replace("ATOM", "#nv_tileas<atom tma_load_2d>").replace("SWZ", '"128B"')
    assert diags(good) == []
    assert [m for m, _, _ in diags(text.replace("ATOM", "#nv_tileas.atom<tma_load_3d>").replace("SWZ", '"128B"'))] \
        == ["'nv_tileas.make_tiled_tma_desc' op tma box-dim and copy atom box-dim mismatch"]
    hovers = []
    for swz in ('"128B"', "#nv_tileas<swizzle_mode 128B>"):
        desc = _op(text.replace("ATOM", "#nv_tileas<atom tma_load_2d>").replace("SWZ", swz),
                   "nv_tileas.make_tiled_tma_desc")
        hovers.append(attribute_markdown(desc, "swizzle_mode", desc.attr("swizzle_mode")))
    assert hovers == ["TMA swizzle mode `128B`: 128B: 128-byte swizzle (CUTLASS SWIZZLE_128B, Swizzle<3,4,3>)"] * 2
