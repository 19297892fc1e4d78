package quickjsengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/quickjs"

	"github.com/gorender/gorender/jsvm/inproc"
	"github.com/gorender/gorender/jsvm/jsenv"
	"github.com/gorender/gorender/jsvm/transform"
)

// vm is a QuickJS runtime and context as the render flow uses it
// (inproc.VM).
type vm struct {
	engine *Engine
	vm     *quickjs.VM
	x      qjsRaw
	host   *inproc.Host
	// js is quickjs.js's one function Go calls into; fail is its sentinel
	// for a failed call. They are the only JavaScript values Go holds
	// between calls.
	js, fail quickjs.Value
	closed   bool

	ctlMu      sync.Mutex
	ctl        uintptr // the interrupt handler's control block (C memory)
	restoreCtl func()

	// depth counts calls into JavaScript in progress: promise jobs run when
	// the outermost returns, as in goja.
	depth    int
	draining bool
	// thrown is the exception of the js call in progress.
	thrown *inproc.Exception
	// hostErr is the failure of the host call in progress; hostPanic a
	// panic of a host function, which retires the runtime.
	hostErr   *inproc.HostError
	hostPanic error

	// memUsed is the engine's allocated bytes at the end of the last load
	// or render, for MemoryUsage. The engine's own count lives in C memory
	// that every allocation writes, so it is read only on the goroutine
	// using the runtime and published here for others.
	memUsed atomic.Int64
}

// newVM makes a QuickJS runtime with the environment installed: quickjs.js,
// then jsenv's bridge over the host functions, env.js and, with
// SupportModules, the Node environment.
func newVM(e *Engine, h *inproc.Host) (v *vm, err error) {
	a, err := assets()
	if err != nil {
		return nil, err
	}
	qvm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("new QuickJS runtime: %w", err)
	}
	x, err := newQJSRaw(qvm)
	if err != nil {
		qvm.Close()
		return nil, err
	}
	v = &vm{engine: e, vm: qvm, x: x, host: h}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("install the render environment: internal error: %v", p)
		}
		if err != nil {
			v.Close()
		}
	}()
	if e.memLimit > 0 {
		qvm.SetMemoryLimit(uintptr(e.memLimit + headroom(e.memLimit)))
	}
	v.ctl, v.restoreCtl = x.installControl(e.memLimit)
	if v.ctl == 0 {
		return nil, errors.New("new QuickJS runtime: out of memory")
	}
	if err := x.useV8Math(); err != nil {
		return nil, fmt.Errorf("install the render environment: V8's Math: %w", err)
	}
	builtins, err := v.evalBytecode(a.builtins)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: built-ins: %w", err)
	}
	done, err := builtins.CallValue(quickjs.UndefinedValue, Name, jsenv.BuiltinsZoneName())
	qjsFree(&builtins)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: built-ins: %w", err)
	}
	qjsFree(&done)
	if err := qvm.RegisterFunc("__gorender_host", v.dispatch, false); err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	names := make([]string, len(inproc.Functions))
	for i, f := range inproc.Functions {
		names[i] = f.Name
	}
	functionNames, _ := json.Marshal(names)
	opNames, _ := json.Marshal(inproc.OpNames)
	setup, err := v.evalBytecode(a.engine)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	install, err := setup.CallValue(quickjs.UndefinedValue, string(functionNames), string(opNames))
	qjsFree(&setup)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	defer qjsFree(&install)
	parts := []quickjs.Value{}
	defer func() {
		for i := range parts {
			qjsFree(&parts[i])
		}
	}()
	for _, bc := range [][]byte{a.bridge, a.env} {
		fn, err := v.evalBytecode(bc)
		if err != nil {
			return nil, fmt.Errorf("install the render environment: %w", err)
		}
		parts = append(parts, fn)
	}
	var nodeFactory any = quickjs.Undefined{}
	if e.opts.SupportModules {
		bc, err := nodeAsset()
		if err != nil {
			return nil, err
		}
		factory, err := v.evalBytecode(bc)
		if err != nil {
			return nil, fmt.Errorf("install the Node environment: %w", err)
		}
		parts = append(parts, factory)
		nodeFactory = factory
	}
	v.depth++
	v.js, err = install.CallValue(quickjs.UndefinedValue, parts[0], inproc.EnvOptions(e.opts), parts[1], nodeFactory)
	v.depth--
	if err == nil {
		err = v.drain()
	}
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %s", describe(v.engineError(err)))
	}
	v.fail, err = v.js.CallValue(quickjs.UndefinedValue, -1)
	if err != nil {
		return nil, fmt.Errorf("install the render environment: %w", err)
	}
	return v, nil
}

// describe is the text of an error for a log or a load failure.
func describe(err error) string {
	var ex *inproc.Exception
	if errors.As(err, &ex) && ex.Stack != "" {
		return ex.Message + "\n" + ex.Stack
	}
	return err.Error()
}

