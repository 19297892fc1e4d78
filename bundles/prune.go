package bundles

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
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
	// declaration in .current-generations, or used in the last PruneMinIdle;
	// the three after it count each reason.
	Kept                                int
	KeptInUse, KeptDeclared, KeptRecent int
}

// PrunedBundle is one bundle removed by Prune.
type PrunedBundle struct {
	ID    string
	Bytes int64
	Idle  time.Duration // since its last use (0 if dated in the future)
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
	if maxSize <= 0 {
		maxSize = math.MaxInt64
	}
	return c.prune(maxSize, 0)
}

// prune is Prune with at most removals removals (0: no bound); a negative
// maxSize removes regardless of size (making room on a full disk).
func (c *Cache) prune(maxSize int64, removals int) (PruneReport, error) {
	var rep PruneReport
	dirs, err := c.scanBundles()
	if err != nil {
		return rep, err
	}
	for _, d := range dirs {
		rep.Size += d.size
	}
	if rep.Size <= maxSize {
		return rep, nil
	}
	declared := c.declaredBundles()
	now := time.Now()
	type candidate struct {
		bundleDir
		order  time.Time // its last use, a future date moved before all others
		recent bool
	}
	cands := make([]candidate, len(dirs))
	for i, d := range dirs {
		order, recent := c.lastUse(d.used, now)
		cands[i] = candidate{d, order, recent}
	}
	slices.SortFunc(cands, func(a, b candidate) int { return a.order.Compare(b.order) })
	for _, d := range cands {
		if rep.Size <= maxSize || (removals > 0 && len(rep.Pruned) == removals) {
			break
		}
		switch {
		case declared[d.id]:
			rep.KeptDeclared++
			continue
		case d.recent:
			rep.KeptRecent++
			continue
		}
		gone, err := c.takeAway(d.id)
		if err != nil {
			c.logger.Warn("pruning bundle", "bundle", d.id, "error", err)
		}
		if gone == "" {
			rep.KeptInUse++
			continue
		}
		if err := os.RemoveAll(gone); err != nil {
			// Gone from the cache all the same; the next pass deletes the rest.
			c.logger.Warn("deleting pruned bundle", "bundle", d.id, "path", c.rel(gone), "error", err)
		}
		rep.Size -= d.size
		idle := now.Sub(d.used)
		rep.Pruned = append(rep.Pruned, PrunedBundle{ID: d.id, Bytes: d.size, Idle: max(idle, 0)})
		args := []any{"bundle", d.id, "bytes", d.size, "cache_bytes", rep.Size}
		if idle < 0 {
			args = append(args, "dated_ahead", (-idle).Round(time.Second))
		} else {
			args = append(args, "idle", idle.Round(time.Second))
		}
		if maxSize >= 0 {
			args = append(args, "max_bytes", maxSize)
		} else {
			args = append(args, "reason", "out of space")
		}
		c.logger.Info("bundle pruned from the cache", args...)
	}
	rep.Kept = rep.KeptInUse + rep.KeptDeclared + rep.KeptRecent
	return rep, nil
}

// lastUse turns a bundle directory's mtime into its place in the pruning
// order and whether it counts as used in the last PruneMinIdle. A date up
// to PruneMinIdle ahead of now counts as now: replicas' clocks may differ a
// little. A date further ahead was stamped before the clock stepped back
// (or by a host whose clock is far off): that use came before every use
// dated since, so it sorts before all dates up to now, in its own order,
// and the bundle is not recent. Nothing then waits for a future date to
// pass.
func (c *Cache) lastUse(mtime, now time.Time) (order time.Time, recent bool) {
	since := now.Sub(mtime)
	if since < -c.pruneMinIdle {
		return time.Time{}.Add(mtime.Sub(now)), false // before any real date, in date order
	}
	return mtime, since < c.pruneMinIdle
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
	if _, recent := c.lastUse(info.ModTime(), time.Now()); recent {
		return "", nil
	}
	// A writer that takes no directory lock (an older gorender on the same
	// cache) still holds <id>.js.lock while it stores.
	if c.lockLive(c.lockPath(id)) {
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
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	c.sweepQuarantine(names)
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
				c.logger.Warn("bundle cache over its size limit: no remaining bundle may be removed",
					"cache_bytes", rep.Size, "max_bytes", maxSize, "in_use", rep.KeptInUse,
					"declared", rep.KeptDeclared, "used_in_last_"+c.pruneMinIdle.String(), rep.KeptRecent)
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

// FreeSpace makes room at once after a write to the cache's volume failed
// for lack of space, rather than at the next pruning pass: it removes the
// staging directories whose writers are gone and, if that removed none,
// the least recently used bundle that Prune may remove (not in use, not
// declared, not used in the last PruneMinIdle), whatever the size limit. It
// reports whether it removed anything. Calls of one process take turns.
func (c *Cache) FreeSpace() bool {
	c.freeMu.Lock()
	defer c.freeMu.Unlock()
	n, err := c.SweepStaging(0)
	if err != nil {
		c.logger.Warn("out of space: sweeping staging dirs", "error", err)
	}
	if n > 0 {
		c.logger.Info("out of space: removed staging dirs of writers that are gone", "removed", n)
		return true
	}
	rep, err := c.prune(-1, 1)
	if err != nil {
		c.logger.Warn("out of space: pruning the bundle cache", "error", err)
	}
	if len(rep.Pruned) == 0 {
		c.logger.Warn("out of space, and no bundle may be removed", "cache_bytes", rep.Size,
			"in_use", rep.KeptInUse, "declared", rep.KeptDeclared, "used_in_last_"+c.pruneMinIdle.String(), rep.KeptRecent)
		return false
	}
	return true
}

// wakePruner asks RunPruner for a pass; it never blocks.
func (c *Cache) wakePruner() {
	select {
	case c.stored <- struct{}{}:
	default:
	}
}
