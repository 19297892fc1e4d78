package transform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gorender/gorender/bench"
)

// propsJSONCases are programs and how many literals the rewrite (with no
// threshold) must replace. Each rewritten program must evaluate in Node to
// what the original does (TestPropsAsJSONNode), and each is a seed of
// FuzzPropsAsJSON.
var propsJSONCases = []struct {
	name string
	code string
	want int
}{
	{"gem shape", "(function(componentName = \"X\", props = undefined) {\n  var railsContext = {\"a\":1,\"href\":\"http://x/?a=1\\u0026b=2\"};\n  var usedProps = typeof props === 'undefined' ? {\"items\":[{\"id\":1,\"t\":\"it's \\\"q\\\" \\\\ \\u003c/script\\u003e\"}]} : props;\n  return [railsContext, usedProps, componentName];\n})()", 2},
	{"gem shape, props given", "(function(componentName = \"X\", props = undefined) {\n  var usedProps = typeof props === \"undefined\" ? {\"a\":1} : props;\n  return usedProps;\n})('X', 7)", 1},
	{"gem shape, throws on the next line", "(function(componentName = \"X\", props = undefined) {\n  var usedProps = typeof props === 'undefined' ? {\"a\":1} : props;\n  return usedProps.b.c;\n})()", 1},
	{"redux store props", "var reduxProps, store;\nreduxProps = {\"todos\":[1,2]};\nstore = [reduxProps];\nstore", 1},
	{"assignment in strict code throws", "(function(){ 'use strict';\nundeclared = {\"a\":1};\n})()", 1},
	{"assignment to a const throws", "const q = 1;\nq = {\"a\":1};", 1},
	{"assignment in the dead zone throws", "{\nq2 = {\"a\":1};\nlet q2; }", 1},
	{"var with a let elsewhere", "(function(p) {\n  var x = {\"a\":1};\n  let y = 2; return [x, y];\n})()", 0},
	{"var redeclaring a let", "(function(p) { let x = 1;\n  var x = {\"a\":1};\n})()", 0},
	{"var at the top level", "var x = {\"a\":1};\nx", 0},
	{"array", "x = [1, 2, {\"a\": [\"b\"]}];\nx", 1},
	{"duplicate keys", "x = {\"a\":1,\"b\":2,\"a\":3};\nx", 1},
	{"numbers", "x = [1e400, -1e400, -0, 0, -0.0, 12345678901234567890, 9007199254740993, 0.1, 1E-400, 2.5e-324, 1.7976931348623157e308, 123456789012345678901234567890e-20];\nx", 1},
	{"integer-like keys", "x = {\"b\":1,\"2\":2,\"1\":3,\"4294967295\":4,\"4294967294\":5,\"-0\":6,\"01\":7,\"1.5\":8,\"9007199254740993\":9,\"\":10};\nx", 1},
	{"line separators", "x = {\"a\":\"x\u2028y\u2029z\",\"b\":\"\\u2028\"};\nnull.f", 1},
	{"lone surrogates", "x = [\"\\ud800\", \"\\udc00x\", \"\\ud83d\\ude00\", \"\\uDBFF\"];\nx", 1},
	{"escapes", "x = {\"q\":\"it's\",\"b\":\"\\\\\",\"s\":\"\\/\",\"c\":\"\\b\\f\\n\\r\\t\\u0000\\u001f\",\"n\":\"\\u0027\\u005c\"};\nx", 1},
	{"non-ASCII", "x = {\"é\":\"ü✓😀\",\"日本\":[\"語\"]};\nx", 1},
	{"multi-line literal, positions after it", "x = {\n  \"a\": 1,\r\n  \"b\": [\r\n 2 ]\r  };\nnull.f", 1},
	{"__proto__ key", "x = {\"__proto__\":{\"x\":1}};\nx", 0},
	{"escaped __proto__ key", "x = {\"__pr\\u006fto__\":{\"x\":1}};\nx", 0},
	{"nested __proto__ key", "x = {\"a\":{\"__proto__\":null},\"b\":1};\nx", 0},
	{"__proto__ as a value", "x = {\"a\":\"__proto__\"};\nx", 1},
	{"code after it on its line", "x = {\"a\":1}; x.b.c", 0},
	{"a call after it", "x = [{\"a\":1}, null]\n.map(String);\nx", 0},
	{"not iterable", "var [a] = {\"a\":1};", 0},
	{"not a function", "({\"a\":1})\n()", 0},
	{"a name that is no parameter", "(function(p) {\n  var x = typeof q === 'undefined' ? {\"a\":1} : q;\n  return x;\n})()", 0},
	{"a parameter, in a nested block", "(function(p) { if (true) {\n  var x = typeof p === 'undefined' ? {\"a\":1} : p;\n} return x })()", 0},
	{"a statement not started", "var y = 1 +\nx = {\"a\":1};", 0},
	{"a member", "var o = {};\no.\nx = {\"a\":1};\no", 0},
	{"block at the start", `{"a":1}`, 0},
	{"block after if", `if (true) {"a":1}`, 0},
	{"label", `l: {"a":1}`, 0},
	{"case", `switch (1) { case 1: {"a":1} }`, 0},
	{"arrow body", `(() => {"a":1})()`, 0},
	{"destructuring assignment", "var a;\n({\"a\":1} = {});", 0},
	{"nested destructuring", "var b;\n[{\"a\":1}, b] = [1, 2];", 0},
	{"arrow parameter default", `((x = {"a":1}) => x)()`, 0},
	{"in an object literal", "o = {k: {\"a\":1},\nj: [1]};\no", 0},
	{"comment and string braces", "/* x = {\"a\":1} */ var y = \"= {\\\"a\\\":1}\" // = {\"b\":1}\n;\nz = {\"c\":2};\n[y, z]", 1},
	{"in a comment", "/*\nz = {\"c\":2};\n*/ 1", 0},
	{"in a template", "t = `\nz = {\"c\":2};\n`;\nt", 0},
	{"in a string with a line continuation", "t = '\\\nz = {\"c\":2};';\nt", 0},
	{"regex with braces", "var r = /[/{]\"a\"}/g.source;\nz = {\"c\":2};\n[r, z]", 1},
	{"regex after a keyword", "function f() { return /{\"a\":1}/.source }\nz = {\"c\":2};\n[f(), z]", 1},
	{"division", "var a = 4 / 2, b = a / 2;\nz = {\"c\":2};\n[a, b, z]", 1},
	{"regex or division after )", "if (true) /x/.test('x');\nz = {\"c\":2};\nz", 0},
	{"template with braces", "var t = `{\"a\":1} ${ {\"b\":2}.b } ${`${ [3] }`}`;\nz = {\"c\":2};\n[t, z]", 1},
	{"inside a template substitution", "var t = `${ (() => {\nz = {\"b\":2};\nreturn z })() }`;\nt", 0},
	{"a local JSON", "var JSON = {parse: function () { return 1 }};\nz = {\"c\":2};\nz", 0},
	{"JSON called", "var s = JSON.stringify([1]) + JSON.parse('2');\nz = {\"c\":2};\n[s, z]", 1},
	{"JSON.parse replaced", "JSON.parse = function () { return 1 };\nz = {\"c\":2};\nz", 0},
	{"JSON as a property", "var o = {}; o.JSON = 1;\nz = {\"c\":2};\n[o, z]", 1},
	{"with", "with ({}) {\nz = {\"c\":2};\n}\nz", 0},
	{"not JSON", "x = {a: 1, \"b\": 2};\nx", 0},
	{"octal-looking number", "x = [01];\nx", 0},
	{"trailing comma", "x = [1,];\nx", 0},
	{"single quotes", "x = {'a':1};\nx", 0},
	{"HTML open comment", "x = 1 <!-- ` \nvar t = `;\nz = {\"c\":2};\n`;\nt // `", 0},
	{"HTML close comment", "x = 1;\n--> ` \nvar t = `;\nz = {\"c\":2};\n`;\nt // `", 0},
	{"hashbang comment", "#! ` \nvar t = `;\nz = {\"c\":2};\n`;\nt // `", 0},
	{"of as a name, then a division", "var of = 4, r = of / 1 + `/;\nz = {\"c\":2};\n`; // `\nr", 0},
	{"object after an operator", "(f%{\nA={\"a\":1};\n})", 0},
	{"object after return", "(function(){ return {\nA={\"a\":1};\n} })()", 0},
	{"private name outside a class", "{\nA={\"a\":1};\n#A000000}", 0},
	{"unbalanced", "x = {\"a\":1};\n}", 0},
	{"deep", "x = " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + ";\nx", 1},
}

