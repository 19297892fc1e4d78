package test262

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

//go:embed node.js
var nodeRunner []byte

// NodeHost is the reference host: Node.js processes that run each test in a
// fresh vm context (node.js). A test that ends its process (a crash, a
// timeout the process missed) fails, and a new process takes its place.
type NodeHost struct {
	node, script string
	timeout      time.Duration
	procs        chan *nodeProc
	mu           sync.Mutex
	all          map[*nodeProc]bool
}

type nodeProc struct {
	runs int // tests run, for recycleAfter
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
}

// NewNodeHost starts jobs processes of the Node.js at node; dir holds the
// runner script it writes.
func NewNodeHost(node, dir string, jobs int, timeout time.Duration) (*NodeHost, error) {
	script := filepath.Join(dir, "test262-node-host.js")
	if err := os.WriteFile(script, nodeRunner, 0o644); err != nil {
		return nil, err
	}
	h := &NodeHost{node: node, script: script, timeout: timeout, procs: make(chan *nodeProc, jobs), all: map[*nodeProc]bool{}}
	for range jobs {
		p, err := h.start()
		if err != nil {
			h.Close()
			return nil, err
		}
		h.procs <- p
	}
	return h, nil
}

func (h *NodeHost) start() (*nodeProc, error) {
	cmd := exec.Command(h.node, h.script)
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the Node.js test262 host: %w", err)
	}
	p := &nodeProc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	h.mu.Lock()
	h.all[p] = true
	h.mu.Unlock()
	return p, nil
}

func (h *NodeHost) stop(p *nodeProc) {
	p.in.Close()
	p.cmd.Process.Kill()
	p.cmd.Wait()
	h.mu.Lock()
	delete(h.all, p)
	h.mu.Unlock()
}

// Name is "node".
func (h *NodeHost) Name() string { return "node" }

// recycleAfter is how many tests a process runs before a new one takes its
// place: Node 20 collects a dropped vm context late, and a process that ran
// a thousand tests holds about 1 GB.
const recycleAfter = 500

// Run runs the test in one of the processes.
func (h *NodeHost) Run(t *Test, source string) Outcome {
	p := <-h.procs
	o, err := h.exchange(p, t, source)
	if p.runs++; err != nil || p.runs >= recycleAfter {
		h.stop(p)
		var serr error
		if p, serr = h.start(); serr != nil {
			panic(serr) // the host cannot go on without its processes
		}
	}
	h.procs <- p
	if err != nil {
		return fail("node: %v", err)
	}
	return o
}

// exchange sends one test and reads its outcome, killing the process if
// it does not answer in twice the test's timeout.
func (h *NodeHost) exchange(p *nodeProc, t *Test, source string) (Outcome, error) {
	line, err := json.Marshal(map[string]any{
		"source":        source,
		"negativePhase": t.NegativePhase,
		"negativeType":  t.NegativeType,
		"async":         t.Has("async"),
		"timeoutMs":     h.timeout.Milliseconds(),
	})
	if err != nil {
		return Outcome{}, err
	}
	timer := time.AfterFunc(2*h.timeout, func() { p.cmd.Process.Kill() })
	defer timer.Stop()
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		return Outcome{}, err
	}
	answer, err := p.out.ReadBytes('\n')
	if err != nil {
		return Outcome{}, fmt.Errorf("the process ended: %w", err)
	}
	var o struct {
		Pass    bool   `json:"pass"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(answer, &o); err != nil {
		return Outcome{}, err
	}
	if o.Pass {
		return Outcome{Pass: true}, nil
	}
	return fail("%s", o.Message), nil
}

// Close ends the processes.
func (h *NodeHost) Close() {
	h.mu.Lock()
	procs := make([]*nodeProc, 0, len(h.all))
	for p := range h.all {
		procs = append(procs, p)
	}
	h.mu.Unlock()
	for _, p := range procs {
		h.stop(p)
	}
}
