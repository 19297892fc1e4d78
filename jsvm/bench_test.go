package jsvm

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

func BenchmarkNewRuntimePlain(b *testing.B) {
	e, err := NewEngine("goja", Options{StubTimers: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rt, err := e.NewRuntime()
		if err != nil {
			b.Fatal(err)
		}
		rt.Close()
	}
}

func BenchmarkNewRuntimeNodeEnv(b *testing.B) {
	e := nodeEngine(b, Options{})
	b.ReportAllocs()
	for b.Loop() {
		rt, err := e.NewRuntime()
		if err != nil {
			b.Fatal(err)
		}
		rt.Close()
	}
}

// BenchmarkLoad is a new runtime plus a bundle load, with the heap the
// loaded runtime keeps (HeapInuse after GC, per runtime).
func BenchmarkLoad(b *testing.B) {
	for _, tc := range []struct {
		name, bundle string
		opts         Options
	}{
		{"plain/react-app", "react-app", Options{StubTimers: true}},
		{"node/react-app", "react-app", Options{SupportModules: true}},
		{"node/node-app-esbuild", "node-app-esbuild", Options{SupportModules: true}},
		{"node/node-app-webpack", "node-app-webpack", Options{SupportModules: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, err := NewEngine("goja", tc.opts)
			if err != nil {
				b.Fatal(err)
			}
			src := readTestdata(b, "bundles", tc.bundle+".js")
			p, err := e.Compile(tc.bundle, testdata+"/bundles/"+tc.bundle+".js", src)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var keep []Runtime
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
				}
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(len(keep)), "heap-B/runtime")
			runtime.KeepAlive(keep)
		})
	}
}

func BenchmarkRenderHelloWorld(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"plain", Options{StubTimers: true}},
		{"node", Options{SupportModules: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, err := NewEngine("goja", tc.opts)
			if err != nil {
				b.Fatal(err)
			}
			rt := loadFixture(b, e, "react-app")
			code := readTestdata(b, "requests", "hello-world.js")
			want := readTestdata(b, "golden", "hello-world.html")
			b.ReportAllocs()
			for b.Loop() {
				res, err := rt.Eval(context.Background(), code, NewRequest(nil))
				if err != nil || res.Body != want {
					b.Fatalf("%v %q", err, res.Body)
				}
			}
		})
	}
}

func BenchmarkRenderNodeApp(b *testing.B) {
	e := nodeEngine(b, Options{})
	rt := loadFixture(b, e, "node-app-esbuild")
	code := readTestdata(b, "requests", "node-app-home.js")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Eval(context.Background(), code, NewRequest(nil)); err != nil {
			b.Fatal(err)
		}
	}
}

// bigBundle is about 3 MB of real bundle code: copies of a fixture, each in
// its own function scope.
func bigBundle(b *testing.B, fixture string, copies int) string {
	src := readTestdata(b, "bundles", fixture+".js")
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
// or always lower with esbuild first.
func BenchmarkCompile3MB(b *testing.B) {
	for _, tc := range []struct{ name, fixture string }{
		{"needs-nothing", "react-app"},         // goja parses it as is
		{"needs-lowering", "node-app-esbuild"}, // import() somewhere in react-router
	} {
		src := bigBundle(b, tc.fixture, 6)
		b.Run(tc.name+"/parse-first", func(b *testing.B) {
			e := nodeEngine(b, Options{})
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
				lowered, err := lowerForGoja("big.js", src, false)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := compileModule("big.js", lowered); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/transform-only", func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := lowerForGoja("big.js", src, false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/goja-parse-only", func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				_, _ = compileModule("big.js", src)
			}
		})
	}
}
