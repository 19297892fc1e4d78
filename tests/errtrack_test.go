package tests

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// trackerIngest is Sentry's and Honeybadger's ingest in the test process:
// Sentry envelopes (POST /api/<project>/envelope/) and Honeybadger notices
// (POST /v1/notices), as the real SDKs send them, kept raw and parsed.
// With hang set it reads each request and never answers.
type trackerIngest struct {
	url  string
	hang chan struct{} // nil: answer; else requests wait on it (closed at the end)

	mu       sync.Mutex
	raw      [][]byte // every request's body (decompressed) and headers' text
	events   []sentryEvent
	txs      []sentryTransaction
	notices  []honeybadgerNotice
	requests int
}

type sentryEvent struct {
	// Exception is a list, or in Sentry's older form {"values": list}.
	Exception   json.RawMessage `json:"exception"`
	Exceptions  []sentryException
	Tags        map[string]string `json:"tags"`
	Fingerprint []string          `json:"fingerprint"`
	Platform    string            `json:"platform"`
	Environment string            `json:"environment"`
	Release     string            `json:"release"`
}

// sentryTransaction is a transaction item's fields the test reads.
type sentryTransaction struct {
	Transaction string          `json:"transaction"`
	Request     json.RawMessage `json:"request"`
	Contexts    struct {
		Trace struct {
			Op string `json:"op"`
		} `json:"trace"`
	} `json:"contexts"`
}

type sentryException struct {
	Type       string `json:"type"`
	Value      string `json:"value"`
	Stacktrace struct {
		Frames []struct {
			Function string `json:"function"`
			Filename string `json:"filename"`
			Lineno   int    `json:"lineno"`
			Colno    int    `json:"colno"`
			InApp    bool   `json:"in_app"`
		} `json:"frames"`
	} `json:"stacktrace"`
}

type honeybadgerNotice struct {
	Error struct {
		Class       string `json:"class"`
		Message     string `json:"message"`
		Fingerprint string `json:"fingerprint"`
		Tags        []string
		Backtrace   []struct {
			Number string `json:"number"`
			File   string `json:"file"`
			Method string `json:"method"`
		} `json:"backtrace"`
	} `json:"error"`
	Request struct {
		Context map[string]string `json:"context"`
	} `json:"request"`
}

func newTrackerIngest(t *testing.T, hang bool) *trackerIngest {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in := &trackerIngest{url: "http://" + ln.Addr().String()}
	if hang {
		in.hang = make(chan struct{})
	}
	srv := &http.Server{Handler: http.HandlerFunc(in.serveHTTP)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		if in.hang != nil {
			close(in.hang)
		}
		_ = srv.Close()
	})
	return in
}

func (in *trackerIngest) serveHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return
	}
	var headers bytes.Buffer
	_ = r.Header.Write(&headers)
	in.mu.Lock()
	in.requests++
	in.raw = append(in.raw, []byte(r.URL.String()), headers.Bytes(), data)
	in.mu.Unlock()
	if in.hang != nil {
		<-in.hang
		return
	}
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/api/") && strings.HasSuffix(r.URL.Path, "/envelope/"):
		events, txs, err := envelopeItems(data)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in.mu.Lock()
		in.events = append(in.events, events...)
		in.txs = append(in.txs, txs...)
		in.mu.Unlock()
		fmt.Fprint(w, `{}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/notices":
		if r.Header.Get("X-API-Key") != "hb-test-key" {
			http.Error(w, "bad key", http.StatusForbidden)
			return
		}
		var n honeybadgerNotice
		if err := json.Unmarshal(data, &n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in.mu.Lock()
		in.notices = append(in.notices, n)
		in.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":"1"}`)
	default:
		http.NotFound(w, r)
	}
}

