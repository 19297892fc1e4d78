package handlers

import (
	"errors"
	"net/http"

	"github.com/gorender/gorender/errtrack"
	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/worker"
)

// reportFailure sends a render's JavaScript error, its bundle's load error
// or the Go panic it recovered from to the error trackers: never a
// canceled render's, and nothing of the request but what Tags names
// (docs/observability.md "Error tracking").
func (h *Handlers) reportFailure(r *http.Request, entry string, req *RenderRequest, err error) {
	if h.Errors == nil || err == nil || r.Context().Err() != nil {
		return
	}
	tags := errtrack.Tags{Bundle: entry, GemVersion: req.GemVersion, RailsEnv: req.RailsEnv}
	var renderErr *jsvm.RenderError
	var loadErr *worker.LoadError
	switch {
	case errors.As(err, &renderErr) && renderErr.Panic != nil:
		h.Errors.Panic("render", renderErr.Text, renderErr.Panic)
	case errors.As(err, &renderErr) && renderErr.Kind == jsvm.KindJS && renderErr.Message != "":
		tags.Outcome = "js_error"
		h.Errors.JSError(tags, append([]string{entry}, req.DependencyBundleIDs...), renderErr.Message, renderErr.Stack)
	case errors.As(err, &loadErr):
		tags.Outcome, tags.Bundle = "bundle_load_error", loadErr.ID
		h.Errors.LoadError(tags, loadErr.Err.Error())
	}
}
