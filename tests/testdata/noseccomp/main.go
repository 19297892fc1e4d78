// Command noseccomp runs a program where the kernel refuses seccomp
// filters, as some locked-down runtimes do: it installs a filter (the one
// filter it is allowed) that answers seccomp with EINVAL, and executes its
// arguments. Linux on amd64 only: the test that builds it skips elsewhere.
package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

type sockFilter struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

type sockFprog struct {
	len    uint16
	filter *sockFilter
}

const sysSeccomp = 317 // amd64

func main() {
	// The filter is the thread's; execve from it keeps it.
	runtime.LockOSThread()
	prog := []sockFilter{
		{code: 0x20, k: 0},                                // load the call's number
		{code: 0x15, jf: 1, k: sysSeccomp},                // seccomp?
		{code: 0x06, k: 0x50000 | uint32(syscall.EINVAL)}, // EINVAL
		{code: 0x06, k: 0x7fff0000},                       // else allow
	}
	fprog := sockFprog{len: uint16(len(prog)), filter: &prog[0]}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, 38 /* PR_SET_NO_NEW_PRIVS */, 1, 0, 0, 0, 0); errno != 0 {
		fail(errno)
	}
	if _, _, errno := syscall.RawSyscall(sysSeccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		fail(errno)
	}
	fail(syscall.Exec(os.Args[1], os.Args[1:], os.Environ()))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "noseccomp:", err)
	os.Exit(1)
}
