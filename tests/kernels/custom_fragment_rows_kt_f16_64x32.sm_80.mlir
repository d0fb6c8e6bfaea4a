// custom_fragment_rows_f16_64x32 with K given as keys x d, through a view that transposes it
// (dim_map=[1, 0]): staged as its transpose (tile_lsp.transposed) and copied in whole rows; run
// with 40 keys, so that the second key block is cut (K's and V's padding).  As there otherwise:
// Attention's rows in MMA fragments (codegen/fragment_layouts.py) in 2 warps, two 16-row blocks a
// warp: per 32-key block j, S = Q K_j (f32) scaled and masked by an iota expression (key <= query + 40),
// the row max and sum carried from block to block as fragment rows, P = exp2(S - max) rounded to f16
// and used as the A operand of P V_j from registers, O = O * exp2(m_old - m_new) + P V_j.  P of each
// block and the final row max are stored too, which reads them back into the distribution; O / l at the end.
entry @fragment_rows_kt(%arg0: tile<ptr<f16>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<ptr<f16>>, %arg4: tile<i32>, %arg5: tile<i32>, %arg6: tile<ptr<f16>>, %arg7: tile<i32>, %arg8: tile<i32>, %arg9: tile<ptr<f32>>, %arg10: tile<i32>, %arg11: tile<i32>, %arg12: tile<ptr<f32>>, %arg13: tile<i32>, %arg14: tile<i32>, %arg15: tile<ptr<f16>>, %arg16: tile<i32>, %arg17: tile<i32>) optimization_hints=<default = {num_worker_warps_per_cta = 2}> {
  %tok = make_token : token
  %q0 = assume bounded<0, ?>, %arg1 : tile<i32>
  %q1 = assume bounded<0, ?>, %arg2 : tile<i32>
  %tq = make_tensor_view %arg0, shape = [%q0, %q1], strides = [%q1, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
  %k0 = assume bounded<0, ?>, %arg4 : tile<i32>
  %k1 = assume bounded<0, ?>, %arg5 : tile<i32>
  %tk = make_tensor_view %arg3, shape = [%k0, %k1], strides = [%k1, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
  %v0 = assume bounded<0, ?>, %arg7 : tile<i32>
  %v1 = assume bounded<0, ?>, %arg8 : tile<i32>
  %tv = make_tensor_view %arg6, shape = [%v0, %v1], strides = [%v1, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
  %o0 = assume bounded<0, ?>, %arg10 : tile<i32>
  %o1 = assume bounded<0, ?>, %arg11 : tile<i32>
  %to = make_tensor_view %arg9, shape = [%o0, %o1], strides = [%o1, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
  %m0 = assume bounded<0, ?>, %arg13 : tile<i32>
  %m1 = assume bounded<0, ?>, %arg14 : tile<i32>
  %tm = make_tensor_view %arg12, shape = [%m0, %m1], strides = [%m1, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
  %p0 = assume bounded<0, ?>, %arg16 : tile<i32>
  %p1 = assume bounded<0, ?>, %arg17 : tile<i32>
  %tp = make_tensor_view %arg15, shape = [%p0, %p1], strides = [%p1, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %c2 = constant <i32: 2> : tile<i32>
  %c32 = constant <i32: 32> : tile<i32>
  %c40 = constant <i32: 40> : tile<i32>
  %pq = make_partition_view %tq : partition_view<tile=(64x32), tensor_view<?x?xf16, strides=[?,1]>>
  %q, %tq1 = load_view_tko weak %pq[%c0, %c0] token = %tok : partition_view<tile=(64x32), tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<64x32xf16>, token
  %pk = make_partition_view %tk : partition_view<tile=(32x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>, dim_map=[1, 0]>
  %pv = make_partition_view %tv : partition_view<tile=(32x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>
  %pp = make_partition_view %tp : partition_view<tile=(64x32), tensor_view<?x?xf16, strides=[?,1]>>
  %scale = constant <f32: 0.5> : tile<64x32xf32>
  %zero = constant <f32: 0.000000e+00> : tile<64x32xf32>
  %ninf = constant <f32: 0xFF800000> : tile<64x32xf32>
  %m_init = constant <f32: 0xFF800000> : tile<64x1xf32>
  %l_init = constant <f32: 0.000000e+00> : tile<64x1xf32>
  %rows = iota : tile<64xi32>
  %limit = reshape %c40 : tile<i32> -> tile<1xi32>
  %limits = broadcast %limit : tile<1xi32> -> tile<64xi32>
  %last = addi %rows, %limits : tile<64xi32>
  %last2 = reshape %last : tile<64xi32> -> tile<64x1xi32>
  %lastb = broadcast %last2 : tile<64x1xi32> -> tile<64x32xi32>
  %cols = iota : tile<32xi32>
  %for:3 = for %j in (%c0 to %c2, step %c1) : tile<i32> iter_values(%acc = %zero, %l = %l_init, %m = %m_init) -> (tile<64x32xf32>, tile<64x1xf32>, tile<64x1xf32>) {
    %kj, %tk1 = load_view_tko weak %pk[%c0, %j] token = %tok : partition_view<tile=(32x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>, dim_map=[1, 0]>, tile<i32> -> tile<32x32xf16>, token
    %s = mmaf %q, %kj, %zero : tile<64x32xf16>, tile<32x32xf16>, tile<64x32xf32>
    %base = muli %j, %c32 : tile<i32>
    %base1 = reshape %base : tile<i32> -> tile<1xi32>
    %bases = broadcast %base1 : tile<1xi32> -> tile<32xi32>
    %keys = addi %bases, %cols : tile<32xi32>
    %keys2 = reshape %keys : tile<32xi32> -> tile<1x32xi32>
    %keysb = broadcast %keys2 : tile<1x32xi32> -> tile<64x32xi32>
    %keep = cmpi less_than_or_equal %keysb, %lastb, signed : tile<64x32xi32> -> tile<64x32xi1>
    %ss = mulf %s, %scale : tile<64x32xf32>
    %sm = select %keep, %ss, %ninf : tile<64x32xi1>, tile<64x32xf32>
    %mx = reduce %sm dim=1 identities=[0xFF800000 : f32] : tile<64x32xf32> -> tile<64xf32>
    (%a: tile<f32>, %b: tile<f32>) {
      %r = maxf %a, %b : tile<f32>
      yield %r : tile<f32>
    }
    %mx2 = reshape %mx : tile<64xf32> -> tile<64x1xf32>
    %mnew = maxf %m, %mx2 : tile<64x1xf32>
    %mnewb = broadcast %mnew : tile<64x1xf32> -> tile<64x32xf32>
    %d = subf %sm, %mnewb : tile<64x32xf32>
    %e = exp2 %d : tile<64x32xf32>
    %dm = subf %m, %mnew : tile<64x1xf32>
    %alpha = exp2 %dm : tile<64x1xf32>
    %sum = reduce %e dim=1 identities=[0.000000e+00 : f32] : tile<64x32xf32> -> tile<64xf32>
    (%a: tile<f32>, %b: tile<f32>) {
      %r = addf %a, %b : tile<f32>
      yield %r : tile<f32>
    }
    %sum2 = reshape %sum : tile<64xf32> -> tile<64x1xf32>
    %lnew = fma %l, %alpha, %sum2 : tile<64x1xf32>
    %vj, %tv1 = load_view_tko weak %pv[%j, %c0] token = %tok : partition_view<tile=(32x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<32x32xf16>, token
    %p = ftof %e : tile<64x32xf32> -> tile<64x32xf16>
    %sp = store_view_tko weak %p, %pp[%c0, %j] token = %tok : tile<64x32xf16>, partition_view<tile=(64x32), tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> token
    %alphab = broadcast %alpha : tile<64x1xf32> -> tile<64x32xf32>
    %scaled = mulf %acc, %alphab : tile<64x32xf32>
    %accn = mmaf %p, %vj, %scaled : tile<64x32xf16>, tile<32x32xf16>, tile<64x32xf32>
    continue %accn, %lnew, %mnew : tile<64x32xf32>, tile<64x1xf32>, tile<64x1xf32>
  }
  %lb = broadcast %for#1 : tile<64x1xf32> -> tile<64x32xf32>
  %out = divf %for#0, %lb : tile<64x32xf32>
  %po = make_partition_view %to : partition_view<tile=(64x32), tensor_view<?x?xf32, strides=[?,1]>>
  %so = store_view_tko weak %out, %po[%c0, %c0] token = %tok : tile<64x32xf32>, partition_view<tile=(64x32), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
  %pm = make_partition_view %tm : partition_view<tile=(64x1), tensor_view<?x?xf32, strides=[?,1]>>
  %sm_out = store_view_tko weak %for#2, %pm[%c0, %c0] token = %tok : tile<64x1xf32>, partition_view<tile=(64x1), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
  return
}
