package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/intl"
)

// Intl is built in a runtime the first time its page touches it: a page
// that never does pays nothing, typeof Intl costs nothing, and the first use
// builds it once. (What it answers: the matrix below.)
func testIntlLoadsOnFirstUse(t *testing.T, engine string) {
	skipSlowUnderRace(t, engine)
	v, _ := registered.Load(engine)
	builds := v.(Engine).IntlBuilds
	if builds == nil {
		t.Skip("the engine has Intl of its own")
	}
	for _, opts := range []jsvm.Options{{SupportModules: true}, {StubTimers: true}} {
		e, err := NewEngine(engine, opts)
		if err != nil {
			t.Fatal(err)
		}
		before := builds()
		rt := NewLoaded(t, e, "b1", `globalThis.x = typeof Intl === 'object' && Object.prototype.toString.call(Intl);`)
		if got := MustEval(t, rt, `x + ' ' + typeof Intl.NumberFormat`); got != "[object Intl] function" {
			t.Fatal(got)
		}
		if n := builds() - before; n != 1 {
			t.Fatalf("Intl built %d times by the first use", n)
		}
		if got := MustEval(t, rt, `(1234.5).toLocaleString('de-DE') + ' ' + new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(5)`); got != "1.234,5 $5.00" {
			t.Fatal(got)
		}
		if n := builds() - before; n != 1 {
			t.Fatalf("Intl built %d times in one runtime", n)
		}

		before = builds()
		rt2 := NewLoaded(t, e, "b2", `globalThis.y = 1;`)
		MustEval(t, rt2, `String(y + 1) + typeof Intl + 'a'.toLocaleUpperCase('tr')`)
		if n := builds() - before; n != 0 {
			t.Fatalf("a page that never touches Intl built it %d times", n)
		}
		// A locale-aware built-in is a first use too.
		if got := MustEval(t, rt2, `new Date(Date.UTC(2024, 0, 5, 13, 4, 5)).toLocaleString('en-US', { timeZone: 'UTC' })`); got != "1/5/2024, 1:04:05 PM" {
			t.Fatal(got)
		}
		if n := builds() - before; n != 1 {
			t.Fatalf("toLocaleString built Intl %d times", n)
		}
	}
}

// A runtime parses only the DateTimeFormat formats its formatters use (of
// the ~750 each locale lists, jsvm/intl/patches/format-list.js: parsing
// them all cost ~10 MB per locale on goja), and loads no data of a locale
// it does not use. White-box: it reads the polyfill's locale data.
func testIntlParsesFormatsInUse(t *testing.T, engine string) {
	skipSlowUnderRace(t, engine)
	v, _ := registered.Load(engine)
	if v.(Engine).IntlBuilds == nil {
		t.Skip("the engine has Intl of its own")
	}
	e, err := NewEngine(engine, jsvm.Options{StubTimers: true})
	if err != nil {
		t.Fatal(err)
	}
	rt := NewLoaded(t, e, "b", `var x;`)
	// Two formats (the default date and time; a long month), each asked
	// for twice; date and time styles are not among the formats.
	const use = `[0, 1].map(function () {
		var d = new Date(Date.UTC(2024, 2, 5, 14, 7));
		return [d.toLocaleString('de-DE', { timeZone: 'UTC' }), d.toLocaleDateString('de-DE', { month: 'long', timeZone: 'UTC' }),
			new Intl.DateTimeFormat('de-DE', { dateStyle: 'full', timeStyle: 'short', timeZone: 'UTC' }).format(d)].join(' | ');
	}).join(' / ')`
	if got, want := MustEval(t, rt, use), "5.3.2024, 14:07:00 | März | Dienstag, 5. März 2024 um 14:07"; got != want+" / "+want {
		t.Fatalf("got %q", got)
	}
	got := MustEval(t, rt, `var formats = Intl.DateTimeFormat.localeData['de-DE'].formats.gregory;
		JSON.stringify([formats.length, formats.parsed.size, Object.keys(Intl.DateTimeFormat.localeData).sort()])`)
	if want := `[745,2,["de","de-DE"]]`; got != want {
		t.Fatalf("de's formats listed, parsed, DateTimeFormat locales loaded: %s, want %s", got, want)
	}
}

// The Intl matrix (tests/testdata/intl, built by its build.sh): react-intl,
// luxon, i18next, date-fns and direct Intl calls, each case run in every
// locale of the matrix, compared with what Node 20 answered (golden/). Where
// gorender knowingly answers differently, known-differences.json pins its
// answer and says why (docs/intl.md sums them up): a
// case that starts to differ, or a known difference that changes or goes
// away, fails the test.

var intlMatrixBundles = []string{"env", "direct", "react-intl", "luxon", "i18next", "date-fns"}

// knownDifference is gorender's answer to one case where it is not Node's.
type knownDifference struct {
	Gorender string `json:"gorender"`
	Reason   string `json:"reason"`
}

// knownDifferences: engine ("all", "goja", "quickjs") -> "bundle locale case" -> difference.
type knownDifferences map[string]map[string]knownDifference

