package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// Streams across bundles (docs/compatibility.md "Streams across bundles"): a stream that
// runOnOtherBundle returns reaches the caller as a stream of the caller's
// own environment, with the same chunks in order, as they are produced.

// producerSrc is the producing bundle: streams of every kind, on timers.
const producerSrc = `
var stream = require('stream');
globalThis.ticks = 0;
globalThis.closed = 0;
// An object-mode Readable: strings and Buffers, one per timer.
globalThis.mixed = function (ms) {
  var r = new stream.Readable({ objectMode: true, read: function () {} });
  var items = ['a', Buffer.from('bé'), 'c'];
  var i = 0;
  (function next() {
    if (i === items.length) { r.push(null); return; }
    r.push(items[i++]);
    setTimeout(next, ms);
  })();
  return r;
};
// An object-mode Readable of the strings of list.
globalThis.strings = function (list) {
  var r = new stream.Readable({ objectMode: true, read: function () {} });
  list.forEach(function (s) { r.push(s); });
  r.push(null);
  return r;
};
// A PassThrough written strings: it emits them as Buffers.
globalThis.pass = function () {
  var s = new stream.PassThrough();
  s.write('p1');
  setTimeout(function () { s.end('p2'); }, 5);
  return s;
};
globalThis.web = function () {
  return new ReadableStream({
    start: function (c) {
      c.enqueue('x');
      c.enqueue(new TextEncoder().encode('y'));
      setTimeout(function () { c.enqueue('z'); c.close(); }, 5);
    },
  });
};
globalThis.failing = function () {
  var r = new stream.Readable({ read: function () {} });
  r.push('one');
  setTimeout(function () { r.destroy(new Error('boom')); }, 5);
  return r;
};
globalThis.later = function () {
  return new Promise(function (resolve) { setTimeout(function () { resolve(mixed(1)); }, 5); });
};
// A stream that never ends: a chunk every 5 ms, counted in ticks.
globalThis.endless = function () {
  var s = new stream.PassThrough();
  var iv = setInterval(function () { ticks++; s.write('tick'); }, 5);
  s.on('close', function () { closed++; clearInterval(iv); });
  return s;
};
// A stream that produces as fast as it is read, forever.
globalThis.flood = function () {
  return new stream.Readable({ read: function () { this.push('x'.repeat(1024)); } });
};
// A stream whose last chunk waits for release(), which an update chunk
// calls once the first chunk reached the client.
globalThis.gated = function () {
  var s = new stream.PassThrough();
  s.write('first;');
  globalThis.release = function () { s.end('last'); };
  return s;
};
`

// consumerSrc is the calling bundle: it reads what crosses.
const consumerSrc = `
var stream = require('stream');
function show(c) {
  if (typeof c === 'string') return 's:' + c;
  if (Buffer.isBuffer(c)) return 'b:' + c.toString();
  if (c instanceof Uint8Array) return 'u:' + new TextDecoder().decode(c);
  return 'other:' + typeof c;
}
globalThis.own = function () {
  var s = new stream.PassThrough();
  s.end('own');
  return s;
};
globalThis.collect = function (s) {
  return new Promise(function (resolve) {
    var out = [];
    var head = (s instanceof stream.Readable ? 'Readable' : 'not a Readable') + '|';
    s.on('data', function (c) { out.push(show(c)); });
    s.on('end', function () { resolve(head + out.join(',')); });
    s.on('error', function (e) { resolve(head + out.join(',') + '|' + e.message); });
  });
};
globalThis.collectWeb = function (s) {
  var head = (s instanceof ReadableStream ? 'ReadableStream' : 'not a ReadableStream') + '|';
  var reader = s.getReader();
  var out = [];
  function step() {
    return reader.read().then(function (r) {
      if (r.done) return head + out.join(',');
      out.push(show(r.value));
      return step();
    });
  }
  return step();
};
`

