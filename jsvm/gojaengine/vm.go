package gojaengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/inproc"
	"github.com/gorender/gorender/jsvm/jsenv"
	"github.com/gorender/gorender/jsvm/transform"
)

// vm is a goja runtime as the render flow uses it (inproc.VM).
type vm struct {
	rt   *goja.Runtime
	host *inproc.Host
	ops  []goja.Callable // the bridge's ops, by inproc.Op
	// asyncCtx is the current async context (env.js's frame); inJob is
	// true while a promise job runs.
	asyncCtx   goja.Value
	inJob      bool
	jsonParse  goja.Callable
	regexpDone bool // RegExp patched for \p{…} (the first bundle that may use them)
	// natives bounds the nesting of built-in functions (guard.go).
	natives *nativeGuard
	// interrupted is set by Interrupt: goja's own flag is seen only
	// between instructions, not by Go code such as a JSON.stringify
	// replacer (guard.go).
	interrupted atomic.Bool
}

// newVM makes a goja runtime with the environment installed: env.js and,
// with SupportModules, the Node environment, through jsenv's bridge over
// the host functions.
func newVM(h *inproc.Host) (*vm, error) {
	opts := h.Options()
	v := &vm{rt: goja.New(), host: h}
	v.rt.SetMaxCallStackSize(maxCallStackSize)
	if err := v.useV8Math(); err != nil {
		return nil, fmt.Errorf("install the render environment: V8's Math: %w", err)
	}
	if err := v.installBuiltins(); err != nil {
		return nil, fmt.Errorf("install the render environment: built-ins: %w", err)
	}
	if err := v.guardNatives(); err != nil {
		return nil, fmt.Errorf("install the render environment: bound the built-in functions: %w", err)
	}
	v.rt.SetAsyncContextTracker(tracker{v})
	parse, ok := goja.AssertFunction(v.rt.Get("JSON").ToObject(v.rt).Get("parse"))
	if !ok {
		return nil, errors.New("install the render environment: JSON.parse missing")
	}
	v.jsonParse = parse
	if err := v.boundNesting(); err != nil {
		return nil, fmt.Errorf("install the render environment: bound the nesting of data: %w", err)
	}

	envFn, err := v.runCompiled(envProgram)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	bridge, err := v.runCompiled(bridgeProgram)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	bridgeFn, ok := goja.AssertFunction(bridge)
	if !ok {
		return nil, errors.New("install the render environment: bridge.js is not a function")
	}
	nodeFactory := goja.Undefined()
	if opts.SupportModules {
		if nodeFactory, err = v.runCompiled(nodeEnvProgram); err != nil {
			return nil, fmt.Errorf("install the Node environment: %w", err)
		}
	}
	options := inproc.EnvOptions(opts)
	ops, err := bridgeFn(goja.Undefined(), v.bindHost(), v.engineHooks(), v.rt.ToValue(options), envFn, nodeFactory)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	obj := ops.ToObject(v.rt)
	for _, name := range inproc.OpNames {
		fn, ok := goja.AssertFunction(obj.Get(name))
		if !ok {
			return nil, fmt.Errorf("install the render environment: bridge op %s missing", name)
		}
		v.ops = append(v.ops, fn)
	}
	return v, nil
}

// installBuiltins runs jsenv.Builtins: the built-ins goja lacks.
func (v *vm) installBuiltins() error {
	install, err := v.runCompiled(builtinsProgram)
	if err != nil {
		return err
	}
	f, ok := goja.AssertFunction(install)
	if !ok {
		return errors.New("builtins.js is not a function")
	}
	_, err = f(goja.Undefined(), v.rt.ToValue(Name), v.rt.ToValue(jsenv.BuiltinsZoneName()))
	return err
}

// runCompiled runs a program compiled once per process.
func (v *vm) runCompiled(compiled func() (*goja.Program, error)) (goja.Value, error) {
	prg, err := compiled()
	if err != nil {
		return nil, err
	}
	return v.rt.RunProgram(prg)
}

// engineHooks are the engine's own functions bridge.js needs: the async
// context, which goja carries across promise jobs itself (tracker).
func (v *vm) engineHooks() *goja.Object {
	o := v.rt.NewObject()
	_ = o.Set("name", Name)
	_ = o.Set("getAsyncContext", func(goja.FunctionCall) goja.Value {
		if v.asyncCtx == nil {
			return goja.Undefined()
		}
		return v.asyncCtx
	})
	_ = o.Set("setAsyncContext", func(c goja.FunctionCall) goja.Value {
		if arg := c.Argument(0); goja.IsUndefined(arg) {
			v.asyncCtx = nil
		} else {
			v.asyncCtx = arg
		}
		return goja.Undefined()
	})
	_ = o.Set("inAsyncJob", func(goja.FunctionCall) goja.Value { return v.rt.ToValue(v.inJob) })
	return o
}

// tracker carries the async context (an opaque JS value env.js owns)
// across promise jobs: captured when a reaction is scheduled, restored while
// it runs.
type tracker struct{ v *vm }

func (t tracker) Grab() any { return t.v.asyncCtx }

func (t tracker) Resumed(ctx any) {
	t.v.asyncCtx, _ = ctx.(goja.Value)
	t.v.inJob = true
}

func (t tracker) Exited() {
	t.v.asyncCtx = nil
	t.v.inJob = false
}

