package conns

import (
	"io"
	"syscall"
	"unsafe"
)

// With one P (RENDERER_JS_ENGINE=node runs GOMAXPROCS=1), a system call
// the scheduler sees that lasts longer than a sysmon tick (20 µs) has its
// P handed to another thread, and the first thread, back from the call,
// parks: two thread switches, the most expensive thing there is on a VM
// (with goja's two Ps on one CPU, measured, too). A write to a loopback socket
// runs the receiver's side in softirq before it returns (30-70 µs here),
// so nearly every response write tripped it; a system call after an idle
// spell also wakes sysmon. The socket is non-blocking, so a read or write
// never waits in the kernel: both are made as raw system calls, which the
// scheduler does not see, and the runtime's poller still waits while the
// socket has nothing to read or its send buffer is full.

// maxWrite bounds one write(2), as the net package does.
const maxWrite = 1 << 30

// write writes all of p unless an error comes first, as net.Conn.Write
// does: the write deadline applies, and errors are the net package's
// (*net.OpError with Op "write"; a deadline's satisfies
// errors.Is(err, os.ErrDeadlineExceeded)).
func (w connWrites) write(p []byte) (int, error) {
	if w.raw == nil || len(p) == 0 {
		return w.conn.Write(p)
	}
	done, err := w.rawWrite(p, true)
	if err == nil && done < len(p) {
		err = connError(w.conn, "write", io.ErrUnexpectedEOF)
	}
	return done, err
}

// writeNow writes what of p the socket takes now, in one attempt that
// never waits for the poller (headersHold's sending at holdTime).
func (w connWrites) writeNow(p []byte) (int, error) {
	return w.rawWrite(p, false)
}

// rawWrite writes p with raw system calls until it is all written or an
// error comes; when the send buffer is full it waits for the poller if
// wait is set, else it returns what went out.
func (w connWrites) rawWrite(p []byte, wait bool) (int, error) {
	var (
		done  int
		errno syscall.Errno
	)
	err := w.raw.Write(func(fd uintptr) bool {
		for done < len(p) {
			part := p[done:min(len(p), done+maxWrite)]
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&part[0])), uintptr(len(part)))
			switch {
			case e == syscall.EINTR:
			case e == syscall.EAGAIN:
				return !wait // the send buffer is full: wait for the poller, or stop
			case e != 0:
				errno = e
				return true
			case n == 0:
				return true // cannot happen on a socket; write reports io.ErrUnexpectedEOF, as net
			default:
				done += int(n)
			}
		}
		return true
	})
	switch {
	case err != nil:
		return done, connError(w.conn, "write", err)
	case errno != 0:
		return done, connError(w.conn, "write", errno)
	}
	return done, nil
}

// holdsHeaders: headersHold needs writeNow's attempt that never waits.
const holdsHeaders = true

// rawRead reads the non-blocking socket fd into p with a raw system call
// (see above: a read the scheduler sees wakes an idle sysmon).
func rawRead(fd uintptr, p []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
