package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorender/gorender/auth"
	"github.com/gorender/gorender/jsvm"
)

// Config is everything gorender is configured with, read once at start from
// the environment (PROTOCOL.md §11) and flags, and validated.
type Config struct {
	Host            string
	Port            int
	Password        string `json:"-"`
	CachePath       string
	WorkersCount    int
	LogLevel        slog.Level
	LogSilent       bool
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
	// MaxConnectionAge closes a client connection gracefully once it is
	// that old (±10%), at its next answer, so that long-lived h2c
	// connections rebalance across replicas (0: never).
	MaxConnectionAge time.Duration
	// GenerationManifest is the absolute path of a pre-seed declaration
	// whose bundles are loaded at start (RENDERER_CURRENT_GENERATION_MANIFEST).
	GenerationManifest string
	// MaxRendersPerRuntime recycles a runtime after that many renders (0: never).
	MaxRendersPerRuntime int
	// RecycleInterval, RecycleDelay and RecycleGrace map upstream's
	// scheduled worker restarts onto recycling runtimes one at a time.
	RecycleInterval, RecycleDelay, RecycleGrace time.Duration
	// MaxHeap is the memory guard's bound on the Go heap (0: off); by
	// default 80% of the container's memory limit, when there is one.
	MaxHeap uint64
	// QuickJSMemoryLimit bounds each quickjs runtime's own memory, outside
	// the Go heap (bytes; negative: no limit).
	QuickJSMemoryLimit int64
	// MemoryLimit is the Go runtime's soft memory limit and where it came
	// from (GOMEMLIMIT or the cgroup), for the startup log.
	MemoryLimit       uint64
	MemoryLimitSource string
	// GCPercent is the Go collector's GOGC in effect: the variable, else
	// defaultGCPercent.
	GCPercent int
	// Procs is GOMAXPROCS in effect: the variable, else the CPUs but at
	// least minProcs.
	Procs    int
	Metrics  bool
	JSEngine string
	// RewriteStringBuilds turns react-dom's quadratic `html += chunk`
	// builds into array joins when goja loads a bundle
	// (RENDERER_REWRITE_STRING_BUILDS, default true).
	RewriteStringBuilds bool
	ReplayAsyncLogs     bool
	PasswordWarnings    []string
	DeprecationNotice   []string
}

// Addr is the listen address.
func (c *Config) Addr() string { return fmt.Sprintf("%s:%d", c.Host, c.Port) }

// defaultCacheFallback is where bundles go when no .node-renderer-bundles
// directory is found above the working directory (upstream's default).
const defaultCacheFallback = "/tmp/react-on-rails-pro-node-renderer-bundles"

// notYetSupported are upstream variables whose behaviour gorender has not
// built yet: starting with them set would silently ignore what the operator
// asked for, so gorender refuses instead.
var notYetSupported = map[string]string{}

