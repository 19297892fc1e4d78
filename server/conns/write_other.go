//go:build !linux

package conns

import "syscall"

func (w connWrites) write(p []byte) (int, error) { return w.conn.Write(p) }

// holdsHeaders: without writeNow's attempt that never waits, writes are
// not held (hold.go).
const holdsHeaders = false

func (w connWrites) writeNow(p []byte) (int, error) { return w.conn.Write(p) }

func rawRead(fd uintptr, p []byte) (int, error) { return syscall.Read(int(fd), p) }
