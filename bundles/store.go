package bundles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// tmpPrefix starts the name of a companion file being written into a bundle
// directory; it never collides with a valid bundle file name (ids cannot start
// with '.').
const tmpPrefix = ".gorender-tmp-"

// Upload is what one request stores: its bundles and its companion files,
// all already staged (see Staging).
type Upload struct {
	// Bundles maps a bundle id to the staged file holding it. Each bundle
	// needs its own staged file: Store moves it into place.
	Bundles map[string]string
	// Assets are companion files, stored beside every bundle of the upload.
	// Their staged files are copied (or hard-linked), never moved. When two
	// assets share a name, the later one wins.
	Assets []Asset
}

// Asset is one staged companion file.
type Asset struct {
	Name string // final file name, checked with ValidAssetName
	Path string // staged file
}

// StoreResult tells which bundles Store wrote and which were already present
// (first writer wins). Both lists are sorted.
type StoreResult struct {
	Stored   []string
	Existing []string
}

// Store moves the bundles of up into the cache and writes its companion files
// beside each of them (PROTOCOL.md §6.3):
//
//   - Every id and asset name is validated first; a bad one yields an
//     *InvalidNameError and nothing is written. An asset may not be named
//     "<id>.js" or "<id>.js.lock" for a bundle of the upload.
//   - Writers of one id are serialised, in process by a keyed mutex and
//     across processes by the lock file <root>/<id>/<id>.js.lock (O_EXCL,
//     stale after 20 s, always removed afterwards). Waiting honours ctx.
//   - A bundle already present is left untouched (first writer wins).
//     Otherwise its staged file is fsynced and atomically linked or renamed to
//     <root>/<id>/<id>.js and the directory fsynced, so no partial bundle is
//     ever visible. A present bundle that fails its check (see
//     checkStored: unreadable, empty, not what was stored, or a pre-seed
//     that differs from the upload) is quarantined and replaced.
//   - Companion files are (re)written on every upload, even for a bundle
//     that was already present, through a temporary file in the bundle
//     directory that is fsynced and renamed over the final name. They are
//     in place (and durable) before a new bundle appears, so a render that
//     finds the bundle finds its companions.
//
// Bundles are processed in id order; on error the result lists what was done
// before it. Store leaves the staging directory to the caller
// (Staging.Remove).
func (c *Cache) Store(ctx context.Context, up Upload) (StoreResult, error) {
	var res StoreResult
	ids, err := validateUpload(up)
	if err != nil {
		return res, err
	}
	for _, id := range ids {
		existed, err := c.storeOne(ctx, id, up.Bundles[id], up.Assets)
		if errors.Is(err, syscall.ENOSPC) && c.FreeSpace() {
			existed, err = c.storeOne(ctx, id, up.Bundles[id], up.Assets) // once
		}
		if err != nil {
			return res, err
		}
		if existed {
			res.Existing = append(res.Existing, id)
		} else {
			res.Stored = append(res.Stored, id)
		}
	}
	if len(res.Stored) > 0 || len(up.Assets) > 0 {
		c.wakePruner()
	}
	return res, nil
}

// Validate checks every name of up as Store does first: an
// *InvalidNameError for a bad one. A caller that stores up's bundles one
// Store at a time checks the whole upload with it first, so that a bad
// name still stores nothing.
func (up Upload) Validate() error {
	_, err := validateUpload(up)
	return err
}

// validateUpload checks every name of up and returns its ids sorted.
func validateUpload(up Upload) ([]string, error) {
	ids := make([]string, 0, len(up.Bundles))
	paths := make(map[string]string, len(up.Bundles))
	for id, path := range up.Bundles {
		if err := checkID(id); err != nil {
			return nil, err
		}
		if path == "" {
			return nil, fmt.Errorf("store bundle %s: empty staged path", id)
		}
		if other, dup := paths[path]; dup {
			return nil, fmt.Errorf("store bundles %s and %s: same staged file %s", other, id, path)
		}
		paths[path] = id
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, a := range up.Assets {
		if !ValidAssetName(a.Name) {
			return nil, &InvalidNameError{Kind: KindAssetName, Name: a.Name}
		}
		if a.Path == "" {
			return nil, fmt.Errorf("store asset %q: empty staged path", a.Name)
		}
		for _, id := range ids {
			if a.Name == id+bundleSuffix || a.Name == id+lockSuffix || a.Name == id+sumSuffix {
				return nil, &InvalidNameError{Kind: KindAssetName, Name: a.Name,
					Reason: "reserved for bundle " + id}
			}
		}
	}
	return ids, nil
}

// storeOne stores bundle id from staged plus the assets, under the id's locks.
func (c *Cache) storeOne(ctx context.Context, id, staged string, assets []Asset) (existed bool, err error) {
	unlock, err := c.locks.lock(ctx, id)
	if err != nil {
		return false, fmt.Errorf("store bundle %s: wait for lock: %w", id, err)
	}
	defer unlock()

	dir := c.Dir(id)
	held, err := c.makeAndHoldDir(id)
	if err != nil {
		return false, fmt.Errorf("store bundle %s: %w", id, err)
	}
	// Held while storing, so no pruner removes the directory under us; the
	// release marks the bundle used, so none removes it before the render
	// that follows the store (PruneMinIdle).
	defer c.unhold(id, held)
	fl, err := c.lockFile(ctx, c.lockPath(id))
	if err != nil {
		return false, fmt.Errorf("store bundle %s: %w", id, err)
	}
	defer c.unlock(fl)

	c.removeStaleTemps(dir)

	// Companions first, made durable, then the bundle: whoever finds a new
	// bundle in the cache finds its companion files beside it.
	for _, a := range assets {
		if err := c.placeAsset(dir, a); err != nil {
			return c.Has(id), fmt.Errorf("store bundle %s: %w", id, err)
		}
	}
	if len(assets) > 0 {
		if err := syncDir(dir); err != nil {
			return c.Has(id), fmt.Errorf("store bundle %s: %w", id, err)
		}
	}
	existed, err = c.placeBundle(id, staged)
	if err != nil {
		return false, err
	}
	if !existed {
		if err := syncDir(dir); err != nil {
			return existed, fmt.Errorf("store bundle %s: %w", id, err)
		}
	}
	if existed {
		c.logger.Debug("bundle already present; kept first copy", "bundle", id, "assets", len(assets))
	} else {
		c.logger.Info("stored bundle", "bundle", id, "assets", len(assets))
	}
	return existed, nil
}

// makeAndHoldDir makes the directory of bundle id if needed and holds it
// (see Hold). A pruner may remove the directory between the two steps: then
// it is made again.
//
// A directory that cannot be used (no permission, or not a directory: a
// broken pre-seed) is quarantined and made again.
func (c *Cache) makeAndHoldDir(id string) (*os.File, error) {
	dir := c.Dir(id)
	for attempt := 0; ; attempt++ {
		if err := openableDir(dir); unusableDir(err) {
			if _, err := c.quarantineDir(id, err); err != nil {
				return nil, err
			}
		}
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(dir, dirPerm); err != nil {
				return nil, err
			}
			// Make the new directory entry durable along with what goes in it.
			if err := syncDir(c.root); err != nil {
				return nil, err
			}
		}
		f, err := c.holdDir(id)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 2 {
			return f, err
		}
	}
}

