#!/usr/bin/env bash
# Rebuilds the JavaScript test fixtures and their Node-recorded goldens:
#   tests/testdata/bundles/   react-app.js (esbuild), rsc-stub.js (hand-written);
#                             support-modules (Node CommonJS) bundles:
#                             node-app-esbuild.js, node-app-webpack.js (+ .LICENSE.txt),
#                             stream-app.js, async-app.js (esbuild/webpack),
#                             async-props.js, payload-stream.js (hand-written),
#                             loadable-stats.json (companion)
#   tests/testdata/requests/  rendering requests and update chunks shaped like the Rails gem's
#   tests/testdata/golden/    what Node 20 returns for each request (+ .chunks.json for
#                             streams), support-modules-usage.json, manifest.json
#   cmd/gorender/demo/        bundle.js, request.js (copies, go:embed-ed by the demo)
# Needs Node 20+ and npm (registry access for `npm ci`). Deterministic: a rerun
# produces the same bytes. The Go tests only read the committed outputs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/js"

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "build.sh: Node >= 20 required (found $(node --version))" >&2
  exit 1
fi

npm ci --no-audit --no-fund --loglevel=error
node build.mjs
node record.mjs
