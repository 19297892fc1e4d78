package handlers

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unsafe"

	"github.com/bytedance/sonic/ast"
	"github.com/bytedance/sonic/encoder"

	"github.com/gorender/gorender/auth"
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

// maxJSONDepth bounds the nesting of a JSON body, so that a hostile body
// cannot exhaust the stack.
const maxJSONDepth = 512

// Header names of the raw JS encoding's metadata (PROTOCOL.md §3.1).
const (
	headerProtocolVersion  = "X-React-On-Rails-Pro-Protocol-Version"
	headerGemVersion       = "X-React-On-Rails-Pro-Gem-Version"
	headerRailsEnv         = "X-React-On-Rails-Pro-Rails-Env"
	headerDependencyBundle = "X-React-On-Rails-Pro-Dependency-Bundle-Timestamps"
	headerRSCObservability = "X-React-On-Rails-Pro-Rsc-Stream-Observability"
)

// Stager receives uploaded file parts: the bundles cache implements it with a
// per-request staging directory.
type Stager interface {
	// Stage streams r into a new file in the request's staging directory and
	// returns its path and size.
	Stage(r io.Reader) (path string, size int64, err error)
}

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

// decodeRawJS decodes a raw JS render request: metadata from the headers,
// renderingRequest = the body verbatim.
func decodeRawJS(r *http.Request, body io.Reader, opts DecodeOptions) (*Fields, *HTTPError) {
	f := &Fields{}
	headerFields := []struct{ header, name string }{
		{headerProtocolVersion, "protocolVersion"},
		{headerGemVersion, "gemVersion"},
		{headerRailsEnv, "railsEnv"},
		{headerRSCObservability, "rscStreamObservability"},
	}
	for _, h := range headerFields {
		if values := r.Header.Values(h.header); len(values) > 0 {
			f.set(h.name, values[0])
		}
	}
	if values := r.Header.Values(headerDependencyBundle); len(values) > 0 {
		ids, err := parseDependencyHeader(values[0])
		if err != nil {
			f.setError("dependencyBundleTimestamps", badRequest("Invalid dependency bundle timestamps header: %s", err))
		} else {
			f.set("dependencyBundleTimestamps", ids)
		}
	}
	if values := r.Header.Values("Authorization"); len(values) > 0 {
		if password, ok := bearerToken(values[0]); ok {
			f.set("password", password)
		} else {
			f.setError("password", badRequest("Invalid Authorization header for raw render request."))
		}
	}
	// The body is the renderingRequest: name it now, so that an early 412
	// lists the same fields as a late one.
	f.slot("renderingRequest")
	f.metadataComplete = true
	if opts.BeforeBody != nil {
		if herr := opts.BeforeBody(f); herr != nil {
			return nil, herr
		}
	}
	// With a gate the password has passed by now; without one (tests) the
	// body is read as an unauthenticated one.
	data, herr := readBody(body, r.ContentLength, opts.BeforeBody != nil, "raw render request body")
	if herr != nil {
		return nil, herr
	}
	// The body's own bytes, not a copy (a medium page's request is 137
	// KB, a large one's 1.2 MB): readBody's buffer is this request's alone
	// and nothing writes to it again.
	f.set("renderingRequest", unsafe.String(unsafe.SliceData(data), len(data)))
	return f, nil
}

// parseDependencyHeader parses the dependency bundle header: a JSON array of
// strings. It returns the array as []any, as a JSON body would give it.
func parseDependencyHeader(value string) ([]any, error) {
	if value == "[]" {
		// What the gem sends for a render without dependency bundles,
		// the common case: no JSON parse.
		return []any{}, nil
	}
	v, err := parseJSONValue([]byte(value))
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("expected a JSON array of strings")
	}
	for _, item := range list {
		if _, ok := item.(string); !ok {
			return nil, errors.New("expected a JSON array of strings")
		}
	}
	return list, nil
}

