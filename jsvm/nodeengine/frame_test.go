package nodeengine

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// writeFrame writes a frame as send does, to any writer.
func writeFrame(w io.Writer, h *header, body []byte) error {
	head, err := frameHead(h, len(body))
	if err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	_, err = w.Write(body)
	return err
}

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	big := bytes.Repeat([]byte("é"), 100_000)
	frames := []struct {
		h    header
		body []byte
	}{
		{header{T: "render", R: 7, B: "p1", Set: map[string]string{"a": "p1"}, Sink: true, Host: []hostEntry{{Key: "pushProps", Kind: "set", Value: []string{"x"}}}}, []byte("code()")},
		{header{T: "chunk", R: 7}, big},
		{header{T: "done", R: 7, Kind: "body"}, nil},
		// A header larger than the reader's buffer (read into its own
		// bytes, not in place).
		{header{T: "loadFailed", B: strings.Repeat("b", 10_000)}, []byte("{}")},
	}
	for _, f := range frames {
		if err := writeFrame(&buf, &f.h, f.body); err != nil {
			t.Fatal(err)
		}
	}
	r := &frameReader{r: bufio.NewReader(&buf)}
	for _, want := range frames {
		got, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if got.h.T != want.h.T || got.h.R != want.h.R || got.h.B != want.h.B || !bytes.Equal(got.body, want.body) {
			t.Fatalf("got %+v (%d bytes), want %+v", got.h, len(got.body), want.h)
		}
	}
	if _, err := r.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

// FuzzReadFrame: whatever an executor writes, reading it ends in a frame,
// io.EOF or a protocol error, never a panic or an allocation past the
// bounds.
func FuzzReadFrame(f *testing.F) {
	var ok bytes.Buffer
	_ = writeFrame(&ok, &header{T: "done", R: 1, Kind: "body"}, []byte("<p>x</p>"))
	f.Add(ok.Bytes())
	f.Add([]byte{})
	f.Add([]byte{5, 0, 0, 0, 0, 0, 0, 0, 'n', 'o', 't', 'j', 's'})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, '{', '}'})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &frameReader{r: bufio.NewReader(bytes.NewReader(data)), maxResult: 1 << 10}
		for {
			fr, err := r.next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, errProtocol) {
					t.Fatalf("error neither EOF nor protocol: %v", err)
				}
				return
			}
			if fr.h.T == "" {
				t.Fatal("a frame without a type")
			}
			if len(data) >= 8 && len(fr.body) > len(data) {
				t.Fatal("a body longer than the input")
			}
		}
	})
}

func TestReadFrameBounds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hlen, blen uint32
	}{
		{"empty header", 0, 0},
		{"header too large", maxFrameHeader + 1, 0},
		{"body too large", 10, maxFrameBody + 1},
	} {
		var pre [8]byte
		binary.LittleEndian.PutUint32(pre[0:4], tc.hlen)
		binary.LittleEndian.PutUint32(pre[4:8], tc.blen)
		_, err := (&frameReader{r: bufio.NewReader(bytes.NewReader(pre[:]))}).next()
		if !errors.Is(err, errProtocol) {
			t.Errorf("%s: %v, want a protocol error", tc.name, err)
		}
	}
}

// TestReadFrameSizes: what an executor chooses the size of is not what
// gorender allocates. A stream chunk arrives in pieces of at most
// chunkPiece, whole once joined; a result past the bound is read and
// dropped, its size kept; an error body past maxErrorBody is a protocol
// error.
func TestReadFrameSizes(t *testing.T) {
	var buf bytes.Buffer
	chunk := bytes.Repeat([]byte("0123456789"), chunkPiece/4)
	result := bytes.Repeat([]byte("r"), 5000)
	for _, f := range []struct {
		h    header
		body []byte
	}{
		{header{T: "chunk", R: 3}, chunk},
		{header{T: "done", R: 3, Kind: "body"}, result},
		{header{T: "done", R: 4, Kind: "body"}, result[:4096]},
		{header{T: "done", R: 5, Kind: "js"}, make([]byte, maxErrorBody+1)},
	} {
		if err := writeFrame(&buf, &f.h, f.body); err != nil {
			t.Fatal(err)
		}
	}
	r := &frameReader{r: bufio.NewReader(&buf), maxResult: 4096}
	var joined []byte
	for len(joined) < len(chunk) {
		f, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if f.h.T != "chunk" || f.h.R != 3 || len(f.body) == 0 || len(f.body) > chunkPiece {
			t.Fatalf("got a %q frame of render %d, %d bytes; want a chunk of render 3, at most %d bytes", f.h.T, f.h.R, len(f.body), chunkPiece)
		}
		joined = append(joined, f.body...)
	}
	if !bytes.Equal(joined, chunk) {
		t.Fatal("the pieces do not join into the chunk")
	}
	if f, err := r.next(); err != nil || f.h.R != 3 || f.dropped != int64(len(result)) || len(f.body) != 0 {
		t.Fatalf("the result over the bound: render %d, dropped %d, body %d bytes, err %v; want render 3, dropped %d, no body", f.h.R, f.dropped, len(f.body), err, len(result))
	}
	if f, err := r.next(); err != nil || f.h.R != 4 || f.dropped != 0 || len(f.body) != 4096 {
		t.Fatalf("the result at the bound: render %d, dropped %d, body %d bytes, err %v; want render 4 whole", f.h.R, f.dropped, len(f.body), err)
	}
	if _, err := r.next(); !errors.Is(err, errProtocol) {
		t.Fatalf("an error body of %d bytes: %v, want a protocol error", maxErrorBody+1, err)
	}
}

