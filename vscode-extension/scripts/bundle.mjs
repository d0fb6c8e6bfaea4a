// Bundles the extension and vscode-languageclient into dist/extension.js (the
// "main" of package.json), so that the .vsix needs no node_modules.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  minify: true,
  logLevel: 'warning',
});
