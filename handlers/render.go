package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/gorender/gorender/bundles"
	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/worker"
)

// Render serves POST /bundles/{bundleId}/render/{digest} (PROTOCOL.md §5).
func (h *Handlers) Render(w http.ResponseWriter, r *http.Request) {
	staging := &lazyStaging{cache: h.Cache}
	rp, ok := h.render(w, r, staging)
	staging.remove(h.Logger)
	if !ok {
		// The client went away: there is no one to answer.
		return
	}
	rp.write(w, r)
}

// render decides the answer; ok is false when the request was canceled.
func (h *Handlers) render(w http.ResponseWriter, r *http.Request, staging *lazyStaging) (rp reply, ok bool) {
	started := time.Now()
	entry := chi.URLParam(r, "bundleId")
	fields, herr := DecodeBody(w, r, h.decodeOptions(staging, true))
	if herr != nil {
		h.observeRender("rejected", started)
		return h.logged(r, herr), true
	}
	if herr := Precheck(fields, h.Password, h.RendererVersion, true); herr != nil {
		h.observeRender("rejected", started)
		return errorReply(herr), true
	}
	h.noteGemVersion(fields)
	req, herr := ParseRenderRequest(fields)
	if herr != nil {
		h.observeRender("rejected", started)
		return errorReply(herr), true
	}
	for _, id := range append([]string{entry}, req.DependencyBundleIDs...) {
		if !bundles.ValidID(id) {
			h.observeRender("rejected", started)
			return errorReply(invalidBundleID(id)), true
		}
	}
	up, herr := uploadFromFiles(fields.Files, entry)
	if herr == nil {
		herr = h.store(r.Context(), up)
	}
	if herr != nil {
		h.observeRender("rejected", started)
		return h.logged(r, herr), true
	}
	if missing := h.Cache.Missing(append([]string{entry}, req.DependencyBundleIDs...)); len(missing) > 0 {
		h.observeRender("not_found_bundle", started)
		if h.Metrics != nil {
			h.Metrics.BundleMissing()
		}
		h.Logger.Info("bundle not in cache", "bundles", missing)
		return textReply(http.StatusGone, "No bundle uploaded"), true
	}

	result, err := h.Renderer.Render(r.Context(), entry, req.DependencyBundleIDs, req.RenderingRequest)
	if err == nil {
		h.observeRender("ok", started)
		return renderReply(result.Body), true
	}
	return h.renderFailure(r, entry, started, err)
}

// renderFailure maps a failed render onto its answer.
func (h *Handlers) renderFailure(r *http.Request, entry string, started time.Time, err error) (reply, bool) {
	var renderErr *jsvm.RenderError
	var tooMany *worker.TooManyBundlesError
	var loadErr *worker.LoadError
	switch {
	case errors.As(err, &renderErr):
		if renderErr.Kind == jsvm.KindCanceled {
			h.observeRender("canceled", started)
			return reply{}, false
		}
		outcome := "js_error"
		if renderErr.Kind == jsvm.KindTimeout {
			outcome = "timeout"
			h.Logger.Warn("render timed out", "bundle", entry, "duration", time.Since(started))
		}
		h.observeRender(outcome, started)
		return textReply(http.StatusBadRequest, renderErr.Text), true
	case errors.As(err, &tooMany):
		h.observeRender("rejected", started)
		return textReply(http.StatusGone, tooMany.Error()), true
	case errors.Is(err, worker.ErrQueueTimeout):
		h.observeRender("queue_timeout", started)
		rp := textReply(http.StatusServiceUnavailable, "Renderer busy: no JavaScript runtime became free in time. Retry later.")
		rp.header["Retry-After"] = "1"
		return rp, true
	case errors.As(err, &loadErr):
		h.observeRender("js_error", started)
		h.Logger.Error("bundle failed to load", "bundle", loadErr.ID, "err", loadErr.Err)
		return textReply(http.StatusBadRequest, "The bundle failed to load: "+loadErr.Error()), true
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		h.observeRender("canceled", started)
		return reply{}, false
	default:
		h.observeRender("error", started)
		h.Logger.Error("render failed", "bundle", entry, "err", err)
		return textReply(http.StatusInternalServerError, "Internal error: the render failed; see the renderer's logs."), true
	}
}
