package bundles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSweepStagingByOwner: a staging directory whose flock is free and
// whose writer (this host, pid dead) is gone goes at once, whatever its
// age; a live request's stays however old; one with no owner dated far
// ahead goes (a clock step), one a little ahead stays.
func TestSweepStagingByOwner(t *testing.T) {
	c := newTestCache(t)
	uploads := c.uploadsPath()
	gone := filepath.Join(uploads, "gone")
	writeFile(t, filepath.Join(gone, ownerFile), fmt.Sprintf("pid=%d host=%s\n", deadPid(t), hostname()))
	writeFile(t, filepath.Join(gone, "part-0001"), "x")
	live, err := c.NewStaging()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Remove() }()
	hour := time.Now().Add(-time.Hour)
	if err := os.Chtimes(live.Dir(), hour, hour); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(live.Dir(), ownerFile), hour, hour); err != nil {
		t.Fatal(err)
	}
	for name, at := range map[string]time.Time{"far-ahead": time.Now().AddDate(1, 0, 0), "near-ahead": time.Now().Add(time.Minute)} {
		dir := filepath.Join(uploads, name)
		writeFile(t, filepath.Join(dir, "part-0001"), "x")
		for _, p := range []string{filepath.Join(dir, "part-0001"), dir} {
			if err := os.Chtimes(p, at, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	removed, err := c.SweepStaging(30 * time.Minute)
	if err != nil || removed != 2 {
		t.Errorf("SweepStaging = %d, %v; want 2 removed", removed, err)
	}
	if got, want := dirNames(t, uploads), []string{filepath.Base(live.Dir()), "near-ahead"}; !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("uploads = %q, want %q", got, want)
	}
}

// TestPruneFutureDatedFirst: directories dated far ahead were used before
// the clock stepped back: pruned first, in date order, and not protected
// as recent; one a minute ahead counts as just used.
func TestPruneFutureDatedFirst(t *testing.T) {
	c := newTestCache(t)
	for _, id := range []string{"ahead1", "ahead2", "near", "old"} {
		storeSized(t, c, id, 1000, 0)
	}
	year := time.Now().AddDate(1, 0, 0)
	for id, at := range map[string]time.Time{"ahead1": year, "ahead2": year.Add(time.Hour), "near": time.Now().Add(time.Minute), "old": time.Now().Add(-time.Hour)} {
		if err := os.Chtimes(c.Dir(id), at, at); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := c.Prune(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := prunedIDs(rep); !slices.Equal(got, []string{"ahead1", "ahead2", "old"}) {
		t.Errorf("pruned %v, want [ahead1 ahead2 old]", got)
	}
	if rep.KeptRecent != 1 || rep.Kept != 1 {
		t.Errorf("report %+v, want near kept as recent", rep)
	}
}

// TestFreeSpace: gone writers' staging goes first; then one least recently
// used bundle per call, never a recent one.
func TestFreeSpace(t *testing.T) {
	c := newTestCache(t)
	gone := filepath.Join(c.uploadsPath(), "gone")
	writeFile(t, filepath.Join(gone, ownerFile), fmt.Sprintf("pid=%d host=%s\n", deadPid(t), hostname()))
	storeSized(t, c, "b1", 1000, 2*time.Hour)
	storeSized(t, c, "b2", 1000, time.Hour)
	storeSized(t, c, "recent", 1000, 0)
	for i, want := range []string{"b1 b2 recent", "b2 recent", "recent", "recent"} {
		freed := c.FreeSpace()
		if got := strings.Join(cacheRootNames(t, c), " "); got != want {
			t.Errorf("after FreeSpace %d: %q, want %q", i, got, want)
		}
		if freed != (i < 3) {
			t.Errorf("FreeSpace %d = %v", i, freed)
		}
	}
	if _, err := os.Lstat(gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the gone writer's staging is still there: %v", err)
	}
}

// TestReadBundleQuarantines: a load of an empty bundle, or of one that no
// longer matches its record, moves it aside (absent from then on); a
// bundle equal to its record, or a pre-seed without one, reads.
func TestReadBundleQuarantines(t *testing.T) {
	c := newTestCache(t)
	storeBundle(t, c, "good", []byte("good js"), nil)
	storeBundle(t, c, "flipped", []byte("good js"), nil)
	writeFile(t, c.BundlePath("flipped"), "evil js")
	writeFile(t, c.BundlePath("empty"), "")
	writeFile(t, c.BundlePath("preseed"), "anything")
	for _, id := range []string{"good", "preseed"} {
		if _, err := c.ReadBundle(id); err != nil {
			t.Errorf("ReadBundle(%s): %v", id, err)
		}
	}
	for _, id := range []string{"flipped", "empty"} {
		_, err := c.ReadBundle(id)
		var corrupt *CorruptError
		if !errors.As(err, &corrupt) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadBundle(%s) = %v, want a *CorruptError wrapping fs.ErrNotExist", id, err)
		}
		if c.Has(id) {
			t.Errorf("%s still present after its quarantine", id)
		}
	}
	// Stored again, it is whole again.
	if res := storeBundle(t, c, "flipped", []byte("good js"), nil); len(res.Stored) != 1 {
		t.Errorf("re-upload of a quarantined bundle: %+v", res)
	}
	var q int
	for _, n := range dirNames(t, c.Root()) {
		if strings.HasPrefix(n, quarantinePrefix) {
			q++
		}
	}
	if q != 2 {
		t.Errorf("%d quarantined entries, want 2", q)
	}
}

// TestStoreReplacesCorruptCopy: an upload of a bundle whose stored copy
// is empty, cut short against its record, or unreadable replaces it; one
// whose stored copy matches its record is kept though the upload differs.
func TestStoreReplacesCorruptCopy(t *testing.T) {
	c := newTestCache(t)
	storeBundle(t, c, "kept", []byte("first"), nil)
	if res := storeBundle(t, c, "kept", []byte("second"), nil); len(res.Existing) != 1 {
		t.Errorf("a good copy was replaced: %+v", res)
	}
	storeBundle(t, c, "cut", []byte("whole bundle"), nil)
	writeFile(t, c.BundlePath("cut"), "whole")
	writeFile(t, c.BundlePath("empty"), "")
	for _, id := range []string{"cut", "empty"} {
		if res := storeBundle(t, c, id, []byte("whole bundle"), nil); len(res.Stored) != 1 {
			t.Errorf("%s: %+v, want stored over the corrupt copy", id, res)
		}
		if got := readFile(t, c.BundlePath(id)); got != "whole bundle" {
			t.Errorf("%s = %q", id, got)
		}
	}
}
