// Package nodeengine is gorender's node engine (RENDERER_JS_ENGINE=node):
// renders run in Node.js processes that gorender starts and supervises,
// each running the executor program embedded here (executor/*.js) and
// talking to gorender in frames over two pipes (frame.go).
//
// A process belongs to one isolation group for its whole life (group.go):
// the bundles of the render set that first used it, each in a vm context of
// its own, and runs only that set's renders. A group has up to
// config.Processes processes (RENDERER_WORKERS_COUNT), all groups together
// config.MaxProcesses (RENDERER_NODE_MAX_PROCESSES). A process runs one render at a time,
// so a render can be stopped by killing its process without touching any
// other; when none is idle, renders may queue in a busy one, their frames
// written ahead (config.Depth), so that it starts the next without waiting
// for gorender. The runtimes worker pools per bundle are leases: a runtime of a
// bundle holds no process until it is reserved for a render
// (jsvm.Reserver), which the pools do within the queue timeout.
package nodeengine

import (
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/jsenv"
)

// The executor is one program split along its sections into files,
// numbered in the order they are concatenated (host, bundles, render,
// source maps, Node environment, confined fs): Node runs them as one file,
// executor.js in the engine's private directory.
//
//go:embed executor/*.js
var executorFiles embed.FS

var executorSource = concatExecutor()

// concatExecutor joins the executor's files in their names' order.
func concatExecutor() string {
	entries, err := executorFiles.ReadDir("executor")
	if err != nil {
		panic(fmt.Errorf("node engine: the embedded executor: %w", err)) // embedded at build time
	}
	var b strings.Builder
	for _, e := range entries { // ReadDir sorts by name
		text, err := executorFiles.ReadFile("executor/" + e.Name())
		if err != nil {
			panic(fmt.Errorf("node engine: the embedded executor: %w", err))
		}
		b.Write(text)
	}
	return b.String()
}

// config is what the engine runs with: jsvm.Options's, flattened.
type config struct {
	NodePath string
	// Processes is how many processes run from the start, and the most a
	// group has; MaxProcesses the most all groups have (group.go).
	Processes, MaxProcesses int
	// Depth is how many renders a process holds at once when none is idle:
	// the one it runs and Depth-1 queued in its pipe behind it (1: none).
	Depth int
	// LoadTimeout bounds one bundle's evaluation in one process, whoever
	// waits for it: a bundle that never finishes evaluating kills the
	// process, not the engine (0: jsvm.DefaultNodeLoadTimeout).
	LoadTimeout                   time.Duration
	HeapLimit                     int64
	SemiSpace                     int64 // V8's --max-semi-space-size in bytes (0: V8's default)
	ReadRoots                     []string
	MaxRendersPerProcess          int
	RestartInterval, RestartDelay time.Duration
	// SourceMapLimit is the memory for parsed source maps of getStackTrace,
	// shared equally by the processes (0: not mapped).
	SourceMapLimit int64
	// MaxResult bounds a result's bytes: a longer one is dropped as it
	// arrives and answered as too large (0: maxFrameBody).
	MaxResult int64
	// OnCrash is jsvm.NodeOptions.OnCrash (nil: none).
	OnCrash func(slot, pid int, reason, exit string)
	// The environment, as for the other engines.
	StubTimers, SupportModules, ReplayAsyncLogs bool
	// ConsoleMaxLines and ConsoleMaxBytes bound a render's console history
	// (jsvm.Options.ConsoleBounds: 0 none).
	ConsoleMaxLines, ConsoleMaxBytes int64
	// Environ is the processes' environment (jsvm.Options.ProcessEnv: no
	// RENDERER_PASSWORD).
	Environ []string
	Logger  *slog.Logger
}

// resultLimit is the bound of a result's bytes (frameReader).
func (e *Engine) resultLimit() int64 {
	if e.cfg.MaxResult > 0 {
		return e.cfg.MaxResult
	}
	return maxFrameBody
}

// realTimers is the timer rule every engine follows (jsvm.Options.RealTimers).
func (c config) realTimers() bool { return c.SupportModules || !c.StubTimers }

