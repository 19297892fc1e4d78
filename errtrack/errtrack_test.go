package errtrack

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// ingest is a local Sentry endpoint: it keeps every envelope's body.
type ingest struct {
	mu     sync.Mutex
	bodies []string
}

func newIngest(t *testing.T) (*ingest, string) {
	in := &ingest{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		in.mu.Lock()
		in.bodies = append(in.bodies, r.URL.Path+"\n"+string(b))
		in.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return in, strings.Replace(srv.URL, "http://", "http://key@", 1) + "/7"
}

func (in *ingest) all() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return strings.Join(in.bodies, "\n")
}

// wait is what the ingest received once it holds want, or after 10 s. (The
// SDK's Flush can return before an event just captured is queued.)
func (in *ingest) wait(want string) string {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got := in.all(); strings.Contains(got, want) {
			return got
		}
	}
	return in.all()
}

// TestPanicEvent: a recovered panic goes to Sentry through the real SDK
// with the panicking function's frame, in-app.
func TestPanicEvent(t *testing.T) {
	in, dsn := newIngest(t)
	tr, err := New(Config{SentryDSN: dsn, SendTimeout: time.Second}, "test", "goja", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				tr.Panic("test", p, nil)
			}
		}()
		panicky()
	}()
	got := in.wait("the panic value")
	if !strings.Contains(got, `"type":"panic"`) || !strings.Contains(got, "errtrack.panicky") || !strings.Contains(got, "the panic value") {
		t.Fatalf("the panic's event: %s", got)
	}
}

func panicky() { panic("the panic value") }

// TestMiddlewarePanic: a handler's panic is reported with the handler's
// frame, then panics on for the server's own recovery; a stream aborted on
// purpose (http.ErrAbortHandler) is not reported.
func TestMiddlewarePanic(t *testing.T) {
	in, dsn := newIngest(t)
	tr, err := New(Config{SentryDSN: dsn, SendTimeout: time.Second}, "test", "goja", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, value := range []any{"handler exploded", http.ErrAbortHandler} {
		h := tr.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(value) }))
		var repanicked any
		func() {
			defer func() { repanicked = recover() }()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/x", nil))
		}()
		if repanicked != value {
			t.Errorf("the middleware recovered %v and panicked on with %v", value, repanicked)
		}
	}
	got := in.wait("handler exploded")
	if strings.Count(got, `"type":"event"`) != 1 || !strings.Contains(got, "handler exploded") || !strings.Contains(got, "TestMiddlewarePanic") {
		t.Fatalf("want one event, the handler's panic with its frame: %s", got)
	}
}

