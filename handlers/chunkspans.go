package handlers

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/tracing"
)

// chunkSpans are the spans of an incremental render's update chunks
// (ror.incremental.process_chunk), each from its line's arrival to the end
// of its evaluation. The render evaluates the chunks in the order they
// were queued and tells of each once (jsvm.Updates' Applied and Failed),
// so the oldest open span is always that of the chunk it tells of. A nil
// *chunkSpans (tracing off) does nothing.
type chunkSpans struct {
	ctx    context.Context // the stream's
	tracer trace.Tracer

	mu    sync.Mutex
	open  []trace.Span // queued, not told of yet, oldest first
	ended bool
}

func newChunkSpans(ctx context.Context, tracer trace.Tracer) *chunkSpans {
	if tracer == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return nil
	}
	return &chunkSpans{ctx: ctx, tracer: tracer}
}

// begin starts the span of a chunk of size bytes about to be queued.
func (c *chunkSpans) begin(up jsvm.Update, size int) {
	if c == nil {
		return
	}
	span := c.start(up.BundleID, size)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		tracing.SetOutcome(span, "canceled")
		span.End()
		return
	}
	c.open = append(c.open, span)
}

// rejected records a line that is no chunk the render can take (skipped).
func (c *chunkSpans) rejected(id string, size int) {
	if c == nil {
		return
	}
	span := c.start(id, size)
	tracing.SetOutcome(span, "rejected")
	span.End()
}

func (c *chunkSpans) start(id string, size int) trace.Span {
	_, span := c.tracer.Start(c.ctx, tracing.SpanProcessChunk)
	span.SetAttributes(tracing.BundleTimestamp.String(id), tracing.BytesTotal.Int(size))
	return span
}

// told ends the oldest open span: its chunk was evaluated, or threw.
func (c *chunkSpans) told(threw bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.open) == 0 {
		return
	}
	span := c.open[0]
	c.open[0] = nil
	c.open = c.open[1:]
	outcome := "ok"
	if threw {
		outcome = "js_error"
	}
	tracing.SetOutcome(span, outcome)
	span.End()
}

// end ends the spans of the chunks the render did not evaluate; later
// news of the render (a quarantined runtime's) changes nothing.
func (c *chunkSpans) end() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, span := range c.open {
		tracing.SetOutcome(span, "canceled")
		span.End()
	}
	c.open, c.ended = nil, true
}
