package confine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The filter's system-call numbers are the kernel's, as golang.org/x/sys
// lists them for this architecture.
func TestSyscallNumbers(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	for name, pair := range map[string][2]int{
		"kill": {sysKill, unix.SYS_KILL}, "tkill": {sysTkill, unix.SYS_TKILL}, "tgkill": {sysTgkill, unix.SYS_TGKILL},
		"rt_sigqueueinfo": {sysRtSigqueueinfo, unix.SYS_RT_SIGQUEUEINFO}, "rt_tgsigqueueinfo": {sysRtTgsigqueueinfo, unix.SYS_RT_TGSIGQUEUEINFO},
		"pidfd_open": {sysPidfdOpen, unix.SYS_PIDFD_OPEN}, "pidfd_send_signal": {sysPidfdSendSignal, unix.SYS_PIDFD_SEND_SIGNAL},
		"pidfd_getfd": {sysPidfdGetfd, unix.SYS_PIDFD_GETFD}, "setpriority": {sysSetpriority, unix.SYS_SETPRIORITY},
		"ioprio_set": {sysIoprioSet, unix.SYS_IOPRIO_SET}, "sched_setparam": {sysSchedSetparam, unix.SYS_SCHED_SETPARAM},
		"sched_setscheduler": {sysSchedSetscheduler, unix.SYS_SCHED_SETSCHEDULER}, "sched_setaffinity": {sysSchedSetaffinity, unix.SYS_SCHED_SETAFFINITY},
		"sched_setattr": {sysSchedSetattr, unix.SYS_SCHED_SETATTR}, "prlimit64": {sysPrlimit64, unix.SYS_PRLIMIT64},
		"process_vm_readv": {sysProcessVMReadv, unix.SYS_PROCESS_VM_READV}, "process_vm_writev": {sysProcessVMWritev, unix.SYS_PROCESS_VM_WRITEV},
		"kcmp": {sysKcmp, unix.SYS_KCMP}, "process_madvise": {sysProcessMadvise, unix.SYS_PROCESS_MADVISE},
		"move_pages": {sysMovePages, unix.SYS_MOVE_PAGES}, "migrate_pages": {sysMigratePages, unix.SYS_MIGRATE_PAGES},
		"get_robust_list": {sysGetRobustList, unix.SYS_GET_ROBUST_LIST}, "perf_event_open": {sysPerfEventOpen, unix.SYS_PERF_EVENT_OPEN},
		"ptrace": {sysPtrace, unix.SYS_PTRACE}, "setpgid": {sysSetpgid, unix.SYS_SETPGID},
		"seccomp": {sysSeccomp, unix.SYS_SECCOMP}, "close_range": {sysCloseRange, unix.SYS_CLOSE_RANGE},
		"clone": {sysClone, unix.SYS_CLONE}, "clone3": {sysClone3, unix.SYS_CLONE3},
		"unshare": {sysUnshare, unix.SYS_UNSHARE}, "setns": {sysSetns, unix.SYS_SETNS},
		"landlock_create_ruleset": {sysLandlockCreateRuleset, unix.SYS_LANDLOCK_CREATE_RULESET},
		"landlock_restrict_self":  {sysLandlockRestrictSelf, unix.SYS_LANDLOCK_RESTRICT_SELF},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s is %d, want %d", name, pair[0], pair[1])
		}
	}
	if auditArch != unix.AUDIT_ARCH_X86_64 && auditArch != unix.AUDIT_ARCH_AARCH64 {
		t.Errorf("audit arch %#x", auditArch)
	}
}

// probeEnv makes the test binary, started by the launcher in place of
// Node.js, run the probes (TestProbeHelper) and print their results.
const probeEnv = "CONFINE_TEST_PROBE"

// inheritedEnv names the file the probe must not hold.
const inheritedEnv = "CONFINE_TEST_INHERITED"

// refuseEnv makes the test binary install a filter that refuses seccomp
// and then start the launcher (TestRefusedHelper).
const refuseEnv = "CONFINE_TEST_REFUSE_SECCOMP"

