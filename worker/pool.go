package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// MinLoadTimeout bounds loading a bundle into a runtime (or the render
// timeout, if longer): a bundle that never finishes evaluating fails, but a
// short render timeout does not make a large bundle's load fail on a busy
// machine.
const MinLoadTimeout = 30 * time.Second

// entry is one runtime of a pool with its bookkeeping.
type entry struct {
	rt      jsvm.Runtime
	renders int
	gen     uint64 // the pool generation it was made in
	// jobs are its renders, run one at a time on one long-lived goroutine
	// (serve): a render's deep recursion grows that goroutine's stack once,
	// where a goroutine per render grew a fresh stack every time (7% of
	// the CPU of a trivial render).
	jobs chan func()

	// Guarded by the pool's mu:
	recycle bool                    // retire it when released
	stop    context.CancelCauseFunc // interrupts its current render
}

// pool is the runtimes of one bundle. Runtimes are made on demand up to the
// pool's size and kept idle for reuse; slots bounds how many are leased.
type pool struct {
	id      string
	program jsvm.Program
	cfg     Config
	slots   chan struct{}
	unhold  func() // releases the bundle's files (Source.Hold) once drained
	// quarantine counts the runtimes every pool gave up as stuck.
	quarantine *quarantine

	mu       sync.Mutex
	idle     []*entry
	busy     map[*entry]struct{}
	creating int    // runtimes being made (acquire, replenish): counted as alive
	stuck    int    // runtimes abandoned (quarantined) that have not returned yet
	gen      uint64 // entries made before the current generation are due for recycling
	retired  bool
}

func newPool(id string, prg jsvm.Program, cfg Config, q *quarantine, unhold func()) *pool {
	return &pool{
		id:         id,
		program:    prg,
		cfg:        cfg,
		unhold:     unhold,
		quarantine: q,
		slots:      make(chan struct{}, cfg.RuntimesPerBundle),
		busy:       make(map[*entry]struct{}),
	}
}

