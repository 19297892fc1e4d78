package quickjsengine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
	"github.com/gorender/gorender/jsvm/inproc"
)

// lowered reports whether await was lowered in p.
func lowered(p jsvm.Program) bool { return p.(*inproc.Program).Code.(*program).lowered }

const bundle = `
var renders = 0;
function greet(name) { renders++; console.log('hi %s', name); return '<p>' + name + ' ' + renders + '</p>'; }
`

const raceSkip = "QuickJS is tested without -race (scripts/test.sh runs it): the race detector makes its translated C about 10× slower"

// A render that passes the runtime's memory limit fails like a timeout and
// retires its runtime, whether it grows step by step (stopped by the
// interrupt handler) or asks for one allocation past the limit (the engine
// refuses it), and whether or not the bundle catches the error.
func TestQuickJSMemoryLimit(t *testing.T) {
	const limit = 48 << 20
	e := conformance.Open(t, New, jsvm.Options{StubTimers: true, MemoryLimit: limit})
	for _, tc := range []struct {
		name, code string
		slow       bool // under the race detector
	}{
		{"grows", `var keep = []; for (;;) keep.push(new Array(10000).fill('x' + keep.length));`, true},
		{"grows and catches", `var keep = []; try { for (;;) keep.push(new Array(10000).fill('x' + keep.length)); } catch (e) { 'caught ' + e }`, true},
		{"one big allocation", `'x'.repeat(200 << 20)`, false},
		{"big allocation kept by a caught error", `globalThis.big = []; try { for (let i = 0; i < 1000; i++) big.push('y'.repeat(4 << 20) + i); } catch (e) {} 'survived'`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slow && conformance.RaceEnabled {
				t.Skip(raceSkip)
			}
			rt := conformance.NewLoaded(t, e, "b1", bundle)
			defer rt.Close()
			started := time.Now()
			res, err := rt.Eval(context.Background(), tc.code, jsvm.NewRequest(nil))
			var re *jsvm.RenderError
			if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout || !strings.Contains(re.Text, "memory limit of 48 MiB") {
				t.Fatalf("res %.80q, err = %v", res.Body, err)
			}
			if !rt.Broken() {
				t.Fatal("runtime not retired")
			}
			t.Logf("%s: failed after %v", tc.name, time.Since(started).Round(time.Millisecond))
		})
	}
	// A render within the limit is untouched, and so is its runtime.
	rt := conformance.NewLoaded(t, e, "b1", bundle)
	defer rt.Close()
	res, err := rt.Eval(context.Background(), `var a = []; for (let i = 0; i < 1000; i++) a.push('z'.repeat(10000)); String(a.length)`, jsvm.NewRequest(nil))
	if err != nil || res.Body != "1000" || rt.Broken() {
		t.Fatalf("%q %v broken=%v", res.Body, err, rt.Broken())
	}
	// A bundle too big for the limit fails to load.
	p, err := e.Compile("huge", "", `globalThis.huge = 'h'.repeat(100 << 20);`)
	if err != nil {
		t.Fatal(err)
	}
	huge, err := e.NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	defer huge.Close()
	if err := huge.Load(context.Background(), p); err == nil || !strings.Contains(err.Error(), "memory limit") {
		t.Fatalf("load: %v", err)
	}
}

// The deadline interrupts a catastrophic regex backtrack: QuickJS's regex
// engine polls the interrupt handler while it backtracks.
func TestQuickJSRegexBacktrackingIsInterrupted(t *testing.T) {
	rt := conformance.NewLoaded(t, conformance.Open(t, New, jsvm.Options{StubTimers: true}), "b1", bundle)
	defer rt.Close()
	const deadline = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	started := time.Now()
	_, err := rt.Eval(ctx, `String(/^(a+)+$/.test('a'.repeat(40) + 'b'))`, jsvm.NewRequest(nil))
	late := time.Since(started) - deadline
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout {
		t.Fatalf("err = %v", err)
	}
	if late > time.Second {
		t.Fatalf("the backtrack stopped %v after the deadline", late)
	}
	t.Logf("stopped %v after the deadline", late.Round(10*time.Microsecond))
}

