package nodeengine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// The tests of pipelining (config.Depth): renders queued into a busy
// process when none is idle.

// sentTo is how many renders were written to the process of slot and have
// not answered (the first runs, the rest are queued in its executor).
func sentTo(e *Engine, slot int) int {
	e.mu.Lock()
	p := e.procs[slot]
	e.mu.Unlock()
	if p == nil {
		return 0
	}
	p.rmu.Lock()
	defer p.rmu.Unlock()
	return len(p.sent)
}

// queuedEval renders code on a fresh runtime of prg, with a host function
// "ran" that counts the render's runs; the answer (or the error's text)
// arrives on the channel.
type queuedEval struct {
	out  chan string
	runs atomic.Int32
}

func startEval(t *testing.T, ctx context.Context, rt jsvm.Runtime, code string) *queuedEval {
	q := &queuedEval{out: make(chan string, 1)}
	req := jsvm.NewRequest(nil)
	req.Shared.SetHost("ran", jsvm.HostFunc(func(...string) { q.runs.Add(1) }))
	go func() {
		res, err := rt.Eval(ctx, code, req)
		if err != nil {
			q.out <- "error: " + err.Error()
			return
		}
		q.out <- res.Body
	}()
	return q
}

func (q *queuedEval) answer(t *testing.T) string {
	t.Helper()
	select {
	case got := <-q.out:
		return got
	case <-time.After(60 * time.Second):
		t.Fatal("no answer in 60 s")
		return ""
	}
}

// holders is how many reservations the process of slot has.
func holders(e *Engine, slot int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.procs[slot]; p != nil {
		return p.holders
	}
	return 0
}

// TestQueuedRendersRunOneAtATime: with no process idle, renders queue in
// the busy one (their frames written while it runs another), and the
// executor runs them one after the other, in order, each once, each with
// its own timers and per-render globals.
func TestQueuedRendersRunOneAtATime(t *testing.T) {
	e, _ := newEngine(t, config{Depth: 4})
	prg, err := e.Compile("b", "", `var running = 0, order = [];`)
	if err != nil {
		t.Fatal(err)
	}
	render := func(name string, ms int) string {
		// A render that overlapped another would see running > 0; a
		// timer left by an earlier render would push into order late.
		return fmt.Sprintf(`(function () {
			sharedExecutionContext.get('ran')();
			if (running) throw new Error('overlap');
			running++;
			order.push(%[1]q);
			setTimeout(() => order.push('late %[1]s'), 1000);
			return new Promise((resolve) => setTimeout(() => { running--; resolve(order.join(',')); }, %[2]d));
		})()`, name, ms)
	}
	first := startEval(t, context.Background(), loadProgram(t, e, prg), render("a", 300))
	waitFor(t, 10*time.Second, "the first render sent", func() bool { return sentTo(e, 0) == 1 })
	var queued []*queuedEval
	for _, name := range []string{"b", "c", "d"} {
		queued = append(queued, startEval(t, context.Background(), loadProgram(t, e, prg), render(name, 10)))
		want := len(queued) + 1
		waitFor(t, 10*time.Second, fmt.Sprintf("%d renders sent", want), func() bool { return sentTo(e, 0) == want })
	}
	if got := first.answer(t); got != "a" {
		t.Fatalf("first render: %q", got)
	}
	for i, q := range queued {
		want := strings.Join([]string{"a", "b", "c", "d"}[:i+2], ",")
		if got := q.answer(t); got != want {
			t.Errorf("queued render %d: %q, want %q", i, got, want)
		}
		if n := q.runs.Load(); n != 1 {
			t.Errorf("queued render %d ran %d times", i, n)
		}
	}
	waitFor(t, 10*time.Second, "the process idle", func() bool { return holders(e, 0) == 0 && sentTo(e, 0) == 0 })
}

// written waits until what was sent to the process of slot is in its pipe
// (sendRender holds wmu while it writes).
func written(e *Engine, slot int) {
	e.mu.Lock()
	p := e.procs[slot]
	e.mu.Unlock()
	p.wmu.Lock()
	defer p.wmu.Unlock()
}

