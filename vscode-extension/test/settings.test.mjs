// src/settings.ts (compiled to out/): settings -> server command line and the
// settings object sent to the server.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  describeCommand,
  expandPath,
  needsRestart,
  readSettings,
  serverCommand,
  serverSettingsPayload,
} from '../out/settings.js';

const getter = (values) => (key, fallback) => (key in values ? values[key] : fallback);

test('defaults: tile-lsp serve, newest version, inlay hints on', () => {
  const s = readSettings(getter({}));
  assert.deepEqual(s, {
    serverPath: 'tile-lsp',
    pythonPath: '',
    extraArgs: [],
    targetGpu: '',
    tileVersion: '',
    inlayHintsEnabled: true,
    inlayResultTypes: true,
    inlayTileSizes: true,
    debounceMs: 150,
  });
  assert.deepEqual(serverCommand(s), { command: 'tile-lsp', args: ['serve'] });
  assert.deepEqual(serverSettingsPayload(s), {
    tileLsp: {
      tileVersion: null,
      targetGpu: null,
      inlayHints: { enabled: true, resultTypes: true, tileSizes: true },
      debounceMs: 150,
    },
  });
});

test('a Python interpreter runs the CLI module, extra arguments follow serve', () => {
  const s = readSettings(getter({ 'server.pythonPath': ' /opt/venv/bin/python ', 'server.extraArgs': ['--log', 'x y', 3] }));
  assert.deepEqual(serverCommand(s), {
    command: '/opt/venv/bin/python',
    args: ['-m', 'tile_lsp.cli', 'serve', '--log', 'x y'],
  });
  assert.equal(describeCommand(serverCommand(s)), '/opt/venv/bin/python -m tile_lsp.cli serve --log "x y"');
});

test('settings sent to the server', () => {
  const s = readSettings(
    getter({ targetGpu: 'sm_100', tileVersion: '13.2', 'inlayHints.enabled': false, 'inlayHints.tileSizes': false, debounceMs: 20000 }),
  );
  assert.deepEqual(serverSettingsPayload(s), {
    tileLsp: {
      tileVersion: '13.2',
      targetGpu: 'sm_100',
      inlayHints: { enabled: false, resultTypes: true, tileSizes: false },
      debounceMs: 10000,
    },
  });
});

test('values of the wrong type fall back to the defaults', () => {
  const s = readSettings(getter({ 'server.path': 42, 'server.extraArgs': 'serve', debounceMs: 'fast', tileVersion: 13.2 }));
  assert.equal(s.serverPath, 'tile-lsp');
  assert.deepEqual(s.extraArgs, []);
  assert.equal(s.debounceMs, 150);
  assert.equal(s.tileVersion, '');
});

test('~, ${userHome} and ${workspaceFolder} in paths', () => {
  assert.equal(expandPath('~/venv/bin/tile-lsp', '/home/u', '/w'), '/home/u/venv/bin/tile-lsp');
  assert.equal(expandPath('${workspaceFolder}/.venv/bin/tile-lsp', '/home/u', '/w'), '/w/.venv/bin/tile-lsp');
  assert.equal(expandPath('${userHome}/x', '/home/u', undefined), '/home/u/x');
  assert.equal(expandPath('${workspaceFolder}/x', '/home/u', undefined), '${workspaceFolder}/x');
  assert.equal(expandPath('a~/b', '/home/u', '/w'), 'a~/b');
  const s = readSettings(getter({ 'server.path': '~/bin/tile-lsp' }));
  assert.deepEqual(serverCommand(s, (p) => expandPath(p, '/h', '/w')), { command: '/h/bin/tile-lsp', args: ['serve'] });
});

test('only a change of the command line restarts the server', () => {
  const base = readSettings(getter({}));
  assert.equal(needsRestart(base, readSettings(getter({ tileVersion: '13.1' }))), false);
  assert.equal(needsRestart(base, readSettings(getter({ 'inlayHints.enabled': false }))), false);
  assert.equal(needsRestart(base, readSettings(getter({ 'server.path': '/x/tile-lsp' }))), true);
  assert.equal(needsRestart(base, readSettings(getter({ 'server.pythonPath': 'python3' }))), true);
  assert.equal(needsRestart(base, readSettings(getter({ 'server.extraArgs': ['-v'] }))), true);
});
