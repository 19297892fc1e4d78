package jsvm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/dop251/goja"

	"github.com/gorender/gorender/jsvm/eventloop"
	"github.com/gorender/gorender/jsvm/intl"
	"github.com/gorender/gorender/jsvm/transform"
)

// maxCallStackSize bounds JS recursion (Node's default allows about 11k
// frames); past it a render fails instead of growing the Go stack.
const maxCallStackSize = 20000

// NewGojaEngine returns the goja engine; use engines.New("goja", opts).
// (It moves to package jsvm/gojaengine with the engine.)
func NewGojaEngine(opts Options) (Engine, error) {
	env, err := envProgram()
	if err != nil {
		return nil, fmt.Errorf("compile the render environment: %w", err)
	}
	e := &gojaEngine{opts: opts, env: env}
	if opts.SupportModules {
		if e.nodeEnv, err = nodeEnvProgram(); err != nil {
			return nil, fmt.Errorf("compile the Node environment: %w", err)
		}
	}
	return e, nil
}

type gojaEngine struct {
	opts    Options
	env     *goja.Program
	nodeEnv *goja.Program // nil unless SupportModules
}

type gojaProgram struct {
	name string
	path string // the bundle file on disk, "" if none
	prg  *goja.Program
	// module: compiled as a CommonJS wrapper (SupportModules).
	module bool
	// lowered: rewritten by esbuild before goja could parse it.
	lowered bool
	// propertyEscapes: may build \p{…} regexes, which need the rewrite.
	propertyEscapes bool
	// stringBuilds: quadratic string accumulators rewritten into array
	// joins (RewriteStringBuilds).
	stringBuilds int
}

func (p *gojaProgram) Name() string { return p.name }

func (e *gojaEngine) Name() string { return "goja" }

// Compile parses the bundle with goja; if goja cannot parse it (async
// generators, for await, regex flags it lacks) or it may use \p{…} regex
// escapes, the bundle is first lowered with esbuild. Parsing first keeps the
// common case free of the transform and keeps the bundle's own line numbers.
// Unless KeepStringBuilds, react-dom's quadratic string builds are rewritten
// into array joins before compiling (RewriteStringBuilds).
func (e *gojaEngine) Compile(name, path, source string) (Program, error) {
	p := &gojaProgram{name: name, path: path, module: e.opts.SupportModules, propertyEscapes: transform.MayUsePropertyEscapes(source)}
	src := source
	if p.propertyEscapes {
		lowered, err := transform.LowerForGoja(name+".js", source, true)
		if err != nil {
			return nil, fmt.Errorf("compile bundle %s: %v", name, err)
		}
		src, p.lowered = lowered, true
	}
	prg, err := p.compile(e, src)
	if err != nil && !p.lowered {
		lowered, lerr := transform.LowerForGoja(name+".js", source, false)
		if lerr != nil {
			// A real syntax error: goja's message is about the bundle as sent.
			return nil, fmt.Errorf("compile bundle %s: %w", name, err)
		}
		var lowErr error
		if prg, lowErr = p.compile(e, lowered); lowErr != nil {
			return nil, fmt.Errorf("compile bundle %s: %w (and after lowering it with esbuild for goja: %v)", name, err, lowErr)
		}
		err = nil
		p.lowered = true
	}
	if err != nil {
		return nil, fmt.Errorf("compile bundle %s: %w", name, err)
	}
	p.prg = prg
	return p, nil
}

// compile compiles src, rewritten by RewriteStringBuilds unless the engine
// keeps string builds. The rewrite parses src itself and returns it
// unchanged when it does not parse or nothing matches; should the rewritten
// source ever fail to compile, src is compiled as it is.
func (p *gojaProgram) compile(e *gojaEngine, src string) (*goja.Program, error) {
	if !e.opts.KeepStringBuilds {
		if out, n, err := transform.RewriteStringBuilds(src); err == nil && n > 0 {
			if prg, err := e.compile(p.name, out, p.module); err == nil {
				p.stringBuilds = n
				return prg, nil
			}
		}
	}
	return e.compile(p.name, src, p.module)
}

func (e *gojaEngine) compile(name, source string, module bool) (*goja.Program, error) {
	if module {
		return compileModule(name+".js", source)
	}
	return goja.Compile(name+".js", source, false)
}

// gojaHooks are the functions env.js returns.
type gojaHooks struct {
	begin, afterSync, end, makeShared, kind, toPromise, stringify, errorParts goja.Callable
	pump                                                                      goja.Callable
}

