package tests

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// What gorender holds of a render's output is bounded in bytes, whatever
// sizes the bundle chooses. The servers run under a data-segment limit
// (soft, so that the node engine can give its processes their own), so
// that a regression fails its test, not the machine; the high-water mark
// of gorender's resident memory must stay far below what the bundle sent.

// heldBytesLimits are the limits of these servers: 600 MiB of data for
// gorender, less than what either test makes the bundle send.
var heldBytesLimits = []string{"--data=629145600:unlimited"}

// peakRSS is a process's resident high-water mark in bytes (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// TestStreamOfLargeChunksToAClientThatNeverReads: a stream of 16 MiB chunks
// (640 MiB in all) to an HTTP/1.1 client that never reads. The stream waits
// for the client (the executor's writes wait on its full pipe, as goja's
// and quickjs's wait in their write), ends at RENDERER_WRITE_TIMEOUT counted
// as idle, and the next render is served; gorender's resident memory never
// passes 200 MiB. Before the bound, the node engine queued 64 chunks per
// render in gorender (1.1 GB) and died at the data limit.
func TestStreamOfLargeChunksToAClientThatNeverReads(t *testing.T) {
	t.Parallel()
	s := startLimitedServer(t, heldBytesLimits, map[string]string{
		"RENDERER_SUPPORT_MODULES": "true", "RENDERER_WORKERS_COUNT": "1",
		"RENDERER_WRITE_TIMEOUT": "2s", "RENDERER_NODE_HEAP_LIMIT": "2GiB",
	})
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("served")}, nil)
	const stream = `(function () {
  var chunk = new TextEncoder().encode('x'.repeat(16 << 20)), n = 0;
  return new ReadableStream({
    pull: function (c) { if (n++ < 40) { c.enqueue(chunk); } else { c.close(); } },
  });
})()`
	defer s.renderUnread(t, id, stream).Close()
	if got := s.waitMetric(t, streamsEnded("idle"), 90*time.Second, func(v float64) bool { return v >= 1 }); got != 1 {
		t.Fatalf("%s = %v, want 1", streamsEnded("idle"), got)
	}
	tr := transports[0]
	s.render(t, tr, id, "MARKER").want(t, tr, http.StatusOK, "served")
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("gorender's resident memory peaked at %d MiB", peak>>20)
	if peak > 200<<20 {
		t.Errorf("gorender's resident memory peaked at %d MiB, want under 200 MiB", peak>>20)
	}
}

// TestTwoResultsOverTheBound: two 500 MB results at once are refused past
// RENDERER_MAX_RESULT_SIZE (64 MiB) with the answer goja and quickjs give,
// the node engine reading and dropping each as it arrives; gorender's
// resident memory never passes 200 MiB, and it serves on. Before the bound
// each result was read whole before the refusal (988 MB). goja and quickjs
// build a result on their own heap before it is measured (bounded by
// RENDERER_MAX_HEAP and RENDERER_QUICKJS_MEMORY_LIMIT), so this is the node
// engine's test.
func TestTwoResultsOverTheBound(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	s := startLimitedServer(t, heldBytesLimits, map[string]string{
		"RENDERER_WORKERS_COUNT": "2", "RENDERER_NODE_HEAP_LIMIT": "2GiB",
	})
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("served")}, nil)
	const huge = `'x'.repeat(500e6)`
	var wg sync.WaitGroup
	for _, tr := range transports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.render(t, tr, id, huge)
			r.wantPrefix(t, tr, http.StatusBadRequest, "The rendering request's result is 500000000 bytes, more than the 67108864 bytes of RENDERER_MAX_RESULT_SIZE: it was not sent.")
		}()
	}
	wg.Wait()
	for _, tr := range transports {
		s.render(t, tr, id, "MARKER").want(t, tr, http.StatusOK, "served")
	}
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("gorender's resident memory peaked at %d MiB", peak>>20)
	if peak > 200<<20 {
		t.Errorf("gorender's resident memory peaked at %d MiB, want under 200 MiB", peak>>20)
	}
}
