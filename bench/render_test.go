package bench

import (
	"context"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/engines"
	"github.com/gorender/gorender/jsvm/transform"
)

// The bundle of every render benchmark: the plain-script React 19 fixture.
const bundleFile = "bundles/react-app.js"

var bundleSource = sync.OnceValues(func() (string, error) { return ReadTestdata(bundleFile) })

// bundle returns the fixture bundle as built.
func bundle(tb testing.TB) string {
	tb.Helper()
	src, err := bundleSource()
	if err != nil {
		tb.Fatal(err)
	}
	return src
}

// setup is one engine configuration the render benchmarks compare.
type setup struct {
	name   string
	engine string
	// keep turns goja's load-time rewrite of the string build off.
	keep bool
}

var (
	gojaDefault = setup{"goja", "goja", false}
	gojaAsBuilt = setup{"goja-norw", "goja", true}
	quickJS     = setup{"quickjs", "quickjs", false}
)

func newEngine(tb testing.TB, s setup) jsvm.Engine {
	tb.Helper()
	e, err := engines.New(s.engine, jsvm.Options{StubTimers: true, KeepStringBuilds: s.keep})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func loadedRuntime(tb testing.TB, e jsvm.Engine, src string) jsvm.Runtime {
	tb.Helper()
	p, err := e.Compile("react-app", "", src)
	if err != nil {
		tb.Fatal(err)
	}
	rt, err := e.NewRuntime()
	if err != nil {
		tb.Fatal(err)
	}
	if err := rt.Load(context.Background(), p); err != nil {
		tb.Fatal(err)
	}
	return rt
}

func render(tb testing.TB, rt jsvm.Runtime, code string) string {
	tb.Helper()
	res, err := rt.Eval(context.Background(), code, jsvm.NewRequest(map[string]jsvm.Runtime{"react-app": rt}))
	if err != nil {
		tb.Fatal(err)
	}
	return res.Body
}

// slow reports whether to run the as-built large render (minutes per op).
func slow() bool { return os.Getenv("BENCH_SLOW") != "" }

// raceEnabled reports a test binary built with -race (scripts/test.sh),
// where the big renders take ten times longer: tests keep to the small ones.
var raceEnabled = func() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return true
			}
		}
	}
	return false
}()

// BenchmarkRender renders each workload once per op in one loaded runtime:
// goja (which rewrites the string build at load), goja with the bundle run
// as built, and quickjs. The as-built large page is quadratic on goja
// (minutes): it runs only with BENCH_SLOW=1.
func BenchmarkRender(b *testing.B) {
	ws, err := Workloads()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []setup{gojaDefault, gojaAsBuilt, quickJS} {
		rt := loadedRuntime(b, newEngine(b, s), bundle(b))
		for _, w := range ws {
			b.Run(w.Name+"/"+s.name, func(b *testing.B) {
				if w.Name == "large" && s == gojaAsBuilt && !slow() {
					b.Skip("quadratic: minutes per render; BENCH_SLOW=1 to run")
				}
				b.ReportAllocs()
				var n int
				for b.Loop() {
					n = len(render(b, rt, w.Code))
				}
				b.ReportMetric(float64(n), "bytes/answer")
			})
		}
		rt.Close()
	}
}

// TestRewrittenRendersSame renders every workload on goja with the rewrite
// of the string build off and on and wants the same bytes (and Node's golden where there is
// one). The as-built large page only with BENCH_SLOW=1.
func TestRewrittenRendersSame(t *testing.T) {
	ws, err := Workloads()
	if err != nil {
		t.Fatal(err)
	}
	built, rewritten := loadedRuntime(t, newEngine(t, gojaAsBuilt), bundle(t)), loadedRuntime(t, newEngine(t, gojaDefault), bundle(t))
	goldens := map[string]string{"hello": "golden/hello.html", "small": "golden/small-page.html", "medium": "golden/list-page.html"}
	for _, w := range ws {
		t.Run(w.Name, func(t *testing.T) {
			if (testing.Short() || raceEnabled) && w.Name == "large" {
				t.Skip("seconds per render under -race or -short")
			}
			start := time.Now()
			after := render(t, rewritten, w.Code)
			t.Logf("rewritten: %d bytes in %v", len(after), time.Since(start))
			if g, ok := goldens[w.Name]; ok {
				want, err := ReadTestdata(g)
				if err != nil {
					t.Fatal(err)
				}
				if after != want {
					t.Fatalf("differs from Node's golden")
				}
			}
			if w.Name == "medium" && (testing.Short() || raceEnabled) {
				return // as built it is quadratic
			}
			if w.Name == "large" && !slow() {
				if !strings.HasPrefix(after, `{"html":"<section class=\"list-page\"><h2>6000<!-- --> items</h2>`) || !strings.Contains(after, `"hasErrors":false`) {
					t.Fatalf("large answer: %.200q", after)
				}
				return
			}
			start = time.Now()
			before := render(t, built, w.Code)
			t.Logf("as built:  %d bytes in %v", len(before), time.Since(start))
			if before != after {
				t.Fatal("the rewritten bundle renders differently")
			}
		})
	}
}

