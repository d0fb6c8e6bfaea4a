// C[64x64] = A[64xK] * B[Kx64] in f16 with f32 accumulation, K walked in steps of 32.
cuda_tile.module @matmul {
  entry @matmul(%a: tile<ptr<f16>>, %b: tile<ptr<f16>>, %c: tile<ptr<f32>>, %k: tile<i32>) {
    %tok = make_token : token
    %kk = assume bounded<0, ?>, %k : tile<i32>
    %ta = make_tensor_view %a, shape = [64, %kk], strides = [%kk, 1] : tile<i32> -> tensor_view<64x?xf16, strides=[?,1]>
    %tb = make_tensor_view %b, shape = [%kk, 64], strides = [64, 1] : tile<i32> -> tensor_view<?x64xf16, strides=[64,1]>
    %tc = make_tensor_view %c, shape = [64, 64], strides = [64, 1] : tensor_view<64x64xf32, strides=[64,1]>
    %pa = make_partition_view %ta : partition_view<tile=(64x32), padding_value = zero, tensor_view<64x?xf16, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x64xf16, strides=[64,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c32 = constant <i32: 32> : tile<i32>
    %steps = divi %kk, %c32 signed : tile<i32>
    %acc0 = constant <f32: 0.000000e+00> : tile<64x64xf32>
    %acc = for %i in (%c0 to %steps, step %c1) : tile<i32> iter_values(%run = %acc0) -> (tile<64x64xf32>) {
      %ra, %t1 = load_view_tko weak %pa[%c0, %i] token = %tok : partition_view<tile=(64x32), padding_value = zero, tensor_view<64x?xf16, strides=[?,1]>>, tile<i32> -> tile<64x32xf16>, token
      %rb, %t2 = load_view_tko weak %pb[%i, %c0] token = %tok : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x64xf16, strides=[64,1]>>, tile<i32> -> tile<32x64xf16>, token
      %next = mmaf %ra, %rb, %run : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32>
      continue %next : tile<64x64xf32>
    }
    %t3 = store_view_tko weak %acc, %pc[%c0, %c0] token = %tok : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>, tile<i32> -> token
    return
  }
}
