package tests

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/gorender/gorender/gemclient"
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
// under its parent span; the steps that are the Node renderer's carry its
// span names and attributes (ror.ssr.request, ror.bundle.upload,
// ror.bundle.build_execution_context, ror.vm.execute, ror.result.prepare,
// ror.incremental.stream and process_chunk; bytes.total, bundle.timestamp,
// response.bytes) with the parents and sizes docs/observability.md lists,
// for a render, a render that loads its bundle, one that carries its
// bundle, an upload and an incremental render with update chunks;
// gorender's own steps (body decoding, queue wait, stream) keep their
// names; an unsampled traceparent is not traced; an unauthenticated
// render's span carries no bundle id (unchecked bytes); no span carries the
// props or the HTML; and the request's log lines carry its trace_id and
// span_id.
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

// Span names of the Node renderer, spelled out as a dashboard's query
// spells them (docs/observability.md "The Node renderer's spans").
const (
	ssrRequest    = "ror.ssr.request"
	buildContext  = "ror.bundle.build_execution_context"
	bundleUpload  = "ror.bundle.upload"
	vmExecute     = "ror.vm.execute"
	resultPrepare = "ror.result.prepare"
	incStream     = "ror.incremental.stream"
	processChunk  = "ror.incremental.process_chunk"
	renderSpan    = "POST " + renderRoute
	internal      = tracepb.Span_SPAN_KIND_INTERNAL
)

