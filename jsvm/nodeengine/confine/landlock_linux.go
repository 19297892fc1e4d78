package confine

import (
	"syscall"
	"unsafe"
)

// Landlock puts each executor in a domain of its own, and the kernel lets a
// process in a domain reach another process by ptrace's access check only
// if that process is in the same domain or one nested in it: gorender (in
// none) and every other executor (each in its own) are out of reach. That
// check guards /proc/<pid>/mem, fd, fdinfo, environ, maps, stack and
// syscall, which the same uid opens otherwise (where Yama is off), and it
// holds for root too. The executor's own /proc/self is its own domain's.
//
// The domain restricts the file system only in what Node never does: it
// handles making character and block devices and grants them nowhere.
// From ABI 6 (Linux 6.12) it also scopes signals and abstract Unix sockets
// to the domain, behind the filter's own signal rules.

const (
	sysLandlockCreateRuleset = 444 // the same number on amd64 and arm64
	sysLandlockRestrictSelf  = 446

	landlockCreateRulesetVersion = 1 // LANDLOCK_CREATE_RULESET_VERSION
	landlockAccessFSMakeChar     = 1 << 6
	landlockAccessFSMakeBlock    = 1 << 11
	landlockScopeAbstractUnix    = 1 << 0 // LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	landlockScopeSignal          = 1 << 1 // LANDLOCK_SCOPE_SIGNAL
)

// landlockRulesetAttr is struct landlock_ruleset_attr as of ABI 6; older
// kernels are given its first field only.
type landlockRulesetAttr struct {
	handledAccessFS  uint64
	handledAccessNet uint64
	scoped           uint64
}

// landlockABI is the kernel's Landlock ABI version, 0 where it has none
// (before Linux 5.13, disabled at boot, or a runtime's filter refuses it).
func landlockABI() int {
	v, _, errno := syscall.RawSyscall(sysLandlockCreateRuleset, 0, 0, landlockCreateRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// restrictSelf puts the calling thread (and what it executes) in a new
// Landlock domain; no_new_privs must be set. Raw system calls only: it
// runs after the data limit.
func restrictSelf(abi int) error {
	attr := landlockRulesetAttr{handledAccessFS: landlockAccessFSMakeChar | landlockAccessFSMakeBlock}
	size := unsafe.Sizeof(attr.handledAccessFS)
	if abi >= 6 {
		attr.scoped = landlockScopeAbstractUnix | landlockScopeSignal
		size = unsafe.Sizeof(attr)
	}
	fd, _, errno := syscall.RawSyscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return errno
	}
	_, _, errno = syscall.RawSyscall(sysLandlockRestrictSelf, fd, 0, 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
