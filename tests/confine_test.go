package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
	"golang.org/x/sys/unix"
)

// Bundle code, escaped or not, cannot reach another process: not gorender,
// not another Node.js process of the node engine
// (docs/node-engine.md "What confines bundle code"). On goja and quickjs there is no process to escape to; the
// same requests prove that the server keeps serving there too.

// victimBundle renders a secret; attackerBundle keeps its require for the
// render to use.
const (
	victimBundle   = `globalThis.renderPage = (p) => '<div class="v">' + p.secret + '</div>';`
	attackerBundle = `globalThis.__req = require;`
)

// escapeToProcess is the repro of the escape: the Function constructor of a
// host function, outside the bundle's vm context on node.
const escapeToProcess = `runOnOtherBundle.constructor("return process")()`

// attackRender runs attempts (JavaScript statements calling attempt(name,
// f), with P the escaped process) and answers, as a JSON object, what each
// gave: "done", or the error's code (a system error's own, as Node's os
// functions wrap it) or message.
func attackRender(attempts string) string {
	return `(function () {
  const out = {};
  const attempt = (name, f) => { try { f(); out[name] = "done"; } catch (e) { out[name] = (e && e.info && e.info.code) || (e && e.code) || String(e && e.message || e); } };
  let P = {};
  attempt("escape", () => { P = ` + escapeToProcess + `; });
  ` + attempts + `
  return JSON.stringify(out);
})()`
}

// killAttempts signal each of pids but the render's own process.
func killAttempts(pids []int) string {
	list, _ := json.Marshal(append([]int{}, pids...)) // [], not null
	return `for (const pid of ` + string(list) + `) if (pid !== P.pid) attempt("kill " + pid, () => P.kill(pid, "SIGKILL"));`
}

// reniceAttempts renice pid, through the bundle's require and the escaped
// process's.
func reniceAttempts(pid int) string {
	return `attempt("setPriority via require", () => __req("os").setPriority(` + strconv.Itoa(pid) + `, 19));
  attempt("setPriority escaped", () => P.mainModule.require("os").setPriority(` + strconv.Itoa(pid) + `, 19));`
}

// wantRefused checks an attack's answer: nothing was done, and on node,
// where the escaped process's calls reach the kernel, each was refused
// with EPERM (but the bundle's own require, which has no os module).
func wantRefused(t *testing.T, r *response) {
	t.Helper()
	r.wantStatus(t, transports[0], http.StatusOK)
	var got map[string]string
	if err := json.Unmarshal([]byte(r.Body), &got); err != nil {
		t.Fatalf("the attack's answer %q: %v", r.Body, err)
	}
	t.Logf("attempts: %v", got)
	if len(got) < 2 && testEngine == "node" {
		t.Errorf("no attempt was made: %v", got)
	}
	for name, result := range got {
		switch {
		case name == "escape":
		case result == "done":
			t.Errorf("%s: done", name)
		case testEngine == "node" && name != "setPriority via require" && result != "EPERM":
			t.Errorf("%s: %s, want EPERM", name, result)
		}
	}
}

// niceOf reads a process's nice value (/proc/<pid>/stat, field 19).
func niceOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	n, err := strconv.Atoi(fields[16]) // fields[0] is field 3, state
	if err != nil {
		t.Fatalf("nice of %d: %v in %q", pid, err, s)
	}
	return n
}

// nodeVersion is what the node on PATH prints for --version.
func nodeVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestBundleCannotReachOtherProcesses: a render that signals the other
// Node.js process while it runs a render of another bundle is refused, and
// that render completes with its own HTML; renicing gorender is refused and
// its nice value is unchanged; the repro (kill gorender, the parent
// of the Node.js process that runs the render) and a kill of gorender's pid
// leave gorender serving. Each part fails without the seccomp filter.
func TestBundleCannotReachOtherProcesses(t *testing.T) {
	t.Parallel()
	s := startServer(t, confineEnv())
	attackTheServer(t, s)
}

