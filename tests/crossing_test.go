package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Streams across bundles (docs/compatibility.md "Streams across bundles"): the stream-app
// bundle renders with renderToPipeableStream a page whose Suspense
// boundaries each show a line of a payload that payload-stream.js produces
// on timers and hands over as a stream through runOnOtherBundle, as React
// on Rails Pro's server bundle renders the RSC bundle's payload.

// crossServer starts a server with support modules and uploads the two
// bundles (each with streamGate); it returns their ids.
func crossServer(t *testing.T) (s *server, appID, payloadID string) {
	t.Helper()
	s = startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true", "RENDERER_WORKERS_COUNT": "1"})
	appID, payloadID = newID("s"), newID("r")
	s.upload(t, map[string]string{
		appID:     testdata(t, "bundles/stream-app.js") + streamGate,
		payloadID: testdata(t, "bundles/payload-stream.js") + streamGate,
	}, nil)
	return s, appID, payloadID
}

// crossRequest is the request name for the payload bundle payloadID; with
// gate, the payload's last line also waits for that file in the payload
// bundle's directory (streamGate). The bytes of the answer are the same.
func crossRequest(t *testing.T, name, payloadID, gate string) string {
	t.Helper()
	code := request(t, name)
	quoted, _ := json.Marshal(payloadID)
	if strings.Count(code, `"payload-stream"`) != 1 || strings.Count(code, `, 50)`) != 1 {
		t.Fatalf("%s: not the request shape this test rewrites", name)
	}
	code = strings.Replace(code, `"payload-stream"`, string(quoted), 1)
	if gate != "" {
		file, _ := json.Marshal(gate)
		code = strings.Replace(code, `, 50)`, `, 50, streamGate(`+string(file)+`))`, 1)
	}
	return code
}

// withDependency is the dependency header naming id.
func withDependency(id string) http.Header {
	return http.Header{"X-React-On-Rails-Pro-Dependency-Bundle-Timestamps": {`["` + id + `"]`}}
}

// TestCrossStreamedRender: the page streams with bytes equal to Node's
// (where the stream crosses natively), a Node stream and a web
// ReadableStream behind a promise, and each line's boundary is flushed as
// the other bundle produces it: the payload's last line waits for a file
// the test writes only once everything before its boundary has arrived.
func TestCrossStreamedRender(t *testing.T) {
	t.Parallel()
	s, appID, payloadID := crossServer(t)
	eachTransport(t, func(t *testing.T, tr transport) {
		for _, name := range []string{"stream-cross", "stream-cross-web"} {
			t.Run(name, func(t *testing.T) {
				chunks := goldenChunks(t, name)
				want := golden(t, name)
				last := chunks[len(chunks)-1]
				release := "release-" + tr.name + "-" + name
				file := filepath.Join(s.cache, payloadID, release)
				defer os.WriteFile(file, nil, 0o644) // a failed render does not wait for its deadline
				sent := time.Now()
				resp, err := s.http(tr).Do(s.rawRenderRequest(t, ctx(t), appID, crossRequest(t, name, payloadID, release), withDependency(payloadID)))
				if err != nil {
					t.Fatal(err)
				}
				a, releasedAt := readGatedStream(t, resp, sent, last.Offset, file, "the payload's last line")
				a.wantStreamHeaders(t, tr)
				a.wantComplete(t, want)
				if releasedAt < 0 {
					t.Errorf("the %d bytes before the last line's boundary (of %d) never arrived while the line was held back: the payload is not rendered as produced", last.Offset, len(want))
				}
				t.Logf("%s over %s: %d bytes before the last line at %s, end at %s, %d reads", name, tr.name, last.Offset, releasedAt, a.Ended, len(a.Reads))
			})
		}
	})
}

