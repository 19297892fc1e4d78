package tests

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// What only the node engine has: processes of its own beside gorender's.
// These tests run in the node pass of the suite (scripts/test.sh).

func skipUnlessNode(t *testing.T) {
	t.Helper()
	if testEngine != "node" {
		t.Skipf("the node engine's processes (GORENDER_TEST_ENGINE=node); this pass runs %s", testEngine)
	}
}

// nodeServer starts a server with env (RENDERER_WORKERS_COUNT among it),
// uploads a marker bundle answering marker, and returns them with the
// server's Node.js processes, one per worker.
func nodeServer(t *testing.T, env map[string]string, marker string) (*server, string, []int) {
	t.Helper()
	s := startServer(t, env)
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle(marker)}, nil)
	kids := childrenOf(t, s.cmd.Process.Pid)
	if want, _ := strconv.Atoi(env["RENDERER_WORKERS_COUNT"]); len(kids) != want {
		t.Fatalf("%d child processes, want %d", len(kids), want)
	}
	return s, id, kids
}

// childrenOf lists the processes whose parent is pid (from /proc).
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == pid {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, child)
		}
	}
	return out
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// waitGone waits until none of pids is alive.
func waitGone(t *testing.T, pids []int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var left []int
		for _, pid := range pids {
			if alive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Node.js processes %v still alive %s after gorender exited", left, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNodeProcessesAndMemory: the node engine runs at most
// RENDERER_NODE_MAX_PROCESSES processes (default twice
// RENDERER_WORKERS_COUNT) whatever the number of bundles, each bundle's in
// processes of its own (isolation groups), and /metrics shows each one's
// resident memory. (Before issue 27 the 3 bundles shared the 2 processes.)
func TestNodeProcessesAndMemory(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "2"})
	for i := range 3 {
		id := newID("s")
		s.upload(t, map[string]string{id: markerBundle("bundle " + strconv.Itoa(i))}, nil)
		for _, tr := range transports {
			s.render(t, tr, id, "MARKER").want(t, tr, 200, "bundle "+strconv.Itoa(i))
		}
	}
	kids := childrenOf(t, s.cmd.Process.Pid)
	if len(kids) < 3 || len(kids) > 4 {
		t.Errorf("gorender has %d child processes for 3 bundles, want one per bundle at least and at most 4 (2 × 2 workers): %v", len(kids), kids)
	}
	p := s.scrapeMetrics(t)
	if got := p.value("gorender_engine_processes"); got != float64(len(kids)) {
		t.Errorf("gorender_engine_processes = %v, want %d", got, len(kids))
	}
	for _, slot := range []string{"0", "1"} {
		if rss := p.value("gorender_engine_process_resident_bytes", "process", slot); rss < 10<<20 {
			t.Errorf("process %s: resident bytes %v, want a Node.js process's (> 10 MiB)", slot, rss)
		}
	}
}

// TestNodeShutdownWithBusyProcesses: SIGTERM while both processes run
// renders that never end: the drain gives up at the shutdown timeout, the
// renders are stopped, and no Node.js process outlives gorender.
func TestNodeShutdownWithBusyProcesses(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	s, id, kids := nodeServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "2", "RENDERER_SHUTDOWN_TIMEOUT": "1s"}, "x")
	for _, tr := range transports {
		s.startRender(t, tr, id, runaway)
	}
	s.waitScrape(t, 60*time.Second, "2 runaway renders", func(p promScrape) bool {
		return p.value("gorender_runtimes_busy", "bundle", id) == 2
	})
	s.signal(t, syscall.SIGTERM)
	code := s.waitExit(t, exitTimeout)
	t.Logf("exit code %d", code)
	waitGone(t, kids, 5*time.Second)
}

// TestNodeProcessesDieWithGorender: gorender killed with SIGKILL (no
// shutdown at all) while its processes are busy leaves none behind: the
// kernel kills them with it (PR_SET_PDEATHSIG).
func TestNodeProcessesDieWithGorender(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	s, id, kids := nodeServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "2"}, "x")
	s.startRender(t, transports[0], id, runaway)
	s.waitScrape(t, 60*time.Second, "a runaway render", func(p promScrape) bool {
		return p.value("gorender_runtimes_busy", "bundle", id) == 1
	})
	s.signal(t, syscall.SIGKILL)
	s.waitExit(t, exitTimeout)
	waitGone(t, kids, 5*time.Second)
}