// BenchmarkBundle measures loading the fixture bundle: the rewrite
// (parse + analysis + re-parse to check), goja compile, and a new runtime
// that evaluates the compiled bundle.
func BenchmarkBundle(b *testing.B) {
	src := bundle(b)
	e := newEngine(b, gojaDefault)
	b.Run("rewrite", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, n, err := transform.RewriteStringBuilds(src); err != nil || n != 1 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("compile", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, err := e.Compile("react-app", "", src); err != nil {
				b.Fatal(err)
			}
		}
	})
	p, err := e.Compile("react-app", "", src)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rt, err := e.NewRuntime()
			if err != nil {
				b.Fatal(err)
			}
			if err := rt.Load(context.Background(), p); err != nil {
				b.Fatal(err)
			}
			rt.Close()
		}
	})
}

// propsOnly returns a rendering request with its render call replaced by a
// function of the props: compiling and running it is the cost of the
// request's own code (same replacement as bench/node/compile-bench.mjs).
func propsOnly(code string) string {
	i := strings.Index(code, "  return ReactOnRails[")
	if i < 0 {
		return code
	}
	return code[:i] + "  return String(usedProps.items ? usedProps.items.length : 0);\n})()\n"
}

// BenchmarkRequestProps compiles and runs each rendering request up to
// building its props (no render), through the engine.
func BenchmarkRequestProps(b *testing.B) {
	ws, err := Workloads()
	if err != nil {
		b.Fatal(err)
	}
	rt := loadedRuntime(b, newEngine(b, gojaDefault), bundle(b))
	defer rt.Close()
	for _, w := range ws {
		if w.Name != "medium" && w.Name != "large" {
			continue
		}
		code := propsOnly(w.Code)
		b.Run(w.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(code)))
			for b.Loop() {
				if out := render(b, rt, code); out == "" || out == "0" {
					b.Fatalf("props: %q", out)
				}
			}
		})
	}
}

// BenchmarkCompileRequest measures goja compiling a rendering request alone
// (the props are a JS object literal), the step Node's V8 does ~15× faster.
// It calls goja directly: the engine compiles and runs in one Eval.
func BenchmarkCompileRequest(b *testing.B) {
	ws, err := Workloads()
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range ws {
		if w.Name == "hello" {
			continue
		}
		b.Run(w.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(w.Code)))
			for b.Loop() {
				if _, err := goja.Compile("", w.Code, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// byteSink collects a streamed answer and counts its chunks.
type byteSink struct {
	body   []byte
	chunks int
}

func (s *byteSink) Start() error { return nil }

func (s *byteSink) Write(p []byte) error {
	s.body = append(s.body, p...)
	s.chunks++
	return nil
}

// BenchmarkListStream renders the medium ListPage (500 items) inside
// stream-app.js, in the Node environment, by renderToString and by
// renderToPipeableStream piped into a PassThrough and out to a Go sink: the
// streaming renderer's own cost on each engine. Both give the same bytes.
func BenchmarkListStream(b *testing.B) {
	code, err := ReadTestdata("requests/list-page.js")
	if err != nil {
		b.Fatal(err)
	}
	props := code[:strings.Index(code, "  return ReactOnRails[")]
	src, err := ReadTestdata("bundles/stream-app.js")
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []setup{gojaDefault, quickJS} {
		e, err := engines.New(s.engine, jsvm.Options{SupportModules: true})
		if err != nil {
			b.Fatal(err)
		}
		p, err := e.Compile("stream-app", Testdata("bundles/stream-app.js"), src)
		if err != nil {
			b.Fatal(err)
		}
		rt, err := e.NewRuntime()
		if err != nil {
			b.Fatal(err)
		}
		if err := rt.Load(context.Background(), p); err != nil {
			b.Fatal(err)
		}
		run := func(b testing.TB, fn string) (string, int) {
			req := jsvm.NewRequest(map[string]jsvm.Runtime{"stream-app": rt})
			sink := &byteSink{}
			req.Sink, req.StreamIdle = sink, 10*time.Second
			res, err := rt.Eval(context.Background(), props+"  return "+fn+"(usedProps);\n})()\n", req)
			if err != nil {
				b.Fatal(err)
			}
			if res.Streamed {
				return string(sink.body), sink.chunks
			}
			return res.Body, 1
		}
		str, _ := run(b, "renderListString")
		streamed, chunks := run(b, "renderListStream")
		if str != streamed || !strings.HasPrefix(str, `<section class="list-page"><h2>500<!-- --> items</h2>`) {
			b.Fatalf("%s: renderToString and the stream differ (%d vs %d bytes)", s.name, len(str), len(streamed))
		}
		for _, fn := range []string{"renderListString", "renderListStream"} {
			b.Run(fn+"/"+s.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					run(b, fn)
				}
				b.ReportMetric(float64(chunks), "chunks/stream")
			})
		}
		rt.Close()
	}
}
