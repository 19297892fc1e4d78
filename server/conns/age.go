package conns

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// connAgeKey is the context key of a connection's retirement time.
type connAgeKey struct{}

// StampAge returns an http.Server.ConnContext that records, for each
// accepted connection, when it becomes older than maxAge, with ±10% jitter
// so that connections opened together (a client's pool after a deploy) do
// not all retire at once.
func StampAge(maxAge time.Duration) func(context.Context, net.Conn) context.Context {
	return func(ctx context.Context, _ net.Conn) context.Context {
		jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(maxAge))
		return context.WithValue(ctx, connAgeKey{}, time.Now().Add(maxAge+jitter))
	}
}

// RetireOld marks every answer on a connection past its maximum age
// (RENDERER_MAX_CONNECTION_AGE) with "Connection: close". Over HTTP/1.1 the
// server closes the connection after that answer; over h2c net/http strips
// the header and starts a graceful shutdown of the connection: a GOAWAY,
// streams in flight finish, and the client opens a new connection (to
// whichever replica its balancer picks) for its next requests. A connection
// that sends nothing more is left to the idle timeout.
func RetireOld(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if retire, ok := r.Context().Value(connAgeKey{}).(time.Time); ok && !time.Now().Before(retire) {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}
