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
// once: the options of the environment a bundle expects (PROTOCOL.md §7),
// the request a render shares with the other evaluations of its HTTP request
// (sharedExecutionContext, runOnOtherBundle, the sink of a stream, the update
// chunks of an incremental render), and every answer text of a failed render.
package jsvm

import (
	"context"
	"log/slog"
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
	// accumulators (transform.RewriteStringBuilds) in engines whose strings
	// are flat (goja); RENDERER_REWRITE_STRING_BUILDS=false. quickjs has
	// rope strings and never rewrites.
	KeepStringBuilds bool
	// MaxAllocation bounds, in bytes, a single allocation a render makes
	// through a host function or, on goja, a built-in sized by its caller
	// (RENDERER_MAX_ALLOCATION): past it, a RangeError. 0 means
	// DefaultMaxAllocation, a negative value no bound.
	MaxAllocation int64
	// ConsoleMaxLines and ConsoleMaxBytes bound a render's console history
	// (RENDERER_CONSOLE_MAX_LINES, RENDERER_CONSOLE_MAX_BYTES): the lines
	// kept, and the text of their string arguments (in UTF-16 code units,
	// a byte each for ASCII; 8 for any other argument). Past either, the
	// history ends with one line counting what was left out. 0 means the
	// defaults, a negative value no bound.
	ConsoleMaxLines int
	ConsoleMaxBytes int64
	// RegexpMatchTimeout ends a regular expression match of goja's
	// backtracking engine that runs longer (0: none), reported to the
	// script as no match: it must be at least the longest of the render,
	// stream-idle and load deadlines, so that a match it ends belongs to a
	// render already past its deadline. (A streamed answer is checked for
	// idleness by its event loop, which does not run while a match does: a
	// stream running one match that long sees no match.) The first goja
	// engine of a process sets it for the process.
	RegexpMatchTimeout time.Duration
	// Environ is the process environment as "KEY=value" strings (as
	// os.Environ returns it), the source of process.env in the
	// Node-compatible environment (ProcessEnv); nil is an empty one.
	Environ []string
	// Node configures the node engine; the others ignore it.
	Node NodeOptions
	// Logger receives what an engine does outside any render (the node
	// engine's processes replaced); nil discards it.
	Logger *slog.Logger
	// MapStack rewrites a stack's frames from bundle positions to original
	// sources where the bundle has a source map (jsvm/sourcemap; nil: as
	// they are). getStackTrace's answer passes through it.
	MapStack func(stack string) string
}

// NodeOptions configure the node engine (RENDERER_JS_ENGINE=node), whose
// renders run in Node.js processes it starts and supervises.
type NodeOptions struct {
	// Path is the Node.js executable (RENDERER_NODE_PATH); "" looks for
	// node on PATH.
	Path string
	// Processes is how many Node.js processes run from the start
	// (RENDERER_WORKERS_COUNT), and the most one isolation group (a render
	// set: an entry bundle and its dependencies) has: at most that many of
	// its renders run at once.
	Processes int
	// MaxProcesses is the most Node.js processes all isolation groups have
	// together (RENDERER_NODE_MAX_PROCESSES); 0 is twice Processes.
	MaxProcesses int
	// QueueDepth is how many renders a process holds at once when none is
	// idle (RENDERER_NODE_QUEUE_DEPTH): the one it runs and the others
	// queued in its pipe behind it, which it starts without waiting for
	// gorender; 1: none queued.
	QueueDepth int
	// LoadTimeout bounds one bundle's evaluation in one process, whoever
	// waits for it (RENDERER_NODE_LOAD_TIMEOUT): past it the process is
	// killed. 0 is DefaultNodeLoadTimeout.
	LoadTimeout time.Duration
	// HeapLimit is each process's V8 heap limit in bytes
	// (RENDERER_NODE_HEAP_LIMIT, --max-old-space-size); 0 is V8's default.
	HeapLimit int64
	// SemiSpace is each process's V8 semi-space size in bytes, whole MiB
	// (RENDERER_NODE_SEMI_SPACE, --max-semi-space-size); 0 is V8's default.
	SemiSpace int64
	// ReadRoots are the directories the processes may read besides their
	// program (Node's permission model): the bundle cache. A bundle's own
	// fs is further confined to its directory.
	ReadRoots []string
	// MaxRenders replaces a process after that many renders
	// (RENDERER_MAX_RENDERS_PER_RUNTIME; 0: never).
	MaxRenders int
	// RestartInterval replaces every process that often, one at a time
	// RestartDelay apart (RENDERER_ALL_WORKERS_RESTART_INTERVAL and
	// RENDERER_DELAY_BETWEEN_INDIVIDUAL_WORKER_RESTARTS; 0: never).
	RestartInterval, RestartDelay time.Duration
	// SourceMapLimit is the memory the processes together may hold in
	// parsed source maps for getStackTrace (RENDERER_SOURCE_MAP_CACHE_SIZE;
	// 0: getStackTrace is not mapped), each an equal share.
	SourceMapLimit int64
	// MaxResult bounds a buffered render's result in bytes
	// (RENDERER_MAX_RESULT_SIZE): a longer one is read off the process's
	// pipe and dropped as it arrives, never held whole. 0: 1 GiB.
	MaxResult int64
}

