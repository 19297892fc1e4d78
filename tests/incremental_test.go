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
	"net/http/httptrace"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// This file proves the incremental render route end to end (PROTOCOL.md
// §8): NDJSON lines streamed in while the answer streams out (full duplex on
// both transports), update chunks evaluated as they arrive, the close chunk
// at request EOF, pull mode's injected frames, bad lines skipped, line-1
// rejections, and update chunks evaluated in a dependency bundle.

// ndjsonType is the incremental route's body type.
const ndjsonType = "application/x-ndjson"

// incrementalPath is the incremental route of bundle id.
func incrementalPath(id string) string {
	return "/bundles/" + id + "/incremental-render/d41d8cd98f00b204e9800998ecf8427e"
}

// firstLine is line 1 of an incremental render: the §3 metadata, the
// rendering request and the dependencies, with extra on top (a nil value
// removes a field).
func firstLine(code string, deps []string, extra map[string]any) map[string]any {
	if deps == nil {
		deps = []string{}
	}
	m := map[string]any{
		"password": testPassword, "protocolVersion": gemclient.ProtocolVersion, "gemVersion": gemVersion,
		"railsEnv": "production", "renderingRequest": code, "dependencyBundleTimestamps": deps,
	}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// updateLine is a later line: code to evaluate in bundle id.
func updateLine(id, code string) map[string]any {
	return map[string]any{"bundleTimestamp": id, "updateChunk": code}
}

// ndjson encodes v as one NDJSON line; a string is sent as is.
func ndjson(t *testing.T, v any) []byte {
	t.Helper()
	if s, ok := v.(string); ok {
		return []byte(s + "\n")
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// incremental is an incremental render in flight: the test writes lines to
// the request body while a goroutine reads the answer.
type incremental struct {
	t    *testing.T
	body *io.PipeWriter
	resp *http.Response

	mu       sync.Mutex
	received []byte
	readErr  error
	ended    chan struct{} // closed when the answer's body ended
}

// startIncremental opens an incremental render of bundle id over tr, sends
// line 1 and waits for the answer's headers, leaving the body open.
func (s *server) startIncremental(t *testing.T, tr transport, id string, first any) *incremental {
	t.Helper()
	pr, pw := io.Pipe()
	c, cancel := context.WithTimeout(context.Background(), requestTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(c, http.MethodPost, s.url+incrementalPath(id), pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ndjsonType)
	type result struct {
		resp *http.Response
		err  error
	}
	answered := make(chan result, 1)
	go func() {
		resp, err := s.http(tr).Do(req)
		answered <- result{resp, err}
	}()
	inc := &incremental{t: t, body: pw, ended: make(chan struct{})}
	t.Cleanup(func() { pw.Close() })
	written := make(chan error, 1)
	go func() {
		_, err := pw.Write(ndjson(t, first))
		written <- err
	}()
	select {
	case r := <-answered:
		if r.err != nil {
			t.Fatalf("incremental render: %v", r.err)
		}
		inc.resp = r.resp
	case <-time.After(30 * time.Second):
		t.Fatalf("no answer to line 1 within 30 s while the request body stayed open (no full duplex over %s?)", tr.name)
	}
	if inc.resp.StatusCode == http.StatusOK {
		if err := <-written; err != nil {
			t.Fatalf("write line 1: %v", err)
		}
	}
	go func() {
		defer close(inc.ended)
		buf := make([]byte, 32<<10)
		for {
			n, err := inc.resp.Body.Read(buf)
			inc.mu.Lock()
			inc.received = append(inc.received, buf[:n]...)
			if err != nil && !errors.Is(err, io.EOF) {
				inc.readErr = err
			}
			inc.mu.Unlock()
			if err != nil {
				inc.resp.Body.Close()
				return
			}
		}
	}()
	return inc
}

// send writes one more line to the request body.
func (inc *incremental) send(v any) {
	inc.t.Helper()
	if _, err := inc.body.Write(ndjson(inc.t, v)); err != nil {
		inc.t.Fatalf("write line: %v", err)
	}
}

// bytesSoFar returns what the answer carried so far.
func (inc *incremental) bytesSoFar() string {
	inc.mu.Lock()
	defer inc.mu.Unlock()
	return string(inc.received)
}

// waitFor waits until the answer so far is exactly want, failing fast when
// it stops being a prefix of want.
func (inc *incremental) waitFor(want string) {
	inc.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := inc.bytesSoFar()
		if got == want {
			return
		}
		ended := false
		select {
		case <-inc.ended:
			ended = inc.bytesSoFar() == got
		default:
		}
		if !strings.HasPrefix(want, got) || ended || time.Now().After(deadline) {
			inc.t.Fatalf("the answer so far (ended: %v, error: %v) is not the expected bytes:\n got %s\nwant %s", ended, inc.readErr, clip(got), clip(want))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// finish closes the request body and waits for the answer's end; it
// returns the whole answer and the error that ended it (nil: clean end).
func (inc *incremental) finish() (string, error) {
	inc.t.Helper()
	inc.body.Close()
	select {
	case <-inc.ended:
	case <-time.After(30 * time.Second):
		inc.t.Fatalf("the answer did not end within 30 s of the request's end; so far: %s", clip(inc.bytesSoFar()))
	}
	inc.mu.Lock()
	defer inc.mu.Unlock()
	return string(inc.received), inc.readErr
}

// wantStreamHeaders checks the streamed answer's status and headers.
func (inc *incremental) wantStreamHeaders(t *testing.T, tr transport) {
	t.Helper()
	a := &streamAnswer{Status: inc.resp.StatusCode, Header: inc.resp.Header, ProtoMajor: inc.resp.ProtoMajor,
		ContentLength: inc.resp.ContentLength, TransferEncoding: inc.resp.TransferEncoding}
	if a.Status != http.StatusOK {
		b, _ := io.ReadAll(inc.resp.Body)
		t.Fatalf("status %d, want 200: %s", a.Status, clip(string(b)))
	}
	a.wantStreamHeaders(t, tr)
}

// stepEnds reads golden/<name>.chunks.json of an incremental golden: the
// byte length of the answer once each step (line 1, the updates, the close
// chunk) has been evaluated.
func stepEnds(t *testing.T, name string) []int {
	t.Helper()
	var f struct {
		Steps  []string `json:"steps"`
		Chunks []struct {
			Offset int `json:"offset"`
			Bytes  int `json:"bytes"`
			Step   int `json:"step"`
		} `json:"chunks"`
	}
	if err := json.Unmarshal([]byte(testdata(t, "golden/"+name+".chunks.json")), &f); err != nil {
		t.Fatalf("%s.chunks.json: %v", name, err)
	}
	ends := make([]int, len(f.Steps))
	for _, c := range f.Chunks {
		ends[c.Step] = max(ends[c.Step], c.Offset+c.Bytes)
	}
	for i := 1; i < len(ends); i++ {
		ends[i] = max(ends[i], ends[i-1])
	}
	return ends
}

// frame is one length-prefixed frame of a streamed answer (PROTOCOL.md §5).
type frame struct{ meta, content string }

// parseFrames splits an answer into whole frames, failing on anything else.
func parseFrames(t *testing.T, body string) []frame {
	t.Helper()
	var frames []frame
	for rest := body; rest != ""; {
		nl := strings.IndexByte(rest, '\n')
		if nl < 10 || rest[nl-9] != '\t' {
			t.Fatalf("no frame header at byte %d: %s", len(body)-len(rest), clip(rest))
		}
		n, err := strconv.ParseUint(rest[nl-8:nl], 16, 32)
		if err != nil || int(n) > len(rest)-nl-1 {
			t.Fatalf("bad frame length at byte %d: %s", len(body)-len(rest), clip(rest[:nl]))
		}
		meta := rest[:nl-9]
		if !json.Valid([]byte(meta)) {
			t.Fatalf("frame metadata is not JSON: %q", meta)
		}
		frames = append(frames, frame{meta, rest[nl+1 : nl+1+int(n)]})
		rest = rest[nl+1+int(n):]
	}
	return frames
}

// asyncPropsServer starts a support-modules server with the async-props
// bundle uploaded, and returns its id.
func asyncPropsServer(t *testing.T) (*server, string) {
	t.Helper()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true", "RENDERER_WORKERS_COUNT": "2"})
	id := newID("s")
	s.upload(t, map[string]string{id: testdata(t, "bundles/async-props.js")}, nil)
	return s, id
}

// asyncPropsFirst is line 1 of the async-props fixture's render.
func asyncPropsFirst(t *testing.T, id string, extra map[string]any) map[string]any {
	m := firstLine(request(t, "async-props-initial"), nil, map[string]any{
		"onRequestClosedUpdateChunk": updateLine(id, request(t, "async-props-close")),
	})
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// TestIncrementalRender: the async-props fixture over both transports, full
// duplex: line 1 streams the shell while the body is still open, each
// update's frame arrives before the next line is written, and closing the
// body runs onRequestClosedUpdateChunk, which ends the answer; every step's
// bytes equal the Node goldens (PROTOCOL.md §8).
func TestIncrementalRender(t *testing.T) {
	t.Parallel()
	s, id := asyncPropsServer(t)
	ends := stepEnds(t, "async-props")
	eachTransport(t, func(t *testing.T, tr transport) {
		inc := s.startIncremental(t, tr, id, asyncPropsFirst(t, id, nil))
		inc.wantStreamHeaders(t, tr)
		if got := inc.resp.Header.Get("Server-Timing"); got != "" {
			t.Errorf("Server-Timing %q without rscStreamObservability", got)
		}
		inc.waitFor(golden(t, "async-props-initial"))
		inc.send(updateLine(id, request(t, "async-props-update-1")))
		inc.waitFor(golden(t, "async-props-update-1"))
		inc.send(updateLine(id, request(t, "async-props-update-2")))
		inc.waitFor(golden(t, "async-props-update-2"))
		body, err := inc.finish()
		if err != nil {
			t.Errorf("the answer did not end cleanly: %v", err)
		}
		if body != golden(t, "async-props-close") {
			t.Errorf("whole answer:\n got %s\nwant %s", clip(body), clip(golden(t, "async-props-close")))
		}
		for i, name := range []string{"initial", "update-1", "update-2", "close"} {
			if len(golden(t, "async-props-"+name)) != ends[i] {
				t.Errorf("async-props.chunks.json step %d ends at %d, golden %s has %d bytes", i, ends[i], name, len(golden(t, "async-props-"+name)))
			}
		}
	})
}

// TestIncrementalPull: pull mode (pullEnabled, pushProps) gets the golden
// bytes of async-props-pull.html: the propRequest frames the bundle asks for
// right after the shell, only between whole frames, and renderComplete at
// the end; rscStreamObservability on line 1 adds Server-Timing
// (PROTOCOL.md §8).
func TestIncrementalPull(t *testing.T) {
	t.Parallel()
	s, id := asyncPropsServer(t)
	want := golden(t, "async-props-pull")
	ends := stepEnds(t, "async-props-pull")
	eachTransport(t, func(t *testing.T, tr transport) {
		inc := s.startIncremental(t, tr, id, asyncPropsFirst(t, id, map[string]any{
			"pullEnabled": true, "pushProps": []string{"user"}, "rscStreamObservability": true,
		}))
		inc.wantStreamHeaders(t, tr)
		if got := inc.resp.Header.Get("Server-Timing"); !serverTimingRE.MatchString(got) {
			t.Errorf("Server-Timing %q, want ror_renderer_prepare;dur=<ms>;desc=\"...\"", got)
		}
		inc.waitFor(want[:ends[0]])
		inc.send(updateLine(id, request(t, "async-props-update-1")))
		inc.waitFor(want[:ends[1]])
		inc.send(updateLine(id, request(t, "async-props-update-2")))
		inc.waitFor(want[:ends[2]])
		body, err := inc.finish()
		if err != nil {
			t.Errorf("the answer did not end cleanly: %v", err)
		}
		if body != want {
			t.Fatalf("whole answer:\n got %s\nwant %s", clip(body), clip(want))
		}
		frames := parseFrames(t, body)
		var control []string
		for _, f := range frames {
			if strings.Contains(f.meta, `"messageType"`) {
				if f.content != "" {
					t.Errorf("control frame %s has content %q", f.meta, f.content)
				}
				control = append(control, f.meta)
			}
		}
		wantControl := []string{
			`{"messageType":"propRequest","propName":"comments"}`,
			`{"messageType":"propRequest","propName":"recommendations"}`,
			`{"messageType":"renderComplete"}`,
		}
		if strings.Join(control, "\n") != strings.Join(wantControl, "\n") {
			t.Errorf("control frames %q, want %q", control, wantControl)
		}
		if last := frames[len(frames)-1].meta; last != `{"messageType":"renderComplete"}` {
			t.Errorf("last frame %s, want renderComplete", last)
		}
		if !strings.HasSuffix(body, "{\"messageType\":\"renderComplete\"}\t00000000\n") {
			t.Errorf("the answer does not end with the renderComplete frame")
		}
	})
}

// TestIncrementalBadLines: lines that are not update chunks (not JSON, not
// the shape, naming a bundle outside the request's set, or throwing) are
// skipped and the render completes with the golden bytes (PROTOCOL.md §8).
func TestIncrementalBadLines(t *testing.T) {
	t.Parallel()
	s, id := asyncPropsServer(t)
	// Another loaded bundle that is not in the request's set: an update
	// naming it must not run anywhere.
	other := newID("s")
	s.upload(t, map[string]string{other: testdata(t, "bundles/async-props.js")}, nil)
	deliverRecs := `AsyncPropsApp.deliver("recommendations", ["never"])`
	eachTransport(t, func(t *testing.T, tr transport) {
		inc := s.startIncremental(t, tr, id, asyncPropsFirst(t, id, nil))
		inc.wantStreamHeaders(t, tr)
		inc.waitFor(golden(t, "async-props-initial"))
		inc.send("this line is not JSON {")
		inc.send(updateLine(other, deliverRecs))
		inc.send(map[string]any{"bundleTimestamp": id}) // no updateChunk
		inc.send(map[string]any{"updateChunk": deliverRecs})
		inc.send(`["an", "array"]`)
		inc.send(updateLine(id, "throw new Error('a failing update chunk quoting a prop: PROP-7731')"))
		inc.send(updateLine(id, request(t, "async-props-update-1")))
		inc.waitFor(golden(t, "async-props-update-1"))
		inc.send("{not json either")
		inc.send(updateLine(newID("s"), deliverRecs)) // not even uploaded
		inc.send(updateLine(id, request(t, "async-props-update-2")))
		inc.waitFor(golden(t, "async-props-update-2"))
		body, err := inc.finish()
		if err != nil {
			t.Errorf("the answer did not end cleanly: %v", err)
		}
		if body != golden(t, "async-props-close") {
			t.Errorf("whole answer:\n got %s\nwant %s", clip(body), clip(golden(t, "async-props-close")))
		}
		// A chunk's error message is the bundle's text, which may quote
		// props: the log says a chunk failed, not what it said.
		if strings.Contains(s.stderr.String(), "PROP-7731") {
			t.Errorf("the log carries a failing chunk's message:\n%s", s.stderr.String())
		}
	})
}

// TestIncrementalRejections: line-1 failures are answered before anything
// streams, with the status of PROTOCOL.md §4 and §8.
func TestIncrementalRejections(t *testing.T) {
	t.Parallel()
	s, id := asyncPropsServer(t)
	code := request(t, "async-props-initial")
	line := func(extra map[string]any) string { return string(ndjson(t, firstLine(code, nil, extra))) }
	text := func(s string) func() io.Reader { return func() io.Reader { return strings.NewReader(s) } }
	cases := []struct {
		name        string
		id          string
		contentType string
		body        func() io.Reader
		status      int
		contains    string
	}{
		{"not JSON", id, ndjsonType, text("{this is not JSON\n"), http.StatusBadRequest, "Invalid JSON chunk"},
		{"not an object", id, ndjsonType, text("[1, 2]\n"), http.StatusBadRequest, "Invalid "},
		{"no renderingRequest", id, ndjsonType, text(line(map[string]any{"renderingRequest": nil})), http.StatusBadRequest, "Invalid first incremental render request chunk"},
		{"empty body", id, ndjsonType, text(""), http.StatusBadRequest, "Invalid first incremental render request chunk"},
		{"no protocolVersion", id, ndjsonType, text(line(map[string]any{"protocolVersion": nil})), http.StatusPreconditionFailed, "Unsupported renderer protocol version MISSING"},
		{"wrong protocolVersion", id, ndjsonType, text(line(map[string]any{"protocolVersion": "1.0.0"})), http.StatusPreconditionFailed, "request protocol 1.0.0"},
		{"wrong password", id, ndjsonType, text(line(map[string]any{"password": "not-the-password"})), http.StatusUnauthorized, "Wrong password"},
		{"no password", id, ndjsonType, text(line(map[string]any{"password": nil})), http.StatusUnauthorized, "Wrong password"},
		{"bundle not uploaded", newID("s"), ndjsonType, text(line(nil)), http.StatusGone, "No bundle uploaded"},
		{"dependency not uploaded", id, ndjsonType, text(string(ndjson(t, firstLine(code, []string{newID("r")}, nil)))), http.StatusGone, "No bundle uploaded"},
		{"line 1 over 10 MiB", id, ndjsonType, func() io.Reader {
			return io.MultiReader(strings.NewReader(`{"renderingRequest":"`), &repeatReader{c: ' ', n: maxField}, strings.NewReader(`x"}`+"\n"))
		}, http.StatusRequestEntityTooLarge, ""},
		{"JSON content type", id, "application/json", text(line(nil)), http.StatusUnsupportedMediaType, ""},
		{"no content type", id, "", text(line(nil)), http.StatusUnsupportedMediaType, ""},
	}
	eachTransport(t, func(t *testing.T, tr transport) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := s.post(t, tr, incrementalPath(c.id), c.contentType, c.body(), nil)
				r.wantStatus(t, tr, c.status)
				r.wantNoCacheText(t)
				r.wantContentLength(t)
				if !strings.Contains(r.Body, c.contains) {
					t.Errorf("body does not contain %q: %s", c.contains, clip(r.Body))
				}
			})
		}
	})
}

// TestIncrementalEarlyAnswer: an answer decided before anything streams
// (a line-1 rejection, a missing bundle, a render that fails or returns no
// stream) comes while the client still holds the request body open, as a
// streaming client does: in pull mode it sends nothing until asked. It must
// not wait for the body's end, nor for the 20 s line timeout.
func TestIncrementalEarlyAnswer(t *testing.T) {
	t.Parallel()
	s, id := asyncPropsServer(t)
	missing := newID("s")
	eachTransport(t, func(t *testing.T, tr transport) {
		for _, c := range []struct {
			name   string
			id     string
			first  any
			status int
			body   string
		}{
			{"bundle not uploaded", missing, asyncPropsFirst(t, missing, nil), http.StatusGone, "No bundle uploaded"},
			{"wrong password", id, asyncPropsFirst(t, id, map[string]any{"password": "nope"}), http.StatusUnauthorized, "Wrong password"},
			{"not JSON", id, "{not JSON", http.StatusBadRequest, "Invalid JSON chunk"},
			{"render throws", id, firstLine("throw new Error('line 1 fails')", nil, nil), http.StatusBadRequest, "JS code for rendering request was:"},
			{"render returns null", id, firstLine("null", nil, nil), http.StatusBadRequest, "INVALID NIL or NULL result for rendering"},
			{"render returns a string", id, firstLine("'<p>not a stream</p>'", nil, nil), http.StatusOK, "<p>not a stream</p>"},
		} {
			t.Run(c.name, func(t *testing.T) {
				started := time.Now()
				inc := s.startIncremental(t, tr, c.id, c.first)
				if d := time.Since(started); d > 5*time.Second {
					t.Errorf("answered %s after line 1, while the body stayed open", d)
				}
				if inc.resp.StatusCode != c.status {
					t.Errorf("status %d, want %d", inc.resp.StatusCode, c.status)
				}
				select {
				case <-inc.ended:
				case <-time.After(30 * time.Second):
					t.Fatalf("the answer's body did not end while the request body stayed open")
				}
				body, _ := inc.finish()
				if !strings.Contains(body, c.body) {
					t.Errorf("body does not contain %q: %s", c.body, clip(body))
				}
			})
		}
	})
}

// asyncPropsFrame is a frame as the async-props fixture writes it.
func asyncPropsFrame(content string) string {
	return fmt.Sprintf("{\"consoleReplayScript\":\"\",\"hasErrors\":false,\"isShellReady\":true}\t%08x\n%s", len(content), content)
}

// TestIncrementalEndsWhileBodyOpen: when the bundle ends its stream by
// itself (every expected prop delivered) the answer ends at once, while
// the client still holds the request body open (PROTOCOL.md §8).
func TestIncrementalEndsWhileBodyOpen(t *testing.T) {
	t.Parallel()
	s, id := asyncPropsServer(t)
	want := golden(t, "async-props-update-2") +
		asyncPropsFrame(`<template data-async-prop="recommendations"><pre>42</pre></template>`)
	eachTransport(t, func(t *testing.T, tr transport) {
		for range 3 {
			inc := s.startIncremental(t, tr, id, asyncPropsFirst(t, id, nil))
			inc.wantStreamHeaders(t, tr)
			inc.send(updateLine(id, request(t, "async-props-update-1")))
			inc.send(updateLine(id, request(t, "async-props-update-2")))
			sent := time.Now()
			inc.send(updateLine(id, `AsyncPropsApp.deliver("recommendations", 42)`))
			select {
			case <-inc.ended:
			case <-time.After(10 * time.Second):
				t.Fatalf("the answer did not end within 10 s of the last prop while the body stayed open; so far: %s", clip(inc.bytesSoFar()))
			}
			t.Logf("ended %s after the last prop", time.Since(sent))
			body, err := inc.finish()
			if err != nil {
				t.Errorf("the answer did not end cleanly: %v", err)
			}
			if body != want {
				t.Errorf("answer:\n got %s\nwant %s", clip(body), clip(want))
			}
		}
	})
}

// depEntryBundle is an entry bundle for TestIncrementalDependency: its
// stream writes what update chunks put into sharedExecutionContext.
const depEntryBundle = `'use strict';
var PassThrough = require('stream').PassThrough;
function out() { return sharedExecutionContext.get('depEntry.out'); }
globalThis.DepEntry = {
  render: function () {
    var stream = new PassThrough();
    sharedExecutionContext.set('depEntry.out', stream);
    stream.write('shell\n');
    return stream;
  },
  emit: function (key) { out().write(key + '=' + sharedExecutionContext.get(key) + '\n'); },
  increment: function (depId) { out().write('increment=' + runOnOtherBundle(depId, 'RscStub.increment()') + '\n'); },
  end: function () { out().end('end\n'); },
  // waitFor writes key's value once the shared context has one, looking
  // every millisecond.
  waitFor: function (key) {
    (function look() {
      var v = sharedExecutionContext.get(key);
      if (v === undefined) setTimeout(look, 1);
      else out().write(key + '=' + v + '\n');
    })();
  },
};
`

// TestIncrementalDependency: an update chunk naming a dependency bundle runs
// in that bundle's runtime (RscStub exists only there) with the request's
// sharedExecutionContext, whose value the entry's stream then writes; the
// same code naming the entry fails there and is skipped; an update chunk
// in the entry can call runOnOtherBundle (PROTOCOL.md §7, §8).
func TestIncrementalDependency(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true", "RENDERER_WORKERS_COUNT": "2"})
	entry, dep := newID("s"), newID("r")
	s.upload(t, map[string]string{entry: depEntryBundle, dep: rscStub(t)}, nil)
	eachTransport(t, func(t *testing.T, tr transport) {
		inc := s.startIncremental(t, tr, entry, firstLine("DepEntry.render()", []string{dep}, map[string]any{
			"onRequestClosedUpdateChunk": updateLine(entry, "DepEntry.end()"),
		}))
		inc.wantStreamHeaders(t, tr)
		want := "shell\n"
		inc.waitFor(want)

		inc.send(updateLine(dep, `sharedExecutionContext.set('fromDep', RscStub.payload('Dep')); sharedExecutionContext.set('depSeesEntry', typeof DepEntry)`))
		inc.send(updateLine(entry, `DepEntry.emit('fromDep'); DepEntry.emit('depSeesEntry')`))
		want += `fromDep={"component":"Dep","from":"rsc-stub"}` + "\n" + "depSeesEntry=undefined\n"
		inc.waitFor(want)

		// RscStub does not exist in the entry: this chunk throws there and is skipped.
		inc.send(updateLine(entry, `sharedExecutionContext.set('fromDep', RscStub.payload('Entry'))`))
		inc.send(updateLine(entry, `DepEntry.emit('fromDep')`))
		want += `fromDep={"component":"Dep","from":"rsc-stub"}` + "\n"
		inc.waitFor(want)

		inc.send(updateLine(entry, fmt.Sprintf(`DepEntry.increment(%q)`, dep)))
		body, err := inc.finish()
		if err != nil {
			t.Errorf("the answer did not end cleanly: %v", err)
		}
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(want) + `increment=[0-9]+\nend\n$`).MatchString(body) {
			t.Errorf("answer %s, want %s + increment=<n>, end", clip(body), clip(want))
		}
	})
}

// timersDepBundle is a dependency bundle whose functions, called from
// update chunks, leave work in its event loop.
const timersDepBundle = `'use strict';
globalThis.DepTimers = {
  // later sets key in the shared context from a timer of this bundle.
  later: function (key) { setTimeout(function () { sharedExecutionContext.set(key, 'set by a timer'); }, 1); },
  // tick counts in this bundle's global state every millisecond.
  tick: function () { setInterval(function () { globalThis.ticks = (globalThis.ticks || 0) + 1; }, 1); },
};
`

// TestIncrementalDependencyTimers: what an update chunk sets going in a
// dependency bundle is part of the render, as on Node where every bundle
// shares one event loop (PROTOCOL.md §8; docs/compatibility.md "Streams across bundles",
// the incremental route): the dependency's timers run while the answer streams (the
// entry's stream waits for a value a timer of the dependency sets), and
// stop when the render ends (an interval the dependency left running
// ticks in no later render of that bundle). On goja and quickjs the
// dependency's timers used to wait unrun (the answer was cut at its idle
// window) and then ran in the next render its runtime served.
func TestIncrementalDependencyTimers(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true", "RENDERER_WORKERS_COUNT": "1", "RENDERER_STREAM_IDLE_TIMEOUT": "5s"})
	entry, dep := newID("s"), newID("r")
	s.upload(t, map[string]string{entry: depEntryBundle, dep: timersDepBundle}, nil)
	first := firstLine("DepEntry.render()", []string{dep}, map[string]any{
		"onRequestClosedUpdateChunk": updateLine(entry, "DepEntry.end()"),
	})
	// still checks that the dependency's ticks counter does not move
	// during a render of its own.
	still := func(t *testing.T, tr transport) {
		t.Helper()
		r := s.render(t, tr, dep, `new Promise(function (resolve) {
  var before = globalThis.ticks;
  setTimeout(function () { resolve(before === globalThis.ticks ? 'still' : 'ticked from ' + before + ' to ' + globalThis.ticks); }, 20);
})`)
		if r.Status != http.StatusOK || r.Body != "still" {
			t.Errorf("a later render of the dependency: %d %s, want 200 still: an interval of the incremental render ran in it", r.Status, clip(r.Body))
		}
	}
	// exchange is one incremental render: depChunk in the dependency, then
	// entryChunk in the entry, whose stream then writes line.
	exchange := func(t *testing.T, tr transport, depChunk, entryChunk, line string) {
		t.Helper()
		inc := s.startIncremental(t, tr, entry, first)
		inc.wantStreamHeaders(t, tr)
		inc.send(updateLine(dep, depChunk))
		inc.send(updateLine(entry, entryChunk))
		inc.waitFor("shell\n" + line)
		body, err := inc.finish()
		if err != nil || body != "shell\n"+line+"end\n" {
			t.Errorf("answer %s, %v", clip(body), err)
		}
	}
	eachTransport(t, func(t *testing.T, tr transport) {
		t.Run("interval stops with the render", func(t *testing.T) {
			exchange(t, tr, "DepTimers.tick()", "DepEntry.emit('none')", "none=undefined\n")
			still(t, tr)
		})
		t.Run("timer runs during the render", func(t *testing.T) {
			exchange(t, tr, "DepTimers.later('late')", "DepEntry.waitFor('late')", "late=set by a timer\n")
		})
	})
}

// TestIncrementalKeepsTheConnection: the connection of an incremental
// render serves the requests after it. Its update reader met the body's
// end, after which net/http reads ahead on an HTTP/1.1 connection for the
// next request; the handler used to move the read deadline to now when
// the render ended all the same, which failed that read ahead and
// cancelled the connection's context: every later request on the
// connection started cancelled and was answered 200 with no body.
func TestIncrementalKeepsTheConnection(t *testing.T) {
	t.Parallel()
	s, id := asyncPropsServer(t)
	body := string(ndjson(t, asyncPropsFirst(t, id, nil))) +
		string(ndjson(t, updateLine(id, request(t, "async-props-update-1")))) +
		string(ndjson(t, updateLine(id, request(t, "async-props-update-2"))))
	eachTransport(t, func(t *testing.T, tr transport) {
		// One connection, which every request below must reuse.
		client := gemclient.NewHTTPClient(tr.h2c)
		client.Transport.(*http.Transport).MaxConnsPerHost = 1
		defer client.CloseIdleConnections()
		var conns []string
		traced := func() context.Context {
			return httptrace.WithClientTrace(ctx(t), &httptrace.ClientTrace{
				GotConn: func(info httptrace.GotConnInfo) { conns = append(conns, info.Conn.LocalAddr().String()) },
			})
		}
		gem := s.gem(tr)
		gem.HTTP = client
		for i := range 3 {
			req, err := http.NewRequestWithContext(traced(), http.MethodPost, s.url+incrementalPath(id), strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", ndjsonType)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || string(got) != golden(t, "async-props-close") {
				t.Fatalf("incremental render %d: %d %s, %v", i, resp.StatusCode, clip(string(got)), err)
			}
			r := must(t)(gem.RenderRaw(traced(), gemclient.Render{BundleID: id, Code: "'after ' + " + strconv.Itoa(i)}))
			if r.Status != http.StatusOK || r.Body != "after "+strconv.Itoa(i) {
				t.Fatalf("the render after incremental render %d on its connection: %d %q %v", i, r.Status, clip(r.Body), r.Header)
			}
		}
		for _, c := range conns[1:] {
			if c != conns[0] {
				t.Fatalf("the requests went over more than one connection: %v", conns)
			}
		}
	})
}

// TestIncrementalHalfReadBodyClosesTheConnection: a render that ends while
// its request body is still arriving leaves the body's rest on an HTTP/1.1
// connection (its update reader is cut by a read deadline), so the
// connection closes after the answer: the rest is never read as a request,
// and no request after it starts cancelled. A client sending the rest and
// then another request on the connection was answered "400 Bad Request"
// before this.
func TestIncrementalHalfReadBodyClosesTheConnection(t *testing.T) {
	t.Parallel()
	s, id := asyncPropsServer(t)
	line1 := ndjson(t, firstLine("'<p>not a stream</p>'", nil, nil))
	rest := ndjson(t, updateLine(id, "1"))
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: gorender\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", incrementalPath(id), ndjsonType, len(line1)+len(rest))
	if _, err := conn.Write(append([]byte(head), line1...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(got) != "<p>not a stream</p>" {
		t.Fatalf("the render: %d %q, %v", resp.StatusCode, clip(string(got)), err)
	}
	// The body's rest, then another request; the writes may fail once the
	// server closed the connection.
	_, _ = conn.Write(append(rest, "GET /health HTTP/1.1\r\nHost: gorender\r\n\r\n"...))
	if resp, err := http.ReadResponse(br, nil); err == nil {
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("the connection served another request after a half-read body: %d %q", resp.StatusCode, clip(string(got)))
	}
}