// TestCrossStreamClientGone: a client that leaves while the payload is
// still coming ends both bundles' parts of the render: the runtimes are
// released and serve the next render in full.
func TestCrossStreamClientGone(t *testing.T) {
	t.Parallel()
	s, appID, payloadID := crossServer(t)
	shell := goldenChunks(t, "stream-cross")[0].Bytes
	eachTransportSerial(t, func(t *testing.T, tr transport) {
		before := s.metricValue(t, streamsEnded("client_gone"))
		// The last line waits for a file nobody writes: only the client's
		// leaving ends this render before its deadline.
		c, cancel := context.WithCancel(ctx(t))
		resp, err := s.http(tr).Do(s.rawRenderRequest(t, c, appID, crossRequest(t, "stream-cross", payloadID, "never-"+tr.name), withDependency(payloadID)))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, shell)); err != nil {
			t.Fatalf("shell: %v", err)
		}
		cancel() // RST_STREAM on h2c, a closed connection on HTTP/1.1
		resp.Body.Close()
		if v := s.waitMetric(t, busySeries(appID), 60*time.Second, func(v float64) bool { return v == 0 }); v != 0 {
			t.Errorf("%s = %v after the client left, want 0", busySeries(appID), v)
		}
		if v := s.waitMetric(t, streamsEnded("client_gone"), 60*time.Second, func(v float64) bool { return v > before }); v != before+1 {
			t.Errorf("%s = %v, want %v", streamsEnded("client_gone"), v, before+1)
		}
		// The runtimes serve the next render, in full.
		a := s.streamRender(t, tr, appID, crossRequest(t, "stream-cross", payloadID, ""), withDependency(payloadID))
		a.wantStreamHeaders(t, tr)
		a.wantComplete(t, golden(t, "stream-cross"))
	})
}

// deafProducer is a bundle whose stream emits a 1 MiB chunk every turn
// whatever pause says, forever.
const deafProducer = `var stream = require('stream');
globalThis.deaf = function () {
  var s = new stream.PassThrough();
  s.pause = function () { return s; };
  (function next() {
    if (s.destroyed) return;
    s.emit('data', 'x'.repeat(1 << 20));
    setImmediate(next);
  })();
  return s;
};
`

// TestCrossStreamIgnoringPauseUnderLimits: a stream crossing bundles that
// goes on producing while paused fails the caller's stream; it no longer
// fills the memory between the runtimes until the process dies (the server
// runs under an address-space limit, so that a regression fails the test,
// not the machine), and the next render is served.
func TestCrossStreamIgnoringPauseUnderLimits(t *testing.T) {
	t.Parallel()
	s := startLimitedServer(t, []string{"--as=" + fmt.Sprint(3<<30)}, map[string]string{
		"RENDERER_SUPPORT_MODULES": "true",
		"RENDERER_WORKERS_COUNT":   "1",
	})
	h2 := transports[0]
	appID, producerID := newID("s"), newID("r")
	s.upload(t, map[string]string{appID: markerBundle("alive"), producerID: deafProducer}, nil)
	// The caller reads nothing for a second, then reads.
	code := fmt.Sprintf(`var s = runOnOtherBundle(%q, 'deaf()');
		new Promise((resolve) => {
			s.on('error', (e) => resolve(e.message));
			setTimeout(() => s.resume(), 1000);
		})`, producerID)
	s.render(t, h2, appID, code, producerID).want(t, h2, http.StatusOK,
		"runOnOtherBundle: the other bundle's stream failed: the stream produced a chunk while paused (it ignores back-pressure)")
	select {
	case <-s.exited:
		t.Fatalf("gorender exited: %v", s.err)
	default:
	}
	s.render(t, h2, appID, "MARKER").want(t, h2, http.StatusOK, "alive")
}

// crossTimersBundle leaves work in its event loop when a call into it
// returns.
const crossTimersBundle = `globalThis.later = function (key) { setTimeout(function () { sharedExecutionContext.set(key, 'timer'); }, 1); return 'later'; };
globalThis.tick = function () { setInterval(function () { globalThis.ticks = (globalThis.ticks || 0) + 1; }, 1); return 'tick'; };
`

// TestRunOnOtherBundleTimersLastTheRender: the timers a runOnOtherBundle
// call sets in the other bundle run after the call returned, until the
// caller's render ends, as on Node (docs/compatibility.md "Streams across bundles"): the
// caller gets what a timer of the other bundle set, and an interval the
// other bundle left running ticks in none of its later renders. On goja
// and quickjs the call's timers used to be cancelled when it returned.
func TestRunOnOtherBundleTimersLastTheRender(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true", "RENDERER_WORKERS_COUNT": "1"})
	appID, depID := newID("s"), newID("r")
	s.upload(t, map[string]string{appID: markerBundle("alive"), depID: crossTimersBundle}, nil)
	eachTransportSerial(t, func(t *testing.T, tr transport) {
		// Once due, the other bundle's 1 ms timer runs in the same turn as
		// the caller's look: 200 looks are plenty, and without the other
		// bundle's timers none finds the key.
		code := fmt.Sprintf(`var call = runOnOtherBundle(%q, "tick(); later('k')");
			new Promise(function (resolve) {
				var looks = 0;
				(function look() {
					var v = sharedExecutionContext.get('k');
					if (v !== undefined || ++looks === 200) resolve(call + ' k=' + v);
					else setTimeout(look, 1);
				})();
			})`, depID)
		s.render(t, tr, appID, code, depID).want(t, tr, http.StatusOK, "later k=timer")
		s.render(t, tr, depID, `new Promise(function (resolve) {
			var before = globalThis.ticks;
			setTimeout(function () { resolve(before === globalThis.ticks ? 'still' : 'ticked from ' + before + ' to ' + globalThis.ticks); }, 20);
		})`).want(t, tr, http.StatusOK, "still")
	})
}

