// Package handlers serves the renderer's HTTP endpoints (PROTOCOL.md §2–§9):
// decoding the four body encodings into one request, the prechecks, and
// every answer's status, headers and body.
package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gorender/gorender/auth"
	"github.com/gorender/gorender/bundles"
	"github.com/gorender/gorender/errtrack"
	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/metrics"
	"github.com/gorender/gorender/tracing"
)

// Renderer runs renders; worker.Pools implements it.
type Renderer interface {
	Render(ctx context.Context, entry string, deps []string, code string, req *jsvm.Request) (jsvm.Result, error)
}

// Readiness tells /ready whether gorender can serve renders.
type Readiness interface {
	// Ready returns true when ready, else the status word to report.
	Ready() (ready bool, status string)
}

// Deps is what the handlers need.
type Deps struct {
	Cache           *bundles.Cache
	Renderer        Renderer
	Readiness       Readiness
	Password        auth.Password
	RendererVersion string
	// RendererCommit and BuildDate are the commit gorender was built from
	// and the build's date, for /info.
	RendererCommit, BuildDate string
	Engine                    string
	// EngineInfo are /info's fields the engine sets (jsvm.InfoReporter).
	EngineInfo map[string]string
	Metrics    *metrics.Metrics
	// Tracer starts the spans of the requests' steps (docs/observability.md
	// "Traces"); nil when tracing is off.
	Tracer trace.Tracer
	// Errors reports renders' errors to Sentry and Honeybadger; nil when
	// both are off.
	Errors *errtrack.Tracker
	Logger *slog.Logger
	// Budget bounds the body bytes of requests not yet authenticated.
	Budget *Budget
	// BodyLimits bound the waits for a request body.
	BodyLimits BodyLimits
	// Authenticated, when set, is told when a request authenticates (the
	// server trusts its connection from then on).
	Authenticated Authenticator
	// StreamIdle ends a streamed answer that produces nothing for this long.
	StreamIdle time.Duration
	// LineTimeout is the longest wait for the next line of an incremental
	// render before its EOF; PullIdle is that wait, and the stream's idle
	// window, in pull mode (zero: the defaults).
	LineTimeout, PullIdle time.Duration
}

// Handlers holds the endpoints.
type Handlers struct {
	Deps
}

// New returns the endpoints over deps.
func New(deps Deps) *Handlers {
	if deps.Budget == nil {
		deps.Budget = NewBudget(0)
	}
	return &Handlers{Deps: deps}
}

// decodeOptions returns the decoder's options for one request whose body
// is guarded by body; file parts go to staging (nil: file parts are a 400).
func (h *Handlers) decodeOptions(body *guardedBody, staging *lazyStaging, checkProtocol bool) DecodeOptions {
	limits := h.BodyLimits.withDefaults()
	opts := DecodeOptions{MaxBodyBytes: limits.MaxBodyBytes, MaxFieldBytes: limits.MaxFieldBytes, MaxParts: limits.MaxParts}
	if staging != nil {
		opts.Stage = staging.get
	}
	early := EarlyPrecheck(h.Password, h.RendererVersion, checkProtocol)
	gate := func(f *Fields) *HTTPError {
		if herr := early(f); herr != nil {
			return herr
		}
		body.authenticated()
		return nil
	}
	opts.BeforeFirstFile, opts.BeforeBody, opts.BeforeDecode = gate, gate, gate
	opts.PasswordPart = func(f *Fields) {
		if checkPassword(f, h.Password) == nil {
			body.authenticated()
		}
	}
	return opts
}

// precheck is Precheck on a decoded request, marking it authenticated when
// it passes.
func (h *Handlers) precheck(body *guardedBody, f *Fields, checkProtocol bool) *HTTPError {
	if herr := Precheck(f, h.Password, h.RendererVersion, checkProtocol); herr != nil {
		return herr
	}
	body.authenticated()
	return nil
}

// lazyStaging makes the request's staging directory at its first file part.
type lazyStaging struct {
	cache   *bundles.Cache
	staging *bundles.Staging
}

func (l *lazyStaging) get() (Stager, error) {
	if l.staging == nil {
		s, err := l.cache.NewStaging()
		if err != nil {
			return nil, err
		}
		l.staging = s
	}
	return l.staging, nil
}

// remove deletes the staging directory, if one was made.
func (l *lazyStaging) remove(logger *slog.Logger) {
	if l.staging == nil {
		return
	}
	if err := l.staging.Remove(); err != nil {
		logger.Error("remove staging directory", "err", err)
	}
}

// decode is DecodeBody in a span of its own: the body's media type, its
// file parts, and the status of an answer it decided.
func (h *Handlers) decode(w http.ResponseWriter, r *http.Request, opts DecodeOptions) (*Fields, *HTTPError) {
	_, span := tracing.Start(r.Context(), h.Tracer, "decode body")
	fields, herr := DecodeBody(w, r, opts)
	if span.IsRecording() {
		kind, _ := bodyKind(r.Header.Get("Content-Type"))
		span.SetAttributes(attribute.String("gorender.body.media_type", kind))
		if fields != nil {
			span.SetAttributes(attribute.Int("gorender.body.files", len(fields.Files)))
		}
		if herr != nil {
			span.SetAttributes(attribute.Int("gorender.answer.status", herr.Status))
		}
	}
	span.End()
	return fields, herr
}

// noteGemVersion logs each distinct gem version once and counts it.
func (h *Handlers) noteGemVersion(ctx context.Context, f *Fields) {
	v, _ := f.Text("gemVersion")
	if v == "" {
		v = "unknown"
	}
	if h.Metrics != nil && h.Metrics.GemVersion(v) {
		h.Logger.InfoContext(ctx, "first request from gem version", "gem_version", v)
	}
}

// observeRender counts a render's outcome (gorender_render_duration_seconds)
// and records it on ctx's span, the request's ror.ssr.request.
func (h *Handlers) observeRender(ctx context.Context, outcome string, started time.Time) {
	if h.Metrics != nil {
		h.Metrics.Render(outcome, time.Since(started))
	}
	tracing.SetOutcome(trace.SpanFromContext(ctx), outcome)
}
