package jsvm

// The QuickJS engine (modernc.org/quickjs, QuickJS translated to Go: no cgo).
//
// Compile once, run many: a bundle is compiled to QuickJS bytecode once per
// process and every runtime loads that bytecode (reading it is ~10× faster
// than parsing the source). The environment (quickjs_host.js, env.js, the
// Node environment) is compiled the same way, once per process.
//
// Each runtime is one QuickJS runtime and context with its own memory limit
// (QuickJS allocates outside the Go heap, so GOMEMLIMIT does not see it):
// a render that passes Options.MemoryLimit is stopped like a timeout and its
// runtime replaced. Interrupts (deadline, cancellation, memory) go through
// the engine's interrupt handler.
//
// Async context. goja carries the async context across promise reactions
// itself; QuickJS has no such hook. The host layer wraps
// Promise.prototype.then (quickjs_host.js), and await, which QuickJS runs
// without calling then, is lowered to then-based code by esbuild when a
// program is compiled, when it contains await: so AsyncLocalStorage and
// per-render console history work as on goja. QuickJS itself parses async
// functions, async generators and for await natively (qjsEngine.nativeAsync
// turns the lowering off, for tests).

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"

	"github.com/gorender/gorender/jsvm/eventloop"
	"github.com/gorender/gorender/jsvm/intl"
	"github.com/gorender/gorender/jsvm/jsenv"
	"github.com/gorender/gorender/jsvm/transform"
)

//go:embed quickjs_host.js
var qjsHostSource string

// qjsHeadroom is how far past the limit the engine's own allocator still
// succeeds, so that stopping a render at its limit (in the interrupt handler)
// has room to build its error; past it allocations fail.
func qjsHeadroom(limit int64) int64 { return max(limit/8, 16<<20) }

type qjsEngine struct {
	opts Options
	// memLimit is the per-runtime limit in bytes; 0 means none.
	memLimit int64
	// nativeAsync compiles programs without lowering await (tests: QuickJS
	// parses and runs async functions and generators natively, but then
	// carries no async context across await).
	nativeAsync bool
}

// NewQuickJSEngine returns the quickjs engine; use engines.New("quickjs",
// opts). (It moves to package jsvm/quickjsengine with the engine.)
func NewQuickJSEngine(opts Options) (Engine, error) {
	if _, err := qjsLayout(); err != nil {
		return nil, err
	}
	if _, err := qjsAssets(); err != nil {
		return nil, fmt.Errorf("compile the render environment: %w", err)
	}
	if opts.SupportModules {
		if _, err := qjsNodeAsset(); err != nil {
			return nil, fmt.Errorf("compile the Node environment: %w", err)
		}
	}
	limit := opts.MemoryLimit
	switch {
	case limit == 0:
		limit = DefaultMemoryLimit
	case limit < 0:
		limit = 0
	}
	return &qjsEngine{opts: opts, memLimit: limit}, nil
}

func (e *qjsEngine) Name() string { return "quickjs" }

type qjsProgram struct {
	name     string
	path     string
	bytecode []byte
	module   bool
	// lowered: await was lowered to then by esbuild (see the file comment).
	lowered bool
}

func (p *qjsProgram) Name() string { return p.name }

func (e *qjsEngine) Compile(name, path, source string) (Program, error) {
	p := &qjsProgram{name: name, path: path, module: e.opts.SupportModules}
	src := source
	if p.module {
		src = transform.WrapModule(src)
	}
	if !e.nativeAsync {
		src, p.lowered = transform.LowerAwait(name+".js", src)
	}
	bc, err := qjsCompile(src, name+".js")
	if err != nil {
		return nil, fmt.Errorf("compile bundle %s: %w", name, err)
	}
	p.bytecode = bc
	return p, nil
}

// qjsCompile compiles global code to bytecode in a scratch VM.
func qjsCompile(source, filename string) ([]byte, error) {
	return qjsCompileStrip(source, filename, 0)
}

