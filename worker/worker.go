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

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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
	RuntimeReplaced(reason string)
	BundlesLoaded(n int)
}

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
	// Tracer starts the spans of bundle loads and queue waits; nil when
	// tracing is off.
	Tracer trace.Tracer
	// SourceMaps maps the stack frames of render and load errors to the
	// bundles' original sources, whatever the engine; nil maps nothing.
	SourceMaps *sourcemap.Maps
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

type loadCall struct {
	done chan struct{}
	pool *pool
	err  error
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
			l.abandon(finished)
			return jsvm.Result{}, stuckError(ctx, renderCtx)
		}
	}
	// A runtime the memory guard interrupted is counted as replaced for
	// that reason, once, when it is released broken.
	broken := "broken"
	if errors.Is(context.Cause(renderCtx), errHeapLimit) {
		broken = "heap_limit"
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

// streamingSink lifts the render deadline once the answer starts
// streaming: a healthy stream may run as long as it keeps producing. From
// then on it is the stream's idle watchdog: a stream that shows no
// activity (a chunk written, an update taken by its render) for its idle window
// (RENDERER_STREAM_IDLE_TIMEOUT) and streamIdleGrace more is stopped like
// a render at its deadline: its runtime interrupted, or quarantined if it
// does not stop. The engines end a stream that waits for nothing at the
// idle window themselves, keeping the runtime; their timers run between
// JavaScript callbacks, so JavaScript that never yields (a loop in a
// stream's pull or a timer's callback) is this watchdog's.
type streamingSink struct {
	jsvm.Sink
	deadline *time.Timer
	idle     time.Duration // 0: no idle bound
	stop     context.CancelCauseFunc

	mu       sync.Mutex
	watchdog *time.Timer // nil until the stream starts
	writing  bool        // a write is in progress: a blocked write is the write timeout's
	ended    bool
}

// streamIdleGrace is how much longer than its idle window a stream may show
// no activity before the watchdog stops it: the engine's own idle timer,
// which keeps the runtime, comes first when it can.
const streamIdleGrace = interruptGrace

// streamStuckError is the cause of a stream the idle watchdog stopped.
type streamStuckError struct{ Idle time.Duration }

func (e *streamStuckError) Error() string {
	return fmt.Sprintf("the stream showed no activity for %s (RENDERER_STREAM_IDLE_TIMEOUT) and its JavaScript did not yield", e.Idle)
}

func (s *streamingSink) Start() error {
	if !s.deadline.Stop() {
		return errors.New("the render deadline passed as the stream started")
	}
	err := s.Sink.Start()
	if s.idle > 0 {
		s.mu.Lock()
		if !s.ended {
			s.watchdog = time.AfterFunc(s.idle+streamIdleGrace, func() { s.stop(&streamStuckError{Idle: s.idle}) })
		}
		s.mu.Unlock()
	}
	return err
}

func (s *streamingSink) Write(p []byte) error {
	s.setWriting(true)
	defer s.setWriting(false)
	return s.Sink.Write(p)
}

// setWriting pauses the watchdog while a write is in progress and restarts
// its window after it.
func (s *streamingSink) setWriting(writing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writing = writing
	s.rearmLocked()
}

// touch restarts the idle window (an update arrived); any goroutine.
func (s *streamingSink) touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rearmLocked()
}

func (s *streamingSink) rearmLocked() {
	if s.watchdog == nil || s.ended {
		return
	}
	s.watchdog.Stop()
	if !s.writing {
		s.watchdog.Reset(s.idle + streamIdleGrace)
	}
}

// end stops the watchdog for good: the render returned.
func (s *streamingSink) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if s.watchdog != nil {
		s.watchdog.Stop()
	}
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

// Preload loads bundle id if it is not loaded yet and fills its pool with
// runtimes, so that the first renders do not pay for loading the bundle.
func (p *Pools) Preload(ctx context.Context, id string) error {
	pl, err := p.pool(ctx, id)
	if err != nil {
		return err
	}
	for missing := p.cfg.RuntimesPerBundle - pl.size(); missing > 0; missing-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := pl.replenish(); err != nil {
			return err
		}
	}
	return nil
}

