package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The command line and the logs as an operator meets them, through the
// real binary: exit codes, output, log lines.

// TestUsage: -h, --help, help and a command's -h print one usage that lists
// the commands, their flags and where configuration lives, on stdout, and
// exit 0.
func TestUsage(t *testing.T) {
	t.Parallel()
	var first string
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"serve", "-h"}, {"demo", "--help"}, {"healthcheck", "-h"}} {
		code, stdout, stderr := runBinary(t, nil, args...)
		if code != 0 || stderr != "" {
			t.Errorf("gorender %s: exit %d, stderr %q; want 0 and nothing", strings.Join(args, " "), code, stderr)
		}
		if first == "" {
			first = stdout
		} else if stdout != first {
			t.Errorf("gorender %s prints another usage than gorender -h:\n%s", strings.Join(args, " "), stdout)
		}
	}
	for _, want := range []string{
		"gorender [serve]", "gorender demo", "gorender healthcheck", "gorender version", "gorender help",
		"-p, --port PORT", "--json", "--host HOST", "--url URL", "--timeout DURATION",
		"Environment variables", "RENDERER_PORT", "gorender help config", "docs/configuration.md",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("usage does not mention %q:\n%s", want, first)
		}
	}
}

// TestHelpConfig: `gorender help config` lists every variable of the
// table of docs/configuration.md.
func TestHelpConfig(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runBinary(t, nil, "help", "config")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)[strings.Index(string(doc), "## Environment variables"):]
	names := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\|").FindAllStringSubmatch(section[:strings.Index(section, "\n## ")], -1)
	if len(names) < 20 {
		t.Fatalf("found only %d variables in docs/configuration.md's table", len(names))
	}
	for _, n := range names {
		if !strings.Contains(stdout, "\n"+n[1]+"\n") {
			t.Errorf("gorender help config does not list %s", n[1])
		}
	}
}

// TestVersionFlags: `gorender version`, --version and -v print the version,
// commit and date the binary was stamped with (-ldflags -X, as
// scripts/release.sh stamps them; TestInfo checks /info's).
func TestVersionFlags(t *testing.T) {
	t.Parallel()
	want := "gorender " + rendererVersion + " (commit " + rendererCommit + ", built " + buildDate + ")\n"
	for _, arg := range []string{"version", "--version", "-v"} {
		code, stdout, stderr := runBinary(t, nil, arg)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("gorender %s: exit %d, stdout %q, stderr %q", arg, code, stdout, stderr)
		}
	}
}

// TestFlagErrors: a command line gorender does not take is said once, with
// a pointer to the usage, and exits 2 before anything starts.
func TestFlagErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"serve", "-p", "http"}, `invalid value "http" for flag -p`},
		{[]string{"demo", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"healthcheck", "--nope"}, "flag provided but not defined: -nope"},
		{[]string{"healthcheck", "--url", "http://x", "-p", "1"}, "leave out --host and -p"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, c := range cases {
		code, stdout, stderr := runBinary(t, nil, c.args...)
		if code != 2 {
			t.Errorf("gorender %s: exit %d, want 2", strings.Join(c.args, " "), code)
		}
		if strings.Count(stderr, c.want) != 1 || strings.Count(stderr, "Run 'gorender help' for usage.") != 1 || stdout != "" {
			t.Errorf("gorender %s: want %q and the usage pointer once on stderr, got stdout %q stderr:\n%s", strings.Join(c.args, " "), c.want, stdout, stderr)
		}
	}
}

