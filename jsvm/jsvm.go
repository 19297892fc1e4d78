// Package jsvm is the boundary between gorender and the JavaScript engines
// that run its renders, as database/sql/driver is between database/sql and
// its drivers: package worker sees only the interfaces declared here ("load
// this bundle", "evaluate this request, with this context, streaming into
// this sink"), every engine implements them in a package of its own
// (jsvm/gojaengine, jsvm/quickjsengine), and jsvm/engines picks one by name.
// The engines that run JavaScript in gorender's process share one render
// flow above their primitives (jsvm/inproc); an engine that runs it
// elsewhere implements Engine and Runtime directly.
//
// Everything that must read the same whatever the engine is declared here
// once, a file a subject: the interfaces every engine implements (this
// file) and the optional ones an engine implements where it can
// (optional.go); the options of the environment a bundle expects,
// PROTOCOL.md §7 (options.go); the request a render shares with the other
// evaluations of its HTTP request (request.go: Request and the Sink of a
// stream; sharedcontext.go: sharedExecutionContext; updates.go: the update
// chunks of an incremental render); and every answer text of a failed
// render (answers.go).
package jsvm

import "context"

// Engine compiles bundles and makes runtimes. An Engine is safe for
// concurrent use; the runtimes it makes are not.
type Engine interface {
	// Name is the engine's name as reported in /info and logs ("goja",
	// "quickjs", "node").
	Name() string
	// Compile parses a bundle once; the Program may be loaded by many runtimes
	// on different goroutines. name is the bundle id, used in stack traces;
	// path is the bundle file (<cache>/<id>/<id>.js), or "" when it is not on
	// disk: with SupportModules it is __filename, and fs reads only its
	// directory. A syntax error is an error naming the bundle.
	Compile(name, path, source string) (Program, error)
	// NewRuntime makes a runtime with the environment installed and no bundle.
	NewRuntime() (Runtime, error)
}

// Program is a compiled bundle, loadable by the runtimes of the engine that
// compiled it.
type Program interface {
	// Name is the bundle id the program was compiled for.
	Name() string
}

// Runtime is one JavaScript global environment holding one loaded bundle.
// It must be used by one goroutine at a time: Load, Eval and Close are never
// called concurrently, and the engine may rely on that.
type Runtime interface {
	// Load evaluates the bundle in this runtime's global environment. Work
	// the bundle schedules for now (0 ms timers, immediates) runs; later
	// timers are cancelled. An error describes the failure for a log line
	// (message and stack); if ctx ended the runtime is Broken.
	Load(ctx context.Context, p Program) error
	// Eval evaluates a rendering request and turns its completion value into
	// a Result (PROTOCOL.md §5): a string as it is, a promise awaited, a
	// stream streamed into req.Sink, anything else JSON-stringified. When
	// ctx ends the render stops (the answer is a timeout if ctx's cause is a
	// *DeadlineError, else canceled). Errors are *RenderError, except for a
	// runtime already Broken. Nothing of one render (timers, per-render
	// globals) is left for the next.
	Eval(ctx context.Context, code string, req *Request) (Result, error)
	// Broken reports that the runtime must not be used again (it was
	// interrupted, passed a limit or failed inside the host layer).
	Broken() bool
	// Close releases the runtime. It may be called once, on the goroutine
	// that used the runtime, also while nothing else uses it.
	Close()
}

// Result is the answer of a successful render.
type Result struct {
	// Body is the render's output, sent verbatim (empty when Streamed).
	Body string
	// Streamed reports that the output went to the request's Sink.
	Streamed bool
}
