package nodeengine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/bench"
	"github.com/gorender/gorender/jsvm"
)

// The benchmarks report, besides the wall time, the CPU each render costs
// gorender's side (cpu-go-µs/op) and the Node.js process (cpu-node-µs/op):
// on a shared machine the wall time swings with the load, the CPU much less.
// Pin them to one CPU (taskset -c 1) to see the cost of the two processes
// taking turns, as in the side-by-side bench.

// BenchmarkEvalHello is one trivial render through a process: the frames'
// round trip and the executor's flow, no React.
func BenchmarkEvalHello(b *testing.B) {
	e, _ := newEngine(b, config{StubTimers: true})
	rt := load(b, e, "b", "", `var x;`)
	benchEval(b, e, rt, "b", `'<p>hello</p>'`, "<p>hello</p>")
}

// BenchmarkEvalPage renders the side-by-side bench's pages (bench.Workloads)
// with the React bundle of the end-to-end tests.
func BenchmarkEvalPage(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(testdata, "bundles", "react-app.js"))
	if err != nil {
		b.Fatal(err)
	}
	ws, err := bench.Workloads()
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range ws[1:] {
		b.Run(w.Name, func(b *testing.B) {
			e, _ := newEngine(b, config{StubTimers: true})
			rt := load(b, e, "app", "", string(src))
			benchEval(b, e, rt, "app", w.Code, "")
		})
	}
}

func benchEval(b *testing.B, e *Engine, rt jsvm.Runtime, name, code, want string) {
	req := jsvm.NewRequest(map[string]jsvm.Runtime{name: rt})
	ctx := context.Background()
	res, err := rt.Eval(ctx, code, req)
	if err != nil || (want != "" && res.Body != want) {
		b.Fatal(res.Body, err)
	}
	b.SetBytes(int64(len(code) + len(res.Body)))
	pid := e.Processes()[0].PID
	goCPU, nodeCPU := cpuTime(os.Getpid()), cpuTime(pid)
	goSwitches, nodeSwitches := contextSwitches(os.Getpid()), contextSwitches(pid)
	b.ResetTimer()
	for range b.N {
		if _, err := rt.Eval(ctx, code, req); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(cpuTime(os.Getpid())-goCPU)/n/1e3, "cpu-go-µs/op")
	b.ReportMetric(float64(cpuTime(pid)-nodeCPU)/n/1e3, "cpu-node-µs/op")
	b.ReportMetric(float64(contextSwitches(os.Getpid())-goSwitches)/n, "ctxsw-go/op")
	b.ReportMetric(float64(contextSwitches(pid)-nodeSwitches)/n, "ctxsw-node/op")
}

// contextSwitches counts the context switches of every thread of a process
// so far (0 where there is no /proc).
func contextSwitches(pid int) int64 {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
	var n int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
	}
	return n
}

// cpuTime is a process's user and system time so far (clock ticks of
// /proc/<pid>/stat, 10 ms each on Linux); 0 where there is no /proc.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}