// qjsCompileStrip is qjsCompile leaving out what strip names
// (lib.MJS_STRIP_SOURCE: the functions' source text, which only
// Function.prototype.toString shows).
func qjsCompileStrip(source, filename string, strip int32) ([]byte, error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, err
	}
	defer vm.Close()
	x, err := newQJSRaw(vm)
	if err != nil {
		return nil, err
	}
	if strip != 0 {
		lib.XJS_SetStripInfo(x.tls, x.rt, strip)
	}
	bc, jsErr, err := x.compile(source, filename)
	if err != nil {
		return nil, err
	}
	if jsErr != nil {
		msg := jsErr.Name + ": " + jsErr.Message
		if jsErr.Name == "" {
			msg = jsErr.Error()
		}
		if jsErr.LineNumber > 0 {
			msg += fmt.Sprintf(" (at %s:%d:%d)", filename, jsErr.LineNumber, jsErr.ColumnNumber)
		}
		return nil, errors.New(msg)
	}
	return bc, nil
}

// The environment, compiled once per process.
type qjsAssetBytecode struct{ host, env []byte }

var (
	qjsAssets = sync.OnceValues(func() (qjsAssetBytecode, error) {
		var a qjsAssetBytecode
		var err error
		// The environment's own source text is left out: reading the
		// bytecode is part of every new runtime's cost.
		if a.host, err = qjsCompileStrip(qjsHostSource, "gorender-quickjs-host.js", lib.MJS_STRIP_SOURCE); err != nil {
			return a, err
		}
		if a.env, err = qjsCompileStrip(jsenv.Env, "gorender-env.js", lib.MJS_STRIP_SOURCE); err != nil {
			return a, err
		}
		return a, nil
	})
	// The Node environment is not lowered: its own awaits (streams
	// internals) keep whatever context they run in, and it tells async
	// functions apart by their prototype, which lowering would change.
	qjsNodeAsset = sync.OnceValues(func() ([]byte, error) {
		return qjsCompileStrip(jsenv.NodeEnv, "gorender-node-env.js", lib.MJS_STRIP_SOURCE)
	})
)

// qjsJSError is a JavaScript exception, as text: the host never keeps the
// thrown value itself.
type qjsJSError struct{ message, stack string }

func (e *qjsJSError) Error() string { return e.message }

// qjsStopped is a render the interrupt handler stopped: its context ended,
// or the runtime passed its memory limit.
type qjsStopped struct{ memory bool }

func (e *qjsStopped) Error() string {
	if e.memory {
		return "the JavaScript runtime passed its memory limit"
	}
	return ErrInterrupted.Error()
}

// qjsHostError is a failed host call, thrown in JavaScript as an error of
// the named constructor with extra properties.
type qjsHostError struct {
	Name    string         `json:"name"`
	Message string         `json:"message"`
	Props   map[string]any `json:"props,omitempty"`
}

type qjsRuntime struct {
	engine *qjsEngine
	vm     *quickjs.VM
	x      qjsRaw
	// js is the host layer's one function Go calls into (quickjs_host.js);
	// fail is its sentinel for a failed call. They are the only JavaScript
	// values Go holds.
	js, fail quickjs.Value
	broken   bool
	closed   bool
	// collators serve Intl.Collator and localeCompare.
	collators intl.Collators

	ctlMu      sync.Mutex
	ctl        uintptr // the interrupt handler's control block (C memory)
	restoreCtl func()

	// loop drives real timers; nil when timers are stubbed.
	loop *eventloop.Loop
	fs   *bundleFS
	// depth counts calls into JavaScript in progress: promise jobs run when
	// the outermost returns, as in goja.
	depth    int
	draining bool
	// thrown is the exception of the js call in progress; uncaught the
	// first exception of a callback with no caller (a microtask, a
	// nextTick): it fails the render.
	thrown   *qjsJSError
	uncaught *qjsJSError
	// hostErr is the failure of the host call in progress.
	hostErr  *qjsHostError
	utf8Rest []byte

	// The request being served: the context and request of the last
	// evaluation, the shared context whose entries this runtime's
	// JavaScript holds, the host functions handed out for it.
	ctx       context.Context
	req       *Request
	sharedFor *SharedContext
	hostFuncs []HostFunc

	// The stream being answered, and what restarts its idle timer.
	pumping     *qjsStream
	streamTouch func()

	// memUsed is the engine's allocated bytes at the end of the last load
	// or render, for MemoryUsage. The engine's own count lives in C memory
	// that every allocation writes, so it is read only on the goroutine
	// using the runtime and published here for others.
	memUsed atomic.Int64
}

