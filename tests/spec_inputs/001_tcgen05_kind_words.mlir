// Spec 001 "tcgen05.mma Kind-Word Verifier": the worked examples 0x42 and 0xE2, then one word per
// ladder rule, carried by nv_tileas.dot's tcgen05_kind attribute (integer or symbolic spelling).

// -----
// worked example: 0x42 = kind::i8, cta_group::2, not arch-conditional: rule 1
%a = "test.src"() : () -> !cuda_tile.tile<64x32xi8>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xi8>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xi32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_signed = true, b_signed = true, tcgen05_kind = 0x42 : i32} : tile<64x32xi8>, tile<32x64xi8>, tile<64x64xi32> -> tile<64x64xi32>

// -----
// worked example: 0x42 on the arch-conditional variant passes (opcode 10522)
%a = "test.src"() : () -> !cuda_tile.tile<64x32xi8>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xi8>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xi32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_signed = true, b_signed = true, tcgen05_kind = 0x42 : i32, arch_conditional} : tile<64x32xi8>, tile<32x64xi8>, tile<64x64xi32> -> tile<64x64xi32>

// -----
// rule 2: mxf4 with sparsity outside the arch-conditional variants
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = 0x1C2 : i32, sparse} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// rule 3: an explicit scale vector size (2X) outside the arch-conditional variants
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = 0xC6 : i32} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// rule 4: scale_input_acc on sm_100 (below sm_100a)
module attributes {nv_tileaa.compute_capability = 100 : i32} {
  %a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
  %b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
  %c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
  %d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = #nv_tileas<tcgen05_kind f16, cta_group = 2, scale_input_acc>} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>
}

// -----
// rule 5: scale_input_acc with kind::i8
%a = "test.src"() : () -> !cuda_tile.tile<64x32xi8>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xi8>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xi32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_signed = true, b_signed = true, tcgen05_kind = 0x52 : i32, arch_conditional} : tile<64x32xi8>, tile<32x64xi8>, tile<64x64xi32> -> tile<64x64xi32>

// -----
// worked example: 0xE2 = kind::f16, block_scale, cta_group::2: rule 6
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = 0xE2 : i32} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// rule 7: ashift on a block-scale opcode
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = #nv_tileas<tcgen05_kind mxf4nvf4, cta_group = 2, scale_vec = 2X, block_scale>, arch_conditional, ashift} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// rule 8: cta_group field 3 (cta_group::4 in the bitfield) reads as cta_group::2 with weight stationary
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = #nv_tileas<tcgen05_kind f16, cta_group = 4>} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// rule 9: weight stationary (bit 0) with kind::f8f6f4
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = 0x141 : i32} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// rule 10: collector::a::use with ashift
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = 0xC2 : i32, collector_a = "use", ashift} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// rule 11: kind::mxf8f6f4 with a 4X scale vector
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = 0x8A : i32, arch_conditional} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// rule 12: kind::mxf4nvf4 with a 1X scale vector
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = 0x02 : i32} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// rule 13: kind::mxf4 with a 1X scale vector
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = #nv_tileas<tcgen05_kind mxf4, cta_group = 2>} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>

// -----
// a word wider than 9 bits
%a = "test.src"() : () -> !cuda_tile.tile<64x32xf16>
%b = "test.src"() : () -> !cuda_tile.tile<32x64xf16>
%c = "test.src"() : () -> !cuda_tile.tile<64x64xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, tcgen05_kind = 512 : i32} : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32> -> tile<64x64xf32>
