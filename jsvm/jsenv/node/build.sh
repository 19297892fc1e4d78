#!/usr/bin/env bash
# Rebuilds dist/node-env.js, the Node-compatible environment gorender embeds
# for RENDERER_SUPPORT_MODULES. Needs Node 20+ and npm with registry access;
# the versions are pinned in package.json and package-lock.json. The output is
# deterministic: a rerun changes no bytes.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
node build.mjs
echo "built dist/node-env.js ($(wc -c < dist/node-env.js) bytes)"