// The ops of quickjs_host.js's js function (its ops array, in order).
const (
	qjsBegin = iota
	qjsAfterSync
	qjsEnd
	qjsFire
	qjsKind
	qjsToPromise
	qjsStringify
	qjsErrorParts
	qjsPump
	qjsAbortStream
	qjsExportValue
	qjsImportResult
	qjsExportShared
	qjsResetShared
	qjsReset
	qjsRunModule
	qjsInstallEnv
	qjsInstallNode
)

func (e *qjsEngine) NewRuntime() (rt Runtime, err error) {
	assets, err := qjsAssets()
	if err != nil {
		return nil, err
	}
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("new QuickJS runtime: %w", err)
	}
	x, err := newQJSRaw(vm)
	if err != nil {
		vm.Close()
		return nil, err
	}
	r := &qjsRuntime{engine: e, vm: vm, x: x, fs: &bundleFS{}}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("install the render environment: internal error: %v", p)
		}
		if err != nil {
			r.Close()
		}
	}()
	if e.memLimit > 0 {
		vm.SetMemoryLimit(uintptr(e.memLimit + qjsHeadroom(e.memLimit)))
	}
	r.ctl, r.restoreCtl = x.installControl(e.memLimit)
	if r.ctl == 0 {
		return nil, errors.New("new QuickJS runtime: out of memory")
	}
	if e.opts.RealTimers() {
		r.loop = eventloop.New()
	}
	if err := vm.RegisterFunc("__gorender_host", r.dispatch, false); err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	setup, err := r.evalBytecode(assets.host)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	names, _ := json.Marshal(qjsHostOps)
	r.js, err = setup.CallValue(quickjs.UndefinedValue, string(names))
	qjsFree(&setup)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	r.fail, err = r.js.CallValue(quickjs.UndefinedValue, -1)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	envFn, err := r.evalBytecode(assets.env)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	options, _ := json.Marshal(map[string]bool{
		"stubTimers":      !e.opts.RealTimers(),
		"replayAsyncLogs": e.opts.ReplayAsyncLogs,
	})
	err = r.call(qjsInstallEnv, envFn, string(options))
	qjsFree(&envFn)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %s", r.describe(err))
	}
	if e.opts.SupportModules {
		bc, err := qjsNodeAsset()
		if err != nil {
			return nil, err
		}
		factory, err := r.evalBytecode(bc)
		if err != nil {
			return nil, fmt.Errorf("install the Node environment: %w", err)
		}
		err = r.call(qjsInstallNode, factory)
		qjsFree(&factory)
		if err != nil {
			return nil, fmt.Errorf("install the Node environment: %s", r.describe(err))
		}
	}
	return r, nil
}

// evalBytecode runs a compiled program at top level.
func (r *qjsRuntime) evalBytecode(bc []byte) (quickjs.Value, error) {
	r.depth++
	v, ok, err := r.x.evalBytecode(bc)
	r.depth--
	return r.completed(v, ok, err)
}

// evalScript evaluates code as a global script named name, with await
// lowered (see the file comment).
func (r *qjsRuntime) evalScript(name, code string) (quickjs.Value, error) {
	code, _ = transform.LowerAwait(name, code)
	return r.evalCode(name, code)
}

// evalCode evaluates code as it is, as a global script named name.
func (r *qjsRuntime) evalCode(name, code string) (quickjs.Value, error) {
	r.depth++
	v, ok, err := r.x.eval(code, name, 0)
	r.depth--
	return r.completed(v, ok, err)
}

// completed finishes a call into JavaScript: promise jobs run if it was the
// outermost, and an exception becomes an error.
func (r *qjsRuntime) completed(v quickjs.Value, ok bool, err error) (quickjs.Value, error) {
	if err == nil && !ok {
		if stopped := r.stoppedError(); stopped != nil {
			qjsFree(&v)
			return quickjs.Value{}, stopped
		}
		err = r.exceptionError(v)
		qjsFree(&v)
		v = quickjs.Value{}
	}
	if r.depth == 0 {
		if derr := r.drain(); derr != nil {
			if ok {
				qjsFree(&v)
			}
			return quickjs.Value{}, derr
		}
	}
	if err != nil {
		return quickjs.Value{}, err
	}
	return v, nil
}

