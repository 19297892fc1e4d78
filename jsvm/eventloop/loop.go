// Package eventloop drives the timers, immediates and cross-goroutine work
// of one in-process JavaScript runtime, Node's way (timers due in order,
// then immediates, one turn at a time), without knowing JavaScript: its
// callbacks are Go functions the engine builds around JS functions.
package eventloop

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Loop drives one runtime's timers, immediates and work posted from other
// goroutines. An error returned by a callback (an exception thrown from a
// timer callback) stops the loop and fails the render.
//
// Everything but Post and Hold runs on the runtime's goroutine: the loop runs
// only while the host calls Run, so JS never runs concurrently with the
// caller. Promise jobs are not the loop's business: the engine drains them
// after each top-level call, i.e. after every callback the loop makes.
type Loop struct {
	timers     timerHeap
	byID       map[int64]*loopTimer
	immediates []*loopImmediate
	nextID     int64
	seq        uint64
	// now is the loop's time, as libuv's: set when a render starts (Tick)
	// and when a turn starts; timers are due relative to it, so that the
	// timers one synchronous run sets keep the order of their delays, as in
	// Node, however long the run takes. Zero: the clock's time.
	now time.Time

	mu     sync.Mutex
	posted []func() error
	holds  int           // external sources that may still post (streams)
	gen    uint64        // bumped by reset: stale holds release nothing
	wake   chan struct{} // capacity 1: something was posted or a hold ended

	// waiting is true while Run sleeps with no JavaScript running, and
	// after Run returned because its context ended: a render's Watch then
	// leaves the cancellation to Run instead of interrupting the engine, so
	// the runtime stays usable. A wake-up for work clears it before any
	// JavaScript runs; a context that ends meanwhile is seen at the loop's
	// top, before the work.
	waiting atomic.Bool

	// links are the loops of other runtimes this one drives while it runs
	// (Link); parent is the loop that drives this one, woken by its posts.
	links  []link
	parent atomic.Pointer[Loop]
}

type link struct {
	loop  *Loop
	check func() error
}

type loopTimer struct {
	id     int64
	due    time.Time
	seq    uint64
	delay  time.Duration
	repeat bool // setInterval
	ref    bool
	fn     func() error
	index  int
}

type loopImmediate struct {
	id        int64
	fn        func() error
	ref       bool
	cancelled bool
}

// Tick sets the loop's time to now: a render calls it as it starts, so that
// the timers of its synchronous part are due relative to its start.
func (l *Loop) Tick() { l.now = time.Now() }

// clock is the loop's time, or the clock's when it has none.
func (l *Loop) clock() time.Time {
	if l.now.IsZero() {
		return time.Now()
	}
	return l.now
}

// New returns an empty loop.
func New() *Loop {
	return &Loop{byID: make(map[int64]*loopTimer), wake: make(chan struct{}, 1)}
}

// Node clamps delays below 1 ms, and above 2^31-1 ms, to 1 ms.
const maxTimerDelay = time.Duration(1<<31-1) * time.Millisecond

func clampDelay(d time.Duration) time.Duration {
	if d < time.Millisecond || d > maxTimerDelay {
		return time.Millisecond
	}
	return d
}

// SetTimer schedules fn after d (clamped as Node clamps it), every d when
// repeat; it returns the timer's id.
func (l *Loop) SetTimer(d time.Duration, repeat bool, fn func() error) int64 {
	d = clampDelay(d)
	l.nextID++
	l.seq++
	t := &loopTimer{id: l.nextID, due: l.clock().Add(d), seq: l.seq, delay: d, repeat: repeat, ref: true, fn: fn}
	heap.Push(&l.timers, t)
	l.byID[t.id] = t
	return t.id
}

// ClearTimer cancels a timer or an immediate; unknown ids are ignored.
func (l *Loop) ClearTimer(id int64) {
	if t, ok := l.byID[id]; ok {
		delete(l.byID, id)
		if t.index >= 0 {
			heap.Remove(&l.timers, t.index)
		}
		return
	}
	for _, im := range l.immediates {
		if im.id == id {
			im.cancelled = true
		}
	}
}

// RefreshTimer restarts a timer's delay from now (Timeout.refresh).
func (l *Loop) RefreshTimer(id int64) {
	t, ok := l.byID[id]
	if !ok || t.index < 0 {
		return
	}
	l.seq++
	t.due, t.seq = l.clock().Add(t.delay), l.seq
	heap.Fix(&l.timers, t.index)
}

