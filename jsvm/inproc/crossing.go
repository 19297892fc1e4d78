package inproc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gorender/gorender/jsvm"
)

// Values cross the runtimes of a request (runOnOtherBundle, a
// sharedExecutionContext entry another runtime set) as JSON descriptions
// (bridge.js exportValue and importValue): primitives as they are, objects
// through JSON, promises settled first and handed over as promises, and
// streams as a stream the caller's bridge makes, fed with the other
// stream's chunks (crossstream.go).

// hostRuntime is what the host functions need of the runtime they serve,
// and of the other runtimes of its request, whatever the engine's value
// type.
type hostRuntime interface {
	// runOnOther evaluates code in the runtime of bundle id of the request
	// and describes its completion value; here is true when that runtime is
	// this one (the caller evaluates the code itself).
	runOnOther(id, code string) (description string, here bool, err *HostError)
	// exportShared describes this runtime's value of a shared entry.
	exportShared(key any) (string, error)
	// fire runs a due timer or immediate (last: it will not run again).
	fire(id int64, last bool) error
	// utf16 is a stack with its frames' columns in UTF-16 code units.
	utf16(stack string) string
	Broken() bool
}

// runOnOther implements hostRuntime for runOnOtherBundle.
func (r *Runtime[V]) runOnOther(id, code string) (string, bool, *HostError) {
	req := r.host.req
	if req == nil {
		return "", false, &HostError{Name: "TypeError", Message: "runOnOtherBundle: called outside a render"}
	}
	target, ok := req.Runtimes[id]
	if !ok {
		return "", false, &HostError{Name: "TypeError", Message: fmt.Sprintf("runOnOtherBundle: bundle %q is not in this request's bundle set", id)}
	}
	other, ok := runtimeOf[V](target)
	if !ok || other.broken {
		return "", false, &HostError{Name: "TypeError", Message: fmt.Sprintf("runOnOtherBundle: the runtime of bundle %q is not usable", id)}
	}
	if !req.NestRunOnOther() {
		return "", false, &HostError{Name: "RangeError", Message: jsvm.RunOnOtherTooDeepText}
	}
	if other == r {
		return "", true, nil // bridge.js runs it, then calls runOnOtherDone
	}
	defer req.UnnestRunOnOther()
	r.calling++
	defer func() { r.calling-- }()
	text, herr := r.evalOnOther(other, code, req)
	return text, false, herr
}

