package chartcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// renderMonitoring renders the chart with the alert rules and the dashboard
// on, plus set, and returns its objects.
func renderMonitoring(t *testing.T, set ...string) *rendered {
	t.Helper()
	args := append([]string{"--set", "password.value=a-long-enough-password-for-tests",
		"--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.dashboard.enabled=true"}, set...)
	out, err := helmTemplate(t, args...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	objects, err := decodeAll(out)
	if err != nil {
		t.Fatal(err)
	}
	return sortObjects(t, objects)
}

// TestPrometheusRule: the alert rules the issue asks for (5xx and 503
// ratios, render p99, quarantined runtimes, heap near its limit, Node.js
// processes dying), each on
// this release's series only (the ServiceMonitor's job and namespace, or
// metrics.prometheusRule.selector), with the thresholds of the values, and
// expressions whose brackets balance once templated. (tests/ checks that
// each series they name exists in a live gorender's /metrics.)
func TestPrometheusRule(t *testing.T) {
	r := renderMonitoring(t, "--set", "metrics.prometheusRule.errorRatio=0.02", "--set", "metrics.prometheusRule.for=15m",
		"--set", "metrics.prometheusRule.nodeProcessFailures=5")
	if len(r.prometheusRules) != 1 {
		t.Fatalf("%d PrometheusRules, want 1", len(r.prometheusRules))
	}
	var alerts []string
	for _, g := range r.prometheusRules[0].Spec.Groups {
		for _, rule := range g.Rules {
			alerts = append(alerts, rule.Alert)
			expr := rule.Expr.String()
			if !strings.Contains(expr, `{job="gorender", namespace="default"`) {
				t.Errorf("%s: expr does not select the release's series (job and namespace):\n%s", rule.Alert, expr)
			}
			if !balanced(expr) {
				t.Errorf("%s: unbalanced brackets in:\n%s", rule.Alert, expr)
			}
			if rule.For == nil || *rule.For != "15m" {
				t.Errorf("%s: for %v, want metrics.prometheusRule.for (15m)", rule.Alert, rule.For)
			}
			if rule.Labels["severity"] == "" || rule.Annotations["summary"] == "" || rule.Annotations["description"] == "" {
				t.Errorf("%s: want a severity label, a summary and a description", rule.Alert)
			}
			if strings.Contains(rule.Annotations["description"], "{{`") {
				t.Errorf("%s: the description's Prometheus template was not unquoted: %s", rule.Alert, rule.Annotations["description"])
			}
			if rule.Alert == "GorenderHigh5xxRatio" && !strings.Contains(expr, "> 0.02") {
				t.Errorf("%s: threshold of metrics.prometheusRule.errorRatio (0.02) not in:\n%s", rule.Alert, expr)
			}
			if rule.Alert == "GorenderNodeProcessFailures" && !strings.Contains(expr, "> 5") {
				t.Errorf("%s: threshold of metrics.prometheusRule.nodeProcessFailures (5) not in:\n%s", rule.Alert, expr)
			}
		}
	}
	want := []string{"GorenderHigh5xxRatio", "GorenderBusy503Ratio", "GorenderRenderP99High", "GorenderRuntimesQuarantined", "GorenderQuarantineFull", "GorenderHeapNearLimit", "GorenderNodeProcessFailures"}
	if !slices.Equal(alerts, want) {
		t.Errorf("alerts %v, want %v", alerts, want)
	}

	r = renderMonitoring(t, "--set-string", `metrics.prometheusRule.selector=app="shop-renderer"`)
	for _, g := range r.prometheusRules[0].Spec.Groups {
		for _, rule := range g.Rules {
			if expr := rule.Expr.String(); !strings.Contains(expr, `{app="shop-renderer"`) || strings.Contains(expr, "job=") {
				t.Errorf("%s: expr does not use metrics.prometheusRule.selector alone:\n%s", rule.Alert, expr)
			}
		}
	}
}

// TestDashboardConfigMap: the dashboard's ConfigMap carries the label
// Grafana's sidecar watches and the dashboard file as it is in the
// repository, valid JSON.
func TestDashboardConfigMap(t *testing.T) {
	r := renderMonitoring(t, "--set", "metrics.dashboard.annotations.grafana_folder=Rendering")
	if len(r.configMaps) != 1 {
		t.Fatalf("%d ConfigMaps, want the dashboard's", len(r.configMaps))
	}
	cm := r.configMaps[0]
	if cm.Labels["grafana_dashboard"] != "1" || cm.Annotations["grafana_folder"] != "Rendering" {
		t.Errorf("labels %v annotations %v: want grafana_dashboard=1 and the folder annotation", cm.Labels, cm.Annotations)
	}
	file, err := os.ReadFile(filepath.Join(root(t), chartPath, "files", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := cm.Data["gorender.json"]
	if got != strings.TrimRight(string(file), "\n") {
		t.Errorf("the ConfigMap's gorender.json differs from files/grafana-dashboard.json")
	}
	var dash struct {
		UID    string            `json:"uid"`
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal([]byte(got), &dash); err != nil || dash.UID != "gorender" || len(dash.Panels) == 0 {
		t.Errorf("gorender.json: uid %q, %d panels, %v: want uid gorender and panels", dash.UID, len(dash.Panels), err)
	}
	if size := len(got); size > 900_000 {
		t.Errorf("the dashboard is %d bytes: a ConfigMap holds at most 1 MiB", size)
	}
}

// balanced reports whether a PromQL expression's (), {} and [] nest.
func balanced(expr string) bool {
	var open []rune
	inString := false
	for _, c := range expr {
		switch {
		case c == '"':
			inString = !inString
		case inString:
		case c == '(' || c == '{' || c == '[':
			open = append(open, c)
		case c == ')' || c == '}' || c == ']':
			want := map[rune]rune{')': '(', '}': '{', ']': '['}[c]
			if len(open) == 0 || open[len(open)-1] != want {
				return false
			}
			open = open[:len(open)-1]
		}
	}
	return len(open) == 0 && !inString
}
