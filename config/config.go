// Package config is gorender's configuration: one table of settings read
// from the environment (PROTOCOL.md §11) and flags, validated at start with
// every error at once, and the Go runtime settings it plans (ApplyRuntime).
package config

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/gorender/gorender/auth"
	"github.com/gorender/gorender/bundles"
	"github.com/gorender/gorender/errtrack"
	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/engines"
	"github.com/gorender/gorender/tracing"
)

// Config is everything gorender is configured with, read once at start from
// the environment (PROTOCOL.md §11) and flags, and validated. Each field is
// set by a row of settings.
type Config struct {
	Host         string
	Port         int
	Password     string `json:"-"`
	CachePath    string
	WorkersCount int
	LogLevel     slog.Level
	LogSilent    bool
	// LogFormat is RENDERER_LOG_FORMAT: LogJSON, LogText, or "" for text
	// when stderr is a terminal and JSON otherwise (the command decides).
	LogFormat       string
	LogHTTPLevel    slog.Level
	SupportModules  bool
	StubTimers      bool
	MaxVMPoolSize   int
	DrainTimeout    time.Duration
	RenderTimeout   time.Duration
	QueueTimeout    time.Duration
	ShutdownTimeout time.Duration
	// StreamIdleTimeout ends a streamed answer that produces nothing for this long.
	StreamIdleTimeout time.Duration
	// WriteTimeout ends an answer whose client takes none of its bytes for
	// this long.
	WriteTimeout time.Duration
	// BodyReadTimeout is the longest wait for the next bytes of a request
	// body; AuthTimeout how long a request may take to authenticate.
	BodyReadTimeout, AuthTimeout time.Duration
	// MaxConnections caps the client connections open at once,
	// MaxUnauthenticatedConnections those of them that never authenticated.
	MaxConnections, MaxUnauthenticatedConnections int
	// MaxBodySize, MaxFieldSize and MaxParts bound a request body
	// (PROTOCOL.md §12).
	MaxBodySize, MaxFieldSize int64
	MaxParts                  int
	// MaxHeaderSize bounds a request's header fields, HeaderTimeout the
	// time to receive them, IdleTimeout a connection without requests.
	MaxHeaderSize              int64
	HeaderTimeout, IdleTimeout time.Duration
	// MaxConcurrentStreams bounds the requests at once on one h2c connection.
	MaxConcurrentStreams int
	// IncrementalLineTimeout and PullModeIdleTimeout are the incremental
	// route's windows (PROTOCOL.md §8).
	IncrementalLineTimeout, PullModeIdleTimeout time.Duration
	// MaxConnectionAge closes a client connection gracefully once it is
	// that old (±10%), at its next answer, so that long-lived h2c
	// connections rebalance across replicas (0: never).
	MaxConnectionAge time.Duration
	// CacheMaxSize bounds the bundle cache: least recently used bundles
	// that are not in use are pruned beyond it (bytes; 0: no limit).
	CacheMaxSize uint64
	// SourceMapCacheSize bounds the memory of parsed source maps (0: errors
	// are not mapped to original sources).
	SourceMapCacheSize uint64
	// GenerationManifest is the absolute path of a pre-seed declaration
	// whose bundles are loaded at start (RENDERER_CURRENT_GENERATION_MANIFEST).
	GenerationManifest string
	// MaxRendersPerRuntime recycles a runtime after that many renders (0: never).
	MaxRendersPerRuntime int
	// MaxResultSize bounds a buffered render's result (bytes; 0: none).
	MaxResultSize uint64
	// ConsoleMaxLines and ConsoleMaxBytes bound a render's console
	// history (negative: none; jsvm.Options).
	ConsoleMaxLines int
	ConsoleMaxBytes int64
	// MaxQuarantined bounds the runtimes given up as stuck that may still
	// run (worker.Config.MaxQuarantined); by default the CPUs.
	MaxQuarantined int
	// RecycleInterval, RecycleDelay and RecycleGrace map upstream's
	// scheduled worker restarts onto recycling runtimes one at a time.
	RecycleInterval, RecycleDelay, RecycleGrace time.Duration
	// MaxHeap is the memory guard's bound on the Go heap (0: off); by
	// default 80% of the container's memory limit, when there is one.
	MaxHeap uint64
	// MaxAllocation bounds a single allocation a render makes through a
	// host function or a built-in sized by its caller (bytes; negative:
	// none; jsvm.Options.MaxAllocation).
	MaxAllocation int64
	// QuickJSMemoryLimit bounds each quickjs runtime's own memory, outside
	// the Go heap (bytes; negative: no limit).
	QuickJSMemoryLimit int64
	// UnauthenticatedBudget bounds the body bytes, process-wide, of requests
	// whose password is not checked yet (handlers.Budget).
	UnauthenticatedBudget int64
	// MemoryLimit is the Go runtime's soft memory limit and where it came
	// from (GOMEMLIMIT or the cgroup); ApplyRuntime sets it.
	MemoryLimit       uint64
	MemoryLimitSource string
	// GCPercent is the Go collector's GOGC (negative: off); gorender's
	// default is 200, see parseGCPercent. ApplyRuntime sets it.
	GCPercent int
	// Procs is GOMAXPROCS: the variable, else the CPUs but at least
	// minProcs; ApplyRuntime sets it.
	Procs   int
	Metrics bool
	// Tracing is the OpenTelemetry trace export (the OTEL_* rows): off
	// unless an OTLP endpoint or OTEL_TRACES_EXPORTER=otlp is set.
	Tracing tracing.Config
	// ErrorTracking is where errors are reported (the SENTRY_* and
	// HONEYBADGER_* rows): off unless a DSN or an API key is set.
	ErrorTracking errtrack.Config
	// JSEngine is the engine that runs the JavaScript: RENDERER_JS_ENGINE,
	// auto resolved; JSEngineChoice says why auto chose it ("" when pinned).
	JSEngine, JSEngineChoice string
	// RewriteStringBuilds turns react-dom's quadratic `html += chunk`
	// builds into array joins when goja loads a bundle
	// (RENDERER_REWRITE_STRING_BUILDS, default true).
	RewriteStringBuilds bool
	ReplayAsyncLogs     bool
	// Environ is the process environment ("NAME=value"), set by the
	// command: the source of process.env in the Node-compatible
	// environment (the engine leaves the password out). Never logged.
	Environ []string `json:"-"`
	// NodePath is the node engine's Node.js executable ("": node on PATH).
	NodePath string
	// NodeHeapLimit is each node engine process's V8 heap limit in bytes
	// (0: V8's default).
	NodeHeapLimit uint64
	// NodeSemiSpace is each node engine process's V8 semi-space size in
	// bytes, the young generation's half (0: V8's default).
	NodeSemiSpace uint64
	// NodeMaxProcesses is the most node engine processes alive at once,
	// all isolation groups together.
	NodeMaxProcesses int
	// NodeQueueDepth is how many renders a node engine process holds at
	// once when none is idle: the one it runs and the others queued in its
	// pipe behind it (1: none queued).
	NodeQueueDepth int
	// NodeLoadTimeout bounds one bundle's evaluation in one node engine
	// process; past it the process is killed.
	NodeLoadTimeout time.Duration
	// Warnings are problems that do not stop the start (a weak password,
	// a deprecated name, a value upstream reads in a surprising way), to
	// be logged once at start. They never contain the password.
	Warnings []string
}

