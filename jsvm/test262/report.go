package test262

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
)

// Group is what a difference from Node is filed under in the report and
// the baseline: what the test needs of the host, else its most specific
// feature tag (of those not in incidental, the one fewest tests of the
// suite list: a test of Map.prototype.getOrInsert lists Symbol first),
// else its directory (three levels at most).
func (s *Suite) Group(t *Test) string {
	if need := t.HostNeed(); need != "" {
		return "host " + need
	}
	candidates := slices.DeleteFunc(slices.Clone(t.Features), func(f string) bool {
		return incidental[f] || strings.HasPrefix(f, "Symbol.")
	})
	if len(candidates) == 0 {
		candidates = t.Features
	}
	if len(candidates) > 0 {
		counts := s.featureCounts()
		best := candidates[0]
		for _, f := range candidates[1:] {
			if counts[f] < counts[best] {
				best = f
			}
		}
		return "feature " + best
	}
	dir := strings.Split(path.Dir(t.Path), "/")
	return "dir " + strings.Join(dir[:min(3, len(dir))], "/")
}

// incidental are the feature tags tests list for what they use on the way
// rather than what they test (with every Symbol.* tag); a test listing only
// these is filed under the rarest of them.
var incidental = map[string]bool{
	"Symbol": true, "Reflect": true, "Reflect.construct": true, "Reflect.set": true, "globalThis": true,
	"arrow-function": true, "let": true, "const": true, "class": true, "destructuring-binding": true,
	"default-parameters": true, "computed-property-names": true, "generators": true, "Proxy": true,
	"TypedArray": true, "cross-realm": true, "object-spread": true, "object-rest": true, "BigInt": true,
	"async-functions": true, "template": true, "WeakMap": true, "Map": true, "Set": true, "WeakSet": true,
}

// Run is the outcome of a set of tests on every host, by host name.
type Run struct {
	Suite   *Suite
	Tests   []*Test
	Skipped map[string]int // why -> tests no host ran
	Results map[string][]Result
}

// Count is a directory's pass count on a host.
type Count struct{ Pass, Total, NodePass, BothPass int }

// Counts are the pass counts per directory of each host, and for each
// engine how many of Node's passes it passes too.
func (r *Run) Counts(host string) map[string]*Count {
	counts := map[string]*Count{}
	for _, d := range Dirs {
		counts[d] = &Count{}
	}
	node := r.Results["node"]
	for i, res := range r.Results[host] {
		c := counts[res.Test.Dir()]
		c.Total++
		if res.Pass {
			c.Pass++
		}
		if node != nil && node[i].Pass {
			c.NodePass++
			if res.Pass {
				c.BothPass++
			}
		}
	}
	return counts
}

// Failures are the tests host fails that it must pass to match the
// reference, by path: for node every failure, for an engine those Node
// passes.
func (r *Run) Failures(host string) map[string]Result {
	out := map[string]Result{}
	node := r.Results["node"]
	for i, res := range r.Results[host] {
		if !res.Pass && (host == "node" || node[i].Pass) {
			out[res.Test.Path] = res
		}
	}
	return out
}

// Baseline is the committed list of the known failures on each host (Run's
// Failures), in groups each with its reason.
type Baseline struct {
	// Groups: host -> group -> reason and tests.
	Groups map[string]map[string]*BaselineGroup
}

// BaselineGroup is one group of a host's known failures.
type BaselineGroup struct {
	Reason string
	Tests  []string
}

// NoReason is the reason -update gives a new group until one is written.
const NoReason = "(reason not yet written)"

// Known reports whether path is a known failure on host: listed, or under
// a listed directory (an entry ending in "/").
func (b *Baseline) Known(host, path string) bool {
	for _, g := range b.Groups[host] {
		for _, entry := range g.Tests {
			if entry == path || strings.HasSuffix(entry, "/") && strings.HasPrefix(path, entry) {
				return true
			}
		}
	}
	return false
}

