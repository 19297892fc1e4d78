package tests

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// neverYieldingBundle adds to the test streams (testStreamsBundle) streams
// that send one chunk and then run JavaScript that never returns to the
// event loop: the stream's idle window must stop them although no timer of
// the loop can fire.
const neverYieldingBundle = testStreamsBundle + `
var Readable = require('stream').Readable;
globalThis.NeverYields = {
  webPull: function () {
    var sent = false;
    return new ReadableStream({
      pull: function (c) {
        if (!sent) { sent = true; c.enqueue(new TextEncoder().encode('first chunk\n')); return; }
        for (;;) {}
      },
    });
  },
  readable: function () {
    var sent = false;
    return new Readable({
      read: function () {
        if (!sent) { sent = true; this.push('first chunk\n'); return; }
        for (;;) {}
      },
    });
  },
  timer: function () {
    var out = new PassThrough();
    out.write('first chunk\n');
    setTimeout(function () { for (;;) {} }, 10);
    return out;
  },
};
`

var neverYieldingStreams = []struct {
	name, code string
	// wrote is whether the first chunk surely goes out before the loop: a
	// stream's next pull or _read may run before its last chunk is written.
	wrote bool
}{
	{"web stream pull", "NeverYields.webPull()", false},
	{"node readable _read", "NeverYields.readable()", false},
	{"timer callback", "NeverYields.timer()", true},
}

// neverYieldingServer starts a server with one runtime per bundle and the
// stream idle window idle, and uploads neverYieldingBundle.
func neverYieldingServer(t *testing.T, idle time.Duration) (*server, string) {
	t.Helper()
	s := startServer(t, map[string]string{
		"RENDERER_SUPPORT_MODULES":     "true",
		"RENDERER_STREAM_IDLE_TIMEOUT": idle.String(), "RENDERER_WORKERS_COUNT": "1",
	})
	id := newID("y")
	s.upload(t, map[string]string{id: neverYieldingBundle}, nil)
	return s, id
}

// TestStreamNeverYields: a streamed render whose JavaScript loops forever
// after its first chunk (in a web stream's pull, a Node Readable's _read, a
// timer's callback) is stopped by RENDERER_STREAM_IDLE_TIMEOUT like a
// silent stream: the answer ends abruptly, the stream is counted idle, and
// the single runtime it held serves the next render. On main before this
// the loop ran until the client left, holding its runtime (goja, quickjs):
// the event loop's idle timer fires only between callbacks.
func TestStreamNeverYields(t *testing.T) {
	t.Parallel()
	const idle = 500 * time.Millisecond
	s, id := neverYieldingServer(t, idle)
	ended := 0
	for _, tr := range transports {
		for _, c := range neverYieldingStreams {
			t.Run(tr.name+"/"+c.name, func(t *testing.T) {
				// Bounded well below the suite's request timeout: on main the
				// stream never ends and this fails instead of hanging.
				within, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				a := s.streamRequest(t, tr, s.rawRenderRequest(t, within, id, c.code, nil))
				a.wantStreamHeaders(t, tr)
				a.wantAbrupt(t, tr)
				if body := string(a.Body); body != "first chunk\n" && (c.wrote || body != "") {
					t.Errorf("body %q, want the first chunk", a.Body)
				}
				ended++
				// The one runtime is free again (or replaced).
				s.streamRender(t, tr, id, "TestStreams.ticks(2, 10)", nil).wantComplete(t, ticksBody(2))
			})
		}
	}
	scrape := s.scrapeMetrics(t)
	if v := scrape.value("gorender_streams_ended_total", "outcome", "idle"); v != float64(ended) {
		t.Errorf("%s = %v, want %d", streamsEnded("idle"), v, ended)
	}
	// Each loop cost its runtime: interrupted and replaced in process, the
	// node engine's process killed when it did not stop within its grace.
	replaced, series := scrape.value("gorender_runtime_replacements_total", "reason", "broken"), "gorender_runtime_replacements_total{reason=\"broken\"}"
	if testEngine == "node" {
		replaced, series = scrape.value("gorender_engine_process_restarts_total", "reason", "unresponsive"), "gorender_engine_process_restarts_total{reason=\"unresponsive\"}"
	}
	if replaced < float64(ended) {
		t.Errorf("%s = %v, want at least %d", series, replaced, ended)
	}
	s.get(t, transports[1], http.MethodGet, "/ready").want(t, transports[1], http.StatusOK, `{"status":"ready"}`)
}

// TestIncrementalNeverYields: an incremental render whose stream's
// JavaScript loops forever after its first chunk is stopped by its idle
// window although update lines keep arriving: updates its JavaScript cannot
// take are not activity. On main before this every line restarted the
// window (and the node engine sent each one to the stuck process), so the
// stream ran for as long as the client kept sending.
func TestIncrementalNeverYields(t *testing.T) {
	t.Parallel()
	const idle = 500 * time.Millisecond
	s, id := neverYieldingServer(t, idle)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			inc := s.startIncremental(t, tr, id, firstLine("NeverYields.timer()", nil, nil))
			inc.wantStreamHeaders(t, tr)
			const sending = 15 * time.Second
			for end := time.Now().Add(sending); ; {
				if time.Now().After(end) {
					t.Fatalf("the stream still ran after %s of update lines, each within its idle window; so far: %q", sending, inc.bytesSoFar())
				}
				if _, err := inc.body.Write(ndjson(t, updateLine(id, "1"))); err != nil {
					// The answer ended and its request body with it.
					<-inc.ended
					break
				}
				select {
				case <-inc.ended:
				case <-time.After(idle / 3):
					continue
				}
				break
			}
			body, err := inc.finish()
			if err == nil {
				t.Errorf("the stream ended cleanly; want an abrupt end")
			}
			if body != "first chunk\n" {
				t.Errorf("body %q, want the first chunk", body)
			}
			// The one runtime is free again (or replaced).
			s.streamRender(t, tr, id, "TestStreams.ticks(2, 10)", nil).wantComplete(t, ticksBody(2))
		})
	}
}
