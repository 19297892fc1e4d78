//go:build !linux

package nodeengine

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts each executor in its own process group. Only Linux
// kills an executor whose gorender died without stopping it; elsewhere
// the executor exits when its input pipe closes, once it is idle.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func spawn(cmd *exec.Cmd) error { return cmd.Start() }

// schedulingPolicy names the executors' scheduling policy, for the log:
// gorender's own outside Linux.
func schedulingPolicy() string { return "gorender's" }

// confineProcess sets no limit of its own outside Linux: the V8 heap limit
// still applies.
func confineProcess(pid int, dataLimit int64) error { return nil }
