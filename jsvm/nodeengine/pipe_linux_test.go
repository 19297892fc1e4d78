package nodeengine

import (
	"os"
	"syscall"
	"testing"
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
