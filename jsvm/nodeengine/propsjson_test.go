package nodeengine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/bench"
	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
	"github.com/gorender/gorender/jsvm/transform"
)

// propsJSONRender is one fixture render: a request of tests/testdata and
// the bundles it runs with (the first is the entry).
type propsJSONRender struct {
	request string
	bundles []string
	stream  bool
	updates []string // incremental render: update chunks, then the close chunk
}

// TestPropsAsJSONSameAnswers renders every fixture request of the
// repository, and the bench's large page, on the node engine with and
// without the props rewrite, and requires the same answer byte for byte:
// body, streamed chunks, or error text with its stack positions. With the
// rewrite of every literal whatever its size (threshold 1), so that the
// small fixtures' props and Rails contexts are rewritten too; and with the
// production threshold, which rewrites the list and large pages' props.
func TestPropsAsJSONSameAnswers(t *testing.T) {
	defer func(f func([]byte, string) ([]byte, []int)) { propsRewrite = f }(propsRewrite)
	renders := []propsJSONRender{
		{request: "hello-world", bundles: []string{"react-app"}},
		{request: "small-page", bundles: []string{"react-app"}},
		{request: "list-page", bundles: []string{"react-app"}},
		{request: "throws-error", bundles: []string{"react-app"}},
		{request: "async-greeting", bundles: []string{"react-app"}},
		{request: "hello", bundles: []string{"react-app"}},
		{request: "large", bundles: []string{"react-app"}},
		{request: "node-app-home", bundles: []string{"node-app-esbuild"}},
		{request: "node-app-about", bundles: []string{"node-app-webpack"}},
		{request: "async-als", bundles: []string{"async-app"}},
		{request: "stream-pipeable", bundles: []string{"stream-app"}, stream: true},
		{request: "stream-web", bundles: []string{"stream-app"}, stream: true},
		{request: "stream-cross", bundles: []string{"stream-app", "payload-stream"}, stream: true},
		{request: "stream-cross-web", bundles: []string{"stream-app", "payload-stream"}, stream: true},
		{request: "async-props-initial", bundles: []string{"async-props"}, stream: true,
			updates: []string{"async-props-update-1", "async-props-update-2", "async-props-close"}},
	}
	// Every request file is covered.
	files, _ := filepath.Glob(filepath.Join(testdata, "requests", "*.js"))
	covered := map[string]bool{}
	for _, r := range renders {
		covered[r.request] = true
		for _, u := range r.updates {
			covered[u] = true
		}
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".js"); !covered[name] {
			t.Errorf("request %s is not rendered here", name)
		}
	}

	plain, _ := newEngine(t, config{StubTimers: true, ReplayAsyncLogs: true})
	modules, _ := newEngine(t, config{SupportModules: true, ReplayAsyncLogs: true})
	runtimes := map[string]jsvm.Runtime{}
	runtime := func(name string) jsvm.Runtime {
		if rt, ok := runtimes[name]; ok {
			return rt
		}
		src, err := os.ReadFile(filepath.Join(testdata, "bundles", name+".js"))
		if err != nil {
			t.Fatal(err)
		}
		e := modules
		if name == "react-app" {
			e = plain
		}
		rt := load(t, e, name, filepath.Join(testdata, "bundles", name+".js"), string(src))
		runtimes[name] = rt
		return rt
	}
	every := func(dst []byte, code string) ([]byte, []int) { return transform.AppendPropsAsJSONAbove(dst, code, 1) }
	rewrites := 0
	for _, r := range renders {
		t.Run(r.request, func(t *testing.T) {
			code := bench.LargeRequest()
			if r.request != "large" {
				code = readTestdata(t, "requests", r.request+".js")
			}
			if _, n := transform.PropsAsJSONAbove(code, 1); n > 0 {
				rewrites++
			}
			propsRewrite = sentAsIs
			want := propsJSONRenderOnce(t, r, code, runtime)
			for _, rewrite := range []func([]byte, string) ([]byte, []int){every, transform.AppendPropsAsJSON} {
				propsRewrite = rewrite
				if got := propsJSONRenderOnce(t, r, code, runtime); got != want {
					t.Fatalf("the answer changed with the rewrite:\ngot  %.400q\nwant %.400q", got, want)
				}
			}
		})
	}
	if rewrites < len(renders)-2 {
		t.Fatalf("only %d of %d requests had a literal to rewrite", rewrites, len(renders))
	}
	for _, w := range []string{"list-page"} {
		if _, n := transform.PropsAsJSON(readTestdata(t, "requests", w+".js")); n != 1 {
			t.Fatalf("%s: %d literals over the threshold rewritten, want its props", w, n)
		}
	}
	if _, n := transform.PropsAsJSON(bench.LargeRequest()); n != 1 {
		t.Fatalf("large page: %d literals over the threshold rewritten, want its props", n)
	}
}

