package engines

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
)

// The Intl differential test (docs/intl.md "Differential test"): the calls
// of testdata/intldiff/calls.js run on each engine and are compared, call
// by call, with Node 20's answers (testdata/intldiff/node.json.gz, recorded
// with -record from the node on PATH). Each pure-Go engine's known
// differences are pinned, with its answer, in known-<engine>.json: a call
// that starts to differ, a known difference whose answer changes, or one
// that now answers as Node fails the test (-update rewrites the baseline
// for the calls run). The node engine's Intl is Node's own: it must answer
// every call as the goldens when its ICU is theirs.
//
// CI runs a sample (intlDiffSampleLocales, the first intlDiffSamplePerArea
// calls of each area); GORENDER_INTLDIFF=full runs all of it, and
// GORENDER_INTLDIFF_REPORT=file writes the differences per area with
// examples.

var (
	intlDiffUpdate = flag.Bool("update", false, "rewrite testdata/intldiff/known-<engine>.json for the calls run")
	intlDiffRecord = flag.Bool("record", false, "record testdata/intldiff/node.json.gz with the node on PATH (the whole set)")
)

const (
	intlDiffPerArea       = 12 // calls per area and locale in the whole set
	intlDiffSamplePerArea = 4
)

// intlDiffSampleLocales: Latin, Arabic digits, a non-Gregorian default
// calendar, CJK, Indic, RTL and the root locale.
var intlDiffSampleLocales = []string{"und", "en-US", "de-DE", "sv-SE", "ar-EG", "fa-IR", "th-TH", "ja-JP", "hi-IN", "he-IL", "ru-RU", "zh-CN"}

type intlDiffGoldens struct {
	Versions map[string]string `json:"versions"`
	Answers  map[string]string `json:"answers"`
}

func intlDiffPath(name string) string { return filepath.Join("testdata", "intldiff", name) }

