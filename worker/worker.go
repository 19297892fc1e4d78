// Package worker runs renders on pools of JavaScript runtimes: one pool per
// loaded bundle, each bundle compiled once and loaded by up to N runtimes.
// It owns scheduling (a bounded wait for a free runtime), deadlines,
// replacing broken runtimes and the LRU of loaded bundles.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/sourcemap"
	"github.com/gorender/gorender/tracing"
)

// ErrQueueTimeout is a render that waited longer than the queue timeout for
// a free runtime.
var ErrQueueTimeout = errors.New("no JavaScript runtime became free in time")

var (
	errRecycled = errors.New("the runtime was recycled and its render ran past the graceful restart timeout")
	errDrained  = errors.New("the bundle was evicted and its render ran past the drain timeout")
)

// interruptGrace is how long a render may take to unwind after its
// deadline before its runtime is given up as stuck (catastrophic regex
// backtracking, for one, ignores interrupts).
const interruptGrace = time.Second

// TooManyBundlesError is a request whose bundle set is larger than the
// number of bundles the pools may keep loaded.
type TooManyBundlesError struct{ Max int }

func (e *TooManyBundlesError) Error() string {
	return fmt.Sprintf("Too many bundles uploaded. The maximum allowed is %d.", e.Max)
}

// LoadError is a bundle that failed to compile or evaluate.
type LoadError struct {
	ID  string
	Err error
}

func (e *LoadError) Error() string { return fmt.Sprintf("bundle %s failed to load: %v", e.ID, e.Err) }
func (e *LoadError) Unwrap() error { return e.Err }

// Source gives the pools a bundle's JavaScript.
type Source interface {
	// Hold keeps bundle id's files in place until release is called: a
	// pool holds its bundle from before it reads it until it is drained,
	// so the cache's pruner never removes a loaded bundle.
	Hold(id string) (release func(), err error)
	ReadBundle(id string) ([]byte, error)
}

// Observer is told what the pools do, for metrics. Every method must be cheap
// and safe for concurrent use.
type Observer interface {
	QueueWait(d time.Duration)
	Quarantined(delta int)
	// RuntimeReplaced counts a runtime replaced; reason is a
	// replaceReason's text.
	RuntimeReplaced(reason string)
	BundlesLoaded(n int)
}

// replaceReason is why a pool replaced a runtime: the reason label of
// gorender_runtime_replacements_total (docs/observability.md lists them)
// and of the "runtime replaced" log line.
type replaceReason string

const (
	replacedBroken      replaceReason = "broken"      // Broken after a render or load
	replacedHeapLimit   replaceReason = "heap_limit"  // its render stopped by the memory guard
	replacedMaxRenders  replaceReason = "max_renders" // RENDERER_MAX_RENDERS_PER_RUNTIME
	replacedSchedule    replaceReason = "schedule"    // the restart schedule
	replacedQuarantined replaceReason = "quarantined" // abandoned stuck (pool.abandon)
)

// Config configures the pools.
type Config struct {
	Engine            jsvm.Engine
	Source            Source
	RuntimesPerBundle int           // renders in parallel per bundle
	MaxBundles        int           // bundles kept loaded (LRU)
	QueueTimeout      time.Duration // wait for a free runtime
	RenderTimeout     time.Duration // deadline of one evaluation
	DrainTimeout      time.Duration // how long an evicted bundle's renders may finish
	// MaxResultSize bounds a buffered render's result, in bytes (0: none):
	// a longer one is answered as an error naming RENDERER_MAX_RESULT_SIZE.
	// Checked here, above every engine, for all of them.
	MaxResultSize int64
	// MaxQuarantined bounds the runtimes given up as stuck (they ignored
	// their interrupt) that may still run, each burning a core: past it a
	// stuck runtime is not replaced but keeps its slot until it stops, and
	// QuarantineFull reports true (0: no bound).
	MaxQuarantined int
	// MaxRendersPerRuntime recycles a runtime after that many renders (0: never).
	MaxRendersPerRuntime int
	// RecycleInterval recycles every runtime, one at a time RecycleDelay
	// apart, that often (0: never); RecycleGrace is how long a busy runtime
	// due for recycling may finish its render before it is interrupted.
	RecycleInterval, RecycleDelay, RecycleGrace time.Duration
	Logger                                      *slog.Logger
	Observer                                    Observer
	// Tracer starts the spans of bundle loads, queue waits and the
	// JavaScript's runs; nil when tracing is off.
	Tracer trace.Tracer
	// SourceMaps maps the stack frames of render and load errors to the
	// bundles' original sources, whatever the engine; nil maps nothing.
	SourceMaps *sourcemap.Maps
	// OnQuarantine, when set, is told of a runtime given up as stuck (the
	// error trackers report it).
	OnQuarantine func(bundle string)
}

