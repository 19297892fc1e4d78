package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/gorender/gorender/auth"
)

// Seed corpora: testdata/fuzz/<FuzzName>/, gem-shaped bodies.

// fuzzLimits keeps fuzzed bodies cheap while still reaching the limits.
var fuzzLimits = DecodeOptions{MaxBodyBytes: 1 << 20, MaxFieldBytes: 64 << 10, MaxParts: 50}

// checkOutcome asserts the decode contract and exercises every getter and
// the steps after decoding: nothing panics, and every refusal is a 4xx with
// a body.
func checkOutcome(t *testing.T, f *Fields, herr *HTTPError) {
	t.Helper()
	if (f == nil) == (herr == nil) {
		t.Fatalf("want exactly one of Fields and HTTPError, got %v and %v", f, herr)
	}
	if herr != nil {
		checkRefusal(t, herr)
		return
	}
	names := f.Names()
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			t.Fatalf("Names repeats %q: %q", name, names)
		}
		seen[name] = true
		_, _ = f.Text(name)
		_ = f.TypeOf(name)
		if _, _, herr := f.CheckedString(name); herr != nil {
			checkRefusal(t, herr)
		}
		if _, herr := f.Strings(name); herr != nil {
			checkRefusal(t, herr)
		}
		if _, herr := f.Bool(name); herr != nil {
			checkRefusal(t, herr)
		}
	}
	for _, name := range f.SafeNames() {
		if auth.IsSensitiveName(name) {
			t.Fatalf("SafeNames contains %q", name)
		}
	}
	for _, herr := range []*HTTPError{
		Precheck(f, auth.NewPassword("pw"), "0.0.0", true),
		Precheck(f, auth.Password{}, "0.0.0", false),
	} {
		if herr != nil {
			checkRefusal(t, herr)
		}
	}
	if rr, herr := ParseRenderRequest(f); herr != nil {
		checkRefusal(t, herr)
	} else if rr.RenderingRequest == "" {
		t.Fatalf("ParseRenderRequest accepted an empty renderingRequest")
	}
	if targets, herr := ParseTargetBundles(f); herr != nil {
		checkRefusal(t, herr)
	} else if len(targets) == 0 {
		t.Fatalf("ParseTargetBundles accepted no targets")
	}
}

// checkRefusal asserts that an answer decided before the work is a 4xx with
// a body.
func checkRefusal(t *testing.T, herr *HTTPError) {
	t.Helper()
	if herr.Status < 400 || herr.Status > 499 || herr.Body == "" {
		t.Fatalf("refusal %d %q, want a 4xx with a body", herr.Status, herr.Body)
	}
}

// jsonDepth returns the deepest nesting of arrays and objects in valid JSON.
func jsonDepth(s string) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// checkHead asserts that a body's head (jsonHead, formHead), on which the
// prechecks run before it is decoded, agrees with its decoding: when the
// body decodes, its head does too, with the same names in the same order
// (a prefix of them when the head cut them) and the same text of the
// precheck fields (unless a JSON array or object); a head refused means a
// body refused.
func checkHead(t *testing.T, body string, fields *Fields, herr *HTTPError, readHead func([]byte) (*Fields, *HTTPError)) {
	t.Helper()
	if herr != nil && herr.Status == 413 {
		return // fuzzLimits
	}
	head, headErr := readHead([]byte(body))
	if headErr != nil {
		checkRefusal(t, headErr)
		if fields != nil {
			t.Fatalf("head refused %q (%v), the body decodes", body, headErr)
		}
		return
	}
	if fields == nil {
		return
	}
	if !head.metadataComplete {
		t.Fatalf("a head's metadata is complete")
	}
	names, headNames := fields.Names(), head.Names()
	if len(headNames) > len(names) || !reflect.DeepEqual(names[:len(headNames)], headNames) ||
		(len(headNames) < len(names) && !head.namesCut) {
		t.Fatalf("head names %q (cut %v), decoded names %q", headNames, head.namesCut, names)
	}
	for _, name := range precheckFields {
		want, wantOK := fields.Text(name)
		got, gotOK := head.Text(name)
		if v, _ := fields.Lookup(name); v != nil {
			switch v.(type) {
			case []any, map[string]any:
				continue
			}
		}
		if got != want || gotOK != wantOK {
			t.Fatalf("head %s = %q (%v), decoded %q (%v)", name, got, gotOK, want, wantOK)
		}
	}
}

func FuzzDecodeJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, body, rr string) {
		fields, herr := decodeString(t, MediaTypeJSON, body, fuzzLimits)
		checkOutcome(t, fields, herr)
		checkHead(t, body, fields, herr, jsonHead)

		// encoding/json is the oracle for valid UTF-8 bodies.
		if utf8.ValidString(body) && len(body) < 1<<20 {
			var want map[string]any
			stdErr := json.Unmarshal([]byte(body), &want)
			isObject := stdErr == nil && want != nil
			if fields != nil && !json.Valid([]byte(body)) {
				t.Fatalf("accepted invalid JSON %q", body)
			}
			if isObject && herr != nil && jsonDepth(body) <= maxJSONDepth {
				t.Fatalf("refused a valid object %q: %v", body, herr)
			}
			if isObject && fields != nil {
				if len(fields.Names()) != len(want) {
					t.Fatalf("Names = %q, encoding/json keys = %d", fields.Names(), len(want))
				}
				for k, v := range want {
					if s, ok := v.(string); ok {
						if got, present := fields.Text(k); !present || got != s {
							t.Fatalf("%q = %q, encoding/json says %q", k, got, s)
						}
					}
				}
			}
		}

		// Round trip: an encoded renderingRequest comes back byte-identical.
		if !utf8.ValidString(rr) || rr == "" {
			return
		}
		encodedRR, err := json.Marshal(rr)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		fields, herr = decodeString(t, MediaTypeJSON, `{"protocolVersion":"2.0.0","renderingRequest":`+string(encodedRR)+`}`, fuzzLimits)
		if herr != nil {
			t.Fatalf("round trip refused: %v", herr)
		}
		got, herr := ParseRenderRequest(fields)
		if herr != nil || got.RenderingRequest != rr {
			t.Fatalf("round trip: got %+v, %v; want %q", got, herr, rr)
		}
	})
}

func FuzzDecodeForm(f *testing.F) {
	f.Fuzz(func(t *testing.T, body, rr string) {
		fields, herr := decodeString(t, MediaTypeForm, body, fuzzLimits)
		checkOutcome(t, fields, herr)
		checkHead(t, body, fields, herr, formHead)

		// url.ParseQuery is the oracle where it has no objection.
		if want, err := url.ParseQuery(body); err == nil && fields != nil {
			delete(want, "")
			if len(fields.Names()) != len(want) {
				t.Fatalf("Names = %q, url.ParseQuery = %v", fields.Names(), want)
			}
			for k, v := range want {
				if got, _ := fields.Lookup(k); !reflect.DeepEqual(got, v) {
					t.Fatalf("%q = %#v, url.ParseQuery says %#v", k, got, v)
				}
			}
		}

		// Round trip: any bytes survive form encoding.
		if rr == "" {
			return
		}
		fields, herr = decodeString(t, MediaTypeForm, body+"&renderingRequest="+url.QueryEscape(rr)+"&"+body, fuzzLimits)
		if herr != nil {
			if herr.Status != 400 || !strings.HasPrefix(herr.Body, "Invalid form body: ") {
				t.Fatalf("round trip: %v", herr)
			}
			return // body itself is malformed
		}
		got, ok := fields.Lookup("renderingRequest")
		list, _ := got.([]string)
		if !ok || !contains(list, rr) {
			t.Fatalf("round trip: renderingRequest = %#v, want it to hold %q", got, rr)
		}
	})
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}

