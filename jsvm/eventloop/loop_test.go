package eventloop

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventLoop(t *testing.T) {
	l := New()
	var log []string
	add := func(s string) func() error { return func() error { log = append(log, s); return nil } }
	l.SetTimer(20*time.Millisecond, false, add("t20"))
	l.SetTimer(5*time.Millisecond, false, add("t5a"))
	l.SetTimer(5*time.Millisecond, false, add("t5b"))
	cleared := l.SetTimer(time.Millisecond, false, add("cleared"))
	l.ClearTimer(cleared)
	l.SetImmediate(add("immediate"))
	var n int
	var iv int64
	iv = l.SetTimer(2*time.Millisecond, true, func() error {
		n++
		if n == 3 {
			l.ClearTimer(iv)
		}
		return nil
	})
	if err := l.Run(context.Background(), func() bool { return false }); !errors.Is(err, ErrIdle) {
		t.Fatalf("run: %v", err)
	}
	if got := strings.Join(log, ","); got != "immediate,t5a,t5b,t20" || n != 3 {
		t.Fatalf("order %s, interval ran %d times", got, n)
	}

	// A callback error stops the loop.
	boom := errors.New("boom")
	l.SetTimer(time.Millisecond, false, func() error { return boom })
	l.SetTimer(2*time.Millisecond, false, add("after boom"))
	if err := l.Run(context.Background(), func() bool { return false }); !errors.Is(err, boom) {
		t.Fatalf("run: %v", err)
	}
	l.Reset()
	if l.pending() {
		t.Fatal("reset left work pending")
	}

	// post from another goroutine wakes a sleeping loop; hold keeps it alive.
	release := l.Hold()
	var done atomic.Bool
	go func() {
		time.Sleep(5 * time.Millisecond)
		l.Post(func() error { done.Store(true); return nil })
		release()
	}()
	if err := l.Run(context.Background(), done.Load); err != nil {
		t.Fatal(err)
	}

	// ctx ends a sleeping loop.
	l.SetTimer(time.Hour, false, add("never"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := l.Run(ctx, func() bool { return false }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run: %v", err)
	}
}

// TestTimersOfOneRunKeepTheOrderOfTheirDelays: timers are due relative to
// the loop's time (set by Tick as a render starts), not to when each was
// set: a 20 ms timer set before a slow stretch of synchronous work still
// fires after a 5 ms timer set after it, as in Node.
func TestTimersOfOneRunKeepTheOrderOfTheirDelays(t *testing.T) {
	l := New()
	l.Tick()
	var log []string
	add := func(s string) func() error { return func() error { log = append(log, s); return nil } }
	l.SetTimer(20*time.Millisecond, false, add("t20"))
	time.Sleep(30 * time.Millisecond) // the synchronous part runs on
	l.SetTimer(5*time.Millisecond, false, add("t5"))
	if err := l.Run(context.Background(), func() bool { return false }); !errors.Is(err, ErrIdle) {
		t.Fatalf("run: %v", err)
	}
	if got := strings.Join(log, ","); got != "t5,t20" {
		t.Fatalf("order %s, want t5,t20", got)
	}
}

// TestLink: a linked loop's timers run while the parent runs, keep it from
// going idle and wake it; its check's error stops the parent; a loop is
// never linked under one it drives.
func TestLink(t *testing.T) {
	parent, child := New(), New()
	var log []string
	unlink, ok := parent.Link(child, func() error { return nil })
	if !ok {
		t.Fatal("link refused")
	}
	if _, ok := child.Link(parent, nil); ok {
		t.Fatal("a cycle was linked")
	}
	if _, ok := New().Link(child, nil); ok {
		t.Fatal("a second parent was linked")
	}
	child.SetTimer(10*time.Millisecond, false, func() error { log = append(log, "child"); return nil })
	parent.SetTimer(time.Millisecond, false, func() error { log = append(log, "parent"); return nil })
	if err := parent.Run(context.Background(), func() bool { return len(log) == 2 }); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := strings.Join(log, ","); got != "parent,child" {
		t.Fatalf("order %s", got)
	}
	// A post to the child, from another goroutine, wakes the parent, which
	// the child's hold keeps waiting.
	release := child.Hold()
	go func() {
		time.Sleep(10 * time.Millisecond)
		child.Post(func() error { log = append(log, "posted"); release(); return nil })
	}()
	if err := parent.Run(context.Background(), func() bool { return len(log) == 3 }); err != nil {
		t.Fatalf("post: %v", err)
	}
	boom := errors.New("boom")
	unlink()
	if _, ok := parent.Link(child, func() error { return boom }); !ok {
		t.Fatal("relink refused")
	}
	child.SetImmediate(func() error { return nil })
	if err := parent.Run(context.Background(), func() bool { return false }); !errors.Is(err, boom) {
		t.Fatalf("check error: %v", err)
	}
}

// TestScheduled: anything that could still run counts, an unref'd timer
// and a driven loop among them; what was cleared does not.
func TestScheduled(t *testing.T) {
	l := New()
	if l.Scheduled() {
		t.Fatal("a new loop has something scheduled")
	}
	id := l.SetTimer(time.Hour, false, func() error { return nil })
	l.SetRef(id, false)
	if !l.Scheduled() {
		t.Fatal("an unref'd timer is not scheduled")
	}
	l.ClearTimer(id)
	im := l.SetImmediate(func() error { return nil })
	if !l.Scheduled() {
		t.Fatal("an immediate is not scheduled")
	}
	l.ClearTimer(im)
	release := l.Hold()
	if !l.Scheduled() {
		t.Fatal("a hold is not scheduled")
	}
	release()
	if l.Scheduled() {
		t.Fatal("cleared timers, immediates and holds are still scheduled")
	}
	unlink, ok := l.Link(New(), nil)
	if !ok || !l.Scheduled() {
		t.Fatal("a driven loop is not scheduled")
	}
	unlink()
	if l.Scheduled() {
		t.Fatal("an unlinked loop is still scheduled")
	}
}
