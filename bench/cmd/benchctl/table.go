package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ---- Table --------------------------------------------------------------------

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

type cellKey struct{ workload, proto, variant string }

func renderTable(c config, rep *report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gorender vs Node reference, %s\n\n", rep.Started.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- machine: %s\n- commit: %s\n- setup: %s\n- load average (1/5/15 min) before: %s, after: %s\n\n",
		rep.Machine, rep.Commit, rep.Config, rep.LoadBefore, rep.LoadAfter)
	groups := map[cellKey][]result{}
	var order []cellKey
	for _, r := range rep.Results {
		k := cellKey{r.Workload, r.Proto, r.Variant}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	type agg struct {
		rps, p50, p99, rss, cpu float64
		runs                    int
		note                    string
	}
	med := map[cellKey]agg{}
	for k, rs := range groups {
		var rps, p50, p99, rss, cpu []float64
		var notes []string
		for _, r := range rs {
			if r.Note != "" && !slices.Contains(notes, r.Note) {
				notes = append(notes, r.Note)
			}
			if r.RPS > 0 {
				rps, p50, p99, rss = append(rps, r.RPS), append(p50, r.P50ms), append(p99, r.P99ms), append(rss, r.RSSMB)
				if r.CPUms > 0 {
					cpu = append(cpu, r.CPUms)
				}
			}
		}
		med[k] = agg{median(rps), median(p50), median(p99), median(rss), median(cpu), len(rps), strings.Join(notes, "; ")}
	}
	b.WriteString("| workload | proto | server | req/s | p50 ms | p99 ms | peak RSS MB | CPU ms/req | req/s ÷ node | p50 ÷ node | p99 ÷ node | RSS ÷ node | CPU ÷ node | runs | note |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	ratio := func(a, n float64) string {
		if a == 0 || n == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f", a/n)
	}
	for _, k := range order {
		a := med[k]
		n, hasNode := med[cellKey{k.workload, k.proto, "node"}]
		row := []string{k.workload, k.proto, k.variant}
		if a.runs == 0 {
			row = append(row, "—", "—", "—", "—", "—")
		} else {
			row = append(row, fmt.Sprintf("%.1f", a.rps), fmt.Sprintf("%.2f", a.p50), fmt.Sprintf("%.2f", a.p99), fmt.Sprintf("%.0f", a.rss), fmt.Sprintf("%.3f", a.cpu))
		}
		if k.variant != "node" && hasNode {
			row = append(row, ratio(a.rps, n.rps), ratio(a.p50, n.p50), ratio(a.p99, n.p99), ratio(a.rss, n.rss), ratio(a.cpu, n.cpu))
		} else {
			row = append(row, "", "", "", "", "")
		}
		row = append(row, strconv.Itoa(a.runs), a.note)
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if len(rep.Cold) > 0 {
		b.WriteString("\nCold start (process start → first successful render of small-page through the gem's 410 → multipart upload flow, h2c, empty cache; median):\n\n")
		b.WriteString("| server | listening ms | first render ms | RSS after MB | ÷ node | runs |\n|---|--:|--:|--:|--:|--:|\n")
		byV := map[string][]coldResult{}
		var vs []string
		for _, cr := range rep.Cold {
			if _, ok := byV[cr.Variant]; !ok {
				vs = append(vs, cr.Variant)
			}
			byV[cr.Variant] = append(byV[cr.Variant], cr)
		}
		medOf := func(v string, f func(coldResult) float64) float64 {
			var xs []float64
			for _, cr := range byV[v] {
				xs = append(xs, f(cr))
			}
			return median(xs)
		}
		nodeMs := medOf("node", func(cr coldResult) float64 { return cr.Ms })
		for _, v := range vs {
			total := medOf(v, func(cr coldResult) float64 { return cr.Ms })
			r := ""
			if v != "node" {
				r = ratio(total, nodeMs)
			}
			fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.0f | %s | %d |\n", v,
				medOf(v, func(cr coldResult) float64 { return cr.Listen }), total,
				medOf(v, func(cr coldResult) float64 { return cr.RSSMB }), r, len(byV[v]))
		}
	}
	if len(rep.Answers) > 0 {
		b.WriteString("\nAnswers (checked before each measured run; hello, small and medium against Node's goldens):\n\n")
		for _, a := range rep.Answers {
			b.WriteString("- " + a + "\n")
		}
	}
	return b.String()
}
