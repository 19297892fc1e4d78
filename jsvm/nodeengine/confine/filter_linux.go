package confine

// The seccomp filter of an executor: every system call that takes another
// process as its target (a pid, a process group, a user's processes) is
// refused with EPERM unless the target is the executor itself, so that
// bundle code, whatever it reaches inside Node.js, can neither signal,
// renice, reschedule, limit, read, write nor trace gorender or another
// executor; ptrace and the calls that take a pidfd or join another process
// group are refused outright. It creates no process either: clone only
// makes threads (CLONE_THREAD), fork and vfork are refused, and clone3,
// whose flags sit in memory a filter cannot read, answers ENOSYS, which
// makes glibc fall back to clone for its threads. A new process could be
// made gorender's child (CLONE_PARENT: zombies gorender never reaps, until
// its pids cgroup is full) or leave the executor's process group and
// outlive gorender (fork, then setsid); Node's permission model already
// refuses child_process, so Node needs none. Nor does it need unshare or
// setns, refused. perf_event_open is refused:
// with PERF_FLAG_PID_CGROUP its pid is a cgroup descriptor the filter
// cannot tell from the executor's pid, and Node never calls it. Every
// other system call passes: Node's permission model and the process's
// limits confine the rest. The filter holds the executor's pid, which
// execve keeps.

// sockFilter is struct sock_filter: one classic BPF instruction.
type sockFilter struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

const (
	bpfLdAbsW = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK   = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK   = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJsetK  = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfRetK   = 0x06 // BPF_RET | BPF_K

	retAllow    = 0x7fff0000        // SECCOMP_RET_ALLOW
	retErrno    = 0x00050000        // SECCOMP_RET_ERRNO, | the errno
	retEPERM    = retErrno | 1      // EPERM
	retENOSYS   = retErrno | 38     // ENOSYS
	x32Bit      = 0x40000000        // __X32_SYSCALL_BIT (amd64)
	offNR       = 0                 // struct seccomp_data: nr
	offArch     = 4                 //                      arch
	offArgs     = 16                //                      args[6], 8 bytes each
	anyValue    = ^uint32(0)        // in a rule: no check of that argument
	self        = uint32(1<<32 - 2) // in a rule: the executor's pid
	cloneThread = 0x00010000        // CLONE_THREAD
	// notOnThisArch is the number of a call this architecture lacks
	// (fork and vfork on arm64): no rule.
	notOnThisArch = ^uint32(0)
)

// rule is what one system call may do: each of its first arguments (their
// low 32 bits, a pid_t or an int, which is all the kernel reads) must be one
// of the values listed for it, and its first argument must have a bit of
// setInArg0 set (BPF_JSET); a rule with neither refuses the call: it returns refusal,
// or EPERM if that is 0.
type rule struct {
	nr        uint32
	args      [][]uint32
	setInArg0 uint32
	refusal   uint32
}

// Targets as the rules name them: 0 is the caller (its process, thread or
// process group, which is itself alone: setpgid is refused and gorender
// gives every executor a group of its own).
var (
	selfOrZero = []uint32{self, 0}
	selfOnly   = []uint32{self}
)