// Pools holds one pool per loaded bundle.
type Pools struct {
	cfg Config

	active active // renders in progress, for the memory guard
	// quarantine bounds the runtimes given up as stuck that still run.
	quarantine quarantine

	mu      sync.Mutex
	pools   map[string]*pool
	loading map[string]*loadCall
	lru     []string // least recently used first
}

// New returns empty pools.
func New(cfg Config) *Pools {
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	return &Pools{cfg: cfg, pools: make(map[string]*pool), loading: make(map[string]*loadCall),
		quarantine: quarantine{max: cfg.MaxQuarantined}}
}

// Loaded returns the number of bundles loaded.
func (p *Pools) Loaded() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pools)
}

// QuarantineFull reports whether as many runtimes given up as stuck still
// run as Config.MaxQuarantined allows: the process is then short of CPU
// and, past the bound, of runtimes, until they stop.
func (p *Pools) QuarantineFull() bool { return p.quarantine.full() }

// IsLoaded reports whether bundle id is loaded.
func (p *Pools) IsLoaded(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.pools[id]
	return ok
}

// BundleStats is one loaded bundle's runtimes, for metrics.
type BundleStats struct {
	ID       string
	Runtimes int // alive: idle, busy, or quarantined and not yet returned
	Busy     int // leased to a request
	// EngineMemory is what the runtimes' engine holds outside the Go heap
	// (jsvm.MemoryReporter), as of each runtime's last load or render;
	// HasEngineMemory is false for an engine whose memory is the Go
	// heap's (goja).
	EngineMemory    int64
	HasEngineMemory bool
}

// Stats returns the runtimes of every loaded bundle, in no particular
// order. A bundle evicted from the pools is not in it, even while its
// last renders drain: what is labelled by bundle lives as long as the
// bundle is loaded. It may be called at any time (metrics scrapes).
func (p *Pools) Stats() []BundleStats {
	p.mu.Lock()
	pools := slices.Collect(maps.Values(p.pools))
	p.mu.Unlock()
	out := make([]BundleStats, len(pools))
	for i, pl := range pools {
		out[i] = pl.stats()
	}
	return out
}

// Render evaluates code on the runtime of bundle entry, with a runtime of
// every dependency bundle leased for runOnOtherBundle. req carries what the
// caller sets up (a Sink for streamed answers, incremental Updates, shared
// context entries); nil for a plain buffered render. The render deadline
// applies until the answer starts streaming; after that the stream's own
// idle window does. The caller is answered by the deadline even if the
// runtime does not stop: such a runtime is quarantined and replaced.
func (p *Pools) Render(ctx context.Context, entry string, deps []string, code string, req *jsvm.Request) (jsvm.Result, error) {
	ids := bundleSet(entry, deps)
	if len(ids) > p.cfg.MaxBundles {
		return jsvm.Result{}, &TooManyBundlesError{Max: p.cfg.MaxBundles}
	}
	l, err := p.acquire(ctx, ids, entry)
	if err != nil {
		return jsvm.Result{}, err
	}
	renderCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	deadline := time.AfterFunc(p.cfg.RenderTimeout, func() {
		stop(&jsvm.DeadlineError{Limit: p.cfg.RenderTimeout})
	})
	defer deadline.Stop()
	if req == nil {
		req = &jsvm.Request{}
	}
	req.Deadline = time.Now().Add(p.cfg.RenderTimeout)
	if q, ok := l.entry.rt.(jsvm.Queuer); ok && q.QueuesRenders() {
		// The render may wait in its executor behind another (node
		// pipelining): until it starts, the rest of the queue timeout
		// bounds the wait, which the queue wait metric includes; the
		// render deadline runs from its start.
		deadline.Stop()
		waitLimit := time.AfterFunc(time.Until(l.waitStarted.Add(p.cfg.QueueTimeout)), func() { stop(ErrQueueTimeout) })
		var once sync.Once
		begin := func() {
			once.Do(func() {
				waitLimit.Stop()
				p.cfg.Observer.QueueWait(time.Since(l.waitStarted))
			})
		}
		req.Started = func() {
			begin()
			deadline.Reset(p.cfg.RenderTimeout)
			req.Deadline = time.Now().Add(p.cfg.RenderTimeout)
		}
		defer begin() // a render that never started waited all along
	}
	if req.Shared == nil {
		req.Shared = jsvm.NewSharedContext()
	}
	if req.Sink != nil {
		sink := &streamingSink{Sink: req.Sink, deadline: deadline, idle: req.StreamIdle, stop: stop}
		defer sink.end()
		if req.Updates != nil {
			req.Updates.OnArrival(sink.touch)
			defer req.Updates.OnArrival(nil)
		}
		req.Sink = sink
	}
	req.Runtimes = l.setStop(stop)
	defer p.active.add(stop)()

	type outcome struct {
		res jsvm.Result
		err error
	}
	done := make(chan outcome, 1)
	finished := make(chan struct{})
	// The span of the JavaScript's run, from its hand-over to the runtime
	// to its result (on node, a render queued in its executor waits there
	// within it).
	_, execute := tracing.Start(ctx, p.cfg.Tracer, tracing.SpanVMExecute)
	if execute.IsRecording() {
		execute.SetAttributes(tracing.BundleTimestamp.String(entry))
	}
	l.entry.jobs <- func() {
		defer close(finished)
		res, err := req.Runtimes[entry].Eval(renderCtx, code, req)
		done <- outcome{res, err}
	}
	var o outcome
	select {
	case o = <-done:
	case <-renderCtx.Done():
		select {
		case o = <-done:
		case <-time.After(interruptGrace):
			execute.End()
			l.abandon(finished)
			return jsvm.Result{}, stuckError(ctx, renderCtx)
		}
	}
	execute.End()
	// A runtime the memory guard interrupted is counted as replaced for
	// that reason, once, when it is released broken.
	broken := replacedBroken
	if errors.Is(context.Cause(renderCtx), errHeapLimit) {
		broken = replacedHeapLimit
	}
	l.releaseAs(broken)
	if o.err != nil && ctx.Err() == nil {
		if err := interruptCause(renderCtx); err != nil {
			return jsvm.Result{}, err
		}
	}
	var loadErr *jsvm.BundleLoadError
	if errors.As(o.err, &loadErr) {
		// Loaded anywhere before, it failed to load where this render ran:
		// the same answer as a bundle that fails its first load.
		return jsvm.Result{}, &LoadError{ID: loadErr.ID, Err: mappedError(p.cfg.SourceMaps, loadErr.Err)}
	}
	if limit := p.cfg.MaxResultSize; limit > 0 && int64(len(o.res.Body)) > limit {
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindJS, Text: jsvm.ResultTooLargeText(code, len(o.res.Body), limit)}
	}
	return o.res, mappedError(p.cfg.SourceMaps, o.err)
}

