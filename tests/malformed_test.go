package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorender/gorender/gemclient"
)

// This file throws malformed bodies of every encoding at a running server:
// the seeds of the body decoders' fuzz corpora (handlers/testdata/fuzz)
// and gem-shaped bodies, mutated. Every one must get a 4xx, never a 5xx,
// and the server must keep serving.

// fuzzBoundary is the multipart boundary of the fuzz corpora.
const fuzzBoundary = "3f9a1c0b7e5d4a2f8c6b1e0d9a7f5c3b2e1d0c9b8a7f6e5d"

// fuzzCorpus reads the seed inputs of one fuzz target: each file's values.
func fuzzCorpus(t *testing.T, target string) [][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "handlers", "testdata", "fuzz", target, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fuzz corpus %s: %v (%d files)", target, err, len(files))
	}
	var seeds [][]string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if lines[0] != "go test fuzz v1" {
			t.Fatalf("%s: not a fuzz corpus file", f)
		}
		var values []string
		for _, line := range lines[1:] {
			inner, ok := strings.CutPrefix(line, "string(")
			if !ok {
				inner, ok = strings.CutPrefix(line, "[]byte(")
			}
			if !ok {
				t.Fatalf("%s: unsupported value %q", f, line)
			}
			v, err := strconv.Unquote(strings.TrimSuffix(inner, ")"))
			if err != nil {
				t.Fatalf("%s: %q: %v", f, line, err)
			}
			values = append(values, v)
		}
		seeds = append(seeds, values)
	}
	return seeds
}

// abuse is one malformed request.
type abuse struct {
	encoding    string
	how         string // the mutation, for failure messages
	path        string
	contentType string
	header      http.Header
	body        string
}

// mutator builds mutated bodies from seeds with a fixed random sequence, so
// a failure reproduces.
type mutator struct{ rng *rand.Rand }

func (m mutator) pick(list []string) string { return list[m.rng.IntN(len(list))] }

func (m mutator) randomBytes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(m.rng.UintN(256))
	}
	return string(b)
}

// mutate applies one generic mutation to body and names it.
func (m mutator) mutate(body string) (string, string) {
	if body == "" {
		return m.randomBytes(1 + m.rng.IntN(64)), "random bytes"
	}
	switch m.rng.IntN(6) {
	case 0:
		return body[:m.rng.IntN(len(body))], "truncated"
	case 1:
		b := []byte(body)
		for range 1 + m.rng.IntN(8) {
			b[m.rng.IntN(len(b))] = byte(m.rng.UintN(256))
		}
		return string(b), "bytes flipped"
	case 2:
		at := m.rng.IntN(len(body) + 1)
		return body[:at] + m.randomBytes(1+m.rng.IntN(32)) + body[at:], "random bytes inserted"
	case 3:
		at := m.rng.IntN(len(body))
		end := min(len(body), at+1+m.rng.IntN(16))
		return body[:at] + strings.Repeat(body[at:end], 1000+m.rng.IntN(20000)) + body[end:], "a segment repeated thousands of times"
	case 4:
		return body + m.randomBytes(1+m.rng.IntN(256)), "random tail"
	default:
		return m.randomBytes(1 + m.rng.IntN(4096)), "random bytes"
	}
}

// withPassword puts the server's password into a seed where the corpus
// had its own, so that some bodies get past the password check.
func withPassword(m mutator, s string) string {
	if m.rng.IntN(2) == 0 {
		return s
	}
	for _, pw := range []string{"myPassword1", "\r\n\r\npw\r\n"} {
		repl := testPassword
		if strings.HasPrefix(pw, "\r") {
			repl = "\r\n\r\n" + testPassword + "\r\n"
		}
		s = strings.ReplaceAll(s, pw, repl)
	}
	return s
}

