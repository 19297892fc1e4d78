// Package jsvm runs JavaScript for renders: one runtime per goroutine, with the
// environment a React on Rails server bundle expects (PROTOCOL.md §7).
//
// The engine is hidden behind Engine and Runtime so that nothing outside this
// package imports an engine package. The JavaScript half of the environment
// (console capture, stub timers, per-render globals) is shared JS in env.js;
// only the thin host layer is per engine.
package jsvm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Options configures the environment every runtime of an engine offers.
type Options struct {
	// StubTimers makes setTimeout and friends no-ops (RENDERER_STUB_TIMERS).
	StubTimers bool
	// SupportModules asks for the Node-compatible environment
	// (RENDERER_SUPPORT_MODULES): Node and Web globals, the bundle evaluated
	// as a CommonJS module with a require serving Node built-ins, and real
	// timers whatever StubTimers says (upstream offers real timers there).
	SupportModules bool
	// ReplayAsyncLogs keeps console output of a render's asynchronous part
	// (after its synchronous evaluation returned) in the render's console
	// history (REPLAY_SERVER_ASYNC_OPERATION_LOGS). Off, console.history
	// starts afresh after the synchronous part, as upstream does, and what
	// the asynchronous part logs is not replayed.
	ReplayAsyncLogs bool
	// MemoryLimit bounds, in bytes, the memory each runtime of an engine
	// that allocates outside the Go heap (quickjs) may use; 0 means
	// DefaultMemoryLimit, a negative value no limit. A render that passes it
	// fails like a timeout and its runtime is replaced. goja's memory is the
	// Go heap's (GOMEMLIMIT, RENDERER_MAX_HEAP) and ignores it.
	MemoryLimit int64
	// KeepStringBuilds turns off the load-time rewrite of quadratic string
	// accumulators (RewriteStringBuilds) in engines whose strings are flat
	// (goja); RENDERER_REWRITE_STRING_BUILDS=false. quickjs has rope strings
	// and never rewrites.
	KeepStringBuilds bool
}

// Engines are the names NewEngine accepts, the default first.
var Engines = []string{"goja", "quickjs"}

// NewEngine returns the engine named name: "goja" (or "" for the default)
// or "quickjs".
func NewEngine(name string, opts Options) (Engine, error) {
	switch name {
	case "", "goja":
		return newGojaEngine(opts)
	case "quickjs":
		return newQuickJSEngine(opts)
	default:
		return nil, fmt.Errorf("unknown JavaScript engine %q (supported: %s)", name, strings.Join(Engines, ", "))
	}
}

// Engine compiles bundles and makes runtimes. An Engine is safe for
// concurrent use; the runtimes it makes are not.
type Engine interface {
	// Name is the engine's name as reported in /info and logs ("goja",
	// "quickjs").
	Name() string
	// Compile parses a bundle once; the Program may be loaded by many runtimes
	// on different goroutines. name is the bundle id, used in stack traces;
	// path is the bundle file (<cache>/<id>/<id>.js), or "" when it is not on
	// disk: with SupportModules it is __filename, and fs reads only its
	// directory.
	Compile(name, path, source string) (Program, error)
	// NewRuntime makes a runtime with the environment installed and no bundle.
	NewRuntime() (Runtime, error)
}

// Program is a compiled bundle.
type Program interface {
	// Name is the bundle id the program was compiled for.
	Name() string
}

// Runtime is one JavaScript global environment holding one loaded bundle.
// It must be used by one goroutine at a time; Interrupt may be called from any.
type Runtime interface {
	// Load evaluates the bundle in this runtime's global environment.
	Load(ctx context.Context, p Program) error
	// Eval evaluates a rendering request and turns its completion value into a
	// Result. Errors are *RenderError.
	Eval(ctx context.Context, code string, req *Request) (Result, error)
	// Broken reports that the runtime must not be used again (it was
	// interrupted, overflowed its stack or failed inside the host layer).
	Broken() bool
	// Close releases the runtime.
	Close()
}

