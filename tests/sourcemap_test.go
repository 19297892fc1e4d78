package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// The source-mapped fixture (tests/testdata/sourcemap, built by its
// build.go with esbuild): a bundle minified onto one line whose
// sourceMappingURL names sourcemap-app.js.map beside it.
func sourceMapApp(t *testing.T) (bundle, sourceMap string) {
	return testdata(t, "sourcemap/bundles/sourcemap-app.js"), testdata(t, "sourcemap/bundles/sourcemap-app.js.map")
}

// Where the fixture's sources throw and ask for their stack (lines of
// tests/testdata/sourcemap/src).
const (
	greetThrows      = "src/greeting.js:8:"
	whereAsksStack   = "src/index.js:11:"
	sourceMapMessage = "greet: no user given"
)

// TestSourceMaps: a render error's 400 body shows the stack in the
// bundle's original files and lines, from a source map uploaded beside
// the bundle: the one its sourceMappingURL names, or the companion
// <bundle>.js.map; getStackTrace() answers in original files too; the
// same with RENDERER_SUPPORT_MODULES (the CommonJS wrapper shifts the one
// line of a minified bundle). Without a map the frames stay in the bundle,
// named by its id: no frame names a path on the server (the node engine's
// bundle path and executor) or Node's internals (a promise job's).
func TestSourceMaps(t *testing.T) {
	t.Parallel()
	bundle, sourceMap := sourceMapApp(t)
	withoutURL := regexp.MustCompile(`//# sourceMappingURL=.*\n?$`).ReplaceAllString(bundle, "")
	if withoutURL == bundle {
		t.Fatal("the fixture has no sourceMappingURL comment")
	}
	for _, modules := range []string{"false", "true"} {
		t.Run("support-modules="+modules, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": modules})
			h2 := transports[0]
			named, companion, none := newID("s"), newID("s"), newID("s")
			s.upload(t, map[string]string{named: bundle}, map[string]string{"sourcemap-app.js.map": sourceMap})
			s.upload(t, map[string]string{companion: withoutURL}, map[string]string{companion + ".js.map": sourceMap})
			s.upload(t, map[string]string{none: bundle}, nil)

			for _, id := range []string{named, companion} {
				r := s.render(t, h2, id, "SourceMapApp.greet(null)")
				r.wantStatus(t, h2, http.StatusBadRequest)
				if !strings.Contains(r.Body, sourceMapMessage) || !strings.Contains(r.Body, greetThrows) {
					t.Errorf("bundle %s: the error's stack does not show %s:\n%s", id, greetThrows, r.Body)
				}
				if strings.Contains(r.Body, id+".js:") {
					t.Errorf("bundle %s: a frame still in the bundle:\n%s", id, r.Body)
				}
				r = s.render(t, h2, id, "SourceMapApp.where()")
				r.wantStatus(t, h2, http.StatusOK)
				if !strings.Contains(r.Body, whereAsksStack) {
					t.Errorf("bundle %s: getStackTrace() does not show %s:\n%s", id, whereAsksStack, r.Body)
				}
			}

			r := s.render(t, h2, none, "SourceMapApp.greet(null)")
			r.wantStatus(t, h2, http.StatusBadRequest)
			if strings.Contains(r.Body, "src/greeting.js") || !strings.Contains(r.Body, none+".js:1:") {
				t.Errorf("without its map, the stack should stay in the bundle (%s.js:1:...):\n%s", none, r.Body)
			}
			noServerFrames(t, r.Body)
			for _, code := range []string{"SourceMapApp.where()", "Promise.resolve().then(function () { return SourceMapApp.where() })"} {
				r := s.render(t, h2, none, code)
				r.wantStatus(t, h2, http.StatusOK)
				if !strings.Contains(r.Body, none+".js:1:") {
					t.Errorf("%s: getStackTrace() without a map should show the bundle (%s.js:1:...):\n%s", code, none, r.Body)
				}
				noServerFrames(t, r.Body)
			}
		})
	}
}

// serverFrame is a frame that names a file by its path on the server (the
// bundle cache, the node engine's executor) or one of Node's internals (a
// promise job's, a timer's): what runs the render, not the render.
var serverFrame = regexp.MustCompile(`[ (](?:/|node:)[^ )]*:\d+:\d+`)

// noServerFrames checks that a stack (an error answer's, getStackTrace's)
// shows the bundle, the environment and the request only, as every engine
// names them.
func noServerFrames(t *testing.T, stack string) {
	t.Helper()
	if f := serverFrame.FindString(stack); f != "" {
		t.Errorf("a frame names %q, a path on the server or Node's internals:\n%s", f, stack)
	}
}

