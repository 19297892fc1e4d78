package tests

// The bundle cache heals itself after crashes, clock steps and bad
// pre-seeds (issue #32): every test here puts the cache in a state a crash
// (kill -9 of the real process), a clock step (file times in the future) or
// a full disk (a tmpfs of a fixed size) leaves, and checks that uploads and
// renders recover at once, with two or three processes on one cache where
// replicas on a shared volume would be.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmpfsCache mounts a tmpfs of size (such as "20m") and returns a cache
// path inside it: a volume that fills up for real. It skips the test where
// mounting is not permitted (not root); the cleanup unmounts it after the
// servers started later have stopped.
func tmpfsCache(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0755"); err != nil {
		t.Skipf("a full disk needs a tmpfs of a fixed size, and mounting one was refused (%v): run as root", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount the test's tmpfs: %v", err)
		}
	})
	return filepath.Join(dir, "cache")
}

// deadPid returns the pid of a process that has exited: a crashed writer's.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// writeAt writes a file (and its directories) and sets its times to at.
func writeAt(t *testing.T, path, content string, at time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// uploadWithin uploads one bundle and returns the answer, or fails t if
// none came within d. assets are name, content pairs of companion files.
func (s *server) uploadWithin(t *testing.T, d time.Duration, id, js string, assets ...string) *response {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	files := map[string][]byte{}
	for i := 0; i+1 < len(assets); i += 2 {
		files[assets[i]] = []byte(assets[i+1])
	}
	r, err := s.gem(transports[1]).UploadAssets(c, map[string][]byte{id: []byte(js)}, files)
	if err != nil {
		t.Fatalf("upload of %s: no answer within %s: %v", id, d, err)
	}
	return convert(r)
}

// TestCacheLockOfDeadWriter (#32, item 1): the <id>.js.lock of a writer
// killed while storing (no flock held on it; its pid, on this host, is
// dead) is taken over at once by every process sharing the cache, not once
// it is 20 s old. Each upload must answer within 10 s, half that age.
func TestCacheLockOfDeadWriter(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(t.TempDir(), "cache")
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{newID("s"), newID("s"), newID("s")}
	for _, id := range ids {
		writeAt(t, filepath.Join(cache, id, id+".js.lock"), fmt.Sprintf("pid=%d host=%s token=dead\n", deadPid(t), host), time.Now())
	}
	env := map[string]string{"RENDERER_SERVER_BUNDLE_CACHE_PATH": cache}
	servers := []*server{startServer(t, env), startServer(t, env), startServer(t, env)}
	for i, s := range servers {
		s.uploadWithin(t, 10*time.Second, ids[i], markerBundle(fmt.Sprint("healed", i))).want(t, transports[1], http.StatusOK, "")
		s.render(t, transports[0], ids[i], "MARKER").want(t, transports[0], http.StatusOK, fmt.Sprint("healed", i))
		if _, err := os.Lstat(filepath.Join(cache, ids[i], ids[i]+".js.lock")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the dead writer's lock of %s is still there (%v)", ids[i], err)
		}
	}
}

// TestCacheFutureLock (#32, item 2): a lock file dated a year ahead (a
// clock stepped back since it was written) that no process holds does not
// block its bundle's uploads forever: its age is how long a waiting
// process has seen it unchanged, so it goes after the stale age (20 s)
// whatever its date. Two processes upload the bundle at once; both answer.
func TestCacheFutureLock(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(t.TempDir(), "cache")
	id := newID("s")
	writeAt(t, filepath.Join(cache, id, id+".js.lock"), "x\n", time.Now().AddDate(1, 0, 0))
	env := map[string]string{"RENDERER_SERVER_BUNDLE_CACHE_PATH": cache}
	a, b := startServer(t, env), startServer(t, env)
	done := make(chan *response, 2)
	for _, s := range []*server{a, b} {
		go func() {
			c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			r, err := s.gem(transports[0]).UploadAssets(c, map[string][]byte{id: []byte(markerBundle("after the step"))}, nil)
			if err != nil {
				t.Errorf("upload behind a future-dated lock: no answer within 60 s: %v", err)
				done <- nil
				return
			}
			done <- convert(r)
		}()
	}
	for range 2 {
		if r := <-done; r != nil && r.Status != http.StatusOK {
			t.Errorf("upload behind a future-dated lock: %d %s", r.Status, clip(r.Body))
		}
	}
	if t.Failed() {
		return
	}
	for _, s := range []*server{a, b} {
		s.render(t, transports[0], id, "MARKER").want(t, transports[0], http.StatusOK, "after the step")
	}
}

// TestCachePruneAfterClockStep (#32, item 3): bundle directories dated in
// the future (used before the clock stepped back) count as used before
// every use dated now or earlier, in their own order, and are prunable: the
// cache gets under its limit by removing the two earliest of them, and a
// bundle used 6 minutes ago stays. No warning claims the cache is stuck.
func TestCachePruneAfterClockStep(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	cache := filepath.Join(t.TempDir(), "cache")
	// Four bundles of 300 KiB dated a year ahead, an hour apart, and one
	// used 6 minutes ago: 1.5 MiB in all.
	future := []string{newID("s"), newID("s"), newID("s"), newID("s")}
	recent := newID("s")
	year := time.Now().AddDate(1, 0, 0)
	seed := func(id string, at time.Time) {
		writeAt(t, filepath.Join(cache, id, id+".js"), statsBundle(id[len(id)-6:], 300<<10), at)
		writeAt(t, filepath.Join(cache, id, "stats.json"), "stats", at)
		if err := os.Chtimes(filepath.Join(cache, id), at, at); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range future {
		seed(id, year.Add(time.Duration(i)*time.Hour))
	}
	seed(recent, time.Now().Add(-6*time.Minute))
	s := startServer(t, map[string]string{
		"RENDERER_SERVER_BUNDLE_CACHE_PATH":     cache,
		"RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE": fmt.Sprint(limit),
		"RENDERER_LOG_LEVEL":                    "info",
	})
	// The pass at start decides: wait until the cache is under its limit
	// or the server says it stays over it.
	deadline := time.Now().Add(30 * time.Second)
	for bundleDirsSize(t, cache) > limit && !s.logged("over its size limit") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	names := s.cacheEntries(t, "")
	if !slices.Contains(names, recent) {
		t.Errorf("the bundle used 6 minutes ago was pruned before bundles dated in the future")
	}
	for i, id := range future {
		if present, want := slices.Contains(names, id), i >= 2; present != want {
			t.Errorf("future-dated bundle %d present = %v, want %v (the earliest dated go first)", i, present, want)
		}
	}
	if size := bundleDirsSize(t, cache); size > limit {
		t.Errorf("the cache holds %d bytes, over its %d-byte limit", size, limit)
	}
	if s.logged("over its size limit") {
		t.Errorf("warned that the cache stays over its limit")
	}
}

// slowUpload starts an upload of one bundle of size bytes whose last
// rest bytes wait for gate; the answer (nil: no answer) goes to the channel.
func (s *server) slowUpload(t *testing.T, id string, size, rest int, gate <-chan struct{}) <-chan *response {
	js := statsBundle("big", size)
	ct, body := multipartBody(
		textPart("password", testPassword), textPart("protocolVersion", "2.0.0"), textPart("gemVersion", gemVersion),
		part{name: "bundle_" + id, filename: id + ".js", body: io.MultiReader(
			strings.NewReader(js[:len(js)-rest]), gatedReader{gate, strings.NewReader(js[len(js)-rest:])})})
	answered := make(chan *response, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx(t), http.MethodPost, s.url+"/upload-assets", body)
		req.Header.Set("Content-Type", ct)
		resp, err := s.http(transports[1]).Do(req)
		if err != nil {
			answered <- nil
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- &response{Status: resp.StatusCode, Body: string(b)}
	}()
	return answered
}

// killDuringUpload kills s with SIGKILL once it has staged 9 MiB of a
// 12.5 MiB upload: it leaves that much in uploads/, with no flock held.
func killDuringUpload(t *testing.T, s *server) {
	t.Helper()
	gate := make(chan struct{})
	defer close(gate)
	s.slowUpload(t, newID("s"), 12500<<10, 3<<20, gate)
	waitStagedBytes(t, s.cache, 9<<20)
	s.signal(t, syscall.SIGKILL)
	s.waitExit(t, 30*time.Second)
}

// TestCacheStagingOfKilledWriter (#32, item 6): on a 20 MiB volume, a
// process killed during a 12.5 MiB upload leaves 9 MiB staged. Another
// process on the cache removes it the moment its own 12.5 MiB upload runs
// out of space (the writer is gone: no flock on its staging directory, its
// pid dead), and a process started on the cache removes such leftovers at
// start, with a staging directory dated a year ahead.
func TestCacheStagingOfKilledWriter(t *testing.T) {
	t.Parallel()
	cache := tmpfsCache(t, "20m")
	env := map[string]string{"RENDERER_SERVER_BUNDLE_CACHE_PATH": cache}
	a, b := startServer(t, env), startServer(t, env)
	killDuringUpload(t, a)

	id := newID("s")
	r := b.uploadWithin(t, 60*time.Second, id, statsBundle("whole", 12500<<10))
	r.want(t, transports[1], http.StatusOK, "")

	// B dies the same way (with room made for its upload); a third
	// process, started on the cache, sweeps its leftover and a
	// future-dated one at start.
	if err := os.RemoveAll(filepath.Join(cache, id)); err != nil {
		t.Fatal(err)
	}
	killDuringUpload(t, b)
	writeAt(t, filepath.Join(cache, "uploads", "0b5f3c1e-2d4a-4e6f-8a9b-0c1d2e3f4a5b", "part-0001"), "left", time.Now().AddDate(1, 0, 0))
	c := startServer(t, env)
	deadline := time.Now().Add(10 * time.Second)
	for len(c.cacheEntries(t, "uploads")) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	c.wantStagingEmpty(t)
}

// TestCacheFullDiskPrunes (#32, item 7): on a 20 MiB volume holding three
// idle 5 MiB bundles (used an hour ago) under a limit they do not reach, a
// 7 MiB upload runs out of space: it prunes the least recently used
// bundle at once and succeeds, instead of answering 500 until a timer
// prunes. Two processes share the cache: the one that uploads is not the
// one that stored the old bundles.
func TestCacheFullDiskPrunes(t *testing.T) {
	t.Parallel()
	cache := tmpfsCache(t, "20m")
	env := map[string]string{
		"RENDERER_SERVER_BUNDLE_CACHE_PATH":     cache,
		"RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE": "18MiB",
		"RENDERER_SUPPORT_MODULES":              "true",
		"RENDERER_LOG_LEVEL":                    "info",
	}
	a, b := startServer(t, env), startServer(t, env)
	old := []string{newID("s"), newID("s"), newID("s")}
	for i, id := range old {
		a.upload(t, map[string]string{id: statsBundle("old", 5<<20)}, nil)
		lastUsedAgo(t, cache, id, time.Duration(3-i)*time.Hour)
	}
	id := newID("s")
	b.uploadWithin(t, 60*time.Second, id, statsBundle("new", 7<<20), "stats.json", "stats of new").want(t, transports[1], http.StatusOK, "")
	b.render(t, transports[0], id, statsRequest).want(t, transports[0], http.StatusOK, "new stats of new")
	names := b.cacheEntries(t, "")
	if slices.Contains(names, old[0]) {
		t.Errorf("the least recently used bundle was kept")
	}
	if !slices.Contains(names, old[2]) {
		t.Errorf("the most recently used old bundle was pruned too")
	}
	if !b.logged("bundle pruned from the cache", old[0]) {
		t.Errorf("the removal was not logged")
	}
}

// unprivileged is the uid (and gid) of the servers that must not read what
// their mode forbids: nobody's.
const unprivileged = 65534

// otherUserCache returns a cache path for a server run as unprivileged
// (runAsUID): the test binary and the test's temporary directories are
// opened to it; the caller chowns the cache once seeded. It skips the
// test when the test process cannot start a process as another user.
func otherUserCache(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a bundle the server may not read needs the server run as another user, which only root can do here")
	}
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir), buildDir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "cache")
}

