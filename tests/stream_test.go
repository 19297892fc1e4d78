package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// This file proves streamed renders end to end (PROTOCOL.md §1, §5): the
// headers of a stream, bytes equal to the Node goldens, the shell arriving
// before the late Suspense boundaries, Server-Timing, and how a stream ends
// when its client leaves, when it idles, and when its JavaScript fails.

// ---------------------------------------------------------------------------
// Reading a streamed answer as it arrives

// streamRead is one read of a streamed answer's body.
type streamRead struct {
	At  time.Duration // since the request was sent
	End int           // bytes received so far, this read included
}

// streamAnswer is a streamed answer, read incrementally.
type streamAnswer struct {
	Status           int
	Header           http.Header
	ProtoMajor       int
	ContentLength    int64
	TransferEncoding []string
	Body             []byte
	Reads            []streamRead
	// Err is the error that ended the body; nil for a clean end.
	Err error
	// Ended is when the body ended (since the request was sent).
	Ended time.Duration
}

// readStream reads resp's body to its end, recording each read; onRead,
// when set, is called after each read.
// readGatedStream reads resp as readStream does and opens a file gate:
// once offset bytes have arrived it writes file, which the render waits
// for before producing the rest, so that the answer proves order, not
// timing. More than offset bytes before the gate opened is an error
// (held names what the gate holds back). It returns the answer and when
// the gate opened after sent, or -1 if offset bytes never arrived.
func readGatedStream(t *testing.T, resp *http.Response, sent time.Time, offset int, file, held string) (*streamAnswer, time.Duration) {
	t.Helper()
	var releasedAt time.Duration = -1
	a := readStream(resp, sent, func(a *streamAnswer) {
		if releasedAt >= 0 || len(a.Body) < offset {
			return
		}
		if len(a.Body) > offset {
			t.Errorf("%d bytes arrived before %s was released, want %d", len(a.Body), held, offset)
		}
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Error(err)
		}
		releasedAt = time.Since(sent)
	})
	return a, releasedAt
}

func readStream(resp *http.Response, sent time.Time, onRead func(*streamAnswer)) *streamAnswer {
	a := &streamAnswer{
		Status: resp.StatusCode, Header: resp.Header, ProtoMajor: resp.ProtoMajor,
		ContentLength: resp.ContentLength, TransferEncoding: resp.TransferEncoding,
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			a.Body = append(a.Body, buf[:n]...)
			a.Reads = append(a.Reads, streamRead{At: time.Since(sent), End: len(a.Body)})
			if onRead != nil {
				onRead(a)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			a.Err = err
			break
		}
	}
	a.Ended = time.Since(sent)
	resp.Body.Close()
	return a
}

// rawRenderRequest builds the gem's raw JS render of code on bundle id, with
// extra headers on top.
func (s *server) rawRenderRequest(t *testing.T, c context.Context, id, code string, extra http.Header) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(c, http.MethodPost, s.url+"/bundles/"+id+"/render/d41d8cd98f00b204e9800998ecf8427e", strings.NewReader(code))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", gemclient.RawJSContentType)
	req.Header.Set("X-React-On-Rails-Pro-Protocol-Version", gemclient.ProtocolVersion)
	req.Header.Set("X-React-On-Rails-Pro-Gem-Version", gemVersion)
	req.Header.Set("X-React-On-Rails-Pro-Rails-Env", "production")
	req.Header.Set("X-React-On-Rails-Pro-Dependency-Bundle-Timestamps", "[]")
	req.Header.Set("Authorization", "Bearer "+testPassword)
	for k, v := range extra {
		req.Header[k] = v
	}
	return req
}

// streamRequest sends req over tr and reads the answer as it arrives.
func (s *server) streamRequest(t *testing.T, tr transport, req *http.Request) *streamAnswer {
	t.Helper()
	sent := time.Now()
	resp, err := s.http(tr).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	return readStream(resp, sent, nil)
}

// streamRender sends a raw JS render and reads the answer as it arrives.
func (s *server) streamRender(t *testing.T, tr transport, id, code string, extra http.Header) *streamAnswer {
	t.Helper()
	return s.streamRequest(t, tr, s.rawRenderRequest(t, ctx(t), id, code, extra))
}

