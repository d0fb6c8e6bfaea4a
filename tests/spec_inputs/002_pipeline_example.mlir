// Spec 002 "Worked Example: Producer/Consumer Pipeline Region", verbatim below the first five lines,
// which define the values the example uses without defining them.  The example contradicts the
// verifier document 000 in three ways, which give its diagnostics (docs/nv_tileas.md, "Where the
// documents contradict each other"): its region yields are tiles where 000's template wants the
// op's result types (a token), its TMA load writes four types for three operands (no barrier), and
// it passes the tile block argument %stage_buf where its type list says a tiled_view.
%buf_view = "test.src"() : () -> !nv_tileaa.tiled_view<2x128x128xf16>
%tma_desc = "test.src"() : () -> !cute_nvgpu.tma_descriptor_tiled
%k_outer = "test.src"() : () -> index
%b_tile = "test.src"() : () -> !cuda_tile.tile<128x128xf16>
%acc = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
// Build the pipeline. numStages=2, one producer, one consumer.
%prod_tok, %cons_tok = nv_tileas.async.pipeline.create_pipeline %buf_view
{ numStages = 2 : i32,
producerGroupId = 0 : i8,
consumerGroupId = 1 : i8,
sharedMem = true,
dynamic = false }
: !nv_tileaa.tiled_view<2x128x128xf16>
-> !nv_tileas.async.pipeline.producer_token, !nv_tileas.async.pipeline.consumer_token
// Stage iterator
%iter = nv_tileas.async.pipeline.create_iterator %prod_tok
: !nv_tileas.async.pipeline.producer_token -> !nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
// Producer region — TMA loads, one per stage
%prod_tok2 = nv_tileas.async.pipeline.produce_one %prod_tok, %iter
{ producer_types = [tile<128x128xf16>] } : (
!nv_tileas.async.pipeline.producer_token,
!nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
) -> !nv_tileas.async.pipeline.producer_token {
^bb0(%stage_buf : !cuda_tile.tile<128x128xf16>):
%async_tok = nv_tileas.async.tiled_tma_load
%tma_desc, %stage_buf[%k_outer]
{ atom = #nv_tileas<atom tma_load_2d>,
operandSegmentSizes = array<i32: 1, 1, 1, 1> }
: !cute_nvgpu.tma_descriptor_tiled, !nv_tileaa.tiled_view<128x128xf16>,
index, !nv_tileaa.mem_token
-> !async.value<tile<128x128xf16>>
nv_tileas.async.pipeline.yield %stage_buf : tile<128x128xf16>
}
// Consumer region — wait for stage, dot, release
%cons_tok2 = nv_tileas.async.pipeline.consume_one %cons_tok, %iter
{ consumer_idx = 0 : i32,
consumer_types = [tile<128x128xf16>] } : (
!nv_tileas.async.pipeline.consumer_token,
!nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
) -> !nv_tileas.async.pipeline.consumer_token {
^bb0(%a_tile : !cuda_tile.tile<128x128xf16>):
%waited = nv_tileas.async.pipeline.consumer_wait %cons_tok, %iter
{ consumer_idx = 0 : i32 }
: !nv_tileas.async.pipeline.consumer_token,
!nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
-> !nv_tileas.async.pipeline.consumer_token
%d = nv_tileas.dot %a_tile, %b_tile, %acc
{ atom = #nv_tileas<atom mma_f16_f16_f32> }
: tile<128x128xf16>, tile<128x128xf16>, tile<128x128xf32>
-> tile<128x128xf32>
%released = nv_tileas.async.pipeline.consumer_release %waited
: !nv_tileas.async.pipeline.consumer_token
-> !nv_tileas.async.pipeline.consumer_token
nv_tileas.async.pipeline.yield %a_tile : tile<128x128xf16>
}

// -----
// The same pipeline with the three contradictions removed: the TMA load writes into a
// shared-memory view with two coordinates and its barrier, and each region yields the
// op's result type (the incoming token).  It verifies without a diagnostic.
%buf_view = "test.src"() : () -> !nv_tileaa.tiled_view<2x128x128xf16>
%tma_desc = "test.src"() : () -> !cute_nvgpu.tma_descriptor_tiled
%smem = "test.src"() : () -> !nv_tileaa.tiled_view<128x128xf16, SMEM>
%bar = "test.src"() : () -> !nv_tileaa.mem_token
%k_outer = "test.src"() : () -> index
%b_tile = "test.src"() : () -> !cuda_tile.tile<128x128xf16>
%acc = "test.src"() : () -> !cuda_tile.tile<128x128xf32>
%prod_tok, %cons_tok = nv_tileas.async.pipeline.create_pipeline %buf_view
{ numStages = 2 : i32,
producerGroupId = 0 : i8,
consumerGroupId = 1 : i8,
sharedMem = true,
dynamic = false }
: !nv_tileaa.tiled_view<2x128x128xf16>
-> !nv_tileas.async.pipeline.producer_token, !nv_tileas.async.pipeline.consumer_token
%iter = nv_tileas.async.pipeline.create_iterator %prod_tok
: !nv_tileas.async.pipeline.producer_token -> !nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
%prod_tok2 = nv_tileas.async.pipeline.produce_one %prod_tok, %iter
{ producer_types = [tile<128x128xf16>] } : (
!nv_tileas.async.pipeline.producer_token,
!nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
) -> !nv_tileas.async.pipeline.producer_token {
^bb0(%stage_buf : !cuda_tile.tile<128x128xf16>):
%async_tok = nv_tileas.async.tiled_tma_load
%tma_desc, %smem[%k_outer, %k_outer], %bar
{ atom = #nv_tileas<atom tma_load_2d>,
operandSegmentSizes = array<i32: 1, 1, 2, 1> }
: !cute_nvgpu.tma_descriptor_tiled, !nv_tileaa.tiled_view<128x128xf16, SMEM>,
index, index, !nv_tileaa.mem_token
-> !async.value<tile<128x128xf16>>
nv_tileas.async.pipeline.yield %prod_tok : !nv_tileas.async.pipeline.producer_token
}
%cons_tok2 = nv_tileas.async.pipeline.consume_one %cons_tok, %iter
{ consumer_idx = 0 : i32,
consumer_types = [tile<128x128xf16>] } : (
!nv_tileas.async.pipeline.consumer_token,
!nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
) -> !nv_tileas.async.pipeline.consumer_token {
^bb0(%a_tile : !cuda_tile.tile<128x128xf16>):
%waited = nv_tileas.async.pipeline.consumer_wait %cons_tok, %iter
{ consumer_idx = 0 : i32 }
: !nv_tileas.async.pipeline.consumer_token,
!nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
-> !nv_tileas.async.pipeline.consumer_token
%d = nv_tileas.dot %a_tile, %b_tile, %acc
{ atom = #nv_tileas<atom mma_f16_f16_f32> }
: tile<128x128xf16>, tile<128x128xf16>, tile<128x128xf32>
-> tile<128x128xf32>
%released = nv_tileas.async.pipeline.consumer_release %waited
: !nv_tileas.async.pipeline.consumer_token
-> !nv_tileas.async.pipeline.consumer_token
nv_tileas.async.pipeline.yield %cons_tok : !nv_tileas.async.pipeline.consumer_token
}
