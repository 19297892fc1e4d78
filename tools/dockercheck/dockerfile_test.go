// Package dockercheck checks the repository's Dockerfile without a Docker
// engine: BuildKit's own Dockerfile linter (every warning fails), the
// image's shape (pinned bases, numeric non-root user, port, cache volume,
// HEALTHCHECK), and its build command run as written, producing a static
// binary whose healthcheck subcommand works against a live server.
package dockercheck

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/subrequests/lint"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/gorender/gorender/tools/internal/repo"
)

// The pinned bases issue #8 asks for, and the node variant's (issue #14):
// distroless's Node.js 20, whose node is at nodeBinary.
const (
	runtimeBase   = "gcr.io/distroless/static-debian12:nonroot"
	nodeBase      = "gcr.io/distroless/nodejs20-debian12:nonroot"
	nodeStage     = "node"
	nodeBinary    = "/nodejs/bin/node"
	builderImage  = "golang"
	builderSuffix = "-bookworm"
)

func root(t *testing.T) string {
	t.Helper()
	dir, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func readDockerfile(t *testing.T) []byte {
	t.Helper()
	dt, err := os.ReadFile(filepath.Join(root(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return dt
}

// offlineResolver stands in for a registry: every base image is a one-layer
// image of the requested platform whose only environment is PATH. (So a
// Dockerfile reading a variable that only its base image defines is reported
// as UndefinedVar: declare such variables with ARG or ENV.)
type offlineResolver struct{}

func (offlineResolver) ResolveImageConfig(_ context.Context, ref string, opt sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	platform := platforms.DefaultSpec()
	if opt.ImageOpt != nil && opt.ImageOpt.Platform != nil {
		platform = *opt.ImageOpt.Platform
	}
	img := ocispecs.Image{
		Platform: platform,
		Config:   ocispecs.ImageConfig{Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
		RootFS:   ocispecs.RootFS{Type: "layers", DiffIDs: []digest.Digest{digest.FromString(ref)}},
	}
	dt, err := json.Marshal(img)
	return ref, "", dt, err
}

// lintDockerfile runs BuildKit's complete Dockerfile lint (what
// `docker build --check` runs), offline.
func lintDockerfile(dt []byte) (*lint.LintResults, error) {
	sm := llb.NewSourceMap(nil, "Dockerfile", "Dockerfile", dt)
	sm.Definition = &llb.Definition{}
	return dockerfile2llb.DockerfileLint(context.Background(), dt, dockerfile2llb.ConvertOpt{
		MetaResolver: offlineResolver{},
		SourceMap:    sm,
	})
}

func describeWarning(w lint.Warning) string {
	line := 0
	if w.Location != nil && len(w.Location.Ranges) > 0 && w.Location.Ranges[0].Start != nil {
		line = int(w.Location.Ranges[0].Start.Line)
	}
	return fmt.Sprintf("Dockerfile:%d: %s: %s (%s)", line, w.RuleName, w.Detail, w.URL)
}

// TestDockerfileLint fails on every warning of BuildKit's Dockerfile linter,
// experimental rules included, and on any build error it finds.
func TestDockerfileLint(t *testing.T) {
	dt := readDockerfile(t)

	// The check directive must enable every rule and skip none.
	directive, _, _, _ := parser.ParseDirective("check", dt)
	cfg, err := linter.ParseLintOptions(directive)
	if err != nil {
		t.Fatalf("# check=%s: %v", directive, err)
	}
	if !cfg.ExperimentalAll || cfg.SkipAll || len(cfg.SkipRules) > 0 {
		t.Errorf("# check=%s: want experimental=all and no skip, so that every rule runs", directive)
	}

	results, err := lintDockerfile(dt)
	if err != nil {
		t.Fatal(err)
	}
	if results.Error != nil {
		t.Errorf("BuildKit cannot build the Dockerfile: %s", results.Error.Message)
	}
	for _, w := range results.Warnings {
		t.Error(describeWarning(w))
	}
}

// TestLinterReportsProblems makes sure the lint harness is not a no-op.
func TestLinterReportsProblems(t *testing.T) {
	bad := []byte(`# check=experimental=all
FROM golang:1.26.8-bookworm as Build
ENV GOFLAGS -trimpath
ENV GOPATH=$UNDEFINED_THING
CMD gorender serve
`)
	results, err := lintDockerfile(bad)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range results.Warnings {
		got = append(got, w.RuleName)
	}
	for _, want := range []string{"FromAsCasing", "StageNameCasing", "LegacyKeyValueFormat", "UndefinedVar", "JSONArgsRecommended"} {
		if !slices.Contains(got, want) {
			t.Errorf("the linter did not report %s on a Dockerfile that breaks it (reported %v)", want, got)
		}
	}
}

// dockerfile is the parsed Dockerfile.
type dockerfile struct {
	stages []instructions.Stage
	build  *instructions.Stage // the stage that runs `go build`
	final  *instructions.Stage // the last stage: the image
	run    *instructions.RunCommand
}

func parseDockerfile(t *testing.T) *dockerfile {
	t.Helper()
	res, err := parser.Parse(strings.NewReader(string(readDockerfile(t))))
	if err != nil {
		t.Fatal(err)
	}
	stages, _, err := instructions.Parse(res.AST, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages: want a multi-stage build", len(stages))
	}
	d := &dockerfile{stages: stages, final: &stages[len(stages)-1]}
	for i := range stages {
		for _, cmd := range stages[i].Commands {
			if run, ok := cmd.(*instructions.RunCommand); ok && strings.Contains(strings.Join(run.CmdLine, " "), "go build") {
				if d.run != nil {
					t.Fatal("more than one RUN runs go build")
				}
				d.build, d.run = &stages[i], run
			}
		}
	}
	if d.run == nil {
		t.Fatal("no RUN runs go build")
	}
	if d.build == d.final {
		t.Fatal("the image is the build stage: want a separate runtime stage")
	}
	return d
}

// stageEnv returns a stage's ENV values.
func stageEnv(s *instructions.Stage) map[string]string {
	env := map[string]string{}
	for _, cmd := range s.Commands {
		if e, ok := cmd.(*instructions.EnvCommand); ok {
			for _, kv := range e.Env {
				env[kv.Key] = kv.Value
			}
		}
	}
	return env
}

func commands[T instructions.Command](s *instructions.Stage) []T {
	var out []T
	for _, cmd := range s.Commands {
		if c, ok := cmd.(T); ok {
			out = append(out, c)
		}
	}
	return out
}

func execForm(t *testing.T, what string, c instructions.ShellDependantCmdLine) []string {
	t.Helper()
	if c.PrependShell {
		t.Errorf("%s is in shell form; want exec (JSON) form: distroless has no shell", what)
	}
	return c.CmdLine
}

var numericUser = regexp.MustCompile(`^([0-9]+)(:[0-9]+)?$`)

// TestDockerfileShape checks the properties of the image issue #8 asks for.
func TestDockerfileShape(t *testing.T) {
	d := parseDockerfile(t)

	gomod, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := repo.GoVersion(gomod)
	if want := builderImage + ":" + goVersion + builderSuffix; d.build.BaseName != want {
		t.Errorf("build stage FROM %s, want %s (go.mod says go %s)", d.build.BaseName, want, goVersion)
	}
	if d.final.BaseName != runtimeBase {
		t.Errorf("image FROM %s, want %s", d.final.BaseName, runtimeBase)
	}
	checkImage(t, d, d.final)
}

// TestNodeImageShape: the node variant (docker build --target node) is the
// default image's twin on distroless's Node.js 20: the same binary, user,
// port, cache volume, healthcheck and command, with RENDERER_JS_ENGINE=node
// and RENDERER_NODE_PATH naming the image's node.
func TestNodeImageShape(t *testing.T) {
	d := parseDockerfile(t)
	var node *instructions.Stage
	for i := range d.stages {
		if d.stages[i].Name == nodeStage {
			node = &d.stages[i]
		}
	}
	if node == nil {
		t.Fatalf("no stage named %s", nodeStage)
	}
	if node == d.final {
		t.Fatal("the node variant is the last stage: a plain docker build must make the default image")
	}
	if node.BaseName != nodeBase {
		t.Errorf("node image FROM %s, want %s", node.BaseName, nodeBase)
	}
	checkImage(t, d, node)
	env := stageEnv(node)
	if env["RENDERER_JS_ENGINE"] != "node" || env["RENDERER_NODE_PATH"] != nodeBinary {
		t.Errorf("node image ENV RENDERER_JS_ENGINE=%q RENDERER_NODE_PATH=%q, want node and %s", env["RENDERER_JS_ENGINE"], env["RENDERER_NODE_PATH"], nodeBinary)
	}
	// Twins: the same instructions but the base, the description and the
	// engine's two variables.
	shape := func(s *instructions.Stage) []string {
		var out []string
		for _, cmd := range s.Commands {
			switch c := cmd.(type) {
			case *instructions.LabelCommand:
				continue
			case *instructions.EnvCommand:
				for _, kv := range c.Env {
					if kv.Key != "RENDERER_JS_ENGINE" && kv.Key != "RENDERER_NODE_PATH" {
						out = append(out, "ENV "+kv.Key+"="+kv.Value)
					}
				}
				continue
			}
			out = append(out, fmt.Sprint(cmd))
		}
		return out
	}
	if a, b := shape(node), shape(d.final); !slices.Equal(a, b) {
		t.Errorf("the node image's instructions differ from the default image's:\n node:    %q\n default: %q", a, b)
	}
}

// checkImage checks a runtime stage: numeric non-root user, port, cache
// volume owned by that user, the built binary as ENTRYPOINT, its
// healthcheck, CMD serve.
func checkImage(t *testing.T, d *dockerfile, image *instructions.Stage) {
	t.Helper()
	users := commands[*instructions.UserCommand](image)
	if len(users) == 0 {
		t.Fatal("no USER: the image would run as root")
	}
	user := users[len(users)-1].User
	m := numericUser.FindStringSubmatch(user)
	if m == nil || m[1] == "0" {
		t.Fatalf("USER %s: want a numeric non-root uid (Kubernetes runAsNonRoot checks it)", user)
	}
	uid := m[1]

	env := stageEnv(image)
	if env["RENDERER_HOST"] != "0.0.0.0" {
		t.Errorf("ENV RENDERER_HOST=%q, want 0.0.0.0", env["RENDERER_HOST"])
	}
	port := env["RENDERER_PORT"]
	var exposed []string
	for _, e := range commands[*instructions.ExposeCommand](image) {
		exposed = append(exposed, e.Ports...)
	}
	if port != "3800" || !(slices.Contains(exposed, port) || slices.Contains(exposed, port+"/tcp")) {
		t.Errorf("ENV RENDERER_PORT=%q, EXPOSE %v: want 3800 in both", port, exposed)
	}

	cache := env["RENDERER_SERVER_BUNDLE_CACHE_PATH"]
	var volumes []string
	for _, v := range commands[*instructions.VolumeCommand](image) {
		volumes = append(volumes, v.Volumes...)
	}
	if cache == "" || !slices.Contains(volumes, cache) {
		t.Errorf("the bundle cache %q is not a VOLUME (%v)", cache, volumes)
	}
	owned := false
	for _, c := range commands[*instructions.CopyCommand](image) {
		if c.DestPath == cache && (c.Chown == uid || strings.HasPrefix(c.Chown, uid+":")) {
			owned = true
		}
	}
	if !owned {
		t.Errorf("no COPY --chown=%s creates %s: the cache would not be writable by the image's user", uid, cache)
	}

	entry := commands[*instructions.EntrypointCommand](image)
	if len(entry) != 1 {
		t.Fatalf("%d ENTRYPOINTs, want 1", len(entry))
	}
	binary := execForm(t, "ENTRYPOINT", entry[0].ShellDependantCmdLine)
	if len(binary) != 1 {
		t.Fatalf("ENTRYPOINT %v: want the binary alone", binary)
	}
	installed := false
	for _, c := range commands[*instructions.CopyCommand](image) {
		if c.From == d.build.Name && c.DestPath == binary[0] && slices.Equal(c.SourcePaths, []string{outputPath(t, d)}) {
			installed = true
		}
	}
	if !installed {
		t.Errorf("no COPY --from=%s %s %s installs the built binary as the ENTRYPOINT", d.build.Name, outputPath(t, d), binary[0])
	}

	checks := commands[*instructions.HealthCheckCommand](image)
	if len(checks) != 1 {
		t.Fatalf("%d HEALTHCHECKs, want 1", len(checks))
	}
	if test := checks[0].Health.Test; !slices.Equal(test, []string{"CMD", binary[0], "healthcheck"}) {
		t.Errorf("HEALTHCHECK %v, want CMD [%q, \"healthcheck\"]", test, binary[0])
	}
	cmd := commands[*instructions.CmdCommand](image)
	if len(cmd) != 1 || !slices.Equal(execForm(t, "CMD", cmd[0].ShellDependantCmdLine), []string{"serve"}) {
		t.Errorf("CMD: want [\"serve\"]")
	}
}
