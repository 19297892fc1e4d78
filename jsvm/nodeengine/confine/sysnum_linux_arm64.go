package confine

// The system calls of linux/arm64 the filter names (include/uapi/asm-generic/unistd.h).
const (
	auditArch = 0xc00000b7 // AUDIT_ARCH_AARCH64
	hasX32    = false

	sysKill              = 129
	sysTkill             = 130
	sysTgkill            = 131
	sysRtSigqueueinfo    = 138
	sysRtTgsigqueueinfo  = 240
	sysPidfdOpen         = 434
	sysPidfdSendSignal   = 424
	sysPidfdGetfd        = 438
	sysSetpriority       = 140
	sysIoprioSet         = 30
	sysSchedSetparam     = 118
	sysSchedSetscheduler = 119
	sysSchedSetaffinity  = 122
	sysSchedSetattr      = 274
	sysPrlimit64         = 261
	sysProcessVMReadv    = 270
	sysProcessVMWritev   = 271
	sysKcmp              = 272
	sysProcessMadvise    = 440
	sysMovePages         = 239
	sysMigratePages      = 238
	sysGetRobustList     = 100
	sysPerfEventOpen     = 241
	sysPtrace            = 117
	sysSetpgid           = 154
	sysClone             = 220
	sysClone3            = 435
	sysFork              = notOnThisArch
	sysVfork             = notOnThisArch
	sysUnshare           = 97
	sysSetns             = 268
	sysSeccomp           = 277
	sysCloseRange        = 436
)
