package nodeengine

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
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