// sharedStreamBundle hands out one stream per key, whoever asks for it: a
// Readable of 'a', 'b', 'c' on a timer (shared), after every reader could
// start reading, or of 300 chunks of 1 KiB as fast as it is read
// (sharedBig).
const sharedStreamBundle = `var stream = require('stream');
var streams = {};
globalThis.shared = function (key) {
  if (!streams[key]) {
    var r = new stream.Readable({ objectMode: true, read: function () {} });
    var i = 0;
    var iv = setInterval(function () {
      if (i === 3) { clearInterval(iv); r.push(null); return; }
      r.push('abc'[i++]);
    }, 3);
    streams[key] = r;
  }
  return streams[key];
};
globalThis.sharedBig = function (key) {
  if (!streams[key]) {
    var n = 0;
    streams[key] = new stream.Readable({ objectMode: true, read: function () {
      this.push(n++ < 300 ? 'x'.repeat(1024) : null);
    } });
  }
  return streams[key];
};
`

// streamReaderBundle reads a stream into its chunks (collect) or counts
// them (count), with the error's message if it fails.
const streamReaderBundle = `globalThis.collect = function (s) {
  return new Promise(function (resolve) {
    var out = [];
    s.on('data', function (c) { out.push(typeof c === 'string' ? 's:' + c : 'b:' + c); });
    s.on('end', function () { resolve(out.join(',')); });
    s.on('error', function (e) { resolve(out.join(',') + '|' + e.message); });
  });
};
globalThis.count = function (s) {
  return new Promise(function (resolve) {
    var n = 0;
    s.on('data', function () { n++; });
    s.on('end', function () { resolve(n); });
    s.on('error', function (e) { resolve(e.message); });
  });
};
`

// TestCrossStreamTwoReaders: one stream object of a third bundle read by
// two readers of one render (docs/compatibility.md "Streams across bundles", several
// readers), through the binary on every engine. The entry holds the
// producer's stream and calls mid, whose code reads the same stream and
// waits for it: both get every chunk (before f271184, mid's promise never
// settled on goja and quickjs). And one reader reading at once, the other
// 100 ms late: the stream waits for the slower, as a Node stream piped to
// two destinations does, and the later reader gets the chunks from when
// it started (before f271184 the slower's stream failed with "the stream
// produced a chunk while paused", on every engine).
func TestCrossStreamTwoReaders(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true", "RENDERER_WORKERS_COUNT": "1"})
	appID, midID, rscID := newID("s"), newID("m"), newID("r")
	s.upload(t, map[string]string{appID: streamReaderBundle, midID: streamReaderBundle, rscID: sharedStreamBundle}, nil)
	eachTransportSerial(t, func(t *testing.T, tr transport) {
		t.Run("the entry and mid", func(t *testing.T) {
			shared := fmt.Sprintf(`shared(%q)`, "entry-mid-"+tr.name)
			inMid := fmt.Sprintf(`collect(runOnOtherBundle(%q, %q))`, rscID, shared)
			code := fmt.Sprintf(`var s = runOnOtherBundle(%q, %q);
				var r = runOnOtherBundle(%q, %q);
				Promise.all([collect(s), r]).then(function (a) { return a.join(' & '); })`, rscID, shared, midID, inMid)
			s.render(t, tr, appID, code, midID, rscID).want(t, tr, http.StatusOK, "s:a,s:b,s:c & s:a,s:b,s:c")
		})
		t.Run("one reader slower", func(t *testing.T) {
			big := fmt.Sprintf(`sharedBig(%q)`, "slower-"+tr.name)
			code := fmt.Sprintf(`var s1 = runOnOtherBundle(%q, %q), s2 = runOnOtherBundle(%q, %q);
				var fast = count(s2);
				new Promise(function (r) { setTimeout(r, 100); })
					.then(function () { return Promise.all([count(s1), fast]); })
					.then(function (a) { return a[0] + ' ' + (a[1] > 0 && a[1] <= 300); })`, rscID, big, rscID, big)
			s.render(t, tr, appID, code, rscID).want(t, tr, http.StatusOK, "300 true")
		})
	})
}
