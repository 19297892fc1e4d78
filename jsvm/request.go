package jsvm

import "time"

// Request is what one HTTP request shares across all its evaluations: the
// sharedExecutionContext and the runtimes of its bundle set, by bundle id,
// which runOnOtherBundle and update chunks call into; and, for streamed
// answers, where the bytes go. The runtimes of one request are all of one
// engine and are used on the goroutine of the request's render only.
type Request struct {
	Shared   *SharedContext
	Runtimes map[string]Runtime
	// Sink receives a stream result; without one a stream is an error.
	Sink Sink
	// StreamIdle ends a stream that produces nothing (and receives no
	// update) for this long; 0 means no limit.
	StreamIdle time.Duration
	// Updates feeds an incremental render's update chunks; nil for others.
	Updates *Updates
	// Deadline is when the render deadline passes (the worker's
	// RENDERER_RENDER_TIMEOUT from the render's start; zero: none). An
	// engine that can let a render whose caller left finish in the
	// background (node) does so only until then.
	Deadline time.Time
	// Started, when set, is called once the render starts, by runtimes
	// whose renders may wait inside the engine after Eval is called
	// (Queuer): the worker runs the render deadline from then.
	Started func()

	nested int // runOnOtherBundle calls in progress (NestRunOnOther)
}

// NewRequest returns a Request over the given runtimes with an empty shared context.
func NewRequest(runtimes map[string]Runtime) *Request {
	return &Request{Shared: NewSharedContext(), Runtimes: runtimes}
}

// NestRunOnOther counts a runOnOtherBundle call of the request starting
// (UnnestRunOnOther counts its end); false, counting nothing, when it would
// nest deeper than MaxRunOnOtherDepth. The request's runtimes call it on
// its render's goroutine.
func (r *Request) NestRunOnOther() bool {
	if r.nested >= MaxRunOnOtherDepth {
		return false
	}
	r.nested++
	return true
}

// UnnestRunOnOther counts the end of a call NestRunOnOther counted.
func (r *Request) UnnestRunOnOther() {
	if r.nested > 0 {
		r.nested--
	}
}

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
