package handlers

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"unsafe"
)

// Header names of the raw JS encoding's metadata (PROTOCOL.md §3.1).
const (
	headerProtocolVersion  = "X-React-On-Rails-Pro-Protocol-Version"
	headerGemVersion       = "X-React-On-Rails-Pro-Gem-Version"
	headerRailsEnv         = "X-React-On-Rails-Pro-Rails-Env"
	headerDependencyBundle = "X-React-On-Rails-Pro-Dependency-Bundle-Timestamps"
	headerRSCObservability = "X-React-On-Rails-Pro-Rsc-Stream-Observability"
)

// decodeRawJS decodes a raw JS render request: metadata from the headers,
// renderingRequest = the body verbatim.
func decodeRawJS(r *http.Request, body io.Reader, opts DecodeOptions) (*Fields, *HTTPError) {
	f := &Fields{}
	headerFields := []struct{ header, name string }{
		{headerProtocolVersion, "protocolVersion"},
		{headerGemVersion, "gemVersion"},
		{headerRailsEnv, "railsEnv"},
		{headerRSCObservability, "rscStreamObservability"},
	}
	for _, h := range headerFields {
		if values := r.Header.Values(h.header); len(values) > 0 {
			f.set(h.name, values[0])
		}
	}
	if values := r.Header.Values(headerDependencyBundle); len(values) > 0 {
		ids, err := parseDependencyHeader(values[0])
		if err != nil {
			f.setError("dependencyBundleTimestamps", badRequest("Invalid dependency bundle timestamps header: %s", err))
		} else {
			f.set("dependencyBundleTimestamps", ids)
		}
	}
	if values := r.Header.Values("Authorization"); len(values) > 0 {
		if password, ok := bearerToken(values[0]); ok {
			f.set("password", password)
		} else {
			f.setError("password", badRequest("Invalid Authorization header for raw render request."))
		}
	}
	// The body is the renderingRequest: name it now, so that an early 412
	// lists the same fields as a late one.
	f.slot("renderingRequest")
	f.metadataComplete = true
	if opts.BeforeBody != nil {
		if herr := opts.BeforeBody(f); herr != nil {
			return nil, herr
		}
	}
	// With a gate the password has passed by now; without one (tests) the
	// body is read as an unauthenticated one.
	data, herr := readBody(body, r.ContentLength, opts.BeforeBody != nil, "raw render request body")
	if herr != nil {
		return nil, herr
	}
	// The body's own bytes, not a copy (a medium page's request is 137
	// KB, a large one's 1.2 MB): readBody's buffer is this request's alone
	// and nothing writes to it again.
	f.set("renderingRequest", unsafe.String(unsafe.SliceData(data), len(data)))
	return f, nil
}

// parseDependencyHeader parses the dependency bundle header: a JSON array of
// strings. It returns the array as []any, as a JSON body would give it.
func parseDependencyHeader(value string) ([]any, error) {
	if value == "[]" {
		// What the gem sends for a render without dependency bundles,
		// the common case: no JSON parse.
		return []any{}, nil
	}
	v, err := parseJSONValue([]byte(value))
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("expected a JSON array of strings")
	}
	for _, item := range list {
		if _, ok := item.(string); !ok {
			return nil, errors.New("expected a JSON array of strings")
		}
	}
	return list, nil
}

// bearerToken extracts the password from "Bearer <password>" (scheme
// case-insensitive, as HTTP auth schemes are); ok is false for another scheme.
func bearerToken(header string) (password string, ok bool) {
	const scheme = "bearer"
	if len(header) < len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return "", false
	}
	rest := header[len(scheme):]
	if rest == "" {
		return "", true
	}
	if rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	return strings.TrimLeft(rest, " \t"), true
}
