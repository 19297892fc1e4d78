package jsvm

// The interfaces below are optional: an engine, program or runtime
// implements one where it has what it describes, and the pools and the
// metrics check for it with a type assertion, as database/sql does for
// driver.Pinger or driver.SessionResetter.

import "context"

// BundlePositions is implemented by a Program whose engine transformed the
// bundle before compiling it (a wrapper, a lowering, string builds): the
// positions its errors report (line 1-based, column 0-based in UTF-16 code
// units, as source maps count them) go back to the
// bundle as uploaded, which source maps describe. Without this method
// positions are taken as the bundle's.
type BundlePositions interface {
	// Rewritten reports a program whose code the engine rewrote beyond the
	// CommonJS wrapper: its positions need ReplayRewrites.
	Rewritten() bool
	// BundlePosition takes a position of a program not rewritten back to
	// the bundle; ok false when it cannot.
	BundlePosition(line, column int) (int, int, bool)
	// ReplayRewrites makes the engine's rewrites again on source, the
	// bundle as uploaded, with their own position maps, and returns how the
	// program's positions go back to source and about how much memory that
	// holds.
	ReplayRewrites(source string) (back func(line, column int) (int, int, bool), cost int64, err error)
}

// Reserver is implemented by runtimes that run on executors shared
// between runtimes (the node engine's processes, each of which runs one
// render at a time). Reserve waits until an executor is free for the
// runtime's next Eval, whose request's Runtimes are the runtime and with
// (its dependency bundles' runtimes: the render set, which an executor is
// bound to); Unreserve gives it back. The pools call them around each
// lease of a render's entry runtime, within the queue timeout, so that
// waiting for an executor is queueing (answered 503 when it lasts too
// long), not rendering. An Eval without a reservation reserves by itself.
type Reserver interface {
	Reserve(ctx context.Context, with []Runtime) error
	Unreserve()
}

// Queuer is implemented by runtimes whose renders may wait inside the
// engine after Eval is called (a node process finishing another render:
// RENDERER_NODE_QUEUE_DEPTH). Their Eval calls Request.Started when the
// render starts; until then the wait is the caller's to bound.
type Queuer interface {
	QueuesRenders() bool
}

// ProgramCloser is implemented by programs that hold resources outside
// their runtimes (the node engine's processes keep a bundle's context
// until no runtime of it is left): the pools call Close when they let go
// of the bundle (eviction, shutdown).
type ProgramCloser interface {
	Close()
}

// ProcessReporter is implemented by engines that run renders in processes
// of their own (node), for metrics: it may be called at any time.
type ProcessReporter interface {
	// Processes are the processes running now.
	Processes() []ProcessStats
	// ProcessRestarts counts the processes replaced so far, by reason.
	ProcessRestarts() map[string]uint64
}

// ProcessStats is one engine process.
type ProcessStats struct {
	Slot    int   // its place among the engine's processes, 0 to MaxProcesses-1
	PID     int   // its operating-system process id
	RSS     int64 // resident memory in bytes (0 where unknown)
	Renders int   // renders it ran
	Bundles int   // bundles loaded in it
	Busy    bool  // running a render or a load now
}

// InfoReporter is implemented by engines with facts of their own for /info
// (PROTOCOL.md §9): the node engine's Node.js version, which takes the
// place of the Go version in node_version, and the confinement of its
// processes.
type InfoReporter interface {
	// Info are /info's fields, by name, that the engine sets.
	Info() map[string]string
}

// MemoryReporter is implemented by runtimes whose engine allocates outside
// the Go heap (quickjs), which GOMEMLIMIT and Go's memory statistics do not
// see: MemoryUsage is the bytes the runtime's engine held at the end of its
// last load or render. Unlike the rest of Runtime, it may be called from any
// goroutine at any time (metrics scrapes).
type MemoryReporter interface {
	MemoryUsage() int64
}
