package engines

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/dop251/goja"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
	"github.com/gorender/gorender/jsvm/transform"
)

// forEachEngineB runs f as a sub-benchmark per engine.
func forEachEngineB(b *testing.B, f func(b *testing.B, engine string)) {
	for _, engine := range Names {
		b.Run(engine, func(b *testing.B) { f(b, engine) })
	}
}

func benchEngine(b *testing.B, engine string, opts jsvm.Options) jsvm.Engine {
	b.Helper()
	e, err := New(engine, opts)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// engineMemory is what the engine of rt holds outside the Go heap.
func engineMemory(rt jsvm.Runtime) int64 {
	if m, ok := rt.(jsvm.MemoryReporter); ok {
		return m.MemoryUsage()
	}
	return 0
}

func BenchmarkNewRuntimePlain(b *testing.B) {
	forEachEngineB(b, func(b *testing.B, engine string) {
		e := benchEngine(b, engine, jsvm.Options{StubTimers: true})
		b.ReportAllocs()
		for b.Loop() {
			rt, err := e.NewRuntime()
			if err != nil {
				b.Fatal(err)
			}
			rt.Close()
		}
	})
}

func BenchmarkNewRuntimeNodeEnv(b *testing.B) {
	forEachEngineB(b, func(b *testing.B, engine string) {
		e := nodeEngine(b, engine, jsvm.Options{})
		b.ReportAllocs()
		for b.Loop() {
			rt, err := e.NewRuntime()
			if err != nil {
				b.Fatal(err)
			}
			rt.Close()
		}
	})
}

// BenchmarkLoad is a new runtime plus a bundle load (compiled once), with
// the memory the loaded runtime keeps: HeapInuse after GC per runtime (the
// Go heap) and, for engines that allocate outside it, the engine's own.
func BenchmarkLoad(b *testing.B) {
	for _, tc := range []struct {
		name, bundle string
		opts         jsvm.Options
	}{
		{"plain/react-app", "react-app", jsvm.Options{StubTimers: true}},
		{"node/react-app", "react-app", jsvm.Options{SupportModules: true}},
		{"node/node-app-esbuild", "node-app-esbuild", jsvm.Options{SupportModules: true}},
		{"node/node-app-webpack", "node-app-webpack", jsvm.Options{SupportModules: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			forEachEngineB(b, func(b *testing.B, engine string) {
				e := benchEngine(b, engine, tc.opts)
				p := conformance.FixtureProgram(b, e, tc.bundle)
				b.ReportAllocs()
				var keep []jsvm.Runtime
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for b.Loop() {
					rt, err := e.NewRuntime()
					if err != nil {
						b.Fatal(err)
					}
					if err := rt.Load(context.Background(), p); err != nil {
						b.Fatal(err)
					}
					if len(keep) < 20 {
						keep = append(keep, rt)
					} else {
						rt.Close()
					}
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(len(keep)), "heap-B/runtime")
				var engineBytes int64
				for _, rt := range keep {
					engineBytes += engineMemory(rt)
				}
				b.ReportMetric(float64(engineBytes)/float64(len(keep)), "engine-B/runtime")
				for _, rt := range keep {
					rt.Close()
				}
			})
		})
	}
}

// benchRender renders a request of the react-app fixture in a loop and
// checks the bytes.
func benchRender(b *testing.B, request string, modes ...string) {
	for _, mode := range modes {
		opts := jsvm.Options{StubTimers: true}
		if mode == "node" {
			opts = jsvm.Options{SupportModules: true}
		}
		b.Run(mode, func(b *testing.B) {
			forEachEngineB(b, func(b *testing.B, engine string) {
				rt := conformance.LoadFixture(b, benchEngine(b, engine, opts), "react-app")
				defer rt.Close()
				code := conformance.Testdata(b, "requests", request+".js")
				want := conformance.Testdata(b, "golden", request+".html")
				b.ReportAllocs()
				for b.Loop() {
					res, err := rt.Eval(context.Background(), code, jsvm.NewRequest(nil))
					if err != nil || res.Body != want {
						b.Fatalf("%v %.200q", err, res.Body)
					}
				}
			})
		})
	}
}

func BenchmarkRenderHelloWorld(b *testing.B) { benchRender(b, "hello-world", "plain", "node") }

func BenchmarkRenderSmallPage(b *testing.B) { benchRender(b, "small-page", "plain") }

// BenchmarkRenderListPage renders a 175 KB page (goja: as built, before any
// rewrite of the bundle's string accumulation).
func BenchmarkRenderListPage(b *testing.B) { benchRender(b, "list-page", "plain") }

func BenchmarkRenderNodeApp(b *testing.B) {
	forEachEngineB(b, func(b *testing.B, engine string) {
		rt := conformance.LoadFixture(b, nodeEngine(b, engine, jsvm.Options{}), "node-app-esbuild")
		defer rt.Close()
		code := conformance.Testdata(b, "requests", "node-app-home.js")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rt.Eval(context.Background(), code, jsvm.NewRequest(nil)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkParallelListPage renders the list page on 8 runtimes at once,
// one goroutine each (a pool of 8): one op is 8 pages rendered in parallel.
// It reports the time per page, the process's peak resident memory with 8
// loaded runtimes rendering, the Go heap, and what the engines hold outside
// the Go heap.
func BenchmarkParallelListPage(b *testing.B) { benchParallel(b, "list-page") }

// BenchmarkParallelSmallPage is BenchmarkParallelListPage for a small page:
// with many small allocations, it shows how renders on different runtimes
// scale across CPUs (QuickJS's runtimes share one allocator lock).
func BenchmarkParallelSmallPage(b *testing.B) { benchParallel(b, "small-page") }

func benchParallel(b *testing.B, request string) {
	const vms = 8
	forEachEngineB(b, func(b *testing.B, engine string) {
		e := benchEngine(b, engine, jsvm.Options{StubTimers: true})
		code := conformance.Testdata(b, "requests", request+".js")
		want := conformance.Testdata(b, "golden", request+".html")
		rts := make([]jsvm.Runtime, vms)
		for i := range rts {
			rts[i] = conformance.LoadFixture(b, e, "react-app")
		}
		defer func() {
			for _, rt := range rts {
				rt.Close()
			}
		}()
		var peakRSS int64
		var peakEngine int64
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			var wg sync.WaitGroup
			for _, rt := range rts {
				wg.Go(func() {
					res, err := rt.Eval(context.Background(), code, jsvm.NewRequest(nil))
					if err != nil || res.Body != want {
						b.Errorf("%v %.200q", err, res.Body)
					}
				})
			}
			wg.Wait()
			n++
			peakRSS = max(peakRSS, conformance.ProcessRSS())
			var engineBytes int64
			for _, rt := range rts {
				engineBytes += engineMemory(rt)
			}
			peakEngine = max(peakEngine, engineBytes)
		}
		b.StopTimer()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*vms), "ns/page")
		b.ReportMetric(float64(peakRSS)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "go-heap-MiB")
		b.ReportMetric(float64(peakEngine)/(1<<20), "engine-MiB")
	})
}

// bigBundle is about 3 MB of real bundle code: copies of a fixture, each in
// its own function scope.
func bigBundle(b *testing.B, fixture string, copies int) string {
	src := conformance.Testdata(b, "bundles", fixture+".js")
	var s strings.Builder
	for i := range copies {
		s.WriteString("(function copy" + string(rune('a'+i)) + "() {\n")
		s.WriteString(src)
		s.WriteString("\n});\n")
	}
	return s.String()
}

// BenchmarkCompile3MB compares the two lowering strategies on ~3 MB bundles:
// parse with goja first and lower only on a syntax error (what Compile does),
// or always lower with esbuild first; and QuickJS's compile (await lowered
// by esbuild when present, then bytecode).
func BenchmarkCompile3MB(b *testing.B) {
	for _, tc := range []struct{ name, fixture string }{
		{"needs-nothing", "react-app"},         // goja parses it as is
		{"needs-lowering", "node-app-esbuild"}, // import() somewhere in react-router
	} {
		src := bigBundle(b, tc.fixture, 6)
		b.Run(tc.name+"/parse-first", func(b *testing.B) {
			e := nodeEngine(b, "goja", jsvm.Options{})
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := e.Compile("big", "", src); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/always-lower", func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				lowered, err := transform.LowerForGoja("big.js", src, false)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := goja.Compile("big.js", transform.WrapModule(lowered), false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/transform-only", func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := transform.LowerForGoja("big.js", src, false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/goja-parse-only", func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				_, _ = goja.Compile("big.js", transform.WrapModule(src), false)
			}
		})
		b.Run(tc.name+"/quickjs", func(b *testing.B) {
			e := nodeEngine(b, "quickjs", jsvm.Options{})
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := e.Compile("big", "", src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// nodeEngine is engine with the Node-compatible environment.
func nodeEngine(b *testing.B, engine string, opts jsvm.Options) jsvm.Engine {
	b.Helper()
	opts.SupportModules = true
	return benchEngine(b, engine, opts)
}
