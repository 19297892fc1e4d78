package engines

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorender/gorender/jsvm"
)

func TestUnknownEngineAndSupportModules(t *testing.T) {
	if _, err := New("v8", jsvm.Options{}); err == nil || !strings.Contains(err.Error(), "supported: "+strings.Join(Names, ", ")) {
		t.Fatalf("unknown engine: %v", err)
	}
	for _, name := range append([]string{""}, Names...) {
		e, err := New(name, jsvm.Options{SupportModules: true})
		if err != nil {
			t.Fatalf("%q with support modules: %v", name, err)
		}
		if want := cmp.Or(name, "goja"); e.Name() != want {
			t.Fatalf("New(%q).Name() = %q", name, e.Name())
		}
		if c, ok := e.(interface{ Close() }); ok {
			c.Close() // the node engine's processes
		}
	}
}

// TestChoose: auto is the node engine where Node.js 20+ runs confined,
// else goja with the reason.
func TestChoose(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "node18")
	if err := os.WriteFile(old, []byte("#!/bin/sh\necho v18.19.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ nodePath, name, why string }{
		{filepath.Join(dir, "missing"), "goja", "RENDERER_NODE_PATH=" + filepath.Join(dir, "missing")},
		{old, "goja", "needs Node.js 20 or newer; " + old + " is v18.19.0"},
	} {
		name, why := Choose(tc.nodePath)
		if name != tc.name || !strings.Contains(why, tc.why) {
			t.Errorf("Choose(%q) = %q, %q; want %q, containing %q", tc.nodePath, name, why, tc.name, tc.why)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	if name, why := Choose(""); name != "node" || !strings.Contains(why, " at "+node) {
		t.Errorf("Choose(\"\") with %s on PATH = %q, %q; want node, at that path", node, name, why)
	}
}