// crossingPair loads the two bundles into runtimes of one engine with the
// Node environment and returns a request over both.
func crossingPair(t *testing.T, engine string) (entry, rsc jsvm.Runtime, newReq func() *jsvm.Request) {
	e := NodeEngine(t, engine, jsvm.Options{})
	entry = NewLoaded(t, e, "entry", consumerSrc)
	rsc = NewLoaded(t, e, "rsc", producerSrc)
	return entry, rsc, func() *jsvm.Request {
		return jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "rsc": rsc})
	}
}

func evalCross(t *testing.T, rt jsvm.Runtime, req *jsvm.Request, code string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), evalBound)
	defer cancel()
	res, err := rt.Eval(ctx, code, req)
	return res.Body, err
}

func testStreamsCrossBundles(t *testing.T, engine string) {
	entry, rsc, newReq := crossingPair(t, engine)
	for _, c := range []struct{ name, code, want string }{
		{"object-mode Readable", `collect(runOnOtherBundle('rsc', 'mixed(5)'))`, "Readable|s:a,b:bé,s:c"},
		{"PassThrough", `collect(runOnOtherBundle('rsc', 'pass()'))`, "Readable|b:p1,b:p2"},
		{"web ReadableStream", `collectWeb(runOnOtherBundle('rsc', 'web()'))`, "ReadableStream|s:x,u:y,s:z"},
		{"behind a promise", `runOnOtherBundle('rsc', 'later()').then(collect)`, "Readable|s:a,b:bé,s:c"},
		{"text as UTF-8", `runOnOtherBundle('rsc', "strings(['x\\ud800y', '', 'é'])").toArray().then((a) => JSON.stringify(a.map((s) => [...s].map((c) => c.charCodeAt(0)))))`,
			"[[120,65533,121],[],[233]]"},
		{"error", `collect(runOnOtherBundle('rsc', 'failing()'))`, "Readable|b:one|runOnOtherBundle: the other bundle's stream failed: boom"},
		{"two at once", `Promise.all([collect(runOnOtherBundle('rsc', 'mixed(3)')), collectWeb(runOnOtherBundle('rsc', 'web()'))]).then(a => a.join(' & '))`,
			"Readable|s:a,b:bé,s:c & ReadableStream|s:x,u:y,s:z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := evalCross(t, entry, newReq(), c.code)
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, c.want)
			}
		})
	}
	// A stream cannot cross back to a bundle whose own code waits on the
	// call that returns it: that bundle's loop cannot be driven by one it
	// waits on.
	got, err := evalCross(t, entry, newReq(), `runOnOtherBundle('rsc', "try { runOnOtherBundle('entry', 'own()'); 'crossed' } catch (e) { e.name + ': ' + e.message }")`)
	want := "TypeError: runOnOtherBundle: a stream cannot cross from a bundle that is itself waiting on this call (a recursion through bundles)"
	if err != nil || got != want {
		t.Fatalf("crossing back: got %q, %v\nwant %q", got, err, want)
	}
	if entry.Broken() || rsc.Broken() {
		t.Fatal("a runtime was retired")
	}
}

// testCrossStreamFlowsAsProduced: a render that answers the stream another
// bundle returns streams its chunks as that bundle produces them: the last
// chunk waits for an update chunk the test sends only once the first one
// reached the client.
func testCrossStreamFlowsAsProduced(t *testing.T, engine string) {
	entry, _, newReq := crossingPair(t, engine)
	req := newReq()
	sink := NewRecordingSink()
	req.Sink = sink
	req.Updates = jsvm.NewUpdates()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), evalBound)
		defer cancel()
		res, err := entry.Eval(ctx, `runOnOtherBundle('rsc', 'gated()')`, req)
		if err == nil && !res.Streamed {
			err = errors.New("not streamed")
		}
		done <- err
	}()
	select {
	case <-sink.First():
	case err := <-done:
		t.Fatalf("ended before its first chunk: %v", err)
	case <-time.After(evalBound):
		t.Fatal("no first chunk")
	}
	if err := req.Updates.Push(jsvm.Update{BundleID: "rsc", Code: "release()"}); err != nil {
		t.Fatal(err)
	}
	req.Updates.Close(nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := sink.Body(); got != "first;last" {
		t.Fatalf("body %q", got)
	}
}

