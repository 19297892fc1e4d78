package tests

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// This file proves what months of uptime need (issue 18): metric series
// labelled by bundle live only while the bundle is loaded, and the bundle
// cache stays within RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE.

// TestBundleSeriesFollowLoadedBundles: 40 bundles uploaded and rendered once
// each with MAX_VM_POOL_SIZE=3 leave the series of exactly the last 3 in
// /metrics (on main before this, all 40 bundles kept gorender_runtimes and
// gorender_runtimes_busy series); no label of any gorender_* series names an
// evicted bundle.
func TestBundleSeriesFollowLoadedBundles(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"MAX_VM_POOL_SIZE": "3", "RENDERER_WORKERS_COUNT": "1"})
	h2 := transports[0]
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = newID("s")
		s.upload(t, map[string]string{ids[i]: markerBundle(fmt.Sprint("bundle ", i))}, nil)
		s.render(t, h2, ids[i], "MARKER").want(t, h2, http.StatusOK, fmt.Sprint("bundle ", i))
	}
	loaded, evicted := ids[37:], ids[:37]

	p := s.scrapeMetrics(t)
	if got := p.value("gorender_bundles_loaded"); got != 3 {
		t.Errorf("gorender_bundles_loaded = %v, want 3", got)
	}
	var labelled []string // bundle label values, over every family
	for name, family := range p {
		if !strings.HasPrefix(name, "gorender_") {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, lp := range m.GetLabel() {
				if slices.Contains(evicted, lp.GetValue()) {
					t.Errorf("%s{%s=%q}: an evicted bundle still has a series", name, lp.GetName(), lp.GetValue())
				}
				if lp.GetName() == "bundle" && !slices.Contains(labelled, lp.GetValue()) {
					labelled = append(labelled, lp.GetValue())
				}
			}
		}
	}
	slices.Sort(labelled)
	want := slices.Sorted(slices.Values(loaded))
	if !slices.Equal(labelled, want) {
		t.Errorf("bundle label values %v, want the 3 loaded bundles %v", labelled, want)
	}
	for _, id := range loaded {
		if got := p.series("gorender_runtimes", "bundle", id); len(got) != 1 || got[0] != 1 {
			t.Errorf("gorender_runtimes{bundle=%s} = %v, want one sample of 1", id, got)
		}
		if got := p.series("gorender_runtimes_busy", "bundle", id); len(got) != 1 || got[0] != 0 {
			t.Errorf("gorender_runtimes_busy{bundle=%s} = %v, want one sample of 0", id, got)
		}
	}
	if t.Failed() {
		t.Logf("series:\n%s", metricsSummary(p))
	}
}

// statsBundle is a bundle (for RENDERER_SUPPORT_MODULES) whose rendering
// request `MARKER + ' ' + stats()` answers its marker and the companion file
// stats.json, read with fs at every render the way @loadable/server reads
// loadable-stats.json. padding bytes of comment make it as large as needed.
func statsBundle(marker string, padding int) string {
	return "/*" + strings.Repeat("x", padding) + "*/\n" + markerBundle(marker) +
		"globalThis.stats = function () { return require('fs').readFileSync(require('path').join(__dirname, 'stats.json'), 'utf8'); };\n"
}

const statsRequest = "MARKER + ' ' + stats()"

// uploadStats uploads bundle id (statsBundle) with its stats.json.
func (s *server) uploadStats(t *testing.T, id, marker string, padding int) {
	t.Helper()
	s.upload(t, map[string]string{id: statsBundle(marker, padding)}, map[string]string{"stats.json": "stats of " + marker})
}

// bundleDirsSize is the bytes of the cache's bundle directories, as the
// pruner counts them (uploads/ and dot-directories aside).
func bundleDirsSize(t *testing.T, cache string) int64 {
	t.Helper()
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "uploads" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		_ = filepath.WalkDir(filepath.Join(cache, e.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					size += info.Size()
				}
			}
			return nil
		})
	}
	return size
}

// lastUsedAgo sets a bundle's last use (its directory's mtime) ago in the
// past: what the pruner would see had the bundle not been used since.
func lastUsedAgo(t *testing.T, cache, id string, ago time.Duration) {
	t.Helper()
	at := time.Now().Add(-ago)
	if err := os.Chtimes(filepath.Join(cache, id), at, at); err != nil {
		t.Fatal(err)
	}
}

// renderLoop renders id with statsRequest until stop is closed and returns
// how many renders answered anything but 200 "<marker> stats of <marker>".
func (s *server) renderLoop(t *testing.T, tr transport, id, marker string, stop <-chan struct{}) <-chan int {
	bad := make(chan int, 1)
	go func() {
		n, failed := 0, 0
		for {
			select {
			case <-stop:
				if n == 0 {
					failed++ // not one render ran meanwhile: the loop proves nothing
				}
				bad <- failed
				return
			default:
			}
			r, err := s.gem(tr).RenderRaw(ctx(t), gemclient.Render{BundleID: id, Code: statsRequest})
			n++
			if err != nil || r.Status != http.StatusOK || r.Body != marker+" stats of "+marker {
				failed++
				if err == nil {
					t.Errorf("render of %s while pruning: %d %s", marker, r.Status, clip(r.Body))
				} else {
					t.Errorf("render of %s while pruning: %v", marker, err)
				}
			}
		}
	}()
	return bad
}

