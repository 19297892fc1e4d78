#!/usr/bin/env bash
# Rebuilds the Intl matrix: bundles/*.js from the npm packages in
# package.json (build.mjs) and golden/*.json, what Node answers for each case
# (record.mjs). Needs Node 20+ (its ICU and CLDR are the reference: golden/
# versions.json records them) and npm with registry access. The Go tests only
# read the committed outputs (jsvm/conformance/intl.go).
set -euo pipefail
cd "$(dirname "$0")"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "build.sh: Node >= 20 required (found $(node --version))" >&2
  exit 1
fi
# The goldens' defaults are en-US and UTC, as on CI's machines.
if [ "$(env -u TZ LANG=C.UTF-8 node -p 'Intl.DateTimeFormat().resolvedOptions().timeZone')" != "UTC" ]; then
  echo "build.sh: record on a machine whose /etc/localtime is UTC" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
node build.mjs
env -u TZ -u LC_ALL -u LC_MESSAGES LANG=C.UTF-8 node record.mjs
