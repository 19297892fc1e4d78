package conformance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gorender/gorender/jsvm"
)

// Streams across bundles from a hostile producer: what another bundle's
// stream does must not make the caller's render hold memory without bound.

// hostileProducerSrc is a producing bundle whose streams break the rules;
// each counts the chunks it made in pushed, and stops at 5000 (200000 empty
// ones) so that a failing test still ends; stopped() tells whether the last
// deaf or stutter stream was cancelled.
const hostileProducerSrc = `
var stream = require('stream');
globalThis.pushed = 0;
globalThis.stopped = function () { return false; };
// A PassThrough that emits its chunks itself, one per turn, whatever pause
// says.
globalThis.deaf = function () {
  var s = new stream.PassThrough();
  s.pause = function () { return s; };
  globalThis.stopped = function () { return s.destroyed; };
  (function next() {
    if (s.destroyed || pushed >= 5000) return;
    pushed++;
    s.emit('data', 'x'.repeat(4096));
    setImmediate(next);
  })();
  return s;
};
// A web stream whose reader answers every read twice.
globalThis.stutter = function () {
  return {
    getReader: function () {
      var cancelled = false;
      globalThis.stopped = function () { return cancelled; };
      return {
        read: function () {
          return {
            then: function (ok) {
              for (var i = 0; i < 2; i++) {
                setImmediate(function () {
                  if (cancelled || pushed >= 5000) return;
                  pushed++;
                  ok({ done: false, value: 'x'.repeat(4096) });
                });
              }
            },
          };
        },
        cancel: function () { cancelled = true; return Promise.resolve(); },
      };
    },
  };
};
// An object-mode Readable of empty strings, as fast as it is read.
globalThis.empties = function () {
  return new stream.Readable({
    objectMode: true,
    read: function () {
      if (pushed >= 200000) { this.push(null); return; }
      pushed++;
      this.push('');
    },
  });
};
// A string chunk made of three pieces of n characters each (QuickJS keeps
// such a string as a rope, flattened when it is copied out).
globalThis.big = function (n) {
  var s = 'x'.repeat(n) + 'y'.repeat(n) + 'z'.repeat(n);
  var r = new stream.Readable({ objectMode: true, read: function () {} });
  r.push(s);
  r.push(null);
  return r;
};
// A stream that produces nothing until it is read; once read, one chunk.
globalThis.idle = function () {
  return new stream.Readable({ objectMode: true, read: function () { this.push('a'); this.push(null); } });
};
// Objects that look like streams and fail when used as one.
globalThis.getterThrows = function () {
  return { get pipe() { throw new Error('getter'); }, read: function () {} };
};
globalThis.lyingReader = function () { return { getReader: function () { return 42; } }; };
// Three chunks, then an error before anyone could read them.
globalThis.failFast = function () {
  var r = new stream.Readable({ objectMode: true, read: function () {} });
  r.push('a'); r.push('b'); r.push('c');
  setTimeout(function () { r.destroy(new Error('boom')); }, 1);
  return r;
};
// Bytes split inside a character: é is c3 a9.
globalThis.split = function () {
  var r = new stream.Readable({ read: function () {} });
  r.push(Buffer.from([0x61, 0xc3]));
  setTimeout(function () { r.push(Buffer.from([0xa9, 0x62])); r.push(null); }, 1);
  return r;
};
`

func hostilePair(t *testing.T, engine string) (entry jsvm.Runtime, newReq func() *jsvm.Request) {
	e := NodeEngine(t, engine, jsvm.Options{})
	entry = NewLoaded(t, e, "entry", consumerSrc)
	rsc := NewLoaded(t, e, "rsc", hostileProducerSrc)
	return entry, func() *jsvm.Request {
		return jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "rsc": rsc})
	}
}

