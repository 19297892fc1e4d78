package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// seedCache lays out a pre-seeded cache as a deploy image would: bundles at
// <cache>/<id>/<id>.js and a declaration under .current-generations.
func seedCache(t *testing.T, bundles map[string]string, manifest string) (cache, manifestPath string) {
	t.Helper()
	cache = filepath.Join(t.TempDir(), "seeded")
	for id, src := range bundles {
		if err := os.MkdirAll(filepath.Join(cache, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cache, id, id+".js"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifestPath = filepath.Join(cache, ".current-generations", "gen-1.json")
	if err := os.MkdirAll(filepath.Dir(manifestPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifestPath, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return cache, manifestPath
}

// A declared generation is loaded at start: /ready waits for it, then
// renders need no upload.
func TestCurrentGenerationManifest(t *testing.T) {
	t.Parallel()
	app := newID("s")
	// The slow bundle keeps the load visible: /ready must say what it waits for.
	slow := newID("r")
	slowSrc := `var until = Date.now() + 1500; while (Date.now() < until) {} var SlowReady = true;`
	cache, manifest := seedCache(t, map[string]string{app: reactApp(t), slow: slowSrc},
		`{"bundles": ["`+app+`", "`+slow+`"]}`)
	s := startServer(t, map[string]string{
		"RENDERER_SERVER_BUNDLE_CACHE_PATH":    cache,
		"RENDERER_CURRENT_GENERATION_MANIFEST": manifest,
		"RENDERER_WORKERS_COUNT":               "2",
	})
	tr := transport{name: "h2c", h2c: true}
	r := s.get(t, tr, http.MethodGet, "/ready")
	r.want(t, tr, http.StatusServiceUnavailable, `{"status":"waiting_for_current_generation"}`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		r = s.get(t, tr, http.MethodGet, "/ready")
		if r.Status == http.StatusOK {
			r.want(t, tr, http.StatusOK, `{"status":"ready"}`)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/ready never turned ready: %d %s", r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := must(t)(s.gem(tr).RenderRaw(ctx(t), gemclient.Render{BundleID: app, Code: request(t, "hello-world")}))
	got.want(t, tr, http.StatusOK, golden(t, "hello-world"))
	got = must(t)(s.gem(tr).RenderRaw(ctx(t), gemclient.Render{BundleID: slow, Code: `String(SlowReady)`}))
	got.want(t, tr, http.StatusOK, "true")
}

// A declaration that does not match the cache stops the start with a
// message naming the problem.
func TestCurrentGenerationManifestInvalid(t *testing.T) {
	t.Parallel()
	present := newID("s")
	missing := newID("s")
	cache, manifest := seedCache(t, map[string]string{present: rscStub(t)}, `["`+present+`", "`+missing+`"]`)
	env := map[string]string{
		"RENDERER_HOST":                        "127.0.0.1",
		"RENDERER_PASSWORD":                    testPassword,
		"RENDERER_PORT":                        "0",
		"RENDERER_SERVER_BUNDLE_CACHE_PATH":    cache,
		"RENDERER_CURRENT_GENERATION_MANIFEST": manifest,
	}
	code, _, stderr := runBinary(t, env, "serve")
	if code != 1 || !strings.Contains(stderr, missing) || !strings.Contains(stderr, "not in the cache") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	env["RENDERER_CURRENT_GENERATION_MANIFEST"] = "relative/gen.json"
	if code, _, stderr := runBinary(t, env, "serve"); code != 1 || !strings.Contains(stderr, "absolute path") {
		t.Fatalf("relative manifest: exit %d, stderr:\n%s", code, stderr)
	}
}