// chownAll gives the cache to unprivileged, keeping every mode.
func chownAll(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, unprivileged, unprivileged)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// brokenBundle is a bundle cut in the middle of a function: it does not
// compile.
func brokenBundle(marker string) string {
	js := markerBundle(marker) + "globalThis.twice = function (x) { return x * 2; };\n"
	return js[:len(js)-12]
}

// wantQuarantined checks that the server logged the quarantine of id with
// its path in the cache (not the server's path), and that the cache keeps
// a bounded number of quarantined entries.
func (s *server) wantQuarantined(t *testing.T, id string) {
	t.Helper()
	// The log reaches us through a pipe, maybe after the answer.
	for deadline := time.Now().Add(10 * time.Second); !s.logged("bundle quarantined", id); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the quarantine of %s was not logged", id)
			break
		}
	}
	for line := range strings.Lines(s.stderr.String()) {
		if strings.Contains(line, "bundle quarantined") && strings.Contains(line, s.cache) {
			t.Errorf("the quarantine log names the server's path: %s", line)
		}
	}
	n := 0
	for _, name := range s.cacheEntries(t, "") {
		if strings.HasPrefix(name, ".gorender-quarantined-") {
			n++
		}
	}
	if n > 4 {
		t.Errorf("%d quarantined entries kept, want at most 4", n)
	}
}

