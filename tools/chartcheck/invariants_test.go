package chartcheck

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gorender/gorender/tools/internal/repo"
)

// rendered is one variant's objects, sorted by kind.
type rendered struct {
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	secrets         []*corev1.Secret
	serviceAccounts []*corev1.ServiceAccount
	pods            []*corev1.Pod // helm test hooks
	hpas            []*autoscalingv2.HorizontalPodAutoscaler
	pdbs            []*policyv1.PodDisruptionBudget
	serviceMonitors []*monitoringv1.ServiceMonitor
	prometheusRules []*monitoringv1.PrometheusRule
	configMaps      []*corev1.ConfigMap // the Grafana dashboard
	networkPolicies []*networkingv1.NetworkPolicy
}

func sortObjects(t *testing.T, objects []object) *rendered {
	t.Helper()
	r := &rendered{}
	for _, o := range objects {
		meta, ok := o.obj.(metav1.Object)
		if !ok {
			t.Errorf("%s: not a Kubernetes object", o.source)
			continue
		}
		if meta.GetNamespace() != namespace {
			t.Errorf("%s: metadata.namespace = %q, want the release namespace %q", o.source, meta.GetNamespace(), namespace)
		}
		switch obj := o.obj.(type) {
		case *appsv1.Deployment:
			r.deployments = append(r.deployments, obj)
		case *corev1.Service:
			r.services = append(r.services, obj)
		case *corev1.Secret:
			r.secrets = append(r.secrets, obj)
		case *corev1.ServiceAccount:
			r.serviceAccounts = append(r.serviceAccounts, obj)
		case *corev1.Pod:
			r.pods = append(r.pods, obj)
		case *autoscalingv2.HorizontalPodAutoscaler:
			r.hpas = append(r.hpas, obj)
		case *policyv1.PodDisruptionBudget:
			r.pdbs = append(r.pdbs, obj)
		case *monitoringv1.ServiceMonitor:
			r.serviceMonitors = append(r.serviceMonitors, obj)
		case *monitoringv1.PrometheusRule:
			r.prometheusRules = append(r.prometheusRules, obj)
		case *corev1.ConfigMap:
			r.configMaps = append(r.configMaps, obj)
		case *networkingv1.NetworkPolicy:
			r.networkPolicies = append(r.networkPolicies, obj)
		default:
			t.Errorf("%s: unexpected kind %T", o.source, o.obj)
		}
	}
	return r
}

// TestVariantInvariants checks, for every variant, what the chart promises:
// hardening, probes, the password wiring, the grace period, and that every
// selector selects what it should.
func TestVariantInvariants(t *testing.T) {
	vs := variants(t)
	known := configEnvNames(t)
	for _, name := range sortedNames(vs) {
		t.Run(name, func(t *testing.T) {
			objects, err := decodeAll(renderVariant(t, vs[name]))
			if err != nil {
				t.Fatal(err)
			}
			checkRendered(t, sortObjects(t, objects), known)
		})
	}
}

