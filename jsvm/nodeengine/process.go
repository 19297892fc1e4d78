package nodeengine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
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

	// frames are what the child sends, read by one goroutine; closed when
	// the pipe ends (exit, kill) or a frame is malformed (fault says).
	frames chan frame
	// readDone is closed when the reader stopped (after frames).
	readDone chan struct{}
	// gone is closed once gorender killed or stopped the process: nobody
	// reads its frames any more, so the reader drops what is left.
	gone     chan struct{}
	goneOnce sync.Once
	// fault is the protocol error the process committed, if any.
	fault atomic.Pointer[error]

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
	retire  bool              // stop it once released (recycled)
	renders int               // renders run, for recycling
	loaded  map[*program]bool // bundles evaluated in it
	lacking bool              // it lacks a bundle the spreader spreads (spread.go)
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
		frames:   make(chan frame, 64),
		readDone: make(chan struct{}),
		gone:     make(chan struct{}),
		exited:   make(chan struct{}),
		stderr:   newTailWriter(e.log.With("node_process", slot), 8<<10),
		loaded:   make(map[*program]bool),
	}
	cmd := exec.Command(e.node.path, e.node.args(e.executor, e.cfg.ReadRoots, e.heapLimitMiB())...)
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
	if err := confineProcess(p.pid, e.dataLimit()); err != nil {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		_ = cmd.Wait()
		outR.Close()
		inW.Close()
		return nil, fmt.Errorf("node process %d: %w", p.pid, err)
	}
	p.started = time.Now()
	p.stderr.setPID(p.pid)
	go p.read(outR, e.log)
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		p.dead.Store(true)
		close(p.exited)
	}()

	init := &header{T: "init", Options: &executorOptions{
		StubTimers:      !e.cfg.realTimers(),
		SupportModules:  e.cfg.SupportModules,
		ReplayAsyncLogs: e.cfg.ReplayAsyncLogs,
		ConsoleMaxLines: e.cfg.ConsoleMaxLines,
		ConsoleMaxBytes: e.cfg.ConsoleMaxBytes,
		ErrorTextMax:    jsvm.MaxErrorTextLength,
		SourceMapLimit:  e.cfg.SourceMapLimit / int64(e.cfg.Processes),
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

// read turns the child's output pipe into frames until it ends.
func (p *proc) read(out *os.File, log *slog.Logger) {
	defer close(p.readDone)
	defer out.Close()
	pr, err := newPipeReader(out)
	if err != nil {
		log.Error("node executor's output pipe: a gorender bug; the process is replaced", "node_process", p.slot, "pid", p.pid, "err", err)
		p.kill(reasonProtocol)
		close(p.frames)
		return
	}
	r := bufio.NewReaderSize(pr, 64<<10)
	for {
		f, err := readFrame(r)
		if err != nil {
			if errors.Is(err, errProtocol) {
				fault := err // its own variable: err stays off the heap
				p.fault.CompareAndSwap(nil, &fault)
				log.Error("node executor sent a malformed frame: a gorender bug; the process is replaced", "node_process", p.slot, "pid", p.pid, "err", err)
				p.kill(reasonProtocol)
			}
			close(p.frames)
			return
		}
		select {
		case p.frames <- f:
		case <-p.gone:
			// Killed or stopped: what it sent last is nobody's; read on to
			// the end of the pipe, so that its death is noticed.
		}
	}
}

// send writes one frame to the child.
func (p *proc) send(h *header, body string) error {
	head, err := frameHead(h, len(body))
	if err != nil {
		return err
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
	reasonProtocol     = "protocol"      // it broke the executor protocol (a bug)
	reasonLoadDeadline = "load_deadline" // a bundle took too long to evaluate
	reasonRecycled     = "recycled"      // it ran RENDERER_MAX_RENDERS_PER_RUNTIME renders
	reasonStart        = "start"         // it did not start
	reasonShutdown     = "shutdown"      // gorender is stopping
	reasonCrash        = "crash"
	reasonOOM          = "oom"
)

// restartReasons are the reasons gorender_engine_process_restarts_total
// counts (not shutdown).
var restartReasons = []string{reasonDeadline, reasonUnresponsive, reasonProtocol, reasonLoadDeadline, reasonRecycled, reasonStart, reasonCrash, reasonOOM}

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
	case outOfMemory(tail):
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
	if p.fault.Load() != nil {
		return reasonProtocol
	}
	if r := p.stopReason.Load(); r != nil {
		return *r
	}
	if outOfMemory(p.stderr.tail()) {
		return reasonOOM
	}
	return reasonCrash
}

// outOfMemory reports whether a process's last words say it ran out of
// memory: its V8 heap limit, or its data segment limit (V8's heap could not
// grow, or a native allocation failed).
func outOfMemory(stderr string) bool {
	for _, s := range []string{"JavaScript heap out of memory", "Reached heap limit", "Fatal process out of memory", "std::bad_alloc"} {
		if strings.Contains(stderr, s) {
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
// (Node's own messages: a fatal error, a crash report), and the last bytes
// are kept to tell an out-of-memory death from another.
type tailWriter struct {
	log  *slog.Logger
	max  int
	mu   sync.Mutex
	pid  int
	line []byte
	last []byte
}

func newTailWriter(log *slog.Logger, max int) *tailWriter {
	return &tailWriter{log: log, max: max}
}

func (w *tailWriter) setPID(pid int) {
	w.mu.Lock()
	w.pid = pid
	w.mu.Unlock()
}

// maxLogLine bounds one logged line of a child's output.
const maxLogLine = 4 << 10

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
		if line := strings.TrimRight(string(w.line), "\r"); line != "" {
			w.log.Warn("node process output", "pid", w.pid, "line", line)
		}
		w.line = w.line[:0]
		rest = rest[i+1:]
	}
	return len(b), nil
}

func (w *tailWriter) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.last)
}
