package v8math

import (
	"math"
	"testing"
)

var sink float64

// BenchmarkSin and BenchmarkPow compare the port with Go's math package,
// which goja and quickjs computed with before (quickjs through its
// translated C library, close to Go's cost).
func BenchmarkSin(b *testing.B) {
	for _, f := range []struct {
		name string
		f    func(float64) float64
	}{{"v8math", Sin}, {"gomath", math.Sin}} {
		b.Run(f.name, func(b *testing.B) {
			x := 0.5
			for b.Loop() {
				sink += f.f(x)
				x += 0.001
			}
		})
	}
}

func BenchmarkPow(b *testing.B) {
	for _, f := range []struct {
		name string
		f    func(float64, float64) float64
	}{{"v8math", Pow}, {"gomath", math.Pow}} {
		b.Run(f.name, func(b *testing.B) {
			x, y := 1.0, 2.5
			for b.Loop() {
				sink += f.f(x, y)
				x += 1e-6
				y += 1e-7
			}
		})
	}
}
