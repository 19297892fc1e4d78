package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorender/gorender/config"
	"github.com/gorender/gorender/gemclient"
)

// BenchmarkRequestPath serves bench/'s hello workload (a raw-JS render
// answering '<p>hello</p>': no React, the transport and protocol cost)
// through gorender's whole handler chain in process: router, middleware,
// body decoding, prechecks, the pools and the engine: goja, and node (its
// Go side: cpu-ns/op counts this process, not its Node.js children; one
// render at a time, so none is pipelined). traces=off is the default
// configuration; traces=on exports every request's spans over OTLP/HTTP to
// a receiver on loopback that discards them (the batch export runs on its
// own goroutine, as in production).
func BenchmarkRequestPath(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	for _, run := range []struct{ engine, traces string }{{"goja", "off"}, {"goja", "on"}, {"node", "off"}} {
		b.Run("engine="+run.engine+"/traces="+run.traces, func(b *testing.B) {
			if run.engine == "node" {
				if _, err := exec.LookPath("node"); err != nil {
					b.Skip("no node on PATH")
				}
			}
			vars := map[string]string{
				"RENDERER_PASSWORD":                 "a-long-enough-secret-value",
				"RENDERER_SERVER_BUNDLE_CACHE_PATH": b.TempDir(),
				"RENDERER_WORKERS_COUNT":            "1",
				"RENDERER_JS_ENGINE":                run.engine,
			}
			if run.traces == "on" {
				vars["OTEL_EXPORTER_OTLP_ENDPOINT"] = sink.URL
			}
			cfg, err := config.Load(func(k string) string { return vars[k] }, 0)
			if err != nil {
				b.Fatal(err)
			}
			const id = "bench-hello"
			dir := filepath.Join(cfg.CachePath, id)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, id+".js"), []byte("globalThis.loaded = true;\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			s, err := New(cfg, Build{Version: "bench"}, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			defer s.flushTraces()
			defer s.closeEngine()
			defer s.pools.Close()
			render := func() {
				req := httptest.NewRequest(http.MethodPost, "/bundles/"+id+"/render/digest", strings.NewReader("'<p>hello</p>'"))
				req.Header.Set("Content-Type", gemclient.RawJSContentType)
				req.Header.Set("X-React-On-Rails-Pro-Protocol-Version", gemclient.ProtocolVersion)
				req.Header.Set("X-React-On-Rails-Pro-Gem-Version", "17.0.0")
				req.Header.Set("X-React-On-Rails-Pro-Dependency-Bundle-Timestamps", "[]")
				req.Header.Set("Authorization", "Bearer "+cfg.Password)
				rec := httptest.NewRecorder()
				s.handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || rec.Body.String() != "<p>hello</p>" {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			render() // loads the bundle
			b.ReportAllocs()
			cpu := processCPU(b)
			for b.Loop() {
				render()
			}
			// CPU time is steadier than wall time on a shared machine, and
			// counts the export goroutines too.
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time the process has used so far, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
