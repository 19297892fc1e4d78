package bundles

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"
)

// Staging is one request's staging directory, <root>/uploads/<uuid v4>/,
// into which uploaded parts are streamed before Store moves them into place.
// The caller removes it with Remove once the request is answered; abandoned
// ones are removed by SweepStaging.
type Staging struct {
	c    *Cache
	dir  string
	n    atomic.Int64
	lock *os.File // the directory, flocked while its request runs
}

// ownerFile names, in a staging directory, the pid and host of the
// process that writes it (see SweepStaging).
const ownerFile = ".owner"

// NewStaging creates a fresh staging directory under <root>/uploads. Its
// process holds a flock on it, and names itself in it, until Remove: a
// sweep removes it as soon as its writer is gone.
func (c *Cache) NewStaging() (*Staging, error) {
	for range 3 { // a uuid v4 collision is practically impossible; retry anyway (or once space is made)
		dir := filepath.Join(c.uploadsPath(), newUUID())
		err := os.Mkdir(dir, dirPerm)
		if err == nil {
			s := &Staging{c: c, dir: dir}
			if err := s.own(); err != nil {
				_ = s.Remove()
				return nil, err
			}
			return s, nil
		}
		if errors.Is(err, syscall.ENOSPC) && c.FreeSpace() {
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			// uploads/ was removed behind our back: recreate it.
			if err := os.MkdirAll(c.uploadsPath(), dirPerm); err != nil {
				return nil, fmt.Errorf("create staging dir: %w", err)
			}
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create staging dir: %w", err)
		}
	}
	return nil, fmt.Errorf("create staging dir in %s: too many collisions", c.uploadsPath())
}

// own takes the staging directory's flock and writes its owner file.
func (s *Staging) own() error {
	f, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("create staging dir: %w", err)
	}
	s.lock = f
	if _, err := tryLockExclusive(f); err != nil {
		s.c.warnNoDirLock(err) // then only its age tells a sweep it is abandoned
	}
	owner := fmt.Sprintf("pid=%d host=%s\n", os.Getpid(), hostname())
	w := spaceWriter{c: s.c, path: filepath.Join(s.dir, ownerFile)}
	if err := w.writeFile([]byte(owner)); err != nil {
		return fmt.Errorf("create staging dir: %w", err)
	}
	return nil
}

// Dir returns the staging directory's path.
func (s *Staging) Dir() string { return s.dir }

// Stage streams r into a new, uniquely named file in the staging directory
// and returns its path and size. The data is copied through a 64 KiB buffer,
// never held whole in memory. On error the partial file is removed.
func (s *Staging) Stage(r io.Reader) (path string, size int64, err error) {
	path = filepath.Join(s.dir, fmt.Sprintf("part-%04d", s.n.Add(1)))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return "", 0, fmt.Errorf("stage upload: %w", err)
	}
	buf := s.c.getBuf()
	defer s.c.putBuf(buf)
	// Hide ReaderFrom/WriterTo so the copy really goes through buf.
	size, err = io.CopyBuffer(spaceWriter{c: s.c, f: f}, struct{ io.Reader }{r}, *buf)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return "", 0, fmt.Errorf("stage upload to %s: %w", path, err)
	}
	return path, size, nil
}

// Remove deletes the staging directory and everything in it, then lets its
// flock go. It is idempotent.
func (s *Staging) Remove() error {
	err := os.RemoveAll(s.dir)
	if s.lock != nil {
		_ = s.lock.Close()
		s.lock = nil
	}
	if err != nil {
		return fmt.Errorf("remove staging dir: %w", err)
	}
	return nil
}

// spaceWriter writes to f; a write that fails for lack of space makes room
// (Cache.FreeSpace) and goes on, for as long as that frees something.
type spaceWriter struct {
	c    *Cache
	f    *os.File
	path string // of the file writeFile makes
}

func (w spaceWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	for errors.Is(err, syscall.ENOSPC) && w.c.FreeSpace() {
		var more int
		more, err = w.f.Write(p[n:])
		n += more
	}
	return n, err
}

// writeFile creates the file at w.path with b, making room as Write does.
func (w spaceWriter) writeFile(b []byte) error {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return err
	}
	w.f = f
	_, err = w.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SweepStaging removes the staging directories under <root>/uploads whose
// writer is gone, and returns how many it removed: a live writer holds a
// flock on its directory, so one without is abandoned when the pid and host
// it names (ownerFile) are provably not running (see holderGone); when that
// cannot be told (a writer on another host, one that takes no flock, a file
// system without flock), when its newest modification time (the
// directory's own or any direct entry's) is more than olderThan away from
// now, in the past or, after a clock step, in the future. It touches
// nothing but directories directly under <root>/uploads. Errors on single
// entries do not stop the sweep; they are joined into the returned error.
func (c *Cache) SweepStaging(olderThan time.Duration) (removed int, err error) {
	entries, err := os.ReadDir(c.uploadsPath())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("sweep staging: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() { // DirEntry does not follow symlinks
			continue
		}
		gone, err := c.sweepOne(filepath.Join(c.uploadsPath(), e.Name()), olderThan)
		if err != nil {
			errs = append(errs, err)
		}
		if gone {
			removed++
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("sweep staging: %w", errors.Join(errs...))
	}
	return removed, nil
}

// sweepOne removes the staging directory dir if its writer is gone (see
// SweepStaging); olderThan <= 0 removes only those provably gone.
func (c *Cache) sweepOne(dir string, olderThan time.Duration) (removed bool, err error) {
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) { // removed concurrently: fine
			return false, nil
		}
		return false, err
	}
	defer f.Close() // after the removal: no other sweep takes it meanwhile
	locked, flockErr := tryLockExclusive(f)
	if flockErr == nil && !locked {
		return false, nil // its writer lives
	}
	owner, _ := os.ReadFile(filepath.Join(dir, ownerFile))
	if flockErr != nil || !holderGone(string(owner)) {
		if olderThan <= 0 {
			return false, nil
		}
		newest, err := newestMtime(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return false, err
		}
		if age := time.Since(newest); age <= olderThan && age >= -olderThan {
			return false, nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("sweep staging dir %s: %w", c.rel(dir), err)
	}
	return true, nil
}

// newestMtime returns the latest mtime of dir and its direct entries, so that
// a directory whose part is still being written is not considered old.
func newestMtime(dir string) (time.Time, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return time.Time{}, fmt.Errorf("stat %s: %w", dir, err)
	}
	newest := fi.ModTime()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", dir, err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // vanished meanwhile
		}
		if info.ModTime().After(newest) {
			newest = info.ModTime()
		}
	}
	return newest, nil
}

// RunSweeper calls SweepStaging(olderThan) once at start and then every
// interval until ctx is done, logging what it removes and any error. A
// non-positive every disables it (it returns at once).
func (c *Cache) RunSweeper(ctx context.Context, every, olderThan time.Duration) {
	if every <= 0 {
		c.logger.Warn("staging sweeper disabled", "every", every)
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := c.SweepStaging(olderThan)
		if err != nil {
			c.logger.Error("sweeping staging dirs", "error", err, "removed", n)
		} else if n > 0 {
			c.logger.Info("swept stale staging dirs", "removed", n, "older_than", olderThan)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// newUUID returns a random (version 4) UUID in its canonical text form.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
