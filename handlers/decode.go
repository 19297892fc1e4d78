package handlers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unsafe"
)

// Media types of the four body encodings of PROTOCOL.md §3.1.
const (
	// MediaTypeRawJS is the raw JavaScript render request, compared
	// case-sensitively.
	MediaTypeRawJS = "application/vnd.react-on-rails.render-request+javascript"
	// MediaTypeJSON is a JSON object of fields.
	MediaTypeJSON = "application/json"
	// MediaTypeForm is a URL-encoded form of fields.
	MediaTypeForm = "application/x-www-form-urlencoded"
	// MediaTypeMultipart is a multipart form of text and file parts.
	MediaTypeMultipart = "multipart/form-data"
)

// Default limits of PROTOCOL.md §12, used for the zero DecodeOptions fields.
const (
	// DefaultMaxBodyBytes is the largest accepted request body.
	DefaultMaxBodyBytes = 100 << 20
	// DefaultMaxFieldBytes is the largest accepted non-file multipart field.
	DefaultMaxFieldBytes = 10 << 20
	// DefaultMaxParts is the largest accepted number of multipart parts.
	DefaultMaxParts = 1000
)

// DecodeOptions are the limits and hooks of DecodeBody. A zero limit means
// its default.
type DecodeOptions struct {
	// MaxBodyBytes is the largest body (default 100 MiB); larger → 413.
	MaxBodyBytes int64
	// MaxFieldBytes is the largest non-file multipart part (default 10 MiB);
	// larger → 413. Form and JSON values are bounded by MaxBodyBytes only.
	MaxFieldBytes int64
	// MaxParts is the largest number of multipart parts (default 1000);
	// more → 413.
	MaxParts int
	// Stage is called once, at the first file part, after BeforeFirstFile
	// passed. Nil means that file parts are a 400.
	Stage func() (Stager, error)
	// BeforeFirstFile is the auth gate of PROTOCOL.md §6.1: it runs on the
	// fields seen so far before the first file part is staged; an error
	// stops decoding before anything touches the disk. Nil = no gate.
	BeforeFirstFile func(*Fields) *HTTPError
	// BeforeBody, when set, runs for a raw JS request on the fields read from
	// its headers (renderingRequest named but not yet read), before the body
	// is read: an error is returned without buffering the body. Nil = no gate.
	BeforeBody func(*Fields) *HTTPError
	// BeforeDecode, when set, runs for a JSON or form body on its head (the
	// field names and the precheck fields, see jsonHead) once the body is
	// read, before it is decoded: an error is returned without decoding it.
	// Nil = no gate.
	BeforeDecode func(*Fields) *HTTPError
	// PasswordPart, when set, is called with the fields so far after each
	// multipart text part named "password", so that a password that passes
	// authenticates the request before the rest of its body is read.
	PasswordPart func(*Fields)
}

// withDefaults fills the zero limits.
func (o DecodeOptions) withDefaults() DecodeOptions {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxFieldBytes <= 0 {
		o.MaxFieldBytes = DefaultMaxFieldBytes
	}
	if o.MaxParts <= 0 {
		o.MaxParts = DefaultMaxParts
	}
	return o
}

// DecodeBody decodes the request body into Fields, whatever its encoding
// (PROTOCOL.md §3.1): raw JS, JSON, form or multipart, by Content-Type.
// It answers 415 for another or a missing Content-Type, 413 over the limits
// and 400 for a malformed body. It neither closes nor drains the body on
// error: the caller drains it before answering. On error, files already
// staged stay in the Stager for the caller to remove.
func DecodeBody(w http.ResponseWriter, r *http.Request, opts DecodeOptions) (*Fields, *HTTPError) {
	opts = opts.withDefaults()
	contentType := r.Header.Get("Content-Type")
	kind, herr := bodyKind(contentType)
	if herr != nil {
		return nil, herr
	}
	if r.ContentLength > opts.MaxBodyBytes {
		return nil, bodyTooLarge(opts.MaxBodyBytes, nil)
	}
	src := r.Body
	if src == nil {
		src = http.NoBody
	}
	body := http.MaxBytesReader(w, src, opts.MaxBodyBytes)
	switch kind {
	case MediaTypeRawJS:
		return decodeRawJS(r, body, opts)
	case MediaTypeJSON:
		data, herr := readBody(body, r.ContentLength, false, "request body")
		if herr != nil {
			return nil, herr
		}
		if members, ok := scanFlatJSON(data); ok {
			if opts.BeforeDecode != nil {
				if herr := opts.BeforeDecode(flatHead(members)); herr != nil {
					return nil, herr
				}
			}
			return buildFlat(data, members)
		}
		if opts.BeforeDecode != nil {
			head, herr := jsonHead(data)
			if herr != nil {
				return nil, herr
			}
			if herr := opts.BeforeDecode(head); herr != nil {
				return nil, herr
			}
		}
		return decodeJSONGeneric(data)
	case MediaTypeForm:
		data, herr := readBody(body, r.ContentLength, false, "request body")
		if herr != nil {
			return nil, herr
		}
		if opts.BeforeDecode != nil {
			head, herr := formHead(data)
			if herr != nil {
				return nil, herr
			}
			if herr := opts.BeforeDecode(head); herr != nil {
				return nil, herr
			}
		}
		return decodeForm(data)
	default:
		return decodeMultipart(contentType, body, opts)
	}
}

