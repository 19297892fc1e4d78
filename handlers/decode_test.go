package handlers

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const renderJS = `(function() { return ReactOnRails.serverRenderReactComponent({"name":"App","props":{"q":"a&b=c; d\n"}}); })()`

func TestDecodeFourEncodingsAgree(t *testing.T) {
	want := &RenderRequest{
		RenderingRequest:       renderJS,
		DependencyBundleIDs:    []string{"rorp-v2-r-1", "rorp-v2-s-2"},
		RSCStreamObservability: true,
		GemVersion:             "17.0.0.rc.6",
		RailsEnv:               "production",
	}
	pairs := []string{
		"password", "pw", "protocolVersion", "2.0.0", "gemVersion", "17.0.0.rc.6", "railsEnv", "production",
		"dependencyBundleTimestamps[]", "rorp-v2-r-1", "dependencyBundleTimestamps[]", "rorp-v2-s-2",
		"rscStreamObservability", "true", "renderingRequest", renderJS,
	}
	jsonJS, err := jsonString(renderJS)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		enc     encoded
		headers []string
	}{
		{"json", encoded{MediaTypeJSON, `{"password":"pw","protocolVersion":"2.0.0","gemVersion":"17.0.0.rc.6",` +
			`"railsEnv":"production","dependencyBundleTimestamps":["rorp-v2-r-1","rorp-v2-s-2"],` +
			`"rscStreamObservability":true,"renderingRequest":` + jsonJS + `}`}, nil},
		{"json charset", encoded{"Application/JSON; charset=utf-8", `{"password":"pw","protocolVersion":"2.0.0","gemVersion":"17.0.0.rc.6",` +
			`"railsEnv":"production","dependencyBundleTimestamps":["rorp-v2-r-1","rorp-v2-s-2"],` +
			`"rscStreamObservability":"true","renderingRequest":` + jsonJS + `}`}, nil},
		{"form", inEncodings(t, pairs...)["form"], nil},
		{"multipart", inEncodings(t, pairs...)["multipart"], nil},
		{"raw", encoded{MediaTypeRawJS + "; charset=utf-8", renderJS}, []string{
			"Authorization", "Bearer pw",
			headerProtocolVersion, "2.0.0",
			headerGemVersion, "17.0.0.rc.6",
			headerRailsEnv, "production",
			headerDependencyBundle, `["rorp-v2-r-1","rorp-v2-s-2"]`,
			headerRSCObservability, "true",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := decodeString(t, tt.enc.contentType, tt.enc.body, DecodeOptions{}, tt.headers...)
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			if herr := Precheck(f, testPassword, "1.2.3", true); herr != nil {
				t.Fatalf("Precheck: %v", herr)
			}
			got, herr := ParseRenderRequest(f)
			if herr != nil {
				t.Fatalf("ParseRenderRequest: %v", herr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestContentType(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		wantStatus  int // 0 = decoded
		wantBody    string
	}{
		{"raw", MediaTypeRawJS, 0, ""},
		{"raw with params", MediaTypeRawJS + ";charset=UTF-8", 0, ""},
		{"raw wrong case", "application/vnd.React-On-Rails.render-request+javascript", 415, ""},
		{"json upper", "APPLICATION/JSON", 0, ""},
		{"form", MediaTypeForm + "; charset=utf-8", 0, ""},
		{"missing", "", 415, "Missing Content-Type header. Expected one of " + MediaTypeRawJS + ", application/json, application/x-www-form-urlencoded, multipart/form-data."},
		{"text/plain", "text/plain", 415, `Unsupported Content-Type "text/plain". Expected one of ` + MediaTypeRawJS + ", application/json, application/x-www-form-urlencoded, multipart/form-data."},
		{"javascript", "application/javascript", 415, ""},
		{"json prefix", "application/jsonx", 415, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := "{}"
			if strings.HasPrefix(tt.contentType, MediaTypeForm) {
				body = "a=b"
			}
			_, herr := decodeString(t, tt.contentType, body, DecodeOptions{})
			if tt.wantStatus == 0 {
				if herr != nil {
					t.Fatalf("DecodeBody: %v", herr)
				}
				return
			}
			wantHTTPError(t, herr, tt.wantStatus, tt.wantBody)
		})
	}
	_, herr := decodeString(t, "application/vnd.react-on-rails.render-request+JAVASCRIPT", "x", DecodeOptions{})
	if herr == nil || !strings.Contains(herr.Body, "case-sensitive") {
		t.Fatalf("wrong-case raw type: %v, want a hint about case", herr)
	}
}

func TestDecodeJSONErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"empty", "", "Invalid JSON body: the body is empty."},
		{"blank", " \n", "Invalid JSON body: the body is empty."},
		{"array", `["a"]`, "Invalid JSON body: expected a JSON object."},
		{"string", `"renderingRequest"`, "Invalid JSON body: expected a JSON object."},
		{"null", `null`, "Invalid JSON body: expected a JSON object."},
		{"trailing garbage", `{"a":1} x`, "Invalid JSON body: syntax error at byte offset 8."},
		{"two objects", `{}{}`, "Invalid JSON body: syntax error at byte offset 2."},
		{"truncated", `{"password":"secret`, "Invalid JSON body: syntax error at byte offset 18."},
		{"truncated after colon", `{"a":`, "Invalid JSON body: unexpected end of JSON input."},
		{"too deep", `{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, herr := decodeString(t, MediaTypeJSON, tt.body, DecodeOptions{})
			wantHTTPError(t, herr, 400, tt.want)
			if strings.Contains(herr.Body, "secret") {
				t.Fatalf("body %q echoes the input", herr.Body)
			}
		})
	}
}

func TestDecodeJSONValues(t *testing.T) {
	f, herr := decodeString(t, MediaTypeJSON, `{"n":12.50,"big":123456789012345678901234567890,"s":"\u00e9\n","o":{"a":[1,null]},"e":[]}`, DecodeOptions{})
	if herr != nil {
		t.Fatalf("DecodeBody: %v", herr)
	}
	for name, want := range map[string]string{
		"n": "12.50", "big": "123456789012345678901234567890", "s": "é\n", "o": `{"a":[1,null]}`, "e": "[]",
	} {
		if got, _ := f.Text(name); got != want {
			t.Errorf("Text(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestDecodeForm(t *testing.T) {
	f, herr := decodeString(t, MediaTypeForm, "a=1+2%26&&=skipped&b&c=%E2%9C%93;x&a=3", DecodeOptions{})
	if herr != nil {
		t.Fatalf("DecodeBody: %v", herr)
	}
	if got, want := f.Names(), []string{"a", "b", "c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Names = %q, want %q", got, want)
	}
	if v, _ := f.Lookup("a"); !reflect.DeepEqual(v, []string{"1 2&", "3"}) {
		t.Errorf("a = %#v", v)
	}
	if v, _ := f.Text("c"); v != "✓;x" {
		t.Errorf("c = %q", v)
	}
	_, herr = decodeString(t, MediaTypeForm, "a=%zz", DecodeOptions{})
	wantHTTPError(t, herr, 400, `Invalid form body: invalid URL escape "%zz".`)
}

func TestRawJSHeaders(t *testing.T) {
	tests := []struct {
		name         string
		headers      []string
		wantPassword string
		wantPresent  bool
		wantDeferred string // deferred error on password
	}{
		{"bearer", []string{"Authorization", "Bearer s3cret pw"}, "s3cret pw", true, ""},
		{"bearer lower case, spaces", []string{"Authorization", "bearer   pw"}, "pw", true, ""},
		{"bearer alone", []string{"Authorization", "Bearer"}, "", true, ""},
		{"no authorization", nil, "", false, ""},
		{"basic", []string{"Authorization", "Basic dXNlcjpwYXNz"}, "", false, "Invalid Authorization header for raw render request."},
		{"bearerx", []string{"Authorization", "Bearerpw"}, "", false, "Invalid Authorization header for raw render request."},
		{"empty", []string{"Authorization", ""}, "", false, "Invalid Authorization header for raw render request."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := decodeString(t, MediaTypeRawJS, renderJS, DecodeOptions{}, tt.headers...)
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			pw, present := f.Text("password")
			if pw != tt.wantPassword || present != tt.wantPresent {
				t.Errorf("password = %q, %v; want %q, %v", pw, present, tt.wantPassword, tt.wantPresent)
			}
			_, _, herr = f.CheckedString("password")
			if tt.wantDeferred == "" {
				if herr != nil {
					t.Fatalf("String(password): %v", herr)
				}
				return
			}
			wantHTTPError(t, herr, 400, tt.wantDeferred)
		})
	}
}

func TestRawJSNamesAndBody(t *testing.T) {
	body := "\xef\xbb\xbf" + renderJS + "\r\n\x00 é"
	f, herr := decodeString(t, MediaTypeRawJS, body, DecodeOptions{},
		headerProtocolVersion, "2.0.0", "Authorization", "Bearer x", headerDependencyBundle, "[]")
	if herr != nil {
		t.Fatalf("DecodeBody: %v", herr)
	}
	if got, want := f.Names(), []string{"protocolVersion", "dependencyBundleTimestamps", "password", "renderingRequest"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if got, _ := f.Text("renderingRequest"); got != body {
		t.Errorf("renderingRequest not verbatim")
	}
	deps, herr := f.Strings("dependencyBundleTimestamps")
	if herr != nil || len(deps) != 0 {
		t.Errorf("deps = %q, %v; want empty", deps, herr)
	}
}

func TestBodyTooLarge(t *testing.T) {
	const limit = 64
	big := strings.Repeat("x", limit+1)
	tests := []struct {
		name          string
		contentType   string
		body          string
		unknownLength bool
	}{
		{"raw", MediaTypeRawJS, big, false},
		{"raw chunked", MediaTypeRawJS, big, true},
		{"json", MediaTypeJSON, `{"a":"` + big + `"}`, false},
		{"json chunked", MediaTypeJSON, `{"a":"` + big + `"}`, true},
		{"form chunked", MediaTypeForm, "a=" + big, true},
		{"multipart chunked", multipartType, multipartPairs(t, "a", big), true},
		{"multipart file chunked", multipartType, multipartBody(t, part{name: "bundle_x", filename: "x.js", content: big}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRequest(t, tt.contentType, tt.body)
			if tt.unknownLength {
				r.ContentLength = -1
			}
			sc := &stageCounter{}
			_, herr := DecodeBody(httptest.NewRecorder(), r, DecodeOptions{MaxBodyBytes: limit, Stage: sc.stage})
			wantHTTPError(t, herr, 413, fmt.Sprintf("Request body is larger than the limit of %d bytes.", limit))
		})
	}
}

func TestMultipartLimits(t *testing.T) {
	t.Run("field", func(t *testing.T) {
		body := multipartPairs(t, "renderingRequest", strings.Repeat("x", 11))
		_, herr := decodeString(t, multipartType, body, DecodeOptions{MaxFieldBytes: 10})
		wantHTTPError(t, herr, 413, `Multipart field "renderingRequest" is larger than the limit of 10 bytes.`)
	})
	t.Run("sensitive field not named", func(t *testing.T) {
		body := multipartPairs(t, "password", strings.Repeat("x", 11))
		_, herr := decodeString(t, multipartType, body, DecodeOptions{MaxFieldBytes: 10})
		wantHTTPError(t, herr, 413, `Multipart field "(redacted)" is larger than the limit of 10 bytes.`)
	})
	t.Run("field at the limit", func(t *testing.T) {
		body := multipartPairs(t, "renderingRequest", strings.Repeat("x", 10))
		if _, herr := decodeString(t, multipartType, body, DecodeOptions{MaxFieldBytes: 10}); herr != nil {
			t.Fatalf("DecodeBody: %v", herr)
		}
	})
	t.Run("file parts are not fields", func(t *testing.T) {
		sc := &stageCounter{}
		body := multipartBody(t, part{name: "bundle_x", filename: "x.js", content: strings.Repeat("x", 100)})
		f, herr := decodeString(t, multipartType, body, DecodeOptions{MaxFieldBytes: 10, Stage: sc.stage})
		if herr != nil || len(f.Files) != 1 || f.Files[0].Size != 100 {
			t.Fatalf("DecodeBody = %+v, %v", f, herr)
		}
	})
	pairs := func(n int) []string {
		var p []string
		for i := range n {
			p = append(p, fmt.Sprintf("f%d", i), "v")
		}
		return p
	}
	t.Run("parts at the limit", func(t *testing.T) {
		f, herr := decodeString(t, multipartType, multipartPairs(t, pairs(5)...), DecodeOptions{MaxParts: 5})
		if herr != nil || len(f.Names()) != 5 {
			t.Fatalf("DecodeBody = %v, %v", f.Names(), herr)
		}
	})
	t.Run("parts over the limit", func(t *testing.T) {
		_, herr := decodeString(t, multipartType, multipartPairs(t, pairs(6)...), DecodeOptions{MaxParts: 5})
		wantHTTPError(t, herr, 413, "Too many multipart parts: the limit is 5.")
	})
	t.Run("default parts limit", func(t *testing.T) {
		_, herr := decodeString(t, multipartType, multipartPairs(t, pairs(DefaultMaxParts+1)...), DecodeOptions{})
		wantHTTPError(t, herr, 413, "Too many multipart parts: the limit is 1000.")
	})
}

func TestMultipartMalformed(t *testing.T) {
	good := multipartPairs(t, "a", "b")
	tests := []struct {
		name, contentType, body, want string
	}{
		{"no boundary", "multipart/form-data", good, "Invalid multipart body: the Content-Type header has no boundary."},
		{"bad params", "multipart/form-data; boundary", good, ""},
		{"truncated", multipartType, good[:len(good)-10], ""},
		{"empty body", multipartType, "", ""},
		{"wrong boundary", "multipart/form-data; boundary=other", good, ""},
		{"bad disposition", multipartType, "--" + testBoundary + "\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n--" + testBoundary + "--\r\n", "Invalid multipart body: part 1 has an invalid Content-Disposition header."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, herr := decodeString(t, tt.contentType, tt.body, DecodeOptions{})
			wantHTTPError(t, herr, 400, tt.want)
			if !strings.HasPrefix(herr.Body, "Invalid multipart body: ") {
				t.Fatalf("body = %q", herr.Body)
			}
		})
	}
}

func TestMultipartSkipsUnnamedParts(t *testing.T) {
	body := "--" + testBoundary + "\r\nContent-Disposition: attachment; name=\"x\"\r\n\r\nskipped\r\n" +
		"--" + testBoundary + "\r\nContent-Disposition: form-data\r\n\r\nskipped\r\n" +
		"--" + testBoundary + "\r\nContent-Disposition: form-data; name=\"kept\"\r\n\r\nv\r\n" +
		"--" + testBoundary + "--\r\n"
	f, herr := decodeString(t, multipartType, body, DecodeOptions{})
	if herr != nil {
		t.Fatalf("DecodeBody: %v", herr)
	}
	if got := f.Names(); !reflect.DeepEqual(got, []string{"kept"}) {
		t.Fatalf("Names = %q", got)
	}
}

var testPassword = newTestPassword("pw")

func TestMultipartGate(t *testing.T) {
	gate := EarlyPrecheck(testPassword, "1.2.3", true)
	tests := []struct {
		name       string
		parts      []part
		wantStatus int // 0 = decoded
		wantStages int
		wantFiles  []StagedFile
	}{
		{
			name: "password first",
			parts: []part{
				{name: "password", content: "pw"}, {name: "protocolVersion", content: "2.0.0"},
				{name: "bundle_a", filename: "a.js", content: "A"},
				{name: "assetsToCopy0", filename: "../loadable-stats.json", content: "{}"},
			},
			wantStages: 1,
			wantFiles: []StagedFile{
				{Field: "bundle_a", Filename: "a.js", Path: "/staging/0", Size: 1},
				{Field: "assetsToCopy0", Filename: "../loadable-stats.json", Path: "/staging/1", Size: 2},
			},
		},
		{
			name:       "file before the password",
			parts:      []part{{name: "bundle_a", filename: "a.js", content: "A"}, {name: "password", content: "pw"}},
			wantStatus: 401,
		},
		{
			name:       "wrong password",
			parts:      []part{{name: "password", content: "nope"}, {name: "bundle_a", filename: "a.js", content: "A"}},
			wantStatus: 401,
		},
		{
			name: "protocol seen and wrong beats 401",
			parts: []part{{name: "protocolVersion", content: "1.0.0"}, {name: "password", content: "nope"},
				{name: "bundle_a", filename: "a.js", content: "A"}},
			wantStatus: 412,
		},
		{
			name:       "protocol not seen yet: password decides",
			parts:      []part{{name: "password", content: "pw"}, {name: "bundle_a", filename: "a.js", content: "A"}, {name: "protocolVersion", content: "1.0.0"}},
			wantStages: 1,
			wantFiles:  []StagedFile{{Field: "bundle_a", Filename: "a.js", Path: "/staging/0", Size: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &stageCounter{}
			f, herr := decodeString(t, multipartType, multipartBody(t, tt.parts...), DecodeOptions{Stage: sc.stage, BeforeFirstFile: gate})
			if sc.calls != tt.wantStages {
				t.Errorf("Stage called %d times, want %d", sc.calls, tt.wantStages)
			}
			if tt.wantStatus != 0 {
				wantHTTPError(t, herr, tt.wantStatus, "")
				return
			}
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			if !reflect.DeepEqual(f.Files, tt.wantFiles) {
				t.Errorf("Files = %+v, want %+v", f.Files, tt.wantFiles)
			}
		})
	}
}

func TestMultipartStageErrors(t *testing.T) {
	body := multipartBody(t, part{name: "password", content: "pw"}, part{name: "bundle_a", filename: "a.js", content: "A"})
	t.Run("no stager: 400 after the gate", func(t *testing.T) {
		_, herr := decodeString(t, multipartType, body, DecodeOptions{})
		wantHTTPError(t, herr, 400, `Unexpected file part "bundle_a": this endpoint accepts no file uploads.`)
		_, herr = decodeString(t, multipartType, body, DecodeOptions{BeforeFirstFile: EarlyPrecheck(newTestPassword("other"), "1", true)})
		wantHTTPError(t, herr, 401, "Wrong password")
	})
	t.Run("staging cannot open", func(t *testing.T) {
		_, herr := decodeString(t, multipartType, body, DecodeOptions{Stage: func() (Stager, error) { return nil, errors.New("disk full") }})
		wantHTTPError(t, herr, 500, "Failed to store the uploaded file.")
		if !strings.Contains(herr.Error(), "disk full") {
			t.Errorf("cause lost: %v", herr)
		}
	})
	t.Run("stager write fails", func(t *testing.T) {
		st := &memStager{err: errors.New("disk full")}
		_, herr := decodeString(t, multipartType, body, DecodeOptions{Stage: func() (Stager, error) { return st, nil }})
		wantHTTPError(t, herr, 500, "Failed to store the uploaded file.")
	})
	t.Run("body fails during a file part", func(t *testing.T) {
		truncated := body[:strings.Index(body, "\r\nA")+3]
		_, herr := decodeString(t, multipartType, truncated, DecodeOptions{Stage: (&stageCounter{}).stage})
		wantHTTPError(t, herr, 400, "")
	})
}

// TestMultipartStreamsChunked sends a gem-shaped multipart body through a
// real HTTP/1.1 server without Content-Length (chunked), and holds the file
// part back until the gate has run: decoding must be streamed.
func TestMultipartStreamsChunked(t *testing.T) {
	gateRan := make(chan struct{})
	var result atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc := &stageCounter{}
		gate := EarlyPrecheck(testPassword, "1.2.3", true)
		f, herr := DecodeBody(w, r, DecodeOptions{Stage: sc.stage, BeforeFirstFile: func(f *Fields) *HTTPError {
			close(gateRan)
			return gate(f)
		}})
		if herr == nil {
			herr = Precheck(f, testPassword, "1.2.3", true)
		}
		if herr != nil {
			http.Error(w, herr.Body, herr.Status)
			return
		}
		result.Store(f)
		_, _ = io.WriteString(w, r.TransferEncoding[0])
	}))
	defer srv.Close()

	full := multipartBody(t,
		part{name: "password", content: "pw"}, part{name: "protocolVersion", content: "2.0.0"},
		part{name: "gemVersion", content: "17.0.0"}, part{name: "railsEnv", content: "production"},
		part{name: "targetBundles[]", content: "rorp-v2-s-1"},
		part{name: "bundle_rorp-v2-s-1", filename: "rorp-v2-s-1.js", content: strings.Repeat("var a = 1;\n", 10000)},
	)
	split := strings.Index(full, "var a")
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, full[:split])
		select {
		case <-gateRan:
		case <-time.After(10 * time.Second):
			pw.CloseWithError(errors.New("gate never ran: the body is being buffered"))
			return
		}
		_, _ = io.WriteString(pw, full[split:])
		_ = pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/upload-assets", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", multipartType)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(answer) != "chunked" {
		t.Fatalf("answer = %d %q", resp.StatusCode, answer)
	}
	f := result.Load().(*Fields)
	if len(f.Files) != 1 || f.Files[0].Size != 110000 || f.Files[0].Field != "bundle_rorp-v2-s-1" {
		t.Fatalf("Files = %+v", f.Files)
	}
	if targets, herr := ParseTargetBundles(f); herr != nil || !reflect.DeepEqual(targets, []string{"rorp-v2-s-1"}) {
		t.Fatalf("targets = %q, %v", targets, herr)
	}
}

func TestBeforeBody(t *testing.T) {
	gate := EarlyPrecheck(testPassword, "1.2.3", true)
	tests := []struct {
		name       string
		headers    []string
		wantStatus int
	}{
		{"good", []string{"Authorization", "Bearer pw", headerProtocolVersion, "2.0.0"}, 0},
		{"wrong password", []string{"Authorization", "Bearer no", headerProtocolVersion, "2.0.0"}, 401},
		{"non-bearer: password absent", []string{"Authorization", "Basic pw", headerProtocolVersion, "2.0.0"}, 401},
		{"wrong protocol", []string{"Authorization", "Bearer no", headerProtocolVersion, "1.0.0"}, 412},
		{"missing protocol beats 401: the headers are complete", []string{"Authorization", "Bearer no", headerGemVersion, "17"}, 412},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRequest(t, MediaTypeRawJS, "", tt.headers...)
			r.Body = io.NopCloser(failingReader{})
			_, herr := DecodeBody(httptest.NewRecorder(), r, DecodeOptions{BeforeBody: gate})
			if tt.wantStatus == 0 {
				wantHTTPError(t, herr, 400, "") // the body was read, and failed
				return
			}
			wantHTTPError(t, herr, tt.wantStatus, "")
			if tt.wantStatus == 412 && strings.Contains(herr.Body, "MISSING") &&
				!strings.Contains(herr.Body, "(received fields: gemVersion, renderingRequest)") {
				t.Fatalf("early 412 must list the same fields as a late one: %q", herr.Body)
			}
		})
	}
}

// failingReader fails every read.
type failingReader struct{}

// Read implements io.Reader.
func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestDecodeJSONRejectsRawControlCharacters(t *testing.T) {
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"raw tab in string", "{\"a\":\"x\ty\"}", false},
		{"raw newline in key", "{\"a\nb\":1}", false},
		{"raw NUL", "{\"a\":\"\x00\"}", false},
		{"escaped controls", `{"a":"x\ty\n\u0000\\\""}`, true},
		{"whitespace between tokens", "{\n\t\"a\" :\r\n \"b\"\n}", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, herr := decodeString(t, MediaTypeJSON, tt.body, DecodeOptions{})
			if tt.ok {
				if herr != nil {
					t.Fatalf("DecodeBody: %v", herr)
				}
				return
			}
			wantHTTPError(t, herr, 400, "")
			if !strings.HasPrefix(herr.Body, "Invalid JSON body: syntax error at byte offset ") {
				t.Fatalf("body = %q", herr.Body)
			}
		})
	}
}

// TestDependencyHeaderEmpty: the gem's "[]" (no dependency bundles) is
// taken without a JSON parse and gives what the parse gives it, like any
// other spelling of an empty array.
func TestDependencyHeaderEmpty(t *testing.T) {
	parsed, err := parseJSONValue([]byte("[]"))
	if err != nil {
		t.Fatal(err)
	}
	for _, value := range []string{"[]", "[ ]", " [] "} {
		got, err := parseDependencyHeader(value)
		if err != nil || !reflect.DeepEqual(got, parsed) || got == nil {
			t.Errorf("parseDependencyHeader(%q) = %#v, %v; want %#v", value, got, err, parsed)
		}
	}
}
