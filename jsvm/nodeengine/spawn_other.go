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

// executorCommand starts node with args. Outside Linux nothing confines
// the process beyond Node's permission model and the V8 heap limit: no data
// limit, no system-call filter.
func executorCommand(node string, args []string, dataLimit int64) *exec.Cmd {
	return exec.Command(node, args...)
}

// confinement names what confines the executors, for the log and /info.
func confinement() (string, error) {
	return "none (the seccomp filter is Linux's)", nil
}

// undumpable does nothing outside Linux.
func undumpable() error { return nil }
