// Package metrics owns gorender's Prometheus registry and every collector,
// all named gorender_*. Other packages call its small typed methods; none
// registers collectors of its own.
package metrics

import (
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the registry and its collectors.
type Metrics struct {
	registry *prometheus.Registry

	requests        *prometheus.CounterVec
	requestBytes    *prometheus.CounterVec
	responseBytes   *prometheus.CounterVec
	renderDurationV *prometheus.HistogramVec
	queueWait       prometheus.Histogram
	runtimeReplaced *prometheus.CounterVec
	bundlesLoaded   prometheus.Gauge
	quarantined     prometheus.Gauge
	bundleUploads   *prometheus.CounterVec
	bundleMissing   prometheus.Counter
	cacheBytes      prometheus.Gauge
	bundlesPruned   prometheus.Counter
	streamsEnded    *prometheus.CounterVec
	gemVersions     *prometheus.CounterVec
	connectionsShed *prometheus.CounterVec

	// The children of the vectors a request counts, by label values: a
	// map lookup, where WithLabelValues hashes and checks the values on
	// every call (about 0.4 µs each, 5 per render).
	requestsBy     children[requestKey, prometheus.Counter]
	bodyBytesBy    children[string, bodyCounters]
	renderDuration children[string, prometheus.Observer]

	gemMu    sync.Mutex
	gemSeen  map[string]prometheus.Counter // by version, up to maxGemVersions
	gemOther prometheus.Counter            // the versions past them
}

// requestKey labels gorender_http_requests_total.
type requestKey struct {
	route string
	code  int
}

// bodyCounters are a route's request and response body byte counters.
type bodyCounters struct{ read, written prometheus.Counter }

// children caches a vector's children by their label values. Its size is
// the vector's number of series, which its labels already bound.
type children[K comparable, M any] struct {
	mu   sync.RWMutex
	m    map[K]M
	with func(K) M // the vector's child of K
}

func newChildren[K comparable, M any](with func(K) M) children[K, M] {
	return children[K, M]{m: make(map[K]M), with: with}
}

func (c *children[K, M]) get(k K) M {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = c.with(k)
	c.mu.Lock()
	c.m[k] = v
	c.mu.Unlock()
	return v
}

// New registers every collector on a fresh registry.
func New(version, engine string) *Metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{registry: reg, gemSeen: make(map[string]prometheus.Counter)}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gorender_http_requests_total", Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	m.requestBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gorender_http_request_bytes_total", Help: "Request body bytes read, by route.",
	}, []string{"route"})
	m.responseBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gorender_http_response_bytes_total", Help: "Response body bytes written, by route.",
	}, []string{"route"})
	m.renderDurationV = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gorender_render_duration_seconds", Help: "Render duration by outcome, from body decoded to answer ready.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"outcome"})
	m.queueWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "gorender_queue_wait_seconds", Help: "Time a render waited for free runtimes.",
		Buckets: []float64{.0001, .001, .005, .01, .05, .1, .5, 1, 5},
	})
	m.runtimeReplaced = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gorender_runtime_replacements_total", Help: "Runtimes retired and replaced, by reason.",
	}, []string{"reason"})
	m.bundlesLoaded = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gorender_bundles_loaded", Help: "Bundles compiled and loaded in runtime pools.",
	})
	m.quarantined = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gorender_runtimes_quarantined", Help: "Runtimes given up after ignoring an interrupt, still running until they stop.",
	})
	m.bundleUploads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gorender_bundle_uploads_total", Help: "Bundles received, by result (stored or existing).",
	}, []string{"result"})
	m.bundleMissing = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "gorender_bundle_missing_total", Help: "Renders answered 410 because a bundle was not in the cache.",
	})
	m.cacheBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gorender_bundle_cache_bytes", Help: "Bytes of the bundle cache's bundle directories, as of the last pruning pass (every minute and after each store).",
	})
	m.bundlesPruned = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "gorender_bundles_pruned_total", Help: "Bundles removed from the cache to keep it within RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE.",
	})
	m.streamsEnded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gorender_streams_ended_total", Help: "Streamed answers by how they ended: ok, client_gone, idle or error.",
	}, []string{"outcome"})
	m.gemVersions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gorender_gem_version_requests_total", Help: "Authenticated requests by Rails gem version (bounded set).",
	}, []string{"gem_version"})
	m.connectionsShed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gorender_connections_shed_total", Help: "Connections closed at RENDERER_MAX_CONNECTIONS or RENDERER_MAX_UNAUTHENTICATED_CONNECTIONS, by reason: evicted (an old unauthenticated one made room) or refused (the new one).",
	}, []string{"reason"})
	for _, reason := range []string{"evicted", "refused"} {
		m.connectionsShed.WithLabelValues(reason)
	}
	m.requestsBy = newChildren(func(k requestKey) prometheus.Counter {
		return m.requests.WithLabelValues(k.route, strconv.Itoa(k.code))
	})
	m.bodyBytesBy = newChildren(func(route string) bodyCounters {
		return bodyCounters{m.requestBytes.WithLabelValues(route), m.responseBytes.WithLabelValues(route)}
	})
	m.renderDuration = newChildren(func(outcome string) prometheus.Observer {
		return m.renderDurationV.WithLabelValues(outcome)
	})
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gorender_build_info", Help: "Build information; always 1.",
	}, []string{"version", "goversion", "engine"})
	build.WithLabelValues(version, runtime.Version(), engine).Set(1)
	for _, c := range []prometheus.Collector{
		m.requests, m.requestBytes, m.responseBytes, m.renderDurationV, m.queueWait,
		m.runtimeReplaced, m.bundlesLoaded, m.quarantined, m.bundleUploads, m.bundleMissing, m.cacheBytes, m.bundlesPruned, m.streamsEnded, m.gemVersions, m.connectionsShed, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		f(c)
	}
	return m
}

