package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gorender/gorender/gemclient"
)

// This file proves the metrics of PROTOCOL.md §10 move as described, from
// the outside: a scripted sequence of requests, then exact deltas of every
// gorender_* series it touches, parsed with the Prometheus text parser.

// promScrape is one parsed /metrics answer.
type promScrape map[string]*dto.MetricFamily

// scrapeMetrics GETs /metrics over HTTP/1.1 and parses it.
func (s *server) scrapeMetrics(t *testing.T) promScrape {
	t.Helper()
	r := s.get(t, transports[1], http.MethodGet, "/metrics")
	if r.Status != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", r.Status, clip(r.Body))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(r.Body))
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return families
}

// series returns the samples of name whose labels include labels (name,
// value pairs). A histogram is read through name_count and name_sum.
func (p promScrape) series(name string, labels ...string) []float64 {
	family, field := name, ""
	if _, ok := p[name]; !ok {
		for _, suffix := range []string{"_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok {
				family, field = base, suffix
			}
		}
	}
	f, ok := p[family]
	if !ok {
		return nil
	}
	var out []float64
	for _, m := range f.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			out = append(out, m.Counter.GetValue())
		case m.Gauge != nil:
			out = append(out, m.Gauge.GetValue())
		case m.Untyped != nil:
			out = append(out, m.Untyped.GetValue())
		case m.Histogram != nil && field == "_count":
			out = append(out, float64(m.Histogram.GetSampleCount()))
		case m.Histogram != nil && field == "_sum":
			out = append(out, m.Histogram.GetSampleSum())
		}
	}
	return out
}

// value is the sum of the matching samples (0 when none).
func (p promScrape) value(name string, labels ...string) float64 {
	var sum float64
	for _, v := range p.series(name, labels...) {
		sum += v
	}
	return sum
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// labelSets lists the label sets of a family as "k=v,k=v" strings.
func (p promScrape) labelSets(name string) map[string]float64 {
	out := map[string]float64{}
	f, ok := p[name]
	if !ok {
		return out
	}
	for _, m := range f.GetMetric() {
		var kv []string
		for _, lp := range m.GetLabel() {
			kv = append(kv, lp.GetName()+"="+lp.GetValue())
		}
		sort.Strings(kv)
		var v float64
		switch {
		case m.Counter != nil:
			v = m.Counter.GetValue()
		case m.Gauge != nil:
			v = m.Gauge.GetValue()
		case m.Histogram != nil:
			v = float64(m.Histogram.GetSampleCount())
		}
		out[strings.Join(kv, ",")] = v
	}
	return out
}

// waitScrape scrapes until ok accepts a scrape, or fails t after within.
func (s *server) waitScrape(t *testing.T, within time.Duration, what string, ok func(promScrape) bool) promScrape {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		p := s.scrapeMetrics(t)
		if ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never showed %s within %s; the last scrape had %s", what, within, p.runtimeSeries())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runtimeSeries describes the series most waits are about (the pools'
// runtimes and the node engine's processes), for a wait's failure.
func (p promScrape) runtimeSeries() string {
	var out []string
	for _, name := range []string{"gorender_runtimes", "gorender_runtimes_busy", "gorender_runtimes_quarantined", "gorender_engine_processes"} {
		sets := p.labelSets(name)
		keys := make([]string, 0, len(sets))
		for k := range sets {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, fmt.Sprintf("%s{%s} %v", name, k, sets[k]))
		}
	}
	if len(out) == 0 {
		return "none of the runtimes' and processes' series"
	}
	return strings.Join(out, ", ")
}

// wantDeltas checks after-before of each "name{k=v,...}" key of want. A key
// lists its labels as name|k|v|k|v.
func wantDeltas(t *testing.T, before, after promScrape, want map[string]float64) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		parts := strings.Split(key, "|")
		got := after.value(parts[0], parts[1:]...) - before.value(parts[0], parts[1:]...)
		if got != want[key] {
			t.Errorf("%s moved by %v, want %v", key, got, want[key])
		}
	}
}

const renderRoute = "/bundles/{bundleId}/render/{digest}"

// endlessStream is a rendering request whose value is a web-style stream
// (an object with getReader) that never ends: only its client can end it.
const endlessStream = `({ getReader: function () { return {
  read: function () { return Promise.resolve({ done: false, value: 'metered stream chunk\n' }); },
  cancel: function () { return Promise.resolve(); }
}; } })`

