// src/lowering.ts (compiled to out/): checking the answers of tile.showPTX
// and tile.showLowered, and their arguments.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { commandArguments, interpretLoweringResult, sanitizeTitle, stem } from '../out/lowering.js';

test('a successful Show PTX answer', () => {
  const raw = { ok: true, content: '.version 8.7\n', language: 'ptx', title: 'vadd.ptx', message: '' };
  assert.deepEqual(interpretLoweringResult(raw, 'tile.showPTX', 'k.ptx'), {
    ok: true,
    output: { content: '.version 8.7\n', language: 'ptx', title: 'vadd.ptx' },
  });
});

test('a failed lowering shows the server message', () => {
  const raw = { ok: false, content: '', language: 'ptx', title: '', message: "no lowering for 'cuda_tile.mmaf' on sm_80" };
  assert.deepEqual(interpretLoweringResult(raw, 'tile.showPTX', 'k.ptx'), {
    ok: false,
    message: "no lowering for 'cuda_tile.mmaf' on sm_80",
  });
  assert.deepEqual(interpretLoweringResult({ ok: false }, 'tile.showLowered', 'k'), {
    ok: false,
    message: 'tile.showLowered failed (tile-lsp gave no message)',
  });
});

test('answers of the wrong shape', () => {
  assert.deepEqual(interpretLoweringResult(null, 'tile.showPTX', 'k.ptx'), {
    ok: false,
    message: 'tile-lsp answered tile.showPTX with null, expected an object',
  });
  assert.deepEqual(interpretLoweringResult('text', 'tile.showPTX', 'k.ptx'), {
    ok: false,
    message: 'tile-lsp answered tile.showPTX with string, expected an object',
  });
  assert.deepEqual(interpretLoweringResult({ ok: true, content: 3 }, 'tile.showPTX', 'k.ptx'), {
    ok: false,
    message: 'tile-lsp answered tile.showPTX without content',
  });
});

test('missing title and language take the fallbacks; titles never hold a separator', () => {
  const ptx = interpretLoweringResult({ ok: true, content: 'x' }, 'tile.showPTX', 'kernel.ptx');
  assert.deepEqual(ptx, { ok: true, output: { content: 'x', language: 'ptx', title: 'kernel.ptx' } });
  const low = interpretLoweringResult({ ok: true, content: 'x', language: 'llvm', title: 'a/b\\c' }, 'tile.showLowered', 'k');
  assert.deepEqual(low, { ok: true, output: { content: 'x', language: 'tileir', title: 'a_b_c' } });
  assert.equal(sanitizeTitle('  '), 'output');
});

test('file stems and command arguments', () => {
  assert.equal(stem('file:///w/src/vector_add.mlir'), 'vector_add');
  assert.equal(stem('/w/my%20kernel.tileir'), 'my kernel');
  assert.equal(stem('/w/.hidden'), '.hidden');
  const uri = 'file:///w/k.mlir';
  assert.deepEqual(commandArguments('tile.showPTX', uri, {}), [uri]);
  assert.deepEqual(commandArguments('tile.showPTX', uri, { kernel: 'vadd' }), [uri, 'vadd']);
  assert.deepEqual(commandArguments('tile.showLowered', uri, {}), [uri]);
  assert.deepEqual(commandArguments('tile.showLowered', uri, { stage: 'tileas' }), [uri, 'tileas']);
  assert.deepEqual(commandArguments('tile.showLowered', uri, { kernel: 'vadd' }), [uri, null, 'vadd']);
});