// exceptionError turns a thrown value into text.
func (r *qjsRuntime) exceptionError(thrown quickjs.Value) error {
	parts, err := r.jsString(qjsErrorParts, thrown)
	if err != nil {
		return err
	}
	var p [2]string
	if json.Unmarshal([]byte(parts), &p) != nil {
		return &qjsJSError{message: parts}
	}
	return &qjsJSError{message: p[0], stack: p[1]}
}

// call runs an op of the host layer and drops its result.
func (r *qjsRuntime) call(op int, args ...any) error {
	v, err := r.callValue(op, args...)
	if err == nil {
		qjsFree(&v)
	}
	return err
}

// jsString runs an op whose result is a string.
func (r *qjsRuntime) jsString(op int, args ...any) (string, error) {
	v, err := r.callValue(op, args...)
	if err != nil {
		return "", err
	}
	defer qjsFree(&v)
	return qjsGoString(v)
}

// callValue runs an op of the host layer; the caller frees the result.
func (r *qjsRuntime) callValue(op int, args ...any) (quickjs.Value, error) {
	if r.closed {
		return quickjs.Value{}, errors.New("the JavaScript runtime is closed")
	}
	prevThrown := r.thrown
	r.thrown = nil
	r.depth++
	v, err := r.js.CallValue(quickjs.UndefinedValue, append([]any{op}, args...)...)
	r.depth--
	thrown := r.thrown
	r.thrown = prevThrown
	if err != nil {
		err = r.engineError(err)
	}
	if r.depth == 0 && err == nil {
		err = r.drain()
	}
	switch {
	case err != nil:
		if thrown == nil {
			qjsFree(&v)
		}
		return quickjs.Value{}, err
	case thrown != nil:
		qjsFree(&v)
		return quickjs.Value{}, thrown
	}
	return v, nil
}

// drain runs the pending promise jobs.
func (r *qjsRuntime) drain() error {
	r.draining = true
	_, err := r.vm.ExecutePendingJobs()
	r.draining = false
	if err != nil {
		return r.engineError(err)
	}
	return r.stoppedError()
}

// engineError classifies an error of the engine itself (not a JavaScript
// exception the host layer caught): the runtime's state is unknown after
// one, so it is retired.
func (r *qjsRuntime) engineError(err error) error {
	r.broken = true
	if stopped := r.stoppedError(); stopped != nil {
		return stopped
	}
	if strings.Contains(err.Error(), "out of memory") {
		return &qjsStopped{memory: true}
	}
	var qe *quickjs.Error
	if errors.As(err, &qe) {
		return &qjsJSError{message: qe.Error(), stack: qe.Stack}
	}
	return err
}

// stoppedError is the error of a render the interrupt handler stopped.
func (r *qjsRuntime) stoppedError() error {
	r.ctlMu.Lock()
	defer r.ctlMu.Unlock()
	if r.ctl == 0 {
		return nil
	}
	c := (*qjsControl)(cptr(r.ctl))
	switch {
	case atomic.LoadInt32(&c.exceeded) != 0:
		r.broken = true
		return &qjsStopped{memory: true}
	case atomic.LoadInt32(&c.stop) != 0:
		r.broken = true
		return &qjsStopped{}
	}
	return nil
}

// describe is the text of an error for a log or a load failure.
func (r *qjsRuntime) describe(err error) string {
	var je *qjsJSError
	if errors.As(err, &je) && je.stack != "" {
		return je.message + "\n" + je.stack
	}
	return err.Error()
}

// interrupt stops the JavaScript running now and any later in this runtime.
// It may be called from any goroutine.
func (r *qjsRuntime) interrupt() {
	r.ctlMu.Lock()
	if r.ctl != 0 {
		atomic.StoreInt32(&(*qjsControl)(cptr(r.ctl)).stop, 1)
	}
	r.ctlMu.Unlock()
	r.vm.Interrupt()
}

// watch interrupts the runtime when ctx ends (see watchRender) and returns a
// function that stops watching; it marks the runtime broken if the interrupt
// fired.
func (r *qjsRuntime) watch(ctx context.Context) (stop func()) {
	stopWatch := eventloop.Watch(ctx, r.loop, r.interrupt)
	return func() {
		if stopWatch() {
			r.broken = true
		}
	}
}

func (r *qjsRuntime) Broken() bool { return r.broken }

