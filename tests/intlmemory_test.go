package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// intlLocales are the 74 locales of the page of issue #30 (item 5).
var intlLocales = strings.Fields(`af-ZA am-ET ar-EG ar-SA az-AZ be-BY bg-BG bn-BD bs-BA ca-ES cs-CZ cy-GB da-DK
	de-DE el-GR en-AU en-CA en-GB en-IN en-US en-ZA es-AR es-ES es-MX et-EE eu-ES fa-IR fi-FI fil-PH fr-CA fr-FR
	ga-IE gl-ES gu-IN he-IL hi-IN hr-HR hu-HU hy-AM id-ID is-IS it-IT ja-JP ka-GE kk-KZ km-KH kn-IN ko-KR lt-LT
	lv-LV mk-MK ml-IN mn-MN mr-IN ms-MY nb-NO nl-NL pl-PL pt-BR pt-PT ro-RO ru-RU sk-SK sl-SI sr-RS sv-SE ta-IN
	te-IN th-TH tr-TR uk-UA vi-VN zh-CN zh-TW`)

// intlPageBundle defines intlPage(), which formats a date and a currency in
// every locale of intlLocales.
func intlPageBundle(marker string) string {
	locales, _ := json.Marshal(intlLocales)
	return markerBundle(marker) + `globalThis.intlPage = function () {
  return ` + string(locales) + `.map(function (l) {
    return new Date(Date.UTC(2024, 2, 5, 14, 7)).toLocaleDateString(l, { dateStyle: 'long', timeZone: 'UTC' }) + ' ' +
      new Intl.NumberFormat(l, { style: 'currency', currency: 'EUR' }).format(1234.5);
  }).join('\n');
};
`
}

// residentBytes is the resident memory of process pid (VmRSS).
func residentBytes(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// Intl's locale data is the process's, not each runtime's (docs/intl.md
// "Memory"): the page above, rendered in one runtime and then in three more
// (three more bundles, one runtime each), grows the gorender process by much
// less than four times what the first runtime grew it by: each further
// runtime by less than 60% of the first's growth. Each runtime keeps
// its Intl for its life; when each parsed its own copy of the locales' data,
// each grew the process as much as the first (the server runs under an
// address-space limit, so that a blow-up fails the test, not the machine).
func TestIntlLocaleDataIsPerProcess(t *testing.T) {
	if testEngine == "node" {
		t.Skip("the node engine's Intl is Node's own, in its processes")
	}
	const runtimes = 4 // the bundles a process keeps loaded by default (MAX_VM_POOL_SIZE)
	s := startLimitedServer(t, []string{"--as=" + strconv.Itoa(3<<30)}, map[string]string{
		"RENDERER_WORKERS_COUNT": "1",
		// Resident memory near what is live (gorender's default, 200, lets
		// the heap reach three times it), so that it measures what stays.
		"GOGC": "25",
	})
	tr := transports[1]
	ids := make([]string, runtimes)
	bundles := map[string]string{}
	for i := range ids {
		ids[i] = newID("intl")
		bundles[ids[i]] = intlPageBundle(ids[i])
	}
	s.upload(t, bundles, nil)
	// Every bundle loaded in its runtime, none has touched Intl.
	for _, id := range ids {
		s.render(t, tr, id, `MARKER`).want(t, tr, 200, id)
	}
	pid := s.cmd.Process.Pid
	base := residentBytes(t, pid)
	var want string
	grown := make([]int64, runtimes)
	for i, id := range ids {
		r := s.render(t, tr, id, `intlPage()`)
		r.wantStatus(t, tr, 200)
		if i == 0 {
			want = r.Body
			if lines := strings.Count(want, "\n") + 1; lines != len(intlLocales) || !strings.Contains(want, "5. März 2024 1.234,50\u00a0€") {
				t.Fatalf("the page: %d lines: %s", lines, clip(want))
			}
		} else if r.Body != want {
			t.Fatalf("runtime %d answered\n%s\nwant\n%s", i+1, clip(r.Body), clip(want))
		}
		grown[i] = residentBytes(t, pid) - base
	}
	mb := func(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/(1<<20)) }
	var steps []string
	for _, g := range grown {
		steps = append(steps, mb(g))
	}
	t.Logf("%s: resident memory over %s: %s after each runtime's first render of the page", testEngine, mb(base), strings.Join(steps, ", "))
	// With the data parsed in each runtime, each further runtime grew it by
	// 75-90% of what the first did (main before #30's item 5, GOGC=25:
	// goja 237 MB then +205 MB a runtime, quickjs 94 then +72). Shared, the
	// first pays for the process's copy and each further runtime only for
	// what its polyfills hold (docs/intl.md "Memory").
	first, further := grown[0], (grown[runtimes-1]-grown[0])/(runtimes-1)
	if further*10 > first*6 {
		t.Errorf("each further runtime grew the process by %s on average, more than 60%% of the first's %s", mb(further), mb(first))
	}
}
