// Package quickjsengine is the QuickJS engine (modernc.org/quickjs, QuickJS
// translated to Go: no cgo): a jsvm.Engine whose runtimes are the render
// flow of jsvm/inproc over QuickJS's primitives.
//
// Compile once, run many: a bundle is compiled to QuickJS bytecode once per
// process and every runtime loads that bytecode (reading it is ~10× faster
// than parsing the source). The environment (quickjs.js, jsenv's bridge,
// env.js, the Node environment) is compiled the same way, once per process.
//
// Each runtime is one QuickJS runtime and context with its own memory limit
// (QuickJS allocates outside the Go heap, so GOMEMLIMIT does not see it):
// a render that passes Options.MemoryLimit is stopped like a timeout and its
// runtime replaced. Interrupts (deadline, cancellation, memory) go through
// the engine's interrupt handler.
//
// Async context. goja carries the async context across promise reactions
// itself; QuickJS has no such hook. quickjs.js wraps Promise.prototype.then,
// and await, which QuickJS runs without calling then, is lowered to
// then-based code by esbuild when a program is compiled, when it contains
// await (transform.LowerForQuickJS): so AsyncLocalStorage and per-render console
// history work as on goja. QuickJS itself parses async functions, async
// generators and for await natively (Engine.nativeAsync turns the lowering
// off, for tests).
package quickjsengine

import (
	_ "embed"
	"errors"
	"fmt"
	"sync"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/inproc"
	"github.com/gorender/gorender/jsvm/jsenv"
	"github.com/gorender/gorender/jsvm/transform"
)

// Name is the engine's name.
const Name = "quickjs"

//go:embed quickjs.js
var engineSource string

// headroom is how far past the limit the engine's own allocator still
// succeeds, so that stopping a render at its limit (in the interrupt handler)
// has room to build its error; past it allocations fail.
func headroom(limit int64) int64 { return max(limit/8, 16<<20) }

// Engine is the QuickJS engine.
type Engine struct {
	opts jsvm.Options
	// memLimit is the per-runtime limit in bytes; 0 means none.
	memLimit int64
	// nativeAsync compiles programs without lowering await (tests: QuickJS
	// parses and runs async functions and generators natively, but then
	// carries no async context across await).
	nativeAsync bool
}

// New returns the QuickJS engine with the environment opts describes.
func New(opts jsvm.Options) (*Engine, error) {
	if _, err := qjsLayout(); err != nil {
		return nil, err
	}
	if _, err := assets(); err != nil {
		return nil, fmt.Errorf("compile the render environment: %w", err)
	}
	if opts.SupportModules {
		if _, err := nodeAsset(); err != nil {
			return nil, fmt.Errorf("compile the Node environment: %w", err)
		}
	}
	limit := opts.MemoryLimit
	switch {
	case limit == 0:
		limit = jsvm.DefaultMemoryLimit
	case limit < 0:
		limit = 0
	}
	return &Engine{opts: opts, memLimit: limit}, nil
}

// Name is "quickjs".
func (e *Engine) Name() string { return Name }

// program is QuickJS's compiled form of a bundle.
type program struct {
	bytecode []byte
	// lowered: await was lowered to then by esbuild (see the package comment).
	lowered bool
}

// Compile compiles the bundle to bytecode (as the CommonJS wrapper with
// SupportModules), with await lowered.
func (e *Engine) Compile(name, path, source string) (jsvm.Program, error) {
	p := &program{}
	src := source
	if e.opts.SupportModules {
		src = transform.WrapModule(src)
	}
	if !e.nativeAsync {
		src, p.lowered = transform.LowerForQuickJS(name+".js", src)
	}
	bc, err := compile(src, name+".js")
	if err != nil {
		return nil, fmt.Errorf("compile bundle %s: %w", name, err)
	}
	p.bytecode = bc
	prog := inproc.NewProgram(name, path, e.opts.SupportModules, p, inproc.NewColumns(src, inproc.CodePoints))
	if p.lowered {
		module := e.opts.SupportModules
		prog.SetRewrites(source, inproc.Checksum(src), func(source string) (string, transform.Chain, error) {
			var chain transform.Chain
			if module {
				source, chain = transform.WrapModule(source), append(chain, transform.ModulePositions{})
			}
			code, positions, err := transform.LowerForQuickJSPositions(name+".js", source)
			if err != nil {
				return "", nil, err
			}
			return code, append(chain, positions), nil
		})
	}
	return prog, nil
}

