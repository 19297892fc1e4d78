package engines

import (
	"context"
	"testing"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
)

// BenchmarkMathCall is the cost of one call of Math.sin or Math.pow from
// JavaScript (a loop of calls in one render, minus nothing: the loop's own
// cost is in it), reported per call.
func BenchmarkMathCall(b *testing.B) {
	const calls = 100000
	const bundle = `
function loopSin(n) { var s = 0; for (var i = 0; i < n; i++) s += Math.sin(i * 0.001 + 0.5); return String(s); }
function loopPow(n) { var s = 0; for (var i = 0; i < n; i++) s += Math.pow(1 + i * 1e-6, 2.5 + i * 1e-7); return String(s); }
function loopAdd(n) { var s = 0; for (var i = 0; i < n; i++) s += i * 0.001 + 0.5; return String(s); }
`
	for _, fn := range []string{"loopSin", "loopPow", "loopAdd"} {
		b.Run(fn, func(b *testing.B) {
			forEachEngineB(b, func(b *testing.B, engine string) {
				rt := conformance.NewLoaded(b, benchEngine(b, engine, jsvm.Options{StubTimers: true}), "math", bundle)
				code := fn + "(100000)"
				for b.Loop() {
					if _, err := rt.Eval(context.Background(), code, jsvm.NewRequest(nil)); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/calls, "ns/call")
			})
		})
	}
}