// The rewritten fixture (tests/testdata/sourcemap/src/rewritten.js): a
// bundle the pure-Go engines rewrite before they run it. goja lowers it with
// esbuild for its \p{…} regex and rewrites its string build; QuickJS lowers
// it for its await. rewrittenFrames are the frames Node 20 prints for each
// call with --enable-source-maps (TestSourceMapFramesAsNode checks them
// against the node on PATH).
const rewrittenBundle = "sourcemap/bundles/sourcemap-rewritten.js"

var rewrittenFrames = map[string][]string{
	"SourceMapRewritten.greet(null)": {"src/greeting.js:8:9", "src/rewritten.js:24:20"},
	`SourceMapRewritten.name("1")`:   {"src/rewritten.js:28:13"},
	"SourceMapRewritten.later(null)": {"src/greeting.js:8:9", "src/rewritten.js:34:12"},
	"SourceMapRewritten.where()":     {"src/rewritten.js:37:12"},
}

// TestSourceMapsThroughRewrites: on every engine, the frames of a bundle the
// engine rewrote before running it name the original files, lines and
// columns the same engine names for the bundle not rewritten, and Node names
// with --enable-source-maps: the rewrites' own maps (esbuild's, the string
// builds' edits, the CommonJS wrapper) are chained with the bundle's. The
// variants keep the map valid by same-length edits: without \p{…} (goja then
// only rewrites the string build, whose edits move the columns after them on
// the minified line), and without either \p{…} or await, on a server that
// keeps string builds (nothing rewritten). Without the bundle's map the
// frames show the bundle's own positions, as Node does, not the rewritten
// code's.
func TestSourceMapsThroughRewrites(t *testing.T) {
	t.Parallel()
	bundle := testdata(t, rewrittenBundle)
	sourceMap := map[string]string{"sourcemap-rewritten.js.map": testdata(t, rewrittenBundle+".map")}
	noEscapes := strings.Replace(bundle, `/^\p{L}+$/u`, `/^[A-z]+$/u`, 1)
	plain := strings.Replace(noEscapes, "await null", "void  null", 1)
	if noEscapes == bundle || plain == noEscapes || strings.Contains(plain, "await") {
		t.Fatal(`the fixture has no /^\p{L}+$/u regex or no "await null"`)
	}
	for _, modules := range []string{"false", "true"} {
		t.Run("support-modules="+modules, func(t *testing.T) {
			t.Parallel()
			h2 := transports[0]
			base := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": modules, "RENDERER_REWRITE_STRING_BUILDS": "false"})
			baseID := newID("s")
			base.upload(t, map[string]string{baseID: plain}, sourceMap)
			s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": modules})
			lowered, builds, none := newID("s"), newID("s"), newID("s")
			s.upload(t, map[string]string{lowered: bundle}, sourceMap)
			s.upload(t, map[string]string{builds: noEscapes}, sourceMap)
			s.upload(t, map[string]string{none: bundle}, nil)

			for code, nodeFrames := range rewrittenFrames {
				status := http.StatusBadRequest
				if code == "SourceMapRewritten.where()" {
					status = http.StatusOK
				}
				r := base.render(t, h2, baseID, code)
				r.wantStatus(t, h2, status)
				want := sourceFrames.FindAllString(r.Body, -1)
				for _, f := range nodeFrames {
					if testEngine == "quickjs" {
						// QuickJS's columns are its own (docs/source-maps.md "Source maps").
						f = f[:strings.LastIndexByte(f, ':')+1]
					}
					if !strings.Contains(strings.Join(want, " "), f) {
						t.Errorf("%s not rewritten: the stack does not show %s, as Node does:\n%s", code, f, r.Body)
					}
				}
				for _, id := range []string{lowered, builds} {
					r := s.render(t, h2, id, code)
					r.wantStatus(t, h2, status)
					if got := sourceFrames.FindAllString(r.Body, -1); !slices.Equal(got, want) {
						t.Errorf("bundle %s, %s: frames %q, not rewritten %q:\n%s", id, code, got, want, r.Body)
					}
				}
			}

			r := s.render(t, h2, none, `SourceMapRewritten.name("1")`)
			r.wantStatus(t, h2, http.StatusBadRequest)
			want := fmt.Sprintf("%s.js:1:%d", none, strings.Index(bundle, `new Error("not a name`)+1)
			if testEngine == "quickjs" {
				want = fmt.Sprintf("%s.js:1:%d", none, strings.Index(bundle, `Error("not a name`)+1)
			}
			if !strings.Contains(r.Body, want) {
				t.Errorf("without its map, the stack should show the bundle's position %s:\n%s", want, r.Body)
			}
		})
	}
}