// testCrossStreamStopsWithTheRender: whatever ends the caller's render (its
// client leaving, the render answering without reading the stream) stops
// the other bundle's stream and its timers, and leaves both runtimes
// usable; a stream nobody reads is held back, not buffered without bound.
func testCrossStreamStopsWithTheRender(t *testing.T, engine string) {
	entry, rsc, newReq := crossingPair(t, engine)
	stopped := func(t *testing.T) { t.Helper(); crossStopped(t, entry, rsc, newReq) }
	t.Run("deadline", func(t *testing.T) {
		entry, rsc, newReq := crossingPair(t, engine)
		// The set renders once first: on the node engine its first render
		// starts a process of its own (its isolation group) and loads both
		// bundles there, which the 300 ms deadline may leave no room for on
		// a loaded machine; this is about a render that runs.
		if _, err := evalCross(t, entry, newReq(), `'warm'`); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		// The render waits for the end of a stream that never ends.
		_, err := entry.Eval(ctx, `collect(runOnOtherBundle('rsc', 'endless()'))`, newReq())
		var re *jsvm.RenderError
		if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout {
			t.Fatalf("err = %v", err)
		}
		// A runtime is retired when its JavaScript may have run at the
		// deadline (node: the process of a render at its deadline is
		// replaced): nothing of it runs again. One kept runs nothing of
		// the render either.
		if !entry.Broken() && !rsc.Broken() {
			crossStopped(t, entry, rsc, newReq)
		}
	})

	t.Run("client gone", func(t *testing.T) {
		req := newReq()
		sink := NewRecordingSink()
		sink.FailAt = 3
		req.Sink = sink
		_, err := evalCross(t, entry, req, `runOnOtherBundle('rsc', 'endless()')`)
		var re *jsvm.RenderError
		if !errors.As(err, &re) || re.Kind != jsvm.KindCanceled {
			t.Fatalf("err = %v", err)
		}
		stopped(t)
	})
	t.Run("request gone while waiting", func(t *testing.T) {
		// A pair of its own, as the deadline's: the cancel is meant for the
		// runtime asleep between the producer's chunks, but the producer's
		// timer may wake it between the look and the cancel (a loaded
		// machine widens that window), and a runtime interrupted while its
		// JavaScript runs is retired by design.
		entry, rsc, newReq := crossingPair(t, engine)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		sleeping := func() bool { return true }
		if sleeper, ok := entry.(Sleeper); ok {
			sleeping = sleeper.Sleeping
		}
		req := newReq()
		req.Sink = &cancellingSink{cancel: cancel, sleeping: sleeping}
		_, err := entry.Eval(ctx, `runOnOtherBundle('rsc', 'endless()')`, req)
		var re *jsvm.RenderError
		if !errors.As(err, &re) || re.Kind != jsvm.KindCanceled {
			t.Fatalf("err = %v", err)
		}
		if !entry.Broken() && !rsc.Broken() {
			crossStopped(t, entry, rsc, newReq)
		}
	})
	t.Run("never read", func(t *testing.T) {
		got, err := evalCross(t, entry, newReq(), `runOnOtherBundle('rsc', 'endless()'); 'answered'`)
		if err != nil || got != "answered" {
			t.Fatalf("%q %v", got, err)
		}
		stopped(t)
	})
	t.Run("never read, endless producer", func(t *testing.T) {
		// Without back-pressure the producer would fill the memory.
		got, err := evalCross(t, entry, newReq(), `var s = runOnOtherBundle('rsc', 'flood()');
			new Promise((r) => setTimeout(() => r('alive'), 50))`)
		if err != nil || got != "alive" {
			t.Fatalf("%q %v", got, err)
		}
		if entry.Broken() || rsc.Broken() {
			t.Fatal("a runtime was retired")
		}
	})
	t.Run("cancelled by the caller", func(t *testing.T) {
		got, err := evalCross(t, entry, newReq(), `var s = runOnOtherBundle('rsc', 'endless()');
			new Promise((r) => s.once('data', () => { s.destroy(); setTimeout(() => r('destroyed'), 20); }))`)
		if err != nil || got != "destroyed" {
			t.Fatalf("%q %v", got, err)
		}
		got, err = evalCross(t, entry, newReq(), `runOnOtherBundle('rsc', 'closed')`)
		if err != nil || got != "1" {
			t.Fatalf("producer's stream closed %q times, %v", got, err)
		}
		stopped(t)
	})
}

