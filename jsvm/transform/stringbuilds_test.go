package transform

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"
)

const fixtures = "../../tests/testdata"

// raceEnabled reports a test binary built with -race, where an as-built
// (quadratic) list page takes minutes.
var raceEnabled = func() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return true
			}
		}
	}
	return false
}()

func readFixture(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parseableByGoja makes a fixture bundle parse in goja the way a caller of
// RewriteStringBuilds would have it: lowered by esbuild when goja cannot
// parse it (async generators), and, for this test only, with dynamic
// import() (which goja cannot parse and the SSR render never calls) renamed
// to a call of the same length.
func parseableByGoja(t *testing.T, name, src string) string {
	t.Helper()
	if _, _, err := parseForRewrite(src); err == nil {
		return src
	}
	res := api.Transform(src, api.TransformOptions{
		Loader:    api.LoaderJS,
		Target:    api.ESNext,
		Supported: map[string]bool{"async-generator": false, "for-await": false},
		LogLevel:  api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		t.Fatalf("%s: esbuild: %s", name, res.Errors[0].Text)
	}
	out := string(res.Code)
	if _, _, err := parseForRewrite(out); err == nil {
		return out
	}
	return regexp.MustCompile(`\bimport\(`).ReplaceAllString(src, "Import(")
}

// TestRewriteStringBuildsFixtures: every React fixture bundle has exactly one
// accumulator (react-dom's renderToString), the others none; the output is
// the input outside that one function, and rewriting it again changes nothing.
func TestRewriteStringBuildsFixtures(t *testing.T) {
	want := map[string]int{
		"react-app.js":        1,
		"stream-app.js":       1,
		"async-app.js":        1,
		"node-app-esbuild.js": 1,
		"node-app-webpack.js": 1,
		"rsc-stub.js":         0,
		"async-props.js":      0,
		"payload-stream.js":   0,
	}
	files, err := filepath.Glob(filepath.Join(fixtures, "bundles", "*.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture bundles: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			n, ok := want[name]
			if !ok {
				t.Fatalf("new fixture bundle %s: add its expected number of sites", name)
			}
			src := parseableByGoja(t, name, readFixture(t, "bundles/"+name))
			start := time.Now()
			out, got, err := RewriteStringBuilds(src)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if got != n {
				t.Fatalf("rewrites = %d, want %d", got, n)
			}
			t.Logf("%d site(s), %d bytes → %d, in %v", got, len(src), len(out), elapsed)
			wantLocalEdit(t, src, out, n)
			wantIdempotent(t, out)
		})
	}
}

// TestRewriteStringBuildsReactDOMBuilds: react-dom 19's own CommonJS server
// builds (unminified production and development, node and browser): the
// legacy renderers (renderToString) have one site each, the streaming ones none.
func TestRewriteStringBuildsReactDOMBuilds(t *testing.T) {
	dir := filepath.Join(fixtures, "js/node_modules/react-dom/cjs")
	files, _ := filepath.Glob(filepath.Join(dir, "react-dom-server*.js"))
	if len(files) == 0 {
		t.Skip("tests/testdata/js/node_modules not installed (npm ci there)")
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out, n, err := RewriteStringBuilds(string(b))
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if strings.Contains(name, "-legacy.") {
				want = 1
			}
			if n != want {
				t.Fatalf("rewrites = %d, want %d", n, want)
			}
			wantLocalEdit(t, string(b), out, n)
		})
	}
}

// wantLocalEdit checks that src and out differ only inside one window the
// size of a function when n > 0, and not at all when n == 0.
func wantLocalEdit(t *testing.T, src, out string, n int) {
	t.Helper()
	if n == 0 {
		if out != src {
			t.Fatal("no site, but the output differs")
		}
		return
	}
	p := 0
	for p < len(src) && p < len(out) && src[p] == out[p] {
		p++
	}
	s := 0
	for s < len(src)-p && s < len(out)-p && src[len(src)-1-s] == out[len(out)-1-s] {
		s++
	}
	if window := len(src) - p - s; window > 4000*n {
		t.Fatalf("edits span %d bytes of the source", window)
	}
	if !strings.Contains(out[p:len(out)-s], `.push(""+(`) || !strings.Contains(out, `.join("")`) {
		t.Fatalf("edited window has no push/join: %q", out[p:len(out)-s])
	}
}

