package nodeengine

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPipeSize: the pipes to an executor get the sizes asked for.
func TestPipeSize(t *testing.T) {
	for _, size := range []int{requestPipeSize, answerPipeSize} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		setPipeSize(w, size)
		const fGetPipeSize = 1032 // F_GETPIPE_SZ
		rc, err := r.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var got uintptr
		var errno syscall.Errno
		_ = rc.Control(func(fd uintptr) {
			got, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSize, 0)
		})
		r.Close()
		w.Close()
		if errno != 0 {
			t.Fatal(errno)
		}
		if int(got) != size {
			t.Errorf("pipe size %d, want %d", got, size)
		}
	}
}

// TestPipeReaderWaits: a read of an empty pipe waits (in the poller) until
// the executor writes, takes what is there, and ends with io.EOF once the
// other end is closed.
func TestPipeReaderWaits(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pr, err := newPipeReader(r)
	if err != nil {
		t.Fatal(err)
	}
	type read struct {
		s   string
		err error
	}
	reads := make(chan read)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := pr.Read(buf)
			reads <- read{string(buf[:n]), err}
			if err != nil {
				return
			}
		}
	}()
	select {
	case got := <-reads:
		t.Fatalf("a read of an empty pipe returned %q, %v", got.s, got.err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := w.WriteString("frame"); err != nil {
		t.Fatal(err)
	}
	if got := <-reads; got.s != "frame" || got.err != nil {
		t.Fatalf("read %q, %v; want frame", got.s, got.err)
	}
	w.Close()
	if got := <-reads; got.err != io.EOF {
		t.Fatalf("read %q, %v after the writer closed; want io.EOF", got.s, got.err)
	}
}

// TestExecutorPipeModes: in the executor, the request pipe (fd 3) is
// non-blocking, as pollInput's reads between stream chunks need (a blocking
// one would stop the render until gorender sent something), and the answer
// pipe (fd 4) is blocking, as writeAll takes it to be (executor/10-host.js).
func TestExecutorPipeModes(t *testing.T) {
	e, _ := newEngine(t, config{})
	rt := load(t, e, "b", "", `var n = 0;`)
	if got := mustEval(t, rt, "b", `'ok'`); got != "ok" {
		t.Fatalf("render: %q", got)
	}
	pid := running(t, e, 1)[0].PID
	for fd, nonblocking := range map[int]bool{3: true, 4: false} {
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
		if err != nil {
			t.Fatal(err)
		}
		var flags int
		for line := range strings.Lines(string(info)) {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				if _, err := fmt.Sscanf(strings.TrimSpace(v), "%o", &flags); err != nil {
					t.Fatalf("fd %d: flags %q: %v", fd, v, err)
				}
			}
		}
		if got := flags&syscall.O_NONBLOCK != 0; got != nonblocking {
			t.Errorf("fd %d: flags %o: non-blocking %v, want %v", fd, flags, got, nonblocking)
		}
	}
}
