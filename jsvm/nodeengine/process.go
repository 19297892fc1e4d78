package nodeengine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/jsenv"
)

// proc is one executor process: its pipes, the goroutines that read them
// and reap it, and what the engine knows of it.
type proc struct {
	slot    int
	pid     int
	cmd     *exec.Cmd
	started time.Time

	in  *os.File   // our end of the child's fd 3
	wmu sync.Mutex // one frame at a time on in

	// frames are what the child sends outside renders (ready, loads), read
	// by one goroutine; closed when the pipe ends (exit, kill) or a frame is
	// malformed (fault says). A render's frames go to its ticket.
	frames chan frame
	// readDone is closed when the reader stopped (after frames).
	readDone chan struct{}
	// gone is closed once gorender killed or stopped the process: nobody
	// reads its frames any more, so the reader drops what is left.
	gone     chan struct{}
	goneOnce sync.Once
	// sent are the renders written to the process, in the order it runs
	// them: the first may be running, the others wait in the executor
	// behind it (pipelining, config.Depth). The reader hands each render's
	// frames to its ticket. Guarded by rmu, which is taken after the
	// engine's mu, never before.
	rmu       sync.Mutex
	sent      []*ticket
	outputEnd bool // the output ended: nothing more is sent

	// fault is the protocol error the process committed, if any.
	fault atomic.Pointer[error]
	// lastBundle is the bundle whose code the process was sent last (a
	// load or a render's entry): once one ran, a fault may be its doing.
	lastBundle atomic.Pointer[string]
	// blamed is the bundle the fault is charged to (breach).
	blamed atomic.Pointer[string]

	// exited is closed once the process is reaped; state is then set.
	exited chan struct{}
	state  *os.ProcessState

	stderr *tailWriter

	// dead turns true when the process is killed, stopped or found gone: it
	// takes no more work. stopReason says why gorender ended it (nil if it
	// died by itself).
	dead       atomic.Bool
	stopReason atomic.Pointer[string]

	// Guarded by the engine's mu:
	busy    bool              // reserved for a render or a load
	holders int               // reservations: the render it runs and those queued behind it
	open    bool              // it takes queued renders: its first holder sent its render (no load comes)
	retire  bool              // stop it once released (recycled)
	renders int               // renders run, for recycling
	loaded  map[*program]bool // bundles evaluated in it: its group's (group.go)
	// group is its isolation group (group.go); nil while it is fresh.
	group    *group
	evicted  bool      // stopped because it is not needed any more: its slot's next process is not its group's
	ready    bool      // started and offered for work
	lastUsed time.Time // when it was last released, for eviction
}

// spawnLimit bounds the whole start of a process: exec, Node's own start,
// the executor's init and its ready frame. A package variable so that the
// tests of a slow start can shorten it.
var spawnLimit = 30 * time.Second