type gojaRuntime struct {
	vm        *goja.Runtime
	hooks     gojaHooks
	jsonParse goja.Callable
	broken    bool

	engine *gojaEngine
	// loop drives real timers; nil when timers are stubbed.
	loop *eventloop.Loop
	// asyncCtx is the current async context (env.js's frame); inJob is
	// true while a promise job runs.
	asyncCtx goja.Value
	inJob    bool
	// uncaught is the first exception of a callback with no caller (a
	// microtask, a nextTick): it fails the render.
	uncaught goja.Value
	// streamTouch restarts the idle timer of the stream being answered.
	streamTouch func()
	// fs is the bundle's read-only file system (SupportModules).
	fs *bundleFS
	// collators serve Intl.Collator and localeCompare.
	collators intl.Collators
	// runModule and patchRegExp are hooks of the Node environment and env.js.
	runModule   goja.Callable
	patchRegExp goja.Callable
	regexpDone  bool

	// renderCtx and req are the render being evaluated (nil between
	// renders): the shared-context ops and runOnOtherBundle, made once per
	// runtime (perRender), serve them.
	renderCtx context.Context
	req       *Request
	perRender struct{ sharedOps, runOnOtherBundle goja.Value }
}

func (e *gojaEngine) NewRuntime() (Runtime, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStackSize)
	r := &gojaRuntime{vm: vm, engine: e, fs: &bundleFS{}}
	if e.opts.RealTimers() {
		r.loop = eventloop.New()
	}
	vm.SetAsyncContextTracker(gojaTracker{r})
	setup, err := vm.RunProgram(e.env)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	setupFn, ok := goja.AssertFunction(setup)
	if !ok {
		return nil, errors.New("install the render environment: env.js is not a function")
	}
	options := vm.NewObject()
	for k, v := range map[string]bool{
		"stubTimers":      !e.opts.RealTimers(),
		"replayAsyncLogs": e.opts.ReplayAsyncLogs,
	} {
		if err := options.Set(k, v); err != nil {
			return nil, fmt.Errorf("install the render environment: %w", err)
		}
	}
	host := r.hostObject(e.nodeEnv != nil)
	hooksValue, err := setupFn(goja.Undefined(), options, host)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	r.perRender.sharedOps, r.perRender.runOnOtherBundle = r.sharedOps(), vm.ToValue(r.runOnOtherBundle)
	hooksObj := hooksValue.ToObject(vm)
	for name, dst := range map[string]*goja.Callable{
		"begin": &r.hooks.begin, "afterSync": &r.hooks.afterSync, "end": &r.hooks.end, "makeShared": &r.hooks.makeShared,
		"kind": &r.hooks.kind, "toPromise": &r.hooks.toPromise, "stringify": &r.hooks.stringify,
		"errorParts": &r.hooks.errorParts, "pump": &r.hooks.pump, "patchRegExp": &r.patchRegExp,
	} {
		fn, ok := goja.AssertFunction(hooksObj.Get(name))
		if !ok {
			return nil, fmt.Errorf("install the render environment: hook %s missing", name)
		}
		*dst = fn
	}
	if e.nodeEnv != nil {
		if err := r.installNode(host, hooksObj); err != nil {
			return nil, fmt.Errorf("install the Node environment: %w", err)
		}
	}
	parse, ok := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	if !ok {
		return nil, errors.New("install the render environment: JSON.parse missing")
	}
	r.jsonParse = parse
	return r, nil
}

// installNode runs the Node environment's installer: lazy globals now, the
// CommonJS loader for Load.
func (r *gojaRuntime) installNode(host *goja.Object, envHooks *goja.Object) error {
	v, err := r.vm.RunProgram(r.engine.nodeEnv)
	if err != nil {
		return err
	}
	factory, ok := goja.AssertFunction(v)
	if !ok {
		return errors.New("node-env.js is not a function")
	}
	installValue, err := factory(goja.Undefined())
	if err != nil {
		return err
	}
	install, ok := goja.AssertFunction(installValue)
	if !ok {
		return errors.New("node-env.js does not export install")
	}
	hooks, err := install(goja.Undefined(), host, envHooks)
	if err != nil {
		return err
	}
	run, ok := goja.AssertFunction(hooks.ToObject(r.vm).Get("runModule"))
	if !ok {
		return errors.New("node-env.js: runModule missing")
	}
	r.runModule = run
	return nil
}