// TestMetricsScriptedSequence runs a 410, an upload, three good renders, a
// JavaScript error, a stream its client leaves, a timeout and a
// queue-timeout 503, then checks the exact movement of every series they
// touch (PROTOCOL.md §10, issue #7).
func TestMetricsScriptedSequence(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"RENDERER_WORKERS_COUNT": "1", "RENDERER_RENDER_TIMEOUT": "2s", "RENDERER_QUEUE_TIMEOUT": "300ms",
	}
	if testEngine == "node" {
		// One runtime, as on the other engines: the sequence counts the
		// pool exactly (a render queued in the process behind the runaway
		// would lease a second runtime of the bundle).
		env["RENDERER_NODE_QUEUE_DEPTH"] = "1"
	}
	s := startServer(t, env)
	h2 := transports[0]
	before := s.scrapeMetrics(t)

	var renderIn, renderOut int // request and response body bytes of the render route
	render := func(id, code string, status int) *response {
		t.Helper()
		r := s.render(t, h2, id, code)
		r.wantStatus(t, h2, status)
		renderIn += len(code)
		renderOut += len(r.Body)
		return r
	}

	id := newID("s")
	render(id, "MARKER", http.StatusGone).want(t, h2, http.StatusGone, "No bundle uploaded")
	bundle := markerBundle("metered")
	s.upload(t, map[string]string{id: bundle}, nil)
	for range 3 {
		render(id, "MARKER", http.StatusOK).want(t, h2, http.StatusOK, "metered")
	}
	render(id, "throw new Error('metered failure')", http.StatusBadRequest)

	// A stream its client leaves after the first bytes.
	streamRead := s.readThenLeave(t, h2, id, endlessStream, 4096)
	renderIn += len(endlessStream)
	s.waitScrape(t, 60*time.Second, "the stream ended by its client", func(p promScrape) bool {
		return p.value("gorender_streams_ended_total", "outcome", "client_gone") == 1 &&
			p.value("gorender_runtimes_busy", "bundle", id) == 0
	})
	// A scrape is no snapshot: the registry collects its series
	// concurrently, so the one that saw the stream end may have read the
	// replacements before the stream's runtime was released. The stream's
	// runtime is counted before its render returns; a scrape made after that
	// one counts it.
	mid := s.scrapeMetrics(t)

	// A runaway render holds the only runtime until its deadline: a render
	// queued behind it gets 503 after the queue timeout.
	stuck := s.startRender(t, h2, id, runaway)
	renderIn += len(runaway)
	busy := s.waitScrape(t, 60*time.Second, "the runaway render running", func(p promScrape) bool {
		return p.value("gorender_runtimes_busy", "bundle", id) == 1
	})
	if busy.value("gorender_render_duration_seconds_count", "outcome", "timeout") != 0 {
		t.Fatal("the runaway render timed out before the queued render was sent")
	}
	queued := render(id, "MARKER", http.StatusServiceUnavailable)
	queued.wantHeader(t, "Retry-After", "1")
	r := <-stuck
	r.wantTimedOut(t, h2, 2*time.Second)
	renderOut += len(r.Body)

	after := s.waitScrape(t, 60*time.Second, "the replaced runtime back in its pool", func(p promScrape) bool {
		return p.value("gorender_runtimes_busy", "bundle", id) == 0 && p.value("gorender_runtimes", "bundle", id) == 1
	})

	wantDeltas(t, before, after, map[string]float64{
		"gorender_http_requests_total|route|" + renderRoute + "|code|410":   1,
		"gorender_http_requests_total|route|" + renderRoute + "|code|200":   4, // 3 renders and the stream
		"gorender_http_requests_total|route|" + renderRoute + "|code|400":   2,
		"gorender_http_requests_total|route|" + renderRoute + "|code|503":   1,
		"gorender_http_requests_total|route|/upload-assets|code|200":        1,
		"gorender_render_duration_seconds_count|outcome|not_found_bundle":   1,
		"gorender_render_duration_seconds_count|outcome|ok":                 3,
		"gorender_render_duration_seconds_count|outcome|js_error":           1,
		"gorender_render_duration_seconds_count|outcome|stream_client_gone": 1,
		"gorender_render_duration_seconds_count|outcome|timeout":            1,
		"gorender_render_duration_seconds_count|outcome|queue_timeout":      1,
		"gorender_render_duration_seconds_count":                            8,
		"gorender_queue_wait_seconds_count":                                 6, // every render that got a runtime
		"gorender_bundle_uploads_total|result|stored":                       1,
		"gorender_bundle_uploads_total":                                     1,
		"gorender_bundle_missing_total":                                     1,
		"gorender_streams_ended_total|outcome|client_gone":                  1,
		"gorender_streams_ended_total":                                      1,
		"gorender_gem_version_requests_total|gem_version|" + gemVersion:     9, // every authenticated request
		"gorender_gem_version_requests_total":                               9,
		"gorender_http_request_bytes_total|route|" + renderRoute:            float64(renderIn),
		"gorender_http_response_bytes_total|route|/upload-assets":           0,
		"gorender_runtimes_quarantined":                                     0,
	})
	// The runaway's runtime was replaced, once, as broken (the stream's
	// runtime may or may not be: that depends on what noticed the client
	// leave first, a failed write or the canceled request).
	wantDeltas(t, mid, after, map[string]float64{
		"gorender_runtime_replacements_total|reason|broken": 1,
		"gorender_runtime_replacements_total":               1,
	})

	if t.Failed() {
		t.Logf("gorender series before:\n%s\nafter:\n%s", metricsSummary(before), metricsSummary(after))
	}

	// Only the routes the sequence used, with the statuses it got.
	routes := after.labelSets("gorender_http_requests_total")
	for set := range routes {
		if strings.HasSuffix(set, "route=/metrics") || strings.HasSuffix(set, "route=/health") {
			continue // the scrapes, and startServer's probes
		}
		switch set {
		case "code=200,route=" + renderRoute, "code=400,route=" + renderRoute, "code=410,route=" + renderRoute,
			"code=503,route=" + renderRoute, "code=200,route=/upload-assets":
		default:
			t.Errorf("unexpected series gorender_http_requests_total{%s}", set)
		}
	}

	// Body bytes: the render route's request bytes are exactly the rendering
	// requests sent; its response bytes are the buffered answers plus at
	// least what the stream's client read.
	if got := after.value("gorender_http_response_bytes_total", "route", renderRoute); got < float64(renderOut+streamRead) {
		t.Errorf("render response bytes %v, want at least %d buffered + %d streamed", got, renderOut, streamRead)
	}
	upIn := after.value("gorender_http_request_bytes_total", "route", "/upload-assets")
	if upIn < float64(len(bundle)) || upIn > float64(len(bundle)+4096) {
		t.Errorf("upload request bytes %v, want the multipart body around the %d-byte bundle", upIn, len(bundle))
	}
	if after.value("gorender_http_response_bytes_total", "route", "/metrics") <= 0 {
		t.Errorf("the /metrics answers were not counted in gorender_http_response_bytes_total")
	}

	// Gauges.
	for _, g := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"gorender_runtimes", []string{"bundle", id}, 1},
		{"gorender_runtimes_busy", []string{"bundle", id}, 0},
		{"gorender_bundles_loaded", nil, 1},
		{"gorender_runtimes_quarantined", nil, 0},
		{"gorender_build_info", []string{"version", rendererVersion, "goversion", runtime.Version(), "engine", testEngine}, 1},
	} {
		if got := after.series(g.name, g.labels...); len(got) != 1 || got[0] != g.want {
			t.Errorf("%s%v = %v, want one sample of %v", g.name, g.labels, got, g.want)
		}
	}
	// The Go and process collectors.
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_gc_duration_seconds", "go_info",
		"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds"} {
		if _, ok := after[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

// TestEngineMemoryMetric: gorender_engine_memory_bytes reports, per loaded
// bundle, the memory quickjs's runtimes hold outside the Go heap, as of
// their last load or render: positive after a render of the React fixture
// and within the process's resident memory, larger once a render keeps
// more, and gone with the bundle when it is evicted. goja allocates on the
// Go heap (go_memstats_*): there the series is absent.
func TestEngineMemoryMetric(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "1", "MAX_VM_POOL_SIZE": "1"})
	h2 := transports[0]
	app, other := newID("s"), newID("s")
	s.upload(t, map[string]string{app: reactApp(t), other: markerBundle("other")}, nil)
	s.render(t, h2, app, request(t, "small-page")).want(t, h2, http.StatusOK, golden(t, "small-page"))
	const name = "gorender_engine_memory_bytes"
	p := s.scrapeMetrics(t)
	if testEngine != "quickjs" {
		if _, ok := p[name]; ok {
			t.Errorf("%s present on %s: %v", name, testEngine, p.labelSets(name))
		}
		return
	}
	loaded := p.series(name, "bundle", app)
	if len(loaded) != 1 || loaded[0] <= 0 {
		t.Fatalf("%s{bundle=app} = %v after a render, want one positive sample", name, loaded)
	}
	if rss := p.value("process_resident_memory_bytes"); loaded[0] > rss {
		t.Errorf("%s = %v, more than the process's resident memory %v", name, loaded[0], rss)
	}

	// An array of 2^22 values (8 or 16 bytes a value) kept in a global.
	s.render(t, h2, app, "globalThis.kept = new Array(1 << 22).fill(0); 'kept'").want(t, h2, http.StatusOK, "kept")
	if grown := s.scrapeMetrics(t).value(name, "bundle", app) - loaded[0]; grown < 32<<20 {
		t.Errorf("%s grew by %v bytes after a render that keeps at least 32 MiB", name, grown)
	}

	// MAX_VM_POOL_SIZE=1: loading the other bundle evicts the first.
	s.render(t, h2, other, "MARKER").want(t, h2, http.StatusOK, "other")
	p = s.scrapeMetrics(t)
	if got := p.series(name, "bundle", app); len(got) != 0 {
		t.Errorf("%s{bundle=app} = %v after its eviction, want no series", name, got)
	}
	if got := p.series(name, "bundle", other); len(got) != 1 || got[0] <= 0 {
		t.Errorf("%s{bundle=other} = %v, want one positive sample", name, got)
	}
}