// mappedError is err with the stack frames of its text in the bundles'
// original sources: a JavaScript error's answer, or a load's error (for
// the log). Every engine's errors pass through here.
func mappedError(maps *sourcemap.Maps, err error) error {
	if maps == nil || err == nil {
		return err
	}
	if renderErr, ok := err.(*jsvm.RenderError); ok {
		if renderErr.Kind != jsvm.KindJS {
			return err
		}
		mapped := *renderErr
		mapped.Text = maps.Rewrite(renderErr.Text)
		mapped.Stack = maps.Rewrite(renderErr.Stack)
		return &mapped
	}
	if text := maps.Rewrite(err.Error()); text != err.Error() {
		return &rewrittenError{text: text, err: err}
	}
	return err
}

// rewrittenError is an error whose text was rewritten; it still wraps the
// original.
type rewrittenError struct {
	text string
	err  error
}

func (e *rewrittenError) Error() string { return e.text }
func (e *rewrittenError) Unwrap() error { return e.err }

// interruptCause is the answer for a render the pools interrupted
// themselves (recycling, eviction, memory guard, a stream's idle
// watchdog), or nil.
func interruptCause(renderCtx context.Context) error {
	cause := context.Cause(renderCtx)
	if errors.Is(cause, ErrQueueTimeout) {
		return ErrQueueTimeout
	}
	if errors.Is(cause, errRecycled) || errors.Is(cause, errDrained) || errors.Is(cause, errHeapLimit) {
		return &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: "Render interrupted: " + cause.Error() + "."}
	}
	var stuck *streamStuckError
	if errors.As(cause, &stuck) {
		return &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: jsvm.StreamIdleText(stuck.Idle) + " Its JavaScript did not yield and its runtime was interrupted."}
	}
	return nil
}

// stuckError is the answer for a render whose runtime ignored its interrupt.
func stuckError(ctx, renderCtx context.Context) error {
	if ctx.Err() != nil {
		return &jsvm.RenderError{Kind: jsvm.KindCanceled, Text: "Render canceled: the request went away."}
	}
	if err := interruptCause(renderCtx); err != nil {
		return err
	}
	var deadline *jsvm.DeadlineError
	limit := "its deadline"
	if errors.As(context.Cause(renderCtx), &deadline) {
		limit = deadline.Limit.String()
	}
	return &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: fmt.Sprintf(
		"Render timed out after %s: the runtime did not stop when interrupted and was replaced.", limit)}
}

// Close retires every pool at once: idle runtimes are closed and busy ones
// are interrupted.
func (p *Pools) Close() {
	p.mu.Lock()
	pools := p.pools
	p.pools = make(map[string]*pool)
	p.lru = nil
	p.mu.Unlock()
	for _, pl := range pools {
		pl.drain(0)
	}
}

type nopObserver struct{}

func (nopObserver) QueueWait(time.Duration) {}
func (nopObserver) RuntimeReplaced(string)  {}
func (nopObserver) BundlesLoaded(int)       {}
func (nopObserver) Quarantined(int)         {}
