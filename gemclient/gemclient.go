// Package gemclient talks to a renderer the way the react_on_rails_pro gem
// does (PROTOCOL.md §3, §6): renders as raw JavaScript with metadata
// headers, as JSON, as a legacy form, or as multipart with bundle files;
// over h2c with prior knowledge or HTTP/1.1. The demo command, the
// end-to-end tests and the benchmarks share it.
package gemclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ProtocolVersion is the protocol the gem speaks.
const ProtocolVersion = "2.0.0"

// RawJSContentType is the media type of a raw JavaScript render body.
const RawJSContentType = "application/vnd.react-on-rails.render-request+javascript"

// Client is one Rails app's connection to a renderer.
type Client struct {
	BaseURL    string // http://host:port
	Password   string // empty: none sent
	GemVersion string
	RailsEnv   string
	HTTP       *http.Client
}

// NewHTTPClient returns an HTTP client speaking h2c with prior knowledge
// (h2c true) or HTTP/1.1.
func NewHTTPClient(h2c bool) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}
	tr.Protocols = new(http.Protocols)
	if h2c {
		tr.Protocols.SetUnencryptedHTTP2(true)
	} else {
		tr.Protocols.SetHTTP1(true)
	}
	return &http.Client{Transport: tr}
}

// Render is one rendering request.
type Render struct {
	BundleID     string
	Code         string
	Dependencies []string
	// Bundles are files attached to a multipart render, by bundle id.
	Bundles map[string][]byte
	// Assets are companion files attached to a multipart render or upload, by filename.
	Assets map[string][]byte
}

// Response is a renderer's answer.
type Response struct {
	Status int
	Header http.Header
	Body   string
	// Proto is the protocol of the answer: "HTTP/1.1" or "HTTP/2.0".
	Proto string
}

func (c *Client) do(ctx context.Context, method, path, contentType string, body io.Reader, header http.Header) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: string(b), Proto: resp.Proto}, nil
}

func renderPath(bundleID string) string {
	return "/bundles/" + url.PathEscape(bundleID) + "/render/digest"
}

func (c *Client) deps(r Render) []string {
	if r.Dependencies == nil {
		return []string{}
	}
	return r.Dependencies
}

// RenderRaw sends a render as raw JavaScript with metadata headers, as gems
// 17.x do for every render that carries no bundle.
func (c *Client) RenderRaw(ctx context.Context, r Render) (*Response, error) {
	deps, _ := json.Marshal(c.deps(r))
	h := http.Header{}
	h.Set("X-React-On-Rails-Pro-Protocol-Version", ProtocolVersion)
	h.Set("X-React-On-Rails-Pro-Gem-Version", c.GemVersion)
	h.Set("X-React-On-Rails-Pro-Rails-Env", c.RailsEnv)
	h.Set("X-React-On-Rails-Pro-Dependency-Bundle-Timestamps", string(deps))
	if c.Password != "" {
		h.Set("Authorization", "Bearer "+c.Password)
	}
	return c.do(ctx, http.MethodPost, renderPath(r.BundleID), RawJSContentType, strings.NewReader(r.Code), h)
}

// RenderJSON sends a render as a JSON object.
func (c *Client) RenderJSON(ctx context.Context, r Render) (*Response, error) {
	body := map[string]any{
		"protocolVersion":            ProtocolVersion,
		"gemVersion":                 c.GemVersion,
		"railsEnv":                   c.RailsEnv,
		"renderingRequest":           r.Code,
		"dependencyBundleTimestamps": c.deps(r),
	}
	if c.Password != "" {
		body["password"] = c.Password
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode render: %w", err)
	}
	return c.do(ctx, http.MethodPost, renderPath(r.BundleID), "application/json", strings.NewReader(string(b)), nil)
}

