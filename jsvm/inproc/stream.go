package inproc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/eventloop"
)

// streamState is the stream being answered, which the stream host functions
// (streamChunk, streamEnd, streamError) update.
type streamState struct {
	sink     jsvm.Sink
	touch    func() // restarts the idle timer
	ended    bool
	err      *Exception // what the JavaScript stream emitted as its error
	writeErr error      // the sink refused a chunk: the client is gone
}

// errStreamIdle ends a stream's loop when its idle timer fires.
var errStreamIdle = errors.New("stream idle")

// stream answers a stream result (PROTOCOL.md §5): the sink starts the
// answer, every chunk goes out as the stream produces it, and the event
// loop runs until the stream ends, fails, idles, or its client goes away.
func (r *Runtime[V]) stream(ctx context.Context, started time.Time, code string, value V, req *jsvm.Request) (jsvm.Result, error) {
	if req.Sink == nil {
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindUnsupported, Text: jsvm.StreamWithoutSinkText}
	}
	if err := req.Sink.Start(); err != nil {
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindCanceled, Text: jsvm.CanceledText}
	}
	// The loop is made only once the answer has started.
	loop := r.ensureLoop()
	s := &streamState{sink: req.Sink, touch: func() {}}
	if req.StreamIdle > 0 {
		idle := loop.SetTimer(req.StreamIdle, false, func() error { return errStreamIdle })
		loop.SetRef(idle, false)
		s.touch = func() { loop.RefreshTimer(idle) }
	}
	r.host.stream = s
	if err := r.callDrop(OpPump, value); err != nil {
		return jsvm.Result{}, r.renderError(ctx, started, code, err)
	}
	err := loop.Run(ctx, func() bool { return s.ended || s.err != nil || s.writeErr != nil || r.host.uncaught != nil })
	if err == nil {
		err = r.takeUncaught()
	}
	abort := func(reason string) {
		if !r.broken {
			_ = r.callDrop(OpAbortStream, reason)
		}
	}
	switch {
	case s.writeErr != nil:
		abort("the client went away")
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindCanceled, Text: jsvm.StreamCanceledText}
	case err == nil && s.err != nil:
		return jsvm.Result{}, jsvm.JSError(code, s.err.Message, r.utf16(s.err.Stack))
	case err == nil:
		return jsvm.Result{Streamed: true}, nil
	case errors.Is(err, errStreamIdle):
		abort("the stream was idle too long")
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: jsvm.StreamIdleText(req.StreamIdle)}
	case errors.Is(err, eventloop.ErrIdle):
		abort("the stream stalled")
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindJS, Text: jsvm.StreamStalledText}
	case ctx.Err() != nil:
		// The request went away: stop the JavaScript stream's work (if the
		// engine was interrupted instead, this fails at once and the
		// runtime is retired).
		abort("the client went away")
	}
	return jsvm.Result{}, r.renderError(ctx, started, code, err)
}

// streamChunk sends one chunk the stream produced to the sink.
func (h *Host) streamChunk(chunk []byte) {
	s := h.stream
	if s == nil || s.writeErr != nil || len(chunk) == 0 {
		return
	}
	s.touch()
	s.writeErr = s.sink.Write(chunk)
}

// attachUpdates makes the render evaluate req's update chunks as they
// arrive (PROTOCOL.md §8), and keeps its loop waiting for them until the
// queue closes. It returns the detach to call when the render ends.
func (r *Runtime[V]) attachUpdates(ctx context.Context, req *jsvm.Request) (detach func()) {
	if req.Updates == nil {
		return func() {}
	}
	loop := r.ensureLoop()
	release := loop.Hold()
	req.Updates.SetNotify(func() {
		loop.Post(func() error { return r.drainUpdates(ctx, req, release) })
	})
	return func() { req.Updates.SetNotify(nil) }
}

// drainUpdates evaluates the queued update chunks, each in the runtime of
// the bundle it names, with the request's shared context. A chunk that
// throws is reported and skipped; one that was stopped stops the render.
func (r *Runtime[V]) drainUpdates(ctx context.Context, req *jsvm.Request, release func()) error {
	updates, closed := req.Updates.Take()
	for _, up := range updates {
		if s := r.host.stream; s != nil {
			s.touch()
		}
		target, ok := runtimeOf[V](req.Runtimes[up.BundleID])
		if !ok {
			r.updateFailed(req, up, fmt.Sprintf("bundle %q is not in this request's bundle set", up.BundleID))
			continue
		}
		var (
			v   V
			err error
		)
		if target == r {
			v, err = r.run("updateChunk", up.Code)
		} else {
			stop := target.watch(ctx)
			v, err = target.evaluate(ctx, "updateChunk", up.Code, req)
			stop()
		}
		target.vm.Free(&v)
		if target != r {
			r.keep(target)
		}
		if err == nil {
			if req.Updates.Applied != nil {
				req.Updates.Applied(up)
			}
			continue
		}
		var stopped *Stopped
		if errors.As(err, &stopped) {
			return err
		}
		r.updateFailed(req, up, err.Error())
	}
	if closed {
		release()
	}
	return nil
}

// keep makes target, a bundle of the request that an update chunk ran in
// or a runOnOtherBundle call left work in (keepPending), part of this
// render until it ends, as on the node engine, where every bundle's work
// runs in one event loop: this runtime's loop drives target's (the timers
// and immediates it set run), and the render's end finishes it
// (closeCrossings: its timers cancelled, its per-render globals cleared).
// Without that, what the chunk set waited unrun and ran in the next render
// target served. Should target's loop not be linkable, its part ends now.
func (r *Runtime[V]) keep(target *Runtime[V]) {
	if r.link(target) != nil {
		target.finish()
	}
}

func (r *Runtime[V]) updateFailed(req *jsvm.Request, up jsvm.Update, message string) {
	if req.Updates.Failed != nil {
		req.Updates.Failed(up, message)
	}
}
