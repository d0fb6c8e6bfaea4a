// Spec 000 "TMA Verification" (with spec 003's layer-1 coordinate example), custom forms of spec 002.
!gview = !nv_tileaa.tiled_view<128x128xf16, GMEM>
%g = "test.src"() : () -> !gview
%c128 = "arith.constant"() {value = 128 : index} : () -> index
// the atom names a 3-d box, the op gives two box dimensions
%d = nv_tileas.make_tiled_tma_desc %g, %c128, %c128 {atom = #nv_tileas<atom tma_load_3d>} : !gview, index, index -> !nv_tileas.tma_desc

// -----
// 4 x f16 = 8 bytes: the leading box dimension is not a multiple of 16 bytes
!gview = !nv_tileaa.tiled_view<128x128xf16, GMEM>
%g = "test.src"() : () -> !gview
%c128 = "arith.constant"() {value = 128 : index} : () -> index
%c4 = "arith.constant"() {value = 4 : index} : () -> index
%d = nv_tileas.make_tiled_tma_desc %g, %c128, %c4 {atom = #nv_tileas<atom tma_load_2d>} : !gview, index, index -> !nv_tileas.tma_desc

// -----
// a descriptor builder left inside an LLVM function: the lowering that erases it did not run
!gview = !nv_tileaa.tiled_view<128x128xf16, GMEM>
"llvm.func"() ({
^bb0(%g: !gview, %c128: index):
  %d = nv_tileas.make_tiled_tma_desc %g, %c128, %c128 {atom = #nv_tileas<atom tma_load_2d>} : !gview, index, index -> !nv_tileas.tma_desc
  "llvm.return"() : () -> ()
}) {sym_name = "kernel"} : () -> ()

// -----
// a TMA load pads with zero only
!sview = !nv_tileaa.tiled_view<128x128xf16, SMEM>
%desc = "test.src"() : () -> !nv_tileas.tma_desc
%buf = "test.src"() : () -> !sview
%bar = "test.src"() : () -> !nv_tileaa.mem_token
%i = "test.src"() : () -> index
%t = nv_tileas.async.tiled_tma_load %desc, %buf[%i, %i], %bar {atom = #nv_tileas<atom tma_load_2d>, padding_value = 1.0 : f16, operandSegmentSizes = array<i32: 1, 1, 2, 1>} : !nv_tileas.tma_desc, !sview, index, index, !nv_tileaa.mem_token -> !async.token

// -----
// spec 003 layer 1: one coordinate per dimension of the view
!sview = !nv_tileaa.tiled_view<128x128xf16, SMEM>
%desc = "test.src"() : () -> !nv_tileas.tma_desc
%buf = "test.src"() : () -> !sview
%bar = "test.src"() : () -> !nv_tileaa.mem_token
%i = "test.src"() : () -> index
%t = nv_tileas.async.tiled_tma_load %desc, %buf[%i], %bar {atom = #nv_tileas<atom tma_load_2d>, operandSegmentSizes = array<i32: 1, 1, 1, 1>} : !nv_tileas.tma_desc, !sview, index, !nv_tileaa.mem_token -> !async.token

// -----
// valid: a TMA store of a shared-memory view
!sview = !nv_tileaa.tiled_view<128x128xf16, SMEM>
%desc = "test.src"() : () -> !nv_tileas.tma_desc
%buf = "test.src"() : () -> !sview
%i = "test.src"() : () -> index
%t = nv_tileas.async.tiled_tma_store %desc, %buf[%i, %i] {atom = #nv_tileas<atom tma_store_2d>, operandSegmentSizes = array<i32: 1, 1, 2>} : !nv_tileas.tma_desc, !sview, index, index -> !async.token
