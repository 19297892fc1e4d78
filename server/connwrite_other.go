//go:build !linux

package server

import "syscall"

func (w connWrites) write(p []byte) (int, error) { return w.conn.Write(p) }

// holdsHeaders: without writeNow's attempt that never waits, writes are
// not held (connhold.go).
const holdsHeaders = false

func (w connWrites) writeNow(p []byte) (int, error) { return w.conn.Write(p) }

func rawRead(fd uintptr, p []byte) (int, error) { return syscall.Read(int(fd), p) }