// intlDiffNodeRun runs the whole set on the node on PATH, one locale a
// process call, in a process whose defaults are en-US and UTC.
func intlDiffNodeRun(t *testing.T) intlDiffGoldens {
	t.Helper()
	const driver = `require(process.argv[1]);
const answers = {};
for (const l of intlDiff.locales) Object.assign(answers, JSON.parse(intlDiff.run(l, +process.argv[2])));
process.stdout.write(JSON.stringify({ versions: { node: process.versions.node, icu: process.versions.icu, cldr: process.versions.cldr, tz: process.versions.tz, unicode: process.versions.unicode }, answers }));`
	abs, err := filepath.Abs(intlDiffPath("calls.js"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "-e", driver, abs, fmt.Sprint(intlDiffPerArea))
	cmd.Env = append(os.Environ(), "TZ=UTC", "LANG=en_US.UTF-8", "LC_ALL=", "LC_MESSAGES=")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var g intlDiffGoldens
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func intlDiffLoadGoldens(t *testing.T) intlDiffGoldens {
	t.Helper()
	f, err := os.Open(intlDiffPath("node.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var g intlDiffGoldens
	if err := json.NewDecoder(z).Decode(&g); err != nil {
		t.Fatalf("node.json.gz: %v", err)
	}
	return g
}

func intlDiffWriteGoldens(t *testing.T, g intlDiffGoldens) {
	t.Helper()
	b, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	z.Write(b)
	z.Close()
	if err := os.WriteFile(intlDiffPath("node.json.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func intlDiffLoadKnown(t *testing.T, engine string) map[string]string {
	t.Helper()
	known := map[string]string{}
	b, err := os.ReadFile(intlDiffPath("known-" + engine + ".json"))
	if os.IsNotExist(err) {
		return known
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &known); err != nil {
		t.Fatalf("known-%s.json: %v", engine, err)
	}
	return known
}

// intlDiffArea is the area of a call: its constructor or method and the
// family of options (the key's first word).
func intlDiffArea(key string) string {
	area, _, _ := strings.Cut(key, " ")
	return area
}

func TestIntlDifferential(t *testing.T) {
	if conformance.RaceEnabled {
		t.Skip("run without -race (scripts/test.sh): the race detector makes the engines' Intl about ten times slower")
	}
	if *intlDiffRecord {
		intlDiffWriteGoldens(t, intlDiffNodeRun(t))
	}
	goldens := intlDiffLoadGoldens(t)
	locales, perArea := intlDiffSampleLocales, intlDiffSamplePerArea
	if os.Getenv("GORENDER_INTLDIFF") == "full" {
		locales, perArea = nil, intlDiffPerArea
	}
	calls, err := os.ReadFile(intlDiffPath("calls.js"))
	if err != nil {
		t.Fatal(err)
	}
	report := map[string]map[string][]string{} // engine -> area -> "key: node | engine"
	runs := map[string]int{}                   // engine -> calls compared
	for _, engine := range Names {
		t.Run(engine, func(t *testing.T) {
			opts := jsvm.Options{StubTimers: true, SupportModules: engine == "node"}
			if engine == "node" {
				if _, err := exec.LookPath("node"); err != nil {
					t.Skip("no node on PATH")
				}
			}
			e, err := New(engine, opts)
			if err != nil {
				t.Fatal(err)
			}
			if c, ok := e.(interface{ Close() }); ok {
				defer c.Close()
			}
			rt := conformance.NewLoaded(t, e, "intldiff", string(calls))
			if engine == "node" {
				icu := conformance.MustEval(t, rt, `process.versions.icu + ' ' + process.versions.tz`)
				if want := goldens.Versions["icu"] + " " + goldens.Versions["tz"]; icu != want {
					t.Skipf("node's ICU and tz are %s; the goldens' %s", icu, want)
				}
			}
			ls := locales
			if ls == nil {
				if err := json.Unmarshal([]byte(conformance.MustEval(t, rt, `JSON.stringify(intlDiff.locales)`)), &ls); err != nil {
					t.Fatal(err)
				}
			}
			got := map[string]string{}
			for _, l := range ls {
				out := conformance.MustEval(t, rt, fmt.Sprintf("intlDiff.run(%q, %d)", l, perArea))
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("%s: %v", l, err)
				}
			}
			known := map[string]string{}
			if engine != "node" {
				known = intlDiffLoadKnown(t, engine)
			}
			var failures []string
			diffs := map[string][]string{}
			keys := make([]string, 0, len(got))
			for k := range got {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				have := got[k]
				want, ok := goldens.Answers[k]
				if !ok {
					failures = append(failures, fmt.Sprintf("%s: no golden (calls.js changed: record them with -record)", k))
					continue
				}
				if have == want {
					if _, isKnown := known[k]; isKnown {
						failures = append(failures, fmt.Sprintf("%s: answers as Node now: drop it from the baseline (-update)\n  node: %q", k, want))
						delete(known, k)
					}
					continue
				}
				diffs[intlDiffArea(k)] = append(diffs[intlDiffArea(k)], fmt.Sprintf("%s\n  node:   %q\n  %-7s %q", k, want, engine+":", have))
				if listed, isKnown := known[k]; !isKnown || listed != have {
					failures = append(failures, fmt.Sprintf("%s\n  node:     %q\n  listed:   %q\n  %-9s %q", k, want, listed, engine+":", have))
				}
				known[k] = have
			}
			n := 0
			for _, d := range diffs {
				n += len(d)
			}
			runs[engine] = len(got)
			report[engine] = diffs
			t.Logf("%s: %d calls in %d locales, %d differ from Node", engine, len(got), len(ls), n)
			if *intlDiffUpdate && engine != "node" {
				// Keep the entries of calls not run; those run are as answered.
				all := intlDiffLoadKnown(t, engine)
				for k := range got {
					delete(all, k)
				}
				for k, v := range known {
					if _, ran := got[k]; ran && v != goldens.Answers[k] {
						all[k] = v
					}
				}
				b, _ := json.MarshalIndent(all, "", " ")
				if err := os.WriteFile(intlDiffPath("known-"+engine+".json"), append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if len(failures) > 0 {
				if len(failures) > 60 {
					failures = append(failures[:60], fmt.Sprintf("... and %d more", len(failures)-60))
				}
				t.Errorf("%d calls differ from Node's goldens and from known-%s.json (-update rewrites it):\n%s", len(failures), engine, strings.Join(failures, "\n"))
			}
		})
	}
	if path := os.Getenv("GORENDER_INTLDIFF_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(intlDiffReport(goldens.Versions, runs, report)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// intlDiffReport is the differences per area and engine, with examples.
func intlDiffReport(versions map[string]string, runs map[string]int, report map[string]map[string][]string) string {
	var b strings.Builder
	engines := make([]string, 0, len(report))
	areas := map[string]bool{}
	for e, diffs := range report {
		engines = append(engines, e)
		for a := range diffs {
			areas[a] = true
		}
	}
	sort.Strings(engines)
	fmt.Fprintf(&b, "# Intl differences from Node %s (ICU %s, CLDR %s, tz %s)\n\n", versions["node"], versions["icu"], versions["cldr"], versions["tz"])
	fmt.Fprintf(&b, "| area |")
	for _, e := range engines {
		fmt.Fprintf(&b, " %s (of %d) |", e, runs[e])
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(engines)) + "\n")
	as := slices.Sorted(func(yield func(string) bool) {
		for a := range areas {
			if !yield(a) {
				return
			}
		}
	})
	for _, a := range as {
		fmt.Fprintf(&b, "| %s |", a)
		for _, e := range engines {
			fmt.Fprintf(&b, " %d |", len(report[e][a]))
		}
		b.WriteString("\n")
	}
	for _, e := range engines {
		for _, a := range as {
			d := report[e][a]
			if len(d) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n## %s: %s (%d)\n\n```\n", e, a, len(d))
			step := max(1, len(d)/4)
			for i := 0; i < len(d) && i/step < 4; i += step {
				b.WriteString(d[i] + "\n")
			}
			b.WriteString("```\n")
		}
	}
	return b.String()
}