// TestCacheCorruptBundleRepaired (#32, item 4): a pre-seeded bundle cut
// short (no record of what it should be) answers 400 until it is uploaded
// again, and the upload then replaces it; an empty one and one that a
// gorender stored but that no longer matches its record (same size, other
// bytes: a disk error) are quarantined when loaded: 410, and the upload
// Rails then makes stores a good copy. Two processes: the one that stored
// the bundle and the one that finds it broken.
func TestCacheCorruptBundleRepaired(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(t.TempDir(), "cache")
	env := map[string]string{"RENDERER_SERVER_BUNDLE_CACHE_PATH": cache}
	cut, empty, flipped := newID("s"), newID("s"), newID("s")
	writeAt(t, filepath.Join(cache, cut, cut+".js"), brokenBundle("cut"), time.Now())
	writeAt(t, filepath.Join(cache, empty, empty+".js"), "", time.Now())
	a := startServer(t, env)
	a.upload(t, map[string]string{flipped: markerBundle("flipped")}, nil)
	a.terminate(t)
	path := filepath.Join(cache, flipped, flipped+".js")
	good := a.readCacheFile(t, filepath.Join(flipped, flipped+".js"))
	if err := os.WriteFile(path, []byte(strings.Repeat("!", len(good))), 0o644); err != nil {
		t.Fatal(err)
	}

	b := startServer(t, env)
	h2 := transports[0]
	b.render(t, h2, cut, "MARKER").wantPrefix(t, h2, http.StatusBadRequest, "The bundle failed to load")
	b.render(t, h2, empty, "MARKER").want(t, h2, http.StatusGone, "No bundle uploaded")
	b.render(t, h2, flipped, "MARKER").want(t, h2, http.StatusGone, "No bundle uploaded")
	b.wantQuarantined(t, empty)
	b.wantQuarantined(t, flipped)
	for _, id := range []string{cut, empty, flipped} {
		marker := map[string]string{cut: "cut", empty: "empty", flipped: "flipped"}[id]
		b.upload(t, map[string]string{id: markerBundle(marker)}, nil)
		b.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, marker)
	}
	b.wantQuarantined(t, cut)
}

