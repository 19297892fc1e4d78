// Package docs holds gorender's documentation: PROTOCOL.md (the wire
// contract, cited by section from the code), ARCHITECTURE.md (the packages,
// the path of a request, the engine boundary), one document per subject
// (configuration, limits, observability, the bundle cache, compatibility,
// Intl, source maps, the engines, performance, deploy) and decisions/ (the
// measured defaults). It has no code; its tests keep the citations, the
// links and the package table in step with the repository.
package docs
