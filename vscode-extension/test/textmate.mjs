// Offline TextMate tokenization for the grammar tests: vscode-textmate with
// the Oniguruma WebAssembly build of vscode-oniguruma, the grammars of
// ../syntaxes, and (for the Markdown injection) a host grammar given by the test.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import oniguruma from 'vscode-oniguruma';
import textmate from 'vscode-textmate';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
export const extensionRoot = join(here, '..');

const manifest = JSON.parse(readFileSync(join(extensionRoot, 'package.json'), 'utf8'));

let onigLib;
function loadOniguruma() {
  if (!onigLib) {
    const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
    onigLib = oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength)).then(() => ({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }));
  }
  return onigLib;
}

/**
 * A registry with the grammars contributed in package.json; `extra` maps more
 * scope names to grammar objects (a stand-in Markdown grammar, for instance).
 */
export function makeRegistry(extra = {}) {
  const byScope = new Map();
  const injections = new Map();
  for (const g of manifest.contributes.grammars) {
    byScope.set(g.scopeName, join(extensionRoot, g.path));
    for (const target of g.injectTo ?? []) {
      injections.set(target, [...(injections.get(target) ?? []), g.scopeName]);
    }
  }
  return new textmate.Registry({
    onigLib: loadOniguruma(),
    loadGrammar: async (scopeName) => {
      if (extra[scopeName]) {
        return textmate.parseRawGrammar(JSON.stringify(extra[scopeName]), `${scopeName}.json`);
      }
      const path = byScope.get(scopeName);
      return path ? textmate.parseRawGrammar(readFileSync(path, 'utf8'), path) : null;
    },
    getInjections: (scopeName) => injections.get(scopeName),
  });
}

/**
 * Tokenizes `text` (lines separated by \n) with the grammar `scopeName`.
 * Returns one array per line of {text, scopes} (scopes outermost first).
 */
export async function tokenize(scopeName, text, registry = makeRegistry()) {
  const grammar = await registry.loadGrammar(scopeName);
  if (!grammar) {
    throw new Error(`no grammar ${scopeName}`);
  }
  let state = textmate.INITIAL;
  return text.split('\n').map((line) => {
    const r = grammar.tokenizeLine(line, state);
    state = r.ruleStack;
    return r.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes }));
  });
}

/** Tokens of one line as "text => innermost scope" strings, for readable failures. */
export function describe(tokens) {
  return tokens.map((t) => `${JSON.stringify(t.text)} => ${t.scopes[t.scopes.length - 1]}`);
}

/**
 * The innermost scope of the token(s) covering `text` in `tokens`; the
 * `occurrence`-th (0-based) appearance when the text repeats.  Throws when the
 * text is not covered by one token exactly.
 */
export function scopeOf(tokens, text, occurrence = 0) {
  let seen = 0;
  for (const t of tokens) {
    if (t.text === text) {
      if (seen === occurrence) {
        return t.scopes[t.scopes.length - 1];
      }
      seen += 1;
    }
  }
  throw new Error(`no token ${JSON.stringify(text)} (#${occurrence}) in ${JSON.stringify(describe(tokens), null, 1)}`);
}

/** All scopes (outermost first) of the token `text`, as scopeOf finds it. */
export function scopesOf(tokens, text, occurrence = 0) {
  let seen = 0;
  for (const t of tokens) {
    if (t.text === text) {
      if (seen === occurrence) {
        return t.scopes;
      }
      seen += 1;
    }
  }
  throw new Error(`no token ${JSON.stringify(text)} (#${occurrence}) in ${JSON.stringify(describe(tokens), null, 1)}`);
}