// Addr is the listen address.
func (c *Config) Addr() string { return fmt.Sprintf("%s:%d", c.Host, c.Port) }

// Load reads the configuration from getenv and the -p flag value
// (portFlag, 0 when absent): each row of settings in order, then the rules
// that span rows. It changes nothing outside the Config it returns (see
// ApplyRuntime) and reports every problem at once.
func Load(getenv func(string) string, portFlag int) (*Config, error) {
	l := &loader{c: &Config{}, getenv: getenv}
	var errs []error
	for _, s := range settings {
		v := getenv(s.Name)
		if v == "" {
			v = s.Default
		}
		if err := s.Value.parse(l, v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", named(s.Name, getenv(s.Name)), err))
		}
		if l.concurrency != "" {
			if err := s.Value.parse(l, l.concurrency); err != nil {
				errs = append(errs, fmt.Errorf("NODE_RENDERER_CONCURRENCY=%q (read as RENDERER_WORKERS_COUNT, which is unset): %w", l.concurrency, err))
			}
			l.concurrency = ""
		}
	}
	c := l.c
	if portFlag != 0 {
		c.Port = portFlag
	}
	if (getenv("RENDERER_ALL_WORKERS_RESTART_INTERVAL") == "") != (getenv("RENDERER_DELAY_BETWEEN_INDIVIDUAL_WORKER_RESTARTS") == "") {
		errs = append(errs, errors.New("RENDERER_ALL_WORKERS_RESTART_INTERVAL and RENDERER_DELAY_BETWEEN_INDIVIDUAL_WORKER_RESTARTS go together: set both or neither"))
	}
	if c.CacheMaxSize > 0 && !bundles.DirLocks {
		errs = append(errs, errors.New("RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE needs flock(2) to prune safely, which this platform lacks: unset it"))
	}
	warnings, err := auth.StartupPolicy(c.Password, getenv)
	if err != nil {
		errs = append(errs, err)
	}
	c.Warnings = append(c.Warnings, warnings...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid configuration: %w", errors.Join(errs...))
	}
	return c, nil
}

// The values of RENDERER_LOG_FORMAT.
const (
	LogJSON = "json"
	LogText = "text"
)

// loader is the state of one Load.
type loader struct {
	c      *Config
	getenv func(string) string
	// engine is the engine RENDERER_JS_ENGINE resolves to, once a row
	// asked (jsEngine); why says why when it was chosen (auto).
	engine, why string
	// concurrency is NODE_RENDERER_CONCURRENCY when it stands in for an
	// unset RENDERER_WORKERS_COUNT (read by Load, errors named after it).
	concurrency string
}

// jsEngine is the engine the configuration runs, RENDERER_JS_ENGINE
// resolved (engines.Choose runs Node.js once for auto): rows above its own
// plan by it (GOMAXPROCS). "" with an invalid value, which its row reports.
func (l *loader) jsEngine() string {
	if l.engine != "" {
		return l.engine
	}
	switch v := cmp.Or(l.getenv("RENDERER_JS_ENGINE"), engines.Auto); {
	case v == engines.Auto:
		l.engine, l.why = engines.Choose(l.getenv("RENDERER_NODE_PATH"))
	case slices.Contains(engines.Names, v):
		l.engine = v
	}
	return l.engine
}

// named is a variable as an error names it: NAME="value", or for a
// credential (jsvm.SecretEnv) only that it is set, never its value.
func named(name, v string) string {
	if jsvm.SecretEnv(name) {
		if v == "" {
			return name + " (unset)"
		}
		return name + " (set; its value is not shown)"
	}
	return fmt.Sprintf("%s=%q", name, v)
}

func (l *loader) warn(format string, args ...any) {
	l.c.Warnings = append(l.c.Warnings, fmt.Sprintf(format, args...))
}
