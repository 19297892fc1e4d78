// Package errtrack reports gorender's errors to the error trackers a Rails
// team already runs: Sentry (the official Go SDK, with SENTRY_DSN) and
// Honeybadger (its Go client, with HONEYBADGER_API_KEY), either or both.
//
// Events are a render's JavaScript error (a 400), a bundle that failed to
// load, a runtime quarantined as stuck, a node engine process that crashed,
// and a recovered Go panic: each with its stack as frames (the bundle's
// frames source-mapped and marked in-app), tags that say where it happened
// (bundle, engine, outcome, gem version, Rails env), and a fingerprint on
// the frames and the message's shape, so that one error groups as one
// issue whatever bundle it came from. Nothing of the render's props, HTML,
// rendering request or the password leaves: an event is built from the
// error's message (its shape: quoted values and long numbers taken out) and
// frames alone, and both clients are set up to attach no request, no
// breadcrumbs, no modules and no environment of their own
// (docs/observability.md "Error tracking").
//
// Sending never holds up a render: a render queues what it reports (a
// channel send), one goroutine builds the events and hands them to the
// clients, whose own goroutines send them, each send within
// RENDERER_ERROR_REPORT_TIMEOUT; every queue is bounded, and past a bound
// an event is dropped. A nil *Tracker (both off) reports nothing.
package errtrack

import (
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/getsentry/sentry-go"
)

// Config is what config.Config reads from the SENTRY_* and HONEYBADGER_*
// variables.
type Config struct {
	// SentryDSN turns Sentry on; SentryEnvironment, SentryRelease,
	// SentryTracesSampleRate and SentryDebug are the SDK's standard
	// settings.
	SentryDSN              string
	SentryEnvironment      string
	SentryRelease          string
	SentryTracesSampleRate float64
	SentryDebug            bool
	// HoneybadgerAPIKey turns Honeybadger on; HoneybadgerEnv is its
	// environment name, HoneybadgerEndpoint its API's base URL.
	HoneybadgerAPIKey   string
	HoneybadgerEnv      string
	HoneybadgerEndpoint string
	// SendTimeout bounds each send to a tracker.
	SendTimeout time.Duration
}

// On reports whether any tracker is configured.
func (c Config) On() bool { return c.SentryDSN != "" || c.HoneybadgerAPIKey != "" }

// Kinds of events, the "kind" tag: each is its own issue.
const (
	KindJSError        = "js_error"
	KindBundleLoad     = "bundle_load_error"
	KindQuarantine     = "runtime_quarantine"
	KindProcessCrash   = "node_process_crash"
	KindRecoveredPanic = "go_panic"
)

// Tags say where an event happened: what a render request carries
// (PROTOCOL.md §3) and what gorender decided.
type Tags struct {
	Bundle     string
	Engine     string
	Outcome    string
	GemVersion string
	RailsEnv   string
}

// event is one report, built once and sent to every tracker configured.
type event struct {
	kind        string
	errType     string
	message     string
	frames      []Frame // innermost first
	platform    string  // javascript or go
	tags        map[string]string
	fingerprint []string
}

// sink is one error tracker.
type sink interface {
	send(ev *event)
	flush(timeout time.Duration)
}

// queueLength bounds the events waiting to be built and handed to the
// clients: each holds copies of at most maxQueuedText bytes of its message
// and of its stack, so the queue at most ~4 MiB.
const queueLength = 64

// maxQueuedText bounds what an event queues of a message or a stack: more
// than a message's maxMessage characters and maxFrames frames of any
// engine's stack.
const maxQueuedText = 32 << 10

// queued is a copy of at most maxQueuedText bytes of s: the queue holds no
// reference to a render's (up to 64K-character) texts.
func queued(s string) string {
	if len(s) > maxQueuedText {
		s = strings.ToValidUTF8(s[:maxQueuedText], "")
	}
	return strings.Clone(s)
}

// queued is a copy of tags, cut to maxTag: a request's strings can share
// the bytes of its whole body (zero-copy decoding), which the queue must
// not hold.
func (tags Tags) queued() Tags {
	for _, v := range []*string{&tags.Bundle, &tags.Engine, &tags.Outcome, &tags.GemVersion, &tags.RailsEnv} {
		*v = strings.Clone(truncate(*v, maxTag))
	}
	return tags
}

// queuedIDs is a copy of a render's bundle ids, for the same reason.
func queuedIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strings.Clone(id)
	}
	return out
}