// TestBundleCannotReachOtherProcessesAsNonroot is the same as an
// unprivileged uid with no capabilities (the distroless image's nonroot,
// 65532), where gorender and its Node.js processes share the uid and the
// kernel's own permission checks allow every one of these calls.
func TestBundleCannotReachOtherProcessesAsNonroot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("starting gorender as another uid needs root")
	}
	const nonroot = 65532
	// A directory every uid can enter, with the binary and a cache the
	// nonroot uid owns (the test's temporary directories are root's, 0700).
	dir, err := os.MkdirTemp("", "gorender-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "gorender")
	src := binPath
	if testEngine == "quickjs" {
		src = plainBinary(t)
	}
	if out, err := exec.Command("cp", src, bin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	cache := filepath.Join(dir, "cache")
	for _, err := range []error{os.Chmod(dir, 0o755), os.Mkdir(cache, 0o700), os.Chown(cache, nonroot, nonroot)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	env := confineEnv()
	env["RENDERER_SERVER_BUNDLE_CACHE_PATH"] = cache
	s := startServerWith(t, []string{bin}, env, func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nonroot, Gid: nonroot}}
	})
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), "\nUid:\t65532\t65532\t65532\t65532\n") || !strings.Contains(string(status), "\nCapEff:\t0000000000000000\n") {
		t.Fatalf("gorender does not run as uid 65532 without capabilities:\n%s", status)
	}
	if testEngine == "node" {
		// Undumpable (PR_SET_DUMPABLE 0) once the node engine started: its
		// memory and descriptors under /proc are root's, out of the reach
		// of a process of its own uid.
		var st syscall.Stat_t
		for _, f := range []string{"mem", "fd", "environ", "oom_score_adj"} {
			if err := syscall.Stat(fmt.Sprintf("/proc/%d/%s", s.cmd.Process.Pid, f), &st); err != nil || st.Uid != 0 {
				t.Errorf("gorender's /proc/<pid>/%s: owner %d (%v), want root", f, st.Uid, err)
			}
		}
	}
	attackTheServer(t, s)
}

// wantConfinement is what /info and the start log name on node: the seccomp
// filter, and a Landlock domain where the kernel has Landlock (any ABI).
func wantConfinement() string {
	if abi, _, errno := syscall.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1); errno == 0 && abi > 0 {
		return "seccomp+landlock"
	}
	return "seccomp"
}

func confineEnv() map[string]string {
	return map[string]string{
		"RENDERER_SUPPORT_MODULES": "true",
		"RENDERER_WORKERS_COUNT":   "2",
		"RENDERER_RENDER_TIMEOUT":  "30s",
	}
}

// attackTheServer runs the attacks against s (on the engine under test).
func attackTheServer(t *testing.T, s *server) {
	t.Helper()
	tr := transports[0]
	gorender := s.cmd.Process.Pid
	victim, attacker := newID("victim"), newID("attacker")
	s.upload(t, map[string]string{victim: victimBundle, attacker: attackerBundle}, nil)
	// Warm both, so that on node each has been evaluated in the processes.
	s.render(t, tr, victim, `renderPage({secret: "warm"})`).want(t, tr, http.StatusOK, `<div class="v">warm</div>`)
	s.render(t, tr, attacker, `typeof __req`).want(t, tr, http.StatusOK, "function")
	// On node each bundle renders in processes of its own isolation group:
	// the 2 started at start, and at most 2 × 2 workers in all.
	kids := childrenOf(t, gorender)
	if testEngine == "node" && (len(kids) < 2 || len(kids) > 4) || testEngine != "node" && len(kids) != 0 {
		t.Fatalf("%d child processes, want 2 to 4 on node, none elsewhere", len(kids))
	}
	nice := niceOf(t, gorender)

	t.Run("signal the other process during its render", func(t *testing.T) {
		// The victim's render waits 2 s on a timer, holding its process,
		// while the attacker's render runs on the other one.
		var wg sync.WaitGroup
		var slow *response
		var slowErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.gem(tr).RenderRaw(ctx(t), gemclient.Render{BundleID: victim,
				Code: `new Promise((resolve) => setTimeout(() => resolve(renderPage({secret: "CARD-4111"})), 2000))`})
			if err != nil {
				slowErr = err
				return
			}
			slow = convert(r)
		}()
		time.Sleep(700 * time.Millisecond)
		wantRefused(t, s.render(t, tr, attacker, attackRender(killAttempts(kids))))
		wg.Wait()
		if slowErr != nil {
			t.Fatalf("the victim's concurrent render: %v", slowErr)
		}
		slow.want(t, tr, http.StatusOK, `<div class="v">CARD-4111</div>`)
		for _, pid := range kids {
			if !alive(pid) {
				t.Errorf("node process %d is gone", pid)
			}
		}
	})

	t.Run("renice gorender", func(t *testing.T) {
		wantRefused(t, s.render(t, tr, attacker, attackRender(reniceAttempts(gorender))))
		if n := niceOf(t, gorender); n != nice {
			t.Errorf("gorender's nice value went from %d to %d", nice, n)
		}
	})

	t.Run("kill gorender", func(t *testing.T) {
		r := s.render(t, tr, attacker, `(function(){ const P = `+escapeToProcess+`; P.kill(P.ppid, "SIGKILL"); return "x" })()`)
		if r.Status == http.StatusOK {
			t.Errorf("the kill answered 200 %q", clip(r.Body))
		}
		t.Logf("the repro answered %d %s", r.Status, clip(r.Body))
		wantRefused(t, s.render(t, tr, attacker, attackRender(
			`attempt("kill gorender", () => P.kill(`+strconv.Itoa(gorender)+`, "SIGKILL"));
  attempt("kill ppid", () => P.kill(P.ppid, "SIGKILL"));`)))
		s.get(t, tr, http.MethodGet, "/health").want(t, tr, http.StatusOK, `{"status":"ok"}`)
		s.render(t, tr, victim, `renderPage({secret: "after"})`).want(t, tr, http.StatusOK, `<div class="v">after</div>`)
		got := childrenOf(t, gorender)
		for _, pid := range kids {
			if !slices.Contains(got, pid) {
				t.Errorf("node processes %v, want those before %v among them", got, kids)
			}
		}
	})
}

