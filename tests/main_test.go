// Package tests holds gorender's end-to-end tests: TestMain builds the real
// binary once (with the race detector), each test starts it on a free port
// with a fresh bundle cache, and talks to it over h2c and HTTP/1.1 the way
// the Rails gem does (package gemclient), or with hand-built requests for
// malformed and edge cases. The contract is docs/PROTOCOL.md.
//
// GORENDER_TEST_ENGINE (goja, the default, quickjs or node) is the
// JavaScript engine every server runs (RENDERER_JS_ENGINE) unless a test
// names one: the suite passes on each (scripts/test.sh runs it three
// times; node needs Node.js 20+ on PATH, scripts/install-node.sh). For
// quickjs the binary is built without the race detector, which instruments
// QuickJS's translated C too and makes it about ten times slower.
package tests

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
)

const (
	// testPassword is the RENDERER_PASSWORD of every server unless a test
	// says otherwise (long enough not to trigger the weak-password warning).
	testPassword = "e2e-test-password-0123456789"
	// gemVersion is what the test clients claim to be.
	gemVersion = "17.0.0"
	// requestTimeout bounds every HTTP exchange of the tests.
	requestTimeout = 90 * time.Second
	// exitTimeout is how long a server may take to exit after SIGTERM
	// (under the 120 s render timeout startServer sets, so that a drain
	// that waited for a render instead of its shutdown timeout fails).
	exitTimeout = 60 * time.Second
	// startTimeout is how long a started server may take to answer /health.
	startTimeout = 90 * time.Second
)

var (
	// testEngine is the engine under test (GORENDER_TEST_ENGINE).
	testEngine = cmp.Or(os.Getenv("GORENDER_TEST_ENGINE"), "goja")
	// raceBuild is whether the binary was built with the race detector.
	raceBuild = testEngine != "quickjs"
	// binPath is the gorender binary built by TestMain.
	binPath string
	// rendererVersion, rendererCommit and buildDate are stamped into the
	// binary the way scripts/release.sh stamps them (-ldflags -X), so the
	// tests check `gorender version` and /info against known values.
	rendererVersion = "1.2.3-e2e"
	rendererCommit  = "0123456789abcdef0123456789abcdef01234567"
	buildDate       = "2026-12-07T22:00:00Z"
	// buildDir is where TestMain builds binaries.
	buildDir string
)

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "gorender-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	buildDir = dir
	binPath = filepath.Join(dir, "gorender")
	stamp := "-X main.version=" + rendererVersion + " -X main.commit=" + rendererCommit + " -X main.date=" + buildDate
	args := []string{"build", "-ldflags=" + stamp, "-o", binPath, "./cmd/gorender"}
	if raceBuild {
		args = slices.Insert(args, 1, "-race")
	}
	build := exec.Command("go", args...)
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go %s: %v\n%s", strings.Join(args, " "), err, out)
		return 1
	}
	return m.Run()
}

// ---------------------------------------------------------------------------
// Transports

// transport is one of the two ways the gem talks to the renderer.
type transport struct {
	name string
	h2c  bool
}

var transports = []transport{{"h2c", true}, {"http1", false}}

// protoMajor is the HTTP major version answers must have on this transport.
func (tr transport) protoMajor() int {
	if tr.h2c {
		return 2
	}
	return 1
}

// eachTransport runs f as a parallel subtest per transport.
func eachTransport(t *testing.T, f func(t *testing.T, tr transport)) {
	t.Helper()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			f(t, tr)
		})
	}
}

// eachTransportSerial runs f as a subtest per transport, one after the
// other: for tests that inspect the cache directory between requests.
func eachTransportSerial(t *testing.T, f func(t *testing.T, tr transport)) {
	t.Helper()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { f(t, tr) })
	}
}

// ---------------------------------------------------------------------------
// The server under test

// server is one running gorender process.
type server struct {
	t      *testing.T
	url    string // http://127.0.0.1:port
	port   int
	cache  string // RENDERER_SERVER_BUNDLE_CACHE_PATH
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{}
	err    error // of cmd.Wait, valid once exited is closed

	mu       sync.Mutex
	clients  map[bool]*http.Client
	signaled bool // SIGTERM sent
}

