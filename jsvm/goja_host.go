package jsvm

// The goja host layer: the host object env.js and the Node environment call
// (see the host contracts at the top of env.js and node/src/index.js). It only
// converts values; the work is in host.go and eventloop.go.

import (
	_ "embed"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/gorender/gorender/jsvm/jsenv"
	"github.com/gorender/gorender/jsvm/transform"
)

// The environments are compiled once per process and shared by every
// runtime of every engine.
var (
	envProgram = sync.OnceValues(func() (*goja.Program, error) {
		return goja.Compile("gorender-env.js", jsenv.Env, true)
	})
	nodeEnvProgram = sync.OnceValues(func() (*goja.Program, error) {
		return goja.Compile("gorender-node-env.js", jsenv.NodeEnv, false)
	})
)

// gojaTracker carries the async context (an opaque JS value env.js owns)
// across promise jobs: captured when a reaction is scheduled, restored while
// it runs.
type gojaTracker struct{ r *gojaRuntime }

func (t gojaTracker) Grab() any {
	return t.r.asyncCtx
}

func (t gojaTracker) Resumed(v any) {
	t.r.asyncCtx, _ = v.(goja.Value)
	t.r.inJob = true
}

func (t gojaTracker) Exited() {
	t.r.asyncCtx = nil
	t.r.inJob = false
}

