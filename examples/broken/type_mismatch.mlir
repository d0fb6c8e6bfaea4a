// Broken on purpose: %y is an f16 tile but addf is told it adds f32 tiles.
cuda_tile.module @broken_types {
  entry @kernel(%x: tile<4xf32>, %y: tile<4xf16>) {
    %s = addf %x, %y : tile<4xf32>
    return
  }
}
