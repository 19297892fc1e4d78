package errtrack

import (
	"net/http"

	"github.com/getsentry/sentry-go"
	"github.com/go-chi/chi/v5"
)

// Middleware reports a panic in a handler as a recovered Go panic, then
// panics on with it for the server's own recovery (which logs it and
// answers 500); with SENTRY_TRACES_SAMPLE_RATE above 0 it also sends a
// sample of the POSTs (the gem's requests) to Sentry as transactions named
// by their route, continuing a sentry-trace header's trace id (not its
// sampling decision: see newSentry). Place it inside the server's recovery.
func (t *Tracker) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p != http.ErrAbortHandler { // a stream ended abruptly on purpose
					t.Panic("handler", p, nil)
				}
				panic(p)
			}
		}()
		if t.transactions == nil || r.Method != http.MethodPost {
			// Probes, scrapes and /info are not requests of the gem's.
			next.ServeHTTP(w, r)
			return
		}
		ctx := sentry.SetHubOnContext(r.Context(), sentry.NewHub(t.transactions, sentry.NewScope()))
		tx := sentry.StartTransaction(ctx, r.Method+" unmatched",
			sentry.WithOpName("http.server"),
			sentry.ContinueFromHeaders(r.Header.Get(sentry.SentryTraceHeader), r.Header.Get(sentry.SentryBaggageHeader)),
			sentry.WithTransactionSource(sentry.SourceRoute))
		defer tx.Finish()
		next.ServeHTTP(w, r.WithContext(tx.Context()))
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			tx.Name = r.Method + " " + rc.RoutePattern()
		}
	})
}
