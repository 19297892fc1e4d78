// Package conns wraps the client connections server accepts, between the
// listener and net/http, each part for a bound or a measured cost: the
// connection caps and which connections are evicted at them (limit.go), a
// connection's maximum age (age.go), buffered reads (read.go), HTTP/2
// HEADERS held to share a socket write (hold.go) and raw non-blocking
// writes on Linux (write*.go). docs/ARCHITECTURE.md "Connection wrapping"
// says why each exists.
package conns

import (
	"container/list"
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// Limiter is a listener that keeps at most max client connections open
// (RENDERER_MAX_CONNECTIONS), at most maxUntrusted of them connections that
// never carried an authenticated request
// (RENDERER_MAX_UNAUTHENTICATED_CONNECTIONS). At either cap a new connection is not refused
// outright: it might be the orchestrator's probe, or a Rails process. To
// make room the oldest connection that has never carried an authenticated
// request is closed (connections of clients without the password, stalled
// or not, and idle probes go first; a Rails connection authenticates on its
// first request and is never evicted). Only when every open connection is
// authenticated is the new one closed.
type Limiter struct {
	net.Listener
	max, maxUntrusted int
	// shed is told of each connection closed at the cap: evicted (an old
	// one made room) or refused (the new one).
	shed func(reason string)

	mu        sync.Mutex
	conns     list.List // of *trackedConn, oldest first
	untrusted int       // of conns, those not trusted
}

// NewLimiter caps ln at max connections, maxUntrusted of them not
// authenticated.
func NewLimiter(ln net.Listener, max, maxUntrusted int, shed func(reason string)) *Limiter {
	if shed == nil {
		shed = func(string) {}
	}
	return &Limiter{Listener: ln, max: max, maxUntrusted: min(maxUntrusted, max), shed: shed}
}

// Accept returns the next connection, making room for it at the cap.
func (l *Limiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, l: l}
		tc.reads = newBufferedReads(c)
		tc.writes = newConnWrites(c)
		l.mu.Lock()
		var victim *trackedConn
		if l.conns.Len() >= l.max || l.untrusted >= l.maxUntrusted {
			victim = l.oldestUntrusted()
			if victim == nil {
				l.mu.Unlock()
				_ = c.Close()
				l.shed("refused")
				continue
			}
			l.remove(victim)
		}
		tc.elem = l.conns.PushBack(tc)
		l.untrusted++
		l.mu.Unlock()
		if victim != nil {
			_ = victim.Conn.Close()
			l.shed("evicted")
		}
		return tc, nil
	}
}

// oldestUntrusted returns the oldest connection that never authenticated.
func (l *Limiter) oldestUntrusted() *trackedConn {
	for e := l.conns.Front(); e != nil; e = e.Next() {
		if tc := e.Value.(*trackedConn); !tc.trusted.Load() {
			return tc
		}
	}
	return nil
}

// remove stops counting tc; l.mu is held.
func (l *Limiter) remove(tc *trackedConn) {
	if tc.elem == nil {
		return
	}
	l.conns.Remove(tc.elem)
	tc.elem = nil
	if !tc.trusted.Load() {
		l.untrusted--
	}
}

// Open returns the number of connections open.
func (l *Limiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns.Len()
}

// Unauthenticated returns the number of connections open that never
// carried an authenticated request.
func (l *Limiter) Unauthenticated() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.untrusted
}

// trackedConn is a connection counted by a Limiter.
type trackedConn struct {
	net.Conn
	reads   bufferedReads // of Conn (read.go)
	writes  connWrites    // of Conn (write.go)
	l       *Limiter
	elem    *list.Element // nil once it no longer counts
	trusted atomic.Bool   // set under l.mu, read without it
	hold    headersHold   // of writes (hold.go)
}

func (c *trackedConn) Read(p []byte) (int, error) { return c.reads.read(p) }
func (c *trackedConn) Write(p []byte) (int, error) {
	if !holdsHeaders || c.writes.raw == nil {
		return c.writes.write(p)
	}
	return c.hold.write(c.writes, p)
}

// trust marks the connection authenticated: it is no longer evicted, nor
// counted against the cap of unauthenticated connections.
func (c *trackedConn) trust() {
	if c.trusted.Load() {
		return
	}
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if c.trusted.Load() {
		return
	}
	c.trusted.Store(true)
	if c.elem != nil {
		c.l.untrusted--
	}
}

// Close stops counting the connection and closes it.
func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	c.l.remove(c)
	c.l.mu.Unlock()
	c.hold.close()
	return c.Conn.Close()
}

// CloseWrite half-closes a TCP connection: net/http closes an HTTP/1.1
// connection whose body it did not read this way, so that the client reads
// the answer before the connection's end.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connKey is the context key of a request's trackedConn.
type connKey struct{}

// WithConn is an http.Server.ConnContext that lets a request reach its
// connection (MarkAuthenticated).
func WithConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// MarkAuthenticated trusts the connection of a request that authenticated
// (handlers.Deps.Authenticated): it is no longer evicted at the caps.
func MarkAuthenticated(ctx context.Context) {
	if tc, ok := ctx.Value(connKey{}).(*trackedConn); ok {
		tc.trust()
	}
}