// acquire waits for a slot, then reuses an idle runtime or makes one.
func (pl *pool) acquire(ctx context.Context) (*entry, error) {
	select {
	case pl.slots <- struct{}{}:
	default:
		// Full: wait (ctx's Done is asked for only now; see queueWait).
		select {
		case pl.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	pl.mu.Lock()
	var e *entry
	if n := len(pl.idle); n > 0 {
		e = pl.idle[n-1]
		pl.idle = pl.idle[:n-1]
	} else {
		pl.creating++
	}
	pl.mu.Unlock()
	if e == nil {
		var err error
		e, err = pl.newEntry(context.WithoutCancel(ctx))
		pl.mu.Lock()
		pl.creating--
		pl.mu.Unlock()
		if err != nil {
			<-pl.slots
			return nil, &LoadError{ID: pl.id, Err: err}
		}
	}
	pl.mu.Lock()
	pl.busy[e] = struct{}{}
	pl.mu.Unlock()
	return e, nil
}

// release returns a leased runtime. A broken one is replaced and counted
// as brokenReason, and so is one due for recycling (by count or schedule):
// it closes and its replacement is made in the background, so the pool is
// one runtime short until that one is loaded (a render that finds none
// idle meanwhile makes its own, within the pool's size). One of a retired
// pool just closes.
func (pl *pool) release(e *entry, brokenReason replaceReason) {
	e.renders++
	pl.mu.Lock()
	var reason replaceReason
	switch {
	case e.rt.Broken():
		reason = brokenReason
	case pl.cfg.MaxRendersPerRuntime > 0 && e.renders >= pl.cfg.MaxRendersPerRuntime:
		reason = replacedMaxRenders
	case e.recycle:
		reason = replacedSchedule
	}
	if reason != "" {
		// Counted before the runtime stops counting as busy: whoever sees
		// it idle, then scrapes again, sees its replacement counted too
		// (one scrape is no snapshot: its series are collected concurrently).
		pl.cfg.Observer.RuntimeReplaced(string(reason))
	}
	e.stop = nil
	delete(pl.busy, e)
	retired := pl.retired
	keep := reason == "" && !retired
	if keep {
		pl.idle = append(pl.idle, e)
	}
	pl.mu.Unlock()
	<-pl.slots
	if keep {
		return
	}
	pl.closeEntry(e)
	if reason != "" {
		pl.cfg.Logger.Info("runtime replaced", "bundle", pl.id, "reason", string(reason), "renders", e.renders)
		if !retired {
			go func() { _ = pl.replenish() }()
		}
	}
}

// abandon gives up a leased runtime that did not stop when interrupted; it
// is closed whenever its goroutine finally returns (finished is closed
// then). While the quarantine has room, its slot is freed at once and a
// fresh runtime takes its place, so the pool keeps serving; past the
// quarantine's bound it keeps its slot until it returns: the process never
// runs more stuck runtimes than the bound plus the pools' slots, and /ready
// says so (Pools.QuarantineFull).
func (pl *pool) abandon(e *entry, finished <-chan struct{}) {
	admitted := pl.quarantine.enter()
	pl.mu.Lock()
	pl.cfg.Observer.RuntimeReplaced(string(replacedQuarantined))
	pl.cfg.Observer.Quarantined(1)
	delete(pl.busy, e)
	pl.stuck++
	retired := pl.retired
	pl.mu.Unlock()
	freeSlot := func() {
		<-pl.slots
		if !retired {
			go func() { _ = pl.replenish() }()
		}
	}
	if admitted {
		pl.cfg.Logger.Warn("runtime did not stop after interrupt: quarantined and replaced", "bundle", pl.id)
		freeSlot()
	} else {
		pl.cfg.Logger.Error("runtime did not stop after interrupt and the quarantine is full: it keeps its slot until it stops, and /ready reports quarantine_full",
			"bundle", pl.id, "quarantined", pl.quarantine.count(), "max", pl.quarantine.max)
	}
	if pl.cfg.OnQuarantine != nil {
		pl.cfg.OnQuarantine(pl.id)
	}
	go func() {
		<-finished
		pl.closeEntry(e)
		pl.mu.Lock()
		pl.stuck--
		pl.mu.Unlock()
		pl.quarantine.leave()
		pl.cfg.Observer.Quarantined(-1)
		if !admitted {
			freeSlot()
		}
	}()
}

// quarantine counts the runtimes given up as stuck that still run (each
// burns a core until its JavaScript returns), against a bound.
type quarantine struct {
	max int // 0: no bound
	mu  sync.Mutex
	n   int
}

// enter counts one more stuck runtime and reports whether it fits the
// bound.
func (q *quarantine) enter() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.n++
	return q.max <= 0 || q.n <= q.max
}

func (q *quarantine) leave() {
	q.mu.Lock()
	q.n--
	q.mu.Unlock()
}

func (q *quarantine) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// full reports whether the bound is reached.
func (q *quarantine) full() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.max > 0 && q.n >= q.max
}

// replenish makes a runtime in the background to take a retired one's
// place, so the next render does not pay for loading the bundle. A render
// that could not wait made its own meanwhile: then the pool is full and the
// new one is closed.
func (pl *pool) replenish() error {
	pl.mu.Lock()
	if pl.retired || pl.aliveLocked() >= pl.cfg.RuntimesPerBundle {
		pl.mu.Unlock()
		return nil
	}
	pl.creating++
	pl.mu.Unlock()
	e, err := pl.newEntry(context.Background())
	pl.mu.Lock()
	pl.creating--
	pl.mu.Unlock()
	if err != nil {
		pl.cfg.Logger.Error("replace runtime", "bundle", pl.id, "err", err)
		return err
	}
	pl.mu.Lock()
	full := pl.retired || pl.aliveLocked() >= pl.cfg.RuntimesPerBundle
	if !full {
		pl.idle = append(pl.idle, e)
	}
	pl.mu.Unlock()
	if full {
		pl.closeEntry(e)
	}
	return nil
}

// aliveLocked counts the runtimes idle, busy or being made; pl.mu held.
func (pl *pool) aliveLocked() int { return len(pl.idle) + len(pl.busy) + pl.creating }

// stats reports the pool's runtimes for metrics: alive (idle, busy, or
// quarantined and not yet returned), busy, and the engine memory they hold
// outside the Go heap (jsvm.MemoryReporter; HasEngineMemory false when none
// reports any).
func (pl *pool) stats() BundleStats {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	st := BundleStats{ID: pl.id, Runtimes: len(pl.idle) + len(pl.busy) + pl.stuck, Busy: len(pl.busy)}
	add := func(e *entry) {
		if m, is := e.rt.(jsvm.MemoryReporter); is {
			st.EngineMemory += m.MemoryUsage()
			st.HasEngineMemory = true
		}
	}
	for _, e := range pl.idle {
		add(e)
	}
	for e := range pl.busy {
		add(e)
	}
	return st
}

