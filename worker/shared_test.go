package worker

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// sharedEngine is the fake engine whose runtimes share executors across bundles, as
// the node engine's processes are shared: a render needs one of its slots
// (jsvm.Reserver), and programs are told when the pools let go of them
// (jsvm.ProgramCloser).
type sharedEngine struct {
	jsvm.Engine
	slots                chan struct{}
	reserved, unreserved atomic.Int32
	closed               atomic.Int32
}

type sharedRuntime struct {
	jsvm.Runtime
	e    *sharedEngine
	held bool
}

type closingProgram struct {
	jsvm.Program
	e *sharedEngine
}

func (p *closingProgram) Close() { p.e.closed.Add(1) }

func (e *sharedEngine) Compile(name, path, source string) (jsvm.Program, error) {
	p, err := e.Engine.Compile(name, path, source)
	if err != nil {
		return nil, err
	}
	return &closingProgram{Program: p, e: e}, nil
}

func (e *sharedEngine) NewRuntime() (jsvm.Runtime, error) {
	rt, err := e.Engine.NewRuntime()
	if err != nil {
		return nil, err
	}
	return &sharedRuntime{Runtime: rt, e: e}, nil
}

func (r *sharedRuntime) Load(ctx context.Context, p jsvm.Program) error {
	return r.Runtime.Load(ctx, p.(*closingProgram).Program)
}

func (r *sharedRuntime) Reserve(ctx context.Context, _ []jsvm.Runtime) error {
	select {
	case r.e.slots <- struct{}{}:
		r.held = true
		r.e.reserved.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *sharedRuntime) Unreserve() {
	if r.held {
		r.held = false
		<-r.e.slots
		r.e.unreserved.Add(1)
	}
}

// TestSharedExecutorsQueue: with an engine whose executors are shared
// across bundles, a render whose bundle has free runtimes still waits for
// an executor, within the queue timeout, and is answered ErrQueueTimeout
// (503) when none frees up; every reservation is given back.
func TestSharedExecutorsQueue(t *testing.T) {
	e := &sharedEngine{Engine: newFakeEngine(), slots: make(chan struct{}, 1)}
	p, _ := newPools(t, map[string]string{"a": app, "b": app}, func(c *Config) {
		c.Engine = e
		c.QueueTimeout = 100 * time.Millisecond
	})
	for _, id := range []string{"a", "b"} {
		if res, err := p.Render(context.Background(), id, nil, "echo app:1", nil); err != nil || res.Body != "app:1" {
			t.Fatalf("%s: %q %v", id, res.Body, err)
		}
	}
	// A render of a holds the one executor.
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan error, 1)
	go func() {
		_, err := p.Render(ctx, "a", nil, "spin", nil)
		held <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(e.slots) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the runaway never reserved the executor")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := p.Render(context.Background(), "b", nil, "echo app:2", nil); !errors.Is(err, ErrQueueTimeout) {
		t.Fatalf("render of b while a holds the executor: %v, want ErrQueueTimeout", err)
	}
	cancel()
	<-held
	if res, err := p.Render(context.Background(), "b", nil, "echo app:3", nil); err != nil || res.Body != "app:3" {
		t.Fatalf("b once the executor is free: %q %v", res.Body, err)
	}
	if r, u := e.reserved.Load(), e.unreserved.Load(); r != 4 || u != 4 {
		t.Errorf("reserved %d, unreserved %d, want 4 and 4 (the refused render reserved nothing)", r, u)
	}
}

// TestEvictionClosesPrograms: a bundle the pools evict has its program
// closed (jsvm.ProgramCloser), so that an engine can free what it holds
// outside its runtimes.
func TestEvictionClosesPrograms(t *testing.T) {
	e := &sharedEngine{Engine: newFakeEngine(), slots: make(chan struct{}, 4)}
	p, _ := newPools(t, map[string]string{"a": app, "b": app}, func(c *Config) {
		c.Engine = e
		c.MaxBundles = 1
	})
	for _, id := range []string{"a", "b"} {
		if _, err := p.Render(context.Background(), id, nil, "echo app:1", nil); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.closed.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("programs closed: %d, want 1 (a, evicted)", e.closed.Load())
		}
		time.Sleep(time.Millisecond)
	}
}
