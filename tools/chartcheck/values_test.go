package chartcheck

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// notValues are configuration variables the chart sets itself or leaves out
// on purpose.
var notValues = map[string]string{
	"RENDERER_BUNDLE_PATH":             "deprecated alias of RENDERER_SERVER_BUNDLE_CACHE_PATH, which the chart sets from cache.mountPath",
	"GOMEMLIMIT":                       "the Go runtime's own; gorender derives 90% of the container's memory limit without it (extraEnv sets it)",
	"GOGC":                             "the Go runtime's own; gorender uses 200 without it (extraEnv sets it)",
	"GOMAXPROCS":                       "the Go runtime's own; gorender uses the CPU limit but at least 2 without it (extraEnv sets it)",
	"RENDERER_ENABLE_HEALTH_ENDPOINTS": "accepted for compatibility and ignored: /health and /ready are always on",
	"NODE_RENDERER_CONCURRENCY":        "the Node renderer's name for RENDERER_WORKERS_COUNT, which the chart sets from config.workersCount",
	"OTEL_SDK_DISABLED":                "tracing.exporter=none turns traces off; extraEnv sets it",
	"OTEL_RESOURCE_ATTRIBUTES":         "the traces' resource attributes (k8s.pod.name from the downward API...): extraEnv sets them",
}

// TestEveryConfigVariableIsAValue: each variable gorender's configuration
// reads (string literals of server/ and auth/) is set by the chart's
// templates from a value, so adding a variable to config/settings.go without
// exposing it in the chart fails here.
func TestEveryConfigVariableIsAValue(t *testing.T) {
	templates, err := filepath.Glob(filepath.Join(root(t), chartPath, "templates", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, f := range templates {
		data, err := os.ReadFile(f)
		if err == nil {
			text.Write(data)
		}
	}
	for name := range configEnvNames(t) {
		if _, ok := notValues[name]; ok {
			continue
		}
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(text.String()) {
			t.Errorf("%s (read by gorender) is not set anywhere in %s/templates: add it to gorender.configEnv in _helpers.tpl, with a config.* value in values.yaml and values.schema.json",
				name, chartPath)
		}
	}
}

// TestChartRejects: combinations that cannot work fail at render time with
// a message naming the value to set, and the schema rejects typos.
func TestChartRejects(t *testing.T) {
	pw := "password.value=a-long-enough-password-for-tests"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no password in production", nil, "without a password"},
		{"no password with RAILS_ENV production", []string{"--set", "config.railsEnv=production"}, "without a password"},
		{"no password with one production env", []string{"--set", "config.railsEnv=development", "--set", "config.nodeEnv=production"}, "without a password"},
		{"both password sources", []string{"--set", pw, "--set", "password.existingSecret=x"}, "not both"},
		{"network policy without Rails selector", []string{"--set", pw, "--set", "networkPolicy.enabled=true"}, "railsPodSelector"},
		{"ServiceMonitor without metrics", []string{"--set", pw, "--set", "metrics.enabled=false", "--set", "metrics.serviceMonitor.enabled=true"}, "metrics.enabled"},
		{"alert rules without metrics", []string{"--set", pw, "--set", "metrics.enabled=false", "--set", "metrics.prometheusRule.enabled=true"}, "metrics.enabled"},
		{"dashboard without metrics", []string{"--set", pw, "--set", "metrics.enabled=false", "--set", "metrics.dashboard.enabled=true"}, "metrics.enabled"},
		{"bad alert ratio", []string{"--set", pw, "--set", "metrics.prometheusRule.errorRatio=5"}, "errorRatio"},
		{"bad tracing endpoint", []string{"--set", pw, "--set", "tracing.endpoint=collector:4317"}, "endpoint"},
		{"ServiceMonitor without Service", []string{"--set", pw, "--set", "service.enabled=false", "--set", "metrics.serviceMonitor.enabled=true"}, "service.enabled"},
		{"preseed without image", []string{"--set", pw, "--set", "preseed.enabled=true", "--set", "preseed.sourcePath=/bundles"}, "preseed.image.repository"},
		{"preseed without tag", []string{"--set", pw, "--set", "preseed.enabled=true", "--set", "preseed.image.repository=r", "--set", "preseed.sourcePath=/bundles"}, "preseed.image.tag"},
		{"preseed without source path", []string{"--set", pw, "--set", "preseed.enabled=true", "--set", "preseed.image.repository=r", "--set-string", "preseed.image.tag=1"}, "preseed.sourcePath"},
		{"autoscaling without metric", []string{"--set", pw, "--set", "autoscaling.enabled=true", "--set", "autoscaling.targetCPUUtilizationPercentage=null"}, "needs a metric"},
		{"node engine on the static image", []string{"--set", pw, "--set", "image.variant=static", "--set", "config.jsEngine=node"}, "image.variant node"},
		{"unknown image variant", []string{"--set", pw, "--set", "image.variant=alpine"}, "variant"},
		{"bad node heap limit", []string{"--set", pw, "--set", "image.variant=node", "--set", "config.nodeHeapLimit=lots"}, "nodeHeapLimit"},
		{"typo in config", []string{"--set", pw, "--set", "config.workerCount=4"}, "workerCount"},
		{"typo at the top", []string{"--set", pw, "--set", "replicas=4"}, "replicas"},
		{"bad duration", []string{"--set", pw, "--set", "config.renderTimeout=soon"}, "renderTimeout"},
		{"bad log level", []string{"--set", pw, "--set", "config.logLevel=loud"}, "logLevel"},
		{"bad heap size", []string{"--set", pw, "--set", "config.maxHeap=lots"}, "maxHeap"},
		{"bad port", []string{"--set", pw, "--set", "config.port=70000"}, "port"},
		{"bad cache max size", []string{"--set", pw, "--set", "cache.maxSize=lots"}, "maxSize"},
		{"cache size limit not a quantity", []string{"--set", pw, "--set", "cache.sizeLimit=plenty"}, "cache.sizeLimit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := helmTemplate(t, tc.args...)
			if err == nil {
				t.Fatalf("helm template %v rendered; want an error mentioning %q", tc.args, tc.want)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("helm template %v failed without mentioning %q:\n%s", tc.args, tc.want, out)
			}
		})
	}
}

