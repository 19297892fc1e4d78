package engines

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
)

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIntlFirstUse is the first Intl call in a fresh runtime (Intl's
// program already compiled by the process): building Intl in the runtime
// and loading the locale's data for the formatter, each sub-benchmark for
// one kind of first call. Run with -benchtime=20x: each iteration makes a
// runtime. The runtime's creation is outside the timer.
func BenchmarkIntlFirstUse(b *testing.B) {
	for _, tc := range []struct{ name, code string }{
		{"touch", `typeof Intl.NumberFormat`},
		{"number-de", `new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' }).format(1234.5)`},
		{"date-de", `new Date(0).toLocaleDateString('de-DE', { dateStyle: 'long', timeZone: 'UTC' })`},
		{"plural-de", `new Intl.PluralRules('de-DE').select(1)`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			forEachEngineB(b, func(b *testing.B, engine string) {
				e := benchEngine(b, engine, jsvm.Options{StubTimers: true})
				warm := conformance.NewLoaded(b, e, "warm", `var x;`)
				conformance.MustEval(b, warm, tc.code) // compiles Intl's program once per process
				warm.Close()
				var cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					rt := conformance.NewLoaded(b, e, "b", `var x;`)
					c0 := processCPU()
					b.StartTimer()
					conformance.MustEval(b, rt, tc.code)
					b.StopTimer()
					cpu += processCPU() - c0
					rt.Close()
					b.StartTimer()
				}
				// CPU time (the process's, so the collector's too) is steadier
				// than wall time on a shared machine.
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		})
	}
}

// BenchmarkIntlMemory is what a runtime keeps for Intl with three locales
// in use (de-DE, fr-FR, ja-JP: numbers, dates, plurals, relative times,
// lists): Go heap after GC per runtime and, on quickjs, the engine's own
// memory, each against a runtime with the same bundle that never touched
// Intl.
func BenchmarkIntlMemory(b *testing.B) {
	const use = `['de-DE', 'fr-FR', 'ja-JP'].map(function (l) {
		return [new Intl.NumberFormat(l, { style: 'currency', currency: 'EUR' }).format(1234.5),
			new Date(0).toLocaleString(l, { timeZone: 'UTC' }),
			new Intl.DateTimeFormat(l, { dateStyle: 'full', timeStyle: 'short', timeZone: 'Europe/Paris' }).format(0),
			new Intl.PluralRules(l).select(2), new Intl.RelativeTimeFormat(l).format(-1, 'day'),
			new Intl.ListFormat(l).format(['a', 'b'])].join();
	}).join()`
	forEachEngineB(b, func(b *testing.B, engine string) {
		e := benchEngine(b, engine, jsvm.Options{StubTimers: true})
		measure := func(code string) (heap, eng float64) {
			var keep []jsvm.Runtime
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range 5 {
				rt := conformance.NewLoaded(b, e, "b", `var x;`)
				conformance.MustEval(b, rt, code)
				keep = append(keep, rt)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			var engineBytes int64
			for _, rt := range keep {
				engineBytes += engineMemory(rt)
			}
			for _, rt := range keep {
				rt.Close()
			}
			return float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / 5, float64(engineBytes) / 5
		}
		for b.Loop() {
			h0, e0 := measure(`String(1 + 1)`)
			h1, e1 := measure(use)
			b.ReportMetric(h1-h0, "intl-heap-B/runtime")
			b.ReportMetric(e1-e0, "intl-engine-B/runtime")
		}
	})
}

// intlLocales74 are the locales of issue #30's page (item 5): a date and a
// currency formatted in each.
var intlLocales74 = `['af-ZA','am-ET','ar-EG','ar-SA','az-AZ','be-BY','bg-BG','bn-BD','bs-BA','ca-ES','cs-CZ','cy-GB','da-DK',
	'de-DE','el-GR','en-AU','en-CA','en-GB','en-IN','en-US','en-ZA','es-AR','es-ES','es-MX','et-EE','eu-ES','fa-IR','fi-FI',
	'fil-PH','fr-CA','fr-FR','ga-IE','gl-ES','gu-IN','he-IL','hi-IN','hr-HR','hu-HU','hy-AM','id-ID','is-IS','it-IT','ja-JP',
	'ka-GE','kk-KZ','km-KH','kn-IN','ko-KR','lt-LT','lv-LV','mk-MK','ml-IN','mn-MN','mr-IN','ms-MY','nb-NO','nl-NL','pl-PL',
	'pt-BR','pt-PT','ro-RO','ru-RU','sk-SK','sl-SI','sr-RS','sv-SE','ta-IN','te-IN','th-TH','tr-TR','uk-UA','vi-VN','zh-CN',
	'zh-TW']`

// BenchmarkIntlManyLocales is the memory of Intl with 74 locales in use, in
// three runtimes of one process: the Go heap in use after GC (HeapInuse,
// with goja's objects) and the engine's own memory (quickjs), after the
// first runtime (the process's share, locale data in Go, plus the
// runtime's) and per further runtime; and the CPU time of the first
// runtime's render and of a further runtime's, per locale.
// docs/intl.md "Memory" reports it.
func BenchmarkIntlManyLocales(b *testing.B) {
	code := `(function () { var out = 0; ` + intlLocales74 + `.forEach(function (l) {
		out += new Date(0).toLocaleDateString(l, { dateStyle: 'long', timeZone: 'UTC' }).length;
		out += new Intl.NumberFormat(l, { style: 'currency', currency: 'EUR' }).format(1234.5).length;
	}); return String(out); })()`
	forEachEngineB(b, func(b *testing.B, engine string) {
		for b.Loop() {
			e := benchEngine(b, engine, jsvm.Options{StubTimers: true})
			var ms runtime.MemStats
			used := func(rts []jsvm.Runtime) float64 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				n := int64(ms.HeapInuse)
				for _, rt := range rts {
					n += engineMemory(rt)
				}
				return float64(n)
			}
			var rts []jsvm.Runtime
			var steps []float64
			var cpu []time.Duration
			for range 3 {
				rt := conformance.NewLoaded(b, e, "b", `var x;`)
				rts = append(rts, rt)
				if len(steps) == 0 {
					steps = append(steps, used(rts))
				}
				c0 := processCPU()
				conformance.MustEval(b, rt, code)
				cpu = append(cpu, processCPU()-c0)
				steps = append(steps, used(rts))
			}
			for _, rt := range rts {
				rt.Close()
			}
			b.ReportMetric((steps[1]-steps[0])/(1<<20), "first-MB")
			b.ReportMetric((steps[3]-steps[1])/2/(1<<20), "further-MB/runtime")
			b.ReportMetric(float64(cpu[0].Microseconds())/1000/74, "first-cpu-ms/locale")
			b.ReportMetric(float64(cpu[2].Microseconds())/1000/74, "further-cpu-ms/locale")
		}
	})
}