// syncBuffer is a bytes.Buffer safe for the process's writes and our reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// processEnv is the environment of a gorender process: a clean base (no
// RENDERER_* or *_ENV leaking in from the developer's shell) with env on
// top. A value of "" in env unsets the variable.
func processEnv(env map[string]string) []string {
	vars := map[string]string{}
	for _, name := range []string{"PATH", "HOME", "TMPDIR", "GORACE"} {
		if v, ok := os.LookupEnv(name); ok {
			vars[name] = v
		}
	}
	for k, v := range env {
		if v == "" {
			delete(vars, k)
		} else {
			vars[k] = v
		}
	}
	list := make([]string, 0, len(vars))
	for k, v := range vars {
		list = append(list, k+"="+v)
	}
	return list
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// freePort returns a TCP port that was free a moment ago and that no
// earlier call in this test process returned: the kernel may hand a
// closed port out again at once, and two parallel tests must not both
// start a server on it.
func freePort(t *testing.T) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		portsMu.Lock()
		given := portsGiven[port]
		portsGiven[port] = true
		portsMu.Unlock()
		if !given {
			return port
		}
	}
	t.Fatal("free port: 100 ports in a row were given out before")
	return 0
}

// listensOn reports whether process pid holds the listening socket of
// 127.0.0.1:port. A /health answer alone does not prove that a server is
// the one just started: another test process may have been given the same
// port, and then this one fails to bind while the other answers.
func listensOn(pid, port int) (bool, error) {
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false, err
	}
	local := fmt.Sprintf("0100007F:%04X", port) // 127.0.0.1, as the kernel prints it
	inode := ""
	for _, line := range strings.Split(string(table), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == local && f[3] == "0A" { // 0A: LISTEN
			inode = f[9]
			break
		}
	}
	if inode == "" {
		return false, nil
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && link == "socket:["+inode+"]" {
			return true, nil
		}
	}
	return false, nil
}

// startServer starts the gorender binary on a free port with a fresh bundle
// cache, the test password, log level warn, generous render and queue
// timeouts, the engine under test, and env on top ("" unsets a variable);
// it waits until /health answers. On cleanup it sends SIGTERM and fails the
// test unless the process exits 0 within exitTimeout (or the race detector spoke);
// the server's output is printed when the test failed. A RENDERER_SERVER_BUNDLE_CACHE_PATH in env
// is used as the cache (to restart on the cache of an earlier process).
// A server on QuickJS runs the binary built without the race detector, as
// the whole QuickJS run of the suite does (scripts/test.sh): the detector
// instruments QuickJS's translated C too, which makes the engine's start
// (compiling the render environment) about 30 times slower, 10 s on an
// idle machine and past a minute on a loaded one.
func startServer(t *testing.T, env map[string]string) *server {
	t.Helper()
	if env["RENDERER_JS_ENGINE"] == "quickjs" {
		return startServerCmd(t, []string{plainBinary(t)}, env)
	}
	return startServerCmd(t, nil, env)
}

// startLimitedServer is startServer under resource limits: the binary runs
// as `prlimit <limits...> -- gorender serve`, so that a regression whose
// failure mode is a crash or an exhausted resource fails the test, not the
// machine. It runs a binary built without the race detector, whose shadow
// memory would not fit an address-space limit (--as).
func startLimitedServer(t *testing.T, limits []string, env map[string]string) *server {
	t.Helper()
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Fatalf("prlimit (util-linux) is needed to run gorender under limits: %v", err)
	}
	launch := append([]string{"prlimit"}, limits...)
	return startServerCmd(t, append(launch, "--", plainBinary(t)), env)
}

var (
	plainOnce sync.Once
	plainPath string
	plainErr  error
)