// ReadBaseline reads the baseline's text (WriteTo's format): a header line
// "== host | group | reason", then the group's test paths, one a line.
func ReadBaseline(r io.Reader) (*Baseline, error) {
	b := &Baseline{Groups: map[string]map[string]*BaselineGroup{}}
	var cur *BaselineGroup
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "== "):
			parts := strings.SplitN(line[3:], " | ", 3)
			if len(parts) != 3 {
				return nil, fmt.Errorf("baseline line %d: want \"== host | group | reason\"", n)
			}
			if b.Groups[parts[0]] == nil {
				b.Groups[parts[0]] = map[string]*BaselineGroup{}
			}
			cur = &BaselineGroup{Reason: parts[2]}
			b.Groups[parts[0]][parts[1]] = cur
		case cur == nil:
			return nil, fmt.Errorf("baseline line %d: a test before any group", n)
		default:
			cur.Tests = append(cur.Tests, line)
		}
	}
	return b, sc.Err()
}

// WriteTo writes the baseline, sorted.
func (b *Baseline) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# test262: the tests Node 20 passes that each engine fails (and, under node, what Node fails),")
	fmt.Fprintln(bw, "# grouped, each group with its reason. Regenerate with `go test ./jsvm/test262 -update`")
	fmt.Fprintln(bw, "# (TEST262=all for the whole suite); write a reason where it says none. docs/test262.md.")
	for _, host := range slices.Sorted(maps.Keys(b.Groups)) {
		for _, name := range slices.Sorted(maps.Keys(b.Groups[host])) {
			g := b.Groups[host][name]
			if len(g.Tests) == 0 {
				continue
			}
			fmt.Fprintf(bw, "\n== %s | %s | %s\n", host, name, g.Reason)
			for _, t := range slices.Sorted(slices.Values(g.Tests)) {
				fmt.Fprintln(bw, t)
			}
		}
	}
	return 0, bw.Flush()
}

// Check compares a host's failures on the run with the baseline: the new
// ones (not known) and the fixed ones (known, run, and now passing).
func (b *Baseline) Check(r *Run, host string) (newFailures []Result, fixed []string) {
	failures := r.Failures(host)
	for _, p := range slices.Sorted(maps.Keys(failures)) {
		if !b.Known(host, p) {
			newFailures = append(newFailures, failures[p])
		}
	}
	for _, t := range r.Tests {
		if _, failing := failures[t.Path]; !failing && b.Known(host, t.Path) {
			fixed = append(fixed, t.Path)
		}
	}
	return newFailures, fixed
}

// Update makes the baseline for the run's hosts: the run's failures,
// grouped, keeping each group's reason; the entries of tests the run did
// not run stay as they are. Where a group holds every test the run ran
// under a directory, at least collapseAt of them, the directory stands for
// them ("built-ins/Temporal/" on Node 20).
func (b *Baseline) Update(r *Run) *Baseline {
	ran := map[string]bool{}
	dirTests := map[string]int{} // "built-ins/Temporal/" -> tests run under it
	for _, t := range r.Tests {
		ran[t.Path] = true
		for _, d := range dirsOf(t.Path) {
			dirTests[d]++
		}
	}
	covered := func(entry string) bool {
		if !strings.HasSuffix(entry, "/") {
			return ran[entry]
		}
		return dirTests[entry] > 0
	}
	out := &Baseline{Groups: map[string]map[string]*BaselineGroup{}}
	add := func(host, group, entry string) {
		if out.Groups[host] == nil {
			out.Groups[host] = map[string]*BaselineGroup{}
		}
		g := out.Groups[host][group]
		if g == nil {
			g = &BaselineGroup{Reason: NoReason}
			if old := b.Groups[host][group]; old != nil {
				g.Reason = old.Reason
			}
			out.Groups[host][group] = g
		}
		if !slices.Contains(g.Tests, entry) {
			g.Tests = append(g.Tests, entry)
		}
	}
	for host, groups := range b.Groups {
		for name, g := range groups {
			for _, entry := range g.Tests {
				if r.Results[host] == nil || !covered(entry) {
					add(host, name, entry)
				}
			}
		}
	}
	for host := range r.Results {
		groups := map[string][]string{}
		for p, res := range r.Failures(host) {
			group := r.Suite.Group(res.Test)
			groups[group] = append(groups[group], p)
		}
		for group, paths := range groups {
			failing := map[string]int{}
			for _, p := range paths {
				for _, d := range dirsOf(p) {
					failing[d]++
				}
			}
			for _, p := range paths {
				entry := p
				for _, d := range dirsOf(p) {
					if failing[d] == dirTests[d] && dirTests[d] >= collapseAt {
						entry = d
						break
					}
				}
				add(host, group, entry)
			}
		}
	}
	return out
}