// TestNodeProcessesInheritOnlyTheirPipes: a descriptor gorender inherited
// without close-on-exec (here a file at its fds 3-5) does not reach its
// Node.js processes, which share with gorender only their standard output
// and error and their two pipes (fds 1-4; fd 0 is /dev/null).
func TestNodeProcessesInheritOnlyTheirPipes(t *testing.T) {
	skipUnlessNode(t)
	t.Parallel()
	leak, err := os.Create(filepath.Join(t.TempDir(), "inherited"))
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	s := startServerWith(t, nil, map[string]string{"RENDERER_WORKERS_COUNT": "2"}, func(cmd *exec.Cmd) {
		// Three, so that one stays past the executor's own fds 3 and 4.
		cmd.ExtraFiles = []*os.File{leak, leak, leak}
	})
	id := newID("fds")
	s.upload(t, map[string]string{id: markerBundle("fds")}, nil)
	s.render(t, transports[0], id, "MARKER").want(t, transports[0], http.StatusOK, "fds")

	gorender := fdTargets(t, s.cmd.Process.Pid)
	if gorender[5] != leak.Name() {
		t.Fatalf("gorender's fd 5 is %q, want the inherited %s", gorender[5], leak.Name())
	}
	held := map[string]bool{}
	for _, target := range gorender {
		held[target] = true
	}
	kids := childrenOf(t, s.cmd.Process.Pid)
	if len(kids) != 2 {
		t.Fatalf("%d child processes, want 2", len(kids))
	}
	for _, pid := range kids {
		fds := fdTargets(t, pid)
		var shared []int
		for fd, target := range fds {
			if target == leak.Name() {
				t.Errorf("node process %d holds the inherited file at fd %d", pid, fd)
			}
			// Pipes, sockets and files are one object each; anon_inode:[eventpoll]
			// or /dev/null name a kind, which each process opens for itself.
			if held[target] && !strings.HasPrefix(target, "anon_inode:") && !strings.HasPrefix(target, "/dev/") {
				shared = append(shared, fd)
			}
		}
		if fds[0] != "/dev/null" {
			t.Errorf("node process %d's fd 0 is %q, want /dev/null", pid, fds[0])
		}
		for fd := 1; fd <= 4; fd++ {
			if !strings.HasPrefix(fds[fd], "pipe:") {
				t.Errorf("node process %d's fd %d is %q, want a pipe", pid, fd, fds[fd])
			}
		}
		if fmt.Sprint(sortedInts(shared)) != "[1 2 3 4]" {
			t.Errorf("node process %d shares fds %v with gorender, want its pipes [1 2 3 4]: %v", pid, sortedInts(shared), fds)
		}
	}
}

// fdTargets reads what each descriptor of pid refers to.
func fdTargets(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, e := range entries {
		fd, _ := strconv.Atoi(e.Name())
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
			out[fd] = target
		}
	}
	return out
}

func sortedInts(s []int) []int {
	slices.Sort(s)
	return s
}

// TestNodeEngineNeverRunsUnconfined: where the kernel refuses the seccomp
// filter, the node engine does not start, and gorender says why, rather
// than run bundle code in Node.js processes that could reach it.
func TestNodeEngineNeverRunsUnconfined(t *testing.T) {
	skipUnlessNode(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the helper that refuses seccomp is amd64's")
	}
	t.Parallel()
	helper := filepath.Join(t.TempDir(), "noseccomp")
	build := exec.Command("go", "build", "-o", helper, "./testdata/noseccomp/main.go")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Bounded: a gorender that runs its processes unconfined serves on.
	c, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(c, helper, binPath, "serve", "-p", strconv.Itoa(freePort(t)))
	cmd.Env = processEnv(map[string]string{
		"RENDERER_JS_ENGINE":                "node",
		"RENDERER_PASSWORD":                 testPassword,
		"RENDERER_SERVER_BUNDLE_CACHE_PATH": filepath.Join(t.TempDir(), "cache"),
		"RENDERER_HOST":                     "127.0.0.1",
	})
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("gorender under a kernel refusing seccomp: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{"no process started", "the kernel refused the seccomp filter", "RENDERER_JS_ENGINE=goja or quickjs"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