// TestFilter starts the test binary through the launcher, as gorender
// starts Node.js, with gorender's setup (its own process group, a sibling
// executor started through the launcher too), and checks what each system
// call the filter names may do, and what of the others' /proc it reaches.
func TestFilter(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	siblingPath, siblingArgv := Command(sleep, []string{"60"}, 0)
	sibling := &exec.Cmd{Path: siblingPath, Args: siblingArgv, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if err := sibling.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sibling.Process.Kill(); _ = sibling.Wait() }()
	// Confined and executed: its command line is sleep's.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", sibling.Process.Pid))
		if strings.HasPrefix(string(cmdline), sleep+"\x00") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sibling never executed %s: %q", sleep, cmdline)
		}
	}
	inherited, err := os.Create(t.TempDir() + "/inherited")
	if err != nil {
		t.Fatal(err)
	}
	defer inherited.Close()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path, argv := Command(exe, []string{"-test.run=^TestProbeHelper$", "-test.v"}, 1<<30)
	cmd := &exec.Cmd{Path: path, Args: argv, Env: append(os.Environ(), probeEnv+"="+strconv.Itoa(sibling.Process.Pid), inheritedEnv+"="+inherited.Name())}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Its fds 3 and 4 are its pipes, as an executor's; 5 and 6 were
	// inherited without close-on-exec.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd.ExtraFiles = []*os.File{r, w, inherited, inherited}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("probe: %v\n%s", err, out.String())
	}
	line := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "PROBES "); ok {
			line = rest
		}
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("probe output: %v\n%s", err, out.String())
	}
	want := map[string]string{
		"status Seccomp":              "2",
		"status NoNewPrivs":           "1",
		"RLIMIT_DATA":                 strconv.Itoa(1 << 30),
		"oom_score_adj":               "1000",
		"own process group":           "yes",
		"inherited file":              "closed",
		"kill self 0":                 "ok",
		"kill 0 (own group)":          "ok",
		"kill parent":                 "EPERM",
		"kill sibling":                "EPERM",
		"kill -1":                     "EPERM",
		"kill parent's group":         "EPERM",
		"tgkill own thread":           "ok",
		"tgkill parent":               "EPERM",
		"tkill own thread":            "EPERM",
		"rt_sigqueueinfo parent":      "EPERM",
		"pidfd_open self":             "ok",
		"pidfd_open parent":           "EPERM",
		"setpriority self":            "ok",
		"setpriority parent":          "EPERM",
		"setpriority parent's group":  "EPERM",
		"setpriority own uid":         "EPERM",
		"ioprio_set parent":           "EPERM",
		"sched_setscheduler self":     "ok",
		"sched_setscheduler parent":   "EPERM",
		"sched_setaffinity parent":    "EPERM",
		"prlimit64 self":              "ok",
		"prlimit64 parent":            "EPERM",
		"process_vm_readv parent":     "EPERM",
		"kcmp self parent":            "EPERM",
		"ptrace attach parent":        "EPERM",
		"setpgid into parent's group": "EPERM",
		"x32 kill parent":             "EPERM",
		"threads":                     "ok",
		"clone without CLONE_THREAD":  "EPERM",
		"clone CLONE_PARENT":          "EPERM",
		"clone3":                      "ENOSYS",
		"fork":                        "EPERM",
		"vfork":                       "EPERM",
		"perf_event_open cgroup":      "EPERM",
		"unshare user namespace":      "EPERM",
		"setns":                       "EPERM",
		"open /proc/self/mem":         "ok",
		"list /proc/self/fd":          "ok",
	}
	if runtime.GOARCH != "amd64" {
		delete(want, "x32 kill parent")
		delete(want, "fork")
		delete(want, "vfork")
	}
	// Landlock's domain: the parent (as gorender) and the sibling (as
	// another executor) are out of ptrace's reach, for root too.
	if landlockABI() > 0 {
		for _, target := range []string{"parent", "sibling"} {
			want["open /proc/"+target+"/mem"] = "EACCES"
			want["open /proc/"+target+"/fd/1"] = "EACCES"
			want["readlink /proc/"+target+"/fd/1"] = "EACCES"
		}
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, want %s", name, got[name], w)
		}
	}
	if t.Failed() {
		t.Logf("probe output:\n%s", out.String())
	}
}

