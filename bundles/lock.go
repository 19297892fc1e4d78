package bundles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	file  *os.File // holds the flock that tells every process the lock is live
	stop  chan struct{}
	done  chan struct{}
}

// lockFile takes the cross-process lock file at path. The file is made
// under a temporary name, flocked, filled with its holder's pid, host and a
// token, then hard-linked to path (which fails if path exists): a lock file
// at path always carries a flock while its holder lives, and the kernel
// drops that flock when the holder dies. While another lock is at path,
// lockFile polls every c.lockPoll until it can take it or ctx is done:
//
//   - a lock whose flock is held is live, however old its date;
//   - one whose flock is free and whose holder is provably gone (this host,
//     and its pid dead or ours) is taken over at once;
//   - any other (a holder on another host, a gorender that takes no flock,
//     a file system without flock) is taken over once this process has seen
//     it unchanged for c.lockStale on its own monotonic clock. Its holder
//     refreshes its mtime every lockStale/4; the date itself is never
//     compared with the clock, so a clock step or a host whose clock runs
//     ahead neither blocks a lock forever nor breaks a live one.
func (c *Cache) lockFile(ctx context.Context, path string) (*fileLock, error) {
	token := fmt.Appendf(nil, "pid=%d host=%s token=%s\n", os.Getpid(), hostname(), randomHex(16))
	var timer *time.Timer
	var seen lockSighting
	for {
		f, err := c.createLock(path, token)
		if err == nil {
			l := &fileLock{path: path, token: token, file: f, stop: make(chan struct{}), done: make(chan struct{})}
			go c.heartbeat(l)
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		broken, err := c.breakLock(path, &seen)
		if err != nil {
			return nil, err
		}
		if broken {
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
			return nil, fmt.Errorf("wait for lock file %s: %w", c.rel(path), ctx.Err())
		case <-timer.C:
		}
	}
}

// lockTmpPrefix starts the temporary name of a lock file being made.
const lockTmpPrefix = ".gorender-lock-"

// createLock makes the lock file at path, flocked and holding token; an
// error wraps fs.ErrExist when another lock is there.
func (c *Cache) createLock(path string, token []byte) (*os.File, error) {
	tmp := filepath.Join(filepath.Dir(path), lockTmpPrefix+randomHex(8))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return nil, fmt.Errorf("create lock file %s: %w", c.rel(path), err)
	}
	if _, err := tryLockExclusive(f); err != nil {
		c.warnNoDirLock(err) // the lock works without; only its liveness is slower to see
	}
	_, err = f.Write(token)
	if err == nil {
		err = os.Link(tmp, path)
	}
	_ = os.Remove(tmp)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// No hard links here: create it in place (for a moment it is
		// empty and unflocked; a waiter then only takes it over once it
		// has seen it unchanged for the stale age).
		_ = f.Close()
		return c.createLockInPlace(path, token)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("create lock file %s: %w", c.rel(path), err)
	}
	return f, nil
}

// createLockInPlace is createLock on a file system without hard links.
func (c *Cache) createLockInPlace(path string, token []byte) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return nil, fmt.Errorf("create lock file %s: %w", c.rel(path), err)
	}
	_, _ = tryLockExclusive(f)
	if _, err := f.Write(token); err != nil {
		_ = os.Remove(path)
		_ = f.Close()
		return nil, fmt.Errorf("write lock file %s: %w", c.rel(path), err)
	}
	return f, nil
}

// openToLock opens a lock file to test its flock: for writing where
// allowed, since an NFS client emulates flock with a POSIX write lock, which
// needs a file open for writing.
func openToLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrPermission) {
		return os.Open(path)
	}
	return f, err
}

// lockSighting is what a waiter last saw of a lock file, and since when
// (monotonic time) it has looked the same.
type lockSighting struct {
	info    os.FileInfo
	content string
	since   time.Time
}

// unchangedFor records a look at a lock file and returns how long it has
// looked the same: same file, mtime and content.
func (s *lockSighting) unchangedFor(info os.FileInfo, content string) time.Duration {
	if s.info == nil || !os.SameFile(s.info, info) || !s.info.ModTime().Equal(info.ModTime()) || s.content != content {
		*s = lockSighting{info: info, content: content, since: time.Now()}
		return 0
	}
	return time.Since(s.since)
}