// checkRewrite checks the rewrite of code structurally: the text outside
// the replaced spans is unchanged, each span is exactly one JSON object or
// array with no "__proto__" key, its string literal holds exactly its text,
// and the program keeps its line count.
func checkRewrite(t *testing.T, code, out string, spans []jsonSpan) {
	t.Helper()
	at, o := 0, 0
	for _, sp := range spans {
		lit := code[sp.start:sp.end]
		if code[at:sp.start] != out[o:o+sp.start-at] {
			t.Fatalf("text before %d changed", sp.start)
		}
		o += sp.start - at
		if !strings.HasPrefix(out[o:], "JSON.parse('") {
			t.Fatalf("no JSON.parse at %d: %.40q", o, out[o:])
		}
		o += len("JSON.parse('")
		text, n, ok := unquoteJS(out[o:])
		if !ok || text != strings.NewReplacer("\r\n", "", "\n", "", "\r", "").Replace(lit) {
			t.Fatalf("string literal %.60q does not hold %.60q", out[o:o+n], lit)
		}
		o += n
		if !strings.HasPrefix(out[o:], ")") {
			t.Fatalf("no ) after the string at %d", o)
		}
		o++
		if lit[0] != '{' && lit[0] != '[' || !json.Valid([]byte(lit)) || !utf8.ValidString(lit) {
			t.Fatalf("span %.60q is not a JSON object or array", lit)
		}
		if hasProtoKey(t, lit) {
			t.Fatalf("span %.60q has a __proto__ key", lit)
		}
		at = sp.end
	}
	if code[at:] != out[o:] {
		t.Fatalf("text after the last span changed")
	}
	if lines(code) != lines(out) {
		t.Fatalf("line count %d became %d", lines(code), lines(out))
	}
}

