package engines

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
)

// BenchmarkConcurrentRender measures how render throughput scales with the
// number of runtimes rendering at once: pools of 1, 2 and 4 runtimes, and
// on, doubling, up to GOMAXPROCS; each runtime on its own goroutine, all
// busy. One op is one render, so renders/s is the pool's throughput.
// QuickJS's runtimes share the translated libc's one allocator mutex
// (modernc.org/libc allocMu), which every malloc and free of every runtime
// takes; goja allocates on the Go heap. Compare the vms=N rows of one
// engine against its vms=1 row, on a machine whose GOMAXPROCS is at least
// N. lock-wait-% is the share of the renders' time spent blocked on a Go
// mutex (runtime/metrics /sync/mutex/wait/total): in this benchmark that
// is allocMu, the only mutex the renders contend for (mutex profile).
func BenchmarkConcurrentRender(b *testing.B) {
	for _, request := range []string{"small-page", "list-page"} {
		b.Run(request, func(b *testing.B) {
			forEachEngineB(b, func(b *testing.B, engine string) {
				e := benchEngine(b, engine, jsvm.Options{StubTimers: true})
				code := conformance.Testdata(b, "requests", request+".js")
				want := conformance.Testdata(b, "golden", request+".html")
				for vms := 1; vms <= max(4, runtime.GOMAXPROCS(0)); vms *= 2 {
					b.Run(fmt.Sprintf("vms=%d", vms), func(b *testing.B) {
						benchConcurrent(b, e, code, want, vms)
					})
				}
			})
		})
	}
}

// benchConcurrent renders b.N times in all on vms loaded runtimes, each
// taking the next render until b.N are taken.
func benchConcurrent(b *testing.B, e jsvm.Engine, code, want string, vms int) {
	rts := make([]jsvm.Runtime, vms)
	for i := range rts {
		rts[i] = conformance.LoadFixture(b, e, "react-app")
	}
	defer func() {
		for _, rt := range rts {
			rt.Close()
		}
	}()
	// One render each first: the runtimes' first renders warm caches.
	for _, rt := range rts {
		if res, err := rt.Eval(context.Background(), code, jsvm.NewRequest(nil)); err != nil || res.Body != want {
			b.Fatalf("%v %.200q", err, res.Body)
		}
	}
	b.ReportAllocs()
	waited := mutexWait()
	b.ResetTimer()
	var taken atomic.Int64
	var wg sync.WaitGroup
	for _, rt := range rts {
		wg.Go(func() {
			for taken.Add(1) <= int64(b.N) {
				res, err := rt.Eval(context.Background(), code, jsvm.NewRequest(nil))
				if err != nil || res.Body != want {
					b.Errorf("%v %.200q", err, res.Body)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renders/s")
	b.ReportMetric(100*(mutexWait()-waited)/(float64(vms)*b.Elapsed().Seconds()), "lock-wait-%")
}

// mutexWait is the time goroutines of this process have spent blocked on
// sync.Mutex and the runtime's locks, in seconds.
func mutexWait() float64 {
	s := []metrics.Sample{{Name: "/sync/mutex/wait/total:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return s[0].Value.Float64()
}