// wantStreamHeaders checks a streamed answer's status and headers
// (PROTOCOL.md §1, §5): 200, the render headers, no Content-Length, and
// chunked on HTTP/1.1.
func (a *streamAnswer) wantStreamHeaders(t *testing.T, tr transport) {
	t.Helper()
	if a.ProtoMajor != tr.protoMajor() {
		t.Errorf("answer over HTTP/%d, want HTTP/%d", a.ProtoMajor, tr.protoMajor())
	}
	if a.Status != http.StatusOK {
		t.Fatalf("status %d, want 200; body: %s", a.Status, clip(string(a.Body)))
	}
	for name, want := range map[string]string{
		"Content-Type":           "text/plain; charset=utf-8",
		"Cache-Control":          "public, max-age=31536000",
		"X-Content-Type-Options": "nosniff",
		"Content-Length":         "",
	} {
		if got := a.Header.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	if a.ContentLength != -1 {
		t.Errorf("ContentLength %d, want unknown (-1)", a.ContentLength)
	}
	wantTE := []string(nil)
	if !tr.h2c {
		wantTE = []string{"chunked"}
	}
	if !slices.Equal(a.TransferEncoding, wantTE) {
		t.Errorf("Transfer-Encoding %v, want %v", a.TransferEncoding, wantTE)
	}
}

// wantComplete checks a clean end and the exact bytes.
func (a *streamAnswer) wantComplete(t *testing.T, want string) {
	t.Helper()
	if a.Err != nil {
		t.Errorf("the stream did not end cleanly: %v (after %d bytes)", a.Err, len(a.Body))
	}
	if string(a.Body) != want {
		t.Errorf("streamed body differs from the golden:\n got %s\nwant %s", clip(string(a.Body)), clip(want))
	}
}

// wantAbrupt checks that the answer ended abruptly, never as a clean end:
// a stream reset on h2, a connection closed before the terminating chunk
// on HTTP/1.1 (PROTOCOL.md §5).
func (a *streamAnswer) wantAbrupt(t *testing.T, tr transport) {
	t.Helper()
	switch {
	case a.Err == nil:
		t.Errorf("the stream ended cleanly after %d bytes; want an abrupt end (%s)", len(a.Body), clip(string(a.Body)))
	case tr.h2c && !strings.Contains(a.Err.Error(), "stream error"):
		t.Errorf("h2c body read error %q, want a stream reset", a.Err)
	case !tr.h2c && !errors.Is(a.Err, io.ErrUnexpectedEOF):
		t.Errorf("HTTP/1.1 body read error %q, want unexpected EOF", a.Err)
	}
}

// chunk is one entry of a golden .chunks.json.
type chunk struct {
	Offset int `json:"offset"`
	Bytes  int `json:"bytes"`
	AtMs   int `json:"atMs"`
}

// goldenChunks reads golden/<name>.chunks.json.
func goldenChunks(t *testing.T, name string) []chunk {
	t.Helper()
	var f struct {
		TotalBytes int     `json:"totalBytes"`
		Chunks     []chunk `json:"chunks"`
	}
	if err := json.Unmarshal([]byte(testdata(t, "golden/"+name+".chunks.json")), &f); err != nil {
		t.Fatalf("%s.chunks.json: %v", name, err)
	}
	if len(f.Chunks) < 2 {
		t.Fatalf("%s.chunks.json lists %d chunks, want a shell and later chunks", name, len(f.Chunks))
	}
	return f.Chunks
}

// ---------------------------------------------------------------------------
// A bundle of test streams

// testStreamsBundle is a support-modules bundle of streams with a known
// shape in time. Rendering requests call TestStreams.<kind>(...).
const testStreamsBundle = `'use strict';
var PassThrough = require('stream').PassThrough;

function ticker(n, everyMs, out) {
  var i = 0;
  out.write('tick 0\n');
  var timer = setInterval(function () {
    i += 1;
    out.write('tick ' + i + '\n');
    if (i >= n) { clearInterval(timer); out.end(); }
  }, everyMs);
  out.on('close', function () { clearInterval(timer); });
  return out;
}

globalThis.TestStreams = {
  // ticks writes "tick i\n" for i = 0..n, one every everyMs, then ends.
  ticks: function (n, everyMs) { return ticker(n, everyMs, new PassThrough()); },
  // silent writes one chunk, then nothing until it ends after ms.
  silent: function (ms) {
    var out = new PassThrough();
    out.write('only chunk\n');
    setTimeout(function () { out.end('late end\n'); }, ms);
    return out;
  },
  // failing writes one chunk, then emits 'error' after ms.
  failing: function (ms) {
    var out = new PassThrough();
    out.write('first chunk\n');
    setTimeout(function () { out.emit('error', new Error('boom in the middle of the stream')); }, ms);
    return out;
  },
  // huge is a web ReadableStream of one text chunk, then one of n
  // characters, made of pieces of 1 MiB at most (on goja repeat is bounded
  // by RENDERER_MAX_ALLOCATION itself).
  huge: function (n) {
    var s = '';
    while (s.length < n) s += 'x'.repeat(Math.min(1 << 20, n - s.length));
    return new ReadableStream({
      start: function (controller) {
        controller.enqueue('first chunk\n');
        setTimeout(function () { controller.enqueue(s); controller.close(); }, 1);
      },
    });
  },
  // failingWeb is a web ReadableStream that errors after its first chunk.
  failingWeb: function (ms) {
    return new ReadableStream({
      start: function (controller) {
        controller.enqueue(new TextEncoder().encode('first web chunk\n'));
        setTimeout(function () { controller.error(new Error('web stream failed')); }, ms);
      },
    });
  },
};
`

// streamsServer starts a server with support modules and the test streams
// bundle uploaded; it returns the bundle id.
func streamsServer(t *testing.T, env map[string]string) (*server, string) {
	t.Helper()
	base := map[string]string{"RENDERER_SUPPORT_MODULES": "true"}
	for k, v := range env {
		base[k] = v
	}
	s := startServer(t, base)
	id := newID("s")
	s.upload(t, map[string]string{id: testStreamsBundle}, nil)
	return s, id
}

// ticksBody is what TestStreams.ticks(n, ...) writes.
func ticksBody(n int) string {
	var sb strings.Builder
	for i := 0; i <= n; i++ {
		fmt.Fprintf(&sb, "tick %d\n", i)
	}
	return sb.String()
}

// ---------------------------------------------------------------------------
// Tests

// serverTimingRE is the Server-Timing header of rscStreamObservability
// (PROTOCOL.md §5).
var serverTimingRE = regexp.MustCompile(`^ror_renderer_prepare;dur=[0-9]+\.[0-9]{3};desc="[^"]*"$`)

// TestStreamedRender: the stream-app fixtures (a Node PassThrough fed by
// renderToPipeableStream, and a web ReadableStream) stream over both
// transports with stream headers, bytes equal to Node's, and the shell
// arriving before the late Suspense boundaries; Server-Timing is sent only
// when asked for (PROTOCOL.md §5).
func TestStreamedRender(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true", "RENDERER_WORKERS_COUNT": "2"})
	id := newID("s")
	s.upload(t, map[string]string{id: testdata(t, "bundles/stream-app.js") + streamGate}, nil)
	// Load the bundle before the streams under test.
	s.streamRender(t, transports[0], id, request(t, "stream-web"), nil).wantComplete(t, golden(t, "stream-web"))

	eachTransport(t, func(t *testing.T, tr transport) {
		for _, name := range []string{"stream-pipeable", "stream-web"} {
			t.Run(name, func(t *testing.T) {
				chunks := goldenChunks(t, name)
				want := golden(t, name)
				last := chunks[len(chunks)-1]
				// Shell first (order, not timing): the last boundary's data
				// waits for a file as well as for its timer, and the test
				// writes the file once everything before that boundary has
				// arrived. A server that held the stream back would send
				// nothing before the file, and the answer would end at the
				// request's deadline.
				release := "release-" + tr.name + "-" + name
				file := filepath.Join(s.cache, id, release)
				defer os.WriteFile(file, nil, 0o644) // a failed render does not wait for its deadline
				sent := time.Now()
				resp, err := s.http(tr).Do(s.rawRenderRequest(t, ctx(t), id, gatedStreamRequest(t, name, release), nil))
				if err != nil {
					t.Fatal(err)
				}
				a, releasedAt := readGatedStream(t, resp, sent, last.Offset, file, "the last boundary's data")
				a.wantStreamHeaders(t, tr)
				a.wantComplete(t, want)
				if got := a.Header.Get("Server-Timing"); got != "" {
					t.Errorf("Server-Timing %q sent without rscStreamObservability", got)
				}
				if releasedAt < 0 {
					t.Errorf("the %d bytes before the last boundary (of %d) never arrived while its data was held back: the stream is not flushed as produced", last.Offset, len(want))
				}
				t.Logf("%s over %s: %d bytes before the last boundary at %s, its data released then, end at %s, %d reads",
					name, tr.name, last.Offset, releasedAt, a.Ended, len(a.Reads))
			})
		}
		t.Run("server timing", func(t *testing.T) {
			a := s.streamRender(t, tr, id, request(t, "stream-web"), http.Header{"X-React-On-Rails-Pro-Rsc-Stream-Observability": {"true"}})
			a.wantStreamHeaders(t, tr)
			a.wantComplete(t, golden(t, "stream-web"))
			if got := a.Header.Get("Server-Timing"); !serverTimingRE.MatchString(got) {
				t.Errorf("Server-Timing %q, want ror_renderer_prepare;dur=<ms with 3 decimals>;desc=\"...\"", got)
			}

			a = s.streamRender(t, tr, id, request(t, "stream-web"), http.Header{"X-React-On-Rails-Pro-Rsc-Stream-Observability": {"false"}})
			a.wantComplete(t, golden(t, "stream-web"))
			if got := a.Header.Get("Server-Timing"); got != "" {
				t.Errorf("Server-Timing %q with rscStreamObservability false", got)
			}

			// The JSON encoding's field.
			body, _ := json.Marshal(map[string]any{
				"password": testPassword, "protocolVersion": gemclient.ProtocolVersion, "gemVersion": gemVersion,
				"railsEnv": "production", "dependencyBundleTimestamps": []string{},
				"renderingRequest": request(t, "stream-web"), "rscStreamObservability": true,
			})
			req, err := http.NewRequestWithContext(ctx(t), http.MethodPost, s.url+"/bundles/"+id+"/render/x", strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			a = s.streamRequest(t, tr, req)
			a.wantStreamHeaders(t, tr)
			a.wantComplete(t, golden(t, "stream-web"))
			if got := a.Header.Get("Server-Timing"); !serverTimingRE.MatchString(got) {
				t.Errorf("JSON rscStreamObservability: Server-Timing %q", got)
			}
		})
	})
}

// streamGate, appended to the stream-app bundle, defines
// streamGate(file, value): a Promise of value that resolves once file
// exists in the bundle's directory (the bundle's module scope has require;
// a rendering request's code does not).
const streamGate = `
globalThis.streamGate = function (file, value) {
  var fs = require('fs'), path = require('path').join(__dirname, file);
  return new Promise(function (resolve) {
    (function poll() { if (fs.existsSync(path)) resolve(value); else setTimeout(poll, 10); })();
  });
};
`

// gatedStreamRequest is the stream-app request name whose last Suspense
// boundary's data (the props' recommendations for stream-pipeable, user for
// stream-web) resolves only once file exists in the bundle's directory
// (streamGate), after its timer. The rest of the request, and so the bytes
// of the answer, are unchanged.
func gatedStreamRequest(t *testing.T, name, file string) string {
	t.Helper()
	gates := map[string][2]string{"stream-pipeable": {"renderStream", "recommendations"}, "stream-web": {"renderWebStream", "user"}}
	gate, ok := gates[name]
	if !ok {
		t.Fatalf("no gate for the request %s", name)
	}
	quoted, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`(function () {
  var render = globalThis.%[1]s;
  globalThis.%[1]s = function (props, railsContext) {
    return render(Object.assign({}, props, { %[2]s: streamGate(%[3]s, props.%[2]s) }), railsContext);
  };
  try {
    return %[4]s;
  } finally {
    globalThis.%[1]s = render;
  }
})()`, gate[0], gate[1], quoted, strings.TrimSpace(request(t, name)))
}

// TestStreamWire: on HTTP/1.1 the streamed answer is chunked on the wire,
// one chunk per flush, with the terminating zero-length chunk at the end
// (PROTOCOL.md §1).
func TestStreamWire(t *testing.T) {
	t.Parallel()
	s, id := streamsServer(t, nil)
	const n = 3
	code := fmt.Sprintf("TestStreams.ticks(%d, 30)", n)
	req := "POST /bundles/" + id + "/render/d HTTP/1.1\r\n" +
		"Host: renderer\r\n" +
		"Content-Type: " + gemclient.RawJSContentType + "\r\n" +
		"X-React-On-Rails-Pro-Protocol-Version: 2.0.0\r\n" +
		"Authorization: Bearer " + testPassword + "\r\n" +
		"Content-Length: " + strconv.Itoa(len(code)) + "\r\n" +
		"Connection: close\r\n\r\n" + code
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	var head strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read head: %v (%q)", err, head.String())
		}
		head.WriteString(line)
		if line == "\r\n" {
			break
		}
	}
	h := head.String()
	if !strings.HasPrefix(h, "HTTP/1.1 200 ") || !regexp.MustCompile(`(?mi)^Transfer-Encoding: chunked\r$`).MatchString(h) ||
		regexp.MustCompile(`(?mi)^Content-Length:`).MatchString(h) {
		t.Fatalf("want a 200 chunked answer without Content-Length, got:\n%s", h)
	}
	var chunks []string
	for {
		sizeLine, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read chunk size: %v after chunks %q", err, chunks)
		}
		size, err := strconv.ParseInt(strings.TrimSpace(sizeLine), 16, 64)
		if err != nil {
			t.Fatalf("chunk size line %q", sizeLine)
		}
		data := make([]byte, size+2)
		if _, err := io.ReadFull(br, data); err != nil {
			t.Fatalf("read chunk: %v", err)
		}
		if size == 0 {
			break
		}
		chunks = append(chunks, string(data[:size]))
	}
	var want []string
	for i := 0; i <= n; i++ {
		want = append(want, fmt.Sprintf("tick %d\n", i))
	}
	if !slices.Equal(chunks, want) {
		t.Errorf("wire chunks %q, want one per write %q", chunks, want)
	}
}

