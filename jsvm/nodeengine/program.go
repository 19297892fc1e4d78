// Programs: the bundles the engine knows and their loading into a process.

package nodeengine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/jsvm/sourcemap"
)

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
