#!/usr/bin/env bash
# Deploy checks, without a cluster or a Docker engine: installs the pinned
# helm (scripts/install-go-tool.sh helm), runs `helm lint --strict` on every CI
# variant of the chart, then the tools module's tests (tools/): golden
# renderings, strict decoding into the Kubernetes API types, the chart's
# invariants, BuildKit's Dockerfile lint, and the Dockerfile's go build run
# as written with the binary's healthcheck against a live server.
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

step "tools: go vet, go test"
cd tools
go vet ./...
go test -count=1 ./...
