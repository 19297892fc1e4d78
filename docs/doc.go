// Package docs holds gorender's documentation: PROTOCOL.md (the wire
// contract, cited by section from the code) and ARCHITECTURE.md (the
// packages, the path of a request, the engine boundary). It has no code; its
// test keeps the citations and the documents in step.
package docs
