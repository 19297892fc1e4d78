package handlers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestJSONHead(t *testing.T) {
	tests := []struct {
		name, body string
		names      []string
		texts      map[string]string // precheck field → Text ("" with absent)
		cut        bool
		wantErr    string
	}{
		{name: "gem body", body: `{"gemVersion":"17.0.0","protocolVersion":"2.0.0","password":"pw","renderingRequest":"a \"}\" [x] {y} \\"}`,
			names: []string{"gemVersion", "protocolVersion", "password", "renderingRequest"},
			texts: map[string]string{"password": "pw", "protocolVersion": "2.0.0"}},
		{name: "escaped key and value", body: ` { "pass\u0077ord" : "p\u00e9" , "x" : [ {"password":"inner"} ] } `,
			names: []string{"password", "x"}, texts: map[string]string{"password": "pé"}},
		{name: "scalars", body: `{"protocolVersion":2.0,"password":true}`,
			names: []string{"protocolVersion", "password"}, texts: map[string]string{"protocolVersion": "2.0", "password": "true"}},
		{name: "null is absent", body: `{"password":null}`, names: []string{"password"}},
		{name: "repeated key keeps its first place and its last value", body: `{"password":"a","b":1,"password":"c"}`,
			names: []string{"password", "b"}, texts: map[string]string{"password": "c"}},
		{name: "array value, compacted", body: `{"protocolVersion": [ "2.0.0" , {"a" : 1} ]}`,
			names: []string{"protocolVersion"}, texts: map[string]string{"protocolVersion": `["2.0.0",{"a":1}]`}},
		{name: "names stop at what an answer echoes", body: `{` + manyKeys(2000) + `,"password":"late"}`,
			cut: true, texts: map[string]string{"password": "late"}},
		{name: "not an object", body: `[1]`, wantErr: "Invalid JSON body: expected a JSON object."},
		{name: "invalid", body: `{"a":}`, wantErr: "Invalid JSON body: syntax error at byte offset 5."},
		{name: "empty", body: ` `, wantErr: "Invalid JSON body: the body is empty."},
		{name: "too deep", body: `{"a":` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth) + `}`,
			wantErr: "Invalid JSON body: nested deeper than 512 levels."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := jsonHead([]byte(tt.body))
			if tt.wantErr != "" {
				if herr == nil || herr.Status != http.StatusBadRequest || herr.Body != tt.wantErr {
					t.Fatalf("got %v, want 400 %q", herr, tt.wantErr)
				}
				// The decoder refuses it the same way.
				if _, full := DecodeJSONObject([]byte(tt.body)); full == nil || full.Body != tt.wantErr {
					t.Errorf("DecodeJSONObject: %v, want %q", full, tt.wantErr)
				}
				return
			}
			if herr != nil {
				t.Fatalf("refused: %v", herr)
			}
			if tt.names != nil && !reflect.DeepEqual(f.Names(), tt.names) {
				t.Errorf("names %q, want %q", f.Names(), tt.names)
			}
			if f.namesCut != tt.cut {
				t.Errorf("namesCut %v, want %v", f.namesCut, tt.cut)
			}
			for _, name := range precheckFields {
				if got, _ := f.Text(name); got != tt.texts[name] {
					t.Errorf("%s = %q, want %q", name, got, tt.texts[name])
				}
			}
		})
	}
}

// manyKeys returns n distinct "kN":1 members.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	return b.String()
}

