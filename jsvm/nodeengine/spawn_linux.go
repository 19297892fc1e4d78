package nodeengine

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
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

// confineProcess bounds a started executor before it runs any bundle code.
// Its data segment (RLIMIT_DATA: the V8 heap, buffers and Node's other
// native memory), when dataLimit > 0: an allocation past it fails in the
// process (a RangeError for a Buffer or an ArrayBuffer, as Node throws past
// its own limits; the end of the process, answered like a timeout, when V8's
// heap cannot grow). And the kernel's OOM killer takes it before gorender
// (oom_score_adj 1000): a container out of memory loses a Node.js process,
// which is replaced, not the server.
func confineProcess(pid int, dataLimit int64) error {
	if dataLimit > 0 {
		lim := syscall.Rlimit{Cur: uint64(dataLimit), Max: uint64(dataLimit)}
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_DATA, uintptr(unsafe.Pointer(&lim)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("limit its data segment (prlimit RLIMIT_DATA): %w", errno)
		}
	}
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid), []byte("1000"), 0); err != nil {
		return fmt.Errorf("make it the OOM killer's first choice: %w", err)
	}
	return nil
}
