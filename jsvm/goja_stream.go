package jsvm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dop251/goja"

	"github.com/gorender/gorender/jsvm/eventloop"
)

// ensureLoop returns the runtime's event loop, making one when timers are
// stubbed: streams and incremental updates need a loop for posted work and
// promise jobs even where JS timers do nothing.
func (r *gojaRuntime) ensureLoop() *eventloop.Loop {
	if r.loop == nil {
		r.loop = eventloop.New()
	}
	return r.loop
}

// attachUpdates makes the render evaluate req's update chunks as they
// arrive, and keeps its loop waiting for them until the queue closes. It
// returns the detach to call when the render ends.
func (r *gojaRuntime) attachUpdates(ctx context.Context, req *Request) (detach func()) {
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
func (r *gojaRuntime) drainUpdates(ctx context.Context, req *Request, release func()) error {
	updates, closed := req.Updates.Take()
	for _, up := range updates {
		if r.streamTouch != nil {
			r.streamTouch()
		}
		target, ok := req.Runtimes[up.BundleID].(*gojaRuntime)
		if !ok {
			r.updateFailed(req, up, fmt.Sprintf("bundle %q is not in this request's bundle set", up.BundleID))
			continue
		}
		var err error
		if target == r {
			_, err = r.vm.RunScript("updateChunk", up.Code)
		} else {
			stop := target.watch(ctx)
			_, err = target.evaluate(ctx, "updateChunk", up.Code, req)
			stop()
		}
		if err != nil {
			if errors.As(err, new(*goja.InterruptedError)) {
				return err
			}
			message, _ := target.exceptionParts(err)
			r.updateFailed(req, up, message)
		}
	}
	if closed {
		release()
	}
	return nil
}

func (r *gojaRuntime) updateFailed(req *Request, up Update, message string) {
	if req.Updates.Failed != nil {
		req.Updates.Failed(up, message)
	}
}

// stream answers a stream result: the sink starts the answer, every chunk
// goes out as the stream produces it, and the event loop runs until the
// stream ends, fails, idles, or its client goes away.
func (r *gojaRuntime) stream(ctx context.Context, started time.Time, code string, value goja.Value, req *Request) (Result, error) {
	loop, touch, err := startStream(req, r.ensureLoop)
	if err != nil {
		return Result{}, err
	}
	r.streamTouch = touch
	var (
		ended     bool
		streamErr goja.Value
		writeErr  error
	)
	onChunk := func(c goja.FunctionCall) goja.Value {
		var chunk []byte
		if ab, ok := c.Argument(0).Export().(goja.ArrayBuffer); ok {
			chunk = ab.Bytes()
		} else {
			chunk = []byte(c.Argument(0).String())
		}
		if len(chunk) == 0 || writeErr != nil {
			return goja.Undefined()
		}
		r.streamTouch()
		writeErr = req.Sink.Write(chunk)
		return goja.Undefined()
	}
	onEnd := func(goja.FunctionCall) goja.Value {
		ended = true
		return goja.Undefined()
	}
	onError := func(c goja.FunctionCall) goja.Value {
		streamErr = c.Argument(0)
		return goja.Undefined()
	}
	cancelValue, err := r.hooks.pump(goja.Undefined(), value, r.vm.ToValue(onChunk), r.vm.ToValue(onEnd), r.vm.ToValue(onError))
	if err != nil {
		return Result{}, r.renderError(ctx, started, code, err)
	}
	err = loop.Run(ctx, func() bool { return ended || streamErr != nil || writeErr != nil || r.uncaught != nil })
	if err == nil {
		err = r.takeUncaught()
	}
	return streamOutcome(ctx, code, req, streamEnd{
		err:      err,
		writeErr: writeErr,
		failed: func() (string, string, bool) {
			if streamErr == nil {
				return "", "", false
			}
			message, stack := r.errorParts(streamErr)
			return message, stack, true
		},
		abort: func(reason string) {
			if cancel, ok := goja.AssertFunction(cancelValue); ok && !r.broken {
				_, _ = cancel(goja.Undefined(), r.vm.NewGoError(errors.New(reason)))
			}
		},
		renderError: func(err error) error { return r.renderError(ctx, started, code, err) },
	})
}
