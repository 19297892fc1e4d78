package inproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/eventloop"
)

// Runtime is a jsvm.Runtime of an in-process engine: the render flow over
// the engine's VM.
type Runtime[V any] struct {
	vm     VM[V]
	host   Host
	broken bool
	// unit is what the engine counts columns in; prg the bundle loaded;
	// scripts the render's code by the name its frames show
	// (renderingRequest, updateChunk: the last one), indexed when a stack
	// first needs it.
	unit    Unit
	prg     *Program
	scripts map[string]script

	// feeds is the runtime of the request whose loop drives this one's
	// while a stream of this one crosses into it (nil otherwise); linked
	// are the runtimes this one's loop drives, read by the watch's
	// goroutine too (crossstream.go).
	feeds  *Runtime[V]
	linkMu sync.Mutex
	linked []linkedRuntime[V]
	// active counts this runtime's code waiting on a call in progress: its
	// render (Eval), and each runOnOtherBundle call into it; calling its
	// own runOnOtherBundle calls in progress, from whatever of its code
	// (a call into it, a timer callback, a stream event).
	active  int
	calling int
}

// NewRuntime makes a runtime of the named engine: install builds the
// engine's VM with the environment installed, binding the host functions to
// h (see Host).
// The engine counts its stack frames' columns in unit.
func NewRuntime[V any](engine string, unit Unit, opts jsvm.Options, install func(h *Host) (VM[V], error)) (*Runtime[V], error) {
	r := &Runtime[V]{unit: unit, scripts: map[string]script{}}
	r.host = Host{engine: engine, opts: opts, fs: &bundleFS{}, rt: r, alloc: NewAllocLimit(opts)}
	if opts.RealTimers() {
		r.host.loop = eventloop.New()
	}
	vm, err := install(&r.host)
	if err != nil {
		return nil, err
	}
	r.vm = vm
	return r, nil
}

// self is the runtime itself, also when an engine's runtime type embeds it:
// the runtimes of a request find each other through it.
func (r *Runtime[V]) self() *Runtime[V] { return r }

type inprocRuntime[V any] interface{ self() *Runtime[V] }

// runtimeOf returns the in-process runtime rt is, if it is one of this
// engine's.
func runtimeOf[V any](rt jsvm.Runtime) (*Runtime[V], bool) {
	if ir, ok := rt.(inprocRuntime[V]); ok {
		return ir.self(), true
	}
	return nil, false
}

// Broken reports that the runtime must not be used again.
func (r *Runtime[V]) Broken() bool { return r.broken }

// Close releases the runtime.
func (r *Runtime[V]) Close() {
	r.broken = true
	r.vm.Close()
}

// check notes what err means for the runtime: after anything but an
// ordinary JavaScript exception its state is unknown, and it is retired;
// after a panic, so are the others taking part in its render.
func (r *Runtime[V]) check(err error) error {
	if err == nil {
		return nil
	}
	var ex *Exception
	if !errors.As(err, &ex) || ex.Fatal {
		r.broken = true
	}
	var hp *HostPanic
	if errors.As(err, &hp) {
		r.retireRender(hp)
	}
	return err
}

// HostPanic is the error of a call into JavaScript during which a host
// function panicked, where the engine recovers it (quickjs); on goja the
// panic itself goes through the call (retireOnPanic).
type HostPanic struct{ Value any }

func (p *HostPanic) Error() string {
	return fmt.Sprintf("internal error in the JavaScript host: %v", p.Value)
}

// retireOnPanic, deferred around a call into the runtime's JavaScript,
// retires the runtime and the others of its render when a panic goes
// through the call, and lets the panic go on (recoverInto answers it).
func (r *Runtime[V]) retireOnPanic() {
	if p := recover(); p != nil {
		hp, ok := p.(*HostPanic)
		if !ok {
			hp = &HostPanic{Value: p}
		}
		r.retireRender(hp)
		panic(p)
	}
}

