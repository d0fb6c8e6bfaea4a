// Broken on purpose: a syntax error in the first op, and an integer op on
// float tiles further down; both are reported.
cuda_tile.module @broken_syntax {
  entry @kernel(%x: tile<4xf32>) {
    %a = addf %x, %x tile<4xf32>
    %b = absi %x : tile<4xf32>
    return
  }
}
