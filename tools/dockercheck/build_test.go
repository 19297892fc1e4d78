package dockercheck

import (
	"bytes"
	"context"
	"crypto/rand"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"

	"github.com/gorender/gorender/tools/internal/repo"
)

// buildCommand is the build stage's `go build` RUN line, expanded as the
// shell in the build stage would expand it.
type buildCommand struct {
	env    []string // NAME=value assignments in front of go
	args   []string // go's arguments: build, flags, package
	output int      // index in args of the -o value
}

// parseBuildCommand reads the RUN line with the build arguments given
// (VERSION, TARGETOS, TARGETARCH, ...) over the Dockerfile's ARG defaults.
func parseBuildCommand(t *testing.T, d *dockerfile, buildArgs map[string]string) buildCommand {
	t.Helper()
	vars := map[string]string{}
	for _, cmd := range d.build.Commands {
		if a, ok := cmd.(*instructions.ArgCommand); ok {
			for _, kv := range a.Args {
				if kv.Value != nil {
					vars[kv.Key] = *kv.Value
				} else {
					vars[kv.Key] = ""
				}
			}
		}
	}
	for k, v := range stageEnv(d.build) {
		vars[k] = v
	}
	for k, v := range buildArgs {
		if _, declared := vars[k]; !declared {
			t.Fatalf("build argument %s is not declared by an ARG of the build stage", k)
		}
		vars[k] = v
	}
	var list []string
	for k, v := range vars {
		list = append(list, k+"="+v)
	}
	if !d.run.PrependShell || len(d.run.CmdLine) != 1 {
		t.Fatalf("RUN %v: want the shell form, one command", d.run.CmdLine)
	}
	words, err := shell.NewLex('\\').ProcessWords(d.run.CmdLine[0], shell.EnvsFromSlice(list))
	if err != nil {
		t.Fatalf("RUN %s: %v", d.run.CmdLine[0], err)
	}
	var bc buildCommand
	i := 0
	for ; i < len(words) && words[i] != "go"; i++ {
		name, _, ok := strings.Cut(words[i], "=")
		if !ok || name == "" || strings.ContainsAny(name, "-/$") {
			t.Fatalf("RUN %q: want NAME=value assignments, then go build (got %q)", d.run.CmdLine[0], words[i])
		}
		bc.env = append(bc.env, words[i])
	}
	if i+1 >= len(words) || words[i+1] != "build" {
		t.Fatalf("RUN %q: want a single go build command", d.run.CmdLine[0])
	}
	bc.args = words[i+1:]
	for j, w := range bc.args {
		if slices.Contains([]string{"&&", "||", ";", "|", "&"}, w) || strings.HasSuffix(w, ";") {
			t.Fatalf("RUN %q: keep the go build RUN one command (found %q), the check runs it as written", d.run.CmdLine[0], w)
		}
		if w == "-o" && j+1 < len(bc.args) {
			bc.output = j + 1
		}
	}
	if bc.output == 0 {
		t.Fatalf("RUN %q: no -o PATH", d.run.CmdLine[0])
	}
	return bc
}

// outputPath is where the build stage writes the binary.
func outputPath(t *testing.T, d *dockerfile) string {
	t.Helper()
	bc := parseBuildCommand(t, d, nil)
	return bc.args[bc.output]
}

