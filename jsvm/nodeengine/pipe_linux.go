package nodeengine

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// The pipes to an executor are larger than Linux's default 64 KiB
// (F_SETPIPE_SZ), so that a page crosses in few writes, each of which
// wakes the other process:
//   - requests (gorender → executor) get requestPipeSize: a medium page's
//     137 KB request crosses in one write instead of three. The executor is
//     waiting for it, so it wakes at once for each part anyway.
//   - answers (executor → gorender) get answerPipeSize. An executor whose
//     answer fills the pipe stops until gorender has read it, and then waits
//     for its turn on the CPU behind the processes still rendering: with 4
//     processes on one CPU, a 1.8 MB answer that crossed in 64 KiB parts
//     waited 28 times.
//
// Neither is reserved memory: a pipe holds pages only while data waits in
// it. The kernel counts pipe sizes per user (fs.pipe-user-pages-soft,
// 64 MiB by default: about 50 processes' worth); a refusal leaves the
// default.
const (
	requestPipeSize = 256 << 10
	answerPipeSize  = 1 << 20
)

// setPipeSize asks for size bytes on the pipe of f, without changing f's
// mode (Fd would make it blocking).
func setPipeSize(f *os.File, size int) {
	const fSetPipeSize = 1031 // F_SETPIPE_SZ
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, uintptr(size))
		})
	}
}

// The pipes are non-blocking (the runtime's poller waits for them), so a
// read or write returns at once; they are made as raw system calls, which
// the Go scheduler does not see. A write wakes the executor, which on a
// shared CPU runs at once and may render before the write returns: seen
// as a system call that long, it had sysmon hand gorender's one P to
// another thread (and wake itself every 20 µs), so that each render cost
// gorender several thread switches more than the round trip's own.

// writeParts writes head, then body, to the pipe f in as few system calls
// as the pipe allows (writev): a frame's header and body arrive together,
// so the executor wakes once for them, not once for the header and again
// for the body. body is only read.
func writeParts(f *os.File, head []byte, body string) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	rest := unsafe.Slice(unsafe.StringData(body), len(body))
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for len(head)+len(rest) > 0 {
			var iov [2]syscall.Iovec
			n := 0
			for _, b := range [][]byte{head, rest} {
				if len(b) > 0 {
					iov[n].Base = &b[0]
					iov[n].SetLen(len(b))
					n++
				}
			}
			w, _, errno := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(n))
			switch errno {
			case 0:
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until the executor reads
			default:
				werr = os.NewSyscallError("writev", errno)
				return true
			}
			k := min(int(w), len(head))
			head = head[k:]
			rest = rest[int(w)-k:]
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}

// pipeReader reads the pipe f: through the poller when it is empty, with
// raw read system calls (see above). One goroutine reads it (its fields
// are the read in progress, so that a read allocates nothing).
type pipeReader struct {
	rc    syscall.RawConn
	read  func(fd uintptr) bool // r.readFD, made once
	b     []byte
	n     uintptr
	errno syscall.Errno
}

func newPipeReader(f *os.File) (io.Reader, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &pipeReader{rc: rc}
	r.read = r.readFD
	return r, nil
}

func (r *pipeReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.b = b
	err := r.rc.Read(r.read)
	n, errno := r.n, r.errno
	r.b, r.n, r.errno = nil, 0, 0
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

func (r *pipeReader) readFD(fd uintptr) bool {
	for {
		r.n, _, r.errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.b[0])), uintptr(len(r.b)))
		switch r.errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait until the executor writes
		}
		return true
	}
}