// TestHealthcheckFlags: -p/--port, --host, --url and --timeout choose what
// healthcheck probes, over RENDERER_HOST/RENDERER_PORT, and it fails when
// that does not answer 200.
func TestHealthcheckFlags(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	live, closed := strconv.Itoa(s.port), strconv.Itoa(freePort(t))
	// A listener that accepts connections and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		var conns []net.Conn
		for {
			conn, err := silent.Accept()
			if err != nil {
				break
			}
			conns = append(conns, conn)
		}
		for _, c := range conns {
			c.Close()
		}
	}()
	silentURL := "http://" + silent.Addr().String()

	envLive := map[string]string{"RENDERER_HOST": "127.0.0.1", "RENDERER_PORT": live}
	envClosed := map[string]string{"RENDERER_HOST": "127.0.0.1", "RENDERER_PORT": closed}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string // in stdout (exit 0) or stderr
	}{
		{"-p overrides RENDERER_PORT", envClosed, []string{"-p", live}, 0, "/health answered 200 OK"},
		{"--port", envClosed, []string{"--port", live}, 0, "/health answered 200 OK"},
		{"-p to a closed port", envLive, []string{"-p", closed}, 1, "did not answer"},
		{"--host", nil, []string{"--host", "127.0.0.1", "-p", live}, 0, "http://127.0.0.1:" + live + "/health answered"},
		{"--host 0.0.0.0 is the loopback", nil, []string{"--host", "0.0.0.0", "-p", live}, 0, "answered 200 OK"},
		{"--url without a path gets /health", envClosed, []string{"--url", s.url}, 0, s.url + "/health answered 200 OK"},
		{"--url /ready before a bundle", nil, []string{"--url", s.url + "/ready"}, 1, "answered 503 Service Unavailable"},
		{"--url to a closed port", envLive, []string{"--url", "http://127.0.0.1:" + closed}, 1, "did not answer"},
		{"--timeout against a silent server", nil, []string{"--url", silentURL, "--timeout", "300ms"}, 1, "did not answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runBinary(t, c.env, append([]string{"healthcheck"}, c.args...)...)
			out := stdout
			if c.code != 0 {
				out = stderr
			}
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d with %q; stdout %q stderr %q", code, c.code, c.want, stdout, stderr)
			}
		})
	}
}

// logLines decodes gorender's JSON log lines (other lines are skipped).
func logLines(stderr string) []map[string]any {
	var lines []map[string]any
	for _, l := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			lines = append(lines, m)
		}
	}
	return lines
}

// linesWith returns the log lines whose msg contains msg.
func linesWith(stderr, msg string) []map[string]any {
	var found []map[string]any
	for _, l := range logLines(stderr) {
		if m, _ := l["msg"].(string); strings.Contains(m, msg) {
			found = append(found, l)
		}
	}
	return found
}

// TestUpstreamBooleans: RENDERER_SUPPORT_MODULES and RENDERER_STUB_TIMERS
// keep the Node renderer's reading (1 is off; yes does not stub timers),
// but a value outside the accepted set is warned about once at start,
// naming the variable and the accepted values; accepted values are not.
func TestUpstreamBooleans(t *testing.T) {
	t.Parallel()
	t.Run("outside the set", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "1", "RENDERER_STUB_TIMERS": "yes"})
		out := s.stderr.String()
		for _, want := range []string{
			`RENDERER_SUPPORT_MODULES=\"1\" is taken as false`, "true, TRUE, yes, YES",
			`RENDERER_STUB_TIMERS=\"yes\" is taken as false`, "exactly true",
		} {
			if strings.Count(out, want) != 1 {
				t.Errorf("want %q once in the log:\n%s", want, out)
			}
		}
		// The meaning stays upstream's: no Node environment (1 is off) and
		// real timers (yes is not true).
		id := newID("s")
		s.upload(t, map[string]string{id: markerBundle("m")}, nil)
		tr := transports[0]
		s.render(t, tr, id, `typeof require + " " + typeof Buffer`).want(t, tr, http.StatusOK, "undefined undefined")
		s.render(t, tr, id, `new Promise(function (resolve) { setTimeout(function () { resolve("fired") }, 1) })`).want(t, tr, http.StatusOK, "fired")
	})
	t.Run("in the set", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "YES", "RENDERER_STUB_TIMERS": "false"})
		if out := s.stderr.String(); strings.Contains(out, "is taken as") {
			t.Errorf("an accepted value is warned about:\n%s", out)
		}
	})
}

