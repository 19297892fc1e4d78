package handlers

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/tracing"
)

// MediaTypeNDJSON is the body of an incremental render.
const MediaTypeNDJSON = "application/x-ndjson"

// Default windows of the incremental route (PROTOCOL.md §8).
const (
	// DefaultLineTimeout is the default of RENDERER_INCREMENTAL_LINE_TIMEOUT.
	DefaultLineTimeout = 20 * time.Second
	// DefaultPullIdle is the default of RENDERER_PULL_MODE_IDLE_TIMEOUT.
	DefaultPullIdle = 300 * time.Second
)

// firstChunk is line 1 of an incremental render, after its prechecks.
type firstChunk struct {
	RenderRequest
	OnClose   *jsvm.Update
	Pull      bool
	PushProps []string
}

// IncrementalRender serves POST /bundles/{bundleId}/incremental-render/{digest}
// (PROTOCOL.md §8): NDJSON in, a stream out, full duplex. Line 1 is the
// render; each later line is an update chunk evaluated while the answer
// streams; request EOF runs onRequestClosedUpdateChunk.
//
// Its spans: the NDJSON stream (ror.incremental.stream) holds the render of
// line 1 (ror.ssr.request) and the update chunks (process_chunk).
func (h *Handlers) IncrementalRender(w http.ResponseWriter, r *http.Request) {
	started := time.Now()
	entry := chi.URLParam(r, "bundleId")
	// The bundle's id is set on the spans once line 1 is checked: they
	// start before the request is authenticated.
	streamCtx, stream := tracing.Start(r.Context(), h.Tracer, tracing.SpanIncrementalStream)
	defer stream.End()
	ctx, span := tracing.Start(streamCtx, h.Tracer, tracing.SpanSSRRequest)
	defer span.End()
	if h.Tracer != nil { // else ctx is r's: no copy
		r = r.WithContext(ctx)
	}
	if mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mediaType != MediaTypeNDJSON {
		h.answer(w, r, errorReply(&HTTPError{Status: http.StatusUnsupportedMediaType,
			Body: fmt.Sprintf("Unsupported Content-Type %q: the incremental render route takes %s.", echo(r.Header.Get("Content-Type")), MediaTypeNDJSON)}))
		return
	}
	body := h.guardBody(w, r)
	defer body.release()
	limits := h.BodyLimits.withDefaults()
	lines := newLineReader(http.MaxBytesReader(w, r.Body, limits.MaxBodyBytes), limits.MaxFieldBytes)
	var pushed int
	// Runs once the update reader is done (stopReading, deferred later).
	defer func() {
		if stream.IsRecording() {
			stream.SetAttributes(tracing.BytesTotal.Int64(lines.n), attribute.Int("gorender.updates", pushed))
		}
	}()
	first, herr := h.firstChunk(ctx, lines, body, entry)
	if herr != nil {
		h.observeRender(ctx, "rejected", started)
		h.answer(w, r, errorReply(herr))
		return
	}
	setBundle(stream, entry)
	setBundle(span, entry)
	lookup := time.Now()
	if rp, missing := h.missingBundles(ctx, entry, first.DependencyBundleIDs, started); missing {
		h.answer(w, r, rp)
		return
	}
	// The windows between update lines are the route's own (readUpdates).
	body.takeDeadlines()
	rc := http.NewResponseController(w)
	if r.ProtoMajor == 1 {
		// Keep reading update lines while the answer streams.
		if err := rc.EnableFullDuplex(); err != nil {
			h.Logger.WarnContext(ctx, "enable full duplex", "err", err)
		}
	}

	var onStart func(http.Header)
	if first.RSCStreamObservability {
		onStart = serverTiming(lookup)
	}
	h.describeRender(ctx, &first.RenderRequest)
	sink := newHTTPSink(ctx, h.Tracer, w, onStart)
	idle, lineTimeout := h.StreamIdle, cmp.Or(h.LineTimeout, DefaultLineTimeout)
	req := &jsvm.Request{Sink: sink, Shared: jsvm.NewSharedContext(), Updates: jsvm.NewUpdates()}
	var frames *frameWriter
	if first.Pull {
		pullIdle := cmp.Or(h.PullIdle, DefaultPullIdle)
		idle, lineTimeout = pullIdle, pullIdle
		frames = newFrameWriter(sinkWriter{sink})
		sink.out = frames
		req.Shared.SetHost("pullEnabled", true)
		req.Shared.SetHost("pushProps", jsvm.HostSet(first.PushProps))
		req.Shared.SetHost("propRequestEmitter", jsvm.HostFunc(func(args ...string) {
			if len(args) == 0 || len(args[0]) > maxPropNameLength {
				return
			}
			_ = frames.Inject(propRequestFrame(args[0]))
		}))
	}
	req.StreamIdle = idle
	chunks := newChunkSpans(streamCtx, h.Tracer)
	defer chunks.end() // after the reader stopped (stopReading, deferred later)
	// The message is not logged: a chunk's error is the bundle's text,
	// which may quote props.
	req.Updates.Failed = func(up jsvm.Update, _ string) {
		chunks.told(true)
		h.Logger.WarnContext(ctx, "update chunk failed; skipped", "bundle", up.BundleID)
	}
	req.Updates.Applied = func(jsvm.Update) { chunks.told(false) }

	renderCtx, stopRender := context.WithCancelCause(ctx)
	defer stopRender(nil)
	set := map[string]bool{entry: true}
	for _, id := range first.DependencyBundleIDs {
		set[id] = true
	}
	var (
		reading sync.WaitGroup
		state   updateReading
	)
	reading.Go(func() {
		pushed = h.readUpdates(streamCtx, rc, lines, lineTimeout, &state, set, first.OnClose, req.Updates, chunks, stopRender)
	})
	// Unblock and wait for the reader: the controller is not ours after return.
	stopReading := sync.OnceFunc(func() { stopUpdates(w, r, rc, &state, &reading) })
	defer stopReading()

	result, err := h.Renderer.Render(renderCtx, entry, first.DependencyBundleIDs, first.RenderingRequest, req)
	h.reportFailure(r, entry, &first.RenderRequest, err)
	if err == nil && frames != nil && sink.started {
		err = frames.Inject(renderCompleteFrame)
	}
	if sink.close() {
		h.streamEnded(ctx, r, entry, started, err, sink)
		return
	}
	rp, ok := h.prepareResult(ctx, r, entry, started, result, err)
	if !ok {
		return
	}
	if err != nil {
		stopReading()
	}
	h.answer(w, r, rp)
}