// plainBinary returns gorender built without the race detector (the
// binary under test when it already is).
func plainBinary(t *testing.T) string {
	t.Helper()
	if !raceBuild {
		return binPath
	}
	plainOnce.Do(func() {
		plainPath = filepath.Join(buildDir, "gorender-plain")
		build := exec.Command("go", "build", "-o", plainPath, "./cmd/gorender")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			plainErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if plainErr != nil {
		t.Fatal(plainErr)
	}
	return plainPath
}

// startServerCmd is startServer with launch, when set, as the command that
// runs the binary (its last element): launch... serve -p PORT.
func startServerCmd(t *testing.T, launch []string, env map[string]string) *server {
	t.Helper()
	return startServerWith(t, launch, env, nil)
}

// startServerWith is startServerCmd with configure, when set, applied to the
// command before it starts (descriptors to inherit, credentials).
func startServerWith(t *testing.T, launch []string, env map[string]string, configure func(*exec.Cmd)) *server {
	t.Helper()
	cache := filepath.Join(t.TempDir(), "cache")
	if c := env["RENDERER_SERVER_BUNDLE_CACHE_PATH"]; c != "" {
		cache = c
	}
	base := map[string]string{
		"RENDERER_HOST":                     "127.0.0.1",
		"RENDERER_PASSWORD":                 testPassword,
		"RENDERER_LOG_LEVEL":                "warn",
		"RENDERER_SERVER_BUNDLE_CACHE_PATH": cache,
		// Generous deadlines: the suite must pass on a loaded machine with
		// the race detector on. Tests of the deadlines set their own.
		"RENDERER_RENDER_TIMEOUT": "120s",
		"RENDERER_QUEUE_TIMEOUT":  "120s",
		"RENDERER_JS_ENGINE":      testEngine,
	}
	for k, v := range env {
		base[k] = v
	}
	var lastErr string
	for attempt := 0; attempt < 3; attempt++ {
		s, retry, err := tryStart(t, launch, base, cache, configure)
		if err == nil {
			return s
		}
		lastErr = err.Error()
		if !retry {
			break
		}
	}
	t.Fatalf("start gorender: %s", lastErr)
	return nil
}

// runAsUID, in a server's env, is the uid (and gid) its process runs as
// (see otherUserCache).
const runAsUID = "GORENDER_TEST_RUN_AS_UID"

// tryStart starts one process; retry is true when the port was taken.
func tryStart(t *testing.T, launch []string, env map[string]string, cache string, configure func(*exec.Cmd)) (s *server, retry bool, err error) {
	t.Helper()
	port := freePort(t)
	s = &server{
		t:       t,
		url:     fmt.Sprintf("http://127.0.0.1:%d", port),
		port:    port,
		cache:   cache,
		stderr:  &syncBuffer{},
		exited:  make(chan struct{}),
		clients: map[bool]*http.Client{},
	}
	if len(launch) == 0 {
		launch = []string{binPath}
	}
	s.cmd = exec.Command(launch[0], append(launch[1:], "serve", "-p", strconv.Itoa(port))...)
	s.cmd.Env = processEnv(env)
	if uid := env[runAsUID]; uid != "" {
		id, err := strconv.ParseUint(uid, 10, 32)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", runAsUID, err)
		}
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(id), Gid: uint32(id)}}
	}
	s.cmd.Stdout = s.stderr
	s.cmd.Stderr = s.stderr
	if configure != nil {
		configure(s.cmd)
	}
	if err := s.cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("exec %s: %w", launch[0], err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()

	probe := &http.Client{Timeout: time.Second}
	defer probe.CloseIdleConnections()
	// A bound for a server that never answers: on a loaded machine a
	// process at low priority waits long for its CPU (a race-built goja
	// server needs 0.5 s of CPU to listen, and took 8-14 s at load 15-17
	// under nice 19).
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.exited:
			out := s.stderr.String()
			return nil, strings.Contains(out, "address already in use"),
				fmt.Errorf("gorender exited before answering /health (%v):\n%s", s.err, out)
		default:
		}
		resp, err := probe.Get(s.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ours, err := listensOn(s.cmd.Process.Pid, port)
				if err != nil {
					_ = s.cmd.Process.Kill()
					<-s.exited
					return nil, false, fmt.Errorf("find the listener of port %d: %w", port, err)
				}
				if ours {
					break
				}
				// Another process answered: this one exits on its
				// failed bind and the loop above retries.
			}
		}
		if time.Now().After(deadline) {
			_ = s.cmd.Process.Kill()
			<-s.exited
			return nil, false, fmt.Errorf("/health did not answer 200 within %s:\n%s", startTimeout, s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(s.stop)
	return s, false, nil
}

// stop sends SIGTERM (unless terminate already did) and checks the exit;
// it reports the server's stderr when the test failed.
func (s *server) stop() {
	t := s.t
	s.mu.Lock()
	for _, c := range s.clients {
		c.CloseIdleConnections()
	}
	s.mu.Unlock()
	s.terminate(t)
	out := s.stderr.String()
	if strings.Contains(out, "DATA RACE") {
		t.Errorf("the race detector reported a data race in gorender")
	}
	if t.Failed() {
		t.Logf("gorender stderr:\n%s", out)
	}
}

// terminate sends SIGTERM once and fails t unless the process exits 0
// within 15 s.
func (s *server) terminate(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	first := !s.signaled
	s.signaled = true
	s.mu.Unlock()
	if !first {
		<-s.exited
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("gorender did not exit 0 after SIGTERM: %v", s.err)
		}
	case <-time.After(exitTimeout):
		_ = s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("gorender did not exit within %s of SIGTERM", exitTimeout)
	}
}

