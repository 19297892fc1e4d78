package conns

import (
	"sync"
	"time"
)

// net/http's HTTP/2 server writes a response's HEADERS frame to the socket
// on its own: the handler waits until that frame is written before it
// queues the body, so every response took two socket writes, and on
// loopback each write runs the client's receive path on the server's CPU.
// headersHold keeps a write that ends with a HEADERS frame that does not
// end its stream (the body follows) for up to holdTime, and sends it with
// the next write, which is the body in nearly every case: one write per
// small response instead of two. It holds a write of WINDOW_UPDATE frames
// alone the same way: net/http returns the connection's window every 4 KiB
// of request body a handler reads, so with small bodies every few
// requests took a 13-byte write of its own; the update now goes with the
// next answer. Another holdable write joins what is held, within holdMax,
// and the first one's holdTime.
//
// Bytes always go out in the order written. A held write that nothing
// follows (a stream's headers before its first chunk) goes out at
// holdTime, in one attempt that never waits for the socket: if the peer
// reads nothing and its buffer is full, the rest waits for the next write,
// which has net/http's write deadline; the server never blocks on a peer
// outside a deadline.
type headersHold struct {
	mu     sync.Mutex
	held   []byte // a write not sent yet: empty, or it ends with open headers
	err    error  // of a sending at holdTime: every later write returns it
	timer  *time.Timer
	closed bool
}

const (
	// holdMax bounds the writes that are held: a response's headers take
	// a few hundred bytes.
	holdMax = 4 << 10
	// holdTime is how long held headers wait for their body.
	holdTime = time.Millisecond
	// keptHold is the largest buffer kept between writes.
	keptHold = 32 << 10
)

// write writes p through w (see headersHold).
func (h *headersHold) write(w connWrites, p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return 0, h.err
	}
	if h.closed {
		return w.write(p) // the connection's own error
	}
	if len(h.held)+len(p) <= holdMax && holdable(p) {
		if len(h.held) == 0 {
			if h.timer == nil {
				h.timer = time.AfterFunc(holdTime, func() { h.send(w) })
			} else {
				h.timer.Reset(holdTime)
			}
		}
		h.held = append(h.held, p...)
		return len(p), nil
	}
	if len(h.held) > 0 {
		h.timer.Stop()
		before := len(h.held)
		h.held = append(h.held, p...)
		n, err := w.write(h.held)
		h.release()
		return max(0, n-before), err
	}
	return w.write(p)
}

// send writes what is held, at holdTime, without waiting for the socket:
// what does not go out now goes with the next write.
func (h *headersHold) send(w connWrites) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.held) == 0 {
		return
	}
	n, err := w.writeNow(h.held)
	h.held = h.held[:copy(h.held, h.held[n:])]
	if err != nil {
		h.err = err
		h.release()
	}
}

// release empties the held buffer, dropping it when it grew large.
func (h *headersHold) release() {
	if cap(h.held) > keptHold {
		h.held = nil
	}
	h.held = h.held[:0]
}

// close drops what is held: the connection is closing, and a response
// whose body never came is lost with it anyway.
func (h *headersHold) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.timer != nil {
		h.timer.Stop()
	}
	h.held = nil
}

// HTTP/2 frames (RFC 9113 §4.1): a 9-byte header, then the payload.
const (
	frameHeaderLen    = 9
	frameHeaders      = 0x1
	frameWindowUpdate = 0x8
	flagEndStream     = 0x1
	flagEndHeaders    = 0x4
)

// holdable reports whether p is whole HTTP/2 frames that can wait for the
// next write: the last of them a HEADERS frame that ends its header block
// but not its stream, or all of them WINDOW_UPDATE frames. A write of an
// HTTP/1.1 connection starts with text, whose first three bytes read as a
// frame of megabytes, longer than any held write: it is never held.
func holdable(p []byte) bool {
	last := -1
	updatesOnly := true
	for i := 0; i < len(p); {
		if len(p)-i < frameHeaderLen {
			return false
		}
		n := int(p[i])<<16 | int(p[i+1])<<8 | int(p[i+2])
		if n > len(p)-i-frameHeaderLen {
			return false
		}
		last = i
		updatesOnly = updatesOnly && p[i+3] == frameWindowUpdate
		i += frameHeaderLen + n
	}
	if last < 0 {
		return false
	}
	typ, flags := p[last+3], p[last+4]
	openHeaders := typ == frameHeaders && flags&flagEndHeaders != 0 && flags&flagEndStream == 0
	return openHeaders || updatesOnly
}