// TestQueuedRendersStartInTheOrderTheyCame: a render whose frame the
// executor reads once the render ahead answered, but before the renders
// queued behind that one started (read by the poll phase that follows an
// answer from a timer), queues behind them: it does not overtake them.
// The first render holds its answer, in a timer callback, until the test
// has written the third render's frame; the second is read while the
// first runs (files in dir say when: no timing is assumed).
func TestQueuedRendersStartInTheOrderTheyCame(t *testing.T) {
	e, _ := newEngine(t, config{Depth: 4})
	prg, err := e.Compile("b", "", `var order = [];`)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	queuedRead, answer := filepath.Join(dir, "queued-read"), filepath.Join(dir, "answer")
	// The immediate runs after a poll phase, which reads the second
	// render's frame, in the pipe before queuedRead exists; the timer
	// callback tells the test (ran) and waits for answer.
	first := startEval(t, context.Background(), loadProgram(t, e, prg), fmt.Sprintf(`(function () {
		const fs = %s.mainModule.require('fs');
		order.push('a');
		return new Promise((resolve) => {
			const tick = () => {
				if (!fs.existsSync(%[2]q)) {
					setTimeout(tick, 5);
					return;
				}
				setImmediate(() => setTimeout(() => {
					sharedExecutionContext.get('ran')();
					while (!fs.existsSync(%[3]q)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
					resolve(order.join(','));
				}, 0));
			};
			tick();
		});
	})()`, escape, queuedRead, answer))
	waitFor(t, 10*time.Second, "the first render sent", func() bool { return sentTo(e, 0) == 1 })
	render := func(name string) string {
		return fmt.Sprintf(`(function () { order.push(%q); return order.join(','); })()`, name)
	}
	second := startEval(t, context.Background(), loadProgram(t, e, prg), render("b"))
	waitFor(t, 10*time.Second, "the second render sent", func() bool { return sentTo(e, 0) == 2 })
	written(e, 0)
	if err := os.WriteFile(queuedRead, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the first render about to answer", func() bool { return first.runs.Load() == 1 })
	third := startEval(t, context.Background(), loadProgram(t, e, prg), render("c"))
	waitFor(t, 10*time.Second, "the third render sent", func() bool { return sentTo(e, 0) == 3 })
	written(e, 0)
	if err := os.WriteFile(answer, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name string
		q    *queuedEval
		want string
	}{{"first", first, "a"}, {"second", second, "a,b"}, {"third", third, "a,b,c"}} {
		if got := r.q.answer(t); got != r.want {
			t.Errorf("%s render: %q, want %q", r.name, got, r.want)
		}
	}
	waitFor(t, 10*time.Second, "the process idle", func() bool { return holders(e, 0) == 0 && sentTo(e, 0) == 0 })
}

// TestQueuedRendersGoElsewhereWhenTheirProcessDies: the running render's
// process is killed at its deadline, crashes or runs out of memory; it is
// answered as without pipelining, and the renders queued behind it, which
// had not started, run in the replacement, each exactly once.
func TestQueuedRendersGoElsewhereWhenTheirProcessDies(t *testing.T) {
	for _, tc := range []struct {
		name, code, want string
	}{
		// Killed at its deadline, which the test passes once the renders
		// are queued behind it.
		{"deadline", `while (true) {}`, "Render timed out after"},
		// Crashed by the test once the renders are queued behind it.
		{"crash", `new Promise((resolve) => setTimeout(resolve, 60000))`, "Render failed: the Node.js process running it exited unexpectedly (killed by signal segmentation fault"},
		// Out of memory 2 s after it starts (the renders are queued in
		// milliseconds).
		{"oom", `new Promise((resolve) => setTimeout(resolve, 2000)).then(() => { for (let i = 0; i < 3e7; i++) kept.push({ i, s: 'x' + i }); return 'survived'; })`, "Render failed: the Node.js process running it ran out of memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newEngine(t, config{Depth: 3, HeapLimit: 64 << 20})
			prg, err := e.Compile("b", "", `var n = 0, kept = [];`)
			if err != nil {
				t.Fatal(err)
			}
			pid := running(t, e, 1)[0].PID
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			doomed := startEval(t, ctx, loadProgram(t, e, prg), tc.code)
			waitFor(t, 10*time.Second, "the doomed render sent", func() bool { return sentTo(e, 0) == 1 })
			var queued []*queuedEval
			for i := range 2 {
				queued = append(queued, startEval(t, context.Background(), loadProgram(t, e, prg), `sharedExecutionContext.get('ran')(); 'ran ' + (++n)`))
				waitFor(t, 10*time.Second, "a render queued", func() bool { return sentTo(e, 0) == i+2 })
			}
			switch tc.name {
			case "deadline":
				cancel(&jsvm.DeadlineError{Limit: 500 * time.Millisecond})
			case "crash":
				if err := syscall.Kill(pid, syscall.SIGSEGV); err != nil {
					t.Fatal(err)
				}
			}
			if got := doomed.answer(t); !strings.Contains(got, tc.want) {
				t.Fatalf("the dying render's answer: %q, want %q", got, tc.want)
			}
			answers := map[string]bool{}
			for i, q := range queued {
				got := q.answer(t)
				answers[got] = true
				if n := q.runs.Load(); n != 1 {
					t.Errorf("queued render %d ran %d times (answer %q)", i, n, got)
				}
			}
			// Both ran in the replacement, whose n started at 0.
			if !answers["ran 1"] || !answers["ran 2"] {
				t.Errorf("queued renders answered %v, want ran 1 and ran 2", answers)
			}
			if p := running(t, e, 1)[0]; p.PID == pid {
				t.Errorf("process %d was not replaced", pid)
			}
		})
	}
}

