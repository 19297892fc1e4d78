#!/usr/bin/env bash
# Rebuilds dist/intl.js and dist/locale-data.bin, gorender's Intl for the
# pure-Go engines, from the FormatJS polyfills and CLDR packages pinned in
# package.json and package-lock.json (see build.mjs). Needs Node 20 (the
# Node whose ICU the Intl matrix's goldens record: its supported currency,
# unit and numbering-system lists are taken from it) and npm with registry
# access. Deterministic: a rerun changes no bytes. The Go package only reads
# the committed outputs.
set -euo pipefail
cd "$(dirname "$0")"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" != 20 ]; then
  echo "build.sh: Node 20 required (found $(node --version))" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
node build.mjs
