package handlers

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"unsafe"

	"github.com/gorender/gorender/auth"
)

// Stager receives uploaded file parts: the bundles cache implements it with a
// per-request staging directory.
type Stager interface {
	// Stage streams r into a new file in the request's staging directory and
	// returns its path and size.
	Stage(r io.Reader) (path string, size int64, err error)
}

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