// TestStartupConfigurationLog: the configuration in effect is logged once
// at start, one attribute per variable, with human durations and sizes,
// the password only as set, and only the settings of the chosen engine;
// no duration anywhere in the log is a nanosecond count.
func TestStartupConfigurationLog(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"goja", "quickjs"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, map[string]string{"RENDERER_LOG_LEVEL": "info", "RENDERER_JS_ENGINE": engine, "RENDERER_QUICKJS_MEMORY_LIMIT": "256MiB"})
			s.terminate(t) // for the shutdown line and its timeout
			out := s.stderr.String()
			lines := linesWith(out, "configuration")
			if len(lines) != 1 {
				t.Fatalf("%d configuration lines, want 1:\n%s", len(lines), out)
			}
			cfg := lines[0]
			want := map[string]string{
				"RENDERER_JS_ENGINE":            engine,
				"RENDERER_PORT":                 strconv.Itoa(s.port),
				"RENDERER_PASSWORD":             "set",
				"RENDERER_RENDER_TIMEOUT":       "2m", // 120s
				"RENDERER_QUEUE_TIMEOUT":        "2m", // 120s
				"RENDERER_STUB_TIMERS":          "true",
				"VM_POOL_ROLLOUT_DRAIN_TIMEOUT": "1m",
			}
			only := map[string]string{"goja": "RENDERER_REWRITE_STRING_BUILDS", "quickjs": "RENDERER_QUICKJS_MEMORY_LIMIT"}
			if engine == "goja" {
				want["RENDERER_REWRITE_STRING_BUILDS"] = "true"
			} else {
				want["RENDERER_QUICKJS_MEMORY_LIMIT"] = "256 MiB"
			}
			for k, v := range want {
				if cfg[k] != v {
					t.Errorf("configuration %s = %v, want %q", k, cfg[k], v)
				}
			}
			for e, k := range only {
				if _, ok := cfg[k]; ok != (e == engine) {
					t.Errorf("on %s the configuration line has %s: %v", engine, k, ok)
				}
			}
			if strings.Contains(out, testPassword) {
				t.Error("the log contains the password")
			}
			if shutdown := linesWith(out, "shutting down"); len(shutdown) != 1 || shutdown[0]["timeout"] != "30s" {
				t.Errorf("shutting down line: %v, want timeout \"30s\"", shutdown)
			}
			if listening := linesWith(out, "gorender listening"); len(listening) != 1 || listening[0]["rewrite_string_builds"] != nil {
				t.Errorf("listening line: %v, want one without engine settings", listening)
			}
		})
	}
}

// TestProbesAreNotErrors: /ready's 503 before the first bundle is logged as
// an answer (info), not an error.
func TestProbesAreNotErrors(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_LOG_LEVEL": "info", "RENDERER_LOG_HTTP_LEVEL": "info"})
	tr := transports[1]
	s.get(t, tr, http.MethodGet, "/ready").wantStatus(t, tr, http.StatusServiceUnavailable)
	s.terminate(t)
	var probes int
	for _, l := range linesWith(s.stderr.String(), "request") {
		if l["route"] == "/ready" {
			probes++
			if l["level"] != "INFO" || l["status"] != float64(503) {
				t.Errorf("/ready probe logged as %v", l)
			}
		}
	}
	if probes == 0 {
		t.Errorf("no /ready request line:\n%s", s.stderr.String())
	}
}

// TestNoPasswordOneWarning: without a password in development one warning
// says so, not two.
func TestNoPasswordOneWarning(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_PASSWORD": "", "RAILS_ENV": "development"})
	if n := len(linesWith(s.stderr.String(), "RENDERER_PASSWORD")); n != 1 {
		t.Errorf("%d log lines about RENDERER_PASSWORD, want 1:\n%s", n, s.stderr.String())
	}
}

