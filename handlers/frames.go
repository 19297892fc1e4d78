package handlers

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/bytedance/sonic"
)

// The bundle's streamed output is a sequence of frames (PROTOCOL.md §5):
//
//	<metadata JSON>\t<8 lower-case hex digits: content byte length>\n<content>
//
// In pull mode gorender adds frames of its own, which must land between
// whole frames of the bundle's output, never inside one.

const (
	maxPropNameLength = 256
	frameHexDigits    = 8
)

// controlFrame is a frame gorender writes itself: metadata only, no content.
func controlFrame(metadata string) []byte {
	return []byte(metadata + "\t00000000\n")
}

// propRequestFrame asks Rails for the prop name.
func propRequestFrame(name string) []byte {
	meta, _ := sonic.ConfigStd.MarshalToString(struct {
		MessageType string `json:"messageType"`
		PropName    string `json:"propName"`
	}{"propRequest", name})
	return controlFrame(meta)
}

// renderCompleteFrame ends a pull-mode answer.
var renderCompleteFrame = controlFrame(`{"messageType":"renderComplete"}`)

// frameWriter passes the bundle's bytes through untouched and writes
// injected frames only at frame boundaries. If the output turns out not to
// be framed, injections go out between writes instead.
type frameWriter struct {
	mu        sync.Mutex
	w         io.Writer
	header    []byte // the current frame's header read so far
	remaining int64  // content bytes of the current frame still to pass
	unframed  bool
	pending   [][]byte
}

func newFrameWriter(w io.Writer) *frameWriter { return &frameWriter{w: w} }

// atBoundary reports whether no frame is partly written.
func (f *frameWriter) atBoundary() bool {
	return f.unframed || (f.remaining == 0 && len(f.header) == 0)
}

// Inject queues a frame and writes it at once if at a boundary.
func (f *frameWriter) Inject(frame []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = append(f.pending, frame)
	if f.atBoundary() {
		return f.flushPending()
	}
	return nil
}

func (f *frameWriter) flushPending() error {
	for len(f.pending) > 0 {
		if _, err := f.w.Write(f.pending[0]); err != nil {
			return err
		}
		f.pending = f.pending[1:]
	}
	return nil
}

// Write passes p through, tracking frame boundaries, and writes queued
// frames at each boundary it reaches.
func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		if f.atBoundary() {
			if err := f.flushPending(); err != nil {
				return 0, err
			}
		}
		var part []byte
		switch {
		case f.unframed:
			part, p = p, nil
		case f.remaining > 0:
			k := min(int64(len(p)), f.remaining)
			part, p = p[:k], p[k:]
			f.remaining -= k
		default:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				f.header = append(f.header, p...)
				part, p = p, nil
				break
			}
			f.header = append(f.header, p[:i+1]...)
			part, p = p[:i+1], p[i+1:]
			length, ok := frameLength(f.header)
			f.header = f.header[:0]
			if !ok {
				f.unframed = true
			}
			f.remaining = length
		}
		if _, err := f.w.Write(part); err != nil {
			return 0, err
		}
	}
	if f.atBoundary() {
		if err := f.flushPending(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// frameLength reads the content length of a frame header ending in '\n'.
func frameLength(header []byte) (int64, bool) {
	// ...\t<8 hex>\n
	if len(header) < frameHexDigits+2 || header[len(header)-frameHexDigits-2] != '\t' {
		return 0, false
	}
	hex := header[len(header)-frameHexDigits-1 : len(header)-1]
	n, err := strconv.ParseInt(string(hex), 16, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