func (r *qjsRuntime) Close() {
	if r.closed {
		return
	}
	r.broken = true
	r.closed = true
	defer func() { _ = recover() }() // a VM a panic went through can only leak
	qjsFree(&r.js)
	qjsFree(&r.fail)
	r.ctlMu.Lock()
	restore := r.restoreCtl
	r.ctl, r.restoreCtl = 0, nil
	r.ctlMu.Unlock()
	if restore != nil {
		restore()
	}
	_ = r.vm.Close()
	r.memUsed.Store(0)
}

// sampleMemory records the engine's allocated bytes for MemoryUsage.
func (r *qjsRuntime) sampleMemory() {
	if !r.closed {
		r.memUsed.Store(r.x.mallocSize())
	}
}

// recoverInto turns a panic from the engine or a host function into an
// error and retires the runtime: its state is unknown.
func (r *qjsRuntime) recoverInto(err *error) {
	if p := recover(); p != nil {
		r.broken = true
		*err = &RenderError{Kind: KindJS, Text: fmt.Sprintf("internal error in the JavaScript runtime: %v", p)}
	}
}

func (r *qjsRuntime) Load(ctx context.Context, p Program) (err error) {
	qp, ok := p.(*qjsProgram)
	if !ok {
		return fmt.Errorf("load bundle: program %T is not a quickjs program", p)
	}
	if r.broken {
		return fmt.Errorf("load bundle %s: runtime is retired", qp.name)
	}
	defer r.recoverInto(&err)
	stop := r.watch(ctx)
	defer stop()
	r.ctx = ctx
	value, err := r.evalBytecode(qp.bytecode)
	if err == nil && qp.module {
		err = r.runAsModule(qp, value)
	}
	if err == nil {
		qjsFree(&value)
	}
	if err == nil && r.uncaught != nil {
		u := r.uncaught
		r.uncaught = nil
		err = u
	}
	if err == nil && r.loop != nil {
		// As on goja: work the bundle scheduled while loading runs if it is
		// due now; later timers are cancelled.
		err = r.loop.Run(ctx, func() bool { return r.uncaught != nil || !r.loop.DueNow() })
		if errors.Is(err, eventloop.ErrIdle) {
			err = nil
		}
		if err == nil && r.uncaught != nil {
			err = r.uncaught
			r.uncaught = nil
		}
		r.resetLoop()
	}
	if err != nil {
		var stopped *qjsStopped
		switch {
		case qjsOutOfMemory(err) || errors.As(err, &stopped) && stopped.memory:
			r.broken = true
			return fmt.Errorf("load bundle %s: %s", qp.name, qjsMemoryText(r.engine.memLimit))
		case errors.As(err, &stopped) || ctx.Err() != nil:
			r.broken = true
			return fmt.Errorf("load bundle %s: interrupted: %w", qp.name, ctx.Err())
		}
		return fmt.Errorf("load bundle %s: %s", qp.name, r.describeLoad(err))
	}
	r.sampleMemory()
	return nil
}

func (r *qjsRuntime) describeLoad(err error) string {
	var je *qjsJSError
	if errors.As(err, &je) {
		return je.message + "\n" + je.stack
	}
	return err.Error()
}

// runAsModule calls the compiled CommonJS wrapper as the main module, with
// __filename the bundle's path and fs confined to its directory.
func (r *qjsRuntime) runAsModule(qp *qjsProgram, wrapper quickjs.Value) error {
	filename, dirname := qp.name+".js", "."
	if qp.path != "" {
		if abs, err := filepath.Abs(qp.path); err == nil {
			filename, dirname = abs, filepath.Dir(abs)
		}
		r.fs = newBundleFS(qp.path)
	}
	return r.call(qjsRunModule, wrapper, filename, dirname)
}

// resetLoop cancels every timer and immediate, here and in JavaScript.
func (r *qjsRuntime) resetLoop() {
	if r.loop != nil {
		r.loop.Reset()
	}
	if !r.broken {
		_ = r.call(qjsReset)
	}
}

