package inproc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/gorender/gorender/jsvm"
)

// A stream crosses runtimes (runOnOtherBundle, docs/compatibility.md
// "Streams across bundles"): the producer's bridge pumps it (env.js pump) into the host
// functions crossChunk, crossEnd and crossError, which queue its chunks
// here; the consumer's loop runs crossFlow, whose JavaScript takes them
// (crossTake) into the stream the caller received (env.js incoming) as fast
// as that stream wants them. The producer's loop is linked to the
// consumer's (eventloop.Link), so the producer's timers keep running while
// the consumer's render runs, on the same goroutine. Only bytes and text
// cross, as every value does.

// crossQueueMax bounds the bytes queued between two runtimes: past it the
// producer's stream is paused until the consumer's stream takes them (plus
// the chunk that passed it). A fixed 64 KiB, Node 22's default
// highWaterMark of a byte stream: the consumer's own stream buffers as
// much again before its reader reads, and the JSON of an RSC payload rarely
// comes in larger chunks, so a larger queue would only hold more of a
// stream nobody reads.
const crossQueueMax = 64 << 10

// crossQueueChunks bounds the chunks queued between two runtimes the same
// way, whatever their size: empty strings, which an object-mode stream may
// push without end, weigh nothing in bytes.
const crossQueueChunks = 1024

// crossIDs numbers the crossing streams of the process: a producer and its
// consumer name a stream by one number.
var crossIDs atomic.Int64

// crossStream is one stream crossing from a producer runtime to a consumer
// runtime. Only the request's goroutine touches it.
type crossStream struct {
	id     int64
	items  []crossItem
	queued int  // bytes in items
	paused bool // the producer paused (crossChunk answered false)
	done   bool // the producer's end or error is queued
	closed bool // the consumer is gone: cancelled, or its render ended
	posted bool // a crossFlow is posted to the consumer's loop

	flow   func()              // posts the consumer's crossFlow
	resume func()              // posts the producer's crossResume
	abort  func(reason string) // cancels the producer's stream now
}

// crossItem is a chunk, or the stream's end (end) or error (end, failed:
// message).
type crossItem struct {
	data   []byte
	text   bool
	end    bool
	failed *string
}

// put queues what the producer's stream emitted and asks the consumer to
// take it; it reports whether the producer may go on (false pauses it).
func (cs *crossStream) put(it crossItem) bool {
	if cs.closed || cs.done {
		return false
	}
	cs.items = append(cs.items, it)
	cs.queued += len(it.data)
	cs.done = it.end
	cs.flow()
	if !cs.done && (cs.queued >= crossQueueMax || len(cs.items) >= crossQueueChunks) {
		cs.paused = true
		return false
	}
	return true
}

// take is the next item for the consumer, if any is queued; taking the
// queue below its bound resumes a paused producer.
func (cs *crossStream) take() (crossItem, bool) {
	if len(cs.items) == 0 {
		return crossItem{}, false
	}
	it := cs.items[0]
	cs.items[0] = crossItem{}
	cs.items = cs.items[1:]
	cs.queued -= len(it.data)
	if cs.paused && cs.queued < crossQueueMax && len(cs.items) < crossQueueChunks {
		cs.paused = false
		cs.resume()
	}
	return it, true
}

// crossChunk, crossEnd and crossError are the producer's host functions.
func (h *Host) crossPut(id int64, it crossItem) bool {
	cs := h.crossOut[id]
	if cs == nil {
		return false
	}
	if it.end {
		delete(h.crossOut, id)
	}
	return cs.put(it)
}

// crossTake answers the consumer's crossTake: a chunk (text or bytes),
// null when none is queued yet, ["end"] or ["error", message] when the
// producer's stream ended.
func (h *Host) crossTake(id int64) Reply {
	cs := h.crossIn[id]
	if cs == nil {
		return Array("error", "the stream is no longer available")
	}
	it, ok := cs.take()
	switch {
	case !ok:
		return Null()
	case it.failed != nil:
		delete(h.crossIn, id)
		return Array("error", *it.failed)
	case it.end:
		delete(h.crossIn, id)
		return Array("end")
	case it.text:
		return String(string(it.data))
	}
	return Bytes(it.data)
}

