package handlers

import (
	"maps"
	"net/http"
	"runtime"

	"github.com/gorender/gorender/auth"
)

// Info serves GET|HEAD /info (PROTOCOL.md §9): node_version is the Go
// version unless the engine runs Node.js and says which.
func (h *Handlers) Info(w http.ResponseWriter, r *http.Request) {
	info := map[string]string{
		"node_version":     runtime.Version(),
		"renderer_version": h.RendererVersion,
		"commit":           h.RendererCommit,
		"build_date":       h.BuildDate,
		"protocol_version": auth.ProtocolVersion,
		"engine":           h.Engine,
	}
	maps.Copy(info, h.EngineInfo)
	jsonReply(http.StatusOK, info).write(w, r)
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