func checkRendered(t *testing.T, r *rendered, known map[string]bool) {
	t.Helper()
	if len(r.deployments) != 1 {
		t.Fatalf("%d Deployments, want 1", len(r.deployments))
	}
	d := r.deployments[0]
	pod := &d.Spec.Template
	podLabels := labels.Set(pod.Labels)

	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || selector.Empty() || !selector.Matches(podLabels) {
		t.Errorf("Deployment selector %v does not select its pod template labels %v", d.Spec.Selector, pod.Labels)
	}

	// Replicas: omitted under an HPA, and a PDB only when more than one pod runs.
	minReplicas := int32(1)
	switch {
	case len(r.hpas) > 1:
		t.Errorf("%d HPAs", len(r.hpas))
	case len(r.hpas) == 1:
		hpa := r.hpas[0]
		if d.Spec.Replicas != nil {
			t.Errorf("Deployment sets replicas %d although an HPA scales it", *d.Spec.Replicas)
		}
		ref := hpa.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.Name != d.Name {
			t.Errorf("HPA targets %s %s %s, want apps/v1 Deployment %s", ref.APIVersion, ref.Kind, ref.Name, d.Name)
		}
		if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 1 || *hpa.Spec.MinReplicas > hpa.Spec.MaxReplicas {
			t.Errorf("HPA replicas %v..%d", hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas)
		} else {
			minReplicas = *hpa.Spec.MinReplicas
		}
		if len(hpa.Spec.Metrics) == 0 {
			t.Error("HPA has no metric")
		}
	default:
		if d.Spec.Replicas == nil {
			t.Error("Deployment has no replicas and no HPA")
		} else {
			minReplicas = *d.Spec.Replicas
		}
	}
	if minReplicas > 1 && len(r.pdbs) != 1 {
		t.Errorf("%d replicas at least but %d PodDisruptionBudgets, want 1", minReplicas, len(r.pdbs))
	}
	if minReplicas <= 1 && len(r.pdbs) != 0 {
		t.Errorf("a PodDisruptionBudget for a single replica blocks every node drain")
	}
	for _, hpa := range r.hpas {
		for _, m := range hpa.Spec.Metrics {
			if m.Resource == nil || m.Resource.Target.Type != autoscalingv2.UtilizationMetricType {
				continue
			}
			for _, c := range pod.Spec.Containers {
				if _, ok := c.Resources.Requests[m.Resource.Name]; !ok {
					t.Errorf("HPA scales on %s utilization but container %s requests no %s", m.Resource.Name, c.Name, m.Resource.Name)
				}
			}
		}
	}
	for _, pdb := range r.pdbs {
		expectSelects(t, "PodDisruptionBudget "+pdb.Name, pdb.Spec.Selector, podLabels)
		if (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
			t.Errorf("PodDisruptionBudget %s: want exactly one of minAvailable, maxUnavailable", pdb.Name)
		}
	}

	spec := &pod.Spec
	checkPodSecurity(t, "Deployment", spec.SecurityContext)
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token; gorender never calls the API")
	}
	for _, sa := range r.serviceAccounts {
		if sa.Name != spec.ServiceAccountName {
			t.Errorf("ServiceAccount %s is not the pod's (%s)", sa.Name, spec.ServiceAccountName)
		}
	}

	c := findContainer(spec.Containers, "gorender")
	if c == nil {
		t.Fatalf("no container named gorender in %v", containerNames(spec.Containers))
	}
	checkContainerSecurity(t, c)
	env := checkRendererContainer(t, c, spec, known)
	checkEngineImage(t, c, env)
	checkPassword(t, c, r.secrets)
	checkGracePeriod(t, c, spec, env)

	for i := range spec.InitContainers {
		init := &spec.InitContainers[i]
		checkContainerSecurity(t, init)
		if init.Name == "preseed" {
			checkPreseed(t, init, c, env)
		}
	}

	// The Service, its ServiceMonitor, the NetworkPolicy and the test pod.
	httpPort := containerPort(c, "http")
	for _, svc := range r.services {
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) || len(svc.Spec.Selector) == 0 {
			t.Errorf("Service %s selector %v does not select the pods %v", svc.Name, svc.Spec.Selector, pod.Labels)
		}
		for _, p := range svc.Spec.Ports {
			if p.TargetPort != intstr.FromString("http") && p.TargetPort != intstr.FromInt32(httpPort) {
				t.Errorf("Service %s port %s targets %s, not the container's http port", svc.Name, p.Name, p.TargetPort.String())
			}
		}
	}
	for _, sm := range r.serviceMonitors {
		checkServiceMonitor(t, sm, r.services)
	}
	if env["RENDERER_METRICS"] == "false" && len(r.serviceMonitors) > 0 {
		t.Error("a ServiceMonitor scrapes a gorender whose metrics are off")
	}
	for _, np := range r.networkPolicies {
		checkNetworkPolicy(t, np, podLabels, httpPort)
	}
	for _, p := range r.pods {
		checkTestPod(t, p, r.services)
	}
	if len(r.services) == 0 && len(r.pods) > 0 {
		t.Error("a helm test pod without a Service to test")
	}
}