// breakLock removes the lock file at path if its holder is gone (see
// lockFile) and reports whether the caller should try to take it now.
func (c *Cache) breakLock(path string, seen *lockSighting) (bool, error) {
	f, err := openToLock(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil // released meanwhile
	}
	if err != nil {
		return false, fmt.Errorf("open lock file %s: %w", c.rel(path), err)
	}
	defer f.Close()
	locked, flockErr := tryLockExclusive(f)
	if flockErr == nil && !locked {
		return false, nil // its holder lives
	}
	// Holding its flock now, no other process can be breaking this lock;
	// check that it is still the one at path.
	info, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat lock file %s: %w", c.rel(path), err)
	}
	if now, err := os.Lstat(path); err != nil || !os.SameFile(info, now) {
		return true, nil
	}
	content, err := io.ReadAll(io.LimitReader(f, 512))
	if err != nil {
		return false, fmt.Errorf("read lock file %s: %w", c.rel(path), err)
	}
	var why string
	switch {
	case flockErr == nil && holderGone(string(content)):
		why = "its holder is gone"
	case seen.unchangedFor(info, string(content)) > c.lockStale:
		why = "unchanged for " + c.lockStale.String()
	default:
		return false, nil
	}
	c.logger.Warn("taking over bundle lock", "path", c.rel(path), "reason", why)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("remove stale lock file %s: %w", c.rel(path), err)
	}
	return true, nil
}

// lockLive reports whether the lock file at path may belong to a live
// writer, for the pruner, which must not wait: its flock is held, or it is
// free and the holder is not provably gone and its date is within the stale
// age of now. A date further ahead is a clock step, not a live writer (a
// writer on this host holds the flock; one on another host refreshes the
// date every few seconds).
func (c *Cache) lockLive(path string) bool {
	f, err := openToLock(path)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	locked, flockErr := tryLockExclusive(f)
	if flockErr == nil && !locked {
		return true
	}
	content, _ := io.ReadAll(io.LimitReader(f, 512))
	if flockErr == nil && holderGone(string(content)) {
		return false
	}
	info, err := f.Stat()
	if err != nil {
		return true
	}
	age := time.Since(info.ModTime())
	return age <= c.lockStale && age >= -c.lockStale
}

// holderGone reports whether the pid and host a lock or staging directory
// names ("pid=N host=H ...") are provably no longer running: the host is
// this one and the pid is dead, or is this process (which would hold the
// flock that was just found free).
func holderGone(owner string) bool {
	var pid int
	var host string
	for _, f := range strings.Fields(owner) {
		switch k, v, _ := strings.Cut(f, "="); k {
		case "pid":
			pid, _ = strconv.Atoi(v)
		case "host":
			host = v
		}
	}
	if pid <= 0 || host == "" || host != hostname() {
		return false
	}
	return pid == os.Getpid() || !pidAlive(pid)
}

// hostname is this host's name, "" if unknown (then no holder is provably
// gone).
func hostname() string {
	h, _ := os.Hostname()
	return h
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
				c.logger.Warn("refreshing bundle lock", "path", c.rel(l.path), "error", err)
			}
		}
	}
}

// unlock stops the heartbeat and removes the lock file if it is still ours
// (it may have been taken over by a process on another host that saw it
// unchanged for the stale age), then lets its flock go.
func (c *Cache) unlock(l *fileLock) {
	close(l.stop)
	<-l.done
	defer l.file.Close()
	got, err := os.ReadFile(l.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.logger.Warn("bundle lock vanished while held", "path", c.rel(l.path))
		return
	case err != nil:
		c.logger.Error("reading bundle lock before release", "path", c.rel(l.path), "error", err)
	case !bytes.Equal(got, l.token):
		c.logger.Warn("bundle lock was taken over while held; leaving it", "path", c.rel(l.path))
		return
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.logger.Error("removing bundle lock", "path", c.rel(l.path), "error", err)
	}
}