// retireRender retires this runtime after a panic in it, and every runtime
// taking part in its render now (the caller whose runOnOtherBundle or
// event loop runs it, the bundles it runs or whose streams it receives):
// a panic leaves their shared state (the streams between them, calls half
// done) unknown. A runtime whose host function runs another runtime's
// JavaScript fails that call with the panic (failOnPanic).
func (r *Runtime[V]) retireRender(hp *HostPanic) {
	r.broken = true
	r.host.panicked = hp
	req := r.host.req
	if req == nil {
		return
	}
	for _, rt := range req.Runtimes {
		if other, ok := runtimeOf[V](rt); ok && other.host.req == req {
			other.broken = true
			other.host.panicked = hp
		}
	}
}

// failOnPanic panics again, in a host function that ran another runtime's
// JavaScript, the panic that retired this runtime meanwhile: the call fails
// as if it had panicked itself, rather than handing the bundle an
// exception it could catch and go on with.
func (h *Host) failOnPanic() {
	if h.panicked != nil {
		panic(h.panicked)
	}
}

// call runs an op of the bridge; the caller frees the result.
func (r *Runtime[V]) call(op Op, args ...any) (V, error) {
	defer r.retireOnPanic()
	v, err := r.vm.Call(op, args...)
	return v, r.check(err)
}

// callDrop runs an op of the bridge and drops its result.
func (r *Runtime[V]) callDrop(op Op, args ...any) error {
	v, err := r.call(op, args...)
	r.vm.Free(&v)
	return err
}

// callString runs an op whose result is a string.
func (r *Runtime[V]) callString(op Op, args ...any) (string, error) {
	v, err := r.call(op, args...)
	if err != nil {
		return "", err
	}
	defer r.vm.Free(&v)
	return r.vm.String(v)
}

// run evaluates code as a global script named name.
func (r *Runtime[V]) run(name, code string) (V, error) {
	defer r.retireOnPanic()
	r.scripts[name] = script{code: code}
	v, err := r.vm.RunScript(name, code)
	return v, r.check(err)
}

// watch interrupts the runtime, and those its loop drives, when ctx ends
// (see eventloop.Watch) and returns a function that stops watching; it
// marks the runtime broken if the interrupt fired.
func (r *Runtime[V]) watch(ctx context.Context) (stop func()) {
	stopWatch := eventloop.Watch(ctx, r.host.loop, r.interrupt)
	return func() {
		if stopWatch() {
			r.broken = true
		}
	}
}

// recoverInto turns a panic from the engine or a host function into an
// error and retires the runtime: its state is unknown.
func (r *Runtime[V]) recoverInto(err *error) {
	if p := recover(); p != nil {
		r.broken = true
		pcs := make([]uintptr, 64) // the panicking stack, for the error trackers
		pcs = pcs[:runtime.Callers(2, pcs)]
		*err = &jsvm.RenderError{Kind: jsvm.KindJS, Text: fmt.Sprintf("internal error in the JavaScript runtime: %v", p), Panic: pcs}
	}
}

// Load evaluates the bundle in this runtime's global environment; with
// SupportModules as the main CommonJS module, __filename its path and fs
// confined to its directory. Work the bundle scheduled while loading runs if
// it is due now (setImmediate, 0 ms timers); later timers are cancelled, as
// every render's are: nothing of the load runs inside a render.
func (r *Runtime[V]) Load(ctx context.Context, p jsvm.Program) (err error) {
	prg, err := programOf(p, r.host.engine)
	if err != nil {
		return err
	}
	if r.broken {
		return fmt.Errorf("load bundle %s: runtime is retired", prg.Name())
	}
	defer r.recoverInto(&err)
	stop := r.watch(ctx)
	defer stop()
	r.host.ctx = ctx
	defer func() { r.host.ctx = nil }()
	if r.host.loop != nil {
		r.host.loop.Tick()
	}
	r.prg = prg
	value, err := r.vm.RunProgram(prg)
	err = r.check(err)
	if err == nil && prg.Module {
		err = r.runAsModule(prg, value)
	}
	r.vm.Free(&value)
	if err == nil {
		err = r.takeUncaught()
	}
	if err == nil && r.host.loop != nil {
		loop := r.host.loop
		err = loop.Run(ctx, func() bool { return r.host.uncaught != nil || !loop.DueNow() })
		if errors.Is(err, eventloop.ErrIdle) {
			err = nil
		}
		if err == nil {
			err = r.takeUncaught()
		}
		r.resetLoop()
	}
	if err != nil {
		return r.loadError(ctx, prg, err)
	}
	r.vm.Idle()
	return nil
}