func (r *gojaRuntime) Broken() bool { return r.broken }

func (r *gojaRuntime) Close() {
	// Nothing to free: goja's memory belongs to the Go heap. Interrupt makes
	// any late use fail fast instead of running.
	r.broken = true
	r.vm.Interrupt(ErrInterrupted)
}

// watch interrupts the runtime when ctx ends (see watchRender) and returns a
// function that stops watching; it marks the runtime broken if the interrupt
// fired.
func (r *gojaRuntime) watch(ctx context.Context) (stop func()) {
	stopWatch := eventloop.Watch(ctx, r.loop, func() { r.vm.Interrupt(ErrInterrupted) })
	return func() {
		if stopWatch() {
			r.broken = true
		}
	}
}

func (r *gojaRuntime) Load(ctx context.Context, p Program) (err error) {
	gp, ok := p.(*gojaProgram)
	if !ok {
		return fmt.Errorf("load bundle: program %T is not a goja program", p)
	}
	defer r.recoverInto(&err)
	stop := r.watch(ctx)
	defer stop()
	if gp.propertyEscapes && !r.regexpDone {
		r.regexpDone = true
		if _, err := r.patchRegExp(goja.Undefined()); err != nil {
			return fmt.Errorf("load bundle %s: %w", gp.name, err)
		}
	}
	value, err := r.vm.RunProgram(gp.prg)
	if err == nil && gp.module {
		err = r.runAsModule(gp, value)
	}
	if err == nil && r.uncaught != nil {
		message, stack := r.errorParts(r.uncaught)
		r.uncaught = nil
		return fmt.Errorf("load bundle %s: %s\n%s", gp.name, message, stack)
	}
	if err == nil && r.loop != nil {
		// Work the bundle scheduled while loading runs if it is due now
		// (setImmediate, 0 ms timers); later timers are cancelled, as every
		// render's are: nothing of the load runs inside a render.
		err = r.loop.Run(ctx, func() bool { return r.uncaught != nil || !r.loop.DueNow() })
		if errors.Is(err, eventloop.ErrIdle) {
			err = nil
		}
		if err == nil && r.uncaught != nil {
			message, stack := r.errorParts(r.uncaught)
			r.uncaught = nil
			r.loop.Reset()
			return fmt.Errorf("load bundle %s: %s\n%s", gp.name, message, stack)
		}
		r.loop.Reset()
	}
	if err != nil {
		if errors.As(err, new(*goja.InterruptedError)) || ctx.Err() != nil {
			r.broken = true
			return fmt.Errorf("load bundle %s: interrupted: %w", gp.name, ctx.Err())
		}
		message, stack := r.exceptionParts(err)
		return fmt.Errorf("load bundle %s: %s\n%s", gp.name, message, stack)
	}
	return nil
}

// runAsModule calls the compiled CommonJS wrapper as the main module, with
// __filename the bundle's path and fs confined to its directory.
func (r *gojaRuntime) runAsModule(gp *gojaProgram, wrapper goja.Value) error {
	filename, dirname := gp.name+".js", "."
	if gp.path != "" {
		if abs, err := filepath.Abs(gp.path); err == nil {
			filename, dirname = abs, filepath.Dir(abs)
		}
		r.fs = newBundleFS(gp.path)
	}
	_, err := r.runModule(goja.Undefined(), wrapper, r.vm.ToValue(filename), r.vm.ToValue(dirname))
	return err
}

// recoverInto turns a panic from the engine or a host function into an
// error and retires the runtime: its state is unknown.
func (r *gojaRuntime) recoverInto(err *error) {
	if p := recover(); p != nil {
		r.broken = true
		*err = &RenderError{Kind: KindJS, Text: fmt.Sprintf("internal error in the JavaScript runtime: %v", p)}
	}
}

func (r *gojaRuntime) Eval(ctx context.Context, code string, req *Request) (res Result, err error) {
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
		return Result{}, r.renderError(ctx, started, code, rerr)
	}
	if _, err := r.hooks.afterSync(goja.Undefined()); err != nil {
		return Result{}, r.renderError(ctx, started, code, err)
	}
	return r.result(ctx, started, code, value, req, true)
}

