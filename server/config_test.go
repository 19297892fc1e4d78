package server

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value"}), 0)
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
		{"engine", c.JSEngine, "goja"},
		{"rewrite string builds", c.RewriteStringBuilds, true},
		{"recycle grace", c.RecycleGrace, 30 * time.Second},
		{"max connection age", c.MaxConnectionAge, time.Duration(0)},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestLoadConfigValues(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{
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
		{"unknown engine", map[string]string{"RAILS_ENV": "test", "RENDERER_JS_ENGINE": "v8"}, `RENDERER_JS_ENGINE="v8": want one of goja, quickjs`},
		{"bad rewrite switch", map[string]string{"RAILS_ENV": "test", "RENDERER_REWRITE_STRING_BUILDS": "maybe"}, `RENDERER_REWRITE_STRING_BUILDS="maybe": want true/false, on/off, 1/0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadConfig(env(tc.env), 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}

func TestCachePathDeprecatedAlias(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{"RAILS_ENV": "development", "RENDERER_BUNDLE_PATH": "/srv/bundles"}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.CachePath != "/srv/bundles" || len(c.DeprecationNotice) != 1 {
		t.Fatalf("cache %q notices %v", c.CachePath, c.DeprecationNotice)
	}
}

// TestGCPercent: without GOGC gorender collects at 200; with it, the
// runtime's own reading of the variable stays in effect.
func TestGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	c, err := LoadConfig(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value"}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(100); c.GCPercent != 200 || got != 200 {
		t.Errorf("GOGC unset: config %d, runtime %d, want 200", c.GCPercent, got)
	}

	debug.SetGCPercent(150) // what the runtime read from GOGC=150 at start
	c, err = LoadConfig(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "GOGC": "150"}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(100); c.GCPercent != 150 || got != 150 {
		t.Errorf("GOGC=150: config %d, runtime %d, want 150", c.GCPercent, got)
	}
}

// TestMinProcs: without GOMAXPROCS gorender runs with at least two Ps; the
// variable, when set, is left as the runtime read it.
func TestMinProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })

	c, err := LoadConfig(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value"}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); c.Procs != 2 || got != 2 {
		t.Errorf("GOMAXPROCS unset on one P: config %d, runtime %d, want 2", c.Procs, got)
	}

	runtime.GOMAXPROCS(1) // what the runtime read from GOMAXPROCS=1 at start
	c, err = LoadConfig(env(map[string]string{"RENDERER_PASSWORD": "a-long-enough-secret-value", "GOMAXPROCS": "1"}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); c.Procs != 1 || got != 1 {
		t.Errorf("GOMAXPROCS=1: config %d, runtime %d, want 1", c.Procs, got)
	}
}