// envelopeItems reads a Sentry envelope: a header line, then items, each
// a header line (with its payload's length, or none: up to the newline)
// and its payload; it returns the payloads of type event and transaction.
func envelopeItems(data []byte) (events []sentryEvent, txs []sentryTransaction, err error) {
	r := bufio.NewReader(bytes.NewReader(data))
	if _, err := r.ReadBytes('\n'); err != nil {
		return nil, nil, fmt.Errorf("envelope header: %w", err)
	}
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 && err != nil {
			return events, txs, nil
		}
		var item struct {
			Type   string `json:"type"`
			Length *int   `json:"length"`
		}
		if err := json.Unmarshal(line, &item); err != nil {
			return nil, nil, fmt.Errorf("item header %q: %w", line, err)
		}
		var payload []byte
		if item.Length != nil {
			payload = make([]byte, *item.Length)
			if _, err := io.ReadFull(r, payload); err != nil {
				return nil, nil, fmt.Errorf("item payload: %w", err)
			}
			_, _ = r.ReadByte() // its newline
		} else {
			payload, _ = r.ReadBytes('\n')
		}
		if item.Type == "event" {
			var ev sentryEvent
			if err := json.Unmarshal(payload, &ev); err != nil {
				return nil, nil, fmt.Errorf("event: %w", err)
			}
			if err := json.Unmarshal(ev.Exception, &ev.Exceptions); err != nil {
				var values struct{ Values []sentryException }
				if err := json.Unmarshal(ev.Exception, &values); err != nil || len(values.Values) == 0 {
					return nil, nil, fmt.Errorf("event's exception %s: %w", ev.Exception, err)
				}
				ev.Exceptions = values.Values
			}
			events = append(events, ev)
		}
		if item.Type == "transaction" {
			var tx sentryTransaction
			if err := json.Unmarshal(payload, &tx); err != nil {
				return nil, nil, fmt.Errorf("transaction: %w", err)
			}
			txs = append(txs, tx)
		}
	}
}