// startProc starts an executor and waits for its ready frame.
func (e *Engine) startProc(slot int) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("pipe: %w", err)
	}
	setPipeSize(inW, requestPipeSize)
	setPipeSize(outR, answerPipeSize)
	p := &proc{
		slot:     slot,
		in:       inW,
		frames:   make(chan frame, 4), // one load at a time: ready, then loaded or loadFailed
		readDone: make(chan struct{}),
		gone:     make(chan struct{}),
		exited:   make(chan struct{}),
		stderr:   newTailWriter(e.log.With("node_process", slot), 8<<10),
		loaded:   make(map[*program]bool),
	}
	cmd := executorCommand(e.node.path, e.node.args(e.executor, e.cfg.ReadRoots, e.heapLimitMiB(), int(e.cfg.SemiSpace>>20)), e.dataLimit())
	cmd.Env = e.childEnv
	cmd.Dir = e.dir.path
	cmd.ExtraFiles = []*os.File{inR, outW} // the child's fds 3 and 4
	cmd.Stdout = p.stderr
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = sysProcAttr()
	err = spawn(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start %s: %w", e.node.path, err)
	}
	p.cmd = cmd
	p.pid = cmd.Process.Pid
	p.started = time.Now()
	p.stderr.setPID(p.pid, p.lastBundle.Load)
	go p.read(outR, e.log, e.cfg.MaxResult)
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		p.dead.Store(true)
		close(p.exited)
	}()

	init := &header{T: "init", Options: &executorOptions{
		StubTimers:         !e.cfg.realTimers(),
		SupportModules:     e.cfg.SupportModules,
		ReplayAsyncLogs:    e.cfg.ReplayAsyncLogs,
		ConsoleMaxLines:    e.cfg.ConsoleMaxLines,
		ConsoleMaxBytes:    e.cfg.ConsoleMaxBytes,
		ErrorTextMax:       jsvm.MaxErrorTextLength,
		RunOnOtherMaxDepth: jsvm.MaxRunOnOtherDepth,
		RunOnOtherTooDeep:  jsvm.RunOnOtherTooDeepText,
		CrossingStreamsMax: jsvm.MaxCrossingStreams,
		CrossingStreams:    jsvm.CrossingStreamsText,
		SourceMapLimit:     e.cfg.SourceMapLimit / int64(e.cfg.MaxProcesses),
		MaxResult:          e.resultLimit(),
		CallArgsMax:        maxCallArgs,
	}}
	if err := p.send(init, jsenv.Env); err != nil {
		p.kill(reasonStart)
		return nil, fmt.Errorf("node process %d: send init: %w", p.pid, p.death())
	}
	timer := time.NewTimer(spawnLimit)
	defer timer.Stop()
	select {
	case f, ok := <-p.frames:
		if !ok {
			return nil, fmt.Errorf("node process %d did not start: %w", p.pid, p.death())
		}
		if f.h.T != "ready" {
			p.kill(reasonStart)
			return nil, fmt.Errorf("node process %d: %w: first frame %q, want ready", p.pid, errProtocol, f.h.T)
		}
	case <-timer.C:
		p.kill(reasonStart)
		return nil, fmt.Errorf("node process %d did not answer within %s of its start", p.pid, spawnLimit)
	case <-e.done:
		p.kill(reasonShutdown)
		<-p.exited
		return nil, errClosed
	}
	return p, nil
}

// read turns the child's output pipe into frames until it ends; a result
// past maxResult bytes is dropped as it arrives (frameReader).
func (p *proc) read(out *os.File, log *slog.Logger, maxResult int64) {
	defer close(p.readDone)
	defer out.Close()
	pr, err := newPipeReader(out)
	if err != nil {
		log.Error("node executor's output pipe: a gorender bug; the process is replaced", "node_process", p.slot, "pid", p.pid, "err", err)
		p.kill(reasonProtocol)
		p.endOutput()
		close(p.frames)
		return
	}
	r := &frameReader{r: bufio.NewReaderSize(pr, 64<<10), maxResult: maxResult}
	var last *ticket
	for {
		f, err := r.next()
		if err != nil {
			if errors.Is(err, errProtocol) {
				p.breach(log, fmt.Errorf("a malformed frame: %w", err), "")
			}
			p.endOutput()
			close(p.frames)
			return
		}
		if f.h.R != 0 {
			// The last frame's ticket serves the next frames of its render
			// without a lock (a stream's chunks): only this goroutine
			// takes tickets out of sent, on a done frame.
			t := last
			if t == nil || t.id != f.h.R || f.h.T == "done" {
				t = p.ticketOf(f)
				last = t
				if f.h.T == "done" {
					last = nil
				}
			}
			if t != nil && t.admit(f.cost(), p.gone) {
				fp := routedFrames.Get().(*frame)
				*fp = f
				select {
				case t.frames <- fp:
				case <-p.gone:
				}
			}
			continue
		}
		select {
		case p.frames <- f:
		case <-p.gone:
			// Killed or stopped: what it sent last is nobody's; read on to
			// the end of the pipe, so that its death is noticed.
		}
	}
}

