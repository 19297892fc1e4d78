#!/usr/bin/env bash
# The whole test suite: formatting, vet, staticcheck, a static cgo-free build,
# every package's tests (unit and end-to-end against the real binary on the
# default engine, goja) with the race detector, then the QuickJS engine's
# tests, test262's sample on Node, goja and quickjs, and the end-to-end
# suite again on QuickJS, all without it, the
# end-to-end suite on the node engine (Node.js processes), and a short run
# of each fuzz target on its committed corpus.
# Then the deploy checks (helm lint, rendered manifests, Dockerfile lint and
# build: scripts/check-deploy.sh, which installs helm from the Go module
# proxy). Needs Go, and Node.js 20+ for the node engine, which
# scripts/install-node.sh finds or installs from the npm registry; the JS
# fixtures are committed (tests/testdata/build.sh rebuilds them with Node
# when they change).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  printf 'gofmt would change:\n%s\n' "$unformatted"
  exit 1
fi

step "go vet"
go vet ./...

# staticcheck, pinned, built from the Go module proxy into .bin/ on first use
# (`scripts/install-go-tool.sh staticcheck`). gorender's module only: the tools
# module's Kubernetes and BuildKit dependencies take it over ten minutes.
step "staticcheck"
staticcheck=$(bash scripts/install-go-tool.sh staticcheck)
"$staticcheck" ./...

step "static build (CGO_ENABLED=0)"
CGO_ENABLED=0 go build -trimpath -o /dev/null ./cmd/gorender

step "Node.js for the node engine"
node_bin=$(bash scripts/install-node.sh)
export PATH="$(dirname "$node_bin"):$PATH"
node --version
# test262's reference host is Node.js 20 exactly (its baseline holds Node
# 20's pass set), whatever node the PATH has.
GORENDER_TEST262_NODE=$(bash scripts/install-node.sh --major 20)
export GORENDER_TEST262_NODE

step "go test -race"
go test -race -count=1 -timeout 20m ./...

step "Intl matrix on goja (no -race: under it the matrix runs a sample)"
go test -count=1 -timeout 10m -run 'TestConformance/^Intl(Matrix|ProcessDefaults)$' ./jsvm/gojaengine/

# The Intl differential test's sample on every engine, against Node's
# goldens and each engine's baseline (skipped under -race; GORENDER_INTLDIFF=full
# runs the whole set: docs/intl.md "Differential test").
step "Intl differential sample (no -race)"
go test -count=1 -timeout 10m -run '^TestIntlDifferential$' ./jsvm/engines/

# The race detector instruments QuickJS's translated C too (about 10x
# slower), so the QuickJS tests of the fixture bundles (the conformance
# suite's and the engine's own) skip under -race and run here without it.

step "go test the QuickJS engine (no -race)"
go test -count=1 -timeout 10m ./jsvm/quickjsengine/

# test262's seeded sample on Node (the reference), goja and quickjs
# (docs/test262.md): it skips under -race, for QuickJS's sake, so it runs
# here. It fails on a test Node passes that an engine fails and the
# committed baseline does not list.
step "test262 sample (no -race)"
go test -count=1 -timeout 10m ./jsvm/test262/

# The end-to-end suite once more with every server on QuickJS. Its binary is
# built without -race for the same reason: with it this step takes over 4
# minutes instead of under one (the goja run above covers gorender's own Go
# code under the race detector).
step "go test tests on QuickJS (no -race)"
GORENDER_TEST_ENGINE=quickjs go test -count=1 -timeout 15m ./tests/

# The end-to-end suite once more with every server on the node engine
# (RENDERER_JS_ENGINE=node): the JavaScript runs in Node.js processes, so
# the race detector watches gorender's own side of them.
step "go test tests on the node engine"
GORENDER_TEST_ENGINE=node go test -race -count=1 -timeout 20m ./tests/

# A count, not a duration: with a -fuzztime duration, go1.26's fuzzing
# coordinator can fail a target with a bare "context deadline exceeded" as the
# time runs out (golang/go#75804, fixed in go1.27). 20,000 inputs take 5-10 s
# here.
step "fuzz the body decoders and the props rewrite (${FUZZTIME:=20000x} each)"
for pkg in ./handlers/ ./jsvm/transform/; do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz'); do
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"
  done
done

step "deploy checks"
bash scripts/check-deploy.sh