// TestStreamClientGone: 100 streamed renders whose clients leave after the
// first chunk (RST_STREAM on h2c, a closed socket on HTTP/1.1) each release
// their runtime: with 2 runtimes the later ones, queued, all get theirs;
// afterwards no runtime is busy, the metrics count every one as
// client_gone, a normal render works, and the server's goroutines are back
// near their baseline (PROTOCOL.md §5).
func TestStreamClientGone(t *testing.T) {
	t.Parallel()
	const streams = 100
	eachTransport(t, func(t *testing.T, tr transport) {
		s, id := streamsServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "2"})
		// 10 s of ticks: only a disconnect ends these streams early.
		const slow = "TestStreams.ticks(200, 50)"
		const quick = "TestStreams.ticks(2, 1)"

		// Baseline, with every runtime loaded and the client's connection
		// (h2c) or none (HTTP/1.1) open, as afterwards.
		for range 2 {
			s.streamRender(t, tr, id, quick, nil).wantComplete(t, ticksBody(2))
		}
		time.Sleep(200 * time.Millisecond)
		baseline := s.metricValue(t, "go_goroutines")
		runtimesBefore := s.metricValue(t, `gorender_runtimes{bundle="`+id+`"}`)

		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make(chan string, streams)
		for i := range streams {
			wg.Go(func() {
				if err := s.leaveAfterFirstChunk(tr, id, slow); err != nil {
					errs <- fmt.Sprintf("stream %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		t.Logf("%d streams left in %s", streams, time.Since(t0))
		close(errs)
		for e := range errs {
			t.Error(e)
		}

		if v := s.waitMetric(t, busySeries(id), 60*time.Second, func(v float64) bool { return v == 0 }); v != 0 {
			t.Errorf("%s = %v after the clients left, want 0", busySeries(id), v)
		}
		if v := s.waitMetric(t, streamsEnded("client_gone"), 60*time.Second, func(v float64) bool { return v >= streams }); v != streams {
			t.Errorf("%s = %v, want %d", streamsEnded("client_gone"), v, streams)
		}
		t.Logf("metrics settled after %s", time.Since(t0))
		s.streamRender(t, tr, id, quick, nil).wantComplete(t, ticksBody(2))
		r := s.render(t, tr, id, "'still ' + 'rendering'")
		r.want(t, tr, http.StatusOK, "still rendering")
		// Runtimes broken by a disconnect are replaced in the background: a
		// replacement that finds the pool full closes again, which can take
		// a while (a QuickJS runtime under the race detector).
		runtimes := `gorender_runtimes{bundle="` + id + `"}`
		want := float64(runtimesPerBundle(2))
		if v := s.waitMetric(t, runtimes, 60*time.Second, func(v float64) bool { return v == want }); v != want {
			t.Errorf("gorender_runtimes = %v for the bundle, want its %v runtimes", v, want)
		}
		if v := s.metricValue(t, "gorender_runtimes_quarantined"); v != 0 {
			t.Errorf("gorender_runtimes_quarantined = %v, want 0", v)
		}
		// A client that leaves while the stream waits for its next chunk
		// does not cost a runtime (the conformance suite's
		// StreamRequestGoneWhileWaitingKeepsRuntime proves it); one that
		// leaves while JavaScript runs does.
		t.Logf("runtimes replaced after %d disconnects: %v", streams, s.metricValue(t, `gorender_runtime_replacements_total{reason="broken"}`))

		// Each runtime the pool holds beyond the baseline's has a goroutine
		// of its own (its renders run on it): on node the pool grew from
		// 1 or 2 runtimes to 8, which would take most of the slack.
		slack := 10 + want - runtimesBefore
		after := s.waitMetric(t, "go_goroutines", 60*time.Second, func(v float64) bool { return v <= baseline+slack })
		if after > baseline+slack {
			t.Errorf("go_goroutines %v after the disconnects, baseline %v with %v runtimes (+%v allowed with %v): goroutines leaked", after, baseline, runtimesBefore, slack, want)
		}
		t.Logf("go_goroutines: baseline %v, after %v; total %s", baseline, after, time.Since(t0))
	})
}

// leaveAfterFirstChunk starts a streamed render, reads until its first
// chunk, then leaves: on h2c by canceling the request (RST_STREAM), on
// HTTP/1.1 by closing the socket.
func (s *server) leaveAfterFirstChunk(tr transport, id, code string) error {
	c, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if tr.h2c {
		req, err := http.NewRequestWithContext(c, http.MethodPost, s.url+"/bundles/"+id+"/render/x", strings.NewReader(code))
		if err != nil {
			return err
		}
		req.Header = rawRenderHeaders()
		req.Header.Set("Content-Type", gemclient.RawJSContentType)
		resp, err := s.http(tr).Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("status %d: %s", resp.StatusCode, clip(string(b)))
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, len("tick 0\n"))); err != nil {
			return fmt.Errorf("first chunk: %w", err)
		}
		cancel() // RST_STREAM
		return nil
	}
	var d net.Dialer
	conn, err := d.DialContext(c, "tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := io.WriteString(conn, "POST /bundles/"+id+"/render/x HTTP/1.1\r\nHost: renderer\r\n"+
		"Content-Type: "+gemclient.RawJSContentType+"\r\n"+
		"X-React-On-Rails-Pro-Protocol-Version: 2.0.0\r\n"+
		"Authorization: Bearer "+testPassword+"\r\n"+
		"Content-Length: "+strconv.Itoa(len(code))+"\r\n\r\n"+code); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status %d: %s", resp.StatusCode, clip(string(b)))
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, len("tick 0\n"))); err != nil {
		return fmt.Errorf("first chunk: %w", err)
	}
	return conn.Close()
}

