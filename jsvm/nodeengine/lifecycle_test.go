package nodeengine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
)

// alive reports whether a process with that pid exists.
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// waitFor polls cond every 5 ms for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// running reports the engine's processes once all n are up.
func running(t *testing.T, e *Engine, n int) []jsvm.ProcessStats {
	t.Helper()
	var procs []jsvm.ProcessStats
	waitFor(t, 30*time.Second, fmt.Sprintf("%d processes running", n), func() bool {
		procs = e.Processes()
		return len(procs) == n
	})
	return procs
}

// TestProcessesPerIsolationGroup: each bundle's renders run in processes
// of its own isolation group, which load no other bundle; a group has at
// most W processes and all groups together at most MaxProcesses (2W): with
// three bundles rendering at once, groups take the least recently used
// idle process of another group, and every render still answers its own
// bundle's output. (This replaced TestProcessesSharedAcrossBundles, which
// asserted the shared processes that issue 27 removed.)
func TestProcessesPerIsolationGroup(t *testing.T) {
	e, _ := newEngine(t, config{Processes: 2, StubTimers: true})
	var rts []jsvm.Runtime
	for i := range 3 {
		name := fmt.Sprintf("b%d", i)
		p, err := e.Compile(name, "", fmt.Sprintf("var me = %q;", name))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // two runtimes per bundle, as a pool of 2 holds
			rt, _ := e.NewRuntime()
			if err := rt.Load(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			rts = append(rts, rt)
		}
	}
	stop := make(chan struct{})
	bounds := make(chan error, 1)
	go func() { // the bounds hold all along
		for {
			select {
			case <-stop:
				bounds <- nil
				return
			case <-time.After(time.Millisecond):
			}
			if err := checkGroups(e, 2, 4); err != nil {
				bounds <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for i, rt := range rts {
		wg.Go(func() {
			name := fmt.Sprintf("b%d", i/2)
			for range 5 {
				if got, err := eval(t, rt, name, "me"); err != nil || got != name {
					t.Errorf("%s: %q %v", name, got, err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-bounds; err != nil {
		t.Fatal(err)
	}
	for _, p := range e.Processes() {
		if p.RSS <= 0 {
			t.Errorf("process %d: RSS %d", p.Slot, p.RSS)
		}
	}
}

// checkGroups checks the isolation rule and the bounds: every process holds
// only its group's bundles, a group has at most perGroup processes and
// all at most total.
func checkGroups(e *Engine, perGroup, total int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	alive := 0
	byGroup := map[*group]int{}
	for _, p := range e.procs {
		if p == nil || p.dead.Load() {
			continue
		}
		alive++
		byGroup[p.group]++
		for prg := range p.loaded {
			if p.group == nil || !slices.Contains(p.group.progs, prg) {
				return fmt.Errorf("process %d holds bundle %s outside its group", p.slot, prg.name)
			}
		}
	}
	if alive > total {
		return fmt.Errorf("%d processes alive, want at most %d", alive, total)
	}
	for g, n := range byGroup {
		if g != nil && n > perGroup {
			return fmt.Errorf("group %s has %d processes, want at most %d", g.key, n, perGroup)
		}
	}
	return nil
}

// TestDeadlineKillsOnlyItsProcess: a render past its deadline in a loop
// that never yields is answered at the deadline and its process killed and
// replaced, while a render of another bundle on the other process carries
// on to its end.
func TestDeadlineKillsOnlyItsProcess(t *testing.T) {
	e, _ := newEngine(t, config{Processes: 2})
	loop := load(t, e, "loop", "", `var x = 1;`)
	// loop in both processes (its isolation group's), then other in a
	// third of its own: no background load holds a process when the
	// runaway render comes.
	holdEverywhere(t, e, 2, 1)
	other := load(t, e, "other", "", `var y = 2;`)
	holdEverywhere(t, e, 3, 1)
	before := running(t, e, 3)

	slow := make(chan error, 1)
	slowStarted := make(chan struct{})
	go func() {
		// Holds the other process across the kill: done 400 ms after it starts.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		close(slowStarted)
		res, err := other.Eval(ctx, `new Promise((resolve) => setTimeout(() => resolve('other ' + y), 400))`, jsvm.NewRequest(nil))
		if err == nil && res.Body != "other 2" {
			err = fmt.Errorf("body %q", res.Body)
		}
		slow <- err
	}()
	<-slowStarted
	waitFor(t, 10*time.Second, "the other render running", func() bool {
		for _, p := range e.Processes() {
			if p.Busy {
				return true
			}
		}
		return false
	})

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	started := time.Now()
	_, err := loop.Eval(ctx, `while (true) {}`, jsvm.NewRequest(nil))
	took := time.Since(started)
	re := renderErr(t, err)
	if re.Kind != jsvm.KindTimeout || !strings.HasPrefix(re.Text, "Render timed out after 1") {
		t.Fatalf("answer %v %q", re.Kind, re.Text)
	}
	if took > 2*time.Second {
		t.Errorf("answered after %s, want about the 150 ms deadline", took)
	}
	if !loop.Broken() {
		t.Error("the runtime whose process was killed is not retired")
	}
	if err := <-slow; err != nil {
		t.Fatalf("the other process's render: %v", err)
	}
	after := running(t, e, 3)
	killed := 0
	for i := range before {
		if !alive(before[i].PID) {
			killed++
		}
	}
	if killed != 1 {
		t.Errorf("%d of the 3 processes gone, want exactly the runaway's", killed)
	}
	if got := e.ProcessRestarts()[reasonDeadline]; got != 1 {
		t.Errorf("restarts for deadline = %d, want 1 (all: %v)", got, e.ProcessRestarts())
	}
	// The replacement has the bundle back, and both bundles render.
	rt := load(t, e, "loop", "", `var x = 1;`) // a fresh runtime, as the pool replaces a retired one
	_ = rt
	for range 4 {
		if got := mustEval(t, other, "other", `'y=' + y`); got != "y=2" {
			t.Fatal(got)
		}
	}
	_ = after
}

// TestOutOfMemory: a render that outgrows the V8 heap limit kills its
// process; it is answered like a timeout, the process is replaced, and the
// next render works.
func TestOutOfMemory(t *testing.T) {
	e, _ := newEngine(t, config{HeapLimit: 64 << 20})
	rt := load(t, e, "hog", "", `var kept = [];`)
	// Bounded: should the limit not apply, this stops at about 1.5 GB. V8
	// collects harder and harder as the heap fills: 2.2-2.5 s here, past
	// eval's 20 s once on a loaded machine, so the deadline (which would
	// answer a timeout instead) is 90 s.
	_, err := evalWithin(t, rt, "hog", `for (let i = 0; i < 3e7; i++) kept.push({ i, s: 'x' + i }); 'survived'`, 90*time.Second)
	re := renderErr(t, err)
	want := "Render failed: the Node.js process running it ran out of memory (its V8 heap limit of 64 MiB, 320 MiB in all) and was replaced."
	if re.Kind != jsvm.KindTimeout || re.Text != want {
		t.Fatalf("answer %v %q, want %q", re.Kind, re.Text, want)
	}
	if !rt.Broken() {
		t.Error("runtime not retired")
	}
	running(t, e, 1)
	if got := e.ProcessRestarts()[reasonOOM]; got != 1 {
		t.Errorf("restarts for oom = %d, want 1 (all: %v)", got, e.ProcessRestarts())
	}
	fresh := load(t, e, "hog", "", `var kept = [];`)
	if got := mustEval(t, fresh, "hog", `'ok ' + kept.length`); got != "ok 0" {
		t.Fatal(got)
	}
}

// TestMemoryOutsideTheHeap: with a heap limit, memory outside the V8 heap
// is bounded too (RLIMIT_DATA: the heap limit and as much again, at least
// 256 MiB more): a Buffer past it is Node's own RangeError in the render,
// the process serves on; and every process is the kernel's OOM killer's
// first choice, before gorender.
func TestMemoryOutsideTheHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_DATA and oom_score_adj are set on Linux")
	}
	e, _ := newEngine(t, config{HeapLimit: 64 << 20, SupportModules: true})
	rt := load(t, e, "buf", "", `var n = 0;`)
	// Without the limit this takes 400 MB of the machine and answers.
	_, err := eval(t, rt, "buf", `Buffer.alloc(400e6).length`)
	if re := renderErr(t, err); re.Kind != jsvm.KindJS || !strings.Contains(re.Text, "RangeError") {
		t.Fatalf("answer %v %.300q, want a RangeError", re.Kind, re.Text)
	}
	if got := mustEval(t, rt, "buf", `String(Buffer.alloc(100e6).length)`); got != "100000000" {
		t.Fatalf("a buffer within the limit: %s", got)
	}
	if rt.Broken() || e.spawned.Load() != 1 {
		t.Fatalf("broken %v, processes started %d: the process should serve on", rt.Broken(), e.spawned.Load())
	}
	procs := e.Processes()
	if len(procs) != 1 {
		t.Fatalf("processes: %+v", procs)
	}
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", procs[0].PID))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`Max data size\s+335544320\s+335544320\s+bytes`).Match(limits) {
		t.Errorf("data limit, want 320 MiB:\n%s", limits)
	}
	if adj, err := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", procs[0].PID)); err != nil || strings.TrimSpace(string(adj)) != "1000" {
		t.Errorf("oom_score_adj %q %v, want 1000", adj, err)
	}
}

// TestSemiSpace: a configured semi-space size reaches V8
// (--max-semi-space-size, in MiB), and the young generation it allows (three
// semi-spaces) is added to the data segment limit.
func TestSemiSpace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc and RLIMIT_DATA are Linux's")
	}
	e, _ := newEngine(t, config{HeapLimit: 64 << 20, SemiSpace: 32 << 20})
	rt := load(t, e, "b", "", `var n = 0;`)
	if got := mustEval(t, rt, "b", `'ok'`); got != "ok" {
		t.Fatalf("render: %q", got)
	}
	pid := running(t, e, 1)[0].PID
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Split(string(cmdline), "\x00"); !slices.Contains(args, "--max-semi-space-size=32") {
		t.Errorf("command line %q, want --max-semi-space-size=32", args)
	}
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	// 64 MiB of heap, 256 MiB outside it, 3 × 32 MiB of young generation.
	if !regexp.MustCompile(`Max data size\s+436207616\s+436207616\s+bytes`).Match(limits) {
		t.Errorf("data limit, want 416 MiB:\n%s", limits)
	}
}

// TestBatchScheduling: every thread of every executor runs as SCHED_BATCH
// (policy 3), which they inherit from the thread that forks them, the
// replacement of a killed process included.
func TestBatchScheduling(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the policy is set on Linux")
	}
	e, _ := newEngine(t, config{Processes: 2})
	before := running(t, e, 2)
	spin := load(t, e, "spin", "", `var n = 0;`)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := spin.Eval(ctx, `while (true) {}`, jsvm.NewRequest(nil)); renderErr(t, err).Kind != jsvm.KindTimeout {
		t.Fatalf("a loop past the deadline: %v", err)
	}
	old := map[int]bool{before[0].PID: true, before[1].PID: true}
	var after []jsvm.ProcessStats
	waitFor(t, 30*time.Second, "the killed process replaced", func() bool {
		after = e.Processes()
		return len(after) == 2 && (!old[after[0].PID] || !old[after[1].PID])
	})
	for _, p := range after {
		stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", p.PID))
		if len(stats) < 2 {
			t.Fatalf("process %d: threads %v", p.PID, stats)
		}
		for _, stat := range stats {
			b, err := os.ReadFile(stat)
			if err != nil {
				continue // a thread that ended meanwhile
			}
			// The fields after the command's closing parenthesis start at
			// field 3; the policy is field 41.
			fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
			if policy := fields[41-3]; policy != "3" {
				t.Errorf("%s: policy %s, want 3 (SCHED_BATCH)", stat, policy)
			}
		}
	}
}

// TestCrashMidStream: the process running a stream dies after its first
// chunk (the kernel's OOM killer, a segfault): the render is answered
// with the crash, its process replaced, the next render works.
func TestCrashMidStream(t *testing.T) {
	e, logs := newEngine(t, config{SupportModules: true})
	rt := load(t, e, "streamer", "", `globalThis.PassThrough = require('stream').PassThrough;`)
	pid := running(t, e, 1)[0].PID
	sink := conformance.NewRecordingSink()
	req := jsvm.NewRequest(map[string]jsvm.Runtime{"streamer": rt})
	req.Sink = sink
	go func() {
		<-sink.First()
		_ = syscall.Kill(pid, syscall.SIGSEGV)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := rt.Eval(ctx, `var s = new PassThrough(); s.write('<p>shell</p>'); setTimeout(() => s.end('late'), 60000); s`, req)
	re := renderErr(t, err)
	if re.Kind != jsvm.KindTimeout || !strings.HasPrefix(re.Text, "Render failed: the Node.js process running it exited unexpectedly (killed by signal segmentation fault") {
		t.Fatalf("answer %v %q", re.Kind, re.Text)
	}
	if sink.Body() != "<p>shell</p>" {
		t.Errorf("streamed %q before the crash", sink.Body())
	}
	waitFor(t, 30*time.Second, "a replacement process", func() bool {
		p := e.Processes()
		return len(p) == 1 && p[0].PID != pid
	})
	if got := e.ProcessRestarts()[reasonCrash]; got != 1 {
		t.Errorf("restarts for crash = %d, want 1 (all: %v)", got, e.ProcessRestarts())
	}
	if !strings.Contains(logs.String(), "node process died during a render") {
		t.Error("the crash was not logged")
	}
	fresh := load(t, e, "streamer", "", `globalThis.PassThrough = require('stream').PassThrough;`)
	if got := mustEval(t, fresh, "streamer", `typeof PassThrough`); got != "function" {
		t.Fatal(got)
	}
}

// TestMalformedFrames: an executor that writes what is not a frame (here:
// bundle code that escaped its context and wrote to gorender's pipe) is a
// protocol error, the bundle's once its code ran in the process: logged
// and answered naming it (not as gorender's bug), its render answered at
// once (no hang), its process replaced and counted as bundle_fault.
func TestMalformedFrames(t *testing.T) {
	for _, tc := range []struct{ name, bytes string }{
		{"garbage", `'\x05\x00\x00\x00\x00\x00\x00\x00not json'`},
		{"huge header", `'\xff\xff\xff\x7f\x00\x00\x00\x00'`},
		{"no type", `'\x02\x00\x00\x00\x00\x00\x00\x00{}'`},
		{"truncated then exit", `'\x40\x00\x00\x00'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, logs := newEngine(t, config{})
			rt := load(t, e, "b", "", `var x;`)
			code := `(() => { const p = ` + escape + `; p.mainModule.require('fs').writeSync(4, p.mainModule.require('buffer').Buffer.from(` + tc.bytes + `, 'latin1'));
				if (` + fmt.Sprint(tc.name == "truncated then exit") + `) p.reallyExit(3);
				return new Promise(() => {}); })()`
			started := time.Now()
			_, err := eval(t, rt, "b", code)
			re := renderErr(t, err)
			if want := fmt.Sprintf(bundleFaultText, "b"); re.Kind != jsvm.KindTimeout || re.Text != want {
				t.Fatalf("answer %v %q, want %q", re.Kind, re.Text, want)
			}
			if d := time.Since(started); d > 5*time.Second {
				t.Errorf("answered after %s", d)
			}
			if !strings.Contains(logs.String(), "after bundle code ran in it") || strings.Contains(logs.String(), "gorender bug") {
				t.Errorf("no log line of the bundle's fault, or one of a bug:\n%s", logs)
			}
			running(t, e, 1)
			if got := e.ProcessRestarts()[reasonBundleFault]; got != 1 {
				t.Errorf("restarts for bundle_fault = %d, want 1 (all: %v)", got, e.ProcessRestarts())
			}
		})
	}
}

// fakeNode writes an executable script standing in for node. Started as an
// executor, it runs under the filter, which refuses new processes: only
// the shell's built-ins and exec.
func fakeNode(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "node")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSlowStart: a Node.js that takes a while to start delays the engine's
// start, not its correctness; one that does not start in time fails it
// with a clear error, as does a missing or too old one.
func TestSlowStart(t *testing.T) {
	real, err := findNode("")
	if err != nil {
		t.Fatal(err)
	}
	// Its start waits on opening a FIFO (no sleep: it could not fork one),
	// which the test opens after a second.
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	slow := fakeNode(t, `case "$1" in --version) exec `+real.path+` --version;; esac
: < `+gate+`
exec `+real.path+` "$@"`)
	opened := make(chan *os.File, 1)
	time.AfterFunc(time.Second, func() {
		f, err := os.OpenFile(gate, os.O_RDWR, 0) // holds a writer: every later open passes at once
		if err != nil {
			t.Error(err)
		}
		opened <- f
	})
	started := time.Now()
	e, _ := newEngine(t, config{NodePath: slow, Processes: 2})
	if d := time.Since(started); d < time.Second {
		t.Errorf("the engine started in %s, before its first process could", d)
	}
	rt := load(t, e, "b", "", `var x = 'slow but fine';`)
	if got := mustEval(t, rt, "b", "x"); got != "slow but fine" {
		t.Fatal(got)
	}

	// The gate closed again: a start that waits past the limit.
	if f := <-opened; f != nil {
		f.Close()
	}
	defer func(d time.Duration) { spawnLimit = d }(spawnLimit)
	spawnLimit = 300 * time.Millisecond
	_, err = start(config{NodePath: slow, Processes: 1})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 300ms of its start") {
		t.Errorf("start past the limit: %v", err)
	}
	spawnLimit = 30 * time.Second

	for _, tc := range []struct{ node, want string }{
		{fakeNode(t, `echo v18.19.0`), "RENDERER_JS_ENGINE=node needs Node.js 20 or newer; "},
		{filepath.Join(t.TempDir(), "missing-node"), "RENDERER_NODE_PATH="},
		{fakeNode(t, `case "$1" in --version) echo v20.20.2;; *) exit 9;; esac`), "no process started"},
	} {
		if _, err := start(config{NodePath: tc.node}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.node, err, tc.want)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := start(config{}); err == nil || !strings.Contains(err.Error(), "no node was found on PATH") {
		t.Errorf("without node: %v", err)
	}
}

// TestCloseWithBusyProcesses: closing the engine while its processes run
// renders (a loop that never yields, a stream waiting on a timer) answers
// those renders and leaves no process behind.
func TestCloseWithBusyProcesses(t *testing.T) {
	e, _ := newEngine(t, config{Processes: 2, SupportModules: true})
	rt1 := load(t, e, "a", "", `globalThis.PassThrough = require('stream').PassThrough;`)
	rt2 := load(t, e, "a", "", `globalThis.PassThrough = require('stream').PassThrough;`)
	procs := running(t, e, 2)
	results := make(chan error, 2)
	go func() {
		_, err := rt1.Eval(context.Background(), `while (true) {}`, jsvm.NewRequest(nil))
		results <- err
	}()
	go func() {
		req := jsvm.NewRequest(nil)
		req.Sink = conformance.NewRecordingSink()
		_, err := rt2.Eval(context.Background(), `var s = new PassThrough(); s.write('x'); setTimeout(() => s.end(), 60000); s`, req)
		results <- err
	}()
	waitFor(t, 10*time.Second, "both processes busy", func() bool {
		busy := 0
		for _, p := range e.Processes() {
			if p.Busy {
				busy++
			}
		}
		return busy == 2
	})
	closed := time.Now()
	e.Close()
	if d := time.Since(closed); d > 5*time.Second {
		t.Errorf("Close took %s", d)
	}
	for range 2 {
		select {
		case err := <-results:
			if err == nil {
				t.Error("a render killed by Close succeeded")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a render was not answered when the engine closed")
		}
	}
	for _, p := range procs {
		if alive(p.PID) {
			t.Errorf("process %d still alive after Close", p.PID)
		}
	}
	if _, err := os.Stat(e.dir.path); !os.IsNotExist(err) {
		t.Errorf("the executor's directory is left: %v", err)
	}
	if _, err := e.NewRuntime(); err == nil {
		t.Error("a closed engine made a runtime")
	}
}

// TestCancelKeepsTheProcess: a render whose request goes away while it
// waits (no JavaScript running) is asked to stop, stops, and its process
// serves the next render with none of the stopped render's timers firing.
func TestCancelKeepsTheProcess(t *testing.T) {
	// However loaded the machine, a process that stops when asked is kept.
	defer func(d time.Duration) { cancelGrace = d }(cancelGrace)
	cancelGrace = 30 * time.Second
	e, _ := newEngine(t, config{SupportModules: true})
	rt := load(t, e, "s", "", `globalThis.PassThrough = require('stream').PassThrough; globalThis.fired = [];`)
	pid := running(t, e, 1)[0].PID
	ctx, cancel := context.WithCancel(context.Background())
	sink := conformance.NewRecordingSink()
	go func() {
		<-sink.First()
		cancel()
	}()
	req := jsvm.NewRequest(nil)
	req.Sink = sink
	_, err := rt.Eval(ctx, `var s = new PassThrough(); s.write('shell'); setTimeout(() => { fired.push('late'); s.end(); }, 300); s`, req)
	if re := renderErr(t, err); re.Kind != jsvm.KindCanceled {
		t.Fatalf("answer %v %q", re.Kind, re.Text)
	}
	if rt.Broken() {
		t.Fatal("the runtime was retired: its process was killed although it stopped when asked")
	}
	if got := mustEval(t, rt, "s", `new Promise((resolve) => setTimeout(() => resolve(JSON.stringify(fired)), 500))`); got != "[]" {
		t.Fatalf("the canceled render's timer fired later: %s", got)
	}
	if p := e.Processes(); len(p) != 1 || p[0].PID != pid {
		t.Errorf("processes %+v, want the same one (pid %d)", p, pid)
	}

	// A render that does not stop when asked (JavaScript running) costs its
	// process after the grace.
	cancelGrace = 250 * time.Millisecond
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	started := time.Now()
	_, err = rt.Eval(ctx, `while (true) {}`, jsvm.NewRequest(nil))
	if re := renderErr(t, err); re.Kind != jsvm.KindCanceled {
		t.Fatalf("answer %v %q", re.Kind, re.Text)
	}
	if d := time.Since(started); d > 100*time.Millisecond+cancelGrace+2*time.Second {
		t.Errorf("answered after %s", d)
	}
	if !rt.Broken() {
		t.Error("runtime not retired after its process was killed")
	}
	waitFor(t, 10*time.Second, "the restart counted as unresponsive", func() bool { return e.ProcessRestarts()[reasonUnresponsive] == 1 })
}

// TestClientLeavesASlowRender: a render whose client leaves while it runs
// JavaScript longer than the cancel grace, but within its deadline, is
// answered at the grace and finished by its process, which then serves on:
// no restart. One still running at its deadline is killed then.
func TestClientLeavesASlowRender(t *testing.T) {
	defer func(d time.Duration) { cancelGrace = d }(cancelGrace)
	cancelGrace = 50 * time.Millisecond
	e, _ := newEngine(t, config{StubTimers: true})
	rt := load(t, e, "s", "", `globalThis.finished = false;`)
	pid := running(t, e, 1)[0].PID

	// 1.5 s of JavaScript, the client gone at once, the deadline a minute
	// away: answered as canceled, finished in the background.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := jsvm.NewRequest(nil)
	req.Deadline = time.Now().Add(time.Minute)
	_, err := rt.Eval(ctx, `const end = Date.now() + 1500; while (Date.now() < end) {} globalThis.finished = true; 'slow'`, req)
	if re := renderErr(t, err); re.Kind != jsvm.KindCanceled {
		t.Fatalf("answer %v %q", re.Kind, re.Text)
	}
	if rt.Broken() {
		t.Fatal("the runtime was retired although its process finishes the render")
	}
	if got := mustEval(t, rt, "s", `String(globalThis.finished)`); got != "true" {
		t.Fatalf("the next render saw finished = %s: the slow render did not finish in its process", got)
	}
	if p := e.Processes(); len(p) != 1 || p[0].PID != pid {
		t.Errorf("processes %+v, want the same one (pid %d)", p, pid)
	}
	for reason, n := range e.ProcessRestarts() {
		if n != 0 {
			t.Errorf("%d restarts for %s, want none", n, reason)
		}
	}

	// A render still running at its deadline costs its process then.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	req = jsvm.NewRequest(nil)
	req.Deadline = time.Now().Add(300 * time.Millisecond)
	_, err = rt.Eval(ctx, `while (true) {}`, req)
	if re := renderErr(t, err); re.Kind != jsvm.KindCanceled {
		t.Fatalf("answer %v %q", re.Kind, re.Text)
	}
	waitFor(t, 30*time.Second, "the process killed at the deadline", func() bool { return e.ProcessRestarts()[reasonDeadline] == 1 })
	if n := e.ProcessRestarts()[reasonUnresponsive]; n != 0 {
		t.Errorf("%d restarts as unresponsive, want none", n)
	}
	if got := mustEval(t, rt, "s", `'<p>after</p>'`); got != "<p>after</p>" {
		t.Fatalf("the next render answered %q", got)
	}
	if p := e.Processes(); len(p) != 1 || p[0].PID == pid {
		t.Errorf("processes %+v, want a replacement of pid %d", p, pid)
	}
}

// TestClientLeavesDuringALoad: a render whose client leaves while its
// process evaluates the render's bundle is answered at once; the process
// finishes the load in the background, is kept, and serves the next render
// with the bundle loaded. Killing it (before this) cost a process start and
// its bundles loaded back.
func TestClientLeavesDuringALoad(t *testing.T) {
	e, _ := newEngine(t, config{SupportModules: true})
	dir := t.TempDir()
	prg := gatedBundle(t, e, dir, "b", "hold", "release")
	rt := loadProgram(t, e, prg)
	pid := running(t, e, 1)[0].PID
	// The process evaluates b again on the next render, and stays in it
	// until release exists.
	dropFrom(t, e, 0, prg)
	touch(t, dir, "hold")
	before := e.loadsSent.Load()

	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan error, 1)
	go func() {
		_, err := rt.Eval(ctx, `me`, jsvm.NewRequest(nil))
		out <- err
	}()
	waitFor(t, 10*time.Second, "the load sent", func() bool { return e.loadsSent.Load() == before+1 })
	cancel()
	select {
	case err := <-out:
		if re := renderErr(t, err); re.Kind != jsvm.KindCanceled {
			t.Fatalf("answer %v %q", re.Kind, re.Text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the render whose client left was not answered while its load went on")
	}
	if rt.Broken() {
		t.Fatal("the runtime was retired although its process finishes the load")
	}
	touch(t, dir, "release")
	if got := mustEval(t, rt, "b", `me`); got != "b" {
		t.Fatalf("the next render: %q", got)
	}
	if n := e.loadsSent.Load(); n != before+1 {
		t.Errorf("%d loads sent after the client left, want %d (the next render found b loaded)", n-before, 1)
	}
	if p := e.Processes(); len(p) != 1 || p[0].PID != pid {
		t.Errorf("processes %+v, want the same one (pid %d)", p, pid)
	}
	for reason, n := range e.ProcessRestarts() {
		if n != 0 {
			t.Errorf("%d restarts for %s, want none", n, reason)
		}
	}
}

// TestRecycleAfterMaxRenders: a process is replaced after
// MaxRendersPerProcess renders, between renders, losing none.
func TestRecycleAfterMaxRenders(t *testing.T) {
	e, _ := newEngine(t, config{MaxRendersPerProcess: 3, StubTimers: true})
	rt := load(t, e, "b", "", `var n = 0;`)
	pids := map[int]bool{}
	for i := range 7 {
		waitFor(t, 30*time.Second, "a process", func() bool { return len(e.Processes()) == 1 })
		pids[e.Processes()[0].PID] = true
		if got := mustEval(t, rt, "b", `String(++n)`); got != fmt.Sprint(i%3+1) {
			t.Fatalf("render %d: n = %s (a process keeps its bundle's state until it is replaced)", i, got)
		}
	}
	if len(pids) != 3 {
		t.Errorf("%d processes served 7 renders, want 3", len(pids))
	}
	if got := e.ProcessRestarts()[reasonRecycled]; got < 2 {
		t.Errorf("restarts for recycled = %d, want 2", got)
	}
}

// TestFailedStartsCounted: a process that cannot be started again (here a
// node that exits at once after its first start) counts each failed
// attempt under the "start" reason, and the slot comes back once node
// starts again.
func TestFailedStartsCounted(t *testing.T) {
	real, err := findNode("")
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken")
	node := fakeNode(t, `case "$1" in --version) exec `+real.path+` --version;; esac
[ -e `+broken+` ] && exit 9
: > `+broken+`
exec `+real.path+` "$@"`)
	e, _ := newEngine(t, config{NodePath: node, MaxRendersPerProcess: 1, StubTimers: true})
	rt := load(t, e, "b", "", `var x = 'ok';`)
	if got := mustEval(t, rt, "b", "x"); got != "ok" {
		t.Fatal(got)
	}
	waitFor(t, 30*time.Second, "two failed starts", func() bool { return e.ProcessRestarts()[reasonStart] >= 2 })
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	if got := mustEval(t, rt, "b", "x"); got != "ok" {
		t.Errorf("after node starts again: %q", got)
	}
	if got := e.ProcessRestarts()[reasonRecycled]; got < 1 {
		t.Errorf("restarts for recycled = %d, want at least 1 (all: %v)", got, e.ProcessRestarts())
	}
}

// TestRestartOnSchedule: every RestartInterval each process is replaced,
// one at a time, and renders carry on meanwhile.
func TestRestartOnSchedule(t *testing.T) {
	e, _ := newEngine(t, config{Processes: 2, RestartInterval: 300 * time.Millisecond, RestartDelay: 50 * time.Millisecond, StubTimers: true})
	rt := load(t, e, "b", "", `var x = 'ok';`)
	first := running(t, e, 2)
	deadline := time.Now().Add(20 * time.Second)
	for e.ProcessRestarts()[reasonRecycled] < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("restarts %v after 20 s of a 300 ms schedule", e.ProcessRestarts())
		}
		if got := mustEval(t, rt, "b", "x"); got != "ok" {
			t.Fatal(got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, p := range first {
		waitFor(t, 10*time.Second, "the first processes replaced", func() bool { return !alive(p.PID) })
	}
	running(t, e, 2)
}

// TestClosedProgramsAreUnloaded: once the pools let go of a bundle
// (jsvm.ProgramCloser) and its last runtime closes, no process keeps it:
// the processes of its isolation group are stopped ("evicted"), and fresh
// ones take the first RENDERER_WORKERS_COUNT slots.
func TestClosedProgramsAreUnloaded(t *testing.T) {
	e, _ := newEngine(t, config{Processes: 2, StubTimers: true})
	p, err := e.Compile("gone", "", `var big = new Array(1e6).fill(1);`)
	if err != nil {
		t.Fatal(err)
	}
	var rts []jsvm.Runtime
	for range 2 {
		rt, _ := e.NewRuntime()
		if err := rt.Load(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		rts = append(rts, rt)
	}
	holdEverywhere(t, e, 2, 1)
	before := running(t, e, 2)
	p.(jsvm.ProgramCloser).Close()
	for _, rt := range rts {
		rt.Close()
	}
	for _, ps := range running(t, e, 2) {
		if ps.Bundles != 0 {
			t.Errorf("process %d holds %d bundles after, want 0", ps.Slot, ps.Bundles)
		}
	}
	for _, ps := range before {
		waitFor(t, 10*time.Second, "the bundle's processes stopped", func() bool { return !alive(ps.PID) })
	}
	waitFor(t, 10*time.Second, "2 evictions counted", func() bool { return e.ProcessRestarts()[reasonEvicted] == 2 })
}

// endlessStream never yields to the event loop: each chunk comes from a
// promise that is already resolved.
const endlessStream = `({ getReader: function () { return {
  read: function () { return Promise.resolve({ done: false, value: 'chunk\n' }); },
  cancel: function () { return Promise.resolve(); }
}; } })`

// TestClientLeavesAnEndlessStream: a stream that never yields to the event
// loop still sees its client leave: it is stopped and answered, and its
// process kept.
func TestClientLeavesAnEndlessStream(t *testing.T) {
	// However loaded the machine: a stream that sees the cancel is kept.
	defer func(d time.Duration) { cancelGrace = d }(cancelGrace)
	cancelGrace = 30 * time.Second
	e, _ := newEngine(t, config{StubTimers: true})
	rt := load(t, e, "s", "", `var x;`)
	pid := running(t, e, 1)[0].PID
	sink := conformance.NewRecordingSink()
	sink.FailAt = 100
	req := jsvm.NewRequest(nil)
	req.Sink = sink
	_, err := rt.Eval(context.Background(), endlessStream, req)
	if re := renderErr(t, err); re.Kind != jsvm.KindCanceled || re.Text != jsvm.StreamCanceledText {
		t.Fatalf("answer %v %q", re.Kind, re.Text)
	}
	if rt.Broken() {
		t.Fatal("the process was killed: the stream did not see the cancel")
	}
	if p := e.Processes(); len(p) != 1 || p[0].PID != pid {
		t.Errorf("processes %+v, want the same one (pid %d)", p, pid)
	}
	if got := mustEval(t, rt, "s", `'after'`); got != "after" {
		t.Fatal(got)
	}
}

// TestCloseWhileAProcessLoadsItsBundlesBack: a replacement process that is
// still loading its predecessor's bundles is stopped by Close at once.
func TestCloseWhileAProcessLoadsItsBundlesBack(t *testing.T) {
	e, _ := newEngine(t, config{StubTimers: true})
	// Evaluating this bundle takes 5 s.
	load(t, e, "slow", "", `var end = Date.now() + 5000; while (Date.now() < end) {}`)
	first := running(t, e, 1)[0].PID
	_ = syscall.Kill(first, syscall.SIGKILL)
	var second int
	waitFor(t, 30*time.Second, "the replacement loading the bundle back", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		if p := e.procs[0]; p != nil && p.pid != first && !p.dead.Load() {
			second = p.pid
			return true
		}
		return false
	})
	started := time.Now()
	e.Close()
	if d := time.Since(started); d > 3*time.Second {
		t.Errorf("Close took %s while the replacement loaded its bundles back", d)
	}
	if alive(second) {
		t.Errorf("the replacement %d outlived Close", second)
	}
}

// TestKilledWhileFlooding: a stream that does not stop when its client
// leaves costs its process, its leftover frames dropped, and a replacement
// serves. The cancel grace runs from the last chunk gorender reads
// (cancelGrace), and the executor sends none once it has read the cancel:
// a stream that writes thousands of chunks before a loop that never
// yields, and one whose loop writes chunks for ever (without the
// executor's part, its chunks would hold the grace off for ever).
func TestKilledWhileFlooding(t *testing.T) {
	for name, loop := range map[string]string{
		"thousands of chunks, then a loop": `for (let i = 0; i < 20000; i++) s.write('chunk ' + i); while (true) {}`,
		"chunks in a loop":                 `for (;;) s.write('chunk');`,
	} {
		t.Run(name, func(t *testing.T) {
			e, _ := newEngine(t, config{SupportModules: true})
			rt := load(t, e, "flood", "", `globalThis.PassThrough = require('stream').PassThrough;`)
			pid := running(t, e, 1)[0].PID
			sink := conformance.NewRecordingSink()
			sink.FailAt = 2 // the client leaves after the first chunk
			req := jsvm.NewRequest(nil)
			req.Sink = sink
			code := `var s = new PassThrough();
				s.write('first');
				setTimeout(() => { ` + loop + ` }, 20);
				s`
			_, err := rt.Eval(context.Background(), code, req)
			if re := renderErr(t, err); re.Kind != jsvm.KindCanceled || re.Text != jsvm.StreamCanceledText {
				t.Fatalf("answer %v %q", re.Kind, re.Text)
			}
			if !rt.Broken() {
				t.Error("runtime not retired after its process was killed")
			}
			waitFor(t, 30*time.Second, "the restart counted as unresponsive", func() bool { return e.ProcessRestarts()[reasonUnresponsive] == 1 })
			waitFor(t, 30*time.Second, "a replacement process", func() bool {
				p := e.Processes()
				return len(p) == 1 && p[0].PID != pid
			})
			fresh := load(t, e, "flood", "", `globalThis.PassThrough = require('stream').PassThrough;`)
			if got := mustEval(t, fresh, "flood", `'after'`); got != "after" {
				t.Fatal(got)
			}
		})
	}
}
