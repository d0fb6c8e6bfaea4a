// Broken on purpose: %missing is never defined.
cuda_tile.module @broken_undefined {
  entry @kernel(%x: tile<4xi32>) {
    %a = addi %x, %missing : tile<4xi32>
    return
  }
}
