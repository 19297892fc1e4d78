package jsvm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"modernc.org/quickjs"
)

// qjsStream is the state of the stream being answered, which the host
// layer's stream callbacks (pump in quickjs_host.js) update.
type qjsStream struct {
	sink     Sink
	ended    bool
	err      *qjsJSError
	writeErr error
}

// streamChunk sends one chunk the stream produced (a string or an
// ArrayBuffer) to the sink.
func (r *qjsRuntime) streamChunk(a qjsArgs) {
	s := r.pumping
	if s == nil || s.writeErr != nil {
		return
	}
	var chunk []byte
	if v := a.value(0); v != nil {
		if b, ok := r.x.arrayBuffer(v); ok {
			chunk = b
		} else {
			chunk = []byte(a.str(0))
		}
	}
	if len(chunk) == 0 {
		return
	}
	if r.streamTouch != nil {
		r.streamTouch()
	}
	s.writeErr = s.sink.Write(chunk)
}

// attachUpdates makes the render evaluate req's update chunks as they
// arrive, and keeps its loop waiting for them until the queue closes. It
// returns the detach to call when the render ends.
func (r *qjsRuntime) attachUpdates(ctx context.Context, req *Request) (detach func()) {
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
// the bundle it names, with the request's shared context.
func (r *qjsRuntime) drainUpdates(ctx context.Context, req *Request, release func()) error {
	updates, closed := req.Updates.Take()
	for _, up := range updates {
		if r.streamTouch != nil {
			r.streamTouch()
		}
		target, ok := req.Runtimes[up.BundleID].(*qjsRuntime)
		if !ok {
			r.updateFailed(req, up, fmt.Sprintf("bundle %q is not in this request's bundle set", up.BundleID))
			continue
		}
		var (
			v   quickjs.Value
			err error
		)
		if target == r {
			v, err = r.evalScript("updateChunk", up.Code)
		} else {
			stop := target.watch(ctx)
			v, err = target.evaluate(ctx, "updateChunk", up.Code, req)
			stop()
		}
		if err == nil {
			qjsFree(&v)
			continue
		}
		var stopped *qjsStopped
		if errors.As(err, &stopped) {
			return err
		}
		var je *qjsJSError
		message := err.Error()
		if errors.As(err, &je) {
			message = je.message
		}
		r.updateFailed(req, up, message)
	}
	if closed {
		release()
	}
	return nil
}

func (r *qjsRuntime) updateFailed(req *Request, up Update, message string) {
	if req.Updates.Failed != nil {
		req.Updates.Failed(up, message)
	}
}

// stream answers a stream result: the sink starts the answer, every chunk
// goes out as the stream produces it, and the event loop runs until the
// stream ends, fails, idles, or its client goes away.
func (r *qjsRuntime) stream(ctx context.Context, started time.Time, code string, value quickjs.Value, req *Request) (Result, error) {
	loop, touch, err := startStream(req, r.ensureLoop)
	if err != nil {
		return Result{}, err
	}
	s := &qjsStream{sink: req.Sink}
	r.pumping = s
	r.streamTouch = touch
	if err := r.call(qjsPump, value); err != nil {
		return Result{}, r.renderError(ctx, started, code, err)
	}
	err = loop.Run(ctx, func() bool { return s.ended || s.err != nil || s.writeErr != nil || r.uncaught != nil })
	if err == nil {
		err = r.takeUncaught()
	}
	return streamOutcome(ctx, code, req, streamEnd{
		err:      err,
		writeErr: s.writeErr,
		failed: func() (string, string, bool) {
			if s.err == nil {
				return "", "", false
			}
			return s.err.message, s.err.stack, true
		},
		abort: func(reason string) {
			if !r.broken {
				_ = r.call(qjsAbortStream, reason)
			}
		},
		renderError: func(err error) error { return r.renderError(ctx, started, code, err) },
	})
}