// TestPropsAsJSONRenderingRequest: with the props rewritten, the request
// still sees itself as sent in renderingRequest (the executor makes it
// from the rewritten text when it is read), literals with quotes,
// backslashes, line breaks and non-ASCII text included; and it can assign
// it as a plain global.
func TestPropsAsJSONRenderingRequest(t *testing.T) {
	defer func(f func([]byte, string) ([]byte, []int)) { propsRewrite = f }(propsRewrite)
	propsRewrite = transform.AppendPropsAsJSON
	e, _ := newEngine(t, config{StubTimers: true})
	rt := load(t, e, "b", "", `var x;`)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"b": rt})
	items := strings.Repeat(`{"t":"it's \"q\" \\ é`+"\u2028"+` café 😀 \u0026 \ud83d","n":[1,-2.5e3,true,null]},`+"\r\n ", 200)
	props := "{\"items\":[" + items + "0],\n\"é\":\"😀\"}"
	for _, tc := range []struct{ name, ret, want string }{
		{"read", "renderingRequest", ""},
		{"read twice", "renderingRequest === renderingRequest ? renderingRequest : 'differs'", ""},
		{"assigned", "(renderingRequest = 'set', renderingRequest + typeof renderingRequest)", "setstring"},
		{"own enumerable property", "Object.keys(globalThis).indexOf('renderingRequest') >= 0 && delete globalThis.renderingRequest ? typeof renderingRequest : 'no'", "undefined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := "(function(componentName = \"X\", props = undefined) {\n  var railsContext = " + props + ";\n" +
				"  var usedProps = typeof props === 'undefined' ? " + props + " : props;\n  return " + tc.ret + ";\n})()"
			if _, parsed := transform.AppendPropsAsJSON(nil, code); len(parsed) != 4 {
				t.Fatalf("%d offsets, want the two literals rewritten", len(parsed))
			}
			res, err := rt.Eval(context.Background(), code, req)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = code
			}
			if res.Body != want {
				t.Fatalf("renderingRequest:\n%.300q\nwant\n%.300q", res.Body, want)
			}
		})
	}
}