// TestStreamIdle: a stream silent for longer than
// RENDERER_STREAM_IDLE_TIMEOUT ends abruptly, counted as idle; a stream that
// keeps producing is never cut, neither by the idle window nor by the render
// deadline, which stops applying once the answer streams (PROTOCOL.md §5,
// §11).
func TestStreamIdle(t *testing.T) {
	t.Parallel()
	s, id := streamsServer(t, map[string]string{
		"RENDERER_STREAM_IDLE_TIMEOUT": "1s", "RENDERER_RENDER_TIMEOUT": "500ms", "RENDERER_WORKERS_COUNT": "2",
	})
	eachTransport(t, func(t *testing.T, tr transport) {
		t.Run("silent", func(t *testing.T) {
			// Silent for 60 s, cut after 1 s: a bound of 30 s tells the
			// idle window from the stream's own end on a loaded machine.
			a := s.streamRender(t, tr, id, "TestStreams.silent(60000)", nil)
			a.wantStreamHeaders(t, tr)
			a.wantAbrupt(t, tr)
			if string(a.Body) != "only chunk\n" {
				t.Errorf("body %q, want the one chunk before the silence", a.Body)
			}
			if a.Ended > 30*time.Second {
				t.Errorf("the silent stream was cut only after %s", a.Ended)
			}
		})
		t.Run("healthy", func(t *testing.T) {
			// 20 ticks 100 ms apart: 2 s, four times the render deadline.
			// Each tick comes a tenth of the idle window after the last:
			// with a window of 300 ms, a pause of 200 ms of a loaded
			// machine (the timer's or the answer's) cut a healthy stream.
			a := s.streamRender(t, tr, id, "TestStreams.ticks(20, 100)", nil)
			a.wantStreamHeaders(t, tr)
			a.wantComplete(t, ticksBody(20))
		})
	})
	t.Cleanup(func() {
		if v := s.metricValue(t, streamsEnded("idle")); v != 2 {
			t.Errorf("%s = %v, want 2 (one per transport)", streamsEnded("idle"), v)
		}
	})
}