// TestCacheUnreadableBundleRepaired (#32, item 4): with the server running
// as an unprivileged user, a pre-seeded bundle file it may not read
// (mode 000) answers 410, not 500, and the upload that follows stores a
// good copy; a bundle directory it may not open answers 410 once: the
// upload that follows moves it aside and stores the bundle (not 500, then
// 410 again: a second 410 is a hard error for Rails).
func TestCacheUnreadableBundleRepaired(t *testing.T) {
	t.Parallel()
	cache := otherUserCache(t)
	file, dir := newID("s"), newID("s")
	writeAt(t, filepath.Join(cache, file, file+".js"), markerBundle("file"), time.Now())
	writeAt(t, filepath.Join(cache, dir, dir+".js"), markerBundle("dir"), time.Now())
	if err := os.MkdirAll(filepath.Join(cache, "uploads"), 0o755); err != nil {
		t.Fatal(err)
	}
	chownAll(t, cache)
	if err := os.Chmod(filepath.Join(cache, file, file+".js"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(cache, dir), 0); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, map[string]string{
		"RENDERER_SERVER_BUNDLE_CACHE_PATH": cache,
		runAsUID:                            fmt.Sprint(unprivileged),
	})
	h2 := transports[0]
	for _, id := range []string{file, dir} {
		marker := map[string]string{file: "file", dir: "dir"}[id]
		t.Run(marker, func(t *testing.T) {
			s.render(t, h2, id, "MARKER").want(t, h2, http.StatusGone, "No bundle uploaded")
			s.upload(t, map[string]string{id: markerBundle(marker)}, nil)
			s.render(t, h2, id, "MARKER").want(t, h2, http.StatusOK, marker)
			s.wantQuarantined(t, id)
		})
	}
}

