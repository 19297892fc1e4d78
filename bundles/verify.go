package bundles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sumSuffix ends the name of a bundle's record, <id>.js.sum: the size and
// SHA-256 of <id>.js as it was stored, written (through a temporary file
// and a rename) before the bundle appears. A pre-seeded bundle has none.
const sumSuffix = ".js.sum"

// quarantinePrefix starts the name, in the cache root, of a bundle file or
// directory moved aside because it failed its check; at most
// maxQuarantined are kept (for a look), the pruner deletes the rest.
const (
	quarantinePrefix = ".gorender-quarantined-"
	maxQuarantined   = 4
	// quarantineWait bounds the wait for the locks a quarantine takes.
	quarantineWait = 30 * time.Second
)

// bundleSum is what a record holds.
type bundleSum struct {
	size   int64
	sha256 string
}

func (s bundleSum) String() string { return fmt.Sprintf("size=%d sha256=%s\n", s.size, s.sha256) }

// CorruptError is a stored bundle that failed its check and was moved
// aside: from then on it is absent (it wraps fs.ErrNotExist), so a render
// answers 410 and Rails uploads it again.
type CorruptError struct {
	ID     string
	Path   string // relative to the cache root
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("bundle %s was corrupt (%s: %s) and was quarantined", e.ID, e.Path, e.Reason)
}

func (e *CorruptError) Unwrap() error { return fs.ErrNotExist }

func (c *Cache) sumPath(id string) string { return filepath.Join(c.root, id, id+sumSuffix) }

// sumOf hashes the file at path.
func sumOf(path string) (bundleSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return bundleSum{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return bundleSum{}, err
	}
	return bundleSum{size: n, sha256: hex.EncodeToString(h.Sum(nil))}, nil
}

func sumOfBytes(b []byte) bundleSum {
	h := sha256.Sum256(b)
	return bundleSum{size: int64(len(b)), sha256: hex.EncodeToString(h[:])}
}

// readSum returns bundle id's record; ok is false when it has none (or
// none that can be read: then only the bundle's own checks apply).
func (c *Cache) readSum(id string) (sum bundleSum, ok bool) {
	b, err := os.ReadFile(c.sumPath(id))
	if err != nil || len(b) > 256 {
		return sum, false
	}
	for _, f := range strings.Fields(string(b)) {
		switch k, v, _ := strings.Cut(f, "="); k {
		case "size":
			sum.size, err = strconv.ParseInt(v, 10, 64)
		case "sha256":
			sum.sha256 = v
		}
	}
	return sum, err == nil && sum.sha256 != ""
}

// writeSum records sum for bundle id, atomically.
func (c *Cache) writeSum(id string, sum bundleSum) error {
	tmp := filepath.Join(c.Dir(id), tmpPrefix+randomHex(8))
	w := spaceWriter{c: c, path: tmp}
	err := w.writeFile([]byte(sum.String()))
	if err == nil {
		err = syncFile(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, c.sumPath(id))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("record bundle %s: %w", id, err)
	}
	return nil
}

// problem returns why the stored bundle id whose bytes sum to got is not a
// good copy ("" when it is): empty, or not what its record says.
func (c *Cache) problem(id string, got bundleSum) string {
	if got.size == 0 {
		return "it is empty"
	}
	if want, ok := c.readSum(id); ok && want != got {
		return fmt.Sprintf("it holds %d bytes with SHA-256 %.12s…, but %d bytes with SHA-256 %.12s… were stored", got.size, got.sha256, want.size, want.sha256)
	}
	return ""
}

// checkStored returns why the stored bundle id is not to be kept when
// upload (the sum of an upload of it) arrives ("" to keep it: first writer
// wins): it cannot be read, is empty, or differs from its record; without
// a record (pre-seeded), when it differs from the upload, which is then
// the only evidence of what the bundle should be.
func (c *Cache) checkStored(id string, upload bundleSum) string {
	got, err := sumOf(c.BundlePath(id))
	if err != nil {
		return "it cannot be read: " + errText(err)
	}
	if why := c.problem(id, got); why != "" {
		return why
	}
	if _, ok := c.readSum(id); !ok && got != upload {
		return fmt.Sprintf("it holds %d bytes, differs from the %d uploaded, and has no record of what was stored (pre-seeded)", got.size, upload.size)
	}
	return ""
}

