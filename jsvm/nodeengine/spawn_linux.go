package nodeengine

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gorender/gorender/jsvm/nodeengine/confine"
)

// sysProcAttr puts each executor in its own process group (a terminal's
// Ctrl-C reaches gorender, which stops them in order) and has the kernel
// kill it if gorender dies without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// spawn starts cmd from one OS thread that lives as long as gorender: the
// parent-death signal fires when the thread that forked the child ends,
// not the process, and Go may end threads it no longer needs.
func spawn(cmd *exec.Cmd) error {
	req := spawnRequest{cmd: cmd, done: make(chan error, 1)}
	spawner().requests <- req
	return <-req.done
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// spawnerThread is the thread that forks the executors, and the scheduling
// policy they inherit from it.
type spawnerThread struct {
	requests chan spawnRequest
	policy   string
}

// The executors run as SCHED_BATCH, every thread of theirs: they inherit it
// from the spawner's thread, set before the first fork. A render is CPU-bound
// batch work, and the kernel lets a batch task woken by a frame wait for the
// running task to block or use up its slice instead of preempting it. Where
// gorender and its executors share CPUs (one CPU: one executor, 4 requests in
// flight), a render frame no longer preempts gorender in the middle of its
// wake-up, so gorender reads and writes what is ready first and the process
// switches per render fall: the CPU per request fell by 14-15% for hello and
// the small page, alternating the policy within one run (bench/README.md).
// The policy changes nothing else (nice, CPU shares, deadlines); where the
// kernel refuses it, the executors run with gorender's own.
var spawner = sync.OnceValue(func() *spawnerThread {
	s := &spawnerThread{requests: make(chan spawnRequest)}
	ready := make(chan struct{})
	go func() {
		// Never unlocked: the goroutine, and with it the thread, never ends.
		runtime.LockOSThread()
		s.policy = "batch"
		if err := setThreadBatch(); err != nil {
			s.policy = "gorender's (SCHED_BATCH refused: " + err.Error() + ")"
		}
		close(ready)
		for req := range s.requests {
			req.done <- req.cmd.Start()
		}
	}()
	<-ready
	return s
})

// schedulingPolicy names the executors' scheduling policy, for the log.
func schedulingPolicy() string { return spawner().policy }

// setThreadBatch gives the calling thread SCHED_BATCH (sched_setscheduler
// with pid 0 is the calling thread on Linux), which needs no privilege.
func setThreadBatch() error {
	const schedBatch = 3 // SCHED_BATCH
	var param struct{ priority int32 }
	if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, 0, schedBatch, uintptr(unsafe.Pointer(&param))); errno != 0 {
		return errno
	}
	return nil
}

// executorCommand starts node with args confined (package confine): its
// data segment bounded to dataLimit bytes when > 0 (RLIMIT_DATA: the V8
// heap, buffers and Node's other native memory), the OOM killer's first
// choice, holding no descriptor but its standard streams and pipes, and
// unable to reach another process, gorender's above all. The confinement is
// in place before Node.js runs any code.
func executorCommand(node string, args []string, dataLimit int64) *exec.Cmd {
	path, argv := confine.Command(node, args, dataLimit)
	return &exec.Cmd{Path: path, Args: argv}
}

// confinement names what confines the executors, for the log and /info; an
// error when this build cannot confine them on this machine.
func confinement() (string, error) {
	if err := confine.Available(); err != nil {
		return "", fmt.Errorf("node engine: %w; gorender runs no bundle code in a Node.js process that could signal gorender: use RENDERER_JS_ENGINE=goja or quickjs", err)
	}
	return confine.Mechanism(), nil
}

// undumpable makes gorender's /proc/<pid> files root's and its memory out
// of reach of ptrace's access check for any process without
// CAP_SYS_PTRACE: an executor of the same uid can no longer open its mem,
// fd, environ or maps nor write its oom_score_adj (Landlock's domain keeps
// them out of reach too where the kernel has it; this holds where it does
// not). execve resets it, so the executors are not affected. What it
// costs: gorender leaves no core dump, and a debugger or a tool reading
// /proc/<pid>/fd, environ or smaps of gorender needs root or
// CAP_SYS_PTRACE; /proc/<pid>/status, stat, statm and cmdline stay
// readable by all, and gorender reads its own /proc/<pid> (but io, which
// it does not read: the metrics' process collector reads stat, fd and
// limits) and its executors' /proc/<pid> as before.
func undumpable() error {
	const prSetDumpable = 4 // PR_SET_DUMPABLE
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return fmt.Errorf("node engine: prctl(PR_SET_DUMPABLE, 0): %w", errno)
	}
	return nil
}
