// Reductions of every register class through the warp-shuffle path (tile_lsp/codegen/reductions.py):
// f32 over slots and warps (dim 0) and over lanes (dim 1), i64 and f64 (two-half shuffles), f16
// (widened shuffles), i1 (0/1 shuffles), a 3-d middle dimension, a tile smaller than the CTA
// (replicated), a two-operand body, slot bits alone, and a body that is not commutative.
// Each result goes to its own part of the one 768-element output (partition index x tile size).
entry @custom_reductions_64x32(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<i32>, %arg4: tile<i32>, %arg5: tile<ptr<f32>>, %arg6: tile<i32>, %arg7: tile<i32>) optimization_hints=<default = {}> {
  %tok = make_token : token
  %s0 = assume bounded<0, ?>, %arg1 : tile<i32>
  %s1 = assume bounded<0, ?>, %arg2 : tile<i32>
  %t0 = assume bounded<0, ?>, %arg3 : tile<i32>
  %t1 = assume bounded<0, ?>, %arg4 : tile<i32>
  %tv = make_tensor_view %arg0, shape = [%s0, %s1], strides = [%t0, %t1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,?]>
  %os = assume bounded<0, ?>, %arg6 : tile<i32>
  %ot = assume bounded<0, ?>, %arg7 : tile<i32>
  %out = make_tensor_view %arg5, shape = [%os], strides = [%ot] : tile<i32> -> tensor_view<?xf32, strides=[?]>
  %bx, %by, %bz = get_tile_block_id : tile<i32>
  %c0 = constant <i32: 0> : tile<i32>
  %pv = make_partition_view %tv : partition_view<tile=(64x32), tensor_view<?x?xf32, strides=[?,?]>>
  %x, %t = load_view_tko weak %pv[%bx, %c0] token = %tok : partition_view<tile=(64x32), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> tile<64x32xf32>, token
  %small_pv = make_partition_view %tv : partition_view<tile=(4x8), tensor_view<?x?xf32, strides=[?,?]>>
  %small, %t2 = load_view_tko weak %small_pv[%bx, %c0] token = %tok : partition_view<tile=(4x8), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> tile<4x8xf32>, token
  %o32 = make_partition_view %out : partition_view<tile=(32), tensor_view<?xf32, strides=[?]>>
  %o64 = make_partition_view %out : partition_view<tile=(64), tensor_view<?xf32, strides=[?]>>
  %o128 = make_partition_view %out : partition_view<tile=(128), tensor_view<?xf32, strides=[?]>>
  %o4 = make_partition_view %out : partition_view<tile=(4), tensor_view<?xf32, strides=[?]>>
  // f32 sum over dim 0: slot and warp bits
  %r0 = reduce %x dim=0 identities=[0.000000e+00 : f32] : tile<64x32xf32> -> tile<32xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %y = addf %a, %b : tile<f32>
    yield %y : tile<f32>
  }
  %i0 = constant <i32: 0> : tile<i32>
  %w0 = store_view_tko weak %r0, %o32[%i0] token = %tok : tile<32xf32>, partition_view<tile=(32), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  // f32 max over dim 1: lane bits
  %r1 = reduce %x dim=1 identities=[0xFF800000 : f32] : tile<64x32xf32> -> tile<64xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %y = maxf %b, %a : tile<f32>
    yield %y : tile<f32>
  }
  %i1 = constant <i32: 1> : tile<i32>
  %w1 = store_view_tko weak %r1, %o64[%i1] token = %tok : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  // i64 sum over dim 1 of round(x * 1000)
  %k = constant <f32: 1000.0> : tile<64x32xf32>
  %xk = mulf %x, %k : tile<64x32xf32>
  %xi = ftoi %xk signed : tile<64x32xf32> -> tile<64x32xi32>
  %xl = exti %xi signed : tile<64x32xi32> -> tile<64x32xi64>
  %r2 = reduce %xl dim=1 identities=[0 : i64] : tile<64x32xi64> -> tile<64xi64>
  (%a: tile<i64>, %b: tile<i64>) {
    %y = addi %a, %b : tile<i64>
    yield %y : tile<i64>
  }
  %r2f = itof %r2 signed : tile<64xi64> -> tile<64xf32>
  %i2 = constant <i32: 2> : tile<i32>
  %w2 = store_view_tko weak %r2f, %o64[%i2] token = %tok : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  // f16 min over dim 1
  %xh = ftof %x : tile<64x32xf32> -> tile<64x32xf16>
  %r3 = reduce %xh dim=1 identities=[0x7C00 : f16] : tile<64x32xf16> -> tile<64xf16>
  (%a: tile<f16>, %b: tile<f16>) {
    %y = minf %a, %b : tile<f16>
    yield %y : tile<f16>
  }
  %r3f = ftof %r3 : tile<64xf16> -> tile<64xf32>
  %i3 = constant <i32: 3> : tile<i32>
  %w3 = store_view_tko weak %r3f, %o64[%i3] token = %tok : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  // i1: is any element of the row above 1.5
  %th = constant <f32: 1.5> : tile<64x32xf32>
  %big = cmpf greater_than ordered %x, %th : tile<64x32xf32> -> tile<64x32xi1>
  %r4 = reduce %big dim=1 identities=[false] : tile<64x32xi1> -> tile<64xi1>
  (%a: tile<i1>, %b: tile<i1>) {
    %y = ori %a, %b : tile<i1>
    yield %y : tile<i1>
  }
  %r4i = exti %r4 unsigned : tile<64xi1> -> tile<64xi32>
  %r4f = itof %r4i signed : tile<64xi32> -> tile<64xf32>
  %i4 = constant <i32: 4> : tile<i32>
  %w4 = store_view_tko weak %r4f, %o64[%i4] token = %tok : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  // f64 sum over the middle dimension of 4x16x32
  %xd = ftof %x : tile<64x32xf32> -> tile<64x32xf64>
  %x3 = reshape %xd : tile<64x32xf64> -> tile<4x16x32xf64>
  %r5 = reduce %x3 dim=1 identities=[0.000000e+00 : f64] : tile<4x16x32xf64> -> tile<4x32xf64>
  (%a: tile<f64>, %b: tile<f64>) {
    %y = addf %a, %b : tile<f64>
    yield %y : tile<f64>
  }
  %r5f = ftof %r5 : tile<4x32xf64> -> tile<4x32xf32>
  %r5l = reshape %r5f : tile<4x32xf32> -> tile<128xf32>
  %i5 = constant <i32: 3> : tile<i32>
  %w5 = store_view_tko weak %r5l, %o128[%i5] token = %tok : tile<128xf32>, partition_view<tile=(128), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  // a 32-element tile in a 128-thread CTA: replicated
  %r6 = reduce %small dim=1 identities=[1.000000e+00 : f32] : tile<4x8xf32> -> tile<4xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %y = mulf %a, %b : tile<f32>
    yield %y : tile<f32>
  }
  %i6 = constant <i32: 128> : tile<i32>
  %w6 = store_view_tko weak %r6, %o4[%i6] token = %tok : tile<4xf32>, partition_view<tile=(4), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  // two operands, each its own commutative op
  %r7:2 = reduce %x, %xk dim=0 identities=[0x7F800000 : f32, 0.000000e+00 : f32] : tile<64x32xf32>, tile<64x32xf32> -> tile<32xf32>, tile<32xf32>
  (%a0: tile<f32>, %b0: tile<f32>, %a1: tile<f32>, %b1: tile<f32>) {
    %y0 = minf %a0, %b0 : tile<f32>
    %y1 = addf %b1, %a1 : tile<f32>
    yield %y0, %y1 : tile<f32>, tile<f32>
  }
  %i7 = constant <i32: 17> : tile<i32>
  %w7 = store_view_tko weak %r7#0, %o32[%i7] token = %tok : tile<32xf32>, partition_view<tile=(32), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %i8 = constant <i32: 18> : tile<i32>
  %w8 = store_view_tko weak %r7#1, %o32[%i8] token = %tok : tile<32xf32>, partition_view<tile=(32), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  // over slot bits only (16x128 in 128 threads): each thread folds its own slots, no exchange
  %x16 = reshape %x : tile<64x32xf32> -> tile<16x128xf32>
  %r8 = reduce %x16 dim=0 identities=[0xFF800000 : f32] : tile<16x128xf32> -> tile<128xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %y = maxf %a, %b : tile<f32>
    yield %y : tile<f32>
  }
  %i9 = constant <i32: 5> : tile<i32>
  %w9 = store_view_tko weak %r8, %o128[%i9] token = %tok : tile<128xf32>, partition_view<tile=(128), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  // associative, not commutative: the first non-zero element of a row (x where x > 1.5, else 0), over
  // lanes (dim 1 of 64x32), over lanes and warps (dim 1 of 16x128: the butterfly keeps the lower
  // lanes' partial first), and over slots and warps (dim 0 of 64x32: the sequential loop)
  %zero = constant <f32: 0.000000e+00> : tile<64x32xf32>
  %xz = select %big, %x, %zero : tile<64x32xi1>, tile<64x32xf32>
  %r9 = reduce %xz dim=1 identities=[0.000000e+00 : f32] : tile<64x32xf32> -> tile<64xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %z = constant <f32: 0.000000e+00> : tile<f32>
    %nz = cmpf not_equal ordered %a, %z : tile<f32> -> tile<i1>
    %y = select %nz, %a, %b : tile<i1>, tile<f32>
    yield %y : tile<f32>
  }
  %i10 = constant <i32: 5> : tile<i32>
  %w10 = store_view_tko weak %r9, %o64[%i10] token = %tok : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %xz16 = reshape %xz : tile<64x32xf32> -> tile<16x128xf32>
  %r10 = reduce %xz16 dim=1 identities=[0.000000e+00 : f32] : tile<16x128xf32> -> tile<16xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %z = constant <f32: 0.000000e+00> : tile<f32>
    %nz = cmpf not_equal ordered %a, %z : tile<f32> -> tile<i1>
    %y = select %nz, %a, %b : tile<i1>, tile<f32>
    yield %y : tile<f32>
  }
  %o16 = make_partition_view %out : partition_view<tile=(16), tensor_view<?xf32, strides=[?]>>
  %i11 = constant <i32: 38> : tile<i32>
  %w11 = store_view_tko weak %r10, %o16[%i11] token = %tok : tile<16xf32>, partition_view<tile=(16), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %r11 = reduce %xz dim=0 identities=[0.000000e+00 : f32] : tile<64x32xf32> -> tile<32xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %z = constant <f32: 0.000000e+00> : tile<f32>
    %nz = cmpf not_equal ordered %a, %z : tile<f32> -> tile<i1>
    %y = select %nz, %a, %b : tile<i1>, tile<f32>
    yield %y : tile<f32>
  }
  %i12 = constant <i32: 1> : tile<i32>
  %w12 = store_view_tko weak %r11, %o32[%i12] token = %tok : tile<32xf32>, partition_view<tile=(32), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  return
}