// TestWritePartsThroughAPipe: a frame several times the pipe's size
// crosses whole, header then body, while the reader takes it slowly (the
// writer waits for room, as it does for an executor busy rendering).
func TestWritePartsThroughAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	setPipeSize(w, requestPipeSize)
	body := strings.Repeat("0123456789é", 3<<20/12)
	head, err := frameHead(&header{T: "render", R: 1}, len(body))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- writeParts(w, head, body)
		w.Close()
	}()
	pr, err := newPipeReader(r)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	buf := make([]byte, 50_000)
	for {
		n, err := pr.Read(buf)
		got.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // a slow reader: the writer finds the pipe full
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f, err := (&frameReader{r: bufio.NewReader(&got)}).next()
	if err != nil {
		t.Fatal(err)
	}
	if f.h.T != "render" || string(f.body) != body {
		t.Fatalf("got a %q frame of %d bytes, want render of %d", f.h.T, len(f.body), len(body))
	}
}

// rawFrame is a frame's bytes with the header given as JSON text, as an
// executor taken over by a bundle may write it.
func rawFrame(hdr string, body []byte) []byte {
	var pre [8]byte
	binary.LittleEndian.PutUint32(pre[0:4], uint32(len(hdr)))
	binary.LittleEndian.PutUint32(pre[4:8], uint32(len(body)))
	return append(append(pre[:], hdr...), body...)
}

// TestFrameHeaderCosts: a frame's header is memory gorender holds that the
// executor chose the size of, so it counts in what a render may hold
// (renderBuffer): a chunk with an empty body and a large header is not
// free.
func TestFrameHeaderCosts(t *testing.T) {
	hdr := `{"t":"chunk","r":7,"set":{"a":"` + strings.Repeat("x", 50_000) + `"}}`
	f, err := (&frameReader{r: bufio.NewReader(bytes.NewReader(rawFrame(hdr, nil)))}).next()
	if err != nil {
		t.Fatal(err)
	}
	if f.cost() < int64(len(hdr)) {
		t.Errorf("a chunk frame with a header of %d bytes and no body costs %d, want at least its header", len(hdr), f.cost())
	}
}

// TestFrameHeaderBound: the executor's largest header is a host call's
// with maxCallArgs bytes of arguments; a header past that (fields the
// executor never sends) is a protocol error, not an allocation, and the
// largest call still reads.
func TestFrameHeaderBound(t *testing.T) {
	hdr := `{"t":"chunk","r":7,"set":{"a":"` + strings.Repeat("x", 200_000) + `"}}`
	if _, err := (&frameReader{r: bufio.NewReader(bytes.NewReader(rawFrame(hdr, nil)))}).next(); !errors.Is(err, errProtocol) {
		t.Errorf("a header of %d bytes: %v, want a protocol error", len(hdr), err)
	}
	// The longest call the executor sends: its arguments' JSON is
	// maxCallArgs bytes (["…"]), with a long render id and key.
	call := &header{T: "call", R: 1<<53 - 1, K: "propRequestEmitter", Args: []string{strings.Repeat("\x01", (maxCallArgs-4)/6)}}
	var buf bytes.Buffer
	if err := writeFrame(&buf, call, nil); err != nil {
		t.Fatal(err)
	}
	f, err := (&frameReader{r: bufio.NewReader(&buf)}).next()
	if err != nil {
		t.Fatalf("the largest host call: %v", err)
	}
	if f.h.T != "call" || len(f.h.Args) != 1 || len(f.h.Args[0]) != len(call.Args[0]) {
		t.Errorf("the largest host call read as %q with %d arguments", f.h.T, len(f.h.Args))
	}
}
