package jsvm

import (
	"context"
	"errors"

	"github.com/gorender/gorender/jsvm/eventloop"
)

// errStreamIdle ends a stream's loop when its idle timer fires.
var errStreamIdle = errors.New("stream idle")

// startStream begins a streamed answer, the same for every engine: the
// sink's Start, then the stream's idle timer on the runtime's loop (made by
// ensureLoop only once the answer has started). touch restarts the idle
// timer; the engine calls it on each chunk.
func startStream(req *Request, ensureLoop func() *eventloop.Loop) (loop *eventloop.Loop, touch func(), err error) {
	if req.Sink == nil {
		return nil, nil, &RenderError{Kind: KindUnsupported, Text: StreamWithoutSinkText}
	}
	if err := req.Sink.Start(); err != nil {
		return nil, nil, &RenderError{Kind: KindCanceled, Text: CanceledText}
	}
	loop = ensureLoop()
	touch = func() {}
	if req.StreamIdle > 0 {
		idle := loop.SetTimer(req.StreamIdle, false, func() error { return errStreamIdle })
		loop.SetRef(idle, false)
		touch = func() { loop.RefreshTimer(idle) }
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
		return Result{}, &RenderError{Kind: KindCanceled, Text: StreamCanceledText}
	}
	if end.err == nil {
		if message, stack, ok := end.failed(); ok {
			return Result{}, &RenderError{Kind: KindJS, Text: JSErrorText(code, message, stack)}
		}
		return Result{Streamed: true}, nil
	}
	switch {
	case errors.Is(end.err, errStreamIdle):
		end.abort("the stream was idle too long")
		return Result{}, &RenderError{Kind: KindTimeout, Text: StreamIdleText(req.StreamIdle)}
	case errors.Is(end.err, eventloop.ErrIdle):
		end.abort("the stream stalled")
		return Result{}, &RenderError{Kind: KindJS, Text: StreamStalledText}
	case ctx.Err() != nil:
		// The request went away: stop the JavaScript stream's work (if the
		// engine was interrupted instead, this fails at once and the
		// runtime is retired).
		end.abort("the client went away")
	}
	return Result{}, end.renderError(end.err)
}