// maxPerSecond bounds the events built and sent each second, past which
// they are dropped: an event costs the process about 0.6 ms of CPU (both
// clients, BenchmarkJSError), so a page that fails every render costs at
// most ~3% of a core in reports, whatever its rate. Trackers group and
// sample anyway.
const maxPerSecond = 50

// Tracker sends events to the trackers configured.
type Tracker struct {
	engine string
	sinks  []sink
	logger *slog.Logger
	// queue holds the events a render reported, built and handed to the
	// clients by one goroutine: a render pays for a channel send, never
	// for parsing a stack or for a client. Full, an event is dropped.
	queue   chan job
	dropped atomic.Uint64
	// perSecond is maxPerSecond; second and built are run's count of
	// events built in the current second.
	perSecond int
	second    int64
	built     int
	// transactions is the Sentry client requests are sampled to as
	// transactions (nil: SENTRY_TRACES_SAMPLE_RATE is 0).
	transactions *sentry.Client
}

// New starts the trackers cfg configures, or returns nil when none is.
// version is gorender's (the default release); engine the engine's name.
func New(cfg Config, version, engine string, logger *slog.Logger) (*Tracker, error) {
	if !cfg.On() {
		return nil, nil
	}
	t := &Tracker{engine: engine, logger: logger, queue: make(chan job, queueLength), perSecond: maxPerSecond}
	if cfg.SentryDSN != "" {
		s, err := newSentry(cfg, version, logger)
		if err != nil {
			return nil, err
		}
		t.sinks = append(t.sinks, s)
		if cfg.SentryTracesSampleRate > 0 {
			t.transactions = s.client
		}
	}
	if cfg.HoneybadgerAPIKey != "" {
		t.sinks = append(t.sinks, newHoneybadger(cfg, logger))
	}
	go t.run()
	return t, nil
}

// job is an event to build, or Flush's marker (flushed set).
type job struct {
	build   func() *event
	flushed chan struct{}
}

// run builds the queued events and hands them to the clients.
func (t *Tracker) run() {
	for j := range t.queue {
		if j.flushed != nil {
			close(j.flushed)
			continue
		}
		if now := time.Now().Unix(); now != t.second {
			t.second, t.built = now, 0
		}
		if t.built >= t.perSecond {
			t.drop()
			continue
		}
		t.built++
		t.deliver(j.build)
	}
}

// deliver builds one event and hands it over; a panic there (a panic
// value's String method, a client's bug) loses the event, not the process.
func (t *Tracker) deliver(build func() *event) {
	defer func() {
		if p := recover(); p != nil {
			t.logger.Error("error tracking: an event could not be built or sent", "panic", fmt.Sprint(p))
		}
	}()
	ev := build()
	for _, s := range t.sinks {
		s.send(ev)
	}
}

// enqueue queues an event's building without waiting.
func (t *Tracker) enqueue(build func() *event) {
	select {
	case t.queue <- job{build: build}:
	default:
		t.drop()
	}
}

// drop counts an event dropped; the first drop and every 1,000th after it
// are logged.
func (t *Tracker) drop() {
	if n := t.dropped.Add(1); n%1000 == 1 {
		t.logger.Warn("error tracking: more events than are sent (64 queued, 50 a second); dropped", "dropped_total", n)
	}
}