// TestStreamJSError: a stream whose JavaScript fails after the answer
// started ends abruptly, never as a fake success (PROTOCOL.md §5).
func TestStreamJSError(t *testing.T) {
	t.Parallel()
	s, id := streamsServer(t, nil)
	eachTransport(t, func(t *testing.T, tr transport) {
		for _, c := range []struct{ code, first string }{
			{"TestStreams.failing(50)", "first chunk\n"},
			{"TestStreams.failingWeb(50)", "first web chunk\n"},
		} {
			t.Run(c.code, func(t *testing.T) {
				a := s.streamRender(t, tr, id, c.code, nil)
				a.wantStreamHeaders(t, tr)
				a.wantAbrupt(t, tr)
				if string(a.Body) != c.first {
					t.Errorf("body %q, want only the chunk before the error", a.Body)
				}
			})
		}
	})
	t.Cleanup(func() {
		if v := s.metricValue(t, streamsEnded("error")); v != 4 {
			t.Errorf("%s = %v, want 4", streamsEnded("error"), v)
		}
	})
}

// TestStreamChunkPastMaxAllocation: on goja and quickjs a text chunk of
// the render's stream longer than RENDERER_MAX_ALLOCATION fails the stream
// (it is copied into Go) as any error of the stream does: the answer ends
// abruptly after the chunks before it, and the server serves the next
// render. Before, the chunk went out whatever its length. The node engine,
// whose processes' memory is bounded instead, sends it.
func TestStreamChunkPastMaxAllocation(t *testing.T) {
	t.Parallel()
	s, id := streamsServer(t, map[string]string{"RENDERER_MAX_ALLOCATION": "1MiB", "RENDERER_WORKERS_COUNT": "1"})
	eachTransport(t, func(t *testing.T, tr transport) {
		a := s.streamRender(t, tr, id, "TestStreams.huge(3 << 20)", nil)
		a.wantStreamHeaders(t, tr)
		if testEngine == "node" {
			a.wantComplete(t, "first chunk\n"+strings.Repeat("x", 3<<20))
		} else {
			a.wantAbrupt(t, tr)
			if string(a.Body) != "first chunk\n" {
				t.Errorf("body of %d bytes, want only the chunk before the error", len(a.Body))
			}
		}
		s.render(t, tr, id, "'alive'").want(t, tr, http.StatusOK, "alive")
	})
}