// breach replaces a process that broke the executor protocol. Once bundle
// code has run in it, that code may have taken the executor over (vm is no
// boundary): the fault is counted and logged against a bundle
// (reasonBundleFault), not as gorender's bug (reasonProtocol): by, when the
// caller knows whose render saw it, else p.culprit().
func (p *proc) breach(log *slog.Logger, err error, by string) {
	if !p.fault.CompareAndSwap(nil, &err) {
		return // charged already
	}
	b := by
	if b == "" {
		b = p.culprit()
	}
	if b != "" {
		p.blamed.Store(&b)
		log.Warn("node process broke the executor protocol after bundle code ran in it: the bundle's fault; the process is replaced",
			"node_process", p.slot, "pid", p.pid, "bundle", b, "err", err)
		p.kill(reasonBundleFault)
		return
	}
	log.Error("node executor broke the protocol before any bundle ran in it: a gorender bug; the process is replaced",
		"node_process", p.slot, "pid", p.pid, "err", err)
	p.kill(reasonProtocol)
}

// culprit is the bundle a fault of the process is charged to: the entry
// of the render it runs (the first sent), else the bundle whose code it
// was sent last; "" if no bundle code was sent to it.
func (p *proc) culprit() string {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	if len(p.sent) > 0 {
		return p.sent[0].bundle
	}
	if b := p.lastBundle.Load(); b != nil {
		return *b
	}
	return ""
}

// ticket is a render sent to a process: where its frames go, and whether
// the process may have started it.
type ticket struct {
	id     uint64
	bundle string // the entry bundle's id
	// frames are the render's frames (take each); closed when the
	// process's output ends. By pointer: a frame's header is the union of
	// every frame type's fields (about 300 bytes), and the channel is made
	// per render with room for a stream's chunks: by value, 20 KB.
	frames chan *frame
	// started is closed once every render sent to the process before it
	// has answered: from then on the executor may be running it.
	started chan struct{}
	sentAt  time.Time
	// unstarted is set, before frames is closed, when the process ended
	// before it could start the render: it ran nowhere.
	unstarted bool
	// move asks the render, queued behind another, to leave its process
	// for an idle one (Engine.withdrawQueuedLocked); moving (under the
	// process's rmu) says it was asked, or that it may not be any more.
	move   chan struct{}
	moving bool
	// held is the bytes of the frames handed to the render and not yet
	// taken; the reader waits while they are over renderBuffer (admit),
	// and taken wakes it.
	held  atomic.Int64
	taken chan struct{}
}

// renderBuffer bounds the bytes gorender holds of a render's frames before
// the render takes them (a stream's chunks, when its client reads slower
// than the executor writes): past it the reader waits, the answer pipe
// fills and the executor's next write waits for it, as a stream on goja
// or quickjs waits in its write to the client. A frame is let through
// whole when nothing else is held: what a render holds is at most
// renderBuffer plus one frame (a chunk's piece, or the result).
const renderBuffer = 1 << 20

// admit waits until a frame of n bytes may be handed to the render; false
// if the process is gone meanwhile (the frame is nobody's).
func (t *ticket) admit(n int64, gone <-chan struct{}) bool {
	for {
		if h := t.held.Load(); h == 0 || h+n <= renderBuffer {
			break
		}
		select {
		case <-t.taken:
		case <-gone:
			return false
		}
	}
	t.held.Add(n)
	return true
}

// routedFrames are the frames the reader hands to renders, recycled: a
// stream's chunks come by the thousand.
var routedFrames = sync.Pool{New: func() any { return new(frame) }}

// cost is what a frame holds of gorender's memory that the executor chose
// the size of: its body and its header's bytes (a host call's arguments;
// any field it should not have sent is within maxFrameHeader too).
func (f *frame) cost() int64 {
	return int64(len(f.body) + f.headerBytes)
}

// take is what a render received, its frame given back for the next.
func (t *ticket) take(fp *frame) frame {
	f := *fp
	*fp = frame{}
	routedFrames.Put(fp)
	if n := f.cost(); n > 0 {
		t.held.Add(-n)
		select {
		case t.taken <- struct{}{}:
		default:
		}
	}
	return f
}

