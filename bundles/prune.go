package bundles

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// PruneMinIdle is how long a bundle stays safe from pruning after its last
// use (a store, or a hold taken or released). It covers the moment between
// a store and the render that follows it, which holds nothing yet: Rails
// takes a second 410 for a hard error.
const PruneMinIdle = 5 * time.Minute

// prunedPrefix starts the name a bundle directory is renamed to before it
// is deleted; it is never a valid bundle id, so nothing reads it as one.
const prunedPrefix = ".gorender-pruned-"

// DirLocks reports whether this platform has the directory locks (flock)
// that make pruning safe; without them a size limit must be refused.
const DirLocks = dirLocks

// PruneReport is what one pruning pass saw and did.
type PruneReport struct {
	// Size is the bytes of the bundle directories after the pass
	// (bundles, source maps and companion files; staged uploads are not
	// counted).
	Size int64
	// Pruned lists the bundles removed, least recently used first.
	Pruned []PrunedBundle
	// Kept counts the bundles that the pass would have removed to get under
	// the limit but had to keep: in use (loaded, being stored), named by a
	// declaration in .current-generations, or used in the last PruneMinIdle.
	Kept int
}

// PrunedBundle is one bundle removed by Prune.
type PrunedBundle struct {
	ID    string
	Bytes int64
	Idle  time.Duration // since its last use
}

// bundleDir is a bundle directory as a pass finds it.
type bundleDir struct {
	id   string
	size int64
	used time.Time // the directory's mtime: the bundle's last use
}

// Prune removes least recently used bundles, with their companion files
// (PROTOCOL.md §6.3), until the bundle directories take at most maxSize
// bytes (maxSize <= 0: it only measures). It never removes a bundle that is held (Hold: loaded
// or being loaded, by this or another process sharing the cache) or being
// stored (Store holds it too, and an older writer's fresh <id>.js.lock is
// respected), nor one named by a declaration in .current-generations, nor
// one used in the last PruneMinIdle. A bundle is removed by renaming its
// directory away under an exclusive lock, then deleting it: from that
// instant it is absent for every process (a render of it answers 410 and
// Rails uploads it again). Each removal is logged. Prune waits for nothing
// that a render holds.
func (c *Cache) Prune(maxSize int64) (PruneReport, error) {
	var rep PruneReport
	dirs, err := c.scanBundles()
	if err != nil {
		return rep, err
	}
	for _, d := range dirs {
		rep.Size += d.size
	}
	if maxSize <= 0 || rep.Size <= maxSize {
		return rep, nil
	}
	declared := c.declaredBundles()
	slices.SortFunc(dirs, func(a, b bundleDir) int { return a.used.Compare(b.used) })
	for _, d := range dirs {
		if rep.Size <= maxSize {
			break
		}
		idle := time.Since(d.used)
		if declared[d.id] || idle < c.pruneMinIdle {
			rep.Kept++
			continue
		}
		gone, err := c.takeAway(d.id)
		if err != nil {
			c.logger.Warn("pruning bundle", "bundle", d.id, "error", err)
		}
		if gone == "" {
			rep.Kept++
			continue
		}
		if err := os.RemoveAll(gone); err != nil {
			// Gone from the cache all the same; the next pass deletes the rest.
			c.logger.Warn("deleting pruned bundle", "bundle", d.id, "path", gone, "error", err)
		}
		rep.Size -= d.size
		rep.Pruned = append(rep.Pruned, PrunedBundle{ID: d.id, Bytes: d.size, Idle: idle})
		c.logger.Info("bundle pruned from the cache", "bundle", d.id, "bytes", d.size,
			"idle", idle.Round(time.Second), "cache_bytes", rep.Size, "max_bytes", maxSize)
	}
	return rep, nil
}