// TestQueuedRenderMovesToAFreeProcess: a render queued behind a slow one
// does not wait for it once another process is free: it is withdrawn from
// the busy process and runs in the free one.
func TestQueuedRenderMovesToAFreeProcess(t *testing.T) {
	e, _ := newEngine(t, config{Processes: 2, Depth: 2})
	prg, err := e.Compile("b", "", `var x = 1;`)
	if err != nil {
		t.Fatal(err)
	}
	rts := make([]jsvm.Runtime, 4)
	for i := range rts {
		rts[i] = loadProgram(t, e, prg)
	}
	waitFor(t, 30*time.Second, "the bundle in both processes", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.procs[0] != nil && e.procs[1] != nil && e.procs[0].loaded[prg.(*program)] && e.procs[1].loaded[prg.(*program)]
	})
	slow := startEval(t, context.Background(), rts[0], `new Promise((resolve) => setTimeout(() => resolve('slow'), 30000))`)
	waitFor(t, 10*time.Second, "the slow render sent", func() bool { return sentTo(e, 0)+sentTo(e, 1) == 1 })
	short := startEval(t, context.Background(), rts[1], `new Promise((resolve) => setTimeout(() => resolve('short'), 300))`)
	waitFor(t, 10*time.Second, "both processes busy", func() bool { return sentTo(e, 0) == 1 && sentTo(e, 1) == 1 })
	// One queued render in each process: one is behind the slow render.
	var queued []*queuedEval
	for i := range 2 {
		queued = append(queued, startEval(t, context.Background(), rts[2+i], `sharedExecutionContext.get('ran')(); 'queued'`))
		waitFor(t, 10*time.Second, "a render queued", func() bool { return sentTo(e, 0)+sentTo(e, 1) == 3+i })
	}
	if got := short.answer(t); got != "short" {
		t.Fatal(got)
	}
	for i, q := range queued {
		select {
		case got := <-q.out:
			if got != "queued" {
				t.Errorf("queued render %d: %q", i, got)
			}
		case got := <-slow.out:
			t.Fatalf("the slow render answered (%q) before queued render %d", got, i)
		}
		if n := q.runs.Load(); n != 1 {
			t.Errorf("queued render %d ran %d times", i, n)
		}
	}
}

