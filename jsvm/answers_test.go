package jsvm

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTruncateMiddle(t *testing.T) {
	long := strings.Repeat("a", 600) + strings.Repeat("é", 600)
	got := TruncateMiddle(long, MaxDebugSnippetLength)
	if n := len([]rune(got)); n != MaxDebugSnippetLength {
		t.Fatalf("length %d", n)
	}
	if !strings.HasPrefix(got, "aaa") || !strings.HasSuffix(got, "éé") || !strings.Contains(got, truncationFiller) {
		t.Fatalf("bad truncation %q", got)
	}
	if TruncateMiddle("short", 10) != "short" {
		t.Fatal("short string changed")
	}
}

// TestOptionsProcessEnv: process.env is Options.Environ without gorender's credentials and
// malformed entries, in order, a repeated key at its first place with its
// last value, NODE_ENV defaulting to production.
func TestOptionsProcessEnv(t *testing.T) {
	got := Options{Environ: []string{"PATH=/bin", "RENDERER_PASSWORD=secret", "=x", "junk", "A=1", "EMPTY=", "A=2"}}.ProcessEnv()
	want := [][2]string{{"PATH", "/bin"}, {"A", "2"}, {"EMPTY", ""}, {"NODE_ENV", "production"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	got = Options{Environ: []string{"NODE_ENV=development"}}.ProcessEnv()
	if want := [][2]string{{"NODE_ENV", "development"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := (Options{}).ProcessEnv(); !reflect.DeepEqual(got, [][2]string{{"NODE_ENV", "production"}}) {
		t.Fatalf("nil Environ: got %q", got)
	}
	// gorender's credentials are hidden by rule, every OTLP exporter's
	// headers included; the application's own variables stay.
	got = Options{Environ: []string{"SENTRY_DSN=k", "HONEYBADGER_API_KEY=k", "OTEL_EXPORTER_OTLP_HEADERS=k",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS=k", "OTEL_EXPORTER_OTLP_METRICS_HEADERS=k", "OTEL_EXPORTER_OTLP_LOGS_HEADERS=k",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://collector", "SECRET_KEY_BASE=app", "NODE_ENV=test"}}.ProcessEnv()
	want = [][2]string{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector"}, {"SECRET_KEY_BASE", "app"}, {"NODE_ENV", "test"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("credentials: got %q, want %q", got, want)
	}
}

// TestInterruptedError: a render stopped because its context ended names
// the limit of a *DeadlineError cause (how the worker sets deadlines); with
// a plain deadline, the time from the render's start to the deadline,
// rounded up to the millisecond; a context canceled otherwise is a
// cancellation.
func TestInterruptedError(t *testing.T) {
	started := time.Now()
	wait := func(ctx context.Context) context.Context {
		<-ctx.Done()
		return ctx
	}

	ctx, cancel := context.WithTimeoutCause(context.Background(), time.Millisecond, &DeadlineError{Limit: 30 * time.Second})
	defer cancel()
	if got := InterruptedError(wait(ctx), started); got.Kind != KindTimeout || got.Text != TimeoutText(30*time.Second) {
		t.Fatalf("with a cause: %+v", got)
	}

	ctx, cancel = context.WithDeadline(context.Background(), started.Add(100*time.Millisecond-time.Microsecond))
	defer cancel()
	if got := InterruptedError(wait(ctx), started); got.Kind != KindTimeout || got.Text != TimeoutText(100*time.Millisecond) {
		t.Fatalf("plain deadline: %+v", got)
	}

	ctx, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(errors.New("client gone"))
	if got := InterruptedError(ctx, started); got.Kind != KindCanceled || got.Text != CanceledText {
		t.Fatalf("canceled: %+v", got)
	}
}