// evaluate runs code with the per-render globals set, returning its
// completion value. The globals stay set until finish, so that the render's
// asynchronous part sees them too.
func (r *gojaRuntime) evaluate(ctx context.Context, name, code string, req *Request) (goja.Value, error) {
	r.renderCtx, r.req = ctx, req
	shared, err := r.hooks.makeShared(goja.Undefined(), r.perRender.sharedOps)
	if err != nil {
		return nil, err
	}
	r.uncaught = nil
	if _, err := r.hooks.begin(goja.Undefined(), r.vm.ToValue(code), shared, r.perRender.runOnOtherBundle); err != nil {
		return nil, err
	}
	return r.vm.RunScript(name, code)
}

// finish ends a render: per-render globals cleared, pending timers and
// immediates cancelled, so nothing of it runs in the next render.
func (r *gojaRuntime) finish() {
	if r.loop != nil {
		r.loop.Reset()
	}
	r.uncaught = nil
	r.streamTouch = nil
	if !r.broken {
		_, _ = r.hooks.end(goja.Undefined())
	}
	r.renderCtx, r.req = nil, nil
	r.asyncCtx = nil
}

// uncaughtError is an exception thrown by a callback that had no caller.
type uncaughtError struct{ value goja.Value }

func (e *uncaughtError) Error() string { return "uncaught exception" }

func (r *gojaRuntime) takeUncaught() error {
	if r.uncaught == nil {
		return nil
	}
	v := r.uncaught
	r.uncaught = nil
	return &uncaughtError{v}
}

// result turns a completion value into the answer (PROTOCOL.md §5): a
// string verbatim, a stream streamed, a promise or thenable settled and its
// value answered the same way (awaitable is false then: a fulfilled value is
// never awaited again), anything else JSON-stringified.
func (r *gojaRuntime) result(ctx context.Context, started time.Time, code string, value goja.Value, req *Request, awaitable bool) (Result, error) {
	kind, err := r.hooks.kind(goja.Undefined(), value)
	if err != nil {
		return Result{}, r.renderError(ctx, started, code, err)
	}
	switch kind.String() {
	case "string":
		return Result{Body: value.String()}, nil
	case "nil":
		return Result{}, &RenderError{Kind: KindNilResult, Text: NilResultText(code)}
	case "stream":
		return r.stream(ctx, started, code, value, req)
	case "promise", "thenable":
		if !awaitable {
			break
		}
		settled, err := r.settle(ctx, value)
		if err != nil {
			return Result{}, r.renderError(ctx, started, code, err)
		}
		if settled.State() == goja.PromiseStateRejected {
			message, stack := r.errorParts(settled.Result())
			return Result{}, &RenderError{Kind: KindJS, Text: JSErrorText(code, message, stack)}
		}
		return r.result(ctx, started, code, settled.Result(), req, false)
	}
	return r.stringified(ctx, started, code, value)
}

func (r *gojaRuntime) stringified(ctx context.Context, started time.Time, code string, value goja.Value) (Result, error) {
	s, err := r.hooks.stringify(goja.Undefined(), value)
	if err != nil {
		return Result{}, r.renderError(ctx, started, code, err)
	}
	if goja.IsUndefined(s) {
		return Result{}, &RenderError{Kind: KindNilResult, Text: NilResultText(code)}
	}
	return Result{Body: s.String()}, nil
}

// settle adopts value into a promise and returns it once settled. With real
// timers the event loop runs until it settles, ctx ends or nothing is left
// that could settle it; with stub timers only the job queue has run, so a
// pending promise is an error.
func (r *gojaRuntime) settle(ctx context.Context, value goja.Value) (*goja.Promise, error) {
	adopted, err := r.hooks.toPromise(goja.Undefined(), value)
	if err != nil {
		return nil, err
	}
	p, ok := adopted.Export().(*goja.Promise)
	if !ok {
		return nil, errors.New("the rendering request's thenable could not be adopted into a promise")
	}
	if err := r.takeUncaught(); err != nil {
		return nil, err
	}
	if p.State() != goja.PromiseStatePending {
		return p, nil
	}
	if r.loop == nil {
		return nil, errors.New(NeverSettledStubTimers)
	}
	err = r.loop.Run(ctx, func() bool { return r.uncaught != nil || p.State() != goja.PromiseStatePending })
	if err == nil {
		err = r.takeUncaught()
	}
	switch {
	case errors.Is(err, eventloop.ErrIdle):
		return nil, errors.New(NeverSettledIdle)
	case err != nil:
		return nil, err
	}
	return p, nil
}