// TestPortInUse: a taken port is refused with a message that says how to
// choose another.
func TestPortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	env := map[string]string{"RENDERER_HOST": "127.0.0.1", "RENDERER_PASSWORD": testPassword, "RENDERER_SERVER_BUNDLE_CACHE_PATH": t.TempDir()}
	code, _, stderr := runBinary(t, env, "serve", "-p", port)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"port " + port + " is taken by another process", "RENDERER_PORT", "-p", "address already in use"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
}

// TestDemo: `gorender demo` renders the embedded example and prints its
// HTML as HTML; with --json it prints the render's JSON answer. Both keep
// serving until SIGTERM, then exit 0.
func TestDemo(t *testing.T) {
	t.Parallel()
	for _, asJSON := range []bool{false, true} {
		t.Run("json="+strconv.FormatBool(asJSON), func(t *testing.T) {
			t.Parallel()
			args := []string{"demo", "-p", strconv.Itoa(freePort(t))}
			if asJSON {
				args = append(args, "--json")
			}
			out := runDemo(t, args)
			const html = `<div class="hello-world"><h3>Hello, <!-- -->Rails<!-- -->!</h3>`
			if asJSON {
				if !strings.HasPrefix(out, `{"html":"<div class=\"hello-world\">`) || !strings.Contains(out, `"consoleReplayScript":`) {
					t.Errorf("--json does not print the JSON answer:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, "\n\n"+html) || strings.Contains(out, `{"html"`) || strings.Contains(out, `\"`) {
				t.Errorf("demo does not print the HTML as HTML:\n%s", out)
			}
		})
	}
}

// runDemo runs gorender with args until it prints "Press Ctrl-C to stop.",
// then sends SIGTERM; it returns stdout and fails t unless the exit is 0.
func runDemo(t *testing.T, args []string) string {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = processEnv(map[string]string{"RENDERER_HOST": "127.0.0.1", "RENDERER_JS_ENGINE": testEngine})
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	printed := make(chan string, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
			if sc.Text() == "Press Ctrl-C to stop." {
				break
			}
		}
		printed <- b.String()
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var out string
	select {
	case out = <-printed:
	case <-time.After(requestTimeout):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("demo printed no render within %s:\n%s", requestTimeout, stderr.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	c, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("demo did not exit 0 after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-c.Done():
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("demo did not exit within %s of SIGTERM", exitTimeout)
	}
	return out
}

// TestUnknownVariableWarned: a RENDERER_* variable gorender does not read
// (a typo, or a Node renderer setting without an equivalent) is warned
// about once at start, by name only; the ones it reads are not.
func TestUnknownVariableWarned(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_WORKER_COUNT": "secret-looking-value", "RENDERER_BUNDLE_PATH": ""})
	out := s.stderr.String()
	warned := linesWith(out, "is not a gorender variable")
	if len(warned) != 1 || !strings.HasPrefix(warned[0]["msg"].(string), "RENDERER_WORKER_COUNT ") {
		t.Errorf("want one warning, about RENDERER_WORKER_COUNT:\n%s", out)
	}
	if strings.Contains(out, "secret-looking-value") {
		t.Error("the warning echoes the variable's value")
	}
}

// TestProcessEnvFromTheCommand: the environment gorender was started with
// is the bundle's process.env (Node-compatible environment), without
// gorender's credentials (the password, every OTLP exporter's headers),
// NODE_ENV defaulting to production.
func TestProcessEnvFromTheCommand(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_SUPPORT_MODULES": "true", "GORENDER_E2E_MARKER": "from-the-shell",
		"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "api-key=do-not-leak", "OTEL_EXPORTER_OTLP_LOGS_HEADERS": "api-key=do-not-leak"})
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("m")}, nil)
	tr := transports[0]
	s.render(t, tr, id, `[process.env.GORENDER_E2E_MARKER, typeof process.env.RENDERER_PASSWORD, typeof process.env.OTEL_EXPORTER_OTLP_METRICS_HEADERS, typeof process.env.OTEL_EXPORTER_OTLP_LOGS_HEADERS, process.env.NODE_ENV].join(" ")`).
		want(t, tr, http.StatusOK, "from-the-shell undefined undefined undefined production")
}
