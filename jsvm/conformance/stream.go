package conformance

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// RecordingSink is a streamed render's client for the engines' tests: it
// keeps the chunks, with their arrival times, and refuses them from chunk
// FailAt on (0: never), as a client that left.
type RecordingSink struct {
	FailAt  int
	mu      sync.Mutex
	started bool
	chunks  [][]byte
	at      []time.Time
	first   chan struct{}
}

// NewRecordingSink returns a sink that records every chunk.
func NewRecordingSink() *RecordingSink { return &RecordingSink{first: make(chan struct{})} }

// Start implements jsvm.Sink.
func (s *RecordingSink) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	return nil
}

// Write implements jsvm.Sink.
func (s *RecordingSink) Write(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FailAt > 0 && len(s.chunks)+1 >= s.FailAt {
		return errors.New("client gone")
	}
	s.chunks = append(s.chunks, bytes.Clone(p))
	s.at = append(s.at, time.Now())
	if len(s.chunks) == 1 {
		close(s.first)
	}
	return nil
}

// First is closed once the first chunk was taken.
func (s *RecordingSink) First() <-chan struct{} { return s.first }

// Body is what the sink took, in one string.
func (s *RecordingSink) Body() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(bytes.Join(s.chunks, nil))
}

func testStreamGoldens(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{ReplayAsyncLogs: true})
	rt := LoadFixture(t, e, "stream-app")
	for _, name := range []string{"stream-pipeable", "stream-web"} {
		t.Run(name, func(t *testing.T) {
			sink := NewRecordingSink()
			req := jsvm.NewRequest(map[string]jsvm.Runtime{"stream-app": rt})
			req.Sink = sink
			req.StreamIdle = 10 * time.Second
			started := time.Now()
			res, err := rt.Eval(context.Background(), Testdata(t, "requests", name+".js"), req)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Streamed || !sink.started {
				t.Fatalf("not streamed: %+v", res)
			}
			if got, want := sink.Body(), Testdata(t, "golden", name+".html"); got != want {
				t.Fatalf("bytes differ from Node's:\ngot  %q\nwant %q", got, want)
			}
			// The shell arrives before the late boundaries, which resolve on timers.
			if len(sink.chunks) < 2 {
				t.Fatalf("%d chunks: the stream was not incremental", len(sink.chunks))
			}
			// The late boundary's timer fires 50 ms after the render starts: a
			// last chunk sooner means the stream did not wait for it (load can
			// only delay it, so this bound cannot flake).
			if first, last := sink.at[0].Sub(started), sink.at[len(sink.at)-1].Sub(started); last < 40*time.Millisecond {
				t.Fatalf("shell at %v and last chunk at %v: late chunks did not wait for their timers", first, last)
			}
		})
	}
	if rt.Broken() {
		t.Fatal("runtime broken after streams")
	}
}

func testStreamClientGoneAbortsAndKeepsRuntime(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := LoadFixture(t, e, "stream-app")
	sink := NewRecordingSink()
	sink.FailAt = 2
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"stream-app": rt})
	req.Sink = sink
	_, err := rt.Eval(context.Background(), Testdata(t, "requests", "stream-pipeable.js"), req)
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindCanceled {
		t.Fatalf("err = %v", err)
	}
	// No timer of the aborted render fires in the next one.
	res, err := rt.Eval(context.Background(), `new Promise(r => setTimeout(() => r('next'), 200))`, jsvm.NewRequest(nil))
	if err != nil || res.Body != "next" {
		t.Fatalf("next render: %q %v", res.Body, err)
	}
}

// TestStreamRequestGoneWhileWaitingKeepsRuntime: the request's context ends
// while the stream waits for its next chunk (no JavaScript running): the render is answered as canceled, the engine is not
// interrupted, and the runtime serves the next render, with none of the
// aborted render's timers firing in it.
func testStreamRequestGoneWhileWaitingKeepsRuntime(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := NewLoaded(t, e, "stream-app", `globalThis.PassThrough = require('stream').PassThrough;`)
	defer rt.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// An engine that does not report when it sleeps (node: the render runs
	// in another process, which reads the cancel when its JavaScript yields)
	// is canceled right after the first chunk.
	sleeping := func() bool { return true }
	if sleeper, ok := rt.(Sleeper); ok {
		sleeping = sleeper.Sleeping
	}
	sink := &cancellingSink{cancel: cancel, sleeping: sleeping}
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"stream-app": rt})
	req.Sink = sink
	// The shell goes out at once; the rest would come a minute later.
	_, err := rt.Eval(ctx, `var s = new PassThrough(); s.write('<p>shell</p>'); setTimeout(() => s.end('late'), 60000); s`, req)
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindCanceled {
		t.Fatalf("err = %v", err)
	}
	if rt.Broken() {
		t.Fatal("the runtime was retired: the engine was interrupted although no JavaScript was running")
	}
	res, err := rt.Eval(context.Background(), `new Promise(r => setTimeout(() => r('next'), 200))`, jsvm.NewRequest(nil))
	if err != nil || res.Body != "next" {
		t.Fatalf("next render: %q %v", res.Body, err)
	}
}