// testCrossStreamNeedsNodeEnvironment: without the Node environment there is
// no stream class to receive one into: a stream result is refused clearly.
func testCrossStreamNeedsNodeEnvironment(t *testing.T, engine string) {
	e := newEngine(t, engine)
	entry := NewLoaded(t, e, "entry", `var x = 1;`)
	rsc := NewLoaded(t, e, "rsc", `globalThis.fake = { pipe: function () {}, read: function () {} };`)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "rsc": rsc})
	got, err := evalCross(t, entry, req, `try { runOnOtherBundle('rsc', 'fake'); 'crossed' } catch (e) { e.name + ': ' + e.message }`)
	want := "TypeError: runOnOtherBundle: a stream result crosses bundles only in the Node-compatible environment (RENDERER_SUPPORT_MODULES)"
	if err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	// Behind a promise, the promise rejects.
	got, err = evalCross(t, entry, req, `runOnOtherBundle('rsc', 'Promise.resolve(fake)').then(() => 'crossed', (e) => e.name + ': ' + e.message)`)
	want = "Error: runOnOtherBundle: a stream result crosses bundles only in the Node-compatible environment (RENDERER_SUPPORT_MODULES)"
	if err != nil || got != want {
		t.Fatalf("behind a promise: got %q, %v\nwant %q", got, err, want)
	}
}

// crossStopped checks that nothing of the producer runs once the render
// ended: its interval was cancelled (ticks stays), its stream destroyed, and
// both runtimes serve renders.
func crossStopped(t *testing.T, entry, rsc jsvm.Runtime, newReq func() *jsvm.Request) {
	t.Helper()
	got, err := evalCross(t, entry, newReq(), `var before = runOnOtherBundle('rsc', 'ticks');
		new Promise((r) => setTimeout(r, 60)).then(() => (runOnOtherBundle('rsc', 'ticks') - before) + ' ' + runOnOtherBundle('rsc', 'closed > 0'))`)
	if err != nil || got != "0 true" {
		t.Fatalf("after the render: %q %v (ticks since, producer's stream closed)", got, err)
	}
	if entry.Broken() || rsc.Broken() {
		t.Fatal("a runtime was retired")
	}
	if _, err := evalCross(t, rsc, newReq(), `closed = 0; 'reset'`); err != nil {
		t.Fatal(err)
	}
}

// sharedProducerSrc adds to producerSrc one stream for the whole render,
// whoever asks for it (it lives in a global): its chunks come on a timer,
// after every caller could start reading.
const sharedProducerSrc = `
globalThis.shared = function () {
  if (!globalThis.sharedStream) {
    var r = new stream.Readable({ objectMode: true, read: function () {} });
    var i = 0;
    var iv = setInterval(function () {
      if (i === 3) { clearInterval(iv); r.push(null); return; }
      r.push('abc'[i++]);
    }, 3);
    globalThis.sharedStream = r;
  }
  return globalThis.sharedStream;
};
// The same for a stream of 300 chunks of 1 KiB, as fast as it is read.
globalThis.sharedBig = function () {
  if (!globalThis.sharedBigStream) {
    var n = 0;
    globalThis.sharedBigStream = new stream.Readable({ objectMode: true, read: function () {
      this.push(n++ < 300 ? 'x'.repeat(1024) : null);
    } });
  }
  return globalThis.sharedBigStream;
};
`

