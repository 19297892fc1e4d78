#!/usr/bin/env bash
# Checks transform.RewriteStringBuilds on every shape of react-dom's
# renderToString against Node: builds React 18 and 19 bundles (development and
# production; unminified, esbuild- and terser-minified) with bench/matrix,
# records Node's answers, then renders the rewritten bundles in goja
# (go test ./bench -run TestRewriteMatrix). Needs Node 20+, npm and Go.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-$root/bench/results/matrix}"
cd "$here/matrix"
npm ci --no-audit --no-fund --loglevel=error
rm -rf "$out"
node build.mjs "$out"
cd "$root"
GORENDER_REWRITE_MATRIX="$out" go test ./bench -run TestRewriteMatrix -count=1 -v -timeout 20m