// hostObject builds the host object for env.js, plus the Node environment's
// functions when node is true.
func (r *gojaRuntime) hostObject(node bool) *goja.Object {
	vm := r.vm
	h := vm.NewObject()
	set := func(name string, fn func(goja.FunctionCall) goja.Value) {
		if err := h.Set(name, fn); err != nil {
			panic(err)
		}
	}
	undefined := goja.Undefined()
	_ = h.Set("engine", "goja")

	set("getAsyncContext", func(goja.FunctionCall) goja.Value {
		if r.asyncCtx == nil {
			return undefined
		}
		return r.asyncCtx
	})
	set("setAsyncContext", func(c goja.FunctionCall) goja.Value {
		v := c.Argument(0)
		if goja.IsUndefined(v) {
			r.asyncCtx = nil
		} else {
			r.asyncCtx = v
		}
		return undefined
	})
	set("inAsyncJob", func(goja.FunctionCall) goja.Value { return vm.ToValue(r.inJob) })
	r.bindIntl(set)
	set("reportError", func(c goja.FunctionCall) goja.Value {
		if r.uncaught == nil {
			r.uncaught = c.Argument(0)
		}
		return undefined
	})
	set("rewriteRegExp", func(c goja.FunctionCall) goja.Value {
		out, err := transform.RewritePropertyEscapes(c.Argument(0).String())
		if err != nil {
			panic(r.newError("SyntaxError", err.Error()))
		}
		return vm.ToValue(out)
	})

	if r.loop != nil {
		loop := r.loop
		set("setTimer", func(c goja.FunctionCall) goja.Value {
			fn, ok := goja.AssertFunction(c.Argument(0))
			if !ok {
				panic(vm.NewTypeError("setTimer: not a function"))
			}
			ms := c.Argument(1).ToFloat()
			d := time.Duration(ms * float64(time.Millisecond))
			id := loop.SetTimer(d, c.Argument(2).ToBoolean(), func() error {
				_, err := fn(undefined)
				return err
			})
			return vm.ToValue(id)
		})
		set("setImmediate", func(c goja.FunctionCall) goja.Value {
			fn, ok := goja.AssertFunction(c.Argument(0))
			if !ok {
				panic(vm.NewTypeError("setImmediate: not a function"))
			}
			return vm.ToValue(loop.SetImmediate(func() error {
				_, err := fn(undefined)
				return err
			}))
		})
		set("clearTimer", func(c goja.FunctionCall) goja.Value {
			loop.ClearTimer(c.Argument(0).ToInteger())
			return undefined
		})
		set("timerRef", func(c goja.FunctionCall) goja.Value {
			loop.SetRef(c.Argument(0).ToInteger(), c.Argument(1).ToBoolean())
			return undefined
		})
		set("timerHasRef", func(c goja.FunctionCall) goja.Value {
			return vm.ToValue(loop.HasRef(c.Argument(0).ToInteger()))
		})
		set("timerRefresh", func(c goja.FunctionCall) goja.Value {
			loop.RefreshTimer(c.Argument(0).ToInteger())
			return undefined
		})
	}
	if !node {
		return h
	}

	// Process facts and clocks.
	set("processEnv", func(goja.FunctionCall) goja.Value {
		env := vm.NewObject()
		for _, kv := range r.engine.opts.ProcessEnv() {
			_ = env.Set(kv[0], kv[1])
		}
		return env
	})
	set("processInfo", func(goja.FunctionCall) goja.Value {
		return vm.NewArray(nodeCompatVersion, runtime.GOOS, nodeArch(), os.Getpid(), "goja")
	})
	set("hrtime", func(goja.FunctionCall) goja.Value {
		ns := time.Since(processStart).Nanoseconds()
		return vm.NewArray(ns/1e9, ns%1e9)
	})
	set("now", func(goja.FunctionCall) goja.Value {
		return vm.ToValue(float64(time.Since(processStart).Nanoseconds()) / 1e6)
	})
	_ = h.Set("timeOrigin", float64(processStart.UnixNano())/1e6)

	// The bundle's read-only file system.
	set("fsRead", func(c goja.FunctionCall) goja.Value {
		b, ferr := r.fs.readFile(c.Argument(0).String())
		if ferr != nil {
			panic(r.fsError(ferr))
		}
		return vm.ToValue(vm.NewArrayBuffer(b))
	})
	set("fsReadText", func(c goja.FunctionCall) goja.Value {
		b, ferr := r.fs.readFile(c.Argument(0).String())
		if ferr != nil {
			panic(r.fsError(ferr))
		}
		text, _, _ := utf8Decode(nil, b, false, false)
		return vm.ToValue(text)
	})
	set("fsStat", func(c goja.FunctionCall) goja.Value {
		st, ferr := r.fs.stat(c.Argument(0).String())
		if ferr != nil {
			panic(r.fsError(ferr))
		}
		return vm.NewArray(st.IsDir, st.Size, st.Mode, st.MtimeMs)
	})
	set("fsReaddir", func(c goja.FunctionCall) goja.Value {
		entries, ferr := r.fs.readDir(c.Argument(0).String())
		if ferr != nil {
			panic(r.fsError(ferr))
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		out := make([]any, len(entries))
		for i, e := range entries {
			out[i] = vm.NewArray(e.Name, e.IsDir)
		}
		return vm.NewArray(out...)
	})
	set("fsRealpath", func(c goja.FunctionCall) goja.Value {
		p, ferr := r.fs.realpath(c.Argument(0).String())
		if ferr != nil {
			panic(r.fsError(ferr))
		}
		return vm.ToValue(p)
	})
	set("compileModule", func(c goja.FunctionCall) goja.Value {
		filename := c.Argument(1).String()
		src := c.Argument(0).String()
		prg, err := compileModule(filepath.Base(filename), src)
		if err != nil {
			panic(r.newError("SyntaxError", err.Error()))
		}
		v, err := vm.RunProgram(prg)
		if err != nil {
			panic(err)
		}
		return v
	})

	// Crypto.
	set("randomBytes", func(c goja.FunctionCall) goja.Value {
		return vm.ToValue(vm.NewArrayBuffer(randomBytes(int(c.Argument(0).ToInteger()))))
	})
	set("randomUUID", func(goja.FunctionCall) goja.Value { return vm.ToValue(randomUUID()) })
	set("hash", func(c goja.FunctionCall) goja.Value {
		var key []byte
		if k, ok := c.Argument(1).Export().(goja.ArrayBuffer); ok {
			key = k.Bytes()
		}
		h, ok := newHash(c.Argument(0).String(), key)
		if !ok {
			panic(r.newError("Error", "Digest method not supported"))
		}
		data, ok := c.Argument(2).Export().(goja.ArrayBuffer)
		if !ok {
			return undefined
		}
		h.Write(data.Bytes())
		return vm.ToValue(vm.NewArrayBuffer(h.Sum(nil)))
	})

	// UTF-8.
	set("utf8Encode", func(c goja.FunctionCall) goja.Value {
		return vm.ToValue(vm.NewArrayBuffer([]byte(c.Argument(0).String())))
	})
	set("utf8Length", func(c goja.FunctionCall) goja.Value {
		return vm.ToValue(len(c.Argument(0).String()))
	})
	// The destination is the Uint8Array itself, whose export aliases its
	// bytes: reading .buffer, .byteOffset and .byteLength in JavaScript
	// costs more in goja than the encoding (React's streaming renderers
	// call this once per chunk).
	set("utf8EncodeInto", func(c goja.FunctionCall) goja.Value {
		b, ok := c.Argument(1).Export().([]byte)
		if !ok {
			panic(vm.NewTypeError("encodeInto: destination is not a Uint8Array"))
		}
		read, written := utf8EncodeInto(c.Argument(0).String(), b)
		return vm.NewArray(read, written)
	})
	set("utf8Decode", func(c goja.FunctionCall) goja.Value {
		var chunk []byte
		if buf, ok := c.Argument(0).Export().(goja.ArrayBuffer); ok {
			b := buf.Bytes()
			off, n := int(c.Argument(1).ToInteger()), int(c.Argument(2).ToInteger())
			if off < 0 || n < 0 || off+n > len(b) {
				panic(vm.NewTypeError("decode: input out of range"))
			}
			chunk = b[off : off+n]
		}
		var pending []byte
		if p, ok := c.Argument(3).(*goja.Object); ok {
			for _, v := range p.Export().([]any) {
				pending = append(pending, byte(toInt64(v)))
			}
		}
		text, rest, ok := utf8Decode(pending, chunk, c.Argument(4).ToBoolean(), c.Argument(5).ToBoolean())
		if !ok {
			return goja.Null()
		}
		var restValue goja.Value = goja.Null()
		if len(rest) > 0 {
			items := make([]any, len(rest))
			for i, b := range rest {
				items[i] = int(b)
			}
			restValue = vm.NewArray(items...)
		}
		return vm.NewArray(text, restValue)
	})
	return h
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

// newError makes a JS error of the named constructor.
func (r *gojaRuntime) newError(ctor, message string) *goja.Object {
	c, ok := goja.AssertConstructor(r.vm.Get(ctor))
	if !ok {
		return r.vm.NewTypeError(message)
	}
	o, err := c(nil, r.vm.ToValue(message))
	if err != nil {
		return r.vm.NewTypeError(message)
	}
	return o
}

// fsError makes the Node-style Error of a failed file system call.
func (r *gojaRuntime) fsError(e *fsError) *goja.Object {
	o := r.newError("Error", e.Message)
	_ = o.Set("errno", e.Errno)
	_ = o.Set("code", e.Code)
	_ = o.Set("syscall", e.Syscall)
	_ = o.Set("path", e.Path)
	return o
}

// compileModule compiles a CommonJS module's source as the wrapper function
// Node uses, keeping line numbers (the header shares the first line).
func compileModule(name, source string) (*goja.Program, error) {
	return goja.Compile(name, transform.WrapModule(source), false)
}
