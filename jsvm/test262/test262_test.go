package test262

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
	"github.com/gorender/gorender/jsvm/gojaengine"
	"github.com/gorender/gorender/jsvm/quickjsengine"
)

var (
	update      = flag.Bool("update", false, "rewrite testdata/baseline.txt with the failures of this run")
	writeSample = flag.Bool("write-sample", false, "rewrite "+SampleArchive+" from the whole suite (GORENDER_TEST262_DIR)")
)

const (
	baselineFile = "testdata/baseline.txt"
	// The CI sample: fixed, so its outcome changes only with the engines.
	sampleSize = 2500
	sampleSeed = 262
	// testTimeout bounds one test in one mode on one host.
	testTimeout = 30 * time.Second
)

// TestSuite runs test262 on Node (the reference), goja and quickjs and
// fails on a test Node passes that an engine fails and the baseline does
// not list (or a test Node fails that the baseline does not list: the
// runner broke), and reports the ones fixed. TEST262 picks the tests: unset
// the CI sample, "all" the whole suite, else a path prefix
// ("built-ins/RegExp"); TEST262_JOBS how many run at once (default
// GOMAXPROCS); TEST262_ENGINES the engines beside Node (default
// goja,quickjs). The report goes to .cache/test262/report-<what>.md.
func TestSuite(t *testing.T) {
	if conformance.RaceEnabled {
		t.Skip("the race detector slows QuickJS tenfold: scripts/test.sh runs this without -race")
	}
	root := repoRoot(t)
	what := os.Getenv("TEST262")
	if *writeSample {
		writeSampleArchive(t, root)
		return
	}
	var suite *Suite
	var err error
	if what == "" {
		// The CI sample is committed: CI needs nothing outside the
		// repository.
		suite, err = Unpack(SampleArchive, filepath.Join(root, ".cache", "test262"))
		if err != nil {
			t.Fatal(err)
		}
	} else {
		suite = openSuite(t, root)
	}
	node := findNode(t)
	paths, err := suite.Paths()
	if err != nil {
		t.Fatal(err)
	}
	var selected []string
	switch what {
	case "":
		what = "sample"
		selected = paths
	case "all":
		selected = paths
	default:
		for _, p := range paths {
			if strings.HasPrefix(p, what) {
				selected = append(selected, p)
			}
		}
		what = strings.ReplaceAll(what, "/", "-")
	}
	run := &Run{Suite: suite, Skipped: map[string]int{}, Results: map[string][]Result{}}
	for _, p := range selected {
		test, err := suite.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if why := test.Skip(); why != "" {
			run.Skipped[why]++
			continue
		}
		run.Tests = append(run.Tests, test)
	}
	if len(run.Tests) == 0 {
		t.Fatalf("TEST262=%s selects no test", what)
	}
	jobs := runtime.GOMAXPROCS(0)
	if v := os.Getenv("TEST262_JOBS"); v != "" {
		if jobs, err = strconv.Atoi(v); err != nil || jobs < 1 {
			t.Fatalf("TEST262_JOBS=%q: want a positive count", v)
		}
	}

	engines := []string{"goja", "quickjs"}
	if v := os.Getenv("TEST262_ENGINES"); v != "" {
		engines = strings.Split(v, ",")
	}
	hosts := newHosts(t, node, jobs, testTimeout, engines...)
	for _, h := range hosts {
		started := time.Now()
		var progress func(int)
		if len(run.Tests) > 5000 {
			progress = func(done int) {
				if done%5000 == 0 {
					t.Logf("%s: %d of %d tests, %s", h.Name(), done, len(run.Tests), time.Since(started).Round(time.Second))
				}
			}
		}
		run.Results[h.Name()] = RunAll(suite, h, run.Tests, jobs, progress)
		t.Logf("%s: %d tests in %s", h.Name(), len(run.Tests), time.Since(started).Round(time.Millisecond))
	}

	f, err := os.Open(baselineFile)
	if err != nil {
		t.Fatal(err)
	}
	baseline, err := ReadBaseline(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(root, ".cache", "test262", "report-"+what+".md")
	title := fmt.Sprintf("%s (%d tests)", what, len(selected))
	if what == "sample" {
		title = fmt.Sprintf("sample (%d tests of the whole suite's, seed %d)", len(selected), sampleSeed)
	}
	if err := WriteFile(report, func(w io.Writer) error { return run.Report(w, title, baseline) }); err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %s", report)
	if *update {
		if err := WriteFile(baselineFile, func(w io.Writer) error {
			_, err := baseline.Update(run).WriteTo(w)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", baselineFile)
		return
	}
	for _, h := range hosts {
		c := run.Counts(h.Name())
		var line []string
		for _, d := range Dirs {
			line = append(line, fmt.Sprintf("%s %d/%d", d, c[d].Pass, c[d].Total))
		}
		t.Logf("%s passes: %s", h.Name(), strings.Join(line, ", "))
		newFailures, fixed := baseline.Check(run, h.Name())
		for _, res := range newFailures {
			t.Errorf("%s: new failure %s (%s): %s", h.Name(), res.Test.Path, suite.Group(res.Test), res.Message)
		}
		if len(fixed) > 0 {
			t.Logf("%s: %d known failures now pass (run with -update to drop them): %s", h.Name(), len(fixed), strings.Join(fixed, " "))
		}
	}
}

// writeSampleArchive rewrites SampleArchive: sampleSize tests of the whole
// suite chosen with sampleSeed.
func writeSampleArchive(t *testing.T, root string) {
	suite := openSuite(t, root)
	paths, err := suite.Paths()
	if err != nil {
		t.Fatal(err)
	}
	picked := Sample(paths, sampleSize, sampleSeed)
	if err := WriteFile(SampleArchive, func(w io.Writer) error { return suite.WriteSample(w, picked) }); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d tests of %d", SampleArchive, len(picked), len(paths))
}

// openSuite unpacks the whole suite (asked for by TEST262 or -write-sample)
// into the repository's .cache, from the directory GORENDER_TEST262_DIR
// names (default ../shared/test262 beside the repository).
func openSuite(t *testing.T, root string) *Suite {
	dir := os.Getenv(ArchiveEnv)
	if dir == "" {
		dir = filepath.Join(root, DefaultArchiveDir)
	}
	if _, err := os.Stat(filepath.Join(dir, Archive)); err != nil {
		t.Fatalf("test262 not found: %v (set %s to the directory holding %s)", err, ArchiveEnv, Archive)
	}
	s, err := Unpack(filepath.Join(dir, Archive), filepath.Join(root, ".cache", "test262"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// findNode finds the reference host's Node.js on PATH: Node 20, whose pass
// set the baseline holds (another major passes other tests). Without it the
// test is skipped, except under CI=true, where it fails. NodeEnv names it
// where PATH's is another version (scripts/test.sh sets it to
// `scripts/install-node.sh --major 20`).
func findNode(t *testing.T) string {
	skip := t.Skip
	if os.Getenv("CI") == "true" {
		skip = t.Fatal
	}
	node := os.Getenv(NodeEnv)
	if node == "" {
		var err error
		if node, err = exec.LookPath("node"); err != nil {
			skip("no node on PATH: Node.js 20 is the reference host (scripts/install-node.sh --major 20)")
		}
	}
	out, err := exec.Command(node, "-p", "process.versions.node").Output()
	if err != nil {
		t.Fatalf("%s: %v", node, err)
	}
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, "20.") {
		skip(fmt.Sprintf("%s is Node.js %s: the reference host is Node.js 20 (set %s to one: scripts/install-node.sh --major 20)", node, v, NodeEnv))
	}
	return node
}

// newHosts are Node, then the engines named, with the environment a bundle
// gets by default (RENDERER_STUB_TIMERS=true, RENDERER_SUPPORT_MODULES=false).
func newHosts(t *testing.T, node string, jobs int, timeout time.Duration, engines ...string) []Host {
	nodeHost, err := NewNodeHost(node, t.TempDir(), jobs, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nodeHost.Close)
	hosts := []Host{nodeHost}
	for _, name := range engines {
		var e jsvm.Engine
		switch name {
		case "goja":
			e, err = gojaengine.New(jsvm.Options{StubTimers: true, RegexpMatchTimeout: timeout})
		case "quickjs":
			e, err = quickjsengine.New(jsvm.Options{StubTimers: true})
		default:
			t.Fatalf("engine %q: want goja or quickjs", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		h, err := NewEngineHost(e, timeout)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, h)
	}
	return hosts
}

// TestHostsJudge: every host passes what must pass and fails what must
// fail, in each of the ways a test can (so that a broken runner cannot
// pass everything): a throw, a negative test that parses or throws the
// wrong error, an async test that fails or never calls $DONE, strict mode
// where the test asks for it.
func TestHostsJudge(t *testing.T) {
	node := findNode(t)
	frontMatter := func(fm string) string { return "/*---\n" + fm + "\n---*/\n" }
	cases := []struct {
		name, source string
		pass         bool
	}{
		{"assert passes", frontMatter("description: x") + "assert.sameValue(1 + 1, 2);", true},
		{"assert fails", frontMatter("description: x") + "assert.sameValue(1 + 1, 3);", false},
		{"throws", frontMatter("description: x") + "throw new TypeError('x');", false},
		{"include", frontMatter("includes: [compareArray.js]") + "assert.compareArray([1, 2], [1, 2]);", true},
		{"parse negative", frontMatter("negative:\n  phase: parse\n  type: SyntaxError") + "$DONOTEVALUATE();\nvar = 1;", true},
		{"parse negative that parses", frontMatter("negative:\n  phase: parse\n  type: SyntaxError") + "$DONOTEVALUATE();", false},
		{"runtime negative", frontMatter("negative:\n  phase: runtime\n  type: TypeError") + "null.x;", true},
		{"runtime negative, wrong error", frontMatter("negative:\n  phase: runtime\n  type: TypeError") + "undefinedName;", false},
		{"async completes", frontMatter("flags: [async]") + "Promise.resolve(1).then(function (v) { assert.sameValue(v, 1); }).then($DONE, $DONE);", true},
		{"async fails", frontMatter("flags: [async]") + "Promise.resolve(1).then(function (v) { assert.sameValue(v, 2); }).then($DONE, $DONE);", false},
		{"async never done", frontMatter("flags: [async]") + "new Promise(function () {}).then($DONE);", false},
		{"strict only", frontMatter("flags: [onlyStrict]") + "assert.throws(ReferenceError, function () { undeclared = 1; });", true},
		{"both modes: sloppy-only code fails strict", frontMatter("description: x") + "with ({}) {}", false},
		{"raw", frontMatter("flags: [raw]") + "if (typeof assert !== 'undefined') throw new Error('harness loaded');", true},
		// Node detaches; goja and quickjs cannot from JavaScript, and say so.
		{"detachArrayBuffer", frontMatter("includes: [detachArrayBuffer.js]") + "var b = new ArrayBuffer(8); $DETACHBUFFER(b); assert.sameValue(b.byteLength, 0);", true},
	}
	suite, err := Unpack(SampleArchive, filepath.Join(repoRoot(t), ".cache", "test262"))
	if err != nil {
		t.Fatal(err)
	}
	// A short bound: the async test that never calls $DONE waits for it.
	engines := []string{"goja", "quickjs"}
	if conformance.RaceEnabled {
		engines = engines[:1] // QuickJS is ten times slower under -race
	}
	for _, h := range newHosts(t, node, 1, 2*time.Second, engines...) {
		for _, c := range cases {
			test := &Test{Path: "language/judge.js", Source: c.source}
			if err := test.parseFrontMatter(); err != nil {
				t.Fatal(err)
			}
			want := c.pass && (h.Name() == "node" || test.HostNeed() == "")
			if res := runModes(suite, h, test); res.Pass != want {
				t.Errorf("%s: %s: pass = %v, want %v (%s)", h.Name(), c.name, res.Pass, want, res.Message)
			}
		}
	}
}
