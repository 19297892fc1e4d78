// Package tools holds the repository's deploy checks, in their own module so
// that heavy dependencies (client-go, BuildKit) stay out of gorender's go.mod:
//
//   - chartcheck: the Helm chart's CI variants rendered by helm, compared
//     with golden files, strictly decoded into Kubernetes API types and
//     checked for the properties the chart promises.
//   - dockercheck: the Dockerfile linted by BuildKit's linter, and its build
//     command run as written, producing a static binary whose healthcheck
//     subcommand works against a live server.
//   - releasecheck: what scripts/release.sh builds, built and checked: the
//     checksums, archives, binaries of every target and SBOMs.
//
// Run them with scripts/check-deploy.sh (it installs the pinned helm first).
package tools
