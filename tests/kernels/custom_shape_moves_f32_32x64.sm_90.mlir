// cat, extract and insert, each where every thread already holds the elements of some result
// slots (register moves) and where it does not (staged through shared memory), in 128 threads:
// cat along dim 0 (slot bits choose the operand) and dim 1 (a thread bit does), constant and
// run-time extract and insert indices, a block inside one slot's rows and one that cuts them, and
// tiles smaller than the CTA (replicated).  Each result goes to its own part of the 1-d output.
entry @custom_shape_moves(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<i32>, %arg4: tile<i32>, %arg5: tile<ptr<f32>>, %arg6: tile<i32>, %arg7: tile<i32>, %arg8: tile<i32>, %arg9: tile<i32>, %arg10: tile<ptr<f32>>, %arg11: tile<i32>, %arg12: tile<i32>, %arg13: tile<i32>) optimization_hints=<default = {}> {
  %tok = make_token : token
  %x0 = assume bounded<0, ?>, %arg1 : tile<i32>
  %x1 = assume bounded<0, ?>, %arg2 : tile<i32>
  %x2 = assume bounded<0, ?>, %arg3 : tile<i32>
  %x3 = assume bounded<0, ?>, %arg4 : tile<i32>
  %tx = make_tensor_view %arg0, shape = [%x0, %x1], strides = [%x2, %x3] : tile<i32> -> tensor_view<?x?xf32, strides=[?,?]>
  %y0 = assume bounded<0, ?>, %arg6 : tile<i32>
  %y1 = assume bounded<0, ?>, %arg7 : tile<i32>
  %y2 = assume bounded<0, ?>, %arg8 : tile<i32>
  %y3 = assume bounded<0, ?>, %arg9 : tile<i32>
  %ty = make_tensor_view %arg5, shape = [%y0, %y1], strides = [%y2, %y3] : tile<i32> -> tensor_view<?x?xf32, strides=[?,?]>
  %o0 = assume bounded<0, ?>, %arg11 : tile<i32>
  %o1 = assume bounded<0, ?>, %arg12 : tile<i32>
  %to = make_tensor_view %arg10, shape = [%o0], strides = [%o1] : tile<i32> -> tensor_view<?xf32, strides=[?]>
  %dyn = assume bounded<0, 1>, %arg13 : tile<i32>
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %c2 = constant <i32: 2> : tile<i32>
  %px = make_partition_view %tx : partition_view<tile=(32x64), tensor_view<?x?xf32, strides=[?,?]>>
  %x, %t0 = load_view_tko weak %px[%c0, %c0] token = %tok : partition_view<tile=(32x64), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> tile<32x64xf32>, token
  %py = make_partition_view %ty : partition_view<tile=(32x64), tensor_view<?x?xf32, strides=[?,?]>>
  %y, %t1 = load_view_tko weak %py[%c0, %c0] token = %tok : partition_view<tile=(32x64), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> tile<32x64xf32>, token
  %ps = make_partition_view %ty : partition_view<tile=(4x8), tensor_view<?x?xf32, strides=[?,?]>>
  %s, %t2 = load_view_tko weak %ps[%c1, %c2] token = %tok : partition_view<tile=(4x8), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> tile<4x8xf32>, token
  %s2, %t3 = load_view_tko weak %ps[%c2, %c1] token = %tok : partition_view<tile=(4x8), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> tile<4x8xf32>, token
  %rows = cat %x, %y dim = 0 : tile<32x64xf32>, tile<32x64xf32> -> tile<64x64xf32>
  %cols = cat %x, %y dim = 1 : tile<32x64xf32>, tile<32x64xf32> -> tile<32x128xf32>
  %e0 = extract %rows[%c1, %c0] : tile<64x64xf32> -> tile<32x64xf32>
  %e1 = extract %cols[%c0, %c1] : tile<32x128xf32> -> tile<32x64xf32>
  %e2 = extract %x[%dyn, %c0] : tile<32x64xf32> -> tile<16x64xf32>
  %e3 = extract %x[%c1, %c0] : tile<32x64xf32> -> tile<16x64xf32>
  %i0 = insert %e3, %y[%c0, %c0] : tile<16x64xf32>, tile<32x64xf32>
  %i1 = insert %s, %y[%c1, %c2] : tile<4x8xf32>, tile<32x64xf32>
  %i2 = insert %e3, %y[%dyn, %c0] : tile<16x64xf32>, tile<32x64xf32>
  %sc = cat %s, %s2 dim = 0 : tile<4x8xf32>, tile<4x8xf32> -> tile<8x8xf32>
  %si = extract %sc[%c1, %c0] : tile<8x8xf32> -> tile<4x8xf32>
  %r0 = reshape %rows : tile<64x64xf32> -> tile<4096xf32>
  %r1 = reshape %cols : tile<32x128xf32> -> tile<4096xf32>
  %r2 = reshape %e0 : tile<32x64xf32> -> tile<2048xf32>
  %r3 = reshape %e1 : tile<32x64xf32> -> tile<2048xf32>
  %r4 = reshape %e2 : tile<16x64xf32> -> tile<1024xf32>
  %r5 = reshape %e3 : tile<16x64xf32> -> tile<1024xf32>
  %r6 = reshape %i0 : tile<32x64xf32> -> tile<2048xf32>
  %r7 = reshape %i1 : tile<32x64xf32> -> tile<2048xf32>
  %r8 = reshape %i2 : tile<32x64xf32> -> tile<2048xf32>
  %r9 = reshape %sc : tile<8x8xf32> -> tile<64xf32>
  %r10 = reshape %si : tile<4x8xf32> -> tile<32xf32>
  %p4096 = make_partition_view %to : partition_view<tile=(4096), tensor_view<?xf32, strides=[?]>>
  %p2048 = make_partition_view %to : partition_view<tile=(2048), tensor_view<?xf32, strides=[?]>>
  %p1024 = make_partition_view %to : partition_view<tile=(1024), tensor_view<?xf32, strides=[?]>>
  %p64 = make_partition_view %to : partition_view<tile=(64), tensor_view<?xf32, strides=[?]>>
  %p32 = make_partition_view %to : partition_view<tile=(32), tensor_view<?xf32, strides=[?]>>
  %k4 = constant <i32: 4> : tile<i32>
  %k5 = constant <i32: 5> : tile<i32>
  %k7 = constant <i32: 7> : tile<i32>
  %k8 = constant <i32: 8> : tile<i32>
  %k9 = constant <i32: 9> : tile<i32>
  %k12 = constant <i32: 12> : tile<i32>
  %k13 = constant <i32: 13> : tile<i32>
  %k320 = constant <i32: 320> : tile<i32>
  %k642 = constant <i32: 642> : tile<i32>
  %w0 = store_view_tko weak %r0, %p4096[%c0] token = %tok : tile<4096xf32>, partition_view<tile=(4096), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w1 = store_view_tko weak %r1, %p4096[%c1] token = %tok : tile<4096xf32>, partition_view<tile=(4096), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w2 = store_view_tko weak %r2, %p2048[%k4] token = %tok : tile<2048xf32>, partition_view<tile=(2048), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w3 = store_view_tko weak %r3, %p2048[%k5] token = %tok : tile<2048xf32>, partition_view<tile=(2048), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w4 = store_view_tko weak %r4, %p1024[%k12] token = %tok : tile<1024xf32>, partition_view<tile=(1024), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w5 = store_view_tko weak %r5, %p1024[%k13] token = %tok : tile<1024xf32>, partition_view<tile=(1024), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w6 = store_view_tko weak %r6, %p2048[%k7] token = %tok : tile<2048xf32>, partition_view<tile=(2048), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w7 = store_view_tko weak %r7, %p2048[%k8] token = %tok : tile<2048xf32>, partition_view<tile=(2048), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w8 = store_view_tko weak %r8, %p2048[%k9] token = %tok : tile<2048xf32>, partition_view<tile=(2048), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w9 = store_view_tko weak %r9, %p64[%k320] token = %tok : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  %w10 = store_view_tko weak %r10, %p32[%k642] token = %tok : tile<32xf32>, partition_view<tile=(32), tensor_view<?xf32, strides=[?]>>, tile<i32> -> token
  return
}
