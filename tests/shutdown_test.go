package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// This file proves how gorender stops (PROTOCOL.md §13): a drain that
// lets in-flight renders finish, a second signal that exits at once, and a
// kill -9 in the middle of an upload that leaves no partial bundle behind.

// signal sends sig to the process; the cleanup then only waits for the exit.
func (s *server) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	s.mu.Lock()
	s.signaled = true
	s.mu.Unlock()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// waitExit waits up to within for the process to exit and returns its
// exit code; it fails t if the process is still running then.
func (s *server) waitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(within):
		_ = s.cmd.Process.Kill()
		<-s.exited
		t.Fatalf("gorender did not exit within %s", within)
	}
	var exit *exec.ExitError
	switch {
	case s.err == nil:
		return 0
	case errors.As(s.err, &exit):
		return exit.ExitCode()
	default:
		t.Fatalf("gorender: %v", s.err)
		return -1
	}
}

// TestShutdownDrain: SIGTERM while 20 renders are in flight (10 per
// transport): the listener closes while they run (new connections are
// refused), /ready is never ready again, every render finishes with 200,
// and the process exits 0. The renders wait for a file the test writes once
// it has checked the drain, so they are still in flight however slowly the
// machine runs (a fixed sleep once ended before all 20 had started), and
// the 5-minute shutdown timeout never ends the drain first.
func TestShutdownDrain(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{
		"RENDERER_WORKERS_COUNT":    "20",
		"RENDERER_STUB_TIMERS":      "false",
		"RENDERER_SUPPORT_MODULES":  "true",
		"RENDERER_SHUTDOWN_TIMEOUT": "5m",
	})
	id := newID("s")
	s.upload(t, map[string]string{id: releasedBundle("drained")}, nil)
	s.render(t, transports[0], id, "MARKER").want(t, transports[0], http.StatusOK, "drained")

	pending := make([]<-chan *response, 20)
	for i := range pending {
		pending[i] = s.startRender(t, transports[i%2], id, "untilReleased()")
	}
	s.waitScrape(t, 60*time.Second, "20 renders in flight", func(p promScrape) bool {
		return p.value("gorender_runtimes_busy", "bundle", id) == 20
	})
	// A probe connection opened before the signal, like a load balancer's.
	probe, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()

	signaled := time.Now()
	s.signal(t, syscall.SIGTERM)
	s.waitDraining(t)
	refusedAfter := time.Since(signaled)

	// Readiness on a connection opened before the signal: net/http serves
	// no new request once the drain started (it closes the connection), so
	// the probe sees a closed connection or 503, never a ready renderer.
	_ = probe.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(probe, "GET /ready HTTP/1.1\r\nHost: renderer\r\n\r\n"); err == nil {
		if resp, err := http.ReadResponse(bufio.NewReader(probe), nil); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable || string(b) != `{"status":"shutting_down"}` {
				t.Errorf("/ready during the drain: %d %s, want 503 {\"status\":\"shutting_down\"} or no answer", resp.StatusCode, b)
			}
		}
	}

	if err := os.WriteFile(filepath.Join(s.cache, id, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, ch := range pending {
		select {
		case r := <-ch:
			if r.Status != http.StatusOK || r.Body != "drained" {
				t.Errorf("render %d (%s) in flight at SIGTERM: status %d, body %s", i, transports[i%2].name, r.Status, clip(r.Body))
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("render %d not answered 60 s after its release", i)
		}
	}
	if code := s.waitExit(t, exitTimeout); code != 0 {
		t.Errorf("exit code %d after the drain, want 0", code)
	}
	t.Logf("connections refused %s after SIGTERM; exited %s after it", refusedAfter, time.Since(signaled))
}

// waitDraining waits until the server, signaled, has started its drain:
// its listener refuses new connections (one caught in the accept queue as
// it closes is reset) while the process still runs. Whatever holds the
// drain open must outlast the 60 s bound, which only ends a wait that never
// comes (a listener left open through the drain).
func (s *server) waitDraining(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.port), time.Second)
		if errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		if err == nil {
			c.Close()
		} else if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("dial during the drain: %v, want connection refused", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts connections 60 s after the signal")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-s.exited:
		t.Fatalf("gorender exited instead of draining: %v", s.err)
	default:
	}
}

// releasedBundle is a bundle (for RENDERER_SUPPORT_MODULES) whose rendering
// request `untilReleased()` answers marker once a file named release exists
// in the bundle's directory, polling for it every 20 ms without using the CPU.
func releasedBundle(marker string) string {
	return markerBundle(marker) + `globalThis.untilReleased = function () {
  var fs = require('fs'), file = require('path').join(__dirname, 'release');
  return new Promise(function (resolve) {
    (function poll() { if (fs.existsSync(file)) resolve(MARKER); else setTimeout(poll, 20); })();
  });
};
`
}

