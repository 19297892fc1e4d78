package conns

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// rawWritesOf returns the writes of the server end of a loopback TCP
// connection whose send buffer is small, so that a large write fills it
// many times over.
func rawWritesOf(t *testing.T, server net.Conn) connWrites {
	t.Helper()
	if err := server.(*net.TCPConn).SetWriteBuffer(8 << 10); err != nil {
		t.Fatal(err)
	}
	w := newConnWrites(server)
	if w.raw == nil {
		t.Fatal("a TCP connection has no raw descriptor: the test covers nothing")
	}
	return w
}

// TestRawWritesDeliverEverything: one multi-MB write to a reader that
// reads slowly, in small pieces, arrives whole and in order, and the write
// reports every byte.
func TestRawWritesDeliverEverything(t *testing.T) {
	server, client := tcpPair(t)
	w := rawWritesOf(t, server)
	sent := make([]byte, 6<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range sent {
		sent[i] = byte(rng.Uint32())
	}
	received := make(chan []byte, 1)
	go func() {
		var got bytes.Buffer
		p := make([]byte, 1500)
		for i := 0; ; i++ {
			n, err := client.Read(p[:1+i%len(p)])
			got.Write(p[:n])
			if err != nil {
				break
			}
			if i%500 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		received <- got.Bytes()
	}()
	n, err := w.write(sent)
	if n != len(sent) || err != nil {
		t.Fatalf("wrote %d of %d bytes: %v", n, len(sent), err)
	}
	server.Close()
	if got := <-received; !bytes.Equal(got, sent) {
		t.Fatalf("received %d bytes that differ from the %d sent", len(got), len(sent))
	}
}

// TestRawWritesDeadline: a write to a peer that reads nothing fails at the
// write deadline as net.Conn.Write does (a timeout, *net.OpError with Op
// "write"), and reports exactly the bytes that went out.
func TestRawWritesDeadline(t *testing.T) {
	// A write that starts after its deadline writes nothing, as
	// net.Conn's does: on a loaded machine the test's goroutine can lose
	// the CPU for longer than the deadline, so a try that wrote nothing is
	// repeated with a longer one (each try lasts its deadline).
	for _, deadline := range []time.Duration{50 * time.Millisecond, time.Second, 5 * time.Second} {
		if rawWriteToDeadline(t, deadline) {
			return
		}
	}
	t.Fatal("no try wrote a byte before its deadline")
}

// rawWriteToDeadline runs one try of TestRawWritesDeadline; false if the
// write started after its deadline and wrote nothing.
func rawWriteToDeadline(t *testing.T, deadline time.Duration) bool {
	server, client := tcpPair(t)
	defer client.Close()
	w := rawWritesOf(t, server)
	if err := server.SetWriteDeadline(time.Now().Add(deadline)); err != nil {
		t.Fatal(err)
	}
	n, err := w.write(make([]byte, 64<<20))
	var op *net.OpError
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &op) || op.Op != "write" {
		t.Fatalf("write past the deadline: %v, want a write timeout", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%v is not a net.Error timeout", err)
	}
	if n >= 64<<20 {
		t.Fatalf("wrote %d bytes before the deadline", n)
	}
	// Later writes fail at once, as net.Conn's do.
	if _, err := w.write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write after the deadline: %v", err)
	}
	server.Close()
	got, err := io.ReadAll(client)
	if err != nil || len(got) != n {
		t.Fatalf("the peer read %d bytes (%v), the write reported %d", len(got), err, n)
	}
	return n > 0
}

// TestRawWritesToAClosedPeer: writes to a peer that closed fail (the
// peer's reset) with the net package's error, and writes to a closed
// connection fail with net.ErrClosed.
func TestRawWritesToAClosedPeer(t *testing.T) {
	server, client := tcpPair(t)
	w := rawWritesOf(t, server)
	client.Close()
	var err error
	for deadline := time.Now().Add(5 * time.Second); err == nil && time.Now().Before(deadline); {
		_, err = w.write([]byte("answer"))
		time.Sleep(time.Millisecond)
	}
	var op *net.OpError
	var sysErr *os.SyscallError
	if !errors.As(err, &op) || op.Op != "write" || !errors.As(err, &sysErr) || sysErr.Syscall != "write" ||
		!(errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("write to a closed peer: %v, want the net package's EPIPE or ECONNRESET", err)
	}
	if op.Source == nil || op.Addr == nil || op.Net != "tcp" {
		t.Fatalf("error without addresses: %#v", op)
	}
	server.Close()
	if _, err := w.write([]byte("x")); !errors.Is(err, net.ErrClosed) || !errors.As(err, &op) || op.Op != "write" {
		t.Fatalf("write to a closed connection: %v, want net.ErrClosed", err)
	}
}

// TestConnWithoutDescriptor: a connection without a descriptor (net.Pipe)
// is read and written directly, by the conn's own Read and Write.
func TestConnWithoutDescriptor(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	reads, writes := newBufferedReads(server), newConnWrites(client)
	if runtime.GOOS == "linux" && (reads.raw != nil || writes.raw != nil) {
		t.Fatal("net.Pipe has a descriptor")
	}
	go func() { _, _ = writes.write([]byte("abc")) }()
	p := make([]byte, 9)
	if n, err := reads.read(p); err != nil || string(p[:n]) != "abc" {
		t.Fatalf("read %q, %v", p[:n], err)
	}
}
