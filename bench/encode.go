package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"

	"github.com/gorender/gorender/gemclient"
)

// Encodings are the render body encodings the gems send for a render
// without a bundle (PROTOCOL.md §3.1): raw JavaScript (gems 17.1+),
// form-urlencoded (gems up to 17.0) and JSON.
var Encodings = []string{"raw", "form", "json"}

// Encoded is one render request body in one encoding, built the way the gem
// (gemclient) sends it: Header holds every header besides Content-Type.
type Encoded struct {
	ContentType string
	Header      http.Header
	Body        []byte
}

// EncodeRender encodes a render of code with the gem's metadata (gem
// version 17.0.0, production, no dependency bundles) in enc: raw, form,
// json or multipart (text parts only).
func EncodeRender(enc, code, password string) (Encoded, error) {
	meta := [][2]string{{"password", password}, {"gemVersion", "17.0.0"}, {"protocolVersion", gemclient.ProtocolVersion}, {"railsEnv", "production"}}
	switch enc {
	case "raw":
		h := http.Header{}
		h.Set("X-React-On-Rails-Pro-Protocol-Version", gemclient.ProtocolVersion)
		h.Set("X-React-On-Rails-Pro-Gem-Version", "17.0.0")
		h.Set("X-React-On-Rails-Pro-Rails-Env", "production")
		h.Set("X-React-On-Rails-Pro-Dependency-Bundle-Timestamps", "[]")
		h.Set("Authorization", "Bearer "+password)
		return Encoded{gemclient.RawJSContentType, h, []byte(code)}, nil
	case "json":
		m := map[string]any{"renderingRequest": code, "dependencyBundleTimestamps": []string{}}
		for _, kv := range meta {
			m[kv[0]] = kv[1]
		}
		b, err := json.Marshal(m)
		if err != nil {
			return Encoded{}, fmt.Errorf("encode render as JSON: %w", err)
		}
		return Encoded{"application/json", http.Header{}, b}, nil
	case "form":
		v := url.Values{}
		for _, kv := range meta {
			v.Set(kv[0], kv[1])
		}
		v.Set("renderingRequest", code)
		return Encoded{"application/x-www-form-urlencoded", http.Header{}, []byte(v.Encode())}, nil
	case "multipart":
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		if err := mw.SetBoundary(gemclient.Boundary()); err != nil {
			return Encoded{}, err
		}
		for _, kv := range append(meta, [2]string{"renderingRequest", code}) {
			if err := mw.WriteField(kv[0], kv[1]); err != nil {
				return Encoded{}, err
			}
		}
		if err := mw.Close(); err != nil {
			return Encoded{}, err
		}
		return Encoded{mw.FormDataContentType(), http.Header{}, buf.Bytes()}, nil
	}
	return Encoded{}, fmt.Errorf("unknown encoding %q (raw, form, json, multipart)", enc)
}
