package nodeengine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/bytedance/sonic"
)

// Frames are how gorender and an executor talk, over two pipes (the
// child's fd 3 in, fd 4 out): a little-endian u32 header length, a u32
// body length, the JSON header, then the body bytes. The body carries
// what can be large and is opaque to the header: bundle sources, rendering
// requests, update chunks, rendered HTML and stream chunks.
//
// gorender → executor:
//
//	init    options; body: env.js                      → ready
//	load    b (program key), name, file, dir; body: the bundle source
//	                                                     → loaded | loadFailed
//	unload  b
//	render  r (render id), b (entry), set (bundle id → program key), sink,
//	        updates, host (shared-context values from gorender), parsed
//	        (the JSON.parse calls of a rewritten request: their start and
//	        end, in UTF-16 units, two a call; transform.AppendPropsAsJSON),
//	        latin1 (the body is in Latin-1, not UTF-8: latin1.go);
//	        body: code, as the process compiles it
//	update  r, n (sequence), id (bundle id); body: code → updated | updateFailed
//	        (one at a time: the next is sent once the last was applied)
//	close   r: no more updates
//	cancel  r, why (client | idle | interrupt)          → done (kind canceled)
//	withdraw r: a render queued behind another goes to an idle process
//	                                  → done (kind withdrawn), unless started
//
// A render frame that arrives while another render runs is queued in the
// executor (pipelining: no process is idle); it starts once the running
// one answered. A cancel drops a queued render unstarted.
//
// executor → gorender:
//
//	ready        node (version), pid
//	loaded       b
//	loadFailed   b; body: the error (errorBody)
//	start        r: the result is a stream; the answer starts now
//	chunk        r; body: the bytes
//	call         r, k (shared-context key), args: a host function's call
//	updated      r, n: the update ran
//	updateFailed r, n; body: the error (errorBody)
//	done         r, kind (body | streamed | nil | js | unsupported |
//	             stubPending | neverSettled | stalled | canceled |
//	             withdrawn | tooLarge), n (tooLarge: the result's bytes);
//	             body: the rendered text for kind body, the error
//	             (errorBody) for js
//
// An error travels in the body as JSON {"message", "stack"}: a bundle's
// error may be megabytes (what gorender answers of it is capped where the
// answer is built), and a header is small.
type header struct {
	T string `json:"t"`

	R       uint64            `json:"r,omitempty"`
	B       string            `json:"b,omitempty"`
	Name    string            `json:"name,omitempty"`
	File    string            `json:"file,omitempty"`
	Dir     string            `json:"dir,omitempty"`
	Map     string            `json:"map,omitempty"`
	Set     map[string]string `json:"set,omitempty"`
	Sink    bool              `json:"sink,omitempty"`
	Updates bool              `json:"updates,omitempty"`
	Host    []hostEntry       `json:"host,omitempty"`
	Parsed  []int             `json:"parsed,omitempty"`
	Latin1  bool              `json:"latin1,omitempty"`
	ID      string            `json:"id,omitempty"`
	N       uint64            `json:"n,omitempty"`
	Why     string            `json:"why,omitempty"`
	Options *executorOptions  `json:"options,omitempty"`

	Node string   `json:"node,omitempty"`
	PID  int      `json:"pid,omitempty"`
	Kind string   `json:"kind,omitempty"`
	K    string   `json:"k,omitempty"`
	Args []string `json:"args,omitempty"`
}