// QuickJS parses and runs async functions, async generators, for await and
// the regex d flag natively: nativeAsync compiles without any lowering. The
// engine lowers await anyway by default, for the async context: natively,
// AsyncLocalStorage loses its store across await (the async-als golden
// reports LOST), because QuickJS resumes await without calling then and has
// no hook to carry the context.
func TestQuickJSRunsAsyncNatively(t *testing.T) {
	e := conformance.Open(t, New, jsvm.Options{SupportModules: true})
	e.nativeAsync = true
	src := `
async function* numbers(n) { for (let i = 1; i <= n; i++) { await null; yield i; } }
async function sum(n) { let s = 0; for await (const x of numbers(n)) s += x; return s; }
globalThis.run = async (n) => 'sum=' + (await sum(n)) + ' indices=' + JSON.stringify(/(?<word>b+)/d.exec('abbc').indices[0]) +
  ' ' + Object.prototype.toString.call(numbers) + ' ' + require('util').types.isAsyncFunction(sum);
`
	p, err := e.Compile("gen", "", src)
	if err != nil {
		t.Fatal(err)
	}
	if lowered(p) {
		t.Fatal("lowered")
	}
	rt := conformance.LoadProgram(t, e, p)
	if got := conformance.MustEval(t, rt, `run(4)`); got != "sum=10 indices=[1,3] [object AsyncGeneratorFunction] true" {
		t.Fatal(got)
	}
	if conformance.RaceEnabled || testing.Short() {
		return
	}
	// The whole async-app bundle compiles without lowering.
	if _, err := e.Compile("async-app", "", conformance.Testdata(t, "bundles", "async-app.js")); err != nil {
		t.Fatal(err)
	}
	rt = conformance.LoadFixture(t, e, "async-app")
	defer rt.Close()
	res, err := rt.Eval(context.Background(), conformance.Testdata(t, "requests", "async-als.js"), jsvm.NewRequest(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Body == conformance.Testdata(t, "golden", "async-als.html") {
		t.Fatal("natively run awaits kept the async context: lowering await is no longer needed")
	}
	if !strings.Contains(res.Body, "LOST") && !strings.Contains(res.Body, "cannot read property 'requestId' of undefined") {
		t.Fatalf("native awaits: %s", res.Body)
	}
}

// Lowered (the default), the same program keeps working, and functions
// without await stay native async functions.
func TestQuickJSLowersAwaitOnly(t *testing.T) {
	e := conformance.Open(t, New, jsvm.Options{SupportModules: true})
	p, err := e.Compile("gen", "", `
async function* numbers(n) { for (let i = 1; i <= n; i++) { await null; yield i; } }
globalThis.run = async (n) => { let s = 0; for await (const x of numbers(n)) s += x; return 'sum=' + s; };`)
	if err != nil {
		t.Fatal(err)
	}
	if !lowered(p) {
		t.Fatal("not lowered")
	}
	rt, _ := e.NewRuntime()
	defer rt.Close()
	if err := rt.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := conformance.MustEval(t, rt, `run(3)`); got != "sum=6" {
		t.Fatal(got)
	}
	p, err = e.Compile("plain", "", `globalThis.f = async () => 1;`)
	if err != nil {
		t.Fatal(err)
	}
	if lowered(p) {
		t.Fatal("a program without await was lowered")
	}
}

// Every render leaves the runtime's memory as it found it: 10,000 small
// renders of every kind (string, object, promise, timers, thrown and
// rejected errors, shared context across runtimes, runOnOtherBundle,
// streams, stub and real timers) and the QuickJS heap after 10,000 is what
// it was after 1,000. Nothing of a render is held from Go: a leaked
// JavaScript value would show here as objects and bytes that only grow.
func TestQuickJSRendersDoNotLeak(t *testing.T) {
	if conformance.RaceEnabled || testing.Short() {
		t.Skip("10,000 renders: run without -race and -short")
	}
	e := conformance.Open(t, New, jsvm.Options{SupportModules: true})
	entry := conformance.NewLoaded(t, e, "entry", bundle+`
var PassThrough = require('stream').PassThrough;
var cache = {};`).(*Runtime)
	other := conformance.NewLoaded(t, e, "other", `var n = 0; function payload(x) { n++; return {x: x, n: n}; }`).(*Runtime)
	defer entry.Close()
	defer other.Close()
	codes := []string{
		`greet('a')`,
		`({a: [1, 2, {b: 'c'}], s: 'x'.repeat(100)})`,
		`Promise.resolve('<p>' + Math.random() + '</p>')`,
		`(async () => { await null; console.log('async'); return 'awaited'; })()`,
		`new Promise((resolve) => setTimeout(() => resolve('timer'), 0))`,
		`new Promise((resolve) => setImmediate(() => process.nextTick(() => resolve('tick'))))`,
		`throw new Error('boom ' + Math.random())`,
		`Promise.reject(new TypeError('nope'))`,
		`sharedExecutionContext.set('k', {v: [1, 2]}); runOnOtherBundle('other', "sharedExecutionContext.set('o', payload('p')); JSON.stringify(sharedExecutionContext.get('k'))")`,
		`runOnOtherBundle('other', 'Promise.resolve(payload(1))').then((v) => JSON.stringify([v, sharedExecutionContext.get('o')]))`,
		`setTimeout(() => {}, 100000); setInterval(() => {}, 5); 'left timers behind'`,
		`var s = new PassThrough(); setTimeout(() => { s.write('a'); s.end('b'); }, 0); s`,
		`new TextDecoder().decode(new TextEncoder().encode('é😀' + Math.random()))`,
		`undefined`,
	}
	render := func(i int) {
		req := jsvm.NewRequest(map[string]jsvm.Runtime{"entry": entry, "other": other})
		req.Sink = &discardSink{}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := entry.Eval(ctx, codes[i%len(codes)], req)
		var re *jsvm.RenderError
		if err != nil && (!errors.As(err, &re) || re.Kind == jsvm.KindTimeout || re.Kind == jsvm.KindCanceled) {
			t.Fatalf("render %d: %v", i, err)
		}
	}
	usage := func() (qjsMemoryUsage, qjsMemoryUsage) {
		entry.vm.x.runGC()
		other.vm.x.runGC()
		return entry.vm.x.memoryUsage(), other.vm.x.memoryUsage()
	}
	for i := range 1000 {
		render(i)
	}
	e1, o1 := usage()
	for i := 1000; i < 10000; i++ {
		render(i)
	}
	e2, o2 := usage()
	if entry.Broken() || other.Broken() {
		t.Fatal("runtime broken")
	}
	t.Logf("entry after 1,000 renders: %+v", e1)
	t.Logf("entry after 10,000 renders: %+v", e2)
	t.Logf("other after 1,000 / 10,000: %d / %d bytes, %d / %d objects", o1.MallocSize, o2.MallocSize, o1.Objects, o2.Objects)
	for _, c := range []struct {
		name   string
		before qjsMemoryUsage
		after  qjsMemoryUsage
	}{{"entry", e1, e2}, {"other", o1, o2}} {
		// Bytes move with the allocator's block reuse: up to ~75 KB either
		// way between states with the same objects; a leak of one value per
		// render would be 9,000 objects here.
		if grew := c.after.MallocSize - c.before.MallocSize; grew > 128<<10 {
			t.Errorf("%s: the heap grew by %d bytes from render 1,000 to 10,000", c.name, grew)
		}
		if grew := c.after.Objects - c.before.Objects; grew > 16 {
			t.Errorf("%s: %d more objects after render 10,000 than after 1,000", c.name, grew)
		}
	}
}

type discardSink struct{}

func (discardSink) Start() error         { return nil }
func (discardSink) Write(p []byte) error { return nil }

// Closing runtimes gives their memory back: the process does not grow with
// runtimes made, loaded, used and closed.
func TestQuickJSCloseFreesTheRuntime(t *testing.T) {
	if conformance.RaceEnabled || testing.Short() {
		t.Skip("run without -race and -short")
	}
	e := conformance.Open(t, New, jsvm.Options{})
	p, err := e.Compile("b1", "", bundle)
	if err != nil {
		t.Fatal(err)
	}
	cycle := func() {
		rt, err := e.NewRuntime()
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.Load(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Eval(context.Background(), `new Promise((r) => setTimeout(() => r(greet('x')), 0))`, jsvm.NewRequest(nil)); err != nil {
			t.Fatal(err)
		}
		rt.Close()
	}
	for range 50 {
		cycle()
	}
	before := conformance.ProcessRSS()
	if before == 0 {
		t.Skip("no process RSS on this system")
	}
	for range 500 {
		cycle()
	}
	after := conformance.ProcessRSS()
	t.Logf("RSS after 50 runtimes %d MiB, after 550: %d MiB", before>>20, after>>20)
	if after-before > 64<<20 {
		t.Fatalf("RSS grew by %d MiB over 500 runtimes", (after-before)>>20)
	}
}

// The memory one loaded runtime keeps, as its engine counts it: sampled at
// the end of each load and render, readable from another goroutine while
// the runtime renders (metrics scrapes), 0 once closed.
func TestQuickJSMemoryUsage(t *testing.T) {
	e := conformance.Open(t, New, jsvm.Options{StubTimers: true})
	rt := conformance.NewLoaded(t, e, "b1", bundle).(*Runtime)
	defer rt.Close()
	loaded := rt.MemoryUsage()
	if loaded <= 0 || loaded > 64<<20 {
		t.Fatalf("memory usage %d after load", loaded)
	}

	done := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				_ = rt.MemoryUsage()
			}
		}
	})
	// Each render keeps an array of 2^17 values in a global (8 or 16 bytes
	// a value): 10 renders keep at least 10 MiB.
	const keep = "globalThis.kept = (globalThis.kept || []).concat([new Array(1 << 17).fill(0)]); 'ok'"
	for range 10 {
		if _, err := rt.Eval(context.Background(), keep, jsvm.NewRequest(nil)); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	readers.Wait()
	if grown := rt.MemoryUsage() - loaded; grown < 10<<20 {
		t.Errorf("memory usage grew by %d bytes over renders that keep 10 MiB", grown)
	}
	rt.Close()
	if n := rt.MemoryUsage(); n != 0 {
		t.Errorf("memory usage %d after Close, want 0", n)
	}
}
