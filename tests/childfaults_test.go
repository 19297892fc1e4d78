package tests

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// What a Node.js process says and does is not trusted: a bundle that took
// its process over (vm is no boundary; escape below reaches the executor's
// process object) must not flood gorender's log, pass a crash off as an
// out-of-memory death, or have its breach of the executor protocol counted
// as gorender's bug. These are the node engine's own processes.

// escape is the executor's real process object, from a render.
const escape = `runOnOtherBundle.constructor("return process")()`

// logSince are the lines of the server's log since before that contain s.
func logSince(s *server, before int, sub string) []string {
	var out []string
	for _, line := range strings.Split(s.stderr.String()[before:], "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

// TestNodeOutputFloodIsRateLimited: 5 MiB of one-character lines on a
// process's stderr become at most a rate's worth of log lines and one
// summary of what was dropped, naming the bundle whose code ran last, not
// 2.6 million lines.
func TestNodeOutputFloodIsRateLimited(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "1"})
	h2 := transports[0]
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("served")}, nil)
	before := len(s.stderr.String())
	s.render(t, h2, id, `(function () { `+escape+`.stderr.write("x\n".repeat(5 << 19)); return "printed"; })()`).
		want(t, h2, http.StatusOK, "printed")
	s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, "served")
	deadline := time.Now().Add(30 * time.Second)
	for len(logSince(s, before, "node process output dropped")) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := len(logSince(s, before, `"line":"x"`)); got == 0 || got > 100 {
		t.Errorf("%d lines of the output logged, want some and at most 100", got)
	}
	summaries := logSince(s, before, "node process output dropped")
	if len(summaries) == 0 || len(summaries) > 5 || !strings.Contains(summaries[0], `"lines":`) || !strings.Contains(summaries[0], id) {
		t.Errorf("summaries of the dropped output: %q, want one or a few, with the count and bundle %s", summaries, id)
	}
	if n := len(s.stderr.String()) - before; n > 64<<10 {
		t.Errorf("the flood took %d bytes of log, want at most 64 KiB", n)
	}
}

// TestNodePrintedOOMIsNotAnOOM: a process that prints V8's out-of-memory
// report and then exits is a crash, answered and logged as one (the log
// says what the answer says, not "render timed out"), and counted as crash,
// not oom.
func TestNodePrintedOOMIsNotAnOOM(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "1"})
	h2 := transports[0]
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("served")}, nil)
	before := len(s.stderr.String())
	r := s.render(t, h2, id, `(function () { var P = `+escape+`;
  P.stderr.write("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n");
  P.exit(3); })()`)
	r.wantPrefix(t, h2, http.StatusBadRequest, "Render failed: the Node.js process running it exited unexpectedly (exit status 3")
	s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, "served")
	if lines := logSince(s, before, "render timed out"); len(lines) > 0 {
		t.Errorf("the log says the render timed out where the answer says its process exited: %q", lines)
	}
	if lines := logSince(s, before, "exited unexpectedly (exit status 3"); len(lines) == 0 {
		t.Error("no log line says what the answer says")
	}
	p := s.waitScrape(t, 30*time.Second, "the restart counted", func(p promScrape) bool {
		return p.value("gorender_engine_process_restarts_total", "reason", "crash") >= 1
	})
	if oom := p.value("gorender_engine_process_restarts_total", "reason", "oom"); oom != 0 {
		t.Errorf("restarts for reason oom = %v, want 0: the process printed the words and exited", oom)
	}
}

// TestNodeProtocolBreachIsTheBundles: garbage a render writes on its
// process's answer pipe is the bundle's doing, once bundle code ran there:
// answered naming the bundle, logged with it and not as a gorender bug,
// counted as bundle_fault, not protocol (which alerts).
//
// The forgeries: garbage, and a well-formed frame whose header is past what
// the executor ever sends (maxFrameHeader: a chunk with an empty body and a
// 200 KB header, which gorender would hold at no cost).
func TestNodeProtocolBreachIsTheBundles(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	for name, forge := range map[string]string{
		"garbage": `fs.writeSync(4, "garbage, not a frame: ".repeat(8));`,
		"large header": `const h = Buffer.from(JSON.stringify({ t: "chunk", r: 1, set: { a: "x".repeat(200000) } }));
  const pre = Buffer.alloc(8); pre.writeUInt32LE(h.length, 0);
  fs.writeSync(4, Buffer.concat([pre, h]));`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			protocolBreach(t, forge)
		})
	}
}

func protocolBreach(t *testing.T, forge string) {
	s := startServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "1"})
	h2 := transports[0]
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("served")}, nil)
	before := len(s.stderr.String())
	r := s.render(t, h2, id, `(function () {
  const req = `+escape+`.mainModule.require, fs = req("fs"), Buffer = req("buffer").Buffer;
  `+forge+`
  return "forged"; })()`)
	r.want(t, h2, http.StatusBadRequest, "Render failed: the Node.js process running it broke gorender's executor protocol after bundle code ran in it (bundle "+id+", logged) and was replaced.")
	s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, "served")
	if lines := logSince(s, before, "gorender bug"); len(lines) > 0 {
		t.Errorf("the bundle's breach is logged as gorender's bug: %q", lines)
	}
	if lines := logSince(s, before, "after bundle code ran in it"); len(lines) == 0 || !strings.Contains(lines[0], id) {
		t.Errorf("the breach's log lines %q do not name bundle %s", lines, id)
	}
	p := s.waitScrape(t, 30*time.Second, "the restart counted", func(p promScrape) bool {
		return p.value("gorender_engine_process_restarts_total", "reason", "bundle_fault") == 1
	})
	if got := p.value("gorender_engine_process_restarts_total", "reason", "protocol"); got != 0 {
		t.Errorf("restarts for reason protocol = %v, want 0", got)
	}
}
