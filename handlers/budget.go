package handlers

import (
	"fmt"
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
	// goroutine. Measured: see docs/limits.md "What a client without the password can cost".
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