func findContainer(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func containerNames(cs []corev1.Container) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

func containerPort(c *corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func expectSelects(t *testing.T, what string, ls *metav1.LabelSelector, set labels.Set) {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil || sel.Empty() || !sel.Matches(set) {
		t.Errorf("%s selector %v does not select %v", what, ls, set)
	}
}

func checkPodSecurity(t *testing.T, what string, sc *corev1.PodSecurityContext) {
	t.Helper()
	switch {
	case sc == nil:
		t.Errorf("%s: no pod securityContext", what)
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Errorf("%s: pod securityContext.runAsNonRoot is not true", what)
	case sc.RunAsUser == nil || *sc.RunAsUser == 0:
		t.Errorf("%s: pod securityContext.runAsUser is not a non-root uid", what)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: pod seccompProfile is not RuntimeDefault", what)
	}
}

// checkContainerSecurity is the restricted Pod Security Standard plus a
// read-only root file system.
func checkContainerSecurity(t *testing.T, c *corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Errorf("container %s: no securityContext", c.Name)
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Errorf("container %s: runAsNonRoot is not true", c.Name)
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Errorf("container %s: readOnlyRootFilesystem is not true", c.Name)
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Errorf("container %s: allowPrivilegeEscalation is not false", c.Name)
	case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0:
		t.Errorf("container %s: capabilities do not drop ALL (or add some)", c.Name)
	case sc.SeccompProfile != nil && sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("container %s: seccompProfile %s", c.Name, sc.SeccompProfile.Type)
	}
}

// checkRendererContainer checks the gorender container's environment,
// volumes and probes, and returns its plain-valued environment.
func checkRendererContainer(t *testing.T, c *corev1.Container, spec *corev1.PodSpec, known map[string]bool) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("env %s set twice", e.Name)
		}
		env[e.Name] = e.Value
		if !known[e.Name] {
			t.Errorf("env %s is not a variable gorender reads (config/settings.go, auth): a typo?", e.Name)
		}
	}
	port := containerPort(c, "http")
	if port == 0 {
		t.Fatalf("container gorender has no port named http: %v", c.Ports)
	}
	if env["RENDERER_PORT"] != strconv.Itoa(int(port)) {
		t.Errorf("RENDERER_PORT=%q but the http container port is %d", env["RENDERER_PORT"], port)
	}
	host := env["RENDERER_HOST"]
	loopback := host == "127.0.0.1" || host == "localhost" || host == "::1"
	if host != "0.0.0.0" && host != "::" && !loopback {
		t.Errorf("RENDERER_HOST=%q: want 0.0.0.0 (or loopback for a sidecar)", host)
	}

	emptyDirs := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.EmptyDir != nil {
			emptyDirs[v.Name] = true
		}
	}
	mounts := map[string]string{} // path -> volume
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	cache := env["RENDERER_SERVER_BUNDLE_CACHE_PATH"]
	if cache == "" || !emptyDirs[mounts[cache]] {
		t.Errorf("RENDERER_SERVER_BUNDLE_CACHE_PATH=%q is not an emptyDir mount (mounts %v)", cache, mounts)
	}
	checkCacheBound(t, spec, mounts[cache], env["RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE"])
	if !emptyDirs[mounts["/tmp"]] {
		t.Error("/tmp is not an emptyDir mount (the root file system is read-only)")
	}

	probes := map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe}
	for kind, p := range probes {
		if p == nil {
			t.Errorf("no %s probe", kind)
			continue
		}
		h := p.ProbeHandler
		handlers := 0
		for _, set := range []bool{h.Exec != nil, h.HTTPGet != nil, h.TCPSocket != nil, h.GRPC != nil} {
			if set {
				handlers++
			}
		}
		if handlers != 1 {
			t.Errorf("%s probe has %d handlers, want 1: %+v", kind, handlers, h)
		}
		switch {
		case h.HTTPGet != nil:
			if loopback {
				t.Errorf("%s probe: HTTP against the pod IP cannot reach a gorender bound to %s; use exec gorender healthcheck", kind, host)
			}
			want := []string{"/health"}
			if kind == "readiness" {
				want = append(want, "/ready")
			}
			if !slices.Contains(want, h.HTTPGet.Path) {
				t.Errorf("%s probe GETs %s, want one of %v", kind, h.HTTPGet.Path, want)
			}
			if h.HTTPGet.Port != intstr.FromString("http") && h.HTTPGet.Port != intstr.FromInt32(port) {
				t.Errorf("%s probe port %s is not the http port", kind, h.HTTPGet.Port.String())
			}
		case h.Exec != nil:
			if len(h.Exec.Command) < 2 || h.Exec.Command[len(h.Exec.Command)-1] != "healthcheck" {
				t.Errorf("%s probe runs %v, want gorender healthcheck", kind, h.Exec.Command)
			}
		}
	}
	return env
}

// checkEngineImage: the node engine runs on the image that has Node.js
// (tagged -node), and that image runs the node engine (issue #14).
func checkEngineImage(t *testing.T, c *corev1.Container, env map[string]string) {
	t.Helper()
	nodeImage := strings.HasSuffix(c.Image, "-node")
	if env["RENDERER_JS_ENGINE"] == "node" && !nodeImage && !strings.Contains(c.Image, "@sha256:") {
		t.Errorf("RENDERER_JS_ENGINE=node on image %s, which has no Node.js (want the -node image)", c.Image)
	}
	if nodeImage && env["RENDERER_JS_ENGINE"] != "node" {
		t.Errorf("image %s has Node.js but RENDERER_JS_ENGINE=%q", c.Image, env["RENDERER_JS_ENGINE"])
	}
}