// RunProgram runs a compiled bundle at top level.
func (v *vm) RunProgram(p *inproc.Program) (quickjs.Value, error) {
	qp, ok := p.Code.(*program)
	if !ok {
		return quickjs.Value{}, fmt.Errorf("program %s was not compiled by quickjs", p.Name())
	}
	return v.evalBytecode(qp.bytecode)
}

// RunScript evaluates code as a global script named name, with await
// lowered (see the package comment) and large JSON literals parsed as JSON.
func (v *vm) RunScript(name, code string) (quickjs.Value, error) {
	code, _ = transform.LowerForQuickJS(name, compiledCode(code))
	return v.evalCode(name, code)
}

// evalBytecode runs a compiled program at top level.
func (v *vm) evalBytecode(bc []byte) (quickjs.Value, error) {
	if v.closed {
		return quickjs.Value{}, errors.New("the JavaScript runtime is closed")
	}
	v.depth++
	value, ok, err := v.x.evalBytecode(bc)
	v.depth--
	return v.completed(value, ok, err)
}

// evalCode evaluates code as it is, as a global script named name.
func (v *vm) evalCode(name, code string) (quickjs.Value, error) {
	if v.closed {
		return quickjs.Value{}, errors.New("the JavaScript runtime is closed")
	}
	v.depth++
	value, ok, err := v.x.eval(code, name, 0)
	v.depth--
	return v.completed(value, ok, err)
}

// completed finishes a call into JavaScript: promise jobs run if it was the
// outermost, and an exception becomes an error.
func (v *vm) completed(value quickjs.Value, ok bool, err error) (quickjs.Value, error) {
	if v.hostPanic != nil && err == nil {
		if ok {
			qjsFree(&value)
		}
		return quickjs.Value{}, v.hostPanic
	}
	if err == nil && !ok {
		if stopped := v.stoppedError(); stopped != nil {
			qjsFree(&value)
			return quickjs.Value{}, stopped
		}
		if v.overSoftLimit() {
			// Past its limit the runtime cannot even describe the
			// exception (QuickJS's own out of memory).
			qjsFree(&value)
			return quickjs.Value{}, &inproc.Stopped{Limit: memoryText(v.engine.memLimit)}
		}
		err = v.exceptionError(value)
		qjsFree(&value)
		value = quickjs.Value{}
	}
	if v.depth == 0 {
		derr := v.drain()
		if derr == nil && v.hostPanic != nil {
			// A host function panicked in a promise job.
			derr = v.hostPanic
		}
		if derr != nil {
			if ok {
				qjsFree(&value)
			}
			return quickjs.Value{}, derr
		}
	}
	if err != nil {
		return quickjs.Value{}, err
	}
	return value, nil
}

// exceptionError turns a thrown value into text.
func (v *vm) exceptionError(thrown quickjs.Value) error {
	parts, err := v.callValue(inproc.OpErrorParts, thrown)
	if err != nil {
		return err
	}
	defer qjsFree(&parts)
	text, err := goString(parts)
	if err != nil {
		return err
	}
	var p [2]string
	if json.Unmarshal([]byte(text), &p) != nil {
		return v.exception(&inproc.Exception{Message: text})
	}
	return v.exception(&inproc.Exception{Message: p[0], Stack: p[1]})
}

// exception is ex, or the runtime's memory limit when ex is QuickJS failing
// to allocate (the runtime reached its hard limit).
func (v *vm) exception(ex *inproc.Exception) error {
	if ex.Message == "out of memory" && (ex.Stack == "" || strings.HasPrefix(ex.Stack, "InternalError")) {
		return &inproc.Stopped{Limit: memoryText(v.engine.memLimit)}
	}
	return ex
}

// Call runs an op of the bridge; the caller frees the result.
func (v *vm) Call(op inproc.Op, args ...any) (quickjs.Value, error) {
	return v.callValue(op, args...)
}

func (v *vm) callValue(op inproc.Op, args ...any) (quickjs.Value, error) {
	if v.closed {
		return quickjs.Value{}, errors.New("the JavaScript runtime is closed")
	}
	prevThrown := v.thrown
	v.thrown = nil
	v.depth++
	value, err := v.js.CallValue(quickjs.UndefinedValue, append([]any{int(op)}, args...)...)
	v.depth--
	thrown := v.thrown
	v.thrown = prevThrown
	if err != nil {
		err = v.engineError(err)
	}
	if v.hostPanic != nil && err == nil {
		err = v.hostPanic
	}
	if v.depth == 0 && err == nil {
		err = v.drain()
		if err == nil && v.hostPanic != nil {
			// A host function panicked in a promise job.
			err = v.hostPanic
		}
	}
	switch {
	case err != nil:
		if thrown == nil {
			qjsFree(&value)
		}
		return quickjs.Value{}, err
	case thrown != nil:
		qjsFree(&value)
		return quickjs.Value{}, v.exception(thrown)
	}
	return value, nil
}

