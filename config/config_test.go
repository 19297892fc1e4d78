package config

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm/engines"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value"}), 0)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"host", c.Host, "localhost"},
		{"port", c.Port, 3800},
		{"workers", c.WorkersCount, startProcs},
		{"max vm pool", c.MaxVMPoolSize, 4},
		{"drain", c.DrainTimeout, 60 * time.Second},
		{"render timeout", c.RenderTimeout, 30 * time.Second},
		{"stub timers", c.StubTimers, true},
		{"support modules", c.SupportModules, false},
		{"log level", c.LogLevel, slog.LevelInfo},
		{"http log level", c.LogHTTPLevel, slog.LevelError},
		{"metrics", c.Metrics, true},
		{"rewrite string builds", c.RewriteStringBuilds, true},
		{"recycle grace", c.RecycleGrace, 30 * time.Second},
		{"max connection age", c.MaxConnectionAge, time.Duration(0)},
		{"node load timeout", c.NodeLoadTimeout, 60 * time.Second},
		{"node semi-space", c.NodeSemiSpace, uint64(32 << 20)},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

// TestEngineAuto: RENDERER_JS_ENGINE's default chooses an engine and says
// why (jsvm/engines tests the choice itself); the choice plans GOMAXPROCS.
func TestEngineAuto(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "node")
	c, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "RENDERER_NODE_PATH": missing}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.JSEngine != "goja" || !strings.Contains(c.JSEngineChoice, "RENDERER_NODE_PATH="+missing) {
		t.Errorf("without Node.js: engine %q, why %q", c.JSEngine, c.JSEngineChoice)
	}
	if c.Procs < minProcs {
		t.Errorf("GOMAXPROCS planned %d on goja, want at least %d", c.Procs, minProcs)
	}
	c, err = Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "RENDERER_JS_ENGINE": "quickjs", "RENDERER_NODE_PATH": missing}), 0)
	if err != nil || c.JSEngine != "quickjs" || c.JSEngineChoice != "" {
		t.Errorf("pinned quickjs: %v, engine %q, why %q", err, c.JSEngine, c.JSEngineChoice)
	}
	if _, err := Load(env(map[string]string{"RENDERER_JS_ENGINE": "v8"}), 0); err == nil || !strings.Contains(err.Error(), "want one of auto, goja, quickjs, node") {
		t.Errorf("RENDERER_JS_ENGINE=v8: %v", err)
	}
}

