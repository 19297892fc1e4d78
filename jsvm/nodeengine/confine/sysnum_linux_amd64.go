package confine

// The system calls of linux/amd64 the filter names (arch/x86/entry/syscalls/syscall_64.tbl).
const (
	auditArch = 0xc000003e // AUDIT_ARCH_X86_64
	hasX32    = true

	sysKill              = 62
	sysTkill             = 200
	sysTgkill            = 234
	sysRtSigqueueinfo    = 129
	sysRtTgsigqueueinfo  = 297
	sysPidfdOpen         = 434
	sysPidfdSendSignal   = 424
	sysPidfdGetfd        = 438
	sysSetpriority       = 141
	sysIoprioSet         = 251
	sysSchedSetparam     = 142
	sysSchedSetscheduler = 144
	sysSchedSetaffinity  = 203
	sysSchedSetattr      = 314
	sysPrlimit64         = 302
	sysProcessVMReadv    = 310
	sysProcessVMWritev   = 311
	sysKcmp              = 312
	sysProcessMadvise    = 440
	sysMovePages         = 279
	sysMigratePages      = 256
	sysGetRobustList     = 274
	sysPerfEventOpen     = 298
	sysPtrace            = 101
	sysSetpgid           = 109
	sysClone             = 56
	sysClone3            = 435
	sysFork              = 57
	sysVfork             = 58
	sysUnshare           = 272
	sysSetns             = 308
	sysSeccomp           = 317
	sysCloseRange        = 436
)
