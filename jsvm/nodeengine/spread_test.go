package nodeengine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// gatedBundle writes a bundle (with RENDERER_SUPPORT_MODULES semantics: it
// lives in dir and reads it) whose global wait(name) is a render that ends
// once the file name exists in dir, block(name) the same in synchronous
// JavaScript (its process reads nothing meanwhile), and whose evaluation
// first waits, while hold exists in dir, until release exists ("" for
// none).
func gatedBundle(t *testing.T, e *Engine, dir, name, hold, release string) jsvm.Program {
	t.Helper()
	src := fmt.Sprintf(`var fs = require('fs'), path = require('path'), dir = %q;
var sleeper = new Int32Array(new SharedArrayBuffer(4));
if (%q !== '' && fs.existsSync(path.join(dir, %q))) {
  while (%q === '' || !fs.existsSync(path.join(dir, %q))) Atomics.wait(sleeper, 0, 0, 5);
}
globalThis.me = %q;
globalThis.wait = function (name) {
  return new Promise(function (resolve) {
    (function poll() { if (fs.existsSync(path.join(dir, name))) resolve(me); else setTimeout(poll, 5); })();
  });
};
globalThis.block = function (name) {
  while (!fs.existsSync(path.join(dir, name))) Atomics.wait(sleeper, 0, 0, 5);
  return me;
};`, dir, hold, hold, release, release, name)
	file := filepath.Join(dir, name+".js")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prg, err := e.Compile(name, file, src)
	if err != nil {
		t.Fatal(err)
	}
	return prg
}

func touch(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// evalAsync renders code on rt in the background; the answer arrives on
// the channel.
func evalAsync(t *testing.T, rt jsvm.Runtime, name, code string) <-chan string {
	out := make(chan string, 1)
	go func() {
		got, err := eval(t, rt, name, code)
		if err != nil {
			got = "error: " + err.Error()
		}
		out <- got
	}()
	return out
}

// holdEverywhere waits until each of the w processes holds n bundles.
func holdEverywhere(t *testing.T, e *Engine, w, n int) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("%d bundles in every process", n), func() bool {
		for _, p := range running(t, e, w) {
			if p.Bundles != n {
				return false
			}
		}
		return true
	})
}

// busySlots is the slots of the processes reserved now.
func busySlots(e *Engine) []int {
	var slots []int
	for _, p := range e.Processes() {
		if p.Busy {
			slots = append(slots, p.Slot)
		}
	}
	return slots
}

// TestBundleSpreadsToEveryProcess: after a bundle's first load and render,
// every process evaluates it in the background, so the next W concurrent
// renders, one in each process, are all warm: no process is sent the
// bundle again.
func TestBundleSpreadsToEveryProcess(t *testing.T) {
	const w = 3
	e, _ := newEngine(t, config{Processes: w, SupportModules: true})
	dir := t.TempDir()
	prg := gatedBundle(t, e, dir, "b", "", "")
	rts := []jsvm.Runtime{loadProgram(t, e, prg)}
	if got := mustEval(t, rts[0], "b", "me"); got != "b" {
		t.Fatal(got)
	}
	holdEverywhere(t, e, w, 1)
	if n := e.loadsSent.Load(); n != w {
		t.Fatalf("%d loads for %d processes", n, w)
	}
	for range w - 1 { // a pool of W runtimes, as the pools fill up
		rts = append(rts, loadProgram(t, e, prg))
	}
	var answers []<-chan string
	for _, rt := range rts {
		answers = append(answers, evalAsync(t, rt, "b", `wait('go')`))
	}
	// Each render holds its process until go exists: W renders at once
	// take the W processes.
	waitFor(t, 30*time.Second, "a render in every process", func() bool { return len(busySlots(e)) == w })
	touch(t, dir, "go")
	for _, a := range answers {
		if got := <-a; got != "b" {
			t.Errorf("render: %q", got)
		}
	}
	if n := e.loadsSent.Load(); n != w {
		t.Errorf("%d loads after %d concurrent renders, want %d: a render loaded the bundle", n, w, w)
	}
}

