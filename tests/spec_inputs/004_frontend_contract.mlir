// Spec 004 "Compute-Capability Attribute": a module carrying tileiras kernel metadata (tt.*,
// nv_tileaa.*) must name its target.
module attributes {tt.num_warps = 4 : i32, tt.num_ctas = 1 : i32} {
  cuda_tile.module @m {
    cuda_tile.entry @noop() {
      cuda_tile.return
    }
  }
}

// -----
// the fallback nv_tileaa.target_spec names the target too
module attributes {nv_tileaa.target_spec = "sm_100a", tt.num_warps = 4 : i32} {
  cuda_tile.module @m {
    cuda_tile.entry @noop() {
      cuda_tile.return
    }
  }
}

// -----
// spec 004 "Minimal Hand-Rolled Kernel", verbatim: NVIDIA's cuda_tile parser requires a symbol
// name on cuda_tile.module, which the example omits
module attributes {
nv_tileaa.compute_capability = 90 : i32,
tt.num_warps = 4 : i32
} {
cuda_tile.module {
cuda_tile.entry @noop() {
cuda_tile.return
}
}
}

// -----
// the same kernel with the module named: no diagnostic
module attributes {
nv_tileaa.compute_capability = 90 : i32,
tt.num_warps = 4 : i32
} {
cuda_tile.module @kernels {
cuda_tile.entry @noop() {
cuda_tile.return
}
}
}
