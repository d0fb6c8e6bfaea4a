// A 2x4x64 tile loaded through a permuted partition view (dim_map) of a 3-d tensor with run-time
// strides and extents that are not multiples of the tile (padding pos_inf), then stored into a
// tensor that cuts the tile in two dimensions: the slots of one thread move along two tile
// dimensions (tests/test_ptx_emulator.py).
cuda_tile.module @affine {
  entry @copy3d(%x: tile<ptr<f32>>, %d0: tile<i32>, %d1: tile<i32>, %d2: tile<i32>, %s0: tile<i32>, %s1: tile<i32>, %s2: tile<i32>, %y: tile<ptr<f32>>, %e0: tile<i32>, %e1: tile<i32>, %e2: tile<i32>, %t0: tile<i32>, %t1: tile<i32>) {
    %tok = make_token : token
    %tx = make_tensor_view %x, shape = [%d0, %d1, %d2], strides = [%s0, %s1, %s2] : tile<i32> -> tensor_view<?x?x?xf32, strides=[?,?,?]>
    %ty = make_tensor_view %y, shape = [%e0, %e1, %e2], strides = [%t0, %t1, 1] : tile<i32> -> tensor_view<?x?x?xf32, strides=[?,?,1]>
    %px = make_partition_view %tx : partition_view<tile=(2x4x64), padding_value = pos_inf, tensor_view<?x?x?xf32, strides=[?,?,?]>, dim_map=[1, 0, 2]>
    %py = make_partition_view %ty : partition_view<tile=(2x4x64), tensor_view<?x?x?xf32, strides=[?,?,1]>>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %v, %t = load_view_tko weak %px[%bx, %by, %bz] token = %tok : partition_view<tile=(2x4x64), padding_value = pos_inf, tensor_view<?x?x?xf32, strides=[?,?,?]>, dim_map=[1, 0, 2]>, tile<i32> -> tile<2x4x64xf32>, token
    %done = store_view_tko weak %v, %py[%bx, %by, %bz] token = %tok : tile<2x4x64xf32>, partition_view<tile=(2x4x64), tensor_view<?x?x?xf32, strides=[?,?,1]>>, tile<i32> -> token
    return
  }
}