// MemoryReporter is implemented by runtimes whose engine allocates outside
// the Go heap (quickjs), which GOMEMLIMIT and Go's memory statistics do not
// see: MemoryUsage is the bytes the runtime's engine held at the end of its
// last load or render. Unlike the rest of Runtime, it may be called from any
// goroutine at any time (metrics scrapes).
type MemoryReporter interface {
	MemoryUsage() int64
}

// Result is the answer of a successful render.
type Result struct {
	// Body is the render's output, sent verbatim (empty when Streamed).
	Body string
	// Streamed reports that the output went to the request's Sink.
	Streamed bool
}

// Request is what one HTTP request shares across all its evaluations: the
// sharedExecutionContext and the runtimes of its bundle set, by bundle id,
// which runOnOtherBundle calls into; and, for streamed answers, where the
// bytes go.
type Request struct {
	Shared   *SharedContext
	Runtimes map[string]Runtime
	// Sink receives a stream result; without one a stream is an error.
	Sink Sink
	// StreamIdle ends a stream that produces nothing (and receives no
	// update) for this long; 0 means no limit.
	StreamIdle time.Duration
	// Updates feeds an incremental render's update chunks; nil for others.
	Updates *Updates
}

// NewRequest returns a Request over the given runtimes with an empty shared context.
func NewRequest(runtimes map[string]Runtime) *Request {
	return &Request{Shared: NewSharedContext(), Runtimes: runtimes}
}

// ErrorKind classifies a failed render for the answer and for metrics.
type ErrorKind int

const (
	// KindJS is a thrown error, a rejected promise or a syntax error.
	KindJS ErrorKind = iota
	// KindNilResult is a falsy completion value.
	KindNilResult
	// KindTimeout is a render interrupted at its deadline.
	KindTimeout
	// KindUnsupported is a result gorender cannot answer yet.
	KindUnsupported
	// KindCanceled is a render stopped because its request went away.
	KindCanceled
)

// String returns the kind's metric label.
func (k ErrorKind) String() string {
	switch k {
	case KindJS:
		return "js_error"
	case KindNilResult:
		return "nil_result"
	case KindTimeout:
		return "timeout"
	case KindUnsupported:
		return "unsupported"
	case KindCanceled:
		return "canceled"
	}
	return "unknown"
}

// RenderError is a render that failed in JavaScript; Text is the answer's body.
type RenderError struct {
	Kind ErrorKind
	Text string
}

func (e *RenderError) Error() string { return e.Text }

// ErrInterrupted is the reason given to an engine's interrupt when a
// render's context ends.
var ErrInterrupted = errors.New("render interrupted")

// DeadlineError is the cause a caller gives when it cancels a render's
// context at its deadline (context.WithCancelCause): the render is then
// answered as timed out after Limit.
type DeadlineError struct{ Limit time.Duration }

func (e *DeadlineError) Error() string { return fmt.Sprintf("render deadline of %s passed", e.Limit) }

// TimeoutText is the answer's body for a render stopped at its deadline.
func TimeoutText(limit time.Duration) string {
	return fmt.Sprintf("Render timed out after %s: the rendering request was interrupted and its JavaScript runtime replaced.", limit)
}

// interruptedError is the error of a render stopped because ctx ended:
// a timeout when its deadline passed, else a cancellation.
func interruptedError(ctx context.Context, started time.Time) *RenderError {
	var deadline *DeadlineError
	if errors.As(context.Cause(ctx), &deadline) {
		return &RenderError{Kind: KindTimeout, Text: TimeoutText(deadline.Limit)}
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &RenderError{Kind: KindCanceled, Text: "Render canceled: the request went away."}
	}
	limit := time.Since(started)
	if d, ok := ctx.Deadline(); ok {
		limit = d.Sub(started)
	}
	// Rounded up: the deadline was set a moment before the render started.
	limit = (limit + time.Millisecond - 1).Truncate(time.Millisecond)
	return &RenderError{Kind: KindTimeout, Text: TimeoutText(limit)}
}
