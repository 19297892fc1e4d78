#!/usr/bin/env bash
# Installs the pinned staticcheck into <repo>/.bin/staticcheck, built from the
# Go module proxy (no binary download). Does nothing when that version is
# already there. Prints the binary's path.
set -euo pipefail
STATICCHECK_VERSION=v0.8.2

root=$(cd "$(dirname "$0")/.." && pwd)
staticcheck="$root/.bin/staticcheck"

if [ -x "$staticcheck" ] && go version -m "$staticcheck" 2>/dev/null |
  grep -Eq "^[[:space:]]+mod[[:space:]]+honnef\.co/go/tools[[:space:]]+${STATICCHECK_VERSION//./\\.}[[:space:]]"; then
  echo "$staticcheck"
  exit 0
fi

echo "installing staticcheck $STATICCHECK_VERSION into $root/.bin" >&2
GOBIN="$root/.bin" CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install \
  "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
echo "$staticcheck"