// crossCancel: the consumer's stream was cancelled or destroyed: the
// producer's stream is cancelled, and nothing more is queued.
func (h *Host) crossCancel(id int64) {
	cs := h.crossIn[id]
	if cs == nil {
		return
	}
	delete(h.crossIn, id)
	cs.close("runOnOtherBundle: the caller cancelled the stream")
}

// close drops what is queued and cancels the producer's stream unless it
// ended.
func (cs *crossStream) close(reason string) {
	if cs.closed {
		return
	}
	cs.closed = true
	cs.items, cs.queued = nil, 0
	if !cs.done {
		cs.abort(reason)
	}
}

// takeStream hands value, a stream result of other, over to this runtime:
// other pumps it into a new crossing stream, other's loop is linked to
// this runtime's, and the description tells the bridge to make the stream
// the caller receives.
func (r *Runtime[V]) takeStream(other *Runtime[V], value V) (string, error) {
	if !r.host.opts.SupportModules {
		return "", errors.New("a stream result crosses bundles only in the Node-compatible environment (RENDERER_SUPPORT_MODULES)")
	}
	if other.active > 1 || other.calling > 0 {
		// other's own code waits on this call (the render's entry, a
		// bundle called before, or other's own code that called out: a
		// timer or immediate of it, a stream event, whatever of it made a
		// runOnOtherBundle call still in progress): other's loop cannot be
		// driven by one it waits on. Driven from within its own callback,
		// other's next timers ran inside it and its stream's events never
		// came (the caller's promise never settled).
		return "", errors.New("a stream cannot cross from a bundle that is itself waiting on this call (a recursion through bundles)")
	}
	if len(r.host.crossIn) >= jsvm.MaxCrossingStreams {
		return "", errors.New(strings.TrimPrefix(jsvm.CrossingStreamsText, "runOnOtherBundle: "))
	}
	if err := r.link(other); err != nil {
		return "", err
	}
	id := crossIDs.Add(1)
	cs := &crossStream{id: id}
	loop := r.ensureLoop()
	cs.flow = func() {
		if cs.posted || cs.closed {
			return
		}
		cs.posted = true
		loop.Post(func() error {
			cs.posted = false
			if cs.closed || r.broken {
				return nil
			}
			return r.callDrop(OpCrossFlow, id)
		})
	}
	cs.resume = func() {
		loop.Post(func() error {
			if cs.closed || other.broken {
				return nil
			}
			return other.callDrop(OpCrossResume, id)
		})
	}
	cs.abort = func(reason string) {
		delete(other.host.crossOut, id)
		if !other.broken {
			_ = other.callDrop(OpCrossAbort, id, reason)
		}
	}
	if r.host.crossIn == nil {
		r.host.crossIn = map[int64]*crossStream{}
	}
	if other.host.crossOut == nil {
		other.host.crossOut = map[int64]*crossStream{}
	}
	r.host.crossIn[id] = cs
	other.host.crossOut[id] = cs
	kind, err := other.callString(OpCrossPump, value, id)
	if err != nil {
		delete(r.host.crossIn, id)
		delete(other.host.crossOut, id)
		return "", err
	}
	return fmt.Sprintf(`{"st":%d,"k":%q}`, id, kind), nil
}