// size is the number of runtimes alive, idle or busy.
func (pl *pool) size() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return len(pl.idle) + len(pl.busy)
}

// newEntry makes a runtime and loads the bundle into it.
func (pl *pool) newEntry(ctx context.Context) (*entry, error) {
	loadCtx, cancel := context.WithTimeout(ctx, max(pl.cfg.RenderTimeout, MinLoadTimeout))
	defer cancel()
	rt, err := pl.cfg.Engine.NewRuntime()
	if err != nil {
		return nil, fmt.Errorf("new runtime: %w", err)
	}
	if err := rt.Load(loadCtx, pl.program); err != nil {
		rt.Close()
		return nil, mappedError(pl.cfg.SourceMaps, err)
	}
	if rt.Broken() {
		// The load finished as its deadline passed: the interrupt may be pending.
		rt.Close()
		return nil, fmt.Errorf("load bundle %s: interrupted at its deadline", pl.id)
	}
	pl.mu.Lock()
	gen := pl.gen
	pl.mu.Unlock()
	e := &entry{rt: rt, gen: gen, jobs: make(chan func())}
	go e.serve()
	return e, nil
}

// serve runs e's jobs until closeEntry.
func (e *entry) serve() {
	for job := range e.jobs {
		job()
	}
}

// closeEntry closes a runtime that runs no job: idle, or its render
// finished.
func (pl *pool) closeEntry(e *entry) {
	close(e.jobs)
	e.rt.Close()
}

// recycleOne replaces one runtime made before the current generation: an
// idle one is swapped for a fresh one at once; a busy one is marked and
// replaced when released, or interrupted after grace. It reports whether
// any runtime of an older generation was left to recycle.
func (pl *pool) recycleOne(grace time.Duration) bool {
	pl.mu.Lock()
	if pl.retired {
		pl.mu.Unlock()
		return false
	}
	for i, e := range pl.idle {
		if e.gen < pl.gen {
			pl.idle = append(pl.idle[:i], pl.idle[i+1:]...)
			pl.mu.Unlock()
			pl.closeEntry(e)
			pl.cfg.Observer.RuntimeReplaced(string(replacedSchedule))
			_ = pl.replenish()
			return true
		}
	}
	for e := range pl.busy {
		if e.gen < pl.gen && !e.recycle {
			e.recycle = true
			pl.mu.Unlock()
			time.AfterFunc(grace, func() {
				pl.mu.Lock()
				defer pl.mu.Unlock()
				if _, still := pl.busy[e]; still && e.stop != nil {
					// The render had its grace: interrupt it, as upstream kills a worker.
					e.stop(errRecycled)
				}
			})
			return true
		}
	}
	pl.mu.Unlock()
	return false
}

// startGeneration makes every current runtime due for recycling.
func (pl *pool) startGeneration() {
	pl.mu.Lock()
	pl.gen++
	pl.mu.Unlock()
}

// drain retires the pool: idle runtimes close now, busy ones when released,
// and any still busy after timeout are interrupted. Then the bundle's files
// are no longer held.
func (pl *pool) drain(timeout time.Duration) {
	defer pl.unhold()
	if c, ok := pl.program.(jsvm.ProgramCloser); ok {
		// The engine lets go of the bundle once its last runtime closes.
		c.Close()
	}
	pl.mu.Lock()
	pl.retired = true
	idle := pl.idle
	pl.idle = nil
	pl.mu.Unlock()
	for _, e := range idle {
		pl.closeEntry(e)
	}
	deadline := time.Now().Add(timeout)
	for {
		pl.mu.Lock()
		busy := len(pl.busy)
		pl.mu.Unlock()
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for e := range pl.busy {
		if e.stop != nil {
			e.stop(errDrained)
		}
	}
}

// setStop records how to interrupt e's current render.
func (pl *pool) setStop(e *entry, stop context.CancelCauseFunc) {
	pl.mu.Lock()
	e.stop = stop
	pl.mu.Unlock()
}