func readTestdata(t *testing.T, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{testdata}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// propsJSONRenderOnce renders r and describes its whole answer.
func propsJSONRenderOnce(t *testing.T, r propsJSONRender, code string, runtime func(string) jsvm.Runtime) string {
	t.Helper()
	rts := map[string]jsvm.Runtime{}
	for _, b := range r.bundles {
		rts[b] = runtime(b)
	}
	entry := rts[r.bundles[0]]
	req := jsvm.NewRequest(rts)
	var sink *conformance.RecordingSink
	if r.stream {
		sink = conformance.NewRecordingSink()
		req.Sink = sink
		req.StreamIdle = 10 * time.Second
	}
	var failed []string
	if r.updates != nil {
		req.Updates = jsvm.NewUpdates()
		req.Updates.Failed = func(up jsvm.Update, message string) { failed = append(failed, message) }
		for _, u := range r.updates[:len(r.updates)-1] {
			if err := req.Updates.Push(jsvm.Update{BundleID: r.bundles[0], Code: readTestdata(t, "requests", u+".js")}); err != nil {
				t.Fatal(err)
			}
		}
		req.Updates.Close(&jsvm.Update{BundleID: r.bundles[0], Code: readTestdata(t, "requests", r.updates[len(r.updates)-1]+".js")})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := entry.Eval(ctx, code, req)
	out := fmt.Sprintf("body %q streamed %v err %v failed %q", res.Body, res.Streamed, err, failed)
	if sink != nil {
		out += fmt.Sprintf(" stream %q", sink.Body())
	}
	if err != nil && r.request != "throws-error" {
		t.Logf("%s: %v", r.request, err)
	}
	return out
}

// BenchmarkPropsAsJSON renders the medium and the large page with distinct
// requests (a fresh domNodeId and first title each time, as real traffic
// sends: V8 caches the compile of a repeated source), alternating a render
// with the rewrite and one without, and reports each side's CPU per render:
// the Go side's (which scans and rewrites) and the Node process's.
//
//	go test -run '^$' -bench PropsAsJSON -benchtime 200x ./jsvm/nodeengine/
func BenchmarkPropsAsJSON(b *testing.B) {
	defer func(f func([]byte, string) ([]byte, []int)) { propsRewrite = f }(propsRewrite)
	src, err := os.ReadFile(filepath.Join(testdata, "bundles", "react-app.js"))
	if err != nil {
		b.Fatal(err)
	}
	ws, err := bench.Workloads()
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range ws[2:] {
		b.Run(w.Name, func(b *testing.B) {
			// The production default of RENDERER_NODE_SEMI_SPACE (server
			// settings): V8's own is too small for the large page.
			e, _ := newEngine(b, config{StubTimers: true, SemiSpace: 32 << 20})
			rt := load(b, e, "app", "", string(src))
			req := jsvm.NewRequest(map[string]jsvm.Runtime{"app": rt})
			pid := e.Processes()[0].PID
			variant := 0
			distinct := func() string {
				variant++
				v := fmt.Sprintf("%09d", variant)
				code := strings.Replace(w.Code, "-react-component-", "-react-component-"+v, 1)
				return strings.Replace(code, `"title":"Item 1`, `"title":"Item `+v, 1)
			}
			sides := []struct {
				name    string
				compile func([]byte, string) ([]byte, []int)
			}{{"json", transform.AppendPropsAsJSON}, {"literal", sentAsIs}}
			var goCPU, nodeCPU [2][]float64
			for i := 0; i < 4; i++ { // warm both paths
				for _, s := range sides {
					propsRewrite = s.compile
					if _, err := rt.Eval(context.Background(), distinct(), req); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			for i := range b.N {
				for k := range sides {
					s := sides[(k+i)%2]
					propsRewrite = s.compile
					code := distinct()
					g0, n0 := runNanos(os.Getpid()), runNanos(pid)
					if _, err := rt.Eval(context.Background(), code, req); err != nil {
						b.Fatal(err)
					}
					idx := (k + i) % 2
					goCPU[idx] = append(goCPU[idx], float64(runNanos(os.Getpid())-g0)/1e3)
					nodeCPU[idx] = append(nodeCPU[idx], float64(runNanos(pid)-n0)/1e3)
				}
			}
			b.StopTimer()
			for k, s := range sides {
				b.ReportMetric(median(goCPU[k]), "cpu-go-µs/"+s.name)
				b.ReportMetric(median(nodeCPU[k]), "cpu-node-µs/"+s.name)
				b.ReportMetric(quartileSpread(nodeCPU[k]), "node-iqr-µs/"+s.name)
			}
		})
	}
}

// runNanos is the time every thread of a process has run so far, in ns
// (/proc/<pid>/task/*/schedstat: exact, where /proc/<pid>/stat counts
// 10 ms ticks).
func runNanos(pid int) int64 {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	var n int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			n += v
		}
	}
	return n
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// quartileSpread is the interquartile range: how noisy the sample was.
func quartileSpread(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) < 4 {
		return 0
	}
	return s[3*len(s)/4] - s[len(s)/4]
}
