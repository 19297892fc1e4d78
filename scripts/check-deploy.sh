#!/usr/bin/env bash
# Deploy checks, without a cluster or a Docker engine: installs the pinned
# helm (scripts/install-go-tool.sh helm), runs `helm lint --strict` on every CI
# variant of the chart, lints the GitHub workflows with the pinned actionlint,
# then the tools module's tests (tools/): golden renderings, strict decoding
# into the Kubernetes API types, the chart's invariants, BuildKit's Dockerfile
# lint, the Dockerfile's go build run as written with the binary's
# healthcheck against a live server, and the release check (a snapshot of
# scripts/release.sh built and checked: docs/release.md "The release check").
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "helm (pinned, from the Go module proxy)"
helm=$(bash scripts/install-go-tool.sh helm)
export HELM="$helm"
"$helm" version --short

chart=deploy/helm/gorender
step "helm lint --strict $chart"
shopt -s nullglob
variants=("$chart"/ci/*-values.yaml)
if [ ${#variants[@]} -eq 0 ]; then
  echo "no CI variants in $chart/ci" >&2
  exit 1
fi
for values in "${variants[@]}"; do
  echo "-- $(basename "$values")"
  "$helm" lint --strict --quiet "$chart" -f "$values"
done

# actionlint checks the workflows' syntax, expressions and action inputs, and
# their run: scripts with shellcheck (Debian's, installed when missing).
step "actionlint (pinned, from the Go module proxy): .github/workflows"
if ! command -v shellcheck >/dev/null; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq shellcheck >&2
fi
actionlint=$(bash scripts/install-go-tool.sh actionlint)
"$actionlint"

# The release check builds a snapshot of scripts/release.sh (four targets:
# some minutes cold, docs/release.md "What it costs"), hence the timeout.
step "tools: go vet, go test"
cd tools
go vet ./...
go test -count=1 -timeout 30m ./...
