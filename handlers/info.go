package handlers

import (
	"net/http"
	"runtime"

	"github.com/gorender/gorender/auth"
)

// Info serves GET|HEAD /info.
func (h *Handlers) Info(w http.ResponseWriter, r *http.Request) {
	jsonReply(http.StatusOK, map[string]string{
		"node_version":     runtime.Version(),
		"renderer_version": h.RendererVersion,
		"protocol_version": auth.ProtocolVersion,
		"engine":           h.Engine,
	}).write(w, r)
}

// Health serves GET /health: the process serves HTTP.
func (h *Handlers) Health(w http.ResponseWriter, r *http.Request) {
	jsonReply(http.StatusOK, map[string]string{"status": "ok"}).write(w, r)
}

// Ready serves GET /ready (PROTOCOL.md §9).
func (h *Handlers) Ready(w http.ResponseWriter, r *http.Request) {
	ready, status := h.Readiness.Ready()
	if ready {
		jsonReply(http.StatusOK, map[string]string{"status": "ready"}).write(w, r)
		return
	}
	rp := jsonReply(http.StatusServiceUnavailable, map[string]string{"status": status})
	rp.header["Retry-After"] = "5"
	rp.header["Cache-Control"] = cacheNoStore
	rp.write(w, r)
}
