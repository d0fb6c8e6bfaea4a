// Spec 000 "Tiled Memop Verification": the atomic-RMW rules (tiled and async) and the
// block_tile provenance of tiled_load's view, custom forms of spec 002's convention.
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xi32, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xi32>
%i = "test.src"() : () -> index
// rmw_mode is required
%o = nv_tileas.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xi32, GMEM>, tile<64xi32>, index -> tile<64xi32>

// -----
// tiled_atomic_rmw of i8 elements with rmw_mode add
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xi8, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xi8>
%i = "test.src"() : () -> index
%o = nv_tileas.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, rmw_mode = "add", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xi8, GMEM>, tile<64xi8>, index -> tile<64xi8>

// -----
// async.tiled_atomic_rmw of i8 elements with rmw_mode add
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xi8, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xi8>
%i = "test.src"() : () -> index
%o = nv_tileas.async.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, rmw_mode = "add", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xi8, GMEM>, tile<64xi8>, index -> tile<64xi8>

// -----
// tiled_atomic_rmw of i16 elements with rmw_mode max
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xi16, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xi16>
%i = "test.src"() : () -> index
%o = nv_tileas.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, rmw_mode = "max", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xi16, GMEM>, tile<64xi16>, index -> tile<64xi16>

// -----
// async.tiled_atomic_rmw of i16 elements with rmw_mode max
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xi16, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xi16>
%i = "test.src"() : () -> index
%o = nv_tileas.async.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, rmw_mode = "max", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xi16, GMEM>, tile<64xi16>, index -> tile<64xi16>

// -----
// tiled_atomic_rmw of f16 elements with rmw_mode and
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xf16, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xf16>
%i = "test.src"() : () -> index
%o = nv_tileas.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, rmw_mode = "and", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xf16, GMEM>, tile<64xf16>, index -> tile<64xf16>

// -----
// async.tiled_atomic_rmw of f16 elements with rmw_mode xor
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xf16, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xf16>
%i = "test.src"() : () -> index
%o = nv_tileas.async.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, rmw_mode = "xor", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xf16, GMEM>, tile<64xf16>, index -> tile<64xf16>

// -----
// tiled_atomic_rmw of f32 elements with rmw_mode fadd
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xf32, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xf32>
%i = "test.src"() : () -> index
%o = nv_tileas.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, rmw_mode = "fadd", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xf32, GMEM>, tile<64xf32>, index -> tile<64xf32>

// -----
// tiled_atomic_rmw of i32 elements with rmw_mode xchg
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xi32, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xi32>
%i = "test.src"() : () -> index
%o = nv_tileas.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, rmw_mode = "xchg", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xi32, GMEM>, tile<64xi32>, index -> tile<64xi32>

// -----
// valid: 16-bit float atomics accept add, max and min
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<64xf16, GMEM>
%x = "test.src"() : () -> !cuda_tile.tile<64xf16>
%i = "test.src"() : () -> index
%o = nv_tileas.tiled_atomic_rmw %v, %x, %i {atom = #nv_tileas<atom red>, rmw_mode = "max", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : !nv_tileaa.tiled_view<64xf16, GMEM>, tile<64xf16>, index -> tile<64xf16>

// -----
// tiled_load reads a view produced by block_tile itself
%v = "nv_tileaa.make_view"() : () -> !nv_tileaa.tiled_view<128x64xf16, SMEM>
%i = "test.src"() : () -> index
%t = nv_tileas.tiled_load %v, %i, %i {atom = #nv_tileas<atom copy_s2r>, operandSegmentSizes = array<i32: 1, 2, 0, 0>} : !nv_tileaa.tiled_view<128x64xf16, SMEM>, index, index -> tile<128x64xf16>

// -----
// valid
%v = "nv_tileaa.block_tile"() : () -> !nv_tileaa.tiled_view<128x64xf16, SMEM>
%i = "test.src"() : () -> index
%t = nv_tileas.tiled_load %v, %i, %i {atom = #nv_tileas<atom copy_s2r>, operandSegmentSizes = array<i32: 1, 2, 0, 0>} : !nv_tileaa.tiled_view<128x64xf16, SMEM>, index, index -> tile<128x64xf16>
