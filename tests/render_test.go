package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// TestColdStart is what Rails does against an empty renderer: a raw render
// gets 410, the same render re-sent as multipart with the bundle and a
// companion file renders, and later raw renders find the bundle
// (PROTOCOL.md §5 steps 3–4, §6).
func TestColdStart(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	hello := request(t, "hello-world")
	eachTransportSerial(t, func(t *testing.T, tr transport) {
		id := newID("s")
		gem := s.gem(tr)

		r := must(t)(gem.RenderRaw(ctx(t), gemclient.Render{BundleID: id, Code: hello}))
		r.want(t, tr, http.StatusGone, "No bundle uploaded")
		r.wantNoCacheText(t)

		stats := `{"status":"done","publicPath":"/packs/","chunks":{"` + tr.name + `":[]}}`
		r = must(t)(gem.RenderMultipart(ctx(t), gemclient.Render{
			BundleID: id, Code: hello,
			Bundles: map[string][]byte{id: []byte(reactApp(t))},
			Assets:  map[string][]byte{"loadable-stats.json": []byte(stats)},
		}))
		r.want(t, tr, http.StatusOK, golden(t, "hello-world"))
		r.wantRenderHeaders(t)

		if got := s.readCacheFile(t, id+"/loadable-stats.json"); got != stats {
			t.Errorf("companion file = %q, want %q", got, stats)
		}
		if got := s.readCacheFile(t, id+"/"+id+".js"); got != reactApp(t) {
			t.Errorf("stored bundle differs from the upload (%d bytes, want %d)", len(got), len(reactApp(t)))
		}
		s.wantStagingEmpty(t)

		r = must(t)(gem.RenderRaw(ctx(t), gemclient.Render{BundleID: id, Code: hello}))
		r.want(t, tr, http.StatusOK, golden(t, "hello-world"))
		r.wantRenderHeaders(t)
		wantConsoleReplay(t, r.Body,
			`[SERVER] RENDERED HelloWorld to dom node with id: HelloWorld-react-component-`,
			`[SERVER] HelloWorld: rendering for`)

		// On the wire: an HTTP/1.1 answer with Content-Length, never chunked.
		head, body := rawHTTP1(t, s, "POST /bundles/"+id+"/render/d HTTP/1.1\r\n"+
			"Host: renderer\r\n"+
			"Content-Type: "+gemclient.RawJSContentType+"\r\n"+
			"X-React-On-Rails-Pro-Protocol-Version: 2.0.0\r\n"+
			"Authorization: Bearer "+testPassword+"\r\n"+
			"Content-Length: "+strconv.Itoa(len(hello))+"\r\n"+
			"Connection: close\r\n\r\n"+hello)
		if !strings.HasPrefix(head, "HTTP/1.1 200 ") {
			t.Fatalf("wire answer: %q", head)
		}
		if !regexp.MustCompile(`(?mi)^Content-Length: ` + strconv.Itoa(len(golden(t, "hello-world"))) + `\r$`).MatchString(head) {
			t.Errorf("wire answer has no Content-Length of the golden's size:\n%s", head)
		}
		if strings.Contains(strings.ToLower(head), "transfer-encoding") {
			t.Errorf("wire answer is chunked:\n%s", head)
		}
		if body != golden(t, "hello-world") {
			t.Errorf("wire body differs from the golden: %s", clip(body))
		}

		// REPLAY_SERVER_ASYNC_OPERATION_LOGS is off by default (NODE_ENV is
		// not development): what a render logs after an await is not
		// replayed, the rest is the golden's.
		r = s.render(t, tr, id, request(t, "async-greeting"))
		r.wantStatus(t, tr, http.StatusOK)
		var got, want map[string]any
		_ = json.Unmarshal([]byte(golden(t, "async-greeting")), &want)
		if err := json.Unmarshal([]byte(r.Body), &got); err != nil {
			t.Fatalf("async-greeting result is not JSON: %v", err)
		}
		if got["html"] != want["html"] || got["hasErrors"] != false {
			t.Errorf("async-greeting html %q hasErrors %v, want the golden's", got["html"], got["hasErrors"])
		}
		wantConsoleReplay(t, r.Body, "[SERVER] AsyncGreeting: start for")
		if replay, _ := got["consoleReplayScript"].(string); strings.Contains(replay, "resolved after await") {
			t.Errorf("console output logged after an await is replayed although REPLAY_SERVER_ASYNC_OPERATION_LOGS is off:\n%s", replay)
		}
	})
}

