//go:build linux && !amd64 && !arm64

package confine

// No filter for this architecture: Available says so, and the node engine
// does not start (it never runs bundle code unconfined on Linux).
const (
	auditArch = 0
	hasX32    = false

	sysKill, sysTkill, sysTgkill, sysRtSigqueueinfo, sysRtTgsigqueueinfo                       = 0, 0, 0, 0, 0
	sysPidfdOpen, sysPidfdSendSignal, sysPidfdGetfd, sysSetpriority, sysIoprioSet              = 0, 0, 0, 0, 0
	sysSchedSetparam, sysSchedSetscheduler, sysSchedSetaffinity, sysSchedSetattr, sysPrlimit64 = 0, 0, 0, 0, 0
	sysProcessVMReadv, sysProcessVMWritev, sysKcmp, sysProcessMadvise, sysMovePages            = 0, 0, 0, 0, 0
	sysMigratePages, sysGetRobustList, sysPerfEventOpen, sysPtrace, sysSetpgid                 = 0, 0, 0, 0, 0
	sysClone, sysClone3, sysFork, sysVfork, sysUnshare, sysSetns                               = 0, 0, 0, 0, 0, 0
	sysSeccomp, sysCloseRange                                                                  = 0, 0
)
