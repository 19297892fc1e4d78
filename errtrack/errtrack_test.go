package errtrack

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// ingest is a local Sentry endpoint: it keeps every envelope's body.
type ingest struct {
	mu     sync.Mutex
	bodies []string
}

func newIngest(t *testing.T) (*ingest, string) {
	in := &ingest{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		in.mu.Lock()
		in.bodies = append(in.bodies, r.URL.Path+"\n"+string(b))
		in.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return in, strings.Replace(srv.URL, "http://", "http://key@", 1) + "/7"
}

func (in *ingest) all() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return strings.Join(in.bodies, "\n")
}

// TestPanicEvent: a recovered panic goes to Sentry through the real SDK
// with the panicking function's frame, in-app.
func TestPanicEvent(t *testing.T) {
	in, dsn := newIngest(t)
	tr, err := New(Config{SentryDSN: dsn, SendTimeout: time.Second}, "test", "goja", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				tr.Panic("test", p, nil)
			}
		}()
		panicky()
	}()
	tr.Flush(5 * time.Second)
	got := in.all()
	if !strings.Contains(got, `"type":"panic"`) || !strings.Contains(got, "errtrack.panicky") || !strings.Contains(got, "the panic value") {
		t.Fatalf("the panic's event: %s", got)
	}
}

func panicky() { panic("the panic value") }