func TestLoadConfigValues(t *testing.T) {
	c, err := Load(env(map[string]string{
		"RENDERER_PASSWORD":                                 "a-long-enough-secret-value",
		"RENDERER_PORT":                                     "4000",
		"RENDERER_WORKERS_COUNT":                            "3",
		"RENDERER_RENDER_TIMEOUT":                           "1500ms",
		"RENDERER_QUEUE_TIMEOUT":                            "2",
		"RENDERER_STUB_TIMERS":                              "TRUE",
		"RENDERER_SUPPORT_MODULES":                          "YES",
		"RENDERER_ALL_WORKERS_RESTART_INTERVAL":             "10",
		"RENDERER_DELAY_BETWEEN_INDIVIDUAL_WORKER_RESTARTS": "0.5",
		"GRACEFUL_WORKER_RESTART_TIMEOUT":                   "5",
		"RENDERER_LOG_LEVEL":                                "trace",
		"RENDERER_MAX_CONNECTION_AGE":                       "90",
		"RENDERER_NODE_LOAD_TIMEOUT":                        "5",
		"RENDERER_JS_ENGINE":                                "quickjs",
	}), 5000)
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 5000 {
		t.Errorf("-p did not override RENDERER_PORT: %d", c.Port)
	}
	if c.WorkersCount != 3 || c.RenderTimeout != 1500*time.Millisecond || c.QueueTimeout != 2*time.Second {
		t.Errorf("workers/timeouts: %d %v %v", c.WorkersCount, c.RenderTimeout, c.QueueTimeout)
	}
	if c.StubTimers {
		t.Error("RENDERER_STUB_TIMERS=TRUE is not exactly true: timers must be real")
	}
	if !c.SupportModules {
		t.Error("RENDERER_SUPPORT_MODULES=YES is truthy")
	}
	if c.RecycleInterval != 10*time.Minute || c.RecycleDelay != 30*time.Second || c.RecycleGrace != 5*time.Second {
		t.Errorf("recycling: %v %v %v", c.RecycleInterval, c.RecycleDelay, c.RecycleGrace)
	}
	if c.LogLevel != slog.LevelDebug {
		t.Errorf("trace level = %v", c.LogLevel)
	}
	if c.MaxConnectionAge != 90*time.Second {
		t.Errorf("max connection age = %v, want 90s (a bare number is seconds)", c.MaxConnectionAge)
	}
	if c.JSEngine != "quickjs" {
		t.Errorf("engine = %q", c.JSEngine)
	}
	if c.NodeLoadTimeout != 5*time.Second {
		t.Errorf("node load timeout = %v, want 5s (a bare number is seconds)", c.NodeLoadTimeout)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"production without password", map[string]string{}, "RENDERER_PASSWORD"},
		{"bad port", map[string]string{"RAILS_ENV": "test", "RENDERER_PORT": "abc"}, `RENDERER_PORT="abc"`},
		{"bad workers", map[string]string{"RAILS_ENV": "test", "RENDERER_WORKERS_COUNT": "0"}, "RENDERER_WORKERS_COUNT"},
		{"bad duration", map[string]string{"RAILS_ENV": "test", "RENDERER_RENDER_TIMEOUT": "soon"}, "RENDERER_RENDER_TIMEOUT"},
		{"bad log level", map[string]string{"RAILS_ENV": "test", "RENDERER_LOG_LEVEL": "loud"}, "RENDERER_LOG_LEVEL"},
		{"restart vars alone", map[string]string{"RAILS_ENV": "test", "RENDERER_ALL_WORKERS_RESTART_INTERVAL": "5"}, "set both or neither"},
		{"bad connection age", map[string]string{"RAILS_ENV": "test", "RENDERER_MAX_CONNECTION_AGE": "-1s"}, "RENDERER_MAX_CONNECTION_AGE"},
		{"zero node load timeout", map[string]string{"RAILS_ENV": "test", "RENDERER_NODE_LOAD_TIMEOUT": "0"}, `RENDERER_NODE_LOAD_TIMEOUT="0": want a positive duration`},
		{"unknown engine", map[string]string{"RAILS_ENV": "test", "RENDERER_JS_ENGINE": "v8"}, `RENDERER_JS_ENGINE="v8": want one of auto, goja, quickjs`},
		{"bad rewrite switch", map[string]string{"RAILS_ENV": "test", "RENDERER_REWRITE_STRING_BUILDS": "maybe"}, `RENDERER_REWRITE_STRING_BUILDS="maybe": want true/false, on/off, 1/0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(env(tc.env), 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}

// TestLoadConfigErrorsHideSecrets: a SENTRY_DSN the SDK cannot read stops
// the start with an error that names the variable and what is wrong, and
// repeats nothing of its value (the DSN's key is a credential).
func TestLoadConfigErrorsHideSecrets(t *testing.T) {
	for dsn, want := range map[string]string{
		"https://SECRETKEY@o0.ingest.sentry.io/1%zz":     "it is not a URL",
		"https://SECRETKEY@o0.ingest.sentry.io:abc/1":    "it is not a URL",
		"https://SECRETKEY@o0.ingest.sentry.io:99999x/1": "it is not a URL",
		"ftp://SECRETKEY@o0.ingest.sentry.io/1":          "invalid scheme",
		"https://SECRETKEY@o0.ingest.sentry.io/":         "empty project id",
		"https://SECRETKEY@/1":                           "empty host",
	} {
		_, err := Load(env(map[string]string{"RAILS_ENV": "test", "SENTRY_DSN": dsn}), 0)
		if err == nil || strings.Contains(err.Error(), "SECRETKEY") || !strings.Contains(err.Error(), "SENTRY_DSN (set; its value is not shown)") || !strings.Contains(err.Error(), want) {
			t.Errorf("SENTRY_DSN=%s: err = %v, want naming SENTRY_DSN and saying %q, without the key", dsn, err, want)
		}
	}
}

func TestCachePathDeprecatedAlias(t *testing.T) {
	c, err := Load(env(map[string]string{"RAILS_ENV": "development", "RENDERER_BUNDLE_PATH": "/srv/bundles"}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.CachePath != "/srv/bundles" || !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "RENDERER_BUNDLE_PATH is deprecated") }) {
		t.Fatalf("cache %q warnings %v", c.CachePath, c.Warnings)
	}
}

// TestGCPercent: without GOGC gorender collects at 200; with it, at the
// variable's percentage. Load only plans it; ApplyRuntime sets it.
func TestGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	for _, tc := range []struct {
		gogc string
		want int
	}{{"", 200}, {"150", 150}, {"off", -1}} {
		c, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "GOGC": tc.gogc}), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := debug.SetGCPercent(100); c.GCPercent != tc.want || got != 100 {
			t.Errorf("GOGC=%q: planned %d, runtime %d after Load; want %d planned and the runtime untouched (100)", tc.gogc, c.GCPercent, got, tc.want)
		}
		c.ApplyRuntime()
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q: runtime %d after ApplyRuntime, want %d", tc.gogc, got, tc.want)
		}
	}
}

// TestMinProcs: without GOMAXPROCS gorender runs with at least two Ps, but
// with the node engine with the CPUs; with it, with the variable's number.
// Load only plans it.
func TestMinProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })

	for _, tc := range []struct {
		procs, engine string
		want          int
	}{{"", "goja", 2}, {"1", "goja", 1}, {"3", "goja", 3}, {"", "quickjs", 2}, {"", "node", 1}, {"3", "node", 3}} {
		runtime.GOMAXPROCS(1)
		c, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "GOMAXPROCS": tc.procs, "RENDERER_JS_ENGINE": tc.engine}), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := runtime.GOMAXPROCS(0); c.Procs != tc.want || got != 1 {
			t.Errorf("GOMAXPROCS=%q, engine %q on one P: planned %d, runtime %d after Load; want %d planned and the runtime untouched (1)", tc.procs, tc.engine, c.Procs, got, tc.want)
		}
		c.ApplyRuntime()
		if got := runtime.GOMAXPROCS(0); got != tc.want {
			t.Errorf("GOMAXPROCS=%q: runtime %d after ApplyRuntime, want %d", tc.procs, got, tc.want)
		}
	}
}

// TestRuntimeVariablesErrors: gorender refuses the GOGC and GOMAXPROCS
// values that Go itself would silently ignore.
func TestRuntimeVariablesErrors(t *testing.T) {
	_, err := Load(env(map[string]string{"RAILS_ENV": "test", "GOGC": "lots", "GOMAXPROCS": "0"}), 0)
	for _, want := range []string{`GOGC="lots": want a percentage`, `GOMAXPROCS="0": want a whole number`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want containing %q", err, want)
		}
	}
}

// TestLoadConfigAllErrorsAtOnce: every bad variable is reported, not the first.
func TestLoadConfigAllErrorsAtOnce(t *testing.T) {
	_, err := Load(env(map[string]string{
		"RENDERER_PORT": "x", "RENDERER_RENDER_TIMEOUT": "soon", "RENDERER_METRICS": "maybe",
	}), 0)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"RENDERER_PORT", "RENDERER_RENDER_TIMEOUT", "RENDERER_METRICS", "RENDERER_PASSWORD"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
}

// TestSettingsTable: each row is complete and its default reads.
func TestSettingsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range settings {
		if seen[s.Name] {
			t.Errorf("%s: listed twice", s.Name)
		}
		seen[s.Name] = true
		if (s.Default == "") == (s.DefaultDoc == "") {
			t.Errorf("%s: want exactly one of Default (a value) and DefaultDoc (how it is computed)", s.Name)
		}
		if s.Doc == "" || strings.ContainsAny(s.Doc+s.DefaultDoc, "|\n") {
			t.Errorf("%s: Doc must be one non-empty Markdown table cell", s.Name)
		}
		if s.Engine != "" && !slices.Contains(engines.Names, s.Engine) {
			t.Errorf("%s: unknown engine %q", s.Name, s.Engine)
		}
		if s.Default != "" {
			if err := s.Value.parse(&loader{c: &Config{}, getenv: env(nil)}, s.Default); err != nil {
				t.Errorf("%s: default %q does not read: %v", s.Name, s.Default, err)
			}
		}
	}
}

var update = flag.Bool("update", false, "write the configuration table into ../docs/configuration.md")

// TestConfigurationTable: the table of docs/configuration.md is the settings
// table, row for row, so the two cannot drift. With -update it rewrites the
// document's table from settings.
func TestConfigurationTable(t *testing.T) {
	const path = "../docs/configuration.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	section := slices.Index(lines, "## Environment variables")
	if section < 0 {
		t.Fatal(path + " has no ## Environment variables section")
	}
	header := section + slices.IndexFunc(lines[section:], func(l string) bool { return strings.HasPrefix(l, "| Variable |") })
	if header < section {
		t.Fatal(path + "'s Environment variables section has no table starting with | Variable |")
	}
	first := header + 2 // past the header and its separator
	end := first
	for end < len(lines) && strings.HasPrefix(lines[end], "|") {
		end++
	}
	var want []string
	for _, v := range Variables() {
		want = append(want, fmt.Sprintf("| `%s` | %s | %s |", v.Name, v.Default, v.Doc))
	}
	got := lines[first:end]
	if *update {
		lines = slices.Concat(lines[:first], want, lines[end:])
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if slices.Equal(got, want) {
		return
	}
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s table, row %d:\n   doc: %s\n table: %s", path, i+1, g, w)
		}
	}
	t.Log("the rows come from settings in config/settings.go: go test ./config -run TestConfigurationTable -update writes them into " + path)
}

func TestUnknownVariables(t *testing.T) {
	got := UnknownVariables([]string{
		"RENDERER_PORT=1", "RENDERER_PASWORD=x", "RENDERER_BUNDLE_PATH=/b", "PATH=/bin",
		"RENDERER_PASWORD=y", "RENDERER_ZZZ", "GOGC=100",
	})
	if want := []string{"RENDERER_PASWORD", "RENDERER_ZZZ"}; !slices.Equal(got, want) {
		t.Errorf("UnknownVariables = %q, want %q", got, want)
	}
}

func TestNodeSemiSpace(t *testing.T) {
	for v, want := range map[string]uint64{"": 32 << 20, "0": 0, "16MiB": 16 << 20, "64MiB": 64 << 20, "1GiB": 1 << 30} {
		c, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "RENDERER_NODE_SEMI_SPACE": v}), 0)
		if err != nil || c.NodeSemiSpace != want {
			t.Errorf("RENDERER_NODE_SEMI_SPACE=%q: %v, %v; want %d", v, c, err, want)
		}
	}
	for _, v := range []string{"lots", "-1MiB", "1500KiB", "2GiB"} {
		_, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "RENDERER_NODE_SEMI_SPACE": v}), 0)
		if err == nil || !strings.Contains(err.Error(), "RENDERER_NODE_SEMI_SPACE") {
			t.Errorf("RENDERER_NODE_SEMI_SPACE=%q: err %v, want it named", v, err)
		}
	}
}

func TestCacheMaxSize(t *testing.T) {
	for v, want := range map[string]uint64{"": 0, "0": 0, "2GiB": 2 << 30, "500MiB": 500 << 20, "1073741824": 1 << 30} {
		c, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE": v}), 0)
		if err != nil || c.CacheMaxSize != want {
			t.Errorf("RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE=%q: %v, %v; want %d", v, c, err, want)
		}
	}
	for _, v := range []string{"lots", "-1GiB", "2PiB"} {
		_, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE": v}), 0)
		if err == nil || !strings.Contains(err.Error(), "RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE") {
			t.Errorf("RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE=%q: err %v, want it named", v, err)
		}
	}
}

// TestTracingConfig: traces are on exactly when an OTLP endpoint is set or
// OTEL_TRACES_EXPORTER=otlp, and off with OTEL_TRACES_EXPORTER=none or
// OTEL_SDK_DISABLED=true whatever else is set; the traces-only variables
// win over the general ones; the start-up log shows the tracing rows only
// while traces are on, and an endpoint without its credentials.
func TestTracingConfig(t *testing.T) {
	const pw = "a-long-enough-secret-value"
	cases := []struct {
		name     string
		env      map[string]string
		on       bool
		protocol string
	}{
		{"unset", nil, false, "http/protobuf"},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true, "http/protobuf"},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/v1/traces"}, true, "http/protobuf"},
		{"exporter alone", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, "http/protobuf"},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}, false, "http/protobuf"},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "TRUE"}, false, "http/protobuf"},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, "grpc"},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, true, "http/json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{"RENDERER_PASSWORD": pw}
			for k, v := range tc.env {
				vars[k] = v
			}
			c, err := Load(env(vars), 0)
			if err != nil {
				t.Fatal(err)
			}
			if c.Tracing.On() != tc.on || c.Tracing.Protocol != tc.protocol {
				t.Errorf("tracing on=%v protocol=%q, want on=%v protocol=%q", c.Tracing.On(), c.Tracing.Protocol, tc.on, tc.protocol)
			}
			logged := map[string]string{}
			for _, a := range c.Effective() {
				logged[a.Key] = a.Value.String()
			}
			if logged["OTEL_TRACES_EXPORTER"] != c.Tracing.Exporter {
				t.Errorf("start-up log: OTEL_TRACES_EXPORTER=%q, want %q", logged["OTEL_TRACES_EXPORTER"], c.Tracing.Exporter)
			}
			if _, shown := logged["OTEL_TRACES_SAMPLER"]; shown != tc.on {
				t.Errorf("start-up log shows the sampler: %v, want %v (traces on)", shown, tc.on)
			}
		})
	}

	c, err := Load(env(map[string]string{"RENDERER_PASSWORD": pw,
		"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:token@collector:4318/base",
		"OTEL_RESOURCE_ATTRIBUTES":    "deployment.environment=prod,service.name=render%20tier",
		"OTEL_TRACES_SAMPLER":         "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25",
	}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tracing.ServiceName != "render tier" || c.Tracing.Sampler != "parentbased_traceidratio" || c.Tracing.SamplerArg != 0.25 {
		t.Errorf("service name %q, sampler %q %v", c.Tracing.ServiceName, c.Tracing.Sampler, c.Tracing.SamplerArg)
	}
	for _, a := range c.Effective() {
		if strings.Contains(a.Value.String(), "token") {
			t.Errorf("the start-up log shows a credential: %s=%s", a.Key, a.Value)
		}
		if a.Key == "OTEL_EXPORTER_OTLP_ENDPOINT" && a.Value.String() != "https://collector:4318/base" {
			t.Errorf("start-up log: %s=%s", a.Key, a.Value)
		}
	}

	_, err = Load(env(map[string]string{"RENDERER_PASSWORD": pw,
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "collector:4317",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://collector",
		"OTEL_EXPORTER_OTLP_PROTOCOL":        "thrift",
		"OTEL_TRACES_EXPORTER":               "zipkin",
		"OTEL_TRACES_SAMPLER":                "sometimes",
		"OTEL_TRACES_SAMPLER_ARG":            "2",
	}), 0)
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_TRACES_EXPORTER", "OTEL_TRACES_SAMPLER=", "OTEL_TRACES_SAMPLER_ARG"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("no error about %s: %v", name, err)
		}
	}
}

// TestSizeOrOff: RENDERER_MAX_ALLOCATION and RENDERER_QUICKJS_MEMORY_LIMIT
// read a size, 0 or off as no bound (-1), shown as off in the start-up log,
// and refuse what is not a size up to 1 TiB.
func TestSizeOrOff(t *testing.T) {
	rows := map[string]func(c *Config) int64{
		"RENDERER_MAX_ALLOCATION":       func(c *Config) int64 { return c.MaxAllocation },
		"RENDERER_QUICKJS_MEMORY_LIMIT": func(c *Config) int64 { return c.QuickJSMemoryLimit },
	}
	for name, get := range rows {
		for v, want := range map[string]struct {
			n     int64
			shown string
		}{"0": {-1, "off"}, "off": {-1, "off"}, "64MiB": {64 << 20, "64 MiB"}, "1536MiB": {1536 << 20, "1.5 GiB"}} {
			c, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "RENDERER_JS_ENGINE": "quickjs", name: v}), 0)
			if err != nil {
				t.Fatalf("%s=%q: %v", name, v, err)
			}
			i := slices.IndexFunc(c.Effective(), func(a slog.Attr) bool { return a.Key == name })
			if got := get(c); got != want.n || i < 0 || c.Effective()[i].Value.String() != want.shown {
				t.Errorf("%s=%q: read %d (want %d), shown %v (want %q)", name, v, got, want.n, c.Effective(), want.shown)
			}
		}
		for _, v := range []string{"lots", "-1MiB", "2TiB"} {
			_, err := Load(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", name: v}), 0)
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "0/off") {
				t.Errorf("%s=%q: err %v, want it named with what is wanted", name, v, err)
			}
		}
	}
}
