package jsvm

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

const fixtures = "../tests/testdata"

func readFixture(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRewriteStringBuildsEngine compiles react-app.js as built through the
// engine (NewEngine), which rewrites it unless KeepStringBuilds, and renders
// every plain request: Node's bytes either way.
func TestRewriteStringBuildsEngine(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("KeepStringBuilds=%v", keep), func(t *testing.T) {
			e, err := NewEngine("goja", Options{StubTimers: true, ReplayAsyncLogs: true, KeepStringBuilds: keep})
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.Compile("react-app", "", readFixture(t, "bundles/react-app.js"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.(*gojaProgram).stringBuilds, map[bool]int{false: 1, true: 0}[keep]; got != want {
				t.Fatalf("string builds rewritten = %d, want %d", got, want)
			}
			rt, err := e.NewRuntime()
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			if err := rt.Load(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			for _, req := range []string{"hello", "hello-world", "small-page", "list-page", "async-greeting", "throws-error"} {
				if req == "list-page" && keep && (testing.Short() || quickjsUnderRace) {
					continue // as built it is quadratic: seconds
				}
				res, err := rt.Eval(t.Context(), readFixture(t, "requests/"+req+".js"), NewRequest(map[string]Runtime{"react-app": rt}))
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
	e, err := NewEngine("goja", Options{SupportModules: true, ReplayAsyncLogs: true})
	if err != nil {
		t.Skipf("engine: %v", err)
	}
	for _, name := range []string{"node-app-esbuild.js", "node-app-webpack.js"} {
		t.Run(name, func(t *testing.T) {
			src := regexp.MustCompile(`\bimport\(`).ReplaceAllString(readFixture(t, "bundles/"+name), "Import(")
			p, err := e.Compile("node-app", filepath.Join(fixtures, "bundles", name), src)
			if err != nil {
				t.Fatal(err)
			}
			if n := p.(*gojaProgram).stringBuilds; n != 1 {
				t.Fatalf("string builds rewritten at load = %d, want 1", n)
			}
			rt, err := e.NewRuntime()
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			if err := rt.Load(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			for _, req := range []string{"node-app-home", "node-app-about"} {
				res, err := rt.Eval(t.Context(), readFixture(t, "requests/"+req+".js"), NewRequest(map[string]Runtime{"node-app": rt}))
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
