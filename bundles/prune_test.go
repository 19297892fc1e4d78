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
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sized is what storeSized(..., 1000, ...) puts on disk: the bundle, its
// companion and its record (size=1000 sha256=<64 hex digits>).
const sized = int64(1000 + 100 + len("size=1000 sha256=\n") + 64)

// storeSized stores bundle id with size bytes of JavaScript and a companion
// of 100 bytes, then makes its last use ago in the past.
func storeSized(t *testing.T, c *Cache, id string, size int, ago time.Duration) {
	t.Helper()
	storeBundle(t, c, id, []byte(strings.Repeat("x", size)), map[string]string{"loadable-stats.json": strings.Repeat("s", 100)})
	lastUsed(t, c, id, ago)
}

// lastUsed sets bundle id's last use (its directory's mtime) ago in the past.
func lastUsed(t *testing.T, c *Cache, id string, ago time.Duration) {
	t.Helper()
	at := time.Now().Add(-ago)
	if err := os.Chtimes(c.Dir(id), at, at); err != nil {
		t.Fatal(err)
	}
}

func prunedIDs(rep PruneReport) []string {
	var ids []string
	for _, p := range rep.Pruned {
		ids = append(ids, p.ID)
	}
	return ids
}

// cacheRootNames lists the root, without uploads/.
func cacheRootNames(t *testing.T, c *Cache) []string {
	t.Helper()
	return slices.DeleteFunc(dirNames(t, c.Root()), func(n string) bool { return n == uploadsDir })
}

func TestPruneRemovesLeastRecentlyUsedToTheLimit(t *testing.T) {
	c := newTestCache(t)
	// Five bundles of 1100 bytes each; b1 least recently used.
	for i := 1; i <= 5; i++ {
		storeSized(t, c, fmt.Sprint("b", i), 1000, time.Duration(10-i)*time.Hour)
	}
	rep, err := c.Prune(0)
	if err != nil || rep.Size != 5*sized || len(rep.Pruned) != 0 {
		t.Fatalf("Prune(0) = %+v, %v: want the size measured (5 × sized) and nothing removed", rep, err)
	}
	rep, err = c.Prune(3000)
	if err != nil {
		t.Fatal(err)
	}
	if got := prunedIDs(rep); !slices.Equal(got, []string{"b1", "b2", "b3"}) {
		t.Errorf("pruned %v, want the three least recently used [b1 b2 b3]", got)
	}
	if rep.Size != 2*sized || rep.Kept != 0 {
		t.Errorf("report %+v, want size 2 × sized and nothing kept", rep)
	}
	if p := rep.Pruned[0]; p.Bytes != sized || p.Idle < 9*time.Hour {
		t.Errorf("pruned b1 %+v, want %d bytes idle 9h", p, sized)
	}
	if got := cacheRootNames(t, c); !slices.Equal(got, []string{"b4", "b5"}) {
		t.Errorf("cache root %v, want [b4 b5]: pruned directories deleted whole", got)
	}
	for _, id := range []string{"b1", "b2", "b3"} {
		if c.Has(id) {
			t.Errorf("%s still present", id)
		}
		if _, err := c.Hold(id); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Hold(%s) after pruning: %v, want fs.ErrNotExist", id, err)
		}
	}
	// Stored again, a pruned bundle is whole again.
	storeBundle(t, c, "b1", []byte("again"), map[string]string{"loadable-stats.json": "v2"})
	if !c.Has("b1") || !c.AssetExists("b1", "loadable-stats.json") {
		t.Error("b1 not whole after a new store")
	}
}

