#!/usr/bin/env bash
# Installs a pinned Go tool the checks and the release need into
# <repo>/.bin/<tool>, built from the Go module proxy (no binary download):
# helm, staticcheck, actionlint (lints .github/workflows) or cyclonedx-gomod
# (the release's SBOMs, scripts/release.sh). Does nothing when that version is
# already there. Prints the binary's path.
#   bash scripts/install-go-tool.sh helm|staticcheck|actionlint|cyclonedx-gomod
set -euo pipefail

ldflags=""
case "${1:-}" in
helm)
  version=v3.22.0
  module=helm.sh/helm/v3
  package=helm.sh/helm/v3/cmd/helm
  ldflags="-X helm.sh/helm/v3/internal/version.version=$version"
  note=" (first time: a few minutes of module downloads)"
  ;;
staticcheck)
  version=v0.8.2
  module=honnef.co/go/tools
  package=honnef.co/go/tools/cmd/staticcheck
  note=""
  ;;
actionlint)
  version=v1.7.12
  module=github.com/rhysd/actionlint
  package=github.com/rhysd/actionlint/cmd/actionlint
  note=""
  ;;
cyclonedx-gomod)
  version=v1.10.0
  module=github.com/CycloneDX/cyclonedx-gomod
  package=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod
  note=""
  ;;
*)
  echo "usage: $0 helm|staticcheck|actionlint|cyclonedx-gomod" >&2
  exit 2
  ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.bin/$1"

if [ -x "$bin" ] && go version -m "$bin" 2>/dev/null |
  grep -Eq "^[[:space:]]+mod[[:space:]]+${module//./\\.}[[:space:]]+${version//./\\.}[[:space:]]"; then
  echo "$bin"
  exit 0
fi

echo "installing $1 $version into $root/.bin$note" >&2
GOBIN="$root/.bin" CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install \
  -ldflags "$ldflags" "$package@$version"
echo "$bin"