func lines(s string) int {
	return strings.Count(strings.ReplaceAll(s, "\r\n", "\n"), "\n") + strings.Count(s, "\r") - strings.Count(s, "\r\n") + strings.Count(s, "\u2028") + strings.Count(s, "\u2029")
}

// unquoteJS reads the body of a single-quoted JS string literal (as
// PropsAsJSONAbove writes it: \\, \', line continuations and \uXXXX) up to
// its quote.
func unquoteJS(s string) (text string, n int, ok bool) {
	var b []uint16
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			return string(utf16.Decode(b)), i + 1, true
		case '\n', '\r':
			return "", i, false
		case '\\':
			i++
			if i >= len(s) {
				return "", i, false
			}
			switch s[i] {
			case '\\', '\'':
				b = append(b, uint16(s[i]))
			case '\r':
				if i+1 < len(s) && s[i+1] == '\n' {
					i++
				}
			case '\n':
			case 'u':
				u, err := strconv.ParseUint(s[i+1:min(i+5, len(s))], 16, 16)
				if err != nil || i+5 > len(s) {
					return "", i, false
				}
				b = append(b, uint16(u))
				i += 4
			default:
				return "", i, false
			}
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r >= utf8.RuneSelf && r != '\u2028' && r != '\u2029' {
				return "", i, false // written as \uXXXX
			}
			b = utf16.AppendRune(b, r)
			i += n - 1
		}
	}
	return "", len(s), false
}