// Engine runs renders in supervised Node.js processes.
type Engine struct {
	cfg      config
	log      *slog.Logger
	node     nodeBinary
	dir      *workDir // holds executor.js; removed by Close
	executor string
	childEnv []string

	// confinement names what confines the processes (spawn_linux.go).
	confinement string

	nextRender atomic.Uint64

	mu      sync.Mutex
	closed  bool
	procs   []*proc // by slot; nil while a slot's process starts
	idle    []*proc
	waiters []*waiter
	// slotNext is the group the slot's next process starts for (nil:
	// fresh), and slotLoaded the bundles of it the slot's last process had
	// loaded: its replacement loads them before it takes work. slotRunning
	// says a supervisor runs the slot (group.go).
	slotNext    []*group
	slotLoaded  [][]*program
	slotRunning []bool
	groups      map[string]*group // by key
	restarts    map[string]uint64 // processes replaced, by reason
	// spreadHeld says the spreader (spread.go) left a bundle unspread
	// because no render may be held up: a process going idle wakes it.
	spreadHeld  bool
	spreadWake  chan struct{} // wakes the spreader; capacity 1
	supervisors sync.WaitGroup
	done        chan struct{} // closed by Close
	spawned     atomic.Int64  // processes started, for tests and logs
	loadsSent   atomic.Int64  // bundles sent to a process to evaluate, for tests
}

// Name is the engine's name (RENDERER_JS_ENGINE=node).
const Name = "node"

// New makes the node engine of opts (opts.Node, the environment, the
// logger): see start.
func New(opts jsvm.Options) (*Engine, error) {
	env := make([]string, 0, len(opts.Environ)+1)
	for _, kv := range opts.ProcessEnv() {
		env = append(env, kv[0]+"="+kv[1])
	}
	consoleLines, consoleBytes := opts.ConsoleBounds()
	return start(config{
		NodePath:             opts.Node.Path,
		Processes:            opts.Node.Processes,
		MaxProcesses:         opts.Node.MaxProcesses,
		Depth:                opts.Node.QueueDepth,
		LoadTimeout:          opts.Node.LoadTimeout,
		HeapLimit:            opts.Node.HeapLimit,
		SemiSpace:            opts.Node.SemiSpace,
		ReadRoots:            opts.Node.ReadRoots,
		MaxRendersPerProcess: opts.Node.MaxRenders,
		RestartInterval:      opts.Node.RestartInterval,
		RestartDelay:         opts.Node.RestartDelay,
		SourceMapLimit:       opts.Node.SourceMapLimit,
		MaxResult:            opts.Node.MaxResult,
		OnCrash:              opts.Node.OnCrash,
		StubTimers:           opts.StubTimers,
		SupportModules:       opts.SupportModules,
		ReplayAsyncLogs:      opts.ReplayAsyncLogs,
		ConsoleMaxLines:      consoleLines,
		ConsoleMaxBytes:      consoleBytes,
		Environ:              env,
		Logger:               opts.Logger,
	})
}

