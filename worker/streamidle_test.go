package worker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorender/gorender/jsvm"
)

// testSink records a stream; each Write blocks for writeDelay.
type testSink struct {
	mu         sync.Mutex
	writeDelay time.Duration
	started    bool
	body       strings.Builder
}

func (s *testSink) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	return nil
}

func (s *testSink) Write(p []byte) error {
	time.Sleep(s.writeDelay)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body.Write(p)
	return nil
}

// TestStreamIdleWatchdog: a stream that shows no activity for its idle
// window (and streamIdleGrace) is interrupted like a render at its
// deadline, its runtime replaced, even when its engine cannot end it (its
// JavaScript never yields to the engine's own idle timer); a write the
// client takes long to accept and updates that keep arriving are activity,
// as long as the render takes them.
func TestStreamIdleWatchdog(t *testing.T) {
	const idle = 100 * time.Millisecond
	p, _ := newPools(t, map[string]string{"app": app}, func(c *Config) { c.RuntimesPerBundle = 1 })
	if _, err := p.Render(context.Background(), "app", nil, "next", nil); err != nil {
		t.Fatal(err)
	}

	t.Run("never yields", func(t *testing.T) {
		sink := &testSink{}
		started := time.Now()
		_, err := p.Render(context.Background(), "app", nil, "stream-spin", &jsvm.Request{Sink: sink, StreamIdle: idle})
		var re *jsvm.RenderError
		if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout || !strings.HasPrefix(re.Text, jsvm.StreamIdleText(idle)) {
			t.Fatalf("err = %v, want the stream idle timeout", err)
		}
		if took := time.Since(started); took < idle+streamIdleGrace {
			t.Errorf("stopped after %s, before its idle window and grace", took)
		}
		if sink.body.String() != "first" {
			t.Errorf("streamed %q, want first", sink.body.String())
		}
		// The interrupted runtime was replaced: its count starts over.
		if res, err := p.Render(context.Background(), "app", nil, "count", nil); err != nil || res.Body != "0" {
			t.Fatalf("after the watchdog: %q %v, want a fresh runtime", res.Body, err)
		}
	})

	t.Run("slow write", func(t *testing.T) {
		sink := &testSink{writeDelay: 2 * (idle + streamIdleGrace)}
		if _, err := p.Render(context.Background(), "app", nil, "stream-write", &jsvm.Request{Sink: sink, StreamIdle: idle}); err != nil {
			t.Fatalf("a write the client took %s to accept: %v", sink.writeDelay, err)
		}
	})

	t.Run("updates keep it alive", func(t *testing.T) {
		updates := jsvm.NewUpdates()
		done := make(chan error, 1)
		go func() {
			_, err := p.Render(context.Background(), "app", nil, "stream-updates", &jsvm.Request{Sink: &testSink{}, StreamIdle: idle, Updates: updates})
			done <- err
		}()
		// Updates for three times the watchdog's window, each within it.
		for end := time.Now().Add(3 * (idle + streamIdleGrace)); time.Now().Before(end); {
			if err := updates.Push(jsvm.Update{BundleID: "app", Code: "x"}); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				t.Fatalf("the stream ended while updates arrived: %v", err)
			case <-time.After(idle):
			}
		}
		updates.Close(nil)
		if err := <-done; err != nil {
			t.Fatalf("stream with updates arriving: %v", err)
		}
	})

	// Updates that pile up untaken are not activity: the JavaScript that
	// would take them never yields. On main before this each arrival
	// restarted the window and the stream ran for as long as they came.
	t.Run("updates to a stream that never yields", func(t *testing.T) {
		updates := jsvm.NewUpdates()
		done := make(chan error, 1)
		go func() {
			_, err := p.Render(context.Background(), "app", nil, "stream-spin", &jsvm.Request{Sink: &testSink{}, StreamIdle: idle, Updates: updates})
			done <- err
		}()
		defer updates.Close(nil)
		for end := time.Now().Add(5 * (idle + streamIdleGrace)); ; {
			if time.Now().After(end) {
				t.Fatalf("the stream was not stopped within %s while untaken updates arrived", 5*(idle+streamIdleGrace))
			}
			if err := updates.Push(jsvm.Update{BundleID: "app", Code: "x"}); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				var re *jsvm.RenderError
				if !errors.As(err, &re) || re.Kind != jsvm.KindTimeout || !strings.HasPrefix(re.Text, jsvm.StreamIdleText(idle)) {
					t.Fatalf("err = %v, want the stream idle timeout", err)
				}
				return
			case <-time.After(idle / 2):
			}
		}
	})
}
