// Package chartcheck checks the Helm chart at deploy/helm/gorender without a
// cluster: every CI variant (ci/*-values.yaml) is rendered by the pinned helm
// (scripts/install-go-tool.sh helm), compared with its golden file, strictly decoded
// into the Kubernetes API types and checked for what the chart promises.
//
// Regenerate the golden files after a deliberate chart change with
//
//	cd tools && go test ./chartcheck -update
package chartcheck

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gorender/gorender/tools/internal/repo"
)

var update = flag.Bool("update", false, "rewrite the golden files under deploy/helm/gorender/ci/golden")

// chartPath is the chart's directory, relative to the repository root.
const chartPath = "deploy/helm/gorender"

// releaseName and namespace of every rendering.
const (
	releaseName = "gorender"
	namespace   = "default"
)

// requiredVariants are the CI variants issue #8 asks for, and issue #14's
// node engine.
var requiredVariants = []string{"autoscaling", "minimal", "node", "preseed", "sidecar"}

func root(t *testing.T) string {
	t.Helper()
	dir, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// helmBinary is $HELM, else the repository's .bin/helm.
func helmBinary(t *testing.T) string {
	t.Helper()
	path := os.Getenv("HELM")
	if path == "" {
		path = filepath.Join(root(t), ".bin", "helm")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("helm not found at %s: run scripts/install-go-tool.sh helm (scripts/check-deploy.sh does)", path)
	}
	return path
}

// variants maps each CI variant's name to its values file.
func variants(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root(t), chartPath, "ci", "*-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		out[strings.TrimSuffix(filepath.Base(f), "-values.yaml")] = f
	}
	for _, name := range requiredVariants {
		if out[name] == "" {
			t.Errorf("missing CI variant %s/ci/%s-values.yaml", chartPath, name)
		}
	}
	return out
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// helmTemplate renders the chart with extra helm arguments (-f, --set).
func helmTemplate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return helmTemplateChart(t, filepath.Join(root(t), chartPath), args...)
}

// helmTemplateChart renders the chart in dir.
func helmTemplateChart(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	full := append([]string{"template", releaseName, dir, "--namespace", namespace}, args...)
	cmd := exec.Command(helmBinary(t), full...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stderr.String(), err
	}
	return stdout.String(), nil
}

func renderVariant(t *testing.T, valuesFile string) string {
	t.Helper()
	out, err := helmTemplate(t, "-f", valuesFile)
	if err != nil {
		t.Fatalf("helm template -f %s: %v\n%s", valuesFile, err, out)
	}
	return out
}

// TestGolden compares each variant's rendering with its committed golden
// file, so every change to the rendered manifests shows in review.
func TestGolden(t *testing.T) {
	vs := variants(t)
	goldenDir := filepath.Join(root(t), chartPath, "ci", "golden")
	for _, name := range sortedNames(vs) {
		t.Run(name, func(t *testing.T) {
			got := renderVariant(t, vs[name])
			golden := filepath.Join(goldenDir, name+".yaml")
			if *update {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (create it: cd tools && go test ./chartcheck -update)", err)
			}
			if got != string(want) {
				t.Errorf("rendered %s differs from %s:\n%s\nIf the change is intended: cd tools && go test ./chartcheck -update",
					name, golden, firstDifference(string(want), got))
			}
		})
	}
	// A golden file without a variant is stale.
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if vs[name] == "" {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s has no ci/%s-values.yaml: delete it", f, name)
		}
	}
}

// firstDifference shows the first differing line with some context.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			from := max(0, i-3)
			var b strings.Builder
			for j := from; j < i && j < len(g); j++ {
				b.WriteString("   " + g[j] + "\n")
			}
			b.WriteString("-  " + wl + "\n+  " + gl + "\n")
			b.WriteString("(line " + strconv.Itoa(i+1) + ")")
			return b.String()
		}
	}
	return "(no line differs)"
}
