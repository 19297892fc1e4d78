package test262

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestBaselineUpdate: -update keeps each group's reason and the entries of
// tests the run did not run, drops what now passes, writes a directory for
// a group holding every test run under it (at least collapseAt), and reads
// back what it wrote; Check finds the new failures and the fixed ones.
func TestBaselineUpdate(t *testing.T) {
	old, err := ReadBaseline(strings.NewReader(`
== goja | dir language/a | the reason of a
language/a/fixed.js
language/a/not-run.js
== goja | feature Temporal | no Temporal
built-ins/Temporal/
`))
	if err != nil {
		t.Fatal(err)
	}
	suite := &Suite{}
	suite.features.Do(func() { suite.featureCount = map[string]int{"Temporal": 10} })
	run := &Run{Suite: suite, Results: map[string][]Result{}}
	add := func(path string, nodePass, gojaPass bool, features ...string) {
		test := &Test{Path: path, Features: features}
		run.Tests = append(run.Tests, test)
		run.Results["node"] = append(run.Results["node"], Result{Test: test, Pass: nodePass})
		run.Results["goja"] = append(run.Results["goja"], Result{Test: test, Pass: gojaPass})
	}
	add("language/a/fixed.js", true, true)
	add("language/a/new.js", true, false)
	add("language/a/node-fails-too.js", false, false)
	for i := range collapseAt {
		add(fmt.Sprintf("built-ins/Other/x/%d.js", i), true, false, "Temporal")
	}
	newFailures, fixed := old.Check(run, "goja")
	var paths []string
	for _, r := range newFailures {
		paths = append(paths, r.Test.Path)
	}
	if !slices.Equal(paths[:1], []string{"built-ins/Other/x/0.js"}) || len(paths) != collapseAt+1 || paths[collapseAt] != "language/a/new.js" {
		t.Errorf("new failures = %v", paths)
	}
	if !slices.Equal(fixed, []string{"language/a/fixed.js"}) {
		t.Errorf("fixed = %v", fixed)
	}

	var b strings.Builder
	if _, err := old.Update(run).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBaseline(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]BaselineGroup{
		"dir language/a":   {Reason: "the reason of a", Tests: []string{"language/a/not-run.js", "language/a/new.js"}},
		"feature Temporal": {Reason: "no Temporal", Tests: []string{"built-ins/Temporal/", "built-ins/Other/"}},
	}
	for name, w := range want {
		g := got.Groups["goja"][name]
		if g == nil || g.Reason != w.Reason || !sameSet(g.Tests, w.Tests) {
			t.Errorf("goja %s = %+v, want %+v\n%s", name, g, w, b.String())
		}
	}
	if len(got.Groups["goja"]) != len(want) {
		t.Errorf("goja groups = %d, want %d\n%s", len(got.Groups["goja"]), len(want), b.String())
	}
	if g := got.Groups["node"]["dir language/a"]; g == nil || g.Reason != NoReason || !sameSet(g.Tests, []string{"language/a/node-fails-too.js"}) {
		t.Errorf("node's failure = %+v", g)
	}
	if !got.Known("goja", "built-ins/Other/x/99.js") || got.Known("goja", "built-ins/Otherwise.js") {
		t.Error("a directory entry does not cover exactly the tests under it")
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