// wait waits until the ingest holds n events and n notices.
func (in *trackerIngest) wait(t *testing.T, n int) ([]sentryEvent, []honeybadgerNotice) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		in.mu.Lock()
		events, notices := slices.Clone(in.events), slices.Clone(in.notices)
		in.mu.Unlock()
		if len(events) >= n && len(notices) >= n {
			return events, notices
		}
		if time.Now().After(deadline) {
			in.mu.Lock()
			raw := string(bytes.Join(in.raw, []byte("\n")))
			in.mu.Unlock()
			t.Fatalf("the ingest received %d Sentry events and %d Honeybadger notices, want %d each; it received:\n%s", len(events), len(notices), n, clip(raw))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// trackerEnv sends both trackers' events to in.
func trackerEnv(in *trackerIngest) map[string]string {
	return map[string]string{
		"SENTRY_DSN":                    strings.Replace(in.url, "http://", "http://public-key@", 1) + "/42",
		"SENTRY_ENVIRONMENT":            "e2e",
		"HONEYBADGER_API_KEY":           "hb-test-key",
		"HONEYBADGER_ENDPOINT":          in.url,
		"HONEYBADGER_ENV":               "e2e",
		"RENDERER_ERROR_REPORT_TIMEOUT": "2s",
	}
}

// Secrets no event may carry: the password, the render's props and the
// HTML it built, and the rendering request's own text.
const (
	propsSecret = "PROPS-SECRET-7f3a"
	htmlSecret  = "HTML-SECRET-91c2"
)

// greetCode is a rendering request that holds props and HTML and calls
// the source-mapped fixture's greet, which throws in src/greeting.js:8.
var greetCode = `(function () { var props = {"user": null, "token": "` + propsSecret + `"}; var html = '<div>` + htmlSecret + `</div>'; return SourceMapApp.greet(props.user) + html; })()`

// TestErrorTracking: with SENTRY_DSN and HONEYBADGER_API_KEY set, a
// render's JavaScript error and a bundle's load error reach both ingests
// through the real SDKs: Sentry's frames source-mapped (file, line, column,
// function), in-app for the bundle's sources and not for the request; tags
// for the bundle, engine, outcome, gem version and Rails env; the same
// error from two bundles of the same source with one fingerprint (with a
// map and without one); with SENTRY_TRACES_SAMPLE_RATE=1 every render a
// transaction named by its route; and nothing anywhere in what was sent of
// the password, props, HTML or the rendering request.
func TestErrorTracking(t *testing.T) {
	t.Parallel()
	in := newTrackerIngest(t, false)
	env := trackerEnv(in)
	env["SENTRY_TRACES_SAMPLE_RATE"] = "1"
	s := startServer(t, env)
	h2 := transports[0]
	bundle, sourceMap := sourceMapApp(t)
	withoutURL := strings.TrimSpace(bundle[:strings.LastIndex(bundle, "//# sourceMappingURL=")])
	mappedA, mappedB, bareA, bareB, broken := newID("s"), newID("s"), newID("s"), newID("s"), newID("s")
	s.upload(t, map[string]string{mappedA: bundle, mappedB: bundle}, map[string]string{"sourcemap-app.js.map": sourceMap})
	s.upload(t, map[string]string{bareA: withoutURL, bareB: withoutURL}, nil)
	s.upload(t, map[string]string{broken: "throw new TypeError('the bundle cannot load');\n"}, nil)

	for _, id := range []string{mappedA, mappedB, bareA, bareB} {
		r := s.render(t, h2, id, greetCode)
		r.wantStatus(t, h2, http.StatusBadRequest)
		if !strings.Contains(r.Body, "greet: no user given") {
			t.Fatalf("bundle %s: the answer is not the error: %s", id, clip(r.Body))
		}
	}
	// A thrown message that quotes the props.
	s.render(t, h2, mappedA, `throw new Error("bad props " + JSON.stringify({"token": "`+propsSecret+`"}))`).wantStatus(t, h2, http.StatusBadRequest)
	r := s.render(t, h2, broken, "1")
	r.wantStatus(t, h2, http.StatusBadRequest)

	events, notices := in.wait(t, 6)
	byBundle := map[string]sentryEvent{}
	for _, ev := range events {
		if ev.Tags["kind"] == "js_error" && ev.Exceptions[0].Value == "greet: no user given" {
			byBundle[ev.Tags["bundle"]] = ev
		}
	}
	for _, id := range []string{mappedA, mappedB, bareA, bareB} {
		ev, ok := byBundle[id]
		if !ok {
			for _, ev := range events {
				t.Logf("event: tags %v exception %s", ev.Tags, ev.Exception)
			}
			t.Fatalf("no Sentry event for bundle %s's error", id)
		}
		want := map[string]string{"bundle": id, "engine": testEngine, "outcome": "js_error", "gem_version": gemVersion, "rails_env": "production", "kind": "js_error"}
		for k, v := range want {
			if ev.Tags[k] != v {
				t.Errorf("bundle %s: tag %s = %q, want %q (tags %v)", id, k, ev.Tags[k], v, ev.Tags)
			}
		}
		if ev.Environment != "e2e" || ev.Platform != "javascript" || !strings.HasPrefix(ev.Release, "gorender@") {
			t.Errorf("bundle %s: environment %q platform %q release %q", id, ev.Environment, ev.Platform, ev.Release)
		}
		ex := ev.Exceptions[0]
		frames := ex.Stacktrace.Frames
		if ex.Type != "Error" || len(frames) < 2 {
			t.Fatalf("bundle %s: exception %+v", id, ex)
		}
		// Sentry's order: outermost first, the throw last.
		last, first := frames[len(frames)-1], frames[0]
		if id == mappedA || id == mappedB {
			if last.Filename != "src/greeting.js" || last.Lineno != 8 || last.Colno == 0 || last.Function == "" || !last.InApp {
				t.Errorf("bundle %s: the throwing frame is %+v, want src/greeting.js:8, in-app, with a column and a function", id, last)
			}
		} else if last.Filename != id+".js" || last.Lineno != 1 || last.Colno == 0 || !last.InApp {
			t.Errorf("bundle %s (no map): the throwing frame is %+v, want %s.js:1, in-app", id, last, id)
		}
		if first.Filename != "renderingRequest" && !strings.HasPrefix(first.Filename, "gorender-") || first.InApp {
			t.Errorf("bundle %s: the outermost frame is %+v, want the request or the environment, not in-app", id, first)
		}
	}
	if a, b := byBundle[mappedA].Fingerprint, byBundle[mappedB].Fingerprint; len(a) == 0 || !reflect.DeepEqual(a, b) {
		t.Errorf("one error from two mapped bundles of one source: fingerprints %q and %q", a, b)
	}
	if a, b := byBundle[bareA].Fingerprint, byBundle[bareB].Fingerprint; len(a) == 0 || !reflect.DeepEqual(a, b) {
		t.Errorf("one error from two unmapped bundles of one source: fingerprints %q and %q", a, b)
	}
	var load *sentryEvent
	for i, ev := range events {
		if ev.Tags["kind"] == "bundle_load_error" {
			load = &events[i]
		}
	}
	if load == nil || load.Tags["bundle"] != broken || load.Tags["gem_version"] != gemVersion || !strings.Contains(load.Exceptions[0].Value, "the bundle cannot load") {
		t.Errorf("the load error's event: %+v", load)
	}

	// Honeybadger: the same events, frames and grouping.
	hbByBundle := map[string]honeybadgerNotice{}
	for _, n := range notices {
		if n.Error.Message == "greet: no user given" {
			hbByBundle[n.Request.Context["bundle"]] = n
		}
	}
	for _, id := range []string{mappedA, mappedB} {
		n, ok := hbByBundle[id]
		if !ok {
			t.Fatalf("no Honeybadger notice for bundle %s; notices: %+v", id, notices)
		}
		if n.Error.Class != "Error" || len(n.Error.Backtrace) == 0 || n.Error.Backtrace[0].File != "[PROJECT_ROOT]/src/greeting.js" || n.Error.Backtrace[0].Number != "8" {
			t.Errorf("bundle %s: notice %+v", id, n.Error)
		}
		if n.Request.Context["engine"] != testEngine || n.Request.Context["gem_version"] != gemVersion || n.Request.Context["rails_env"] != "production" {
			t.Errorf("bundle %s: notice context %v", id, n.Request.Context)
		}
	}
	if a, b := hbByBundle[mappedA].Error.Fingerprint, hbByBundle[mappedB].Error.Fingerprint; a == "" || a != b {
		t.Errorf("Honeybadger fingerprints of one error from two bundles: %q and %q", a, b)
	}

	// Every request a transaction, named by its route, without request data.
	var renders int
	var txs []sentryTransaction
	deadline := time.Now().Add(30 * time.Second)
	for renders < 6 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		in.mu.Lock()
		txs = slices.Clone(in.txs)
		in.mu.Unlock()
		renders = 0
		for _, tx := range txs {
			if tx.Transaction == "POST /bundles/{bundleId}/render/{digest}" && tx.Contexts.Trace.Op == "http.server" && len(tx.Request) == 0 {
				renders++
			}
		}
	}
	if renders < 6 {
		t.Errorf("%d render transactions named by their route, without request data, want 6: %+v", renders, txs)
	}

	in.mu.Lock()
	raw := bytes.Join(in.raw, []byte("\n"))
	in.mu.Unlock()
	for _, secret := range []string{testPassword, propsSecret, htmlSecret, "SourceMapApp.greet(props.user)", "JS code for rendering request"} {
		if bytes.Contains(raw, []byte(secret)) {
			i := bytes.Index(raw, []byte(secret))
			t.Errorf("%q left gorender: ...%s...", secret, raw[max(0, i-200):min(len(raw), i+100)])
		}
	}
}

