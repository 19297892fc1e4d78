package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Default waits of a request body (docs/limits.md).
const (
	// DefaultBodyReadTimeout is the default of RENDERER_BODY_READ_TIMEOUT.
	DefaultBodyReadTimeout = 10 * time.Second
	// DefaultAuthTimeout is the default of RENDERER_AUTH_TIMEOUT.
	DefaultAuthTimeout = 30 * time.Second
)

// BodyLimits are the bounds on reading a request body (zero: the default).
type BodyLimits struct {
	// MaxBodyBytes, MaxFieldBytes and MaxParts are DecodeOptions' limits
	// (RENDERER_MAX_BODY_SIZE, RENDERER_MAX_FIELD_SIZE, RENDERER_MAX_PARTS);
	// MaxFieldBytes also bounds an NDJSON line.
	MaxBodyBytes, MaxFieldBytes int64
	MaxParts                    int
	// ReadTimeout is the longest wait for the next bytes of a body
	// (RENDERER_BODY_READ_TIMEOUT): bytes must keep arriving.
	ReadTimeout time.Duration
	// AuthTimeout is how long after its start a request may take to
	// authenticate (RENDERER_AUTH_TIMEOUT): the password of a JSON, form or
	// multipart body must arrive within it, however steadily the bytes
	// before it trickle in.
	AuthTimeout time.Duration
}

func (l BodyLimits) withDefaults() BodyLimits {
	d := DecodeOptions{MaxBodyBytes: l.MaxBodyBytes, MaxFieldBytes: l.MaxFieldBytes, MaxParts: l.MaxParts}.withDefaults()
	l.MaxBodyBytes, l.MaxFieldBytes, l.MaxParts = d.MaxBodyBytes, d.MaxFieldBytes, d.MaxParts
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultBodyReadTimeout
	}
	if l.AuthTimeout <= 0 {
		l.AuthTimeout = DefaultAuthTimeout
	}
	return l
}

// guardedBody is a request body read under the handlers' bounds: its bytes
// are charged to the Budget until the request authenticates, each read must
// return within the read timeout, and the request must authenticate within
// the auth timeout. A handler makes one per request (guardBody), calls
// authenticated once the password passed and release when it is done. It
// is read by one goroutine at a time.
type guardedBody struct {
	src         io.ReadCloser
	budget      *Budget
	rc          *http.ResponseController
	limits      BodyLimits
	authBy      time.Time // when the auth timeout ends
	deadline    time.Time // the read deadline set last
	ownDeadline bool      // the handler sets its own read deadlines now
	onAuth      func()    // told once when the request authenticates
	header      int64     // the header bytes charged with the first read
	held        int64     // charged and not released
	charged     bool      // the first read took the request's charge
	trusted     bool      // the password passed: nothing more is charged
	eof         bool      // the body was read to its end
}

// guardBody replaces r.Body with a guardedBody under h's bounds.
func (h *Handlers) guardBody(w http.ResponseWriter, r *http.Request) *guardedBody {
	src := r.Body
	if src == nil {
		src = http.NoBody
	}
	limits := h.BodyLimits.withDefaults()
	g := &guardedBody{
		src: src, budget: h.Budget, rc: http.NewResponseController(w), limits: limits,
		authBy: time.Now().Add(limits.AuthTimeout), header: headerBytes(r.Header),
	}
	if h.Authenticated != nil {
		ctx := r.Context()
		g.onAuth = func() { h.Authenticated(ctx) }
	}
	r.Body = g
	return g
}

// headerBytes is what a request's header fields cost, as charged.
func headerBytes(h http.Header) int64 {
	var n int64
	for name, values := range h {
		for _, v := range values {
			n += int64(len(name)+len(v)) + headerFieldCharge
		}
	}
	return n
}