// loadError is the error of a failed load, for a log line.
func (r *Runtime[V]) loadError(ctx context.Context, prg *Program, err error) error {
	var stopped *Stopped
	if errors.As(err, &stopped) && stopped.Limit != "" {
		r.broken = true
		return fmt.Errorf("load bundle %s: %s", prg.Name(), stopped.Limit)
	}
	if stopped != nil || ctx.Err() != nil {
		r.broken = true
		return fmt.Errorf("load bundle %s: interrupted: %w", prg.Name(), ctx.Err())
	}
	var ex *Exception
	if errors.As(err, &ex) {
		return fmt.Errorf("load bundle %s: %s\n%s", prg.Name(), ex.Message, r.utf16(ex.Stack))
	}
	return fmt.Errorf("load bundle %s: %w", prg.Name(), err)
}

// runAsModule calls the compiled CommonJS wrapper as the main module, with
// __filename the bundle's path and fs confined to its directory.
func (r *Runtime[V]) runAsModule(prg *Program, wrapper V) error {
	filename, dirname := prg.Name()+".js", "."
	if prg.Path != "" {
		if abs, err := filepath.Abs(prg.Path); err == nil {
			filename, dirname = abs, filepath.Dir(abs)
		}
		r.host.fs = newBundleFS(prg.Path)
	}
	return r.callDrop(OpRunModule, wrapper, filename, dirname)
}

// resetLoop cancels every timer and immediate, here and in JavaScript.
func (r *Runtime[V]) resetLoop() {
	if r.host.loop != nil {
		r.host.loop.Reset()
	}
	if !r.broken {
		_ = r.callDrop(OpReset)
	}
}

// ensureLoop returns the runtime's event loop, making one when timers are
// stubbed: streams and incremental updates need a loop for posted work and
// promise jobs even where JS timers do nothing.
func (r *Runtime[V]) ensureLoop() *eventloop.Loop {
	return r.host.ensureLoop()
}

// Eval evaluates a rendering request and turns its completion value into the
// answer (see jsvm.Runtime).
func (r *Runtime[V]) Eval(ctx context.Context, code string, req *jsvm.Request) (res jsvm.Result, err error) {
	if r.broken {
		return jsvm.Result{}, errors.New("evaluate: runtime is retired")
	}
	defer r.recoverInto(&err)
	r.active++
	defer func() { r.active-- }()
	started := time.Now()
	stop := r.watch(ctx)
	defer stop()
	defer r.finish()
	defer r.attachUpdates(ctx, req)()

	value, err := r.evaluate(ctx, "renderingRequest", code, req)
	if err == nil {
		err = r.takeUncaught()
	}
	defer r.vm.Free(&value)
	if err != nil {
		return jsvm.Result{}, r.renderError(ctx, started, code, err)
	}
	if err := r.callDrop(OpAfterSync); err != nil {
		return jsvm.Result{}, r.renderError(ctx, started, code, err)
	}
	res, err = r.result(ctx, started, code, value, req, true)
	if err == nil {
		if over := r.vm.OverLimit(); over != nil {
			// An allocation failed at the limit and the bundle caught the
			// error, keeping what it had: the render exceeded the limit all
			// the same.
			r.broken = true
			return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: over.Limit}
		}
	}
	return res, err
}

// evaluate runs code with the per-render globals set, returning its
// completion value (the caller frees it). The globals stay set until
// finish, so that the render's asynchronous part sees them too.
func (r *Runtime[V]) evaluate(ctx context.Context, name, code string, req *jsvm.Request) (V, error) {
	var none V
	if req.Shared != r.host.sharedFor {
		// The runtime serves another request: the shared entries it held
		// for the last one are gone.
		if r.host.sharedFor != nil {
			if err := r.callDrop(OpResetShared); err != nil {
				return none, err
			}
		}
		r.host.sharedFor = req.Shared
		r.host.hostFuncs = nil
	}
	r.host.ctx, r.host.req = ctx, req
	r.host.uncaught = nil
	if err := r.begin(code); err != nil {
		return none, err
	}
	return r.run(name, code)
}

// begin sets the per-render globals for code (renderingRequest, a fresh
// console history and async context: env.js begin).
func (r *Runtime[V]) begin(code string) error {
	if r.host.loop != nil {
		r.host.loop.Tick()
	}
	return r.callDrop(OpBegin, code)
}