// newTicket makes the ticket of render id; a stream's or an incremental
// render's frames are many (chunks, updates), a buffered render's few.
func newTicket(id uint64, many bool) *ticket {
	n := 4
	if many {
		n = 64
	}
	return &ticket{id: id, frames: make(chan *frame, n), started: make(chan struct{}), move: make(chan struct{}, 1), taken: make(chan struct{}, 1)}
}

// hasStarted reports whether the process may be running t.
func (t *ticket) hasStarted() bool {
	select {
	case <-t.started:
		return true
	default:
		return false
	}
}

// ticketOf is the ticket of a render frame, nil for a render gorender no
// longer follows. A done frame ends the render's turn: the next one sent
// may start.
func (p *proc) ticketOf(f frame) *ticket {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	i := slices.IndexFunc(p.sent, func(t *ticket) bool { return t.id == f.h.R })
	if i < 0 {
		return nil
	}
	t := p.sent[i]
	if f.h.T == "done" {
		p.sent = slices.Delete(p.sent, i, i+1)
		if i == 0 && len(p.sent) > 0 {
			close(p.sent[0].started)
		}
	}
	return t
}

// endOutput closes the tickets once the output ended: the first sent was
// running (or about to), the others never started.
func (p *proc) endOutput() {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	p.outputEnd = true
	for i, t := range p.sent {
		t.unstarted = i > 0
		close(t.frames)
	}
	p.sent = nil
}

// errOutputEnded is a render sent to a process whose output had ended.
var errOutputEnded = errors.New("the process's output ended")

// sendRender writes a render's frame, its ticket queued behind the
// renders sent before it, in the pipe's order.
func (p *proc) sendRender(t *ticket, h *header, body string) error {
	head, err := frameHead(h, len(body))
	if err != nil {
		return err
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.rmu.Lock()
	if p.outputEnd {
		p.rmu.Unlock()
		return errOutputEnded
	}
	if len(p.sent) == 0 {
		close(t.started)
	}
	t.sentAt = time.Now()
	p.sent = append(p.sent, t)
	p.lastBundle.Store(&t.bundle)
	p.rmu.Unlock()
	// A write error means the process is going (its input closed or
	// broken): the ticket is closed with the others when its output ends.
	_ = writeParts(p.in, head, body)
	return nil
}

// queuedTicket takes for a move a render queued behind another in p
// (not the first sent, which may be running), nil if none.
func (p *proc) queuedTicket() *ticket {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	for _, t := range p.sent[min(1, len(p.sent)):] {
		if !t.moving {
			t.moving = true
			return t
		}
	}
	return nil
}

// noMoves ends the requests to t to move.
func (p *proc) noMoves(t *ticket) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	t.moving = true
}