// evalOnOther evaluates code in other and describes its completion value
// for this runtime (bridge.js importResult). other's part of the render
// ends with the call, unless the call left work scheduled in it or a
// stream of other crossed into a runtime of the request: then it ends with
// the render (keepPending, closeCrossings).
func (r *Runtime[V]) evalOnOther(other *Runtime[V], code string, req *jsvm.Request) (string, *HostError) {
	ctx := r.host.ctx
	fail := func(format string, args ...any) (string, *HostError) {
		return "", &HostError{Name: "Error", Message: fmt.Sprintf(format, args...)}
	}
	interrupted := func() (string, *HostError) {
		other.broken = true
		return fail("runOnOtherBundle: interrupted: %v", ctx.Err())
	}
	// waiting: other's code waits on a call in progress (it called into
	// this runtime, a recursion through bundles, or its render or a call
	// into it awaits).
	waiting := other.active > 0 || other.calling > 0
	other.active++
	defer func() { other.active-- }()
	var value V
	var err error
	if other.host.req == req {
		// other is in this request already. Waiting, it goes on in its
		// render as it left it: begun again, it would lose its console
		// history. Otherwise an earlier call left it part of the render
		// (keepPending, a stream of it crossed: crossstream.go): this call
		// begins anew with its own request code and console history, as the
		// first did and as on the node engine (executor/20-bundles.js inBundle), while
		// what the earlier call left goes on until the render ends.
		if !waiting {
			err = other.begin(code)
		}
		if err == nil {
			value, err = other.run("runOnOtherBundle", code)
		}
	} else {
		stop := other.watch(ctx)
		defer stop()
		defer func() {
			if other.feeds == nil {
				r.keepPending(other)
			}
		}()
		value, err = other.evaluate(ctx, "runOnOtherBundle", code, req)
	}
	if err == nil {
		err = other.takeUncaught()
	}
	defer other.vm.Free(&value)
	if err != nil {
		var stopped *Stopped
		if errors.As(err, &stopped) {
			return interrupted()
		}
		return "", &HostError{Name: "Error", Message: jsvm.RunOnOtherMessage(err.Error())}
	}
	kind, err := other.kind(value)
	if err != nil {
		return fail("runOnOtherBundle: %v", err)
	}
	// describe is the description of a value that is not a promise.
	describe := func(v V) (string, *HostError) {
		kind, err := other.kind(v)
		if err == nil && kind == "stream" {
			var d string
			if d, err = r.takeStream(other, v); err == nil {
				return d, nil
			}
			if ctx.Err() != nil {
				return interrupted()
			}
			return "", &HostError{Name: "TypeError", Message: "runOnOtherBundle: " + err.Error()}
		}
		if err == nil {
			var d string
			if d, err = other.callString(OpExportValue, v); err == nil {
				return d, nil
			}
		}
		return fail("runOnOtherBundle: %v", err)
	}
	if kind != "promise" && kind != "thenable" {
		d, herr := describe(value)
		if herr != nil {
			return "", herr
		}
		return `{"m":"value","v":` + d + `}`, nil
	}
	settled, rejected, err := other.settle(ctx, value)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted()
		}
		return fail("runOnOtherBundle: %v", err)
	}
	if rejected != nil {
		b, _ := json.Marshal(map[string]string{"m": "rejected", "e": jsvm.RunOnOtherMessage(rejected.Message)})
		return string(b), nil
	}
	defer other.vm.Free(&settled)
	d, herr := describe(settled)
	if herr != nil {
		if ctx.Err() != nil {
			return "", herr
		}
		// The promise was fulfilled with what cannot cross: it rejects, as
		// on the node engine, where it settles after the call returned.
		b, _ := json.Marshal(map[string]string{"m": "rejected", "e": herr.Message})
		return string(b), nil
	}
	return `{"m":"fulfilled","v":` + d + `}`, nil
}

// keepPending ends other's part of the render, its runOnOtherBundle call
// returned, unless the call left work scheduled in other (timers,
// immediates, streams it reads from a third bundle): other then stays part
// of this render until it ends, as every bundle is on the node engine,
// where they share one event loop and the render's end cancels every
// timer, and as a Node vm context's timers keep running after a call into
// it returned. A server bundle's RSC call may hand back a promise or
// stream and finish its work with setTimeout or setImmediate: that work
// must run while the caller waits. Without it, the work was cancelled
// with the call, and what the caller waited for never came.
func (r *Runtime[V]) keepPending(other *Runtime[V]) {
	if !other.broken && other.host.loop != nil && other.host.loop.Scheduled() {
		r.keep(other)
		return
	}
	other.finish()
}

// exportShared implements hostRuntime for sharedExecutionContext.get.
func (r *Runtime[V]) exportShared(key any) (string, error) {
	return r.callString(OpExportShared, key)
}

// sharedGet answers sharedExecutionContext.get: true when this runtime
// holds the value (bridge.js has it), else a description of the value, or
// undefined.
func (h *Host) sharedGet(key any) Reply {
	if h.req == nil {
		return Undefined()
	}
	e, ok := h.req.Shared.Get(key)
	if !ok {
		return Undefined()
	}
	if e.Owner == nil {
		return String(h.hostValue(e.Value))
	}
	owner, ok := e.Owner.(hostRuntime)
	if !ok || owner.Broken() {
		return Undefined()
	}
	if owner == h.rt {
		return Bool(true)
	}
	text, err := owner.exportShared(key)
	h.failOnPanic()
	if err != nil {
		return Undefined()
	}
	return String(text)
}

// hostValue describes a value the host put into a shared context
// (SharedContext.SetHost).
func (h *Host) hostValue(v any) string {
	var d any
	switch v := v.(type) {
	case jsvm.HostSet:
		d = map[string]any{"s": []string(v)}
	case jsvm.HostFunc:
		h.hostFuncs = append(h.hostFuncs, v)
		d = map[string]any{"f": len(h.hostFuncs) - 1}
	case nil:
		d = map[string]any{"p": nil}
	default:
		d = map[string]any{"p": v}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return `{"u":1}`
	}
	return string(b)
}