// start finds Node.js, writes the executor, starts the processes and waits
// until each has started or failed once: a Node.js that cannot run the
// executor fails gorender's start, not its first render, and the first
// bundles load into every process. Slots whose start failed keep retrying.
func start(cfg config) (*Engine, error) {
	if cfg.Processes < 1 {
		cfg.Processes = 1
	}
	if cfg.MaxProcesses == 0 {
		cfg.MaxProcesses = 2 * cfg.Processes
	}
	cfg.MaxProcesses = max(cfg.MaxProcesses, cfg.Processes)
	if cfg.Depth < 1 {
		cfg.Depth = 1
	}
	if cfg.LoadTimeout <= 0 {
		cfg.LoadTimeout = jsvm.DefaultNodeLoadTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	node, err := findNode(cfg.NodePath)
	if err != nil {
		return nil, err
	}
	confined, err := confinement()
	if err != nil {
		return nil, err
	}
	if err := undumpable(); err != nil {
		return nil, err
	}
	dir, err := newWorkDir(cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("node engine: %w", err)
	}
	executor := filepath.Join(dir.path, "executor.js")
	// The executor, with the CommonJS loader every engine shares.
	if err := os.WriteFile(executor, []byte(executorSource+"\n"+jsenv.NodeModules), 0o400); err != nil {
		dir.remove()
		return nil, fmt.Errorf("node engine: write the executor: %w", err)
	}
	e := &Engine{
		cfg:         cfg,
		log:         cfg.Logger,
		node:        node,
		confinement: confined,
		dir:         dir,
		executor:    executor,
		childEnv:    childEnv(cfg.Environ),
		procs:       make([]*proc, cfg.MaxProcesses),
		slotNext:    make([]*group, cfg.MaxProcesses),
		slotLoaded:  make([][]*program, cfg.MaxProcesses),
		slotRunning: make([]bool, cfg.MaxProcesses),
		groups:      make(map[string]*group),
		restarts:    make(map[string]uint64, len(restartReasons)),
		spreadWake:  make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	// Every reason is counted from 0, so that the first restart for one
	// shows as an increase (an alert on crashes sees the first one).
	for _, reason := range restartReasons {
		e.restarts[reason] = 0
	}
	e.supervisors.Add(1)
	go e.spread()
	first := make(chan error, cfg.Processes)
	e.mu.Lock()
	for slot := range cfg.Processes {
		e.slotRunning[slot] = true
		e.supervisors.Add(1)
		go e.supervise(slot, first)
	}
	e.mu.Unlock()
	if cfg.RestartInterval > 0 {
		e.supervisors.Add(1)
		go e.restartOnSchedule()
	}
	var errs []error
	for range cfg.Processes {
		if err := <-first; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == cfg.Processes {
		e.Close()
		return nil, fmt.Errorf("node engine: no process started: %w", errors.Join(errs...))
	}
	e.log.Info("node engine started", "node", node.path, "node_version", node.version, "processes", cfg.Processes, "max_processes", cfg.MaxProcesses,
		"failed_to_start", len(errs), "heap_limit_mib", e.heapLimitMiB(), "read_roots", cfg.ReadRoots,
		"scheduling", schedulingPolicy(), "confinement", confined)
	return e, nil
}

// childEnv is the executors' environment: gorender's as bundles may see it
// (no jsvm.SecretEnv such as RENDERER_PASSWORD, not even for code that
// escapes its vm context), without NODE_OPTIONS (which could lift the
// permission model), and without empty locale variables: POSIX reads an
// empty LC_ALL, LC_MESSAGES or LANG as unset (so do the other engines'
// Intl defaults), where ICU would take it as the root locale, und.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if jsvm.SecretEnv(k) || k == "NODE_OPTIONS" {
			continue
		}
		if v == "" && (k == "LC_ALL" || k == "LC_MESSAGES" || k == "LANG") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (e *Engine) heapLimitMiB() int { return int(e.cfg.HeapLimit >> 20) }

// minOutsideHeap is the least memory a process with a heap limit may use
// outside its V8 heap (its young generation of V8's default size, code,
// Node's own native memory, buffers).
const minOutsideHeap = 256 << 20

// youngSpaces is how many semi-spaces V8's young generation takes at most:
// the two it copies between and its large objects, as large as one.
const youngSpaces = 3

// dataLimit is each process's data segment limit (RLIMIT_DATA) with a
// heap limit: the heap and as much again outside it (at least 256 MiB),
// plus the young generation of a configured semi-space size, so that a
// Buffer or ArrayBuffer cannot take more memory than the heap limit allows
// the heap; none without a heap limit.
func (e *Engine) dataLimit() int64 {
	if e.cfg.HeapLimit <= 0 {
		return 0
	}
	return e.cfg.HeapLimit + max(e.cfg.HeapLimit, minOutsideHeap) + youngSpaces*e.cfg.SemiSpace
}

// Name implements jsvm.Engine.
func (e *Engine) Name() string { return Name }

// Close stops every process (killing any still busy) and waits until they
// are reaped: gorender leaves no process behind.
func (e *Engine) Close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	close(e.done)
	waiters := e.waiters
	e.waiters = nil
	e.idle = nil
	e.mu.Unlock()
	for _, w := range waiters {
		w.ch <- nil
	}
	e.mu.Lock()
	procs := slices.Clone(e.procs)
	e.mu.Unlock()
	for _, p := range procs {
		if p != nil {
			p.kill(reasonShutdown)
		}
	}
	e.supervisors.Wait()
	e.dir.remove()
}

// Processes implements jsvm.ProcessReporter: the processes running now.
func (e *Engine) Processes() []jsvm.ProcessStats {
	e.mu.Lock()
	var out []jsvm.ProcessStats
	var procs []*proc
	for _, p := range e.procs {
		if p != nil && !p.dead.Load() {
			procs = append(procs, p)
			out = append(out, jsvm.ProcessStats{Slot: p.slot, PID: p.pid, Renders: p.renders, Bundles: len(p.loaded), Busy: p.busy})
		}
	}
	e.mu.Unlock()
	for i, p := range procs {
		out[i].RSS = p.rss()
	}
	return out
}

// ProcessRestarts implements jsvm.ProcessReporter: processes replaced so
// far, by reason.
func (e *Engine) ProcessRestarts() map[string]uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.restarts)
}
