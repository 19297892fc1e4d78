package handlers

import (
	"strings"
	"testing"

	"github.com/gorender/gorender/auth"
)

const updateLine = "\nUpdate either the renderer or the Rails server so that both use the same protocol version."

// mismatch returns the expected 412 body for version 9.9.9.
func mismatch(request string) string {
	return "Unsupported renderer protocol version " + request +
		" does not match installed renderer protocol 2.0.0 for version 9.9.9." + updateLine
}

func TestPrecheck(t *testing.T) {
	tests := []struct {
		name          string
		enc           encoded
		headers       []string
		password      auth.Password
		checkProtocol bool
		wantStatus    int // 0 = passes
		wantBody      string
	}{
		{name: "json ok", enc: encoded{MediaTypeJSON, `{"protocolVersion":"2.0.0","password":"pw"}`},
			password: testPassword, checkProtocol: true},
		{name: "json other version", enc: encoded{MediaTypeJSON, `{"protocolVersion":"1.0.0","password":"pw"}`},
			password: testPassword, checkProtocol: true, wantStatus: 412, wantBody: mismatch("request protocol 1.0.0")},
		{name: "json number version", enc: encoded{MediaTypeJSON, `{"protocolVersion":2.0,"password":"pw"}`},
			password: testPassword, checkProtocol: true, wantStatus: 412, wantBody: mismatch("request protocol 2.0")},
		{name: "json array version", enc: encoded{MediaTypeJSON, `{"protocolVersion":["2.0.0"],"password":"pw"}`},
			password: testPassword, checkProtocol: true, wantStatus: 412, wantBody: mismatch(`request protocol ["2.0.0"]`)},
		{name: "json missing, names without sensitive ones",
			enc:      encoded{MediaTypeJSON, `{"gemVersion":"17.0.0","password":"pw","renderingRequest":"x","api_key":"k","Authorization":"a","targetBundles[]":["a"]}`},
			password: testPassword, checkProtocol: true, wantStatus: 412,
			wantBody: mismatch("MISSING (received fields: gemVersion, renderingRequest, targetBundles[])")},
		{name: "json null is missing", enc: encoded{MediaTypeJSON, `{"protocolVersion":null}`},
			checkProtocol: true, wantStatus: 412, wantBody: mismatch("MISSING (received fields: protocolVersion)")},
		{name: "json empty string is missing", enc: encoded{MediaTypeJSON, `{"protocolVersion":""}`},
			checkProtocol: true, wantStatus: 412, wantBody: mismatch("MISSING (received fields: protocolVersion)")},
		{name: "json none", enc: encoded{MediaTypeJSON, `{}`},
			checkProtocol: true, wantStatus: 412, wantBody: mismatch("MISSING (received fields: (none))")},
		{name: "only sensitive names", enc: encoded{MediaTypeJSON, `{"password":"pw","token":"t"}`},
			password: testPassword, checkProtocol: true, wantStatus: 412, wantBody: mismatch("MISSING (received fields: (none))")},
		{name: "412 beats 401", enc: encoded{MediaTypeJSON, `{"protocolVersion":"1.0.0","password":"wrong"}`},
			password: testPassword, checkProtocol: true, wantStatus: 412, wantBody: mismatch("request protocol 1.0.0")},
		{name: "401 wrong", enc: encoded{MediaTypeJSON, `{"protocolVersion":"2.0.0","password":"wrong"}`},
			password: testPassword, checkProtocol: true, wantStatus: 401, wantBody: "Wrong password"},
		{name: "401 missing", enc: encoded{MediaTypeJSON, `{"protocolVersion":"2.0.0"}`},
			password: testPassword, checkProtocol: true, wantStatus: 401, wantBody: "Wrong password"},
		{name: "no password configured", enc: encoded{MediaTypeJSON, `{"protocolVersion":"2.0.0","password":"anything"}`},
			checkProtocol: true},
		{name: "no protocol check (asset-exists)", enc: encoded{MediaTypeJSON, `{"password":"pw"}`},
			password: testPassword},
		{name: "no protocol check, wrong password", enc: encoded{MediaTypeJSON, `{"protocolVersion":"1","password":"no"}`},
			password: testPassword, wantStatus: 401, wantBody: "Wrong password"},
		{name: "form ok", enc: encoded{MediaTypeForm, `protocolVersion=2.0.0&password=pw`},
			password: testPassword, checkProtocol: true},
		{name: "form other version", enc: encoded{MediaTypeForm, `password=pw&protocolVersion=1.0.0`},
			password: testPassword, checkProtocol: true, wantStatus: 412, wantBody: mismatch("request protocol 1.0.0")},
		{name: "multipart missing", enc: encoded{multipartType, multipartPairs(t, "password", "pw", "gemVersion", "16.2.0")},
			password: testPassword, checkProtocol: true, wantStatus: 412, wantBody: mismatch("MISSING (received fields: gemVersion)")},
		{name: "raw ok", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{"Authorization", "Bearer pw", headerProtocolVersion, "2.0.0"},
			password: testPassword, checkProtocol: true},
		{name: "raw missing", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{"Authorization", "Bearer pw", headerGemVersion, "17"},
			password: testPassword, checkProtocol: true, wantStatus: 412, wantBody: mismatch("MISSING (received fields: gemVersion, renderingRequest)")},
		{name: "raw non-bearer is a missing password", enc: encoded{MediaTypeRawJS, "x"},
			headers:  []string{"Authorization", "Basic pw", headerProtocolVersion, "2.0.0"},
			password: testPassword, checkProtocol: true, wantStatus: 401, wantBody: "Wrong password"},
		{name: "raw bad dependency header passes prechecks", enc: encoded{MediaTypeRawJS, "x"},
			headers:  []string{"Authorization", "Bearer pw", headerProtocolVersion, "2.0.0", headerDependencyBundle, "nope"},
			password: testPassword, checkProtocol: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := decodeString(t, tt.enc.contentType, tt.enc.body, DecodeOptions{}, tt.headers...)
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			herr = Precheck(f, tt.password, "9.9.9", tt.checkProtocol)
			if tt.wantStatus == 0 {
				if herr != nil {
					t.Fatalf("Precheck: %v", herr)
				}
				return
			}
			wantHTTPError(t, herr, tt.wantStatus, tt.wantBody)
		})
	}
}