// TestStreamLatency logs (never asserts) the median time to first byte and
// total time of the stream-pipeable render over h2c, 10 runs after a warm-up,
// on the engine under test, with the race detector's overhead included if
// the binary was built with it.
func TestStreamLatency(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true", "RENDERER_WORKERS_COUNT": "1"})
	id := newID("s")
	s.upload(t, map[string]string{id: testdata(t, "bundles/stream-app.js")}, nil)
	tr := transports[0]
	code, want := request(t, "stream-pipeable"), golden(t, "stream-pipeable")
	s.streamRender(t, tr, id, code, nil).wantComplete(t, want)
	const runs = 10
	var ttfb, total []time.Duration
	for range runs {
		a := s.streamRender(t, tr, id, code, nil)
		a.wantComplete(t, want)
		if len(a.Reads) == 0 {
			t.Fatal("no bytes")
		}
		ttfb = append(ttfb, a.Reads[0].At)
		total = append(total, a.Reads[len(a.Reads)-1].At)
	}
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	t.Logf("stream-pipeable over h2c (%s, race build %v), median of %d: time to first byte %s, total %s (min %s / %s, max %s / %s)",
		testEngine, raceBuild, runs, median(ttfb), median(total), ttfb[0], total[0], ttfb[runs-1], total[runs-1])
}

