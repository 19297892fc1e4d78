package jsvm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testdata is the fixture tree built by tests/testdata/build.sh.
const testdata = "../tests/testdata"

func readTestdata(t testing.TB, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{testdata}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// loadFixture compiles and loads a fixture bundle from its place in
// tests/testdata/bundles, so that its companion files are beside it.
func loadFixture(t testing.TB, e Engine, name string) Runtime {
	t.Helper()
	path, err := filepath.Abs(filepath.Join(testdata, "bundles", name+".js"))
	if err != nil {
		t.Fatal(err)
	}
	if quickjsUnderRace && e.Name() == "quickjs" {
		t.Skip(quickjsRaceSkip)
	}
	p := fixtureProgram(t, e, name, path)
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

func nodeEngine(t testing.TB, engine string, opts Options) Engine {
	t.Helper()
	opts.SupportModules = true
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	e, err := NewEngine(engine, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// fixturePrograms caches compiled fixture bundles across tests, as the
// worker compiles each bundle once per process: a Program only depends on
// the engine and on whether it is a CommonJS module.
var fixturePrograms sync.Map // fixtureKey -> Program

type fixtureKey struct {
	engine     string
	module     bool
	name, path string
}

func fixtureProgram(t testing.TB, e Engine, name, path string) Program {
	t.Helper()
	key := fixtureKey{engine: e.Name(), name: name, path: path}
	switch e := e.(type) {
	case *gojaEngine:
		key.module = e.opts.SupportModules
	case *qjsEngine:
		key.module = e.opts.SupportModules
		if e.nativeAsync {
			key.engine += "-native-async"
		}
	}
	if p, ok := fixturePrograms.Load(key); ok {
		return p.(Program)
	}
	p, err := e.Compile(name, path, readTestdata(t, "bundles", name+".js"))
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	fixturePrograms.Store(key, p)
	return p
}

// Support-modules fixture bundles give Node's bytes (goldens recorded with
// Node 20 by tests/testdata/js/record.mjs).
func TestSupportModulesGoldens(t *testing.T) { forEachEngine(t, testSupportModulesGoldens) }

func testSupportModulesGoldens(t *testing.T, engine string) {
	e := nodeEngine(t, engine, Options{ReplayAsyncLogs: true})
	tests := []struct{ bundle, request, golden string }{
		{"node-app-esbuild", "node-app-home", "node-app-home"},
		{"node-app-esbuild", "node-app-about", "node-app-about"},
		{"node-app-webpack", "node-app-home", "node-app-home"},
		{"node-app-webpack", "node-app-about", "node-app-about"},
		{"async-app", "async-als", "async-als"},
	}
	runtimes := map[string]Runtime{}
	for _, tc := range tests {
		t.Run(tc.bundle+"/"+tc.request, func(t *testing.T) {
			rt, ok := runtimes[tc.bundle]
			if !ok {
				rt = loadFixture(t, e, tc.bundle)
				runtimes[tc.bundle] = rt
			}
			code := readTestdata(t, "requests", tc.request+".js")
			want := readTestdata(t, "golden", tc.golden+".html")
			// Twice: module state and per-render cleanup must not change the bytes.
			for i := range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				res, err := rt.Eval(ctx, code, NewRequest(map[string]Runtime{tc.bundle: rt}))
				cancel()
				if err != nil {
					t.Fatalf("render %d: %v", i, err)
				}
				if res.Body != want {
					t.Fatalf("render %d differs from the golden:\ngot  %s\nwant %s", i, res.Body, want)
				}
			}
		})
	}
}

// The streaming renders are the streaming issue's; here it is enough that
// they produce a stream.
func TestSupportModulesStreamKind(t *testing.T) { forEachEngine(t, testSupportModulesStreamKind) }

func testSupportModulesStreamKind(t *testing.T, engine string) {
	e := nodeEngine(t, engine, Options{})
	rt := loadFixture(t, e, "stream-app")
	for _, req := range []string{"stream-pipeable", "stream-web"} {
		_, err := rt.Eval(context.Background(), readTestdata(t, "requests", req+".js"), NewRequest(nil))
		var re *RenderError
		if !errors.As(err, &re) || re.Kind != KindUnsupported || !strings.Contains(re.Text, "returned a stream") {
			t.Fatalf("%s: err = %v, want the stream kind", req, err)
		}
	}
}

// The plain-script goldens, with real and with stub timers; with
// ReplayAsyncLogs off the log AsyncGreeting writes after its await is not
// replayed (upstream resets console.history after the synchronous part), so
// that golden needs it on.
func TestPlainGoldens(t *testing.T) { forEachEngine(t, testPlainGoldens) }

func testPlainGoldens(t *testing.T, engine string) {
	for _, opts := range []Options{{StubTimers: true, ReplayAsyncLogs: true}, {ReplayAsyncLogs: true}, {SupportModules: true, ReplayAsyncLogs: true}} {
		e, err := NewEngine(engine, opts)
		if err != nil {
			t.Fatal(err)
		}
		rt := loadFixture(t, e, "react-app")
		for _, name := range []string{"hello-world", "small-page", "list-page", "async-greeting"} {
			res, err := rt.Eval(context.Background(), readTestdata(t, "requests", name+".js"), NewRequest(nil))
			if err != nil {
				t.Fatalf("%+v %s: %v", opts, name, err)
			}
			if want := readTestdata(t, "golden", name+".html"); res.Body != want {
				t.Fatalf("%+v %s differs:\ngot  %.300s\nwant %.300s", opts, name, res.Body, want)
			}
		}
	}
	e, err := NewEngine(engine, Options{StubTimers: true})
	if err != nil {
		t.Fatal(err)
	}
	rt := loadFixture(t, e, "react-app")
	res, err := rt.Eval(context.Background(), readTestdata(t, "requests", "async-greeting.js"), NewRequest(nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Body, "resolved after await") || !strings.Contains(res.Body, "AsyncGreeting: start for") {
		t.Fatalf("ReplayAsyncLogs off: %s", res.Body)
	}
}
