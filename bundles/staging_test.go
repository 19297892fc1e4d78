package bundles

import (
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// patternReader yields n bytes of a repeating pattern without holding them.
type patternReader struct {
	n, off int64
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	if rem := r.n - r.off; int64(len(p)) > rem {
		p = p[:rem]
	}
	for i := range p {
		p[i] = byte((r.off + int64(i)) % 251)
	}
	r.off += int64(len(p))
	return len(p), nil
}

func TestNewStagingLayout(t *testing.T) {
	c := newTestCache(t)
	s, err := c.NewStaging()
	if err != nil {
		t.Fatal(err)
	}
	uuidV4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if filepath.Dir(s.Dir()) != filepath.Join(c.Root(), "uploads") || !uuidV4.MatchString(filepath.Base(s.Dir())) {
		t.Errorf("staging dir = %q, want <root>/uploads/<uuid v4>", s.Dir())
	}
	p1, _, err := s.Stage(strings.NewReader("one"))
	if err != nil {
		t.Fatal(err)
	}
	p2, _, err := s.Stage(strings.NewReader("two"))
	if err != nil {
		t.Fatal(err)
	}
	if p1 == p2 || filepath.Dir(p1) != s.Dir() {
		t.Errorf("staged paths %q, %q: want distinct files in %q", p1, p2, s.Dir())
	}
	if readFile(t, p1) != "one" || readFile(t, p2) != "two" {
		t.Error("staged content wrong")
	}
	if err := s.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("staging dir still there: %v", err)
	}
	if err := s.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}

func TestStageRemovesPartialFileOnError(t *testing.T) {
	c := newTestCache(t)
	s, err := c.NewStaging()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Remove() }()
	r := io.MultiReader(strings.NewReader("partial"), failingReader{})
	if _, _, err := s.Stage(r); err == nil {
		t.Fatal("Stage of a failing reader succeeded")
	}
	if names := dirNames(t, s.Dir()); len(names) != 1 || names[0] != ownerFile {
		t.Errorf("staging dir keeps %q after a failed Stage, want only its owner file", names)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestStageStreams(t *testing.T) {
	const size = 50 << 20
	c := newTestCache(t)
	s, err := c.NewStaging()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Remove() }()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	path, n, err := s.Stage(&patternReader{n: size})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n != size {
		t.Fatalf("size = %d, want %d", n, size)
	}
	// Everything allocated during Stage, garbage included: a copy through a
	// 64 KiB buffer allocates next to nothing; reading the body whole would
	// allocate at least 50 MiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("Stage allocated %d bytes for a %d-byte body", alloc, size)
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, want := sha256.New(), sha256.New()
	if _, err := io.Copy(got, f); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(want, &patternReader{n: size}); err != nil {
		t.Fatal(err)
	}
	if string(got.Sum(nil)) != string(want.Sum(nil)) {
		t.Error("staged content differs from the input")
	}
}

func TestSweepStaging(t *testing.T) {
	c := newTestCache(t)
	uploads := filepath.Join(c.Root(), "uploads")
	old := time.Now().Add(-time.Hour)
	setOld := func(p string) {
		t.Helper()
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}

	oldDir := filepath.Join(uploads, "old")
	writeFile(t, filepath.Join(oldDir, "part-0001"), "x")
	setOld(filepath.Join(oldDir, "part-0001"))
	setOld(oldDir)

	freshDir := filepath.Join(uploads, "fresh")
	writeFile(t, filepath.Join(freshDir, "part-0001"), "x")

	// Old directory whose part is still being written.
	activeDir := filepath.Join(uploads, "active")
	writeFile(t, filepath.Join(activeDir, "part-0001"), "x")
	setOld(activeDir)

	emptyOld := filepath.Join(uploads, "empty-old")
	if err := os.Mkdir(emptyOld, 0o755); err != nil {
		t.Fatal(err)
	}
	setOld(emptyOld)

	// Not staging directories: never touched.
	oldFile := filepath.Join(uploads, "stray-file")
	writeFile(t, oldFile, "x")
	setOld(oldFile)
	writeFile(t, c.BundlePath("b"), "js")
	setOld(c.Dir("b"))
	setOld(c.BundlePath("b"))
	outside := filepath.Join(t.TempDir(), "outside")
	writeFile(t, filepath.Join(outside, "f"), "x")
	setOld(outside)
	if err := os.Symlink(outside, filepath.Join(uploads, "link")); err != nil {
		t.Fatal(err)
	}

	removed, err := c.SweepStaging(30 * time.Minute)
	if err != nil {
		t.Fatalf("SweepStaging: %v", err)
	}
	if removed != 2 {
		t.Errorf("removed = %d, want 2", removed)
	}
	if got, want := dirNames(t, uploads), []string{"active", "fresh", "link", "stray-file"}; !slices.Equal(got, want) {
		t.Errorf("uploads = %q, want %q", got, want)
	}
	if !c.Has("b") {
		t.Error("sweep touched a bundle")
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err != nil {
		t.Errorf("sweep followed a symlink: %v", err)
	}
}

func TestRunSweeper(t *testing.T) {
	c := newTestCache(t)
	dir := filepath.Join(c.Root(), "uploads", "old")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		c.RunSweeper(ctx, 10*time.Millisecond, 30*time.Minute)
		close(done)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sweeper did not remove the old staging dir")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunSweeper did not return after cancel")
	}

	// Disabled sweeper returns at once.
	c.RunSweeper(context.Background(), 0, time.Minute)
}