// testCrossStreamTwoConsumers: two readers of the third bundle's streams in
// one render. The render's entry holds a stream of rsc, then calls mid,
// whose code reads a stream of rsc itself: mid's promise settles, as in
// Node, while the entry waits on it (mid's loop runs rsc's timers; before,
// only the entry's did, and mid's promise never settled). A stream object
// handed out twice is one stream, as in Node: both readers see its chunks
// from when they start reading, and the entry's own stream read by two
// listeners gives each every chunk; a web stream has one reader, a second
// getReader throws.
func testCrossStreamTwoConsumers(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	for _, c := range []struct {
		name, code, want string
		stops            bool // mid stops an endless stream of rsc (crossStopped)
	}{
		{"another stream of the same bundle", `var s = runOnOtherBundle('rsc', 'mixed(3)');
			var r = runOnOtherBundle('mid', "collect(runOnOtherBundle('rsc', 'mixed(3)'))");
			Promise.all([collect(s), r]).then((a) => a.join(' & '))`,
			"Readable|s:a,b:bé,s:c & Readable|s:a,b:bé,s:c", false},
		// rsc goes back to the entry's loop when mid's part ends, and what
		// mid received stops then.
		{name: "an endless stream mid stops reading", code: `var s = runOnOtherBundle('rsc', 'mixed(3)');
			var r = runOnOtherBundle('mid', "new Promise((r) => runOnOtherBundle('rsc', 'endless()').once('data', (c) => r('mid: ' + c)))");
			Promise.all([collect(s), r]).then((a) => a.join(' & '))`,
			want: "Readable|s:a,b:bé,s:c & mid: tick", stops: true},
		{"the same stream object", `var s = runOnOtherBundle('rsc', 'shared()');
			var r = runOnOtherBundle('mid', "collect(runOnOtherBundle('rsc', 'shared()'))");
			Promise.all([collect(s), r]).then((a) => a.join(' & '))`,
			"Readable|s:a,s:b,s:c & Readable|s:a,s:b,s:c", false},
		{"the same stream object twice to the entry", `var s1 = runOnOtherBundle('rsc', 'shared()'), s2 = runOnOtherBundle('rsc', 'shared()');
			Promise.all([collect(s1), collect(s2)]).then((a) => a.join(' & '))`,
			"Readable|s:a,s:b,s:c & Readable|s:a,s:b,s:c", false},
		// One stream object read at once by one caller, late by the other:
		// it waits for the slower (Node's pipe to two destinations does),
		// rather than failing the slower's stream for a chunk while paused.
		// The later reader sees the chunks from when it started: all 300 on
		// node, where rsc's stream starts flowing once the entry's
		// synchronous code ended; on goja and quickjs rsc's promise jobs
		// run as each call into it returns, so it flowed into the first.
		{"the same stream object, one reader slower", `var count = (s) => new Promise((r) => {
				var n = 0;
				s.on('data', () => n++); s.on('end', () => r(n)); s.on('error', (e) => r(e.message));
			});
			var s1 = runOnOtherBundle('rsc', 'sharedBig()'), s2 = runOnOtherBundle('rsc', 'sharedBig()');
			var fast = count(s2);
			new Promise((r) => setTimeout(r, 100)).then(() => Promise.all([count(s1), fast]))
				.then(([slow, fast]) => slow + ' ' + (fast > 0 && fast <= 300))`,
			"300 true", false},
		{"two listeners of one stream", `var s = runOnOtherBundle('rsc', 'mixed(3)');
			Promise.all([collect(s), collect(s)]).then((a) => a.join(' & '))`,
			"Readable|s:a,b:bé,s:c & Readable|s:a,b:bé,s:c", false},
		{"two readers of one web stream", `var w = runOnOtherBundle('rsc', 'web()'); var first = collectWeb(w);
			try { w.getReader(); 'second reader' } catch (e) { first.then((f) => f + ' | ' + e.name) }`,
			"ReadableStream|s:x,u:y,s:z | TypeError", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Fresh runtimes: shared() keeps its stream in a global.
			entry := NewLoaded(t, e, "entry", consumerSrc)
			rsc := NewLoaded(t, e, "rsc", producerSrc+sharedProducerSrc)
			mid := NewLoaded(t, e, "mid", consumerSrc)
			newReq := func() *jsvm.Request {
				return jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "rsc": rsc, "mid": mid})
			}
			got, err := evalCross(t, entry, newReq(), c.code)
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, c.want)
			}
			if entry.Broken() || rsc.Broken() || mid.Broken() {
				t.Fatal("a runtime was retired")
			}
			if c.stops {
				crossStopped(t, entry, rsc, newReq)
			}
		})
	}
}

