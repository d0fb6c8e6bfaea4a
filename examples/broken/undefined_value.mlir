// Broken on purpose: %missing is never defined.
cuda_tile.module @broken_undefined {
  entry @kernel(%x: tile<i32>) {
    %a = addi %x, %missing : tile<i32>
    return
  }
}
