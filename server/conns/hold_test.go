//go:build linux

package conns

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// h2frame is one HTTP/2 frame: its 9-byte header, then payload.
func h2frame(typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	f := []byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, byte(stream >> 24), byte(stream >> 16), byte(stream >> 8), byte(stream)}
	return append(f, payload...)
}

var (
	openHeaders  = h2frame(frameHeaders, flagEndHeaders, 1, []byte("\x88\x5f\x87..."))
	closeHeaders = h2frame(frameHeaders, flagEndHeaders|flagEndStream, 3, []byte("\x88"))
	dataFrame    = h2frame(0x0, flagEndStream, 1, []byte("<p>hello</p>"))
	settingsAck  = h2frame(0x4, 0x1, 0, nil)
	windowUpdate = h2frame(frameWindowUpdate, 0, 0, []byte{0, 0, 0x10, 0})
)

func TestHoldable(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    []byte
		want bool
	}{
		{"open headers", openHeaders, true},
		{"a settings ack, then open headers", append(append([]byte{}, settingsAck...), openHeaders...), true},
		{"headers that end the stream", closeHeaders, false},
		{"open headers, then data", append(append([]byte{}, openHeaders...), dataFrame...), false},
		{"data", dataFrame, false},
		{"a truncated frame", openHeaders[:len(openHeaders)-1], false},
		{"bytes after the last frame", append(append([]byte{}, openHeaders...), 0), false},
		{"headers without END_HEADERS", h2frame(frameHeaders, 0, 1, []byte("x")), false},
		{"an HTTP/1.1 answer", []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), false},
		{"empty", nil, false},
		{"a window update", windowUpdate, true},
		{"two window updates", append(append([]byte{}, windowUpdate...), windowUpdate...), true},
		{"a window update, then open headers", append(append([]byte{}, windowUpdate...), openHeaders...), true},
		{"a window update, then data", append(append([]byte{}, windowUpdate...), dataFrame...), false},
		{"data, then a window update", append(append([]byte{}, dataFrame...), windowUpdate...), false},
		{"a truncated window update", windowUpdate[:len(windowUpdate)-1], false},
		{"a settings ack", settingsAck, false},
	} {
		if got := holdable(tc.p); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// readN reads exactly n bytes from c within 5 s.
func readN(t *testing.T, c io.Reader, n int) []byte {
	t.Helper()
	got := make([]byte, n)
	done := make(chan error, 1)
	go func() { _, err := io.ReadFull(c, got); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("read %d bytes: %v", n, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%d bytes did not arrive within 5 s", n)
	}
	return got
}

func heldLen(h *headersHold) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}

// TestHeldHeadersGoWithTheBody: a write that ends with open headers is
// held and sent with the next write, in order, each write reporting its
// own bytes; so is a window update (returned while a handler reads its
// body), which the answer's open headers join.
func TestHeldHeadersGoWithTheBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		held [][]byte
	}{
		{"open headers", [][]byte{append(append([]byte{}, settingsAck...), openHeaders...)}},
		{"a window update, then open headers", [][]byte{windowUpdate, openHeaders}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, client := tcpPair(t)
			w := rawWritesOf(t, server)
			var h headersHold
			var want []byte
			for _, p := range tc.held {
				if n, err := h.write(w, p); n != len(p) || err != nil {
					t.Fatalf("write %q: %d, %v", p, n, err)
				}
				want = append(want, p...)
			}
			if heldLen(&h) != len(want) {
				t.Fatalf("%d bytes held, want the %d written", heldLen(&h), len(want))
			}
			if n, err := h.write(w, dataFrame); n != len(dataFrame) || err != nil {
				t.Fatalf("write data: %d, %v", n, err)
			}
			if heldLen(&h) != 0 {
				t.Errorf("%d bytes still held after the body", heldLen(&h))
			}
			want = append(want, dataFrame...)
			if got := readN(t, client, len(want)); !bytes.Equal(got, want) {
				t.Errorf("received %q, want %q", got, want)
			}
		})
	}
}

