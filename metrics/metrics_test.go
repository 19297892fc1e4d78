package metrics

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrape is m's exposition text.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// TestLabelledSeriesCount: the series a request touches count every call,
// by their own label values, whether their child was made on this call or
// found made before.
func TestLabelledSeriesCount(t *testing.T) {
	m := New("test", "goja")
	const route = "/bundles/{bundleId}/render/{renderingRequestDigest}"
	for range 3 {
		m.Request(route, 200)
		m.BodyBytes(route, 10, 100)
		m.Render("ok", time.Millisecond)
		m.GemVersion("4.0.0")
	}
	m.Request(route, 400)
	m.Request("/upload-assets", 200)
	m.BodyBytes("/upload-assets", 1, 2)
	m.Render("js_error", time.Millisecond)
	text := scrape(t, m)
	for _, want := range []string{
		`gorender_http_requests_total{code="200",route="` + route + `"} 3`,
		`gorender_http_requests_total{code="400",route="` + route + `"} 1`,
		`gorender_http_requests_total{code="200",route="/upload-assets"} 1`,
		`gorender_http_request_bytes_total{route="` + route + `"} 30`,
		`gorender_http_response_bytes_total{route="` + route + `"} 300`,
		`gorender_http_request_bytes_total{route="/upload-assets"} 1`,
		`gorender_http_response_bytes_total{route="/upload-assets"} 2`,
		`gorender_render_duration_seconds_count{outcome="ok"} 3`,
		`gorender_render_duration_seconds_count{outcome="js_error"} 1`,
		`gorender_gem_version_requests_total{gem_version="4.0.0"} 3`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("the scrape lacks %s", want)
		}
	}
}

// BenchmarkRenderRequestMetrics is what one render request counts:
// its request, body bytes, render outcome and gem version.
func BenchmarkRenderRequestMetrics(b *testing.B) {
	m := New("test", "goja")
	const route = "/bundles/{bundleId}/render/{renderingRequestDigest}"
	b.ReportAllocs()
	for b.Loop() {
		m.Request(route, 200)
		m.BodyBytes(route, 1500, 900)
		m.Render("ok", time.Millisecond)
		m.GemVersion("4.0.0")
	}
}

// TestGemVersionsBound: the first maxGemVersions versions get a series each
// and are new once; later ones count as "other" and are never new.
func TestGemVersionsBound(t *testing.T) {
	m := New("test", "goja")
	for i := range maxGemVersions + 2 {
		v := "1." + strconv.Itoa(i)
		if first := m.GemVersion(v); first != (i < maxGemVersions) {
			t.Errorf("GemVersion(%s) first = %v", v, first)
		}
		if m.GemVersion(v) {
			t.Errorf("GemVersion(%s) first again", v)
		}
	}
	text := scrape(t, m)
	for _, want := range []string{
		`gorender_gem_version_requests_total{gem_version="1.0"} 2`,
		`gorender_gem_version_requests_total{gem_version="other"} 4`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("the scrape lacks %s", want)
		}
	}
	if strings.Contains(text, `gem_version="1.20"`) {
		t.Error("a version past the bound has a series of its own")
	}
}