// TestProbeHelper runs in the process the launcher started (TestFilter):
// it tries the calls and prints what each gave.
func TestProbeHelper(t *testing.T) {
	sibling, err := strconv.Atoi(os.Getenv(probeEnv))
	if err != nil {
		t.Skip("run by TestFilter")
	}
	self, parent := os.Getpid(), os.Getppid()
	res := map[string]string{}
	result := func(errno syscall.Errno) string {
		if errno == 0 {
			return "ok"
		}
		return unix.ErrnoName(errno)
	}
	call := func(name string, nr uintptr, args ...uintptr) {
		var a [6]uintptr
		copy(a[:], args)
		_, _, errno := syscall.RawSyscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		res[name] = result(errno)
	}
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if k, v, ok := strings.Cut(l, ":\t"); ok && (k == "Seccomp" || k == "NoNewPrivs") {
			res["status "+k] = v
		}
	}
	var lim syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_DATA, &lim)
	res["RLIMIT_DATA"] = strconv.FormatUint(lim.Cur, 10)
	adj, _ := os.ReadFile("/proc/self/oom_score_adj")
	res["oom_score_adj"] = strings.TrimSpace(string(adj))
	res["inherited file"] = "closed"
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if target, _ := os.Readlink("/proc/self/fd/" + fd.Name()); target == os.Getenv(inheritedEnv) {
			res["inherited file"] = "open at fd " + fd.Name()
		}
	}

	if pg, _ := syscall.Getpgid(0); pg == self {
		res["own process group"] = "yes"
	}
	runtime.LockOSThread()
	tid := uintptr(syscall.Gettid())
	neg := func(pid int) uintptr { return uintptr(-pid) }
	call("kill self 0", unix.SYS_KILL, uintptr(self), 0)
	call("kill 0 (own group)", unix.SYS_KILL, 0, 0)
	call("kill parent", unix.SYS_KILL, uintptr(parent), 0)
	call("kill sibling", unix.SYS_KILL, uintptr(sibling), 0)
	call("kill -1", unix.SYS_KILL, neg(1), 0)
	pgid, _ := syscall.Getpgid(parent)
	call("kill parent's group", unix.SYS_KILL, neg(pgid), 0)
	call("tgkill own thread", unix.SYS_TGKILL, uintptr(self), tid, 0)
	call("tgkill parent", unix.SYS_TGKILL, uintptr(parent), uintptr(parent), 0)
	call("tkill own thread", unix.SYS_TKILL, tid, 0)
	var info [128]byte
	call("rt_sigqueueinfo parent", unix.SYS_RT_SIGQUEUEINFO, uintptr(parent), 0, uintptr(unsafe.Pointer(&info)))
	call("pidfd_open self", unix.SYS_PIDFD_OPEN, uintptr(self), 0)
	call("pidfd_open parent", unix.SYS_PIDFD_OPEN, uintptr(parent), 0)
	prio, _ := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	call("setpriority self", unix.SYS_SETPRIORITY, unix.PRIO_PROCESS, uintptr(self), uintptr(20-prio)) // its current value
	call("setpriority parent", unix.SYS_SETPRIORITY, unix.PRIO_PROCESS, uintptr(parent), 19)
	call("setpriority parent's group", unix.SYS_SETPRIORITY, unix.PRIO_PGRP, uintptr(pgid), 19)
	call("setpriority own uid", unix.SYS_SETPRIORITY, unix.PRIO_USER, uintptr(os.Getuid()), 19)
	call("ioprio_set parent", unix.SYS_IOPRIO_SET, 1, uintptr(parent), 0)
	var param [4]byte
	policy, _, _ := syscall.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, 0, 0, 0)
	call("sched_setscheduler self", unix.SYS_SCHED_SETSCHEDULER, 0, policy, uintptr(unsafe.Pointer(&param)))
	call("sched_setscheduler parent", unix.SYS_SCHED_SETSCHEDULER, uintptr(parent), policy, uintptr(unsafe.Pointer(&param)))
	var mask [128]byte
	call("sched_setaffinity parent", unix.SYS_SCHED_SETAFFINITY, uintptr(parent), uintptr(len(mask)), uintptr(unsafe.Pointer(&mask)))
	call("prlimit64 self", unix.SYS_PRLIMIT64, uintptr(self), unix.RLIMIT_NOFILE, 0, uintptr(unsafe.Pointer(&lim)))
	call("prlimit64 parent", unix.SYS_PRLIMIT64, uintptr(parent), unix.RLIMIT_NOFILE, 0, uintptr(unsafe.Pointer(&lim)))
	var buf [8]byte
	local := unix.Iovec{Base: &buf[0], Len: 8}
	remote := unix.Iovec{Base: &buf[0], Len: 8}
	call("process_vm_readv parent", unix.SYS_PROCESS_VM_READV, uintptr(parent), uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0)
	call("kcmp self parent", unix.SYS_KCMP, uintptr(self), uintptr(parent), 0, 0, 0)
	call("ptrace attach parent", unix.SYS_PTRACE, unix.PTRACE_ATTACH, uintptr(parent))
	call("setpgid into parent's group", unix.SYS_SETPGID, 0, uintptr(pgid))
	if runtime.GOARCH == "amd64" {
		call("x32 kill parent", x32Bit|unix.SYS_KILL, uintptr(parent), 0)
	}

	// Threads: Go's runtime makes its threads with clone(CLONE_THREAD);
	// each goroutine locked to a thread of its own needs a new one.
	res["threads"] = "ok"
	threads := make(chan int)
	for range 4 {
		go func() {
			runtime.LockOSThread()
			threads <- syscall.Gettid()
			select {} // holds its thread till the probe exits
		}()
	}
	for range 4 {
		if <-threads == int(tid) {
			res["threads"] = "shared the main thread"
		}
	}
	// New processes: a child that is made exits at once (raw calls only).
	newProcess := func(name string, nr uintptr, args ...uintptr) {
		var a [6]uintptr
		copy(a[:], args)
		r, _, errno := syscall.RawSyscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		if errno == 0 && r == 0 {
			syscall.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
		}
		res[name] = result(errno)
	}
	newProcess("clone without CLONE_THREAD", unix.SYS_CLONE, uintptr(syscall.SIGCHLD))
	newProcess("clone CLONE_PARENT", unix.SYS_CLONE, unix.CLONE_PARENT)
	var cloneArgs [11]uint64 // struct clone_args: flags, pidfd, child_tid, parent_tid, exit_signal, ...
	cloneArgs[4] = uint64(syscall.SIGCHLD)
	newProcess("clone3", unix.SYS_CLONE3, uintptr(unsafe.Pointer(&cloneArgs)), unsafe.Sizeof(cloneArgs))
	if runtime.GOARCH == "amd64" {
		newProcess("fork", uintptr(sysFork))
		newProcess("vfork", uintptr(sysVfork))
	}
	// PERF_FLAG_PID_CGROUP (4): pid is a cgroup's descriptor, here one
	// numbered like the parent's pid would be.
	var attr unix.PerfEventAttr
	attr.Size = uint32(unsafe.Sizeof(attr))
	attr.Type = unix.PERF_TYPE_SOFTWARE
	call("unshare user namespace", unix.SYS_UNSHARE, unix.CLONE_NEWUSER)
	call("setns", unix.SYS_SETNS, 0, 0)
	call("perf_event_open cgroup", unix.SYS_PERF_EVENT_OPEN, uintptr(unsafe.Pointer(&attr)), 0, 0, ^uintptr(0), 4)

	// /proc of itself, of its parent (as gorender) and of its sibling.
	errName := func(name string, err error) {
		var errno syscall.Errno
		switch {
		case err == nil:
			res[name] = "ok"
		case errors.As(err, &errno):
			res[name] = unix.ErrnoName(errno)
		default:
			res[name] = err.Error()
		}
	}
	openErr := func(name, path string) {
		f, err := os.Open(path)
		if err == nil {
			if strings.HasSuffix(path, "/fd") {
				_, err = f.Readdirnames(-1)
			}
			f.Close()
		}
		errName(name, err)
	}
	openErr("open /proc/self/mem", "/proc/self/mem")
	openErr("list /proc/self/fd", "/proc/self/fd")
	for target, pid := range map[string]int{"parent": parent, "sibling": sibling} {
		dir := "/proc/" + strconv.Itoa(pid)
		openErr("open /proc/"+target+"/mem", dir+"/mem")
		openErr("open /proc/"+target+"/fd/1", dir+"/fd/1")
		_, err := os.Readlink(dir + "/fd/1")
		errName("readlink /proc/"+target+"/fd/1", err)
	}
	b, _ := json.Marshal(res)
	fmt.Printf("PROBES %s\n", b)
}

