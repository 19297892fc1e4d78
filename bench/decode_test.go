package bench

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gorender/gorender/gemclient"
	"github.com/gorender/gorender/handlers"
)

// encodedBody is one render request body in one of the four encodings
// (PROTOCOL.md §3.1), built the way the gem (gemclient) sends it.
type encodedBody struct {
	contentType string
	header      http.Header
	body        []byte
}

func encodeRender(enc, code string) encodedBody {
	meta := map[string]string{"protocolVersion": gemclient.ProtocolVersion, "gemVersion": "17.0.0", "railsEnv": "production", "password": "bench-password-0123456789"}
	switch enc {
	case "raw":
		h := http.Header{}
		h.Set("X-React-On-Rails-Pro-Protocol-Version", meta["protocolVersion"])
		h.Set("X-React-On-Rails-Pro-Gem-Version", meta["gemVersion"])
		h.Set("X-React-On-Rails-Pro-Rails-Env", meta["railsEnv"])
		h.Set("X-React-On-Rails-Pro-Dependency-Bundle-Timestamps", "[]")
		h.Set("Authorization", "Bearer "+meta["password"])
		return encodedBody{gemclient.RawJSContentType, h, []byte(code)}
	case "json":
		m := map[string]any{"renderingRequest": code, "dependencyBundleTimestamps": []string{}}
		for k, v := range meta {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return encodedBody{"application/json", nil, b}
	case "form":
		v := url.Values{}
		for k, x := range meta {
			v.Set(k, x)
		}
		v.Set("renderingRequest", code)
		return encodedBody{"application/x-www-form-urlencoded", nil, []byte(v.Encode())}
	case "multipart":
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.SetBoundary(gemclient.Boundary())
		for _, k := range []string{"password", "gemVersion", "protocolVersion", "railsEnv"} {
			_ = mw.WriteField(k, meta[k])
		}
		_ = mw.WriteField("renderingRequest", code)
		_ = mw.Close()
		return encodedBody{mw.FormDataContentType(), nil, buf.Bytes()}
	}
	panic("unknown encoding " + enc)
}

// BenchmarkDecodeBody decodes a render request body (handlers.DecodeBody)
// in each encoding, for each workload's request. Multipart carries text
// parts only (a render that re-sends a bundle stages it to disk: not
// measured here).
func BenchmarkDecodeBody(b *testing.B) {
	ws, err := Workloads()
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range ws {
		for _, enc := range []string{"raw", "json", "form", "multipart"} {
			e := encodeRender(enc, w.Code)
			b.Run(w.Name+"/"+enc, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(e.body)))
				for b.Loop() {
					r := httptest.NewRequest(http.MethodPost, "/bundles/x/render/d", bytes.NewReader(e.body))
					r.Header.Set("Content-Type", e.contentType)
					for k, v := range e.header {
						r.Header[k] = v
					}
					f, herr := handlers.DecodeBody(httptest.NewRecorder(), r, handlers.DecodeOptions{})
					if herr != nil {
						b.Fatalf("decode: %d %s", herr.Status, herr.Body)
					}
					if s, _ := f.Text("renderingRequest"); len(s) != len(w.Code) {
						b.Fatalf("renderingRequest has %d bytes, want %d", len(s), len(w.Code))
					}
				}
			})
		}
	}
}

// TestEncodeRender checks that every encoding decodes to the same request.
func TestEncodeRender(t *testing.T) {
	code := "'<p>é & ü</p>'\n" + strings.Repeat("x", 10)
	for _, enc := range []string{"raw", "json", "form", "multipart"} {
		e := encodeRender(enc, code)
		r := httptest.NewRequest(http.MethodPost, "/bundles/x/render/d", bytes.NewReader(e.body))
		r.Header.Set("Content-Type", e.contentType)
		for k, v := range e.header {
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