// Sleeper is a runtime that reports whether it waits for work in its event
// loop with no JavaScript running (inproc.Runtime does): a context that ends
// then cancels the render without interrupting the engine.
type Sleeper interface{ Sleeping() bool }

// cancellingSink ends the request's context once the first chunk is out and
// the runtime's event loop sleeps, as an HTTP/2 client resetting its stream
// then does.
type cancellingSink struct {
	cancel   context.CancelFunc
	sleeping func() bool
	once     sync.Once
}

func (s *cancellingSink) Start() error { return nil }

func (s *cancellingSink) Write([]byte) error {
	s.once.Do(func() {
		go func() {
			for !s.sleeping() {
				time.Sleep(time.Millisecond)
			}
			s.cancel()
		}()
	})
	return nil
}

func testStreamIdleTimeout(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := NewLoaded(t, e, "streamer", `globalThis.PassThrough = require('stream').PassThrough;`)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"streamer": rt})
	req.Sink = NewRecordingSink()
	// A 1 s window: ten times the producing stream's gaps below, which a
	// loaded machine (node under -race) stretched past a 150 ms window.
	req.StreamIdle = time.Second
	code := `var s = new PassThrough(); s.write('first'); setTimeout(() => s.end('late'), 5000); s`
	_, err := rt.Eval(context.Background(), code, req)
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout || !strings.HasPrefix(re.Text, "Stream idle") {
		t.Fatalf("err = %v", err)
	}
	// A stream that keeps producing is never cut by the idle window, though
	// it lasts longer than the window (2.5 s).
	req.Sink = NewRecordingSink()
	code = `var s = new PassThrough(); var n = 0;
		var iv = setInterval(() => { s.write('tick' + n); if (++n === 25) { clearInterval(iv); s.end(); } }, 100); s`
	if res, err := rt.Eval(context.Background(), code, req); err != nil || !res.Streamed {
		t.Fatalf("producing stream cut: %v", err)
	}
}

func testStreamWithoutSinkIsAnError(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := LoadFixture(t, e, "stream-app")
	_, err := rt.Eval(context.Background(), Testdata(t, "requests", "stream-web.js"), jsvm.NewRequest(nil))
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindUnsupported {
		t.Fatalf("err = %v", err)
	}
}

