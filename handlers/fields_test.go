package handlers

import (
	"fmt"

	"github.com/bytedance/sonic"
	"github.com/gorender/gorender/auth"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// formBody encodes name, value pairs in order.
func formBody(pairs ...string) string {
	var parts []string
	for i := 0; i+1 < len(pairs); i += 2 {
		parts = append(parts, url.QueryEscape(pairs[i])+"="+url.QueryEscape(pairs[i+1]))
	}
	return strings.Join(parts, "&")
}

// multipartPairs encodes name, value pairs as text parts.
func multipartPairs(t testing.TB, pairs ...string) string {
	t.Helper()
	var parts []part
	for i := 0; i+1 < len(pairs); i += 2 {
		parts = append(parts, part{name: pairs[i], content: pairs[i+1]})
	}
	return multipartBody(t, parts...)
}

// encoded is one body in one encoding, for tables shared by encodings.
type encoded struct {
	contentType, body string
}

// inEncodings returns the form and multipart encodings of name, value pairs.
func inEncodings(t testing.TB, pairs ...string) map[string]encoded {
	t.Helper()
	return map[string]encoded{
		"form":      {MediaTypeForm, formBody(pairs...)},
		"multipart": {multipartType, multipartPairs(t, pairs...)},
	}
}

func TestStringsConvention(t *testing.T) {
	type tc struct {
		name    string
		enc     encoded
		want    []string
		wantErr string
	}
	var tests []tc
	jsonCases := []struct {
		name, body string
		want       []string
		wantErr    string
	}{
		{"array", `{"targetBundles":["a","b"]}`, []string{"a", "b"}, ""},
		{"brackets array", `{"targetBundles[]":["a"]}`, []string{"a"}, ""},
		{"single string", `{"targetBundles":"a"}`, []string{"a"}, ""},
		{"empty string absent", `{"targetBundles":""}`, nil, ""},
		{"null absent", `{"targetBundles":null}`, nil, ""},
		{"missing", `{"other":1}`, nil, ""},
		{"null falls back to k[]", `{"targetBundles":null,"targetBundles[]":["b"]}`, []string{"b"}, ""},
		{"empty string falls back to k[]", `{"targetBundles":"","targetBundles[]":"b"}`, []string{"b"}, ""},
		{"k wins over k[]", `{"targetBundles[]":["b"],"targetBundles":["a"]}`, []string{"a"}, ""},
		{"indexed ignored", `{"targetBundles[0]":"a","targetBundles[1]":"b"}`, nil, ""},
		{"empty array is as is", `{"targetBundles":[],"targetBundles[]":["b"]}`, []string{}, ""},
		{"array with empty string as is", `{"targetBundles":[""]}`, []string{""}, ""},
		{"non-string element", `{"targetBundles":["a",1]}`, nil, `Invalid "targetBundles" field in render request.`},
		{"null element", `{"targetBundles":[null]}`, nil, `Invalid "targetBundles" field in render request.`},
		{"number", `{"targetBundles":5}`, nil, `Invalid "targetBundles" field in render request.`},
		{"object", `{"targetBundles":{"a":"b"}}`, nil, `Invalid "targetBundles" field in render request.`},
		{"bad k[]", `{"targetBundles[]":true}`, nil, `Invalid "targetBundles[]" field in render request.`},
	}
	for _, c := range jsonCases {
		tests = append(tests, tc{"json/" + c.name, encoded{MediaTypeJSON, c.body}, c.want, c.wantErr})
	}
	pairCases := []struct {
		name  string
		pairs []string
		want  []string
	}{
		{"repeated k[]", []string{"targetBundles[]", "a", "targetBundles[]", "b"}, []string{"a", "b"}},
		{"single k[]", []string{"targetBundles[]", "a"}, []string{"a"}},
		{"single k", []string{"targetBundles", "a"}, []string{"a"}},
		{"repeated k", []string{"targetBundles", "a", "targetBundles", "b"}, []string{"a", "b"}},
		{"empty k absent", []string{"targetBundles", ""}, nil},
		{"empty k falls back to k[]", []string{"targetBundles", "", "targetBundles[]", "b"}, []string{"b"}},
		{"k wins over k[]", []string{"targetBundles[]", "b", "targetBundles", "a"}, []string{"a"}},
		{"indexed ignored", []string{"targetBundles[0]", "a"}, nil},
		{"missing", []string{"other", "x"}, nil},
	}
	for _, c := range pairCases {
		for enc, e := range inEncodings(t, c.pairs...) {
			tests = append(tests, tc{enc + "/" + c.name, e, c.want, ""})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := decodeString(t, tt.enc.contentType, tt.enc.body, DecodeOptions{})
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			got, herr := f.Strings("targetBundles")
			if tt.wantErr != "" {
				wantHTTPError(t, herr, 400, tt.wantErr)
				return
			}
			if herr != nil {
				t.Fatalf("Strings: %v", herr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Strings = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestBool(t *testing.T) {
	const invalid = `Invalid "rscStreamObservability" field in render request.`
	tests := []struct {
		name    string
		enc     encoded
		headers []string
		want    bool
		wantErr bool
	}{
		{"json true", encoded{MediaTypeJSON, `{"rscStreamObservability":true}`}, nil, true, false},
		{"json false", encoded{MediaTypeJSON, `{"rscStreamObservability":false}`}, nil, false, false},
		{"json string true", encoded{MediaTypeJSON, `{"rscStreamObservability":"true"}`}, nil, true, false},
		{"json string false", encoded{MediaTypeJSON, `{"rscStreamObservability":"false"}`}, nil, false, false},
		{"json null", encoded{MediaTypeJSON, `{"rscStreamObservability":null}`}, nil, false, false},
		{"json absent", encoded{MediaTypeJSON, `{}`}, nil, false, false},
		{"json number", encoded{MediaTypeJSON, `{"rscStreamObservability":1}`}, nil, false, true},
		{"json TRUE", encoded{MediaTypeJSON, `{"rscStreamObservability":"TRUE"}`}, nil, false, true},
		{"json empty string", encoded{MediaTypeJSON, `{"rscStreamObservability":""}`}, nil, false, true},
		{"json array", encoded{MediaTypeJSON, `{"rscStreamObservability":[true]}`}, nil, false, true},
		{"form true", encoded{MediaTypeForm, `rscStreamObservability=true`}, nil, true, false},
		{"form false", encoded{MediaTypeForm, `rscStreamObservability=false`}, nil, false, false},
		{"form yes", encoded{MediaTypeForm, `rscStreamObservability=yes`}, nil, false, true},
		{"form empty", encoded{MediaTypeForm, `rscStreamObservability=`}, nil, false, true},
		{"multipart true", encoded{multipartType, multipartPairs(t, "rscStreamObservability", "true")}, nil, true, false},
		{"multipart 1", encoded{multipartType, multipartPairs(t, "rscStreamObservability", "1")}, nil, false, true},
		{"raw header true", encoded{MediaTypeRawJS, `x`}, []string{headerRSCObservability, "true"}, true, false},
		{"raw header false", encoded{MediaTypeRawJS, `x`}, []string{headerRSCObservability, "false"}, false, false},
		{"raw header absent", encoded{MediaTypeRawJS, `x`}, nil, false, false},
		{"raw header yes", encoded{MediaTypeRawJS, `x`}, []string{headerRSCObservability, "yes"}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := decodeString(t, tt.enc.contentType, tt.enc.body, DecodeOptions{}, tt.headers...)
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			got, herr := f.Bool("rscStreamObservability")
			if tt.wantErr {
				wantHTTPError(t, herr, 400, invalid)
				return
			}
			if herr != nil {
				t.Fatalf("Bool: %v", herr)
			}
			if got != tt.want {
				t.Fatalf("Bool = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckedStringTextTypeOf(t *testing.T) {
	tests := []struct {
		name        string
		enc         encoded
		wantString  string
		wantPresent bool
		wantErr     bool
		wantText    string
		wantType    string
	}{
		{"json string", encoded{MediaTypeJSON, `{"v":"2.0.0"}`}, "2.0.0", true, false, "2.0.0", "string"},
		{"json number", encoded{MediaTypeJSON, `{"v":2.0}`}, "", true, true, "2.0", "number"},
		{"json bool", encoded{MediaTypeJSON, `{"v":false}`}, "", true, true, "false", "boolean"},
		{"json null", encoded{MediaTypeJSON, `{"v":null}`}, "", false, false, "", "object"},
		{"json array", encoded{MediaTypeJSON, `{"v":["a", 1]}`}, "", true, true, `["a",1]`, "object"},
		{"json object", encoded{MediaTypeJSON, `{"v":{"a":"b"}}`}, "", true, true, `{"a":"b"}`, "object"},
		{"json absent", encoded{MediaTypeJSON, `{}`}, "", false, false, "", "undefined"},
		{"json duplicate: last wins", encoded{MediaTypeJSON, `{"v":"a","v":"b"}`}, "b", true, false, "b", "string"},
		{"form first of repeated", encoded{MediaTypeForm, `v=a&v=b`}, "a", true, false, "a", "string"},
		{"form empty", encoded{MediaTypeForm, `v=`}, "", true, false, "", "string"},
		{"form no equals", encoded{MediaTypeForm, `v`}, "", true, false, "", "string"},
		{"multipart", encoded{multipartType, multipartPairs(t, "v", "x y")}, "x y", true, false, "x y", "string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := decodeString(t, tt.enc.contentType, tt.enc.body, DecodeOptions{})
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			s, present, herr := f.CheckedString("v")
			if (herr != nil) != tt.wantErr {
				t.Fatalf("CheckedString err = %v, wantErr %v", herr, tt.wantErr)
			}
			if herr != nil {
				wantHTTPError(t, herr, 400, `Invalid "v" field in render request.`)
			}
			if s != tt.wantString || present != tt.wantPresent {
				t.Errorf("CheckedString = %q, %v; want %q, %v", s, present, tt.wantString, tt.wantPresent)
			}
			if text, _ := f.Text("v"); text != tt.wantText {
				t.Errorf("Text = %q, want %q", text, tt.wantText)
			}
			if typ := f.TypeOf("v"); typ != tt.wantType {
				t.Errorf("TypeOf = %q, want %q", typ, tt.wantType)
			}
		})
	}
}

func TestNamesOrderAndSafeNames(t *testing.T) {
	want := []string{"gemVersion", "password", "protocolVersion", "dependencyBundleTimestamps[]", "Token", "renderingRequest"}
	wantSafe := []string{"gemVersion", "protocolVersion", "dependencyBundleTimestamps[]", "renderingRequest"}
	pairs := []string{
		"gemVersion", "17.0.0", "password", "pw", "protocolVersion", "2.0.0",
		"dependencyBundleTimestamps[]", "a", "dependencyBundleTimestamps[]", "b",
		"Token", "t", "renderingRequest", "x",
	}
	encs := inEncodings(t, pairs...)
	encs["json"] = encoded{MediaTypeJSON, `{"gemVersion":"17.0.0","password":"pw","protocolVersion":"2.0.0",` +
		`"dependencyBundleTimestamps[]":["a","b"],"Token":"t","renderingRequest":"x","password":"again"}`}
	for name, enc := range encs {
		t.Run(name, func(t *testing.T) {
			f, herr := decodeString(t, enc.contentType, enc.body, DecodeOptions{})
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			if got := f.Names(); !reflect.DeepEqual(got, want) {
				t.Errorf("Names = %q, want %q", got, want)
			}
			if got := f.SafeNames(); !reflect.DeepEqual(got, wantSafe) {
				t.Errorf("SafeNames = %q, want %q", got, wantSafe)
			}
		})
	}
}

// TestManyFields crosses scannedFields: the names found by a scan and
// those found through the index read alike, repeats included.
func TestManyFields(t *testing.T) {
	var names, pairs []string
	var obj []string
	for i := range 2*scannedFields + 3 {
		name := fmt.Sprintf("field%d", i)
		names = append(names, name)
		pairs = append(pairs, name, "first")
		obj = append(obj, fmt.Sprintf("%q:%q", name, "first"))
	}
	// Repeat names seen before and after the index was built.
	for _, i := range []int{0, scannedFields - 1, scannedFields, 2 * scannedFields} {
		pairs = append(pairs, names[i], "again")
		obj = append(obj, fmt.Sprintf("%q:%q", names[i], "again"))
	}
	encs := inEncodings(t, pairs...)
	encs["json"] = encoded{MediaTypeJSON, "{" + strings.Join(obj, ",") + "}"}
	for enc, e := range encs {
		t.Run(enc, func(t *testing.T) {
			f, herr := decodeString(t, e.contentType, e.body, DecodeOptions{})
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			if got := f.Names(); !reflect.DeepEqual(got, names) {
				t.Errorf("Names = %q, want %q", got, names)
			}
			for i, name := range names {
				repeated := i == 0 || i == scannedFields-1 || i == scannedFields || i == 2*scannedFields
				want := []string{"first"}
				switch {
				case repeated && enc == "json":
					want = []string{"again"} // the last value, as JSON.parse keeps it
				case repeated:
					want = []string{"first", "again"}
				}
				if got, herr := f.Strings(name); herr != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("Strings(%q) = %q, %v; want %q", name, got, herr, want)
				}
			}
			if _, ok := f.Lookup("absent"); ok {
				t.Error(`Lookup("absent") found a value`)
			}
		})
	}
}

func TestNilFields(t *testing.T) {
	var f *Fields
	if f.Names() != nil || f.SafeNames() != nil || f.TypeOf("x") != "undefined" {
		t.Fatal("nil Fields must read as empty")
	}
	if _, ok := f.Lookup("x"); ok {
		t.Fatal("nil Fields must have no value")
	}
}

// newTestPassword returns a configured password for tests.
func newTestPassword(secret string) auth.Password { return auth.NewPassword(secret) }

// jsonString encodes s as a JSON string.
func jsonString(s string) (string, error) {
	out, err := sonic.MarshalString(s)
	if err != nil {
		return "", fmt.Errorf("encode JSON string: %w", err)
	}
	return out, nil
}
