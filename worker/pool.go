package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// pool is the runtimes of one bundle. Runtimes are made on demand up to the
// pool's size and kept idle for reuse; slots bounds how many are leased.
type pool struct {
	id      string
	program jsvm.Program
	cfg     Config
	slots   chan struct{}

	mu      sync.Mutex
	idle    []jsvm.Runtime
	busy    map[jsvm.Runtime]struct{}
	retired bool
}

func newPool(id string, prg jsvm.Program, cfg Config) *pool {
	return &pool{
		id:      id,
		program: prg,
		cfg:     cfg,
		slots:   make(chan struct{}, cfg.RuntimesPerBundle),
		busy:    make(map[jsvm.Runtime]struct{}),
	}
}

// acquire waits for a slot, then reuses an idle runtime or makes one.
func (pl *pool) acquire(ctx context.Context) (jsvm.Runtime, error) {
	select {
	case pl.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	pl.mu.Lock()
	var rt jsvm.Runtime
	if n := len(pl.idle); n > 0 {
		rt = pl.idle[n-1]
		pl.idle = pl.idle[:n-1]
	}
	pl.mu.Unlock()
	if rt == nil {
		loadCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pl.cfg.RenderTimeout)
		defer cancel()
		var err error
		if rt, err = pl.newRuntime(loadCtx); err != nil {
			<-pl.slots
			return nil, &LoadError{ID: pl.id, Err: err}
		}
	}
	pl.mu.Lock()
	pl.busy[rt] = struct{}{}
	pl.mu.Unlock()
	pl.cfg.Observer.RuntimeBusy(pl.id, 1)
	return rt, nil
}

// release returns a leased runtime: a broken one, or one of a retired pool,
// is closed; the next acquire makes a fresh one in its place.
func (pl *pool) release(rt jsvm.Runtime) {
	pl.mu.Lock()
	delete(pl.busy, rt)
	keep := !rt.Broken() && !pl.retired
	if keep {
		pl.idle = append(pl.idle, rt)
	}
	pl.mu.Unlock()
	if !keep {
		if rt.Broken() {
			pl.cfg.Observer.RuntimeReplaced("broken")
			pl.cfg.Logger.Warn("runtime replaced", "bundle", pl.id, "reason", "broken")
		}
		rt.Close()
		pl.cfg.Observer.RuntimeTotal(pl.id, -1)
	}
	pl.cfg.Observer.RuntimeBusy(pl.id, -1)
	<-pl.slots
}

// newRuntime makes a runtime and loads the bundle into it.
func (pl *pool) newRuntime(ctx context.Context) (jsvm.Runtime, error) {
	rt, err := pl.cfg.Engine.NewRuntime()
	if err != nil {
		return nil, fmt.Errorf("new runtime: %w", err)
	}
	if err := rt.Load(ctx, pl.program); err != nil {
		rt.Close()
		return nil, err
	}
	pl.cfg.Observer.RuntimeTotal(pl.id, 1)
	return rt, nil
}

// drain retires the pool: idle runtimes close now, busy ones when released,
// and any still busy after timeout are interrupted.
func (pl *pool) drain(timeout time.Duration) {
	pl.mu.Lock()
	pl.retired = true
	idle := pl.idle
	pl.idle = nil
	pl.mu.Unlock()
	for _, rt := range idle {
		rt.Close()
		pl.cfg.Observer.RuntimeTotal(pl.id, -1)
	}
	deadline := time.Now().Add(timeout)
	for {
		pl.mu.Lock()
		busy := len(pl.busy)
		pl.mu.Unlock()
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for rt := range pl.busy {
		// Close interrupts the render; the lease's release closes it again harmlessly.
		rt.Close()
	}
}
