package tests

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEngineAuto: with RENDERER_JS_ENGINE unset (auto) gorender runs the
// node engine where a Node.js 20+ runs, else goja, says which and why in
// its start-up log, and /info names the engine that renders.
func TestEngineAuto(t *testing.T) {
	t.Parallel()
	h2 := transports[0]
	for _, tc := range []struct {
		name, nodePath, engine, why string
	}{
		{"node found", "", "node", "Node.js v"},
		{"no node", "missing-node", "goja", "RENDERER_NODE_PATH="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"RENDERER_JS_ENGINE": "", "RENDERER_LOG_LEVEL": "info"}
			if tc.nodePath != "" {
				env["RENDERER_NODE_PATH"] = filepath.Join(t.TempDir(), tc.nodePath)
			} else if _, err := exec.LookPath("node"); err != nil {
				t.Skip("no node on PATH: scripts/test.sh puts the one scripts/install-node.sh finds there")
			}
			s := startServer(t, env)
			id := newID("auto")
			s.upload(t, map[string]string{id: markerBundle("auto")}, nil)
			s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, "auto")

			r := s.get(t, h2, http.MethodGet, "/info")
			var info map[string]string
			if err := json.Unmarshal([]byte(r.Body), &info); err != nil {
				t.Fatalf("/info: %v: %s", err, r.Body)
			}
			if info["engine"] != tc.engine {
				t.Errorf("/info engine = %q, want %q", info["engine"], tc.engine)
			}
			s.terminate(t)
			out := s.stderr.String()
			chosen := linesWith(out, "JavaScript engine chosen (RENDERER_JS_ENGINE=auto)")
			if len(chosen) != 1 {
				t.Fatalf("%d lines saying which engine auto chose, want 1:\n%s", len(chosen), out)
			}
			why, _ := chosen[0]["why"].(string)
			if chosen[0]["engine"] != tc.engine || !strings.Contains(why, tc.why) {
				t.Errorf("chosen: engine %v, why %q; want %s, why containing %q", chosen[0]["engine"], why, tc.engine, tc.why)
			}
			if cfg := linesWith(out, "configuration"); len(cfg) != 1 || cfg[0]["RENDERER_JS_ENGINE"] != tc.engine {
				t.Errorf("configuration line: %v, want RENDERER_JS_ENGINE %s", cfg, tc.engine)
			}
		})
	}
}
