// Spec 001 "UMMA Canonical Layout Verifier": the seven shipped diagnostics, on nv_tileas.dot's
// a_layout attribute (A holds 16-bit elements: UMMA_MN expects K = 256/16 or 512/16, UMMA_K an MN
// size that is a multiple of 8).  Layouts in CuTe's shape : stride, one (inner, outer) pair per mode.

// -----
// valid UMMA_K layout, 128-byte swizzle
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout K, swizzle = 128B, ((8, 16), (8, 8)) : ((8, 64), (1, 512))>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>

// -----
// valid UMMA_MN layout, written with the swizzle triple
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout MN, swizzle = (2, 5, 2), ((64, 2), (8, 2)) : ((1, 64), (8, 512))>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>

// -----
// a triple outside the accepted set
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout K, swizzle = (1, 2, 3), ((8, 16), (8, 8)) : ((8, 64), (1, 512))>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>

// -----
// UMMA_MN: K extent 8 is neither 256/16 nor 512/16
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout MN, swizzle = 64B, ((64, 2), (4, 2)) : ((1, 64), (8, 512))>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>

// -----
// UMMA_MN: the MN mode is not an (inner, outer) pair
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout MN, swizzle = 64B, (128, (8, 2)) : (1, (64, 512))>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>

// -----
// UMMA_MN: the MN mode's inner stride is not 1
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout MN, swizzle = 64B, ((64, 2), (8, 2)) : ((2, 64), (8, 512))>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>

// -----
// UMMA_K: MN extent 12 is not a multiple of 8
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout K, swizzle = interleave, ((4, 3), (8, 8)) : ((8, 32), (1, 512))>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>

// -----
// UMMA_K: the K mode is not an (inner, outer) pair
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout K, swizzle = interleave, ((8, 16), 64) : ((8, 64), 1)>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>

// -----
// UMMA_K: the K mode's inner stride is not 1
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf16>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf16>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%d = nv_tileas.dot %a, %b, %c {atom = #nv_tileas<atom tcgen05_mma>, a_layout = #nv_tileas<umma_layout K, swizzle = interleave, ((8, 16), (8, 8)) : ((1, 64), (8, 512))>} : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32> -> tile<128x128xf32>