// placeBundle makes staged the bundle file of id unless a good copy is
// present (see checkStored; a bad one is quarantined first), recording
// its size and digest beside it first. The caller holds the id's locks and
// fsyncs the directory.
func (c *Cache) placeBundle(id, staged string) (existed bool, err error) {
	sum, err := sumOf(staged)
	if err != nil {
		return false, fmt.Errorf("store bundle %s: %w", id, err)
	}
	if c.Has(id) {
		why := c.checkStored(id, sum)
		if why == "" {
			if _, ok := c.readSum(id); !ok {
				// A pre-seeded bundle equal to the upload: record it, so
				// that its loads are checked too.
				if err := c.writeSum(id, sum); err != nil {
					c.logger.Warn("recording a stored bundle", "bundle", id, "error", err)
				}
			}
			return true, nil
		}
		if err := c.quarantineFile(id, why); err != nil {
			return false, err
		}
	}
	if err := c.writeSum(id, sum); err != nil {
		return false, fmt.Errorf("store bundle %s: %w", id, err)
	}
	if err := syncFile(staged); err != nil {
		return false, fmt.Errorf("store bundle %s: %w", id, err)
	}
	final := c.BundlePath(id)
	// A hard link never replaces an existing file, so even a writer that
	// ignores (or took over) the lock cannot make us clobber its bundle.
	err = os.Link(staged, final)
	if err == nil {
		return false, nil
	}
	if errors.Is(err, fs.ErrExist) && c.Has(id) {
		return true, nil
	}
	// Links unsupported, or a broken entry (e.g. a dangling symlink) sits at
	// the bundle path: rename, which replaces it atomically.
	if err := os.Rename(staged, final); err != nil {
		return false, fmt.Errorf("store bundle %s: %w", id, err)
	}
	return false, nil
}

// placeAsset atomically (re)writes companion a in dir: hard-link (or copy)
// the staged file to a temporary name, fsync it, rename it over the final
// name.
func (c *Cache) placeAsset(dir string, a Asset) error {
	tmp := filepath.Join(dir, tmpPrefix+randomHex(8))
	if err := os.Link(a.Path, tmp); err != nil {
		if err := c.copyFile(a.Path, tmp); err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("write asset %q: %w", a.Name, err)
		}
	}
	if err := syncFile(tmp); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write asset %q: %w", a.Name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, a.Name)); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write asset %q: %w", a.Name, err)
	}
	return nil
}

// copyFile copies src to a new file dst (which must not exist).
func (c *Cache) copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return fmt.Errorf("copy to %s: %w", dst, err)
	}
	buf := c.getBuf()
	defer c.putBuf(buf)
	_, err = io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, *buf)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

// removeStaleTemps deletes what writers that died left in dir: companion
// temp files (the caller holds the id's lock file, so none is a live
// writer's) and lock files never linked into place (a live maker holds a
// flock on its own).
func (c *Cache) removeStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), tmpPrefix):
		case strings.HasPrefix(e.Name(), lockTmpPrefix) && !flockHeld(p):
		default:
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.logger.Warn("removing leftover temp file", "path", c.rel(p), "error", err)
		}
	}
}

// flockHeld reports whether some process holds a flock on path; false
// when it cannot tell (no such file, no flock here).
func flockHeld(path string) bool {
	f, err := openToLock(path)
	if err != nil {
		return false
	}
	defer f.Close()
	locked, err := tryLockExclusive(f)
	return err == nil && !locked
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return nil
}

// syncDir fsyncs a directory so that renames and links in it are durable.
// File systems that cannot fsync a directory are tolerated.
func syncDir(dir string) error {
	err := syncFile(dir)
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}
