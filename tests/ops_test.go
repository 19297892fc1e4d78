package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOperationalEndpoints covers /info, /health, /ready, /metrics and the
// router's 404 and 405 (PROTOCOL.md §2, §9, §10).
func TestOperationalEndpoints(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)

	// Before any bundle is loaded: not ready.
	for _, tr := range transports {
		r := s.get(t, tr, http.MethodGet, "/ready")
		r.want(t, tr, http.StatusServiceUnavailable, `{"status":"waiting_for_bundle"}`)
		r.wantHeader(t, "Retry-After", "5")
	}
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("ready")}, nil)
	for _, tr := range transports {
		// An upload stores the bundle but loads nothing yet.
		s.get(t, tr, http.MethodGet, "/ready").wantStatus(t, tr, http.StatusServiceUnavailable)
	}
	s.render(t, transports[0], id, "MARKER").want(t, transports[0], http.StatusOK, "ready")

	eachTransport(t, func(t *testing.T, tr transport) {
		t.Run("ready", func(t *testing.T) {
			s.get(t, tr, http.MethodGet, "/ready").want(t, tr, http.StatusOK, `{"status":"ready"}`)
		})
		t.Run("health", func(t *testing.T) {
			r := s.get(t, tr, http.MethodGet, "/health")
			r.want(t, tr, http.StatusOK, `{"status":"ok"}`)
			r.wantContentLength(t)
		})
		t.Run("info", func(t *testing.T) {
			r := s.get(t, tr, http.MethodGet, "/info")
			r.wantStatus(t, tr, http.StatusOK)
			r.wantHeader(t, "Content-Type", "application/json; charset=utf-8")
			r.wantContentLength(t)
			var info map[string]string
			if err := json.Unmarshal([]byte(r.Body), &info); err != nil {
				t.Fatalf("/info is not a JSON object of strings: %v: %s", err, r.Body)
			}
			if testEngine == "node" {
				// The Node.js the executors run, as process.version prints it.
				if want := nodeVersion(t); info["node_version"] != want {
					t.Errorf("node_version = %q, want %q (node --version)", info["node_version"], want)
				}
				if want := wantConfinement(); info["confinement"] != want {
					t.Errorf("confinement = %q, want %s", info["confinement"], want)
				}
			} else if !strings.HasPrefix(info["node_version"], "go1.") {
				t.Errorf("node_version = %q, want the Go version", info["node_version"])
			}
			want := map[string]string{"renderer_version": rendererVersion, "commit": rendererCommit, "build_date": buildDate, "protocol_version": "2.0.0", "engine": testEngine}
			for k, v := range want {
				if info[k] != v {
					t.Errorf("%s = %q, want %q", k, info[k], v)
				}
			}

			head := s.get(t, tr, http.MethodHead, "/info")
			head.want(t, tr, http.StatusOK, "")
			if got := head.Header.Get("Content-Length"); got != strconv.Itoa(len(r.Body)) {
				t.Errorf("HEAD /info Content-Length %q, want %d (the GET body's length)", got, len(r.Body))
			}
		})
		t.Run("metrics", func(t *testing.T) {
			r := s.get(t, tr, http.MethodGet, "/metrics")
			r.wantStatus(t, tr, http.StatusOK)
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("/metrics Content-Type %q, want the Prometheus text format", ct)
			}
			for _, name := range []string{"gorender_http_requests_total", "gorender_build_info", "gorender_render_duration_seconds"} {
				if !strings.Contains(r.Body, "\n# TYPE "+name+" ") {
					t.Errorf("/metrics lacks %s", name)
				}
			}
		})
		t.Run("unknown routes", func(t *testing.T) {
			for _, c := range []struct{ method, path string }{
				{http.MethodGet, "/nope"},
				{http.MethodPost, "/nope"},
				{http.MethodPost, "/bundles/" + id},
				{http.MethodPost, "/bundles/" + id + "/render"},
				{http.MethodPost, "/bundles/" + id + "/render/x/y"},
			} {
				r := s.get(t, tr, c.method, c.path)
				if r.Status != http.StatusNotFound {
					t.Errorf("%s %s: status %d, want 404", c.method, c.path, r.Status)
				}
			}
		})
		t.Run("wrong method", func(t *testing.T) {
			for _, c := range []struct{ method, path string }{
				{http.MethodGet, "/bundles/" + id + "/render/x"},
				{http.MethodPut, "/bundles/" + id + "/render/x"},
				{http.MethodGet, "/upload-assets"},
				{http.MethodGet, "/asset-exists"},
				{http.MethodPost, "/health"},
			} {
				r := s.get(t, tr, c.method, c.path)
				if r.Status != http.StatusMethodNotAllowed {
					t.Errorf("%s %s: status %d, want 405", c.method, c.path, r.Status)
				}
			}
		})
	})
}

