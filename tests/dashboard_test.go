package tests

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// The chart's Grafana dashboard and alert rules (deploy/helm/gorender/files).
const (
	dashboardFile = "../deploy/helm/gorender/files/grafana-dashboard.json"
	rulesFile     = "../deploy/helm/gorender/files/prometheus-rules.yaml"
)

// metricName is a series gorender's /metrics serves, in a PromQL expression.
var metricName = regexp.MustCompile(`\b(?:gorender|go|process)_[a-z0-9_]+\b`)

// byClause is a PromQL aggregation's grouping, e.g. "by (route, code)".
var byClause = regexp.MustCompile(`\bby \(([a-z_, ]*)\)`)

// selector is a series with its label matchers, e.g.
// `gorender_engine_process_restarts_total{ {{- $s }}, reason=~"crash|oom"}`
// (a matcher list ends at the first "}" that does not close a template's
// "{{").
var selector = regexp.MustCompile(`\b((?:gorender|go|process)_[a-z0-9_]+)\{((?:[^}]|\}\})*)\}`)

// matcher is one label matcher of a selector: label, operator, value.
var matcher = regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)\s*"([^"]*)"`)

// enumeratedLabels are labels whose every value a series exports from the
// start (at 0), by series: a value an expression names must be one of them.
var enumeratedLabels = map[string]string{
	"gorender_engine_process_restarts_total": "reason",
}

// targetLabels are the labels Prometheus gives every series of a target
// (prometheus-operator: namespace, pod...), and le, a histogram bucket's.
var targetLabels = []string{"namespace", "job", "pod", "instance", "service", "endpoint", "le"}

// engineSeries are the series one engine alone exports (docs/observability.md "Metrics"),
// by that engine: the check scrapes a server of that engine for them, and
// checks that the engine under test does not export another's.
var engineSeries = map[string]string{
	"gorender_engine_memory_bytes":           "quickjs",
	"gorender_engine_processes":              "node",
	"gorender_engine_process_resident_bytes": "node",
	"gorender_engine_process_restarts_total": "node",
}

// TestDashboardAndAlertMetricsExist: every series the Grafana dashboard and
// the alert rules query exists in /metrics of a live gorender once it has
// served the requests they describe (renders ok and failed, a stream, a
// 410, an upload, runtime replacements), and every label they group by is
// a label of a series their expression names. A series one engine alone
// exports (engineSeries) is looked for on a server of that engine (node
// needs Node.js on PATH: without it the node run of the suite checks them),
// and must be absent on the others. Renaming a metric or a label without
// the dashboard and rules, or misspelling one in them, fails here.
func TestDashboardAndAlertMetricsExist(t *testing.T) {
	t.Parallel()
	exprs := dashboardExprs(t)
	if len(exprs) < 15 {
		t.Fatalf("found %d expressions in %s: has its layout changed?", len(exprs), dashboardFile)
	}
	rules := ruleExprs(t)
	if len(rules) < 5 {
		t.Fatalf("found %d expressions in %s: has its layout changed?", len(rules), rulesFile)
	}
	exprs = append(exprs, rules...)

	scrapes := map[string]promScrape{testEngine: dashboardScrape(t, testEngine)}
	for _, engine := range engineSeries {
		if scrapes[engine] != nil || engine == testEngine {
			continue
		}
		if _, err := exec.LookPath("node"); engine == "node" && err != nil {
			t.Logf("no node on PATH: the node engine's series are checked on the node run of the suite")
			continue
		}
		scrapes[engine] = dashboardScrape(t, engine)
	}

	for _, expr := range exprs {
		names := metricName.FindAllString(expr, -1)
		if len(names) == 0 {
			t.Errorf("no gorender series in %q", expr)
		}
		labels := map[string]bool{}
		values := map[string]map[string]bool{} // enumerated labels' values
		for _, name := range names {
			engine := testEngine
			if only, ok := engineSeries[name]; ok && only != testEngine {
				if _, ok := scrapedFamily(scrapes[testEngine], name); ok {
					t.Errorf("%s exists on %s: docs/observability.md (Metrics) says %s only", name, testEngine, only)
				}
				engine = only
			}
			scrape, ok := scrapes[engine]
			if !ok {
				continue // node without Node.js, logged above
			}
			family, ok := scrapedFamily(scrape, name)
			if !ok {
				t.Errorf("%s (in %q) is not in /metrics of a %s server; it has:\n%s", name, expr, engine, metricsSummary(scrape))
				continue
			}
			for _, m := range family.GetMetric() {
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = true
					if enumeratedLabels[name] == l.GetName() {
						if values[l.GetName()] == nil {
							values[l.GetName()] = map[string]bool{}
						}
						values[l.GetName()][l.GetValue()] = true
					}
				}
			}
		}
		for _, sel := range selector.FindAllStringSubmatch(expr, -1) {
			for _, m := range matcher.FindAllStringSubmatch(sel[2], -1) {
				label, value := m[1], m[3]
				if !slices.Contains(targetLabels, label) && !labels[label] {
					t.Errorf("%q matches on %s, a label %s does not have", expr, label, sel[1])
				}
				if known, ok := values[label]; ok {
					for _, v := range strings.Split(value, "|") {
						if !known[v] {
							t.Errorf("%q matches %s=%q, not one of the values %s exports: %v", expr, label, v, sel[1], slices.Sorted(maps.Keys(known)))
						}
					}
				}
			}
		}
		for _, by := range byClause.FindAllStringSubmatch(expr, -1) {
			for _, label := range strings.Split(by[1], ",") {
				label = strings.TrimSpace(label)
				if !slices.Contains(targetLabels, label) && !labels[label] {
					t.Errorf("%q groups by %s, a label none of its series has", expr, label)
				}
			}
		}
	}
}

