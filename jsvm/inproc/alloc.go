package inproc

import (
	"fmt"
	"math"

	"github.com/gorender/gorender/jsvm"
)

// AllocLimit is the largest single allocation a render may make for
// JavaScript through a host function (random bytes, encoded text, a file
// read, a string handed to the host) or, on goja, a built-in sized by its
// caller (ArrayBuffer, typed arrays, String.prototype.repeat): the memory
// guards (RENDERER_MAX_HEAP, QuickJS's own limit) watch a render's memory
// as it grows, and one call must not jump past them before they can act.
// Over it, a RangeError, as Node throws past its own limits.
type AllocLimit int64

// NewAllocLimit is opts' bound (RENDERER_MAX_ALLOCATION): MaxAllocation,
// jsvm.DefaultMaxAllocation for 0, none for a negative value.
func NewAllocLimit(opts jsvm.Options) AllocLimit {
	switch {
	case opts.MaxAllocation == 0:
		return jsvm.DefaultMaxAllocation
	case opts.MaxAllocation < 0:
		return math.MaxInt64
	}
	return AllocLimit(opts.MaxAllocation)
}

// Fits reports whether n bytes fit the bound.
func (l AllocLimit) Fits(n int64) bool { return n >= 0 && n <= int64(l) }

func (l AllocLimit) String() string {
	return fmt.Sprintf("the %d bytes one allocation may take (RENDERER_MAX_ALLOCATION)", int64(l))
}

// Exceeded is the RangeError message of an allocation of n bytes for what,
// or "" when it fits.
func (l AllocLimit) Exceeded(what string, n int64) string {
	if l.Fits(n) {
		return ""
	}
	return fmt.Sprintf("%s: %d bytes are more than %s", what, n, l)
}

// AllocLimit is the bound of the host's runtime.
func (h *Host) AllocLimit() AllocLimit { return h.alloc }

// CapAllocations lowers the bound to ceiling bytes, an engine's own memory
// limit (QuickJS's): no single allocation may be larger than the runtime.
func (h *Host) CapAllocations(ceiling int64) {
	if ceiling > 0 && int64(h.alloc) > ceiling {
		h.alloc = AllocLimit(ceiling)
	}
}

// checkAlloc is the RangeError reply of an allocation of n bytes for what
// that does not fit, nil when it does.
func (h *Host) checkAlloc(what string, n int64) *Reply {
	if msg := h.alloc.Exceeded(what, n); msg != "" {
		r := throwf("RangeError", "%s", msg)
		return &r
	}
	return nil
}
