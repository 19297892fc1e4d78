package errtrack

import (
	"reflect"
	"strings"
	"testing"
)

// Stacks as each engine answers them for the source-mapped fixture
// (tests/testdata/sourcemap) after jsvm/sourcemap mapped them: the error
// thrown in src/greeting.js, called through src/index.js from the rendering
// request, in a promise job on quickjs (which then shows its environment's
// frame). The node one has the frames V8 adds around a bundle that Node's
// executor does not strip (eval, native, Node's internals, a path on the
// server).
var engineStacks = map[string]struct {
	stack string
	want  []Frame
}{
	"goja": {
		stack: "Error: greet: no user given\n\tat r (src/greeting.js:8:9)\n\tat greet (src/index.js:8:12)\n\tat renderingRequest:1:19(3)\n\tat Array.prototype.map (native)\n",
		want: []Frame{
			{Function: "r", File: "src/greeting.js", Line: 8, Column: 9, InApp: true},
			{Function: "greet", File: "src/index.js", Line: 8, Column: 12, InApp: true},
			{File: "renderingRequest", Line: 1, Column: 19},
			{Function: "Array.prototype.map", File: "native"},
		},
	},
	"quickjs": {
		stack: "Error: greet: no user given\n    at r (src/greeting.js:8:13)\n    at greet (src/index.js:8:5)\n    at <eval> (renderingRequest:1:46)\n    at gorender-quickjs.js:122:18\n",
		want: []Frame{
			{Function: "r", File: "src/greeting.js", Line: 8, Column: 13, InApp: true},
			{Function: "greet", File: "src/index.js", Line: 8, Column: 5, InApp: true},
			{Function: "<eval>", File: "renderingRequest", Line: 1, Column: 46},
			{File: "gorender-quickjs.js", Line: 122, Column: 18},
		},
	},
	"node": {
		stack: "TypeError: Cannot read properties of null (reading 'x')\n    at r (src/greeting.js:8:9)\n    at Object.greet (src/index.js:8:12)\n" +
			"    at async Promise.all (index 0)\n    at new Promise (<anonymous>)\n    at eval (eval at load (rorp-1.js:1:10), <anonymous>:1:1)\n" +
			"    at rorp-1.js:1:2048\n    at node_modules/react-dom/cjs/server.js:10:4\n    at runInContext (node:vm:307:38)\n    at render (/srv/work/executor.js:500:7)\n",
		want: []Frame{
			{Function: "r", File: "src/greeting.js", Line: 8, Column: 9, InApp: true},
			{Function: "Object.greet", File: "src/index.js", Line: 8, Column: 12, InApp: true},
			{Function: "Promise.all", File: "index 0"},
			{Function: "Promise", File: "<anonymous>"},
			{Function: "eval", File: "<anonymous>", Line: 1, Column: 1},
			{File: "rorp-1.js", Line: 1, Column: 2048, InApp: true},
			{File: "node_modules/react-dom/cjs/server.js", Line: 10, Column: 4},
			{Function: "runInContext", File: "node:vm", Line: 307, Column: 38},
			{Function: "render", File: "/srv/work/executor.js", Line: 500, Column: 7},
		},
	},
}

// TestParseStack: each engine's stack reads as the same frames, in-app
// for the bundle's sources only.
func TestParseStack(t *testing.T) {
	for engine, c := range engineStacks {
		if got := ParseStack(c.stack); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", engine, got, c.want)
		}
	}
	if got := errorType(engineStacks["node"].stack); got != "TypeError" {
		t.Errorf("errorType = %q, want TypeError", got)
	}
	if got := errorType("[object Object]\n\tat renderingRequest:1:1(3)"); got != "Error" {
		t.Errorf("errorType of a thrown object = %q, want Error", got)
	}
	deep := strings.Repeat("    at f (src/a.js:1:1)\n", 5000)
	if n := len(ParseStack(deep)); n != maxFrames {
		t.Errorf("a deep stack gave %d frames, want %d", n, maxFrames)
	}
}

// TestFingerprint: the same error from two bundles groups together, with
// or without a source map (frames naming the bundle); another error does not.
func TestFingerprint(t *testing.T) {
	stack := func(id string) []Frame {
		return ParseStack("Error: x\n    at r (" + id + ".js:1:200)\n    at " + id + ".js:1:900\n    at renderingRequest:1:5\n")
	}
	a := fingerprint(KindJSError, "Error", "x", stack("rorp-a"), []string{"rorp-a"})
	b := fingerprint(KindJSError, "Error", "x", stack("rorp-b"), []string{"rorp-b"})
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two bundles of one source: %q and %q", a, b)
	}
	for _, fp := range [][]string{a, b} {
		if strings.Contains(strings.Join(fp, " "), "rorp-") {
			t.Errorf("a fingerprint names the bundle: %q", fp)
		}
	}
	if c := fingerprint(KindJSError, "Error", "x", ParseStack("Error: x\n    at r (rorp-a.js:1:300)\n"), []string{"rorp-a"}); reflect.DeepEqual(a, c) {
		t.Errorf("a throw elsewhere groups with the first: %q", c)
	}
	mapped := engineStacks["goja"].want
	if fingerprint(KindJSError, "Error", "m", mapped, []string{"a"})[4] != "src/greeting.js:8:9 r" {
		t.Errorf("the first in-app frame is not in the fingerprint: %q", fingerprint(KindJSError, "Error", "m", mapped, nil))
	}
}

// TestMessageShape: quoted values and long numbers do not leave; the
// message's words do, within maxMessage characters.
func TestMessageShape(t *testing.T) {
	for in, want := range map[string]string{
		`Cannot read properties of null (reading 'x')`:    `Cannot read properties of null (reading '…')`,
		`bad props {"name":"Ada Lovelace","card":"4111"}`: `bad props {"…":"…","…":"…"}`,
		"order 1234567 for `template` failed":             "order <n> for `…` failed",
		"Minified React error #418; visit":                "Minified React error #418; visit",
	} {
		if got := messageShape(in); got != want {
			t.Errorf("messageShape(%q) = %q, want %q", in, got, want)
		}
	}
	if got := messageShape(strings.Repeat("é", 5000)); len([]rune(got)) != maxMessage+1 {
		t.Errorf("a long message keeps %d characters", len([]rune(got)))
	}
}