// hasProtoKey walks JSON with encoding/json's tokenizer, independently of
// jsonValueEnd, for an object key "__proto__" (escapes decoded).
func hasProtoKey(t *testing.T, lit string) bool {
	type container struct{ object, wantKey bool }
	var open []container
	valueDone := func() {
		if n := len(open); n > 0 && open[n-1].object {
			open[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(strings.NewReader(lit))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.Fatalf("tokenize %.60q: %v", lit, err)
		}
		if n := len(open); n > 0 && open[n-1].wantKey && tok != json.Delim('}') {
			if tok == "__proto__" {
				return true
			}
			open[n-1].wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			open = append(open, container{object: tok == json.Delim('{'), wantKey: tok == json.Delim('{')})
		case json.Delim('}'), json.Delim(']'):
			open = open[:len(open)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// checkCalls checks AppendPropsAsJSON's answer for code: the same text as
// PropsAsJSONAbove's, and the calls' UTF-16 offsets give back code as the
// executor rebuilds it (executor/30-render.js, asSent).
func checkCalls(t *testing.T, code string, min int) {
	t.Helper()
	want, n := PropsAsJSONAbove(code, min)
	out, calls := AppendPropsAsJSONAbove([]byte("kept"), code, min)
	if n == 0 {
		if string(out) != "kept" || calls != nil {
			t.Fatalf("nothing rewritten, but %d bytes appended and calls %v", len(out)-4, calls)
		}
		return
	}
	if calls == nil && !utf8.ValidString(code) && string(out) == "kept" {
		return // invalid UTF-8 before a call: the text goes as sent
	}
	if string(out[4:]) != want {
		t.Fatal("appended text differs from PropsAsJSONAbove's")
	}
	if len(calls) != 2*n {
		t.Fatalf("%d offsets for %d calls", len(calls), n)
	}
	text := utf16.Encode([]rune(want))
	var back []uint16
	at := 0
	for k := 0; k < len(calls); k += 2 {
		s, e := calls[k], calls[k+1]
		if s < at || e > len(text) || !strings.HasPrefix(string(utf16.Decode(text[s:e])), "JSON.parse('") || string(utf16.Decode(text[e-2:e])) != "')" {
			t.Fatalf("call %d at [%d, %d) is no JSON.parse('…') call", k/2, s, e)
		}
		back = append(back, text[at:s]...)
		lit := text[s+len("JSON.parse('") : e-2]
		for i := 0; i < len(lit); i++ {
			if lit[i] == '\\' {
				i++
				if lit[i] == 'u' {
					u, _ := strconv.ParseUint(string(utf16.Decode(lit[i+1:i+5])), 16, 16)
					back = append(back, uint16(u))
					i += 4
					continue
				}
			}
			back = append(back, lit[i])
		}
		at = e
	}
	back = append(back, text[at:]...)
	// (Invalid UTF-8 only after the last call, decoded the same in both.)
	if got := string(utf16.Decode(back)); got != string([]rune(code)) {
		t.Fatalf("rebuilt from the calls:\n%.300q\nwant\n%.300q", got, code)
	}
}

func TestPropsAsJSONCases(t *testing.T) {
	for _, tc := range propsJSONCases {
		t.Run(tc.name, func(t *testing.T) {
			spans := propsJSONSpans(tc.code, 1)
			out, n := PropsAsJSONAbove(tc.code, 1)
			if n != tc.want || len(spans) != n {
				t.Fatalf("rewrote %d literals, want %d:\n%s", n, tc.want, out)
			}
			checkRewrite(t, tc.code, out, spans)
			checkCalls(t, tc.code, 1)
			if n == 0 && out != tc.code {
				t.Fatal("nothing rewritten, but the code changed")
			}
		})
	}
}

// TestPropsAsJSONThreshold: only literals of PropsJSONMinBytes or more.
func TestPropsAsJSONThreshold(t *testing.T) {
	item := `{"id":1,"title":"x"},`
	small := "[" + strings.Repeat(item, (PropsJSONMinBytes-2)/len(item)-1) + "0]"
	large := "[" + strings.Repeat(item, (PropsJSONMinBytes-2)/len(item)+1) + "0]"
	for _, tc := range []struct {
		lit  string
		want int
	}{{small, 0}, {large, 1}} {
		code := "(function(p) {\n  var x = typeof p === 'undefined' ? " + tc.lit + " : p;\n  return x;\n})()"
		if out, n := PropsAsJSON(code); n != tc.want || n == 0 && out != code {
			t.Fatalf("literal of %d bytes: %d rewritten, want %d", len(tc.lit), n, tc.want)
		}
	}
}

// TestPropsAsJSONRequests rewrites the props of every fixture request the
// gem's way (the ones over the threshold) and checks each rewrite.
func TestPropsAsJSONRequests(t *testing.T) {
	files, err := filepath.Glob("../../tests/testdata/requests/*.js")
	if err != nil || len(files) == 0 {
		t.Fatal("no fixture requests", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code := string(b)
		for _, min := range []int{1, PropsJSONMinBytes} {
			spans := propsJSONSpans(code, min)
			out, n := PropsAsJSONAbove(code, min)
			checkRewrite(t, code, out, spans)
			checkCalls(t, code, min)
			if min == 1 && strings.Contains(code, "railsContext = {") && n == 0 {
				t.Errorf("%s: the Rails context was not rewritten", filepath.Base(f))
			}
			if filepath.Base(f) == "list-page.js" && min == PropsJSONMinBytes && n != 1 {
				t.Errorf("list-page.js: %d literals rewritten, want its props", n)
			}
		}
	}
}

// TestPropsAsJSONLinear: hostile nesting and many failed validations stay
// linear (each byte validated at most once after a failure) and bounded.
func TestPropsAsJSONLinear(t *testing.T) {
	for _, code := range []string{
		"x = " + strings.Repeat("[", 1<<20),
		"x = " + strings.Repeat("[", 1<<20) + "a" + strings.Repeat("]", 1<<20),
		"x = " + strings.Repeat("{\"a\":", 1<<18) + "b" + strings.Repeat("}", 1<<18),
		"x = (" + strings.Repeat("[1,", 1<<18) + "a" + strings.Repeat("]", 1<<18) + ")",
		strings.Repeat("x = [[[[[[[[a]]]]]]]];\n", 1<<16),
	} {
		out, n := PropsAsJSONAbove(code, 1)
		if n != 0 || out != code {
			t.Fatalf("rewrote %d", n)
		}
	}
}

// node evaluates programs in one Node process (testdata/propsjson_eval.js)
// and describes their value; nil when Node is not on PATH.
type nodeEvaluator struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

var (
	nodeOnce sync.Once
	nodeEval *nodeEvaluator
)

func evaluator(tb testing.TB) *nodeEvaluator {
	nodeOnce.Do(func() {
		path, err := exec.LookPath("node")
		if err != nil {
			return
		}
		cmd := exec.Command(path, "testdata/propsjson_eval.js")
		in, err := cmd.StdinPipe()
		if err != nil {
			return
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return
		}
		nodeEval = &nodeEvaluator{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	})
	return nodeEval
}

func (n *nodeEvaluator) eval(tb testing.TB, code string) string {
	tb.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	req, _ := json.Marshal(map[string]string{"code": code})
	if _, err := n.in.Write(append(req, '\n')); err != nil {
		tb.Fatalf("node: %v", err)
	}
	line, err := n.out.ReadBytes('\n')
	if err != nil {
		tb.Fatalf("node: %v", err)
	}
	var res struct{ Out string }
	if err := json.Unmarshal(line, &res); err != nil {
		tb.Fatalf("node answer %q: %v", line, err)
	}
	return res.Out
}

// differential evaluates code and its rewrite in Node: the same value, or
// the same error with the same stack positions.
func differential(tb testing.TB, n *nodeEvaluator, code, out string) {
	tb.Helper()
	a, b := n.eval(tb, code), n.eval(tb, out)
	if a == "timeout" || b == "timeout" {
		return
	}
	if a != b {
		tb.Fatalf("different in Node:\ncode %q\nrewritten %q\noriginal gives  %q\nrewritten gives %q", code, out, a, b)
	}
}

// TestPropsAsJSONNode: each case evaluates in Node to the same value (or
// error, stack positions included) with and without the rewrite.
func TestPropsAsJSONNode(t *testing.T) {
	n := evaluator(t)
	if n == nil {
		t.Skip("node is not on PATH")
	}
	for _, tc := range propsJSONCases {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := PropsAsJSONAbove(tc.code, 1)
			differential(t, n, tc.code, out)
		})
	}
	// The differences the rewrite must avoid are real in Node.
	if a, b := n.eval(t, `({"__proto__":{"x":1}})`), n.eval(t, `JSON.parse('{"__proto__":{"x":1}}')`); a == b {
		t.Fatalf("__proto__: a literal and JSON.parse agree (%s): the exclusion is not needed?", a)
	}
	if a, b := n.eval(t, "var x = {\"a\":1}; x.b.c"), n.eval(t, "var x = JSON.parse('{\"a\":1}'); x.b.c"); a == b {
		t.Fatalf("a throw after the literal on its line has the same column (%s)", a)
	}
}

// FuzzPropsAsJSON: for any program, the rewrite (with no threshold) either
// leaves it unchanged or replaces only spans that are exactly JSON objects
// or arrays without a "__proto__" key, each by JSON.parse of a string
// holding its text, keeping the line count; where Node is on PATH the
// rewritten program evaluates to the same value or error.
func FuzzPropsAsJSON(f *testing.F) {
	for _, tc := range propsJSONCases {
		f.Add(tc.code)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if len(code) > 1<<16 {
			return
		}
		spans := propsJSONSpans(code, 1)
		out, n := PropsAsJSONAbove(code, 1)
		if n != len(spans) {
			t.Fatalf("%d spans, %d rewritten", len(spans), n)
		}
		if n == 0 {
			if out != code {
				t.Fatal("nothing rewritten, but the code changed")
			}
			return
		}
		checkRewrite(t, code, out, spans)
		checkCalls(t, code, 1)
		if ne := evaluator(t); ne != nil && utf8.ValidString(code) && !bytes.ContainsRune([]byte(code), 0) {
			differential(t, ne, code, out)
		}
	})
}

// TestStrStops: the eight-bytes-at-a-time search stops at the first byte
// the byte-at-a-time table marks, whatever the byte and its place.
func TestStrStops(t *testing.T) {
	for c := range 256 {
		for at := range 8 {
			for _, fill := range []byte{'a', 0x7f, ' ', 0} {
				w := []byte(strings.Repeat(string(rune('a')), 8))
				for k := at + 1; k < 8; k++ {
					w[k] = fill // what follows may be marked too
				}
				w[at] = byte(c)
				want := -1
				for k := range 8 {
					if strSpecial[w[k]] {
						want = k
						break
					}
				}
				got := -1
				if m := strStops(load64(string(w), 0)); m != 0 {
					got = bits.TrailingZeros64(m) >> 3
				}
				if got != want {
					t.Fatalf("%q: stops at %d, want %d", w, got, want)
				}
			}
		}
	}
}

// FuzzJSONValue: the validator accepts exactly what encoding/json does (in
// valid UTF-8), for a text that starts with an object or an array, and
// finds where it ends.
func FuzzJSONValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,true,false,null,"\u00e9\n"]}`, `["it's", "caf\u00e9", "café", "😀"]`, `{"a":"\ud800"} x`,
		"[\"a\x01\"]", `["\x"]`, `[01]`, "[\"\xff\"]", "[\"\xc3\"]", `{"a" : 1 , "b":{}}`, `[[[]]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || s[0] != '{' && s[0] != '[' {
			return
		}
		j := jsonText{s: s}
		end, _, _ := j.valueEnd(0)
		dec := json.NewDecoder(strings.NewReader(s))
		var v any
		err := dec.Decode(&v)
		want := -1
		if err == nil && utf8.ValidString(s[:dec.InputOffset()]) { // encoding/json takes invalid UTF-8
			want = int(dec.InputOffset())
		}
		if end != want {
			t.Fatalf("%q: end %d, encoding/json %d (%v)", s, end, want, err)
		}
	})
}

