package tests

import (
	"net/http"
	"strings"
	"testing"
)

// TestConsoleHistoryBound (issue #12 item 10): a render's console history,
// which react-on-rails replays into the page, keeps at most
// RENDERER_CONSOLE_MAX_LINES entries and RENDERER_CONSOLE_MAX_BYTES of
// text; past either, one last entry says how much was left out. Before, it
// grew with every call (2 million console.log calls took the heap to
// 1.67 GB in 5 s).
func TestConsoleHistoryBound(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{
		"RENDERER_WORKERS_COUNT":     "1",
		"RENDERER_CONSOLE_MAX_LINES": "100",
		"RENDERER_CONSOLE_MAX_BYTES": "1MiB",
	})
	h2 := transports[0]
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("alive")}, nil)

	// summary is the history's length and its last entry.
	const summary = "; var h = console.history, last = h[h.length - 1]; h.length + ' ' + last.level + ' ' + last.arguments[0]"
	s.render(t, h2, id, "for (var i = 0; i < 1000; i++) console.log('line ' + i)"+summary).
		want(t, h2, http.StatusOK, "101 warn [SERVER] gorender: 900 more console lines of this render were not kept (RENDERER_CONSOLE_MAX_LINES 100, RENDERER_CONSOLE_MAX_BYTES 1048576)")
	// 300 KiB a line: the fourth passes the bytes.
	s.render(t, h2, id, "for (var i = 0; i < 10; i++) console.error('x'.repeat(300 * 1024))"+summary).
		want(t, h2, http.StatusOK, "4 warn [SERVER] gorender: 7 more console lines of this render were not kept (RENDERER_CONSOLE_MAX_LINES 100, RENDERER_CONSOLE_MAX_BYTES 1048576)")
	// Below the bounds nothing changes; each render starts afresh.
	s.render(t, h2, id, "console.log('a', 1); console.warn('b')"+summary).
		want(t, h2, http.StatusOK, "2 warn [SERVER] b")
}

// TestResultSizeBound (issue #12 item 10): a render whose result is longer
// than RENDERER_MAX_RESULT_SIZE is answered 400 naming the variable, not
// sent. Before, a 300 MB result was answered in full.
func TestResultSizeBound(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{
		"RENDERER_WORKERS_COUNT":   "1",
		"RENDERER_MAX_RESULT_SIZE": "1MiB",
	})
	h2 := transports[0]
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("alive")}, nil)

	r := s.render(t, h2, id, "'x'.repeat(1024 * 1024 + 1)")
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "RENDERER_MAX_RESULT_SIZE") || len(r.Body) > 4096 {
		t.Errorf("a result of 1 MiB + 1 byte: status %d (%d bytes), want a short 400 naming RENDERER_MAX_RESULT_SIZE; body: %s", r.Status, len(r.Body), clip(r.Body))
	}
	// UTF-8 bytes count, not characters: 350,000 × U+FFFF is 1,050,000 bytes.
	r = s.render(t, h2, id, "'\\uffff'.repeat(350000)")
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "RENDERER_MAX_RESULT_SIZE") {
		t.Errorf("a result of 1,050,000 UTF-8 bytes: status %d, want 400 naming RENDERER_MAX_RESULT_SIZE; body: %s", r.Status, clip(r.Body))
	}
	// At the bound it is answered; the runtime serves on.
	r = s.render(t, h2, id, "'x'.repeat(1024 * 1024)")
	if r.Status != http.StatusOK || len(r.Body) != 1<<20 {
		t.Errorf("a result of 1 MiB: status %d, %d bytes, want 200 with all of it", r.Status, len(r.Body))
	}
	s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, "alive")
}

// TestErrorSizeBound (issue #12 item 10): the exception message and stack
// of a failed render are each echoed at most 64 KiB (their middle cut out,
// as the 1,000-character rule does for the rendering request). Before, a
// 50 MB message came back as a 100 MB 400 body (message and stack).
func TestErrorSizeBound(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "1"})
	h2 := transports[0]
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("alive")}, nil)

	for _, code := range []string{
		"throw new Error('<' + 'x'.repeat(5e7) + '>')",
		"Promise.reject(new TypeError('<' + 'x'.repeat(5e7) + '>'))",
		"throw '<' + 'x'.repeat(5e7) + '>'",
	} {
		r := s.render(t, h2, id, code)
		if r.Status != http.StatusBadRequest || len(r.Body) > 2*64<<10+4096 {
			t.Errorf("%s: status %d, %d bytes; want a 400 of at most 2 × 64 KiB and the rest: %s", code, r.Status, len(r.Body), clip(r.Body))
		}
		for _, want := range []string{"EXCEPTION MESSAGE:\n", "<xxx", "... TRUNCATED ...", "xxx>"} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("%s: the answer lacks %q: %s", code, want, clip(r.Body))
			}
		}
	}
	s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, "alive")
}
