package tests

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// propMarker is a prop value the traced renders carry into their HTML and
// their error text: no span may repeat it.
const propMarker = "Prop-Marker-5e1f"

// traceparent is a W3C traceparent header for a trace and parent span;
// sampled sets its flag.
func traceparent(traceID, parentID string, sampled bool) http.Header {
	flags := "00"
	if sampled {
		flags = "01"
	}
	return http.Header{"Traceparent": {"00-" + traceID + "-" + parentID + "-" + flags}}
}

// TestTraces: with an OTLP endpoint configured, gorender exports its spans
// to it over each OTLP transport (a real receiver in this process):
// each request's server span continues the incoming traceparent's trace
// under its parent span; body decoding, bundle store, bundle load, queue
// wait, render and stream are spans of their own with their bundle, engine,
// outcome and sizes; an unsampled traceparent is not traced; no span
// carries the props or the HTML; and the request's log lines carry its
// trace_id and span_id.
func TestTraces(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ receiver, protocol, encoding string }{
		{"http", "http/protobuf", "application/x-protobuf"},
		{"http", "http/json", "application/json"},
		{"grpc", "grpc", "grpc"},
	} {
		t.Run(strings.ReplaceAll(tc.protocol, "/", "-"), func(t *testing.T) {
			t.Parallel()
			rcv := newOTLPReceiver(t, tc.receiver)
			s := startServer(t, map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.url,
				"OTEL_EXPORTER_OTLP_PROTOCOL": tc.protocol,
				"RENDERER_SUPPORT_MODULES":    "true",
				"RENDERER_LOG_LEVEL":          "info",
				"RENDERER_LOG_HTTP_LEVEL":     "info",
			})
			tracedRenders(t, s, rcv)
			if got := rcv.encodingsSeen(); len(got) != 1 || got[tc.encoding] == 0 {
				t.Errorf("exports came as %v, want %s only", got, tc.encoding)
			}
		})
	}
}