// testCrossStreamBackFromATimer: a timer callback of b, a bundle an
// earlier call left the timer in, calls c, which calls b for a stream: b's
// own code waits on the call, as when b's call code calls out, so the
// stream cannot cross back (docs/compatibility.md "Streams across bundles"), on every
// engine. On goja and quickjs the guard counted only the calls into b, not
// b's own calls out: the stream crossed, c's loop drove b's from within
// b's callback, so b's interval ticked inside it, and the stream's events
// never came (c's promise never settled); node let it cross too.
func testCrossStreamBackFromATimer(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	const back = "runOnOtherBundle: a stream cannot cross from a bundle that is itself waiting on this call (a recursion through bundles)"
	for _, c := range []struct{ name, code, want string }{
		{"caught in c", `try { runOnOtherBundle('b', 'ticking()'); 'crossed' } catch (e) { e.name + ': ' + e.message }`, "TypeError: " + back},
		{"read by c", `collect(runOnOtherBundle('b', 'ticking()'))`, "threw Error: " + back},
	} {
		t.Run(c.name, func(t *testing.T) {
			entry := NewLoaded(t, e, "entry", consumerSrc)
			b := NewLoaded(t, e, "b", consumerSrc+`
globalThis.inTimer = false;
globalThis.ticks = [];
globalThis.ticking = function () {
  var s = new stream.PassThrough();
  var n = 0;
  var iv = setInterval(function () {
    ticks.push(inTimer ? 'tick inside the timer' : 'tick');
    s.write('t' + n);
    if (++n === 3) { clearInterval(iv); s.end(); }
  }, 1);
  return s;
};
globalThis.later = function (code) {
  setTimeout(function () {
    inTimer = true;
    var r;
    try { r = runOnOtherBundle('c', code); } catch (e) { r = 'threw ' + e.name + ': ' + e.message; }
    inTimer = false;
    Promise.resolve(r).then(function (v) { sharedExecutionContext.set('back', [String(v)].concat(ticks).join(' | ')); });
  }, 1);
  return 'later';
};`)
			cb := NewLoaded(t, e, "c", consumerSrc)
			req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "b": b, "c": cb})
			// The entry looks for b's answer on its own timer: b's 1 ms
			// timer runs in the same turn as a look once due, so 200 looks
			// are plenty.
			got, err := evalCross(t, entry, req, `var called = runOnOtherBundle('b', 'later(' + JSON.stringify(`+jsString(c.code)+`) + ')');
new Promise(function (resolve) {
  var looks = 0;
  (function look() {
    var seen = sharedExecutionContext.get('back');
    if (seen !== undefined || ++looks === 200) resolve(called + ': ' + seen);
    else setTimeout(look, 1);
  })();
})`)
			if want := "later: " + c.want; err != nil || got != want {
				t.Fatalf("got %q, %v\nwant %q", got, err, want)
			}
			if entry.Broken() || b.Broken() || cb.Broken() {
				t.Fatal("a runtime was retired")
			}
		})
	}
}