// TestCacheCorruptGenerationBundle (#32, item 4): a bundle the current
// generation declares that no longer matches its record keeps /ready false,
// with the bundle and the reason logged, until an upload repairs it; then
// the server becomes ready by itself.
func TestCacheCorruptGenerationBundle(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(t.TempDir(), "cache")
	id := newID("s")
	a := startServer(t, map[string]string{"RENDERER_SERVER_BUNDLE_CACHE_PATH": cache})
	a.upload(t, map[string]string{id: markerBundle("declared")}, nil)
	a.terminate(t)
	path := filepath.Join(cache, id, id+".js")
	if err := os.Truncate(path, 5); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(cache, ".current-generations", "gen-1.json")
	writeAt(t, manifest, fmt.Sprintf(`{"bundles":[%q]}`, id), time.Now())

	s := startServer(t, map[string]string{
		"RENDERER_SERVER_BUNDLE_CACHE_PATH":    cache,
		"RENDERER_CURRENT_GENERATION_MANIFEST": manifest,
	})
	h1 := transports[1]
	deadline := time.Now().Add(30 * time.Second)
	for !s.logged("current generation", id, "quarantined") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !s.logged("current generation", id, "quarantined", "5 bytes") {
		t.Fatalf("no log naming the corrupt declared bundle and why")
	}
	s.get(t, h1, http.MethodGet, "/ready").want(t, h1, http.StatusServiceUnavailable, `{"status":"waiting_for_current_generation"}`)
	s.upload(t, map[string]string{id: markerBundle("declared")}, nil)
	deadline = time.Now().Add(30 * time.Second)
	for s.get(t, h1, http.MethodGet, "/ready").Status != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("not ready 30 s after the declared bundle was repaired")
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.render(t, h1, id, "MARKER").want(t, h1, http.StatusOK, "declared")
}

// TestShutdownTimeoutQueuedRenders (#32, item 5): renders still waiting for
// the only runtime when the shutdown timeout passes are not answered with
// an error Rails takes for the page's own (400 "Render interrupted" or
// "The bundle failed to load: … node engine closed"): each gets its
// connection closed or 503 with Retry-After, on every engine alike, and so
// does the render the timeout cut short.
func TestShutdownTimeoutQueuedRenders(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{
		"RENDERER_WORKERS_COUNT":    "1",
		"RENDERER_STUB_TIMERS":      "false",
		"RENDERER_SUPPORT_MODULES":  "true",
		"RENDERER_SHUTDOWN_TIMEOUT": "1s",
	})
	id := newID("s")
	s.upload(t, map[string]string{id: releasedBundle("queued")}, nil)
	s.render(t, transports[0], id, "MARKER").want(t, transports[0], http.StatusOK, "queued")
	pending := []<-chan *response{s.startRender(t, transports[0], id, "untilReleased()")}
	s.waitScrape(t, 60*time.Second, "the runtime busy", func(p promScrape) bool {
		return p.value("gorender_runtimes_busy", "bundle", id) == 1
	})
	for i := range 3 {
		pending = append(pending, s.startRender(t, transports[i%2], id, "MARKER"))
	}
	time.Sleep(500 * time.Millisecond) // the three reach the queue
	s.signal(t, syscall.SIGTERM)
	for i, ch := range pending {
		select {
		case r := <-ch:
			switch {
			case r.Status == 0: // the connection closed: Rails retries
			case r.Status == http.StatusServiceUnavailable && r.Header.Get("Retry-After") != "":
			default:
				t.Errorf("render %d at the shutdown timeout: %d %s, want its connection closed or 503 with Retry-After", i, r.Status, clip(r.Body))
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("render %d not answered 60 s after SIGTERM", i)
		}
	}
	s.waitExit(t, exitTimeout)
}
