package handlers

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"
)

// testBoundary is a gem-like random 48-hex-digit boundary.
const testBoundary = "3f9a1c0b7e5d4a2f8c6b1e0d9a7f5c3b2e1d0c9b8a7f6e5d"

// part is one multipart part of a test body; a part with a filename is a
// file part.
type part struct {
	name, filename, content string
}

// multipartBody encodes parts with testBoundary.
func multipartBody(t testing.TB, parts ...part) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.SetBoundary(testBoundary); err != nil {
		t.Fatalf("SetBoundary: %v", err)
	}
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.filename != "" {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.name, p.filename))
			h.Set("Content-Type", "text/javascript")
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.name))
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatalf("CreatePart: %v", err)
		}
		if _, err := io.WriteString(w, p.content); err != nil {
			t.Fatalf("write part: %v", err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatalf("close multipart: %v", err)
	}
	return buf.String()
}

// multipartType is the Content-Type of multipartBody.
const multipartType = "multipart/form-data; boundary=" + testBoundary

// newRequest builds a POST with the given Content-Type and extra headers
// (name, value pairs).
func newRequest(t testing.TB, contentType, body string, headers ...string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/bundles/abc/render/digest", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

// decodeString decodes body sent with contentType.
func decodeString(t testing.TB, contentType, body string, opts DecodeOptions, headers ...string) (*Fields, *HTTPError) {
	t.Helper()
	return DecodeBody(httptest.NewRecorder(), newRequest(t, contentType, body, headers...), opts)
}

// memStager is a Stager keeping files in memory.
type memStager struct {
	mu    sync.Mutex
	files map[string]string
	err   error // returned by Stage after reading, when set
}

// Stage implements Stager.
func (m *memStager) Stage(r io.Reader) (string, int64, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", 0, fmt.Errorf("read part: %w", err)
	}
	if m.err != nil {
		return "", 0, m.err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string]string{}
	}
	path := fmt.Sprintf("/staging/%d", len(m.files))
	m.files[path] = string(data)
	return path, int64(len(data)), nil
}

// stageCounter returns a Stage option that counts its calls.
type stageCounter struct {
	mu     sync.Mutex
	calls  int
	stager *memStager
}

// stage is a DecodeOptions.Stage.
func (s *stageCounter) stage() (Stager, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.stager == nil {
		s.stager = &memStager{}
	}
	return s.stager, nil
}

// wantHTTPError fails unless err has the status and (when body is not
// empty) the exact body.
func wantHTTPError(t testing.TB, err *HTTPError, status int, body string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %d %q", status, body)
	}
	if err.Status != status {
		t.Fatalf("status = %d (%q), want %d", err.Status, err.Body, status)
	}
	if body != "" && err.Body != body {
		t.Fatalf("body = %q, want %q", err.Body, body)
	}
}

// TestHasControlByte compares the word-at-a-time scan with a byte loop on
// every byte value at every offset and length around a word.
func TestHasControlByte(t *testing.T) {
	naive := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 {
				return true
			}
		}
		return false
	}
	for n := 0; n <= 19; n++ {
		for at := 0; at < n; at++ {
			for c := 0; c < 256; c++ {
				b := bytes.Repeat([]byte{'a'}, n)
				b[at] = byte(c)
				if got, want := hasControlByte(b), naive(b); got != want {
					t.Fatalf("len %d, byte %#x at %d: %v, want %v", n, c, at, got, want)
				}
			}
		}
		if hasControlByte(bytes.Repeat([]byte{0xff}, n)) || hasControlByte(bytes.Repeat([]byte{' '}, n)) {
			t.Fatalf("len %d: false positive", n)
		}
	}
}