// Connections registers gorender_connections_open, the client connections
// open now, and gorender_connections_unauthenticated, those of them that
// never carried an authenticated request (both asked at each scrape).
func (m *Metrics) Connections(open, unauthenticated func() int) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gorender_connections_open",
		Help: "Client connections open (at most RENDERER_MAX_CONNECTIONS).",
	}, func() float64 { return float64(open()) }), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gorender_connections_unauthenticated",
		Help: "Client connections open that never carried an authenticated request (at most RENDERER_MAX_UNAUTHENTICATED_CONNECTIONS).",
	}, func() float64 { return float64(unauthenticated()) }))
}

// ConnectionShed counts a connection closed at the connection cap:
// "evicted" (an old unauthenticated one made room) or "refused" (every
// open one was authenticated, so the new one was closed).
func (m *Metrics) ConnectionShed(reason string) {
	m.connectionsShed.WithLabelValues(reason).Inc()
}

// QuarantineLimit registers gorender_runtimes_quarantined_limit, the bound
// on gorender_runtimes_quarantined (RENDERER_MAX_QUARANTINED_RUNTIMES):
// at it, /ready answers quarantine_full.
func (m *Metrics) QuarantineLimit(limit int) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gorender_runtimes_quarantined_limit",
		Help: "Runtimes given up as stuck that may still run (RENDERER_MAX_QUARANTINED_RUNTIMES); at it /ready answers quarantine_full.",
	})
	g.Set(float64(limit))
	m.registry.MustRegister(g)
}

// UnauthenticatedBody registers gorender_unauthenticated_body_bytes (what
// requests not yet authenticated are charged now, asked at each scrape) and
// gorender_unauthenticated_body_budget_bytes (its bound).
func (m *Metrics) UnauthenticatedBody(inUse func() int64, budget int64) {
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gorender_unauthenticated_body_bytes",
			Help: "Bytes charged to requests whose password is not checked yet (RENDERER_UNAUTHENTICATED_BODY_BUDGET).",
		}, func() float64 { return float64(inUse()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gorender_unauthenticated_body_budget_bytes",
			Help: "The bound on gorender_unauthenticated_body_bytes (RENDERER_UNAUTHENTICATED_BODY_BUDGET).",
		}, func() float64 { return float64(budget) }),
	)
}

