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
	"context"
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
	"github.com/gorender/gorender/jsvm/sourcemap"
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
// (jsvm.Options.ProcessEnv: no RENDERER_PASSWORD, not even for code that
// escapes its vm context), without NODE_OPTIONS (which could lift the
// permission model), and without empty locale variables: POSIX reads an
// empty LC_ALL, LC_MESSAGES or LANG as unset (so do the other engines'
// Intl defaults), where ICU would take it as the root locale, und.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "RENDERER_PASSWORD" || k == "NODE_OPTIONS" {
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

// supervise keeps the slot's process running until Close: it starts one
// (for the slot's next group, or fresh), offers it for work, and when it
// exits starts the next. A slot past the first config.Processes ends when
// no group needs its next process (group.go). first, if not nil, receives
// the outcome of the slot's first start.
func (e *Engine) supervise(slot int, first chan<- error) {
	defer e.supervisors.Done()
	reported := first == nil
	backoff := 100 * time.Millisecond
	for {
		if e.isClosed() {
			if !reported {
				first <- errors.New("the engine closed")
			}
			return
		}
		p, err := e.startProc(slot)
		if err == nil {
			e.spawned.Add(1)
			// Busy until offered: Close can kill it while it loads its
			// bundles back, and Processes lists it.
			p.busy = true
			e.mu.Lock()
			e.procs[slot] = p
			if g := e.slotNext[slot]; g != nil && g.live() {
				p.group = g
			}
			closed := e.closed
			e.mu.Unlock()
			if closed {
				p.kill(reasonShutdown)
			}
			err = e.restore(p)
			if err != nil {
				// Its slot keeps the group to load back.
				p.kill(reasonStart)
				<-p.exited
				e.mu.Lock()
				if e.procs[slot] == p {
					e.procs[slot] = nil
				}
				e.mu.Unlock()
			}
		}
		if !reported {
			first <- err
			reported = true
		}
		if errors.Is(err, errClosed) {
			return
		}
		if err != nil {
			e.mu.Lock()
			e.restarts[reasonStart]++
			e.mu.Unlock()
			e.log.Error("node process failed to start", "node_process", slot, "err", err, "retry_in", backoff)
			select {
			case <-e.done:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		e.offer(p)
		select {
		case <-p.exited:
		case <-e.done:
			p.kill(reasonShutdown)
			<-p.exited
			return
		}
		// Its pipe ends with it: what it sent last (a malformed frame) is
		// read before its death is classified.
		<-p.readDone
		ends := e.retireProc(p)
		if time.Since(p.started) > 10*time.Second {
			backoff = 100 * time.Millisecond
		}
		reason := p.exitReason()
		if reason == reasonShutdown {
			return
		}
		e.mu.Lock()
		e.restarts[reason]++
		renders := p.renders
		e.mu.Unlock()
		log := e.log.Info
		if reason == reasonCrash || reason == reasonOOM {
			log = e.log.Warn
		}
		log("node process replaced", "node_process", slot, "pid", p.pid, "reason", reason, "exit", exitDescription(p.state), "renders", renders, "slot_ends", ends)
		if ends {
			return
		}
	}
}

func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// restore loads into a slot's new process the bundles of its group its
// predecessor had loaded, so that the renders it takes next do not pay for
// loading them. (A process started for a group that had none there loads
// them for the render that waits for it, under that render's deadline.)
func (e *Engine) restore(p *proc) error {
	e.mu.Lock()
	var want []*program
	if p.group != nil {
		want = e.slotLoaded[p.slot]
	}
	e.mu.Unlock()
	for _, prg := range want {
		if !prg.live() {
			continue
		}
		if p.dead.Load() {
			return fmt.Errorf("node process %d died while loading its bundles back", p.pid)
		}
		if err := e.loadInto(context.Background(), p, prg); err != nil {
			if p.dead.Load() {
				return fmt.Errorf("node process %d died while loading its bundles back: %w", p.pid, err)
			}
			e.log.Warn("bundle failed to load into a replaced node process; it loads on first use", "node_process", p.slot, "bundle", prg.name, "err", err)
		}
	}
	return nil
}

// offer makes a started process available; the spreader loads into it the
// bundles of its group it lacks.
func (e *Engine) offer(p *proc) {
	e.mu.Lock()
	p.ready = true
	e.mu.Unlock()
	e.release(p)
	e.wakeSpreader()
}

// retireProc forgets a process that exited; its slot's next process starts
// for its group (unless it was evicted: then for the group evictLocked
// named). It reports whether the slot ends instead: past the first
// config.Processes slots, when no group needs its next process; renders
// waiting for a process may then start one in it.
func (e *Engine) retireProc(p *proc) bool {
	e.mu.Lock()
	if e.procs[p.slot] == p {
		e.procs[p.slot] = nil
	}
	e.idle = slices.DeleteFunc(e.idle, func(q *proc) bool { return q == p })
	if !p.evicted {
		e.slotNext[p.slot] = p.group
		var progs []*program
		for prg := range p.loaded {
			progs = append(progs, prg)
		}
		slices.SortFunc(progs, func(a, b *program) int { return cmpKeys(a.key, b.key) })
		e.slotLoaded[p.slot] = progs
	}
	if g := e.slotNext[p.slot]; g != nil && !g.live() {
		e.slotNext[p.slot] = nil
	}
	if e.closed || p.slot < e.cfg.Processes || e.slotNext[p.slot] != nil {
		e.mu.Unlock()
		return false
	}
	e.slotRunning[p.slot] = false
	var stop []*proc
	for _, w := range slices.Clone(e.waiters) {
		stop = append(stop, e.provisionLocked(w.group)...)
	}
	e.mu.Unlock()
	for _, q := range stop {
		q.stop(reasonEvicted)
	}
	return true
}

// waiter is a reservation waiting for a process.
type waiter struct {
	ch    chan *proc
	group *group
	// idleOnly: the render needs a bundle loaded, which only an otherwise
	// unused process may do (it never queues).
	idleOnly bool
}

// errClosed is a reservation after Close.
var errClosed = errors.New("node engine closed")

// reserve waits for an idle process of group g (or a fresh one, which it
// binds to g), until ctx ends; when none is idle, a render may queue in a
// busy process of g (pipelining: queueOK and config.Depth > 1). A group
// with fewer processes than it may have starts one for the renders that
// wait (provisionLocked). The reservation is the caller's until release.
func (e *Engine) reserve(ctx context.Context, g *group, queueOK bool) (*proc, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errClosed
	}
	if p := e.takeIdleLocked(g); p != nil {
		e.mu.Unlock()
		return p, nil
	}
	if queueOK {
		if p := e.takeQueuedLocked(g); p != nil {
			e.growLocked(g)
			e.mu.Unlock()
			return p, nil
		}
	}
	w := &waiter{ch: make(chan *proc, 1), group: g, idleOnly: !queueOK}
	e.waiters = append(e.waiters, w)
	stop := e.provisionLocked(g)
	e.mu.Unlock()
	for _, q := range stop {
		q.stop(reasonEvicted)
	}
	select {
	case p := <-w.ch:
		if p == nil {
			return nil, errClosed
		}
		return p, nil
	case <-ctx.Done():
		e.mu.Lock()
		if i := slices.Index(e.waiters, w); i >= 0 {
			e.waiters = slices.Delete(e.waiters, i, i+1)
			e.mu.Unlock()
			return nil, ctx.Err()
		}
		e.mu.Unlock()
		if p := <-w.ch; p != nil {
			e.release(p)
		}
		return nil, ctx.Err()
	}
}

// servesGroup reports whether p is g's.
func (e *Engine) servesGroup(p *proc, g *group) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return p.group == g
}

