package handlers

import (
	"fmt"
	"net/http"
)

// HTTPError is an answer decided before the work: its status and exact
// plain-text body. Cause, when set, is the underlying error for the logs; it
// is never sent to the client.
type HTTPError struct {
	Status int
	Body   string
	Cause  error
}

// Error returns the status, the body and the cause, for logs.
func (e *HTTPError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Body, e.Cause)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Body)
}

// Unwrap returns the cause, if any.
func (e *HTTPError) Unwrap() error {
	return e.Cause
}

// badRequest returns a 400 with the formatted body.
func badRequest(format string, args ...any) *HTTPError {
	return &HTTPError{Status: http.StatusBadRequest, Body: fmt.Sprintf(format, args...)}
}

// invalidField returns the 400 for a field of the wrong shape (PROTOCOL.md §3.2).
func invalidField(name string) *HTTPError {
	return badRequest("Invalid %q field in render request.", name)
}