// TestCachePrunedToLimit: with RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE, a
// cache over its limit is pruned to it, least recently used bundles first,
// while renders of the loaded bundles (which read a companion file on every
// render) and an upload in flight succeed; the loaded bundles are kept
// although they are the least recently stored, and so are bundles used in
// the last 5 minutes. A pruned bundle answers 410, and renders again after
// it is uploaded again.
func TestCachePrunedToLimit(t *testing.T) {
	t.Parallel()
	const limit = 350 << 10
	s := startServer(t, map[string]string{
		"RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE": strconv.Itoa(limit),
		"RENDERER_SUPPORT_MODULES":              "true",
		"MAX_VM_POOL_SIZE":                      "2",
		"RENDERER_WORKERS_COUNT":                "1",
		"RENDERER_LOG_LEVEL":                    "info",
	})
	h2, h1 := transports[0], transports[1]

	// Two loaded bundles, then six of 100 KiB: about 600 KiB in all.
	loaded := []string{newID("s"), newID("s")}
	for i, id := range loaded {
		s.uploadStats(t, id, fmt.Sprint("loaded", i), 0)
		s.render(t, h2, id, statsRequest).want(t, h2, http.StatusOK, fmt.Sprintf("loaded%d stats of loaded%d", i, i))
	}
	old := make([]string, 6)
	for i := range old {
		old[i] = newID("s")
		s.uploadStats(t, old[i], fmt.Sprint("old", i), 100<<10)
	}
	full := bundleDirsSize(t, s.cache)
	if full < 600<<10 {
		t.Fatalf("the cache holds %d bytes, want over 600 KiB", full)
	}
	// Every bundle was used in the last 5 minutes: over the limit, nothing goes.
	s.waitScrape(t, 30*time.Second, "the cache measured over its limit", func(p promScrape) bool {
		return p.value("gorender_bundle_cache_bytes") == float64(full)
	})
	if !strings.Contains(s.stderr.String(), "bundle cache over its size limit") {
		t.Error("no warning that the cache stays over its limit")
	}

	// As if hours had passed: old[0] least recently used, the loaded ones
	// longer ago still.
	for i, id := range old {
		lastUsedAgo(t, s.cache, id, time.Duration(6-i)*time.Hour)
	}
	for _, id := range loaded {
		lastUsedAgo(t, s.cache, id, 10*time.Hour)
	}

	// An upload in flight: half its bundle is staged when the pruning runs.
	inFlight := newID("s")
	gate := make(chan struct{})
	js := statsBundle("inflight", 24<<10) // small enough to keep the cache under its limit once stored
	ct, body := multipartBody(
		textPart("password", testPassword), textPart("protocolVersion", "2.0.0"), textPart("gemVersion", gemVersion),
		part{name: "bundle_" + inFlight, filename: inFlight + ".js", body: io.MultiReader(
			strings.NewReader(js[:len(js)/2]), gatedReader{gate, strings.NewReader(js[len(js)/2:])})},
		filePart("assetsToCopy0", "stats.json", "stats of inflight"))
	uploaded := make(chan *response, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx(t), http.MethodPost, s.url+"/upload-assets", body)
		req.Header.Set("Content-Type", ct)
		resp, err := s.http(h1).Do(req)
		if err != nil {
			t.Errorf("upload in flight: %v", err)
			uploaded <- nil
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		uploaded <- &response{Status: resp.StatusCode, Body: string(b)}
	}()
	waitStagedBytes(t, s.cache, 8<<10)

	// Renders of the loaded bundles run all along.
	stop := make(chan struct{})
	bad := []<-chan int{
		s.renderLoop(t, h2, loaded[0], "loaded0", stop),
		s.renderLoop(t, h1, loaded[1], "loaded1", stop),
	}

	// A store wakes the pruner: old[0..2] go (300 KiB), which brings the
	// cache under 350 KiB; the small bundle just stored stays.
	trigger := newID("s")
	s.uploadStats(t, trigger, "trigger", 0)
	p := s.waitScrape(t, 30*time.Second, "the cache pruned to its limit", func(p promScrape) bool {
		return p.value("gorender_bundles_pruned_total") >= 3 && p.value("gorender_bundle_cache_bytes") <= limit
	})
	if got := p.value("gorender_bundles_pruned_total"); got != 3 {
		t.Errorf("gorender_bundles_pruned_total = %v, want 3", got)
	}
	for range 3 { // a few more renders after the pruning
		s.render(t, h2, loaded[0], statsRequest).want(t, h2, http.StatusOK, "loaded0 stats of loaded0")
	}
	close(stop)
	for _, b := range bad {
		if n := <-b; n != 0 {
			t.Errorf("%d renders of a loaded bundle failed while the cache was pruned", n)
		}
	}

	close(gate)
	if r := <-uploaded; r == nil || r.Status != http.StatusOK {
		t.Fatalf("the upload in flight during the pruning: %+v", r)
	}
	s.render(t, h2, inFlight, statsRequest).want(t, h2, http.StatusOK, "inflight stats of inflight")

	names := s.cacheEntries(t, "")
	for i, id := range old {
		if present := slices.Contains(names, id); present != (i >= 3) {
			t.Errorf("old[%d] present = %v, want %v", i, present, i >= 3)
		}
	}
	for _, id := range append(loaded, trigger, inFlight) {
		if !slices.Contains(names, id) {
			t.Errorf("bundle %s pruned, want kept (loaded, or just used)", id)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, ".gorender-pruned-") {
			t.Errorf("leftover %s in the cache", n)
		}
	}
	if size := bundleDirsSize(t, s.cache); size > limit {
		t.Errorf("the cache holds %d bytes after pruning, over the %d-byte limit", size, limit)
	}
	for _, id := range old[:3] {
		if !s.logged("bundle pruned from the cache", id) {
			t.Errorf("the removal of %s was not logged", id)
		}
	}

	// A pruned bundle is simply absent: 410, then Rails uploads it again.
	for _, tr := range transports {
		s.render(t, tr, old[0], statsRequest).want(t, tr, http.StatusGone, "No bundle uploaded")
	}
	s.uploadStats(t, old[0], "old0", 100<<10)
	s.render(t, h1, old[0], statsRequest).want(t, h1, http.StatusOK, "old0 stats of old0")
}

