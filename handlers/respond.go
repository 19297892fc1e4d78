package handlers

import (
	"io"
	"net/http"
	"strconv"

	"github.com/bytedance/sonic"
)

// Every status, header set and body shape of PROTOCOL.md is written here.

const (
	contentTypeText = "text/plain; charset=utf-8"
	contentTypeJSON = "application/json; charset=utf-8"
	cacheNoStore    = "no-cache, no-store, max-age=0, must-revalidate"
	cacheRender     = "public, max-age=31536000"
	// maxDrainBytes is how much unread body is discarded before an early
	// answer, so that an h2 client still uploading sees the status.
	maxDrainBytes = 1 << 20
)

// reply is an answer, decided before it is written so that the request's
// staging directory can be removed first.
type reply struct {
	status int
	body   string
	header map[string]string
}

func textReply(status int, body string) reply {
	r := reply{status: status, body: body, header: map[string]string{
		"Content-Type": contentTypeText,
	}}
	if status >= 400 {
		r.header["Cache-Control"] = cacheNoStore
	}
	return r
}

func errorReply(e *HTTPError) reply {
	rp := textReply(e.Status, e.Body)
	if e.Status == http.StatusServiceUnavailable {
		rp.header["Retry-After"] = "1"
	}
	return rp
}

// renderReply is a successful render: the bundle's bytes, verbatim.
func renderReply(body string) reply {
	return reply{status: http.StatusOK, body: body, header: map[string]string{
		"Content-Type":  contentTypeText,
		"Cache-Control": cacheRender,
	}}
}

func jsonReply(status int, v any) reply {
	body, err := sonic.ConfigStd.MarshalToString(v)
	if err != nil {
		return textReply(http.StatusInternalServerError, "Internal error: could not encode the answer")
	}
	return reply{status: status, body: body, header: map[string]string{"Content-Type": contentTypeJSON}}
}

// write sends the reply with Content-Length, never chunked. An error answer
// first drains what is left of the request body.
func (rp reply) write(w http.ResponseWriter, r *http.Request) {
	if rp.status >= 400 && r.Body != nil {
		if g, ok := r.Body.(*guardedBody); ok {
			g.discard(maxDrainBytes)
		} else {
			_, _ = io.CopyN(io.Discard, r.Body, maxDrainBytes)
		}
	}
	h := w.Header()
	for k, v := range rp.header {
		h.Set(k, v)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(rp.body)))
	w.WriteHeader(rp.status)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, rp.body)
	}
}

// WriteText writes a plain-text answer; the router uses it for 404 and 405.
func WriteText(w http.ResponseWriter, r *http.Request, status int, body string) {
	textReply(status, body).write(w, r)
}