// wantConsoleReplay checks that a react-on-rails JSON result replays the
// server's console lines (PROTOCOL.md §7: console history, "[SERVER] ").
func wantConsoleReplay(t *testing.T, body string, lines ...string) {
	t.Helper()
	var result struct {
		ConsoleReplayScript string `json:"consoleReplayScript"`
	}
	if err := json.Unmarshal([]byte(body), &result); err != nil {
		t.Fatalf("render result is not JSON: %v", err)
	}
	for _, line := range lines {
		if !strings.Contains(result.ConsoleReplayScript, line) {
			t.Errorf("consoleReplayScript lacks %q:\n%s", line, result.ConsoleReplayScript)
		}
	}
}

// rawHTTP1 sends request bytes on a fresh TCP connection and returns the
// answer's head and body (the server closes after it: Connection: close).
func rawHTTP1(t *testing.T, s *server, request string) (head, body string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.url, "http://"), 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatalf("write request: %v", err)
	}
	b, err := io.ReadAll(bufio.NewReader(conn))
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	head, body, ok := strings.Cut(string(b), "\r\n\r\n")
	if !ok {
		t.Fatalf("answer has no end of head: %q", b)
	}
	return head, body
}

// TestUploadAssetsThenRender stores the bundle through /upload-assets (the
// streaming path) and renders every fixture in every body encoding. The
// goldens keep console output logged after an await (async-greeting), so
// this server replays it (REPLAY_SERVER_ASYNC_OPERATION_LOGS).
func TestUploadAssetsThenRender(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"REPLAY_SERVER_ASYNC_OPERATION_LOGS": "true"})
	id := newID("s")
	for _, tr := range transports {
		// The second upload of the same id is a no-op success (first writer wins).
		r := must(t)(s.gem(tr).UploadAssets(ctx(t),
			map[string][]byte{id: []byte(reactApp(t))},
			map[string][]byte{"loadable-stats.json": []byte(`{}`)}))
		r.want(t, tr, http.StatusOK, "")
		if got := r.Header.Get("Content-Length"); got != "0" {
			t.Errorf("upload-assets Content-Length %q, want 0", got)
		}
	}
	t.Run("render", func(t *testing.T) {
		eachTransport(t, func(t *testing.T, tr transport) {
			for _, enc := range encodings {
				send := gemRender(s.gem(tr), enc)
				for _, name := range []string{"small-page", "list-page", "async-greeting"} {
					t.Run(string(enc)+"/"+name, func(t *testing.T) {
						r := send(t, gemclient.Render{BundleID: id, Code: request(t, name)})
						r.want(t, tr, http.StatusOK, golden(t, name))
						r.wantRenderHeaders(t)
					})
				}
				t.Run(string(enc)+"/throws-error", func(t *testing.T) {
					r := send(t, gemclient.Render{BundleID: id, Code: request(t, "throws-error")})
					r.wantStatus(t, tr, http.StatusOK)
					wantSameModuloStacks(t, r.Body, golden(t, "throws-error"))
				})
			}
		})
	})
	s.wantStagingEmpty(t)
}

// stackFrame matches one stack frame line inside JSON text, escaped once
// (\n    at f (x.js:1:2)) or twice (\\n\\tat ...), V8 or goja style.
var stackFrame = regexp.MustCompile(`(?:\\\\n|\\n)(?:\\\\t|\\t|\s+)at [^"\\<]*`)

