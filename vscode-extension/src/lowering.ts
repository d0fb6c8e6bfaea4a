/**
 * The answers of the server's lowering commands, checked before use.
 *
 * `workspace/executeCommand` with `tile.showPTX` (arguments `[documentUri,
 * kernelName?]`) or `tile.showLowered` (arguments `[documentUri, stageName?,
 * kernelName?]`) answers `{ok, content, language, title, message}`
 * (tile_lsp/server/codegen.py).  No `vscode` import: unit-tested in Node.
 */

/** Server command that lowers a document to PTX. */
export const SHOW_PTX = 'tile.showPTX';
/** Server command that prints a document after a lowering stage. */
export const SHOW_LOWERED = 'tile.showLowered';

/**
 * The stages tile.showLowered prints as Tile IR, after the pass that produces
 * each (the PIPELINE of tile_lsp/codegen/pipeline.py; its last stage,
 * `ptx`, is Show PTX).  A unit test checks this list against that table.
 */
export const LOWERED_STAGES: readonly { stage: string; pass: string; detail: string }[] = [
  { stage: 'cuda_tile', pass: 'verify-input', detail: 'the input, parsed and verified' },
  { stage: 'legal', pass: 'tile-legalize', detail: "the target's element types and the ops the lowering supports" },
  { stage: 'layout', pass: 'tile-assign-layouts', detail: 'CTA size per entry and the thread/slot distribution of tiles' },
  { stage: 'nv_tileas', pass: 'convert-to-nv-tileas', detail: 'view loads and stores, MMA, reductions and scans as nv_tileas ops' },
];

/** The stage the server shows when none is given. */
export const DEFAULT_LOWERED_STAGE = 'nv_tileas';

/** Language ids an output document can have. */
export type OutputLanguage = 'ptx' | 'tileir';

/** A successful lowering: the text to show read-only beside the IR. */
export interface LoweringOutput {
  content: string;
  language: OutputLanguage;
  /** Tab title, e.g. `vector_add.ptx`; never contains a path separator. */
  title: string;
}

/** What to do with a server answer: show the output, or show `message` as an error. */
export type LoweringAnswer = { ok: true; output: LoweringOutput } | { ok: false; message: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks the server's answer to `command` (`tile.showPTX` or
 * `tile.showLowered`).  A failed lowering (`ok: false`) or an answer of the
 * wrong shape becomes `{ok: false, message}`; the message is the server's own
 * when it sent one.  `fallbackTitle` names the tab when the server sent no
 * title.
 */
export function interpretLoweringResult(raw: unknown, command: string, fallbackTitle: string): LoweringAnswer {
  if (!isRecord(raw)) {
    return { ok: false, message: `tile-lsp answered ${command} with ${raw === null ? 'null' : typeof raw}, expected an object` };
  }
  const message = typeof raw.message === 'string' ? raw.message : '';
  if (raw.ok !== true) {
    return { ok: false, message: message || `${command} failed (tile-lsp gave no message)` };
  }
  if (typeof raw.content !== 'string') {
    return { ok: false, message: `tile-lsp answered ${command} without content` };
  }
  const defaultLanguage: OutputLanguage = command === SHOW_PTX ? 'ptx' : 'tileir';
  const language: OutputLanguage = raw.language === 'ptx' || raw.language === 'tileir' ? raw.language : defaultLanguage;
  const title = sanitizeTitle(typeof raw.title === 'string' && raw.title.trim() ? raw.title : fallbackTitle);
  return { ok: true, output: { content: raw.content, language, title } };
}

/** A tab title usable as the last segment of a URI path: separators and control characters replaced. */
export function sanitizeTitle(title: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = title.trim().replace(/[\\/\u0000-\u001f]/g, '_');
  return cleaned || 'output';
}

/** Basename of a URI or path without its extension: `file:///a/b/k.mlir` -> `k`. */
export function stem(uriOrPath: string): string {
  const base = decodeURIComponent(uriOrPath.split(/[\\/]/).pop() ?? '');
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base || 'output';
}

/**
 * Arguments of the server command: `[uri, kernelName?]` for Show PTX,
 * `[uri, stageName?, kernelName?]` for Show Lowered IR.  Trailing unset
 * optionals are left out; an unset stage before a kernel is sent as `null`.
 */
export function commandArguments(command: string, uri: string, opts: { kernel?: string; stage?: string }): unknown[] {
  if (command === SHOW_PTX) {
    return opts.kernel ? [uri, opts.kernel] : [uri];
  }
  if (opts.kernel) {
    return [uri, opts.stage ?? null, opts.kernel];
  }
  return opts.stage ? [uri, opts.stage] : [uri];
}