// bodyKind returns the media type constant for a Content-Type header, or the
// 415 for an unsupported one. Parameters after ";" are ignored; the raw JS
// type is compared case-sensitively, the others case-insensitively.
func bodyKind(contentType string) (string, *HTTPError) {
	const expected = "Expected one of " + MediaTypeRawJS + ", " + MediaTypeJSON + ", " +
		MediaTypeForm + ", " + MediaTypeMultipart + "."
	base, _, _ := strings.Cut(contentType, ";")
	base = strings.TrimSpace(base)
	if base == MediaTypeRawJS {
		return MediaTypeRawJS, nil
	}
	for _, kind := range []string{MediaTypeJSON, MediaTypeForm, MediaTypeMultipart} {
		if strings.EqualFold(base, kind) {
			return kind, nil
		}
	}
	body := fmt.Sprintf("Unsupported Content-Type %q. %s", echo(base), expected)
	switch {
	case base == "":
		body = "Missing Content-Type header. " + expected
	case strings.EqualFold(base, MediaTypeRawJS):
		body += " The raw render request media type is case-sensitive."
	}
	return "", &HTTPError{Status: http.StatusUnsupportedMediaType, Body: body}
}

// bodyTooLarge returns the 413 for a body over limit.
func bodyTooLarge(limit int64, cause error) *HTTPError {
	return &HTTPError{
		Status: http.StatusRequestEntityTooLarge,
		Body:   fmt.Sprintf("Request body is larger than the limit of %d bytes.", limit),
		Cause:  cause,
	}
}

// readError maps an error reading the body: 413 over the limit, the
// Budget's refusal, 408 when the body stopped arriving, else 400.
func readError(what string, err error) *HTTPError {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return bodyTooLarge(tooLarge.Limit, err)
	}
	var refused *budgetRefusal
	if errors.As(err, &refused) {
		return refused.answer()
	}
	var timedOut *bodyTimeout
	if errors.As(err, &timedOut) {
		return timedOut.answer()
	}
	herr := badRequest("Invalid %s: %s.", what, echo(err.Error()))
	herr.Cause = fmt.Errorf("read %s: %w", what, err)
	return herr
}

// readBody reads a whole (size-limited) body. authenticated says that the
// request's password already passed: then, and only then, its
// Content-Length sizes the buffer (bytes.Buffer reads straight into its own
// storage; the MinRead slack lets it see EOF without growing again).
// Otherwise memory follows the bytes received (readAll).
func readBody(body io.Reader, contentLength int64, authenticated bool, what string) ([]byte, *HTTPError) {
	if !authenticated || contentLength <= 0 {
		data, err := readAll(body)
		if err != nil {
			return nil, readError(what, err)
		}
		return data, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(contentLength) + bytes.MinRead) // DecodeBody refused a Content-Length over the limit
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, readError(what, err)
	}
	return buf.Bytes(), nil
}

// Chunk sizes of readAll and chunks: the first, and the largest.
const (
	firstChunkSize = 4 << 10
	maxChunkSize   = 64 << 10
)

// readAll reads r to its end. Its memory follows the bytes received: they
// arrive in chunks (4 KiB, doubling up to 64 KiB) copied once into a buffer
// of their exact size, so n bytes cost at most 2n + 64 KiB while they are
// read and n after, whatever size the client declared (the 64 KiB chunks
// go back to a sync.Pool, which the collector empties).
func readAll(r io.Reader) ([]byte, error) {
	var c chunks
	for {
		n, err := r.Read(c.spare())
		c.filled(n)
		if errors.Is(err, io.EOF) {
			return c.bytes(), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// chunks is bytes received so far, in chunks of growing size.
type chunks struct {
	list [][]byte
	n    int
}

// spare returns the free end of the last chunk, adding a chunk when it is
// full.
func (c *chunks) spare() []byte {
	if k := len(c.list); k > 0 && len(c.list[k-1]) < cap(c.list[k-1]) {
		last := c.list[k-1]
		return last[len(last):cap(last)]
	}
	size := firstChunkSize
	if k := len(c.list); k > 0 {
		size = min(2*cap(c.list[k-1]), maxChunkSize)
	}
	var chunk []byte
	if size == maxChunkSize {
		chunk = (*fullChunks.Get().(*[maxChunkSize]byte))[:0]
	} else {
		chunk = make([]byte, 0, size)
	}
	c.list = append(c.list, chunk)
	return c.list[len(c.list)-1][:size]
}

// fullChunks recycles the largest chunks, which bytes copies out of: a
// large body's chunks then cost neither an allocation nor zeroing.
var fullChunks = sync.Pool{New: func() any { return new([maxChunkSize]byte) }}

// filled records that n bytes were written into spare().
func (c *chunks) filled(n int) {
	last := &c.list[len(c.list)-1]
	*last = (*last)[:len(*last)+n]
	c.n += n
}

// write appends p.
func (c *chunks) write(p []byte) {
	for len(p) > 0 {
		n := copy(c.spare(), p)
		c.filled(n)
		p = p[n:]
	}
}

// bytes returns everything written, as one slice.
func (c *chunks) bytes() []byte {
	switch len(c.list) {
	case 0:
		return nil
	case 1:
		return c.list[0]
	}
	out := make([]byte, 0, c.n)
	for _, chunk := range c.list {
		out = append(out, chunk...)
		if cap(chunk) == maxChunkSize {
			fullChunks.Put((*[maxChunkSize]byte)(chunk[:maxChunkSize]))
		}
	}
	c.list, c.n = nil, 0 // the chunks are recycled: bytes is called once
	return out
}

// bytesString returns b's bytes as a string, without a copy: b must never
// change again.
func bytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