func (r *qjsRuntime) Eval(ctx context.Context, code string, req *Request) (res Result, err error) {
	if r.broken {
		return Result{}, errors.New("evaluate: runtime is retired")
	}
	defer r.recoverInto(&err)
	started := time.Now()
	stop := r.watch(ctx)
	defer stop()
	defer r.finish()
	defer r.attachUpdates(ctx, req)()

	value, rerr := r.evaluate(ctx, "renderingRequest", code, req)
	if rerr == nil {
		rerr = r.takeUncaught()
	}
	if rerr != nil {
		qjsFree(&value)
		return Result{}, r.renderError(ctx, started, code, rerr)
	}
	defer qjsFree(&value)
	if err := r.call(qjsAfterSync); err != nil {
		return Result{}, r.renderError(ctx, started, code, err)
	}
	res, err = r.result(ctx, started, code, value, req, true)
	if err == nil && r.overMemoryLimit() {
		// An allocation failed at the limit and the bundle caught the error,
		// keeping what it had: the render exceeded the limit all the same.
		return Result{}, &RenderError{Kind: KindTimeout, Text: qjsMemoryText(r.engine.memLimit)}
	}
	return res, err
}

// overMemoryLimit reports a runtime that keeps more than its memory limit
// (after a collection), and retires it.
func (r *qjsRuntime) overMemoryLimit() bool {
	limit := r.engine.memLimit
	if limit <= 0 || r.closed || r.x.mallocSize() <= limit {
		return false
	}
	r.x.runGC()
	if r.x.mallocSize() <= limit {
		return false
	}
	r.broken = true
	return true
}

// evaluate runs code with the per-render globals set, returning its
// completion value (the caller frees it). The globals stay set until finish.
func (r *qjsRuntime) evaluate(ctx context.Context, name, code string, req *Request) (quickjs.Value, error) {
	if req.Shared != r.sharedFor {
		if r.sharedFor != nil {
			if err := r.call(qjsResetShared); err != nil {
				return quickjs.Value{}, err
			}
		}
		r.sharedFor = req.Shared
		r.hostFuncs = nil
	}
	r.ctx, r.req = ctx, req
	r.uncaught = nil
	if err := r.call(qjsBegin, code); err != nil {
		return quickjs.Value{}, err
	}
	return r.evalScript(name, code)
}

// finish ends a render: per-render globals cleared, pending timers and
// immediates cancelled, so nothing of it runs in the next render.
func (r *qjsRuntime) finish() {
	if r.loop != nil {
		r.loop.Reset()
	}
	r.uncaught = nil
	r.streamTouch = nil
	r.pumping = nil
	if !r.broken {
		_ = r.call(qjsReset)
		_ = r.call(qjsEnd)
	}
	// A runtime left above its memory limit would fail the next render.
	r.overMemoryLimit()
	r.sampleMemory()
}

func (r *qjsRuntime) takeUncaught() error {
	if r.uncaught == nil {
		return nil
	}
	u := r.uncaught
	r.uncaught = nil
	return u
}

// kindOf classifies a value with env.js's kind.
func (r *qjsRuntime) kindOf(value quickjs.Value) (string, error) {
	return r.jsString(qjsKind, value)
}

// result turns a completion value into the answer (PROTOCOL.md §5): a
// string verbatim, a stream streamed, a promise or thenable settled and its
// value answered the same way (awaitable is false then: a fulfilled value is
// never awaited again), anything else JSON-stringified.
func (r *qjsRuntime) result(ctx context.Context, started time.Time, code string, value quickjs.Value, req *Request, awaitable bool) (Result, error) {
	kind, err := r.kindOf(value)
	if err != nil {
		return Result{}, r.renderError(ctx, started, code, err)
	}
	switch kind {
	case "string":
		s, err := qjsGoString(value)
		if err != nil {
			return Result{}, r.renderError(ctx, started, code, err)
		}
		return Result{Body: s}, nil
	case "nil":
		return Result{}, &RenderError{Kind: KindNilResult, Text: NilResultText(code)}
	case "stream":
		return r.stream(ctx, started, code, value, req)
	case "promise", "thenable":
		if !awaitable {
			break
		}
		p, err := r.settle(ctx, value)
		if err != nil {
			return Result{}, r.renderError(ctx, started, code, err)
		}
		defer qjsFree(&p)
		settled := r.x.promiseResult(&p)
		defer qjsFree(&settled)
		if r.x.promiseState(&p) == qjsPromiseRejected {
			err := r.exceptionError(settled)
			if je, ok := err.(*qjsJSError); ok {
				return Result{}, &RenderError{Kind: KindJS, Text: JSErrorText(code, je.message, je.stack)}
			}
			return Result{}, r.renderError(ctx, started, code, err)
		}
		return r.result(ctx, started, code, settled, req, false)
	}
	return r.stringified(ctx, started, code, value)
}

