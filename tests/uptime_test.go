package tests

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
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
