package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gorender/gorender/config"
	"github.com/gorender/gorender/gemclient"
)

// The demo bundle and request are built by tests/testdata/build.sh from
// react, react-dom and react-on-rails.
var (
	//go:embed demo/bundle.js
	demoBundle []byte
	//go:embed demo/request.js
	demoRequest string
)

// demo serves like serve, with a fresh cache and a random password unless
// configured, then renders the embedded example once the way Rails does
// (410, then the same render with the bundle attached), prints its HTML
// (--json: the whole answer) and keeps serving.
func demo(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) error {
	getenv := lookup(environ)
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	port := portFlag(fs, "listen port (overrides RENDERER_PORT)")
	asJSON := fs.Bool("json", false, "print the render's JSON answer instead of its HTML")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkPort("demo", *port); err != nil {
		return err
	}
	overrides := map[string]string{}
	if getenv("RENDERER_PASSWORD") == "" {
		overrides["RENDERER_PASSWORD"] = randomHex(16)
	}
	if getenv("RENDERER_SERVER_BUNDLE_CACHE_PATH") == "" && getenv("RENDERER_BUNDLE_PATH") == "" {
		dir, err := os.MkdirTemp("", "gorender-demo-")
		if err != nil {
			return fmt.Errorf("demo cache: %w", err)
		}
		defer os.RemoveAll(dir)
		overrides["RENDERER_SERVER_BUNDLE_CACHE_PATH"] = dir
	}
	demoEnv := func(name string) string {
		if v, ok := overrides[name]; ok {
			return v
		}
		return getenv(name)
	}
	cfg, err := config.Load(demoEnv, *port)
	if err != nil {
		return err
	}
	srv, ln, err := start(cfg, environ, stderr)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	sum := sha256.Sum256(demoBundle)
	bundleID := "rorp-v2-s-" + hex.EncodeToString(sum[:])
	client := &gemclient.Client{
		BaseURL:    "http://" + ln.Addr().String(),
		Password:   cfg.Password,
		GemVersion: "17.0.0",
		RailsEnv:   "development",
		HTTP:       gemclient.NewHTTPClient(true),
	}
	answer, err := demoRender(ctx, client, bundleID)
	if err != nil {
		return errors.Join(err, <-served)
	}
	requestFile := filepath.Join(cfg.CachePath, "demo-request.js")
	if err := os.WriteFile(requestFile, []byte(demoRequest), 0o644); err != nil {
		return fmt.Errorf("write demo request: %w", err)
	}
	if *asJSON {
		fmt.Fprintf(stdout, "%s\n\n", answer)
	} else {
		fmt.Fprintf(stdout, "Rendered the embedded HelloWorld component over h2c:\n\n%s\n\n"+
			"(gorender demo --json prints the whole answer: the HTML, the console replay script and errors.)\n\n", readable(answer))
	}
	fmt.Fprintf(stdout, "gorender is serving on %s. Try it yourself:\n\n", client.BaseURL)
	fmt.Fprintf(stdout, "curl --http2-prior-knowledge \\\n"+
		"  -H 'Content-Type: %s' \\\n"+
		"  -H 'X-React-On-Rails-Pro-Protocol-Version: %s' \\\n"+
		"  -H 'Authorization: Bearer %s' \\\n"+
		"  --data-binary @%s \\\n"+
		"  %s/bundles/%s/render/demo\n\n"+
		"Press Ctrl-C to stop.\n",
		gemclient.RawJSContentType, gemclient.ProtocolVersion, cfg.Password, requestFile, client.BaseURL, bundleID)
	return <-served
}

// demoRender renders the demo request as Rails does on a cold renderer:
// raw JS first; on 410 again as multipart with the bundle attached.
func demoRender(ctx context.Context, client *gemclient.Client, bundleID string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	render := gemclient.Render{BundleID: bundleID, Code: demoRequest}
	resp, err := client.RenderRaw(ctx, render)
	if err != nil {
		return "", fmt.Errorf("demo render: %w", err)
	}
	if resp.Status == http.StatusGone {
		render.Bundles = map[string][]byte{bundleID: demoBundle}
		if resp, err = client.RenderMultipart(ctx, render); err != nil {
			return "", fmt.Errorf("demo render with bundle: %w", err)
		}
	}
	if resp.Status != http.StatusOK {
		return "", fmt.Errorf("demo render answered %d: %s", resp.Status, resp.Body)
	}
	return resp.Body, nil
}

// readable is the HTML of a render's answer, the JSON object that
// react-on-rails' serverRenderReactComponent returns, with its error when
// it has one; an answer that is not such an object is returned as it is.
func readable(answer string) string {
	var result struct {
		HTML           *string `json:"html"`
		HasErrors      bool    `json:"hasErrors"`
		RenderingError *struct {
			Message string `json:"message"`
		} `json:"renderingError"`
	}
	if err := json.Unmarshal([]byte(answer), &result); err != nil || result.HTML == nil {
		return answer
	}
	out := *result.HTML
	if result.HasErrors {
		out += "\n\nThe render reported errors"
		if result.RenderingError != nil {
			out += ": " + result.RenderingError.Message
		}
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
