package inproc

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/gorender/gorender/jsvm/jsenv"
)

// TestHostContract: every host function the environment calls (env.js, the
// Node environment's sources: host.name) is either a host function of the table or
// one bridge.js defines, and every host function of the table is called
// by the bridge or the environment. Adding one is one entry in Functions;
// forgetting it fails here instead of at run time.
func TestHostContract(t *testing.T) {
	table := map[string]bool{}
	for _, f := range Functions {
		if table[f.Name] {
			t.Errorf("host function %s is declared twice", f.Name)
		}
		table[f.Name] = true
	}
	// What bridge.js puts on the host object itself (Object.assign(host, {…})).
	bridgeDefined := map[string]bool{}
	block := regexp.MustCompile(`(?s)Object\.assign\(host, \{(.*?)\n  \}\);`).FindStringSubmatch(jsenv.Bridge)
	if block == nil {
		t.Fatal("bridge.js: no Object.assign(host, {...}) block")
	}
	for _, m := range regexp.MustCompile(`(?m)^    (\w+):`).FindAllStringSubmatch(block[1], -1) {
		bridgeDefined[m[1]] = true
	}
	used := regexp.MustCompile(`(?:state\.host|(?:^|[^.\w])host)\.(\w+)`)
	sources := map[string]string{"env.js": jsenv.Env, "install.js": jsenv.Programs["intl-install"]}
	nodeSources, err := filepath.Glob("../jsenv/node/src/*.js")
	if err != nil || len(nodeSources) == 0 {
		t.Fatalf("the Node environment's sources: %v", err)
	}
	for _, path := range nodeSources {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sources[filepath.Base(path)] = string(b)
	}
	for name, src := range sources {
		for _, m := range used.FindAllStringSubmatch(src, -1) {
			if !table[m[1]] && !bridgeDefined[m[1]] {
				t.Errorf("%s calls host.%s, which neither Functions nor bridge.js defines", name, m[1])
			}
		}
	}
	called := map[string]bool{}
	for _, m := range regexp.MustCompile(`\braw\.(\w+)`).FindAllStringSubmatch(jsenv.Bridge, -1) {
		if !table[m[1]] {
			t.Errorf("bridge.js calls raw.%s, which Functions does not declare", m[1])
		}
		called[m[1]] = true
	}
	for _, src := range sources {
		for _, m := range used.FindAllStringSubmatch(src, -1) {
			called[m[1]] = true
		}
	}
	// lowerAwait serves the QuickJS engine's own layer (its Function patch).
	engineOnly := []string{"lowerAwait"}
	for name := range table {
		if !called[name] && !slices.Contains(engineOnly, name) {
			t.Errorf("host function %s is called by neither bridge.js nor the environment", name)
		}
	}
	if len(OpNames) != int(OpCrossFlow)+1 {
		t.Errorf("%d op names for %d ops", len(OpNames), OpCrossFlow+1)
	}
}
