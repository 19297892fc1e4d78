package nodeengine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/gorender/gorender/jsvm/jsenv"
)

// TestGetStackTraceMapped: getStackTrace (PROTOCOL.md §7) maps its frames
// through the bundle's source map in the process (whose JavaScript cannot
// call gorender's Go side), names the bundle by its id and shows none of
// the executor's frames; a map larger than the process's share of the cache
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
			want := "Error\n    " + getStackTraceFrame(t) + "\n    " + tc.want
			if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "\n    at renderingRequest:1:14") {
				t.Errorf("getStackTrace():\n%s\nwant it to start with\n%s\nand end at the request", got, want)
			}
			if tc.limit < 64<<20 {
				waitFor(t, 10*time.Second, "the warning", func() bool { return strings.Contains(logs.String(), "the source map of bundle b is not used") })
			}
		})
	}
}

// getStackTraceFrame is the frame of env.js's getStackTrace as V8 shows it
// in the executor, which runs env.js (jsenv.Env) as gorender-env.js: the
// line and column (UTF-16, 1-based) of the error it throws, found in the
// source, so that an edit of env.js does not break the test.
func getStackTraceFrame(t *testing.T) string {
	t.Helper()
	fn := strings.Index(jsenv.Env, "function getStackTrace()")
	at := strings.Index(jsenv.Env[max(fn, 0):], "new Error(")
	if fn < 0 || at < 0 {
		t.Fatal("env.js has no getStackTrace throwing a new Error")
	}
	before := jsenv.Env[:fn+at]
	line := strings.Count(before, "\n") + 1
	col := len(utf16.Encode([]rune(before[strings.LastIndex(before, "\n")+1:]))) + 1
	return fmt.Sprintf("at getStackTrace (gorender-env.js:%d:%d)", line, col)
}
