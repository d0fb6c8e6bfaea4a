// src/detect.ts (compiled to out/): which `mlir` documents get the tileir language.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SNIFF_CHARS, looksLikeTileIR } from '../out/detect.js';

test('cuda_tile and nv_tileas text is Tile IR', () => {
  assert.equal(looksLikeTileIR('cuda_tile.module @m {\n}'), true);
  assert.equal(looksLikeTileIR('%0 = "nv_tileas.foo"() : () -> ()'), true);
  assert.equal(looksLikeTileIR('%x = arith.addf %a, %b : !cuda_tile.tile<f32>'), true);
});

test('other MLIR is not', () => {
  assert.equal(looksLikeTileIR('func.func @f() {\n  return\n}'), false);
  assert.equal(looksLikeTileIR('%x = my_cuda_tile.op'), false);
  assert.equal(looksLikeTileIR(''), false);
});

test('only the start of a large document is read', () => {
  assert.equal(looksLikeTileIR(' '.repeat(SNIFF_CHARS) + 'cuda_tile.module'), false);
  assert.equal(looksLikeTileIR(' '.repeat(SNIFF_CHARS - 100) + 'cuda_tile.module'), true);
});