// TestFreedProcessIsNotHeldForAQueuedRender: a process freed while a
// render is queued behind another that runs synchronous JavaScript (as a
// server render mostly does) stays free: the next render runs in it at
// once. The queued render is asked to move, but its process reads that
// only once the render ahead of it ends; a freed process held for the
// move stood idle until then while new renders waited (fails so before
// this). The queued render then runs once, where the answer sends it.
func TestFreedProcessIsNotHeldForAQueuedRender(t *testing.T) {
	e, _ := newEngine(t, config{Processes: 2, Depth: 2, SupportModules: true})
	dir := t.TempDir()
	prg := gatedBundle(t, e, dir, "b", "", "")
	rts := make([]jsvm.Runtime, 5)
	for i := range rts {
		rts[i] = loadProgram(t, e, prg)
	}
	holdEverywhere(t, e, 2, 1)
	sent := func() int { return sentTo(e, 0) + sentTo(e, 1) }
	blocked := evalAsync(t, rts[0], "b", `block('unblock')`)
	waitFor(t, 10*time.Second, "the blocking render sent", func() bool { return sent() == 1 })
	async := evalAsync(t, rts[1], "b", `wait('async')`)
	waitFor(t, 10*time.Second, "both processes busy", func() bool { return sentTo(e, 0) == 1 && sentTo(e, 1) == 1 })
	// One render queued in each process: one behind the blocking render.
	var queued []*queuedEval
	for i := range 2 {
		queued = append(queued, startEval(t, context.Background(), rts[2+i], `sharedExecutionContext.get('ran')(); me`))
		waitFor(t, 10*time.Second, "a render queued", func() bool { return sent() == 3+i })
	}
	touch(t, dir, "async")
	if got := <-async; got != "b" {
		t.Fatalf("the async render: %q", got)
	}
	// The render queued behind it runs next, and its process is free.
	var behindBlocked *queuedEval
	select {
	case got := <-queued[0].out:
		behindBlocked = queued[1]
		if got != "b" {
			t.Fatalf("the render queued behind the async one: %q", got)
		}
	case got := <-queued[1].out:
		behindBlocked = queued[0]
		if got != "b" {
			t.Fatalf("the render queued behind the async one: %q", got)
		}
	}
	// The blocking render's process reads nothing until it ends: a render
	// answered now ran in the freed one.
	next := evalAsync(t, rts[4], "b", `me`)
	select {
	case got := <-next:
		if got != "b" {
			t.Fatalf("the next render: %q", got)
		}
	case got := <-blocked:
		t.Fatalf("the blocking render answered (%q) before it was unblocked", got)
	case got := <-behindBlocked.out:
		t.Fatalf("the render queued behind the blocking one answered (%q) before it was unblocked", got)
	case <-time.After(10 * time.Second):
		// (before the blocking render's 20 s deadline)
		t.Fatal("the next render did not run in the freed process within 10 s: it waited behind the blocking render")
	}
	touch(t, dir, "unblock")
	if got := <-blocked; got != "b" {
		t.Fatalf("the blocking render: %q", got)
	}
	if got := behindBlocked.answer(t); got != "b" {
		t.Fatalf("the render queued behind the blocking one: %q", got)
	}
	for i, q := range queued {
		if n := q.runs.Load(); n != 1 {
			t.Errorf("queued render %d ran %d times", i, n)
		}
	}
	waitFor(t, 10*time.Second, "both processes idle", func() bool {
		return holders(e, 0) == 0 && holders(e, 1) == 0 && sent() == 0
	})
}

