package confine

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// Mechanism names the confinement Command applies on this kernel, for logs
// and /info: the seccomp filter always, and a Landlock domain where the
// kernel has Landlock (landlock_linux.go).
func Mechanism() string {
	if landlockABI() > 0 {
		return "seccomp+landlock"
	}
	return "seccomp"
}

// Command is the path and argv that start Node.js (node, with args) as a
// confined executor: its data segment limited to dataLimit bytes (RLIMIT_DATA,
// when > 0), first in line for the OOM killer, holding only descriptors 0-4,
// in a Landlock domain of its own where the kernel has Landlock
// (landlock_linux.go), under the seccomp filter (filter_linux.go). The process exits with status
// 126 and a line on stderr if any step fails: it never runs unconfined.
func Command(node string, args []string, dataLimit int64) (path string, argv []string) {
	// /proc/self/exe is the binary gorender runs, even if a deploy has
	// replaced or removed its file since.
	return "/proc/self/exe", append([]string{launcherArg0, strconv.FormatInt(dataLimit, 10), node}, args...)
}

// Available reports whether this build can confine executors; an error says
// why not (no filter for the architecture).
func Available() error {
	if auditArch == 0 {
		return fmt.Errorf("gorender has no seccomp filter for %s", runtime.GOARCH)
	}
	return nil
}

func init() {
	if len(os.Args) < 3 || os.Args[0] != launcherArg0 {
		return
	}
	err := launch(os.Args[1], os.Args[2], os.Args[2:])
	fmt.Fprintf(os.Stderr, "gorender: confine the Node.js process: %v\n", err)
	os.Exit(126)
}

// launch confines this process and executes node in it; it returns only on
// failure. Every step that may allocate comes before the data limit, which
// the launcher itself (a Go program, with the race detector's shadow
// memory) may already exceed: after it, only raw system calls.
func launch(dataLimitArg, node string, argv []string) error {
	// The filter and no_new_privs are the calling thread's; execve keeps them.
	runtime.LockOSThread()
	if err := Available(); err != nil {
		return err
	}
	dataLimit, err := strconv.ParseInt(dataLimitArg, 10, 64)
	if err != nil {
		return fmt.Errorf("data limit %q: %w", dataLimitArg, err)
	}
	prog := filter(os.Getpid())
	fprog := sockFprog{len: uint16(len(prog)), filter: &prog[0]}
	nodePtr, err := syscall.BytePtrFromString(node)
	if err != nil {
		return err
	}
	argvPtrs, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envPtrs, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return err
	}
	// The OOM killer takes an executor before gorender: a container out of
	// memory loses a Node.js process, which is replaced, not the server.
	if err := os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0); err != nil {
		return fmt.Errorf("make it the OOM killer's first choice: %w", err)
	}
	if err := closeOnExecAbove(4); err != nil {
		return fmt.Errorf("close inherited descriptors: %w", err)
	}
	if dataLimit > 0 {
		// RLIMIT_DATA bounds the V8 heap, buffers and Node's other native
		// memory: an allocation past it fails in the process (a RangeError
		// for a Buffer, the end of the process when V8's heap cannot grow).
		lim := syscall.Rlimit{Cur: uint64(dataLimit), Max: uint64(dataLimit)}
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, syscall.RLIMIT_DATA, uintptr(unsafe.Pointer(&lim)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("limit its data segment (RLIMIT_DATA): %w", errno)
		}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	if abi := landlockABI(); abi > 0 {
		if err := restrictSelf(abi); err != nil {
			return fmt.Errorf("landlock_restrict_self (Landlock ABI %d): %w", abi, err)
		}
	}
	if _, _, errno := syscall.RawSyscall(sysSeccomp, seccompSetModeFilter, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("the kernel refused the seccomp filter (seccomp(SECCOMP_SET_MODE_FILTER): %w); gorender runs no bundle code in a Node.js process that could signal or renice gorender: run it where seccomp is allowed, or use RENDERER_JS_ENGINE=goja or quickjs", errno)
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(nodePtr)), uintptr(unsafe.Pointer(&argvPtrs[0])), uintptr(unsafe.Pointer(&envPtrs[0])))
	return fmt.Errorf("exec %s: %w", node, errno)
}

const (
	prSetNoNewPrivs      = 38 // PR_SET_NO_NEW_PRIVS
	seccompSetModeFilter = 1  // SECCOMP_SET_MODE_FILTER
	closeRangeCloexec    = 4  // CLOSE_RANGE_CLOEXEC
)

// closeOnExecAbove marks every descriptor above fd close-on-exec: the
// executor gets its standard streams and its two pipes (3 and 4), not what
// gorender inherited without close-on-exec (a socket, a file of the
// process that started it). Marking rather than closing leaves the
// launcher's own descriptors working until execve.
func closeOnExecAbove(fd int) error {
	if _, _, errno := syscall.RawSyscall(sysCloseRange, uintptr(fd+1), uintptr(^uint32(0)), closeRangeCloexec); errno == 0 {
		return nil
	}
	// Kernels before 5.11 lack CLOSE_RANGE_CLOEXEC: list the descriptors.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > fd {
			syscall.CloseOnExec(n) // the directory's own fd may be gone: no error to check
		}
	}
	return nil
}

// sockFprog is struct sock_fprog.
type sockFprog struct {
	len    uint16
	filter *sockFilter
}
