package bench

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorender/gorender/auth"
	"github.com/gorender/gorender/gemclient"
	"github.com/gorender/gorender/handlers"
)

// encodeRender is EncodeRender with a fixed password; it fails the test
// on an unknown encoding.
func encodeRender(tb testing.TB, enc, code string) Encoded {
	tb.Helper()
	e, err := EncodeRender(enc, code, "bench-password-0123456789")
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// BenchmarkDecodeBody decodes a render request body (handlers.DecodeBody)
// in each encoding, for each workload's request, with the server's password
// gate (its head read and checked before the body is decoded). Multipart
// carries text parts only (a render that re-sends a bundle stages it to
// disk: not measured here).
func BenchmarkDecodeBody(b *testing.B) {
	gate := handlers.EarlyPrecheck(auth.NewPassword("bench-password-0123456789"), "", false)
	opts := handlers.DecodeOptions{BeforeBody: gate, BeforeDecode: gate, BeforeFirstFile: gate}
	ws, err := Workloads()
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range ws {
		for _, enc := range []string{"raw", "json", "form", "multipart"} {
			e := encodeRender(b, enc, w.Code)
			b.Run(w.Name+"/"+enc, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(e.Body)))
				cpu := processCPU(b)
				for b.Loop() {
					r := httptest.NewRequest(http.MethodPost, "/bundles/x/render/d", bytes.NewReader(e.Body))
					r.Header.Set("Content-Type", e.ContentType)
					for k, v := range e.Header {
						r.Header[k] = v
					}
					f, herr := handlers.DecodeBody(httptest.NewRecorder(), r, opts)
					if herr != nil {
						b.Fatalf("decode: %d %s", herr.Status, herr.Body)
					}
					if s, _ := f.Text("renderingRequest"); len(s) != len(w.Code) {
						b.Fatalf("renderingRequest has %d bytes, want %d", len(s), len(w.Code))
					}
				}
				// CPU time (the collector's included) is steadier than wall
				// time on a shared machine.
				b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
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

// TestEncodeRender checks that every encoding decodes to the same request.
func TestEncodeRender(t *testing.T) {
	code := "'<p>é & ü</p>'\n" + strings.Repeat("x", 10)
	for _, enc := range []string{"raw", "json", "form", "multipart"} {
		e := encodeRender(t, enc, code)
		r := httptest.NewRequest(http.MethodPost, "/bundles/x/render/d", bytes.NewReader(e.Body))
		r.Header.Set("Content-Type", e.ContentType)
		for k, v := range e.Header {
			r.Header[k] = v
		}
		f, herr := handlers.DecodeBody(httptest.NewRecorder(), r, handlers.DecodeOptions{})
		if herr != nil {
			t.Fatalf("%s: %d %s", enc, herr.Status, herr.Body)
		}
		if s, _ := f.Text("renderingRequest"); s != code {
			t.Fatalf("%s: renderingRequest = %q", enc, s)
		}
		if s, _ := f.Text("protocolVersion"); s != gemclient.ProtocolVersion {
			t.Fatalf("%s: protocolVersion = %q", enc, s)
		}
	}
}
