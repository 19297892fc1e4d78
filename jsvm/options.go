package jsvm

import (
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
	// OnCrash, when set, is told of a process that ended other than by
	// gorender's choice (reason crash, oom, protocol or bundle_fault; exit
	// how it ended): the error trackers report it.
	OnCrash func(slot, pid int, reason, exit string)
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

// secretEnv are gorender's variables that hold credentials: the password
// and the error trackers' keys; with every OTEL_EXPORTER_OTLP_*HEADERS
// (secretEnvRule: the OTLP exporters' headers carry a vendor's API key).
// Bundle code never sees them. The application's own variables are not
// hidden: bundles read process.env as under Node
// (PROTOCOL.md §11).
var secretEnv = map[string]bool{
	"RENDERER_PASSWORD":   true,
	"SENTRY_DSN":          true,
	"HONEYBADGER_API_KEY": true,
}

// SecretEnv reports whether the variable named k holds a credential of
// gorender's that bundle code must never see (ProcessEnv leaves it out; so
// does the node engine's process environment).
func SecretEnv(k string) bool {
	return secretEnv[k] || strings.HasPrefix(k, "OTEL_EXPORTER_OTLP_") && strings.HasSuffix(k, "HEADERS")
}

// ProcessEnv is what bundle code sees as process.env, in the order of
// Environ: without secrets (SecretEnv) and without entries that are
// not KEY=value, a repeated key at its first place with its last value, and
// NODE_ENV defaulting to production (PROTOCOL.md §11).
func (o Options) ProcessEnv() [][2]string {
	var env [][2]string
	index := map[string]int{}
	for _, kv := range o.Environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || SecretEnv(k) {
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
