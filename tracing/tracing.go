// Package tracing sends OpenTelemetry traces of gorender's requests to an
// OTLP collector, over HTTP or gRPC, when one is configured (the standard
// OTEL_* variables, read by config.Config): a request's span continues the
// W3C traceparent it arrived with, and has children for the steps of a
// render or an upload, under the Node renderer's span names where the step
// is one of its (SpanSSRRequest...), under gorender's own otherwise. Spans
// carry ids, sizes, outcomes and durations, never props, HTML or the
// rendering request's code. Logs written with a request's context carry its
// trace_id and span_id.
//
// Tracing off costs one nil check per would-be span: every package holds a
// nil trace.Tracer then, and Start returns at once.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Exporters and protocols gorender knows (OTEL_TRACES_EXPORTER,
// OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ExporterOTLP = "otlp"
	ExporterNone = "none"

	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolHTTPJSON     = "http/json"
	ProtocolGRPC         = "grpc"
)

// Samplers are the values of OTEL_TRACES_SAMPLER.
var Samplers = []string{
	"parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio",
	"always_on", "always_off", "traceidratio",
}

// Config is what config.Config reads from the OTEL_* variables. The
// exporter reads the rest of its settings (endpoint, headers, timeout,
// compression, certificates) from the OTEL_EXPORTER_OTLP_* variables
// itself, as every OpenTelemetry SDK does.
type Config struct {
	// Exporter is ExporterOTLP (traces on) or ExporterNone.
	Exporter string
	// Protocol is the OTLP transport of traces: ProtocolHTTPProtobuf,
	// ProtocolHTTPJSON or ProtocolGRPC.
	Protocol string
	// Endpoint and TracesEndpoint are OTEL_EXPORTER_OTLP_ENDPOINT and
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as configured ("": unset); the
	// exporter reads them itself.
	Endpoint, TracesEndpoint string
	// ServiceName is the resource's service.name.
	ServiceName string
	// Sampler is one of Samplers; SamplerArg the ratio of the
	// traceidratio ones.
	Sampler    string
	SamplerArg float64
}

// On reports whether traces are exported.
func (c Config) On() bool { return c.Exporter == ExporterOTLP }

// Tracing is a running trace pipeline: a tracer provider exporting in
// batches to the configured collector.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// New starts exporting traces as cfg says, or returns nil when cfg is off.
// version is gorender's (service.version). Export failures (a collector
// that is down) are logged as warnings on logger; spans beyond the batch
// queue's bound (OTEL_BSP_MAX_QUEUE_SIZE, 2048) are dropped, never held.
func New(cfg Config, version string, logger *slog.Logger) (*Tracing, error) {
	if !cfg.On() {
		return nil, nil
	}
	// The SDK's own log (a malformed OTEL_EXPORTER_OTLP_*HEADERS, say)
	// repeats the text it could not read, a vendor's key: it goes to
	// logger without its values.
	otel.SetLogger(logr.New(otelLog{logger}))
	ctx := context.Background()
	var exporter sdktrace.SpanExporter
	var err error
	// The endpoint and the protocol come from cfg (config.Config reads the
	// command's environment); the exporter reads the other
	// OTEL_EXPORTER_OTLP_* settings (headers, timeout, compression,
	// certificates) from the process environment itself.
	endpoint := cfg.TracesEndpoint
	switch cfg.Protocol {
	case ProtocolGRPC:
		var opts []otlptracegrpc.Option
		if endpoint == "" {
			endpoint = cfg.Endpoint
		}
		if endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		exporter, err = otlptracegrpc.New(ctx, opts...)
	case ProtocolHTTPProtobuf, ProtocolHTTPJSON:
		opts := []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingProtobuf)}
		if cfg.Protocol == ProtocolHTTPJSON {
			opts[0] = otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON)
		}
		if endpoint == "" && cfg.Endpoint != "" {
			// The base URL gets the signal's path, as the specification says.
			endpoint = strings.TrimSuffix(cfg.Endpoint, "/") + "/v1/traces"
		}
		if endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
		}
		exporter, err = otlptracehttp.New(ctx, opts...)
	default:
		err = fmt.Errorf("unknown OTLP protocol %q", cfg.Protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	// Lowest precedence first: gorender's name and version, then
	// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithAttributes(semconv.ServiceName(cfg.ServiceName), semconv.ServiceVersion(version)),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("OpenTelemetry: traces not exported", "err", err)
	}))
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exporter),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sampler(cfg.Sampler, cfg.SamplerArg)),
	)
	return &Tracing{provider: provider, tracer: provider.Tracer("github.com/gorender/gorender")}, nil
}

// sampler is OTEL_TRACES_SAMPLER's sampler.
func sampler(name string, ratio float64) sdktrace.Sampler {
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample()
	case "always_off":
		return sdktrace.NeverSample()
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio)
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
	}
	return sdktrace.ParentBased(sdktrace.AlwaysSample())
}

// Tracer is the tracer of gorender's spans; nil when t is (tracing off).
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tracer
}