// groupOf returns the group of progs.
func (e *Engine) groupOf(progs ...*program) *group {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.groupLocked(progs)
}

// takeIdleLocked takes an idle process of g, one with all of g's bundles
// loaded if any, else a fresh one if g may have another process; the most
// recently released first.
func (e *Engine) takeIdleLocked(g *group) *proc {
	i := -1
	for j := len(e.idle) - 1; j >= 0; j-- {
		if p := e.idle[j]; p.group == g {
			if len(p.loaded) == len(g.progs) {
				i = j
				break
			}
			if i < 0 {
				i = j
			}
		}
	}
	if i < 0 {
		i = slices.IndexFunc(e.idle, func(p *proc) bool { return p.group == nil })
		if i < 0 || !e.bindLocked(e.idle[i], g) {
			return nil
		}
	}
	p := e.idle[i]
	e.idle = slices.Delete(e.idle, i, i+1)
	e.holdLocked(p)
	return p
}

// holdLocked makes p, idle, its first holder's.
func (e *Engine) holdLocked(p *proc) {
	p.busy = true
	p.holders = 1
	p.open = false
}

// takeQueuedLocked queues a render in a busy process of g with room
// (fewer than config.Depth holders), the least held one; nil if none.
func (e *Engine) takeQueuedLocked(g *group) *proc {
	if e.cfg.Depth < 2 {
		return nil
	}
	var best *proc
	for _, p := range e.procs {
		if p != nil && e.queueableLocked(p, g) && (best == nil || p.holders < best.holders) {
			best = p
		}
	}
	if best != nil {
		best.holders++
	}
	return best
}

