package bundles

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestKeyedMutex(t *testing.T) {
	k := keyedMutex{m: make(map[string]*keyedEntry)}
	var (
		wg      sync.WaitGroup
		inside  atomic.Int32
		maxSeen atomic.Int32
	)
	for range 20 {
		wg.Go(func() {
			unlock, err := k.lock(context.Background(), "a")
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			if n > maxSeen.Load() {
				maxSeen.Store(n)
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			unlock()
		})
	}
	wg.Wait()
	if maxSeen.Load() != 1 {
		t.Errorf("%d holders at once", maxSeen.Load())
	}
	if k.size() != 0 {
		t.Errorf("map keeps %d keys after all unlocks", k.size())
	}

	// Different keys do not block each other.
	u1, err := k.lock(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	u2, err := k.lock(ctx, "y")
	if err != nil {
		t.Fatalf("lock(y) blocked by x: %v", err)
	}
	// A waiter that gives up is forgotten.
	short, cancelShort := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelShort()
	if _, err := k.lock(short, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock(x) while held = %v, want deadline", err)
	}
	u1()
	u2()
	if k.size() != 0 {
		t.Errorf("map keeps %d keys", k.size())
	}
}

func TestLockFileHeartbeatPreventsTakeover(t *testing.T) {
	c := newTestCache(t)
	c.lockStale = 200 * time.Millisecond
	c.lockPoll = 10 * time.Millisecond
	other, err := Open(c.Root(), nil) // another process
	if err != nil {
		t.Fatal(err)
	}
	other.lockStale, other.lockPoll = c.lockStale, c.lockPoll

	path := filepath.Join(c.Root(), "b.js.lock")
	l, err := c.lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	// Held three times the stale age by a live writer: not taken over.
	ctx, cancel := context.WithTimeout(context.Background(), 3*c.lockStale)
	defer cancel()
	if _, err := other.lockFile(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock of a live holder taken over: %v", err)
	}
	c.unlock(l)
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("lock not removed: %v", err)
	}
	l2, err := other.lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	other.unlock(l2)
}

func TestUnlockLeavesTakenOverLock(t *testing.T) {
	c := newTestCache(t)
	path := filepath.Join(c.Root(), "b.js.lock")
	l, err := c.lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	// Another process judged us stale and took the lock.
	if err := os.WriteFile(path, []byte("someone else"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.unlock(l)
	if got := readFile(t, path); got != "someone else" {
		t.Errorf("foreign lock removed or changed: %q", got)
	}
}

// TestLockFileFlockedIsLive: a lock file whose flock its holder keeps is
// live however long it looks unchanged (the holder's heartbeat is an hour
// away here) and whatever its date.
func TestLockFileFlockedIsLive(t *testing.T) {
	c := newTestCache(t)
	c.lockStale = time.Hour
	other, err := Open(c.Root(), nil) // another process
	if err != nil {
		t.Fatal(err)
	}
	other.lockStale, other.lockPoll = 100*time.Millisecond, 10*time.Millisecond
	path := filepath.Join(c.Root(), "b.js.lock")
	l, err := c.lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.unlock(l)
	for _, at := range []time.Time{time.Now().Add(-time.Hour), time.Now().AddDate(1, 0, 0)} {
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*other.lockStale)
		_, err := other.lockFile(ctx, path)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("flocked lock dated %v taken over: %v", at, err)
		}
	}
}

// TestLockFileOtherHostDatedAhead: a lock of another host that no flock
// holds, dated a year ahead, is taken over once it has looked unchanged
// for the stale age, not when its date has passed.
func TestLockFileOtherHostDatedAhead(t *testing.T) {
	c := newTestCache(t)
	c.lockStale, c.lockPoll = 200*time.Millisecond, 10*time.Millisecond
	path := filepath.Join(c.Root(), "b.js.lock")
	writeFile(t, path, "pid=1 host=elsewhere token=x\n")
	ahead := time.Now().AddDate(1, 0, 0)
	if err := os.Chtimes(path, ahead, ahead); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := c.lockFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	c.unlock(l)
	if d := time.Since(start); d < c.lockStale {
		t.Errorf("taken over after %v, before it looked unchanged for %v", d, c.lockStale)
	}
}
