// Maximum of each row of a 16x128 f16 tile, widened to f32 for the reduction.
cuda_tile.module @row_max {
  entry @row_max(%src: tile<ptr<f16>>, %dst: tile<ptr<f32>>) {
    %tok = make_token : token
    %tsrc = make_tensor_view %src, shape = [16, 128], strides = [128, 1] : tensor_view<16x128xf16, strides=[128,1]>
    %tdst = make_tensor_view %dst, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %psrc = make_partition_view %tsrc : partition_view<tile=(16x128), tensor_view<16x128xf16, strides=[128,1]>>
    %pdst = make_partition_view %tdst : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %zero = constant <i32: 0> : tile<i32>
    %x, %t1 = load_view_tko weak %psrc[%zero, %zero] token = %tok : partition_view<tile=(16x128), tensor_view<16x128xf16, strides=[128,1]>>, tile<i32> -> tile<16x128xf16>, token
    %wide = ftof %x : tile<16x128xf16> -> tile<16x128xf32>
    %rmax = reduce %wide dim=1 identities=[0xFF800000 : f32] : tile<16x128xf32> -> tile<16xf32>
    (%lhs: tile<f32>, %rhs: tile<f32>) {
      %m = maxf %lhs, %rhs : tile<f32>
      yield %m : tile<f32>
    }
    %t2 = store_view_tko weak %rmax, %pdst[%zero] token = %t1 : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
    return
  }
}
