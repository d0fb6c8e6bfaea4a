// package.json against the code: commands, settings, grammars and language
// configurations it names exist, and the settings section is the one the
// server reads (tile_lsp/server/settings.py).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { extensionRoot } from './textmate.mjs';

const manifest = JSON.parse(readFileSync(join(extensionRoot, 'package.json'), 'utf8'));
const extensionSource = readFileSync(join(extensionRoot, 'src', 'extension.ts'), 'utf8');
const settingsSource = readFileSync(join(extensionRoot, 'src', 'settings.ts'), 'utf8');

test('every contributed command is registered by the extension', () => {
  const contributed = manifest.contributes.commands.map((c) => c.command).sort();
  const registered = [...extensionSource.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]).sort();
  assert.deepEqual(registered, contributed);
  for (const c of manifest.contributes.commands) {
    assert.equal(c.category, 'Tile IR', c.command);
  }
});

test('every setting read by the extension is contributed, and the other way round', () => {
  const contributed = Object.keys(manifest.contributes.configuration.properties)
    .filter((k) => k !== 'tileLsp.trace.server') // read by vscode-languageclient itself
    .sort();
  const read = [...settingsSource.matchAll(/get<unknown>\('([^']+)'/g)].map((m) => `tileLsp.${m[1]}`).sort();
  assert.deepEqual(read, contributed);
});

const repoFile = (...parts) => readFileSync(join(extensionRoot, '..', ...parts), 'utf8');

test('the settings section is one the server reads, and every server setting has an extension setting', () => {
  const serverSettings = repoFile('tile_lsp', 'server', 'settings.py');
  assert.match(serverSettings, /_SECTIONS = \([^)]*"tileLsp"/);
  const table = serverSettings.slice(serverSettings.indexOf('SETTINGS: tuple'));
  const keys = [...table.slice(0, table.indexOf('\n)\n')).matchAll(/^ {4}\("([\w.]+)",/gm)].map((m) => m[1]);
  assert.ok(keys.length >= 6, `server settings found: ${keys}`);
  const contributed = Object.keys(manifest.contributes.configuration.properties);
  for (const key of keys) {
    assert.ok(contributed.includes(`tileLsp.${key}`), `no extension setting for the server's ${key}`);
  }
});

test('the stages of Show Lowered IR are those of the lowering pipeline', async () => {
  const { LOWERED_STAGES, DEFAULT_LOWERED_STAGE } = await import('../out/lowering.js');
  // PIPELINE = PassManager([VerifyInput(), ...]); each pass class declares its name and stage
  const pipeline = repoFile('tile_lsp', 'codegen', 'pipeline.py');
  const declared = new Map([...pipeline.matchAll(/class (\w+):[\s\S]*?name: str = "([\w-]+)"\s+stage: str = "(\w+)"/g)]
    .map((m) => [m[1], { pass: m[2], stage: m[3] }]));
  const order = pipeline.match(/PIPELINE = PassManager\(\[([^\]]*)\]\)/)[1].match(/\w+(?=\(\))/g);
  const passes = order.map((cls) => declared.get(cls));
  assert.deepEqual(passes.at(-1).stage, 'ptx');
  assert.deepEqual(LOWERED_STAGES.map(({ pass, stage }) => ({ pass, stage })), passes.slice(0, -1));
  const codegen = repoFile('tile_lsp', 'server', 'codegen.py');
  assert.match(codegen, new RegExp(`else "${DEFAULT_LOWERED_STAGE}"`));
});

test('grammars, language configurations and the bundled entry point exist', () => {
  for (const g of manifest.contributes.grammars) {
    assert.ok(existsSync(join(extensionRoot, g.path)), g.path);
    const grammar = JSON.parse(readFileSync(join(extensionRoot, g.path), 'utf8'));
    assert.equal(grammar.scopeName, g.scopeName);
  }
  for (const l of manifest.contributes.languages) {
    JSON.parse(readFileSync(join(extensionRoot, l.configuration), 'utf8'));
  }
  assert.equal(manifest.main, './dist/extension.js');
  assert.ok(manifest.activationEvents.includes('onLanguage:tileir'));
});

test('the tileir language covers .tileir and .mlir; the language configuration has comments, brackets and folding', () => {
  const tileir = manifest.contributes.languages.find((l) => l.id === 'tileir');
  assert.ok(tileir.extensions.includes('.tileir') && tileir.extensions.includes('.mlir'));
  const config = JSON.parse(readFileSync(join(extensionRoot, tileir.configuration), 'utf8'));
  assert.equal(config.comments.lineComment, '//');
  assert.deepEqual(config.brackets.map((b) => b[0]), ['{', '[', '(', '<']);
  assert.ok(new RegExp(config.folding.markers.start).test('// region'));
  assert.ok(new RegExp(config.folding.markers.end).test('  // endregion'));
});

test('the .vsix is ready to publish: license file, repository and a 128x128 PNG icon', () => {
  assert.equal(manifest.license, 'Apache-2.0');
  const license = readFileSync(join(extensionRoot, 'LICENSE'), 'utf8');
  assert.match(license, /Apache License\s+Version 2\.0, January 2004/);
  assert.equal(license, repoFile('LICENSE'));
  assert.match(manifest.repository.url, /^https:\/\/.+\.git$/);
  assert.equal(manifest.repository.directory, 'vscode-extension');
  const icon = readFileSync(join(extensionRoot, manifest.icon));
  assert.deepEqual([...icon.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.deepEqual([icon.readUInt32BE(16), icon.readUInt32BE(20)], [128, 128]); // IHDR width, height
  assert.doesNotMatch(manifest.scripts.package, /--skip-license|--allow-missing-repository/);
  const ignore = readFileSync(join(extensionRoot, '.vscodeignore'), 'utf8');
  assert.match(ignore, /^!LICENSE$/m);
  assert.match(ignore, /^!images\/\*\.png$/m);
});