// Flush sends what is queued, waiting at most timeout in all: for the
// queue, then for every tracker at once.
func (t *Tracker) Flush(timeout time.Duration) {
	if t == nil {
		return
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	done := make(chan struct{})
	select {
	case t.queue <- job{flushed: done}:
		select {
		case <-done:
		case <-deadline.C:
			return
		}
	case <-deadline.C:
		return
	}
	flushed := make(chan struct{}, len(t.sinks))
	for _, s := range t.sinks {
		go func() { s.flush(timeout); flushed <- struct{}{} }()
	}
	for range t.sinks {
		select {
		case <-flushed:
		case <-deadline.C:
			return
		}
	}
}

// maxTag bounds a tag's value (Sentry's own bound): the request's gem
// version and Rails env are the client's text.
const maxTag = 200

func (t *Tracker) tags(kind string, tags Tags) map[string]string {
	m := map[string]string{"kind": kind, "engine": t.engine}
	for k, v := range map[string]string{"bundle": tags.Bundle, "outcome": tags.Outcome, "gem_version": tags.GemVersion, "rails_env": tags.RailsEnv} {
		if v != "" {
			m[k] = truncate(v, maxTag)
		}
	}
	return m
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// JSError reports a render's JavaScript error: its exception message and
// its stack, both as the answer shows them (source-mapped). bundles are the
// render's bundle ids (its frames may name them).
func (t *Tracker) JSError(tags Tags, bundles []string, message, stack string) {
	if t == nil {
		return
	}
	message, stack = queued(message), queued(stack)
	tags, bundles = tags.queued(), queuedIDs(bundles)
	t.enqueue(func() *event { return t.jsEvent(KindJSError, tags, bundles, message, stack) })
}

// LoadError reports a bundle that failed to load; text is its error (the
// message, then its mapped stack).
func (t *Tracker) LoadError(tags Tags, text string) {
	if t == nil {
		return
	}
	text, tags = queued(text), tags.queued()
	t.enqueue(func() *event {
		message, _, _ := strings.Cut(text, "\n")
		return t.jsEvent(KindBundleLoad, tags, []string{tags.Bundle}, message, text)
	})
}

func (t *Tracker) jsEvent(kind string, tags Tags, bundles []string, message, stack string) *event {
	frames := ParseStack(stack)
	errType := errorType(stack)
	for _, id := range bundles {
		// A load error names its bundle; groups do not.
		message = strings.ReplaceAll(strings.TrimPrefix(message, "load bundle "+id+": "), id, "<bundle>")
	}
	shape := messageShape(message)
	return &event{
		kind: kind, errType: errType, message: shape, frames: frames, platform: "javascript",
		tags:        t.tags(kind, tags),
		fingerprint: fingerprint(kind, errType, shape, frames, bundles),
	}
}

// Quarantine reports a runtime given up as stuck: it did not stop when its
// render was interrupted.
func (t *Tracker) Quarantine(bundle string) {
	if t == nil {
		return
	}
	bundle = strings.Clone(bundle)
	t.enqueue(func() *event {
		return &event{
			kind: KindQuarantine, errType: "RuntimeQuarantined", platform: "go",
			message:     "a JavaScript runtime did not stop after its render was interrupted and was quarantined",
			tags:        t.tags(KindQuarantine, Tags{Bundle: bundle}),
			fingerprint: []string{"gorender", KindQuarantine},
		}
	})
}

// ProcessCrash reports a node engine process that ended other than by
// gorender's choice: reason is its classification (crash, oom, protocol,
// bundle_fault), exit how it ended.
func (t *Tracker) ProcessCrash(slot, pid int, reason, exit string) {
	if t == nil {
		return
	}
	t.enqueue(func() *event {
		tags := t.tags(KindProcessCrash, Tags{Outcome: reason})
		tags["node_process"] = strconv.Itoa(slot)
		return &event{
			kind: KindProcessCrash, errType: "NodeProcessCrash", platform: "go",
			message:     fmt.Sprintf("node process %d ended: %s (%s)", pid, reason, truncate(exit, 200)),
			tags:        tags,
			fingerprint: []string{"gorender", KindProcessCrash, reason},
		}
	})
}

// Panic reports a recovered Go panic: value is what was recovered, pcs the
// panicking goroutine's stack (runtime.Callers taken where it was
// recovered; nil: taken here, which a deferred recover still sees).
func (t *Tracker) Panic(where string, value any, pcs []uintptr) {
	if t == nil {
		return
	}
	if pcs == nil {
		pcs = callers(1)
	}
	t.enqueue(func() *event { return t.panicEvent(where, value, pcs) })
}

func (t *Tracker) panicEvent(where string, value any, pcs []uintptr) *event {
	frames := goFrames(pcs)
	// Shaped like a JavaScript error's: a panic's value can hold a
	// request's text.
	message := messageShape(truncate(fmt.Sprint(value), maxQueuedText))
	fp := []string{"gorender", KindRecoveredPanic}
	for _, f := range frames {
		if f.InApp {
			fp = append(fp, f.Function)
		}
	}
	return &event{
		kind: KindRecoveredPanic, errType: "panic", message: message, frames: frames, platform: "go",
		tags:        t.tags(KindRecoveredPanic, Tags{Outcome: where}),
		fingerprint: fp,
	}
}

// callers is the calling goroutine's stack, skip frames above its caller
// left out.
func callers(skip int) []uintptr {
	pcs := make([]uintptr, maxFrames)
	return pcs[:runtime.Callers(skip+2, pcs)]
}

// goFrames are a Go stack's frames, innermost first; gorender's own are
// in-app.
func goFrames(pcs []uintptr) []Frame {
	var out []Frame
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function != "" {
			out = append(out, Frame{
				Function: f.Function, File: f.File, Line: f.Line,
				InApp: strings.HasPrefix(f.Function, "github.com/gorender/gorender/") && !strings.HasPrefix(f.Function, "github.com/gorender/gorender/errtrack."),
			})
		}
		if !more {
			return out
		}
	}
}