// readThenLeave starts a streamed render, reads at least n bytes of it, then
// cancels the request (RST_STREAM on h2c, a closed socket on HTTP/1.1); it
// returns how many bytes it read.
func (s *server) readThenLeave(t *testing.T, tr transport, id, code string, n int) int {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(c, http.MethodPost, s.url+"/bundles/"+id+"/render/x", strings.NewReader(code))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = rawRenderHeaders()
	req.Header.Set("Content-Type", gemclient.RawJSContentType)
	req.Header.Set("X-React-On-Rails-Pro-Gem-Version", gemVersion)
	resp, err := s.http(tr).Do(req)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: status %d: %s", resp.StatusCode, clip(string(b)))
	}
	buf := make([]byte, n)
	got, err := io.ReadFull(resp.Body, buf)
	if err != nil {
		t.Fatalf("stream: read %d bytes: %v", got, err)
	}
	cancel()
	return got
}

// TestMetricsDisabled: RENDERER_METRICS=false removes /metrics (404) and
// changes nothing else (PROTOCOL.md §10).
func TestMetricsDisabled(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_METRICS": "false"})
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("unmetered")}, nil)
	eachTransport(t, func(t *testing.T, tr transport) {
		s.get(t, tr, http.MethodGet, "/metrics").want(t, tr, http.StatusNotFound, "Not found")
		s.render(t, tr, id, "MARKER").want(t, tr, http.StatusOK, "unmetered")
		s.get(t, tr, http.MethodGet, "/health").want(t, tr, http.StatusOK, `{"status":"ok"}`)
		s.get(t, tr, http.MethodGet, "/ready").want(t, tr, http.StatusOK, `{"status":"ready"}`)
	})
}