// abuses returns n malformed requests of each encoding for the render
// route of id (a bundle that is never uploaded, so no mutation can render).
func abuses(t *testing.T, id string, n int) []abuse {
	m := mutator{rand.New(rand.NewPCG(7, 2026))}
	render := "/bundles/" + id + "/render/x"
	gemJSON := fmt.Sprintf(`{"gemVersion":%q,"protocolVersion":"2.0.0","password":%q,"railsEnv":"production","dependencyBundleTimestamps":[],"renderingRequest":"MARKER"}`, gemVersion, testPassword)
	gemForm := "gemVersion=" + gemVersion + "&protocolVersion=2.0.0&password=" + testPassword + "&railsEnv=production&renderingRequest=MARKER"
	var out []abuse

	// JSON.
	var jsonSeeds []string
	for _, v := range fuzzCorpus(t, "FuzzDecodeJSON") {
		jsonSeeds = append(jsonSeeds, v[0])
	}
	jsonSeeds = append(jsonSeeds, gemJSON)
	jsonHuge := []struct{ how, body string }{
		{"nested 100000 deep", strings.Repeat("[", 100000)},
		{"objects nested 20000 deep", strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)},
		{"a number of a million digits", `{"protocolVersion":"2.0.0","password":"` + testPassword + `","renderingRequest":` + strings.Repeat("9", 1e6) + "}"},
		{"200000 dependency ids", `{"protocolVersion":"2.0.0","password":"` + testPassword + `","renderingRequest":"MARKER","dependencyBundleTimestamps":[` + strings.Repeat(`"-bad",`, 200000) + `"x"]}`},
		{"a string never closed", `{"renderingRequest":"` + strings.Repeat("a", 500000)},
	}
	for i := range n {
		a := abuse{encoding: "json", path: render, contentType: "application/json"}
		if i < len(jsonHuge) {
			a.how, a.body = jsonHuge[i].how, jsonHuge[i].body
		} else {
			a.body, a.how = m.mutate(withPassword(m, m.pick(jsonSeeds)))
		}
		out = append(out, a)
	}

	// Form.
	var formSeeds []string
	for _, v := range fuzzCorpus(t, "FuzzDecodeForm") {
		formSeeds = append(formSeeds, v[0])
	}
	formSeeds = append(formSeeds, gemForm)
	formHuge := []struct{ how, body string }{
		{"300000 empty fields", strings.Repeat("&", 300000)},
		{"100000 array entries", "protocolVersion=2.0.0&password=" + testPassword + "&renderingRequest=MARKER" + strings.Repeat("&dependencyBundleTimestamps%5B%5D=-x", 100000)},
		{"bad escapes", strings.Repeat("%zz%", 10000)},
	}
	for i := range n {
		a := abuse{encoding: "form", path: render, contentType: "application/x-www-form-urlencoded"}
		if i < len(formHuge) {
			a.how, a.body = formHuge[i].how, formHuge[i].body
		} else {
			a.body, a.how = m.mutate(withPassword(m, m.pick(formSeeds)))
		}
		out = append(out, a)
	}

	// Multipart.
	var multiSeeds []string
	for _, v := range fuzzCorpus(t, "FuzzDecodeMultipart") {
		multiSeeds = append(multiSeeds, v[0])
	}
	good := "multipart/form-data; boundary=" + fuzzBoundary
	badTypes := []string{
		"multipart/form-data",                                      // no boundary
		"multipart/form-data; boundary=",                           // empty boundary
		"multipart/form-data; boundary=" + strings.Repeat("b", 71), // longer than RFC 2046 allows
		"multipart/form-data; boundary=someotherboundary",
		`multipart/form-data; boundary="` + fuzzBoundary + ` "`,
		"multipart/form-data; boundary=" + fuzzBoundary + "; boundary=twice",
		"multipart/form-data; =;;",
	}
	part := "--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"gemVersion\"\r\n\r\n17.0.0\r\n"
	head := "--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n" + testPassword + "\r\n" +
		"--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"protocolVersion\"\r\n\r\n2.0.0\r\n"
	multiHuge := []struct{ how, body string }{
		{"1001 parts", head + strings.Repeat(part, 1001) + "--" + fuzzBoundary + "--\r\n"},
		{"a part header of 200 KB", "--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"" + strings.Repeat("n", 200000) + "\"\r\n\r\nx\r\n--" + fuzzBoundary + "--\r\n"},
		{"10000 part headers", "--" + fuzzBoundary + "\r\n" + strings.Repeat("X-A: b\r\n", 10000) + "\r\nx\r\n--" + fuzzBoundary + "--\r\n"},
		{"a file part never closed", head + "--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"bundle_" + id + "\"; filename=\"b.js\"\r\n\r\n" + strings.Repeat("var a = 1;\n", 50000)},
		{"no closing delimiter", head},
	}
	for i := range n {
		a := abuse{encoding: "multipart", path: render, contentType: good}
		switch {
		case i < len(multiHuge):
			a.how, a.body = multiHuge[i].how, multiHuge[i].body
		case i%10 == 0:
			a.contentType = m.pick(badTypes)
			a.body, a.how = withPassword(m, m.pick(multiSeeds)), "bad boundary: "+a.contentType
		case i%10 == 1:
			a.path = "/upload-assets"
			a.body, a.how = m.mutate(m.pick(multiSeeds)) // the corpus's own passwords: never stored
			a.how = "upload-assets, " + a.how
		default:
			a.body, a.how = m.mutate(withPassword(m, m.pick(multiSeeds)))
		}
		out = append(out, a)
	}

	// Raw JavaScript: mutated metadata headers and bodies.
	raw := fuzzCorpus(t, "FuzzDecodeRawJS")
	pickArg := func(i int, extra ...string) string {
		options := extra
		for _, v := range raw {
			if i < len(v) {
				options = append(options, v[i])
			}
		}
		return m.pick(options)
	}
	for i := range n {
		a := abuse{encoding: "raw", path: render, contentType: gemclient.RawJSContentType, header: http.Header{}}
		set := func(name, v string) {
			if validHeaderValue(v) {
				a.header.Set(name, v)
			}
		}
		set("X-React-On-Rails-Pro-Protocol-Version", pickArg(1, "2.0.0", "2.0.0", "2.0", "2.0.0 "))
		set("Authorization", pickArg(2, "Bearer "+testPassword, "Bearer "+testPassword, "Bearer", "bearer "+testPassword))
		deps := pickArg(3, "[]", `["-x"]`, `[`, `{"a":1}`, `["`+id+`"`, strings.Repeat("[", 10000), `["a","b",`+strings.Repeat(`"c",`, 5000)+`1]`)
		set("X-React-On-Rails-Pro-Dependency-Bundle-Timestamps", deps)
		set("X-React-On-Rails-Pro-Rsc-Stream-Observability", pickArg(4, "true", "maybe"))
		body := pickArg(0)
		a.body, a.how = m.mutate(body)
		if i%7 == 0 {
			a.contentType += "; charset=" + m.pick([]string{"utf-16", "\"", ";;"})
		}
		a.how = fmt.Sprintf("%s with headers %v", a.how, a.header)
		out = append(out, a)
	}
	return out
}

