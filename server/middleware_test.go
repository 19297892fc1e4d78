package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/gorender/gorender/metrics"
)

// metricsText scrapes m.
func metricsText(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// TestObserveCountsBodyBytes: observe counts the request body bytes read
// and the response body bytes written, by route, and its wrappers keep
// http.ResponseController working (Flush through Unwrap).
func TestObserveCountsBodyBytes(t *testing.T) {
	m := metrics.New("test", "goja")
	r := chi.NewRouter()
	r.Use(observe(slog.New(slog.DiscardHandler), slog.LevelError, m, nil))
	r.Post("/echo/{id}", func(w http.ResponseWriter, req *http.Request) {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			t.Errorf("read body: %v", err)
		}
		rc := http.NewResponseController(w)
		_, _ = w.Write(b[:3])
		if err := rc.Flush(); err != nil {
			t.Errorf("Flush through the recorder: %v", err)
		}
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("SetWriteDeadline through the recorder: %v", err)
		}
		_, _ = io.WriteString(w, "+"+string(b[3:]))
	})
	r.Head("/echo/{id}", func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.WriteString(w, "not sent on HEAD")
	})
	srv := httptest.NewServer(r)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/echo/1", "text/plain", strings.NewReader("0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "012+3456789" {
		t.Fatalf("answer %q", b)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodHead, srv.URL+"/echo/2", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}

	text := metricsText(t, m)
	for _, want := range []string{
		`gorender_http_request_bytes_total{route="/echo/{id}"} 10`,
		`gorender_http_response_bytes_total{route="/echo/{id}"} 11`,
		`gorender_http_requests_total{code="200",route="/echo/{id}"} 2`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
}