// send writes one frame to the child.
func (p *proc) send(h *header, body string) error {
	head, err := frameHead(h, len(body))
	if err != nil {
		return err
	}
	if h.T == "load" {
		name := h.Name
		p.lastBundle.Store(&name)
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if err := writeParts(p.in, head, body); err != nil {
		return fmt.Errorf("write %s frame: %w", h.T, err)
	}
	return nil
}

// Why gorender ends a process, as gorender_engine_process_restarts_total
// counts them; a process that dies by itself is "crash" or "oom".
const (
	reasonDeadline     = "deadline"      // its render passed the render deadline
	reasonUnresponsive = "unresponsive"  // it did not stop a render when asked, or its pipes broke
	reasonProtocol     = "protocol"      // it broke the executor protocol before any bundle ran in it (a bug)
	reasonBundleFault  = "bundle_fault"  // it broke the protocol after bundle code ran in it (breach)
	reasonLoadDeadline = "load_deadline" // a bundle took too long to evaluate
	reasonRecycled     = "recycled"      // it ran RENDERER_MAX_RENDERS_PER_RUNTIME renders
	reasonStart        = "start"         // it did not start
	reasonEvicted      = "evicted"       // its group's bundles were let go of, or another group took its slot
	reasonShutdown     = "shutdown"      // gorender is stopping
	reasonCrash        = "crash"
	reasonOOM          = "oom"
)

// restartReasons are the reasons gorender_engine_process_restarts_total
// counts (not shutdown).
var restartReasons = []string{reasonDeadline, reasonUnresponsive, reasonProtocol, reasonBundleFault, reasonLoadDeadline, reasonRecycled, reasonStart, reasonEvicted, reasonCrash, reasonOOM}

// kill ends the process at once (SIGKILL to its process group) and marks it
// dead; the first reason given is kept.
func (p *proc) kill(reason string) {
	p.stopReason.CompareAndSwap(nil, &reason)
	p.dead.Store(true)
	p.goneOnce.Do(func() { close(p.gone) })
	if p.cmd != nil && p.cmd.Process != nil {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		_ = p.cmd.Process.Kill()
	}
	p.in.Close()
}

// stop asks the process to exit by closing its input (it exits when its
// input ends): a recycled process finishes nothing, it is idle.
func (p *proc) stop(reason string) {
	p.stopReason.CompareAndSwap(nil, &reason)
	p.dead.Store(true)
	p.goneOnce.Do(func() { close(p.gone) })
	p.in.Close()
}

// deathGrace is how long a process whose pipe ended may take to be reaped
// before its death is classified without its exit status.
const deathGrace = 2 * time.Second

// death says why the process is gone, once its frames ended: it was killed,
// it broke the protocol, V8 ran out of heap, or it exited or crashed.
func (p *proc) death() *deathError {
	p.dead.Store(true)
	select {
	case <-p.exited:
	case <-time.After(deathGrace):
		p.kill(reasonUnresponsive)
		<-p.exited
	}
	d := &deathError{pid: p.pid}
	switch tail := p.stderr.tail(); {
	case p.fault.Load() != nil:
		d.kind, d.detail = deathProtocol, (*p.fault.Load()).Error()
		if b := p.blamed.Load(); b != nil {
			d.bundle = *b
		}
	case p.outOfMemory():
		d.kind = deathOOM
	case p.stopReason.Load() != nil:
		d.kind, d.detail = deathKilled, *p.stopReason.Load()
	default:
		d.kind, d.detail = deathCrash, exitDescription(p.state)
		if line := lastLine(tail); line != "" {
			d.detail += ": " + line
		}
	}
	return d
}

type deathKind int

const (
	deathCrash deathKind = iota
	deathOOM
	deathProtocol
	deathKilled
)

// deathError is a process gone while it had work.
type deathError struct {
	pid    int
	kind   deathKind
	detail string
	// bundle is, for a protocol breach, the bundle whose code ran last in
	// the process ("" if none had: gorender's bug).
	bundle string
}

func (d *deathError) Error() string {
	switch d.kind {
	case deathOOM:
		return fmt.Sprintf("node process %d ran out of V8 heap", d.pid)
	case deathProtocol:
		return fmt.Sprintf("node process %d: %s", d.pid, d.detail)
	case deathKilled:
		return fmt.Sprintf("node process %d was killed: %s", d.pid, d.detail)
	}
	return fmt.Sprintf("node process %d exited (%s)", d.pid, d.detail)
}

func exitDescription(st *os.ProcessState) string {
	if st == nil {
		return "exit status unknown"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by signal " + ws.Signal().String()
	}
	return "exit status " + strconv.Itoa(st.ExitCode())
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// exitReason says why an exited process ended: gorender's reason, else
// what it died of.
func (p *proc) exitReason() string {
	if r := p.stopReason.Load(); r != nil {
		return *r
	}
	if p.outOfMemory() {
		return reasonOOM
	}
	return reasonCrash
}

// outOfMemory reports whether the process died of running out of memory:
// its V8 heap limit, or its data segment limit (V8's heap could not grow,
// or a native allocation failed). Each of these ends in V8's or the C++
// runtime's fatal handler, which prints its report and aborts: the process
// must have died of SIGABRT with the report in its last output. Text a
// bundle printed does not decide it alone: printed, then any other death
// (an exit, another signal) is a crash. (A process a bundle took over can
// still print the report and abort itself; it died by its own hand then,
// and is counted as an OOM of that bundle's making.)
func (p *proc) outOfMemory() bool {
	if p.state == nil {
		return false
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGABRT {
		return false
	}
	tail := p.stderr.tail()
	for _, s := range []string{"JavaScript heap out of memory", "Reached heap limit", "Fatal process out of memory", "std::bad_alloc"} {
		if strings.Contains(tail, s) {
			return true
		}
	}
	return false
}

// rss is the process's resident memory in bytes (0 when unknown).
func (p *proc) rss() int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// tailWriter takes a child's stdout and stderr: each line goes to the log
// (Node's own messages: a fatal error, a crash report), within a rate, and
// the last bytes are kept to tell an out-of-memory death from another.
type tailWriter struct {
	log    *slog.Logger
	max    int
	mu     sync.Mutex
	pid    int
	bundle func() *string
	line   []byte
	last   []byte

	// The rate (logLines, logBytes per logWindow): what passes it is
	// counted, and summarised in one line at the window's end.
	windowStart                time.Time
	lines, bytes               int
	droppedLines, droppedBytes int64
}

func newTailWriter(log *slog.Logger, max int) *tailWriter {
	return &tailWriter{log: log, max: max}
}

// setPID names the process in the log, and how to learn the bundle whose
// code it ran last (what it prints once bundle code ran may be its).
func (w *tailWriter) setPID(pid int, bundle func() *string) {
	w.mu.Lock()
	w.pid = pid
	w.bundle = bundle
	w.mu.Unlock()
}

// lastBundle is the bundle whose code the process ran last, "" if none.
func (w *tailWriter) lastBundle() string {
	if w.bundle != nil {
		if b := w.bundle(); b != nil {
			return *b
		}
	}
	return ""
}

// maxLogLine bounds one logged line of a child's output.
const maxLogLine = 4 << 10

// What one process's output may cost the log: Node's own messages are a
// few lines; a bundle that took the process over may print megabytes,
// which must not become a million log lines that outlive its render.
const (
	logWindow = time.Second
	logLines  = 20
	logBytes  = 16 << 10
)

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = append(w.last, b...)
	if len(w.last) > w.max {
		w.last = append(w.last[:0], w.last[len(w.last)-w.max:]...)
	}
	rest := b
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(w.line) < maxLogLine {
				w.line = append(w.line, rest[:min(len(rest), maxLogLine-len(w.line))]...)
			}
			break
		}
		if len(w.line) < maxLogLine {
			w.line = append(w.line, rest[:min(i, maxLogLine-len(w.line))]...)
		}
		if line := bytes.TrimRight(w.line, "\r"); len(line) > 0 {
			w.emit(line)
		}
		w.line = w.line[:0]
		rest = rest[i+1:]
	}
	return len(b), nil
}

