package bundles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read dir: %v", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestStoreFirstWriterWins(t *testing.T) {
	c := newTestCache(t)
	res := storeBundle(t, c, "b1", []byte("first"), nil)
	if !slices.Equal(res.Stored, []string{"b1"}) || len(res.Existing) != 0 {
		t.Fatalf("first Store result = %+v, want Stored [b1]", res)
	}
	res = storeBundle(t, c, "b1", []byte("second, different"), nil)
	if !slices.Equal(res.Existing, []string{"b1"}) || len(res.Stored) != 0 {
		t.Fatalf("second Store result = %+v, want Existing [b1]", res)
	}
	if got := readFile(t, c.BundlePath("b1")); got != "first" {
		t.Errorf("bundle = %q, want the first bytes", got)
	}
	if got := dirNames(t, c.Dir("b1")); !slices.Equal(got, []string{"b1.js", "b1.js.sum"}) {
		t.Errorf("bundle dir = %q, want only b1.js and its record", got)
	}
}

func TestStoreReplacesCompanionsOnReupload(t *testing.T) {
	c := newTestCache(t)
	storeBundle(t, c, "b1", []byte("js"), map[string]string{"loadable-stats.json": "v1", "keep.json": "k"})
	res := storeBundle(t, c, "b1", []byte("js2"), map[string]string{"loadable-stats.json": "v2"})
	if !slices.Equal(res.Existing, []string{"b1"}) {
		t.Fatalf("re-upload result = %+v, want Existing [b1]", res)
	}
	tests := []struct{ name, want string }{
		{"b1.js", "js"},
		{"loadable-stats.json", "v2"},
		{"keep.json", "k"},
	}
	for _, tt := range tests {
		if got := readFile(t, filepath.Join(c.Dir("b1"), tt.name)); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := dirNames(t, c.Dir("b1")); !slices.Equal(got, []string{"b1.js", "b1.js.sum", "keep.json", "loadable-stats.json"}) {
		t.Errorf("bundle dir = %q, want no temp or lock files", got)
	}
}

func TestStoreCompanionBesideEveryBundle(t *testing.T) {
	c := newTestCache(t)
	storeBundle(t, c, "old", []byte("old js"), nil)
	up := Upload{
		Bundles: map[string]string{
			"srv": stage(t, c, []byte("server js")),
			"rsc": stage(t, c, []byte("rsc js")),
			"old": stage(t, c, []byte("new old js")),
		},
		Assets: []Asset{
			{Name: "react-client-manifest.json", Path: stage(t, c, []byte("manifest"))},
			{Name: "loadable-stats.json", Path: stage(t, c, []byte("stats v1"))},
			{Name: "loadable-stats.json", Path: stage(t, c, []byte("stats v2"))}, // later wins
		},
	}
	res, err := c.Store(context.Background(), up)
	if err != nil {
		t.Fatalf("Store: %v", err)
	}
	if want := (StoreResult{Stored: []string{"rsc", "srv"}, Existing: []string{"old"}}); !slices.Equal(res.Stored, want.Stored) || !slices.Equal(res.Existing, want.Existing) {
		t.Errorf("result = %+v, want %+v", res, want)
	}
	for _, id := range []string{"srv", "rsc", "old"} {
		if !c.AssetExists(id, "react-client-manifest.json") {
			t.Errorf("manifest missing beside %s", id)
		}
		if got := readFile(t, filepath.Join(c.Dir(id), "loadable-stats.json")); got != "stats v2" {
			t.Errorf("%s/loadable-stats.json = %q, want the later asset", id, got)
		}
	}
	if got := readFile(t, c.BundlePath("old")); got != "old js" {
		t.Errorf("old bundle replaced: %q", got)
	}
	// Assets are copied, not moved: the staged files are still there.
	for _, a := range up.Assets {
		if _, err := os.Stat(a.Path); err != nil {
			t.Errorf("staged asset %s gone: %v", a.Path, err)
		}
	}
}

func TestStoreRejectsInvalidNames(t *testing.T) {
	tests := []struct {
		name     string
		id       string
		asset    string
		wantKind NameKind
	}{
		{"traversal id", "../x", "", KindBundleID},
		{"hidden id", ".x", "", KindBundleID},
		{"empty id", "", "", KindBundleID},
		{"traversal asset", "ok", "../x", KindAssetName},
		{"path asset", "ok", "a/b", KindAssetName},
		{"backslash asset", "ok", `a\b`, KindAssetName},
		{"NUL asset", "ok", "a\x00", KindAssetName},
		{"asset named like the bundle", "ok", "ok.js", KindAssetName},
		{"asset named like the lock", "ok", "ok.js.lock", KindAssetName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t)
			up := Upload{Bundles: map[string]string{tt.id: stage(t, c, []byte("js"))}}
			if tt.asset != "" {
				up.Assets = []Asset{{Name: tt.asset, Path: stage(t, c, []byte("asset"))}}
			}
			_, err := c.Store(context.Background(), up)
			var ine *InvalidNameError
			if !errors.As(err, &ine) {
				t.Fatalf("Store error = %v, want *InvalidNameError", err)
			}
			if ine.Kind != tt.wantKind {
				t.Errorf("Kind = %v, want %v", ine.Kind, tt.wantKind)
			}
			if got := dirNames(t, c.Root()); !slices.Equal(got, []string{"uploads"}) {
				t.Errorf("cache root = %q, want nothing written", got)
			}
		})
	}
}