// bearerToken extracts the password from "Bearer <password>" (scheme
// case-insensitive, as HTTP auth schemes are); ok is false for another scheme.
func bearerToken(header string) (password string, ok bool) {
	const scheme = "bearer"
	if len(header) < len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return "", false
	}
	rest := header[len(scheme):]
	if rest == "" {
		return "", true
	}
	if rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	return strings.TrimLeft(rest, " \t"), true
}

// DecodeJSONObject decodes a JSON object (a JSON body, or the first NDJSON
// line of an incremental render) into Fields, keeping the key order. It
// answers 400 `Invalid JSON body: <reason>` when data is not a JSON object.
// data must not change while the Fields are in use: strings may share its
// bytes.
func DecodeJSONObject(data []byte) (*Fields, *HTTPError) {
	if members, ok := scanFlatJSON(data); ok {
		return buildFlat(data, members)
	}
	return decodeJSONGeneric(data)
}

// decodeJSONGeneric is DecodeJSONObject for any JSON: every body that is
// not flat (scanFlatJSON), and every error.
func decodeJSONGeneric(data []byte) (*Fields, *HTTPError) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, badRequest("Invalid JSON body: the body is empty.")
	}
	if pos, ok := validJSON(data); !ok {
		return nil, badRequest("Invalid JSON body: %s.", syntaxError(data, pos))
	}
	b := &jsonBuilder{fields: &Fields{}}
	// data is never modified after this point, so it may back the strings.
	if err := ast.Preorder(unsafe.String(unsafe.SliceData(data), len(data)), b, nil); err != nil {
		if errors.Is(err, errNotObject) || errors.Is(err, errTooDeep) {
			return nil, badRequest("Invalid JSON body: %s.", err)
		}
		herr := badRequest("Invalid JSON body: malformed JSON.")
		herr.Cause = fmt.Errorf("decode JSON body: %w", err)
		return nil, herr
	}
	return b.fields, nil
}

// parseJSONValue parses one JSON value of any type.
func parseJSONValue(data []byte) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty value")
	}
	if pos, ok := validJSON(data); !ok {
		return nil, errors.New(syntaxError(data, pos))
	}
	b := &jsonBuilder{anyRoot: true}
	if err := ast.Preorder(string(data), b, nil); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	return b.root, nil
}

// validJSON reports whether data is one valid JSON value (RFC 8259), else
// the offset of the first offending byte. sonic's validator lets raw control
// characters through inside strings, which JSON (and JSON.parse) forbids, so
// those are checked here. Invalid UTF-8 is let through.
func validJSON(data []byte) (pos int, ok bool) {
	if ok, pos := encoder.Valid(data); !ok {
		return pos, false
	}
	if !hasControlByte(data) {
		return 0, true // the gem's compact JSON: nothing to place
	}
	inString, escaped := false, false
	for i, c := range data {
		switch {
		case escaped:
			escaped = false
		case !inString:
			inString = c == '"'
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c < 0x20:
			return i, false
		}
	}
	return 0, true
}

// hasControlByte reports whether data has a byte below 0x20, eight bytes at
// a time (a byte-by-byte string state machine was a third of decoding a
// 1.2 MB JSON body).
func hasControlByte(data []byte) bool {
	const highs, limit = 0x8080808080808080, 0x20 * 0x0101010101010101
	i := 0
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		// A byte is below 0x20 iff subtracting 0x20 borrows into its high bit
		// while its own high bit is clear.
		if (x-limit)&^x&highs != 0 {
			return true
		}
	}
	for ; i < len(data); i++ {
		if data[i] < 0x20 {
			return true
		}
	}
	return false
}

// syntaxError describes where data stops being valid JSON, without echoing it.
func syntaxError(data []byte, pos int) string {
	if pos < 0 || pos >= len(data) {
		return "unexpected end of JSON input"
	}
	return fmt.Sprintf("syntax error at byte offset %d", pos)
}

var (
	errNotObject = errors.New("expected a JSON object")
	errTooDeep   = fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
)

