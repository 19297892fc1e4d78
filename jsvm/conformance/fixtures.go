package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// testdataDir is tests/testdata (built by tests/testdata/build.sh), found
// from the working directory up to the module's root.
var testdataDir = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "tests", "testdata"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
})

// TestdataPath is the path of a file of tests/testdata.
func TestdataPath(t testing.TB, parts ...string) string {
	t.Helper()
	dir, err := testdataDir()
	if err != nil {
		t.Fatalf("tests/testdata: %v", err)
	}
	return filepath.Join(append([]string{dir}, parts...)...)
}

// Testdata is the content of a file of tests/testdata.
func Testdata(t testing.TB, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(TestdataPath(t, parts...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// LoadFixture compiles (once per engine and options, as the worker does per
// process) and loads a fixture bundle from its place in
// tests/testdata/bundles, so that its companion files are beside it.
func LoadFixture(t testing.TB, e jsvm.Engine, name string) jsvm.Runtime {
	t.Helper()
	skipSlowUnderRace(t, e.Name())
	p := FixtureProgram(t, e, name)
	rt, err := e.NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Load(ctx, p); err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return rt
}

// fixturePrograms caches compiled fixture bundles across tests, as the
// worker compiles each bundle once per process: a Program only depends on
// the engine and on whether it is a CommonJS module.
var fixturePrograms sync.Map // fixtureKey -> jsvm.Program

type fixtureKey struct {
	engine string
	module bool
	name   string
}

// FixtureProgram compiles fixture bundle name, at its path in
// tests/testdata/bundles. Programs of engines made by NewEngine are cached.
func FixtureProgram(t testing.TB, e jsvm.Engine, name string) jsvm.Program {
	t.Helper()
	path := TestdataPath(t, "bundles", name+".js")
	opts, known := engineOptions.Load(e)
	key := fixtureKey{engine: e.Name(), name: name}
	if known {
		key.module = opts.(jsvm.Options).SupportModules
		if p, ok := fixturePrograms.Load(key); ok {
			return p.(jsvm.Program)
		}
	}
	p, err := e.Compile(name, path, Testdata(t, "bundles", name+".js"))
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	if known {
		fixturePrograms.Store(key, p)
	}
	return p
}

// NewLoaded compiles src as bundle id and loads it into a new runtime.
func NewLoaded(t testing.TB, e jsvm.Engine, id, src string) jsvm.Runtime {
	t.Helper()
	return LoadProgram(t, e, Compile(t, e, id, "", src))
}

// Compile compiles src as bundle id at path, failing t on an error.
func Compile(t testing.TB, e jsvm.Engine, id, path, src string) jsvm.Program {
	t.Helper()
	p, err := e.Compile(id, path, src)
	if err != nil {
		t.Fatalf("compile %s: %v", id, err)
	}
	return p
}

// LoadProgram loads p into a new runtime of e, closed when t ends.
func LoadProgram(t testing.TB, e jsvm.Engine, p jsvm.Program) jsvm.Runtime {
	t.Helper()
	rt, err := e.NewRuntime()
	if err != nil {
		t.Fatalf("new runtime: %v", err)
	}
	t.Cleanup(rt.Close)
	if err := rt.Load(context.Background(), p); err != nil {
		t.Fatalf("load: %v", err)
	}
	return rt
}

// evalBound is how long Eval lets a render run. It only ends a render that
// hangs: a render's first use of Intl on goja (building it, a locale's
// data) took 3.6-11 s under -race on a loaded machine.
const evalBound = 60 * time.Second

// Eval renders code in rt with a fresh request (evalBound at most).
func Eval(t testing.TB, rt jsvm.Runtime, code string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), evalBound)
	defer cancel()
	res, err := rt.Eval(ctx, code, jsvm.NewRequest(nil))
	return res.Body, err
}

// MustEval is Eval, failing t on an error.
func MustEval(t testing.TB, rt jsvm.Runtime, code string) string {
	t.Helper()
	out, err := Eval(t, rt, code)
	if err != nil {
		t.Fatalf("%s: %v", code, err)
	}
	return out
}

// NodeEngine makes the registered engine name with the Node-compatible
// environment (SupportModules) and, unless opts has one, the process's
// environment with credentials in it: process.env must not show them.
func NodeEngine(t testing.TB, name string, opts jsvm.Options) jsvm.Engine {
	t.Helper()
	opts.SupportModules = true
	if opts.Environ == nil {
		opts.Environ = append(os.Environ(), "RENDERER_PASSWORD=do-not-leak", "SENTRY_DSN=https://key@127.0.0.1/1",
			"HONEYBADGER_API_KEY=do-not-leak", "OTEL_EXPORTER_OTLP_HEADERS=x-api-key=do-not-leak",
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS=x-api-key=do-not-leak", "OTEL_EXPORTER_OTLP_METRICS_HEADERS=x-api-key=do-not-leak",
			"OTEL_EXPORTER_OTLP_LOGS_HEADERS=x-api-key=do-not-leak")
	}
	e, err := NewEngine(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// ProcessRSS is the process's resident set size in bytes (0 where
// /proc/self/statm does not exist).
func ProcessRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
