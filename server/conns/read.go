package conns

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
)

// Go's HTTP/2 server reads the socket unbuffered: a frame's 9-byte header,
// then its payload. A small render request (HEADERS and DATA frames) took
// four read(2) calls, and a medium page's 137 KB body two per 16 KiB frame;
// on a VM a syscall costs microseconds. So a connection's small reads are
// served from a buffer that one read(2) fills with whatever has arrived.
const (
	// connReadBuffer is the most one read(2) takes for the buffer: two
	// 16 KiB frames.
	connReadBuffer = 32 << 10
	// directRead: a read at least this large goes straight to the socket
	// when nothing waits in the buffer (HTTP/1.1 reads into its own 4 KiB
	// buffer), so those bytes are not copied once more.
	directRead = 4 << 10
)

// readBuffers are shared by all connections: a connection holds one only
// while bytes it has read wait in it, never while it waits for bytes, so
// an idle connection costs none.
var readBuffers = sync.Pool{New: func() any { return new([connReadBuffer]byte) }}

// bufferedReads reads a connection through a buffer from readBuffers. Like
// net/http, it expects one reader at a time.
type bufferedReads struct {
	conn net.Conn
	raw  syscall.RawConn // nil when conn has no descriptor: every read goes to conn
	buf  *[connReadBuffer]byte
	next int // buf[next:end] waits to be read
	end  int
}

func newBufferedReads(c net.Conn) bufferedReads {
	return bufferedReads{conn: c, raw: rawConnOf(c)}
}

func (b *bufferedReads) read(p []byte) (int, error) {
	if b.buf != nil {
		n := copy(p, b.buf[b.next:b.end])
		b.next += n
		if b.next == b.end {
			readBuffers.Put(b.buf)
			b.buf = nil
		}
		return n, nil
	}
	if b.raw == nil || len(p) == 0 {
		return b.conn.Read(p)
	}
	if len(p) >= directRead {
		return b.readDirect(p)
	}
	if err := b.fill(); err != nil {
		return 0, err
	}
	return b.read(p)
}

// fill waits until the socket is readable, holding no buffer, then reads
// what has arrived into one. The connection's read deadline applies.
func (b *bufferedReads) fill() error {
	var n int
	var errno error
	err := b.raw.Read(func(fd uintptr) bool {
		buf := readBuffers.Get().(*[connReadBuffer]byte)
		for {
			n, errno = rawRead(fd, buf[:])
			if !errors.Is(errno, syscall.EINTR) {
				break
			}
		}
		if errors.Is(errno, syscall.EAGAIN) {
			readBuffers.Put(buf)
			return false // nothing yet: wait for the poller
		}
		if n > 0 {
			b.buf, b.next, b.end = buf, 0, n
		} else {
			readBuffers.Put(buf)
		}
		return true
	})
	return b.readError(err, errno, n)
}

// readDirect reads into p straight from the socket, waiting in the poller
// until it is readable, as net.Conn.Read does.
func (b *bufferedReads) readDirect(p []byte) (int, error) {
	var n int
	var errno error
	err := b.raw.Read(func(fd uintptr) bool {
		for {
			n, errno = rawRead(fd, p)
			if !errors.Is(errno, syscall.EINTR) {
				break
			}
		}
		return !errors.Is(errno, syscall.EAGAIN) // nothing yet: wait for the poller
	})
	if err := b.readError(err, errno, n); err != nil {
		return 0, err
	}
	return n, nil
}

// readError is the error of a read that returned n bytes: err from the
// RawConn, errno from read(2).
func (b *bufferedReads) readError(err, errno error, n int) error {
	switch {
	case err != nil:
		return connError(b.conn, "read", err)
	case errno != nil:
		return connError(b.conn, "read", errno)
	case n == 0:
		return io.EOF
	}
	return nil
}