// RenderForm sends a render as a legacy urlencoded form.
func (c *Client) RenderForm(ctx context.Context, r Render) (*Response, error) {
	v := url.Values{}
	if c.Password != "" {
		v.Set("password", c.Password)
	}
	v.Set("protocolVersion", ProtocolVersion)
	v.Set("gemVersion", c.GemVersion)
	v.Set("railsEnv", c.RailsEnv)
	v.Set("renderingRequest", r.Code)
	for _, d := range r.Dependencies {
		v.Add("dependencyBundleTimestamps[]", d)
	}
	return c.do(ctx, http.MethodPost, renderPath(r.BundleID), "application/x-www-form-urlencoded", strings.NewReader(v.Encode()), nil)
}

// RenderMultipart sends a render as multipart with its bundles attached, as
// Rails does after a 410.
func (c *Client) RenderMultipart(ctx context.Context, r Render) (*Response, error) {
	text := c.metadataParts()
	text = append(text, [2]string{"renderingRequest", r.Code})
	for _, d := range r.Dependencies {
		text = append(text, [2]string{"dependencyBundleTimestamps[]", d})
	}
	return c.postMultipart(ctx, renderPath(r.BundleID), text, r.Bundles, r.Assets)
}

// UploadAssets sends bundles and companion files to /upload-assets.
func (c *Client) UploadAssets(ctx context.Context, bundles map[string][]byte, assets map[string][]byte) (*Response, error) {
	text := c.metadataParts()
	for id := range bundles {
		text = append(text, [2]string{"targetBundles[]", id})
	}
	return c.postMultipart(ctx, "/upload-assets", text, bundles, assets)
}

// AssetExists asks whether filename exists beside every target bundle.
func (c *Client) AssetExists(ctx context.Context, filename string, targets []string) (*Response, error) {
	body := map[string]any{"targetBundles": targets}
	if c.Password != "" {
		body["password"] = c.Password
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode asset-exists: %w", err)
	}
	return c.do(ctx, http.MethodPost, "/asset-exists?filename="+url.QueryEscape(filename), "application/json", strings.NewReader(string(b)), nil)
}

// metadataParts are the text parts the gem sends first, password first.
func (c *Client) metadataParts() [][2]string {
	var parts [][2]string
	if c.Password != "" {
		parts = append(parts, [2]string{"password", c.Password})
	}
	return append(parts,
		[2]string{"gemVersion", c.GemVersion},
		[2]string{"protocolVersion", ProtocolVersion},
		[2]string{"railsEnv", c.RailsEnv},
	)
}

// Boundary returns a random 48-hex-digit boundary, like the gem's.
func Boundary() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// postMultipart streams a multipart body with no Content-Length: text parts
// first, then bundle_<id> files, then companion files as assetsToCopyN.
func (c *Client) postMultipart(ctx context.Context, path string, text [][2]string, bundles, assets map[string][]byte) (*Response, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	if err := mw.SetBoundary(Boundary()); err != nil {
		return nil, fmt.Errorf("multipart boundary: %w", err)
	}
	go func() {
		pw.CloseWithError(writeParts(mw, text, bundles, assets))
	}()
	resp, err := c.do(ctx, http.MethodPost, path, mw.FormDataContentType(), pr, nil)
	pr.Close()
	return resp, err
}

func writeParts(mw *multipart.Writer, text [][2]string, bundles, assets map[string][]byte) error {
	for _, kv := range text {
		if err := mw.WriteField(kv[0], kv[1]); err != nil {
			return err
		}
	}
	for id, content := range bundles {
		if err := writeFile(mw, "bundle_"+id, id+".js", "text/javascript", content); err != nil {
			return err
		}
	}
	i := 0
	for name, content := range assets {
		if err := writeFile(mw, fmt.Sprintf("assetsToCopy%d", i), name, "application/json", content); err != nil {
			return err
		}
		i++
	}
	return mw.Close()
}

func writeFile(mw *multipart.Writer, field, filename, contentType string, content []byte) error {
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name=%q; filename=%q`, field, filename)}
	h["Content-Type"] = []string{contentType}
	w, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = w.Write(content)
	return err
}