// metricsSummary renders a scrape's gorender_* series for failure messages.
func metricsSummary(p promScrape) string {
	var lines []string
	for name := range p {
		if !strings.HasPrefix(name, "gorender_") {
			continue
		}
		for set, v := range p.labelSets(name) {
			lines = append(lines, fmt.Sprintf("%s{%s} %v", name, set, v))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// metricValue returns the value of one series of /metrics (0 when absent).
func (s *server) metricValue(t *testing.T, series string) float64 {
	t.Helper()
	return metricIn(s.get(t, transports[1], http.MethodGet, "/metrics").Body, series)
}

// metricIn finds series (name{labels}, exactly as exposed) in a /metrics body.
func metricIn(body, series string) float64 {
	for line := range strings.Lines(body) {
		rest, ok := strings.CutPrefix(line, series+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			return -1
		}
		return v
	}
	return 0
}

// waitMetric polls /metrics until ok(value of series) or the deadline.
func (s *server) waitMetric(t *testing.T, series string, within time.Duration, ok func(float64) bool) float64 {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		v := s.metricValue(t, series)
		if ok(v) || time.Now().After(deadline) {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func busySeries(id string) string { return `gorender_runtimes_busy{bundle="` + id + `"}` }

func streamsEnded(outcome string) string {
	return `gorender_streams_ended_total{outcome="` + outcome + `"}`
}