func (r *qjsRuntime) stringified(ctx context.Context, started time.Time, code string, value quickjs.Value) (Result, error) {
	s, err := r.callValue(qjsStringify, value)
	if err != nil {
		return Result{}, r.renderError(ctx, started, code, err)
	}
	defer qjsFree(&s)
	if s.IsUndefined() {
		return Result{}, &RenderError{Kind: KindNilResult, Text: NilResultText(code)}
	}
	body, err := qjsGoString(s)
	if err != nil {
		return Result{}, r.renderError(ctx, started, code, err)
	}
	return Result{Body: body}, nil
}

// settle adopts value into a promise and returns it once settled (the
// caller frees it); see gojaRuntime.settle.
func (r *qjsRuntime) settle(ctx context.Context, value quickjs.Value) (quickjs.Value, error) {
	p, err := r.callValue(qjsToPromise, value)
	if err != nil {
		return quickjs.Value{}, err
	}
	if r.x.promiseState(&p) == qjsNotAPromise {
		qjsFree(&p)
		return quickjs.Value{}, errors.New("the rendering request's thenable could not be adopted into a promise")
	}
	fail := func(err error) (quickjs.Value, error) {
		qjsFree(&p)
		return quickjs.Value{}, err
	}
	if err := r.takeUncaught(); err != nil {
		return fail(err)
	}
	if r.x.promiseState(&p) != qjsPromisePending {
		return p, nil
	}
	if r.loop == nil {
		return fail(errors.New(NeverSettledStubTimers))
	}
	err = r.loop.Run(ctx, func() bool { return r.uncaught != nil || r.x.promiseState(&p) != qjsPromisePending })
	if err == nil {
		err = r.takeUncaught()
	}
	switch {
	case errors.Is(err, eventloop.ErrIdle):
		return fail(errors.New(NeverSettledIdle))
	case err != nil:
		return fail(err)
	}
	return p, nil
}

// qjsOutOfMemory reports a JavaScript exception that is QuickJS failing to
// allocate (the runtime reached its hard memory limit).
func qjsOutOfMemory(err error) bool {
	var je *qjsJSError
	return errors.As(err, &je) && je.message == "out of memory" && (je.stack == "" || strings.HasPrefix(je.stack, "InternalError"))
}

// renderError turns an evaluation failure into the answer's error.
func (r *qjsRuntime) renderError(ctx context.Context, started time.Time, code string, err error) error {
	if qjsOutOfMemory(err) {
		err = &qjsStopped{memory: true}
	}
	var stopped *qjsStopped
	if errors.As(err, &stopped) {
		r.broken = true
		if stopped.memory {
			return &RenderError{Kind: KindTimeout, Text: qjsMemoryText(r.engine.memLimit)}
		}
		return InterruptedError(ctx, started)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The event loop stopped on ctx's end before running more
		// JavaScript: the runtime is intact (watch retires it if the
		// engine was interrupted).
		return InterruptedError(ctx, started)
	}
	var renderErr *RenderError
	if errors.As(err, &renderErr) {
		return renderErr
	}
	var je *qjsJSError
	if errors.As(err, &je) {
		return &RenderError{Kind: KindJS, Text: JSErrorText(code, je.message, je.stack)}
	}
	return &RenderError{Kind: KindJS, Text: JSErrorText(code, err.Error(), "")}
}

// qjsMemoryText is the answer's body for a render stopped at its memory limit.
func qjsMemoryText(limit int64) string {
	return fmt.Sprintf("Render stopped: its JavaScript runtime used more than its memory limit of %d MiB (RENDERER_QUICKJS_MEMORY_LIMIT); the runtime was replaced.", limit>>20)
}

// qjsGoString is the Go string of a JavaScript string value.
func qjsGoString(v quickjs.Value) (string, error) {
	a, err := v.Any()
	if err != nil {
		return "", err
	}
	switch s := a.(type) {
	case string:
		return s, nil
	case quickjs.Undefined:
		return "undefined", nil
	case nil:
		return "null", nil
	}
	return fmt.Sprint(a), nil
}

// MemoryUsage reports the bytes the runtime's engine had allocated outside
// the Go heap at the end of its last load or render (0 once closed). It is
// safe to call from any goroutine, also while the runtime renders.
func (r *qjsRuntime) MemoryUsage() int64 {
	return r.memUsed.Load()
}

