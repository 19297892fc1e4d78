package chartcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// notesTemplate renders NOTES.txt into a ConfigMap: helm template leaves
// NOTES.txt out, and a NOTES.txt that fails to render fails `helm install`.
const notesTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: notes
  namespace: {{ .Release.Namespace }}
data:
  notes: |
{{ tpl (.Files.Get "notes-under-test.txt") . | indent 4 }}
`

// TestNotes renders NOTES.txt for every variant: it must tell the Rails
// settings, renderer_url (the Service, or localhost without one) and
// renderer_password (from which Secret).
func TestNotes(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "gorender")
	if err := os.CopyFS(chart, os.DirFS(filepath.Join(root(t), chartPath))); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(chart, "templates", "NOTES.txt"), filepath.Join(chart, "notes-under-test.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chart, "templates", "notes-under-test.yaml"), []byte(notesTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	vs := variants(t)
	for _, name := range sortedNames(vs) {
		t.Run(name, func(t *testing.T) {
			out, err := helmTemplateChart(t, chart, "-f", vs[name], "--show-only", "templates/notes-under-test.yaml")
			if err != nil {
				t.Fatalf("NOTES.txt does not render: %v\n%s", err, out)
			}
			objects, err := decodeAll(out)
			if err != nil {
				t.Fatal(err)
			}
			notes := objects[0].obj.(*corev1.ConfigMap).Data["notes"]
			full, err := helmTemplateChart(t, chart, "-f", vs[name])
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"config.renderer_url = ", "config.renderer_password = "}
			if strings.Contains(full, "\nkind: Service\n") {
				want = append(want, `"http://gorender.default.svc:3800"`, "helm test gorender")
			} else {
				want = append(want, `"http://localhost:3800"`)
			}
			if strings.Contains(full, "name: RENDERER_PASSWORD\n") {
				want = append(want, "secretKeyRef:")
			}
			for _, w := range want {
				if !strings.Contains(notes, w) {
					t.Errorf("NOTES.txt lacks %q:\n%s", w, notes)
				}
			}
		})
	}
}