// LoadConfig reads the configuration from getenv and the -p flag value
// (portFlag, 0 when absent). Every problem is reported at once.
func LoadConfig(getenv func(string) string, portFlag int) (*Config, error) {
	var errs []error
	bad := func(name, value, want string) {
		errs = append(errs, fmt.Errorf("%s=%q: %s", name, value, want))
	}
	c := &Config{
		Host:       envOr(getenv, "RENDERER_HOST", "localhost"),
		Password:   getenv("RENDERER_PASSWORD"),
		JSEngine:   envOr(getenv, "RENDERER_JS_ENGINE", "goja"),
		StubTimers: getenv("RENDERER_STUB_TIMERS") == "" || getenv("RENDERER_STUB_TIMERS") == "true",
	}
	c.SupportModules = truthy(getenv("RENDERER_SUPPORT_MODULES"))
	if !slices.Contains(jsvm.Engines, c.JSEngine) {
		bad("RENDERER_JS_ENGINE", c.JSEngine, "want one of "+strings.Join(jsvm.Engines, ", "))
	}

	c.Port = 3800
	if v := getenv("RENDERER_PORT"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 65535 {
			bad("RENDERER_PORT", v, "want a port number 0-65535")
		}
		c.Port = p
	}
	if portFlag != 0 {
		c.Port = portFlag
	}

	c.WorkersCount = startProcs
	if v := getenv("RENDERER_WORKERS_COUNT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1024 {
			bad("RENDERER_WORKERS_COUNT", v, "want a whole number 1-1024")
		}
		c.WorkersCount = n
	}
	c.MaxVMPoolSize = 4
	if v := getenv("MAX_VM_POOL_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1024 {
			bad("MAX_VM_POOL_SIZE", v, "want a whole number 1-1024")
		}
		c.MaxVMPoolSize = n
	}

	var err error
	if c.LogLevel, c.LogSilent, err = parseLogLevel(envOr(getenv, "RENDERER_LOG_LEVEL", "info")); err != nil {
		bad("RENDERER_LOG_LEVEL", getenv("RENDERER_LOG_LEVEL"), err.Error())
	}
	var httpSilent bool
	if c.LogHTTPLevel, httpSilent, err = parseLogLevel(envOr(getenv, "RENDERER_LOG_HTTP_LEVEL", "error")); err != nil {
		bad("RENDERER_LOG_HTTP_LEVEL", getenv("RENDERER_LOG_HTTP_LEVEL"), err.Error())
	}
	if httpSilent {
		c.LogHTTPLevel = slog.LevelError + 100
	}

	durations := []struct {
		name string
		dst  *time.Duration
		def  time.Duration
		unit time.Duration // of a bare number
	}{
		{"VM_POOL_ROLLOUT_DRAIN_TIMEOUT", &c.DrainTimeout, 60 * time.Second, time.Second},
		{"RENDERER_RENDER_TIMEOUT", &c.RenderTimeout, 30 * time.Second, time.Second},
		{"RENDERER_QUEUE_TIMEOUT", &c.QueueTimeout, 10 * time.Second, time.Second},
		{"RENDERER_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout, 30 * time.Second, time.Second},
		{"RENDERER_STREAM_IDLE_TIMEOUT", &c.StreamIdleTimeout, 20 * time.Second, time.Second},
	}
	for _, d := range durations {
		*d.dst = d.def
		if v := getenv(d.name); v != "" {
			parsed, err := parseDuration(v, d.unit)
			if err != nil || parsed <= 0 {
				bad(d.name, v, "want a positive duration such as 500ms, 2s, 1m, or a number of seconds")
			}
			*d.dst = parsed
		}
	}

	if v := getenv("RENDERER_MAX_CONNECTION_AGE"); v != "" {
		d, err := parseDuration(v, time.Second)
		if err != nil || d < 0 {
			bad("RENDERER_MAX_CONNECTION_AGE", v, "want a duration such as 5m or 300 (seconds), or 0 for never")
		}
		c.MaxConnectionAge = d
	}

	// switchVar reads an on/off variable, def when unset.
	switchVar := func(name string, def bool, want string) bool {
		v := getenv(name)
		if v == "" {
			return def
		}
		on, ok := parseSwitch(v)
		if !ok {
			bad(name, v, want)
		}
		return on
	}
	c.Metrics = switchVar("RENDERER_METRICS", true, "want true/false, on/off, 1/0")
	c.RewriteStringBuilds = switchVar("RENDERER_REWRITE_STRING_BUILDS", true, "want true/false, on/off, 1/0")
	c.ReplayAsyncLogs = switchVar("REPLAY_SERVER_ASYNC_OPERATION_LOGS", getenv("NODE_ENV") == "development", "want true/false")

	if v := getenv("RENDERER_MAX_RENDERS_PER_RUNTIME"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			bad("RENDERER_MAX_RENDERS_PER_RUNTIME", v, "want a whole number (0: never recycle)")
		}
		c.MaxRendersPerRuntime = n
	}
	interval, delay := getenv("RENDERER_ALL_WORKERS_RESTART_INTERVAL"), getenv("RENDERER_DELAY_BETWEEN_INDIVIDUAL_WORKER_RESTARTS")
	switch {
	case interval == "" && delay == "":
	case interval == "" || delay == "":
		errs = append(errs, errors.New("RENDERER_ALL_WORKERS_RESTART_INTERVAL and RENDERER_DELAY_BETWEEN_INDIVIDUAL_WORKER_RESTARTS go together: set both or neither"))
	default:
		var err error
		if c.RecycleInterval, err = parseDuration(interval, time.Minute); err != nil || c.RecycleInterval <= 0 {
			bad("RENDERER_ALL_WORKERS_RESTART_INTERVAL", interval, "want a positive number of minutes")
		}
		if c.RecycleDelay, err = parseDuration(delay, time.Minute); err != nil || c.RecycleDelay < 0 {
			bad("RENDERER_DELAY_BETWEEN_INDIVIDUAL_WORKER_RESTARTS", delay, "want a number of minutes")
		}
	}
	c.RecycleGrace = c.RenderTimeout
	if v := getenv("GRACEFUL_WORKER_RESTART_TIMEOUT"); v != "" {
		d, err := parseDuration(v, time.Second)
		if err != nil || d <= 0 {
			bad("GRACEFUL_WORKER_RESTART_TIMEOUT", v, "want a positive number of seconds")
		}
		c.RecycleGrace = d
	}

	c.MemoryLimit, c.MemoryLimitSource = applyMemoryLimit(getenv)
	c.GCPercent = applyGCPercent(getenv)
	c.Procs = applyMinProcs(getenv)             // after WorkersCount's default: that is the CPUs
	c.MaxHeap = c.MemoryLimit / 10 * 8 * 10 / 9 // 80% of the hard limit under the 90% soft one
	if v := getenv("RENDERER_MAX_HEAP"); v != "" {
		n, err := parseBytes(v)
		if err != nil {
			bad("RENDERER_MAX_HEAP", v, "want a size such as 512MiB or 2GiB, or 0 for off")
		}
		c.MaxHeap = n
	}

	c.QuickJSMemoryLimit = 512 << 20
	if v := getenv("RENDERER_QUICKJS_MEMORY_LIMIT"); v != "" {
		n, err := parseBytes(v)
		switch {
		case v == "off" || (err == nil && n == 0):
			c.QuickJSMemoryLimit = -1
		case err != nil || n > 1<<40:
			bad("RENDERER_QUICKJS_MEMORY_LIMIT", v, "want a size such as 512MiB or 2GiB, or 0/off for no limit")
		default:
			c.QuickJSMemoryLimit = int64(n)
		}
	}

	for name, feature := range notYetSupported {
		if v := getenv(name); v != "" {
			errs = append(errs, fmt.Errorf("%s is set, but %s is not supported by this gorender build yet; unset it", name, feature))
		}
	}

	c.GenerationManifest = getenv("RENDERER_CURRENT_GENERATION_MANIFEST")
	c.CachePath, err = cachePath(getenv, &c.DeprecationNotice)
	if err != nil {
		errs = append(errs, err)
	}

	warnings, err := auth.StartupPolicy(c.Password, getenv)
	if err != nil {
		errs = append(errs, err)
	}
	c.PasswordWarnings = warnings
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid configuration: %w", errors.Join(errs...))
	}
	return c, nil
}

