// Broken on purpose: %y is an f16 tile but addf is told it adds f32 tiles.
cuda_tile.module @broken_types {
  entry @kernel() {
    %x = constant <f32: [1.0, 2.0, 3.0, 4.0]> : tile<4xf32>
    %y = constant <f16: [1.0, 2.0, 3.0, 4.0]> : tile<4xf16>
    %s = addf %x, %y : tile<4xf32>
    return
  }
}
