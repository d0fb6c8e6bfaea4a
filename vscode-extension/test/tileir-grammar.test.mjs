// The Tile IR TextMate grammar (syntaxes/tileir.tmLanguage.json), tokenized
// offline with vscode-textmate + vscode-oniguruma: each test asserts the
// innermost scope of the tokens of real cuda_tile lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { scopeOf, scopesOf, tokenize } from './textmate.mjs';

const line = async (text) => (await tokenize('source.tileir', text))[0];

test('results, op name, operands and a shaped type', async () => {
  const t = await line('    %sum = addf %va, %vb : tile<256xf32>');
  assert.equal(scopeOf(t, '%sum'), 'variable.other.ssa.tileir');
  assert.equal(scopeOf(t, '='), 'keyword.operator.assignment.tileir');
  assert.equal(scopeOf(t, 'addf'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(t, '%va'), 'variable.other.ssa.tileir');
  assert.equal(scopeOf(t, '%vb'), 'variable.other.ssa.tileir');
  assert.equal(scopeOf(t, ':'), 'punctuation.separator.colon.tileir');
  assert.equal(scopeOf(t, 'tile'), 'storage.type.tileir');
  assert.equal(scopeOf(t, '256'), 'constant.numeric.integer.dimension.tileir');
  assert.equal(scopeOf(t, 'x'), 'punctuation.separator.dimension.tileir');
  assert.equal(scopeOf(t, 'f32'), 'storage.type.primitive.tileir');
});

test('dialect prefix, op and symbol of a module', async () => {
  const t = await line('cuda_tile.module @vector_add {');
  assert.equal(scopeOf(t, 'cuda_tile'), 'entity.name.namespace.dialect.tileir');
  assert.equal(scopeOf(t, '.'), 'punctuation.accessor.dot.tileir');
  assert.equal(scopeOf(t, 'module'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(t, '@vector_add'), 'entity.name.function.symbol.tileir');
});

test('nv_tileas prefix after results', async () => {
  const t = await line('  %0 = nv_tileas.async_copy %a : tile<4xf16>');
  assert.equal(scopeOf(t, 'nv_tileas'), 'entity.name.namespace.dialect.tileir');
  assert.equal(scopeOf(t, 'async_copy'), 'keyword.other.op.tileir');
});

test('an entry with block arguments', async () => {
  const t = await line('  entry @vadd(%a: tile<ptr<f32>>, %n: tile<i32>) {');
  assert.equal(scopeOf(t, 'entry'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(t, '@vadd'), 'entity.name.function.symbol.tileir');
  assert.equal(scopeOf(t, '%a'), 'variable.other.ssa.tileir');
  assert.equal(scopeOf(t, 'ptr'), 'storage.type.tileir');
  assert.equal(scopeOf(t, 'i32'), 'storage.type.primitive.tileir');
});

test('memory ordering keyword, attribute names and the token type', async () => {
  const t = await line('    %va, %t1 = load_view_tko weak %pa[%bx] token = %tok : partition_view<tile=(256), padding_value = zero, tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<256xf32>, token');
  assert.equal(scopeOf(t, '%t1'), 'variable.other.ssa.tileir');
  assert.equal(scopeOf(t, 'load_view_tko'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(t, 'weak'), 'storage.modifier.memory.tileir');
  assert.equal(scopeOf(t, 'token'), 'entity.other.attribute-name.tileir');
  assert.equal(scopeOf(t, 'token', 1), 'storage.type.tileir');
  assert.equal(scopeOf(t, 'tile', 0), 'entity.other.attribute-name.tileir');
  assert.equal(scopeOf(t, 'padding_value'), 'entity.other.attribute-name.tileir');
  assert.equal(scopeOf(t, 'zero'), 'constant.language.enum.tileir');
  assert.equal(scopeOf(t, '?'), 'constant.language.dynamic-dimension.tileir');
  assert.equal(scopeOf(t, 'strides'), 'entity.other.attribute-name.tileir');
  assert.equal(scopeOf(t, '->'), 'punctuation.separator.arrow.tileir');
});

test('every memory ordering and scope keyword', async () => {
  const words = ['weak', 'relaxed', 'acquire', 'release', 'acq_rel', 'tl_blk', 'device', 'sys'];
  const t = await line(`    %r, %t = atomic_rmw_tko ${words.join(' ')} %p, add, %v : tile<ptr<i32>>`);
  for (const w of words) {
    assert.equal(scopeOf(t, w), 'storage.modifier.memory.tileir', w);
  }
  assert.equal(scopeOf(t, 'add'), 'constant.language.enum.tileir');
});

test('enum cases in custom and generic forms', async () => {
  const t = await line('    %c = cmpi less_than %a, %b, signed : tile<i32> -> tile<i1>');
  assert.equal(scopeOf(t, 'less_than'), 'constant.language.enum.tileir');
  assert.equal(scopeOf(t, 'signed'), 'constant.language.enum.tileir');
  assert.equal(scopeOf(t, 'i1'), 'storage.type.primitive.tileir');
  const g = await line('  %x = divf %a, %b rounding<nearest_even> : tile<f32>');
  assert.equal(scopeOf(g, 'rounding'), 'keyword.other.tileir');
  assert.equal(scopeOf(g, 'nearest_even'), 'constant.language.enum.tileir');
});

test('hex float, float and integer literals', async () => {
  const t = await line('    %c = constant <f32: [0x7FC00000, 1.5e-3, -2.0, 42]> : tile<4xf32>');
  assert.equal(scopeOf(t, 'constant'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(t, '0x7FC00000'), 'constant.numeric.hex.tileir');
  assert.equal(scopeOf(t, '1.5e-3'), 'constant.numeric.float.tileir');
  assert.equal(scopeOf(t, '-2.0'), 'constant.numeric.float.tileir');
  assert.equal(scopeOf(t, '42'), 'constant.numeric.integer.tileir');
  assert.equal(scopeOf(t, '4'), 'constant.numeric.integer.dimension.tileir');
});

test('generic form: the quoted op name, dialect types and attributes', async () => {
  const t = await line('  %0 = "cuda_tile.addf"(%a, %b) {rounding_mode = #cuda_tile.rounding<zero>} : (!cuda_tile.tile<4xf32>, !cuda_tile.tile<4xf32>) -> !cuda_tile.tile<4xf32>');
  assert.equal(scopeOf(t, 'addf'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(t, '"', 0), 'punctuation.definition.string.begin.tileir');
  assert.equal(scopeOf(t, 'rounding_mode'), 'entity.other.attribute-name.tileir');
  assert.equal(scopeOf(t, 'rounding'), 'constant.other.attribute.tileir');
  assert.equal(scopeOf(t, '!'), 'punctuation.definition.type.tileir');
  assert.equal(scopeOf(t, 'cuda_tile', 2), 'entity.name.namespace.dialect.tileir');
  assert.equal(scopeOf(t, 'tile'), 'storage.type.tileir');
  const r = await line('      "cuda_tile.return"() : () -> ()');
  assert.equal(scopeOf(r, 'return'), 'keyword.other.op.tileir');
});

test('block labels and result groups', async () => {
  const t = await line('  ^bb0(%acc: tile<f32>, %x: tile<f32>):');
  assert.equal(scopeOf(t, '^bb0'), 'entity.name.label.block.tileir');
  assert.equal(scopeOf(t, '%acc'), 'variable.other.ssa.tileir');
  const g = await line('    %r:2 = for %iv in (%lb to %ub, step %s) : tile<i32> iter_values(%a = %init) -> (tile<f32>, token) {');
  assert.equal(scopeOf(g, '%r:2'), 'variable.other.ssa.tileir');
  assert.equal(scopeOf(g, 'for'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(g, 'in'), 'keyword.other.tileir');
  assert.equal(scopeOf(g, 'to'), 'keyword.other.tileir');
  assert.equal(scopeOf(g, 'step'), 'keyword.other.tileir');
  assert.equal(scopeOf(g, 'iter_values'), 'keyword.other.tileir');
  const u = await line('    %y = negf %r#1 : tile<f32>');
  assert.equal(scopeOf(u, '%r#1'), 'variable.other.ssa.tileir');
});

test('split marker, comments and -verify-diagnostics annotations', async () => {
  const lines = await tokenize('source.tileir', '// -----\n// expected-error @below {{use of undeclared SSA value name}}\n%x = absi %s : tile<i32> // trailing');
  const [marker, expected, code] = lines;
  assert.deepEqual(scopesOf(marker, '-----'), ['source.tileir', 'meta.separator.split-input.tileir', 'keyword.control.split-marker.tileir']);
  assert.equal(scopeOf(expected, 'expected-error'), 'keyword.other.expected-diagnostic.tileir');
  assert.equal(scopeOf(expected, 'below'), 'constant.other.location.tileir');
  assert.equal(scopeOf(expected, 'use of undeclared SSA value name'), 'string.unquoted.expected-message.tileir');
  assert.equal(scopeOf(code, ' trailing'), 'comment.line.double-slash.tileir');
  assert.equal(scopeOf(code, 'absi'), 'keyword.other.op.tileir');
});

test('strings with escapes, aliases and locations', async () => {
  const t = await line('  global @msg "a\\22b\\n" : tile<i8> loc(#loc3)');
  assert.equal(scopeOf(t, 'global'), 'keyword.other.op.tileir');
  assert.equal(scopeOf(t, '\\22'), 'constant.character.escape.tileir');
  assert.equal(scopeOf(t, '\\n'), 'constant.character.escape.tileir');
  assert.equal(scopeOf(t, 'a'), 'string.quoted.double.tileir');
  assert.equal(scopeOf(t, 'loc'), 'keyword.other.tileir');
  assert.equal(scopeOf(t, '#loc3'), 'constant.other.attribute.alias.tileir');
  const a = await line('!tv = !cuda_tile.tensor_view<?x?xf16, strides=[?, 1]>');
  assert.equal(scopeOf(a, '!tv'), 'entity.name.type.alias.tileir');
  assert.equal(scopeOf(a, 'tensor_view'), 'storage.type.tileir');
  assert.equal(scopeOf(a, 'f16'), 'storage.type.primitive.tileir');
});

test('a dimension list without element type', async () => {
  const t = await line('    %v = make_partition_view %t : partition_view<tile=(32x128), tensor_view<?x?xbf16, strides=[?,1]>>');
  assert.equal(scopeOf(t, '32'), 'constant.numeric.integer.dimension.tileir');
  assert.equal(scopeOf(t, '128'), 'constant.numeric.integer.dimension.tileir');
  assert.equal(scopeOf(t, 'bf16'), 'storage.type.primitive.tileir');
});

test('booleans and words that are not keywords', async () => {
  const t = await line('  %p = constant <i1: true> : tile<i1> {something = false}');
  assert.equal(scopeOf(t, 'true'), 'constant.language.boolean.tileir');
  assert.equal(scopeOf(t, 'false'), 'constant.language.boolean.tileir');
  assert.equal(scopeOf(t, 'something'), 'entity.other.attribute-name.tileir');
});