// jsonBuilder is an ast.Visitor that builds Go values; the top-level object's
// members go, in order, into fields (or the whole value into root when
// anyRoot is set).
type jsonBuilder struct {
	fields  *Fields
	anyRoot bool
	root    any
	stack   []jsonFrame
}

// jsonFrame is an array or object under construction.
type jsonFrame struct {
	array  []any
	object map[string]any
	isObj  bool
	key    string
}

// value stores a completed value into its parent.
func (b *jsonBuilder) value(v any) error {
	n := len(b.stack)
	if n == 0 {
		if !b.anyRoot {
			return errNotObject
		}
		b.root = v
		return nil
	}
	top := &b.stack[n-1]
	switch {
	case !top.isObj:
		top.array = append(top.array, v)
	case n == 1 && !b.anyRoot:
		b.fields.set(top.key, v)
	default:
		top.object[top.key] = v
	}
	return nil
}

// push opens a container, bounding the depth.
func (b *jsonBuilder) push(frame jsonFrame) error {
	if len(b.stack) >= maxJSONDepth {
		return errTooDeep
	}
	b.stack = append(b.stack, frame)
	return nil
}

// pop closes the innermost container and stores it into its parent.
func (b *jsonBuilder) pop() error {
	n := len(b.stack)
	top := b.stack[n-1]
	b.stack = b.stack[:n-1]
	if n == 1 && !b.anyRoot {
		return nil // the top-level object's members are already in fields
	}
	if top.isObj {
		return b.value(top.object)
	}
	if top.array == nil {
		top.array = []any{}
	}
	return b.value(top.array)
}

// OnNull implements ast.Visitor.
func (b *jsonBuilder) OnNull() error { return b.value(nil) }

// OnBool implements ast.Visitor.
func (b *jsonBuilder) OnBool(v bool) error { return b.value(v) }

// OnString implements ast.Visitor.
func (b *jsonBuilder) OnString(v string) error { return b.value(v) }

// OnInt64 implements ast.Visitor.
func (b *jsonBuilder) OnInt64(_ int64, n json.Number) error { return b.value(n) }

// OnFloat64 implements ast.Visitor.
func (b *jsonBuilder) OnFloat64(_ float64, n json.Number) error { return b.value(n) }

// OnObjectBegin implements ast.Visitor.
func (b *jsonBuilder) OnObjectBegin(int) error {
	if len(b.stack) == 0 && !b.anyRoot {
		return b.push(jsonFrame{isObj: true})
	}
	return b.push(jsonFrame{isObj: true, object: map[string]any{}})
}

// OnObjectKey implements ast.Visitor.
func (b *jsonBuilder) OnObjectKey(key string) error {
	b.stack[len(b.stack)-1].key = key
	return nil
}

// OnObjectEnd implements ast.Visitor.
func (b *jsonBuilder) OnObjectEnd() error { return b.pop() }

// OnArrayBegin implements ast.Visitor.
func (b *jsonBuilder) OnArrayBegin(int) error {
	if len(b.stack) == 0 && !b.anyRoot {
		return errNotObject
	}
	return b.push(jsonFrame{})
}

// OnArrayEnd implements ast.Visitor.
func (b *jsonBuilder) OnArrayEnd() error { return b.pop() }

// decodeForm decodes an application/x-www-form-urlencoded body, keeping the
// order and the repetitions of its keys. Pairs without a name are skipped.
// It decodes data in place (a decoded pair is never longer than its
// encoding) and its strings share data's bytes: data is this request's
// alone and nothing else reads it afterwards.
func decodeForm(data []byte) (*Fields, *HTTPError) {
	f := &Fields{}
	rest := data
	for len(rest) > 0 {
		var pair []byte
		pair, rest, _ = bytes.Cut(rest, []byte{'&'})
		if len(pair) == 0 {
			continue
		}
		rawName, rawValue, _ := bytes.Cut(pair, []byte{'='})
		name, err := queryUnescapeInPlace(rawName)
		if err != nil {
			return nil, badRequest("Invalid form body: %s.", echo(err.Error()))
		}
		value, err := queryUnescapeInPlace(rawValue)
		if err != nil {
			return nil, badRequest("Invalid form body: %s.", echo(err.Error()))
		}
		if len(name) > 0 {
			f.addString(bytesString(name), bytesString(value))
		}
	}
	return f, nil
}