// TestDevelopmentNeedsNoPassword: like gorender, the chart accepts no
// password when RAILS_ENV/NODE_ENV say development or test.
func TestDevelopmentNeedsNoPassword(t *testing.T) {
	out, err := helmTemplate(t, "--set", "config.railsEnv=development", "--set", "config.nodeEnv=test")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	if strings.Contains(out, "RENDERER_PASSWORD") || strings.Contains(out, "kind: Secret") {
		t.Errorf("a password is wired although none is configured:\n%s", out)
	}
}

// TestGracePeriodFollowsShutdownTimeout: the chart's template parses
// config.shutdownTimeout like gorender does (Go durations or bare seconds).
func TestGracePeriodFollowsShutdownTimeout(t *testing.T) {
	cases := []struct {
		set  []string
		want int64
	}{
		{[]string{"--set-string", "config.shutdownTimeout=30s"}, 35},
		{[]string{"--set-string", "config.shutdownTimeout=1m30s"}, 95},
		{[]string{"--set-string", "config.shutdownTimeout=1h0m0.5s"}, 3606},
		{[]string{"--set-string", "config.shutdownTimeout=1500ms"}, 7},
		{[]string{"--set-string", "config.shutdownTimeout=45"}, 50},
		{[]string{"--set", "config.shutdownTimeout=45"}, 50},
		{[]string{"--set", "config.shutdownTimeout=2.5"}, 8},
		{[]string{"--set", "config.shutdownTimeout=null"}, 35},
		{[]string{"--set-string", "config.shutdownTimeout=10s", "--set", "preStopSleepSeconds=5", "--set", "terminationGraceMarginSeconds=10"}, 25},
		{[]string{"--set", "terminationGracePeriodSeconds=600"}, 600},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.set, " "), func(t *testing.T) {
			d := renderDeployment(t, tc.set...)
			if d.Spec.Template.Spec.TerminationGracePeriodSeconds == nil {
				t.Fatal("no grace period")
			}
			if got := *d.Spec.Template.Spec.TerminationGracePeriodSeconds; got != tc.want {
				t.Errorf("terminationGracePeriodSeconds = %d, want %d", got, tc.want)
			}
			// And agree with gorender's own parsing.
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				if e.Name != "RENDERER_SHUTDOWN_TIMEOUT" {
					continue
				}
				dur, err := parseGorenderDuration(e.Value)
				if err != nil {
					t.Fatalf("gorender would refuse RENDERER_SHUTDOWN_TIMEOUT=%q: %v", e.Value, err)
				}
				if secs := int64(math.Ceil(dur.Seconds())); secs > tc.want-5 {
					t.Errorf("RENDERER_SHUTDOWN_TIMEOUT=%q is %ds, more than the grace period allows", e.Value, secs)
				}
			}
		})
	}
}

// TestCacheMaxSizeFromSizeLimit: RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE is
// 80% of the cache volume's sizeLimit in bytes, whatever the quantity's
// unit; cache.maxSize overrides it (0: no limit); without a sizeLimit it is
// left unset (no limit).
func TestCacheMaxSizeFromSizeLimit(t *testing.T) {
	cases := []struct {
		set  []string
		want string // "": unset
	}{
		{nil, "1717986918"}, // the default 2Gi
		{[]string{"--set", "cache.sizeLimit=500M"}, "400000000"},
		{[]string{"--set", "cache.sizeLimit=1.5Gi"}, "1288490188"},
		{[]string{"--set", "cache.sizeLimit=10Ti"}, "8796093022208"},
		{[]string{"--set", "cache.sizeLimit=1073741824"}, "858993459"},
		{[]string{"--set", "cache.sizeLimit=null"}, ""},
		{[]string{"--set", "cache.maxSize=1GiB"}, "1GiB"},
		{[]string{"--set", "cache.maxSize=0"}, "0"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.set, " "), func(t *testing.T) {
			d := renderDeployment(t, tc.set...)
			got := ""
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				if e.Name == "RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE" {
					got = e.Value
				}
			}
			if got != tc.want {
				t.Errorf("RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE = %q, want %q", got, tc.want)
			}
		})
	}
}

// renderDeployment renders the chart's Deployment with a password and the
// helm arguments set.
func renderDeployment(t *testing.T, set ...string) *appsv1.Deployment {
	t.Helper()
	args := append([]string{"--set", "password.value=a-long-enough-password-for-tests", "--show-only", "templates/deployment.yaml"}, set...)
	out, err := helmTemplate(t, args...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	objects, err := decodeAll(out)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := objects[0].obj.(*appsv1.Deployment)
	if !ok {
		t.Fatalf("not a Deployment: %T", objects[0].obj)
	}
	return d
}