// testCrossStreamHostileProducer: a producer that goes on after it was
// paused fails the caller's stream (it would fill the memory between the
// runtimes); a producer of empty chunks is paused like one of bytes; byte
// chunks stay bytes, a character split between them too.
func testCrossStreamHostileProducer(t *testing.T, engine string) {
	const ignored = "runOnOtherBundle: the other bundle's stream failed: the stream produced a chunk while paused (it ignores back-pressure)"
	// The caller reads nothing until the producer's stream was cancelled
	// (the pump failed it) or pushed 1,000 chunks, then reads to the end.
	// Not a time, nor a count that stopped changing: a slow machine (quickjs
	// under the race detector, under load) could see two looks without a
	// chunk between them, and the caller then read the stream as fast as
	// it came, never paused it, and waited on a stream that never ends. The
	// error may come before it reads (node) or after the chunks queued in
	// Go.
	late := `var s = runOnOtherBundle('rsc', '%s');
		%s
		new Promise((r) => {
			(function look() {
				if (runOnOtherBundle('rsc', 'stopped()') || runOnOtherBundle('rsc', 'pushed') >= 1000) r(); else setTimeout(look, 10);
			})();
		}).then(() => {
			var n = runOnOtherBundle('rsc', 'pushed');
			if (n >= 1000) return 'not failed after ' + n + ' chunks';
			%s
			return failed.then((m) => m + '|' + (n < 1000));
		})`
	readable := []any{"deaf()",
		"var failed = new Promise((resolve) => { s.on('error', (e) => resolve(e.message)); s.on('end', () => resolve('ended')); });",
		"s.resume();"}
	web := []any{"stutter()",
		"var reader = s.getReader(); var failed = reader.closed.then(() => 'ended', (e) => e.message);",
		"(function drain() { reader.read().then((r) => { if (!r.done) drain(); }, () => {}); })();"}
	for _, c := range []struct{ name, code, want string }{
		{"ignores pause", fmt.Sprintf(late, readable...), ignored + "|true"},
		{"a reader answering twice", fmt.Sprintf(late, web...), ignored + "|true"},
		{"empty chunks", `runOnOtherBundle('rsc', 'empties()');
			new Promise((r) => setTimeout(r, 50)).then(() => String(runOnOtherBundle('rsc', 'pushed') < 5000))`, "true"},
		// As a Node stream's destroy does, the error drops the chunks the
		// caller's stream held unread: read once it failed, in the turns
		// after, it yields none.
		{"error before the chunks were read", `var s = runOnOtherBundle('rsc', 'failFast()');
			new Promise((resolve) => s.on('error', (e) => {
				var got = [];
				s.on('data', (c) => got.push(c));
				setTimeout(() => setImmediate(() => resolve(got.length + '|' + e.message)), 0);
			}))`, "0|runOnOtherBundle: the other bundle's stream failed: boom"},
		{"bytes split inside a character", `runOnOtherBundle('rsc', 'split()').toArray().then((a) =>
			a.map((b) => (Buffer.isBuffer(b) ? b.toString('hex') : typeof b)).join(',') + '|' + Buffer.concat(a).toString())`, "61c3,a962|aéb"},
	} {
		t.Run(c.name, func(t *testing.T) {
			entry, newReq := hostilePair(t, engine)
			got, err := evalCross(t, entry, newReq(), c.code)
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, c.want)
			}
		})
	}
}

// testCrossStreamChunkTooLarge: a chunk whose copy does not fit the
// producer's memory (quickjs, 64 MiB here) fails the caller's stream; it
// never arrives altered (it arrived as the text "undefined"). The other
// engines carry it whole.
func testCrossStreamChunkTooLarge(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{MemoryLimit: 64 << 20})
	entry := NewLoaded(t, e, "entry", consumerSrc)
	rsc := NewLoaded(t, e, "rsc", hostileProducerSrc)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "rsc": rsc})
	got, err := evalCross(t, entry, req, `runOnOtherBundle('rsc', 'big(12 << 20)').toArray().then(
		(a) => a.map((s) => s.length + ' ' + s[0] + s[12 << 20] + s[(36 << 20) - 1]).join(),
		(e) => e.message)`)
	want := "37748736 xyz"
	if engine == "quickjs" {
		// The error is QuickJS's own or the host's, whichever allocation
		// failed first.
		want = "runOnOtherBundle: the other bundle's stream failed: out of memory"
		got = strings.Replace(got, "a host function's argument could not be read: InternalError: ", "", 1)
	}
	if err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	if entry.Broken() || rsc.Broken() {
		t.Fatal("a runtime was retired")
	}
}