func wantIdempotent(t *testing.T, out string) {
	t.Helper()
	again, n, err := RewriteStringBuilds(out)
	if err != nil || n != 0 || again != out {
		t.Fatalf("rewriting the output again: n=%d err=%v changed=%v", n, err, again != out)
	}
}

// plainEnv is the plain-script environment the goldens were recorded in
// (tests/testdata/README.md): global, console with history, no-op timers.
const plainEnv = `
var global = globalThis;
(function () {
  function record(level) {
    return function () {
      var args = Array.prototype.slice.call(arguments);
      if (typeof args[0] === 'string') args[0] = '[SERVER] ' + args[0];
      console.history.push({level: level, arguments: args});
    };
  }
  globalThis.console = {log: record('log'), info: record('info'), warn: record('warn'),
    error: record('error'), debug: record('debug'), history: []};
  globalThis.getStackTrace = function () { return new Error().stack; };
  ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval',
    'clearImmediate', 'queueMicrotask'].forEach(function (n) { globalThis[n] = function () {}; });
})();
`

// plainRuntime is a bare goja runtime with the plain environment and a
// bundle loaded: the rewrite's own harness, independent of the engine code.
type plainRuntime struct{ vm *goja.Runtime }

func newPlainRuntime(t testing.TB, name, bundle string) *plainRuntime {
	t.Helper()
	vm := goja.New()
	if _, err := vm.RunString(plainEnv); err != nil {
		t.Fatal(err)
	}
	prg, err := goja.Compile(name, bundle, false)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	if _, err := vm.RunProgram(prg); err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return &plainRuntime{vm: vm}
}

// render evaluates a rendering request: a string result verbatim, a settled
// promise's value, anything else JSON.stringify'd.
func (r *plainRuntime) render(code string) (string, error) {
	vm := r.vm
	if _, err := vm.RunString(`console.history = []; globalThis.sharedExecutionContext = new Map();`); err != nil {
		return "", err
	}
	if err := vm.Set("renderingRequest", code); err != nil {
		return "", err
	}
	v, err := vm.RunString(code)
	if err != nil {
		return "", err
	}
	if p, ok := v.Export().(*goja.Promise); ok {
		switch p.State() {
		case goja.PromiseStateFulfilled:
			v = p.Result()
		case goja.PromiseStateRejected:
			return "", fmt.Errorf("rejected: %v", p.Result())
		default:
			return "", fmt.Errorf("promise never settled")
		}
	}
	if s, ok := v.Export().(string); ok {
		return s, nil
	}
	stringify, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	s, err := stringify(goja.Undefined(), v)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}

// Stack frames differ between V8 and goja (and move by a few columns on the
// rewritten line): compare error reports without them, as tests/ does.
var (
	stackFrame      = regexp.MustCompile(`(?:\\\\n|\\n)(?:\\\\t|\\t|\s+)at [^"\\<]*`)
	trailingNewline = regexp.MustCompile(`(?:\\\\n|\\n)(\\"|"|</pre>)`)
)

func withoutStacks(s string) string {
	return trailingNewline.ReplaceAllString(stackFrame.ReplaceAllString(s, ""), "$1")
}

