package handlers

import (
	"net/http"
)

// RenderRequest is the shape-checked content of a render request
// (PROTOCOL.md §3, §5).
type RenderRequest struct {
	// RenderingRequest is the JavaScript to evaluate, never empty.
	RenderingRequest string
	// DependencyBundleIDs are the other bundles the request may call into
	// (field dependencyBundleTimestamps); nil when none.
	DependencyBundleIDs []string
	// RSCStreamObservability asks for a Server-Timing header on streams.
	RSCStreamObservability bool
	// GemVersion is the Rails gem version, informational.
	GemVersion string
	// RailsEnv is the Rails environment, informational.
	RailsEnv string
}

// ParseRenderRequest is the shape step of a render, run after Precheck: it
// reports the deferred errors of a raw request (Authorization, dependency
// header, observability header) and answers 400 when renderingRequest is
// not a non-empty string.
func ParseRenderRequest(f *Fields) (*RenderRequest, *HTTPError) {
	if herr := f.deferredError("password"); herr != nil {
		return nil, herr
	}
	rendering, ok := f.Lookup("renderingRequest")
	var js string
	switch v := rendering.(type) {
	case string:
		js = v
	case []string:
		if len(v) > 0 {
			js = v[0]
		}
	}
	if !ok || js == "" {
		return nil, invalidRenderingRequest(f)
	}
	deps, herr := f.Strings("dependencyBundleTimestamps")
	if herr != nil {
		return nil, herr
	}
	rsc, herr := f.Bool("rscStreamObservability")
	if herr != nil {
		return nil, herr
	}
	gemVersion, _ := f.Text("gemVersion")
	railsEnv, _ := f.Text("railsEnv")
	return &RenderRequest{
		RenderingRequest:       js,
		DependencyBundleIDs:    deps,
		RSCStreamObservability: rsc,
		GemVersion:             gemVersion,
		RailsEnv:               railsEnv,
	}, nil
}

// invalidRenderingRequest is the 400 of PROTOCOL.md §5 step 1, naming the
// type received and the non-sensitive field names.
func invalidRenderingRequest(f *Fields) *HTTPError {
	typ := f.TypeOf("renderingRequest")
	if typ == "string" {
		typ = "string (empty)"
	}
	return badRequest("Invalid \"renderingRequest\" field in render request.\nReceived type: %s\nReceived fields: %s",
		typ, f.EchoNames())
}

// ParseTargetBundles reads targetBundles (PROTOCOL.md §6.4) with the array
// convention, after Precheck: missing or empty → 400
// `No targetBundles provided. As of protocol version 2.0.0, targetBundles is required.`
func ParseTargetBundles(f *Fields) ([]string, *HTTPError) {
	if herr := f.deferredError("password"); herr != nil {
		return nil, herr
	}
	targets, herr := f.Strings("targetBundles")
	if herr != nil {
		return nil, herr
	}
	if len(targets) == 0 {
		return nil, &HTTPError{
			Status: http.StatusBadRequest,
			Body:   "No targetBundles provided. As of protocol version 2.0.0, targetBundles is required.",
		}
	}
	return targets, nil
}