// BenchmarkJSError: what reporting a render's JavaScript error (a mapped
// V8 stack of 29 frames) costs. queue: the render's goroutine (ns/op);
// delivered: the process's CPU per event built and sent to both clients,
// whose ingests on loopback answer at once (cpu-ns/op, from getrusage,
// with the ingests' own share).
func BenchmarkJSError(b *testing.B) {
	_, dsn := newIngest(&testing.T{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	tr, err := New(Config{SentryDSN: dsn, HoneybadgerAPIKey: "k", HoneybadgerEndpoint: srv.URL, SendTimeout: time.Second}, "test", "goja", slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	tr.perSecond = math.MaxInt // every event built, none dropped
	stack := engineStacks["node"].stack + strings.Repeat("    at Object.render (src/app.js:120:7)\n", 20)
	report := func() {
		tr.JSError(Tags{Bundle: "rorp-v2-s-1", Engine: "node", Outcome: "js_error", GemVersion: "17.0.0", RailsEnv: "production"}, []string{"rorp-v2-s-1"}, "Cannot read properties of null (reading 'x')", stack)
	}
	b.Run("queue", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			report()
		}
		tr.Flush(10 * time.Second)
	})
	b.Run("delivered", func(b *testing.B) {
		before := cpuTime()
		for b.Loop() {
			report()
			tr.Flush(10 * time.Second)
		}
		b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
	})
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestEventsBounded: a flood of errors is cut to maxPerSecond events a
// second and a queue of queueLength; the rest is dropped and counted,
// never waited for.
func TestEventsBounded(t *testing.T) {
	in, dsn := newIngest(t)
	tr, err := New(Config{SentryDSN: dsn, SendTimeout: time.Second}, "test", "goja", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	const flood = 5000
	for range flood {
		tr.JSError(Tags{}, nil, "boom", "Error: boom\n    at f (src/a.js:1:1)\n")
	}
	tr.Flush(10 * time.Second)
	in.wait("boom")
	seconds := time.Since(started).Seconds()
	in.mu.Lock()
	sent := len(in.bodies)
	in.mu.Unlock()
	if limit := maxPerSecond * (int(seconds) + 2); sent == 0 || sent > limit {
		t.Errorf("%d events sent in %.1f s, want 1 to %d", sent, seconds, limit)
	}
	if dropped := tr.dropped.Load(); dropped == 0 || int(dropped)+sent > flood {
		t.Errorf("%d dropped and %d sent of %d", dropped, sent, flood)
	}
}

// postAll serves n POSTs answered 401 through tr's middleware, each with a
// sentry-trace header whose sampled flag is set (and baggage, if given),
// and returns the transactions the ingest received.
func postAll(tr *Tracker, in *ingest, n int, baggage string) int {
	h := tr.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) }))
	for range n {
		req := httptest.NewRequest(http.MethodPost, "/upload-assets", nil)
		req.Header.Set("sentry-trace", "0123456789abcdef0123456789abcdef-0123456789abcdef-1")
		if baggage != "" {
			req.Header.Set("baggage", baggage)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	tr.Flush(5 * time.Second)
	time.Sleep(500 * time.Millisecond) // the SDK's Flush can return before the last envelope is sent
	in.mu.Lock()
	defer in.mu.Unlock()
	sent := 0
	for _, body := range in.bodies {
		if strings.Contains(body, `"type":"transaction"`) {
			sent++ // an envelope holds one transaction
		}
	}
	return sent
}

// TestClientDoesNotDecideSampling: an incoming sentry-trace header's sampled
// flag (any client's, before authentication) does not make a request a
// transaction: at a rate of 1 in 10,000, 20 requests are (almost surely)
// none.
func TestClientDoesNotDecideSampling(t *testing.T) {
	in, dsn := newIngest(t)
	tr, err := New(Config{SentryDSN: dsn, SentryTracesSampleRate: 0.0001, SendTimeout: time.Second}, "test", "goja", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, baggage := range []string{"", "sentry-sample_rate=1,sentry-sampled=true,sentry-sample_rand=0.000001"} {
		if got := postAll(tr, in, 20, baggage); got > 1 {
			t.Errorf("baggage %q: the client decided the sampling: %d transactions of 20 requests at rate 0.0001", baggage, got)
		}
	}
}

// TestTransactionsBounded: at a rate of 1, transactions are sent at most
// maxPerSecond a second, like events.
func TestTransactionsBounded(t *testing.T) {
	in, dsn := newIngest(t)
	tr, err := New(Config{SentryDSN: dsn, SentryTracesSampleRate: 1, SendTimeout: time.Second}, "test", "goja", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	const n = 400
	got := postAll(tr, in, n, "")
	// The requests span at most this many wall-clock seconds (the flush and
	// the sleep send, they start nothing).
	seconds := int(time.Since(start)/time.Second) + 2
	if got == 0 || got > seconds*maxPerSecond {
		t.Errorf("%d transactions of %d requests in under %d s: want 1 to %d", got, n, seconds, seconds*maxPerSecond)
	}
}

// TestPanicMessageShaped: a panic's value leaves as its shape, like a
// JavaScript error's message: quoted values and long numbers taken out.
func TestPanicMessageShaped(t *testing.T) {
	in, dsn := newIngest(t)
	tr, err := New(Config{SentryDSN: dsn, SendTimeout: time.Second}, "test", "goja", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tr.Panic("test", fmt.Errorf("bad props %q for order 123456789", "PROPS-SECRET"), nil)
	got := in.wait("bad props")
	if !strings.Contains(got, `bad props \"…\" for order \u003cn\u003e`) || strings.Contains(got, "PROPS-SECRET") || strings.Contains(got, "123456789") {
		t.Fatalf("the panic's message is not its shape: %s", got)
	}
}

// TestQueueHoldsNoBody: an event waiting in the queue holds copies of what
// it reports, not the request body its tags and bundle ids were decoded
// from without copying: the body can be collected.
func TestQueueHoldsNoBody(t *testing.T) {
	// A Tracker whose queue is not read: the events stay queued.
	tr := &Tracker{engine: "goja", logger: slog.New(slog.DiscardHandler), queue: make(chan job, queueLength), perSecond: maxPerSecond}
	freed := make(chan struct{})
	func() {
		body := new([1 << 20]byte)
		copy(body[:], "bundle-id gem-version production outcome")
		runtime.SetFinalizer(body, func(*[1 << 20]byte) { close(freed) })
		str := func(from, to int) string { return unsafe.String(&body[from], to-from) }
		tags := Tags{Bundle: str(0, 9), GemVersion: str(10, 21), RailsEnv: str(22, 32), Outcome: str(33, 40)}
		tr.JSError(tags, []string{str(0, 9)}, str(0, 9), str(10, 21))
		tr.LoadError(tags, str(0, 40))
	}()
	for range 50 {
		runtime.GC()
		select {
		case <-freed:
			if len(tr.queue) != 2 {
				t.Fatalf("%d events queued, want 2", len(tr.queue))
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("the queued events hold the request body")
}

// TestFlushOneDeadline: with both trackers' ingests never answering, Flush
// returns by its one deadline, not one deadline per tracker.
func TestFlushOneDeadline(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stop }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	dsn := strings.Replace(srv.URL, "http://", "http://key@", 1) + "/7"
	tr, err := New(Config{SentryDSN: dsn, HoneybadgerAPIKey: "k", HoneybadgerEndpoint: srv.URL, SendTimeout: time.Minute}, "test", "goja", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tr.JSError(Tags{}, nil, "boom", "Error: boom\n    at f (src/a.js:1:1)\n")
	const timeout = 2 * time.Second
	started := time.Now()
	tr.Flush(timeout)
	// Per tracker it took at least 2 × timeout; one deadline, timeout and
	// the scheduling of a few goroutines.
	if took := time.Since(started); took > timeout*3/2 {
		t.Errorf("Flush(%s) took %s", timeout, took)
	}
}