func TestProtocolMismatchBodyTruncates(t *testing.T) {
	long := strings.Repeat("é", 80) // 160 bytes
	body := ProtocolMismatchBody(long, false, "", "1.0.0")
	want := "Unsupported renderer protocol version request protocol " + strings.Repeat("é", 50) +
		"... does not match installed renderer protocol 2.0.0 for version 1.0.0." + updateLine
	if body != want {
		t.Fatalf("body = %q, want %q", body, want)
	}
	odd := "x" + long // the cut falls inside a rune
	if got := truncateEcho(odd, 100); got != "x"+strings.Repeat("é", 49)+"..." {
		t.Fatalf("truncateEcho = %q", got)
	}
}

func TestEarlyPrecheck(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		checkProtocol bool
		wantStatus    int
	}{
		{"nothing seen: password missing", ``, true, 401},
		{"password ok, no protocol yet", `password=pw`, true, 0},
		{"protocol wrong", `protocolVersion=1&password=pw`, true, 412},
		{"protocol wrong, not checked", `protocolVersion=1&password=pw`, false, 0},
		{"protocol empty is not yet known", `protocolVersion=&password=pw`, true, 0},
		{"protocol ok, password wrong", `protocolVersion=2.0.0&password=no`, true, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := decodeString(t, MediaTypeForm, tt.body, DecodeOptions{})
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			herr = EarlyPrecheck(testPassword, "9.9.9", tt.checkProtocol)(f)
			if tt.wantStatus == 0 {
				if herr != nil {
					t.Fatalf("gate: %v", herr)
				}
				return
			}
			wantHTTPError(t, herr, tt.wantStatus, "")
		})
	}
}
