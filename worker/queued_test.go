package worker

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitRecorder records the queue waits the pools observe.
type waitRecorder struct {
	nopObserver
	mu    sync.Mutex
	waits []time.Duration
}

func (o *waitRecorder) QueueWait(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waits = append(o.waits, d)
}

func (o *waitRecorder) recorded() []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.waits)
}

// TestRenderQueuedInItsEngine: a render that waits inside its engine
// before it starts (a node process finishing another: jsvm.Queuer) has
// its render deadline from its start, waits at most the rest of the queue
// timeout, and that wait counts as queue wait, once per render.
func TestRenderQueuedInItsEngine(t *testing.T) {
	obs := &waitRecorder{}
	p, _ := newPools(t, map[string]string{"app": app}, func(c *Config) {
		c.Engine.(*fakeEngine).queues = true
		c.RenderTimeout = 300 * time.Millisecond
		c.QueueTimeout = 700 * time.Millisecond
		c.Observer = obs
	})

	// Queued longer than its render deadline: the deadline runs from the
	// start, so it renders.
	res, err := p.Render(context.Background(), "app", nil, "queued 400ms echo ok", nil)
	if err != nil || res.Body != "ok" {
		t.Fatalf("render queued 400 ms: %q, %v", res.Body, err)
	}
	if w := obs.recorded(); len(w) != 1 || w[0] < 400*time.Millisecond {
		t.Errorf("queue waits %v, want one of at least 400 ms", w)
	}

	// Still queued at the queue timeout: 503's error.
	_, err = p.Render(context.Background(), "app", nil, "queued 5s echo late", nil)
	if !errors.Is(err, ErrQueueTimeout) {
		t.Fatalf("render queued past the queue timeout: %v, want ErrQueueTimeout", err)
	}
	if w := obs.recorded(); len(w) != 2 || w[1] < 700*time.Millisecond {
		t.Errorf("queue waits %v, want a second of at least 700 ms", w)
	}

	// Its deadline runs from its start.
	_, err = p.Render(context.Background(), "app", nil, "queued 10ms spin", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "Render timed out after 300ms") {
		t.Fatalf("a render spinning past its deadline: %v", err)
	}
	if w := obs.recorded(); len(w) != 3 {
		t.Errorf("queue waits %v, want 3", w)
	}
}