// executorOptions is the environment every bundle context of a process gets.
type executorOptions struct {
	StubTimers      bool `json:"stubTimers"`
	SupportModules  bool `json:"supportModules"`
	ReplayAsyncLogs bool `json:"replayAsyncLogs"`
	// The bounds env.js applies, as for the in-process engines
	// (inproc.EnvOptions): console history (jsvm.Options.ConsoleBounds)
	// and how much of an error's text crosses (jsvm.MaxErrorTextLength).
	ConsoleMaxLines int64 `json:"consoleMaxLines"`
	ConsoleMaxBytes int64 `json:"consoleMaxBytes"`
	ErrorTextMax    int   `json:"errorTextMax"`
	// RunOnOtherMaxDepth bounds runOnOtherBundle's nesting, past it a
	// RangeError of RunOnOtherTooDeep (jsvm.MaxRunOnOtherDepth).
	RunOnOtherMaxDepth int    `json:"runOnOtherMaxDepth"`
	RunOnOtherTooDeep  string `json:"runOnOtherTooDeep"`
	// CrossingStreamsMax bounds the streams a bundle's render receives at
	// once, past it an error of CrossingStreams (jsvm.MaxCrossingStreams).
	CrossingStreamsMax int    `json:"crossingStreamsMax"`
	CrossingStreams    string `json:"crossingStreams"`
	// SourceMapLimit bounds the process's parsed source maps for
	// getStackTrace (its share of RENDERER_SOURCE_MAP_CACHE_SIZE; 0: none).
	SourceMapLimit int64 `json:"sourceMapLimit"`
	// MaxResult is the bound of a result's bytes (Engine.resultLimit): a
	// longer one is answered as a done frame of kind tooLarge, its size in
	// n, without crossing the pipe.
	MaxResult int64 `json:"maxResult"`
	// CallArgsMax bounds a host function call's arguments (maxCallArgs): a
	// call past it is not sent.
	CallArgsMax int `json:"callArgsMax"`
}

// hostEntry is a shared-context value gorender puts in before a render
// (pull mode): kind "value" (a string, number or boolean), "set" (a Set of
// strings) or "func" (a function whose calls come back as call frames).
type hostEntry struct {
	Key   string `json:"key"`
	Kind  string `json:"kind"`
	Value any    `json:"value,omitempty"`
}

type frame struct {
	h    header
	body []byte
	// headerBytes is the length of the header on the wire (0 for a stream
	// chunk's pieces after its first): what gorender holds of it decoded.
	headerBytes int
	// dropped is the size of a result (a done frame of kind body) longer
	// than the engine's bound, read and thrown away: body is empty.
	dropped int64
}

// Bounds of what an executor may send, so that gorender allocates nothing
// an executor chose the size of:
//   - a header is small (maxFrameHeader): the largest the executor sends
//     is a host function call's, its arguments at most maxCallArgs bytes
//     as JSON (the executor does not send a longer call; the one host
//     function, propRequestEmitter, ignores a name past 256 bytes), plus
//     a margin for the rest (t, r, k: a few dozen bytes);
//   - a result (done, kind body) is at most the configured bound
//     (RENDERER_MAX_RESULT_SIZE; unset: maxFrameBody): one longer is read
//     and dropped as it arrives, and answered as too large;
//   - a stream chunk of any size is read in pieces of at most chunkPiece,
//     each handed to its render as a chunk of its own (the bytes on the
//     wire are the same);
//   - an error (maxErrorBody): env.js clips a message and a stack to
//     2 × jsvm.MaxErrorTextLength characters each, a few hundred KB as JSON.
//
// Anything past them is a protocol error, not an allocation.
const (
	maxCallArgs    = 64 << 10
	maxFrameHeader = maxCallArgs + 4<<10
	maxFrameBody   = 1 << 30
	maxErrorBody   = 4 << 20
	chunkPiece     = 256 << 10
)

// frameJSON encodes and decodes frame headers and error bodies: sonic, the
// project's JSON library, in encoding/json's behaviour (valid UTF-8, strings
// copied out of the reader's buffer), at a third of encoding/json's cost
// per render frame and done frame (about 0.6 against 1.5 µs).
var frameJSON = sonic.ConfigStd

// errProtocol marks a frame the executor should never have sent.
var errProtocol = errors.New("executor protocol error")

// frameHead encodes the lengths and the header of a frame whose body is
// bodyLen bytes long; the body follows it on the pipe.
func frameHead(h *header, bodyLen int) ([]byte, error) {
	hb, err := frameJSON.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode %s frame: %w", h.T, err)
	}
	buf := append(make([]byte, 8, 8+len(hb)), hb...)
	binary.LittleEndian.PutUint32(buf[0:4], uint32(len(hb)))
	binary.LittleEndian.PutUint32(buf[4:8], uint32(bodyLen))
	return buf, nil
}

// frameReader reads an executor's frames off its answer pipe.
type frameReader struct {
	r *bufio.Reader
	// maxResult bounds a result's bytes (0: maxFrameBody).
	maxResult int64
	// pieceOf and pieceLeft are the render and the bytes left of a stream
	// chunk being read in pieces.
	pieceOf   uint64
	pieceLeft uint32
}

