#!/usr/bin/env bash
# Installs the pinned helm into <repo>/.bin/helm, built from the Go module
# proxy (no binary download). Does nothing when that version is already
# there. Prints the binary's path.
set -euo pipefail
HELM_VERSION=v3.22.0

root=$(cd "$(dirname "$0")/.." && pwd)
helm="$root/.bin/helm"

if [ -x "$helm" ] && go version -m "$helm" 2>/dev/null |
  grep -Eq "^[[:space:]]+mod[[:space:]]+helm\.sh/helm/v3[[:space:]]+${HELM_VERSION//./\\.}[[:space:]]"; then
  echo "$helm"
  exit 0
fi

echo "installing helm $HELM_VERSION into $root/.bin (first time: a few minutes of module downloads)" >&2
GOBIN="$root/.bin" CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install \
  -ldflags "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
  "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
echo "$helm"
