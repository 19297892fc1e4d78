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
	spawner() <- req
	return <-req.done
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var spawner = sync.OnceValue(func() chan spawnRequest {
	ch := make(chan spawnRequest)
	go func() {
		// Never unlocked: the goroutine, and with it the thread, never ends.
		runtime.LockOSThread()
		for req := range ch {
			req.done <- req.cmd.Start()
		}
	}()
	return ch
})

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