// bundleSet is the sorted unique ids of entry and deps: acquiring runtimes
// in one global order is what keeps two requests from deadlocking.
func bundleSet(entry string, deps []string) []string {
	ids := append([]string{entry}, deps...)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// lease is the runtimes one request holds: one of each bundle of its set.
type lease struct {
	held  []leased // in the set's (sorted) order
	entry *entry   // the entry bundle's runtime, one of held
	// reserved is the entry runtime's executor reservation (jsvm.Reserver),
	// nil for engines whose runtimes run by themselves.
	reserved jsvm.Reserver
	// waitStarted is when the request began to wait for its runtimes.
	waitStarted time.Time
}

// leased is one runtime of a lease: bundle id's, from its pool.
type leased struct {
	id   string
	pool *pool
	e    *entry
}

func (l *lease) release() { l.releaseAs("broken") }

// releaseAs releases the lease; a broken runtime is replaced and counted
// with reason brokenReason.
func (l *lease) releaseAs(brokenReason string) {
	if l.reserved != nil {
		l.reserved.Unreserve()
	}
	for _, h := range l.held {
		h.pool.release(h.e, brokenReason)
	}
}

// abandon gives up every runtime of the lease (see pool.abandon); the
// executor reservation is given back once the render's goroutine returns.
func (l *lease) abandon(finished <-chan struct{}) {
	if l.reserved != nil {
		go func() {
			<-finished
			l.reserved.Unreserve()
		}()
	}
	for _, h := range l.held {
		h.pool.abandon(h.e, finished)
	}
}

// setStop records the render's interrupt on every leased runtime and
// returns the runtimes by bundle id.
func (l *lease) setStop(stop context.CancelCauseFunc) map[string]jsvm.Runtime {
	runtimes := make(map[string]jsvm.Runtime, len(l.held))
	for _, h := range l.held {
		h.pool.setStop(h.e, stop)
		runtimes[h.id] = h.e.rt
	}
	return runtimes
}

// acquire leases one runtime of every bundle of ids, in order, then the
// entry runtime's (entryID's) executor for the set if its engine shares them
// (jsvm.Reserver), all
// within the queue timeout. The bundles are loaded first: the queue timeout
// bounds the wait for a free runtime, not a cold bundle's load (which would
// otherwise use it up and turn the first render of a large bundle into a
// 503).
func (p *Pools) acquire(ctx context.Context, ids []string, entryID string) (*lease, error) {
	pools := make([]*pool, len(ids))
	for i, id := range ids {
		pl, err := p.pool(ctx, id)
		if err != nil {
			return nil, err
		}
		pools[i] = pl
	}
	_, span := tracing.Start(ctx, p.cfg.Tracer, "queue wait")
	defer span.End()
	started := time.Now()
	waitCtx := &queueWait{Context: ctx, deadline: started.Add(p.cfg.QueueTimeout)}
	defer waitCtx.stop()
	l := &lease{held: make([]leased, 0, len(ids)), waitStarted: started}
	for i, id := range ids {
		pl := pools[i]
		e, err := pl.acquire(waitCtx)
		if err != nil {
			l.release()
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				err = ErrQueueTimeout
			}
			if span.IsRecording() {
				span.SetStatus(codes.Error, err.Error())
			}
			return nil, err
		}
		l.held = append(l.held, leased{id, pl, e})
		if id == entryID {
			l.entry = e
		}
	}
	if r, ok := l.entry.rt.(jsvm.Reserver); ok {
		with := make([]jsvm.Runtime, 0, len(l.held)-1)
		for _, h := range l.held {
			if h.e != l.entry {
				with = append(with, h.e.rt)
			}
		}
		if err := r.Reserve(waitCtx, with); err != nil {
			l.release()
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return nil, ErrQueueTimeout
			}
			return nil, err
		}
		l.reserved = r
	}
	if q, ok := l.entry.rt.(jsvm.Queuer); !ok || !q.QueuesRenders() {
		p.cfg.Observer.QueueWait(time.Since(started))
	}
	return l, nil
}

// queueWait is a request's context bounded by the queue timeout, whose
// timer is made only when something waits (asks for Done): most renders
// find their runtimes free, and context.WithTimeout cost each of them a
// timer and a child in the request's context (about 1.5 µs and 600 B).
// One goroutine uses it (acquire's).
type queueWait struct {
	context.Context // the request's
	deadline        time.Time
	wait            context.Context // made by the first Done
	cancel          context.CancelFunc
}

func (q *queueWait) Done() <-chan struct{} {
	if q.wait == nil {
		q.wait, q.cancel = context.WithDeadline(q.Context, q.deadline)
	}
	return q.wait.Done()
}

// Err is the request's error until the deadline; from it on, the
// deadline's, whether or not anything waited (as context.WithDeadline's).
func (q *queueWait) Err() error {
	if q.wait == nil && time.Now().Before(q.deadline) {
		return q.Context.Err()
	}
	q.Done()
	return q.wait.Err()
}

// Value asks the wait's context once it is made, so that context.Cause
// finds its cause.
func (q *queueWait) Value(key any) any {
	if q.wait == nil {
		return q.Context.Value(key)
	}
	return q.wait.Value(key)
}

func (q *queueWait) Deadline() (time.Time, bool) {
	if d, ok := q.Context.Deadline(); ok && d.Before(q.deadline) {
		return d, true
	}
	return q.deadline, true
}

// stop ends the wait's timer, if one was made.
func (q *queueWait) stop() {
	if q.cancel != nil {
		q.cancel()
	}
}