// firstChunk reads and checks line 1, in the span of body decoding: JSON,
// prechecks (on its head, before it is decoded), shape, ids.
func (h *Handlers) firstChunk(ctx context.Context, lines *lineReader, body *guardedBody, entry string) (first *firstChunk, herr *HTTPError) {
	_, span := tracing.Start(ctx, h.Tracer, "decode body")
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attribute.String("gorender.body.media_type", MediaTypeNDJSON))
			if herr != nil {
				span.SetAttributes(attribute.Int("gorender.answer.status", herr.Status))
			}
		}
		span.End()
	}()
	line, err := lines.next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, badRequest("Invalid first incremental render request chunk: the body is empty.")
		}
		return nil, lineError(err, lines.max)
	}
	notObject := badRequest("Invalid JSON chunk: line 1 of the incremental render request is not a JSON object.")
	head, herr := jsonHead(line)
	if herr != nil {
		return nil, notObject
	}
	if herr := h.precheck(body, head, true); herr != nil {
		return nil, herr
	}
	fields, herr := DecodeJSONObject(line)
	if herr != nil {
		return nil, notObject
	}
	h.noteGemVersion(ctx, fields)
	req, herr := ParseRenderRequest(fields)
	if herr != nil {
		return nil, badRequest("Invalid first incremental render request chunk: %s", herr.Body)
	}
	first = &firstChunk{RenderRequest: *req}
	if first.Pull, herr = fields.Bool("pullEnabled"); herr != nil {
		return nil, badRequest("Invalid first incremental render request chunk: %s", herr.Body)
	}
	if first.PushProps, herr = fields.Strings("pushProps"); herr != nil {
		return nil, badRequest("Invalid first incremental render request chunk: %s", herr.Body)
	}
	if v, ok := fields.Lookup("onRequestClosedUpdateChunk"); ok && v != nil {
		up, ok := updateChunk(v)
		if !ok {
			return nil, badRequest(`Invalid first incremental render request chunk: "onRequestClosedUpdateChunk" must be {"bundleTimestamp": string, "updateChunk": string}.`)
		}
		first.OnClose = up
	}
	if first.OnClose != nil && first.OnClose.BundleID != entry && !slices.Contains(first.DependencyBundleIDs, first.OnClose.BundleID) {
		return nil, badRequest("Invalid first incremental render request chunk: onRequestClosedUpdateChunk names bundle %q, which is not in the request's bundle set.", echo(first.OnClose.BundleID))
	}
	if herr := validIDs(entry, first.DependencyBundleIDs); herr != nil {
		return nil, herr
	}
	return first, nil
}