// Shutdown exports the spans still queued, within ctx, and stops.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}

// propagator reads the W3C traceparent and tracestate headers.
var propagator = propagation.TraceContext{}

// StartRequest starts the server span of an HTTP request under the
// traceparent it carries (a new trace without one) and returns the
// request with the span in its context. The span is named after the
// method until SetRoute names it after the route.
func StartRequest(tracer trace.Tracer, r *http.Request) (*http.Request, trace.Span) {
	ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			semconv.HTTPRequestMethodKey.String(r.Method),
			semconv.URLPath(r.URL.Path),
			semconv.URLScheme("http"),
			semconv.NetworkProtocolVersion(protocolVersion(r)),
			semconv.UserAgentOriginal(r.UserAgent()),
		))
	return r.WithContext(ctx), span
}

func protocolVersion(r *http.Request) string {
	if r.ProtoMajor == 2 {
		return "2"
	}
	return fmt.Sprintf("%d.%d", r.ProtoMajor, r.ProtoMinor)
}

// EndRequest names the request's span after its route and ends it with its
// status and body sizes: an error for a 5xx (a 4xx is the client's).
func EndRequest(span trace.Span, method, route string, status int, read, written int64) {
	span.SetName(method + " " + route)
	span.SetAttributes(
		semconv.HTTPRoute(route),
		semconv.HTTPResponseStatusCode(status),
		semconv.HTTPRequestBodySize(int(read)),
		semconv.HTTPResponseBodySize(int(written)),
	)
	if status >= 500 {
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

// Start starts a span named name under ctx's, or does nothing when tracer
// is nil (tracing off): ctx comes back unchanged with a span that records
// nothing. Set attributes only when span.IsRecording().
func Start(ctx context.Context, tracer trace.Tracer, name string) (context.Context, trace.Span) {
	if tracer == nil {
		return ctx, noSpan
	}
	return tracer.Start(ctx, name)
}

// noSpan is the span of no trace: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// The Node renderer's span names, which gorender gives the steps that are
// the same (docs/observability.md "The Node renderer's spans"), so that
// trace queries written for it keep working.
const (
	// SpanSSRRequest is a render request's handling, from its body to its
	// answer (the render route; the render of line 1 on the incremental).
	SpanSSRRequest = "ror.ssr.request"
	// SpanBuildExecutionContext is a bundle's load: read, compiled and
	// evaluated in a runtime.
	SpanBuildExecutionContext = "ror.bundle.build_execution_context"
	// SpanBundleUpload is one bundle of an upload stored in the cache.
	SpanBundleUpload = "ror.bundle.upload"
	// SpanVMExecute is the rendering request's JavaScript running.
	SpanVMExecute = "ror.vm.execute"
	// SpanResultPrepare is a render's result or failure made its answer.
	SpanResultPrepare = "ror.result.prepare"
	// SpanIncrementalStream is an incremental render's NDJSON stream.
	SpanIncrementalStream = "ror.incremental.stream"
	// SpanProcessChunk is one update chunk of an incremental render.
	SpanProcessChunk = "ror.incremental.process_chunk"
)

// Attribute keys: the Node renderer's first, then gorender's own.
const (
	// BytesTotal is the size of what a step takes in: the rendering
	// request, a bundle with its companion files, an NDJSON stream or line.
	BytesTotal = attribute.Key("bytes.total")
	// BundleTimestamp is a bundle's id, PROTOCOL.md's "bundle timestamp".
	BundleTimestamp = attribute.Key("bundle.timestamp")
	// ResponseBytes is the size of an answer's body.
	ResponseBytes = attribute.Key("response.bytes")

	BundleDependencies = attribute.Key("gorender.bundle.dependencies")
	Engine             = attribute.Key("gorender.engine")
	Outcome            = attribute.Key("gorender.outcome")
)

// SetOutcome records outcome on span (a render's, a request's or a
// stream's; the words of the metrics' outcome labels) and marks the
// failures that are gorender's or the bundle's as errors. The status
// description is the outcome alone: an error's text may quote props.
func SetOutcome(span trace.Span, outcome string) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(Outcome.String(outcome))
	switch strings.TrimPrefix(outcome, "stream_") {
	case "ok", "rejected", "not_found_bundle", "canceled", "client_gone":
	default:
		span.SetStatus(codes.Error, outcome)
	}
}

// otelLog is the OpenTelemetry SDK's log on a slog.Logger: its errors as
// warnings with their message and error, never the key/value pairs (they
// hold the text it failed on, which may be a credential); its info lines
// (debugging) dropped.
type otelLog struct{ logger *slog.Logger }

func (otelLog) Init(logr.RuntimeInfo)    {}
func (otelLog) Enabled(int) bool         { return false }
func (otelLog) Info(int, string, ...any) {}
func (l otelLog) Error(err error, msg string, _ ...any) {
	l.logger.Warn("OpenTelemetry: "+msg, "err", err)
}
func (l otelLog) WithValues(...any) logr.LogSink { return l }
func (l otelLog) WithName(string) logr.LogSink   { return l }
