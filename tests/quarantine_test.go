package tests

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// catastrophicRegexp backtracks for hours: goja's backtracking engine
// (regexp2, for the lookahead) does not see interrupts inside a match.
const catastrophicRegexp = `/^(a+)+(?=b)c$/.test("a".repeat(34) + "x")`

// TestQuarantineBound (issue #12 item 5): a render whose runtime ignores
// its interrupt (a catastrophic regular expression on goja) is answered at
// its deadline and its runtime quarantined; the quarantine is bounded
// (RENDERER_MAX_QUARANTINED_RUNTIMES): at the bound /ready answers 503
// quarantine_full and gorender_runtimes_quarantined reaches
// gorender_runtimes_quarantined_limit; past it a stuck runtime keeps its
// slot instead of being replaced; and a stuck match now ends (at the
// longest deadline a render has, here the 30 s of a bundle load), after
// which the pod is ready again. Before, the match ran for hours after its
// answer, each such render added a core-burning runtime without bound, and
// /ready kept answering ready. QuickJS checks interrupts inside its regular
// expressions, and the node engine ends the process of a render that does
// not stop: their render is answered at the deadline and nothing is
// quarantined.
func TestQuarantineBound(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{
		"RENDERER_WORKERS_COUNT":            "1",
		"RENDERER_RENDER_TIMEOUT":           "1s",
		"RENDERER_QUEUE_TIMEOUT":            "1s",
		"RENDERER_STREAM_IDLE_TIMEOUT":      "1s",
		"RENDERER_MAX_QUARANTINED_RUNTIMES": "1",
	})
	h1 := transports[1]
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("alive")}, nil)
	s.render(t, h1, id, "MARKER").want(t, h1, http.StatusOK, "alive")
	s.get(t, h1, http.MethodGet, "/ready").want(t, h1, http.StatusOK, `{"status":"ready"}`)
	if got := s.scrapeMetrics(t).value("gorender_runtimes_quarantined_limit"); got != 1 {
		t.Errorf("gorender_runtimes_quarantined_limit = %v, want 1", got)
	}

	timedOut := func(what string, r *response) {
		t.Helper()
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "timed out") {
			t.Fatalf("%s: status %d, want 400 timed out; body: %s", what, r.Status, clip(r.Body))
		}
	}
	timedOut("the first stuck render", s.render(t, h1, id, catastrophicRegexp))
	if testEngine != "goja" {
		// QuickJS polls its interrupt inside regular expressions; the node
		// engine ends the Node.js process of a render that does not stop.
		if got := s.scrapeMetrics(t).value("gorender_runtimes_quarantined"); got != 0 {
			t.Errorf("%s: gorender_runtimes_quarantined = %v, want 0", testEngine, got)
		}
		s.render(t, h1, id, "MARKER").want(t, h1, http.StatusOK, "alive")
		return
	}

	// At the bound: not ready, said by the metric; the replacement serves.
	s.get(t, h1, http.MethodGet, "/ready").want(t, h1, http.StatusServiceUnavailable, `{"status":"quarantine_full"}`)
	if got := s.scrapeMetrics(t).value("gorender_runtimes_quarantined"); got != 1 {
		t.Errorf("gorender_runtimes_quarantined = %v, want 1", got)
	}
	s.render(t, h1, id, "MARKER").want(t, h1, http.StatusOK, "alive")

	// Past it: the stuck runtime keeps the bundle's one slot.
	timedOut("the second stuck render", s.render(t, h1, id, catastrophicRegexp))
	if r := s.render(t, h1, id, "MARKER"); r.Status != http.StatusServiceUnavailable {
		t.Errorf("a render while the only slot is held by a stuck runtime: status %d, want 503; body: %s", r.Status, clip(r.Body))
	}

	// The matches end: ready again, nothing quarantined, renders served.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		r := s.get(t, h1, http.MethodGet, "/ready")
		if r.Status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/ready still %d %s after 3 minutes: the stuck matches did not end", r.Status, r.Body)
		}
		time.Sleep(time.Second)
	}
	deadline = time.Now().Add(time.Minute)
	for s.scrapeMetrics(t).value("gorender_runtimes_quarantined") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("gorender_runtimes_quarantined did not return to 0")
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.render(t, h1, id, "MARKER").want(t, h1, http.StatusOK, "alive")
}