// MaxHeap registers gorender_max_heap_bytes, RENDERER_MAX_HEAP: the Go heap
// (go_memstats_heap_alloc_bytes, what the memory guard reads) above which
// the guard interrupts renders. Not registered when the guard is off
// (limit 0), so that alerts on the ratio stay silent.
func (m *Metrics) MaxHeap(limit uint64) {
	if limit == 0 {
		return
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gorender_max_heap_bytes",
		Help: "RENDERER_MAX_HEAP: the Go heap (go_memstats_heap_alloc_bytes) above which the memory guard interrupts the longest render.",
	})
	g.Set(float64(limit))
	m.registry.MustRegister(g)
}

// BundleStats is one loaded bundle's runtimes (see LoadedBundles).
type BundleStats struct {
	ID              string
	Runtimes, Busy  int
	EngineMemory    int64
	HasEngineMemory bool
}

// LoadedBundles registers the series labelled by bundle, read from stats at
// each scrape: gorender_runtimes and gorender_runtimes_busy, and
// gorender_engine_memory_bytes for an engine whose memory is outside the Go
// heap (quickjs; a bundle without HasEngineMemory has no such series).
// stats lists the loaded bundles only, so a bundle's series go when it is
// evicted and their number is bounded by MAX_VM_POOL_SIZE.
func (m *Metrics) LoadedBundles(stats func() []BundleStats) {
	m.registry.MustRegister(&loadedBundles{
		stats: stats,
		runtimes: prometheus.NewDesc("gorender_runtimes",
			"JavaScript runtimes alive, per loaded bundle.", []string{"bundle"}, nil),
		busy: prometheus.NewDesc("gorender_runtimes_busy",
			"JavaScript runtimes leased to a request, per loaded bundle.", []string{"bundle"}, nil),
		engineMemory: prometheus.NewDesc("gorender_engine_memory_bytes",
			"Memory held outside the Go heap by the JavaScript engine's runtimes (quickjs), per loaded bundle, as of each runtime's last load or render.",
			[]string{"bundle"}, nil),
	})
}

type loadedBundles struct {
	stats                        func() []BundleStats
	runtimes, busy, engineMemory *prometheus.Desc
}

func (c *loadedBundles) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.runtimes
	ch <- c.busy
	ch <- c.engineMemory
}

func (c *loadedBundles) Collect(ch chan<- prometheus.Metric) {
	for _, b := range c.stats() {
		ch <- prometheus.MustNewConstMetric(c.runtimes, prometheus.GaugeValue, float64(b.Runtimes), b.ID)
		ch <- prometheus.MustNewConstMetric(c.busy, prometheus.GaugeValue, float64(b.Busy), b.ID)
		if b.HasEngineMemory {
			ch <- prometheus.MustNewConstMetric(c.engineMemory, prometheus.GaugeValue, float64(b.EngineMemory), b.ID)
		}
	}
}

// ProcessSample is one process an engine runs renders in (the node
// engine's), at a scrape.
type ProcessSample struct {
	Process string // its slot, "0" to "n-1": a bounded label
	RSS     int64
}

// EngineProcesses registers the series of an engine that runs renders in
// processes of its own (node): gorender_engine_processes,
// gorender_engine_process_resident_bytes per process slot and
// gorender_engine_process_restarts_total by reason. sample is asked at each
// scrape.
func (m *Metrics) EngineProcesses(sample func() ([]ProcessSample, map[string]uint64)) {
	m.registry.MustRegister(&engineProcesses{
		running: prometheus.NewDesc("gorender_engine_processes",
			"Processes the JavaScript engine runs renders in (node engine), started and running.", nil, nil),
		rss: prometheus.NewDesc("gorender_engine_process_resident_bytes",
			"Resident memory of each engine process (node engine), by process slot.", []string{"process"}, nil),
		restarts: prometheus.NewDesc("gorender_engine_process_restarts_total",
			"Engine processes replaced (node engine), by reason: deadline, unresponsive, crash, oom, recycled, protocol, bundle_fault, load_deadline, start.", []string{"reason"}, nil),
		sample: sample,
	})
}