// sourceFrames is a frame position in the fixtures' sources.
var sourceFrames = regexp.MustCompile(`src/[a-z]+\.js:\d+:\d+`)

// TestSourceMapFramesAsNode: the frames TestSourceMapsThroughRewrites
// expects are the ones Node prints for the fixture with
// --enable-source-maps.
func TestSourceMapFramesAsNode(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH (scripts/install-node.sh)")
	}
	script := `globalThis.getStackTrace = () => new Error().stack;
require(process.argv[1]);
const codes = JSON.parse(process.argv[2]);
(async () => {
  const out = {};
  for (const code of codes) {
    try { const v = await eval(code); out[code] = String(v); } catch (e) { out[code] = e.stack; }
  }
  console.log(JSON.stringify(out));
})();`
	var codes []string
	for code := range rewrittenFrames {
		codes = append(codes, code)
	}
	bundle, err := filepath.Abs(filepath.Join("testdata", rewrittenBundle))
	if err != nil {
		t.Fatal(err)
	}
	args, err := json.Marshal(codes)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, "--enable-source-maps", "-e", script, bundle, string(args)).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var stacks map[string]string
	if err := json.Unmarshal(out, &stacks); err != nil {
		t.Fatalf("node's answer %q: %v", out, err)
	}
	for code, frames := range rewrittenFrames {
		for _, f := range frames {
			if !strings.Contains(stacks[code], "/"+f+")") {
				t.Errorf("%s: Node's stack does not show %s:\n%s", code, f, stacks[code])
			}
		}
	}
}

// The non-ASCII fixture (tests/testdata/sourcemap/src/unicode.js): its one
// minified line has 2-, 3- and 4-byte UTF-8 characters before every frame,
// which are 1 or 2 UTF-16 code units (the unit of source maps and V8), and
// golden/unicode.json holds the frames Node prints for each call (its
// record.mjs).
const (
	unicodeBundle = "sourcemap/bundles/sourcemap-unicode.js"
	unicodeBanner = "Grüße, 世界 😀: "
)

// unicodeGolden is golden/unicode.json: per call, Node's frames in the
// bundle and in the original sources.
type unicodeGolden struct {
	Calls map[string]struct{ Bundle, Mapped []string }
}

