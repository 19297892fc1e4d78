package tests

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gorender/gorender/gemclient"
)

const (
	maxBody  = 100 << 20 // PROTOCOL.md §12
	maxField = 10 << 20
	maxParts = 1000
)

// rawRenderHeaders returns the metadata headers of a valid raw render.
func rawRenderHeaders() http.Header {
	return http.Header{
		"Authorization":                         {"Bearer " + testPassword},
		"X-React-On-Rails-Pro-Protocol-Version": {"2.0.0"},
	}
}

// TestLimits covers the limits of PROTOCOL.md §12 and the malformed
// requests of §2 and §6.1.
func TestLimits(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("within limits")}, nil)
	renderPath := "/bundles/" + id + "/render/x"

	eachTransportSerial(t, func(t *testing.T, tr transport) {
		t.Run("body over 100 MiB, streamed", func(t *testing.T) {
			// No Content-Length: the server must count while it reads.
			body := io.MultiReader(strings.NewReader("'"), &repeatReader{c: 'a', n: maxBody})
			r := s.post(t, tr, renderPath, gemclient.RawJSContentType, body, rawRenderHeaders())
			r.wantStatus(t, tr, http.StatusRequestEntityTooLarge)
			r.wantNoCacheText(t)
		})
		t.Run("body over 100 MiB, declared", func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, s.url+renderPath, &repeatReader{c: 'a', n: maxBody + 1})
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = maxBody + 1
			req.Header = rawRenderHeaders()
			req.Header.Set("Content-Type", gemclient.RawJSContentType)
			r := s.do(t, tr, req)
			r.wantStatus(t, tr, http.StatusRequestEntityTooLarge)
		})
		t.Run("file part over 100 MiB", func(t *testing.T) {
			big := newID("s")
			ct, body := multipartBody(textPart("password", testPassword), textPart("protocolVersion", "2.0.0"),
				part{name: "bundle_" + big, filename: big + ".js", body: &repeatReader{c: ' ', n: maxBody}})
			r := s.post(t, tr, "/upload-assets", ct, body, nil)
			r.wantStatus(t, tr, http.StatusRequestEntityTooLarge)
			s.wantNoBundleDir(t, big)
			s.wantStagingEmpty(t)
		})
		t.Run("text field over 10 MiB", func(t *testing.T) {
			ct, body := multipartBody(textPart("password", testPassword), textPart("protocolVersion", "2.0.0"),
				part{name: "renderingRequest", body: &repeatReader{c: ' ', n: maxField + 1}})
			r := s.post(t, tr, renderPath, ct, body, nil)
			r.wantStatus(t, tr, http.StatusRequestEntityTooLarge)
		})
		t.Run("text field of exactly 10 MiB", func(t *testing.T) {
			code := "MARKER" + strings.Repeat(" ", maxField-len("MARKER"))
			ct, body := multipartBody(textPart("password", testPassword), textPart("protocolVersion", "2.0.0"),
				textPart("renderingRequest", code))
			s.post(t, tr, renderPath, ct, body, nil).want(t, tr, http.StatusOK, "within limits")
		})
		t.Run("more than 1000 parts", func(t *testing.T) {
			parts := []part{textPart("password", testPassword), textPart("protocolVersion", "2.0.0"), textPart("renderingRequest", "MARKER")}
			for len(parts) <= maxParts {
				parts = append(parts, textPart("gemVersion", gemVersion))
			}
			ct, body := multipartBody(parts...)
			s.post(t, tr, renderPath, ct, body, nil).wantStatus(t, tr, http.StatusRequestEntityTooLarge)

			ct, body = multipartBody(parts[:maxParts]...)
			s.post(t, tr, renderPath, ct, body, nil).want(t, tr, http.StatusOK, "within limits")
		})
		t.Run("unsupported content type", func(t *testing.T) {
			for _, ct := range []string{"text/plain", "", "application/xml", "Application/VND.React-On-Rails.Render-Request+Javascript"} {
				r := s.post(t, tr, renderPath, ct, strings.NewReader("MARKER"), rawRenderHeaders())
				r.wantStatus(t, tr, http.StatusUnsupportedMediaType)
			}
		})
		t.Run("bad bundle id in the URL", func(t *testing.T) {
			for _, bad := range []string{"-bad", ".bad", "..", "%2e%2e", "a%2Fb", "a%20b"} {
				r := s.post(t, tr, "/bundles/"+bad+"/render/x", gemclient.RawJSContentType, strings.NewReader("MARKER"), rawRenderHeaders())
				r.wantPrefix(t, tr, http.StatusBadRequest, "Invalid bundle id: ")
			}
			// Odd but valid ids (^[A-Za-z0-9_][A-Za-z0-9._-]*$) are merely not uploaded.
			for _, odd := range []string{"bad..id", "_x", "a.b-c_d", "0"} {
				r := s.post(t, tr, "/bundles/"+odd+"/render/x", gemclient.RawJSContentType, strings.NewReader("MARKER"), rawRenderHeaders())
				r.want(t, tr, http.StatusGone, "No bundle uploaded")
			}
		})
		t.Run("bad bundle id in a part name", func(t *testing.T) {
			ct, body := multipartBody(textPart("password", testPassword), textPart("protocolVersion", "2.0.0"),
				filePart("bundle_.hidden", "b.js", "1"))
			s.post(t, tr, "/upload-assets", ct, body, nil).wantPrefix(t, tr, http.StatusBadRequest, "Invalid bundle id: ")
			s.wantNoBundleDir(t, ".hidden")
			s.wantStagingEmpty(t)
		})
		t.Run("bad companion filename", func(t *testing.T) {
			for _, name := range []string{"../evil.json", "a/b", `a\b`, "..", "c:evil.json"} {
				for _, route := range []string{"/upload-assets", "render"} {
					fresh := newID("s")
					path := route
					parts := []part{textPart("password", testPassword), textPart("protocolVersion", "2.0.0")}
					if route == "render" {
						path = "/bundles/" + fresh + "/render/x"
						parts = append(parts, textPart("renderingRequest", "MARKER"))
					}
					parts = append(parts, filePart("bundle_"+fresh, fresh+".js", markerBundle("no")),
						filePart("assetsToCopy0", name, `{"evil":true}`))
					ct, body := multipartBody(parts...)
					r := s.post(t, tr, path, ct, body, nil)
					r.want(t, tr, http.StatusBadRequest, "Invalid asset filename: "+strconv.Quote(name)+". Expected a single filename, not a path.")
					s.wantNoBundleDir(t, fresh)
					s.wantStagingEmpty(t)
				}
			}
			for _, dir := range []string{s.cache, filepath.Dir(s.cache)} {
				if _, err := os.Stat(filepath.Join(dir, "evil.json")); err == nil {
					t.Errorf("evil.json written in %s", dir)
				}
			}
		})
	})
}