// http returns the server's shared HTTP client for a transport.
func (s *server) http(tr transport) *http.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[tr.h2c]
	if !ok {
		c = gemclient.NewHTTPClient(tr.h2c)
		s.clients[tr.h2c] = c
	}
	return c
}

// gem returns a gem-shaped client with the test password; callers may change
// its fields (it is a fresh value).
func (s *server) gem(tr transport) *gemclient.Client {
	return &gemclient.Client{
		BaseURL:    s.url,
		Password:   testPassword,
		GemVersion: gemVersion,
		RailsEnv:   "production",
		HTTP:       s.http(tr),
	}
}

// ctx returns a context bounding one exchange.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), requestTimeout)
	t.Cleanup(cancel)
	return c
}

// ---------------------------------------------------------------------------
// Responses

// response is an answer, from gemclient or from a hand-built request.
type response struct {
	Status           int
	Header           http.Header
	Body             string
	ProtoMajor       int
	ContentLength    int64
	TransferEncoding []string
}

// must returns a converter of gemclient answers that fails t on a
// transport error: must(t)(client.RenderRaw(...)).
func must(t *testing.T) func(*gemclient.Response, error) *response {
	return func(r *gemclient.Response, err error) *response {
		t.Helper()
		return fromGem(t, r, err)
	}
}

// fromGem converts a gemclient answer, failing the test on a transport error.
func fromGem(t *testing.T, r *gemclient.Response, err error) *response {
	t.Helper()
	if err != nil {
		t.Fatalf("request failed: %v", err)
	}
	return convert(r)
}

// convert turns a gemclient answer into a response; it is safe off the test
// goroutine.
func convert(r *gemclient.Response) *response {
	major := 0
	switch r.Proto {
	case "HTTP/1.1", "HTTP/1.0":
		major = 1
	case "HTTP/2.0":
		major = 2
	}
	cl := int64(-1)
	if v := r.Header.Get("Content-Length"); v != "" {
		cl, _ = strconv.ParseInt(v, 10, 64)
	}
	return &response{Status: r.Status, Header: r.Header, Body: r.Body, ProtoMajor: major, ContentLength: cl}
}

// do sends a hand-built request over tr and reads the whole answer.
func (s *server) do(t *testing.T, tr transport, req *http.Request) *response {
	t.Helper()
	resp, err := s.http(tr).Do(req.WithContext(ctx(t)))
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", req.Method, req.URL.Path, err)
	}
	return &response{
		Status: resp.StatusCode, Header: resp.Header, Body: string(b), ProtoMajor: resp.ProtoMajor,
		ContentLength: resp.ContentLength, TransferEncoding: resp.TransferEncoding,
	}
}

// post sends a POST with the given content type, body and extra headers.
func (s *server) post(t *testing.T, tr transport, path, contentType string, body io.Reader, header http.Header) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return s.do(t, tr, req)
}

// get sends a request without a body.
func (s *server) get(t *testing.T, tr transport, method, path string) *response {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.do(t, tr, req)
}

// want checks the protocol, the status and the exact body.
func (r *response) want(t *testing.T, tr transport, status int, body string) {
	t.Helper()
	r.wantStatus(t, tr, status)
	if r.Body != body {
		t.Errorf("body:\n got %s\nwant %s", clip(r.Body), clip(body))
	}
}

// wantPrefix checks the protocol, the status and the body's start.
func (r *response) wantPrefix(t *testing.T, tr transport, status int, prefix string) {
	t.Helper()
	r.wantStatus(t, tr, status)
	if !strings.HasPrefix(r.Body, prefix) {
		t.Errorf("body does not start with %q:\n%s", prefix, clip(r.Body))
	}
}

// wantStatus checks the protocol and the status.
func (r *response) wantStatus(t *testing.T, tr transport, status int) {
	t.Helper()
	if r.ProtoMajor != tr.protoMajor() {
		t.Errorf("answer over HTTP/%d, want HTTP/%d", r.ProtoMajor, tr.protoMajor())
	}
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, clip(r.Body))
	}
}

// wantHeader checks one header's exact value ("" = absent).
func (r *response) wantHeader(t *testing.T, name, value string) {
	t.Helper()
	if got := r.Header.Get(name); got != value {
		t.Errorf("header %s = %q, want %q", name, got, value)
	}
}