// renderError turns an evaluation failure into the answer's error.
func (r *gojaRuntime) renderError(ctx context.Context, started time.Time, code string, err error) error {
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		r.broken = true
		return InterruptedError(ctx, started)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The event loop stopped on ctx's end before running more
		// JavaScript: the runtime is intact (watch retires it if the
		// engine was interrupted).
		return InterruptedError(ctx, started)
	}
	var overflow *goja.StackOverflowError
	if errors.As(err, &overflow) {
		r.broken = true
		return &RenderError{Kind: KindJS, Text: JSErrorText(code, "RangeError: Maximum call stack size exceeded", overflow.String())}
	}
	var renderErr *RenderError
	if errors.As(err, &renderErr) {
		return renderErr
	}
	var uncaught *uncaughtError
	if errors.As(err, &uncaught) {
		message, stack := r.errorParts(uncaught.value)
		return &RenderError{Kind: KindJS, Text: JSErrorText(code, message, stack)}
	}
	message, stack := r.exceptionParts(err)
	return &RenderError{Kind: KindJS, Text: JSErrorText(code, message, stack)}
}

// exceptionParts returns the message and stack of an engine error.
func (r *gojaRuntime) exceptionParts(err error) (message, stack string) {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		message, stack = r.errorParts(ex.Value())
		if stack == "" {
			stack = ex.String()
		}
		return message, stack
	}
	return err.Error(), ""
}

func (r *gojaRuntime) errorParts(thrown goja.Value) (message, stack string) {
	parts, err := r.hooks.errorParts(goja.Undefined(), thrown)
	if err != nil {
		return thrown.String(), ""
	}
	obj := parts.ToObject(r.vm)
	return obj.Get("0").String(), obj.Get("1").String()
}

// runOnOtherBundle is the per-render global: evaluate code in the runtime
// of another bundle of this request's set and return its completion value.
// runOnOtherBundle is the render's runOnOtherBundle(bundleId, code).
func (r *gojaRuntime) runOnOtherBundle(call goja.FunctionCall) goja.Value {
	if r.req == nil {
		panic(r.vm.NewTypeError("runOnOtherBundle: called outside a render"))
	}
	id := call.Argument(0).String()
	code := call.Argument(1).String()
	target, ok := r.req.Runtimes[id]
	if !ok {
		panic(r.vm.NewTypeError(fmt.Sprintf("runOnOtherBundle: bundle %q is not in this request's bundle set", id)))
	}
	other, ok := target.(*gojaRuntime)
	if !ok || other.broken {
		panic(r.vm.NewTypeError(fmt.Sprintf("runOnOtherBundle: the runtime of bundle %q is not usable", id)))
	}
	if other == r {
		value, err := r.vm.RunScript("runOnOtherBundle", code)
		if err != nil {
			panic(err)
		}
		return value
	}
	return r.evalOnOther(r.renderCtx, other, code, r.req)
}

// evalOnOther evaluates code in other and brings its completion value into
// r: strings and primitives as they are, objects through JSON, promises
// settled first and handed over as promises.
func (r *gojaRuntime) evalOnOther(ctx context.Context, other *gojaRuntime, code string, req *Request) goja.Value {
	stop := other.watch(ctx)
	defer stop()
	defer other.finish()
	value, err := other.evaluate(ctx, "runOnOtherBundle", code, req)
	if err == nil {
		err = other.takeUncaught()
	}
	if err != nil {
		if errors.As(err, new(*goja.InterruptedError)) {
			other.broken = true
			panic(r.vm.NewGoError(fmt.Errorf("runOnOtherBundle: interrupted: %w", ctx.Err())))
		}
		message, _ := other.exceptionParts(err)
		var uncaught *uncaughtError
		if errors.As(err, &uncaught) {
			message, _ = other.errorParts(uncaught.value)
		}
		panic(r.vm.NewGoError(fmt.Errorf("runOnOtherBundle: %s", message)))
	}
	kind, err := other.hooks.kind(goja.Undefined(), value)
	if err != nil {
		panic(r.vm.NewGoError(fmt.Errorf("runOnOtherBundle: %w", err)))
	}
	switch kind.String() {
	case "promise", "thenable":
		settled, err := other.settle(ctx, value)
		if err != nil {
			if ctx.Err() != nil {
				other.broken = true
				panic(r.vm.NewGoError(fmt.Errorf("runOnOtherBundle: interrupted: %w", ctx.Err())))
			}
			var uncaught *uncaughtError
			if errors.As(err, &uncaught) {
				message, _ := other.errorParts(uncaught.value)
				err = errors.New(message)
			}
			panic(r.vm.NewGoError(fmt.Errorf("runOnOtherBundle: %w", err)))
		}
		p, resolve, reject := r.vm.NewPromise()
		if settled.State() == goja.PromiseStateRejected {
			message, _ := other.errorParts(settled.Result())
			_ = reject(r.vm.NewGoError(fmt.Errorf("runOnOtherBundle: %s", message)))
		} else {
			_ = resolve(r.copyFrom(other, settled.Result()))
		}
		return r.vm.ToValue(p)
	case "stream":
		panic(r.vm.NewTypeError("runOnOtherBundle: stream results cannot cross bundles in this gorender build yet"))
	default:
		return r.copyFrom(other, value)
	}
}