// updateChunk reads {"bundleTimestamp": id, "updateChunk": js}.
func updateChunk(v any) (*jsvm.Update, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	id, ok1 := m["bundleTimestamp"].(string)
	code, ok2 := m["updateChunk"].(string)
	if !ok1 || !ok2 || id == "" {
		return nil, false
	}
	return &jsvm.Update{BundleID: id, Code: code}, true
}

// readUpdates feeds update lines to the render until EOF, then the close
// chunk, and returns how many it pushed. A line that is not a valid chunk
// is logged and skipped; a body that stalls or breaks a limit stops the
// render (the answer has started, so it ends abruptly).
func (h *Handlers) readUpdates(ctx context.Context, rc *http.ResponseController, lines *lineReader, timeout time.Duration, state *updateReading,
	set map[string]bool, onClose *jsvm.Update, updates *jsvm.Updates, chunks *chunkSpans, stop context.CancelCauseFunc) (pushed int) {
	for n := 2; ; n++ {
		if !state.arm(rc, timeout) {
			return
		}
		line, err := lines.next()
		switch {
		case errors.Is(err, io.EOF):
			if state.atBodyEnd != nil {
				state.atBodyEnd()
			}
			state.ended(rc)
			if onClose != nil {
				chunks.begin(*onClose, len(onClose.Code))
			}
			updates.Close(onClose)
			return
		case errors.Is(err, os.ErrDeadlineExceeded):
			stop(fmt.Errorf("no incremental render line for %s", timeout))
			return
		case err != nil:
			stop(fmt.Errorf("read incremental render line %d: %w", n, err))
			return
		}
		var up *jsvm.Update
		ok := false
		if fields, herr := DecodeJSONObject(line); herr == nil {
			id, _, err1 := fields.CheckedString("bundleTimestamp")
			code, _, err2 := fields.CheckedString("updateChunk")
			up, ok = &jsvm.Update{BundleID: id, Code: code}, err1 == nil && err2 == nil && id != ""
		}
		switch {
		case !ok:
			chunks.rejected("", len(line))
			h.Logger.WarnContext(ctx, "invalid incremental render line; skipped", "line", n)
		case !set[up.BundleID]:
			chunks.rejected(up.BundleID, len(line))
			h.Logger.WarnContext(ctx, "update chunk for a bundle outside the request's set; skipped", "line", n, "bundle", up.BundleID)
		default:
			chunks.begin(*up, len(line))
			if err := updates.Push(*up); err != nil {
				return pushed
			}
			pushed++
		}
	}
}

// updateReading is what the update reader and the handler share about the
// connection's read deadline, which both set: the reader its line window,
// the handler "now" to unblock a reader it stops.
type updateReading struct {
	mu          sync.Mutex
	stopped     bool // the handler stopped reading
	atEOF       bool // the reader met the body's end
	interrupted bool // the handler stopped the reader before it met the body's end

	// atBodyEnd, for tests only, runs when the reader met the body's end,
	// before it records it.
	atBodyEnd func()
}

// stopUpdates stops the update reader and waits for it to return. A reader
// that had not recorded the body's end leaves an HTTP/1.1 connection that
// must not serve another request, whatever the order of the stop and the
// body's last bytes: its read, cut by the deadline, failed and net/http
// cancelled the connection's context; or the body's rest is still on the
// wire (net/http's drain after the handler fails on the same deadline);
// or the body's end was read in the same instant, net/http began its read
// ahead for the next request, and the deadline failed that read, which
// cancels the connection's context all the same. A request that follows
// on a connection whose context is cancelled starts cancelled, and gets a
// 200 with no body. So that connection closes after this answer.
func stopUpdates(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, state *updateReading, reading *sync.WaitGroup) {
	interrupted := state.stop(rc)
	reading.Wait()
	if interrupted && r.ProtoMajor == 1 {
		closeAfterAnswer(w)
	}
}

