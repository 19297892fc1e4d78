package conns

import (
	"errors"
	"net"
	"os"
	"syscall"
)

// connWrites writes a connection: on Linux with raw write system calls
// (write_linux.go), elsewhere, or when the connection has no
// descriptor, through the connection's own Write.
type connWrites struct {
	conn net.Conn
	raw  syscall.RawConn // nil when conn has no descriptor: every write goes to conn
}

func newConnWrites(c net.Conn) connWrites {
	return connWrites{conn: c, raw: rawConnOf(c)}
}

// rawConnOf returns the descriptor of c, or nil if it has none (a
// connection that is not a socket of the net package).
func rawConnOf(c net.Conn) syscall.RawConn {
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			return raw
		}
	}
	return nil
}

// connError names err, the error of a read or write (op) of c, as
// net.Conn's Read and Write name theirs: net/http tells a read error it
// need not answer by its Op, "read". An error of c's RawConn (Op
// "raw-read" or "raw-write": closed, or past the deadline) is renamed; a
// system call's (errno) is wrapped as the net package wraps it.
func connError(c net.Conn, op string, err error) error {
	var raw *net.OpError
	if errors.As(err, &raw) {
		named := *raw
		named.Op = op
		return &named
	}
	if errno, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
