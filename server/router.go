package server

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/gorender/gorender/handlers"
	"github.com/gorender/gorender/metrics"
)

// NewRouter lists every route of PROTOCOL.md §2; it is the only place that does.
func NewRouter(h *handlers.Handlers, m *metrics.Metrics, mw ...func(http.Handler) http.Handler) http.Handler {
	r := chi.NewRouter()
	r.Use(mw...)
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		handlers.WriteText(w, req, http.StatusNotFound, "Not found")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		var allowed []string
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
			if r.Match(chi.NewRouteContext(), m, req.URL.Path) {
				allowed = append(allowed, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		handlers.WriteText(w, req, http.StatusMethodNotAllowed, "Method not allowed")
	})
	r.Post("/bundles/{bundleId}/render/{digest}", h.Render)
	r.Post("/bundles/{bundleId}/incremental-render/{digest}", h.IncrementalRender)
	r.Post("/upload-assets", h.UploadAssets)
	r.Post("/asset-exists", h.AssetExists)
	r.Get("/info", h.Info)
	r.Head("/info", h.Info)
	r.Get("/health", h.Health)
	r.Get("/ready", h.Ready)
	if m != nil {
		r.Method(http.MethodGet, "/metrics", m.Handler())
	}
	return r
}