// TestRewriteStringBuildsGoldens renders every plain-mode request with
// react-app.js as it is and as rewritten, in a bare goja runtime: both give
// the same bytes, and Node's bytes where this bare environment is the one the
// goldens were recorded in (the async and error reports depend on the
// engine's console replay and stack format: TestRewriteStringBuildsEngine).
func TestRewriteStringBuildsGoldens(t *testing.T) {
	src := readFixture(t, "bundles/react-app.js")
	rewritten, n, err := RewriteStringBuilds(src)
	if err != nil || n != 1 {
		t.Fatalf("rewrite: n=%d err=%v", n, err)
	}
	original, edited := newPlainRuntime(t, "react-app.js", src), newPlainRuntime(t, "react-app.js", rewritten)
	for _, tc := range []struct {
		req    string
		golden bool
	}{{"hello", true}, {"hello-world", true}, {"small-page", true}, {"list-page", true}, {"async-greeting", false}, {"throws-error", false}} {
		t.Run(tc.req, func(t *testing.T) {
			code := readFixture(t, "requests/"+tc.req+".js")
			start := time.Now()
			after, err := edited.render(code)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d bytes rewritten in %v", len(after), time.Since(start))
			if golden := readFixture(t, "golden/"+tc.req+".html"); tc.golden && after != golden {
				t.Fatalf("differs from Node's golden (%d bytes vs %d):\n got %.300q\nwant %.300q", len(after), len(golden), after, golden)
			}
			if tc.req == "list-page" && (testing.Short() || raceEnabled) {
				return // as built it is quadratic: seconds
			}
			start = time.Now()
			before, err := original.render(code)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d bytes as built in %v", len(before), time.Since(start))
			if tc.req == "throws-error" { // the stack's columns move on the rewritten line
				before, after = withoutStacks(before), withoutStacks(after)
			}
			if before != after {
				t.Fatalf("rewritten bundle renders differently:\n got %.300q\nwant %.300q", after, before)
			}
		})
	}
}

// drive calls push with chunks of every kind: the rewritten accumulator must
// convert each exactly as `s += chunk` does.
const drive = `
var calls = [];
function startFlowing(request, destination) {
  var chunks = ['<div>', 'caf\u00e9 \ud83d\ude80', null, '', 42, -0, 1e21, true, undefined, {toString: function () { return '[ts]'; }},
    {valueOf: function () { return 'vo'; }, toString: function () { return 'ts'; }},
    (function () { var o = {}; o[Symbol.toPrimitive] = function (hint) { calls.push(hint); return 'tp:' + hint; }; return o; })(),
    [1, [2, 3]], '</div>'];
  for (var i = 0; i < chunks.length; i++) destination.push(chunks[i]);
}
`

func runSnippet(t *testing.T, src, call string) string {
	t.Helper()
	vm := goja.New()
	if _, err := vm.RunString(drive + src); err != nil {
		t.Fatalf("load: %v\n%s", err, src)
	}
	v, err := vm.RunString(call)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, src)
	}
	if p, ok := v.Export().(*goja.Promise); ok {
		if p.State() != goja.PromiseStateFulfilled {
			t.Fatalf("promise %v: %v", p.State(), p.Result())
		}
		v = p.Result()
	}
	return v.String() + "|" + vm.Get("calls").String()
}