// SetRef marks whether a timer or immediate keeps the loop alive (Node's
// ref/unref): a render whose promise waits only on unref'd timers is stuck.
func (l *Loop) SetRef(id int64, ref bool) {
	if t, ok := l.byID[id]; ok {
		t.ref = ref
		return
	}
	for _, im := range l.immediates {
		if im.id == id {
			im.ref = ref
		}
	}
}

// HasRef reports whether a timer or immediate is pending and ref'd.
func (l *Loop) HasRef(id int64) bool {
	if t, ok := l.byID[id]; ok {
		return t.ref
	}
	for _, im := range l.immediates {
		if im.id == id && !im.cancelled {
			return im.ref
		}
	}
	return false
}

// SetImmediate runs fn on the loop's next turn and returns its id.
func (l *Loop) SetImmediate(fn func() error) int64 {
	l.nextID++
	l.immediates = append(l.immediates, &loopImmediate{id: l.nextID, fn: fn, ref: true})
	return l.nextID
}

// Post runs fn on the loop from any goroutine. Posts made while no render
// runs wait for the next Run, unless Reset drops them first.
func (l *Loop) Post(fn func() error) {
	l.mu.Lock()
	l.posted = append(l.posted, fn)
	l.mu.Unlock()
	l.notify()
}

// Hold keeps Run waiting for posts even when no timer is pending (a stream
// feeding the render from another goroutine). Call release once when the
// source is done; releases after a Reset are ignored.
func (l *Loop) Hold() (release func()) {
	l.mu.Lock()
	l.holds++
	gen := l.gen
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if l.gen == gen {
				l.holds--
			}
			l.mu.Unlock()
			l.notify()
		})
	}
}

func (l *Loop) notify() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
	if p := l.parent.Load(); p != nil {
		p.notify()
	}
}

// Link makes l drive child as part of its own turns until unlink: child's
// posted work, timers and immediates run on l's goroutine whenever l runs
// (after l's own in each turn), keep l's Run from going idle, and wake it.
// check runs after each of child's turns; its error stops l's Run as a
// callback's would (the child runtime's uncaught exception). The runtimes
// of one request run on one goroutine, so a runtime that streams into
// another (runOnOtherBundle) keeps producing while the other's loop runs.
// A loop has one parent at a time, and a loop is never linked under one it
// drives: Link reports false then and links nothing.
func (l *Loop) Link(child *Loop, check func() error) (unlink func(), ok bool) {
	for p := l; p != nil; p = p.parent.Load() {
		if p == child {
			return nil, false
		}
	}
	if !child.parent.CompareAndSwap(nil, l) {
		return nil, false
	}
	l.links = append(l.links, link{loop: child, check: check})
	return func() {
		for i, k := range l.links {
			if k.loop == child {
				l.links = append(l.links[:i], l.links[i+1:]...)
				break
			}
		}
		child.parent.CompareAndSwap(l, nil)
	}, true
}

// Reset cancels every timer, immediate, post and hold: nothing of one render
// runs in the next.
func (l *Loop) Reset() {
	l.timers = l.timers[:0]
	clear(l.byID)
	l.immediates = nil
	l.now = time.Time{}
	l.mu.Lock()
	l.posted = nil
	l.holds = 0
	l.gen++
	l.mu.Unlock()
	select {
	case <-l.wake:
	default:
	}
}