// compile compiles global code to bytecode in a scratch VM.
func compile(source, filename string) ([]byte, error) {
	return compileStrip(source, filename, 0)
}

// compileStrip is compile leaving out what strip names
// (lib.MJS_STRIP_SOURCE: the functions' source text, which only
// Function.prototype.toString shows).
func compileStrip(source, filename string, strip int32) ([]byte, error) {
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

// The environment, compiled once per process. Its own source text is left
// out: reading the bytecode is part of every new runtime's cost.
type assetBytecode struct{ builtins, engine, bridge, env []byte }

var (
	assets = sync.OnceValues(func() (assetBytecode, error) {
		var a assetBytecode
		var err error
		if a.builtins, err = compileStrip(jsenv.Builtins, "gorender-builtins-es.js", lib.MJS_STRIP_SOURCE); err != nil {
			return a, err
		}
		if a.engine, err = compileStrip(engineSource, "gorender-quickjs.js", lib.MJS_STRIP_SOURCE); err != nil {
			return a, err
		}
		if a.bridge, err = compileStrip(jsenv.Bridge, "gorender-bridge.js", lib.MJS_STRIP_SOURCE); err != nil {
			return a, err
		}
		if a.env, err = compileStrip(jsenv.Env, "gorender-env.js", lib.MJS_STRIP_SOURCE); err != nil {
			return a, err
		}
		return a, nil
	})
	// The Node environment is not lowered: its own awaits (streams
	// internals) keep whatever context they run in, and it tells async
	// functions apart by their prototype, which lowering would change.
	nodeAsset = sync.OnceValues(func() ([]byte, error) {
		return compileStrip(jsenv.NodeEnv, "gorender-node-env.js", lib.MJS_STRIP_SOURCE)
	})
	// programAssets are jsenv.Programs, compiled on first use.
	programAssets sync.Map // name -> func() ([]byte, error)
)

// programAsset returns the bytecode of jsenv.Programs[name].
func programAsset(name string) ([]byte, error) {
	f, _ := programAssets.LoadOrStore(name, sync.OnceValues(func() ([]byte, error) {
		return compileStrip(jsenv.Programs[name], "gorender-"+name+".js", lib.MJS_STRIP_SOURCE)
	}))
	return f.(func() ([]byte, error))()
}

// Runtime is a QuickJS runtime: the render flow, and the memory its engine
// holds outside the Go heap (jsvm.MemoryReporter).
type Runtime struct {
	*inproc.Runtime[quickjs.Value]
	vm *vm
}

// MemoryUsage reports the bytes the runtime's engine had allocated outside
// the Go heap at the end of its last load or render (0 once closed). It is
// safe to call from any goroutine, also while the runtime renders.
func (r *Runtime) MemoryUsage() int64 { return r.vm.memUsed.Load() }

// NewRuntime makes a runtime with the environment installed.
func (e *Engine) NewRuntime() (jsvm.Runtime, error) {
	var v *vm
	rt, err := inproc.NewRuntime(Name, inproc.CodePoints, e.opts, func(h *inproc.Host) (inproc.VM[quickjs.Value], error) {
		var err error
		h.CapAllocations(e.memLimit)
		v, err = newVM(e, h)
		return v, err
	})
	if err != nil {
		return nil, err
	}
	return &Runtime{Runtime: rt, vm: v}, nil
}