// The renderToString shapes, as each toolchain prints them (React 19 and 18,
// production and development, esbuild, terser, Closure), and the variations
// the analysis allows.
var shapes = []struct {
	name, src, call string
	want            string // the exact output, when given
	sites           int    // accumulators, when not 1
}{
	{
		name: "react 19 esbuild minified",
		src:  `function I3(l,n,t,e){var a=!1,u=null,i="",c=!1;if(n=n||0,startFlowing(l,{push:function(f){return f!==null&&(i+=f),!0},destroy:function(f){a=!0,u=f}}),a&&u!==e)throw u;if(c)throw Error(D(426));return i}`,
		call: `I3({})`,
		want: `function I3(l,n,t,e){var a=!1,u=null,i=[],c=!1;if(n=n||0,startFlowing(l,{push:function(f){return f!==null&&(i.push(""+(f))),!0},destroy:function(f){a=!0,u=f}}),a&&u!==e)throw u;if(c)throw Error(D(426));return i.join("")}`,
	},
	{
		name: "react 19 terser minified (webpack)",
		src:  `function Sr(e,t,n,r){var o=!1,l=null,i="",s=!1;if(e=e||{},br(e,{push:function(e){return null!==e&&(i+=e),!0},destroy:function(e){o=!0,l=e}}),o&&l!==r)throw l;if(s)throw Error("x");return i}function br(e,t){startFlowing(e,t)}`,
		call: `Sr({})`,
		want: `function Sr(e,t,n,r){var o=!1,l=null,i=[],s=!1;if(e=e||{},br(e,{push:function(e){return null!==e&&(i.push(""+(e))),!0},destroy:function(e){o=!0,l=e}}),o&&l!==r)throw l;if(s)throw Error("x");return i.join("")}function br(e,t){startFlowing(e,t)}`,
	},
	{
		name: "react 19 production, unminified (cjs)",
		src: `function renderToStringImpl(children, options, generateStaticMarkup, abortReason) {
  var didFatal = !1,
    fatalError = null,
    result = "",
    readyToStream = !1;
  startFlowing(children, {
    push: function (chunk) {
      null !== chunk && (result += chunk);
      return !0;
    },
    destroy: function (error) {
      didFatal = !0;
      fatalError = error;
    }
  });
  if (didFatal && fatalError !== abortReason) throw fatalError;
  return result;
}`,
		call: `renderToStringImpl({})`,
	},
	{
		name: "react 18 development, unminified",
		src: `function renderToStringImpl(children, options, generateStaticMarkup, abortReason) {
  var didFatal = false;
  var fatalError = null;
  var result = '';
  var destination = {
    push: function (chunk) {
      if (chunk !== null) {
        result += chunk;
      }

      return true;
    },
    destroy: function (error) {
      didFatal = true;
      fatalError = error;
    }
  };
  var readyToStream = false;

  function onShellReady() {
    readyToStream = true;
  }

  onShellReady();
  startFlowing(children, destination);

  if (didFatal) {
    throw fatalError;
  }

  return result;
}`,
		call: `renderToStringImpl({})`,
		want: `function renderToStringImpl(children, options, generateStaticMarkup, abortReason) {
  var didFatal = false;
  var fatalError = null;
  var result = [];
  var destination = {
    push: function (chunk) {
      if (chunk !== null) {
        result.push(""+(chunk));
      }

      return true;
    },
    destroy: function (error) {
      didFatal = true;
      fatalError = error;
    }
  };
  var readyToStream = false;

  function onShellReady() {
    readyToStream = true;
  }

  onShellReady();
  startFlowing(children, destination);

  if (didFatal) {
    throw fatalError;
  }

  return result.join("");
}`,
	},
	{
		name: "react 18 production, Closure minified",
		src:  `function Tb(a,b,c,d){var f=!1,e=null,g="",h={push:function(a){null!==a&&(g+=a);return!0},destroy:function(a){f=!0;e=a}},k=!1;startFlowing(a,h);if(f)throw e;return g}`,
		call: `Tb({})`,
		want: `function Tb(a,b,c,d){var f=!1,e=null,g=[],h={push:function(a){null!==a&&(g.push(""+(a)));return!0},destroy:function(a){f=!0;e=a}},k=!1;startFlowing(a,h);if(f)throw e;return g.join("")}`,
	},
	{
		name: "method shorthand, let, arrow function",
		src: `const render = (x) => {
  let out = "";
  startFlowing(x, { push(chunk) { if (chunk !== null) out += chunk; return true; }, destroy() {} });
  return out;
};`,
		call: `render({})`,
	},
	{
		name: "arrow property, reads in expressions, shadowing closure",
		src: `function f(x) {
  var s = "";
  var d = {write: (c) => (c !== null && (s += c), true), other: function (s) { return s + 1; }};
  d.push = d.write;
  startFlowing(x, d);
  return s.length > 3 ? "[" + s + "]" : s;
}`,
		call: `f({})`,
	},
	{
		name: "async function (checked by parsing the whole output)",
		src:  `async function f(x) { var s = ""; await null; startFlowing(x, {push: function (c) { null !== c && (s += c); return true; }}); return s; }`,
		call: `f({})`,
	},
	{
		name: "class method using a private name",
		src:  `class R { #n = 0; render(x) { var s = ""; this.#n++; startFlowing(x, {push: (c) => { if (c !== null) s += c; return true; }}); return s + this.#n; } }`,
		call: `new R().render({})`,
	},
	{
		name: "two accumulators in one function, one in another",
		src: `function f(x) { var a = "", b = ""; startFlowing(x, {push(c) { if (c !== null) a += c, b += "."; return true; }}); return a + b; }
var g = function (x) { var s = ""; startFlowing(x, {push: function (c) { null !== c && (s += c); return !0; }}); return s; };`,
		call:  `f({}) + g({})`,
		sites: 3,
	},
	{
		name: "multiline gap and comma-separated appends",
		src: `function f(x) {
  var s = '';
  startFlowing(x, {push: function (c) { if (c === null) return true; s
    += c, s += "/"; return true; }});
  return s;
}`,
		call: `f({})`,
	},
}