// cachePath resolves the bundle cache root: the configured one, else the
// nearest .node-renderer-bundles above the working directory, else
// upstream's /tmp default.
func cachePath(getenv func(string) string, notices *[]string) (string, error) {
	path := getenv("RENDERER_SERVER_BUNDLE_CACHE_PATH")
	if path == "" && getenv("RENDERER_BUNDLE_PATH") != "" {
		path = getenv("RENDERER_BUNDLE_PATH")
		*notices = append(*notices, "RENDERER_BUNDLE_PATH is deprecated: use RENDERER_SERVER_BUNDLE_CACHE_PATH")
	}
	if path == "" {
		path = defaultCacheFallback
		if wd, err := os.Getwd(); err == nil {
			for dir := wd; ; dir = filepath.Dir(dir) {
				candidate := filepath.Join(dir, ".node-renderer-bundles")
				if info, err := os.Stat(candidate); err == nil && info.IsDir() {
					path = candidate
					break
				}
				if filepath.Dir(dir) == dir {
					break
				}
			}
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("bundle cache path %q: %w", path, err)
	}
	return abs, nil
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// truthy is upstream's truthy set for RENDERER_SUPPORT_MODULES.
func truthy(v string) bool {
	switch v {
	case "true", "TRUE", "yes", "YES":
		return true
	}
	return false
}

func parseSwitch(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "true", "on", "1", "yes":
		return true, true
	case "false", "off", "0", "no":
		return false, true
	}
	return false, false
}

// parseDuration accepts Go duration syntax or a bare number of units.
func parseDuration(v string, unit time.Duration) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(f * float64(unit)), nil
	}
	return time.ParseDuration(v)
}

// parseLogLevel maps upstream's levels onto slog's.
func parseLogLevel(v string) (level slog.Level, silent bool, err error) {
	switch strings.ToLower(v) {
	case "fatal", "error":
		return slog.LevelError, false, nil
	case "warn":
		return slog.LevelWarn, false, nil
	case "info":
		return slog.LevelInfo, false, nil
	case "debug", "trace":
		return slog.LevelDebug, false, nil
	case "silent":
		return slog.LevelError, true, nil
	}
	return 0, false, errors.New("want one of fatal, error, warn, info, debug, trace, silent")
}