// TestClientLeavesAQueuedRender: a render whose caller leaves (or whose
// deadline passes) while it is queued behind another is answered at once
// and dropped unstarted; the process, running the other render, is kept.
func TestClientLeavesAQueuedRender(t *testing.T) {
	e, _ := newEngine(t, config{Depth: 2})
	prg, err := e.Compile("b", "", `var ran = false;`)
	if err != nil {
		t.Fatal(err)
	}
	pid := running(t, e, 1)[0].PID
	for _, how := range []string{"client", "deadline"} {
		slow := startEval(t, context.Background(), loadProgram(t, e, prg), `new Promise((resolve) => setTimeout(() => resolve('slow ' + ran), 1500))`)
		waitFor(t, 10*time.Second, "the slow render sent", func() bool { return sentTo(e, 0) == 1 })
		ctx, cancel := context.WithCancelCause(context.Background())
		left := startEval(t, ctx, loadProgram(t, e, prg), `sharedExecutionContext.get('ran')(); ran = true; 'ran'`)
		waitFor(t, 10*time.Second, "the render queued", func() bool { return sentTo(e, 0) == 2 })
		if how == "client" {
			cancel(context.Canceled)
		} else {
			cancel(&jsvm.DeadlineError{Limit: 300 * time.Millisecond})
		}
		select {
		case got := <-left.out:
			if !strings.HasPrefix(got, "error: ") {
				t.Errorf("%s: the queued render answered %q", how, got)
			}
		case <-slow.out:
			t.Fatalf("%s: the queued render was answered only after the render ahead of it", how)
		}
		if got := slow.answer(t); got != "slow false" {
			t.Errorf("%s: the running render: %q", how, got)
		}
		waitFor(t, 10*time.Second, "the process idle", func() bool { return holders(e, 0) == 0 })
		if n := left.runs.Load(); n != 0 {
			t.Errorf("%s: the dropped render ran %d times", how, n)
		}
		if got := mustEval(t, loadProgram(t, e, prg), "b", `'ran: ' + ran`); got != "ran: false" {
			t.Errorf("%s: %s", how, got)
		}
		if p := running(t, e, 1)[0]; p.PID != pid {
			t.Errorf("%s: process %d replaced by %d", how, pid, p.PID)
		}
	}
}

// TestRecycleWithQueuedRenders: a process due for recycling takes no more
// queued renders; those queued before run, then it is replaced.
func TestRecycleWithQueuedRenders(t *testing.T) {
	e, _ := newEngine(t, config{Depth: 3, MaxRendersPerProcess: 2})
	prg, err := e.Compile("b", "", `var n = 0;`)
	if err != nil {
		t.Fatal(err)
	}
	pid := running(t, e, 1)[0].PID
	first := startEval(t, context.Background(), loadProgram(t, e, prg), `new Promise((resolve) => setTimeout(() => resolve('n' + (++n)), 300))`)
	waitFor(t, 10*time.Second, "the first render sent", func() bool { return sentTo(e, 0) == 1 })
	second := startEval(t, context.Background(), loadProgram(t, e, prg), `'n' + (++n)`)
	waitFor(t, 10*time.Second, "the second render queued", func() bool { return sentTo(e, 0) == 2 })
	third := startEval(t, context.Background(), loadProgram(t, e, prg), `'n' + (++n)`)
	for i, want := range []string{"n1", "n2"} {
		if got := []*queuedEval{first, second}[i].answer(t); got != want {
			t.Errorf("render %d: %q, want %q", i, got, want)
		}
	}
	// The third waited for the recycled process's replacement.
	if got := third.answer(t); got != "n1" {
		t.Errorf("third render: %q, want n1 (in a fresh process)", got)
	}
	if p := running(t, e, 1)[0]; p.PID == pid {
		t.Error("the process was not recycled")
	}
	if got := e.ProcessRestarts()[reasonRecycled]; got != 1 {
		t.Errorf("recycled %d times", got)
	}
}

// TestCloseWithQueuedRenders: Close answers the running render and the
// queued ones, and leaves no process behind.
func TestCloseWithQueuedRenders(t *testing.T) {
	e, _ := newEngine(t, config{Depth: 3})
	prg, err := e.Compile("b", "", `var x = 1;`)
	if err != nil {
		t.Fatal(err)
	}
	pid := running(t, e, 1)[0].PID
	var evals []*queuedEval
	evals = append(evals, startEval(t, context.Background(), loadProgram(t, e, prg), `while (true) {}`))
	for i := range 2 {
		waitFor(t, 10*time.Second, "renders sent", func() bool { return sentTo(e, 0) == i+1 })
		evals = append(evals, startEval(t, context.Background(), loadProgram(t, e, prg), `sharedExecutionContext.get('ran')(); 'ran'`))
	}
	waitFor(t, 10*time.Second, "renders sent", func() bool { return sentTo(e, 0) == 3 })
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.Close()
	}()
	for i, q := range evals {
		if got := q.answer(t); !strings.HasPrefix(got, "error: ") {
			t.Errorf("render %d answered %q after Close", i, got)
		}
		if n := q.runs.Load(); n != 0 {
			t.Errorf("render %d ran", i)
		}
	}
	wg.Wait()
	if alive(pid) {
		t.Errorf("process %d alive after Close", pid)
	}
}