// TestConfiguredLimits: the body and header bounds follow their variables
// (RENDERER_MAX_BODY_SIZE, RENDERER_MAX_FIELD_SIZE, RENDERER_MAX_PARTS,
// RENDERER_MAX_HEADER_SIZE).
func TestConfiguredLimits(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{
		"RENDERER_MAX_BODY_SIZE": "64KiB", "RENDERER_MAX_FIELD_SIZE": "16KiB", "RENDERER_MAX_PARTS": "8", "RENDERER_MAX_HEADER_SIZE": "8KiB",
	})
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("configured")}, nil)
	renderPath := "/bundles/" + id + "/render/x"
	auth := []part{textPart("password", testPassword), textPart("protocolVersion", "2.0.0")}
	eachTransportSerial(t, func(t *testing.T, tr transport) {
		s.post(t, tr, renderPath, gemclient.RawJSContentType, strings.NewReader("MARKER"+strings.Repeat(" ", 60<<10)), rawRenderHeaders()).
			want(t, tr, http.StatusOK, "configured")
		s.post(t, tr, renderPath, gemclient.RawJSContentType, strings.NewReader("MARKER"+strings.Repeat(" ", 65<<10)), rawRenderHeaders()).
			want(t, tr, http.StatusRequestEntityTooLarge, "Request body is larger than the limit of 65536 bytes.")
		ct, body := multipartBody(append(auth, textPart("renderingRequest", "MARKER"+strings.Repeat(" ", 17<<10)))...)
		s.post(t, tr, renderPath, ct, body, nil).want(t, tr, http.StatusRequestEntityTooLarge, `Multipart field "renderingRequest" is larger than the limit of 16384 bytes.`)
		parts := append(auth, textPart("renderingRequest", "MARKER"))
		for len(parts) < 8 {
			parts = append(parts, textPart("gemVersion", gemVersion))
		}
		ct, body = multipartBody(parts...)
		s.post(t, tr, renderPath, ct, body, nil).want(t, tr, http.StatusOK, "configured")
		ct, body = multipartBody(append(parts, textPart("gemVersion", gemVersion))...)
		s.post(t, tr, renderPath, ct, body, nil).want(t, tr, http.StatusRequestEntityTooLarge, "Too many multipart parts: the limit is 8.")
		big := rawRenderHeaders()
		big.Set("X-Padding", strings.Repeat("p", 16<<10))
		req, err := http.NewRequest(http.MethodPost, s.url+renderPath, strings.NewReader("MARKER"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = big
		req.Header.Set("Content-Type", gemclient.RawJSContentType)
		resp, err := s.http(tr).Do(req.WithContext(ctx(t)))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("16 KiB header field over an 8 KiB limit: status %d, want 431", resp.StatusCode)
			}
		} else if !tr.h2c {
			t.Errorf("16 KiB header field over HTTP/1.1: %v, want a 431", err)
		} // h2c: the client refuses to send a header list over the server's SETTINGS
	})
}
