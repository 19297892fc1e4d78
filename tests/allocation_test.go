package tests

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestHostAllocationBound (issue #12 item 3): what a render allocates in
// one call through a host function (crypto.randomBytes, TextEncoder, a
// string copied into Go) or a built-in sized by its caller (Buffer, typed
// arrays, String.prototype.repeat) is bounded by RENDERER_MAX_ALLOCATION:
// over it, a RangeError in JavaScript naming the variable, before the
// memory is taken; the process lives and the next render is served. Before
// the bound, randomBytes(2e9) was answered 200 under RENDERER_MAX_HEAP=1GiB
// (the memory guard sees the heap only once it grew) and two such calls
// ended the process; QuickJS copied such buffers onto the Go heap, outside
// its own memory limit. The server runs under a 3 GiB address-space limit,
// so a regression fails the test, not the machine.
func TestHostAllocationBound(t *testing.T) {
	t.Parallel()
	if testEngine == "node" {
		t.Skip("the node engine's JavaScript allocates in Node.js processes, within Node's own limits and RENDERER_NODE_HEAP_LIMIT: gorender's heap is not at risk")
	}
	s := startLimitedServer(t, []string{"--as=" + fmt.Sprint(3<<30)}, map[string]string{
		"RENDERER_SUPPORT_MODULES": "true",
		"RENDERER_WORKERS_COUNT":   "1",
		"RENDERER_MAX_HEAP":        "1GiB",
		"RENDERER_MAX_ALLOCATION":  "64MiB",
		// quickjs only: below the longest string asked for here.
		"RENDERER_QUICKJS_MEMORY_LIMIT": "256MiB",
	})
	h2 := transports[0]
	id := newID("s")
	// The bundle is a CommonJS module here: it hands its require to the
	// rendering requests.
	s.upload(t, map[string]string{id: markerBundle("alive") + "globalThis.require = require;\n"}, nil)

	// builtin marks what QuickJS allocates in its own memory, bounded by
	// RENDERER_QUICKJS_MEMORY_LIMIT (whose answer names it) rather than by
	// RENDERER_MAX_ALLOCATION.
	for _, c := range []struct {
		name, code string
		builtin    bool
	}{
		{"crypto.randomBytes", "var c = require('crypto'); [c.randomBytes(2e9).length, c.randomBytes(2e9).length].join()", false},
		{"Buffer.alloc", "[Buffer.alloc(2e9).length, Buffer.alloc(2e9).length].join()", true},
		{"Buffer.allocUnsafe", "Buffer.allocUnsafe(2e9).length", true},
		{"Uint8Array", "new Uint8Array(2e9).length", true},
		{"Float64Array", "new Float64Array(2.5e8).length", true},
		{"ArrayBuffer", "new ArrayBuffer(2e9).byteLength", true},
		{"String.prototype.repeat", "'abcd'.repeat(2.5e8).length", true},
		{"String.prototype.padEnd", "''.padEnd(5e8, 'ab').length", true},
		// A string built below the bound, then encoded into more bytes
		// than it: each UTF-16 unit of U+FFFF is 3 UTF-8 bytes.
		{"TextEncoder.encode", "new TextEncoder().encode('\\uffff'.repeat(3e7)).length", false},
		{"Buffer.from(string)", "Buffer.from('\\uffff'.repeat(3e7)).length", false},
	} {
		r := s.render(t, h2, id, c.code)
		bounded := strings.Contains(r.Body, "RangeError") ||
			c.builtin && testEngine == "quickjs" && strings.Contains(r.Body, "RENDERER_QUICKJS_MEMORY_LIMIT")
		if r.Status != http.StatusBadRequest || !bounded {
			t.Errorf("%s: status %d, want 400 with a RangeError; body: %s", c.name, r.Status, clip(r.Body))
		}
		select {
		case <-s.exited:
			t.Fatalf("%s: gorender exited: %v", c.name, s.err)
		default:
		}
		s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, "alive")
	}

	// Below the bound everything works as before.
	s.render(t, h2, id, "require('crypto').randomBytes(1 << 20).length + ','+ Buffer.alloc(1 << 20).length + ',' + 'ab'.repeat(1 << 20).length").
		want(t, h2, http.StatusOK, "1048576,1048576,2097152")

	// The host function's diagnostic names the variable that sets the bound.
	r := s.render(t, h2, id, "require('crypto').randomBytes(1e8)")
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "RENDERER_MAX_ALLOCATION") {
		t.Errorf("randomBytes(1e8): status %d, want 400 naming RENDERER_MAX_ALLOCATION; body: %s", r.Status, clip(r.Body))
	}
}