// TestErrorTrackingIngestHangs: with both ingests taking requests and never
// answering, renders answer as they would without error tracking: more
// failing renders than the SDKs' queues hold (100 events each) all get
// their 400 and a render after them its 200, and the server stops.
func TestErrorTrackingIngestHangs(t *testing.T) {
	t.Parallel()
	in := newTrackerIngest(t, true)
	s := startServer(t, trackerEnv(in))
	h1 := transports[1]
	bundle, sourceMap := sourceMapApp(t)
	id := newID("s")
	s.upload(t, map[string]string{id: bundle}, map[string]string{"sourcemap-app.js.map": sourceMap})
	for i := range 250 {
		r := s.render(t, h1, id, "SourceMapApp.greet(null) // "+strconv.Itoa(i))
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "greet: no user given") || !strings.Contains(r.Body, "src/greeting.js:8:") {
			t.Fatalf("render %d while the ingest hangs: status %d: %s", i, r.Status, clip(r.Body))
		}
	}
	s.render(t, h1, id, `SourceMapApp.greet({name: "Ada"})`).want(t, h1, http.StatusOK, "<p>Hello, Ada</p>")
	in.mu.Lock()
	requests := in.requests
	in.mu.Unlock()
	if requests == 0 {
		t.Error("the ingest received no request: the test did not test a hanging ingest")
	}
	s.stop()
}

