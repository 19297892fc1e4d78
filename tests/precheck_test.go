package tests

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorender/gorender/gemclient"
)

// TestPrechecks covers PROTOCOL.md §4 in every body encoding: the protocol
// version (412) is checked before the password (401), and both rejections
// carry the no-cache headers.
func TestPrechecks(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("prechecks passed")}, nil)

	mismatch := "Unsupported renderer protocol version request protocol 1.0.0 does not match installed renderer protocol 2.0.0 for version " +
		rendererVersion + ".\n"
	const missing = "Unsupported renderer protocol version MISSING (received fields: "
	cases := []struct {
		name               string
		password, protocol string // "" = not sent
		status             int
		prefix             string
	}{
		{"all good", testPassword, "2.0.0", http.StatusOK, "prechecks passed"},
		{"missing protocol", testPassword, "", http.StatusPreconditionFailed, missing},
		{"wrong protocol", testPassword, "1.0.0", http.StatusPreconditionFailed, mismatch},
		{"wrong password", "not-the-password", "2.0.0", http.StatusUnauthorized, "Wrong password"},
		{"missing password", "", "2.0.0", http.StatusUnauthorized, "Wrong password"},
		{"wrong protocol and wrong password", "not-the-password", "1.0.0", http.StatusPreconditionFailed, mismatch},
		{"missing protocol and wrong password", "not-the-password", "", http.StatusPreconditionFailed, missing},
		{"missing protocol and missing password", "", "", http.StatusPreconditionFailed, missing},
	}
	eachTransport(t, func(t *testing.T, tr transport) {
		for _, enc := range encodings {
			for _, c := range cases {
				t.Run(string(enc)+"/"+c.name, func(t *testing.T) {
					fields := append(metaFields(c.password, c.protocol), field{"renderingRequest", "MARKER"})
					r := s.renderFields(t, tr, enc, id, fields)
					r.wantPrefix(t, tr, c.status, c.prefix)
					switch c.status {
					case http.StatusOK:
						r.want(t, tr, http.StatusOK, "prechecks passed")
						return
					case http.StatusUnauthorized:
						r.want(t, tr, c.status, "Wrong password")
					case http.StatusPreconditionFailed:
						wantProtocolBody(t, r.Body)
					}
					r.wantNoCacheText(t)
				})
			}
		}
		t.Run("raw/non-Bearer Authorization with a password configured", func(t *testing.T) {
			// The prechecks come first: a non-Bearer header carries no password.
			h := http.Header{"Authorization": {"Basic " + testPassword}, "X-React-On-Rails-Pro-Protocol-Version": {"2.0.0"}}
			r := s.post(t, tr, "/bundles/"+id+"/render/x", gemclient.RawJSContentType, strings.NewReader("MARKER"), h)
			r.want(t, tr, http.StatusUnauthorized, "Wrong password")
		})
		t.Run("upload-assets/wrong password", func(t *testing.T) {
			gem := s.gem(tr)
			gem.Password = "not-the-password"
			r := must(t)(gem.UploadAssets(ctx(t), map[string][]byte{newID("s"): []byte("1")}, nil))
			r.want(t, tr, http.StatusUnauthorized, "Wrong password")
		})
		t.Run("upload-assets/wrong protocol", func(t *testing.T) {
			ct, body := multipartBody(textPart("password", testPassword), textPart("protocolVersion", "1.0.0"),
				filePart("bundle_"+newID("s"), "b.js", "1"))
			r := s.post(t, tr, "/upload-assets", ct, body, nil)
			r.wantPrefix(t, tr, http.StatusPreconditionFailed, mismatch)
		})
	})
}

// wantProtocolBody checks the shape of a 412 body (PROTOCOL.md §4.1).
func wantProtocolBody(t *testing.T, body string) {
	t.Helper()
	first, second, ok := strings.Cut(body, "\n")
	if !ok || second == "" {
		t.Errorf("412 body has no second line asking to update: %q", body)
	}
	if !strings.HasSuffix(first, " does not match installed renderer protocol 2.0.0 for version "+rendererVersion+".") {
		t.Errorf("412 first line: %q", first)
	}
	if strings.Contains(strings.ToLower(body), "password") || strings.Contains(body, testPassword) {
		t.Errorf("412 body echoes the password field: %q", body)
	}
	if strings.Contains(first, "MISSING") && !strings.Contains(first, "renderingRequest") {
		t.Errorf("412 body does not list the received fields: %q", first)
	}
}

// TestRawAuthorizationWithoutPassword: with no password configured
// (allowed in RAILS_ENV=test), every request passes, but a raw render with a
// non-Bearer Authorization header is malformed (PROTOCOL.md §3.1).
func TestRawAuthorizationWithoutPassword(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RAILS_ENV": "test", "RENDERER_PASSWORD": ""})
	id := newID("s")
	gem := s.gem(transports[1])
	gem.Password = ""
	r := must(t)(gem.UploadAssets(ctx(t), map[string][]byte{id: []byte(markerBundle("open"))}, nil))
	r.want(t, transports[1], http.StatusOK, "")

	eachTransport(t, func(t *testing.T, tr transport) {
		for _, c := range []struct {
			name, authorization string
			status              int
			body                string
		}{
			{"no header", "", http.StatusOK, "open"},
			{"Bearer", "Bearer anything", http.StatusOK, "open"},
			{"Basic", "Basic dXNlcjpwYXNz", http.StatusBadRequest, "Invalid Authorization header for raw render request."},
			{"Token", "Token abc", http.StatusBadRequest, "Invalid Authorization header for raw render request."},
		} {
			t.Run(c.name, func(t *testing.T) {
				h := http.Header{"X-React-On-Rails-Pro-Protocol-Version": {"2.0.0"}}
				if c.authorization != "" {
					h.Set("Authorization", c.authorization)
				}
				r := s.post(t, tr, "/bundles/"+id+"/render/x", gemclient.RawJSContentType, strings.NewReader("MARKER"), h)
				r.want(t, tr, c.status, c.body)
			})
		}
	})
}
