package bundles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// holdWait bounds how long Hold waits for a pruner's exclusive lock on a
// bundle directory to go; a pruner holds it only while it checks and renames
// that one directory.
const (
	holdWait = 10 * time.Second
	holdPoll = time.Millisecond
)

// Hold marks bundle id as in use until release is called: no pruner, of
// this process or of another one sharing the cache, removes a held bundle.
// A hold is a shared flock(2) on the bundle's directory, so the kernel
// drops it when the process dies and no holder is ever stale. Taking and
// releasing a hold set the directory's mtime to now: that is the bundle's
// last use, by which the pruner orders bundles (least recently used first).
// A bundle that is not present yields an error wrapping fs.ErrNotExist.
// release may be called more than once.
func (c *Cache) Hold(id string) (release func(), err error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	f, err := c.holdDir(id)
	if err != nil {
		return nil, err
	}
	if !c.Has(id) {
		_ = f.Close()
		return nil, fmt.Errorf("hold bundle %s: %w", id, fs.ErrNotExist)
	}
	c.touch(id)
	c.heldMu.Lock()
	c.held[id]++
	c.heldMu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { c.unhold(id, f) }) }, nil
}

// isHeld reports whether this process holds bundle id.
func (c *Cache) isHeld(id string) bool {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	return c.held[id] > 0
}

// unhold ends a hold: the directory's mtime is refreshed before the lock
// goes, so a pruner that takes the directory next sees it as just used.
func (c *Cache) unhold(id string, f *os.File) {
	c.heldMu.Lock()
	if c.held[id]--; c.held[id] <= 0 {
		delete(c.held, id)
	}
	c.heldMu.Unlock()
	c.touch(id)
	if err := f.Close(); err != nil {
		c.logger.Warn("releasing bundle hold", "bundle", id, "error", err)
	}
}

// holdDir opens <root>/<id> and takes a shared lock on it. A pruner renames
// a directory away while it holds the exclusive lock, so once the shared
// lock is ours the directory must still be at its path; if it is not, it
// was pruned (an error wrapping fs.ErrNotExist) or pruned and made again
// (hold the new one).
func (c *Cache) holdDir(id string) (*os.File, error) {
	dir := c.Dir(id)
	deadline := time.Now().Add(holdWait)
	for {
		f, err := os.Open(dir)
		if err != nil {
			return nil, fmt.Errorf("hold bundle %s: %w", id, err)
		}
		locked, err := tryLockShared(f)
		if err != nil {
			// The file system has no flock (some network file systems):
			// the pruner cannot take the lock either, so it prunes nothing
			// here and the bundle is safe without one.
			c.warnNoDirLock(err)
			return f, nil
		}
		if !locked {
			_ = f.Close()
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("hold bundle %s: its directory stayed locked by a pruner for %s", id, holdWait)
			}
			time.Sleep(holdPoll)
			continue
		}
		same, err := sameDir(f, dir)
		if same {
			return f, nil
		}
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("hold bundle %s: %w", id, err)
		}
	}
}

// warnNoDirLock says once that flock fails on the cache's file system.
func (c *Cache) warnNoDirLock(err error) {
	c.noDirLock.Do(func() {
		c.logger.Warn("bundle directories cannot be locked on this file system: pruning (RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE) removes nothing", "error", err)
	})
}

// sameDir reports whether the open directory f is still the one at path;
// an error wraps fs.ErrNotExist when nothing is at path any more.
func sameDir(f *os.File, path string) (bool, error) {
	opened, err := f.Stat()
	if err != nil {
		return false, err
	}
	now, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	return os.SameFile(opened, now), nil
}

// touch sets the mtime of bundle id's directory to now: its last use.
func (c *Cache) touch(id string) {
	now := time.Now()
	if err := os.Chtimes(c.Dir(id), now, now); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.logger.Debug("marking bundle used", "bundle", id, "error", err)
	}
}