// DefaultNodeLoadTimeout is NodeOptions.LoadTimeout when it is 0.
const DefaultNodeLoadTimeout = 60 * time.Second

// DefaultMemoryLimit is the per-runtime memory limit of engines that allocate
// outside the Go heap (quickjs) when Options.MemoryLimit is 0.
const DefaultMemoryLimit = 512 << 20

// DefaultMaxAllocation is Options.MaxAllocation when it is 0.
const DefaultMaxAllocation = 256 << 20

// The defaults of Options' console bounds.
const (
	DefaultConsoleMaxLines = 10_000
	DefaultConsoleMaxBytes = 4 << 20
)

// ConsoleBounds are the console bounds in effect, 0 for none.
func (o Options) ConsoleBounds() (lines, bytes int64) {
	bound := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return bound(int64(o.ConsoleMaxLines), DefaultConsoleMaxLines), bound(o.ConsoleMaxBytes, DefaultConsoleMaxBytes)
}

// RealTimers is the timer rule: the Node-compatible environment always has
// real timers (PROTOCOL.md §7 lists them with RENDERER_SUPPORT_MODULES);
// otherwise RENDERER_STUB_TIMERS decides.
func (o Options) RealTimers() bool { return o.SupportModules || !o.StubTimers }

// secretEnv are variables never handed to bundle code.
var secretEnv = map[string]bool{"RENDERER_PASSWORD": true}

// ProcessEnv is what bundle code sees as process.env, in the order of
// Environ: without secrets (RENDERER_PASSWORD) and without entries that are
// not KEY=value, a repeated key at its first place with its last value, and
// NODE_ENV defaulting to production (PROTOCOL.md §11).
func (o Options) ProcessEnv() [][2]string {
	var env [][2]string
	index := map[string]int{}
	for _, kv := range o.Environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || secretEnv[k] {
			continue
		}
		if i, seen := index[k]; seen {
			env[i][1] = v
			continue
		}
		index[k] = len(env)
		env = append(env, [2]string{k, v})
	}
	if _, ok := index["NODE_ENV"]; !ok {
		env = append(env, [2]string{"NODE_ENV", "production"})
	}
	return env
}

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