func testIncrementalUpdatesGolden(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	rt := LoadFixture(t, e, "async-props")
	sink := NewRecordingSink()
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"async-props": rt})
	req.Sink = sink
	req.Updates = jsvm.NewUpdates()
	var failed []string
	req.Updates.Failed = func(up jsvm.Update, message string) { failed = append(failed, message) }
	done := make(chan error, 1)
	go func() {
		res, err := rt.Eval(context.Background(), Testdata(t, "requests", "async-props-initial.js"), req)
		if err == nil && !res.Streamed {
			err = errors.New("not streamed")
		}
		done <- err
	}()
	waitFor := func(golden string) {
		t.Helper()
		want := Testdata(t, "golden", golden)
		deadline := time.Now().Add(10 * time.Second)
		for sink.Body() != want {
			if time.Now().After(deadline) {
				t.Fatalf("after %s:\ngot  %q\nwant %q", golden, sink.Body(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("async-props-initial.html")
	for _, step := range []string{"async-props-update-1", "async-props-update-2"} {
		if err := req.Updates.Push(jsvm.Update{BundleID: "async-props", Code: Testdata(t, "requests", step+".js")}); err != nil {
			t.Fatal(err)
		}
		waitFor(step + ".html")
	}
	_ = req.Updates.Push(jsvm.Update{BundleID: "async-props", Code: "throw new Error('bad chunk')"})
	_ = req.Updates.Push(jsvm.Update{BundleID: "elsewhere", Code: "1"})
	req.Updates.Close(&jsvm.Update{BundleID: "async-props", Code: Testdata(t, "requests", "async-props-close.js")})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitFor("async-props-close.html")
	if len(failed) != 2 || !strings.Contains(failed[0], "bad chunk") || !strings.Contains(failed[1], "elsewhere") {
		t.Fatalf("failed chunks reported: %q", failed)
	}
}

// testStreamChunkPastMaxAllocation: a text chunk of the render's own stream
// is copied into Go on goja and quickjs, which RENDERER_MAX_ALLOCATION
// bounds (1 MiB here), as it bounds one crossing bundles: a longer one
// fails the stream with the RangeError's message, after the chunks before
// it, as any error of the stream does; the runtime serves the next render.
// The node engine, whose processes' memory is bounded instead
// (docs/node-engine.md "What confines bundle code"), sends it: Node's own bound on a string is V8's
// longest string, 2^29-24 UTF-16 code units.
func testStreamChunkPastMaxAllocation(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{MaxAllocation: 1 << 20})
	rt := NewLoaded(t, e, "streamer", `globalThis.Readable = require('stream').Readable;`)
	const code = `var s = new Readable({ objectMode: true, read() {} });
		s.push('first;');
		setTimeout(() => { s.push('x'.repeat(1 << 20) + 'y'.repeat(1 << 20) + 'z'.repeat(1 << 20)); s.push(null); }, 1);
		s`
	sink := NewRecordingSink()
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"streamer": rt})
	req.Sink = sink
	ctx, cancel := context.WithTimeout(context.Background(), evalBound)
	defer cancel()
	res, err := rt.Eval(ctx, code, req)
	if engine == "node" {
		if err != nil || !res.Streamed || len(sink.Body()) != len("first;")+3<<20 {
			t.Fatalf("node: streamed %v, %d bytes, %v; want the whole chunk", res.Streamed, len(sink.Body()), err)
		}
	} else {
		const want = "stream chunk: 3145728 bytes are more than the 1048576 bytes one allocation may take (RENDERER_MAX_ALLOCATION)"
		var re *jsvm.RenderError
		if !errors.As(err, &re) || re.Kind != jsvm.KindJS || !strings.Contains(re.Text, "EXCEPTION MESSAGE:\n"+want+"\n") {
			t.Fatalf("err = %v (streamed %v, %d bytes)\nwant a JavaScript error %q", err, res.Streamed, len(sink.Body()), want)
		}
		if got := sink.Body(); got != "first;" {
			t.Fatalf("sent %d bytes, want only the chunk before the error", len(got))
		}
	}
	if rt.Broken() {
		t.Fatal("the runtime was retired after its stream failed")
	}
	if got := MustEval(t, rt, `'next'`); got != "next" {
		t.Fatalf("next render: %q", got)
	}
}

// testIncrementalUpdateInOtherBundle: an update chunk that runs in a bundle
// other than the entry makes that bundle part of the render until it ends,
// as on Node, where the bundles share one event loop (PROTOCOL.md §8): the
// timers it set run while the render goes on (the entry's stream ends with
// what one of them set), and those still pending when it ends are
// cancelled, not run in that bundle's next render. On goja and quickjs
// they used to wait unrun, then run in the next render.
func testIncrementalUpdateInOtherBundle(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	entry := NewLoaded(t, e, "entry", `var PassThrough = require('stream').PassThrough;
var out;
globalThis.open = function () { out = new PassThrough(); out.write('shell;'); return out; };
globalThis.waitFor = function (key) {
  (function look() {
    var v = sharedExecutionContext.get(key);
    if (v === undefined) setTimeout(look, 1);
    else out.end(key + '=' + v);
  })();
};`)
	dep := NewLoaded(t, e, "dep", `globalThis.later = function (key) { setTimeout(function () { sharedExecutionContext.set(key, 'timer'); }, 1); };
globalThis.tick = function () { setInterval(function () { globalThis.ticks = (globalThis.ticks || 0) + 1; }, 1); };`)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "dep": dep})
	sink := NewRecordingSink()
	req.Sink = sink
	req.StreamIdle = 10 * time.Second // the unfixed engines' wait ends here
	req.Updates = jsvm.NewUpdates()
	for _, up := range []jsvm.Update{{BundleID: "dep", Code: "tick(); later('k')"}, {BundleID: "entry", Code: "waitFor('k')"}} {
		if err := req.Updates.Push(up); err != nil {
			t.Fatal(err)
		}
	}
	req.Updates.Close(nil)
	ctx, cancel := context.WithTimeout(context.Background(), evalBound)
	defer cancel()
	if res, err := entry.Eval(ctx, "open()", req); err != nil || !res.Streamed || sink.Body() != "shell;k=timer" {
		t.Fatalf("render: %+v, %v, body %q; want streamed shell;k=timer", res, err, sink.Body())
	}
	got := MustEval(t, dep, `new Promise(function (resolve) {
  var before = globalThis.ticks;
  setTimeout(function () { resolve(before === globalThis.ticks ? 'still' : 'ticked from ' + before + ' to ' + globalThis.ticks); }, 20);
})`)
	if got != "still" {
		t.Fatalf("the dependency's next render: %s; the interval of the last render ran in it", got)
	}
}