// collapseAt is the fewest tests run under a directory that Update writes as
// the directory.
const collapseAt = 10

// dirsOf are the directories of a test's path two levels deep and more,
// shallowest first, each ending in "/".
func dirsOf(p string) []string {
	parts := strings.Split(p, "/")
	var out []string
	for i := 2; i < len(parts); i++ {
		out = append(out, strings.Join(parts[:i], "/")+"/")
	}
	return out
}

// Report writes the run's counts per directory and each engine's
// differences from Node, grouped, with the baseline's reasons, and every
// failing test with its message.
func (r *Run) Report(w io.Writer, title string, b *Baseline) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# test262: %s\n\n", title)
	hosts := slices.Sorted(maps.Keys(r.Results))
	fmt.Fprintf(bw, "%d tests run", len(r.Tests))
	for _, why := range slices.Sorted(maps.Keys(r.Skipped)) {
		fmt.Fprintf(bw, "; %d skipped (%s)", r.Skipped[why], why)
	}
	fmt.Fprintf(bw, ".\n\n| directory | tests | %s |\n| --- | --- |%s\n", strings.Join(hosts, " | "), strings.Repeat(" --- |", len(hosts)))
	counts := map[string]map[string]*Count{}
	for _, h := range hosts {
		counts[h] = r.Counts(h)
	}
	for _, d := range append(slices.Clone(Dirs), "total") {
		var row []string
		total := 0
		for _, h := range hosts {
			c := counts[h][d]
			if d == "total" {
				c = &Count{}
				for _, dc := range counts[h] {
					c.Pass, c.Total, c.NodePass, c.BothPass = c.Pass+dc.Pass, c.Total+dc.Total, c.NodePass+dc.NodePass, c.BothPass+dc.BothPass
				}
			}
			total = c.Total
			cell := fmt.Sprintf("%d", c.Pass)
			if h != "node" && c.NodePass > 0 {
				cell += fmt.Sprintf(" (%.1f%% of Node's)", 100*float64(c.BothPass)/float64(c.NodePass))
			}
			row = append(row, cell)
		}
		fmt.Fprintf(bw, "| %s | %d | %s |\n", d, total, strings.Join(row, " | "))
	}
	for _, h := range hosts {
		failures := r.Failures(h)
		what := "tests Node passes that " + h + " fails"
		if h == "node" {
			what = "tests Node fails"
		}
		fmt.Fprintf(bw, "\n## %s: %d %s\n\n", h, len(failures), what)
		groups := map[string][]Result{}
		for _, res := range failures {
			groups[r.Suite.Group(res.Test)] = append(groups[r.Suite.Group(res.Test)], res)
		}
		names := slices.SortedFunc(maps.Keys(groups), func(a, b string) int {
			return cmp.Or(len(groups[b])-len(groups[a]), strings.Compare(a, b))
		})
		fmt.Fprintln(bw, "| group | tests | reason |\n| --- | --- | --- |")
		for _, name := range names {
			reason := NoReason
			if g := b.Groups[h][name]; g != nil {
				reason = g.Reason
			}
			fmt.Fprintf(bw, "| %s | %d | %s |\n", name, len(groups[name]), reason)
		}
		for _, name := range names {
			fmt.Fprintf(bw, "\n### %s %s\n\n", h, name)
			slices.SortFunc(groups[name], func(a, b Result) int { return strings.Compare(a.Test.Path, b.Test.Path) })
			for _, res := range groups[name] {
				fmt.Fprintf(bw, "- %s: %s\n", res.Test.Path, res.Message)
			}
		}
	}
	return bw.Flush()
}

// WriteFile writes what write writes to name.
func WriteFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
