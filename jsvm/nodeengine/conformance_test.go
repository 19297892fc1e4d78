package nodeengine

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/conformance"
)

// TestConformance runs the suite every engine runs on the node engine, with
// one process per engine (the suite makes many), the fixtures and the
// temporary directory readable (Node's permission model), and gorender's
// environment as the processes' (as the server gives it: Config.Environ).
// Its Intl is Node's own.
func TestConformance(t *testing.T) {
	// The suite's canceled streams must keep their runtime: a render that
	// yields reads the cancel at once, but a loaded machine may take more
	// than the production grace to schedule the executor (a render that
	// never yields is killed whatever the grace: TestCancelKeepsTheProcess).
	defer func(d time.Duration) { cancelGrace = d }(cancelGrace)
	cancelGrace = 30 * time.Second
	engine := conformance.Of(Name, func(opts jsvm.Options) (*Engine, error) {
		opts.Node.Processes = 1
		opts.Node.ReadRoots = append(opts.Node.ReadRoots, testdata, os.TempDir())
		if opts.Environ == nil {
			opts.Environ = os.Environ()
		}
		return New(opts)
	})
	engine.OwnIntl = nodeICU
	engine.OneBundlePerRuntime = true
	engine.CompilesAtLoad = true
	engine.NodeSnippetAnswers = map[string]conformance.Difference{
		// The Node globals of a bundle's context are the executor realm's
		// (as in the Node renderer): what they make is not an instance of
		// the context's own constructors (docs/node-engine.md
		// "Differences from goja and quickjs").
		"url invalid":     {Answer: "TypeError false", Reason: "URL is the executor realm's: its TypeError is not the context's"},
		"structuredClone": {Answer: `[true,true,[1,2],true,false,0,true,[1],2,"gi","10"]`, Reason: "structuredClone is the executor realm's: the Date it makes is not the context's"},
		// The snippet's answer is the util npm package's, which the
		// in-process engines serve; this is Node's own inspect.
		"util inspect": {Answer: "{\n  a: 1,\n  b: 'two',\n  c: [ 1, 2, 3 ],\n  d: { e: { f: [Object] } },\n  h: null,\n  i: undefined\n}", Reason: "Node's own util.inspect (the want is the util package's)"},
	}
	conformance.Run(t, engine)
}

// nodeICU is the ICU and time zone data versions of the Node.js on PATH.
func nodeICU() (icu, tz string, err error) {
	n, err := findNode("")
	if err != nil {
		return "", "", err
	}
	out, err := exec.Command(n.path, "-p", "JSON.stringify([process.versions.icu, process.versions.tz])").Output()
	if err != nil {
		return "", "", err
	}
	var v [2]string
	err = json.Unmarshal(out, &v)
	return v[0], v[1], err
}
