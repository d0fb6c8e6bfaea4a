// One A tile, the operand of two MMAs outside any loop (convert-to-nv-tileas stages it once, in a
// pinned buffer, and both nv_tileas.dot ops read it there), with two B tiles of one array:
// out[0:64] = A @ B[:, 0:64] and out[64:128] = A @ B[:, 64:128] - A @ B[:, 0:64], f32 accumulators.
entry @shared_operand_mma(%arg0: tile<ptr<f16>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<i32>, %arg4: tile<i32>, %arg5: tile<ptr<f16>>, %arg6: tile<i32>, %arg7: tile<i32>, %arg8: tile<i32>, %arg9: tile<i32>, %arg10: tile<ptr<f32>>, %arg11: tile<i32>, %arg12: tile<i32>, %arg13: tile<i32>, %arg14: tile<i32>) optimization_hints=<default = {}> {
  %tok = make_token : token
  %a0 = assume bounded<0, ?>, %arg1 : tile<i32>
  %a1 = assume bounded<0, ?>, %arg2 : tile<i32>
  %a2 = assume bounded<0, ?>, %arg3 : tile<i32>
  %a3 = assume bounded<0, ?>, %arg4 : tile<i32>
  %ta = make_tensor_view %arg0, shape = [%a0, %a1], strides = [%a2, %a3] : tile<i32> -> tensor_view<?x?xf16, strides=[?,?]>
  %b0 = assume bounded<0, ?>, %arg6 : tile<i32>
  %b1 = assume bounded<0, ?>, %arg7 : tile<i32>
  %b2 = assume bounded<0, ?>, %arg8 : tile<i32>
  %b3 = assume bounded<0, ?>, %arg9 : tile<i32>
  %tb = make_tensor_view %arg5, shape = [%b0, %b1], strides = [%b2, %b3] : tile<i32> -> tensor_view<?x?xf16, strides=[?,?]>
  %o0 = assume bounded<0, ?>, %arg11 : tile<i32>
  %o1 = assume bounded<0, ?>, %arg12 : tile<i32>
  %o2 = assume bounded<0, ?>, %arg13 : tile<i32>
  %o3 = assume bounded<0, ?>, %arg14 : tile<i32>
  %to = make_tensor_view %arg10, shape = [%o0, %o1], strides = [%o2, %o3] : tile<i32> -> tensor_view<?x?xf32, strides=[?,?]>
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %pa = make_partition_view %ta : partition_view<tile=(64x32), tensor_view<?x?xf16, strides=[?,?]>>
  %x, %t0 = load_view_tko weak %pa[%c0, %c0] token = %tok : partition_view<tile=(64x32), tensor_view<?x?xf16, strides=[?,?]>>, tile<i32> -> tile<64x32xf16>, token
  %pb = make_partition_view %tb : partition_view<tile=(32x64), tensor_view<?x?xf16, strides=[?,?]>>
  %y, %t1 = load_view_tko weak %pb[%c0, %c0] token = %tok : partition_view<tile=(32x64), tensor_view<?x?xf16, strides=[?,?]>>, tile<i32> -> tile<32x64xf16>, token
  %z, %t2 = load_view_tko weak %pb[%c0, %c1] token = %tok : partition_view<tile=(32x64), tensor_view<?x?xf16, strides=[?,?]>>, tile<i32> -> tile<32x64xf16>, token
  %zero = constant <f32: 0.000000e+00> : tile<64x64xf32>
  %xy = mmaf %x, %y, %zero : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32>
  %xz = mmaf %x, %z, %zero : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32>
  %d = subf %xz, %xy rounding<nearest_even> : tile<64x64xf32>
  %po = make_partition_view %to : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,?]>>
  %s0 = store_view_tko weak %xy, %po[%c0, %c0] token = %tok : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> token
  %s1 = store_view_tko weak %d, %po[%c1, %c0] token = %tok : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> token
  return
}