// tracedRenders sends the traced requests of TestTraces and checks what
// the receiver got once the server has exited (which flushes its spans).
func tracedRenders(t *testing.T, s *server, rcv *otlpReceiver) {
	const (
		okTrace, okParent         = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
		errTrace, errParent       = "1bf7651916cd43dd8448eb211c80319d", "c7ad6b7169203332"
		streamTrace, streamParent = "2cf7651916cd43dd8448eb211c80319e", "d7ad6b7169203333"
		offTrace, offParent       = "3df7651916cd43dd8448eb211c80319f", "e7ad6b7169203334"
	)
	app, streams := newID("s"), newID("s")
	s.upload(t, map[string]string{app: reactApp(t), streams: testStreamsBundle}, nil)

	code := strings.Replace(request(t, "hello-world"), `{"name":"Rails"}`, `{"name":"`+propMarker+`"}`, 1)
	answer := s.streamRender(t, transports[0], app, code, traceparent(okTrace, okParent, true))
	if answer.Status != http.StatusOK || !strings.Contains(string(answer.Body), propMarker) {
		t.Fatalf("traced render: status %d, body %s", answer.Status, clip(string(answer.Body)))
	}
	failed := s.streamRender(t, transports[1], app, `throw new Error("no user `+propMarker+`")`, traceparent(errTrace, errParent, true))
	if failed.Status != http.StatusBadRequest || !strings.Contains(string(failed.Body), propMarker) {
		t.Fatalf("failing render: status %d, body %s", failed.Status, clip(string(failed.Body)))
	}
	streamed := s.streamRender(t, transports[1], streams, "TestStreams.ticks(2, 5)", traceparent(streamTrace, streamParent, true))
	streamed.wantComplete(t, ticksBody(2))
	unsampled := s.streamRender(t, transports[0], app, code, traceparent(offTrace, offParent, false))
	if unsampled.Status != http.StatusOK {
		t.Fatalf("unsampled render: status %d", unsampled.Status)
	}
	s.terminate(t) // flushes the spans

	spans := rcv.received()
	if len(spans) == 0 {
		t.Fatalf("the receiver got no span:\n%s", s.stderr.String())
	}
	for _, span := range spans {
		noPropsOrHTML(t, span)
		if got := span.resource["service.name"]; got != "gorender" {
			t.Errorf("span %q: service.name %q, want gorender", span.Name, got)
		}
	}

	// The buffered render: the request's span continues the traceparent.
	tr := rcv.trace(t, okTrace)
	req := wantSpan(t, tr, "POST /bundles/{bundleId}/render/{digest}", tracepb.Span_SPAN_KIND_SERVER, map[string]string{
		"http.request.method":       "POST",
		"http.route":                "/bundles/{bundleId}/render/{digest}",
		"http.response.status_code": "200",
		"network.protocol.version":  "2",
		"http.request.body.size":    strconv.Itoa(len(code)),
		"http.response.body.size":   strconv.Itoa(len(answer.Body)),
	})
	if got := hex.EncodeToString(req.ParentSpanId); got != okParent {
		t.Errorf("request span's parent %s, want the traceparent's %s", got, okParent)
	}
	wantSpan(t, tr, "decode body", tracepb.Span_SPAN_KIND_INTERNAL, map[string]string{
		"gorender.body.media_type": "application/vnd.react-on-rails.render-request+javascript",
	}).childOf(t, req)
	render := wantSpan(t, tr, "render", tracepb.Span_SPAN_KIND_INTERNAL, map[string]string{
		"gorender.bundle.id":            app,
		"gorender.bundle.dependencies":  "[]",
		"gorender.engine":               testEngine,
		"gorender.outcome":              "ok",
		"gorender.render.request.size":  strconv.Itoa(len(code)),
		"gorender.render.response.size": strconv.Itoa(len(answer.Body)),
	})
	render.childOf(t, req)
	// The first render loads the bundle.
	wantSpan(t, tr, "bundle load", tracepb.Span_SPAN_KIND_INTERNAL, map[string]string{
		"gorender.bundle.id":   app,
		"gorender.bundle.size": strconv.Itoa(len(reactApp(t))),
		"gorender.engine":      testEngine,
		"gorender.load.joined": "false",
	}).childOf(t, render)
	wantSpan(t, tr, "queue wait", tracepb.Span_SPAN_KIND_INTERNAL, nil).childOf(t, render)
	if len(tr) != 5 {
		t.Errorf("trace of the render has %d spans, want 5: %v", len(tr), names(tr))
	}

	// The failing render: a 400 is the client's, the render an error
	// whose description is its outcome, not its message.
	tr = rcv.trace(t, errTrace)
	req = wantSpan(t, tr, "POST /bundles/{bundleId}/render/{digest}", tracepb.Span_SPAN_KIND_SERVER, map[string]string{
		"http.response.status_code": "400",
		"network.protocol.version":  "1.1",
	})
	if req.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a 400's request span has status error")
	}
	render = wantSpan(t, tr, "render", tracepb.Span_SPAN_KIND_INTERNAL, map[string]string{"gorender.outcome": "js_error"})
	if render.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || render.Status.GetMessage() != "js_error" {
		t.Errorf("failed render's status %v, want error \"js_error\"", render.Status)
	}

	// The stream.
	tr = rcv.trace(t, streamTrace)
	render = wantSpan(t, tr, "render", tracepb.Span_SPAN_KIND_INTERNAL, map[string]string{
		"gorender.bundle.id":            streams,
		"gorender.outcome":              "stream_ok",
		"gorender.render.response.size": strconv.Itoa(len(ticksBody(2))),
	})
	wantSpan(t, tr, "stream", tracepb.Span_SPAN_KIND_INTERNAL, map[string]string{
		"gorender.outcome":       "ok",
		"gorender.stream.size":   strconv.Itoa(len(ticksBody(2))),
		"gorender.stream.chunks": "3",
	}).childOf(t, render)

	// Not sampled by its caller: not traced.
	if tr := rcv.trace(t, offTrace); len(tr) > 0 {
		t.Errorf("an unsampled traceparent was traced: %v", names(tr))
	}

	// The upload came without a traceparent: a trace of its own.
	var upload *receivedSpan
	for _, span := range spans {
		if span.Name == "POST /upload-assets" {
			upload = &span
		}
	}
	if upload == nil {
		t.Fatalf("no span for the upload; got %v", spanNames(spans))
	}
	if len(upload.ParentSpanId) != 0 {
		t.Errorf("the upload's span has a parent %x, want a root span", upload.ParentSpanId)
	}
	tr = rcv.trace(t, hex.EncodeToString(upload.TraceId))
	wantSpan(t, tr, "bundle store", tracepb.Span_SPAN_KIND_INTERNAL, map[string]string{
		"gorender.bundles.stored": fmt.Sprint("[", strings.Join(sortedIDs(app, streams), " "), "]"),
	}).childOf(t, *upload)
	wantSpan(t, tr, "decode body", tracepb.Span_SPAN_KIND_INTERNAL, map[string]string{
		"gorender.body.media_type": "multipart/form-data",
		"gorender.body.files":      "2",
	}).childOf(t, *upload)

	// Logs of a traced request carry its ids: the access log the request
	// span's, the bundle load's log the load span's.
	okReq := rcv.trace(t, okTrace)
	wantLogLine(t, s, "request", okTrace, hex.EncodeToString(okReq["POST /bundles/{bundleId}/render/{digest}"].SpanId))
	wantLogLine(t, s, "bundle loaded", okTrace, hex.EncodeToString(okReq["bundle load"].SpanId))
}