// pending reports whether anything ref'd could still run.
func (l *Loop) pending() bool {
	for _, im := range l.immediates {
		if !im.cancelled && im.ref {
			return true
		}
	}
	for _, t := range l.timers {
		if t.ref {
			return true
		}
	}
	for _, k := range l.links {
		if k.loop.pending() {
			return true
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.posted) > 0 || l.holds > 0
}

// Scheduled reports whether anything could still run on l: a timer, ref'd
// or not, an immediate, posted work, a hold, or a loop it drives. A
// runtime whose call returned with something scheduled takes part in the
// render until it ends.
func (l *Loop) Scheduled() bool {
	if len(l.timers) > 0 || len(l.links) > 0 {
		return true
	}
	for _, im := range l.immediates {
		if !im.cancelled {
			return true
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.posted) > 0 || l.holds > 0
}

// nextDue is when the first timer of l or of a loop it drives is due.
func (l *Loop) nextDue() (due time.Time, ok bool) {
	if len(l.timers) > 0 {
		due, ok = l.timers[0].due, true
	}
	for _, k := range l.links {
		if d, has := k.loop.nextDue(); has && (!ok || d.Before(due)) {
			due, ok = d, true
		}
	}
	return due, ok
}

// DueNow reports whether something is runnable without waiting.
func (l *Loop) DueNow() bool {
	for _, im := range l.immediates {
		if !im.cancelled {
			return true
		}
	}
	if len(l.timers) > 0 && !l.timers[0].due.After(time.Now()) {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.posted) > 0
}

// ErrIdle is Run's answer when done() is false and nothing pending can
// ever make it true.
var ErrIdle = errors.New("event loop idle")

// Run runs callbacks until done() is true, ctx ends (its error is returned),
// a callback fails (its error is returned) or nothing is pending
// (ErrIdle). Each turn runs posted work, then the timers due at its start
// in due order, then the immediates queued before it, like Node's phases;
// done is checked after every callback.
func (l *Loop) Run(ctx context.Context, done func() bool) error {
	var sleeper *time.Timer
	defer func() {
		if sleeper != nil {
			sleeper.Stop()
		}
	}()
	for {
		if done() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		ran, err := l.turn(ctx, done)
		if err != nil || (ran && done()) {
			return err
		}
		if ran {
			continue
		}
		if !l.pending() {
			return ErrIdle
		}
		// Sleep until the next timer, a post, a released hold or ctx's end.
		var timerC <-chan time.Time
		if due, ok := l.nextDue(); ok {
			wait := time.Until(due)
			if wait <= 0 {
				continue
			}
			if sleeper == nil {
				sleeper = time.NewTimer(wait)
			} else {
				sleeper.Reset(wait)
			}
			timerC = sleeper.C
		}
		l.waiting.Store(true)
		select {
		case <-timerC:
		case <-l.wake:
		case <-ctx.Done():
			// waiting stays set: the watch reacting to the same end must
			// not interrupt the engine, and this render's loop runs no more
			// JavaScript (the next render's watch clears it first).
			return ctx.Err()
		}
		l.waiting.Store(false)
		if sleeper != nil {
			sleeper.Stop()
		}
	}
}

// turn runs one round of posted work, due timers and immediates; it reports
// whether it ran anything.
func (l *Loop) turn(ctx context.Context, done func() bool) (ran bool, err error) {
	l.now = time.Now()
	l.mu.Lock()
	posted := l.posted
	l.posted = nil
	l.mu.Unlock()
	for i, fn := range posted {
		ran = true
		if err := fn(); err != nil {
			l.requeue(posted[i+1:])
			return ran, err
		}
		if done() || ctx.Err() != nil {
			l.requeue(posted[i+1:])
			return ran, nil
		}
	}

	now := time.Now()
	l.now = now
	for len(l.timers) > 0 && !l.timers[0].due.After(now) {
		t := l.timers[0]
		if t.repeat {
			l.seq++
			t.due, t.seq = now.Add(t.delay), l.seq
			heap.Fix(&l.timers, 0)
		} else {
			heap.Pop(&l.timers)
			delete(l.byID, t.id)
		}
		ran = true
		if err := t.fn(); err != nil {
			return ran, err
		}
		if done() || ctx.Err() != nil {
			return ran, nil
		}
	}

	queued := l.immediates
	l.immediates = nil
	for i, im := range queued {
		if im.cancelled {
			continue
		}
		im.cancelled = true // ran: clearImmediate of it is a no-op now
		ran = true
		if err := im.fn(); err != nil {
			l.immediates = append(queued[i+1:len(queued):len(queued)], l.immediates...)
			return ran, err
		}
		if done() || ctx.Err() != nil {
			l.immediates = append(queued[i+1:len(queued):len(queued)], l.immediates...)
			return ran, nil
		}
	}

	for _, k := range append([]link(nil), l.links...) {
		childRan, err := k.loop.turn(ctx, done)
		ran = ran || childRan
		if err == nil && k.check != nil {
			err = k.check()
		}
		if err != nil || done() || ctx.Err() != nil {
			return ran, err
		}
	}
	return ran, nil
}

func (l *Loop) requeue(fns []func() error) {
	if len(fns) == 0 {
		return
	}
	l.mu.Lock()
	l.posted = append(append([]func() error(nil), fns...), l.posted...)
	l.mu.Unlock()
}

// timerHeap orders timers by due time, then by scheduling order.
type timerHeap []*loopTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].due.Equal(h[j].due) {
		return h[i].seq < h[j].seq
	}
	return h[i].due.Before(h[j].due)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*loopTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}

// Sleeping reports whether Run sleeps with no JavaScript running (or
// returned because its context ended). Any goroutine may call it.
func (l *Loop) Sleeping() bool { return l.waiting.Load() }