func TestStoreAllowsSourceMapCompanion(t *testing.T) {
	c := newTestCache(t)
	storeBundle(t, c, "b", []byte("js"), map[string]string{"b.js.map": "{}"})
	if !c.AssetExists("b", "b.js.map") {
		t.Error("b.js.map not stored")
	}
}

func TestStoreRejectsSharedStagedFile(t *testing.T) {
	c := newTestCache(t)
	p := stage(t, c, []byte("js"))
	_, err := c.Store(context.Background(), Upload{Bundles: map[string]string{"a": p, "b": p}})
	if err == nil {
		t.Fatal("Store with one staged file for two bundles succeeded")
	}
	var ine *InvalidNameError
	if errors.As(err, &ine) {
		t.Errorf("error %v is an *InvalidNameError; it is a programming error, not bad input", err)
	}
}

func TestStoreConcurrentSameID(t *testing.T) {
	const writers = 50
	c1 := newTestCache(t)
	// A second Cache on the same root stands for another process: only the
	// lock file serialises it against c1.
	c2, err := Open(c1.Root(), nil)
	if err != nil {
		t.Fatal(err)
	}
	const id = "rorp-v2-s-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

	contents := make([][]byte, writers)
	ups := make([]Upload, writers)
	for i := range writers {
		c := c1
		if i%2 == 1 {
			c = c2
		}
		// Large enough that copying is not instantaneous.
		contents[i] = bytes.Repeat(fmt.Appendf(nil, "writer %02d|", i), 30000)
		ups[i] = Upload{
			Bundles: map[string]string{id: stage(t, c, contents[i])},
			Assets:  []Asset{{Name: "loadable-stats.json", Path: stage(t, c, fmt.Appendf(nil, "stats %02d", i))}},
		}
	}

	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results = make([]StoreResult, writers)
		errs    = make([]error, writers)
	)
	for i := range writers {
		c := c1
		if i%2 == 1 {
			c = c2
		}
		wg.Go(func() {
			<-start
			results[i], errs[i] = c.Store(context.Background(), ups[i])
		})
	}
	close(start)
	wg.Wait()

	winner := -1
	for i := range writers {
		if errs[i] != nil {
			t.Errorf("writer %d: %v", i, errs[i])
			continue
		}
		switch {
		case slices.Equal(results[i].Stored, []string{id}) && len(results[i].Existing) == 0:
			if winner >= 0 {
				t.Errorf("writers %d and %d both stored the bundle", winner, i)
			}
			winner = i
		case slices.Equal(results[i].Existing, []string{id}) && len(results[i].Stored) == 0:
		default:
			t.Errorf("writer %d: unexpected result %+v", i, results[i])
		}
	}
	if winner < 0 {
		t.Fatal("no writer stored the bundle")
	}
	got, err := os.ReadFile(c1.BundlePath(id))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, contents[winner]) {
		t.Errorf("bundle (%d bytes) is not the winner's content (%d bytes)", len(got), len(contents[winner]))
	}
	stats := readFile(t, filepath.Join(c1.Dir(id), "loadable-stats.json"))
	if !strings.HasPrefix(stats, "stats ") || len(stats) != len("stats 00") {
		t.Errorf("companion = %q, want one writer's complete content", stats)
	}
	if names := dirNames(t, c1.Dir(id)); !slices.Equal(names, []string{"loadable-stats.json", id + ".js", id + ".js.sum"}) {
		t.Errorf("bundle dir = %q, want only the bundle and its companion (no lock, no temp files)", names)
	}
	for _, c := range []*Cache{c1, c2} {
		if n := c.locks.size(); n != 0 {
			t.Errorf("keyed mutex still tracks %d keys", n)
		}
	}
}