// TestMalformedBodies sends 200 malformed bodies of each encoding: every one
// is answered 4xx, none 5xx, nothing is left in staging, and the server
// renders normally afterwards.
func TestMalformedBodies(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	never := newID("s") // never uploaded: no mutation can reach a render
	list := abuses(t, never, 200)

	statuses := map[string]map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range work {
				a := list[i]
				tr := transports[i%2]
				status, answer, err := s.tryPost(tr, a.path, a.contentType, a.body, a.header)
				mu.Lock()
				if statuses[a.encoding] == nil {
					statuses[a.encoding] = map[int]int{}
				}
				statuses[a.encoding][status]++
				mu.Unlock()
				if err != nil || status < 400 || status > 499 {
					t.Errorf("%s body #%d (%s, %d bytes) over %s: status %d (err %v), want 4xx; answer %s; body %s",
						a.encoding, i, a.how, len(a.body), tr.name, status, err, clip(answer), clip(a.body))
				}
			}
		})
	}
	for i := range list {
		work <- i
	}
	close(work)
	wg.Wait()
	t.Logf("%d malformed bodies, answers by encoding and status: %v", len(list), statuses)

	t.Run("broken HTTP/1.1 framing", func(t *testing.T) {
		head := "POST /bundles/" + never + "/render/x HTTP/1.1\r\nHost: renderer\r\nContent-Type: application/json\r\n"
		for _, c := range []struct{ name, request string }{
			{"bad chunk size", head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"},
			{"huge chunk size", head + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n{}\r\n0\r\n\r\n"},
			{"body shorter than Content-Length", head + "Content-Length: 1000\r\n\r\n{\"a\":1}"},
			{"Content-Length and chunked", head + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
			{"two Content-Lengths", head + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"},
			{"negative Content-Length", head + "Content-Length: -1\r\n\r\n{}"},
		} {
			status, answer := rawExchange(t, s.port, c.request)
			if status >= 500 {
				t.Errorf("%s: status %d: %s", c.name, status, clip(answer))
			}
			t.Logf("%s: status %d (0: closed without an answer)", c.name, status)
		}
	})

	// The server is intact.
	s.wantStagingEmpty(t)
	id := newID("s")
	s.upload(t, map[string]string{id: markerBundle("still serving")}, nil)
	for _, tr := range transports {
		s.render(t, tr, id, "MARKER").want(t, tr, http.StatusOK, "still serving")
	}
	for set, v := range s.scrapeMetrics(t).labelSets("gorender_http_requests_total") {
		if strings.Contains(set, "code=5") {
			t.Errorf("gorender_http_requests_total{%s} = %v: a 5xx was answered", set, v)
		}
	}
	if strings.Contains(s.stderr.String(), "panic") {
		t.Errorf("the server logged a panic")
	}
}

// tryPost sends a POST and reads the answer; safe off the test goroutine.
func (s *server) tryPost(tr transport, path, contentType, body string, header http.Header) (int, string, error) {
	c, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(c, http.MethodPost, s.url+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := s.http(tr).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// validHeaderValue reports whether net/http lets a client send v (no
// control characters but tab); empty values are left out too.
func validHeaderValue(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// rawExchange writes request on a fresh connection, half-closes it, and
// returns the answer's status (0 when the server closed without one).
func rawExchange(t *testing.T, port int, request string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatalf("write: %v", err)
	}
	_ = conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