// runOnOther evaluates code in the runtime of another bundle of the request
// (runOnOtherBundle) and returns its completion value in this runtime.
func (r *qjsRuntime) runOnOther(id, code string) (quickjs.Value, *qjsHostError) {
	req := r.req
	if req == nil {
		return quickjs.Value{}, &qjsHostError{Name: "TypeError", Message: "runOnOtherBundle: no render is in progress"}
	}
	target, ok := req.Runtimes[id]
	if !ok {
		return quickjs.Value{}, &qjsHostError{Name: "TypeError", Message: fmt.Sprintf("runOnOtherBundle: bundle %q is not in this request's bundle set", id)}
	}
	other, ok := target.(*qjsRuntime)
	if !ok || other.broken {
		return quickjs.Value{}, &qjsHostError{Name: "TypeError", Message: fmt.Sprintf("runOnOtherBundle: the runtime of bundle %q is not usable", id)}
	}
	if other == r {
		v, err := r.evalScript("runOnOtherBundle", code)
		if err != nil {
			return quickjs.Value{}, r.hostErrorOf(err)
		}
		return v, nil
	}
	text, herr := r.evalOnOther(other, code, req)
	if herr != nil {
		return quickjs.Value{}, herr
	}
	v, err := r.callValue(qjsImportResult, text)
	if err != nil {
		return quickjs.Value{}, r.hostErrorOf(err)
	}
	return v, nil
}

// hostErrorOf rethrows an error of JavaScript this runtime ran for a host call.
func (r *qjsRuntime) hostErrorOf(err error) *qjsHostError {
	var je *qjsJSError
	if errors.As(err, &je) {
		return &qjsHostError{Name: "Error", Message: je.message}
	}
	return &qjsHostError{Name: "Error", Message: err.Error()}
}

// evalOnOther evaluates code in other and describes its completion value for
// this runtime (quickjs_host.js importResult): strings and primitives as they
// are, objects through JSON, promises settled first and handed over as
// promises.
func (r *qjsRuntime) evalOnOther(other *qjsRuntime, code string, req *Request) (string, *qjsHostError) {
	ctx := r.ctx
	stop := other.watch(ctx)
	defer stop()
	defer other.finish()
	fail := func(format string, args ...any) (string, *qjsHostError) {
		return "", &qjsHostError{Name: "Error", Message: fmt.Sprintf(format, args...)}
	}
	value, err := other.evaluate(ctx, "runOnOtherBundle", code, req)
	if err == nil {
		err = other.takeUncaught()
	}
	if err != nil {
		qjsFree(&value)
		var stopped *qjsStopped
		if errors.As(err, &stopped) {
			other.broken = true
			return fail("runOnOtherBundle: interrupted: %v", ctx.Err())
		}
		return fail("runOnOtherBundle: %s", err.Error())
	}
	defer qjsFree(&value)
	kind, err := other.kindOf(value)
	if err != nil {
		return fail("runOnOtherBundle: %v", err)
	}
	switch kind {
	case "promise", "thenable":
		p, err := other.settle(ctx, value)
		if err != nil {
			if ctx.Err() != nil {
				other.broken = true
				return fail("runOnOtherBundle: interrupted: %v", ctx.Err())
			}
			return fail("runOnOtherBundle: %v", err)
		}
		defer qjsFree(&p)
		settled := other.x.promiseResult(&p)
		defer qjsFree(&settled)
		if other.x.promiseState(&p) == qjsPromiseRejected {
			msg := other.exceptionError(settled).Error()
			b, _ := json.Marshal(map[string]string{"m": "rejected", "e": "runOnOtherBundle: " + msg})
			return string(b), nil
		}
		v, err := other.jsString(qjsExportValue, settled)
		if err != nil {
			return fail("runOnOtherBundle: %v", err)
		}
		return `{"m":"fulfilled","v":` + v + `}`, nil
	case "stream":
		return "", &qjsHostError{Name: "TypeError", Message: "runOnOtherBundle: stream results cannot cross bundles in this gorender build yet"}
	default:
		v, err := other.jsString(qjsExportValue, value)
		if err != nil {
			return fail("runOnOtherBundle: %v", err)
		}
		return `{"m":"value","v":` + v + `}`, nil
	}
}