func FuzzDecodeMultipart(f *testing.F) {
	f.Fuzz(func(t *testing.T, body, rr, fileContent, filename string) {
		// A raw body: the stager runs only after the gate passed.
		var gatePassed, staged atomic.Int32
		gate := EarlyPrecheck(auth.NewPassword("pw"), "0.0.0", true)
		st := &memStager{}
		opts := fuzzLimits
		opts.BeforeFirstFile = func(f *Fields) *HTTPError {
			herr := gate(f)
			if herr == nil {
				gatePassed.Add(1)
			}
			return herr
		}
		opts.Stage = func() (Stager, error) {
			if gatePassed.Load() == 0 {
				t.Fatalf("Stage called before the gate passed")
			}
			staged.Add(1)
			return st, nil
		}
		fields, herr := decodeString(t, multipartType, body, opts)
		checkOutcome(t, fields, herr)
		if staged.Load() > 1 {
			t.Fatalf("Stage called %d times", staged.Load())
		}
		if fields != nil {
			for _, file := range fields.Files {
				if content, ok := st.files[file.Path]; !ok || int64(len(content)) != file.Size {
					t.Fatalf("file %+v does not match what was staged", file)
				}
			}
		}

		// Round trip through mime/multipart's writer, gem-shaped.
		if rr == "" || strings.Contains(rr, testBoundary) || strings.Contains(fileContent, testBoundary) {
			return
		}
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		if err := mw.SetBoundary(testBoundary); err != nil {
			t.Fatal(err)
		}
		for _, p := range [][2]string{{"password", "pw"}, {"protocolVersion", "2.0.0"}, {"renderingRequest", rr}} {
			if err := mw.WriteField(p[0], p[1]); err != nil {
				t.Fatal(err)
			}
		}
		simpleName := filename != "" && strings.Trim(filename, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") == ""
		if !simpleName {
			filename = "bundle.js"
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="bundle_x"; filename="%s"`, filename))
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(fileContent))
		_ = mw.Close()
		st = &memStager{}
		gatePassed.Store(0)
		fields, herr = decodeString(t, multipartType, buf.String(), opts)
		if len(buf.String()) > int(fuzzLimits.MaxBodyBytes) || len(rr) > int(fuzzLimits.MaxFieldBytes) {
			return
		}
		if herr != nil {
			t.Fatalf("round trip refused: %v", herr)
		}
		if got, _, _ := fields.CheckedString("renderingRequest"); got != rr {
			t.Fatalf("round trip: renderingRequest = %q, want %q", got, rr)
		}
		if len(fields.Files) != 1 || fields.Files[0].Filename != filename || st.files[fields.Files[0].Path] != fileContent {
			t.Fatalf("round trip: files = %+v", fields.Files)
		}
	})
}

func FuzzDecodeRawJS(f *testing.F) {
	f.Fuzz(func(t *testing.T, body, protocol, authorization, deps, rsc string) {
		var headers []string
		for _, h := range [][2]string{
			{headerProtocolVersion, protocol}, {"Authorization", authorization},
			{headerDependencyBundle, deps}, {headerRSCObservability, rsc},
		} {
			if h[1] != "" {
				headers = append(headers, h[0], h[1])
			}
		}
		fields, herr := decodeString(t, MediaTypeRawJS, body, fuzzLimits, headers...)
		checkOutcome(t, fields, herr)
		if len(body) > int(fuzzLimits.MaxBodyBytes) {
			return
		}
		if herr != nil {
			t.Fatalf("raw request refused: %v", herr)
		}
		if got, _ := fields.Text("renderingRequest"); got != body {
			t.Fatalf("renderingRequest is not the body verbatim")
		}
		rr, herr := ParseRenderRequest(fields)
		if herr != nil {
			return
		}
		if rr.RenderingRequest != body {
			t.Fatalf("RenderingRequest is not the body verbatim")
		}
		if deps != "" && utf8.ValidString(deps) {
			var want []string
			if err := json.Unmarshal([]byte(deps), &want); err != nil || want == nil {
				t.Fatalf("accepted dependency header %q that encoding/json refuses (%v)", deps, err)
			}
			if len(want) == 0 {
				want = nil
			}
			got := rr.DependencyBundleIDs
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("dependencies = %q, encoding/json says %q", got, want)
			}
		}
		if want := rsc == "true"; rr.RSCStreamObservability != want {
			t.Fatalf("rscStreamObservability %q read as %v", rsc, rr.RSCStreamObservability)
		}
	})
}
