// Spec 000 "Block-Scaled MMA Verification": the worked failure as the spec writes it, then one
// input per phase / catalog diagnostic.
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf4E2M1FN>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf4E2M1FN>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%sfa = "test.src"() : () -> !cuda_tile.tile<128x4xf8E8M0FNU>
%sfb = "test.src"() : () -> !cuda_tile.tile<4x128xf8E4M3FN>
%d = nv_tileas.block_scaled_mma %a, %b, %c, %sfa, %sfb
    { atom = #nv_tileas<atom mxf4>,
      operandSegmentSizes = array<i32: 1, 1, 1, 1, 1> }
    : tile<128x64xf4E2M1FN>, tile<64x128xf4E2M1FN>, tile<128x128xf32>,
      tile<128x4xf8E8M0FNU>, tile<4x128xf8E4M3FN>
    -> tile<128x128xf32>

// -----
// phase 3: an f16 accumulator
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf4E2M1FN>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf4E2M1FN>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf16>
%sfa = "test.src"() : () -> !cuda_tile.tile<128x4xf8E8M0FNU>
%sfb = "test.src"() : () -> !cuda_tile.tile<4x128xf8E8M0FNU>
%d = nv_tileas.block_scaled_mma %a, %b, %c, %sfa, %sfb {atom = #nv_tileas<atom mxf4>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : tile<128x64xf4E2M1FN>, tile<64x128xf4E2M1FN>, tile<128x128xf16>, tile<128x4xf8E8M0FNU>, tile<4x128xf8E8M0FNU> -> tile<128x128xf16>

// -----
// phase 4: A/sfa give 16-element scale vectors, B/sfb 32
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf4E2M1FN>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf4E2M1FN>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%sfa = "test.src"() : () -> !cuda_tile.tile<128x4xf8E8M0FNU>
%sfb = "test.src"() : () -> !cuda_tile.tile<2x128xf8E8M0FNU>
%d = nv_tileas.block_scaled_mma %a, %b, %c, %sfa, %sfb {atom = #nv_tileas<atom mxf4>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : tile<128x64xf4E2M1FN>, tile<64x128xf4E2M1FN>, tile<128x128xf32>, tile<128x4xf8E8M0FNU>, tile<2x128xf8E8M0FNU> -> tile<128x128xf32>

// -----
// catalog (64, 16): E5M2 scale factors
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf4E2M1FN>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf4E2M1FN>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%sfa = "test.src"() : () -> !cuda_tile.tile<128x4xf8E5M2>
%sfb = "test.src"() : () -> !cuda_tile.tile<4x128xf8E5M2>
%d = nv_tileas.block_scaled_mma %a, %b, %c, %sfa, %sfb {atom = #nv_tileas<atom mxf4>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : tile<128x64xf4E2M1FN>, tile<64x128xf4E2M1FN>, tile<128x128xf32>, tile<128x4xf8E5M2>, tile<4x128xf8E5M2> -> tile<128x128xf32>

// -----
// catalog (64, 32): E4M3FN scale factors on the NVFP4 row
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf4E2M1FN>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf4E2M1FN>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%sfa = "test.src"() : () -> !cuda_tile.tile<128x2xf8E4M3FN>
%sfb = "test.src"() : () -> !cuda_tile.tile<2x128xf8E4M3FN>
%d = nv_tileas.block_scaled_mma %a, %b, %c, %sfa, %sfb {atom = #nv_tileas<atom mxf4nvf4>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : tile<128x64xf4E2M1FN>, tile<64x128xf4E2M1FN>, tile<128x128xf32>, tile<128x2xf8E4M3FN>, tile<2x128xf8E4M3FN> -> tile<128x128xf32>

// -----
// catalog (32, 32): FP8 with 16-element scale vectors
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf8E4M3FN>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf8E4M3FN>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%sfa = "test.src"() : () -> !cuda_tile.tile<128x4xf8E8M0FNU>
%sfb = "test.src"() : () -> !cuda_tile.tile<4x128xf8E8M0FNU>
%d = nv_tileas.block_scaled_mma %a, %b, %c, %sfa, %sfb {atom = #nv_tileas<atom mxf8f6f4>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : tile<128x64xf8E4M3FN>, tile<64x128xf8E4M3FN>, tile<128x128xf32>, tile<128x4xf8E8M0FNU>, tile<4x128xf8E8M0FNU> -> tile<128x128xf32>

// -----
// valid: MX-FP4, (atom_K, vecSize) = (64, 16), packed 0x4000000010
%a = "test.src"() : () -> !cuda_tile.tile<128x64xf4E2M1FN>
%b = "test.src"() : () -> !cuda_tile.tile<64x128xf4E2M1FN>
%c = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%sfa = "test.src"() : () -> !cuda_tile.tile<128x4xf8E8M0FNU>
%sfb = "test.src"() : () -> !cuda_tile.tile<4x128xf8E8M0FNU>
%d = nv_tileas.block_scaled_mma %a, %b, %c, %sfa, %sfb {atom = #nv_tileas<atom mxf4>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : tile<128x64xf4E2M1FN>, tile<64x128xf4E2M1FN>, tile<128x128xf32>, tile<128x4xf8E8M0FNU>, tile<4x128xf8E8M0FNU> -> tile<128x128xf32>
