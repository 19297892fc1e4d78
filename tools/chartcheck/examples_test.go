package chartcheck

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestExamples decodes the manifests of deploy/examples strictly, and checks
// the gorender container of each Deployment as the chart's own: hardened,
// probed, its cache on an emptyDir, and the Rails containers beside it
// pointed at its localhost port.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root(t), "deploy", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no deploy/examples/*.yaml")
	}
	known := configEnvNames(t)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			objects, err := decodeAll(string(data))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objects {
				d, ok := o.obj.(*appsv1.Deployment)
				if !ok {
					continue
				}
				checkSidecarDeployment(t, d, known)
			}
		})
	}
}

func checkSidecarDeployment(t *testing.T, d *appsv1.Deployment, known map[string]bool) {
	t.Helper()
	spec := &d.Spec.Template.Spec
	checkPodSecurity(t, "Deployment "+d.Name, spec.SecurityContext)
	c := findContainer(spec.InitContainers, "gorender")
	if c == nil {
		c = findContainer(spec.Containers, "gorender")
	} else if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Error("gorender is an init container but not a native sidecar (restartPolicy: Always)")
	}
	if c == nil {
		t.Fatalf("Deployment %s has no gorender container", d.Name)
	}
	checkContainerSecurity(t, c)
	env := checkRendererContainer(t, c, spec, known)
	checkGracePeriod(t, c, spec, env)
	want := "http://localhost:" + strconv.Itoa(int(containerPort(c, "http")))
	for _, rails := range spec.Containers {
		if rails.Name == "gorender" {
			continue
		}
		found := false
		for _, e := range rails.Env {
			if e.Name == "RENDERER_URL" {
				found = true
				if e.Value != want {
					t.Errorf("container %s: RENDERER_URL=%q, want %q", rails.Name, e.Value, want)
				}
			}
		}
		if !found {
			t.Errorf("container %s does not get RENDERER_URL", rails.Name)
		}
	}
}