// TestRefused: where the kernel refuses the filter, the launcher does not
// execute the program: it exits 126 and says why.
func TestRefused(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRefusedHelper$")
	cmd.Env = append(os.Environ(), refuseEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 126 {
		t.Fatalf("the launcher under a filter refusing seccomp: %v, want exit status 126\n%s", err, out)
	}
	if !strings.Contains(string(out), "the kernel refused the seccomp filter") || strings.Contains(string(out), "EXECUTED") {
		t.Errorf("output %q, want the refusal and no execution", out)
	}
}

// TestRefusedHelper installs a filter that answers seccomp with EINVAL, as
// a runtime that forbids filters does, and executes the launcher, which
// would run echo.
func TestRefusedHelper(t *testing.T) {
	if os.Getenv(refuseEnv) == "" {
		t.Skip("run by TestRefused")
	}
	runtime.LockOSThread()
	prog := []sockFilter{
		{code: bpfLdAbsW, k: offNR},
		{code: bpfJeqK, jf: 1, k: sysSeccomp},
		{code: bpfRetK, k: 0x00050000 | uint32(syscall.EINVAL)},
		{code: bpfRetK, k: retAllow},
	}
	fprog := sockFprog{len: uint16(len(prog)), filter: &prog[0]}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		t.Fatal(errno)
	}
	if _, _, errno := syscall.RawSyscall(sysSeccomp, seccompSetModeFilter, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		t.Fatal(errno)
	}
	path, argv := Command("/bin/echo", []string{"EXECUTED"}, 0)
	t.Fatal(syscall.Exec(path, argv, os.Environ()))
}