// testRunOnOtherBundleTimersLastTheRender: the timers and immediates a
// runOnOtherBundle call sets in the other bundle keep running after the
// call returned, until the caller's render ends, as on Node (one event
// loop; a Node vm context's timers outlive a call into it): an RSC bundle
// may finish its work on a timer after handing its answer back. What the
// call's timers set reaches the caller (through sharedExecutionContext),
// also two calls deep (entry, mid, dep2), and what is still pending when
// the render ends is cancelled, not run in the other bundle's next render.
// On goja and quickjs they used to be cancelled when the call returned:
// the caller waited for nothing.
func testRunOnOtherBundleTimersLastTheRender(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	depSrc := `globalThis.later = function (key) { setTimeout(function () { sharedExecutionContext.set(key, 'timer'); }, 1); return 'later'; };
globalThis.soon = function (key) { setImmediate(function () { sharedExecutionContext.set(key, 'immediate'); }); return 'soon'; };
globalThis.tick = function () { setInterval(function () { globalThis.ticks = (globalThis.ticks || 0) + 1; }, 1); return 'tick'; };`
	entry := NewLoaded(t, e, "entry", `var x = 1;`)
	mid := NewLoaded(t, e, "mid", `var x = 1;`)
	dep := NewLoaded(t, e, "dep", depSrc)
	dep2 := NewLoaded(t, e, "dep2", depSrc)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "mid": mid, "dep": dep, "dep2": dep2})
	// The entry looks for the keys on its own timer: once due, the other
	// bundles' 1 ms timers run in the same turn as its look, so 200 looks
	// (200 ms at least) are plenty; without the fix no look ever finds them.
	got, err := evalCross(t, entry, req, `var calls = [runOnOtherBundle('dep', "tick(); soon('i'); later('k')"),
		runOnOtherBundle('mid', "runOnOtherBundle('dep2', \"later('m')\")")];
	new Promise(function (resolve) {
		var looks = 0;
		(function look() {
			var seen = ['k', 'i', 'm'].map(function (key) { return key + '=' + sharedExecutionContext.get(key); }).join(' ');
			if (seen.indexOf('undefined') < 0 || ++looks === 200) resolve(calls.join(',') + ' ' + seen);
			else setTimeout(look, 1);
		})();
	})`)
	if want := "later,later k=timer i=immediate m=timer"; err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	got = MustEval(t, dep, `new Promise(function (resolve) {
  var before = globalThis.ticks;
  setTimeout(function () { resolve(before === globalThis.ticks ? 'still' : 'ticked from ' + before + ' to ' + globalThis.ticks); }, 20);
})`)
	if got != "still" {
		t.Fatalf("dep's next render: %s; the interval of the last render ran in it", got)
	}
	if entry.Broken() || mid.Broken() || dep.Broken() || dep2.Broken() {
		t.Fatal("a runtime was retired")
	}
}