// bytesString returns b's bytes as a string, without a copy: b must never
// change again.
func bytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// queryUnescapeInPlace is url.QueryUnescape (same result, same error)
// writing the decoded bytes over b and returning them.
func queryUnescapeInPlace(b []byte) ([]byte, error) {
	w, i := 0, 0
	for {
		// Copy up to the next '%' or '+', eight bytes at a time. A word is
		// stored whole when that cannot reach a byte not yet read (w <= i,
		// and the output lags the input by 2 bytes per escape).
		found := false
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			m := bytesEqual(x, '%') | bytesEqual(x, '+')
			if m == 0 {
				binary.LittleEndian.PutUint64(b[w:], x)
				i, w = i+8, w+8
				continue
			}
			k := firstByte(m)
			if i-w >= 8 {
				binary.LittleEndian.PutUint64(b[w:], x)
			} else {
				copy(b[w:w+k], b[i:i+k])
			}
			i, w, found = i+k, w+k, true
			break
		}
		if !found { // the last bytes, fewer than eight
			for i < len(b) && b[i] != '%' && b[i] != '+' {
				b[w] = b[i]
				i, w = i+1, w+1
			}
			if i == len(b) {
				return b[:w], nil
			}
		}
		if b[i] == '+' {
			b[w] = ' '
			i, w = i+1, w+1
			continue
		}
		if i+2 >= len(b) || hexValue[b[i+1]]|hexValue[b[i+2]] > 0xf {
			return nil, url.EscapeError(b[i:min(i+3, len(b))])
		}
		b[w] = hexValue[b[i+1]]<<4 | hexValue[b[i+2]]
		i, w = i+3, w+1
	}
}

// bytesEqual has the high bit set in the lowest byte of x equal to c (and
// maybe in higher ones: only the lowest set bit is exact).
func bytesEqual(x uint64, c byte) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	y := x ^ uint64(c)*ones
	return (y - ones) &^ y & highs
}

// firstByte returns the index of the byte flagged by the lowest bit of m.
func firstByte(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// hexValue is the value of a hex digit, 0xff for another byte.
var hexValue = func() (v [256]byte) {
	for c := range v {
		switch {
		case '0' <= c && c <= '9':
			v[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			v[c] = byte(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			v[c] = byte(c - 'A' + 10)
		default:
			v[c] = 0xff
		}
	}
	return v
}()

// decodeMultipart streams a multipart/form-data body: text parts into
// Fields (each up to MaxFieldBytes), file parts through the Stager after the
// BeforeFirstFile gate.
func decodeMultipart(contentType string, body io.Reader, opts DecodeOptions) (*Fields, *HTTPError) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, badRequest("Invalid multipart body: invalid Content-Type header: %s.", echo(err.Error()))
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, badRequest("Invalid multipart body: the Content-Type header has no boundary.")
	}
	// src remembers a failure of the body itself (over the limit, client
	// gone), which mime/multipart may report as a malformed part instead.
	src := &trackingReader{r: body}
	mr := multipart.NewReader(src, boundary)
	f := &Fields{}
	var stager Stager
	gated := false
	for parts := 1; ; parts++ {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) && src.err == nil {
			if parts == 1 {
				return nil, badRequest("Invalid multipart body: no parts found (check the boundary).")
			}
			return f, nil
		}
		if err != nil {
			return nil, multipartError(src, err)
		}
		if parts > opts.MaxParts {
			return nil, &HTTPError{
				Status: http.StatusRequestEntityTooLarge,
				Body:   fmt.Sprintf("Too many multipart parts: the limit is %d.", opts.MaxParts),
			}
		}
		disposition, dparams, err := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
		if err != nil {
			return nil, badRequest("Invalid multipart body: part %d has an invalid Content-Disposition header.", parts)
		}
		name := dparams["name"]
		if disposition != "form-data" || name == "" {
			continue // like mime/multipart's ReadForm: not a form field
		}
		filename, isFile := dparams["filename"]
		if !isFile {
			value, herr := readTextPart(part, name, opts.MaxFieldBytes)
			if herr != nil {
				return nil, multipartError(src, herr)
			}
			f.addString(name, value)
			if name == "password" && opts.PasswordPart != nil {
				opts.PasswordPart(f)
			}
			continue
		}
		if !gated {
			if opts.BeforeFirstFile != nil {
				if herr := opts.BeforeFirstFile(f); herr != nil {
					return nil, herr
				}
			}
			gated = true
		}
		if opts.Stage == nil {
			return nil, badRequest("Unexpected file part %q: this endpoint accepts no file uploads.", safeName(name))
		}
		if stager == nil {
			if stager, err = opts.Stage(); err != nil {
				return nil, storeError(fmt.Errorf("open staging for part %q: %w", echo(name), err))
			}
		}
		staged, herr := stageFile(stager, part, name, filename)
		if herr != nil {
			return nil, multipartError(src, herr)
		}
		f.Files = append(f.Files, staged)
	}
}

