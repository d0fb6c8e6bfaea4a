// Scans in a CTA of one warp: a 4x128 tile along its rows is lanes (5 bits) then a chain of 4 slots
// per thread, the path where a slot's total comes from the last lane (shfl.sync.idx).  Scan 1 adds
// (forward), scan 2 keeps the last non-zero (reversed, not commutative: it tells the order of the
// body's arguments), scan 3 runs on a 4x4 tile that is smaller than the warp (replicated lanes).
entry @custom_scan_chains_f32_4x128(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<i32>, %arg4: tile<i32>, %arg5: tile<ptr<f32>>, %arg6: tile<i32>, %arg7: tile<i32>, %arg8: tile<i32>, %arg9: tile<i32>, %arg10: tile<ptr<f32>>, %arg11: tile<i32>, %arg12: tile<i32>, %arg13: tile<i32>, %arg14: tile<i32>, %arg15: tile<ptr<f32>>, %arg16: tile<i32>, %arg17: tile<i32>, %arg18: tile<i32>, %arg19: tile<i32>) optimization_hints=<default = {num_worker_warps_per_cta = 1}> {
  %tok = make_token : token
  %s0_0 = assume bounded<0, ?>, %arg1 : tile<i32>
  %s0_1 = assume bounded<0, ?>, %arg2 : tile<i32>
  %t0_0 = assume bounded<0, ?>, %arg3 : tile<i32>
  %t0_1 = assume bounded<0, ?>, %arg4 : tile<i32>
  %tv0 = make_tensor_view %arg0, shape = [%s0_0, %s0_1], strides = [%t0_0, %t0_1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,?]>
  %pv0 = make_partition_view %tv0 : partition_view<tile=(4x128), tensor_view<?x?xf32, strides=[?,?]>>
  %s1_0 = assume bounded<0, ?>, %arg6 : tile<i32>
  %s1_1 = assume bounded<0, ?>, %arg7 : tile<i32>
  %t1_0 = assume bounded<0, ?>, %arg8 : tile<i32>
  %t1_1 = assume bounded<0, ?>, %arg9 : tile<i32>
  %tv1 = make_tensor_view %arg5, shape = [%s1_0, %s1_1], strides = [%t1_0, %t1_1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,?]>
  %pv1 = make_partition_view %tv1 : partition_view<tile=(4x128), tensor_view<?x?xf32, strides=[?,?]>>
  %s2_0 = assume bounded<0, ?>, %arg11 : tile<i32>
  %s2_1 = assume bounded<0, ?>, %arg12 : tile<i32>
  %t2_0 = assume bounded<0, ?>, %arg13 : tile<i32>
  %t2_1 = assume bounded<0, ?>, %arg14 : tile<i32>
  %tv2 = make_tensor_view %arg10, shape = [%s2_0, %s2_1], strides = [%t2_0, %t2_1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,?]>
  %pv2 = make_partition_view %tv2 : partition_view<tile=(4x128), tensor_view<?x?xf32, strides=[?,?]>>
  %s3_0 = assume bounded<0, ?>, %arg16 : tile<i32>
  %s3_1 = assume bounded<0, ?>, %arg17 : tile<i32>
  %t3_0 = assume bounded<0, ?>, %arg18 : tile<i32>
  %t3_1 = assume bounded<0, ?>, %arg19 : tile<i32>
  %tv3 = make_tensor_view %arg15, shape = [%s3_0, %s3_1], strides = [%t3_0, %t3_1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,?]>
  %pv3 = make_partition_view %tv3 : partition_view<tile=(4x4), tensor_view<?x?xf32, strides=[?,?]>>
  %bx, %by, %bz = get_tile_block_id : tile<i32>
  %c0 = constant <i32: 0> : tile<i32>
  %x, %ltok = load_view_tko weak %pv0[%bx, %c0] token = %tok : partition_view<tile=(4x128), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> tile<4x128xf32>, token
  %y1 = scan %x dim=1 reverse=false identities=[0.000000e+00 : f32] : tile<4x128xf32> -> tile<4x128xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %s = addf %a, %b : tile<f32>
    yield %s : tile<f32>
  }
  %st1 = store_view_tko weak %y1, %pv1[%bx, %c0] token = %tok : tile<4x128xf32>, partition_view<tile=(4x128), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> token
  %y2 = scan %x dim=1 reverse=true identities=[0.000000e+00 : f32] : tile<4x128xf32> -> tile<4x128xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %z = constant <f32: 0.000000e+00> : tile<f32>
    %nz = cmpf not_equal ordered %a, %z : tile<f32> -> tile<i1>
    %r = select %nz, %a, %b : tile<i1>, tile<f32>
    yield %r : tile<f32>
  }
  %st2 = store_view_tko weak %y2, %pv2[%bx, %c0] token = %tok : tile<4x128xf32>, partition_view<tile=(4x128), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> token
  %pvs = make_partition_view %tv0 : partition_view<tile=(4x4), tensor_view<?x?xf32, strides=[?,?]>>
  %xs, %ltok2 = load_view_tko weak %pvs[%bx, %c0] token = %tok : partition_view<tile=(4x4), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> tile<4x4xf32>, token
  %y3 = scan %xs dim=0 reverse=false identities=[0.000000e+00 : f32] : tile<4x4xf32> -> tile<4x4xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %z = constant <f32: 0.000000e+00> : tile<f32>
    %nz = cmpf not_equal ordered %b, %z : tile<f32> -> tile<i1>
    %r = select %nz, %b, %a : tile<i1>, tile<f32>
    yield %r : tile<f32>
  }
  %st3 = store_view_tko weak %y3, %pv3[%bx, %c0] token = %tok : tile<4x4xf32>, partition_view<tile=(4x4), tensor_view<?x?xf32, strides=[?,?]>>, tile<i32> -> token
  return
}
