package nodeengine

import (
	"os"
	"syscall"
	"unsafe"
)

// pipeSize is the buffer gorender asks for each pipe to an executor
// (F_SETPIPE_SZ; Linux's default is 64 KiB): a page of the bench's medium
// size (a 137 KB rendering request, a 179 KB answer) crosses in one write
// instead of three, each of which woke the other process. It is not
// reserved memory: a pipe holds pages only while data waits in it. Kept
// modest because the kernel counts pipe buffers per user
// (fs.pipe-user-pages-soft); a refusal leaves the default.
const pipeSize = 256 << 10

// setPipeSize asks for pipeSize on the pipe of f, without changing f's
// mode (Fd would make it blocking).
func setPipeSize(f *os.File) {
	const fSetPipeSize = 1031 // F_SETPIPE_SZ
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, pipeSize)
		})
	}
}

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
			w, _, errno := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(n))
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