// Read implements io.Reader: it renews the read deadline, and before
// authentication reserves room for the bytes before reading them.
func (g *guardedBody) Read(p []byte) (int, error) {
	g.renewDeadline()
	if g.trusted || g.budget == nil {
		return g.read(p)
	}
	if !g.charged {
		first := requestCharge + g.header
		if err := g.reserve(first); err != nil {
			return 0, err
		}
		g.held += first
		g.charged = true
	}
	if len(p) > readStep {
		p = p[:readStep]
	}
	want := int64(len(p))
	if err := g.reserve(want); err != nil {
		return 0, err
	}
	n, err := g.read(p)
	g.budget.release(want - int64(n))
	g.held += int64(n)
	return n, err
}

// read reads src, noting its end and naming a timeout.
func (g *guardedBody) read(p []byte) (int, error) {
	n, err := g.src.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		g.eof = true
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = g.timeoutError(err)
	}
	return n, err
}

// renewDeadline sets the read deadline for the next read: the read timeout
// from now, or the end of the auth timeout when that comes first. Renewals
// of the read timeout are spaced by an eighth of it (on h2c each one is a
// message to the connection's goroutine), so a read may wait 7/8 of it to
// all of it; the end of the auth timeout is set exactly.
func (g *guardedBody) renewDeadline() {
	// After the body's end the connection is not ours to time: net/http
	// clears the deadline and reads on in the background (a read timing
	// out there would cancel the request).
	if g.ownDeadline || g.rc == nil || g.eof {
		return
	}
	next := time.Now().Add(g.limits.ReadTimeout)
	capped := !g.trusted && g.authBy.Before(next)
	if capped {
		next = g.authBy
	}
	if next.Equal(g.deadline) || (!capped && next.After(g.deadline) && next.Sub(g.deadline) < g.limits.ReadTimeout/8) {
		return
	}
	g.deadline = next
	_ = g.rc.SetReadDeadline(next)
}

// bodyTimeout is a body read that ran into a deadline.
type bodyTimeout struct {
	auth    bool          // the auth timeout, else the read timeout
	timeout time.Duration // the one that ran out
	err     error
}

func (e *bodyTimeout) Error() string { return e.err.Error() }
func (e *bodyTimeout) Unwrap() error { return e.err }

// answer is the 408 of a body that stopped arriving in time.
func (e *bodyTimeout) answer() *HTTPError {
	body := fmt.Sprintf("Request body timed out: no bytes arrived for %s (RENDERER_BODY_READ_TIMEOUT).", e.timeout)
	if e.auth {
		body = fmt.Sprintf("Request timed out: the password did not arrive within %s (RENDERER_AUTH_TIMEOUT).", e.timeout)
	}
	return &HTTPError{Status: http.StatusRequestTimeout, Body: body, Cause: e}
}

func (g *guardedBody) timeoutError(err error) error {
	if g.ownDeadline {
		return err
	}
	if !g.trusted && g.deadline.Equal(g.authBy) {
		return &bodyTimeout{auth: true, timeout: g.limits.AuthTimeout, err: err}
	}
	return &bodyTimeout{timeout: g.limits.ReadTimeout, err: err}
}

// reserve charges n bytes more to the budget, or says why it cannot.
func (g *guardedBody) reserve(n int64) error {
	if g.held+n > g.budget.limit {
		return &budgetRefusal{limit: g.budget.limit}
	}
	if !g.budget.acquire(n) {
		return &budgetRefusal{busy: true, limit: g.budget.limit}
	}
	return nil
}

// Close implements io.Closer.
func (g *guardedBody) Close() error { return g.src.Close() }

// authenticated marks the request's password as passed: what it holds is
// released, its later bytes are not charged, the auth timeout no longer
// applies and the connection is told.
func (g *guardedBody) authenticated() {
	if g == nil || g.trusted {
		return
	}
	g.trusted = true
	g.release()
	if g.onAuth != nil {
		g.onAuth()
	}
}

// takeDeadlines hands the read deadlines to the handler (the incremental
// route's windows between update lines), from now on.
func (g *guardedBody) takeDeadlines() { g.ownDeadline = true }

// release returns what the request holds to the budget.
func (g *guardedBody) release() {
	if g == nil || g.held == 0 {
		return
	}
	g.budget.release(g.held)
	g.held = 0
}

// Authenticator is told when a request on a connection authenticates
// (Deps.Authenticated), with the request's context.
type Authenticator func(ctx context.Context)
