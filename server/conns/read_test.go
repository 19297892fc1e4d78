package conns

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// TestBufferedReadsKeepTheBytes: what the peer writes, in pieces of any
// size, is read back whole and in order through reads of any size (frame
// headers, payloads larger than the buffer), then io.EOF; a connection
// whose bytes were all read holds no buffer.
func TestBufferedReadsKeepTheBytes(t *testing.T) {
	server, client := tcpPair(t)
	reads := newBufferedReads(server)
	if reads.raw == nil {
		t.Fatal("a TCP connection has no raw descriptor: the test covers nothing")
	}
	sent := make([]byte, 300<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range sent {
		sent[i] = byte(rng.Uint32())
	}
	go func() {
		rest := sent
		for len(rest) > 0 {
			n := min(len(rest), 1+rng.IntN(40<<10))
			if _, err := client.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
			if rng.IntN(4) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		client.Close()
	}()
	var got bytes.Buffer
	sizes := []int{9, 16 << 10, 1, 4 << 10, 100, 64 << 10, 4<<10 - 1}
	for i := 0; ; i++ {
		p := make([]byte, sizes[i%len(sizes)])
		n, err := reads.read(p)
		got.Write(p[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if !bytes.Equal(got.Bytes(), sent) {
		t.Fatalf("read %d bytes that differ from the %d sent", got.Len(), len(sent))
	}
	if reads.buf != nil {
		t.Fatal("a connection with nothing left to read holds a buffer")
	}
}

// TestBufferedReadsDeadline: a small read past the read deadline fails as
// net.Conn.Read does (a timeout, Op "read", which net/http does not
// answer), holds no buffer, and reading goes on once the deadline moves.
func TestBufferedReadsDeadline(t *testing.T) {
	server, client := tcpPair(t)
	reads := newBufferedReads(server)
	if err := server.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err := reads.read(make([]byte, 9))
	var op *net.OpError
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &op) || op.Op != "read" {
		t.Fatalf("read past the deadline: %v, want a read timeout", err)
	}
	if reads.buf != nil {
		t.Fatal("a connection waiting for bytes holds a buffer")
	}
	// A large read, which goes straight to the socket, too.
	if _, err := reads.read(make([]byte, 16<<10)); !errors.Is(err, os.ErrDeadlineExceeded) ||
		!errors.As(err, &op) || op.Op != "read" {
		t.Fatalf("large read past the deadline: %v, want a read timeout", err)
	}
	if err := server.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Write([]byte("hello, frames")); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 5)
	if n, err := reads.read(p); err != nil || string(p[:n]) != "hello" {
		t.Fatalf("read after the deadline moved: %q, %v", p[:n], err)
	}
}
