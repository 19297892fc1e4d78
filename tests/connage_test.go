package tests

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// withConnTrace calls got with the local address of the connection each
// request of c goes on.
func withConnTrace(c context.Context, got func(local string)) context.Context {
	return httptrace.WithClientTrace(c, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { got(info.Conn.LocalAddr().String()) },
	})
}

// TestMaxConnectionAge: with RENDERER_MAX_CONNECTION_AGE, a connection
// older than the age is retired gracefully at its next answer (HTTP/1.1:
// Connection: close; h2c: GOAWAY) and the client's next request opens a
// new one; under continuous load no request fails.
func TestMaxConnectionAge(t *testing.T) {
	t.Parallel()
	const age = 500 * time.Millisecond
	s := startServer(t, map[string]string{"RENDERER_MAX_CONNECTION_AGE": age.String(), "RENDERER_WORKERS_COUNT": "2"})
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("rebalanced")}, nil)
	// Load the bundle first, so that the connections under test see only
	// quick renders.
	s.render(t, transports[0], id, "MARKER").want(t, transports[0], http.StatusOK, "rebalanced")
	eachTransport(t, func(t *testing.T, tr transport) {
		var lastConn string
		trace := func(c context.Context) context.Context {
			return withConnTrace(c, func(local string) { lastConn = local })
		}
		var gem *gemclient.Client
		render := func() *response {
			t.Helper()
			r, err := gem.RenderRaw(trace(ctx(t)), gemclient.Render{BundleID: id, Code: "MARKER"})
			return fromGem(t, r, err)
		}
		// A young connection is kept. A connection retires at the earliest
		// 0.9 × age after it was opened (the jitter), so two renders that end
		// sooner than that after the client started must share one; on a
		// machine too slow for that, a fresh client tries again.
		var first string
		for attempt := 1; ; attempt++ {
			client := gemclient.NewHTTPClient(tr.h2c)
			defer client.CloseIdleConnections()
			gem = s.gem(tr)
			gem.HTTP = client
			opened := time.Now()
			render().want(t, tr, http.StatusOK, "rebalanced")
			first = lastConn
			render().want(t, tr, http.StatusOK, "rebalanced")
			if time.Since(opened) < age*9/10 {
				break
			}
			client.CloseIdleConnections()
			if attempt == 3 {
				t.Fatalf("two renders took longer than %s on 3 fresh connections: too slow to tell a young connection", age*9/10)
			}
		}
		if lastConn != first {
			t.Fatalf("a connection younger than %s was not reused", age)
		}
		// Past the age (+10% jitter) the next answer is still served on the
		// old connection, and retires it (net/http's client hides the
		// Connection: close header; the next request shows its effect).
		time.Sleep(age * 12 / 10)
		render().want(t, tr, http.StatusOK, "rebalanced")
		if lastConn != first {
			t.Fatalf("the render after the age went on a new connection already")
		}
		time.Sleep(50 * time.Millisecond) // let the GOAWAY arrive
		render().want(t, tr, http.StatusOK, "rebalanced")
		if lastConn == first {
			t.Errorf("the old connection was used again after its answer retired it")
		}

		// Continuous load from 4 clients for at least 2 s and until two
		// connections beyond the first ones have carried renders (h2c: the
		// clients share one connection; HTTP/1.1: one each): connections
		// turn over, nothing fails (the client retries a request the GOAWAY
		// refused). On a slow machine that takes longer, not fewer
		// connections; 60 s only ends a wait that never comes.
		want := 1 + 2
		if !tr.h2c {
			want = 4 + 2
		}
		var mu sync.Mutex
		loadConns := map[string]bool{}
		var wg sync.WaitGroup
		var ok, failures atomic.Int32
		c := ctx(t)
		started := time.Now()
		deadline := started.Add(60 * time.Second)
		enough := func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(loadConns) >= want && time.Since(started) >= 2*time.Second || time.Now().After(deadline)
		}
		for range 4 {
			wg.Go(func() {
				for !enough() {
					traced := withConnTrace(c, func(local string) {
						mu.Lock()
						loadConns[local] = true
						mu.Unlock()
					})
					r, err := gem.RenderRaw(traced, gemclient.Render{BundleID: id, Code: "MARKER"})
					if err != nil || r.Status != http.StatusOK || r.Body != "rebalanced" {
						failures.Add(1)
						if err == nil {
							err = fmt.Errorf("status %d: %s", r.Status, clip(r.Body))
						}
						t.Errorf("render under connection turnover: %v", err)
						continue
					}
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		took := time.Since(started).Round(time.Millisecond)
		if failures.Load() > 0 || len(loadConns) < want {
			t.Errorf("%d failures and %d connections in %s with a %s maximum age: want 0 and at least %d", failures.Load(), len(loadConns), took, age, want)
		}
		t.Logf("%d renders over %d connections in %s", ok.Load(), len(loadConns), took)
	})
}