// closeAfterAnswer makes net/http close this HTTP/1.1 connection once the
// answer is sent, also when its header, which could have said "Connection:
// close", is already out. net/http has one documented way for that: an
// http.MaxBytesReader that goes over its limit "tells the ResponseWriter
// to close the connection after the limit has been reached" (it then also
// sends Connection: close if the header is not out yet). The writer it is
// given must be net/http's own, under the middleware's wrappers.
func closeAfterAnswer(w http.ResponseWriter) {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	_, _ = http.MaxBytesReader(w, io.NopCloser(strings.NewReader("x")), 0).Read(make([]byte, 1))
}

// arm sets the window for the next line, unless the handler stopped
// reading: a deadline set after the handler's (now) would replace it, and
// an aborted HTTP/1.1 answer would stay open while net/http drains the
// body until then.
func (s *updateReading) arm(rc *http.ResponseController, timeout time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	_ = rc.SetReadDeadline(time.Now().Add(timeout))
	return true
}

// ended records the body's end. From then on the connection's reads are
// net/http's: over HTTP/1.1 it reads ahead for the next request (its
// background read, which clears the deadline as it starts).
func (s *updateReading) ended(rc *http.ResponseController) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.atEOF = true
	_ = rc.SetReadDeadline(time.Time{})
}

// stop makes a reader still waiting for a line return, and reports
// whether it had to interrupt it (stopUpdates). Once the body ended it
// leaves the deadline alone: net/http's read ahead would fail at "now",
// which cancels the connection's context, and every later request on that
// HTTP/1.1 connection would start cancelled (answered 200 with no body).
func (s *updateReading) stop(rc *http.ResponseController) (interrupted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.interrupted
	}
	s.stopped = true
	if !s.atEOF {
		s.interrupted = true
		_ = rc.SetReadDeadline(time.Now())
	}
	return s.interrupted
}

// lineReader reads NDJSON lines of at most max bytes.
type lineReader struct {
	r   *bufio.Reader
	max int64
	n   int64 // bytes read so far, line endings and blank lines included
}

func newLineReader(r io.Reader, max int64) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 16<<10), max: max}
}

var errLineTooLong = errors.New("NDJSON line over the limit")

// next returns the next non-empty line without its line ending. A line
// longer than the reader's buffer is gathered in chunks (readAll), so that
// its memory follows the bytes received.
func (l *lineReader) next() ([]byte, error) {
	for {
		var line []byte
		var long chunks
		for {
			part, err := l.r.ReadSlice('\n')
			l.n += int64(len(part))
			if errors.Is(err, bufio.ErrBufferFull) || long.n > 0 {
				long.write(part)
			} else {
				line = bytes.Clone(part)
			}
			if int64(len(line)+long.n) > l.max+2 {
				return nil, errLineTooLong
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if long.n > 0 {
				line = long.bytes()
			}
			if err == nil {
				break
			}
			if errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0 {
				return bytes.TrimRight(line, "\r\n"), nil
			}
			return nil, err
		}
		if line = bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(line)) > 0 {
			if int64(len(line)) > l.max {
				return nil, errLineTooLong
			}
			return line, nil
		}
	}
}

// lineError is the answer to a line that could not be read before the
// answer started.
func lineError(err error, max int64) *HTTPError {
	var tooLarge *http.MaxBytesError
	var refused *budgetRefusal
	var timedOut *bodyTimeout
	switch {
	case errors.As(err, &refused):
		return refused.answer()
	case errors.As(err, &timedOut):
		return timedOut.answer()
	case errors.Is(err, errLineTooLong):
		return &HTTPError{Status: http.StatusRequestEntityTooLarge, Body: fmt.Sprintf("An incremental render line is larger than the limit of %d bytes.", max)}
	case errors.As(err, &tooLarge):
		return bodyTooLarge(tooLarge.Limit, err)
	default:
		return &HTTPError{Status: http.StatusBadRequest, Body: "Could not read the incremental render request.", Cause: err}
	}
}