// TestSourceMapColumnsAfterNonASCII: after non-ASCII text on a bundle's
// line, every engine's frames show the columns Node shows. Mapped frames,
// through the bundle's map, with and without the engine's rewrites (goja's
// lowering and string build, QuickJS's lowering of await): Node's files,
// lines and columns (QuickJS: lines; its columns are its own,
// docs/source-maps.md). Unmapped frames (no map uploaded), in the error answers
// and getStackTrace: the same columns as the same bundle whose non-ASCII
// text is replaced by as many UTF-16 code units of ASCII, and on node all of
// Node's frames, on goja the frame of the throw (its call frames point at
// the call's parenthesis, V8's at the callee). Before this, goja counted
// bytes and QuickJS characters: mapped frames pointed elsewhere.
func TestSourceMapColumnsAfterNonASCII(t *testing.T) {
	t.Parallel()
	bundle := testdata(t, unicodeBundle)
	sourceMap := map[string]string{"sourcemap-unicode.js.map": testdata(t, unicodeBundle+".map")}
	var golden unicodeGolden
	if err := json.Unmarshal([]byte(testdata(t, "sourcemap/golden/unicode.json")), &golden); err != nil || len(golden.Calls) == 0 {
		t.Fatalf("golden/unicode.json: %v", err)
	}
	// Edits of the same length in UTF-16 keep the map valid: ASCII for the
	// non-ASCII text; nothing for the engines to rewrite (no \p{…}, no
	// await) on a server that keeps string builds.
	ascii := strings.Replace(bundle, unicodeBanner, strings.Repeat("x", len(utf16.Encode([]rune(unicodeBanner)))), 1)
	plain := strings.Replace(strings.Replace(bundle, `/^\p{L}+$/u`, `/^[A-z]+$/u`, 1), "await null", "void  null", 1)
	if ascii == bundle || strings.Contains(plain, "await") || strings.Contains(plain, `\p{L}`) {
		t.Fatal("the fixture has no banner, no /^\\p{L}+$/u regex or no \"await null\"")
	}
	h2 := transports[0]
	s := startServer(t, nil)
	kept := startServer(t, map[string]string{"RENDERER_REWRITE_STRING_BUILDS": "false"})
	mapped, asciiMapped, none, asciiNone := newID("u"), newID("u"), newID("u"), newID("u")
	s.upload(t, map[string]string{mapped: bundle}, sourceMap)
	s.upload(t, map[string]string{asciiMapped: ascii}, sourceMap)
	s.upload(t, map[string]string{none: bundle}, nil)
	s.upload(t, map[string]string{asciiNone: ascii}, nil)
	plainAscii := strings.Replace(plain, unicodeBanner, strings.Repeat("x", len(utf16.Encode([]rune(unicodeBanner)))), 1)
	plainMapped, plainNone, plainAsciiNone := newID("u"), newID("u"), newID("u")
	kept.upload(t, map[string]string{plainMapped: plain}, sourceMap)
	kept.upload(t, map[string]string{plainNone: plain}, nil)
	kept.upload(t, map[string]string{plainAsciiNone: plainAscii}, nil)

	frames := func(s *server, id, code string, re *regexp.Regexp) []string {
		t.Helper()
		r := s.render(t, h2, id, code)
		status := http.StatusBadRequest
		if strings.HasSuffix(code, "SourceMapUnicode.where()") {
			status = http.StatusOK
		}
		r.wantStatus(t, h2, status)
		got := re.FindAllString(r.Body, -1)
		for i, f := range got {
			got[i] = strings.Replace(f, id+".js", "sourcemap-unicode.js", 1)
		}
		if len(got) == 0 {
			t.Errorf("bundle %s, %s: no frame:\n%s", id, code, r.Body)
		}
		return got
	}
	bundleFrame := regexp.MustCompile(`rorp-v2-u-[0-9a-f]+\.js:\d+:\d+`)
	lineOnly := func(fs []string) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = f[:strings.LastIndexByte(f, ':')]
		}
		return out
	}
	for code, node := range golden.Calls {
		// Mapped.
		want := node.Mapped
		for _, c := range []struct {
			s  *server
			id string
		}{{s, mapped}, {s, asciiMapped}, {kept, plainMapped}} {
			got := frames(c.s, c.id, code, sourceFrames)
			if testEngine == "quickjs" {
				got, want = lineOnly(got), lineOnly(node.Mapped)
			}
			if !slices.Equal(got, want) {
				t.Errorf("bundle %s, %s: mapped frames %q, Node's %q", c.id, code, got, want)
			}
		}
		// Unmapped, rewritten by the engine and not.
		for _, c := range []struct {
			s              *server
			unicode, ascii string
		}{{s, none, asciiNone}, {kept, plainNone, plainAsciiNone}} {
			u, a := frames(c.s, c.unicode, code, bundleFrame), frames(c.s, c.ascii, code, bundleFrame)
			if !slices.Equal(u, a) {
				t.Errorf("bundle %s, %s: frames %q, without its non-ASCII text %q", c.unicode, code, u, a)
			}
			switch {
			case testEngine == "node" && !slices.Equal(u, node.Bundle):
				t.Errorf("bundle %s, %s: frames %q, Node's %q", c.unicode, code, u, node.Bundle)
			case testEngine == "goja" && code != "SourceMapUnicode.where()" && (len(u) == 0 || u[0] != node.Bundle[0]):
				t.Errorf("bundle %s, %s: the throw's frame in %q, Node's %s", c.unicode, code, u, node.Bundle[0])
			}
		}
	}

	// The rendering request's own frame, after non-ASCII text in the
	// request: the column of the same request with ASCII text instead.
	requestFrame := regexp.MustCompile(`renderingRequest:\d+:\d+|<anonymous>:\d+:\d+`)
	call := "; SourceMapUnicode.where()"
	u := frames(s, none, "'"+unicodeBanner+"'"+call, requestFrame)
	a := frames(s, none, "'"+strings.Repeat("x", len(utf16.Encode([]rune(unicodeBanner))))+"'"+call, requestFrame)
	if !slices.Equal(u, a) {
		t.Errorf("the request's frames %q, without its non-ASCII text %q", u, a)
	}
}

// TestSourceMapUnicodeGoldenAsNode: golden/unicode.json is what the node on
// PATH prints for the non-ASCII fixture (record.mjs run again).
func TestSourceMapUnicodeGoldenAsNode(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH (scripts/install-node.sh)")
	}
	out := filepath.Join(t.TempDir(), "unicode.json")
	if b, err := exec.Command(node, filepath.Join("testdata", "sourcemap", "record.mjs"), out).CombinedOutput(); err != nil {
		t.Fatalf("record.mjs: %v\n%s", err, b)
	}
	var got, want unicodeGolden
	recorded, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(recorded, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(testdata(t, "sourcemap/golden/unicode.json")), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(want.Calls) == 0 {
		t.Errorf("Node prints %+v, the golden holds %+v", got, want)
	}
}
