package conns

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestConnLimiter: at the cap the oldest connection that never
// authenticated is closed for the new one; when all are authenticated the
// new one is closed instead.
func TestConnLimiter(t *testing.T) {
	h := newLimiterHarness(t, 2, 2)
	l, dial, accept, closed := h.l, h.dial, h.accept, h.closed

	a, aServer := dial(), accept()
	b, bServer := dial(), accept()
	bServer.trust()
	c := dial()
	cServer := accept() // a, the oldest untrusted, makes room
	if !closed(a) || l.Open() != 2 || len(h.shed) != 1 || h.shed[0] != "evicted" {
		t.Fatalf("a closed %v, open %d, shed %v; want a evicted", closed(a), l.Open(), h.shed)
	}
	_ = aServer.Close() // net/http closing the evicted one changes nothing
	if l.Open() != 2 {
		t.Fatalf("open %d after closing an evicted connection, want 2", l.Open())
	}
	cServer.trust()
	// d finds only authenticated connections: it is closed, and the
	// listener waits for the next one.
	d := dial()
	next := make(chan *trackedConn)
	go func() { next <- accept() }()
	if !closed(d) {
		t.Fatal("d was not closed with every connection authenticated")
	}
	if closed(b) || closed(c) {
		t.Fatal("an authenticated connection was closed at the cap")
	}
	_ = bServer.Close()
	e := dial()
	eServer := <-next
	if l.Open() != 2 {
		t.Errorf("open %d after b closed and e came, want 2", l.Open())
	}
	if h.shed[len(h.shed)-1] != "refused" {
		t.Errorf("shed %v, want a refusal", h.shed)
	}
	_, _ = e, eServer
}

// TestConnLimiterUnauthenticated: at most maxUntrusted connections that
// never authenticated are open; a new one closes the oldest of them, and an
// authenticated connection no longer counts.
func TestConnLimiterUnauthenticated(t *testing.T) {
	h := newLimiterHarness(t, 10, 2)
	l, dial, accept, closed := h.l, h.dial, h.accept, h.closed
	a, _ := dial(), accept()
	b, bServer := dial(), accept()
	c, cServer := dial(), accept() // a, the oldest unauthenticated, makes room
	if !closed(a) || len(h.shed) != 1 || h.shed[0] != "evicted" {
		t.Fatalf("a closed %v, shed %v; want a evicted", closed(a), h.shed)
	}
	bServer.trust()
	bServer.trust() // trusting twice counts once
	d, _ := dial(), accept()
	if l.Open() != 3 || l.Unauthenticated() != 2 || len(h.shed) != 1 {
		t.Fatalf("open %d, unauthenticated %d, shed %v after b authenticated and d came; want 3, 2, one eviction", l.Open(), l.Unauthenticated(), h.shed)
	}
	e, _ := dial(), accept() // c makes room, not b
	if !closed(c) || closed(b) || closed(d) || closed(e) {
		t.Fatal("want c evicted and b, d, e open")
	}
	_ = cServer.Close() // net/http closing the evicted one changes nothing
	if l.Open() != 3 || l.Unauthenticated() != 2 {
		t.Errorf("open %d, unauthenticated %d, want 3 and 2", l.Open(), l.Unauthenticated())
	}
}

// limiterHarness is a Limiter on a loopback listener, with what its
// tests do: dial a client, accept its server side, and tell whether the
// server closed a client's connection.
type limiterHarness struct {
	t     *testing.T
	inner net.Listener
	l     *Limiter
	shed  []string // the reasons the limiter closed connections for
}

func newLimiterHarness(t *testing.T, maxOpen, maxUntrusted int) *limiterHarness {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &limiterHarness{t: t, inner: inner}
	h.l = NewLimiter(inner, maxOpen, maxUntrusted, func(reason string) { h.shed = append(h.shed, reason) })
	t.Cleanup(func() { h.l.Close() })
	return h
}

func (h *limiterHarness) dial() net.Conn {
	c, err := net.Dial("tcp", h.inner.Addr().String())
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

func (h *limiterHarness) accept() *trackedConn {
	c, err := h.l.Accept()
	if err != nil {
		h.t.Fatal(err)
	}
	return c.(*trackedConn)
}

// closed reports whether c's server side was closed: at once if it was
// (the closes happened before), else after a short wait.
func (h *limiterHarness) closed(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	return err == io.EOF
}