// wantSpan returns the span named name of a trace, checking its kind and
// the attributes given.
func wantSpan(t *testing.T, tr map[string]receivedSpan, name string, kind tracepb.Span_SpanKind, attrs map[string]string) receivedSpan {
	t.Helper()
	span, ok := tr[name]
	if !ok {
		t.Fatalf("no span %q in the trace; it has %v", name, names(tr))
	}
	if span.Kind != kind {
		t.Errorf("span %q is of kind %v, want %v", name, span.Kind, kind)
	}
	got := span.attrs()
	for k, want := range attrs {
		if got[k] != want {
			t.Errorf("span %q: attribute %s = %q, want %q (all: %v)", name, k, got[k], want, got)
		}
	}
	if span.EndTimeUnixNano < span.StartTimeUnixNano {
		t.Errorf("span %q ends before it starts", name)
	}
	return span
}

// noPropsOrHTML fails t when a span's attributes, events or status repeat
// the props (propMarker) or look like HTML.
func noPropsOrHTML(t *testing.T, span receivedSpan) {
	t.Helper()
	texts := []string{span.Name, span.Status.GetMessage()}
	for _, v := range span.attrs() {
		texts = append(texts, v)
	}
	for _, e := range span.Events {
		texts = append(texts, e.Name)
		for _, v := range attrMap(e.Attributes) {
			texts = append(texts, v)
		}
	}
	for _, text := range texts {
		if strings.Contains(text, propMarker) || strings.Contains(text, "<") {
			t.Errorf("span %q carries props or HTML: %q", span.Name, text)
		}
	}
}

// wantLogLine checks that a log line with msg carries the trace and span ids.
func wantLogLine(t *testing.T, s *server, msg, traceID, spanID string) {
	t.Helper()
	var seen []string
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) != nil || entry["msg"] != msg {
			continue
		}
		if entry["trace_id"] == traceID && entry["span_id"] == spanID {
			return
		}
		seen = append(seen, line)
	}
	t.Errorf("no %q log line with trace_id %s and span_id %s; the %q lines:\n%s", msg, traceID, spanID, msg, strings.Join(seen, "\n"))
}

func names(tr map[string]receivedSpan) []string {
	var out []string
	for name := range tr {
		out = append(out, name)
	}
	return out
}

func spanNames(spans []receivedSpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func sortedIDs(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// TestTracesOff: traces are off unless configured, and OTEL_TRACES_EXPORTER=none
// or OTEL_SDK_DISABLED=true turn them off even with an endpoint set: the
// receiver gets nothing, even at exit, and no log line carries a trace_id.
func TestTracesOff(t *testing.T) {
	t.Parallel()
	for name, env := range map[string]map[string]string{
		"unset":         {},
		"exporter none": {"OTEL_TRACES_EXPORTER": "none"},
		"sdk disabled":  {"OTEL_SDK_DISABLED": "true"},
	} {
		t.Run(strings.ReplaceAll(name, " ", "-"), func(t *testing.T) {
			t.Parallel()
			rcv := newOTLPReceiver(t, "http")
			env["RENDERER_LOG_LEVEL"] = "info"
			env["RENDERER_LOG_HTTP_LEVEL"] = "info"
			if name != "unset" {
				env["OTEL_EXPORTER_OTLP_ENDPOINT"] = rcv.url
			}
			s := startServer(t, env)
			id := newID("s")
			s.upload(t, map[string]string{id: markerBundle("m")}, nil)
			s.streamRender(t, transports[0], id, "MARKER", traceparent("4ef7651916cd43dd8448eb211c8031a0", "f7ad6b7169203335", true)).wantComplete(t, "m")
			s.terminate(t)
			if got := rcv.received(); len(got) > 0 {
				t.Errorf("traces are off but the receiver got %v", spanNames(got))
			}
			if strings.Contains(s.stderr.String(), "trace_id") {
				t.Errorf("a log line carries a trace_id with traces off:\n%s", s.stderr.String())
			}
		})
	}
}