// pool returns the loaded pool of id, loading it once if needed, and marks
// it most recently used.
func (p *Pools) pool(ctx context.Context, id string) (*pool, error) {
	p.mu.Lock()
	if pl, ok := p.pools[id]; ok {
		p.touchLocked(id)
		p.mu.Unlock()
		return pl, nil
	}
	call, inFlight := p.loading[id]
	if !inFlight {
		call = &loadCall{done: make(chan struct{})}
		p.loading[id] = call
	}
	p.mu.Unlock()

	ctx, span := tracing.Start(ctx, p.cfg.Tracer, "bundle load")
	defer span.End()
	if span.IsRecording() {
		// joined: another request's load of the bundle was under way.
		span.SetAttributes(tracing.BundleID.String(id), attribute.Bool("gorender.load.joined", inFlight))
	}
	if !inFlight {
		// The load outlives any one request: other requests may wait on it.
		call.pool, call.err = p.load(context.WithoutCancel(ctx), id)
		p.mu.Lock()
		delete(p.loading, id)
		if call.err == nil {
			p.pools[id] = call.pool
			p.touchLocked(id)
			p.evictLocked()
			p.cfg.Observer.BundlesLoaded(len(p.pools))
		}
		p.mu.Unlock()
		close(call.done)
	}
	select {
	case <-call.done:
		if call.err != nil && span.IsRecording() {
			span.SetStatus(codes.Error, "the bundle failed to load")
		}
		return call.pool, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// load reads and compiles bundle id and starts its pool with one runtime, so
// that a bundle that fails to evaluate fails here, once.
func (p *Pools) load(ctx context.Context, id string) (pl *pool, err error) {
	started := time.Now()
	release, err := p.cfg.Source.Hold(id)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	src, err := p.cfg.Source.ReadBundle(id)
	if err != nil {
		return nil, fmt.Errorf("read bundle %s: %w", id, err)
	}
	// The bundle's path on disk, if the source knows it: with
	// RENDERER_SUPPORT_MODULES it is __filename and the root of fs.
	path := ""
	if bp, ok := p.cfg.Source.(interface{ BundlePath(id string) string }); ok {
		path = bp.BundlePath(id)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(tracing.BundleBytes.Int(len(src)), tracing.Engine.String(p.cfg.Engine.Name()))
	}
	prg, err := p.cfg.Engine.Compile(id, path, string(src))
	if err != nil {
		return nil, &LoadError{ID: id, Err: err}
	}
	var positions sourcemap.Positions
	var rewrites sourcemap.Rewrites
	if bp, ok := prg.(jsvm.BundlePositions); ok {
		positions = bp.BundlePosition
		if bp.Rewritten() {
			rewrites = bp.ReplayRewrites
		}
	}
	p.cfg.SourceMaps.Add(id, path, positions, rewrites)
	pl = newPool(id, prg, p.cfg, &p.quarantine, release)
	e, err := pl.newEntry(ctx)
	if err != nil {
		p.cfg.SourceMaps.Remove(id)
		return nil, &LoadError{ID: id, Err: err}
	}
	pl.mu.Lock()
	pl.idle = append(pl.idle, e)
	pl.mu.Unlock()
	p.cfg.Logger.InfoContext(ctx, "bundle loaded", "bundle", id, "bytes", len(src), "duration", time.Since(started))
	return pl, nil
}

func (p *Pools) touchLocked(id string) {
	if i := slices.Index(p.lru, id); i >= 0 {
		p.lru = slices.Delete(p.lru, i, i+1)
	}
	p.lru = append(p.lru, id)
}

// evictLocked drops least recently used bundles beyond MaxBundles; their
// in-flight renders may finish within the drain timeout.
func (p *Pools) evictLocked() {
	for len(p.lru) > p.cfg.MaxBundles {
		id := p.lru[0]
		p.lru = p.lru[1:]
		pl := p.pools[id]
		delete(p.pools, id)
		p.cfg.SourceMaps.Remove(id)
		p.cfg.Logger.Info("bundle evicted", "bundle", id, "max_bundles", p.cfg.MaxBundles)
		go pl.drain(p.cfg.DrainTimeout)
	}
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

// RunRecycler recycles every runtime of every pool each RecycleInterval,
// one at a time RecycleDelay apart, until ctx ends (upstream's scheduled
// worker restarts, without restarts: the other runtimes keep serving).
func (p *Pools) RunRecycler(ctx context.Context) {
	if p.cfg.RecycleInterval <= 0 {
		return
	}
	ticker := time.NewTicker(p.cfg.RecycleInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		p.mu.Lock()
		pools := make([]*pool, 0, len(p.pools))
		for _, pl := range p.pools {
			pools = append(pools, pl)
		}
		p.mu.Unlock()
		for _, pl := range pools {
			pl.startGeneration()
		}
		for _, pl := range pools {
			for pl.recycleOne(p.cfg.RecycleGrace) {
				select {
				case <-ctx.Done():
					return
				case <-time.After(p.cfg.RecycleDelay):
				}
			}
		}
	}
}