// copyFrom brings a value of another runtime into r.
func (r *gojaRuntime) copyFrom(other *gojaRuntime, value goja.Value) goja.Value {
	if value == nil || goja.IsUndefined(value) || goja.IsNull(value) {
		return value
	}
	if _, isObject := value.(*goja.Object); !isObject {
		return r.vm.ToValue(value.Export())
	}
	s, err := other.hooks.stringify(goja.Undefined(), value)
	if err != nil || goja.IsUndefined(s) {
		return goja.Undefined()
	}
	parsed, err := r.jsonParse(goja.Undefined(), r.vm.ToValue(s.String()))
	if err != nil {
		panic(err)
	}
	return parsed
}

// sharedOps backs this runtime's SharedExecutionContext with the shared
// entries of the render being evaluated (none between renders, as quickjs).
func (r *gojaRuntime) sharedOps() goja.Value {
	key := func(v goja.Value) any {
		switch exported := v.Export().(type) {
		case string, bool:
			return exported
		case int64:
			return float64(exported)
		case float64:
			if math.IsNaN(exported) {
				return "NaN"
			}
			return exported
		default:
			panic(r.vm.NewTypeError("sharedExecutionContext keys must be strings, numbers or booleans"))
		}
	}
	shared := func() *SharedContext {
		if r.req == nil {
			return nil
		}
		return r.req.Shared
	}
	ops := r.vm.NewObject()
	set := func(name string, fn func(goja.FunctionCall) goja.Value) {
		if err := ops.Set(name, fn); err != nil {
			panic(err)
		}
	}
	set("get", func(c goja.FunctionCall) goja.Value {
		e, ok := shared().Get(key(c.Argument(0)))
		if !ok {
			return goja.Undefined()
		}
		if e.Owner == nil {
			return r.hostValue(e.Value)
		}
		if owner := e.Owner.(*gojaRuntime); owner != r {
			return r.copyFrom(owner, e.Value.(goja.Value))
		}
		return e.Value.(goja.Value)
	})
	set("set", func(c goja.FunctionCall) goja.Value {
		shared().Set(key(c.Argument(0)), SharedEntry{Owner: r, Value: c.Argument(1)})
		return goja.Undefined()
	})
	set("has", func(c goja.FunctionCall) goja.Value {
		_, ok := shared().Get(key(c.Argument(0)))
		return r.vm.ToValue(ok)
	})
	set("remove", func(c goja.FunctionCall) goja.Value {
		return r.vm.ToValue(shared().Delete(key(c.Argument(0))))
	})
	set("clear", func(goja.FunctionCall) goja.Value {
		shared().Clear()
		return goja.Undefined()
	})
	set("keys", func(goja.FunctionCall) goja.Value {
		keys := shared().Keys()
		values := make([]any, len(keys))
		for i, k := range keys {
			values[i] = r.vm.ToValue(k)
		}
		return r.vm.NewArray(values...)
	})
	return ops
}

// hostValue turns a value the host put into a shared context
// (SharedContext.SetHost) into a JS value of this runtime.
func (r *gojaRuntime) hostValue(v any) goja.Value {
	switch v := v.(type) {
	case HostSet:
		set, err := r.vm.New(r.vm.Get("Set"))
		if err != nil {
			panic(err)
		}
		add, _ := goja.AssertFunction(set.Get("add"))
		for _, item := range v {
			if _, err := add(set, r.vm.ToValue(item)); err != nil {
				panic(err)
			}
		}
		return set
	case HostFunc:
		return r.vm.ToValue(func(c goja.FunctionCall) goja.Value {
			args := make([]string, len(c.Arguments))
			for i, a := range c.Arguments {
				args[i] = a.String()
			}
			v(args...)
			return goja.Undefined()
		})
	default:
		return r.vm.ToValue(v)
	}
}
