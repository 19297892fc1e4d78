package nodeengine

import (
	"github.com/gorender/gorender/jsvm"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestConfinement: what confines bundle code is the process, not the vm
// context it runs in (which it can leave, as escape does): the executor's
// environment has no RENDERER_PASSWORD, and Node's permission model refuses
// reads outside the bundle cache, writes, child processes, worker threads
// and native addons, whatever the code reaches.
func TestConfinement(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Only the bundle's directory is readable besides the executor (the
	// test's other roots are not given here).
	// Through New, as the server makes it: the environment as it is (with
	// the test's RENDERER_PASSWORD), the bundle's directory as the cache.
	e, err := New(jsvm.Options{SupportModules: true, Environ: os.Environ(), Node: jsvm.NodeOptions{ReadRoots: []string{dir}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rt := load(t, e, "b", filepath.Join(dir, "b.js"), `globalThis.bundleRequire = require;`)
	pid := running(t, e, 1)[0].PID

	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), "do-not-leak") || strings.Contains(string(environ), "RENDERER_PASSWORD") {
		t.Error("the executor's environment holds the password")
	}
	try := func(code string) string {
		return `(() => { try { return String(` + code + `); } catch (e) { return e.code || e.message; } })()`
	}
	req := `(` + escape + `).mainModule.require`
	for _, tc := range []struct{ name, code, want string }{
		{"process.env inside", try(`process.env.RENDERER_PASSWORD`), "undefined"},
		{"process.env outside", try(`(` + escape + `).env.RENDERER_PASSWORD`), "undefined"},
		{"child_process inside", try(`bundleRequire('child_process')`), "MODULE_NOT_FOUND"},
		{"read outside the cache", try(req + `('fs').readFileSync('/etc/hostname', 'utf8')`), "ERR_ACCESS_DENIED"},
		{"write into the cache", try(req + `('fs').writeFileSync(` + strconv.Quote(filepath.Join(dir, "new.txt")) + `, 'x')`), "ERR_ACCESS_DENIED"},
		{"child process", try(req + `('child_process').execSync('true')`), "ERR_ACCESS_DENIED"},
		{"worker thread", try(`new (` + req + `('worker_threads').Worker)('1', { eval: true })`), "ERR_ACCESS_DENIED"},
		{"native addon", try(`(` + escape + `).dlopen({ exports: {} }, '/nonexistent.node')`), "ERR_DLOPEN_DISABLED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "native addon" && !e.node.atLeast(20, 12) {
				t.Skipf("Node %s has no addon permission (20.12 added it)", e.node.version)
			}
			if got := mustEval(t, rt, "b", tc.code); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Error("a write reached the disk")
	}
}
