package nodeengine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGetStackTraceMapped: getStackTrace maps its frames through the
// bundle's source map in the process (whose JavaScript cannot call
// gorender's Go side), names the bundle by its id and shows none of the
// executor's frames; a map larger than the process's share of the cache
// size is not used, with a warning, and the frames stay in the bundle.
func TestGetStackTraceMapped(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testdata, "sourcemap", "bundles", "sourcemap-app.js"))
	if err != nil {
		t.Fatal(err)
	}
	sourceMap, err := os.ReadFile(filepath.Join(testdata, "sourcemap", "bundles", "sourcemap-app.js.map"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		limit int64
		want  string
	}{
		{"mapped", 64 << 20, "at Object.where (src/index.js:11:12)"},
		{"map too large for the share", 2 * 1000, "at Object.where (b.js:1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, logs := newEngine(t, config{Processes: 2, SupportModules: true, SourceMapLimit: tc.limit})
			dir := t.TempDir()
			file := filepath.Join(dir, "b.js")
			if err := os.WriteFile(file, src, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "sourcemap-app.js.map"), sourceMap, 0o644); err != nil {
				t.Fatal(err)
			}
			rt := load(t, e, "b", file, string(src))
			got := mustEval(t, rt, "b", "SourceMapApp.where()")
			want := "Error\n    at getStackTrace (gorender-env.js:413:13)\n    " + tc.want
			if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "\n    at renderingRequest:1:14") {
				t.Errorf("getStackTrace():\n%s\nwant it to start with\n%s\nand end at the request", got, want)
			}
			if tc.limit < 64<<20 {
				waitFor(t, 10*time.Second, "the warning", func() bool { return strings.Contains(logs.String(), "the source map of bundle b is not used") })
			}
		})
	}
}
