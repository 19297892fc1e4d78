package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/gorender/gorender/handlers"
	"github.com/gorender/gorender/metrics"
	"github.com/gorender/gorender/tracing"
)

// statusRecorder remembers the status a handler wrote and counts the body
// bytes written. It forwards Flush and Unwrap so http.ResponseController
// keeps working through it.
type statusRecorder struct {
	http.ResponseWriter
	status  int
	wrote   bool
	written atomic.Int64
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wrote {
		s.status, s.wrote = http.StatusOK, true
	}
	n, err := s.ResponseWriter.Write(b)
	s.written.Add(int64(n))
	return n, err
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// countingBody counts the request body bytes a handler reads. Reads may
// come from another goroutine than the handler's (full-duplex streams).
type countingBody struct {
	io.ReadCloser
	read atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// observe counts each request by route pattern and status, and its request
// and response body bytes (gorender_http_request_bytes_total,
// gorender_http_response_bytes_total: bytes the handler read and wrote;
// HEAD answers count none), logs it (never
// bodies, props or passwords) when its level reaches minLevel
// (RENDERER_LOG_HTTP_LEVEL: info for answers and probes, error for other 5xx), and turns a
// panic into a 500 so that none escapes a request. With tracing on (tracer
// not nil) each POST, the gem's requests, is a server span continuing the
// request's traceparent; probes, scrapes and /info are not traced.
func observe(logger *slog.Logger, minLevel slog.Level, m *metrics.Metrics, tracer trace.Tracer) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started := time.Now()
			var span trace.Span
			if tracer != nil && r.Method == http.MethodPost {
				r, span = tracing.StartRequest(tracer, r)
			}
			rec := &statusRecorder{ResponseWriter: w}
			var body *countingBody
			if r.Body != nil && r.Body != http.NoBody {
				body = &countingBody{ReadCloser: r.Body}
				r.Body = body
			}
			defer func() {
				p := recover()
				// ErrAbortHandler ends a started stream abruptly on purpose:
				// count and log it, then let net/http reset the stream.
				aborted := p == http.ErrAbortHandler
				if p != nil && !aborted {
					logger.Error("panic in handler", "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					if !rec.wrote {
						handlers.WriteText(rec, r, http.StatusInternalServerError, "Internal error")
					}
				}
				if aborted {
					defer panic(p)
				}
				status := rec.status
				if !rec.wrote {
					status = 499 // the client went away before an answer
				}
				route := chi.RouteContext(r.Context()).RoutePattern()
				if route == "" {
					route = "unmatched"
				}
				var read, written int64
				if body != nil {
					read = body.read.Load()
				}
				if r.Method != http.MethodHead {
					written = rec.written.Load()
				}
				if m != nil {
					m.Request(route, status)
					m.BodyBytes(route, read, written)
				}
				if span != nil {
					tracing.EndRequest(span, r.Method, route, status, read, written)
				}
				lvl := slog.LevelInfo
				// A probe's 503 (/ready before the first bundle, while
				// shutting down) is an answer, not an error.
				if status >= 500 && route != "/ready" && route != "/health" {
					lvl = slog.LevelError
				}
				if lvl < minLevel {
					return
				}
				logger.Log(r.Context(), lvl, "request",
					"method", r.Method, "route", route, "path", r.URL.Path, "status", status,
					"proto", r.Proto, "duration", time.Since(started))
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

// writeDeadlines bounds every write of an answer (RENDERER_WRITE_TIMEOUT):
// a write or flush that a client does not take within timeout fails, the
// answer ends (a stream is reset or its connection closed) and the
// handler, and the runtime a stream holds, are free. Bytes must keep
// leaving, not the whole answer: the deadline is renewed as the answer
// goes out, so an answer of any size to a client that reads is never cut.
func writeDeadlines(timeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
			if r.ProtoMajor == 1 {
				// An HTTP/1.1 connection keeps its deadline from one request
				// to the next: renew it for what net/http writes before the
				// handler does (100 Continue) and after it returns (the
				// answer's last buffered bytes).
				dw.renew()
				defer dw.renew()
			}
			next.ServeHTTP(dw, r)
		})
	}
}

// deadlineWriter renews its answer's write deadline before it writes, at
// most every timeout/8 (each renewal on h2c is a message to the
// connection's goroutine), so a write may block for 7/8 of timeout to
// timeout. It remembers whether a write failed on the deadline.
type deadlineWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	timeout  time.Duration
	deadline time.Time
	stalled  atomic.Bool
}

// writeChunk is the most written under one deadline renewal.
const writeChunk = 64 << 10

func (d *deadlineWriter) renew() {
	now := time.Now()
	if d.deadline.Sub(now) > d.timeout-d.timeout/8 {
		return
	}
	d.deadline = now.Add(d.timeout)
	_ = d.rc.SetWriteDeadline(d.deadline)
}

// failed records whether err came from the deadline.
func (d *deadlineWriter) failed(err error) error {
	if err != nil && !time.Now().Before(d.deadline) {
		d.stalled.Store(true)
	}
	return err
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		d.renew()
		n, err := d.ResponseWriter.Write(p[:min(len(p), writeChunk)])
		written += n
		if err != nil {
			return written, d.failed(err)
		}
		p = p[n:]
	}
	return written, nil
}

// FlushError is what http.ResponseController.Flush calls.
func (d *deadlineWriter) FlushError() error {
	d.renew()
	return d.failed(http.NewResponseController(d.ResponseWriter).Flush())
}

func (d *deadlineWriter) Flush() { _ = d.FlushError() }

// WriteStalled reports whether a write failed because the client took
// nothing for the write timeout (handlers count such a stream as idle).
func (d *deadlineWriter) WriteStalled() bool { return d.stalled.Load() }

func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// growStack grows an HTTP/2 request's stack once, before its handler
// chain runs. Go's HTTP/2 server runs each request on a new goroutine,
// which starts with the runtime's average stack size (4 KiB under load),
// and a render request needs about 5 KiB (chi's recursive route lookup,
// then the body's decoding): the runtime grew the stack inside chi's
// lookup, unwinding and adjusting the 20 frames below it. Here only
// net/http's 3 frames are below, and the growth costs half as much.
// HTTP/1.1 serves a connection's requests on one goroutine, whose stack
// stays grown.
type growStack struct{ next http.Handler }

func (g growStack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 2 {
		_ = reserveStack(r.ProtoMajor)
	}
	g.next.ServeHTTP(w, r)
}

// reserveStack has a 4 KiB frame. Called less than 1 KiB deep, it makes
// the runtime double a smaller stack to 8 KiB (it doubles until the frame
// fits) and leaves a stack of 8 KiB or more as it is. It reads its frame
// at an index the compiler cannot know, so that the frame is kept.
//
//go:noinline
func reserveStack(i int) byte {
	var frame [4 << 10]byte
	return frame[i%len(frame)]
}

// dropUnreadBodies stops h2c from buffering request bodies that no handler
// will read. Go's HTTP/2 server keeps a stream's DATA until its handler
// reads it or the stream ends, and a stream outlives its handler while the
// answer waits for the client's flow-control window: a client without the
// password could hold each connection's whole window (1 MiB) with a probe
// or scrape whose answer it never takes. A closed body drops its bytes and
// returns their connection window. GET and HEAD routes read no body, so
// theirs is closed before they answer; every other body once its handler
// returned (an error answer decided earlier has closed it already, by its
// drain's deadline). HTTP/1.1 needs none of this: a body nobody reads
// stays in the socket.
func dropUnreadBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body := r.Body
		defer body.Close()
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			_ = body.Close()
		}
		next.ServeHTTP(w, r)
	})
}