// emit logs a line within the rate, else counts it; the first line dropped
// in a window arms the summary for the window's end.
func (w *tailWriter) emit(line []byte) {
	now := time.Now()
	if now.Sub(w.windowStart) >= logWindow {
		w.windowStart, w.lines, w.bytes = now, 0, 0
	}
	if w.lines >= logLines || w.bytes+len(line) > logBytes {
		if w.droppedLines == 0 {
			time.AfterFunc(logWindow-now.Sub(w.windowStart), w.summarise)
		}
		w.droppedLines++
		w.droppedBytes += int64(len(line))
		return
	}
	w.lines++
	w.bytes += len(line)
	w.log.Warn("node process output", "pid", w.pid, "last_bundle", w.lastBundle(), "line", string(line))
}

// summarise logs what the rate dropped since the last summary.
func (w *tailWriter) summarise() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.droppedLines == 0 {
		return
	}
	w.log.Warn("node process output dropped: more than the log takes from one process",
		"pid", w.pid, "last_bundle", w.lastBundle(), "lines", w.droppedLines, "bytes", w.droppedBytes,
		"rate", fmt.Sprintf("%d lines or %d bytes per %s", logLines, logBytes, logWindow))
	w.droppedLines, w.droppedBytes = 0, 0
}

func (w *tailWriter) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.last)
}