func TestFormHead(t *testing.T) {
	f, herr := formHead([]byte("gemVersion=1&password=p%20w&protocolVersion=2.0.0&password=second&a%5B%5D=1&=x&a%5B%5D=2"))
	if herr != nil {
		t.Fatal(herr)
	}
	if want := []string{"gemVersion", "password", "protocolVersion", "a[]"}; !reflect.DeepEqual(f.Names(), want) {
		t.Errorf("names %q, want %q", f.Names(), want)
	}
	if got, _ := f.Text("password"); got != "p w" {
		t.Errorf("password %q, want the first one", got)
	}
	if _, herr := formHead([]byte("a%zz=1")); herr == nil || herr.Status != http.StatusBadRequest {
		t.Errorf("bad escape in a name: %v, want 400", herr)
	}
	long := strings.ReplaceAll(manyKeys(1000), `"`, "") + ",password=late"
	long = strings.NewReplacer(",", "&", ":", "=").Replace(long)
	if f, _ := formHead([]byte(long)); !f.namesCut || len(f.EchoNames()) > maxEchoedBytes+len(", ...") {
		t.Errorf("%d names recorded (cut %v), want them cut at what an answer echoes", len(f.Names()), f.namesCut)
	} else if got, _ := f.Text("password"); got != "late" {
		t.Errorf("password after the cut = %q, want late", got)
	}
}

func TestEchoNames(t *testing.T) {
	f := &Fields{}
	for _, n := range []string{"a", "password", "b"} {
		f.noteName(n)
	}
	if got := f.EchoNames(); got != "a, b" {
		t.Errorf("EchoNames = %q", got)
	}
	if got := (&Fields{}).EchoNames(); got != "(none)" {
		t.Errorf("no names: %q", got)
	}
	many := &Fields{}
	for i := range 100000 {
		many.slot("field" + strconv.Itoa(i))
	}
	got := many.EchoNames()
	if len(got) > maxEchoedBytes+len(", ...") || !strings.HasSuffix(got, "...") || !strings.HasPrefix(got, "field0, field1, ") {
		t.Errorf("EchoNames of 100,000 names: %d bytes, %q...", len(got), got[:min(len(got), 40)])
	}
	huge := &Fields{}
	huge.slot(strings.Repeat("x", 5000))
	if got := huge.EchoNames(); len(got) > maxEchoedBytes+len("...") {
		t.Errorf("one 5000-byte name echoed as %d bytes", len(got))
	}
}

// chunkedReader yields its chunks one read at a time.
type chunkedReader struct{ chunks []string }

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	if r.chunks[0] == "" {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

func TestGuardedBody(t *testing.T) {
	b := NewBudget(requestCharge + 200<<10)
	newGuard := func(body string) *guardedBody {
		r, _ := http.NewRequest(http.MethodPost, "/", io.NopCloser(&chunkedReader{chunks: []string{body}}))
		r.Header = http.Header{}
		h := &Handlers{Deps: Deps{Budget: b}}
		return h.guardBody(httptest.NewRecorder(), r)
	}

	// Reading charges the request's charge and every byte; release returns them.
	g := newGuard(strings.Repeat("a", 100<<10))
	data, err := readAll(g)
	if err != nil || len(data) != 100<<10 {
		t.Fatalf("readAll: %d bytes, %v", len(data), err)
	}
	if want := int64(requestCharge + 100<<10); b.InUse() != want {
		t.Errorf("in use %d after 100 KiB, want %d", b.InUse(), want)
	}

	// A second request finds the rest busy: 503.
	g2 := newGuard(strings.Repeat("b", 150<<10))
	_, err = readAll(g2)
	if herr := readError("request body", err); herr.Status != http.StatusServiceUnavailable {
		t.Errorf("over a busy budget: %v, want 503", herr)
	}
	g2.release()
	g.release()
	if b.InUse() != 0 {
		t.Errorf("in use %d after release, want 0", b.InUse())
	}

	// A request alone larger than the budget: 413.
	g3 := newGuard(strings.Repeat("c", 300<<10))
	_, err = readAll(g3)
	if herr := readError("request body", err); herr.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("over the whole budget: %v, want 413", herr)
	}
	g3.release()

	// Once authenticated nothing is charged.
	g4 := newGuard(strings.Repeat("d", 400<<10))
	g4.authenticated()
	if data, err := readAll(g4); err != nil || len(data) != 400<<10 || b.InUse() != 0 {
		t.Errorf("authenticated: %d bytes, %v, in use %d", len(data), err, b.InUse())
	}
}
