package jsvm

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// forEachEngine runs f as a subtest for each engine: the behaviour it
// checks is the environment's, not an engine's. GORENDER_TEST_ENGINES
// (a comma-separated list) limits the engines, as scripts/test.sh does for
// its run of QuickJS without the race detector.
func forEachEngine(t *testing.T, f func(t *testing.T, engine string)) {
	t.Helper()
	for _, engine := range testEngines() {
		t.Run(engine, func(t *testing.T) { f(t, engine) })
	}
}

func testEngines() []string {
	only := os.Getenv("GORENDER_TEST_ENGINES")
	if only == "" {
		return Engines
	}
	var out []string
	for _, e := range Engines {
		if slices.Contains(strings.Split(only, ","), e) {
			out = append(out, e)
		}
	}
	return out
}

// evalOutsideRender evaluates code in rt's global environment outside any
// render (no per-render globals) and returns its completion value as text.
func evalOutsideRender(t *testing.T, rt Runtime, code string) string {
	t.Helper()
	switch rt := rt.(type) {
	case *gojaRuntime:
		v, err := rt.vm.RunString(code)
		if err != nil {
			t.Fatal(err)
		}
		return v.String()
	case *qjsRuntime:
		v, err := rt.evalCode("test", code)
		if err != nil {
			t.Fatal(err)
		}
		defer qjsFree(&v)
		s, err := qjsGoString(v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Fatalf("unknown runtime %T", rt)
	return ""
}

// quickjsRaceSkip is why a QuickJS test of a fixture bundle is skipped under
// the race detector.
const quickjsRaceSkip = "QuickJS fixture bundles are tested without -race (scripts/test.sh runs them): the race detector makes QuickJS's translated C about 10× slower"

// processRSS is the process's resident set size in bytes (0 where
// /proc/self/statm does not exist).
func processRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// timedOutAfterAbout reports a timeout answer naming about limit: a render
// given a plain context deadline reports the time from its own start to the
// deadline, a few milliseconds short of limit on a busy machine.
func timedOutAfterAbout(text string, limit time.Duration) bool {
	var ms int64
	if _, err := fmt.Sscanf(text, "Render timed out after %dms", &ms); err != nil {
		return false
	}
	d := time.Duration(ms) * time.Millisecond
	return d <= limit && d >= limit-20*time.Millisecond
}

// Engines and NewEngine stand for package engines in this package's tests
// (engines imports jsvm, so they cannot import it).
var Engines = []string{"goja", "quickjs"}

func NewEngine(name string, opts Options) (Engine, error) {
	switch name {
	case "goja":
		return NewGojaEngine(opts)
	case "quickjs":
		return NewQuickJSEngine(opts)
	}
	return nil, fmt.Errorf("unknown JavaScript engine %q", name)
}
