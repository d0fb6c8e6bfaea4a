/**
 * The extension's settings (section `tileLsp`) and what they become: the
 * server's command line and the settings object sent to the server.
 *
 * Pure functions with no `vscode` import, so that the unit tests run them in
 * plain Node.  The server reads the object produced by
 * {@link serverSettingsPayload} from `initializationOptions` and from
 * `workspace/didChangeConfiguration` (tile_lsp/server/settings.py, whose
 * SETTINGS table names the keys: tileVersion, targetGpu, debounceMs,
 * inlayHints.{enabled,resultTypes,tileSizes}, under the section `tileLsp`).
 */

/** The configuration section of the extension, and the section name the server reads. */
export const SECTION = 'tileLsp';

/** The settings of the extension, read from the `tileLsp` section. */
export interface ExtensionSettings {
  /** `tile-lsp` executable, a name on PATH or a path (setting `tileLsp.server.path`). */
  serverPath: string;
  /** Python interpreter with tile-lsp installed; empty: use {@link serverPath}. */
  pythonPath: string;
  /** Extra arguments after `serve`. */
  extraArgs: string[];
  /** Target GPU such as `sm_90`; empty: the server's default. */
  targetGpu: string;
  /** Tile IR version such as `13.2`; empty: the newest. */
  tileVersion: string;
  /** Whether inlay hints are requested from the server and shown. */
  inlayHintsEnabled: boolean;
  /** Inlay hints for result types the custom form leaves out. */
  inlayResultTypes: boolean;
  /** Inlay hints for tile element counts and byte sizes. */
  inlayTileSizes: boolean;
  /** Debounce of the analysis after an edit, in milliseconds. */
  debounceMs: number;
}

/** Reads one setting of the section; `fallback` when unset. */
export type SettingGetter = <T>(key: string, fallback: T) => T;

const asString = (v: unknown, fallback: string): string => (typeof v === 'string' ? v.trim() : fallback);

/**
 * Reads the settings through `get` (a `WorkspaceConfiguration.get` of the
 * `tileLsp` section).  Values of the wrong type fall back to the defaults of
 * package.json, so a hand-edited settings.json cannot break the server start.
 */
export function readSettings(get: SettingGetter): ExtensionSettings {
  const extra = get<unknown>('server.extraArgs', []);
  const debounce = get<unknown>('debounceMs', 150);
  return {
    serverPath: asString(get<unknown>('server.path', 'tile-lsp'), 'tile-lsp') || 'tile-lsp',
    pythonPath: asString(get<unknown>('server.pythonPath', ''), ''),
    extraArgs: Array.isArray(extra) ? extra.filter((a): a is string => typeof a === 'string') : [],
    targetGpu: asString(get<unknown>('targetGpu', ''), ''),
    tileVersion: asString(get<unknown>('tileVersion', ''), ''),
    inlayHintsEnabled: get<unknown>('inlayHints.enabled', true) !== false,
    inlayResultTypes: get<unknown>('inlayHints.resultTypes', true) !== false,
    inlayTileSizes: get<unknown>('inlayHints.tileSizes', true) !== false,
    debounceMs: typeof debounce === 'number' && Number.isFinite(debounce) ? Math.min(Math.max(debounce, 0), 10000) : 150,
  };
}

/** A process to start: executable and arguments (no shell). */
export interface ServerCommand {
  command: string;
  args: string[];
}

/**
 * Expands `~` at the start of a path and `${workspaceFolder}` / `${userHome}`
 * anywhere in it.  `workspaceFolder` undefined leaves that variable as is.
 */
export function expandPath(p: string, home: string, workspaceFolder: string | undefined): string {
  let out = p;
  if (out === '~' || out.startsWith('~/')) {
    out = home + out.slice(1);
  }
  out = out.replace(/\$\{userHome\}/g, home);
  if (workspaceFolder !== undefined) {
    out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  }
  return out;
}

/**
 * The server's command line: `<pythonPath> -m tile_lsp.cli serve ARGS` when a
 * Python interpreter is set, else `<serverPath> serve ARGS` (the `tile-lsp
 * serve` subcommand of tile_lsp/cli.py, LSP over stdio).
 */
export function serverCommand(s: ExtensionSettings, expand: (p: string) => string = (p) => p): ServerCommand {
  const extra = s.extraArgs.map(expand);
  if (s.pythonPath) {
    return { command: expand(s.pythonPath), args: ['-m', 'tile_lsp.cli', 'serve', ...extra] };
  }
  return { command: expand(s.serverPath), args: ['serve', ...extra] };
}

/** What `serverCommand` runs, as one line for messages (arguments with spaces quoted). */
export function describeCommand(c: ServerCommand): string {
  return [c.command, ...c.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ');
}

/** The settings object sent to the server, nested under {@link SECTION}. */
export interface ServerSettingsPayload {
  [SECTION]: {
    /** `null`: the newest version (tile_lsp/server/settings.py). */
    tileVersion: string | null;
    /** `null`: the server's default GPU. */
    targetGpu: string | null;
    inlayHints: { enabled: boolean; resultTypes: boolean; tileSizes: boolean };
    debounceMs: number;
  };
}

/**
 * The settings sent as `initializationOptions` and in
 * `workspace/didChangeConfiguration`.  Empty strings become `null`, which the
 * server reads as "back to the default".
 */
export function serverSettingsPayload(s: ExtensionSettings): ServerSettingsPayload {
  return {
    [SECTION]: {
      tileVersion: s.tileVersion || null,
      targetGpu: s.targetGpu || null,
      inlayHints: { enabled: s.inlayHintsEnabled, resultTypes: s.inlayResultTypes, tileSizes: s.inlayTileSizes },
      debounceMs: s.debounceMs,
    },
  };
}

/** Whether a change of these settings needs a restart of the server process (vs. a didChangeConfiguration). */
export function needsRestart(before: ExtensionSettings, after: ExtensionSettings): boolean {
  return (
    before.serverPath !== after.serverPath ||
    before.pythonPath !== after.pythonPath ||
    before.extraArgs.length !== after.extraArgs.length ||
    before.extraArgs.some((a, i) => a !== after.extraArgs[i])
  );
}