// BenchmarkPropsAsJSON: the rewrite of the medium and large pages' requests
// (bench/), and their scan with nothing to rewrite (a threshold above the
// props' size: the literal is validated, nothing is written); the small
// page has no literal over the threshold.
//
//	go test -run '^$' -bench PropsAsJSON ./jsvm/transform/
func BenchmarkPropsAsJSON(b *testing.B) {
	medium, err := os.ReadFile("../../tests/testdata/requests/list-page.js")
	if err != nil {
		b.Fatal(err)
	}
	small, err := os.ReadFile("../../tests/testdata/requests/small-page.js")
	if err != nil {
		b.Fatal(err)
	}
	large := bench.LargeRequest()
	for _, tc := range []struct {
		name string
		code string
		min  int
	}{
		{"small", string(small), PropsJSONMinBytes},
		{"medium", string(medium), PropsJSONMinBytes},
		{"large", large, PropsJSONMinBytes},
		{"medium-nothing", string(medium), 1 << 30},
		{"large-nothing", large, 1 << 30},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.code)))
			cpu := processCPU()
			for range b.N {
				PropsAsJSONAbove(tc.code, tc.min)
			}
			// The process's CPU time, which a loaded machine inflates less
			// than the wall time.
			used := float64(processCPU()-cpu) / float64(b.N)
			b.ReportMetric(used, "cpu-ns/op")
			b.ReportMetric(used/float64(len(tc.code))*1024, "cpu-ns/KB")
		})
	}
	// The node engine's way: into a buffer it reuses, with the calls'
	// offsets.
	for _, tc := range []struct{ name, code string }{{"medium-append", string(medium)}, {"large-append", large}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.code)))
			var buf []byte
			cpu := processCPU()
			for range b.N {
				buf, _ = AppendPropsAsJSON(buf[:0], tc.code)
			}
			used := float64(processCPU()-cpu) / float64(b.N)
			b.ReportMetric(used, "cpu-ns/op")
			b.ReportMetric(used/float64(len(tc.code))*1024, "cpu-ns/KB")
		})
	}
}

// processCPU is the user and system CPU time of the process so far, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