type engineProcesses struct {
	running, rss, restarts *prometheus.Desc
	sample                 func() ([]ProcessSample, map[string]uint64)
}

func (c *engineProcesses) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.running
	ch <- c.rss
	ch <- c.restarts
}

func (c *engineProcesses) Collect(ch chan<- prometheus.Metric) {
	procs, restarts := c.sample()
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(len(procs)))
	for _, p := range procs {
		ch <- prometheus.MustNewConstMetric(c.rss, prometheus.GaugeValue, float64(p.RSS), p.Process)
	}
	for reason, n := range restarts {
		ch <- prometheus.MustNewConstMetric(c.restarts, prometheus.CounterValue, float64(n), reason)
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Request counts one HTTP request.
func (m *Metrics) Request(route string, code int) {
	m.requestsBy.get(requestKey{route, code}).Inc()
}

// BodyBytes counts the request body bytes read and the response body bytes
// written by one request.
func (m *Metrics) BodyBytes(route string, read, written int64) {
	c := m.bodyBytesBy.get(route)
	c.read.Add(float64(read))
	c.written.Add(float64(written))
}

// Render observes one render's duration by outcome.
func (m *Metrics) Render(outcome string, d time.Duration) {
	m.renderDuration.get(outcome).Observe(d.Seconds())
}

// QueueWait observes the wait for free runtimes.
func (m *Metrics) QueueWait(d time.Duration) { m.queueWait.Observe(d.Seconds()) }

// RuntimeReplaced counts a retired runtime.
func (m *Metrics) RuntimeReplaced(reason string) { m.runtimeReplaced.WithLabelValues(reason).Inc() }

// Quarantined moves the gauge of runtimes given up as stuck.
func (m *Metrics) Quarantined(delta int) { m.quarantined.Add(float64(delta)) }

// BundlesLoaded sets the number of loaded bundles.
func (m *Metrics) BundlesLoaded(n int) { m.bundlesLoaded.Set(float64(n)) }

// BundleUpload counts a received bundle by result ("stored" or "existing").
func (m *Metrics) BundleUpload(result string) { m.bundleUploads.WithLabelValues(result).Inc() }

// StreamEnded counts a streamed answer by how it ended.
func (m *Metrics) StreamEnded(outcome string) { m.streamsEnded.WithLabelValues(outcome).Inc() }

// BundleMissing counts a 410.
func (m *Metrics) BundleMissing() { m.bundleMissing.Inc() }

// BundleCache records a pruning pass: the cache's size after it and how
// many bundles it removed.
func (m *Metrics) BundleCache(size int64, pruned int) {
	m.cacheBytes.Set(float64(size))
	m.bundlesPruned.Add(float64(pruned))
}

// maxGemVersions bounds the gem_version label set; later versions count as "other".
const maxGemVersions = 20

// GemVersion counts a request from a gem version and reports whether the
// version is new to this process, so the caller can log it once.
func (m *Metrics) GemVersion(v string) (first bool) {
	m.gemMu.Lock()
	c, seen := m.gemSeen[v]
	switch {
	case seen:
	case len(m.gemSeen) < maxGemVersions:
		c = m.gemVersions.WithLabelValues(v)
		m.gemSeen[v] = c
		first = true
	default:
		if m.gemOther == nil {
			m.gemOther = m.gemVersions.WithLabelValues("other")
		}
		c = m.gemOther
	}
	m.gemMu.Unlock()
	c.Inc()
	return first
}