// TestSecondSignal: a second SIGTERM during a drain that cannot finish
// (runaway renders until the 120 s render timeout, a 5-minute shutdown
// timeout) exits at once, non-zero. The second signal is sent once the
// first one's drain has started (the listener closed), so the two are never
// taken for one; exiting only at the end of the drain would take minutes.
func TestSecondSignal(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_WORKERS_COUNT": "2", "RENDERER_SHUTDOWN_TIMEOUT": "5m"})
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("x")}, nil)
	for _, tr := range transports {
		s.startRender(t, tr, id, runaway)
	}
	s.waitScrape(t, 60*time.Second, "2 runaway renders", func(p promScrape) bool {
		return p.value("gorender_runtimes_busy", "bundle", id) == 2
	})
	s.signal(t, syscall.SIGTERM)
	s.waitDraining(t)
	s.signal(t, syscall.SIGTERM)
	if code := s.waitExit(t, exitTimeout); code == 0 {
		t.Errorf("exit code 0 after a second signal, want non-zero")
	}
	if !strings.Contains(s.stderr.String(), "second signal") {
		t.Errorf("stderr does not say why it exited:\n%s", s.stderr.String())
	}
}

// TestKillDuringUpload: kill -9 while a 50 MB bundle is half uploaded leaves
// no partial bundle: after a restart on the same cache the bundle is absent
// (a render gets 410), and the stale staging directory is swept at start.
func TestKillDuringUpload(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	id := newID("s")
	const size, killAt = 50 << 20, 25 << 20

	// The upload streams slowly through a pipe and stops at killAt.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	reached := make(chan struct{})
	go func() {
		for _, kv := range [][2]string{{"password", testPassword}, {"protocolVersion", "2.0.0"}, {"gemVersion", gemVersion}, {"targetBundles[]", id}} {
			if err := mw.WriteField(kv[0], kv[1]); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		part, err := mw.CreateFormFile("bundle_"+id, id+".js")
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		chunk := []byte(strings.Repeat("/* a big bundle */\n", 64<<10/19))
		written := 0
		for written < size {
			n, err := part.Write(chunk)
			written += n
			if err != nil {
				return // the server is gone
			}
			if written >= killAt {
				close(reached)
				return // hold the body open: the kill happens meanwhile
			}
			time.Sleep(time.Millisecond)
		}
	}()
	uploaded := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx(t), http.MethodPost, s.url+"/upload-assets", pr)
		if err != nil {
			uploaded <- err
			return
		}
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := s.http(transports[0]).Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("the upload was answered %d", resp.StatusCode)
		}
		uploaded <- err
	}()
	select {
	case <-reached:
	case err := <-uploaded:
		t.Fatalf("the upload ended before %d bytes: %v", killAt, err)
	case <-time.After(60 * time.Second):
		t.Fatal("25 MB were not sent within 60 s")
	}
	// Kill once the server has staged most of it.
	staged := waitStagedBytes(t, s.cache, 20<<20)
	s.signal(t, syscall.SIGKILL)
	s.waitExit(t, 10*time.Second)
	pw.CloseWithError(errors.New("the server was killed"))
	if err := <-uploaded; err == nil {
		t.Fatal("the upload succeeded")
	}

	if _, err := os.Stat(filepath.Join(s.cache, id, id+".js")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s.js exists after the kill (err %v): a partial bundle is visible", id, err)
	}
	leftovers := s.cacheEntries(t, "uploads")
	if len(leftovers) == 0 {
		t.Fatal("no staging directory left by the killed upload: the test did not kill mid-upload")
	}
	t.Logf("killed with %d MB staged; leftovers in uploads/: %v", staged>>20, leftovers)
	// Make the leftovers older than the sweeper's 30 minutes.
	old := time.Now().Add(-time.Hour)
	for _, dir := range leftovers {
		path := filepath.Join(s.cache, "uploads", dir)
		entries, _ := os.ReadDir(path)
		for _, e := range entries {
			_ = os.Chtimes(filepath.Join(path, e.Name()), old, old)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}

	restarted := startServer(t, map[string]string{"RENDERER_SERVER_BUNDLE_CACHE_PATH": s.cache})
	for _, tr := range transports {
		restarted.render(t, tr, id, "MARKER").want(t, tr, http.StatusGone, "No bundle uploaded")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(restarted.cacheEntries(t, "uploads")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the stale staging directories were not swept at start: %v", restarted.cacheEntries(t, "uploads"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The same bundle uploads and renders normally afterwards.
	restarted.upload(t, map[string]string{id: markerBundle("whole")}, nil)
	restarted.render(t, transports[0], id, "MARKER").want(t, transports[0], http.StatusOK, "whole")
}

// waitStagedBytes waits until a file under <cache>/uploads holds at least n
// bytes and returns its size.
func waitStagedBytes(t *testing.T, cache string, n int64) int64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var biggest int64
		_ = filepath.WalkDir(filepath.Join(cache, "uploads"), func(_ string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					biggest = max(biggest, info.Size())
				}
			}
			return nil
		})
		if biggest >= n {
			return biggest
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server staged %d bytes of the upload within 30 s, want %d", biggest, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
