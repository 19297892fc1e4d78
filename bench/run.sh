#!/usr/bin/env bash
# gorender vs a Node reference render server, side by side, in one command:
#
#   bash bench/run.sh [benchctl flags]      e.g. -runs 5 -duration 20s
#
# Installs what is missing (h2load from nghttp2-client, wrk: apt-get), installs
# the Node reference server's dependencies (npm ci in bench/node), builds
# gorender and the driver (bench/cmd/benchctl), then runs every workload on
# both servers in each setup (pinned, saturated) and prints a table per setup
# (also written to bench/results/<time>/table.md with the raw runs in
# results.json).
# Needs Go 1.26+, Node 20+ and npm; Debian/Ubuntu for the apt-get step.
# See bench/README.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

say() { printf '== %s\n' "$*" >&2; }

missing=()
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

for tool in go node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "bench/run.sh: $tool is required" >&2
    exit 1
  fi
done
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "bench/run.sh: Node >= 20 required (found $(node --version))" >&2
  exit 1
fi

say "npm ci (bench/node: fastify, @fastify/formbody, @fastify/multipart)"
(cd "$here/node" && npm ci --no-audit --no-fund --loglevel=error)

say "go build gorender and benchctl"
mkdir -p "$here/.bin"
go build -o "$here/.bin/gorender" ./cmd/gorender
go build -o "$here/.bin/benchctl" ./bench/cmd/benchctl

read -r load1 _ < /proc/loadavg
if awk -v l="$load1" -v n="$(nproc)" 'BEGIN { exit !(l > n * 0.5) }'; then
  say "warning: load average $load1 on $(nproc) CPUs: the machine is busy, numbers will be noisy"
fi

say "benchmark (Ctrl-C stops it; servers are stopped with it)"
exec "$here/.bin/benchctl" -gorender "$here/.bin/gorender" -node-dir "$here/node" "$@"
