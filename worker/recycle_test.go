package worker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// counted is a bundle whose runtimes each count their own renders (next).
const counted = "tag counted"

func TestMaxRendersPerRuntimeRecycles(t *testing.T) {
	p, _ := newPools(t, map[string]string{"app": counted}, func(c *Config) {
		c.RuntimesPerBundle = 1
		c.MaxRendersPerRuntime = 3
	})
	var got []string
	for range 7 {
		res, err := p.Render(context.Background(), "app", nil, "next", nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Body)
	}
	// Every third render retires the runtime; its replacement starts over.
	if want := "1 2 3 1 2 3 1"; strings.Join(got, " ") != want {
		t.Fatalf("renders per runtime = %v, want %s", got, want)
	}
}

func TestStuckRuntimeIsQuarantined(t *testing.T) {
	p, _ := newPools(t, map[string]string{"app": counted}, func(c *Config) {
		c.RuntimesPerBundle = 1
		c.RenderTimeout = 200 * time.Millisecond
	})
	started := time.Now()
	_, err := p.Render(context.Background(), "app", nil, "stuck", nil)
	elapsed := time.Since(started)
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout || !strings.Contains(re.Text, "did not stop") {
		t.Fatalf("err = %v", err)
	}
	if elapsed > 5*time.Second {
		t.Fatalf("answered after %v: the stuck runtime held the request", elapsed)
	}
	// The only slot was freed: the pool serves with a fresh runtime.
	res, err := p.Render(context.Background(), "app", nil, "next", nil)
	if err != nil || res.Body != "1" {
		t.Fatalf("after quarantine: %q %v", res.Body, err)
	}
}

// TestScheduledRecyclingLosesNoRender: renders go on while the recycler
// replaces every runtime, one at a time: none fails, and fresh runtimes
// (whose first render answers 1) serve them. It renders until three fresh
// runtimes served, which takes a few recycling rounds (50 ms each).
func TestScheduledRecyclingLosesNoRender(t *testing.T) {
	p, _ := newPools(t, map[string]string{"app": counted}, func(c *Config) {
		c.RuntimesPerBundle = 2
		c.RecycleInterval = 50 * time.Millisecond
		c.RecycleDelay = 10 * time.Millisecond
		c.RecycleGrace = time.Second
	})
	ctx, cancel := context.WithCancel(context.Background())
	var recycler, renders sync.WaitGroup
	recycler.Go(func() { p.RunRecycler(ctx) })
	var ok, failed, restarts atomic.Int32
	giveUp := time.Now().Add(30 * time.Second)
	for range 4 {
		renders.Go(func() {
			for restarts.Load() < 3 && failed.Load() == 0 && time.Now().Before(giveUp) {
				res, err := p.Render(context.Background(), "app", nil, "next", nil)
				if err != nil {
					failed.Add(1)
					t.Errorf("render failed during recycling: %v", err)
					return
				}
				ok.Add(1)
				if res.Body == "1" {
					restarts.Add(1)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	renders.Wait()
	cancel()
	recycler.Wait()
	if failed.Load() > 0 || ok.Load() == 0 {
		t.Fatalf("ok=%d failed=%d", ok.Load(), failed.Load())
	}
	if restarts.Load() < 3 {
		t.Fatalf("only %d fresh runtimes served in 30 s: recycling did not happen", restarts.Load())
	}
}

func TestMemoryGuardStopsAHostileRender(t *testing.T) {
	p, _ := newPools(t, map[string]string{"app": counted}, func(c *Config) {
		c.RuntimesPerBundle = 2
		c.RenderTimeout = 30 * time.Second
	})
	if _, err := p.Render(context.Background(), "app", nil, "next", nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.RunMemoryGuard(ctx, heapBytes()+64<<20, 20*time.Millisecond)
	_, err := p.Render(context.Background(), "app", nil, "hoard", nil)
	var re *jsvm.RenderError
	if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout || !strings.Contains(re.Text, "RENDERER_MAX_HEAP") {
		t.Fatalf("err = %v", err)
	}
	if res, err := p.Render(context.Background(), "app", nil, "next", nil); err != nil || res.Body == "" {
		t.Fatalf("pool did not recover: %v", err)
	}
}

// TestQuarantineBound: while fewer than MaxQuarantined runtimes are stuck,
// a stuck one is replaced and its slot freed; at the bound QuarantineFull
// reports it, and past it a stuck runtime keeps its slot (renders wait)
// until it stops, after which all is as before.
func TestQuarantineBound(t *testing.T) {
	var engine *fakeEngine
	p, _ := newPools(t, map[string]string{"app": app}, func(c *Config) {
		engine = c.Engine.(*fakeEngine)
		c.RuntimesPerBundle = 1
		c.RenderTimeout = 100 * time.Millisecond
		c.QueueTimeout = 300 * time.Millisecond
		c.MaxQuarantined = 1
	})
	render := func(code string) (string, error) {
		res, err := p.Render(context.Background(), "app", nil, code, nil)
		return res.Body, err
	}
	if _, err := render("stuck"); err == nil || !strings.Contains(err.Error(), "did not stop") {
		t.Fatalf("first stuck render: %v", err)
	}
	if !p.QuarantineFull() {
		t.Error("QuarantineFull is false with 1 of 1 quarantined")
	}
	if body, err := render("echo a"); err != nil || body != "a" {
		t.Fatalf("a render after the first stuck one (replaced): %q %v", body, err)
	}
	if _, err := render("stuck"); err == nil || !strings.Contains(err.Error(), "did not stop") {
		t.Fatalf("second stuck render: %v", err)
	}
	if _, err := render("echo b"); !errors.Is(err, ErrQueueTimeout) {
		t.Fatalf("a render while the only slot is held by a stuck runtime past the bound: %v, want the queue timeout", err)
	}
	engine.unstick()
	deadline := time.Now().Add(10 * time.Second)
	for p.QuarantineFull() {
		if time.Now().After(deadline) {
			t.Fatal("QuarantineFull still true after the stuck runtimes returned")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if body, err := render("echo c"); err != nil || body != "c" {
		t.Fatalf("a render once the stuck runtimes returned: %q %v", body, err)
	}
}