// checkPassword: RENDERER_PASSWORD comes from a Secret key, the chart's own
// Secret when it renders one.
func checkPassword(t *testing.T, c *corev1.Container, secrets []*corev1.Secret) {
	t.Helper()
	var ref *corev1.SecretKeySelector
	for _, e := range c.Env {
		if e.Name == "RENDERER_PASSWORD" {
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Fatal("RENDERER_PASSWORD is not read from a Secret")
			}
			ref = e.ValueFrom.SecretKeyRef
		}
	}
	if ref == nil {
		if len(secrets) > 0 {
			t.Error("a Secret is rendered but RENDERER_PASSWORD does not read it")
		}
		return
	}
	for _, s := range secrets {
		if s.Name == ref.Name {
			if len(s.Data[ref.Key]) == 0 {
				t.Errorf("Secret %s has no key %s", s.Name, ref.Key)
			}
			return
		}
	}
	if len(secrets) > 0 {
		t.Errorf("RENDERER_PASSWORD reads Secret %s, but the chart rendered %s", ref.Name, secrets[0].Name)
	}
}

// checkGracePeriod: the kubelet must wait at least the preStop sleep plus
// RENDERER_SHUTDOWN_TIMEOUT (parsed as gorender does) plus a margin.
func checkGracePeriod(t *testing.T, c *corev1.Container, spec *corev1.PodSpec, env map[string]string) {
	t.Helper()
	shutdown := 30 * time.Second // gorender's default
	if v := env["RENDERER_SHUTDOWN_TIMEOUT"]; v != "" {
		d, err := parseGorenderDuration(v)
		if err != nil {
			t.Fatalf("RENDERER_SHUTDOWN_TIMEOUT=%q: %v", v, err)
		}
		shutdown = d
	}
	var preStop int64
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		preStop = c.Lifecycle.PreStop.Sleep.Seconds
	}
	need := int64(math.Ceil(shutdown.Seconds())) + preStop + 5
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds < need {
		t.Errorf("terminationGracePeriodSeconds %v, want at least %d (shutdown %s + preStop %ds + 5s)",
			ptrString(spec.TerminationGracePeriodSeconds), need, shutdown, preStop)
	}
}

func ptrString(p *int64) string {
	if p == nil {
		return "unset"
	}
	return strconv.FormatInt(*p, 10)
}

// parseGorenderDuration parses like gorender's config.parseDuration: Go
// duration syntax, or a bare number of seconds.
func parseGorenderDuration(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(v)
}

// checkPreseed: the init container fills the same cache volume the renderer reads.
func checkPreseed(t *testing.T, init, c *corev1.Container, env map[string]string) {
	t.Helper()
	cache := env["RENDERER_SERVER_BUNDLE_CACHE_PATH"]
	var volume string
	for _, m := range c.VolumeMounts {
		if m.MountPath == cache {
			volume = m.Name
		}
	}
	found := false
	for _, m := range init.VolumeMounts {
		if m.Name == volume && m.MountPath == cache && !m.ReadOnly {
			found = true
		}
	}
	if !found {
		t.Errorf("preseed init container does not mount the cache volume %s at %s writable", volume, cache)
	}
	var source string
	for _, e := range init.Env {
		if e.Name == "PRESEED_SOURCE" {
			source = e.Value
		}
	}
	if !strings.HasPrefix(source, "/") {
		t.Errorf("preseed PRESEED_SOURCE=%q, want an absolute path", source)
	}
	if init.Image == c.Image {
		t.Error("preseed copies from the gorender image itself (distroless: no cp)")
	}
}

func checkServiceMonitor(t *testing.T, sm *monitoringv1.ServiceMonitor, services []*corev1.Service) {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil || sel.Empty() {
		t.Errorf("ServiceMonitor %s: bad or empty selector %v", sm.Name, sm.Spec.Selector)
		return
	}
	var svc *corev1.Service
	for _, s := range services {
		if sel.Matches(labels.Set(s.Labels)) {
			svc = s
		}
	}
	if svc == nil {
		t.Errorf("ServiceMonitor %s selects no rendered Service", sm.Name)
		return
	}
	if ns := sm.Spec.NamespaceSelector; !ns.Any && len(ns.MatchNames) > 0 && !slices.Contains(ns.MatchNames, svc.Namespace) {
		t.Errorf("ServiceMonitor %s looks in %v, the Service is in %s", sm.Name, ns.MatchNames, svc.Namespace)
	}
	for _, ep := range sm.Spec.Endpoints {
		named := slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port })
		if !named || ep.Path != "/metrics" {
			t.Errorf("ServiceMonitor %s endpoint port %q path %q: want a Service port name and /metrics", sm.Name, ep.Port, ep.Path)
		}
	}
}

