// The injection grammar highlights fenced ```tileir and ```mlir blocks in
// Markdown.  VS Code's Markdown grammar is not on npm, so a minimal host
// grammar with the same scope name (text.html.markdown) stands in for it: the
// test checks that the injection is registered (package.json "injectTo") and
// that it embeds source.tileir between the fences.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { makeRegistry, scopeOf, scopesOf, tokenize } from './textmate.mjs';

const markdownHost = {
  scopeName: 'text.html.markdown',
  patterns: [{ match: '^#+ .*$', name: 'markup.heading.markdown' }],
};

const registry = () => makeRegistry({ 'text.html.markdown': markdownHost });

test('a ```tileir block is Tile IR inside, Markdown outside', async () => {
  const doc = '# Kernel\n```tileir\n%sum = addf %a, %b : tile<4xf32>\n```\nafter %sum';
  const [heading, fence, code, close, after] = await tokenize('text.html.markdown', doc, registry());
  assert.equal(scopeOf(heading, '# Kernel'), 'markup.heading.markdown');
  assert.equal(scopeOf(fence, 'tileir'), 'fenced_code.block.language.markdown');
  assert.deepEqual(scopesOf(code, '%sum'), [
    'text.html.markdown',
    'markup.fenced_code.block.markdown',
    'meta.embedded.block.tileir',
    'variable.other.ssa.tileir',
  ]);
  assert.equal(scopeOf(code, 'addf'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(code, 'f32'), 'storage.type.primitive.tileir');
  assert.equal(scopeOf(close, '```'), 'punctuation.definition.markdown');
  assert.deepEqual(after.map((t) => t.scopes), [['text.html.markdown']]);
});

test('```mlir blocks too, and other languages are left alone', async () => {
  const doc = '```mlir\ncuda_tile.module @m {\n```\n```python\n%x = addf\n```';
  const [, mlir, , , python] = await tokenize('text.html.markdown', doc, registry());
  assert.equal(scopeOf(mlir, 'module'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(mlir, '@m'), 'entity.name.function.symbol.tileir');
  assert.ok(python.every((t) => !t.scopes.some((s) => s.endsWith('.tileir'))), JSON.stringify(python));
});