// rules are the executor's rules; Node.js, V8 and libuv target only the
// process itself (0, its pid, tgkill of its own threads), which they keep.
var rules = []rule{
	{nr: sysKill, args: [][]uint32{selfOrZero}},
	{nr: sysTgkill, args: [][]uint32{selfOnly}},
	{nr: sysRtSigqueueinfo, args: [][]uint32{selfOnly}},
	{nr: sysRtTgsigqueueinfo, args: [][]uint32{selfOnly}},
	{nr: sysPidfdOpen, args: [][]uint32{selfOnly}},
	// which: PRIO_PROCESS or PRIO_PGRP, never PRIO_USER (every process of
	// the uid, gorender's among them); who: itself.
	{nr: sysSetpriority, args: [][]uint32{{0, 1}, selfOrZero}},
	// which: IOPRIO_WHO_PROCESS or IOPRIO_WHO_PGRP, never IOPRIO_WHO_USER.
	{nr: sysIoprioSet, args: [][]uint32{{1, 2}, selfOrZero}},
	{nr: sysSchedSetparam, args: [][]uint32{selfOrZero}},
	{nr: sysSchedSetscheduler, args: [][]uint32{selfOrZero}},
	{nr: sysSchedSetaffinity, args: [][]uint32{selfOrZero}},
	{nr: sysSchedSetattr, args: [][]uint32{selfOrZero}},
	{nr: sysPrlimit64, args: [][]uint32{selfOrZero}},
	{nr: sysProcessVMReadv, args: [][]uint32{selfOnly}},
	{nr: sysProcessVMWritev, args: [][]uint32{selfOnly}},
	{nr: sysKcmp, args: [][]uint32{selfOnly, selfOnly}},
	{nr: sysMovePages, args: [][]uint32{selfOrZero}},
	{nr: sysMigratePages, args: [][]uint32{selfOrZero}},
	{nr: sysGetRobustList, args: [][]uint32{selfOrZero}},
	// Threads only (clone's flags are its first argument on amd64 and
	// arm64 alike).
	{nr: sysClone, setInArg0: cloneThread},
	{nr: sysClone3, refusal: retENOSYS},
	{nr: sysFork},
	{nr: sysVfork},
	{nr: sysPerfEventOpen},
	// No new namespaces, and no joining another's: a user namespace of its
	// own gives a process capabilities there, a surface Node never needs.
	{nr: sysUnshare},
	{nr: sysSetns},
	// Refused: a thread id the filter cannot tell from another process's
	// pid (tkill; Node uses tgkill), a pidfd of any process (one opened as
	// /proc/<pid>), tracing, and leaving its own process group.
	{nr: sysTkill},
	{nr: sysPidfdSendSignal},
	{nr: sysPidfdGetfd},
	{nr: sysProcessMadvise},
	{nr: sysPtrace},
	{nr: sysSetpgid},
}

// filter is the BPF program of rules for the process pid.
func filter(pid int) []sockFilter {
	var p []sockFilter
	ld := func(off uint32) { p = append(p, sockFilter{code: bpfLdAbsW, k: off}) }
	ret := func(v uint32) { p = append(p, sockFilter{code: bpfRetK, k: v}) }
	// Another ABI (i386 on amd64, aarch32 on arm64) numbers its calls
	// differently: refuse all of them, as x32's on amd64.
	ld(offArch)
	p = append(p, sockFilter{code: bpfJeqK, jt: 1, k: auditArch})
	ret(retEPERM)
	ld(offNR)
	if hasX32 {
		p = append(p, sockFilter{code: bpfJgeK, jf: 1, k: x32Bit})
		ret(retEPERM)
	}
	for _, r := range rules {
		if r.nr == notOnThisArch {
			continue
		}
		body := ruleBody(r, uint32(pid))
		// Not this call: skip its body, which ends in a return.
		p = append(p, sockFilter{code: bpfJeqK, jf: uint8(len(body)), k: r.nr})
		p = append(p, body...)
	}
	ret(retAllow)
	return p
}

// ruleBody checks r's arguments, then returns: EPERM when one is not among
// its values, else allow.
func ruleBody(r rule, pid uint32) []sockFilter {
	var b []sockFilter
	for i, values := range r.args {
		if len(values) == 1 && values[0] == anyValue {
			continue
		}
		b = append(b, sockFilter{code: bpfLdAbsW, k: offArgs + 8*uint32(i)}) // low half, little-endian
		for j, v := range values {
			if v == self {
				v = pid
			}
			// A match jumps past the remaining values and the EPERM.
			b = append(b, sockFilter{code: bpfJeqK, jt: uint8(len(values) - j), k: v})
		}
		b = append(b, sockFilter{code: bpfRetK, k: retEPERM})
	}
	if r.setInArg0 != 0 {
		b = append(b, sockFilter{code: bpfLdAbsW, k: offArgs})
		// A bit set: jump past the EPERM.
		b = append(b, sockFilter{code: bpfJsetK, jt: 1, k: r.setInArg0})
		b = append(b, sockFilter{code: bpfRetK, k: retEPERM})
	}
	if len(r.args) == 0 && r.setInArg0 == 0 {
		if r.refusal != 0 {
			return append(b, sockFilter{code: bpfRetK, k: r.refusal})
		}
		return append(b, sockFilter{code: bpfRetK, k: retEPERM})
	}
	return append(b, sockFilter{code: bpfRetK, k: retAllow})
}