// runBinary runs gorender with args and env (no server helper) and returns
// its exit code and output.
func runBinary(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(c, binPath, args...)
	cmd.Env = processEnv(env)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if c.Err() != nil {
		t.Fatalf("gorender %v did not exit within 30 s:\n%s", args, errOut.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	default:
		t.Fatalf("run gorender %v: %v", args, err)
		return 0, "", ""
	}
}

// TestStartupPolicy: gorender refuses to start without a password outside
// development/test, or with an invalid setting (PROTOCOL.md §4.2, §11).
func TestStartupPolicy(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	port := strconv.Itoa(freePort(t))
	cases := []struct {
		name string
		env  map[string]string
		want string // in stderr
	}{
		{"no password, no environment", map[string]string{}, "RENDERER_PASSWORD"},
		{"no password, production", map[string]string{"RAILS_ENV": "production"}, "RENDERER_PASSWORD"},
		{"no password, one environment not test", map[string]string{"RAILS_ENV": "test", "NODE_ENV": "production"}, "RENDERER_PASSWORD"},
		{"bad port", map[string]string{"RENDERER_PASSWORD": testPassword, "RENDERER_PORT": "abc"}, "RENDERER_PORT"},
		{"bad worker count", map[string]string{"RENDERER_PASSWORD": testPassword, "RENDERER_WORKERS_COUNT": "zero"}, "RENDERER_WORKERS_COUNT"},
		{"bad render timeout", map[string]string{"RENDERER_PASSWORD": testPassword, "RENDERER_RENDER_TIMEOUT": "soon"}, "RENDERER_RENDER_TIMEOUT"},
		{"bad node load timeout", map[string]string{"RENDERER_PASSWORD": testPassword, "RENDERER_JS_ENGINE": "node", "RENDERER_NODE_LOAD_TIMEOUT": "-5s"}, `RENDERER_NODE_LOAD_TIMEOUT="-5s": want a positive duration`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"RENDERER_HOST": "127.0.0.1", "RENDERER_PORT": port, "RENDERER_SERVER_BUNDLE_CACHE_PATH": cache}
			for k, v := range c.env {
				env[k] = v
			}
			code, _, stderr := runBinary(t, env, "serve")
			if code != 1 {
				t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr does not name %s:\n%s", c.want, stderr)
			}
			if strings.Contains(stderr, testPassword) {
				t.Errorf("stderr echoes the password:\n%s", stderr)
			}
		})
	}
}

// TestCommands covers `gorender healthcheck` (PROTOCOL.md §13;
// TestVersionFlags `gorender version`).
func TestCommands(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	t.Run("healthcheck live", func(t *testing.T) {
		code, _, stderr := runBinary(t, map[string]string{"RENDERER_HOST": "127.0.0.1", "RENDERER_PORT": strconv.Itoa(s.port)}, "healthcheck")
		if code != 0 {
			t.Errorf("healthcheck against a live server: exit %d:\n%s", code, stderr)
		}
	})
	t.Run("healthcheck default host", func(t *testing.T) {
		// 0.0.0.0 (a container's bind address) is probed on the loopback.
		code, _, stderr := runBinary(t, map[string]string{"RENDERER_HOST": "0.0.0.0", "RENDERER_PORT": strconv.Itoa(s.port)}, "healthcheck")
		if code != 0 {
			t.Errorf("healthcheck with RENDERER_HOST=0.0.0.0: exit %d:\n%s", code, stderr)
		}
	})
	t.Run("healthcheck closed port", func(t *testing.T) {
		code, _, _ := runBinary(t, map[string]string{"RENDERER_HOST": "127.0.0.1", "RENDERER_PORT": strconv.Itoa(freePort(t))}, "healthcheck")
		if code != 1 {
			t.Errorf("healthcheck against a closed port: exit %d, want 1", code)
		}
	})
}