// TestNodeUnderTheFilter: Node.js, started through the launcher, still
// makes its threads (glibc tries clone3 first, which answers ENOSYS, then
// clone with CLONE_THREAD): V8's platform workers, libuv's pool (a file
// read) and a Worker. A child process it cannot make.
func TestNodeUnderTheFilter(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	const script = `
const fs = require('fs'), { Worker } = require('worker_threads'), cp = require('child_process');
let spawned;
try { spawned = cp.spawnSync('/bin/true').error?.code ?? 'ran' } catch (e) { spawned = e.code }
fs.readFile('/proc/self/status', 'utf8', (err, status) => {
  const threads = /Threads:\s+(\d+)/.exec(status)[1];
  new Worker('require("worker_threads").parentPort.postMessage(6*7)', { eval: true })
    .on('message', (m) => console.log(JSON.stringify({ read: !err, threads: +threads, worker: m, spawned })));
});`
	path, argv := Command(node, []string{"-e", script}, 0)
	out, err := (&exec.Cmd{Path: path, Args: argv}).CombinedOutput()
	if err != nil {
		t.Fatalf("node under the filter: %v\n%s", err, out)
	}
	var got struct {
		Read    bool
		Threads int
		Worker  int
		Spawned string
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if !got.Read || got.Threads < 5 || got.Worker != 42 {
		t.Errorf("node's threads under the filter: %+v, want a file read, at least 5 threads and the worker's 42", got)
	}
	if got.Spawned != "EPERM" {
		t.Errorf("a child process of node: %q, want EPERM", got.Spawned)
	}
}

// landlockOffEnv makes the test binary hide Landlock (TestWithoutLandlockHelper).
const landlockOffEnv = "CONFINE_TEST_NO_LANDLOCK"

// TestWithoutLandlock: where the kernel has no Landlock, the launcher still
// confines and executes with the filter alone, and Mechanism says so.
func TestWithoutLandlock(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWithoutLandlockHelper$")
	cmd.Env = append(os.Environ(), landlockOffEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the launcher without Landlock: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "MECHANISM seccomp\n") || !strings.Contains(string(out), "Seccomp_filters:\t2") {
		t.Errorf("output %q, want mechanism seccomp and the launcher's filter on the helper's", out)
	}
}

// TestWithoutLandlockHelper answers landlock_create_ruleset with ENOSYS, as
// a kernel without Landlock does, prints Mechanism and executes the
// launcher, which runs grep on its own status.
func TestWithoutLandlockHelper(t *testing.T) {
	if os.Getenv(landlockOffEnv) == "" {
		t.Skip("run by TestWithoutLandlock")
	}
	runtime.LockOSThread()
	prog := []sockFilter{
		{code: bpfLdAbsW, k: offNR},
		{code: bpfJeqK, jf: 1, k: sysLandlockCreateRuleset},
		{code: bpfRetK, k: retENOSYS},
		{code: bpfRetK, k: retAllow},
	}
	fprog := sockFprog{len: uint16(len(prog)), filter: &prog[0]}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		t.Fatal(errno)
	}
	if _, _, errno := syscall.RawSyscall(sysSeccomp, seccompSetModeFilter, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		t.Fatal(errno)
	}
	fmt.Printf("MECHANISM %s\n", Mechanism())
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	path, argv := Command(grep, []string{"Seccomp", "/proc/self/status"}, 0)
	t.Fatal(syscall.Exec(path, argv, os.Environ()))
}
