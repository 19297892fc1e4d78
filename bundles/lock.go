package bundles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// keyedMutex is a set of context-aware mutexes, one per key, created on
// demand and dropped when nobody holds or waits for them, so the map does not
// grow without bound.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	sem  chan struct{} // capacity 1: full while held
	refs int           // holders + waiters
}

// lock takes the mutex of key, waiting until it is free or ctx is done. On
// success the returned func releases it.
func (k *keyedMutex) lock(ctx context.Context, key string) (unlock func(), err error) {
	e := k.ref(key)
	select {
	case e.sem <- struct{}{}:
		return k.unlocker(key, e), nil
	case <-ctx.Done():
		k.release(key, e)
		return nil, ctx.Err()
	}
}

// tryLock takes the mutex of key if it is free; ok is false when it is not.
func (k *keyedMutex) tryLock(key string) (unlock func(), ok bool) {
	e := k.ref(key)
	select {
	case e.sem <- struct{}{}:
		return k.unlocker(key, e), true
	default:
		k.release(key, e)
		return nil, false
	}
}

// ref returns the entry of key, made if needed, counting the caller in.
func (k *keyedMutex) ref(key string) *keyedEntry {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{sem: make(chan struct{}, 1)}
		k.m[key] = e
	}
	e.refs++
	return e
}

func (k *keyedMutex) unlocker(key string, e *keyedEntry) func() {
	return func() {
		<-e.sem
		k.release(key, e)
	}
}

func (k *keyedMutex) release(key string, e *keyedEntry) {
	k.mu.Lock()
	e.refs--
	if e.refs == 0 {
		delete(k.m, key)
	}
	k.mu.Unlock()
}

// size returns how many keys are tracked (for tests).
func (k *keyedMutex) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}

// fileLock is a held <id>.js.lock.
type fileLock struct {
	path  string
	token []byte
	stop  chan struct{}
	done  chan struct{}
}

// lockFile takes the cross-process lock file at path, created with O_EXCL.
// While it exists and its mtime is younger than c.lockStale, lockFile polls
// every c.lockPoll until it can take it or ctx is done; an older one is
// considered left by a dead process, removed and retaken. While held, the
// lock's mtime is refreshed every lockStale/4 so that a slow but live writer
// is not taken over.
func (c *Cache) lockFile(ctx context.Context, path string) (*fileLock, error) {
	host, _ := os.Hostname()
	token := fmt.Appendf(nil, "pid=%d host=%s token=%s\n", os.Getpid(), host, randomHex(16))
	var timer *time.Timer
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
		if err == nil {
			_, werr := f.Write(token)
			cerr := f.Close()
			if werr = errors.Join(werr, cerr); werr != nil {
				_ = os.Remove(path)
				return nil, fmt.Errorf("write lock file %s: %w", path, werr)
			}
			l := &fileLock{path: path, token: token, stop: make(chan struct{}), done: make(chan struct{})}
			go c.heartbeat(l)
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create lock file %s: %w", path, err)
		}
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // released meanwhile: try again at once
		case err != nil:
			return nil, fmt.Errorf("stat lock file %s: %w", path, err)
		case time.Since(fi.ModTime()) > c.lockStale:
			c.logger.Warn("taking over stale bundle lock", "path", path, "age", time.Since(fi.ModTime()).Round(time.Millisecond))
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("remove stale lock file %s: %w", path, err)
			}
			continue
		}
		if timer == nil {
			timer = time.NewTimer(c.lockPoll)
			defer timer.Stop()
		} else {
			timer.Reset(c.lockPoll)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for lock file %s: %w", path, ctx.Err())
		case <-timer.C:
		}
	}
}

func (c *Cache) heartbeat(l *fileLock) {
	defer close(l.done)
	every := c.lockStale / 4
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			now := time.Now()
			if err := os.Chtimes(l.path, now, now); err != nil {
				c.logger.Warn("refreshing bundle lock", "path", l.path, "error", err)
			}
		}
	}
}

// unlock stops the heartbeat and removes the lock file if it is still ours
// (it may have been taken over as stale by another process).
func (c *Cache) unlock(l *fileLock) {
	close(l.stop)
	<-l.done
	got, err := os.ReadFile(l.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.logger.Warn("bundle lock vanished while held", "path", l.path)
		return
	case err != nil:
		c.logger.Error("reading bundle lock before release", "path", l.path, "error", err)
	case !bytes.Equal(got, l.token):
		c.logger.Warn("bundle lock was taken over while held; leaving it", "path", l.path)
		return
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.logger.Error("removing bundle lock", "path", l.path, "error", err)
	}
}