// queueableLocked reports whether a render of g may queue in p: its first
// holder loaded g's bundles before it sent its render (open).
func (e *Engine) queueableLocked(p *proc, g *group) bool {
	return p.open && !p.retire && !p.evicted && !p.dead.Load() && p.holders < e.cfg.Depth && p.group == g
}

// opened marks p, whose render was sent, as taking queued renders (its
// first holder loads nothing more into it), and queues in it the renders
// that wait for a process and may.
func (e *Engine) opened(p *proc) {
	if e.cfg.Depth < 2 {
		return
	}
	e.mu.Lock()
	if p.open && len(e.waiters) == 0 {
		e.mu.Unlock()
		return
	}
	p.open = true
	handed := e.queueWaitersLocked(p)
	e.mu.Unlock()
	for _, w := range handed {
		w.ch <- p
	}
}

// queueWaitersLocked queues in p, busy and taking queued renders, the
// waiting renders that may queue in it, in the order they came, while it
// has room; the caller hands them p once e.mu is unlocked. No waiter is
// ever left that could queue somewhere: reserve queues a render before it
// waits, and the two changes that make room call this (opened: up to
// Depth-1 renders; release: the one its leaving holder made).
func (e *Engine) queueWaitersLocked(p *proc) []*waiter {
	var handed []*waiter
	for i := 0; i < len(e.waiters); {
		w := e.waiters[i]
		if w.idleOnly || !e.queueableLocked(p, w.group) {
			i++
			continue
		}
		e.waiters = slices.Delete(e.waiters, i, i+1)
		p.holders++
		handed = append(handed, w)
	}
	return handed
}

// lacksQueued reports whether p, taking queued renders, lacks a program
// of progs: a holder that finds it so is not its only one, and may not
// load a bundle into it.
func (e *Engine) lacksQueued(p *proc, progs []*program) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !p.open {
		return false
	}
	for _, prg := range progs {
		if !p.loaded[prg] {
			return true
		}
	}
	return false
}

// tryReserveLacking takes, without waiting, an idle process of g that
// lacks prg, else a fresh one if g may have another process; nil if none.
func (e *Engine) tryReserveLacking(g *group, prg *program) *proc {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := slices.IndexFunc(e.idle, func(p *proc) bool { return p.group == g && !p.loaded[prg] })
	if i < 0 {
		i = slices.IndexFunc(e.idle, func(p *proc) bool { return p.group == nil })
		if i < 0 || !e.bindLocked(e.idle[i], g) {
			return nil
		}
	}
	p := e.idle[i]
	e.idle = slices.Delete(e.idle, i, i+1)
	e.holdLocked(p)
	return p
}

// release ends a reservation of p. A process left with holders stays
// theirs, and a waiting render of its group may queue in it. Otherwise it
// goes to the first waiter of its group (a fresh one: of a group that may
// have another process), else, if another group lacks processes for its
// waiting renders, it makes room for it (evicted), else to the idle set,
// and a render queued behind another in a busy process of its group is
// asked to leave it (withdrawQueuedLocked), so that no render waits behind
// a slow one while a process is free. A dead process is dropped (its
// supervisor replaces it); one due for recycling, or whose group is not
// live any more, is stopped.
func (e *Engine) release(p *proc) {
	e.mu.Lock()
	if p.holders > 0 {
		p.holders--
	}
	if p.holders > 0 {
		handed := e.queueWaitersLocked(p)
		e.mu.Unlock()
		for _, w := range handed {
			w.ch <- p
		}
		return
	}
	p.busy, p.open = false, false
	p.touch()
	if p.dead.Load() || p.evicted || e.closed {
		e.mu.Unlock()
		return
	}
	if p.retire {
		e.mu.Unlock()
		p.stop(reasonRecycled)
		return
	}
	if p.group != nil && !p.group.live() {
		e.evictLocked(p, nil)
		e.mu.Unlock()
		p.stop(reasonEvicted)
		return
	}
	for i, w := range e.waiters {
		if e.bindLocked(p, w.group) {
			e.waiters = slices.Delete(e.waiters, i, i+1)
			e.holdLocked(p)
			e.mu.Unlock()
			w.ch <- p
			return
		}
	}
	if p.group != nil {
		if h := e.starvedLocked(p.group); h != nil {
			e.evictLocked(p, h)
			e.mu.Unlock()
			p.stop(reasonEvicted)
			return
		}
	}
	e.idle = append(e.idle, p)
	e.withdrawQueuedLocked(p)
	wake := false
	if p.group == nil || len(p.loaded) < len(p.group.progs) || e.spreadHeld {
		// The spreader may load into a process only while another
		// stays idle (and no render waits: there is none, p is idle).
		wake = len(e.idle) >= 2
		e.spreadHeld = !wake
	}
	e.mu.Unlock()
	if wake {
		e.wakeSpreader()
	}
}

