package sourcemap

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gorender/gorender/jsvm/transform"
)

// The fixture tests/ renders: built by esbuild, minified onto one line,
// naming sourcemap-app.js.map beside it.
const fixtureDir = "../../tests/testdata/sourcemap/bundles"

// fixture writes the fixture bundle into dir as <id>.js (as the bundle
// cache does) and returns it and the 1-based column of its `new Error`.
func fixture(t *testing.T, dir, id string, withMap bool) (bundle string, column int) {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(fixtureDir, "sourcemap-app.js"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, id+".js")
	if err := os.WriteFile(path, js, 0o644); err != nil {
		t.Fatal(err)
	}
	if withMap {
		copyFile(t, filepath.Join(fixtureDir, "sourcemap-app.js.map"), filepath.Join(dir, "sourcemap-app.js.map"))
	}
	return path, strings.Index(string(js), "new Error") + 1
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func newMaps(limit int64) *Maps { return New(limit, slog.New(slog.DiscardHandler)) }

// TestRewrite: frames of a registered bundle, in each engine's format,
// become original file:line:column; others stay as they are.
func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	path, col := fixture(t, dir, "b1", true)
	m := newMaps(1 << 20)
	m.Add("b1", path, nil, nil)
	for _, tc := range []struct{ in, want string }{
		{fmt.Sprintf("\tat r (b1.js:1:%d(12))", col), "\tat r (src/greeting.js:8:9)"},   // goja
		{fmt.Sprintf("    at r (b1.js:1:%d)", col), "    at r (src/greeting.js:8:9)"},   // quickjs
		{fmt.Sprintf("at r (/cache/b1/b1.js:1:%d)", col), "at r (src/greeting.js:8:9)"}, // V8, a path
		{fmt.Sprintf("at r (b2.js:1:%d)", col), fmt.Sprintf("at r (b2.js:1:%d)", col)},  // not registered
		{"at renderingRequest:1:19(3)", "at renderingRequest:1:19(3)"},                  // not a bundle
		{"at x (b1.js:7:1)", "at x (b1.js:7:1)"},                                        // past the bundle's lines
	} {
		if got := m.Rewrite(tc.in); got != tc.want {
			t.Errorf("Rewrite(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var none *Maps // RENDERER_SOURCE_MAP_CACHE_SIZE=0
	none.Add("b1", path, nil, nil)
	if in := fmt.Sprintf("at r (b1.js:1:%d)", col); none.Rewrite(in) != in {
		t.Error("nil Maps rewrote a frame")
	}
}

// TestPositions: a program's own positions (the CommonJS wrapper's shift)
// are taken back to the bundle's before the map.
func TestPositions(t *testing.T) {
	dir := t.TempDir()
	path, col := fixture(t, dir, "b1", true)
	m := newMaps(1 << 20)
	const header = 10
	m.Add("b1", path, func(line, column int) (int, int, bool) {
		if line != 1 || column < header {
			return 0, 0, false
		}
		return line, column - header, true
	}, nil)
	if got := m.Rewrite(fmt.Sprintf("at r (b1.js:1:%d)", col+header)); got != "at r (src/greeting.js:8:9)" {
		t.Errorf("shifted frame: %q", got)
	}
	if in := "at r (b1.js:2:1)"; m.Rewrite(in) != in {
		t.Errorf("a position the program cannot take back was rewritten")
	}
}

// TestWhichMap: the file the sourceMappingURL names beside the bundle, else
// the companion <bundle>.js.map; a comment naming a path, a URL or inline
// data is not followed (and not replaced by the companion).
func TestWhichMap(t *testing.T) {
	js, err := os.ReadFile(filepath.Join(fixtureDir, "sourcemap-app.js"))
	if err != nil {
		t.Fatal(err)
	}
	code, _, _ := strings.Cut(string(js), "//# sourceMappingURL=")
	col := strings.Index(code, "new Error") + 1
	frame := fmt.Sprintf("at r (b.js:1:%d)", col)
	for _, tc := range []struct {
		name, comment, mapFile string
		mapped                 bool
	}{
		{"named", "//# sourceMappingURL=app.js.map\n", "app.js.map", true},
		{"companion", "", "b.js.map", true},
		{"named wins", "//# sourceMappingURL=app.js.map\n", "b.js.map", false},
		{"path", "//# sourceMappingURL=../other/app.js.map\n", "b.js.map", false},
		{"absolute", "//# sourceMappingURL=/etc/app.js.map\n", "b.js.map", false},
		{"URL", "//# sourceMappingURL=https://cdn.example/app.js.map\n", "b.js.map", false},
		{"inline", "//# sourceMappingURL=data:application/json;base64,e30=\n", "b.js.map", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "b.js")
			if err := os.WriteFile(path, []byte(code+tc.comment), 0o644); err != nil {
				t.Fatal(err)
			}
			copyFile(t, filepath.Join(fixtureDir, "sourcemap-app.js.map"), filepath.Join(dir, tc.mapFile))
			m := newMaps(1 << 20)
			m.Add("b", path, nil, nil)
			got := m.Rewrite(frame)
			if mapped := got != frame; mapped != tc.mapped {
				t.Errorf("Rewrite(%q) = %q: mapped %v, want %v", frame, got, mapped, tc.mapped)
			}
		})
	}
}

// TestLazyAndBounded: nothing is read when a bundle is added (a map that
// appears afterwards is used); parsed maps stay within the limit, the least
// recently used leaving first (and parsed again when needed); a map that
// cannot fit is not used at all.
func TestLazyAndBounded(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	var col int
	for i := range 3 {
		id := fmt.Sprintf("b%d", i)
		sub := filepath.Join(dir, id)
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		_, col = fixture(t, sub, id, false)
		ids = append(ids, id)
	}
	// The cost of one parsed map (its JSON without sourcesContent, times
	// parsedCost), then room for two, not three.
	probe := newMaps(1 << 20)
	probePath, _ := fixture(t, t.TempDir(), "p", true)
	probe.Add("p", probePath, nil, nil)
	probe.Rewrite(fmt.Sprintf("at r (p.js:1:%d)", col))
	cost := probe.used
	if cost == 0 {
		t.Fatal("the probe parsed no map")
	}
	m := newMaps(cost*2 + cost/2)
	for _, id := range ids {
		m.Add(id, filepath.Join(dir, id, id+".js"), nil, nil)
	}
	for _, id := range ids { // the maps arrive after the load, before an error
		copyFile(t, filepath.Join(fixtureDir, "sourcemap-app.js.map"), filepath.Join(dir, id, "sourcemap-app.js.map"))
	}
	for _, id := range ids {
		if got := m.Rewrite(fmt.Sprintf("at r (%s.js:1:%d)", id, col)); got != "at r (src/greeting.js:8:9)" {
			t.Fatalf("%s: %q", id, got)
		}
		m.mu.Lock()
		used, parsedMaps := m.used, m.lru.Len()
		m.mu.Unlock()
		if used > m.limit {
			t.Fatalf("parsed maps take %d bytes, over the limit %d", used, m.limit)
		}
		t.Logf("after %s: %d maps parsed, %d of %d bytes", id, parsedMaps, used, m.limit)
	}
	m.mu.Lock()
	first := m.bundles["b0.js"].state
	m.mu.Unlock()
	if first != notRead {
		t.Errorf("the least recently used map was kept (state %v) past the limit", first)
	}
	if got := m.Rewrite(fmt.Sprintf("at r (b0.js:1:%d)", col)); got != "at r (src/greeting.js:8:9)" {
		t.Errorf("an evicted map was not parsed again: %q", got)
	}

	small := newMaps(cost - 1) // less than the parsed map
	small.Add("b0", filepath.Join(dir, "b0", "b0.js"), nil, nil)
	if in := fmt.Sprintf("at r (b0.js:1:%d)", col); small.Rewrite(in) != in {
		t.Error("a map larger than the limit was used")
	}
	m.Remove("b1")
	if in := fmt.Sprintf("at r (b1.js:1:%d)", col); m.Rewrite(in) != in {
		t.Error("a removed bundle's frames were rewritten")
	}
}

// TestConcurrentRewrites: renders failing at once on the same and other
// bundles, with adds and removes (run with -race).
func TestConcurrentRewrites(t *testing.T) {
	dir := t.TempDir()
	path, col := fixture(t, dir, "b1", true)
	m := newMaps(1 << 20)
	m.Add("b1", path, nil, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				if got := m.Rewrite(fmt.Sprintf("at r (b1.js:1:%d)", col)); got != "at r (src/greeting.js:8:9)" {
					t.Errorf("concurrent rewrite: %q", got)
					return
				}
				if i == 0 {
					m.Add("b2", path, nil, nil)
					m.Remove("b2")
				}
			}
		})
	}
	wg.Wait()
}

