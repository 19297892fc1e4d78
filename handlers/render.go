package handlers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gorender/gorender/bundles"
	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/tracing"
	"github.com/gorender/gorender/worker"
)

// Render serves POST /bundles/{bundleId}/render/{digest} (PROTOCOL.md §5):
// a buffered answer with Content-Length, or a stream flushed as produced.
func (h *Handlers) Render(w http.ResponseWriter, r *http.Request) {
	// The bundle's id is set on the span once it is checked (render): the
	// span starts before the request is authenticated.
	ctx, span := tracing.Start(r.Context(), h.Tracer, tracing.SpanSSRRequest)
	defer span.End()
	if h.Tracer != nil { // else ctx is r's: no copy
		r = r.WithContext(ctx)
	}
	body := h.guardBody(w, r)
	defer body.release()
	staging := &lazyStaging{cache: h.Cache}
	defer staging.remove(h.Logger)
	rp, ok := h.render(w, r, body, staging)
	staging.remove(h.Logger)
	if ok {
		h.answer(w, r, rp)
	}
}

// startSpan starts a span of one of the Node renderer's names about
// bundle id, a checked id (validIDs).
func (h *Handlers) startSpan(ctx context.Context, name, id string) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, h.Tracer, name)
	setBundle(span, id)
	return ctx, span
}

// setBundle records on span the bundle id it is about, a checked id
// (validIDs): never a request's unchecked text.
func setBundle(span trace.Span, id string) {
	if span.IsRecording() {
		span.SetAttributes(tracing.BundleTimestamp.String(id))
	}
}

// answer writes a buffered answer and records its size on the request's
// span (a streamed answer's is recorded as it ends: httpSink.endSpan).
func (h *Handlers) answer(w http.ResponseWriter, r *http.Request, rp reply) {
	rp.write(w, r)
	if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
		span.SetAttributes(tracing.ResponseBytes.Int(len(rp.body)))
	}
}

// render decides a buffered answer; ok is false when there is none to write
// (the answer was streamed, or the client went away).
func (h *Handlers) render(w http.ResponseWriter, r *http.Request, body *guardedBody, staging *lazyStaging) (rp reply, ok bool) {
	started := time.Now()
	ctx := r.Context()
	entry := chi.URLParam(r, "bundleId")
	fields, herr := h.decode(w, r, h.decodeOptions(body, staging, true))
	if herr != nil {
		h.observeRender(ctx, "rejected", started)
		return h.logged(r, herr), true
	}
	if herr := h.precheck(body, fields, true); herr != nil {
		h.observeRender(ctx, "rejected", started)
		return errorReply(herr), true
	}
	h.noteGemVersion(ctx, fields)
	req, herr := ParseRenderRequest(fields)
	if herr != nil {
		h.observeRender(ctx, "rejected", started)
		return errorReply(herr), true
	}
	if herr := validIDs(entry, req.DependencyBundleIDs); herr != nil {
		h.observeRender(ctx, "rejected", started)
		return errorReply(herr), true
	}
	setBundle(trace.SpanFromContext(ctx), entry)
	up, herr := uploadFromFiles(fields.Files, entry)
	if herr == nil {
		herr = h.store(ctx, up)
	}
	// Stored bundles and companions were moved or copied out of staging.
	staging.remove(h.Logger)
	if herr != nil {
		h.observeRender(ctx, "rejected", started)
		return h.logged(r, herr), true
	}
	lookup := time.Now()
	if rp, missing := h.missingBundles(ctx, entry, req.DependencyBundleIDs, started); missing {
		return rp, true
	}
	var onStart func(http.Header)
	if req.RSCStreamObservability {
		onStart = serverTiming(lookup)
	}
	h.describeRender(ctx, req)
	sink := newHTTPSink(ctx, h.Tracer, w, onStart)
	result, err := h.Renderer.Render(ctx, entry, req.DependencyBundleIDs, req.RenderingRequest,
		&jsvm.Request{Sink: sink, StreamIdle: h.StreamIdle})
	h.reportFailure(r, entry, req, err)
	if sink.close() {
		h.streamEnded(ctx, r, entry, started, err, sink)
		return reply{}, false
	}
	return h.prepareResult(ctx, r, entry, started, result, err)
}

// describeRender records on ctx's span (the request's ror.ssr.request)
// what it renders: its bundles, the engine and the rendering request's
// size (never its code, which holds the props).
func (h *Handlers) describeRender(ctx context.Context, req *RenderRequest) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(
			tracing.BundleDependencies.StringSlice(req.DependencyBundleIDs),
			tracing.Engine.String(h.Engine),
			tracing.BytesTotal.Int(len(req.RenderingRequest)),
		)
	}
}

// prepareResult makes a render's result or failure its buffered answer,
// in a span of its own (ror.result.prepare); ok is false when there is no
// answer to write (the client is gone). ctx holds the request's span.
func (h *Handlers) prepareResult(ctx context.Context, r *http.Request, entry string, started time.Time, result jsvm.Result, err error) (rp reply, ok bool) {
	_, span := tracing.Start(ctx, h.Tracer, tracing.SpanResultPrepare)
	defer span.End()
	if err != nil {
		rp, ok = h.renderFailure(ctx, r, entry, started, err)
	} else {
		h.observeRender(ctx, "ok", started)
		rp, ok = renderReply(result.Body), true
	}
	if ok && span.IsRecording() {
		span.SetAttributes(tracing.ResponseBytes.Int(len(rp.body)), attribute.Int("gorender.answer.status", rp.status))
	}
	return rp, ok
}

