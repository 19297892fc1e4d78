package handlers

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
	"unsafe"

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
	// earlyAnswerDrain bounds how long an answer decided before the body's
	// end waits for the rest of it (drainBefore).
	earlyAnswerDrain = 200 * time.Millisecond
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
	if rp.status >= 400 {
		drainBefore(w, r)
	}
	h := w.Header()
	for k, v := range rp.header {
		h.Set(k, v)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(rp.body)))
	w.WriteHeader(rp.status)
	if r.Method != http.MethodHead {
		// The body's own bytes, not a copy: a medium page's 179 KB answer
		// was copied once more into a fresh []byte, since no wrapper of w
		// has WriteString. A Writer must not modify what it is given.
		_, _ = w.Write(unsafe.Slice(unsafe.StringData(rp.body), len(rp.body)))
	}
}

// drainBefore prepares an error answer decided before the body was read to
// its end (401 or 412 from the headers or the first parts, 413, 408, a 404
// with a body): it reads and drops what arrives of the body within
// earlyAnswerDrain, up to maxDrainBytes, so that a client still sending sees
// the status rather than a reset (PROTOCOL.md §1) without a stalled client
// holding the answer; dropped bytes are not charged to the Budget. If the
// body is still not at its end, an HTTP/1.1 connection closes after the
// answer: the rest of the body cannot be read as a next request, and
// net/http would otherwise wait for it.
func drainBefore(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	var src io.Reader = r.Body
	if g, ok := r.Body.(*guardedBody); ok {
		if g.eof {
			return
		}
		g.ownDeadline = true
		src = g.src
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(earlyAnswerDrain))
	if _, err := io.CopyN(io.Discard, src, maxDrainBytes); errors.Is(err, io.EOF) {
		return
	}
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
}

// WriteText writes a plain-text answer; the router uses it for 404 and 405.
func WriteText(w http.ResponseWriter, r *http.Request, status int, body string) {
	textReply(status, body).write(w, r)
}