// RunProgram runs a compiled bundle; the first that may build \p{…}
// regexes has RegExp patched first.
func (v *vm) RunProgram(p *inproc.Program) (goja.Value, error) {
	gp, ok := p.Code.(*program)
	if !ok {
		return nil, fmt.Errorf("program %s was not compiled by goja", p.Name())
	}
	if gp.propertyEscapes && !v.regexpDone {
		v.regexpDone = true
		if _, err := v.Call(inproc.OpPatchRegExp); err != nil {
			return nil, err
		}
	}
	value, err := v.rt.RunProgram(gp.prg)
	return value, v.error(err)
}

// RunScript compiles and runs code as a global script, its `**`
// operators computing V8's pow (rewriteExponents) as a bundle's do.
func (v *vm) RunScript(name, code string) (goja.Value, error) {
	if transform.MayUseExponent(code) {
		if tree, err := goja.Parse(name, code, parser.WithDisableSourceMaps); err == nil {
			rewriteExponents(tree, code)
			if prg, err := goja.CompileAST(tree, false); err == nil {
				value, err := v.rt.RunProgram(prg)
				return value, v.error(err)
			}
		}
	}
	value, err := v.rt.RunScript(name, code)
	return value, v.error(err)
}

// Call calls an op of the bridge.
func (v *vm) Call(op inproc.Op, args ...any) (goja.Value, error) {
	vals := make([]goja.Value, len(args))
	for i, a := range args {
		if val, ok := a.(goja.Value); ok {
			vals[i] = val
		} else {
			vals[i] = v.rt.ToValue(a)
		}
	}
	value, err := v.ops[op](goja.Undefined(), vals...)
	return value, v.error(err)
}

// error turns goja's error into the flow's (see inproc.VM).
func (v *vm) error(err error) error {
	if err == nil {
		return nil
	}
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		return &inproc.Stopped{}
	}
	var overflow *goja.StackOverflowError
	if errors.As(err, &overflow) {
		return &inproc.Exception{Message: "RangeError: Maximum call stack size exceeded", Stack: overflow.String(), Fatal: true}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return v.exception(ex)
	}
	return &inproc.Exception{Message: err.Error()}
}

// exception is the text of a thrown value: env.js's message and stack, and
// goja's own trace when the value has no stack.
func (v *vm) exception(ex *goja.Exception) error {
	value, err := v.ops[inproc.OpErrorParts](goja.Undefined(), ex.Value())
	if err != nil {
		var interrupted *goja.InterruptedError
		if errors.As(err, &interrupted) {
			return &inproc.Stopped{}
		}
		// errorParts could not run, as where the stack ran out (a
		// recursion through runOnOtherBundle fails at its deepest level):
		// the value's message as Go reads it.
		message := ownMessage(ex.Value())
		return &inproc.Exception{Message: message, Stack: exceptionTrace(message, ex)}
	}
	var parts [2]string
	if json.Unmarshal([]byte(value.String()), &parts) != nil {
		return &inproc.Exception{Message: value.String()}
	}
	if parts[1] == "" {
		parts[1] = exceptionTrace(parts[0], ex)
	}
	return &inproc.Exception{Message: parts[0], Stack: parts[1]}
}

// ownMessage is a thrown value's message as far as Go can read it: a
// string, or an error's message property.
func ownMessage(value goja.Value) (message string) {
	const unreadable = "(an exception whose message cannot be read)"
	defer func() {
		if recover() != nil {
			message = unreadable
		}
	}()
	if s, ok := value.Export().(string); ok {
		return s
	}
	if o, ok := value.(*goja.Object); ok {
		// A getter would run (and, at the same depth, fail: recovered).
		if s, ok := o.Get("message").Export().(string); ok {
			return s
		}
	}
	return unreadable
}

// exceptionTrace is the stack of a thrown value that has none of its own:
// its message and where it was thrown, written from the exception's frames
// (ex.String() would convert the value again, running its toString).
func exceptionTrace(message string, ex *goja.Exception) string {
	var b bytes.Buffer
	b.WriteString(message)
	b.WriteByte('\n')
	for _, frame := range ex.Stack() {
		b.WriteString("\tat ")
		frame.Write(&b)
		b.WriteByte('\n')
	}
	return b.String()
}

func (v *vm) String(value goja.Value) (string, error) { return value.String(), nil }

func (v *vm) IsUndefined(value goja.Value) bool { return goja.IsUndefined(value) }

// promise is value's promise. The flow asks only of values that should be
// promises (adopted by toPromise): Export is cheap for those.
func (v *vm) promise(value goja.Value) *goja.Promise {
	if o, ok := value.(*goja.Object); ok {
		p, _ := o.Export().(*goja.Promise)
		return p
	}
	return nil
}

func (v *vm) PromiseState(value goja.Value) inproc.PromiseState {
	p := v.promise(value)
	if p == nil {
		return inproc.NotAPromise
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return inproc.Fulfilled
	case goja.PromiseStateRejected:
		return inproc.Rejected
	}
	return inproc.Pending
}

func (v *vm) PromiseResult(value goja.Value) goja.Value {
	if p := v.promise(value); p != nil {
		return p.Result()
	}
	return goja.Undefined()
}

// Free does nothing: goja's values belong to the Go heap.
func (v *vm) Free(*goja.Value) {}

func (v *vm) Interrupt() {
	v.interrupted.Store(true)
	v.rt.Interrupt(jsvm.ErrInterrupted)
}

// OverLimit is nil: goja's memory is bounded by the Go heap's guards.
func (v *vm) OverLimit() *inproc.Stopped { return nil }

func (v *vm) Idle() {}

// Close interrupts the runtime so that any late use fails fast; its
// memory is the Go heap's.
func (v *vm) Close() { v.rt.Interrupt(jsvm.ErrInterrupted) }