// TestErrorTrackingRuntimeEvents: a node engine process that crashes and a
// runtime quarantined as stuck (goja: a regular expression it cannot
// interrupt) are events of their own kinds.
func TestErrorTrackingRuntimeEvents(t *testing.T) {
	if testEngine == "quickjs" {
		t.Skip("quickjs interrupts every render and runs no process: neither event happens")
	}
	t.Parallel()
	in := newTrackerIngest(t, false)
	env := trackerEnv(in)
	env["RENDERER_WORKERS_COUNT"] = "1"
	env["RENDERER_RENDER_TIMEOUT"] = "1s"
	s := startServer(t, env)
	h1 := transports[1]
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("alive")}, nil)
	kind := "runtime_quarantine"
	if testEngine == "node" {
		kind = "node_process_crash"
		s.render(t, h1, id, `(function () { var P = `+escape+`; P.exit(3); })()`).wantStatus(t, h1, http.StatusBadRequest)
	} else {
		s.render(t, h1, id, catastrophicRegexp).wantStatus(t, h1, http.StatusBadRequest)
	}
	events, notices := in.wait(t, 1)
	ev := events[0]
	if ev.Tags["kind"] != kind || ev.Tags["engine"] != testEngine || len(ev.Fingerprint) == 0 || len(ev.Exceptions) != 1 {
		t.Errorf("the event: tags %v fingerprint %q exception %s, want kind %s", ev.Tags, ev.Fingerprint, ev.Exception, kind)
	}
	if kind == "runtime_quarantine" && ev.Tags["bundle"] != id {
		t.Errorf("the quarantine's bundle tag is %q, want %s", ev.Tags["bundle"], id)
	}
	if kind == "node_process_crash" && (ev.Tags["outcome"] != "crash" || !strings.Contains(ev.Exceptions[0].Value, "exit status 3")) {
		t.Errorf("the crash's event: tags %v exception %s", ev.Tags, ev.Exception)
	}
	if notices[0].Request.Context["kind"] != kind {
		t.Errorf("the Honeybadger notice's context: %v", notices[0].Request.Context)
	}
	s.render(t, h1, id, "MARKER").want(t, h1, http.StatusOK, "alive")
}

// TestErrorTrackingBadDSN: a DSN the SDK cannot read stops the start with
// an error naming SENTRY_DSN and what is wrong, and nothing of the DSN's
// key (a credential), whether the SDK or url.Parse found the fault.
func TestErrorTrackingBadDSN(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"https://127.0.0.1/no-key":                   "empty username",
		"https://SECRETKEY@o0.ingest.sentry.io/1%zz": "it is not a URL",
	} {
		code, _, stderr := runBinary(t, map[string]string{
			"RENDERER_PASSWORD":                 testPassword,
			"RENDERER_SERVER_BUNDLE_CACHE_PATH": t.TempDir(),
			"RENDERER_PORT":                     strconv.Itoa(freePort(t)),
			"SENTRY_DSN":                        dsn,
		}, "serve")
		if code == 0 || !strings.Contains(stderr, "SENTRY_DSN (set; its value is not shown)") || !strings.Contains(stderr, "Sentry DSN") ||
			!strings.Contains(stderr, want) || strings.Contains(stderr, "SECRETKEY") || strings.Contains(stderr, testPassword) {
			t.Errorf("gorender serve with SENTRY_DSN=%s: exit %d, want naming the variable and saying %q without its value; stderr:\n%s", dsn, code, want, stderr)
		}
	}
}