// BundlePositions is implemented by a Program whose engine transformed the
// bundle before compiling it (a wrapper, a lowering, string builds): the
// positions its errors report (line 1-based, column 0-based in UTF-16 code
// units, as source maps count them) go back to the
// bundle as uploaded, which source maps describe. Without this method
// positions are taken as the bundle's.
type BundlePositions interface {
	// Rewritten reports a program whose code the engine rewrote beyond the
	// CommonJS wrapper: its positions need ReplayRewrites.
	Rewritten() bool
	// BundlePosition takes a position of a program not rewritten back to
	// the bundle; ok false when it cannot.
	BundlePosition(line, column int) (int, int, bool)
	// ReplayRewrites makes the engine's rewrites again on source, the
	// bundle as uploaded, with their own position maps, and returns how the
	// program's positions go back to source and about how much memory that
	// holds.
	ReplayRewrites(source string) (back func(line, column int) (int, int, bool), cost int64, err error)
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

// Reserver is implemented by runtimes that run on executors shared
// between runtimes (the node engine's processes, each of which runs one
// render at a time). Reserve waits until an executor is free for the
// runtime's next Eval, whose request's Runtimes are the runtime and with
// (its dependency bundles' runtimes: the render set, which an executor is
// bound to); Unreserve gives it back. The pools call them around each
// lease of a render's entry runtime, within the queue timeout, so that
// waiting for an executor is queueing (answered 503 when it lasts too
// long), not rendering. An Eval without a reservation reserves by itself.
type Reserver interface {
	Reserve(ctx context.Context, with []Runtime) error
	Unreserve()
}

// ProgramCloser is implemented by programs that hold resources outside
// their runtimes (the node engine's processes keep a bundle's context
// until no runtime of it is left): the pools call Close when they let go
// of the bundle (eviction, shutdown).
type ProgramCloser interface {
	Close()
}

// ProcessReporter is implemented by engines that run renders in processes
// of their own (node), for metrics: it may be called at any time.
type ProcessReporter interface {
	// Processes are the processes running now.
	Processes() []ProcessStats
	// ProcessRestarts counts the processes replaced so far, by reason.
	ProcessRestarts() map[string]uint64
}

// InfoReporter is implemented by engines with facts of their own for /info
// (PROTOCOL.md §9): the node engine's Node.js version, which takes the
// place of the Go version in node_version, and the confinement of its
// processes.
type InfoReporter interface {
	// Info are /info's fields, by name, that the engine sets.
	Info() map[string]string
}

// ProcessStats is one engine process.
type ProcessStats struct {
	Slot    int   // its place among the engine's processes, 0 to MaxProcesses-1
	PID     int   // its operating-system process id
	RSS     int64 // resident memory in bytes (0 where unknown)
	Renders int   // renders it ran
	Bundles int   // bundles loaded in it
	Busy    bool  // running a render or a load now
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
// which runOnOtherBundle and update chunks call into; and, for streamed
// answers, where the bytes go. The runtimes of one request are all of one
// engine and are used on the goroutine of the request's render only.
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
	// Deadline is when the render deadline passes (the worker's
	// RENDERER_RENDER_TIMEOUT from the render's start; zero: none). An
	// engine that can let a render whose caller left finish in the
	// background (node) does so only until then.
	Deadline time.Time
	// Started, when set, is called once the render starts, by runtimes
	// whose renders may wait inside the engine after Eval is called
	// (Queuer): the worker runs the render deadline from then.
	Started func()

	nested int // runOnOtherBundle calls in progress (NestRunOnOther)
}

// NestRunOnOther counts a runOnOtherBundle call of the request starting
// (UnnestRunOnOther counts its end); false, counting nothing, when it would
// nest deeper than MaxRunOnOtherDepth. The request's runtimes call it on
// its render's goroutine.
func (r *Request) NestRunOnOther() bool {
	if r.nested >= MaxRunOnOtherDepth {
		return false
	}
	r.nested++
	return true
}

// UnnestRunOnOther counts the end of a call NestRunOnOther counted.
func (r *Request) UnnestRunOnOther() {
	if r.nested > 0 {
		r.nested--
	}
}

// Queuer is implemented by runtimes whose renders may wait inside the
// engine after Eval is called (a node process finishing another render:
// RENDERER_NODE_QUEUE_DEPTH). Their Eval calls Request.Started when the
// render starts; until then the wait is the caller's to bound.
type Queuer interface {
	QueuesRenders() bool
}

// NewRequest returns a Request over the given runtimes with an empty shared context.
func NewRequest(runtimes map[string]Runtime) *Request {
	return &Request{Shared: NewSharedContext(), Runtimes: runtimes}
}