// withdrawQueuedLocked asks one render queued behind another in a busy
// process of p's group, if any, to come back for a process now that p is
// idle (ticket.move): if its process has not started it, the executor gives it
// back and it reserves again, finding p unless a new render took p first.
// p is not held for it: the executor reads the withdraw only once the
// render ahead of it yields, and a server render is mostly synchronous
// JavaScript, so the answer comes when that render ends, and usually says
// the queued render started there after all. A process held for the
// answer stood idle all that time (a whole render, each time a process
// was freed while renders were queued), and the renders that came
// meanwhile queued behind busy processes in turn.
func (e *Engine) withdrawQueuedLocked(p *proc) {
	if p.group == nil {
		return
	}
	for _, o := range e.procs {
		if o == nil || o == p || o.group != p.group || o.holders < 2 {
			continue
		}
		if t := o.queuedTicket(); t != nil {
			t.move <- struct{}{}
			return
		}
	}
}

// restartOnSchedule replaces every process each RestartInterval, one at a
// time RestartDelay apart: an idle one at once, a busy one when its render
// ends. Its replacement starts with the bundles it had.
func (e *Engine) restartOnSchedule() {
	defer e.supervisors.Done()
	ticker := time.NewTicker(e.cfg.RestartInterval)
	defer ticker.Stop()
	for {
		select {
		case <-e.done:
			return
		case <-ticker.C:
		}
		for slot := range e.cfg.MaxProcesses {
			e.mu.Lock()
			p := e.procs[slot]
			if p == nil || p.dead.Load() || p.evicted {
				e.mu.Unlock()
				continue
			}
			stopNow := false
			if !p.retire {
				p.retire = true
				if !p.busy {
					e.idle = slices.DeleteFunc(e.idle, func(q *proc) bool { return q == p })
					stopNow = true
				}
			}
			e.mu.Unlock()
			if stopNow {
				p.stop(reasonRecycled)
			}
			select {
			case <-e.done:
				return
			case <-time.After(e.cfg.RestartDelay):
			}
		}
	}
}

// rendered counts a render on p and marks it for recycling once it ran
// MaxRendersPerProcess.
func (e *Engine) rendered(p *proc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p.renders++
	if n := e.cfg.MaxRendersPerProcess; n > 0 && p.renders >= n && !p.retire {
		p.retire = true
		e.log.Info("node process recycled", "node_process", p.slot, "pid", p.pid, "renders", p.renders)
	}
}

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

// ---- Programs --------------------------------------------------------------

// program is a bundle the engine knows: its source (each process evaluates
// it in a fresh context when it first needs it) and who uses it.
// nextProgramKey numbers programs across every engine of the process, so
// that a program can be loaded by any of them (the conformance suite's
// fixture programs are compiled once and loaded by each engine it makes).
var nextProgramKey atomic.Uint64

type program struct {
	key    string // unique per Compile: a bundle compiled again is another program
	name   string
	file   string // the file name stack traces and __filename show
	dir    string // the bundle's directory (fs, require), "" when not on disk
	source string
	// mapFile is its source map for getStackTrace ("" for none): the file
	// jsvm/sourcemap maps its error answers with.
	mapFile string

	// unspread is set when a load of it in the background failed: it is
	// loaded only where a render needs it (spread.go).
	unspread atomic.Bool

	mu     sync.Mutex
	refs   int  // runtimes that loaded it
	closed bool // the pools let go of it (jsvm: Program.Close)
}

func (prg *program) Name() string { return prg.name }

func (prg *program) live() bool {
	prg.mu.Lock()
	defer prg.mu.Unlock()
	return !prg.closed || prg.refs > 0
}

