// Broken on purpose: a syntax error in the first op, and an integer op on
// float tiles further down; both are reported.
cuda_tile.module @broken_syntax {
  entry @kernel(%s: tile<f32>) {
    %a = addf %s, %s tile<f32>
    %b = absi %s : tile<f32>
    return
  }
}