// takeAway renames bundle id's directory out of the cache, unless it is in
// use, and returns where it went ("" when it was kept) for the caller to
// delete without holding anything.
func (c *Cache) takeAway(id string) (gone string, err error) {
	unlock, ok := c.locks.tryLock(id) // a store of this process
	if !ok {
		return "", nil
	}
	defer unlock()
	dir := c.Dir(id)
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil // another process pruned it
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	locked, err := tryLockExclusive(f)
	if err != nil {
		c.warnNoDirLock(err)
		return "", nil
	}
	if !locked {
		return "", nil // held: loaded, loading or being stored somewhere
	}
	if same, err := sameDir(f, dir); !same || err != nil {
		return "", nil // pruned, and maybe stored again, since we opened it
	}
	// Every holder marks the directory used before it lets go, so a use
	// since the scan shows here.
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if time.Since(info.ModTime()) < c.pruneMinIdle {
		return "", nil
	}
	// A writer that takes no directory lock (an older gorender on the same
	// cache) still holds <id>.js.lock while it stores.
	if li, err := os.Lstat(c.lockPath(id)); err == nil && time.Since(li.ModTime()) <= c.lockStale {
		return "", nil
	}
	gone = filepath.Join(c.root, prunedPrefix+randomHex(8))
	if err := os.Rename(dir, gone); err != nil {
		return "", fmt.Errorf("remove bundle %s: %w", id, err)
	}
	return gone, nil
}

// scanBundles lists the bundle directories with their sizes and last use,
// and deletes what an interrupted pruning left behind.
func (c *Cache) scanBundles() ([]bundleDir, error) {
	entries, err := os.ReadDir(c.root)
	if err != nil {
		return nil, fmt.Errorf("scan bundle cache: %w", err)
	}
	var dirs []bundleDir
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, prunedPrefix) {
			if err := os.RemoveAll(filepath.Join(c.root, name)); err != nil {
				c.logger.Warn("deleting pruned bundle", "path", filepath.Join(c.root, name), "error", err)
			}
			continue
		}
		if !e.IsDir() || !ValidID(name) { // uploads/ and dot-names are not ids
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		d := bundleDir{id: name, used: info.ModTime()}
		_ = filepath.WalkDir(filepath.Join(c.root, name), func(_ string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil // a file removed meanwhile is not counted
			}
			if fi, err := e.Info(); err == nil {
				d.size += fi.Size()
			}
			return nil
		})
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// declaredBundles returns the bundle ids named by every declaration in
// <root>/.current-generations (the configured current-generation manifest
// is one of them): a process sharing the cache may be about to load them.
// A declaration that cannot be read protects nothing and is logged.
func (c *Cache) declaredBundles() map[string]bool {
	declared := map[string]bool{}
	dir := filepath.Join(c.root, generationsDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.logger.Warn("reading current-generation declarations", "error", err)
		}
		return declared
	}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".json" {
			continue
		}
		path := filepath.Join(dir, e.Name())
		ids, err := readDeclaration(path)
		if err != nil {
			c.logger.Warn("current-generation declaration ignored by pruning", "path", path, "error", err)
			continue
		}
		for _, id := range ids {
			declared[id] = true
		}
	}
	return declared
}

// RunPruner prunes the cache to maxSize (see Prune) when it starts, after
// every store that added files, and every interval, until ctx ends; each
// pass's report goes to report (for metrics). maxSize <= 0 only measures.
// Passes run on this goroutine: a render never waits for one.
func (c *Cache) RunPruner(ctx context.Context, maxSize int64, every time.Duration, report func(PruneReport)) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	over := false // warned that the cache stays over its limit
	select {
	case <-c.stored: // the first pass covers stores made before it
	default:
	}
	for {
		rep, err := c.Prune(maxSize)
		if err != nil {
			c.logger.Error("pruning the bundle cache", "error", err)
		} else {
			report(rep)
			switch stuck := maxSize > 0 && rep.Size > maxSize; {
			case stuck && !over:
				c.logger.Warn("bundle cache over its size limit: every remaining bundle is in use, declared in .current-generations or used in the last "+c.pruneMinIdle.String(),
					"cache_bytes", rep.Size, "max_bytes", maxSize, "kept", rep.Kept)
				over = true
			case !stuck && over:
				c.logger.Info("bundle cache back under its size limit", "cache_bytes", rep.Size, "max_bytes", maxSize)
				over = false
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-c.stored:
		}
	}
}

// wakePruner asks RunPruner for a pass; it never blocks.
func (c *Cache) wakePruner() {
	select {
	case c.stored <- struct{}{}:
	default:
	}
}
