package tests

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openTerminal opens a pseudo-terminal pair: the terminal a process writes
// to, and the side that reads what it wrote.
func openTerminal(t *testing.T) (term, reader *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	term, err = os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal: %v", err)
	}
	return term, ptmx
}

// runOnTerminal starts gorender with its stderr on a terminal, stops it,
// and returns all it wrote there (line ends as written: the terminal's
// \r\n made \n).
func runOnTerminal(t *testing.T, env map[string]string) string {
	t.Helper()
	term, reader := openTerminal(t)
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		// Ends with EIO once no process holds the terminal.
		_, _ = io.Copy(&out, reader)
		close(copied)
	}()
	s := startServerWith(t, nil, env, func(cmd *exec.Cmd) { cmd.Stderr = term })
	term.Close() // the child holds its own
	s.terminate(t)
	select {
	case <-copied:
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal's output did not end 30 s after gorender exited")
	}
	reader.Close()
	return strings.ReplaceAll(out.String(), "\r\n", "\n")
}

// jsonLines is how many lines of out are JSON objects.
func jsonLines(out string) int {
	return len(logLines(out))
}

// TestLogFormatTerminal: on a terminal the logs are text, the start-up
// configuration a block of the settings that differ from their defaults
// with their values aligned and the password only as set;
// RENDERER_LOG_FORMAT=json keeps JSON there.
func TestLogFormatTerminal(t *testing.T) {
	t.Parallel()
	t.Run("text", func(t *testing.T) {
		t.Parallel()
		out := runOnTerminal(t, map[string]string{"RENDERER_LOG_LEVEL": "info", "RENDERER_MAX_PARTS": "77"})
		if n := jsonLines(out); n != 0 {
			t.Errorf("%d JSON lines on a terminal:\n%s", n, out)
		}
		if strings.Contains(out, testPassword) {
			t.Error("the log contains the password")
		}
		lines := strings.Split(out, "\n")
		at := lineWith(lines, "configuration: the settings that differ from their defaults")
		if at < 0 || !strings.Contains(lines[at], "level=INFO") {
			t.Fatalf("no text configuration line:\n%s", out)
		}
		// The block: indented "NAME  value" lines under it, values in one column.
		block := map[string]string{}
		column := -1
		row := regexp.MustCompile(`^    ([A-Z_]+ +)(\S.*)$`)
		for _, l := range lines[at+1:] {
			m := row.FindStringSubmatch(l)
			if m == nil {
				break
			}
			if column >= 0 && len(m[1]) != column {
				t.Errorf("value of %q not aligned (column %d, others %d):\n%s", l, len(m[1]), column, out)
			}
			column = len(m[1])
			block[strings.TrimSpace(m[1])] = m[2]
		}
		for k, v := range map[string]string{
			"RENDERER_PASSWORD": "set", "RENDERER_MAX_PARTS": "77", "RENDERER_RENDER_TIMEOUT": "2m",
		} {
			if block[k] != v {
				t.Errorf("block %s = %q, want %q:\n%s", k, block[k], v, out)
			}
		}
		// Defaults are left out, set (the log level) or not, and so is a
		// computed one that follows a changed row (the recycling grace
		// follows the render timeout).
		for _, k := range []string{"RENDERER_STUB_TIMERS", "MAX_VM_POOL_SIZE", "RENDERER_METRICS", "RENDERER_LOG_LEVEL", "GRACEFUL_WORKER_RESTART_TIMEOUT"} {
			if _, ok := block[k]; ok {
				t.Errorf("block lists %s, at its default:\n%s", k, out)
			}
		}
		if lineWith(lines, "msg=\"gorender listening\"") < 0 {
			t.Errorf("no text line for the listening event:\n%s", out)
		}
	})
	t.Run("json forced", func(t *testing.T) {
		t.Parallel()
		out := runOnTerminal(t, map[string]string{"RENDERER_LOG_LEVEL": "info", "RENDERER_LOG_FORMAT": "json"})
		cfg := linesWith(out, "configuration")
		if len(cfg) != 1 || cfg[0]["RENDERER_STUB_TIMERS"] != "true" || cfg[0]["RENDERER_PASSWORD"] != "set" {
			t.Errorf("want the JSON configuration line with every setting on a terminal with RENDERER_LOG_FORMAT=json:\n%s", out)
		}
		if strings.Contains(out, "level=") {
			t.Errorf("text lines with RENDERER_LOG_FORMAT=json:\n%s", out)
		}
	})
}

func lineWith(lines []string, part string) int {
	for i, l := range lines {
		if strings.Contains(l, part) {
			return i
		}
	}
	return -1
}

// TestLogFormatPiped: piped, RENDERER_LOG_FORMAT=text gives text lines; a
// value other than json or text stops the start, naming the variable.
func TestLogFormatPiped(t *testing.T) {
	t.Parallel()
	t.Run("text forced", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, map[string]string{"RENDERER_LOG_LEVEL": "info", "RENDERER_LOG_FORMAT": "text"})
		s.terminate(t)
		out := s.stderr.String()
		if jsonLines(out) != 0 || !strings.Contains(out, "    RENDERER_LOG_FORMAT") || !strings.Contains(out, `level=INFO msg="gorender listening"`) {
			t.Errorf("want text lines with RENDERER_LOG_FORMAT=text:\n%s", out)
		}
		if strings.Contains(out, testPassword) {
			t.Error("the log contains the password")
		}
	})
	t.Run("bad value", func(t *testing.T) {
		t.Parallel()
		code, _, stderr := runBinary(t, map[string]string{"RAILS_ENV": "test", "RENDERER_LOG_FORMAT": "pretty"}, "serve", "-p", "1")
		if code == 0 || !strings.Contains(stderr, `RENDERER_LOG_FORMAT="pretty"`) || !strings.Contains(stderr, "want json or text") {
			t.Errorf("RENDERER_LOG_FORMAT=pretty: exit %d, stderr:\n%s", code, stderr)
		}
	})
}

// TestNodeRendererConcurrency: NODE_RENDERER_CONCURRENCY, the Node
// renderer's name, sets the workers when RENDERER_WORKERS_COUNT is unset
// and is ignored, without a warning, when it is set; a bad value is a
// start-up error naming it.
func TestNodeRendererConcurrency(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"NODE_RENDERER_CONCURRENCY": "3"}, "3"},
		{map[string]string{"NODE_RENDERER_CONCURRENCY": "3", "RENDERER_WORKERS_COUNT": "1"}, "1"},
	} {
		c.env["RENDERER_LOG_LEVEL"] = "info"
		s := startServer(t, c.env)
		s.terminate(t)
		out := s.stderr.String()
		if cfg := linesWith(out, "configuration"); len(cfg) != 1 || cfg[0]["RENDERER_WORKERS_COUNT"] != c.want {
			t.Errorf("%v: want RENDERER_WORKERS_COUNT %s in the configuration line:\n%s", c.env, c.want, out)
		}
		if strings.Contains(out, "NODE_RENDERER_CONCURRENCY") || len(linesWith(out, "has no effect")) != 0 {
			t.Errorf("%v: a warning about NODE_RENDERER_CONCURRENCY:\n%s", c.env, out)
		}
	}
	code, _, stderr := runBinary(t, map[string]string{"RAILS_ENV": "test", "NODE_RENDERER_CONCURRENCY": "many"}, "serve", "-p", "1")
	if code == 0 || !strings.Contains(stderr, `NODE_RENDERER_CONCURRENCY="many"`) {
		t.Errorf("NODE_RENDERER_CONCURRENCY=many: exit %d, stderr:\n%s", code, stderr)
	}
}
