package gojaengine

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
	"github.com/gorender/gorender/jsvm/inproc"
)

func readFixture(t testing.TB, rel string) string {
	t.Helper()
	return conformance.Testdata(t, rel)
}

// TestRewriteStringBuildsEngine compiles react-app.js as built through the
// engine (NewEngine), which rewrites it unless KeepStringBuilds, and renders
// every plain request: Node's bytes either way.
func TestRewriteStringBuildsEngine(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("KeepStringBuilds=%v", keep), func(t *testing.T) {
			e := conformance.Open(t, New, jsvm.Options{StubTimers: true, ReplayAsyncLogs: true, KeepStringBuilds: keep})
			p, err := e.Compile("react-app", "", readFixture(t, "bundles/react-app.js"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := StringBuilds(p), map[bool]int{false: 1, true: 0}[keep]; got != want {
				t.Fatalf("string builds rewritten = %d, want %d", got, want)
			}
			rt := conformance.LoadProgram(t, e, p)
			for _, req := range []string{"hello", "hello-world", "small-page", "list-page", "async-greeting", "throws-error"} {
				if req == "list-page" && keep && (testing.Short() || conformance.RaceEnabled) {
					continue // as built it is quadratic: seconds
				}
				res, err := rt.Eval(t.Context(), readFixture(t, "requests/"+req+".js"), jsvm.NewRequest(map[string]jsvm.Runtime{"react-app": rt}))
				if err != nil {
					t.Fatalf("%s: %v", req, err)
				}
				got, want := res.Body, readFixture(t, "golden/"+req+".html")
				if req == "throws-error" {
					got, want = withoutStacks(got), withoutStacks(want)
				}
				if got != want {
					t.Errorf("%s differs from Node's golden:\n got %.300q\nwant %.300q", req, got, want)
				}
			}
		})
	}
}

// TestRewriteStringBuildsNodeApps compiles the support-modules NodeApp
// bundles (esbuild for Node; webpack + terser, one line) through the engine,
// which rewrites them, and renders them in its Node-compatible environment: Node's goldens, byte for byte.
// Their dynamic import() (lazy routes, never called by these renders) is
// renamed so that goja parses the bundle without lowering.
func TestRewriteStringBuildsNodeApps(t *testing.T) {
	e := conformance.Open(t, New, jsvm.Options{SupportModules: true, ReplayAsyncLogs: true})
	for _, name := range []string{"node-app-esbuild.js", "node-app-webpack.js"} {
		t.Run(name, func(t *testing.T) {
			src := regexp.MustCompile(`\bimport\(`).ReplaceAllString(readFixture(t, "bundles/"+name), "Import(")
			p, err := e.Compile("node-app", conformance.TestdataPath(t, "bundles", name), src)
			if err != nil {
				t.Fatal(err)
			}
			if n := StringBuilds(p); n != 1 {
				t.Fatalf("string builds rewritten at load = %d, want 1", n)
			}
			rt := conformance.LoadProgram(t, e, p)
			for _, req := range []string{"node-app-home", "node-app-about"} {
				res, err := rt.Eval(t.Context(), readFixture(t, "requests/"+req+".js"), jsvm.NewRequest(map[string]jsvm.Runtime{"node-app": rt}))
				if err != nil {
					t.Fatalf("%s: %v", req, err)
				}
				if want := readFixture(t, "golden/"+req+".html"); res.Body != want {
					t.Errorf("%s differs from Node's golden:\n got %.300q\nwant %.300q", req, res.Body, want)
				}
			}
		})
	}
}

// Stack frames differ between V8 and goja: compare error reports without
// them, as tests/ does.
var (
	stackFrame      = regexp.MustCompile(`(?:\\\\n|\\n)(?:\\\\t|\\t|\s+)at [^"\\<]*`)
	trailingNewline = regexp.MustCompile(`(?:\\\\n|\\n)(\\"|"|</pre>)`)
)

func withoutStacks(s string) string {
	return trailingNewline.ReplaceAllString(stackFrame.ReplaceAllString(s, ""), "$1")
}

