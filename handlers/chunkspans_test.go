package handlers

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gorender/gorender/jsvm"
	"github.com/gorender/gorender/tracing"
)

// TestChunkSpans: each update chunk's span ends with what the render told
// of it, oldest first; the chunks it never evaluated end canceled when
// the render ends, and news after that (a quarantined runtime's) or a
// chunk queued after it changes no span that ended.
func TestChunkSpans(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)).Tracer("test")
	ctx, stream := tracer.Start(context.Background(), tracing.SpanIncrementalStream)
	chunks := newChunkSpans(ctx, tracer)
	for _, id := range []string{"a", "b", "c", "d"} {
		chunks.begin(jsvm.Update{BundleID: id}, len(id))
	}
	chunks.rejected("", 7)
	chunks.told(false) // a
	chunks.told(true)  // b
	chunks.end()       // c, d
	chunks.told(false)
	chunks.begin(jsvm.Update{BundleID: "e"}, 1)
	stream.End()

	want := map[string]string{"a": "ok", "b": "js_error", "": "rejected", "c": "canceled", "d": "canceled", "e": "canceled"}
	ended := recorder.Ended()
	if len(ended) != len(want)+1 {
		t.Fatalf("%d spans ended, want %d", len(ended), len(want)+1)
	}
	for _, span := range ended[:len(ended)-1] {
		attrs := map[string]string{}
		for _, kv := range span.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		id := attrs[string(tracing.BundleTimestamp)]
		if span.Name() != tracing.SpanProcessChunk || span.Parent().SpanID() != stream.SpanContext().SpanID() {
			t.Errorf("span %q under %s, want %s under the stream", span.Name(), span.Parent().SpanID(), tracing.SpanProcessChunk)
		}
		if got := attrs[string(tracing.Outcome)]; got != want[id] {
			t.Errorf("chunk %q: outcome %q, want %q", id, got, want[id])
		}
		delete(want, id)
	}
	if len(want) > 0 {
		t.Errorf("no span for chunks %v", want)
	}
	var none *chunkSpans // tracing off
	none.begin(jsvm.Update{}, 0)
	none.told(true)
	none.end()
}
