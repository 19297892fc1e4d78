package worker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestQueueWait: the queue's wait context ends at its deadline or with
// its request, whichever comes first, once something waits on it, and
// reports why (Err, context.Cause).
func TestQueueWait(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		q := &queueWait{Context: context.Background(), deadline: time.Now().Add(20 * time.Millisecond)}
		defer q.stop()
		<-q.Done()
		if !errors.Is(q.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(q), context.DeadlineExceeded) {
			t.Fatalf("Err = %v, Cause = %v; want the deadline", q.Err(), context.Cause(q))
		}
	})
	t.Run("request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		q := &queueWait{Context: ctx, deadline: time.Now().Add(time.Hour)}
		defer q.stop()
		if d, ok := q.Deadline(); !ok || time.Until(d) < 59*time.Minute {
			t.Fatalf("Deadline = %v, %v", d, ok)
		}
		if err := q.Err(); err != nil {
			t.Fatalf("Err before any wait = %v", err)
		}
		done := q.Done()
		cancel()
		<-done
		if !errors.Is(q.Err(), context.Canceled) {
			t.Fatalf("Err = %v, want canceled", q.Err())
		}
	})
	t.Run("deadline passed, nothing waited", func(t *testing.T) {
		q := &queueWait{Context: context.Background(), deadline: time.Now().Add(-time.Millisecond)}
		defer q.stop()
		if !errors.Is(q.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(q), context.DeadlineExceeded) {
			t.Fatalf("Err = %v, Cause = %v; want the deadline", q.Err(), context.Cause(q))
		}
		select {
		case <-q.Done():
		default:
			t.Fatal("Done is open past the deadline")
		}
	})
}