// drain runs the pending promise jobs.
func (v *vm) drain() error {
	v.draining = true
	_, err := v.vm.ExecutePendingJobs()
	v.draining = false
	if err != nil {
		return v.engineError(err)
	}
	if stopped := v.stoppedError(); stopped != nil {
		return stopped
	}
	return nil
}

// engineError classifies an error of the engine itself (not a JavaScript
// exception the host layer caught): the runtime's state is unknown after
// one, and the flow retires it.
func (v *vm) engineError(err error) error {
	if stopped := v.stoppedError(); stopped != nil {
		return stopped
	}
	if v.overSoftLimit() || strings.Contains(err.Error(), "out of memory") {
		return &inproc.Stopped{Limit: memoryText(v.engine.memLimit)}
	}
	var qe *quickjs.Error
	if errors.As(err, &qe) {
		return &inproc.Exception{Message: qe.Error(), Stack: qe.Stack, Fatal: true}
	}
	return err
}

// stoppedError is the error of a render the interrupt handler stopped.
func (v *vm) stoppedError() *inproc.Stopped {
	v.ctlMu.Lock()
	defer v.ctlMu.Unlock()
	if v.ctl == 0 {
		return nil
	}
	c := (*qjsControl)(cptr(v.ctl))
	switch {
	case atomic.LoadInt32(&c.exceeded) != 0:
		return &inproc.Stopped{Limit: memoryText(v.engine.memLimit)}
	case atomic.LoadInt32(&c.stop) != 0:
		return &inproc.Stopped{}
	}
	return nil
}

// overSoftLimit reports a runtime that has allocated past its memory limit
// (into the headroom the interrupt handler stops renders in): an exception
// or an engine failure then is QuickJS failing to allocate, whatever
// QuickJS could still say about it.
func (v *vm) overSoftLimit() bool {
	return v.engine.memLimit > 0 && !v.closed && v.x.mallocSize() > v.engine.memLimit
}

// memoryText is the answer's body for a render stopped at its memory limit.
func memoryText(limit int64) string {
	return fmt.Sprintf("Render stopped: its JavaScript runtime used more than its memory limit of %d MiB (RENDERER_QUICKJS_MEMORY_LIMIT); the runtime was replaced.", limit>>20)
}

// Interrupt stops the JavaScript running now and any later in this
// runtime. It may be called from any goroutine.
func (v *vm) Interrupt() {
	v.ctlMu.Lock()
	if v.ctl != 0 {
		atomic.StoreInt32(&(*qjsControl)(cptr(v.ctl)).stop, 1)
	}
	v.ctlMu.Unlock()
	v.vm.Interrupt()
}

// Close releases the VM (once).
func (v *vm) Close() {
	if v.closed {
		return
	}
	v.closed = true
	defer func() { _ = recover() }() // a VM a panic went through can only leak
	qjsFree(&v.js)
	qjsFree(&v.fail)
	v.ctlMu.Lock()
	restore := v.restoreCtl
	v.ctl, v.restoreCtl = 0, nil
	v.ctlMu.Unlock()
	if restore != nil {
		restore()
	}
	_ = v.vm.Close()
	v.memUsed.Store(0)
}

// Idle records the engine's allocated bytes for MemoryUsage.
func (v *vm) Idle() {
	if !v.closed {
		v.memUsed.Store(v.x.mallocSize())
	}
}

// OverLimit reports a runtime that keeps more than its memory limit (after
// a collection).
func (v *vm) OverLimit() *inproc.Stopped {
	limit := v.engine.memLimit
	if limit <= 0 || v.closed || v.x.mallocSize() <= limit {
		return nil
	}
	v.x.runGC()
	if v.x.mallocSize() <= limit {
		return nil
	}
	return &inproc.Stopped{Limit: memoryText(limit)}
}

func (v *vm) String(value quickjs.Value) (string, error) { return goString(value) }

func (v *vm) IsUndefined(value quickjs.Value) bool { return value.IsUndefined() }

func (v *vm) PromiseState(value quickjs.Value) inproc.PromiseState {
	switch v.x.promiseState(&value) {
	case qjsPromisePending:
		return inproc.Pending
	case qjsPromiseFulfilled:
		return inproc.Fulfilled
	case qjsPromiseRejected:
		return inproc.Rejected
	}
	return inproc.NotAPromise
}

func (v *vm) PromiseResult(value quickjs.Value) quickjs.Value {
	return v.x.promiseResult(&value)
}

func (v *vm) Free(value *quickjs.Value) { qjsFree(value) }

// goString is the Go string of a JavaScript string value.
func goString(v quickjs.Value) (string, error) {
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
