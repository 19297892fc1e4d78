package nodeengine

import (
	"encoding/json"
	"reflect"
	"testing"
)

// codecHeaders are headers of every kind gorender sends or reads, plain
// and with what the hand-written codec leaves to encoding/json.
var codecHeaders = []header{
	{},
	{T: "render", R: 12345, B: "rorp-v2-s-f761", Set: map[string]string{"b2": "k2", "a1": "k1", "c": "k1"}, Sink: true, Updates: true},
	{T: "render", R: 1, B: "p", Set: map[string]string{"x": "p"}, Host: []hostEntry{{Key: "pushProps", Kind: "set", Value: []string{"x", "y"}}, {Key: "n", Kind: "value", Value: 1.5}, {Key: "f", Kind: "func"}}},
	{T: "load", B: "p1", Name: "bundle.js", File: "/cache/b/bundle.js", Dir: "/cache/b", Map: "/cache/b/bundle.js.map"},
	{T: "update", R: 18446744073709551615, N: 3, ID: "other"},
	{T: "cancel", R: 9, Why: "client"},
	{T: "init", Options: &executorOptions{StubTimers: true, ConsoleMaxLines: 100, ConsoleMaxBytes: 1 << 20, ErrorTextMax: 5000, SourceMapLimit: 7}},
	{T: "ready", Node: "v20.20.2", PID: 4242},
	{T: "ready", PID: -1},
	{T: "done", R: 7, Kind: "body"},
	{T: "call", R: 7, K: "pushProps", Args: []string{"a", "<b>", ""}},
	{T: "chunk", R: 7, Kind: `quote " backslash \ tab 	 nul ` + "\x00"},
	{T: "html <>&", B: "é unicode ☃ \u2028 \u2029", Name: "invalid \xff\xfe utf-8", Set: map[string]string{"é": "<&>", "": ""}},
	{T: "del \x7f", Why: "/slash/"},
}

// TestHeaderEncodingIsJSONs: every header is written exactly as
// encoding/json writes it.
func TestHeaderEncodingIsJSONs(t *testing.T) {
	for _, h := range codecHeaders {
		checkEncoding(t, &h)
	}
}

func checkEncoding(t *testing.T, h *header) {
	t.Helper()
	want, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := appendHeader(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("header %+v\n got %s\nwant %s", h, got, want)
	}
	if head, err := frameHead(h, 5); err != nil || string(head[8:]) != string(want) {
		t.Fatalf("frameHead: %q, %v; want the header %s", head, err, want)
	}
}

// TestHeaderDecodingIsJSONs: whatever the hand-written reader takes, it
// reads as encoding/json does; the executor's plain headers (JSON.stringify
// writes no spaces) are taken, others left to encoding/json.
func TestHeaderDecodingIsJSONs(t *testing.T) {
	taken := []string{
		`{"kind":"body","t":"done","r":7}`,
		`{"t":"ready","node":"v20.20.2","pid":4242}`,
		`{"t":"start","r":18446744073709551615}`,
		`{"t":"updated","r":1,"n":0}`,
		`{"t":"x","sink":true,"updates":false,"b":"<&>","t":"last"}`,
		`{"t":"loaded","b":"k","name":"n","file":"f","dir":"d","map":"m","id":"i","why":"w","k":"k"}`,
		`{}`,
	}
	left := []string{
		`{"t":"done", "r":7}`,
		`{"t":"call","r":7,"k":"f","args":["a"]}`,
		`{"t":"done","r":7,"kind":"b\u006fdy"}`,
		`{"t":"done","r":7,"kind":"é"}`,
		`{"T":"done"}`,
		`{"t":"done","extra":1}`,
		`{"t":"done","r":18446744073709551616}`,
		`{"t":"done","r":07}`,
		`{"t":"done","r":-7}`,
		`{"t":"done","r":7.0}`,
		`{"t":null}`,
		`{"t":1}`,
		`{"r":"7"}`,
		`{"sink":tru}`,
		`{"sink":1}`,
		`{"t":"done",}`,
		`{"t":"done"}x`,
		`{"t":"done"`,
		`[]`,
		`{"pid":9223372036854775808}`,
		"{\"t\":\"a\tb\"}",
	}
	for _, s := range taken {
		if !checkDecoding(t, []byte(s)) {
			t.Errorf("%s: left to encoding/json, want it read by hand", s)
		}
	}
	for _, s := range left {
		if checkDecoding(t, []byte(s)) {
			t.Errorf("%s: read by hand, want it left to encoding/json", s)
		}
	}
	for _, h := range codecHeaders {
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		checkDecoding(t, b)
	}
}

// checkDecoding fails t if parseHeader takes s and reads it otherwise than
// encoding/json; it reports whether parseHeader took it.
func checkDecoding(t *testing.T, s []byte) bool {
	t.Helper()
	var got header
	if !parseHeader(s, &got) {
		return false
	}
	var want header
	if err := json.Unmarshal(s, &want); err != nil {
		t.Fatalf("%s: read by hand as %+v, but encoding/json fails: %v", s, got, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: read by hand as %+v, encoding/json reads %+v", s, got, want)
	}
	return true
}

// FuzzHeaderCodec: for any strings and numbers the encoding is
// encoding/json's, and any bytes the reader takes it reads as
// encoding/json does.
func FuzzHeaderCodec(f *testing.F) {
	f.Add("done", uint64(7), "body", "k", []byte(`{"kind":"body","t":"done","r":7}`))
	f.Add("a\"<é\xff", uint64(0), "", "\x00", []byte(`{"t":"a","sink":true}`))
	f.Fuzz(func(t *testing.T, s1 string, n uint64, s2, s3 string, raw []byte) {
		h := header{T: s1, R: n, Kind: s2, B: s3, Set: map[string]string{s2: s3, s3: s1}, Why: s1 + s3, N: n / 3, PID: int(n % 100000)}
		checkEncoding(t, &h)
		b, _ := json.Marshal(&h)
		checkDecoding(t, b)
		checkDecoding(t, raw)
	})
}