func loadIntlJSON(t testing.TB, name string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(Testdata(t, "intl", name)), v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// raceLocales are the matrix's locales under the race detector.
var raceLocales = []string{"und", "de-DE", "ar-EG"}

// testIntlProcessDefaults runs the env cases again in a child process whose
// TZ and LANG are Asia/Tokyo and de_DE.UTF-8 (as golden/env-tokyo-de.json
// was recorded): the defaults come from the process's environment, as
// Node's do, and Date's local time agrees with Intl's time zone.
func testIntlProcessDefaults(t *testing.T, engine string) {
	skipSlowUnderRace(t, engine)
	if os.Getenv("GORENDER_INTL_ENV_GOLDEN") != "" {
		t.Skip("in the child")
	}
	// The suite's own test (TestConformance of the engine's package), its
	// matrix case only.
	suite := strings.Split(t.Name(), "/")[0]
	cmd := exec.Command(os.Args[0], "-test.run", "^"+suite+"$/^IntlMatrix$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "GORENDER_INTL_ENV_GOLDEN=env-tokyo-de", "TZ=Asia/Tokyo", "LANG=de_DE.UTF-8", "LC_ALL=", "LC_MESSAGES=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "cases as Node") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%s", strings.Join(grepLines(string(out), "cases as Node"), "\n"))
}

func grepLines(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

func testIntlMatrix(t *testing.T, engine string) {
	skipSlowUnderRace(t, engine)
	var known knownDifferences
	loadIntlJSON(t, "known-differences.json", &known)
	v, _ := registered.Load(engine)
	ownIntl := v.(Engine).OwnIntl
	if ownIntl != nil {
		// The engine's own ICU answers as Node's when it is the ICU the
		// goldens were recorded with: nothing is excused.
		var versions map[string]string
		loadIntlJSON(t, "golden/versions.json", &versions)
		icu, tz, err := ownIntl()
		if err != nil {
			t.Fatal(err)
		}
		if icu != versions["icu"] || tz != versions["tz"] {
			t.Skipf("the engine's Intl is ICU %s with tz %s; the goldens were recorded with ICU %s and tz %s (Node %s)", icu, tz, versions["icu"], versions["tz"], versions["node"])
		}
		known = nil
	}
	lookupKnown := func(key string) (knownDifference, bool) {
		if d, ok := known[engine][key]; ok {
			return d, true
		}
		d, ok := known["all"][key]
		return d, ok
	}
	locale, zone := intl.ProcessDefaults()
	bundles, envGolden := intlMatrixBundles, "env"
	if g := os.Getenv("GORENDER_INTL_ENV_GOLDEN"); g != "" {
		// The child of testIntlProcessDefaults: the env cases only.
		bundles, envGolden, locale, zone = []string{"env"}, g, "en-US", "UTC"
	}
	e, err := NewEngine(engine, jsvm.Options{StubTimers: true})
	if err != nil {
		t.Fatal(err)
	}
	// One runtime runs every library, as one page would: each locale's data
	// is loaded once.
	var all strings.Builder
	for _, name := range bundles {
		all.WriteString(Testdata(t, "intl", "bundles", name+".js"))
		all.WriteString("\n;\n")
	}
	rt := NewLoaded(t, e, "intl-matrix", all.String())
	var pass, knownDiff int
	var failures []string
	got := map[string]string{} // every answer, for GORENDER_INTL_MATRIX_OUT
	for _, name := range bundles {
		var golden map[string]map[string]string
		goldenName := name
		if name == "env" {
			goldenName = envGolden
		}
		loadIntlJSON(t, "golden/"+goldenName+".json", &golden)
		if name == "env" && (locale != "en-US" || (zone != "Etc/UTC" && zone != "UTC")) {
			t.Logf("env cases skipped: the process's locale and zone are %q, %q (the goldens' are en-US, UTC)", locale, zone)
			continue
		}
		locales := make([]string, 0, len(golden))
		for l := range golden {
			if !RaceEnabled || ownIntl != nil || slices.Contains(raceLocales, l) {
				locales = append(locales, l)
			}
		}
		sort.Strings(locales)
		for _, l := range locales {
			out, err := evalMatrix(rt, fmt.Sprintf("globalThis.intlMatrix[%q](%q)", name, l))
			if err != nil {
				t.Fatalf("%s %s: %v", name, l, err)
			}
			var answers map[string]string
			if err := json.Unmarshal([]byte(out), &answers); err != nil {
				t.Fatalf("%s %s: %v", name, l, err)
			}
			for c, want := range golden[l] {
				key := goldenName + " " + l + " " + c
				have, ok := answers[c]
				got[key] = have
				if d, isKnown := lookupKnown(key); isKnown {
					if have == d.Gorender && have != want {
						knownDiff++
						continue
					}
					failures = append(failures, fmt.Sprintf("%s: known difference changed (%s)\n  node:     %q\n  listed:   %q\n  gorender: %q", key, d.Reason, want, d.Gorender, have))
					continue
				}
				if !ok || have != want {
					failures = append(failures, fmt.Sprintf("%s\n  node:     %q\n  gorender: %q", key, want, have))
					continue
				}
				pass++
			}
		}
	}
	if path := os.Getenv("GORENDER_INTL_MATRIX_OUT"); path != "" {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(path+"."+engine+".json", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%s: %d cases as Node, %d known differences, %d failures", engine, pass, knownDiff, len(failures))
	if len(failures) > 0 {
		sort.Strings(failures)
		t.Errorf("%d cases differ from Node's goldens and from known-differences.json:\n%s", len(failures), strings.Join(failures, "\n"))
	}
}

// evalMatrix runs one library's cases in one locale: a locale's first use
// loads its data, and under the race detector that takes seconds.
func evalMatrix(rt jsvm.Runtime, code string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := rt.Eval(ctx, code, jsvm.NewRequest(nil))
	return res.Body, err
}
