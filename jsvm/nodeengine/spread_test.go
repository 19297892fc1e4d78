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

// otherSlot is the slot of the running process other than slot (of two).
func otherSlot(t *testing.T, e *Engine, slot int) int {
	t.Helper()
	for _, p := range running(t, e, 2) {
		if p.Slot != slot {
			return p.Slot
		}
	}
	t.Fatal("no other process")
	return -1
}

// TestSpreadHoldsUpNoRender: a process loading a bundle of its group in
// the background is not given a render another process can take, and a
// render waiting for a process gets the next one freed before the spreader
// does. (Before isolation groups it spread other bundles into a shared
// process; now it is a process of the group that lacks the bundle: one
// replaced since, here one the bundle was dropped from.)
func TestSpreadHoldsUpNoRender(t *testing.T) {
	e, _ := newEngine(t, config{Processes: 2, MaxProcesses: 2, SupportModules: true})
	dir := t.TempDir()
	// s: renders that wait for a gate, and whose evaluation waits while
	// hold exists until release.
	s := gatedBundle(t, e, dir, "s", "hold", "release")
	rtS := loadProgram(t, e, s)
	holdEverywhere(t, e, 2, 1)
	loads := e.loadsSent.Load()

	// A render holds one process; s is dropped from the other, which the
	// spreader leaves alone: it is the only idle one.
	gate1 := evalAsync(t, rtS, "s", `wait('gate1')`)
	waitFor(t, 30*time.Second, "the first render running", func() bool { return len(busySlots(e)) == 1 })
	busy := busySlots(e)[0]
	lacking := otherSlot(t, e, busy)
	dropFrom(t, e, lacking, s)
	touch(t, dir, "hold")
	if n := e.loadsSent.Load(); n != loads {
		t.Fatalf("%d loads while one process was idle, want none", n-loads)
	}

	// Once the render ends, the spreader loads s into the process that
	// lacks it, where it waits for release.
	touch(t, dir, "gate1")
	if got := <-gate1; got != "s" {
		t.Fatal(got)
	}
	waitFor(t, 30*time.Second, "s loading in the background", func() bool {
		b := busySlots(e)
		return e.loadsSent.Load() == loads+1 && len(b) == 1 && b[0] == lacking
	})

	// A render goes to the other process while that load runs.
	if got := mustEval(t, rtS, "s", "me"); got != "s" {
		t.Fatal(got)
	}

	// A render that waits for a process (the other one runs gate2's
	// render) gets the loading one when its load ends.
	gate2 := evalAsync(t, rtS, "s", `wait('gate2')`)
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
	if n := e.loadsSent.Load(); n != loads+1 {
		t.Errorf("%d loads, want 1: the waiting render loaded s", n-loads)
	}
	touch(t, dir, "gate2")
	if got := <-gate2; got != "s" {
		t.Fatal(got)
	}
	holdEverywhere(t, e, 2, 1)
}

// TestFailedSpreadIsNotRetried: a bundle that fails to load in the
// background is not spread again: it loads where a render needs it.
// (Before isolation groups the spreader then went on with another bundle
// in the same processes; a group's processes hold its bundles only.)
func TestFailedSpreadIsNotRetried(t *testing.T) {
	e, logs := newEngine(t, config{Processes: 2, MaxProcesses: 2, SupportModules: true})
	dir := t.TempDir()
	src := fmt.Sprintf(`var fs = require('fs'), path = require('path'), dir = %q;
if (fs.existsSync(path.join(dir, 'fail'))) throw new Error('c fails now');
globalThis.me = 'c';
globalThis.wait = function (name) {
  return new Promise(function (resolve) {
    (function poll() { if (fs.existsSync(path.join(dir, name))) resolve(me); else setTimeout(poll, 5); })();
  });
};`, dir)
	c, err := e.Compile("c", filepath.Join(dir, "c.js"), src)
	if err != nil {
		t.Fatal(err)
	}
	rtC := loadProgram(t, e, c)
	holdEverywhere(t, e, 2, 1)
	// One process busy, c dropped from the other: once the render ends,
	// c's background load there fails.
	gate := evalAsync(t, rtC, "c", `wait('go')`)
	waitFor(t, 30*time.Second, "a render running", func() bool { return len(busySlots(e)) == 1 })
	dropFrom(t, e, otherSlot(t, e, busySlots(e)[0]), c)
	touch(t, dir, "fail")
	loads := e.loadsSent.Load()
	touch(t, dir, "go")
	if got := <-gate; got != "c" {
		t.Fatal(got)
	}
	waitFor(t, 30*time.Second, "the background load failed", func() bool {
		return strings.Contains(logs.String(), "bundle failed to load in the background")
	})
	// Renders come and go, each waking the spreader: c is not tried again.
	for range 5 {
		if got := mustEval(t, rtC, "c", "me"); got != "c" {
			t.Fatal(got)
		}
	}
	if n := e.loadsSent.Load(); n != loads+1 {
		t.Errorf("%d loads, want 1 (c's background load once)", n-loads)
	}
}