// TestNodeClientLeavesASlowRender: a client that leaves while its render
// runs JavaScript for longer than the cancel grace (250 ms) but within the
// render deadline does not cost the Node.js process: the render finishes in
// it and the process serves the next request (before, it was killed as
// unresponsive and replaced).
func TestNodeClientLeavesASlowRender(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	s, id, kids := nodeServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "1", "RENDERER_RENDER_TIMEOUT": "60s"}, "kept")
	tr := transports[0]
	gone, leave := context.WithCancel(ctx(t))
	answered := make(chan error, 1)
	go func() {
		_, err := s.gem(tr).RenderRaw(gone, gemclient.Render{BundleID: id, Code: `const end = Date.now() + 1500; while (Date.now() < end) {} 'slow'`})
		answered <- err
	}()
	s.waitScrape(t, 60*time.Second, "the slow render running", func(p promScrape) bool {
		return p.value("gorender_runtimes_busy", "bundle", id) == 1
	})
	leave()
	if err := <-answered; err == nil {
		t.Fatal("the request whose client left was answered")
	}
	s.render(t, tr, id, "MARKER").want(t, tr, 200, "kept")
	if now := childrenOf(t, s.cmd.Process.Pid); len(now) != 1 || now[0] != kids[0] {
		t.Errorf("child processes %v, want the same one (%d)", now, kids[0])
	}
	p := s.scrapeMetrics(t)
	for _, reason := range []string{"unresponsive", "deadline"} {
		if v := p.value("gorender_engine_process_restarts_total", "reason", reason); v != 0 {
			t.Errorf("gorender_engine_process_restarts_total{reason=%q} = %v, want 0", reason, v)
		}
	}
}

// TestNodeWorkDirOfKilledGorender: the directory holding the executor is
// removed by Close, which a gorender killed with SIGKILL never runs; the
// next gorender's start removes it (once it is older than a minute, which
// the test fakes) and keeps its own. On main before this every such kill
// left one in the temporary directory for good.
func TestNodeWorkDirOfKilledGorender(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	tmp := t.TempDir()
	workDirs := func() []string {
		dirs, err := filepath.Glob(filepath.Join(tmp, "gorender-node-*"))
		if err != nil {
			t.Fatal(err)
		}
		return dirs
	}
	s := startServer(t, map[string]string{"TMPDIR": tmp, "RENDERER_WORKERS_COUNT": "1"})
	killed := workDirs()
	if len(killed) != 1 {
		t.Fatalf("work directories %v, want 1", killed)
	}
	s.signal(t, syscall.SIGKILL)
	s.waitExit(t, exitTimeout)
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(killed[0], old, old); err != nil {
		t.Fatal(err)
	}

	s = startServer(t, map[string]string{"TMPDIR": tmp, "RENDERER_WORKERS_COUNT": "1"})
	id := newID("w")
	s.upload(t, map[string]string{id: markerBundle("up")}, nil)
	s.render(t, transports[0], id, "MARKER").want(t, transports[0], 200, "up")
	if now := workDirs(); len(now) != 1 || now[0] == killed[0] {
		t.Errorf("work directories %v, want one, not the killed gorender's %s", now, killed[0])
	}
}

// TestNodeLoadTimeout: a bundle whose evaluation outlasts
// RENDERER_NODE_LOAD_TIMEOUT (1 s here, far inside the render's own 60 s
// bound on its load) costs its Node.js process: the render that waited for
// the load is answered 400 naming the configured bound, the process is
// replaced (load_deadline), and the other bundle's process, of another
// isolation group, serves on untouched (before issue 27 both bundles
// shared the one process, and its replacement served the other bundle).
func TestNodeLoadTimeout(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	s, id, kids := nodeServer(t, map[string]string{
		"RENDERER_WORKERS_COUNT":     "1",
		"RENDERER_NODE_LOAD_TIMEOUT": "1s",
		"RENDERER_RENDER_TIMEOUT":    "60s",
		"RENDERER_QUEUE_TIMEOUT":     "60s",
	}, "kept")
	tr := transports[0]
	s.render(t, tr, id, "MARKER").want(t, tr, 200, "kept")
	endless := newID("endless")
	s.upload(t, map[string]string{endless: "while (true) {}"}, nil)
	r := s.render(t, tr, endless, "'never'")
	if r.Status != 400 || !strings.HasPrefix(r.Body, "The bundle failed to load: ") || !strings.Contains(r.Body, "not evaluated within 1s; its process was killed") {
		t.Errorf("answer %d %q, want 400 The bundle failed to load, naming the 1 s load timeout", r.Status, clip(r.Body))
	}
	s.render(t, tr, id, "MARKER").want(t, tr, 200, "kept")
	if now := childrenOf(t, s.cmd.Process.Pid); !slices.Contains(now, kids[0]) || len(now) > 2 {
		t.Errorf("child processes %v, want %d (the other bundle's) among at most 2", now, kids[0])
	}
	if v := s.scrapeMetrics(t).value("gorender_engine_process_restarts_total", "reason", "load_deadline"); v != 1 {
		t.Errorf("gorender_engine_process_restarts_total{reason=\"load_deadline\"} = %v, want 1", v)
	}
}