// finish ends a render: what crossed into it closed, per-render globals
// cleared, pending timers and immediates cancelled, so nothing of it runs
// in the next render.
func (r *Runtime[V]) finish() {
	r.closeCrossings()
	if r.host.loop != nil {
		r.host.loop.Reset()
	}
	r.host.uncaught = nil
	r.host.stream = nil
	if !r.broken {
		_ = r.callDrop(OpReset)
		_ = r.callDrop(OpEnd)
	}
	r.host.ctx, r.host.req = nil, nil
	clear(r.scripts)
	// A runtime left above its limits would fail the next render.
	if r.vm.OverLimit() != nil {
		r.broken = true
	}
	r.vm.Idle()
}

// takeUncaught returns (and forgets) the first exception of a callback that
// had no caller (a microtask, a nextTick), which fails the render.
func (r *Runtime[V]) takeUncaught() error {
	if r.host.uncaught == nil {
		return nil
	}
	u := r.host.uncaught
	r.host.uncaught = nil
	return u
}

// kind classifies a value with env.js's kind.
func (r *Runtime[V]) kind(value V) (string, error) {
	return r.callString(OpKind, value)
}

// errorParts returns the message and stack of a thrown value.
func (r *Runtime[V]) errorParts(thrown V) (message, stack string, err error) {
	text, err := r.callString(OpErrorParts, thrown)
	if err != nil {
		return "", "", err
	}
	var p [2]string
	if json.Unmarshal([]byte(text), &p) != nil {
		return text, "", nil
	}
	return p[0], p[1], nil
}

// result turns a completion value into the answer (PROTOCOL.md §5): a
// string verbatim, a stream streamed, a promise or thenable settled and its
// value answered the same way (awaitable is false then: a fulfilled value is
// never awaited again), anything else JSON-stringified.
func (r *Runtime[V]) result(ctx context.Context, started time.Time, code string, value V, req *jsvm.Request, awaitable bool) (jsvm.Result, error) {
	kind, err := r.kind(value)
	if err != nil {
		return jsvm.Result{}, r.renderError(ctx, started, code, err)
	}
	switch kind {
	case "string":
		s, err := r.vm.String(value)
		if err != nil {
			return jsvm.Result{}, r.renderError(ctx, started, code, err)
		}
		return jsvm.Result{Body: s}, nil
	case "nil":
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindNilResult, Text: jsvm.NilResultText(code)}
	case "stream":
		return r.stream(ctx, started, code, value, req)
	case "promise", "thenable":
		if !awaitable {
			break
		}
		settled, rejected, err := r.settle(ctx, value)
		if err != nil {
			return jsvm.Result{}, r.renderError(ctx, started, code, err)
		}
		if rejected != nil {
			return jsvm.Result{}, jsvm.JSError(code, rejected.Message, r.utf16(rejected.Stack))
		}
		defer r.vm.Free(&settled)
		return r.result(ctx, started, code, settled, req, false)
	}
	return r.stringified(ctx, started, code, value)
}

func (r *Runtime[V]) stringified(ctx context.Context, started time.Time, code string, value V) (jsvm.Result, error) {
	s, err := r.call(OpStringify, value)
	if err != nil {
		return jsvm.Result{}, r.renderError(ctx, started, code, err)
	}
	defer r.vm.Free(&s)
	if r.vm.IsUndefined(s) {
		return jsvm.Result{}, &jsvm.RenderError{Kind: jsvm.KindNilResult, Text: jsvm.NilResultText(code)}
	}
	body, err := r.vm.String(s)
	if err != nil {
		return jsvm.Result{}, r.renderError(ctx, started, code, err)
	}
	return jsvm.Result{Body: body}, nil
}

// settle adopts value into a promise and waits until it settles: it returns
// the fulfilled value (the caller frees it), or the parts of the rejection.
func (r *Runtime[V]) settle(ctx context.Context, value V) (fulfilled V, rejected *Exception, err error) {
	p, err := r.settled(ctx, value)
	if err != nil {
		return fulfilled, nil, err
	}
	defer r.vm.Free(&p)
	result := r.vm.PromiseResult(p)
	if r.vm.PromiseState(p) != Rejected {
		return result, nil, nil
	}
	defer r.vm.Free(&result)
	message, stack, err := r.errorParts(result)
	if err != nil {
		return fulfilled, nil, err
	}
	return fulfilled, &Exception{Message: message, Stack: stack}, nil
}

