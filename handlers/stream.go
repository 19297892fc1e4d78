package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gorender/gorender/tracing"
)

// errAnswerClosed is a write after the handler finished with its answer.
var errAnswerClosed = errors.New("the answer is closed")

// httpSink writes a streamed answer (PROTOCOL.md §5): 200 and the render
// headers at Start, then every chunk flushed as it comes: DATA frames on
// h2c, chunks on HTTP/1.1. It is closed when the handler is done, so that
// a render still running (a quarantined runtime) cannot touch the answer.
type httpSink struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	onStart  func(http.Header)
	out      io.Writer // the bytes' way out: the sink itself, or a frameWriter over it
	mu       sync.Mutex
	started  bool
	closed   bool
	lastSent time.Time

	// The span of the stream, from Start to endSpan, under ctx's (the
	// render's); tracer is nil when tracing is off.
	ctx           context.Context
	tracer        trace.Tracer
	span          trace.Span
	bytes, chunks int
}

func newHTTPSink(ctx context.Context, tracer trace.Tracer, w http.ResponseWriter, onStart func(http.Header)) *httpSink {
	s := &httpSink{w: w, rc: http.NewResponseController(w), onStart: onStart, ctx: ctx, tracer: tracer}
	s.out = sinkWriter{s}
	return s
}

// Start sends the status and headers.
func (s *httpSink) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errAnswerClosed
	}
	h := s.w.Header()
	h.Set("Content-Type", contentTypeText)
	h.Set("Cache-Control", cacheRender)
	h.Set("X-Content-Type-Options", "nosniff")
	if s.onStart != nil {
		s.onStart(h)
	}
	s.w.WriteHeader(http.StatusOK)
	s.started = true
	_, s.span = tracing.Start(s.ctx, s.tracer, "stream")
	return s.rc.Flush()
}

// Write sends one chunk of the bundle's output.
func (s *httpSink) Write(p []byte) error {
	_, err := s.out.Write(p)
	return err
}

// send writes and flushes bytes on the wire.
func (s *httpSink) send(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errAnswerClosed
	}
	if _, err := s.w.Write(p); err != nil {
		return fmt.Errorf("write stream chunk: %w", err)
	}
	if err := s.rc.Flush(); err != nil {
		return fmt.Errorf("flush stream chunk: %w", err)
	}
	s.lastSent = time.Now()
	s.bytes += len(p)
	s.chunks++
	return nil
}

// endSpan ends the stream's span, if it started, with how the stream
// ended (the words of gorender_streams_ended_total) and what it sent.
func (s *httpSink) endSpan(outcome string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.span == nil {
		return
	}
	tracing.SetOutcome(s.span, outcome)
	if s.span.IsRecording() {
		s.span.SetAttributes(
			attribute.Int("gorender.stream.size", s.bytes),
			attribute.Int("gorender.stream.chunks", s.chunks),
		)
	}
	s.span.End()
	if span := trace.SpanFromContext(s.ctx); span.IsRecording() {
		span.SetAttributes(tracing.ResponseBytes.Int(s.bytes))
	}
}

// close ends the sink's use of the answer and reports whether it started.
func (s *httpSink) close() (started bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.started
}

// clientStalled reports whether a write of the answer failed because the
// client took nothing for the write timeout (the server's writer says so).
func (s *httpSink) clientStalled() bool {
	w, ok := s.w.(interface{ WriteStalled() bool })
	return ok && w.WriteStalled()
}

// sinkWriter is the sink's raw way out, as an io.Writer.
type sinkWriter struct{ s *httpSink }

func (w sinkWriter) Write(p []byte) (int, error) {
	if err := w.s.send(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// serverTiming is the Server-Timing header asked for by
// rscStreamObservability: from the start of the bundle lookup to the
// moment the stream exists.
func serverTiming(since time.Time) func(http.Header) {
	return func(h http.Header) {
		ms := float64(time.Since(since).Microseconds()) / 1000
		h.Set("Server-Timing", fmt.Sprintf(`ror_renderer_prepare;dur=%.3f;desc="bundle lookup, runtime wait and render until the stream existed"`, ms))
	}
}

// abortStream ends a started answer abruptly (RST_STREAM on h2, a closed
// connection on HTTP/1.1): a failure after the answer started is never
// dressed up as a success.
func abortStream() {
	panic(http.ErrAbortHandler)
}