// dashboardScrape is /metrics of a server on engine once it has served the
// requests the dashboard describes: renders ok and failed, a stream, a 410,
// an upload, and runtime (on node: process) replacements.
func dashboardScrape(t *testing.T, engine string) promScrape {
	t.Helper()
	s := startServer(t, map[string]string{
		"RENDERER_JS_ENGINE":               engine,
		"RENDERER_WORKERS_COUNT":           "1",
		"RENDERER_MAX_RENDERS_PER_RUNTIME": "1", // every render replaces its runtime
		"RENDERER_MAX_HEAP":                "1GiB",
		"RENDERER_SUPPORT_MODULES":         "true",
	})
	h2 := transports[0]
	app, streams := newID("s"), newID("s")
	s.render(t, h2, app, "MARKER").want(t, h2, http.StatusGone, "No bundle uploaded")
	s.upload(t, map[string]string{app: markerBundle("dashboard"), streams: testStreamsBundle}, nil)
	s.render(t, h2, app, "MARKER").want(t, h2, http.StatusOK, "dashboard")
	s.render(t, h2, app, "throw new Error('dashboard failure')").wantStatus(t, h2, http.StatusBadRequest)
	s.streamRender(t, h2, streams, "TestStreams.ticks(2, 5)", nil).wantComplete(t, ticksBody(2))
	// On node, a process replaced and one serving (between a process's exit
	// and its successor's start it has no resident series).
	if engine == "node" {
		return s.waitScrape(t, 60*time.Second, "a process replaced", func(p promScrape) bool {
			return p.value("gorender_engine_process_restarts_total", "reason", "recycled") > 0 &&
				len(p.series("gorender_engine_process_resident_bytes")) > 0
		})
	}
	// On quickjs, a runtime replaced and one that has loaded the bundle
	// again (between the two the bundle has no engine memory series).
	return s.waitScrape(t, 60*time.Second, "a runtime replaced", func(p promScrape) bool {
		return len(p.series("gorender_runtime_replacements_total")) > 0 &&
			(engine != "quickjs" || len(p.series("gorender_engine_memory_bytes")) > 0)
	})
}

// scrapedFamily is the family of a series name with samples in a scrape: a
// histogram's _bucket, _sum and _count are its family's.
func scrapedFamily(p promScrape, name string) (*dto.MetricFamily, bool) {
	if f, ok := p[name]; ok && len(f.GetMetric()) > 0 {
		return f, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f, ok := p[base]; ok && f.GetType() == dto.MetricType_HISTOGRAM && len(f.GetMetric()) > 0 {
				return f, true
			}
		}
	}
	return nil, false
}

// dashboardExprs returns the dashboard's queries: its panels' targets and
// its variables' queries.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			if target.Expr == "" {
				t.Errorf("panel %q has a target without expr", p.Title)
			}
			exprs = append(exprs, target.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type == "query" {
			exprs = append(exprs, v.Definition)
		}
	}
	return exprs
}

// ruleExprs returns the expr blocks of the rules file (a Helm template, so
// read by lines: each "expr: |" and the lines indented under it).
func ruleExprs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		key, rest, ok := strings.Cut(lines[i], "expr:")
		if !ok || strings.TrimSpace(key) != "" {
			continue
		}
		indent := len(key)
		expr := strings.TrimSpace(rest)
		if expr == "|" || expr == ">" {
			expr = ""
			for i+1 < len(lines) && len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > indent {
				i++
				expr += strings.TrimSpace(lines[i]) + "\n"
			}
		}
		exprs = append(exprs, expr)
	}
	return exprs
}