// trailingNewline is the newline goja leaves after the last frame.
var trailingNewline = regexp.MustCompile(`(?:\\\\n|\\n)(\\"|"|</pre>)`)

// wantSameModuloStacks compares a render's error report with the golden
// recorded on V8, ignoring stack frames (tests/testdata/README.md).
func wantSameModuloStacks(t *testing.T, got, want string) {
	t.Helper()
	norm := func(s string) string {
		s = stackFrame.ReplaceAllString(s, "")
		return trailingNewline.ReplaceAllString(s, "$1")
	}
	var result struct {
		HTML           string `json:"html"`
		HasErrors      bool   `json:"hasErrors"`
		RenderingError struct {
			Message string `json:"message"`
		} `json:"renderingError"`
	}
	if err := json.Unmarshal([]byte(got), &result); err != nil {
		t.Fatalf("render result is not JSON: %v: %s", err, clip(got))
	}
	if !result.HasErrors {
		t.Errorf("hasErrors is false, want true")
	}
	if want := "ThrowsError: intentional render failure (fixture)"; result.RenderingError.Message != want {
		t.Errorf("renderingError.message = %q, want %q", result.RenderingError.Message, want)
	}
	if !strings.HasPrefix(result.HTML, "<pre>Exception in rendering!\n\nMessage: ThrowsError: intentional render failure (fixture)\n") {
		t.Errorf("html = %q", result.HTML)
	}
	if g, w := norm(got), norm(want); g != w {
		t.Errorf("error report differs from the golden beyond stack frames:\n got %s\nwant %s", g, w)
	}
}

// TestManyStreamsOneConnection sends 100 concurrent renders as streams of
// one h2c connection (PROTOCOL.md §1).
func TestManyStreamsOneConnection(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	id := newID("s")
	s.upload(t, map[string]string{id: reactApp(t)}, nil)

	var dials atomic.Int32
	h2 := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	h2.Protocols = new(http.Protocols)
	h2.Protocols.SetUnencryptedHTTP2(true)
	defer h2.CloseIdleConnections()
	gem := s.gem(transports[0])
	gem.HTTP = &http.Client{Transport: h2}
	tr := transport{"h2c", true}
	code, want := request(t, "small-page"), golden(t, "small-page")

	// The first render opens the connection (and loads the bundle).
	must(t)(gem.RenderRaw(ctx(t), gemclient.Render{BundleID: id, Code: code})).want(t, tr, http.StatusOK, want)

	const n = 100
	var wg sync.WaitGroup
	results := make([]*gemclient.Response, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = gem.RenderRaw(ctx(t), gemclient.Render{BundleID: id, Code: code})
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("render %d: %v", i, errs[i])
		}
		r := fromGem(t, results[i], nil)
		r.want(t, tr, http.StatusOK, want)
	}
	if got := dials.Load(); got != 1 {
		t.Errorf("%d connections dialed, want 1 (all streams on one h2c connection)", got)
	}
}

// TestRewriteStringBuildsOff: RENDERER_REWRITE_STRING_BUILDS=false reaches
// the engine (the start-up configuration says so) and the bundle, run as
// built, answers Node's bytes (gojaengine's TestRewriteStringBuildsEngine
// proves that the switch keeps the bundle as built). The rewrite is goja's.
func TestRewriteStringBuildsOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"RENDERER_REWRITE_STRING_BUILDS": "false", "RENDERER_LOG_LEVEL": "info", "RENDERER_JS_ENGINE": "goja"})
	if !strings.Contains(s.stderr.String(), `"RENDERER_REWRITE_STRING_BUILDS":"false"`) {
		t.Fatalf("start-up configuration does not report the rewrite off:\n%s", s.stderr.String())
	}
	id := newID("s")
	s.upload(t, map[string]string{id: reactApp(t)}, nil)
	eachTransport(t, func(t *testing.T, tr transport) {
		s.render(t, tr, id, request(t, "small-page")).want(t, tr, http.StatusOK, golden(t, "small-page"))
	})
}