// wantNoCacheText checks the headers of a rejection (PROTOCOL.md §4).
func (r *response) wantNoCacheText(t *testing.T) {
	t.Helper()
	r.wantHeader(t, "Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	r.wantHeader(t, "Content-Type", "text/plain; charset=utf-8")
	r.wantHeader(t, "X-Content-Type-Options", "nosniff")
}

// wantRenderHeaders checks the headers of a buffered successful render
// (PROTOCOL.md §5): never chunked, Content-Length equal to the body.
func (r *response) wantRenderHeaders(t *testing.T) {
	t.Helper()
	r.wantHeader(t, "Content-Type", "text/plain; charset=utf-8")
	r.wantHeader(t, "Cache-Control", "public, max-age=31536000")
	r.wantHeader(t, "X-Content-Type-Options", "nosniff")
	r.wantContentLength(t)
}

// wantContentLength checks that the answer carried Content-Length equal to
// its body's length and was not chunked.
func (r *response) wantContentLength(t *testing.T) {
	t.Helper()
	if got := r.Header.Get("Content-Length"); got != strconv.Itoa(len(r.Body)) {
		t.Errorf("Content-Length header %q, want %d", got, len(r.Body))
	}
	if len(r.TransferEncoding) > 0 {
		t.Errorf("Transfer-Encoding %v on a buffered answer", r.TransferEncoding)
	}
}

// clip shortens a long text for failure messages.
func clip(s string) string {
	const limit = 600
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q ... (%d bytes)", s[:limit], len(s))
}

// ---------------------------------------------------------------------------
// Fixtures and bundles

var fixtures sync.Map // path → string

// testdata returns a committed fixture under tests/testdata.
func testdata(t *testing.T, rel string) string {
	t.Helper()
	if v, ok := fixtures.Load(rel); ok {
		return v.(string)
	}
	b, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	fixtures.Store(rel, string(b))
	return string(b)
}

func reactApp(t *testing.T) string          { return testdata(t, "bundles/react-app.js") }
func rscStub(t *testing.T) string           { return testdata(t, "bundles/rsc-stub.js") }
func request(t *testing.T, n string) string { return testdata(t, "requests/"+n+".js") }
func golden(t *testing.T, n string) string  { return testdata(t, "golden/"+n+".html") }

// newID returns a fresh bundle id shaped like the gem's: rorp-v2-<kind>-<64 hex>.
func newID(kind string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "rorp-v2-" + kind + "-" + hex.EncodeToString(b)
}

// markerBundle is a tiny plain-script bundle; the rendering request
// `MARKER` answers marker.
func markerBundle(marker string) string {
	return fmt.Sprintf("globalThis.MARKER = %q;\n", marker)
}

// upload stores bundles (by id) and companion files through /upload-assets.
func (s *server) upload(t *testing.T, bundles map[string]string, assets map[string]string) {
	t.Helper()
	b := map[string][]byte{}
	for id, js := range bundles {
		b[id] = []byte(js)
	}
	a := map[string][]byte{}
	for name, content := range assets {
		a[name] = []byte(content)
	}
	r := must(t)(s.gem(transports[1]).UploadAssets(ctx(t), b, a))
	if r.Status != http.StatusOK {
		t.Fatalf("upload-assets: status %d: %s", r.Status, clip(r.Body))
	}
}

// render sends a raw JS render (the gem's default encoding).
func (s *server) render(t *testing.T, tr transport, id, code string, deps ...string) *response {
	t.Helper()
	return must(t)(s.gem(tr).RenderRaw(ctx(t), gemclient.Render{BundleID: id, Code: code, Dependencies: deps}))
}

// ---------------------------------------------------------------------------
// The cache on disk

// cacheEntries lists a directory of the cache ("" = the root), sorted.
func (s *server) cacheEntries(t *testing.T, rel string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(s.cache, rel))
	if err != nil {
		t.Fatalf("read cache dir %q: %v", rel, err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// wantStagingEmpty checks that no request left a staging directory.
func (s *server) wantStagingEmpty(t *testing.T) {
	t.Helper()
	if left := s.cacheEntries(t, "uploads"); len(left) > 0 {
		t.Errorf("staging directories left in uploads/: %v", left)
	}
}

// wantNoBundleDir checks that nothing was stored for id.
func (s *server) wantNoBundleDir(t *testing.T, id string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(s.cache, id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cache directory %s exists (err %v), want nothing written", id, err)
	}
}

// readCacheFile returns a file of the cache.
func (s *server) readCacheFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.cache, rel))
	if err != nil {
		t.Fatalf("read cache file: %v", err)
	}
	return string(b)
}

// runtimesPerBundle is the pools' runtimes per bundle with workers
// workers: on the node engine, every process's queue too (the default
// RENDERER_NODE_QUEUE_DEPTH, 4).
func runtimesPerBundle(workers int) int {
	if testEngine == "node" {
		return workers * 4
	}
	return workers
}