// settled adopts value into a promise and returns it once settled (the
// caller frees it). With real timers the event loop runs until it settles,
// ctx ends or nothing is left that could settle it; with stub timers only
// the job queue has run, so a pending promise is an error.
func (r *Runtime[V]) settled(ctx context.Context, value V) (V, error) {
	var none V
	p, err := r.call(OpToPromise, value)
	if err != nil {
		return none, err
	}
	fail := func(err error) (V, error) {
		r.vm.Free(&p)
		return none, err
	}
	if r.vm.PromiseState(p) == NotAPromise {
		return fail(errors.New("the rendering request's thenable could not be adopted into a promise"))
	}
	if err := r.takeUncaught(); err != nil {
		return fail(err)
	}
	if r.vm.PromiseState(p) != Pending {
		return p, nil
	}
	if r.host.loop == nil {
		return fail(errors.New(jsvm.NeverSettledStubTimers))
	}
	err = r.host.loop.Run(ctx, func() bool { return r.host.uncaught != nil || r.vm.PromiseState(p) != Pending })
	if err == nil {
		err = r.takeUncaught()
	}
	switch {
	case errors.Is(err, eventloop.ErrIdle):
		return fail(errors.New(jsvm.NeverSettledIdle))
	case err != nil:
		return fail(err)
	}
	return p, nil
}

// renderError turns an evaluation failure into the answer's error.
func (r *Runtime[V]) renderError(ctx context.Context, started time.Time, code string, err error) error {
	var stopped *Stopped
	if errors.As(err, &stopped) {
		r.broken = true
		if stopped.Limit != "" {
			return &jsvm.RenderError{Kind: jsvm.KindTimeout, Text: stopped.Limit}
		}
		return jsvm.InterruptedError(ctx, started)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The event loop stopped on ctx's end before running more
		// JavaScript: the runtime is intact (watch retires it if the
		// engine was interrupted).
		return jsvm.InterruptedError(ctx, started)
	}
	var renderErr *jsvm.RenderError
	if errors.As(err, &renderErr) {
		return renderErr
	}
	var ex *Exception
	if errors.As(err, &ex) {
		return jsvm.JSError(code, ex.Message, r.utf16(ex.Stack))
	}
	return jsvm.JSError(code, err.Error(), "")
}

// Sleeping reports whether the runtime waits in its event loop for a timer,
// a post or its context, with no JavaScript running: a context that ends
// now cancels the render without interrupting the engine. Any goroutine may
// call it (tests use it to end a request at that moment).
func (r *Runtime[V]) Sleeping() bool {
	loop := r.host.loop
	return loop != nil && loop.Sleeping()
}

// utf16 is stack with its frames' columns in UTF-16 code units, as V8 and
// source maps count them, where the engine counts otherwise: the frames in
// this runtime's bundle, the render's code, and the bundles of the
// request's other runtimes (runOnOtherBundle). Everything after the
// engine (jsvm/sourcemap, the answers) sees UTF-16 columns.
func (r *Runtime[V]) utf16(stack string) string {
	return utf16Frames(stack, func(file string) *Columns {
		if s, ok := r.scripts[file]; ok {
			if !s.indexed {
				s.columns, s.indexed = NewColumns(s.code, r.unit), true
				r.scripts[file] = s
			}
			return s.columns
		}
		return r.bundleColumns(file)
	})
}

// script is code the render ran, and the index of its columns once a stack
// needed it.
type script struct {
	code    string
	indexed bool
	columns *Columns
}

// bundleColumns is the index of the columns of the bundle file names.
func (r *Runtime[V]) bundleColumns(file string) *Columns {
	name, ok := strings.CutSuffix(file, ".js")
	if !ok {
		return nil
	}
	if r.prg != nil && r.prg.name == name {
		return r.prg.columns
	}
	if r.host.req != nil {
		if other, ok := runtimeOf[V](r.host.req.Runtimes[name]); ok && other.prg != nil && other.prg.name == name {
			return other.prg.columns
		}
	}
	return nil
}
