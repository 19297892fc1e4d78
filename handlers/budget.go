package handlers

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// DefaultUnauthenticatedBudget is the default of RENDERER_UNAUTHENTICATED_BODY_BUDGET.
const DefaultUnauthenticatedBudget = 128 << 20

const (
	// requestCharge is what a request that reads its body before it can
	// authenticate is charged at its first read, besides its header bytes
	// and its body bytes: its decoder's first buffers and the unfilled end
	// of its last body chunk (readAll), the request's own structures and
	// goroutine. Measured: see the README's Limits section.
	requestCharge = 64 << 10
	// headerFieldCharge is the overhead charged per header value on top of
	// its bytes (HPACK counts 32; Go's maps and slices cost about that).
	headerFieldCharge = 32
	// readStep is the most one read of an unauthenticated body reserves.
	readStep = 32 << 10
)

// Budget bounds what requests that have not authenticated yet may hold,
// process-wide (RENDERER_UNAUTHENTICATED_BODY_BUDGET). The password of a
// JSON, form, multipart or NDJSON body is inside the body, so those bytes
// must be read before the password can be checked: each such request is
// charged requestCharge plus its header bytes at its first read, then every
// body byte as it arrives, until its password passes or it is answered.
// A request's decoders hold at most twice what it is charged (bodies arrive
// in chunks that are copied once into one buffer), so requests without the
// password hold at most twice the budget. Nothing is sized from a size the
// client declared.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes (DefaultUnauthenticatedBudget
// when limit <= 0).
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		limit = DefaultUnauthenticatedBudget
	}
	return &Budget{limit: limit}
}

// Limit returns the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// InUse returns the bytes charged now.
func (b *Budget) InUse() int64 { return b.used.Load() }

// acquire charges n bytes if they fit.
func (b *Budget) acquire(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

func (b *Budget) release(n int64) { b.used.Add(-n) }

// budgetRefusal is a read refused by the Budget.
type budgetRefusal struct {
	busy  bool  // the budget is taken by other requests; else this one alone would pass it
	limit int64 // the budget's size
}

func (e *budgetRefusal) Error() string {
	if e.busy {
		return "the budget of unauthenticated request bytes is exhausted"
	}
	return fmt.Sprintf("the body is larger than the budget of %d unauthenticated request bytes", e.limit)
}

// answer is the reply to the refused request: 503 when the budget is busy
// (retry later), 413 when the request alone would exceed it.
func (e *budgetRefusal) answer() *HTTPError {
	if e.busy {
		return &HTTPError{
			Status: http.StatusServiceUnavailable,
			Body:   "Renderer busy: too many request bytes are waiting for authentication (RENDERER_UNAUTHENTICATED_BODY_BUDGET). Retry later.",
		}
	}
	return &HTTPError{
		Status: http.StatusRequestEntityTooLarge,
		Body: fmt.Sprintf("Request body is larger than the %d bytes that may be read before the password is checked "+
			"(RENDERER_UNAUTHENTICATED_BODY_BUDGET); send the password first, or in the Authorization header of a raw render request.", e.limit),
	}
}

// guardedBody is a request body whose bytes are charged to the Budget until
// the request authenticates. A handler makes one per request (guardBody),
// calls authenticated once the password passed and release when it is done.
// It is read by one goroutine at a time.
type guardedBody struct {
	src     io.ReadCloser
	budget  *Budget
	header  int64 // the header bytes charged with the first read
	held    int64 // charged and not released
	charged bool  // the first read took the request's charge
	trusted bool  // the password passed: nothing more is charged
}

// guardBody replaces r.Body with a guardedBody charging b.
func guardBody(r *http.Request, b *Budget) *guardedBody {
	src := r.Body
	if src == nil {
		src = http.NoBody
	}
	g := &guardedBody{src: src, budget: b, header: headerBytes(r.Header)}
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

// Read implements io.Reader: before authentication it reserves room for
// the bytes before reading them.
func (g *guardedBody) Read(p []byte) (int, error) {
	if g.trusted || g.budget == nil {
		return g.src.Read(p)
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
	n, err := g.src.Read(p)
	g.budget.release(want - int64(n))
	g.held += int64(n)
	return n, err
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
// released and its later bytes are not charged.
func (g *guardedBody) authenticated() {
	if g == nil {
		return
	}
	g.trusted = true
	g.release()
}

// release returns what the request holds to the budget.
func (g *guardedBody) release() {
	if g == nil || g.held == 0 {
		return
	}
	g.budget.release(g.held)
	g.held = 0
}

// discard reads and drops up to n bytes without charging them (they are
// not kept), for the drain before an early answer.
func (g *guardedBody) discard(n int64) {
	_, _ = io.CopyN(io.Discard, g.src, n)
}