func TestStoreConcurrentDifferentIDs(t *testing.T) {
	c := newTestCache(t)
	var wg sync.WaitGroup
	for i := range 20 {
		id := fmt.Sprintf("b%02d", i)
		p := stage(t, c, []byte(id))
		wg.Go(func() {
			if _, err := c.Store(context.Background(), Upload{Bundles: map[string]string{id: p}}); err != nil {
				t.Errorf("Store(%s): %v", id, err)
			}
		})
	}
	wg.Wait()
	for i := range 20 {
		id := fmt.Sprintf("b%02d", i)
		if got := readFile(t, c.BundlePath(id)); got != id {
			t.Errorf("%s = %q", id, got)
		}
	}
}

func TestStoreTakesOverStaleLock(t *testing.T) {
	c := newTestCache(t)
	lock := c.lockPath("b")
	// Left by a writer of this host that died: no flock on it, its pid dead.
	writeFile(t, lock, fmt.Sprintf("pid=%d host=%s token=x\n", deadPid(t), hostname()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := c.Store(ctx, Upload{Bundles: map[string]string{"b": stage(t, c, []byte("js"))}}); err != nil {
		t.Fatalf("Store: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Store took %v to take over the lock of a dead writer", d)
	}
	if !c.Has("b") {
		t.Error("bundle not stored")
	}
	if _, err := os.Lstat(lock); !os.IsNotExist(err) {
		t.Errorf("lock file left behind: %v", err)
	}
}

func TestStoreWaitsForFreshLock(t *testing.T) {
	c := newTestCache(t)
	lock := c.lockPath("b")
	writeFile(t, lock, "pid=1 host=other token=x\n") // held by "another process"
	p := stage(t, c, []byte("js"))

	done := make(chan error, 1)
	go func() {
		_, err := c.Store(context.Background(), Upload{Bundles: map[string]string{"b": p}})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Store returned while the lock was held: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if c.Has("b") {
		t.Fatal("bundle stored while the lock was held")
	}
	if err := os.Remove(lock); err != nil { // the other process finishes
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Store: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Store did not proceed after the lock was released")
	}
	if !c.Has("b") {
		t.Error("bundle not stored")
	}
	if _, err := os.Lstat(lock); !os.IsNotExist(err) {
		t.Errorf("lock file left behind: %v", err)
	}
}

func TestStoreLockWaitHonoursContext(t *testing.T) {
	c := newTestCache(t)
	lock := c.lockPath("b")
	writeFile(t, lock, "held")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := c.Store(ctx, Upload{Bundles: map[string]string{"b": stage(t, c, []byte("js"))}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Store error = %v, want context.DeadlineExceeded", err)
	}
	if c.Has("b") {
		t.Error("bundle stored despite cancellation")
	}
	if got := readFile(t, lock); got != "held" {
		t.Errorf("foreign lock file changed: %q", got)
	}
	if n := c.locks.size(); n != 0 {
		t.Errorf("keyed mutex still tracks %d keys", n)
	}
}

func TestStoreInProcessWaitHonoursContext(t *testing.T) {
	c := newTestCache(t)
	unlock, err := c.locks.lock(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.Store(ctx, Upload{Bundles: map[string]string{"b": stage(t, c, []byte("js"))}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Store error = %v, want context.DeadlineExceeded", err)
	}
	unlock()
	if n := c.locks.size(); n != 0 {
		t.Errorf("keyed mutex still tracks %d keys", n)
	}
}

func TestStoreHealsDanglingSymlink(t *testing.T) {
	c := newTestCache(t)
	if err := os.MkdirAll(c.Dir("b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../nowhere/b.js", c.BundlePath("b")); err != nil {
		t.Fatal(err)
	}
	res := storeBundle(t, c, "b", []byte("js"), nil)
	if !slices.Equal(res.Stored, []string{"b"}) {
		t.Errorf("result = %+v, want Stored [b]", res)
	}
	if got := readFile(t, c.BundlePath("b")); got != "js" {
		t.Errorf("bundle = %q", got)
	}
}

// TestStoreKeepsSymlinkedBundle: a pre-seeded bundle linked into
// <cache>.artifact-snapshots is kept when the upload is the same bundle (and
// recorded then); one that differs from the upload has no record to show it
// is what was meant, so the link is quarantined and the upload stored,
// the snapshot untouched.
func TestStoreKeepsSymlinkedBundle(t *testing.T) {
	c := newTestCache(t)
	snap := filepath.Join(c.Root()+".artifact-snapshots", "b", "b.js")
	writeFile(t, snap, "baked")
	if err := os.MkdirAll(c.Dir("b"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join("..", "..", filepath.Base(c.Root())+".artifact-snapshots", "b", "b.js")
	if err := os.Symlink(rel, c.BundlePath("b")); err != nil {
		t.Fatal(err)
	}
	res := storeBundle(t, c, "b", []byte("baked"), map[string]string{"stats.json": "s"})
	if !slices.Equal(res.Existing, []string{"b"}) {
		t.Errorf("result = %+v, want Existing [b]", res)
	}
	if target, err := os.Readlink(c.BundlePath("b")); err != nil || target != rel {
		t.Errorf("symlink replaced: %q, %v", target, err)
	}
	if !c.AssetExists("b", "stats.json") {
		t.Error("companion not written beside a symlinked bundle")
	}
	if _, ok := c.readSum("b"); !ok {
		t.Error("a pre-seeded bundle equal to the upload was not recorded")
	}

	if err := os.Remove(c.sumPath("b")); err != nil { // pre-seeded again, no record
		t.Fatal(err)
	}
	res = storeBundle(t, c, "b", []byte("uploaded"), nil)
	if !slices.Equal(res.Stored, []string{"b"}) {
		t.Errorf("result = %+v, want Stored [b]: a pre-seed that differs from the upload is replaced", res)
	}
	if got := readFile(t, c.BundlePath("b")); got != "uploaded" {
		t.Errorf("bundle = %q", got)
	}
	if got := readFile(t, snap); got != "baked" {
		t.Errorf("snapshot changed: %q", got)
	}
}

func TestStoreFailsOnDirectoryAtBundlePath(t *testing.T) {
	c := newTestCache(t)
	writeFile(t, filepath.Join(c.BundlePath("b"), "inner"), "x")
	_, err := c.Store(context.Background(), Upload{Bundles: map[string]string{"b": stage(t, c, []byte("js"))}})
	if err == nil {
		t.Fatal("Store over a non-empty directory succeeded")
	}
	var ine *InvalidNameError
	if errors.As(err, &ine) {
		t.Errorf("I/O failure reported as *InvalidNameError: %v", err)
	}
	if _, err := os.Lstat(c.lockPath("b")); !os.IsNotExist(err) {
		t.Errorf("lock file left behind after failure: %v", err)
	}
}

// TestCrashLeftovers simulates processes killed mid-upload: a staged but
// never stored bundle, a lock file and a companion temp file left behind.
func TestCrashLeftovers(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cache")
	c, err := Open(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewStaging()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Stage(strings.NewReader("half a bund")); err != nil {
		t.Fatal(err)
	}
	// Killed here: no Store, no Remove. A killed Store leaves at most a lock
	// file and a temp file.
	old := time.Now().Add(-time.Minute)
	lock := c.lockPath("b")
	tmp := filepath.Join(c.Dir("b"), tmpPrefix+"deadbeef")
	for _, p := range []string{lock, tmp} {
		writeFile(t, p, "junk")
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}

	// The restarted process.
	c2, err := Open(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Has("b") {
		t.Fatal("Has true for a bundle that was only staged")
	}
	if got := c2.Missing([]string{"b"}); !slices.Equal(got, []string{"b"}) {
		t.Errorf("Missing = %q", got)
	}
	storeBundle(t, c2, "b", []byte("whole bundle"), nil)
	if got := readFile(t, c2.BundlePath("b")); got != "whole bundle" {
		t.Errorf("bundle = %q", got)
	}
	if names := dirNames(t, c2.Dir("b")); !slices.Equal(names, []string{"b.js", "b.js.sum"}) {
		t.Errorf("bundle dir = %q, want leftovers cleaned", names)
	}
}

func TestStoreEmptyUpload(t *testing.T) {
	c := newTestCache(t)
	res, err := c.Store(context.Background(), Upload{})
	if err != nil || len(res.Stored)+len(res.Existing) != 0 {
		t.Errorf("Store(empty) = %+v, %v", res, err)
	}
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