// replaceFile replaces path's content at once (a new file renamed over
// it), as an upload does: a process that loads the bundle in the
// background meanwhile reads the old content or the new, never the empty
// file os.WriteFile leaves between its truncation and its write.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestNodeLoadFailsInAnotherProcess: a bundle that loaded in one Node.js
// process and fails to load in another, where a render needs it (a file
// it requires at load was corrupted in its directory between the two
// loads), answers that render as any bundle that fails to load: 400 The
// bundle failed to load, naming the error (before, 500 Internal error);
// the process that has the bundle keeps serving it.
//
// The order is forced: a gated render of another bundle holds one process
// (P1), the bundle loads in the other (P2) for a gated render of its own,
// the required file is corrupted, and a second render of the bundle, whose
// runtime is made while neither process is idle (so it loads nothing
// then), waits for a process of the bundle's isolation group: one started
// for it (before issue 27, P1 once released), which must load the bundle.
// RENDERER_NODE_QUEUE_DEPTH=1 keeps it from queueing on P2.
func TestNodeLoadFailsInAnotherProcess(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	s := startServer(t, map[string]string{
		"RENDERER_WORKERS_COUNT":    "2",
		"RENDERER_NODE_QUEUE_DEPTH": "1",
		"RENDERER_SUPPORT_MODULES":  "true",
		"RENDERER_RENDER_TIMEOUT":   "60s",
		"RENDERER_QUEUE_TIMEOUT":    "60s",
	})
	tr := transports[0]
	kids := childrenOf(t, s.cmd.Process.Pid)
	holder, id := newID("s"), newID("s")
	s.upload(t, map[string]string{
		holder: markerBundle("holder") + streamGate,
		id:     "globalThis.PART = require('./part.js');\n" + streamGate,
	}, map[string]string{"part.js": "module.exports = 'part';\n"})
	busy := func(what string, bundle string, n float64) {
		t.Helper()
		s.waitScrape(t, 60*time.Second, what, func(p promScrape) bool { return p.value("gorender_runtimes_busy", "bundle", bundle) == n })
	}
	gated := func(bundle, gate string) <-chan *response {
		answered := make(chan *response, 1)
		go func() {
			code := fmt.Sprintf("streamGate(%q, PART + ' ' + %q)", gate, gate)
			if bundle == holder {
				code = fmt.Sprintf("streamGate(%q, MARKER)", gate)
			}
			r, err := s.gem(tr).RenderRaw(ctx(t), gemclient.Render{BundleID: bundle, Code: code})
			if err != nil {
				t.Errorf("render %s: %v", gate, err)
				answered <- &response{}
				return
			}
			answered <- convert(r)
		}()
		return answered
	}
	release := func(bundle, gate string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(s.cache, bundle, gate), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	held := gated(holder, "release-holder")
	busy("the holder's render running", holder, 1)
	first := gated(id, "release-first")
	busy("the bundle's first render running", id, 1)
	replaceFile(t, filepath.Join(s.cache, id, "part.js"), "throw new Error('part.js is corrupted');\n")
	second := make(chan *response, 1)
	go func() {
		r, err := s.gem(tr).RenderRaw(ctx(t), gemclient.Render{BundleID: id, Code: "PART + ' second'"})
		if err != nil {
			t.Errorf("second render: %v", err)
			second <- &response{}
			return
		}
		second <- convert(r)
	}()
	busy("the bundle's second render waiting for a process", id, 2)
	release(holder, "release-holder")
	if r := <-held; r.Status != http.StatusOK || r.Body != "holder" {
		t.Errorf("the holder's render: %d %q", r.Status, clip(r.Body))
	}
	r := <-second
	if r.Status != http.StatusBadRequest || !strings.HasPrefix(r.Body, "The bundle failed to load: bundle "+id+" failed to load: ") ||
		!strings.Contains(r.Body, "part.js is corrupted") {
		t.Errorf("the render whose process failed to load the bundle: %d %q, want 400 The bundle failed to load: bundle %s failed to load: ..., naming the error", r.Status, clip(r.Body), id)
	}
	if strings.Contains(r.Body, s.cache) {
		t.Errorf("the answer names the cache path: %q", clip(r.Body))
	}
	release(id, "release-first")
	if r := <-first; r.Status != http.StatusOK || r.Body != "part release-first" {
		t.Errorf("the bundle's first render: %d %q", r.Status, clip(r.Body))
	}
	// With its file whole again the bundle renders wherever it goes (the
	// process that failed to load it loads it now), and the processes from
	// the start still run (the bundle's group may have started a third
	// for the render that waited: before issue 27 it took the holder's).
	replaceFile(t, filepath.Join(s.cache, id, "part.js"), "module.exports = 'part';\n")
	for range 2 {
		s.render(t, tr, id, "PART + ' still served'").want(t, tr, http.StatusOK, "part still served")
		s.render(t, tr, holder, "MARKER").want(t, tr, http.StatusOK, "holder")
	}
	now := childrenOf(t, s.cmd.Process.Pid)
	for _, kid := range kids {
		if !slices.Contains(now, kid) {
			t.Errorf("child processes %v, want those from the start %v among them", now, kids)
		}
	}
	if len(now) > 4 {
		t.Errorf("%d child processes, want at most 4 (2 × 2 workers)", len(now))
	}
}