func checkNetworkPolicy(t *testing.T, np *networkingv1.NetworkPolicy, podLabels labels.Set, port int32) {
	t.Helper()
	expectSelects(t, "NetworkPolicy "+np.Name, &np.Spec.PodSelector, podLabels)
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("NetworkPolicy %s does not restrict ingress", np.Name)
	}
	if len(np.Spec.Ingress) == 0 {
		t.Errorf("NetworkPolicy %s lets nothing in, not even Rails", np.Name)
	}
	for _, rule := range np.Spec.Ingress {
		if len(rule.From) == 0 {
			t.Errorf("NetworkPolicy %s has a rule open to every source", np.Name)
		}
		for _, peer := range rule.From {
			if peer.IPBlock == nil && isEmpty(peer.PodSelector) && isEmpty(peer.NamespaceSelector) {
				t.Errorf("NetworkPolicy %s has a peer that matches every pod: %+v", np.Name, peer)
			}
		}
		for _, p := range rule.Ports {
			if p.Port == nil || (p.Port.String() != "http" && p.Port.IntValue() != int(port)) {
				t.Errorf("NetworkPolicy %s opens port %v, not gorender's %d", np.Name, p.Port, port)
			}
		}
	}
}

func isEmpty(s *metav1.LabelSelector) bool {
	return s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0)
}

func checkTestPod(t *testing.T, p *corev1.Pod, services []*corev1.Service) {
	t.Helper()
	if p.Annotations["helm.sh/hook"] != "test" {
		t.Errorf("Pod %s is not a helm test hook", p.Name)
	}
	checkPodSecurity(t, "Pod "+p.Name, p.Spec.SecurityContext)
	if len(p.Spec.Containers) != 1 {
		t.Fatalf("test Pod %s has %d containers", p.Name, len(p.Spec.Containers))
	}
	c := &p.Spec.Containers[0]
	checkContainerSecurity(t, c)
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	ok := false
	for _, s := range services {
		for _, sp := range s.Spec.Ports {
			if strings.HasPrefix(env["RENDERER_HOST"], s.Name+"."+s.Namespace+".") && env["RENDERER_PORT"] == fmt.Sprint(sp.Port) {
				ok = true
			}
		}
	}
	if !ok || !slices.Equal(c.Args, []string{"healthcheck"}) {
		t.Errorf("test Pod %s runs %v against %s:%s, not gorender healthcheck against the Service", p.Name, c.Args, env["RENDERER_HOST"], env["RENDERER_PORT"])
	}
}

// configEnvNames are the variables gorender's configuration reads (string
// literals of server/ and auth/), RENDERER_PASSWORD among them.
func configEnvNames(t *testing.T) map[string]bool {
	t.Helper()
	names, err := repo.EnvNames(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 10 {
		t.Fatalf("found only %v in %v: has the configuration moved?", names, repo.EnvDirs)
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	return known
}

// checkCacheBound: when the cache volume has a size limit (the kubelet
// evicts the pod past it), gorender prunes the cache below it
// (RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE), leaving at least a tenth of the
// volume for uploads being staged.
func checkCacheBound(t *testing.T, spec *corev1.PodSpec, volume, maxSize string) {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name != volume || v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil {
			continue
		}
		limit := v.EmptyDir.SizeLimit.Value()
		n, ok := gorenderSize(maxSize)
		if !ok || n <= 0 || n > limit-limit/10 {
			t.Errorf("cache volume %s has sizeLimit %s but RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE=%q: want a size at most 90%% of it", volume, v.EmptyDir.SizeLimit, maxSize)
		}
	}
}

// gorenderSize reads a size as gorender does: bytes, or a number with
// KiB, MiB, GiB (or K, M, G) or KB, MB, GB.
func gorenderSize(v string) (int64, bool) {
	scale := int64(1)
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if rest, ok := strings.CutSuffix(v, u.suffix); ok {
			v, scale = strings.TrimSpace(rest), u.scale
			break
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return int64(f * float64(scale)), true
}