// tracedRenders sends the traced requests of TestTraces and checks what
// the receiver got once the server has exited (which flushes its spans).
func tracedRenders(t *testing.T, s *server, rcv *otlpReceiver) {
	const (
		okTrace, okParent         = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
		errTrace, errParent       = "1bf7651916cd43dd8448eb211c80319d", "c7ad6b7169203332"
		streamTrace, streamParent = "2cf7651916cd43dd8448eb211c80319e", "d7ad6b7169203333"
		offTrace, offParent       = "3df7651916cd43dd8448eb211c80319f", "e7ad6b7169203334"
		authTrace, authParent     = "4ef7651916cd43dd8448eb211c8031a0", "f7ad6b7169203335"
	)
	app, streams, async, carried := newID("s"), newID("s"), newID("s"), newID("s")
	const asset, assetBody = "loadable-stats.json", `{"chunks":[]}`
	asyncJS := testdata(t, "bundles/async-props.js")
	s.upload(t, map[string]string{app: reactApp(t), streams: testStreamsBundle, async: asyncJS}, map[string]string{asset: assetBody})

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
	// An unauthenticated render whose bundle id is 2 KiB of unchecked bytes.
	header := traceparent(authTrace, authParent, true)
	header.Set("Authorization", "Bearer not-the-password")
	if got := s.streamRender(t, transports[0], "UNCHECKED"+strings.Repeat("x", 2048), "1", header); got.Status != http.StatusUnauthorized {
		t.Fatalf("unauthenticated render: status %d, want 401", got.Status)
	}
	// A render that carries its bundle, as the gem sends one after a 410.
	carriedJS := markerBundle("carried")
	must(t)(s.gem(transports[0]).RenderMultipart(ctx(t), gemclient.Render{
		BundleID: carried, Code: "MARKER", Bundles: map[string][]byte{carried: []byte(carriedJS)},
	})).want(t, transports[0], http.StatusOK, "carried")
	// An incremental render: two update chunks, a line that is no chunk,
	// one that throws, and the close chunk at the body's end.
	first := asyncPropsFirst(t, async, nil)
	inc := s.startIncremental(t, transports[1], async, first)
	inc.waitFor(golden(t, "async-props-initial"))
	update1, notJSON := updateLine(async, request(t, "async-props-update-1")), "not JSON {"
	throws, update2 := updateLine(async, "throw new Error('"+propMarker+"')"), updateLine(async, request(t, "async-props-update-2"))
	sent := len(ndjson(t, first))
	for _, line := range []any{update1, notJSON, throws, update2} {
		inc.send(line)
		sent += len(ndjson(t, line))
	}
	inc.waitFor(golden(t, "async-props-update-2"))
	if body, err := inc.finish(); err != nil || body != golden(t, "async-props-close") {
		t.Fatalf("incremental render: error %v, body %s", err, clip(body))
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

	// The unauthenticated render's span carries none of its unchecked id.
	if span, ok := rcv.trace(t, authTrace)[ssrRequest]; !ok {
		t.Errorf("no %s span for the unauthenticated render", ssrRequest)
	} else if id, ok := span.attrs()["bundle.timestamp"]; ok {
		t.Errorf("the unauthenticated render's %s span carries bundle.timestamp %s", ssrRequest, clip(id))
	}

	// The buffered render, which loads its bundle: the request's span
	// continues the traceparent, and holds the render's steps in order.
	tr := rcv.trace(t, okTrace)
	req := wantSpan(t, tr, renderSpan, tracepb.Span_SPAN_KIND_SERVER, map[string]string{
		"http.request.method":       "POST",
		"http.route":                renderRoute,
		"http.response.status_code": "200",
		"network.protocol.version":  "2",
		"http.request.body.size":    strconv.Itoa(len(code)),
		"http.response.body.size":   strconv.Itoa(len(answer.Body)),
	})
	if got := hex.EncodeToString(req.ParentSpanId); got != okParent {
		t.Errorf("request span's parent %s, want the traceparent's %s", got, okParent)
	}
	ssr := wantSpan(t, tr, ssrRequest, internal, map[string]string{
		"bundle.timestamp":             app,
		"bytes.total":                  strconv.Itoa(len(code)),
		"response.bytes":               strconv.Itoa(len(answer.Body)),
		"gorender.bundle.dependencies": "[]",
		"gorender.engine":              testEngine,
		"gorender.outcome":             "ok",
	})
	ssr.childOf(t, req)
	wantSpan(t, tr, "decode body", internal, map[string]string{
		"gorender.body.media_type": "application/vnd.react-on-rails.render-request+javascript",
	}).childOf(t, ssr)
	build := wantSpan(t, tr, buildContext, internal, map[string]string{
		"bundle.timestamp":     app,
		"bytes.total":          strconv.Itoa(len(reactApp(t))),
		"gorender.engine":      testEngine,
		"gorender.load.joined": "false",
	})
	queue := wantSpan(t, tr, "queue wait", internal, nil)
	execute := wantSpan(t, tr, vmExecute, internal, map[string]string{"bundle.timestamp": app})
	prepare := wantSpan(t, tr, resultPrepare, internal, map[string]string{
		"response.bytes":         strconv.Itoa(len(answer.Body)),
		"gorender.answer.status": "200",
	})
	for i, step := range []receivedSpan{build, queue, execute, prepare} {
		step.childOf(t, ssr)
		if i > 0 {
			step.after(t, []receivedSpan{build, queue, execute, prepare}[i-1])
		}
	}
	if len(tr) != 7 {
		t.Errorf("trace of the render has %d spans, want 7: %v", len(tr), names(tr))
	}

	// The failing render: a 400 is the client's, the render an error
	// whose description is its outcome, not its message.
	tr = rcv.trace(t, errTrace)
	req = wantSpan(t, tr, renderSpan, tracepb.Span_SPAN_KIND_SERVER, map[string]string{
		"http.response.status_code": "400",
		"network.protocol.version":  "1.1",
	})
	if req.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a 400's request span has status error")
	}
	ssr = wantSpan(t, tr, ssrRequest, internal, map[string]string{
		"gorender.outcome": "js_error",
		"response.bytes":   strconv.Itoa(len(failed.Body)),
	})
	if ssr.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || ssr.Status.GetMessage() != "js_error" {
		t.Errorf("failed render's status %v, want error \"js_error\"", ssr.Status)
	}
	wantSpan(t, tr, resultPrepare, internal, map[string]string{
		"gorender.answer.status": "400",
		"response.bytes":         strconv.Itoa(len(failed.Body)),
	}).childOf(t, ssr)
	if _, loaded := tr[buildContext]; loaded {
		t.Errorf("the second render of a bundle loaded it again")
	}

	// The stream: no result to prepare, a stream of gorender's.
	tr = rcv.trace(t, streamTrace)
	ssr = wantSpan(t, tr, ssrRequest, internal, map[string]string{
		"bundle.timestamp": streams,
		"gorender.outcome": "stream_ok",
		"response.bytes":   strconv.Itoa(len(ticksBody(2))),
	})
	wantSpan(t, tr, "stream", internal, map[string]string{
		"gorender.outcome":       "ok",
		"gorender.stream.size":   strconv.Itoa(len(ticksBody(2))),
		"gorender.stream.chunks": "3",
	}).childOf(t, ssr)
	wantSpan(t, tr, vmExecute, internal, nil).childOf(t, ssr)
	if _, ok := tr[resultPrepare]; ok {
		t.Errorf("a streamed render has a %s span", resultPrepare)
	}

	// Not sampled by its caller: not traced.
	if tr := rcv.trace(t, offTrace); len(tr) > 0 {
		t.Errorf("an unsampled traceparent was traced: %v", names(tr))
	}

	// The upload came without a traceparent: a trace of its own, a
	// ror.bundle.upload for each bundle, its size with the companion file's.
	upload := rcv.root(t, "POST /upload-assets")
	tr = rcv.trace(t, hex.EncodeToString(upload.TraceId), bundleUpload)
	wantSpan(t, tr, "decode body", internal, map[string]string{
		"gorender.body.media_type": "multipart/form-data",
		"gorender.body.files":      "4",
	}).childOf(t, upload)
	uploads := rcv.named(hex.EncodeToString(upload.TraceId), bundleUpload)
	sizes := map[string]int{app: len(reactApp(t)), streams: len(testStreamsBundle), async: len(asyncJS)}
	if len(uploads) != len(sizes) {
		t.Errorf("the upload of %d bundles has %d %s spans", len(sizes), len(uploads), bundleUpload)
	}
	for _, span := range uploads {
		span.childOf(t, upload)
		id := span.attrs()["bundle.timestamp"]
		wantSpan(t, map[string]receivedSpan{bundleUpload: span}, bundleUpload, internal, map[string]string{
			"bytes.total":             strconv.Itoa(sizes[id] + len(assetBody)),
			"gorender.bundle.existed": "false",
			"gorender.assets":         "1",
		})
		delete(sizes, id)
	}
	if len(sizes) > 0 {
		t.Errorf("no %s span for bundles %v", bundleUpload, sizes)
	}

	// The render that carried its bundle: stored, then loaded, in the
	// render's request.
	carriedUpload := rcv.withAttr(t, bundleUpload, "bundle.timestamp", carried)
	tr = rcv.trace(t, hex.EncodeToString(carriedUpload.TraceId))
	ssr = wantSpan(t, tr, ssrRequest, internal, map[string]string{
		"bundle.timestamp": carried,
		"bytes.total":      strconv.Itoa(len("MARKER")),
		"response.bytes":   strconv.Itoa(len("carried")),
	})
	ssr.childOf(t, wantSpan(t, tr, renderSpan, tracepb.Span_SPAN_KIND_SERVER, nil))
	wantSpan(t, tr, bundleUpload, internal, map[string]string{
		"bytes.total": strconv.Itoa(len(carriedJS)),
	}).childOf(t, ssr)
	wantSpan(t, tr, buildContext, internal, map[string]string{
		"bundle.timestamp": carried,
		"bytes.total":      strconv.Itoa(len(carriedJS)),
	}).childOf(t, ssr)
	tr[buildContext].after(t, tr[bundleUpload])

	// The incremental render: its stream holds the render of line 1 and
	// one process_chunk per update chunk, in order, ending as each was
	// evaluated (or skipped).
	incReq := rcv.root(t, "POST /bundles/{bundleId}/incremental-render/{digest}")
	incTrace := hex.EncodeToString(incReq.TraceId)
	tr = rcv.trace(t, incTrace, processChunk)
	stream := wantSpan(t, tr, incStream, internal, map[string]string{
		"bundle.timestamp": async,
		"bytes.total":      strconv.Itoa(sent),
		"gorender.updates": "3",
	})
	stream.childOf(t, incReq)
	ssr = wantSpan(t, tr, ssrRequest, internal, map[string]string{
		"bundle.timestamp": async,
		"bytes.total":      strconv.Itoa(len(request(t, "async-props-initial"))),
		"response.bytes":   strconv.Itoa(len(golden(t, "async-props-close"))),
		"gorender.outcome": "stream_ok",
	})
	ssr.childOf(t, stream)
	for _, name := range []string{"decode body", buildContext, "queue wait", vmExecute, "stream"} {
		wantSpan(t, tr, name, internal, nil).childOf(t, ssr)
	}
	closeCode := request(t, "async-props-close")
	want := []struct {
		id, outcome string
		size        int
	}{
		{async, "ok", len(ndjson(t, update1)) - 1},
		{"", "rejected", len(notJSON)},
		{async, "js_error", len(ndjson(t, throws)) - 1},
		{async, "ok", len(ndjson(t, update2)) - 1},
		{async, "ok", len(closeCode)},
	}
	chunks := rcv.named(incTrace, processChunk)
	if len(chunks) != len(want) {
		t.Fatalf("%d %s spans, want %d", len(chunks), processChunk, len(want))
	}
	for i, w := range want {
		chunk := wantSpan(t, map[string]receivedSpan{processChunk: chunks[i]}, processChunk, internal, map[string]string{
			"bundle.timestamp": w.id,
			"bytes.total":      strconv.Itoa(w.size),
			"gorender.outcome": w.outcome,
		})
		chunk.childOf(t, stream)
		if (chunk.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR) != (w.outcome == "js_error") {
			t.Errorf("chunk %d (%s): status %v", i, w.outcome, chunk.Status)
		}
		if chunk.EndTimeUnixNano > ssr.EndTimeUnixNano {
			t.Errorf("chunk %d ends after the render", i)
		}
	}

	// Logs of a traced request carry its ids: the access log the request
	// span's, the bundle load's log the load span's.
	okReq := rcv.trace(t, okTrace)
	wantLogLine(t, s, "request", okTrace, hex.EncodeToString(okReq[renderSpan].SpanId))
	wantLogLine(t, s, "bundle loaded", okTrace, hex.EncodeToString(okReq[buildContext].SpanId))
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

// TestTracesHeadersNotLogged: OTLP exporter headers the OpenTelemetry SDK
// cannot read (no "=", a bad escape) are reported in the log by what is
// wrong, never by their text, which holds a vendor's key.
func TestTracesHeadersNotLogged(t *testing.T) {
	t.Parallel()
	rcv := newOTLPReceiver(t, "http")
	s := startServer(t, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        rcv.url,
		"OTEL_EXPORTER_OTLP_HEADERS":         "api-key SECRET-WITHOUT-EQUALS,x-api-key=SECRET-BAD-ESCAPE%zz",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "x-api-key=SECRET-TRACES%zz",
		"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "x-api-key=SECRET-METRICS%zz",
	})
	s.terminate(t)
	out := s.stderr.String()
	if strings.Contains(out, "SECRET") || !strings.Contains(out, "parse headers") {
		t.Errorf("want the malformed headers named without their text; stderr:\n%s", out)
	}
}