// multipartError returns the answer for an error while reading a multipart
// body: the body's own failure when there was one, else err.
func multipartError(src *trackingReader, err error) *HTTPError {
	if src.err != nil {
		return readError("multipart body", src.err)
	}
	var herr *HTTPError
	if errors.As(err, &herr) {
		return herr
	}
	return readError("multipart body", err)
}

// readTextPart reads a text part, up to limit bytes, with memory that
// follows the bytes received (readAll).
func readTextPart(part io.Reader, name string, limit int64) (string, *HTTPError) {
	data, err := readAll(io.LimitReader(part, limit+1))
	if err != nil {
		return "", readError("multipart body", err)
	}
	if int64(len(data)) > limit {
		return "", &HTTPError{
			Status: http.StatusRequestEntityTooLarge,
			Body:   fmt.Sprintf("Multipart field %q is larger than the limit of %d bytes.", safeName(name), limit),
		}
	}
	// data is never modified after this point, so it may back the string.
	return unsafe.String(unsafe.SliceData(data), len(data)), nil
}

// stageFile streams one file part to the stager. A failure to read the body
// is the client's (400/413); a failure to write is the server's (500).
func stageFile(stager Stager, part io.Reader, name, filename string) (StagedFile, *HTTPError) {
	src := &trackingReader{r: part}
	path, size, err := stager.Stage(src)
	if src.err != nil {
		return StagedFile{}, readError("multipart body", src.err)
	}
	if err != nil {
		return StagedFile{}, storeError(fmt.Errorf("stage part %q: %w", echo(name), err))
	}
	return StagedFile{Field: name, Filename: filename, Path: path, Size: size}, nil
}

// storeError returns the 500 for a failure to stage an upload.
func storeError(cause error) *HTTPError {
	return &HTTPError{
		Status: http.StatusInternalServerError,
		Body:   "Failed to store the uploaded file.",
		Cause:  cause,
	}
}

// safeName returns name for an answer: a placeholder when it is
// sensitive, else at most maxEchoedBytes of it.
func safeName(name string) string {
	if auth.IsSensitiveName(name) {
		return "(redacted)"
	}
	return echo(name)
}

// trackingReader remembers the first read error other than io.EOF, so that
// a Stager's failure can be attributed to the body or to the disk.
type trackingReader struct {
	r   io.Reader
	err error
}

// Read implements io.Reader.
func (t *trackingReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && t.err == nil {
		t.err = err
	}
	return n, err
}