func TestRewriteStringBuildsShapes(t *testing.T) {
	for _, tc := range shapes {
		t.Run(tc.name, func(t *testing.T) {
			out, n, err := RewriteStringBuilds(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if want := max(tc.sites, 1); n != want {
				t.Fatalf("rewrites = %d, want %d", n, want)
			}
			if tc.want != "" && out != tc.want {
				t.Fatalf("output:\n%s\nwant:\n%s", out, tc.want)
			}
			before, after := runSnippet(t, tc.src, tc.call), runSnippet(t, out, tc.call)
			if before != after {
				t.Fatalf("results differ:\nbefore %q\n after %q", before, after)
			}
			if !strings.Contains(before, "café 🚀") {
				t.Fatalf("driver did not run: %q", before)
			}
			wantIdempotent(t, out)
		})
	}
}

// TestRewriteStringBuildsNearMisses: shapes that look alike but are not
// accumulators the rewrite keeps exact (or are not the destination pattern)
// are left byte for byte.
func TestRewriteStringBuildsNearMisses(t *testing.T) {
	const sink = `startFlowing(x, {push: function (c) { null !== c && (s += c); return true; }});`
	for _, tc := range []struct{ name, src string }{
		{"appends in a loop, not in a sink", `function f(a) { var s = ""; for (var i = 0; i < a.length; i++) s += a[i]; return s; }`},
		{"non-empty initializer", `function f(x) { var s = "<"; ` + sink + ` return s; }`},
		{"const", `function f(x) { const s = ""; ` + sink + ` return s; }`},
		{"declared in a block", `function f(x) { if (x) { var s = ""; } ` + sink + ` return s; }`},
		{"reset elsewhere", `function f(x) { var s = ""; ` + sink + ` var r = s; s = ""; return r; }`},
		{"append value used", `function f(x) { var s = ""; startFlowing(x, {push: function (c) { return s += c; }}); return s; }`},
		{"other compound assignment", `function f(x) { var s = ""; startFlowing(x, {push: function (c) { s -= c; }}); return s; }`},
		{"logical assignment", `function f(x) { var s = ""; ` + sink + ` s ||= "x"; return s; }`},
		{"increment", `function f(x) { var s = ""; ` + sink + ` s++; return s; }`},
		{"delete", `function f(x) { var s = ""; ` + sink + ` delete s; return s; }`},
		{"called", `function f(x) { var s = ""; ` + sink + ` return s(); }`},
		{"new", `function f(x) { var s = ""; ` + sink + ` return new s; }`},
		{"tagged template", "function f(x) { var s = \"\"; " + sink + " return s`x`; }"},
		{"shorthand property", `function f(x) { var s = ""; ` + sink + ` return {s}; }`},
		{"destructuring target", `function f(x) { var s = ""; ` + sink + ` [s] = ["a"]; return s; }`},
		{"for-in target", `function f(x) { var s = ""; ` + sink + ` for (s in x); return s; }`},
		{"redeclared", `function f(x) { var s = ""; ` + sink + ` var s; return s; }`},
		{"parameter of the same name", `function f(x, s) { var s = ""; ` + sink + ` return s; }`},
		{"block-scoped shadow", `function f(x) { var s = ""; ` + sink + ` { let s = 1; } return s; }`},
		{"shadow by catch parameter", `function f(x) { var s = ""; ` + sink + ` try {} catch (s) {} return s; }`},
		{"block-scoped shadow in a closure", `function f(x) { var s = ""; ` + sink + ` var g = function () { if (x) { let s = 2; } return s; }; return g(); }`},
		{"default parameter of a closure", `function f(x) { var s = ""; ` + sink + ` var g = function (a = s) { var s; return a; }; return g(); }`},
		{"hoisted function declaration appends", `function f(x) { var s = ""; function push(c) { s += c; } startFlowing(x, {push: push}); return s; }`},
		{"hoisted function declaration reads", `function f(x) { var s = ""; ` + sink + ` function r() { return s; } return r(); }`},
		{"closure created before the declaration", `function f(x) { var d = {push: function (c) { s += c; }}; var s = ""; startFlowing(x, d); return s; }`},
		{"read before the declaration", `function f(x) { var t = s; var s = ""; ` + sink + ` return s + t; }`},
		{"direct eval", `function f(x) { var s = ""; ` + sink + ` eval("s = 1"); return s; }`},
		{"eval in a closure", `function f(x) { var s = ""; startFlowing(x, {push: function (c) { s += c; eval(""); }}); return s; }`},
		{"with", `function f(x) { var s = ""; ` + sink + ` with (x) { s; } return s; }`},
		{"comment between", `function f(x) { var s = ""; startFlowing(x, {push: function (c) { s /* c */ += c; }}); return s; }`},
		{"parenthesized right-hand side", `function f(x) { var s = ""; startFlowing(x, {push: function (c) { s += (c); }}); return s; }`},
		{"no read", `function f(x) { var s = ""; ` + sink + ` return 1; }`},
		{"no append", `function f(x) { var s = ""; return s; }`},
		{"global variable", `var s = ""; startFlowing({}, {push: function (c) { s += c; }}); s;`},
		{"class of the same name", `function f(x) { var s = ""; ` + sink + ` var k = class s {}; return s; }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, n, err := RewriteStringBuilds(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 || out != tc.src {
				t.Fatalf("rewrites = %d, want 0; output:\n%s", n, out)
			}
		})
	}
}

func TestRewriteStringBuildsParseError(t *testing.T) {
	src := `function (`
	out, n, err := RewriteStringBuilds(src)
	if err == nil || n != 0 || out != src {
		t.Fatalf("got n=%d err=%v", n, err)
	}
}

// TestRewriteStringBuildsCommonJS: a CommonJS module body with a top-level
// return only parses inside its wrapper; the edits land at the same places.
func TestRewriteStringBuildsCommonJS(t *testing.T) {
	src := `"use strict";
if (typeof module === "undefined") return;
function renderToString(x) {
  var result = "";
  startFlowing(x, {push: function (chunk) { null !== chunk && (result += chunk); return !0; }});
  return result;
}
module.exports = renderToString;
`
	out, n, err := RewriteStringBuilds(src)
	if err != nil || n != 1 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	if hb, n, err := RewriteStringBuilds("#!/usr/bin/env node\n" + src); err != nil || n != 1 || hb != "#!/usr/bin/env node\n"+out {
		t.Fatalf("with a hashbang line: n=%d err=%v", n, err)
	}
	if !strings.Contains(out, `var result = [];`) || !strings.Contains(out, `(result.push(""+(chunk)))`) || !strings.Contains(out, `return result.join("");`) {
		t.Fatalf("output:\n%s", out)
	}
	wrap := func(s string) string {
		return `var module = {exports: {}}; (function (module) {` + s + "\n})(module); var R = module.exports({});"
	}
	if before, after := runSnippet(t, wrap(src), `R`), runSnippet(t, wrap(out), `R`); before != after || !strings.Contains(before, "café") {
		t.Fatalf("results differ: %q vs %q", before, after)
	}
	wantIdempotent(t, out)
}
