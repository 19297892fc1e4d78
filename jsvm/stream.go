package jsvm

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Sink receives a streamed result (PROTOCOL.md §5) as the JavaScript stream
// produces it. Its methods are called on the render's goroutine.
type Sink interface {
	// Start is called once the stream exists, before its first chunk: the
	// answer's status and headers go out now. An error aborts the render.
	Start() error
	// Write sends one chunk and flushes it; an error means the client is
	// gone, and the JavaScript stream is aborted.
	Write(p []byte) error
}

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

	mu     sync.Mutex
	queue  []Update
	closed bool
	notify func() // set by the engine while a render consumes the updates
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
	u.queue = append(u.queue, up)
	if u.notify != nil {
		u.notify()
	}
	u.mu.Unlock()
	return nil
}

// Close marks the request's end; final, when non-nil (the request's
// onRequestClosedUpdateChunk), is evaluated after every queued update.
func (u *Updates) Close(final *Update) {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return
	}
	if final != nil {
		u.queue = append(u.queue, *final)
	}
	u.closed = true
	if u.notify != nil {
		u.notify()
	}
	u.mu.Unlock()
}

// take returns the queued updates and whether the queue is closed.
func (u *Updates) take() ([]Update, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	q := u.queue
	u.queue = nil
	return q, u.closed
}

// setNotify attaches (fn) or detaches (nil) the render consuming the
// updates. fn runs under the queue's lock, so once setNotify(nil) returns
// no notification of this queue reaches the engine any more.
func (u *Updates) setNotify(fn func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.notify = fn
	if fn != nil && (len(u.queue) > 0 || u.closed) {
		fn()
	}
}

// errStreamIdle ends a stream's loop when its idle timer fires.
var errStreamIdle = errors.New("stream idle")

// startStream begins a streamed answer, the same for every engine: the
// sink's Start, then the stream's idle timer on the runtime's loop (made by
// ensureLoop only once the answer has started). touch restarts the idle
// timer; the engine calls it on each chunk.
func startStream(req *Request, ensureLoop func() *eventLoop) (loop *eventLoop, touch func(), err error) {
	if req.Sink == nil {
		return nil, nil, &RenderError{Kind: KindUnsupported, Text: streamWithoutSinkText}
	}
	if err := req.Sink.Start(); err != nil {
		return nil, nil, &RenderError{Kind: KindCanceled, Text: "Render canceled: the request went away."}
	}
	loop = ensureLoop()
	touch = func() {}
	if req.StreamIdle > 0 {
		idle := loop.setTimer(req.StreamIdle, false, func() error { return errStreamIdle })
		loop.setRef(idle, false)
		touch = func() { loop.refreshTimer(idle) }
	}
	return loop, touch, nil
}

// streamEnd is how a stream's event loop ended, as an engine saw it.
type streamEnd struct {
	// err is what the loop returned (or the render's uncaught exception).
	err error
	// writeErr is the sink's refusal of a chunk: the client is gone.
	writeErr error
	// failed reports the error the JavaScript stream itself emitted.
	failed func() (message, stack string, ok bool)
	// abort stops the JavaScript stream with reason.
	abort func(reason string)
	// renderError is the engine's answer for any other error.
	renderError func(error) error
}

// streamOutcome answers a streamed render once its loop returned, the same
// for every engine.
func streamOutcome(ctx context.Context, code string, req *Request, end streamEnd) (Result, error) {
	if end.writeErr != nil {
		end.abort("the client went away")
		return Result{}, &RenderError{Kind: KindCanceled, Text: "Stream canceled: the client went away."}
	}
	if end.err == nil {
		if message, stack, ok := end.failed(); ok {
			return Result{}, &RenderError{Kind: KindJS, Text: jsErrorText(code, message, stack)}
		}
		return Result{Streamed: true}, nil
	}
	switch {
	case errors.Is(end.err, errStreamIdle):
		end.abort("the stream was idle too long")
		return Result{}, &RenderError{Kind: KindTimeout, Text: fmt.Sprintf("Stream idle: nothing was produced for %s.", req.StreamIdle)}
	case errors.Is(end.err, errLoopIdle):
		end.abort("the stream stalled")
		return Result{}, &RenderError{Kind: KindJS, Text: streamStalledText}
	case ctx.Err() != nil:
		// The request went away: stop the JavaScript stream's work (if the
		// engine was interrupted instead, this fails at once and the
		// runtime is retired).
		end.abort("the client went away")
	}
	return Result{}, end.renderError(end.err)
}
