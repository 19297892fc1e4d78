package tests

import (
	"net/http"
	"testing"
)

// TestUnreadableThrow (issue #12 item 9): a render that throws a value
// whose message cannot be read (its toString, or its message getter,
// throws in turn) is answered with the usual 400 diagnostic, naming what
// was thrown, and its runtime is kept: before, goja answered "internal
// error in the JavaScript runtime" and replaced the runtime.
func TestUnreadableThrow(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "1"})
	h2 := transports[0]
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("kept")}, nil)
	s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, "kept")

	for _, code := range []string{
		`throw { toString: function () { throw new Error('no text') } }`,
		`throw Object.defineProperty({}, 'message', { get: function () { throw new Error('no message') } })`,
		`Promise.reject({ toString: function () { throw new Error('no text') } })`,
	} {
		r := s.render(t, h2, id, code)
		// The stack: goja's names where the value was thrown, QuickJS's is empty.
		r.wantPrefix(t, h2, http.StatusBadRequest, "JS code for rendering request was:\n"+code+
			"\n\nEXCEPTION MESSAGE:\n[object Object] (thrown; its message cannot be read)\n\nSTACK:\n")
		r.wantNoCacheText(t)
		s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, "kept")
	}
	if got := s.scrapeMetrics(t).value("gorender_runtime_replacements_total"); got != 0 {
		t.Errorf("runtime replacements = %v, want 0: a thrown value is no reason to replace the runtime", got)
	}
}