// TestHeldHeadersGoAlone: headers that no body follows (a stream waiting
// for its first chunk) go out by themselves, and later writes follow them;
// so does a window update that no answer follows.
func TestHeldHeadersGoAlone(t *testing.T) {
	for name, held := range map[string][]byte{"open headers": openHeaders, "a window update": windowUpdate} {
		t.Run(name, func(t *testing.T) {
			server, client := tcpPair(t)
			w := rawWritesOf(t, server)
			var h headersHold
			if _, err := h.write(w, held); err != nil {
				t.Fatal(err)
			}
			if got := readN(t, client, len(held)); !bytes.Equal(got, held) {
				t.Fatalf("received %q, want %q", got, held)
			}
			if _, err := h.write(w, dataFrame); err != nil {
				t.Fatal(err)
			}
			if got := readN(t, client, len(dataFrame)); !bytes.Equal(got, dataFrame) {
				t.Fatalf("received %q, want the data", got)
			}
		})
	}
}

// TestHoldBound: a holdable write that would take what is held past
// holdMax is not held: it goes out at once, with what is held before it.
func TestHoldBound(t *testing.T) {
	server, client := tcpPair(t)
	w := rawWritesOf(t, server)
	var h headersHold
	var updates []byte
	for len(updates)+len(windowUpdate) <= holdMax {
		updates = append(updates, windowUpdate...)
	}
	tooMany := append(append([]byte{}, updates...), windowUpdate...)
	if n, err := h.write(w, tooMany); n != len(tooMany) || err != nil {
		t.Fatalf("write %d bytes of window updates: %d, %v", len(tooMany), n, err)
	}
	if heldLen(&h) != 0 {
		t.Fatalf("%d bytes held, past holdMax (%d)", heldLen(&h), holdMax)
	}
	if got := readN(t, client, len(tooMany)); !bytes.Equal(got, tooMany) {
		t.Fatalf("received %d bytes, want the %d written", len(got), len(tooMany))
	}
	// Held headers, then updates that fit alone but not with them: both
	// go out with the second write (or the headers at holdTime first).
	if _, err := h.write(w, openHeaders); err != nil {
		t.Fatal(err)
	}
	if _, err := h.write(w, updates); err != nil {
		t.Fatal(err)
	}
	if heldLen(&h) > holdMax {
		t.Fatalf("%d bytes held, past holdMax (%d)", heldLen(&h), holdMax)
	}
	want := append(append([]byte{}, openHeaders...), updates...)
	if got := readN(t, client, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("received %d bytes, want the %d written, in order", len(got), len(want))
	}
}

// TestHTTP1WritesAreNotHeld: an HTTP/1.1 connection's writes go out at once.
func TestHTTP1WritesAreNotHeld(t *testing.T) {
	server, client := tcpPair(t)
	w := rawWritesOf(t, server)
	var h headersHold
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	if _, err := h.write(w, answer); err != nil {
		t.Fatal(err)
	}
	if heldLen(&h) != 0 {
		t.Fatalf("an HTTP/1.1 answer was held")
	}
	if got := readN(t, client, len(answer)); !bytes.Equal(got, answer) {
		t.Fatalf("received %q", got)
	}
}

// TestHeldHeadersToAPeerThatReadsNothing: headers held for a peer whose
// receive buffer is full are not pushed at holdTime by a write that
// waits: the hold stays free, and the next write fails at its deadline as
// any write to that peer does.
func TestHeldHeadersToAPeerThatReadsNothing(t *testing.T) {
	server, _ := tcpPair(t)
	w := rawWritesOf(t, server)
	var h headersHold
	_ = server.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := h.write(w, make([]byte, 16<<20)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("filling the peer's buffer: %v, want a deadline error", err)
	}
	_ = server.SetWriteDeadline(time.Time{})
	if _, err := h.write(w, openHeaders); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * holdTime)
	if !h.mu.TryLock() {
		t.Fatal("the hold is still locked long after holdTime: its sending waits for the peer")
	}
	h.mu.Unlock()
	// The next write is larger than any room left in the socket's buffer:
	// a small one can still fit in the tail of its last segment.
	bigData := h2frame(0x0, flagEndStream, 1, make([]byte, 1<<20))
	_ = server.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	done := make(chan error, 1)
	go func() { _, err := h.write(w, bigData); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the next write: %v, want a deadline error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next write outlived its deadline")
	}
}

// TestClosedHoldSendsNothing: closing drops held headers; the timer does
// not write to the closed connection.
func TestClosedHoldSendsNothing(t *testing.T) {
	server, client := tcpPair(t)
	w := rawWritesOf(t, server)
	var h headersHold
	if _, err := h.write(w, openHeaders); err != nil {
		t.Fatal(err)
	}
	h.close()
	server.Close()
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(client); len(b) != 0 || err != nil {
		t.Errorf("after close the peer read %q, %v; want nothing and EOF", b, err)
	}
}
