package jsvm

import (
	"errors"
	"sync"
)

// Update is one update chunk of an incremental render (PROTOCOL.md §8):
// code evaluated in the environment of bundle BundleID.
type Update struct {
	BundleID string
	Code     string
}

// Updates carries an incremental render's update chunks from the goroutine
// reading the request body to the render. Push and Close may be called from
// any goroutine; the engine drains the queue on the render's goroutine.
type Updates struct {
	// Failed, when set before the render starts, is told of each update
	// chunk that threw: bad chunks are reported and skipped.
	Failed func(up Update, message string)
	// Applied, when set before the render starts, is told of each update
	// chunk evaluated without throwing. Each chunk is told of once, by
	// Failed or Applied, in the order the chunks were queued; chunks
	// still queued when the render ends are told of by neither.
	Applied func(up Update)

	mu      sync.Mutex
	queue   []Update
	closed  bool
	notify  func() // set by the engine while a render consumes the updates
	arrival func() // set by the worker: the stream's idle watchdog
}

// NewUpdates returns an empty, open queue.
func NewUpdates() *Updates { return &Updates{} }

// errUpdatesClosed is a Push after Close.
var errUpdatesClosed = errors.New("incremental render updates are closed")

// Push queues an update chunk.
func (u *Updates) Push(up Update) error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return errUpdatesClosed
	}
	taken := len(u.queue) == 0
	u.queue = append(u.queue, up)
	u.notifyLocked(taken)
	u.mu.Unlock()
	return nil
}

// notifyLocked tells the engine that updates arrived or the queue closed,
// and the watchdog too when the render had taken every earlier update;
// u.mu is held.
func (u *Updates) notifyLocked(taken bool) {
	if u.arrival != nil && taken {
		u.arrival()
	}
	if u.notify != nil {
		u.notify()
	}
}

// Close marks the request's end; final, when non-nil (the request's
// onRequestClosedUpdateChunk), is evaluated after every queued update.
func (u *Updates) Close(final *Update) {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return
	}
	taken := len(u.queue) == 0
	if final != nil {
		u.queue = append(u.queue, *final)
	}
	u.closed = true
	u.notifyLocked(taken)
	u.mu.Unlock()
}

// Take returns the queued updates and whether the queue is closed. The
// engine calls it on the render's goroutine.
func (u *Updates) Take() ([]Update, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	q := u.queue
	u.queue = nil
	return q, u.closed
}

// TakeOne returns the next queued update (ok: there was one) and, when
// there was none, whether the queue is closed. The node engine takes
// updates one at a time: it takes the next once the executor applied the
// last, so updates its JavaScript cannot take stay queued here.
func (u *Updates) TakeOne() (up Update, ok, closed bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.queue) == 0 {
		return Update{}, false, u.closed
	}
	up = u.queue[0]
	u.queue[0] = Update{}
	u.queue = u.queue[1:]
	return up, true, false
}

// OnArrival attaches (fn) or detaches (nil) a watcher of the queue: fn is
// called, from the pushing goroutine and under the queue's lock (it must
// not block), whenever an update is queued or the queue closes while the
// render has taken every earlier update. The worker counts those arrivals
// as a stream's activity; updates piling up untaken are not: JavaScript
// that never yields takes none, and its stream's idle watchdog must fire.
func (u *Updates) OnArrival(fn func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.arrival = fn
}

// SetNotify attaches (fn) or detaches (nil) the render consuming the
// updates: fn is called, from any goroutine, whenever updates are queued or
// the queue closes (at once if that already happened). fn runs under the
// queue's lock, so it must not block, and once SetNotify(nil) returns no
// notification of this queue reaches the engine any more.
func (u *Updates) SetNotify(fn func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.notify = fn
	if fn != nil && (len(u.queue) > 0 || u.closed) {
		fn()
	}
}