// testCrossStreamCount: a bundle's render receives at most
// jsvm.MaxCrossingStreams streams at once (each may hold 64 KiB between
// the runtimes); one read to its end makes room, and the next render
// starts with none.
func testCrossStreamCount(t *testing.T, engine string) {
	entry, newReq := hostilePair(t, engine)
	code := fmt.Sprintf(`var list = [];
		var refused = 'none';
		try {
			while (list.length < %d) list.push(runOnOtherBundle('rsc', 'idle()'));
		} catch (e) {
			refused = list.length + ' ' + e.name + ': ' + e.message;
		}
		list[0].toArray().then((a) => {
			var again = runOnOtherBundle('rsc', 'idle()');
			return again.toArray();
		}).then((a) => refused + '|' + a.join())`, jsvm.MaxCrossingStreams+1)
	want := fmt.Sprintf("%d TypeError: %s|a", jsvm.MaxCrossingStreams, jsvm.CrossingStreamsText)
	for i := 0; i < 2; i++ {
		got, err := evalCross(t, entry, newReq(), code)
		if err != nil || got != want {
			t.Fatalf("render %d: got %q, %v\nwant %q", i, got, err, want)
		}
	}
}

// testCrossStreamHostileObject: an object that looks like a stream and
// fails when used as one is an error of the caller's own realm, prefixed
// as any error crossing runOnOtherBundle, directly or behind a promise.
func testCrossStreamHostileObject(t *testing.T, engine string) {
	entry, newReq := hostilePair(t, engine)
	show := `(e) => (e instanceof Error) + ' ' + e.name + ': ' + (e.message.startsWith('runOnOtherBundle: ') ? e.message : 'unprefixed ' + e.message)`
	for _, c := range []struct{ name, code, want string }{
		{"getter throws", `try { runOnOtherBundle('rsc', 'getterThrows()'); 'crossed' } catch (e) { (` + show + `)(e) }`,
			"true Error: runOnOtherBundle: getter"},
		{"getter throws behind a promise", `runOnOtherBundle('rsc', 'Promise.resolve(getterThrows())').then(() => 'crossed', ` + show + `)`,
			"true Error: runOnOtherBundle: getter"},
		// The message after the prefix is the engine's own TypeError's.
		{"lying reader", `try { runOnOtherBundle('rsc', 'lyingReader()'); 'crossed' } catch (e) { (` + show + `)(e).split(':', 2).join(':') }`,
			"true TypeError: runOnOtherBundle"},
		{"lying reader behind a promise", `runOnOtherBundle('rsc', 'Promise.resolve(lyingReader())').then(() => 'crossed', (e) => (` + show + `)(e).split(':', 2).join(':'))`,
			"true Error: runOnOtherBundle"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := evalCross(t, entry, newReq(), c.code)
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, c.want)
			}
		})
	}
}

// testCrossStreamChunkPastMaxAllocation: on goja and quickjs a text chunk
// is copied into Go, which RENDERER_MAX_ALLOCATION bounds (1 MiB here): a
// longer one fails the caller's stream with the RangeError's message; the
// node engine, which bounds its processes' memory instead, carries it.
func testCrossStreamChunkPastMaxAllocation(t *testing.T, engine string) {
	e := NodeEngine(t, engine, jsvm.Options{MaxAllocation: 1 << 20})
	entry := NewLoaded(t, e, "entry", consumerSrc)
	rsc := NewLoaded(t, e, "rsc", hostileProducerSrc)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "rsc": rsc})
	got, err := evalCross(t, entry, req, `runOnOtherBundle('rsc', 'big(1 << 20)').toArray().then(
		(a) => a.map((s) => s.length).join(), (e) => e.message)`)
	want := "runOnOtherBundle: the other bundle's stream failed: runOnOtherBundle stream chunk: 3145728 bytes are more than the 1048576 bytes one allocation may take (RENDERER_MAX_ALLOCATION)"
	if engine == "node" {
		want = "3145728"
	}
	if err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
}