// Compile implements jsvm.Engine. The bundle is only parsed by V8 when a
// process loads it: a syntax error fails the load.
func (e *Engine) Compile(name, path, source string) (jsvm.Program, error) {
	prg := &program{key: fmt.Sprintf("p%d", nextProgramKey.Add(1)), name: name, file: name + ".js", source: source}
	if e.cfg.SupportModules && path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			prg.file, prg.dir = abs, filepath.Dir(abs)
		}
	}
	if e.cfg.SourceMapLimit > 0 && path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			// Only its name is read now (the last 4 KiB of the bundle);
			// the map itself when a stack first needs it.
			prg.mapFile, _ = sourcemap.MapFile(abs)
		}
	}
	return prg, nil
}

// Close implements the pools' release of a program: once its last runtime
// closes, the processes of its isolation groups stop (group.go).
func (prg *program) Close() {
	prg.mu.Lock()
	prg.closed = true
	prg.mu.Unlock()
}

// errLoadGoesOn is a load whose caller left before it ended: the process
// finishes it in the background and is released then (loadInto), so the
// caller lets go of the process without releasing it.
var errLoadGoesOn = errors.New("the caller left; the process finishes the load")

// loadInto evaluates prg in p unless p has it; p is reserved by the caller.
// A load past the load timeout (config.LoadTimeout), or past the caller's deadline (ctx ended at it),
// kills the process. One whose caller leaves before its deadline (a client
// gone, a render the pools stopped) goes on: loadInto returns errLoadGoesOn
// and the process is released once the load ends. Killing it cost a
// process start, its bundles loaded back and a cold V8, while the renders
// that came meanwhile had a process less.
func (e *Engine) loadInto(ctx context.Context, p *proc, prg *program) error {
	e.mu.Lock()
	has := p.loaded[prg]
	inGroup := p.group != nil && slices.Contains(p.group.progs, prg)
	e.mu.Unlock()
	if has {
		return nil
	}
	if !inGroup {
		// The isolation rule (group.go): a bug if it is ever broken.
		return fmt.Errorf("load bundle %s: not of the isolation group of node process %d (a gorender bug)", prg.name, p.pid)
	}
	e.loadsSent.Add(1)
	if err := p.send(&header{T: "load", B: prg.key, Name: prg.name, File: prg.file, Dir: prg.dir, Map: prg.mapFile}, prg.source); err != nil {
		return fmt.Errorf("load bundle %s: %w", prg.name, p.death())
	}
	limit := time.NewTimer(e.cfg.LoadTimeout)
	ended, err := e.awaitLoad(ctx.Done(), p, prg, limit.C)
	if ended {
		limit.Stop()
		return err
	}
	if pastDeadline(ctx) {
		limit.Stop()
		p.kill(reasonLoadDeadline)
		return fmt.Errorf("load bundle %s: interrupted: %w", prg.name, ctx.Err())
	}
	go func() {
		defer e.release(p)
		defer limit.Stop()
		if _, err := e.awaitLoad(nil, p, prg, limit.C); err != nil {
			e.log.Warn("bundle failed to load after its caller left; it loads on next use", "node_process", p.slot, "bundle", prg.name, "err", err)
		}
	}()
	return fmt.Errorf("load bundle %s: %w: %w", prg.name, errLoadGoesOn, ctx.Err())
}

// awaitLoad waits for the end of prg's load into p, and says whether it
// ended (false: stop closed first, the load goes on). At limit the process
// is killed.
func (e *Engine) awaitLoad(stop <-chan struct{}, p *proc, prg *program, limit <-chan time.Time) (ended bool, err error) {
	for {
		select {
		case f, ok := <-p.frames:
			if !ok {
				return true, fmt.Errorf("load bundle %s: %w", prg.name, p.death())
			}
			if f.h.B != prg.key {
				continue
			}
			switch f.h.T {
			case "loaded":
				e.mu.Lock()
				p.loaded[prg] = true
				e.mu.Unlock()
				e.wakeSpreader()
				return true, nil
			case "loadFailed":
				failed, err := errorOf(f)
				if err != nil {
					e.protocolFault(p, err)
					return true, fmt.Errorf("load bundle %s: %w", prg.name, err)
				}
				return true, fmt.Errorf("load bundle %s: %s\n%s", prg.name, failed.Message, failed.Stack)
			}
		case <-limit:
			p.kill(reasonLoadDeadline)
			return true, fmt.Errorf("load bundle %s: not evaluated within %s; its process was killed", prg.name, e.cfg.LoadTimeout)
		case <-stop:
			return false, nil
		}
	}
}