// next reads one frame. io.EOF means the executor closed its end between
// frames; anything malformed is errProtocol.
func (fr *frameReader) next() (frame, error) {
	r := fr.r
	if fr.pieceLeft > 0 {
		return fr.piece(frame{h: header{T: "chunk", R: fr.pieceOf}})
	}
	pre, err := r.Peek(8)
	if err != nil {
		if errors.Is(err, io.EOF) && len(pre) > 0 {
			return frame{}, fmt.Errorf("%w: the stream ended inside a frame's lengths", errProtocol)
		}
		return frame{}, err
	}
	hlen := binary.LittleEndian.Uint32(pre[0:4])
	blen := binary.LittleEndian.Uint32(pre[4:8])
	_, _ = r.Discard(8) // peeked: there
	if hlen == 0 || hlen > maxFrameHeader {
		return frame{}, fmt.Errorf("%w: header of %d bytes", errProtocol, hlen)
	}
	// A header that fits the reader's buffer is read in place (decoding
	// copies what it keeps).
	var hb []byte
	inPlace := int(hlen) <= r.Size()
	if inPlace {
		hb, err = r.Peek(int(hlen))
	} else {
		hb = make([]byte, hlen)
		_, err = io.ReadFull(r, hb)
	}
	if err != nil {
		return frame{}, fmt.Errorf("%w: the stream ended inside a frame's header: %v", errProtocol, err)
	}
	var h header // not f's: f stays off the heap
	if err := frameJSON.Unmarshal(hb, &h); err != nil {
		return frame{}, fmt.Errorf("%w: header %.200q: %v", errProtocol, hb, err)
	}
	f := frame{h: h, headerBytes: int(hlen)}
	if inPlace {
		_, _ = r.Discard(int(hlen)) // peeked: there
	}
	if f.h.T == "" {
		return frame{}, fmt.Errorf("%w: header %.200q has no type", errProtocol, hb)
	}
	if blen == 0 {
		return f, nil
	}
	switch {
	case f.h.T == "chunk":
		fr.pieceOf, fr.pieceLeft = f.h.R, blen
		return fr.piece(f)
	case f.h.T == "done" && f.h.Kind == "body":
		limit := int64(maxFrameBody)
		if fr.maxResult > 0 {
			limit = fr.maxResult
		}
		if int64(blen) > limit {
			if _, err := r.Discard(int(blen)); err != nil {
				return frame{}, fmt.Errorf("%w: the stream ended inside a %s frame's body: %v", errProtocol, f.h.T, err)
			}
			f.dropped = int64(blen)
			return f, nil
		}
	case blen > maxErrorBody:
		return frame{}, fmt.Errorf("%w: %s frame with a body of %d bytes", errProtocol, f.h.T, blen)
	}
	f.body = make([]byte, blen)
	if _, err := io.ReadFull(r, f.body); err != nil {
		return frame{}, fmt.Errorf("%w: the stream ended inside a %s frame's body: %v", errProtocol, f.h.T, err)
	}
	return f, nil
}

// piece reads the next piece of the stream chunk in progress into f.
func (fr *frameReader) piece(f frame) (frame, error) {
	n := min(fr.pieceLeft, chunkPiece)
	f.body = make([]byte, n)
	if _, err := io.ReadFull(fr.r, f.body); err != nil {
		return frame{}, fmt.Errorf("%w: the stream ended inside a chunk frame's body: %v", errProtocol, err)
	}
	fr.pieceLeft -= n
	return f, nil
}

// errorBody is an error's message and stack, as the executor sends them in
// the body of a loadFailed, updateFailed or done (kind js) frame.
type errorBody struct {
	Message string `json:"message"`
	Stack   string `json:"stack"`
}

// errorOf reads the error a frame carries; a body that is not one is a
// protocol error.
func errorOf(f frame) (errorBody, error) {
	var e errorBody
	if err := frameJSON.Unmarshal(f.body, &e); err != nil {
		return e, fmt.Errorf("%w: %s frame's error body: %v", errProtocol, f.h.T, err)
	}
	return e, nil
}