// TestWithoutContent: sourcesContent goes before parsing, in sections too.
func TestWithoutContent(t *testing.T) {
	out, err := withoutContent([]byte(`{"version":3,"sources":["a.js"],"sourcesContent":["big"],"mappings":"AAAA",` +
		`"sections":[{"offset":{"line":0,"column":0},"map":{"version":3,"sources":["b.js"],"sourcesContent":["big"],"mappings":"AAAA"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "sourcesContent") || !strings.Contains(string(out), `"b.js"`) {
		t.Errorf("withoutContent: %s", out)
	}
}

func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"../src/greeting.js":            "src/greeting.js",
		"webpack://shop/./app/x.jsx":    "app/x.jsx",
		"../../node_modules/react/x.js": "node_modules/react/x.js",
		"src/a.js":                      "src/a.js",
	} {
		if got := displayName(in); got != want {
			t.Errorf("displayName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRewrites: a bundle the engine rewrote (here lowered by esbuild, as
// QuickJS does for await) has its rewrites replayed on the first error that
// names it, not before and not again while its maps are kept; their cost
// counts in the bound with the bundle's map (a bound that fits the map but
// not both maps nothing); without the bundle's map its frames show the
// bundle's own positions; a replay that fails (the bundle file is not the
// source compiled) maps nothing.
func TestRewrites(t *testing.T) {
	js, err := os.ReadFile(filepath.Join(fixtureDir, "sourcemap-rewritten.js"))
	if err != nil {
		t.Fatal(err)
	}
	bundle := string(js)
	lowered, _, err := transform.LowerForQuickJSPositions("b.js", bundle)
	if err != nil {
		t.Fatal(err)
	}
	// The frame of `new Error("not a name…` in the lowered code.
	i := strings.Index(lowered, `new Error("not a name`)
	frame := fmt.Sprintf("at name (b.js:%d:%d)", 1+strings.Count(lowered[:i], "\n"), i-strings.LastIndexByte(lowered[:i], '\n'))
	var replays int
	var mu sync.Mutex
	rewrites := func(source string) (func(int, int) (int, int, bool), int64, error) {
		mu.Lock()
		replays++
		mu.Unlock()
		if source != bundle {
			return nil, 0, fmt.Errorf("not the source compiled")
		}
		_, p, err := transform.LowerForQuickJSPositions("b.js", source)
		if err != nil {
			return nil, 0, err
		}
		return p.Back, p.Cost(), nil
	}
	write := func(dir string, withMap bool) string {
		path := filepath.Join(dir, "b.js")
		if err := os.WriteFile(path, js, 0o644); err != nil {
			t.Fatal(err)
		}
		if withMap {
			copyFile(t, filepath.Join(fixtureDir, "sourcemap-rewritten.js.map"), filepath.Join(dir, "sourcemap-rewritten.js.map"))
		}
		return path
	}

	m := newMaps(1 << 20)
	m.Add("b", write(t.TempDir(), true), nil, rewrites)
	if replays != 0 {
		t.Fatal("rewrites replayed before an error")
	}
	for range 2 {
		if got := m.Rewrite(frame); got != "at name (src/rewritten.js:28:13)" {
			t.Errorf("Rewrite(%q) = %q", frame, got)
		}
	}
	if replays != 1 {
		t.Errorf("rewrites replayed %d times for two errors", replays)
	}
	withRewrites := m.used

	mapOnly := newMaps(1 << 20)
	mapOnly.Add("b", write(t.TempDir(), true), nil, nil)
	mapOnly.Rewrite(frame)
	if mapOnly.used == 0 || withRewrites <= mapOnly.used {
		t.Fatalf("the rewrites' positions cost nothing: %d bytes with them, %d without", withRewrites, mapOnly.used)
	}
	tight := newMaps(mapOnly.used)
	tight.Add("b", write(t.TempDir(), true), nil, rewrites)
	if got := tight.Rewrite(frame); got != frame {
		t.Errorf("maps over the bound were used: %q", got)
	}

	noMap := newMaps(1 << 20)
	noMap.Add("b", write(t.TempDir(), false), nil, rewrites)
	want := fmt.Sprintf("at name (b.js:1:%d)", strings.Index(bundle, `new Error("not a name`)+1)
	if got := noMap.Rewrite(frame); got != want {
		t.Errorf("without a map: %q, want the bundle's position %q", got, want)
	}

	changed := newMaps(1 << 20)
	path := write(t.TempDir(), true)
	if err := os.WriteFile(path, append(js, ';'), 0o644); err != nil {
		t.Fatal(err)
	}
	changed.Add("b", path, nil, rewrites)
	if got := changed.Rewrite(frame); got != frame {
		t.Errorf("a changed bundle file was mapped: %q", got)
	}
}
