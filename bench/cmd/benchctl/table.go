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

type cellKey struct{ setup, workload, enc, mode, proto, variant string }

type agg struct {
	rps, p50, p99, rss, cpu float64
	runs                    int
	note                    string
}

func ratio(a, n float64) string {
	if a == 0 || n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", a/n)
}

// renderTable prints one table per setup: the medians of each cell over
// the interleaved rounds, and their ratios to the Node reference (the
// ratio of the medians).
func renderTable(rep *report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gorender vs Node reference, %s\n\n", rep.Started.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- machine: %s\n- commit: %s\n- run: %s\n- load average (1/5/15 min) before: %s, after: %s\n",
		rep.Machine, rep.Commit, rep.Config, rep.LoadBefore, rep.LoadAfter)
	for _, r := range rep.Rounds {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	groups := map[cellKey][]result{}
	var order []cellKey
	var setupOrder []string
	for _, r := range rep.Results {
		k := cellKey{r.Setup, r.Workload, r.Encoding, r.Mode, r.Proto, r.Variant}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
			if !slices.Contains(setupOrder, r.Setup) {
				setupOrder = append(setupOrder, r.Setup)
			}
		}
		groups[k] = append(groups[k], r)
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
	for _, setup := range setupOrder {
		fmt.Fprintf(&b, "\n### %s: %s\n\n", setup, rep.Setups[setup])
		if setup == "saturated" {
			b.WriteString("Read this table as CPU per request: the user and system time of the server's whole process tree in the measured window, divided by the requests answered in it.\n\n")
			b.WriteString("| workload | enc | requests | proto | server | CPU ms/req | CPU ÷ node | req/s | req/s ÷ node | p50 ms | peak RSS MB | runs | note |\n")
			b.WriteString("|---|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
		} else {
			b.WriteString("| workload | enc | requests | proto | server | req/s | p50 ms | p99 ms | peak RSS MB | CPU ms/req | req/s ÷ node | p50 ÷ node | p99 ÷ node | RSS ÷ node | CPU ÷ node | runs | note |\n")
			b.WriteString("|---|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
		}
		for _, k := range order {
			if k.setup != setup {
				continue
			}
			a := med[k]
			nk := k
			nk.variant = "node"
			n, hasNode := med[nk]
			hasNode = hasNode && k.variant != "node"
			row := []string{k.workload, k.enc, k.mode, k.proto, k.variant}
			num := func(format string, v float64) string {
				if a.runs == 0 {
					return "—"
				}
				return fmt.Sprintf(format, v)
			}
			rat := func(x, y float64) string {
				if !hasNode {
					return ""
				}
				return ratio(x, y)
			}
			if setup == "saturated" {
				row = append(row, num("%.3f", a.cpu), rat(a.cpu, n.cpu), num("%.1f", a.rps), rat(a.rps, n.rps), num("%.2f", a.p50), num("%.0f", a.rss))
			} else {
				row = append(row, num("%.1f", a.rps), num("%.2f", a.p50), num("%.2f", a.p99), num("%.0f", a.rss), num("%.3f", a.cpu),
					rat(a.rps, n.rps), rat(a.p50, n.p50), rat(a.p99, n.p99), rat(a.rss, n.rss), rat(a.cpu, n.cpu))
			}
			row = append(row, strconv.Itoa(a.runs), a.note)
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
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
		b.WriteString("\nAnswers (the first request of each cell checked before its measured run: hello, small and medium against Node's goldens, every answer across servers; with distinct requests the load generator checks every answer against its variant's):\n\n")
		for _, a := range rep.Answers {
			b.WriteString("- " + a + "\n")
		}
	}
	return b.String()
}
