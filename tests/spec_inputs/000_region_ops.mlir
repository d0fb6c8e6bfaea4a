// Spec 000 "Region-Op Verifier Template" and the consumer_idx checks, in the custom
// form of spec 002's worked example.  Each chunk is checked on its own (--split-input-file).
!ctok = !nv_tileas.async.pipeline.consumer_token<consumer_idx = 0, num_consumers = 2>
!ptok = !nv_tileas.async.pipeline.producer_token
!iter = !nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
%tok = "test.src"() : () -> !ctok
%it = "test.src"() : () -> !iter
// valid: the block argument may be the iterator itself (unwrapped before the comparison)
%ok = nv_tileas.async.pipeline.consume_one %tok, %it {consumer_idx = 0 : i32, consumer_types = [tile<128x128xf16>]} : (!ctok, !iter) -> !ctok {
^bb0(%x: !iter):
  nv_tileas.async.pipeline.yield %tok : !ctok
}

// -----
// step 3: block argument types against the producer types ("arguement" kept)
!ptok = !nv_tileas.async.pipeline.producer_token
!iter = !nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
%tok = "test.src"() : () -> !ptok
%it = "test.src"() : () -> !iter
%r = nv_tileas.async.pipeline.produce_one %tok, %it {producer_types = [tile<128x128xf16>]} : (!ptok, !iter) -> !ptok {
^bb0(%x: !cuda_tile.tile<128x64xf16>):
  nv_tileas.async.pipeline.yield %tok : !ptok
}

// -----
// step 4: the yield's types against the op's result types ("to be match" kept)
!ptok = !nv_tileas.async.pipeline.producer_token
!iter = !nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
%tok = "test.src"() : () -> !ptok
%it = "test.src"() : () -> !iter
%r:2 = nv_tileas.async.pipeline.produce_one_async %tok, %it {producer_types = [tile<128x128xf16>]} : (!ptok, !iter) -> (!ptok, !async.token) {
^bb0(%x: !cuda_tile.tile<128x128xf16>):
  nv_tileas.async.pipeline.yield %tok : !ptok
}

// -----
// the terminator must be nv_tileas.async.pipeline.yield
!ptok = !nv_tileas.async.pipeline.producer_token
!iter = !nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
%tok = "test.src"() : () -> !ptok
%it = "test.src"() : () -> !iter
%r = nv_tileas.async.pipeline.produce_one %tok, %it {producer_types = [tile<128x128xf16>]} : (!ptok, !iter) -> !ptok {
^bb0(%x: !cuda_tile.tile<128x128xf16>):
  nv_tileas.yield %tok : !ptok
}

// -----
// the yield of another region-bearing pipeline op (agent_switch) against that op's results
%r = nv_tileas.async.pipeline.agent_switch {num_warps = array<i32: 4, 4>} : () -> tile<4xf32> {
  nv_tileas.async.pipeline.yield
}

// -----
// consumer_idx below the consumer count of the token
!ctok = !nv_tileas.async.pipeline.consumer_token<consumer_idx = 0, num_consumers = 2>
!iter = !nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
%tok = "test.src"() : () -> !ctok
%it = "test.src"() : () -> !iter
%w = nv_tileas.async.pipeline.consumer_wait %tok, %it {consumer_idx = 2 : i32} : !ctok, !iter -> !ctok

// -----
// consumer_idx equal to the index the token carries
!ctok = !nv_tileas.async.pipeline.consumer_token<consumer_idx = 0, num_consumers = 2>
!iter = !nv_tileas.async.pipeline.iterator<tile<128x128xf16>>
%tok = "test.src"() : () -> !ctok
%it = "test.src"() : () -> !iter
%w = nv_tileas.async.pipeline.consumer_read %tok, %it {consumer_idx = 1 : i32} : !ctok, !iter -> tile<128x128xf16>