// logged reports whether a line of the server's output has every one of words.
func (s *server) logged(words ...string) bool {
	for line := range strings.Lines(s.stderr.String()) {
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(line, w) }) {
			return true
		}
	}
	return false
}

// gatedReader reads r once gate is closed.
type gatedReader struct {
	gate <-chan struct{}
	r    io.Reader
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.gate
	return g.r.Read(p)
}

// TestSharedCacheTwoProcesses: two gorender processes share one cache, each
// with a bundle loaded and a size limit the cache is far over. Both prune
// at once: together they remove every idle bundle exactly once, and neither
// removes a bundle the other has loaded (whose companion file the other
// reads on every render), nor its own.
func TestSharedCacheTwoProcesses(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(t.TempDir(), "cache")
	env := map[string]string{
		"RENDERER_SERVER_BUNDLE_CACHE_PATH":     cache,
		"RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE": "1KiB",
		"RENDERER_SUPPORT_MODULES":              "true",
		"RENDERER_WORKERS_COUNT":                "1",
	}
	one, two := startServer(t, env), startServer(t, env)
	h2 := transports[0]

	mine, theirs := newID("s"), newID("s") // loaded by one, and by two
	one.uploadStats(t, mine, "mine", 10<<10)
	one.render(t, h2, mine, statsRequest).want(t, h2, http.StatusOK, "mine stats of mine")
	two.uploadStats(t, theirs, "theirs", 10<<10)
	two.render(t, h2, theirs, statsRequest).want(t, h2, http.StatusOK, "theirs stats of theirs")
	idle := make([]string, 8)
	for i := range idle {
		idle[i] = newID("s")
		[]*server{one, two}[i%2].uploadStats(t, idle[i], fmt.Sprint("idle", i), 10<<10)
	}
	for _, id := range append(idle, mine, theirs) {
		lastUsedAgo(t, cache, id, time.Hour)
	}

	// A store in each process wakes both pruners at once.
	stop := make(chan struct{})
	bad := []<-chan int{one.renderLoop(t, h2, mine, "mine", stop), two.renderLoop(t, h2, theirs, "theirs", stop)}
	triggers := []string{newID("s"), newID("s")}
	done := make(chan struct{})
	go func() {
		defer close(done)
		two.uploadStats(t, triggers[1], "trigger1", 0)
	}()
	one.uploadStats(t, triggers[0], "trigger0", 0)
	<-done
	pruned := func() float64 {
		return one.scrapeMetrics(t).value("gorender_bundles_pruned_total") + two.scrapeMetrics(t).value("gorender_bundles_pruned_total")
	}
	deadline := time.Now().Add(30 * time.Second)
	for pruned() < float64(len(idle)) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	for _, b := range bad {
		if n := <-b; n != 0 {
			t.Errorf("%d renders failed while the other process pruned", n)
		}
	}
	if got := pruned(); got != float64(len(idle)) {
		t.Errorf("the two processes pruned %v bundles together, want each of the %d idle ones once", got, len(idle))
	}

	names := one.cacheEntries(t, "")
	for _, id := range idle {
		if slices.Contains(names, id) {
			t.Errorf("idle bundle %s not pruned", id)
		}
	}
	for _, id := range append([]string{mine, theirs}, triggers...) {
		if !slices.Contains(names, id) {
			t.Errorf("bundle %s pruned, want kept (loaded by a process, or just stored)", id)
		}
	}
	// Each process still renders its own bundle and the other's.
	for _, s := range []*server{one, two} {
		s.render(t, h2, mine, statsRequest).want(t, h2, http.StatusOK, "mine stats of mine")
		s.render(t, h2, theirs, statsRequest).want(t, h2, http.StatusOK, "theirs stats of theirs")
	}
}