// errText is an error without the server's paths: its innermost cause.
func errText(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// quarantineFile moves bundle id's file (and its record) aside, logging
// why. The caller holds the id's locks.
func (c *Cache) quarantineFile(id, why string) error {
	to := filepath.Join(c.root, quarantinePrefix+randomHex(4)+"-"+id+bundleSuffix)
	if err := os.Rename(c.BundlePath(id), to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("quarantine bundle %s: %w", id, err)
	}
	_ = os.Remove(c.sumPath(id))
	c.logger.Warn("bundle quarantined: the next upload stores it again", "bundle", id,
		"path", c.rel(c.BundlePath(id)), "moved_to", c.rel(to), "reason", why)
	return nil
}

// quarantineDir moves bundle id's directory aside if it still cannot be
// opened as a directory (no permission, not a directory), under an
// exclusive flock on the cache root so that no two processes move one, nor
// one a directory another has just made good. It reports whether the path
// is free for a new directory now.
func (c *Cache) quarantineDir(id string, cause error) (bool, error) {
	root, err := os.Open(c.root)
	if err != nil {
		return false, fmt.Errorf("quarantine bundle %s: %w", id, err)
	}
	defer root.Close()
	for deadline := time.Now().Add(quarantineWait); ; {
		locked, err := tryLockExclusive(root)
		if err != nil {
			c.warnNoDirLock(err)
			break
		}
		if locked {
			break
		}
		if time.Now().After(deadline) {
			return false, fmt.Errorf("quarantine bundle %s: the cache root stayed locked for %s", id, quarantineWait)
		}
		time.Sleep(holdPoll)
	}
	dir := c.Dir(id)
	if err := openableDir(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
		return true, nil // another process repaired it meanwhile
	}
	to := filepath.Join(c.root, quarantinePrefix+randomHex(4)+"-"+id)
	if err := os.Rename(dir, to); err != nil {
		return false, fmt.Errorf("quarantine bundle %s: %w", id, err)
	}
	c.logger.Warn("bundle quarantined: the next upload stores it again", "bundle", id,
		"path", id, "moved_to", c.rel(to), "reason", "its directory cannot be used: "+errText(cause))
	return true, nil
}

// openableDir checks that dir can be opened and is a directory.
func openableDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return &os.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}
	}
	return nil
}

// unusableDir tells whether err, from opening a bundle directory, means the
// directory is broken (and to be quarantined) rather than absent or busy.
func unusableDir(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR)
}

// quarantineLoaded moves bundle id aside after a load found it corrupt
// (why), under the id's locks, unless a store repaired it meanwhile: then
// it returns nil and the caller reads it again.
func (c *Cache) quarantineLoaded(id, why string) error {
	ctx, cancel := context.WithTimeout(context.Background(), quarantineWait)
	defer cancel()
	unlock, err := c.locks.lock(ctx, id)
	if err != nil {
		return fmt.Errorf("quarantine bundle %s: %w", id, err)
	}
	defer unlock()
	fl, err := c.lockFile(ctx, c.lockPath(id))
	if err != nil {
		return fmt.Errorf("quarantine bundle %s: %w", id, err)
	}
	defer c.unlock(fl)
	if got, err := sumOf(c.BundlePath(id)); err == nil && c.problem(id, got) == "" {
		return nil
	}
	if err := c.quarantineFile(id, why); err != nil {
		return err
	}
	return &CorruptError{ID: id, Path: c.rel(c.BundlePath(id)), Reason: why}
}

// sweepQuarantine deletes quarantined entries beyond maxQuarantined; which
// ones stay does not matter (the log said what each was). names are the
// cache root's entries.
func (c *Cache) sweepQuarantine(names []string) {
	var q []string
	for _, n := range names {
		if strings.HasPrefix(n, quarantinePrefix) {
			q = append(q, n)
		}
	}
	if len(q) <= maxQuarantined {
		return
	}
	slices.Sort(q)
	for _, n := range q[maxQuarantined:] {
		p := filepath.Join(c.root, n)
		_ = os.Chmod(p, dirPerm) // an unreadable directory cannot be emptied
		if err := os.RemoveAll(p); err != nil {
			c.logger.Debug("deleting a quarantined bundle", "path", n, "error", err)
		}
	}
}