// link makes this runtime's loop drive other's until this runtime's part
// of the render ends (closeCrossings): other's timers keep its stream going.
// When another runtime's loop drives other's already and not through this
// one's, that runtime does not run now (the request's runtimes run on one
// goroutine, and this one's code runs): this one takes other over, so that
// other's streams flow while this one waits on its own promise in its own
// loop (a second reader of the third bundle's streams), and hands it back
// when its part ends.
func (r *Runtime[V]) link(other *Runtime[V]) error {
	for d := other.feeds; d != nil; d = d.feeds {
		if d == r {
			return nil // already driven through this runtime's loop
		}
	}
	var back *lentRuntime[V]
	if from := other.feeds; from != nil {
		if l, ok := from.release(other); ok {
			back = &lentRuntime[V]{owner: from, entry: l}
		}
	}
	if !r.adopt(linkedRuntime[V]{rt: other, back: back}) {
		if back != nil {
			back.owner.adopt(back.entry)
		}
		return fmt.Errorf("bundle %q feeds this one's caller: a stream cannot cross back to it", other.prg.Name())
	}
	return nil
}

// adopt links l.rt's loop under this runtime's, to drive it.
func (r *Runtime[V]) adopt(l linkedRuntime[V]) bool {
	unlink, ok := r.ensureLoop().Link(l.rt.ensureLoop(), l.rt.takeUncaught)
	if !ok {
		return false
	}
	l.unlink = unlink
	l.rt.feeds = r
	r.linkMu.Lock()
	r.linked = append(r.linked, l)
	r.linkMu.Unlock()
	return true
}

// release stops this runtime's loop driving other's and returns its entry.
func (r *Runtime[V]) release(other *Runtime[V]) (linkedRuntime[V], bool) {
	r.linkMu.Lock()
	defer r.linkMu.Unlock()
	for i, l := range r.linked {
		if l.rt == other {
			r.linked = append(r.linked[:i:i], r.linked[i+1:]...)
			l.unlink()
			other.feeds = nil
			return l, true
		}
	}
	return linkedRuntime[V]{}, false
}

// closeCrossings ends what crossed into this runtime's render: the streams
// it received are cancelled where they still run, and the runtimes that
// fed them finish their part of the render (their timers cancelled), or go
// back to the runtime this one took them over from (link) while that
// one's part goes on. A stream it still produces for another runtime fails
// there.
func (r *Runtime[V]) closeCrossings() {
	for id, cs := range r.host.crossIn {
		delete(r.host.crossIn, id)
		cs.close("runOnOtherBundle: the caller's render ended")
	}
	for id, cs := range r.host.crossOut {
		delete(r.host.crossOut, id)
		ended := "the other bundle's render ended"
		cs.put(crossItem{end: true, failed: &ended})
		cs.abort(ended)
	}
	// Finishing a linked runtime may hand one back to this one: until none
	// is left.
	for {
		r.linkMu.Lock()
		linked := r.linked
		r.linked = nil
		r.linkMu.Unlock()
		if len(linked) == 0 {
			return
		}
		for _, l := range linked {
			l.unlink()
			l.rt.feeds = nil
			if b := l.back; b != nil && !b.owner.broken && b.owner.host.req != nil && b.owner.host.req == r.host.req && b.owner.adopt(b.entry) {
				continue
			}
			l.rt.finish()
		}
	}
}

// interrupt stops the JavaScript of this runtime and of those its loop
// drives: when a render's context ends, any of them may be running.
func (r *Runtime[V]) interrupt() {
	r.vm.Interrupt()
	r.linkMu.Lock()
	defer r.linkMu.Unlock()
	for _, l := range r.linked {
		l.rt.interrupt()
	}
}

// linkedRuntime is a runtime whose loop this one's drives; back, when this
// one took it over from another (link), is where it goes back to.
type linkedRuntime[V any] struct {
	rt     *Runtime[V]
	unlink func()
	back   *lentRuntime[V]
}

// lentRuntime is the entry of the runtime that drove a linked runtime
// before.
type lentRuntime[V any] struct {
	owner *Runtime[V]
	entry linkedRuntime[V]
}

// textChunk is a string chunk as the host received it.
func textChunk(s string) crossItem { return crossItem{data: []byte(s), text: true} }

// bytesChunk is a byte chunk, copied: the engine's bytes are valid during
// the call only.
func bytesChunk(b []byte) crossItem { return crossItem{data: bytes.Clone(b)} }