// TestSpreadHoldsUpNoRender: a process loading a bundle in the background
// is not given a render another process can take, and a render waiting for
// a process gets the next one freed before the spreader does.
func TestSpreadHoldsUpNoRender(t *testing.T) {
	e, _ := newEngine(t, config{Processes: 2, SupportModules: true})
	dir := t.TempDir()
	// g: renders that wait for a gate; s and t: bundles whose evaluation
	// waits while hold (hold2) exists until release (for ever).
	g := gatedBundle(t, e, dir, "g", "", "")
	s := gatedBundle(t, e, dir, "s", "hold", "release")
	tb := gatedBundle(t, e, dir, "t", "hold2", "")
	rtG := loadProgram(t, e, g)
	holdEverywhere(t, e, 2, 1)

	// A render holds one process (busy); s and t load into the other,
	// which the spreader leaves alone: it is the only idle one.
	gate1 := evalAsync(t, rtG, "g", `wait('gate1')`)
	waitFor(t, 30*time.Second, "the first render running", func() bool { return len(busySlots(e)) == 1 })
	busy := busySlots(e)[0]
	rtS := loadProgram(t, e, s)
	loadProgram(t, e, tb)
	if n := e.loadsSent.Load(); n != 4 {
		t.Fatalf("%d loads, want 4 (g twice, s, t)", n)
	}

	// Once the render ends, the spreader loads s (the older bundle) into
	// its process, where it waits for release.
	touch(t, dir, "hold")
	touch(t, dir, "hold2")
	touch(t, dir, "gate1")
	if got := <-gate1; got != "g" {
		t.Fatal(got)
	}
	waitFor(t, 30*time.Second, "s loading in the background", func() bool {
		b := busySlots(e)
		return e.loadsSent.Load() == 5 && len(b) == 1 && b[0] == busy
	})

	// A render goes to the other process while that load runs.
	if got := mustEval(t, rtS, "s", "me"); got != "s" {
		t.Fatal(got)
	}
	if got := mustEval(t, rtG, "g", "me"); got != "g" {
		t.Fatal(got)
	}

	// A render that waits for a process (the other one runs gate2's
	// render) gets the loading one when its load ends, before the spreader
	// could load t into it (which would wait while hold2 exists).
	gate2 := evalAsync(t, rtG, "g", `wait('gate2')`)
	waitFor(t, 30*time.Second, "both processes busy", func() bool { return len(busySlots(e)) == 2 })
	waiting := evalAsync(t, rtS, "s", "me")
	waitFor(t, 30*time.Second, "a render waiting", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.waiters) == 1
	})
	touch(t, dir, "release")
	select {
	case got := <-waiting:
		if got != "s" {
			t.Fatal(got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting render did not get the process that finished loading")
	}
	if n := e.loadsSent.Load(); n != 5 {
		t.Errorf("%d loads, want 5: the waiting render loaded s", n)
	}

	// Once both are idle, t spreads too.
	if err := os.Remove(filepath.Join(dir, "hold2")); err != nil {
		t.Fatal(err)
	}
	touch(t, dir, "gate2")
	if got := <-gate2; got != "g" {
		t.Fatal(got)
	}
	holdEverywhere(t, e, 2, 3)
}

// TestFailedSpreadIsNotRetried: a bundle that fails to load in the
// background is not spread again (it loads where a render needs it), and
// the spreader goes on with the others.
func TestFailedSpreadIsNotRetried(t *testing.T) {
	e, logs := newEngine(t, config{Processes: 2, SupportModules: true})
	dir := t.TempDir()
	g := gatedBundle(t, e, dir, "g", "", "")
	rtG := loadProgram(t, e, g)
	holdEverywhere(t, e, 2, 1)
	// One process busy: c loads into the other only, then fails to load
	// anywhere else.
	gate := evalAsync(t, rtG, "g", `wait('go')`)
	waitFor(t, 30*time.Second, "a render running", func() bool { return len(busySlots(e)) == 1 })
	src := fmt.Sprintf(`if (require('fs').existsSync(%q)) throw new Error('c fails now'); var me = 'c';`, filepath.Join(dir, "fail"))
	c, err := e.Compile("c", filepath.Join(dir, "c.js"), src)
	if err != nil {
		t.Fatal(err)
	}
	loadProgram(t, e, c)
	touch(t, dir, "fail")
	touch(t, dir, "go")
	if got := <-gate; got != "g" {
		t.Fatal(got)
	}
	waitFor(t, 30*time.Second, "the background load failed", func() bool {
		return strings.Contains(logs.String(), "bundle failed to load in the background")
	})
	// d spreads; c, older, would come first if it were tried again.
	loadProgram(t, e, gatedBundle(t, e, dir, "d", "", ""))
	waitFor(t, 30*time.Second, "d in both processes", func() bool {
		n := 0
		for _, p := range running(t, e, 2) {
			n += p.Bundles
		}
		return n == 5 // g twice, c once, d twice
	})
	if n := e.loadsSent.Load(); n != 6 {
		t.Errorf("%d loads, want 6 (g, c and d twice each: c's background load once)", n)
	}
}