// validIDs answers 400 for a bundle id that cannot name a cache directory.
func validIDs(entry string, deps []string) *HTTPError {
	for _, id := range append([]string{entry}, deps...) {
		if !bundles.ValidID(id) {
			return invalidBundleID(id)
		}
	}
	return nil
}

// missingBundles answers 410 when a bundle of the set is not in the cache.
func (h *Handlers) missingBundles(ctx context.Context, entry string, deps []string, started time.Time) (reply, bool) {
	missing := h.Cache.Missing(append([]string{entry}, deps...))
	if len(missing) == 0 {
		return reply{}, false
	}
	return h.bundleGone(ctx, started, "bundles", missing), true
}

// bundleGone is the 410 of a bundle that is not in the cache.
func (h *Handlers) bundleGone(ctx context.Context, started time.Time, logArgs ...any) reply {
	h.observeRender(ctx, "not_found_bundle", started)
	if h.Metrics != nil {
		h.Metrics.BundleMissing()
	}
	h.Logger.InfoContext(ctx, "bundle not in cache", logArgs...)
	return textReply(http.StatusGone, "No bundle uploaded")
}

// streamEnded accounts for a streamed answer; a failure ends it abruptly.
// A stream whose client took no bytes for the write timeout ended idle,
// like one that produces nothing.
func (h *Handlers) streamEnded(ctx context.Context, r *http.Request, entry string, started time.Time, err error, sink *httpSink) {
	outcome := "ok"
	var renderErr *jsvm.RenderError
	switch {
	case err == nil:
	case sink.clientStalled():
		outcome = "idle"
		err = fmt.Errorf("the client took no bytes of the stream for the write timeout: %w", err)
	case errors.As(err, &renderErr) && renderErr.Kind == jsvm.KindCanceled:
		outcome = "client_gone"
	case errors.As(err, &renderErr) && renderErr.Kind == jsvm.KindTimeout:
		outcome = "idle"
	default:
		outcome = "error"
	}
	h.observeRender(ctx, "stream_"+outcome, started)
	if h.Metrics != nil {
		h.Metrics.StreamEnded(outcome)
	}
	sink.endSpan(outcome)
	if err == nil {
		return
	}
	h.Logger.WarnContext(ctx, "stream ended abruptly", "bundle", entry, "outcome", outcome, "duration", time.Since(started), "err", firstLine(err.Error()))
	if r.Context().Err() == nil {
		abortStream()
	}
}

// firstLine keeps logs to the gist of an error: a JS error's text starts
// with the rendering request, which may carry props.
func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// renderFailure maps a failed render onto its answer; ctx holds the
// request's span.
func (h *Handlers) renderFailure(ctx context.Context, r *http.Request, entry string, started time.Time, err error) (reply, bool) {
	var renderErr *jsvm.RenderError
	var tooMany *worker.TooManyBundlesError
	var loadErr *worker.LoadError
	switch {
	case r.Context().Err() != nil:
		// The client is gone (or its connection was closed at the
		// shutdown timeout): whatever ended the render, nobody reads an
		// answer, and an interrupted render is no failure to log.
		h.observeRender(ctx, "canceled", started)
		return reply{}, false
	case errors.As(err, &renderErr):
		if renderErr.Kind == jsvm.KindCanceled {
			h.observeRender(ctx, "canceled", started)
			return reply{}, false
		}
		outcome := "js_error"
		if renderErr.Kind == jsvm.KindTimeout {
			outcome = "timeout"
			// A render whose runtime was lost (a Node.js process that
			// crashed) is answered like a timeout; the log says what the
			// answer says.
			msg := "render timed out"
			if !strings.HasPrefix(renderErr.Text, "Render timed out") {
				msg = "render failed: its runtime was lost"
			}
			h.Logger.WarnContext(ctx, msg, "bundle", entry, "duration", time.Since(started), "answer", firstLine(renderErr.Text))
		}
		h.observeRender(ctx, outcome, started)
		return textReply(http.StatusBadRequest, renderErr.Text), true
	case errors.As(err, &tooMany):
		h.observeRender(ctx, "rejected", started)
		return textReply(http.StatusGone, tooMany.Error()), true
	case errors.Is(err, worker.ErrQueueTimeout):
		h.observeRender(ctx, "queue_timeout", started)
		rp := textReply(http.StatusServiceUnavailable, "Renderer busy: no JavaScript runtime became free in time. Retry later.")
		rp.header["Retry-After"] = "1"
		return rp, true
	case errors.As(err, &loadErr):
		h.observeRender(ctx, "js_error", started)
		h.Logger.ErrorContext(ctx, "bundle failed to load", "bundle", loadErr.ID, "err", loadErr.Err)
		return textReply(http.StatusBadRequest, "The bundle failed to load: "+loadErr.Error()), true
	case errors.Is(err, fs.ErrNotExist):
		// Pruned from the cache after the 410 check: the same answer, and
		// Rails uploads it again.
		return h.bundleGone(ctx, started, "err", err), true
	default:
		h.observeRender(ctx, "error", started)
		h.Logger.ErrorContext(ctx, "render failed", "bundle", entry, "err", err)
		return textReply(http.StatusInternalServerError, "Internal error: the render failed; see the renderer's logs."), true
	}
}