// TestQueuedIncrementalRender: the updates of an incremental render that
// arrive while it is queued reach it once it runs.
func TestQueuedIncrementalRender(t *testing.T) {
	e, _ := newEngine(t, config{Depth: 2})
	prg, err := e.Compile("b", "", `var x = 1;`)
	if err != nil {
		t.Fatal(err)
	}
	slow := startEval(t, context.Background(), loadProgram(t, e, prg), `new Promise((resolve) => setTimeout(() => resolve('slow'), 500))`)
	waitFor(t, 10*time.Second, "the slow render sent", func() bool { return sentTo(e, 0) == 1 })
	rt := loadProgram(t, e, prg)
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"b": rt})
	req.Updates = jsvm.NewUpdates()
	out := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := rt.Eval(ctx, `new Promise((resolve) => { globalThis.finish = resolve; })`, req)
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		out <- res.Body
	}()
	waitFor(t, 10*time.Second, "the incremental render queued", func() bool { return sentTo(e, 0) == 2 })
	if err := req.Updates.Push(jsvm.Update{BundleID: "b", Code: `x = 2;`}); err != nil {
		t.Fatal(err)
	}
	req.Updates.Close(&jsvm.Update{BundleID: "b", Code: `finish('updated ' + x)`})
	if got := slow.answer(t); got != "slow" {
		t.Fatal(got)
	}
	select {
	case got := <-out:
		if got != "updated 2" {
			t.Fatalf("incremental render: %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the queued incremental render never answered")
	}
}

// orderSink is a sink that records whether its render had started
// (Request.Started) when its stream did.
type orderSink struct {
	started   *atomic.Bool
	lateStart atomic.Bool
}

func (s *orderSink) Start() error {
	if !s.started.Load() {
		s.lateStart.Store(true)
	}
	return nil
}

func (s *orderSink) Write([]byte) error { return nil }

// TestQueuedStreamStartsInOrder: a queued render's start (which runs its
// render deadline) is told before its stream starts (which lifts it),
// whichever of the two signals the render's goroutine sees first.
func TestQueuedStreamStartsInOrder(t *testing.T) {
	e, _ := newEngine(t, config{Depth: 4, SupportModules: true})
	prg, err := e.Compile("b", "", `globalThis.PassThrough = require('stream').PassThrough;`)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		var wg sync.WaitGroup
		for i := range 4 {
			rt := loadProgram(t, e, prg)
			var started atomic.Bool
			sink := &orderSink{started: &started}
			req := jsvm.NewRequest(nil)
			req.Sink = sink
			req.Started = func() { started.Store(true) }
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				_, err := rt.Eval(ctx, `var s = new PassThrough(); s.end('x'); s`, req)
				if err != nil {
					t.Errorf("round %d stream %d: %v", round, i, err)
				}
				if sink.lateStart.Load() {
					t.Errorf("round %d stream %d: its stream started before the render did", round, i)
				}
			}()
		}
		wg.Wait()
	}
}

// dropFrom unloads prg from the process of slot, idle, as if it had never
// loaded it (a process replaced since, one the spreader has not reached).
func dropFrom(t *testing.T, e *Engine, slot int, prg jsvm.Program, set ...jsvm.Program) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	progs := []*program{prg.(*program)}
	for _, o := range set {
		progs = append(progs, o.(*program))
	}
	p, err := e.reserve(ctx, e.groupOf(progs...), false)
	if err != nil {
		t.Fatal(err)
	}
	defer e.release(p)
	if p.slot != slot {
		t.Fatalf("reserved the process of slot %d, want %d", p.slot, slot)
	}
	e.mu.Lock()
	delete(p.loaded, prg.(*program))
	e.mu.Unlock()
	if err := p.send(&header{T: "unload", B: prg.(*program).key}, ""); err != nil {
		t.Fatal(err)
	}
}