// lowered reports whether p was lowered by esbuild before goja parsed it.
func lowered(p jsvm.Program) bool { return p.(*inproc.Program).Code.(*program).lowered }

// goja has no async generators: such a bundle is lowered with esbuild once,
// at compile, and renders as in Node.
func TestAsyncGeneratorBundleIsLowered(t *testing.T) {
	src := `
async function* numbers(n) { for (let i = 1; i <= n; i++) { await null; yield i; } }
async function sum(n) { let s = 0; for await (const x of numbers(n)) s += x; return s; }
globalThis.run = async (n) => 'sum=' + (await sum(n)) + ' indices=' + JSON.stringify(/(?<word>b+)/d.exec('abbc').indices[0]);
`
	for _, opts := range []jsvm.Options{{SupportModules: true}, {StubTimers: true}} {
		e := conformance.Open(t, New, opts)
		p, err := e.Compile("gen", "", src)
		if err != nil {
			t.Fatal(err)
		}
		if !lowered(p) {
			t.Fatal("not lowered")
		}
		rt, _ := e.NewRuntime()
		if err := rt.Load(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		// The d flag is a gap: lowering makes it fail at run time, loudly,
		// not at parse time for the whole bundle.
		_, err = conformance.Eval(t, rt, `run(4)`)
		if err == nil || !strings.Contains(err.Error(), "Invalid flags supplied to RegExp constructor 'd'") {
			t.Fatalf("d flag: %v", err)
		}
	}
	e := conformance.Open(t, New, jsvm.Options{SupportModules: true})
	rt := conformance.NewLoaded(t, e, "gen2", `async function* g() { yield 'a'; await null; yield 'b'; }
globalThis.run = async () => { const out = []; for await (const x of g()) out.push(x); return out.join('+'); };`)
	if got := conformance.MustEval(t, rt, `run()`); got != "a+b" {
		t.Fatal(got)
	}
	plain, err := e.Compile("plain", "", `var x = async () => 1;`)
	if err != nil {
		t.Fatal(err)
	}
	if lowered(plain) {
		t.Fatal("a bundle goja parses was lowered")
	}
	if _, err := e.Compile("broken", "", `function (`); err == nil || !strings.Contains(err.Error(), "SyntaxError") {
		t.Fatalf("syntax error: %v", err)
	}
}

// TestReplayRewrites: a bundle goja lowered after failing to parse it (async
// generators) has its rewrites replayed with their positions: the position
// of a throw in the compiled program goes back to the bundle's; a bundle
// file that is not the source compiled is refused. A bundle goja compiles
// as it is replays nothing.
func TestReplayRewrites(t *testing.T) {
	src := "async function* g() { yield 1; }\nglobalThis.f = function () {\n  throw new Error('x');\n};\n"
	e := conformance.Open(t, New, jsvm.Options{SupportModules: true})
	p, err := e.Compile("gen", "", src)
	if err != nil {
		t.Fatal(err)
	}
	bp := p.(jsvm.BundlePositions)
	if !lowered(p) || !bp.Rewritten() {
		t.Fatal("not lowered")
	}
	rt, _ := e.NewRuntime()
	if err := rt.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	_, err = conformance.Eval(t, rt, `f()`)
	m := regexp.MustCompile(`gen\.js:(\d+):(\d+)`).FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		t.Fatalf("no frame in gen.js: %v", err)
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	back, cost, err := bp.ReplayRewrites(src)
	if err != nil || cost <= 0 {
		t.Fatalf("replay: %v (cost %d)", err, cost)
	}
	if l, c, ok := back(line, col-1); !ok || l != 3 || c != strings.Index("  throw new Error('x');", "new") {
		t.Errorf("%s:%s went back to %d:%d (%v), want 3:8", m[1], m[2], l, c, ok)
	}
	if _, _, err := bp.ReplayRewrites(src + " "); err == nil {
		t.Error("a changed bundle was replayed")
	}
	plain, err := e.Compile("plain", "", "var x = 1;")
	if err != nil {
		t.Fatal(err)
	}
	if plain.(jsvm.BundlePositions).Rewritten() {
		t.Error("a bundle compiled as it is counts as rewritten")
	}
}
