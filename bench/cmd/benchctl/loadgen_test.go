package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGenerateChecksEveryAnswer runs the distinct-request generator against
// a real HTTP server on loopback, over HTTP/1.1 and h2c: it rotates through
// every body, counts right answers, and counts a wrong answer to one
// variant as a failure that names the variant.
func TestGenerateChecksEveryAnswer(t *testing.T) {
	const n = 5
	dir := t.TempDir()
	var files, want []string
	for i := range n {
		f := filepath.Join(dir, fmt.Sprintf("%d.body", i))
		if err := os.WriteFile(f, []byte(fmt.Sprintf("request v%03d", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		sum := sha256.Sum256([]byte(fmt.Sprintf("answer v%03d", i)))
		want = append(want, hex.EncodeToString(sum[:]))
	}
	for _, h2c := range []bool{false, true} {
		for _, wrongVariant := range []int{-1, 3} {
			t.Run(fmt.Sprintf("h2c=%v/wrong=%d", h2c, wrongVariant), func(t *testing.T) {
				var mu sync.Mutex
				seen := map[string]int{}
				srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.Header.Get("X-Bench") != "yes" || (r.ProtoMajor == 2) != h2c {
						http.Error(w, "headers", http.StatusBadRequest)
						return
					}
					mu.Lock()
					seen[string(b)]++
					mu.Unlock()
					answer := strings.Replace(string(b), "request", "answer", 1)
					if answer == fmt.Sprintf("answer v%03d", wrongVariant) {
						answer = "answer v999"
					}
					time.Sleep(time.Millisecond)
					_, _ = io.WriteString(w, answer)
				})}
				srv.Protocols = new(http.Protocols)
				srv.Protocols.SetHTTP1(true)
				srv.Protocols.SetUnencryptedHTTP2(true)
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				go func() { _ = srv.Serve(l) }()
				defer srv.Close()
				g, err := generate(genSpec{URL: "http://" + l.Addr().String() + "/render", H2C: h2c, Conns: 3,
					Warmup: 200 * time.Millisecond, Duration: 500 * time.Millisecond,
					ContentType: "application/x-www-form-urlencoded", Header: http.Header{"X-Bench": {"yes"}},
					Bodies: files, Want: want, ServerPID: os.Getpid()})
				if err != nil {
					t.Fatal(err)
				}
				if g.Requests == 0 {
					t.Fatalf("no request completed: %+v", g)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(seen) != n {
					t.Fatalf("the server saw %d distinct bodies, want %d: %v", len(seen), n, seen)
				}
				if wrongVariant < 0 {
					if g.Failed != 0 {
						t.Fatalf("%d failures with every answer right: %v", g.Failed, g.Errors)
					}
					return
				}
				if g.Failed == 0 || len(g.Errors) == 0 || !strings.HasPrefix(g.Errors[0], "variant 3: ") {
					t.Fatalf("a wrong answer to variant 3 was not counted: failed %d, errors %v", g.Failed, g.Errors)
				}
				if total := g.Requests + g.Failed; g.Failed*n > total*2 {
					t.Fatalf("%d of %d requests failed: only one variant in %d answers wrong", g.Failed, total, n)
				}
			})
		}
	}
}

// TestUniqueRequest: each request gets its own domNodeId digits, of the
// same length, in any encoding; a body without a domNodeId stays as is.
func TestUniqueRequest(t *testing.T) {
	body := []byte(`x ListPage` + domNodeID + `000000000106" y`)
	a, b := uniqueRequest(body, 7), uniqueRequest(body, 8)
	if string(a) == string(b) || len(a) != len(body) || !bytes.Contains(a, []byte(domNodeID+"000000000007\"")) {
		t.Fatalf("unique bodies %q and %q", a, b)
	}
	if string(body) != `x ListPage`+domNodeID+`000000000106" y` {
		t.Fatal("the variant's body changed")
	}
	if other := []byte("'<p>hello</p>'"); &uniqueRequest(other, 1)[0] != &other[0] {
		t.Fatal("a body without a domNodeId was copied")
	}
}