// TestQueuedRenderNeedingALoadWaitsForAnIdleProcess: a render that finds
// the only process of its isolation group busy, and that needs a bundle of
// its set that process has not loaded (a replaced process, one the
// spreader has not reached), does not queue in it (only a process with no
// other holder loads a bundle): nothing is written to the process while
// the render ahead runs; once that one answers, the waiting render loads
// its bundle there and is answered with that bundle's output, within its
// deadline. (Its case "its own bundle", a render of b queued in a process
// of a, is gone with the shared processes: b renders in b's own.)
func TestQueuedRenderNeedingALoadWaitsForAnIdleProcess(t *testing.T) {
	e, _ := newEngine(t, config{Depth: 4, SupportModules: true})
	dir := t.TempDir()
	a := gatedBundle(t, e, dir, "a", "", "")
	b := gatedBundle(t, e, dir, "b", "", "")
	rtSlow, rtA, rtB := loadProgram(t, e, a), loadProgram(t, e, a), loadProgram(t, e, b)
	inSet := func(rt jsvm.Runtime, code string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := rt.Eval(ctx, code, jsvm.NewRequest(map[string]jsvm.Runtime{"a": rt, "b": rtB}))
		return res.Body, err
	}
	// The set {a, b} gets a process of its own, which then lacks b.
	if got, err := inSet(rtSlow, `me + '+' + runOnOtherBundle('b', 'me')`); err != nil || got != "a+b" {
		t.Fatalf("%q %v", got, err)
	}
	g := e.groupOf(a.(*program), b.(*program))
	slot := -1
	e.mu.Lock()
	for _, p := range e.procs {
		if p != nil && p.group == g {
			slot = p.slot
		}
	}
	e.mu.Unlock()
	dropFrom(t, e, slot, b, a)
	before := e.loadsSent.Load()

	slow := make(chan string, 1)
	go func() {
		got, err := inSet(rtSlow, `wait('go')`)
		if err != nil {
			got = "error: " + err.Error()
		}
		slow <- got
	}()
	waitFor(t, 10*time.Second, "the slow render sent", func() bool { return sentTo(e, slot) == 1 })
	if n := e.loadsSent.Load(); n != before+1 {
		t.Fatalf("%d loads for the slow render, want 1 (b)", n-before)
	}
	dropFrom := func() { // b is gone again once the slow render holds the process
		e.mu.Lock()
		delete(e.procs[slot].loaded, b.(*program))
		e.mu.Unlock()
	}
	dropFrom()
	before = e.loadsSent.Load()
	out := make(chan string, 1)
	go func() {
		got, err := inSet(rtA, `me + '+' + runOnOtherBundle('b', 'me')`)
		if err != nil {
			got = "error: " + err.Error()
		}
		out <- got
	}()
	// The render either waits for a process (the rule) or was
	// written to the busy one, with or without loading b first.
	waitFor(t, 10*time.Second, "the render waiting or sent", func() bool {
		e.mu.Lock()
		waiting := len(e.waiters)
		e.mu.Unlock()
		return waiting == 1 || sentTo(e, slot) > 1 || e.loadsSent.Load() > before
	})
	if n := e.loadsSent.Load(); n != before {
		t.Errorf("b was sent to the busy process to load (%d loads, want %d)", n, before)
	}
	if n := sentTo(e, slot); n != 1 {
		t.Errorf("%d renders written to the busy process, want 1 (the render needing b queued in it)", n)
	}
	if n := holders(e, slot); n != 1 {
		t.Errorf("the busy process has %d holders, want 1", n)
	}

	touch(t, dir, "go")
	select {
	case got := <-slow:
		if got != "a" {
			t.Fatalf("the slow render: %q", got)
		}
	case got := <-out:
		t.Fatalf("the render needing b answered (%q) before the render ahead of it", got)
	}
	select {
	case got := <-out:
		if got != "a+b" {
			t.Errorf("the render needing b: %q, want %q", got, "a+b")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the render needing b was never answered")
	}
	if n := e.loadsSent.Load(); n != before+1 {
		t.Errorf("%d loads after the renders, want %d (b once, in the freed process)", n, before+1)
	}
	waitFor(t, 10*time.Second, "the process idle", func() bool { return holders(e, slot) == 0 && sentTo(e, slot) == 0 })
}