// copyContext copies the repository into dst as Docker would send it as the
// build context: without what .dockerignore excludes.
func copyContext(t *testing.T, src, dst string) (files int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(src, ".dockerignore"))
	if err != nil {
		t.Fatalf(".dockerignore: %v", err)
	}
	patterns, err := ignorefile.ReadAll(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(src, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		excluded, err := pm.MatchesOrParentMatches(rel)
		if err != nil {
			return err
		}
		if de.IsDir() {
			if excluded && !pm.Exclusions() {
				return filepath.SkipDir
			}
			return nil
		}
		if excluded {
			return nil
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if de.Type()&fs.ModeSymlink != 0 {
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		if !de.Type().IsRegular() {
			return nil
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		files++
		return copyFile(path, target, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy the build context: %v", err)
	}
	return files
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestImageBuild runs the Dockerfile's go build, as written, on the build
// context .dockerignore lets through, then checks the binary: static, with
// the version, commit and date stamped, and its healthcheck subcommand (the image's
// HEALTHCHECK) exits 0 against a live server and 1 once it is gone.
func TestImageBuild(t *testing.T) {
	d := parseDockerfile(t)
	const (
		version = "1.2.3-dockercheck"
		commit  = "0123456789abcdef0123456789abcdef01234567"
		date    = "2026-12-07T22:00:00Z"
	)
	bc := parseBuildCommand(t, d, map[string]string{"VERSION": version, "COMMIT": commit, "DATE": date,
		"TARGETOS": runtime.GOOS, "TARGETARCH": runtime.GOARCH})

	assigned := map[string]string{}
	for _, kv := range bc.env {
		k, v, _ := strings.Cut(kv, "=")
		assigned[k] = v
	}
	if assigned["CGO_ENABLED"] != "0" {
		t.Errorf("the build RUN sets CGO_ENABLED=%q, want 0", assigned["CGO_ENABLED"])
	}
	if !slices.Contains(bc.args, "-trimpath") {
		t.Errorf("the build RUN has no -trimpath: %v", bc.args)
	}
	for _, stamp := range []string{"-X main.version=" + version, "-X main.commit=" + commit, "-X main.date=" + date} {
		if !slices.ContainsFunc(bc.args, func(a string) bool { return strings.HasPrefix(a, "-ldflags") && strings.Contains(a, stamp) }) {
			t.Errorf("the build RUN does not stamp %q: %v", stamp, bc.args)
		}
	}
	if pkg := bc.args[len(bc.args)-1]; pkg != "./cmd/gorender" {
		t.Errorf("the build RUN builds %s, want ./cmd/gorender", pkg)
	}

	work := t.TempDir()
	contextDir := filepath.Join(work, "src")
	n := copyContext(t, root(t), contextDir)
	t.Logf("build context: %d files", n)

	binary := filepath.Join(work, "gorender")
	args := slices.Clone(bc.args)
	args[bc.output] = binary
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command(goBin, args...)
	build.Dir = contextDir
	build.Env = append(append(os.Environ(), "GOTOOLCHAIN=local"), bc.env...)
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s (in the .dockerignore-filtered context): %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("go %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))

	t.Run("static", func(t *testing.T) { checkStatic(t, binary) })
	t.Run("buildinfo", func(t *testing.T) {
		info, err := buildinfo.ReadFile(binary)
		if err != nil {
			t.Fatal(err)
		}
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		// (Go leaves -ldflags out of the build info under -trimpath; the
		// version subtest checks the stamp.)
		if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
			t.Errorf("build settings CGO_ENABLED=%q -trimpath=%q, want 0 and true", settings["CGO_ENABLED"], settings["-trimpath"])
		}
		if info.Path != repo.MainModule+"/cmd/gorender" {
			t.Errorf("built %s, want %s/cmd/gorender", info.Path, repo.MainModule)
		}
	})
	t.Run("version", func(t *testing.T) {
		want := "gorender " + version + " (commit " + commit + ", built " + date + ")\n"
		out, err := exec.Command(binary, "version").Output()
		if err != nil || string(out) != want {
			t.Errorf("gorender version: %q, %v; want %q", out, err, want)
		}
	})
	t.Run("healthcheck", func(t *testing.T) { checkHealthcheck(t, d, binary) })
}

// checkStatic: an ELF with no interpreter and no dynamic section runs on
// distroless static, which has no libc.
func checkStatic(t *testing.T, binary string) {
	if runtime.GOOS != "linux" {
		t.Skipf("the image is linux; built for %s", runtime.GOOS)
	}
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			t.Error("the binary has a program interpreter (PT_INTERP): it is dynamically linked")
		case elf.PT_DYNAMIC:
			t.Error("the binary has a dynamic section (PT_DYNAMIC)")
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
}

// checkHealthcheck starts the binary as the image does (ENV and CMD from the
// Dockerfile; loopback, a temp cache and a port of its own for the test), then
// runs the HEALTHCHECK command with the image's environment.
func checkHealthcheck(t *testing.T, d *dockerfile, binary string) {
	imageEnv := stageEnv(d.final)

	var serveArgs []string
	for _, c := range commands[*instructions.CmdCommand](d.final) {
		serveArgs = c.CmdLine
	}
	checks := commands[*instructions.HealthCheckCommand](d.final)
	if len(checks) != 1 || len(checks[0].Health.Test) < 2 {
		t.Fatal("no HEALTHCHECK CMD")
	}
	checkArgs := checks[0].Health.Test[2:] // after "CMD", the binary

	serverEnv := envList(imageEnv, map[string]string{
		"RENDERER_HOST": "127.0.0.1", // the image binds 0.0.0.0; the test stays on loopback
		// The kernel picks a port no other process holds; the start-up log
		// says which. (A port found free a moment before could be taken by
		// another test process's server, whose /health would answer.)
		"RENDERER_PORT":                     "0",
		"RENDERER_SERVER_BUNDLE_CACHE_PATH": t.TempDir(),
		"RENDERER_PASSWORD":                 randomPassword(t),
	})

	// The log goes to a file, which the test reads while the server runs.
	logFile, err := os.Create(filepath.Join(t.TempDir(), "gorender.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	logs := func() string {
		b, _ := os.ReadFile(logFile.Name())
		return string(b)
	}
	server := exec.Command(binary, serveArgs...)
	server.Env = serverEnv
	server.Stdout, server.Stderr = logFile, logFile
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	defer func() {
		server.Process.Kill()
		<-exited
	}()

	var checkEnv []string // the image's, with the server's port
	healthcheck := func() (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, checkArgs...)
		cmd.Env = checkEnv
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0, string(out)
		case errors.As(err, &exit):
			return exit.ExitCode(), string(out)
		default:
			t.Fatalf("run healthcheck: %v", err)
			return -1, ""
		}
	}

	deadline := time.Now().Add(30 * time.Second)
	port := ""
	for {
		if port == "" {
			port = listeningPort(logs())
		}
		code, out := -1, "the start-up log names no port yet"
		if port != "" {
			checkEnv = envList(imageEnv, map[string]string{"RENDERER_PORT": port})
			if code, out = healthcheck(); code == 0 {
				break
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("gorender exited before answering (%v):\n%s", err, logs())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthcheck still exits %d after 30s: %s\nserver log:\n%s", code, out, logs())
		}
		time.Sleep(100 * time.Millisecond)
	}

	if err := server.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("gorender exited with %v after SIGTERM, want 0:\n%s", err, logs())
		}
	case <-time.After(45 * time.Second):
		t.Fatalf("gorender still running 45s after SIGTERM:\n%s", logs())
	}
	if code, out := healthcheck(); code != 1 {
		t.Errorf("healthcheck with the server stopped exits %d, want 1: %s", code, out)
	}
}

func envList(base, overrides map[string]string) []string {
	merged := map[string]string{}
	for k, v := range base {
		merged[k] = v
	}
	for k, v := range overrides {
		merged[k] = v
	}
	var list []string
	for k, v := range merged {
		list = append(list, k+"="+v)
	}
	slices.Sort(list)
	return list
}

// listeningPort is the port of the "gorender listening" line of a
// gorender's JSON log ("" before it).
func listeningPort(log string) string {
	for _, line := range strings.Split(log, "\n") {
		var entry struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != "gorender listening" {
			continue
		}
		if _, port, err := net.SplitHostPort(entry.Addr); err == nil {
			return port
		}
	}
	return ""
}

func randomPassword(t *testing.T) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
