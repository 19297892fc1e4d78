package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gorender/gorender/gemclient"
)

// This file builds render requests field by field in each of the four body
// encodings of PROTOCOL.md §3.1, for the tests that need fields the gem
// would never send (or would not omit).

// encoding is a render body encoding.
type encoding string

const (
	encRaw       encoding = "raw"
	encJSON      encoding = "json"
	encForm      encoding = "form"
	encMultipart encoding = "multipart"
)

var encodings = []encoding{encRaw, encJSON, encForm, encMultipart}

// gemRender is the gem's way of sending a render in one encoding.
func gemRender(c *gemclient.Client, enc encoding) func(*testing.T, gemclient.Render) *response {
	return func(t *testing.T, r gemclient.Render) *response {
		t.Helper()
		switch enc {
		case encRaw:
			return must(t)(c.RenderRaw(ctx(t), r))
		case encJSON:
			return must(t)(c.RenderJSON(ctx(t), r))
		case encForm:
			return must(t)(c.RenderForm(ctx(t), r))
		default:
			return must(t)(c.RenderMultipart(ctx(t), r))
		}
	}
}

// field is one named value of a request: a string, or a []string (a JSON
// array; repeated form or multipart entries).
type field struct {
	name  string
	value any
}

// metaFields are the gem's metadata fields, with password (omitted when
// empty) and protocol version (omitted when empty) as given.
func metaFields(password, protocol string) []field {
	var f []field
	if password != "" {
		f = append(f, field{"password", password})
	}
	if protocol != "" {
		f = append(f, field{"protocolVersion", protocol})
	}
	return append(f, field{"gemVersion", gemVersion}, field{"railsEnv", "production"})
}

// rawHeaders maps field names onto the raw JS encoding's headers.
var rawHeaders = map[string]string{
	"protocolVersion":            "X-React-On-Rails-Pro-Protocol-Version",
	"gemVersion":                 "X-React-On-Rails-Pro-Gem-Version",
	"railsEnv":                   "X-React-On-Rails-Pro-Rails-Env",
	"dependencyBundleTimestamps": "X-React-On-Rails-Pro-Dependency-Bundle-Timestamps",
	"rscStreamObservability":     "X-React-On-Rails-Pro-Rsc-Stream-Observability",
}

// encodeFields encodes fields in enc, returning the content type, the body
// (multipart is streamed without Content-Length, like the gem's) and extra
// headers.
func encodeFields(t *testing.T, enc encoding, fields []field) (string, io.Reader, http.Header) {
	t.Helper()
	switch enc {
	case encRaw:
		h := http.Header{}
		code := ""
		for _, f := range fields {
			switch f.name {
			case "renderingRequest":
				code = f.value.(string)
			case "password":
				h.Set("Authorization", "Bearer "+f.value.(string))
			case "dependencyBundleTimestamps":
				list, ok := f.value.([]string)
				if !ok {
					list = []string{f.value.(string)}
				}
				b, _ := json.Marshal(list)
				h.Set(rawHeaders[f.name], string(b))
			default:
				name, ok := rawHeaders[f.name]
				if !ok {
					t.Fatalf("field %q has no raw JS header", f.name)
				}
				h.Set(name, f.value.(string))
			}
		}
		return gemclient.RawJSContentType, strings.NewReader(code), h
	case encJSON:
		var sb strings.Builder
		sb.WriteByte('{')
		for i, f := range fields {
			if i > 0 {
				sb.WriteByte(',')
			}
			k, _ := json.Marshal(f.name)
			v, _ := json.Marshal(f.value)
			sb.Write(k)
			sb.WriteByte(':')
			sb.Write(v)
		}
		sb.WriteByte('}')
		return "application/json", strings.NewReader(sb.String()), nil
	case encForm:
		var pairs []string
		for _, f := range fields {
			for _, v := range values(f) {
				pairs = append(pairs, url.QueryEscape(f.name)+"="+url.QueryEscape(v))
			}
		}
		return "application/x-www-form-urlencoded", strings.NewReader(strings.Join(pairs, "&")), nil
	default:
		var parts []part
		for _, f := range fields {
			for _, v := range values(f) {
				parts = append(parts, textPart(f.name, v))
			}
		}
		ct, body := multipartBody(parts...)
		return ct, body, nil
	}
}

func values(f field) []string {
	if list, ok := f.value.([]string); ok {
		return list
	}
	return []string{f.value.(string)}
}

// renderFields posts a render of bundle id built from fields in enc.
func (s *server) renderFields(t *testing.T, tr transport, enc encoding, id string, fields []field) *response {
	t.Helper()
	ct, body, h := encodeFields(t, enc, fields)
	return s.post(t, tr, "/bundles/"+id+"/render/d41d8cd98f00b204e9800998ecf8427e", ct, body, h)
}

// part is one multipart part: a text field, or a file when filename is set.
// body, when set, streams the content instead of content.
type part struct {
	name, filename, content string
	body                    io.Reader
}

func textPart(name, value string) part { return part{name: name, content: value} }

func filePart(name, filename, content string) part {
	return part{name: name, filename: filename, content: content}
}

// multipartBody streams parts as multipart/form-data with a gem-like random
// boundary and no Content-Length.
func multipartBody(parts ...part) (contentType string, body io.Reader) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	_ = mw.SetBoundary(gemclient.Boundary())
	go func() {
		pw.CloseWithError(writeParts(mw, parts))
	}()
	return mw.FormDataContentType(), pr
}

func writeParts(mw *multipart.Writer, parts []part) error {
	for _, p := range parts {
		h := make(map[string][]string)
		if p.filename != "" {
			// Written by hand (not CreateFormFile) so that the filename is
			// sent exactly as given, path separators included.
			h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="%s"; filename="%s"`, p.name, p.filename)}
			h["Content-Type"] = []string{"application/octet-stream"}
		} else {
			h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="%s"`, p.name)}
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		src := p.body
		if src == nil {
			src = strings.NewReader(p.content)
		}
		if _, err := io.Copy(w, src); err != nil {
			return err
		}
	}
	return mw.Close()
}

// repeatReader yields n bytes of c without allocating them.
type repeatReader struct {
	c byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = r.c
	}
	r.n -= int64(len(p))
	return len(p), nil
}