// floodStream is a rendering request whose answer is a 256 MiB stream,
// produced as fast as the client takes it (a pull-based web stream).
const floodStream = `(function () {
  var chunk = new TextEncoder().encode('x'.repeat(65536)), n = 0;
  return new ReadableStream({
    pull: function (c) { if (n++ < 4096) { c.enqueue(chunk); } else { c.close(); } },
  });
})()`

// renderUnread sends a raw render of code in bundle id on an HTTP/1.1
// connection of its own and reads nothing of the answer: the caller closes
// the connection.
func (s *server) renderUnread(t *testing.T, id, code string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "POST /bundles/"+id+"/render/x HTTP/1.1\r\nHost: renderer\r\n"+
		"Content-Type: "+gemclient.RawJSContentType+"\r\n"+
		"X-React-On-Rails-Pro-Protocol-Version: 2.0.0\r\n"+
		"Authorization: Bearer "+testPassword+"\r\n"+
		"Content-Length: "+strconv.Itoa(len(code))+"\r\n\r\n"+code); err != nil {
		conn.Close()
		t.Fatal(err)
	}
	return conn
}

// TestStreamClientNeverReads: a client that starts a large streamed render
// and never reads blocks the stream's writes; once it has taken nothing for
// RENDERER_WRITE_TIMEOUT the stream ends (reset on h2c, connection closed
// on HTTP/1.1), counted as idle, and its runtime is free: with one worker,
// the next render succeeds (issue 12 item 7). Before the fix that render
// waited for the runtime until the queue timeout and got 503.
func TestStreamClientNeverReads(t *testing.T) {
	t.Parallel()
	s, id := streamsServer(t, map[string]string{
		"RENDERER_WORKERS_COUNT": "1", "RENDERER_WRITE_TIMEOUT": "2s", "RENDERER_QUEUE_TIMEOUT": "60s",
	})
	eachTransportSerial(t, func(t *testing.T, tr transport) {
		c, cancel := context.WithCancel(context.Background())
		defer cancel()
		if tr.h2c {
			// Go's client takes 4 MiB of a stream before its window closes.
			resp, err := s.http(tr).Do(s.rawRenderRequest(t, c, id, floodStream, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, clip(string(b)))
			}
		} else {
			defer s.renderUnread(t, id, floodStream).Close()
		}
		// The stream holds the only runtime until its writes give up.
		if got := s.waitMetric(t, busySeries(id), 30*time.Second, func(v float64) bool { return v == 1 }); got != 1 {
			t.Fatalf("%s = %v, want the stream holding the runtime", busySeries(id), got)
		}
		r := s.render(t, tr, id, "'runtime free'")
		r.want(t, tr, http.StatusOK, "runtime free")
	})
	// A stream is counted when its handler returns, after its runtime is
	// free: the next render's answer may come first.
	if got := s.waitMetric(t, streamsEnded("idle"), 60*time.Second, func(v float64) bool { return v >= 2 }); got != 2 {
		t.Errorf("%s = %v, want 2 (one per transport)", streamsEnded("idle"), got)
	}
}
