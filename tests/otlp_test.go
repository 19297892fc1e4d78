package tests

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a real OTLP endpoint in the test process, over HTTP
// (POST /v1/traces, protobuf or JSON, gzip or not) or gRPC (the
// TraceService), keeping every span it receives.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	url string // the OTEL_EXPORTER_OTLP_ENDPOINT to give gorender

	mu    sync.Mutex
	spans []receivedSpan
	// encodings counts the exports by how they came: "grpc", or the
	// Content-Type of an OTLP/HTTP one.
	encodings map[string]int
}

// receivedSpan is a span with the resource it came with.
type receivedSpan struct {
	*tracepb.Span
	resource map[string]string
}

// newOTLPReceiver listens on a free loopback port; protocol is "http" or
// "grpc". It stops when the test ends.
func newOTLPReceiver(t *testing.T, protocol string) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rcv := &otlpReceiver{url: "http://" + ln.Addr().String(), encodings: map[string]int{}}
	switch protocol {
	case "grpc":
		srv := grpc.NewServer()
		coltracepb.RegisterTraceServiceServer(srv, rcv)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(srv.Stop)
	case "http":
		srv := &http.Server{Handler: http.HandlerFunc(rcv.serveHTTP)}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
	default:
		t.Fatalf("unknown OTLP protocol %q", protocol)
	}
	return rcv
}

// Export is the gRPC TraceService's method.
func (rcv *otlpReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	rcv.keep("grpc", req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// serveHTTP is OTLP/HTTP's POST /v1/traces.
func (rcv *otlpReceiver) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.Error(w, "not an OTLP traces request: "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := &coltracepb.ExportTraceServiceRequest{}
	unmarshal, contentType := proto.Unmarshal, "application/x-protobuf"
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		unmarshal, contentType = unmarshalOTLPJSON, "application/json"
	}
	if err := unmarshal(data, req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rcv.keep(contentType, req)
	answer, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	if contentType == "application/json" {
		answer, _ = protojson.Marshal(&coltracepb.ExportTraceServiceResponse{})
	}
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(answer)
}

// unmarshalOTLPJSON reads OTLP/JSON, which differs from protobuf's JSON
// mapping in one way: trace and span ids are hex, not base64.
func unmarshalOTLPJSON(data []byte, m proto.Message) error {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if id, ok := e.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
					b, err := hex.DecodeString(id)
					if err != nil {
						return fmt.Errorf("%s %q is not hex: %w", k, id, err)
					}
					x[k] = base64.StdEncoding.EncodeToString(b)
					continue
				}
				if err := walk(e); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range x {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(doc); err != nil {
		return err
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return protojson.Unmarshal(data, m)
}

func (rcv *otlpReceiver) keep(encoding string, req *coltracepb.ExportTraceServiceRequest) {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	rcv.encodings[encoding]++
	for _, rs := range req.ResourceSpans {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, span := range ss.Spans {
				rcv.spans = append(rcv.spans, receivedSpan{Span: span, resource: res})
			}
		}
	}
}

// received returns every span so far.
func (rcv *otlpReceiver) received() []receivedSpan {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	return append([]receivedSpan(nil), rcv.spans...)
}

// encodingsSeen returns how the exports came, and how many of each.
func (rcv *otlpReceiver) encodingsSeen() map[string]int {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	return maps.Clone(rcv.encodings)
}

// trace returns the spans of one trace, by name; a name seen twice fails t
// unless it is one of repeated (whose spans named returns).
func (rcv *otlpReceiver) trace(t *testing.T, traceID string, repeated ...string) map[string]receivedSpan {
	t.Helper()
	byName := map[string]receivedSpan{}
	for _, s := range rcv.received() {
		if hex.EncodeToString(s.TraceId) != traceID {
			continue
		}
		if _, dup := byName[s.Name]; dup && !slices.Contains(repeated, s.Name) {
			t.Errorf("trace %s has two spans named %q", traceID, s.Name)
		}
		byName[s.Name] = s
	}
	return byName
}

// named returns the spans of one trace named name, in the order they started.
func (rcv *otlpReceiver) named(traceID, name string) []receivedSpan {
	var out []receivedSpan
	for _, s := range rcv.received() {
		if hex.EncodeToString(s.TraceId) == traceID && s.Name == name {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b receivedSpan) int { return cmp.Compare(a.StartTimeUnixNano, b.StartTimeUnixNano) })
	return out
}

// root returns the only span named name, a root span (its request came
// without a traceparent).
func (rcv *otlpReceiver) root(t *testing.T, name string) receivedSpan {
	t.Helper()
	span := rcv.withAttr(t, name, "", "")
	if len(span.ParentSpanId) != 0 {
		t.Errorf("span %q has a parent %x, want a root span", name, span.ParentSpanId)
	}
	return span
}

// withAttr returns the only span named name whose attribute key is value
// (key "": any span named name).
func (rcv *otlpReceiver) withAttr(t *testing.T, name, key, value string) receivedSpan {
	t.Helper()
	var found []receivedSpan
	for _, s := range rcv.received() {
		if s.Name == name && (key == "" || s.attrs()[key] == value) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var seen []string
		for _, s := range rcv.received() {
			seen = append(seen, s.Name)
		}
		t.Fatalf("%d spans %q with %s=%q, want 1; the receiver got %v", len(found), name, key, value, seen)
	}
	return found[0]
}

// attrMap renders attributes as strings (slices as [a b]).
func attrMap(attrs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range attrs {
		m[kv.Key] = anyValue(kv.Value)
	}
	return m
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.Values {
			parts = append(parts, anyValue(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case *commonpb.AnyValue_BytesValue:
		return string(x.BytesValue)
	}
	return v.String()
}

// attrs is a span's attributes as strings.
func (s receivedSpan) attrs() map[string]string { return attrMap(s.Attributes) }

// after checks that s started once earlier had ended.
func (s receivedSpan) after(t *testing.T, earlier receivedSpan) {
	t.Helper()
	if s.StartTimeUnixNano < earlier.EndTimeUnixNano {
		t.Errorf("span %q starts before %q ends", s.Name, earlier.Name)
	}
}

// childOf checks that s's parent is parent.
func (s receivedSpan) childOf(t *testing.T, parent receivedSpan) {
	t.Helper()
	if !bytes.Equal(s.ParentSpanId, parent.SpanId) {
		t.Errorf("span %q has parent %x, want %q (%x)", s.Name, s.ParentSpanId, parent.Name, parent.SpanId)
	}
}