func TestPruneKeepsWhatIsInUse(t *testing.T) {
	c := newTestCache(t)
	for _, id := range []string{"held", "declared", "recent", "writing", "idle"} {
		storeSized(t, c, id, 1000, time.Hour)
	}
	release, err := c.Hold("held")
	if err != nil {
		t.Fatal(err)
	}
	lastUsed(t, c, "held", time.Hour) // as if held for an hour
	writeFile(t, filepath.Join(c.Root(), generationsDir, "gen-1.json"), `{"bundles":["declared"]}`)
	writeFile(t, filepath.Join(c.Root(), generationsDir, "broken.json"), `not json`)
	lastUsed(t, c, "recent", time.Minute)
	// An older writer that takes no directory lock holds only <id>.js.lock.
	writeFile(t, c.lockPath("writing"), "pid=1")
	lastUsed(t, c, "writing", time.Hour)

	rep, err := c.Prune(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := prunedIDs(rep); !slices.Equal(got, []string{"idle"}) {
		t.Errorf("pruned %v, want only [idle]", got)
	}
	if rep.Kept != 4 || rep.Size != 4*sized+int64(len("pid=1")) {
		t.Errorf("report %+v, want 4 kept, 4 × sized + 5 bytes left", rep)
	}
	for _, id := range []string{"held", "declared", "recent", "writing"} {
		if !c.Has(id) || !c.AssetExists(id, "loadable-stats.json") {
			t.Errorf("%s was touched", id)
		}
	}

	// Released, the held bundle counts as just used; an hour later it goes.
	release()
	release() // idempotent
	if rep, _ := c.Prune(1); slices.Contains(prunedIDs(rep), "held") {
		t.Error("a bundle pruned right after its hold was released")
	}
	lastUsed(t, c, "held", time.Hour)
	if rep, _ := c.Prune(1); !slices.Contains(prunedIDs(rep), "held") {
		t.Errorf("released bundle not pruned an hour later: %+v", rep)
	}
}

func TestPruneKeepsBundleStoredByThisProcess(t *testing.T) {
	c := newTestCache(t)
	storeSized(t, c, "b", 1000, time.Hour)
	unlock, err := c.locks.lock(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := c.Prune(1)
	unlock()
	if len(rep.Pruned) != 0 || rep.Kept != 1 {
		t.Errorf("pruned %+v while this process stores the bundle", rep)
	}
}

func TestPruneSweepsLeftovers(t *testing.T) {
	c := newTestCache(t)
	left := filepath.Join(c.Root(), prunedPrefix+"0123")
	writeFile(t, filepath.Join(left, "x.js"), "x")
	if _, err := c.Prune(0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("leftover of an interrupted prune not deleted: %v", err)
	}
}

// TestPruneRacesStoresAndHolds prunes to nothing, over and over, while
// bundles are stored, held and read: a bundle is never removed while held
// (its files stay readable for the whole hold), every store succeeds, and
// a bundle that is pruned can be stored and held again.
func TestPruneRacesStoresAndHolds(t *testing.T) {
	c := newTestCache(t)
	c.pruneMinIdle = 0 // anything not held or being stored may go at once
	ids := []string{"a", "b", "c", "d"}
	ctx, cancel := context.WithCancel(context.Background())
	var pruned atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			rep, err := c.Prune(1)
			if err != nil {
				t.Error(err)
			}
			pruned.Add(int64(len(rep.Pruned)))
		}
	})
	var holds atomic.Int64
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				id := ids[(w+i)%len(ids)]
				up := Upload{Bundles: map[string]string{id: stage(t, c, []byte("js of "+id))},
					Assets: []Asset{{Name: "stats.json", Path: stage(t, c, []byte("stats of "+id))}}}
				if _, err := c.Store(ctx, up); err != nil && ctx.Err() == nil {
					t.Errorf("Store(%s): %v", id, err)
					return
				}
				release, err := c.Hold(id)
				if errors.Is(err, fs.ErrNotExist) {
					continue // pruned between the store and the hold
				}
				if err != nil {
					t.Errorf("Hold(%s): %v", id, err)
					return
				}
				for range 3 {
					if got, err := os.ReadFile(filepath.Join(c.Dir(id), "stats.json")); err != nil || string(got) != "stats of "+id {
						t.Errorf("held %s: companion %q, %v", id, got, err)
					}
					if _, err := c.ReadBundle(id); err != nil {
						t.Errorf("held %s: %v", id, err)
					}
				}
				holds.Add(1)
				release()
			}
		})
	}
	time.Sleep(2 * time.Second)
	cancel()
	wg.Wait()
	t.Logf("%d holds, %d bundles pruned", holds.Load(), pruned.Load())
	if holds.Load() == 0 || pruned.Load() == 0 {
		t.Fatalf("the race did not happen: %d holds, %d pruned", holds.Load(), pruned.Load())
	}
}

func TestRunPrunerAfterStore(t *testing.T) {
	c := newTestCache(t)
	c.pruneMinIdle = 0
	storeSized(t, c, "old", 1000, time.Hour)
	reports := make(chan PruneReport, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.RunPruner(ctx, 1500, time.Hour, func(r PruneReport) { reports <- r })
	}()
	defer func() { cancel(); <-done }()
	// The first pass, at start: one bundle, under the limit.
	if r := <-reports; r.Size != sized || len(r.Pruned) != 0 {
		t.Fatalf("first pass %+v", r)
	}
	// A store wakes it (the hourly tick would not come in time).
	storeSized(t, c, "new", 1000, 0)
	r := <-reports
	if got := prunedIDs(r); !slices.Equal(got, []string{"old"}) || r.Size != sized {
		t.Errorf("pass after the store %+v, want old pruned and one bundle left", r)
	}
}
