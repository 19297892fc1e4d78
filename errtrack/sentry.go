package errtrack

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/getsentry/sentry-go"
)

// sentrySink sends events through the official Go SDK. The SDK queues an
// event in a ring buffer of 100 errors (the oldest dropped past it) and
// sends from one goroutine through a queue of 1,000 envelopes; each send
// takes at most Config.SendTimeout (the HTTP client's timeout). Those
// bounds are the SDK's, fixed: an event is a few KB (maxFrames frames, a
// message of maxMessage characters).
type sentrySink struct {
	client *sentry.Client
}

// rateLimit admits at most max a second (wall-clock seconds); it is safe
// for concurrent use.
type rateLimit struct {
	mu     sync.Mutex
	max    int
	second int64
	n      int
}

func (l *rateLimit) allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := time.Now().Unix(); now != l.second {
		l.second, l.n = now, 0
	}
	if l.n >= l.max {
		return false
	}
	l.n++
	return true
}

// keptIntegrations are the SDK's default integrations gorender keeps:
// environment (the OS, CPU count and Go version as contexts) and the
// ignore lists. Left out: contextifyFrames (it reads the frames' files
// from disk into the event), modules (the binary's module list) and
// globalTags (tags from SENTRY_TAGS_* variables).
var keptIntegrations = []string{"Environment", "IgnoreErrors", "IgnoreTransactions"}

func newSentry(cfg Config, version string, logger *slog.Logger) (*sentrySink, error) {
	release := cfg.SentryRelease
	if release == "" {
		release = "gorender@" + version
	}
	var debug io.Writer = io.Discard
	if cfg.SentryDebug {
		debug = slogWriter{logger: logger, msg: "sentry"}
	}
	// A request's transaction is started before its request is
	// authenticated, so the client decides nothing: the sampler gives the
	// configured rate whatever an incoming sentry-trace header says (its
	// trace id is still continued), and at most maxPerSecond sampled
	// transactions a second are sent (the rest dropped before they are
	// serialized), like events.
	rate := cfg.SentryTracesSampleRate
	transactions := &rateLimit{max: maxPerSecond}
	client, err := sentry.NewClient(sentry.ClientOptions{
		Dsn:              cfg.SentryDSN,
		Environment:      cfg.SentryEnvironment,
		Release:          release,
		Debug:            cfg.SentryDebug,
		DebugWriter:      debug,
		TracesSampleRate: rate,
		TracesSampler:    func(sentry.SamplingContext) float64 { return rate },
		EnableTracing:    cfg.SentryTracesSampleRate > 0,
		SendDefaultPII:   false,
		HTTPClient:       &http.Client{Timeout: cfg.SendTimeout},
		Integrations: func(all []sentry.Integration) []sentry.Integration {
			return slices.DeleteFunc(all, func(i sentry.Integration) bool { return !slices.Contains(keptIntegrations, i.Name()) })
		},
		BeforeSend: scrubEvent,
		BeforeSendTransaction: func(ev *sentry.Event, hint *sentry.EventHint) *sentry.Event {
			if !transactions.allow() {
				return nil
			}
			return scrubEvent(ev, hint)
		},
		BeforeBreadcrumb: func(*sentry.Breadcrumb, *sentry.BreadcrumbHint) *sentry.Breadcrumb {
			return nil
		},
		MaxBreadcrumbs:       -1,
		DisableClientReports: true,
	})
	if err != nil {
		return nil, fmt.Errorf("SENTRY_DSN: %w", dsnError(cfg.SentryDSN, err))
	}
	return &sentrySink{client: client}, nil
}

// CheckDSN says what is wrong with a Sentry DSN, as the SDK reads it,
// without repeating the DSN (its key is a credential).
func CheckDSN(dsn string) error {
	if _, err := sentry.NewDsn(dsn); err != nil {
		return dsnError(dsn, err)
	}
	return nil
}

// dsnError is what is wrong with dsn without any of dsn's text: the SDK's
// own complaints are fixed phrases, but an unparsable URL's repeats the
// URL, key included.
func dsnError(dsn string, err error) error {
	what := "the Sentry SDK cannot read it"
	if _, perr := url.Parse(dsn); perr != nil {
		what = "it is not a URL"
	} else if phrase := strings.TrimPrefix(err.Error(), "[Sentry] DsnParseError: "); slices.Contains(dsnPhrases, phrase) {
		what = phrase
	}
	return fmt.Errorf("want a Sentry DSN such as https://<key>@o0.ingest.sentry.io/<project>: %s", what)
}

// dsnPhrases are the SDK's complaints about a DSN that parses as a URL.
var dsnPhrases = []string{"invalid scheme", "empty username", "empty host", "invalid port", "empty project id"}

// scrubEvent keeps of an event what gorender put in it and the SDK's
// environment: no request, user, breadcrumbs, attachments, modules or
// contexts but the OS, runtime, device and trace.
func scrubEvent(ev *sentry.Event, _ *sentry.EventHint) *sentry.Event {
	ev.Request = nil
	ev.User = sentry.User{}
	ev.Breadcrumbs = nil
	ev.Modules = nil
	ev.Attachments = nil
	for k := range ev.Contexts {
		if !slices.Contains([]string{"os", "runtime", "device", "trace"}, k) {
			delete(ev.Contexts, k)
		}
	}
	// The SDK says go; a JavaScript error's frames say javascript.
	for _, ex := range ev.Exception {
		if ex.Stacktrace != nil && len(ex.Stacktrace.Frames) > 0 && ex.Stacktrace.Frames[0].Platform != "" {
			ev.Platform = ex.Stacktrace.Frames[0].Platform
		}
	}
	return ev
}

func (s *sentrySink) send(ev *event) {
	frames := make([]sentry.Frame, len(ev.frames))
	for i, f := range ev.frames {
		// Sentry lists frames outermost first.
		frames[len(frames)-1-i] = sentry.Frame{
			Function: f.Function, Filename: f.File, AbsPath: f.File,
			Lineno: f.Line, Colno: f.Column, InApp: f.InApp, Platform: ev.platform,
		}
	}
	exception := sentry.Exception{Type: ev.errType, Value: ev.message, Mechanism: &sentry.Mechanism{Type: ev.kind, Handled: ptr(ev.kind != KindRecoveredPanic)}}
	if len(frames) > 0 {
		exception.Stacktrace = &sentry.Stacktrace{Frames: frames}
	}
	s.client.CaptureEvent(&sentry.Event{
		Level:       sentry.LevelError,
		Exception:   []sentry.Exception{exception},
		Tags:        ev.tags,
		Fingerprint: ev.fingerprint,
	}, nil, sentry.NewScope())
}

func (s *sentrySink) flush(timeout time.Duration) { s.client.Flush(timeout) }

func ptr[T any](v T) *T { return &v }

// slogWriter writes the SDK's debug lines (SENTRY_DEBUG) to the log.
type slogWriter struct {
	logger *slog.Logger
	msg    string
}

func (w slogWriter) Write(p []byte) (int, error) {
	w.logger.Info(w.msg, "line", strings.TrimSpace(string(p)))
	return len(p), nil
}