// testRunOnOtherBundleTwiceBeginsEachCall: two runOnOtherBundle calls of
// one render into the same bundle, one after the other, each run with its
// own request code and a console history of its own, as the first did,
// also when the first call left the bundle part of the render (a timer
// pending, a stream that crossed). What the first call left keeps running
// until the render ends (its timer sees the bundle's globals as they are
// then), and nothing of the render reaches the bundle's next render. On
// goja and quickjs the second call used to go on with the first call's
// renderingRequest and console history when the first left work pending.
func testRunOnOtherBundleTwiceBeginsEachCall(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{})
	entry := NewLoaded(t, e, "entry", `globalThis.wait = function (key, then) {
  return new Promise(function (resolve) {
    var looks = 0;
    (function look() {
      var seen = sharedExecutionContext.get(key);
      if (seen !== undefined || ++looks === 200) resolve(then(seen));
      else setTimeout(look, 1);
    })();
  });
};`)
	b := NewLoaded(t, e, "b", `var stream = require('stream');
globalThis.show = function () {
  return renderingRequest.slice(0, 9) + ' ' + console.history.map(function (h) { return h.arguments.join(' '); }).join(',');
};
globalThis.later = function () {
  setTimeout(function () { console.log('timer'); sharedExecutionContext.set('timer', renderingRequest.slice(0, 9)); }, 1);
};
globalThis.open = function () {
  var s = new stream.PassThrough();
  s.write('a');
  setTimeout(function () { s.end('b'); sharedExecutionContext.set('timer', renderingRequest.slice(0, 9)); }, 1);
  return s;
};`)
	for _, c := range []struct{ name, first string }{
		{"a timer pending", `"/*call1*/ later(); console.log('call 1'); show()"`},
		{"a stream crossed", `"/*call1*/ console.log('call 1'); open()"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "b": b})
			got, err := evalCross(t, entry, req, `var one = runOnOtherBundle('b', `+c.first+`);
var two = runOnOtherBundle('b', "/*call2*/ console.log('call 2'); show()");
Promise.resolve(typeof one === 'string' ? one : one.toArray().then(function (a) { return a.join(''); })).then(function (one) {
  return wait('timer', function (seen) {
    return [one, two, 'timer saw ' + seen, runOnOtherBundle('b', "/*call3*/ console.log('call 3'); show()")].join('\n');
  });
})`)
			want := "/*call1*/ [SERVER] call 1\n/*call2*/ [SERVER] call 2\ntimer saw /*call2*/\n/*call3*/ [SERVER] call 3"
			if c.name == "a stream crossed" {
				want = "ab" + want[strings.Index(want, "\n"):]
			}
			if err != nil || got != want {
				t.Fatalf("got %q, %v\nwant %q", got, err, want)
			}
			if got := MustEval(t, b, `/*next1*/ console.log('next'); show()`); got != "/*next1*/ [SERVER] next" {
				t.Fatalf("b's next render: %q", got)
			}
			if entry.Broken() || b.Broken() {
				t.Fatal("a runtime was retired")
			}
		})
	}
}

// testRunOnOtherBundleIntoAwaitingEntry: a bundle an earlier call left a
// timer in calls the render's entry back while the entry awaits: the call
// runs in the entry's render as it is (its renderingRequest, its console
// history), as a recursion through bundles does, on every engine. On node
// the entry used to be begun anew: its renderingRequest became the call's
// code and its console history the call's, losing the render's later logs.
func testRunOnOtherBundleIntoAwaitingEntry(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{ReplayAsyncLogs: true})
	show := `globalThis.show = function () {
  return renderingRequest.slice(0, 9) + ' ' + console.history.map(function (h) { return h.arguments.join(' '); }).join(',');
};`
	entry := NewLoaded(t, e, "entry", show)
	b := NewLoaded(t, e, "b", show)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "b": b})
	got, err := evalCross(t, entry, req, `/*entry1*/ console.log('entry');
runOnOtherBundle('b', "setTimeout(function () { sharedExecutionContext.set('back', runOnOtherBundle('entry', '/*back1*/ console.log(\"back\"); show()')); }, 1); 'x'");
new Promise(function (resolve) {
  var looks = 0;
  (function look() {
    var seen = sharedExecutionContext.get('back');
    if (seen !== undefined || ++looks === 200) { console.log('after'); resolve(seen + ' | ' + show()); }
    else setTimeout(look, 1);
  })();
})`)
	want := "/*entry1* [SERVER] entry,[SERVER] back | /*entry1* [SERVER] entry,[SERVER] back,[SERVER] after"
	if err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	if entry.Broken() || b.Broken() {
		t.Fatal("a runtime was retired")
	}
}
